# Redis Cluster: every command of every primitive against a real 3-master cluster on
# loopback, with the objects spread over the masters and the seed URL on a node that owns
# few of them, so MOVED is followed; a slot in migration (ASK); ls and doctor on every
# master; and a slot left uncovered.
source "$(dirname "$0")/lib.sh"
set -m # background jobs keep SIGINT/SIGTERM default handling
start_cluster C
read -r M1 M2 M3 <<<"$C_PORTS"
export RCOORD_URL=$C_URL # the seed is M1
redis-cli -p "$M1" cluster nodes >"$TEST_TMP/nodes"

# name_on TYPE BASE PORT: the first name BASE-N whose object lives on the master on PORT.
name_on() {
  python3 - "$TEST_TMP/nodes" "$@" <<'PY'
import sys
nodes, typ, base, port = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xffff
    return crc
ranges = []
for line in open(nodes):
    f = line.split()
    if "master" not in f[2] or not f[1].split("@")[0].endswith(":" + port):
        continue
    for r in f[8:]:
        if r.startswith("["):
            continue
        lo, _, hi = r.partition("-")
        ranges.append((int(lo), int(hi or lo)))
for n in range(1, 1000):
    name = f"{base}-{n}"
    slot = crc16(f"{typ}:{name}".encode()) % 16384
    if any(lo <= slot <= hi for lo, hi in ranges):
        print(name)
        break
PY
}
# owner TYPE NAME: the port of the master that holds the object, as the cluster says.
owner() { port_of_key "$M1" "rcoord:{$1:$2}"; }

# --- lock ---------------------------------------------------------------------------------------
L2=$(name_on lock deploy "$M2")
L3=$(name_on lock deploy "$M3")
assert_eq "$(owner lock "$L2")" "$M2" "name_on agrees with CLUSTER KEYSLOT"
server=$(server_of "$M1")
expect 0 "$RCOORD" ping
assert_contains "$OUT" "mode: cluster"
assert_contains "$OUT" "server: $server"
assert_contains "$OUT" "nodes: 3"
for port in "$M1" "$M2" "$M3"; do assert_contains "$OUT" "node: 127.0.0.1:$port master rtt_us="; done
pass "ping reports the cluster mode and each master's round trip"

expect 0 "$RCOORD" lock acquire "$L2" --ttl 30s
tok=$OUT
expect 1 "$RCOORD" lock acquire "$L2"
expect 0 "$RCOORD" lock status "$L2"
assert_contains "$OUT" "token: $tok"
expect 0 "$RCOORD" lock extend "$L2" --token "$tok" --ttl 1m
expect 0 "$RCOORD" lock release "$L2" --token "$tok"
expect 1 "$RCOORD" lock status "$L2"
expect 0 "$RCOORD" lock acquire "$L3" --shared
expect 0 "$RCOORD" lock acquire "$L3" --shared
expect 0 "$RCOORD" --json lock status "$L3"
assert_eq "$(json_field "$OUT" readers)" 2
expect 0 "$RCOORD" lock break "$L3"
expect 1 "$RCOORD" lock status "$L3"
expect 0 "$RCOORD" lock run "$L3" -- sh -c 'test -n "$RCOORD_FENCE"'
expect 7 "$RCOORD" lock run "$L2" -- sh -c 'exit 7'
# A blocked waiter (BLPOP on the lock's node) is woken by the release.
expect 0 "$RCOORD" lock acquire "$L2" --ttl 10m
tok=$OUT
"$RCOORD" lock acquire "$L2" --wait 1m --ttl 10m >/dev/null & # (held until metrics below)
w=$!
track $w
wait_blocked "$M2" 1
# The waiter's connection to the lock's master named itself there (SPEC §5).
redis-cli -p "$M2" client list | grep " name=rcoord:lock-acquire:$L2 .* cmd=blpop " >/dev/null ||
  fail "no named waiter on the lock's master: $(redis-cli -p "$M2" client list)"
expect 0 "$RCOORD" lock release "$L2" --token "$tok"
wait $w || fail "the waiter on another master was not woken by the release"
pass "lock: acquire/status/extend/release/break/run, --shared, --wait on other masters"

# --- sem ----------------------------------------------------------------------------------------
S=$(name_on sem encoders "$M3")
expect 0 "$RCOORD" sem take "$S" --limit 2
t1=$OUT
# (leases that outlast the checks down to ls below on a slow machine: ls lists the semaphore
# only while a permit is held)
expect 0 "$RCOORD" sem take "$S" --limit 2 --ttl 10m
expect 1 "$RCOORD" sem take "$S" --limit 2
expect 0 "$RCOORD" --json sem status "$S"
assert_eq "$(json_field "$OUT" in_use)" 2
expect 0 "$RCOORD" sem refresh "$S" --token "$t1" --ttl 1m
"$RCOORD" sem take "$S" --limit 2 --wait 1m --ttl 10m >/dev/null &
w=$!
track $w
wait_blocked "$M3" 1
expect 0 "$RCOORD" sem release "$S" --token "$t1"
wait $w || fail "the sem waiter on another master was not woken by the release"
expect 1 "$RCOORD" sem run "$S" --limit 2 -- true
S2=$(name_on sem jobs "$M2")
expect 0 "$RCOORD" sem run "$S2" --limit 1 -- true
pass "sem: take/status/refresh/release/run, --wait woken on another master"

# --- limit --------------------------------------------------------------------------------------
port=("$M2" "$M3" "$M2" "$M3")
i=0
for algo in gcra token-bucket sliding-window fixed-window; do
  K=$(name_on limit "api-$algo" "${port[$i]}")
  i=$((i + 1))
  expect 0 "$RCOORD" limit check "$K" --rate 2/h --algo "$algo"
  expect 0 "$RCOORD" limit check "$K" --rate 2/h --algo "$algo"
  expect 1 "$RCOORD" limit check "$K" --rate 2/h --algo "$algo"
  expect 1 "$RCOORD" limit status "$K" --rate 2/h --algo "$algo"
  assert_contains "$OUT" "remaining: 0"
  expect 0 "$RCOORD" limit reset "$K"
  expect 0 "$RCOORD" limit check "$K" --rate 2/h --algo "$algo"
done
K=$(name_on limit waits "$M3")
expect 0 "$RCOORD" limit wait "$K" --rate 20/s --wait 5s
expect 0 "$RCOORD" limit wait "$K" --rate 20/s --wait 5s
pass "limit: check/status/reset with each algorithm, wait"

# --- bloom --------------------------------------------------------------------------------------
B=$(name_on bloom seen "$M2")
expect 0 "$RCOORD" bloom reserve "$B" --capacity 10000 --error-rate 0.001
expect 0 "$RCOORD" bloom add "$B" apple pear
seq 1 5000 | expect 0 "$RCOORD" bloom add "$B" --summary
expect 0 "$RCOORD" bloom test "$B" apple 4999
expect 1 "$RCOORD" bloom test "$B" plum
seq 1 3000 | expect 0 "$RCOORD" bloom test "$B" --summary
expect 0 "$RCOORD" --json bloom info "$B"
items=$(json_field "$OUT" items)
[ "$items" -ge 4990 ] && [ "$items" -le 5002 ] || fail "bloom items: $items"
pass "bloom: reserve/add (args, stdin)/test (args, stdin)/info on another master"

# --- pf -----------------------------------------------------------------------------------------
P1=$(name_on pf visitors "$M1")
P2=$(name_on pf visitors "$M2")
P3=$(name_on pf visitors "$M3")
PD=$(name_on pf total "$M3")
expect 0 "$RCOORD" pf add "$P1" a b c
expect 0 "$RCOORD" pf add "$P2" c d e f
# Past its first batch a large input goes as registers merged by a script (a scratch key
# beside the HyperLogLog, in its slot): it must run on the key's own master.
before=$(redis-cli -p "$M3" INFO commandstats | sed -n 's/^cmdstat_pfmerge:calls=\([0-9]*\).*/\1/p')
seq 1 50000 | expect 0 "$RCOORD" pf add "$P3"
after=$(redis-cli -p "$M3" INFO commandstats | sed -n 's/^cmdstat_pfmerge:calls=\([0-9]*\).*/\1/p')
[ "${after:-0}" -gt "${before:-0}" ] || fail "pf add of 50000 items merged no registers on M3"
expect 0 "$RCOORD" pf count "$P2"
assert_eq "$OUT" 4
expect 0 "$RCOORD" pf count "$P1" "$P2"
assert_eq "$OUT" 6 "pf count over two masters"
expect 0 "$RCOORD" pf count "$P3" "$P1" "$P2"
n=$OUT
[ "$n" -ge 49000 ] && [ "$n" -le 51000 ] || fail "pf count over three masters: $n"
expect 0 "$RCOORD" pf merge "$PD" "$P1" "$P2"
assert_eq "$OUT" 6 "pf merge from two masters into a third"
expect 0 "$RCOORD" pf count "$PD"
assert_eq "$OUT" 6
leftover=$(for p in $M1 $M2 $M3; do redis-cli -p "$p" --scan --pattern '*:merge:*'; done)
assert_eq "$leftover" "" "the temporary copies are gone"
leftover=$(for p in $M1 $M2 $M3; do redis-cli -p "$p" --scan --pattern '*:registers:*'; done)
assert_eq "$leftover" "" "no scratch key of pf add is left"
pass "pf: add (args, stdin), count and merge across masters"

# --- complete -----------------------------------------------------------------------------------
X=$(name_on complete cities "$M2")
expect 0 "$RCOORD" complete add "$X" Paris Prague Porto Berlin
expect 0 "$RCOORD" complete suggest "$X" pr
assert_eq "$OUT" "Prague"
expect 0 "$RCOORD" complete remove "$X" Prague
expect 1 "$RCOORD" complete suggest "$X" pr
R=$(name_on recent files "$M3")
expect 0 "$RCOORD" complete recent push "$R" notes.txt
expect 0 "$RCOORD" complete recent push "$R" news.md
expect 0 "$RCOORD" complete recent suggest "$R" n
assert_eq "$OUT" $'news.md\nnotes.txt'
pass "complete: add/suggest/remove, recent push/suggest"

# --- queue --------------------------------------------------------------------------------------
Q=$(name_on queue jobs "$M2")
expect 0 "$RCOORD" queue push "$Q" a b c
assert_eq "$OUT" 3
expect 0 "$RCOORD" queue len "$Q"
assert_eq "$OUT" 3
expect 0 "$RCOORD" queue peek "$Q" --count 2
expect 0 "$RCOORD" queue pop "$Q"
assert_eq "$OUT" a
expect 0 "$RCOORD" --json queue pop "$Q" --ack-timeout 30s
id=$(json_field "$OUT" id)
expect 0 "$RCOORD" queue nack "$Q" "$id"
expect 0 "$RCOORD" --json queue pop "$Q" --ack-timeout 30s
id=$(json_field "$OUT" id)
expect 0 "$RCOORD" queue ack "$Q" "$id"
expect 0 "$RCOORD" --json queue stats "$Q"
assert_eq "$(json_field "$OUT" in_flight)" 0
expect 0 "$RCOORD" queue pop "$Q" --wait 20s # the last of a b c
"$RCOORD" queue pop "$Q" --wait 1m >"$TEST_TMP/late.out" &
w=$!
track $w
wait_blocked "$M2" 1
expect 0 "$RCOORD" queue push "$Q" late
wait $w || fail "the blocked pop failed"
assert_eq "$(cat "$TEST_TMP/late.out")" late "a blocked pop is woken by a push"
Q2=$(name_on queue poison "$M3")
expect 0 "$RCOORD" queue push "$Q2" bad good
expect 0 "$RCOORD" queue consume "$Q2" --max-attempts 1 --idle-exit 300ms -- sh -c '[ "$(cat)" = good ]'
expect 0 "$RCOORD" --json queue dead "$Q2" --count 1
dead=$(json_field "$OUT" id)
expect 0 "$RCOORD" queue replay "$Q2" "$dead"
expect 0 "$RCOORD" queue len "$Q2"
assert_eq "$OUT" 1
expect 0 "$RCOORD" queue purge "$Q2"
expect 1 "$RCOORD" queue pop "$Q2"
pass "queue: push/pop/--ack-timeout/ack/nack/--wait/consume/len/peek/stats/dead/replay/purge"

# --- elect --------------------------------------------------------------------------------------
E=$(name_on elect svc "$M3")
"$RCOORD" elect observe "$E" --wait 5m >"$TEST_TMP/obs.txt" &
obs=$!
track $obs
subscribed() { [ "$(redis-cli -p "$M3" pubsub numsub "rcoord:{elect:$E}:changes" | tail -1)" = 1 ]; }
wait_until 5 subscribed || fail "the observer did not subscribe"
expect 0 "$RCOORD" elect campaign "$E" --id a --ttl 30s
expect 1 "$RCOORD" elect campaign "$E" --id b
expect 0 "$RCOORD" elect status "$E"
assert_contains "$OUT" a
expect 0 "$RCOORD" elect resign "$E" --id a
expect 0 "$RCOORD" elect run "$E" --id b -- true
# the changes so far: vacant, a, vacant, b, vacant
five_lines() { [ "$(grep -c '' "$TEST_TMP/obs.txt")" -ge 5 ]; }
wait_until 10 five_lines || fail "observe missed changes: $(cat "$TEST_TMP/obs.txt")"
kill -TERM $obs
wait $obs || true
assert_contains "$(cat "$TEST_TMP/obs.txt")" $'a\n' "observe (subscribed on the node of the election) saw a's term, announced on another master"
assert_contains "$(cat "$TEST_TMP/obs.txt")" "b" "observe saw b"
pass "elect: campaign/status/resign/run, observe across nodes"

# --- history: each object's log lives on its own master, found and followed there ----------
expect 0 "$RCOORD" history "$E"
assert_lines "$OUT" 4 "elected, resigned, elected, resigned"
assert_contains "$(sed -n 1p <<<"$OUT")" "elected"
assert_contains "$(sed -n 4p <<<"$OUT")" "resigned"
expect 0 "$RCOORD" -o json history "$Q2" --type queue
assert_contains "$OUT" '"event":"dead"'
assert_contains "$OUT" '"event":"replayed"'
assert_contains "$OUT" '"event":"purged"'
H=$(name_on lock hist "$M2")
"$RCOORD" history "$H" --type lock --follow --wait 20s >"$TEST_TMP/follow.txt" &
follower=$!
track $follower
wait_blocked "$M2" 1
expect 0 "$RCOORD" lock run "$H" -- true
wait_until 5 grep -q released "$TEST_TMP/follow.txt" || fail "--follow on a cluster: $(cat "$TEST_TMP/follow.txt")"
kill -INT $follower
wait $follower || fail "--follow ends with exit 0 on SIGINT"
pass "history: each object's log on its master; --follow there"

# --- signal -------------------------------------------------------------------------------------
C2=$(name_on signal deploys "$M2")
C3=$(name_on signal deploys "$M3")
"$RCOORD" signal wait "$C2" "$C3" --wait 20s >"$TEST_TMP/sig.out" &
w=$!
track $w
registered() { [ "$(redis-cli -p "$M3" zcard "rcoord:{signal:$C3}")" = 1 ]; }
wait_until 5 registered || fail "the waiter did not register"
expect 0 "$RCOORD" signal send "$C3" go
wait $w || fail "signal wait on two channels (two masters) failed"
assert_contains "$(cat "$TEST_TMP/sig.out")" go
for c in "$C2" "$C3"; do
  p=$(owner signal "$c")
  assert_eq "$(redis-cli -p "$p" zcard "rcoord:{signal:$c}")" 0 "the waiter left the registry of $c"
done
"$RCOORD" signal wait "$C2" "$C3" --all --wait 20s >"$TEST_TMP/all.out" &
w=$!
track $w
wait_until 5 registered || fail "the --all waiter did not register"
expect 0 "$RCOORD" signal send "$C2" one --one
expect 0 "$RCOORD" signal send "$C3" two
wait $w || fail "signal wait --all failed"
assert_contains "$(cat "$TEST_TMP/all.out")" two
pass "signal: send (--one), wait on channels of two masters (any, --all)"

# --- latch --------------------------------------------------------------------------------------
T=$(name_on latch ci "$M2")
expect 0 "$RCOORD" latch init "$T" --count 2
"$RCOORD" latch wait "$T" --wait 20s >/dev/null &
w=$!
track $w
expect 0 "$RCOORD" latch down "$T"
expect 0 "$RCOORD" latch status "$T"
expect 0 "$RCOORD" latch down "$T"
wait $w || fail "latch wait was not opened"
pass "latch: init/down/wait/status"

# --- ls, doctor ---------------------------------------------------------------------------------
L1=$(name_on lock deploy "$M1")
# (a lease that outlasts the checks below on a slow machine: metrics checks they are held)
"$RCOORD" lock acquire "$L1" --ttl 10m >/dev/null
"$RCOORD" lock acquire "$L3" --ttl 10m --note on-another-master >/dev/null &
taker=$!
wait $taker
# Who took it is kept on the lock's own master and read back through the seed.
expect 0 "$RCOORD" --json lock status "$L3"
assert_eq "$(json_field "$OUT" note) $(json_field "$OUT" pid)" "on-another-master $taker"
expect 0 "$RCOORD" ls --type lock
assert_contains "$OUT" "(pid $taker, lock acquire) for "
assert_contains "$OUT" "$L1"
assert_contains "$OUT" "$L2"
assert_contains "$OUT" "$L3"
expect 0 "$RCOORD" ls
for o in "$S" "$B" "$P3" "$Q" "$E" "$T" "$X"; do assert_contains "$OUT" "$o"; done
expect 0 "$RCOORD" --url "redis://127.0.0.1:$M2" --json ls "visitors-*"
assert_lines "$OUT" 3 "ls finds the pf keys of all three masters from any seed"
expect 0 "$RCOORD" doctor
for p in $M1 $M2 $M3; do assert_contains "$OUT" "ok    server: 127.0.0.1:$p: $server (cluster)"; done
assert_contains "$OUT" "ok    cluster: all 16384 slots are served"
expect 0 "$RCOORD" top --type lock
for l in "$L1" "$L2" "$L3"; do assert_contains "$OUT" "$l"; done
expect 0 "$RCOORD" metrics --type lock
for l in "$L1" "$L2" "$L3"; do assert_contains "$OUT" "rcoord_lock_held{name=\"$l\"} 1"; done
pass "ls, top, metrics and doctor cover every master"

# --- top in a terminal keeps its connections to the masters from one refresh to the next ------
# Each redis-cli call below is a connection too: they are counted and taken off (INFO counts
# the connection that asks).
connections() { redis-cli -p "$1" info stats | tr -d '\r' | sed -n 's/^total_connections_received://p'; }
scans() { redis-cli -p "$1" info commandstats | tr -d '\r' | sed -n 's/^cmdstat_scan:calls=\([0-9]*\),.*/\1/p'; }
polls=0
refreshed() { # ten refreshes or more: each SCANs every master
  polls=$((polls + 1))
  [ "$(($(scans "$M3") - scans3))" -ge 10 ]
}
for p in $M1 $M2 $M3; do eval "conns$p=$(connections "$p")"; done
scans3=$(scans "$M3")
tmux -S "$TEST_TMP/tmux.sock" -f /dev/null new-session -d -s top -x 120 -y 30 \
  "RCOORD_URL=$C_URL $RCOORD top --type lock --interval 100ms"
wait_until 30 refreshed || fail "top did not refresh 10 times"
tmux -S "$TEST_TMP/tmux.sock" kill-server
for p in $M1 $M2 $M3; do
  opened=$(($(connections "$p") - $(eval echo "\$conns$p") - 1))
  [ "$p" != "$M3" ] || opened=$((opened - polls - 1))
  # The seed's own connection and one per master (the seed is a master too).
  limit=1
  [ "$p" != "$M1" ] || limit=2
  [ "$opened" -le "$limit" ] || fail "top opened $opened connections to the master on $p in 10 refreshes"
done
pass "top over a cluster: 10 refreshes, each master connected once"

# --- limit, several rates (after ls: its objects are not expected there) ------------------------
# Every rate's keys share the limit's hash tag, so one script decides them all.
i=0
for algo in gcra token-bucket sliding-window fixed-window; do
  K=$(name_on limit "rates-$algo" "${port[$i]}")
  i=$((i + 1))
  expect 0 "$RCOORD" limit check "$K" --rate 2/m --rate 3/h --algo "$algo"
  expect 0 "$RCOORD" limit check "$K" --rate 2/m --rate 3/h --algo "$algo"
  expect 1 "$RCOORD" --json limit check "$K" --rate 2/m --rate 3/h --algo "$algo"
  assert_contains "$OUT" '{"rate":"2/m","allowed":false,'
  assert_contains "$OUT" '{"rate":"3/h","allowed":true,"limit":3,"remaining":1,'
  expect 1 "$RCOORD" limit status "$K" --rate 3/h --rate 2/m --algo "$algo"
  expect 0 "$RCOORD" limit reset "$K"
  expect 1 "$RCOORD" limit reset "$K"
  expect 0 "$RCOORD" limit wait "$K" --rate 1/200ms --rate 3/h --algo "$algo" --wait 5s
  expect 0 "$RCOORD" limit wait "$K" --rate 1/200ms --rate 3/h --algo "$algo" --wait 5s
done
pass "limit: several rates in one check on each master, with each algorithm"

# --- ASK: a slot in migration -------------------------------------------------------------------
# Keys of one slot are moved by hand from M2 to M3 while the slot is MIGRATING/IMPORTING.
# M2 gets a replica (M3 has none), for the WAIT after an ASK below.
id2=$(redis-cli -p "$M2" cluster myid)
start_redis rep --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000
redis-cli --cluster add-node "127.0.0.1:$rep_PORT" "127.0.0.1:$M2" --cluster-slave \
  --cluster-master-id "$id2" >"$TEST_TMP/add-node.log" 2>&1 || fail "add-node: $(cat "$TEST_TMP/add-node.log")"
wait_until 30 bash -c "redis-cli -p $rep_PORT info replication | grep -q 'master_link_status:up'" ||
  fail "the replica of M2 never synced"
A=$(name_on lock moving "$M2")
AP=$(name_on pf moving "$M2")
expect 0 "$RCOORD" lock acquire "$A" --ttl 1m
atok=$OUT
expect 0 "$RCOORD" pf add "$AP" a b c
slot=$(redis-cli -p "$M2" cluster keyslot "rcoord:{lock:$A}")
pslot=$(redis-cli -p "$M2" cluster keyslot "rcoord:{pf:$AP}")
id3=$(redis-cli -p "$M3" cluster myid)
for s in $slot $pslot; do
  redis-cli -p "$M3" cluster setslot "$s" importing "$id2" >/dev/null
  redis-cli -p "$M2" cluster setslot "$s" migrating "$id3" >/dev/null
  mapfile -t moving < <(redis-cli -p "$M2" cluster getkeysinslot "$s" 100)
  [ "${#moving[@]}" -ge 1 ] || fail "no keys in slot $s"
  redis-cli -p "$M2" migrate 127.0.0.1 "$M3" "" 0 5000 keys "${moving[@]}" >/dev/null
  assert_eq "$(redis-cli -p "$M2" cluster countkeysinslot "$s")" 0 "the keys of slot $s moved"
done
# A single-key command is answered ASK by M2 and served by M3 after ASKING.
expect 0 "$RCOORD" --url "redis://127.0.0.1:$M2" pf add "$AP" d e
expect 0 "$RCOORD" --url "redis://127.0.0.1:$M2" pf count "$AP"
assert_eq "$OUT" 5 "pf add and count through ASK"
# --wait-replicas: the WAIT goes to the node that took the write through ASK (M3, without a
# replica), not to the one that answered ASK (M2, whose replica has nothing to acknowledge).
expect 0 "$RCOORD" --url "redis://127.0.0.1:$M2" --wait-replicas 1 pf add "$(name_on pf other "$M2")" x
expect 3 "$RCOORD" --url "redis://127.0.0.1:$M2" --timeout 500ms --wait-replicas 1 pf add "$AP" f
assert_contains "$ERR" "only 0 of 1 replicas acknowledged the write to 127.0.0.1:$M3"
# A script over several keys, some of them absent, gets TRYAGAIN while the slot is split
# between two nodes (Redis cannot tell where absent keys are): retried, then exit 4.
expect 4 "$RCOORD" --url "redis://127.0.0.1:$M2" lock status "$A"
assert_contains "$ERR" "migration"
for s in $slot $pslot; do
  for p in $M1 $M2 $M3; do redis-cli -p "$p" cluster setslot "$s" node "$id3" >/dev/null; done
done
expect 0 "$RCOORD" --url "redis://127.0.0.1:$M2" lock status "$A"
assert_contains "$OUT" "token: $atok" "the lock moved with its slot, and MOVED leads to it"
expect 0 "$RCOORD" --url "redis://127.0.0.1:$M2" pf count "$AP"
assert_eq "$OUT" 6
redis-cli -p "$rep_PORT" shutdown nosave >/dev/null 2>&1 || true  # no failover of M2 below
pass "ASK: single-key commands on a slot in migration (WAIT on the node that served them); scripts wait for its end (TRYAGAIN)"

# --- a slot left uncovered ----------------------------------------------------------------------
slot1=$(redis-cli -p "$M1" cluster keyslot "rcoord:{lock:$L1}")
redis-cli -p "$M1" cluster delslots "$slot1" >/dev/null
expect 1 "$RCOORD" doctor
assert_contains "$OUT" "FAIL  cluster: master 127.0.0.1:$M1 sees cluster_state fail"
assert_contains "$OUT" "redis-cli --cluster fix"
expect 4 "$RCOORD" lock status "$L1"
assert_contains "$ERR" "cluster error"
pass "an uncovered slot: doctor exits 1 with the fix; a command on it exits 4"

# --- a master down: ls shows the objects of the others, then fails naming the one it missed ---
redis-cli -p "$M2" shutdown nosave >/dev/null 2>&1 || true
expect 3 "$RCOORD" --url "redis://127.0.0.1:$M1" ls --type lock
assert_contains "$OUT" "$L3"
case "$OUT" in *"$L2"*) fail "a lock of the stopped master was listed" ;; esac
assert_contains "$ERR" "1 of 3 cluster masters were not listed: cannot connect to 127.0.0.1:$M2"
assert_lines "$ERR" 1
expect 3 "$RCOORD" --url "redis://127.0.0.1:$M1" top --type lock
assert_contains "$OUT" "$L3"
case "$OUT" in *"$L2"*) fail "top showed a lock of the stopped master" ;; esac
assert_contains "$ERR" "1 of 3 cluster masters were not read: cannot connect to 127.0.0.1:$M2"
expect 3 "$RCOORD" --url "redis://127.0.0.1:$M1" metrics --type lock --textfile "$TEST_TMP/c.prom"
assert_contains "$(cat "$TEST_TMP/c.prom")" "rcoord_lock_held{name=\"$L3\"} 1"
case "$(cat "$TEST_TMP/c.prom")" in *"$L2"*) fail "metrics of the stopped master" ;; esac
assert_contains "$ERR" "1 of 3 cluster masters were not read: cannot connect to 127.0.0.1:$M2"
pass "a master down: ls, top and metrics show the other masters' objects and exit 3 naming it"
