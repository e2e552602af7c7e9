// valsubmit.test.js: validation runs started from the page. A CPU
// self-test submitted through the form (POST /v1/validations) is followed
// to its end and its predicted against measured drawn as the API reports
// it; refusals (bad JSON, the server's 400, a token without the dispatch
// scope) are shown at the top of the panel with the API's code and field.
// "Validate this plan" calls POST /v1/plans/{id}/validations: where the
// server documents that route the created jobs are listed as it answers,
// and where it does not the page shows the server's 404/405 and says the
// route is missing.
"use strict";
const { execFileSync } = require("node:child_process");
const path = require("node:path");
const { run, assert, openDashboard, apiCall } = require("./lib.js");

const PLAN_VAL = "/v1/plans/{id}/validations";

// The top error of the validation panel lies above the submit form.
async function topError(page) {
  const box = page.locator("#val-error .error");
  await box.waitFor();
  const y = (await box.boundingBox()).y, form = (await page.locator("#val-submit-form").boundingBox()).y;
  assert(y < form, `the error sits at the top of the panel (${y} < form ${form})`);
  return { code: await box.getAttribute("data-code"), field: await box.getAttribute("data-field"), text: await box.innerText() };
}

run(__filename, [
  ["a CPU self-test submitted from the page runs and is reported", async ({ page, base, shot }) => {
    await openDashboard(page);
    await page.getByLabel("Kind").selectOption("cpu_selftest");
    await page.getByLabel("Parameters (JSON object)").fill('{"n": 1000}');
    await page.getByLabel("Prediction (JSON, optional)").fill('{"metric": "result.sum", "cases": [{"value": 500000}]}');
    await page.getByRole("button", { name: "Submit validation run" }).click();
    await page.waitForFunction(() => Number(document.body.dataset.submitted || 0) > 0);
    const id = await page.evaluate(() => document.body.dataset.submitted);
    await page.waitForFunction(() => /: (done|failed|cancelled)/.test(document.getElementById("vs-status").textContent), null, { timeout: 60000 });
    const job = (await apiCall(base, "GET", `/v1/validations/${id}`)).doc;
    assert(job.kind === "cpu_selftest" && job.hardware === "h200" && job.backend === "local" && job.params.n === 1000, `the API holds the job as sent: ${JSON.stringify(job).slice(0, 200)}`);
    assert(job.state === "done", `the job finished: ${job.state} ${job.note || ""}`);
    assert((await page.textContent("#vs-status")).includes(`Validation #${id} (cpu_selftest on h200, local): done`), await page.textContent("#vs-status"));
    assert((await page.inputValue("#val-id")) === id, "the run's id is ready to load");
    await page.waitForFunction(() => /median error/.test(document.getElementById("val-status").textContent));
    const rep = (await apiCall(base, "GET", `/v1/validations/${id}/report`)).doc;
    const cells = await page.locator("#val-table tbody tr").first().locator("td").allTextContents();
    assert(Number(cells[2].replace(/,/g, "")) === rep.cases[0].predicted && Number(cells[3].replace(/,/g, "")) === rep.cases[0].measured, `drawn ${cells} = report ${JSON.stringify(rep.cases[0])}`);
    await shot("submitted");
  }],

  ["refusals are shown at the top of the panel", async ({ page, base }) => {
    await page.getByLabel("Parameters (JSON object)").fill("{");
    await page.getByRole("button", { name: "Submit validation run" }).click();
    let e = await topError(page);
    assert(e.code === "bad_json" && e.field === "params", `bad JSON names params: ${JSON.stringify(e)}`);
    // the server's own 400, as the API answers the same body
    await page.getByLabel("Parameters (JSON object)").fill('{"n": 10}');
    await page.getByLabel("Prediction (JSON, optional)").fill('{"cases": 5}');
    const api = await apiCall(base, "POST", "/v1/validations", { kind: "cpu_selftest", hardware: "h200", backend: "local", timeout_s: 600, params: { n: 10 }, prediction: { cases: 5 } });
    assert(api.status === 400, `the API refuses it: ${api.status}`);
    await page.getByRole("button", { name: "Submit validation run" }).click();
    await page.waitForFunction(() => /HTTP 400/.test(document.getElementById("val-error").textContent));
    e = await topError(page);
    assert(e.code === api.doc.error.code && e.field === api.doc.error.field && e.text.includes(api.doc.error.message), `shown as the API answers: ${JSON.stringify(e)} vs ${JSON.stringify(api.doc)}`);
    await page.getByLabel("Prediction (JSON, optional)").fill("");
  }],

  ["validate this plan", async ({ page, base, routes, shot }) => {
    await page.getByLabel("Time limit (s)").fill("3");
    await page.getByRole("button", { name: "Run plan" }).click();
    await page.locator("#plan-result").waitFor({ state: "visible", timeout: 60000 });
    const plan = JSON.parse(await page.textContent("#plan-raw"));
    const p = `/v1/plans/${plan.id}/validations`;
    await page.getByRole("button", { name: "Validate this plan" }).click();
    if (routes.has(PLAN_VAL)) {
      // the route exists: the jobs listed are the ones the API now holds for it
      await page.locator("#plan-val-list").waitFor({ timeout: 60000 });
      const ids = await page.locator("#plan-val-list li").evaluateAll((li) => li.map((l) => l.dataset.id));
      assert(ids.length >= 1, "jobs listed");
      for (const id of ids) {
        const j = await apiCall(base, "GET", `/v1/validations/${id}`);
        assert(j.status === 200, `job ${id} exists in the API`);
      }
      // the plan's stored validation, drawn once both jobs are final (on a
      // machine with no GPU the runner refuses them: "failed" with a reason),
      // checked cell by cell against GET /v1/plans/{id}
      await page.waitForFunction(() => {
        const rows = [...document.querySelectorAll("#plan-val-table tr[data-state]")];
        return rows.length === 2 && rows.every((r) => ["done", "failed", "cancelled"].includes(r.dataset.state));
      }, null, { timeout: 90000 });
      const v = (await apiCall(base, "GET", `/v1/plans/${plan.id}`)).doc.validation;
      assert(v && v.baseline && v.planned, `the plan carries its validation: ${JSON.stringify(v)}`);
      const drawn = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#plan-val-table tr[data-side]")].map((r) => [r.dataset.side, {
        state: r.dataset.state,
        pred: r.querySelector(".pred-step, .pred-gain").dataset.v,
        meas: r.querySelector(".meas-step, .meas-gain").dataset.v,
      }])));
      const same = (d, x) => (x === null || x === undefined ? d === "" : Math.abs(Number(d) - x) <= 1e-9 * Math.max(1, Math.abs(x)));
      for (const side of ["baseline", "planned"]) {
        const s = v[side];
        assert(drawn[side].state === s.state, `${side} state drawn ${drawn[side].state}, API ${s.state}`);
        assert(same(drawn[side].pred, s.predicted.step_ms), `${side} predicted step drawn ${drawn[side].pred}, API ${s.predicted.step_ms}`);
        assert(same(drawn[side].meas, s.measured && s.measured.step_ms), `${side} measured step drawn ${drawn[side].meas}, API ${JSON.stringify(s.measured)}`);
      }
      assert(same(drawn.gain.pred, v.gain.predicted) && same(drawn.gain.meas, v.gain.measured), `gain drawn ${JSON.stringify(drawn.gain)}, API ${JSON.stringify(v.gain)}`);
    } else {
      const box = page.locator("#plan-val-error .error");
      await box.waitFor();
      const text = await box.innerText();
      const api = await apiCall(base, "POST", p, { backend: "local" });
      assert([404, 405].includes(api.status), `the server has no such route yet (${api.status})`);
      assert(text.includes(`POST ${p}`) && text.includes(`HTTP ${api.status}`) && text.includes(api.doc.error.message), `the API's answer is shown: ${text}`);
      assert(/no route for POST|does not offer POST/.test(text), `the page says the route is missing: ${text}`);
      assert(/Not validated/.test(await page.textContent("#plan-val-status")), "status says so");
    }
    await shot("validate-plan");
  }],

  ["a token without the dispatch scope: refused at the top with the scope named", async ({ page, base, tmp }) => {
    const out = execFileSync(process.env.CDPLAN_BIN, ["token", "create", "--scope", "read", "--db", path.join(tmp, "cdplan.db")], { encoding: "utf8" });
    const token = JSON.parse(out).token;
    for (let i = 0; i < 30 && (await apiCall(base, "GET", "/v1/hardware")).status !== 401; i++) await new Promise((r) => setTimeout(r, 200));
    await page.evaluate((t) => sessionStorage.setItem("cdplan.token", t), token);
    await openDashboard(page);
    await page.getByRole("button", { name: "Submit validation run" }).click();
    const e = await topError(page);
    assert(/HTTP 403/.test(e.text), `refused: ${e.text}`);
    const li = page.locator('#auth-banner li[data-status="403"]');
    await li.waitFor();
    assert((await li.getAttribute("data-scope")) === "dispatch" && /POST \/v1\/validations/.test(await li.innerText()), `the banner names the dispatch scope: ${await li.innerText()}`);
  }],
]);
