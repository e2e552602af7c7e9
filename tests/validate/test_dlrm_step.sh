#!/bin/sh
# validate/gpu/dlrm_step.py: the runner's DLRM step from cdplan's own workload,
# recipe and embedding_plan documents. --check (no torch needed): counts
# expanded with the planner's names, the embedding plan applied, bad fields
# refused with exit 2 and the field named. With Debian's python3-torch
# (/usr/bin/python3; skip 77 without it) the CPU mode runs a dot case on one
# GPU and a DCN low-rank case on 4 GPUs (the busiest rank's share, said so),
# and a fused_triton case runs through fused_tbe.py's build() (its torch
# reference path on the CPU), while a fused_triton case with a host-placed
# shard fails "unavailable". The result carries the host probe (host_probe.py) taken
# before and after the cases, and with host_mini_batch each one-GPU case's step at that
# batch (host_mini); a bad host_mini_batch names its field.
# usage: test_dlrm_step.sh RUNNER
set -eu
R=$1
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "python3 missing: skip"; exit 77; }
TAG=dlrm
. "$(dirname "$0")/scratch.sh"

WL='"workload":{"kind":"dlrm","name":"tiny","dense_features":13,"tables":[{"name":"a","rows":1000,"dim":16,"pooling":3,"count":3},{"name":"b","rows":50,"dim":16,"pooling":1}],"bottom_mlp":[32,16],"top_mlp":[64,1],"interaction":"dot","optimizers":{"dense":"adam","sparse":"rowwise_adagrad"}}'
DCN='"workload":{"kind":"dlrm","name":"tiny-dcn","dense_features":13,"tables":[{"name":"a","rows":1000,"dim":16,"pooling":3,"count":3},{"name":"b","rows":50,"dim":16,"pooling":1}],"bottom_mlp":[32,16],"top_mlp":[64,1],"interaction":"dcn","cross_layers":2,"cross_rank":8,"optimizers":{"dense":"sgd","sparse":"sgd"}}'
CAT='"workload":{"kind":"dlrm","name":"tiny-concat","dense_features":13,"tables":[{"name":"a","rows":1000,"dim":16,"pooling":3,"count":2},{"name":"c","rows":50,"dim":8,"pooling":1}],"bottom_mlp":[32,16],"top_mlp":[64,1],"interaction":"concat","optimizers":{"dense":"adam","sparse":"sgd"}}'
EP='"embedding_plan":{"tables":[{"name":"a#0","sharding_type":"table_wise","compute_kernel":"fused","ranks":[1]},{"name":"a#1","sharding_type":"row_wise","compute_kernel":"fused","ranks":[0,1,2,3]},{"name":"a#2","sharding_type":"column_wise","compute_kernel":"cpu","ranks":[1,2]},{"name":"b","sharding_type":"data_parallel","compute_kernel":"fused_uvm","ranks":[0,1,2,3]}]}'
cat > "$T/ok.json" <<JOB
{"kind":"dlrm_step","params":{"steps":3,"warmup":1,"host_mini_batch":4,"cases":[
 {"label":"baseline",$WL,"recipe":{"gpus":1,"batch_per_gpu":64,"precision":"bf16","embedding_precision":"fp32","framework":"pytorch_eager","checkpointing":"full"}},
 {"label":"planned",$DCN,"recipe":{"gpus":4,"batch_per_gpu":32,"precision":"fp32","pad_to":8,"checkpointing":"selective"},$EP},
 {"label":"triton",$WL,"recipe":{"gpus":1,"batch_per_gpu":8,"framework":"fused_triton"}},
 {"label":"concat",$CAT,"recipe":{"gpus":1,"batch_per_gpu":16,"precision":"fp32"}},
 {"label":"triton_host",$DCN,"recipe":{"gpus":4,"batch_per_gpu":8,"precision":"fp32","framework":"fused_triton"},$EP}]}}
JOB
$PY "$R" --check "$T/ok.json" > "$T/ok.out" || fail "a good job was refused"
grep -q '"name": "a#2"' "$T/ok.out" || fail "counts not expanded with the planner's names"
grep -q '"placement": "uvm"' "$T/ok.out" || fail "fused_uvm not read as the uvm placement"

expect() { # job text, field
  echo "$1" > "$T/bad.json"
  rc=0
  $PY "$R" --check "$T/bad.json" > /dev/null 2> "$T/err" || rc=$?
  [ "$rc" = 2 ] || fail "exit $rc, expected 2 for $2"
  tail -1 "$T/err" | grep -qF "\"field\": \"$2\"" || fail "field $2 not named: $(tail -1 "$T/err")"
}
expect "{\"kind\":\"dlrm_step\",\"params\":{\"cases\":[{$WL,\"recipe\":{\"batch_per_gpu\":8,\"precision\":\"fp8\"}}]}}" \
  "params.cases[0].recipe.precision"
expect "{\"kind\":\"dlrm_step\",\"params\":{\"cases\":[{$WL,\"recipe\":{\"batch_per_gpu\":8,\"embedding_precision\":\"int8\"}}]}}" \
  "params.cases[0].recipe.embedding_precision"
expect "{\"kind\":\"dlrm_step\",\"params\":{\"cases\":[{$WL,\"recipe\":{\"batch_per_gpu\":8,\"gpus\":2},\"embedding_plan\":{\"tables\":[{\"name\":\"zz\",\"sharding_type\":\"table_wise\"}]}}]}}" \
  "params.cases[0].embedding_plan.tables[0].name"
expect "{\"kind\":\"dlrm_step\",\"params\":{\"cases\":[{$WL,\"recipe\":{\"batch_per_gpu\":8,\"gpus\":2},\"embedding_plan\":{\"tables\":[{\"name\":\"b\",\"ranks\":[2]}]}}]}}" \
  "params.cases[0].embedding_plan.tables[0].ranks[0]"
expect "{\"kind\":\"dlrm_step\",\"params\":{\"cases\":[{$WL,\"recipe\":{\"batch_per_gpu\":8,\"global_batch\":9}}]}}" \
  "params.cases[0].recipe.global_batch"
expect '{"kind":"dlrm_step","params":{"cases":[{"workload":{"kind":"dlrm","dense_features":4,"tables":[{"rows":10,"dim":8}],"bottom_mlp":[16],"top_mlp":[4,1]},"recipe":{"batch_per_gpu":8}}]}}' \
  "params.cases[0].workload.bottom_mlp"
expect '{"kind":"dlrm_step","params":{"cases":[{"workload":{"kind":"dlrm","dense_features":4,"tables":[{"rows":10,"dim":8}],"bottom_mlp":[8],"top_mlp":[4,1],"interaction":"fm"},"recipe":{"batch_per_gpu":8}}]}}' \
  "params.cases[0].workload.interaction"

expect '{"kind":"dlrm_step","params":{"cases":[{"workload":{"kind":"dlrm","dense_features":4,"tables":[{"rows":10,"dim":8}],"bottom_mlp":[8],"top_mlp":[4,1],"interaction":"concat","cross_layers":2},"recipe":{"batch_per_gpu":8}}]}}' \
  "params.cases[0].workload.cross_layers"
expect '{"kind":"dlrm_step","params":{"cases":[{"workload":{"kind":"dlrm","dense_features":4,"tables":[{"rows":10,"dim":8}],"bottom_mlp":[8],"top_mlp":[4,1],"interaction":"concat","dense_block":{"out":8,"params":10,"flops_per_sample":20}},"recipe":{"batch_per_gpu":8}}]}}' \
  "params.cases[0].workload.dense_block"

expect "{\"kind\":\"dlrm_step\",\"params\":{\"host_mini_batch\":-1,\"cases\":[{$WL,\"recipe\":{\"batch_per_gpu\":8}}]}}" \
  "params.host_mini_batch"

$PY -c 'import torch' 2>/dev/null || { echo "checks ok; no torch for $PY: run skipped"; exit 77; }
CDPLAN_RUNNER_ALLOW_CPU=1 $PY "$R" "$T/ok.json" > "$T/res.json" 2> "$T/log" || fail "run failed: $(tail -3 "$T/log")"
$PY - "$T/res.json" <<'PYEOF' || fail "result checks"
import json, sys
r = json.load(open(sys.argv[1]))
rows = {x["label"]: x for x in r["rows"]}
assert set(rows) == {"baseline", "planned", "triton", "concat"}, rows.keys()
# concat: x0 = [x, a#0, a#1, c] = 16 + 2 x 16 + 8 wide into the top MLP
assert rows["concat"]["interaction_width"] == 16 + 2 * 16 + 8 and rows["concat"]["step_ms"] > 0, rows["concat"]
assert rows["triton"]["step_ms"] > 0 and rows["triton"]["loss"] == rows["triton"]["loss"], rows["triton"]
b, p = rows["baseline"], rows["planned"]
assert b["step_ms"] > 0 and b["share"]["whole_plan"] and b["share"]["rank"] == 0, b["share"]
# rank 1 holds a#0 whole (64+ lookups x 16 over the global batch 128), row- and column-wise
# shards and the replicated b: the busiest of the four
s = p["share"]
assert not s["whole_plan"] and s["rank"] == 1 and s["gpus"] == 4 and "not run" in s["note"], s
assert p["interaction_width"] == 16 + 4 * 16 and p["samples_per_s"] > 0, p
assert p["placements"] == {"hbm": 2, "host": 1, "uvm": 1}, p["placements"]
f = r["failed"]
assert len(f) == 1 and f[0]["label"] == "triton_host" and "unavailable" in f[0]["reason"], f
d = r["device"]
assert {"name", "memory_bytes", "compute_units"} <= set(d), d
# the host probe (host_probe.py), before and after the cases, and its summary
hp = r["host_probe"]
for k in ("start", "end"):
    q = hp[k]
    # the marginal op time is a median of differences of two timed loops: on a loaded CPU
    # (ctest -j beside other work) it can come out <= 0, so only its order is checked
    assert q["eager_op_us_min"] <= q["eager_op_us"] <= q["eager_op_us_max"], q
    assert q["step_kernel_us"] > 0 and q["cpu_mode"], q
    assert len(q["base_iter_us"]) == q["rounds"] == len(q["long_iter_us"]), q
    assert q["kernels_long"] > q["kernels_base"] > 0, q
assert abs(hp["eager_op_us"] - (hp["start"]["eager_op_us"] + hp["end"]["eager_op_us"]) / 2) < 1e-9, hp
assert "triton_launch_us" not in hp["end"], hp  # no Triton launch on the CPU
# host_mini_batch: the one-GPU cases stepped again at batch 4; the 4-GPU share is skipped
for lab in ("baseline", "triton", "concat"):
    hm = rows[lab]["host_mini"]
    assert hm["batch"] == 4 and hm["steps"] == 3 and 0 < hm["step_ms_min"] <= hm["step_ms"], hm
assert "4 GPUs" in p["host_mini"]["skipped"], p["host_mini"]
PYEOF
echo "dlrm_step: ok"
