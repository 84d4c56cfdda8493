# Holder identity (SPEC §5): every take records host, pid, user, cmd, note and the server
# time of the take; the status verbs, `ls` and `queue peek --in-flight` show them; a run
# form's cmd is its command's basename, never its arguments; every connection names itself
# in the same write as its first command (a one-shot take stays one round trip).
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
without_note
host=$(hostname)
user=$(id -un)

# json_of FIELD: a field of the JSON object in $OUT.
json_of() { json_field "$OUT" "$1"; }

# --- lock: who took it, with --note, pid of the very process --------------------------------
before=$(redis-cli -p "$R_PORT" time | head -1)
"$RCOORD" lock acquire nightly --ttl 5m --note "ticket OPS-7" >"$TEST_TMP/token" &
taker=$!
wait "$taker"
expect 0 "$RCOORD" lock status nightly --json
assert_eq "$(json_of host)" "$host" "lock: host"
assert_eq "$(json_of pid)" "$taker" "lock: pid of the process that took it"
assert_eq "$(json_of user)" "$user" "lock: user"
assert_eq "$(json_of cmd)" "lock acquire" "lock: cmd of a one-shot take is the verb"
assert_eq "$(json_of note)" "ticket OPS-7" "lock: note"
at=$(json_of acquired_at)
[[ "$at" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$ ]] ||
  fail "acquired_at is not RFC 3339 UTC with ms: $at"
at_s=$(date -u -d "${at%.*}Z" +%s)
[ "$at_s" -ge "$before" ] && [ "$at_s" -le $((before + 60)) ] ||
  fail "acquired_at $at is not the server's time of the take (server said $before before it)"
[ "$(json_of held_ms)" -ge 0 ] || fail "held_ms missing: $OUT"
expect 0 "$RCOORD" lock status nightly
assert_contains "$OUT" "host: $host"
assert_contains "$OUT" "pid: $taker"
assert_contains "$OUT" "cmd: lock acquire"
assert_contains "$OUT" "note: ticket OPS-7"
pass "lock acquire records host, pid, user, cmd, note and the server time of the take"

# ls says what each number is: how long it is held, when it expires.
expect 0 "$RCOORD" ls nightly
assert_contains "$OUT" "held by $user@$host (pid $taker, lock acquire) for "
assert_contains "$OUT" ", expires in "
grep -qE ", fence [0-9]{16}$" <<<"$OUT" || fail "ls names the fence: $OUT"
pass "ls: held by user@host (pid, cmd) for .., expires in .."

# $RCOORD_NOTE is the default note; --note beats it; a control byte cannot forge a line.
RCOORD_NOTE="from env" "$RCOORD" lock acquire env-note >/dev/null
expect 0 "$RCOORD" lock status env-note --json
assert_eq "$(json_of note)" "from env"
RCOORD_NOTE="from env" "$RCOORD" lock acquire flag-note --note "from flag" >/dev/null
expect 0 "$RCOORD" lock status flag-note --json
assert_eq "$(json_of note)" "from flag"
"$RCOORD" lock acquire forged --note $'one\nheld: false' >/dev/null
expect 0 "$RCOORD" lock status forged
assert_contains "$OUT" "note: one held: false"
[ "$(grep -c '^held:' <<<"$OUT")" = 1 ] || fail "a newline in a note forged a line: $OUT"
pass "note from \$RCOORD_NOTE, --note first, control bytes made spaces"

# In CI, without a note, the note is a link to the run, built from the CI's own variables.
ci_note() {
  env "$@" "$RCOORD" lock acquire "ci-$RANDOM$RANDOM" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])' >"$TEST_TMP/ci-name"
  rc "$RCOORD" lock status "$(cat "$TEST_TMP/ci-name")" --json
  json_of note
}
assert_eq "$(ci_note GITHUB_ACTIONS=true GITHUB_SERVER_URL=https://github.example \
  GITHUB_REPOSITORY=ops/batch GITHUB_RUN_ID=991)" "https://github.example/ops/batch/actions/runs/991"
assert_eq "$(ci_note GITLAB_CI=true CI_JOB_URL=https://gitlab.example/ops/-/jobs/7)" \
  "https://gitlab.example/ops/-/jobs/7"
assert_eq "$(ci_note BUILDKITE=true BUILDKITE_BUILD_URL=https://buildkite.example/ops/builds/5 \
  BUILDKITE_JOB_ID=j-1)" "https://buildkite.example/ops/builds/5#j-1"
assert_eq "$(ci_note GITHUB_ACTIONS=true GITHUB_SERVER_URL=https://github.example \
  GITHUB_REPOSITORY=ops/batch GITHUB_RUN_ID=991 RCOORD_NOTE=mine)" "mine"
pass "in GitHub Actions, GitLab CI and Buildkite the default note links to the run"

# --- run forms: cmd is the command's basename, never its arguments ---------------------------
mkdir -p "$TEST_TMP/bin"
printf '#!/bin/sh\n"$RCOORD_BIN" lock status "$RCOORD_LOCK" --json > "$1"\n' >"$TEST_TMP/bin/backup.sh"
chmod +x "$TEST_TMP/bin/backup.sh"
expect 0 "$RCOORD" lock run supervised -- "$TEST_TMP/bin/backup.sh" "$TEST_TMP/seen" --secret=hunter2
OUT=$(cat "$TEST_TMP/seen")
assert_eq "$(json_of cmd)" "backup.sh" "lock run: cmd"
case "$OUT" in *hunter2*) fail "a command's argument reached the status: $OUT" ;; esac
pass "lock run records the command's basename and none of its arguments"

# A run form that holds it for a while: nothing of its arguments is in Redis either.
"$RCOORD" lock run held-run --ttl 1m -- sh -c 'echo started; sleep 60' --password=hunter2 \
  >"$TEST_TMP/held-run.out" &
track $!
wait_until 20 grep -q started "$TEST_TMP/held-run.out" || fail "lock run never started"
dump=$(redis-cli -p "$R_PORT" --raw hgetall 'rcoord:{lock:held-run}' | tr '\037' '|')
assert_contains "$dump" "|$user|sh|" "the stored identity of a run form"
case "$dump" in *hunter2*) fail "a command's argument was stored in Redis: $dump" ;; esac
pass "nothing of a run form's arguments is stored"

# --- shared readers, semaphores, elections ---------------------------------------------------
"$RCOORD" lock acquire report --shared --note reader-a >/dev/null
"$RCOORD" lock acquire report --shared --note reader-b >/dev/null
expect 0 "$RCOORD" lock status report --json
notes=$(python3 -c 'import json,sys; print(",".join(sorted(h["note"] for h in json.loads(sys.argv[1])["holders"])))' "$OUT")
assert_eq "$notes" "reader-a,reader-b" "each reader's identity"
[ "$(python3 -c 'import json,sys; print(sum(1 for h in json.loads(sys.argv[1])["holders"] if h["user"]==sys.argv[2] and h["held_ms"]>=0))' "$OUT" "$user")" = 2 ] ||
  fail "readers without user or held_ms: $OUT"
expect 0 "$RCOORD" lock status report
assert_eq "$(grep -c "^reader: [0-9a-f]* ttl_ms=[0-9]* held_ms=[0-9]* by $user@$host (pid [0-9]*, lock acquire)$" <<<"$OUT")" 2 \
  "text: one reader line each, in sem status's form: $OUT"
pass "lock status lists each reader of a shared lock with who took it"

"$RCOORD" sem take encoders --limit 3 --note enc-1 >/dev/null &
sem_taker=$!
wait "$sem_taker"
expect 0 "$RCOORD" sem status encoders --json
holder=$(python3 -c 'import json,sys; h=json.loads(sys.argv[1])["holders"][0]; print(h["pid"], h["cmd"], h["note"], h["user"], h["held_ms"] >= 0)' "$OUT")
assert_eq "$holder" "$sem_taker sem take enc-1 $user True" "sem holder identity"
expect 0 "$RCOORD" ls encoders
assert_contains "$OUT" "held by $user@$host (pid $sem_taker, sem take) for "
"$RCOORD" sem run encoders --limit 3 -- sh -c "\"$RCOORD\" sem status encoders --json > $TEST_TMP/sem-seen"
assert_contains "$(cat "$TEST_TMP/sem-seen")" '"cmd":"sh"'
pass "sem status and ls show each holder's identity; sem run records its command"

"$RCOORD" elect campaign svc --id node-a --ttl 5m >/dev/null &
leader=$!
wait "$leader"
expect 0 "$RCOORD" elect status svc --json
assert_eq "$(json_of pid) $(json_of cmd)" "$leader elect campaign" "leader identity"
expect 0 "$RCOORD" ls svc
assert_contains "$OUT" "led by node-a: $user@$host (pid $leader, elect campaign) for "
pass "elect status and ls show which process leads"

# --- queue: messages in flight and their consumers ------------------------------------------
"$RCOORD" queue push jobs a b c >/dev/null
"$RCOORD" queue pop jobs --ack-timeout 5m --note worker-1 >/dev/null &
popper=$!
wait "$popper"
expect 0 "$RCOORD" queue peek jobs --in-flight --json
assert_eq "$(json_of message) $(json_of pid) $(json_of cmd) $(json_of note)" \
  "a $popper queue pop worker-1"
[ "$(json_of lease_ms)" -gt 0 ] || fail "lease_ms: $OUT"
json_of leased_at | grep -qE '^[0-9-]{10}T' || fail "leased_at: $OUT"
expect 0 "$RCOORD" queue peek jobs --in-flight
assert_contains "$OUT" "attempt=1"
assert_contains "$OUT" "by $user@$host (pid $popper, queue pop): a"
# The consumer of `queue consume` is its command; an acked message leaves the list.
"$RCOORD" queue consume jobs --max-messages 1 -- \
  sh -c "\"$RCOORD\" queue peek jobs --in-flight --json > $TEST_TMP/consumed"
assert_contains "$(cat "$TEST_TMP/consumed")" '"cmd":"sh"'
expect 0 "$RCOORD" queue peek jobs --in-flight --json
assert_lines "$OUT" 1 "only the popped message is still in flight"
pass "queue peek --in-flight lists messages with their consumers"

# --- named connections, at no extra round trip -----------------------------------------------
"$RCOORD" lock acquire nightly --wait 1m >/dev/null &
track $!
wait_blocked "$R_PORT" 1
redis-cli -p "$R_PORT" client list | grep ' name=rcoord:lock-acquire:nightly ' >/dev/null ||
  fail "the waiter did not name itself: $(redis-cli -p "$R_PORT" client list)"
pass "a connection names itself rcoord:<group>-<verb>:<name>"

# A proxy that counts the writes of each connection it forwards: a one-shot take is one
# write (the name goes with the command) and one reply.
cat >"$TEST_TMP/count_proxy.py" <<'PY'
import socket, sys, threading
target, ports_file, counts_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)
open(ports_file, "w").write(str(listener.getsockname()[1]))
def pump(src, dst, on_chunk):
    while True:
        data = src.recv(65536)
        if not data:
            dst.shutdown(socket.SHUT_WR)
            return
        on_chunk()
        dst.sendall(data)
while True:
    client, _ = listener.accept()
    server = socket.create_connection(("127.0.0.1", target))
    writes = [0]
    def count(): writes[0] += 1
    back = threading.Thread(target=pump, args=(server, client, lambda: None))
    back.start()
    pump(client, server, count)
    back.join()
    with open(counts_file, "a") as f:
        f.write(f"{writes[0]}\n")
PY
python3 "$TEST_TMP/count_proxy.py" "$R_PORT" "$TEST_TMP/proxy-port" "$TEST_TMP/writes" &
track $!
wait_until 10 test -s "$TEST_TMP/proxy-port" || fail "the counting proxy did not start"
proxy="redis://127.0.0.1:$(cat "$TEST_TMP/proxy-port")"
expect 0 "$RCOORD" -u "$proxy" lock acquire one-trip
wait_until 10 test -s "$TEST_TMP/writes" || fail "the proxy saw no connection end"
assert_eq "$(cat "$TEST_TMP/writes")" "1" "writes of a one-shot lock acquire"
pass "a one-shot lock acquire, its connection named, is one write"

# A user whose ACL refuses CLIENT SETNAME still works: the name's error reply is dropped,
# with a password (the name goes with AUTH) and without one (it goes with the command).
redis-cli -p "$R_PORT" ACL SETUSER no-name on '>pw' '~*' '&*' +@all -client >/dev/null
expect 0 "$RCOORD" -u "redis://no-name:pw@127.0.0.1:$R_PORT" lock acquire acl-auth
redis-cli -p "$R_PORT" ACL SETUSER default -client >/dev/null
expect 0 "$RCOORD" lock acquire acl-default
expect 0 "$RCOORD" lock status acl-default --json
assert_eq "$(json_of cmd)" "lock acquire"
pass "an ACL without CLIENT SETNAME costs the name, never the command"
