// gemms.js: the main GEMMs of one training step of a workload under a
// recipe, as /v1/estimate ops (per GPU: m is the per-GPU batch). Forward,
// input gradient (dgrad) and weight gradient (wgrad) of every MLP layer
// (DLRM) or of the projections of one block and the LM head (transformer).

const GEMM_DTYPES = new Set(["bf16", "fp16", "tf32", "fp32", "fp8"]);

export function gemmDtype(precision) {
  return GEMM_DTYPES.has(precision) ? precision : "bf16";
}

function roundUp(x, m) {
  return m > 1 ? Math.ceil(x / m) * m : x;
}

// Sizes go to the server as given (it validates them and names the op's
// field); only what cannot be turned into a shape at all throws here.
function int(v, what) {
  if (typeof v === "number") return v;
  if (v === undefined || v === null) throw new Error(`workload.${what} is missing`);
  const n = Number(v);
  if (Number.isNaN(n)) throw new Error(`workload.${what} must be a number (got ${JSON.stringify(v)})`);
  return n;
}

function layer(list, name, m, n, k, dtype, passes) {
  list.push({ name: `${name} fwd`, op: { op: "gemm", m, n, k, dtype } });
  if (passes.dgrad) list.push({ name: `${name} dgrad`, op: { op: "gemm", m, n: k, k: n, dtype } });
  list.push({ name: `${name} wgrad`, op: { op: "gemm", m: k, n, k: m, dtype } });
}

// A batched GEMM of more than MAX_BATCH problems is priced as `repeat`
// calls of at most MAX_BATCH each (the estimate API's limit on batch).
const MAX_BATCH = 65536;
function batched(list, name, m, n, k, dtype, batch) {
  const repeat = Math.max(1, Math.ceil(batch / MAX_BATCH));
  list.push({ name, op: { op: "gemm", m, n, k, dtype, batch: Math.ceil(batch / repeat) }, repeat });
}

// Returns [{name, op, repeat?}], at most ~40 entries.
export function mainGemms(workload, recipe) {
  if (!workload || typeof workload !== "object") throw new Error("no workload");
  const dtype = gemmDtype(recipe.precision);
  const pad = Number(recipe.pad_to) > 1 ? Number(recipe.pad_to) : 0;
  const B = Number(recipe.batch_per_gpu);
  const out = [];
  if (workload.kind === "dlrm") {
    let inW = int(workload.dense_features, "dense_features");
    const bottom = workload.bottom_mlp || [];
    if (!Array.isArray(bottom)) throw new Error("workload.bottom_mlp must be an array of widths");
    if (workload.top_mlp !== undefined && !Array.isArray(workload.top_mlp)) throw new Error("workload.top_mlp must be an array of widths");
    bottom.forEach((w, i) => {
      const n = roundUp(int(w, `bottom_mlp[${i}]`), pad);
      layer(out, `bottom[${i}]`, B, n, inW, dtype, { dgrad: i > 0 });
      inW = n;
    });
    const tables = Array.isArray(workload.tables) ? workload.tables : [];
    const features = tables.reduce((s, t) => s + (Number(t.count) || 1), 0) + 1;
    // dot interaction: the batched Z = X X^T over (features x dim)
    if (tables.length) {
      batched(out, "interaction bmm", features, features, inW, dtype, B);
    }
    let inter = (tables.length ? inW + (features * (features - 1)) / 2 : inW);
    if (workload.pad_interaction_to) inter = Math.max(inter, roundUp(inter, int(workload.pad_interaction_to, "pad_interaction_to")));
    inter = roundUp(inter, pad);
    let k = inter;
    (workload.top_mlp || []).forEach((w, i, a) => {
      const n = i === a.length - 1 ? int(w, `top_mlp[${i}]`) : roundUp(int(w, `top_mlp[${i}]`), pad);
      layer(out, `top[${i}]`, B, n, k, dtype, { dgrad: true });
      k = n;
    });
  } else if (workload.kind === "transformer") {
    const seq = int(workload.seq_len, "seq_len");
    const h = roundUp(int(workload.hidden, "hidden"), pad);
    const heads = int(workload.heads, "heads");
    const kv = Number(workload.kv_heads) || heads;
    const ffn = roundUp(int(workload.ffn || 4 * h, "ffn"), pad);
    const T = B * seq;
    const headDim = h / heads;
    const tp = Number(recipe.tp) > 1 ? Number(recipe.tp) : 1;
    layer(out, "qkv", T, Math.ceil((h + 2 * kv * headDim) / tp), h, dtype, { dgrad: true });
    batched(out, "attention QK^T", seq, seq, headDim, dtype, B * Math.ceil(heads / tp));
    layer(out, "attn out", T, h, Math.ceil(h / tp), dtype, { dgrad: true });
    layer(out, "ffn up", T, Math.ceil(ffn / tp), h, dtype, { dgrad: true });
    layer(out, "ffn down", T, h, Math.ceil(ffn / tp), dtype, { dgrad: true });
    if (workload.vocab) layer(out, "lm head", T, Math.ceil(roundUp(int(workload.vocab, "vocab"), pad || 1) / tp), h, dtype, { dgrad: true });
  } else {
    throw new Error(`workload.kind must be "dlrm" or "transformer" (got ${JSON.stringify(workload.kind)})`);
  }
  return out;
}
