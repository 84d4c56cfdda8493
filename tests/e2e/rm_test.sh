# rcoord rm (SPEC lifecycle): deletes every key of each object, refuses what is in use
# unless --force, keeps fence, term and id counters so none repeats (and the history of what
# it removed while in use, with a `removed` event), --dry-run deletes nothing, one JSON
# object per name, exit 0 only when every name was removed.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
cli() { redis-cli -p "$R_PORT" "$@"; }
# keys_of TYPE NAME: the keys of an object left on the server, one per line.
keys_of() { cli --scan --pattern "rcoord:{$1:$2}*"; }

expect 2 "$RCOORD" rm x
assert_lines "$ERR" 1
assert_contains "$ERR" "--type"
expect 2 "$RCOORD" rm x --type nosuch
assert_lines "$ERR" 1
expect 2 "$RCOORD" rm --type lock
pass "usage: --type is required and checked, a name is required (exit 2)"

# A held lock is refused, with and without --dry-run; nothing of it goes.
expect 0 "$RCOORD" lock acquire deploy --json
fence1=$(json_field "$OUT" fence)
before=$(keys_of lock deploy | sort)
expect 1 "$RCOORD" rm deploy --type lock --json
assert_eq "$(json_field "$OUT" removed)" false
assert_contains "$(json_field "$OUT" reason)" "held"
expect 1 "$RCOORD" rm deploy --type lock
assert_eq "$OUT" "kept lock deploy: held (fence $fence1)"
assert_contains "$ERR" "--force"
assert_lines "$ERR" 1
expect 1 "$RCOORD" rm deploy --type lock --dry-run
assert_contains "$OUT" "kept lock deploy: held"
assert_eq "$(keys_of lock deploy | sort)" "$before" "a refused rm changed keys"
expect 0 "$RCOORD" lock status deploy
pass "a held lock is refused (exit 1, says why and what to do), --dry-run too"

# --force removes it; the fence counter stays, so the next acquisition gets a higher fence.
expect 0 "$RCOORD" rm deploy --type lock --force --dry-run --json
assert_eq "$(json_field "$OUT" would_remove)" true
assert_eq "$(json_field "$OUT" removed)" false
expect 0 "$RCOORD" lock status deploy
expect 0 "$RCOORD" rm deploy --type lock --force --json
assert_eq "$(json_field "$OUT" removed)" true
[ "$(json_field "$OUT" keys)" -ge 1 ] || fail "keys removed: $OUT"
assert_eq "$(keys_of lock deploy | sort)" \
  "$(printf '%s\n' 'rcoord:{lock:deploy}:fence' 'rcoord:{lock:deploy}:history' 'rcoord:{lock:deploy}:history:cap')" \
  "only the fence counter and the history (with its removed event) are left"
assert_eq "$("$RCOORD" -o json history deploy | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["event"])')" \
  removed "the history's last event"
expect 1 "$RCOORD" lock status deploy
expect 1 "$RCOORD" ls --type lock
# --names reads no state: the fence counter alone must not make it an object (nor offer its
# name to shell completion).
expect 1 "$RCOORD" ls --names --type lock
assert_eq "$OUT" "" "ls --names after rm"
expect 1 "$RCOORD" ls --names 'dep*'
expect 0 "$RCOORD" lock acquire deploy --json
fence2=$(json_field "$OUT" fence)
expect 0 "$RCOORD" ls --names --type lock
assert_eq "$OUT" deploy "ls --names of the live lock"
[ "$fence2" -gt "$fence1" ] || fail "fence after rm --force: $fence2, before: $fence1"
pass "rm --force of a held lock: removed, ls (--names too) lists nothing, the next fence is higher ($fence1 -> $fence2)"

# A shared (reader) lock is in use too.
expect 0 "$RCOORD" lock acquire reports --shared
expect 1 "$RCOORD" rm reports --type lock
assert_contains "$OUT" "reader"
expect 0 "$RCOORD" rm reports --type lock --force
pass "a lock held by readers is refused, removed with --force"

# Semaphore with holders.
expect 0 "$RCOORD" sem take enc --limit 2
expect 1 "$RCOORD" rm enc --type sem --json
assert_contains "$(json_field "$OUT" reason)" "1 holder(s)"
expect 0 "$RCOORD" rm enc --type sem --force
assert_eq "$(keys_of sem enc | sort)" \
  "$(printf '%s\n' 'rcoord:{sem:enc}:history' 'rcoord:{sem:enc}:history:cap')" \
  "a semaphore removed while in use leaves its history alone"
expect 1 "$RCOORD" ls --names --type sem
pass "a semaphore with holders is refused, removed with --force, only its history left"

# Election with a leader: the term counter stays and keeps counting.
expect 0 "$RCOORD" elect campaign svc --id a --json
term1=$(json_field "$OUT" term)
expect 1 "$RCOORD" rm svc --type elect --json
assert_contains "$(json_field "$OUT" reason)" "led by a"
expect 0 "$RCOORD" rm svc --type elect --force
assert_eq "$(keys_of elect svc | sort)" \
  "$(printf '%s\n' 'rcoord:{elect:svc}:history' 'rcoord:{elect:svc}:history:cap' 'rcoord:{elect:svc}:term')"
expect 1 "$RCOORD" ls --type elect
expect 1 "$RCOORD" ls --names --type elect
expect 0 "$RCOORD" elect campaign svc --id b --json
term2=$(json_field "$OUT" term)
[ "$term2" -gt "$term1" ] || fail "term after rm --force: $term2, before: $term1"
pass "an election with a leader is refused; after --force the next term is higher ($term1 -> $term2)"

# Queue: messages in flight refuse it; ids never repeat after a forced rm.
expect 0 "$RCOORD" queue push jobs one two
expect 0 "$RCOORD" queue pop jobs --ack-timeout 1h --json
id1=$(json_field "$OUT" id)
expect 1 "$RCOORD" rm jobs --type queue --json
assert_contains "$(json_field "$OUT" reason)" "1 message(s) in flight"
expect 0 "$RCOORD" rm jobs --type queue --force
expect 0 "$RCOORD" queue len jobs
assert_eq "$OUT" 0 "the removed queue is empty"
expect 1 "$RCOORD" ls --type queue
expect 1 "$RCOORD" ls --names --type queue
expect 0 "$RCOORD" queue push jobs three
expect 0 "$RCOORD" queue pop jobs --ack-timeout 1h --json
id2=$(json_field "$OUT" id)
[ "$id2" != "$id1" ] || fail "a message id was handed out twice: $id1"
# The old lease's ack must not take the new message.
"$RCOORD" queue ack jobs "$id1" >/dev/null 2>&1 || true
expect 0 "$RCOORD" queue stats jobs --json
assert_eq "$(json_field "$OUT" in_flight)" 1 "the new message is still in flight"
expect 0 "$RCOORD" queue ack jobs "$id2"
expect 0 "$RCOORD" queue push idle x
expect 0 "$RCOORD" rm idle --type queue
pass "a queue with messages in flight is refused; ids do not repeat after --force ($id1, $id2)"

# Every other type goes whole, as does a Bloom filter with several layers.
expect 0 "$RCOORD" bloom reserve seen --capacity 10 --error-rate 0.01
seq 1 100 | "$RCOORD" bloom add seen --summary >/dev/null
layers=$(cli hget 'rcoord:{bloom:seen}' layers)
[ "$layers" -ge 2 ] || fail "the filter should have grown layers: $layers"
"$RCOORD" pf add visitors a b >/dev/null
"$RCOORD" complete add cities Paris --incr >/dev/null
"$RCOORD" complete recent push viewed page >/dev/null
"$RCOORD" limit check api --rate 1/h >/dev/null
"$RCOORD" limit check win --rate 1/h --algo sliding-window >/dev/null
# several rates: the second and third keep their state in rate2 and rate3 (and their logs)
"$RCOORD" limit check multi --rate 1/s --rate 10/m --rate 100/h --algo sliding-window >/dev/null
[ "$(keys_of limit multi | wc -l)" -ge 4 ] || fail "several rates made no keys of their own"
"$RCOORD" latch init ci --count 2 >/dev/null
expect 0 "$RCOORD" rm seen --type bloom --dry-run --json
assert_eq "$(json_field "$OUT" keys)" $((layers + 1)) "dry run counts metadata and every layer"
[ "$(keys_of bloom seen | wc -l)" -eq $((layers + 1)) ] || fail "--dry-run deleted something"
expect 0 "$RCOORD" rm seen --type bloom --json
assert_eq "$(json_field "$OUT" keys)" $((layers + 1))
for pair in bloom:seen pf:visitors complete:cities recent:viewed limit:api limit:win limit:multi \
  latch:ci; do
  t=${pair%%:*} n=${pair#*:}
  [ "$t" = bloom ] || expect 0 "$RCOORD" rm "$n" --type "$t"
  assert_eq "$(keys_of "$t" "$n")" "" "keys left of $pair"
done
expect 1 "$RCOORD" bloom info seen
pass "bloom ($layers layers), pf, complete, recent, limit (several rates too), latch: every key removed"

# Several names: one JSON object each, exit 1 when any was refused or absent.
"$RCOORD" pf add p1 x >/dev/null
"$RCOORD" pf add p2 x >/dev/null
expect 0 "$RCOORD" rm p1 p2 --type pf --json
assert_lines "$OUT" 2
expect 1 "$RCOORD" rm p1 --type pf --json
assert_eq "$(json_field "$OUT" removed)" false
assert_contains "$(json_field "$OUT" reason)" "no such"
expect 1 "$RCOORD" rm p1 --type pf
assert_contains "$ERR" "no HyperLogLog 'p1' to remove"
expect 0 "$RCOORD" lock acquire busy
"$RCOORD" pf add p3 x >/dev/null
expect 1 "$RCOORD" rm busy free-never-taken --type lock --json
assert_lines "$OUT" 2
expect 0 "$RCOORD" rm p3 --type pf
expect 1 "$RCOORD" rm p3 nosuch --type pf --dry-run
assert_lines "$OUT" 2
pass "several names: a JSON line each; exit 1 when one is in use or absent"

# A key that holds something rcoord did not write there is refused (exit 4) and kept.
cli rpush 'rcoord:{pf:foreign}' x >/dev/null
expect 4 "$RCOORD" rm foreign --type pf
assert_eq "$(cli exists 'rcoord:{pf:foreign}')" 1 "the foreign key was kept"
# A hash rcoord did not write, where a lock, election, latch, limit or filter keeps its hash.
for t in lock elect latch limit bloom; do
  cli hset "rcoord:{$t:foreign}" foo bar >/dev/null
  expect 4 "$RCOORD" rm foreign --type "$t"
  assert_contains "$ERR" "not an rcoord"
  assert_eq "$(cli exists "rcoord:{$t:foreign}")" 1 "the foreign hash of $t was kept"
done
pass "a key of another type, or a hash rcoord did not write: exit 4, nothing deleted"
