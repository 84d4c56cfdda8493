# Mutual exclusion with real processes: 16 concurrent `lock run` loops × 25 iterations each
# increment a counter file non-atomically (read, sleep, write). Any overlap loses an update.
source "$(dirname "$0")/lib.sh"
start_redis R
prove_mutual_exclusion 16 25 --url "$R_URL"
pass "16 processes x 25 increments = 400 exactly (${ME_TOOK}ms), lock free at the end"
