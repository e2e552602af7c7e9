#!/bin/sh
# validate/gpu/runner.py --check: the job schema without a GPU. The step
# kind's table placements (host_tables, uvm_tables) and the memory_ops uvm
# grid are accepted; a table in both lists, an index past table_rows and a
# uvm grid of an unknown dtype are refused with exit 2 and the field named.
# usage: test_runner_check.sh RUNNER
set -eu
R=$1
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
T=$(mktemp -d /tmp/cdplan-runner-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
STEP='"kind":"step","params":{"batch":64,"precision":"fp32","dim":8,"bottom":[16,8],"top":[16,1],"table_rows":[100,200,300]'

echo "{$STEP,\"host_tables\":[1],\"uvm_tables\":[0,2]}}" > "$T/ok.json"
python3 "$R" --check "$T/ok.json" > "$T/ok.out" || fail "a good job was refused"
grep -q '"uvm_tables"' "$T/ok.out" || fail "uvm_tables missing from the normalized job"

expect() { # file, field
  rc=0
  python3 "$R" --check "$1" > /dev/null 2> "$T/err" || rc=$?
  [ "$rc" = 2 ] || fail "$1: exit $rc, expected 2"
  tail -1 "$T/err" | grep -qF "\"field\": \"$2\"" || fail "$1: field $2 not named: $(tail -1 "$T/err")"
}
echo "{$STEP,\"host_tables\":[1],\"uvm_tables\":[1]}}" > "$T/both.json"
expect "$T/both.json" params.uvm_tables
echo "{$STEP,\"uvm_tables\":[3]}}" > "$T/past.json"
expect "$T/past.json" params.uvm_tables
echo "{$STEP,\"uvm_tables\":[\"a\"]}}" > "$T/type.json"
expect "$T/type.json" "params.uvm_tables[0]"
echo '{"kind":"memory_ops","params":{"uvm_embedding_bag":{"rows":[10],"dim":[4],"dtype":["fp64"],"batch":[2],"pooling":[1]}}}' > "$T/dt.json"
expect "$T/dt.json" "params.uvm_embedding_bag.dtype[0]"
echo '{"kind":"memory_ops","params":{"uvm_embedding_bag":{"rows":[10],"dim":[4],"batch":[2],"pooling":[1]}}}' > "$T/mo.json"
python3 "$R" --check "$T/mo.json" > /dev/null || fail "a uvm-only memory_ops job was refused"
# transformer_step takes cdplan's own workload and recipe documents
TW='{"kind":"transformer","layers":2,"hidden":64,"heads":4,"kv_heads":2,"seq_len":32,"vocab":100,"mlp":"swiglu"}'
echo "{\"kind\":\"transformer_step\",\"params\":{\"cases\":[{\"workload\":$TW,\"recipe\":{\"batch_per_gpu\":2,\"precision\":\"bf16\",\"checkpointing\":\"full\"}}]}}" > "$T/tf.json"
python3 "$R" --check "$T/tf.json" > "$T/tf.out" || fail "a good transformer_step job was refused"
grep -q '"ffn": 256' "$T/tf.out" || fail "the swiglu default ffn (8h/3 rounded up to 256) is missing"
echo "{\"kind\":\"transformer_step\",\"params\":{\"cases\":[{\"workload\":$TW,\"recipe\":{\"batch_per_gpu\":2,\"tp\":2}}]}}" > "$T/tp.json"
expect "$T/tp.json" "params.cases[0].recipe.tp"
echo '{"kind":"transformer_step","params":{"cases":[{"workload":{"kind":"transformer","layers":2,"hidden":64,"heads":4,"seq_len":32,"vocab":100,"attention":"ring"},"recipe":{"batch_per_gpu":1}}]}}' > "$T/at.json"
expect "$T/at.json" "params.cases[0].workload.attention"
echo '{"kind":"transformer_step","params":{"cases":[{"workload":{"kind":"transformer","layers":2,"hidden":64,"heads":4,"seq_len":32,"vocab":100,"moe":{"experts":2}},"recipe":{"batch_per_gpu":1}}]}}' > "$T/moe.json"
expect "$T/moe.json" "params.cases[0].workload.moe"
echo "runner checks: ok"

# Issue 25: a shape's operand layout and a config's split_k are accepted by the
# GEMM and kernel sweeps; an unknown layout or a split_k past 64 names its field.
KS='"kind":"kernel_sweep","params":{"shapes":[{"m":24,"n":1,"k":479,"layout":"nt"}]'
echo "{$KS,\"configs\":[{\"bm\":16,\"bn\":64,\"bk\":64,\"warps\":4,\"stages\":3,\"split_k\":8}],\"backlog_us\":100}}" > "$T/ks.json"
python3 "$R" --check "$T/ks.json" > "$T/ks.out" || fail "a kernel sweep with layout and split_k was refused"
grep -q '"split_k": 8' "$T/ks.out" || fail "split_k missing from the normalized job"
grep -q '"layout": "nt"' "$T/ks.out" || fail "layout missing from the normalized job"
echo '{"kind":"gemm_sweep","params":{"shapes":[{"m":8,"n":8,"k":8,"layout":"xt"}]}}' > "$T/lay.json"
expect "$T/lay.json" "params.shapes[0].layout"
echo "{$KS,\"configs\":[{\"bm\":16,\"bn\":64,\"bk\":64,\"warps\":4,\"stages\":3,\"split_k\":65}]}}" > "$T/sk.json"
expect "$T/sk.json" "params.configs[0].split_k"
echo ok

# dlrm_step's job-level profile flag (torch.profiler after the timed steps): a
# boolean is kept in the normalized job, anything else names params.profile.
DW='{"kind":"dlrm","dense_features":4,"tables":[{"rows":10,"dim":8,"pooling":2}],"bottom_mlp":[8],"top_mlp":[4,1]}'
DC="\"cases\":[{\"workload\":$DW,\"recipe\":{\"gpus\":1,\"batch_per_gpu\":4}}]"
echo "{\"kind\":\"dlrm_step\",\"params\":{$DC,\"profile\":true}}" > "$T/dp.json"
python3 "$R" --check "$T/dp.json" > "$T/dp.out" || fail "a dlrm_step job with profile was refused"
grep -q '"profile": true' "$T/dp.out" || fail "profile missing from the normalized dlrm_step job"
echo "{\"kind\":\"dlrm_step\",\"params\":{$DC,\"profile\":\"yes\"}}" > "$T/dpb.json"
expect "$T/dpb.json" params.profile
echo ok
