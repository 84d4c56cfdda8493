#!/usr/bin/env bash
# A real master, replica and Sentinel on loopback: the master is found through Sentinel and
# followed across a forced failover; --wait-replicas waits for acknowledgements, and a verb
# that took something gives it back when too few replicas acknowledged it.
source "$(dirname "$0")/lib.sh"

start_redis m
start_redis r --replicaof 127.0.0.1 "$m_PORT"
wait_until 10 bash -c "redis-cli -p $r_PORT info replication | grep -q 'master_link_status:up'" ||
  fail "replica never synced"

start_sentinel sentinel main-db "$m_PORT"
sentinel_port=$sentinel_PORT
SENTINEL=(--sentinel "127.0.0.1:$(free_port)" --sentinel "127.0.0.1:$sentinel_port"
  --sentinel-master main-db)
wait_until 20 bash -c "redis-cli -p $sentinel_port sentinel replicas main-db | grep -q $r_PORT" ||
  fail "sentinel never saw the replica"

# --- discovery -------------------------------------------------------------------------------
expect 0 "$RCOORD" "${SENTINEL[@]}" lock acquire before-failover --ttl 60s
assert_eq "$(redis-cli -p "$m_PORT" exists 'rcoord:{lock:before-failover}')" 1 "lock on the master"
expect 0 "$RCOORD" "${SENTINEL[@]}" ping
assert_contains "$OUT" "mode: sentinel"
assert_contains "$OUT" "127.0.0.1:$m_PORT"
pass "the master is found through Sentinel (the first sentinel listed is down)"

# Through Sentinel the name goes with the handshake (ROLE): a waiter on the master is named,
# and the status read through Sentinel says who took the lock (SPEC §5).
"$RCOORD" "${SENTINEL[@]}" lock acquire before-failover --wait 1m >/dev/null &
waiter=$!
track $waiter
wait_blocked "$m_PORT" 1
redis-cli -p "$m_PORT" client list | grep " name=rcoord:lock-acquire:before-failover " >/dev/null ||
  fail "the waiter found through Sentinel is not named: $(redis-cli -p "$m_PORT" client list)"
kill "$waiter"
expect 0 "$RCOORD" "${SENTINEL[@]}" lock status before-failover --json
assert_eq "$(json_field "$OUT" cmd)" "lock acquire"
pass "connections through Sentinel name themselves; status says who took the lock"

expect 3 "$RCOORD" --timeout 1s --sentinel "127.0.0.1:$sentinel_port" --sentinel-master nope \
  lock status x
assert_contains "$ERR" "does not know master 'nope'"
expect 2 "$RCOORD" --sentinel "127.0.0.1:$sentinel_port" lock status x
expect 2 "$RCOORD" --sentinel "127.0.0.1" --sentinel-master main-db lock status x
pass "an unknown master is exit 3; a missing --sentinel-master or port is exit 2"

# --- forced failover -------------------------------------------------------------------------
# The sentinel refuses (NOGOODSLAVE) until it has fresh facts about the replica: ask again.
failover() { redis-cli -p "$sentinel_port" sentinel failover main-db | grep -qx OK; }
wait_until 30 failover || fail "the sentinel refused the failover"
wait_until 30 bash -c \
  "redis-cli -p $sentinel_port sentinel get-master-addr-by-name main-db | grep -qx $r_PORT" ||
  fail "the failover did not happen"
expect 0 "$RCOORD" "${SENTINEL[@]}" lock acquire after-failover --ttl 60s
assert_eq "$(redis-cli -p "$r_PORT" exists 'rcoord:{lock:after-failover}')" 1 \
  "lock on the new master"
expect 1 "$RCOORD" "${SENTINEL[@]}" lock acquire before-failover
# The history went over to the replica with the lock: what happened before, and after.
expect 0 "$RCOORD" "${SENTINEL[@]}" -o json history before-failover
assert_contains "$(head -1 <<<"$OUT")" '"event":"acquired"'
assert_contains "$(tail -1 <<<"$OUT")" '"event":"busy"'
pass "after SENTINEL FAILOVER the next command reaches the new master, the history with it"

# --- --wait-replicas -------------------------------------------------------------------------
# The old master rejoins as a replica of the new one.
wait_until 30 bash -c "redis-cli -p $m_PORT info replication | grep -q 'master_link_status:up'" ||
  fail "the old master did not rejoin as a replica"
NEW=(--url "redis://127.0.0.1:$r_PORT")
expect 0 "$RCOORD" "${NEW[@]}" --wait-replicas 1 lock acquire acked --ttl 10m
expect 0 "$RCOORD" "${NEW[@]}" --wait-replicas 1 -q queue push acked-q one two
expect 0 "$RCOORD" "${NEW[@]}" --wait-replicas 1 -q bloom add acked-f a b c
expect 0 "$RCOORD" "${NEW[@]}" --wait-replicas 1 lock status acked
pass "--wait-replicas 1 with one replica in sync: writes and reads succeed"

# left_as_said VERB NAME: a take refused for want of acknowledgements said what became of what
# it took, and that is so: given back (status exits 1). Giving back has one --timeout of its
# own; should even that run out (a server that slow on a busy machine), the message must say
# so, and the TTL ends it (whether the late release landed is then unknown).
left_as_said() {
  if [[ "$ERR" == *"could not be given back"* ]]; then
    echo "# $1 $2: the give-back did not answer within --timeout here: $ERR"
    return
  fi
  assert_contains "$ERR" "so what it took was given back"
  expect 1 "$RCOORD" "${NEW[@]}" "$1" status "$2"
}

# The WAIT runs its whole --timeout (nothing can acknowledge it); a take and its give-back
# each get one, scaled for a slow machine.
timeout_ms=$(scaled 500)
expect 3 "$RCOORD" "${NEW[@]}" --timeout "${timeout_ms}ms" --wait-replicas 2 lock acquire short --ttl 60s
assert_contains "$ERR" "only 1 of 2 replicas acknowledged"
left_as_said lock short
pass "more replicas asked than exist: exit 3, and the lock was given back"

kill -STOP "$sentinel_PID"  # no second failover while the replica is down
redis-cli -p "$m_PORT" shutdown nosave >/dev/null 2>&1 || true
W=("${NEW[@]}" --timeout "${timeout_ms}ms" --wait-replicas 1)
expect 3 "$RCOORD" "${W[@]}" lock acquire lonely --ttl 60s
assert_contains "$ERR" "only 0 of 1 replicas acknowledged"
assert_lines "$ERR" 1 "one-line error"
left_as_said lock lonely
expect 3 "$RCOORD" "${W[@]}" sem take lonely-sem --limit 2
left_as_said sem lonely-sem
expect 3 "$RCOORD" "${W[@]}" elect campaign lonely-election --id me
left_as_said elect lonely-election
expect 3 "$RCOORD" "${W[@]}" lock run lonely-run -- touch "$TEST_TMP/ran"
[ ! -e "$TEST_TMP/ran" ] || fail "lock run started its command without the acknowledgement"
pass "replica stopped: acquire, take, campaign and run exit 3 and leave nothing held"

expect 0 "$RCOORD" "${W[@]}" lock status acked
expect 0 "$RCOORD" "${NEW[@]}" limit check peeked --rate 10/h
expect 0 "$RCOORD" "${W[@]}" limit status peeked --rate 10/h
expect 0 "$RCOORD" "${W[@]}" ls peeked
assert_contains "$OUT" "9 of 10 left"
pass "read-only verbs do not wait for replicas (limit status and ls peek)"
kill -CONT "$sentinel_PID"
