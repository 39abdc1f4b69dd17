/* SPDX-License-Identifier: MIT */
/* Unit tests of pmu: format and event-term parsing, and discovery of the
 * core PMU on every fixture tree. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "pmu.h"

/* ---- pmu_parse_format ---- */

static struct pmu_format fmt_ok(const char *name, const char *text)
{
	struct pmu_format f;
	char err[256] = "";
	int r = pmu_parse_format(name, text, &f, err, sizeof(err));

	if (r != 0)
		fail_msg("pmu_parse_format(%s, \"%s\") = %d: %s", name, text, r, err);
	return f;
}

static void fmt_error(const char *name, const char *text, const char *msg)
{
	struct pmu_format f;
	char err[256] = "";
	int r = pmu_parse_format(name, text, &f, err, sizeof(err));

	if (r != -EINVAL)
		fail_msg("pmu_parse_format(%s, \"%s\") = %d, expected -EINVAL", name, text, r);
	assert_string_equal(err, msg);
}

static void test_parse_format(void **state)
{
	struct pmu_format f;

	(void)state;
	f = fmt_ok("event", "config:0-7");
	assert_string_equal(f.name, "event");
	assert_int_equal(f.field, 0);
	assert_int_equal(f.n_ranges, 1);
	assert_int_equal(f.ranges[0].lo, 0);
	assert_int_equal(f.ranges[0].hi, 7);

	f = fmt_ok("offcore_rsp", "config1:0-63");
	assert_int_equal(f.field, 1);
	assert_int_equal(f.n_ranges, 1);
	assert_int_equal(f.ranges[0].lo, 0);
	assert_int_equal(f.ranges[0].hi, 63);

	f = fmt_ok("split", "config:0-7,32-35");
	assert_int_equal(f.field, 0);
	assert_int_equal(f.n_ranges, 2);
	assert_int_equal(f.ranges[0].lo, 0);
	assert_int_equal(f.ranges[0].hi, 7);
	assert_int_equal(f.ranges[1].lo, 32);
	assert_int_equal(f.ranges[1].hi, 35);

	f = fmt_ok("edge", "config:18");
	assert_int_equal(f.n_ranges, 1);
	assert_int_equal(f.ranges[0].lo, 18);
	assert_int_equal(f.ranges[0].hi, 18);

	f = fmt_ok("x", "config2:5,9,20-21,63");
	assert_int_equal(f.field, 2);
	assert_int_equal(f.n_ranges, 4);
	assert_int_equal(f.ranges[3].lo, 63);
	assert_int_equal(f.ranges[3].hi, 63);
}

static void test_parse_format_errors(void **state)
{
	char name[64];

	(void)state;
	fmt_error("event", "conf:0-7",
		  "format event: \"conf:0-7\" does not start with config:, config1: or config2:");
	fmt_error("event", "config3:0-7",
		  "format event: \"config3:0-7\" does not start with config:, config1: or config2:");
	fmt_error("event", "", "format event: \"\" does not start with config:, config1: or config2:");
	fmt_error("event", "config:", "format event: bad bit number in \"config:\"");
	fmt_error("event", "config:x", "format event: bad bit number in \"config:x\"");
	fmt_error("event", "config:64", "format event: bad bit number in \"config:64\"");
	fmt_error("event", "config:7-0", "format event: bad bit range in \"config:7-0\"");
	fmt_error("event", "config:0-64", "format event: bad bit range in \"config:0-64\"");
	fmt_error("event", "config:0-", "format event: bad bit range in \"config:0-\"");
	fmt_error("event", "config:0-7x", "format event: unexpected \"x\"");
	fmt_error("event", "config:0-7\n", "format event: unexpected \"\n\"");
	fmt_error("event", "config:0-7,", "format event: bad bit number in \"config:0-7,\"");
	fmt_error("event", "config:0,1,2,3,4", "format event: more than 4 bit ranges");
	memset(name, 'n', 40);
	name[40] = '\0';
	fmt_error(name, "config:0-7",
		  "format name \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\" too long");
}

/* ---- pmu_encode_terms ---- */

/* The format files of Ice Lake and later (gen-fixture FORMAT_ICL_PLUS),
 * plus a split one for packing tests. */
static struct pmu_formats icl_formats(void)
{
	static const char *const files[][2] = {
		{ "event", "config:0-7" },   { "umask", "config:8-15" },
		{ "edge", "config:18" },     { "pc", "config:19" },
		{ "inv", "config:23" },      { "cmask", "config:24-31" },
		{ "offcore_rsp", "config1:0-63" }, { "ldlat", "config1:0-15" },
		{ "frontend", "config1:0-23" }, { "split", "config:0-3,32-35" },
		{ "hi", "config2:60-63" },
	};
	struct pmu_formats formats = { 0 };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		formats.f[formats.n++] = fmt_ok(files[i][0], files[i][1]);
	return formats;
}

static struct pmu_encoding enc_ok(const char *terms)
{
	struct pmu_formats formats = icl_formats();
	struct pmu_encoding e;
	char err[256] = "";
	int r = pmu_encode_terms(&formats, terms, &e, err, sizeof(err));

	if (r != 0)
		fail_msg("pmu_encode_terms(\"%s\") = %d: %s", terms, r, err);
	return e;
}

static void enc_error(const char *terms, int code, const char *msg)
{
	struct pmu_formats formats = icl_formats();
	struct pmu_encoding e;
	char err[256] = "";
	int r = pmu_encode_terms(&formats, terms, &e, err, sizeof(err));

	if (r != code)
		fail_msg("pmu_encode_terms(\"%s\") = %d, expected %d (%s)", terms, r, code, err);
	assert_string_equal(err, msg);
}

static void test_encode(void **state)
{
	struct pmu_encoding e;

	(void)state;
	e = enc_ok("event=0x00,umask=0x80");
	assert_int_equal(e.config[0], 0x8000);
	assert_int_equal(e.config[1], 0);
	assert_int_equal(e.config[2], 0);
	assert_int_equal(enc_ok("event=0x00,umask=0x4").config[0], 0x400);
	/* event 0-7, umask 8-15, edge 18, cmask 24-31. */
	assert_int_equal(enc_ok("event=0x0d,umask=0x01,cmask=1,edge=1").config[0], 0x0104010d);
	/* A term without a value is a flag set to 1. */
	assert_int_equal(enc_ok("event=0x0d,umask=0x01,cmask=1,edge").config[0], 0x0104010d);
	assert_int_equal(enc_ok("inv").config[0], UINT64_C(1) << 23);
	assert_int_equal(enc_ok("event=0xc0").config[0], 0xc0);
	assert_int_equal(enc_ok("event=192").config[0], 0xc0);
	assert_int_equal(enc_ok("umask=0xFF").config[0], 0xff00);
	assert_int_equal(enc_ok("").config[0], 0);
	/* Fields of config1 and config2. */
	e = enc_ok("event=0xb7,umask=0x1,offcore_rsp=0x10003c0001");
	assert_int_equal(e.config[0], 0x1b7);
	assert_int_equal(e.config[1], UINT64_C(0x10003c0001));
	e = enc_ok("ldlat=3,hi=0xa");
	assert_int_equal(e.config[1], 3);
	assert_int_equal(e.config[2], UINT64_C(0xa) << 60);
	/* Raw config terms. */
	e = enc_ok("config=0x1234,config1=5,config2=0xffffffffffffffff");
	assert_int_equal(e.config[0], 0x1234);
	assert_int_equal(e.config[1], 5);
	assert_int_equal(e.config[2], UINT64_MAX);
	/* A 64-bit field takes any value. */
	assert_int_equal(enc_ok("offcore_rsp=0xffffffffffffffff").config[1], UINT64_MAX);
}

static void test_encode_multi_range(void **state)
{
	(void)state;
	/* split = config:0-3,32-35: low nibble at 0, next nibble at 32. */
	assert_int_equal(enc_ok("split=0x5").config[0], 0x5);
	assert_int_equal(enc_ok("split=0xa5").config[0], UINT64_C(0xa00000005));
	assert_int_equal(enc_ok("split=0xff").config[0], UINT64_C(0xf0000000f));
	assert_int_equal(enc_ok("split=0x30,event=0x0").config[0], UINT64_C(0x300000000));
	enc_error("split=0x100", -ERANGE, "value 0x100 does not fit format split");
}

static void test_encode_errors(void **state)
{
	(void)state;
	enc_error("umask=0x100", -ERANGE, "value 0x100 does not fit format umask");
	enc_error("edge=2", -ERANGE, "value 0x2 does not fit format edge");
	enc_error("event=0x1ff", -ERANGE, "value 0x1ff does not fit format event");
	enc_error("frontend=0x1000000", -ERANGE, "value 0x1000000 does not fit format frontend");
	enc_error("any=1", -EINVAL, "unknown term \"any\" (no format/any file)");
	enc_error("event=0x3c,bogus", -EINVAL, "unknown term \"bogus\" (no format/bogus file)");
	enc_error("event=0x00,", -EINVAL, "trailing comma in \"event=0x00,\"");
	enc_error(",event=0x00", -EINVAL, "empty term in \",event=0x00\"");
	enc_error("event=1,,umask=2", -EINVAL, "empty term in \"event=1,,umask=2\"");
	enc_error("=5", -EINVAL, "empty term in \"=5\"");
	enc_error("event=", -EINVAL, "bad value for term \"event\" in \"event=\"");
	enc_error("event=x", -EINVAL, "bad value for term \"event\" in \"event=x\"");
	enc_error("event=0x", -EINVAL, "bad value for term \"event\" in \"event=0x\"");
	enc_error("event=-1", -EINVAL, "bad value for term \"event\" in \"event=-1\"");
	enc_error("event=0x3c ", -EINVAL, "bad value for term \"event\" in \"event=0x3c \"");
	enc_error("config=0x10000000000000000", -EINVAL,
		  "bad value for term \"config\" in \"config=0x10000000000000000\"");
}

/* ---- pmu_discover ---- */

static struct pmu_info *discover(const char *fixture)
{
	struct pmu_info *info = calloc(1, sizeof(*info));
	struct sysfs *sysfs;
	char root[1024];

	assert_non_null(info);
	snprintf(root, sizeof(root), "%s/%s", fixtures(), fixture);
	if (sysfs_new(root, &sysfs) < 0)
		fail_msg("cannot open fixture %s", root);
	memset(info, 0x5a, sizeof(*info));
	assert_int_equal(pmu_discover(sysfs, info), 0);
	sysfs_free(sysfs);
	return info;
}

/* The encoding @core has for formula variable @var, or fails. */
static uint64_t config_of(const struct pmu_core *core, enum td_event var, bool *have)
{
	for (unsigned i = 0; i < core->ua->n_events; i++) {
		if (core->ua->events[i].var != var)
			continue;
		*have = core->have[i];
		assert_int_equal(core->enc[i].config[1], 0);
		assert_int_equal(core->enc[i].config[2], 0);
		return core->enc[i].config[0];
	}
	*have = false;
	return 0;
}

/* Encodings every Ice Lake or later core PMU yields: the kernel's for
 * slots and the metrics, perf's for the refinement events of the
 * microarchitecture (INT_MISC is event 0xad from Golden Cove on, 0x0d on
 * Ice Lake: reference/perf-tables/x86/{sapphirerapids,icelakex}/pipeline.json). */
static void assert_topdown_encodings(const struct pmu_core *core, bool l2, uint64_t uop_dropping,
				     uint64_t recovery)
{
	const uint64_t want[TD_EV_COUNT] = {
		[TD_EV_SLOTS] = 0x0400,
		[TD_EV_RETIRING] = 0x8000,
		[TD_EV_BAD_SPEC] = 0x8100,
		[TD_EV_FE_BOUND] = 0x8200,
		[TD_EV_BE_BOUND] = 0x8300,
		[TD_EV_HEAVY_OPS] = 0x8400,
		[TD_EV_BR_MISPREDICT] = 0x8500,
		[TD_EV_FETCH_LAT] = 0x8600,
		[TD_EV_MEM_BOUND] = 0x8700,
		[TD_EV_UOP_DROPPING] = uop_dropping,
		[TD_EV_RECOVERY_CYCLES] = recovery,
	};

	for (int ev = 0; ev < TD_EV_COUNT; ev++) {
		bool expect = (l2 || ev < TD_EV_HEAVY_OPS || ev > TD_EV_MEM_BOUND) && want[ev];
		bool have;
		uint64_t config = config_of(core, (enum td_event)ev, &have);

		/* Ice Lake's level 2 from general-purpose events: tested by
		 * tests/integration/12-uarch-tables.t against perf's files. */
		if (!want[ev] && !(ev >= TD_EV_HEAVY_OPS && ev <= TD_EV_MEM_BOUND))
			continue;
		if (have != expect)
			fail_msg("event %d: have = %d, expected %d", ev, have, expect);
		if (expect && config != want[ev])
			fail_msg("event %d: config = 0x%llx, expected 0x%llx", ev,
				 (unsigned long long)config, (unsigned long long)want[ev]);
	}
}

static void test_discover_spr(void **state)
{
	struct pmu_info *info = discover("spr-2s");
	const struct pmu_core *core = &info->core[0];

	(void)state;
	assert_true(info->have_cpuid);
	assert_string_equal(info->cpuid.vendor, "GenuineIntel");
	assert_int_equal(info->cpuid.family, 6);
	assert_int_equal(info->cpuid.model, 0x8F);
	assert_int_equal(info->n_cores, 1);
	assert_string_equal(core->name, "cpu");
	assert_int_equal(core->type, 4);
	assert_string_equal(core->pmu_name, "sapphire_rapids");
	assert_string_equal(core->ua->id, "sapphirerapids");
	assert_int_equal(core->level, 2);
	assert_string_equal(core->reason, "");
	assert_false(core->has_cpus);
	assert_topdown_encodings(core, true, 0x10ad, 0);
	assert_ptr_equal(pmu_core_of(info, 5), core);
	free(info);
}

static void test_discover_emr_gnr(void **state)
{
	struct pmu_info *info = discover("emr-2s");

	(void)state;
	/* Emerald Rapids' kernel PMU says sapphire_rapids: the model decides. */
	assert_string_equal(info->core[0].pmu_name, "sapphire_rapids");
	assert_int_equal(info->cpuid.model, 0xCF);
	assert_string_equal(info->core[0].ua->id, "emeraldrapids");
	assert_int_equal(info->core[0].level, 2);
	assert_topdown_encodings(&info->core[0], true, 0x10ad, 0);
	free(info);
	info = discover("gnr-2s");
	assert_string_equal(info->core[0].pmu_name, "granite_rapids");
	assert_string_equal(info->core[0].ua->id, "graniterapids");
	assert_int_equal(info->core[0].level, 2);
	assert_topdown_encodings(&info->core[0], true, 0x10ad, 0);
	free(info);
}

static void test_discover_spr_holes(void **state)
{
	struct pmu_info *info = discover("spr-holes");

	(void)state;
	assert_string_equal(info->core[0].name, "cpu");
	assert_string_equal(info->core[0].ua->id, "sapphirerapids");
	assert_int_equal(info->core[0].level, 2);
	assert_string_equal(info->core[0].reason, "");
	assert_topdown_encodings(&info->core[0], true, 0x10ad, 0);
	free(info);
}

static void test_discover_icx(void **state)
{
	struct pmu_info *info = discover("icx-1s");
	const struct pmu_core *core = &info->core[0];

	(void)state;
	assert_int_equal(info->n_cores, 1);
	assert_string_equal(core->name, "cpu");
	assert_int_equal(core->type, 4);
	assert_string_equal(core->pmu_name, "icelake");
	assert_string_equal(core->ua->id, "icelakex");
	assert_int_equal(core->ua->formulas, UA_FORMULAS_ICL);
	assert_int_equal(core->level, 2);
	assert_string_equal(core->reason, "");
	assert_false(core->has_cpus);
	assert_topdown_encodings(core, false, 0x100d, 0x0104010d);
	free(info);
}

static void test_discover_adl(void **state)
{
	struct pmu_info *info = discover("adl-hybrid");
	const struct pmu_core *p = &info->core[0], *e = &info->core[1];

	(void)state;
	assert_int_equal(info->n_cores, 2);
	assert_string_equal(p->name, "cpu_core");
	assert_int_equal(p->type, 4);
	assert_string_equal(p->pmu_name, "alderlake_hybrid");
	assert_string_equal(p->ua->id, "alderlake");
	assert_int_equal(p->level, 2);
	assert_string_equal(p->reason, "");
	assert_true(p->has_cpus);
	assert_string_equal(cpus_text(&p->cpus), "0-7");
	assert_topdown_encodings(p, true, 0x10ad, 0);
	assert_string_equal(e->name, "cpu_atom");
	assert_int_equal(e->type, 10);
	assert_string_equal(e->ua->name, "Alder Lake / Raptor Lake E-core (Gracemont)");
	assert_int_equal(e->ua->formulas, UA_FORMULAS_GRT);
	assert_int_equal(e->level, 2);
	assert_string_equal(cpus_text(&e->cpus), "8-15");
	assert_string_equal(e->reason, "");
	assert_ptr_equal(pmu_core_of(info, 3), p);
	assert_ptr_equal(pmu_core_of(info, 12), e);
	free(info);
}

static void test_discover_vm(void **state)
{
	struct pmu_info *info = discover("vm-nopmu");

	(void)state;
	assert_int_equal(info->n_cores, 0);
	assert_string_equal(info->reason,
			    "no core PMU registered by the kernel (bus/event_source/devices has no cpu, cpu_core or armv8_pmuv3): a virtual machine without a virtual PMU, or a CPU the perf driver does not support");
	assert_null(pmu_core_of(info, 0));
	free(info);
}

static void test_discover_skx(void **state)
{
	struct pmu_info *info = discover("skx-1s");
	const struct pmu_core *core = &info->core[0];

	(void)state;
	assert_int_equal(info->n_cores, 1);
	assert_string_equal(core->name, "cpu");
	assert_int_equal(core->type, 4);
	assert_string_equal(core->pmu_name, "skylake");
	assert_string_equal(core->ua->id, "skylakex");
	assert_int_equal(core->ua->formulas, UA_FORMULAS_SKL);
	assert_int_equal(core->level, 2);
	assert_string_equal(core->reason, "");
	free(info);
}

/* ---- discovery on edited copies of a fixture ---- */

/* Copies @fixture to tmpdir/@name, runs the shell command @edit inside the
 * PMU directory of the copy, and discovers. */
static struct pmu_info *discover_edited(const char *fixture, const char *name, const char *edit)
{
	char cmd[2048], rel[256];

	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s/%s' && cp -r '%s/%s' '%s/%s' && cd '%s/%s/bus/event_source/devices' && %s",
		 tmpdir, name, fixtures(), fixture, tmpdir, name, tmpdir, name, edit);
	if (system(cmd) != 0)
		fail_msg("setup failed: %s", cmd);
	snprintf(rel, sizeof(rel), "%s/%s", tmpdir, name);
	{
		struct pmu_info *info = calloc(1, sizeof(*info));
		struct sysfs *sysfs;

		assert_int_equal(sysfs_new(rel, &sysfs), 0);
		assert_int_equal(pmu_discover(sysfs, info), 0);
		sysfs_free(sysfs);
		return info;
	}
}

static void test_discover_missing_l1_event(void **state)
{
	struct pmu_info *info;

	(void)state;
	info = discover_edited("spr-2s", "no-fe", "rm cpu/events/topdown-fe-bound");
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "core PMU cpu (Sapphire Rapids) has no events/topdown-fe-bound: this kernel does not expose its TopDown events");
	free(info);
}

static void test_discover_missing_l2_event(void **state)
{
	struct pmu_info *info;

	(void)state;
	/* Three of four L2 events: level 1, and no L2 event is used. */
	info = discover_edited("spr-2s", "no-ml", "rm cpu/events/topdown-mem-bound");
	assert_int_equal(info->core[0].level, 1);
	assert_string_equal(info->core[0].reason, "");
	assert_topdown_encodings(&info->core[0], false, 0x10ad, 0);
	free(info);
}

static void test_discover_bad_slots(void **state)
{
	struct pmu_info *info;

	(void)state;
	info = discover_edited("spr-2s", "bad-slots",
			       "echo 'event=0x00,umask=0x4,bogus=1' > cpu/events/slots");
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "cannot encode cpu/slots (\"event=0x00,umask=0x4,bogus=1\"): unknown term \"bogus\" (no format/bogus file)");
	free(info);
}

static void test_discover_unknown_model(void **state)
{
	struct pmu_info *info;
	char note[PMU_REASON_MAX];

	(void)state;
	/* An Intel model not in the tables but with slots: PERF_METRICS
	 * alone, nothing guessed. */
	info = discover_edited("spr-2s", "future",
			       "sed -i 's/mod008F/mod00FF/' ../../../devices/system/cpu/modalias");
	assert_int_equal(info->cpuid.model, 0xFF);
	assert_string_equal(info->core[0].ua->id, "perf_metrics");
	assert_int_equal(info->core[0].ua->formulas, UA_FORMULAS_METRICS);
	assert_int_equal(info->core[0].level, 2);
	assert_topdown_encodings(&info->core[0], true, 0, 0);
	pmu_guest_note(&info->core[0], note, sizeof(note));
	assert_string_equal(note, "no TopDown tables for this model: PERF_METRICS alone, levels 1 and 2 as the hardware "
				  "gives them (perf's expressions without a model's refinement events)");
	free(info);
	/* Panther Lake (model 0xCC): perf knows it, with events and no
	 * TopDown metrics: the same, and said. */
	info = discover_edited("spr-2s", "ptl", "sed -i 's/mod008F/mod00CC/' ../../../devices/system/cpu/modalias");
	assert_string_equal(info->core[0].ua->id, "perf_metrics");
	pmu_guest_note(&info->core[0], note, sizeof(note));
	assert_string_equal(note, "no perf reference for this model: Panther Lake (x86/pantherlake): perf 7.2's tables "
				  "have its events and no TopDown metrics; no TopDown tables for this model: PERF_METRICS "
				  "alone, levels 1 and 2 as the hardware gives them (perf's expressions without a model's "
				  "refinement events)");
	free(info);
	/* No modalias at all: the same. */
	info = discover_edited("spr-2s", "no-modalias", "rm ../../../devices/system/cpu/modalias");
	assert_false(info->have_cpuid);
	assert_string_equal(info->core[0].ua->id, "perf_metrics");
	free(info);
}

static void test_discover_no_slots_not_intel(void **state)
{
	struct pmu_info *info;

	(void)state;
	/* No slots and no topdown-total-slots either: not an Intel PMU. */
	info = discover_edited("icx-1s", "nopm",
			       "rm cpu/events/slots cpu/caps/pmu_name && rm ../../../devices/system/cpu/modalias");
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].pmu_name, "");
	assert_string_equal(info->core[0].reason,
			    "core PMU cpu (pmu_name unknown) of an unknown CPU is not a microarchitecture topdownd has TopDown tables for");
	free(info);
	/* An AMD CPU perf has no tables for at all (family 0x15). */
	info = discover_edited("icx-1s", "amd",
			       "rm cpu/events/slots cpu/caps/pmu_name && "
			       "sed -i 's/ven0000fam0006mod006A/ven0002fam0015mod0001/' ../../../devices/system/cpu/modalias");
	assert_string_equal(info->cpuid.vendor, "AuthenticAMD");
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "AuthenticAMD-21-1 (core PMU cpu) is not a microarchitecture topdownd has TopDown tables for");
	free(info);
	/* A vendor number no kernel names: said as the modalias gives it,
	 * whole (printed in decimal, 65535 did not fit). */
	info = discover_edited("icx-1s", "vendor-ffff",
			       "rm cpu/events/slots cpu/caps/pmu_name && "
			       "sed -i 's/ven0000fam0006mod006A/venFFFFfam0006mod006A/' ../../../devices/system/cpu/modalias");
	assert_string_equal(info->cpuid.vendor, "x86 vendor FFFF");
	assert_int_equal(info->core[0].level, 0);
	free(info);
	/* An Emerald Rapids whose kernel shows no slots: a KVM guest (no
	 * PERF_METRICS), or an old kernel: PerfSpect's nofixedtma formulas. */
	info = discover_edited("emr-2s", "old-kernel", "rm cpu/events/slots");
	assert_string_equal(info->core[0].ua->id, "emeraldrapids-alt");
	assert_int_equal(info->core[0].level, 2);
	free(info);
	/* An Ice Lake client without slots: no alternate formulas for it. */
	info = discover_edited("icl-client", "old-kernel", "rm cpu/events/slots");
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "core PMU cpu (Ice Lake) has no events/slots: no PERF_METRICS (a virtual machine? KVM does not virtualise it; or a kernel before its TopDown support), and topdownd has no general-purpose-counter TopDown formulas for Ice Lake");
	free(info);
}

/* AMD: the 12-bit event select goes to config bits 0-7 and 32-35
 * (format/event "config:0-7,32-35"). */
static void test_discover_amd(void **state)
{
	static const struct {
		enum td_event var;
		uint64_t config;
	} want[] = {
		{ TD_EV_CYCLES, 0x76 },
		{ TD_EV_ZEN_NO_OPS_FRONTEND, 0x1000001a0 },
		{ TD_EV_ZEN_FRONTEND_CYCLES, 0x1060001a0 },
		{ TD_EV_ZEN_BACKEND_STALLS, 0x100001ea0 },
		{ TD_EV_ZEN_SMT_CONTENTION, 0x1000060a0 },
		{ TD_EV_ZEN_OPS_DISPATCHED, 0x7aa },
		{ TD_EV_ZEN_OPS_RETIRED, 0xc1 },
		{ TD_EV_ZEN_BRANCH_MISP, 0xc3 },
		{ TD_EV_ZEN_RESYNCS, 0x96 },
		{ TD_EV_ZEN_NOT_COMPLETE, 0x2d6 },
		{ TD_EV_ZEN_LOAD_NOT_COMPLETE, 0xa2d6 },
		{ TD_EV_ZEN_UCODE_OPS, 0x1000000c2 },
	};
	struct pmu_info *info = discover("genoa-2s");
	const struct pmu_core *core = &info->core[0];
	bool have;

	(void)state;
	assert_string_equal(info->cpuid.vendor, "AuthenticAMD");
	assert_int_equal(info->cpuid.family, 0x19);
	assert_int_equal(info->cpuid.model, 0x11);
	assert_string_equal(core->pmu_name, "");
	assert_string_equal(core->ua->id, "amdzen4");
	assert_int_equal(core->ua->width, 6);
	assert_int_equal(core->level, 2);
	assert_string_equal(core->reason, "");
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t config = config_of(core, want[i].var, &have);

		assert_true(have);
		if (config != want[i].config)
			fail_msg("event %d: config 0x%llx, expected 0x%llx", want[i].var,
				 (unsigned long long)config, (unsigned long long)want[i].config);
	}
	free(info);

	info = discover("turin-1s");
	assert_string_equal(info->core[0].ua->id, "amdzen5");
	assert_int_equal(info->core[0].ua->width, 8);
	assert_int_equal(config_of(&info->core[0], TD_EV_ZEN_FRONTEND_CYCLES, &have), 0x1080001a0);
	assert_int_equal(config_of(&info->core[0], TD_EV_ZEN_RESYNCS, &have), 0x19f);
	free(info);

	/* perf's first matching mapfile line decides: Zen 3's models of
	 * family 0x19 are not Zen 4's. */
	info = discover("milan-1s");
	assert_null(info->core[0].ua);
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "AuthenticAMD-25-1 is AMD Zen 3 (perf's table amdzen3): perf has no TopDown (PipelineL1) metrics for it: they need the per-slot dispatch events (PMCx1A0) of Zen 4 and later");
	free(info);
	info = discover_edited("milan-1s", "zen3-5x", "sed -i 's/mod0001/mod0050/' ../../../devices/system/cpu/modalias");
	assert_null(info->core[0].ua);
	free(info);
	info = discover_edited("milan-1s", "zen4-6x", "sed -i 's/mod0001/mod0061/' ../../../devices/system/cpu/modalias");
	assert_string_equal(info->core[0].ua->id, "amdzen4");
	free(info);
}

/* arm64: the core PMU armv8_pmuv3_0, the CPU by its MIDR, caps/slots. */
static void test_discover_arm(void **state)
{
	struct pmu_info *info = discover("neoverse-v2-64");
	const struct pmu_core *core = &info->core[0];
	struct ua_cpuid id;
	bool have;

	(void)state;
	assert_true(info->have_cpuid);
	assert_true(info->cpuid.arm);
	assert_true(info->cpuid.midr == 0x410fd4f1ULL);
	assert_string_equal(info->cpuid.vendor, "ARM");
	assert_int_equal(info->n_cores, 1);
	assert_string_equal(core->name, "armv8_pmuv3_0");
	assert_int_equal(core->type, 8);
	assert_string_equal(core->ua->id, "arm/neoverse-n2-v2");
	assert_int_equal(core->level, 1);
	assert_int_equal(core->slots, 8);
	assert_false(core->stall_minus_cycles);
	assert_int_equal(config_of(core, TD_EV_ARM_STALL_SLOT, &have), 0x3f);
	assert_true(have);
	assert_int_equal(config_of(core, TD_EV_CYCLES, &have), 0x11);
	free(info);

	/* N2 r0p0: perf's stall-slot fix; r0p3 and later: none. */
	info = discover("neoverse-n2-8");
	assert_int_equal(info->core[0].slots, 5);
	assert_true(info->core[0].stall_minus_cycles);
	free(info);
	info = discover_edited("neoverse-n2-8", "n2r0p3",
			       "for f in ../../../devices/system/cpu/cpu*/regs/identification/midr_el1; do "
			       "echo 0x00000000410fd493 >$f; done");
	assert_string_equal(info->core[0].ua->id, "arm/neoverse-n2-v2");
	assert_false(info->core[0].stall_minus_cycles);
	free(info);

	info = discover("neoverse-v1-16");
	assert_string_equal(info->core[0].ua->id, "arm/neoverse-v1");
	free(info);

	/* Neoverse N1: perf has no TopDown for it. */
	info = discover("graviton2-16");
	assert_null(info->core[0].ua);
	assert_string_equal(info->core[0].reason,
			    "0x00000000413fd0c1 is Arm Neoverse N1 (perf's table arm/neoverse-n1): perf has no TopdownL1 for it: its metrics.json defines none, only cycle accounting from stalled cycles (STALL_FRONTEND, STALL_BACKEND)");
	free(info);

	/* A Cortex-A76 (not in the tables). */
	info = discover_edited("neoverse-v2-64", "a76",
			       "for f in ../../../devices/system/cpu/cpu*/regs/identification/midr_el1; do "
			       "echo 0x00000000413fd0b1 >$f; done");
	assert_null(info->core[0].ua);
	assert_string_equal(info->core[0].reason,
			    "0x00000000413fd0b1 (core PMU armv8_pmuv3_0) is not a microarchitecture topdownd has TopDown tables for");
	free(info);

	/* A heterogeneous part: two core PMUs with the kernel's per-core
	 * names, each CPU's MIDR its own (a V2 cluster and an N1 one). */
	info = discover_edited("neoverse-v2-64", "hetero",
			       "mv armv8_pmuv3_0 armv9_neoverse_v2 && cp -r armv9_neoverse_v2 armv8_neoverse_n1 && "
			       "echo 0-31 >armv9_neoverse_v2/cpus && echo 32-63 >armv8_neoverse_n1/cpus && "
			       "echo 9 >armv8_neoverse_n1/type && rm -r armv8_neoverse_n1/caps && "
			       "for c in $(seq 32 63); do echo 0x00000000413fd0c1 "
			       ">../../../devices/system/cpu/cpu$c/regs/identification/midr_el1; done");
	assert_int_equal(info->n_cores, 2);
	assert_string_equal(info->core[0].name, "armv8_neoverse_n1");
	assert_null(info->core[0].ua);
	assert_string_equal(info->core[0].reason,
			    "0x00000000413fd0c1 is Arm Neoverse N1 (perf's table arm/neoverse-n1): perf has no TopdownL1 for it: its metrics.json defines none, only cycle accounting from stalled cycles (STALL_FRONTEND, STALL_BACKEND)");
	assert_string_equal(info->core[1].name, "armv9_neoverse_v2");
	assert_string_equal(info->core[1].ua->id, "arm/neoverse-n2-v2");
	assert_int_equal(info->core[1].level, 1);
	assert_int_equal(info->core[1].slots, 8);
	assert_string_equal(cpus_text(&info->core[1].cpus), "0-31");
	assert_ptr_equal(pmu_core_of(info, 40), &info->core[0]);
	assert_ptr_equal(pmu_core_of(info, 3), &info->core[1]);
	free(info);

	assert_int_equal(ua_parse_midr("0x00000000410fd4f1\n", &id), 0);
	assert_true(id.midr == 0x410fd4f1ULL);
	assert_int_equal(ua_parse_midr("410fd4f1", &id), -EINVAL);
	assert_int_equal(ua_parse_midr("0x", &id), -EINVAL);
	assert_int_equal(ua_parse_midr("0x1ffffffff", &id), -EINVAL);
	assert_true(ua_midr_matches("0x00000000410fd490", 0x410fd493ULL));
	assert_true(ua_midr_matches("0x00000000410fd493", 0x411fd490ULL));
	assert_false(ua_midr_matches("0x00000000410fd493", 0x410fd492ULL));
	assert_false(ua_midr_matches("0x00000000410fd490", 0x410fd4f0ULL));
	/* Arm's published widths, by implementer and part at any variant
	 * and revision: a guest's caps/slots is 0. */
	assert_int_equal(ua_arm_published_slots(0x411fd401ULL)->slots, 8);
	assert_int_equal(ua_arm_published_slots(0x410fd493ULL)->slots, 5);
	assert_int_equal(ua_arm_published_slots(0x410fd4f1ULL)->slots, 8);
	assert_null(ua_arm_published_slots(0x413fd0c1ULL));	/* N1 */
	assert_null(ua_arm_published_slots(0x420fd401ULL));	/* another implementer */
}

/* A KVM guest of a Graviton3: caps/slots 0x00000000, counted at Arm's
 * published width, saying so. */
static void test_discover_arm_guest(void **state)
{
	struct pmu_info *info;
	char note[PMU_REASON_MAX];

	(void)state;
	info = discover("graviton3-guest");
	assert_int_equal(info->core[0].level, 1);
	assert_int_equal(info->core[0].slots, 8);
	assert_non_null(info->core[0].slots_published);
	pmu_guest_note(&info->core[0], note, sizeof(note));
	assert_string_equal(note,
			    "caps/slots is 0 or absent (a virtual machine reads PMMIR_EL1 as 0): 8 slots per cycle, Arm's published width of the Neoverse V1 (ARM-software/telemetry-solution data/pmu/cpu/neoverse/neoverse-v1.json)");
	free(info);
	info = discover("neoverse-v1-16");
	assert_int_equal(info->core[0].slots, 8);
	assert_null(info->core[0].slots_published);
	pmu_guest_note(&info->core[0], note, sizeof(note));
	assert_string_equal(note, "");
	free(info);
}

/* A Sapphire Rapids KVM guest: no events/slots, so Intel's alternate
 * formulas on general-purpose counters, both levels, saying so; the same
 * model on bare metal keeps PERF_METRICS. */
static void test_discover_spr_guest(void **state)
{
	struct pmu_info *info;
	char note[PMU_REASON_MAX];

	(void)state;
	info = discover("spr-guest");
	assert_string_equal(info->core[0].ua->id, "sapphirerapids-alt");
	assert_string_equal(info->core[0].ua->alt_of->id, "sapphirerapids");
	assert_int_equal(info->core[0].level, 2);
	pmu_guest_note(&info->core[0], note, sizeof(note));
	assert_string_equal(note,
			    "no PERF_METRICS (no events/slots: a virtual machine?): counting with general-purpose events, Intel's alternate TMA formulas for Sapphire Rapids (perfspect/spr_alt_tma_metrics.json)");
	free(info);
	info = discover("icx-guest");
	assert_string_equal(info->core[0].ua->id, "icelakex-alt");
	assert_int_equal(info->core[0].level, 2);
	free(info);
	info = discover("emr-guest");
	assert_string_equal(info->core[0].ua->id, "emeraldrapids-alt");
	assert_string_equal(info->core[0].ua->alt_of->id, "emeraldrapids");
	assert_int_equal(info->core[0].level, 2);
	pmu_guest_note(&info->core[0], note, sizeof(note));
	assert_string_equal(note,
			    "no PERF_METRICS (no events/slots: a virtual machine?): counting with general-purpose events, Intel's alternate TMA formulas for Emerald Rapids (perfspect/emr_nofixedtma.json)");
	free(info);
	info = discover("gnr-guest");
	assert_string_equal(info->core[0].ua->id, "graniterapids-alt");
	assert_int_equal(info->core[0].level, 2);
	free(info);
	info = discover("spr-2s");
	assert_string_equal(info->core[0].ua->id, "sapphirerapids");
	assert_ptr_equal(info->core[0].ua->guest_alt->alt_of, info->core[0].ua);
	free(info);
}

static void test_discover_arch_events(void **state)
{
	struct pmu_info *info;
	char note[PMU_REASON_MAX];

	(void)state;
	/* Clearwater Forest, a model without tables: its PMU shows the
	 * architectural TopDown events as topdown-*. */
	info = discover("cwf-guest");
	assert_string_equal(info->core[0].ua->id, "intel_arch");
	assert_int_equal(info->core[0].ua->formulas, UA_FORMULAS_ARCH);
	assert_int_equal(info->core[0].level, 1);
	assert_string_equal(info->core[0].reason, "");
	pmu_guest_note(&info->core[0], note, sizeof(note));
	assert_string_equal(note,
			    "no perf reference for this model: Clearwater Forest (Darkmont) (x86/clearwaterforest): perf 7.2's tables have its events and no TopDown metrics; no TopDown tables for this model and no PERF_METRICS: counting Intel's architectural TopDown events (events/topdown-*; SDM \"Pre-defined Architectural Performance Events\", CPUID.0AH EBX bits 8-11), level 1 as perf's PERF_METRICS expressions over them");
	for (unsigned i = 0; i < info->core[0].ua->n_events; i++)
		assert_true(info->core[0].have[i]);
	/* topdown-bad-spec */
	assert_int_equal(info->core[0].enc[2].config[0], 0x73);
	/* topdown-be-bound */
	assert_int_equal(info->core[0].enc[4].config[0], 0x02a4);
	free(info);
	/* The same values written otherwise are the same events. */
	info = discover_edited("cwf-guest", "arch-spelled",
			       "echo 'umask=0x2,event=0xa4' > cpu/events/topdown-be-bound");
	assert_string_equal(info->core[0].ua->id, "intel_arch");
	free(info);
	/* Crestmont's backend-bound event (0x74) is not the architectural
	 * one: no guess. */
	info = discover_edited("cwf-guest", "cmt-be", "echo 'event=0x74,umask=0x0' > cpu/events/topdown-be-bound");
	assert_null(info->core[0].ua);
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "core PMU cpu (pmu_name darkmont) of GenuineIntel-6-DD is not a microarchitecture topdownd has TopDown tables for");
	free(info);
	info = discover_edited("cwf-guest", "no-bad", "rm cpu/events/topdown-bad-spec");
	assert_null(info->core[0].ua);
	free(info);
	/* Not on another vendor's PMU. */
	info = discover_edited("cwf-guest", "amd",
			       "sed -i 's/ven0000fam0006mod00DD/ven0002fam0019mod0011/' ../../../devices/system/cpu/modalias");
	assert_true(info->core[0].ua == NULL || strcmp(info->core[0].ua->id, "intel_arch") != 0);
	free(info);
}

static void test_discover_bad_type(void **state)
{
	struct pmu_info *info;

	(void)state;
	info = discover_edited("spr-2s", "no-type", "rm cpu/type");
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "cannot read bus/event_source/devices/cpu/type: No such file or directory");
	free(info);
	info = discover_edited("spr-2s", "bad-type", "echo four > cpu/type");
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "cannot read bus/event_source/devices/cpu/type: Invalid argument");
	free(info);
	info = discover_edited("spr-2s", "neg-type", "echo -1 > cpu/type");
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "cannot read bus/event_source/devices/cpu/type: bad value");
	free(info);
}

static void test_discover_broadwell(void **state)
{
	struct pmu_info *info;

	(void)state;
	/* A Broadwell server (model 0x4F) exposes the same generic-counter
	 * events, but perf's TopDown tables start at Skylake. */
	info = discover_edited("skx-1s", "bdx",
			       "sed -i s/mod0055/mod004F/ ../../../devices/system/cpu/modalias");
	assert_null(info->core[0].ua);
	assert_string_equal(info->core[0].reason,
			    "GenuineIntel-6-4F (pmu_name skylake) is older than Skylake or not in topdownd's tables: TopDown needs Skylake or later");
	free(info);
}

static void test_discover_atom_only(void **state)
{
	struct pmu_info *info;

	(void)state;
	info = discover_edited("adl-hybrid", "atom-only", "rm -r cpu_core");
	assert_int_equal(info->n_cores, 1);
	assert_string_equal(info->core[0].name, "cpu_atom");
	assert_int_equal(info->core[0].level, 2);
	assert_string_equal(info->core[0].ua->id, "alderlake");
	free(info);
	/* An E-core of a model topdownd has no tables for. */
	info = discover_edited("adl-hybrid", "atom-other",
			       "sed -i s/mod0097/mod00AA/ ../../../devices/system/cpu/modalias");
	assert_int_equal(info->core[1].level, 0);
	assert_string_equal(info->core[1].reason,
			    "cpu_atom (E-core) of GenuineIntel-6-AA: not a microarchitecture topdownd has TopDown tables for (Gracemont and Crestmont are)");
	free(info);
}

static void test_discover_hybrid_bad_cpus(void **state)
{
	struct pmu_info *info;

	(void)state;
	info = discover_edited("adl-hybrid", "bad-cpus", "echo 0-x > cpu_core/cpus");
	assert_int_equal(info->core[0].level, 0);
	assert_string_equal(info->core[0].reason,
			    "cannot parse bus/event_source/devices/cpu_core/cpus: expected a CPU number at \"x\"");
	free(info);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_parse_format_errors),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_encode_multi_range),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_discover_spr),
		cmocka_unit_test(test_discover_emr_gnr),
		cmocka_unit_test(test_discover_spr_holes),
		cmocka_unit_test(test_discover_icx),
		cmocka_unit_test(test_discover_adl),
		cmocka_unit_test(test_discover_vm),
		cmocka_unit_test(test_discover_skx),
		cmocka_unit_test(test_discover_broadwell),
		cmocka_unit_test(test_discover_missing_l1_event),
		cmocka_unit_test(test_discover_missing_l2_event),
		cmocka_unit_test(test_discover_bad_slots),
		cmocka_unit_test(test_discover_unknown_model),
		cmocka_unit_test(test_discover_no_slots_not_intel),
		cmocka_unit_test(test_discover_amd),
		cmocka_unit_test(test_discover_arm),
		cmocka_unit_test(test_discover_arm_guest),
	cmocka_unit_test(test_discover_spr_guest),
	cmocka_unit_test(test_discover_arch_events),
	cmocka_unit_test(test_discover_bad_type),
		cmocka_unit_test(test_discover_atom_only),
		cmocka_unit_test(test_discover_hybrid_bad_cpus),
	};

	return cmocka_run_group_tests(tests, tmpdir_make, tmpdir_remove);
}
