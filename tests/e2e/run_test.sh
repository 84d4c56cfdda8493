# lock run: exit codes, environment, renewal, release, --min-hold, --conflict-exit-code.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# the child's code, environment, and release afterwards
expect 42 "$RCOORD" lock run job -- sh -c 'echo "$RCOORD_TOKEN $RCOORD_FENCE $RCOORD_LOCK"; exit 42'
read -r tok fence name <<<"$OUT"
[[ $tok =~ ^[0-9a-f]{32}$ ]] || fail "RCOORD_TOKEN missing: $OUT"
[[ $fence =~ ^[0-9]{16}$ ]] || fail "RCOORD_FENCE: $OUT"
assert_eq "$name" job
expect 1 "$RCOORD" lock status job
pass "child's exit code, RCOORD_TOKEN/FENCE/LOCK, released after"

# stdin, stdout and arguments reach the child untouched (argv, no shell)
out=$(printf 'in put' | "$RCOORD" lock run job -- sh -c 'cat; printf " %s|" "$@"' sh 'a b' '$HOME' '')
assert_eq "$out" 'in put a b| $HOME| |'
pass "argv and stdio pass through"

# 128+N when the child dies of signal N; 127/126 when it cannot run
expect 138 "$RCOORD" lock run job -- sh -c 'kill -USR1 $$'
expect 127 "$RCOORD" lock run job -- /nonexistent/cmd
assert_contains "$ERR" "cannot run '/nonexistent/cmd'"
touch "$TEST_TMP/noexec"
expect 126 "$RCOORD" lock run job -- "$TEST_TMP/noexec"
expect 1 "$RCOORD" lock status job
pass "signal and exec failure codes; lock released each time"

# A command that cannot run is found out before anything is taken: with --min-hold 1h the lock
# would otherwise stay held for the hour (a fence handed out proves a take).
expect 127 "$RCOORD" lock run mh --min-hold 1h -- /nonexistent/cmd
assert_contains "$ERR" "nothing was taken"
expect 127 "$RCOORD" lock run mh --min-hold 1h -- no-such-command-anywhere
mkdir -p "$TEST_TMP/a-dir"
expect 126 "$RCOORD" lock run mh --min-hold 1h -- "$TEST_TMP/a-dir"
expect 126 "$RCOORD" lock run mh --min-hold 1h -- "$TEST_TMP/noexec"
expect 127 "$RCOORD" lock run mh --shared --min-hold 1h -- /nonexistent/cmd
expect 127 "$RCOORD" sem run smh --limit 1 -- /nonexistent/cmd
expect 127 "$RCOORD" elect run emh --id a -- /nonexistent/cmd
assert_eq "$(redis-cli -c -u "$R_URL" exists 'rcoord:{lock:mh}:fence')" 0 "the lock was never taken"
expect 0 "$RCOORD" lock acquire mh --json
expect 1 "$RCOORD" sem status smh --json
assert_eq "$(json_field "$OUT" in_use)" 0 "no permit was taken"
assert_eq "$(redis-cli -c -u "$R_URL" exists 'rcoord:{elect:emh}:term')" 0 "nobody led"
expect 0 "$RCOORD" elect campaign emh --id b --json
pass "a command that cannot run takes nothing (127/126 as before), for every run form"

# busy: exit 1, or --conflict-exit-code; the command does not run (a lease long enough that no
# slow step below outlasts it)
expect 0 "$RCOORD" lock acquire job --ttl 10m
holder=$OUT
expect 1 "$RCOORD" lock run job -- touch "$TEST_TMP/ran"
assert_contains "$ERR" "busy"
expect 75 "$RCOORD" lock run job -E 75 -- touch "$TEST_TMP/ran"
expect 1 "$RCOORD" lock run job --json -- touch "$TEST_TMP/ran"
assert_eq "$(json_field "$OUT" acquired)" false "run --json prints the busy object"
expect 0 "$RCOORD" lock run job --conflict-exit-code 0 -- touch "$TEST_TMP/ran"
[ ! -e "$TEST_TMP/ran" ] || fail "the command ran while the lock was busy"
pass "busy: conflict exit code, command not run"

# --wait: runs once the holder releases (released once the waiter is seen waiting)
"$RCOORD" lock run job --wait 1m -- touch "$TEST_TMP/ran" &
waiter=$!
track $waiter
wait_blocked "$R_PORTS" 1
start=$(now_ms)
expect 0 "$RCOORD" lock release job --token "$holder"
wait $waiter || fail "lock run --wait failed after the release"
took=$(($(now_ms) - start))
[ -e "$TEST_TMP/ran" ] || fail "did not run after waiting"
[ "$took" -lt "$(scaled 1500)" ] || fail "ran ${took}ms after the release"
pass "--wait runs after the release (${took}ms)"

# The command is found in $PATH before the take, and started from there after it without a
# second search: a file of the same name put earlier in $PATH while it waits is not the one
# run. One that went away meanwhile is searched for again, as execvp would.
mkdir -p "$TEST_TMP/early" "$TEST_TMP/late" "$TEST_TMP/last"
printf '#!/bin/sh\necho "late $0 $*" >"%s"\n' "$TEST_TMP/which" >"$TEST_TMP/late/rcoord-probe"
printf '#!/bin/sh\necho "early $0 $*" >"%s"\n' "$TEST_TMP/which" >"$TEST_TMP/early.probe"
printf '#!/bin/sh\necho "last $0 $*" >"%s"\n' "$TEST_TMP/which" >"$TEST_TMP/last/rcoord-probe"
chmod +x "$TEST_TMP/late/rcoord-probe" "$TEST_TMP/early.probe" "$TEST_TMP/last/rcoord-probe"
probe_path="$TEST_TMP/early:$TEST_TMP/late:$TEST_TMP/last:$PATH"
# probe_while_waiting ARG CHANGE...: runs `rcoord-probe ARG` under the lock, held by another
# until the run waits; then runs CHANGE, releases, and waits for the run to end.
probe_while_waiting() {
  local arg=$1 holder waiter
  shift
  expect 0 "$RCOORD" lock acquire job --ttl 10m
  holder=$OUT
  PATH=$probe_path "$RCOORD" lock run job --wait 1m -- rcoord-probe "$arg" &
  waiter=$!
  track $waiter
  wait_blocked "$R_PORTS" 1
  "$@"
  expect 0 "$RCOORD" lock release job --token "$holder"
  wait $waiter || fail "the probe did not run after the release"
}
probe_while_waiting one cp "$TEST_TMP/early.probe" "$TEST_TMP/early/rcoord-probe"
# (a script's $0 is the file's path, as execvp's search passes it too)
assert_eq "$(cat "$TEST_TMP/which")" "late $TEST_TMP/late/rcoord-probe one" "the file found before the take"
rm "$TEST_TMP/early/rcoord-probe"
probe_while_waiting two rm "$TEST_TMP/late/rcoord-probe"
assert_eq "$(cat "$TEST_TMP/which")" "last $TEST_TMP/last/rcoord-probe two" "searched again once the file went away"
pass "the command is found in PATH before the take, and searched again only if it went away"

# renewal: a 1.5s lease outlives itself while the command runs, and is gone after
# (the margins allow for a loaded machine running a sanitizer build)
# (the command runs until told to stop, so slow checks cannot outlast it)
"$RCOORD" --timeout 500ms lock run renew --ttl 2s -- sh -c 'while [ ! -e "$0" ]; do sleep 0.05; done' \
  "$TEST_TMP/stop-renew" &
runner=$!
track $runner
wait_until 10 "$RCOORD" lock status renew || fail "run never took the lock"
sleep 2.5
expect 1 "$RCOORD" lock acquire renew
sleep 1.5
expect 1 "$RCOORD" lock acquire renew
touch "$TEST_TMP/stop-renew"
wait $runner
expect 1 "$RCOORD" lock status renew
pass "renewal keeps a 2s lease alive for 4s and more, released at the end"

# --min-hold keeps the lock after a quick command, by its TTL (3 s, longer on a slow machine,
# so that the checks below run inside it)
hold=$(scaled 3000)
expect 0 "$RCOORD" lock run cron --min-hold "${hold}ms" -- true
expect 1 "$RCOORD" lock run cron -- touch "$TEST_TMP/cron-twice"
expect 0 "$RCOORD" lock status cron --json
ttl=$(json_field "$OUT" ttl_ms)
[ "$ttl" -le "$hold" ] && [ "$ttl" -gt 0 ] || fail "min-hold TTL is $ttl"
# Its status and ls say that the lock is only kept now: when its command ended, and its code.
assert_status_kept "$OUT" 0
expect 0 "$RCOORD" ls cron --type lock
assert_contains "$OUT" "; kept: its command ended"
assert_contains "$OUT" "ago (exit 0)"
pass "--min-hold: status and ls say the lock is kept, since when and with what code"
wait_until $((hold / 1000 + 10)) bash -c "! '$RCOORD' lock status cron" || fail "the min-hold lease never ended"
expect 0 "$RCOORD" lock run cron -- true
[ ! -e "$TEST_TMP/cron-twice" ] || fail "the second host ran inside --min-hold"
pass "--min-hold: the same job on a late host does not run twice"

# The history tells the kept hold's end when the command ended (its exit code, how long the
# lock was kept), and its lapse is no `expired`: acquired, released (kept), busy, acquired,
# released.
expect 0 "$RCOORD" history cron --type lock -o json
events=$(event_names "$OUT")
[ "$events" = "acquired released busy acquired released" ] || fail "history of a --min-hold run: $events"
assert_released_kept "$(sed -n 2p <<<"$OUT")" 0 1 "$hold"
pass "--min-hold: history records released with kept_ms, no expired"

# A reader kept by --min-hold: its share stays (a writer is refused), its `released` is
# recorded when the command ends, and its lapse is no `expired` either.
expect 3 "$RCOORD" lock run rcron --shared --min-hold "${hold}ms" -- sh -c 'exit 3'
expect 1 "$RCOORD" lock acquire rcron
# status lists the reader with when its command ended and its code; ls counts it as kept
expect 0 "$RCOORD" lock status rcron --json
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["holders"][0]; assert r["exit_code"] == 3 and r["ended_at"].endswith("Z"), r' \
  "$OUT" || fail "the kept reader's status: $OUT"
expect 0 "$RCOORD" ls rcron --type lock
assert_contains "$OUT" "; 1 kept after its command ended"
pass "--shared --min-hold: status and ls say the share is kept"
wait_until $((hold / 1000 + 10)) bash -c "! '$RCOORD' lock status rcron" || fail "the kept share never ended"
expect 0 "$RCOORD" lock run rcron -- true
expect 0 "$RCOORD" history rcron --type lock -o json
events=$(event_names "$OUT")
[ "$events" = "acquired released busy acquired released" ] || fail "history of a --shared --min-hold run: $events"
assert_released_kept "$(sed -n 2p <<<"$OUT")" 3 1 "$hold"
[ "$(json_field "$(sed -n 2p <<<"$OUT")" mode)" = shared ] || fail "the kept share's release is not shared: $OUT"
pass "--shared --min-hold: the reader's release recorded with kept_ms, its lapse no expired"

# A waiter stopped (SIGSTOP) while the lock is handed to it reads the take's reply only after
# its lease's stop point (SPEC §6 "no false loss"): it renews once before it gives up. Continued
# while the lease still stands on the server, the renewal succeeds and the command runs with a
# whole lease; continued after the lease ended, the renewal fails and nothing runs (exit 5).
# late_waiter NAME PAUSE_MS: a `lock run NAME --ttl 4s` handed the lock while stopped, continued
# PAUSE_MS after the release that handed it the lock was answered (the checks after it count in
# the pause, which a slow start of each, as under an emulator, must not lengthen); sets CODE. (A
# 4s lease with the default options: stop point 1.67s after the take, the lease's end 4s after
# it. A wait of at most a quarter of the lease sends its take behind the wait, which the server
# runs on the release while the waiter is stopped.)
late_waiter() {
  expect 0 "$RCOORD" lock acquire "$1" --ttl 10m
  local holder=$OUT waiter
  rm -f "$TEST_TMP/$1-ran"
  "$RCOORD" lock run "$1" --ttl 4s --wait forever -- touch "$TEST_TMP/$1-ran" 2>"$TEST_TMP/$1-err" &
  waiter=$!
  track $waiter
  wait_blocked "$R_PORTS" 1
  kill -STOP $waiter
  # released at once, while the waiter's wait (and the take behind it) is still on the server
  local released_at
  expect 0 "$RCOORD" lock release "$1" --token "$holder"
  released_at=$(now_ms)
  expect 0 "$RCOORD" lock status "$1" --json
  assert_eq "$(json_field "$OUT" pid)" "$waiter" "the stopped waiter was handed the lock"
  local left=$(($2 - ($(now_ms) - released_at)))
  [ "$left" -le 0 ] || sleep "$(seconds "$left")"
  kill -CONT $waiter
  CODE=0
  wait $waiter || CODE=$?
}
late_waiter late 2300 # past the stop point (1.67s), before the lease's end (4s)
assert_eq "$CODE" 0 "a late take renewed: the command ran"
[ -e "$TEST_TMP/late-ran" ] || fail "the command did not run after the renewal"
pass "a take answered past the lease's stop point renews once, and the command runs with a whole lease"
late_waiter gone 4600 # past the lease's end: it expired on the server
assert_eq "$CODE" 5 "a lease that ended before its take was read is lost"
[ ! -e "$TEST_TMP/gone-ran" ] || fail "the command started after its lease had ended"
assert_contains "$(cat "$TEST_TMP/gone-err")" "lost before the command could start"
assert_contains "$(cat "$TEST_TMP/gone-err")" "renewing it failed"
expect 1 "$RCOORD" lock status gone
pass "a take answered after its lease ended (the waiter was stopped) runs nothing, exit 5"

