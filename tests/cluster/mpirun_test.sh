#!/usr/bin/env bash
# mpirun starts crew programs with no launcher and no MASTER_ADDR: the ranks meet on
# loopback at a port derived from the Open MPI job id (crew/core/scheduler_master.h).
# Usage: mpirun_test.sh BIN_DIR. Exit 77 (skipped) without mpirun.
set -uo pipefail
bin=$(cd "$1" && pwd)
command -v mpirun >/dev/null || { echo "mpirun not installed (Debian's openmpi-bin): skipped"; exit 77; }
mpi=(mpirun --oversubscribe)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
fail() { echo "FAIL: $*"; exit 1; }

# Rank 0 hosts the store and admits only the job's token, which mpirun hands every local
# rank in the environment (docs/cluster.md). Without one rank 0 refuses to serve.
out=$(env -u MASTER_ADDR -u MASTER_PORT -u CREW_MASTER -u CREW_JOB_TOKEN timeout 120 "${mpi[@]}" -np 2 \
  "$bin/all_gather_object" 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "mpirun without a token exited $rc: $out"
grep -q "no job token is set" <<<"$out" || fail "mpirun without a token: no clear error: $out"
CREW_JOB_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export CREW_JOB_TOKEN

out=$(env -u MASTER_ADDR -u MASTER_PORT -u CREW_MASTER timeout 120 "${mpi[@]}" -np 3 "$bin/all_gather_object" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "mpirun -np 3 all_gather_object exited $rc: $out"
want="[{'foo': [1, 2, 3]}, {'bar': [4, 5, 6]}, {'bar': [4, 5, 6]}]"
[ "$(grep -cF "$want" <<<"$out")" -eq 3 ] || fail "expected 3 lines '$want', got: $out"

# The main job's program, data-parallel over the two MPI ranks (needs Fashion-MNIST).
if [ -d /usr/share/datasets/fashion-mnist ]; then
  out=$(cd "$(mktemp -d)" && env -u MASTER_ADDR -u MASTER_PORT -u CREW_MASTER timeout 180 "${mpi[@]}" -np 2 \
    "$bin/train_cnn" --epochs 1 --max-steps 20 --test-samples 200 --num-workers 1 2>&1)
  rc=$?
  [ $rc -eq 0 ] || fail "mpirun -np 2 train_cnn exited $rc: $out"
  grep -q "train_cnn: fashion-mnist, 2 ranks" <<<"$out" || fail "train_cnn did not run on 2 ranks: $out"
  grep -q "^done: 1 epochs" <<<"$out" || fail "train_cnn did not finish: $out"
fi

# A rank that dies: mpirun exits non-zero and the surviving rank (waiting in init) does not hang.
out=$(timeout 120 "${mpi[@]}" -np 2 sh -c \
  '[ "$OMPI_COMM_WORLD_RANK" = 1 ] && exit 3; exec "$0"' "$bin/all_gather_object" 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a dead rank: mpirun exited $rc (want non-zero, not the timeout): $out"
echo "ok"
