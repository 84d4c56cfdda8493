# Mutual exclusion on a Redlock: 8 concurrent `lock run` loops x 12 iterations over five
# independent redis-servers increment a counter file non-atomically (read, sleep, write).
# Any overlap loses an update, so the count must come out exact.
source "$(dirname "$0")/lib.sh"
for n in 1 2 3 4 5; do start_redis "N$n"; done
URLS=(-u "$N1_URL" -u "$N2_URL" -u "$N3_URL" -u "$N4_URL" -u "$N5_URL")

counter="$TEST_TMP/counter"
echo 0 >"$counter"
cat >"$TEST_TMP/increment.sh" <<'SH'
n=$(cat "$1")
sleep 0.005
echo $((n + 1)) >"$1"
SH

worker() {
  local i
  for i in $(seq 1 12); do
    "$RCOORD" "${URLS[@]}" lock run counter --wait forever --ttl 10s -- \
      sh "$TEST_TMP/increment.sh" "$counter" ||
      { echo "worker failed: $?" >>"$TEST_TMP/errors"; return 1; }
  done
}
start=$(now_ms)
pids=()
for w in $(seq 1 8); do
  worker &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
took=$(($(now_ms) - start))
[ ! -s "$TEST_TMP/errors" ] || fail "$(cat "$TEST_TMP/errors")"
assert_eq "$(cat "$counter")" 96 "8 x 12 increments under the Redlock"
expect 1 "$RCOORD" "${URLS[@]}" lock status counter
pass "8 processes x 12 increments over 5 nodes = 96 exactly (${took}ms), lock free at the end"
