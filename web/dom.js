// dom.js: the one DOM helper the dashboard's modules share.

// el("div", {class: "x", text: "y", title: "z"}, kid, ...): a new element;
// kids that are null, undefined or false are left out (for `cond && kid`).
export function el(tag, attrs = {}, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") n.className = v;
    else if (k === "text") n.textContent = v;
    else n.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined && k !== false) n.append(k);
  return n;
}
