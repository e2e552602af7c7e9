// metrics_promtool.test.js: /metrics of the real server, after a solved plan,
// an infeasible one, a validation run and a burst past the rate limit,
// passes `promtool check metrics` (Debian package prometheus; missing
// promtool is a failure, not a skip) and carries the series operators
// alert on: build info, process figures, plans by outcome, validations by
// state, 429s, and plan latency buckets up to 600 s.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { REPO, startServer } = require("./lib.js");

const PROMTOOL = process.env.PROMTOOL || "/usr/bin/promtool";
const failures = [];

async function post(base, p, body) {
  const r = await fetch(base + p, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return { status: r.status, doc: await r.json() };
}

async function main() {
  if (!fs.existsSync(PROMTOOL)) {
    console.error(`no promtool at ${PROMTOOL}: install Debian's prometheus (make deps does)`);
    process.exit(1);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cdplan-metrics-"));
  const server = await startServer(process.env.CDPLAN_BIN, tmp, ["--rate", "2", "--burst", "40"]);
  const base = server.url;
  let text = "";
  try {
    const req = JSON.parse(fs.readFileSync(path.join(REPO, "data", "workloads", "plan_dlrm_mi350x.json"), "utf8"));
    req.time_limit_s = 2;
    const ok = await post(base, "/v1/plans", req);
    if (ok.status !== 201) failures.push(`plan: ${ok.status}`);
    const bad = JSON.parse(JSON.stringify(req));
    for (const t of bad.workload.tables) t.dim = 64;
    bad.workload.bottom_mlp[bad.workload.bottom_mlp.length - 1] = 64;
    bad.knobs.sharding = ["column_wise"];
    const inf = await post(base, "/v1/plans", bad);
    if (inf.status !== 422) failures.push(`infeasible plan: ${inf.status} ${JSON.stringify(inf.doc)}`);
    const sub = await post(base, "/v1/validations", { kind: "cpu_selftest", hardware: "h200", params: { n: 1000 } });
    for (let i = 0; i < 100 && sub.status === 201; i++) {
      const j = await (await fetch(`${base}/v1/validations/${sub.doc.id}`)).json();
      if (["done", "failed"].includes(j.state)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const burst = await Promise.all(Array.from({ length: 60 }, () => fetch(`${base}/healthz`).then((r) => r.status)));
    if (!burst.includes(429)) failures.push(`no 429 in a burst of 60 at --rate 2: ${burst}`);
    await new Promise((r) => setTimeout(r, 1200)); // refill for the scrape
    const m = await fetch(`${base}/metrics`);
    text = await m.text();
    if (m.status !== 200) failures.push(`/metrics: ${m.status} ${text.slice(0, 200)}`);
  } finally {
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }

  const pt = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8", timeout: 60000 });
  if (pt.status !== 0 || pt.stdout.trim() || pt.stderr.trim())
    failures.push(`promtool check metrics: exit ${pt.status}\n${pt.stdout}${pt.stderr}`);
  const value = (re) => {
    const m = text.match(re);
    return m ? Number(m[1]) : NaN;
  };
  const want = [
    [/^cdplan_build_info\{version="[^"]+"\} (1)$/m, (v) => v === 1],
    [/^process_resident_memory_bytes (\d+)$/m, (v) => v > 1e6],
    [/^process_cpu_seconds_total ([\d.]+)$/m, (v) => v >= 0],
    [/^process_open_fds (\d+)$/m, (v) => v >= 3],
    [/^process_max_fds (\d+)$/m, (v) => v >= 64],
    [/^process_start_time_seconds ([\d.]+)$/m, (v) => Math.abs(v - Date.now() / 1000) < 600],
    [/^cdplan_plans_total\{kind="plan",outcome="ok"\} (\d+)$/m, (v) => v === 1],
    [/^cdplan_plans_total\{kind="plan",outcome="infeasible"\} (\d+)$/m, (v) => v === 1],
    [/^cdplan_validations\{state="done"\} (\d+)$/m, (v) => v === 1],
    [/^cdplan_validations\{state="queued"\} (\d+)$/m, (v) => v === 0],
    [/^cdplan_http_rate_limited_total (\d+)$/m, (v) => v > 0],
    [/^cdplan_http_request_duration_seconds_bucket\{route="\/v1\/plans",le="600"\} (\d+)$/m, (v) => v === 2],
  ];
  for (const [re, ok] of want) {
    const v = value(re);
    if (!ok(v)) failures.push(`${re}: ${v}`);
  }
  if (failures.length) {
    console.error(failures.join("\n"));
    process.exit(1);
  }
  console.log(`promtool check metrics: clean; ${want.length} series as expected`);
}

main().catch((e) => {
  console.error(e.stack || e.message);
  process.exit(1);
});
