# queue: exit codes, text and JSON output, binary messages, leases, delays, dead letters,
# and `queue consume` (environment, stdin, ack/nack, SIGTERM), all through the binary.
source "$(dirname "$0")/lib.sh"
# Job control, so background jobs do not start with SIGINT ignored (see signals_test.sh).
set -m
start_redis R
export RCOORD_URL=$R_URL
Q=(redis-cli -p "$R_PORT")

# --- push, pop, len, peek, stats ---------------------------------------------------------------
expect 0 "$RCOORD" queue push jobs a b c
assert_eq "$OUT" 3 "push prints the new length"
expect 0 "$RCOORD" --json queue push jobs d
assert_eq "$OUT" '{"name":"jobs","pushed":1,"length":4}'
expect 0 "$RCOORD" queue len jobs
assert_eq "$OUT" 4
expect 0 "$RCOORD" queue peek jobs --count 2
assert_eq "$OUT" $'a\nb'
expect 0 "$RCOORD" queue pop jobs
assert_eq "$OUT" a "FIFO"
expect 0 "$RCOORD" queue pop jobs --lifo
assert_eq "$OUT" d "LIFO"
expect 0 "$RCOORD" --json queue pop jobs --count 5
assert_lines "$OUT" 2
assert_eq "$(json_field "$(head -1 <<<"$OUT")" message)" b
assert_eq "$(json_field "$(head -1 <<<"$OUT")" attempt)" 1
expect 1 "$RCOORD" queue pop jobs
assert_eq "$OUT" ""
assert_contains "$ERR" "queue 'jobs' is empty"
expect 1 "$RCOORD" --json queue pop jobs
assert_eq "$OUT$ERR" "" "JSON: an empty pop prints nothing"
expect 1 "$RCOORD" queue peek jobs
expect 0 "$RCOORD" queue stats jobs
assert_eq "$OUT" $'ready: 0\ndelayed: 0\nin_flight: 0\ndead: 0'
pass "push, pop (FIFO, LIFO, --count), len, peek, stats; exit 1 when empty"

# --- stdin, -0, --file: binary-safe both ways --------------------------------------------------
printf 'one\ntwo\r\nthree' | "$RCOORD" queue push lines >/dev/null
expect 0 "$RCOORD" queue pop lines --count 3
assert_eq "$OUT" $'one\ntwo\nthree' "one message per stdin line"
printf 'multi\nline\0second\0' | "$RCOORD" queue push nul -0 >/dev/null
"$RCOORD" queue pop nul --count 2 -0 >"$TEST_TMP/nul.out"
printf 'multi\nline\0second\0' | cmp - "$TEST_TMP/nul.out" || fail "-0 in and out is not exact"
head -c 1048576 /dev/urandom >"$TEST_TMP/big.bin"
printf 'a\0b\n\xff' >"$TEST_TMP/small.bin"
expect 0 "$RCOORD" queue push bin --file "$TEST_TMP/big.bin" --file - <"$TEST_TMP/small.bin"
assert_eq "$OUT" 2
"$RCOORD" queue pop bin -0 >"$TEST_TMP/big.out"
{ cat "$TEST_TMP/big.bin"; printf '\0'; } | cmp - "$TEST_TMP/big.out" || fail "1 MB message changed"
expect 0 "$RCOORD" --json queue pop bin
python3 - "$OUT" "$TEST_TMP/small.bin" <<'PY' || fail "JSON message_base64 is not the exact bytes: $OUT"
import base64, json, sys
j = json.loads(sys.argv[1])
assert base64.b64decode(j["message_base64"]) == open(sys.argv[2], "rb").read()
assert j["message"].startswith("a\u0000b\n")
PY
pass "stdin lines, -0 both ways, --file with NUL bytes and 1 MB, JSON base64 exact"

# --- leases: ack, nack, redelivery -------------------------------------------------------------
"$RCOORD" queue push work job1 >/dev/null
expect 0 "$RCOORD" queue pop work --ack-timeout 30s
read -r id attempt size <<<"$(head -1 <<<"$OUT")"
assert_eq "$attempt $size" "1 4" "header line: ID ATTEMPT BYTES"
assert_eq "$(tail -n +2 <<<"$OUT")" job1
expect 1 "$RCOORD" queue pop work --ack-timeout 30s
expect 0 "$RCOORD" queue stats work --json
assert_eq "$(json_field "$OUT" in_flight)" 1
expect 1 "$RCOORD" queue ack work "$id" --attempt 2
expect 0 "$RCOORD" queue nack work "$id" --delay 300ms
assert_eq "$OUT" delayed
sleep 0.4 # the 300 ms delay runs out (time passing is the event here)
expect 0 "$RCOORD" --json queue pop work --ack-timeout 300ms
assert_eq "$(json_field "$OUT" id)" "$id"
assert_eq "$(json_field "$OUT" attempt)" 2
sleep 0.4  # the lease runs out: delivered again
expect 0 "$RCOORD" --json queue pop work --ack-timeout 30s
assert_eq "$(json_field "$OUT" attempt)" 3
expect 0 "$RCOORD" queue ack work "$id"
assert_eq "$OUT" acked
expect 1 "$RCOORD" queue ack work "$id"
assert_contains "$ERR" "not in flight"
expect 1 "$RCOORD" queue nack work "$id"
assert_eq "$("${Q[@]}" EXISTS 'rcoord:{queue:work}')" 0 "acked message deleted"
pass "lease, ack, nack --delay, redelivery after the lease, attempts counted"

# --- delayed delivery: not before 2 s, within 2.5 s, and a blocked pop wakes for it ------------
# A plain pop does not see a delayed message (an hour away, so the answer cannot depend on how
# quickly this runs).
expect 0 "$RCOORD" queue push afar --delay 1h hello
expect 1 "$RCOORD" queue pop afar
expect 0 "$RCOORD" queue stats afar
assert_contains "$OUT" "delayed: 1"
# A pop that waits is woken for a message due in 2 s: not before (the clock starts before the
# push), and not much later.
"$RCOORD" queue pop later --wait 1m >"$TEST_TMP/later.out" &
waiter=$!
track $waiter
wait_blocked "$R_PORT" 1
pushed=$(now_ms)
expect 0 "$RCOORD" queue push later --delay 2s hello
wait $waiter || fail "the blocked pop failed"
took=$(($(now_ms) - pushed))
assert_eq "$(cat "$TEST_TMP/later.out")" hello
[ "$took" -ge 2000 ] && [ "$took" -le "$(scaled 2500)" ] || fail "delayed 2s message popped after ${took}ms"
pass "push --delay: a plain pop leaves it; popped after ${took}ms (delay 2s) by a blocked pop"

# --- dead letters: list, replay, purge --------------------------------------------------------
"$RCOORD" queue push poison p1 p2 >/dev/null
expect 0 "$RCOORD" queue consume poison --max-attempts 2 --idle-exit 500ms -- false
expect 0 "$RCOORD" queue stats poison
assert_contains "$OUT" "dead: 2"
expect 0 "$RCOORD" queue dead poison
assert_eq "$(head -1 <<<"$OUT" | cut -d' ' -f2-)" "2 2" "dead: ID ATTEMPTS BYTES"
expect 0 "$RCOORD" --json queue dead poison --count 1
assert_lines "$OUT" 1
dead_id=$(json_field "$OUT" id)
assert_eq "$(json_field "$OUT" message)" p1
expect 0 "$RCOORD" queue replay poison "$dead_id"
assert_eq "$OUT" 1
expect 1 "$RCOORD" queue replay poison "$dead_id"
expect 0 "$RCOORD" queue pop poison
assert_eq "$OUT" p1
expect 0 "$RCOORD" --json queue purge poison --dead
assert_eq "$OUT" '{"name":"poison","purged":1}'
expect 1 "$RCOORD" queue dead poison
"$RCOORD" queue push poison x y >/dev/null
"$RCOORD" queue push poison z --delay 1h >/dev/null
expect 0 "$RCOORD" queue purge poison
assert_eq "$OUT" 3
pass "dead letters after --max-attempts: listed, replayed by id, purged"

# --- consume -----------------------------------------------------------------------------------
"$RCOORD" queue push c first second >/dev/null
cat >"$TEST_TMP/handler.sh" <<'SH'
msg=$(cat)
echo "$RCOORD_QUEUE $RCOORD_MESSAGE_ID $RCOORD_ATTEMPT $msg" >>"$LOG"
[ "$msg" != second ] || [ "$RCOORD_ATTEMPT" -ge 2 ]
SH
export LOG=$TEST_TMP/consume.log
expect 0 "$RCOORD" queue consume c --idle-exit 500ms -- sh "$TEST_TMP/handler.sh"
assert_eq "$(cut -d' ' -f1,3,4 "$LOG")" $'c 1 first\nc 1 second\nc 2 second'
assert_contains "$ERR" "failed with exit 1: ready again"
expect 0 "$RCOORD" queue stats c
assert_eq "$OUT" $'ready: 0\ndelayed: 0\nin_flight: 0\ndead: 0'
pass "consume: message on stdin, RCOORD_* environment, exit 0 acks, failure nacks"

# a message with NUL bytes and 1 MB reaches the command's stdin exactly
"$RCOORD" queue push c --file "$TEST_TMP/big.bin" >/dev/null
expect 0 "$RCOORD" queue consume c --max-messages 1 -- sh -c "cmp - '$TEST_TMP/big.bin'"
"$RCOORD" queue push c --file "$TEST_TMP/small.bin" >/dev/null
expect 0 "$RCOORD" queue consume c --max-messages 1 -- sh -c "cmp - '$TEST_TMP/small.bin'"
pass "consume: binary messages reach stdin byte for byte"

# --max-messages: the last command's status
"$RCOORD" queue push c one >/dev/null
expect 7 "$RCOORD" queue consume c --max-messages 1 --retry-delay 1h -- sh -c 'exit 7'
expect 0 "$RCOORD" queue stats c --json
assert_eq "$(json_field "$OUT" delayed)" 1 "--retry-delay"
"$RCOORD" queue purge c >/dev/null
pass "consume --max-messages exits with the last command's status; --retry-delay"

# a slow command keeps its message: the lease (1 s, scaled on a slow machine so that
# renewals every third of it keep up) is renewed while it runs
lease=$(scaled 1000)
"$RCOORD" queue push slow m >/dev/null
"$RCOORD" --timeout 250ms queue consume slow --ack-timeout "${lease}ms" --max-messages 1 -- \
  sh -c 'cat >/dev/null; while [ ! -e "$0" ]; do sleep 0.05; done' "$TEST_TMP/stop-slow" &
slow=$!
track $slow
in_flight_is() { "$RCOORD" queue stats "$1" | grep -qx "in_flight: $2"; }
wait_until 20 in_flight_is slow 1 || fail "the slow consumer never took the message"
sleep "$(seconds $((lease + 400)))" # past the lease: still in flight only if renewed
expect 1 "$RCOORD" queue pop slow --ack-timeout 10s
touch "$TEST_TMP/stop-slow"
wait $slow || fail "the slow consumer failed"
expect 0 "$RCOORD" queue stats slow
assert_contains "$OUT" "in_flight: 0"
pass "consume renews the lease of a slow command (no redelivery)"

# SIGTERM: the current message finishes and is acked, then consume exits 0
# (the command runs until the signal was taken, so it comes while m1 is being handled)
"$RCOORD" queue push term m1 m2 >/dev/null
"$RCOORD" queue consume term -- sh -c 'touch "$0.ready"; while [ ! -e "$0.go" ]; do sleep 0.05; done
  cat >>"$LOG.term"' "$TEST_TMP/m1" &
consumer=$!
track $consumer
wait_until 20 test -e "$TEST_TMP/m1.ready" || fail "consume never started m1's command"
kill -TERM $consumer
wait_until 10 signal_taken $consumer 15 || fail "consume never took the SIGTERM"
touch "$TEST_TMP/m1.go"
code=0; wait $consumer || code=$?
assert_eq "$code" 0 "consume after SIGTERM"
assert_eq "$(cat "$LOG.term")" m1 "the current message finished, no other started"
expect 0 "$RCOORD" queue stats term
assert_eq "$OUT" $'ready: 1\ndelayed: 0\nin_flight: 0\ndead: 0'
# idle: SIGTERM ends the wait at once
"$RCOORD" queue consume idle -- cat &
consumer=$!
track $consumer
# SIGTERM once it waits (a sanitized start-up on a busy machine can take longer than any
# fixed sleep, and a signal before rcoord's handlers exist would kill it outright).
wait_blocked "$R_PORT" 1
start=$(now_ms)
kill -TERM $consumer
wait $consumer || fail "idle consume did not exit 0 on SIGTERM"
[ $(($(now_ms) - start)) -lt "$(scaled 1000)" ] || fail "idle consume took too long to stop"
# a second signal is passed to the command: cut short, nacked, 128+N (the second is sent once
# the first was taken, so the two cannot merge into one)
rm -f "$TEST_TMP/term-ready"
"$RCOORD" queue consume term -- sh -c 'touch "$0"; sleep 30' "$TEST_TMP/term-ready" &
consumer=$!
track $consumer
wait_until 10 test -e "$TEST_TMP/term-ready" || fail "consume never started its command"
kill -TERM $consumer
wait_until 10 signal_taken $consumer 15 || fail "consume never took the first SIGTERM"
kill -TERM $consumer
code=0; wait $consumer || code=$?
assert_eq "$code" 143 "second SIGTERM"
expect 0 "$RCOORD" queue stats term
assert_eq "$OUT" $'ready: 1\ndelayed: 0\nin_flight: 0\ndead: 0'
pass "consume: SIGTERM finishes the current message then exits 0; a second one interrupts it"

# Ctrl-C on a waiting pop: exit 130 and nothing taken
"$RCOORD" queue pop ctrlc --wait forever --ack-timeout 1m &
waiter=$!
track $waiter
wait_blocked "$R_PORT" 1
kill -INT $waiter
code=0; wait $waiter || code=$?
assert_eq "$code" 130 "interrupted pop"
"$RCOORD" queue push ctrlc m >/dev/null
expect 0 "$RCOORD" queue stats ctrlc
assert_eq "$OUT" $'ready: 1\ndelayed: 0\nin_flight: 0\ndead: 0'
pass "SIGINT while pop waits: exit 130, nothing taken"

# --- bad input ---------------------------------------------------------------------------------
"${Q[@]}" SET 'rcoord:{queue:str}:ready' x >/dev/null
expect 4 "$RCOORD" queue push str m
assert_contains "$ERR" "queue 'str': key 'rcoord:{queue:str}:ready' holds a string, not the list rcoord keeps there"
expect 4 "$RCOORD" queue pop str
assert_eq "$("${Q[@]}" GET 'rcoord:{queue:str}:ready')" x
expect 2 "$RCOORD" queue pop jobs --count 0
expect 2 "$RCOORD" queue pop jobs --ack-timeout soon
assert_contains "$ERR" "soon"
expect 2 "$RCOORD" queue push "" m
expect 2 "$RCOORD" queue consume jobs
"$RCOORD" queue push typo m >/dev/null
expect 2 "$RCOORD" queue consume typo -- /nonexistent/handler
assert_contains "$ERR" "cannot run '/nonexistent/handler'"
expect 2 "$RCOORD" queue consume typo -- no-such-command-anywhere
expect 0 "$RCOORD" queue stats typo
assert_eq "$OUT" $'ready: 1\ndelayed: 0\nin_flight: 0\ndead: 0' "no message taken for a bad command"
expect 2 "$RCOORD" queue push jobs m --file "$TEST_TMP/small.bin"
expect 2 "$RCOORD" queue push jobs --file "$TEST_TMP/missing"
expect 2 "$RCOORD" queue ack jobs
expect 0 "$RCOORD" -q queue push jobs m
assert_eq "$OUT" ""
pass "wrong key type exit 4 (untouched), usage errors exit 2, -q"

# --- bash completion knows the queue verbs and their options ----------------------------------
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
           COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _rcoord; echo "${COMPREPLY[*]}"' \
    _ "${RCOORD_SOURCE_DIR:?}/completions/rcoord.bash" "$@"
}
assert_contains "$(complete_words rcoord qu)" queue "rcoord qu<TAB>"
assert_contains "$(complete_words rcoord queue con)" consume "rcoord queue con<TAB>"
assert_contains "$(complete_words rcoord queue consume q --idle)" --idle-exit "consume --idle<TAB>"
assert_contains "$(complete_words rcoord queue pop q --ack)" --ack-timeout "pop --ack<TAB>"
pass "bash completion completes queue verbs and options"
