# `lock wait` and `sem wait` (SPEC §6 "waits that take nothing"): they return as soon as the
# lock (or K permits) is free, without taking anything, woken by the release itself rather
# than by looking again and again; timed out is exit 1; and a waiter never costs a waiting
# taker its hand-off.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
cli() { redis-cli -p "$R_PORT" "$@"; }
evalsha_calls() {
  cli info commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0
}

# Free: exit 0 at once, and the JSON names it. Nothing is taken.
out=$("$RCOORD" lock wait idle --json) || fail "lock wait on a free lock exited $?"
assert_eq "$(json_field "$out" free)" true "free lock"
assert_eq "$(json_field "$out" name)" idle "name"
json_field "$out" waited_ms >/dev/null || fail "no waited_ms in: $out"
"$RCOORD" lock status idle >/dev/null && fail "lock wait took the lock"
pass "a free lock: exit 0 at once, {free,name,waited_ms}, nothing taken"

# Held: --wait runs out, exit 1; the holder keeps it, and the waiter leaves nothing behind.
token=$("$RCOORD" lock acquire job --ttl 30s)
start=$(now_ms)
rc=0
out=$("$RCOORD" lock wait job --wait 300ms --json 2>"$TEST_TMP/err") || rc=$?
took=$(($(now_ms) - start))
assert_eq "$rc" 1 "a held lock, --wait 300ms"
assert_eq "$(json_field "$out" free)" false "timed out"
[ "$(json_field "$out" ttl_ms)" -gt 20000 ] || fail "ttl_ms is not the holder's: $out"
[ "$took" -ge 300 ] || fail "returned after ${took}ms, before its --wait of 300ms"
rc=0
"$RCOORD" lock wait job --wait 200ms 2>"$TEST_TMP/err" || rc=$?
assert_eq "$rc" 1 "text mode, timed out"
assert_contains "$(cat "$TEST_TMP/err")" "lock 'job' is busy: held by"
assert_eq "$(json_field "$("$RCOORD" lock status job --json)" token)" "$token" "holder after the wait"
assert_eq "$(cli exists 'rcoord:{lock:job}:watchers')" 0 "watchers left behind"
pass "a held lock: --wait runs out with exit 1 (${took}ms), says who holds it, holder untouched"

# Woken by the release, not by looking again: while it waits, the waiter's only calls are its
# heartbeat (about one a second); after the release it is gone long before a heartbeat, and
# the lock is free for anyone (it took nothing).
for round in $(seq "$(effort 3)"); do
  ( "$RCOORD" lock wait job --wait 30s; echo "$? $(now_ms)" >"$TEST_TMP/woke.$round" ) &
  track $!
  wait_blocked "$R_PORT" 1
  cli config resetstat >/dev/null
  since=$(now_ms)
  # 2.5 s (scaled): a waiter that polled every 100 ms would call 25 times; a heartbeat a
  # second makes one call a second, and one more at most.
  quiet_period 2500
  calls=$(evalsha_calls)
  watched=$(($(now_ms) - since))
  [ "$calls" -le $((watched / 1000 + 1)) ] ||
    fail "round $round: the waiter called $calls scripts in ${watched}ms: it polls"
  [ -e "$TEST_TMP/woke.$round" ] && fail "round $round: lock wait returned while the lock was held"
  released_at=$(now_ms)
  "$RCOORD" lock release job --token "$token" >/dev/null
  wait_until 10 test -s "$TEST_TMP/woke.$round" || fail "round $round: lock wait never returned"
  read -r rc woke_at <"$TEST_TMP/woke.$round"
  assert_eq "$rc" 0 "round $round: exit after the release"
  lag=$((woke_at - released_at))
  [ "$lag" -le "$(scaled 400)" ] || fail "round $round: returned ${lag}ms after the release"
  token=$("$RCOORD" lock acquire job --ttl 30s) || fail "round $round: the lock was not free after lock wait"
  pass "round $round: returned ${lag}ms after the release, $calls script call(s) in ${watched}ms of waiting; free for the next taker"
done
"$RCOORD" lock release job --token "$token" >/dev/null

# A release that wakes watchers still hands the lock to the waiting taker at once: 8
# watchers and 2 takers wait; each release passes the lock to the next taker within a
# bound far below the takers' one-second heartbeat, and every watcher returns 0.
for round in $(seq "$(effort 3)"); do
  token=$("$RCOORD" lock acquire relay --ttl 30s)
  wpids=()
  for w in 1 2 3 4 5 6 7 8; do
    "$RCOORD" lock wait relay --wait 30s &
    wpids+=($!)
    track $!
  done
  for t in 1 2; do
    "$RCOORD" lock run relay --wait 30s -- sh -c "echo \$(date +%s%3N) >$TEST_TMP/in.$round.$t; sleep 0.3" &
    track $!
    tpids[$t]=$!
  done
  wait_blocked "$R_PORT" 10
  released_at=$(now_ms)
  "$RCOORD" lock release relay --token "$token" >/dev/null
  for p in "${wpids[@]}"; do wait "$p" || fail "round $round: a watcher exited $?"; done
  for t in 1 2; do wait "${tpids[$t]}" || fail "round $round: taker $t exited $?"; done
  first=$(cat "$TEST_TMP"/in.$round.* | sort -n | head -1)
  second=$(cat "$TEST_TMP"/in.$round.* | sort -n | tail -1)
  lag=$((first - released_at))
  gap=$((second - first))
  [ "$lag" -le "$(scaled 400)" ] || fail "round $round: the first taker got the lock ${lag}ms after the release"
  # The second gets it when the first's 300 ms are over, not a heartbeat later.
  [ "$gap" -le $((300 + $(scaled 400))) ] || fail "round $round: the second taker came ${gap}ms after the first"
  pass "round $round: 8 watchers and 2 takers: taker 1 in ${lag}ms after the release, taker 2 ${gap}ms later, all watchers exit 0"
done

# sem wait: until K permits are free. 3 of 3 in use; freeing 1 is not enough for K=2, freeing
# 2 more is; nothing is taken.
a=$("$RCOORD" sem take pool --limit 3 --permits 2)
b=$("$RCOORD" sem take pool --limit 3)
rc=0
out=$("$RCOORD" sem wait pool --limit 3 --permits 2 --wait 200ms --json 2>/dev/null) || rc=$?
assert_eq "$rc" 1 "sem wait on a full semaphore"
assert_eq "$(json_field "$out" in_use)" 3 "in_use"
( "$RCOORD" sem wait pool --limit 3 --permits 2 --wait 30s; echo "$? $(now_ms)" >"$TEST_TMP/sem.woke" ) &
track $!
wait_blocked "$R_PORT" 1
"$RCOORD" sem release pool --token "$b" >/dev/null
# A wake-up takes milliseconds (above); 1 s is well past it.
quiet_period 1000
[ -e "$TEST_TMP/sem.woke" ] && fail "sem wait --permits 2 returned with 1 permit free"
released_at=$(now_ms)
"$RCOORD" sem release pool --token "$a" >/dev/null
wait_until 10 test -s "$TEST_TMP/sem.woke" || fail "sem wait never returned"
read -r rc woke_at <"$TEST_TMP/sem.woke"
assert_eq "$rc" 0 "sem wait after the release"
lag=$((woke_at - released_at))
[ "$lag" -le "$(scaled 400)" ] || fail "sem wait returned ${lag}ms after the release"
assert_eq "$(json_field "$("$RCOORD" sem status pool --json)" in_use)" 0 "sem wait took permits"
rc=0
"$RCOORD" sem wait pool --limit 2 --permits 3 2>"$TEST_TMP/err" || rc=$?
assert_eq "$rc" 2 "--permits above --limit"
pass "sem wait --permits 2: not woken by 1 free permit, woken ${lag}ms after the second release, takes none"

# A Redlock has no watchers: lock wait says so (exit 2) instead of waiting some other way.
start_redis R2
start_redis R3
rc=0
"$RCOORD" -u "$R_URL" -u "$R2_URL" -u "$R3_URL" lock wait job --wait 1s 2>"$TEST_TMP/err" || rc=$?
assert_eq "$rc" 2 "lock wait on a Redlock"
assert_contains "$(cat "$TEST_TMP/err")" "not available on a Redlock"
pass "lock wait on a Redlock: exit 2, one line saying it is not available there"
