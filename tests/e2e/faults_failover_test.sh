# The short run of scripts/jepsen-failover (which docs/guarantees.md quotes in full): Sentinel
# failovers with --wait-replicas 0, 1 and auto-min (auto, with min-replicas-to-write set on the
# servers as rcoord doctor asks), while 8 processes contend for one lock. It checks what the
# docs claim: with 1 and auto-min no two holders ever overlap and no fence is reused; with
# every setting the fences increase in the real-time order of the holds and the fenced store
# takes no stale write (tests/e2e/history_check.py); without, overlaps are only measured (the
# table is printed). Each cut lasts 4 s rather than 6: a round waits for its failover whatever
# the length (up to 20 s), and what is checked does not depend on it; only the overlaps
# measured with 0 get shorter. One failover per setting (RCOORD_FAULT_ROUNDS for more). At a
# reduced effort (RCOORD_PROOF_EFFORT below 100: the sanitized pass, which looks for memory
# errors on the paths taken) only auto-min runs: its takes send the WAIT that 1 sends, and ROLE
# besides (0 sends neither), and each failover costs about 15 s whatever the setting.
root=$(cd "$(dirname "$0")/../.." && pwd)
modes="0 1 auto-min"
[ "${RCOORD_PROOF_EFFORT:-100}" -ge 100 ] || modes=auto-min
exec "$root/scripts/jepsen-failover" --failovers "${RCOORD_FAULT_ROUNDS:-1}" --partition 4 \
  --modes "$modes" --check
