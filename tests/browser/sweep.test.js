// sweep.test.js: sweeps of the batch per GPU and of the GPU count. The
// points are powers of two thinned to the cap; each drawn point of the step
// time and peak memory lines is POST /v1/step's answer for that recipe;
// progress shows while it runs, Stop ends it, and a cap beyond 16 is refused
// before any call.
"use strict";
const { run, assert, openDashboard, nextPrediction, apiCall } = require("./lib.js");

const GiB = 2 ** 30;
const close = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));

async function sweep(page, { vary, from, to, max }) {
  await page.getByLabel("Vary").selectOption(vary);
  await page.getByLabel("From", { exact: true }).fill(String(from));
  await page.getByLabel("To", { exact: true }).fill(String(to));
  await page.getByLabel("Points at most").fill(String(max));
  const before = await page.evaluate(() => Number(document.body.dataset.sweepDone || 0));
  // record what the status and the progress bar say while it runs
  await page.evaluate(() => {
    window.__seen = [];
    const st = document.getElementById("sweep-status"), pr = document.getElementById("sweep-progress");
    window.__obs && window.__obs.disconnect();
    window.__obs = new MutationObserver(() => window.__seen.push({ text: st.textContent, visible: !pr.hidden, value: pr.value, max: pr.max }));
    window.__obs.observe(st, { childList: true, characterData: true, subtree: true });
  });
  await page.getByRole("button", { name: "Run sweep" }).click();
  await page.waitForFunction((b) => Number(document.body.dataset.sweepDone || 0) > b, before, { timeout: 90000 });
  return page.evaluate(() => window.__seen);
}

// Lines as drawn: {labels, time: {hw: [ms]}, peak: {hw: [GiB]}}.
const drawn = (page) => page.evaluate(() => {
  const t = window.Chart.getChart("sweep-time-chart"), m = window.Chart.getChart("sweep-mem-chart");
  const by = (c, suffix) => Object.fromEntries(c.data.datasets.filter((d) => d.label.endsWith(suffix)).map((d) => [d.label.replace(suffix, ""), d.data]));
  return { labels: t.data.labels, time: by(t, ""), peak: by(m, " peak"), usable: by(m, " usable HBM") };
});

async function check(page, base, hws, vary, xs) {
  const d = await drawn(page);
  assert(JSON.stringify(d.labels) === JSON.stringify(xs.map((x) => x.toLocaleString("en-US"))), `points ${d.labels} = ${xs}`);
  const recipe = JSON.parse(await page.textContent("#recipe-preview"));
  const workload = JSON.parse(await page.inputValue("#workload-json"));
  for (const hw of hws) {
    for (let i = 0; i < xs.length; i++) {
      const r = { ...recipe, [vary === "gpus" ? "gpus" : "batch_per_gpu"]: xs[i] };
      delete r.global_batch;
      const a = await apiCall(base, "POST", "/v1/step", { hardware: hw, workload, recipe: r });
      if (a.status !== 200) {
        assert(d.time[hw][i] === null, `${hw} at ${xs[i]}: refused (${a.doc.error.message}), not drawn`);
        continue;
      }
      assert(close(d.time[hw][i], a.doc.step_ms), `${hw} at ${xs[i]}: step ${d.time[hw][i]} = API ${a.doc.step_ms}`);
      assert(close(d.peak[hw][i], a.doc.peak_memory_bytes / GiB), `${hw} at ${xs[i]}: peak ${d.peak[hw][i]} GiB = API ${a.doc.peak_memory_bytes / GiB}`);
      assert(close(d.usable[hw][i], a.doc.hbm_usable_bytes / GiB), `${hw} at ${xs[i]}: usable HBM`);
      const cells = await page.locator(`#sweep-table tbody tr[data-hw="${hw}"][data-x="${xs[i]}"] td`).allTextContents();
      assert(cells[5] === (a.doc.fits ? "yes" : "no"), `${hw} at ${xs[i]}: fits ${cells[5]}`);
    }
  }
}

run(__filename, [
  ["batch sweep: powers of two thinned to the cap, each point the API's", async ({ page, base, shot }) => {
    await openDashboard(page);
    const seen = await sweep(page, { vary: "batch", from: 1024, to: 65536, max: 4 });
    // 1024 .. 65536 holds seven powers of two; four are kept, ends included
    await check(page, base, ["h200"], "batch", [1024, 4096, 16384, 65536]);
    assert(seen.some((s) => /^Point 2 of 4/.test(s.text) && s.visible && s.max === 4), `progress shown while running: ${JSON.stringify(seen.slice(0, 3))}`);
    assert(/^Swept 4 of 4 points/.test(await page.textContent("#sweep-status")), "done status");
    assert(await page.locator("#sweep-progress").isHidden(), "progress hidden when done");
    await shot("batch");
  }],

  ["GPU sweep on two accelerators", async ({ page, base, shot }) => {
    await page.getByLabel("Accelerator B (side by side)").selectOption("mi350x");
    await page.waitForFunction(() => !document.body.dataset.predicting);
    await sweep(page, { vary: "gpus", from: 1, to: 64, max: 16 });
    await check(page, base, ["h200", "mi350x"], "gpus", [1, 2, 4, 8, 16, 32, 64]);
    assert(/^Swept 14 of 14 points \(7 values × 2 accelerators\)/.test(await page.textContent("#sweep-status")), await page.textContent("#sweep-status"));
    await shot("gpus");
    await nextPrediction(page, () => page.getByLabel("Accelerator B (side by side)").selectOption(""));
  }],

  ["more than 16 points is refused before any call", async ({ page }) => {
    const calls = [];
    const onReq = (r) => r.url().endsWith("/v1/step") && calls.push(r.url());
    await page.getByLabel("Points at most").fill("40");
    page.on("request", onReq);
    await page.getByRole("button", { name: "Run sweep" }).click();
    const err = page.locator("#sweep-error .error");
    await err.waitFor();
    assert((await err.getAttribute("data-field")) === "points" && /2 to 16/.test(await err.innerText()), `the cap is named: ${await err.innerText()}`);
    await page.waitForTimeout(300);
    page.off("request", onReq);
    assert(calls.length === 0, `no step call made (${calls.length})`);
  }],

  ["Stop ends a running sweep", async ({ page }) => {
    await page.getByLabel("Accelerator B (side by side)").selectOption("b200");
    await page.getByLabel("Vary").selectOption("batch");
    await page.getByLabel("From", { exact: true }).fill("256");
    await page.getByLabel("To", { exact: true }).fill("1048576");
    await page.getByLabel("Points at most").fill("16");
    const before = await page.evaluate(() => Number(document.body.dataset.sweepDone || 0));
    // Each step call still reaches the real server, 250 ms late: on a loaded 2-core box the
    // remaining points used to finish before the click on Stop landed (a flaky pass/fail).
    // A call still waiting when the test unroutes is handled by Playwright already: its late
    // continue() throws "Route is already handled!", which must not escape as an unhandled
    // rejection (that crashed the test under load); any other error still fails it.
    const slow = async (route) => {
      await new Promise((r) => setTimeout(r, 250));
      await route.continue().catch((e) => {
        if (!/already handled/.test(String(e && e.message))) throw e;
      });
    };
    await page.route("**/v1/step", slow);
    await page.getByRole("button", { name: "Run sweep" }).click();
    await page.waitForFunction(() => /^Point [2-9] of 26/.test(document.getElementById("sweep-status").textContent));
    await page.getByRole("button", { name: "Stop" }).click();
    await page.waitForFunction((b) => Number(document.body.dataset.sweepDone || 0) > b, before);
    await page.unroute("**/v1/step", slow);
    const st = await page.textContent("#sweep-status");
    const m = /^Stopped after (\d+) of 26 points/.exec(st);
    assert(m && Number(m[1]) < 26, `stopped early: ${st}`);
    assert(await page.getByRole("button", { name: "Run sweep" }).isEnabled(), "can run again");
  }],
]);
