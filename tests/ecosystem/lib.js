// lib.js: shared parts of the ecosystem tests (tests/ecosystem): the real
// `cdplan serve` on 127.0.0.1 port 0 with a temporary database, and
// docs/openapi.yaml loaded as JSON Schema 2020-12 (OpenAPI 3.1's dialect)
// into ajv, so that a live response is checked against the schema the
// document gives for its route, method, status and content type.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const readline = require("node:readline");

const REPO = path.resolve(__dirname, "..", "..");

function need(mod) {
  try {
    return require(mod);
  } catch (e) {
    console.error(`cannot load ${mod} (${e.message}); run \`npm ci\` in ${REPO} (make deps does)`);
    process.exit(1);
  }
}

// Also the browser tests' server (tests/browser/lib.js), with their web dir.
async function startServer(bin, dir, extra = [], web = path.join(REPO, "web")) {
  if (!bin || !fs.existsSync(bin)) throw new Error(`CDPLAN_BIN (${bin}) is not the cdplan binary`);
  const db = path.join(dir, "cdplan.db");
  const proc = spawn(bin, ["serve", "--listen", "127.0.0.1:0", "--db", db, "--web", web, ...extra], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = [];
  readline.createInterface({ input: proc.stderr }).on("line", (l) => log.push(l));
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`server did not start in 20 s:\n${log.join("\n")}`)), 20000);
    readline.createInterface({ input: proc.stdout }).on("line", (l) => {
      try {
        const doc = JSON.parse(l);
        if (doc.listening) {
          clearTimeout(t);
          resolve(doc.listening);
        }
      } catch {
        log.push(l);
      }
    });
    proc.on("exit", (code) => {
      clearTimeout(t);
      reject(new Error(`server exited (${code}) before listening:\n${log.join("\n")}`));
    });
  });
  return {
    url,
    db,
    log,
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill("SIGTERM");
      await new Promise((r) => {
        const t = setTimeout(() => {
          proc.kill("SIGKILL");
          r();
        }, 5000);
        proc.on("exit", () => {
          clearTimeout(t);
          r();
        });
      });
    },
  };
}

// The OpenAPI document with a validator per (operation, status, type).
function loadOpenapi() {
  const YAML = need("yaml");
  const Ajv2020 = need("ajv/dist/2020").default;
  const addFormats = need("ajv-formats").default;
  const doc = YAML.parse(fs.readFileSync(path.join(REPO, "docs", "openapi.yaml"), "utf8"));
  const local = (o) => JSON.parse(JSON.stringify(o).replaceAll('"#/components/schemas/', '"cdplan#/$defs/'));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "cdplan", $defs: local(doc.components.schemas) });
  const deref = (o) => {
    if (o && o.$ref && o.$ref.startsWith("#/components/")) {
      const [, , kind, name] = o.$ref.split("/");
      return doc.components[kind][name];
    }
    return o;
  };
  const cache = new Map();
  // The validator for a live response, or an Error naming what the
  // document lacks (an undocumented status or content type).
  function validatorFor(tpath, method, status, ctype) {
    const key = `${method} ${tpath} ${status} ${ctype}`;
    if (cache.has(key)) return cache.get(key);
    const op = doc.paths[tpath] && doc.paths[tpath][method.toLowerCase()];
    if (!op) throw new Error(`the document has no ${method} ${tpath}`);
    const resp = deref(op.responses[String(status)] || op.responses[`${String(status)[0]}XX`] || op.responses.default);
    if (!resp) throw new Error(`${method} ${tpath}: status ${status} is not documented`);
    const media = Object.keys(resp.content || {}).find((m) => ctype.startsWith(m));
    if (resp.content && !media) throw new Error(`${method} ${tpath} ${status}: content type ${ctype} is not documented`);
    const schema = media ? resp.content[media].schema : undefined;
    const v = { op, resp, validate: schema ? ajv.compile(local(schema)) : null, json: media === "application/json" };
    cache.set(key, v);
    return v;
  }
  return { doc, validatorFor, ajv };
}

module.exports = { REPO, need, startServer, loadOpenapi };
