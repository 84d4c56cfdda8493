# rcoord ls: every kind of object, found with SCAN across several cursor pages, filtered by
# glob and --type, one line (or JSON object) each with its state.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

expect 1 "$RCOORD" ls
assert_contains "$ERR" "no objects match"

# (leases of 10 minutes: the default 30 s could pass before the checks below on a slow machine)
"$RCOORD" lock acquire deploy-web --ttl 10m >/dev/null
"$RCOORD" lock acquire deploy-db --ttl 10m >/dev/null
"$RCOORD" lock acquire reports --shared --ttl 10m >/dev/null
"$RCOORD" sem take encoders --limit 4 --ttl 10m >/dev/null
"$RCOORD" limit check api --rate 1/h >/dev/null  # state lives an hour (10/s drains in 0.1 s)
"$RCOORD" bloom add seen a b c >/dev/null
"$RCOORD" pf add visitors x y z >/dev/null
"$RCOORD" complete add cities Paris Rome >/dev/null
"$RCOORD" queue push jobs one two >/dev/null
"$RCOORD" elect campaign svc --id host-a --ttl 10m >/dev/null
"$RCOORD" latch init ci --count 3 >/dev/null
redis-cli -p "$R_PORT" set 'other:{lock:not-ours}' x >/dev/null   # another prefix

expect 0 "$RCOORD" ls --json
for t in lock sem limit bloom pf complete elect queue latch; do
  assert_contains "$OUT" "\"type\":\"$t\"" "ls lists a $t"
done
[ "$(echo "$OUT" | grep -c '"type":"lock"')" -eq 3 ] || fail "3 locks expected: $OUT"
case "$OUT" in *not-ours*) fail "ls listed a key of another prefix" ;; esac
assert_contains "$OUT" '"name":"reports","state":"shared by 1 reader(s)'
assert_contains "$OUT" '"name":"jobs","state":"ready 2, delayed 0, in flight 0, dead 0"'
assert_contains "$OUT" '"name":"svc","state":"led by host-a: '
grep -qE ', term [0-9]{16}, expires in ' <<<"$OUT" || fail "the election's term: $OUT"
pass "every kind of object, each once, with its state"

# A limiter shows what is left, peeked with the parameters its state keeps (nothing consumed)
for algo in gcra token-bucket sliding-window fixed-window; do
  "$RCOORD" limit check "left-$algo" --rate 10/h --algo "$algo" --cost 3 >/dev/null
done
for round in 1 2; do
  expect 0 "$RCOORD" ls 'left-*' --type limit
  for algo in gcra token-bucket sliding-window fixed-window; do
    grep -qE "^limit     left-$algo +$algo, 7 of 10 left, full again in" <<<"$OUT" ||
      fail "left-$algo: $OUT"
  done
done
expect 0 "$RCOORD" limit status left-gcra --rate 10/h --json
assert_eq "$(json_field "$OUT" remaining)" 7 "ls consumed nothing"
# state written before the burst was kept: shown without what is left
redis-cli -p "$R_PORT" hset 'rcoord:{limit:older}' algo gcra level 1 at 1 unit 1 drain 1 >/dev/null
expect 0 "$RCOORD" ls older --type limit
assert_contains "$OUT" "gcra, back to full in at most"
pass "a limiter's remaining, for every algorithm"

expect 0 "$RCOORD" ls 'deploy-*' --type lock
assert_lines "$OUT" 2
assert_contains "$OUT" "deploy-web"
expect 1 "$RCOORD" ls 'deploy-*' --type sem
expect 2 "$RCOORD" ls --type widget
pass "glob and --type filter"

# The glob matches the whole name, checked after SCAN: SCAN's MATCH (`{*:fence}*`) lets the type's
# `*` swallow part of a name, so `ls fence` once listed the lock `a:fence`.
"$RCOORD" lock acquire a:fence --ttl 10m >/dev/null
"$RCOORD" lock acquire fence2 --ttl 10m >/dev/null
expect 1 "$RCOORD" ls fence
assert_eq "$OUT" "" "ls fence lists nothing"
expect 0 "$RCOORD" ls '*fence'
assert_lines "$OUT" 1
assert_contains "$OUT" "a:fence"
expect 0 "$RCOORD" ls 'fence?'
assert_lines "$OUT" 1
assert_contains "$OUT" "fence2"
expect 1 "$RCOORD" ls 'lock:*'  # the type is not part of the name
pass "the glob matches the whole name (ls fence does not list a:fence)"

# A name is printed escaped: a newline cannot forge a line of ls or a field of a status.
"$RCOORD" lock acquire $'forged\nlock      evil  held by x' --ttl 10m >/dev/null
"$RCOORD" sem take $'s\nholders: fake' --limit 2 --ttl 10m >/dev/null
expect 0 "$RCOORD" ls 'forged*'
assert_lines "$OUT" 1 "one object, one line"
assert_contains "$OUT" "'forged\\nlock      evil  held by x'  held by"
expect 0 "$RCOORD" ls $'s\n*' --type sem
assert_lines "$OUT" 1
expect 0 "$RCOORD" lock status $'forged\nlock      evil  held by x'
assert_eq "$(echo "$OUT" | grep -c '^held:')" 1 "one held: line"
assert_contains "$OUT" 'name: forged\nlock      evil  held by x'
expect 0 "$RCOORD" sem status $'s\nholders: fake'
assert_eq "$(echo "$OUT" | grep -c '^holders:')" 1 "one holders: line"
"$RCOORD" lock acquire 'back\slash' --ttl 10m >/dev/null
expect 0 "$RCOORD" ls 'back*'
assert_contains "$OUT" 'back\\slash'
expect 0 "$RCOORD" ls 'forged*' --json
assert_eq "$(json_field "$OUT" name)" $'forged\nlock      evil  held by x' "JSON keeps the name exact"
pass "names are printed escaped in ls and status lines; JSON keeps them exact"

# Text: NAME padded to the widest name, so the states line up; a name with a space is quoted,
# so where it ends is never in doubt; one kind of unit in a line (no "1799.0s" beside "3m28s").
"$RCOORD" lock acquire 'pad a' --ttl 30m >/dev/null
"$RCOORD" lock acquire pad-longer-name --ttl 30m >/dev/null
expect 0 "$RCOORD" ls 'pad*' --type lock
assert_lines "$OUT" 2
grep -qE "^lock      'pad a'          held by [^ ]+ \(pid [0-9]+, lock acquire\) for [0-9.]+s, expires in (29m[0-9]{2}s|30m00s), fence [0-9]{16}$" <<<"$OUT" ||
  fail "a quoted name, padded, one unit of time: $OUT"
grep -qE "^lock      pad-longer-name  held by " <<<"$OUT" || fail "padded: $OUT"
grep -qE "[0-9]{3,}\.[0-9]s" <<<"$OUT" && fail "seconds where minutes are due: $OUT"
pass "ls text: names padded to one column, quoted when they hold a space; one unit of time"

# 2500 locks: several SCAN pages; each is listed exactly once
printf 'HSET rcoord:{lock:bulk-%d} token t%d fence 1\n' $(seq 1 2500 | awk '{print $1, $1}') |
  redis-cli -p "$R_PORT" >/dev/null
expect 0 "$RCOORD" ls 'bulk-*' --type lock --json
assert_eq "$(echo "$OUT" | wc -l)" 2500 "every bulk lock once"
assert_eq "$(echo "$OUT" | sort -u | wc -l)" 2500 "no duplicates across SCAN pages"
pass "2500 objects across SCAN pages, each once"

expect 0 "$RCOORD" --prefix other: ls
assert_contains "$OUT" "not-ours"
pass "--prefix selects the namespace"

# --names: bare names, one per line, each once (a name two types use too), escaped; no state
"$RCOORD" sem take deploy-web --limit 2 --ttl 10m >/dev/null
"$RCOORD" lock acquire $'deploy-\nforged' --ttl 10m >/dev/null
expect 0 "$RCOORD" ls --names 'deploy-*'
assert_eq "$(echo "$OUT" | sort)" "$(printf '%s\n' 'deploy-\nforged' deploy-db deploy-web)" \
  "names, escaped, each once"
expect 0 "$RCOORD" --json ls --names 'deploy-web'
assert_eq "$(echo "$OUT" | sort)" "$(printf '%s\n' '{"type":"lock","name":"deploy-web"}' \
  '{"type":"sem","name":"deploy-web"}')"
expect 1 "$RCOORD" ls --names 'nothing-*'
pass "--names: bare names, escaped, each once; JSON with the type"

# --watch: the listing again and again until its reader is gone
set +e
timeout 20 "$RCOORD" ls --type latch --watch 100ms | head -n 3 >"$TEST_TMP/watched"
codes=("${PIPESTATUS[@]}")
set -e
assert_eq "$(cat "$TEST_TMP/watched")" "$(printf 'latch     ci  count 3\n%.0s' 1 2 3)" "three refreshes"
[ "${codes[0]}" != 124 ] || fail "ls --watch went on after its reader was gone"
expect 2 "$RCOORD" ls --watch soon
pass "--watch refreshes the listing, and stops when its reader is gone"
