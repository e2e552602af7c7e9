#!/bin/sh
# Stop and remove the cluster pg_up.sh started (its folder is named in STATE).
# usage: pg_down.sh STATE
set -u
STATE=$1
BIN=${CDPLAN_PG_BIN:-/usr/lib/postgresql/15/bin}
[ -f "$STATE" ] || exit 0
DIR=$(cat "$STATE")
case "$DIR" in /tmp/cdplan-pg-*) ;; *) echo "pg_down: refusing to remove '$DIR'" >&2; exit 1 ;; esac
if [ -d "$DIR/data" ]; then
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1
  else
    "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1
  fi
fi
rm -rf "$DIR"
rm -f "$STATE"
echo "pg_down: removed $DIR"
