#!/usr/bin/env bash
# Two hosts for real: network namespaces joined by a veth pair (tests/cluster/two_hosts.sh),
# one `crew launch --nnodes 2` per host, 2 workers each. Checks: the job trains to the losses
# of one host with 4 ranks; the automatic backend is hier (shm inside a host, Gloo across);
# a launcher without the job token is refused; a host's launcher SIGKILLed, and the link cut,
# are reported by the surviving host (naming the lost node, its host and ranks) within
# --node_timeout; with --max_restart a job that lost a host which comes back late restarts
# from its newest checkpoint and ends with the losses of an uninterrupted run.
# Usage: netns_test.sh BIN_DIR SOURCE_DIR. Exit 77 (skipped) without root, iproute2 or unshare.
set -uo pipefail
bin=$(cd "$1" && pwd)
src=$2
[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces): skipped"; exit 77; }
for c in ip unshare; do command -v $c >/dev/null || { echo "$c not installed: skipped"; exit 77; }; done
[ -d /usr/share/datasets/fashion-mnist ] || { echo "dataset-fashion-mnist not installed: skipped"; exit 77; }
# shellcheck source=tests/cluster/two_hosts.sh
source "$src/tests/cluster/two_hosts.sh"
dir=$(mktemp -d /tmp/crew-netns-test.XXXXXX)
cleanup() { two_hosts_down; rm -rf "$dir"; }
trap cleanup EXIT
two_hosts_up || { echo "cannot create network namespaces here: skipped"; exit 77; }
ip netns exec "$(two_hosts_ns 0)" true || { echo "ip netns exec does not work here: skipped"; exit 77; }
cd "$dir" || exit 1
fail() { echo "FAIL: $*"; for f in "$dir"/*.out; do echo "== $f"; tail -15 "$f"; done; exit 1; }
export CREW_JOB_TOKEN=netns-test-token
unset CREW_MASTER MASTER_ADDR MASTER_PORT CREW_BACKEND
master=${TWO_HOSTS_ADDR[0]}:29500
train=(--epochs 1 --test-samples 100 --num-workers 1 --log-every 100000)
losses() { sed -n 's/.*"type": "step".*"loss": \([0-9.e+-]*\),.*/\1/p' "$1"; }

# both_hosts NAME [launcher options --] program...: one launcher per host, both waited for
# (at most 180 s); NAME.0.out / NAME.1.out, exit codes in rc0 rc1.
both_hosts() {
  local name=$1
  shift
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  on_host 0 timeout 180 "$bin/crew" launch --nnodes 2 --rank 0 --master "$master" --devices=0,1 \
    --log_dir "$name.log0" "${opts[@]}" "$@" >"$name.0.out" 2>&1 &
  local p0=$!
  on_host 1 timeout 180 "$bin/crew" launch --nnodes 2 --rank 1 --master "$master" --devices=0,1 \
    --log_dir "$name.log1" "${opts[@]}" "$@" >"$name.1.out" 2>&1
  rc1=$?
  wait $p0
  rc0=$?
}

# 1. Two hosts train as one host with four ranks.
timeout 180 "$bin/crew" launch --devices=0,1,2,3 --log_dir one.log "$bin/train_cnn" "${train[@]}" \
  --max-steps 12 --metrics one.jsonl >one.out 2>&1 || fail "one host, 4 ranks"
both_hosts two -- "$bin/train_cnn" "${train[@]}" --max-steps 12 --metrics "$dir/two.jsonl"
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] || fail "two hosts: exit codes $rc0 $rc1"
[ "$(losses one.jsonl | wc -l)" -eq 12 ] || fail "one host: $(losses one.jsonl | wc -l) losses"
paste <(losses one.jsonl) <(losses two.jsonl) | awk '
  { d = $1 - $2; if (d < 0) d = -d; if (d > 1e-5 * ($1 < 0 ? -$1 : $1) + 1e-6) { print "step " NR-1 ": " $1 " vs " $2; bad = 1 } }
  END { if (NR != 12) { print NR " steps"; bad = 1 } exit bad }' || fail "two hosts' losses differ from one host's"
echo "ok: two hosts train to one host's losses"

# 2. The automatic backend across hosts is hier.
both_hosts backend -- "$bin/allreduce_bench" --backend auto --max-bytes 4096 --max-iters 3 --latency-iters 3
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] || fail "allreduce_bench on two hosts: exit codes $rc0 $rc1"
grep -q "4 ranks, backend hier" backend.0.out || fail "the automatic backend was not hier"
echo "ok: hier chosen"

# 3. A launcher without the job token is refused.
on_host 0 timeout 60 "$bin/crew" launch --nnodes 2 --rank 0 --master "$master" --devices=0 \
  --rendezvous_timeout 15s --log_dir tok.log0 /bin/true >tok.0.out 2>&1 &
p0=$!
sleep 1
on_host 1 env -u CREW_JOB_TOKEN timeout 60 "$bin/crew" launch --nnodes 2 --rank 1 --master "$master" \
  --devices=0 --rendezvous_timeout 15s --log_dir tok.log1 /bin/true >tok.1.out 2>&1
rc1=$?
wait $p0
[ $rc1 -ne 0 ] || fail "a launcher without the token joined"
grep -qi "token" tok.1.out || fail "the refused launcher does not say why (the token)"
echo "ok: no token, no entry"

# 4. A host's launcher SIGKILLed mid-run: host 0 names node 1 within --node_timeout.
start_slow_job() {  # NAME [launcher options]: a job that runs until stopped
  local name=$1
  shift
  on_host 0 timeout 120 "$bin/crew" launch --nnodes 2 --rank 0 --master "$master" --devices=0,1 \
    --node_timeout 4s --log_dir "$name.log0" "$@" "$bin/train_cnn" "${train[@]}" --max-steps 100000 >"$name.0.out" 2>&1 &
  p0=$!
  on_host 1 timeout 120 "$bin/crew" launch --nnodes 2 --rank 1 --master "$master" --devices=0,1 \
    --node_timeout 4s --log_dir "$name.log1" "$@" "$bin/train_cnn" "${train[@]}" --max-steps 100000 >"$name.1.out" 2>&1 &
  p1=$!
  for _ in $(seq 150); do grep -q "batch_id: 0" "$name.0.out" 2>/dev/null && break; sleep 0.2; done
  grep -q "batch_id: 0" "$name.0.out" || fail "$name: the job did not start training"
}
start_slow_job kill
pkill -KILL -f "crew launch --nnodes 2 --rank 1 --master $master" || fail "no launcher of host 1 to kill"
t0=$(date +%s)
wait $p0
rc0=$?
elapsed=$(( $(date +%s) - t0 ))
[ $rc0 -ne 0 ] && [ $rc0 -ne 124 ] || fail "host 0 after host 1's launcher died: exit $rc0"
grep -q "node 1 (host ${TWO_HOSTS_ADDR[1]}, ranks 2-3) sent no heartbeat" kill.0.out || fail "host 0 does not name node 1"
[ $elapsed -le 20 ] || fail "host 0 took $elapsed s to notice (node_timeout 4 s)"
wait $p1
echo "ok: a killed host is named within $elapsed s"

# 5. The link cut mid-run: both sides stop, host 0 names node 1.
start_slow_job link
two_hosts_link down
t0=$(date +%s)
wait $p0
rc0=$?
wait $p1
rc1=$?
elapsed=$(( $(date +%s) - t0 ))
two_hosts_link up
[ $rc0 -ne 0 ] && [ $rc0 -ne 124 ] || fail "host 0 after the link went down: exit $rc0"
[ $rc1 -ne 0 ] && [ $rc1 -ne 124 ] || fail "host 1 after the link went down: exit $rc1 (hung?)"
grep -q "node 1 (host ${TWO_HOSTS_ADDR[1]}, ranks 2-3) sent no heartbeat" link.0.out || fail "host 0 does not name node 1"
echo "ok: a cut link ends both hosts within $elapsed s"

# 6. Host 1 lost mid-run and started again late: with --max_restart both hosts restart from the
# newest checkpoint and every step's loss equals the uninterrupted run's.
steps=150
both_hosts ref -- "$bin/train_cnn" "${train[@]}" --max-steps $steps --metrics "$dir/ref.jsonl"
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] || fail "the uninterrupted two-host run: exit codes $rc0 $rc1"
resumable=(--max_restart 2 --node_timeout 4s "$bin/train_cnn" "${train[@]}" --max-steps $steps
           --checkpoint-dir "$dir/ckpt" --checkpoint-every 10 --metrics "$dir/re.jsonl")
host_job() {  # HOST OUT
  on_host "$1" timeout 200 "$bin/crew" launch --nnodes 2 --rank "$1" --master "$master" --devices=0,1 \
    --log_dir "re.log$1" "${resumable[@]}" >"$2" 2>&1
}
host_job 0 re.0.out &
p0=$!
host_job 1 re.1.out &
p1=$!
for _ in $(seq 300); do ls "$dir/ckpt" 2>/dev/null | grep -q '^step-' && break; sleep 0.1; done
ls "$dir/ckpt" | grep -q '^step-' || fail "no checkpoint was written"
pkill -KILL -f "crew launch --nnodes 2 --rank 1 --master $master" || fail "no launcher of host 1 to kill"
wait $p1
sleep 6  # host 0 notices after --node_timeout (4 s) and waits for the job's nodes to return
host_job 1 re.1b.out
rc1=$?
wait $p0
rc0=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] || fail "the job did not finish after host 1 came back: exit codes $rc0 $rc1"
grep -q "Restarting the job" re.0.out || fail "host 0 did not restart the job"
grep -qE "joining the running job|rejoining the job" re.1b.out || fail "host 1's new launcher did not rejoin"
last_losses() { sed -n 's/.*"type": "step".*"step": \([0-9]*\), "loss": \([0-9.e+-]*\),.*/\1 \2/p' "$1" |
  awk '{loss[$1] = $2} END {for (s in loss) print s, loss[s]}' | sort -n; }
join <(last_losses ref.jsonl) <(last_losses re.jsonl) | awk -v n=$steps '
  { d = $2 - $3; if (d < 0) d = -d; if (d > 1e-6) { print "step " $1 ": " $2 " vs " $3; bad = 1 } ; k++ }
  END { if (k != n) { print k " of " n " steps"; bad = 1 } exit bad }' || fail "the resumed run's losses differ"
echo "ok: a host that came back late rejoined; the losses equal the uninterrupted run's"
echo "ok"
