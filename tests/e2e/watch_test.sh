# --watch on status/info verbs: one answer per refresh when stdout is not a terminal (JSON
# Lines with --json), redrawn in place on a terminal, ended by Ctrl-C with exit 0.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
set -m  # background jobs keep SIGINT (see signals_test.sh)

expect 0 "$RCOORD" lock acquire watched --ttl 30s
"$RCOORD" lock status watched --watch 200ms --json >"$TEST_TMP/watch.out" &
watcher=$!
track $watcher
sleep 1.1
kill -INT $watcher
set +e
wait $watcher
code=$?
set -e
assert_eq "$code" 0 "Ctrl-C ends a watch normally"
lines=$(wc -l <"$TEST_TMP/watch.out")
[ "$lines" -ge 4 ] && [ "$lines" -le 8 ] || fail "expected about 5 refreshes in 1.1s, got $lines"
first=$(head -1 "$TEST_TMP/watch.out")
last=$(tail -1 "$TEST_TMP/watch.out")
assert_eq "$(json_field "$first" held)" true
[ "$(json_field "$last" ttl_ms)" -lt "$(json_field "$first" ttl_ms)" ] || fail "the TTL did not count down"
pass "--watch 200ms --json: one line per refresh ($lines), exit 0 on Ctrl-C"

for verb in "sem status s" "limit status k --rate 5/s" "bloom info b" "queue stats q" \
  "elect status e" "latch status l"; do
  # shellcheck disable=SC2086
  "$RCOORD" $verb --watch 100ms >/dev/null 2>&1 &
  w=$!
  track $w
  sleep 0.4
  kill -INT $w
  set +e
  wait $w
  code=$?
  set -e
  assert_eq "$code" 0 "$verb --watch"
done
pass "every other status, info and stats verb takes --watch"

if command -v script >/dev/null; then
  script -qfec "timeout -s INT 0.7 '$RCOORD' lock status watched --watch 200ms" /dev/null \
    >"$TEST_TMP/tty.out" 2>&1 || true
  grep -q $'\033\\[2J' "$TEST_TMP/tty.out" || fail "no in-place redraw on a terminal"
  [ "$(grep -c 'held: true' "$TEST_TMP/tty.out")" -ge 2 ] || fail "fewer than 2 refreshes on a terminal"
  pass "on a terminal the answer is redrawn in place"
fi

expect 2 "$RCOORD" lock status watched --watch soon
expect 2 "$RCOORD" lock status watched --watch 0
