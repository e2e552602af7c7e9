#!/bin/sh
# The plan-validation loop end to end on the CPU (CDPLAN_RUNNER_ALLOW_CPU,
# Debian's python3-torch for /usr/bin/python3; skip 77 without it):
# cdplan plan -> cdplan validate plan ID (local backend, two dlrm_step jobs)
# -> results -> the plan shows predicted against measured step time and
# gain -> cdplan validate report. A compare's target plan validates the
# direct port (recorded as the source GPU's recipe run on the target) against
# the target's plan. A bundle written for a plan carries the runner package
# and runs where it lies; its result ingested reaches the plan. Errors:
# unknown plan (404, exit 1), bad backend (field named), bad --gpus.
# usage: test_plan_validate.sh CDPLAN_BINARY
set -eu
BIN=$1
PY=/usr/bin/python3
[ -x "$PY" ] && $PY -c 'import torch' 2>/dev/null || { echo "no torch for $PY: skip"; exit 77; }
TAG=planval
. "$(dirname "$0")/scratch.sh"
export CDPLAN_DB="$T/p.db" CDPLAN_PYTHON=$PY CDPLAN_RUNNER_ALLOW_CPU=1

WL='"workload":{"kind":"dlrm","name":"tiny","dense_features":13,"tables":[{"name":"t","rows":20000,"dim":16,"pooling":4,"count":4}],"bottom_mlp":[64,16],"top_mlp":[64,32,1],"interaction":"dot","optimizers":{"dense":"adam","sparse":"sgd"}}'
BASE='"baseline":{"batch_per_gpu":256,"precision":"fp32","embedding_precision":"fp32","framework":"pytorch_eager","checkpointing":"full"},"knobs":{"precision":["fp32","bf16"],"checkpointing":["none","full"]},"time_limit_s":5'
echo "{$WL,\"hardware\":\"h200\",\"cluster\":{\"gpus_per_node\":1,\"nodes\":1},$BASE}" > "$T/plan.json"
"$BIN" plan "$T/plan.json" > "$T/plan.out" 2>/dev/null || fail "plan"
ID=$(field "$T/plan.out" '["id"]')

"$BIN" validate plan "$ID" --steps 3 --wait 120 > "$T/v.json" 2>"$T/v.err" || fail "validate plan: $(cat "$T/v.err")"
$PY - "$T/v.json" "$T/plan.out" <<'PYEOF' || fail "the plan's validation"
import json, sys
d, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
v = d["validation"]
for side, pred in (("baseline", p["baseline"]), ("planned", p)):
    s = v[side]
    assert s["state"] == "done", s
    assert s["predicted"]["step_ms"] == pred["step_ms"], (s["predicted"], pred["step_ms"])
    assert s["measured"]["step_ms"] > 0 and s["rel_error"]["step_ms"] is not None, s
    assert s["share"]["whole_plan"] and not s["ran_on_other_gpu"], s
    # the CPU test mode is not an H200: such a result calibrates nothing
    assert not s["device_check"]["matches"] and s["calibrates"] is None, s
g = v["gain"]
assert abs(g["predicted"] - p["gain"]) < 1e-9 and g["measured"] > 0, g
assert abs(g["rel_error"] - (g["predicted"] - g["measured"]) / g["measured"]) < 1e-9, g
PYEOF
# the same document from --show, and each job's report
"$BIN" validate plan "$ID" --show > "$T/show.json"
[ "$(field "$T/show.json" '["validation"]["jobs"]')" = 2 ] || fail "--show lost the validation"
JOB=$(field "$T/show.json" '["validation"]["planned"]["job"]')
"$BIN" validate report "$JOB" > "$T/rep.json"
[ "$(field "$T/rep.json" '["stats"]["n"]')" = 1 ] || fail "report: $(cat "$T/rep.json")"
# calibrating from a CPU-mode result is refused: it did not run on an h200
if "$BIN" validate report "$JOB" --calibrate > /dev/null 2> "$T/cal.err"; then fail "calibrated from a CPU run"; fi
grep -q '"field":"device"' "$T/cal.err" || fail "calibrate refusal: $(cat "$T/cal.err")"

# a compare: the direct port (made for h100-sxm) and the h200 plan, both run here
echo "{$WL,\"from\":\"h100-sxm\",\"to\":\"h200\",\"cluster\":{\"gpus_per_node\":2,\"nodes\":1},$BASE}" > "$T/cmp.json"
"$BIN" compare "$T/cmp.json" > "$T/cmp.out" 2>/dev/null || fail "compare"
CID=$(field "$T/cmp.out" '["id"]')
"$BIN" validate plan "$CID" --steps 2 --wait 120 > "$T/cv.json" 2>/dev/null || fail "validate compare"
$PY - "$T/cv.json" "$T/cmp.out" <<'PYEOF' || fail "the compare's validation"
import json, sys
d, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
b, p = d["validation"]["baseline"], d["validation"]["planned"]
assert b["recipe_for"] == "h100-sxm" and b["ran_on"] == "h200" and b["ran_on_other_gpu"], b
assert p["recipe_for"] == "h200" and not p["ran_on_other_gpu"], p
assert b["predicted"]["step_ms"] == c["direct_port"]["step_ms"], b
assert b["state"] == p["state"] == "done", (b, p)
# two GPUs in the plan, one process here: the busiest rank's share, said so
assert not p["share"]["whole_plan"] and p["share"]["gpus"] == 2 and "share" in p["share"]["note"], p
PYEOF

# a bundle: both sides written with the runner package, run where they lie, ingested
"$BIN" validate plan "$ID" --backend bundle --out "$T/bun" --steps 2 --host-mini 8 > "$T/b.json"
for s in baseline planned; do
  for f in job.json run.sh runner.py dlrm_step.py uvm_bag.py; do
    [ -f "$T/bun/$s/$f" ] || fail "bundle $s lacks $f"
  done
  grep -q '"host_mini_batch": *8' "$T/bun/$s/job.json" || fail "bundle $s job lacks host_mini_batch"
done
PATH="$(dirname $PY):$PATH" sh "$T/bun/planned/run.sh" 2>/dev/null || fail "bundle run"
"$BIN" validate ingest "$T/bun/planned/result.json" > /dev/null
"$BIN" validate plan "$ID" --show > "$T/show2.json"
[ "$(field "$T/show2.json" '["validation"]["jobs"]')" = 4 ] || fail "bundle jobs not linked"
[ "$(field "$T/show2.json" '["validation"]["planned"]["state"]')" = done ] || fail "ingested result not on the plan"
[ "$(field "$T/show2.json" '["validation"]["baseline"]["state"]')" = queued ] || fail "unrun bundle side"

# errors
rc=0; "$BIN" validate plan 0123456789abcdef > /dev/null 2> "$T/e1" || rc=$?
[ $rc = 1 ] && grep -q '"code":"not_found"' "$T/e1" || fail "unknown plan: $rc $(cat "$T/e1")"
rc=0; "$BIN" validate plan "$ID" --backend nope > /dev/null 2> "$T/e2" || rc=$?
[ $rc = 1 ] && grep -q '"field":"backend"' "$T/e2" || fail "bad backend: $rc $(cat "$T/e2")"
rc=0; "$BIN" validate plan "$ID" --gpus 65 > /dev/null 2> "$T/e3" || rc=$?
[ $rc = 1 ] && grep -q '"field":"gpus"' "$T/e3" || fail "bad gpus: $rc $(cat "$T/e3")"
rc=0; "$BIN" validate plan "$ID" --host-mini 0 > /dev/null 2> "$T/e4" || rc=$?
[ $rc = 1 ] && grep -q '"field":"host_mini_batch"' "$T/e4" || fail "bad host_mini_batch: $rc $(cat "$T/e4")"
echo "plan validation loop: ok"
