# signal and latch: exit codes, output shapes, the verb's --wait next to the global
# --timeout, and the proofs with real processes: --one wakes exactly one of five waiters, a
# broadcast all five, a dead waiter does not swallow --one, and a latch counted down by ten
# processes releases three waiters together, right after the last count-down.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

registered() { [ "$(redis-cli -p "$R_PORT" zcard "rcoord:{signal:$1}")" = "$2" ]; }
subscribed() { [ "$(redis-cli -p "$R_PORT" pubsub numsub "$1" | tail -1)" = "$2" ]; }
# listening CH N: N waiters' own channels of CH are subscribed
listening() { [ "$(redis-cli -p "$R_PORT" pubsub channels "rcoord:{signal:$1}:*" | grep -c .)" = "$2" ]; }
# finished DIR: how many waiters of DIR wrote their exit code
finished() { find "$1" -name '*.rc' | wc -l; }
finished_is() { [ "$(finished "$1")" -eq "$2" ]; }

# start_waiters DIR N ARGS...: N `signal wait ARGS` in the background, each writing
# DIR/i.out (stdout) and DIR/i.rc (exit code, then the time it ended)
start_waiters() {
  local dir=$1 n=$2 i
  shift 2
  mkdir -p "$dir"
  for i in $(seq 1 "$n"); do
    (
      set +e
      "$RCOORD" signal wait "$@" >"$dir/$i.out" 2>"$dir/$i.err"
      echo "$? $(now_ms)" >"$dir/$i.rc.tmp"
      mv "$dir/$i.rc.tmp" "$dir/$i.rc"
    ) &
    track $!
  done
}

# send: nobody waits
expect 1 "$RCOORD" signal send nobody hello
assert_eq "$OUT" 0
assert_contains "$ERR" "nobody waits on channel 'nobody'"
expect 1 "$RCOORD" --json signal send nobody hello --one
assert_eq "$(json_field "$OUT" receivers)" 0
assert_eq "$(json_field "$OUT" channel)" nobody
pass "send with nobody waiting: 0 receivers, exit 1"

# wait: the first message's data, exit 0; JSON
start_waiters "$TEST_TMP/basic" 1 ch --wait 10s
wait_until 10 registered ch 1 || fail "the waiter did not register"
expect 0 "$RCOORD" signal send ch 'hello world'
assert_eq "$OUT" 1
wait_until 10 finished_is "$TEST_TMP/basic" 1 || fail "the waiter did not return"
assert_eq "$(cut -d' ' -f1 "$TEST_TMP/basic/1.rc")" 0
assert_eq "$(cat "$TEST_TMP/basic/1.out")" 'hello world'
start_waiters "$TEST_TMP/json" 1 ch --wait 10s --json
wait_until 10 registered ch 1
expect 0 "$RCOORD" signal send ch data
wait_until 10 finished_is "$TEST_TMP/json" 1
assert_eq "$(cat "$TEST_TMP/json/1.out")" '{"received":true,"name":"ch","channel":"ch","data":"data"}'
pass "wait prints the message's data (text and JSON)"

# --wait after the verb, the global I/O --timeout before the group
start=$(now_ms)
expect 1 "$RCOORD" --timeout 300ms signal wait quiet --wait 1500ms
took=$(($(now_ms) - start))
[ "$took" -ge 1400 ] && [ "$took" -lt "$(scaled 3000)" ] || fail "wait --wait 1500ms took ${took}ms"
assert_contains "$ERR" "no signal on 'quiet' within 1500ms"
expect 1 "$RCOORD" --json signal wait q1 q2 --wait 200ms
assert_eq "$OUT" "$(printf '{"received":false,"name":"q1","channel":"q1"}\n{"received":false,"name":"q2","channel":"q2"}')"
start_redis P
kill -STOP "$P_PID"
start=$(now_ms)
expect 3 "$RCOORD" --url "$P_URL" --timeout 300ms signal wait ch --wait 10s
took=$(($(now_ms) - start))
[ "$took" -lt "$(scaled 2000)" ] || fail "a paused server took ${took}ms to detect with --timeout 300ms"
expect 3 "$RCOORD" --url "$P_URL" --timeout 300ms latch wait x --wait 10s
kill -CONT "$P_PID"
pass "the verb's --wait is the wait (${took}ms for a paused server under the global one)"

# usage errors and foreign keys
expect 2 "$RCOORD" signal wait
expect 2 "$RCOORD" signal send
expect 2 "$RCOORD" signal wait ch --wait soon
expect 2 "$RCOORD" signal wait '' --wait 1s
redis-cli -p "$R_PORT" set 'rcoord:{signal:str}' x >/dev/null
expect 4 "$RCOORD" signal wait str --wait 1s
assert_contains "$ERR" "not an rcoord signal"
expect 4 "$RCOORD" signal send str x --one
assert_eq "$(redis-cli -p "$R_PORT" get 'rcoord:{signal:str}')" x
pass "usage errors exit 2, a foreign key exits 4 and is left alone"

# --all: one message on every channel, one line each in the order given
start_waiters "$TEST_TMP/all" 1 a b --all --wait 10s
wait_until 10 registered b 1
expect 0 "$RCOORD" signal send b B
# A waiter returns within milliseconds of its message (the broadcast below is timed): an
# --all waiter that took one channel as enough would be done well within 200 ms.
quiet_period 200
[ "$(finished "$TEST_TMP/all")" -eq 0 ] || fail "--all returned after one channel"
expect 0 "$RCOORD" signal send a A
wait_until 10 finished_is "$TEST_TMP/all" 1
assert_eq "$(cat "$TEST_TMP/all/1.out")" "$(printf 'A\nB')"
# without --all: the first message on any of them
start_waiters "$TEST_TMP/any" 1 a b --wait 10s
wait_until 10 registered b 1
expect 0 "$RCOORD" signal send b first
wait_until 10 finished_is "$TEST_TMP/any" 1
assert_eq "$(cat "$TEST_TMP/any/1.out")" first
pass "wait on several channels: the first message, or --all one on each"

# ---- Proof: --one wakes exactly one of five waiters ----
start_waiters "$TEST_TMP/one" 5 go --wait 30s
wait_until 5 registered go 5 || fail "the five waiters did not register"
for round in 1 2 3 4 5; do
  expect 0 "$RCOORD" signal send go "message $round" --one
  assert_eq "$OUT" 1 "--one reports one receiver"
  wait_until 10 finished_is "$TEST_TMP/one" "$round" || fail "--one woke nobody in round $round"
  # a second waiter woken by the same message would return as soon as the first did: 300 ms
  # is many times what the first took
  quiet_period 300
  assert_eq "$(finished "$TEST_TMP/one")" "$round" "--one woke more than one waiter in round $round"
done
assert_eq "$(cat "$TEST_TMP"/one/*.out | sort | tr '\n' ,)" "message 1,message 2,message 3,message 4,message 5,"
expect 1 "$RCOORD" signal send go late --one
pass "--one with five waiters wakes exactly one, five times: each message to one waiter"

# counts are exact: after --one took one of three, a broadcast reaches the other two
start_waiters "$TEST_TMP/count" 3 cnt --wait 30s
wait_until 5 registered cnt 3 || fail "the three waiters did not register"
expect 0 "$RCOORD" signal send cnt first --one
expect 0 "$RCOORD" signal send cnt rest
assert_eq "$OUT" 2 "the broadcast counts the two waiters still waiting"
wait_until 10 finished_is "$TEST_TMP/count" 3 || fail "not all three returned"
assert_eq "$(cat "$TEST_TMP"/count/*.out | sort | tr '\n' ,)" "first,rest,rest,"
pass "receiver counts are exact: --one then a broadcast reach 1 + 2 of 3 waiters"

# ---- Proof: a broadcast wakes all five ----
start_waiters "$TEST_TMP/bcast" 5 all --wait 30s
wait_until 5 registered all 5 || fail "the five waiters did not register"
start=$(now_ms)
expect 0 "$RCOORD" signal send all everyone
assert_eq "$OUT" 5
wait_until 10 finished_is "$TEST_TMP/bcast" 5 || fail "the broadcast did not wake all five"
for i in 1 2 3 4 5; do
  assert_eq "$(cut -d' ' -f1 "$TEST_TMP/bcast/$i.rc")" 0
  assert_eq "$(cat "$TEST_TMP/bcast/$i.out")" everyone
done
pass "a broadcast wakes all five waiters ($(($(now_ms) - start))ms)"

# ---- Proof: waiters killed with kill -9 do not swallow --one ----
mkdir -p "$TEST_TMP/dead"
pids=()
for i in 1 2 3 4; do
  "$RCOORD" signal wait dead --wait 60s >/dev/null 2>&1 &
  pids+=($!)
  track $!
done
start_waiters "$TEST_TMP/live" 1 dead --wait 30s
wait_until 5 registered dead 5 || fail "the waiters did not register"
{
  kill -9 "${pids[@]}"
  for p in "${pids[@]}"; do wait "$p" || true; done
} 2>/dev/null
wait_until 10 listening dead 1 || fail "the server did not drop the dead connections"
registered dead 5 || fail "the dead waiters should still be registered"
expect 0 "$RCOORD" signal send dead 'for the living' --one
assert_eq "$OUT" 1
wait_until 10 finished_is "$TEST_TMP/live" 1 || fail "the live waiter did not get the message"
assert_eq "$(cat "$TEST_TMP/live/1.out")" 'for the living'
pass "four waiters killed with -9 and still registered: --one reaches the live one"

# ---- latch: exit codes and output ----
expect 1 "$RCOORD" latch status fan
assert_contains "$ERR" "there is no latch 'fan'"
expect 1 "$RCOORD" latch down fan
expect 1 "$RCOORD" --json latch status fan
assert_eq "$OUT" '{"name":"fan","count":null}'
expect 0 "$RCOORD" latch init fan --count 3 --ttl 1h
assert_eq "$OUT" 3
ttl=$(redis-cli -p "$R_PORT" pttl 'rcoord:{latch:fan}')
[ "$ttl" -gt 3500000 ] || fail "latch TTL is $ttl"
expect 1 "$RCOORD" latch init fan --count 9
assert_contains "$ERR" "exists already (count 3)"
expect 0 "$RCOORD" latch down fan
assert_eq "$OUT" 2
expect 0 "$RCOORD" --json latch down fan --by 5
assert_eq "$OUT" '{"name":"fan","count":0}'
expect 0 "$RCOORD" latch down fan
assert_eq "$OUT" 0 "never below zero"
expect 0 "$RCOORD" latch status fan
assert_eq "$OUT" "$(printf 'name: fan\ncount: 0')"
expect 0 "$RCOORD" latch wait fan
assert_eq "$OUT" ""
expect 0 "$RCOORD" --json latch wait fan
assert_eq "$(json_field "$OUT" open)" true
expect 2 "$RCOORD" latch init x
expect 2 "$RCOORD" latch init x --count -1
expect 2 "$RCOORD" latch down x --by 0
redis-cli -p "$R_PORT" set 'rcoord:{latch:str}' x >/dev/null
expect 4 "$RCOORD" latch down str
assert_contains "$ERR" "not an rcoord latch"
expect 0 "$RCOORD" latch init busy --count 1
start=$(now_ms)
expect 1 "$RCOORD" --timeout 300ms latch wait busy --wait 1s
took=$(($(now_ms) - start))
[ "$took" -ge 950 ] && [ "$took" -lt "$(scaled 2500)" ] || fail "latch wait --wait 1s took ${took}ms"
assert_contains "$ERR" "latch 'busy' is still at 1 within 1s"
pass "latch init, down, status, wait: exit codes, text and JSON"

# ---- Proof: ten count-downs at random moments, three waiters released together ----
expect 0 "$RCOORD" latch init ci --count 10
mkdir -p "$TEST_TMP/lw"
for i in 1 2 3; do
  (
    set +e
    "$RCOORD" latch wait ci --wait 60s
    echo "$? $(now_ms)" >"$TEST_TMP/lw/$i.rc.tmp"
    mv "$TEST_TMP/lw/$i.rc.tmp" "$TEST_TMP/lw/$i.rc"
  ) &
  track $!
done
wait_until 5 subscribed 'rcoord:{latch:ci}' 3 || fail "the latch waiters did not subscribe"
mkdir -p "$TEST_TMP/down"
downs=()
for i in $(seq 1 10); do
  (
    sleep "$((RANDOM % 2)).$((RANDOM % 10))$((RANDOM % 10))"
    s=$(now_ms)
    left=$("$RCOORD" latch down ci)
    echo "$s $(now_ms) $left" >"$TEST_TMP/down/$i"
  ) &
  downs+=($!)
  track $!
done
wait "${downs[@]}"
waiters_done() { [ "$(find "$TEST_TMP/lw" -name '*.rc' | wc -l)" -eq 3 ]; }
wait_until 10 waiters_done || fail "the latch waiters did not all return"
python3 - "$TEST_TMP/down" "$TEST_TMP/lw" "$(scaled 100)" <<'PY' || fail "latch timing"
import os, sys
downs = [open(os.path.join(sys.argv[1], f)).read().split() for f in os.listdir(sys.argv[1])]
assert len(downs) == 10, downs
assert sorted(int(d[2]) for d in downs) == list(range(10)), downs
last = next(d for d in downs if d[2] == "0")  # the count-down that reached 0
last_start, last_end = int(last[0]), int(last[1])
waiters = [open(os.path.join(sys.argv[2], f)).read().split() for f in os.listdir(sys.argv[2])]
assert len(waiters) == 3, f"only {len(waiters)} waiters returned"
for code, ended in waiters:
    assert code == "0", waiters
    assert int(ended) >= last_start, f"a waiter returned {last_start - int(ended)}ms before the last count-down"
    assert int(ended) - last_end <= int(sys.argv[3]), f"a waiter returned {int(ended) - last_end}ms after the last count-down"
print("waiters returned", sorted(int(w[1]) - last_end for w in waiters), "ms after the last count-down ended")
PY
start=$(now_ms)
expect 0 "$RCOORD" latch wait ci --wait 10s
took=$(($(now_ms) - start))
[ "$took" -lt "$(scaled 500)" ] || fail "a waiter on an open latch took ${took}ms"
pass "latch of 10: three waiters return within 100 ms of the last count-down, none before; a late waiter at once (${took}ms)"
