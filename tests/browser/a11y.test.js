// a11y.test.js: accessibility checks on the rendered page: every control
// has a label, text contrast meets WCAG AA, the page works from the
// keyboard with a visible focus, and it fits a laptop screen.
"use strict";
const { run, assert, openDashboard } = require("./lib.js");

run(__filename, [
  ["every control has an accessible name", async ({ page }) => {
    await openDashboard(page);
    assert((await page.getAttribute("html", "lang")) === "en", "html lang");
    const problems = await page.evaluate(() => {
      const out = [];
      const visible = (e) => e.getClientRects().length > 0 || e.closest("details:not([open])");
      for (const e of document.querySelectorAll("input, select, textarea")) {
        if (!visible(e) || e.type === "hidden") continue;
        const named = (e.labels && e.labels.length) || e.getAttribute("aria-label") || e.getAttribute("aria-labelledby");
        if (!named) out.push(`unlabelled ${e.tagName.toLowerCase()}#${e.id}`);
      }
      for (const e of document.querySelectorAll("button, summary, a[href]")) {
        if (!(e.textContent.trim() || e.getAttribute("aria-label"))) out.push(`nameless ${e.tagName.toLowerCase()}#${e.id}`);
      }
      for (const c of document.querySelectorAll("canvas")) {
        if (c.getAttribute("role") !== "img" || !c.getAttribute("aria-label")) out.push(`canvas#${c.id} without role=img and a label`);
      }
      const ids = [...document.querySelectorAll("[id]")].map((e) => e.id);
      for (const id of new Set(ids.filter((x, i) => ids.indexOf(x) !== i))) out.push(`duplicate id ${id}`);
      for (const e of document.querySelectorAll("[aria-labelledby], [aria-describedby], label[for]")) {
        for (const ref of (e.getAttribute("aria-labelledby") || e.getAttribute("aria-describedby") || e.getAttribute("for")).split(/\s+/)) {
          if (!document.getElementById(ref)) out.push(`reference to missing #${ref}`);
        }
      }
      return out;
    });
    assert(problems.length === 0, problems.join("; "));
  }],

  ["text contrast is at least WCAG AA", async ({ page }) => {
    // show an error box and the sources too, so their colours are checked
    await page.getByText("Workload JSON (paste your own)").click();
    await page.getByLabel("Workload JSON", { exact: true }).fill("{");
    await page.getByRole("button", { name: "Use this workload" }).click();
    await page.locator("#workload-error .error").waitFor();
    await page.locator('#catalog tbody tr[data-name="h200"]').getByRole("button", { name: /^Sources for h200/ }).click();
    const bad = await page.evaluate(() => {
      const parse = (c) => {
        const m = c.match(/rgba?\(([^)]+)\)/);
        if (!m) return null;
        const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
        return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
      };
      const lum = ({ r, g, b }) => {
        const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
      };
      const blend = (top, under) => ({
        r: top.r * top.a + under.r * (1 - top.a),
        g: top.g * top.a + under.g * (1 - top.a),
        b: top.b * top.a + under.b * (1 - top.a),
        a: 1,
      });
      const background = (e) => {
        const layers = [];
        for (let n = e; n; n = n.parentElement) {
          const c = parse(getComputedStyle(n).backgroundColor);
          if (c && c.a > 0) {
            layers.push(c);
            if (c.a >= 1) break;
          }
        }
        let bg = { r: 255, g: 255, b: 255, a: 1 };
        for (const l of layers.reverse()) bg = blend(l, bg);
        return bg;
      };
      const out = [];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      const seen = new Set();
      while (walker.nextNode()) {
        const t = walker.currentNode;
        const e = t.parentElement;
        if (!t.textContent.trim() || seen.has(e) || !e.getClientRects().length) continue;
        seen.add(e);
        if (e.closest(":disabled, [hidden], .sr-only, option")) continue;
        const cs = getComputedStyle(e);
        if (cs.visibility === "hidden" || Number(cs.opacity) === 0) continue;
        const bg = background(e);
        const fg = blend(parse(cs.color), bg);
        const L1 = lum(fg), L2 = lum(bg);
        const ratio = (Math.max(L1, L2) + 0.05) / (Math.min(L1, L2) + 0.05);
        const size = parseFloat(cs.fontSize);
        const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
        if (ratio < (large ? 3 : 4.5)) out.push(`${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}.${e.className} "${t.textContent.trim().slice(0, 30)}": ${ratio.toFixed(2)}`);
      }
      return out;
    });
    assert(bad.length === 0, `low contrast: ${bad.slice(0, 15).join("; ")}`);
    await page.getByLabel("Example workload").selectOption({ index: 0 });
  }],

  ["usable from the keyboard with a visible focus", async ({ page }) => {
    await page.goto("/");
    await page.waitForSelector("body[data-ready='1']");
    await page.keyboard.press("Tab");
    assert((await page.evaluate(() => document.activeElement.className)) === "skip", "the first Tab reaches the skip link");
    const order = [];
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press("Tab");
      const f = await page.evaluate(() => {
        const e = document.activeElement;
        const cs = getComputedStyle(e);
        return { id: e.id || e.textContent.trim().slice(0, 20), outline: cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) >= 2 };
      });
      order.push(f);
    }
    const ids = order.map((f) => f.id);
    for (const want of ["example", "hw-a", "hw-b", "knob-batch", "knob-precision", "knob-gpus", "plan-nodes", "plan-run"]) {
      assert(ids.includes(want), `Tab reaches #${want} (order: ${ids.join(", ")})`);
    }
    assert(ids.indexOf("example") < ids.indexOf("hw-a") && ids.indexOf("hw-a") < ids.indexOf("knob-batch"), "Tab order follows the page");
    const noRing = order.filter((f) => !f.outline).map((f) => f.id);
    assert(noRing.length === 0, `focus ring visible on every stop (not on: ${noRing})`);
    // a select changes from the keyboard and the prediction follows
    await page.focus("#knob-ckpt");
    await page.keyboard.press("ArrowDown");
    assert((await page.inputValue("#knob-ckpt")) === "selective", "ArrowDown picks the next option");
  }],

  ["fits a laptop screen", async ({ page, shot }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto("/");
    await page.waitForFunction(() => Number(document.body.dataset.predictions || 0) > 0);
    const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert(over <= 0, `no horizontal scrolling at 1280 px (${over} px too wide)`);
    const font = await page.evaluate(() => parseFloat(getComputedStyle(document.body).fontSize));
    assert(font >= 14, `body text at least 14 px (${font})`);
    await shot("laptop", { fullPage: false });
  }],
]);
