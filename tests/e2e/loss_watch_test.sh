# Loss noticed at once (SPEC §6): a run form whose lease is broken, deleted or flushed stops
# its command within about a round trip, not at its next renewal. Every lease here lasts 60 s,
# so a renewal comes only 20 s after the take: a SIGTERM within the bound below (2 s, scaled)
# can only come from the server telling rcoord of the change (client-side tracking). The
# changes: lock break, DEL of the lock (exclusive, and a reader's), FLUSHALL, a semaphore's and
# an election's keys deleted, a Redlock's on two of three nodes. Then: no false loss from what other clients do to the same
# object (waiters, other holders renewing, history), and where tracking is refused (an ACL
# user without CLIENT TRACKING) the renewal still finds the loss.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
cli() { redis-cli -c -u "$R_URL" "$@"; }

# The command: writes the time it got SIGTERM, then exits as a killed one would.
cat >"$TEST_TMP/held.sh" <<'EOF'
#!/usr/bin/env bash
trap 'date +%s%3N >"$TERM_AT"; exit 143' TERM
echo started >"$TERM_AT.started"
sleep 120 & wait
EOF
chmod +x "$TEST_TMP/held.sh"

bound=$(scaled 2000)
# start_held NAME RCOORD-ARGS...: starts `rcoord RCOORD-ARGS -- held.sh` (held_pid), its stderr
# in $TEST_TMP/NAME.err, and waits until the command runs.
start_held() {
  local name=$1
  shift
  export TERM_AT="$TEST_TMP/$name.term"
  rm -f "$TERM_AT" "$TERM_AT.started"
  "$RCOORD" "$@" -- "$TEST_TMP/held.sh" 2>"$TEST_TMP/$name.err" &
  held_pid=$!
  wait_until 10 test -f "$TERM_AT.started" || fail "$name: the command did not start"
}
# stopped_within NAME T0 BOUND: rcoord (held_pid) exits 5 and its command got SIGTERM at most
# BOUND ms after T0 (sets took, the ms it took).
stopped_within() {
  local name=$1 t0=$2 bound=$3 code=0
  wait "$held_pid" || code=$?
  [ -f "$TERM_AT" ] || fail "$name: the command got no SIGTERM (exit $code): $(cat "$TEST_TMP/$name.err")"
  [ "$code" = 5 ] || fail "$name: exit $code, want 5: $(cat "$TEST_TMP/$name.err")"
  took=$(($(cat "$TERM_AT") - t0))
  [ "$took" -le "$bound" ] || fail "$name: SIGTERM $took ms after the change (bound $bound ms)"
  assert_contains "$(cat "$TEST_TMP/$name.err")" "was lost while the command ran"
}
# noticed NAME CHANGE RUN-ARGS...: makes CHANGE (a shell line) while `rcoord RUN-ARGS` holds,
# and checks that the command got SIGTERM within the bound and rcoord exited 5 (lost).
noticed() {
  local name=$1 change=$2 t0
  shift 2
  start_held "$name" "$@"
  sleep 0.2 # the watch starts once the command has run 50 ms
  t0=$(now_ms)
  eval "$change" >/dev/null || fail "$name: the change failed: $change"
  stopped_within "$name" "$t0" "$bound"
  pass "$name: SIGTERM ${took} ms after the change, exit 5"
}

noticed "lock broken" "'$RCOORD' lock break a" lock run a --ttl 60s
noticed "lock deleted" "cli DEL 'rcoord:{lock:b}'" lock run b --ttl 60s
noticed "reader deleted" "cli DEL 'rcoord:{lock:c}:readers'" lock run c --shared --ttl 60s
flush_all() { for port in $R_PORTS; do redis-cli -p "$port" FLUSHALL >/dev/null; done; }
noticed "flushed" flush_all lock run d --ttl 60s
noticed "semaphore deleted" "cli DEL 'rcoord:{sem:e}'" sem run e --limit 2 --ttl 60s
noticed "leader deleted" "cli DEL 'rcoord:{elect:f}'" elect run f --id me --ttl 60s

# A Redlock of three masters: a change on one node brings a renewal, which finds a quorum still
# holding the lock; the same on a second node loses the quorum, and the command is stopped.
start_redis N1 --appendonly no
start_redis N2 --appendonly no
start_redis N3 --appendonly no
start_held redlock -u "$N1_URL" -u "$N2_URL" -u "$N3_URL" lock run rl --ttl 60s
sleep 0.2
redis-cli -p "$N1_PORT" DEL 'rcoord:{lock:rl}' >/dev/null
quiet_period 600
alive "$held_pid" || fail "Redlock: one node's lock deleted stopped the command: $(cat "$TEST_TMP/redlock.err")"
t0=$(now_ms)
redis-cli -p "$N2_PORT" DEL 'rcoord:{lock:rl}' >/dev/null
stopped_within redlock "$t0" "$bound"
pass "Redlock: one node's change leaves it held; a second loses the quorum, SIGTERM ${took} ms after"

# No false loss: waiters enlisting and giving up, readers coming and going beside a reader,
# a semaphore's other holders renewing every second, another lock's keys changing.
export TERM_AT="$TEST_TMP/g.term"
"$RCOORD" lock run g --ttl 3s -- bash -c 'echo >"$TERM_AT.started"; sleep 3' &
holder=$!
wait_until 10 test -f "$TERM_AT.started" || fail "the lock's holder did not start"
waiters=()
for i in 1 2 3 4; do
  "$RCOORD" -q lock acquire g --ttl 1s --wait 1s >/dev/null 2>&1 &
  waiters+=($!)
done
for i in 1 2 3; do cli SET "rcoord:{lock:gg}" x >/dev/null; cli DEL "rcoord:{lock:gg}" >/dev/null; done
wait "$holder" || fail "the lock's holder was stopped by its waiters' changes (exit $?)"
for pid in "${waiters[@]}"; do wait "$pid" || true; done
pids=()
for i in 1 2 3; do
  "$RCOORD" sem run h --limit 3 --ttl 3s -- sleep 3 &
  pids+=($!)
done
"$RCOORD" lock run r --shared --ttl 3s -- sleep 3 &
pids+=($!)
for i in 1 2 3; do "$RCOORD" lock run r --shared --ttl 1s -- sleep 0.5 & done
for pid in "${pids[@]}"; do wait "$pid" || fail "a holder was stopped by the others' renewals (exit $?)"; done
pass "no false loss from waiters, other holders' renewals, other readers or other keys"

# Where tracking is refused, renewals find the loss (a 3 s lease: renewed each second).
if [ "${RCOORD_TEST_CLUSTER:-0}" != 1 ]; then
  password=no-tracking-pw
  cli ACL SETUSER no-tracking on ">$password" '~*' '&*' +@all -client >/dev/null
  cli ACL SETUSER no-tracking +client\|setname >/dev/null
  RCOORD_PASSWORD=$password start_held fallback --user no-tracking lock run i --ttl 3s
  t0=$(now_ms)
  cli DEL 'rcoord:{lock:i}' >/dev/null
  stopped_within fallback "$t0" "$(scaled 3000)"
  pass "without CLIENT TRACKING, the renewal notices the loss (${took} ms)"
fi
