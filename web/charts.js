// charts.js: the dashboard's charts on Chart.js (global Chart from
// vendor/chartjs-4.6.1), each with a text table beside it for screen
// readers and for copying figures.

// Okabe-Ito palette (distinguishable with colour-vision deficiencies).
export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];

const charts = new Map();

function ChartLib() {
  if (!window.Chart) throw new Error("the chart library (vendor/chartjs-4.6.1) did not load");
  return window.Chart;
}

let defaultsSet = false;
function setDefaults() {
  if (defaultsSet) return;
  const C = ChartLib();
  C.defaults.font.family = getComputedStyle(document.documentElement).fontFamily;
  C.defaults.font.size = 12;
  C.defaults.color = "#1b1f24";
  C.defaults.animation = false; // updates follow the knobs; no lag, stable screenshots
  C.defaults.maintainAspectRatio = false;
  defaultsSet = true;
}

// Create or replace the chart on canvas id.
export function draw(id, config) {
  setDefaults();
  const C = ChartLib();
  const old = charts.get(id);
  if (old) old.destroy();
  const canvas = document.getElementById(id);
  canvas.parentElement.hidden = false;
  const ch = new C(canvas, config);
  charts.set(id, ch);
  return ch;
}

export function clear(id) {
  const old = charts.get(id);
  if (old) old.destroy();
  charts.delete(id);
  const canvas = document.getElementById(id);
  if (canvas) canvas.parentElement.hidden = true;
}

// A long category label as lines of at most `width` characters (Chart.js
// draws an array label as several lines), so that it is never cut.
export function wrapLabel(text, width = 22) {
  const words = String(text).split(/(?<=[ ,_])/);
  const lines = [];
  let cur = "";
  for (const w of words) {
    if (cur && (cur + w).length > width) {
      lines.push(cur.trim());
      cur = "";
    }
    cur += w;
  }
  if (cur.trim()) lines.push(cur.trim());
  return lines.length > 1 ? lines : lines[0] || "";
}

// Log-axis ticks: label the powers of ten only.
export const decadeTicks = {
  callback: (v) => {
    const l = Math.log10(v);
    return Math.abs(l - Math.round(l)) < 1e-9 ? Number(v).toLocaleString("en-US") : "";
  },
  autoSkip: false,
};

// A stacked bar chart: labels along x, one dataset per series.
export function stackedBars(id, labels, series, { unit = "", horizontal = false, extra = [] } = {}) {
  const datasets = series.map((s, i) => ({
    label: s.label,
    data: s.data,
    backgroundColor: s.color || PALETTE[i % PALETTE.length],
    stack: s.stack || "main",
  }));
  for (const e of extra) datasets.push(e);
  const valueAxis = { stacked: true, beginAtZero: true, title: { display: !!unit, text: unit } };
  return draw(id, {
    type: "bar",
    data: { labels, datasets },
    options: {
      indexAxis: horizontal ? "y" : "x",
      scales: horizontal ? { x: valueAxis, y: { stacked: true } } : { x: { stacked: true }, y: valueAxis },
      plugins: {
        legend: { position: "bottom" },
        tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${fmt(c.parsed[horizontal ? "x" : "y"])} ${unit}` } },
      },
    },
  });
}

// Numbers as people read them: never an exponent. Plain numbers keep
// digits + 1 significant digits; from a million up they take an SI prefix.
export function fmt(v, digits = 3) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  if (typeof v !== "number") return String(v);
  if (!Number.isFinite(v)) return v > 0 ? "∞" : "−∞";
  if (Math.abs(v) >= 1e6) return si(v);
  return v.toLocaleString("en-US", { maximumSignificantDigits: digits + 1 });
}

const PREFIX = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];

function sig3(x) {
  return x.toLocaleString("en-US", { maximumSignificantDigits: 3 });
}

// 25,800,000 -> "25.8 M", 12,345 -> "12.3 k", 812 -> "812".
export function si(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return fmt(v);
  const a = Math.abs(v);
  for (const [f, p] of PREFIX) if (a >= f * 0.9995) return `${sig3(v / f)} ${p}`;
  return sig3(v);
}

// A rate: fmtRate(2.58e7, "samples") -> "25.8 M samples/s".
export function fmtRate(v, what = "") {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  return `${si(v)} ${what}/s`.replace(" /s", "/s");
}

// Milliseconds with three significant digits (whole ms from 100 up), in
// µs below 0.01 ms: "152 ms", "12.4 ms", "1.23 ms", "0.123 ms", "4.5 µs".
export function fmtMs(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  if (a >= 100) return `${Math.round(v).toLocaleString("en-US")} ms`;
  if (a > 0 && a < 0.01) return `${sig3(v * 1000)} µs`;
  return `${sig3(v)} ms`;
}

// Memory sizes in binary units, as HBM capacities are built (the catalog's
// hbm_bytes for the H200 is 141 × 2^30): GiB = 2^30 bytes, MiB below 1 GiB.
// Bandwidths stay decimal (GB/s, TB/s = 10^9, 10^12 bytes/s) as in the
// datasheets and the API's *_bytes_per_s fields.
export const GiB = 2 ** 30;
export function fmtBytes(b) {
  if (b === null || b === undefined || !Number.isFinite(b)) return "–";
  if (Math.abs(b) >= GiB || b === 0) return `${sig3(b / GiB)} GiB`;
  return `${sig3(b / 2 ** 20)} MiB`;
}

// Fill container with a table: columns [{label, get, cls}], rows.
export function table(container, columns, rows, caption = "") {
  const t = document.createElement("table");
  t.className = "data";
  if (caption) {
    const c = t.createCaption();
    c.textContent = caption;
    c.className = "sr-only";
  }
  const hr = t.createTHead().insertRow();
  for (const col of columns) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = col.label;
    if (col.cls) th.className = col.cls;
    hr.append(th);
  }
  const body = t.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    for (const col of columns) {
      const td = tr.insertCell();
      const v = col.get(r);
      if (v instanceof Node) td.append(v);
      else td.textContent = typeof v === "number" ? fmt(v) : v ?? "–";
      if (col.cls) td.className = col.cls;
    }
  }
  // a wide table scrolls inside its panel, never the page
  container.classList.add("table-wrap");
  container.replaceChildren(t);
  return t;
}
