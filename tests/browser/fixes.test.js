// fixes.test.js: the reported faults, each checked against the
// API: the plan's baseline follows the sharding knob on the left; the
// step's "other" component is named by the kernel classes the step API
// lists for it; a pasted whole step request uses its "hardware"; every link
// and file the page's help names exists.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { run, assert, openDashboard, nextPrediction, apiCall, REPO } = require("./lib.js");

const num = (text) => {
  const m = /([\d.,]+) (ms|µs)/.exec(text);
  return m ? Number(m[1].replace(/,/g, "")) / (m[2] === "µs" ? 1000 : 1) : NaN;
};

run(__filename, [
  ["the step's largest component is named by what it is", async ({ page, base, shot }) => {
    await openDashboard(page);
    const req = { hardware: await page.inputValue("#hw-a"), workload: JSON.parse(await page.inputValue("#workload-json")), recipe: JSON.parse(await page.textContent("#recipe-preview")) };
    const s = (await apiCall(base, "POST", "/v1/step", req)).doc;
    const comps = Object.entries(s.breakdown).sort((a, b) => b[1].ms - a[1].ms);
    assert(comps[0][0] === "other", `the example's largest component is the API's "other" (${comps[0][0]})`);
    // the classes the step model books under "other" (costmodel/step.h), as the API names them
    const held = s.kernel_classes.filter((k) => ["interaction", "elementwise", "pipeline_bubble"].includes(k.class) && k.ms > 0).sort((a, b) => b.ms - a.ms);
    assert(held[0].class === "interaction", `the interaction dominates it (${held.map((k) => k.class)})`);
    const want = `${held.map((k) => k.class.replace(/_/g, " ")).join(", ")} (other)`;
    const labels = await page.evaluate(() => window.Chart.getChart("step-chart").data.datasets.map((d) => d.label));
    assert(labels.includes(want) && !labels.includes("other"), `the chart names it "${want}" (${labels})`);
    const row = await page.locator('#step-table tbody tr[data-component="other"] td').allTextContents();
    assert(row[0] === want && Math.abs(Number(row[1].replace(/,/g, "")) - s.breakdown.other.ms) <= 0.001 * s.breakdown.other.ms, `table row ${row}`);
    // and every kernel class the API lists, with its time
    const cls = await page.locator("#step-classes tbody tr").evaluateAll((trs) => trs.map((t) => [t.dataset.class, t.cells[1].textContent]));
    assert(JSON.stringify(cls.map((c) => c[0])) === JSON.stringify(s.kernel_classes.map((k) => k.class)), `classes ${cls.map((c) => c[0])}`);
    cls.forEach(([c, v]) => {
      const k = s.kernel_classes.find((x) => x.class === c);
      assert(Math.abs(Number(v.replace(/,/g, "")) - k.ms) <= 0.001 * k.ms + 1e-6, `${c}: ${v} = ${k.ms}`);
    });
    await shot("other-named");
  }],

  ["the plan's baseline follows the sharding knob", async ({ page, base, shot }) => {
    await page.getByLabel("Example workload").selectOption("dlrm_many_tables");
    await page.waitForFunction(() => !document.body.dataset.predicting && Number(document.getElementById("knob-gpus").value) === 8);
    await page.getByLabel("Time limit (s)").fill("3");
    const seen = {};
    for (const sh of ["row_wise", "table_wise"]) {
      await page.getByLabel("Table sharding").selectOption(sh);
      await page.waitForFunction((x) => !document.body.dataset.predicting && JSON.parse(document.body.dataset.predictedRecipe || "{}").sharding === x, sh);
      const left = num(await page.textContent("#sum-a-step"));
      await page.getByRole("button", { name: "Run plan" }).click();
      await page.waitForFunction((s) => {
        const raw = document.getElementById("plan-raw").textContent;
        return !document.getElementById("plan-run").disabled && raw && JSON.parse(raw).baseline && JSON.parse(raw).baseline.sharding === s;
      }, sh, { timeout: 60000 });
      const req = JSON.parse(await page.textContent("#plan-request"));
      assert(req.baseline.sharding === sh, `the request's baseline is ${sh} (${req.baseline.sharding})`);
      const doc = JSON.parse(await page.textContent("#plan-raw"));
      const api = await apiCall(base, "POST", "/v1/plans", req);
      assert(api.status === 201 && api.doc.baseline.sharding === sh, `the API plans the baseline ${sh}`);
      assert(Math.abs(api.doc.baseline.step_ms - doc.baseline.step_ms) < 1e-9 * doc.baseline.step_ms, `the same baseline step (${api.doc.baseline.step_ms} vs ${doc.baseline.step_ms})`);
      const shown = await page.textContent("#plan-base-card");
      assert(shown.includes(`Sharding${sh}`), `the baseline card says ${sh}: ${shown}`);
      assert(Math.abs(num(shown) - doc.baseline.step_ms) <= 0.005 * doc.baseline.step_ms, `baseline card ${num(shown)} = ${doc.baseline.step_ms}`);
      seen[sh] = { base: doc.baseline.step_ms, left };
    }
    assert(Math.abs(seen.row_wise.base - seen.table_wise.base) > 0.01 * seen.table_wise.base, `row-wise and table-wise baselines differ (${seen.row_wise.base} vs ${seen.table_wise.base})`);
    assert((seen.row_wise.base > seen.table_wise.base) === (seen.row_wise.left > seen.table_wise.left), `they move the way the step prediction on the left does (${JSON.stringify(seen)})`);
    await shot("baseline-sharding");
  }],

  ["a pasted step request uses its hardware", async ({ page, base }) => {
    await nextPrediction(page, () => page.getByLabel("Example workload").selectOption("dlrm_h200_step"));
    assert((await page.inputValue("#hw-a")) === "h200", "starts on h200");
    const doc = JSON.parse(fs.readFileSync(path.join(REPO, "data/workloads/dlrm_dcn.json"), "utf8"));
    assert(doc.hardware === "mi350x", "the file names mi350x");
    if (!(await page.locator("#workload-json").isVisible())) await page.getByText("Workload JSON (paste your own)").click();
    await page.getByLabel("Workload JSON", { exact: true }).fill(JSON.stringify(doc));
    await nextPrediction(page, () => page.getByRole("button", { name: "Use this workload" }).click());
    assert((await page.inputValue("#hw-a")) === "mi350x", "accelerator A is the request's");
    const recipe = JSON.parse(await page.textContent("#recipe-preview"));
    assert(recipe.sharding === doc.recipe.sharding && recipe.gpus === doc.recipe.gpus && recipe.batch_per_gpu === doc.recipe.batch_per_gpu, `the request's recipe is on the knobs: ${JSON.stringify(recipe)}`);
    const s = (await apiCall(base, "POST", "/v1/step", { hardware: "mi350x", workload: doc.workload, recipe })).doc;
    const card = await page.textContent("#sum-a");
    assert(card.includes("mi350x"), `card A is mi350x: ${card.slice(0, 80)}`);
    assert(Math.abs(num(await page.textContent("#sum-a-step")) - s.step_ms) <= 0.005 * s.step_ms, `step ${await page.textContent("#sum-a-step")} = API ${s.step_ms}`);
    // an accelerator the catalog lacks is named as the field in error
    await page.getByLabel("Workload JSON", { exact: true }).fill(JSON.stringify({ ...doc, hardware: "nope-9000" }));
    await page.getByRole("button", { name: "Use this workload" }).click();
    const err = page.locator("#workload-error .error");
    await err.waitFor();
    assert((await err.getAttribute("data-field")) === "hardware" && /nope-9000/.test(await err.innerText()), "unknown hardware refused by name");
    assert((await page.inputValue("#hw-a")) === "mi350x", "accelerator A unchanged");
  }],

  ["every link and file the page names exists", async ({ page, base }) => {
    const html = await page.content();
    assert(!/DESIGN\.md/.test(html), "no reference to a DESIGN.md");
    const links = await page.locator("a[href]").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    for (const href of links.filter((h) => h.startsWith("/") || h.startsWith("#"))) {
      if (href.startsWith("#")) {
        assert(await page.locator(href).count(), `anchor ${href} exists`);
        continue;
      }
      const r = await fetch(base + href);
      assert(r.status === 200, `${href} is served (${r.status})`);
    }
    const text = await page.locator("body").innerText();
    const files = [...new Set(text.match(/\b[\w./-]+\.(?:md|py|json|yaml)\b/g) || [])].filter((f) => f.includes("/"));
    assert(files.length >= 2, `the help names files (${files})`);
    for (const f of files) assert(fs.existsSync(path.join(REPO, f)), `${f}, named in the page, exists in the repository`);
  }],
]);
