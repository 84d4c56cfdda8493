# Every example of the README and docs/ runs against real servers: the addresses the examples
# name (redis.internal, 10.0.0.N, a Sentinel, a Cluster, a TLS port) stand for servers started
# here on loopback, all with a password (the examples' /etc/rcoord/password), and the scripts
# and files they use (./backup.sh, urls.gz, ...) are made in a sandbox. docs_examples.py says
# what makes an example fail: a usage error, a connection or server error, a hang, or a field
# it shows that the call does not print.
source "$(dirname "$0")/lib.sh"
SRC=${RCOORD_SOURCE_DIR:?}
PASSWORD="docs-$RANDOM-$RANDOM"
SANDBOX=$TEST_TMP/sandbox
mkdir -p "$SANDBOX/bin" "$SANDBOX/home" "$SANDBOX/incoming"

# --- certificates for the TLS examples ------------------------------------------------------
certs=$TEST_TMP/certs
mkdir -p "$certs"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=rcoord docs CA" \
  -keyout "$certs/ca.key" -out "$certs/ca.crt" 2>/dev/null
for name in server client; do
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "$certs/$name.key" \
    -out "$certs/$name.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$certs/$name.ext"
  openssl x509 -req -in "$certs/$name.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" \
    -CAcreateserial -days 2 -extfile "$certs/$name.ext" -out "$certs/$name.crt" 2>/dev/null
done
cp "$certs/ca.crt" "$SANDBOX/ca.pem"
cp "$certs/client.crt" "$SANDBOX/client.pem"
cp "$certs/client.key" "$SANDBOX/client.key"

# --- the servers ----------------------------------------------------------------------------
# main: redis.internal, plain and TLS (a client certificate optional)
start_redis main --requirepass "$PASSWORD" --tls-port @PORT2@ --tls-cert-file "$certs/server.crt" \
  --tls-key-file "$certs/server.key" --tls-ca-cert-file "$certs/ca.crt" --tls-auth-clients optional
# the five independent masters of the Redlock examples
for i in 1 2 3 4 5; do start_redis "node$i" --requirepass "$PASSWORD"; done
# two sentinels that know main as `main`
for s in sentinel1 sentinel2; do
  start_sentinel "$s" main "$main_PORT" "sentinel auth-pass main $PASSWORD"
done
# a Redis Cluster of three masters, with the password
cluster_ports=()
for i in 1 2 3; do
  start_redis "_cl$i" --cluster-enabled yes --cluster-config-file nodes.conf \
    --cluster-node-timeout 5000 --requirepass "$PASSWORD" --masterauth "$PASSWORD"
  var="_cl${i}_PORT"
  cluster_ports+=("${!var}")
done
REDISCLI_AUTH=$PASSWORD redis-cli --cluster create "${cluster_ports[@]/#/127.0.0.1:}" \
  --cluster-replicas 0 --cluster-yes >"$TEST_TMP/cluster.log" 2>&1 ||
  fail "redis-cli --cluster create failed: $(cat "$TEST_TMP/cluster.log")"
cluster_ok() {
  local p
  for p in "${cluster_ports[@]}"; do
    REDISCLI_AUTH=$PASSWORD redis-cli -p "$p" cluster info | grep -q 'cluster_state:ok' || return 1
  done
}
wait_until 30 cluster_ok || fail "the cluster never became ready"

# DOCS_RESET: every page starts from empty servers,
reset="true"
for port in "$main_PORT" "$node1_PORT" "$node2_PORT" "$node3_PORT" "$node4_PORT" \
  "$node5_PORT" "${cluster_ports[@]}"; do
  reset+="; REDISCLI_AUTH='$PASSWORD' redis-cli -p $port flushall >/dev/null"
done
# and finds what an operator's server has: a lock held for a while, a queue with messages
reset+="; '$RCOORD' lock acquire deploy-web --ttl 10m >/dev/null"
reset+="; '$RCOORD' queue push emails 'to ann' 'to bob' >/dev/null"
export DOCS_RESET=$reset

# --- what the examples name, and what stands for it here ------------------------------------
tab=$'\t'
{
  echo "redis.internal:6380${tab}127.0.0.1:$main_PORT2"
  echo "redis.internal:6379${tab}127.0.0.1:$main_PORT"
  echo "-h 10.0.0.5 -p 6380${tab}-h 127.0.0.1 -p $main_PORT2"
  echo "10.0.0.7:26379${tab}127.0.0.1:$sentinel1_PORT"
  echo "10.0.0.8:26379${tab}127.0.0.1:$sentinel2_PORT"
  echo "redis://10.0.0.11:7000${tab}redis://127.0.0.1:${cluster_ports[0]}"
  for i in 1 2 3 4 5; do
    var="node${i}_PORT"
    echo "re:redis://10\\.0\\.0\\.$i\\b(?![.:])${tab}redis://127.0.0.1:${!var}"
  done
  echo "/etc/ssl/redis-ca.pem${tab}$certs/ca.crt"
  echo "/etc/rcoord/password${tab}$SANDBOX/password"
  echo "/usr/local/bin/rcoord${tab}rcoord"
  echo "re:/usr/local/bin/([a-z.-]+)${tab}$SANDBOX/\\1"
  echo "/var/lib/prometheus/node-exporter/${tab}$SANDBOX/"
  echo "/data/in${tab}$SANDBOX/incoming"
  echo "%H${tab}docs-host"
} >"$TEST_TMP/substitutions"
printf '%s\n' "$PASSWORD" >"$SANDBOX/password"
chmod 600 "$SANDBOX/password"

# --- the scripts and files the examples use -------------------------------------------------
for job in backup.sh report.sh import.sh deploy.sh encode.sh scheduler writer fetch \
  run-shard.sh publish-report.sh; do
  printf '#!/bin/sh\necho "%s ran" >&2\n' "$job" >"$SANDBOX/$job"
done
printf '#!/bin/sh\nprintf "https://example.com/page/%%s\\n" 1 2 3\n' >"$SANDBOX/list-links"
chmod +x "$SANDBOX"/*.sh "$SANDBOX"/scheduler "$SANDBOX"/writer "$SANDBOX"/fetch "$SANDBOX"/list-links
printf 'https://example.com/page/%s\n' $(seq 1 200) | gzip >"$SANDBOX/urls.gz"
printf '10.0.0.%s - - [21/Nov/2026] "GET / HTTP/1.1" 200\n' $(seq 1 50) | gzip >"$SANDBOX/access.log.gz"
printf '%s\n' 'Zürich,CH' 'Zürich-Altstetten,CH' 'Zürich-Oerlikon,CH' 'Αθήνα,GR' >"$SANDBOX/cities.csv"
head -c 4096 /dev/urandom >"$SANDBOX/payload.bin"
printf 'jpeg' >"$SANDBOX/incoming/1.jpg"

# rcoord on the examples' PATH: the binary, each call's exit code recorded (and cut off after
# DOCS_CALL_LIMIT seconds: an example that waits is stopped there)
cat >"$SANDBOX/bin/rcoord" <<'WRAPPER'
#!/bin/bash
start=$(date +%s%N)
timeout -k 2 "$DOCS_CALL_LIMIT" "$DOCS_RCOORD" "$@"
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
timed_out=0
if [ "$rc" = 124 ] && [ "$elapsed_ms" -ge $((DOCS_CALL_LIMIT * 1000)) ]; then timed_out=1; fi
if [ -n "${DOCS_CALL_LOG:-}" ]; then
  printf '%s\t%s\t%s\t%s\n' "${DOCS_STEP:-}" "$rc" "$timed_out" "$*" >>"$DOCS_CALL_LOG"
fi
exit "$rc"
WRAPPER
chmod +x "$SANDBOX/bin/rcoord"

without_note
unset RCOORD_CONFIG REDIS_URL REDISCLI_AUTH RCOORD_TOKEN CI GITLAB_CI GITHUB_ACTIONS
export DOCS_RCOORD=$RCOORD DOCS_SANDBOX=$SANDBOX DOCS_CALL_LIMIT=$(($(scaled 2000) / 1000 + 1))
export PATH="$SANDBOX/bin:$PATH" HOME="$SANDBOX/home" RCOORD_URL="$main_URL"
export RCOORD_PASSWORD=$PASSWORD QUERY="redis cluster" URL="file:///dev/null" ID=item-1
export CI_PIPELINE_ID=812 CI_NODE_INDEX=1 CI_ENVIRONMENT_NAME=production
export RCOORD_COMPLETION_TIMEOUT_MS=1000

out=$(python3 "$SRC/tests/e2e/docs_examples.py" "$SRC" "$SANDBOX" "$TEST_TMP/substitutions") ||
  fail "an example of the documentation does not work as shown (see above)"
count=${out%% *}
[ "$count" -gt 100 ] || fail "only $count examples found: the extraction broke"
pass "$out of the README and docs/ against real servers, each as shown"
[ -s "$SANDBOX/rcoord.prom" ] || fail "the metrics --textfile example wrote no file"
assert_contains "$(cat "$SANDBOX/rcoord.prom")" "rcoord_up 1" "the textfile of the example"
pass "the node_exporter example writes its textfile"
