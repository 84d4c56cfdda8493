# Mutual exclusion with real processes: 16 concurrent `lock run` loops × 25 iterations each
# increment a counter file non-atomically (read, sleep, write). Any overlap loses an update.
# (Fewer iterations at a lower effort: lib.sh.)
source "$(dirname "$0")/lib.sh"
start_redis R
rounds=$(effort 25)
prove_mutual_exclusion 16 "$rounds" --url "$R_URL"
pass "16 processes x $rounds increments = $((16 * rounds)) exactly (${ME_TOOK}ms), lock free at the end"
