# Redlock: `lock` over five independent redis-servers. JSON fields, quorum with nodes down
# (2 of 5 stopped works, 3 stopped is exit 3 naming how many answered), a majority holder
# blocks others, a minority one does not, fences increase across different majorities,
# `lock run` releases on every node and exits 5 when the quorum is lost, usage errors.
source "$(dirname "$0")/lib.sh"
for n in 1 2 3 4 5; do start_redis "N$n"; done
NODES=("$N1_URL" "$N2_URL" "$N3_URL" "$N4_URL" "$N5_URL")
URLS=()
for u in "${NODES[@]}"; do URLS+=(-u "$u"); done
rl() { "$RCOORD" "${URLS[@]}" "$@"; }
# one node alone, as a plain single-server lock
on() {
  local url=${NODES[$(($1 - 1))]}
  shift
  "$RCOORD" -u "$url" "$@"
}

# acquire / status / extend / release: the Redlock fields (a lease long enough that no slow
# step below outlasts it)
"$RCOORD" "${URLS[@]}" lock acquire job --ttl 1m --json --note redlock-note >"$TEST_TMP/acq" &
taker=$!
wait $taker || fail "the Redlock acquire failed: $(cat "$TEST_TMP/acq")"
acq=$(cat "$TEST_TMP/acq")
assert_eq "$(json_field "$acq" acquired)" true
assert_eq "$(json_field "$acq" nodes)" 5
assert_eq "$(json_field "$acq" quorum)" 3
assert_eq "$(json_field "$acq" acquired_on)" 5
validity=$(json_field "$acq" validity_ms)
[ "$validity" -gt 30000 ] && [ "$validity" -lt 60000 ] || fail "validity_ms $validity not in (30000, 60000)"
token=$(json_field "$acq" token)
[[ $token =~ ^[0-9a-f]{32}$ ]] || fail "token: $acq"
for n in 1 2 3 4 5; do
  expect 0 on $n lock status job
  assert_contains "$OUT" "token: $token" "node $n holds the Redlock's token"
done
expect 0 rl lock status job --json
assert_eq "$(json_field "$OUT" held)" true
assert_eq "$(json_field "$OUT" token)" "$token"
assert_eq "$(json_field "$OUT" acquired_on)" 5
assert_eq "$(json_field "$OUT" fence)" "$(json_field "$acq" fence)"
# who took it (SPEC §5): every node recorded the same taker
assert_eq "$(json_field "$OUT" note) $(json_field "$OUT" pid) $(json_field "$OUT" cmd)" \
  "redlock-note $taker lock acquire"
[ "$(json_field "$OUT" held_ms)" -ge 0 ] || fail "Redlock status without held_ms: $OUT"
expect 0 rl lock extend job --token "$token" --ttl 10m --json
assert_eq "$(json_field "$OUT" extended)" true
assert_eq "$(json_field "$OUT" acquired_on)" 5
[ "$(json_field "$OUT" validity_ms)" -gt 300000 ] || fail "extend validity: $OUT"
expect 0 on 3 lock status job --json
[ "$(json_field "$OUT" ttl_ms)" -gt 300000 ] || fail "extend did not reach node 3: $OUT"
expect 1 rl lock extend job --token wrong
expect 1 rl lock release job --token wrong
expect 0 rl lock release job --token "$token" --json
assert_eq "$(json_field "$OUT" released_on)" 5
for n in 1 2 3 4 5; do expect 1 on $n lock status job; done
expect 1 rl lock status job
expect 0 rl lock acquire job
assert_lines "$OUT" 1 "text output is the token alone"
expect 0 rl lock release job --token "$OUT"
pass "acquire/status/extend/release with nodes, quorum, acquired_on, validity_ms"

# a holder on a majority blocks a second acquirer; one on a minority does not
expect 0 rl lock acquire held --ttl 10m
holder=$OUT
expect 1 rl lock acquire held --json
assert_eq "$(json_field "$OUT" acquired)" false
[ "$(json_field "$OUT" ttl_ms)" -gt 10000 ] || fail "busy ttl_ms: $OUT"
expect 1 rl lock run held -- touch "$TEST_TMP/ran"
[ ! -e "$TEST_TMP/ran" ] || fail "lock run ran its command while a majority held the lock"
for n in 1 2 3 4 5; do
  expect 0 on $n lock status held
  assert_contains "$OUT" "token: $holder" "a failed attempt left the holder alone on node $n"
done
expect 0 on 1 lock acquire minority --ttl 10m
expect 0 on 2 lock acquire minority --ttl 10m
expect 0 rl lock acquire minority --json
assert_eq "$(json_field "$OUT" acquired_on)" 3 "granted by the three free nodes"
pass "a majority holder blocks (exit 1, nothing left behind); a minority one does not"

# attempted PORT: a client of the node on PORT stays connected after running a script: a
# Redlock waiter between its tries (a one-shot command disconnects when it is done)
attempted() { redis-cli -p "$1" client list | grep -E ' cmd=evalsha ' >/dev/null; }

# --wait: taken once the holder releases (retrying with a backoff of at most 100 ms)
rl lock acquire held --wait 1m --ttl 10m --json >"$TEST_TMP/waited.json" &
waiter=$!
track $waiter
wait_until 10 attempted "$N1_PORT" || fail "the waiter never tried"
start=$(now_ms)
expect 0 rl lock release held --token "$holder"
wait $waiter || fail "the waiter did not acquire after the release"
took=$(($(now_ms) - start))
assert_eq "$(json_field "$(cat "$TEST_TMP/waited.json")" acquired)" true
[ "$took" -lt "$(scaled 2000)" ] || fail "acquired ${took}ms after the release"
expect 1 rl lock acquire held --wait 300ms
pass "--wait acquires after the release (${took}ms) and gives up in time"

# history: each node keeps its own; the Redlock's is what a majority of them recorded. A
# wait that ran out is one `busy`, however many rounds it tried.
expect 0 rl lock acquire hist --ttl 10m
htoken=$OUT
expect 1 rl lock acquire hist --wait 300ms
expect 0 rl lock release hist --token "$htoken"
expect 0 on 1 lock acquire hist --ttl 10m # one node alone: no majority has it
expect 0 rl -o json history hist
events=$(event_names "$OUT")
assert_eq "$events" "acquired busy released" "the merged history of the Redlock"
expect 2 rl history hist --follow
expect 2 rl history hist --type sem
pass "history: what a majority of nodes recorded; one busy for a wait that ran out"

# a termination signal while waiting aborts at once and leaves nothing behind on any node
# (SIGTERM: a background job of this non-interactive shell starts with SIGINT ignored)
# The holder is the waiter above. It took the lock on the nodes that had seen the release when
# its attempt reached them: a quorum, not always all five. What it holds must not change.
expect 0 rl lock status held --json
holder=$(json_field "$OUT" token)
held_on=$(json_field "$OUT" acquired_on)
[ "$held_on" -ge 3 ] || fail "the holder holds it on $held_on nodes, fewer than a quorum"
"$RCOORD" "${URLS[@]}" lock acquire held --wait forever >"$TEST_TMP/acq.out" 2>/dev/null &
waiter=$!
track $waiter
wait_until 10 attempted "$N1_PORT" || fail "the waiter never tried"
kill -TERM $waiter
code=0; wait $waiter || code=$?
assert_eq "$code" 143 "exit code of a waiter interrupted by SIGTERM"
assert_eq "$(cat "$TEST_TMP/acq.out")" "" "no token printed"
# It left the nodes' waiting sets on its way out (not 3 s later, when its heartbeat ran out).
# The holder may still be listed on a node where it found the lock busy and did not take it.
for port in "$N1_PORT" "$N2_PORT" "$N3_PORT" "$N4_PORT" "$N5_PORT"; do
  for waiting in $(redis-cli -p "$port" zrange 'rcoord:{lock:held}:writers' 0 -1); do
    assert_eq "$waiting" "$holder" "a waiting writer on the node at $port after the waiter's SIGTERM"
  done
done
expect 0 rl lock status held --json
assert_eq "$(json_field "$OUT" token)" "$holder"
assert_eq "$(json_field "$OUT" acquired_on)" "$held_on" "the holder holds it where it did"
for n in 1 2 3 4 5; do
  node_token=$(json_field "$(on "$n" lock status held --json || true)" token)
  [ -z "$node_token" ] || [ "$node_token" = "$holder" ] ||
    fail "node $n: held by '$node_token', not by the holder: the waiter left its take behind"
done
pass "SIGTERM while waiting: exit 143, nothing left behind"

# fences: each acquisition's fence is above every earlier one, even when the majorities
# differ. Node 1's own counter is pushed far ahead first; without the raise step, a later
# majority without node 1 would hand out a smaller fence.
for i in $(seq 1 10); do
  t=$(on 1 lock acquire fenced)
  on 1 lock release fenced --token "$t" >/dev/null
done
block() { # block NODE...: a plain holder on those nodes keeps the Redlock off them
  local n
  for n in "$@"; do on "$n" lock acquire fenced --token blocker --ttl 20s >/dev/null; done
}
unblock() {
  local n
  for n in "$@"; do on "$n" lock release fenced --token blocker >/dev/null; done
}
last=0
for majority in "4 5:1 2 3" "1 2:3 4 5" "3 4:1 2 5" "1 5:2 3 4"; do
  blocked=${majority%%:*}
  # shellcheck disable=SC2086
  block $blocked
  expect 0 rl lock acquire fenced --json
  fence=$(json_field "$OUT" fence)
  assert_eq "$(json_field "$OUT" acquired_on)" 3 "granted by ${majority#*:}"
  [ "$fence" -gt "$last" ] || fail "fence $fence after $last (majority ${majority#*:})"
  rl lock release fenced --token "$(json_field "$OUT" token)" >/dev/null
  # shellcheck disable=SC2086
  unblock $blocked
  last=$fence
done
pass "fence strictly increases across acquisitions on different majorities (last $last)"

# The nodes agree on the fence the client proposes, so a take is one script per node: no
# second round trip to raise the fences to the highest (lock_fence_raise). Counted in each
# node's command statistics: 5 takes and 5 give-backs are 10 scripts, not 15.
scripts_run() { # PORT: the scripts the node on PORT ran since its statistics were reset
  redis-cli -p "$1" info commandstats |
    awk -F'[=,:]' '/^cmdstat_eval(sha)?:/ { n += $3 } END { print n + 0 }'
}
expect 0 rl lock acquire agreed --json # the scripts are loaded from here on
rl lock release agreed --token "$(json_field "$OUT" token)" >/dev/null
for n in 1 2 3 4 5; do port="N${n}_PORT"; redis-cli -p "${!port}" config resetstat >/dev/null; done
fences=()
for i in 1 2 3 4 5; do
  expect 0 rl lock acquire agreed --json
  fences+=("$(json_field "$OUT" fence)")
  rl lock release agreed --token "$(json_field "$OUT" token)" >/dev/null
done
for n in 1 2 3 4 5; do
  port="N${n}_PORT"
  assert_eq "$(scripts_run "${!port}")" 10 "node $n: one script per take and per give-back"
  expect 1 on "$n" lock status agreed
done
for i in 1 2 3 4; do
  [ "${fences[$i]}" -gt "${fences[$((i - 1))]}" ] || fail "fences not increasing: ${fences[*]}"
done
pass "a Redlock take runs one script per node: the nodes agree on the fence (${fences[*]})"

# lock run: the child runs with the Redlock's token and fence, and it is released everywhere
expect 7 rl lock run runjob -- sh -c 'echo "$RCOORD_TOKEN $RCOORD_FENCE"; exit 7'
read -r tok fence <<<"$OUT"
[[ $tok =~ ^[0-9a-f]{32}$ ]] || fail "RCOORD_TOKEN: $OUT"
[ "$fence" -gt 0 ] || fail "RCOORD_FENCE: $OUT"
for n in 1 2 3 4 5; do expect 1 on $n lock status runjob; done
expect 0 rl -o json history runjob
assert_eq "$(event_names "$OUT")" "acquired released" "the history of a Redlock run"
assert_eq "$(json_field "$(sed -n 2p <<<"$OUT")" exit_code)" 7 "the release records the exit code"
pass "lock run: child's code, RCOORD_TOKEN/FENCE, released on every node"
expect 127 rl lock run nocmd --min-hold 1h -- /nonexistent/cmd
for n in 1 2 3 4 5; do expect 1 on $n lock status nocmd; done
pass "lock run with a command that cannot run takes the Redlock nowhere"

# --min-hold keeps the Redlock on every node, and each records the hold's end now (kept_ms)
expect 4 rl lock run kept --min-hold 1h -- sh -c 'exit 4'
for n in 1 2 3 4 5; do expect 0 on $n lock status kept; done
expect 0 rl -o json history kept
events=$(event_names "$OUT")
assert_eq "$events" "acquired released" "the history of a kept Redlock"
assert_released_kept "$(sed -n 2p <<<"$OUT")" 4 3000000
# Its status says the lock is only kept: when the command ended, with its code.
expect 0 rl lock status kept --json
assert_status_kept "$OUT" 4
pass "lock run --min-hold: kept on every node, released with kept_ms in the history"

# lock run renews by Redlock extend; losing the quorum (broken on 3 nodes) is exit 5
rl --timeout 500ms lock run lost --ttl 3s --kill-grace 1s -- sleep 30 >"$TEST_TMP/lost.out" \
  2>"$TEST_TMP/lost.err" &
runner=$!
track $runner
wait_until 5 rl lock status lost || fail "lock run never took the lock"
sleep 4 # longer than the TTL: only renewal keeps it
expect 0 rl lock status lost
for n in 1 2 3; do on $n lock break lost >/dev/null; done
code=0; wait $runner || code=$?
assert_eq "$code" 5 "exit code after the quorum was lost"
assert_contains "$(cat "$TEST_TMP/lost.err")" "was lost"
expect 0 rl -o json history lost
assert_contains "$(event_names "$OUT")" "lost" "the loss in the Redlock's history"
pass "lock run renews through the TTL and exits 5 when the quorum is lost"

# a node that hangs (stopped, so it accepts connections but never answers) costs the short
# per-node timeout (a tenth of the TTL here), not the 10s I/O timeout, and the other three
# still make a quorum
kill -STOP "$N4_PID" "$N5_PID"
start=$(now_ms)
expect 0 rl --timeout 10s lock acquire hang --ttl 5s --json
took=$(($(now_ms) - start))
kill -CONT "$N4_PID" "$N5_PID"
assert_eq "$(json_field "$OUT" acquired_on)" 3
[ "$took" -lt "$(scaled 5000)" ] || fail "two hanging nodes delayed the acquisition by ${took}ms"
expect 0 rl lock release hang --token "$(json_field "$OUT" token)"
pass "two hanging nodes: acquired on the other three in ${took}ms"

# passwords: a password given apart (here $RCOORD_PASSWORD) serves the URLs without one; a
# URL's own password serves its node (`:other@`: with a password given apart, a bare `other@`
# would name the node's ACL user, as for one URL)
start_redis P1 --requirepass pw
start_redis P2 --requirepass pw
start_redis P3 --requirepass other
expect 0 env RCOORD_PASSWORD=pw "$RCOORD" -u "$P1_URL" -u "$P2_URL" \
  -u "redis://:other@127.0.0.1:$P3_PORT" lock acquire secret --json
assert_eq "$(json_field "$OUT" acquired_on)" 3 "each node accepted its password"
pass "a separate password applies to URLs without one; a URL's own password wins"

# usage errors
expect 2 "$RCOORD" -u "$N1_URL" -u "$N2_URL" lock acquire x
assert_contains "$ERR" "3 or more"
expect 2 rl sem take x --limit 2
assert_contains "$ERR" "sem"
expect 2 rl lock acquire x --shared
assert_contains "$ERR" "--shared"
expect 2 rl -p 6379 lock acquire x
expect 2 rl --wait-replicas 1 lock acquire x
pass "2 URLs, other groups, --shared and -p with several URLs are usage errors"

# 2 of 5 stopped: still works
kill -9 "$N4_PID" "$N5_PID"
{ wait "$N4_PID" "$N5_PID"; } 2>/dev/null || true
expect 0 rl lock acquire down --json --ttl 10s
assert_eq "$(json_field "$OUT" acquired_on)" 3
token=$(json_field "$OUT" token)
expect 0 rl lock status down
expect 0 rl lock extend down --token "$token"
expect 1 rl lock acquire down
expect 0 rl lock release down --token "$token"
expect 0 rl lock run down -- true
pass "with 2 of 5 nodes stopped, acquire/status/extend/release/run work"

expect 0 rl ping
assert_contains "$OUT" "mode: redlock"
assert_contains "$OUT" "nodes: 5"
assert_eq "$(printf '%s\n' "$OUT" | grep -c ' node rtt_us=')" 3 "three nodes answer"
assert_eq "$(printf '%s\n' "$OUT" | grep -c ' node down (')" 2 "two nodes are down"
expect 0 rl ping --json
assert_eq "$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["nodes"]))' "$OUT")" 5
pass "ping reports the redlock mode and each node's round trip, or why it is down"

# 3 of 5 stopped: exit 3, saying how many answered
kill -9 "$N3_PID"
{ wait "$N3_PID"; } 2>/dev/null || true
for verb in "acquire down" "status down" "release down --token $token" "extend down --token $token"; do
  # shellcheck disable=SC2086
  expect 3 rl lock $verb
  assert_contains "$ERR" "only 2 of 5 Redis nodes answered; Redlock needs 3" "lock $verb"
done
expect 3 rl lock run down -- touch "$TEST_TMP/ran-no-quorum"
[ ! -e "$TEST_TMP/ran-no-quorum" ] || fail "lock run ran without a quorum"
expect 1 on 1 lock status down
pass "with 3 of 5 stopped: exit 3, 'only 2 of 5 Redis nodes answered', nothing left held"
