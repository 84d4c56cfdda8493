# What a run form holds is given back only when its command's whole process group is gone,
# and the command never outlives rcoord:
#   - members still running when the command exits (`sh -c 'job & exit 0'`) get SIGTERM,
#     then SIGKILL after --kill-grace; the lock stays held (and renewed) until they are gone;
#   - rcoord killed with SIGKILL takes its command and the command's children with it (lock
#     run, sem run, elect run, queue consume);
#   - --kill-grace must fit in the lease with one --timeout (a usage error otherwise), and
#     defaults to the smaller of 10s and TTL/3.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# --- stragglers: a background job outlives the command --------------------------------------
# It ignores SIGTERM and finishes after its own second, within the grace: the lock is held
# until then.
start=$(now_ms)
expect 0 "$RCOORD" lock run bg --ttl 6s --kill-grace 3s --timeout 500ms -- \
  sh -c 'trap "" TERM; (sleep 1; echo done >"$0") & exit 0' "$TEST_TMP/bg-done"
took=$(($(now_ms) - start))
[ -e "$TEST_TMP/bg-done" ] || fail "rcoord returned before the background job was gone"
[ "$took" -ge 900 ] || fail "returned after ${took}ms, before the job's second was over"
expect 1 "$RCOORD" lock status bg
pass "a background job that ignores SIGTERM keeps the lock until it ends (${took}ms)"

# It would run for 30s: SIGTERM at once, and it goes.
start=$(now_ms)
expect 0 "$RCOORD" lock run bg --ttl 3s --timeout 500ms -- sh -c 'sleep 30 & exit 0'
took=$(($(now_ms) - start))
[ "$took" -lt "$(scaled 2000)" ] || fail "the background sleep kept rcoord ${took}ms"
expect 1 "$RCOORD" lock status bg
pass "a background job still running when the command exits gets SIGTERM (${took}ms)"

# It ignores SIGTERM and would run for 30s: SIGKILL after --kill-grace, then released.
cat >"$TEST_TMP/stubborn-bg.sh" <<'SH'
(trap '' TERM; echo $$ >"$0.pid"; exec sleep 30) &
sleep 0.2
exit 3
SH
"$RCOORD" lock run bg --ttl 3s --timeout 500ms --kill-grace 700ms -- \
  sh "$TEST_TMP/stubborn-bg.sh" &
runner=$!
track $runner
wait_until 10 test -s "$TEST_TMP/stubborn-bg.sh.pid" || fail "the background job did not start"
bg=$(cat "$TEST_TMP/stubborn-bg.sh.pid")
code=0; wait $runner || code=$?
assert_eq "$code" 3 "rcoord exits with the command's code"
! alive "$bg" || fail "the background job survived SIGKILL"
expect 1 "$RCOORD" lock status bg
pass "a background job that ignores SIGTERM gets SIGKILL after --kill-grace; then released"

# The same for sem run and elect run.
expect 0 "$RCOORD" sem run pool --limit 1 --ttl 3s --kill-grace 2s --timeout 300ms -- \
  sh -c 'trap "" TERM; (sleep 0.5; echo done >"$0") & exit 0' "$TEST_TMP/sem-done"
[ -e "$TEST_TMP/sem-done" ] || fail "sem run returned before its background job ended"
expect 1 "$RCOORD" sem status pool
expect 0 "$RCOORD" elect run lead --id me --ttl 3s --kill-grace 2s --timeout 300ms -- \
  sh -c 'trap "" TERM; (sleep 0.5; echo done >"$0") & exit 0' "$TEST_TMP/elect-done"
[ -e "$TEST_TMP/elect-done" ] || fail "elect run returned before its background job ended"
expect 1 "$RCOORD" elect status lead
pass "sem run and elect run: held until the background job is gone"

# --- rcoord killed with SIGKILL: its command and the command's children die too ------------
cat >"$TEST_TMP/tree.sh" <<'SH'
trap '' TERM HUP INT
sleep 600 &
echo "$$ $!" >"$0.pids"
wait
SH
# (a try once starts the guard once it holds the lock, a waiter before it waits: both kinds)
# gone PID CHILD: neither runs any more (alive: a zombie waiting to be reaped counts as gone).
gone() { ! alive "$1" && ! alive "$2"; }
for form in "lock run tree" "lock run treew --wait 1m" "sem run tree --limit 1" \
  "sem run treew --limit 1 --wait 1m" "elect run tree --id me" "queue consume tree"; do
  rm -f "$TEST_TMP/tree.sh.pids"
  [ "$form" = "queue consume tree" ] && "$RCOORD" queue push tree m >/dev/null
  # shellcheck disable=SC2086
  "$RCOORD" $form -- sh "$TEST_TMP/tree.sh" &
  runner=$!
  track $runner
  wait_until 10 test -s "$TEST_TMP/tree.sh.pids" || fail "$form: the command did not start"
  read -r cmd child <"$TEST_TMP/tree.sh.pids"
  kill -9 $runner
  killed=$(now_ms)
  wait_until 5 gone "$cmd" "$child" || fail "$form: the command or its child outlived rcoord (kill -9)"
  took=$(($(now_ms) - killed))
  [ "$took" -lt "$(scaled 1000)" ] || fail "$form: the command outlived rcoord by ${took}ms"
  wait $runner 2>/dev/null || true
  pass "$form: rcoord killed -9, the command and its child died with it (${took}ms)"
done

# --- the guard itself: a fork of rcoord, on every CPU ---------------------------------------
# guard_of RUNNER: the pid and name of rcoord's child that is not its command (the guard).
guard_of() { ps -o pid=,comm= --ppid "$1" | awk '$2 != "sh" {print $1, $2; exit}'; }
rm -f "$TEST_TMP/tree.sh.pids"
"$RCOORD" lock run guarded --wait 1m -- sh "$TEST_TMP/tree.sh" &
runner=$!
track $runner
wait_until 10 test -s "$TEST_TMP/tree.sh.pids" || fail "guarded: the command did not start"
read -r guard name <<<"$(guard_of $runner)"
[ -n "$guard" ] || fail "rcoord has no guard process beside its command"
assert_eq "$(readlink /proc/"$guard"/exe)" "$(readlink /proc/$runner/exe)" "the guard is a fork of rcoord"
assert_eq "$(readlink /proc/"$guard"/fd/1)" /dev/null "the guard holds no stdout of ours"
# Signals meant for rcoord's group do not reach it: SIGINT and SIGTERM (bits 1 and 14 of
# SigBlk) are blocked, as every signal but SIGKILL and SIGSTOP is.
blocked=$(awk '/^SigBlk/ {print $2}' /proc/"$guard"/status)
assert_eq "$(((16#$blocked >> 1) & 1))$(((16#$blocked >> 14) & 1))" 11 "SIGINT and SIGTERM blocked"
kill -9 $runner
read -r cmd child <"$TEST_TMP/tree.sh.pids"
wait_until 5 gone "$cmd" "$child" || fail "the guard did not kill the group"
wait $runner 2>/dev/null || true
wait_until 5 dead "$guard" || fail "the guard outlived the rcoord it guarded (kill -9)"
pass "the guard is a fork of rcoord: stdio on /dev/null, signals blocked, kills the group, then leaves"

# Nothing of rcoord outlives a run that ends as usual: its guard, forked just after the take
# (no --wait), leaves once rcoord has exited. (A guard that never got past the fork, as under
# an emulator given another C library build's dynamic loader, would stay behind: this fails.)
"$RCOORD" lock run leaves --ttl 5s -- sh -c 'touch "$0"; while [ ! -e "$0.go" ]; do sleep 0.02; done' \
  "$TEST_TMP/leaves" &
runner=$!
track $runner
wait_until 10 test -e "$TEST_TMP/leaves" || fail "leaves: the command did not start"
read -r guard name <<<"$(guard_of $runner)"
[ -n "$guard" ] || fail "leaves: rcoord has no guard process beside its command"
touch "$TEST_TMP/leaves.go"
code=0; wait $runner || code=$?
assert_eq "$code" 0 "lock run of a command that exits 0"
wait_until 5 dead "$guard" || fail "the guard (pid $guard) outlived the rcoord that exited 0"
pass "a run that ends as usual leaves no process behind: its guard exits with rcoord"

# stop_runner PIDS WHAT: once the command of the background rcoord $runner wrote "PID CHILD"
# to PIDS, stops rcoord (SIGSTOP) and waits until its guard has killed both.
stop_runner() {
  local cmd child
  wait_until 10 test -s "$1" || fail "$2: the command did not start"
  read -r cmd child <"$1"
  kill -STOP "$runner"
  wait_until 15 gone "$cmd" "$child" || fail "$2: the command's group outlived its stopped rcoord's lease"
}
# continue_runner: SIGCONT to $runner, and its exit status in CODE.
continue_runner() {
  kill -CONT "$runner"
  CODE=0
  wait "$runner" || CODE=$?
}

# --- rcoord stopped (SIGSTOP) while its command runs: it renews nothing, so its guard kills
# the command's group at the lease's kill point (one --timeout before the lease can end), and
# nobody can take the lock while any of the group runs
"$RCOORD" --timeout 4s lock run stopped --ttl 8s --kill-grace 500ms -- \
  sh -c 'sleep 600 & echo "$$ $!" >"$0"; wait' "$TEST_TMP/stopped.pids" 2>"$TEST_TMP/stopped.err" &
runner=$!
track $runner
stop_runner "$TEST_TMP/stopped.pids" "lock run"
expect 0 "$RCOORD" lock status stopped # dead while the lease still held on the server
continue_runner
assert_eq "$CODE" 5 "a stopped rcoord's lock is lost"
assert_contains "$(cat "$TEST_TMP/stopped.err")" "its guard killed the command"
pass "rcoord stopped while its command ran: the guard killed the group before the lease ended, exit 5"

# The same for a consumer, whose next message is then handled as usual (the guard's strike
# was for the group of the message before)
"$RCOORD" queue push stoppedq m1 m2 >/dev/null
"$RCOORD" --timeout 4s queue consume stoppedq --ack-timeout 8s --kill-grace 500ms --max-messages 2 \
  -- sh -c 'read -r m || true; if [ "$m" = m1 ]; then sleep 600 & echo "$$ $!" >"$0"; wait; fi
    echo "$m" >>"$0.done"' "$TEST_TMP/q.pids" 2>"$TEST_TMP/q.err" &
runner=$!
track $runner
stop_runner "$TEST_TMP/q.pids" "queue consume"
continue_runner
assert_eq "$CODE" 0 "the consumer's last message was handled"
assert_eq "$(grep -c 'its guard killed the command' "$TEST_TMP/q.err")" 1 "one message lost, once"
assert_eq "$(cat "$TEST_TMP/q.pids.done")" m2 "only the next message ran to its end"
pass "a stopped consumer: the guard killed the message's command, the next message ran as usual"

# --- short leases fit the defaults; only a --kill-grace or --timeout given can fail to fit ----
# SPEC §6 "short leases": with the default --timeout (2s) every run form and queue consume
# works for a lease of 1s or more; the default grace and the margin shrink to fit it.
for ttl in 1s 1500ms 2s 3s; do
  expect 0 "$RCOORD" lock run x --ttl "$ttl" -- true
  expect 0 "$RCOORD" sem run x --limit 1 --ttl "$ttl" -- true
  expect 0 "$RCOORD" elect run x --id me --ttl "$ttl" -- true
  expect 0 "$RCOORD" queue push short "m-$ttl"
  expect 0 "$RCOORD" queue consume short --ack-timeout "$ttl" --max-messages 1 -- true
done
pass "every run form and queue consume work with the default options for leases of 1s, 1.5s, 2s and 3s"

expect 2 "$RCOORD" --timeout 3s lock run x --ttl 3s -- true
assert_contains "$ERR" "--ttl 3s is too short for --timeout 3s"
assert_contains "$ERR" "a shorter --timeout"
expect 2 "$RCOORD" lock run x --ttl 30s --kill-grace 29s -- true
assert_contains "$ERR" "--kill-grace 29s does not fit --ttl 30s"
expect 2 "$RCOORD" --timeout 2s queue consume x --ack-timeout 2s -- true
assert_contains "$ERR" "--ack-timeout 2s is too short"
expect 0 "$RCOORD" --timeout 500ms lock run x --ttl 3s -- true
expect 0 "$RCOORD" lock run x --ttl 30s --kill-grace 27s --timeout 1s -- true
for form in "lock run x --ttl 1s" "sem run x --limit 1 --ttl 1s" "elect run x --id me --ttl 1s" \
  "queue consume x --ack-timeout 1s"; do
  # shellcheck disable=SC2086
  expect 2 "$RCOORD" --timeout 100ms $form --kill-grace 5s -- true
  assert_contains "$ERR" "--kill-grace 5s does not fit"
done
expect 1 "$RCOORD" lock status x
pass "a --kill-grace or --timeout given that cannot fit is a usage error with a hint; nothing taken"

# The default grace is TTL/3 (here 1s): the command notes its SIGTERM and goes on; SIGKILL
# comes about 1s later. --max-run sends the SIGTERM (scaled: the command must have set its trap
# by then), no earlier than MAX_RUN after a moment taken before rcoord starts, so SIGKILL comes
# no earlier than MAX_RUN + 1s after it: a lower bound measured from before its cause, which a
# busy machine only makes longer. (The command's own note of SIGTERM runs late on a busy
# machine: it bounds the grace from above only.)
max_run=$(scaled 1000)
started_at=$(now_ms)
"$RCOORD" --timeout 500ms lock run dflt --ttl 3s --max-run "${max_run}ms" -- \
  sh -c 'trap "date +%s%3N >\"\$0.term\"" TERM; touch "$0"; while :; do sleep 0.05; done' \
  "$TEST_TMP/dflt" 2>/dev/null &
runner=$!
track $runner
code=0; wait $runner || code=$?
killed_at=$(now_ms)
assert_eq "$code" 124
[ -e "$TEST_TMP/dflt" ] || fail "the command did not start"
[ -s "$TEST_TMP/dflt.term" ] || fail "the command never got SIGTERM"
since_start=$((killed_at - started_at))
[ "$since_start" -ge $((max_run + 1000)) ] ||
  fail "rcoord done ${since_start}ms after it started: SIGKILL before --max-run ${max_run}ms + the default grace of 1s"
took=$((killed_at - $(cat "$TEST_TMP/dflt.term")))
# (well under the 10s a fixed default would give, with room for a loaded machine)
[ "$took" -lt "$(scaled 5000)" ] || fail "SIGKILL ${took}ms after SIGTERM: the default grace is 1s"
pass "the default --kill-grace is TTL/3 (done ${since_start}ms after the start, --max-run ${max_run}ms, TTL 3s)"
