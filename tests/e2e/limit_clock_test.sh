# Clock independence: rcoord reads only the Redis server's TIME, so a client whose clock is
# a year ahead or eight years behind (libfaketime) gets the same decisions as one whose
# clock is right, on the same key and on a key of its own.
source "$(dirname "$0")/lib.sh"
command -v faketime >/dev/null || fail "faketime is not installed (scripts/test installs it)"
start_redis R
export RCOORD_URL=$R_URL

# skewed OFFSET CMD...: runs CMD with its wall clock moved by OFFSET (e.g. +365d).
skewed() {
  local offset=$1
  shift
  # An ASan build wants its runtime first in the library list; libfaketime is preloaded. And
  # ASan's allocator, when it first fills a size class, reads the clock for its release-to-OS
  # timer: through libfaketime, whose set-up allocates, that deadlocks on the allocator's own
  # lock (a hang, depending on the order of allocations). Never releasing to the OS, a
  # short process loses nothing, and the clock is not read there.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0:allocator_release_to_os_interval_ms=-1" \
    faketime -f "$offset" "$@"
}
[ "$(skewed +365d date +%Y)" -gt "$(date +%Y)" ] || fail "faketime does not move the clock"
[ "$(skewed -3000d date +%Y)" -lt "$(date +%Y)" ] || fail "faketime does not move the clock"

# decide WHO KEY ALGO: one check as a normal, future or past client; prints "code remaining"
decide() {
  local who=$1 key=$2 algo=$3 run=()
  case $who in
    future) run=(skewed +365d) ;;
    past) run=(skewed -3000d) ;;
  esac
  set +e
  out=$("${run[@]}" "$RCOORD" --json limit check "$key" --rate 3/h --algo "$algo")
  code=$?
  set -e
  echo "$code $(json_field "$out" remaining) $(json_field "$out" retry_after_ms)"
}

for algo in gcra token-bucket sliding-window fixed-window; do
  mixed=()
  plain=()
  for who in normal future past future past normal; do
    mixed+=("$(decide "$who" "mixed-$algo" "$algo")")
    plain+=("$(decide normal "plain-$algo" "$algo")")
  done
  for i in 0 1 2 3 4 5; do
    read -r code_m rem_m retry_m <<<"${mixed[$i]}"
    read -r code_p rem_p retry_p <<<"${plain[$i]}"
    assert_eq "$code_m $rem_m" "$code_p $rem_p" "$algo, decision $((i + 1)) (skewed vs plain)"
    # denied answers agree on when to retry (the runs are moments apart; they differ by that)
    diff=$((retry_m > retry_p ? retry_m - retry_p : retry_p - retry_m))
    [ "$diff" -le "$(scaled 5000)" ] || fail "$algo: retry_after_ms $retry_m vs $retry_p"
  done
  assert_eq "${mixed[*]%% *}" "0 0 0 1 1 1" "$algo: three allowed, then denied"
  # the future client must not find its own key refilled a year on, nor the past one a
  # key that never started
  read -r code rem _ <<<"$(decide future "own-$algo" "$algo")"
  assert_eq "$code $rem" "0 2" "$algo: a future client's first check"
  read -r code rem _ <<<"$(decide past "own-$algo" "$algo")"
  assert_eq "$code $rem" "0 1" "$algo: then a past client's"
  pass "$algo: clients a year ahead and 8 years behind decide exactly as a correct one"
done

# limit wait sleeps for the server's interval, whatever the client's clock says: it is
# never done before the slot (two seconds after the check) and never waits much longer
for algo in gcra token-bucket sliding-window fixed-window; do
  for offset in +365d -3000d; do
    key="w-$algo$offset"
    checked=$(now_ms) # before the check: the slot is 2 s after the check (less ms rounding)
    expect 0 "$RCOORD" limit check "$key" --rate 1/2s --burst 1 --algo "$algo"
    expect 0 skewed "$offset" "$RCOORD" --json limit wait "$key" --rate 1/2s --burst 1 \
      --algo "$algo" --wait 5s
    took=$(($(now_ms) - checked))
    waited=$(json_field "$OUT" waited_ms)
    [ "$took" -ge 1990 ] || fail "$algo $offset: done ${took}ms after the check: too early"
    [ "$waited" -le "$(scaled 2200)" ] || fail "$algo $offset: waited ${waited}ms"
  done
done
pass "limit wait under a skewed clock waits for the server's slot, and no longer"
