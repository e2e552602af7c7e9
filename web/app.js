// app.js: the cdplan dashboard. Wires the inputs (workload, accelerators,
// recipe knobs) to the API (/v1/step, /v1/estimate, /v1/plans, /v1/compare,
// /v1/validations, /v1/hardware) and draws the answers. Every API error is
// shown next to what it concerns (api.js renderError).

import { api, isAbort, renderError, clearError, errorBox, ApiError, getToken, setToken, onAuth } from "./api.js";
import * as charts from "./charts.js";
import { Catalog } from "./catalog.js";
import { setupAll, setupSweep } from "./whatif.js";
import { setupValidationSubmit, setupPlanValidate, renderPlanValidation } from "./submit.js";
import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);
const { fmt, fmtMs, fmtRate, fmtBytes, GiB } = charts;
const DEBOUNCE_MS = 250;

const state = {
  hardware: [],
  hw: new Map(),
  examples: [],
  measurements: null,
  workload: null,
  baseRecipe: {},
  source: "", // example id or "custom"
  predictSeq: 0,
  predictAbort: null,
  lastPlan: null,
};

// ---------------------------------------------------------------- helpers

function debounce(fn, ms) {
  let t = 0;
  return (...a) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...a), ms);
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function hwLabel(name) {
  const h = state.hw.get(name);
  return h ? `${h.display_name || h.name} (${h.name})` : name;
}

function num(v) {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function pick(obj, ...keys) {
  if (!obj || typeof obj !== "object") return undefined;
  for (const k of keys) if (obj[k] !== undefined && obj[k] !== null) return obj[k];
  return undefined;
}

// {a: 1, b: {ms: 2}} or [{name|component|use: "a", ms|bytes|value: 1}] -> [{name, value}]
function entries(x, valueKeys) {
  if (!x) return [];
  if (Array.isArray(x)) {
    return x
      .map((e) => ({ name: String(pick(e, "name", "component", "use", "class", "kind") ?? "?"), value: num(pick(e, ...valueKeys)) }))
      .filter((e) => e.value !== null);
  }
  if (typeof x === "object") {
    return Object.entries(x)
      .map(([k, v]) => ({ name: k, value: typeof v === "object" ? num(pick(v, ...valueKeys)) : num(v) }))
      .filter((e) => e.value !== null);
  }
  return [];
}

function pct(x) {
  return `${(x * 100).toLocaleString("en-US", { maximumFractionDigits: 1 })}%`;
}

function prettyJSON(x) {
  return JSON.stringify(x, null, 2);
}

// ---------------------------------------------------------------- inputs

function selectedHw() {
  const a = $("hw-a").value;
  const b = $("hw-b").value;
  return [a, b].filter((x, i, arr) => x && arr.indexOf(x) === i);
}

function batchFromSlider() {
  return 2 ** Number($("knob-batch").value);
}

function setBatchSlider(batch) {
  const s = $("knob-batch");
  const e = Math.round(Math.log2(Math.max(1, batch || 1)));
  s.value = String(Math.min(Number(s.max), Math.max(Number(s.min), e)));
  showBatch();
}

function showBatch() {
  const b = batchFromSlider();
  $("knob-batch-out").textContent = b.toLocaleString("en-US");
  $("knob-batch").setAttribute("aria-valuetext", `${b} per GPU`);
}

function isDlrm() {
  return state.workload && state.workload.kind === "dlrm";
}

// The recipe the knobs describe: the example's recipe with the knobs laid
// over it (DLRM-only fields only for DLRM).
function currentRecipe() {
  const r = { ...state.baseRecipe };
  r.gpus = Math.max(1, Math.round(Number($("knob-gpus").value) || 1));
  r.batch_per_gpu = batchFromSlider();
  r.precision = $("knob-precision").value;
  r.checkpointing = $("knob-ckpt").value;
  r.pad_to = Number($("knob-pad").value);
  // a fixed global batch no longer holds once the batch or the GPUs move
  if (r.global_batch !== undefined && (r.batch_per_gpu !== state.baseRecipe.batch_per_gpu || r.gpus !== state.baseRecipe.gpus)) delete r.global_batch;
  if (isDlrm()) {
    r.embedding_precision = $("knob-emb-precision").value;
    r.sharding = $("knob-sharding").value;
    r.framework = $("knob-framework").value;
  } else {
    delete r.embedding_precision;
    delete r.sharding;
    delete r.framework;
    delete r.placement;
  }
  return r;
}

function setKnobs(recipe, kind) {
  const s = $("knob-batch");
  if (kind === "transformer") {
    s.min = "0";
    s.max = "8";
    $("knob-batch-help").textContent = "Sequences per GPU (micro-batch), powers of two, 1 to 256.";
  } else {
    s.min = "8";
    s.max = "20";
    $("knob-batch-help").textContent = "Samples per GPU, powers of two, 256 to 1,048,576.";
  }
  setBatchSlider(recipe.batch_per_gpu || (kind === "transformer" ? 4 : 16384));
  const setSel = (id, v) => {
    const sel = $(id);
    if (v !== undefined && [...sel.options].some((o) => o.value === String(v))) sel.value = String(v);
  };
  setSel("knob-precision", recipe.precision);
  setSel("knob-emb-precision", recipe.embedding_precision);
  setSel("knob-ckpt", recipe.checkpointing);
  setSel("knob-pad", recipe.pad_to ?? 0);
  setSel("knob-sharding", recipe.sharding);
  setSel("knob-framework", recipe.framework);
  if (recipe.gpus) $("knob-gpus").value = String(recipe.gpus);
  const dl = kind !== "transformer";
  for (const id of ["knob-emb-precision", "knob-sharding", "knob-framework"]) {
    $(id).disabled = !dl;
    $(id).closest(".knob").hidden = !dl;
  }
  syncCluster();
}

// The plan form's cluster follows the GPUs knob and accelerator A.
function syncCluster() {
  const gpus = Math.max(1, Math.round(Number($("knob-gpus").value) || 1));
  const h = state.hw.get($("hw-a").value);
  const dom = (h && h.scaleup_domain) || 8;
  const gpn = Math.min(gpus, dom);
  $("plan-gpn").value = String(gpn);
  $("plan-nodes").value = String(Math.max(1, Math.ceil(gpus / gpn)));
}

// ---------------------------------------------------------------- workload

function setIfKnown(id, name) {
  if (name && [...$(id).options].some((o) => o.value === name)) $(id).value = name;
}

function useExample(id) {
  const ex = state.examples.find((e) => e.id === id);
  if (!ex) return;
  state.source = id;
  state.workload = ex.workload;
  const recipe = { ...ex.recipe };
  if (!recipe.gpus && ex.cluster) recipe.gpus = (ex.cluster.gpus_per_node || 1) * (ex.cluster.nodes || 1);
  state.baseRecipe = recipe;
  $("example-desc").textContent = ex.description || `From ${ex.file || "the examples"}.`;
  $("workload-json").value = prettyJSON(ex.workload);
  clearError($("workload-error"));
  if (ex.kind === "compare") {
    setIfKnown("hw-a", ex.from);
    setIfKnown("hw-b", ex.to);
  } else {
    setIfKnown("hw-a", ex.hardware);
  }
  setIfKnown("cmp-from", ex.from || $("hw-a").value);
  setIfKnown("cmp-to", ex.to || $("hw-b").value || $("cmp-to").value);
  setKnobs(recipe, ex.workload.kind);
  if (ex.cluster) {
    $("plan-gpn").value = String(ex.cluster.gpus_per_node || 1);
    $("plan-nodes").value = String(ex.cluster.nodes || 1);
  }
  const k = ex.knobs;
  if (k) {
    if (k.batch_per_gpu) $("plan-batches").value = k.batch_per_gpu.join(", ");
    const prec = k.precision || [recipe.precision || "bf16"];
    for (const c of document.querySelectorAll('input[name="plan-prec"]')) c.checked = prec.includes(c.value);
    $("plan-k-ckpt").checked = !k.checkpointing || k.checkpointing.length > 1;
    $("plan-k-fsdp").checked = !k.dense_parallel || k.dense_parallel.length > 1;
    $("plan-k-pad").checked = !!k.padding && k.padding.length > 1;
    $("plan-k-shard").checked = !k.sharding || k.sharding.length > 1;
    $("plan-k-place").checked = k.host_placement !== false;
    $("plan-k-embprec").checked = !!k.embedding_precision && k.embedding_precision.length > 1;
  }
  if (ex.objective) setIfKnown("plan-objective", ex.objective);
  $("plan-host-tables").value = "";
  if (ex.host_tables) setIfKnown("plan-host-tables", ex.host_tables);
  if (ex.time_limit_s) $("plan-time").value = String(ex.time_limit_s);
  onKnob();
}

function jsonErrorField(text, err) {
  // V8: "... at position 123 (line 4 column 7)" or "at position 123"
  const m = /position (\d+)/.exec(err.message);
  if (!m) return "workload";
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split("\n").length;
  const col = pos - before.lastIndexOf("\n");
  return `workload (line ${line}, column ${col})`;
}

function applyPastedJSON() {
  const text = $("workload-json").value;
  const slot = $("workload-error");
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    renderError(slot, new ApiError({ code: "bad_json", message: `not valid JSON: ${e.message}`, field: jsonErrorField(text, e) }), "Workload JSON");
    return;
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) {
    renderError(slot, new ApiError({ code: "bad_field", message: "the workload must be a JSON object", field: "workload" }), "Workload JSON");
    return;
  }
  // A whole step request ({"hardware", "workload", "recipe"}) is accepted
  // too: its hardware becomes accelerator A.
  let wl = doc;
  if (doc.workload && typeof doc.workload === "object") {
    wl = doc.workload;
    if (doc.hardware !== undefined) {
      if (typeof doc.hardware !== "string" || !state.hw.has(doc.hardware)) {
        renderError(slot, new ApiError({ code: "not_found", message: `no accelerator ${JSON.stringify(doc.hardware)} in the catalog (${state.hardware.map((h) => h.name).join(", ")})`, field: "hardware" }), "Workload JSON");
        return;
      }
      $("hw-a").value = doc.hardware;
      $("cmp-from").value = doc.hardware;
      syncCluster();
    }
    if (doc.recipe && typeof doc.recipe === "object") {
      state.baseRecipe = { ...doc.recipe };
      setKnobs(doc.recipe, wl.kind);
    }
  }
  clearError(slot);
  state.workload = wl;
  state.source = "custom";
  let opt = $("example").querySelector('option[value="custom"]');
  if (!opt) {
    opt = el("option", { value: "custom", text: "Custom (pasted JSON)" });
    $("example").append(opt);
  }
  $("example").value = "custom";
  $("example-desc").textContent = "Your pasted workload.";
  const s = $("knob-batch");
  if (wl.kind === "transformer" && Number(s.max) > 8) setKnobs({ ...currentRecipe(), batch_per_gpu: 4 }, "transformer");
  else if (wl.kind !== "transformer" && Number(s.max) <= 8) setKnobs({ ...currentRecipe(), batch_per_gpu: 16384 }, "dlrm");
  schedulePredict();
}

// ---------------------------------------------------------------- prediction

const schedulePredict = debounce(() => predict(), DEBOUNCE_MS);

function onKnob() {
  showBatch();
  $("recipe-preview").textContent = prettyJSON(currentRecipe());
  $("pred-busy").hidden = false;
  schedulePredict();
}

async function stepFor(hw, recipe, signal) {
  return api("POST", "/v1/step", { hardware: hw, workload: state.workload, recipe }, { signal });
}

// The GEMMs the step model priced (the step answer's "gemms", one call
// each), shaped as the roofline and the tables read them: {name, op, r}.
// Without a step answer there are none, for the step's own reason.
function gemmsOf(step) {
  if (step.status !== "fulfilled") return step;
  const list = Array.isArray(step.value.gemms) ? step.value.gemms : [];
  return {
    status: "fulfilled",
    value: list.map((g) => ({
      name: g.name,
      op: { op: "gemm", m: g.m, n: g.n, k: g.k, dtype: g.dtype, layout: g.layout, ...(g.batch > 1 ? { batch: g.batch } : {}) },
      r: { ms: g.ms, flops: g.flops, bytes: g.bytes, achieved_tflops: g.achieved_tflops, bound: g.bound },
    })),
  };
}

async function predict() {
  if (!state.workload) return;
  const seq = ++state.predictSeq;
  if (state.predictAbort) state.predictAbort.abort();
  const ctl = new AbortController();
  state.predictAbort = ctl;
  const recipe = currentRecipe();
  $("recipe-preview").textContent = prettyJSON(recipe);
  $("pred-busy").hidden = false;
  document.body.dataset.predicting = "1";
  const hws = selectedHw();
  const results = await Promise.all(
    hws.map(async (hw) => {
      const [step] = await Promise.allSettled([stepFor(hw, recipe, ctl.signal)]);
      return { hw, step, est: gemmsOf(step) };
    }),
  );
  if (seq !== state.predictSeq) return; // superseded
  if (results.some((r) => [r.step, r.est].some((x) => x.status === "rejected" && isAbort(x.reason)))) return;
  $("pred-busy").hidden = true;
  renderSummary(results, recipe);
  renderStep(results);
  renderMemory(results);
  renderRoofline(results, recipe);
  document.body.dataset.predicting = "";
  document.body.dataset.predictedRecipe = JSON.stringify(recipe); // what the figures shown are for
  document.body.dataset.predictions = String(seq);
}

function cardFor(res, recipe, idx) {
  const { hw, step, est } = res;
  const h = state.hw.get(hw) || {};
  const letter = idx === 0 ? "a" : "b";
  const card = el("div", { class: "card", id: `sum-${letter}`, "data-hw": hw });
  card.append(el("h3", { text: `${idx === 0 ? "A" : "B"}: ${hwLabel(hw)}` }));
  const dl = el("dl");
  const row = (label, value, id, cls) => {
    dl.append(el("dt", { text: label }));
    const dd = el("dd", { text: value });
    if (id) dd.id = id;
    if (cls) dd.className = cls;
    dl.append(dd);
  };
  if (step.status === "fulfilled") {
    const s = step.value;
    const usable = num(s.hbm_usable_bytes) ?? h.hbm_usable_bytes ?? h.hbm_bytes;
    const peak = num(s.peak_memory_bytes);
    row("Step time", fmtMs(num(s.step_ms)), `sum-${letter}-step`);
    row("Throughput", fmtRate(num(s.samples_per_s), isDlrm() ? "samples" : "sequences"), `sum-${letter}-tput`);
    if (num(s.tokens_per_s)) row("Tokens", fmtRate(s.tokens_per_s, "tokens"));
    if (peak !== null) {
      const fits = s.fits !== undefined ? !!s.fits : usable ? peak <= usable : true;
      row("Peak memory / GPU", `${fmtBytes(peak)} of ${fmtBytes(usable)}${fits ? "" : " — does not fit"}`, `sum-${letter}-mem`, fits ? "" : "bad");
    }
    if (num(s.mfu) !== null) row("MFU", pct(s.mfu));
    if (s.provenance) row("How sure", provenanceText(s.provenance), `sum-${letter}-sure`);
  } else {
    row("Step", "not predicted (see the step panel)", `sum-${letter}-step`, "bad");
  }
  if (est.status === "fulfilled") {
    const total = est.value.reduce((t, g) => t + (num(g.r.ms) || 0), 0);
    row("Main GEMMs", `${fmtMs(total)} (${est.value.length} GEMMs)`, `sum-${letter}-gemm`);
  } else {
    row("Main GEMMs", "not estimated (see the roofline panel)", `sum-${letter}-gemm`, "bad");
  }
  row("Recipe", `${recipe.gpus} GPU × ${recipe.batch_per_gpu.toLocaleString("en-US")} per GPU, ${recipe.precision}`);
  card.append(dl);
  return card;
}

// One line from an answer's provenance: what the figures rest on and the
// held-out error bands the server reports ("not checked" where null).
function provenanceText(p) {
  const b = p.error_band || {};
  const band = (k, label) => (num(b[k]) !== null ? `${label} ±${pct(b[k])}` : `${label} not checked`);
  // GEMMs with K or N not a multiple of 8 (issue 25's awkward shapes): only where a blind sweep checks them
  const ua = num(b.gemm_unaligned) !== null ? `, unaligned GEMM ±${pct(b.gemm_unaligned)}${num(b.gemm_unaligned_p90) !== null ? ` (p90 ${pct(b.gemm_unaligned_p90)})` : ""}` : "";
  return `${p.basis}; typical error: ${band("step", "step")}, ${band("gemm", "GEMM")}${ua}, ${band("collective_cluster", "multi-node collectives")}`;
}

function renderSummary(results, recipe) {
  const box = $("summary");
  box.replaceChildren(...results.map((r, i) => cardFor(r, recipe, i)));
  if (results.length === 2) {
    const [a, b] = results;
    const card = el("div", { class: "card ratio", id: "sum-ratio" });
    card.append(el("h3", { text: "B against A" }));
    const dl = el("dl");
    if (a.step.status === "fulfilled" && b.step.status === "fulfilled" && a.step.value.samples_per_s) {
      const g = b.step.value.samples_per_s / a.step.value.samples_per_s;
      dl.append(el("dt", { text: "Throughput" }), el("dd", { text: `×${fmt(g)}`, class: g >= 1 ? "good" : "bad", id: "sum-ratio-tput" }));
    }
    if (a.est.status === "fulfilled" && b.est.status === "fulfilled") {
      const ta = a.est.value.reduce((t, g) => t + (g.r.ms || 0), 0);
      const tb = b.est.value.reduce((t, g) => t + (g.r.ms || 0), 0);
      if (tb > 0) dl.append(el("dt", { text: "GEMM speed" }), el("dd", { text: `×${fmt(ta / tb)}`, class: ta >= tb ? "good" : "bad", id: "sum-ratio-gemm" }));
    }
    card.append(dl);
    box.append(card);
  }
}

function renderStepErrors(slot, results) {
  const bad = results.filter((r) => r.step.status === "rejected");
  slot.replaceChildren(...bad.map((r) => errorBox(r.step.reason, `Step on ${r.hw}`)));
}

function renderStep(results) {
  renderStepErrors($("step-error"), results);
  const ok = results.filter((r) => r.step.status === "fulfilled");
  if (!ok.length) {
    charts.clear("step-chart");
    $("step-table").replaceChildren();
    return;
  }
  const per = ok.map((r) => entries(pick(r.step.value, "breakdown", "components"), ["ms", "value", "time_ms"]));
  const names = [...new Set(per.flat().map((e) => e.name))];
  const label = componentLabels(ok.map((r) => r.step.value));
  const series = names.map((n) => ({ label: label(n), data: per.map((p) => (p.find((e) => e.name === n) || {}).value ?? 0) }));
  charts.stackedBars("step-chart", ok.map((r) => r.hw), series, { unit: "ms" });
  const t = charts.table(
    $("step-table"),
    [{ label: "Component", get: (n) => (n === "step_ms" ? n : label(n)), cls: "text" }, ...ok.map((r, i) => ({ label: `${r.hw} ms`, get: (n) => (per[i].find((e) => e.name === n) || {}).value ?? null }))],
    [...names, "step_ms"].map((n) => n),
    "Step time per component",
  );
  [...t.tBodies[0].rows].forEach((tr, i) => (tr.dataset.component = [...names, "step_ms"][i]));
  renderClasses(ok);
  // the total row reads step_ms
  const tb = $("step-table").querySelector("tbody");
  const last = tb.rows[tb.rows.length - 1];
  ok.forEach((r, i) => (last.cells[i + 1].textContent = fmt(num(r.step.value.step_ms))));
}

// The step API's "other" component holds the kernel classes no other
// component names (costmodel/step.h: interaction gathers and scatters,
// elementwise ops, the pipeline bubble): it is labelled by those of its
// kernel_classes that took time, largest first, e.g. "interaction,
// elementwise (other)".
const OTHER_CLASSES = ["interaction", "elementwise", "pipeline_bubble"];
function componentLabels(steps) {
  const ms = new Map();
  for (const s of steps) {
    for (const k of Array.isArray(s.kernel_classes) ? s.kernel_classes : []) {
      if (OTHER_CLASSES.includes(k.class) && num(k.ms) > 0) ms.set(k.class, (ms.get(k.class) || 0) + k.ms);
    }
  }
  const held = [...ms.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k.replace(/_/g, " "));
  return (n) => (n === "other" && held.length ? `${held.join(", ")} (other)` : n);
}

// GPU time by kernel class, as the step API names them.
function renderClasses(ok) {
  const classes = [...new Set(ok.flatMap((r) => (r.step.value.kernel_classes || []).map((k) => k.class)))];
  const t = charts.table(
    $("step-classes"),
    [{ label: "Kernel class", get: (c) => c, cls: "text" },
      ...ok.map((r) => ({ label: `${r.hw} ms`, get: (c) => num(((r.step.value.kernel_classes || []).find((k) => k.class === c) || {}).ms) })),
      ...ok.map((r) => ({ label: `${r.hw} kernels`, get: (c) => num(((r.step.value.kernel_classes || []).find((k) => k.class === c) || {}).kernels) }))],
    classes,
    "GPU time by kernel class (host_dispatch overlaps the GPU's)",
  );
  [...t.tBodies[0].rows].forEach((tr, i) => (tr.dataset.class = classes[i]));
}

function renderMemory(results) {
  renderStepErrors($("mem-error"), results);
  const ok = results.filter((r) => r.step.status === "fulfilled");
  if (!ok.length) {
    charts.clear("mem-chart");
    $("mem-table").replaceChildren();
    return;
  }
  const per = ok.map((r) => entries(pick(r.step.value, "memory", "memory_bytes"), ["bytes", "value"]));
  const names = [...new Set(per.flat().map((e) => e.name))];
  const series = names.map((n) => ({ label: n, data: per.map((p) => ((p.find((e) => e.name === n) || {}).value ?? 0) / GiB) }));
  const caps = ok.map((r) => {
    const h = state.hw.get(r.hw) || {};
    return (num(r.step.value.hbm_usable_bytes) ?? h.hbm_usable_bytes ?? h.hbm_bytes ?? 0) / GiB;
  });
  charts.stackedBars("mem-chart", ok.map((r) => r.hw), series, {
    unit: "GiB",
    extra: [{ label: "usable HBM", data: caps, stack: "hbm", backgroundColor: "rgba(74,82,96,0.25)", borderColor: "#4a5260", borderWidth: 2 }],
  });
  charts.table(
    $("mem-table"),
    [{ label: "Use", get: (n) => n }, ...ok.map((r, i) => ({ label: `${r.hw} GiB`, get: (n) => (n === "peak" ? (num(r.step.value.peak_memory_bytes) ?? 0) / GiB : n === "usable HBM" ? caps[i] : ((per[i].find((e) => e.name === n) || {}).value ?? 0) / GiB) }))],
    [...names, "peak", "usable HBM"],
    "Memory per GPU by use",
  );
}

function rooflineLine(h, dtype) {
  const peak = (h.peak_tflops || {})[dtype] || (h.peak_tflops || {}).bf16;
  const bw = h.hbm_bandwidth_bytes_per_s;
  if (!peak || !bw) return [];
  const pts = [];
  for (let e = -1; e <= 4.5; e += 0.05) {
    const x = 10 ** e;
    pts.push({ x, y: Math.min(peak, (x * bw) / 1e12) });
  }
  const ridge = (peak * 1e12) / bw;
  pts.push({ x: ridge, y: peak });
  return pts.sort((p, q) => p.x - q.x);
}

function renderRoofline(results, recipe) {
  const slot = $("roofline-error");
  slot.replaceChildren(...results.filter((r) => r.est.status === "rejected").map((r) => errorBox(r.est.reason, `GEMMs on ${r.hw}`)));
  const ok = results.filter((r) => r.est.status === "fulfilled");
  if (!ok.length) {
    charts.clear("roofline-chart");
    $("gemm-table").replaceChildren();
    return;
  }
  const datasets = [];
  ok.forEach((r, i) => {
    const h = state.hw.get(r.hw) || {};
    const color = charts.PALETTE[i === 0 ? 0 : 5];
    const dtype = (r.est.value[0] && r.est.value[0].op.dtype) || recipe.precision;
    datasets.push({ label: `${r.hw} roofline (${dtype})`, data: rooflineLine(h, dtype), showLine: true, pointRadius: 0, borderColor: color, borderWidth: 2, borderDash: i ? [6, 4] : [] });
    datasets.push({
      label: `${r.hw} GEMMs`,
      data: r.est.value
        .filter((g) => num(g.r.flops) && num(g.r.bytes))
        .map((g) => ({ x: g.r.flops / g.r.bytes, y: num(g.r.achieved_tflops) ?? g.r.flops / (g.r.ms * 1e9), g })),
      backgroundColor: color,
      borderColor: color,
      pointRadius: 5,
      pointHoverRadius: 7,
      pointStyle: i ? "triangle" : "circle",
    });
  });
  charts.draw("roofline-chart", {
    type: "scatter",
    data: { datasets },
    options: {
      scales: {
        x: { type: "logarithmic", title: { display: true, text: "arithmetic intensity (FLOP / byte)" }, ticks: charts.decadeTicks },
        y: { type: "logarithmic", title: { display: true, text: "achieved TFLOP/s" }, ticks: charts.decadeTicks },
      },
      plugins: {
        legend: { position: "bottom" },
        tooltip: {
          callbacks: {
            label: (c) => {
              const g = c.raw.g;
              if (!g) return `${c.dataset.label}: ${fmt(c.parsed.y)} TFLOP/s at ${fmt(c.parsed.x)} FLOP/B`;
              const o = g.op;
              return `${g.name} ${o.batch ? o.batch + "×" : ""}${o.m}×${o.n}×${o.k} ${o.dtype} ${o.layout}: ${fmt(g.r.ms)} ms, ${fmt(c.parsed.y)} TFLOP/s, ${g.r.bound}-bound`;
            },
          },
        },
      },
    },
  });
  const gl = ok[0].est.value;
  // another accelerator's price of the same GEMM (the lists name them alike)
  const same = (r, i) => (r.est.value.find((g) => g.name === gl[i].name) || {}).r || {};
  charts.table(
    $("gemm-table"),
    [
      { label: "GEMM", get: (i) => gl[i].name },
      { label: "m×n×k", get: (i) => `${gl[i].op.batch ? gl[i].op.batch + "×" : ""}${gl[i].op.m}×${gl[i].op.n}×${gl[i].op.k}` },
      { label: "FLOP/B", get: (i) => (gl[i].r.flops && gl[i].r.bytes ? gl[i].r.flops / gl[i].r.bytes : null) },
      ...ok.flatMap((r) => [
        { label: `${r.hw} ms`, get: (i) => num(same(r, i).ms) },
        { label: `${r.hw} TFLOP/s`, get: (i) => num(same(r, i).achieved_tflops) },
        { label: `${r.hw} bound`, get: (i) => same(r, i).bound, cls: "text" },
      ]),
    ],
    gl.map((_, i) => i),
    "Main GEMMs with their predicted time on each accelerator",
  );
}

// ---------------------------------------------------------------- plan

function parseBatches() {
  const raw = $("plan-batches").value.split(/[\s,]+/).filter(Boolean);
  const vals = raw.map(Number);
  const bad = raw.find((s, i) => !Number.isInteger(vals[i]) || vals[i] < 1);
  if (bad !== undefined) throw new ApiError({ code: "bad_field", message: `batch values must be positive integers (got "${bad}")`, field: "knobs.batch_per_gpu" });
  if (!vals.length) throw new ApiError({ code: "missing_field", message: "give at least one batch value", field: "knobs.batch_per_gpu" });
  return vals;
}

function planKnobs(base) {
  const knobs = { batch_per_gpu: parseBatches() };
  const prec = [...document.querySelectorAll('input[name="plan-prec"]:checked')].map((c) => c.value);
  knobs.precision = prec.length ? prec : [base.precision];
  knobs.checkpointing = $("plan-k-ckpt").checked ? ["none", "selective", "full"] : [base.checkpointing || "none"];
  knobs.padding = $("plan-k-pad").checked ? [false, true] : [Number(base.pad_to) > 1];
  knobs.dense_parallel = $("plan-k-fsdp").checked ? ["ddp", "fsdp"] : [base.dense_parallel || "ddp"];
  if (isDlrm()) {
    knobs.sharding = $("plan-k-shard").checked ? ["data_parallel", "table_wise", "row_wise", "column_wise", "table_row_wise"] : [base.sharding || "table_wise"];
    knobs.host_placement = $("plan-k-place").checked;
    knobs.embedding_precision = $("plan-k-embprec").checked ? ["fp32", "fp16", "int8"] : [base.embedding_precision || "fp32"];
  }
  return knobs;
}

function planRequest() {
  const base = currentRecipe();
  const cluster = { gpus_per_node: Math.max(1, Number($("plan-gpn").value) || 1), nodes: Math.max(1, Number($("plan-nodes").value) || 1) };
  base.gpus = cluster.gpus_per_node * cluster.nodes;
  const req = {
    workload: state.workload,
    hardware: $("hw-a").value,
    cluster,
    baseline: base,
    knobs: planKnobs(base),
    objective: $("plan-objective").value,
    time_limit_s: Math.max(1, Number($("plan-time").value) || 10),
  };
  if (isDlrm() && $("plan-host-tables").value) req.host_tables = $("plan-host-tables").value;
  return req;
}

const DONE = new Set(["done", "succeeded", "success", "completed", "complete", "finished", "optimal", "feasible", "ok", "timed_out", "timeout"]);
const FAILED = new Set(["failed", "error", "infeasible", "cancelled", "canceled"]);

function planState(doc) {
  const st = String(pick(doc, "status", "state") || "").toLowerCase();
  if (FAILED.has(st) || (doc.error && !doc.recipe)) return "failed";
  if (doc.recipe || DONE.has(st)) return "done";
  return st || "running";
}

function showProgress(doc, t0, limit) {
  const p = $("plan-progress");
  p.hidden = false;
  const prog = pick(doc, "progress") || doc;
  const elapsed = num(pick(prog, "elapsed_s")) ?? (performance.now() - t0) / 1000;
  const st = planState(doc);
  if (st === "queued") p.removeAttribute("value");
  else p.value = Math.min(1, elapsed / limit);
  const parts = [`${st}`, `${fmt(elapsed, 2)} s`];
  const inc = num(pick(prog, "incumbent_ms", "best_ms"));
  const bound = num(pick(prog, "bound_ms"));
  const gap = num(pick(prog, "gap"));
  if (inc !== null) parts.push(`best ${fmtMs(inc)}`);
  if (bound !== null) parts.push(`bound ${fmtMs(bound)}`);
  if (gap !== null) parts.push(`gap ${pct(gap)}`);
  $("plan-status").textContent = `Plan ${doc.id ?? ""}: ${parts.join(", ")}`;
}

async function runPlan(ev) {
  ev.preventDefault();
  const btn = $("plan-run");
  const slot = $("plan-error");
  clearError(slot);
  let req;
  try {
    req = planRequest();
  } catch (e) {
    renderError(slot, e, "Plan request");
    return;
  }
  $("plan-request").textContent = prettyJSON(req);
  btn.disabled = true;
  $("plan-result").hidden = true;
  $("plan-status").textContent = "Plan: submitting…";
  const t0 = performance.now();
  const prog = $("plan-progress");
  prog.hidden = false;
  prog.value = 0;
  const tick = setInterval(() => {
    const el_s = (performance.now() - t0) / 1000;
    prog.value = Math.min(0.99, el_s / req.time_limit_s);
    $("plan-status").textContent = `Plan: solving on ${req.hardware}… ${el_s.toFixed(1)} s (time limit ${req.time_limit_s} s)`;
  }, 200);
  try {
    let doc = await api("POST", "/v1/plans", req);
    clearInterval(tick);
    const id = pick(doc, "id", "plan_id");
    const deadline = t0 + (req.time_limit_s + 120) * 1000;
    while (planState(doc) !== "done" && planState(doc) !== "failed") {
      showProgress(doc, t0, req.time_limit_s);
      if (id === undefined) throw new ApiError({ code: "bad_response", message: "the plan is not finished and has no id to follow", method: "POST", path: "/v1/plans" });
      if (performance.now() > deadline) throw new ApiError({ code: "timeout", message: `plan ${id} not finished after ${req.time_limit_s + 120} s`, method: "GET", path: `/v1/plans/${id}` });
      await sleep(400);
      doc = await api("GET", `/v1/plans/${encodeURIComponent(id)}`);
    }
    if (planState(doc) === "failed") {
      const er = doc.error || {};
      throw new ApiError({ code: er.code || "failed", message: er.message || `plan ${id} ${doc.status}`, field: er.field || "", method: "GET", path: `/v1/plans/${id}` });
    }
    $("plan-progress").value = 1;
    const srch = doc.search || {};
    $("plan-status").textContent = `Plan ${id ?? ""} done in ${fmt((performance.now() - t0) / 1000, 2)} s` +
      (num(srch.combinations) !== null ? ` (${srch.combinations} recipes searched, ${srch.pruned ?? 0} pruned, ${srch.infeasible ?? 0} infeasible)` : "");
    renderPlan(doc, req);
    if (hist.page > 0) loadHistory(null); // the new plan heads the history
  } catch (e) {
    $("plan-progress").hidden = true;
    $("plan-status").textContent = "Plan failed (see below)";
    renderError(slot, e, "Plan");
  } finally {
    clearInterval(tick);
    btn.disabled = false;
  }
}

function changeList(expl) {
  if (!expl) return [];
  if (Array.isArray(expl)) return expl;
  return pick(expl, "changes", "gains", "steps") || [];
}

// gain of one change as a throughput ratio (1.12 = 12% faster)
function changeRatio(c) {
  const r = num(pick(c, "speedup", "ratio", "gain_ratio"));
  if (r !== null) return r;
  const p = num(pick(c, "gain_pct", "gain_percent"));
  if (p !== null) return 1 + p / 100;
  const g = num(c.gain);
  return g;
}

function changeName(c) {
  const n = pick(c, "change", "knob", "name", "what", "kind");
  const from = pick(c, "from", "before", "baseline");
  const to = pick(c, "to", "after", "value");
  const fmtv = (v) => (typeof v === "object" ? JSON.stringify(v) : String(v));
  return from !== undefined || to !== undefined ? `${n ?? "change"}: ${fmtv(from)} → ${fmtv(to)}` : String(n ?? (typeof c === "string" ? c : JSON.stringify(c)));
}

function renderPlan(doc, req) {
  state.lastPlan = doc;
  $("plan-result").hidden = false;
  const expl = pick(doc, "explanation") || {};
  const base = pick(doc, "baseline") || pick(expl, "baseline") || {};
  const sum = $("plan-summary");
  const card = (title, obj, id) => {
    const c = el("div", { class: "card", id });
    c.append(el("h3", { text: title }));
    const dl = el("dl");
    const add = (k, v) => dl.append(el("dt", { text: k }), el("dd", { text: v }));
    add("Step time", fmtMs(num(obj.step_ms)));
    add("Throughput", fmtRate(num(obj.samples_per_s), isDlrm() ? "samples" : "sequences"));
    if (num(obj.peak_memory_bytes) !== null) add("Peak memory / GPU", fmtBytes(obj.peak_memory_bytes));
    if (obj.provenance) add("How sure", provenanceText(obj.provenance));
    c.append(dl);
    return c;
  };
  const cards = [card(`Plan for ${req.hardware}`, doc, "plan-card")];
  if (num(base.samples_per_s) !== null || num(base.step_ms) !== null) {
    const bc = card("Baseline", base, "plan-base-card");
    if (typeof base.sharding === "string") {
      bc.querySelector("dl").append(el("dt", { text: "Sharding" }), el("dd", { id: "plan-base-sharding", text: base.sharding === "planner" ? "the planner's greedy pick" : base.sharding }));
    }
    cards.push(bc);
  }
  const g = el("div", { class: "card ratio" });
  g.append(el("h3", { text: "Gain" }));
  const dl = el("dl");
  const gain = num(pick(doc, "gain", "speedup")) ?? (num(base.samples_per_s) && num(doc.samples_per_s) ? doc.samples_per_s / base.samples_per_s : null);
  if (gain !== null) dl.append(el("dt", { text: "vs baseline" }), el("dd", { text: `×${fmt(gain)}`, id: "plan-gain", class: gain >= 1 ? "good" : "bad" }));
  if (num(doc.gap) !== null) dl.append(el("dt", { text: "proven gap" }), el("dd", { text: pct(doc.gap), id: "plan-gap" }));
  if (num(doc.search_gap) !== null) dl.append(el("dt", { text: "search gap" }), el("dd", { text: pct(doc.search_gap) }));
  if (base.fits === false) dl.append(el("dt", { text: "baseline" }), el("dd", { class: "bad", text: `does not fit${base.reason ? ": " + base.reason : ""}` }));
  g.append(dl);
  cards.push(g);
  sum.replaceChildren(...cards);
  renderPlanValidation(doc.validation);

  // explanation
  const ex = $("plan-explanation");
  ex.replaceChildren();
  const changes = changeList(expl);
  if (typeof expl === "string") ex.append(el("p", { text: expl }));
  const text = pick(expl, "text", "summary");
  if (typeof text === "string") ex.append(el("p", { text }));
  if (changes.length) {
    const box = el("div", { id: "plan-changes" });
    charts.table(box, [
      { label: "Change", get: (c) => changeName(c), cls: "text" },
      { label: "Gain", get: (c) => { const r = changeRatio(c); return r === null ? "–" : `×${fmt(r)}`; } },
      { label: "Samples/s after", get: (c) => num(c.samples_per_s) },
      { label: "Why", get: (c) => pick(c, "reason", "why", "note") ?? "", cls: "text" },
      { label: "Changes training", get: (c) => (c.affects_convergence ? "yes" : ""), cls: "text" },
    ], changes, "Changes against the baseline with their predicted gains");
    ex.append(box);
  } else {
    ex.append(el("p", { text: "No change against the baseline." }));
  }
  const binding = pick(expl, "binding_constraints", "binding");
  if (Array.isArray(binding) && binding.length) {
    ex.append(el("h4", { text: "Binding constraints" }));
    const ul = el("ul");
    for (const b of binding) ul.append(el("li", { text: typeof b === "string" ? b : JSON.stringify(b) }));
    ex.append(ul);
  }
  const bound = pick(expl, "step_bound");
  if (Array.isArray(bound) && bound.length) {
    ex.append(el("h4", { text: "What bounds the step" }));
    const ul = el("ul", { id: "plan-step-bound" });
    for (const b of bound) ul.append(el("li", { text: String(b) }));
    ex.append(ul);
  }
  const ranks = pick(expl, "ranks", "per_rank");
  if (Array.isArray(ranks) && ranks.length) {
    const det = el("details", {}, el("summary", { text: `Per-rank load and memory (${ranks.length} ranks)` }));
    const box = el("div");
    charts.table(box, [
      { label: "Rank", get: (r) => pick(r, "rank") ?? "" },
      { label: "Embedding ms", get: (r) => num(pick(r, "embedding_ms", "load_ms")) },
      { label: "Step ms", get: (r) => num(pick(r, "step_ms", "ms")) },
      { label: "Memory / GPU", get: (r) => fmtBytes(num(pick(r, "memory_bytes", "bytes")) ?? 0) },
    ], ranks.slice(0, 256), "Per-rank load");
    det.append(box);
    ex.append(det);
  }

  // plan vs baseline chart: throughput after each change (cumulative)
  const b0 = num(base.samples_per_s);
  const labels = [];
  const vals = [];
  if (b0 !== null) {
    labels.push("baseline");
    vals.push(b0);
    let cur = b0;
    for (const c of changes) {
      const r = changeRatio(c);
      if (num(c.samples_per_s) !== null) cur = c.samples_per_s;
      else if (r !== null) cur *= r;
      else continue;
      labels.push(`+ ${changeName(c)}`);
      vals.push(cur);
    }
  }
  if (num(doc.samples_per_s) !== null) {
    labels.push("plan");
    vals.push(doc.samples_per_s);
  }
  if (labels.length) {
    charts.draw("plan-chart", {
      type: "bar",
      data: { labels, datasets: [{ label: "samples/s", data: vals, backgroundColor: labels.map((l) => (l === "baseline" ? "#6b7380" : l === "plan" ? charts.PALETTE[2] : charts.PALETTE[0])) }] },
      options: { indexAxis: "y", plugins: { legend: { display: false } }, scales: { x: { beginAtZero: true, title: { display: true, text: "samples/s" } } } },
    });
  } else charts.clear("plan-chart");

  $("plan-recipe").textContent = prettyJSON(doc.recipe ?? null);
  const ep = doc.embedding_plan && doc.embedding_plan.tables;
  $("plan-emb").hidden = !Array.isArray(ep);
  if (Array.isArray(ep)) {
    $("plan-emb-summary").textContent = `Embedding plan (${ep.length} tables; TorchRec sharding types and compute kernels)`;
    charts.table($("plan-emb-table"), [
      { label: "Table", get: (t) => t.name, cls: "text" },
      { label: "Sharding", get: (t) => t.sharding_type, cls: "text" },
      { label: "Kernel", get: (t) => t.compute_kernel, cls: "text" },
      { label: "Ranks", get: (t) => (Array.isArray(t.ranks) ? t.ranks.join(", ") : ""), cls: "text" },
    ], ep.slice(0, 2000), "Embedding plan per table");
  }
  $("plan-raw").textContent = prettyJSON(doc);
}

async function copyRecipe() {
  const text = $("plan-recipe").textContent;
  const status = $("recipe-copy-status");
  try {
    if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(text);
    else {
      const ta = el("textarea", { "aria-hidden": "true" });
      ta.value = text;
      document.body.append(ta);
      ta.select();
      const ok = document.execCommand("copy");
      ta.remove();
      if (!ok) throw new Error("the browser refused to copy");
    }
    status.textContent = "Recipe copied to the clipboard.";
  } catch (e) {
    status.textContent = `Could not copy: ${e.message}. Select the recipe below and copy it.`;
  }
}

function downloadRecipe(what = "recipe") {
  const doc = state.lastPlan;
  const text = what === "recipe" ? $("plan-recipe").textContent : prettyJSON(doc && doc.embedding_plan);
  const blob = new Blob([text + "\n"], { type: "application/json" });
  const hw = (doc && doc.hardware) || $("hw-a").value;
  const a = el("a", { href: URL.createObjectURL(blob), download: `cdplan-${what === "recipe" ? "recipe" : "embedding-plan"}-${hw}${doc && doc.id !== undefined ? "-" + doc.id : ""}.json` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 5000);
  $("recipe-copy-status").textContent = `Downloaded ${a.download}.`;
}

// ---------------------------------------------------------------- compare

async function runCompare(ev) {
  ev.preventDefault();
  const slot = $("compare-error");
  clearError(slot);
  const from = $("cmp-from").value;
  const to = $("cmp-to").value;
  let req;
  try {
    const p = planRequest();
    req = { workload: p.workload, from, to, cluster: p.cluster, baseline: p.baseline, knobs: p.knobs, objective: p.objective, time_limit_s: p.time_limit_s };
  } catch (e) {
    renderError(slot, e, "Compare request");
    return;
  }
  $("compare-run").disabled = true;
  $("compare-status").textContent = `Comparing ${from} → ${to}…`;
  try {
    let doc = await api("POST", "/v1/compare", req);
    const id = pick(doc, "id");
    const t0 = performance.now();
    while (planState(doc) !== "done" && planState(doc) !== "failed" && !pick(doc, "gain", "direct_port", "direct", "plan") && id !== undefined) {
      if (performance.now() - t0 > 180000) throw new ApiError({ code: "timeout", message: "compare not finished after 180 s" });
      await sleep(400);
      doc = await api("GET", `/v1/compare/${encodeURIComponent(id)}`);
    }
    renderCompare(doc, req);
    $("compare-status").textContent = `Compared ${from} → ${to}.`;
  } catch (e) {
    $("compare-status").textContent = "Compare failed (see below)";
    renderError(slot, e, "Compare");
  } finally {
    $("compare-run").disabled = false;
  }
}

function renderCompare(doc, req) {
  $("compare-result").hidden = false;
  const direct = pick(doc, "direct_port", "direct", "port") || {};
  const plan = (doc.to && typeof doc.to === "object" ? doc.to : pick(doc, "plan", "planned")) || {};
  const fromPred = doc.from && typeof doc.from === "object" ? doc.from : null;
  const mk = (title, o, id) => {
    const c = el("div", { class: "card", id });
    c.append(el("h3", { text: title }));
    const dl = el("dl");
    const p = pick(o, "prediction") || o;
    dl.append(el("dt", { text: "Step time" }), el("dd", { text: fmtMs(num(p.step_ms)) }));
    dl.append(el("dt", { text: "Throughput" }), el("dd", { text: fmtRate(num(p.samples_per_s), isDlrm() ? "samples" : "sequences") }));
    if (num(p.peak_memory_bytes) !== null) dl.append(el("dt", { text: "Peak memory / GPU" }), el("dd", { text: fmtBytes(p.peak_memory_bytes) }));
    c.append(dl);
    return c;
  };
  const cards = [];
  if (fromPred) cards.push(mk(`Tuned recipe on ${req.from}`, pick(doc, "tuned_source") || fromPred, "cmp-from-card"));
  cards.push(mk(`Direct port on ${req.to}`, direct, "cmp-direct-card"));
  cards.push(mk(`Plan for ${req.to}`, plan, "cmp-plan-card"));
  const gain = num(pick(doc, "gain", "speedup"));
  const g = el("div", { class: "card ratio" }, el("h3", { text: "Gain of the plan" }));
  g.append(el("dl", {}, el("dt", { text: "over the port" }), el("dd", { id: "cmp-gain", class: gain !== null && gain >= 1 ? "good" : "bad", text: gain === null ? "–" : `×${fmt(gain)}` })));
  const share = (k) => { const v = num(pick(doc, k)); return v === null ? "–" : `×${fmt(v)}`; };
  g.querySelector("dl").append(
    el("dt", { text: "hardware share" }), el("dd", { id: "cmp-hw-share", text: share("hardware_share") }),
  );
  const basis = pick(doc, "calibration_basis");
  if (basis && !basis.like) {
    const lk = num(basis.hardware_share_like_basis);
    const side = (s) => `${s.hardware}: ${s.calibration}`;
    g.querySelector("dl").append(
      el("dt", { text: `hardware share, both at ${basis.like_level} calibration` }),
      el("dd", { id: "cmp-hw-share-like", text: lk === null ? "–" : `×${fmt(lk)}`, title: `${side(basis.from)}; ${side(basis.to)}. ${basis.note}` }),
    );
  }
  g.querySelector("dl").append(
    el("dt", { text: "total over the tuned source" }), el("dd", { id: "cmp-total", text: share("total") }),
    el("dt", { text: `tuning ${req.from} alone` }), el("dd", { id: "cmp-src-tuning", text: share("source_tuning_gain") }),
  );
  cards.push(g);
  $("compare-summary").replaceChildren(...cards);
  const split = pick(doc, "gain_by_change", "changes", "split") || changeList(pick(doc, "explanation") || pick(plan, "explanation"));
  const list = Array.isArray(split) ? split : Object.entries(split || {}).map(([k, v]) => (typeof v === "object" ? { change: k, ...v } : { change: k, gain: v }));
  $("compare-nochange").hidden = list.length > 0;
  if (list.length) {
    // Bars start at ×1 (no change): a gain reaches right of it, a loss left.
    const ratios = list.map((c) => changeRatio(c) ?? 1);
    const lo = Math.min(1, ...ratios), hi = Math.max(1, ...ratios);
    const pad = Math.max(0.02, (hi - lo) * 0.08);
    charts.draw("compare-chart", {
      type: "bar",
      data: {
        labels: list.map((c) => charts.wrapLabel(changeName(c))),
        datasets: [{
          label: "gain",
          data: ratios.map((r) => [1, r]),
          backgroundColor: ratios.map((r) => (r >= 1 ? charts.PALETTE[0] : charts.PALETTE[3])),
        }],
      },
      options: {
        indexAxis: "y",
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: (c) => `×${fmt(c.raw[1])}` } },
        },
        scales: {
          x: { min: Math.max(0, lo - pad), max: hi + pad, title: { display: true, text: "throughput ratio (×1 = no change)" }, ticks: { callback: (v) => `×${fmt(v)}` } },
          y: { ticks: { autoSkip: false } },
        },
      },
    });
  } else charts.clear("compare-chart");
  charts.table($("compare-table"), [
    { label: "Change", get: (c) => changeName(c), cls: "text" },
    { label: "Gain", get: (c) => { const r = changeRatio(c); return r === null ? "–" : `×${fmt(r)}`; } },
  ], list, "Gain split by change");
  $("compare-recipes").replaceChildren(
    ...[[`Recipe tuned for ${req.from} (the direct port)`, direct.recipe || (fromPred && fromPred.recipe)], [`Plan's recipe for ${req.to}`, plan.recipe]]
      .filter(([, r]) => r)
      .map(([t, r]) => el("div", {}, el("h4", { text: t }), el("pre", { class: "json", tabindex: "0", text: prettyJSON(r) }))),
  );
  if (direct.fits === false) $("compare-recipes").prepend(el("p", { class: "bad", text: `The direct port does not fit on ${req.to}${direct.reason ? ": " + direct.reason : ""}.` }));
  $("compare-raw").textContent = prettyJSON(doc);
}

// ---------------------------------------------------------------- validation

// Pairs {label, predicted, measured} from any validation document: objects
// with predicted_X / measured_X members (or {predicted:{X}, measured:{X}}).
function validationPairs(doc) {
  const out = [];
  const walk = (x, label) => {
    if (Array.isArray(x)) {
      x.forEach((e, i) => walk(e, pick(e, "label", "name", "case", "op") ?? `${label}[${i}]`));
      return;
    }
    if (!x || typeof x !== "object") return;
    let found = false;
    for (const k of Object.keys(x)) {
      const m = /^predicted_?(.*)$/.exec(k);
      if (m && num(x[k]) !== null) {
        const mk = Object.keys(x).find((q) => q === `measured_${m[1]}` || q === `measured${m[1]}`);
        if (mk && num(x[mk]) !== null) {
          out.push({ label: String(label), what: m[1] || "value", predicted: x[k], measured: x[mk] });
          found = true;
        }
      }
    }
    if (!found && x.predicted && x.measured && typeof x.predicted === "object") {
      for (const k of Object.keys(x.predicted)) {
        if (num(x.predicted[k]) !== null && num(x.measured[k]) !== null) out.push({ label: String(label), what: k, predicted: x.predicted[k], measured: x.measured[k] });
      }
      found = true;
    }
    if (!found) for (const [k, v] of Object.entries(x)) if (typeof v === "object") walk(v, k);
  };
  walk(doc, "result");
  return out;
}

function renderValidation(pairs, title) {
  const what = pairs.length ? pairs[0].what : "";
  const same = pairs.filter((p) => p.what === what);
  const max = Math.max(1e-9, ...same.flatMap((p) => [p.predicted, p.measured]));
  charts.draw("val-chart", {
    type: "scatter",
    data: {
      datasets: [
        { label: `${title} (${what})`, data: same.map((p) => ({ x: p.measured, y: p.predicted, p })), backgroundColor: charts.PALETTE[0], pointRadius: 5 },
        { label: "predicted = measured", data: [{ x: 0, y: 0 }, { x: max * 1.05, y: max * 1.05 }], showLine: true, pointRadius: 0, borderColor: "#4a5260", borderDash: [5, 4] },
      ],
    },
    options: {
      scales: { x: { title: { display: true, text: `measured ${what}` }, beginAtZero: true }, y: { title: { display: true, text: `predicted ${what}` }, beginAtZero: true } },
      plugins: { legend: { position: "bottom" }, tooltip: { callbacks: { label: (c) => (c.raw.p ? `${c.raw.p.label}: predicted ${fmt(c.raw.p.predicted)}, measured ${fmt(c.raw.p.measured)}` : "") } } },
    },
  });
  charts.table($("val-table"), [
    { label: "Case", get: (p) => p.label, cls: "text" },
    { label: "Quantity", get: (p) => p.what, cls: "text" },
    { label: "Predicted", get: (p) => p.predicted },
    { label: "Measured", get: (p) => p.measured },
    { label: "Error", get: (p) => (p.measured ? pct((p.predicted - p.measured) / p.measured) : "–") },
  ], pairs, "Predicted against measured");
  const errs = same.filter((p) => p.measured).map((p) => Math.abs(p.predicted - p.measured) / p.measured).sort((a, b) => a - b);
  return errs.length ? errs[Math.floor(errs.length / 2)] : null;
}

// pairs from a GET /v1/validations/{id}/report document
function reportPairs(rep) {
  if (!Array.isArray(rep.cases)) return validationPairs(rep);
  return rep.cases
    .filter((c) => num(c.predicted) !== null && num(c.measured) !== null)
    .map((c) => ({ label: c.match ? Object.entries(c.match).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(" ") : `case ${c.case}`, what: rep.metric || "value", predicted: c.predicted, measured: c.measured }));
}

async function loadValidation(ev) {
  if (ev) ev.preventDefault();
  const slot = $("val-error");
  clearError(slot);
  const id = $("val-id").value.trim();
  if (!id) {
    renderError(slot, new ApiError({ code: "missing_field", message: "give the id of a validation run", field: "id" }), "Validation");
    return;
  }
  $("val-status").textContent = `Loading validation ${id}…`;
  try {
    const job = await api("GET", `/v1/validations/${encodeURIComponent(id)}`);
    const what = `Validation ${id} (${job.kind ?? "?"} on ${job.hardware ?? "?"}): ${job.state ?? job.status ?? "?"}`;
    $("val-status").textContent = `${what}${job.note ? ` — ${job.note}` : ""}`;
    const rep = await api("GET", `/v1/validations/${encodeURIComponent(id)}/report`);
    const pairs = reportPairs(rep);
    if (!pairs.length) {
      charts.clear("val-chart");
      $("val-table").replaceChildren(el("pre", { class: "json", text: prettyJSON(rep) }));
      $("val-status").textContent = `${what}: no case has both a prediction and a measurement${rep.note ? ` (${rep.note})` : ""}.`;
      return;
    }
    renderValidation(pairs, `validation ${id}`);
    const st = rep.stats || {};
    $("val-status").textContent = `${what}: ${pairs.length} cases` +
      (num(st.median_rel_error) !== null ? `, median error ${pct(st.median_rel_error)}, p90 ${pct(st.p90_rel_error)}, max ${pct(st.max_rel_error)}` : "") + ".";
  } catch (e) {
    renderError(slot, e, "Validation");
  }
}

async function listValidations() {
  const slot = $("val-error");
  clearError(slot);
  try {
    const doc = await api("GET", "/v1/validations");
    const list = doc.validations || [];
    const sel = $("val-list");
    sel.replaceChildren(...list.map((j) => el("option", { value: String(j.id), text: `#${j.id} ${j.kind} on ${j.hardware}: ${j.state}` })));
    $("val-list-wrap").hidden = !list.length;
    $("val-status").textContent = list.length ? `${list.length} validation runs.` : "No validation runs yet (submit one with cdplan validate submit).";
    if (list.length) $("val-id").value = sel.value;
  } catch (e) {
    renderError(slot, e, "Validation runs");
  }
}

async function checkReference() {
  const slot = $("val-error");
  clearError(slot);
  const m = state.measurements;
  if (!m) return;
  const t = m.template;
  $("val-reference").disabled = true;
  $("val-status").textContent = `Predicting ${m.rows.length} measured steps on ${m.hardware}…`;
  try {
    const pairs = [];
    for (const r of m.rows) {
      const workload = {
        kind: "dlrm",
        dense_features: t.dense_features,
        tables: t.table_rows.map((rows, i) => ({ name: `t${i}`, rows, dim: r.dim, pooling: r.pooling })),
        bottom_mlp: r.bottom,
        top_mlp: r.top,
        interaction: t.interaction,
        optimizers: t.optimizers,
      };
      const recipe = { ...t.recipe, batch_per_gpu: r.batch, precision: r.precision };
      const s = await api("POST", "/v1/step", { hardware: m.hardware, workload, recipe });
      const label = `b${r.batch} ${r.precision} d${r.dim} p${r.pooling}${r.top[0] === 1024 ? "" : " top1000"}`;
      pairs.push({ label, what: "step_ms", predicted: s.step_ms, measured: r.measured_step_ms });
      if (num(s.peak_memory_bytes) !== null) pairs.push({ label, what: "peak_GiB", predicted: s.peak_memory_bytes / GiB, measured: r.measured_peak_bytes / GiB });
    }
    const med = renderValidation(pairs, m.title);
    const mem = pairs.filter((p) => p.what === "peak_GiB").map((p) => Math.abs(p.predicted - p.measured) / p.measured).sort((a, b) => a - b);
    $("val-status").textContent = `${m.title}: median step-time error ${pct(med)}${mem.length ? `, median peak-memory error ${pct(mem[Math.floor(mem.length / 2)])}` : ""}. Source: ${m.source}.`;
  } catch (e) {
    $("val-status").textContent = "";
    renderError(slot, e, "Reference check");
  } finally {
    $("val-reference").disabled = false;
  }
}

// ---------------------------------------------------------------- plan history

// Pages of GET /v1/plans: `after` is the cursor of the page shown (null:
// the newest), next the cursor of the page after it.
const hist = { after: null, next: null, page: 0, rows: [] };

function when(sec) {
  if (!Number.isFinite(sec)) return "–";
  const d = new Date(sec * 1000);
  return d.toLocaleString("en-GB", { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

async function loadHistory(after = null) {
  const limit = $("hist-limit").value;
  const q = `?limit=${encodeURIComponent(limit)}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
  $("hist-status").textContent = "Loading…";
  try {
    const doc = await api("GET", `/v1/plans${q}`);
    clearError($("hist-error"));
    hist.page = after ? hist.page + 1 : 1;
    hist.after = after;
    hist.next = doc.next_after || null;
    hist.rows = Array.isArray(doc.plans) ? doc.plans : [];
    renderHistory();
    const n = hist.rows.length;
    $("hist-status").textContent = n
      ? `Page ${hist.page}: ${n} plan${n === 1 ? "" : "s"}${hist.next ? "; older ones remain" : "; the oldest shown"}`
      : hist.page === 1 ? "No plans yet: run one above." : "No older plans.";
  } catch (e) {
    renderError($("hist-error"), e, "Plan history");
    $("hist-status").textContent = "Could not load the plan hist.";
  }
  $("hist-older").disabled = !hist.next;
}

function renderHistory() {
  const open = (p) => {
    const b = el("button", { type: "button", class: "link", "aria-label": `Open plan ${p.id}`, text: "Open" });
    b.addEventListener("click", () => openStoredPlan(p.id));
    return b;
  };
  const recipe = (r) => (r && r.gpus ? `${r.gpus} GPU × ${Number(r.batch_per_gpu).toLocaleString("en-US")}, ${r.precision}` : "–");
  // stored compares, where the API lists them (an entry with kind)
  const kinds = hist.rows.some((p) => typeof p.kind === "string" && p.kind !== "plan");
  const t = charts.table($("hist-table"), [
    { label: "Made", get: (p) => when(p.created_at), cls: "text" },
    ...(kinds ? [{ label: "Kind", get: (p) => p.kind || "plan", cls: "text" }] : []),
    { label: "Accelerator", get: (p) => p.hardware, cls: "text" },
    { label: "Step time", get: (p) => fmtMs(num(p.step_ms)) },
    { label: "Throughput", get: (p) => fmtRate(num(p.samples_per_s), "samples") },
    { label: "Peak memory / GPU", get: (p) => fmtBytes(num(p.peak_memory_bytes)) },
    { label: "vs baseline", get: (p) => (num(p.gain) === null ? "–" : `×${fmt(p.gain)}`) },
    { label: "Gap", get: (p) => (num(p.gap) === null ? "–" : pct(p.gap)) },
    { label: "Recipe", get: (p) => recipe(p.recipe), cls: "text" },
    { label: "Plan", get: (p) => open(p), cls: "text" },
  ], hist.rows, "Stored plans, newest first");
  [...t.tBodies[0].rows].forEach((tr, i) => (tr.dataset.id = hist.rows[i].id));
}

async function openStoredPlan(id) {
  $("hist-status").textContent = `Opening plan ${id}…`;
  try {
    const doc = await api("GET", `/v1/plans/${encodeURIComponent(id)}`);
    clearError($("plan-error"));
    state.lastPlan = doc;
    renderPlan(doc, { hardware: doc.hardware });
    $("plan-status").textContent = `Plan ${id} from the history`;
    $("hist-status").textContent = `Plan ${id} opened in the plan panel.`;
    $("plan-panel").scrollIntoView({ block: "start" });
  } catch (e) {
    renderError($("hist-error"), e, `Plan ${id}`);
  }
}

// ---------------------------------------------------------------- sign-in

// Refused calls by "METHOD path": shown at the top until the same call
// passes the auth check (or the token changes, which reloads the page).
const refused = new Map();

function routeKey(method, path) {
  // one entry per route, not per id: /v1/plans/ab12 and /v1/plans/cd34 alike
  return `${method} ${path.split("?")[0].replace(/\/v1\/(plans|validations|hardware)\/[^/]+/, "/v1/$1/{id}")}`;
}

function renderAuthBanner() {
  const box = $("auth-banner");
  if (!refused.size) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const list = [...refused.values()];
  const noToken = !getToken();
  const title = noToken
    ? "This server needs an API token: nothing can be shown until you paste one."
    : `The server refused ${list.length === 1 ? "a call" : `${list.length} calls`} with your token.`;
  const ul = el("ul");
  for (const e of list) {
    ul.append(el("li", { "data-status": String(e.status), "data-scope": e.scope || "" },
      el("code", { text: routeKey(e.method, e.path) }), ` — HTTP ${e.status}, needs the `,
      el("strong", { class: "scope", text: e.scope || "?" }), ` scope: ${e.message}`));
  }
  const hint = list[0].hint;
  box.replaceChildren(el("p", { class: "where", text: title }), ul, el("p", { class: "err-hint", text: hint }));
  box.hidden = false;
  if (noToken) $("signin").open = true;
}

function setupSignIn() {
  const t = getToken();
  $("token").value = t;
  $("signin-summary").textContent = t ? "API token (set)" : "API token";
  onAuth(({ ok, method, path, err }) => {
    const k = routeKey(method, path);
    if (ok) {
      if (refused.delete(k)) renderAuthBanner();
    } else {
      refused.set(k, err);
      renderAuthBanner();
    }
  });
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    setToken($("token").value.trim());
    location.reload();
  });
  $("token-forget").addEventListener("click", () => {
    setToken("");
    location.reload();
  });
}

// ---------------------------------------------------------------- start

function fillHwSelects() {
  const opts = (withNone) => [
    ...(withNone ? [el("option", { value: "", text: "none" })] : []),
    ...state.hardware.map((h) => el("option", { value: h.name, text: `${h.display_name || h.name} (${h.name})` })),
  ];
  const keep = (id, def) => {
    const s = $(id);
    const prev = s.value;
    s.replaceChildren(...opts(id === "hw-b"));
    s.value = state.hw.has(prev) || (id === "hw-b" && prev === "") ? prev : def;
  };
  const first = state.hw.has("h200") ? "h200" : state.hardware[0] ? state.hardware[0].name : "";
  const other = state.hw.has("mi350x") ? "mi350x" : state.hardware[1] ? state.hardware[1].name : first;
  keep("hw-a", first);
  keep("hw-b", "");
  keep("cmp-from", first);
  keep("cmp-to", other);
  keep("vs-hw", first);
}

async function loadCatalog(catalog) {
  try {
    const doc = await api("GET", "/v1/hardware");
    state.hardware = doc.hardware || [];
    state.hw = new Map(state.hardware.map((h) => [h.name, h]));
    catalog.set(state.hardware);
    clearError($("catalog-error"));
    document.body.dataset.catalog = String(state.hardware.length);
  } catch (e) {
    renderError($("catalog-error"), e, "Hardware catalog");
  }
}

async function health() {
  const s = $("server-status");
  try {
    const h = await api("GET", "/healthz");
    s.textContent = `Server ${h.status}${h.version ? ` · cdplan ${h.version}` : ""}${h.hardware !== undefined ? ` · ${h.hardware} accelerators` : ""}`;
    s.className = "server-status ok";
  } catch (e) {
    s.textContent = `Server unhealthy: ${e.code} ${e.message}`;
    s.className = "server-status bad";
  }
}

async function loadExamples() {
  try {
    const r = await fetch("examples.json");
    if (!r.ok) throw new Error(`examples.json: HTTP ${r.status}`);
    const doc = await r.json();
    state.examples = doc.examples || [];
    state.measurements = doc.measurements || null;
  } catch (e) {
    renderError($("workload-error"), e, "Examples");
  }
  $("example").replaceChildren(...state.examples.map((e) => el("option", { value: e.id, text: e.title })));
  if (!state.examples.length) $("example").append(el("option", { value: "", text: "(no examples: paste a workload)" }));
  $("val-reference").hidden = !state.measurements;
}

async function main() {
  const catalog = new Catalog($("catalog"), $("catalog-sources"));
  setupSignIn();
  health();
  await Promise.all([loadCatalog(catalog), loadExamples()]);
  fillHwSelects();

  $("example").addEventListener("change", () => {
    if ($("example").value !== "custom") useExample($("example").value);
    else applyPastedJSON();
  });
  $("apply-json").addEventListener("click", applyPastedJSON);
  for (const id of ["knob-batch", "knob-gpus"]) $(id).addEventListener("input", onKnob);
  for (const id of ["knob-precision", "knob-emb-precision", "knob-ckpt", "knob-pad", "knob-sharding", "knob-framework"]) $(id).addEventListener("change", onKnob);
  $("knob-gpus").addEventListener("input", syncCluster);
  $("hw-a").addEventListener("change", () => {
    syncCluster();
    $("cmp-from").value = $("hw-a").value;
    onKnob();
  });
  $("hw-b").addEventListener("change", () => {
    if ($("hw-b").value) $("cmp-to").value = $("hw-b").value;
    onKnob();
  });
  $("plan-form").addEventListener("submit", runPlan);
  $("compare-form").addEventListener("submit", runCompare);
  $("hist-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    loadHistory(null);
  });
  $("hist-older").addEventListener("click", () => hist.next && loadHistory(hist.next));
  $("compare-swap").addEventListener("click", () => {
    const f = $("cmp-from").value;
    $("cmp-from").value = $("cmp-to").value;
    $("cmp-to").value = f;
  });
  $("recipe-copy").addEventListener("click", copyRecipe);
  $("recipe-download").addEventListener("click", () => downloadRecipe("recipe"));
  $("emb-download").addEventListener("click", () => downloadRecipe("embedding_plan"));
  $("val-form").addEventListener("submit", loadValidation);
  $("val-list-load").addEventListener("click", listValidations);
  $("val-list").addEventListener("change", () => {
    $("val-id").value = $("val-list").value;
    loadValidation();
  });
  $("val-reference").addEventListener("click", checkReference);
  const ctx = { state, currentRecipe, selectedHw, isDlrm, loadValidation: () => loadValidation() };
  setupAll(ctx);
  const sweep = setupSweep(ctx);
  $("example").addEventListener("change", () => sweep.defaults());
  setupValidationSubmit(ctx);
  setupPlanValidate(ctx);

  if (state.examples.length) useExample(state.examples[0].id);
  sweep.defaults();
  loadHistory(null);
  document.body.dataset.ready = "1";
}

window.addEventListener("error", (e) => {
  const s = $("server-status");
  if (s) {
    s.textContent = `Page error: ${e.message}`;
    s.className = "server-status bad";
  }
});

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
else main();
