// openapi_live.test.js: every route of the real server, called live, answers
// what docs/openapi.yaml says: each response's status is documented for its
// operation and its body validates against the documented schema (ajv,
// JSON Schema 2020-12). Every operation of the document must be called at
// least once; all but a few (whose success needs a GPU runner's own token or
// a job in a state the test cannot hold) must answer 2xx. At the end a token
// is created: a read without it is then 401, with the documented header.
"use strict";

const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { REPO, startServer, loadOpenapi } = require("./lib.js");

const BIN = process.env.CDPLAN_BIN;
// Operations whose 2xx the test cannot reach without a GPU runner: a
// documented 4xx with a valid Error body is enough for them.
const NO_2XX = new Set(["POST /v1/validations/{id}/results", "POST /v1/validations/{id}/cancel", "POST /v1/validations/{id}/calibrate"]);

const { doc, validatorFor } = loadOpenapi();
const seen = new Map(); // "METHOD /tpath" -> [statuses]
const failures = [];

async function call(base, method, tpath, params = {}, body, headers = {}) {
  let url = tpath.replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent(params[k]));
  if (params.query) url += `?${params.query}`;
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const res = await fetch(base + url, init);
  const text = await res.text();
  const ctype = res.headers.get("content-type") || "";
  const key = `${method} ${tpath}`;
  if (!seen.has(key)) seen.set(key, []);
  seen.get(key).push(res.status);
  let parsed;
  try {
    const v = validatorFor(tpath, method, res.status, ctype);
    if (v.json) parsed = JSON.parse(text);
    if (v.validate && !v.validate(v.json ? parsed : text))
      failures.push(`${key} -> ${res.status}: ${JSON.stringify(v.validate.errors.slice(0, 5))}\n  body: ${text.slice(0, 300)}`);
  } catch (e) {
    failures.push(`${key} -> ${res.status}: ${e.message}\n  body: ${text.slice(0, 300)}`);
  }
  return { status: res.status, doc: parsed, text, headers: res.headers };
}

function example(name) {
  return JSON.parse(fs.readFileSync(path.join(REPO, "data", "workloads", name), "utf8"));
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cdplan-openapi-live-"));
  const server = await startServer(BIN, tmp);
  const base = server.url;
  try {
    await call(base, "GET", "/healthz");
    await call(base, "GET", "/metrics");
    await call(base, "GET", "/openapi.yaml");
    await call(base, "GET", "/");
    const list = await call(base, "GET", "/v1/hardware");
    await call(base, "GET", "/v1/hardware", { query: "vendor=amd" });
    await call(base, "GET", "/v1/hardware", { query: "vendor=Bad%20Name" });
    const h200 = list.doc.hardware.find((h) => h.name === "h200");
    const mine = { ...h200, name: "h200-test" };
    delete mine.calibration;
    await call(base, "POST", "/v1/hardware", {}, mine);
    await call(base, "POST", "/v1/hardware", {}, mine); // 409
    await call(base, "POST", "/v1/hardware", {}, "{\"name\":"); // 400 bad_json
    await call(base, "GET", "/v1/hardware/{name}", { name: "h200-test" });
    await call(base, "GET", "/v1/hardware/{name}", { name: "mi350x" });
    await call(base, "GET", "/v1/hardware/{name}", { name: "nope" }); // 404
    await call(base, "PUT", "/v1/hardware/{name}", { name: "h200-test" }, { ...mine, tdp_watts: 650 });
    await call(base, "DELETE", "/v1/hardware/{name}", { name: "h200-test" });

    await call(base, "POST", "/v1/estimate", {}, {
      hardware: "h200",
      ops: [
        { op: "gemm", m: 4096, n: 4096, k: 4096, dtype: "bf16" },
        { op: "embedding_bag", rows: 1000000, dim: 128, batch: 4096, pooling: 20, dtype: "fp32", pass: "fwd_bwd" },
        { op: "elementwise", kind: "gelu", numel: 1 << 24, dtype: "bf16" },
        { op: "allreduce", bytes: 1 << 28, ranks: 8, scope: "node" },
      ],
    });
    await call(base, "POST", "/v1/estimate", {}, { hardware: "h200", ops: [{ op: "gemm", m: -1, n: 1, k: 1, dtype: "bf16" }] });
    await call(base, "POST", "/v1/step", {}, example("dlrm_h200_step.json"));
    await call(base, "POST", "/v1/kernels/select", {}, { hardware: "mi350x", problems: [{ m: 4096, n: 4096, k: 4096, dtype: "bf16" }] });

    const preq = example("plan_dlrm_mi350x.json");
    preq.time_limit_s = 2;
    const plan = await call(base, "POST", "/v1/plans", {}, preq);
    await call(base, "GET", "/v1/plans");
    await call(base, "GET", "/v1/plans", { query: "limit=0" });
    await call(base, "GET", "/v1/plans/{id}", { id: plan.doc && plan.doc.id });
    const py = await call(base, "GET", "/v1/plans/{id}", { id: plan.doc && plan.doc.id, query: "format=torchrec&module=model.sparse.ebc" });
    if (py.status !== 200 || !py.text.includes('MODULE_PATH = "model.sparse.ebc"')) failures.push(`format=torchrec: ${py.status} ${py.text.slice(0, 200)}`);
    await call(base, "GET", "/v1/plans/{id}", { id: plan.doc && plan.doc.id, query: "format=torchrec&module=a..b" }); // 400
    await call(base, "GET", "/v1/plans/{id}", { id: plan.doc && plan.doc.id, query: "format=yaml" }); // 400
    await call(base, "GET", "/v1/plans/{id}", { id: "0123456789abcdef" });
    // Validate the stored plan as planned: two bundle jobs, one served as a tarball.
    const pv = await call(base, "POST", "/v1/plans/{id}/validations", { id: plan.doc && plan.doc.id }, { backend: "bundle" });
    const pjobs = (pv.doc && pv.doc.jobs) || [];
    const pjob = pjobs.length ? (pjobs[0].job && pjobs[0].job.id) || pjobs[0].id : undefined;
    if (pv.status !== 201 || !pjob) failures.push(`POST /v1/plans/{id}/validations gave ${pv.status} and no job: ${pv.text.slice(0, 300)}`);
    await call(base, "GET", "/v1/validations/{id}/bundle", { id: pjob });
    const creq = example("plan_compare_h100_to_h200.json");
    creq.time_limit_s = 2;
    await call(base, "POST", "/v1/compare", {}, creq);

    const sub = await call(base, "POST", "/v1/validations", {}, {
      kind: "cpu_selftest",
      hardware: "h200",
      params: { n: 1000 },
      prediction: { metric: "result.sum", cases: [{ value: 500000 }] },
    });
    const id = sub.doc && sub.doc.id;
    let job = sub.doc || {};
    for (let i = 0; i < 150 && !["done", "failed", "cancelled"].includes(job.state); i++) {
      await new Promise((r) => setTimeout(r, 200));
      job = (await call(base, "GET", "/v1/validations/{id}", { id })).doc || {};
    }
    await call(base, "GET", "/v1/validations");
    await call(base, "GET", "/v1/validations/{id}/report", { id });
    await call(base, "POST", "/v1/validations/{id}/cancel", { id });
    await call(base, "POST", "/v1/validations/{id}/calibrate", { id });
    await call(base, "POST", "/v1/validations/{id}/results", { id }, { rows: [] }, { "X-Job-Token": "not-the-token" });

    // Reads are not open once a token exists (after the server's 1 s cache).
    const tok = JSON.parse(execFileSync(BIN, ["token", "create", "--scope", "read", "--db", server.db]).toString());
    await new Promise((r) => setTimeout(r, 1500));
    const denied = await call(base, "GET", "/v1/hardware");
    if (denied.status !== 401) failures.push(`GET /v1/hardware without a token after token create: ${denied.status}, not 401`);
    if (!denied.headers.get("www-authenticate")) failures.push("401 without WWW-Authenticate");
    const ok = await call(base, "GET", "/v1/hardware", {}, undefined, { Authorization: `Bearer ${tok.token}` });
    if (ok.status !== 200) failures.push(`GET /v1/hardware with a read token: ${ok.status}`);
    await call(base, "GET", "/healthz"); // open routes stay open
  } finally {
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }

  let ops = 0;
  for (const [tpath, item] of Object.entries(doc.paths)) {
    for (const m of ["get", "put", "post", "delete", "patch"]) {
      if (!item[m]) continue;
      ops++;
      const key = `${m.toUpperCase()} ${tpath}`;
      const st = seen.get(key) || [];
      if (!st.length) failures.push(`${key}: never called`);
      else if (!NO_2XX.has(key) && !st.some((s) => s >= 200 && s < 300)) failures.push(`${key}: no 2xx answer (${st})`);
    }
  }
  const calls = [...seen.values()].reduce((a, s) => a + s.length, 0);
  if (failures.length) {
    console.error(failures.join("\n"));
    console.log(`${ops} operations, ${calls} calls, ${failures.length} failed`);
    process.exit(1);
  }
  console.log(`${ops} operations, ${calls} calls: every response validates`);
}

main().catch((e) => {
  console.error(e.stack || e.message);
  process.exit(1);
});
