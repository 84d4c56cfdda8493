# Kill before the lease can end: each run form (lock run, sem run, elect run, lock run over a
# Redlock of 3 masters, and queue consume's lease on its message) holds while its command
# ignores SIGTERM and writes timestamps; its client is then cut off from the server (every
# packet dropped), and a second client waits for the same object (the same message) and
# records when its own command starts. Twenty partitions, every
# form in each: not one timestamp of an old command may come after the next holder started
# (both commands stamp with the same clock, bash's EPOCHREALTIME).
#
# The holders reach the servers at 127.0.0.2, the next holders at 127.0.0.1: the partition
# drops the first address only. TTL 1s, --timeout 200ms, --kill-grace by default (TTL/3):
# the command must be dead 200ms before the lease can end on the server.
source "$(dirname "$0")/faults_lib.sh"

ROUNDS=${RCOORD_FAULT_ROUNDS:-$(effort 20)}
start_redis R --bind 127.0.0.1 127.0.0.2
rl_ports=()
for n in 1 2 3; do
  start_redis "M$n" --bind 127.0.0.1 127.0.0.2
  port="M${n}_PORT"
  rl_ports+=("${!port}")
done
cut_urls() { local p; for p in "${rl_ports[@]}"; do printf -- '-u redis://%s:%s ' "$1" "$p"; done; }
RL_CUT=$(cut_urls 127.0.0.2)
RL_NEXT=$(cut_urls 127.0.0.1)

# The old holder's command: ignores SIGTERM (as do its children), stamps a line every few ms.
cat >"$TEST_TMP/stubborn.sh" <<'SH'
trap '' TERM
while :; do
  echo "$EPOCHREALTIME" >>"$1"
  sleep 0.005
done
SH

FORMS=(lock sem elect redlock consume)
# holder FORM URL-OPTIONS: the run command of FORM (the same object in every round).
run_args() {
  case $1 in
    lock) echo "lock run L --ttl 1s" ;;
    sem) echo "sem run S --limit 1 --ttl 1s" ;;
    elect) echo "elect run E --id ID --ttl 1s" ;;
    redlock) echo "lock run RL --ttl 1s" ;;
    consume) echo "queue consume Q --ack-timeout 1s --max-messages 1" ;;
  esac
}
urls() {
  case $1:$2 in
    redlock:cut) echo "$RL_CUT" ;;
    redlock:next) echo "$RL_NEXT" ;;
    *:cut) echo "-u redis://127.0.0.2:$R_PORT" ;;
    *:next) echo "-u redis://127.0.0.1:$R_PORT" ;;
  esac
}

# How the next holder waits: --wait, or for a consumer, how long it stays idle.
wait_arg() { if [ "$1" = consume ]; then echo "--idle-exit 30s"; else echo "--wait 30s"; fi; }
# The old holder waits too: the last round's next holder gives its lock back with a 300 ms
# --timeout, and on a busy machine that release can fail, leaving its 1 s lease to run out
# (a Redlock's quorum of 200 ms answers can be missed the same way). A holder that tried only
# once would then find the object busy and never start its command.
old_wait_arg() { if [ "$1" = consume ]; then echo ""; else echo "--wait 10s"; fi; }

partition() {
  local p
  fault_blackhole_addr 127.0.0.2 "$R_PORT"
  for p in "${rl_ports[@]}"; do fault_blackhole_addr 127.0.0.2 "$p"; done
}

violations=0
closest=()
for round in $(seq 1 "$ROUNDS"); do
  dir="$TEST_TMP/round-$round"
  mkdir -p "$dir"
  "$RCOORD" -u "redis://127.0.0.1:$R_PORT" queue push Q "message of round $round" >/dev/null
  old=()
  for f in "${FORMS[@]}"; do
    # shellcheck disable=SC2046
    "$RCOORD" --timeout 200ms $(urls $f cut) $(run_args $f | sed 's/ID/old/') $(old_wait_arg $f) -- \
      bash "$TEST_TMP/stubborn.sh" "$dir/$f.old" 2>"$dir/$f.old.err" &
    old+=($!)
    track $!
  done
  for f in "${FORMS[@]}"; do
    wait_until 10 test -s "$dir/$f.old" || fail "round $round: $f's command never started ($(cat "$dir/$f.old.err"))"
  done
  partition
  new=()
  for f in "${FORMS[@]}"; do
    # shellcheck disable=SC2046
    "$RCOORD" --timeout 300ms $(urls $f next) $(run_args $f | sed 's/ID/new/') $(wait_arg $f) -- \
      bash -c 'echo "$EPOCHREALTIME" >"$0"' "$dir/$f.new" 2>"$dir/$f.new.err" &
    new+=($!)
    track $!
  done
  for i in "${!FORMS[@]}"; do
    f=${FORMS[$i]}
    set +e
    wait "${old[$i]}"
    code=$?
    wait "${new[$i]}"
    new_code=$?
    set -e
    # (a consumer whose message's lease was lost ends with its command's status)
    [ "$f" = consume ] || assert_eq "$code" 5 "round $round: $f's cut-off holder ($(cat "$dir/$f.old.err"))"
    assert_eq "$new_code" 0 "round $round: $f's next holder ($(cat "$dir/$f.new.err"))"
    # The last complete stamp of the old command, against the start of the new one.
    last=$(grep -E '^[0-9]+\.[0-9]{6}$' "$dir/$f.old" | tail -n 1)
    started=$(cat "$dir/$f.new")
    gap=$(awk -v a="$last" -v b="$started" 'BEGIN { printf "%d", (b - a) * 1000 }')
    if [ "$gap" -le 0 ]; then
      echo "round $round: $f: the old command wrote ${gap#-}ms after the next holder started" >&2
      violations=$((violations + 1))
    fi
    closest[$i]=$(( ${closest[$i]:-999999} < gap ? ${closest[$i]:-999999} : gap ))
  done
  fault_heal
done
[ "$violations" -eq 0 ] || fail "$violations old commands wrote after the next holder started"
for i in "${!FORMS[@]}"; do
  case ${FORMS[$i]} in
    redlock) form="lock run (Redlock)" ;;
    consume) form="queue consume" ;;
    *) form="${FORMS[$i]} run" ;;
  esac
  pass "$form: $ROUNDS partitions, no write of the old command after the next holder started (closest ${closest[$i]}ms before)"
done
