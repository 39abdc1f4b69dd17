# SPDX-License-Identifier: MIT
# Shared helpers for the integration tests (bash TAP scripts run by prove).
#
# Environment (set by `make check-integration`, defaults for a manual run):
#   TOPDOWND  the daemon binary        FAKEPMU   tests/fakepmu/libfakepmu.so
#   FIXTURES  tests/fixtures           SAN=1     the daemon is sanitized
#
# td_start runs the daemon on 127.0.0.1 with an ephemeral port under the
# fake PMU and waits for its "Listening on" line; td_stop sends SIGTERM and
# reaps it.  Every process and temporary file is cleaned up on exit.

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOPDOWND=${TOPDOWND:-$ROOT/daemon/topdownd}
FAKEPMU=${FAKEPMU:-$ROOT/tests/fakepmu/libfakepmu.so}
FIXTURES=${FIXTURES:-$ROOT/tests/fixtures}
CHECK="/usr/bin/python3 $ROOT/tests/integration/check.py"
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/topdownd-test.XXXXXX")
TD_PID=
_TD_PIDS=()
_T_NUM=0
_T_FAILED=0

_td_cleanup() {
	local p
	for p in "${_TD_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap _td_cleanup EXIT

# ---- TAP ----

plan() { echo "1..$1"; }

ok() { # ok CONDITION-EXIT-STATUS DESCRIPTION
	_T_NUM=$((_T_NUM + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_T_NUM - $2"
	else
		echo "not ok $_T_NUM - $2"
		_T_FAILED=$((_T_FAILED + 1))
	fi
}

is() { # is GOT EXPECTED DESCRIPTION
	_T_NUM=$((_T_NUM + 1))
	if [ "$1" == "$2" ]; then
		echo "ok $_T_NUM - $3"
	else
		echo "not ok $_T_NUM - $3"
		echo "#   got:      '$1'" >&2
		echo "#   expected: '$2'" >&2
		_T_FAILED=$((_T_FAILED + 1))
	fi
}

like() { # like GOT REGEX DESCRIPTION
	_T_NUM=$((_T_NUM + 1))
	if [[ "$1" =~ $2 ]]; then
		echo "ok $_T_NUM - $3"
	else
		echo "not ok $_T_NUM - $3"
		echo "#   got:      '$1'" >&2
		echo "#   expected: /$2/" >&2
		_T_FAILED=$((_T_FAILED + 1))
	fi
}

near() { # near GOT EXPECTED TOLERANCE DESCRIPTION
	_T_NUM=$((_T_NUM + 1))
	# GOT must be a number: an empty value or mawk's "nan" (0 / 0) fails.
	if [[ $1 =~ ^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]] &&
		awk -v g="$1" -v e="$2" -v t="$3" 'BEGIN {d = g - e; if (d < 0) d = -d; exit !(d <= t)}'; then
		echo "ok $_T_NUM - $4"
	else
		echo "not ok $_T_NUM - $4"
		echo "#   got:      '$1'" >&2
		echo "#   expected: $2 +- $3" >&2
		_T_FAILED=$((_T_FAILED + 1))
	fi
}

pass() { # pass DESCRIPTION
	_T_NUM=$((_T_NUM + 1))
	echo "ok $_T_NUM - $1"
}

# fail DESCRIPTION [DIAGNOSTIC...]: each diagnostic a line, or a file whose
# first 40 lines are shown.  Diagnostics of a failure go to stderr, which
# prove shows without -v (CI's log has them; stdout's comments it drops).
fail() {
	local d
	_T_NUM=$((_T_NUM + 1))
	_T_FAILED=$((_T_FAILED + 1))
	echo "not ok $_T_NUM - $1"
	shift
	for d in "$@"; do
		if [ -f "$d" ]; then
			[ -s "$d" ] && head -n 40 "$d" | sed "s|^|#   ${d##*/}: |" >&2
		else
			echo "#   $d" >&2
		fi
	done
}

skip() { # skip REASON
	_T_NUM=$((_T_NUM + 1))
	echo "ok $_T_NUM # SKIP $1"
}

# Under `make check` (TOPDOWND_STRICT=1) every prerequisite is there: make
# deps has installed the tools and CI runs as root.  A missing one is then
# a failure, not a skip that hides what the test covers.
strict() { [ "${TOPDOWND_STRICT:-0}" = 1 ]; }

missing() { # missing REASON [N]: N tests cannot run for want of REASON
	local i
	for ((i = 0; i < ${2:-1}; i++)); do
		if strict; then
			ok 1 "missing prerequisite under make check: $1"
		else
			skip "$1"
		fi
	done
}

missing_all() { # missing_all REASON: the whole file cannot run
	if strict; then
		echo "1..1"
		echo "not ok 1 - missing prerequisite under make check: $1"
		exit 1
	fi
	echo "1..0 # SKIP $1"
	exit 0
}

# A file that runs the plain build under valgrind: not in the sanitized
# pass (AddressSanitizer cannot run under valgrind; the plain pass runs it).
needs_valgrind() {
	if [ "${SAN:-}" = 1 ]; then
		echo "1..0 # SKIP valgrind runs the unsanitized build (AddressSanitizer cannot run under it)"
		exit 0
	fi
	command -v valgrind >/dev/null || missing_all "valgrind is not installed (make deps installs it)"
}

diag() { echo "# $*"; }

# wait_until SECONDS COMMAND...: runs COMMAND every 20 ms until it succeeds
# (0) or SECONDS have passed (1).  Tests wait on the event they depend on
# (a log line, a message, a counter reaching a value) with this, never on
# a fixed sleep; the bound only limits how long a failure takes.
wait_until() {
	local end=$(($(date +%s%N) + ${1%.*} * 1000000000))
	shift
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || return 1
		sleep 0.02
	done
}

# log_has FILE REGEX: FILE has a line matching REGEX (grep -E).
log_has() { grep -qE -- "$2" "$1" 2>/dev/null; }
# log_count_ge FILE REGEX N: FILE has at least N lines matching REGEX.
log_count_ge() { [ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -ge "$3" ]; }
# td_reload [SECONDS]: SIGHUP to the daemon, then waits for the log line
# that ends that reload ("Configuration reloaded" or "... not reloaded").
td_reload() {
	local re='Configuration (not )?reloaded' n
	n=$(grep -cE "$re" "$TD_LOG")
	kill -HUP "$TD_PID"
	wait_until "${1:-20}" log_count_ge "$TD_LOG" "$re" $((n + 1))
}

# Runs a check.py subcommand as one test: its output explains a failure.
check() { # check DESCRIPTION SUBCOMMAND ARGS...
	local desc=$1 out
	shift
	out=$($CHECK "$@" 2>&1)
	local st=$?
	ok $st "$desc"
	[ $st -eq 0 ] || echo "$out" | sed 's/^/#   /'
}

done_testing() { exit $((_T_FAILED > 0)); }

# ---- fixtures ----

# A private copy of a fixture, for tests that change it (hotplug).
fixture_copy() { # fixture_copy NAME -> prints the copy's path
	local dst="$TMP/fixture-$1-$RANDOM"
	cp -a "$FIXTURES/$1" "$dst"
	echo "$dst"
}

set_online() { # set_online FIXTURE_DIR CPU 0|1
	"$FIXTURES/set-online" "$@"
}

# ---- cgroups ----

# Kills every task of the cgroup tree DIR (a killed `timeout` leaves its
# child running), then removes the tree, children first.
cgroup_remove() { # cgroup_remove DIR
	local p
	for _ in 1 2 3 4 5; do
		[ -d "$1" ] || return 0
		for p in $(find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		sleep 0.1
		find "$1" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	[ ! -d "$1" ]
}

# hog_start CGROUP_DIR CPU SECONDS: a CPU hog pinned to CPU, left stopped in
# CGROUP_DIR (SIGCONT starts it).  Moved from outside while stopped: a task
# that moves itself while it runs is charged its CPU's slice since the
# last cgroup switch (README "Per-cgroup TopDown").  Sets HOG_PID.
# cgroup_tree NAME: $CG, a cgroup of the test's own under the cgroup v2
# hierarchy (a private mount of it where none is mounted), and hog() to put
# CPU loops in it; the loops, the tree and the mount go at exit.
cgroup_tree() {
	CG_ROOT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
	CG_MOUNTED=
	if [ -z "$CG_ROOT" ]; then
		CG_ROOT=$TMP/cgroup2
		mkdir -p "$CG_ROOT" && mount -t cgroup2 none "$CG_ROOT" && CG_MOUNTED=$CG_ROOT
	fi
	CG=$CG_ROOT/$1
	HOGS=()
	trap _cgroup_tree_cleanup EXIT
}
_cgroup_tree_cleanup() {
	local p
	for p in "${HOGS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	cgroup_remove "$CG"
	[ -n "$CG_MOUNTED" ] && umount "$CG_MOUNTED"
	_td_cleanup
}
hog() { # hog CGROUP CPU SECONDS: a CPU loop in $CG/CGROUP on CPU, stopped until SIGCONT
	hog_start "$CG/$1" "$2" "$3"
	HOGS+=("$HOG_PID")
}

hog_start() {
	taskset -c "$2" sh -c 'kill -STOP $$; exec timeout "$0" sh -c "while :; do :; done"' "$3" &
	HOG_PID=$!
	until grep -q '^State:.*T' "/proc/$HOG_PID/status" 2>/dev/null; do sleep 0.01; done
	echo "$HOG_PID" >"$1/cgroup.procs"
}

# ---- the daemon ----

# td_start FIXTURE_DIR SCENARIO [daemon args...]: the daemon under the
# fake PMU.  Sets TD_PID, TD_URL, TD_LOG.  Fails if it does not listen.
td_start() {
	local fixture=$1 scenario=$2
	shift 2
	td_spawn env FAKEPMU_SYSFS="$fixture" FAKEPMU_SCENARIO="$scenario" LD_PRELOAD="$FAKEPMU" \
		"$TOPDOWND" -c /dev/null --sysfs-root "$fixture" -l 127.0.0.1:0 "$@"
}

# swclock: the path of the swclock fixture (tests/fixtures/swclock: the
# kernel's software PMU as a core PMU, every event cpu-clock), made once.
swclock() {
	[ -d "$TMP/swclock" ] || "$FIXTURES/swclock" "$TMP/swclock"
	echo "$TMP/swclock"
}

# td_start_real CONFIG [daemon args...]: the daemon on the real kernel's
# perf events (the swclock fixture), no fake PMU; for BPF.  As td_start.
td_start_real() {
	local conf=$1 fixture
	shift
	fixture=$(swclock)
	td_spawn "$TOPDOWND" -c "$conf" --sysfs-root "$fixture" -l 127.0.0.1:0 "$@"
}

# td_spawn COMMAND...: a daemon command listening on 127.0.0.1:0, in the
# background.  Sets TD_PID, TD_URL, TD_LOG; fails if it does not listen.
td_spawn() {
	TD_LOG="$TMP/daemon-$RANDOM.log"
	"$@" >"$TD_LOG" 2>&1 &
	TD_PID=$!
	_TD_PIDS+=("$TD_PID")
	TD_URL=
	for _ in $(seq 1 200); do
		TD_URL=$(sed -n 's|.*Listening on \(https\{0,1\}://127\.0\.0\.1:[0-9]*\)/.*|\1|p' "$TD_LOG" | head -1)
		[ -n "$TD_URL" ] && return 0
		kill -0 "$TD_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "# daemon did not start; its log:"
	sed 's/^/#   /' "$TD_LOG"
	return 1
}

# td_stop: SIGTERM, wait (at most 30 s: a hang, then SIGKILL).  Sets
# TD_STATUS to the exit status and TD_STOP_MS to how long the exit took.
# Not in a subshell: only the parent can reap the daemon.
td_stop() {
	local start=$(date +%s%N)
	kill -TERM "$TD_PID" 2>/dev/null
	while [ $((($(date +%s%N) - start) / 1000000)) -lt 30000 ]; do
		[ -e "/proc/$TD_PID" ] && ! grep -q '^State:.*Z' "/proc/$TD_PID/status" 2>/dev/null || break
		sleep 0.01
	done
	TD_STOP_MS=$((($(date +%s%N) - start) / 1000000))
	kill -KILL "$TD_PID" 2>/dev/null
	wait "$TD_PID" 2>/dev/null
	TD_STATUS=$?
}

# stop_bound_ms: how long a stop after SIGTERM may take: the unit's
# TimeoutStopSec, after which systemd kills the daemon.  Under the
# sanitizers, whose work at exit is the tools' (LeakSanitizer scans the
# heap: 3.1 s for 21-sustained's daemon under ASan beside two busy
# loops), the bound of a hang, td_stop's 30 s: their exit status 0 is
# what shows a clean stop there.
stop_bound_ms() {
	if [ -n "${SAN:-}" ]; then
		echo 30000
		return
	fi
	sed -n 's/^TimeoutStopSec=\([0-9]*\)s$/\1000/p' "$ROOT/systemd/topdownd.service"
}

# sample FILE NAME_WITH_LABELS: the value of one sample in a saved scrape.
sample() {
	awk -v n="$2" '$1 == n {print $2; exit}' "$1"
}

# TD_CURL: extra curl arguments of metric, intervals and wait_intervals
# (credentials, a CA), for a daemon that asks for them.
TD_CURL=()

# metric NAME_WITH_LABELS [URL]: the value of one sample of /metrics.
metric() {
	curl -sf "${TD_CURL[@]}" "${2:-$TD_URL}/metrics" | awk -v n="$1" '$1 == n {print $2; exit}'
}

# parity_ok DESCRIPTION ARGS...: tests/oracle/parity.py (the daemon and
# perf under the fake PMU) with ARGS; ok on its exit status, with its
# last lines when it fails; its figures as a diagnostic; its output in
# PARITY_OUT for further checks.
parity_ok() {
	local d=$1 rc
	shift
	PARITY_OUT=$(/usr/bin/python3 "$ROOT/tests/oracle/parity.py" --topdownd "$TOPDOWND" --fakepmu "$FAKEPMU" \
		--sysns "$ROOT/tests/oracle/sysns" "$@" 2>&1)
	rc=$?
	ok $rc "$d$( [ $rc = 0 ] || printf '\n%s' "$(tail -8 <<<"$PARITY_OUT" | cut -c1-300)")"
	diag "$(grep -E '^(cpu|core|package|host|departure (tsc|retlat)_sum) ' <<<"$PARITY_OUT" | cut -c1-400 | tr '\n' ';')"
	return $rc
}

# intervals [URL]: how many intervals the daemon has collected.
intervals() {
	curl -sf "${TD_CURL[@]}" "${1:-$TD_URL}/metrics" | awk '$1 == "topdown_collections_total" {print $2}'
}

# wait_intervals N [URL] [SECONDS]: until N more intervals have been
# published (at most SECONDS, default 60: a bound on a failure, not a
# measurement; a loaded machine collects fewer intervals a second).
_intervals_ge() { local now; now=$(intervals "$1"); [ -n "$now" ] && [ "$now" -ge "$2" ]; }
wait_intervals() {
	local url=${2:-$TD_URL} start
	wait_until "${3:-60}" eval 'start=$(intervals "$url"); [ -n "$start" ]' || return 1
	wait_until "${3:-60}" _intervals_ge "$url" $((start + $1))
}

# clock_run FILE START [CAP]: drives a fake-PMU clock (FAKEPMU_CLOCK_FILE):
# from START seconds it advances 10 ms per 10 ms of wall time, never past
# CAP.  A scenario's phases then follow the test, not the machine's speed:
# the test moves the clock to a phase (clock_stop, clock_run from there)
# and waits for intervals, and a slow machine only makes the phase longer
# in wall time.  Sets CLOCK_PID.
clock_run() {
	/usr/bin/python3 -c '
import os, sys, time
f, t, cap = sys.argv[1], float(sys.argv[2]), sys.argv[3]
while True:
    # FILE.jump: a time the test moves the clock on to (never back), then
    # on at the same pace: a phase ends when the test says, not at a time.
    try:
        with open(f + ".jump") as j:
            t = max(t, float(j.read()))
        os.remove(f + ".jump")
    except (OSError, ValueError):
        pass
    v = min(t, float(cap)) if cap else t
    with open(f + ".tmp", "w") as o:
        o.write("%.6f\n" % v)
    os.rename(f + ".tmp", f)
    time.sleep(0.01)
    t += 0.01' "$1" "$2" "${3:-}" &
	CLOCK_PID=$!
	_TD_PIDS+=("$CLOCK_PID")
	wait_until 10 test -s "$1"
}
clock_stop() { kill -KILL "$CLOCK_PID" 2>/dev/null; wait "$CLOCK_PID" 2>/dev/null; }

write_scenario() { # write_scenario NAME <<JSON -> prints the path
	local f="$TMP/scenario-$1.json"
	cat >"$f"
	echo "$f"
}
