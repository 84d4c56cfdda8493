# --watch on status/info verbs: one answer per refresh when stdout is not a terminal (JSON
# Lines with --json), redrawn in place on a terminal, ended by Ctrl-C with exit 0.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
set -m  # background jobs keep SIGINT (see signals_test.sh)

# has_lines FILE N: FILE holds at least N lines
has_lines() { [ "$(wc -l <"$1")" -ge "$2" ]; }

expect 0 "$RCOORD" lock acquire watched --ttl 10m
started=$(now_ms)
"$RCOORD" lock status watched --watch 200ms --json >"$TEST_TMP/watch.out" &
watcher=$!
track $watcher
wait_until 10 has_lines "$TEST_TMP/watch.out" 5 || fail "fewer than 5 refreshes: $(cat "$TEST_TMP/watch.out")"
kill -INT $watcher
code=0; wait $watcher || code=$?
took=$(($(now_ms) - started))
assert_eq "$code" 0 "Ctrl-C ends a watch normally"
# one answer per 200 ms at most: no more than the time allows (+1 for the first, +1 spare)
lines=$(wc -l <"$TEST_TMP/watch.out")
[ "$lines" -le $((took / 200 + 2)) ] || fail "$lines refreshes in ${took}ms with --watch 200ms"
first=$(head -1 "$TEST_TMP/watch.out")
last=$(tail -1 "$TEST_TMP/watch.out")
assert_eq "$(json_field "$first" held)" true
[ "$(json_field "$last" ttl_ms)" -lt "$(json_field "$first" ttl_ms)" ] || fail "the TTL did not count down"
pass "--watch 200ms --json: one line per refresh ($lines), exit 0 on Ctrl-C"

for verb in "sem status s" "limit status k --rate 5/s" "bloom info b" "queue stats q" \
  "elect status e" "latch status l"; do
  # Ctrl-C once two answers are out (the watch is under way, its handler in place)
  # shellcheck disable=SC2086
  "$RCOORD" $verb --watch 100ms >"$TEST_TMP/verb.out" 2>&1 &
  w=$!
  track $w
  wait_until 10 bash -c "[ \$(grep -c -- '--watch\|:' '$TEST_TMP/verb.out') -ge 2 ]" ||
    fail "$verb --watch printed nothing: $(cat "$TEST_TMP/verb.out")"
  kill -INT $w
  code=0; wait $w || code=$?
  assert_eq "$code" 0 "$verb --watch"
done
pass "every other status, info and stats verb takes --watch"

if command -v script >/dev/null; then
  # script(1) gives rcoord a terminal; Ctrl-C (to rcoord, script's child) after two answers
  script -qfec "exec '$RCOORD' lock status watched --watch 200ms" /dev/null \
    >"$TEST_TMP/tty.out" 2>&1 &
  tty_script=$!
  track $tty_script
  refreshed() { [ "$(grep -c 'held: true' "$TEST_TMP/tty.out")" -ge 2 ]; }
  wait_until 10 refreshed || fail "fewer than 2 refreshes on a terminal: $(cat -v "$TEST_TMP/tty.out")"
  pkill -INT -P "$tty_script" || true
  wait "$tty_script" || true
  grep -q $'\033\\[2J' "$TEST_TMP/tty.out" || fail "no in-place redraw on a terminal"
  pass "on a terminal the answer is redrawn in place"
fi

expect 2 "$RCOORD" lock status watched --watch soon
expect 2 "$RCOORD" lock status watched --watch 0
