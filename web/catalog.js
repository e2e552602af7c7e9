// catalog.js: the hardware catalog as a sortable table. Each figure's
// source shows on hover (title); a row's "Sources" button lists all of
// them in a box under the table.

import { fmt } from "./charts.js";

const GB = 1e9; // bandwidths: decimal, as the datasheets
const GiB = 2 ** 30; // capacities: binary (H200 hbm_bytes = 141 × 2^30)
const peak = (d) => (h) => (h.peak_tflops && h.peak_tflops[d]) ?? null;

export const COLUMNS = [
  { key: "name", label: "Name", text: true, get: (h) => h.name, src: null },
  { key: "vendor", label: "Vendor", text: true, get: (h) => h.vendor, src: null },
  { key: "arch", label: "Arch", text: true, get: (h) => h.arch, src: null },
  { key: "compute_units", label: "CUs/SMs", get: (h) => h.compute_units, src: "compute_units" },
  { key: "clock_mhz", label: "Clock MHz", get: (h) => h.clock_mhz, src: "clock_mhz" },
  { key: "hbm", label: "HBM GiB", get: (h) => h.hbm_bytes / GiB, src: "hbm_bytes" },
  { key: "hbm_usable", label: "Usable GiB", get: (h) => (h.hbm_usable_bytes ?? null) && h.hbm_usable_bytes / GiB, src: "hbm_usable_bytes" },
  { key: "bw", label: "HBM TB/s", get: (h) => h.hbm_bandwidth_bytes_per_s / 1e12, src: "hbm_bandwidth_bytes_per_s" },
  { key: "bf16", label: "BF16 TFLOP/s", get: peak("bf16"), src: "peak_tflops" },
  { key: "fp8", label: "FP8 TFLOP/s", get: peak("fp8"), src: "peak_tflops" },
  { key: "fp32", label: "FP32 TFLOP/s", get: peak("fp32"), src: "peak_tflops" },
  { key: "l2", label: "L2 MiB", get: (h) => (h.l2_bytes ?? null) && h.l2_bytes / 2 ** 20, src: "l2_bytes" },
  { key: "scaleup", label: "Scale-up GB/s", get: (h) => (h.scaleup_bandwidth_bytes_per_s ?? null) && h.scaleup_bandwidth_bytes_per_s / GB, src: "scaleup_bandwidth_bytes_per_s" },
  { key: "hostlink", label: "Host link GB/s", get: (h) => (h.host_link_bandwidth_bytes_per_s ?? null) && h.host_link_bandwidth_bytes_per_s / GB, src: "host_link_bandwidth_bytes_per_s" },
  { key: "tdp", label: "TDP W", get: (h) => h.tdp_watts ?? null, src: "tdp_watts" },
  { key: "price", label: "$/h", get: (h) => h.price_per_hour_usd ?? null, src: "price_per_hour_usd" },
];

function linkify(text) {
  const frag = document.createDocumentFragment();
  const re = /https?:\/\/[^\s,;)]+/g;
  let last = 0;
  let m;
  while ((m = re.exec(text))) {
    frag.append(text.slice(last, m.index));
    const a = document.createElement("a");
    a.href = m[0];
    a.textContent = m[0];
    a.rel = "noreferrer noopener";
    a.target = "_blank";
    frag.append(a);
    last = m.index + m[0].length;
  }
  frag.append(text.slice(last));
  return frag;
}

export class Catalog {
  constructor(table, box = null) {
    this.table = table;
    this.box = box; // where a row's sources are listed
    this.shown = null;
    this.rows = [];
    this.sortKey = "name";
    this.sortDir = 1;
  }

  set(hardware) {
    this.rows = hardware.slice();
    this.renderHead();
    this.renderBody();
  }

  sortBy(key) {
    if (this.sortKey === key) this.sortDir = -this.sortDir;
    else {
      this.sortKey = key;
      const col = COLUMNS.find((c) => c.key === key);
      this.sortDir = col && col.text ? 1 : -1; // figures: largest first
    }
    this.renderHead();
    this.renderBody();
  }

  renderHead() {
    const tr = document.createElement("tr");
    for (const col of COLUMNS) {
      const th = document.createElement("th");
      th.scope = "col";
      th.dataset.key = col.key;
      if (col.text) th.className = "text";
      th.setAttribute("aria-sort", col.key === this.sortKey ? (this.sortDir > 0 ? "ascending" : "descending") : "none");
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = col.label;
      b.setAttribute("aria-label", `Sort by ${col.label}`);
      b.addEventListener("click", () => {
        this.sortBy(col.key);
        this.table.querySelector(`th[data-key="${col.key}"] button`).focus();
      });
      th.append(b);
      tr.append(th);
    }
    const th = document.createElement("th");
    th.scope = "col";
    th.className = "text";
    th.textContent = "Sources";
    tr.append(th);
    this.table.tHead.replaceChildren(tr);
  }

  renderBody() {
    const col = COLUMNS.find((c) => c.key === this.sortKey) || COLUMNS[0];
    const dir = this.sortDir;
    const rows = this.rows.slice().sort((a, b) => {
      const va = col.get(a), vb = col.get(b);
      if (va === null || va === undefined) return 1; // missing last either way
      if (vb === null || vb === undefined) return -1;
      const c = typeof va === "number" && typeof vb === "number" ? va - vb : String(va).localeCompare(String(vb));
      return c * dir || a.name.localeCompare(b.name);
    });
    const body = this.table.tBodies[0];
    body.replaceChildren();
    for (const h of rows) {
      const tr = body.insertRow();
      tr.dataset.name = h.name;
      for (const c of COLUMNS) {
        const td = tr.insertCell();
        td.dataset.key = c.key;
        const v = c.get(h);
        td.textContent = v === null || v === undefined ? "–" : typeof v === "number" ? fmt(v) : v;
        if (c.text) td.className = "text";
        const src = c.src && h.sources && h.sources[c.src];
        if (src) td.title = `Source: ${src}`;
        if (c.key === "name") {
          td.replaceChildren(Object.assign(document.createElement("strong"), { textContent: h.name }));
          if (h.display_name) td.append(Object.assign(document.createElement("span"), { className: "model", textContent: h.display_name }));
        }
      }
      const td = tr.insertCell();
      td.className = "text";
      const n = Object.keys(h.sources || {}).length;
      const b = document.createElement("button");
      b.type = "button";
      b.className = "link";
      b.textContent = `Sources (${n})`;
      b.setAttribute("aria-label", `Sources for ${h.name} (${n})`);
      b.setAttribute("aria-controls", this.box ? this.box.id : "");
      b.setAttribute("aria-expanded", String(this.shown === h.name));
      b.addEventListener("click", () => this.showSources(this.shown === h.name ? null : h.name));
      td.append(b);
    }
  }

  // Every source of one accelerator, below the table (a list inside a cell
  // would widen its column far past the panel): null closes it.
  showSources(name) {
    const box = this.box;
    if (!box) return;
    const h = name && this.rows.find((r) => r.name === name);
    this.shown = h ? name : null;
    for (const b of this.table.querySelectorAll("tbody button[aria-expanded]"))
      b.setAttribute("aria-expanded", String(!!h && b.closest("tr").dataset.name === name));
    if (!h) {
      box.hidden = true;
      box.replaceChildren();
      return;
    }
    const head = document.createElement("h3");
    head.textContent = `Sources for ${h.display_name || h.name} (${h.name})`;
    const ul = document.createElement("ul");
    for (const [k, v] of Object.entries(h.sources || {})) {
      const li = document.createElement("li");
      const code = document.createElement("code");
      code.textContent = k;
      li.append(code, ": ", linkify(String(v)));
      ul.append(li);
    }
    if (h.calibration && h.calibration.version) {
      const li = document.createElement("li");
      li.textContent = `calibration version ${h.calibration.version}`;
      ul.append(li);
    }
    if (h.notes) {
      const li = document.createElement("li");
      li.textContent = `notes: ${h.notes}`;
      ul.append(li);
    }
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "Close sources";
    close.addEventListener("click", () => {
      const back = this.table.querySelector(`tbody tr[data-name="${CSS.escape(name)}"] button[aria-expanded]`);
      this.showSources(null);
      if (back) back.focus();
    });
    box.dataset.name = h.name;
    box.replaceChildren(head, ul, close);
    box.hidden = false;
    box.focus({ preventScroll: true });
    box.scrollIntoView({ block: "nearest" });
  }
}
