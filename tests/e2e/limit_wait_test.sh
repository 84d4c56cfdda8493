# `limit wait` with real processes: waiters reserve distinct slots in arrival order and are
# not starved by a stream of checks; a slot beyond --max-wait consumes nothing; Ctrl-C exits
# 130 and gives the reservation back.
source "$(dirname "$0")/lib.sh"
set -m # background jobs must not start with SIGINT ignored
start_redis R
export RCOORD_URL=$R_URL

for algo in gcra token-bucket sliding-window fixed-window; do
  # Six waiters at once on 10/s, burst 1, after the burst was taken: six distinct slots,
  # 100 ms apart, none of them early.
  key="queue-$algo"
  expect 0 "$RCOORD" limit check "$key" --rate 10/s --burst 1 --algo "$algo"
  start=$(now_ms)
  pids=()
  for w in 1 2 3 4 5 6; do
    "$RCOORD" --json limit wait "$key" --rate 10/s --burst 1 --algo "$algo" --max-wait 5s \
      >"$TEST_TMP/w$w.json" &
    pids+=($!)
  done
  expect 1 "$RCOORD" limit check "$key" --rate 10/s --burst 1 --algo "$algo"
  for p in "${pids[@]}"; do wait "$p" || fail "$algo: a waiter exited $?"; done
  took=$(($(now_ms) - start))
  waits=$(for w in 1 2 3 4 5 6; do json_field "$(cat "$TEST_TMP/w$w.json")" waited_ms; done | sort -n)
  python3 - "$algo" $waits <<'PY' || fail "$algo: waits $waits"
import sys
algo, waits = sys.argv[1], [int(w) for w in sys.argv[2:]]
# slot k is due k * 100 ms after the first check (minus the start-up of the waiter)
assert waits[-1] >= 450, waits
for a, b in zip(waits, waits[1:]):
    assert b - a >= 60, (a, b)
PY
  [ "$took" -lt 3000 ] || fail "$algo: six waiters took ${took}ms"
  pass "$algo: six concurrent waiters got six distinct slots (${waits//$'\n'/ } ms)"

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
    [ "$waited" -le 400 ] || fail "$algo: a waiter waited ${waited}ms beside the checkers"
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
  expect 1 "$RCOORD" limit wait "$key" --rate 1/h --algo "$algo" --max-wait 2s
  [ $(($(now_ms) - t0)) -lt 1500 ] || fail "$algo: gave up only after sleeping"
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
  [ $(($(now_ms) - sent)) -lt 1000 ] || fail "$algo: Ctrl-C took too long"
  assert_contains "$(cat "$TEST_TMP/intr.err")" "given back"
  expect 1 "$RCOORD" --json limit status "$key" --rate 1/10s --algo "$algo"
  now_free=$(json_field "$OUT" retry_after_ms)
  [ "$now_free" -le "$free_at" ] || fail "$algo: slot not given back ($free_at -> $now_free ms)"
  pass "$algo: Ctrl-C while waiting exits 130 and gives the slot back"
done
