#!/usr/bin/env bash
# Slurm starts crew programs: srun with no launcher and no MASTER_ADDR (the master comes
# from the step's node list, crew/core/scheduler_master.h), a rank that dies fails the step,
# and scancel of a batch job running `crew launch` leaves no worker behind.
# Usage: slurm_test.sh BIN_DIR SOURCE_DIR. Exit 77 (skipped) without root or slurm-wlm.
set -uo pipefail
bin=$(cd "$1" && pwd)
src=$2
[ "$(id -u)" -eq 0 ] || { echo "needs root (slurmd): skipped"; exit 77; }
for c in slurmctld slurmd munged srun sbatch scancel; do
  command -v "$c" >/dev/null || { echo "$c not installed (Debian's slurm-wlm, munge): skipped"; exit 77; }
done
dir=$(mktemp -d /tmp/crew-slurm-test.XXXXXX)
trap '"$src/scripts/slurm_local.sh" stop "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.log; do echo "== $f"; tail -20 "$f"; done; exit 1; }
eval "$(timeout 60 "$src/scripts/slurm_local.sh" start "$dir")" || fail "slurm_local.sh start"
[ -n "${SLURM_CONF:-}" ] || fail "slurm_local.sh printed no SLURM_CONF"
unset MASTER_ADDR MASTER_PORT CREW_MASTER
# Rank 0 hosts the store and admits only the job's token, which every task gets from srun's
# environment (docs/cluster.md). Without one rank 0 refuses to serve, naming the variable.
out=$(env -u CREW_JOB_TOKEN timeout 120 srun -n 2 --overcommit --kill-on-bad-exit=1 "$bin/all_gather_object" 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "srun without a token exited $rc: $out"
grep -q "no job token is set" <<<"$out" || fail "srun without a token: no clear error: $out"
CREW_JOB_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export CREW_JOB_TOKEN

out=$(timeout 120 srun -n 3 --overcommit "$bin/all_gather_object" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "srun -n 3 all_gather_object exited $rc: $out"
want="[{'foo': [1, 2, 3]}, {'bar': [4, 5, 6]}, {'bar': [4, 5, 6]}]"
[ "$(grep -cF "$want" <<<"$out")" -eq 3 ] || fail "expected 3 lines '$want', got: $out"

# The main job's program under srun alone: two tasks train data-parallel (needs Fashion-MNIST).
if [ -d /usr/share/datasets/fashion-mnist ]; then
  out=$(cd "$dir" && timeout 180 srun -n 2 --overcommit "$bin/train_cnn" --epochs 1 --max-steps 20 \
    --test-samples 200 --num-workers 1 2>&1)
  rc=$?
  [ $rc -eq 0 ] || fail "srun -n 2 train_cnn exited $rc: $out"
  grep -q "train_cnn: fashion-mnist, 2 ranks" <<<"$out" || fail "train_cnn did not run on 2 ranks: $out"
  grep -q "^done: 1 epochs" <<<"$out" || fail "train_cnn did not finish: $out"
  echo "ok: srun -n 2 train_cnn"
fi

out=$(timeout 120 srun -n 2 --kill-on-bad-exit=1 sh -c \
  '[ "$SLURM_PROCID" = 1 ] && exit 3; exec "$0"' "$bin/all_gather_object" 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a dead rank: srun exited $rc (want non-zero, not the timeout): $out"

# The sbatch recipe users copy (examples/slurm/train_cnn.sbatch), on this one node: one crew
# launch per node, checkpoints, --max_restart.
if [ -d /usr/share/datasets/fashion-mnist ]; then
  job=$(cd "$dir" && CREW_BIN_DIR=$bin DEVICES=0,1 sbatch --parsable --nodes=1 --wait -o "$dir/recipe.out" \
    "$src/examples/slurm/train_cnn.sbatch" --epochs 1 --max-steps 20 --test-samples 200 --num-workers 1)
  rc=$?
  [ $rc -eq 0 ] || fail "the sbatch recipe (job $job) exited $rc: $(cat "$dir/recipe.out")"
  grep -q "^done: 1 epochs" "$dir/recipe.out" || fail "the sbatch recipe did not train: $(cat "$dir/recipe.out")"
  ls "$dir/ckpt-$job" | grep -q step- || fail "the sbatch recipe wrote no checkpoint in $dir/ckpt-$job"
  echo "ok: the sbatch recipe"
fi

marker=$((300 + RANDOM % 600))
job=$(sbatch --parsable -o "$dir/batch.out" --wrap "exec $bin/crew launch --devices=0,1 /bin/sleep $marker") ||
  fail "sbatch"
for _ in $(seq 100); do pgrep -f "^/bin/sleep $marker\$" >/dev/null && break; sleep 0.2; done
[ "$(pgrep -fc "^/bin/sleep $marker\$")" -eq 2 ] || fail "the batch job's two workers did not start"
scancel "$job"
for _ in $(seq 150); do pgrep -f "sleep $marker" >/dev/null || break; sleep 0.2; done
if pgrep -fa "sleep $marker"; then fail "processes of job $job survived scancel"; fi
echo "ok"
