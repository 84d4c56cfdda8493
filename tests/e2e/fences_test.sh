#!/usr/bin/env bash
# Fences and terms that survive a failover (SPEC §6): the next number is at least the server's
# clock in microseconds, so one handed out by a promoted replica that never got the old
# master's last writes is still above every one the old master gave; on one server they still
# strictly increase, and a counter of an older rcoord (small numbers) keeps working.
source "$(dirname "$0")/lib.sh"

start_redis m

# The server's clock in µs, as TIME gives it.
server_us() {
  local t
  t=$(redis-cli -p "$1" time | tr '\n' ' ')
  read -r s us <<<"$t"
  echo $((s * 1000000 + us))
}
fence_of() { json_field "$1" fence; }
term_of() { json_field "$1" term; }

# --- one server: strictly increasing, under contention ---------------------------------------
# 8 processes take the lock 10 times each; each holder appends its fence while it holds the
# lock, so the file is in the order of the holds.
before=$(server_us "$m_PORT")
: >"$TEST_TMP/fences"
worker() {
  local i
  for i in $(seq 1 10); do
    "$RCOORD" -p "$m_PORT" lock run order --wait forever --ttl 10s -- \
      sh -c 'echo "$RCOORD_FENCE" >>"$1"' sh "$TEST_TMP/fences" || echo "failed: $?" >>"$TEST_TMP/fences"
  done
}
pids=()
for w in $(seq 1 8); do
  worker &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
assert_eq "$(wc -l <"$TEST_TMP/fences")" 80 "fences recorded by 8 x 10 holders"
sort -c -n -u "$TEST_TMP/fences" 2>/dev/null || fail "fences not strictly increasing in hold order: $(tr '\n' ' ' <"$TEST_TMP/fences")"
first=$(head -1 "$TEST_TMP/fences")
[ "$first" -ge "$before" ] || fail "the first fence $first is below the server's clock $before µs"
# Exact integers (no exponent, no rounding): the counter holds the last one handed out.
assert_eq "$(redis-cli -p "$m_PORT" get 'rcoord:{lock:order}:fence')" "$(tail -1 "$TEST_TMP/fences")" \
  "counter = last fence"
pass "80 holds from 8 processes: fences strictly increase, at or above the server's clock in µs"

# A counter ahead of the clock (given by a master whose clock ran ahead) counts up by one.
ahead=$(($(server_us "$m_PORT") + 1000000000))
redis-cli -p "$m_PORT" set 'rcoord:{lock:ahead}:fence' "$ahead" >/dev/null
expect 0 "$RCOORD" -p "$m_PORT" --json lock acquire ahead --ttl 10s
assert_eq "$(fence_of "$OUT")" $((ahead + 1)) "fence after a counter ahead of the clock"
expect 0 "$RCOORD" -p "$m_PORT" lock break ahead
expect 0 "$RCOORD" -p "$m_PORT" --json lock acquire ahead --ttl 10s
assert_eq "$(fence_of "$OUT")" $((ahead + 2)) "next fence after a counter ahead of the clock"
pass "a counter ahead of the server's clock still counts up by one"

# --- an older rcoord's counters upgrade in place ------------------------------------------------
redis-cli -p "$m_PORT" set 'rcoord:{lock:old}:fence' 41 >/dev/null
redis-cli -p "$m_PORT" set 'rcoord:{elect:old}:term' 7 >/dev/null
before=$(server_us "$m_PORT")
expect 0 "$RCOORD" -p "$m_PORT" --json lock acquire old --ttl 10s
f=$(fence_of "$OUT")
[ "$f" -gt 41 ] && [ "$f" -ge "$before" ] || fail "fence $f after an old counter of 41 (clock $before)"
expect 0 "$RCOORD" -p "$m_PORT" --json lock acquire old-shared --shared --ttl 10s
expect 0 "$RCOORD" -p "$m_PORT" --json elect campaign old --id a --ttl 10s
t=$(term_of "$OUT")
[ "$t" -gt 7 ] && [ "$t" -ge "$before" ] || fail "term $t after an old counter of 7 (clock $before)"
assert_eq "$(redis-cli -p "$m_PORT" type 'rcoord:{lock:old}:fence')" string "the old key, still a string"
expect 0 "$RCOORD" -p "$m_PORT" lock status old --json
assert_eq "$(fence_of "$OUT")" "$f" "status names the fence"
pass "an old counter (41, term 7) is used in place: the next fence and term jump to the clock"

# --- failover to a replica that missed the last writes -----------------------------------------
start_redis r --replicaof 127.0.0.1 "$m_PORT"
wait_until 10 bash -c "redis-cli -p $r_PORT info replication | grep -q 'master_link_status:up'" ||
  fail "replica never synced"
expect 0 "$RCOORD" -p "$m_PORT" --json lock acquire fo --ttl 60s
replicated=$(fence_of "$OUT")
expect 0 "$RCOORD" -p "$m_PORT" --json lock acquire fo-shared --shared --ttl 60s
replicated_shared=$(fence_of "$OUT")
expect 0 "$RCOORD" -p "$m_PORT" --json elect campaign fo --id a --ttl 60s
replicated_term=$(term_of "$OUT")
wait_until 10 bash -c "[ \"\$(redis-cli -p $r_PORT get 'rcoord:{elect:fo}:term')\" = $replicated_term ]" ||
  fail "the replica never got the first writes"
# Cut the replica off (it follows a port nothing listens on): it keeps what it has, and the
# master's next writes never reach it.
redis-cli -p "$r_PORT" replicaof 127.0.0.1 "$(free_port)" >/dev/null
wait_until 10 bash -c "redis-cli -p $m_PORT info replication | grep -q 'connected_slaves:0'" ||
  fail "the replica is still connected"
last=0
for i in 1 2 3; do
  expect 0 "$RCOORD" -p "$m_PORT" lock break fo
  expect 0 "$RCOORD" -p "$m_PORT" --json lock acquire fo --ttl 60s
  last=$(fence_of "$OUT")
  expect 0 "$RCOORD" -p "$m_PORT" --json lock acquire fo-shared --shared --ttl 60s
  last_shared=$(fence_of "$OUT")
  expect 0 "$RCOORD" -p "$m_PORT" elect resign fo --id a
  expect 0 "$RCOORD" -p "$m_PORT" --json elect campaign fo --id a --ttl 60s
  last_term=$(term_of "$OUT")
done
[ "$last" -gt "$replicated" ] || fail "fences on the master did not increase"
assert_eq "$(redis-cli -p "$r_PORT" get 'rcoord:{lock:fo}:fence')" "$replicated" \
  "the replica missed the last fences"
# Promote it: its counters are behind what the old master handed out.
redis-cli -p "$r_PORT" replicaof no one >/dev/null
expect 0 "$RCOORD" -p "$r_PORT" lock break fo
expect 0 "$RCOORD" -p "$r_PORT" --json lock acquire fo --ttl 60s
after=$(fence_of "$OUT")
[ "$after" -gt "$last" ] || fail "fence $after after the failover is not above $last, handed out before it"
expect 0 "$RCOORD" -p "$r_PORT" --json lock acquire fo-shared --shared --ttl 60s
after_shared=$(fence_of "$OUT")
[ "$after_shared" -gt "$last_shared" ] ||
  fail "shared fence $after_shared after the failover is not above $last_shared"
[ "$after_shared" -gt "$replicated_shared" ] || fail "shared fence below a replicated one"
expect 0 "$RCOORD" -p "$r_PORT" elect resign fo --id a
expect 0 "$RCOORD" -p "$r_PORT" --json elect campaign fo --id b --ttl 60s
after_term=$(term_of "$OUT")
[ "$after_term" -gt "$last_term" ] ||
  fail "term $after_term after the failover is not above $last_term, handed out before it"
pass "after a failover to a replica that missed the last writes, fences and terms are above all before"
