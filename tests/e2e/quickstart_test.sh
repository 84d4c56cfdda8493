# The README's first command works on a fresh clone, and again when run a second time:
# scripts/quickstart from a clone of the committed tree (HEAD, what CI tests: uncommitted
# changes are not in it), installing into a throwaway prefix, pointed at a loopback port where
# nothing answers yet, so it starts its own redis-server there and stops it at the end. Its demo
# must show one host running the job while the other exits 1. It never touches port 6379 or
# /usr/local. It compiles rcoord (a release build of the binary and the man pages only), which
# is most of its cost. Then the README's second command, in the same clone, configures build/
# with the test suite that the quickstart left out.
source "$(dirname "$0")/lib.sh"
need_redis
SRC=${RCOORD_SOURCE_DIR:?}

# The quickstart builds its own release binary whatever build runs this test, so a sanitized
# build's pass would only repeat the release pass at the price of another compile.
if grep -qE '^RCOORD_SANITIZE:[A-Z]+=.+' "$(dirname "$RCOORD_BIN")/CMakeCache.txt" 2>/dev/null; then
  echo "SKIPPED: a sanitized build: the quickstart builds the same release binary as in the release pass"
  exit 77
fi
if ! rev=$(git -C "$SRC" rev-parse --verify HEAD 2>/dev/null); then
  echo "SKIPPED: $SRC is not a git checkout: the quickstart is tested on a clone of the commit"
  exit 77
fi

# Under scripts/test the release build's objects are in a ccache (RCOORD_QUICKSTART_CCACHE),
# which the quickstart reads without writing: the same compiler, flags and sources give the same
# objects, so the quickstart's build is proved without compiling everything a second time. Its
# paths are taken relative to the source tree, so the clone must live inside it (in the build
# directory, removed at the end).
ccache_env=()
clone_parent=$TEST_TMP
if [ -n "${RCOORD_QUICKSTART_CCACHE:-}" ] && command -v ccache >/dev/null; then
  clone_parent=$(mktemp -d "$(dirname "$RCOORD_BIN")/quickstart-clone.XXXXXX")
  ccache_env=(CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_READONLY=1 CCACHE_BASEDIR="$SRC"
    CCACHE_DIR="$RCOORD_QUICKSTART_CCACHE" CCACHE_IGNOREOPTIONS=-Werror)
fi
clone=$clone_parent/src
git clone --quiet --no-checkout "$SRC" "$clone"
git -C "$clone" checkout --quiet --detach "$rev"
prefix=$TEST_TMP/prefix
mkdir -p "$TEST_TMP/tmp" "$TEST_TMP/home"

# The throwaway server a quickstart started, should this test end while it runs.
_stop_quickstart_servers() {
  local pidfile pid
  for pidfile in "$TEST_TMP"/tmp/rcoord-quickstart.*/redis.pid; do
    [ -s "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill -9 "$pid" 2>/dev/null || true
  done
}
_remove_clone() { [ "$clone_parent" = "$TEST_TMP" ] || rm -rf "$clone_parent"; }
trap '_stop_quickstart_servers; _remove_clone; _cleanup' EXIT

# quickstart PORT LOG: runs the clone's scripts/quickstart as a new user would, with a throwaway
# prefix and a Redis URL on PORT; its exit code in QS_RC, its output (stdout and stderr) in LOG.
quickstart() {
  QS_RC=0
  env -u REDIS_URL -u RCOORD_PASSWORD -u REDISCLI_AUTH -u RCOORD_CONFIG -u BUILD_DIR \
    "${ccache_env[@]}" PREFIX="$prefix" RCOORD_URL="redis://127.0.0.1:$1" TMPDIR="$TEST_TMP/tmp" \
    HOME="$TEST_TMP/home" NO_COLOR=1 "$clone/scripts/quickstart" >"$2" 2>&1 </dev/null || QS_RC=$?
}

# answers PORT: a Redis answers PING there.
answers() { [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ]; }

# check_run LOG PORT: the quickstart of LOG succeeded, started and stopped its own server on
# PORT, and its demo showed one host running the job while the other exited 1, then both
# running it one after the other.
check_run() {
  local log=$1 port=$2 out demo1 demo2 codes
  out=$(cat "$log")
  [ "$QS_RC" = 0 ] || fail "scripts/quickstart exited $QS_RC: $(tail -n 30 "$log")"
  assert_contains "$out" "Installing into $prefix"
  assert_contains "$out" "starting a throwaway redis-server on 127.0.0.1:$port"
  assert_contains "$out" "stopped the throwaway redis-server"
  ! answers "$port" || fail "the quickstart's redis-server still answers on port $port"
  demo1=$(sed -n '/==> Demo 1/,/==> Demo 2/p' "$log")
  demo2=$(sed -n '/==> Demo 2/,/==> Done/p' "$log")
  codes=$(grep -oE 'host-a exited [0-9]+, host-b exited [0-9]+' <<<"$demo1")
  case $codes in
    "host-a exited 0, host-b exited 1" | "host-a exited 1, host-b exited 0") ;;
    *) fail "demo 1: want one host exiting 0 and the other 1, got '$codes': $demo1" ;;
  esac
  assert_eq "$(grep -c 'backup starts' <<<"$demo1")" 1 "demo 1: the job ran once: $demo1"
  assert_contains "$demo1" "rcoord: lock 'demo-backup' is busy" "demo 1: the loser says why"
  assert_eq "$(grep -oE 'host-a exited [0-9]+, host-b exited [0-9]+' <<<"$demo2")" \
    "host-a exited 0, host-b exited 0" "demo 2: both hosts ran the job in turn: $demo2"
  assert_eq "$(grep -c 'backup starts' <<<"$demo2")" 2 "demo 2: the job ran twice: $demo2"
  assert_contains "$out" "==> Done"
}

# run_quickstart LOG: quickstart on a port where nothing answers, its port in PORT. Should
# another test's server take that port meanwhile, the quickstart would use that server (or
# could not start its own): it is then run again on another port.
run_quickstart() {
  local log=$1 try
  for try in 1 2 3; do
    PORT=$(_server_port)
    answers "$PORT" && continue
    quickstart "$PORT" "$log"
    if grep -q "starting a throwaway redis-server on 127.0.0.1:$PORT" "$log" &&
      ! grep -q "did not answer on port" "$log"; then
      return
    fi
    echo "quickstart try $try on port $PORT met another server; trying another port"
  done
}

# First run: builds from nothing.
start=$(now_ms)
run_quickstart "$TEST_TMP/run1.log"
first_ms=$(($(now_ms) - start))
check_run "$TEST_TMP/run1.log" "$PORT"
"$prefix/bin/rcoord" --version >/dev/null || fail "the installed rcoord does not run"
for file in share/man/man1/rcoord.1.gz share/man/man1/rcoord-lock.1.gz \
  share/bash-completion/completions/rcoord share/zsh/site-functions/_rcoord \
  share/fish/vendor_completions.d/rcoord.fish; do
  [ -s "$prefix/$file" ] || fail "the quickstart did not install $file"
done
gzip -t "$prefix/share/man/man1/rcoord.1.gz" || fail "the installed man page is not gzip"
[ ! -e "$clone/build/tests" ] || fail "the quickstart built the test suite"
pass "a fresh clone's scripts/quickstart builds, installs into \$PREFIX, starts its own Redis and runs the demo (${first_ms} ms)"

# Second run: nothing to install or rebuild, the same demo.
start=$(now_ms)
run_quickstart "$TEST_TMP/run2.log"
check_run "$TEST_TMP/run2.log" "$PORT"
assert_contains "$(cat "$TEST_TMP/run2.log")" "no work to do" "the second run rebuilds nothing"
pass "scripts/quickstart runs again ($(($(now_ms) - start)) ms)"

# The README's second command after the first: scripts/test reuses the build/ the quickstart
# configured without the tests, and must turn them on there. Only its configure step runs
# (building and running the suite is what the rest of this suite does); every e2e script of
# the clone must then be a test ctest finds.
listed() { (cd "$clone/build" && ctest -N 2>/dev/null); }
assert_contains "$(listed)" "Total Tests: 0" "the quickstart's build/ has no tests"
env -u BUILD_DIR HOME="$TEST_TMP/home" TMPDIR="$TEST_TMP/tmp" "$clone/scripts/test" --configure-only \
  >"$TEST_TMP/test-configure.log" 2>&1 </dev/null ||
  fail "scripts/test --configure-only failed: $(tail -n 20 "$TEST_TMP/test-configure.log")"
tests=$(listed)
for script in "$clone"/tests/e2e/*_test.sh; do
  name=$(basename "$script" .sh)
  grep -q "e2e: $name\$" <<<"$tests" || fail "after the quickstart, scripts/test's build/ lacks 'e2e: $name'"
done
pass "after the quickstart, scripts/test configures build/ with every test ($(grep -c ' Test *#' <<<"$tests") found)"
