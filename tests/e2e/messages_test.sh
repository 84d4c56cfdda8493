# Honest messages: what the server refuses (a read-only replica, a password it wants, protected
# mode, TLS to a plain port, a full server under noeviction, a counter changed by hand) keeps
# the server's words and says what to do; a lost lease says whether the message comes again; a
# write whose result cannot be printed says that it was made. Each is one line with its
# documented exit code.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
cli() { redis-cli -p "$R_PORT" "$@"; }

# one_line CODE CMD...: exits CODE with one `rcoord: ...` line on stderr.
one_line() {
  local want=$1
  shift
  expect "$want" "$@"
  assert_lines "$ERR" 1 "stderr of: $*"
  case "$ERR" in rcoord:*) ;; *) fail "stderr does not start with 'rcoord:' for: $* | $ERR" ;; esac
}

# --- a read-only replica ------------------------------------------------------------------
start_redis REPLICA --replicaof 127.0.0.1 "$R_PORT"
one_line 4 "$RCOORD" -u "$REPLICA_URL" lock acquire on-replica
assert_contains "$ERR" "READONLY You can't write against a read only replica"
assert_contains "$ERR" "point --url at its master, or find the master with --sentinel"
one_line 4 "$RCOORD" -u "$REPLICA_URL" queue push on-replica m
assert_contains "$ERR" "--sentinel"
pass "a write to a replica: the server's words, and where to point instead (exit 4)"

# --- a server that wants a password, and none given ----------------------------------------
# A short command is answered NOAUTH; a script's many arguments a protocol error ("ERR
# Protocol error: unauthenticated multibulk length"), after which the server closes. Both are
# the same missing password, said so, with the ways to give one; nothing was taken, so no
# word of giving anything back.
start_redis AUTH --requirepass s3cret-pw
for cmd in "ping" "lock acquire a" "lock run a -- true" "sem take s --limit 1" \
  "elect campaign e --id me" "queue push q m" "queue pop q" "limit check l --rate 1/s" \
  "bloom add b x" "signal wait c --wait 1s" "ls"; do
  # shellcheck disable=SC2086
  one_line 3 env -u RCOORD_PASSWORD -u REDISCLI_AUTH "$RCOORD" -u "$AUTH_URL" $cmd
  assert_contains "$ERR" "authentication required (NOAUTH): the server needs a password and none was given" "$cmd"
  assert_contains "$ERR" "--password-file FILE, RCOORD_PASSWORD or REDISCLI_AUTH" "$cmd"
  assert_contains "$ERR" "redis://:PASSWORD@HOST:PORT" "$cmd"
  case "$ERR" in *"given back"*) fail "$cmd: $ERR" ;; esac
done
expect 0 env RCOORD_PASSWORD=s3cret-pw "$RCOORD" -u "$AUTH_URL" lock acquire a
expect 0 env REDISCLI_AUTH=s3cret-pw "$RCOORD" -u "$AUTH_URL" ping
pass "no password for a server that wants one: NOAUTH named, how to give it, nothing 'given back' (exit 3)"

# --- protected mode -------------------------------------------------------------------------
# Redis refuses a client in protected mode only when its address is not loopback (every
# 127.x.y.z and ::1 counts as loopback), so a test on 127.0.0.1 cannot provoke the real one.
# This listener answers each connection as such a server does: at once, with a DENIED error
# that says how to mend it, then it closes.
cat >"$TEST_TMP/denied.py" <<'PY'
import os, socket, sys
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(server.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    conn, _ = server.accept()
    conn.sendall(b"-DENIED Redis is running in protected mode because protected mode is enabled "
                 b"and no password is set for the default user. To accept other hosts, set a "
                 b"password or restart it with the '--protected-mode no' option.\r\n")
    conn.close()
PY
python3 "$TEST_TMP/denied.py" "$TEST_TMP/denied-port" &
track $!
wait_until 10 test -s "$TEST_TMP/denied-port" || fail "the protected-mode listener did not start"
denied_url=redis://127.0.0.1:$(cat "$TEST_TMP/denied-port")
for cmd in "ping" "lock acquire a" "lock run a -- true" "queue push q m" "bloom add b x" \
  "signal wait c --wait 1s" "ls"; do
  # shellcheck disable=SC2086
  one_line 3 "$RCOORD" -u "$denied_url" $cmd
  assert_contains "$ERR" "refused this client: DENIED Redis is running in protected mode" "$cmd"
  assert_contains "$ERR" "restart it with the '--protected-mode no' option" "$cmd"
  assert_contains "$ERR" "with a password set" "$cmd"
  case "$ERR" in *"given back"*) fail "$cmd: $ERR" ;; esac
done
pass "protected mode: the server's DENIED words reach the user, with what to do (exit 3)"

# --- TLS to a plain port -------------------------------------------------------------------
# A plain Redis reads a TLS ClientHello as the start of an inline command and waits for its
# end: the handshake alone would last the whole --timeout. It fails within a fraction of it.
for cmd in "ping" "lock acquire tls-on-plain"; do
  start=$(now_ms)
  # shellcheck disable=SC2086
  one_line 3 "$RCOORD" --timeout 20s -u "rediss://127.0.0.1:$R_PORT" --tls-insecure $cmd
  took=$(($(now_ms) - start))
  [ "$took" -lt "$(scaled 3000)" ] || fail "TLS to a plain port took ${took}ms of a 20s --timeout"
  assert_contains "$ERR" "the server at 127.0.0.1:$R_PORT did not answer TLS: it speaks plain Redis"
  assert_contains "$ERR" "drop TLS: use redis:// instead of rediss://, without --tls; or use the server's TLS port"
done
one_line 3 "$RCOORD" --timeout 20s -h 127.0.0.1 -p "$R_PORT" --tls --insecure ping
assert_contains "$ERR" "did not answer TLS"
pass "TLS to a plain port: exit 3 within a fraction of --timeout, saying to drop TLS"

# --- a full server under noeviction -------------------------------------------------------
start_redis FULL --maxmemory-policy noeviction
head -c 3000000 /dev/zero | redis-cli -p "$FULL_PORT" -x set filler >/dev/null
redis-cli -p "$FULL_PORT" config set maxmemory 1mb >/dev/null # now below what it holds
one_line 4 "$RCOORD" -u "$FULL_URL" lock acquire on-full
assert_contains "$ERR" "OOM command not allowed"
assert_contains "$ERR" "free memory"
pass "a write to a full server: the server's words, and to free memory (exit 4)"

# --- a counter changed by hand ------------------------------------------------------------
cli set 'rcoord:{lock:broken-fence}:fence' abc >/dev/null
one_line 4 "$RCOORD" lock acquire broken-fence
assert_contains "$ERR" "lock 'broken-fence': key 'rcoord:{lock:broken-fence}:fence' does not hold an integer"
assert_contains "$ERR" "not an integer or out of range"
assert_contains "$ERR" "redis-cli DEL 'rcoord:{lock:broken-fence}:fence'"
assert_contains "$ERR" "the next number is taken from the server's clock"
cli set 'rcoord:{elect:broken-term}:term' 1.5 >/dev/null
one_line 4 "$RCOORD" elect campaign broken-term --id a
assert_contains "$ERR" "key 'rcoord:{elect:broken-term}:term' does not hold an integer"
cli del 'rcoord:{lock:broken-fence}:fence' >/dev/null
expect 0 "$RCOORD" lock acquire broken-fence
pass "a fence or term counter that is no integer: named, with how to mend it (exit 4)"

# --- a lease lost because the data is gone -------------------------------------------------
cli rpush x y >/dev/null # (the flush below must have something else to drop too)
"$RCOORD" queue push flushed m >/dev/null
"$RCOORD" --timeout 500ms queue consume flushed --ack-timeout 3s --max-messages 1 -- \
  sh -c "touch '$TEST_TMP/started'; exec sleep 60" 2>"$TEST_TMP/consume.err" &
consumer=$!
track "$consumer"
wait_until 10 test -e "$TEST_TMP/started" ||
  fail "the command never started: $(cat "$TEST_TMP/consume.err")"
cli flushall >/dev/null
code=0
wait "$consumer" || code=$?
[ "$code" != 0 ] || fail "consume exited 0 after losing its lease"
err=$(cat "$TEST_TMP/consume.err")
assert_contains "$err" "was lost while the command ran"
assert_contains "$err" "it will not be delivered again"
case "$err" in *"the message will be delivered again"*) fail "promised a delivery: $err" ;; esac
pass "a lease lost to a FLUSHALL does not promise another delivery"

# --- a write whose result cannot be written -----------------------------------------------
[ -w /dev/full ] || fail "no /dev/full on this machine"
# to_full CMD...: CMD with its stdout on a full disk.
to_full() { "$@" >/dev/full; }
one_line 3 to_full "$RCOORD" queue push pushed-once m
assert_contains "$ERR" "queue 'pushed-once': pushed, but the result could not be written to stdout"
assert_contains "$ERR" "do not repeat it"
expect 0 "$RCOORD" queue len pushed-once
assert_eq "$OUT" 1 "the push was made"
token=$("$RCOORD" lock acquire released-once)
one_line 3 to_full "$RCOORD" lock release released-once --token "$token"
assert_contains "$ERR" "lock 'released-once': released, but"
expect 1 "$RCOORD" lock status released-once
one_line 3 to_full "$RCOORD" limit check counted-once --rate 5/h
assert_contains "$ERR" "limit 'counted-once': allowed and counted, but"
"$RCOORD" pf add removed-once x >/dev/null
one_line 3 to_full "$RCOORD" rm removed-once --type pf
assert_contains "$ERR" "HyperLogLog 'removed-once': removed, but"
# A call that changed nothing says nothing of the kind.
# (In JSON mode, where a "no" is an object to write; the error line is followed by its JSON.)
expect 3 to_full "$RCOORD" -o json lock release released-once --token "$token"
assert_lines "$ERR" 2 "the error line and its JSON"
assert_contains "$(sed -n 2p <<<"$ERR")" '"exit_code":3}'
case "$ERR" in *"released, but"*) fail "a release that released nothing says it did: $ERR" ;; esac
pass "a push, release, limit check or rm whose result cannot be written says it was made (exit 3)"
