# What the operator commands show of a gate: `ls` and `top` list its record (named by its
# token) with its parts, beside the parts themselves as ordinary objects; `rm --type gate`
# refuses a held gate, and with --force gives back every part it holds; `metrics` exports no
# series per token (one per token would never come back): its parts', and the gate's take
# counters under the parts' names (contention_metrics_test).
source "$(dirname "$0")/lib.sh"
start_redis R
G=("$RCOORD" --url "$R_URL")

# A rate of 5/h keeps its state for minutes: at 5/s it would be full again, its state gone and
# no longer listed, before a slow (sanitized) `ls` looks.
token=$("${G[@]}" gate acquire --lock ga --shared-lock gb --sem gs:3:2 --rate gr:5/h --ttl 60s)
listed=$("${G[@]}" ls --type gate)
assert_contains "$listed" "gate"
assert_contains "$listed" "$token"
assert_contains "$listed" "holds lock ga, shared-lock gb, sem gs:3:2, rate gr:5/h, expires in"
all=$("${G[@]}" ls)
for part in "lock *ga *held by" "lock *gb *shared by 1 reader" "sem *gs *2 of 3" "limit *gr"; do
  grep -q "^$part" <<<"$all" || fail "ls does not show the part '$part': $all"
done
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
json=$("${G[@]}" --json ls --type gate)
assert_eq "$(field "$json" type)" gate "ls --json: the type"
assert_eq "$(field "$json" name)" "$token" "ls --json: the name is the token"
ttl=$(field "$json" ttl_ms)
[ "$ttl" -gt 50000 ] && [ "$ttl" -le 60000 ] || fail "ls --json: ttl_ms $ttl"
assert_contains "$("${G[@]}" top --type gate | cat)" "$token"
pass "ls and top list a gate's record with its parts and its TTL, and its parts as objects"

# read whole first: `grep -q` stops reading at its match, and a pipeline under pipefail would
# then fail on metrics' SIGPIPE when its output comes in more than one write
metrics=$("${G[@]}" metrics)
assert_eq "$(grep -c "$token" <<<"$metrics" || true)" 0 "metrics exports a series per gate"
grep -q '^rcoord_lock_held{name="ga"} 1' <<<"$metrics" || fail "metrics: the lock part is not held"
pass "metrics exports the parts, not the gate's token"

expect 1 "${G[@]}" rm --type gate "$token"
assert_contains "$ERR" "is in use: held: lock ga, shared-lock gb, sem gs:3:2, rate gr:5/h"
assert_eq "$("${G[@]}" gate status --token "$token" | sed -n 1p)" "held: true" "a refused rm left the gate"
expect 0 "${G[@]}" rm --type gate "$token" --force --dry-run
assert_eq "$("${G[@]}" gate status --token "$token" | sed -n 1p)" "held: true" "--dry-run left the gate"
out=$("${G[@]}" --json rm --type gate "$token" --force)
assert_eq "$(field "$out" removed)" True "rm --force --json: removed"
assert_contains "$("${G[@]}" lock status ga)" "held: false"
assert_contains "$("${G[@]}" lock status gb)" "readers: 0"
assert_contains "$("${G[@]}" sem status gs)" "in_use: 0"
assert_eq "$("${G[@]}" ls --type gate)" "" "the record is gone"
expect 1 "${G[@]}" rm --type gate "$token"
assert_contains "$ERR" "no gate"
pass "rm --type gate refuses a held gate, --dry-run changes nothing, --force gives back every part"
