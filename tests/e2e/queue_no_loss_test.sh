# No message lost: 4 producers push 5,000 numbered messages in all while 4 `queue consume`
# workers handle them with a command that fails 10% of the time at random, and the workers
# are killed with SIGKILL at random and restarted. At the end every message was handled and
# acked, none is left anywhere, and a message was handled again only after a failure or after
# the worker that had it was killed.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# 5,000 messages in the full proof; the passes that run it again at a lower effort (the
# sanitized build, the server matrix) push fewer, in whole batches of 40 (4 producers x 10).
TOTAL=$(($(effort 125) * 40))
PRODUCERS=4
WORKERS=4
export LOG=$TEST_TMP/handled.log
KILLED=$TEST_TMP/killed
: >"$LOG"
: >"$KILLED"

# The command: logs "number id attempt worker-pid outcome"; 10% of runs fail.
cat >"$TEST_TMP/handle.sh" <<'SH'
msg=$(cat)
if [ $((RANDOM % 10)) -eq 0 ]; then
  echo "$msg $RCOORD_MESSAGE_ID $RCOORD_ATTEMPT $WORKER fail" >>"$LOG"
  exit 1
fi
echo "$msg $RCOORD_MESSAGE_ID $RCOORD_ATTEMPT $WORKER ok" >>"$LOG"
SH

worker_pids=()
# WORKER is the consumer's pid (the subshell execs it), for the command's log: $PPID would
# be 1 in a command that outlives its killed consumer.
start_worker() {
  (
    export WORKER=$BASHPID
    exec "$RCOORD" queue consume nums --ack-timeout 4s --max-attempts 1000 -- \
      bash "$TEST_TMP/handle.sh" 2>>"$TEST_TMP/workers.err"
  ) &
  worker_pids[$1]=$!
  track $!
}
for w in $(seq 0 $((WORKERS - 1))); do start_worker "$w"; done

# Producers: each pushes its share in batches, a little at a time, while workers consume.
per=$((TOTAL / PRODUCERS))
# The history of the pushes (tests/e2e/history_check.py), a file per producer: `pushes TYPE FROM
# TO` writes an invoke before a batch, and an ok once `queue push` said it was stored.
pushes() {
  seq "$2" "$3" | awk -v t="$(date +%s%N)" -v p="$BASHPID" -v type="$1" \
    '{ printf "{\"t\":%s,\"p\":\"%s\",\"type\":\"%s\",\"f\":\"push\",\"obj\":\"nums\",\"id\":%s}\n", t, p, type, $1 }'
}
producer_pids=()
for p in $(seq 0 $((PRODUCERS - 1))); do
  (
    first=$((p * per + 1))
    for batch in $(seq 0 9); do
      from=$((first + batch * per / 10))
      to=$((from + per / 10 - 1))
      pushes invoke "$from" "$to" >>"$TEST_TMP/pushes-$p.jsonl"
      if seq "$from" "$to" | "$RCOORD" queue push nums >/dev/null; then
        pushes ok "$from" "$to" >>"$TEST_TMP/pushes-$p.jsonl"
      else
        echo "producer $p failed" >>"$TEST_TMP/errors"
      fi
      sleep 0.$((RANDOM % 5))
    done
  ) &
  producer_pids+=($!)
done

# Kill workers at random (SIGKILL: no chance to clean up) and restart them, while the
# producers work and for a while after.
start=$(now_ms)
kills=0
while [ $(($(now_ms) - start)) -lt $(($(effort 12) * 1000)) ]; do
  sleep 0.$((2 + RANDOM % 6))
  w=$((RANDOM % WORKERS))
  kill -9 "${worker_pids[$w]}" 2>/dev/null || true
  wait "${worker_pids[$w]}" 2>/dev/null || true
  echo "${worker_pids[$w]}" >>"$KILLED"
  kills=$((kills + 1))
  start_worker "$w"
done
for p in "${producer_pids[@]}"; do wait "$p"; done
[ ! -s "$TEST_TMP/errors" ] || fail "$(cat "$TEST_TMP/errors")"

# Let the survivors finish everything. How long that takes depends on the machine (each
# message starts a process), so there is no time limit on the whole: the wait goes on as long
# as messages keep being finished, and fails only when none has been for 30 s (scaled). A
# killed worker's messages are back after their 4 s lease, so 30 s without progress means
# something is stuck.
left() { "$RCOORD" --json queue stats nums | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(s["ready"] + s["delayed"] + s["in_flight"] + s["dead"])'; }
stall_ms=$(scaled 30000)
remaining=$(left)
progress_at=$(now_ms)
while [ "$remaining" -gt 0 ]; do
  sleep 0.5
  now=$(left)
  if [ "$now" -lt "$remaining" ]; then
    remaining=$now
    progress_at=$(now_ms)
  elif [ $(($(now_ms) - progress_at)) -gt "$stall_ms" ]; then
    fail "not drained, and no progress for ${stall_ms}ms: $("$RCOORD" queue stats nums | tr '\n' ' ')"
  fi
done
took=$(($(now_ms) - start))

# Workers stop on SIGTERM, at once when idle, with exit 0.
for w in $(seq 0 $((WORKERS - 1))); do kill -TERM "${worker_pids[$w]}"; done
for w in $(seq 0 $((WORKERS - 1))); do
  wait "${worker_pids[$w]}" || fail "worker ${worker_pids[$w]} exited $? on SIGTERM"
done
assert_eq "$(redis-cli -p "$R_PORT" EXISTS 'rcoord:{queue:nums}' 'rcoord:{queue:nums}:attempts')" 0 \
  "message data left behind"

# every push acknowledged was completed at least once, and nothing completed was never pushed
# (the handler's log has no times, and the queue model reads none: the line number stands in)
awk '$5 == "ok" { printf "{\"t\":%d,\"p\":\"%s\",\"type\":\"ok\",\"f\":\"complete\",\"obj\":\"nums\",\"id\":%s}\n", NR, $4, $1 }' \
  "$LOG" >"$TEST_TMP/completions.jsonl"
check_history queue "$TEST_TMP"/pushes-*.jsonl "$TEST_TMP/completions.jsonl"
python3 - "$LOG" "$KILLED" "$TOTAL" <<'PY' >"$TEST_TMP/verdict" || fail "$(cat "$TEST_TMP/verdict")"
import collections, sys
log, killed_file, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
killed = set(open(killed_file).read().split())
runs = collections.defaultdict(list)
for line in open(log):
    number, msg_id, attempt, pid, outcome = line.split()
    runs[int(number)].append((int(attempt), pid, outcome, msg_id))
problems, extra, failures = [], 0, 0
unknown = set(runs) - set(range(1, total + 1))
if unknown:
    problems.append(f"messages never pushed: {sorted(unknown)[:5]}")
for n in range(1, total + 1):
    r = sorted(runs.get(n, []))
    if not any(o == "ok" for _, _, o, _ in r):
        problems.append(f"{n}: never handled successfully: {r}")
        continue
    if len({a for a, _, _, _ in r}) != len(r):
        problems.append(f"{n}: one delivery ran twice: {r}")
    if len({i for _, _, _, i in r}) != 1:
        problems.append(f"{n}: its id changed: {r}")
    # Every run but the last must have failed, or its worker must have been killed.
    for attempt, pid, outcome, _ in r[:-1]:
        if outcome == "ok" and pid not in killed:
            problems.append(f"{n}: handled again after attempt {attempt} succeeded in live worker {pid}: {r}")
    extra += len(r) - 1
    failures += sum(1 for _, _, o, _ in r if o == "fail")
if problems:
    print("\n".join(problems[:20]))
    sys.exit(1)
print(f"{total} messages handled, {extra} extra runs ({failures} after failures)")
PY
pass "$(cat "$TEST_TMP/verdict"), $kills workers killed -9 and restarted, drained in ${took}ms"
if grep -qE "lease was gone|was lost" "$TEST_TMP/workers.err"; then
  fail "a worker lost a lease: $(grep -E "lease was gone|was lost" "$TEST_TMP/workers.err" | head -3)"
fi
pass "no live worker lost a lease"
