// api.js: calls to the cdplan REST API and the display of its errors.
// Every failure becomes an ApiError carrying the server's {code, message,
// field}; renderError shows it in the page (nothing is swallowed).
// The API token (sessionStorage, so it ends with the tab) goes with every
// call as "Authorization: Bearer ..."; 401/403 answers are also told to the
// listeners of onAuth, which show them at the top of the page.

const TOKEN_KEY = "cdplan.token";

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return "";
  }
}

export function setToken(t) {
  try {
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage refused (private mode): the token lasts until the page reloads */
  }
}

// The scope a route needs (server/server.c's route table; README,
// "Authentication"): shown when the server refuses a call.
export function scopeFor(method, path) {
  const p = path.split("?")[0];
  if (method === "GET" || method === "HEAD") return "read";
  if (["/v1/estimate", "/v1/step", "/v1/kernels/select"].includes(p)) return "read";
  if (p === "/v1/plans" || p === "/v1/compare") return "plan";
  if (p.startsWith("/v1/validations") && !p.endsWith("/calibrate")) return "dispatch";
  return "admin";
}

const authListeners = [];
// fn({ok, method, path, err}) after every /v1 call: err is the ApiError
// of a 401/403, ok is true for an answer that passed the auth check.
export function onAuth(fn) {
  authListeners.push(fn);
}

function tellAuth(ev) {
  for (const fn of authListeners) {
    try {
      fn(ev);
    } catch {
      /* a listener's failure must not break the call */
    }
  }
}

export class ApiError extends Error {
  constructor({ status = 0, code = "error", message = "", field = "", method = "", path = "", hint = "" }) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
    this.method = method;
    this.path = path;
    this.hint = hint;
  }
}

// A request that no route of this server takes: unmatched POSTs fall
// through to the static files (405, Allow: GET, HEAD), unmatched GETs under
// /v1 find no file (404 "no such ...").
function missingEndpointHint(status, method, path, doc, allow) {
  if (!path.startsWith("/v1/")) return "";
  const msg = (doc && doc.error && doc.error.message) || "";
  const route = `${method} ${path.split("?")[0]}`;
  if (status === 405 && method !== "GET" && !new RegExp(`\\b${method}\\b`).test(allow || "")) {
    return `This server does not offer ${route} (yet): it allows ${allow || "other methods"} there.`;
  }
  if (status === 404 && /no such (file|path|route)/i.test(msg)) {
    return `This server has no route for ${route} (yet).`;
  }
  return "";
}

// fetch JSON. body undefined = no body. Throws ApiError, or the AbortError
// of a superseded request (callers ignore those).
export async function api(method, path, body, { signal } = {}) {
  const init = { method, signal, headers: { Accept: "application/json" } };
  const token = getToken();
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    if (e && e.name === "AbortError") throw e;
    throw new ApiError({ code: "network", message: `could not reach the server (${e && e.message})`, method, path });
  }
  const text = await res.text();
  let doc = null;
  try {
    doc = text ? JSON.parse(text) : null;
  } catch {
    doc = null;
  }
  if (!res.ok) {
    const er = (doc && doc.error) || {};
    const e = new ApiError({
      status: res.status,
      code: er.code || `http_${res.status}`,
      message: er.message || text.slice(0, 300) || res.statusText,
      field: er.field || "",
      method,
      path,
      hint: missingEndpointHint(res.status, method, path, doc, res.headers.get("Allow")),
    });
    if (res.status === 401 || res.status === 403) {
      e.scope = scopeFor(method, path);
      e.hint = e.hint || authHint(e, token);
      tellAuth({ ok: false, method, path, err: e });
    } else {
      tellAuth({ ok: true, method, path });
    }
    throw e;
  }
  tellAuth({ ok: true, method, path });
  if (doc === null) {
    throw new ApiError({ status: res.status, code: "bad_response", message: "the server's answer is not JSON", method, path });
  }
  return doc;
}

// What to do about a refused call, in words.
export function authHint(e, token) {
  if (e.status === 401 || !token)
    return `This server needs an API token: paste one that holds the '${e.scope}' scope under "API token" at the top (an operator makes one with: cdplan token create --scope ${e.scope}).`;
  const m = /lacks the '(\w+)' scope/.exec(e.message);
  if (m) return `Your token lacks the '${m[1]}' scope that ${e.method} ${e.path.split("?")[0]} needs: use a token made with --scope ${m[1]}.`;
  return `The server does not accept your token (mistyped, revoked or from another server); ${e.method} ${e.path.split("?")[0]} needs the '${e.scope}' scope.`;
}

export function isAbort(e) {
  return e && e.name === "AbortError";
}

function el(tag, attrs = {}, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") n.className = v;
    else n.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) n.append(k);
  return n;
}

// Show err (an ApiError or any Error) in slot; label says what failed.
export function renderError(slot, err, label = "") {
  if (!slot) return;
  slot.replaceChildren(errorBox(err, label));
}

export function errorBox(err, label = "") {
  const e = err instanceof ApiError ? err : new ApiError({ code: "client", message: String((err && err.message) || err) });
  const where = [label, e.method && `${e.method} ${e.path}`, e.status ? `HTTP ${e.status}` : ""].filter(Boolean).join(" · ");
  const box = el("div", { class: "error", role: "alert", "data-code": e.code, "data-field": e.field || "" });
  box.append(el("p", { class: "where" }, where || "Error"));
  box.append(el("p", {}, el("code", { class: "err-code" }, e.code), " ", el("span", { class: "err-message" }, e.message)));
  if (e.field) box.append(el("p", {}, "field: ", el("code", { class: "err-field" }, e.field)));
  if (e.hint) box.append(el("p", { class: "err-hint" }, e.hint));
  return box;
}

export function clearError(slot) {
  if (slot) slot.replaceChildren();
}
