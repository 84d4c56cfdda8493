# TRACEPARENT (SPEC §6 "service managers and traces"): a valid W3C traceparent in the
# environment puts its trace id in every history event the call records, and reaches the
# command of a run form unchanged; an invalid one records nothing and is still passed on.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
without_note

trace=4bf92f3577b34da6a3ce929d0e0e4736
parent="00-$trace-00f067aa0ba902b7-01"

# trace_ids NAME TYPE: the trace_id of each event of NAME's history ('-' when it has none).
trace_ids() {
  "$RCOORD" -o json history "$1" --type "$2" | python3 -c '
import json, sys
print(" ".join(json.loads(l).get("trace_id", "-") for l in sys.stdin))'
}

# lock run: acquired and released carry the id; the command sees the variable as it was.
TRACEPARENT=$parent "$RCOORD" lock run job -- sh -c 'printf %s "$TRACEPARENT" >"$1"' sh \
  "$TEST_TMP/seen" || fail "lock run exited $?"
assert_eq "$(cat "$TEST_TMP/seen")" "$parent" "TRACEPARENT in the command's environment"
assert_eq "$(event_names "$("$RCOORD" -o json history job)")" "acquired released" "events"
assert_eq "$(trace_ids job lock)" "$trace $trace" "trace ids of lock run's events"
# A busy try and a timed-out wait record it too; the text line shows it.
token=$("$RCOORD" lock acquire job --ttl 30s)
rc=0
TRACEPARENT=$parent "$RCOORD" lock acquire job --wait 100ms 2>/dev/null || rc=$?
assert_eq "$rc" 1 "a busy take"
assert_eq "$(trace_ids job lock)" "$trace $trace - $trace" "a busy take's event"
"$RCOORD" history job | tail -1 | grep -q "trace_id=$trace" || fail "no trace_id in the text line"
TRACEPARENT=$parent "$RCOORD" lock break job >/dev/null
assert_eq "$(trace_ids job lock | awk '{print $NF}')" "$trace" "lock break's event"
pass "lock: acquired, released, busy and broken carry the trace id; the command sees TRACEPARENT"

# sem run and its events.
TRACEPARENT=$parent "$RCOORD" sem run pool --limit 2 -- sh -c 'printf %s "$TRACEPARENT" >"$1"' sh \
  "$TEST_TMP/seen.sem" || fail "sem run exited $?"
assert_eq "$(cat "$TEST_TMP/seen.sem")" "$parent" "TRACEPARENT in sem run's command"
assert_eq "$(trace_ids pool sem)" "$trace $trace" "trace ids of sem run's events"
pass "sem run: taken and released carry the trace id"

# Invalid: nothing recorded, no error, and the command still gets the variable unchanged.
for bad in "00-$trace-0000000000000000-01" "garbage" "00-${trace^^}-00f067aa0ba902b7-01"; do
  TRACEPARENT=$bad "$RCOORD" lock run other -- sh -c 'printf %s "$TRACEPARENT" >"$1"' sh \
    "$TEST_TMP/seen.bad" 2>"$TEST_TMP/err" || fail "lock run with TRACEPARENT=$bad exited $?"
  assert_eq "$(cat "$TEST_TMP/seen.bad")" "$bad" "an invalid TRACEPARENT is passed on unchanged"
  [ -s "$TEST_TMP/err" ] && fail "an invalid TRACEPARENT made rcoord say: $(cat "$TEST_TMP/err")"
done
assert_eq "$(trace_ids other lock)" "- - - - - -" "invalid TRACEPARENTs recorded"
pass "an invalid TRACEPARENT: no trace id recorded, no message, passed on unchanged"
