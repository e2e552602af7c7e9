#!/bin/sh
# validate/gpu/dist_step.py: a dlrm_step case run as its plan runs, one process
# per rank through torch.distributed (gloo here: Debian's python3-torch 1.13 on
# /usr/bin/python3; skip 77 without it), 2 and 4 processes, table-, row-,
# column-wise and data-parallel tables. Checks: the loss before and after one
# step and the per-table sums of the pooled embeddings equal a one-process run
# of the same model; each rank's collective bytes per kind equal the bytes the
# plan prices for it, written out below from costmodel/step_dlrm.c plan_tables
# (a2a_bytes, rs_bytes, dp_grad_bytes; dense all-reduce P x 4).
# With CDPLAN (the binary), a plan made by `cdplan plan` for 4 GPUs runs as
# planned: its recipe and embedding_plan as the plan answer prints them.
# usage: test_dist_step.sh RUNNER [CDPLAN]
set -eu
R=$1
BIN=${2:-}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "python3 missing: skip"; exit 77; }
$PY -c 'import torch.distributed as d; assert d.is_available()' 2>/dev/null ||
  { echo "no torch.distributed for $PY: skip"; exit 77; }
TAG=dist
. "$(dirname "$0")/scratch.sh"

TB='"tables":[{"name":"a","rows":1000,"dim":16,"pooling":3,"count":3},{"name":"b","rows":50,"dim":16,"pooling":1}],"bottom_mlp":[32,16],"top_mlp":[64,1],"optimizers":{"dense":"sgd","sparse":"sgd"}'
DOT="\"workload\":{\"kind\":\"dlrm\",\"name\":\"dot\",\"dense_features\":13,$TB,\"interaction\":\"dot\"}"
DCN="\"workload\":{\"kind\":\"dlrm\",\"name\":\"dcn\",\"dense_features\":13,$TB,\"interaction\":\"dcn\",\"cross_layers\":2,\"cross_rank\":8}"
EP2='"embedding_plan":{"tables":[{"name":"a#0","sharding_type":"table_wise","ranks":[1]},{"name":"a#1","sharding_type":"row_wise","ranks":[0,1]},{"name":"a#2","sharding_type":"column_wise","ranks":[1,0]},{"name":"b","sharding_type":"data_parallel","ranks":[0,1]}]}'
EP4='"embedding_plan":{"tables":[{"name":"a#0","sharding_type":"table_wise","ranks":[3]},{"name":"a#1","sharding_type":"row_wise","ranks":[0,1,2,3]},{"name":"a#2","sharding_type":"column_wise","ranks":[2,1]},{"name":"b","sharding_type":"data_parallel","ranks":[0,1,2,3]}]}'
cat > "$T/job.json" <<JOB
{"kind":"dlrm_step","params":{"steps":2,"warmup":1,"lr_sparse":0.5,"lr_dense":0.1,"cases":[
 {"label":"dot1","processes":1,$DOT,"recipe":{"gpus":1,"batch_per_gpu":64}},
 {"label":"dot2","processes":2,$DOT,"recipe":{"gpus":2,"batch_per_gpu":32},$EP2},
 {"label":"dot2h","processes":2,$DOT,"recipe":{"gpus":2,"batch_per_gpu":32,"embedding_precision":"bf16"},$EP2},
 {"label":"dcn1","processes":1,$DCN,"recipe":{"gpus":1,"batch_per_gpu":64}},
 {"label":"dcn4","processes":4,$DCN,"recipe":{"gpus":4,"batch_per_gpu":16},$EP4}]}}
JOB
# processes must be the recipe's gpus (one process per rank): refused, the field named
echo "{\"kind\":\"dlrm_step\",\"params\":{\"cases\":[{\"processes\":3,$DOT,\"recipe\":{\"gpus\":2,\"batch_per_gpu\":8}}]}}" > "$T/bad.json"
rc=0
$PY "$R" --check "$T/bad.json" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "processes 3 on a 2-gpu recipe: exit $rc"
tail -1 "$T/err" | grep -qF '"field": "params.cases[0].processes"' || fail "field not named: $(tail -1 "$T/err")"

CDPLAN_RUNNER_ALLOW_CPU=1 $PY "$R" "$T/job.json" > "$T/res.json" 2> "$T/log" ||
  fail "run failed: $(tail -5 "$T/log")"
$PY - "$T/res.json" <<'PYEOF' || fail "result checks"
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["failed"], r["failed"]
rows = {x["label"]: x for x in r["rows"]}
def close(a, b, what):
    assert abs(a - b) <= 1e-5 * max(1.0, abs(b)), "%s: %r vs %r" % (what, a, b)
for one, many in (("dot1", "dot2"), ("dcn1", "dcn4")):
    a, b = rows[one], rows[many]
    close(b["loss0"], a["loss0"], many + " loss before the step")
    close(b["loss1"], a["loss1"], many + " loss after one step")
    assert b["loss1"] != b["loss0"], "the step changed nothing"
    for ti, (u, v) in enumerate(zip(a["emb_digest"], b["emb_digest"])):
        for j, (x, y) in enumerate(zip(u, v)):
            close(y, x, "%s pooled embeddings table %d col %d" % (many, ti, j))
# the plan's bytes per rank (fp32 tables: eb = ob = 4), costmodel/step_dlrm.c plan_tables:
# table-wise a#0 and column-wise a#2 (dim 16): all-to-all, the owner sending G x B x its
# columns forward, every rank B x (16 + 16) backward (a2a_bytes); row-wise a#1:
# G x B x 16 x 4 reduce-scatter and all-gather (rs_bytes); data-parallel b: 50 x 16 x 4
# (dp_grad_bytes); dense: P x 4 with P the MLPs' (and cross layers') parameters
P_dot = (13*32 + 32 + 32*16 + 16) + (26*64 + 64 + 64 + 1)
P_dcn = (13*32 + 32 + 32*16 + 16) + 2 * (80*8 + 8*80 + 80) + (80*64 + 64 + 64 + 1)
def want(G, B, fwd, P, ob=4):
    return [{"all_to_all": f, "all_to_all_bwd": B * 32 * ob, "reduce_scatter": G * B * 16 * ob,
             "all_gather": G * B * 16 * ob, "all_reduce_dp_tables": 50 * 16 * ob,
             "all_reduce_dense": P * 4} for f in fwd]
# bf16 tables: every exchange and the data-parallel tables' all-reduce in 2 bytes
assert abs(rows["dot2h"]["loss1"] - rows["dot1"]["loss1"]) < 1e-2, rows["dot2h"]["loss1"]
exp = {"dot2": want(2, 32, [2048, 4096 + 2048], P_dot),
       "dot2h": want(2, 32, [1024, 2048 + 1024], P_dot, 2),
       "dcn4": want(4, 16, [0, 2048, 2048, 4096], P_dcn)}
for lab, w in exp.items():
    x = rows[lab]
    assert x["processes"] == len(w) and x["backend"] == "gloo", x
    assert x["step_ms"] == max(q["step_ms"] for q in x["per_rank"]) > 0
    for q, e in zip(x["per_rank"], w):
        assert q["collective_bytes"] == e, (lab, q["rank"], q["collective_bytes"], e)
        assert q["priced_bytes"] == e, (lab, q["rank"], q["priced_bytes"], e)
        assert q["peak_rss_bytes"] > 0
    print(lab, "step_ms %.2f" % x["step_ms"], [q["collective_bytes"] for q in x["per_rank"]])
PYEOF
[ -n "$BIN" ] || { echo "dist_step: ok (no cdplan binary: the planner's plan not run)"; exit 0; }
export CDPLAN_DB="$T/p.db"
WL='"workload":{"kind":"dlrm","name":"planned","dense_features":13,"tables":[{"name":"t","rows":20000,"dim":16,"pooling":4,"count":3},{"name":"big","rows":400000,"dim":16,"pooling":20},{"name":"s","rows":40,"dim":16,"pooling":1}],"bottom_mlp":[64,16],"top_mlp":[64,32,1],"interaction":"dot","optimizers":{"dense":"sgd","sparse":"sgd"}}'
echo "{$WL,\"hardware\":\"h200\",\"cluster\":{\"gpus_per_node\":4,\"nodes\":1},\"baseline\":{\"batch_per_gpu\":64,\"precision\":\"fp32\",\"embedding_precision\":\"fp32\",\"framework\":\"pytorch_eager\"},\"time_limit_s\":5}" > "$T/plan.json"
"$BIN" plan "$T/plan.json" > "$T/plan.out" 2> "$T/plan.err" || fail "plan: $(tail -2 "$T/plan.err")"
WL="{$WL}" $PY - "$T/plan.out" "$T/job2.json" <<'PYEOF' || fail "job from the plan"
import json, os, sys
p = json.load(open(sys.argv[1]))
wl = json.loads(os.environ["WL"])["workload"]
rc = p["recipe"]
assert rc["gpus"] == 4, rc
one = dict(rc, gpus=1, gpus_per_node=1, batch_per_gpu=rc["global_batch"])
cases = [{"label": "one", "processes": 1, "workload": wl, "recipe": one},
         {"label": "plan", "processes": 4, "workload": wl, "recipe": rc,
          "embedding_plan": p["embedding_plan"]}]
json.dump({"kind": "dlrm_step", "params": {"steps": 1, "warmup": 0, "lr_sparse": 0.5,
           "cases": cases}}, open(sys.argv[2], "w"))
PYEOF
CDPLAN_RUNNER_ALLOW_CPU=1 $PY "$R" "$T/job2.json" > "$T/res2.json" 2> "$T/log2" ||
  fail "the plan's run failed: $(tail -5 "$T/log2")"
$PY - "$T/res2.json" <<'PYEOF' || fail "the plan's run"
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["failed"], r["failed"]
a, b = ({x["label"]: x for x in r["rows"]}[k] for k in ("one", "plan"))
for k in ("loss0", "loss1"):
    assert abs(a[k] - b[k]) <= 1e-5, (k, a[k], b[k])
# every table 16 wide, fp32: step_dlrm.c's a2a_bytes per rank = B x sum(dim) x 4 over the
# table- and column-wise tables = 64 x 80 x 4 (when the plan shards them so); the forward
# parts' mean is the same figure
per = b["per_rank"]
for q in per:
    assert q["collective_bytes"] == q["priced_bytes"], q
tw = sum(q["collective_bytes"]["all_to_all_bwd"] for q in per) / 4
fw = sum(q["collective_bytes"]["all_to_all"] for q in per) / 4
assert fw == tw == 64 * 80 * 4, (fw, tw)
print("plan", "step_ms %.2f" % b["step_ms"], [q["collective_bytes"] for q in per])
PYEOF
echo "dist_step: ok"
