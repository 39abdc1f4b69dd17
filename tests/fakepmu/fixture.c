/* SPDX-License-Identifier: MIT */
/* fixture.c: what the fake learns from the FAKEPMU_SYSFS tree: possible
 * CPUs, the PMUs (type, cpus, whether events/slots and
 * events/topdown-heavy-ops exist) and, lazily, which CPUs are online.
 * Like the kernel it never parses format/ files: bit positions are x86's. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakepmu.h"

FP_HIDDEN struct fixture fp_fix;

/* Which online files changed: inotify on devices/system/cpu and every
 * cpuN directory (set-online renames a new file into place), drained at
 * most this often; only a file it names is stat'ed and read again.  A group
 * read then costs no syscall, and the daemon's measured time is its own.
 * Without inotify (no instance left), every file is re-checked (stat,
 * then read if changed) at most this often instead. */
#define RECHECK_NS 5000000ULL

struct watch {
	bool known;
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	uint64_t checked_ns;		/* real monotonic time of the last stat */
};

static struct {
	struct watch w;
	uint8_t *online;		/* [ncpus]; all 1 when the file is missing */
	int64_t mtime_rel;
} glob;

struct cpuwatch {
	struct watch w;
	bool online;			/* cpuN/online; true when missing (cpu0) */
	int64_t mtime_rel;
};
static struct cpuwatch *cpuw;

static void watch_online_files(void);

#define IN_ONLY_DIR_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | \
			    IN_CLOSE_WRITE | IN_ATTRIB | IN_ONLYDIR)

static struct {
	int fd;			/* -1: polling */
	int parent_wd;
	int *wd_cpu;		/* [ncpus]: each cpuN directory's watch */
	uint64_t drained_ns;
	bool global_dirty;
	bool *cpu_dirty;	/* [ncpus] */
} ino = { .fd = -1 };

static void fixture_path(char *buf, size_t len, const char *rel)
{
	if ((size_t)snprintf(buf, len, "%s/%s", fp_fix.root, rel) >= len)
		fp_fatal("fakepmu: FAKEPMU_SYSFS=%s: path too long", fp_fix.root);
}

static void read_required(const char *rel, char *buf, size_t len)
{
	char path[8192];

	fixture_path(path, sizeof(path), rel);
	if (fp_read_file(path, buf, len) < 0)
		fp_fatal("fakepmu: FAKEPMU_SYSFS=%s: cannot read %s: %s",
			 fp_fix.root, rel, strerror(errno));
}

static bool exists(const char *rel)
{
	char path[8192];
	struct stat st;

	fixture_path(path, sizeof(path), rel);
	return stat(path, &st) == 0;
}

/* arm64: whether the PMU lists @perf_name in its events/ (the kernel does
 * for what PMCEID says the CPU implements). */
bool fp_arm_event_listed(const char *pmu, const char *perf_name)
{
	char rel[256];
	int n = snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/events/", pmu);

	for (const char *p = perf_name; *p && *p != ',' && n < (int)sizeof(rel) - 1; p++)
		rel[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	rel[n] = '\0';
	return exists(rel);
}

static void load_possible(void)
{
	char buf[4096], err[256];
	uint8_t *big;
	int n = 0;

	read_required("devices/system/cpu/possible", buf, sizeof(buf));
	/* First pass with a generous bound to learn the highest CPU. */
	big = calloc(65536, 1);
	if (!big)
		fp_fatal("fakepmu: out of memory");
	if (fp_parse_cpulist(buf, 65536, big, err, sizeof(err)) < 0)
		fp_fatal("fakepmu: FAKEPMU_SYSFS=%s: devices/system/cpu/possible: %s",
			 fp_fix.root, err);
	for (int i = 0; i < 65536; i++)
		if (big[i])
			n = i + 1;
	fp_fix.ncpus = n;
	fp_fix.possible = realloc(big, (size_t)n);
	if (!fp_fix.possible)
		fp_fatal("fakepmu: out of memory");
}

static int pmu_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pmu *)a)->name, ((const struct pmu *)b)->name);
}

static void load_pmus(void)
{
	char path[8192], rel[1024], buf[4096], err[256];
	DIR *d;
	struct dirent *de;
	int cap = 0;

	fixture_path(path, sizeof(path), "bus/event_source/devices");
	d = opendir(path);
	if (!d)
		fp_fatal("fakepmu: FAKEPMU_SYSFS=%s: cannot open bus/event_source/devices: %s",
			 fp_fix.root, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		struct pmu *p;
		char *end;
		unsigned long t;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(p->name))
			continue;
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/type", de->d_name);
		if (!exists(rel))
			continue;
		if (fp_fix.npmus == cap) {
			cap = cap ? cap * 2 : 16;
			fp_fix.pmus = realloc(fp_fix.pmus, (size_t)cap * sizeof(*fp_fix.pmus));
			if (!fp_fix.pmus)
				fp_fatal("fakepmu: out of memory");
		}
		p = &fp_fix.pmus[fp_fix.npmus++];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", de->d_name);
		read_required(rel, buf, sizeof(buf));
		errno = 0;
		t = strtoul(buf, &end, 10);
		if (errno || end == buf || (*end && *end != '\n') || t > UINT32_MAX)
			fp_fatal("fakepmu: FAKEPMU_SYSFS=%s: %s: not a PMU type number",
				 fp_fix.root, rel);
		p->type = (uint32_t)t;
		/* arm64's core PMUs: armv8_pmuv3_0 (ACPI), armv8_cortex_a76 or
		 * armv9_neoverse_n2 (device tree), as arm_pmuv3.c names them. */
		/* arch/x86/events/msr.c's "msr": emulated for its TSC. */
		p->msr = !strcmp(p->name, "msr");
		p->core = !strcmp(p->name, "cpu") || !strcmp(p->name, "cpu_core") ||
			  !strcmp(p->name, "cpu_atom") || !strncmp(p->name, "armv8_", 6) ||
			  !strncmp(p->name, "armv9_", 6);
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/events/slots", p->name);
		p->has_slots = p->core && exists(rel);
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/events/topdown-heavy-ops",
			 p->name);
		p->nmetrics = !p->has_slots ? 0 : exists(rel) ? 8 : 4;
		/* Lunar Lake's and Arrow Lake's E-cores (arch/x86/events/intel/
		 * core.c: case INTEL_LUNARLAKE_M, INTEL_ARROWLAKE names the PMUs
		 * lunarlake_hybrid; intel_pmu_init_skt() gives cpu_atom
		 * intel_skt_event_constraints, fixed counters 4-6 among them,
		 * which bare metal's CPUID enumerates). */
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/caps/pmu_name", p->name);
		if (!strcmp(p->name, "cpu_atom") && exists(rel)) {
			read_required(rel, buf, sizeof(buf));
			buf[strcspn(buf, "\n")] = '\0';
			/* Arrow Lake-H's and Panther Lake's too (case
			 * INTEL_ARROWLAKE_H, and INTEL_PANTHERLAKE_L's
			 * lnl_common: intel_pmu_init_skt() for cpu_atom), and
			 * Nova Lake's Arctic Wolf (case INTEL_NOVALAKE:
			 * intel_pmu_init_arw() gives it intel_arw_event_constraints,
			 * the same three codes on fixed counters 4-6;
			 * reference/kernel/intel-core-nvl-constraints.c). */
			p->skt_fixed = !strcmp(buf, "lunarlake_hybrid") || !strcmp(buf, "arrowlake_h_hybrid") ||
				       !strcmp(buf, "pantherlake_hybrid") || !strcmp(buf, "novalake_hybrid");
		}
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/cpus", p->name);
		if (p->core && exists(rel)) {
			read_required(rel, buf, sizeof(buf));
			p->cpus = calloc((size_t)fp_fix.ncpus, 1);
			if (!p->cpus)
				fp_fatal("fakepmu: out of memory");
			if (fp_parse_cpulist(buf, fp_fix.ncpus, p->cpus, err, sizeof(err)) < 0)
				fp_fatal("fakepmu: FAKEPMU_SYSFS=%s: %s: %s", fp_fix.root, rel, err);
			/* The CPUs of this type offline now (tests/fixtures/
			 * set-online keeps them in .offline, as the kernel keeps
			 * a CPU's type): members whose opens get ENOENT until
			 * they are back online (perf.c). */
			snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/.offline", p->name);
			if (exists(rel)) {
				uint8_t *away = calloc((size_t)fp_fix.ncpus, 1);

				read_required(rel, buf, sizeof(buf));
				if (!away || fp_parse_cpulist(buf, fp_fix.ncpus, away, err, sizeof(err)) < 0)
					fp_fatal("fakepmu: FAKEPMU_SYSFS=%s: %s: %s", fp_fix.root, rel, err);
				for (int c = 0; c < fp_fix.ncpus; c++)
					p->cpus[c] |= away[c];
				free(away);
			}
		}
	}
	closedir(d);
	/* readdir order is arbitrary; keep lookups deterministic. */
	qsort(fp_fix.pmus, (size_t)fp_fix.npmus, sizeof(*fp_fix.pmus), pmu_cmp);
}

/* The hardware behind the PMUs: perf's tables for the CPU the modalias
 * names, the general-purpose counters each core PMU has (the highest
 * counter the table's events list, else the vendor's architectural
 * number: 8 on Intel since Ice Lake, 6 core counters on AMD since
 * Zen), and the rotation interval of multiplexing. */
static void load_hardware(void)
{
	char buf[4096];
	char path[8192];
	long mux = 4;

	char modalias[4096];
	int stepping = -1;
	bool smt_off;

	fixture_path(path, sizeof(path), "devices/system/cpu/modalias");
	if (fp_read_file(path, modalias, sizeof(modalias)) <= 0)
		modalias[0] = '\0';
	/* The stepping, which sysfs does not give, as /proc/cpuinfo would:
	 * the fixture's proc/cpuinfo, when it has one. */
	fixture_path(path, sizeof(path), "proc/cpuinfo");
	if (fp_read_file(path, buf, sizeof(buf)) > 0) {
		const char *st = strstr(buf, "\nstepping");

		if (st && (st = strchr(st, ':')))
			stepping = atoi(st + 1);
	}
	if (strstr(modalias, "type:aarch64")) {
		/* perf reads the MIDR of the PMU's first CPU; the fixtures'
		 * CPUs are all one kind. */
		char midr[64];

		fixture_path(path, sizeof(path), "devices/system/cpu/cpu0/regs/identification/midr_el1");
		if (fp_read_file(path, midr, sizeof(midr)) <= 0)
			midr[0] = '\0';
		fp_fix.arm = true;
		fp_tables_load_arm(midr);
	} else {
		fp_tables_load(modalias[0] ? modalias : NULL, stepping);
	}
	fixture_path(path, sizeof(path), "devices/system/cpu/smt/active");
	smt_off = fp_read_file(path, buf, sizeof(buf)) > 0 && buf[0] == '0';
	fp_fix.smt_off = smt_off;
	/* The NMI watchdog is the running kernel's, not the fixture's. */
	fp_fix.watchdog = fp_read_file("/proc/sys/kernel/nmi_watchdog", buf, sizeof(buf)) > 0 &&
			  buf[0] == '1';
	for (int i = 0; i < fp_fix.npmus; i++) {
		struct pmu *p = &fp_fix.pmus[i];
		char rel[256];

		if (!p->core)
			continue;
		p->gp_counters = fp_tables_gp_counters(p->name);
		if (p->gp_counters <= 0)
			p->gp_counters = fp_fix.amd || fp_fix.arm ? 6 : 8;
		/* Before Ice Lake, CPUID leaf 0xA gives a thread 4 counters with
		 * SMT and the core's 8 without (the tables list 0-3). */
		if (!fp_fix.amd && p->gp_counters == 4 && smt_off)
			p->gp_counters = 8;
		/* allow_tsx_force_abort=0: the kernel keeps PMC3 for the TSX
		 * microcode workaround (tfa_get_event_constraints()). */
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/allow_tsx_force_abort", p->name);
		fixture_path(path, sizeof(path), rel);
		if (fp_read_file(path, buf, sizeof(buf)) > 0 && buf[0] == '0' && p->gp_counters > 3)
			p->gp_counters--;
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/perf_event_mux_interval_ms",
			 p->name);
		fixture_path(path, sizeof(path), rel);
		if (fp_read_file(path, buf, sizeof(buf)) > 0 && atol(buf) > 0)
			mux = atol(buf);
	}
	fp_fix.mux_ns = (uint64_t)mux * 1000000ULL;
}

/* The threads of each CPU's core (cpuN/topology/thread_siblings_list,
 * where the kernel shows it; a CPU it lists for a sibling whose own
 * directory is gone takes the sibling's): its first CPU and its place in
 * the list. */
static void load_siblings(void)
{
	char rel[256], buf[4096], err[256];
	uint8_t *set = calloc((size_t)fp_fix.ncpus, 1);

	fp_fix.core_first = calloc((size_t)fp_fix.ncpus, sizeof(int));
	fp_fix.thread_of = calloc((size_t)fp_fix.ncpus, sizeof(int));
	fp_fix.core_threads = calloc((size_t)fp_fix.ncpus, sizeof(int));
	if (!set || !fp_fix.core_first || !fp_fix.thread_of || !fp_fix.core_threads)
		fp_fatal("fakepmu: out of memory");
	for (int c = 0; c < fp_fix.ncpus; c++) {
		fp_fix.core_first[c] = c;
		fp_fix.core_threads[c] = 1;
	}
	for (int c = 0; c < fp_fix.ncpus; c++) {
		int first = -1, k = 0;

		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
		if (!fp_fix.possible[c] || !exists(rel))
			continue;
		read_required(rel, buf, sizeof(buf));
		memset(set, 0, (size_t)fp_fix.ncpus);
		if (fp_parse_cpulist(buf, fp_fix.ncpus, set, err, sizeof(err)) < 0)
			fp_fatal("fakepmu: FAKEPMU_SYSFS=%s: %s: %s", fp_fix.root, rel, err);
		for (int s = 0; s < fp_fix.ncpus; s++)
			if (set[s]) {
				if (first < 0)
					first = s;
				fp_fix.core_first[s] = first;
				fp_fix.thread_of[s] = k++;
			}
		for (int s = 0; s < fp_fix.ncpus; s++)
			if (set[s])
				fp_fix.core_threads[s] = k;
	}
	free(set);
}

void fp_fixture_load(const char *root)
{
	if (strlen(root) >= sizeof(fp_fix.root))
		fp_fatal("fakepmu: FAKEPMU_SYSFS: path too long");
	snprintf(fp_fix.root, sizeof(fp_fix.root), "%s", root);
	load_possible();
	load_pmus();
	load_siblings();
	load_hardware();
	glob.online = calloc((size_t)fp_fix.ncpus, 1);
	cpuw = calloc((size_t)fp_fix.ncpus, sizeof(*cpuw));
	if (!glob.online || !cpuw)
		fp_fatal("fakepmu: out of memory");
	watch_online_files();
}

const struct pmu *fp_pmu_by_type(uint32_t type)
{
	for (int i = 0; i < fp_fix.npmus; i++)
		if (fp_fix.pmus[i].type == type)
			return &fp_fix.pmus[i];
	return NULL;
}

/* The core PMU that generic (PERF_TYPE_HARDWARE/HW_CACHE) events of this CPU
 * go to: `cpu`, or on a hybrid part the one whose cpus file lists it. */
const struct pmu *fp_core_pmu_for_cpu(int cpu)
{
	for (int i = 0; i < fp_fix.npmus; i++) {
		const struct pmu *p = &fp_fix.pmus[i];

		if (p->core && (!p->cpus || p->cpus[cpu]))
			return p;
	}
	return NULL;
}

/* Stats path (when polling: if the last check is older than RECHECK_NS);
 * returns 1 when the file changed (or appeared), 0 when unchanged, -1 when
 * it does not exist. */
static int watch_check(struct watch *w, const char *path)
{
	uint64_t now = fp_mono_ns();
	struct stat st;
	int64_t mt;

	if (ino.fd < 0 && w->checked_ns && now - w->checked_ns < RECHECK_NS)
		return w->known ? 0 : -1;
	w->checked_ns = now;
	if (stat(path, &st) < 0) {
		bool was = w->known;

		w->known = false;
		return was ? 1 : -1;
	}
	mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (w->known && w->dev == st.st_dev && w->ino == st.st_ino &&
	    w->size == st.st_size && w->mtime_ns == mt)
		return 0;
	w->known = true;
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	w->size = st.st_size;
	w->mtime_ns = mt;
	return 1;
}

static void watch_cpu_dir(int cpu)
{
	char path[8192], rel[64];

	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d", cpu);
	fixture_path(path, sizeof(path), rel);
	ino.wd_cpu[cpu] = inotify_add_watch(ino.fd, path, IN_ONLY_DIR_EVENTS);
	ino.cpu_dirty[cpu] = true;
}

static void watch_online_files(void)
{
	char path[8192];

	ino.wd_cpu = malloc((size_t)fp_fix.ncpus * sizeof(*ino.wd_cpu));
	ino.cpu_dirty = malloc((size_t)fp_fix.ncpus * sizeof(*ino.cpu_dirty));
	if (!ino.wd_cpu || !ino.cpu_dirty)
		fp_fatal("fakepmu: out of memory");
	ino.global_dirty = true;
	for (int cpu = 0; cpu < fp_fix.ncpus; cpu++) {
		ino.wd_cpu[cpu] = -1;
		ino.cpu_dirty[cpu] = true;
	}
	ino.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino.fd < 0)
		return;
	fixture_path(path, sizeof(path), "devices/system/cpu");
	ino.parent_wd = inotify_add_watch(ino.fd, path, IN_ONLY_DIR_EVENTS);
	if (ino.parent_wd < 0) {
		fp_real_close(ino.fd);
		ino.fd = -1;
		return;
	}
	for (int cpu = 0; cpu < fp_fix.ncpus; cpu++)
		watch_cpu_dir(cpu); /* -1 for a directory that is not there yet */
}

static int cpu_of_name(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "cpu", 3) != 0 || name[3] < '0' || name[3] > '9')
		return -1;
	n = strtol(name + 3, &end, 10);
	return *end == '\0' && n < fp_fix.ncpus ? (int)n : -1;
}

/* Marks the files the events since the last drain name as changed. */
static void drain_events(void)
{
	uint64_t now = fp_mono_ns();
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	if (ino.fd < 0 || (ino.drained_ns && now - ino.drained_ns < RECHECK_NS))
		return;
	ino.drained_ns = now;
	while ((n = fp_real_read(ino.fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			const char *name = ev->len ? ev->name : "";

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				ino.global_dirty = true;
				for (int cpu = 0; cpu < fp_fix.ncpus; cpu++)
					ino.cpu_dirty[cpu] = true;
			} else if (ev->wd == ino.parent_wd) {
				int cpu = cpu_of_name(name);

				if (strcmp(name, "online") == 0)
					ino.global_dirty = true;
				else if (cpu >= 0 && (ev->mask & (IN_CREATE | IN_MOVED_TO)))
					watch_cpu_dir(cpu);
			} else if (strcmp(name, "online") == 0) {
				for (int cpu = 0; cpu < fp_fix.ncpus; cpu++)
					if (ino.wd_cpu[cpu] == ev->wd)
						ino.cpu_dirty[cpu] = true;
			}
		}
	}
}

static void refresh_global(void)
{
	static char buf[65536];	/* up to 8192 CPUs; static: we run under the lock */
	char path[8192], err[256];
	int r;

	if (ino.fd >= 0 && !ino.global_dirty)
		return;
	ino.global_dirty = false;
	fixture_path(path, sizeof(path), "devices/system/cpu/online");
	r = watch_check(&glob.w, path);
	if (r == 0)
		return;
	memset(glob.online, 1, (size_t)fp_fix.ncpus);
	glob.mtime_rel = 0;
	if (r < 0 || fp_read_file(path, buf, sizeof(buf)) < 0)
		return;
	memset(glob.online, 0, (size_t)fp_fix.ncpus);
	/* A file being rewritten is replaced by rename (set-online), so a
	 * parse error means a broken fixture: treat everything as online. */
	if (fp_parse_cpulist(buf, fp_fix.ncpus, glob.online, err, sizeof(err)) < 0)
		memset(glob.online, 1, (size_t)fp_fix.ncpus);
	glob.mtime_rel = fp_realtime_to_rel_ns(glob.w.mtime_ns);
}

static void refresh_cpu(int cpu)
{
	char path[8192], rel[128], buf[64];
	struct cpuwatch *c = &cpuw[cpu];
	int r;

	if (ino.fd >= 0 && !ino.cpu_dirty[cpu])
		return;
	ino.cpu_dirty[cpu] = false;
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/online", cpu);
	fixture_path(path, sizeof(path), rel);
	r = watch_check(&c->w, path);
	if (r == 0)
		return;
	c->online = true;
	if (r < 0 || fp_read_file(path, buf, sizeof(buf)) < 0)
		return;
	c->online = buf[0] != '0';
	c->mtime_rel = fp_realtime_to_rel_ns(c->w.mtime_ns);
}

/* A CPU is online when both devices/system/cpu/online lists it and its
 * cpuN/online (if any) says 1.  When offline, *offline_since_ns is the
 * earliest mtime (as fake time since load) of the files saying so. */
bool fp_cpu_online(int cpu, int64_t *offline_since_ns)
{
	int64_t since = INT64_MAX;

	drain_events();
	refresh_global();
	refresh_cpu(cpu);
	if (!glob.online[cpu])
		since = glob.mtime_rel;
	if (!cpuw[cpu].online && cpuw[cpu].mtime_rel < since)
		since = cpuw[cpu].mtime_rel;
	if (since == INT64_MAX)
		return true;
	if (offline_since_ns)
		*offline_since_ns = since;
	return false;
}
