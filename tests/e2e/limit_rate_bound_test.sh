# The rate bound with real processes: for each algorithm, 8 processes hammer `limit check`
# for 3 seconds at 50/s with burst 10. Allowed in all never exceeds burst + rate × elapsed
# (+1 for the boundary), and reaches at least 90% of what the algorithm can hand out in that
# time: correct, and not over-strict. Then the same with two rates in one check (`--rate
# 5/100ms --rate 12/400ms`: the first binds at the start, the second from then on): the bound
# holds for each rate, and the allowed count reaches 90% of the smaller one.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

us() { local t=$EPOCHREALTIME; echo "${t/./}"; }

# worker ALGO KEY DEADLINE_US OUT TIMES RATE-OPTIONS...: checks until the deadline; writes
# "allowed tried first last" to OUT and when each check ended to TIMES.
worker() {
  local algo=$1 key=$2 deadline=$3 out=$4 times=$5 allowed=0 tried=0 first last code
  shift 5
  first=$(us)
  while [ "$(us)" -lt "$deadline" ]; do
    set +e
    "$RCOORD" -q limit check "$key" "$@" --algo "$algo"
    code=$?
    set -e
    us >>"$times"
    tried=$((tried + 1))
    case $code in
      0) allowed=$((allowed + 1)) ;;
      1) ;;
      *) echo "limit check exited $code" >>"$TEST_TMP/errors" ;;
    esac
  done
  last=$(us)
  echo "$allowed $tried $first $last" >"$out"
}

# hammer ALGO KEY RATE-OPTIONS...: 8 workers for 3 seconds; sets TOTAL, TRIED, ELAPSED_US and
# IDLE_US: the time no check ended in, beyond 20 ms at a stretch (a machine too busy to run the
# workers for a while; nobody asked, so nothing could be allowed then).
hammer() {
  local algo=$1 key=$2 w p
  shift 2
  local deadline=$(($(us) + 3000000)) pids=()
  for w in 1 2 3 4 5 6 7 8; do
    worker "$algo" "$key" "$deadline" "$TEST_TMP/$key.$w" "$TEST_TMP/times-$key.$w" "$@" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  [ ! -s "$TEST_TMP/errors" ] || fail "$(sort -u "$TEST_TMP/errors")"
  read -r TOTAL TRIED ELAPSED_US LO_US HI_US < <(cat "$TEST_TMP/$key".* |
    awk 'NR == 1 { lo = $3; hi = $4 } { n += $1; t += $2; if ($3 < lo) lo = $3; if ($4 > hi) hi = $4 }
         END { print n, t, hi - lo, lo, hi }')
  read -r IDLE_US < <(sort -n "$TEST_TMP/times-$key".* |
    awk -v lo="$LO_US" -v hi="$HI_US" 'function gap(d) { if (d > 20000) idle += d - 20000 }
      BEGIN { prev = lo } { gap($1 - prev); prev = $1 } END { gap(hi - prev); print idle + 0 }')
}

# judge ALGO WHAT BURST:RATE_PER_S...: the allowed count against burst + rate x elapsed (+1)
# for every rate given, and against 90% of the smallest of what ALGO can hand out over the time
# someone was asking (elapsed less IDLE_US): a stretch in which the machine ran no worker
# cannot be used, and a sliding window does not hand it out later. GCRA and the token bucket
# can hand out burst + rate x time; a window hands out its burst once per window, so over T it
# gives about rate x T (a whole burst more only when T ends just after a window starts), and
# its floor leaves the burst out.
judge() {
  local algo=$1 what=$2 verdict ok judged bound secs burst_counts=1
  shift 2
  case $algo in *window) burst_counts=0 ;; esac
  verdict=$(python3 -c '
import sys
total, tried, elapsed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) / 1e6
asking = max(0.0, elapsed - int(sys.argv[4]) / 1e6)
burst_counts = sys.argv[5] == "1"
bounds, floors = [], []
for spec in sys.argv[6:]:
    burst, rate = spec.split(":")
    bounds.append(int(burst) + float(rate) * elapsed)
    floors.append(0.9 * ((int(burst) if burst_counts else 0) + float(rate) * asking))
bound = min(bounds)
# "not over-strict" can only be judged when the processes asked for much more than the
# bound; a sanitizer build on a busy machine may start too slowly to ask that often
judged = tried >= 3 * bound
ok = all(total <= b + 1 for b in bounds) and (not judged or total >= min(floors))
print("ok" if ok else "bad", "judged" if judged else "unjudged",
      "/".join(f"{b:.1f}" for b in bounds), f"{elapsed:.3f}", f"{elapsed - asking:.3f}",
      f"{min(floors):.1f}")
' "$TOTAL" "$TRIED" "$ELAPSED_US" "$IDLE_US" "$burst_counts" "$@")
  read -r ok judged bound secs idle floor <<<"$verdict"
  [ "$ok" = ok ] || fail "$what: $TOTAL of $TRIED allowed in ${secs}s (${idle}s of it with no" \
    "worker running); bounds (burst + rate x ${secs}) $bound (+1), at least $floor (90% of the" \
    "smallest it can hand out over the time asked)"
  if [ "$judged" = judged ]; then
    pass "$what: 8 processes, ${secs}s (${idle}s idle): $TOTAL of $TRIED allowed; bounds $bound (+1), >= $floor"
  else
    pass "$what: 8 processes, ${secs}s: $TOTAL of $TRIED allowed; bounds $bound (+1) (too few tries to judge the 90%)"
  fi
}

for algo in gcra token-bucket sliding-window fixed-window; do
  hammer "$algo" "bound-$algo" --rate 50/s --burst 10
  judge "$algo" "$algo" 10:50
done

# Two rates in one check: 5 per 100ms (burst 5, 50/s) and 12 per 400ms (burst 12, 30/s).
for algo in gcra token-bucket sliding-window fixed-window; do
  hammer "$algo" "bound2-$algo" --rate 5/100ms --rate 12/400ms
  judge "$algo" "$algo, two rates" 5:50 12:30
done
