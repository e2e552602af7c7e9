// errors.test.js: API and input errors are shown in the page with their
// code, message and field, never swallowed.
"use strict";
const { run, assert, openDashboard, nextPrediction } = require("./lib.js");

run(__filename, [
  ["invalid workload JSON shows where it breaks", async ({ page, shot }) => {
    await openDashboard(page);
    await page.getByText("Workload JSON (paste your own)").click();
    await page.getByLabel("Workload JSON", { exact: true }).fill('{"kind": "dlrm",\n "dense_features": 13,,\n}');
    await page.getByRole("button", { name: "Use this workload" }).click();
    const err = page.locator("#workload-error .error");
    await err.waitFor();
    assert((await err.getAttribute("data-code")) === "bad_json", "code bad_json");
    const field = await err.locator(".err-field").innerText();
    assert(/line 2/.test(field), `field names the line: ${field}`);
    await shot("bad-json");
  }],

  ["a workload the server rejects shows the API error with its field", async ({ page, routes, shot }) => {
    const ta = page.getByLabel("Workload JSON", { exact: true });
    const wl = {
      kind: "dlrm",
      dense_features: 0,
      tables: [{ name: "t0", rows: 1000, dim: 16, pooling: 1 }],
      bottom_mlp: [64, 16],
      top_mlp: [64, 1],
      interaction: "dot",
    };
    await nextPrediction(page, async () => {
      await ta.fill(JSON.stringify(wl, null, 1));
      await page.getByRole("button", { name: "Use this workload" }).click();
    });
    assert((await page.locator("#workload-error .error").count()) === 0, "the JSON error is gone");
    // the GEMMs are the step's: the roofline panel shows the step's refusal
    const err = page.locator("#roofline-error .error").first();
    await err.waitFor();
    const rf = await err.getAttribute("data-field");
    assert(/dense_features/.test(rf), `the GEMM error names the workload field: ${rf}`);
    const text = await err.innerText();
    assert(/POST \/v1\/step/.test(text) && /HTTP 400/.test(text), `error text: ${text}`);
    const stepErr = page.locator("#step-error .error").first();
    await stepErr.waitFor();
    if (routes.has("/v1/step")) {
      const f = await stepErr.getAttribute("data-field");
      assert(/dense_features/.test(f), `step error names the workload field: ${f}`);
    } else {
      assert(/POST \/v1\/step/.test(await stepErr.innerText()), "the missing /v1/step is shown");
    }
    await shot("api-error");
    await page.getByLabel("Example workload").selectOption({ index: 0 });
    await page.waitForFunction(() => !document.querySelector("#roofline-error .error"));
  }],

  ["a bad plan knob is refused with its field", async ({ page }) => {
    await page.getByLabel("Batch per GPU values the planner may pick").fill("4096, lots");
    await page.getByRole("button", { name: "Run plan" }).click();
    const err = page.locator("#plan-error .error");
    await err.waitFor();
    assert((await err.getAttribute("data-field")) === "knobs.batch_per_gpu", "field knobs.batch_per_gpu");
    assert(/lots/.test(await err.innerText()), "message quotes the bad value");
  }],

  ["a missing validation run shows the 404", async ({ page, shot }) => {
    await page.getByLabel("Validation run id").fill("999999");
    await page.getByRole("button", { name: "Load validation run" }).click();
    const err = page.locator("#val-error .error");
    await err.waitFor();
    const text = await err.innerText();
    assert(/GET \/v1\/validations\/999999/.test(text) && /HTTP 404/.test(text), `404 shown: ${text}`);
    await shot("validation-404");
  }],
]);
