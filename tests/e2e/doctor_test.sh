# rcoord doctor against servers configured each wrong way: exit 1 naming the problem and the
# fix; exit 0 on a safe server.
source "$(dirname "$0")/lib.sh"

start_redis SAFE --appendonly yes
server=$(server_of "$SAFE_PORT")
expect 0 "$RCOORD" --url "$SAFE_URL" doctor
assert_contains "$OUT" "ok    server: $server (standalone)"
assert_contains "$OUT" "ok    eviction"
assert_contains "$OUT" "ok    persistence: append-only file is on"
assert_contains "$OUT" "ok    permissions"
expect 0 "$RCOORD" --url "$SAFE_URL" doctor --json
[ "$(echo "$OUT" | wc -l)" -eq 6 ] || fail "one JSON line per check: $OUT"
line=$(echo "$OUT" | grep '"check":"server"')
assert_eq "$(json_field "$line" ok)" true
assert_eq "$(json_field "$line" detail)" "$server (standalone)"
pass "a safe server: exit 0, every check ok, the server named ($server)"

start_redis VOLATILE_NOLIMIT --appendonly yes --maxmemory-policy volatile-lru
expect 0 "$RCOORD" --url "$VOLATILE_NOLIMIT_URL" doctor
assert_contains "$OUT" "maxmemory is 0"
pass "an evicting policy without maxmemory evicts nothing"

start_redis NOPERSIST
expect 1 "$RCOORD" --url "$NOPERSIST_URL" doctor
assert_contains "$OUT" "FAIL  persistence: no persistence"
assert_contains "$OUT" "fix: CONFIG SET appendonly yes"
pass "no persistence: exit 1 with the fix"

start_redis EVICT --appendonly yes --maxmemory 50mb --maxmemory-policy allkeys-lru
expect 1 "$RCOORD" --url "$EVICT_URL" doctor --json
line=$(echo "$OUT" | grep '"check":"eviction"')
assert_eq "$(json_field "$line" ok)" false
assert_contains "$(json_field "$line" fix)" "noeviction"
pass "allkeys-lru with maxmemory: exit 1, fix names noeviction"

start_redis REPLICA --appendonly yes --replicaof 127.0.0.1 "$SAFE_PORT"
expect 1 "$RCOORD" --url "$REPLICA_URL" doctor
assert_contains "$OUT" "FAIL  replication: this server is a replica of 127.0.0.1:$SAFE_PORT"
replica_online() { redis-cli -p "$SAFE_PORT" info replication | grep -q 'state=online'; }
wait_until 10 replica_online || fail "the replica never came online"
expect 1 "$RCOORD" --url "$SAFE_URL" doctor
assert_contains "$OUT" "FAIL  replication: 1 replica(s) online, but min-replicas-to-write is 0"
assert_contains "$OUT" "CONFIG SET min-replicas-to-write 1"
redis-cli -p "$SAFE_PORT" config set min-replicas-to-write 1 >/dev/null
redis-cli -p "$SAFE_PORT" config set min-replicas-max-lag 2 >/dev/null
expect 0 "$RCOORD" --url "$SAFE_URL" doctor
assert_contains "$OUT" "1 replica(s) online, lag at most 1 s, min-replicas-to-write set"
# with the replica gone, that master refuses a take: one line that says why and what to do
kill "$REPLICA_PID"
refuses_writes() { redis-cli -p "$SAFE_PORT" set probe 1 | grep -q NOREPLICAS; }
wait_until 15 refuses_writes || fail "the master never refused a write"
expect 4 "$RCOORD" --url "$SAFE_URL" lock acquire noreplicas
assert_contains "$ERR" "NOREPLICAS"
assert_contains "$ERR" "min-replicas-to-write"
redis-cli -p "$SAFE_PORT" config set min-replicas-to-write 0 >/dev/null
expect 1 "$RCOORD" --url "$SAFE_URL" lock status noreplicas
pass "connected to a replica: exit 1; a master with an online replica: ok with min-replicas-to-write set, FAIL without; NOREPLICAS refused in one line with its fix"

redis-cli -p "$NOPERSIST_PORT" ACL SETUSER noscript on '>pw' '~*' '&*' +@all -@scripting >/dev/null
expect 1 "$RCOORD" --url "$NOPERSIST_URL" --user noscript -a pw doctor
assert_contains "$OUT" "FAIL  permissions: this user may not run: EVAL, EVALSHA"
pass "a user without scripting: exit 1 naming the refused commands"

port=$(free_port)
expect 3 "$RCOORD" --url "redis://127.0.0.1:$port" doctor
pass "unreachable: exit 3"
