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
wait_until 10 test -s "$TEST_TMP/grandchild.pid" || fail "child did not start"
grandchild=$(cat "$TEST_TMP/grandchild.pid")
kill -TERM $runner
code=0; wait $runner || code=$?
assert_eq "$code" 143 "exit code: the child died of SIGTERM"
wait_until 5 dead "$grandchild" || fail "the grandchild survived SIGTERM"
expect 1 "$RCOORD" lock status tree
pass "SIGTERM forwarded to the process group; lock released"

# SIGHUP and SIGINT are forwarded too; a child that handles it decides the exit code
for sig in HUP INT; do
  rm -f "$TEST_TMP/ready"
  "$RCOORD" lock run handled -- sh -c "trap 'exit 7' $sig; touch '$TEST_TMP/ready'; while :; do sleep 0.05; done" &
  runner=$!
  track $runner
  wait_until 10 test -e "$TEST_TMP/ready" || fail "child did not start"
  kill -$sig $runner
  code=0; wait $runner || code=$?
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
  wait_blocked "$R_PORT" 1
  sent_at=$(now_ms)
  kill -$sig $waiter
  code=0; wait $waiter || code=$?
  took=$(($(now_ms) - sent_at))
  [ "$sig" = INT ] && want=130 || want=143
  assert_eq "$code" "$want" "exit code after SIG$sig while waiting"
  [ "$took" -lt "$(scaled 300)" ] || fail "SIG$sig while waiting took ${took}ms to act"
  assert_contains "$(cat "$TEST_TMP/wait.err")" "interrupted while waiting for lock 'busy'"
  [ ! -e "$TEST_TMP/ran-$sig" ] || fail "the command ran after SIG$sig"
done
expect 0 "$RCOORD" lock status busy --json
assert_eq "$(json_field "$OUT" token)" "$holder" "the holder still holds it"
expect 0 "$RCOORD" lock release busy --token "$holder"
# a waiter left behind would be woken by the release and take the lock within milliseconds
quiet_period 200
expect 1 "$RCOORD" lock status busy
pass "interrupted waiters abort at once and take nothing"

# the same for a plain `lock acquire --wait`
expect 0 "$RCOORD" lock acquire busy2 --ttl 30s
holder=$OUT
"$RCOORD" lock acquire busy2 --wait 1m >"$TEST_TMP/acq.out" 2>/dev/null &
waiter=$!
track $waiter
wait_blocked "$R_PORT" 1
kill -INT $waiter
code=0; wait $waiter || code=$?
assert_eq "$code" 130
assert_eq "$(cat "$TEST_TMP/acq.out")" "" "no token printed"
expect 0 "$RCOORD" lock release busy2 --token "$holder"
quiet_period 200 # as above: nobody may take it
expect 1 "$RCOORD" lock status busy2
pass "interrupted acquire --wait takes nothing"

# an interrupted waiter does not swallow the wake-up meant for the others
expect 0 "$RCOORD" lock acquire relay --ttl 30s
holder=$OUT
"$RCOORD" lock acquire relay --wait 20s --ttl 5s >"$TEST_TMP/relay.out" &
patient=$!
track $patient
wait_blocked "$R_PORT" 1
"$RCOORD" lock acquire relay --wait 20s &
impatient=$!
wait_blocked "$R_PORT" 2
expect 0 "$RCOORD" lock release relay --token "$holder"
kill -INT $impatient 2>/dev/null || true
wait $impatient 2>/dev/null || true
start=$(now_ms)
wait $patient || fail "the patient waiter did not get the lock"
[ "$(($(now_ms) - start))" -lt "$(scaled 400)" ] || fail "the patient waiter was not woken promptly"
pass "wake-ups are passed on"

# end_code PID: sets CODE to the exit code of a child that was stopped on the way and then
# continued (bash's wait also returns when it stops, with 128 + SIGSTOP).
end_code() {
  while :; do
    CODE=0; wait "$1" || CODE=$?
    [ "$CODE" -eq 147 ] || break
  done
}

# A waiter's next try goes out behind its wait, in the same write, so the server runs it the
# moment a release wakes the waiter, with no round trip back to it: a waiter that is stopped
# (SIGSTOP) still takes the lock when it is released, and finds it taken when it goes on. A
# signal that ends such a wait gives back what the try behind it may have taken.

# stopped_waiter_takes GROUP STATUS_VERB TAKE_ARGS...: holds GROUP's object `behind`, starts
# a waiter (stdout to behind.out), stops it once it waits, releases, and leaves the status
# (STATUS_VERB's output) in OUT and the stopped waiter's pid in STOPPED.
stopped_waiter_takes() {
  local group=$1 status=$2
  shift 2
  expect 0 "$RCOORD" "$group" "$@" --ttl 30s
  local holder=$OUT
  "$RCOORD" "$group" "$@" --wait 1m >"$TEST_TMP/behind.out" 2>/dev/null &
  STOPPED=$!
  track $STOPPED
  wait_blocked "$R_PORT" 1
  kill -STOP $STOPPED
  expect 0 "$RCOORD" "$group" release behind --token "$holder"
  # shellcheck disable=SC2086
  expect 0 "$RCOORD" "$group" status behind $status
}
stopped_waiter_takes lock --json acquire behind
assert_eq "$(json_field "$OUT" pid)" "$STOPPED" "the stopped waiter took the lock"
kill -CONT $STOPPED
end_code $STOPPED
assert_eq "$CODE" 0 "the stopped waiter reports the lock as taken"
assert_eq "$(json_field "$OUT" token)" "$(cat "$TEST_TMP/behind.out")" "its token"
expect 0 "$RCOORD" lock release behind --token "$(cat "$TEST_TMP/behind.out")"
stopped_waiter_takes lock --json acquire behind
assert_eq "$(json_field "$OUT" pid)" "$STOPPED" "the stopped waiter took the lock"
kill -INT $STOPPED
kill -CONT $STOPPED
end_code $STOPPED
assert_eq "$CODE" 130 "exit code after SIGINT with the lock taken behind the wait"
assert_eq "$(cat "$TEST_TMP/behind.out")" "" "no token printed"
expect 1 "$RCOORD" lock status behind
# the same for a semaphore's waiter
stopped_waiter_takes sem "" take behind --limit 1
assert_contains "$OUT" "(pid $STOPPED, sem take)"
kill -CONT $STOPPED
end_code $STOPPED
assert_eq "$CODE" 0 "the stopped semaphore waiter reports the permit as taken"
taken=$(sed -n 's/^holders: \([0-9a-f]*\) .*/\1/p' <<<"$OUT")
[ -n "$taken" ] || fail "no holder's token in: $OUT"
assert_eq "$(cat "$TEST_TMP/behind.out")" "$taken" "its token"
# and for an election's
expect 0 "$RCOORD" elect campaign behind --id first --ttl 30s
"$RCOORD" elect campaign behind --id second --wait 1m >/dev/null 2>&1 &
STOPPED=$!
track $STOPPED
wait_blocked "$R_PORT" 1
kill -STOP $STOPPED
expect 0 "$RCOORD" elect resign behind --id first
expect 0 "$RCOORD" elect status behind --json
assert_eq "$(json_field "$OUT" id)" second "the stopped candidate leads"
assert_eq "$(json_field "$OUT" pid)" "$STOPPED" "by the stopped process"
kill -CONT $STOPPED
end_code $STOPPED
assert_eq "$CODE" 0 "the stopped candidate reports itself elected"
pass "a waiter's try rides behind its wait; a signal gives back what it took"

# Ctrl-Z (SIGTSTP), unlike SIGSTOP, reaches rcoord: a waiter stopped that way first gives back
# what its take may have taken and leaves the queue, so the lock goes to the next one while it
# is stopped; continued, it waits again from the start.
stopped() { [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = T ]; }
# ctrl_z_waiter GROUP WAITING_KEY RUN...: while GROUP's object is held, a waiter started with
# RUN (a run form whose command touches ctrlz.ran) gets SIGTSTP once it waits. Leaves its pid
# in STOPPED, and checks that it stopped out of the queue (WAITING_KEY, the waiting set).
ctrl_z_waiter() {
  local group=$1 waiting=$2
  shift 2
  rm -f "$TEST_TMP/ctrlz.ran"
  "$RCOORD" "$@" --wait 1m -- touch "$TEST_TMP/ctrlz.ran" &
  STOPPED=$!
  track $STOPPED
  wait_blocked "$R_PORT" 1
  kill -TSTP $STOPPED
  wait_until 10 stopped $STOPPED || fail "$group: Ctrl-Z did not stop the waiter"
  assert_eq "$(redis-cli -p "$R_PORT" zcard "$waiting")" 0 "$group: the stopped waiter left the queue"
  _blocked_at_least "$R_PORT" 1 && fail "$group: the stopped waiter's wait is still on the server"
  [ ! -e "$TEST_TMP/ctrlz.ran" ] || fail "$group: the stopped waiter ran its command"
}
# continued PID: SIGCONT, and its exit code in CODE (bash's wait returns as it stops, 148).
continued() {
  kill -CONT "$1"
  while :; do
    CODE=0; wait "$1" || CODE=$?
    [ "$CODE" -eq 148 ] || break
  done
}
expect 0 "$RCOORD" lock acquire ctrlz --ttl 30s
holder=$OUT
ctrl_z_waiter lock 'rcoord:{lock:ctrlz}:writers' lock run ctrlz
expect 0 "$RCOORD" lock release ctrlz --token "$holder"
expect 0 "$RCOORD" lock run ctrlz -- true # the next one takes it, not the stopped waiter
continued $STOPPED
assert_eq "$CODE" 0 "lock run: continued, it waited again and ran its command"
[ -e "$TEST_TMP/ctrlz.ran" ] || fail "lock run: the continued waiter never ran its command"
expect 1 "$RCOORD" lock status ctrlz
# a semaphore's waiter
expect 0 "$RCOORD" sem take ctrlz --limit 1 --ttl 30s
holder=$OUT
ctrl_z_waiter sem 'rcoord:{sem:ctrlz}:queue' sem run ctrlz --limit 1
expect 0 "$RCOORD" sem release ctrlz --token "$holder"
expect 0 "$RCOORD" sem run ctrlz --limit 1 -- true
continued $STOPPED
assert_eq "$CODE" 0 "sem run: continued, it waited again and ran its command"
[ -e "$TEST_TMP/ctrlz.ran" ] || fail "sem run: the continued waiter never ran its command"
pass "Ctrl-Z on a waiter: out of the queue while stopped, waits again when continued"

# nohup: a signal ignored on entry stays ignored, for rcoord and for the command (which runs
# until told to stop, so the signal comes while it runs)
nohup "$RCOORD" lock run nohup -- sh -c 'touch "$0.ready"; while [ ! -e "$0.stop" ]; do sleep 0.05; done; exit 3' \
  "$TEST_TMP/nohup" >/dev/null 2>&1 &
runner=$!
track $runner
wait_until 10 test -e "$TEST_TMP/nohup.ready" || fail "the nohup'd run never started its command"
kill -HUP $runner
# a forwarded SIGHUP would end the command at once (it does not handle it): 200 ms is ample
quiet_period 200
touch "$TEST_TMP/nohup.stop"
code=0; wait $runner || code=$?
assert_eq "$code" 3 "nohup'd run survives SIGHUP"
pass "nohup keeps SIGHUP ignored"


# --- SIGTERM and SIGINT at every stage of lock run, sem run and elect run -------------------
# Whatever the stage, nothing is left behind: no lock, permit, waiting ticket or leadership.
run_argv() {
  case $1 in
    lock) echo "lock run $2 --ttl 5s --wait 1m" ;;
    sem) echo "sem run $2 --limit 1 --ttl 5s --wait 1m" ;;
    elect) echo "elect run $2 --id runner --ttl 5s --wait 1m" ;;
  esac
}
# hold_elsewhere P NAME: another owner takes it, so a run must wait; prints its token or id.
hold_elsewhere() {
  case $1 in
    lock) "$RCOORD" lock acquire "$2" --ttl 30s ;;
    sem) "$RCOORD" sem take "$2" --limit 1 --ttl 30s ;;
    elect) "$RCOORD" elect campaign "$2" --id other --ttl 30s >/dev/null && echo other ;;
  esac
}
give_back() {
  case $1 in
    lock) "$RCOORD" lock release "$2" --token "$3" >/dev/null ;;
    sem) "$RCOORD" sem release "$2" --token "$3" >/dev/null ;;
    elect) "$RCOORD" elect resign "$2" --id "$3" >/dev/null ;;
  esac
}
# state P NAME: who holds it ('' for nobody) and, for a semaphore, how many wait.
state() {
  local json
  case $1 in
    lock)
      json=$("$RCOORD" lock status "$2" --json || true)
      [ "$(json_field "$json" held)" = true ] && json_field "$json" token || echo ""
      ;;
    sem)
      json=$("$RCOORD" sem status "$2" --json || true)
      python3 -c 'import json,sys; s=json.loads(sys.argv[1]); print(" ".join([h["token"] for h in s.get("holders",[])] + ["waiting=%d" % s["waiting"]]))' "$json"
      ;;
    elect)
      json=$("$RCOORD" elect status "$2" --json || true)
      [ "$(json_field "$json" leader)" = true ] && json_field "$json" id || echo ""
      ;;
  esac
}
free_state() { [ "$1" = sem ] && echo "waiting=0" || echo ""; }
held_by_runner() {
  local now
  now=$(state "$1" "$2")
  [ -n "$now" ] && [ "$now" != "$(free_state "$1")" ]
}
start_runner() {
  local p=$1 name=$2
  shift 2
  # shellcheck disable=SC2046
  "$RCOORD" $(run_argv "$p" "$name") -- "$@" 2>"$TEST_TMP/stage.err" &
  RUNNER=$!
  track $RUNNER
}
runner_exit() {
  RC=0; wait "$RUNNER" || RC=$?
}

for p in lock sem elect; do
  for sig in TERM INT; do
    [ "$sig" = INT ] && died=130 || died=143
    what="$p run, SIG$sig"

    # 1. while waiting: aborts at once, takes nothing, leaves no waiting ticket
    name="waiting-$p-$sig"
    holder=$(hold_elsewhere $p "$name")
    before=$(state $p "$name")
    start_runner $p "$name" touch "$TEST_TMP/ran"
    wait_blocked "$R_PORT" 1
    kill -$sig $RUNNER
    runner_exit
    assert_eq "$RC" "$died" "$what while waiting"
    assert_eq "$(state $p "$name")" "$before" "$what while waiting: the other owner alone"
    give_back $p "$name" "$holder"
    quiet_period 300 # a ticket left behind would be woken by this and take it within milliseconds
    assert_eq "$(state $p "$name")" "$(free_state $p)" "$what while waiting: left something"
    [ ! -e "$TEST_TMP/ran" ] || fail "$what while waiting: the command ran"

    # 2. while the command runs: forwarded, the command dies of it, everything is given back
    name="running-$p-$sig"
    rm -f "$TEST_TMP/ready"
    # (exec: a background sleep of sh would ignore SIGINT and outlive the test)
    start_runner $p "$name" sh -c 'touch "$0"; exec sleep 30' "$TEST_TMP/ready"
    wait_until 10 test -e "$TEST_TMP/ready" || fail "$what: the command did not start"
    held_by_runner $p "$name" || fail "$what: not held while the command runs"
    kill -$sig $RUNNER
    runner_exit
    assert_eq "$RC" "$died" "$what while running: the command's death by signal"
    assert_eq "$(state $p "$name")" "$(free_state $p)" "$what while running: left something"

    # 3. while the command is being stopped: still held until the command has exited (a
    # second signal changes nothing), then given back; the command's own code is kept
    name="stopping-$p-$sig"
    rm -f "$TEST_TMP/ready" "$TEST_TMP/stopping"
    # (the command stops once told to, so the checks below run while it is stopping)
    rm -f "$TEST_TMP/go"
    start_runner $p "$name" sh -c \
      'trap "touch \"\$1\"; trap \"\" INT TERM; while [ ! -e \"\$2\" ]; do sleep 0.05; done; exit 7" INT TERM; touch "$0"; while :; do sleep 0.05; done' \
      "$TEST_TMP/ready" "$TEST_TMP/stopping" "$TEST_TMP/go"
    wait_until 10 test -e "$TEST_TMP/ready" || fail "$what: the command did not start"
    kill -$sig $RUNNER
    wait_until 10 test -e "$TEST_TMP/stopping" || fail "$what: the signal was not forwarded"
    kill -$sig $RUNNER 2>/dev/null || true
    wait_until 10 signal_taken $RUNNER "$(kill -l $sig)" || fail "$what: the second signal was not taken"
    held_by_runner $p "$name" || fail "$what: given back before the command had exited"
    touch "$TEST_TMP/go"
    runner_exit
    assert_eq "$RC" 7 "$what while stopping: the command's code"
    assert_eq "$(state $p "$name")" "$(free_state $p)" "$what while stopping: left something"
  done
  pass "$p run: SIGTERM and SIGINT while waiting, running and stopping leave nothing behind"
done
