# The short run of scripts/jepsen-failover (which docs/guarantees.md quotes in full): two
# Sentinel failovers without and two with --wait-replicas 1, while 8 processes contend for one
# lock. It checks what the docs claim: with --wait-replicas 1 no two holders ever overlap and
# no fence is reused; without, it only measures (the table is printed). Each cut lasts 4 s
# rather than 6: a round waits for its failover whatever the length (up to 20 s), and what is
# checked does not depend on it; only the overlaps measured without the option get shorter.
# A pass at a lower RCOORD_PROOF_EFFORT (tests/e2e/lib.sh's effort) runs one failover of each.
root=$(cd "$(dirname "$0")/../.." && pwd)
failovers=$(((2 * ${RCOORD_PROOF_EFFORT:-100} + 50) / 100))
[ "$failovers" -ge 1 ] || failovers=1
exec "$root/scripts/jepsen-failover" --failovers "${RCOORD_FAULT_ROUNDS:-$failovers}" --partition 4 --check
