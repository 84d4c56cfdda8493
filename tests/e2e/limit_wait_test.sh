# `limit wait` with real processes: waiters reserve distinct slots in arrival order and are
# not starved by a stream of checks; a slot beyond --max-wait consumes nothing; Ctrl-C exits
# 130 and gives the reservation back.
source "$(dirname "$0")/lib.sh"
set -m # background jobs must not start with SIGINT ignored
start_redis R
export RCOORD_URL=$R_URL

for algo in gcra token-bucket sliding-window fixed-window; do
  # Six waiters at once on 2/s, burst 1, after the burst was taken: each gets a slot of its
  # own, and they finish one slot (500 ms) after another.
  key="queue-$algo"
  expect 0 "$RCOORD" limit check "$key" --rate 2/s --burst 1 --algo "$algo"
  start=$(now_ms)
  pids=()
  for w in 1 2 3 4 5 6; do
    (
      "$RCOORD" -q limit wait "$key" --rate 2/s --burst 1 --algo "$algo" --max-wait 10s ||
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
  python3 - "$algo" "$start" $done_at <<'PY' || fail "$algo: started at $start, done at $done_at"
import sys
algo, start, done = sys.argv[1], int(sys.argv[2]), [int(t) for t in sys.argv[3:]]
# six allowed at 2/s: the last at least five slots after the first
assert done[-1] - done[0] >= 2250, done
if algo != "fixed-window":  # any two allowed are a full interval apart
    for a, b in zip(done, done[1:]):
        assert b - a >= 250, (a, b)
assert done[-1] - start < 8000, done
PY
  spread=$(python3 -c 'import sys; t=[int(x) for x in sys.argv[1:]]; print(" ".join(str(x - t[0]) for x in t))' $done_at)
  pass "$algo: six concurrent waiters finished one slot after another (+$spread ms)"

  # A stream of checks does not starve a waiter: its slot is reserved in the state.
  key="starve-$algo"
  stop=$(($(now_ms) + 1500))
  hammer() { while [ "$(now_ms)" -lt "$stop" ]; do "$RCOORD" -q limit check "$key" --rate 10/s --burst 1 --algo "$algo" || true; done; }
  hammer &
  h1=$!
  hammer &
  h2=$!
  sleep 0.3
  all=""
  for i in 1 2 3 4; do
    expect 0 "$RCOORD" --json limit wait "$key" --rate 10/s --burst 1 --algo "$algo" --max-wait 1s
    waited=$(json_field "$OUT" waited_ms)
    [ "$waited" -le "$(scaled 400)" ] || fail "$algo: a waiter waited ${waited}ms beside the checkers"
    all="$all $waited"
  done
  wait $h1 $h2
  pass "$algo: waiters beside two hammering checkers got their slots in$all ms"

  # Beyond --max-wait: exit 1 at once, nothing consumed.
  key="far-$algo"
  expect 0 "$RCOORD" limit check "$key" --rate 1/h --algo "$algo"
  expect 1 "$RCOORD" limit status "$key" --rate 1/h --algo "$algo"
  before=$(echo "$OUT" | sed -n 's/^retry_after_ms: //p')
  t0=$(now_ms)
  expect 1 "$RCOORD" limit wait "$key" --rate 1/h --algo "$algo" --max-wait 20s
  [ $(($(now_ms) - t0)) -lt 10000 ] || fail "$algo: gave up only after sleeping"
  assert_contains "$ERR" "nothing was consumed"
  expect 1 "$RCOORD" limit status "$key" --rate 1/h --algo "$algo"
  after=$(echo "$OUT" | sed -n 's/^retry_after_ms: //p')
  [ "$after" -le "$before" ] || fail "$algo: retry_after_ms grew from $before to $after"
  pass "$algo: a slot beyond --max-wait is refused at once and consumes nothing"

  # Ctrl-C while waiting: exit 130, and the reserved slot is given back.
  key="intr-$algo"
  expect 0 "$RCOORD" limit check "$key" --rate 1/10s --algo "$algo"
  expect 1 "$RCOORD" --json limit status "$key" --rate 1/10s --algo "$algo"
  free_at=$(json_field "$OUT" retry_after_ms)
  "$RCOORD" limit wait "$key" --rate 1/10s --algo "$algo" --max-wait 1m 2>"$TEST_TMP/intr.err" &
  waiter=$!
  track $waiter
  wait_until 5 sh -c "\"$RCOORD\" --json limit status '$key' --rate 1/10s --algo '$algo' |
    python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)[\"retry_after_ms\"] < 15000)'" ||
    fail "$algo: the waiter did not reserve its slot"
  sent=$(now_ms)
  kill -INT $waiter
  set +e
  wait $waiter
  code=$?
  set -e
  assert_eq "$code" 130 "$algo: exit code after Ctrl-C"
  [ $(($(now_ms) - sent)) -lt "$(scaled 3000)" ] || fail "$algo: Ctrl-C took too long"
  assert_contains "$(cat "$TEST_TMP/intr.err")" "given back"
  expect 1 "$RCOORD" --json limit status "$key" --rate 1/10s --algo "$algo"
  now_free=$(json_field "$OUT" retry_after_ms)
  [ "$now_free" -le "$free_at" ] || fail "$algo: slot not given back ($free_at -> $now_free ms)"
  pass "$algo: Ctrl-C while waiting exits 130 and gives the slot back"
done
