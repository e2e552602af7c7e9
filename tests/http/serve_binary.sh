#!/bin/sh
# The real `cdplan serve` end to end: start it on 127.0.0.1 port 0 with a
# fresh database, read the port from its one stdout line
# {"listening":"http://127.0.0.1:PORT"}, check /healthz and the seeded
# catalog with curl, solve one plan (GLPK on a worker thread: under ASan
# LeakSanitizer checks at exit that the solver's per-thread environment
# is freed), then SIGTERM it and expect a clean exit (status 0) with no
# sanitizer report.
# Every wait is bounded; the whole run stays under 20 s.
# usage: serve_binary.sh PATH_TO_CDPLAN [PATH_TO_CURL]
set -u
bin=$1
curl=${2:-curl}
dir=$(mktemp -d /tmp/cdplan-serve-XXXXXX) || exit 1
pid=

fail() {
  echo "serve_binary: $*" >&2
  echo "--- stdout:" >&2; cat "$dir/out" >&2 2>/dev/null
  echo "--- stderr:" >&2; tail -n 20 "$dir/err" >&2 2>/dev/null
  exit 1
}
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null; fi
  rm -rf "$dir"
}
trap cleanup EXIT

"$bin" serve --listen 127.0.0.1:0 --db "$dir/test.db" >"$dir/out" 2>"$dir/err" &
pid=$!

# Ready when the listening line is out: up to 10 s.
port=
i=0
while [ $i -lt 100 ]; do
  port=$(sed -n 's/.*"listening" *: *"http:\/\/127\.0\.0\.1:\([0-9][0-9]*\)".*/\1/p' "$dir/out")
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || fail "cdplan serve exited before listening"
  sleep 0.1
  i=$((i + 1))
done
[ -n "$port" ] || fail "no listening line within 10 s"

base="http://127.0.0.1:$port"
health=$("$curl" -sS --max-time 3 -o "$dir/health" -w '%{http_code}' "$base/healthz") || fail "curl /healthz failed"
[ "$health" = 200 ] || fail "/healthz answered $health"
grep -q '"status" *: *"ok"' "$dir/health" || fail "/healthz body: $(cat "$dir/health")"

code=$("$curl" -sS --max-time 3 -o "$dir/hw" -w '%{http_code}' "$base/v1/hardware") || fail "curl /v1/hardware failed"
[ "$code" = 200 ] || fail "/v1/hardware answered $code"
grep -q '"name" *: *"h200"' "$dir/hw" || fail "seeded catalog lacks h200: $(head -c 300 "$dir/hw")"

plan='{"workload":{"kind":"dlrm","dense_features":13,"tables":[{"name":"a","rows":1000000,"dim":64,"pooling":4,"count":8}],"bottom_mlp":[128,64],"top_mlp":[128,1]},"hardware":"h200","cluster":{"gpus_per_node":2,"nodes":1},"baseline":{"gpus":2,"batch_per_gpu":1024,"precision":"fp32"},"time_limit_s":2}'
code=$("$curl" -sS --max-time 15 -o "$dir/plan" -w '%{http_code}' -H 'Content-Type: application/json' \
  -d "$plan" "$base/v1/plans") || fail "curl /v1/plans failed"
[ "$code" = 201 ] || [ "$code" = 200 ] || fail "/v1/plans answered $code: $(head -c 300 "$dir/plan")"
grep -q '"recipe"' "$dir/plan" || fail "plan without a recipe: $(head -c 300 "$dir/plan")"

# SIGTERM: a graceful stop and exit status 0, within 5 s. A watchdog
# kills it past that (wait then reports 137); polling with kill -0 would
# not do, as it succeeds on a zombie not yet reaped.
kill -TERM "$pid"
# Its output goes nowhere so that ctest does not wait for a leftover sleep.
( sleep 5; kill -KILL "$pid" 2>/dev/null ) </dev/null >/dev/null 2>&1 &
watchdog=$!
wait "$pid"
rc=$?
pid=
kill "$watchdog" 2>/dev/null
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM"
! grep -q 'Sanitizer' "$dir/err" || fail "sanitizer report at exit"
echo "serve_binary: ok (port $port)"
