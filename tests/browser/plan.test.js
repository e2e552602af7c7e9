// plan.test.js: run a plan, follow its progress, read its explanation, copy
// and download the recipe (POST /v1/plans, GET /v1/plans/{id}).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { run, assert, openDashboard } = require("./lib.js");

run(__filename, [
  ["run a plan and see the recipe", async ({ page, routes, shot }) => {
    await openDashboard(page);
    await page.getByLabel("Time limit (s)").fill("5");
    await page.getByRole("button", { name: "Run plan" }).click();
    const req = JSON.parse(await page.textContent("#plan-request"));
    assert(req.hardware === "h200" && req.workload.kind === "dlrm" && req.baseline.batch_per_gpu > 0, "the request carries workload, hardware and baseline");
    if (!routes.has("/v1/plans")) {
      const err = page.locator("#plan-error .error");
      await err.waitFor();
      const text = await err.innerText();
      assert(/POST \/v1\/plans/.test(text) && /HTTP 40[45]/.test(text), `missing /v1/plans shown: ${text}`);
      assert(/failed/.test(await page.textContent("#plan-status")), "status says the plan failed");
      await shot("plan-unavailable");
      return;
    }
    await page.locator("#plan-result").waitFor({ state: "visible", timeout: 120000 });
    assert(/done/.test(await page.textContent("#plan-status")), "status says done");
    const recipe = JSON.parse(await page.textContent("#plan-recipe"));
    assert(recipe && typeof recipe === "object" && recipe.batch_per_gpu > 0, `recipe shown: ${JSON.stringify(recipe).slice(0, 200)}`);
    assert(/ms/.test(await page.textContent("#plan-card")), "plan prediction shown");
    assert((await page.locator("#plan-explanation").innerText()).length > 0, "explanation shown");
    await shot("plan-done");
  }],

  ["copy and download the recipe", async ({ page, context, routes, base, artifacts }) => {
    if (!routes.has("/v1/plans")) return; // nothing to copy without a plan
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    const recipeText = await page.textContent("#plan-recipe");
    await page.getByRole("button", { name: "Copy recipe" }).click();
    await page.waitForFunction(() => /copied/.test(document.getElementById("recipe-copy-status").textContent));
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    assert(clip === recipeText, "the clipboard holds the recipe");
    const [dl] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download recipe" }).click()]);
    assert(/^cdplan-recipe-h200.*\.json$/.test(dl.suggestedFilename()), `file name ${dl.suggestedFilename()}`);
    const file = path.join(artifacts, "plan-recipe.json");
    await dl.saveAs(file);
    assert(JSON.stringify(JSON.parse(fs.readFileSync(file, "utf8"))) === JSON.stringify(JSON.parse(recipeText)), "downloaded file is the recipe");
  }],
]);
