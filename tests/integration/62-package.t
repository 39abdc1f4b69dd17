#!/bin/bash
# SPDX-License-Identifier: MIT
# Installing and packaging: make install's paths for each prefix, make
# uninstall, the license, and make deb: a Debian package that lintian
# accepts at error level, that dpkg installs into a scratch root, and whose
# binary runs there.
. "$(dirname "$0")/lib.sh"

plan 18

# --- make install / uninstall ---
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
r=$TMP/usr-root
make -s -C "$ROOT" install DESTDIR="$r" PREFIX=/usr >"$TMP/install.log" 2>&1
ok $? "make install PREFIX=/usr"
ok $([ -f "$r$unitdir/topdownd.service" ]; echo $?) "units where systemd's pkg-config says ($unitdir)"
for f in README.md docs/design.md LICENSE topdownd.conf contrib/prometheus/prometheus.yml contrib/prometheus/rules.yml \
	contrib/prometheus/prometheus-agent.yml contrib/prometheus/prometheus-central.yml contrib/grafana/topdownd.json \
	contrib/systemd/cgroups.conf; do
	[ -f "$r/usr/share/doc/topdownd/$f" ] || missing="${missing:-} $f"
done
is "${missing:-}" "" "documentation and contrib under /usr/share/doc/topdownd"
r2=$TMP/opt-root
make -s -C "$ROOT" install DESTDIR="$r2" PREFIX=/opt/topdownd >/dev/null 2>&1
ok $([ -f "$r2/opt/topdownd/lib/systemd/system/topdownd.service" ] &&
	grep -q '^ExecStart=/opt/topdownd/sbin/topdownd ' "$r2/opt/topdownd/lib/systemd/system/topdownd.service"; echo $?) \
	"PREFIX=/opt/topdownd: units under \$(PREFIX)/lib/systemd/system, naming \$(PREFIX)/sbin/topdownd"
echo "# mine" >>"$r/etc/topdownd/topdownd.conf"
make -s -C "$ROOT" uninstall DESTDIR="$r" PREFIX=/usr >"$TMP/uninstall.log" 2>&1
ok $? "make uninstall"
left=$(cd "$r" && find . -type f | sort | tr '\n' ' ')
is "$left" "./etc/topdownd/topdownd.conf " "it removes everything but the (edited) configuration"
like "$(cat "$TMP/uninstall.log")" 'keeping .*/etc/topdownd/topdownd.conf' "and says it kept it"

# --- license ---
ok $(grep -q '^MIT License$' "$ROOT/LICENSE"; echo $?) "LICENSE: MIT"
missing=$(cd "$ROOT" && for f in $(find daemon -name "*.[ch]" | sort); do
	# The BPF program is MIT or GPL-2.0: the kernel's GPL-only helpers.
	head -1 "$f" | grep -qE 'SPDX-License-Identifier: (MIT|\(MIT OR GPL-2.0\))( \*/)?$' || echo "$f"; done | tr '\n' ' ')
is "$missing" "" "every daemon source starts with its SPDX-License-Identifier"

# --- make deb ---
if ! command -v dpkg-buildpackage >/dev/null || ! command -v lintian >/dev/null; then
	missing "dpkg-dev, debhelper and lintian are not installed (make deps installs them)" 10
	done_testing
fi
if [ ! -d "$ROOT/.git" ]; then
	missing "make deb packages the git tree's files: not a git checkout" 10
	done_testing
fi
make -s -C "$ROOT" deb >"$TMP/deb.log" 2>&1
r=$?
ok $r "make deb"
[ $r -eq 0 ] || tail -20 "$TMP/deb.log" | sed 's/^/#   /'
deb=$(ls "$ROOT"/build/deb/topdownd_*_amd64.deb "$ROOT"/build/deb/topdownd_*_*.deb 2>/dev/null | head -1)
ok $([ -n "$deb" ]; echo $?) "it built ${deb##*/}"
lintian --fail-on error "$deb" >"$TMP/lintian.log" 2>&1
ok $? "lintian --fail-on error: clean"
grep -v 'running with root privileges' "$TMP/lintian.log" | sed 's/^/#   /'
# Into a scratch root, maintainer scripts run outside a chroot with
# DPKG_ROOT set (they enable the unit inside the scratch root only).
dr=$TMP/dpkg-root
mkdir -p "$dr/var/lib/dpkg/info" "$dr/var/lib/dpkg/updates"
: >"$dr/var/lib/dpkg/status"
DPKG_ROOT=$dr dpkg --root="$dr" --force-script-chrootless --force-depends -i "$deb" >"$TMP/dpkg.log" 2>&1
ok $? "dpkg -i into a scratch root"
# (-L: the links point at /lib/systemd/system of the scratch root's view.)
[ -L "$dr/etc/systemd/system/multi-user.target.wants/topdownd.service" ] &&
	[ ! -L "$dr/etc/systemd/system/sockets.target.wants/topdownd.socket" ]
ok $? "the service is enabled there (the socket is not), not started"
grep -qx '/etc/topdownd/topdownd.conf' "$dr/var/lib/dpkg/info/topdownd.conffiles"
ok $? "/etc/topdownd/topdownd.conf is a conffile"
"$dr/usr/sbin/topdownd" -c "$dr/etc/topdownd/topdownd.conf" --check-config
ok $? "the installed binary checks the installed configuration: valid"
FAKEPMU_SYSFS=$FIXTURES/spr-2s FAKEPMU_SCENARIO=$ROOT/tests/scenarios/constant.json LD_PRELOAD=$FAKEPMU \
	"$dr/usr/sbin/topdownd" -c "$dr/etc/topdownd/topdownd.conf" --sysfs-root "$FIXTURES/spr-2s" --probe >"$TMP/probe" 2>&1
ok $? "the installed binary's --probe counts on a Sapphire Rapids (fixture and fake PMU)"
like "$(tail -2 "$TMP/probe")" 'Counted: +cpu on CPU 0, model perf' "... with the output of the build tree's binary"

done_testing
