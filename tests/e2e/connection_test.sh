# Connection settings as operators give them: URLs, env, config file, passwords, ACL users,
# Unix sockets, timeouts against a paused server. Precedence: flags, then env, then config.
source "$(dirname "$0")/lib.sh"
start_redis R
start_redis AUTH --requirepass adminpw
redis-cli -p "$AUTH_PORT" -a adminpw --no-auth-warning \
  ACL SETUSER app on '>app-secret' '~rcoord:*' '+@all' >/dev/null
unset RCOORD_URL REDIS_URL RCOORD_PASSWORD REDISCLI_AUTH RCOORD_CONFIG
export HOME=$TEST_TMP/home
mkdir -p "$HOME"

# URL sources: --url, RCOORD_URL, REDIS_URL, config file
expect 0 "$RCOORD" --url "$R_URL/2" lock acquire u1
assert_eq "$(redis-cli -p "$R_PORT" -n 2 exists 'rcoord:{lock:u1}')" 1
RCOORD_URL=$R_URL expect 0 "$RCOORD" lock acquire u2
REDIS_URL=$R_URL expect 0 "$RCOORD" lock acquire u3
expect 0 "$RCOORD" --url "unix://$R_SOCK?db=3" lock acquire u4
assert_eq "$(redis-cli -p "$R_PORT" -n 3 exists 'rcoord:{lock:u4}')" 1
pass "URL from --url, RCOORD_URL, REDIS_URL, unix://"

# precedence: flag > env > config file
dead="redis://127.0.0.1:$(free_port)"
printf 'url = "%s"\nprefix = "cfg:"\ntimeout = "1s"\n' "$R_URL" >"$TEST_TMP/good.toml"
printf 'url = "%s"\n' "$dead" >"$TEST_TMP/dead.toml"
expect 0 "$RCOORD" --config "$TEST_TMP/good.toml" lock acquire c1
assert_eq "$(redis-cli -p "$R_PORT" exists 'cfg:{lock:c1}')" 1 "prefix from the config file"
RCOORD_CONFIG=$TEST_TMP/good.toml expect 0 "$RCOORD" lock acquire c2 --prefix cli:
assert_eq "$(redis-cli -p "$R_PORT" exists 'cli:{lock:c2}')" 1 "flag beats config"
RCOORD_URL=$R_URL expect 0 "$RCOORD" --config "$TEST_TMP/dead.toml" lock acquire c3
RCOORD_URL=$dead expect 0 "$RCOORD" --url "$R_URL" lock acquire c4
RCOORD_URL=$dead expect 3 "$RCOORD" --config "$TEST_TMP/good.toml" lock acquire c5
mkdir -p "$HOME/.config/rcoord"
cp "$TEST_TMP/good.toml" "$HOME/.config/rcoord/config.toml"
expect 0 "$RCOORD" lock acquire c6
assert_eq "$(redis-cli -p "$R_PORT" exists 'cfg:{lock:c6}')" 1 "the default config path"
rm "$HOME/.config/rcoord/config.toml"
pass "precedence: command line, then environment, then config file"

# bad config files are usage errors
printf '[lock]\nttl = 5\n' >"$TEST_TMP/bad.toml"
expect 2 "$RCOORD" --config "$TEST_TMP/bad.toml" lock status x
assert_contains "$ERR" "bad.toml:1"
printf 'colour = "blue"\n' >"$TEST_TMP/unknown.toml"
expect 2 "$RCOORD" --config "$TEST_TMP/unknown.toml" lock status x
assert_contains "$ERR" "unknown key 'colour'"
expect 2 "$RCOORD" --config "$TEST_TMP/nope.toml" lock status x
assert_contains "$ERR" "cannot read config file"
pass "bad config files exit 2"

# the config file's host/port refine only its own URL, never one from a flag or the env
printf 'host = "127.0.0.2"\nport = %s\n' "$(free_port)" >"$TEST_TMP/parts.toml"
expect 0 "$RCOORD" --config "$TEST_TMP/parts.toml" --url "$R_URL" lock acquire p1
RCOORD_URL=$R_URL expect 0 "$RCOORD" --config "$TEST_TMP/parts.toml" lock acquire p2
expect 3 "$RCOORD" --config "$TEST_TMP/parts.toml" lock acquire p3
pass "config host/port do not override --url or RCOORD_URL"

# TLS settings reach the connection from the config file too (tls_test covers the flags)
printf 'url = "rediss://127.0.0.1:%s"\ntls-ca = "%s"\n' "$(free_port)" "$TEST_TMP/none.pem" \
  >"$TEST_TMP/tls.toml"
expect 2 "$RCOORD" --config "$TEST_TMP/tls.toml" --timeout 1s lock status x
expect 3 "$RCOORD" --url "rediss://127.0.0.1:$(free_port)" --timeout 1s lock status x
printf 'tls-insecure = true\n' >"$TEST_TMP/plain-tls.toml"
expect 2 "$RCOORD" --config "$TEST_TMP/plain-tls.toml" --url "$R_URL" lock status x
assert_contains "$ERR" "rediss://"
pass "TLS settings from the config file"

# passwords: -a, --password-file, RCOORD_PASSWORD, REDISCLI_AUTH, URL; ACL users
echo adminpw >"$TEST_TMP/pw"
echo app-secret >"$TEST_TMP/app-pw"
chmod 600 "$TEST_TMP/pw" "$TEST_TMP/app-pw"
expect 3 "$RCOORD" --url "$AUTH_URL" lock acquire a0
assert_contains "$ERR" "authentication"
expect 0 "$RCOORD" --url "$AUTH_URL" -a adminpw lock acquire a1
expect 0 "$RCOORD" --url "$AUTH_URL" --password-file "$TEST_TMP/pw" lock acquire a2
RCOORD_PASSWORD=adminpw expect 0 "$RCOORD" --url "$AUTH_URL" lock acquire a3
REDISCLI_AUTH=adminpw expect 0 "$RCOORD" --url "$AUTH_URL" lock acquire a4
expect 0 "$RCOORD" --url "redis://:adminpw@127.0.0.1:$AUTH_PORT" lock acquire a5
expect 0 "$RCOORD" --url "$AUTH_URL" --user app --password-file "$TEST_TMP/app-pw" lock acquire a6
expect 0 "$RCOORD" --url "redis://app:app-secret@127.0.0.1:$AUTH_PORT" lock acquire a7
RCOORD_PASSWORD=wrong expect 0 "$RCOORD" --url "$AUTH_URL" -a adminpw lock acquire a8
expect 3 "$RCOORD" --url "$AUTH_URL" --user app -a wrong-secret lock acquire a9
assert_contains "$ERR" "authentication failed for user 'app'"
case "$ERR" in *wrong-secret*) fail "the password appeared in a message" ;; esac
expect 2 "$RCOORD" --url "$AUTH_URL" --password-file "$TEST_TMP/missing" lock acquire a10
assert_contains "$ERR" "cannot read password file"
pass "passwords and ACL users from every source"

# Without a password every verb is an authentication failure (exit 3 and the hint), also
# those that pipeline and decode their own replies (bloom, complete recent): never exit 4.
for cmd in "bloom add f x" "bloom test f x" "bloom info f" "bloom reserve f --capacity 10 --error-rate 0.1" \
  "pf count p" "complete recent suggest r x" "ls" "queue stats q" "lock status l"; do
  # shellcheck disable=SC2086
  expect 3 "$RCOORD" --url "$AUTH_URL" $cmd </dev/null
  assert_contains "$ERR" "authentication required (NOAUTH): the server needs a password and none was given"
  assert_contains "$ERR" "give the password with --password-file FILE"
done
pass "a missing password is exit 3 with the hint for every verb, bloom included"

# the password never appears in argv with --password-file or RCOORD_PASSWORD (looked at once
# both hold their locks, so both are rcoord and authenticated; SIGTERM ends their commands)
"$RCOORD" --url "$AUTH_URL" --password-file "$TEST_TMP/pw" lock run ps1 -- sleep 30 &
p1=$!
track $p1
RCOORD_PASSWORD=adminpw "$RCOORD" --url "$AUTH_URL" lock run ps2 -- sleep 30 &
p2=$!
track $p2
for name in ps1 ps2; do
  wait_until 10 "$RCOORD" --url "$AUTH_URL" -a adminpw lock status $name || fail "$name never took its lock"
done
args=$(ps -o args= -p "$p1,$p2")
assert_contains "$args" "lock run ps1"
assert_contains "$args" "lock run ps2"
case "$args" in *adminpw*) fail "the password shows in ps: $args" ;; esac
kill -TERM $p1 $p2
wait $p1 $p2 || true
pass "ps never shows the password"

# a stopped server (it accepts connections, never answers): exit 3 in about the timeout
kill -STOP "$R_PID"
start=$(now_ms)
rc "$RCOORD" --url "$R_URL" --timeout 500ms lock acquire paused
took=$(($(now_ms) - start))
kill -CONT "$R_PID"
assert_eq "$RC" 3 "exit code against a stopped server"
assert_contains "$ERR" "no reply from 127.0.0.1:$R_PORT within 500ms"
[ "$took" -ge 500 ] && [ "$took" -lt "$(scaled 1300)" ] || fail "paused: exit 3 after ${took}ms, timeout 500ms"
pass "paused server: exit 3 after ${took}ms (--timeout 500ms)"
