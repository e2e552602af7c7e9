#!/bin/sh
# Start a one-node Slurm on localhost for the tests: munged (as user munge,
# on its own socket), slurmctld and slurmd, everything under DIR (wiped
# first: old DRAIN reasons survive restarts) except munge's files, free
# ports picked at start,
# two fake GPUs (character devices) so --gres=gpu:N works. Prints the
# SLURM_CONF path. Exits 77 (skip) only when the Slurm or munge binaries
# are absent. See NOTES-ecosystem.md ("Slurm on one machine").
# usage: slurm_up.sh [DIR]
set -eu
find_bin() { command -v "$1" 2>/dev/null || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } || true; }
for b in slurmctld slurmd sbatch squeue scontrol scancel sinfo munged munge; do
  [ -n "$(find_bin $b)" ] || { echo "slurm_up: $b not installed: skip" >&2; exit 77; }
done
DIR=${1:-$(mktemp -d /tmp/cdplan-slurm-XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
[ -d "$DIR" ] && sh "$HERE/slurm_down.sh" "$DIR" >/dev/null 2>&1 || true
rm -rf "$DIR"
mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/dev"
DIR=$(cd "$DIR" && pwd)
CONF="$DIR/slurm.conf"

# munge: a private daemon so that stopping it never touches another one.
# munged runs as user munge, which must reach its own files: they live in
# a folder of their own under /tmp (mode 700, owned by munge), not in DIR,
# whose parents may be readable by root only (a clone under /root or any
# mode-700 folder). DIR/munge.path names it; slurm_down.sh removes it.
MDIR=$(mktemp -d /tmp/cdplan-munge-XXXXXX)
echo "$MDIR" > "$DIR/munge.path"
KEY="$MDIR/munge.key"
if [ -r /etc/munge/munge.key ]; then cp /etc/munge/munge.key "$KEY"
else dd if=/dev/urandom of="$KEY" bs=1024 count=1 2>/dev/null; fi
chmod 700 "$MDIR"; chmod 600 "$KEY"
chown -R munge:munge "$MDIR"
SOCK="$MDIR/munge.socket"
runuser -u munge -- "$(find_bin munged)" --socket="$SOCK" --key-file="$KEY" \
  --pid-file="$MDIR/munged.pid" --log-file="$MDIR/munged.log" \
  --seed-file="$MDIR/munged.seed" --force
i=0; until [ -S "$SOCK" ]; do i=$((i+1)); [ $i -lt 100 ] || { echo "munged did not start" >&2; exit 1; }; sleep 0.1; done

# Two free TCP ports (a second test run or a real Slurm may hold 6817/6818).
set -- $(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
CTLD_PORT=$1 SLURMD_PORT=$2

# The node line from what slurmd sees, renamed to localhost.
NODE=$("$(find_bin slurmd)" -C | head -n1 | sed 's/^NodeName=[^ ]* //')
for g in 0 1; do
  mknod -m 666 "$DIR/dev/fakegpu$g" c 1 3 2>/dev/null || ln -s /dev/null "$DIR/dev/fakegpu$g"
done
cat > "$CONF" <<CONF
ClusterName=cdplantest
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$SOCK
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=512
SchedulerParameters=batch_sched_delay=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
GresTypes=gpu
MinJobAge=300
NodeName=localhost NodeAddr=127.0.0.1 $NODE Gres=gpu:h200:2 Feature=h200,hbm141 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
cat > "$DIR/gres.conf" <<GRES
AutoDetect=off
Name=gpu Type=h200 File=$DIR/dev/fakegpu[0-1]
GRES
export SLURM_CONF="$CONF"
"$(find_bin slurmctld)" -f "$CONF"
"$(find_bin slurmd)" -f "$CONF" -N localhost
i=0
until [ "$(sinfo -h -N -o %T 2>/dev/null | head -n1)" = idle ]; do
  i=$((i+1))
  if [ $i -ge 200 ]; then
    echo "slurm_up: node not idle: $(sinfo -h -N -o '%T %E' 2>&1)" >&2
    tail -n 20 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
    exit 1
  fi
  sleep 0.1
done
echo "$CONF"
