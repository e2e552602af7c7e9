// layout.test.js: the page fits phones and wide screens: at 360, 390 and
// 1400 px no element makes the document wider than the viewport (tables
// scroll inside their panel), with the plan, compare, all accelerators,
// sweep and catalog's sources opened so that their content counts too.
"use strict";
const { run, assert, openDashboard } = require("./lib.js");

// Elements whose right edge passes the viewport (for the failure message).
async function overflow(page) {
  return page.evaluate(() => {
    const w = document.documentElement.clientWidth;
    const out = [];
    for (const e of document.querySelectorAll("body *")) {
      const r = e.getBoundingClientRect();
      if (r.width > 0 && r.right > w + 0.5) {
        // report the outermost offender only
        let p = e.parentElement, inner = false;
        while (p && p !== document.body) {
          const pr = p.getBoundingClientRect();
          const ox = getComputedStyle(p).overflowX;
          if (pr.right > w + 0.5 || ox === "auto" || ox === "scroll" || ox === "hidden") { inner = true; break; }
          p = p.parentElement;
        }
        if (!inner) out.push(`${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}${e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : ""} right=${Math.round(r.right)}`);
      }
    }
    return { scrollWidth: document.scrollingElement.scrollWidth, width: window.innerWidth, out: out.slice(0, 12) };
  });
}

async function checkWidth(page, width, label) {
  const o = await overflow(page);
  assert(o.scrollWidth <= width, `${label}: document ${o.scrollWidth} px wide at a ${width} px viewport; overflowing: ${o.out.join("; ")}`);
}

const steps = [
  ["open the dashboard, a plan and a compare", async ({ page }) => {
    await openDashboard(page);
    await page.getByLabel("Time limit (s)").fill("3");
    await page.getByRole("button", { name: "Run plan" }).click();
    await page.locator("#plan-result").waitFor({ state: "visible", timeout: 60000 });
    await page.getByRole("button", { name: "Compare" }).click();
    await page.locator("#compare-result").waitFor({ state: "visible", timeout: 90000 });
    // the what-if views and the plan's validation answer, drawn
    await page.getByRole("button", { name: "Predict on every accelerator" }).click();
    await page.waitForFunction(() => Number(document.body.dataset.allDone || 0) > 0, null, { timeout: 60000 });
    await page.getByLabel("Points at most").fill("4");
    await page.getByRole("button", { name: "Run sweep" }).click();
    await page.waitForFunction(() => Number(document.body.dataset.sweepDone || 0) > 0, null, { timeout: 60000 });
    await page.getByRole("button", { name: "Validate this plan" }).click();
    await page.waitForFunction(() => /Not validated|created/.test(document.getElementById("plan-val-status").textContent));
    await page.locator('#catalog tbody tr[data-name="h200"]').getByRole("button", { name: /^Sources for h200/ }).click();
    // open every details element: their content must fit too
    await page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true)));
  }],
];
for (const width of [360, 390, 1400]) {
  steps.push([`no horizontal scroll at ${width} px`, async ({ page, shot }) => {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForTimeout(300); // charts resize on a frame
    await checkWidth(page, width, `${width} px`);
    // the catalog scrolls inside its panel instead
    const wrap = await page.locator("#catalog-panel .table-wrap").evaluate((e) => ({ sw: e.scrollWidth, cw: e.clientWidth, ov: getComputedStyle(e).overflowX }));
    assert(wrap.ov === "auto" || wrap.ov === "scroll", `catalog wrapper scrolls (${wrap.ov})`);
    if (width < 800) assert(wrap.sw > wrap.cw, `the catalog is wider than its panel at ${width} px and scrolls there (${wrap.sw} > ${wrap.cw})`);
    await shot(`w${width}`);
  }]);
}
steps.push(["the open token form fits at 360 px", async ({ page }) => {
  await page.setViewportSize({ width: 360, height: 800 });
  if (!(await page.locator("#token").isVisible())) await page.locator("#signin summary").click();
  await page.locator("#token").waitFor({ state: "visible" });
  await checkWidth(page, 360, "token form open");
}]);
run(__filename, steps);
