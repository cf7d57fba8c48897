# Two "hosts" on one machine, for tests and benchmarks (sourced, bash): network namespaces
# crewh<ID>0 and crewh<ID>1 joined by a veth pair, addresses 10.<a>.<b>.1 and .2/24, each
# host with its own hostname (a UTS namespace) and loopback. Nothing else is reachable from
# them and nothing outside them is contacted. Needs root and iproute2.
#
#   source tests/cluster/two_hosts.sh
#   two_hosts_up                  # sets TWO_HOSTS_ADDR=(10.a.b.1 10.a.b.2); trap two_hosts_down
#   two_hosts_shape "netem delay 1ms rate 1gbit"   # a tc qdisc on both ends of the link
#   on_host 0 crew launch ...     # runs a command on host 0 (as hostname crewhost0)
#   two_hosts_link down|up        # cut or restore the link
#   two_hosts_down

two_hosts_id=$$
two_hosts_ns() { echo "crewh${two_hosts_id}$1"; }

two_hosts_up() {
  local a=$((two_hosts_id % 200 + 20)) b=$((RANDOM % 250 + 1)) ns0 ns1
  ns0=$(two_hosts_ns 0)
  ns1=$(two_hosts_ns 1)
  TWO_HOSTS_ADDR=("10.$a.$b.1" "10.$a.$b.2")
  TWO_HOSTS_DEV=("cv${two_hosts_id}a" "cv${two_hosts_id}b")
  ip netns add "$ns0" && ip netns add "$ns1" || return 1
  ip link add "${TWO_HOSTS_DEV[0]}" type veth peer name "${TWO_HOSTS_DEV[1]}" || return 1
  local h
  for h in 0 1; do
    local ns dev
    ns=$(two_hosts_ns $h)
    dev=${TWO_HOSTS_DEV[$h]}
    ip link set "$dev" netns "$ns" || return 1
    ip -n "$ns" addr add "${TWO_HOSTS_ADDR[$h]}/24" dev "$dev" || return 1
    ip -n "$ns" link set "$dev" up || return 1
    ip -n "$ns" link set lo up || return 1
  done
}

# A root qdisc on both ends: "netem delay 1ms rate 1gbit", "netem loss 1%", "tbf rate 1gbit
# burst 256kb latency 50ms" (kernels built without netem have tbf), ...
two_hosts_shape() {
  local h
  for h in 0 1; do
    # shellcheck disable=SC2086
    ip netns exec "$(two_hosts_ns $h)" tc qdisc replace dev "${TWO_HOSTS_DEV[$h]}" root $1 || return 1
  done
}

two_hosts_link() {
  ip -n "$(two_hosts_ns 0)" link set "${TWO_HOSTS_DEV[0]}" "$1"
}

# on_host H CMD...: CMD in host H's namespaces, hostname crewhost<H>.
on_host() {
  local h=$1
  shift
  ip netns exec "$(two_hosts_ns "$h")" unshare --uts sh -c 'hostname "$0" && exec "$@"' "crewhost$h" "$@"
}

two_hosts_down() {
  local h
  for h in 0 1; do
    local ns
    ns=$(two_hosts_ns $h)
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  return 0
}
