# `limit wait` with real processes: waiters reserve distinct slots in arrival order and are
# not starved by a stream of checks; a slot beyond --wait consumes nothing; Ctrl-C exits
# 130 and gives the reservation back.
source "$(dirname "$0")/lib.sh"
set -m # background jobs must not start with SIGINT ignored
start_redis R
export RCOORD_URL=$R_URL

for algo in gcra token-bucket sliding-window fixed-window; do
  # Six waiters at once on 2/s, burst 1, after the burst was taken: each gets a slot of its
  # own, and they finish one slot (500 ms) after another.
  key="queue-$algo"
  start=$(now_ms) # before the check that takes the burst: every slot is later than this
  expect 0 "$RCOORD" limit check "$key" --rate 2/s --burst 1 --algo "$algo"
  pids=()
  for w in 1 2 3 4 5 6; do
    (
      "$RCOORD" -q limit wait "$key" --rate 2/s --burst 1 --algo "$algo" --wait 10s ||
        echo "waiter exited $?" >>"$TEST_TMP/errors"
      now_ms >"$TEST_TMP/done.$w"
    ) &
    pids+=($!)
  done
  # once slots are reserved far ahead, a check finds them taken
  ahead() {
    { "$RCOORD" --json limit status "$key" --rate 2/s --burst 1 --algo "$algo" || true; } |
      python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["retry_after_ms"] < 1200)'
  }
  wait_until 10 ahead || fail "$algo: the waiters reserved nothing"
  expect 1 "$RCOORD" limit check "$key" --rate 2/s --burst 1 --algo "$algo"
  for p in "${pids[@]}"; do wait "$p"; done
  [ ! -s "$TEST_TMP/errors" ] || fail "$algo: $(cat "$TEST_TMP/errors")"
  done_at=$(cat "$TEST_TMP"/done.* | sort -n | tr '\n' ' ')
  python3 - "$algo" "$start" "$(scaled 8000)" $done_at <<'PY' || fail "$algo: started at $start, done at $done_at"
import sys
algo, start, bound = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
done = [int(t) for t in sys.argv[4:]]
# Six distinct slots 500 ms apart after the one the check took: the k-th waiter to finish
# cannot be done before the k-th slot (each is done no earlier than its own slot), however
# late any of them wakes. A fixed window may begin before the check, so its slots can come
# one interval sooner. (5 ms for rounding to milliseconds.)
first = 0 if algo == "fixed-window" else 1
for k, t in enumerate(done):
    assert t - start >= 500 * (k + first) - 5, f"waiter {k + 1} done {t - start}ms after the start"
assert done[-1] - start < bound, done
PY
  spread=$(python3 -c 'import sys; t=[int(x) for x in sys.argv[1:]]; print(" ".join(str(x - t[0]) for x in t))' $done_at)
  pass "$algo: six concurrent waiters finished one slot after another (+$spread ms)"

  # A stream of checks does not starve a waiter: its slot is reserved in the state. The two
  # checkers hammer until told to stop; the waiters come once both have checked at least once.
  key="starve-$algo"
  rm -f "$TEST_TMP/stop-hammer" "$TEST_TMP"/hammering.*
  hammer() {
    while [ ! -e "$TEST_TMP/stop-hammer" ]; do
      "$RCOORD" -q limit check "$key" --rate 10/s --burst 1 --algo "$algo" || true
      touch "$TEST_TMP/hammering.$1"
    done
  }
  hammer 1 &
  h1=$!
  hammer 2 &
  h2=$!
  wait_until 10 test -e "$TEST_TMP/hammering.1" -a -e "$TEST_TMP/hammering.2" ||
    fail "$algo: the checkers did not start"
  all=""
  for i in 1 2 3 4; do
    expect 0 "$RCOORD" --json limit wait "$key" --rate 10/s --burst 1 --algo "$algo" --wait 1s
    waited=$(json_field "$OUT" waited_ms)
    [ "$waited" -le "$(scaled 400)" ] || fail "$algo: a waiter waited ${waited}ms beside the checkers"
    all="$all $waited"
  done
  touch "$TEST_TMP/stop-hammer"
  wait $h1 $h2
  pass "$algo: waiters beside two hammering checkers got their slots in$all ms"

  # Beyond --wait: exit 1 at once, nothing consumed.
  key="far-$algo"
  expect 0 "$RCOORD" limit check "$key" --rate 1/h --algo "$algo"
  expect 1 "$RCOORD" limit status "$key" --rate 1/h --algo "$algo"
  before=$(echo "$OUT" | sed -n 's/^retry_after_ms: //p')
  t0=$(now_ms)
  expect 1 "$RCOORD" limit wait "$key" --rate 1/h --algo "$algo" --wait 1m
  [ $(($(now_ms) - t0)) -lt "$(scaled 3000)" ] || fail "$algo: gave up only after sleeping"
  assert_contains "$ERR" "nothing was consumed"
  expect 1 "$RCOORD" limit status "$key" --rate 1/h --algo "$algo"
  after=$(echo "$OUT" | sed -n 's/^retry_after_ms: //p')
  [ "$after" -le "$before" ] || fail "$algo: retry_after_ms grew from $before to $after"
  pass "$algo: a slot beyond --wait is refused at once and consumes nothing"

  # Ctrl-C while waiting: exit 130, and the reserved slot is given back.
  key="intr-$algo"
  expect 0 "$RCOORD" limit check "$key" --rate 1/10s --algo "$algo"
  expect 1 "$RCOORD" --json limit status "$key" --rate 1/10s --algo "$algo"
  free_at=$(json_field "$OUT" retry_after_ms)
  "$RCOORD" limit wait "$key" --rate 1/10s --algo "$algo" --wait 1m 2>"$TEST_TMP/intr.err" &
  waiter=$!
  track $waiter
  wait_until 5 sh -c "\"$RCOORD\" --json limit status '$key' --rate 1/10s --algo '$algo' |
    python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)[\"retry_after_ms\"] < 15000)'" ||
    fail "$algo: the waiter did not reserve its slot"
  sent=$(now_ms)
  kill -INT $waiter
  code=0; wait $waiter || code=$?
  assert_eq "$code" 130 "$algo: exit code after Ctrl-C"
  [ $(($(now_ms) - sent)) -lt "$(scaled 3000)" ] || fail "$algo: Ctrl-C took too long"
  assert_contains "$(cat "$TEST_TMP/intr.err")" "given back"
  expect 1 "$RCOORD" --json limit status "$key" --rate 1/10s --algo "$algo"
  now_free=$(json_field "$OUT" retry_after_ms)
  [ "$now_free" -le "$free_at" ] || fail "$algo: slot not given back ($free_at -> $now_free ms)"
  pass "$algo: Ctrl-C while waiting exits 130 and gives the slot back"
done
