# Topologies that fail over, for scripts/jepsen-failover and scripts/fault-matrix: a Sentinel
# set (a master, a replica, three sentinels) or a Redis Cluster (three masters with a replica
# each, every server as a user of its own), started inside the namespace of faults_lib.sh
# (source that first), and one failover of either, made by cutting the master off.
#
# After start_sentinel_topology or start_cluster_topology KEY:
#   CONNECT       the global options that reach the topology (--sentinel ... or --url SEED)
#   SERVER_PORTS  every data server's port; KIND: Sentinel or Cluster
#   master_port   the port of the current master (of KEY's slot, on a cluster)
#   settled       succeeds once every node agrees on that master and it has a replica in sync
#   cut_off PORT  drops every packet to and from the master PORT, but the connections of
#                 processes run as FAULT_UID (faults_lib.sh), and on a cluster its bus links
# fail_over PARTITION_S cuts the master off until it was replaced (at most 20 s) and for at
# least PARTITION_S seconds, heals, and (Sentinel) makes the old master a replica of the new one.

# poll SECONDS CMD...: as lib.sh's wait_until, every 250 ms (a settled() costs a dozen calls),
# and not scaled (what it waits for is the servers' own timing).
poll() {
  local deadline=$(($(now_ms) + $1 * 1000))
  shift
  poll_until "$deadline" 0.25 "$@"
}

# --- a master, a replica and three sentinels ---------------------------------------------------
start_sentinel_topology() {
  local port n
  start_redis A
  start_redis B --replicaof 127.0.0.1 "$A_PORT"
  sentinel_ports=()
  for n in 1 2 3; do _start_sentinel "$n"; done
  CONNECT=()
  for port in "${sentinel_ports[@]}"; do CONNECT+=(--sentinel "127.0.0.1:$port"); done
  CONNECT+=(--sentinel-master m)
  SERVER_PORTS=("$A_PORT" "$B_PORT")
  KIND=Sentinel
  master_port() { sentinel_master_port; }
  settled() { sentinel_settled; }
  cut_off() { fault_cut_port_except_uid "$1"; }
}

# _start_sentinel N: sentinel N of master m (A), by lib.sh's start_sentinel, with this topology's
# settings: quorum 2, down after 1 s.
_start_sentinel() {
  start_sentinel "S$1" m "$A_PORT" "sentinel down-after-milliseconds m 1000" \
    "sentinel failover-timeout m 4000" "sentinel parallel-syncs m 1"
  local port_var="S$1_PORT"
  redis-cli -p "${!port_var}" sentinel set m quorum 2 >/dev/null
  sentinel_ports+=("${!port_var}")
}

sentinel_master_port() {
  redis-cli -p "${sentinel_ports[0]}" sentinel get-master-addr-by-name m 2>/dev/null | sed -n 2p
}
# Settled: every sentinel sees the master, its replica and the two others, and the replica's
# link is up.
sentinel_settled() {
  local p m r
  m=$(master_port)
  [ -n "$m" ] || return 1
  for p in "${sentinel_ports[@]}"; do
    [ "$(redis-cli -p "$p" sentinel get-master-addr-by-name m | sed -n 2p)" = "$m" ] || return 1
    [ "$(redis-cli -p "$p" sentinel sentinels m | grep -c '^name$')" -ge 2 ] || return 1
    [ "$(redis-cli -p "$p" sentinel replicas m | grep -A1 -x flags | sed -n 2p)" = slave ] || return 1
  done
  for r in "${SERVER_PORTS[@]}"; do
    [ "$r" = "$m" ] && continue
    redis-cli -p "$r" info replication | tr -d '\r' | grep -qx "master_port:$m" || return 1
    redis-cli -p "$r" info replication | tr -d '\r' | grep -qx 'master_link_status:up' || return 1
  done
  [ "$(redis-cli -p "$m" info replication | tr -d '\r' | sed -n 's/^connected_slaves://p')" -ge 1 ]
}

# --- a Redis Cluster: three masters with a replica each ------------------------------------------
# Each server runs as a user of its own (5001...), so that a cut can drop every packet a cut-off
# master sends, its own connections to the other nodes' bus included. KEY: the key whose slot's
# master fails over; the clients are given a master of another shard as --url (never cut off)
# and follow its redirects.
declare -A UID_OF=()
start_cluster_topology() {
  FAILOVER_KEY=$1
  local i addrs=()
  SERVER_PORTS=()
  for i in 1 2 3 4 5 6; do
    _start_cluster_node $((5000 + i))
    addrs+=("127.0.0.1:${SERVER_PORTS[-1]}")
  done
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes \
    >"$TEST_TMP/cluster-create.log" 2>&1 || fail "cluster create: $(tail -n 5 "$TEST_TMP/cluster-create.log")"
  poll 60 cluster_ok || fail "the cluster never became ready"
  local owner
  owner=$(port_of_key "${SERVER_PORTS[0]}" "$FAILOVER_KEY")
  SEED=$(redis-cli -p "$owner" cluster nodes | awk -v me="$owner" '$3 ~ /master/ {
    split($2, a, "[:@]"); if (a[2] != me) { print a[2]; exit } }')
  [ -n "$SEED" ] || fail "no other master to seed the clients with"
  CONNECT=(--url "redis://127.0.0.1:$SEED")
  KIND=Cluster
  master_port() { port_of_key "$SEED" "$FAILOVER_KEY"; }
  settled() { cluster_settled; }
  cut_off() { cluster_cut "$1"; }
}
# _kept_if_up PID PORT: a server just started is kept (stopped with the test) once it answers
# on PORT (lib.sh's _await_server); one that exited (its port was taken) is dropped, and the
# caller tries another port (false).
_kept_if_up() {
  if _await_server "$1" _is_server_on_port "$1" "$2"; then
    _redis_pids+=("$1")
    return 0
  fi
  _drop_server "$1"
  return 1
}

# _start_cluster_node UID: one node, as UID, on a free port (its bus port 10000 above it);
# another port when it cannot start on the first (taken meanwhile, by a client's own port).
_start_cluster_node() {
  local uid=$1 port dir
  for _ in 1 2 3 4 5; do
    port=$(_server_port)
    if [ "$port" -ge 55000 ] || [ -n "${UID_OF[$port]:-}" ]; then continue; fi
    dir="$TEST_TMP/node-$port"
    mkdir -p "$dir"
    chmod 777 "$dir"
    setpriv --reuid "$uid" --regid "$uid" --clear-groups -- redis-server --port "$port" \
      --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --logfile "$dir/log" \
      --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 1000 \
      --cluster-replica-validity-factor 0 &
    if _kept_if_up $! "$port"; then
      UID_OF[$port]=$uid
      SERVER_PORTS+=("$port")
      return 0
    fi
  done
  fail "a cluster node did not start (last tried port $port)"
}
cluster_ok() {
  local p
  for p in "${SERVER_PORTS[@]}"; do
    redis-cli -p "$p" cluster info | tr -d '\r' | grep -qx 'cluster_state:ok' || return 1
  done
}
# Settled: every node is in a cluster that is ok and names the same master for the key's slot,
# and that master has a replica whose link is up.
cluster_settled() {
  local p m r
  m=$(master_port)
  [ -n "$m" ] || return 1
  cluster_ok || return 1
  for p in "${SERVER_PORTS[@]}"; do
    [ "$(port_of_key "$p" "$FAILOVER_KEY")" = "$m" ] || return 1
  done
  r=$(redis-cli -p "$m" info replication | tr -d '\r' | sed -n 's/^slave0:ip=[^,]*,port=\([0-9]*\),state=online.*/\1/p')
  [ -n "$r" ] || return 1
  redis-cli -p "$r" info replication | tr -d '\r' | grep -qx 'master_link_status:up'
}
# The cut: PORT (the master) keeps only the connections of the spared processes; its bus port
# is dropped both ways, and so is every other packet its server sends (its own bus links).
cluster_cut() {
  fault_cut_port_except_uid "$1"
  fault_blackhole $(($1 + 10000))
  nft add rule inet rcoord_fault faults meta skuid "${UID_OF[$1]}" ct mark != 42 drop
}

# fail_over PARTITION_S [DEMOTE]: one failover, as described at the top. Sets FAILOVER_OLD and
# FAILOVER_NEW (empty when no replica was promoted within 20 s), FAILOVER_CUT, FAILOVER_AT (the
# promotion; empty without one) and FAILOVER_HEALED (times in ms). Sentinel turns the old
# master into a replica within the 10 s of its INFO period, a cluster does at once: with DEMOTE
# 1 (the default) that is done here at once for Sentinel too, so that a run does not wait for
# it (0 leaves it to Sentinel, as an operator's would be).
fail_over() {
  local partition_s=$1 demote=${2:-1}
  FAILOVER_OLD=$(master_port)
  FAILOVER_CUT=$(now_ms)
  cut_off "$FAILOVER_OLD"
  _promoted() { local m; m=$(master_port); [ -n "$m" ] && [ "$m" != "$FAILOVER_OLD" ]; }
  FAILOVER_NEW=""
  FAILOVER_AT=""
  if poll 20 _promoted; then
    FAILOVER_NEW=$(master_port)
    FAILOVER_AT=$(now_ms)
  fi
  while [ "$(now_ms)" -lt $((FAILOVER_CUT + partition_s * 1000)) ]; do sleep 0.05; done
  fault_heal
  FAILOVER_HEALED=$(now_ms)
  if [ "$demote" = 1 ] && [ "$KIND" = Sentinel ] && [ -n "$FAILOVER_NEW" ]; then
    redis-cli -p "$FAILOVER_OLD" replicaof 127.0.0.1 "$FAILOVER_NEW" >/dev/null
  fi
}
