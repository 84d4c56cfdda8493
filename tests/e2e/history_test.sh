# History (SPEC §5): each lock, semaphore, election and queue keeps a capped, expiring log
# of its events, appended by the script that made the change; `rcoord history` prints it
# oldest first, and --follow tails it with a blocking read.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
without_note
host=$(hostname)
user=$(id -un)

# events NAME [OPTIONS...]: the event names of NAME's history, one line, oldest first.
events() { event_names "$("$RCOORD" -o json history "$@")"; }

# field N FIELD [NAME OPTIONS...]: FIELD of the Nth event (1 = oldest) of NAME's history.
field() {
  local n=$1 f=$2
  shift 2
  "$RCOORD" -o json history "$@" | python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin]
v = lines[int(sys.argv[1]) - 1].get(sys.argv[2], "")
print(json.dumps(v) if isinstance(v, (dict, list)) else v)' "$n" "$f"
}

# gone KEY: KEY no longer exists (a lease ran out on the server).
gone() { [ "$(redis-cli -p "$R_PORT" exists "$1")" = 0 ]; }

# --- a lock's scripted sequence ------------------------------------------------------------
"$RCOORD" lock acquire seq --ttl 1h --note first >"$TEST_TMP/t1" &
taker=$!
wait "$taker"
expect 1 "$RCOORD" lock acquire seq # busy, once
expect 1 "$RCOORD" lock acquire seq --wait 300ms # busy once, not once per wake-up
expect 0 "$RCOORD" lock release seq --token "$(cat "$TEST_TMP/t1")"
"$RCOORD" lock acquire seq --ttl 1h >/dev/null
"$RCOORD" lock break seq --note "operator" >/dev/null
"$RCOORD" lock acquire seq --ttl 300ms >/dev/null
wait_until 5 gone 'rcoord:{lock:seq}' # its lease runs out unnoticed ...
expect 3 "$RCOORD" lock run seq -- sh -c 'exit 3' # ... until this take notices it
assert_eq "$(events seq)" "acquired busy busy released acquired broken acquired expired acquired released" \
  "the lock's events, in order"
assert_eq "$(field 1 pid seq)" "$taker" "acquired: pid of the taker"
assert_eq "$(field 1 host seq)" "$host" "acquired: host"
assert_eq "$(field 1 user seq)" "$user" "acquired: user"
assert_eq "$(field 1 note seq)" "first" "acquired: note"
f1=$(field 1 fence seq)
[[ $f1 =~ ^[0-9]{16}$ ]] || fail "acquired: fence $f1"
assert_eq "$(field 1 token seq)" "$(cat "$TEST_TMP/t1")" "acquired: token"
assert_eq "$(field 2 cmd seq)" "lock acquire" "busy: who tried"
assert_eq "$(field 2 held_by seq | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')" \
  "$taker" "busy: held by the taker"
waited=$(field 3 waited_ms seq)
[ "$waited" -ge 250 ] || fail "a --wait that ran out records how long it waited: $waited"
[ "$(field 4 held_ms seq)" -ge 0 ] || fail "released: held_ms"
assert_eq "$(field 6 note seq)" "operator" "broken: by whom"
f6=$(field 6 fence seq)
f8=$(field 8 fence seq)
[ "$f6" -gt "$f1" ] || fail "broken: the fence it broke, $f6, after $f1"
[ "$f8" -gt "$f6" ] || fail "expired: the lease that ran out, $f8, after $f6"
assert_eq "$(field 7 fence seq)" "$f8" "expired names the fence its take was given"
assert_eq "$(field 10 exit_code seq)" "3" "a run form's released carries its exit code"
assert_eq "$(field 10 cmd seq)" "sh" "a run form's cmd is its command"
[ "$(field 10 waited_ms seq)" -ge 0 ] || fail "a run form's released carries waited_ms"
[ "$(field 10 held_ms seq)" -ge 0 ] || fail "a run form's released carries held_ms"
at=$(field 1 at seq)
[[ "$at" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$ ]] ||
  fail "at is not RFC 3339 UTC with ms: $at"
expect 0 "$RCOORD" history seq
assert_lines "$OUT" 10 "text: one line per event"
assert_contains "$(sed -n 2p <<<"$OUT")" "busy"
assert_contains "$(sed -n 2p <<<"$OUT")" "held by $user@$host (pid $taker, lock acquire)"
assert_contains "$(sed -n 10p <<<"$OUT")" "exit_code=3"
pass "lock: acquired, busy (once per call), released, broken (by whom), expired (when next noticed), a run's exit code"

# --limit: the newest N; --since: by the server's clock.
assert_eq "$(events seq --limit 2)" "acquired released" "--limit 2: the two newest, oldest first"
assert_eq "$(events seq --since 1h --limit 1)" "released" "--since with --limit"
# --since cuts by the server's clock at the time `history` reads it. The cut is put just after
# the newest old event, counting from a server time read right before `history` runs; the new
# event comes a (scaled) second of server time after the old ones, so the cut falls between
# them as long as `history` reads the clock within that second of the redis-cli before it.
server_ms() {
  local t
  mapfile -t t < <(redis-cli -p "$R_PORT" time | tr -d '\r')
  echo $((t[0] * 1000 + t[1] / 1000))
}
newest_ms() { redis-cli -p "$R_PORT" xrevrange "rcoord:{lock:seq}:history" + - count 1 | head -n 1 | cut -d- -f1; }
old=$(newest_ms)
gap=$(scaled 1000)
past_gap() { [ "$(server_ms)" -gt $((old + gap)) ]; }
wait_until 60 past_gap || fail "the server's clock did not move past the gap"
"$RCOORD" lock acquire seq >/dev/null
since=$(($(server_ms) - old - 1))
assert_eq "$(events seq --since "${since}ms")" "acquired" "--since ${since}ms: only the last event"
pass "--limit and --since"

# A shared lock's readers, and a run that lost its lock and one that timed out.
r1=$("$RCOORD" lock acquire shared --shared --ttl 1h)
expect 1 "$RCOORD" lock acquire shared
expect 0 "$RCOORD" lock release shared --token "$r1"
assert_eq "$(events shared)" "acquired busy released" "reader events"
assert_eq "$(field 1 mode shared)" "shared" "a reader's events say so"
expect 124 "$RCOORD" lock run slow --max-run 200ms -- sleep 30
assert_eq "$(events slow)" "acquired timeout released" "a run past --max-run"
assert_eq "$(field 3 exit_code slow)" "124"
"$RCOORD" lock run lost --ttl 6s -- sleep 30 2>/dev/null &
runner=$!
wait_until 5 "$RCOORD" lock status lost
"$RCOORD" lock break lost >/dev/null
code=0; wait "$runner" || code=$?
assert_eq "$code" 5 "a run whose lock was broken is lost"
assert_eq "$(events lost)" "acquired broken lost" "the loser reports the loss"
assert_eq "$(field 3 exit_code lost)" "5"
pass "readers; a run's timeout and loss are recorded"

# --- a semaphore, an election and a queue --------------------------------------------------
# a lease the busy take below cannot outlast, however slow the machine
t=$("$RCOORD" sem take pool --limit 1 --ttl "$(scaled 1000)ms")
expect 1 "$RCOORD" sem take pool --limit 1
# lapsed: its deadline (server ms) is behind the server's clock
lapsed() {
  local deadline now
  deadline=$(redis-cli -p "$R_PORT" zscore 'rcoord:{sem:pool}' "$t")
  now=$(redis-cli -p "$R_PORT" time | head -1)
  [ "${deadline%.*}" -lt "$((now * 1000))" ]
}
wait_until 5 lapsed
expect 0 "$RCOORD" sem run pool --limit 1 -- true
assert_eq "$(events pool)" "taken busy expired taken released" "semaphore events"
assert_eq "$(field 3 token pool)" "$t" "expired: the holder whose lease ran out"
"$RCOORD" elect campaign leader --id a --ttl 300ms >/dev/null
wait_until 5 gone 'rcoord:{elect:leader}'
expect 0 "$RCOORD" elect run leader --id b -- true
assert_eq "$(events leader)" "elected expired elected resigned" "election events"
assert_eq "$(field 2 id leader)" "a" "expired: the leader whose lease ran out"
[ "$(field 3 term leader)" -gt "$(field 1 term leader)" ] || fail "elected: a higher term"
assert_eq "$(field 2 term leader)" "$(field 1 term leader)" "expired: the term of the lease that ran out"
"$RCOORD" queue push jobs one >/dev/null
"$RCOORD" queue pop jobs --ack-timeout 100ms --max-attempts 1 >/dev/null
# queue stats notices the lapsed lease (its last delivery) once it has run out
dead_one() { [ "$("$RCOORD" -o json queue stats jobs | python3 -c 'import json,sys; print(json.load(sys.stdin)["dead"])')" = 1 ]; }
wait_until 5 dead_one
expect 0 "$RCOORD" queue replay jobs
expect 0 "$RCOORD" queue purge jobs
assert_eq "$(events jobs)" "dead replayed purged" "queue events"
assert_eq "$(field 1 id jobs)" "1" "dead: the message id"
assert_eq "$(field 1 attempts jobs)" "1" "dead: its deliveries"
assert_eq "$(field 1 cmd jobs)" "queue pop" "dead: the consumer of its last delivery"
pass "sem taken/busy/expired/released, elect elected/expired/resigned, queue dead/replayed/purged"

# --- finding the type ----------------------------------------------------------------------
"$RCOORD" sem take seq --limit 1 >/dev/null
expect 2 "$RCOORD" history seq
assert_contains "$ERR" "--type"
expect 0 "$RCOORD" history seq --type sem
assert_lines "$OUT" 1
expect 1 "$RCOORD" history no-such-thing
pass "a name several types use asks for --type (exit 2); no such object is exit 1"

# --- --history 0, the cap, the expiry ------------------------------------------------------
# (leases of 10 minutes below: each later take must find the first still held, however slow
# the machine)
"$RCOORD" --history 0 lock acquire quiet --ttl 10m >/dev/null
"$RCOORD" --history 0 lock acquire quiet --ttl 10m >/dev/null || true
assert_eq "$(redis-cli -p "$R_PORT" exists 'rcoord:{lock:quiet}:history')" 0 "--history 0 records nothing"
for i in 1 2 3 4 5 6 7 8; do "$RCOORD" --history 5 lock acquire capped --ttl 10m >/dev/null || true; done
assert_eq "$(redis-cli -p "$R_PORT" xlen 'rcoord:{lock:capped}:history')" 5 "the log keeps --history events"
assert_eq "$(events capped)" "busy busy busy busy busy" "the newest are kept"
ttl=$(redis-cli -p "$R_PORT" pttl 'rcoord:{lock:capped}:history')
[ "$ttl" -gt $((7 * 86400000 - 60000)) ] && [ "$ttl" -le $((7 * 86400000)) ] ||
  fail "the log expires 7 days after its newest event: pttl $ttl"
printf 'history = 2\n' >"$TEST_TMP/config.toml"
for i in 1 2 3; do "$RCOORD" --config "$TEST_TMP/config.toml" lock acquire configured --ttl 10m >/dev/null || true; done
assert_eq "$(redis-cli -p "$R_PORT" xlen 'rcoord:{lock:configured}:history')" 2 "history in the config file"
pass "--history 0 records nothing; the log is capped and expires 7 days after its newest event"

# --- --follow ------------------------------------------------------------------------------
"$RCOORD" -o json history follow --type lock --follow --wait 20s >"$TEST_TMP/follow" &
follower=$!
track "$follower"
wait_blocked "$R_PORT" 1
sent=$(now_ms)
"$RCOORD" lock acquire follow --ttl 10m >/dev/null # (released below, after many calls)
wait_until 5 grep -q acquired "$TEST_TMP/follow"
took=$(($(now_ms) - sent))
[ "$took" -lt "$(scaled 1000)" ] || fail "--follow printed the event after ${took}ms"
kill -INT "$follower"
code=0; wait "$follower" || code=$?
assert_eq "$code" 0 "--follow ends with exit 0 on Ctrl-C"
start=$(now_ms)
expect 0 "$RCOORD" history follow --follow --wait 300ms
[ $(($(now_ms) - start)) -ge 300 ] || fail "--follow --wait 300ms ended before 300ms"
assert_lines "$OUT" 1 "--follow prints the history first"
assert_eq "$ERR" "" "--wait: no warning"
# --timeout after the verb: the deprecated spelling of --wait, which warns; both: usage error
start=$(now_ms)
expect 0 "$RCOORD" history follow --follow --timeout 300ms
[ $(($(now_ms) - start)) -ge 300 ] || fail "--follow --timeout 300ms ended before 300ms"
assert_lines "$OUT" 1 "--follow --timeout prints the history too"
assert_eq "$ERR" "rcoord: warning: --timeout after 'history' is deprecated: write --wait 300ms (--timeout is the I/O timeout everywhere else)"
expect 2 "$RCOORD" history follow --follow --timeout 1s --wait 1s
assert_contains "$ERR" "--timeout and --wait given together"
# without --follow nothing waits: --wait there is a mistake, said so (it was ignored)
expect 2 "$RCOORD" history follow --wait 5s
assert_contains "$ERR" "--wait only applies with --follow"
assert_eq "$OUT" "" "a refused history prints no event"
pass "--follow prints an event within a second ($took ms), exits 0 on Ctrl-C and at --wait (--timeout: deprecated); --wait without --follow: exit 2"

# --- rm takes the history with the object; ls does not list a history alone ---------------
"$RCOORD" lock release follow --token "$(field 1 token follow)" >/dev/null
redis-cli -p "$R_PORT" del 'rcoord:{lock:follow}:wake' >/dev/null # what a release leaves for 60s
expect 1 "$RCOORD" ls follow
expect 0 "$RCOORD" rm follow --type lock
assert_eq "$(redis-cli -p "$R_PORT" exists 'rcoord:{lock:follow}:history')" 0 "rm removes the history"
pass "a history alone is no object for ls; rm removes it"

# --- what is read back is escaped; notes are quoted and capped ----------------------------
# A log any caller writes to: an event forged with a terminal escape and a second line, a note
# that looks like a field.
redis-cli -p "$R_PORT" xadd 'rcoord:{lock:hostile}:history' '*' \
  event $'acquired\033]0;owned\007\n2026-01-01T00:00:00.000Z  released' >/dev/null
expect 0 "$RCOORD" history hostile
assert_lines "$OUT" 1 "a forged event is one line"
case "$OUT" in *$'\033'* | *$'\007'*) fail "a control byte of the event reached the terminal" ;; esac
assert_contains "$OUT" 'acquired\x1b]0;owned\x07\n2026-01-01T00:00:00.000Z  released'
expect 0 "$RCOORD" lock acquire noted --note 'x fence=99' --token 'tok fence=98'
expect 0 "$RCOORD" history noted
grep -qE ' fence=[0-9]{16} ' <<<"$OUT" || fail "the real fence: $OUT"
assert_contains "$OUT" ' note="x fence=99"' "the note, quoted"
assert_contains "$OUT" ' token="tok fence=98"' "a token with a space, quoted"
expect 0 "$RCOORD" lock acquire quoted --note 'say "hi"'
expect 0 "$RCOORD" history quoted
assert_contains "$OUT" ' note="say \"hi\""'
long=$(head -c 1025 /dev/zero | tr '\0' n)
expect 2 "$RCOORD" lock acquire long-note --note "$long"
assert_contains "$ERR" "--note is 1025 bytes"
expect 2 env RCOORD_NOTE="$long" "$RCOORD" lock acquire long-note
assert_eq "$(redis-cli -p "$R_PORT" exists 'rcoord:{lock:long-note}')" 0 "a refused note took the lock"
expect 0 "$RCOORD" lock acquire long-note --note "${long:1}"
pass "history's text escapes what it reads back, quotes notes; a note is at most 1 KiB"

# --- one caller's small --history never trims what the log keeps for the others ------------
for _ in 1 2 3 4 5 6; do "$RCOORD" lock acquire shared-log --ttl 10m >/dev/null || true; done
expect 1 "$RCOORD" --history 1 lock acquire shared-log --ttl 10m
assert_eq "$(redis-cli -p "$R_PORT" xlen 'rcoord:{lock:shared-log}:history')" 7 "--history 1 trimmed the log"
assert_eq "$(redis-cli -p "$R_PORT" get 'rcoord:{lock:shared-log}:history:cap')" 100 "the cap kept with the log"
for _ in 1 2 3 4; do "$RCOORD" --history 3 lock acquire small-log --ttl 10m >/dev/null || true; done
assert_eq "$(redis-cli -p "$R_PORT" xlen 'rcoord:{lock:small-log}:history')" 3
"$RCOORD" --history 5 lock acquire small-log --ttl 10m >/dev/null || true
"$RCOORD" --history 5 lock acquire small-log --ttl 10m >/dev/null || true
"$RCOORD" --history 2 lock acquire small-log --ttl 10m >/dev/null || true
assert_eq "$(redis-cli -p "$R_PORT" xlen 'rcoord:{lock:small-log}:history')" 5 "a larger --history raises the cap"
ttl=$(redis-cli -p "$R_PORT" pttl 'rcoord:{lock:small-log}:history:cap')
[ "$ttl" -gt $((7 * 86400000 - 60000)) ] || fail "the cap expires with the log: pttl $ttl"
pass "a call's --history never shrinks the log below its stored cap; a larger one raises it"

# --- rm --force of what is in use leaves a `removed` event that outlives the object --------
token=$("$RCOORD" lock acquire forced --ttl 1h --note holder)
holder_fence=$(field 1 fence forced)
expect 0 "$RCOORD" rm forced --type lock --force --note cleanup
expect 1 "$RCOORD" lock status forced
assert_eq "$(events forced)" "acquired removed" "the history of a lock removed while held"
assert_eq "$(field 2 cmd forced)" "rm" "removed: by the rm"
assert_eq "$(field 2 note forced)" "cleanup" "removed: its note"
assert_eq "$(field 2 token forced)" "$token" "removed: the token it held"
assert_eq "$(field 2 fence forced)" "$holder_fence" "removed: the fence it held"
assert_eq "$(field 2 held_by forced | python3 -c 'import json,sys; print(json.load(sys.stdin)["note"])')" \
  holder "removed: the holder it had"
ttl=$(redis-cli -p "$R_PORT" pttl 'rcoord:{lock:forced}:history')
[ "$ttl" -gt $((7 * 86400000 - 60000)) ] || fail "the history outlives the object by its expiry: pttl $ttl"
expect 1 "$RCOORD" ls forced
"$RCOORD" sem take forced-sem --limit 2 --ttl 1h >/dev/null
expect 0 "$RCOORD" rm forced-sem --type sem --force
assert_eq "$(field 2 holders forced-sem --type sem)" 1 "removed: a semaphore's holders"
"$RCOORD" elect campaign forced-elect --id boss --ttl 1h >/dev/null
expect 0 "$RCOORD" rm forced-elect --type elect --force
assert_eq "$(field 2 id forced-elect --type elect)" boss "removed: the leader"
pass "rm --force of a held lock, semaphore or election leaves a removed event (who, what it held)"
