#!/bin/bash
# SPDX-License-Identifier: MIT
# HTTPS (TLS 1.2+, mutual TLS), basic auth with bcrypt and its cache, and
# the request limits.
. "$(dirname "$0")/lib.sh"

plan 73

SPR=$FIXTURES/spr-2s
scen=$ROOT/tests/scenarios/level1.json
PKI=$TMP/pki
mkdir -p "$PKI"
(
	cd "$PKI" || exit 1
	ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
	openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj "/CN=test CA"
	openssl req $ec -keyout server.key -out server.csr -subj "/CN=localhost"
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext
	openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile san.ext
	openssl req $ec -keyout server2.key -out server2.csr -subj "/CN=renewed"
	openssl x509 -req -in server2.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server2.pem -days 2 -extfile san.ext
	openssl req $ec -keyout client.key -out client.csr -subj "/CN=prometheus"
	openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2
	openssl req -x509 $ec -keyout rogue.key -out rogue.pem -days 2 -subj "/CN=rogue"
) >/dev/null 2>&1
ok $([ -s "$PKI/client.pem" ]; echo $?) "test PKI generated with openssl"

# --- 1. HTTPS with client certificates ---
conf=$TMP/tls.conf
printf '[http]\ntls_cert = %s\ntls_key = %s\ntls_client_ca = %s\n' \
	"$PKI/server.pem" "$PKI/server.key" "$PKI/ca.pem" >"$conf"
td_start "$SPR" "$scen" -c "$conf" -i 100ms || exit 1
url=$TD_URL
like "$url" '^https://' "listening over HTTPS ($url)"
hp=${url#https://}
good=(--cacert "$PKI/ca.pem" --cert "$PKI/client.pem" --key "$PKI/client.key")
is "$(curl -s "${good[@]}" "$url/-/healthy")" "OK" "HTTPS with the test CA and a client certificate it signed"
is "$(curl -s -o /dev/null -w '%{http_code}' "${good[@]}" "$url/metrics")" 200 "/metrics over mutual TLS"
curl -s --max-time 5 "http://$hp/-/healthy" >"$TMP/plain.out" 2>&1
ok $([ $? -ne 0 ] && ! grep -q OK "$TMP/plain.out"; echo $?) "plain HTTP to the TLS port is refused"
curl -s --max-time 5 --cacert "$PKI/ca.pem" "$url/-/healthy" >/dev/null 2>&1
ok $([ $? -ne 0 ]; echo $?) "no client certificate: refused"
curl -s --max-time 5 --cacert "$PKI/ca.pem" --cert "$PKI/rogue.pem" --key "$PKI/rogue.key" "$url/-/healthy" >"$TMP/rogue.out" 2>&1
ok $([ $? -ne 0 ] && ! grep -q OK "$TMP/rogue.out"; echo $?) "a client certificate from another CA: refused"
echo | openssl s_client -connect "$hp" -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' \
	-cert "$PKI/client.pem" -key "$PKI/client.key" >"$TMP/tls11.out" 2>&1
grep -q 'Cipher is (NONE)' "$TMP/tls11.out"
ok $? "TLS 1.1 is refused"
echo | openssl s_client -connect "$hp" -tls1_2 -CAfile "$PKI/ca.pem" \
	-cert "$PKI/client.pem" -key "$PKI/client.key" >"$TMP/tls12.out" 2>&1
like "$(grep -m1 'Protocol' "$TMP/tls12.out")" 'TLSv1\.2' "TLS 1.2 is accepted"
# Reload: a broken key keeps the old files; a renewed certificate is used.
cp "$conf" "$TMP/tls.good"
printf '[http]\ntls_cert = %s\ntls_key = %s\ntls_client_ca = %s\n' \
	"$PKI/server.pem" "$PKI/rogue.key" "$PKI/ca.pem" >"$conf"
td_reload
is "$(curl -s "${good[@]}" "$url/-/healthy")" "OK" "a reload with a mismatched key keeps serving with the old files"
grep -q "tls_cert $PKI/server.pem and tls_key $PKI/rogue.key do not go together" "$TD_LOG"
ok $? "the mismatch is logged naming both files"
printf '[http]\ntls_cert = %s\ntls_key = %s\ntls_client_ca = %s\n' \
	"$PKI/server2.pem" "$PKI/server2.key" "$PKI/ca.pem" >"$conf"
td_reload
echo | openssl s_client -connect "$hp" -CAfile "$PKI/ca.pem" -cert "$PKI/client.pem" \
	-key "$PKI/client.key" 2>/dev/null | openssl x509 -noout -subject >"$TMP/subject" 2>&1
like "$(cat "$TMP/subject")" 'CN ?= ?renewed' "SIGHUP re-reads the certificate files"
td_stop
is "$TD_STATUS" 0 "exit 0"

# --- 2. bad TLS files at start: exit 78 naming the file ---
bad_tls() { # bad_tls DESC CERT KEY CA REGEX
	printf '[http]\ntls_cert = %s\ntls_key = %s\ntls_client_ca = %s\n' "$2" "$3" "$4" >"$TMP/bad.conf"
	out=$($TOPDOWND -c "$TMP/bad.conf" --sysfs-root "$FIXTURES/vm-nopmu" -l 127.0.0.1:0 2>&1)
	st=$?
	is "$st" 78 "$1: exit 78"
	like "$out" "$5" "$1: the message names the file"
}
bad_tls "missing certificate" "$PKI/nope.pem" "$PKI/server.key" "" "^tls_cert $PKI/nope.pem: cannot open: No such file or directory$"
bad_tls "mismatched key" "$PKI/server.pem" "$PKI/client.key" "" "^tls_cert $PKI/server.pem and tls_key $PKI/client.key do not go together"
printf 'not a certificate\n' >"$PKI/junk.pem"
bad_tls "garbage certificate" "$PKI/junk.pem" "$PKI/server.key" "" "^tls_cert $PKI/junk.pem: not a PEM certificate"
bad_tls "garbage CA" "$PKI/server.pem" "$PKI/server.key" "$PKI/junk.pem" "^tls_client_ca $PKI/junk.pem: no PEM CA certificate"
# File modes bind an unprivileged user only: the daemon runs as nobody
# (setpriv), the certificate readable, the key not.
chmod 755 "$TMP" "$PKI"
chmod 644 "$PKI/server.pem"
chmod 000 "$PKI/server.key"
if [ "$(id -u)" -eq 0 ]; then
	TOPDOWND="setpriv --reuid=65534 --regid=65534 --clear-groups $TOPDOWND" \
		bad_tls "unreadable key (as nobody)" "$PKI/server.pem" "$PKI/server.key" "" \
		"^tls_key $PKI/server.key: cannot open: Permission denied$"
else
	bad_tls "unreadable key" "$PKI/server.pem" "$PKI/server.key" "" "^tls_key $PKI/server.key: cannot open: Permission denied$"
fi
chmod 600 "$PKI/server.key"

# --- 3. basic auth ---
/usr/bin/python3 -W ignore - "$TMP/htpasswd" <<'EOF'
import crypt, sys
def h(pw):  # htpasswd -B writes $2y$; libxcrypt reads both
    return crypt.crypt(pw, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** 5)).replace("$2b$", "$2y$", 1)
open(sys.argv[1], "w").write("# Prometheus\nprom:%s\n\nops:%s\n" % (h("s3cret pass"), h("other")))
EOF
printf '[http]\nbasic_auth_file = %s\n' "$TMP/htpasswd" >"$TMP/auth.conf"
td_start "$SPR" "$scen" -c "$TMP/auth.conf" -i 100ms || exit 1
out=$(curl -s -D - -o /dev/null "$TD_URL/metrics" | tr -d '\r')
like "$out" '^HTTP/1.1 401' "no credentials: 401"
like "$out" $'\nWWW-Authenticate: Basic realm="topdownd"' "401 carries WWW-Authenticate: Basic realm=\"topdownd\""
is "$(curl -s -o /dev/null -w '%{http_code}' -u 'prom:wrong' "$TD_URL/metrics")" 401 "wrong password: 401"
is "$(curl -s -o /dev/null -w '%{http_code}' -u 'nobody:s3cret pass' "$TD_URL/metrics")" 401 "unknown user: 401"
is "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer abc' "$TD_URL/metrics")" 401 "not Basic: 401"
is "$(curl -s -o /dev/null -w '%{http_code}' -u 'prom:s3cret pass' "$TD_URL/metrics")" 200 "right credentials: 200"
is "$(curl -s -o /dev/null -w '%{http_code}' -u 'prom:s3cret pass' "$TD_URL/api/v1/topdown")" 200 "the API needs them too"
is "$(curl -s -o /dev/null -w '%{http_code}' "$TD_URL/")" 401 "the landing page needs them too"
is "$(curl -s "$TD_URL/-/healthy")" "OK" "/-/healthy stays open"
checks() { curl -s -u 'prom:s3cret pass' "$TD_URL/metrics" | awk '$1 == "topdown_http_password_checks_total" {print $2}'; }
# /metrics is rendered once an interval: read the count after a new one.
TD_CURL=(-u 'prom:s3cret pass')
wait_intervals 2
before=$(checks)
for _ in $(seq 1 100); do curl -s -o /dev/null -u 'prom:s3cret pass' "$TD_URL/metrics"; done
wait_intervals 2
after=$(checks)
TD_CURL=()
diag "bcrypt verifications: $before before, $after after 100 scrapes"
ok $([ $((after - before)) -lt 10 ]; echo $?) "100 scrapes with the right credentials cost $((after - before)) bcrypt verifications (< 10)"
like "$(curl -s -u 'prom:s3cret pass' "$TD_URL/metrics" | grep '^topdown_http_rejected_total{reason="unauthorized"}')" ' [1-9][0-9]*$' \
	"401s counted in topdown_http_rejected_total"
td_stop
printf 'prom:$2y$05$tooshort\nnocolon\n:$2y$05$abcdefghijklmnopqrstuuVWXYZ0123456789./abcdefghijklmnopq\n' >"$TMP/badpw"
printf '[http]\nbasic_auth_file = %s\n' "$TMP/badpw" >"$TMP/badauth.conf"
out=$("$TOPDOWND" -c "$TMP/badauth.conf" --check-config 2>&1)
is "$?" 78 "malformed basic-auth file: exit 78"
is "$out" "$TMP/badpw:1: user \"prom\": not a bcrypt hash (create the file with htpasswd -B)
$TMP/badpw:2: expected user:hash (create the file with htpasswd -B)
$TMP/badpw:3: user name empty or longer than 255 bytes" "each malformed line as FILE:LINE: message"

# --- 4. limits ---
printf '[http]\nmax_connections = 64\n' >"$TMP/lim.conf"
td_start "$SPR" "$scen" -c "$TMP/lim.conf" -i 100ms || exit 1
port=${TD_URL##*:}
raw() { /usr/bin/python3 "$ROOT/tests/integration/rawhttp.py" "$port" "$@"; }
is "$(raw header 65536)" "431" "64 KiB header: 431"
is "$(raw url 1048576)" "414" "1 MiB URL: 414"
is "$(curl -s -o /dev/null -w '%{http_code}' "$TD_URL/metrics?x=$(head -c 1500 /dev/zero | tr '\0' a)")" 414 "query string over 1 KiB: 414"
is "$(curl -s -o /dev/null -w '%{http_code}' "$TD_URL/api/v1/topdown?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9")" 400 "more than 8 query parameters: 400"
is "$(raw send $'GET /metrics\r\n\r\n')" "400" "HTTP/0.9 request line: 400"
# Strict framing (RFC 9112): each a 400, sent once.
is "$(raw statuses $'GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n')" "400 1" "two Host headers: 400, once"
is "$(raw statuses $'GET /metrics HTTP/1.1\r\n\r\n')" "400 1" "HTTP/1.1 without Host: 400, once"
is "$(raw statuses $'GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n')" "400 1" \
	"two different Content-Lengths: 400, once"
is "$(raw statuses $'GET /metrics%00.html HTTP/1.1\r\nHost: a\r\n\r\n')" "400 1" "an encoded NUL in the path: 400, once (it served /metrics)"
is "$(raw statuses $'GET /-/healthy HTTP/1.0\r\n\r\n')" "200 1" "HTTP/1.0 without Host: served"
wait_intervals 2
curl -s "$TD_URL/metrics" >"$TMP/lim.prom"
is "$(sample "$TMP/lim.prom" 'topdown_http_rejected_total{reason="too_large"}')" 3 "431, 414 and the long query counted as too_large"
is "$(sample "$TMP/lim.prom" 'topdown_http_rejected_total{reason="bad_request"}')" 6 "the 400s counted as bad_request"
td_stop

# --- 5. reloads fail closed, and never block ---
# A daemon with TLS and basic auth; every reload below that would turn
# either off, or that cannot be read at once, fails: HTTPS with
# credentials keeps working, topdown_config_last_reload_successful is 0
# and the log names the file.
safe=$TMP/safe.conf
printf '[http]\ntls_cert = %s\ntls_key = %s\nbasic_auth_file = %s\n' \
	"$PKI/server.pem" "$PKI/server.key" "$TMP/htpasswd" >"$safe"
cp "$safe" "$TMP/safe.good"
chmod 644 "$PKI/server.key"
td_start "$SPR" "$scen" -c "$safe" -i 100ms || exit 1
url=$TD_URL
grep -q "warning: tls_key $PKI/server.key can be read by every user (mode 0644): anyone on the host can read the private key; chmod o-r it" "$TD_LOG"
ok $? "a world-readable private key is warned about at start"
chmod 600 "$PKI/server.key"
sec=(--cacert "$PKI/ca.pem" -u 'prom:s3cret pass')
still_closed() { # DESCRIPTION: HTTPS with credentials 200, without 401, reload flagged failed
	local with without ok_flag
	with=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${sec[@]}" "$url/metrics")
	without=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$PKI/ca.pem" "$url/metrics")
	ok_flag=$(curl -s --max-time 5 "${sec[@]}" "$url/metrics" | awk '$1 == "topdown_config_last_reload_successful" {print $2}')
	is "$with $without $ok_flag" "200 401 0" "$1: HTTPS and basic auth still in force, the reload failed (with credentials, without, ..._successful)"
}
: >"$safe"
td_reload
still_closed "an empty config file"
grep -q "$safe: is empty: a reload needs the settings written out" "$TD_LOG"
ok $? "the empty file is named in the log"
rm -f "$safe"
td_reload
still_closed "the config file deleted"
printf '[collect]\nlevel = 1\n' >"$safe"
td_reload
still_closed "a config without TLS nor auth"
grep -q "$safe turns TLS off; set \[http\] allow_plaintext = true to mean it" "$TD_LOG"
ok $? "the log says how to mean it"
printf '[http]\ntls_cert = %s\ntls_key = %s\n' "$PKI/server.pem" "$PKI/server.key" >"$safe"
td_reload
still_closed "a config that keeps TLS and drops basic auth"
grep -q "$safe turns basic authentication off; set \[http\] allow_unauthenticated = true to mean it" "$TD_LOG"
ok $? "the log says so for basic auth"
# FIFOs: the config, the auth file, the key.  Each read would wait for a
# writer for ever; each reload fails at once and collection goes on.
rm -f "$safe"
mkfifo "$safe"
t0=$(date +%s%N)
td_reload 10
t_fifo=$((($(date +%s%N) - t0) / 1000000))
still_closed "the config file replaced by a FIFO"
grep -q "$safe: cannot open: not a regular file (a FIFO, socket or device could block the daemon)" "$TD_LOG"
ok $? "the FIFO is refused naming it (the reload took $t_fifo ms)"
TD_CURL=("${sec[@]}")
wait_intervals 3 "$url"
ok $? "collection goes on after it"
TD_CURL=()
rm -f "$safe"
mkfifo "$TMP/auth.fifo"
printf '[http]\ntls_cert = %s\ntls_key = %s\nbasic_auth_file = %s\n' "$PKI/server.pem" "$PKI/server.key" "$TMP/auth.fifo" >"$safe"
td_reload 10
still_closed "basic_auth_file replaced by a FIFO"
grep -q "$TMP/auth.fifo: basic_auth_file: cannot open: not a regular file" "$TD_LOG"
ok $? "the FIFO auth file is named"
mkfifo "$TMP/key.fifo"
printf '[http]\ntls_cert = %s\ntls_key = %s\nbasic_auth_file = %s\n' "$PKI/server.pem" "$TMP/key.fifo" "$TMP/htpasswd" >"$safe"
td_reload 10
still_closed "tls_key replaced by a FIFO"
grep -q "tls_key $TMP/key.fifo: cannot open: not a regular file" "$TD_LOG"
ok $? "the FIFO key is named"
# Meant: the new file says so, and the reload turns both off.
printf '[http]\nallow_plaintext = true\nallow_unauthenticated = true\n' >"$safe"
td_reload
hp=${url#https://}
is "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$hp/metrics")" 200 \
	"allow_plaintext and allow_unauthenticated: the reload turns TLS and auth off as asked"
td_stop
bound=$(stop_bound_ms)
ok $([ "$TD_STOP_MS" -lt "$bound" ]; echo $?) "SIGTERM after all that: exit in $TD_STOP_MS ms (< $bound: the unit's TimeoutStopSec, or a hang's under the sanitizers)"

# --- 6. node_exporter's web configuration file (--web.config.file) ---
# The file a fleet already has for its exporters (exporter-toolkit's
# format): the certificate, client certificates checked against a CA, the
# users' bcrypt hashes; relative paths from the file's directory.
web=$TMP/web
mkdir -p "$web"
prom_hash=$(awk -F: '$1 == "prom" {print $2}' "$TMP/htpasswd")
cat >"$web/web.yml" <<EOF
# as node_exporter reads it
tls_server_config:
  cert_file: ../pki/server.pem
  key_file: ../pki/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ../pki/ca.pem
  min_version: TLS12
http_server_config:
  http2: true
basic_auth_users:
  prom: $prom_hash
EOF
td_start "$SPR" "$scen" --web.config.file "$web/web.yml" -i 100ms || exit 1
url=$TD_URL
like "$url" '^https://' "--web.config.file: HTTPS ($url)"
is "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${good[@]}" -u 'prom:s3cret pass' "$url/metrics")" 200 \
	"a client certificate of its CA and the user's password: 200"
is "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${good[@]}" -u 'prom:wrong' "$url/metrics")" 401 \
	"a wrong password: 401"
curl -s --max-time 5 --cacert "$PKI/ca.pem" -u 'prom:s3cret pass' "$url/-/healthy" >/dev/null 2>&1
ok $([ $? -ne 0 ]; echo $?) "no client certificate: refused (RequireAndVerifyClientCert)"
td_stop
printf '[http]\nweb_config_file = %s\n' "$web/web.yml" >"$TMP/webkey.conf"
td_start "$SPR" "$scen" -c "$TMP/webkey.conf" -i 100ms || exit 1
is "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${good[@]}" -u 'prom:s3cret pass' "$TD_URL/metrics")" 200 \
	"the same file as [http] web_config_file"
# A reload that drops it is refused as dropping tls_cert is.
printf '[collect]\nlevel = 1\n' >"$TMP/webkey.conf"
td_reload
grep -q "$TMP/webkey.conf turns web_config_file's TLS and basic authentication off; set \[http\] allow_plaintext = true to mean it" "$TD_LOG"
ok $? "a reload dropping web_config_file fails closed, saying how to mean it"
td_stop
# What topdownd cannot do as the toolkit does is refused, with the line.
cat >"$web/bad.yml" <<EOF
tls_server_config:
  cert_file: ../pki/server.pem
  client_auth_type: VerifyClientCertIfGiven
  cipher_suites: [TLS_AES_128_GCM_SHA256]
basic_auth_users:
  prom: plaintext
headers: {}
EOF
out=$("$TOPDOWND" -c /dev/null --web.config.file "$web/bad.yml" --check-config 2>&1)
is "$?|$out" "78|$web/bad.yml:4: tls_server_config: cipher_suites is not supported by topdownd (it uses GnuTLS' defaults and checks client certificates against client_ca_file only): leave it out
$web/bad.yml:7: unknown key \"headers\": expected tls_server_config, http_server_config or basic_auth_users
$web/bad.yml:1: tls_server_config: missing key_file
$web/bad.yml:3: tls_server_config: client_auth_type VerifyClientCertIfGiven is not supported by topdownd: RequireAndVerifyClientCert (with client_ca_file) or NoClientCert
$web/bad.yml:6: user \"prom\": not a bcrypt hash (create the file with htpasswd -B)" \
	"--check-config: every problem of the file, with its line (exit 78)"
printf '[http]\ntls_cert = %s\ntls_key = %s\n' "$PKI/server.pem" "$PKI/server.key" >"$TMP/both.conf"
out=$("$TOPDOWND" -c "$TMP/both.conf" --web.config.file "$web/web.yml" --check-config 2>&1)
is "$?|$out" "78|--web.config.file: [http] web_config_file sets TLS and basic authentication: leave tls_cert, tls_key and tls_client_ca out, or web_config_file" \
	"--web.config.file with tls_cert in the configuration: refused, saying which to leave out"

done_testing
