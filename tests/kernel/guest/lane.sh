# SPDX-License-Identifier: MIT
# The kernel lane, inside the arm64 guest (busybox sh): puts perfprobe and
# the daemon in front of the real kernel's PMU driver and prints what they
# answer, each piece between "@@ file NAME" and "@@ end NAME" lines.  It
# judges nothing: tests/kernel/lane.t, on the host, checks every piece.
# Waits are on events (a log line, a metric, a file), each bounded.
set -u
PMU=armv8_pmuv3
S=/sys/bus/event_source/devices/$PMU
T=/tmp/lane
R=/tmp/sys
PORT=10412
mkdir -p $T

emit() { # NAME FILE (the end marker on a line of its own, whatever FILE ends with)
	echo "@@ file $1"
	cat "$2"
	[ -z "$(tail -c 1 "$2" 2>/dev/null)" ] || echo
	echo "@@ end $1"
}
# waitfor SECONDS COMMAND...: polls every 50 ms; 1 on timeout, and says so.
waitfor() {
	_w=$(($1 * 20))
	shift
	while [ $_w -gt 0 ]; do
		"$@" && return 0
		usleep 50000
		_w=$((_w - 1))
	done
	echo "@@ timeout $*"
	return 1
}
# (busybox wget -T crashes in this build: timeout bounds it instead)
get() { timeout 10 wget -q -O - "http://127.0.0.1:$PORT$1"; }
metric() { get /metrics | awk -v n="$1" '$1 == n { print $2 }'; }
collections_ge() {
	c=$(metric topdown_collections_total)
	[ -n "$c" ] && [ "${c%.*}" -ge "$1" ]
}
log_has() { grep -q "$1" "$2" 2>/dev/null; }
log_count_ge() { [ "$(grep -c "$1" "$2")" -ge "$3" ]; }

# The mirror: every /sys entry is the live one (a symlink) but the core
# PMU's caps/slots and events it lacks and each CPU's MIDR, which take a
# Neoverse V2's (/lane/identity), so that the daemon takes its Neoverse
# path while the real kernel does the counting.
mirror() {
	rm -rf $R
	mkdir -p $R
	for f in /sys/*; do [ "${f##*/}" = bus ] || [ "${f##*/}" = devices ] || ln -s "$f" "$R/${f##*/}"; done
	mkdir -p $R/bus/event_source/devices $R/devices/system/cpu
	for f in /sys/bus/*; do [ "${f##*/}" = event_source ] || ln -s "$f" "$R/bus/${f##*/}"; done
	for f in /sys/devices/*; do [ "${f##*/}" = system ] || ln -s "$f" "$R/devices/${f##*/}"; done
	for f in /sys/devices/system/*; do [ "${f##*/}" = cpu ] || ln -s "$f" "$R/devices/system/${f##*/}"; done
	for f in /sys/bus/event_source/devices/*; do
		[ "${f##*/}" = $PMU ] || ln -s "$(readlink -f "$f")" "$R/bus/event_source/devices/${f##*/}"
	done
	P=$R/bus/event_source/devices/$PMU
	mkdir -p $P/events $P/caps
	for f in $S/*; do
		case ${f##*/} in events | caps) ;; *) ln -s "$(readlink -f "$f")" "$P/${f##*/}" ;; esac
	done
	for f in $S/events/* $S/caps/*; do ln -s "$(readlink -f "$f")" "$P/${f#$S/}"; done
	for f in /lane/identity/events/*; do [ -e "$P/events/${f##*/}" ] || cp "$f" "$P/events/"; done
	rm -f $P/caps/slots
	cp /lane/identity/slots $P/caps/slots
	for f in /sys/devices/system/cpu/*; do
		n=${f##*/}
		case $n in
		cpu[0-9]*)
			mkdir -p $R/devices/system/cpu/$n/regs/identification
			for g in "$f"/*; do [ "${g##*/}" = regs ] || ln -s "$g" "$R/devices/system/cpu/$n/${g##*/}"; done
			cp /lane/identity/midr_el1 $R/devices/system/cpu/$n/regs/identification/midr_el1
			;;
		*) ln -s "$f" "$R/devices/system/cpu/$n" ;;
		esac
	done
}

DPID=
start() { # CONF LOG [ARGS...]: the daemon on the mirror, until it serves (LOG appended to)
	conf=$1 log=$2
	shift 2
	topdownd -c "$conf" --sysfs-root $R -l 127.0.0.1:$PORT "$@" 2>>"$log" &
	DPID=$!
	waitfor 30 get /-/ready >/dev/null
}
stop() { # LOG: SIGTERM; the exit status goes to LOG
	kill -TERM $DPID
	wait $DPID
	echo "exit $?" >>"$1"
	DPID=
}
hold() { # K CPUS...: perfprobe holds K counters on each CPU until killed
	k=$1
	shift
	perfprobe hold $PMU 0x08 "$k" 600 "$@" >$T/hold.out 2>&1 &
	HPID=$!
	waitfor 20 log_has holding $T/hold.out
}
unhold() {
	kill $HPID
	wait $HPID 2>/dev/null
}

cat >$T/base.conf <<EOF
[collect]
interval = 250ms
[log]
level = debug
EOF

# ---- the kernel and its PMU, as the guest sees them
{
	echo "kernel $(uname -r)"
	echo "pmu $PMU type $(cat $S/type) cpus $(cat $S/cpus)"
	echo "events $(ls $S/events | tr '\n' ' ')"
	echo "caps_slots $(cat $S/caps/slots 2>/dev/null || echo none)"
	echo "midr $(cat /sys/devices/system/cpu/cpu0/regs/identification/midr_el1)"
	echo "nmi_watchdog $(cat /proc/sys/kernel/nmi_watchdog)"
	echo "online $(cat /sys/devices/system/cpu/online)"
	echo "btf $(test -e /sys/kernel/btf/vmlinux && echo yes || echo no)"
} >$T/kernel
emit kernel $T/kernel

# ---- perfprobe's questions (the fake is asked the same on the host)
{
	perfprobe groups $PMU 0x08 0 20 | sed 's/^/0x08 /'
	perfprobe groups $PMU 0x11 0 20 | sed 's/^/0x11 /'
	perfprobe pair $PMU 0x08 3 4 4 400 | sed 's/^/4+4 /'
	perfprobe pair $PMU 0x08 3 3 3 400 | sed 's/^/3+3 /'
	perfprobe hotplug $PMU 0x08 2 3
	perfprobe run $PMU 0x08 0 7 300 | sed 's/^/over7 /'
	if hold 2 0; then
		perfprobe run $PMU 0x08 0 4 300 | sed 's/^/held2 /'
		perfprobe run $PMU 0x08 0 5 300 | sed 's/^/held2 /'
		unhold
	fi
} >$T/probe 2>&1
emit probe $T/probe
# What the PMU counts: cycles at QEMU's 1 GHz of virtual time, alone (no
# rotation: the kernel stops the whole PMU while it rotates events, and on
# a loaded host QEMU's virtual time runs on through those stops, so a
# rotating run's cycles lag its running time by the load, 5 % seen); then
# the events the TopDown formulas need that count nothing at all (QEMU
# implements few events).
taskset -c 1 sh -c 'while :; do :; done' &
SPIN=$!
perfprobe count $PMU 1 500 0x11 >$T/cycles 2>&1
perfprobe count $PMU 1 500 0x11 0x08 0x3a 0x3b 0x3d 0x3e 0x3f 0x10 >$T/count 2>&1
kill $SPIN
wait $SPIN 2>/dev/null
emit cycles $T/cycles
emit count $T/count

mirror
ls -l $R/bus/event_source/devices/$PMU/ $R/bus/event_source/devices/$PMU/events >$T/mirror 2>&1
emit mirror $T/mirror

# ---- --probe: on the live /sys (QEMU's MIDR: no TopDown) and the mirror
topdownd -c /dev/null --probe >$T/probe-live 2>&1
echo "exit $?" >>$T/probe-live
emit probe-live $T/probe-live
topdownd -c /dev/null --sysfs-root $R --probe >$T/probe-mirror 2>&1
echo "exit $?" >>$T/probe-mirror
emit probe-mirror $T/probe-mirror

# ---- the daemon: groups run; events that count nothing; HTTP; reload; SIGTERM
if start $T/base.conf $T/run.log; then
	waitfor 30 log_has "counts nothing while cycles count" $T/run.log
	waitfor 30 collections_ge 8
	get '/api/v1/topdown?scope=cpu' >$T/run.json
	get /metrics >$T/run.metrics
	for u in /metrics /api/v1/topdown / /-/healthy /-/ready /nonexistent; do
		echo "$u $(timeout 10 wget -S -q -O /dev/null "http://127.0.0.1:$PORT$u" 2>&1 | grep -o 'HTTP/1.[01] [0-9]*' | head -1)"
	done >$T/run.http
	kill -HUP $DPID
	waitfor 30 log_has "Configuration reloaded" $T/run.log
	n=$(metric topdown_collections_total)
	waitfor 30 collections_ge $((${n%.*} + 2))
	metric topdown_config_last_reload_successful >$T/run.reload
	stop $T/run.log
	emit run.json $T/run.json
	emit run.metrics $T/run.metrics
	emit run.http $T/run.http
	emit run.reload $T/run.reload
fi
emit run.log $T/run.log

# ---- another user holds 2 counters of every CPU before the daemon starts
if hold 2 0 1 2 3; then
	start $T/base.conf $T/held.log &&
		waitfor 30 log_count_ge "CPU 3 counts" $T/held.log 8 &&
		get '/api/v1/topdown?scope=cpu' >$T/held.json
	stop $T/held.log
	unhold
	emit held.json $T/held.json
fi
emit held.log $T/held.log

# ---- a pinned holder of K = 0..6 of the 6 event counters of every CPU
# arrives while the daemon runs, then leaves.  Marks in the daemon's log
# (it appends) say when; --probe runs while it holds.
for K in 0 1 2 3 4 5 6; do
	L=$T/k$K.log
	rm -f $L
	if start $T/base.conf $L && waitfor 30 collections_ge 4; then
		echo "@@ mark arrive $K" >>$L
		[ $K -eq 0 ] || hold $K 0 1 2 3
		topdownd -c /dev/null --sysfs-root $R --probe >$T/k$K.probe 2>&1
		# Stepped down (K > 0): its groups of what is left ran (or
		# it holds none: K = 6) for 8 reads of CPU 3.
		[ $K -eq 0 ] || waitfor 30 log_has "another user holds $K of 6" $L
		n=$(grep -c "CPU 3 counts" $L)
		[ $K -eq 6 ] || waitfor 30 log_count_ge "CPU 3 counts" $L $((n + 8))
		get '/api/v1/topdown?scope=cpu' >$T/k$K.json
		echo "@@ mark leave $K" >>$L
		[ $K -eq 0 ] || unhold
		[ $K -eq 0 ] || waitfor 30 log_has "every counter is free again" $L
		n=$(grep -c "CPU 3 counts" $L)
		waitfor 30 log_count_ge "CPU 3 counts" $L $((n + 4))
		get '/api/v1/topdown?scope=cpu' >$T/k$K.after.json
		stop $L
		emit k$K.probe $T/k$K.probe
		emit k$K.json $T/k$K.json
		emit k$K.after.json $T/k$K.after.json
	fi
	emit k$K.log $L
done

# ---- perf stat and perf record beside the daemon, which keeps its
# counters (pmu_sharing = share) or gives them back (yield, the default):
# perf's own figures of its running share, and the daemon's taking them
# back once perf is gone.  perf record samples the instructions of a
# spinner on CPU 1 (QEMU's icount: one per ns), its share from how many.
for pol in share yield; do
	printf '[collect]\ninterval = 250ms\npmu_sharing = %s\n[log]\nlevel = debug\n' $pol >$T/$pol.conf
	L=$T/perf-$pol.log
	rm -f $L
	if start $T/$pol.conf $L && waitfor 30 collections_ge 4; then
		echo "@@ mark perf stat" >>$L
		perf stat -a -x, -I 250 -e r08,r08,r08,r08,r08,r08 -- sleep 2.5 2>$T/perf-$pol.stat
		echo "@@ mark perf stat done" >>$L
		if [ $pol = yield ]; then
			waitfor 30 log_has "takes its general-purpose counters back" $L
			n=$(grep -c "CPU 3 counts" $L)
			waitfor 30 log_count_ge "CPU 3 counts" $L $((n + 4))
		fi
		taskset -c 1 sh -c 'while :; do :; done' &
		SPIN=$!
		echo "@@ mark perf record $(cut -d' ' -f1 /proc/uptime)" >>$L
		perf record -q -C 1 -e r08 -c 1000000 -o $T/rec.data -- sleep 2.5 2>$T/perf-$pol.rec.err
		echo "@@ mark perf record done $(cut -d' ' -f1 /proc/uptime)" >>$L
		kill $SPIN
		wait $SPIN 2>/dev/null
		perf script -i $T/rec.data -F time 2>/dev/null | tr -d ' :' >$T/perf-$pol.rec
		get '/api/v1/topdown?scope=cpu' >$T/perf-$pol.json
		stop $L
		emit perf-$pol.stat $T/perf-$pol.stat
		emit perf-$pol.rec $T/perf-$pol.rec
		emit perf-$pol.rec.err $T/perf-$pol.rec.err
	fi
	emit perf-$pol.log $L
done

# ---- CPU hotplug under the daemon
offline_is() { [ "$(get /metrics | awk '$1 == "topdown_cpus{state=\"offline\"}" { print $2 }')" = "$1" ]; }
if start $T/base.conf $T/hotplug.log && waitfor 30 collections_ge 4; then
	echo 0 >/sys/devices/system/cpu/cpu2/online
	waitfor 30 offline_is 1 && get '/api/v1/topdown?scope=cpu' >$T/hotplug-off.json
	n=$(grep -c "CPU 2 counts" $T/hotplug.log)
	echo "CPU 2 counts lines while offline: $n" >$T/hotplug.marks
	echo 1 >/sys/devices/system/cpu/cpu2/online
	waitfor 30 offline_is 0 && waitfor 30 log_count_ge "CPU 2 counts" $T/hotplug.log $((n + 4)) &&
		get '/api/v1/topdown?scope=cpu' >$T/hotplug-on.json
	stop $T/hotplug.log
	emit hotplug-off.json $T/hotplug-off.json
	emit hotplug-on.json $T/hotplug-on.json
	emit hotplug.marks $T/hotplug.marks
fi
emit hotplug.log $T/hotplug.log

# ---- CPU hotplug under --watch
# (the PMU counts no work: each interval says so, with the CPUs by state)
topdownd -c /dev/null --sysfs-root $R --watch --count 32 -i 250ms >$T/watch 2>$T/watch.err &
W=$!
if waitfor 30 log_count_ge '^# no figures this interval; CPUs: 4 silenced$' $T/watch 2; then
	echo 0 >/sys/devices/system/cpu/cpu3/online
	waitfor 30 log_count_ge '^# no figures this interval; CPUs: 1 offline, 3 silenced$' $T/watch 2
	echo 1 >/sys/devices/system/cpu/cpu3/online
fi
wait $W
echo "exit $?" >>$T/watch.err
emit watch $T/watch
emit watch.err $T/watch.err

# ---- per-cgroup attribution: a spinner pinned to CPU 1 in a cgroup whose
# cpu.max gives it 30 % of a CPU; the lane reads its cpu.stat when the
# daemon has logged the first and the last of the intervals compared.
CG=/sys/fs/cgroup/lane
echo +cpu >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p $CG/spin
echo +cpu >$CG/cgroup.subtree_control
echo "30000 100000" >$CG/spin/cpu.max
cat >$T/cg.conf <<EOF
[collect]
interval = 250ms
[log]
level = debug
[cgroups]
enabled = true
track = lane/*
budget = 100%
EOF
sh -c 'echo $$ >/sys/fs/cgroup/lane/spin/cgroup.procs; exec taskset -c 1 sh -c "while :; do :; done"' &
SPIN=$!
usage() { awk '$1 == "usage_usec" { print $2 }' $CG/spin/cpu.stat; }
if start $T/cg.conf $T/cg.log && waitfor 30 log_has "cgroup /lane/spin counts" $T/cg.log; then
	n=$(grep -c "CPU 1 counts" $T/cg.log)
	waitfor 30 log_count_ge "CPU 1 counts" $T/cg.log $((n + 1))
	echo "begin $(grep -c 'CPU 1 counts' $T/cg.log) $(usage) $(cut -d' ' -f1 /proc/uptime)" >$T/cg.marks
	waitfor 60 log_count_ge "CPU 1 counts" $T/cg.log $((n + 21))
	echo "end $(grep -c 'CPU 1 counts' $T/cg.log) $(usage) $(cut -d' ' -f1 /proc/uptime)" >>$T/cg.marks
	get '/api/v1/topdown?scope=cgroup' >$T/cg.json
	stop $T/cg.log
	emit cg.marks $T/cg.marks
	emit cg.json $T/cg.json
fi
kill $SPIN
wait $SPIN 2>/dev/null
emit cg.log $T/cg.log

# ---- --compare-perf: the daemon's command beside Debian's perf on the real
# kernel, the daemon on the mirror (a Neoverse V2): (live) perf on the live
# /sys, QEMU's MIDR, whose metrics perf's tables do not have; (v2) perf
# told the mirror's MIDR (PERF_CPUID), counting Neoverse V2's TopdownL1 on
# QEMU's PMU, which implements few of its events.  Whatever QEMU counts:
# the command's plumbing (perf started, its -j lines read, both reaped).
compare() { # NAME [ENV...]
	n=$1
	shift
	env "$@" timeout 150 topdownd -c /dev/null --sysfs-root $R -i 250ms --compare-perf --count 2 --json \
		>$T/cmp-$n.json 2>$T/cmp-$n.err
	echo "exit $?" >>$T/cmp-$n.err
	ps -o pid,args | grep '[p]erf stat' >$T/cmp-$n.left
	emit cmp-$n.json $T/cmp-$n.json
	emit cmp-$n.err $T/cmp-$n.err
	emit cmp-$n.left $T/cmp-$n.left
}
compare live
compare v2 PERF_CPUID="$(cat /lane/identity/midr_el1)"
echo "@@ done"
