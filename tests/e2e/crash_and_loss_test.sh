# Holder crash (kill -9: the lock expires by its TTL, not before) and lock loss while the
# command runs (break: the child gets SIGTERM, rcoord exits 5 within one renewal period).
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# --- holder crash --------------------------------------------------------------------------
"$RCOORD" --timeout 500ms lock run crash --ttl 2s -- sleep 30 &
runner=$!
track $runner
wait_until 10 "$RCOORD" lock status crash || fail "run never took the lock"
sleep 0.3
child=$(pgrep -P $runner sleep || true)
kill -9 $runner
killed_at=$(now_ms)
[ -n "$child" ] && kill -9 "$child" 2>/dev/null || true
# renewed at most TTL/3 before the kill: still held one second after it
sleep 0.9
expect 1 "$RCOORD" lock acquire crash
expect 0 "$RCOORD" lock acquire crash --wait 5s --json
took=$(($(now_ms) - killed_at))
[ "$took" -le "$(scaled 2600)" ] || fail "taken ${took}ms after the crash; TTL is 2s"
[ "$took" -ge 1200 ] || fail "taken ${took}ms after the crash: before the TTL could pass"
pass "holder killed -9: taken after the TTL (${took}ms), not before"

# --- lock loss: break while the command runs -----------------------------------------------
cat >"$TEST_TMP/victim.sh" <<SH
trap 'echo TERM >"$TEST_TMP/got-term"; exit 143' TERM
sleep 30 &
wait
SH
"$RCOORD" --timeout 500ms lock run lost --ttl 3s -- sh "$TEST_TMP/victim.sh" 2>"$TEST_TMP/lost.err" &
runner=$!
track $runner
wait_until 10 "$RCOORD" lock status lost || fail "run never took the lock"
sleep 0.2
"$RCOORD" lock break lost >/dev/null
broken_at=$(now_ms)
set +e
wait $runner
code=$?
set -e
took=$(($(now_ms) - broken_at))
assert_eq "$code" 5 "exit code after lock loss"
[ -e "$TEST_TMP/got-term" ] || fail "the child did not get SIGTERM"
[ "$took" -le "$(scaled 1500)" ] || fail "loss noticed after ${took}ms; renewal period is 1s"
assert_contains "$(cat "$TEST_TMP/lost.err")" "lock 'lost' was lost"
pass "break while running: child got SIGTERM, exit 5 after ${took}ms"

# --- loss when another holder took it (key replaced) ---------------------------------------
"$RCOORD" --timeout 300ms lock run stolen --ttl 1500ms -- sleep 30 &
runner=$!
track $runner
wait_until 10 "$RCOORD" lock status stolen || fail "run never took the lock"
redis-cli -p "$R_PORT" hset 'rcoord:{lock:stolen}' token someone-else >/dev/null
set +e
wait $runner
code=$?
set -e
assert_eq "$code" 5 "exit code when another holder has it"
assert_eq "$(redis-cli -p "$R_PORT" hget 'rcoord:{lock:stolen}' token)" someone-else
pass "another holder: exit 5, the other holder's lock untouched"

# --- a child that ignores SIGTERM is killed after --kill-grace, with its group --------------
"$RCOORD" --timeout 300ms lock run stubborn --ttl 1500ms --kill-grace 1s -- \
  sh -c 'trap "" TERM; sleep 30 & echo $! >"$0"; wait; wait' "$TEST_TMP/stubborn.pid" &
runner=$!
track $runner
wait_until 10 test -s "$TEST_TMP/stubborn.pid" || fail "stubborn child did not start"
"$RCOORD" lock break stubborn >/dev/null
broken_at=$(now_ms)
set +e
wait $runner
code=$?
set -e
took=$(($(now_ms) - broken_at))
assert_eq "$code" 5
[ "$took" -ge 900 ] || fail "SIGKILL came before the grace: ${took}ms"
[ "$took" -le "$(scaled 2800)" ] || fail "SIGKILL came late: ${took}ms"
sleep 0.1
! alive "$(cat "$TEST_TMP/stubborn.pid")" || fail "the group's sleep survived"
pass "SIGTERM ignored: SIGKILL to the whole group after --kill-grace (${took}ms)"

# --- Redis unreachable until the lease would end --------------------------------------------
start_redis S
"$RCOORD" --url "$S_URL" --timeout 300ms lock run far --ttl 1500ms -- sleep 30 &
runner=$!
track $runner
wait_until 10 "$RCOORD" --url "$S_URL" lock status far || fail "run never took the lock"
kill -9 "$S_PID"
stopped_at=$(now_ms)
set +e
wait $runner
code=$?
set -e
took=$(($(now_ms) - stopped_at))
assert_eq "$code" 5
[ "$took" -le "$(scaled 2500)" ] || fail "noticed the loss after ${took}ms; the lease is 1.5s"
pass "Redis gone: exit 5 within the lease (${took}ms)"
