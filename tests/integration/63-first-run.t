#!/bin/bash
# SPDX-License-Identifier: MIT
# The README's first commands on a fresh Debian 12: a minimal root made
# with debootstrap (--variant=minbase) plus what cloning and typing them
# take (git, make), the tree copied in as `git clone` would give it.  In
# a private mount namespace with /proc, /sys and /dev of this machine,
# `make run` must install the build packages, build and serve (scraped
# from here: the network is shared), and `make demo` must do the same for
# the fake PMU and serve live figures.  Needs root, debootstrap and a
# Debian mirror (the one apt uses here).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || missing_all "needs root for debootstrap and chroot"
command -v debootstrap >/dev/null || missing_all "debootstrap is not installed (make deps installs it)"
[ -d "$ROOT/.git" ] || missing_all "the tree is copied as git ls-files gives it: not a git checkout"
mirror=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -v security | head -1)
mirror=${mirror:-http://deb.debian.org/debian/}

plan 9

R=$TMP/root
chmod 755 "$TMP"
t0=$(date +%s)
debootstrap --variant=minbase bookworm "$R" "$mirror" >"$TMP/debootstrap.log" 2>&1
ok $? "debootstrap --variant=minbase bookworm from $mirror ($(($(date +%s) - t0)) s)"
[ -x "$R/bin/sh" ] || { sed 's/^/#   /' "$TMP/debootstrap.log" | tail -20; exit 1; }
cp /etc/resolv.conf "$R/etc/resolv.conf"
# inroot COMMAND: COMMAND in the new root, in a private mount namespace
# whose mounts go with it.
inroot() {
	unshare --mount --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" && mount --rbind /dev "$r/dev" &&
			exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root sh -c "$1"' \
		inroot "$R" "$1"
}
inroot 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git make ca-certificates' \
	>"$TMP/base.log" 2>&1
ok $? "the fresh machine has git and make, nothing else of the build"
ok $(inroot 'command -v gcc || command -v pkg-config || dpkg -l libmicrohttpd-dev 2>/dev/null | grep -q ^ii'; [ $? -ne 0 ]; echo $?) \
	"... no compiler, no pkg-config, no -dev package"
# The tree as a clone gives it.
mkdir -p "$R/src/topdownd"
(cd "$ROOT" && git ls-files -z | tar --null -cf - -T -) | tar -xf - -C "$R/src/topdownd"
cp -a "$ROOT/.git" "$R/src/topdownd/.git"

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# run_make TARGET LOG: make TARGET in the root, in the background, in its
# own process group (so all of it can be stopped).  Sets MK_PID.
run_make() {
	setsid bash -c "$(declare -f inroot); R='$R'; inroot 'cd /src/topdownd && make -j2 $1 RUN_ADDR=127.0.0.1:$port'" \
		>"$2" 2>&1 &
	MK_PID=$!
	_TD_PIDS+=("$MK_PID")
}
stop_make() { kill -TERM -- "-$MK_PID" 2>/dev/null; wait "$MK_PID" 2>/dev/null; }
listening() { log_has "$1" "Listening on http://127\.0\.0\.1:$port/"; }

# --- make run ---
t0=$(date +%s)
run_make run "$TMP/run.log"
wait_until 900 listening "$TMP/run.log"
ok $? "make run on the fresh machine: built and listening after $(($(date +%s) - t0)) s"
grep -E '^make deps-build: installing' "$TMP/run.log" | sed 's/^/# /' | cut -c1-200
grep -qE '^make deps-build: installing .*libmicrohttpd-dev' "$TMP/run.log"
ok $? "make run installed the build packages itself (make deps-build)"
curl -s "http://127.0.0.1:$port/metrics" >"$TMP/run.prom"
like "$(grep -E '^topdown_up ' "$TMP/run.prom")" '^topdown_up [01]$' \
	"its /metrics answers from the fresh build (this machine has no PMU: $(grep -E '^topdown_up ' "$TMP/run.prom"))"
is "$(curl -s "http://127.0.0.1:$port/-/healthy")" "OK" "and /-/healthy"
stop_make
if ! listening "$TMP/run.log"; then sed 's/^/#   /' "$TMP/run.log" | tail -30; fi

# --- make demo ---
t0=$(date +%s)
run_make demo "$TMP/demo.log"
wait_until 600 listening "$TMP/demo.log"
ok $? "make demo on the same machine: listening after $(($(date +%s) - t0)) s"
n_up() { [ "$(curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "topdown_up" {print $2}')" = 1 ]; }
wait_until 30 n_up
ok $? "make demo serves live figures under the fake PMU (topdown_up 1)"
stop_make
if ! listening "$TMP/demo.log"; then sed 's/^/#   /' "$TMP/demo.log" | tail -30; fi
done_testing
