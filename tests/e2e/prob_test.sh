# bloom, pf and complete from the command line: outputs, exit codes, stdin input, and
# four processes adding to one scaling filter at once.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# --- bloom reserve --------------------------------------------------------------------------
expect 0 "$RCOORD" bloom reserve urls --capacity 100000 --error-rate 0.01
assert_contains "$OUT" "bits: 959296"
assert_contains "$OUT" "hashes: 7"
assert_contains "$OUT" "bytes: 119912"
expect 1 "$RCOORD" --json bloom reserve urls --capacity 5 --error-rate 0.5
assert_eq "$(json_field "$OUT" reserved)" false
assert_eq "$(json_field "$OUT" bits)" 959296
expect 2 "$RCOORD" bloom reserve x --capacity 100 --error-rate 1.5
assert_contains "$ERR" "--error-rate"
expect 2 "$RCOORD" bloom reserve x --capacity 0 --error-rate 0.01
expect 2 "$RCOORD" bloom reserve x --capacity 10 --error-rate 0.01 --expansion 2 --nonscaling
expect 2 "$RCOORD" bloom reserve x --capacity ten --error-rate 0.01
pass "reserve: sizes, exists (exit 1), bad options (exit 2)"

# --- bloom add / test -----------------------------------------------------------------------
expect 0 "$RCOORD" bloom add urls a b a c
assert_eq "$OUT" $'a\nb\nc' "text lists the new items"
expect 0 "$RCOORD" bloom add urls a d --json
assert_eq "$OUT" $'{"name":"urls","item":"a","added":false}\n{"name":"urls","item":"d","added":true}'
expect 0 "$RCOORD" bloom test urls a b
assert_eq "$OUT" $'a\nb'
expect 1 "$RCOORD" bloom test urls a zzz --json
assert_eq "$OUT" $'{"name":"urls","item":"a","present":true}\n{"name":"urls","item":"zzz","present":false}'
expect 1 "$RCOORD" bloom test urls zzz
assert_eq "$OUT" ""
assert_contains "$ERR" "'zzz' is not in bloom filter 'urls'"
expect 1 "$RCOORD" -q bloom test urls zzz
assert_eq "$OUT$ERR" "" "-q prints nothing"
pass "add and test from arguments: text, JSON, exit codes"

seq 1 5000 | sed 's/^/u/' >"$TEST_TMP/items"
expect 0 bash -c "\"$RCOORD\" bloom add urls --summary --json < '$TEST_TMP/items'"
assert_eq "$(json_field "$OUT" items)" 5000
added=$(json_field "$OUT" added)
present=$(json_field "$OUT" present)
assert_eq $((added + present)) 5000
expect 0 bash -c "\"$RCOORD\" bloom add urls - < '$TEST_TMP/items' | wc -l"
assert_eq "$(echo $OUT)" 0 "nothing new the second time"
expect 0 bash -c "\"$RCOORD\" bloom test urls --json < '$TEST_TMP/items' | grep -c '\"present\":true'"
assert_eq "$OUT" 5000
printf 'line one\nstill one\0two\0' >"$TEST_TMP/nul"
expect 0 bash -c "\"$RCOORD\" bloom add urls -0 --json < '$TEST_TMP/nul'"
assert_eq "$OUT" $'{"name":"urls","item":"line one\\nstill one","added":true}\n{"name":"urls","item":"two","added":true}'
expect 0 "$RCOORD" bloom test urls $'line one\nstill one'
expect 0 "$RCOORD" --json bloom info urls
assert_eq "$(json_field "$OUT" items)" $((added + 6))
assert_eq "$(json_field "$OUT" layers)" 1
for f in capacity error_rate items layers bits hashes bytes fill_ratio; do
  json_field "$OUT" $f >/dev/null || fail "bloom info lacks $f"
done
expect 1 "$RCOORD" bloom info nosuch
pass "stdin items, -0, --summary, info"

# nonscaling: full means exit 1 and "full" items
expect 0 "$RCOORD" bloom reserve tiny --capacity 10 --error-rate 0.01 --nonscaling
expect 1 bash -c "seq 1 40 | \"$RCOORD\" bloom add tiny --summary --json"
assert_eq "$(json_field "$OUT" added)" 10
refused=$(json_field "$OUT" refused)
[ "$refused" -ge 25 ] || fail "refused only $refused of 30"
expect 1 "$RCOORD" bloom add tiny 41
assert_contains "$ERR" "is full"
expect 1 "$RCOORD" --json bloom add tiny 40
assert_contains "$OUT" '"full":true'
expect 0 "$RCOORD" bloom add tiny 1
pass "a nonscaling filter refuses new items when full (exit 1)"

# A scalable filter at its layer cap (64 layers: with --expansion 1, 64 x capacity) is full in the
# same way: adds refused (exit 1, saying why), test and info go on working.
expect 0 "$RCOORD" bloom reserve capped --capacity 3 --error-rate 0.01 --expansion 1
seq 1 400 | sed 's/^/c/' >"$TEST_TMP/capped"
expect 1 bash -c "\"$RCOORD\" bloom add capped --json < '$TEST_TMP/capped' > '$TEST_TMP/capped.json'"
grep '"added":true' "$TEST_TMP/capped.json" | cut -d'"' -f8 >"$TEST_TMP/capped.added"
assert_eq "$(wc -l <"$TEST_TMP/capped.added")" 192 "added: 64 layers of 3"
[ "$(grep -c '"full":true' "$TEST_TMP/capped.json")" -gt 100 ] || fail "too few refused"
expect 1 "$RCOORD" bloom add capped c401
assert_contains "$ERR" "bloom filter 'capped' is full (it has 64 layers, the most a filter may have)"
expect 1 "$RCOORD" --json bloom add capped c402
assert_contains "$OUT" '"full":true'
expect 0 "$RCOORD" --json bloom info capped
assert_eq "$(json_field "$OUT" layers)" 64
assert_eq "$(json_field "$OUT" items)" 192
expect 0 bash -c "\"$RCOORD\" bloom test capped --summary < '$TEST_TMP/capped.added'"
assert_contains "$OUT" "items: 192"
assert_contains "$OUT" "absent: 0"
pass "a scalable filter at its layer cap refuses adds (exit 1) and stays readable"

# The documented bound holds with every expansion: below 2 x the requested rate, also with
# --expansion 1 at 20 x its capacity (20 full layers; with layers at half the rate of the one
# before, it measured 2.0-2.2 % for 1 %). 200000 items that were never added are tested, and
# fewer than 1.9 % may test present: the layers' rates add up to 1.67 %, and one standard
# deviation of the count is some 60 items (0.03 %).
seq 1 20000 | sed 's/^/in-/' >"$TEST_TMP/in"
seq 1 200000 | sed 's/^/out-/' >"$TEST_TMP/never-added"
for expansion in 1 2; do
  expect 0 "$RCOORD" bloom reserve "bound-$expansion" --capacity 1000 --error-rate 0.01 \
    --expansion "$expansion"
  "$RCOORD" -q bloom add "bound-$expansion" <"$TEST_TMP/in"
  present=$("$RCOORD" bloom test "bound-$expansion" <"$TEST_TMP/never-added" 2>/dev/null |
    wc -l || true)
  echo "# --expansion $expansion at 20 x capacity: $present of 200000 never added test present"
  [ "$present" -lt 3800 ] ||
    fail "--expansion $expansion at 20 x capacity: $present of 200000 false positives, not < 1.9 %"
done
pass "the false-positive rate stays below 2 x the requested one, --expansion 1 included"

# JSON never replaces an item's bytes silently: one that is not UTF-8 comes with item_base64.
printf 'ok\n\377\376bin\n' >"$TEST_TMP/binary-items"
expect 0 bash -c "\"$RCOORD\" bloom add bin --json < '$TEST_TMP/binary-items'"
assert_eq "$(echo "$OUT" | head -1)" '{"name":"bin","item":"ok","added":true}'
assert_eq "$(echo "$OUT" | tail -1 | python3 -c 'import json,sys,base64; print(base64.b64decode(json.load(sys.stdin)["item_base64"]).hex())')" fffe62696e
expect 0 bash -c "\"$RCOORD\" bloom test bin --json < '$TEST_TMP/binary-items'"
assert_contains "$(echo "$OUT" | tail -1)" '"item_base64":"//5iaW4=","present":true'
pass "bloom JSON: item_base64 for items that are not UTF-8"

redis-cli -p "$R_PORT" RPUSH 'rcoord:{bloom:wrong}' x >/dev/null
expect 4 "$RCOORD" bloom add wrong a
assert_contains "$ERR" "rcoord:{bloom:wrong}"
expect 4 "$RCOORD" bloom test wrong a
expect 4 "$RCOORD" bloom info wrong
assert_eq "$(redis-cli -p "$R_PORT" LLEN 'rcoord:{bloom:wrong}')" 1
pass "a key of another type: exit 4, named, untouched"

# --- concurrency: 4 writers, disjoint items, one filter that scales while they write -------
expect 0 "$RCOORD" bloom reserve shared --capacity 10000 --error-rate 0.01
pids=()
for w in 1 2 3 4; do
  seq 1 25000 | sed "s/^/w$w-/" >"$TEST_TMP/w$w"
  "$RCOORD" --json bloom add shared --summary <"$TEST_TMP/w$w" >"$TEST_TMP/w$w.out" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a writer failed: $(cat "$TEST_TMP"/w*.out)"; done
total_added=0
for w in 1 2 3 4; do
  out=$(cat "$TEST_TMP/w$w.out")
  assert_eq "$(json_field "$out" items)" 25000
  total_added=$((total_added + $(json_field "$out" added)))
  expect 0 bash -c "\"$RCOORD\" bloom test shared --summary --json < '$TEST_TMP/w$w'"
  assert_eq "$(json_field "$OUT" absent)" 0 "no false negatives for writer $w"
done
expect 0 "$RCOORD" --json bloom info shared
assert_eq "$(json_field "$OUT" items)" "$total_added" "items = sum of added over the writers"
layers=$(json_field "$OUT" layers)
[ "$layers" -ge 4 ] || fail "expected the filter to scale to 4+ layers, got $layers"
meta=$(redis-cli -p "$R_PORT" --raw HGETALL 'rcoord:{bloom:shared}')
python3 - "$meta" <<'PY' || fail "layer bookkeeping"
import sys
lines = sys.argv[1].split("\n")
h = dict(zip(lines[0::2], lines[1::2]))
for i in range(int(h["layers"])):
    cap, used, items = int(h["capacity:%d" % i]), int(h["used:%d" % i]), int(h["items:%d" % i])
    assert used <= cap, (i, used, cap)
    assert used == items, (i, used, items)
    # Slots a writer gives back after another writer already added a layer stay unused:
    # an older layer may end below its capacity, never above. By how much is bounded: each
    # of the 3 other writers holds at most one grant (bloom::kBatchSize = 2000 slots) of it
    # when the next layer is made, and slots of items found present already (false
    # positives, 1% here, 2% allowed) come back too. A fixed share (95%) is not promised:
    # a busy machine can leave three whole grants unused.
    if i + 1 < int(h["layers"]):
        floor = cap - 3 * 2000 - cap * 0.02
        assert items >= floor, ("older layer below its bound", i, items, cap, floor)
assert sum(int(h["items:%d" % i]) for i in range(int(h["layers"]))) == int(h["items"])
PY
pass "4 concurrent writers: every item present, counts exact, no layer over capacity"

# --- concurrency on the merge route: 4 writers, the same items, one layer ------------------
# A filter of one small layer takes large adds as merged bitmaps (MULTI, GET, BITOP): of the
# writers adding the same item at once, at most one may see it added (none when its bits were
# all set by other items), as with BITFIELD.
expect 0 "$RCOORD" bloom reserve same --capacity 200000 --error-rate 0.01
seq 1 20000 | sed "s/^/same-/" >"$TEST_TMP/same"
pids=()
for w in 1 2 3 4; do
  "$RCOORD" bloom add same <"$TEST_TMP/same" >"$TEST_TMP/same$w.out" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a writer failed: $(cat "$TEST_TMP"/same*.out)"; done
twice=$(cat "$TEST_TMP"/same[1-4].out | sort | uniq -d | head -3)
assert_eq "$twice" "" "an item two writers both saw added"
added=$(cat "$TEST_TMP"/same[1-4].out | wc -l)
[ "$added" -ge 19800 ] && [ "$added" -le 20000 ] || fail "items added over the writers: $added"
expect 0 "$RCOORD" --json bloom info same
assert_eq "$(json_field "$OUT" items)" "$added" "items = sum of added over the writers"
assert_eq "$(json_field "$OUT" layers)" 1
[ "$(redis-cli -p "$R_PORT" INFO commandstats | grep -c '^cmdstat_bitop:')" -eq 1 ] ||
  fail "the writers merged no bitmap"
pass "4 concurrent writers of the same items on the merge route: each added at most once"

# --- long items: what add and test gather is bounded in bytes, not only in items ----------
# 10000 items of 4 KB into a filter whose one layer may be merged whole (3.6 MB): without
# the byte bound the whole 40 MB would be gathered (test peaked at 88 MB); with it, the
# batches of 2000 items dominate, as on the BITFIELD route (about 37 MB here).
expect 0 "$RCOORD" bloom reserve long --capacity 3000000 --error-rate 0.01
python3 -c 'import sys; [sys.stdout.write("%05d-%s\n" % (i, "x" * 4000)) for i in range(10000)]' \
  >"$TEST_TMP/long"
for verb in add test; do
  peak=$(python3 - "$RCOORD" "$verb" "$TEST_TMP/long" <<'PY'
import resource, subprocess, sys
with open(sys.argv[3], "rb") as items:
    done = subprocess.run([sys.argv[1], "--json", "bloom", sys.argv[2], "long", "--summary"],
                          stdin=items, capture_output=True)
assert done.returncode == 0, done.stderr
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.stdout.decode().strip())
PY
  ) || fail "bloom $verb of long items failed"
  kb=${peak%% *}
  # A sanitized build's resident set holds ASan's shadow memory and freed blocks it keeps
  # aside: its peak says nothing about rcoord's own. The answers are checked all the same.
  if ! grep -q __asan_init "$RCOORD"; then
    [ "$kb" -lt 65536 ] || fail "bloom $verb of 10000 items of 4 KB peaked at $kb KB"
  fi
  case $verb in
    add) assert_eq "$(json_field "${peak#* }" added)" 10000 ;;
    test) assert_eq "$(json_field "${peak#* }" present)" 10000 ;;
  esac
done
pass "bloom add and test of long items: gathering bounded in bytes"

# --- pf -------------------------------------------------------------------------------------
expect 0 "$RCOORD" pf add visitors 1.2.3.4 5.6.7.8
assert_contains "$OUT" "changed: true"
expect 0 "$RCOORD" --json pf add visitors 1.2.3.4
assert_eq "$OUT" '{"name":"visitors","key":"visitors","items":1,"changed":false}'
expect 0 bash -c "seq 1 20000 | \"$RCOORD\" pf add visitors"
assert_contains "$OUT" "items: 20000"
expect 0 "$RCOORD" pf count visitors
[ "$OUT" -gt 19600 ] && [ "$OUT" -lt 20500 ] || fail "pf count of ~20002: $OUT"
expect 0 "$RCOORD" pf add other a b c
expect 0 "$RCOORD" --json pf merge both visitors other
assert_eq "$(json_field "$OUT" dest)" both
expect 0 "$RCOORD" pf count both
[ "$OUT" -gt 19600 ] || fail "merged count $OUT"
redis-cli -p "$R_PORT" SET 'rcoord:{pf:str}' plain >/dev/null
expect 4 "$RCOORD" pf add str x
assert_contains "$ERR" "rcoord:{pf:str}"
pass "pf add, count, merge, wrong type"

# --- complete -------------------------------------------------------------------------------
expect 0 "$RCOORD" complete add cities Zürich Zug zucchini 東京 東京タワー
expect 0 "$RCOORD" complete suggest cities ZÜ
assert_eq "$OUT" "Zürich"
expect 0 "$RCOORD" complete suggest cities zu
assert_eq "$OUT" $'zucchini\nZug'
expect 0 "$RCOORD" complete suggest cities 東京 --json --limit 1
assert_eq "$OUT" '{"name":"cities","term":"東京","score":0}'
expect 1 "$RCOORD" complete suggest cities q
assert_contains "$ERR" "nothing starts with 'q'"
expect 2 "$RCOORD" complete suggest cities z --limit 0
expect 0 bash -c "printf 'Basel\nBern\nBerlin\n' | \"$RCOORD\" complete add cities --summary"
assert_contains "$OUT" "added: 3"
expect 0 "$RCOORD" complete add hits --incr Bern
expect 0 "$RCOORD" complete add hits --incr Bern Basel
expect 0 "$RCOORD" complete add hits --score 1 Berlin
expect 0 "$RCOORD" complete suggest hits b --json
assert_eq "$OUT" $'{"name":"hits","term":"Bern","score":2}\n{"name":"hits","term":"Basel","score":1}\n{"name":"hits","term":"Berlin","score":1}'
expect 1 "$RCOORD" complete remove cities Zug Nowhere
assert_eq "$OUT" "Zug"
expect 0 "$RCOORD" complete recent push contacts alice
expect 0 "$RCOORD" complete recent push contacts bob
expect 0 "$RCOORD" complete recent push contacts alice --max 2
assert_eq "$OUT" 2
expect 0 "$RCOORD" complete recent suggest contacts ''
assert_eq "$OUT" $'alice\nbob'
expect 0 "$RCOORD" complete recent suggest contacts B --json
assert_eq "$OUT" '{"name":"contacts","item":"bob"}'
redis-cli -p "$R_PORT" SET 'rcoord:{complete:str}' plain >/dev/null
expect 4 "$RCOORD" complete add str a
pass "complete add, suggest (UTF-8, case, scores, limit), remove, recent"

# Terms are bytes: a prefix of 0xFF bytes finds its terms, and JSON gives term_base64 for
# terms that are not UTF-8.
printf '\377\377ab\n\377z\n\376\n' >"$TEST_TMP/ff-terms"
expect 0 bash -c "\"$RCOORD\" complete add ff --json < '$TEST_TMP/ff-terms'"
assert_contains "$OUT" '"term_base64":"//9hYg=="'
expect 0 "$RCOORD" complete suggest ff $'\377' --json
assert_lines "$OUT" 2
assert_contains "$OUT" '"term_base64":"//9hYg=="'
assert_contains "$OUT" '"term_base64":"/3o="'
expect 0 "$RCOORD" complete suggest ff $'\377\377'
assert_eq "$OUT" $'\377\377ab'
expect 0 "$RCOORD" complete suggest ff ''
assert_lines "$OUT" 3
expect 0 "$RCOORD" complete recent push rff $'\377x' --json
assert_contains "$OUT" '"item_base64":"/3g="'
expect 0 "$RCOORD" complete recent suggest rff $'\377' --json
assert_contains "$OUT" '"item_base64":"/3g="'
pass "complete: prefixes of 0xFF bytes, term_base64 in JSON"
