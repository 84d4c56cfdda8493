#!/usr/bin/env bash
# TLS: rediss:// with a private CA made here by openssl, server certificate and host name
# verified by default, mutual TLS, redis-cli's flags, and the errors an operator meets.
source "$(dirname "$0")/lib.sh"

certs="$TEST_TMP/certs"
mkdir -p "$certs"
make_ca() {  # make_ca NAME
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=rcoord test $1" \
    -keyout "$certs/$1.key" -out "$certs/$1.crt" 2>/dev/null
}
make_cert() {  # make_cert NAME CA SAN
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" -keyout "$certs/$1.key" \
    -out "$certs/$1.csr" 2>/dev/null
  printf 'subjectAltName=%s\n' "$3" >"$certs/$1.ext"
  openssl x509 -req -in "$certs/$1.csr" -CA "$certs/$2.crt" -CAkey "$certs/$2.key" \
    -CAcreateserial -days 2 -extfile "$certs/$1.ext" -out "$certs/$1.crt" 2>/dev/null
}
make_ca ca
make_ca other
make_cert server ca "DNS:localhost,IP:127.0.0.1"
make_cert client ca "DNS:rcoord-client"

start_redis one --tls-port @PORT2@ --tls-cert-file "$certs/server.crt" \
  --tls-key-file "$certs/server.key" --tls-ca-cert-file "$certs/ca.crt" --tls-auth-clients no
start_redis two --tls-port @PORT2@ --tls-cert-file "$certs/server.crt" \
  --tls-key-file "$certs/server.key" --tls-ca-cert-file "$certs/ca.crt" --tls-auth-clients yes
tls_port=$one_PORT2
mtls_port=$two_PORT2
TLS_URL="rediss://127.0.0.1:$tls_port"
MTLS_URL="rediss://127.0.0.1:$mtls_port"

# --- verified by default -----------------------------------------------------------------
expect 0 "$RCOORD" --url "$TLS_URL" --tls-ca "$certs/ca.crt" ping
assert_contains "$OUT" "mode: standalone"
expect 0 "$RCOORD" --url "rediss://localhost:$tls_port" --tls-ca "$certs/ca.crt" ping
pass "ping over TLS with the CA, by IP and by name"

expect 3 "$RCOORD" --url "$TLS_URL" --tls-ca "$certs/other.crt" ping
assert_contains "$ERR" "TLS certificate of 127.0.0.1:$tls_port was refused"
assert_contains "$ERR" "--tls-ca"
assert_lines "$ERR" 1 "one-line error"
expect 3 "$RCOORD" --url "$TLS_URL" ping
assert_contains "$ERR" "was refused"
pass "a wrong CA, or none, is exit 3 with a message that says so"

expect 3 "$RCOORD" --url "$TLS_URL" --tls-ca "$certs/ca.crt" --sni db.example.org ping
assert_contains "$ERR" "--sni"
pass "a host name the certificate does not hold is refused"

expect 0 "$RCOORD" --url "$TLS_URL" --tls-insecure ping
expect 0 "$RCOORD" --url "$TLS_URL" --tls-ca "$certs/other.crt" --tls-insecure ping
pass "--tls-insecure skips verification"

# --- mutual TLS ----------------------------------------------------------------------------
expect 3 "$RCOORD" --url "$MTLS_URL" --tls-ca "$certs/ca.crt" lock status m
assert_lines "$ERR" 1 "one-line error"
expect 0 "$RCOORD" --url "$MTLS_URL" --tls-ca "$certs/ca.crt" --tls-cert "$certs/client.crt" \
  --tls-key "$certs/client.key" ping
pass "mutual TLS: refused without a client certificate, accepted with one"

# --- redis-cli's flags ---------------------------------------------------------------------
expect 0 "$RCOORD" -h 127.0.0.1 -p "$mtls_port" --tls --cacert "$certs/ca.crt" \
  --cert "$certs/client.crt" --key "$certs/client.key" ping
expect 0 "$RCOORD" -h 127.0.0.1 -p "$tls_port" --tls --insecure ping
expect 0 "$RCOORD" -h 127.0.0.1 -p "$tls_port" --tls --cacert "$certs/ca.crt" --sni localhost ping
pass "redis-cli's --tls, --cacert, --cert, --key, --insecure, --sni"

# --- usage errors ----------------------------------------------------------------------------
expect 2 "$RCOORD" --url "redis://127.0.0.1:$tls_port" --tls-ca "$certs/ca.crt" ping
assert_contains "$ERR" "rediss://"
expect 2 "$RCOORD" --url "$TLS_URL" --tls-ca "$TEST_TMP/missing.crt" ping
assert_contains "$ERR" "missing.crt"
expect 2 "$RCOORD" --url "$TLS_URL" --tls-ca "$certs/ca.crt" --tls-key "$certs/client.key" ping
pass "TLS options without TLS, an unreadable CA file, a key without a certificate: exit 2"

# A plain port would wait silently for the end of the TLS hello: a plain PING on a second
# connection tells it, within a fraction of --timeout.
start=$(now_ms)
expect 3 "$RCOORD" --timeout 20s --url "rediss://127.0.0.1:$one_PORT" --tls-ca "$certs/ca.crt" ping
took=$(($(now_ms) - start))
assert_lines "$ERR" 1 "one-line error"
assert_contains "$ERR" "the server at 127.0.0.1:$one_PORT did not answer TLS: it speaks plain Redis on this port"
[ "$took" -lt "$(scaled 3000)" ] || fail "rediss:// to a plain port took ${took}ms of a 20s --timeout"
pass "rediss:// to a plain port: exit 3 in ${took}ms, saying it is a plain port"

# A TLS server that answers the hello late (here: a relay that holds the server's bytes back
# for 600ms, past the point where rcoord asks the port a plain PING, then passes them on in
# small pieces, so that the handshake waits again after the probe) is still TLS: the probe
# gets no Redis reply, and the handshake goes on to the end.
cat >"$TEST_TMP/slow.py" <<'PY'
import os, socket, sys, threading, time
upstream, port_file = int(sys.argv[1]), sys.argv[2]
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(16)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
def pipe(src, dst, delay):
    time.sleep(delay)
    try:
        while data := src.recv(65536):
            for i in range(0, len(data), 256 if delay else len(data)):
                dst.sendall(data[i:i + 256] if delay else data)
                time.sleep(0.02 if delay else 0)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    client, _ = server.accept()
    up = socket.create_connection(("127.0.0.1", upstream))
    threading.Thread(target=pipe, args=(client, up, 0), daemon=True).start()
    threading.Thread(target=pipe, args=(up, client, 0.6), daemon=True).start()
PY
python3 "$TEST_TMP/slow.py" "$tls_port" "$TEST_TMP/slow-port" &
track $!
wait_until 10 test -s "$TEST_TMP/slow-port" || fail "the slow relay did not start"
slow_url="rediss://127.0.0.1:$(cat "$TEST_TMP/slow-port")"
expect 0 "$RCOORD" --timeout 10s --url "$slow_url" --tls-ca "$certs/ca.crt" ping
expect 0 "$RCOORD" --timeout 10s --url "$slow_url" --tls-ca "$certs/ca.crt" lock acquire slow-tls
pass "a TLS server that answers the hello late (600ms) is still reached over TLS"

# --- every kind of traffic over TLS ---------------------------------------------------------
T=(--url "$TLS_URL" --tls-ca "$certs/ca.crt")
expect 0 "$RCOORD" "${T[@]}" lock acquire tls-lock --ttl 10m
token=$OUT
expect 1 "$RCOORD" "${T[@]}" lock acquire tls-lock
expect 0 "$RCOORD" "${T[@]}" lock release tls-lock --token "$token"
expect 0 "$RCOORD" "${T[@]}" lock run tls-run -- true
pass "lock acquire, release and run over TLS"

seq 1 20000 >"$TEST_TMP/items"
expect 0 "$RCOORD" "${T[@]}" -q bloom add tls-filter - <"$TEST_TMP/items"
expect 0 "$RCOORD" "${T[@]}" -q bloom test tls-filter 1 777 20000
expect 0 "$RCOORD" "${T[@]}" -q pf add tls-hll - <"$TEST_TMP/items"
expect 0 "$RCOORD" "${T[@]}" pf count tls-hll
count=$OUT
[ "$count" -gt 19000 ] && [ "$count" -lt 21000 ] || fail "pf count over TLS: $count"
pass "bulk streams over TLS (20000 items)"

"$RCOORD" "${T[@]}" signal wait tls-ch --wait 10s >"$TEST_TMP/signal.out" &
waiter=$!
track $waiter
wait_until 5 "$RCOORD" "${T[@]}" signal send tls-ch hello-over-tls || fail "no receiver over TLS"
wait "$waiter" || fail "signal wait over TLS failed"
assert_eq "$(cat "$TEST_TMP/signal.out")" "hello-over-tls" "signal data over TLS"
pass "pub/sub wake-up over TLS"
