#!/bin/bash
# SPDX-License-Identifier: MIT
# The man pages, daemon/topdownd.8 and daemon/topdownd.conf.5: they render
# without a warning (man, groff, mandoc when installed), and they document
# what the daemon really has: every option of --help, every key of
# --print-config with its default, every metric family of a live scrape
# (and nothing it does not export), the signals, the exit statuses, the
# systemd environment, the endpoints; the --probe and --print-config
# examples are the daemon's actual output.
. "$(dirname "$0")/lib.sh"

MAN8=$ROOT/daemon/topdownd.8
MAN5=$ROOT/daemon/topdownd.conf.5
SPR=$FIXTURES/spr-2s
# Families the page documents that a daemon may not export yet.

# Plain text, one line per paragraph (no wrapping): tags at 7 columns,
# bodies at 14, .SH headings at 0, .SS headings at 3.
render() { LC_ALL=C MANWIDTH=4000 man -l "$1" 2>/dev/null; }
# section FILE HEADING: the text of one .SH section of a rendered page.
section() {
	awk -v h="$2" '/^[A-Z][A-Z ]*$/ { on = ($0 == h); next } on' "$1"
}
# has_tag FILE HEADING REGEX: a tag line of that section starts with REGEX.
has_tag() {
	section "$1" "$2" | grep -qE "^       ($3)"
}

render "$MAN8" >"$TMP/8.txt"
render "$MAN5" >"$TMP/5.txt"

# ---- what the daemon has ----
"$TOPDOWND" --help >"$TMP/help" 2>&1
mapfile -t OPTS < <(grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z.-]*' "$TMP/help" |
	grep -oE -- '(^|[ ,])-{1,2}[a-zA-Z][a-z.-]*' | tr -d ' ,' | sort -u)
EXITS=$( (echo 0 1 64 78; sed -n 's/^Exit status: //p' "$TMP/help" | grep -oE '\b[0-9]+\b') |
	tr ' ' '\n' | grep . | sort -nu | tr '\n' ' ')
"$TOPDOWND" -c /dev/null --print-config >"$TMP/defaults" 2>&1
mapfile -t KEYS < <(awk '/^\[/ { s = $1; next } / =/ { v = $0; sub(/^[^=]*= ?/, "", v);
	print s " " $1 " " (v == "" ? "empty" : v) }' "$TMP/defaults")

constant=$ROOT/tests/scenarios/constant.json
# With basic authentication, so that its family is exported too
# (user scraper, password scrape; cost 4 keeps the test fast).
echo 'scraper:$2b$04$abcdefghijklmnopqrstuukWVPh09ZD8iOGHfzdmcO2EjLYdiyhOW' >"$TMP/htpasswd"
# Level 3: the families of the nodes below level 2 too; and the SMT
# split's, which level 3 leaves out unless asked.
printf '[collect]\nlevel = 3\nsmt = on\n[http]\nbasic_auth_file = %s\n' "$TMP/htpasswd" >"$TMP/auth.conf"
LIVE=()
if td_start "$SPR" "$constant" -i 100ms -c "$TMP/auth.conf"; then
	url=${TD_URL/http:\/\//http://scraper:scrape@}
	wait_intervals 2 "$url" || diag "no two intervals published within 20 s"
	# Per-CPU families too (topdown_cpu_info is only at cpu granularity).
	{ curl -sf "$url/metrics"; curl -sf "$url/metrics?granularity=cpu"; } >"$TMP/metrics"
	# The live page's footer links every endpoint of the server's route
	# table: those are the endpoints topdownd(8) must describe.
	curl -sf "$url/" >"$TMP/page.html"
	# The API's documents, for docs/http-api.md's example.
	curl -sf "$url/api/v1/topdown?window=60s" >"$TMP/doc-window.json"
	curl -sf "$url/api/v1/topdown?cpu=0-3&scope=cpu" >"$TMP/doc-cpus.json"
	cp "$TD_LOG" "$TMP/auth.log"
	td_stop
fi
# NVIDIA Olympus' family (perf's SMT metrics): a daemon on its fixture.
if FAKEPMU_TABLES=$ROOT/reference/perf-tables-7.2 td_start "$FIXTURES/nvidia-t410-16" \
	"$ROOT/tests/scenarios/parity-nvidia-t410.json" -i 100ms; then
	wait_intervals 2 || diag "the Olympus daemon published no two intervals within 20 s"
	curl -sf "$TD_URL/metrics" >>"$TMP/metrics"
	td_stop
fi
# The per-cgroup families: a daemon with [cgroups] enabled on the real
# kernel (the swclock fixture, BPF), as 36-cgroups.t runs it.
if [ "$(id -u)" -eq 0 ]; then
	printf '[collect]\ninterval = 100ms\n[cgroups]\nenabled = true\nlevel = 2\n' >"$TMP/cg.conf"
	if td_start_real "$TMP/cg.conf"; then
		wait_intervals 2 || diag "the per-cgroup daemon published no two intervals within 60 s"
		curl -sf "$TD_URL/metrics" >>"$TMP/metrics"
		td_stop
	fi
	CG_LIVE=1
fi
mapfile -t LIVE < <(awk '$1 == "#" && $2 == "TYPE" { print $3 }' "$TMP/metrics" 2>/dev/null | sort -u)
# Families documented: the tags of METRICS that name a topdown_ family.
mapfile -t DOC < <(section "$TMP/8.txt" METRICS | grep -oE '^       topdown_[a-z0-9_]+' |
	sed 's/^ *//')

SIGNALS="SIGHUP SIGTERM SIGINT"
ENVS="JOURNAL_STREAM NOTIFY_SOCKET WATCHDOG_USEC LISTEN_FDS"
ENDPOINTS=$(grep -o '<footer>.*</footer>' "$TMP/page.html" 2>/dev/null |
	grep -oE '>/[^<]*</a>' | sed 's/^>//; s/<\/a>$//' | tr '\n' ' ')
N_ENDPOINTS=$(wc -w <<<"$ENDPOINTS")

N_EXITS=$(wc -w <<<"$EXITS")
# 8 rendering, 1 defaults example, 1 live scrape, 3 signals, 4 variables,
# 1 + the endpoints, 4 structure and examples; one per option, key, family, status.
plan $((8 + ${#OPTS[@]} + ${#KEYS[@]} + 1 + 1 + ${#LIVE[@]} + ${#DOC[@]} + 3 + N_EXITS +
	4 + 1 + N_ENDPOINTS + 4 + 19 + 4))

# ---- 0. the words a user meets first are vendor-neutral: TopDown is
# counted on Intel, AMD and Arm cores (before 2026-11-28 --help, the man
# pages' NAME, the units and the package said "Intel TopDown") ----
hits=$(grep -l "Intel TopDown\|Intel's TopDown" "$TMP/help" "$MAN8" "$MAN5" "$ROOT/systemd/topdownd.service" \
	"$ROOT/systemd/topdownd.socket" "$ROOT/contrib/debian/control" "$ROOT/README.md" "$ROOT/config/topdownd.conf" |
	tr '\n' ' ')
is "$hits" "" "no \"Intel TopDown\" in --help, the man pages, the units, the package, the README, the shipped config"

# ---- 1. rendering: no warning anywhere ----
for page in "$MAN8" "$MAN5"; do
	name=${page##*/}
	MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$TMP/err"
	ok $? "$name: man --warnings renders it (exit 0)"
	is "$(cat "$TMP/err")" "" "$name: man --warnings prints nothing on stderr"
	groff -man -ww -z -t "$page" >"$TMP/err" 2>&1
	is "$(cat "$TMP/err")" "" "$name: groff -man -ww -z -t prints nothing"
	if command -v mandoc >/dev/null; then
		mandoc -T lint -W all "$page" >"$TMP/err" 2>&1
		is "$(cat "$TMP/err")" "" "$name: mandoc -T lint -W all prints nothing"
	else
		missing "$name: mandoc is not installed (make deps installs it)"
	fi
done

# ---- 2. every option of --help has its tag in OPTIONS ----
for opt in "${OPTS[@]}"; do
	case $opt in
	--*) re="(-[a-zA-Z], )?$opt( |,|\$)" ;;
	*) re="$opt(, | |\$)" ;;
	esac
	has_tag "$TMP/8.txt" OPTIONS "$re"
	ok $? "topdownd.8: OPTIONS describes $opt"
done

# ---- 3. every key of --print-config, under its section, with its default ----
awk '/^[A-Z][A-Z ]*$/ { on = ($0 == "KEYS"); next }
	on && /^   \[[a-z]+\]$/ { s = $1; key = ""; next }
	on && /^       [a-z_]+ = / { key = $1; next }
	on && key != "" && (i = index($0, "Default: ")) {
		split(substr($0, i + 9), w, " "); v = w[1]; sub(/[.,;]$/, "", v)
		print s " " key " " v; key = "" }' "$TMP/5.txt" >"$TMP/documented"
for k in "${KEYS[@]}"; do
	read -r sec key want <<<"$k"
	want=${want%% *} # a list's first item (the page gives them all)
	got=$(awk -v s="$sec" -v k="$key" '$1 == s && $2 == k { print $3 }' "$TMP/documented")
	is "$got" "$want" "topdownd.conf.5: $sec $key documented with Default: $want"
done
sed -n '/^EXAMPLES$/,/^[A-Z]/p' "$TMP/5.txt" | sed 's/^ *//' |
	grep -xF -f <(grep . "$TMP/defaults") | sort -u >"$TMP/shown"
is "$(wc -l <"$TMP/shown")" "$(grep -c . "$TMP/defaults" | tr -d ' ')" \
	"topdownd.conf.5: EXAMPLES shows every line of --print-config"

# ---- 4. metric families: live scrape <-> METRICS ----
ok $((${#LIVE[@]} == 0)) "the daemon under the fake PMU exported ${#LIVE[@]} families"
for fam in "${LIVE[@]}"; do
	has_tag "$TMP/8.txt" METRICS "$fam(\\{|\$)"
	ok $? "topdownd.8: METRICS documents $fam (exported by the daemon)"
done
for fam in "${DOC[@]}"; do
	if printf '%s\n' "${LIVE[@]}" | grep -qxF "$fam"; then
		ok 0 "topdownd.8: documented $fam is exported by the daemon"
	elif [[ $fam == topdown_cgroup* ]] && [ -z "${CG_LIVE:-}" ]; then
		missing "$fam: per-cgroup, exported by a daemon with [cgroups] on the real kernel: needs root (BPF)"
	else
		ok 1 "topdownd.8: documented $fam is exported by the daemon"
	fi
done

# ---- 5. signals, exit statuses, environment, endpoints ----
for sig in $SIGNALS; do
	has_tag "$TMP/8.txt" SIGNALS "(SIG[A-Z]+, )*$sig( |,|\$)"
	ok $? "topdownd.8: SIGNALS describes $sig"
done
for st in $EXITS; do
	has_tag "$TMP/8.txt" "EXIT STATUS" "$st( |\$)"
	ok $? "topdownd.8: EXIT STATUS describes $st"
done
for var in $ENVS; do
	has_tag "$TMP/8.txt" ENVIRONMENT "([A-Z_]+, )*$var( |,|\$)"
	ok $? "topdownd.8: ENVIRONMENT describes $var"
done
ok $(echo "$ENDPOINTS" | grep -q '/metrics'; echo $?) \
	"the live page's footer lists the server's endpoints: $ENDPOINTS"
for ep in $ENDPOINTS; do
	has_tag "$TMP/8.txt" "HTTP ENDPOINTS" "$ep( |\$)"
	ok $? "topdownd.8: HTTP ENDPOINTS describes $ep"
done

# ---- 6. structure and examples ----
missing=
for h in NAME SYNOPSIS DESCRIPTION OPTIONS "HTTP ENDPOINTS" METRICS PERMISSIONS SYSTEMD \
	SIGNALS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES NOTES BUGS "SEE ALSO"; do
	grep -qx "$h" "$TMP/8.txt" || missing="$missing [$h]"
done
is "$missing" "" "topdownd.8 has every section"
missing=
for ref in "topdownd.conf(5)" "systemd.exec(5)" "perf-stat(1)" "sysctl(8)" "htpasswd(1)"; do
	section "$TMP/8.txt" "SEE ALSO" | grep -qF "$ref" || missing="$missing $ref"
done
for f in /etc/topdownd/topdownd.conf topdownd.service topdownd.socket; do
	section "$TMP/8.txt" FILES | grep -qF "$f" || missing="$missing $f"
done
is "$missing" "" "topdownd.8: SEE ALSO and FILES name what they must"

# The --probe example is the real output on the Sapphire Rapids fixture.
FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$ROOT/tests/scenarios/constant.json LD_PRELOAD=$FAKEPMU \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --probe >"$TMP/probe" 2>&1
section "$TMP/8.txt" EXAMPLES | sed 's/^           //' |
	sed -n '/^\$ topdownd --probe$/,/^\$ /p' | sed '1d;$d' >"$TMP/probe.doc"
diff "$TMP/probe" "$TMP/probe.doc" >"$TMP/diff"
ok $? "topdownd.8: the --probe example is the daemon's output on spr-2s"
[ -s "$TMP/diff" ] && sed 's/^/#   /' "$TMP/diff"

missing=
for h in NAME SYNOPSIS DESCRIPTION SYNTAX KEYS RELOADING SECURITY DIAGNOSTICS EXAMPLES \
	FILES "SEE ALSO"; do
	grep -qx "$h" "$TMP/5.txt" || missing="$missing [$h]"
done
is "$missing" "" "topdownd.conf.5 has every section"

# ---- 6b. the guides and the README name only what exists: every
# [section] key, topdownd option, metric family and endpoint they mention
# is the daemon's (--print-config, --help, a scrape and the man page, the
# live page's footer), so a rename or a removal fails here rather than
# leaving a stale document ----
docs_check() { # WHAT: prints what the documents mention that is not known
	/usr/bin/python3 - "$1" "$ROOT" "$TMP/defaults" "$TMP/help" "$TMP/known-families" "$ENDPOINTS" <<'PY'
import glob, os, re, sys
what, root, defaults, helptext, fams, endpoints = sys.argv[1:]
files = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
text = {f: open(f).read() for f in files}
bad = set()
if what == "keys":
    known, section = set(), None
    for line in open(defaults):
        m = re.match(r"\[(\w+)\]", line)
        if m:
            section = m.group(1)
        elif " =" in line:
            known.add("[%s] %s" % (section, line.split(" =")[0].strip()))
    for f, t in text.items():
        for m in re.finditer(r"\[(collect|metrics|http|log|cgroups)\] ([a-z_]+)", t):
            if m.group(0) not in known:
                bad.add("%s: %s" % (os.path.basename(f), m.group(0)))
elif what == "options":
    known = set(re.findall(r"--[a-z][a-z.-]*", open(helptext).read())) | {"-c", "-l", "-i", "-V", "-h"}
    for f, t in text.items():
        for line in t.splitlines():
            for m in re.finditer(r"\btopdownd((?: +[^ `|;&>]+)*)", line):
                for opt in re.findall(r"(?<![\w-])--[a-z][a-z.-]*[a-z]", m.group(1)):
                    if opt not in known:
                        bad.add("%s: topdownd %s" % (os.path.basename(f), opt))
elif what == "families":
    known = set(open(fams).read().split())
    for f, t in text.items():
        # topdown_level{1,2}_ratio: the shorthand for both.
        for m in re.finditer(r"(?<![:\w])(topdown_[a-z0-9_]+)(?:\{(\d+(?:,\d+)+)\}([a-z0-9_]*))?(?![:\w.*\[])", t):
            names = [m.group(1) + d + m.group(3) for d in m.group(2).split(",")] if m.group(2) else [m.group(1)]
            for name in names:
                base = re.sub(r"_(bucket|sum|count|created)$", "", name)
                if name not in known and base not in known:
                    bad.add("%s: %s" % (os.path.basename(f), name))
elif what == "endpoints":
    known = set(endpoints.split())
    for f, t in text.items():
        for m in re.finditer(r"(?<![\w./-])(/api/v1/[a-z/]*[a-z]|/-/[a-z]+|/metrics)(?![\w/.-])", t):
            if m.group(1) not in known:
                bad.add("%s: %s" % (os.path.basename(f), m.group(1)))
print(" ".join(sorted(bad)))
PY
}
{ printf '%s\n' "${LIVE[@]}" "${DOC[@]}"; } | sort -u >"$TMP/known-families"
is "$(docs_check keys)" "" "README and docs/: every [section] key they name is one --print-config prints"
is "$(docs_check options)" "" "README and docs/: every topdownd option they show is one --help lists"
is "$(docs_check families)" "" "README and docs/: every metric family they name is exported or in topdownd(8) METRICS"
is "$(docs_check endpoints)" "" "README and docs/: every endpoint they name is one the live page's footer lists"

# ---- 7. claims checked against the code and a run ----
# The package list of docs/HACKING.md names every package make deps installs.
pkgs=$(make -s -C "$ROOT" -pn deps 2>/dev/null | awk -F' := ' '/^DEB_(BUILD|TEST|PKG|IMAGE|CROSS|ARM64) := / {print $2}' |
	tr ' ' '\n' | sed 's/:arm64$//' | grep . | sort -u)
req=$(sed -n '/^- Debian 12 packages, installed by `make deps`/,/^- [A-Z]/p' "$ROOT/docs/HACKING.md")
missing=
for p in $pkgs; do grep -qE "(^|[ (,:])$p([,;). ]|$)" <<<"$req" || missing="$missing $p"; done
is "$missing" "" "docs/HACKING.md: the Debian package paragraph names every package of make deps ($(wc -w <<<"$pkgs"))"
# Descriptors per CPU: what topdownd.8 states against what each fixture's
# plan opens (the fake's trace: the events live on CPU 1 at once).
stated=$(section "$TMP/8.txt" PERMISSIONS | tr '\n' ' ' | grep -oE 'up to [0-9]+ per CPU' | grep -oE '[0-9]+')
# The counter probes (pinned groups opened and closed at once, one CPU at
# a time: at most one per general-purpose counter and one fixed event,
# stated apart) are not counted.
per_cpu() { # per_cpu FIXTURE [CONF] [probes]: the most events open at once on CPU 1
	rm -f "$TMP/fd.trace"
	FAKEPMU_TRACE=$TMP/fd.trace FAKEPMU_SYSFS=$FIXTURES/$1 FAKEPMU_SCENARIO=$ROOT/tests/scenarios/constant.json \
		LD_PRELOAD=$FAKEPMU "$TOPDOWND" -c "${2:-/dev/null}" --sysfs-root "$FIXTURES/$1" --once -i 10ms >/dev/null 2>&1
	awk -v want="${3:-groups}" '$1 == "open" {
			split($2, a, "="); split($3, c, "="); split($4, g, "=")
			probe[a[2]] = g[2] == -1 ? $NF == "pinned=1" : probe[g[2]]
			if ((want == "probes") != probe[a[2]]) next
			cpu[a[2]] = c[2]; if (++n[c[2]] > m[c[2]]) m[c[2]] = n[c[2]]}
		$1 == "close" {split($2, a, "="); if (a[2] in cpu) n[cpu[a[2]]]--; delete cpu[a[2]]} END {print m[1] + 0}' "$TMP/fd.trace"
}
worst=0 seen=
for fx in adl-hybrid clx-2s emr-2s genoa-2s gnr-2s grr-12 icl-client icx-1s neoverse-n2-8 neoverse-v1-16 \
	neoverse-v2-64 skx-1s skx-2s spr-2s srf-2s turin-1s; do
	n=$(per_cpu "$fx")
	seen="$seen $fx=$n"
	[ "$n" -gt "$worst" ] && worst=$n
done
diag "descriptors per CPU:$seen"
is "$worst" "${stated:-none}" "topdownd.8: 'up to $stated per CPU' is the largest plan of every fixture ($worst)"
for kv in icx-1s=20 skx-2s=15 clx-2s=15 genoa-2s=12 turin-1s=12 spr-2s=14; do
	[[ " $seen " == *" $kv "* ]]
	ok $? "topdownd.8: ${kv%=*} opens ${kv#*=} descriptors per CPU, as it says"
done
probes=
for fx in icx-1s spr-2s genoa-2s neoverse-v2-64; do probes="$probes $fx=$(per_cpu "$fx" "" probes)"; done
diag "the counter probes' events open at once on a CPU:$probes"
[[ " $probes " == *" icx-1s=8 "* && " $probes " == *" genoa-2s=6 "* && " $probes " == *" neoverse-v2-64=7 "* ]]
ok $? "topdownd.8: a probe opens one event per general-purpose counter and one more, at most (8 on Ice Lake, 6 on AMD Zen 4, 7 on Neoverse V2: its 6 and the cycle counter)"
# Besides the SMT split's 4 (its own key).
for kv in icx-1s=7 spr-2s=6; do
	printf '[collect]\nlevel = 1\nsmt = off\n' >"$TMP/l1.conf"
	is "$(per_cpu "${kv%=*}" "$TMP/l1.conf")" "${kv#*=}" "topdownd.conf.5: level 1 on ${kv%=*} opens ${kv#*=} per CPU, as it says"
done
grep -q "^level 1 opens fewer events per CPU (6 instead of 10 on Sapphire Rapids, 7 instead of 20 on Ice Lake, besides the SMT split's 4 where it is counted)" \
	<(section "$TMP/5.txt" KEYS | tr '\n' ' ' | sed 's/  */ /g; s/^ //; s/\(Level 1 opens\)/\n\1/' | sed 's/^Level/level/')
ok $? "topdownd.conf.5 states those figures"
limit=$(awk -F= '$1 == "LimitNOFILE" {print $2}' "$ROOT/systemd/topdownd.service")
ok $([ "${limit:-0}" -ge $((8192 * worst + 4096 + 64)) ]; echo $?) \
	"the unit's LimitNOFILE=$limit covers 8192 CPUs x $worst descriptors and 4096 connections"
# ---- 7b. figures the README and the guides show are a run's ----
# The README's table is what --once prints on the 16-CPU Sapphire Rapids
# fixture with the constant scenario.
FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$constant LD_PRELOAD=$FAKEPMU \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --once 2>/dev/null | sed 's/ *$//' >"$TMP/once.txt"
awk '/^```$/ { f = !f; next } f' "$ROOT/README.md" | sed -n '/^# 16 CPUs monitored/,/bottleneck:/p' |
	sed 's/ *$//' >"$TMP/readme-once.txt"
is "$(diff "$TMP/readme-once.txt" "$TMP/once.txt" | head -5 | tr '\n' ' ')" "" \
	"README: the --once table is what --once prints (spr-2s, constant scenario)"
# docs/http-api.md's example and its version line name the daemon's API
# version, and every key of the example is one of a real document's.
api=$(jq -r .api_version "$TMP/doc-window.json")
ex=$(awk '/^The JSON document:/ { on = 1 } on && /^```$/ { n++; if (n == 2) exit; next } on && n == 1' \
	"$ROOT/docs/http-api.md")
is "$(grep -oE '"api_version":"[0-9.]+"' <<<"$ex") $(grep -oE '\(`api_version`, [0-9.]+;' "$ROOT/docs/http-api.md") $(grep -A1 '^\.B api_version$' "$ROOT/daemon/topdownd.8" | sed -n 's/^\.RB ( \([0-9.]*\) ;$/\1/p')" \
	"\"api_version\":\"$api\" (\`api_version\`, $api; $api" "docs/http-api.md (the example, the version line) and topdownd(8) say API $api, as the daemon does"
known=$(jq -r '[paths | map(select(type == "string")) | .[]] | unique | .[]' "$TMP/doc-window.json" "$TMP/doc-cpus.json" |
	sort -u)
unknown=$(grep -oE '"[a-z_0-9]+":' <<<"$ex" | tr -d '":' | sort -u | comm -23 - <(echo "$known"))
is "$unknown" "" "docs/http-api.md: every key of the example is in a real document (?window=, ?cpu=)"
# The history's size the guide states is the one the daemon logs (spr-2s:
# 2 packages, level 2, the default 15 minutes).
kib=$(sed -n 's/.*History (the live page, ?window=): 900 s, \([0-9]*\) KiB.*/\1/p' "$TMP/auth.log")
said=$(cat "$ROOT/docs/http-api.md" "$ROOT/README.md" | tr '\n' ' ' | grep -oE '[0-9]+ KiB on 2 packages at level 2' |
	grep -oE '^[0-9]+' | tr '\n' ' ')
is "$said" "$kib $kib " "docs/http-api.md and the README: the history of 2 packages at level 2 is what the daemon logs (${kib:-?} KiB)"

# Multiplexed counts are scaled to the enabled time, as the NOTES say:
# running half the time, the slots counter still grows at the true rate.
half=$(jq '.cpus.default.running = 0.5' "$ROOT/tests/scenarios/constant.json" | write_scenario half)
td_start "$SPR" "$half" -i 100ms -c /dev/null || exit 1
wait_intervals 2
a=$(curl -sf "$TD_URL/api/v1/topdown")
wait_intervals 5
b=$(curl -sf "$TD_URL/api/v1/topdown")
td_stop
# Slots per enabled CPU-second (both summed over the CPUs).
rate=$(jq -n --argjson a "$a" --argjson b "$b" \
	'($b.host.slots_total - $a.host.slots_total) / ($b.host.enabled_seconds_total - $a.host.enabled_seconds_total)')
diag "running ratio $(jq .host.running_ratio <<<"$b")"
want=$(jq '.cpus.default.slots_per_second' "$ROOT/tests/scenarios/constant.json")
near "$(awk -v r="$rate" -v w="$want" 'BEGIN {print r / w}')" 1 0.02 \
	"topdownd.8 NOTES: running half the time, the counts are scaled (slots per enabled second $rate, truth $want)"

done_testing
