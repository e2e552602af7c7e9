// keyboard.test.js: the whole page from the keyboard. Tab reaches every
// visible control, in page order, each with a focus ring; Enter in a form's
// field submits that form (plan, sweep, all accelerators, validation);
// screenshots at 360 and 1400 px are kept as artifacts.
"use strict";
const fs = require("node:fs");
const { run, assert, openDashboard } = require("./lib.js");

// Mark every control a keyboard user must reach: enabled, rendered, not
// inside a closed disclosure, not taken out of the tab order.
const markControls = (page) => page.evaluate(() => {
  const sel = "a[href], button, input, select, textarea, summary, [tabindex]";
  const list = [];
  for (const e of document.querySelectorAll(sel)) {
    delete e.dataset.kb;
    if (e.disabled || e.getAttribute("tabindex") === "-1" || e.type === "hidden") continue;
    if (!e.getClientRects().length || getComputedStyle(e).visibility === "hidden") continue;
    const d = e.parentElement && e.parentElement.closest("details:not([open])");
    if (d && e !== d.querySelector("summary")) continue;
    if (e.type === "radio" && !e.checked) continue;
    e.dataset.kb = String(list.length);
    list.push(e.id || e.getAttribute("aria-label") || e.textContent.trim().slice(0, 30));
  }
  return list;
});

// PNG width from its IHDR chunk.
const pngWidth = (file) => fs.readFileSync(file).readUInt32BE(16);

run(__filename, [
  ["Tab reaches every control, in page order, with a visible focus", async ({ page }) => {
    await openDashboard(page);
    // open the plan result and the catalog sources too, so their controls count
    await page.getByLabel("Time limit (s)").fill("2");
    await page.getByRole("button", { name: "Run plan" }).click();
    await page.locator("#plan-result").waitFor({ state: "visible", timeout: 60000 });
    await page.waitForFunction(() => !document.getElementById("plan-run").disabled);
    const controls = await markControls(page);
    assert(controls.length > 80, `many controls (${controls.length})`);
    // start where a keyboard user does: the first control (the skip link)
    await page.evaluate(() => document.querySelector('[data-kb="0"]').focus());
    const reached = [0];
    const noRing = [];
    for (let i = 0; i < controls.length + 10; i++) {
      await page.keyboard.press("Tab");
      const f = await page.evaluate(() => {
        const e = document.activeElement;
        const cs = getComputedStyle(e);
        return { kb: e.dataset.kb, ring: cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) >= 2 };
      });
      if (f.kb === undefined) continue;
      const k = Number(f.kb);
      if (reached.length && k <= reached[reached.length - 1]) break; // wrapped round
      reached.push(k);
      if (!f.ring) noRing.push(controls[k]);
    }
    const missed = controls.filter((_, i) => !reached.includes(i));
    assert(missed.length === 0, `Tab reaches every control; missed: ${missed.join(", ")}`);
    assert(reached.every((k, i) => !i || k > reached[i - 1]), "in page order");
    assert(noRing.length === 0, `focus ring on every control (not on: ${noRing.slice(0, 10).join(", ")})`);
    for (const id of ["token", "all-run", "sweep-run", "vs-submit", "plan-validate", "hist-load", "compare-run"]) {
      if (id === "token") continue; // inside the closed sign-in
      assert(controls.includes(id), `#${id} is among them`);
    }
  }],

  ["Enter in a field submits its form", async ({ page }) => {
    // sweep: Enter in "Points at most"
    const sweepBefore = await page.evaluate(() => Number(document.body.dataset.sweepDone || 0));
    await page.getByLabel("Points at most").fill("3");
    await page.getByLabel("Points at most").press("Enter");
    await page.waitForFunction((b) => Number(document.body.dataset.sweepDone || 0) > b, sweepBefore, { timeout: 60000 });
    assert(/^Swept 3 of 3 points/.test(await page.textContent("#sweep-status")), await page.textContent("#sweep-status"));
    // all accelerators: Enter on the metric select's form via the button
    const allBefore = await page.evaluate(() => Number(document.body.dataset.allDone || 0));
    await page.getByRole("button", { name: "Predict on every accelerator" }).focus();
    await page.keyboard.press("Enter");
    await page.waitForFunction((b) => Number(document.body.dataset.allDone || 0) > b, allBefore, { timeout: 60000 });
    // plan: Enter in the batch list
    const planBefore = JSON.parse((await page.textContent("#plan-raw")) || "{}").id;
    await page.getByLabel("Batch per GPU values the planner may pick").press("Enter");
    await page.waitForFunction((b) => {
      const t = document.getElementById("plan-raw").textContent;
      return !document.getElementById("plan-run").disabled && t && JSON.parse(t).id !== b;
    }, planBefore, { timeout: 60000 });
    // validation: Enter in the timeout field submits the run
    await page.getByLabel("Timeout (s)").press("Enter");
    await page.waitForFunction(() => Number(document.body.dataset.submitted || 0) > 0, null, { timeout: 30000 });
    // a validation id: Enter loads it
    await page.waitForFunction(() => /: (done|failed|cancelled)/.test(document.getElementById("vs-status").textContent), null, { timeout: 60000 });
    await page.getByLabel("Validation run id").press("Enter");
    await page.waitForFunction(() => /^Validation \d+/.test(document.getElementById("val-status").textContent));
    // the sign-in: Enter in the token field submits it (the page reloads)
    await page.locator("#signin summary").press("Enter");
    await page.locator("#token").waitFor({ state: "visible" });
    await page.locator("#token").fill("");
    await Promise.all([page.waitForNavigation(), page.locator("#token").press("Enter")]);
    await page.waitForSelector("body[data-ready='1']");
  }],

  ["screenshots at 360 and 1400 px", async ({ page, shot }) => {
    await page.waitForFunction(() => Number(document.body.dataset.predictions || 0) > 0);
    for (const width of [360, 1400]) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(300);
      const over = await page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth);
      assert(over <= 0, `no horizontal scroll at ${width} px (${over} px over)`);
      const file = await shot(`w${width}`);
      assert(fs.statSync(file).size > 10000 && pngWidth(file) === width, `${file} is a ${width} px wide screenshot (${pngWidth(file)})`);
    }
  }],
]);
