# systemd notification (SPEC §6 "service managers and traces"): under $NOTIFY_SOCKET, the run
# forms send STATUS= while waiting, READY=1 once the command runs, WATCHDOG=1 after each
# renewal when $WATCHDOG_USEC is set, and STOPPING=1 when they give back, as datagrams to the
# socket (a path, or @name for an abstract one); the command inherits none of the variables.
# The test binds a real datagram socket as systemd would.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# listen ADDRESS OUT: receives datagrams on ADDRESS (a path, or @name) into OUT, one message a
# line (its newlines shown as '|'), until killed. Ready once OUT exists.
listen() {
  python3 - "$1" "$2" <<'PY' &
import os, socket, sys
address, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + address[1:] if address.startswith("@") else address)
with open(out, "w") as f:
    f.flush()
    while True:
        data = s.recv(4096).decode()
        f.write(data.replace("\n", "|") + "\n")
        f.flush()
PY
  track $!
  listener=$!
  wait_until 10 test -e "$2" || fail "the test's socket never listened"
}
# kinds FILE: the first assignment of each message, one line, e.g. "READY=1 WATCHDOG=1".
kinds() { cut -d'|' -f1 "$1" | tr '\n' ' ' | sed 's/ $//'; }

# lock run with a watchdog: READY first, a WATCHDOG per renewal (TTL 1.5s: every 0.5s),
# STOPPING last; the command sees no notification variable.
listen "$TEST_TMP/notify.sock" "$TEST_TMP/m1"
NOTIFY_SOCKET=$TEST_TMP/notify.sock WATCHDOG_USEC=3000000 \
  "$RCOORD" lock run job --ttl 1500ms -- sh -c 'sleep 2; env >"$1"' sh "$TEST_TMP/env1" ||
  fail "lock run exited $?"
wait_until 5 grep -q '^STOPPING=1' "$TEST_TMP/m1" || fail "no STOPPING=1: $(cat "$TEST_TMP/m1")"
kill "$listener"
seen=$(kinds "$TEST_TMP/m1")
[[ $seen =~ ^READY=1(\ WATCHDOG=1){2,}\ STOPPING=1$ ]] || fail "lock run sent: $seen"
grep -q "^READY=1|STATUS=holding lock 'job', running sh$" "$TEST_TMP/m1" ||
  fail "READY without its STATUS: $(cat "$TEST_TMP/m1")"
grep -q "^STOPPING=1|STATUS=giving back lock 'job'$" "$TEST_TMP/m1" ||
  fail "STOPPING without its STATUS: $(cat "$TEST_TMP/m1")"
grep -E '^(NOTIFY_SOCKET|WATCHDOG_USEC|WATCHDOG_PID)=' "$TEST_TMP/env1" &&
  fail "the command inherited the notification variables"
pass "lock run: $seen; the command inherits none of the variables"

# Waiting: STATUS says for what and who holds it, before READY; an abstract socket works.
token=$("$RCOORD" lock acquire job --ttl 30s --note holder-note)
listen "@rcoord-test-$$" "$TEST_TMP/m2"
NOTIFY_SOCKET=@rcoord-test-$$ "$RCOORD" lock run job --wait 20s -- true &
track $!
runner=$!
wait_until 10 grep -q '^STATUS=waiting' "$TEST_TMP/m2" || fail "no waiting STATUS: $(cat "$TEST_TMP/m2")"
grep -q '^READY' "$TEST_TMP/m2" && fail "READY=1 while still waiting"
"$RCOORD" lock release job --token "$token" >/dev/null
wait "$runner" || fail "the waiting lock run exited $?"
wait_until 5 grep -q '^STOPPING=1' "$TEST_TMP/m2" || fail "no STOPPING=1: $(cat "$TEST_TMP/m2")"
kill "$listener"
seen=$(kinds "$TEST_TMP/m2")
[[ $seen =~ ^STATUS=waiting\ for\ lock\ \'job\',\ held\ by\ .*lock\ acquire\).*\ READY=1\ STOPPING=1$ ]] ||
  fail "a waiting lock run sent: $seen"
pass "a waiting lock run on an abstract socket: STATUS (who holds it), then READY=1, STOPPING=1; no WATCHDOG unasked"

# sem run and elect run; a WATCHDOG_PID of another process asks nothing of this one.
listen "$TEST_TMP/notify3.sock" "$TEST_TMP/m3"
NOTIFY_SOCKET=$TEST_TMP/notify3.sock WATCHDOG_USEC=3000000 WATCHDOG_PID=1 \
  "$RCOORD" sem run pool --limit 2 --ttl 1500ms -- sleep 1 || fail "sem run exited $?"
NOTIFY_SOCKET=$TEST_TMP/notify3.sock \
  "$RCOORD" elect run boss --id me --ttl 3s -- true || fail "elect run exited $?"
two_stops() { [ "$(grep -c '^STOPPING=1' "$TEST_TMP/m3")" = 2 ]; }
wait_until 5 two_stops || fail "sent: $(cat "$TEST_TMP/m3")"
kill "$listener"
assert_eq "$(kinds "$TEST_TMP/m3")" "READY=1 STOPPING=1 READY=1 STOPPING=1" "sem run, then elect run"
grep -q "^READY=1|STATUS=holding semaphore 'pool'" "$TEST_TMP/m3" || fail "sem run's STATUS: $(cat "$TEST_TMP/m3")"
pass "sem run and elect run: READY=1, STOPPING=1; WATCHDOG_PID of another process: no WATCHDOG=1"

# A waiting elect run says who leads.
"$RCOORD" elect campaign boss --id other --ttl 30s >/dev/null
listen "$TEST_TMP/notify5.sock" "$TEST_TMP/m5"
NOTIFY_SOCKET=$TEST_TMP/notify5.sock "$RCOORD" elect run boss --id me --wait 300ms -- true &&
  fail "elect run led while 'other' leads"
kill "$listener"
grep -q "^STATUS=campaigning for leadership of 'boss', led by 'other', .*(term [0-9]*)$" \
  "$TEST_TMP/m5" || fail "a waiting elect run sent: $(cat "$TEST_TMP/m5")"
pass "a waiting elect run: STATUS names the leader; no READY=1 when it never leads"

# No socket: nothing changes (the run works as ever); an unreachable socket is no error.
NOTIFY_SOCKET=$TEST_TMP/nobody.sock "$RCOORD" lock run job -- true 2>"$TEST_TMP/err" ||
  fail "lock run with a socket nobody listens on exited $?"
[ -s "$TEST_TMP/err" ] && fail "an unreachable NOTIFY_SOCKET made rcoord say: $(cat "$TEST_TMP/err")"
pass "a NOTIFY_SOCKET nobody listens on: the run goes on, silently"

# queue consume: READY once it looks at the queue, WATCHDOG at each look or renewal after
# that (also while idle: a waiting pop looks at least every half --timeout), STOPPING at the end.
"$RCOORD" queue push jobs one two >/dev/null
listen "$TEST_TMP/notify4.sock" "$TEST_TMP/m4"
NOTIFY_SOCKET=$TEST_TMP/notify4.sock WATCHDOG_USEC=5000000 \
  "$RCOORD" --timeout 1s queue consume jobs --max-messages 3 -- sh -c 'cat >/dev/null' &
track $!
consumer=$!
drained() { [ "$("$RCOORD" queue len jobs)" = 0 ]; }
wait_until 10 drained || fail "the consumer took nothing"
# Idle now: its looks go on (half of --timeout 1s apart), each a WATCHDOG=1.
watchdogs() { grep -c '^WATCHDOG=1' "$TEST_TMP/m4" || true; }
more_watchdogs() { [ "$(watchdogs)" -ge "$1" ]; }
before=$(watchdogs)
wait_until 10 more_watchdogs $((before + 2)) ||
  fail "an idle consumer sent no WATCHDOG=1: $(cat "$TEST_TMP/m4")"
"$RCOORD" queue push jobs three >/dev/null
wait "$consumer" || fail "queue consume exited $?"
wait_until 5 grep -q '^STOPPING=1' "$TEST_TMP/m4" || fail "no STOPPING=1: $(cat "$TEST_TMP/m4")"
kill "$listener"
seen=$(kinds "$TEST_TMP/m4")
[[ $seen =~ ^READY=1(\ WATCHDOG=1){2,}\ STOPPING=1$ ]] || fail "queue consume sent: $seen"
grep -q "^READY=1|STATUS=consuming queue 'jobs'$" "$TEST_TMP/m4" || fail "READY's STATUS: $(cat "$TEST_TMP/m4")"
pass "queue consume: READY=1, WATCHDOG=1 while busy and idle, STOPPING=1 after the last message"
