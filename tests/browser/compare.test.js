// compare.test.js: two accelerators side by side, and the direct port
// against the plan for the target (POST /v1/compare).
"use strict";
const { run, assert, openDashboard, nextPrediction } = require("./lib.js");

// "12.4 ms", "1,234 ms" or "4.5 µs" -> ms
const msOf = (text) => {
  const m = /([\d.,]+) (ms|µs)/.exec(text);
  return Number(m[1].replace(/,/g, "")) / (m[2] === "µs" ? 1000 : 1);
};

run(__filename, [
  ["pick a second accelerator and see both", async ({ page, routes, shot }) => {
    await openDashboard(page);
    assert((await page.locator("#sum-b").count()) === 0, "one accelerator at first");
    await nextPrediction(page, () => page.getByLabel("Accelerator B (side by side)").selectOption("mi350x"));
    assert((await page.getAttribute("#sum-a", "data-hw")) === "h200", "A is h200");
    assert((await page.getAttribute("#sum-b", "data-hw")) === "mi350x", "B is mi350x");
    const a = msOf(await page.textContent("#sum-a-gemm"));
    const b = msOf(await page.textContent("#sum-b-gemm"));
    assert(a > 0 && b > 0 && a !== b, `GEMM times differ: h200 ${a} ms, mi350x ${b} ms`);
    const ratio = await page.textContent("#sum-ratio-gemm");
    // times are shown to 3 significant digits (±0.5% each), the ratio from the exact ones
    assert(Math.abs(Number(ratio.replace(/[×,]/g, "")) - a / b) < 0.011 * (a / b), `ratio ${ratio} = ${a / b}`);
    const sets = await page.evaluate(() => window.Chart.getChart("roofline-chart").data.datasets.map((d) => d.label));
    assert(sets.length === 4 && sets.some((s) => /^mi350x roofline/.test(s)) && sets.some((s) => /^h200 GEMMs/.test(s)), `two rooflines with their GEMMs: ${sets}`);
    const heads = await page.locator("#gemm-table thead th").allTextContents();
    assert(heads.includes("h200 ms") && heads.includes("mi350x ms"), `GEMM table has both: ${heads}`);
    if (routes.has("/v1/step")) {
      assert(/ms/.test(await page.textContent("#sum-b-step")), "B's step predicted");
      const sure = await page.textContent("#sum-b-sure");
      assert(/typical error/.test(sure) && /datasheet|calibrated/.test(sure), `B says how sure it is: ${sure}`);
      // the H200 (A) has blind awkward sweeps behind an unaligned-GEMM band; the MI350X (B) none
      assert(/unaligned GEMM ±[\d.]+% \(p90 [\d.]+%\)/.test(await page.textContent("#sum-a-sure")), "A's unaligned GEMM band shown");
      assert(!/unaligned GEMM/.test(sure), `B has no unaligned GEMM band: ${sure}`);
      const labels = await page.evaluate(() => window.Chart.getChart("step-chart").data.labels);
      assert(JSON.stringify(labels) === '["h200","mi350x"]', `step bars for both: ${labels}`);
      assert((await page.locator("#sum-ratio-tput").count()) === 1, "throughput ratio shown");
    } else {
      assert((await page.locator("#step-error .error").count()) === 2, "the step error shown for each accelerator");
    }
    await shot("side-by-side");
  }],

  ["compare the direct port with the plan for the target", async ({ page, routes, shot }) => {
    assert((await page.inputValue("#cmp-to")) === "mi350x", "compare target follows B");
    await page.getByLabel("From (recipe tuned for)").selectOption("b200");
    await page.getByRole("button", { name: "Compare", exact: true }).click();
    if (routes.has("/v1/compare")) {
      await page.locator("#compare-result").waitFor({ state: "visible", timeout: 120000 });
      const gain = await page.textContent("#cmp-gain");
      assert(/^×[\d.]+$/.test(gain), `gain shown: ${gain}`);
      assert(/ms/.test(await page.textContent("#cmp-direct-card")) && /ms/.test(await page.textContent("#cmp-plan-card")), "both predictions shown");
      assert((await page.locator("#compare-error .error").count()) === 0, "no error");
      const req = await page.evaluate(() => JSON.parse(document.getElementById("compare-raw").textContent));
      assert(req.direct_port && req.direct_port.hardware === "mi350x", "the direct port runs on the target");
    } else {
      const err = page.locator("#compare-error .error");
      await err.waitFor();
      const text = await err.innerText();
      assert(/POST \/v1\/compare/.test(text) && /HTTP 40[45]/.test(text), `missing /v1/compare shown: ${text}`);
    }
    await shot("compare");
  }],

  ["a memory-heavy model from B200 to MI350X gains change by change", async ({ page, routes, shot }) => {
    if (!routes.has("/v1/compare")) return;
    const example = await page.$eval("#example", (s) => [...s.options].map((o) => o.value).find((v) => /^plan_compare_b200/.test(v)) || "");
    assert(example, "the B200 to MI350X compare example is offered");
    await page.getByLabel("Example workload").selectOption(example);
    assert((await page.inputValue("#cmp-from")) === "b200" && (await page.inputValue("#cmp-to")) === "mi350x", "the example sets from and to");
    assert((await page.inputValue("#hw-a")) === "b200" && (await page.inputValue("#hw-b")) === "mi350x", "and shows both side by side");
    await page.getByRole("button", { name: "Compare", exact: true }).click();
    await page.waitForFunction(() => /Compared b200/.test(document.getElementById("compare-status").textContent), null, { timeout: 120000 });
    const gain = Number((await page.textContent("#cmp-gain")).replace(/[×,]/g, ""));
    assert(gain >= 1, `the plan for mi350x is at least the direct port: ×${gain}`);
    const rows = await page.locator("#compare-table tbody tr").count();
    const doc = await page.evaluate(() => JSON.parse(document.getElementById("compare-raw").textContent));
    assert(rows === (doc.gain_by_change || []).length, `one row per change (${rows})`);
    if (rows) {
      const labels = await page.evaluate(() => window.Chart.getChart("compare-chart").data.labels);
      assert(labels.length === rows, "one bar per change");
      // bars are drawn from ×1 (no change), each to its change's ratio
      const bars = await page.evaluate(() => {
        const ch = window.Chart.getChart("compare-chart");
        const x = ch.scales.x;
        return { one: x.getPixelForValue(1), min: x.min, data: ch.data.datasets[0].data, bases: ch.getDatasetMeta(0).data.map((b) => b.base) };
      });
      assert(bars.min > 0, `the ratio axis does not start at 0 (min ${bars.min})`);
      bars.bases.forEach((b, i) => assert(Math.abs(b - bars.one) < 1, `bar ${i} starts at ×1 (${b} px, ×1 at ${bars.one} px)`));
      doc.gain_by_change.forEach((c, i) => {
        const want = c.speedup ?? c.ratio ?? c.gain_ratio ?? c.gain;
        assert(Math.abs(bars.data[i][1] - want) < 1e-9, `bar ${i} ends at the API's ratio ${want} (${bars.data[i][1]})`);
      });
    }
    await shot("compare-b200-mi350x");
  }],
]);
