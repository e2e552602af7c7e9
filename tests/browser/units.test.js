// units.test.js: numbers as people read them. Throughput with an SI prefix
// ("25.8 M samples/s", never 2.58e+7), step times in ms with three
// significant digits, memory in GiB (2^30 bytes: the catalog's H200 holds
// 141 × 2^30) everywhere, each checked against the API answer the page got.
"use strict";
const { run, assert } = require("./lib.js");

const PREFIX = { "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
// "25.8 M samples/s" -> 2.58e7
function rateOf(text) {
  const m = /^([\d.,]+) ?([kMGT]?) (samples|sequences)\/s$/.exec(text.trim());
  assert(m, `a rate with an SI prefix: "${text}"`);
  return Number(m[1].replace(/,/g, "")) * PREFIX[m[2]];
}
const sig = (text) => text.replace(/[^\d]/g, "").replace(/^0+/, "").length;
const near = (shown, exact, rel) => Math.abs(shown - exact) <= rel * Math.abs(exact);

let step = null;

run(__filename, [
  ["the summary shows throughput, step time and memory in readable units", async ({ page, shot }) => {
    const resp = page.waitForResponse((r) => new URL(r.url()).pathname === "/v1/step" && r.request().method() === "POST");
    await page.goto("/");
    step = await (await resp).json();
    await page.waitForFunction(() => Number(document.body.dataset.predictions || 0) > 0);
    await page.waitForSelector("#sum-a-tput");
    const body = await page.locator("main").innerText();
    const exp = body.match(/\d(\.\d+)?e[+-]\d+/g);
    assert(!exp, `no exponent notation in the page: ${exp}`);

    const tput = await page.textContent("#sum-a-tput");
    const r = rateOf(tput);
    assert(near(r, step.samples_per_s, 0.005), `throughput ${tput} is the API's ${step.samples_per_s} to 3 digits`);
    if (step.samples_per_s >= 1e6) assert(/ M /.test(tput) || / G /.test(tput), `millions read as M: ${tput}`);

    const ms = await page.textContent("#sum-a-step");
    const m = /^([\d.,]+) (ms|µs)$/.exec(ms.trim());
    assert(m, `step time in ms: "${ms}"`);
    const shownMs = Number(m[1].replace(/,/g, "")) / (m[2] === "µs" ? 1000 : 1);
    assert(near(shownMs, step.step_ms, 0.005), `step ${ms} is the API's ${step.step_ms} ms`);
    assert(step.step_ms >= 100 || sig(m[1]) <= 3, `at most 3 significant digits below 100 ms: ${ms}`);

    const mem = await page.textContent("#sum-a-mem");
    const g = /^([\d.,]+) (GiB|MiB) of ([\d.,]+) GiB/.exec(mem.trim());
    assert(g, `memory in GiB: "${mem}"`);
    const peak = Number(g[1].replace(/,/g, "")) * (g[2] === "GiB" ? 2 ** 30 : 2 ** 20);
    assert(near(peak, step.peak_memory_bytes, 0.005), `peak ${mem} is the API's ${step.peak_memory_bytes} B`);
    assert(!/\bGB\b/.test(mem), "no decimal GB beside GiB");
    await shot("summary");
  }],

  ["memory chart and catalog use the same binary unit", async ({ page, base }) => {
    const unit = await page.evaluate(() => { const s = window.Chart.getChart("mem-chart").options.scales; return [s.x, s.y].map((a) => (a && a.title && a.title.text) || "").join(" "); });
    assert(/GiB/.test(unit), `memory axis in GiB: ${unit}`);
    const heads = await page.locator("#catalog thead th").allTextContents();
    assert(heads.some((h) => /HBM GiB/.test(h)) && !heads.some((h) => /HBM GB/.test(h)), `catalog HBM in GiB: ${heads}`);
    const r = await fetch(`${base}/v1/hardware/h200`);
    const h = await r.json();
    const cell = await page.locator("#catalog tbody tr[data-name='h200'] td[data-key='hbm']").innerText();
    assert(near(Number(cell.replace(/,/g, "")), h.hbm_bytes / 2 ** 30, 1e-3), `H200 HBM ${cell} GiB = ${h.hbm_bytes} B / 2^30`);
    // bandwidths stay decimal, as in the datasheet and the API's *_bytes_per_s
    const bw = await page.locator("#catalog tbody tr[data-name='h200'] td[data-key='bw']").innerText();
    assert(near(Number(bw), h.hbm_bandwidth_bytes_per_s / 1e12, 1e-3), `H200 HBM ${bw} TB/s`);
  }],
]);
