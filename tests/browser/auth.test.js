// auth.test.js: the sign-in flow against a server whose database holds
// tokens (made with the real `cdplan token create`): with no token the page
// says what to do, a pasted read token (kept in sessionStorage) is sent on
// every API call and shows the catalog and predictions, and a call needing
// a scope the token lacks is shown at the top with that scope.
"use strict";
const { execFileSync } = require("node:child_process");
const path = require("node:path");
const { run, assert } = require("./lib.js");

function makeToken(tmp, scope) {
  const out = execFileSync(process.env.CDPLAN_BIN, ["token", "create", "--scope", scope, "--db", path.join(tmp, "cdplan.db")], { encoding: "utf8" });
  return JSON.parse(out).token;
}

async function get(base, p, token) {
  const r = await fetch(base + p, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  return { status: r.status, doc: await r.json().catch(() => null) };
}

let readToken = "";
const sent = [];

run(__filename, [
  ["with a token in the database and none in the page, the page says what to do", async ({ page, tmp, base, shot }) => {
    readToken = makeToken(tmp, "read");
    // the server sees tokens made by the CLI within a second
    for (let i = 0; i < 30 && (await get(base, "/v1/hardware")).status !== 401; i++) await new Promise((r) => setTimeout(r, 200));
    assert((await get(base, "/v1/hardware")).status === 401, "the server now requires a token");
    await page.goto("/");
    await page.waitForSelector("body[data-ready='1']");
    const banner = page.locator("#auth-banner");
    await banner.waitFor();
    const text = await banner.innerText();
    assert(/needs an API token/.test(text), `banner says a token is needed: ${text}`);
    assert(/cdplan token create --scope read/.test(text), `banner says how to get one: ${text}`);
    assert(/GET \/v1\/hardware/.test(text) && /HTTP 401/.test(text), `banner names the refused call: ${text}`);
    assert(await page.locator("#token").isVisible(), "the token field is open");
    // at the top: above the first panel
    const b = await banner.boundingBox();
    const m = await page.locator("#main").boundingBox();
    const h = await page.locator("header.top").boundingBox();
    assert(b.y < m.y && Math.abs(b.y - (h.y + h.height)) < 2, `banner right under the header (y ${b.y}, header ends ${h.y + h.height}, main at ${m.y})`);
    await shot("no-token");
  }],

  ["a pasted read token is kept and sent on every call; catalog and prediction appear", async ({ page, base, shot }) => {
    page.on("request", (r) => {
      if (new URL(r.url()).pathname.startsWith("/v1/")) sent.push({ url: r.url(), auth: r.headers().authorization || "" });
    });
    await page.getByLabel("API token (kept in this tab only)").fill(readToken);
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Use token" }).click()]);
    await page.waitForSelector("body[data-ready='1']");
    await page.waitForFunction(() => Number(document.body.dataset.predictions || 0) > 0);
    await page.waitForSelector("#sum-a-step");
    assert((await page.evaluate(() => sessionStorage.getItem("cdplan.token"))) === readToken, "token kept in sessionStorage");
    assert(await page.locator("#auth-banner").isHidden(), "no refusal shown");
    const hw = await get(base, "/v1/hardware", readToken);
    assert(hw.status === 200, `the API answers the token: ${hw.status}`);
    const names = await page.locator("#catalog tbody tr").evaluateAll((trs) => trs.map((t) => t.dataset.name).sort());
    const rows = names.length;
    assert(rows > 0 && JSON.stringify(names) === JSON.stringify(hw.doc.hardware.map((h) => h.name).sort()), `catalog rows ${rows} match the API's ${hw.doc.hardware.length} accelerators`);
    const stepText = await page.locator("#sum-a-step").innerText();
    assert(/\d.*ms/.test(stepText), `a step time is shown: ${stepText}`);
    assert(sent.length >= 3, `several API calls seen (${sent.length})`);
    const bare = sent.filter((s) => s.auth !== `Bearer ${readToken}`);
    assert(bare.length === 0, `every /v1 call carries the token (not: ${bare.map((s) => s.url).join(", ")})`);
    await shot("read-token");
  }],

  ["a call needing the plan scope is shown at the top with the missing scope", async ({ page, shot }) => {
    await page.getByRole("button", { name: "Run plan" }).click();
    const banner = page.locator("#auth-banner");
    await banner.waitFor();
    const item = banner.locator("li[data-scope='plan']");
    await item.waitFor();
    const text = await banner.innerText();
    assert(/POST \/v1\/plans/.test(text) && /HTTP 403/.test(text), `banner names the call: ${text}`);
    assert(/lacks the 'plan' scope/.test(text), `banner names the missing scope: ${text}`);
    assert(/--scope plan/.test(text), `banner says what to do: ${text}`);
    // the plan panel shows it too
    await page.locator("#plan-error .error").waitFor();
    await shot("missing-scope");
  }],

  ["a wrong token is refused at the top, and forgetting it returns to the no-token page", async ({ page }) => {
    await page.locator("#signin summary").click();
    await page.getByLabel("API token (kept in this tab only)").fill("cdp_" + "0".repeat(64));
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Use token" }).click()]);
    await page.waitForSelector("body[data-ready='1']");
    const banner = page.locator("#auth-banner");
    await banner.waitFor();
    const text = await banner.innerText();
    assert(/HTTP 403/.test(text) && /does not accept your token/.test(text), `wrong token explained: ${text}`);
    await page.locator("#signin summary").click().catch(() => {});
    if (!(await page.locator("#token-forget").isVisible())) await page.locator("#signin summary").click();
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Forget token" }).click()]);
    await page.waitForSelector("body[data-ready='1']");
    assert((await page.evaluate(() => sessionStorage.getItem("cdplan.token"))) === null, "token forgotten");
    await banner.waitFor();
    assert(/needs an API token/.test(await banner.innerText()), "back to the no-token page");
  }],
]);
