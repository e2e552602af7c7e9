#!/bin/sh
# validate/gpu/gemm_sweep.py's passes: each shape timed once per pass, the passes one after
# another; a row's ms is the lowest of its passes' medians (pass_ms, one per pass), min_ms the
# lowest of all, tflops from ms. passes 1 keeps the single-window row (no pass_ms); passes out
# of 1..8 or not an integer is refused by --check with the field named. The CPU mode of
# Debian's python3-torch (/usr/bin/python3; skip 77 without it) runs the kind.
# usage: test_gemm_passes.sh RUNNER
set -eu
R=$1
PY=/usr/bin/python3
[ -x "$PY" ] && $PY -c 'import torch' 2>/dev/null || { echo "python3-torch missing: skip"; exit 77; }
TAG=gemmpasses
. "$(dirname "$0")/scratch.sh"

job() {  # passes-member (empty: the default) -> $T/job.json
  echo '{"kind":"gemm_sweep","params":{"shapes":[{"m":32,"n":16,"k":8},{"m":8,"n":8,"k":24,"layout":"tn"}],"dtypes":["fp32","bf16"],"iters":3,"flush_mib":1'"$1"'}}' > "$T/job.json"
}

job ""
CDPLAN_RUNNER_ALLOW_CPU=1 $PY "$R" "$T/job.json" > "$T/two.json" 2> "$T/log" || fail "run failed: $(tail -3 "$T/log")"
$PY - "$T/two.json" <<'PY' || fail "default passes: rows not as documented"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 4, rows
for r in rows:
    assert len(r["pass_ms"]) == 2, r                   # the default: two passes
    assert r["ms"] == min(r["pass_ms"]), r
    assert r["min_ms"] <= r["ms"], r
    assert abs(r["tflops"] - 2e-9 * r["m"] * r["n"] * r["k"] / r["ms"]) < 1e-12, r
PY
grep -q "progress: gemm pass 2 4/4" "$T/log" || fail "no progress line for the second pass"

job ',"passes":3'
CDPLAN_RUNNER_ALLOW_CPU=1 $PY "$R" "$T/job.json" > "$T/three.json" 2> "$T/log" || fail "run failed"
[ "$(field "$T/three.json" '["rows"][3]["pass_ms"].__len__()')" = 3 ] || fail "passes 3: not three pass_ms"

job ',"passes":1'
CDPLAN_RUNNER_ALLOW_CPU=1 $PY "$R" "$T/job.json" > "$T/one.json" 2> "$T/log" || fail "run failed"
[ "$(field "$T/one.json" '["rows"][0].get("pass_ms")')" = None ] || fail "passes 1: pass_ms written"

for bad in 0 9 1.5 '"2"'; do
  job ",\"passes\":$bad"
  rc=0; $PY "$R" --check "$T/job.json" > /dev/null 2> "$T/err" || rc=$?
  [ $rc = 2 ] || fail "passes $bad: --check exit $rc, not 2"
  grep -q '"field": "params.passes"' "$T/err" || fail "passes $bad: field not named: $(tail -1 "$T/err")"
done
echo "gemm_sweep passes: ok"
