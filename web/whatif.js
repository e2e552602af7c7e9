// whatif.js: the what-if views. "All accelerators" predicts the current
// workload and recipe on every accelerator of the catalog; "Sweeps" moves
// the batch per GPU or the GPU count over powers of two and draws step
// time and peak memory per GPU. Both call POST /v1/step once per point and
// draw only what the API answered (failed points are listed, not drawn).

import { api, isAbort, renderError, clearError, errorBox, ApiError } from "./api.js";
import * as charts from "./charts.js";
import { el } from "./dom.js";

const { fmt, fmtMs, fmtRate, fmtBytes, GiB } = charts;
const $ = (id) => document.getElementById(id);

export const SWEEP_MAX_POINTS = 16; // per accelerator: the server prices each point
const ALL_PARALLEL = 3; // steps in flight at once (the server has a few workers)

const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);
const pct = (x) => `${(x * 100).toLocaleString("en-US", { maximumFractionDigits: 1 })}%`;

// ---------------------------------------------------------------- provenance

// The error band that applies to a whole step of this workload kind, from
// the answer's provenance.error_band (null: no benchmark checks it).
export function stepBand(prov, kind) {
  const b = (prov && prov.error_band) || {};
  return num(kind === "transformer" ? b.transformer_step : b.step);
}

// "step ±6%" or "step not checked; GEMM ±11.6%, collectives ±8.6%".
export function bandText(prov, kind) {
  const b = (prov && prov.error_band) || {};
  const s = stepBand(prov, kind);
  if (s !== null) return `step ±${pct(s)}`;
  const parts = ["step not checked"];
  if (num(b.gemm) !== null) parts.push(`GEMM ±${pct(b.gemm)}`);
  if (num(b.collective_cluster) !== null) parts.push(`multi-node collectives ±${pct(b.collective_cluster)}`);
  return parts.join("; ");
}

function basisText(prov) {
  if (!prov) return "–";
  const v = num(prov.calibration);
  return `${prov.basis}${v ? ` (calibration v${v}${prov.calibration_arch ? `, ${prov.calibration_arch}` : ""})` : ""}`;
}

// ---------------------------------------------------------------- all accelerators

const METRICS = {
  tput: { label: (u) => `${u}/s`, get: (r) => num(r.step.samples_per_s), band: true },
  perw: { label: (u) => `${u}/s per W (TDP)`, get: (r) => (num(r.tdp) ? r.step.samples_per_s / r.tdp : null), band: true },
  headroom: { label: () => "GiB free per GPU (usable HBM − peak)", get: (r) => headroom(r.step), band: false },
};

function headroom(s) {
  const u = num(s.hbm_usable_bytes), p = num(s.peak_memory_bytes);
  return u !== null && p !== null ? (u - p) / GiB : null;
}

export function setupAll(ctx) {
  const all = { rows: [], unit: "samples", seq: 0 };

  async function run(ev) {
    if (ev) ev.preventDefault();
    const slot = $("all-error");
    clearError(slot);
    if (!ctx.state.workload) {
      renderError(slot, new ApiError({ code: "missing_field", message: "pick or paste a workload first", field: "workload" }), "All accelerators");
      return;
    }
    const seq = ++all.seq;
    const recipe = ctx.currentRecipe();
    const workload = ctx.state.workload;
    const hws = ctx.state.hardware.map((h) => ({ name: h.name, tdp: num(h.tdp_watts) }));
    const prog = $("all-progress");
    prog.hidden = false;
    prog.max = hws.length;
    prog.value = 0;
    $("all-run").disabled = true;
    document.body.dataset.allBusy = "1";
    let done = 0;
    const rows = new Array(hws.length);
    const queue = hws.map((h, i) => ({ ...h, i }));
    const worker = async () => {
      for (let h = queue.shift(); h; h = queue.shift()) {
        try {
          const step = await api("POST", "/v1/step", { hardware: h.name, workload, recipe });
          rows[h.i] = { hw: h.name, tdp: h.tdp, step };
        } catch (e) {
          rows[h.i] = { hw: h.name, tdp: h.tdp, err: e };
        }
        done++;
        if (seq === all.seq) {
          prog.value = done;
          $("all-status").textContent = `Predicted ${done} of ${hws.length} accelerators…`;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(ALL_PARALLEL, hws.length) }, worker));
    if (seq !== all.seq) return;
    all.rows = rows;
    all.unit = workload.kind === "transformer" ? "sequences" : "samples";
    all.recipe = recipe;
    all.kind = workload.kind;
    prog.hidden = true;
    $("all-run").disabled = false;
    const bad = rows.filter((r) => r.err);
    slot.replaceChildren(...bad.map((r) => errorBox(r.err, `Step on ${r.hw}`)));
    $("all-status").textContent = `${rows.length - bad.length} of ${rows.length} accelerators predicted` +
      `${bad.length ? ` (${bad.length} refused: see above)` : ""}; ${recipe.gpus} GPU × ${recipe.batch_per_gpu.toLocaleString("en-US")} per GPU, ${recipe.precision}.`;
    render();
    document.body.dataset.allBusy = "";
    document.body.dataset.allDone = String(seq);
  }

  function render() {
    const key = $("all-metric").value;
    const m = METRICS[key];
    const ok = all.rows.filter((r) => r.step);
    const sorted = ok.slice().sort((a, b) => (m.get(b) ?? -Infinity) - (m.get(a) ?? -Infinity) || a.hw.localeCompare(b.hw));
    const drawn = sorted.filter((r) => m.get(r) !== null);
    if (!drawn.length) charts.clear("all-chart");
    else {
      const vals = drawn.map((r) => m.get(r));
      const bands = drawn.map((r) => stepBand(r.step.provenance, all.kind));
      const datasets = [{
        label: m.label(all.unit),
        data: vals,
        backgroundColor: drawn.map((r, i) => (vals[i] < 0 ? charts.PALETTE[5] : r.step.provenance && num(r.step.provenance.calibration) ? charts.PALETTE[0] : charts.PALETTE[4])),
        order: 2,
      }];
      if (m.band) {
        datasets.push({
          label: "error band (held-out step error)",
          data: vals.map((v, i) => (bands[i] !== null ? [v * (1 - bands[i]), v * (1 + bands[i])] : null)),
          backgroundColor: "rgba(27,31,36,0.55)",
          barPercentage: 0.12,
          grouped: false,
          order: 1,
        });
      }
      charts.draw("all-chart", {
        type: "bar",
        data: { labels: drawn.map((r) => r.hw), datasets },
        options: {
          indexAxis: "y",
          scales: {
            x: { beginAtZero: true, title: { display: true, text: m.label(all.unit) }, ticks: { callback: (v) => charts.si(v) } },
            y: { ticks: { autoSkip: false } },
          },
          plugins: {
            legend: { position: "bottom", labels: { filter: (it) => it.datasetIndex === 0 || m.band } },
            tooltip: {
              callbacks: {
                label: (c) => (c.datasetIndex === 0
                  ? `${fmt(c.parsed.x)} ${m.label(all.unit)}`
                  : `band ${fmt(c.raw[0])} – ${fmt(c.raw[1])} (${bandText(drawn[c.dataIndex].step.provenance, all.kind)})`),
              },
            },
          },
        },
      });
    }
    const rows = [...sorted, ...all.rows.filter((r) => !r.step)];
    const t = charts.table($("all-table"), [
      { label: "Accelerator", get: (r) => r.hw, cls: "text" },
      { label: "Step time", get: (r) => (r.step ? fmtMs(num(r.step.step_ms)) : "refused") },
      { label: "Throughput", get: (r) => (r.step ? fmtRate(num(r.step.samples_per_s), all.unit) : "–") },
      { label: "Per watt", get: (r) => (r.step && num(r.tdp) ? `${fmt(r.step.samples_per_s / r.tdp)} /s/W at ${r.tdp} W` : r.step ? "no TDP" : "–") },
      { label: "Peak / usable per GPU", get: (r) => (r.step ? `${fmtBytes(num(r.step.peak_memory_bytes))} of ${fmtBytes(num(r.step.hbm_usable_bytes))}` : "–") },
      { label: "Headroom", get: (r) => { const h = r.step ? headroom(r.step) : null; return h === null ? "–" : `${h >= 0 ? "" : "−"}${fmtBytes(Math.abs(h) * GiB)}${h < 0 ? " (does not fit)" : ""}`; } },
      { label: "What it rests on", get: (r) => (r.step ? basisText(r.step.provenance) : r.err.message), cls: "prov" },
      { label: "Error band", get: (r) => (r.step ? bandText(r.step.provenance, all.kind) : "–"), cls: "text band" },
    ], rows, "Every accelerator on the current workload and recipe");
    [...t.tBodies[0].rows].forEach((tr, i) => (tr.dataset.hw = rows[i].hw));
  }

  $("all-form").addEventListener("submit", run);
  $("all-metric").addEventListener("change", () => all.rows.length && render());
  return { run };
}

// ---------------------------------------------------------------- sweeps

// Powers of two from `from` to `to` (inclusive, rounded inwards), thinned
// evenly to at most max points (the first and last kept).
export function sweepPoints(from, to, max) {
  const lo = Math.ceil(Math.log2(Math.max(1, Math.min(from, to))));
  const hi = Math.floor(Math.log2(Math.max(1, Math.max(from, to))));
  const all = [];
  for (let e = lo; e <= hi; e++) all.push(2 ** e);
  const cap = Math.max(2, Math.min(SWEEP_MAX_POINTS, Math.floor(max) || SWEEP_MAX_POINTS));
  if (all.length <= cap) return all;
  const out = [];
  for (let i = 0; i < cap; i++) out.push(all[Math.round((i * (all.length - 1)) / (cap - 1))]);
  return [...new Set(out)];
}

export function setupSweep(ctx) {
  const sw = { ctl: null, seq: 0 };

  function defaults() {
    const v = $("sweep-var").value;
    const tf = ctx.state.workload && ctx.state.workload.kind === "transformer";
    if (v === "gpus") {
      $("sweep-from").value = "1";
      $("sweep-to").value = tf ? "512" : "64";
    } else {
      $("sweep-from").value = tf ? "1" : "1024";
      $("sweep-to").value = tf ? "64" : "262144";
    }
  }

  function check(id, field, lo, hi) {
    const v = Number($(id).value);
    if (!Number.isInteger(v) || v < lo || v > hi)
      throw new ApiError({ code: "bad_field", message: `${field} must be an integer from ${lo} to ${hi} (got "${$(id).value}")`, field });
    return v;
  }

  async function run(ev) {
    if (ev) ev.preventDefault();
    const slot = $("sweep-error");
    clearError(slot);
    let xs;
    const v = $("sweep-var").value;
    try {
      if (!ctx.state.workload) throw new ApiError({ code: "missing_field", message: "pick or paste a workload first", field: "workload" });
      const max = check("sweep-max", "points", 2, SWEEP_MAX_POINTS);
      const hi = v === "gpus" ? 65536 : 1048576;
      xs = sweepPoints(check("sweep-from", "from", 1, hi), check("sweep-to", "to", 1, hi), max);
      if (xs.length < 2) throw new ApiError({ code: "bad_field", message: "the range holds fewer than two powers of two", field: "to" });
    } catch (e) {
      renderError(slot, e, "Sweep");
      return;
    }
    if (sw.ctl) sw.ctl.abort();
    const ctl = new AbortController();
    sw.ctl = ctl;
    const seq = ++sw.seq;
    const base = ctx.currentRecipe();
    const workload = ctx.state.workload;
    const hws = ctx.selectedHw();
    const total = xs.length * hws.length;
    const prog = $("sweep-progress");
    prog.hidden = false;
    prog.max = total;
    prog.value = 0;
    $("sweep-run").disabled = true;
    $("sweep-stop").disabled = false;
    document.body.dataset.sweepBusy = "1";
    const res = new Map(hws.map((h) => [h, []]));
    const errs = [];
    let done = 0, stopped = false;
    try {
      for (const hw of hws) {
        for (const x of xs) {
          const recipe = { ...base };
          if (v === "gpus") recipe.gpus = x;
          else recipe.batch_per_gpu = x;
          delete recipe.global_batch;
          delete recipe.gpus_per_node;
          let point = { x };
          try {
            point.step = await api("POST", "/v1/step", { hardware: hw, workload, recipe }, { signal: ctl.signal });
          } catch (e) {
            if (isAbort(e)) throw e;
            point.err = e;
            errs.push({ hw, x, e });
          }
          res.get(hw).push(point);
          done++;
          prog.value = done;
          $("sweep-status").textContent = `Point ${done} of ${total}: ${hw}, ${v === "gpus" ? `${x} GPUs` : `batch ${x.toLocaleString("en-US")}`}…`;
        }
      }
    } catch (e) {
      if (!isAbort(e)) throw e;
      stopped = true;
    } finally {
      if (seq === sw.seq) {
        prog.hidden = true;
        $("sweep-run").disabled = false;
        $("sweep-stop").disabled = true;
        sw.ctl = null;
      }
    }
    if (seq !== sw.seq) return;
    slot.replaceChildren(...errs.slice(0, 6).map((r) => errorBox(r.e, `Step on ${r.hw} at ${v === "gpus" ? `${r.x} GPUs` : `batch ${r.x}`}`)));
    render(v, xs, res, base);
    $("sweep-status").textContent = `${stopped ? "Stopped after" : "Swept"} ${done} of ${total} points (${xs.length} values × ${hws.length} accelerator${hws.length > 1 ? "s" : ""})` +
      `${errs.length ? `; ${errs.length} refused (see above)` : ""}.`;
    document.body.dataset.sweepBusy = "";
    document.body.dataset.sweepDone = String(seq);
  }

  function render(v, xs, res, base) {
    const xLabel = v === "gpus" ? "GPUs" : "batch per GPU";
    const labels = xs.map((x) => x.toLocaleString("en-US"));
    const hws = [...res.keys()];
    const at = (hw, x) => res.get(hw).find((p) => p.x === x) || {};
    const color = (i) => charts.PALETTE[i === 0 ? 0 : 5];
    const line = (hw, i, get, extra = {}) => ({
      label: hw,
      data: xs.map((x) => { const p = at(hw, x); return p.step ? get(p.step) : null; }),
      borderColor: color(i),
      backgroundColor: color(i),
      spanGaps: false,
      pointRadius: 3,
      ...extra,
    });
    const opts = (yText) => ({
      scales: { x: { title: { display: true, text: `${xLabel} (${v === "gpus" ? `batch ${base.batch_per_gpu.toLocaleString("en-US")} per GPU` : `${base.gpus} GPUs`})` } }, y: { beginAtZero: true, title: { display: true, text: yText } } },
      plugins: { legend: { position: "bottom" } },
    });
    charts.draw("sweep-time-chart", {
      type: "line",
      data: { labels, datasets: hws.map((hw, i) => line(hw, i, (s) => num(s.step_ms))) },
      options: opts("step time (ms)"),
    });
    charts.draw("sweep-mem-chart", {
      type: "line",
      data: {
        labels,
        datasets: [
          ...hws.map((hw, i) => line(hw, i, (s) => num(s.peak_memory_bytes) / GiB, { label: `${hw} peak` })),
          ...hws.map((hw, i) => line(hw, i, (s) => num(s.hbm_usable_bytes) / GiB, { label: `${hw} usable HBM`, borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5 })),
        ],
      },
      options: opts("peak memory per GPU (GiB)"),
    });
    const rows = hws.flatMap((hw) => xs.map((x) => ({ hw, x, ...at(hw, x) })));
    const t = charts.table($("sweep-table"), [
      { label: "Accelerator", get: (r) => r.hw, cls: "text" },
      { label: xLabel, get: (r) => r.x.toLocaleString("en-US") },
      { label: "Step time", get: (r) => (r.step ? fmtMs(num(r.step.step_ms)) : "refused") },
      { label: "Throughput", get: (r) => (r.step ? fmtRate(num(r.step.samples_per_s), ctx.isDlrm() ? "samples" : "sequences") : "–") },
      { label: "Peak memory / GPU", get: (r) => (r.step ? fmtBytes(num(r.step.peak_memory_bytes)) : "–") },
      { label: "Fits", get: (r) => (r.step ? (r.step.fits ? "yes" : "no") : "–"), cls: "text" },
    ], rows, "Sweep points");
    [...t.tBodies[0].rows].forEach((tr, i) => {
      tr.dataset.hw = rows[i].hw;
      tr.dataset.x = String(rows[i].x);
    });
  }

  $("sweep-form").addEventListener("submit", run);
  $("sweep-var").addEventListener("change", defaults);
  $("sweep-stop").addEventListener("click", () => sw.ctl && sw.ctl.abort());
  return { run, defaults };
}
