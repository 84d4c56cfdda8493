# Holder crash (kill -9: the lock expires by its TTL, not before) and lock loss while the
# command runs (break: the child gets SIGTERM, rcoord exits 5 within one renewal period).
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# --- holder crash --------------------------------------------------------------------------
"$RCOORD" --timeout 500ms lock run crash --ttl 2s -- sh -c 'echo $$ >"$0"; exec sleep 30' "$TEST_TMP/crash.pid" &
runner=$!
track $runner
wait_until 10 test -s "$TEST_TMP/crash.pid" || fail "run never started its command"
kill -9 $runner "$(cat "$TEST_TMP/crash.pid")"
wait $runner 2>/dev/null || true
# What is left of the lease now that nobody can renew it: the lock is held that long more
# (the clock starts before the look, so the wait measured from it cannot fall short).
killed_at=$(now_ms)
left=$(redis-cli -p "$R_PORT" pttl 'rcoord:{lock:crash}')
[ "$left" -gt 0 ] || fail "the lock was gone right after the crash (pttl $left)"
expect 0 "$RCOORD" lock acquire crash --wait 5s --json
took=$(($(now_ms) - killed_at))
[ "$took" -ge "$left" ] || fail "taken ${took}ms after the crash, with ${left}ms of the lease left"
[ "$took" -le "$(scaled $((left + 600)))" ] || fail "taken ${took}ms after the crash; ${left}ms of the lease were left"
pass "holder killed -9: taken when its lease ran out (${took}ms, ${left}ms were left), not before"

# --- lock loss: break while the command runs -----------------------------------------------
cat >"$TEST_TMP/victim.sh" <<SH
trap 'echo TERM >"$TEST_TMP/got-term"; exit 143' TERM
touch "$TEST_TMP/victim-ready"
sleep 30 &
wait
SH
"$RCOORD" --timeout 500ms lock run lost --ttl 3s -- sh "$TEST_TMP/victim.sh" 2>"$TEST_TMP/lost.err" &
runner=$!
track $runner
# the command has its trap set once it says so
wait_until 10 test -e "$TEST_TMP/victim-ready" || fail "run never started its command"
"$RCOORD" lock break lost >/dev/null
broken_at=$(now_ms)
code=0; wait $runner || code=$?
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
code=0; wait $runner || code=$?
assert_eq "$code" 5 "exit code when another holder has it"
assert_eq "$(redis-cli -p "$R_PORT" hget 'rcoord:{lock:stolen}' token)" someone-else
pass "another holder: exit 5, the other holder's lock untouched"

# --- a child that ignores SIGTERM is killed after --kill-grace, with its group --------------
# The lease and the I/O timeout scale with the machine: the loss must be the break's, not a
# renewal that a starved machine answered too late (SIGTERM would then precede the break).
"$RCOORD" --timeout "$(scaled 300)ms" lock run stubborn --ttl "$(scaled 1500)ms" \
  --kill-grace 1s -- \
  sh -c 'trap "" TERM; sleep 30 & echo $! >"$0"; wait; wait' "$TEST_TMP/stubborn.pid" &
runner=$!
track $runner
wait_until 10 test -s "$TEST_TMP/stubborn.pid" || fail "stubborn child did not start"
# from before the break: SIGTERM cannot come before it, so SIGKILL not before 1 s after this
broken_at=$(now_ms)
"$RCOORD" lock break stubborn >/dev/null
code=0; wait $runner || code=$?
took=$(($(now_ms) - broken_at))
assert_eq "$code" 5
[ "$took" -ge 1000 ] || fail "SIGKILL came before the grace: ${took}ms"
[ "$took" -le "$(scaled 2800)" ] || fail "SIGKILL came late: ${took}ms"
wait_until 5 dead "$(cat "$TEST_TMP/stubborn.pid")" || fail "the group's sleep survived"
pass "SIGTERM ignored: SIGKILL to the whole group after --kill-grace (${took}ms)"

# --- Redis unreachable until the lease would end --------------------------------------------
start_redis S
"$RCOORD" --url "$S_URL" --timeout 300ms lock run far --ttl 1500ms -- sleep 30 &
runner=$!
track $runner
wait_until 10 "$RCOORD" --url "$S_URL" lock status far || fail "run never took the lock"
kill -9 "$S_PID"
stopped_at=$(now_ms)
code=0; wait $runner || code=$?
took=$(($(now_ms) - stopped_at))
assert_eq "$code" 5
[ "$took" -le "$(scaled 2500)" ] || fail "noticed the loss after ${took}ms; the lease is 1.5s"
pass "Redis gone: exit 5 within the lease (${took}ms)"

# --- short leases with the default options (SPEC §6): 1.5s and 3s, no --timeout, no grace ---
# The default --timeout (2s) and grace (TTL/3) shrink to fit: a holder's crash, a break while
# its command runs and a command that ignores SIGTERM behave as with a long lease.
for ttl_ms in 1500 3000; do
  ttl="${ttl_ms}ms"
  grace=$((ttl_ms / 3))
  "$RCOORD" lock run "crash$ttl" --ttl "$ttl" -- sh -c 'echo $$ >"$0"; exec sleep 30' \
    "$TEST_TMP/crash$ttl.pid" &
  runner=$!
  track $runner
  wait_until 10 test -s "$TEST_TMP/crash$ttl.pid" || fail "--ttl $ttl: run never started its command"
  kill -9 $runner "$(cat "$TEST_TMP/crash$ttl.pid")"
  wait $runner 2>/dev/null || true
  killed_at=$(now_ms)
  left=$(redis-cli -p "$R_PORT" pttl "rcoord:{lock:crash$ttl}")
  [ "$left" -gt 0 ] || fail "--ttl $ttl: the lock was gone right after the crash (pttl $left)"
  expect 0 "$RCOORD" lock acquire "crash$ttl" --wait 5s
  crash_took=$(($(now_ms) - killed_at))
  [ "$crash_took" -ge "$left" ] ||
    fail "--ttl $ttl: taken ${crash_took}ms after the crash, ${left}ms were left"

  rm -f "$TEST_TMP/victim-ready" "$TEST_TMP/got-term"
  "$RCOORD" lock run "lost$ttl" --ttl "$ttl" -- sh "$TEST_TMP/victim.sh" 2>"$TEST_TMP/lost.err" &
  runner=$!
  track $runner
  wait_until 10 test -e "$TEST_TMP/victim-ready" || fail "--ttl $ttl: run never started its command"
  "$RCOORD" lock break "lost$ttl" >/dev/null
  code=0; wait $runner || code=$?
  assert_eq "$code" 5 "--ttl $ttl: exit code after lock loss"
  [ -e "$TEST_TMP/got-term" ] || fail "--ttl $ttl: the child did not get SIGTERM"

  "$RCOORD" lock run "stubborn$ttl" --ttl "$ttl" -- \
    sh -c 'trap "" TERM; sleep 30 & echo $! >"$0"; wait; wait' "$TEST_TMP/stubborn$ttl.pid" &
  runner=$!
  track $runner
  wait_until 10 test -s "$TEST_TMP/stubborn$ttl.pid" || fail "--ttl $ttl: stubborn child did not start"
  broken_at=$(now_ms)
  "$RCOORD" lock break "stubborn$ttl" >/dev/null
  code=0; wait $runner || code=$?
  took=$(($(now_ms) - broken_at))
  assert_eq "$code" 5 "--ttl $ttl: exit code of a stubborn command's lost lock"
  [ "$took" -ge "$grace" ] || fail "--ttl $ttl: SIGKILL before the default grace of ${grace}ms: ${took}ms"
  wait_until 5 dead "$(cat "$TEST_TMP/stubborn$ttl.pid")" || fail "--ttl $ttl: the group's sleep survived"
  pass "--ttl $ttl with the default options: crash (taken after ${crash_took}ms), loss, SIGKILL ${took}ms after the loss (grace ${grace}ms)"
done
