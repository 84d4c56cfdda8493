# `rcoord limit` from the shell: exit codes, text and JSON output, usage errors, the
# refusal of foreign keys, status without consuming, reset, and the CI gate.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# The CI gate: allowed twice at 2/h, then denied with a note and exit 1
expect 0 "$RCOORD" limit check deploys --rate 2/h
assert_eq "$OUT" "allowed: true
limit: 2
remaining: 1
retry_after_ms: 0
reset_after_ms: 1800000" "text output"
expect 0 "$RCOORD" -q limit check deploys --rate 2/h
assert_eq "$OUT" "" "-q prints nothing"
expect 1 "$RCOORD" limit check deploys --rate 2/h
assert_contains "$OUT" "allowed: false"
assert_contains "$ERR" "limit 'deploys' denied: retry in"
if "$RCOORD" -q limit check deploys --rate 2/h; then fail "the gate let a third deploy through"; fi
pass "limit check gates a CI job: 0 allowed, 1 denied with a note"

# JSON: `name` (every result names its object), then exactly the fields of the SPEC, in
# order; retry_after_ms 0 when allowed
# (3/h: nothing refills between the checks, however slowly they run)
for algo in gcra token-bucket sliding-window fixed-window; do
  expect 0 "$RCOORD" --json limit check "j-$algo" --rate 3/h --algo "$algo"
  keys=$(python3 -c 'import json,sys; print(",".join(json.loads(sys.argv[1])))' "$OUT")
  assert_eq "$keys" "name,allowed,limit,remaining,retry_after_ms,reset_after_ms" "JSON fields ($algo)"
  assert_eq "$(json_field "$OUT" name)" "j-$algo"
  assert_eq "$(json_field "$OUT" allowed)" true
  assert_eq "$(json_field "$OUT" limit)" 3
  assert_eq "$(json_field "$OUT" remaining)" 2
  assert_eq "$(json_field "$OUT" retry_after_ms)" 0
  expect 0 "$RCOORD" --json limit check "j-$algo" --rate 3/h --algo "$algo" --cost 2
  assert_eq "$(json_field "$OUT" remaining)" 0 "cost 2 took two ($algo)"
  expect 1 "$RCOORD" --json limit check "j-$algo" --rate 3/h --algo "$algo"
  assert_eq "$ERR" "" "no note in JSON mode"
  assert_eq "$(json_field "$OUT" allowed)" false
  retry=$(json_field "$OUT" retry_after_ms)
  [ "$retry" -gt 0 ] && [ "$retry" -le 3600000 ] || fail "retry_after_ms $retry ($algo)"
done
pass "JSON output has the five SPEC fields for every algorithm"

# status reports what is left now, without consuming (exit 0 while a check would pass)
for i in 1 2 3 4 5; do
  expect 0 "$RCOORD" limit status peek --rate 3/h
  assert_contains "$OUT" "remaining: 3"
done
expect 0 "$RCOORD" limit check peek --rate 3/h --cost 3
expect 1 "$RCOORD" limit status peek --rate 3/h
assert_contains "$OUT" "remaining: 0"
assert_eq "$ERR" "" "status prints no note: its output says it"
pass "limit status looks without consuming"

# a cost above the burst: denied, never allowed, nothing consumed
expect 1 "$RCOORD" limit check big --rate 5/s --cost 6
assert_contains "$OUT" "retry_after_ms: -1"
assert_contains "$ERR" "never allows cost 6: it exceeds the burst 5"
expect 1 "$RCOORD" limit wait big --rate 5/s --cost 6 --wait forever
expect 0 "$RCOORD" limit status big --rate 5/s
assert_contains "$OUT" "remaining: 5"
expect 0 "$RCOORD" limit check big --rate 5/s --burst 6 --cost 6
pass "--cost above --burst is denied at once and consumes nothing"

# reset: 0 when there was state, 1 when there was none
expect 0 "$RCOORD" limit reset deploys
assert_eq "$OUT" reset
expect 0 "$RCOORD" limit check deploys --rate 2/h
expect 0 "$RCOORD" --json limit reset deploys
assert_eq "$OUT" '{"reset":true,"name":"deploys","key":"deploys"}'
expect 1 "$RCOORD" limit reset deploys
assert_contains "$ERR" "had no state"
pass "limit reset deletes the state"

# usage errors: exit 2, one line naming the problem, before any network traffic
bad_url="redis://127.0.0.1:$(free_port)"
check_usage() {
  expect 2 "$RCOORD" --url "$bad_url" limit "$@"
  assert_lines "$ERR" 1 "one-line error for: $*"
}
check_usage check k --rate 5
assert_contains "$ERR" "bad --rate '5'"
check_usage check k --rate 0/s
assert_contains "$ERR" "--rate must allow at least 1"
check_usage check k --rate -3/s
check_usage check k --rate 5/x
check_usage check k
check_usage check k --rate 5/s --burst 0
check_usage check k --rate 5/s --burst -2
check_usage check k --rate 5/s --burst 99999999999999999999999
check_usage check k --rate 5/h --burst 9999999999
assert_contains "$ERR" "too large"
check_usage check k --rate 999999999999999/s
assert_contains "$ERR" "give --burst explicitly"
check_usage check k --rate 5/s --cost 0
check_usage check k --rate 5/s --cost -1
check_usage check k --rate 5/s --cost abc
check_usage check k --rate 5/s --algo leaky
assert_contains "$ERR" "gcra, token-bucket, sliding-window or fixed-window"
check_usage check k --rate 5/s --algo sliding-window --burst 2000000
check_usage wait k --rate 5/s --wait soon
check_usage check "" --rate 5/s
check_usage reset
pass "bad rates, bursts, costs and algorithms are usage errors (exit 2)"

# huge but exact values work
expect 0 "$RCOORD" limit check huge --rate 999999999999999/s --burst 1000000
expect 0 "$RCOORD" limit check slow --rate 1/87600h
assert_contains "$OUT" "reset_after_ms: 315360000000"
expect 0 "$RCOORD" limit check wide --rate 1000000/s --burst 1000000000000 --cost 999999999999
assert_contains "$OUT" "remaining: 1"
pass "very large rates and bursts give exact answers"

# keys of another type, or of another algorithm, are refused and left alone (exit 4)
redis-cli -p "$R_PORT" SET 'rcoord:{limit:taken}' precious >/dev/null
for algo in gcra token-bucket sliding-window fixed-window; do
  expect 4 "$RCOORD" limit check taken --rate 1/s --algo "$algo"
  assert_contains "$ERR" "rcoord:{limit:taken}"
done
expect 4 "$RCOORD" limit status taken --rate 1/s
expect 4 "$RCOORD" limit reset taken
assert_eq "$(redis-cli -p "$R_PORT" GET 'rcoord:{limit:taken}')" precious
redis-cli -p "$R_PORT" SET 'rcoord:{limit:logged}:log' x >/dev/null
expect 4 "$RCOORD" limit check logged --rate 1/s --algo sliding-window
# a slow rate: the gcra state must outlive the second check on a busy machine
expect 0 "$RCOORD" limit check mixed --rate 1/h
expect 4 "$RCOORD" limit check mixed --rate 1/h --algo fixed-window
assert_contains "$ERR" "holds an rcoord gcra limit"
pass "foreign keys and other algorithms' state exit 4 and are not overwritten"

# the key layout of rcoord-limit(1), with a TTL on every key (slow rates: the state must
# outlive a sanitized run on a busy machine)
expect 0 "$RCOORD" limit check lay --rate 10/m --algo sliding-window
assert_eq "$(redis-cli -p "$R_PORT" HGET 'rcoord:{limit:lay}' algo)" sliding-window
assert_eq "$(redis-cli -p "$R_PORT" ZCARD 'rcoord:{limit:lay}:log')" 1
ttl=$(redis-cli -p "$R_PORT" PTTL 'rcoord:{limit:lay}:log')
[ "$ttl" -gt 0 ] && [ "$ttl" -le 60002 ] || fail "log TTL $ttl"
expect 0 "$RCOORD" --prefix app: limit check lay --rate 10/h
assert_eq "$(redis-cli -p "$R_PORT" HGET 'app:{limit:lay}' algo)" gcra
ttl=$(redis-cli -p "$R_PORT" PTTL 'app:{limit:lay}')
[ "$ttl" -gt 0 ] && [ "$ttl" -le 360002 ] || fail "state TTL $ttl"
# idle state expires by itself once the limit is full again (1 s at 1/s), not before: the
# clock starts before the first check, so the state cannot be seen gone sooner than 1 s on
gone() { [ "$(redis-cli -p "$R_PORT" EXISTS 'rcoord:{limit:idle}' 'rcoord:{limit:idle}:log' 'app:{limit:idle}')" = 0 ]; }
checked=$(now_ms)
expect 0 "$RCOORD" limit check idle --rate 1/s --algo sliding-window
expect 0 "$RCOORD" --prefix app: limit check idle --rate 1/s
wait_until 5 gone || fail "idle state did not expire"
took=$(($(now_ms) - checked))
[ "$took" -ge 990 ] || fail "the state was gone ${took}ms after the checks, before the limit was full"
pass "keys are <prefix>{limit:KEY} (+ :log) and expire by themselves when idle"

# Redis unreachable: exit 3
expect 3 "$RCOORD" --url "$bad_url" --timeout 500ms limit check k --rate 1/s
pass "an unreachable server is exit 3"
