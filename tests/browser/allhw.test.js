// allhw.test.js: "All accelerators": the current workload and recipe on
// every accelerator of the catalog. Each drawn bar, whisker and table cell
// is checked against POST /v1/step answered to the same request: throughput,
// throughput per watt of the descriptor's TDP, memory headroom, and the
// answer's provenance (basis and error band); refused accelerators are
// listed with the API's error.
"use strict";
const { run, assert, openDashboard, apiCall } = require("./lib.js");

const GiB = 2 ** 30;
const close = (a, b, rel = 1e-9) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-12);

// The request the page sends: its workload (state) and recipe (preview).
async function pageRequest(page) {
  const recipe = JSON.parse(await page.textContent("#recipe-preview"));
  const workload = JSON.parse(await page.inputValue("#workload-json"));
  return { recipe, workload };
}

async function apiAnswers(base, req) {
  const hw = (await apiCall(base, "GET", "/v1/hardware")).doc.hardware;
  const out = new Map();
  for (const h of hw) {
    const r = await apiCall(base, "POST", "/v1/step", { hardware: h.name, workload: req.workload, recipe: req.recipe });
    out.set(h.name, { h, status: r.status, doc: r.doc });
  }
  return out;
}

async function runAll(page) {
  const before = await page.evaluate(() => Number(document.body.dataset.allDone || 0));
  await page.getByRole("button", { name: "Predict on every accelerator" }).click();
  await page.waitForFunction((b) => Number(document.body.dataset.allDone || 0) > b, before, { timeout: 60000 });
}

const chartData = (page) => page.evaluate(() => {
  const c = window.Chart.getChart("all-chart");
  return { labels: c.data.labels, values: c.data.datasets[0].data, bands: c.data.datasets[1] ? c.data.datasets[1].data : null };
});

let answers;

run(__filename, [
  ["every accelerator, throughput bars and error bands as the API answers", async ({ page, base, shot }) => {
    await openDashboard(page);
    await runAll(page);
    const req = await pageRequest(page);
    answers = await apiAnswers(base, req);
    const ok = [...answers.values()].filter((a) => a.status === 200);
    assert(ok.length >= 10, `most accelerators predicted by the API (${ok.length})`);
    const status = await page.textContent("#all-status");
    assert(status.startsWith(`${ok.length} of ${answers.size} accelerators predicted`), `status counts the API's answers: ${status}`);
    assert(await page.locator("#all-progress").isHidden(), "progress hidden when done");
    const d = await chartData(page);
    assert(d.labels.length === ok.length, `one bar per predicted accelerator (${d.labels.length} of ${ok.length})`);
    for (let i = 0; i < d.labels.length; i++) {
      const a = answers.get(d.labels[i]);
      assert(a && a.status === 200, `${d.labels[i]} was answered`);
      assert(close(d.values[i], a.doc.samples_per_s), `${d.labels[i]} bar ${d.values[i]} = API samples_per_s ${a.doc.samples_per_s}`);
      if (i) assert(d.values[i] <= d.values[i - 1], "bars sorted, fastest first");
      const band = a.doc.provenance.error_band.step;
      if (band === null) assert(d.bands[i] === null, `${d.labels[i]}: no step band, no whisker`);
      else assert(close(d.bands[i][0], a.doc.samples_per_s * (1 - band)) && close(d.bands[i][1], a.doc.samples_per_s * (1 + band)), `${d.labels[i]} whisker ±${band}`);
    }
    assert(d.bands.some((b) => b !== null), "the calibrated H200 has a step band");
    await shot("throughput");
  }],

  ["table: step, per watt, headroom and provenance of each accelerator", async ({ page }) => {
    for (const [name, a] of answers) {
      const cells = await page.locator(`#all-table tbody tr[data-hw="${name}"] td`).allTextContents();
      assert(cells.length === 8, `a row for ${name}`);
      if (a.status !== 200) {
        assert(cells[1] === "refused" && cells[6] === a.doc.error.message, `${name} refused with the API's message: ${cells}`);
        continue;
      }
      const s = a.doc;
      const ms = /^([\d.,]+) ms$/.exec(cells[1]);
      assert(ms && Math.abs(Number(ms[1].replace(/,/g, "")) - s.step_ms) <= 0.005 * s.step_ms + 0.5, `${name} step ${cells[1]} = ${s.step_ms}`);
      if (a.h.tdp_watts) {
        const perw = s.samples_per_s / a.h.tdp_watts;
        const pw = /^([\d.,]+) ?([kMG]?) \/s\/W at (\d+) W$/.exec(cells[3]);
        assert(pw, `${name} per watt "${cells[3]}"`);
        const shown = Number(pw[1].replace(/,/g, "")) * { "": 1, k: 1e3, M: 1e6, G: 1e9 }[pw[2]];
        assert(Math.abs(shown - perw) <= 0.005 * perw, `${name} per watt ${cells[3]} = ${perw}`);
        assert(Number(pw[3]) === a.h.tdp_watts, `${name} names its TDP: ${cells[3]}`);
      } else {
        assert(cells[3] === "no TDP", `${name} has no TDP: ${cells[3]}`);
      }
      const head = (s.hbm_usable_bytes - s.peak_memory_bytes) / GiB;
      const hm = /^(−?)([\d.,]+) (GiB|MiB)/.exec(cells[5]);
      const hv = (hm[1] ? -1 : 1) * Number(hm[2].replace(/,/g, "")) / (hm[3] === "MiB" ? 1024 : 1);
      assert(Math.abs(hv - head) <= 0.005 * Math.abs(head) + 0.01, `${name} headroom ${cells[5]} = ${head} GiB`);
      assert(cells[6].startsWith(s.provenance.basis), `${name} basis: ${cells[6]}`);
      if (s.provenance.calibration) assert(cells[6].includes(`calibration v${s.provenance.calibration}`), `${name} calibration version`);
      const band = s.provenance.error_band.step;
      if (band !== null) assert(cells[7] === `step ±${(band * 100).toLocaleString("en-US", { maximumFractionDigits: 1 })}%`, `${name} band ${cells[7]}`);
      else assert(cells[7].startsWith("step not checked"), `${name} says the step is not checked: ${cells[7]}`);
      if (band === null && s.provenance.error_band.gemm !== null) assert(cells[7].includes(`GEMM ±${(s.provenance.error_band.gemm * 100).toLocaleString("en-US", { maximumFractionDigits: 1 })}%`), `${name} GEMM band ${cells[7]}`);
    }
  }],

  ["per watt and headroom bars", async ({ page, shot }) => {
    await page.getByLabel("Bars show").selectOption("perw");
    let d = await chartData(page);
    const withTdp = [...answers.values()].filter((a) => a.status === 200 && a.h.tdp_watts);
    assert(d.labels.length === withTdp.length, `per watt: one bar per accelerator with a TDP (${d.labels.length} of ${withTdp.length})`);
    d.labels.forEach((n, i) => {
      const a = answers.get(n);
      assert(close(d.values[i], a.doc.samples_per_s / a.h.tdp_watts), `${n} per watt bar`);
    });
    await page.getByLabel("Bars show").selectOption("headroom");
    d = await chartData(page);
    assert(d.bands === null, "no step band on memory");
    d.labels.forEach((n, i) => {
      const s = answers.get(n).doc;
      assert(close(d.values[i], (s.hbm_usable_bytes - s.peak_memory_bytes) / GiB), `${n} headroom bar`);
    });
    await shot("headroom");
  }],

  ["an accelerator that refuses the recipe is listed with the API's error", async ({ page, base }) => {
    await page.getByLabel("Precision (dense compute)").selectOption("fp8");
    await page.waitForFunction(() => JSON.parse(document.getElementById("recipe-preview").textContent).precision === "fp8");
    await runAll(page);
    const req = await pageRequest(page);
    const ans = await apiAnswers(base, req);
    const refused = [...ans.entries()].filter(([, a]) => a.status !== 200);
    assert(refused.length > 0, "some accelerator has no fp8");
    const boxes = await page.locator("#all-error .error").evaluateAll((bs) => bs.map((b) => ({ text: b.innerText, field: b.dataset.field, code: b.dataset.code })));
    assert(boxes.length === refused.length, `one error per refusal (${boxes.length} of ${refused.length})`);
    for (const [name, a] of refused) {
      const b = boxes.find((x) => x.text.includes(`Step on ${name}`));
      assert(b && b.code === a.doc.error.code && b.field === a.doc.error.field, `${name}: ${a.doc.error.code} ${a.doc.error.field} shown (${JSON.stringify(b)})`);
    }
    const d = await chartData(page);
    assert(d.labels.length === ans.size - refused.length, "refused accelerators have no bar");
    await page.getByLabel("Precision (dense compute)").selectOption("bf16");
  }],
]);
