# Honest messages: what the server refuses (a read-only replica, a full server under
# noeviction, a counter changed by hand) keeps the server's words and says what to do; a lost
# lease says whether the message comes again; a write whose result cannot be printed says that
# it was made. Each is one line with its documented exit code.
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
one_line 3 to_full "$RCOORD" -o json lock release released-once --token "$token"
case "$ERR" in *"released, but"*) fail "a release that released nothing says it did: $ERR" ;; esac
pass "a push, release, limit check or rm whose result cannot be written says it was made (exit 3)"
