# 3% of the packets lost each way between every client and the server: 16 processes still
# exclude each other exactly (a counter incremented under `lock run`, no update lost), and no
# run is wrongly terminated: no exit 5 for the short runs, and three long runs (lock, sem,
# elect) renew through the loss for 10 s and end with their command's own code. A take whose
# connection cannot be made in time (a SYN lost twice) is exit 3 with nothing held; the
# workers take again.
source "$(dirname "$0")/faults_lib.sh"
start_redis R
export RCOORD_URL=$R_URL
fault_loss "$R_PORT" 3

WORKERS=16
ROUNDS=${RCOORD_FAULT_ROUNDS:-$(effort 12)}
counter="$TEST_TMP/counter"
echo 0 >"$counter"
printf 'n=$(cat "$1")\nsleep 0.005\necho $((n + 1)) >"$1"\n' >"$TEST_TMP/increment.sh"
: >"$TEST_TMP/errors"
: >"$TEST_TMP/retries"

# A lease of 6s and --timeout 1.5s: of the 2.5 s from each renewal's send to the stop point
# (6 - 2 - 1.5 s), the next renewal is left 1.5 s, three TCP resends of a lost packet (0.2 +
# 0.4 + 0.8 s); a connect survives one lost SYN (the retry comes after 1 s).
worker() {
  local i code
  for i in $(seq 1 "$ROUNDS"); do
    while :; do
      set +e
      "$RCOORD" --timeout 1500ms lock run counter --wait forever --ttl 6s -- \
        sh "$TEST_TMP/increment.sh" "$counter" 2>>"$TEST_TMP/worker-$1.err"
      code=$?
      set -e
      [ "$code" = 3 ] || break
      echo "worker $1: exit 3" >>"$TEST_TMP/retries" # nothing held: take again
    done
    [ "$code" = 0 ] || echo "worker $1 round $i: exit $code" >>"$TEST_TMP/errors"
  done
}

# The long runs hold a 12 s lease: the stop point comes 6.5 s (12 - 4 - 1.5) after a renewal
# and the next renewal is sent 3.25 s before it, so one whose reply is still lost when the
# 1.5 s timeout ends is sent again, on a new connection, 1 s later and before the stop point.
# With a 6 s lease one renewal had to get through within 1.5 s, and on a loaded machine the
# retransmission timer (it grows with the variance of the round trips) could spend that on two
# losses: now and then a long run was stopped.
# A long run whose take gets no reply in time (a request and its resend both lost, the
# resend timer grown on a loaded machine) exits 3 before its command starts, with nothing
# held: it takes again, as the workers do. Only an exit 3 before the command ran is taken
# again.
long_run() {
  local kind=$1 code
  shift
  while :; do
    code=0
    "$RCOORD" --timeout 1500ms "$@" -- sh -c 'touch "$0"; sleep 10; exit 7' \
      "$TEST_TMP/long-$kind.started" 2>"$TEST_TMP/long-$kind.err" || code=$?
    [ "$code" = 3 ] && [ ! -e "$TEST_TMP/long-$kind.started" ] || break
    echo "long $kind run: exit 3" >>"$TEST_TMP/retries"
  done
  echo "$code" >"$TEST_TMP/long-$kind.code"
}

start=$(now_ms)
pids=()
long_run lock lock run long --ttl 12s &
pids+=($!)
long_run sem sem run long --limit 1 --ttl 12s &
pids+=($!)
long_run elect elect run long --id me --ttl 12s &
pids+=($!)
for w in $(seq 1 $WORKERS); do
  worker "$w" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
took=$(($(now_ms) - start))

[ ! -s "$TEST_TMP/errors" ] || fail "runs ended badly under 3% loss: $(cat "$TEST_TMP/errors") $(cat "$TEST_TMP"/worker-*.err)"
assert_eq "$(cat "$counter")" $((WORKERS * ROUNDS)) "$WORKERS x $ROUNDS increments under the lock, 3% loss"
for kind in lock sem elect; do
  assert_eq "$(cat "$TEST_TMP/long-$kind.code")" 7 \
    "the long $kind run under 3% loss ($(cat "$TEST_TMP/long-$kind.err"))"
done
dropped=$(fault_dropped)
# The loss was applied: more than 3 drops a round (about 9 a round are usual; fewer rounds in a
# pass at a lower effort, lib.sh).
[ "$dropped" -gt $((3 * ROUNDS)) ] || fail "the loss rules dropped only $dropped packets"
fault_heal
expect 1 "$RCOORD" lock status counter
retries=$(grep -c . "$TEST_TMP/retries" || true)
pass "3% loss each way: $WORKERS x $ROUNDS = $((WORKERS * ROUNDS)) increments exactly, no run terminated, 3 long runs renewed through it ($dropped packets dropped, ${took}ms, $retries takes retried after exit 3)"
