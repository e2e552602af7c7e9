#!/bin/sh
# Stop the one-node Slurm that slurm_up.sh started in DIR: its jobs, then
# slurmd, slurmctld and its private munged, each by the pid in its own pid
# file (never by name). DIR is kept for its logs; munge's private folder
# under /tmp (named by DIR/munge.path) is removed, its log copied to DIR.
# usage: slurm_down.sh DIR
set -u
DIR=${1:?usage: slurm_down.sh DIR}
command -v scancel >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ] || { echo "slurm absent: skip" >&2; exit 77; }
alive() { [ -f "$1" ] && pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
# Jobs first, while the controller is there to take the request.
if alive "$DIR/slurmctld.pid" && [ -f "$DIR/slurm.conf" ]; then
  SLURM_CONF="$DIR/slurm.conf" timeout 10 scancel --full -u "$(id -un)" 2>/dev/null
fi
stop() {
  [ -f "$1" ] || return 0
  pid=$(cat "$1" 2>/dev/null)
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  kill -KILL "$pid" 2>/dev/null || true
}
stop "$DIR/slurmd.pid"
stop "$DIR/slurmctld.pid"
MDIR=$(cat "$DIR/munge.path" 2>/dev/null || true)
case "$MDIR" in
/tmp/cdplan-munge-*)
  stop "$MDIR/munged.pid"
  cp "$MDIR/munged.log" "$DIR/log/munged.log" 2>/dev/null || true
  rm -rf "$MDIR" "$DIR/munge.path"
  ;;
esac
exit 0
