// api.js: calls to the cdplan REST API and the display of its errors.
// Every failure becomes an ApiError carrying the server's {code, message,
// field}; renderError shows it in the page (nothing is swallowed).

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
    throw new ApiError({
      status: res.status,
      code: er.code || `http_${res.status}`,
      message: er.message || text.slice(0, 300) || res.statusText,
      field: er.field || "",
      method,
      path,
      hint: missingEndpointHint(res.status, method, path, doc, res.headers.get("Allow")),
    });
  }
  if (doc === null) {
    throw new ApiError({ status: res.status, code: "bad_response", message: "the server's answer is not JSON", method, path });
  }
  return doc;
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
