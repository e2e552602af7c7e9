// catalog.test.js: the page loads from `cdplan serve`, shows the hardware
// catalog, sorts it by clicking and by keyboard, and shows each figure's
// sources.
"use strict";
const { run, assert, openDashboard, apiCall } = require("./lib.js");

const names = (page) => page.$$eval("#catalog tbody tr", (rows) => rows.map((r) => r.dataset.name));

run(__filename, [
  ["load the page and see the catalog", async ({ page, base, shot }) => {
    await openDashboard(page);
    assert((await page.title()) === "cdplan dashboard", "page title");
    const { doc } = await apiCall(base, "GET", "/v1/hardware");
    const want = doc.hardware.map((h) => h.name).sort();
    await page.waitForSelector("#catalog tbody tr");
    const got = (await names(page)).sort();
    assert(JSON.stringify(got) === JSON.stringify(want), `catalog rows ${got} = API's ${want}`);
    assert(got.includes("h200") && got.includes("mi350x"), "h200 and mi350x listed");
    const status = await page.textContent("#server-status");
    assert(/Server ok/.test(status), `server status shown: ${status}`);
    await shot("loaded");
  }],

  ["sort by a column with the mouse", async ({ page, base }) => {
    const { doc } = await apiCall(base, "GET", "/v1/hardware");
    const byHbm = doc.hardware.slice().sort((a, b) => b.hbm_bytes - a.hbm_bytes || a.name.localeCompare(b.name)).map((h) => h.name);
    await page.getByRole("button", { name: "Sort by HBM GiB" }).click();
    assert(JSON.stringify(await names(page)) === JSON.stringify(byHbm), `descending by HBM: ${await names(page)} vs ${byHbm}`);
    assert((await page.getAttribute('#catalog th[data-key="hbm"]', "aria-sort")) === "descending", "aria-sort descending");
    await page.getByRole("button", { name: "Sort by HBM GiB" }).click();
    const asc = await names(page);
    assert(asc[0] === byHbm[byHbm.length - 1] || doc.hardware.find((h) => h.name === asc[0]).hbm_bytes === doc.hardware.find((h) => h.name === byHbm[byHbm.length - 1]).hbm_bytes, `ascending starts with the smallest HBM (${asc[0]})`);
    assert((await page.getAttribute('#catalog th[data-key="hbm"]', "aria-sort")) === "ascending", "aria-sort ascending");
  }],

  ["sort with the keyboard", async ({ page, base }) => {
    const { doc } = await apiCall(base, "GET", "/v1/hardware");
    const bf16 = (h) => (h.peak_tflops && h.peak_tflops.bf16) || -1;
    const top = doc.hardware.slice().sort((a, b) => bf16(b) - bf16(a))[0].name;
    await page.getByRole("button", { name: "Sort by BF16 TFLOP/s" }).focus();
    await page.keyboard.press("Enter");
    assert((await names(page))[0] === top, `first row after Enter is the largest bf16 peak (${top})`);
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.textContent);
    assert(focused === "BF16 TFLOP/s", `focus stays on the header button (${focused})`);
    await page.keyboard.press("Space");
    assert((await page.getAttribute('#catalog th[data-key="bf16"]', "aria-sort")) === "ascending", "Space sorts ascending");
    await page.getByRole("button", { name: "Sort by Name" }).click();
  }],

  ["sources on hover and listed under the table", async ({ page, base, shot }) => {
    const { doc } = await apiCall(base, "GET", "/v1/hardware/h200");
    const row = page.locator('#catalog tbody tr[data-name="h200"]');
    const cellTitle = await row.locator('td[data-key="bw"]').getAttribute("title");
    assert(cellTitle && cellTitle.includes(doc.sources.hbm_bandwidth_bytes_per_s.slice(0, 30)), `HBM TB/s cell names its source: ${cellTitle}`);
    const btn = row.getByRole("button", { name: /^Sources for h200 \(\d+\)$/ });
    await btn.click();
    assert((await btn.getAttribute("aria-expanded")) === "true", "the button says it is expanded");
    const box = page.locator("#catalog-sources");
    await box.waitFor({ state: "visible" });
    const list = await box.locator("ul").innerText();
    assert(list.includes("peak_tflops") && list.includes(doc.sources.peak_tflops.slice(0, 40)), "the sources list shows the descriptor's sources");
    assert(Object.keys(doc.sources).every((k) => list.includes(k)), "every source key is listed");
    assert((await box.locator("ul a").count()) > 0, "source URLs are links");
    await row.locator('td[data-key="bw"]').hover();
    await shot("sources");
    // another row's button replaces the list; pressing it again closes it
    const other = page.locator('#catalog tbody tr[data-name="mi350x"]').getByRole("button", { name: /^Sources for mi350x/ });
    await other.click();
    assert((await box.getAttribute("data-name")) === "mi350x" && (await btn.getAttribute("aria-expanded")) === "false", "mi350x's sources replace h200's");
    await other.click();
    assert(await box.isHidden(), "pressed again, the list closes");
  }],

  ["at 1400 px every column shows and the sources stay in the panel", async ({ page }) => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.waitForTimeout(200);
    const wrap = await page.locator("#catalog-panel .table-wrap").evaluate((e) => ({ sw: e.scrollWidth, cw: e.clientWidth }));
    assert(wrap.sw <= wrap.cw, `the catalog fits its panel at 1400 px (table ${wrap.sw} px in ${wrap.cw} px)`);
    const fp8 = await page.locator('#catalog th[data-key="fp8"]').evaluate((e) => { const r = e.getBoundingClientRect(), w = e.closest(".table-wrap").getBoundingClientRect(); return { r: r.right, w: w.right }; });
    assert(fp8.r <= fp8.w + 0.5, `the FP8 column is inside the panel (${fp8.r} <= ${fp8.w})`);
    await page.locator('#catalog tbody tr[data-name="h200"]').getByRole("button", { name: /^Sources for h200/ }).click();
    const geo = await page.evaluate(() => {
      const b = document.getElementById("catalog-sources").getBoundingClientRect();
      const p = document.getElementById("catalog-panel").getBoundingClientRect();
      const items = [...document.querySelectorAll("#catalog-sources li")].map((li) => li.getBoundingClientRect());
      return { b: [b.left, b.right, b.height], p: [p.left, p.right], out: items.filter((r) => r.right > b.right + 0.5 || r.left < b.left - 0.5).length };
    });
    assert(geo.b[0] >= geo.p[0] && geo.b[1] <= geo.p[1] && geo.b[2] > 40, `the sources box lies inside the panel (${geo.b} in ${geo.p})`);
    assert(geo.out === 0, `${geo.out} source lines run past the box`);
  }],
]);
