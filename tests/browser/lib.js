// lib.js: shared harness of the browser end-to-end tests. Starts the real
// `cdplan serve` on 127.0.0.1 port 0 with a temporary database, drives
// Debian's Chromium headless through playwright-core, keeps screenshots
// under the artifacts directory, and prints "N passed, N failed".
//
// Environment (set by tests/browser/CMakeLists.txt):
//   CDPLAN_BIN                 the cdplan binary (required)
//   CDPLAN_WEB                 the web root (default: <repo>/web)
//   CDPLAN_BROWSER_ARTIFACTS   where screenshots go (default: <repo>/build/browser-artifacts)
//   CDPLAN_CHROMIUM            the browser (default: /usr/bin/chromium)
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { startServer: serveCdplan } = require("../ecosystem/lib.js");

const REPO = path.resolve(__dirname, "..", "..");

function fail(msg) {
  console.error(`browser test setup: ${msg}`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}

let chromium;
try {
  ({ chromium } = require("playwright-core"));
} catch (e) {
  fail(`cannot load playwright-core (${e.message}); run \`npm ci\` in ${REPO} (make deps does)`);
}

const BIN = process.env.CDPLAN_BIN;
const WEB = process.env.CDPLAN_WEB || path.join(REPO, "web");
const ART = process.env.CDPLAN_BROWSER_ARTIFACTS || path.join(REPO, "build", "browser-artifacts");
const CHROMIUM = process.env.CDPLAN_CHROMIUM || "/usr/bin/chromium";

// Chromium flags for this machine: no sandbox as root, no network beyond
// loopback, no GPU (see NOTES-ecosystem.md).
const CHROME_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  "--disable-dev-shm-usage",
];

// The routes the server documents (docs/openapi.yaml is held to the route
// table by the http tests): the page must use a documented route, and show
// the API error for one that is not there.
function documentedRoutes() {
  const text = fs.readFileSync(path.join(REPO, "docs", "openapi.yaml"), "utf8");
  const paths = new Set();
  for (const m of text.matchAll(/^ {2}(\/[^\s:]*):\s*$/gm)) paths.add(m[1]);
  return paths;
}

// The real `cdplan serve` on 127.0.0.1 port 0: the ecosystem tests' starter.
async function startServer(dir) {
  if (!BIN || !fs.existsSync(BIN)) fail(`CDPLAN_BIN (${BIN}) is not the cdplan binary`);
  return serveCdplan(BIN, dir, [], WEB);
}

// Small assertion helpers (messages name what was expected).
function assert(cond, msg) {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}

// Run the named steps of one test file against a fresh server and browser.
// steps: [[name, async (ctx) => {...}], ...]; ctx = {page, context, base,
// shot(name), routes, server, artifacts}. A failed step stops the file.
async function run(file, steps) {
  const name = path.basename(file).replace(/\.test\.js$/, "");
  if (!fs.existsSync(CHROMIUM)) fail(`no browser at ${CHROMIUM}; install Debian's chromium (make deps does)`);
  fs.mkdirSync(ART, { recursive: true });
  for (const f of fs.readdirSync(ART)) if (f.startsWith(`${name}-`) && f.endsWith(".png")) fs.rmSync(path.join(ART, f));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `cdplan-browser-${name}-`));
  let passed = 0;
  let failed = 0;
  let server;
  let browser;
  const pageErrors = [];
  try {
    server = await startServer(tmp);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // playwright gives the browser a fresh temporary profile of its own
      args: CHROME_ARGS,
      timeout: 60000,
    });
    const context = await browser.newContext({
      viewport: { width: 1440, height: 900 },
      acceptDownloads: true,
      baseURL: server.url,
    });
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error" && !/Failed to load resource/.test(m.text())) pageErrors.push(`console: ${m.text()}`);
    });
    const ctx = {
      page,
      context,
      base: server.url,
      server,
      routes: documentedRoutes(),
      artifacts: ART,
      tmp,
      async shot(label, opts = {}) {
        const p = path.join(ART, `${name}-${label}.png`);
        // from the top, so that sticky parts sit where a reader sees them
        if (opts.fullPage !== false) await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: p, fullPage: true, ...opts });
        return p;
      },
    };
    for (const [stepName, fn] of steps) {
      const t0 = Date.now();
      try {
        await fn(ctx);
        if (pageErrors.length) throw new Error(`errors in the page:\n  ${pageErrors.join("\n  ")}`);
        passed++;
        console.log(`ok   ${name}: ${stepName} (${Date.now() - t0} ms)`);
      } catch (e) {
        failed++;
        console.log(`FAIL ${name}: ${stepName}\n  ${String(e && e.stack ? e.stack : e).split("\n").join("\n  ")}`);
        try {
          const p = await ctx.shot(`FAILED-${stepName.replace(/[^a-z0-9]+/gi, "-")}`);
          console.log(`  screenshot: ${p}`);
        } catch {}
        break;
      }
    }
    if (failed === 0 && passed < steps.length) failed = steps.length - passed;
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: setup\n  ${e && e.stack ? e.stack : e}`);
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (server) {
      await server.stop();
      if (failed) console.log(`server log:\n  ${server.log.slice(-30).join("\n  ")}`);
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const skipped = steps.length - passed - failed;
  console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
  process.exit(failed ? 1 : 0);
}

// Wait until the dashboard has loaded the catalog and made its first
// prediction.
async function openDashboard(page) {
  await page.goto("/");
  await page.waitForSelector("body[data-ready='1']");
  await page.waitForFunction(() => Number(document.body.dataset.predictions || 0) > 0);
}

// Wait for the next prediction after an action.
async function nextPrediction(page, action) {
  const before = await page.evaluate(() => Number(document.body.dataset.predictions || 0));
  await action();
  await page.waitForFunction((b) => Number(document.body.dataset.predictions || 0) > b && !document.body.dataset.predicting, before);
}

// GET/POST the API directly (to cross-check the page).
async function apiCall(base, method, p, body) {
  const r = await fetch(base + p, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, doc: await r.json().catch(() => null) };
}

module.exports = { run, assert, openDashboard, nextPrediction, apiCall, REPO };
