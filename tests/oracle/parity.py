#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""perf is the oracle: topdownd against Linux perf on one fixture and
scenario, under the fake PMU.

Both run the same scenario, each in its own process with its own fake
PMU (phases start when each process loads the library).  perf runs in a
private mount namespace where the fixture stands in for sysfs
(tests/oracle/sysns), with PERF_CPUID set to the fixture's model.

  metrics mode (a model the installed perf knows):
      perf stat -j -a -I MS -M TopdownL1,TopdownL2, three times at once:
      per CPU (-A), per socket (--per-socket) and for the host.
  events mode (a model perf does not know, or one whose -M perf cannot
      run): perf stat -j -a -A -I MS -e '{slots,topdown-*,...}' counts
      the events the metrics read; the metric expressions (the installed
      perf's, from `perf list`, or perf's table file) are evaluated on
      those counts by tests/oracle/perfexpr.py, per CPU and summed per
      socket and host as perf aggregates.  Where the fixture has the msr
      PMU, msr/tsc/ is counted too and duration_time is the interval the
      paced counts span, in seconds as perf's expressions read it; nodes
      reading other msr or tool events are not compared.

In metrics mode the host is compared with perf's --per-socket rule (each
CPU's count scaled by its own times, the sockets' counts summed, perf's
expressions on the sum: topdownd's rule too); perf -a's own figure scales
counts summed over the CPUs by times summed over them (util/stat.c,
AGGR_GLOBAL): the two rules coincide when every CPU is multiplexed
alike (then perf -a must agree within the tolerance), and differ when
CPUs are multiplexed unevenly (--uneven-multiplexing: the "global_scaling"
departure, its size printed).

Both tools' fake PMUs run on a read-paced clock (FAKEPMU_CLOCK_STEP,
SteppedPerf): the fake time moves only at reads, a counter's k-th read
seeing k intervals, so every read of an interval sees the same instant
and interval k counts exactly [k, k + 1] intervals of the scenario,
however late a loaded machine makes a tool's reads: nothing here depends
on the machine's speed.  topdownd's intervals are placed back from the
clock's last time (its baseline read before the first is its own affair).

topdownd runs `--watch --json --count N` (or, with --interface, its
/api/v1/topdown or /metrics, on the real clock: constant scenarios only)
on the same fixture and scenario.  Each tool's median over the intervals of a phase is compared, for every
tma_* value perf gives, per CPU, socket and host, raw: nothing of topdownd's arithmetic is
applied to perf's values.  topdownd's two documented departures are
asserted on their own, each with its count and size: a value perf prints
below 0 is 0 in topdownd ("negative"); a value perf has none for (a
division by 0) while it has its parent is 0 ("no_value"); and
topdownd's topdown_departures_total (the JSON's pmus[].departures) has
counted them.

usage: parity.py --fixture DIR --scenario FILE --cpuid GenuineIntel-6-8F-4
                 [--events-from perf|TABLE.json] [--unit cpu_core] [--pmu cpu]
                 [--interval-ms 500] [--intervals 4] [--skip-near SECONDS,...]
                 [--tol 0.0005] [--cpus LIST] --topdownd BIN --fakepmu SO --sysns SCRIPT
Prints one line per entity kind with the largest difference, and exits 1
when any is above the tolerance.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfexpr import ExprError, Metrics, Tables, canonical_event  # noqa: E402

L1 = ["retiring", "bad_speculation", "frontend_bound", "backend_bound"]
L2 = {"heavy_operations": "retiring", "light_operations": "retiring",
      "branch_mispredicts": "bad_speculation", "machine_clears": "bad_speculation",
      "fetch_latency": "frontend_bound", "fetch_bandwidth": "frontend_bound",
      "memory_bound": "backend_bound", "core_bound": "backend_bound",
      # E-cores: Gracemont's base/ms_uops, Crestmont's ifetch_* and
      # resource_bound.
      "base": "retiring", "ms_uops": "retiring",
      "ifetch_latency": "frontend_bound", "ifetch_bandwidth": "frontend_bound",
      "resource_bound": "backend_bound",
      # AMD Zen 4 and later (perf's PipelineL2 names).
      "retiring_fastpath": "retiring", "retiring_microcode": "retiring",
      "bad_speculation_mispredicts": "bad_speculation",
      "bad_speculation_pipeline_restarts": "bad_speculation",
      "frontend_bound_latency": "frontend_bound", "frontend_bound_bandwidth": "frontend_bound",
      "backend_bound_memory": "backend_bound", "backend_bound_cpu": "backend_bound"}
# AMD's level 1 has a fifth category.
L1_ALL = L1 + ["smt_contention"]
# Zen 5's tables name the level-2 metrics differently; topdownd exports
# them under Zen 4's names (daemon/hw/uarch_amd.c).
ZEN5_NAMES = {"frontend_bound_latency": "frontend_bound_by_latency",
              "frontend_bound_bandwidth": "frontend_bound_by_bandwidth",
              "bad_speculation_mispredicts": "bad_speculation_from_mispredicts",
              "bad_speculation_pipeline_restarts": "bad_speculation_from_pipeline_restarts",
              "backend_bound_memory": "backend_bound_by_memory",
              "backend_bound_cpu": "backend_bound_by_cpu",
              "retiring_fastpath": "retiring_from_fastpath",
              "retiring_microcode": "retiring_from_microcode"}


# AmpereOne's and AmpereOne M's TopdownL1 and L2 (perf 7.2's
# ampere/ampereone(x)) name their metrics their own way; topdownd exports
# each under the category of the same meaning (daemon/hw/uarch_arm.c,
# topdownd(8)).  This is the test's statement of which is which.
AMPERE_NAMES = {"retiring": "retired_fraction",
                "bad_speculation": "slots_lost_misspeculation_fraction",
                "branch_mispredicts": "branch_mispredict", "machine_clears": "other_miss_pred",
                "fetch_latency": "frontend_latency", "fetch_bandwidth": "frontend_bandwidth",
                "memory_bound": "backend_memory", "core_bound": "backend_core"}


def perf_name(metrics, cat):
    """The name of perf's metric for topdownd's category @cat in
    @metrics: tma_* on Intel, perf's own PipelineL1/L2 names on AMD, and
    AmpereOne's."""
    for name in ("tma_" + cat, cat, ZEN5_NAMES.get(cat), AMPERE_NAMES.get(cat)):
        if name and name in metrics.expr:
            return name
    return None


def cpulist(text):
    out = []
    for part in filter(None, text.strip().split(",")):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def topology(fixture):
    base = os.path.join(fixture, "devices/system/cpu")
    topo = {}
    with open(os.path.join(base, "possible")) as f:
        cpus = cpulist(f.read())
    for cpu in cpus:
        p = os.path.join(base, "cpu%d/topology/physical_package_id" % cpu)
        if os.path.exists(p):
            with open(p) as f:
                topo[cpu] = int(f.read())
    return topo


def cores_of(fixture):
    """{cpu: (package, core_id)} from the fixture's topology."""
    base = os.path.join(fixture, "devices/system/cpu")
    out = {}
    for cpu, pkg in topology(fixture).items():
        p = os.path.join(base, "cpu%d/topology/core_id" % cpu)
        if os.path.exists(p):
            with open(p) as f:
                out[cpu] = (pkg, int(f.read()))
    return out


def fake_env(a, trace, scenario=None):
    env = dict(os.environ, FAKEPMU_SYSFS=a.fixture, FAKEPMU_SCENARIO=scenario or a.scenario,
               LD_PRELOAD=a.fakepmu, PERF_CPUID=a.cpuid, FAKEPMU_TRACE=trace)
    env.pop("FAKEPMU_CLOCK_FILE", None)
    env.pop("FAKEPMU_CLOCK_STEP", None)
    if a.tables_fallback:
        env["FAKEPMU_TABLES_FALLBACK"] = a.tables_fallback
    if a.fake_tables:
        env["FAKEPMU_TABLES"] = a.fake_tables
    if os.path.exists(trace):
        os.unlink(trace)
    return env


class SteppedPerf:
    """perf under its fake PMU on a read-paced clock (FAKEPMU_CLOCK_STEP):
    the fake time stays at 0 from the enable and each counter's k-th read
    sees k intervals, so perf's interval k (from 0) counts exactly
    [k, k + 1] intervals of the scenario (paced_windows) however late a
    loaded machine makes its reads, and nothing of this process (a thread
    that must keep up with perf, a clock file on a busy disk) paces it.
    perf's reads at an interval's end all see the same instant, so its
    figures are its arithmetic on the scenario's counts, not its timing."""

    def __init__(self, a, cmd, trace):
        import threading
        self.chunks = []
        env = fake_env(a, trace)
        env["FAKEPMU_CLOCK_STEP"] = "%.6f" % (a.interval_ms / 1000.0)
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        for line in self.proc.stdout:
            self.chunks.append(line)

    def wait(self):
        """(exit status, everything perf printed)"""
        self.proc.wait(timeout=120)
        self.reader.join()
        return self.proc.returncode, "".join(self.chunks)


def enable_time(trace):
    """When the tool enabled its counters, in scenario seconds (the fake
    PMU's FAKEPMU_TRACE)."""
    with open(trace) as f:
        for line in f:
            if line.startswith("enable "):
                return int(line.split()[1]) / 1e9
    raise SystemExit("%s: no enable recorded" % trace)


def clock_end(trace):
    """The read-paced clock's last time (seconds), which the fake PMU
    traces at exit."""
    with open(trace) as f:
        for line in f:
            if line.startswith("clock "):
                return int(line.split()[1]) / 1e9
    raise SystemExit("%s: no clock recorded" % trace)


def enable_wall(trace):
    """The wall clock (seconds) when the tool enabled its counters."""
    with open(trace) as f:
        for line in f:
            if line.startswith("enable "):
                return int(line.split()[2]) / 1e9
    raise SystemExit("%s: no enable recorded" % trace)


def paced_windows(a, ends):
    """[(t0, t1)] in scenario seconds of a SteppedPerf's intervals, which
    perf printed at @ends (seconds since its start): interval k counted
    [k, k + 1] steps of the read-paced clock.  perf stat -I prints a last,
    shorter interval when the command it waits for exits: that one is
    given no length, so that it is not compared (with rotating groups
    some of them barely ran in it in wall time; perf once printed -28 %
    bad speculation for a 0.1 s tail on a clock that followed the wall)."""
    step, out, prev = a.interval_ms / 1000.0, [], 0.0
    for k, e in enumerate(ends):
        t0 = k * step
        out.append((t0, t0 if e - prev < 0.9 * step else t0 + step))
        prev = e
    return out


def perf_cmd(a, args):
    seconds = a.interval_ms * (a.intervals + 1) / 1000.0 + 0.2
    return [a.sysns, a.fixture, "perf", "stat", "-j", "-a", "-I", str(a.interval_ms)] + args + \
        ["--", "sleep", "%.3f" % seconds]


RECORD = re.compile(r'\{"interval" : ([0-9.]+), (.*?)(?=\{"interval"|$)', re.S)
FIELD = re.compile(r'"([a-z-]+)" : ("(?:[^"\\]|\\.)*"|[-0-9.e+]+|nan|-nan|inf)')


def perf_records(text):
    """perf 6.1's -j output, one dict per record.  Some lines hold a
    record and a second metric glued on (a perf 6.1 quirk): every
    metric-value/metric-unit pair becomes its own record."""
    out = []
    for line in text.splitlines():
        if not line.startswith('{"interval"'):
            continue
        base = {}
        pairs = FIELD.findall(line)
        metric = None
        for key, val in pairs:
            val = val.strip('"')
            if key == "metric-value":
                metric = val
                continue
            if key == "metric-unit":
                rec = dict(base)
                rec["metric-value"], rec["metric-unit"] = metric, val
                out.append(rec)
                continue
            base[key] = val
        if "counter-value" in base:
            out.append(base)
    return out


def entity_of(aggr, r):
    if aggr == "cpu":
        return ("cpu", int(r["cpu"]))
    if aggr == "socket":
        return ("package", int(r["socket"].lstrip("S")))
    return ("host", 0)


def perf_metrics_mode(a):
    """[(window, {entity: {category: fraction}})] from perf's -M output,
    per CPU, per socket and for the host (three perf processes at once,
    each with its own fake PMU)."""
    procs = {}
    a.literals = fixture_literals(a)
    for aggr, args in (("cpu", ["-A"]), ("socket", ["--per-socket"]), ("host", [])):
        trace = os.path.join(a.tmp, "perf-%s.trace" % aggr)
        procs[aggr] = (SteppedPerf(a, perf_cmd(a, args + ["-M", a.metric_groups]), trace), trace)
    out = {}
    for aggr, (perf, trace) in procs.items():
        rc, text = perf.wait()
        if rc != 0:
            raise SystemExit("perf (%s) failed, exit %d:\n%s" % (aggr, rc, text[-2000:]))
        recs = perf_records(text)
        ends = sorted({float(r["interval"]) for r in recs})
        wins = paced_windows(a, ends)
        idx = {t: i for i, t in enumerate(ends)}
        vals = [dict() for _ in ends]
        halted = set()
        sums = [dict() for _ in ends]
        for r in recs:
            k = idx[float(r["interval"])]
            ent = entity_of(aggr, r)
            cv = r.get("counter-value")
            if aggr == "socket" and cv is not None and "metric-unit" not in r:
                try:
                    # An event several metrics read is counted (and
                    # printed) once per group: one of them per socket.
                    # perf prints a modified event as cpu/NAME,cmask=1/.
                    ev = strip_pmu(r.get("event", ""))
                    sums[k][(ent, canonical_event(ev))] = float(cv)
                except ValueError:
                    pass
            if r.get("event") == "TOPDOWN.SLOTS" and cv is not None:
                try:
                    if float(cv) == 0:
                        halted.add((k, ent))
                except ValueError:      # <not counted>: no figure this interval
                    halted.add((k, ent))
            unit = r.get("metric-unit", "")
            m = re.match(r"^%\s+tma_(\w+)$", unit)
            if not m or r.get("metric-value") in (None, "nan", "-nan"):
                continue
            vals[k].setdefault(ent, {})[m.group(1)] = float(r["metric-value"]) / 100.0
        for k, ent in halted:
            vals[k].pop(ent, None)
            vals[k].setdefault(ent, None)
        out[aggr] = list(zip(wins, vals))
        if aggr == "socket":
            # perf -a scales each event's count summed over the CPUs by
            # its enabled time summed over them (tools/perf/util/stat.c,
            # process_counter_values, AGGR_GLOBAL), a rule of its own:
            # --per-socket and -A scale each CPU's count by its own time,
            # as topdownd does.  The host by perf's --per-socket rule:
            # the sockets' counts summed, perf's expressions on the sum.
            host = []
            for sm in sums:
                total = {}
                for (_, ev), v in sm.items():
                    total[ev] = total.get(ev, 0.0) + v
                host.append(host_by_sum(a, total))
            out["host_sum"] = list(zip(wins, host))
    return out


def strip_pmu(event, pmus=("cpu", "cpu_core", "cpu_atom")):
    """perf prints a modified or sysfs event as PMU/NAME/: the NAME."""
    m = re.match(r"^(?:%s)/(.*)/$" % "|".join(map(re.escape, pmus)), event)
    return m.group(1) if m else event


def fractions(metrics, names, cats, summed, literals, uncounted_ok=False):
    """{category: fraction} by perf's expressions on @summed counts; a
    category whose expression divides by 0 has none, as perf prints none.
    One that reads an event the run did not count raises ExprError unless
    @uncounted_ok (perf -M's groups need not count every metric's)."""
    out = {}
    for c in cats:
        try:
            out[c] = metrics.fraction(names[c], metrics.evaluate(names[c], summed, literals))
        except ZeroDivisionError:
            pass
        except ExprError:
            if not uncounted_ok:
                raise
    return out


def host_by_sum(a, summed):
    """{("host", 0): {category: fraction}} from counts summed over every
    socket, by perf's own expressions (perf list)."""
    if a.metrics is None:
        a.metrics = Metrics.from_perf_list(a.cpuid, a.unit)
    names = {c: perf_name(a.metrics, c) for c in L1_ALL + list(L2)}
    if not summed.get(a.weight_event or "TOPDOWN.SLOTS"):
        return {("host", 0): None}
    cats = [c for c in names if names[c]]
    return {("host", 0): fractions(a.metrics, names, cats, summed, a.literals,
                                       uncounted_ok=True)}


def known_event(tables, directory, unit, name):
    """Whether an event file of @directory has canonical event @name (a
    retire latency: its event)."""
    base = name.partition(",")[0]
    base = base[:-2] if base.endswith(":R") else base
    events = tables.events(directory)
    return (base, unit) in events or (base, None) in events


def event_spec(tables, directory, unit, pmu, name):
    """perf -e syntax for a canonical event name."""
    if name == "TOPDOWN.SLOTS":
        return "%s/slots/" % pmu
    if name.startswith("topdown-"):
        return "%s/%s/" % (pmu, name)
    base, _, mods = name.partition(",")
    events = tables.events(directory)
    hit = events.get((base, unit)) or events.get((base, None))
    if hit is None:
        raise SystemExit("no encoding for %s in %s" % (name, directory))
    enc = dict(hit[1])
    # perf 6.1 ORs a name's terms into the table's fields (util/pmu.c
    # pmu_format_value(), zero false): EXE_ACTIVITY.3_PORTS_UTIL,umask=0x80
    # is umask 0x88.
    for t in filter(None, mods.split(",")):
        key, _, val = t.partition("=")
        enc[key] = enc.get(key, 0) | int(val, 0)
    terms = ["event=0x%x" % enc["event"]]
    for key in ("umask", "cmask", "edge", "inv", "any", "frontend", "offcore_rsp", "ldlat"):
        if enc.get(key):
            terms.append("%s=%d" % (key, enc[key]))
    return "%s/%s,name=%s/" % (pmu, ",".join(terms), name.replace(",", ":").replace("=", "_"))


def fixture_literals(a):
    """What perf's expressions read besides counts: #slots (the PMU's
    caps/slots), #SMT_on, #core_wide, #has_pmem and the CPUID (CPU 0's
    MIDR) strcmp_cpuid_str() tests."""
    out = {}
    slots = os.path.join(a.fixture, "bus/event_source/devices", a.pmu, "caps/slots")
    if os.path.exists(slots):
        with open(slots) as f:
            out["#slots"] = int(f.read(), 16)
    if a.slots_from:
        # A guest's caps/slots is 0: perf's expressions with the width
        # Arm publishes (its telemetry specification's num_slots).
        with open(a.slots_from) as f:
            out["#slots"] = json.load(f)["product_configuration"]["num_slots"]
    # #SMT_on: perf 6.1 reads devices/system/cpu/smt/active (util/smt.c,
    # smt_on()), the fixture's under sysns.
    smt = os.path.join(a.fixture, "devices/system/cpu/smt/active")
    if os.path.exists(smt):
        with open(smt) as f:
            out["#SMT_on"] = int(f.read())
    # #core_wide: every run here is system-wide (-a) with no CPU list,
    # which perf's core_wide() (util/smt.c) takes as core-wide.
    out["#core_wide"] = 1
    # #has_pmem: perf reads whether the firmware has an NFIT table
    # (util/expr.c has_pmem(): SYSFS/firmware/acpi/tables/NFIT).
    out["#has_pmem"] = int(os.path.exists(os.path.join(a.fixture, "firmware/acpi/tables/NFIT")))
    midr = os.path.join(a.fixture, "devices/system/cpu/cpu0/regs/identification/midr_el1")
    if os.path.exists(midr):
        with open(midr) as f:
            out["cpuid"] = int(f.read(), 16)
    return out


def perf_events_mode(a, tables):
    """Counts by perf, metrics by the expressions."""
    a.literals = fixture_literals(a)
    if a.events_from == "perf":
        metrics = Metrics.from_perf_list(a.cpuid, a.unit)
        directory = a.table_dir
    else:
        metrics = tables.metrics(a.events_from, a.unit)
        directory = a.table_dir or os.path.dirname(a.events_from)
    # --tsc-departure reads which nodes read the TSC from these.
    a.metrics = metrics
    # The TSC perf counts with the msr PMU (msr/tsc/), where the fixture
    # has one, and the interval's length (duration_time, a tool event).
    tsc = os.path.exists(os.path.join(a.fixture, "bus/event_source/devices/msr/events/tsc"))
    # --tsc-departure here: a domain's TSC divided before evaluating
    # (below), not its value after (main()).
    a.tsc_at_input = a.tsc_departure and tsc
    names = {c: perf_name(metrics, c) for c in L1_ALL + list(L2)}
    cats = [c for c in L1_ALL + list(L2) if names[c]]
    # Below level 2: the nodes of the metric groups asked (TopdownL3...),
    # as topdownd names them (tma_ taken off).
    deep = [g for g in a.metric_groups.split(",") if re.fullmatch(r"TopdownL[3-6]", g)]
    for name, groups in getattr(metrics, "groups", {}).items():
        if any(g in groups for g in deep) and name.startswith("tma_"):
            # Of the msr PMU's and perf's tool events, perf counts
            # msr/tsc/ and duration_time here (where the fixture has the
            # msr PMU): nodes reading others are not perf's here.  A
            # retire latency (EVENT:R) perf stat does
            # not count: it reads rint() of the event's
            # RetirementLatencyMean when it does not sample it
            # (util/intel-tpebs.c, evsel__tpebs_read()), below.
            try:
                evs = metrics.events(name)
            except ExprError:
                continue
            if any((e.startswith("msr@") or e == "duration_time") and
                   not (tsc and e in ("msr@tsc@", "duration_time")) for e in evs):
                continue
            # Nor those reading a name no event file of the model has
            # (perf 7.2's Granite Rapids tma_remote_cache reads "PEBS"):
            # perf has no count for it.
            unknown = sorted(e for e in evs if not e.startswith("msr@") and e != "duration_time" and
                             not e.startswith("topdown-") and e != "TOPDOWN.SLOTS" and
                             not known_event(tables, directory, a.unit, e))
            if unknown:
                a.not_events.setdefault(name, unknown)
                continue
            # Nor those reading a retire latency whose event's file gives
            # no RetirementLatencyMean (perf 7.2's Lunar and Arrow Lake):
            # topdownd leaves them out, saying so.
            no_mean = sorted(e for e in evs if e.endswith(":R") and
                             ((tables.events(directory).get((e[:-2], a.unit)) or
                               tables.events(directory).get((e[:-2], None)) or (None,) * 5)[4] is None))
            if no_mean:
                a.no_mean.setdefault(name, no_mean)
                continue
            # Nor those reading a literal perf takes from what this
            # fixture has no trace of (#has_pmem).
            try:
                metrics.evaluate(name, {e: 1.0 for e in evs}, a.literals)
            except ExprError as e:
                if "needs literal" in str(e):
                    continue
            except ZeroDivisionError:
                pass
            names[name[4:]] = name
            cats.append(name[4:])
    # perf's SMT metrics where a thread's slots tell its mode (NVIDIA
    # Olympus): the share of its cycles in ST mode, compared as a
    # category is.
    if a.smt_mode:
        names[SMT_MODE_KEY] = "cpu_cycles_fraction_in_st_mode"
        cats.append(SMT_MODE_KEY)
    # Every one of them must be compared at least once (main()): a node
    # with no value in either tool (an event counting 0 in both under the
    # fake) proves nothing.
    a.expected_nodes = list(cats)
    needed = set()
    for c in cats:
        needed |= metrics.events(names[c])
    # perf's value of each retire latency, per CPU and interval, from the
    # event's own file.
    latency = {}
    for n in sorted(e for e in needed if e.endswith(":R")):
        evs = tables.events(directory)
        hit = evs.get((n[:-2], a.unit)) or evs.get((n[:-2], None))
        if hit is None or hit[4] is None:
            raise SystemExit("no RetirementLatencyMean for %s in %s" % (n, directory))
        latency[n] = float(round(hit[4]))  # rint(): to even, as round()
    needed -= set(latency)
    # duration_time, in seconds as perf's expressions read it
    # (util/stat-shadow.c prepare_metric(): walltime_nsecs_stats times
    # 1e-9, one value for every CPU and domain): the interval perf's
    # counts span on the fake's read-paced clock (SteppedPerf), which is
    # what perf reads where its clock and the counters' agree; perf's own
    # here is its wall clock, which the paced counts do not follow.
    duration = {}
    if "duration_time" in needed:
        needed.discard("duration_time")
        duration["duration_time"] = a.interval_ms / 1000.0
    # The kernel counts PERF_METRICS' topdown-* events only in a group
    # led by slots (arch/x86/events/intel/core.c, intel_pmu_hw_config);
    # perf adds the slots event to such a group when the metric does not
    # name it (tools/perf/arch/x86/util/topdown.c,
    # topdown_insert_slots_event): Lunar Lake's expressions name no slots.
    slots_file = os.path.join(a.fixture, "bus/event_source/devices", a.pmu, "events/slots")
    if any(n.startswith("topdown-") for n in needed) and os.path.exists(slots_file):
        needed.add("TOPDOWN.SLOTS")
    needed = sorted(needed, key=lambda n: (n != "TOPDOWN.SLOTS", not n.startswith("topdown-"), n))
    own = {"msr@tsc@": "msr/tsc/"}
    specs = [own.get(n) or event_spec(tables, directory, a.unit, a.pmu, n) for n in needed]
    name_of = {}
    for n, spec in zip(needed, specs):
        if n in own:
            shown = spec  # perf prints them as asked
        else:
            shown = spec.split("name=")[1].rstrip("/") if "name=" in spec else spec.split("/")[1]
        name_of[shown] = n
    trace = os.path.join(a.tmp, "perf-events.trace")
    # One group, as perf's metrics would; --ungrouped where the events
    # outnumber the counters (perf then rotates them one by one).
    if a.ungrouped and "TOPDOWN.SLOTS" in needed:
        # The kernel's PERF_METRICS events only count in a group led by
        # slots: that group, the others one by one.  (A part without
        # PERF_METRICS names its architectural events topdown-* too: they
        # go one by one.)
        kernel = [sp for n, sp in zip(needed, specs) if n == "TOPDOWN.SLOTS" or n.startswith("topdown-")]
        rest = [sp for n, sp in zip(needed, specs) if sp not in kernel]
        group = ",".join((["{" + ",".join(kernel) + "}"] if kernel else []) + rest)
    elif a.ungrouped:
        group = ",".join(specs)
    else:
        group = "{" + ",".join(specs) + "}"
    rc, text = SteppedPerf(a, perf_cmd(a, ["-A", "-e", group]), trace).wait()
    if rc != 0:
        raise SystemExit("perf failed, exit %d:\n%s" % (rc, text[-2000:]))
    recs = perf_records(text)
    ends = sorted({float(r["interval"]) for r in recs})
    wins = paced_windows(a, ends)
    idx = {t: i for i, t in enumerate(ends)}
    counts = {}
    for r in recs:
        ev = strip_pmu(r.get("event", ""), (a.pmu,))
        n = name_of.get(ev) or (canonical_event(ev) if canonical_event(ev) in needed else None)
        if n is None or r.get("counter-value") in (None, "<not counted>", "<not supported>"):
            continue
        k = idx[float(r["interval"])]
        counts.setdefault(k, {}).setdefault(int(r["cpu"]), {})[n] = float(r["counter-value"])
    topo = topology(a.fixture)
    cores = cores_of(a.fixture)
    values = {}
    for k, per_cpu in sorted(counts.items()):
        groups = {("host", 0): list(per_cpu)}
        for cpu in per_cpu:
            groups[("cpu", cpu)] = [cpu]
            if cpu in topo:
                groups.setdefault(("package", topo[cpu]), []).append(cpu)
            if cpu in cores:
                # perf --per-core: the core's threads' counts summed.
                groups.setdefault(("core", cores[cpu]), []).append(cpu)
        for entity, cpus in groups.items():
            summed = {}
            for cpu in cpus:
                for n, v in per_cpu[cpu].items():
                    summed[n] = summed.get(n, 0.0) + v
            if not summed.get(a.weight_event or "TOPDOWN.SLOTS"):
                values.setdefault(k, {})[entity] = None
                continue
            # perf adds each CPU's read of a retire latency as it adds
            # counts (its aggregation sums every evsel's per-CPU values):
            # N times the latency for N CPUs.
            summed.update(duration)
            lat = {n: v * len(cpus) for n, v in latency.items()}
            got = fractions(metrics, names, cats, dict(summed, **lat), a.literals)
            if latency and a.retire_latency_once and entity[0] != "cpu":
                # topdownd's departure: the latency once, whatever the
                # domain; compared so, and perf's own value's distance
                # from it counted.
                lat = latency
                once = fractions(metrics, names, cats, dict(summed, **lat), a.literals)
                dep = a.retlat_departure.setdefault(entity[0], [0, 0.0])
                for c, v in once.items():
                    if c in got and v != got[c]:
                        dep[0] += 1
                        dep[1] = max(dep[1], abs(v - got[c]))
                got = once
            if a.tsc_at_input and entity[0] != "cpu" and "msr@tsc@" in summed:
                # topdownd's other: the domain's mean frequency, its TSC
                # over its CPUs, in the expression's input (Granite
                # Rapids' nodes read it in a min() beside a retire
                # latency: dividing the value would not be its rule).
                summed["msr@tsc@"] /= len(cpus)
                got = fractions(metrics, names, cats, dict(summed, **lat), a.literals)
            values.setdefault(k, {})[entity] = got
    series = [(wins[k], values.get(k, {})) for k in range(len(ends))]
    return {"cpu": series, "core": series, "socket": series, "host": series}


def topdownd_conf(a, name):
    """topdownd's configuration file: its [collect] level and
    pmu_sharing when given, nothing else."""
    conf = os.path.join(a.tmp, name)
    with open(conf, "w") as f:
        f.write("[collect]\n")
        if a.topdownd_level:
            f.write("level = %d\n" % a.topdownd_level)
        if a.topdownd_sharing:
            f.write("pmu_sharing = %s\n" % a.topdownd_sharing)
        for line in a.topdownd_set:
            f.write(line + "\n")
    return conf


def topdownd_values(a):
    conf = topdownd_conf(a, "topdownd.conf")
    cmd = [a.topdownd, "-c", conf, "--sysfs-root", a.fixture, "--watch", "--json",
           "--count", str(a.intervals + 1), "-i", "%dms" % a.interval_ms]
    trace = os.path.join(a.tmp, "topdownd.trace")
    env = fake_env(a, trace, a.topdownd_scenario)
    # The read-paced clock, as perf's (SteppedPerf): each collection's
    # reads see one interval more than the one before.
    env["FAKEPMU_CLOCK_STEP"] = "%.6f" % (a.interval_ms / 1000.0)
    printed = []
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import threading
    err = []
    drain = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    drain.start()
    for line in proc.stdout:    # one line per interval, flushed as read
        printed.append(line)
    proc.wait(timeout=120)
    drain.join()
    if proc.returncode != 0:
        raise SystemExit("topdownd failed, exit %d:\n%s" % (proc.returncode, "".join(err)[-2000:]))
    lines = "".join(printed).splitlines()
    last = json.loads(lines[-1]) if lines else {}
    a.departures_counted = {}
    for p in last.get("pmus", []):
        for kind, n in (p.get("departures") or {}).items():
            a.departures_counted[kind] = a.departures_counted.get(kind, 0) + n
    # topdownd's reads before its first interval (its baseline) are its
    # own affair: its last interval ended at the clock's last time, and
    # each one before it one interval earlier.
    docs = [json.loads(line) for line in lines]
    step, end = a.interval_ms / 1000.0, clock_end(trace)
    first = end - len(docs) * step
    if first < -1e-9:
        raise SystemExit("topdownd printed %d intervals, its fake clock stopped at %.3f s"
                         % (len(docs), end))
    return [((first + k * step, first + (k + 1) * step), doc_values(doc, a.pmu))
            for k, doc in enumerate(docs)]


# perf's cpu_cycles_fraction_in_st_mode: the JSON's smt_mode.st_fraction,
# /metrics' topdown_smt_mode_cycles_total{mode="st"} over both modes.
SMT_MODE_KEY = "smt_mode_st_fraction"


def doc_values(doc, pmu=None):
    """{entity: {category: fraction} or None} of a JSON document (the
    --watch line and /api/v1/topdown?scope=cpu have the same shape); the
    nodes below level 2 of core PMU @pmu's tree where the entity has
    several (a hybrid part's package and host: nodes_by_pmu)."""
    values = {}
    ents = [(("host", 0), doc["host"])]
    ents += [(("package", p["package"]), p) for p in doc.get("packages", [])]
    ents += [(("core", (p["package"], p["core"])), p) for p in doc.get("cores", [])]
    ents += [(("cpu", c["cpu"]), c) for c in doc.get("cpus", [])]
    for entity, obj in ents:
        if obj.get("level1") is None:
            values[entity] = None
            continue
        out = {}
        for sec in ("level1", "level2"):
            for cat, v in (obj.get(sec) or {}).items():
                out[cat] = v
        # Below level 2: perf's nodes (none before every group ran).
        nodes = obj.get("nodes")
        if pmu in (obj.get("nodes_by_pmu") or {}):
            nodes = obj["nodes_by_pmu"][pmu].get("nodes")
        for node, v in (nodes or {}).items():
            if v is not None:
                out[node] = v
        if (obj.get("smt_mode") or {}).get("st_fraction") is not None:
            out[SMT_MODE_KEY] = obj["smt_mode"]["st_fraction"]
        values[entity] = out
    return values


SAMPLE = re.compile(r'^(topdown_[a-z0-9_]+)(?:\{(.*)\})? (\S+)$')


def exposition(text):
    """{(name, frozenset(labels)): value} of a Prometheus text scrape."""
    out = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if not m:
            continue
        labels = frozenset(re.findall(r'([a-z_]+)="([^"]*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def entity_of_labels(lab):
    """The entity of a /metrics sample's labels (granularity cpu, core,
    package or system)."""
    if "cpu" in lab:
        return ("cpu", int(lab["cpu"]))
    if "core" in lab:
        return ("core", (int(lab["package"]), int(lab["core"])))
    if "package" in lab:
        return ("package", int(lab["package"]))
    return ("host", 0)


def metrics_values(prev, cur):
    """{entity: {category: fraction}} from two scrapes (granularity cpu,
    core, package and system) of consecutive intervals: each counter's increase
    over the entity's slots' increase, as rate(...)/rate(...) gives it."""
    values = {}
    for (name, labels), v in cur.items():
        if name not in ("topdown_level1_slots_total", "topdown_level2_slots_total"):
            continue
        lab = dict(labels)
        # The slots counter of the same entity: the same labels but the
        # category's (a hybrid part's have its PMU's too).
        key = frozenset((k, x) for k, x in labels if k not in ("category", "parent"))
        entity = entity_of_labels(lab)
        slots = cur.get(("topdown_slots_total", key), 0) - prev.get(("topdown_slots_total", key), 0)
        if slots <= 0:
            values[entity] = None
            continue
        d = v - prev.get((name, labels), 0)
        if values.get(entity, {}) is not None:
            values.setdefault(entity, {})[lab["category"]] = d / slots
    # perf's SMT mode metrics: the ST cycles' increase over both modes'.
    for (name, labels), v in cur.items():
        lab = dict(labels)
        if name != "topdown_smt_mode_cycles_total" or lab.get("mode") != "st":
            continue
        other = frozenset((k, "smt" if k == "mode" else x) for k, x in labels)
        st = v - prev.get((name, labels), 0)
        both = st + cur.get((name, other), 0) - prev.get((name, other), 0)
        entity = entity_of_labels(lab)
        if both > 0 and values.get(entity) is not None:
            values.setdefault(entity, {})[SMT_MODE_KEY] = st / both
    # The host's ratio gauges are perf's values themselves.
    gauges = {}
    for (name, labels), v in cur.items():
        if name in ("topdown_level1_ratio", "topdown_level2_ratio"):
            gauges[dict(labels)["category"]] = v
    if gauges and values.get(("host", 0)):
        for cat, v in gauges.items():
            values[("host", 0)]["ratio:" + cat] = v
    return values


def topdownd_http_values(a):
    """As topdownd_values, from the daemon's HTTP interfaces: each
    interval's /api/v1/topdown?scope=cpu (interface api), or the counters
    of /metrics at granularity cpu, core, package and system (interface
    metrics: their increases between two intervals)."""
    import signal
    import time
    import urllib.request
    conf = topdownd_conf(a, "topdownd-http.conf")
    trace = os.path.join(a.tmp, "topdownd.trace")
    log = open(os.path.join(a.tmp, "topdownd.log"), "w+")
    proc = subprocess.Popen([a.topdownd, "-c", conf, "--sysfs-root", a.fixture, "-l", "127.0.0.1:0",
                             "-i", "%dms" % a.interval_ms],
                            env=fake_env(a, trace, a.topdownd_scenario), stdout=log, stderr=log)
    try:
        url = None
        deadline = time.monotonic() + 30
        while url is None:
            log.seek(0)
            m = re.search(r"Listening on (http://127\.0\.0\.1:[0-9]+)/", log.read())
            if m:
                url = m.group(1)
            elif proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise SystemExit("topdownd did not listen:\n%s" % log.read()[-2000:])
            else:
                time.sleep(0.02)

        def get(path):
            with urllib.request.urlopen(url + path, timeout=10) as r:
                return r.read().decode()

        def collections():
            return exposition(get("/metrics?granularity=system")).get(
                ("topdown_collections_total", frozenset()), 0)

        snaps, seen = [], 0
        deadline = time.monotonic() + 30 + 3 * a.interval_ms * (a.intervals + 2) / 1000.0
        while len(snaps) < a.intervals + 2 and time.monotonic() < deadline:
            n = collections()
            if n == seen:
                time.sleep(0.01)
                continue
            if a.interface == "api":
                doc = json.loads(get("/api/v1/topdown?scope=cpu"))
                if doc.get("intervals") != n:
                    continue    # a collection in between: the next one
                snaps.append((n, doc["timestamp"], doc))
            else:
                scrape = {}
                for g in ("cpu", "core", "package", "system"):
                    scrape.update(exposition(get("/metrics?granularity=" + g)))
                if scrape.get(("topdown_collections_total", frozenset())) != n or collections() != n:
                    continue
                snaps.append((n, scrape[("topdown_last_collection_timestamp_seconds", frozenset())],
                              scrape))
            seen = n
        last = get("/metrics?granularity=system")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    if len(snaps) < a.intervals + 2:
        raise SystemExit("topdownd published %d intervals of %d" % (len(snaps), a.intervals + 2))
    a.departures_counted = {}
    for (name, labels), v in exposition(last).items():
        if name == "topdown_departures_total":
            kind = dict(labels)["reason"]
            a.departures_counted[kind] = a.departures_counted.get(kind, 0) + v
    start, wall = enable_time(trace), enable_wall(trace)
    out = []
    for k in range(1, len(snaps)):
        (n0, t0, s0), (n1, t1, s1) = snaps[k - 1], snaps[k]
        if n1 != n0 + 1:
            continue    # intervals in between were not seen: no window
        window = (start + t0 - wall, start + t1 - wall)
        out.append((window, doc_values(s1, a.pmu) if a.interface == "api" else metrics_values(s0, s1)))
    return out


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def phase_bounds(scenario):
    """Start times of the default phases, in scenario seconds."""
    with open(scenario) as f:
        phases = json.load(f)["cpus"]["default"]["phases"]
    bounds, t = [0.0], 0.0
    for ph in phases[:-1]:
        t += ph["seconds"]
        bounds.append(t)
    return bounds + [float("inf")]


def phase_of(window, bounds, margin=0.12):
    """The phase a window lies in, with a margin from its ends; None when
    it straddles (or nearly) a change."""
    for i in range(len(bounds) - 1):
        if bounds[i] + (margin if i else 0) <= window[0] and window[1] <= bounds[i + 1] - margin:
            return i
    return None


def step_of(a, window):
    """The step of the read-paced clock a whole interval starts at."""
    return int(round(window[0] / (a.interval_ms / 1000.0)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--cpuid", required=True)
    ap.add_argument("--events-from", help="'perf' or a metrics file relative to the tables")
    ap.add_argument("--table-dir", help="x86/DIR for event encodings (events mode)")
    ap.add_argument("--unit")
    ap.add_argument("--pmu", default="cpu")
    ap.add_argument("--interval-ms", type=int, default=500)
    ap.add_argument("--intervals", type=int, default=4)
    ap.add_argument("--metric-groups", default="TopdownL1,TopdownL2")
    ap.add_argument("--tol", type=float, default=0.0005)
    ap.add_argument("--cpus", help="compare these CPUs only")
    ap.add_argument("--domain-nodes", action="store_true",
                    help="with --cpus (a hybrid part's core type, --pmu): compare the cores', packages' "
                         "and host's nodes below level 2 too, topdownd's tree of that PMU being over "
                         "its CPUs as perf's counts of --cpus are")
    ap.add_argument("--gaps", action="store_true",
                    help="a CPU interval in which topdownd has no figures where perf has "
                         "them is printed (GAP cpu N START END), not a mismatch: the caller "
                         "asserts where they may be (another user's counters arriving); "
                         "the CPUs' figures only are compared")
    ap.add_argument("--icl", action="store_true", help="Ice Lake formulas (its ratio children)")
    ap.add_argument("--ignore", action="append", default=[],
                    help="a perf metric (tma_ name without tma_) topdownd does not export")
    ap.add_argument("--tables-fallback", help="a second tables root for events the first lacks")
    ap.add_argument("--fake-tables", help="the fake PMU's tables root (its hardware), when not "
                    "reference/perf-tables")
    ap.add_argument("--warmup", type=int, default=1,
                    help="topdownd's first intervals left out (its nodes below level 2 have "
                    "values once every group of theirs ran)")
    ap.add_argument("--smt-mode", action="store_true",
                    help="compare perf's cpu_cycles_fraction_in_st_mode too (events mode: NVIDIA Olympus)")
    ap.add_argument("--ungrouped", action="store_true",
                    help="events mode: perf counts the events ungrouped")
    ap.add_argument("--weight-event",
                    help="events mode: the event whose count is 0 on a halted CPU (its "
                         "cycles; TOPDOWN.SLOTS by default)")
    ap.add_argument("--topdownd-scenario",
                    help="topdownd's own scenario: the same workload with a pinned holder of "
                         "counters (held), which perf does not meet")
    ap.add_argument("--topdownd-level", type=int,
                    help="topdownd at this level ([collect] level); compared on its categories")
    ap.add_argument("--topdownd-set", action="append", default=[], metavar="KEY=VALUE",
                    help="one more line of topdownd's [collect] section (repeatable)")
    ap.add_argument("--topdownd-sharing", choices=("yield", "share"),
                    help="topdownd's [collect] pmu_sharing (its default when not given)")
    ap.add_argument("--interface", choices=("watch", "api", "metrics"), default="watch",
                    help="topdownd's figures from --watch --json, /api/v1/topdown, or the "
                         "counters and ratio gauges of /metrics")
    ap.add_argument("--uneven-multiplexing", action="store_true",
                    help="the scenario multiplexes CPUs unevenly: perf -a's host (its global "
                         "scaling) is reported, not bounded")
    ap.add_argument("--lockstep", action="store_true",
                    help="topdownd on a stepped clock too: both tools' k-th intervals span the "
                         "same stretch of the scenario, compared interval by interval, phase "
                         "changes inside an interval included")
    ap.add_argument("--slots-from",
                    help="arm64 guest (caps/slots 0): #slots from this excerpt of Arm's telemetry "
                         "specification (reference/arm-telemetry)")
    ap.add_argument("--retire-latency-once", action="store_true",
                    help="events mode: a core's, package's or host's retire latencies "
                         "(EVENT:R) are the latency, not perf's sum over its CPUs' reads "
                         "(topdownd's departure): compared so, and perf's own values' "
                         "distance from them printed (\"departure retlat_sum\")")
    ap.add_argument("--tsc-departure", action="store_true",
                    help="the nodes whose expressions read msr@tsc@ and duration_time "
                         "(perf list's in metrics mode, the file's in events mode) are "
                         "compared per core, package and host as perf's value over the "
                         "domain's CPUs (perf 6.1 sums msr/tsc over them against one "
                         "interval's duration_time; topdownd sums duration_time too): the "
                         "\"tsc_sum\" departure, counted")
    ap.add_argument("--topdownd", required=True)
    ap.add_argument("--fakepmu", required=True)
    ap.add_argument("--sysns", required=True)
    ap.add_argument("--tables", required=True)
    a = ap.parse_args()
    a.fixture = os.path.abspath(a.fixture)
    a.scenario = os.path.abspath(a.scenario)
    if a.topdownd_scenario:
        a.topdownd_scenario = os.path.abspath(a.topdownd_scenario)
    import tempfile
    a.tmp = tempfile.mkdtemp(prefix="parity.")
    a.metrics = None
    a.retlat_departure = {}
    a.tsc_at_input = False  # events mode: a domain's TSC over its CPUs before evaluating
    a.not_events = {}  # events mode: node -> the names it reads that no event file has
    a.no_mean = {}  # events mode: node -> the retire latencies it reads that have no mean
    a.expected_nodes = None  # events mode: the categories perf's expressions give
    tables = Tables(a.tables, a.tables_fallback)
    only = set(cpulist(a.cpus)) if a.cpus else None

    if a.events_from:
        perf = perf_events_mode(a, tables)
    else:
        perf = perf_metrics_mode(a)
    if a.interface != "watch" and len(phase_bounds(a.scenario)) > 2:
        raise SystemExit("--interface %s runs topdownd on the real clock: a scenario with "
                         "phases needs --interface watch (the read-paced clock)" % a.interface)
    mine = topdownd_values(a) if a.interface == "watch" else topdownd_http_values(a)
    import shutil
    shutil.rmtree(a.tmp, ignore_errors=True)

    bounds = phase_bounds(a.scenario)
    mine_by_phase = {}
    # The first interval of each tool includes its set-up: left out.
    for k, (window, vals) in enumerate(mine):
        if k < max(1, a.warmup):
            continue
        # In lockstep the intervals of both tools that span the same
        # stretch of the scenario, [j, j+1] steps of the read-paced clock,
        # are compared with each other, those a phase change falls inside
        # included.
        ph = step_of(a, window) if a.lockstep else phase_of(window, bounds)
        if ph is not None:
            mine_by_phase.setdefault(ph, []).append((window, vals))
    straddling = set()

    # --tsc-departure: the nodes reading the TSC over the interval's
    # length, by perf's own expressions, and each domain's CPUs.
    tsc_nodes, domain_cpus = set(), {}
    if a.tsc_departure:
        if a.metrics is None:
            a.metrics = Metrics.from_perf_list(a.cpuid, a.unit)
        for name in a.metrics.expr:
            if name.startswith("tma_"):
                try:
                    evs = {e.lower() for e in a.metrics.events(name)}
                except ExprError:
                    continue  # an uncore PMU's spelling (uncore_cha_0@event=0x1@)
                if "msr@tsc@" in evs and "duration_time" in evs:
                    tsc_nodes.add(name[4:])
        for cpu, (pkg, core) in cores_of(a.fixture).items():
            if only is None or cpu in only:
                for ent in (("core", (pkg, core)), ("package", pkg), ("host", 0)):
                    domain_cpus[ent] = domain_cpus.get(ent, 0) + 1
        if not tsc_nodes:
            raise SystemExit("--tsc-departure: perf has no tma_ node reading msr@tsc@ and duration_time")

    worst = {"cpu": 0.0, "core": 0.0, "package": 0.0, "host": 0.0}
    compared = {"cpu": 0, "core": 0, "package": 0, "host": 0}
    errors = []
    gaps = set()  # --gaps: (cpu, start, end) of topdownd's intervals without figures
    pairs = {}  # (phase, entity, category) -> ([perf's], [topdownd's])
    # Departures seen: kind -> [values, largest |perf value| replaced]
    departures = {"negative": [0, 0.0], "no_value": [0, 0.0]}
    tsc_sum = {}  # entity kind -> [perf values, their domains' CPUs]
    known = {c for _, series in perf.items() for _, pvals in series for pv in pvals.values()
             if pv for c in pv}
    for aggr, series in perf.items():
        for k, (window, pvals) in enumerate(series):
            if k == 0:
                continue
            # Whole intervals only (paced_windows: perf's last, shorter one
            # has no length).
            if window[1] - window[0] < 0.9 * a.interval_ms / 1000.0:
                continue
            ph = step_of(a, window) if a.lockstep else phase_of(window, bounds)
            if ph is None or ph not in mine_by_phase:
                continue
            step = a.interval_ms / 1000.0
            if a.lockstep and any(window[0] < b < window[1] for b in bounds[1:-1]):
                straddling.add(ph)
            for entity, pv in pvals.items():
                # --gaps: a core's, a package's and the host's figures
                # are over the CPUs measured, perf's over all of them:
                # the CPUs only.
                if a.gaps and entity[0] != "cpu":
                    continue
                if aggr == "cpu" and entity[0] != "cpu":
                    continue
                if aggr == "core" and entity[0] != "core":
                    continue
                if aggr == "socket" and entity[0] != "package":
                    continue
                if aggr in ("host", "host_sum") and entity[0] != "host":
                    continue
                if only is not None and entity[0] == "cpu" and entity[1] not in only:
                    continue
                if only is not None and entity[0] != "cpu":
                    # A subset of the CPUs: perf's cores, packages and
                    # host are of that subset, topdownd's of every CPU;
                    # but a core PMU's tree below level 2 (a hybrid
                    # part's core type, --pmu) is over that type's CPUs:
                    # with --domain-nodes, its nodes are compared.
                    if not a.domain_nodes or pv is None:
                        continue
                    pv = {c: v for c, v in pv.items() if c not in L1_ALL and c not in L2}
                    if not pv:
                        continue
                for mwin, mv in mine_by_phase[ph]:
                    got = mv.get(entity, "absent")
                    where = "phase %d [%.2f, %.2f] s %s %s" % (ph, window[0], window[1],
                                                               entity[0], entity[1])
                    if pv is None:
                        if got not in (None, "absent"):
                            errors.append("%s: halted in perf, topdownd has %s" % (where, got))
                        continue
                    if not got or got == "absent":
                        if a.gaps and entity[0] == "cpu":
                            # Asserted by the caller: where and how long.
                            gaps.add((entity[1], round(mwin[0], 3), round(mwin[1], 3)))
                        else:
                            errors.append("%s: perf has values, topdownd none" % where)
                        continue
                    pv = {c: v for c, v in pv.items() if c not in a.ignore}
                    if a.topdownd_level == 1:
                        pv = {c: v for c, v in pv.items() if c in L1_ALL}
                    want = {}
                    for cat, v in pv.items():
                        want[cat] = v
                        # The daemon's clamp is of levels 1 and 2; a
                        # node below them is perf's expression, negative
                        # where perf's is.
                        if v < 0 and (cat in L1_ALL or cat in L2):
                            want[cat] = 0.0
                            if v < -2e-6:
                                departures["negative"][0] += 1
                                departures["negative"][1] = max(departures["negative"][1], -v)
                    for cat, parent in L2.items():
                        # perf knows the node, has its parent, and no
                        # value for it here: a division by 0.
                        if cat in known and cat not in pv and parent in pv and cat in got and \
                                cat not in a.ignore and a.topdownd_level != 1:
                            want[cat] = 0.0
                            departures["no_value"][0] += 1
                    for cat, v in list(want.items()):
                        if cat in tsc_nodes and entity[0] != "cpu":
                            # perf 6.1's msr/tsc summed over the domain's
                            # N CPUs against one interval: N times a
                            # CPU's frequency (events mode: divided in
                            # the expression's input already).
                            n = domain_cpus.get(entity)
                            if not n:
                                errors.append("%s: no CPUs known for %s" % (where, cat))
                                continue
                            if not a.tsc_at_input:
                                want[cat] = v / n
                            tsc_sum.setdefault(entity[0], [0, set()])
                            tsc_sum[entity[0]][0] += 1
                            tsc_sum[entity[0]][1].add(n)
                    for cat, v in want.items():
                        if cat not in got:
                            errors.append("%s: no %s from topdownd" % (where, cat))
                            continue
                        if "ratio:" + cat in got and aggr != "host":
                            # /metrics: the host's ratio gauge beside its
                            # counters' increases.
                            rkey = (ph, entity, "ratio:" + cat)
                            pairs.setdefault(rkey, ([], []))
                            pairs[rkey][0].append(v)
                            pairs[rkey][1].append(got["ratio:" + cat])
                        key = (ph, entity, cat)
                        if aggr == "host" and "host_sum" in perf:
                            # perf -a's own scaling rule: a departure,
                            # its size measured on its own.
                            key = ("global_scaling",) + key
                        pairs.setdefault(key, ([], []))
                        pairs[key][0].append(v)
                        pairs[key][1].append(got[cat])
    # Each tool's median over the phase's intervals: a read that a loaded
    # machine delayed skews the one interval it falls in (perf scales each
    # group by its own enabled time, so a preempted perf is off for that
    # interval), not the phase.
    scaling = [0, 0.0]
    for key, (pw, mg) in sorted(pairs.items(), key=str):
        v, g = median(pw), median(mg)
        d = abs(g - v)
        if key[0] == "global_scaling":
            scaling[0] += len(pw)
            scaling[1] = max(scaling[1], d)
            # With every CPU multiplexed alike the two rules coincide.
            if d > a.tol and not a.uneven_multiplexing:
                errors.append("phase %d host %s: perf -a %.4f, topdownd %.4f, though every CPU "
                              "is multiplexed alike" % (key[1], key[3], v, g))
            continue
        ph, entity, cat = key
        worst[entity[0]] = max(worst[entity[0]], d)
        compared[entity[0]] += len(pw)
        if d > a.tol:
            errors.append("phase %d %s %s %s: perf %.4f (median of %s), topdownd %.4f (median of %s)"
                          % (ph, entity[0], entity[1], cat, v, ", ".join("%.4f" % x for x in pw), g,
                             ", ".join("%.4f" % x for x in mg)))
    for kind in ("cpu", "core", "package", "host"):
        if kind == "core" and not compared[kind]:
            continue
        print("%-8s %5d values compared, largest difference %.4f pp" %
              (kind, compared[kind], 100 * worst[kind]))
    if a.lockstep:
        print("lockstep: %d intervals a phase change falls inside, compared like the others"
              % len(straddling))
        if not straddling:
            errors.append("lockstep: no interval has a phase change inside it")
    if "host_sum" in perf:
        print("departure global_scaling: %d perf -a values, largest %.4f pp from topdownd's host "
              "(compared above with perf's --per-socket rule)%s" % (
                  scaling[0], 100 * scaling[1],
                  "; CPUs multiplexed unevenly: perf -a leans to those that ran more"
                  if a.uneven_multiplexing else ""))
    if a.tsc_departure:
        tsc_cpu = sum(1 for key in pairs if key[0] != "global_scaling" and key[1][0] == "cpu"
                      and key[2] in tsc_nodes)
        print("departure tsc_sum: %d nodes read msr@tsc@ and duration_time (%s); %d CPU phase values "
              "compared as perf's; %s" % (
                  len(tsc_nodes), ",".join(sorted(tsc_nodes)), tsc_cpu,
                  "; ".join("%s: %d perf values %s the domain's CPUs (%s)" %
                            (k, n, "with the TSC divided by" if a.tsc_at_input else "divided by",
                             ",".join(str(x) for x in sorted(cpus)))
                            for k, (n, cpus) in sorted(tsc_sum.items())) or "no domain value"))
        if not tsc_cpu or not tsc_sum:
            errors.append("--tsc-departure: no value of those nodes compared")
    if a.retire_latency_once:
        print("departure retlat_sum: %s" % ("; ".join(
            "%s: %d values of perf's rule (the latency times the domain's CPUs) differ, largest %.4f pp"
            % (k, n, 100 * size) for k, (n, size) in sorted(a.retlat_departure.items()))
            or "no domain value differs"))
        if not a.retlat_departure:
            errors.append("--retire-latency-once: no domain value read a retire latency")
    if a.not_events:
        print("not compared: %d nodes read names no event file has (%s)" % (
            len(a.not_events), "; ".join("%s: %s" % (n, ",".join(e)) for n, e in sorted(a.not_events.items()))))
    if a.no_mean:
        print("not compared: %d nodes read a retire latency whose file gives no RetirementLatencyMean (%s)" % (
            len(a.no_mean), "; ".join("%s: %s" % (n, ",".join(e)) for n, e in sorted(a.no_mean.items()))))
    if a.expected_nodes is not None:
        seen = {key[2] for key in pairs if key[0] != "global_scaling"}
        # topdownd at level 1 has no level 2 to compare (as above).
        asked = [c for c in a.expected_nodes if c not in a.ignore and (a.topdownd_level != 1 or c in L1_ALL)]
        ignored = [c for c in a.expected_nodes if c in a.ignore]
        never = sorted(c for c in asked if c not in seen)
        print("nodes: %d of %d compared%s%s" % (
            len(asked) - len(never), len(asked),
            " (%d ignored)" % len(ignored) if ignored else "",
            "; never: " + ",".join(never) if never else ""))
        if never:
            errors.append("%d nodes never had a value in perf to compare (%s): the scenario "
                          "states no rate for an event they read" % (len(never), ",".join(never)))
    counted = a.departures_counted
    for kind, (n, size) in departures.items():
        print("departure %s: %d perf values%s; topdownd counted %d CPU intervals" %
              (kind, n, ", largest %.4f pp" % (100 * size) if kind == "negative" else "",
               counted.get(kind, 0)))
        if n and not counted.get(kind):
            errors.append("perf's values departed (%s) %d times, topdownd's "
                          "topdown_departures_total says none" % (kind, n))
    for cpu, t0, t1 in sorted(gaps):
        print("GAP cpu %s %.3f %.3f" % (cpu, t0, t1))
    if sum(compared.values()) == 0:
        errors.append("nothing compared")
    for e in errors[:20]:
        print("MISMATCH " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
