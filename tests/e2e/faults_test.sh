# Faults with real processes: the server restarts empty while `lock run`, `sem run` and
# `elect run` hold something (renewal reconnects, finds ownership gone: child terminated,
# exit 5) and while `queue consume` runs a message (lease lost: command terminated, consumer
# reconnects and goes on); a server paused longer than --timeout (exit 3 in about the timeout).
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
  wait_until 5 _is_server_on_port "$R_PID" "$R_PORT" || fail "redis did not restart"
}

for verb in "lock run held --ttl 1500ms" "sem run held --limit 2 --ttl 1500ms" \
  "elect run held --id me --ttl 1500ms"; do
  rm -f "$TEST_TMP/got-term" "$TEST_TMP/ready"
  # shellcheck disable=SC2086
  "$RCOORD" --timeout 300ms $verb -- sh -c 'trap "touch $0; exit 143" TERM; touch "$1"; sleep 30 & wait' \
    "$TEST_TMP/got-term" "$TEST_TMP/ready" 2>"$TEST_TMP/err" &
  runner=$!
  track $runner
  # the command runs (so it is held) and has its trap set
  wait_until 10 test -e "$TEST_TMP/ready" || fail "$verb never started its command"
  restart_empty
  code=0; wait $runner || code=$?
  assert_eq "$code" 5 "$verb after an empty restart"
  [ -e "$TEST_TMP/got-term" ] || fail "$verb: the command did not get SIGTERM"
  assert_contains "$(cat "$TEST_TMP/err")" "was lost while the command ran"
  pass "${verb%% *} run: server restarted empty, command terminated, exit 5"
done

# queue consume: the message's lease is gone after the restart, so its command is terminated
# (not acked or nacked); the consumer reconnects and handles what is pushed afterwards.
cat >"$TEST_TMP/handle.sh" <<SH
trap 'echo TERM >"$TEST_TMP/slow-term"; exit 143' TERM
msg=\$(cat)
echo "\$msg" >>"$TEST_TMP/handled"
if [ "\$msg" = slow ]; then
  sleep 30 &
  wait
fi
SH
expect 0 "$RCOORD" queue push jobs slow
"$RCOORD" --timeout 300ms queue consume jobs --ack-timeout 1500ms -- sh "$TEST_TMP/handle.sh" \
  2>"$TEST_TMP/consume.err" &
consumer=$!
track $consumer
wait_until 5 grep -q slow "$TEST_TMP/handled" || fail "consume never ran the message"
restart_empty
wait_until 10 test -e "$TEST_TMP/slow-term" || fail "consume: the command did not get SIGTERM"
# The warning comes once the command is gone, after its SIGTERM: waited for, not assumed.
wait_until 10 grep -q "was lost while the command ran" "$TEST_TMP/consume.err" ||
  fail "consume did not say the message's lease was lost: $(cat "$TEST_TMP/consume.err")"
alive $consumer || fail "consume exited after the restart"
expect 0 "$RCOORD" queue push jobs after-restart
wait_until 10 grep -q after-restart "$TEST_TMP/handled" ||
  fail "consume did not handle a message pushed after the restart"
queue_empty() { "$RCOORD" queue stats jobs --json | grep -q '"ready":0,"delayed":0,"in_flight":0'; }
wait_until 5 queue_empty || fail "the new message was not acked"
kill -TERM $consumer
code=0; wait $consumer || code=$?
assert_eq "$code" 0 "consume stops cleanly after the restart"
pass "queue consume: server restarted empty, command terminated, consumer reconnected"

# A restart that keeps nothing still lets new work start at once (reconnect, fresh state).
expect 0 "$RCOORD" lock acquire after-restart
expect 0 "$RCOORD" sem take after-restart --limit 1
expect 0 "$RCOORD" elect campaign after-restart --id me

# Stopped (SIGSTOP: it accepts connections and never answers) for longer than --timeout:
# every kind of command exits 3 in about the timeout. They run side by side, each timing
# itself, and the server stays stopped until all have ended, however slowly they start.
kill -STOP "$R_PID"
i=0
paused_pids=()
while IFS= read -r cmd; do
  (
    start=$(now_ms)
    set +e
    # shellcheck disable=SC2086
    "$RCOORD" --timeout 400ms $cmd >/dev/null 2>"$TEST_TMP/paused-$i.err" </dev/null
    echo "$? $(($(now_ms) - start)) $(now_ms) $cmd" >"$TEST_TMP/paused-$i"
  ) &
  paused_pids+=($!)
  i=$((i + 1))
done <<'CMDS'
ping
lock acquire p
lock status p
lock run p -- true
sem take p --limit 1
sem status p
limit check p --rate 5/s
bloom add p x
pf count p
elect campaign p --id a
elect status p
queue push p m
queue pop p --wait 5s
queue consume p --idle-exit 5s -- true
signal send p
signal wait p --wait 5s
latch down p
latch wait p --wait 5s
complete suggest p x
ls
CMDS
wait "${paused_pids[@]}"
kill -CONT "$R_PID"
for f in "$TEST_TMP"/paused-*; do
  case $f in *.err) continue ;; esac
  read -r code took _ cmd <"$f"
  assert_eq "$code" 3 "'$cmd' on a paused server"
  [ "$took" -lt "$(scaled 4000)" ] || fail "'$cmd' took ${took}ms to give up with --timeout 400ms"
  assert_lines "$(cat "$f.err")" 1 "'$cmd': one line on stderr"
done
pass "paused server: every kind of command exits 3 within about --timeout"
