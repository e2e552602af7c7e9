// history.test.js: the plan history (GET /v1/plans): plans made through the
// page and the API are listed newest first, a page at a time, and every
// drawn value is the API's answer; a listed plan opens in the plan panel.
"use strict";
const { run, assert, openDashboard, apiCall } = require("./lib.js");

const made = []; // ids, oldest first

// The row of the history table for each plan of an API page, as drawn.
async function drawnRows(page) {
  return page.locator("#hist-table tbody tr").evaluateAll((trs) =>
    trs.map((tr) => ({ id: tr.dataset.id, cells: [...tr.cells].map((c) => c.textContent.trim()) })));
}

// Same formatting rules as the page states (3 significant digits), checked
// by value: "12.4 ms" within 0.5% of step_ms and so on.
function checkRow(row, p) {
  const [, hw, step, tput, mem, gain, gap, recipe] = row.cells;
  assert(row.id === p.id, `row ${row.id} is plan ${p.id}`);
  assert(hw === p.hardware, `accelerator ${hw} = ${p.hardware}`);
  const ms = /^([\d.,]+) (ms|µs)$/.exec(step);
  assert(ms, `step time "${step}"`);
  const v = Number(ms[1].replace(/,/g, "")) / (ms[2] === "µs" ? 1000 : 1);
  assert(Math.abs(v - p.step_ms) <= 0.005 * p.step_ms, `step ${step} = ${p.step_ms} ms`);
  const r = /^([\d.,]+) ?([kMG]?) samples\/s$/.exec(tput);
  assert(r, `throughput "${tput}"`);
  const rv = Number(r[1].replace(/,/g, "")) * { "": 1, k: 1e3, M: 1e6, G: 1e9 }[r[2]];
  assert(Math.abs(rv - p.samples_per_s) <= 0.005 * p.samples_per_s, `throughput ${tput} = ${p.samples_per_s}`);
  const g = /^([\d.,]+) (GiB|MiB)$/.exec(mem);
  assert(g, `memory "${mem}"`);
  const gv = Number(g[1].replace(/,/g, "")) * (g[2] === "GiB" ? 2 ** 30 : 2 ** 20);
  assert(Math.abs(gv - p.peak_memory_bytes) <= 0.005 * p.peak_memory_bytes, `memory ${mem} = ${p.peak_memory_bytes} B`);
  if (p.gain === null) assert(gain === "–", `no gain: ${gain}`);
  else assert(Math.abs(Number(gain.replace(/[×,]/g, "")) - p.gain) <= 0.001 * p.gain, `gain ${gain} = ${p.gain}`);
  assert(Math.abs(Number(gap.replace("%", "")) / 100 - p.gap) < 0.0006, `gap ${gap} = ${p.gap}`);
  assert(recipe.startsWith(`${p.recipe.gpus} GPU`) && recipe.endsWith(p.recipe.precision), `recipe ${recipe}`);
}

run(__filename, [
  ["an empty history says so", async ({ page }) => {
    await openDashboard(page);
    await page.waitForFunction(() => /No plans yet/.test(document.getElementById("hist-status").textContent));
  }],

  ["three plans, one from the page and two from the API", async ({ page, base }) => {
    await page.getByLabel("Time limit (s)").fill("3");
    await page.getByRole("button", { name: "Run plan" }).click();
    await page.locator("#plan-result").waitFor({ state: "visible", timeout: 60000 });
    const first = JSON.parse(await page.textContent("#plan-raw"));
    made.push(first.id);
    const req = JSON.parse(await page.textContent("#plan-request"));
    for (const hw of ["mi350x", "b200"]) {
      const r = await apiCall(base, "POST", "/v1/plans", { ...req, hardware: hw });
      assert(r.status === 201, `POST /v1/plans for ${hw}: ${r.status} ${JSON.stringify(r.doc).slice(0, 200)}`);
      made.push(r.doc.id);
    }
    // the page's own plan refreshed the list; the API's are there after a reload
    await page.getByLabel("Plans per page").selectOption("5");
    await page.getByRole("button", { name: "Load newest plans" }).click();
    await page.waitForFunction(() => document.querySelectorAll("#hist-table tbody tr").length === 3);
  }],

  ["pages of two, newest first, as the API answers", async ({ page, base, shot }) => {
    // the API itself: newest first, and its limits are checked
    const all = await apiCall(base, "GET", "/v1/plans?limit=5");
    assert(all.status === 200 && JSON.stringify(all.doc.plans.map((p) => p.id)) === JSON.stringify([...made].reverse()), `newest first: ${all.doc.plans.map((p) => p.id)} vs made ${made}`);
    assert(all.doc.next_after === null, "one page holds all three");
    for (const [q, field] of [["limit=0", "limit"], ["limit=101", "limit"], ["limit=x", "limit"], ["after=zz", "after"], ["after=0123456789abcdef", "after"]]) {
      const bad = await apiCall(base, "GET", `/v1/plans?${q}`);
      assert(bad.status === 400 && bad.doc.error.field === field, `?${q}: 400 naming ${field} (${bad.status} ${JSON.stringify(bad.doc)})`);
    }

    await page.evaluate(() => {
      const s = document.getElementById("hist-limit");
      s.append(new Option("2", "2"));
      s.value = "2";
    });
    const p1 = await apiCall(base, "GET", "/v1/plans?limit=2");
    await page.getByRole("button", { name: "Load newest plans" }).click();
    await page.waitForFunction(() => /^Page 1: 2 plans/.test(document.getElementById("hist-status").textContent));
    let rows = await drawnRows(page);
    assert(rows.length === 2 && p1.doc.plans.length === 2, `two rows (${rows.length})`);
    rows.forEach((r, i) => checkRow(r, p1.doc.plans[i]));
    assert(p1.doc.next_after === made[1], `cursor is the last shown (${p1.doc.next_after})`);
    assert(await page.locator("#hist-older").isEnabled(), "older plans remain");
    await shot("page-1");

    const p2 = await apiCall(base, "GET", `/v1/plans?limit=2&after=${p1.doc.next_after}`);
    await page.getByRole("button", { name: "Older plans" }).click();
    await page.waitForFunction(() => /^Page 2: 1 plan;/.test(document.getElementById("hist-status").textContent));
    rows = await drawnRows(page);
    assert(rows.length === 1 && p2.doc.plans.length === 1 && p2.doc.next_after === null, "the last page holds the oldest plan");
    checkRow(rows[0], p2.doc.plans[0]);
    assert(rows[0].id === made[0], "the oldest is the page's own plan");
    assert(await page.locator("#hist-older").isDisabled(), "no older plans");
  }],

  ["a listed plan opens in the plan panel", async ({ page, base }) => {
    await page.getByRole("button", { name: "Load newest plans" }).click();
    await page.waitForFunction(() => /^Page 1:/.test(document.getElementById("hist-status").textContent));
    const id = made[2];
    await page.getByRole("button", { name: `Open plan ${id}` }).click();
    await page.waitForFunction((i) => /from the history/.test(document.getElementById("plan-status").textContent) && JSON.parse(document.getElementById("plan-raw").textContent).id === i, id);
    const got = await apiCall(base, "GET", `/v1/plans/${id}`);
    const shown = JSON.parse(await page.textContent("#plan-raw"));
    assert(JSON.stringify(shown.recipe) === JSON.stringify(got.doc.recipe) && shown.hardware === "b200", "the stored b200 plan is shown");
    assert(/b200/.test(await page.textContent("#plan-card")), "its card names b200");
  }],
]);
