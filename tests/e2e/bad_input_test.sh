# Bad input through the CLI: every case exits with its documented code and says so in exactly
# one line on stderr that starts with `rcoord:`. Wrong key types for every primitive (the key is
# named and left as it was), empty and odd names, huge and binary items, bad numbers, hostile
# URLs, unreadable files, and servers that are not Redis or close in the middle of a reply.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
unset RCOORD_CONFIG RCOORD_PASSWORD REDISCLI_AUTH
export HOME=$TEST_TMP/home
mkdir -p "$HOME"
cli() { redis-cli -p "$R_PORT" "$@"; }

# refused CODE CMD...: exits CODE with one `rcoord: ...` line on stderr.
refused() {
  local want=$1
  shift
  expect "$want" "$@"
  assert_lines "$ERR" 1 "stderr of: $*"
  case "$ERR" in rcoord:*) ;; *) fail "stderr does not start with 'rcoord:' for: $* | $ERR" ;; esac
}

# --- wrong key type, every primitive ------------------------------------------------------
# Each verb of a group, run against NAME (the placeholder @ stands for the name).
verbs_of() {
  case $1 in
    lock) printf '%s\n' "lock acquire @" "lock acquire @ --shared" "lock status @" \
      "lock release @ --token t" "lock extend @ --token t" "lock break @" "lock run @ -- true" ;;
    sem) printf '%s\n' "sem take @ --limit 2" "sem status @" "sem release @ --token t" \
      "sem refresh @ --token t" "sem run @ --limit 1 -- true" ;;
    limit) printf '%s\n' "limit check @ --rate 5/s" "limit check @ --rate 5/s --algo token-bucket" \
      "limit check @ --rate 5/s --algo sliding-window" \
      "limit check @ --rate 5/s --algo fixed-window" "limit status @ --rate 5/s" \
      "limit wait @ --rate 5/s --wait 1s" "limit reset @" ;;
    bloom) printf '%s\n' "bloom add @ x" "bloom test @ x" "bloom info @" \
      "bloom reserve @ --capacity 100 --error-rate 0.01" ;;
    pf) printf '%s\n' "pf add @ x" "pf count @" "pf merge @ @" ;;
    complete) printf '%s\n' "complete add @ x" "complete suggest @ x" "complete remove @ x" ;;
    recent) printf '%s\n' "complete recent push @ x" "complete recent suggest @ x" ;;
    elect) printf '%s\n' "elect campaign @ --id a" "elect status @" "elect resign @ --id a" \
      "elect observe @ --wait 1s" "elect run @ --id a -- true" ;;
    queue) printf '%s\n' "queue push @ m" "queue pop @" "queue pop @ --ack-timeout 5s" \
      "queue len @" "queue peek @" "queue stats @" "queue ack @ 1" "queue nack @ 1" \
      "queue dead @" "queue replay @" "queue purge @ --dead" \
      "queue consume @ --max-messages 1 --idle-exit 1s -- cat" ;;
    signal) printf '%s\n' "signal send @ d" "signal send @ d --one" "signal wait @ --wait 1s" ;;
    latch) printf '%s\n' "latch init @ --count 2" "latch down @" "latch wait @ --wait 1s" \
      "latch status @" ;;
  esac
}

# The foreign value of each kind, as redis-cli shows it (checked again afterwards).
snapshot() {
  case $1 in
    str) cli get "$2" ;;
    lst) cli lrange "$2" 0 -1 ;;
    hsh) cli hgetall "$2" ;;
  esac
}

# A recent list is a plain Redis list of items, so a list under its name is taken as one:
# only a string and a hash are foreign to it.
kinds_of() { if [ "$1" = recent ]; then echo "str hsh"; else echo "str lst hsh"; fi; }

# wrong_type GROUP KIND: every verb of GROUP on a foreign key of KIND (runs in a subshell).
wrong_type() {
  local group=$1 kind=$2 key="rcoord:{$1:$2}" before verb
  TEST_TMP=$TEST_TMP/$group-$kind
  mkdir -p "$TEST_TMP"
  case $kind in
    str) cli set "$key" precious >/dev/null ;;
    lst) cli rpush "$key" a b >/dev/null ;;
    hsh) cli hset "$key" f v >/dev/null ;;
  esac
  before=$(snapshot $kind "$key")
  while IFS= read -r verb; do
    # shellcheck disable=SC2086
    refused 4 "$RCOORD" ${verb//@/$kind} </dev/null
    assert_contains "$ERR" "$key" "the key is named ($verb)"
  done < <(verbs_of $group)
  assert_eq "$(snapshot $kind "$key")" "$before" "$key changed"
  assert_eq "$(cli --scan --pattern "rcoord:{$group:$kind}*" | wc -l)" 1 \
    "a verb on the foreign $key created keys beside it"
}
# The three kinds of one group side by side (the cases are independent keys).
# (At a lower effort, a sample of the pairs: each group and each kind still runs; sampled.)
g=-1
for group in lock sem limit bloom pf complete recent elect queue signal latch; do
  g=$((g + 1))
  pids=()
  k=-1
  for kind in $(kinds_of $group); do
    k=$((k + 1))
    sampled $g $k || continue
    wrong_type $group $kind &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || fail "wrong type: a $group case failed (above)"; done
done
pass "wrong type: every verb of every primitive exits 4, names the key, changes nothing"

# --- empty names ---------------------------------------------------------------------------
for args in "lock acquire ''" "lock run '' -- true" "sem take '' --limit 1" \
  "sem run '' --limit 1 -- true" "limit check '' --rate 1/s" "bloom add '' x" "bloom info ''" \
  "pf add '' x" "pf count ''" "pf merge '' x" "complete add '' x" "complete suggest '' x" \
  "complete recent push '' x" "elect campaign '' --id a" "elect campaign e --id ''" \
  "elect run '' --id a -- true" "elect observe '' --wait 1s" "queue push '' m" \
  "queue pop ''" "queue consume '' -- true" "signal send ''" "signal wait '' --wait 1s" \
  "latch init '' --count 1" "latch wait '' --wait 1s" "history ''" "history '' --type lock" \
  "rm '' --type lock"; do
  eval "refused 2 \"\$RCOORD\" $args" </dev/null
  assert_contains "$ERR" "empty" "$args"
done
pass "empty names exit 2"

# --- odd names: spaces, newlines, 4 KB; a name is bytes, kept exactly ----------------------
long=$(printf 'n%.0s' $(seq 4096))
for name in "with space" $'new\nline' "$long" '{tag}*?'; do
  expect 0 "$RCOORD" lock acquire "$name" --ttl 30s
  token=$OUT
  expect 0 "$RCOORD" lock status "$name" --json
  assert_eq "$(json_field "$OUT" name)" "$name" "lock status names it exactly"
  assert_eq "$(cli hget "rcoord:{lock:$name}" token)" "$token" "the key holds the name exactly"
  expect 0 "$RCOORD" lock release "$name" --token "$token"
  expect 0 "$RCOORD" sem take "$name" --limit 1
  expect 0 "$RCOORD" elect campaign "$name" --id "$name"
  expect 0 "$RCOORD" queue push "$name" m
  expect 0 "$RCOORD" queue pop "$name"
  assert_eq "$OUT" m
  expect 0 "$RCOORD" latch init "$name" --count 1
  expect 0 "$RCOORD" limit check "$name" --rate 1/s
  expect 0 "$RCOORD" bloom add "$name" x
  expect 0 "$RCOORD" pf add "$name" x
  expect 0 "$RCOORD" complete add "$name" x
  # a note that quotes the name is still one line, with the newline shown escaped
  refused 1 "$RCOORD" signal send "$name"
  expect 0 "$RCOORD" lock acquire "$name" --ttl 30s
  refused 1 "$RCOORD" lock acquire "$name"
  assert_contains "$ERR" "is busy"
done
refused 1 "$RCOORD" signal send $'a\nb\033[31m'
assert_eq "$ERR" "rcoord: nobody waits on channel 'a\\nb\\x1b[31m'" "control bytes shown escaped"
pass "names with spaces, newlines, 4 KB and glob characters work; messages stay one line"
# (A NUL byte cannot be part of an argument at all: the OS ends argv strings at NUL. Items with
# NUL bytes come through stdin with -0 or --file, below.)

# --- items and messages of 1 MB, binary ---------------------------------------------------
head -c 1048576 /dev/urandom >"$TEST_TMP/bin"
expect 0 "$RCOORD" queue push big --file "$TEST_TMP/bin"
"$RCOORD" queue pop big >"$TEST_TMP/popped"
# text output frames the message with a newline after it
assert_eq "$(stat -c %s "$TEST_TMP/popped")" 1048577 "size of the popped message"
cmp -s -n 1048576 "$TEST_TMP/bin" "$TEST_TMP/popped" || fail "a 1 MB binary message came back changed"
tr -d '\000\n' <"$TEST_TMP/bin" >"$TEST_TMP/line"  # one line of about 1 MB
for group in bloom pf complete; do
  "$RCOORD" $group add "big-$group" <"$TEST_TMP/line" >/dev/null || fail "$group add of 1 MB"
done
expect 0 "$RCOORD" bloom test big-bloom <"$TEST_TMP/line"
expect 0 "$RCOORD" pf count big-pf
assert_eq "$OUT" 1
printf 'a\000b\000\377\376\000' >"$TEST_TMP/nul"
expect 0 "$RCOORD" bloom add nul -0 <"$TEST_TMP/nul"
expect 0 "$RCOORD" bloom test nul -0 <"$TEST_TMP/nul"
expect 0 "$RCOORD" queue push nul --file "$TEST_TMP/nul"
expect 0 "$RCOORD" queue pop nul --json
assert_eq "$(json_field "$OUT" message_base64)" "$(base64 <"$TEST_TMP/nul")" "binary message"
pass "1 MB and binary items and messages round-trip"

# --- numbers: negative, zero, huge TTLs, rates, limits, counts ----------------------------
# The cross-products of forms and values below run whole at full effort, sampled below it.
huge=99999999999999999999999
f=-1
for form in "lock acquire n --ttl @" "lock acquire n --wait @" "lock run n --ttl @ -- true" \
  "lock run n --kill-grace @ -- true" "sem take n --limit 1 --ttl @" \
  "elect campaign n --id a --ttl @" "latch init n --count 1 --ttl @" "queue push n m --delay @" \
  "queue pop n --ack-timeout @" "--timeout @ lock status n"; do
  f=$((f + 1))
  i=-1
  for v in -1 -5s 1e9 "$huge" 100000000h 5s5s; do
    i=$((i + 1))
    sampled $f $i || continue
    # shellcheck disable=SC2086
    refused 2 "$RCOORD" ${form//@/$v}
    assert_contains "$ERR" "$v"
  done
done
for opt in "lock acquire n --ttl" "sem take n --limit 1 --ttl" "elect campaign n --id a --ttl" \
  "latch init n --count 1 --ttl"; do
  # shellcheck disable=SC2086
  refused 2 "$RCOORD" $opt 0
  assert_contains "$ERR" "positive"
done
for rate in -1/s 0/s 5 5/0s "$huge/s" 9007199254740993/s 1/99999999h 1e3/s 5/x; do
  refused 2 "$RCOORD" limit check n --rate "$rate"
done
f=-1
for algo in gcra token-bucket sliding-window fixed-window; do
  f=$((f + 1))
  i=-1
  for extra in "--burst 0" "--burst -1" "--burst $huge" "--cost 0" "--cost -1"; do
    i=$((i + 1))
    sampled $f $i || continue
    # shellcheck disable=SC2086
    refused 2 "$RCOORD" limit check n --rate 10/s --algo $algo $extra
  done
  refused 1 "$RCOORD" limit check "never-$algo" --rate 10/s --algo $algo --cost 1000000
  assert_contains "$ERR" "never allows"
  refused 2 "$RCOORD" limit check "never-$algo" --rate 10/s --algo $algo --cost "$huge"
done
for v in 0 -1 "$huge" 9007199254740993; do
  refused 2 "$RCOORD" sem take n --limit "$v"
  refused 2 "$RCOORD" sem take n --limit 2 --permits "$v"
  refused 2 "$RCOORD" latch down n --by "$v"
  refused 2 "$RCOORD" queue pop n --count "$v"
  refused 2 "$RCOORD" queue peek n --count "$v"
  refused 2 "$RCOORD" queue pop n --ack-timeout 5s --max-attempts "$v"
  refused 2 "$RCOORD" queue consume n --max-messages "$v" -- true
  refused 2 "$RCOORD" complete suggest n x --limit "$v"
  refused 2 "$RCOORD" complete recent push n x --max "$v"
  refused 2 "$RCOORD" bloom reserve n --capacity "$v" --error-rate 0.01
done
for v in -1 "$huge" 9007199254740993; do refused 2 "$RCOORD" latch init n --count "$v"; done
for v in 0 1 -0.1 nan inf; do
  refused 2 "$RCOORD" bloom reserve n --capacity 100 --error-rate "$v"
done
refused 2 "$RCOORD" complete add n x --score nan
# Integers are decimal: CLI11 alone read 010 as octal 8 and 0x10 as hex 16.
f=-1
for form in "sem take n --limit @" "sem take n --limit 2 --permits @" "latch init n --count @" \
  "latch down n --by @" "queue pop n --count @" "queue peek n --count @" \
  "queue pop n --ack-timeout 5s --max-attempts @" "queue ack n 1 --attempt @" \
  "queue nack n 1 --attempt @" "queue consume n --max-messages @ -- true" \
  "complete suggest n x --limit @" "complete recent push n x --max @" \
  "bloom reserve n --capacity @ --error-rate 0.01" \
  "bloom reserve n --capacity 10 --error-rate 0.01 --expansion @" \
  "limit check n --rate 10/s --burst @" "limit check n --rate 10/s --cost @" \
  "lock run n -E @ -- true" "sem run n --limit 1 -E @ -- true" "elect run n --id a -E @ -- true" \
  "-p @ lock status n" "-n @ lock status n" "--wait-replicas @ lock status n"; do
  read -r -a words <<<"$form"
  f=$((f + 1))
  i=-1
  for v in 0x10 0X1 1e3 +5 -0 -5 " 5" 5.0 0b1 1_000; do
    i=$((i + 1))
    sampled $f $i || continue
    args=()
    for w in "${words[@]}"; do if [ "$w" = @ ]; then args+=("$v"); else args+=("$w"); fi; done
    refused 2 "$RCOORD" "${args[@]}"
    assert_contains "$ERR" "bad number"
  done
done
for v in 0x1p-7 inf nan 1e999; do
  refused 2 "$RCOORD" bloom reserve n --capacity 10 --error-rate "$v"
  refused 2 "$RCOORD" complete add n x --score "$v"
done
printf 'db = 0x2\n' >"$TEST_TMP/hex.toml"
refused 2 "$RCOORD" --config "$TEST_TMP/hex.toml" lock status n
printf 'url = "%s"\ndb = "010"\n' "$R_URL" >"$TEST_TMP/octal.toml"
expect 0 env -u RCOORD_URL "$RCOORD" --config "$TEST_TMP/octal.toml" latch init in-db-10 --count 1
assert_eq "$(cli -n 10 exists 'rcoord:{latch:in-db-10}')" 1 "db 010 in the config file is db 10"
assert_eq "$(cli --scan --pattern 'rcoord:{*:n}*' | wc -l)" 0 "a refused number wrote something"
# Leading zeros are decimal, as in durations.
expect 0 "$RCOORD" latch init octal --count 010
assert_eq "$OUT" 10
expect 0 "$RCOORD" -n 010 latch init in-db --count 1
assert_eq "$(cli -n 10 exists 'rcoord:{latch:in-db}')" 1 "-n 010 is db 10"
expect 0 "$RCOORD" sem take dec --limit 010 --json
assert_eq "$(json_field "$OUT" limit)" 10
pass "bad TTLs, rates, bursts, costs, limits and counts exit 2 (and write nothing); integers are decimal"

# --- durations past the limit are too long, not malformed --------------------------------
for v in 100000000h 87601h 99999999999999999999; do
  refused 2 "$RCOORD" lock acquire n --ttl "$v"
  assert_contains "$ERR" "'$v' is too long"
  refused 2 "$RCOORD" lock acquire n --wait "$v"
  assert_contains "$ERR" "is too long"
  refused 2 "$RCOORD" --timeout "$v" lock status n
  assert_contains "$ERR" "is too long"
done
refused 2 "$RCOORD" lock acquire n --ttl 5x
assert_contains "$ERR" "bad duration"
pass "a duration over 10 years is 'too long'"

# --- --watch has a floor ----------------------------------------------------------------------
for v in 0.5ms 99ms 0; do
  refused 2 "$RCOORD" lock status n --watch "$v"
  assert_contains "$ERR" "too short"
done
pass "--watch below 100ms exits 2"

# --- durations count whole milliseconds: nothing between 0 and 1ms --------------------------
for v in 0.5ms 0.9ms 0.0001s; do
  refused 2 "$RCOORD" bloom add n x --expire "$v"
  assert_contains "$ERR" "at least 1ms"
  refused 2 "$RCOORD" lock acquire n --ttl "$v"
  assert_contains "$ERR" "too short"
  refused 2 "$RCOORD" lock acquire n --wait "$v"
  assert_contains "$ERR" "too short"
  refused 2 "$RCOORD" --timeout "$v" lock status n
  assert_contains "$ERR" "too short"
  refused 2 "$RCOORD" limit check n --rate "5/$v"
done
refused 2 "$RCOORD" bloom add n x --expire 0
assert_contains "$ERR" "at least 1ms"
assert_eq "$(cli --scan --pattern 'rcoord:{*:n}*' | wc -l)" 0 "a refused duration wrote something"
pass "a duration between 0 and 1ms exits 2 (too short), as --expire 0 does"

# --- typos, a missing --, flock's letters: one line, exit 2, nothing run ---------------------
for args in "lokc x" "lock aquire x" "version now" "completion zsh" "help" "lock frob x" \
  "lock acquire x --ttll 5s" "lock acquire x -z" "lock run job touch '$TEST_TMP/ran' -v" \
  "queue consume q touch '$TEST_TMP/ran' --verbose" "sem run s --limit 1 touch '$TEST_TMP/ran' -a" \
  "lock run -n 1 job -- touch '$TEST_TMP/ran'" "lock run job -s -- touch '$TEST_TMP/ran'" \
  "lock run job -c 'touch $TEST_TMP/ran' -- touch '$TEST_TMP/ran'" "lock run job" \
  "signal wait c --wait 1s --timeout 1s" "limit wait k --rate 1/s -w 1s --max-wait 1s"; do
  eval "refused 2 \"\$RCOORD\" $args" </dev/null
done
[ ! -e "$TEST_TMP/ran" ] || fail "a refused command line ran its command"
pass "typos, a run form's command without --, -n/-s after lock run: exit 2, one line, nothing run"

# --- the operator's first hour: flock's habits, typos, waiting flags ------------------------
# The mistakes a new operator makes (issue "The operator's first hour", items 3, 4 and 8; the
# server's refusals of item 5 are in messages_test.sh), each with its exit code and the words
# that say what to do. CODE|ARGS|WANT: ARGS is eval'd; WANT is on stderr ("" for nothing).
expect 0 "$RCOORD" lock acquire op-held --ttl 10m
expect 0 "$RCOORD" limit check op-rate --rate 1/h
while IFS='|' read -r code args want; do
  [ -n "$code" ] || continue
  eval "expect $code \"\$RCOORD\" $args" </dev/null
  if [ -z "$want" ]; then
    assert_eq "$ERR" "" "$args"
  else
    assert_contains "$ERR" "$want" "$args"
    # one line besides a deprecation warning (a wait that ran out is a "no": its note)
    [ "$(printf '%s\n' "$ERR" | grep -vc '^rcoord: warning: ')" -le 1 ] || fail "$args: $ERR"
  fi
done <<'CASES'
2|lock run -n 1 op-job -- true|-n after 'lock run' would choose a Redis database
2|lock run op-job -n -- true|-n after 'lock run'
2|lock run -s op-job -- true|--shared
1|lock run op-held --timeout 10 -- true|to wait for the lock, give --wait
0|lock run -w 1 op-job -- true|
0|lock run -x op-job -- true|
3|lock run op-job -c 'exit 3'|
2|lock run op-job -c true -- true|-c
0|lock run op-held -E 0 -- true|
1|lock run op-held -- true|is busy: held by
2|lokc op-x|did you mean 'lock'
2|lock aquire op-x|did you mean 'acquire'
0|version|
2|completion bash|no 'completion' command
2|lock run op-job ls -la|put -- before the command: rcoord lock run op-job -- ls -la
1|signal wait op-ch --timeout 200ms|--timeout after 'signal wait' is deprecated: write --wait 200ms
1|latch wait op-latch --timeout 200ms|--timeout after 'latch wait' is deprecated: write --wait 200ms
0|elect observe op-e --timeout 200ms|--timeout after 'elect observe' is deprecated: write --wait 200ms
1|limit wait op-rate --rate 1/h --max-wait 200ms|--max-wait after 'limit wait' is deprecated: write --wait 200ms
0|history op-h --type lock --follow --timeout 200ms|--timeout after 'history' is deprecated: write --wait 200ms
2|signal wait op-ch --wait 1s --timeout 1s|--timeout and --wait given together
2|history op-h --follow --wait 1s --timeout 1s|--timeout and --wait given together
CASES
pass "flock's habits, typos, a missing -- and the old waiting flags: each its exit code and hint"

# --- malformed and hostile URLs -------------------------------------------------------------
k10=$(printf 'a%.0s' $(seq 10240))
for url in redis://127.0.0.1:0 redis://127.0.0.1:-1 redis://127.0.0.1:65536 \
  redis://127.0.0.1:99999999999999999999 redis://127.0.0.1:abc redis://127.0.0.1: \
  'redis://[::1' 'redis://[::1]:x' 'redis://[::1]x' 'redis://[zz]:6379' 'redis://[]:6379' \
  'redis://us%er:p%zz@127.0.0.1:1' 'redis://127.0.0.1:1/abc' 'redis://127.0.0.1:1/-1' \
  'redis://127.0.0.1:1/0/extra' 'redis://127.0.0.1:1?x=1' 'redis://127.0.0.1:1#frag' \
  "redis://$k10" "redis://127.0.0.1:1/$k10" "redis://$k10:1" '' 'unix://' 'unix:///x?db=y' \
  'http://127.0.0.1:1' $'redis://127.0.0.1:1\n' 'redis://host with space:1'; do
  refused 2 "$RCOORD" --url "$url" lock status x
  assert_contains "$ERR" "bad URL"
done
expect 2 "$RCOORD" --url 'redis://u:s3cret%zz@127.0.0.1:1' lock status x
case "$ERR" in *s3cret*) fail "a password appeared in a URL error" ;; esac
# Mistyped URLs, wherever they come from, never show their password.
for url in 'redis//:s3cret@127.0.0.1' 'redis:/u:s3cret@127.0.0.1' 'redis:s3cret@h' \
  'redis://u:s3cret/x@127.0.0.1' 'redis://u:s3c?ret@127.0.0.1' 'redis://127.0.0.1:x?password=s3c@ret' \
  'xx:s3cret@h://' 'redis://u:s3cret@127.0.0.1:1:2'; do
  refused 2 "$RCOORD" --url "$url" lock status x
  case "$ERR" in *s3c*|*ret*) fail "a password appeared: $ERR" ;; esac
  printf 'url = %s\n' "$url" >"$TEST_TMP/unquoted.toml"
  refused 2 "$RCOORD" --config "$TEST_TMP/unquoted.toml" lock status x
  case "$ERR" in *s3c*|*ret*) fail "a password appeared from the config file: $ERR" ;; esac
  RCOORD_URL=$url refused 2 "$RCOORD" lock status x
  case "$ERR" in *s3c*|*ret*) fail "a password appeared from RCOORD_URL: $ERR" ;; esac
done
refused 2 "$RCOORD" --sentinel 'u:s3cret@127.0.0.1:1' --sentinel-master m lock status x
case "$ERR" in *s3c*) fail "a password appeared in a --sentinel error: $ERR" ;; esac
# One port; no NUL or control byte in a host or a socket path.
for url in redis://127.0.0.1:1:2 'redis://::1:6379' 'redis://a%00b:1' 'redis://a%0ab:1' \
  'unix:///tmp/a%00b.sock'; do
  refused 2 "$RCOORD" --url "$url" lock status x
  assert_contains "$ERR" "bad URL"
done
# -h is checked as a URL's host is: a control byte, a space, '/' or '@' is a usage error
# before any lookup or connection, from the command line or the config file.
for host in $'127.0.0.1\n' $'a\nb' $'a\rb' $'a\tb' 'a b' '' 'a/b' 'u@h' $'a\x7fb'; do
  refused 2 "$RCOORD" -h "$host" lock status x
  assert_contains "$ERR" "bad host"
done
printf 'host = "127.0.0.1\\n"\n' >"$TEST_TMP/host.toml"
refused 2 env -u RCOORD_URL "$RCOORD" --config "$TEST_TMP/host.toml" lock status x
assert_contains "$ERR" "bad host"
expect 1 "$RCOORD" -h 127.0.0.1 -p "$R_PORT" lock status x
pass "-h with a control byte, a space, '/' or '@': exit 2 before any connection"
# The same master twice is no Redlock.
refused 2 "$RCOORD" -u "$R_URL" -u "$R_URL" -u "redis://127.0.0.1:$(free_port)" lock status x
assert_contains "$ERR" "given twice"
refused 2 "$RCOORD" -u "$R_URL" -u "redis://127.0.0.1:$R_PORT/2" -u "$R_URL/3" lock status x
assert_contains "$ERR" "given twice"
# ... nor is one server under two names: with the third node down, its vote would make a
# quorum of one server (it was "acquired on 2 of 3").
dead=redis://127.0.0.1:$(free_port)
for alias in "redis://localhost:$R_PORT" "redis://127.1:$R_PORT" "redis://[::ffff:127.0.0.1]:$R_PORT"; do
  refused 2 "$RCOORD" -u "$R_URL" -u "$alias" -u "$dead" lock acquire one-server
  assert_contains "$ERR" "reach one server (127.0.0.1:$R_PORT)"
done
# ... nor one server by TCP and by its Unix socket: the same run_id once connected.
refused 2 "$RCOORD" -u "$R_URL" -u "unix://$R_SOCK" -u "$dead" lock acquire one-server
assert_contains "$ERR" "reach one server (run_id "
assert_eq "$(cli exists 'rcoord:{lock:one-server}')" 0 "a Redlock over one server took the lock"
# An empty password in a URL hides nothing: no warning about a password on the command line.
# (The server has no password: it refuses AUTH of an empty one for no user, one line and exit
# 3, and takes any for the default user, which has none.)
refused 3 "$RCOORD" --url "redis://:@127.0.0.1:$R_PORT" ping
case "$ERR" in *warning*) fail "an empty password was warned about: $ERR" ;; esac
expect 0 "$RCOORD" --url "redis://default:@127.0.0.1:$R_PORT" ping
assert_eq "$ERR" "" "stderr with an empty password for the default user"
# percent-encoding is decoded where it is allowed
expect 1 "$RCOORD" --url "redis://%31%32%37.0.0.1:$R_PORT" lock status x
refused 3 "$RCOORD" --url "unix://$TEST_TMP/no.sock" lock status x
refused 3 "$RCOORD" --url "redis://[::1]:$(free_port)" --timeout 1s lock status x
pass "malformed and hostile URLs exit 2 before any connection"

# --- prefixes ----------------------------------------------------------------------------------
for prefix in 'a{' 'a}' '{x}:' 'x{y}z'; do
  refused 2 "$RCOORD" --prefix "$prefix" lock acquire x
  assert_contains "$ERR" "--prefix"
  printf 'prefix = "%s"\n' "$prefix" >"$TEST_TMP/prefix.toml"
  refused 2 "$RCOORD" --config "$TEST_TMP/prefix.toml" lock acquire x
done
pass "a --prefix holding a brace exits 2"

# --- unreadable password and config files ---------------------------------------------------
mkdir -p "$TEST_TMP/a-dir"
for opt in --password-file --config; do
  refused 2 "$RCOORD" $opt "$TEST_TMP/a-dir" lock status x
  assert_contains "$ERR" "cannot read"
  refused 2 "$RCOORD" $opt "$TEST_TMP/missing" lock status x
  assert_contains "$ERR" "cannot read"
done
: >"$TEST_TMP/empty-password"
refused 2 "$RCOORD" --password-file "$TEST_TMP/empty-password" lock status x
assert_contains "$ERR" "is empty"
head -c 4096 /dev/urandom | tr -d '\n' >"$TEST_TMP/binary.toml"
printf 'x\n' >>"$TEST_TMP/binary.toml"
refused 2 "$RCOORD" --config "$TEST_TMP/binary.toml" lock status x
printf 'url = "\n' >"$TEST_TMP/open.toml"
refused 2 "$RCOORD" --config "$TEST_TMP/open.toml" lock status x
printf 'prefix = "a\\u0000b"\n' >"$TEST_TMP/escape.toml"
refused 2 "$RCOORD" --config "$TEST_TMP/escape.toml" lock status x
# Bounded: a device without end, a large file, a directory. Exit 2, never memory without end.
refused 2 "$RCOORD" --password-file /dev/zero lock status x
assert_contains "$ERR" "password file '/dev/zero' is larger than 64 KiB"
refused 2 "$RCOORD" --config /dev/zero lock status x
assert_contains "$ERR" "config file '/dev/zero' is larger than 1 MiB"
refused 2 "$RCOORD" queue push big-file --file /dev/zero
assert_contains "$ERR" "--file '/dev/zero' is larger than 512 MiB"
truncate -s 600M "$TEST_TMP/sparse"
refused 2 "$RCOORD" queue push big-file --file "$TEST_TMP/sparse"
assert_contains "$ERR" "is larger than 512 MiB"
refused 2 "$RCOORD" queue push big-file --file - <"$TEST_TMP/sparse"
refused 2 "$RCOORD" queue push big-file --file "$TEST_TMP/a-dir"
assert_contains "$ERR" "cannot read --file"
truncate -s 2M "$TEST_TMP/big.toml"
refused 2 "$RCOORD" --config "$TEST_TMP/big.toml" lock status x
expect 0 "$RCOORD" queue len big-file
assert_eq "$OUT" 0 "nothing was pushed"
pass "unreadable, malformed, endless and large password, config and message files exit 2"

# --- servers that are not Redis, or close mid-reply -----------------------------------------
# A listener on 127.0.0.1 that answers every connection in one of several bad ways.
cat >"$TEST_TMP/fake.py" <<'PY'
import socket, sys, threading
mode, port_file = sys.argv[1], sys.argv[2]
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.getsockname()[1]))
import os
os.rename(port_file + ".tmp", port_file)
REPLIES = {
    "garbage": b"HTTP/1.1 400 Bad Request\r\n\x00\xff\xfe\x1b[31m\r\n\r\n",
    "mid-reply": b"$100\r\nabc",
    "huge-bulk": b"$9999999999999\r\nabc",
    "negative-array": b"*-5\r\n+OK\r\n",
    "deep": b"*1\r\n" * 10000,
}
def serve(conn):
    try:
        if mode == "banner":
            conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
        conn.recv(65536)
        if mode in REPLIES:
            conn.sendall(REPLIES[mode])
        if mode in ("silent", "garbage"):
            conn.recv(65536)  # then hold on until the client gives up
    except OSError:
        pass
    finally:
        conn.close()
while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
PY
for mode in garbage mid-reply huge-bulk negative-array deep banner silent; do
  python3 "$TEST_TMP/fake.py" "$mode" "$TEST_TMP/port-$mode" &
  track $!
done
# bad_server MODE: every kind of command against the fake server of MODE (in a subshell).
bad_server() {
  local mode=$1 url cmd start took
  wait_until 10 test -s "$TEST_TMP/port-$mode" || fail "fake server '$mode' did not start"
  url="redis://127.0.0.1:$(cat "$TEST_TMP/port-$mode")"
  TEST_TMP=$TEST_TMP/server-$mode
  mkdir -p "$TEST_TMP"
  for cmd in "ping" "lock acquire x" "lock run x -- true" "sem take x --limit 1" \
    "queue push q m" "queue consume q -- true" "bloom add b x" "signal wait c --wait 30s" \
    "elect observe e --wait 30s"; do
    start=$(now_ms)
    # shellcheck disable=SC2086
    refused 3 "$RCOORD" --url "$url" --timeout 500ms $cmd
    took=$(($(now_ms) - start))
    [ "$took" -lt "$(scaled 5000)" ] || fail "'$cmd' against a '$mode' server took ${took}ms"
    case $mode in
      silent) assert_contains "$ERR" "no reply from" ;;
      mid-reply | huge-bulk) assert_contains "$ERR" "closed by the server" ;;
      *) assert_contains "$ERR" "protocol error" ;;
    esac
  done
}
pids=()
for mode in garbage mid-reply huge-bulk negative-array deep banner silent; do
  bad_server $mode &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a bad-server case failed (above)"; done
pass "a server that is not Redis, or closes mid-reply, gives exit 3 and one line"
