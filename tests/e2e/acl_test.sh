#!/usr/bin/env bash
# ACL: the documented rule (docs/configuration.md, its one home) is enough for every
# primitive; a missing permission is exit 4 naming the refused command; the password never
# shows in ps.
source "$(dirname "$0")/lib.sh"

start_redis acl
src="${RCOORD_SOURCE_DIR:-$(dirname "$0")/../..}"
rule=$(grep -m1 '^ACL SETUSER rcoord on ' "$src/docs/configuration.md") ||
  fail "docs/configuration.md lists no ACL rule"
# no man page states the rule a second time, where it could fall behind
! grep -q 'ACL SETUSER rcoord on' "$src"/man/rcoord.1 "$src"/man/rcoord-*.1.in ||
  fail "a man page states the ACL rule again: point to docs/configuration.md instead"
password="pw-$RANDOM-$RANDOM"
# shellcheck disable=SC2086 # the rule is a list of words
redis-cli -p "$acl_PORT" ${rule/>CHANGE-ME/>$password} >/dev/null
redis-cli -p "$acl_PORT" ACL SETUSER no-eval on ">$password" '~*' '&*' +@all -evalsha -eval \
  >/dev/null
redis-cli -p "$acl_PORT" ACL SETUSER no-hset on ">$password" '~*' '&*' +@all -hset >/dev/null
redis-cli -p "$acl_PORT" ACL SETUSER no-bitop on ">$password" '~*' '&*' +@all -bitop >/dev/null
redis-cli -p "$acl_PORT" ACL SETUSER no-multi on ">$password" '~*' '&*' +@all -multi >/dev/null
redis-cli -p "$acl_PORT" ACL SETUSER no-exec on ">$password" '~*' '&*' +@all -exec >/dev/null
export RCOORD_PASSWORD=$password
R=("$RCOORD" -p "$acl_PORT" --user rcoord)

# --- the documented rule is enough ----------------------------------------------------------
expect 0 "${R[@]}" ping
expect 0 "${R[@]}" lock acquire acl-lock --ttl 30s
token=$OUT
expect 0 "${R[@]}" lock status acl-lock
expect 0 "${R[@]}" lock extend acl-lock --token "$token"
expect 0 "${R[@]}" lock release acl-lock --token "$token"
expect 0 "${R[@]}" lock acquire acl-shared --shared --ttl 10m
expect 0 "${R[@]}" lock run acl-run -- true
expect 0 "${R[@]}" sem take acl-sem --limit 2
expect 0 "${R[@]}" sem status acl-sem
expect 0 "${R[@]}" sem run acl-sem2 --limit 1 -- true
for algo in gcra token-bucket sliding-window fixed-window; do
  expect 0 "${R[@]}" limit check "acl-$algo" --rate 5/s --algo "$algo"
  expect 0 "${R[@]}" limit status "acl-$algo" --rate 5/s --algo "$algo"
done
expect 0 "${R[@]}" limit wait acl-wait --rate 5/s
expect 0 "${R[@]}" limit check acl-reset --rate 1/h
expect 0 "${R[@]}" limit reset acl-reset
expect 0 "${R[@]}" bloom reserve acl-bloom --capacity 1000 --error-rate 0.01
expect 0 "${R[@]}" -q bloom add acl-bloom a b c
expect 0 "${R[@]}" -q bloom test acl-bloom a b
expect 0 "${R[@]}" bloom info acl-bloom
# A large add merges bits (MULTI, EXEC, BITOP); a user refused one sets them with BITFIELD: the
# same answers, item by item, and no scratch key left behind.
# The same into a filter bloom add creates (10000 items, scaling): it grows layers as the
# items come, the older ones read whole, the newest merged.
{ seq 1 20000; seq 1 500; } >"$TEST_TMP/acl-big-items"
for user in rcoord no-bitop no-multi no-exec; do
  RU=("$RCOORD" -p "$acl_PORT" --user "$user")
  expect 0 "${RU[@]}" bloom reserve "acl-big-$user" --capacity 50000 --error-rate 0.01
  expect 0 "${RU[@]}" bloom add "acl-big-$user" <"$TEST_TMP/acl-big-items"
  printf '%s\n' "$OUT" >"$TEST_TMP/acl-big-$user"
  lines=$(wc -l <"$TEST_TMP/acl-big-$user")
  [ "$lines" -gt 19000 ] && [ "$lines" -le 20000 ] || fail "bloom add as $user: $lines added"
  expect 0 "${RU[@]}" bloom add "acl-grow-$user" <"$TEST_TMP/acl-big-items"
  printf '%s\n' "$OUT" >"$TEST_TMP/acl-grow-$user"
  expect 0 "${RU[@]}" --json bloom info "acl-grow-$user"
  [ "$(json_field "$OUT" layers)" -ge 2 ] || fail "the created filter did not grow a layer"
done
for user in no-bitop no-multi no-exec; do
  cmp -s "$TEST_TMP/acl-big-rcoord" "$TEST_TMP/acl-big-$user" || fail "answers as $user differ"
  cmp -s "$TEST_TMP/acl-grow-rcoord" "$TEST_TMP/acl-grow-$user" ||
    fail "answers as $user differ on a filter that grew"
done
assert_eq "$(redis-cli -p "$acl_PORT" --scan --pattern '*scratch*')" "" "no scratch key left"
expect 0 "${R[@]}" -q pf add acl-pf a b c
# A large input merges registers through a scratch key beside the HyperLogLog.
seq 1 20000 | expect 0 "${R[@]}" -q pf add acl-pf-big
expect 0 "${R[@]}" pf count acl-pf-big
[ "$OUT" -ge 19600 ] && [ "$OUT" -le 20400 ] || fail "pf count of 20000 as the ACL user: $OUT"
expect 0 "${R[@]}" pf count acl-pf
expect 0 "${R[@]}" pf merge acl-pf2 acl-pf
expect 0 "${R[@]}" elect campaign acl-elect --id me
expect 0 "${R[@]}" elect status acl-elect
expect 0 "${R[@]}" elect resign acl-elect --id me
expect 0 "${R[@]}" elect run acl-elect2 --id me -- true
expect 0 "${R[@]}" queue push acl-q m1 m2 m3
expect 0 "${R[@]}" queue pop acl-q
expect 0 "${R[@]}" -o json queue pop acl-q --ack-timeout 10s
id=$(json_field "$OUT" id)
expect 0 "${R[@]}" queue ack acl-q "$id"
expect 0 "${R[@]}" queue consume acl-q --max-messages 1 -- cat
expect 0 "${R[@]}" queue stats acl-q
expect 0 "${R[@]}" latch init acl-latch --count 1
expect 0 "${R[@]}" latch down acl-latch
expect 0 "${R[@]}" latch wait acl-latch --wait 1s
expect 0 "${R[@]}" -q complete add acl-idx Zürich Zug
expect 0 "${R[@]}" complete suggest acl-idx zu
expect 0 "${R[@]}" complete recent push acl-recent alice
# lifecycle: --expire on every verb that takes it, ls with expiries, rm of each kind
expect 0 "${R[@]}" bloom reserve acl-bloom-x --capacity 10 --error-rate 0.01 --expire 1h
seq 1 50 | expect 0 "${R[@]}" -q bloom add acl-bloom-x --expire 1h
expect 0 "${R[@]}" -q pf add acl-pf-x a b --expire 1h
seq 1 20000 | expect 0 "${R[@]}" -q pf add acl-pf-x --expire 1h
expect 0 "${R[@]}" pf merge acl-pf-y acl-pf-x --expire 1h
expect 0 "${R[@]}" -q complete add acl-idx-x a --incr --expire 1h
expect 0 "${R[@]}" complete recent push acl-recent-x a --expire 1h
expect 0 "${R[@]}" ls
expect 0 "${R[@]}" rm acl-bloom-x --type bloom
expect 0 "${R[@]}" rm acl-pf-x acl-pf-y --type pf
expect 0 "${R[@]}" rm acl-idx-x --type complete
expect 0 "${R[@]}" rm acl-recent-x --type recent
expect 0 "${R[@]}" lock acquire acl-rm
expect 0 "${R[@]}" rm acl-rm --type lock --force
expect 0 "${R[@]}" ls
# history: the writes are the take scripts' (above); reading, and following, here
expect 1 "${R[@]}" lock acquire acl-shared --wait 10ms --ttl 1s
expect 0 "${R[@]}" history acl-lock --type lock
assert_contains "$OUT" "released"
expect 0 "${R[@]}" history acl-run --type lock --follow --wait 100ms
expect 0 "${R[@]}" history acl-sem --since 1h
"${R[@]}" signal wait acl-ch --wait 10s >"$TEST_TMP/signal.out" &
waiter=$!
track $waiter
wait_until 5 "${R[@]}" signal send acl-ch go || fail "signal send under the ACL rule"
wait "$waiter" || fail "signal wait under the ACL rule"
pass "the documented ACL rule runs every primitive"

# The rule lets a run form watch its lease (client-side tracking): a lock deleted under a
# 60 s lease stops the command long before its first renewal (20 s).
"${R[@]}" lock run acl-watched --ttl 60s -- sh -c 'echo up >"$0"; sleep 60' "$TEST_TMP/watched.up" \
  2>"$TEST_TMP/watched.err" &
watched=$!
wait_until 10 test -s "$TEST_TMP/watched.up" || fail "lock run under the rule did not start"
sleep 0.3 # the watch starts once the command has run 50 ms
t0=$(now_ms)
redis-cli -p "$acl_PORT" DEL 'rcoord:{lock:acl-watched}' >/dev/null
code=0
wait "$watched" || code=$?
took=$(($(now_ms) - t0))
[ "$code" = 5 ] || fail "lock run under the rule: exit $code, want 5: $(cat "$TEST_TMP/watched.err")"
[ "$took" -le "$(scaled 3000)" ] || fail "lock run under the rule noticed the loss only after $took ms"
pass "the documented rule lets lock run notice a loss at once ($took ms)"

# --- a missing permission names the command -------------------------------------------------
expect 4 "$RCOORD" -p "$acl_PORT" --user no-eval lock acquire refused
assert_contains "$ERR" "refused by ACL"
assert_contains "$ERR" "'evalsha'"
assert_lines "$ERR" 1 "one-line error"
expect 4 "$RCOORD" -p "$acl_PORT" --user no-hset lock acquire refused
assert_contains "$ERR" "this user may not run HSET"
expect 4 "$RCOORD" -p "$acl_PORT" --user rcoord --prefix other: lock acquire refused
assert_contains "$ERR" "refused by ACL"
pass "a refused command, also one inside a script, is exit 4 and named"

expect 3 env RCOORD_PASSWORD=wrong "$RCOORD" -p "$acl_PORT" --user rcoord ping
assert_contains "$ERR" "authentication failed for user 'rcoord'"
pass "a wrong password is exit 3"

# --- the password never shows in ps ---------------------------------------------------------
echo "$password" >"$TEST_TMP/password"
shown() { ps -eo args | grep -F -- "$password" | grep -v grep || true; }
holders=()
"$RCOORD" -p "$acl_PORT" --user rcoord --password-file "$TEST_TMP/password" \
  lock run ps-file -- sleep 30 &
holders+=($!)
env RCOORD_PASSWORD="$password" "$RCOORD" -p "$acl_PORT" --user rcoord \
  lock run ps-env -- sleep 30 &
holders+=($!)
env -u RCOORD_PASSWORD "$RCOORD" -p "$acl_PORT" --user rcoord -a "$password" \
  lock run ps-flag -- sleep 30 &
holders+=($!)
env -u RCOORD_PASSWORD "$RCOORD" --url "redis://rcoord:$password@127.0.0.1:$acl_PORT" \
  lock run ps-url -- sleep 30 &
holders+=($!)
for pid in "${holders[@]}"; do track "$pid"; done
for name in ps-file ps-env ps-flag ps-url; do
  wait_until 10 "${R[@]}" lock status "$name" || fail "$name never took its lock"
done
[ -z "$(shown)" ] || fail "the password shows in ps: $(shown)"
# The mask is 4 stars whatever the password's length (here ${#password} bytes), and what follows
# moves up to close the gap: nothing in ps tells the length.
flag_args=$(ps -o args= -p "${holders[2]}")
assert_eq "$flag_args" "$RCOORD -p $acl_PORT --user rcoord -a **** lock run ps-flag -- sleep 30" \
  "the -a value, masked"
url_args=$(ps -o args= -p "${holders[3]}")
assert_eq "$url_args" "$RCOORD --url redis://rcoord:****@127.0.0.1:$acl_PORT lock run ps-url -- sleep 30" \
  "the --url password, masked"
# SIGTERM goes on to each sleeping child, so nothing outlives the test.
kill -TERM "${holders[@]}"
for pid in "${holders[@]}"; do wait "$pid" 2>/dev/null || true; done
pass "--password-file, RCOORD_PASSWORD, -a and a --url password never show in ps, nor their length"

# A password on the command line is warned about on stderr, as redis-cli does; not one given
# apart from it.
expect 0 env -u RCOORD_PASSWORD "$RCOORD" -p "$acl_PORT" --user rcoord -a "$password" ping
assert_contains "$ERR" "warning: a password on the command line"
assert_lines "$ERR" 1
expect 0 env -u RCOORD_PASSWORD "$RCOORD" --url "redis://rcoord:$password@127.0.0.1:$acl_PORT" ping
assert_contains "$ERR" "warning: a password on the command line"
expect 0 env -u RCOORD_PASSWORD "$RCOORD" -p "$acl_PORT" --user rcoord -a "$password" \
  --no-auth-warning ping
assert_eq "$ERR" "" "--no-auth-warning silences it"
expect 0 env RCOORD_PASSWORD="$password" "$RCOORD" -p "$acl_PORT" --user rcoord ping
assert_eq "$ERR" "" "no warning for RCOORD_PASSWORD"
case "$ERR" in *"$password"*) fail "the warning shows the password" ;; esac
pass "a password on the command line is warned about (--no-auth-warning silences it)"

chmod 000 "$TEST_TMP/password"
if [ "$(id -u)" -ne 0 ]; then
  expect 2 "$RCOORD" -p "$acl_PORT" --user rcoord --password-file "$TEST_TMP/password" ping
fi
expect 2 "$RCOORD" -p "$acl_PORT" --user rcoord --password-file "$TEST_TMP/none" ping
assert_contains "$ERR" "password file"
pass "an unreadable password file is exit 2"

# --- a bare word@ in a URL (SPEC §1) ----------------------------------------------------------
# With a password from --password-file, RCOORD_PASSWORD, -a or REDISCLI_AUTH the word is the
# ACL user; without one it is the default user's password, as in redis-cli. The documented rule
# lets user rcoord touch rcoord:* keys only, while the default user may touch any key: a lock
# under another prefix, refused or not, tells which user logged in.
chmod 600 "$TEST_TMP/password"
bare=redis://rcoord@127.0.0.1:$acl_PORT
# logged_in_as_rcoord CMD...: rcoord CMD... logs in as user rcoord.
logged_in_as_rcoord() {
  expect 0 "$@" lock run bare-ok -- true
  expect 4 "$@" --prefix other: lock acquire bare-other
  assert_contains "$ERR" "refused by ACL" "$* logs in as user rcoord"
}
export -n RCOORD_PASSWORD
logged_in_as_rcoord env -u RCOORD_PASSWORD "$RCOORD" --url "$bare" --password-file "$TEST_TMP/password"
logged_in_as_rcoord env RCOORD_PASSWORD="$password" "$RCOORD" --url "$bare"
logged_in_as_rcoord env -u RCOORD_PASSWORD REDISCLI_AUTH="$password" "$RCOORD" --url "$bare"
logged_in_as_rcoord env -u RCOORD_PASSWORD "$RCOORD" --url "$bare" -a "$password"
logged_in_as_rcoord env RCOORD_URL="$bare" RCOORD_PASSWORD="$password" "$RCOORD"
# three URLs (a Redlock over three masters, each given once): each node logs in as user rcoord
start_redis _acl2
start_redis _acl3
for port in "$_acl2_PORT" "$_acl3_PORT"; do
  # shellcheck disable=SC2086 # the rule is a list of words
  redis-cli -p "$port" ${rule/>CHANGE-ME/>$password} >/dev/null
done
logged_in_as_rcoord env RCOORD_PASSWORD="$password" "$RCOORD" --url "$bare" \
  --url "redis://rcoord@127.0.0.1:$_acl2_PORT" --url "redis://rcoord@127.0.0.1:$_acl3_PORT"
expect 3 env RCOORD_PASSWORD=wrong "$RCOORD" --url "$bare" ping
assert_contains "$ERR" "authentication failed for user 'rcoord'"
# No password elsewhere: the word is the default user's password.
redis-cli -p "$acl_PORT" ACL SETUSER default resetpass '>default-pw' >/dev/null
expect 0 env -u RCOORD_PASSWORD "$RCOORD" --url "redis://default-pw@127.0.0.1:$acl_PORT" \
  --prefix other: lock acquire bare-default --ttl 1m
expect 3 env -u RCOORD_PASSWORD "$RCOORD" --url "redis://rcoord@127.0.0.1:$acl_PORT" ping
assert_contains "$ERR" "authentication failed"
pass "a bare word@ is the ACL user with a password from elsewhere, else the default user's password"
