#!/bin/sh
# bench/load.sh: service throughput and latency on loopback with wrk.
# Starts `cdplan serve` on 127.0.0.1 (a free port, a fresh database), then
# drives, one after the other in the same run:
#   GET  /healthz        (the floor: routing, one SQLite count, a reply)
#   POST /v1/estimate    (one 4096^3 bf16 GEMM on h200)
#   POST /v1/plans       (data/workloads/plan_dlrm_mi350x.json, 1 s limit;
#                         skipped with a message when the route is absent)
# and prints requests/s, p50 and p99 per endpoint, estimate throughput as
# a ratio of healthz's, a table, and one JSON line.
# Targets (issue 9): estimate >= 20000 req/s, p99 <= 10 ms, >= 0.6 x healthz.
# usage: load.sh PATH_TO_CDPLAN [SOURCE_DIR]
# env: DURATION (s, default 10), CONNS (default 16), WRK_THREADS (default 1)
set -u
bin=${1:?usage: load.sh PATH_TO_CDPLAN [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/.." && pwd)}
dur=${DURATION:-10}
conns=${CONNS:-16}
wthreads=${WRK_THREADS:-1}
command -v wrk >/dev/null 2>&1 || { echo "load: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
dir=$(mktemp -d /tmp/cdplan-load-XXXXXX) || exit 1
pid=
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

"$bin" serve --listen 127.0.0.1:0 --db "$dir/load.db" >"$dir/out" 2>"$dir/err" &
pid=$!
port=
i=0
while [ $i -lt 100 ] && [ -z "$port" ]; do
  port=$(sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$dir/out")
  [ -z "$port" ] && sleep 0.1
  i=$((i + 1))
done
[ -n "$port" ] || { echo "load: cdplan serve did not start" >&2; cat "$dir/err" >&2; exit 1; }
base="http://127.0.0.1:$port"

# wrk scripts: method, body and headers of the POSTs.
lua_post() { # FILE BODYFILE
  body=$(tr -d '\n' <"$2" | sed 's/\\/\\\\/g; s/"/\\"/g')
  printf 'wrk.method = "POST"\nwrk.body = "%s"\nwrk.headers["Content-Type"] = "application/json"\n' \
    "$body" >"$1"
}
printf '%s' '{"hardware":"h200","ops":[{"op":"gemm","m":4096,"n":4096,"k":4096,"dtype":"bf16"}]}' \
  >"$dir/est.json"
lua_post "$dir/est.lua" "$dir/est.json"

# Latency in ms from wrk's "50%  1.23ms" style.
to_ms() {
  awk -v v="$1" 'BEGIN { n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000;
    printf "%.3f", n }'
}

# run NAME URL CONNS [LUA]: sets rps, p50, p99, errs
run() {
  name=$1 url=$2 c=$3 lua=${4:-}
  if [ -n "$lua" ]; then
    wrk -t "$wthreads" -c "$c" -d "${dur}s" --latency -s "$lua" "$url" >"$dir/$name.txt" 2>&1
  else
    wrk -t "$wthreads" -c "$c" -d "${dur}s" --latency "$url" >"$dir/$name.txt" 2>&1
  fi
  rps=$(awk '/^Requests\/sec:/ { print $2 }' "$dir/$name.txt")
  p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$dir/$name.txt")")
  p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$dir/$name.txt")")
  errs=$(awk '/Non-2xx or 3xx responses:/ { print $5 } /Socket errors/ { print "sock" }' \
    "$dir/$name.txt" | head -n 1)
  [ -n "$rps" ] || { echo "load: wrk failed for $name:" >&2; cat "$dir/$name.txt" >&2; exit 1; }
  [ -n "$errs" ] || errs=0
}

curl_code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(curl_code -X POST -H 'Content-Type: application/json' --data-binary @"$dir/est.json" \
  "$base/v1/estimate")" = 200 ] || { echo "load: /v1/estimate does not answer 200" >&2; exit 1; }

run healthz "$base/healthz" "$conns"
h_rps=$rps h_p50=$p50 h_p99=$p99 h_err=$errs
run estimate "$base/v1/estimate" "$conns" "$dir/est.lua"
e_rps=$rps e_p50=$p50 e_p99=$p99 e_err=$errs

# Plans: small request, 1 s solver limit, as many connections as the
# server lets plans run at once (half its threads), so none is turned
# away with 503.
plan_json=null
plan_row="POST /v1/plans         skipped (no such route)"
python3 - "$src/data/workloads/plan_dlrm_mi350x.json" "$dir/plan.json" <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
d["time_limit_s"] = 1
json.dump(d, open(sys.argv[2], "w"), separators=(",", ":"))
PY
if [ -s "$dir/plan.json" ]; then
  code=$(curl_code -X POST -H 'Content-Type: application/json' --data-binary @"$dir/plan.json" \
    "$base/v1/plans")
  if [ "$code" = 404 ] || [ "$code" = 405 ]; then
    echo "load: POST /v1/plans answered $code: skipped" >&2
  elif [ "$code" != 200 ] && [ "$code" != 201 ]; then
    echo "load: POST /v1/plans answered $code: skipped" >&2
    plan_row="POST /v1/plans         skipped (answered $code)"
  else
    heavy=$(( $(nproc) / 2 )); [ "$heavy" -ge 1 ] || heavy=1
    lua_post "$dir/plan.lua" "$dir/plan.json"
    run plans "$base/v1/plans" "$heavy" "$dir/plan.lua"
    plan_json=$(printf '{"rps":%s,"p50_ms":%s,"p99_ms":%s,"conns":%s,"non_2xx":"%s"}' \
      "$rps" "$p50" "$p99" "$heavy" "$errs")
    plan_row=$(printf 'POST /v1/plans     %10.0f %9s %9s %6s' "$rps" "$p50" "$p99" "$errs")
  fi
fi

ratio=$(awk -v e="$e_rps" -v h="$h_rps" 'BEGIN { printf "%.2f", e / h }')
ok=$(awk -v r="$e_rps" -v p="$e_p99" -v q="$ratio" \
  'BEGIN { print (r >= 20000 && p <= 10 && q >= 0.6) ? "true" : "false" }')
cores=$(nproc)
date=$(date -u +%Y-%m-%d)
printf 'cdplan load (%s cores, %s, wrk -t%s -c%s -d%ss)\n' "$cores" "$date" "$wthreads" "$conns" "$dur"
printf '%-18s %10s %9s %9s %6s\n' endpoint req/s p50_ms p99_ms non2xx
printf 'GET  /healthz      %10.0f %9s %9s %6s\n' "$h_rps" "$h_p50" "$h_p99" "$h_err"
printf 'POST /v1/estimate  %10.0f %9s %9s %6s\n' "$e_rps" "$e_p50" "$e_p99" "$e_err"
printf '%s\n' "$plan_row"
printf 'estimate / healthz: %s  (targets: >= 20000 req/s, p99 <= 10 ms, >= 0.60: %s)\n' \
  "$ratio" "$ok"
printf '{"bench":"load","date":"%s","cores":%s,"conns":%s,"duration_s":%s,' \
  "$date" "$cores" "$conns" "$dur"
printf '"healthz":{"rps":%s,"p50_ms":%s,"p99_ms":%s},' "$h_rps" "$h_p50" "$h_p99"
printf '"estimate":{"rps":%s,"p50_ms":%s,"p99_ms":%s},' "$e_rps" "$e_p50" "$e_p99"
printf '"plans":%s,"estimate_over_healthz":%s,"targets_met":%s}\n' "$plan_json" "$ratio" "$ok"
