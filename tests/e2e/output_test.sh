# A result that cannot be written is an error, and nothing is lost: with stdout full
# (/dev/full), closed, or a pipe whose reader is gone, every verb that takes something exits
# non-zero and gives back what it took (a popped message goes back to the queue); other
# verbs exit non-zero too. Exit 3 with one line; a reader that went away is exit 141 without a
# message, as SIGPIPE would end it (rcoord ignores SIGPIPE to give back first). With SIGPIPE
# ignored by whoever started it, --watch and elect observe stop once their reader is gone.
source "$(dirname "$0")/lib.sh"
start_redis R
export RCOORD_URL=$R_URL

# into DEST CMD...: runs CMD with stdout sent to DEST: `full` (/dev/full), `closed`, or
# `gone` (a pipe whose read end is closed before CMD starts; SIGPIPE as the caller has it),
# `gone-ignored` (the same, with SIGPIPE ignored by the caller and so by CMD). Sets RC and ERR.
into() {
  local dest=$1
  shift
  set +e
  case $dest in
    full) "$@" >/dev/full 2>"$TEST_TMP/err" ;;
    closed) "$@" >&- 2>"$TEST_TMP/err" ;;
    gone | gone-ignored)
      python3 - "$dest" "$@" 2>"$TEST_TMP/err" <<'PY'
import os, signal, subprocess, sys
dest, argv = sys.argv[1], sys.argv[2:]
r, w = os.pipe()
os.close(r)  # nobody will ever read: every write is EPIPE (or SIGPIPE)
# Python ignores SIGPIPE itself; `gone` gives the child the default back, `gone-ignored` not.
p = subprocess.Popen(argv, stdout=w, restore_signals=(dest == "gone"))
os.close(w)
try:
    code = p.wait(timeout=20)
except subprocess.TimeoutExpired:
    p.kill()
    print("still running 20 s after its reader was gone", file=sys.stderr)
    sys.exit(99)
sys.exit(128 - code if code < 0 else code)
PY
      ;;
  esac
  RC=$?
  set -e
  ERR=$(cat "$TEST_TMP/err")
}

# --- takes give back ---------------------------------------------------------------------
for dest in full closed gone; do
  want=3
  [ "$dest" = gone ] && want=141
  into $dest "$RCOORD" lock acquire "l-$dest" --ttl 1h
  assert_eq "$RC" "$want" "lock acquire, stdout $dest ($ERR)"
  [ "$dest" = gone ] || assert_contains "$ERR" "cannot write the result to stdout"
  expect 1 "$RCOORD" lock status "l-$dest"
  into $dest "$RCOORD" lock acquire "s-$dest" --ttl 1h --shared --json
  assert_eq "$RC" "$want" "lock acquire --shared --json, stdout $dest ($ERR)"
  expect 1 "$RCOORD" lock status "s-$dest"
  into $dest "$RCOORD" sem take "m-$dest" --limit 1 --ttl 1h
  assert_eq "$RC" "$want" "sem take, stdout $dest ($ERR)"
  expect 1 "$RCOORD" sem status "m-$dest"
  into $dest "$RCOORD" elect campaign "e-$dest" --id me --ttl 1h
  assert_eq "$RC" "$want" "elect campaign, stdout $dest ($ERR)"
  expect 1 "$RCOORD" elect status "e-$dest"
  pass "lock acquire, --shared, sem take, elect campaign with stdout $dest: exit $want, nothing held"
done

# A refresh (--token of the holder) took nothing new: the lock its token held before the call
# stays held, with the lease the refresh gave it; a fresh take with a chosen token still goes.
for dest in full closed gone; do
  want=3
  [ "$dest" = gone ] && want=141
  for mode in "" --shared; do
    name="r$mode-$dest"
    expect 0 "$RCOORD" lock acquire "$name" --ttl 1m --token "tok-$dest" $mode
    into $dest "$RCOORD" lock acquire "$name" --ttl 1h --token "tok-$dest" $mode
    assert_eq "$RC" "$want" "lock acquire $mode refreshing, stdout $dest ($ERR)"
    expect 0 "$RCOORD" --json lock status "$name"
    if [ -z "$mode" ]; then
      assert_eq "$(json_field "$OUT" token)" "tok-$dest" "the refreshed lock, stdout $dest"
    else
      assert_eq "$(json_field "$OUT" readers)" 1 "the refreshed reader, stdout $dest"
    fi
    ttl=$(json_field "$OUT" ttl_ms)
    [ "$ttl" -gt 60000 ] || fail "lock acquire $mode, stdout $dest: not refreshed to 1h (ttl_ms $ttl)"
    into $dest "$RCOORD" lock acquire "f$mode-$dest" --ttl 1h --token "tok-$dest" $mode
    assert_eq "$RC" "$want" "lock acquire $mode --token, fresh, stdout $dest ($ERR)"
    expect 1 "$RCOORD" lock status "f$mode-$dest"
  done
  pass "lock acquire (and --shared) refreshing with stdout $dest: exit $want, still held; a fresh take is given back"
done
start_redis N2
start_redis N3
into full "$RCOORD" -u "$R_URL" -u "$N2_URL" -u "$N3_URL" lock acquire rl --ttl 1h
assert_eq "$RC" 3 "Redlock acquire, stdout full ($ERR)"
for url in "$R_URL" "$N2_URL" "$N3_URL"; do expect 1 "$RCOORD" -u "$url" lock status rl; done
pass "Redlock acquire with stdout full: exit 3, released on every node"
expect 0 "$RCOORD" -u "$R_URL" -u "$N2_URL" -u "$N3_URL" lock acquire rl2 --ttl 1h --token rt
into full "$RCOORD" -u "$R_URL" -u "$N2_URL" -u "$N3_URL" lock acquire rl2 --ttl 1h --token rt
assert_eq "$RC" 3 "Redlock refresh, stdout full ($ERR)"
for url in "$R_URL" "$N2_URL" "$N3_URL"; do
  expect 0 "$RCOORD" --json -u "$url" lock status rl2
  assert_eq "$(json_field "$OUT" token)" rt "the refreshed Redlock on $url"
done
pass "Redlock refresh with stdout full: exit 3, still held on every node"

# --- popped messages go back --------------------------------------------------------------
for dest in full closed gone; do
  want=3
  [ "$dest" = gone ] && want=141
  expect 0 "$RCOORD" queue push "q-$dest" one two
  into $dest "$RCOORD" queue pop "q-$dest" --count 2
  assert_eq "$RC" "$want" "plain pop, stdout $dest ($ERR)"
  into $dest "$RCOORD" queue pop "q-$dest" --ack-timeout 1h --json
  assert_eq "$RC" "$want" "leased pop, stdout $dest ($ERR)"
  expect 0 "$RCOORD" queue stats "q-$dest"
  assert_eq "$OUT" "$(printf 'ready: 2\ndelayed: 0\nin_flight: 0\ndead: 0')" "queue after pops to stdout $dest"
  # back at the head, in order, as if never delivered (attempt 1 again)
  expect 0 "$RCOORD" --json queue pop "q-$dest" --count 2 --ack-timeout 1m
  assert_eq "$(head -n 1 <<<"$OUT" | python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["message"], m["attempt"])')" "one 1"
  pass "plain and leased pop with stdout $dest: exit $want, the messages are back in the queue"
done

# A plain pop acknowledges only what it wrote: the message is gone once printed.
expect 0 "$RCOORD" queue push plain m
expect 0 "$RCOORD" queue pop plain
assert_eq "$OUT" m
expect 0 "$RCOORD" queue stats plain
assert_contains "$OUT" "in_flight: 0"
assert_contains "$OUT" "ready: 0"
pass "plain pop: printed, then acknowledged (nothing left in flight)"

# --- other verbs exit non-zero ------------------------------------------------------------
into full "$RCOORD" --json bloom add f x y
assert_eq "$RC" 3 "bloom add --json, stdout full ($ERR)"
assert_contains "$ERR" "cannot write the result to stdout"
# JSON mode: the one-line message, then the same as one JSON object
assert_lines "$ERR" 2 "bloom add --json: the text line and the JSON line"
assert_eq "$(sed -n 2p <<<"$ERR" | python3 -c 'import json,sys; print(json.load(sys.stdin)["exit_code"])')" 3
into full "$RCOORD" lock status l-full
assert_eq "$RC" 3 "lock status, stdout full ($ERR)"
pass "bloom add --json and lock status with stdout full: exit 3"

# --- streams stop when their reader is gone, SIGPIPE ignored or not ------------------------
expect 0 "$RCOORD" lock acquire watched --ttl 1h
expect 0 "$RCOORD" elect campaign watched --id me --ttl 1h
for dest in gone gone-ignored; do
  into $dest "$RCOORD" lock status watched --watch 100ms
  assert_eq "$RC" 141 "lock status --watch, reader gone ($dest): $ERR"
  into $dest "$RCOORD" elect observe watched
  assert_eq "$RC" 141 "elect observe, reader gone ($dest): $ERR"
  [ -z "$ERR" ] || fail "a reader that went away is not an error to report: $ERR"
done
pass "--watch and elect observe stop when their reader is gone, SIGPIPE ignored or not"

# --- JSON: one naming rule --------------------------------------------------------------------
# Every result names its object `name` (`names` where a verb reads several); the old fields
# (key, keys, dest, channel, list, index, rtt_us) stay one release as deprecated aliases.
# names_in JSON_LINES: the `name` of every line, space-separated ("-" for a line without one).
names_in() {
  python3 -c 'import json,sys; print(" ".join(json.loads(l).get("name", "-") for l in sys.argv[1].splitlines()))' "$1"
}
expect 0 "$RCOORD" queue push nm-dead m
expect 0 "$RCOORD" queue pop nm-dead --ack-timeout 1m --max-attempts 1
expect 0 "$RCOORD" queue nack nm-dead "$(json_field "$("$RCOORD" --json queue peek nm-dead --in-flight)" id)"
while IFS='|' read -r name cmd; do
  # shellcheck disable=SC2086
  rc "$RCOORD" -o json $cmd
  [ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "$cmd: exit $RC ($ERR)"
  [ -n "$OUT" ] || fail "$cmd: no JSON"
  for got in $(names_in "$OUT"); do assert_eq "$got" "$name" "the name in the JSON of '$cmd': $OUT"; done
done <<'CASES'
nm-pf|pf add nm-pf a b
nm-pf|pf count nm-pf
nm-pf2|pf merge nm-pf2 nm-pf
nm-ch|signal send nm-ch x
nm-lim|limit check nm-lim --rate 5/s
nm-lim|limit check nm-lim --rate 5/s --rate 100/h
nm-lim|limit status nm-lim --rate 5/s
nm-lim|limit wait nm-lim --rate 5/s --wait 1s
nm-lim|limit reset nm-lim
nm-q|queue push nm-q a b c d
nm-q|queue len nm-q
nm-q|queue peek nm-q --count 2
nm-q|queue pop nm-q
nm-q|queue pop nm-q --ack-timeout 1m
nm-q|queue peek nm-q --in-flight
nm-q|queue stats nm-q
nm-dead|queue dead nm-dead
nm-b|bloom add nm-b x y
nm-b|bloom add nm-b z --summary
nm-b|bloom test nm-b x nope
nm-b|bloom test nm-b x --summary
nm-b|bloom info nm-b
nm-c|complete add nm-c foo fob
nm-c|complete add nm-c fun --summary
nm-c|complete suggest nm-c f
nm-c|complete remove nm-c foo
nm-r|complete recent push nm-r xyz
nm-r|complete recent suggest nm-r x
nm-k|lock acquire nm-k
nm-k|lock status nm-k
nm-s|sem take nm-s --limit 2
nm-e|elect campaign nm-e --id a
nm-la|latch init nm-la --count 2
nm-la|latch down nm-la
CASES
expect 0 "$RCOORD" -o json pf count nm-pf nm-pf2
assert_eq "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["names"])' "$OUT")" "['nm-pf', 'nm-pf2']"
expect 0 "$RCOORD" -o json pf merge nm-pf3 nm-pf nm-pf2
assert_eq "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["sources"])' "$OUT")" "['nm-pf', 'nm-pf2']"
# the deprecated aliases, still there
expect 0 "$RCOORD" -o json pf add nm-pf c
assert_eq "$(json_field "$OUT" key)" nm-pf
expect 1 "$RCOORD" -o json signal send nm-ch x
assert_eq "$(json_field "$OUT" channel)" nm-ch
expect 0 "$RCOORD" -o json complete recent push nm-r abc
assert_eq "$(json_field "$OUT" list)" nm-r
# ping: rtt_ms, whole milliseconds rounded up (a round trip is never 0 ms); rtt_us kept
expect 0 "$RCOORD" -o json ping
ms=$(json_field "$OUT" rtt_ms)
us=$(json_field "$OUT" rtt_us)
[ "$ms" -ge 1 ] && [ "$ms" -eq $(((us + 999) / 1000)) ] || fail "rtt_ms $ms for rtt_us $us"
pass "JSON: every verb names its object 'name' (names for several), rtt_ms; old fields kept"

# --- ls -o json: the fields top has -----------------------------------------------------------
expect 0 "$RCOORD" lock acquire ls-held --ttl 1h
"$RCOORD" lock acquire ls-held --wait 30s >/dev/null 2>&1 &
track $!
wait_blocked "$R_PORT" 1
expect 0 "$RCOORD" -o json ls 'ls-*'
python3 - "$OUT" <<'PY' || fail "ls -o json of a held lock: $OUT"
import json, sys
j = json.loads(sys.argv[1])
assert j["type"] == "lock" and j["name"] == "ls-held", j
assert isinstance(j["state"], str) and j["state"].startswith("held by"), j
assert isinstance(j["holder"], str) and j["holder"], j
assert j["waiting"] == 1, j
assert 3500000 < j["ttl_ms"] <= 3600000, j
assert "expires_in_ms" not in j, j  # only what was given --expire expires
PY
expect 0 "$RCOORD" -o json ls nm-pf
python3 - "$OUT" <<'PY' || fail "ls -o json of a HyperLogLog: $OUT"
import json, sys
j = json.loads(sys.argv[1])
assert j["holder"] is None and j["waiting"] is None and j["ttl_ms"] is None, j
PY
expect 0 "$RCOORD" -o json top 'ls-*'
assert_eq "$(json_field "$OUT" waiting)" 1 "top -o json: the same fields"
pass "ls -o json: holder, waiting, ttl_ms (null where they mean nothing), as top -o json"

# --- errors in JSON mode ----------------------------------------------------------------------
# json_error ERR: the second line of stderr, as "EXIT_CODE|ERROR|HINT".
json_error() {
  sed -n 2p <<<"$1" | python3 -c 'import json,sys; j=json.load(sys.stdin); assert set(j) <= {"error","hint","exit_code"}, j; print("%s|%s|%s" % (j["exit_code"], j["error"], j.get("hint", "")))'
}
for form in "-o json" "--json" "--output=json" "-ojson"; do
  # shellcheck disable=SC2086
  expect 2 "$RCOORD" $form lock acquire x --ttl bogus
  assert_lines "$ERR" 2 "a usage error with $form"
  assert_contains "$(sed -n 1p <<<"$ERR")" "rcoord: --ttl: bad duration 'bogus'"
  got=$(json_error "$ERR")
  assert_contains "$got" "2|--ttl: bad duration 'bogus'"
done
expect 2 "$RCOORD" lock aquire x --json
assert_contains "$(json_error "$ERR")" "2|"
dead=redis://127.0.0.1:$(free_port)
expect 3 "$RCOORD" -u "$dead" lock acquire x --json
got=$(json_error "$ERR")
assert_contains "$got" "3|cannot connect to 127.0.0.1:"
assert_contains "$got" "|set --url or RCOORD_URL"
assert_eq "$(sed -n 1p <<<"$ERR")" "rcoord: $(cut -d'|' -f2 <<<"$got") ($(cut -d'|' -f3 <<<"$got"))" "the JSON says what the text line says"
redis-cli -p "$R_PORT" set 'rcoord:{lock:wrong-type}' x >/dev/null
expect 4 "$RCOORD" -o json lock acquire wrong-type
assert_contains "$(json_error "$ERR")" "4|"
# text mode: the one line only
expect 3 "$RCOORD" -u "$dead" lock acquire x
assert_lines "$ERR" 1 "text mode: one line"
expect 2 "$RCOORD" -o text lock acquire x --ttl bogus
assert_lines "$ERR" 1 "-o text: one line"
pass "errors in JSON mode: the text line, then {\"error\",\"hint\",\"exit_code\"} on stderr"
