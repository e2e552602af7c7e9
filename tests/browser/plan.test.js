// plan.test.js: run a plan, follow its progress, read its explanation
// (changes with their gains, the plan against the baseline, the embedding
// plan), copy and download the recipe (POST /v1/plans, GET /v1/plans/{id}).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { run, assert, openDashboard, apiCall } = require("./lib.js");

run(__filename, [
  ["run a plan and see the recipe", async ({ page, routes, shot }) => {
    await openDashboard(page);
    const example = await page.$eval("#example", (s) => [...s.options].map((o) => o.value).find((v) => /^plan_/.test(v)) || "");
    if (example) await page.getByLabel("Example workload").selectOption(example);
    await page.getByLabel("Time limit (s)").fill("5");
    await page.getByRole("button", { name: "Run plan" }).click();
    const req = JSON.parse(await page.textContent("#plan-request"));
    assert(req.hardware === (await page.inputValue("#hw-a")) && req.workload.kind === "dlrm" && req.baseline.batch_per_gpu > 0, "the request carries workload, accelerator A and the baseline");
    assert(req.time_limit_s === 5 && req.cluster.gpus_per_node >= 1, "time limit and cluster from the form");
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
    assert((await page.locator("#plan-error .error").count()) === 0, "no error");
    const status = await page.textContent("#plan-status");
    assert(/done in .* recipes searched/.test(status), `status says done: ${status}`);
    const recipe = JSON.parse(await page.textContent("#plan-recipe"));
    assert(recipe && recipe.batch_per_gpu > 0 && recipe.precision, `recipe shown: ${JSON.stringify(recipe).slice(0, 200)}`);
    assert(/ms/.test(await page.textContent("#plan-card")), "plan prediction shown");
    if (example) {
      // the memory-heavy example: the plan beats its baseline, change by change
      const gain = Number((await page.textContent("#plan-gain")).replace(/[×,]/g, ""));
      assert(gain >= 1, `gain over the baseline shown: ×${gain}`);
      const changes = await page.locator("#plan-changes tbody tr").count();
      assert(changes > 0, "the explanation lists the changes");
      const first = await page.locator("#plan-changes tbody tr").first().locator("td").allTextContents();
      assert(/→/.test(first[0]) && /^×[\d.]+$/.test(first[1]), `a change with its gain: ${first}`);
      const bars = await page.evaluate(() => window.Chart.getChart("plan-chart").data.labels);
      assert(bars[0] === "baseline" && bars[bars.length - 1] === "plan" && bars.length === changes + 2, `plan against baseline bars: ${bars}`);
      const tables = await page.locator("#plan-emb-table tbody tr").count();
      assert(tables === req.workload.tables.reduce((s, t) => s + (t.count || 1), 0), `embedding plan per table (${tables})`);
    }
    // the stored plan is the one shown
    const doc = JSON.parse(await page.textContent("#plan-raw"));
    assert(typeof doc.id === "string" && doc.id.length > 0, "the plan has an id");
    await page.getByText("Whole plan answer").click();
    await shot("plan-done");
  }],

  ["the stored plan reads back", async ({ page, base, routes }) => {
    if (!routes.has("/v1/plans/{id}")) return;
    const doc = JSON.parse(await page.textContent("#plan-raw"));
    const got = await apiCall(base, "GET", `/v1/plans/${doc.id}`);
    assert(got.status === 200 && JSON.stringify(got.doc.recipe) === JSON.stringify(doc.recipe), "GET /v1/plans/{id} returns the recipe shown");
  }],

  ["host tables served by GPU kernels (uvm)", async ({ page, routes }) => {
    if (!routes.has("/v1/plans")) return;
    await page.getByLabel("served by").selectOption("uvm");
    await page.getByRole("button", { name: "Run plan" }).click();
    const req = JSON.parse(await page.textContent("#plan-request"));
    assert(req.host_tables === "uvm", `the request carries host_tables: ${req.host_tables}`);
    await page.waitForFunction(() => /done in/.test(document.getElementById("plan-status").textContent), null, { timeout: 120000 });
    const doc = JSON.parse(await page.textContent("#plan-raw"));
    const kernels = new Set(doc.embedding_plan.tables.map((t) => t.compute_kernel));
    assert(!kernels.has("cpu") && !kernels.has("fused_uvm_caching"), `host tables are fused_uvm, not cpu or cached: ${[...kernels]}`);
    await page.getByLabel("served by").selectOption("");
  }],

  ["copy and download the recipe", async ({ page, context, routes, base, artifacts }) => {
    if (!routes.has("/v1/plans")) return; // nothing to copy without a plan
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    const recipeText = await page.textContent("#plan-recipe");
    await page.getByRole("button", { name: "Copy recipe" }).click();
    await page.waitForFunction(() => /copied/.test(document.getElementById("recipe-copy-status").textContent));
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    assert(clip === recipeText, "the clipboard holds the recipe");
    const hw = await page.inputValue("#hw-a");
    const [dl] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download recipe" }).click()]);
    assert(new RegExp(`^cdplan-recipe-${hw}-[0-9a-f]+\\.json$`).test(dl.suggestedFilename()), `file name ${dl.suggestedFilename()}`);
    const file = path.join(artifacts, "plan-recipe.json");
    await dl.saveAs(file);
    assert(JSON.stringify(JSON.parse(fs.readFileSync(file, "utf8"))) === JSON.stringify(JSON.parse(recipeText)), "downloaded file is the recipe");
  }],
]);
