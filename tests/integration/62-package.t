#!/bin/bash
# SPDX-License-Identifier: MIT
# Installing and packaging: make install's paths for each prefix, make
# uninstall, the license, and make deb: a Debian package that lintian
# accepts at error level, that dpkg installs into a scratch root, and whose
# binary runs there.
. "$(dirname "$0")/lib.sh"

plan 44

# --- make install / uninstall ---
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
r=$TMP/usr-root
make -s -C "$ROOT" install DESTDIR="$r" PREFIX=/usr >"$TMP/install.log" 2>&1
ok $? "make install PREFIX=/usr"
ok $([ -f "$r$unitdir/topdownd.service" ]; echo $?) "units where systemd's pkg-config says ($unitdir)"
for f in README.md docs/design.md docs/cgroups.md docs/prometheus.md LICENSE topdownd.conf contrib/prometheus/prometheus.yml contrib/prometheus/rules.yml \
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
	missing "dpkg-dev, debhelper and lintian are not installed (make deps installs them)" 36
	done_testing
fi
if [ ! -d "$ROOT/.git" ]; then
	missing "make deb packages the git tree's files: not a git checkout" 36
	done_testing
fi
# make deb and make image install what they build with, not the test
# toolchain (before 2026-11-28 both ran make deps: chromium, valgrind,
# qemu, the arm64 cross compiler and kernel, npm).
want=$(make -s -C "$ROOT" -n deps-deb | sed -n 's/.*for p in \([^;]*\); do.*/\1/p' | head -1)
extra=$(make -s -C "$ROOT" -n deps-image | sed -n 's/.*for p in \([^;]*\); do.*/\1/p' | head -1)
ok $(make -s -C "$ROOT" -pn deb image 2>/dev/null | grep -qx 'deb: deps-deb' &&
	make -s -C "$ROOT" -pn image 2>/dev/null | grep -qx 'image: deps-image' &&
	echo " $want $extra " | grep -q ' dpkg-dev .* umoci ' &&
	! echo " $want $extra " | grep -qE ' (chromium|valgrind|qemu[^ ]*|gcc-aarch64-linux-gnu|nodejs|npm|wrk|nginx-light|prometheus|linux-perf) '; echo $?) \
	"make deb installs the build and packaging tools only ($(echo $want | wc -w) packages), make image those and $(echo " $extra " | tr ' ' '\n' | grep -c '^debootstrap$\|^umoci$\|^libcap2-bin$\|^util-linux$') more"
DEBFULLNAME="Test Builder" DEBEMAIL=builder@test.invalid make -s -C "$ROOT" deb >"$TMP/deb.log" 2>&1
r=$?
ok $r "make deb"
[ $r -eq 0 ] || tail -20 "$TMP/deb.log" | sed 's/^/#   /'
deb=$(ls "$ROOT"/build/deb/topdownd_*_amd64.deb "$ROOT"/build/deb/topdownd_*_*.deb 2>/dev/null | head -1)
ok $([ -n "$deb" ]; echo $?) "it built ${deb##*/}"
# Real metadata or none: the builder's address by Debian's convention, no
# invented Homepage (before 2026-11-28 both were example.org's).
is "$(dpkg-deb -f "$deb" Maintainer)|$(dpkg-deb -f "$deb" Homepage)" "Test Builder <builder@test.invalid>|" \
	"Maintainer from DEBFULLNAME and DEBEMAIL, no Homepage"
lintian --fail-on error "$deb" >"$TMP/lintian.log" 2>&1
ok $? "lintian --fail-on error: clean"
grep -v 'running with root privileges' "$TMP/lintian.log" | sed 's/^/#   /'
# Into a scratch root, maintainer scripts run outside a chroot with
# DPKG_ROOT set (whatever they enable, they enable inside the scratch
# root only).
dr=$TMP/dpkg-root
mkdir -p "$dr/var/lib/dpkg/info" "$dr/var/lib/dpkg/updates"
: >"$dr/var/lib/dpkg/status"
DPKG_ROOT=$dr dpkg --root="$dr" --force-script-chrootless --force-depends -i "$deb" >"$TMP/dpkg.log" 2>&1
ok $? "dpkg -i into a scratch root"
# dpkg-buildflags' CPPFLAGS reach the compiler (before 2026-11-28 the
# Makefile dropped them: lintian's hardening-no-fortify-functions).
chk=$(nm -D "$dr/usr/sbin/topdownd" 2>/dev/null | grep -c '__[a-z_]*_chk')
ok $([ "$chk" -gt 0 ]; echo $?) "the package's binary is built with -D_FORTIFY_SOURCE=2 ($chk fortified libc functions)"
# (-L: the links point at /lib/systemd/system of the scratch root's view.)
# The shipped configuration listens on every address without
# authentication: nothing may start it before the administrator has
# configured it (before 2026-11-28 the service was enabled here, so it
# listened from the next boot).
[ ! -e "$dr/etc/systemd/system/multi-user.target.wants/topdownd.service" ] &&
	[ ! -e "$dr/etc/systemd/system/sockets.target.wants/topdownd.socket" ] &&
	[ -f "$dr/lib/systemd/system/topdownd.service" ] && [ -f "$dr/lib/systemd/system/topdownd.socket" ]
ok $? "the units are installed, neither enabled nor started (as the README says)"
grep -qx '/etc/topdownd/topdownd.conf' "$dr/var/lib/dpkg/info/topdownd.conffiles"
ok $? "/etc/topdownd/topdownd.conf is a conffile"
"$dr/usr/sbin/topdownd" -c "$dr/etc/topdownd/topdownd.conf" --check-config
ok $? "the installed binary checks the installed configuration: valid"
FAKEPMU_SYSFS=$FIXTURES/spr-2s FAKEPMU_SCENARIO=$ROOT/tests/scenarios/constant.json LD_PRELOAD=$FAKEPMU \
	"$dr/usr/sbin/topdownd" -c "$dr/etc/topdownd/topdownd.conf" --sysfs-root "$FIXTURES/spr-2s" --probe >"$TMP/probe" 2>&1
ok $? "the installed binary's --probe counts on a Sapphire Rapids (fixture and fake PMU)"
like "$(tail -2 "$TMP/probe")" 'Counted: +cpu on CPU 0, model perf' "... with the output of the build tree's binary"

# --- apt on a fresh Debian 12 with systemd (a debootstrapped chroot) ---
if [ "$(id -u)" -ne 0 ] || ! command -v debootstrap >/dev/null; then
	missing "root and debootstrap (make deps installs it; CI runs as root)" 23
	done_testing
fi
ch=$TMP/chroot
mirror=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -v security | head -1)
debootstrap --variant=minbase --include=systemd bookworm "$ch" "${mirror:-http://deb.debian.org/debian/}" \
	>"$TMP/debootstrap.log" 2>&1 && cp /etc/resolv.conf "$ch/etc/resolv.conf" && cp "$deb" "$ch/tmp/topdownd.deb" &&
	unshare --mount --propagation private sh -c 'mount -t proc proc "$1/proc" &&
		exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
			sh -c "apt-get update -qq && apt-get install -y -qq /tmp/topdownd.deb"' sh "$ch" >"$TMP/apt.log" 2>&1
r=$?
ok $r "apt installs the package on a fresh Debian 12 with systemd (debootstrap, chroot)"
[ $r -eq 0 ] || tail -10 "$TMP/apt.log" | sed 's/^/#   /'
# What systemd itself says of the units (systemctl reads the unit files
# and links; nothing runs in the chroot).  Before 2026-11-28 the service
# was "enabled": at the next boot it listened on [::]:10412 in plain HTTP
# without authentication, the shipped configuration.
is "$(chroot "$ch" systemctl is-enabled topdownd.service topdownd.socket 2>&1 | tr '\n' ' ')" "disabled disabled " \
	"systemctl is-enabled: the service and the socket are disabled"
started=$(for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" = "$ch" ] && echo "${p#/proc/}"; done)
is "${started:-none} $(ss -Hltn 'sport = :10412' | wc -l)" "none 0" "nothing was started: no process in the chroot, no listener on port 10412"
ok $([ -x "$ch/bin/kill" ] && chroot "$ch" dpkg -s procps >/dev/null 2>&1; echo $?) \
	"procps came with it: /bin/kill, which the unit's ExecReload runs"
chroot "$ch" /usr/sbin/topdownd --check-config >"$TMP/chroot-check" 2>&1
ok $? "the installed binary checks the installed configuration there, with Debian's libraries"
# The check can tell: enabled by the administrator, it says so.
chroot "$ch" systemctl enable topdownd.service >/dev/null 2>&1
is "$(chroot "$ch" systemctl is-enabled topdownd.service 2>&1)" "enabled" "... and once the administrator enables it, systemctl says enabled"
rm -rf "$ch"

# --- the OCI image (make image) from that package ---
if [ "$(id -u)" -ne 0 ] || ! command -v umoci >/dev/null || ! command -v podman >/dev/null ||
	! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
	missing "root, umoci, podman, runc and debootstrap (make deps installs them; CI runs as root)" 17
	done_testing
fi
version=$("$ROOT/daemon/topdownd" -V | awk '{print $2}')
revision=$(git -C "$ROOT" describe --always --dirty --abbrev=12)
img=$TMP/image
ref=localhost/topdownd:$version
t0=$(date +%s)
"$ROOT/build-aux/mkimage" "$deb" "$version" "$img" "$revision" >"$TMP/mkimage.log" 2>&1
r=$?
ok $r "build-aux/mkimage (make image) builds the image from the package ($(($(date +%s) - t0)) s)"
[ $r -eq 0 ] || { tail -20 "$TMP/mkimage.log" | sed 's/^/#   /'; done_testing; }
size=$(du -m "$img/topdownd-$version.oci.tar" | cut -f1)
# Before 2026-11-28 a Debian minbase root around the binary: 77.7 MB.
ok $([ "$size" -lt 12 ]; echo $?) "the image is small: $size MB (the OCI archive), under 12"
# Reproducible: built again from the same package, the same image.
"$ROOT/build-aux/mkimage" "$deb" "$version" "$TMP/image2" "$revision" >"$TMP/mkimage2.log" 2>&1
d1=$(jq -r '.manifests[0].digest' "$img/oci/index.json")
d2=$(jq -r '.manifests[0].digest' "$TMP/image2/oci/index.json" 2>/dev/null)
is "$d2" "$d1" "built twice, the same image (manifest ${d1:0:19}...): file times and dates are the commit's"
rm -rf "$TMP/image2"
# Its configuration: the entrypoint, an unprivileged user, the port.
m=$(jq -r '.manifests[0].digest' "$img/oci/index.json" | sed 's/sha256://')
is "$(jq -r '.manifests | length, .[0].annotations["org.opencontainers.image.ref.name"]' "$img/oci/index.json" | tr '\n' ' ')" \
	"1 $ref " "one image, named as the DaemonSet asks ($ref)"
cfg=$(jq -r '.config.digest' "$img/oci/blobs/sha256/$m" | sed 's/sha256://')
is "$(jq -r '[.config.User, (.config.Entrypoint | join(" ")), (.config.Cmd | join(" ")), (.config.ExposedPorts | keys | join(" "))] | join(" | ")' "$img/oci/blobs/sha256/$cfg")" \
	"65532:65532 | /usr/sbin/topdownd | -c /etc/topdownd/topdownd.conf | 10412/tcp" \
	"the image runs /usr/sbin/topdownd as uid 65532, exposes 10412"
is "$(jq -r '.config.Labels | ["org.opencontainers.image.version", "org.opencontainers.image.revision",
	"org.opencontainers.image.licenses"] as $k | [$k[] as $n | .[$n]] | join(" ")' "$img/oci/blobs/sha256/$cfg")" \
	"$version $revision MIT" "OCI labels: version, revision ($revision), licence"
umoci unpack --image "$img/oci:$ref" "$TMP/unpacked" >/dev/null 2>&1
is "$(getcap "$TMP/unpacked/rootfs/usr/sbin/topdownd" | awk '{print $2}')" "cap_perfmon,cap_bpf=p" \
	"its binary holds CAP_PERFMON and CAP_BPF as permitted file capabilities, without the effective bit"
# The binary, its libraries and the loader; no shell, no package manager.
is "$(cd "$TMP/unpacked/rootfs" && ls usr/bin bin/sh usr/bin/apt 2>&1 | grep -c 'No such file')" "3" \
	"no /usr/bin, no shell, no apt: $(cd "$TMP/unpacked/rootfs" && find . -type f | wc -l) files"
missing=$(cd "$TMP/unpacked/rootfs" && for p in var/lib/dpkg/status.d/*; do
	[ -s "usr/share/doc/${p##*/}/copyright" ] || echo "${p##*/}"; done | tr '\n' ' ')
is "$missing" "" "every package it takes files from has its copyright file and dpkg record ($(ls "$TMP/unpacked/rootfs/var/lib/dpkg/status.d" | wc -l) packages)"
# Podman runs it, with runc (crun refuses hosts with cgroup v1 controllers
# beside v2, as these are) and limits this session can set (podman would
# raise them, which needs CAP_SYS_RESOURCE).
pod() { podman --runtime runc "$@"; }
limits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
# Loaded under a name of this test's own: another make check on the machine
# loads and removes localhost/topdownd:VERSION too.
mine=localhost/topdownd-test-$$:$version
umoci tag --image "$img/oci:$ref" "$mine" && umoci rm --image "$img/oci:$ref" &&
	tar -C "$img/oci" -cf "$TMP/mine.oci.tar" .
podman load -q -i "$TMP/mine.oci.tar" >"$TMP/load.log" 2>&1
is "$(cat "$TMP/load.log")" "Loaded image: $mine" "podman loads the archive (under this test's name, $mine)"
ref=$mine
cleanup_image() { pod rm -f "topdownd-test-$$" >/dev/null 2>&1; podman rmi -f "$mine" >/dev/null 2>&1; _td_cleanup; }
trap cleanup_image EXIT
# As root under the fake PMU (a preload works without secure execution),
# given the two capabilities the file asks for.
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pod run -d --name "topdownd-test-$$" --network host "${limits[@]}" --user 0 --cap-add PERFMON,BPF \
	-v "$FAKEPMU:/fakepmu.so:ro" -v "$FIXTURES/spr-2s:/fixture:ro" -v "$ROOT/reference:/ref:ro" \
	-v "$ROOT/tests/scenarios/constant.json:/scenario.json:ro" \
	-e LD_PRELOAD=/fakepmu.so -e FAKEPMU_TABLES=/ref/perf-tables -e FAKEPMU_SYSFS=/fixture \
	-e FAKEPMU_SCENARIO=/scenario.json \
	"$ref" -c /dev/null --sysfs-root /fixture -l "127.0.0.1:$port" -i 500ms >"$TMP/run.id" 2>&1
wait_until 60 curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null
curl -sf "http://127.0.0.1:$port/metrics" >"$TMP/image.metrics"
like "$(grep '^topdown_up\|^topdown_pmu_info' "$TMP/image.metrics" | tr '\n' ' ')" \
	'^topdown_up 1 topdown_pmu_info\{pmu="cpu",pmu_name="sapphire_rapids",uarch="sapphirerapids",level="2"' \
	"podman run: the image's daemon under the fake PMU serves level 2 on Sapphire Rapids"
[ -s "$TMP/image.metrics" ] || pod logs "topdownd-test-$$" 2>&1 | tail -5 | sed 's/^/#   /'
pod rm -f "topdownd-test-$$" >/dev/null 2>&1
# As its own user with the two capabilities and nothing else: it raises
# them and says nothing is missing.
out=$(pod run --rm --network none "${limits[@]}" --cap-drop ALL --cap-add PERFMON,BPF "$ref" -c /dev/null --probe 2>&1)
ok $(echo "$out" | grep -q '^TopDown: ' && ! echo "$out" | grep -q '^Privileges:'; echo $?) \
	"as uid 65532 with CAP_PERFMON and CAP_BPF only, --probe runs and lacks nothing ($(echo "$out" | grep -m1 'TopDown:' | cut -c1-60)...)"
# Without them (before 2026-11-28 the kernel refused to execute the binary:
# "operation not permitted"), what needs none runs, and --probe says what
# is missing and how to grant it.
out=$(pod run --rm --network none "${limits[@]}" --cap-drop ALL "$ref" --version 2>&1)
is "$out" "topdownd $version (revision $revision)" "no capability at all: --version runs"
pod run --rm --network none "${limits[@]}" --cap-drop ALL "$ref" --help >"$TMP/help" 2>&1
ok $([ $? -eq 0 ] && grep -q -- '--probe' "$TMP/help"; echo $?) "... --help runs"
out=$(pod run --rm --network none "${limits[@]}" --cap-drop ALL "$ref" --check-config 2>&1)
ok $? "... --check-config checks the image's configuration: valid${out:+ ($out)}"
out=$(pod run --rm --network none "${limits[@]}" --cap-drop ALL "$ref" -c /dev/null --probe 2>&1)
like "$(echo "$out" | grep '^Privileges:')" '^Privileges: +none of CAP_PERFMON, CAP_BPF .*docker or podman: --cap-add PERFMON --cap-add BPF; Kubernetes: securityContext.capabilities.add: \[PERFMON, BPF\]' \
	"... --probe says neither capability is held and how to grant them"
out=$(pod run --rm --network none "${limits[@]}" --cap-drop ALL --cap-add PERFMON "$ref" -c /dev/null --probe 2>&1)
like "$(echo "$out" | grep '^Privileges:')" '^Privileges: +CAP_PERFMON \(no CAP_BPF: no per-cgroup attribution;' \
	"with CAP_PERFMON alone it runs, and says CAP_BPF is missing and what for"

done_testing
