#!/bin/sh
# The ninth set's cuBLAS predictions with and without the ninth round's term
# (bf16 align1 small-grid split-K, costmodel/gemm.c GEMM_SPLIT_GRID_FRAC): builds
# bench/kernel_awkward once more with -DGEMM_SPLIT_GRID_FRAC=0 (term off: the
# eighth round's cost_gemm) in BUILD_OFF, writes its predictions beside the
# shipped ones (the committed predictions.json, term on) and prints the table
# of README.md. Usage (repository root, after `make build`):
#   sh data/measurements/h200-awkward9/term_off.sh [BUILD_OFF]
set -e
here=data/measurements/h200-awkward9
off=${1:-/tmp/cdplan-build-term-off}
cmake -S . -B "$off" -DCMAKE_C_FLAGS=-DGEMM_SPLIT_GRID_FRAC=0 >/dev/null
nice cmake --build "$off" -j 2 --target kernel_awkward >/dev/null
"$off/bench/kernel_awkward" --jobs "$here/jobs" --predict "$off/predictions_term_off.json" >/dev/null
python3 - "$here/predictions.json.gz" "$off/predictions_term_off.json" <<'PY'
import gzip, json, math, sys
on = {(g["m"], g["n"], g["k"], g["layout"], g["dtype"]): g["ms"] for g in json.load(gzip.open(sys.argv[1], "rt"))["gemm"]}
off = {(g["m"], g["n"], g["k"], g["layout"], g["dtype"]): g["ms"] for g in json.load(open(sys.argv[2]))["gemm"]}


def align(ld):  # costmodel/gemm.c align_of for 2-byte elements
    a = 1
    while a < 16 and (2 * ld) % (2 * a) == 0:
        a *= 2
    return a


def term(m, n, k, lay):
    """costmodel/gemm.c split_small && forced at its 64x64 tiles (every larger tile then has
    fewer): bf16 on Hopper, not a GEMV, K >= 4, the worst of lda, ldb, ldc 2-byte aligned,
    ceil(M/64) ceil(N/64) < GEMM_SPLIT_GRID_FRAC (0.5) x 132 SMs."""
    lda, ldb = (k if lay[0] == "n" else m), (n if lay[1] == "n" else k)
    if m == 1 or n == 1 or k < 4 or min(align(lda), align(ldb), align(n)) >= 4:
        return False
    return math.ceil(m / 64) * math.ceil(n / 64) < 0.5 * 132


print("| M x N x K | layout | term | bf16 on (us) | bf16 off (us) | bf16 on/off | fp16 on/off |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
n = 0
for key in on:
    if key[4] != "bf16":
        continue
    m, nn, k, lay, _ = key
    a, b = on[key] * 1e3, off[key] * 1e3
    f = on[(m, nn, k, lay, "fp16")] / off[(m, nn, k, lay, "fp16")]
    t = term(m, nn, k, lay)
    n += t
    print("| %dx%dx%d | `%s` | %s | %.2f | %.2f | %s | %.3f |" % (
        m, nn, k, lay, "**yes**" if t else "", a, b, ("**%.3f**" if t else "%.3f") % (a / b), f))
print("\n%d of %d shapes in the term's class" % (n, len([k for k in on if k[4] == "bf16"])))
PY
