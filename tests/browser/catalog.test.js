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

  ["sources on hover and expanded", async ({ page, base, shot }) => {
    const { doc } = await apiCall(base, "GET", "/v1/hardware/h200");
    const row = page.locator('#catalog tbody tr[data-name="h200"]');
    const cellTitle = await row.locator('td[data-key="bw"]').getAttribute("title");
    assert(cellTitle && cellTitle.includes(doc.sources.hbm_bandwidth_bytes_per_s.slice(0, 30)), `HBM TB/s cell names its source: ${cellTitle}`);
    await row.getByText(/^Sources \(\d+\)$/).click();
    const list = await row.locator("details ul").innerText();
    assert(list.includes("peak_tflops") && list.includes(doc.sources.peak_tflops.slice(0, 40)), "the sources list shows the descriptor's sources");
    const links = await row.locator("details ul a").count();
    assert(links > 0, "source URLs are links");
    await row.locator('td[data-key="bw"]').hover();
    await shot("sources");
  }],
]);
