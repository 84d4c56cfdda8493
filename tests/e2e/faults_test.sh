# Faults with real processes: the server restarts empty while `lock run` and `sem run` hold
# something (renewal reconnects, finds ownership gone: child terminated, exit 5); a server
# paused longer than --timeout (exit 3 in about the timeout).
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

restart_empty() {
  kill -9 "$R_PID"
  wait "$R_PID" 2>/dev/null || true
  local dir="$TEST_TMP/restart-$RANDOM"
  mkdir -p "$dir"
  redis-server --port "$R_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    --logfile "$dir/redis.log" &
  R_PID=$!
  _redis_pids+=("$R_PID")
  wait_until 5 redis-cli -p "$R_PORT" ping || fail "redis did not restart"
}

for verb in "lock run held --ttl 1500ms" "sem run held --limit 2 --ttl 1500ms"; do
  rm -f "$TEST_TMP/got-term"
  # shellcheck disable=SC2086
  "$RCOORD" $verb -- sh -c 'trap "touch $0; exit 143" TERM; sleep 30 & wait' "$TEST_TMP/got-term" \
    2>"$TEST_TMP/err" &
  runner=$!
  track $runner
  sleep 0.3
  restart_empty
  set +e
  wait $runner
  code=$?
  set -e
  assert_eq "$code" 5 "$verb after an empty restart"
  [ -e "$TEST_TMP/got-term" ] || fail "$verb: the command did not get SIGTERM"
  assert_contains "$(cat "$TEST_TMP/err")" "was lost while the command ran"
  pass "${verb%% *} run: server restarted empty, command terminated, exit 5"
done

# A restart that keeps nothing still lets new work start at once (reconnect, fresh state).
expect 0 "$RCOORD" lock acquire after-restart
expect 0 "$RCOORD" sem take after-restart --limit 1

# Paused longer than --timeout: every kind of command exits 3 in about the timeout.
redis-cli -p "$R_PORT" client pause 3000 all >/dev/null
for cmd in "lock acquire p" "lock status p" "sem take p --limit 1" "sem status p" "ping"; do
  start=$(now_ms)
  # shellcheck disable=SC2086
  expect 3 "$RCOORD" --timeout 400ms $cmd
  took=$(($(now_ms) - start))
  [ "$took" -lt 1200 ] || fail "'$cmd' took ${took}ms to give up with --timeout 400ms"
done
pass "paused server: every command exits 3 within about --timeout"
sleep 1.5
