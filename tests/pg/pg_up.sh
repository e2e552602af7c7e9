#!/bin/sh
# Start a throw-away PostgreSQL cluster for the _pg tests: initdb + pg_ctl
# from Debian's postgresql package in a mktemp -d folder under /tmp
# (owned by user postgres when run as root: PostgreSQL refuses to run as
# root and cannot reach a mode-700 checkout, so nothing of the cluster
# lives in the checkout), listening only on a Unix socket in that folder.
# Writes the folder's path into STATE (pg_down.sh STATE stops and removes
# it). Fails (never skips) when the binaries are absent: `make deps`
# installs them, and a _pg test that silently passed would hide a broken
# backend. fsync is off: the tests kill replicas, never the server.
# usage: pg_up.sh STATE
set -eu
STATE=$1
BIN=${CDPLAN_PG_BIN:-/usr/lib/postgresql/15/bin}
for b in initdb pg_ctl postgres; do
  if [ ! -x "$BIN/$b" ]; then
    echo "pg_up: FAIL: $BIN/$b not found; the _pg tests need a PostgreSQL server" >&2
    echo "pg_up: install it with: apt-get install postgresql (or make deps)" >&2
    exit 1
  fi
done
HERE=$(cd "$(dirname "$0")" && pwd)
[ -f "$STATE" ] && sh "$HERE/pg_down.sh" "$STATE" >/dev/null 2>&1 || true
DIR=$(mktemp -d /tmp/cdplan-pg-XXXXXX)
echo "$DIR" > "$STATE"
as_owner() { "$@"; }
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || { echo "pg_up: FAIL: running as root but there is no user postgres" >&2; exit 1; }
  chown postgres:postgres "$DIR"
  as_owner() { runuser -u postgres -- "$@"; }
fi
cd "$DIR"
as_owner "$BIN/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --locale=C --no-sync \
  >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 \
  -o "-k $DIR -c listen_addresses= -c fsync=off -c max_connections=200" start >/dev/null ||
  { cat "$DIR/server.log" >&2; exit 1; }
echo "pg_up: cluster on socket $DIR"
