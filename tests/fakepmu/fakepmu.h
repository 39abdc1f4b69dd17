/* SPDX-License-Identifier: MIT */
/* fakepmu.h: the fake PMU's internal interfaces, shared by its modules.
 * Nothing declared here is exported from libfakepmu.so (FP_HIDDEN); the only
 * exported symbols are the interposed libc functions in interpose.c. */
#ifndef FAKEPMU_H
#define FAKEPMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FP_HIDDEN __attribute__((visibility("hidden")))
#define FP_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Scenario fraction indexes.  0..7 are also the metric numbers, in the
 * order of the PERF_METRICS bytes (umask 0x80 + index).  uop_dropping and
 * recovery_cycles are the legacy names of two events per slot (see
 * scenario.c); they are kept so that old scenarios keep their meaning. */
enum {
	FR_RETIRING, FR_BAD_SPEC, FR_FE_BOUND, FR_BE_BOUND,
	FR_HEAVY_OPS, FR_BR_MISPREDICT, FR_FETCH_LAT, FR_MEM_BOUND,
	FR_COUNT
};
#define NMETRIC 8

/* Events a scenario gives rates for, by perf's name, at most. */
#define FP_EVENTS_MAX 256

struct fev;				/* one fake event (perf.c) */

/* Event classes: what the fake counts for an event. */
enum {
	EC_SLOTS = 0,
	EC_METRIC0 = 1,			/* EC_METRIC0 + metric number (0..7) */
	EC_HW = EC_METRIC0 + NMETRIC,	/* any other core-PMU event: counted by name */
	EC_SW_CLOCK,			/* cpu-clock, task-clock: nanoseconds */
	EC_SW_OTHER,			/* other software events: accepted, count 0 */
	EC_MSR_TSC,			/* msr/tsc/: the TSC, in a software context */
	EC_ANY = -1
};

/* An x86 event encoding as perf's tables give it. */
struct fp_enc {
	uint16_t event;			/* with AMD's extended bits 8-11 */
	uint8_t umask, cmask;
	bool edge, inv, any;
	/* Intel's extra register value (attr.config1: offcore_rsp=,
	 * frontend=, ldlat=; the table's MSRValue): OCR.* events share an
	 * event and unit mask and differ only in it. */
	uint64_t config1;
};

struct phase {
	uint64_t start_ns, end_ns;	/* end_ns = UINT64_MAX on the last phase */
	double f[FR_COUNT];
	double *ev;			/* [fp_scen.nevents] events per slot */
	uint8_t bytes[NMETRIC];		/* PERF_METRICS bytes of this phase alone */
};

/* Another user of the PMU on one CPU (a profiler, an agent, a second
 * watchdog), present from from_ns until to_ns (UINT64_MAX: for good).
 * Pinned, it takes its counters before any group of ours, invisible to
 * group validation (like the NMI watchdog); flexible, it is a group of
 * its own in the CPU's rotation, appended when it arrives, as a
 * system-wide session opened after ours is (kernel/events/core.c:
 * perf_install_in_context, ctx_resched). */
#define HOLDERS_MAX 8
struct holder {
	int gp;
	bool fixed[4];
	bool pinned;
	uint64_t from_ns, to_ns;
};

/* A core's thread activity in one stretch of time: the shares of it
 * when both threads run (unhalted), only its first, only its second. */
struct smtphase {
	uint64_t start_ns, end_ns;	/* end_ns = UINT64_MAX on the last */
	double both, first, second;
};

struct smtline {
	int n;
	struct smtphase *ph;
};

struct cpucfg {
	double slots_per_ns;
	double running;			/* (0,1] */
	struct holder holders[HOLDERS_MAX];
	int nholders;
	int nphases;
	struct phase *phases;
};

enum fault_op { FO_OPEN, FO_READ };

struct fault {
	enum fault_op op;
	int evclass;			/* EC_SLOTS, a metric, or EC_ANY */
	char evname[128];		/* or an event by perf's name */
	int err;			/* errno to return; 0 for a short read */
	bool short_read;
	unsigned delay_ms;		/* read blocks this long, then succeeds */
	uint64_t after_ns;
	uint8_t *cpus;			/* [ncpus] */
	long *remaining;		/* [ncpus]; -1 = forever */
};

struct scenario {
	struct cpucfg **cpu;		/* [ncpus], every possible CPU set */
	char *events[FP_EVENTS_MAX];	/* the scenario's names of the events with rates */
	/* perf's name of each in each PMU's table, [event][fp_fix.npmus]:
	 * NULL where that PMU does not count it. */
	char **canon[FP_EVENTS_MAX];
	int nevents;
	struct fault *faults;
	int nfaults;
	/* A mediated vPMU's VM is running: events without exclude_guest are
	 * refused (EOPNOTSUPP). */
	bool mediated_vpmu;
	/* The hardware's general-purpose counters per CPU when the scenario
	 * says (a virtual machine's PMU: PMCR_EL0.N, CPUID.0AH), else 0. */
	int gp_counters;
	/* The clocks behind the reference-cycle events (SMT activity): the
	 * TSC's rate and the core crystal clock's (Hz). */
	double tsc_hz, crystal_hz;
	/* Each CPU's core's thread activity over time ("smt"), or NULL. */
	struct smtline **smt;
	/* perf's names of events a hypervisor filters: they open, count 0. */
	char *filtered[FP_EVENTS_MAX];
	int nfiltered;
};

struct pmu {
	char name[64];
	uint32_t type;
	bool core;			/* cpu, cpu_core or cpu_atom */
	bool msr;			/* msr (arch/x86/events/msr.c): its TSC */
	bool has_slots;			/* events/slots exists: perf metrics */
	int nmetrics;			/* 8 with events/topdown-heavy-ops, else 4 */
	int gp_counters;		/* general-purpose counters per CPU */
	/* Skymont's fixed counters 4-6 (the cpu_atom PMU of a
	 * lunarlake_hybrid part): intel_skt_event_constraints. */
	bool skt_fixed;
	uint8_t *cpus;			/* [ncpus] from the cpus file, or NULL = all */
};

struct fixture {
	char root[4096];
	int ncpus;			/* highest possible CPU + 1 (nr_cpu_ids) */
	uint8_t *possible;		/* [ncpus] */
	struct pmu *pmus;
	int npmus;
	bool amd;			/* modalias vendor: x86 event bits 32-35 */
	bool arm;			/* modalias type aarch64: PMUv3 event numbers */
	uint64_t mux_ns;		/* perf_event_mux_interval_ms of the core PMU */
	bool watchdog;			/* /proc/sys/kernel/nmi_watchdog is 1 */
	bool smt_off;			/* devices/system/cpu/smt/active is 0 */
	/* Each CPU's core (topology/thread_siblings_list): its first CPU,
	 * the CPU's place among the core's threads, and their number. */
	int *core_first, *thread_of, *core_threads;
};

extern FP_HIDDEN struct fixture fp_fix;
extern FP_HIDDEN struct scenario fp_scen;

/* interpose.c */
FP_HIDDEN void fp_fatal(const char *fmt, ...) FP_PRINTF(1, 2) __attribute__((noreturn));
FP_HIDDEN int fp_real_close(int fd);
FP_HIDDEN ssize_t fp_real_read(int fd, void *buf, size_t count);
FP_HIDDEN uint64_t fp_mono_ns(void);	/* real CLOCK_MONOTONIC */
FP_HIDDEN uint64_t fp_now_ns(void);	/* fake time since load */
/* A read-paced clock (FAKEPMU_CLOCK_STEP): an event's nth read moves the
 * time to at least nth steps; nothing otherwise. */
FP_HIDDEN void fp_clock_read(uint64_t nth);
/* One line appended to FAKEPMU_TRACE, if set. */
FP_HIDDEN void fp_trace(const char *fmt, ...) FP_PRINTF(1, 2);
FP_HIDDEN int64_t fp_realtime_to_rel_ns(int64_t real_ns);
FP_HIDDEN bool fp_fake_clock(void);
FP_HIDDEN int fp_fd_set(int fd, struct fev *ev);
FP_HIDDEN struct fev *fp_fd_lookup(int fd);

/* cpulist.c */
FP_HIDDEN int fp_parse_cpulist(const char *s, int ncpus, uint8_t *out,
			       char *err, size_t errlen);
FP_HIDDEN void fp_format_cpulist(const uint8_t *set, int n, char *buf, size_t len);
FP_HIDDEN ssize_t fp_read_file(const char *path, char *buf, size_t len);

/* fixture.c */
FP_HIDDEN void fp_fixture_load(const char *root);
FP_HIDDEN const struct pmu *fp_pmu_by_type(uint32_t type);
FP_HIDDEN const struct pmu *fp_core_pmu_for_cpu(int cpu);
FP_HIDDEN bool fp_cpu_online(int cpu, int64_t *offline_since_ns);

/* tables.c */
FP_HIDDEN void fp_tables_load(const char *modalias, int stepping);
/* arm64: the tables of the CPU whose MIDR_EL1 is @midr ("0x...410fd4f1"). */
FP_HIDDEN void fp_tables_load_arm(const char *midr);
FP_HIDDEN const char *fp_tables_dir(void);
FP_HIDDEN void fp_decode_x86(uint64_t config, uint64_t config1, bool amd, struct fp_enc *out);
/* The fixture's architecture: x86 (AMD's too) or arm64. */
FP_HIDDEN void fp_decode(uint64_t config, uint64_t config1, struct fp_enc *out);
FP_HIDDEN bool fp_tables_name(const char *pmu, const struct fp_enc *enc, char *buf, size_t len);
FP_HIDDEN int fp_tables_lookup(const char *pmu, const char *name, struct fp_enc *out);
FP_HIDDEN int fp_tables_gp_counters(const char *pmu);
FP_HIDDEN bool fp_arm_event_listed(const char *pmu, const char *perf_name);
/* The general-purpose counters perf's table lets the event of @enc use
 * (Counter, or CounterHTOff with @smt_off), as a bit mask; 0 when it lists
 * none (any). */
FP_HIDDEN uint32_t fp_tables_gp_mask(const char *pmu, const struct fp_enc *enc, bool smt_off);

/* scenario.c */
FP_HIDDEN void fp_scenario_load(const char *path);
FP_HIDDEN void fp_quantise(const double f[NMETRIC], uint8_t bytes[NMETRIC]);
FP_HIDDEN const struct fault *fp_fault_fire(enum fault_op op, int cpu, int evclass,
					    const struct pmu *pmu, const char *evname);
FP_HIDDEN int fp_scenario_event(const struct pmu *pmu, const char *name);

/* perf.c */
FP_HIDDEN int fp_perf_event_open(void *attr, long pid, long cpu, long group_fd,
				 unsigned long flags);
FP_HIDDEN ssize_t fp_read(struct fev *ev, void *buf, size_t len);
FP_HIDDEN int fp_ioctl(struct fev *ev, unsigned long req, void *arg);
FP_HIDDEN int fp_close(struct fev *ev);
FP_HIDDEN void fp_cpus_init(void);

#endif
