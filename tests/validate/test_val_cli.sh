#!/bin/sh
# cdplan validate from the command line: a bundle written with --out, run
# where it lies, its result ingested and reported; a local run submitted by
# one process and followed by another (the runner is no longer the
# follower's child); cancel; argument errors.
# usage: test_val_cli.sh CDPLAN_BINARY
set -eu
BIN=$1
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
T=$(mktemp -d /tmp/cdplan-valcli-XXXXXX)
trap 'rm -rf "$T"' EXIT
export CDPLAN_DB="$T/v.db"
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# bundle: submit, run anywhere, ingest, report
echo '{"kind":"cpu_selftest","hardware":"h200","params":{"n":100},
  "prediction":{"metric":"result.sum_squares","cases":[{"value":300000}]}}' > "$T/req.json"
"$BIN" validate submit "$T/req.json" --backend bundle --out "$T/b dir" > "$T/sub.json"
ID=$(field "$T/sub.json" '["id"]')
[ "$(field "$T/sub.json" '["state"]')" = queued ] || fail "bundle job not queued"
[ -x "$T/b dir/run.sh" ] && [ -f "$T/b dir/runner.py" ] && [ -f "$T/b dir/job.json" ] || fail "bundle files"
sh "$T/b dir/run.sh" 2>/dev/null
"$BIN" validate ingest "$T/b dir/result.json" > "$T/ing.json"
[ "$(field "$T/ing.json" '["state"]')" = done ] || fail "ingest did not finish the job"
"$BIN" validate report "$ID" > "$T/rep.json"
# sum of squares 0..99 = 328350; predicted 300000
[ "$(field "$T/rep.json" '["stats"]["n"]')" = 1 ] || fail "report has no case"
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["stats"]["max_rel_error"]; sys.exit(abs(e-28350/328350)>1e-9)' "$T/rep.json" || fail "report error"
# the same result twice is a conflict (exit 1)
if "$BIN" validate ingest "$T/b dir/result.json" 2>/dev/null; then fail "second ingest accepted"; fi

# local: submitted by one process, followed by another
echo '{"kind":"cpu_selftest","hardware":"h200","params":{"n":1000,"sleep_ms":500}}' > "$T/loc.json"
"$BIN" validate submit "$T/loc.json" > "$T/ls.json"
LID=$(field "$T/ls.json" '["id"]')
"$BIN" validate status "$LID" --wait 30 > "$T/lst.json"
[ "$(field "$T/lst.json" '["state"]')" = done ] || fail "local job: $(cat "$T/lst.json")"
[ "$(field "$T/lst.json" '["result"]["result"]["sum"]')" = 499500 ] || fail "local result"

# cancel from another process
echo '{"kind":"cpu_selftest","hardware":"h200","params":{"n":1,"sleep_ms":60000}}' > "$T/long.json"
"$BIN" validate submit "$T/long.json" > "$T/long-s.json"
CID=$(field "$T/long-s.json" '["id"]')
PID=$(field "$T/long-s.json" '["pid"]')
"$BIN" validate cancel "$CID" > "$T/can.json"
[ "$(field "$T/can.json" '["state"]')" = cancelled ] || fail "cancel"
sleep 0.3
if kill -0 "$PID" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$PID/status" 2>/dev/null; then
  fail "runner $PID still running after cancel"
fi
"$BIN" validate status > "$T/list.json"
[ "$(field "$T/list.json" '["validations"][0]["id"]')" = "$CID" ] || fail "list order"

# argument errors exit 2
set +e
"$BIN" validate submit "$T/req.json" --out "$T/x" 2>/dev/null; [ $? -eq 2 ] || fail "--out without bundle"
"$BIN" validate submit "$T/req.json" --backend bundle 2>/dev/null; [ $? -eq 2 ] || fail "bundle without --out"
# --out naming a file: a command-line mistake (was exit 3, after a job was
# recorded and failed), and no job is recorded
"$BIN" validate status > "$T/before.json"
"$BIN" validate submit "$T/req.json" --backend bundle --out "$T/req.json" 2>/dev/null
[ $? -eq 2 ] || fail "--out naming a file"
"$BIN" validate status > "$T/after.json"
cmp -s "$T/before.json" "$T/after.json" || fail "--out naming a file recorded a job"
"$BIN" validate report 2>/dev/null; [ $? -eq 2 ] || fail "report without ID"
"$BIN" validate status nope 2>/dev/null; [ $? -eq 1 ] || fail "bad id"
set -e
echo "test_val_cli: ok"
