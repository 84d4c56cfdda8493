# rcoord top in a real terminal (tmux): a lock taken after it started shows within two
# refreshes, `/` filters, Enter shows the status, a resize is followed, and the terminal is
# left as it was found after `q`, SIGTERM and a lost server. Without a terminal: a snapshot.
source "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || fail "tmux not found: install tmux (scripts/test does)"
start_redis R
export RCOORD_URL=$R_URL

"$RCOORD" lock acquire other-lock --ttl 5m >/dev/null
"$RCOORD" queue push jobs one two >/dev/null

# --- without a terminal: one snapshot, like ls ---------------------------------------------
expect 0 "$RCOORD" top
assert_contains "$(echo "$OUT" | head -1)" "TYPE"
assert_contains "$OUT" "other-lock"
assert_contains "$OUT" "ready 2, delayed 0, in flight 0, dead 0"
expect 0 "$RCOORD" --json top --type queue
assert_lines "$OUT" 1
assert_eq "$(json_field "$OUT" name)" jobs
expect 1 "$RCOORD" top 'nothing-*'
expect 2 "$RCOORD" top --interval 10ms
pass "stdout not a terminal: one snapshot (table or JSON Lines), then exit"

# --- in a terminal -------------------------------------------------------------------------
SOCK=$TEST_TMP/tmux.sock
T=$TEST_TMP/term
mkdir -p "$T"
tmuxc() { tmux -S "$SOCK" "$@"; }
_stop_tmux() { tmuxc kill-server 2>/dev/null || true; }
trap '_stop_tmux; _cleanup' EXIT
tmuxc -f /dev/null new-session -d -s top -x 120 -y 24 \
  "env -i PATH=$PATH HOME=$T TERM=xterm-256color RCOORD_URL=$RCOORD_URL bash --norc --noprofile"
screen() { tmuxc capture-pane -p -t top; }
on_screen() { screen | grep -qF -- "$1"; }
alternate() { tmuxc display -p -t top '#{alternate_on}'; }
wait_screen() { wait_until 30 on_screen "$1" || fail "never on the screen: '$1'; screen: $(screen)"; }
wait_exit() { wait_until 30 test -s "$T/exit" || fail "top did not exit; screen: $(screen)"; }
# start_top ARGS...: runs top in the pane with the terminal's settings saved before and after
# (in $T/before and $T/after), its PID in $T/pid and its exit code in $T/exit.
start_top() {
  rm -f "$T/before" "$T/after" "$T/pid" "$T/exit"
  tmuxc send-keys -t top "clear; stty -g >$T/before; sh -c 'echo \$\$ >$T/pid; exec $RCOORD top $*'; echo \$? >$T/exit; stty -g >$T/after" Enter
  wait_screen "rcoord top  "
  [ "$(alternate)" = 1 ] || fail "top does not use the alternate screen"
}
# terminal_restored: the alternate screen is left, the cursor shown, the settings as before,
# and the shell takes commands again.
terminal_restored() {
  wait_exit
  wait_until 10 test -s "$T/after" || fail "the shell did not go on after top"
  [ "$(alternate)" = 0 ] || fail "the alternate screen is still on"
  [ "$(tmuxc display -p -t top '#{cursor_flag}')" = 1 ] || fail "the cursor is still hidden"
  assert_eq "$(cat "$T/after")" "$(cat "$T/before")" "terminal settings after top"
  local n=$RANDOM
  tmuxc send-keys -t top "echo usable-\$(( $n + 1 ))" Enter
  wait_screen "usable-$((n + 1))"
}
title_time() { screen | head -1 | grep -oE '[0-9]{2}:[0-9]{2}:[0-9]{2}$' || true; }

start_top --interval 1s
wait_screen "other-lock"
# A lock taken now must be on the screen by the second refresh after it: count the refreshes
# by the time in the title (strictly increasing: refreshes are a second apart).
last=$(title_time)
token=$("$RCOORD" lock acquire fresh-lock --ttl 5m)
refreshes=0
until on_screen "fresh-lock"; do
  now=$(title_time)
  if [ -n "$now" ] && [ "$now" != "$last" ]; then
    refreshes=$((refreshes + 1))
    last=$now
    on_screen "fresh-lock" && break
    [ "$refreshes" -lt 2 ] || fail "a new lock did not show within two refreshes: $(screen)"
  fi
  sleep 0.05
done
# The newest change comes first: fresh-lock is the first row.
assert_contains "$(screen | sed -n 3p)" "fresh-lock"
pass "a lock taken after top started shows within two refreshes, first"

tmuxc send-keys -t top "/" "fresh"
wait_screen "/fresh_"
wait_screen "(1 shown)"
on_screen "other-lock" && fail "the filter let other-lock through: $(screen)"
tmuxc send-keys -t top Enter
wait_screen "filter: fresh"
pass "/ filters by name"

tmuxc send-keys -t top Enter
wait_screen "rcoord lock status:"
wait_screen "token: $token"
wait_screen "history (latest last):"
wait_screen "acquired  $(id -un)@"
tmuxc send-keys -t top Escape
wait_screen "filter: fresh"
on_screen "rcoord lock status:" && fail "Escape did not go back to the list"
pass "Enter shows the chosen object's status and its latest events, Escape goes back"

tmuxc send-keys -t top q
terminal_restored
assert_eq "$(cat "$T/exit")" 0 "exit code after q"
pass "q quits and leaves the terminal as it was"

# Resizes are followed: with a refresh only every minute, only SIGWINCH can redraw it.
tmuxc resize-window -t top -x 70 -y 24
start_top --interval 1m
wait_screen "other-lock"
on_screen ", fence " && fail "the state should be cut at 70 columns: $(screen)"
tmuxc resize-window -t top -x 200 -y 30
wait_screen "dead 0"
wait_screen ", fence "
pass "a resized window is redrawn at its new size"

kill -TERM "$(cat "$T/pid")"
terminal_restored
assert_eq "$(cat "$T/exit")" 0 "exit code after SIGTERM"
pass "SIGTERM ends top and restores the terminal"

start_top --interval 1s
wait_screen "other-lock"
tmuxc send-keys -t top C-c
terminal_restored
assert_eq "$(cat "$T/exit")" 0 "exit code after Ctrl-C"
pass "Ctrl-C ends top and restores the terminal"

# 80x24, the classic terminal: a busy semaphore's state does not fit, and its row says so
# with a "…" in its last column (clearing the rest of a full line once erased that column).
"$RCOORD" sem take encoders --limit 2 --ttl 5m >/dev/null
"$RCOORD" sem take encoders --limit 2 --ttl 5m >/dev/null
"$RCOORD" sem take encoders --limit 2 --wait 2m >/dev/null 2>&1 &
track $!
sem_waits() { "$RCOORD" ls encoders --type sem | grep -q "1 waiting"; }
wait_until 30 sem_waits || fail "the third taker never waited"
tmuxc resize-window -t top -x 80 -y 24
start_top --interval 1s
wait_screen "encoders"
row=$(screen | grep -F "encoders")
[[ $row == "sem "*"2 holders  1 "*"…" ]] || fail "the busy semaphore's row at 80 columns: '$row'"
tmuxc send-keys -t top q
terminal_restored
pass "at 80x24 a busy semaphore's row that does not fit ends in a visible …"

# A lost server: exit 3 with the error, the terminal restored.
start_redis S
tmuxc send-keys -t top "clear; export RCOORD_URL=$S_URL" Enter
"$RCOORD" --url "$S_URL" lock acquire on-s >/dev/null
start_top --interval 200ms
wait_screen "on-s"
kill -9 "$S_PID"
wait "$S_PID" 2>/dev/null || true
terminal_restored
assert_eq "$(cat "$T/exit")" 3 "exit code after the server went away"
wait_screen "127.0.0.1:$S_PORT"
pass "a lost server ends top with exit 3 and the terminal restored"
