#!/bin/sh
# check_identical.sh: record every answer the front ends give for the example
# requests, so that a refactoring can be checked to change no byte of them
# (issue 28). Runs each data/workloads/*.json request through the CLI (step,
# plan or compare by its members; step and plan once more with --hw) and
# through a real `cdplan serve` on 127.0.0.1 port 0 (POST /v1/step,
# /v1/plans, /v1/compare), plus the replies whose code changed shape: hw add
# and PUT/POST /v1/hardware (Location), kernels select --format
# json|triton|triton-heuristic, estimate, validate submit (bundle) + status,
# POST /v1/validations (Location).
#
# usage: tools/check_identical.sh CDPLAN_BINARY OUTDIR   (record)
#        diff -r -x timed OUTDIR_BEFORE OUTDIR_AFTER     (compare)
# Each answer is kept twice: NAME (the bytes as given) and NAME.m (the same
# bytes with the members that change from run to run masked: ids, tokens,
# clocks, solve times, and the gaps and bounds of time-limited solves, which
# depend on how far the solver got). diff -r of two OUTDIRs then shows a
# real change in the .m files; the raw files differ in those members only.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/cdplan-ident-XXXXXX) || exit 1
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

mask() {
  sed -E 's/"(id|token|token_hash|created_at|started_at|finished_at|at|solve_s|gap|search_gap|bound_ms|workdir|pid|job_dir|out_dir|elapsed_s)":("[^"]*"|[-+0-9.eE]+)/"\1":"~"/g;
          s/(Location: \/v1\/plans\/)[0-9a-f]+/\1~/; s/\/tmp\/cdplan-ident-[A-Za-z0-9]+/TMP/g' "$1" >"$1.m"
}
# cli NAME ARGS...: stdout to NAME, stderr and the exit status to NAME.err
cli() {
  name=$1
  shift
  (cd "$tmp" && "$bin" --db "$tmp/cli.db" "$@") >"$out/$name" 2>"$tmp/err"
  echo "exit $?" >"$out/$name.err"
  grep -v ' cdplan info: ' "$tmp/err" >>"$out/$name.err"
  mask "$out/$name"
  mask "$out/$name.err"
}

cat >"$tmp/kernels.json" <<'EOF'
{"hardware":"h200","problems":[{"m":4096,"n":4096,"k":4096,"dtype":"bf16"},{"m":1,"n":8192,"k":8192,"dtype":"fp16"},{"m":479,"n":1024,"k":512,"dtype":"fp8"}],"top":4}
EOF
cat >"$tmp/estimate.json" <<'EOF'
{"hardware":"h200","ops":[{"op":"gemm","m":8192,"n":8192,"k":8192,"dtype":"bf16"},{"op":"embedding_bag","rows":1000000,"dim":128,"batch":65536,"pooling":20,"dtype":"fp32","pass":"fwd_bwd"},{"op":"elementwise","kind":"gelu","numel":16777216,"dtype":"bf16"},{"op":"allreduce","bytes":268435456,"ranks":8,"scope":"node"}]}
EOF
sed 's/"name": *"h200"/"name": "h200-ident"/' "$src/data/hardware/h200.json" >"$tmp/hw.json"
# Small plan and compare requests that solve to a proven optimum well within
# their limits: their answers are the same on every run (the example
# workloads' solves stop at the time limit, so their gaps and even their
# recipes vary from run to run with the machine's load; they land in timed/).
cat >"$tmp/plan_small.json" <<'EOF'
{"workload":{"kind":"dlrm","dense_features":13,"tables":[{"name":"a","rows":1000000,"dim":64,"pooling":4,"count":8},{"name":"b","rows":20000000,"dim":64,"pooling":20,"count":2}],"bottom_mlp":[128,64],"top_mlp":[128,1]},"hardware":"h200","cluster":{"gpus_per_node":2,"nodes":1},"baseline":{"gpus":2,"batch_per_gpu":1024,"precision":"fp32"},"knobs":{"batch_per_gpu":[1024,2048],"checkpointing":["none","full"]},"time_limit_s":30}
EOF
sed 's/"hardware":"h200",/"from":"h200","to":"mi350x",/' "$tmp/plan_small.json" >"$tmp/compare_small.json"
cat >"$tmp/val.json" <<'EOF'
{"kind":"gemm_sweep","hardware":"h200","backend":"bundle","params":{"shapes":[{"m":1,"n":8192,"k":8192}]},"prediction":{"results":[{"ms":0.05}]}}
EOF

# ---- the CLI ----
mkdir -p "$out/timed"
for f in "$src"/data/workloads/*.json; do
  b=$(basename "$f" .json)
  if grep -q '"from"' "$f"; then
    cli "timed/cli_compare_$b" compare "$f"
  elif grep -q '"baseline"' "$f"; then
    cli "timed/cli_plan_$b" plan "$f"
    cli "timed/cli_plan_hw_$b" plan "$f" --hw h100-sxm
  else
    cli "cli_step_$b" step "$f"
    cli "cli_step_hw_$b" step "$f" --hw mi300x
  fi
done
cli cli_plan_small plan "$tmp/plan_small.json"
cli cli_plan_small_hw plan "$tmp/plan_small.json" --hw b200
pid_small=$(sed -n 's/.*"id":"\([0-9a-f]\{16\}\)".*/\1/p' "$out/cli_plan_small")
cli cli_plan_small_show validate plan "$pid_small" --show
cli cli_plan_small_show_wait validate plan "$pid_small" --show --wait 1
cli cli_compare_small compare "$tmp/compare_small.json"
cli cli_compare_small_hw compare "$tmp/compare_small.json" --hw b200
cli cli_step_hw_bad step "$src/data/workloads/dlrm_dcn.json" --hw NoSuch
cli cli_kernels_json kernels select "$tmp/kernels.json"
cli cli_kernels_triton kernels select "$tmp/kernels.json" --format triton
cli cli_kernels_heur kernels select "$tmp/kernels.json" --format triton-heuristic
cli cli_kernels_hw_triton kernels select "$tmp/kernels.json" --format triton --hw mi350x
cli cli_estimate estimate "$tmp/estimate.json"
cli cli_estimate_hw estimate "$tmp/estimate.json" --hw b200
cli cli_hw_add hw add "$tmp/hw.json"
cli cli_hw_show hw show h200-ident
cli cli_val_submit validate submit "$tmp/val.json" --backend bundle --out "$tmp/bundle"
cli cli_val_submit_hw validate submit "$tmp/val.json" --backend bundle --out "$tmp/bundle2" --hw b200
cli cli_val_status validate status 1
cli cli_val_status_wait validate status 1 --wait 0.5
cli cli_val_status_none validate status 99

# ---- the server ----
"$bin" serve --listen 127.0.0.1:0 --db "$tmp/srv.db" >"$tmp/srv.out" 2>"$tmp/srv.err" &
pid=$!
port=
i=0
while [ $i -lt 100 ]; do
  port=$(sed -n 's/.*"listening" *: *"http:\/\/127\.0\.0\.1:\([0-9][0-9]*\)".*/\1/p' "$tmp/srv.out")
  [ -n "$port" ] && break
  sleep 0.1
  i=$((i + 1))
done
[ -n "$port" ] || { echo "check_identical: the server did not start" >&2; exit 1; }
base="http://127.0.0.1:$port"
# http NAME METHOD PATH [BODYFILE]: status, Location and Content-Type, then the body
http() {
  name=$1 method=$2 path=$3
  if [ $# -ge 4 ]; then
    curl -sS --max-time 120 -X "$method" -D "$tmp/h" -o "$tmp/b" -H 'Content-Type: application/json' \
      --data-binary "@$4" "$base$path"
  else
    curl -sS --max-time 120 -X "$method" -D "$tmp/h" -o "$tmp/b" "$base$path"
  fi
  { sed -n '1s/\r$//p' "$tmp/h"; grep -i -E '^(location|content-type):' "$tmp/h" | tr -d '\r'
    echo; cat "$tmp/b"; } >"$out/$name"
  mask "$out/$name"
}
for f in "$src"/data/workloads/*.json; do
  b=$(basename "$f" .json)
  if grep -q '"from"' "$f"; then
    http "timed/srv_compare_$b" POST /v1/compare "$f"
  elif grep -q '"baseline"' "$f"; then
    http "timed/srv_plan_$b" POST /v1/plans "$f"
  else
    http "srv_step_$b" POST /v1/step "$f"
  fi
done
http srv_plan_small POST /v1/plans "$tmp/plan_small.json"
loc=$(sed -n 's/^Location: \(\/v1\/plans\/[0-9a-f]*\)$/\1/p' "$out/srv_plan_small")
http srv_plan_small_get GET "$loc"
http srv_compare_small POST /v1/compare "$tmp/compare_small.json"
http srv_kernels POST /v1/kernels/select "$tmp/kernels.json"
http srv_estimate POST /v1/estimate "$tmp/estimate.json"
http srv_hw_create POST /v1/hardware "$tmp/hw.json"
http srv_hw_create_again POST /v1/hardware "$tmp/hw.json"
sed 's/"h200-ident"/"h200-ident2"/' "$tmp/hw.json" >"$tmp/hw2.json"
http srv_hw_put_new PUT /v1/hardware/h200-ident2 "$tmp/hw2.json"
http srv_hw_put_again PUT /v1/hardware/h200-ident2 "$tmp/hw2.json"
http srv_hw_get GET /v1/hardware/h200-ident2
http srv_val_submit POST /v1/validations "$tmp/val.json"
http srv_val_get GET /v1/validations/1
http srv_val_get_none GET /v1/validations/99
echo "check_identical: $(find "$out" -name '*.m' | wc -l) answers in $out"
