# Semaphores with real processes: the bound, fairness, --permits all-or-none without
# starvation, permit loss, holder crash, and the CLI contract.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# --- bound: 20 concurrent `sem run --limit 3`; never more than 3 inside, and 3 reached -------
export HISTORY="$TEST_TMP/pool.jsonl"
: >"$HISTORY"
printf '%s\nrecord enter pool\nsleep 0.15\nrecord exit pool\n' "$RECORD_SH" >"$TEST_TMP/inside.sh"
pids=()
for i in $(seq 1 20); do
  "$RCOORD" sem run pool --limit 3 --wait forever --ttl 10s -- sh "$TEST_TMP/inside.sh" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a sem run failed"; done
assert_eq "$(grep -c '"f":"enter"' "$HISTORY")" 20 "every process ran once"
check_history sem:3 "$HISTORY"
# the limit is reached: with one holder fewer allowed, the same history is refused
python3 "$(dirname "$0")/history_check.py" --model sem:2 "$HISTORY" >/dev/null &&
  fail "never 3 holders at once: the limit was not reached"
expect 1 "$RCOORD" sem status pool
pass "20 processes, --limit 3: at most 3 inside at any instant, 3 reached"

# waiting_is NAME N: the semaphore NAME has N waiters in its queue.
waiting_is() {
  [ "$(json_field "$("$RCOORD" sem status "$1" --json || true)" waiting)" = "$2" ]
}

# --- fairness: waiters started one after another are admitted in that order ----------------
expect 0 "$RCOORD" sem take fair --limit 1 --ttl 10m # held until released below, however slow
blocker=$OUT
order="$TEST_TMP/order.log"
for i in $(seq 1 10); do
  "$RCOORD" sem run fair --limit 1 --wait 60s -- sh -c "echo $i >>'$order'; sleep 0.05" &
  track $!
  wait_until 20 waiting_is fair "$i" || fail "waiter $i never queued"  # distinct arrivals
done
expect 0 "$RCOORD" sem release fair --token "$blocker"
all_ran() { [ "$(wc -l <"$order" 2>/dev/null || echo 0)" -ge 10 ]; }
wait_until 20 all_ran || fail "not all waiters ran: $(tr '\n' ' ' <"$order")"
assert_eq "$(tr '\n' ' ' <"$order")" "1 2 3 4 5 6 7 8 9 10 " "admission order"
pass "10 waiters admitted in arrival order"

# --- --permits: all or none, and a large request is not passed by small ones ---------------
expect 0 "$RCOORD" sem take big --limit 3 --permits 2 --ttl 10m
first=$OUT
"$RCOORD" sem take big --limit 3 --permits 2 --wait 20s >"$TEST_TMP/big.out" &
bigpid=$!
track $bigpid
wait_until 20 waiting_is big 1 || fail "the large request never queued"
# one permit is free, but the 2-permit request arrived first: the 1-permit one must not pass
expect 1 "$RCOORD" sem take big --limit 3 --permits 1
"$RCOORD" sem take big --limit 3 --permits 1 --wait 20s >"$TEST_TMP/small.out" &
smallpid=$!
track $smallpid
wait_until 20 waiting_is big 2 || fail "the small request never queued"
[ ! -s "$TEST_TMP/small.out" ] || fail "the small request passed the large one"
expect 0 "$RCOORD" sem release big --token "$first"
wait $bigpid || fail "the large request was not admitted"
wait $smallpid || fail "the small request was not admitted after it"
expect 0 "$RCOORD" sem status big --json
assert_eq "$(json_field "$OUT" in_use)" 3
pass "--permits 2 taken all at once, not starved by a later --permits 1"

# --- permit loss: removing the holder terminates the command, exit 5 -----------------------
"$RCOORD" --timeout 300ms sem run lost --limit 2 --ttl 1500ms -- sh -c 'trap "touch $0; exit 143" TERM; touch "$0.ready"; sleep 30 & wait' "$TEST_TMP/got-term" &
runner=$!
track $runner
# the command runs (so the permit is taken) and has its trap set
wait_until 10 test -e "$TEST_TMP/got-term.ready" || fail "sem run never started its command"
expect 0 "$RCOORD" sem status lost --json
token=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["holders"][0]["token"])' "$OUT")
expect 0 "$RCOORD" sem release lost --token "$token"
code=0; wait $runner || code=$?
assert_eq "$code" 5 "exit code after losing the permit"
[ -e "$TEST_TMP/got-term" ] || fail "the command did not get SIGTERM"
pass "permit removed by an operator: command terminated, exit 5"

# --- holder crash: its permit is reclaimed when the lease ends -----------------------------
"$RCOORD" --timeout 300ms sem run crash --limit 1 --ttl 1s -- sh -c 'echo $$ >"$0"; exec sleep 30' "$TEST_TMP/crash.pid" &
runner=$!
track $runner
wait_until 10 test -s "$TEST_TMP/crash.pid" || fail "sem run never started its command"
kill -9 $runner "$(cat "$TEST_TMP/crash.pid")"
killed=$(now_ms)
expect 0 "$RCOORD" sem take crash --limit 1 --wait 5s
took=$(($(now_ms) - killed))
[ "$took" -le "$(scaled 2500)" ] || fail "the crashed holder's permit came back after ${took}ms"
pass "crashed holder's permit reclaimed after its lease (${took}ms)"

# --- a crashed waiter does not block the queue ---------------------------------------------
expect 0 "$RCOORD" sem take dead --limit 1 --ttl 10m
holder=$OUT
"$RCOORD" sem take dead --limit 1 --wait 60s &
doomed=$!
wait_until 20 waiting_is dead 1 || fail "the doomed waiter never queued"
kill -9 $doomed
"$RCOORD" sem take dead --limit 1 --wait 20s >/dev/null &
next=$!
track $next
wait_until 20 waiting_is dead 2 || fail "the next waiter never queued"
expect 0 "$RCOORD" sem release dead --token "$holder"
start=$(now_ms)
wait $next || fail "the waiter behind a crashed one never got in"
took=$(($(now_ms) - start))
[ "$took" -le "$(scaled 4500)" ] || fail "the queue was held up ${took}ms by a crashed waiter"
pass "crashed waiter dropped from the queue (${took}ms)"

# --- CLI contract ----------------------------------------------------------------------------
expect 0 "$RCOORD" sem take cli --limit 2 --json
for f in acquired name token limit permits holders in_use ttl_ms waited_ms; do
  json_field "$OUT" $f >/dev/null || fail "take JSON lacks $f"
done
tok=$(json_field "$OUT" token)
expect 0 "$RCOORD" sem refresh cli --token "$tok" --ttl 1m
assert_eq "$OUT" "ttl_ms: 60000"
expect 1 "$RCOORD" sem refresh cli --token nope
expect 0 "$RCOORD" sem status cli
assert_contains "$OUT" "limit: 2"
assert_contains "$OUT" "holders: $tok permits=1"
expect 0 "$RCOORD" sem release cli --token "$tok"
expect 1 "$RCOORD" sem release cli --token "$tok"
expect 2 "$RCOORD" sem take cli --limit 2 --permits 3
expect 2 "$RCOORD" sem take cli --limit 0
expect 2 "$RCOORD" sem take cli
assert_contains "$ERR" "--limit"
expect 0 "$RCOORD" sem take full --limit 1
expect 75 "$RCOORD" sem run full --limit 1 -E 75 -- touch "$TEST_TMP/full-ran"
[ ! -e "$TEST_TMP/full-ran" ] || fail "sem run ran its command without a permit"
redis-cli -p "$R_PORT" set 'rcoord:{sem:str}' x >/dev/null
expect 4 "$RCOORD" sem take str --limit 1
assert_contains "$ERR" "rcoord:{sem:str}"
expect 4 "$RCOORD" sem status str
pass "sem CLI: JSON fields, refresh, release, usage errors, wrong type"
