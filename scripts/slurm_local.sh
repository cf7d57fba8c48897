#!/usr/bin/env bash
# A one-host Slurm cluster (Debian's slurm-wlm and munge) for tests and for trying srun and
# sbatch: munged, slurmctld and slurmd with their state under one directory, no cgroups.
#
#   scripts/slurm_local.sh start [DIR]   # idempotent; prints the `export SLURM_CONF=...` line
#   scripts/slurm_local.sh stop [DIR]    # stops the daemons, removes DIR
#
# DIR defaults to /tmp/crew-slurm. Needs root (slurmd runs jobs as their users).
set -euo pipefail
cmd=${1:-}
dir=${2:-/tmp/crew-slurm}
conf=$dir/slurm.conf
sock=$dir/munge.socket

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() {
  for p in slurmd slurmctld munged; do
    if pid_alive "$dir/$p.pid"; then kill "$(cat "$dir/$p.pid")" 2>/dev/null || true; fi
  done
  for _ in $(seq 50); do
    pid_alive "$dir/slurmd.pid" || pid_alive "$dir/slurmctld.pid" || pid_alive "$dir/munged.pid" || break
    sleep 0.1
  done
  for p in slurmd slurmctld munged; do
    if pid_alive "$dir/$p.pid"; then kill -9 "$(cat "$dir/$p.pid")" 2>/dev/null || true; fi
  done
  rm -rf "$dir"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

write_conf() {
  local host cpus
  host=$(hostname -s)
  cpus=$(nproc)
  cat >"$conf" <<CONF
ClusterName=crew
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
}

start() {
  if pid_alive "$dir/slurmctld.pid" && pid_alive "$dir/slurmd.pid"; then
    echo "export SLURM_CONF=$conf"
    return
  fi
  stop
  mkdir -p "$dir/state" "$dir/spool"
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
  chmod 600 "$dir/munge.key"
  munged --key-file="$dir/munge.key" --socket="$sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" --force
  write_conf
  SLURM_CONF=$conf slurmctld -i
  SLURM_CONF=$conf slurmd
  for _ in $(seq 100); do
    if SLURM_CONF=$conf sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed)'; then
      echo "export SLURM_CONF=$conf"
      return
    fi
    sleep 0.2
  done
  echo "slurm_local: the node did not become idle within 20 s; logs in $dir" >&2
  tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  exit 1
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
