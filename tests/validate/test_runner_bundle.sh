#!/bin/sh
# A bundle runs with Python alone, away from the checkout: validate/gpu/MANIFEST names
# every file runner.py imports (runner_manifest.py); then for every kind in kinds.def,
# `cdplan validate submit --backend bundle` writes the bundle, it is copied to a fresh
# temporary folder and run there by its run.sh with Debian's python3 (+ python3-torch for
# the GPU kinds, in the runner's CPU mode), and the result is ingested. kernel_sweep needs
# Triton: without it the bundle must end "unavailable" (exit 3), not on a missing module.
# usage: test_runner_bundle.sh CDPLAN RUNNER_DIR
set -eu
BIN=$1
DIR=$2
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "python3 missing: skip"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
$PY "$(dirname "$0")/runner_manifest.py" "$DIR" || fail "MANIFEST"
T=$(mktemp -d /tmp/cdplan-bundle-XXXXXX)
trap 'rm -rf "$T"' EXIT
export CDPLAN_DB="$T/v.db"
unset PYTHONPATH CDPLAN_RUNNER || true
$PY -c 'import torch' 2>/dev/null && TORCH=1 || TORCH=0

params() {
  case $1 in
    cpu_selftest) echo '{"n":100}' ;;
    gemm_sweep) echo '{"shapes":[{"m":32,"n":16,"k":8}],"dtypes":["fp32"],"iters":2,"flush_mib":1}' ;;
    kernel_sweep) echo '{"shapes":[{"m":32,"n":16,"k":16}]}' ;;
    memory_ops) echo '{"embedding_bag":{"rows":[100],"dim":[8],"batch":[4],"pooling":[2]},"elementwise":{"numel":[2048],"ops":["add"]},"uvm_embedding_bag":{"rows":[50],"dim":[4],"batch":[2],"pooling":[3]},"iters":2,"flush_mib":1}' ;;
    step) echo '{"batch":16,"precision":"fp32","dim":8,"bottom":[16,8],"top":[16,1],"table_rows":[100,200],"uvm_tables":[1],"steps":2,"warmup":1}' ;;
    transformer_step) echo '{"iters":2,"warmup":1,"cases":[{"workload":{"kind":"transformer","layers":1,"hidden":32,"heads":2,"seq_len":16,"vocab":50},"recipe":{"batch_per_gpu":1}}]}' ;;
    dlrm_step) echo '{"steps":2,"warmup":1,"cases":[{"label":"one","workload":{"kind":"dlrm","dense_features":13,"tables":[{"name":"a","rows":100,"dim":8,"pooling":2}],"bottom_mlp":[16,8],"top_mlp":[16,1]},"recipe":{"batch_per_gpu":8}}]}' ;;
    *) echo '' ;;
  esac
}

KINDS=$(sed -n 's/^VAL_KIND(\([a-z_0-9]*\),.*/\1/p' "$DIR/kinds.def")
[ -n "$KINDS" ] || fail "no kinds in kinds.def"
ran=0
for k in $KINDS; do
  p=$(params "$k")
  [ -n "$p" ] || fail "kind $k has no job in this test: add one"
  echo "{\"kind\":\"$k\",\"hardware\":\"h200\",\"params\":$p}" > "$T/$k.req"
  "$BIN" validate submit "$T/$k.req" --backend bundle --out "$T/$k.out" > "$T/$k.sub" ||
    fail "$k: submit"
  # the bundle alone, in a folder of its own
  B=$(mktemp -d /tmp/cdplan-bundle-run-XXXXXX)
  cp -p "$T/$k.out"/* "$B/"
  rc=0
  (cd / && PATH=/usr/bin:/bin CDPLAN_RUNNER_ALLOW_CPU=1 sh "$B/run.sh") 2> "$T/$k.err" || rc=$?
  if [ "$k" = kernel_sweep ] && ! $PY -c 'import triton' 2>/dev/null; then
    [ "$rc" = 3 ] && tail -1 "$T/$k.err" | grep -q '"unavailable"' ||
      { rm -rf "$B"; fail "$k without triton: exit $rc, $(tail -1 "$T/$k.err")"; }
    rm -rf "$B"
    continue
  fi
  if [ "$k" != cpu_selftest ] && [ "$TORCH" = 0 ]; then
    [ "$rc" = 3 ] || { rm -rf "$B"; fail "$k without torch: exit $rc"; }
    rm -rf "$B"
    continue
  fi
  [ "$rc" = 0 ] || { rm -rf "$B"; fail "$k: run.sh exit $rc: $(tail -3 "$T/$k.err")"; }
  $PY - "$B/result.json" "$k" <<'PYEOF' || { rm -rf "$B"; fail "$k: result"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["kind"] == sys.argv[2], r.get("kind")
assert not r.get("failed") and not r.get("skipped"), r.get("failed") or r.get("skipped")
assert r.get("rows") or r.get("ok"), r
PYEOF
  "$BIN" validate ingest "$B/result.json" > "$T/$k.ing" || { rm -rf "$B"; fail "$k: ingest"; }
  grep -q '"state": *"done"' "$T/$k.ing" || { rm -rf "$B"; fail "$k: not done: $(cat "$T/$k.ing")"; }
  rm -rf "$B"
  ran=$((ran + 1))
done
echo "test_runner_bundle: $ran kinds ran from their bundles (torch: $TORCH)"
