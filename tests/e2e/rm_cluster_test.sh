# rcoord rm on a Redis Cluster of 3 masters: every key of an object shares its hash tag, so
# one rm script removes it on its own master; one call removes names spread over masters.
source "$(dirname "$0")/lib.sh"
start_cluster C
export RCOORD_URL=$C_URL

# Names whose objects live on different masters.
declare -A master_of
names=()
for i in $(seq 1 40); do
  port=$(port_of_key "$C_PORT" "rcoord:{pf:day-$i}")
  if [ -z "${master_of[$port]:-}" ]; then
    master_of[$port]=day-$i
    names+=("day-$i")
  fi
  [ "${#names[@]}" -lt 3 ] || break
done
[ "${#names[@]}" -eq 3 ] || fail "no three names on three masters: ${names[*]}"
for n in "${names[@]}"; do
  expect 0 "$RCOORD" pf add "$n" a b c --expire 1h
  expect 0 "$RCOORD" bloom add "f-$n" a b c --expire 1h
done
expect 0 "$RCOORD" ls --type pf --json
assert_lines "$OUT" 3
assert_contains "$OUT" '"expires_in_ms":'
# pf merge --expire over sources on three masters: DEST gets the expiry, the count is right.
expect 0 "$RCOORD" pf merge week "${names[@]}" --expire 1h
assert_eq "$OUT" 3 "distinct items over the three days"
week_port=$(port_of_key "$C_PORT" 'rcoord:{pf:week}')
t=$(redis-cli -p "$week_port" pttl 'rcoord:{pf:week}')
[ "$t" -gt 3500000 ] && [ "$t" -le 3600000 ] || fail "PTTL of the merged key: $t"
expect 0 "$RCOORD" rm week --type pf
pass "pf merge --expire with sources on three masters"

expect 0 "$RCOORD" rm "${names[@]}" --type pf --json
assert_lines "$OUT" 3
[ "$(echo "$OUT" | grep -c '"removed":true')" -eq 3 ] || fail "not all removed: $OUT"
fnames=()
for n in "${names[@]}"; do fnames+=("f-$n"); done
expect 0 "$RCOORD" rm "${fnames[@]}" --type bloom
for port in $C_PORTS; do
  left=$(redis-cli -p "$port" --scan --pattern 'rcoord:*')
  assert_eq "$left" "" "keys left on master $port"
done
pass "rm of names on three masters: every key gone from every master"

# A held lock: refused, then --force; the fence keeps counting on its master.
expect 0 "$RCOORD" lock acquire deploy --json
fence1=$(json_field "$OUT" fence)
expect 1 "$RCOORD" rm deploy --type lock
expect 0 "$RCOORD" rm deploy --type lock --force
expect 0 "$RCOORD" lock acquire deploy --json
fence2=$(json_field "$OUT" fence)
[ "$fence2" -gt "$fence1" ] || fail "fence after rm --force: $fence2, before: $fence1"
pass "cluster: rm --force of a held lock keeps the fence counting ($fence1 -> $fence2)"
