# Shared helpers for the end-to-end tests: a throwaway redis-server on a free loopback port
# (stopped by PID on exit), assertions, and timing. Sourced by every *_test.sh.
set -euo pipefail

RCOORD=${RCOORD_BIN:?set RCOORD_BIN to the rcoord binary}
TEST_TMP=$(mktemp -d /tmp/rcoord-e2e.XXXXXX)
_redis_pids=()
_bg_pids=()

_cleanup() {
  local pid
  for pid in "${_bg_pids[@]}"; do kill -9 -- "$pid" 2>/dev/null || true; done
  for pid in "${_redis_pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${_redis_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$TEST_TMP"
}
trap _cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
pass() { echo "ok - $*"; }

# Remember a background process to kill at exit.
track() { _bg_pids+=("$1"); }

# --- Time -------------------------------------------------------------------------------------
# Tests wait for events (a process seen blocked, a key changed, a line printed), never for a
# fixed time. Time appears in three places only, each through a helper below:
#  - an upper bound the SPEC promises (exit 3 within --timeout, a waiter woken at once...):
#    `scaled MS`;
#  - how long to keep waiting for an event before giving up (wait_until, wait_blocked, server
#    start-up): scaled the same way;
#  - how long to watch for something that must NOT happen: `quiet_period MS`, with a comment
#    at the call saying why MS is enough.
# A lower bound (not before the TTL, not before the delay) needs no scaling: measure it from
# a moment taken before the cause, and a slow machine can only make it longer.
#
# The scale is the machine factor times RCOORD_TIME_SCALE (default 1; scripts/test sets 2 for
# the sanitized pass, whose processes run several times slower). The machine factor is how
# much slower process start-up is here and now than on the quiet 2-core machine the bounds
# were written for: the median of 9 start-ups of `bash -c true` against a reference of 4 ms,
# never below 1 (process start-up is what a busy machine slows most: rcoord and the tests'
# own tools are short processes). It is measured when a script starts and again when a bound
# is scaled more than 5 s after the last measurement, and never goes down during a script: a
# machine that gets busy during a test is seen, and a time scaled later (how long to wait for
# a lease to end) is never scaled less than one scaled earlier (the lease). (Measured at every
# bound, the nine start-ups cost close to a second each time on a slow machine: most of the
# time of a proof that waits for something in each of its rounds.)
# RCOORD_MACHINE_FACTOR=N (a percentage, 100 = as written) overrides the measurement.

# without_note: clears what a take's note would default to. The test's own environment may be
# a CI's, whose run link would be the default note.
without_note() {
  unset RCOORD_NOTE GITHUB_ACTIONS GITLAB_CI CI_JOB_URL BUILDKITE_BUILD_URL BUILDKITE_JOB_ID
}

# now_ms: wall time in milliseconds.
now_ms() {
  local us=${EPOCHREALTIME//[!0-9]/} # (a builtin: a `date` process per poll slows the polling)
  echo $((us / 1000))
}

_STARTUP_REFERENCE_US=4000
_FACTOR_MAX_AGE_MS=5000 # how old a measurement scaled still uses
# _machine_factor: the machine factor as a percentage (100: as fast as the reference).
_machine_factor() {
  if [ -n "${RCOORD_MACHINE_FACTOR:-}" ]; then
    echo "$RCOORD_MACHINE_FACTOR"
    return
  fi
  local i t0 t1 samples=() median
  for i in 1 2 3 4 5 6 7 8 9; do
    t0=${EPOCHREALTIME//[!0-9]/}
    bash -c true
    t1=${EPOCHREALTIME//[!0-9]/}
    samples+=($((t1 - t0)))
  done
  median=$(printf '%s\n' "${samples[@]}" | sort -n | sed -n 5p)
  echo $((median * 100 / _STARTUP_REFERENCE_US > 100 ? median * 100 / _STARTUP_REFERENCE_US : 100))
}
MACHINE_FACTOR=$(_machine_factor)
_FACTOR_FILE=$TEST_TMP/machine-factor
echo "$MACHINE_FACTOR $(now_ms)" >"$_FACTOR_FILE" # the factor, and when it was measured
echo "# time scale: machine factor ${MACHINE_FACTOR}% (bash -c true against ${_STARTUP_REFERENCE_US}us), RCOORD_TIME_SCALE ${RCOORD_TIME_SCALE:-1}"

# need_redis: returns when redis-server and redis-cli are on PATH. Else the test is skipped
# (exit 77, ctest's SKIP_RETURN_CODE for e2e tests) with one line saying why, or fails when
# RCOORD_REQUIRE_REDIS is set (as scripts/test and CI set it).
need_redis() {
  local tool
  for tool in redis-server redis-cli; do
    command -v "$tool" >/dev/null 2>&1 && continue
    if [ -n "${RCOORD_REQUIRE_REDIS:-}" ] && [ "$RCOORD_REQUIRE_REDIS" != 0 ]; then
      fail "$tool not found on PATH, and RCOORD_REQUIRE_REDIS is set: install redis-server and redis-tools"
    fi
    echo "SKIPPED: $tool not found on PATH: this test needs a real Redis (install redis-server and redis-tools; with RCOORD_REQUIRE_REDIS=1 this fails)"
    exit 77
  done
}

# scaled MS: MS times the highest machine factor seen so far (kept in a file: scaled runs in
# a subshell) times RCOORD_TIME_SCALE.
scaled() {
  local factor="" measured_at=0 now fresh
  { read -r factor measured_at <"$_FACTOR_FILE"; } 2>/dev/null || true
  [ -n "$factor" ] || factor=$MACHINE_FACTOR
  now=$(now_ms)
  if [ $((now - ${measured_at:-0})) -ge "$_FACTOR_MAX_AGE_MS" ]; then
    fresh=$(_machine_factor)
    [ "$fresh" -le "$factor" ] || factor=$fresh
    echo "$factor $now" >"$_FACTOR_FILE.$BASHPID" && mv "$_FACTOR_FILE.$BASHPID" "$_FACTOR_FILE"
  fi
  echo $((($1 * factor * ${RCOORD_TIME_SCALE:-1} + 99) / 100))
}

# effort N: how many rounds (or seconds of a window) a proof runs where it would run N:
# N times RCOORD_PROOF_EFFORT percent (default 100), at least 1. A proof's statistical strength
# comes from the release pass, which runs every proof in full; scripts/test lowers the effort
# for the passes that run the same proofs again to catch what only their build can see
# (memory errors under the sanitizers, another CPU): those need each path taken, not taken
# many times. Only a count of repetitions goes through here, never a bound.
effort() {
  local n=$((($1 * ${RCOORD_PROOF_EFFORT:-100} + 50) / 100))
  [ "$n" -ge 1 ] || n=1
  echo "$n"
}

# sampled I J: whether the pair of the I-th and the J-th input (from 0) of a cross-product of
# cases runs. At full effort every pair does. At a lower effort (the sanitized pass, which looks
# for memory errors on the paths the release pass proved right) one pair in
# ceil(100 / effort) does, on diagonals, so each input of either list still runs at least once
# as long as each list has that many.
sampled() {
  local effort=${RCOORD_PROOF_EFFORT:-100}
  [ "$effort" -ge 1 ] || effort=1
  local stride=$(((100 + effort - 1) / effort))
  [ $((($1 + $2) % stride)) = 0 ]
}

# seconds MS: MS milliseconds as seconds for sleep(1) and timeout(1), e.g. 1500 -> 1.500.
seconds() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

# quiet_period MS: watches scaled(MS) for something that must not happen (a second waiter
# woken, a lock taken by a ticket left behind). The caller says why MS is enough: usually
# several times what the same event takes when it does happen.
quiet_period() { sleep "$(seconds "$(scaled "$1")")"; }

# start_redis NAME [extra redis-server args...]: sets ${NAME}_PORT, ${NAME}_PID, ${NAME}_URL,
# ${NAME}_SOCK and ${NAME}_PORTS (the one port; a cluster's lists all its masters). An extra
# argument written @PORT2@ becomes a second port (for --tls-port), picked afresh with every
# attempt and kept in ${NAME}_PORT2.
# With RCOORD_TEST_CLUSTER=1, a plain `start_redis NAME` (no extra args) starts a 3-master
# cluster instead (start_cluster), so a test that only talks through rcoord runs on both.
start_redis() {
  local name=$1
  shift
  need_redis
  if [ "${RCOORD_TEST_CLUSTER:-0}" = 1 ] && [ $# -eq 0 ] && [ "${name:0:1}" != _ ]; then
    start_cluster "$name"
    return
  fi
  local attempt port port2 pid dir arg args
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    port=$(_server_port)
    port2=$(_server_port)
    [ "$port2" != "$port" ] || continue
    args=()
    for arg in "$@"; do args+=("${arg//@PORT2@/$port2}"); done
    dir="$TEST_TMP/redis-$name-$port"
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
      --unixsocket "$dir/redis.sock" --logfile "$dir/redis.log" "${args[@]}" &
    pid=$!
    # Ready when our own server answers on its own unix socket: Redis creates the socket
    # only after every TCP and TLS port is bound, and a server of another test that owns
    # the same port cannot answer there. NOAUTH also means it is up (requirepass given).
    if _await_server "$pid" _answers_on_socket "$pid" "$dir/redis.sock"; then
      _keep_server "$name" "$pid" "$port"
      printf -v "${name}_PORT2" '%s' "$port2"
      printf -v "${name}_PORTS" '%s' "$port"
      printf -v "${name}_URL" '%s' "redis://127.0.0.1:$port"
      printf -v "${name}_SOCK" '%s' "$dir/redis.sock"
      return 0
    fi
    _drop_server "$pid"
  done
  fail "cannot start redis-server (10 attempts); last log: $(tail -n 3 "$dir/redis.log" 2>/dev/null | tr '\n' ' ')"
}

# _await_server PID CHECK...: waits up to 5 s (scaled) for CHECK to succeed; gives up at once
# when the server PID has exited (a port taken: it failed to bind).
_await_server() {
  local pid=$1 deadline
  deadline=$(($(now_ms) + $(scaled 5000)))
  shift
  until "$@" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || return 1
    [ "$(now_ms)" -lt "$deadline" ] || return 1
    sleep 0.02
  done
}

# _keep_server NAME PID PORT: the server is stopped at exit; sets ${NAME}_PID and ${NAME}_PORT.
_keep_server() {
  _redis_pids+=("$2")
  printf -v "${1}_PID" '%s' "$2"
  printf -v "${1}_PORT" '%s' "$3"
}

# _drop_server PID: a server that did not come up (its port was taken) is gone.
_drop_server() {
  kill -9 "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# _answers_on_socket PID SOCKET: the server answers PING (or NOAUTH) on its own SOCKET.
_answers_on_socket() {
  [ -S "$2" ] || return 1
  redis-cli -s "$2" ping 2>&1 | grep -qE 'PONG|NOAUTH'
}

# start_sentinel NAME MASTER_NAME MASTER_PORT [CONFIG LINE...]: one Sentinel monitoring the
# master on MASTER_PORT (quorum 1, down after 2 s), with the extra lines of sentinel.conf
# given (e.g. "sentinel auth-pass NAME PASSWORD"); sets ${NAME}_PORT and ${NAME}_PID. Ready
# when the process that answers on the port is ours.
start_sentinel() {
  local name=$1 master=$2 master_port=$3 attempt port pid dir
  shift 3
  need_redis
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    port=$(_server_port)
    dir="$TEST_TMP/sentinel-$name-$port"
    mkdir -p "$dir"
    cat >"$dir/sentinel.conf" <<CONF
port $port
bind 127.0.0.1
dir $dir
sentinel monitor $master 127.0.0.1 $master_port 1
sentinel down-after-milliseconds $master 2000
sentinel failover-timeout $master 10000
CONF
    [ $# -eq 0 ] || printf '%s\n' "$@" >>"$dir/sentinel.conf"
    redis-server "$dir/sentinel.conf" --sentinel --logfile "$dir/log" &
    pid=$!
    if _await_server "$pid" _is_server_on_port "$pid" "$port"; then
      _keep_server "$name" "$pid" "$port"
      return 0
    fi
    _drop_server "$pid"
  done
  fail "cannot start redis-sentinel (10 attempts); last log: $(tail -n 3 "$dir/log" 2>/dev/null | tr '\n' ' ')"
}

# _is_server_on_port PID PORT: the server answering on PORT is the process PID.
_is_server_on_port() {
  redis-cli -p "$2" info server 2>/dev/null | tr -d '\r' | grep -qx "process_id:$1"
}

# server_of PORT: the server on PORT as rcoord names it, from its INFO server: "Valkey 8.0.1"
# (server_name:valkey, valkey_version), else "Redis 7.0.15" (redis_version).
server_of() {
  redis-cli -p "$1" info server | tr -d '\r' | awk -F: '
    $1 == "server_name" && $2 == "valkey" { valkey = 1 }
    $1 == "valkey_version" { vv = $2 }
    $1 == "redis_version" { rv = $2 }
    END { if (valkey || vv != "") print "Valkey " vv; else print "Redis " rv }'
}

# Test servers listen on 20000-52767 (a cluster node also on its port + 10000, below 65536);
# free_port (a port nothing listens on) stays below 20000, so a server another test starts
# meanwhile can never take a port a test expects to be dead.
_server_port() { echo $((20000 + RANDOM)); }

# start_cluster NAME: a Redis Cluster of 3 masters (no replicas) on loopback, every slot
# assigned and every node agreeing. Sets ${NAME}_PORTS (space-separated), ${NAME}_PORT and
# ${NAME}_URL (the first node, as a seed) and ${NAME}_PIDS.
start_cluster() {
  local name=$1
  local ports=() pids=() i port node
  for i in 1 2 3; do
    start_redis "_${name}_$i" --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-node-timeout 5000 --appendonly yes
    node="_${name}_${i}_PORT"
    ports+=("${!node}")
    node="_${name}_${i}_PID"
    pids+=("${!node}")
  done
  local addrs=()
  for port in "${ports[@]}"; do addrs+=("127.0.0.1:$port"); done
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$TEST_TMP/cluster-$name.log" 2>&1 ||
    fail "redis-cli --cluster create failed: $(cat "$TEST_TMP/cluster-$name.log")"
  _cluster_ready() {
    local p
    for p in "$@"; do
      redis-cli -p "$p" cluster info | grep -q 'cluster_state:ok' || return 1
      # every node knows the 3 masters and their slots
      [ "$(redis-cli -p "$p" cluster nodes | grep -c 'master.* connected [0-9]')" -eq 3 ] || return 1
    done
  }
  wait_until 30 _cluster_ready "${ports[@]}" || fail "cluster $name never became ready"
  printf -v "${name}_PORTS" '%s' "${ports[*]}"
  printf -v "${name}_PORT" '%s' "${ports[0]}"
  printf -v "${name}_PIDS" '%s' "${pids[*]}"
  printf -v "${name}_URL" '%s' "redis://127.0.0.1:${ports[0]}"
}

# port_of_key PORT KEY: the port of the master that owns KEY, asked of the node on PORT.
port_of_key() {
  local slot
  slot=$(redis-cli -p "$1" cluster keyslot "$2")
  redis-cli -p "$1" cluster nodes | awk -v slot="$slot" '
    $3 ~ /master/ { for (i = 9; i <= NF; i++) { n = split($i, r, "-"); lo = r[1]; hi = (n == 2 ? r[2] : r[1]);
      if (slot >= lo && slot <= hi) { split($2, a, "[:@]"); print a[2]; exit } } }'
}

# alive PID: the process exists and is not a zombie (a killed orphan may wait a while for
# PID 1 to reap it, and kill -0 succeeds on zombies).
alive() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}
# dead PID: the opposite, for wait_until (a killed process takes a moment to go).
dead() { ! alive "$1"; }

# signal_taken PID SIGNUM: no SIGNUM is pending for PID any more (a handler ran, or sigwait
# took it), so a second one sent now is a second signal, not merged with the first.
signal_taken() {
  local mask
  for mask in $(awk '$1 == "ShdPnd:" || $1 == "SigPnd:" { print $2 }' "/proc/$1/status"); do
    [ $((0x$mask >> ($2 - 1) & 1)) = 0 ] || return 1
  done
}

# A port nothing listens on, below the range of test servers.
free_port() {
  local port
  while :; do
    port=$((10000 + RANDOM % 10000))
    if ! (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
}

# rc CMD...: runs CMD, stores its exit code in RC, stdout in OUT, stderr in ERR.
rc() {
  set +e
  "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
  RC=$?
  set -e
  # $(<FILE) reads in the shell itself: no cat started twice for each command a test runs
  OUT=$(<"$TEST_TMP/out")
  ERR=$(<"$TEST_TMP/err")
}

# expect CODE CMD...: runs CMD and fails unless it exits with CODE.
expect() {
  local want=$1
  shift
  rc "$@"
  if [ "$RC" != "$want" ]; then
    fail "expected exit $want, got $RC from: $* | stdout: $OUT | stderr: $ERR"
  fi
}

assert_eq() { [ "$1" == "$2" ] || fail "${3:-values differ}: got '$1', want '$2'"; }
assert_contains() {
  case "$1" in *"$2"*) ;; *) fail "${3:-missing text}: '$1' does not contain '$2'" ;; esac
}
assert_lines() {
  local n
  n=$(printf '%s' "$1" | grep -c '' || true)
  [ "$n" -eq "$2" ] || fail "${3:-line count}: got $n lines, want $2: $1"
}

# poll_until DEADLINE_MS PAUSE CMD...: runs CMD every PAUSE seconds until it succeeds, or
# gives up (1) once now_ms has passed DEADLINE_MS.
poll_until() {
  local deadline=$1 pause=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$(now_ms)" -lt "$deadline" ] || return 1
    sleep "$pause"
  done
}

# wait_until SECONDS CMD...: polls CMD every 20 ms until it succeeds, or gives up after
# scaled SECONDS (a limit on patience, not a bound under test).
wait_until() {
  local deadline
  deadline=$(($(now_ms) + $(scaled $(($1 * 1000)))))
  shift
  poll_until "$deadline" 0.02 "$@"
}

# wait_blocked PORTS N: waits (up to 20 s, scaled) until N clients of the servers on PORTS
# (one port, or a cluster's ${NAME}_PORTS) block in BLPOP or BLMOVE, which is where waiters of
# lock, sem, elect and queue sit once they wait (a fixed sleep is too short for a sanitized
# start-up on a busy machine).
wait_blocked() {
  wait_until 20 _blocked_at_least "$1" "$2" || fail "$2 waiter(s) never blocked on port(s) $1"
}
_blocked_at_least() {
  local port n=0
  for port in $1; do
    n=$((n + $(redis-cli -p "$port" client list | grep -cE ' cmd=(blpop|blmove|xread) ' || true)))
  done
  [ "$n" -ge "$2" ]
}

# event_names JSON_LINES: the `event` of each line of `rcoord history -o json`, space-separated.
event_names() {
  python3 -c 'import json,sys; print(" ".join(json.loads(l)["event"] for l in sys.argv[1].splitlines()))' "$1"
}

# assert_released_kept JSON_LINE CODE MIN_MS [MAX_MS]: JSON_LINE is the `released` of a hold
# kept by --min-hold, with exit_code CODE and kept_ms from MIN_MS to MAX_MS.
assert_released_kept() {
  local code kept
  code=$(json_field "$1" exit_code)
  kept=$(json_field "$1" kept_ms)
  [ "$(json_field "$1" event)" = released ] && [ "$code" = "$2" ] && [ "$kept" -ge "$3" ] &&
    [ "$kept" -le "${4:-$kept}" ] || fail "not the release of a hold kept ${3}ms+ with code $2: $1"
}

# assert_status_kept JSON CODE: JSON (`lock status --json`) is of a lock kept by --min-hold
# after its command ended with CODE: it has that exit_code and an RFC 3339 ended_at.
assert_status_kept() {
  [ "$(json_field "$1" exit_code)" = "$2" ] || fail "a kept lock's status has no exit_code $2: $1"
  json_field "$1" ended_at | grep -Eq '^[0-9-]{10}T[0-9:.]{12}Z$' || fail "no ended_at in: $1"
}

# json_field JSON FIELD: a top-level scalar field of a one-line JSON object.
json_field() {
  python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print(json.dumps(v) if isinstance(v,bool) else v)' "$1" "$2"
}

# --- Histories ----------------------------------------------------------------------------------
# A proof records what its processes saw as a history (JSON lines, read by history_check.py,
# which describes the format and its models). RECORD_SH defines, for an `sh` command run under
# a lock, semaphore or leadership, `record OP OBJECT`: one line with the time, the process and
# what rcoord handed the command (RCOORD_TOKEN, RCOORD_FENCE, RCOORD_ID, RCOORD_TERM), appended to the
# file named by $HISTORY with a single write.
# shellcheck disable=SC2016
RECORD_SH='record() {
  printf "{\"t\":%s,\"p\":\"%s\",\"type\":\"ok\",\"f\":\"%s\",\"obj\":\"%s\",\"token\":\"%s\"%s%s}\n" \
    "$(date +%s%N)" "$$" "$1" "$2" "${RCOORD_TOKEN:-}" \
    "${RCOORD_FENCE:+,\"fence\":$RCOORD_FENCE}${RCOORD_ID:+,\"id\":\"$RCOORD_ID\"}" \
    "${RCOORD_TERM:+,\"term\":$RCOORD_TERM}" >>"$HISTORY"
}'

# check_history MODEL FILE...: runs the checker on the history in FILEs; fails the test with
# its findings when it finds an anomaly (or cannot read one), and prints its summary otherwise.
check_history() {
  local model=$1 out code=0
  shift
  out=$(python3 "$(dirname "${BASH_SOURCE[0]}")/history_check.py" --model "$model" "$@" 2>&1) ||
    code=$?
  [ "$code" = 0 ] || fail "history check ($model) of $*: $out"
  echo "# history ($model): $out"
}

# prove_mutual_exclusion WORKERS ROUNDS [GLOBAL OPTIONS...]: WORKERS concurrent processes
# each run ROUNDS `lock run counter` around a non-atomic increment of a counter file (read,
# sleep, write), so any overlap loses an update. Fails unless the count is exactly
# WORKERS x ROUNDS and the lock is free at the end.
prove_mutual_exclusion() {
  local workers=$1 rounds=$2
  shift 2
  local counter="$TEST_TMP/counter" w p start took
  echo 0 >"$counter"
  export HISTORY="$TEST_TMP/history.jsonl"
  : >"$HISTORY"
  printf '%s\nrecord enter counter\nn=$(cat "$1")\nsleep 0.005\necho $((n + 1)) >"$1"\nrecord exit counter\n' \
    "$RECORD_SH" >"$TEST_TMP/increment.sh"
  : >"$TEST_TMP/errors"
  _me_worker() {
    local i
    for i in $(seq 1 "$rounds"); do
      "$RCOORD" "$@" lock run counter --wait forever --ttl 10s -- \
        sh "$TEST_TMP/increment.sh" "$counter" ||
        { echo "worker failed: $?" >>"$TEST_TMP/errors"; return 1; }
    done
  }
  start=$(now_ms)
  local pids=()
  for w in $(seq 1 "$workers"); do
    _me_worker "$@" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
  took=$(($(now_ms) - start))
  [ ! -s "$TEST_TMP/errors" ] || fail "$(cat "$TEST_TMP/errors")"
  assert_eq "$(cat "$counter")" $((workers * rounds)) "$workers x $rounds increments under the lock"
  # the holds never overlap, and each one's fence is above every hold that ended before it
  check_history lock "$HISTORY"
  expect 1 "$RCOORD" "$@" lock status counter
  ME_TOOK=$took
}
