# Any user (SPEC §6 "where it runs"): a uid and gid with no passwd or group entry, as a
# container's runAsUser, OpenShift or systemd's DynamicUser= give, with HOME unset and a
# working directory it cannot write, takes and gives back locks, permits, leadership and
# messages like any other user, and is recorded as `uid N`.
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
  if [ -n "${RCOORD_REQUIRE_REDIS:-}" ]; then
    fail "this test switches to a uid with no passwd entry (setpriv): run it as root"
  fi
  echo "SKIPPED: needs root to switch to a uid with no passwd entry (with RCOORD_REQUIRE_REDIS=1 this fails)"
  exit 77
fi
command -v setpriv >/dev/null || fail "setpriv not found: install util-linux"

start_redis R
without_note

# A uid and gid that nothing on this machine names.
nobody_uid=54321
while getent passwd "$nobody_uid" >/dev/null || getent group "$nobody_uid" >/dev/null; do
  nobody_uid=$((nobody_uid + 1))
done

# The binary where that user can run it, and a working directory it cannot write.
home=$(mktemp -d /tmp/rcoord-any-user.XXXXXX)
chmod 755 "$home"
install -m 755 "$RCOORD" "$home/rcoord"
mkdir "$home/readonly"
chmod 555 "$home/readonly"
trap 'rm -rf "$home"; _cleanup' EXIT

# as_nobody CMD...: CMD as that uid and gid, no supplementary groups, HOME unset, in the
# unwritable directory.
as_nobody() {
  (cd "$home/readonly" && env -u HOME RCOORD_URL="$R_URL" \
    setpriv --reuid "$nobody_uid" --regid "$nobody_uid" --clear-groups "$@")
}
rcoord_as_nobody() { as_nobody "$home/rcoord" "$@"; }

# The switch itself works and really has no entry (or the test would prove nothing).
[ "$(as_nobody id -u)" = "$nobody_uid" ] || fail "setpriv did not switch to uid $nobody_uid"
as_nobody id -un >/dev/null 2>&1 && fail "uid $nobody_uid has a name: the test needs one without"

# --- lock: take, status records `uid N`, run a command, give back --------------------------
OUT=$(rcoord_as_nobody lock acquire anyone --ttl 30s) || fail "lock acquire as uid $nobody_uid: exit $?"
token=$OUT
expect 0 "$RCOORD" --url "$R_URL" lock status anyone --json
assert_eq "$(json_field "$OUT" user)" "uid $nobody_uid" "lock: the user of a uid with no entry"
assert_eq "$(json_field "$OUT" token)" "$token" "lock: token"
rcoord_as_nobody lock release anyone --token "$token" >/dev/null || fail "lock release: exit $?"
OUT=$(rcoord_as_nobody lock run anyone-run --ttl 5s -- sh -c 'id -u') || fail "lock run: exit $?"
assert_eq "$OUT" "$nobody_uid" "lock run: the command runs as that uid"
expect 1 "$RCOORD" --url "$R_URL" lock status anyone-run --json
assert_eq "$(json_field "$OUT" held)" "false" "lock run gave the lock back"
pass "lock acquire, status, release and run as a uid with no passwd entry"

# --- sem -----------------------------------------------------------------------------------
OUT=$(rcoord_as_nobody sem take slots --limit 2 --ttl 30s) || fail "sem take: exit $?"
expect 0 "$RCOORD" --url "$R_URL" sem status slots --json
assert_contains "$OUT" "\"user\":\"uid $nobody_uid\""
OUT=$(rcoord_as_nobody sem run slots --limit 2 --ttl 5s -- echo ran) || fail "sem run: exit $?"
assert_eq "$OUT" "ran" "sem run"
pass "sem take and run as a uid with no passwd entry"

# --- elect ---------------------------------------------------------------------------------
rcoord_as_nobody elect campaign leader --id c1 --ttl 30s >/dev/null || fail "elect campaign: exit $?"
expect 0 "$RCOORD" --url "$R_URL" elect status leader --json
assert_eq "$(json_field "$OUT" user)" "uid $nobody_uid" "elect: the leader's user"
pass "elect campaign as a uid with no passwd entry"

# --- queue ---------------------------------------------------------------------------------
rcoord_as_nobody queue push jobs one two >/dev/null || fail "queue push: exit $?"
OUT=$(rcoord_as_nobody queue consume jobs --ack-timeout 5s --max-messages 2 -- sh -c 'cat; echo') ||
  fail "queue consume: exit $?"
assert_eq "$OUT" $'one\ntwo' "queue consume ran each message"
expect 0 "$RCOORD" --url "$R_URL" queue stats jobs --json
assert_contains "$OUT" '"in_flight":0'
pass "queue push and consume as a uid with no passwd entry"
