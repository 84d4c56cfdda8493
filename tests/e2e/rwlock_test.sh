# Reader/writer locks with real processes: readers overlap, a writer is never inside with
# anyone, and a steady stream of readers does not starve a waiting writer.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

log="$TEST_TMP/events.log"
cat >"$TEST_TMP/visit.sh" <<SH
echo "\$(date +%s%N) \$1 in" >>"$log"
sleep \$2
echo "\$(date +%s%N) \$1 out" >>"$log"
SH
reader_loop() {
  local end=$(($(now_ms) + 3000))
  while [ "$(now_ms)" -lt "$end" ]; do
    "$RCOORD" lock run data --shared --wait forever -- sh "$TEST_TMP/visit.sh" R 0.08 || return 1
  done
}
writer_loop() {
  local i
  for i in 1 2 3 4 5; do
    "$RCOORD" lock run data --wait forever -- sh "$TEST_TMP/visit.sh" W 0.03 || return 1
    sleep 0.1
  done
}
pids=()
for i in 1 2 3 4 5 6; do
  reader_loop &
  pids+=($!)
done
for i in 1 2; do
  writer_loop &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a loop failed"; done

# Replay the events: never a writer with anyone; several readers together at some point.
read -r max_readers writers bad < <(sort -k1,1n "$log" | awk '
  $3 == "in"  && $2 == "R" { r++; if (w > 0) bad++; if (r > max) max = r }
  $3 == "in"  && $2 == "W" { if (r > 0 || w > 0) bad++; w++; wc++ }
  $3 == "out" && $2 == "R" { r-- }
  $3 == "out" && $2 == "W" { w-- }
  END { print max + 0, wc + 0, bad + 0 }')
assert_eq "$bad" 0 "a writer overlapped another holder"
assert_eq "$writers" 10 "every writer got in despite the readers"
[ "$max_readers" -ge 2 ] || fail "readers never overlapped (max $max_readers)"
pass "6 reader and 2 writer loops: readers overlap (max $max_readers), writers always alone, all 10 writes done"

# A steady stream of overlapping readers: a writer still gets in promptly. The readers go on
# until the writer is done; it comes once two of them are seen holding the lock together.
stream() {
  while [ ! -e "$TEST_TMP/stop-stream" ]; do
    "$RCOORD" lock run stream --shared --wait forever -- sleep 0.3 || true
  done
}
readers_at_least() {
  [ "$(json_field "$("$RCOORD" lock status stream --json || true)" readers 2>/dev/null)" -ge "$1" ]
}
spids=()
for i in 1 2 3 4; do
  stream &
  spids+=($!)
  sleep 0.07 # staggered, so that their holds overlap in a chain rather than all at once
done
wait_until 10 readers_at_least 2 || fail "the readers never held the lock together"
start=$(now_ms)
expect 0 "$RCOORD" lock acquire stream --wait 10s --ttl 5s
took=$(($(now_ms) - start))
writer=$OUT
touch "$TEST_TMP/stop-stream"
expect 0 "$RCOORD" lock release stream --token "$writer"
for p in "${spids[@]}"; do wait "$p" || true; done
[ "$took" -lt "$(scaled 2500)" ] || fail "the writer waited ${took}ms behind a stream of readers"
pass "a writer is not starved by a stream of readers (${took}ms)"

# --shared in the CLI: status shows the readers
expect 0 "$RCOORD" lock acquire cli --shared
expect 0 "$RCOORD" lock acquire cli --shared --json
assert_eq "$(json_field "$OUT" acquired)" true
expect 1 "$RCOORD" lock acquire cli
expect 0 "$RCOORD" lock status cli --json
assert_eq "$(json_field "$OUT" mode)" shared
assert_eq "$(json_field "$OUT" readers)" 2
pass "--shared in the CLI"
