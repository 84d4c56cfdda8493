# rcoord gate: several locks, shared locks, permits and rate slots taken all or nothing with one
# token; release, extend and status by the token alone; a refusal holds nothing afterwards; run
# passes the command's exit code, and exits 5 when one part is broken; a waiting gate is woken
# by the release of the part it waits for; usage errors.
source "$(dirname "$0")/lib.sh"
without_note
start_redis R
G=("$RCOORD" --url "$R_URL")

# every_free NAME...: each lock (l:NAME) or semaphore (s:NAME) is free.
every_free() {
  local part
  for part in "$@"; do
    case "$part" in
      l:*) expect 1 "${G[@]}" lock status "${part#l:}" ;;
      s:*) expect 1 "${G[@]}" sem status "${part#s:}" ;;
    esac
  done
}

# --- acquire, status, extend, release by token ---------------------------------------------
expect 0 "${G[@]}" gate acquire --lock a --lock b --shared-lock r --sem s:3:2 --rate api:100/s
TOKEN=$OUT
[[ "$TOKEN" =~ ^[0-9a-f]{32}$ ]] || fail "gate acquire printed no token: '$TOKEN'"
expect 0 "${G[@]}" lock status a
assert_contains "$OUT" "token: $TOKEN" "lock a is held by the gate's token"
assert_contains "$OUT" "note: gate ${TOKEN:0:8}" "lock a's holder note names the gate"
expect 0 "${G[@]}" --json lock status r
assert_eq "$(json_field "$OUT" mode)" shared "lock r is held as a shared lock"
expect 0 "${G[@]}" --json sem status s
assert_eq "$(json_field "$OUT" in_use)" 2 "the gate holds 2 permits of s"
assert_contains "$OUT" "\"token\":\"$TOKEN\"" "sem s is held by the gate's token"

expect 0 "${G[@]}" --json gate status --token "$TOKEN"
python3 - "$OUT" <<'EOF' || fail "gate status JSON: $OUT"
import json, sys
j = json.loads(sys.argv[1])
assert j["held"] is True and 0 < j["ttl_ms"] <= 30000, j
assert [(p["type"], p["name"]) for p in j["parts"]] == [
    ("lock", "a"), ("lock", "b"), ("shared-lock", "r"), ("sem", "s"), ("rate", "api")], j
assert all(p["held"] for p in j["parts"]), j
EOF

expect 0 "${G[@]}" gate extend --token "$TOKEN" --ttl 2m
expect 0 "${G[@]}" --json lock status b
[ "$(json_field "$OUT" ttl_ms)" -gt 60000 ] || fail "gate extend did not extend lock b: $OUT"
expect 0 "${G[@]}" --json sem status s
python3 -c 'import json,sys; h=json.loads(sys.argv[1])["holders"]; assert h[0]["ttl_ms"] > 60000, h' \
  "$OUT" || fail "gate extend did not refresh sem s: $OUT"

# a second gate that needs one of the parts is refused, naming it, and holds nothing after
expect 1 "${G[@]}" gate acquire --lock c --lock b --sem other:1
assert_eq "$OUT" "" "a refused gate prints no token"
assert_contains "$ERR" "lock 'b' is busy" "the refusal names the part"
assert_contains "$ERR" "gate acquire" "the refusal names the holder"
every_free l:c s:other
expect 1 "${G[@]}" gate acquire --lock d --sem s:3:2 --rate never-consumed:1/h
assert_contains "$ERR" "semaphore 's' is full (2 of 3 permits in use)" "the refusal names the sem"
every_free l:d
expect 0 "${G[@]}" --json limit status never-consumed --rate 1/h
assert_eq "$(json_field "$OUT" remaining)" 1 "a rate of a refused gate is not consumed"
expect 0 "${G[@]}" --json sem status s
assert_eq "$(json_field "$OUT" in_use)" 2 "the refused gate left sem s as it was"

expect 0 "${G[@]}" --json gate release --token "$TOKEN"
assert_eq "$(json_field "$OUT" released)" true
every_free l:a l:b l:r s:s
expect 1 "${G[@]}" gate release --token "$TOKEN"
expect 1 "${G[@]}" gate status --token "$TOKEN"
expect 1 "${G[@]}" gate extend --token "$TOKEN"
assert_eq "$(redis-cli -c -p "$R_PORT" exists "rcoord:{gate:$TOKEN}")" 0 "the gate's record is deleted"
pass "acquire, status, extend and release by token; a refused gate holds nothing"

# a part broken under a gate: status and extend say so (exit 1), release gives back the rest
expect 0 "${G[@]}" gate acquire --lock k1 --lock k2 --sem ks:2
KTOKEN=$OUT
expect 0 "${G[@]}" lock break k2
expect 1 "${G[@]}" --json gate status --token "$KTOKEN"
python3 -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["held"] is False and [p["held"] for p in j["parts"]] == [True, False, True], j' \
  "$OUT" || fail "gate status after a broken part: $OUT"
expect 1 "${G[@]}" gate extend --token "$KTOKEN"
expect 1 "${G[@]}" gate release --token "$KTOKEN"
every_free l:k1 l:k2 s:ks
pass "a broken part: gate status and extend exit 1, release gives back the other parts"

# --- one script on one server ----------------------------------------------------------------
# monitored CODE CMD...: runs CMD (expecting exit CODE) while MONITOR watches the server;
# SCRIPT_CALLS is how many scripts it ran there (EVALSHA, EVAL, FCALL).
monitored() {
  local want=$1 mon="$TEST_TMP/monitor" pid
  shift
  redis-cli -p "$R_PORT" monitor >"$mon" &
  pid=$!
  track "$pid"
  wait_until 10 grep -q '^OK' "$mon" || fail "MONITOR never answered"
  expect "$want" "$@"
  redis-cli -p "$R_PORT" echo monitor-end >/dev/null
  wait_until 10 grep -q monitor-end "$mon" || fail "MONITOR never saw the end"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  SCRIPT_CALLS=$(grep -cE '"(EVALSHA|EVAL|FCALL)"' "$mon" || true)
}
# key_count PATTERN: how many keys match PATTERN (redis-cli --scan).
key_count() { redis-cli -p "$R_PORT" --scan --pattern "$1" | grep -c '' || true; }
# history_of TYPE NAME: the events of the object's history, space-separated ('' when none).
history_of() {
  rc "${G[@]}" -o json history --type "$1" "$2"
  event_names "$OUT"
}
if [ "${RCOORD_TEST_CLUSTER:-0}" != 1 ]; then
  # The script is in the server's cache (the gates above): one call takes the whole gate.
  monitored 0 "${G[@]}" --json gate acquire --lock m1 --shared-lock m2 --sem m3:2 --rate m4:5/s
  assert_eq "$SCRIPT_CALLS" 1 "a granted gate of 4 parts is taken with one script call"
  MTOKEN=$(json_field "$OUT" token)
  assert_eq "$(redis-cli -p "$R_PORT" hget "rcoord:{gate:$MTOKEN}" n)" 4 "the record is written"
  assert_eq "$(history_of lock m1)" acquired "the lock's history records its take"
  assert_eq "$(redis-cli -p "$R_PORT" hget 'rcoord:{lock:m2}:stats' acquired)" 1 \
    "the shared lock counts its take"
  expect 0 "${G[@]}" gate release --token "$MTOKEN"
  every_free l:m1 l:m2 s:m3

  # Refused on its last part, a rate: nothing of the parts before it is touched.
  expect 0 "${G[@]}" --json lock acquire o1
  O1=$(json_field "$OUT" token)
  expect 0 "${G[@]}" lock release o1 --token "$O1"
  FENCE=$(redis-cli -p "$R_PORT" get 'rcoord:{lock:o1}:fence')
  expect 0 "${G[@]}" limit check o4 --rate 1/h
  monitored 1 "${G[@]}" --json gate acquire --lock o1 --shared-lock o2 --sem o3:2 --rate o4:1/h
  assert_eq "$SCRIPT_CALLS" 1 "a refused gate is one script call too"
  python3 - "$OUT" <<'PY' || fail "gate refused by its rate: $OUT"
import json, sys
j = json.loads(sys.argv[1])
assert j["acquired"] is False and j["refused"]["type"] == "rate" and j["refused"]["name"] == "o4", j
assert [(p["type"], p["name"]) for p in j["parts"]] == [
    ("lock", "o1"), ("shared-lock", "o2"), ("sem", "o3"), ("rate", "o4")], j
PY
  assert_eq "$(redis-cli -p "$R_PORT" get 'rcoord:{lock:o1}:fence')" "$FENCE" "no fence consumed"
  assert_eq "$(history_of lock o1)" "acquired released" "no event for the lock before the rate"
  assert_eq "$(redis-cli -p "$R_PORT" hget 'rcoord:{lock:o1}:stats' acquired)" 1 \
    "no take counted for the lock before the rate"
  assert_eq "$(key_count 'rcoord:{lock:o2}*')" 0 "the shared lock before the rate is untouched"
  assert_eq "$(key_count 'rcoord:{sem:o3}*')" 0 "the semaphore before the rate is untouched"
  expect 0 "${G[@]}" --json lock acquire o1
  FENCE_NEXT=$(json_field "$OUT" fence)
  [ "$FENCE_NEXT" -gt "$FENCE" ] || fail "lock o1's next fence $FENCE_NEXT is not above $FENCE"
  expect 0 "${G[@]}" lock release o1 --token "$(json_field "$OUT" token)"

  # Refused on its last part, a lock: the parts before it untouched, the lock counted busy.
  expect 0 "${G[@]}" lock acquire o9
  O9=$OUT
  FENCE=$(redis-cli -p "$R_PORT" get 'rcoord:{lock:o1}:fence')
  monitored 1 "${G[@]}" --json gate acquire --lock o1 --lock o9
  assert_eq "$SCRIPT_CALLS" 1 "a gate refused by a lock is one script call"
  python3 -c 'import json,sys; r=json.loads(sys.argv[1])["refused"]; assert r["name"] == "o9", r' \
    "$OUT" || fail "the refusal names lock o9: $OUT"
  assert_eq "$(redis-cli -p "$R_PORT" get 'rcoord:{lock:o1}:fence')" "$FENCE" "no fence consumed"
  assert_eq "$(history_of lock o1)" "acquired released acquired released" \
    "no event for the lock before the busy one"
  assert_eq "$(history_of lock o9)" "acquired busy" "the busy lock records the refusal"
  assert_eq "$(redis-cli -p "$R_PORT" hget 'rcoord:{lock:o9}:stats' busy)" 1 \
    "the busy lock counts it"
  expect 0 "${G[@]}" lock release o9 --token "$O9"
  every_free l:o1 l:o2 l:o9 s:o3
  pass "one server: a gate is one script call, granted or refused; a refused gate leaves the parts before the refusing one untouched (no fence, no event, no count)"
fi

# --- JSON of acquire -------------------------------------------------------------------------
expect 0 "${G[@]}" --json gate acquire --rate jr:10/s --sem js:2 --lock j --shared-lock jr2
python3 - "$OUT" <<'EOF' || fail "gate acquire JSON: $OUT"
import json, sys
j = json.loads(sys.argv[1])
assert j["acquired"] is True and len(j["token"]) == 32 and j["ttl_ms"] == 30000, j
assert j["waited_ms"] >= 0, j
p = j["parts"]
assert [x["type"] for x in p] == ["lock", "shared-lock", "sem", "rate"], p
assert p[0]["name"] == "j" and p[0]["fence"] > 0, p
assert p[1]["name"] == "jr2" and p[1]["fence"] > 0, p
assert p[2] == {"type": "sem", "name": "js", "limit": 2, "permits": 1, "holders": 1, "in_use": 1}, p
assert p[3] == {"type": "rate", "name": "jr", "remaining": 9}, p
EOF
JTOKEN=$(json_field "$OUT" token)
expect 1 "${G[@]}" --json gate acquire --lock j
python3 - "$OUT" <<'EOF' || fail "refused gate acquire JSON: $OUT"
import json, sys
j = json.loads(sys.argv[1])
assert j["acquired"] is False and "token" not in j, j
assert j["refused"]["type"] == "lock" and j["refused"]["name"] == "j" and j["refused"]["ttl_ms"] > 0, j
EOF
expect 0 "${G[@]}" gate release --token "$JTOKEN"
pass "gate acquire --json lists every part with its fence, holders or remaining"

# --- a rate that denies: everything given back, the rates consumed before it too ------------
expect 0 "${G[@]}" limit check q2 --rate 1/h
expect 1 "${G[@]}" gate acquire --lock x --sem y:1 --shared-lock z --rate q1:5/h --rate q2:1/h
assert_contains "$ERR" "rate 'q2' denies it" "the refusal names the rate"
every_free l:x l:z s:y
expect 0 "${G[@]}" --json limit status q1 --rate 5/h
assert_eq "$(json_field "$OUT" remaining)" 5 "the slot of q1, consumed before q2 denied, is given back"
expect 1 "${G[@]}" --json gate acquire --lock x --rate q2:1/h
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["refused"]; assert r["type"]=="rate" and r["retry_after_ms"] > 0, r' \
  "$OUT" || fail "a rate's refusal has its retry_after_ms: $OUT"
every_free l:x
pass "a gate whose rate denies holds nothing and consumed nothing"

# --- an error on a later part: exit 4, and the parts before it given back ------------------
redis-cli -c -p "$R_PORT" set 'rcoord:{sem:wrongtype}' text >/dev/null
expect 4 "${G[@]}" gate acquire --lock e1 --shared-lock e2 --sem wrongtype:2
every_free l:e1 l:e2
redis-cli -c -p "$R_PORT" del 'rcoord:{sem:wrongtype}' >/dev/null
pass "a gate whose later part fails with an error (a key of another type) holds nothing"

# --- run: exit code, environment, loss -------------------------------------------------------
expect 7 "${G[@]}" gate run --lock a --sem s:2 --rate runrate:100/s -- sh -c 'exit 7'
every_free l:a s:s
# shellcheck disable=SC2016
expect 0 "${G[@]}" gate run --lock a -- sh -c 'echo "$RCOORD_TOKEN"; "$0" --url "$1" lock status a' \
  "$RCOORD" "$R_URL"
RUN_TOKEN=$(echo "$OUT" | head -1)
[[ "$RUN_TOKEN" =~ ^[0-9a-f]{32}$ ]] || fail "gate run exported no RCOORD_TOKEN: $OUT"
assert_contains "$OUT" "token: $RUN_TOKEN" "the command runs while the gate holds lock a"
expect 3 "${G[@]}" gate run --lock a --lock b -- sh -c 'exit 3'
TOKEN=$("${G[@]}" gate acquire --lock busy1)
expect 1 "${G[@]}" gate run --lock busy1 --lock free2 -- true
every_free l:free2
expect 0 "${G[@]}" gate release --token "$TOKEN"
every_free l:busy1

"${G[@]}" gate run --lock a --lock b --sem s:2 --ttl 3s -- sleep 60 >/dev/null 2>"$TEST_TMP/lost.err" &
RUN_PID=$!
track "$RUN_PID"
wait_until 10 "${G[@]}" lock status b || fail "gate run never took lock b"
expect 0 "${G[@]}" lock break b
set +e
wait "$RUN_PID"
RUN_RC=$?
set -e
assert_eq "$RUN_RC" 5 "gate run exits 5 when one part is broken"
assert_contains "$(cat "$TEST_TMP/lost.err")" "lost" "gate run says the gate was lost"
every_free l:a l:b s:s
pass "gate run passes the exit code and RCOORD_TOKEN, and exits 5 when a part is broken"

# --- a waiting gate is woken by the release of the part it waits for -------------------------
# woken_after TOKEN_TO_RELEASE HOW GATE_OPTIONS...: a gate waiting on a part held by
# TOKEN_TO_RELEASE (released with HOW: lock or sem release) takes everything once it is
# released, well within the waiters' 1 s heartbeat (a wake-up, not a retry), holding nothing
# while it waits.
woken_after() {
  local holder=$1 how=$2
  shift 2
  local out="$TEST_TMP/woken.$how" pid t0 took
  ("${G[@]}" gate acquire --wait 30s "$@" >"$out.token" 2>"$out.err"
   echo "$? $(now_ms)" >"$out") &
  pid=$!
  track "$pid"
  wait_blocked "$R_PORTS" 1
  every_free l:w0
  t0=$(now_ms)
  case "$how" in
    lock) expect 0 "${G[@]}" lock release w1 --token "$holder" ;;
    sem) expect 0 "${G[@]}" sem release ws --token "$holder" ;;
  esac
  wait "$pid" || true
  read -r code end <"$out"
  assert_eq "$code" 0 "the waiting gate took every part after the release ($(cat "$out.err"))"
  took=$((end - t0))
  [ "$took" -lt "$(scaled 700)" ] || fail "the waiting gate took ${took}ms after the release"
  expect 0 "${G[@]}" gate release --token "$(cat "$out.token")"
  WOKEN_MS=$took
}
expect 0 "${G[@]}" lock acquire w1 --ttl 1m
woken_after "$OUT" lock --lock w0 --lock w1 --sem ws:1
LOCK_MS=$WOKEN_MS
expect 0 "${G[@]}" sem take ws --limit 1 --ttl 1m
woken_after "$OUT" sem --lock w0 --lock w1 --sem ws:1
SEM_MS=$WOKEN_MS
expect 0 "${G[@]}" lock acquire w1 --ttl 1m
woken_after "$OUT" lock --lock w0 --shared-lock w1
every_free l:w0 l:w1 s:ws
pass "a waiting gate holds nothing and is woken by the release of a lock (${LOCK_MS}ms), a permit (${SEM_MS}ms) or a lock it wants shared (${WOKEN_MS}ms)"

# The gates' own take counters (on a cluster, written by a command of their own): named by the
# parts, each call refused once however often it tried again, each take once.
metrics=$("${G[@]}" metrics)
for sample in 'rcoord_gate_acquired_total{name="lock:w0,lock:w1,sem:ws"} 2' \
  'rcoord_gate_busy_total{name="lock:w0,lock:w1,sem:ws"} 2' \
  'rcoord_gate_wait_seconds_count{name="lock:w0,lock:w1,sem:ws"} 2' \
  'rcoord_gate_acquired_total{name="lock:w0,shared-lock:w1"} 1' \
  'rcoord_gate_busy_total{name="lock:w0,shared-lock:w1"} 1'; do
  grep -qxF "$sample" <<<"$metrics" || fail "metrics: no '$sample' in: $(grep rcoord_gate_ <<<"$metrics")"
done
pass "the waiting gates' takes and refusals counted once each, under the gate's parts"

# SIGTERM while waiting: nothing held, and no place left among a lock's writers or a sem's queue
interrupted() {
  local pid
  "${G[@]}" gate acquire --wait forever "$@" >/dev/null 2>"$TEST_TMP/term.err" &
  pid=$!
  track "$pid"
  wait_blocked "$R_PORTS" 1
  kill -TERM "$pid"
  set +e
  wait "$pid"
  TERM_RC=$?
  set -e
  assert_eq "$TERM_RC" 143 "a waiting gate ends 128+SIGTERM ($(cat "$TEST_TMP/term.err"))"
  assert_contains "$(cat "$TEST_TMP/term.err")" "nothing is held"
}
expect 0 "${G[@]}" lock acquire w1 --ttl 1m
W1=$OUT
interrupted --lock w0 --lock w1
assert_eq "$(redis-cli -c -p "$R_PORT" zcard "rcoord:{lock:w1}:writers")" 0 \
  "an interrupted gate left the waiting writers"
expect 0 "${G[@]}" lock release w1 --token "$W1"
expect 0 "${G[@]}" sem take ws --limit 1 --ttl 1m
WS=$OUT
interrupted --lock w0 --sem ws:1
assert_eq "$(redis-cli -c -p "$R_PORT" zcard "rcoord:{sem:ws}:queue")" 0 \
  "an interrupted gate left the semaphore's queue"
expect 0 "${G[@]}" sem release ws --token "$WS"
every_free l:w0 l:w1 s:ws
pass "a gate interrupted while waiting holds nothing and leaves every queue"

# a wait that runs out holds nothing, and leaves no place among the waiters
expect 0 "${G[@]}" lock acquire w1 --ttl 1m
W1=$OUT
expect 1 "${G[@]}" gate acquire --lock w0 --lock w1 --wait 1500ms
every_free l:w0
assert_eq "$(redis-cli -c -p "$R_PORT" zcard "rcoord:{lock:w1}:writers")" 0 \
  "a gate that gave up left the waiting writers"
expect 0 "${G[@]}" lock release w1 --token "$W1"
pass "a gate whose wait runs out holds nothing and waits no more"

# --- usage errors (exit 2, before any connection: the URL is dead) ---------------------------
DEAD=("$RCOORD" --url "redis://127.0.0.1:$(free_port)")
expect 2 "${DEAD[@]}" gate acquire
assert_contains "$ERR" "at least one part"
for bad in x x: x:0 x:two x:2:3 :2 x:2:0; do
  expect 2 "${DEAD[@]}" gate acquire --sem "$bad"
  assert_contains "$ERR" "--sem" "bad --sem '$bad'"
done
for bad in x x:10 x:ten/s :10/s x:0/s; do
  expect 2 "${DEAD[@]}" gate acquire --rate "$bad"
  assert_contains "$ERR" "--rate" "bad --rate '$bad'"
done
expect 2 "${DEAD[@]}" gate acquire --lock a --lock a
assert_contains "$ERR" "named twice"
expect 2 "${DEAD[@]}" gate run --lock a --shared-lock a -- true
assert_contains "$ERR" "named twice"
expect 2 "${DEAD[@]}" gate acquire --sem p:2 --sem p:3
expect 2 "${DEAD[@]}" gate run -- true
expect 2 "${DEAD[@]}" gate run --lock a
(unset RCOORD_TOKEN; expect 2 "${DEAD[@]}" gate release)
pass "usage errors exit 2 before any connection"
