# Job control (issue "Hardening III"): a run form in an interactive shell behaves as a shell's
# job. Ctrl-Z stops the command and rcoord with it, so the prompt comes back; `fg` continues
# both; Ctrl-C then ends the command and rcoord gives the lock back. A command that reads the
# terminal at once gets it (the terminal is handed over before its exec). A TERM sent to a
# stopped job reaches the command. And the guard lives in a process group of its own: stopping
# rcoord's whole group (what a shell's `kill -STOP %1` does) cannot freeze the guard, which
# kills the command before the lease ends, so a second holder never overlaps it.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL
without_note

# --- an interactive bash in a real pseudo-terminal, driven as a person types ----------------
# The driver reads lines of commands on its stdin: `send TEXT` (Python escapes: \x1a is
# Ctrl-Z, \x03 Ctrl-C, \n Enter), `expect REGEX SECONDS` (fails unless the screen shows it in
# time; what it matched is consumed), `foreground NAME SECONDS` (waits until the terminal's
# foreground group is led by a process named NAME, as a person sees the command running before
# pressing a key) and `quit`.
cat >"$TEST_TMP/pty_driver.py" <<'PY'
import os, pty, re, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.environ["PS1"] = "PROMPT> "
    os.environ["TERM"] = "dumb"
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
seen = ""
def read_for(seconds):
    global seen
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            continue
        try:
            data = os.read(fd, 4096).decode(errors="replace")
        except OSError:
            return
        seen += data
        yield
for line in sys.stdin:
    verb, _, arg = line.rstrip("\n").partition(" ")
    if verb == "send":
        os.write(fd, arg.encode().decode("unicode_escape").encode())
    elif verb == "expect":
        pattern, _, seconds = arg.rpartition(" ")
        found = re.search(pattern, seen)
        if not found:
            for _ in read_for(float(seconds)):
                found = re.search(pattern, seen)
                if found:
                    break
        if not found:
            print("FAIL: no /%s/ within %ss; the screen ends with:\n%s" % (pattern, seconds, seen[-600:]))
            sys.exit(1)
        seen = seen[found.end():]
    elif verb == "foreground":  # foreground NAME SECONDS: the terminal's group leader is NAME
        name, _, seconds = arg.rpartition(" ")
        end = time.monotonic() + float(seconds)
        def leader():
            try:
                with open("/proc/%d/comm" % os.tcgetpgrp(fd)) as f:
                    return f.read().strip()
            except OSError:
                return ""
        while leader() != name and time.monotonic() < end:
            for _ in read_for(0.02):
                pass
        if leader() != name:
            print("FAIL: the terminal's foreground is %r, not %r" % (leader(), name))
            sys.exit(1)
    elif verb == "quit":
        os.write(fd, b"exit\n")
        break
try:
    os.kill(pid, 9)
except ProcessLookupError:
    pass
print("DRIVER-OK")
PY
# drive SCRIPT: runs the driver with these lines; fails with what the screen showed.
drive() {
  local out
  out=$(python3 "$TEST_TMP/pty_driver.py" <<<"$1" 2>&1) || true
  grep -q DRIVER-OK <<<"$out" || fail "$out"
}

# --- Ctrl-Z, fg, Ctrl-C -----------------------------------------------------------------------
drive "expect PROMPT> 10
send $RCOORD lock run bz1 --ttl 6s -- sh -c 'echo R\$((1+1))UN; exec sleep 60'\n
expect R2UN 10
foreground sleep 10
send \x1a
expect Stopped 10
expect PROMPT> 5
send $RCOORD lock status bz1 >/dev/null; echo status=\$?\n
expect status=0 10
send fg\n
expect sleep 60 5
foreground sleep 10
send \x03
expect PROMPT> 10
send echo rc=\$?\n
expect rc=130 5
send $RCOORD lock status bz1 >/dev/null; echo after=\$?\n
expect after=1 10
quit"
pass "Ctrl-Z stops the command and rcoord (the prompt comes back, the lock still held); fg, then Ctrl-C: exit 130, released"

# --- a stopped job killed with TERM: the command gets it (SIGCONT follows), the lock is freed --
drive "expect PROMPT> 10
send $RCOORD lock run bz2 --ttl 6s -- sh -c 'echo R\$((1+1))UN; exec sleep 60'\n
expect R2UN 10
foreground sleep 10
send \x1a
expect Stopped 10
expect PROMPT> 5
send kill -TERM %1; while kill -0 %1 2>/dev/null; do sleep 0.05; done\n
expect Exit 143 10
expect PROMPT> 5
send $RCOORD lock status bz2 >/dev/null; echo after=\$?\n
expect after=1 10
quit"
pass "a stopped job sent TERM: the command ends, rcoord exits 143 and gives the lock back"

# --- a command that reads the terminal at once gets it, 30 times in a row ---------------------
script="expect PROMPT> 10"
for i in $(seq "$(effort 30)"); do
  script+="
send $RCOORD lock run reader --ttl 6s -- sh -c 'read a; echo got:\$a'\n
send line$i\n
expect got:line$i 10
expect PROMPT> 5"
done
drive "$script
quit"
pass "a command that reads the terminal at once gets it: $(effort 30) of $(effort 30) runs, no hang"

# --- the guard in a group of its own: rcoord's group stopped, the command still dies in time --
# The command stamps the time every 20 ms; a second `lock run` waits for the lock and stamps
# its start. With rcoord and everything in its group stopped, the guard kills the command at
# the kill point, before the lease ends and the second can take it.
stamp='while :; do date +%s%N >>"$0"; sleep 0.02; done'
for i in $(seq "$(effort 20)"); do
  : >"$TEST_TMP/stamps"
  setsid "$RCOORD" --timeout 300ms lock run frozen --ttl 1500ms -- sh -c "$stamp" "$TEST_TMP/stamps" \
    >/dev/null 2>"$TEST_TMP/frozen.err" &
  first=$!
  track $first
  wait_until 10 test -s "$TEST_TMP/stamps" || fail "round $i: the first command did not start"
  "$RCOORD" lock run frozen --wait 30s -- sh -c 'date +%s%N >"$0"' "$TEST_TMP/second" &
  second=$!
  wait_blocked "$R_PORT" 1
  kill -STOP -- "-$first"
  wait "$second" || fail "round $i: the second lock run failed"
  last=$(tail -n 1 "$TEST_TMP/stamps")
  started=$(cat "$TEST_TMP/second")
  [ "$last" -lt "$started" ] ||
    fail "round $i: the first command stamped at $last, after the second started at $started"
  kill -CONT -- "-$first"
  code=0
  wait "$first" || code=$?
  assert_eq "$code" 5 "round $i: the stopped holder exits 5"
  assert_contains "$(cat "$TEST_TMP/frozen.err")" "its guard killed the command before the lease could end"
done
pass "rcoord's group stopped: the guard (a group of its own) killed the command before a second holder started, $(effort 20) of $(effort 20)"

# --- the guard killed: another takes its place, and still kills the group when rcoord dies ----
rm -f "$TEST_TMP/tree.sh.pids"
cat >"$TEST_TMP/tree.sh" <<'SH'
sleep 60 &
echo "$$ $!" >"$0.pids"
wait
SH
"$RCOORD" lock run reguard --ttl 30s -- sh "$TEST_TMP/tree.sh" &
runner=$!
track $runner
wait_until 10 test -s "$TEST_TMP/tree.sh.pids" || fail "reguard: the command did not start"
guard_of() { ps -o pid=,comm= --ppid "$1" | awk '$2 != "sh" {print $1; exit}'; }
old_guard=$(guard_of $runner)
[ -n "$old_guard" ] || fail "no guard beside the command"
[ "$(ps -o pgid= -p "$old_guard" | tr -d ' ')" = "$old_guard" ] || fail "the guard is not in a group of its own"
kill -9 "$old_guard"
wait_until 5 sh -c "ps -o pid= --ppid $runner | grep -v -w -e $old_guard | wc -l | grep -qx 2" ||
  fail "no new guard after the first was killed"
kill -9 $runner
read -r cmd child <"$TEST_TMP/tree.sh.pids"
wait_until 5 dead "$cmd" || fail "the new guard did not kill the command"
wait_until 5 dead "$child" || fail "the new guard did not kill the command's child"
pass "a killed guard is replaced at once, and the new one kills the group when rcoord dies"
