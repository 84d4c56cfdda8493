# Mutual exclusion on a Redlock: 8 concurrent `lock run` loops x 12 iterations over five
# independent redis-servers increment a counter file non-atomically (read, sleep, write).
# Any overlap loses an update, so the count must come out exact.
source "$(dirname "$0")/lib.sh"
for n in 1 2 3 4 5; do start_redis "N$n"; done
prove_mutual_exclusion 8 12 -u "$N1_URL" -u "$N2_URL" -u "$N3_URL" -u "$N4_URL" -u "$N5_URL"
pass "8 processes x 12 increments over 5 nodes = 96 exactly (${ME_TOOK}ms), lock free at the end"
