# rcoord metrics read by the tools operators feed it to: `promtool check metrics` (Debian's
# prometheus package) finds nothing to say about real output with objects of every type, -o
# json carries the same figures, and a real prometheus-node-exporter serves the --textfile
# rcoord wrote: its series while Redis answers, rcoord_up 0 (and no stale figures) once
# Redis is gone, rcoord exiting 3 all the same.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
for tool in promtool prometheus-node-exporter; do
  command -v "$tool" >/dev/null ||
    fail "$tool not installed (scripts/test installs Debian's prometheus and prometheus-node-exporter)"
done
start_redis R
export RCOORD_URL=$R_URL

# One object of every type, and the states that give each metric a sample.
"$RCOORD" lock acquire held-lock --ttl 5m >/dev/null
"$RCOORD" lock acquire shared-lock --shared --ttl 5m >/dev/null
"$RCOORD" sem take slots --limit 3 --permits 2 >/dev/null
"$RCOORD" limit check api --rate 10/h >/dev/null
"$RCOORD" bloom add seen a b c >/dev/null
"$RCOORD" pf add visitors x y z >/dev/null
"$RCOORD" complete add words apple >/dev/null
"$RCOORD" elect campaign leader --id host-a --ttl 5m >/dev/null
"$RCOORD" queue push jobs one two >/dev/null
"$RCOORD" latch init shards --count 2 >/dev/null
"$RCOORD" lock acquire 'say "hi"' --ttl 5m >/dev/null
expect 1 "$RCOORD" lock acquire held-lock # counted as busy
"$RCOORD" gate acquire --lock gate-lock --sem gate-slots:2 --ttl 5m >/dev/null # its counters
expect 0 "$RCOORD" ls --names
for name in held-lock shared-lock slots api seen visitors words leader jobs shards; do
  grep -qx -- "$name" <<<"$OUT" || fail "no $name among the objects: $OUT"
done

# promtool: the format and the naming conventions (it prints each problem and exits 1).
expect 0 "$RCOORD" metrics
printf '%s\n' "$OUT" >"$TEST_TMP/all.prom"
for family in $(sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' "$TEST_TMP/all.prom"); do
  grep -Eq "^${family}(_bucket|_sum|_count)?[{ ]" "$TEST_TMP/all.prom" ||
    fail "no sample of $family for promtool to check"
done
rc promtool check metrics <"$TEST_TMP/all.prom"
[ "$RC" = 0 ] || fail "promtool check metrics: exit $RC: $OUT $ERR"
assert_eq "$OUT$ERR" "" "promtool's findings"
# promtool does find what it should here: the old name of SPEC §5 is refused.
sed 's/rcoord_pf_estimate/rcoord_pf_count/' "$TEST_TMP/all.prom" >"$TEST_TMP/old.prom"
rc promtool check metrics <"$TEST_TMP/old.prom"
[ "$RC" != 0 ] || fail "promtool accepted rcoord_pf_count: it would not see a bad name either"
# The example alerts of docs/operations.md are rules promtool accepts.
sed -n '/^Example alerts:/,/^```$/p' "${RCOORD_SOURCE_DIR:?}/docs/operations.md" |
  sed '1,/^```yaml$/d; /^```$/d' >"$TEST_TMP/alerts.yml"
grep -q 'rcoord_lock_wait_seconds_bucket' "$TEST_TMP/alerts.yml" ||
  fail "no alert on waits among the docs' examples: $(cat "$TEST_TMP/alerts.yml")"
rc promtool check rules "$TEST_TMP/alerts.yml"
[ "$RC" = 0 ] || fail "promtool check rules on the docs' example alerts: $OUT $ERR"
pass "promtool check metrics is clean on every metric (and refuses the old _count names); the docs' alerts are valid rules"

# -o json and --json: one object with the same families and values as the text.
cat >"$TEST_TMP/same.py" <<'PY'
import json, sys
from prometheus_client.parser import text_string_to_metric_families
# Samples by their own names (a counter's with _total, a histogram's _bucket, _sum, _count).
text = {}
for family in text_string_to_metric_families(open(sys.argv[1], encoding="utf-8").read()):
    for s in family.samples:
        text.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
doc = json.loads(open(sys.argv[2], encoding="utf-8").read())
assert doc["up"] == 1, doc["up"]
assert doc["scraped_at"].endswith("Z"), doc["scraped_at"]
got = {}
for name, f in doc["metrics"].items():
    assert f["type"] in ("gauge", "counter", "histogram") and f["help"], (name, f)
    for s in f["samples"]:
        labels = tuple(sorted(s["labels"].items()))
        if f["type"] != "histogram":
            got.setdefault(name, {})[labels] = s["value"]
            continue
        for le, n in s["buckets"].items():
            got.setdefault(name + "_bucket", {})[tuple(sorted(labels + (("le", le),)))] = n
        got.setdefault(name + "_sum", {})[labels] = s["sum"]
        got.setdefault(name + "_count", {})[labels] = s["count"]
assert set(got) == set(text), (set(got) ^ set(text))
for name in text:
    if name == "rcoord_scrape_timestamp_seconds" or name == "rcoord_lock_held_seconds":
        continue  # read at another moment
    assert got[name] == text[name], (name, got[name], text[name])
assert got["rcoord_queue_messages"][(("name", "jobs"), ("state", "ready"))] == 2
assert got["rcoord_lock_held"][(("name", 'say "hi"'),)] == 1
PY
for flag in "-o json" --json; do
  # shellcheck disable=SC2086 # the flag is one or two words
  expect 0 "$RCOORD" $flag metrics
  assert_lines "$OUT" 1 "metrics $flag"
  printf '%s\n' "$OUT" >"$TEST_TMP/all.json"
  "$PY" "$TEST_TMP/same.py" "$TEST_TMP/all.prom" "$TEST_TMP/all.json" ||
    fail "metrics $flag differs from the text: $OUT"
done
expect 2 "$RCOORD" -o json metrics --textfile "$TEST_TMP/x.prom"
assert_contains "$ERR" "--textfile writes the Prometheus text format"
[ ! -e "$TEST_TMP/x.prom" ] || fail "-o json --textfile wrote a file"
pass "-o json and --json: one JSON object, the text's families and values; with --textfile exit 2"

# Many objects (more than a SCAN page and many pipelined batches), each type's figures right:
# 1,200 locks, 600 semaphores, 600 queues, 300 HyperLogLogs and 300 latches, made directly.
start_redis M
"$PY" - >"$TEST_TMP/many.resp" <<'PY'
def cmd(*args):
    out = ["*%d\r\n" % len(args)]
    for a in map(str, args):
        out.append("$%d\r\n%s\r\n" % (len(a.encode()), a))
    return "".join(out)
for i in range(3000):
    k = i % 10
    if k < 4:
        print(cmd("HSET", "rcoord:{lock:l-%d}" % i, "token", "%032x" % i, "fence", i), end="")
    elif k < 6:
        print(cmd("ZADD", "rcoord:{sem:s-%d}" % i, 9999999999999, "%032x" % i), end="")
        print(cmd("HSET", "rcoord:{sem:s-%d}:meta" % i, "limit", 4), end="")
    elif k < 8:
        print(cmd("RPUSH", "rcoord:{queue:q-%d}:ready" % i, "m1", "m2"), end="")
    elif k < 9:
        print(cmd("PFADD", "rcoord:{pf:p-%d}" % i, "a", "b", "c"), end="")
    else:
        print(cmd("HSET", "rcoord:{latch:c-%d}" % i, "count", 3, "initial", 3), end="")
PY
redis-cli -p "$M_PORT" --pipe <"$TEST_TMP/many.resp" >/dev/null
expect 0 "$RCOORD" --url "$M_URL" metrics
cat >"$TEST_TMP/many.py" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f.samples for f in text_string_to_metric_families(sys.stdin.read())}
def values(name, **labels):
    return [s.value for s in fams[name] if all(s.labels.get(k) == v for k, v in labels.items())]
fence = {s.labels["name"]: s.value for s in fams["rcoord_lock_fence"]}
assert len(fence) == 1200 and all(fence["l-%d" % i] == i for i in range(0, 3000, 10)), len(fence)
assert values("rcoord_lock_held") == [1.0] * 1200
assert values("rcoord_sem_permits_in_use") == [1.0] * 600
assert values("rcoord_sem_limit") == [4.0] * 600
assert values("rcoord_queue_messages", state="ready") == [2.0] * 600
assert values("rcoord_pf_estimate") == [3.0] * 300
assert values("rcoord_latch_remaining") == [3.0] * 300
PY
"$PY" "$TEST_TMP/many.py" <<<"$OUT" || fail "metrics over 3,000 objects: a figure is wrong or missing"
expect 0 "$RCOORD" --url "$M_URL" top
assert_lines "$OUT" 3001 "top's snapshot over 3,000 objects (with its header)"
pass "3,000 objects: every one in metrics with its own figures, and in top's snapshot"

# node_exporter reads the textfile rcoord writes.
dir=$TEST_TMP/collector
mkdir "$dir"
expect 0 "$RCOORD" metrics --textfile "$dir/rcoord.prom"
for _ in 1 2 3 4 5 6 7 8 9 10; do
  port=$(free_port)
  prometheus-node-exporter --collector.disable-defaults --collector.textfile \
    --collector.textfile.directory="$dir" --web.listen-address="127.0.0.1:$port" \
    >"$TEST_TMP/exporter.log" 2>&1 &
  exporter=$!
  track "$exporter"
  wait_until 10 "$PY" -c "import urllib.request, sys; urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=1)" &&
    alive "$exporter" && break
  kill "$exporter" 2>/dev/null || true
  wait "$exporter" 2>/dev/null || true
  exporter=
done
[ -n "$exporter" ] || fail "prometheus-node-exporter did not start: $(tail -n 3 "$TEST_TMP/exporter.log")"
scrape() {
  "$PY" -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=5).read().decode())"
}
served=$(scrape)
grep -qx 'rcoord_up 1' <<<"$served" || fail "node_exporter serves no rcoord_up 1: $served"
grep -qx 'rcoord_lock_held{name="held-lock"} 1' <<<"$served" || fail "no lock series: $served"
grep -qx 'rcoord_queue_messages{name="jobs",state="ready"} 2' <<<"$served" ||
  fail "no queue series: $served"
grep -qx 'node_textfile_scrape_error 0' <<<"$served" || fail "the collector saw an error: $served"
pass "node_exporter's textfile collector serves the rcoord series"

# Redis gone: the next write says rcoord_up 0, and nothing else, atomically; exit 3 all the same.
inode=$(stat -c %i "$dir/rcoord.prom")
kill -9 "$R_PID"
wait "$R_PID" 2>/dev/null || true
expect 3 "$RCOORD" metrics --textfile "$dir/rcoord.prom"
assert_contains "$ERR" "cannot connect"
assert_lines "$ERR" 1 "stderr with Redis gone"
[ "$(stat -c %i "$dir/rcoord.prom")" != "$inode" ] || fail "the file was not replaced by a rename"
assert_eq "$(ls -A "$dir")" rcoord.prom "files left in the directory"
assert_eq "$(grep -v '^#' "$dir/rcoord.prom" | cut -d' ' -f1 | tr '\n' ' ')" \
  "rcoord_up rcoord_scrape_timestamp_seconds " "the samples written with Redis gone"
grep -qx 'rcoord_up 0' "$dir/rcoord.prom" || fail "no rcoord_up 0: $(cat "$dir/rcoord.prom")"
rc promtool check metrics <"$dir/rcoord.prom"
[ "$RC" = 0 ] || fail "promtool check metrics on the down file: $OUT $ERR"
served=$(scrape)
grep -qx 'rcoord_up 0' <<<"$served" || fail "node_exporter serves no rcoord_up 0: $served"
grep -q '^rcoord_lock_held' <<<"$served" && fail "node_exporter still serves the old figures"
pass "Redis gone: --textfile writes rcoord_up 0 alone (node_exporter serves it), exit 3"

expect 3 "$RCOORD" metrics
grep -qx 'rcoord_up 0' <<<"$OUT" || fail "stdout with Redis gone: $OUT"
expect 3 "$RCOORD" -o json metrics
assert_eq "$("$PY" -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["up"], sorted(d["metrics"]))' "$OUT")" \
  "0 ['rcoord_scrape_timestamp_seconds', 'rcoord_up']" "-o json with Redis gone"
pass "Redis gone: stdout (text and JSON) says up 0, exit 3"

kill "$exporter"
wait "$exporter" 2>/dev/null || true
