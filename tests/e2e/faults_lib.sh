# Network faults for end-to-end tests, made on this machine only. Sourced by a fault test in
# place of lib.sh (it sources lib.sh itself).
#
# The test runs again inside a network namespace of its own (`unshare --net`): anonymous, so
# parallel runs never share one, and the kernel removes it with its last process, whatever
# way the test ends. Its loopback is brought up, and every Redis server, proxy and rcoord
# client of the test lives there, on loopback addresses only. Faults are made there:
#   - nftables rules on the namespace's loopback: packet loss (`numgen random`), ports and
#     addresses blackholed (every packet dropped, both ways), a group of clients cut off by
#     the owner of their sockets (`meta skuid`, marked on the connection);
#   - a forwarding TCP proxy the test owns (fault_proxy.py): delay, stall (a frozen link),
#     cut (RST) on command.
# The kernel here has no netem; the proxy stands in for delay and stalls.
#
# Needs root (namespaces, nftables). Where they cannot be made, the test prints one SKIP line
# and exits 77 (ctest reports it as skipped, never passed); with RCOORD_REQUIRE_FAULTS=1 (CI)
# that is a failure instead.

_fault_unavailable() {
  if [ "${RCOORD_REQUIRE_FAULTS:-0}" = 1 ]; then
    echo "FAIL: fault harness unavailable: $1 (RCOORD_REQUIRE_FAULTS=1 requires it)" >&2
    exit 1
  fi
  echo "SKIP: fault harness unavailable: $1 (needs root, unshare, ip and nft)"
  exit 77
}

if [ "${_RCOORD_FAULT_NS:-}" != "$$" ]; then
  for _tool in unshare ip nft python3; do
    command -v "$_tool" >/dev/null 2>&1 || _fault_unavailable "$_tool not found"
  done
  unshare --net true 2>/dev/null || _fault_unavailable "cannot create a network namespace"
  # The same process goes on inside the new namespace (exec keeps the PID ctest waits for).
  _RCOORD_FAULT_NS=$$ exec unshare --net -- bash -c \
    'ip link set lo up && exec bash "$@"' fault-namespace "$0" "$@"
fi

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

nft add table inet rcoord_fault 2>/dev/null || _fault_unavailable "nftables refused a table"
# `faults`: what fault_* adds and fault_heal removes. `marks`: connections of the clients
# fault_run_as starts are marked at their first packet (see fault_cut_port_except_uid).
nft add chain inet rcoord_fault marks '{ type filter hook output priority -10; policy accept; }'
nft add chain inet rcoord_fault faults '{ type filter hook output priority 0; policy accept; }'

# Every packet on a namespace's loopback passes its output hook once, so one rule per
# direction covers a link: to the port (requests) and from it (replies).

# fault_loss PORT PERCENT: drop PERCENT % of the packets each way, at random.
fault_loss() {
  nft add rule inet rcoord_fault faults tcp dport "$1" numgen random mod 100 '<' "$2" counter drop
  nft add rule inet rcoord_fault faults tcp sport "$1" numgen random mod 100 '<' "$2" counter drop
}

# fault_dropped: how many packets the loss rules dropped so far (proof that they bit).
fault_dropped() {
  nft list chain inet rcoord_fault faults |
    awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}

# fault_blackhole PORT: every packet to or from PORT is dropped (a partition: nothing is
# refused or reset, the peers just stop hearing each other).
fault_blackhole() {
  nft add rule inet rcoord_fault faults tcp dport "$1" drop
  nft add rule inet rcoord_fault faults tcp sport "$1" drop
}

# fault_blackhole_addr ADDR PORT: as fault_blackhole, for clients that reach PORT at ADDR
# only (a server bound to 127.0.0.1 and 127.0.0.2 stays reachable at the other address).
fault_blackhole_addr() {
  nft add rule inet rcoord_fault faults ip daddr "$1" tcp dport "$2" drop
  nft add rule inet rcoord_fault faults ip saddr "$1" tcp sport "$2" drop
}

# fault_run_as UID CMD...: runs CMD as UID (and its group), so that fault_cut_port_except_uid
# can tell its connections from everyone else's. Files it writes must be writable by UID.
fault_run_as() {
  local uid=$1
  shift
  setpriv --reuid "$uid" --regid "$uid" --clear-groups -- "$@"
}
nft add rule inet rcoord_fault marks ct state new meta skuid 4242 ct mark set 42
FAULT_UID=4242

# fault_cut_port_except_uid PORT: PORT can be reached only over connections that processes
# of FAULT_UID opened; everyone else's packets to and from it are dropped. A partition that
# leaves a server with some clients (those started with fault_run_as $FAULT_UID) on its side.
fault_cut_port_except_uid() {
  nft add rule inet rcoord_fault faults tcp dport "$1" ct mark != 42 drop
  nft add rule inet rcoord_fault faults tcp sport "$1" ct mark != 42 drop
}

# fault_heal: every fault made above is gone (established connections recover with TCP's
# next retransmission).
fault_heal() { nft flush chain inet rcoord_fault faults; }

# start_proxy NAME TARGET_PORT: a fault_proxy.py forwarding 127.0.0.1:${NAME}_PORT to
# TARGET_PORT; sets ${NAME}_PORT, ${NAME}_URL and ${NAME}_CTL (its control port).
start_proxy() {
  local name=$1 target=$2 ports_file="$TEST_TMP/proxy-$1.ports" pid
  python3 "$(dirname "${BASH_SOURCE[0]}")/fault_proxy.py" "$target" "$ports_file" &
  pid=$!
  track $pid
  wait_until 10 test -s "$ports_file" || fail "proxy $name did not start"
  local listen control
  read -r listen control <"$ports_file"
  printf -v "${name}_PORT" '%s' "$listen"
  printf -v "${name}_CTL" '%s' "$control"
  printf -v "${name}_URL" '%s' "redis://127.0.0.1:$listen"
}

# proxy_ctl NAME COMMAND: sends one command (stall, resume, delay MS, cut, count) and waits
# until the proxy applied it; prints its answer.
proxy_ctl() {
  local ctl="${1}_CTL" answer
  exec {_proxy_fd}<>"/dev/tcp/127.0.0.1/${!ctl}"
  printf '%s\n' "$2" >&"$_proxy_fd"
  read -r answer <&"$_proxy_fd"
  exec {_proxy_fd}>&-
  case $answer in ok*) echo "$answer" ;; *) fail "proxy $1: $answer" ;; esac
}

# Run by every fault test: it really is in a namespace of its own with faults that work.
_fault_self_check() {
  [ "$(ip -o link show | grep -c .)" -le 2 ] || fail "not in a fresh network namespace"
}
_fault_self_check
