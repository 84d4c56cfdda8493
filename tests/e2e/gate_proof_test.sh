# Gates under contention, with real processes: 12 workers each run `gate run` again and again,
# taking a random pair of 4 locks plus 1 permit of a 2-permit semaphore, waiting forever. Every
# run must complete (two gates never deadlock: a global deadline fails the test), no lock is
# ever held by two runs at once, and never more than 2 runs hold the semaphore (each command
# records enter/exit for each part it holds; history_check.py checks the lock and sem models
# per object). With RCOORD_TEST_CLUSTER=1 it runs on a 3-master cluster, whose parts are first
# checked to live on different masters.
source "$(dirname "$0")/lib.sh"
start_redis R
G=("$RCOORD" --url "$R_URL")
WORKERS=12
# On a cluster a gate's take costs a round trip per part, its renewals too: half the rounds
# there, which still takes every path of the ordered take many times over.
ROUNDS=$(effort 40)
[ "${RCOORD_TEST_CLUSTER:-}" != 1 ] || ROUNDS=$(effort 20)
LOCKS=(L0 L1 L2 L3)

if [ "${RCOORD_TEST_CLUSTER:-}" = 1 ]; then
  port=${R_PORTS%% *}
  masters=$(for k in L0 L1 L2 L3; do port_of_key "$port" "rcoord:{lock:$k}"; done
    port_of_key "$port" "rcoord:{sem:pool}")
  n=$(echo "$masters" | sort -u | grep -c .)
  [ "$n" -ge 2 ] || fail "the gate's parts all live on one master: $masters"
  echo "# the parts live on $n masters"
fi

HIST="$TEST_TMP/hist"
mkdir -p "$HIST"
# The command: enter every part it holds, stay a moment, exit them. Each record goes to the
# history of its own object (the checker reads one object per file).
# shellcheck disable=SC2016
printf '%s\n%s\n' "$RECORD_SH" '
d=$1; a=$2; b=$3
HISTORY=$d/$a.jsonl record enter "$a"
HISTORY=$d/$b.jsonl record enter "$b"
HISTORY=$d/pool.jsonl record enter pool
sleep 0.01
HISTORY=$d/pool.jsonl record exit pool
HISTORY=$d/$b.jsonl record exit "$b"
HISTORY=$d/$a.jsonl record exit "$a"
' >"$TEST_TMP/hold.sh"
: >"$TEST_TMP/errors"

gate_worker() {
  local i x y rc
  for i in $(seq 1 "$ROUNDS"); do
    x=$((RANDOM % 4))
    y=$(((x + 1 + RANDOM % 3) % 4))
    rc=0
    "${G[@]}" gate run --lock "${LOCKS[$x]}" --lock "${LOCKS[$y]}" --sem pool:2 \
      --wait forever --ttl 10s -- sh "$TEST_TMP/hold.sh" "$HIST" "${LOCKS[$x]}" "${LOCKS[$y]}" ||
      rc=$?
    [ "$rc" = 0 ] || { echo "worker $BASHPID round $i: gate run exited $rc" >>"$TEST_TMP/errors"; return 1; }
    echo >>"$TEST_TMP/done"
  done
}

start=$(now_ms)
pids=()
for _ in $(seq 1 "$WORKERS"); do
  gate_worker &
  pids+=($!)
  track "$!"
done
# No deadlock: every worker ends within a generous deadline (a run takes some 10-50 ms).
all_done() {
  local p
  for p in "${pids[@]}"; do alive "$p" && return 1; done
  return 0
}
wait_until 240 all_done ||
  fail "gates deadlocked or starved: $(grep -c '' "$TEST_TMP/done" 2>/dev/null || echo 0) of $((WORKERS * ROUNDS)) runs done"
for p in "${pids[@]}"; do wait "$p" || true; done
took=$(($(now_ms) - start))
[ ! -s "$TEST_TMP/errors" ] || fail "$(cat "$TEST_TMP/errors")"
assert_eq "$(grep -c '' "$TEST_TMP/done")" $((WORKERS * ROUNDS)) "every gate run completed"

holds=0
for k in "${LOCKS[@]}"; do
  [ -s "$HIST/$k.jsonl" ] || fail "lock $k was never taken"
  check_history lock "$HIST/$k.jsonl"
  holds=$((holds + $(grep -c '"f":"enter"' "$HIST/$k.jsonl")))
done
assert_eq "$holds" $((2 * WORKERS * ROUNDS)) "each run held two locks"
check_history sem:2 "$HIST/pool.jsonl"
# The semaphore was really contended: at some moment 2 runs held it at once (else the proof of
# "never more than 2" proves nothing).
python3 - "$HIST/pool.jsonl" <<'EOF' || fail "the semaphore never had 2 holders at once"
import json, sys
ev = sorted((json.loads(l)["t"], 1 if json.loads(l)["f"] == "enter" else -1)
            for l in open(sys.argv[1]) if l.strip())
inside = best = 0
for _, step in ev:
    inside += step
    best = max(best, inside)
sys.exit(0 if best == 2 else 1)
EOF
for k in "${LOCKS[@]}"; do expect 1 "${G[@]}" lock status "$k"; done
expect 1 "${G[@]}" sem status pool
pass "$WORKERS workers x $ROUNDS gate runs (${took}ms): no deadlock, no lock held twice, never more than 2 in the semaphore, all free at the end"
