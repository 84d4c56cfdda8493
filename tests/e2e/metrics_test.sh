# rcoord metrics: the Prometheus text format, read back by a real parser (Debian's
# python3-prometheus-client), rcoord_up and the scrape's timestamp, every metric of SPEC §5
# (named as §6 says) with its figures, label values escaped
# (quotes, backslashes, newlines, UTF-8, bytes that are not UTF-8), --textfile written
# atomically (a new file renamed over the old, nothing else left in the directory).
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
  fail "python3-prometheus-client not installed (scripts/test installs it)"
start_redis R
export RCOORD_URL=$R_URL

# parse FILE: the samples, one per line: `metric<TAB>name<TAB>state<TAB>value`, with the name
# label as JSON (so that any byte shows); fails on anything the parser refuses, on a family
# without HELP, or of another type than gauge (the take counters: counter and histogram).
cat >"$TEST_TMP/parse.py" <<'PY'
import json, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1], encoding="utf-8").read()
for family in text_string_to_metric_families(text):
    # the parser names a counter's family without its _total
    kind = ("histogram" if family.name.endswith("_wait_seconds") else
            "counter" if family.name.endswith(("_acquired", "_busy", "_lost")) else "gauge")
    assert family.type == kind, family
    assert family.documentation, family
    print("family\t%s" % family.name)
    for s in family.samples:
        print("%s\t%s\t%s\t%r" % (s.name, json.dumps(s.labels.get("name", ""), ensure_ascii=False),
                                  s.labels.get("state", ""), s.value))
PY
parse() { "$PY" "$TEST_TMP/parse.py" "$1"; }
# sample METRIC NAME_JSON [STATE]: the value of one sample of the parsed output in $PARSED.
sample() {
  # (the name through the environment: awk -v would take its backslashes as escapes)
  printf '%s\n' "$PARSED" | M=$1 N=$2 S=${3:-} awk -F'\t' \
    '$1 == ENVIRON["M"] && $2 == ENVIRON["N"] && $3 == ENVIRON["S"] { print $4; found = 1 }
     END { exit !found }' ||
    fail "no sample $1{name=$2${3:+,state=$3}} in: $PARSED"
}

"$RCOORD" lock acquire held-lock --ttl 5m >/dev/null
"$RCOORD" lock acquire free-lock >/dev/null
"$RCOORD" lock break free-lock >/dev/null
free_fence=$(redis-cli -u "$R_URL" get 'rcoord:{lock:free-lock}:fence')
"$RCOORD" sem take slots --limit 3 --permits 2 >/dev/null
"$RCOORD" limit check api --rate 10/h --cost 3 >/dev/null
"$RCOORD" elect campaign leader --id host-a --ttl 5m >/dev/null
"$RCOORD" bloom add seen a b c >/dev/null
"$RCOORD" pf add visitors x y z >/dev/null
"$RCOORD" latch init shards --count 2 >/dev/null
"$RCOORD" queue push jobs one two >/dev/null
"$RCOORD" queue push poison p1 >/dev/null
"$RCOORD" queue consume poison --max-attempts 1 --idle-exit 300ms -- false >/dev/null 2>&1
# names the format must escape, or carry as they are
quote='say "hi"'
backslash='back\slash'
newline=$'two\nlines'
utf8='Zürich-锁'
for name in "$quote" "$backslash" "$newline" "$utf8" $'bad-\xff'; do
  "$RCOORD" lock acquire "$name" --ttl 5m >/dev/null
done

expect 0 "$RCOORD" metrics
printf '%s\n' "$OUT" >"$TEST_TMP/all.prom"
PARSED=$(parse "$TEST_TMP/all.prom") || fail "the parser refused the output: $OUT"
# (grep reads a here-string, not a pipe: under pipefail, a grep -q that ends at its first match
# can fail the printf still writing into the pipe, and the check with it.)
for metric in rcoord_up rcoord_scrape_timestamp_seconds rcoord_lock_held rcoord_lock_held_seconds rcoord_lock_fence rcoord_sem_permits_in_use \
  rcoord_sem_limit rcoord_sem_waiting rcoord_queue_messages rcoord_limit_remaining \
  rcoord_elect_has_leader rcoord_elect_term rcoord_bloom_items rcoord_bloom_fill_ratio \
  rcoord_pf_estimate rcoord_latch_remaining; do
  grep -qx "family	$metric" <<<"$PARSED" || fail "metric $metric missing"
  grep -q "^# TYPE $metric gauge$" "$TEST_TMP/all.prom" || fail "no TYPE line for $metric"
  grep -q "^# HELP $metric " "$TEST_TMP/all.prom" || fail "no HELP line for $metric"
done
pass "valid Prometheus text format with every metric of SPEC §5, HELP and TYPE"

assert_eq "$(sample rcoord_up '""')" 1.0
stamp=$(sample rcoord_scrape_timestamp_seconds '""')
"$PY" -c "import sys, time; sys.exit(0 if abs(float(sys.argv[1]) - time.time()) < 60 else 1)" \
  "$stamp" || fail "rcoord_scrape_timestamp_seconds $stamp is not now"
for old in rcoord_pf_count rcoord_latch_count; do
  grep -q "^$old" "$TEST_TMP/all.prom" && fail "$old is still exported (SPEC §6 renamed it)"
done
pass "rcoord_up 1 and the scrape's timestamp (now); the §5 names SPEC §6 renamed are gone"

assert_eq "$(sample rcoord_lock_held '"held-lock"')" 1.0
assert_eq "$(sample rcoord_lock_held '"free-lock"')" 0.0
# A fence is the server's clock in µs: exact as a float64 sample (below 2^53).
assert_eq "$(sample rcoord_lock_fence '"free-lock"')" "$free_fence.0" "the last fence handed out"
held=$(sample rcoord_lock_held_seconds '"held-lock"')
"$PY" -c "import sys; v = float(sys.argv[1]); sys.exit(0 if 0 <= v < 300 else 1)" "$held" ||
  fail "held-lock held for $held s?"
grep -q "^rcoord_lock_held_seconds	\"free-lock\"" <<<"$PARSED" &&
  fail "a free lock has no held_seconds"
assert_eq "$(sample rcoord_lock_waiting '"held-lock"')" 0.0
assert_eq "$(sample rcoord_sem_permits_in_use '"slots"')" 2.0
assert_eq "$(sample rcoord_sem_limit '"slots"')" 3.0
assert_eq "$(sample rcoord_sem_waiting '"slots"')" 0.0
assert_eq "$(sample rcoord_queue_messages '"jobs"' ready)" 2.0
assert_eq "$(sample rcoord_queue_messages '"jobs"' in_flight)" 0.0
assert_eq "$(sample rcoord_queue_messages '"poison"' dead)" 1.0
assert_eq "$(sample rcoord_queue_messages '"poison"' delayed)" 0.0
assert_eq "$(sample rcoord_limit_remaining '"api"')" 7.0
assert_eq "$(sample rcoord_elect_has_leader '"leader"')" 1.0
assert_eq "$(sample rcoord_elect_term '"leader"')" \
  "$(redis-cli -u "$R_URL" get 'rcoord:{elect:leader}:term').0" "the leader's term"
assert_eq "$(sample rcoord_bloom_items '"seen"')" 3.0
fill=$(sample rcoord_bloom_fill_ratio '"seen"')
"$PY" -c "import sys; v = float(sys.argv[1]); sys.exit(0 if 0 < v < 0.01 else 1)" "$fill" ||
  fail "fill ratio $fill"
assert_eq "$(sample rcoord_pf_estimate '"visitors"')" 3.0
assert_eq "$(sample rcoord_latch_remaining '"shards"')" 2.0
pass "each metric carries the object's figure"

for name in "$quote" "$backslash" "$newline" "$utf8"; do
  json=$("$PY" -c 'import json, sys; print(json.dumps(sys.argv[1], ensure_ascii=False))' "$name")
  assert_eq "$(sample rcoord_lock_held "$json")" 1.0 "lock $json"
done
grep -qF 'name="say \"hi\""' "$TEST_TMP/all.prom" || fail "quotes not escaped"
grep -qF 'name="back\\slash"' "$TEST_TMP/all.prom" || fail "backslash not escaped"
grep -qF 'name="two\nlines"' "$TEST_TMP/all.prom" || fail "newline not escaped"
# A name that is not UTF-8 cannot be carried as it is: its byte is written \xff.
assert_eq "$(sample rcoord_lock_held '"bad-\\xff"')" 1.0
pass "label values escaped: quotes, backslashes, newlines; UTF-8 kept; other bytes as \\xHH"

expect 0 "$RCOORD" metrics 'held-*' --type lock
printf '%s\n' "$OUT" >"$TEST_TMP/some.prom"
PARSED=$(parse "$TEST_TMP/some.prom")
assert_eq "$(printf '%s\n' "$PARSED" | grep -c '^rcoord_lock_held	')" 1 "only held-lock"
grep -q '^rcoord_queue_messages' <<<"$PARSED" && fail "--type lock printed a queue"
pass "PATTERN and --type select the objects"

# --textfile: a new file renamed over the old one; nothing else left in the directory
dir=$TEST_TMP/collector
mkdir "$dir"
expect 0 "$RCOORD" metrics --textfile "$dir/rcoord.prom"
assert_eq "$OUT" "" "stdout with --textfile"
PARSED=$(parse "$dir/rcoord.prom")
assert_eq "$(sample rcoord_latch_remaining '"shards"')" 2.0
assert_eq "$(stat -c %a "$dir/rcoord.prom")" 644 "the file's mode (readable by the collector)"
first_inode=$(stat -c %i "$dir/rcoord.prom")
"$RCOORD" latch down shards >/dev/null
expect 0 "$RCOORD" metrics --textfile "$dir/rcoord.prom"
[ "$(stat -c %i "$dir/rcoord.prom")" != "$first_inode" ] ||
  fail "the file was rewritten in place, not replaced by a rename"
PARSED=$(parse "$dir/rcoord.prom")
assert_eq "$(sample rcoord_latch_remaining '"shards"')" 1.0
assert_eq "$(ls -A "$dir")" rcoord.prom "files left in the directory"
pass "--textfile replaces the file atomically (rename), mode 644, nothing left behind"

# A collector reading while rcoord writes never sees half a file: a reader opens the file over
# and over while 30 --textfile writes replace it; every read must end as a whole file does,
# with the last line of the file written before (the objects do not change meanwhile). A
# write in place would show some of the reads an empty or cut file.
last_line=$(tail -n 1 "$dir/rcoord.prom")
[ -n "$last_line" ] || fail "the file ends with an empty line"
cat >"$TEST_TMP/reader.py" <<'PY'
import os, sys
path, stop, last = sys.argv[1], sys.argv[2], sys.argv[3]
reads = bad = 0
while not os.path.exists(stop):
    text = open(path, encoding="utf-8").read()
    reads += 1
    if not text.endswith("\n" + last + "\n"):
        bad += 1
        print("a partial read: %r" % text[-80:], file=sys.stderr)
print(reads, bad)
sys.exit(1 if bad else 0)
PY
"$PY" "$TEST_TMP/reader.py" "$dir/rcoord.prom" "$TEST_TMP/stop" "$last_line" >"$TEST_TMP/reads" &
reader=$!
for _ in $(seq 30); do "$RCOORD" metrics --textfile "$dir/rcoord.prom"; done
touch "$TEST_TMP/stop"
wait "$reader" || fail "a reader saw a partial file: $(cat "$TEST_TMP/reads")"
read -r reads _ <"$TEST_TMP/reads"
[ "$reads" -gt 30 ] || fail "the reader read only $reads times during 30 writes"
assert_eq "$(ls -A "$dir")" rcoord.prom "files left after 30 writes"
pass "a reader never sees a partial --textfile ($reads reads during 30 writes)"

expect 2 "$RCOORD" metrics --textfile "$TEST_TMP/no-such-dir/rcoord.prom"
assert_contains "$ERR" "no-such-dir"
expect 2 "$RCOORD" metrics --textfile "$dir"
assert_eq "$(ls -A "$dir")" rcoord.prom "files left after a failed write"
expect 0 "$RCOORD" -q metrics
assert_eq "$OUT" "" "-q"
pass "a --textfile that cannot be written: exit 2 naming it, nothing left behind"

# Only a regular file (or a new one) is replaced: a FIFO, a symbolic link (/dev/stdout is one)
# or a device node stays what it was, exit 2 before any connection (the URL is dead here).
mkfifo "$dir/fifo"
echo target >"$dir/target"
ln -s target "$dir/link"
dead_url=redis://127.0.0.1:$(free_port)
mkdir "$dir/sub"
for case in "fifo:a FIFO" "link:a symbolic link" "sub:a directory"; do
  path=$dir/${case%%:*}
  expect 2 "$RCOORD" --url "$dead_url" metrics --textfile "$path"
  assert_contains "$ERR" "cannot write $path: it is ${case#*:}"
  assert_lines "$ERR" 1 "stderr for --textfile $path"
done
[ -p "$dir/fifo" ] || fail "the FIFO was replaced"
[ -L "$dir/link" ] && [ "$(cat "$dir/target")" = target ] || fail "the symbolic link was replaced"
if [ "$(id -u)" = 0 ]; then
  mknod "$dir/full" c 1 7  # the device of /dev/full
  expect 2 "$RCOORD" metrics --textfile "$dir/full"
  assert_contains "$ERR" "character device"
  [ -c "$dir/full" ] || fail "the device node was replaced"
fi
rm -rf "$dir/fifo" "$dir/link" "$dir/target" "$dir/sub" "$dir/full"
assert_eq "$(ls -A "$dir")" rcoord.prom "files left after refused writes"
expect 2 "$RCOORD" --url "$dead_url" metrics --textfile ''
assert_contains "$ERR" "bad file name"
expect 0 "$RCOORD" metrics --textfile - --type latch
assert_contains "$OUT" 'rcoord_latch_remaining{name="shards"} 1'
pass "--textfile refuses what is not a regular file (FIFO, symlink, directory, device) and ''; - is stdout"
