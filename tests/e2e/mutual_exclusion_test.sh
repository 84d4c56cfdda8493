# Mutual exclusion with real processes: 16 concurrent `lock run` loops × 25 iterations each
# increment a counter file non-atomically (read, sleep, write). Any overlap loses an update.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

counter="$TEST_TMP/counter"
echo 0 >"$counter"
cat >"$TEST_TMP/increment.sh" <<'SH'
n=$(cat "$1")
sleep 0.005
echo $((n + 1)) >"$1"
SH

worker() {
  local i
  for i in $(seq 1 25); do
    "$RCOORD" lock run counter --wait forever --ttl 10s -- sh "$TEST_TMP/increment.sh" "$counter" ||
      { echo "worker failed: $?" >>"$TEST_TMP/errors"; return 1; }
  done
}
start=$(now_ms)
pids=()
for w in $(seq 1 16); do
  worker &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
took=$(($(now_ms) - start))
[ ! -s "$TEST_TMP/errors" ] || fail "$(cat "$TEST_TMP/errors")"
assert_eq "$(cat "$counter")" 400 "16 x 25 increments under the lock"
expect 1 "$RCOORD" lock status counter
pass "16 processes x 25 increments = 400 exactly (${took}ms), lock free at the end"
