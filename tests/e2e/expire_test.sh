# --expire DUR (SPEC lifecycle): bloom reserve/add, pf add/merge, complete add and complete
# recent push give every key of the object an expiry, Bloom layers added later included;
# a write without --expire keeps it; `bloom info` and `ls` show expires_in_ms.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
cli() { redis-cli -p "$R_PORT" "$@"; }

# pttl_between KEY LOW HIGH: the key expires, between LOW and HIGH ms from now.
pttl_between() {
  local t
  t=$(cli pttl "$1")
  [ "$t" -ge "$2" ] && [ "$t" -le "$3" ] || fail "PTTL of $1 is $t, want $2..$3"
}
HOUR=3600000

# Bad values are usage errors (exit 2) on one line, before anything is written.
for verb in "bloom reserve bad --capacity 10 --error-rate 0.01" "bloom add bad x" \
  "pf add bad x" "pf merge bad src" "complete add bad x" "complete recent push bad x"; do
  for value in 0 0ms -5 10y 100000h abc ''; do
    # shellcheck disable=SC2086
    expect 2 "$RCOORD" $verb --expire "$value"
    assert_lines "$ERR" 1 "one-line error for $verb --expire '$value'"
    assert_contains "$ERR" "--expire"
  done
done
expect 2 "$RCOORD" pf add bad x --expire 0
assert_contains "$ERR" "at least 1ms"
expect 2 "$RCOORD" pf add bad x --expire 100000h
assert_contains "$ERR" "too long"
[ "$(cli dbsize)" -eq 0 ] || fail "a refused --expire wrote something: $(cli keys '*')"
pass "--expire 0, negative, malformed or too long: exit 2, one line, nothing written"

# bloom reserve: the metadata and the first layer expire together.
expect 0 "$RCOORD" bloom reserve daily --capacity 10 --error-rate 0.01 --expire 1h
pttl_between 'rcoord:{bloom:daily}' $((HOUR - 60000)) $HOUR
pttl_between 'rcoord:{bloom:daily}:0' $((HOUR - 60000)) $HOUR
expect 0 "$RCOORD" bloom info daily --json
ms=$(json_field "$OUT" expires_in_ms)
[ "$ms" -gt $((HOUR - 60000)) ] && [ "$ms" -le $HOUR ] || fail "bloom info expires_in_ms: $OUT"
expect 0 "$RCOORD" bloom info daily
assert_contains "$OUT" "expires_in_ms: "
# An existing filter is not written by reserve: its expiry stays as it is.
expect 1 "$RCOORD" bloom reserve daily --capacity 10 --error-rate 0.01 --expire 10m
pttl_between 'rcoord:{bloom:daily}' $((HOUR - 60000)) $HOUR
pass "bloom reserve --expire: metadata and layer expire; info shows expires_in_ms"

# Layers added later by writes without --expire end with the rest; the adds keep the expiry.
seq 1 200 | "$RCOORD" bloom add daily --summary >/dev/null
layers=$(cli hget 'rcoord:{bloom:daily}' layers)
[ "$layers" -ge 3 ] || fail "200 items in a filter of 10 should add layers: $layers"
for ((i = 0; i < layers; i++)); do
  pttl_between "rcoord:{bloom:daily}:$i" $((HOUR - 60000)) $HOUR
done
pttl_between 'rcoord:{bloom:daily}' $((HOUR - 60000)) $HOUR
pass "bloom add without --expire: $layers layers, every one with the filter's expiry"

# bloom add --expire sets it again on every key, longer or shorter (each write that gives it).
seq 201 400 | "$RCOORD" bloom add daily --summary --expire 2h >/dev/null
layers=$(cli hget 'rcoord:{bloom:daily}' layers)
for ((i = 0; i < layers; i++)); do
  pttl_between "rcoord:{bloom:daily}:$i" $((2 * HOUR - 60000)) $((2 * HOUR))
done
pttl_between 'rcoord:{bloom:daily}' $((2 * HOUR - 60000)) $((2 * HOUR))
expect 0 "$RCOORD" bloom add daily one-more --expire 10m
for ((i = 0; i < layers; i++)); do
  pttl_between "rcoord:{bloom:daily}:$i" 500000 600000
done
pass "bloom add --expire sets the expiry again on all $layers layers (2h, then 10m)"

# A filter that bloom add creates is born with its expiry; when it ends, all of it is gone.
expect 0 "$RCOORD" bloom add short a b c --expire 1s
pttl_between 'rcoord:{bloom:short}' 1 1000
pttl_between 'rcoord:{bloom:short}:0' 1 1000
gone() { [ "$(cli exists 'rcoord:{bloom:short}' 'rcoord:{bloom:short}:0')" -eq 0 ]; }
wait_until 10 gone || fail "the filter did not expire"
expect 1 "$RCOORD" bloom info short
expect 1 "$RCOORD" bloom test short a
pass "bloom add --expire on a missing filter: created expiring, then gone"

# pf add: with --expire the key expires; a plain add keeps it; bulk stdin too.
expect 0 "$RCOORD" pf add visitors:2026-11-25 1.2.3.4 5.6.7.8 --expire 768h
pttl_between 'rcoord:{pf:visitors:2026-11-25}' $((768 * HOUR - 60000)) $((768 * HOUR))
expect 0 "$RCOORD" pf add visitors:2026-11-25 9.9.9.9
pttl_between 'rcoord:{pf:visitors:2026-11-25}' $((768 * HOUR - 60000)) $((768 * HOUR))
seq 1 5000 | "$RCOORD" pf add bulk --expire 1h >/dev/null
pttl_between 'rcoord:{pf:bulk}' $((HOUR - 60000)) $HOUR
expect 0 "$RCOORD" pf count bulk
[ "$OUT" -gt 4800 ] && [ "$OUT" -lt 5200 ] || fail "pf count after a bulk add --expire: $OUT"
pass "pf add --expire (arguments and a 5000-item stream); a plain add keeps the expiry"

# pf merge DEST --expire: DEST gets it, the sources keep theirs.
expect 0 "$RCOORD" pf add plain-a x y
expect 0 "$RCOORD" pf merge week visitors:2026-11-25 plain-a --expire 2160h
pttl_between 'rcoord:{pf:week}' $((2160 * HOUR - 60000)) $((2160 * HOUR))
assert_eq "$(cli pttl 'rcoord:{pf:plain-a}')" -1 "a source keeps no expiry"
expect 0 "$RCOORD" pf merge week plain-a
pttl_between 'rcoord:{pf:week}' $((2160 * HOUR - 60000)) $((2160 * HOUR))
pass "pf merge --expire: DEST expires; a merge without it keeps DEST's"

# complete add: index and scores expire together, also when the scores come later.
expect 0 "$RCOORD" complete add searches:today rust redis --expire 48h
pttl_between 'rcoord:{complete:searches:today}' $((48 * HOUR - 60000)) $((48 * HOUR))
expect 0 "$RCOORD" complete add searches:today redis --incr
pttl_between 'rcoord:{complete:searches:today}:scores' $((48 * HOUR - 60000)) $((48 * HOUR))
pttl_between 'rcoord:{complete:searches:today}' $((48 * HOUR - 60000)) $((48 * HOUR))
expect 0 "$RCOORD" complete add searches:today rcoord --incr --expire 1h
pttl_between 'rcoord:{complete:searches:today}:scores' $((HOUR - 60000)) $HOUR
pttl_between 'rcoord:{complete:searches:today}' $((HOUR - 60000)) $HOUR
pass "complete add --expire: index and scores (added later without it) end together"

expect 0 "$RCOORD" complete recent push viewed:alice page-1 --expire 720h
pttl_between 'rcoord:{recent:viewed:alice}' $((720 * HOUR - 60000)) $((720 * HOUR))
expect 0 "$RCOORD" complete recent push viewed:alice page-2
pttl_between 'rcoord:{recent:viewed:alice}' $((720 * HOUR - 60000)) $((720 * HOUR))
pass "complete recent push --expire; a push without it keeps the expiry"

# ls shows expires_in_ms for what expires, nothing for what does not.
expect 0 "$RCOORD" ls --json
for name in daily visitors:2026-11-25 week searches:today viewed:alice; do
  line=$(echo "$OUT" | grep "\"name\":\"$name\"")
  assert_contains "$line" '"expires_in_ms":'
done
line=$(echo "$OUT" | grep '"name":"plain-a"')
case "$line" in *expires_in_ms*) fail "ls shows an expiry for a key without one: $line" ;; esac
expect 0 "$RCOORD" ls daily
assert_contains "$OUT" "expires in "
pass "ls shows expires_in_ms (and 'expires in' in text) only for objects that expire"

# A key of another type is refused (exit 4), not given an expiry.
cli rpush 'rcoord:{pf:wrong}' x >/dev/null
expect 4 "$RCOORD" pf add wrong a --expire 1h
assert_eq "$(cli pttl 'rcoord:{pf:wrong}')" -1 "the foreign key got no expiry"
cli set 'rcoord:{pf:notpf}' hello >/dev/null
expect 4 "$RCOORD" pf add notpf a --expire 1h
expect 4 "$RCOORD" pf merge notpf plain-a --expire 1h
assert_eq "$(cli pttl 'rcoord:{pf:notpf}')" -1 "the foreign string got no expiry"
pass "a key of another type: exit 4, no expiry set"
