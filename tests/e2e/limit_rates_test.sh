# Several rates in one limit check (`--rate 5/h --rate 2/10h`), for every algorithm: allowed
# only when every rate allows; a denial consumes from none; the output says which rate
# denied, `remaining` is the smallest, `retry_after_ms` the largest, and JSON adds `rates`.
# `limit wait` waits until all allow; `limit status` peeks; `limit reset` deletes every rate.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# rate_field JSON RATE FIELD: a field of one rate's object in `rates`.
rate_field() {
  python3 -c '
import json, sys
for r in json.loads(sys.argv[1])["rates"]:
    if r["rate"] == sys.argv[2]:
        v = r[sys.argv[3]]
        print(json.dumps(v) if isinstance(v, bool) else v)
' "$1" "$2" "$3"
}

for algo in gcra token-bucket sliding-window fixed-window; do
  # (slow rates: a sanitized run on a loaded machine must see nothing refill meanwhile)
  k="both-$algo"
  expect 0 "$RCOORD" --json limit check "$k" --rate 5/h --rate 2/10h --algo "$algo"
  assert_eq "$(json_field "$OUT" remaining)" 1 "$algo: the smallest remaining"
  assert_eq "$(rate_field "$OUT" 5/h remaining)" 4
  assert_eq "$(rate_field "$OUT" 2/10h remaining)" 1
  expect 0 "$RCOORD" --json limit check "$k" --rate 5/h --rate 2/10h --algo "$algo"
  # the hourly rate is used up: denied, and the minutely one is not charged
  expect 1 "$RCOORD" --json limit check "$k" --rate 5/h --rate 2/10h --algo "$algo"
  assert_eq "$(json_field "$OUT" allowed)" false
  assert_eq "$(rate_field "$OUT" 2/10h allowed)" false "$algo: 2/10h denied"
  assert_eq "$(rate_field "$OUT" 5/h allowed)" true "$algo: 5/h would allow"
  assert_eq "$(json_field "$OUT" retry_after_ms)" "$(rate_field "$OUT" 2/10h retry_after_ms)"
  assert_eq "$(json_field "$OUT" limit)" 2 "$algo: the limit of the rate that denied"
  retry=$(json_field "$OUT" retry_after_ms)
  [ "$retry" -gt 60000 ] || fail "$algo: retry after ${retry}ms; the hourly rate needs more"
  expect 1 "$RCOORD" limit check "$k" --rate 5/h --rate 2/10h --algo "$algo"
  assert_contains "$ERR" "limit '$k' denied by 2/10h: retry in"
  # the order of the options does not matter; status consumes nothing
  for i in 1 2; do
    expect 1 "$RCOORD" limit status "$k" --rate 2/10h --rate 5/h --algo "$algo"
    assert_contains "$OUT" "rate: 5/h allowed=true limit=5 remaining=3 "
    assert_contains "$OUT" "rate: 2/10h allowed=false limit=2 remaining=0 "
    assert_contains "$OUT" "remaining: 0"
  done
  pass "$algo: 2 of 2/10h taken, then denied by 2/10h alone; 5/h charged only for the allowed two"

  # A denial by the short rate takes nothing from the long one.
  k="short-$algo"
  expect 0 "$RCOORD" limit check "$k" --rate 1/h --rate 100/10h --algo "$algo"
  expect 1 "$RCOORD" --json limit check "$k" --rate 1/h --rate 100/10h --algo "$algo"
  assert_eq "$(rate_field "$OUT" 1/h allowed)" false
  assert_eq "$(rate_field "$OUT" 100/10h remaining)" 99
  expect 1 "$RCOORD" --json limit check "$k" --rate 100/10h --rate 1/h --algo "$algo"
  expect 1 "$RCOORD" --json limit status "$k" --rate 1/h --rate 100/10h --algo "$algo"
  assert_eq "$(rate_field "$OUT" 100/10h remaining)" 99 "$algo: the denials took nothing from 100/10h"
  # a cost that one rate can never allow: -1, and nothing taken
  expect 1 "$RCOORD" --json limit check "$k" --rate 1/h --rate 100/10h --algo "$algo" --cost 2
  assert_eq "$(json_field "$OUT" retry_after_ms)" -1
  expect 1 "$RCOORD" limit check "$k" --rate 1/h --rate 100/10h --algo "$algo" --cost 2
  assert_contains "$ERR" "never allows cost 2"
  pass "$algo: denied by 1/h, 100/10h untouched (99 left); a cost over a rate's N is never allowed"
done

# --- the keys: one pair per rate, under the limit's hash tag; reset deletes them all -------
# (The rates whose keys are listed are slow ones: a key expires once its rate is full again, a
# tenth of a second after a check of 10/s, which a busy machine can take before the listing.)
keys_of() { redis-cli -p "$R_PORT" --scan --pattern "rcoord:{limit:$1}*" | sort | tr '\n' ' '; }
expect 0 "$RCOORD" limit check lay --rate 10/h --rate 1000/h --rate 100/m --algo sliding-window
assert_eq "$(keys_of lay)" "rcoord:{limit:lay} rcoord:{limit:lay}:log rcoord:{limit:lay}:rate2 rcoord:{limit:lay}:rate2:log rcoord:{limit:lay}:rate3 rcoord:{limit:lay}:rate3:log "
expect 0 "$RCOORD" limit reset lay
assert_eq "$(keys_of lay)" "" "reset deleted every rate's keys"
expect 1 "$RCOORD" limit reset lay
pass "one state per rate under {limit:NAME} (sorted by period); reset deletes them all"

# --- limit wait ------------------------------------------------------------------------------
# (timed from before the check, so however late the wait starts, 1/500ms needs 500ms)
start=$(now_ms)
expect 0 "$RCOORD" limit check w --rate 1/500ms --rate 100/10h
expect 0 "$RCOORD" --json limit wait w --rate 1/500ms --rate 100/10h --wait 5s
took=$(($(now_ms) - start))
[ "$took" -ge 490 ] || fail "limit wait returned ${took}ms after the check: 1/500ms was not waited for"
assert_eq "$(json_field "$OUT" allowed)" true
assert_eq "$(rate_field "$OUT" 100/10h remaining)" 98
# the next chance is an hour away: --wait 1s gives up at once, consuming nothing
expect 0 "$RCOORD" limit check w2 --rate 1/h --rate 100/10h
start=$(now_ms)
expect 1 "$RCOORD" limit wait w2 --rate 1/h --rate 100/10h --wait 1s
gave_up=$(($(now_ms) - start))
[ "$gave_up" -lt "$(scaled 900)" ] || fail "limit wait took ${gave_up}ms to give up"
assert_contains "$ERR" "nothing was consumed"
expect 1 "$RCOORD" --json limit status w2 --rate 1/h --rate 100/10h
assert_eq "$(rate_field "$OUT" 100/10h remaining)" 99
pass "limit wait with two rates: waits for both (${took}ms); past --wait consumes nothing"

# SIGTERM (as Ctrl-C) while sleeping until the next check: exit 143, nothing counted. (SIGTERM:
# a background job of a script starts with SIGINT ignored.) The waiter has made
# its first check once the server counted one more script call (this server is ours alone).
scripts_run() {
  redis-cli -p "$R_PORT" info commandstats | tr -d '\r' |
    awk -F'[=,]' '/^cmdstat_(eval|evalsha):/ { n += $2 } END { print n + 0 }'
}
expect 0 "$RCOORD" limit check intr --rate 1/10s --rate 100/10h
before=$(scripts_run)
"$RCOORD" limit wait intr --rate 1/10s --rate 100/10h --wait 1m 2>"$TEST_TMP/intr.err" &
waiter=$!
track $waiter
checked() { [ "$(scripts_run)" -gt "$before" ]; }
wait_until 10 checked || fail "the waiter never checked"
kill -TERM $waiter
code=0; wait $waiter || code=$?
assert_eq "$code" 143 "exit code after SIGTERM"
assert_contains "$(cat "$TEST_TMP/intr.err")" "nothing was consumed"
expect 1 "$RCOORD" --json limit status intr --rate 1/10s --rate 100/10h
assert_eq "$(rate_field "$OUT" 100/10h remaining)" 99
pass "SIGTERM while waiting on two rates: exit 143, nothing counted"

# --- bad combinations: usage errors --------------------------------------------------------
expect 2 "$RCOORD" limit check bad --rate 10/s --rate 5/h --burst 3
assert_contains "$ERR" "--burst cannot be given with several --rate"
expect 2 "$RCOORD" limit check bad --rate 10/s --rate 10/s
assert_contains "$ERR" "--rate 10/s is given twice"
expect 2 "$RCOORD" limit status bad --rate 10/s --rate 5
assert_contains "$ERR" "bad --rate '5'"
expect 2 "$RCOORD" limit wait bad --rate 10/s --rate 0/m
# shellcheck disable=SC2046
expect 2 "$RCOORD" limit check bad $(for i in 1 2 3 4 5 6 7 8 9; do echo --rate "$i/s"; done)
assert_contains "$ERR" "at most 8"
expect 0 "$RCOORD" limit check --rate 10/h --rate 1/h bad
assert_eq "$(keys_of bad)" "rcoord:{limit:bad} rcoord:{limit:bad}:rate2 "
pass "--burst with several rates, a rate given twice, a bad one, nine of them: exit 2"
