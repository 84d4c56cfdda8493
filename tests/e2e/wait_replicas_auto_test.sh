#!/usr/bin/env bash
# --wait-replicas auto, the default (SPEC §6): a write waits for every replica connected when
# it is made. With none connected it costs nothing: no WAIT is sent, and the count of replicas
# goes out with the write itself (ROLE in the same request), never in a round trip of its own.
# `0` turns it off; a number keeps its meaning. Proved by the server's own command counts.
source "$(dirname "$0")/lib.sh"

start_redis m

# calls CMD: how many times the master ran CMD since the last reset (INFO commandstats).
calls() {
  redis-cli -p "$m_PORT" info commandstats |
    sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p" | grep . || echo 0
}
reset_stats() { redis-cli -p "$m_PORT" config resetstat >/dev/null; }

# --- no replica ------------------------------------------------------------------------------
reset_stats
expect 0 "$RCOORD" -p "$m_PORT" lock acquire alone --ttl 10s
expect 0 "$RCOORD" -p "$m_PORT" -q queue push alone-q one
assert_eq "$(calls wait)" 0 "WAIT sent with no replica"
assert_eq "$(calls role)" 2 "ROLE, once with each write"
pass "auto (the default) with no replica: no WAIT sent"

reset_stats
expect 0 "$RCOORD" -p "$m_PORT" --wait-replicas 0 lock acquire off --ttl 10s
assert_eq "$(calls wait)" 0 "WAIT with --wait-replicas 0"
assert_eq "$(calls role)" 0 "ROLE with --wait-replicas 0"
pass "--wait-replicas 0: neither WAIT nor ROLE"

# --- one replica -----------------------------------------------------------------------------
start_redis r --replicaof 127.0.0.1 "$m_PORT"
wait_until 10 bash -c "redis-cli -p $m_PORT role | sed -n 3p | grep -q ." ||
  fail "the replica never came online"
reset_stats
expect 0 "$RCOORD" -p "$m_PORT" lock acquire one --ttl 10s
assert_eq "$(calls wait)" 1 "WAIT sent with one replica"
assert_eq "$(redis-cli -p "$r_PORT" exists 'rcoord:{lock:one}')" 1 "the replica has the lock"
pass "auto with one replica: the write waits for it (one WAIT)"

# A config file says the same: auto, or 0.
printf 'wait-replicas = 0\n' >"$TEST_TMP/off.toml"
reset_stats
expect 0 "$RCOORD" --config "$TEST_TMP/off.toml" -p "$m_PORT" lock acquire conf-off --ttl 10s
assert_eq "$(calls wait)" 0 "WAIT with wait-replicas = 0 in the config file"
printf 'wait-replicas = "auto"\n' >"$TEST_TMP/auto.toml"
expect 0 "$RCOORD" --config "$TEST_TMP/auto.toml" -p "$m_PORT" lock acquire conf-auto --ttl 10s
assert_eq "$(calls wait)" 1 "WAIT with wait-replicas = auto in the config file"
pass "the config file's wait-replicas takes auto and 0"

# The replica stops answering: auto waits for it, gives the lock back, exit 3; 0 does not wait.
kill -STOP "$r_PID"
expect 3 "$RCOORD" -p "$m_PORT" --timeout 500ms lock acquire stalled --ttl 60s
assert_contains "$ERR" "only 0 of 1 replicas acknowledged"
expect 1 "$RCOORD" -p "$m_PORT" lock status stalled
expect 0 "$RCOORD" -p "$m_PORT" --wait-replicas 0 lock acquire stalled --ttl 60s
kill -CONT "$r_PID"
pass "a replica that does not acknowledge: auto gives back and exits 3; 0 does not wait"

# A replica cut off (following a port nothing listens on) is no longer connected: no WAIT.
redis-cli -p "$r_PORT" replicaof 127.0.0.1 "$(free_port)" >/dev/null
wait_until 10 bash -c "redis-cli -p $m_PORT info replication | grep -q 'connected_slaves:0'" ||
  fail "the replica is still connected"
reset_stats
expect 0 "$RCOORD" -p "$m_PORT" lock acquire cut --ttl 10s
assert_eq "$(calls wait)" 0 "WAIT once the replica is gone"
pass "auto counts the replicas connected when the write is made: none left, no WAIT"
