#!/bin/bash
# SPDX-License-Identifier: MIT
# The config file and the command line: FILE:LINE diagnostics and exit 78,
# --check-config, --print-config, overrides, usage errors (64), -V, -h.
# Environment: TOPDOWND (the binary, default ./daemon/topdownd), FIXTURES
# (default tests/fixtures).  Run from the repository root by prove.
. "$(dirname "$0")/lib.sh"

case $TOPDOWND in /*) ;; *) TOPDOWND=$PWD/$TOPDOWND ;; esac
case $FIXTURES in /*) ;; *) FIXTURES=$PWD/$FIXTURES ;; esac
EXAMPLE=$ROOT/config/topdownd.conf
tmp=$TMP

plan 55
# A failure shows the command's output.
not_ok() { fail "$@" "$tmp/out" "$tmp/err"; }

# td ARGS...: runs topdownd inside $tmp (so that relative config paths show
# up as given); sets $rc, output in $tmp/out and $tmp/err.  Every call but
# the bad-config ones has a mode that exits at once; those have no option
# but -c, and a bug accepting the file would start the daemon: the timeout
# bounds that (exit status 124 fails the test).
td() {
	(cd "$tmp" && exec timeout 5 "$TOPDOWND" "$@") >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# expect DESC RC STDERR [STDOUT]: exit status and the exact stderr (and
# stdout, empty unless given).
expect() {
	local desc=$1 want_rc=$2 want_err=$3 want_out=${4-} problems=()
	[ "$rc" -eq "$want_rc" ] || problems+=("exit status $rc, expected $want_rc")
	[ "$(cat "$tmp/err")" = "$want_err" ] || problems+=("expected stderr: $want_err")
	[ "$(cat "$tmp/out")" = "$want_out" ] || problems+=("unexpected stdout")
	if [ ${#problems[@]} -eq 0 ]; then pass "$desc"; else not_ok "$desc" "${problems[@]}"; fi
}

# bad_config DESC CONTENT EXPECTED-LINE: `topdownd -c bad.conf` alone must
# exit 78 printing exactly EXPECTED-LINE.
bad_config() {
	printf '%b' "$2" >"$tmp/bad.conf"
	td -c bad.conf
	expect "bad config, $1: exit 78, '${3:0:60}...'" 78 "$3"
}

# usage_error DESC FIRST-LINE ARGS...: exit 64, FIRST-LINE then the hint.
usage_error() {
	local desc=$1 first=$2
	shift 2
	td "$@"
	expect "usage error, $desc: exit 64" 64 \
		"$first"$'\n'"Try 'topdownd --help' for more information."
}

SECTIONS="[collect], [metrics], [http], [log] or [cgroups]"
DHINT="expected a number with a unit (ns, us, ms, s, m, h), e.g. 500ms or 2s"
HTTP_KEYS="listen, tls_cert, tls_key, tls_client_ca, basic_auth_file, web_config_file, allow_plaintext, allow_unauthenticated, max_connections, timeout, unhealthy_after"

# ---- one bad line of each kind ----
bad_config "unknown section" '[collect]\nlevel = 2\n\n[bogus]\nkey = 1\n' \
	"bad.conf:4: unknown section [bogus]: expected $SECTIONS"
bad_config "empty unknown section" '[collect]\nlevel = 2\n[prometheus]\n' \
	"bad.conf:3: unknown section [prometheus]: expected $SECTIONS"
bad_config "unknown key" '[http]\nlisten = [::1]:10412\nport = 8080\n' \
	"bad.conf:3: unknown key \"port\" in [http]: expected $HTTP_KEYS"
bad_config "key in the wrong section" '[collect]\ntimeout = 5s\n' \
	"bad.conf:2: unknown key \"timeout\" in [collect] (it belongs in [http]); expected interval, cpus, level, drilldown, depth_multiplex, model, count_kernel, count_guest, history, pmu_sharing, smt"
bad_config "key outside any section" 'interval = 1s\n[collect]\n' \
	"bad.conf:1: key outside any section: put it under $SECTIONS"
bad_config "bad duration" '[collect]\ninterval = 2 seconds\n' \
	"bad.conf:2: [collect] interval: invalid duration \"2 seconds\": unknown unit; $DHINT"
bad_config "duration without unit" '; comment\n[collect]\ninterval = 2\n' \
	"bad.conf:3: [collect] interval: invalid duration \"2\": $DHINT"
bad_config "out-of-range duration" '[collect]\ninterval = 5ms\n' \
	"bad.conf:2: [collect] interval: 5ms is out of range: expected 10ms to 1m"
bad_config "out-of-range integer" '[http]\nmax_connections = 100000\n' \
	"bad.conf:2: [http] max_connections: 100000 is out of range: expected an integer from 1 to 65536"
bad_config "out-of-range level" '[collect]\nlevel = 7\n' \
	"bad.conf:2: [collect] level: 7 is out of range: expected an integer from 1 to 6"
bad_config "bad boolean" '[collect]\ncount_kernel = sometimes\n' \
	"bad.conf:2: [collect] count_kernel: invalid boolean \"sometimes\": expected true or false"
bad_config "bad enum" '[metrics]\ngranularity = socket\n' \
	"bad.conf:2: [metrics] granularity: invalid value \"socket\": expected cpu, core, package or system"
bad_config "bad log level" '[log]\nlevel = verbose\n' \
	"bad.conf:2: [log] level: invalid value \"verbose\": expected error, warning, info, debug or warn"
bad_config "duplicate key" '[log]\nlevel = info\nlevel = debug\n' \
	"bad.conf:3: [log] level is set twice (first on line 2)"
bad_config "syntax error" '[collect]\nlevel 2\n' \
	"bad.conf:2: syntax error: expected \"key = value\", \"[section]\" or a comment"
bad_config "unterminated section header" '[collect\n# nothing\n' \
	"bad.conf:1: syntax error: section header without closing ']'"
bad_config "bad listen address" '[http]\nlisten = [::1]:10412 ::1:10413\n' \
	"bad.conf:2: [http] listen: invalid address \"::1:10413\": write IPv6 addresses in brackets, e.g. [::1]:10412"
bad_config "listen port out of range" '[http]\nlisten = 127.0.0.1:99999\n' \
	"bad.conf:2: [http] listen: invalid port in \"127.0.0.1:99999\": expected 0 to 65535"
bad_config "bad cpu list" '[collect]\ncpus = 4-2\n' \
	"bad.conf:2: [collect] cpus: invalid CPU list \"4-2\": range 4-2 is reversed; expected all or a list like 0-15,32-47"
bad_config "tls_cert without tls_key" '[http]\ntls_cert = /etc/topdownd/cert.pem\n' \
	"bad.conf:2: [http] tls_cert and tls_key must be set together (tls_key is empty)"

# Every problem of a file is reported, in line order.
printf '[collect]\nlevel = 0\nmodel = quick\n[metrics]\nratios = 2\n' >"$tmp/multi.conf"
td -c multi.conf
expect "three bad lines: three FILE:LINE messages in order, exit 78" 78 \
	"multi.conf:2: [collect] level: 0 is out of range: expected an integer from 1 to 6
multi.conf:3: [collect] model: invalid value \"quick\": expected perf or hardware
multi.conf:5: [metrics] ratios: invalid boolean \"2\": expected true or false"

# ---- --check-config ----
td -c "$EXAMPLE" --check-config
expect "--check-config on config/topdownd.conf: exit 0, silent" 0 ""
printf '[collect]\ninterval = fast\n' >"$tmp/bad.conf"
td -c bad.conf --check-config
expect "--check-config on a bad file: exit 78 with FILE:LINE" 78 \
	"bad.conf:2: [collect] interval: invalid duration \"fast\": $DHINT"
td -c nope.conf --check-config
expect "--check-config on a missing -c file: exit 78" 78 \
	"nope.conf: cannot open: No such file or directory"
mkdir -p "$tmp/dir.conf"
td -c dir.conf --check-config
expect "--check-config on a directory: exit 78" 78 "dir.conf: is a directory, not a config file"
# Every problem in one run: parse errors, the lone tls_cert, and the
# files it names (before, the first stage with errors hid the others).
printf '[collect]\nlevel = 7\n[http]\ntls_cert = /nonexistent/cert.pem\n' >"$tmp/many.conf"
td -c many.conf --check-config
expect "--check-config reports a bad value and a lone tls_cert together" 78 \
	"many.conf:2: [collect] level: 7 is out of range: expected an integer from 1 to 6
many.conf:4: [http] tls_cert and tls_key must be set together (tls_key is empty)"
printf '[collect]\nlevel = 7\n[http]\ntls_cert = /nonexistent/cert.pem\ntls_key = /nonexistent/key.pem\nbasic_auth_file = /nonexistent/users\n' >"$tmp/files.conf"
td -c files.conf --check-config
expect "--check-config also reports the files it names, each" 78 \
	"files.conf:2: [collect] level: 7 is out of range: expected an integer from 1 to 6
tls_cert /nonexistent/cert.pem: cannot open: No such file or directory
/nonexistent/users: basic_auth_file: cannot open: No such file or directory"
# "#" after a value is a comment, as "; " is.
printf '[collect]\ninterval = 2s # every two seconds\nlevel = 1	# tab before\n' >"$tmp/hash.conf"
td -c hash.conf --print-config
if [ "$rc" -eq 0 ] && grep -qx 'interval = 2s' "$tmp/out" && grep -qx 'level = 1' "$tmp/out"; then
	pass "\"value # comment\": the comment is cut, as with ;"
else
	not_ok "\"value # comment\": the comment is cut, as with ;" "rc $rc"
fi
printf '[collect]\ninterval = 10s\n' >"$tmp/warn.conf"
td -c warn.conf --check-config
expect "--check-config, interval 10s: a warning, exit 0" 0 \
	"warn.conf:2: warning: [collect] interval 10s is longer than 5s: the 8-bit TopDown metrics lose precision between reads"

# ---- --print-config ----
DEFAULTS='[collect]
interval = 1s
cpus = all
level = 2
drilldown = false
depth_multiplex = false
model = perf
count_kernel = true
count_guest = false
history = 15m
pmu_sharing = yield
smt = auto

[metrics]
granularity = package
ratios = true

[http]
listen = [::]:10412
tls_cert =
tls_key =
tls_client_ca =
basic_auth_file =
web_config_file =
allow_plaintext = false
allow_unauthenticated = false
max_connections = 4096
timeout = 10s
unhealthy_after = 1m

[log]
level = info
format = text

[cgroups]
enabled = false
root =
track = system.slice/*.service kubepods.slice/kubepods-pod*.slice kubepods.slice/*/kubepods-*-pod*.slice kubepods/pod* kubepods/*/pod*
max_cgroups = 200
level = 1
budget = 1%
trigger = auto'

td -c "$EXAMPLE" --print-config
expect "--print-config of config/topdownd.conf: the defaults" 0 "" "$DEFAULTS"
cp "$tmp/out" "$tmp/printed.conf"
td -c /dev/null --print-config
expect "--print-config of an empty file: the defaults" 0 "" "$DEFAULTS"
td -c printed.conf --check-config
expect "printed config passes --check-config" 0 ""
td -c printed.conf --print-config
expect "printed config prints the same again" 0 "" "$DEFAULTS"

td -c "$EXAMPLE" -l 127.0.0.1:9100 --listen '[::1]:9101' -i 250ms --print-config
expect "-l twice and -i 250ms override the file in --print-config" 0 "" \
	"$(printf '%s\n' "$DEFAULTS" | sed -e 's/^interval = 1s$/interval = 250ms/' \
		-e 's/^listen = .*/listen = 127.0.0.1:9100 [::1]:9101/')"

MODIFIED='[collect]
interval = 1500ms
cpus = 0-3,8
level = 1
drilldown = true
depth_multiplex = true
model = hardware
count_kernel = false
count_guest = true
history = 1h
pmu_sharing = share
smt = on

[metrics]
granularity = package
ratios = false

[http]
listen = unix:/run/topdownd.sock [::1]:10412
tls_cert = /etc/topdownd/cert.pem
tls_key = /etc/topdownd/key.pem
tls_client_ca = /etc/topdownd/ca.pem
basic_auth_file = /etc/topdownd/htpasswd
web_config_file =
allow_plaintext = true
allow_unauthenticated = true
max_connections = 8
timeout = 2m
unhealthy_after = 5m

[log]
level = warning
format = json

[cgroups]
enabled = true
root = /sys/fs/cgroup
track = system.slice/*.service user.slice/*
max_cgroups = 64
level = 2
budget = 0.5%
trigger = sched_switch'
cat >"$tmp/mod.conf" <<'EOF'
# every key changed, written differently from how it prints
[cgroups]
trigger = sched_switch
budget = 0.50%
level = 2
max_cgroups = 064
track = /system.slice/*.service   user.slice/*
root = /sys/fs/cgroup
enabled = yes
[log]
level = warn
format = json
[http]
timeout = 120s
unhealthy_after = 300s
max_connections = 008
listen = unix:/run/topdownd.sock   [::1]:10412
tls_cert = /etc/topdownd/cert.pem
tls_key = /etc/topdownd/key.pem   ; inline comment
tls_client_ca = /etc/topdownd/ca.pem
basic_auth_file = /etc/topdownd/htpasswd
allow_plaintext = on
allow_unauthenticated = yes
[metrics]
granularity = package
ratios = off
[collect]
  interval = 1.5s
cpus = 8,0-3
level = 1
drilldown = on
depth_multiplex = yes
model = hardware
count_kernel = no
count_guest = yes
history = 60m
pmu_sharing = share
smt = on
EOF
td -c mod.conf --print-config
expect "--print-config of a file changing every key" 0 "" "$MODIFIED"
cp "$tmp/out" "$tmp/mod-printed.conf"
td -c mod-printed.conf --print-config
expect "--print-config of its output is the same (round trip)" 0 "" "$MODIFIED"
td -c mod.conf -i 20ms -l unix:/run/other.sock --print-config
if [ "$rc" -eq 0 ] && grep -qx 'interval = 20ms' "$tmp/out" &&
	grep -qx 'listen = unix:/run/other.sock' "$tmp/out" &&
	grep -qx 'cpus = 0-3,8' "$tmp/out"; then
	pass "command-line overrides win over the file's values, the rest stays"
else
	not_ok "command-line overrides win over the file's values, the rest stays"
fi

# ---- usage errors: 64, before the config is read ----
# Each has --print-config (-c /dev/null) too, so that a wrongly accepted
# command line prints the config and exits instead of starting the daemon.
P="-c /dev/null --print-config"
usage_error "unknown long option" "topdownd: unknown option '--bogus'" $P --bogus
usage_error "unknown short option" "topdownd: unknown option '-x'" $P -x
usage_error "unknown short option in a cluster" "topdownd: unknown option '-x'" $P -xV
usage_error "--interval without unit" \
	"topdownd: --interval: invalid duration \"5\": $DHINT" $P --interval 5
usage_error "--interval out of range" \
	"topdownd: --interval: 5ms is out of range: expected 10ms to 1m" $P -i 5ms
usage_error "--interval overflowing 64 bits" \
	"topdownd: --interval: duration \"18446744073.9s\" is too large" $P -i 18446744073.9s
usage_error "--listen bad" \
	"topdownd: --listen: invalid address \"bad\": expected host:port, [ipv6]:port or unix:/absolute/path" \
	$P --listen bad
usage_error "--json without --once" "topdownd: --json only goes with --once, --watch or --compare-perf" $P --json
usage_error "--count without --watch" "topdownd: --count only goes with --watch or --compare-perf" $P --count 3
usage_error "--count 0" "topdownd: --count: 0 is out of range: expected an integer from 1 to 4294967295" --watch --count 0
usage_error "extra argument" "topdownd: unexpected argument 'extra'" $P extra
usage_error "-c without its argument" "topdownd: option '-c' needs an argument" --print-config -c
usage_error "two modes" \
	"topdownd: choose one of --check-config, --print-config, --probe, --once, --watch and --compare-perf" \
	--probe --check-config -c /dev/null
usage_error "usage is checked before the config" "topdownd: unknown option '--bogus'" \
	-c "$tmp/nope.conf" --check-config --bogus

# ---- -V, -h ----
version=$(sed -n 's/^VERSION := *//p' Makefile 2>/dev/null)
[ -n "$version" ] || version='[0-9][0-9.]*'
td -V
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
	grep -q "^topdownd $version\\( \\|\$\\)" "$tmp/out"; then
	pass "-V: exit 0, 'topdownd $version'"
else
	not_ok "-V: exit 0, 'topdownd $version'" "exit status $rc"
fi
td --version
if [ "$rc" -eq 0 ] && grep -q "^topdownd $version\\( \\|\$\\)" "$tmp/out"; then
	pass "--version: exit 0"
else
	not_ok "--version: exit 0" "exit status $rc"
fi
td -h
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && head -n 1 "$tmp/out" | grep -q '^Usage: topdownd' &&
	grep -q -- '--check-config' "$tmp/out" && grep -q -- '--sysfs-root' "$tmp/out"; then
	pass "-h: exit 0, usage on stdout"
else
	not_ok "-h: exit 0, usage on stdout" "exit status $rc"
fi
td --help
if [ "$rc" -eq 0 ] && head -n 1 "$tmp/out" | grep -q '^Usage: topdownd'; then
	pass "--help: exit 0"
else
	not_ok "--help: exit 0" "exit status $rc"
fi
