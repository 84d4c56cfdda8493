# The CLI contract of the lock verbs: outputs, JSON shapes, and every exit code of SPEC §2.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# 0: acquired; the token alone on stdout, so TOKEN=$(...) works. The lease is long enough
# that no slow step below can outlast it (the re-acquire with its token must find it held).
acquired_at=$(now_ms)
expect 0 "$RCOORD" lock acquire job --ttl 10m
TOKEN=$OUT
[[ $TOKEN =~ ^[0-9a-f]{32}$ ]] || fail "token is not 32 hex digits: $TOKEN"
assert_eq "$ERR" "" "acquire writes nothing on stderr"
pass "acquire prints the token"

# 1: busy; nothing on stdout, a one-line note on stderr
expect 1 "$RCOORD" lock acquire job
assert_eq "$OUT" "" "busy prints no data"
assert_contains "$ERR" "lock 'job' is busy"
assert_lines "$ERR" 1
pass "busy exits 1 with a note"

# JSON shapes of SPEC §3
expect 1 "$RCOORD" lock acquire job --json
assert_eq "$(json_field "$OUT" acquired)" false
assert_eq "$(json_field "$OUT" name)" job
# the holder's remaining TTL: 10 minutes less (at most) the time since the acquisition began
ttl=$(json_field "$OUT" ttl_ms)
[ "$ttl" -le 600000 ] && [ "$ttl" -ge $((600000 - ($(now_ms) - acquired_at))) ] ||
  fail "busy ttl_ms is the holder's remaining TTL: $ttl"
assert_eq "$ERR" "" "JSON mode puts the no-answer in the object, not on stderr"
expect 0 "$RCOORD" -o json lock acquire other
for f in acquired name token ttl_ms fence waited_ms; do json_field "$OUT" $f >/dev/null || fail "missing $f"; done
assert_eq "$(json_field "$OUT" ttl_ms)" 30000
pass "JSON of acquire, busy and acquired"

# re-acquire with the holder's token refreshes
refreshed_at=$(now_ms)
expect 0 "$RCOORD" lock acquire job --token "$TOKEN" --ttl 20m
assert_eq "$OUT" "$TOKEN"
expect 0 "$RCOORD" lock status job --json
assert_eq "$(json_field "$OUT" held)" true
assert_eq "$(json_field "$OUT" token)" "$TOKEN"
[ "$(json_field "$OUT" ttl_ms)" -ge $((1200000 - ($(now_ms) - refreshed_at))) ] ||
  fail "re-acquire did not refresh the TTL"
pass "re-acquire with the same token"

# status text: field: value lines with the JSON names
expect 0 "$RCOORD" lock status job
assert_contains "$OUT" "held: true"
assert_contains "$OUT" "token: $TOKEN"
grep -qxE "fence: [0-9]{16}" <<<"$OUT" || fail "the fence, the server's clock in µs: $OUT"
# the seven fields of SPEC §3, then who took it (host, pid, user, cmd, note, acquired_at,
# held_ms: SPEC §5)
assert_lines "$OUT" 14
assert_contains "$OUT" "cmd: lock acquire"

# extend: 0 for the holder, 1 for anyone else
expect 0 "$RCOORD" lock extend job --token "$TOKEN" --ttl 40m
expect 1 "$RCOORD" lock extend job --token wrong
assert_contains "$ERR" "not held by this token"
RCOORD_TOKEN=$TOKEN expect 0 "$RCOORD" lock extend job --ttl 40m
pass "extend"

# release: 1 not the holder, 0 released, then free
expect 1 "$RCOORD" lock release job --token wrong
expect 0 "$RCOORD" lock release job --token "$TOKEN"
assert_eq "$OUT" "released"
expect 1 "$RCOORD" lock status job
assert_contains "$OUT" "held: false"
pass "release"

# fences strictly increase, also across break
expect 0 "$RCOORD" lock acquire job --json
f1=$(json_field "$OUT" fence)
expect 0 "$RCOORD" lock break job
assert_contains "$OUT" "broken:"
expect 1 "$RCOORD" lock break job
expect 0 "$RCOORD" lock acquire job --json
f2=$(json_field "$OUT" fence)
[ "$f2" -gt "$f1" ] || fail "fence did not increase: $f1 then $f2"
pass "break, fences increase"

# -q: nothing on stdout, the exit code says it
expect 1 "$RCOORD" -q lock acquire job
assert_eq "$OUT$ERR" "" "-q is silent"
expect 0 "$RCOORD" lock status job -q
assert_eq "$OUT" ""
pass "quiet"

# global options after the verb; redis-cli's -h/-p/-n
expect 0 "$RCOORD" lock acquire after --json --prefix app:
assert_eq "$(redis-cli -p "$R_PORT" exists 'app:{lock:after}')" 1
expect 0 env -u RCOORD_URL "$RCOORD" -h 127.0.0.1 -p "$R_PORT" -n 4 lock acquire db4
assert_eq "$(redis-cli -p "$R_PORT" -n 4 exists 'rcoord:{lock:db4}')" 1
expect 0 env -u RCOORD_URL "$RCOORD" -s "$R_SOCK" lock status db4 -n 4
# --url repeats, one URL each time: it leaves the name, and a run's command, alone
expect 1 env -u RCOORD_URL "$RCOORD" lock status --url "redis://127.0.0.1:$R_PORT" after
assert_contains "$OUT" "name: after"
expect 3 env -u RCOORD_URL "$RCOORD" lock run urlrun -u "redis://127.0.0.1:$R_PORT" -- sh -c 'exit 3'
expect 1 env -u RCOORD_URL "$RCOORD" lock status urlrun --url "redis://127.0.0.1:$R_PORT" --json
assert_contains "$OUT" '"held":false'
pass "global options anywhere, redis-cli flags"

# 2: usage errors name the bad value; nothing touches the network
for args in "lock acquire x --ttl 5x" "lock acquire x --wait soon" "lock acquire" "lock" \
  "lock frob x" "--url foo://x lock status x" "--url redis://h:99999 lock status x" \
  "--timeout 0 lock status x" "lock run x --kill-grace 1y -- true" "lock run x" \
  "lock acquire x --ttl 0" "lock acquire '' " "--output yaml lock status x"; do
  eval "expect 2 \"\$RCOORD\" $args"
  assert_lines "$ERR" 1 "usage error is one line for: $args"
  assert_contains "$ERR" "rcoord: "
done
expect 2 "$RCOORD" lock acquire x --ttl 5x
assert_contains "$ERR" "5x"
expect 2 "$RCOORD" lok
assert_contains "$ERR" "did you mean 'lock'"
expect 2 "$RCOORD" lock acqire x
assert_contains "$ERR" "did you mean 'acquire'"
pass "usage errors exit 2"

# 3: unreachable, with what to do
port=$(free_port)
expect 3 "$RCOORD" --url "redis://127.0.0.1:$port" lock acquire x
assert_contains "$ERR" "cannot connect to 127.0.0.1:$port"
assert_contains "$ERR" "(set --url or RCOORD_URL)"
assert_lines "$ERR" 1
pass "unreachable exits 3"

# 4: the key holds another type; it is named and left alone
redis-cli -p "$R_PORT" set 'rcoord:{lock:str}' precious >/dev/null
redis-cli -p "$R_PORT" rpush 'rcoord:{lock:lst}' a >/dev/null
redis-cli -p "$R_PORT" hset 'rcoord:{lock:hsh}' f v >/dev/null
for name in str lst hsh; do
  for verb in "acquire $name" "status $name" "break $name" "release $name --token t" \
    "extend $name --token t"; do
    eval "expect 4 \"\$RCOORD\" lock $verb"
    assert_contains "$ERR" "rcoord:{lock:$name}"
    assert_lines "$ERR" 1
  done
done
assert_eq "$(redis-cli -p "$R_PORT" get 'rcoord:{lock:str}')" precious
pass "wrong type exits 4 and overwrites nothing"

# --help and --version exit 0
expect 0 "$RCOORD" --help
assert_contains "$OUT" "lock"
expect 0 "$RCOORD" lock run --help
assert_contains "$OUT" "--kill-grace"
expect 0 "$RCOORD" --version
assert_contains "$OUT" "rcoord "
pass "help and version"

# ping: the server's flavour and version, as its INFO server says (Redis or Valkey)
server=$(server_of "$R_PORT")
[[ $server =~ ^(Redis|Valkey)\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "INFO server names no version: $server"
expect 0 "$RCOORD" ping --json
assert_eq "$(json_field "$OUT" mode)" standalone
assert_eq "$(json_field "$OUT" server)" "$server"
assert_eq "$(json_field "$OUT" version)" "${server#* }"
expect 0 "$RCOORD" ping
assert_contains "$OUT" "server: $server"
assert_contains "$OUT" "version: ${server#* }"
pass "ping names the server and its version ($server)"

# --- coming from flock: -w SECS, -x, -c CMD, -E, as a flock user types them on lock run -----
expect 0 "$RCOORD" lock run -w 5 flk -- true
expect 0 "$RCOORD" lock run flk -w 0.5 -x -- true
expect 7 "$RCOORD" lock run flk -c 'echo ran; exit 7'
assert_eq "$OUT" "ran"
# -c runs $SHELL -c CMD, or /bin/sh -c CMD when $SHELL is unset or empty, as flock does
expect 0 env SHELL=/bin/echo "$RCOORD" lock run flk -c 'through $SHELL'
assert_eq "$OUT" '-c through $SHELL'
expect 0 env -u SHELL "$RCOORD" lock run flk -c 'echo "$0"'
assert_eq "$OUT" /bin/sh
expect 0 env SHELL= "$RCOORD" lock run flk -c 'echo "$0"'
assert_eq "$OUT" /bin/sh
expect 2 "$RCOORD" lock run flk -c 'true' -- true
assert_lines "$ERR" 1
expect 2 "$RCOORD" lock run flk -x --shared -- true
assert_lines "$ERR" 1
pass "flock's -w SECS, -x and -c 'CMD' on lock run"

# The busy line says who holds it and since when, and whether it renews; -E (any code) says
# nothing unless --verbose, so a cron job's losing hosts mail nobody.
expect 0 "$RCOORD" lock acquire flk-held --ttl 10m
expect 1 "$RCOORD" lock run flk-held -- true
assert_lines "$ERR" 1
grep -qE "^rcoord: lock 'flk-held' is busy: held by [^ ]+@[^ ]+ \(pid [0-9]+, lock acquire\) since [0-9]{2}:[0-9]{2}:[0-9]{2}, expires in 9m[0-9]{2}s$" <<<"$ERR" ||
  fail "the busy line: $ERR"
expect 0 "$RCOORD" lock run flk-held -E 0 -- true
assert_eq "$ERR" "" "-E 0 on a busy lock prints nothing"
expect 1 "$RCOORD" lock run flk-held -E 1 -- true
assert_eq "$ERR" "" "-E given prints nothing"
expect 3 "$RCOORD" lock run flk-held -w 0.2 -E 3 -- true
assert_eq "$ERR" "" "-E after a --wait that ran out prints nothing"
expect 0 "$RCOORD" lock run flk-held -E 0 --verbose -- true
assert_contains "$ERR" "rcoord: lock 'flk-held' is busy: held by "
# (sem run too: the inner one finds the only permit taken, exits 75 quietly, and so does the
# outer one with its command's code)
expect 75 "$RCOORD" sem run flk-sem --limit 1 -- "$RCOORD" sem run flk-sem --limit 1 -E 75 -- true
assert_eq "$ERR" "" "sem run -E prints nothing"
expect 1 "$RCOORD" lock run flk-held --timeout 10 -- true
assert_contains "$ERR" "to wait for the lock, give --wait"
"$RCOORD" lock run flk-runs -- sleep 30 >/dev/null 2>&1 &
track $!
run_holds() { "$RCOORD" lock status flk-runs -q; }
wait_until 10 run_holds || fail "the background lock run did not take its lock"
expect 1 "$RCOORD" lock acquire flk-runs
grep -qE "held by [^ ]+@[^ ]+ \(pid [0-9]+, sleep\) since [0-9:]{8}, renewing$" <<<"$ERR" ||
  fail "a run form's holder renews: $ERR"
pass "busy: who holds it, since when, renewing or not; -E quiet unless --verbose"

# redis-cli's -n and -s keep their meaning before the group; after lock run, where flock
# users put -n (nonblock) and -s (shared), they are refused with a hint, never a silent change
# of database.
expect 2 "$RCOORD" lock run -n 1 flk-db -- true
assert_lines "$ERR" 1
assert_contains "$ERR" "-n after 'lock run' would choose a Redis database"
expect 2 "$RCOORD" lock run flk-db -n -- true
expect 2 "$RCOORD" lock run -s flk-db -- true
assert_contains "$ERR" "--shared"
assert_eq "$(redis-cli -p "$R_PORT" -n 1 dbsize)" 0 "nothing written to database 1"
expect 0 env -u RCOORD_URL "$RCOORD" -p "$R_PORT" -n 1 lock run flk-db -- true
pass "-n and -s after lock run: refused with a hint; before the group: redis-cli's"

# --- typos and a missing -- ----------------------------------------------------------------
expect 0 "$RCOORD" version
assert_eq "$OUT" "$("$RCOORD" --version)"
for args in "lokc|did you mean 'lock'" "lock aquire x|did you mean 'acquire'" \
  "lock frob|'rcoord lock' has acquire, release" "lock|'rcoord lock' needs a command" \
  "completion bash|no 'completion' command" \
  "lock acquire x --ttll 5s|unknown option '--ttll' for 'lock acquire': did you mean '--ttl'?" \
  "--jsn lock status x|did you mean '--json'" "sem take x --limit 1 --wiat 5|did you mean '--wait'" \
  "lock run job ls -la|put -- before the command: rcoord lock run job -- ls -la" \
  "lock run job rsync -a src dst|put -- before the command"; do
  IFS='|' read -r words want <<<"$args"
  eval "expect 2 \"\$RCOORD\" $words"
  assert_lines "$ERR" 1 "$words"
  assert_contains "$ERR" "$want" "$words"
done
pass "did you mean, for commands and options; put -- before the command"

# --- one waiting flag: --wait (-w); the verbs' --timeout and --max-wait warn ----------------
expect 1 "$RCOORD" signal wait nobody-sends --wait 200ms
assert_contains "$ERR" "no signal on 'nobody-sends' within 200ms"
assert_lines "$ERR" 1
expect 1 "$RCOORD" latch wait no-latch -w 200ms
expect 0 "$RCOORD" elect observe no-election --wait 200ms
expect 1 "$RCOORD" signal wait nobody-sends --timeout 200ms
assert_lines "$ERR" 2
assert_contains "$ERR" "rcoord: warning: --timeout after 'signal wait' is deprecated: write --wait 200ms"
expect 0 "$RCOORD" elect observe no-election --timeout 200ms
assert_contains "$ERR" "--timeout after 'elect observe' is deprecated"
expect 1 "$RCOORD" latch wait no-latch --timeout 200ms
assert_contains "$ERR" "--timeout after 'latch wait' is deprecated: write --wait 200ms"
expect 0 "$RCOORD" history no-history --type lock --follow --timeout 200ms
assert_contains "$ERR" "--timeout after 'history' is deprecated: write --wait 200ms"
expect 0 "$RCOORD" limit check flk-rate --rate 1/h
expect 1 "$RCOORD" limit wait flk-rate --rate 1/h --wait 1s
assert_contains "$ERR" "cannot allow this within --wait 1s"
expect 1 "$RCOORD" limit wait flk-rate --rate 1/h --max-wait 1s
assert_contains "$ERR" "--max-wait after 'limit wait' is deprecated: write --wait 1s"
expect 2 "$RCOORD" signal wait x --wait 1s --timeout 1s
assert_lines "$ERR" 1
pass "--wait on every verb that waits; --timeout and --max-wait still work, with a warning"
