# Without redis-server on PATH, the integration and e2e tests that need one are skipped with
# one line saying why (they exit with the SKIP_RETURN_CODE that tests/CMakeLists.txt gives
# them, so ctest shows them as skipped, not passed), unless RCOORD_REQUIRE_REDIS is set (as
# scripts/test and CI set it): then they fail. Each test is run as ctest would run it (its
# command, environment and directory, read from `ctest --show-only`), on a PATH that holds
# only what the test needs before it asks for a server.
source "$(dirname "$0")/lib.sh"
build=$(dirname "$RCOORD_BIN")
[ -f "$build/CTestTestfile.cmake" ] || fail "no CTestTestfile.cmake beside $RCOORD_BIN"
ctest --test-dir "$build" -N --show-only=json-v1 >"$TEST_TMP/tests.json"

nobin=$TEST_TMP/bin
mkdir -p "$nobin"
for tool in bash dirname mktemp rm; do ln -s "$(command -v "$tool")" "$nobin/$tool"; done
[ ! -e "$nobin/redis-server" ] || fail "the restricted PATH holds redis-server"

# run_as_ctest NAME_PREFIX REQUIRE: runs the first test whose name starts with NAME_PREFIX with
# RCOORD_REQUIRE_REDIS=REQUIRE ('' unset) and PATH=$nobin; prints its SKIP_RETURN_CODE on the
# first line, its exit code on the second, then its output.
run_as_ctest() {
  python3 - "$TEST_TMP/tests.json" "$1" "$2" "$nobin" "$TEST_TMP" <<'PY'
import json, subprocess, sys
tests, prefix, require, path, home = sys.argv[1:]
test = next((t for t in json.load(open(tests))["tests"] if t["name"].startswith(prefix)), None)
if test is None:
    sys.exit("no test named " + prefix + "...: pick another one in require_redis_test.sh")
props = {p["name"]: p["value"] for p in test.get("properties", [])}
env = {"PATH": path, "HOME": home}
for pair in props.get("ENVIRONMENT", []):
    key, value = pair.split("=", 1)
    env[key] = value
if require:
    env["RCOORD_REQUIRE_REDIS"] = require
r = subprocess.run(test["command"], env=env, cwd=props.get("WORKING_DIRECTORY"),
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
print(props.get("SKIP_RETURN_CODE", "none"))
print(r.returncode)
print(r.stdout, end="")
PY
}

# An integration test that needs a server (any would do), and an e2e script.
for test in "integration:pipelined commands" "e2e: sem_test"; do
  out=$(run_as_ctest "$test" "")
  skip_code=$(sed -n 1p <<<"$out")
  code=$(sed -n 2p <<<"$out")
  said=$(sed -n '3,$p' <<<"$out")
  [ "$skip_code" != none ] || fail "$test has no SKIP_RETURN_CODE"
  assert_eq "$code" "$skip_code" "$test without redis-server exits with its SKIP_RETURN_CODE ($said)"
  # One line says why (doctest prints its banner around it).
  why=$(grep SKIPPED <<<"$said" || true)
  assert_lines "$why" 1 "$test says why it is skipped in one line: $said"
  assert_contains "$why" "SKIPPED: redis-server not found"
  assert_contains "$why" "RCOORD_REQUIRE_REDIS"

  for require in 1 yes; do
    out=$(run_as_ctest "$test" "$require")
    code=$(sed -n 2p <<<"$out")
    said=$(sed -n '3,$p' <<<"$out")
    if [ "$code" = 0 ] || [ "$code" = "$skip_code" ]; then
      fail "$test without redis-server and RCOORD_REQUIRE_REDIS=$require exited $code: $said"
    fi
    assert_contains "$said" "RCOORD_REQUIRE_REDIS is set"
  done
done
pass "without redis-server, integration and e2e tests are skipped and say why; with RCOORD_REQUIRE_REDIS they fail"
