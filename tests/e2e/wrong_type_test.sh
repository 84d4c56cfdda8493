# A key of an object that holds another Redis type (someone else's data under rcoord's prefix),
# whether the object's main key or a companion key (a lock's readers, writers and fence, a
# semaphore's meta and permits, a queue's lists and sets...): every verb of every primitive,
# in text and in JSON, either refuses it with exit 4 and one line that names the object and
# that key and says what to do (never a script's SHA1 or a Lua line), changing nothing of the
# object, or, when it does not use that key at all (listed below, exactly), answers as usual
# and leaves the key as it was.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
unset RCOORD_CONFIG RCOORD_PASSWORD REDISCLI_AUTH
cli() { redis-cli -p "$R_PORT" "$@"; }

# The keys of each kind of object: `suffix=type` (the main key has no suffix), the Redis type
# rcoord keeps there.
keys_of() {
  case $1 in
    lock) echo "=hash :fence=string :wake=list :readers=zset :writers=zset :rwait=zset :rfence=hash :rwho=hash" ;;
    sem) echo "=zset :permits=hash :queue=zset :alive=zset :wants=hash :seq=string :meta=hash :who=hash" ;;
    limit) echo "=hash :log=zset" ;;
    bloom) echo "=hash :0=string" ;;
    bloom-reserved) echo ":0=string" ;;
    pf) echo "=string" ;;
    complete) echo "=zset :scores=zset" ;;
    recent) echo "=list" ;;
    elect) echo "=hash :term=string :wake=list" ;;
    queue) echo "=hash :ready=list :delayed=zset :inflight=zset :dead=zset :attempts=hash :wake=list :seq=string :consumer=hash" ;;
    signal | latch) echo "=zset" ;;
  esac
}
# The type tag in the keys, and how messages call such an object.
tag_of() { case $1 in bloom-reserved) echo bloom ;; *) echo "$1" ;; esac; }
noun_of() {
  case $1 in
    sem) echo semaphore ;; bloom*) echo "bloom filter" ;; pf) echo HyperLogLog ;;
    complete) echo "autocomplete index" ;; recent) echo "recent list" ;; elect) echo election ;;
    signal) echo channel ;; *) echo "$1" ;;
  esac
}

# Each verb of a group, run on the object @.
verbs_of() {
  case $1 in
    lock) printf '%s\n' "lock acquire @" "lock acquire @ --shared" "lock status @" \
      "lock release @ --token t" "lock extend @ --token t" "lock break @" "lock run @ -- true" \
      "lock run @ --shared -- true" ;;
    sem) printf '%s\n' "sem take @ --limit 2" "sem take @ --limit 2 --permits 2" "sem status @" \
      "sem release @ --token t" "sem refresh @ --token t" "sem run @ --limit 1 -- true" ;;
    limit) printf '%s\n' "limit check @ --rate 5/s" "limit check @ --rate 5/s --algo token-bucket" \
      "limit check @ --rate 5/s --algo sliding-window" "limit check @ --rate 5/s --algo fixed-window" \
      "limit status @ --rate 5/s" "limit status @ --rate 5/s --algo sliding-window" \
      "limit wait @ --rate 5/s --wait 200ms" \
      "limit wait @ --rate 5/s --algo sliding-window --wait 200ms" "limit reset @" ;;
    bloom | bloom-reserved) printf '%s\n' "bloom add @ x" "bloom test @ x" "bloom info @" \
      "bloom reserve @ --capacity 100 --error-rate 0.01" ;;
    pf) printf '%s\n' "pf add @ x" "pf count @" "pf merge @ @" ;;
    complete) printf '%s\n' "complete add @ x" "complete add @ x --incr" "complete suggest @ x" \
      "complete remove @ x" ;;
    recent) printf '%s\n' "complete recent push @ x" "complete recent suggest @ x" ;;
    elect) printf '%s\n' "elect campaign @ --id a" "elect status @" "elect resign @ --id a" \
      "elect observe @ --wait 200ms" "elect run @ --id a -- true" ;;
    queue) printf '%s\n' "queue push @ m" "queue push @ m --delay 1m" "queue pop @" \
      "queue pop @ --wait 200ms" "queue pop @ --ack-timeout 5s" "queue len @" "queue peek @" \
      "queue stats @" "queue ack @ 1" "queue nack @ 1" "queue dead @" "queue replay @" \
      "queue purge @" "queue purge @ --dead" \
      "queue consume @ --max-messages 1 --idle-exit 200ms -- cat" ;;
    signal) printf '%s\n' "signal send @ d" "signal send @ d --one" "signal wait @ --wait 200ms" ;;
    latch) printf '%s\n' "latch init @ --count 2" "latch down @" "latch wait @ --wait 200ms" \
      "latch status @" ;;
  esac
}

# What a group's object is made of before its key is replaced (bloom-reserved: a filter that
# exists, whose layer is then someone else's key); fails when there is nothing to make.
setup() {
  [ "$1" = bloom-reserved ] || return 1
  cli eval "$DELETE" 0 "$3" >/dev/null
  "$RCOORD" -q bloom reserve "$2" --capacity 100 --error-rate 0.01
}

# The verbs that do not use a key, and so answer as usual however foreign it is: GROUP SUFFIX
# VERB (VERB with @ for the name), one per line. Every other verb must refuse the key.
exempt() {
  grep -qxF -- "$1 $2 $3" <<'EXEMPT'
limit :log limit check @ --rate 5/s
limit :log limit check @ --rate 5/s --algo token-bucket
limit :log limit check @ --rate 5/s --algo fixed-window
limit :log limit status @ --rate 5/s
limit :log limit wait @ --rate 5/s --wait 200ms
bloom :0 bloom test @ x
bloom :0 bloom info @
bloom-reserved :0 bloom reserve @ --capacity 100 --error-rate 0.01
elect :term elect resign @ --id a
elect :wake elect status @
elect :wake elect observe @ --wait 200ms
EXEMPT
}

# Lua run on the server, one call each. SNAPSHOT: a SHA1 of every key matching ARGV[1] (its
# name, type, value and expiry: the moment it expires, or on a server without PEXPIRETIME
# (Redis 6.2) whether it expires), to tell whether anything of the object changed. DELETE: the
# keys matching ARGV[1] are gone. FOREIGN: the keys matching ARGV[1] are gone first when
# ARGV[3] is '1', then KEYS[1] is someone else's data (a list when ARGV[2] is 'string', the type
# rcoord keeps there, else a string); returns the snapshots of the keys matching ARGV[1] and of
# KEYS[1].
SNAP_FN="local function expiry(k)
  local at = redis.pcall('PEXPIRETIME', k)
  if type(at) == 'number' then return at end
  return redis.call('PTTL', k) >= 0 and 'expires' or 'persists'
end
local function snapshot(pattern)
  local keys = redis.call('KEYS', pattern) table.sort(keys) local s = ''
  for _, k in ipairs(keys) do
    s = s .. k .. '|' .. redis.call('TYPE', k)['ok'] .. '|' .. redis.call('DUMP', k) .. '|' ..
      expiry(k) .. '\n'
  end
  return redis.sha1hex(s)
end"
SNAPSHOT="$SNAP_FN return snapshot(ARGV[1])"
DELETE_ALL="for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end"
DELETE="$DELETE_ALL return 0"
FOREIGN="$SNAP_FN if ARGV[3] == '1' then $DELETE_ALL end redis.call('DEL', KEYS[1])
if ARGV[2] == 'string' then redis.call('RPUSH', KEYS[1], 'a', 'b') else redis.call('SET', KEYS[1], 'precious') end
return {snapshot(ARGV[1]), snapshot(KEYS[1])}"

# one_case GROUP SUFFIX TYPE VERB MODE: the object of GROUP with its key SUFFIX made foreign
# (a list where rcoord keeps a string, else a string), VERB run in MODE (text or json).
one_case() {
  local group=$1 suffix=$2 want=$3 verb=$4 mode=$5 tag name key pattern snaps before key_before args
  tag=$(tag_of "$group")
  name="$group${suffix//:/-}"
  key="rcoord:{$tag:$name}$suffix"
  pattern="rcoord:{$tag:$name}*"
  local fresh=1
  setup "$group" "$name" "$pattern" && fresh=0
  snaps=$(cli eval "$FOREIGN" 1 "$key" "$pattern" "$want" "$fresh")
  before=${snaps%%$'\n'*}
  key_before=${snaps#*$'\n'}
  args=()
  [ "$mode" = json ] && args=(--json)
  # shellcheck disable=SC2086 # the verb is a list of words
  rc "$RCOORD" "${args[@]}" ${verb//@/$name} </dev/null
  local what="$group $suffix ($mode): rcoord ${args[*]} ${verb//@/$name}"
  if exempt "$group" "$suffix" "$verb"; then
    [ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "$what does not use $key, yet exited $RC: $ERR"
    assert_eq "$(cli eval "$SNAPSHOT" 0 "$key")" "$key_before" "$what: $key changed"
    return
  fi
  [ "$RC" = 4 ] || fail "$what: want exit 4 refusing $key, got $RC | stdout: $OUT | stderr: $ERR"
  if [ "$mode" = json ]; then
    # the line, then the same as one JSON object (What a verb prints, in docs/tour.md)
    assert_lines "$ERR" 2 "$what: the line and its JSON object on stderr"
    python3 -c 'import json, sys; e = json.loads(sys.argv[1]); assert e["exit_code"] == 4 and e["error"], e' \
      "${ERR#*$'\n'}" || fail "$what: the second line is not the error as JSON: $ERR"
    ERR=${ERR%%$'\n'*}
  else
    assert_lines "$ERR" 1 "$what: one line on stderr"
  fi
  assert_contains "$ERR" "rcoord: $(noun_of "$group") '$name': key '$key' holds " "$what"
  assert_contains "$ERR" " (" "$what says what to do"
  case "$ERR" in
    *user_script* | *"script:"* | *@user* | *[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*)
      fail "$what shows a script's SHA1 or line: $ERR" ;;
  esac
  assert_eq "$OUT" "" "$what: nothing on stdout"
  assert_eq "$(cli eval "$SNAPSHOT" 0 "$pattern")" "$before" "$what: the object changed"
}

# key_cases GROUP SUFFIX TYPE: every verb of GROUP, text and JSON (runs in a subshell).
key_cases() {
  local verb mode
  TEST_TMP=$TEST_TMP/$1$2
  mkdir -p "$TEST_TMP"
  while IFS= read -r verb; do
    for mode in text json; do one_case "$1" "$2" "$3" "$verb" "$mode"; done
  done < <(verbs_of "$1")
}

cases=0
for group in lock sem limit bloom bloom-reserved pf complete recent elect queue signal latch; do
  pids=()
  for spec in $(keys_of "$group"); do
    key_cases "$group" "${spec%%=*}" "${spec#*=}" &
    pids+=($!)
    cases=$((cases + 2 * $(verbs_of "$group" | wc -l)))
  done
  for pid in "${pids[@]}"; do wait "$pid" || fail "a $group case failed (above)"; done
done
pass "$cases cases: every verb refuses a foreign main or companion key naming the object and the key, in text and JSON, changing nothing (or, not using it, leaves it alone)"
