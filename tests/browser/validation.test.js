// validation.test.js: predicted against measured -- the H200 step
// measurements checked through /v1/step, and a validation run submitted to
// the server (a CPU self-test on the local backend) listed, loaded and
// plotted from GET /v1/validations/{id}/report.
"use strict";
const { run, assert, openDashboard, apiCall } = require("./lib.js");

run(__filename, [
  ["predicted against the H200 step measurements", async ({ page, routes, shot }) => {
    await openDashboard(page);
    await page.getByRole("button", { name: "Check against the H200 DLRM step measurements" }).click();
    if (!routes.has("/v1/step")) {
      await page.locator("#val-error .error").waitFor();
      assert(/POST \/v1\/step/.test(await page.locator("#val-error .error").innerText()), "missing /v1/step shown");
      return;
    }
    await page.waitForFunction(() => /median step-time error/.test(document.getElementById("val-status").textContent), null, { timeout: 60000 });
    const status = await page.textContent("#val-status");
    const med = Number(/median step-time error ([\d.]+)%/.exec(status)[1]);
    assert(med >= 0 && med < 100, `median error shown: ${status}`);
    const points = await page.evaluate(() => window.Chart.getChart("val-chart").data.datasets[0].data.length);
    const rows = await page.evaluate(() => fetch("examples.json").then((r) => r.json()).then((d) => d.measurements.rows.length));
    assert(points === rows, `one point per measured step (${points} of ${rows})`);
    assert((await page.locator("#val-table tbody tr").count()) >= rows, "the table lists every case");
    await shot("reference");
  }],

  ["a validation run's predicted against measured", async ({ page, base, routes, shot }) => {
    if (!routes.has("/v1/validations")) return;
    const sub = await apiCall(base, "POST", "/v1/validations", {
      kind: "cpu_selftest",
      hardware: "h200",
      params: { n: 1000 },
      prediction: { metric: "result.sum", cases: [{ value: 500000 }] },
    });
    assert(sub.status === 201, `submitted: ${sub.status} ${JSON.stringify(sub.doc)}`);
    const id = sub.doc.id;
    let job = sub.doc;
    for (let i = 0; i < 150 && !["done", "failed", "cancelled"].includes(job.state); i++) {
      await new Promise((r) => setTimeout(r, 200));
      job = (await apiCall(base, "GET", `/v1/validations/${id}`)).doc;
    }
    assert(job.state === "done", `the local self-test finished: ${JSON.stringify(job).slice(0, 300)}`);
    await page.getByRole("button", { name: "List validation runs" }).click();
    await page.locator("#val-list").waitFor();
    assert((await page.inputValue("#val-id")) === String(id), "the newest run is picked");
    await page.getByRole("button", { name: "Load validation run" }).click();
    await page.waitForFunction(() => /median error/.test(document.getElementById("val-status").textContent));
    const cells = await page.locator("#val-table tbody tr").first().locator("td").allTextContents();
    assert(cells[2] === "500,000" && cells[3] === "499,500", `predicted 500,000 against measured 499,500: ${cells}`);
    assert(/0\.1%/.test(cells[4]), `error shown: ${cells[4]}`);
    await shot("validation-run");
  }],
]);
