# Contention you can see (SPEC §6): the take scripts count, per lock, semaphore, election and
# gate, the takes, the calls that found it taken, the holds found lost and the waits in buckets,
# and `rcoord metrics` exports them as counters and a histogram. Proved with many real processes
# contending: the counts are exact, the waits the server counted agree with those the takers
# saw, a loss of any kind counts once, a Redlock's nodes each count their own, and the counts
# outlive the holds (a lock free between its jobs) until rm.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
start_redis R
export RCOORD_URL=$R_URL

# figures FAMILY NAME: one object's samples of a counter or histogram family, from `metrics`
# text: `acquired busy lost count sum` for FAMILY lock|sem|elect|gate, and the buckets checked
# (cumulative, ending in +Inf = count).
cat >"$TEST_TMP/figures.py" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
kind, name = sys.argv[1], sys.argv[2]
samples = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        if s.labels.get("name") == name:
            samples.setdefault(s.name, []).append(s)
def one(metric):
    got = samples.get("rcoord_%s_%s" % (kind, metric), [])
    assert len(got) == 1, (metric, got)
    return got[0].value
buckets = [(s.labels["le"], s.value) for s in samples["rcoord_%s_wait_seconds_bucket" % kind]]
assert buckets[-1][0] == "+Inf", buckets
assert len(buckets) == 14 and buckets[0][0] == "0.005" and buckets[-2][0] == "60.0" or \
    buckets[-2][0] == "60", buckets
counts = [v for _, v in buckets]
assert counts == sorted(counts), ("buckets not cumulative", buckets)
count = one("wait_seconds_count")
assert counts[-1] == count, (buckets, count)
print("%d %d %d %d %.3f" % (one("acquired_total"), one("busy_total"), one("lost_total"), count,
                            one("wait_seconds_sum")))
PY
figures() {
  "$RCOORD" metrics >"$TEST_TMP/metrics.prom" || fail "metrics: exit $?"
  "$PY" "$TEST_TMP/figures.py" "$1" "$2" <"$TEST_TMP/metrics.prom" ||
    fail "no sound $1 figures of '$2': $(grep "name=\"$2\"" "$TEST_TMP/metrics.prom")"
}

# 8 processes x 5 takes of one lock, each waiting for it: every take is counted, and so is
# the wait the server saw, which agrees with what the takers saw: the server's lies inside
# the taker's (from its first busy answer to the take), short of it by round trips only (and
# each side rounds to the ms). Each take may wait 10 minutes: the 40 takes one after another
# took over 2 minutes under the sanitizers at a machine factor of 29x.
WORKERS=8
ROUNDS=5
pids=()
for w in $(seq "$WORKERS"); do
  (
    for _ in $(seq "$ROUNDS"); do
      out=$("$RCOORD" -o json lock acquire contended --ttl 10m --wait 10m)
      sleep 0.03
      "$RCOORD" lock release contended --token "$(json_field "$out" token)" >/dev/null
      json_field "$out" waited_ms >>"$TEST_TMP/waited.$w"
    done
  ) &
  track $!
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a worker failed"; done
read -r acquired busy lost count sum <<<"$(figures lock contended)"
assert_eq "$acquired" $((WORKERS * ROUNDS)) "takes counted"
assert_eq "$count" $((WORKERS * ROUNDS)) "waits in the histogram"
assert_eq "$lost" 0 "losses counted without a loss"
# A take that waited at all found the lock taken first; some waited long (8 at once).
long=$(cat "$TEST_TMP"/waited.* | awk '$1 > 100 { n++ } END { print n + 0 }')
client=$(cat "$TEST_TMP"/waited.* | awk '{ s += $1 } END { print s / 1000 }')
[ "$long" -ge 1 ] || fail "no take waited: no contention to count"
[ "$busy" -ge "$long" ] && [ "$busy" -le $((WORKERS * ROUNDS)) ] ||
  fail "busy_total $busy: not between the $long takes that waited over 100 ms and all takes"
"$PY" -c "import sys; s, c, n = map(float, sys.argv[1:]); sys.exit(not (s <= c + n * 0.003 and s >= c - n * 0.25))" \
  "$sum" "$client" $((WORKERS * ROUNDS)) ||
  fail "the server counted ${sum}s of waits, the takers saw ${client}s"
pass "$WORKERS processes x $ROUNDS takes: acquired $acquired, busy $busy, waits ${sum}s (takers saw ${client}s)"

# The counts outlive the hold: the lock is free (no object for ls), its figures are still
# exported; rm takes them with it.
redis-cli -p "$R_PORT" del 'rcoord:{lock:contended}:wake' >/dev/null # a last wake-up, for a minute
expect 1 "$RCOORD" ls contended
read -r acquired _ <<<"$(figures lock contended)"
assert_eq "$acquired" $((WORKERS * ROUNDS)) "takes counted once the lock is free"
expect 0 "$RCOORD" rm contended --type lock
"$RCOORD" metrics >"$TEST_TMP/metrics.prom"
grep -q 'name="contended"' "$TEST_TMP/metrics.prom" && fail "counts left after rm"
pass "the counts outlive the holds (the lock free, not listed), and go with rm"

# A semaphore of 2 permits, 6 processes x 3 takes waiting in line; readers of a shared lock.
pids=()
for _ in 1 2 3 4 5 6; do
  (
    for _ in 1 2 3; do
      "$RCOORD" sem run slots --limit 2 --wait 120s -- sleep 0.03 || exit 1
    done
  ) &
  track $!
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a sem worker failed"; done
read -r acquired busy lost count _ <<<"$(figures sem slots)"
assert_eq "$acquired $count $lost" "18 18 0" "sem: takes, waits, losses"
[ "$busy" -ge 1 ] && [ "$busy" -le 18 ] || fail "sem busy_total $busy with 6 takers of 2 permits"
"$RCOORD" lock acquire readers --shared --ttl 30s >/dev/null
"$RCOORD" lock acquire readers --shared --ttl 30s >/dev/null
expect 1 "$RCOORD" lock acquire readers --ttl 30s
read -r acquired busy _ <<<"$(figures lock readers)"
assert_eq "$acquired $busy" "2 1" "shared lock: two readers taken, a writer refused"
pass "sem: 6 processes x 3 takes of 2 permits counted ($busy busy); readers and a refused writer"

# Losses, each kind once: a lock broken, a semaphore's holders deleted, an election's leader
# hash deleted, under their run forms (which stop the command, exit 5).
rc "$RCOORD" lock run broken --ttl 60s -- sh -c "sleep 0.5; '$RCOORD' lock break broken >/dev/null; sleep 30"
assert_eq "$RC" 5 "lock run whose lock was broken"
rc "$RCOORD" sem run gone --limit 3 --ttl 60s -- sh -c "sleep 0.5; redis-cli -p $R_PORT del 'rcoord:{sem:gone}' >/dev/null; sleep 30"
assert_eq "$RC" 5 "sem run whose holders were deleted"
rc "$RCOORD" elect run vote --id a --ttl 60s -- sh -c "sleep 0.5; redis-cli -p $R_PORT del 'rcoord:{elect:vote}' >/dev/null; sleep 30"
assert_eq "$RC" 5 "elect run whose leadership was deleted"
read -r _ _ lost _ <<<"$(figures lock broken)"
assert_eq "$lost" 1 "lock lost_total"
read -r _ _ lost _ <<<"$(figures sem gone)"
assert_eq "$lost" 1 "sem lost_total"
read -r _ _ lost _ <<<"$(figures elect vote)"
assert_eq "$lost" 1 "elect lost_total"

# An election: one leader, a second candidate refused, then waiting until the first resigns.
"$RCOORD" elect campaign chair --id a --ttl 10m >/dev/null
expect 1 "$RCOORD" elect campaign chair --id b --ttl 30s
"$RCOORD" elect campaign chair --id c --ttl 30s --wait 10m >/dev/null &
candidate=$!
track "$candidate"
wait_blocked "$R_PORT" 1
quiet_period 300 # the waiter's wait is then at least 0.3 s, in the histogram's 0.5 bucket or above
"$RCOORD" elect resign chair --id a >/dev/null
wait "$candidate" || fail "the waiting candidate did not win"
read -r acquired busy _ count sum <<<"$(figures elect chair)"
assert_eq "$acquired $busy $count" "2 2 2" "elect: leaders, refused candidates, waits"
"$PY" -c "import sys; sys.exit(not float(sys.argv[1]) >= 0.3)" "$sum" ||
  fail "the candidate that waited over 0.3 s counted ${sum}s"
pass "losses counted once each (lock broken, sem and elect keys deleted); an election's takes and wait"

# Gates count as wholes, named by their parts in the global order: 6 processes x 3 runs of a
# gate of a lock and a 2-permit semaphore, each waiting: every take once, every call refused
# at most once however often it tried again, and the waits; a part broken under `gate run`
# is the gate's loss too. The counts outlive the gates' records (gone with their holds).
pids=()
for _ in 1 2 3 4 5 6; do
  (
    for _ in 1 2 3; do
      "$RCOORD" gate run --sem gs:2 --lock ga --wait 120s -- sleep 0.03 || exit 1
    done
  ) &
  track $!
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a gate worker failed"; done
read -r acquired busy lost count sum <<<"$(figures gate "lock:ga,sem:gs")"
assert_eq "$acquired $count $lost" "18 18 0" "gate: takes, waits, losses"
[ "$busy" -ge 1 ] && [ "$busy" -le 18 ] || fail "gate busy_total $busy for 18 calls that waited"
"$PY" -c "import sys; sys.exit(not float(sys.argv[1]) > 0)" "$sum" || fail "gate waits: ${sum}s"
gate_figures="$busy calls busy, waits ${sum}s"
# Its parts count their own takes too; a gate waiting through several of its retries (one a
# second) counts one busy call, for itself and for the part it waited on, and one take each.
read -r acquired _ <<<"$(figures lock ga)"
assert_eq "$acquired" 18 "the gates' lock part: takes"
# (leases and waits of minutes: a quiet period scales with the machine factor, to 63 s once)
held=$("$RCOORD" -o json lock acquire gw --ttl 10m)
"$RCOORD" gate acquire --lock gw --ttl 30s --wait 10m >"$TEST_TMP/gate.token" &
waiter=$!
track "$waiter"
quiet_period 2500 # two heartbeats or more: the waiting gate tries again at least twice
"$RCOORD" lock release gw --token "$(json_field "$held" token)" >/dev/null
wait "$waiter" || fail "the waiting gate did not take its lock"
expect 0 "$RCOORD" gate release --token "$(cat "$TEST_TMP/gate.token")"
read -r acquired busy _ <<<"$(figures gate "lock:gw")"
assert_eq "$acquired $busy" "1 1" "a gate that retried while it waited: takes, busy calls"
read -r acquired busy _ <<<"$(figures lock gw)"
assert_eq "$acquired $busy" "2 1" "its lock part: takes (the holder's, the gate's), busy calls"
rc "$RCOORD" gate run --lock gl --ttl 60s -- sh -c "sleep 0.5; '$RCOORD' lock break gl >/dev/null; sleep 30"
assert_eq "$RC" 5 "gate run whose lock part was broken"
read -r acquired _ lost _ <<<"$(figures gate "lock:gl")"
assert_eq "$acquired $lost" "1 1" "gate lost_total"
expect 1 "$RCOORD" ls --type gate # no gate listed: their holds ended, their counts stay
expect 0 "$RCOORD" rm --type gate "lock:gl"
"$RCOORD" metrics >"$TEST_TMP/metrics.prom"
grep -q 'name="lock:gl"' "$TEST_TMP/metrics.prom" && fail "a gate's counts left after rm"
read -r acquired _ <<<"$(figures gate "lock:ga,sem:gs")"
assert_eq "$acquired" 18 "another gate's counts, after rm of one"
pass "gates: 6 processes x 3 runs counted as wholes ($gate_figures); a waiting gate's retries not counted again, for it or its part; a loss once; rm by the parts' name"

# A Redlock over 3 servers: each node counts its own; a waiter's retries count busy once per
# node (its first try), however often it tries.
start_redis N2
start_redis N3
nodes=(--url "$R_URL" --url "$N2_URL" --url "$N3_URL")
first=$("$RCOORD" "${nodes[@]}" -o json lock acquire quorum --ttl 10m)
expect 1 "$RCOORD" "${nodes[@]}" lock acquire quorum --ttl 30s
"$RCOORD" "${nodes[@]}" lock acquire quorum --ttl 30s --wait 10m >/dev/null &
waiter=$!
track "$waiter"
quiet_period 1500 # the waiter tries again on its own at least once (it heartbeats each second)
"$RCOORD" "${nodes[@]}" lock release quorum --token "$(json_field "$first" token)" >/dev/null
wait "$waiter" || fail "the Redlock waiter did not take it"
# The waiter takes it once a quorum gave it back: the last node may still have been held.
takes=0
for url in "$R_URL" "$N2_URL" "$N3_URL"; do
  RCOORD_URL=$url
  read -r acquired busy _ <<<"$(figures lock quorum)"
  assert_eq "$busy" 2 "Redlock node $url: busy calls (the refused one, the waiter's first try)"
  [ "$acquired" -ge 1 ] && [ "$acquired" -le 2 ] || fail "Redlock node $url: $acquired takes"
  takes=$((takes + acquired))
done
[ "$takes" -ge 5 ] || fail "the nodes counted $takes takes: the waiter's quorum is missing"
pass "a Redlock: each node counts its own takes ($takes in all), and each busy call once"
