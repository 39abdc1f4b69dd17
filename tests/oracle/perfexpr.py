# SPDX-License-Identifier: MIT
"""Linux perf's metric expressions, evaluated from the table files.

An independent reading of perf's MetricExpr language (tools/perf/util/expr.y
and pmu-events/metric.py): numbers, event names with perf's escapes
(topdown\\-fe\\-bound, cpu@INT_MISC.RECOVERY_CYCLES\\,cmask\\=1\\,edge@,
cpu_core@INT_MISC.UOP_DROPPING@), literals such as #slots and #SMT_on,
references to other metrics of the same file, + - * /, comparisons,
"A if COND else B", min, max, d_ratio.  It shares no code with topdownd:
tests use it as the oracle for what perf would print.

    tables = Tables("reference/perf-tables")
    m = tables.metrics("x86/sapphirerapids/spr-metrics.json")
    value = m.evaluate("tma_frontend_bound", counts)

Event names in `counts` are canonical: perf's name without the PMU
prefix, with filter terms appended as ",cmask=1,edge=1" (the same scheme
the fake PMU and topdownd's tables use); topdown-* events as the kernel
names them.
"""
import json
import os
import re


class ExprError(Exception):
    pass


# MIDR_EL1's variant (bits 23:20) and revision (3:0).
MIDR_VERSION = 0xf0000f


def midr_same_part(a, b):
    return (a & ~MIDR_VERSION) == (b & ~MIDR_VERSION)


def midr_matches(want, cpu):
    """perf's arm64 strcmp_cpuid_str(): @cpu is the part @want names, at
    its variant and revision or later."""
    def version(m):
        return ((m >> 20) & 0xf, m & 0xf)
    return midr_same_part(want, cpu) and version(cpu) >= version(want)


def canonical_event(raw):
    """perf's spelling of an event in an expression -> canonical name."""
    name = raw.replace("\\", "")
    # PMU@EVENT@R (perf 7.2's hybrid tables): the event's retire latency,
    # EVENT:R elsewhere (metricgroup.c makes it PMU/EVENT/R).
    m = re.match(r"^(?:cpu|cpu_core|cpu_atom)@([^@,=]*)@R$", name)
    if m:
        return m.group(1) + ":R"
    # The msr PMU's events as written.  perf 7.2's hybrid
    # msr@tsc,cpu=cpu_core@ is the TSC on cpu_core's CPUs (perf's cpu term
    # naming a PMU, bd741d80dc65, newer than the perf 6.1 the oracle runs):
    # the oracle counts msr/tsc/ on that core type's CPUs (perf --cpus of
    # that type), the same count.
    if re.match(r"^msr@tsc,cpu=(cpu_core|cpu_atom)@$", name):
        return "msr@tsc@"
    if name.startswith("msr@"):
        return name
    m = re.match(r"^(?:cpu|cpu_core|cpu_atom)@(.*)@$", name)
    if m:
        name = m.group(1)
    # EVENT@terms@ (perf 7.2's Emerald and Granite Rapids
    # tma_false_sharing): perf's parser reads NAME/terms/ as the event
    # NAME with those terms when no PMU has that name (parse-events.y,
    # parse_events_multi_pmu_add_or_add_pmu()); PMUs' names are lower
    # case, Intel's events upper.
    m = re.match(r"^([A-Z][A-Z0-9_.]*)@(.*)@$", name)
    if m:
        name = m.group(1) + "," + m.group(2)
    parts = name.split(",")
    terms = []
    for t in parts[1:]:
        t = t.strip()
        if "=" not in t:
            t += "=1"
        key, _, val = t.partition("=")
        terms.append("%s=%d" % (key, int(val, 0)))
    base = parts[0]
    # The slots event: the kernel's "slots", perf's TOPDOWN.SLOTS.
    if base in ("slots", "SLOTS"):
        base = "TOPDOWN.SLOTS"
    return ",".join([base] + terms)


TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)
  | (?P<at>(?:cpu|cpu_core|cpu_atom|msr|[A-Z][A-Z0-9_.]*)@(?:[^@\\]|\\.)*@(?:R(?![A-Za-z0-9_.]))?)
  | (?P<lit>\#[A-Za-z_][A-Za-z0-9_]*)
  | (?P<name>(?:[A-Za-z_]|\\.)(?:[A-Za-z0-9_.:]|\\.)*)
  | (?P<op><=|>=|==|[-+*/(),<>|^&])
""", re.X)


def tokenize(text):
    pos, out = 0, []
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ExprError("cannot read %r at %d in %r" % (text[pos:pos + 10], pos, text))
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        out.append((kind, m.group()))
    out.append(("end", ""))
    return out


class Parser:
    """Builds a tree: ("num", v), ("event", name), ("lit", name),
    ("metric", name), ("op", op, a, b), ("neg", a), ("if", a, cond, b),
    ("call", fn, [args])."""

    FUNCS = ("min", "max", "d_ratio")

    def __init__(self, text, metric_names, upper_events=False):
        self.toks = tokenize(text)
        self.i = 0
        self.metrics = metric_names
        self.text = text
        # arm64 files spell an event either way (sbsa.json's stall_slot,
        # the cores' STALL_SLOT); the event tables in capitals.
        self.upper = upper_events

    def event(self, name):
        name = canonical_event(name)
        return name.upper() if self.upper else name

    def peek(self):
        return self.toks[self.i]

    def take(self, value=None):
        tok = self.toks[self.i]
        if value is not None and tok[1] != value:
            raise ExprError("expected %r, got %r in %r" % (value, tok[1], self.text))
        self.i += 1
        return tok

    def parse(self):
        tree = self.ternary()
        if self.peek()[0] != "end":
            raise ExprError("trailing %r in %r" % (self.peek()[1], self.text))
        return tree

    def ternary(self):
        a = self.bitor()
        if self.peek() == ("name", "if"):
            self.take()
            cond = self.bitor()
            self.take("else")
            b = self.ternary()
            return ("if", a, cond, b)
        return a

    # Binary operators by precedence, loosest first, each level left
    # associative (perf's expr.y): '|', '^' and '&' are logical on zero /
    # non-zero, then the comparisons, '+' '-', '*' '/'.
    LEVELS = (("|",), ("^",), ("&",), ("<", ">", "<=", ">=", "=="), ("+", "-"), ("*", "/"))

    def bitor(self, level=0):
        if level == len(self.LEVELS):
            return self.unary()
        a = self.bitor(level + 1)
        while self.peek()[1] in self.LEVELS[level]:
            op = self.take()[1]
            a = ("op", op, a, self.bitor(level + 1))
        return a

    def unary(self):
        if self.peek()[1] == "-":
            self.take()
            return ("neg", self.unary())
        return self.primary()

    def primary(self):
        kind, text = self.take()
        if kind == "num":
            return ("num", float(text))
        if text == "(":
            a = self.ternary()
            self.take(")")
            return a
        if kind == "lit":
            return ("lit", text)
        if kind == "at":
            return ("event", self.event(text))
        if kind == "name" and text == "strcmp_cpuid_str":
            # Its argument is a CPUID ("0x410fd493"), not an expression.
            self.take("(")
            arg = ""
            while self.peek()[1] != ")":
                arg += self.take()[1]
            self.take(")")
            return ("cpuid", arg)
        if kind == "name":
            if text in self.FUNCS and self.peek()[1] == "(":
                self.take("(")
                args = [self.ternary()]
                while self.peek()[1] == ",":
                    self.take()
                    args.append(self.ternary())
                self.take(")")
                return ("call", text, args)
            if text in self.metrics:
                return ("metric", text)
            return ("event", self.event(text))
        raise ExprError("unexpected %r in %r" % (text, self.text))


class Metrics:
    """The metrics of one file (and one Unit, for hybrid tables), or of
    the installed perf (from_perf_list)."""

    def __init__(self, path, unit=None, expr=None):
        self.path = path
        self.trees = {}
        self.expr = {}
        self.scale_unit = {}
        self.groups = {}
        self.arm64 = "/arm64/" in path
        if expr is not None:
            self.expr = expr
            return
        with open(path) as f:
            data = json.load(f)
        std = self.arch_std(path) if self.arm64 else {}
        for m in data:
            if "ArchStdEvent" in m:
                # arm64: a metric of the architecture (sbsa.json), its
                # expression overridden by the core's when it has one
                # (jevents.py: the core's fields win).
                name = m["ArchStdEvent"].lower()
                base = std.get(name)
                if base is None:
                    continue
                self.expr[name] = m.get("MetricExpr", base["MetricExpr"])
                self.scale_unit[name] = m.get("ScaleUnit", base.get("ScaleUnit"))
                continue
            if "MetricName" not in m or "MetricExpr" not in m:
                continue
            if unit is not None and m.get("Unit") not in (unit, None):
                continue
            self.expr[m["MetricName"]] = m["MetricExpr"]
            self.scale_unit[m["MetricName"]] = m.get("ScaleUnit")
            self.groups[m["MetricName"]] = m.get("MetricGroup", "").split(";")

    @staticmethod
    def arch_std(path):
        """sbsa.json of the arm64 tree @path is in: the metrics cores
        refer to by ArchStdEvent."""
        root = path[:path.index("/arm64/") + len("/arm64/")]
        with open(os.path.join(root, "sbsa.json")) as f:
            return {m["MetricName"]: m for m in json.load(f) if "MetricName" in m}

    def fraction(self, name, value):
        """@value of metric @name as a fraction: perf's arm64 metrics
        compute percent ("1percent of slots"), the others a fraction
        that "100%" prints as percent."""
        unit = self.scale_unit.get(name) or ""
        return value / 100.0 if unit.startswith("1percent") else value

    @classmethod
    def from_perf_list(cls, cpuid, unit=None, perf="perf"):
        """The metrics the installed perf has for PERF_CPUID=cpuid, as
        `perf list --details metric` prints them: a name line, an
        optional description (naming the Unit on hybrid parts), the
        expression in brackets."""
        import subprocess
        env = dict(os.environ, PERF_CPUID=cpuid)
        out = subprocess.run([perf, "list", "--details", "metric"], env=env,
                             capture_output=True, text=True).stdout.splitlines()
        expr, i = {}, 0
        while i < len(out):
            m = re.match(r"^  (\S+)$", out[i])
            i += 1
            if not m:
                continue
            brackets = []
            while i < len(out) and re.match(r"^\s+\[.*\]$", out[i]):
                brackets.append(out[i].strip()[1:-1])
                i += 1
            if not brackets:
                continue
            desc = brackets[0] if len(brackets) > 1 else ""
            u = re.search(r"Unit: (\S+)", desc)
            if unit is not None and u and u.group(1) != unit:
                continue
            expr.setdefault(m.group(1), brackets[-1])
        return cls("perf list (PERF_CPUID=%s)" % cpuid, expr=expr)

    def tree(self, name):
        if name not in self.trees:
            if name not in self.expr:
                raise ExprError("%s: no metric %s" % (self.path, name))
            self.trees[name] = Parser(self.expr[name], self.expr, self.arm64).parse()
        return self.trees[name]

    def events(self, name, seen=None):
        """Every event the metric reads, through the metrics it uses."""
        out, seen = set(), seen if seen is not None else set()

        def walk(t):
            if t[0] == "event":
                out.add(t[1])
            elif t[0] == "metric" and t[1] not in seen:
                seen.add(t[1])
                out.update(self.events(t[1], seen))
            elif t[0] == "op":
                walk(t[2])
                walk(t[3])
            elif t[0] == "neg":
                walk(t[1])
            elif t[0] == "if":
                walk(t[1])
                walk(t[2])
                walk(t[3])
            elif t[0] == "call":
                for a in t[2]:
                    walk(a)
        walk(self.tree(name))
        return out

    def evaluate(self, name, counts, literals=None):
        literals = literals or {}

        def ev(t):
            kind = t[0]
            if kind == "num":
                return t[1]
            if kind == "event":
                if t[1] not in counts:
                    raise ExprError("%s needs event %s" % (name, t[1]))
                return float(counts[t[1]])
            if kind == "lit":
                if t[1] not in literals:
                    raise ExprError("%s needs literal %s" % (name, t[1]))
                return float(literals[t[1]])
            if kind == "metric":
                return self.evaluate(t[1], counts, literals)
            if kind == "neg":
                return -ev(t[1])
            if kind == "if":
                # perf's parser reduces both branches and the condition
                # before the choice (tools/perf/util/expr.y if_expr): a
                # division by zero in either leaves the metric no value.
                a, c, b = ev(t[1]), ev(t[2]), ev(t[3])
                return a if c else b
            if kind == "cpuid":
                if "cpuid" not in literals:
                    raise ExprError("%s needs the CPUID" % name)
                return float(midr_matches(int(t[1], 16), int(literals["cpuid"])))
            if kind == "call":
                args = [ev(a) for a in t[2]]
                if t[1] == "min":
                    return min(args)
                if t[1] == "max":
                    return max(args)
                if t[1] == "d_ratio":
                    return args[0] / args[1] if args[1] else 0.0
            if kind == "op":
                a, b = ev(t[2]), ev(t[3])
                op = t[1]
                if op == "+":
                    return a + b
                if op == "-":
                    return a - b
                if op == "*":
                    return a * b
                if op == "/":
                    if b == 0:
                        raise ZeroDivisionError("%s: division by zero" % name)
                    return a / b
                if op == "<":
                    return float(a < b)
                if op == ">":
                    return float(a > b)
                if op == "<=":
                    return float(a <= b)
                if op == ">=":
                    return float(a >= b)
                if op == "==":
                    return float(a == b)
                if op == "|":
                    return float(a != 0 or b != 0)
                if op == "^":
                    return float((a != 0) != (b != 0))
                if op == "&":
                    return float(a != 0 and b != 0)
            raise ExprError("cannot evaluate %r" % (t,))
        return ev(self.tree(name))


def jevents_fixed(path):
    """{name: encoding} of reference/jevents-fixed.json."""
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for name, text in doc["events"].items():
        enc = {}
        for term in text.split(","):
            k, _, v = term.partition("=")
            enc[k] = int(v, 0)
        out[name] = enc
    return out


class Tables:
    """reference/perf-tables: events (with perf's jevents encoding rules)
    and metrics per directory."""

    # perf encodes these names itself, whatever the JSON says
    # (reference/jevents-fixed.json: jevents.py real_event()).
    JEVENTS_FIXED = {}

    def __init__(self, root, fallback=None):
        self.root = root
        if not Tables.JEVENTS_FIXED:
            Tables.JEVENTS_FIXED.update(jevents_fixed(os.path.join(
                os.path.dirname(os.path.abspath(root)), "jevents-fixed.json")))
        # Another tables root whose files fill in events the first lacks
        # (perf 6.1's alderlake/cache.json, not in the upstream copy).
        self.fallback = fallback
        self._events = {}
        self._metrics = {}

    def path(self, rel):
        return os.path.join(self.root, rel)

    def metrics(self, rel, unit=None):
        if (rel, unit) not in self._metrics:
            self._metrics[(rel, unit)] = Metrics(self.path(rel), unit)
        return self._metrics[(rel, unit)]

    def events(self, directory):
        """{(name, unit): (file, {"event":..., "umask":..., ...}, Counter,
        CounterHTOff, RetirementLatencyMean)} of a directory."""
        if directory not in self._events:
            self._events[directory] = self._load_events(directory)
        return self._events[directory]

    def _load_events(self, directory):
        out = {}
        if directory.startswith("arm64/"):
            # The cores' files name the architecture's common events;
            # their encodings are in common-and-microarch.json.
            out.update(self._load_file(os.path.join(self.root, "arm64", "common-and-microarch.json")))
        for root in filter(None, (self.fallback, self.root)):
            d = os.path.join(root, directory)
            if os.path.isdir(d):
                out.update(self._load_dir(d))
        return out

    def _load_dir(self, d):
        out = {}
        for fname in sorted(os.listdir(d)):
            if not fname.endswith(".json") or "metrics" in fname:
                continue
            out.update(self._load_file(os.path.join(d, fname)))
        return out

    def _load_file(self, path):
        out = {}
        fname = os.path.basename(path)
        with open(path) as f:
            for e in json.load(f):
                if "EventName" not in e:
                    continue
                out[(e["EventName"], e.get("Unit"))] = (fname, self.encoding(e), e.get("Counter"),
                                                         e.get("CounterHTOff"),
                                                         e.get("RetirementLatencyMean"))
        return out

    @classmethod
    def encoding(cls, e):
        fixed = cls.JEVENTS_FIXED.get(e["EventName"].lower())
        if fixed is not None:
            enc = {"event": 0, "umask": 0, "cmask": 0, "edge": 0, "inv": 0, "any": 0}
            enc.update(fixed)
            return enc

        def num(key):
            v = e.get(key)
            return int(v.split(",")[0], 0) if v else 0
        enc = {"event": num("EventCode"), "umask": num("UMask"),
               "cmask": num("CounterMask"), "edge": num("EdgeDetect"),
               "inv": num("Invert"), "any": num("AnyThread")}
        # The extra register an event programs (jevents.py lookup_msr()).
        msr = {0x3F6: "ldlat", 0x1A6: "offcore_rsp", 0x1A7: "offcore_rsp", 0x3F7: "frontend"}
        if e.get("MSRIndex"):
            enc[msr[num("MSRIndex")]] = num("MSRValue")
        return enc

    def mapfile(self, arch="x86"):
        rows = []
        with open(self.path(arch + "/mapfile.csv")) as f:
            for line in f:
                if line.startswith("#") or line.startswith("Family-model"):
                    continue
                parts = line.strip().split(",")
                if len(parts) >= 3:
                    rows.append((parts[0], parts[2]))
        return rows

    def directory_of(self, cpuid, arch="x86"):
        """The table directory perf picks for a CPUID string (first full
        match in mapfile order)."""
        for pattern, directory in self.mapfile(arch):
            # POSIX character classes, as perf's regcomp() reads them.
            pattern = pattern.replace("[:xdigit:]", "0-9A-Fa-f")
            if re.fullmatch(pattern, cpuid):
                return directory
        return None


def parse_terms(terms):
    """"event=0xad,umask=0x10,cmask=1,edge=1" -> encoding dict."""
    enc = {"event": 0, "umask": 0, "cmask": 0, "edge": 0, "inv": 0, "any": 0}
    for t in terms.split(","):
        key, _, val = t.partition("=")
        enc[key] = int(val, 0) if val else 1
    return enc
