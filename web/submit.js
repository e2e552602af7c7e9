// submit.js: validation runs started from the dashboard. "Submit a
// validation run" sends POST /v1/validations (the dispatch scope) and
// follows the job; "Validate this plan" sends POST /v1/plans/{id}/validations
// and lists the jobs it created. Every refusal is shown at the top of the
// panel concerned with the API's code, message, field and what to do.

import { api, renderError, clearError, ApiError } from "./api.js";
import { fmtMs, fmtBytes } from "./charts.js";
import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const FINAL = new Set(["done", "failed", "cancelled"]);

// Example parameters per kind (validate/gpu/README.md): a starting point.
const PARAMS = {
  cpu_selftest: { n: 1000 },
  gemm_sweep: { shapes: [{ m: 4096, n: 4096, k: 4096 }], dtypes: ["bf16"] },
  kernel_sweep: { shapes: [{ m: 4096, n: 4096, k: 4096 }], dtypes: ["bf16"] },
  memory_ops: {},
  step: {},
};

function parseJSON(id, field, optional) {
  const text = $(id).value.trim();
  if (!text && optional) return undefined;
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new ApiError({ code: "bad_json", message: `${field} is not valid JSON: ${e.message}`, field });
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new ApiError({ code: "bad_field", message: `${field} must be a JSON object`, field });
  return v;
}

// Show the error at the top of its panel and bring it into view.
function showTop(slot, e, label) {
  renderError(slot, e, label);
  slot.scrollIntoView({ block: "nearest" });
}

export function setupValidationSubmit(ctx) {
  async function follow(job) {
    const id = job.id;
    let j = job;
    for (let i = 0; i < 300 && !FINAL.has(j.state); i++) {
      await sleep(i < 20 ? 250 : 1000);
      j = await api("GET", `/v1/validations/${encodeURIComponent(id)}`);
      $("vs-status").textContent = `Validation #${id} (${j.kind} on ${j.hardware}, ${j.backend}): ${j.state}`;
    }
    return j;
  }

  async function submit(ev) {
    ev.preventDefault();
    const slot = $("val-error");
    clearError(slot);
    let body;
    try {
      body = {
        kind: $("vs-kind").value,
        hardware: $("vs-hw").value,
        backend: $("vs-backend").value,
        params: parseJSON("vs-params", "params", false),
      };
      const t = Number($("vs-timeout").value);
      if (!Number.isInteger(t) || t < 1) throw new ApiError({ code: "bad_field", message: `timeout_s must be a positive integer (got "${$("vs-timeout").value}")`, field: "timeout_s" });
      body.timeout_s = t;
      const pred = parseJSON("vs-pred", "prediction", true);
      if (pred) body.prediction = pred;
    } catch (e) {
      showTop(slot, e, "Validation request");
      return;
    }
    $("vs-submit").disabled = true;
    $("vs-status").textContent = `Submitting a ${body.kind} run on ${body.hardware}…`;
    try {
      const job = await api("POST", "/v1/validations", body);
      document.body.dataset.submitted = String(job.id);
      $("val-id").value = String(job.id);
      $("vs-status").textContent = `Validation #${job.id} submitted (${job.backend}): ${job.state}`;
      const j = body.backend === "local" ? await follow(job) : job;
      $("vs-status").textContent = `Validation #${j.id} (${j.kind} on ${j.hardware}, ${j.backend}): ${j.state}${j.note ? ` — ${j.note}` : ""}`;
      if (j.state === "done") await ctx.loadValidation();
    } catch (e) {
      $("vs-status").textContent = "Not submitted (see the error at the top of this panel).";
      showTop(slot, e, "Submit validation");
    } finally {
      $("vs-submit").disabled = false;
    }
  }

  $("vs-kind").addEventListener("change", () => {
    $("vs-params").value = JSON.stringify(PARAMS[$("vs-kind").value] || {});
    $("vs-pred").value = "";
  });
  $("val-submit-form").addEventListener("submit", submit);
}

// The jobs in the answer of POST /v1/plans/{id}/validations, whatever its
// wrapping: {"validations": [...]}, {"jobs": [...]}, a bare array or one job.
export function jobsOf(doc) {
  if (Array.isArray(doc)) return doc;
  if (!doc || typeof doc !== "object") return [];
  for (const k of ["validations", "jobs"]) if (Array.isArray(doc[k])) return doc[k];
  return doc.id !== undefined ? [doc] : [];
}

// The plan's stored validation (GET /v1/plans/{id} "validation"): each side's
// job state, predicted and measured step time and memory, their errors, and
// the gain predicted against measured. Cells carry the API's raw numbers in
// data-v so what is drawn can be checked against the answer.
export function renderPlanValidation(v) {
  const box = $("plan-val-measured");
  if (!box) return;
  if (!v || typeof v !== "object") {
    box.replaceChildren();
    return;
  }
  const n = (x) => (typeof x === "number" && Number.isFinite(x) ? x : null);
  const pct = (x) => (n(x) === null ? "–" : `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)} %`);
  const td = (text, raw, cls) => {
    const c = el("td", { text, "data-v": raw === null || raw === undefined ? "" : String(raw) });
    if (cls) c.className = cls;
    return c;
  };
  const head = el("tr", {}, ...["Side", "Job", "Ran on", "Predicted step", "Measured step", "Error", "Predicted memory", "Measured memory"].map((h) => el("th", { text: h, scope: "col" })));
  const body = el("tbody");
  for (const side of ["baseline", "planned"]) {
    const s = v[side];
    if (!s) continue;
    const p = s.predicted || {}, m = s.measured || {};
    const ran = s.ran_on_other_gpu ? `${s.ran_on} (recipe for ${s.recipe_for})` : s.ran_on || "–";
    const err = s.rel_error || {};
    const tr = el("tr", { "data-side": side, "data-state": s.state || "" },
      el("th", { text: side, scope: "row" }),
      td(`#${s.job} ${s.state || "?"}${s.reason ? `: ${s.reason}` : ""}`, s.job),
      td(ran, s.ran_on),
      td(fmtMs(n(p.step_ms)), n(p.step_ms), "pred-step"),
      td(fmtMs(n(m.step_ms)), n(m.step_ms), "meas-step"),
      td(pct(n(err.step_ms)), n(err.step_ms)),
      td(fmtBytes(n(p.peak_memory_bytes)), n(p.peak_memory_bytes)),
      td(fmtBytes(n(m.peak_memory_bytes)), n(m.peak_memory_bytes)));
    body.append(tr);
  }
  const g = v.gain || {};
  const fx = (x) => (n(x) === null ? "–" : `×${x.toFixed(3)}`);
  body.append(el("tr", { "data-side": "gain" },
    el("th", { text: "gain", scope: "row" }), td("", null), td("", null),
    td(fx(n(g.predicted)), n(g.predicted), "pred-gain"), td(fx(n(g.measured)), n(g.measured), "meas-gain"),
    td(pct(n(g.rel_error)), n(g.rel_error)), td("", null), td("", null)));
  const t = el("table", { id: "plan-val-table" }, el("caption", { text: "Predicted against measured (this plan's validation runs)" }), el("thead", {}, head), body);
  box.replaceChildren(t);
}

// Re-read the plan until both sides' jobs are final (or the wait ends),
// drawing its validation each time.
async function followPlan(id, status) {
  for (let i = 0; i < 60; i++) {
    const doc = await api("GET", `/v1/plans/${encodeURIComponent(id)}`);
    const v = doc.validation;
    renderPlanValidation(v);
    const sides = v ? ["baseline", "planned"].filter((k) => v[k]) : [];
    if (sides.length && sides.every((k) => FINAL.has(v[k].state))) {
      status.textContent = `Plan ${id}: validation runs finished.`;
      return;
    }
    await sleep(1500);
  }
  status.textContent = `Plan ${id}: validation runs still going; open the plan again later to see them.`;
}

export function setupPlanValidate(ctx) {
  async function validatePlan() {
    const slot = $("plan-val-error");
    clearError(slot);
    $("plan-val-jobs").replaceChildren();
    const plan = ctx.state.lastPlan;
    const id = plan && plan.id;
    if (!id) {
      showTop(slot, new ApiError({ code: "missing_field", message: "this plan has no id: run or open a stored plan first", field: "id" }), "Validate this plan");
      return;
    }
    const path = `/v1/plans/${encodeURIComponent(id)}/validations`;
    $("plan-validate").disabled = true;
    $("plan-val-status").textContent = `Asking the server to validate plan ${id}…`;
    try {
      const doc = await api("POST", path, { backend: $("plan-val-backend").value });
      const jobs = jobsOf(doc);
      $("plan-val-status").textContent = `Plan ${id}: ${jobs.length} validation job${jobs.length === 1 ? "" : "s"} created.`;
      const ul = el("ul", { class: "job-list", id: "plan-val-list" });
      for (const j of jobs) {
        const b = el("button", { type: "button", class: "link", text: "Load", "aria-label": `Load validation ${j.id}` });
        b.addEventListener("click", () => {
          $("val-id").value = String(j.id);
          ctx.loadValidation();
          $("validation-panel").scrollIntoView({ block: "start" });
        });
        ul.append(el("li", { "data-id": String(j.id) }, `#${j.id} ${j.kind ?? "?"} on ${j.hardware ?? "?"} (${j.backend ?? "?"}): ${j.state ?? "?"}${j.role ? `, ${j.role}` : ""} `, b));
      }
      $("plan-val-jobs").replaceChildren(ul);
      await followPlan(id, $("plan-val-status"));
    } catch (e) {
      $("plan-val-status").textContent = "Not validated (see the error below).";
      showTop(slot, e, "Validate this plan");
    } finally {
      $("plan-validate").disabled = false;
    }
  }
  $("plan-validate").addEventListener("click", validatePlan);
}
