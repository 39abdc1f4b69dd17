/* SPDX-License-Identifier: MIT */
/* scenario.c: loads and validates the FAKEPMU_SCENARIO JSON file (the
 * truth the fake counts from), quantises fractions into PERF_METRICS bytes
 * the way the hardware does, and decides when an injected fault fires.
 * Every validation error is one "fakepmu: FILE: PATH: message" line and
 * exit status 70 (fp_fatal). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fakepmu.h"

FP_HIDDEN struct scenario fp_scen;

static const char *scen_file;

static const char *const frac_names[FR_COUNT] = {
	"retiring", "bad_speculation", "frontend_bound", "backend_bound",
	"heavy_operations", "branch_mispredicts", "fetch_latency", "memory_bound",
};

/* Fault "event" names of the topdown events, indexed by EC_* class. */
static const char *const topdown_names[EC_HW] = {
	"slots", "retiring", "bad_speculation", "frontend_bound", "backend_bound",
	"heavy_operations", "branch_mispredicts", "fetch_latency", "memory_bound",
};

/* The legacy keys, events per slot on every model: INT_MISC.UOP_DROPPING,
 * and INT_MISC.RECOVERY_CYCLES with cmask=1,edge=1 as perf's Ice Lake
 * formula uses it (INT_MISC.CLEARS_COUNT where the table names it). */
static const char *const legacy_keys[2] = { "uop_dropping", "recovery_cycles" };
static const char *const legacy_events[2] = {
	"INT_MISC.UOP_DROPPING", "INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1",
};

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{"EPERM", EPERM}, {"ENOENT", ENOENT}, {"ESRCH", ESRCH}, {"EINTR", EINTR},
	{"EIO", EIO}, {"ENXIO", ENXIO}, {"E2BIG", E2BIG}, {"EBADF", EBADF},
	{"EAGAIN", EAGAIN}, {"ENOMEM", ENOMEM}, {"EACCES", EACCES}, {"EFAULT", EFAULT},
	{"EBUSY", EBUSY}, {"EEXIST", EEXIST}, {"ENODEV", ENODEV}, {"EINVAL", EINVAL},
	{"ENFILE", ENFILE}, {"EMFILE", EMFILE}, {"ENOTTY", ENOTTY}, {"ENOSPC", ENOSPC},
	{"ENOSYS", ENOSYS}, {"EOPNOTSUPP", EOPNOTSUPP}, {"EOVERFLOW", EOVERFLOW},
	{"ETIMEDOUT", ETIMEDOUT}, {"ECANCELED", ECANCELED},
};

static void FP_PRINTF(2, 3) __attribute__((noreturn))
bad(const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (path && *path)
		fp_fatal("fakepmu: %s: %s: %s", scen_file, path, msg);
	fp_fatal("fakepmu: %s: %s", scen_file, msg);
}

/* snprintf for JSON paths: truncation of absurdly long keys is harmless. */
static void FP_PRINTF(3, 4) sp(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		fp_fatal("fakepmu: out of memory");
	return p;
}

static void check_keys(const char *path, json_t *obj, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a)
			bad(path, "unknown key \"%s\"", key);
	}
}

static double number(const char *path, json_t *v, const char *what)
{
	double d;

	if (!json_is_number(v))
		bad(path, "must be %s", what);
	d = json_number_value(v);
	if (!isfinite(d))
		bad(path, "must be %s", what);
	return d;
}

/* perf's name for @name in core PMU @p's table (canonical: an encoding the
 * table names exactly gets that name), or false when that table has no
 * event of that name.  A hybrid part's two tables name one encoding
 * differently (perf encodes CPU_CLK_UNHALTED.THREAD and .CORE as 0x3c,
 * jevents.py real_event(); cpu_atom's table lists CORE first, cpu_core's
 * THREAD): each PMU counts a scenario's event under its own name for it. */
static bool canonical_in(const struct pmu *p, const char *name, char *out, size_t len)
{
	struct fp_enc enc;

	return p->core && fp_tables_lookup(p->name, name, &enc) == 0 &&
	       fp_tables_name(p->name, &enc, out, len);
}

/* perf's name for @name in the first core PMU whose table knows it. */
static bool canonical_event(const char *name, char *out, size_t len)
{
	for (int i = 0; i < fp_fix.npmus; i++)
		if (canonical_in(&fp_fix.pmus[i], name, out, len))
			return true;
	return false;
}

/* Whether scenario events @i and @j count the same counter: they do when
 * some PMU's table gives both one name; they must then do so in every PMU
 * whose table knows both (else the scenario asks one rate of two). */
static bool same_event(const char *path, int i, int j)
{
	bool same = false, differ = false;

	for (int p = 0; p < fp_fix.npmus; p++) {
		const char *a = fp_scen.canon[i][p], *b = fp_scen.canon[j][p];

		if (!a || !b)
			continue;
		if (!strcmp(a, b))
			same = true;
		else
			differ = true;
	}
	if (same && differ)
		bad(path, "\"%s\" and \"%s\" are one event on one PMU and two on another: "
		    "state the event each PMU's table names", fp_scen.events[i], fp_scen.events[j]);
	return same;
}

static int register_event(const char *path, const char *name, bool legacy)
{
	char canon[128];
	int n = fp_scen.nevents;
	bool known = false;

	if (n == FP_EVENTS_MAX)
		bad(path, "more than %d different events", FP_EVENTS_MAX);
	fp_scen.events[n] = strdup(name);
	fp_scen.canon[n] = xcalloc((size_t)fp_fix.npmus, sizeof(char *));
	if (!fp_scen.events[n])
		fp_fatal("fakepmu: out of memory");
	for (int p = 0; p < fp_fix.npmus; p++) {
		if (canonical_in(&fp_fix.pmus[p], name, canon, sizeof(canon)))
			known = true;
		else if (legacy && fp_fix.pmus[p].core)
			snprintf(canon, sizeof(canon), "%s", name);
		else
			continue;
		fp_scen.canon[n][p] = strdup(canon);
		if (!fp_scen.canon[n][p])
			fp_fatal("fakepmu: out of memory");
	}
	if (!known && !legacy)
		bad(path, "unknown event \"%s\": not in perf's %s tables for this fixture%s",
		    name, fp_tables_dir()[0] ? fp_tables_dir() : "(none)",
		    fp_tables_dir()[0] ? "" : " (the fixture has no devices/system/cpu/modalias perf knows)");
	for (int i = 0; i < n; i++) {
		if (!same_event(path, i, n))
			continue;
		for (int p = 0; p < fp_fix.npmus; p++)
			free(fp_scen.canon[n][p]);
		free(fp_scen.canon[n]);
		free(fp_scen.events[n]);
		return i;
	}
	return fp_scen.nevents++;
}

int fp_scenario_event(const struct pmu *pmu, const char *name)
{
	int p = (int)(pmu - fp_fix.pmus);

	for (int i = 0; i < fp_scen.nevents; i++)
		if (fp_scen.canon[i][p] && !strcmp(fp_scen.canon[i][p], name))
			return i;
	return -1;
}

static double events_per_slot(const char *path, json_t *v)
{
	double d = number(path, v, "a number >= 0 (events per slot)");

	if (d < 0)
		bad(path, "must be a number >= 0 (events per slot)");
	return d;
}

/* Largest-remainder rounding of the four L1 fractions to bytes summing to
 * 0xff (ties go to the lower metric number); each L2 byte is f*255 rounded
 * to nearest, clamped to its parent's byte. */
void fp_quantise(const double f[NMETRIC], uint8_t bytes[NMETRIC])
{
	double rem[4];
	bool bumped[4] = {false, false, false, false};
	int sum = 0;

	for (int k = 0; k < 4; k++) {
		double x = f[k] * 255.0;
		double fl = floor(x);

		if (fl < 0)
			fl = 0;
		if (fl > 255)
			fl = 255;
		bytes[k] = (uint8_t)fl;
		rem[k] = x - fl;
		sum += bytes[k];
	}
	for (int left = 255 - sum; left > 0; left--) {
		int best = -1;

		for (int k = 0; k < 4; k++)
			if (!bumped[k] && bytes[k] < 255 && (best < 0 || rem[k] > rem[best]))
				best = k;
		if (best < 0)
			break;
		bumped[best] = true;
		bytes[best]++;
	}
	for (int k = 4; k < NMETRIC; k++) {
		double r = floor(f[k] * 255.0 + 0.5);
		uint8_t parent = bytes[k - 4];

		if (r < 0)
			r = 0;
		bytes[k] = r > parent ? parent : (uint8_t)r;
	}
}

static void parse_phase(const char *path, json_t *ph, bool last, struct phase *out)
{
	static const char *const keys[] = {
		"seconds", "retiring", "bad_speculation", "frontend_bound", "backend_bound",
		"heavy_operations", "branch_mispredicts", "fetch_latency", "memory_bound",
		"uop_dropping", "recovery_cycles", "events", "cgroup", NULL,
	};
	char sub[512];
	json_t *secs, *evs, *cg;
	double sum = 0;

	if (!json_is_object(ph))
		bad(path, "must be an object");
	check_keys(path, ph, keys);
	/* Which cgroup runs in the phase: truth for the per-cgroup tests'
	 * simulated backend (tests/tools/cgsim.c); the kernel counts the
	 * same whoever runs, and so does the fake. */
	cg = json_object_get(ph, "cgroup");
	if (cg && !json_is_string(cg))
		bad(path, "\"cgroup\" must be a string (a label)");
	secs = json_object_get(ph, "seconds");
	if (secs) {
		double s;

		sp(sub, sizeof(sub), "%s.seconds", path);
		s = number(sub, secs, "a number > 0");
		if (s <= 0 || s > 1e9)
			bad(sub, "must be a number > 0");
		out->end_ns = (uint64_t)llround(s * 1e9);	/* a duration for now */
	} else if (!last) {
		bad(path, "\"seconds\" is required except on the last phase");
	}
	for (int k = 0; k < FR_COUNT; k++) {
		json_t *v = json_object_get(ph, frac_names[k]);

		out->f[k] = 0;
		if (!v)
			continue;
		sp(sub, sizeof(sub), "%s.%s", path, frac_names[k]);
		out->f[k] = number(sub, v, "a number in [0,1]");
		if (out->f[k] < 0 || out->f[k] > 1)
			bad(sub, "must be a number in [0,1]");
	}
	out->ev = xcalloc(FP_EVENTS_MAX, sizeof(double));
	for (int k = 0; k < 2; k++) {
		json_t *v = json_object_get(ph, legacy_keys[k]);

		if (!v)
			continue;
		sp(sub, sizeof(sub), "%s.%s", path, legacy_keys[k]);
		out->ev[register_event(sub, legacy_events[k], true)] += events_per_slot(sub, v);
	}
	if ((evs = json_object_get(ph, "events"))) {
		const char *name;
		json_t *v;

		sp(sub, sizeof(sub), "%s.events", path);
		if (!json_is_object(evs))
			bad(sub, "must be an object of perf event names and events per slot");
		json_object_foreach(evs, name, v) {
			char sub2[768];
			double rate;
			int i;

			sp(sub2, sizeof(sub2), "%s.events.%s", path, name);
			rate = events_per_slot(sub2, v);

			i = register_event(sub2, name, false);
			if (out->ev[i] != 0)
				bad(sub2, "given twice (also as uop_dropping or recovery_cycles)");
			out->ev[i] = rate;
		}
	}
	for (int k = 0; k < 4; k++)
		sum += out->f[k];
	if (fabs(sum - 1.0) > 1e-6)
		bad(path, "retiring + bad_speculation + frontend_bound + backend_bound = %.9g, "
		    "must be 1", sum);
	for (int k = 4; k < NMETRIC; k++)
		if (out->f[k] > out->f[k - 4])
			bad(path, "%s %.9g exceeds its parent %s %.9g", frac_names[k], out->f[k],
			    frac_names[k - 4], out->f[k - 4]);
	fp_quantise(out->f, out->bytes);
}

/* One holder: {"gp": N, "fixed": [counters], "pinned": bool, "from": s,
 * "to": s}, or the older "held" object ({"gp", "fixed", "after_seconds"}:
 * pinned, from after_seconds for good). */
static void parse_holder(const char *path, json_t *v, bool held, struct holder *out)
{
	static const char *const hkeys[] = {"gp", "fixed", "pinned", "from", "to", NULL};
	static const char *const oldkeys[] = {"gp", "fixed", "after_seconds", NULL};
	char sub[512];
	json_t *h;

	if (!json_is_object(v))
		bad(path, "must be an object");
	check_keys(path, v, held ? oldkeys : hkeys);
	memset(out, 0, sizeof(*out));
	out->pinned = true;
	out->to_ns = UINT64_MAX;
	if ((h = json_object_get(v, "gp"))) {
		double n;

		sp(sub, sizeof(sub), "%s.gp", path);
		n = number(sub, h, "an integer in [0,16]");
		if (n < 0 || n > 16 || n != (int)n)
			bad(sub, "must be an integer in [0,16]");
		out->gp = (int)n;
	}
	if ((h = json_object_get(v, "fixed"))) {
		sp(sub, sizeof(sub), "%s.fixed", path);
		if (!json_is_array(h))
			bad(sub, "must be an array of fixed counter numbers (0-3)");
		for (size_t i = 0; i < json_array_size(h); i++) {
			json_t *e = json_array_get(h, i);

			if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 3)
				bad(sub, "must be an array of fixed counter numbers (0-3)");
			out->fixed[json_integer_value(e)] = true;
		}
	}
	if ((h = json_object_get(v, "pinned"))) {
		sp(sub, sizeof(sub), "%s.pinned", path);
		if (!json_is_boolean(h))
			bad(sub, "must be true or false");
		out->pinned = json_is_true(h);
	}
	if ((h = json_object_get(v, held ? "after_seconds" : "from"))) {
		double t;

		sp(sub, sizeof(sub), "%s.%s", path, held ? "after_seconds" : "from");
		t = number(sub, h, "a number >= 0");
		if (t < 0 || t > 1e6)
			bad(sub, "must be a number >= 0");
		out->from_ns = (uint64_t)(t * 1e9);
	}
	if ((h = json_object_get(v, "to"))) {
		double t;

		sp(sub, sizeof(sub), "%s.to", path);
		t = number(sub, h, "a number after \"from\"");
		if (t < 0 || t > 1e6 || (uint64_t)(t * 1e9) <= out->from_ns)
			bad(sub, "must be a number after \"from\"");
		out->to_ns = (uint64_t)(t * 1e9);
	}
	if (!out->gp && !out->fixed[0] && !out->fixed[1] && !out->fixed[2] && !out->fixed[3])
		bad(path, "holds no counter: give \"gp\" or \"fixed\"");
}

/* One "cpus" entry.  Fields it omits are taken from def (NULL when there
 * is no "default"). */
static void parse_cpucfg(const char *path, json_t *o, const struct cpucfg *def,
			 struct cpucfg *out)
{
	static const char *const keys[] = {"slots_per_second", "running", "phases", "held", "holders", NULL};
	char sub[512];
	json_t *v;

	if (!json_is_object(o))
		bad(path, "must be an object");
	check_keys(path, o, keys);
	if ((v = json_object_get(o, "slots_per_second"))) {
		double sps;

		sp(sub, sizeof(sub), "%s.slots_per_second", path);
		sps = number(sub, v, "a number >= 0");
		if (sps < 0 || sps > 1e15)
			bad(sub, "must be a number >= 0");
		out->slots_per_ns = sps / 1e9;
	} else if (def) {
		out->slots_per_ns = def->slots_per_ns;
	} else {
		bad(path, "\"slots_per_second\" is required%s",
		    strcmp(path, "cpus.default") ? " (there is no \"default\" to inherit it from)"
						  : "");
	}
	if ((v = json_object_get(o, "running"))) {
		sp(sub, sizeof(sub), "%s.running", path);
		out->running = number(sub, v, "a number in (0,1]");
		if (out->running <= 0 || out->running > 1)
			bad(sub, "must be a number in (0,1]");
	} else {
		out->running = def ? def->running : 1.0;
	}
	if ((v = json_object_get(o, "held")) || (v = json_object_get(o, "holders"))) {
		json_t *list = json_object_get(o, "holders");

		if (json_object_get(o, "held") && list)
			bad(path, "\"held\" and \"holders\" exclude each other (\"held\" is one pinned holder)");
		out->nholders = 0;
		if (list) {
			sp(sub, sizeof(sub), "%s.holders", path);
			if (!json_is_array(list) || json_array_size(list) > HOLDERS_MAX)
				bad(sub, "must be an array of at most %d holders", HOLDERS_MAX);
			for (size_t i = 0; i < json_array_size(list); i++) {
				sp(sub, sizeof(sub), "%s.holders[%zu]", path, i);
				parse_holder(sub, json_array_get(list, i), false, &out->holders[out->nholders++]);
			}
		} else {
			sp(sub, sizeof(sub), "%s.held", path);
			parse_holder(sub, v, true, &out->holders[out->nholders++]);
		}
	} else if (def) {
		out->nholders = def->nholders;
		memcpy(out->holders, def->holders, sizeof(out->holders));
	}
	if ((v = json_object_get(o, "phases"))) {
		uint64_t t = 0;

		sp(sub, sizeof(sub), "%s.phases", path);
		if (!json_is_array(v) || json_array_size(v) == 0)
			bad(sub, "must be a non-empty array");
		out->nphases = (int)json_array_size(v);
		out->phases = xcalloc((size_t)out->nphases, sizeof(*out->phases));
		for (int i = 0; i < out->nphases; i++) {
			struct phase *p = &out->phases[i];
			bool last = i == out->nphases - 1;

			sp(sub, sizeof(sub), "%s.phases[%d]", path, i);
			parse_phase(sub, json_array_get(v, (size_t)i), last, p);
			p->start_ns = t;
			p->end_ns = last ? UINT64_MAX : t + p->end_ns;
			t = p->end_ns;
		}
	} else if (def) {
		out->nphases = def->nphases;
		out->phases = def->phases;
	} else {
		bad(path, "\"phases\" is required%s",
		    strcmp(path, "cpus.default") ? " (there is no \"default\" to inherit it from)"
						  : "");
	}
}

static void parse_cpus(json_t *cpus)
{
	int n = fp_fix.ncpus;
	int *owner = xcalloc((size_t)n, sizeof(int));	/* index+1 of the key, 0 = none */
	struct cpucfg *def = NULL;
	const char **keynames;
	size_t nkeys, ki = 0;
	const char *key;
	json_t *v;
	char sub[512], err[256];

	if (!json_is_object(cpus))
		bad("cpus", "must be an object");
	nkeys = json_object_size(cpus);
	keynames = xcalloc(nkeys, sizeof(*keynames));
	fp_scen.cpu = xcalloc((size_t)n, sizeof(*fp_scen.cpu));
	if ((v = json_object_get(cpus, "default"))) {
		def = xcalloc(1, sizeof(*def));
		parse_cpucfg("cpus.default", v, NULL, def);
	}
	/* Keys are visited in file order (jansson keeps insertion order). */
	json_object_foreach(cpus, key, v) {
		uint8_t *set;
		struct cpucfg *cfg;

		if (!strcmp(key, "default"))
			continue;
		keynames[ki] = key;
		set = xcalloc((size_t)n, 1);
		if (fp_parse_cpulist(key, n, set, err, sizeof(err)) < 0)
			bad("cpus", "key \"%s\" is not a valid cpulist: %s", key, err);
		for (int c = 0; c < n; c++) {
			if (!set[c])
				continue;
			if (!fp_fix.possible[c])
				bad("cpus", "key \"%s\": CPU %d is not a possible CPU of the fixture",
				    key, c);
			if (owner[c])
				bad("cpus", "keys \"%s\" and \"%s\" overlap on CPU %d",
				    keynames[owner[c] - 1], key, c);
			owner[c] = (int)ki + 1;
		}
		cfg = xcalloc(1, sizeof(*cfg));
		sp(sub, sizeof(sub), "cpus.%s", key);
		parse_cpucfg(sub, v, def, cfg);
		for (int c = 0; c < n; c++)
			if (set[c])
				fp_scen.cpu[c] = cfg;
		free(set);
		ki++;
	}
	if (!def) {
		uint8_t *missing = xcalloc((size_t)n, 1);
		bool any = false;

		for (int c = 0; c < n; c++)
			if (fp_fix.possible[c] && !fp_scen.cpu[c])
				missing[c] = 1, any = true;
		if (any) {
			char list[512];

			fp_format_cpulist(missing, n, list, sizeof(list));
			bad("cpus", "\"default\" is required: CPUs %s have no entry", list);
		}
		free(missing);
	} else {
		for (int c = 0; c < n; c++)
			if (!fp_scen.cpu[c])
				fp_scen.cpu[c] = def;
	}
	free(keynames);
	free(owner);
}

static int errno_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (!strcmp(errnos[i].name, name))
			return errnos[i].value;
	return 0;
}

static void parse_fault(const char *path, json_t *o, struct fault *f)
{
	static const char *const keys[] = {
		"cpus", "op", "event", "errno", "short", "delay_ms", "count", "after_seconds", NULL,
	};
	int n = fp_fix.ncpus;
	char sub[512];
	json_t *v, *e, *s;
	long count = -1;

	if (!json_is_object(o))
		bad(path, "must be an object");
	check_keys(path, o, keys);
	f->cpus = xcalloc((size_t)n, 1);
	f->remaining = xcalloc((size_t)n, sizeof(long));
	f->evclass = EC_ANY;
	if ((v = json_object_get(o, "cpus"))) {
		char err[256];

		sp(sub, sizeof(sub), "%s.cpus", path);
		if (!json_is_string(v))
			bad(sub, "must be a cpulist string");
		if (fp_parse_cpulist(json_string_value(v), n, f->cpus, err, sizeof(err)) < 0)
			bad(sub, "\"%s\" is not a valid cpulist: %s", json_string_value(v), err);
	} else {
		memset(f->cpus, 1, (size_t)n);
	}
	v = json_object_get(o, "op");
	sp(sub, sizeof(sub), "%s.op", path);
	if (!v)
		bad(path, "\"op\" is required (\"open\" or \"read\")");
	if (!json_is_string(v) ||
	    (strcmp(json_string_value(v), "open") && strcmp(json_string_value(v), "read")))
		bad(sub, "must be \"open\" or \"read\"");
	f->op = strcmp(json_string_value(v), "open") ? FO_READ : FO_OPEN;
	e = json_object_get(o, "errno");
	s = json_object_get(o, "short");
	if (e) {
		sp(sub, sizeof(sub), "%s.errno", path);
		if (!json_is_string(e))
			bad(sub, "must be an errno name such as \"EACCES\"");
		f->err = errno_by_name(json_string_value(e));
		if (!f->err)
			bad(sub, "unknown errno name \"%s\"", json_string_value(e));
	}
	if (s) {
		sp(sub, sizeof(sub), "%s.short", path);
		if (f->op != FO_READ)
			bad(sub, "only allowed with \"op\": \"read\"");
		if (!json_is_true(s))
			bad(sub, "must be true");
		f->short_read = true;
	}
	if ((v = json_object_get(o, "event"))) {
		sp(sub, sizeof(sub), "%s.event", path);
		if (!json_is_string(v))
			bad(sub, "must be an event name");
		for (int k = 0; k < EC_HW; k++)
			if (!strcmp(topdown_names[k], json_string_value(v)))
				f->evclass = k;
		for (int k = 0; k < 2 && f->evclass == EC_ANY; k++)
			if (!strcmp(legacy_keys[k], json_string_value(v)))
				snprintf(f->evname, sizeof(f->evname), "%s", legacy_events[k]);
		if (f->evclass == EC_ANY && !f->evname[0] &&
		    canonical_event(json_string_value(v), f->evname, sizeof(f->evname)))
			/* Kept as the scenario names it: each PMU's table
			 * says which counter that is there (fp_fault_fire). */
			snprintf(f->evname, sizeof(f->evname), "%s", json_string_value(v));
		else if (f->evclass == EC_ANY && !f->evname[0])
			bad(sub, "unknown event \"%s\" (slots, retiring, bad_speculation, "
			    "frontend_bound, backend_bound, heavy_operations, branch_mispredicts, "
			    "fetch_latency, memory_bound, uop_dropping, recovery_cycles, or an "
			    "event of perf's %s tables)",
			    json_string_value(v), fp_tables_dir()[0] ? fp_tables_dir() : "(none)");
	}
	if ((v = json_object_get(o, "delay_ms"))) {
		sp(sub, sizeof(sub), "%s.delay_ms", path);
		if (f->op != FO_READ)
			bad(sub, "only allowed with \"op\": \"read\"");
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 600000)
			bad(sub, "must be an integer from 1 to 600000");
		f->delay_ms = (unsigned)json_integer_value(v);
	}
	if (f->op == FO_OPEN && !e)
		bad(path, "\"errno\" is required for an open fault");
	if (f->op == FO_READ && !!e + !!s + !!f->delay_ms != 1)
		bad(path, "a read fault takes one of \"errno\", \"short\": true or \"delay_ms\"");
	if ((v = json_object_get(o, "count"))) {
		sp(sub, sizeof(sub), "%s.count", path);
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			bad(sub, "must be an integer >= 1");
		count = (long)json_integer_value(v);
	}
	for (int c = 0; c < n; c++)
		f->remaining[c] = count;
	if ((v = json_object_get(o, "after_seconds"))) {
		double a;

		sp(sub, sizeof(sub), "%s.after_seconds", path);
		a = number(sub, v, "a number >= 0");
		if (a < 0 || a > 1e9)
			bad(sub, "must be a number >= 0");
		f->after_ns = (uint64_t)llround(a * 1e9);
	}
}

/* One core's thread activity: [{"seconds": s, "both": x, "first": y,
 * "second": z}, ...], the shares of each phase when both threads run,
 * only the first (the lowest-numbered CPU of thread_siblings_list), only
 * the second; neither is what is left. */
static struct smtline *parse_smtline(const char *path, json_t *v)
{
	static const char *const keys[] = {"seconds", "both", "first", "second", NULL};
	static const char *const shares[] = {"both", "first", "second"};
	struct smtline *line;
	uint64_t t = 0;
	char sub[512];

	if (!json_is_array(v) || json_array_size(v) == 0)
		bad(path, "must be a non-empty array of phases");
	line = xcalloc(1, sizeof(*line));
	line->n = (int)json_array_size(v);
	line->ph = xcalloc((size_t)line->n, sizeof(*line->ph));
	for (int i = 0; i < line->n; i++) {
		json_t *ph = json_array_get(v, (size_t)i), *secs;
		struct smtphase *p = &line->ph[i];
		double sum = 0, *dst[3] = { &p->both, &p->first, &p->second };

		sp(sub, sizeof(sub), "%s[%d]", path, i);
		if (!json_is_object(ph))
			bad(sub, "must be an object");
		check_keys(sub, ph, keys);
		for (int k = 0; k < 3; k++) {
			json_t *x = json_object_get(ph, shares[k]);
			char sub2[600];

			*dst[k] = 0;
			if (!x)
				continue;
			sp(sub2, sizeof(sub2), "%s.%s", sub, shares[k]);
			*dst[k] = number(sub2, x, "a number in [0,1]");
			if (*dst[k] < 0 || *dst[k] > 1)
				bad(sub2, "must be a number in [0,1]");
			sum += *dst[k];
		}
		if (sum > 1 + 1e-9)
			bad(sub, "both + first + second = %.9g, must be at most 1 (neither is the rest)", sum);
		p->start_ns = t;
		secs = json_object_get(ph, "seconds");
		if (secs) {
			double s = number(sub, secs, "a number > 0");

			if (s <= 0 || s > 1e9)
				bad(sub, "\"seconds\" must be a number > 0");
			t += (uint64_t)llround(s * 1e9);
			p->end_ns = i == line->n - 1 ? UINT64_MAX : t;
		} else if (i != line->n - 1) {
			bad(sub, "\"seconds\" is required except on the last phase");
		} else {
			p->end_ns = UINT64_MAX;
		}
	}
	return line;
}

/* "smt": {"default" or a cpulist: phases}.  A core follows the entry of
 * its first thread; its other threads must be in the same entry.  A core
 * of one thread (SMT off) has no second thread and no "both". */
static void parse_smt(json_t *smt)
{
	int n = fp_fix.ncpus;
	struct smtline *def = NULL;
	const char *key;
	json_t *v;
	char err[256], sub[512];

	if (!json_is_object(smt))
		bad("smt", "must be an object of cpulists (or \"default\") and phases");
	fp_scen.smt = xcalloc((size_t)n, sizeof(*fp_scen.smt));
	if ((v = json_object_get(smt, "default")))
		def = parse_smtline("smt.default", v);
	json_object_foreach(smt, key, v) {
		uint8_t *set;
		struct smtline *line;

		if (!strcmp(key, "default"))
			continue;
		set = xcalloc((size_t)n, 1);
		if (fp_parse_cpulist(key, n, set, err, sizeof(err)) < 0)
			bad("smt", "key \"%s\" is not a valid cpulist: %s", key, err);
		sp(sub, sizeof(sub), "smt.%s", key);
		line = parse_smtline(sub, v);
		for (int c = 0; c < n; c++) {
			if (!set[c])
				continue;
			if (!fp_fix.possible[c])
				bad("smt", "key \"%s\": CPU %d is not a possible CPU of the fixture", key, c);
			if (fp_scen.smt[c])
				bad("smt", "key \"%s\": CPU %d is in another key too", key, c);
			fp_scen.smt[c] = line;
		}
		free(set);
	}
	for (int c = 0; c < n; c++)
		if (fp_fix.possible[c] && !fp_scen.smt[c])
			fp_scen.smt[c] = def;
	for (int c = 0; c < n; c++) {
		int first = fp_fix.core_first[c];
		const struct smtline *line = fp_scen.smt[c];

		if (!fp_fix.possible[c])
			continue;
		if (line != fp_scen.smt[first])
			bad("smt", "CPUs %d and %d are threads of one core: they must be in the same key", first, c);
		for (int i = 0; line && fp_fix.core_threads[c] < 2 && i < line->n; i++)
			if (line->ph[i].both > 0 || line->ph[i].second > 0)
				bad("smt", "CPU %d's core has one thread: phase %d cannot have \"both\" or \"second\"", c, i);
	}
}

void fp_scenario_load(const char *path)
{
	static const char *const keys[] = {"cpus", "faults", "mediated_vpmu", "gp_counters", "filtered",
					   "smt", "tsc_hz", "crystal_hz", NULL};
	json_error_t jerr;
	json_t *root, *v;

	scen_file = path;
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (jerr.line <= 0)
			fp_fatal("fakepmu: %s: cannot load: %s", path, jerr.text);
		fp_fatal("fakepmu: %s:%d:%d: invalid JSON: %s", path, jerr.line, jerr.column,
			 jerr.text);
	}
	if (!json_is_object(root))
		bad(NULL, "the scenario must be a JSON object");
	check_keys(NULL, root, keys);
	v = json_object_get(root, "cpus");
	if (!v)
		bad(NULL, "\"cpus\" is required");
	parse_cpus(v);
	if ((v = json_object_get(root, "filtered"))) {
		if (!json_is_array(v) || json_array_size(v) > FP_EVENTS_MAX)
			bad("filtered", "must be an array of perf event names");
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *e = json_array_get(v, i);

			if (!json_is_string(e))
				bad("filtered", "must be an array of perf event names");
			fp_scen.filtered[fp_scen.nfiltered++] = strdup(json_string_value(e));
		}
	}
	/* Defaults: a 2.1 GHz TSC and the 25 MHz crystal of the Xeon
	 * Scalable parts (McCalpin, seeds/003). */
	fp_scen.tsc_hz = 2.1e9;
	fp_scen.crystal_hz = 2.5e7;
	if ((v = json_object_get(root, "tsc_hz"))) {
		fp_scen.tsc_hz = number("tsc_hz", v, "a number > 0");
		if (fp_scen.tsc_hz <= 0)
			bad("tsc_hz", "must be a number > 0");
	}
	if ((v = json_object_get(root, "crystal_hz"))) {
		fp_scen.crystal_hz = number("crystal_hz", v, "a number > 0");
		if (fp_scen.crystal_hz <= 0)
			bad("crystal_hz", "must be a number > 0");
	}
	if ((v = json_object_get(root, "smt")))
		parse_smt(v);
	if ((v = json_object_get(root, "gp_counters"))) {
		double n = number("gp_counters", v, "an integer in [1,16]");

		if (n < 1 || n > 16 || n != (int)n)
			bad("gp_counters", "must be an integer in [1,16]");
		fp_scen.gp_counters = (int)n;
	}
	if ((v = json_object_get(root, "mediated_vpmu"))) {
		if (!json_is_boolean(v))
			bad("mediated_vpmu", "must be true or false");
		fp_scen.mediated_vpmu = json_is_true(v);
	}
	if ((v = json_object_get(root, "faults"))) {
		if (!json_is_array(v))
			bad("faults", "must be an array");
		fp_scen.nfaults = (int)json_array_size(v);
		fp_scen.faults = xcalloc((size_t)fp_scen.nfaults, sizeof(*fp_scen.faults));
		for (int i = 0; i < fp_scen.nfaults; i++) {
			char sub[64];

			sp(sub, sizeof(sub), "faults[%d]", i);
			parse_fault(sub, json_array_get(v, (size_t)i), &fp_scen.faults[i]);
		}
	}
	json_decref(root);
}

/* Whether @given, an event as the scenario names it, is @evname, perf's
 * name of what @pmu opened. */
static bool names_event(const struct pmu *pmu, const char *given, const char *evname)
{
	char canon[128];

	if (canonical_in(pmu, given, canon, sizeof(canon)))
		return !strcmp(canon, evname);
	return !strcmp(given, evname);
}

/* The first active fault matching (op, cpu, event class), with its per-CPU
 * count consumed; NULL when none fires. */
const struct fault *fp_fault_fire(enum fault_op op, int cpu, int evclass,
				  const struct pmu *pmu, const char *evname)
{
	uint64_t now = 0;
	bool have_now = false;

	for (int i = 0; i < fp_scen.nfaults; i++) {
		struct fault *f = &fp_scen.faults[i];

		if (f->op != op || !f->cpus[cpu] || f->remaining[cpu] == 0)
			continue;
		if (f->evclass != EC_ANY && f->evclass != evclass)
			continue;
		if (f->evname[0] && (!evname || !pmu || !names_event(pmu, f->evname, evname)))
			continue;
		if (f->after_ns) {
			if (!have_now)
				now = fp_now_ns(), have_now = true;
			if (now < f->after_ns)
				continue;
		}
		if (f->remaining[cpu] > 0)
			f->remaining[cpu]--;
		return f;
	}
	return NULL;
}
