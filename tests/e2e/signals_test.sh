# Signals: forwarded to the child's process group while it runs; Ctrl-C (SIGINT) or SIGTERM
# while still waiting aborts at once and leaves nothing behind.
source "$(dirname "$0")/lib.sh"
# Job control: background jobs of a non-interactive shell otherwise start with SIGINT ignored,
# and rcoord keeps signals that were ignored on entry ignored (as nohup users expect).
set -m
start_redis R
export RCOORD_URL=$R_URL

# SIGTERM to rcoord reaches the whole group: a shell script's own children stop too
cat >"$TEST_TMP/tree.sh" <<SH
sleep 60 &
echo \$! >"$TEST_TMP/grandchild.pid"
wait
SH
"$RCOORD" lock run tree -- sh "$TEST_TMP/tree.sh" &
runner=$!
track $runner
wait_until 3 test -s "$TEST_TMP/grandchild.pid" || fail "child did not start"
grandchild=$(cat "$TEST_TMP/grandchild.pid")
kill -TERM $runner
set +e
wait $runner
code=$?
set -e
assert_eq "$code" 143 "exit code: the child died of SIGTERM"
sleep 0.1
! alive "$grandchild" || fail "the grandchild survived SIGTERM"
expect 1 "$RCOORD" lock status tree
pass "SIGTERM forwarded to the process group; lock released"

# SIGHUP and SIGINT are forwarded too; a child that handles it decides the exit code
for sig in HUP INT; do
  rm -f "$TEST_TMP/ready"
  "$RCOORD" lock run handled -- sh -c "trap 'exit 7' $sig; touch '$TEST_TMP/ready'; while :; do sleep 0.05; done" &
  runner=$!
  track $runner
  wait_until 3 test -e "$TEST_TMP/ready" || fail "child did not start"
  kill -$sig $runner
  set +e
  wait $runner
  code=$?
  set -e
  assert_eq "$code" 7 "SIG$sig handled by the child"
done
expect 1 "$RCOORD" lock status handled
pass "SIGHUP and SIGINT forwarded; the child's code is kept"

# Ctrl-C while waiting: aborts at once, nothing is taken, then or later
expect 0 "$RCOORD" lock acquire busy --ttl 30s
holder=$OUT
for sig in INT TERM; do
  "$RCOORD" lock run busy --wait forever -- touch "$TEST_TMP/ran-$sig" 2>"$TEST_TMP/wait.err" &
  waiter=$!
  track $waiter
  sleep 0.4  # blocked in the wait by now
  sent_at=$(now_ms)
  kill -$sig $waiter
  set +e
  wait $waiter
  code=$?
  set -e
  took=$(($(now_ms) - sent_at))
  [ "$sig" = INT ] && want=130 || want=143
  assert_eq "$code" "$want" "exit code after SIG$sig while waiting"
  [ "$took" -lt 300 ] || fail "SIG$sig while waiting took ${took}ms to act"
  assert_contains "$(cat "$TEST_TMP/wait.err")" "interrupted while waiting for lock 'busy'"
  [ ! -e "$TEST_TMP/ran-$sig" ] || fail "the command ran after SIG$sig"
done
expect 0 "$RCOORD" lock status busy --json
assert_eq "$(json_field "$OUT" token)" "$holder" "the holder still holds it"
expect 0 "$RCOORD" lock release busy --token "$holder"
sleep 0.2
expect 1 "$RCOORD" lock status busy
pass "interrupted waiters abort at once and take nothing"

# the same for a plain `lock acquire --wait`
expect 0 "$RCOORD" lock acquire busy2 --ttl 30s
holder=$OUT
"$RCOORD" lock acquire busy2 --wait 1m >"$TEST_TMP/acq.out" 2>/dev/null &
waiter=$!
track $waiter
sleep 0.3
kill -INT $waiter
set +e
wait $waiter
code=$?
set -e
assert_eq "$code" 130
assert_eq "$(cat "$TEST_TMP/acq.out")" "" "no token printed"
expect 0 "$RCOORD" lock release busy2 --token "$holder"
sleep 0.2
expect 1 "$RCOORD" lock status busy2
pass "interrupted acquire --wait takes nothing"

# an interrupted waiter does not swallow the wake-up meant for the others
expect 0 "$RCOORD" lock acquire relay --ttl 30s
holder=$OUT
"$RCOORD" lock acquire relay --wait 20s --ttl 5s >"$TEST_TMP/relay.out" &
patient=$!
track $patient
sleep 0.2
"$RCOORD" lock acquire relay --wait 20s &
impatient=$!
sleep 0.2
expect 0 "$RCOORD" lock release relay --token "$holder"
kill -INT $impatient 2>/dev/null || true
wait $impatient 2>/dev/null || true
start=$(now_ms)
wait $patient || fail "the patient waiter did not get the lock"
[ "$(($(now_ms) - start))" -lt 400 ] || fail "the patient waiter was not woken promptly"
pass "wake-ups are passed on"

# nohup: a signal ignored on entry stays ignored, for rcoord and for the command
nohup "$RCOORD" lock run nohup -- sh -c 'sleep 0.5; exit 3' >/dev/null 2>&1 &
runner=$!
track $runner
sleep 0.2
kill -HUP $runner
set +e
wait $runner
code=$?
set -e
assert_eq "$code" 3 "nohup'd run survives SIGHUP"
pass "nohup keeps SIGHUP ignored"
