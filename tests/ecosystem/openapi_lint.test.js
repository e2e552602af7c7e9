// openapi_lint.test.js: docs/openapi.yaml passes Redocly CLI's lint (the
// version pinned in package.json; rules in redocly.yaml: the recommended set
// plus declared tags) with no error and no warning.
"use strict";

const { spawnSync } = require("node:child_process");
const path = require("node:path");
const { REPO } = require("./lib.js");

const cli = path.join(REPO, "node_modules", "@redocly", "cli", "bin", "cli.js");
const r = spawnSync(process.execPath, [cli, "lint", "--format=json", "--config", path.join(REPO, "redocly.yaml"), path.join(REPO, "docs", "openapi.yaml")], {
  cwd: REPO,
  env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", CI: "true" },
  encoding: "utf8",
  timeout: 120000,
});
let out;
try {
  out = JSON.parse(r.stdout);
} catch {
  console.error(`redocly lint gave no JSON (status ${r.status}; run npm ci):\n${r.stdout}\n${r.stderr}`);
  process.exit(1);
}
for (const p of out.problems) console.error(`${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0].pointer}`);
console.log(`redocly ${out.version}: ${out.totals.errors} errors, ${out.totals.warnings} warnings`);
process.exit(out.totals.errors || out.totals.warnings || r.status ? 1 : 0);
