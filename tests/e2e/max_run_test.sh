# --max-run DUR: a command still running after DUR gets SIGTERM (its whole process group),
# SIGKILL after --kill-grace; what it held is given back and rcoord exits 124, as timeout(1)
# does. `queue consume` nacks the message (it is delivered again) and goes on with the next.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# A command that notes SIGTERM and goes on (only SIGKILL ends it), with a background child
# that ignores SIGTERM. It writes its process group (its own pid: rcoord makes it a group
# leader) and its child's pid.
cat >"$TEST_TMP/hang.sh" <<'SH'
trap 'echo term >>"$0.term"' TERM
(trap '' TERM; exec sleep 600) &
echo "$$ $!" >"$0.pids"
while :; do sleep 0.05; done
SH

# group_gone PGID: no process of the group is left (zombies included: kill -0 on a group
# succeeds while any member exists).
group_gone() { ! kill -0 -- "-$1" 2>/dev/null; }

# check_stopped FORM: the hang script ran, got SIGTERM, and nothing of its group is left.
check_stopped() {
  local group child
  read -r group child <"$TEST_TMP/hang.sh.pids" || fail "$1: the command did not start"
  assert_contains "$(cat "$TEST_TMP/hang.sh.term" 2>/dev/null)" term "$1: SIGTERM came first"
  group_gone "$group" || fail "$1: process group $group outlived rcoord"
  ! alive "$child" || fail "$1: the background child $child outlived rcoord"
}

# --- lock run: SIGTERM, SIGKILL after the grace, exit 124, the lock free at once -----------
rm -f "$TEST_TMP/hang.sh.pids" "$TEST_TMP/hang.sh.term"
start=$(now_ms)
expect 124 "$RCOORD" --timeout 500ms lock run mr --ttl 3s --kill-grace 700ms --max-run 1s -- \
  sh "$TEST_TMP/hang.sh"
took=$(($(now_ms) - start))
check_stopped "lock run"
# SIGTERM after 1s did not end it: only the SIGKILL 700ms later did.
[ "$took" -ge 1700 ] || fail "lock run returned after ${took}ms, before --max-run + --kill-grace"
assert_contains "$ERR" "ran longer than --max-run 1s"
assert_contains "$ERR" "lock 'mr' is given back"
expect 1 "$RCOORD" lock status mr
expect 0 "$RCOORD" lock acquire mr
pass "lock run --max-run: SIGTERM, SIGKILL after the grace, group gone, exit 124, lock free (${took}ms)"

# A command that honours SIGTERM ends at once: still 124, not 143. The default grace here is
# 10s: ending well before it proves the SIGTERM did it.
start=$(now_ms)
expect 124 "$RCOORD" lock run mr2 --max-run 500ms -- sleep 600
took=$(($(now_ms) - start))
[ "$took" -lt "$(scaled 5000)" ] || fail "sleep was not stopped by SIGTERM at --max-run (${took}ms)"
expect 1 "$RCOORD" lock status mr2
pass "a command that ends on SIGTERM: exit 124 (${took}ms)"

# A command that ends in time keeps its own code, and nothing is said.
expect 3 "$RCOORD" lock run mr3 --max-run 30s -- sh -c 'exit 3'
assert_eq "$ERR" "" "no warning for a command that ended in time"
expect 0 "$RCOORD" lock run mr3 --max-run 30s -- true
pass "a command that ends within --max-run keeps its exit code"

# --max-run with --min-hold: the lock is kept all the same, and the history says `timeout`,
# then `released` with exit code 124 and how long it is kept.
expect 124 "$RCOORD" lock run mrkept --min-hold 1h --kill-grace 300ms --max-run 500ms -- sleep 30
expect 0 "$RCOORD" lock status mrkept
expect 0 "$RCOORD" history mrkept --type lock -o json
events=$(event_names "$OUT")
assert_eq "$events" "acquired timeout released" "the history of a kept run stopped by --max-run"
assert_released_kept "$(sed -n 3p <<<"$OUT")" 124 3000000
pass "--max-run with --min-hold: kept, history timeout then released with kept_ms"

# --max-run longer than the lease: renewals go on. At 7s (past the 6s TTL) the command
# finds the lock still held by its own token; then it hangs until --max-run. Renewals are not
# what is tested here: the command must stop one --timeout plus the grace (2s, TTL/3) before
# a lease that was not renewed would end, so a 6s TTL with a 1s --timeout leaves each renewal
# 3s on a busy machine (a longer --timeout leaves less, not more).
expect 124 "$RCOORD" --timeout 1s lock run mr4 --ttl 6s --max-run 9s -- \
  sh -c 'sleep 7; "$0" lock status mr4 --json >"$1"
         echo "$RCOORD_TOKEN" >"$1.token"; exec sleep 600' "$RCOORD" "$TEST_TMP/mr4"
assert_eq "$(json_field "$(cat "$TEST_TMP/mr4")" held)" true "held past its TTL"
assert_eq "$(json_field "$(cat "$TEST_TMP/mr4")" token)" "$(cat "$TEST_TMP/mr4.token")"
expect 1 "$RCOORD" lock status mr4
pass "--max-run longer than --ttl: the lock is renewed until the command is stopped"

# The lease lost while the command is being stopped for --max-run: exit 5, not 124. The
# command breaks its own lock when SIGTERM comes (so the loss falls inside the 4s grace) and
# goes on until SIGKILL; the renewal due within ttl/3 = 2s of that finds the lock gone.
cat >"$TEST_TMP/breaks.sh" <<'SH'
trap '"$1" lock break mr5 >/dev/null 2>&1; echo term >>"$2"' TERM
while :; do sleep 0.05; done
SH
expect 5 "$RCOORD" --timeout 500ms lock run mr5 --ttl 6s --kill-grace 4s --max-run 500ms -- \
  sh "$TEST_TMP/breaks.sh" "$RCOORD" "$TEST_TMP/mr5.term"
assert_contains "$(cat "$TEST_TMP/mr5.term")" term "the command got SIGTERM at --max-run"
assert_contains "$ERR" "lock 'mr5' was lost while the command ran"
pass "the lock lost during the --max-run grace: exit 5 wins over 124"

# --- sem run, elect run --------------------------------------------------------------------
rm -f "$TEST_TMP/hang.sh.pids" "$TEST_TMP/hang.sh.term"
expect 124 "$RCOORD" --timeout 500ms sem run pool --limit 1 --ttl 3s --kill-grace 500ms \
  --max-run 700ms -- sh "$TEST_TMP/hang.sh"
check_stopped "sem run"
assert_contains "$ERR" "semaphore 'pool' is given back"
expect 1 "$RCOORD" sem status pool
expect 0 "$RCOORD" sem run pool --limit 1 -- true
pass "sem run --max-run: exit 124, group gone, the permit free at once"

rm -f "$TEST_TMP/hang.sh.pids" "$TEST_TMP/hang.sh.term"
expect 124 "$RCOORD" --timeout 500ms elect run boss --id a --ttl 3s --kill-grace 500ms \
  --max-run 700ms -- sh "$TEST_TMP/hang.sh"
check_stopped "elect run"
expect 1 "$RCOORD" elect status boss
expect 0 "$RCOORD" elect campaign boss --id b
pass "elect run --max-run: exit 124, group gone, it stepped down at once"

# --- Redlock ------------------------------------------------------------------------------
start_redis N2
start_redis N3
rl=(-u "$R_URL" -u "$N2_URL" -u "$N3_URL")
rm -f "$TEST_TMP/hang.sh.pids" "$TEST_TMP/hang.sh.term"
expect 124 "$RCOORD" "${rl[@]}" --timeout 500ms lock run rl --ttl 5s --kill-grace 500ms \
  --max-run 700ms -- sh "$TEST_TMP/hang.sh"
check_stopped "redlock lock run"
expect 1 "$RCOORD" "${rl[@]}" lock status rl
pass "Redlock lock run --max-run: exit 124, group gone, released on every node"

# --- queue consume: per message; the message is nacked and delivered again -----------------
# A handler that hangs on "hang" and records everything else.
cat >"$TEST_TMP/handler.sh" <<'SH'
m=$(cat)
if [ "$m" = hang ]; then
  echo "$$" >"$0.pgid"
  trap '' TERM
  exec sleep 600
fi
echo "$m $RCOORD_ATTEMPT" >>"$0.done"
SH
"$RCOORD" queue push q hang >/dev/null
expect 124 "$RCOORD" --timeout 500ms queue consume q --ack-timeout 3s --kill-grace 500ms \
  --max-run 700ms --max-messages 1 -- sh "$TEST_TMP/handler.sh"
group_gone "$(cat "$TEST_TMP/handler.sh.pgid")" || fail "consume: the handler's group outlived it"
assert_contains "$ERR" "ran longer than --max-run 700ms"
stats=$("$RCOORD" --json queue stats q)
assert_eq "$(json_field "$stats" ready)" 1 "the timed-out message is ready again"
assert_eq "$(json_field "$stats" in_flight)" 0 "nothing left in flight"
expect 0 "$RCOORD" --json queue pop q --ack-timeout 5s
assert_eq "$(json_field "$OUT" message)" hang
assert_eq "$(json_field "$OUT" attempt)" 2 "delivered again, as a second attempt"
pass "consume --max-run: the handler is stopped, exit 124, the message nacked and delivered again"

# The consumer goes on after a timed-out message; with --max-attempts 1 the hung one is dead.
"$RCOORD" queue purge q >/dev/null
"$RCOORD" queue purge q --dead >/dev/null
"$RCOORD" queue push q hang ok >/dev/null
rm -f "$TEST_TMP/handler.sh.done"
expect 0 "$RCOORD" --timeout 500ms queue consume q --ack-timeout 3s --kill-grace 500ms \
  --max-run 700ms --max-attempts 1 --max-messages 2 -- sh "$TEST_TMP/handler.sh"
assert_eq "$(cat "$TEST_TMP/handler.sh.done")" "ok 1" "the next message was handled"
expect 0 "$RCOORD" --json queue dead q
assert_eq "$(json_field "$OUT" message)" hang
pass "consume goes on after a timed-out message; past --max-attempts it is dead"
# --help says so too, as the man page does: --max-run is per message for consume.
expect 0 "$RCOORD" queue consume --help
help=$(tr -s ' \n' ' ' <<<"$OUT")
assert_contains "$help" "consume goes on with the next message (exit 124 only when it was the last under --max-messages)"
assert_contains "$help" "never the consumer's exit"
pass "queue consume --help: --max-run stops one message, consume goes on"

# --- bad values: usage errors, nothing taken -----------------------------------------------
for form in "lock run bad" "sem run bad --limit 1" "elect run bad --id a" "queue consume bad"; do
  for value in abc 0 -1s 1x ""; do
    # shellcheck disable=SC2086
    expect 2 "$RCOORD" $form --max-run "$value" -- true
    assert_contains "$ERR" "--max-run"
  done
done
expect 1 "$RCOORD" lock status bad
expect 1 "$RCOORD" sem status bad
expect 1 "$RCOORD" elect status bad
pass "bad --max-run values: exit 2 naming the option, nothing taken"
