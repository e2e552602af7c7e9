// knobs.test.js: moving a recipe knob changes the prediction (debounced),
// and the numbers in the page are the API's.
"use strict";
const { run, assert, openDashboard, nextPrediction, apiCall } = require("./lib.js");

const msOf = (text) => Number(/([\d.,]+(?:e[-+]?\d+)?) ms/.exec(text)[1].replace(/,/g, ""));

run(__filename, [
  ["changing the batch changes the prediction", async ({ page, routes, shot }) => {
    await openDashboard(page);
    await shot("before");
    const gemm0 = await page.textContent("#sum-a-gemm");
    const step0 = await page.textContent("#sum-a-step");
    const batch0 = await page.textContent("#knob-batch-out");
    await nextPrediction(page, async () => {
      await page.getByLabel("Batch per GPU", { exact: true }).focus();
      await page.keyboard.press("ArrowRight");
    });
    const batch1 = await page.textContent("#knob-batch-out");
    assert(Number(batch1.replace(/,/g, "")) === 2 * Number(batch0.replace(/,/g, "")), `batch doubled: ${batch0} -> ${batch1}`);
    const recipe = JSON.parse(await page.textContent("#recipe-preview"));
    assert(recipe.batch_per_gpu === Number(batch1.replace(/,/g, "")), "the recipe sent carries the new batch");
    const gemm1 = await page.textContent("#sum-a-gemm");
    assert(msOf(gemm1) > msOf(gemm0), `GEMM time grows with the batch: ${gemm0} -> ${gemm1}`);
    if (routes.has("/v1/step")) {
      const step1 = await page.textContent("#sum-a-step");
      assert(/ms/.test(step1) && step1 !== step0, `step time changed: ${step0} -> ${step1}`);
      assert((await page.locator("#step-error .error").count()) === 0, "no step error");
      assert(await page.isVisible("#step-chart"), "step chart drawn");
      assert(await page.isVisible("#mem-chart"), "memory chart drawn");
    } else {
      // /v1/step is not served yet: its API error is shown, not swallowed
      const err = page.locator("#step-error .error").first();
      await err.waitFor();
      const text = await err.innerText();
      assert(/POST \/v1\/step/.test(text) && /HTTP 40[45]/.test(text), `step error shown: ${text}`);
      assert(/not predicted/.test(step0), "the summary says the step was not predicted");
    }
    await shot("after-batch");
  }],

  ["precision changes the GEMMs and the roofline", async ({ page }) => {
    const gemm0 = await page.textContent("#sum-a-gemm");
    await nextPrediction(page, () => page.getByLabel("Precision (dense compute)").selectOption("fp32"));
    const gemm1 = await page.textContent("#sum-a-gemm");
    assert(msOf(gemm1) > msOf(gemm0), `fp32 GEMMs are slower than bf16: ${gemm0} -> ${gemm1}`);
    const labels = await page.evaluate(() => window.Chart.getChart("roofline-chart").data.datasets.map((d) => d.label));
    assert(labels.some((l) => /roofline \(fp32\)/.test(l)), `roofline drawn for fp32: ${labels}`);
    await nextPrediction(page, () => page.getByLabel("Precision (dense compute)").selectOption("bf16"));
  }],

  ["quick moves are debounced into one update", async ({ page }) => {
    const before = await page.evaluate(() => Number(document.body.dataset.predictions));
    await page.getByLabel("Batch per GPU", { exact: true }).focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowLeft");
    await page.waitForFunction((b) => Number(document.body.dataset.predictions) > b && !document.body.dataset.predicting, before);
    await page.waitForTimeout(600);
    const after = await page.evaluate(() => Number(document.body.dataset.predictions));
    assert(after - before === 1, `three quick moves made ${after - before} updates`);
  }],

  ["the GEMM table shows the GEMMs the step model priced", async ({ page, base, shot }) => {
    await page.getByText("GEMMs as a table").click();
    const rows = page.locator("#gemm-table tbody tr");
    const recipe = JSON.parse(await page.textContent("#recipe-preview"));
    const workload = JSON.parse(await page.getByLabel("Workload JSON", { exact: true }).inputValue());
    const { status, doc } = await apiCall(base, "POST", "/v1/step", { hardware: "h200", workload, recipe });
    assert(status === 200 && Array.isArray(doc.gemms) && doc.gemms.length > 0, "the step answer lists its GEMMs");
    assert((await rows.count()) === doc.gemms.length, `one row per priced GEMM: ${await rows.count()} vs ${doc.gemms.length}`);
    // every row is the API's GEMM: name, shape, ms and bound as the step answer says
    for (let i = 0; i < doc.gemms.length; i++) {
      const cells = await rows.nth(i).locator("td").allInnerTexts();
      const g = doc.gemms[i];
      const dims = cells[1].split("×").map(Number);
      const want = g.batch > 1 ? [g.batch, g.m, g.n, g.k] : [g.m, g.n, g.k];
      assert(cells[0] === g.name && dims.join() === want.join(), `row ${i}: ${cells} vs ${JSON.stringify(g)}`);
      const shown = Number(cells[3].replace(/,/g, ""));
      assert(Math.abs(shown - g.ms) / g.ms < 1e-3, `row ${i} ${g.name}: page ${shown} ms, API ${g.ms} ms`);
      assert(cells[5] === g.bound, `row ${i} bound ${cells[5]} = ${g.bound}`);
    }
    const first = doc.gemms[0];
    assert(first.name === "bottom[0] fwd" && first.m === recipe.batch_per_gpu && first.n === 512 && first.k === 13, `first GEMM is the bottom MLP's first layer: ${JSON.stringify(first)}`);
    // the step prices a GEMM as /v1/estimate prices the same op
    const est = await apiCall(base, "POST", "/v1/estimate", { hardware: "h200", ops: [{ op: "gemm", m: first.m, n: first.n, k: first.k, dtype: first.dtype, layout: first.layout }] });
    assert(est.status === 200, "estimate answers");
    const want = est.doc.results[0].ms;
    assert(Math.abs(first.ms - want) / want < 1e-9, `step's ${first.ms} ms = estimate's ${want} ms`);
    await shot("gemm-table");
  }],
]);
