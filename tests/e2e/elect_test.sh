# elect: exit codes, output shapes, observe, run supervision, and the proofs with real
# processes: one leader at a time among five, terms strictly increasing, hand-over after a
# kill -9 within TTL + 1 s.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# Commands run by `elect run` live in process groups of their own: when a test fails with
# their rcoord killed, take them down too.
_kill_logged_commands() {
  local c
  [ -f "$TEST_TMP/crash.log" ] || return 0
  for c in $(awk '{ print $4 }' "$TEST_TMP/crash.log"); do kill -9 -- "-$c" 2>/dev/null || true; done
}
trap '_kill_logged_commands; _cleanup' EXIT

# subscribers CHANNEL: how many connections are subscribed to it
subscribers() { redis-cli -p "$R_PORT" pubsub numsub "$1" | tail -1; }
subscribed() { [ "$(subscribers "$1")" = "$2" ]; }
# starts LOG N: at least N leaderships were logged
starts() { [ "$(grep -c start "$1")" -ge "$2" ]; }

# campaign, status, resign: exit codes and output
expect 1 "$RCOORD" elect status svc
# (leases long enough that no slow step below outlasts them: a leader must stay leader)
expect 0 "$RCOORD" elect campaign svc --id a --ttl 10m
[[ $OUT =~ ^[0-9]{16}$ ]] || fail "campaign prints the term: $OUT"
TERM_A=$OUT
expect 1 "$RCOORD" elect campaign svc --id b
assert_eq "$OUT" "" "no stdout when not leader"
assert_contains "$ERR" "'svc' is led by 'a' (term $TERM_A"
expect 1 "$RCOORD" elect campaign svc --id b --json
assert_eq "$(json_field "$OUT" leader)" false
assert_eq "$(json_field "$OUT" leader_id)" a
assert_eq "$(json_field "$OUT" id)" b
expect 0 "$RCOORD" --json elect campaign svc --id a --ttl 20m
assert_eq "$(json_field "$OUT" leader)" true
assert_eq "$(json_field "$OUT" term)" "$TERM_A" "a leader that campaigns again keeps its term"
assert_eq "$(json_field "$OUT" ttl_ms)" 1200000
expect 0 "$RCOORD" elect status svc
assert_eq "$(echo "$OUT" | sed -n 1p)" "leader: true"
assert_eq "$(echo "$OUT" | sed -n 3p)" "id: a"
assert_eq "$(echo "$OUT" | sed -n 4p)" "term: $TERM_A"
assert_contains "$(echo "$OUT" | sed -n 5p)" "ttl_ms: "
expect 0 "$RCOORD" elect status svc --json
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert list(d)==["leader","name","id","term","ttl_ms","host","pid","user","cmd","note","acquired_at","held_ms"], d' "$OUT" ||
  fail "status JSON fields: $OUT"
expect 1 "$RCOORD" elect resign svc --id b
assert_contains "$ERR" "not led by 'b'"
expect 0 "$RCOORD" elect resign svc --id a
assert_eq "$OUT" resigned
expect 1 "$RCOORD" elect status svc --json
assert_eq "$(json_field "$OUT" leader)" false
assert_eq "$(json_field "$OUT" term)" "$TERM_A"
expect 0 "$RCOORD" elect campaign svc --id b
[ "$OUT" -gt "$TERM_A" ] || fail "a new leader, a new term: $OUT after $TERM_A"
pass "campaign, status, resign: exit codes, text and JSON"

# usage errors
expect 2 "$RCOORD" elect campaign svc
expect 2 "$RCOORD" elect campaign svc --id ''
expect 2 "$RCOORD" elect campaign svc --id a --ttl bogus
expect 2 "$RCOORD" elect run svc --id a
expect 2 "$RCOORD" elect observe svc --wait 5x
redis-cli -p "$R_PORT" set 'rcoord:{elect:str}' x >/dev/null
expect 4 "$RCOORD" elect campaign str --id a
assert_contains "$ERR" "not an rcoord election"
assert_eq "$(redis-cli -p "$R_PORT" get 'rcoord:{elect:str}')" x
pass "usage errors exit 2, a foreign key exits 4 and is left alone"

# --wait: a waiting candidate is woken by the resignation (once it is seen waiting)
expect 0 "$RCOORD" elect campaign w --id a --ttl 10m
term_w=$OUT
"$RCOORD" elect campaign w --id b --wait 1m >"$TEST_TMP/w.out" &
waiter=$!
track $waiter
wait_blocked "$R_PORT" 1
start=$(now_ms)
expect 0 "$RCOORD" elect resign w --id a
wait $waiter || fail "the waiting candidate did not become leader"
took=$(($(now_ms) - start))
[ "$(cat "$TEST_TMP/w.out")" -gt "$term_w" ] || fail "the waiter's term: $(cat "$TEST_TMP/w.out") after $term_w"
[ "$took" -lt "$(scaled 1000)" ] || fail "took ${took}ms to take over after the resignation"
expect 1 "$RCOORD" elect campaign w --id c --wait 300ms
pass "--wait: woken by the resignation (${took}ms); gives up after DUR"

# observe: the state now, then one line per change as it happens (text and JSON)
# has_lines FILE N: FILE has at least N lines
has_lines() { [ "$(grep -c '' "$1")" -ge "$2" ]; }
"$RCOORD" elect observe obs --wait 5m >"$TEST_TMP/obs.txt" &
obs_text=$!
track $obs_text
"$RCOORD" --json elect observe obs --wait 5m >"$TEST_TMP/obs.json" &
obs_json=$!
track $obs_json
wait_until 10 subscribed 'rcoord:{elect:obs}:changes' 2 ||
  fail "observers did not subscribe"
# changes start once each observer has printed the state it read after subscribing (a change
# before that read would be folded into its first line)
for f in obs.txt obs.json; do
  wait_until 10 has_lines "$TEST_TMP/$f" 1 || fail "observe printed no first state ($f)"
done
"$RCOORD" elect campaign obs --id a --ttl 5m >/dev/null
"$RCOORD" elect resign obs --id a >/dev/null
"$RCOORD" elect campaign obs --id b --ttl 700ms >/dev/null
# b's lease runs out, and nobody announces it: the observers see the vacancy by themselves
for f in obs.txt obs.json; do
  wait_until 10 has_lines "$TEST_TMP/$f" 5 || fail "observe did not report the expiry: $(cat "$TEST_TMP/$f")"
done
"$RCOORD" elect campaign obs --id c --ttl 5m >/dev/null
for f in obs.txt obs.json; do
  wait_until 10 has_lines "$TEST_TMP/$f" 6 || fail "observe did not report c: $(cat "$TEST_TMP/$f")"
done
kill -TERM $obs_text $obs_json
wait $obs_text $obs_json || true
assert_eq "$(cat "$TEST_TMP/obs.txt")" "$(printf '\na\n\nb\n\nc')" "observe text lines"
python3 - "$TEST_TMP/obs.json" <<'PY' || fail "observe JSON: $(cat "$TEST_TMP/obs.json")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
got = [(l["leader"], l["id"]) for l in lines]
want = [(False, ""), (True, "a"), (False, ""), (True, "b"), (False, ""), (True, "c")]
assert got == want, got
terms = [l["term"] for l in lines]
# 0 before anyone led; each vacancy keeps the last term; each new leader a higher one
assert terms[0] == 0 and terms[2] == terms[1] and terms[4] == terms[3], terms
assert terms[1] < terms[3] < terms[5], terms
assert all(l["name"] == "obs" for l in lines)
PY
pass "observe: one line per change, in order, the expiry included (text and JSON Lines)"

# the expiry line comes when the lease ends, not at some later poll: an observer that waits
# already sees a leader of 800 ms come and go (lines: vacant, a, vacant)
"$RCOORD" elect observe exp --wait 5m > >(while read -r line; do
  echo "$(now_ms) $line"
done >"$TEST_TMP/exp.txt") &
observer=$!
track $observer
wait_until 10 subscribed 'rcoord:{elect:exp}:changes' 1 || fail "the observer did not subscribe"
wait_until 10 has_lines "$TEST_TMP/exp.txt" 1 || fail "observe printed no first state"
"$RCOORD" elect campaign exp --id a --ttl 800ms >/dev/null
# measured after the campaign returned: the lease ended no later than this
ended=$(($(now_ms) + 800))
wait_until 10 has_lines "$TEST_TMP/exp.txt" 3 || fail "no vacancy line: $(cat "$TEST_TMP/exp.txt")"
kill -TERM $observer
wait $observer || true
seen=$(sed -n 3p "$TEST_TMP/exp.txt" | cut -d' ' -f1)
assert_eq "$(sed -n 3p "$TEST_TMP/exp.txt" | cut -s -d' ' -f2-)" "" "the third line is the vacancy"
late=$((seen - ended))
[ "$late" -lt "$(scaled 300)" ] || fail "the expiry was reported ${late}ms after the lease ended"
pass "observe reports an expired lease ${late}ms after it ended"

# --wait is the observation time; the global I/O --timeout goes before the group
start=$(now_ms)
expect 0 "$RCOORD" --timeout 300ms elect observe quiet --wait 1500ms
took=$(($(now_ms) - start))
[ "$took" -ge 1400 ] && [ "$took" -lt "$(scaled 3000)" ] || fail "observe --wait 1500ms took ${took}ms"
pass "observe --wait (${took}ms) next to the global --timeout"

# Ctrl-C ends observe quietly with 128+N
"$RCOORD" elect observe quiet >/dev/null 2>"$TEST_TMP/obs.err" &
pid=$!
wait_until 10 subscribed 'rcoord:{elect:quiet}:changes' 1 || fail "observer did not subscribe"
kill -TERM $pid
code=0; wait $pid || code=$?
assert_eq "$code" 143
assert_eq "$(cat "$TEST_TMP/obs.err")" "" "no error message"
pass "observe ends on SIGTERM with 143"

# run: environment, exit code, step down after
expect 7 "$RCOORD" elect run job --id a -- sh -c 'echo "$RCOORD_TERM $RCOORD_ELECTION $RCOORD_ID"; exit 7'
read -r first_term election id <<<"$OUT"
[[ $first_term =~ ^[0-9]{16}$ ]] || fail "RCOORD_TERM: $OUT"
assert_eq "$election $id" "job a"
expect 1 "$RCOORD" elect status job
expect 0 "$RCOORD" elect run job --id a -- true
expect 1 "$RCOORD" elect status job --json
[ "$(json_field "$OUT" term)" -gt "$first_term" ] || fail "the next run's term: $OUT"
pass "run: RCOORD_TERM/ELECTION/ID, the command's exit code, steps down after"

# run: another leader means exit 1 (or -E); the same id in another process is not shared
# The command runs until told to stop (a fixed `sleep 2` could end during the checks below
# when sanitized processes start slowly). The lease is 1 s on a quiet machine, longer on a
# slow one, so that renewals every third of it keep up.
lease=$(scaled 1000)
"$RCOORD" --timeout 300ms elect run job --id a --ttl "${lease}ms" -- sh -c 'while [ ! -e "$0" ]; do sleep 0.05; done' \
  "$TEST_TMP/stop-job" &
runner=$!
track $runner
led_at=$(now_ms) # before the lease began: a lease not renewed would be over at led_at + lease
wait_until 10 "$RCOORD" elect status job
expect 1 "$RCOORD" elect run job --id b -- touch "$TEST_TMP/ran"
expect 75 "$RCOORD" elect run job --id b -E 75 -- touch "$TEST_TMP/ran"
expect 1 "$RCOORD" elect run job --id a -- touch "$TEST_TMP/ran"
assert_contains "$ERR" "give each process its own --id"
[ ! -e "$TEST_TMP/ran" ] || fail "a command ran without leadership"
# the lease is renewed while the command runs: still leader 300 ms after it would have ended
until [ $(($(now_ms) - led_at)) -ge $((lease + 300)) ]; do sleep 0.05; done
expect 0 "$RCOORD" elect status job
touch "$TEST_TMP/stop-job"
wait $runner
expect 1 "$RCOORD" elect status job
pass "run: not leader exits 1 or -E; a 1s lease renewed past its TTL; no sharing of one id"

# run: loss of leadership terminates the command and exits 5
"$RCOORD" --timeout 200ms elect run lose --id a --ttl 1s --kill-grace 500ms -- sh -c 'trap "echo got-term >>\"$0\"; exit 0" TERM; touch "$0.ready"; while :; do sleep 0.05; done' "$TEST_TMP/lose.log" &
runner=$!
track $runner
wait_until 10 test -e "$TEST_TMP/lose.log.ready" || fail "elect run never started its command"
redis-cli -p "$R_PORT" del 'rcoord:{elect:lose}' >/dev/null
"$RCOORD" elect campaign lose --id thief --ttl 30s >/dev/null
start=$(now_ms)
code=0; wait $runner || code=$?
took=$(($(now_ms) - start))
assert_eq "$code" 5 "exit code on loss"
assert_eq "$(cat "$TEST_TMP/lose.log")" got-term "the command got SIGTERM"
[ "$took" -lt "$(scaled 1500)" ] || fail "loss noticed after ${took}ms with a 1s lease"
expect 0 "$RCOORD" elect status lose --json
assert_eq "$(json_field "$OUT" id)" thief "the new leader is left alone"
pass "run: loss of leadership gives SIGTERM and exit 5 (${took}ms)"

# run: Ctrl-C (SIGTERM) while waiting aborts and leaves nothing behind
"$RCOORD" elect campaign wait --id holder --ttl 30s >/dev/null
"$RCOORD" elect run wait --id w --wait forever -- touch "$TEST_TMP/ran" &
pid=$!
wait_blocked "$R_PORT" 1
kill -TERM $pid
code=0; wait $pid || code=$?
assert_eq "$code" 143
[ ! -e "$TEST_TMP/ran" ] || fail "the command ran"
expect 0 "$RCOORD" elect status wait --json
assert_eq "$(json_field "$OUT" id)" holder
pass "run: SIGTERM while waiting exits 143, nothing taken"

# ---- Proof 1: five candidates, one leader at a time, terms increasing ----
# They campaign again and again until twelve leaderships have come and gone (the lease is
# 1 s, scaled on a slow machine so that renewals keep up).
export HISTORY=$TEST_TMP/leaders.jsonl
: >"$HISTORY"
printf '%s\nrecord enter one\nsleep "0.$((RANDOM %% 3 + 1))"\nrecord exit one\n' "$RECORD_SH" \
  >"$TEST_TMP/lead.sh"
lease=$(scaled 1000)
loops=()
for i in 1 2 3 4 5; do
  (
    while [ ! -e "$TEST_TMP/stop-campaigns" ]; do
      "$RCOORD" --timeout 300ms elect run one --id "p$i" --ttl "${lease}ms" --wait 2s -- \
        bash "$TEST_TMP/lead.sh" || true
    done
  ) &
  loops+=($!)
  track $!
done
stops() { [ "$(grep -c '"f":"exit"' "$1")" -ge "$2" ]; }
wait_until 60 stops "$HISTORY" 12 || fail "fewer than 12 leaderships: $(cat "$HISTORY")"
touch "$TEST_TMP/stop-campaigns"
wait "${loops[@]}"
# one leader at a time, one per term, and a leadership that began after another ended has a
# higher term (tests/e2e/history_check.py)
check_history elect "$HISTORY"
leaders=$(grep -o '"id":"[^"]*"' "$HISTORY" | sort -u | wc -l)
[ "$leaders" -ge 2 ] || fail "leadership never changed hands: $(cat "$HISTORY")"
pass "five candidates: leadership intervals never overlap, terms strictly increase"

# ---- Proof 2: kill -9 the leader (process and command); another takes over within TTL + 1 s ----
LOG=$TEST_TMP/crash.log
: >"$LOG"
declare -A runner_of
for i in 1 2 3 4 5; do
  "$RCOORD" --timeout 300ms elect run crash --id "c$i" --ttl "${lease}ms" --wait forever -- bash -c '
    echo "start $(date +%s%3N) $RCOORD_TERM $$ $1" >>"$0"; exec sleep 600' "$LOG" "$i" &
  runner_of[$i]=$!
  track $!
done
wait_until 5 starts "$LOG" 1 || fail "nobody became leader"
rounds=$(effort 3)
for round in $(seq "$rounds"); do
  read -r _ _ term child idx < <(tail -1 "$LOG")
  {
    kill -9 "${runner_of[$idx]}"
    kill -9 -- "-$child" # the command's process group: the whole host is gone
    killed=$(now_ms)
    wait "${runner_of[$idx]}" || true
  } 2>/dev/null
  wait_until $((lease / 1000 + 5)) starts "$LOG" $((round + 1)) || fail "no new leader after killing c$idx"
  read -r _ started new_term _ new_idx < <(tail -1 "$LOG")
  handover=$((started - killed))
  [ "$handover" -le $((lease + $(scaled 1000))) ] || fail "hand-over took ${handover}ms with a ${lease}ms TTL"
  [ "$new_term" -gt "$term" ] || fail "term went from $term to $new_term"
  [ "$new_idx" != "$idx" ] || fail "the killed candidate came back"
  echo "  round $round: c$idx (term $term) killed, c$new_idx leads (term $new_term) after ${handover}ms"
done
[ "$(grep -c start "$LOG")" -eq $((rounds + 1)) ] || fail "more leaders than hand-overs: $(cat "$LOG")"
# the survivors step down cleanly on SIGTERM
read -r _ _ _ child _ < <(tail -1 "$LOG")
for i in 1 2 3 4 5; do kill -TERM "${runner_of[$i]}" 2>/dev/null || true; done
for i in 1 2 3 4 5; do wait "${runner_of[$i]}" 2>/dev/null || true; done
wait_until 5 dead "$child" || fail "the last leader's command survived SIGTERM"
expect 1 "$RCOORD" elect status crash
pass "kill -9 of the leader: a new leader within TTL + 1 s, with a higher term, $rounds time(s)"

# bash completion knows the new groups, their verbs and options, and the child of elect run
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
           COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _rcoord; echo "${COMPREPLY[*]}"' \
    _ "$RCOORD_SOURCE_DIR/completions/rcoord.bash" "$@"
}
assert_eq "$(complete_words rcoord el)" elect
assert_eq "$(complete_words rcoord elect o)" observe
assert_eq "$(complete_words rcoord latch '')" "init down wait status"
assert_contains "$(complete_words rcoord signal wait ch --a)" --all
assert_contains "$(complete_words rcoord elect run x --ki)" --kill-grace
assert_contains "$(complete_words rcoord elect run x -- ech)" echo
pass "bash completion: elect, signal, latch"
