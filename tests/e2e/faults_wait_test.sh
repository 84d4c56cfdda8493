# Every wait notices a server that stops answering within about its --timeout (1s here) and
# exits 3: waits on pub/sub (signal wait, latch wait, elect observe) and blocking pops (lock,
# sem and elect waiters, queue pop, an idle queue consume). Twice: a frozen server (SIGSTOP:
# connections stay up, nothing answers) and an unreachable one (every packet dropped).
source "$(dirname "$0")/faults_lib.sh"
start_redis R
export RCOORD_URL=$R_URL

expect 0 "$RCOORD" lock acquire busy --ttl 1h
expect 0 "$RCOORD" sem take busy --limit 1 --ttl 1h
expect 0 "$RCOORD" elect campaign busy --id holder --ttl 1h
expect 0 "$RCOORD" latch init gate --count 1

WAITS=(
  "signal wait ch --wait 1m"
  "latch wait gate --wait 1m"
  "elect observe busy --wait 6s"
  "lock acquire busy --wait forever"
  "sem take busy --limit 1 --wait forever"
  "elect campaign busy --id other --wait forever"
  "queue pop empty --wait forever"
  "queue consume empty -- true"
)

# waiting_clients: how many of the waits sit in a blocking pop or a subscription.
waiting_clients() {
  redis-cli -p "$R_PORT" client list | grep -cE ' cmd=(blpop|blmove|subscribe|ping) ' || true
}
all_waiting() { [ "$(waiting_clients)" -ge "${#WAITS[@]}" ]; }

# all_stop_within FAULT HEAL: starts every wait, makes FAULT once they wait, and checks each
# exits 3 within 2.5 s of it (--timeout 1s: a PING every half timeout, or a pop that blocks
# half a timeout, plus the timeout for the answer that does not come).
all_stop_within() {
  local fault=$1 heal=$2 i pids=() code took
  for i in "${!WAITS[@]}"; do
    # shellcheck disable=SC2086
    (
      set +e
      "$RCOORD" --timeout 1s ${WAITS[$i]} >"$TEST_TMP/w$i.out" 2>"$TEST_TMP/w$i.err" </dev/null
      echo "$? $(now_ms)" >"$TEST_TMP/w$i.code"
    ) &
    pids+=($!)
    track $!
  done
  wait_until 20 all_waiting || fail "the waits never all waited ($(waiting_clients) of ${#WAITS[@]})"
  sleep 0.3 # past their first half-timeout check, so the fault meets a settled wait
  local at
  at=$(now_ms)
  $fault
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || true; done
  $heal
  for i in "${!WAITS[@]}"; do
    read -r code took <"$TEST_TMP/w$i.code"
    took=$((took - at))
    assert_eq "$code" 3 "'${WAITS[$i]}' when the server $fault ($(cat "$TEST_TMP/w$i.err"))"
    [ "$took" -lt "$(scaled 2500)" ] ||
      fail "'${WAITS[$i]}' noticed after ${took}ms with --timeout 1s ($fault)"
    assert_lines "$(cat "$TEST_TMP/w$i.err")" 1 "'${WAITS[$i]}': one line on stderr"
  done
}

freeze() { kill -STOP "$R_PID"; }
thaw() { kill -CONT "$R_PID"; }
all_stop_within freeze thaw
pass "frozen server: every wait exits 3 within 2.5s with --timeout 1s"

cut_off() { fault_blackhole "$R_PORT"; }
all_stop_within cut_off fault_heal
pass "unreachable server: every wait exits 3 within 2.5s with --timeout 1s"
