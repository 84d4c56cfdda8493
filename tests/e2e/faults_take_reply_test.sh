# A take whose reply is lost leaves nothing held: exit 3 means nothing is held, for every verb
# that takes something (lock acquire, --shared, a refresh with the holder's token, lock run,
# sem take, sem run, elect campaign, elect run, a Redlock acquire).
#   - The take ran, its reply was lost (the proxy discards every reply on that connection):
#     rcoord gives back by its token on a fresh connection and says so; free at once.
#   - The same, the connection reset (RST) instead of timing out.
#   - The server froze with the request unread (SIGSTOP): rcoord gives up after --timeout,
#     resetting the connection, so the request is never run; once the server goes on, the
#     object is free.
source "$(dirname "$0")/faults_lib.sh"
start_redis R
export RCOORD_URL=$R_URL
start_proxy P "$R_PORT"

lock_free() { ! "$RCOORD" lock status "$1" >/dev/null; }
sem_free() { ! "$RCOORD" sem status "$1" >/dev/null; } # exit 1: no holder
leader_free() { ! "$RCOORD" elect status "$1" >/dev/null; }

# check_gave_up NAME CODE TOOK BOUND: exit 3, nothing on stdout, one line on stderr saying
# what became of the take, within BOUND ms.
check_gave_up() {
  assert_eq "$2" 3 "$1: exit code when the reply is lost ($(cat "$TEST_TMP/err"))"
  [ ! -s "$TEST_TMP/out" ] || fail "$1 printed a result it does not hold: $(cat "$TEST_TMP/out")"
  assert_lines "$(cat "$TEST_TMP/err")" 1 "$1: one line on stderr"
  [ "$3" -lt "$(scaled "$4")" ] || fail "$1 took ${3}ms to give up"
  [ ! -e "$TEST_TMP/ran" ] || fail "$1: the command ran without the lease"
}

# reply_lost NAME CHECK-FREE TAKE...: TAKE (--timeout 500ms, through the proxy) runs on the
# server, its reply is lost; it must give back at once, confirmed.
reply_lost() {
  local name=$1 free=$2 start code took
  shift 2
  proxy_ctl P "lose-replies 1" >/dev/null
  start=$(now_ms)
  set +e
  "$RCOORD" --url "$P_URL" --timeout 500ms "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
  code=$?
  set -e
  took=$(($(now_ms) - start))
  check_gave_up "$name" "$code" "$took" 2500
  assert_contains "$(cat "$TEST_TMP/err")" "nothing is held: what it may have taken was given back"
  $free || fail "$name: still held after exit 3 (the take that ran was never given back)"
  pass "$name: the take ran, its reply was lost: exit 3 after ${took}ms, given back"
}

reply_lost "lock acquire" "lock_free a" lock acquire a --ttl 1h
reply_lost "lock acquire --shared" "lock_free b" lock acquire b --ttl 1h --shared
reply_lost "lock run" "lock_free c" lock run c --ttl 1h -- touch "$TEST_TMP/ran"
reply_lost "sem take" "sem_free d" sem take d --limit 1 --ttl 1h
reply_lost "sem run" "sem_free e" sem run e --limit 1 --ttl 1h -- touch "$TEST_TMP/ran"
reply_lost "elect campaign" "leader_free f" elect campaign f --id me --ttl 1h
reply_lost "elect run" "leader_free g" elect run g --id me --ttl 1h -- touch "$TEST_TMP/ran"
# The holder refreshing with its own token: exit 3 means it holds nothing now.
expect 0 "$RCOORD" lock acquire h --ttl 1h
reply_lost "lock acquire --token (a refresh)" "lock_free h" lock acquire h --ttl 1h --token "$OUT"

# The connection is reset after the take ran (no timeout): given back just the same.
proxy_ctl P "lose-replies 1" >/dev/null
"$RCOORD" --url "$P_URL" --timeout 5s lock acquire cut --ttl 1h >"$TEST_TMP/out" \
  2>"$TEST_TMP/err" &
taker=$!
track $taker
wait_until 10 "$RCOORD" lock status cut || fail "the take never ran"
start=$(now_ms)
proxy_ctl P cut >/dev/null
code=0; wait $taker || code=$?
check_gave_up "a reset connection" "$code" $(($(now_ms) - start)) 2000
assert_contains "$(cat "$TEST_TMP/err")" "nothing is held"
lock_free cut || fail "a reset connection left lock 'cut' held"
pass "the connection reset after the take ran: exit 3, given back"

# frozen NAME CHECK-FREE TAKE...: the server is stopped, TAKE (--timeout 500ms) gives up;
# once the server goes on, nothing is held (the reset connection's request is never run,
# or if it ran, the give-back that follows it frees it).
frozen() {
  local name=$1 free=$2 start code took
  shift 2
  kill -STOP "$R_PID"
  start=$(now_ms)
  set +e
  "$RCOORD" --timeout 500ms "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
  code=$?
  set -e
  took=$(($(now_ms) - start))
  kill -CONT "$R_PID"
  check_gave_up "$name" "$code" "$took" 2500
  assert_contains "$(cat "$TEST_TMP/err")" "given back"
  # Whatever the server still finds in its sockets runs now: give it time to.
  redis-cli -p "$R_PORT" ping >/dev/null
  $free || fail "$name: held once the frozen server went on"
  pass "$name: frozen server: exit 3 after ${took}ms, nothing held once it goes on"
}

frozen "lock acquire (frozen)" "lock_free fa" lock acquire fa --ttl 1h
frozen "lock run (frozen)" "lock_free fb" lock run fb --ttl 1h -- touch "$TEST_TMP/ran"
frozen "sem take (frozen)" "sem_free fc" sem take fc --limit 1 --ttl 1h
frozen "elect campaign (frozen)" "leader_free fd" elect campaign fd --id me --ttl 1h

# Redlock over three nodes, the replies of two of them lost: no quorum, exit 3, and what the
# two nodes granted is given back there.
start_redis N2
start_redis N3
start_proxy P2 "$N2_PORT"
start_proxy P3 "$N3_PORT"
# Two connections each: a Redlock first asks every node for its run_id (one server given twice
# is one vote), and a node whose INFO reply is lost is connected to again for the take.
proxy_ctl P2 "lose-replies 2" >/dev/null
proxy_ctl P3 "lose-replies 2" >/dev/null
start=$(now_ms)
rc "$RCOORD" --timeout 500ms -u "$R_URL" -u "$P2_URL" -u "$P3_URL" lock acquire rl --ttl 1h
took=$(($(now_ms) - start))
assert_eq "$RC" 3 "Redlock with the replies of two of three nodes lost ($ERR)"
[ "$took" -lt "$(scaled 2500)" ] || fail "Redlock took ${took}ms to give up"
for url in "$R_URL" "$N2_URL" "$N3_URL"; do
  expect 1 "$RCOORD" -u "$url" lock status rl
done
pass "Redlock: the replies of two of three nodes lost: exit 3, nothing held on any node"
