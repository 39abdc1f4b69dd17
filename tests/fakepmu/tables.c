/* SPDX-License-Identifier: MIT */
/* tables.c: the hardware the fake pretends to be, as Linux perf's own
 * tables describe it.  Owns which perf table directory a fixture is
 * (its devices/system/cpu/modalias matched against x86/mapfile.csv the way
 * perf matches a CPUID string), the event encodings of that directory's
 * JSON files, and the names the fake gives to a config: the table's own
 * event name, or "BASE,cmask=N,edge=1,inv=1" when the config is a table
 * event with extra filter bits.
 *
 * This is the fake's own reading of the upstream files; it shares nothing
 * with the daemon (whose per-microarchitecture module is checked against
 * the same files by its own test). */
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "fakepmu.h"

#ifndef FAKEPMU_TABLES_DEFAULT
#define FAKEPMU_TABLES_DEFAULT "reference/perf-tables"
#endif

struct tevent {
	char name[96];
	char unit[16];		/* "" or cpu_core / cpu_atom */
	struct fp_enc enc;
	int max_gp;		/* highest general-purpose counter listed, -1 */
	uint32_t mask;		/* the general-purpose counters Counter lists, 0: none listed */
	uint32_t mask_htoff;	/* CounterHTOff's (Skylake family, SMT off), 0: as mask */
};

static struct {
	char dir[64];		/* "sapphirerapids", "" when unknown */
	char cpuid[64];		/* "GenuineIntel-6-8F", "GenuineIntel-6-55-7" */
	bool stepped;		/* cpuid ends in a stepping */
	struct tevent *ev;
	int nev, cap;
} tab;

static char tables_root[4096];

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		fp_fatal("fakepmu: out of memory");
	return p;
}

/* x86 config bits (arch/x86/include/asm/perf_event.h), plus AMD's event
 * select bits 32-35 (AMD64_EVENTSEL_EVENT). */
void fp_decode_x86(uint64_t config, uint64_t config1, bool amd, struct fp_enc *out)
{
	memset(out, 0, sizeof(*out));
	/* AMD's config1 is no event's (its extra registers are not in
	 * perf's tables); Intel's is the extra register value. */
	out->config1 = amd ? 0 : config1;
	out->event = (uint16_t)(config & 0xff);
	if (amd)
		out->event |= (uint16_t)(((config >> 32) & 0xf) << 8);
	out->umask = (uint8_t)((config >> 8) & 0xff);
	out->cmask = (uint8_t)((config >> 24) & 0xff);
	out->edge = (config >> 18) & 1;
	out->inv = (config >> 23) & 1;
	out->any = !amd && ((config >> 21) & 1);
}

/* arm64: config holds the PMUv3 event number (format/event config:0-15). */
void fp_decode(uint64_t config, uint64_t config1, struct fp_enc *out)
{
	if (!fp_fix.arm) {
		fp_decode_x86(config, config1, fp_fix.amd, out);
		return;
	}
	memset(out, 0, sizeof(*out));
	out->event = (uint16_t)(config & 0xffff);
}

static bool enc_equal(const struct fp_enc *a, const struct fp_enc *b)
{
	return a->event == b->event && a->umask == b->umask && a->cmask == b->cmask &&
	       a->edge == b->edge && a->inv == b->inv && a->any == b->any && a->config1 == b->config1;
}

static unsigned long hexnum(json_t *v)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;

	/* "0xB7,0xBB" (offcore events on two codes): the first is the event. */
	return s ? strtoul(s, NULL, 0) : 0;
}

/* perf encodes these well-known events itself, whatever the JSON says:
 * they are what the fixed counters count.  reference/jevents-fixed.json
 * (jevents.py real_event()), beside the tables root, loaded once. */
#define JEVENTS_FIXED_MAX 16
static struct {
	char name[64];
	struct fp_enc enc;
} jevents_fixed[JEVENTS_FIXED_MAX];
static size_t n_jevents_fixed;
static bool jevents_fixed_loaded;

static void load_jevents_fixed(void)
{
	char path[8192], *slash;
	json_error_t jerr;
	json_t *root, *events, *v;
	const char *name;

	if (jevents_fixed_loaded)
		return;
	snprintf(path, sizeof(path), "%s", tables_root);
	slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path, sizeof(path) - (size_t)(slash ? slash + 1 - path : 0),
		 "jevents-fixed.json");
	root = json_load_file(path, 0, &jerr);
	events = root ? json_object_get(root, "events") : NULL;
	if (!json_is_object(events))
		fp_fatal("fakepmu: cannot read %s: %s (beside the perf tables: set FAKEPMU_TABLES)", path,
			 root ? "no \"events\" object" : jerr.text);
	json_object_foreach(events, name, v) {
		char terms[128], *save = NULL;

		if (n_jevents_fixed == JEVENTS_FIXED_MAX || strlen(name) >= sizeof(jevents_fixed[0].name) ||
		    !json_is_string(v) || strlen(json_string_value(v)) >= sizeof(terms))
			fp_fatal("fakepmu: %s: entry %s too long, or too many", path, name);
		strcpy(jevents_fixed[n_jevents_fixed].name, name);
		strcpy(terms, json_string_value(v));
		for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			struct fp_enc *e = &jevents_fixed[n_jevents_fixed].enc;
			char *eq = strchr(t, '=');
			unsigned long n = eq ? strtoul(eq + 1, NULL, 0) : 0;

			if (eq)
				*eq = '\0';
			if (!strcmp(t, "event"))
				e->event = (uint16_t)n;
			else if (!strcmp(t, "umask"))
				e->umask = (uint8_t)n;
			else if (!strcmp(t, "any"))
				e->any = n != 0;
			else
				fp_fatal("fakepmu: %s: %s: unknown term %s", path, name, t);
		}
		n_jevents_fixed++;
	}
	json_decref(root);
	jevents_fixed_loaded = true;
}

static void apply_jevents_fixed(struct tevent *t)
{
	load_jevents_fixed();
	for (size_t i = 0; i < n_jevents_fixed; i++) {
		if (strcasecmp(t->name, jevents_fixed[i].name) != 0)
			continue;
		t->enc = jevents_fixed[i].enc;
	}
}

static uint32_t counter_mask(const char *c)
{
	uint32_t m = 0;

	if (!c || !strncmp(c, "Fixed counter ", 14))
		return 0;
	for (const char *p = c; *p; p++)
		if (*p >= '0' && *p <= '9' && (p == c || p[-1] == ',') && atoi(p) < 32)
			m |= 1u << atoi(p);
	return m;
}

static void parse_counter(struct tevent *t, const char *c, const char *htoff)
{
	t->mask = counter_mask(c);
	t->mask_htoff = counter_mask(htoff);
	t->max_gp = -1;
	for (int n = 0; n < 32; n++)
		if (t->mask & (1u << n))
			t->max_gp = n;
}

static void add_events_file(const char *path)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr), *e;
	size_t i;

	if (!root)
		fp_fatal("fakepmu: %s: %s", path, jerr.text);
	json_array_foreach(root, i, e) {
		json_t *name = json_object_get(e, "EventName");
		json_t *unit = json_object_get(e, "Unit");
		json_t *counter = json_object_get(e, "Counter");
		json_t *htoff = json_object_get(e, "CounterHTOff");
		struct tevent *t;

		if (!json_is_string(name))
			continue;
		if (tab.nev == tab.cap) {
			tab.cap = tab.cap ? tab.cap * 2 : 512;
			tab.ev = xrealloc(tab.ev, (size_t)tab.cap * sizeof(*tab.ev));
		}
		t = &tab.ev[tab.nev];
		memset(t, 0, sizeof(*t));
		if (strlen(json_string_value(name)) >= sizeof(t->name))
			continue;
		strcpy(t->name, json_string_value(name));
		if (json_is_string(unit) && strlen(json_string_value(unit)) < sizeof(t->unit))
			strcpy(t->unit, json_string_value(unit));
		t->enc.event = (uint16_t)hexnum(json_object_get(e, "EventCode"));
		t->enc.umask = (uint8_t)hexnum(json_object_get(e, "UMask"));
		t->enc.cmask = (uint8_t)hexnum(json_object_get(e, "CounterMask"));
		t->enc.edge = hexnum(json_object_get(e, "EdgeDetect")) != 0;
		t->enc.inv = hexnum(json_object_get(e, "Invert")) != 0;
		t->enc.any = hexnum(json_object_get(e, "AnyThread")) != 0;
		if (json_is_string(json_object_get(e, "MSRIndex")))
			t->enc.config1 = strtoull(json_string_value(json_object_get(e, "MSRValue")) ?
						  json_string_value(json_object_get(e, "MSRValue")) : "0", NULL, 0);
		parse_counter(t, json_is_string(counter) ? json_string_value(counter) : NULL,
			      json_is_string(htoff) ? json_string_value(htoff) : NULL);
		apply_jevents_fixed(t);
		tab.nev++;
	}
	json_decref(root);
}

static bool is_events_file(const char *name)
{
	size_t n = strlen(name);

	/* metrics files (spr-metrics.json, ...) hold no events */
	return n > 5 && !strcmp(name + n - 5, ".json") && !strstr(name, "metrics");
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void load_dir(const char *root, const char *arch, const char *dir, bool must)
{
	char path[8192], *names[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s/%s", root, arch, dir);
	d = opendir(path);
	if (!d && !must)
		return;
	if (!d)
		fp_fatal("fakepmu: perf tables: cannot open %s: %s (set FAKEPMU_TABLES)", path,
			 strerror(errno));
	while ((de = readdir(d)) != NULL && n < 64)
		if (is_events_file(de->d_name))
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), name_cmp);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s/%s", root, arch, dir, names[i]);
		add_events_file(path);
		free(names[i]);
	}
}

/* perf's strcmp_cpuid_str() (tools/perf/arch/x86/util/header.c): the
 * mapfile pattern must match the whole vendor-family-model-stepping
 * string, or all of it but the stepping. */
static bool cpuid_matches(const char *pattern, const char *cpuid)
{
	const char *last = strrchr(cpuid, '-');
	size_t full = strlen(cpuid), without = last && tab.stepped ? (size_t)(last - cpuid) : full;
	regmatch_t m[1];
	regex_t re;
	bool ok;

	if (regcomp(&re, pattern, REG_EXTENDED) != 0)
		return false;
	ok = regexec(&re, cpuid, 1, m, 0) == 0 && m[0].rm_so == 0 &&
	     ((size_t)m[0].rm_eo == full || (size_t)m[0].rm_eo == without);
	regfree(&re);
	return ok;
}

static void find_dir(void)
{
	char path[8192], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/x86/mapfile.csv", tables_root);
	f = fopen(path, "re");
	if (!f)
		fp_fatal("fakepmu: perf tables: cannot open %s: %s (set FAKEPMU_TABLES)", path,
			 strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *pattern = line, *version, *dir;

		if (line[0] == '#' || strncmp(line, "Family-model", 12) == 0)
			continue;
		version = strchr(pattern, ',');
		if (!version)
			continue;
		*version++ = '\0';
		dir = strchr(version, ',');
		if (!dir)
			continue;
		*dir++ = '\0';
		dir[strcspn(dir, ",\n")] = '\0';
		if (strlen(dir) < sizeof(tab.dir) && cpuid_matches(pattern, tab.cpuid)) {
			strcpy(tab.dir, dir);
			break;
		}
	}
	fclose(f);
}

void fp_tables_load(const char *modalias, int stepping)
{
	const char *root = getenv("FAKEPMU_TABLES");
	unsigned vendor, family, model;
	const char *p;

	snprintf(tables_root, sizeof(tables_root), "%s",
		 root && *root ? root : FAKEPMU_TABLES_DEFAULT);
	/* cpu:type:x86,ven0000fam0006mod008F:feature:... */
	p = modalias ? strstr(modalias, "type:x86,ven") : NULL;
	if (!p || sscanf(p, "type:x86,ven%4xfam%4xmod%4x", &vendor, &family, &model) != 3)
		return;
	if (vendor != 0 && vendor != 2)
		return;
	snprintf(tab.cpuid, sizeof(tab.cpuid), "%s-%u-%X",
		 vendor == 0 ? "GenuineIntel" : "AuthenticAMD", family, model);
	if (stepping >= 0) {
		size_t n = strlen(tab.cpuid);

		snprintf(tab.cpuid + n, sizeof(tab.cpuid) - n, "-%X", (unsigned)stepping);
		tab.stepped = true;
	}
	fp_fix.amd = vendor == 2;
	find_dir();
	if (tab.dir[0]) {
		const char *fallback = getenv("FAKEPMU_TABLES_FALLBACK");

		/* A model the reference copy has no directory for (Broadwell,
		 * Haswell): no table, as for a model perf does not know. */
		load_dir(tables_root, "x86", tab.dir, false);
		/* Events the first root's files lack (an event found twice is
		 * named by its first entry). */
		if (fallback && *fallback)
			load_dir(fallback, "x86", tab.dir, false);
	}
}

/* perf's arm64 strcmp_cpuid_str() (tools/perf/arch/arm64/util/header.c):
 * the MIDR without its variant (bits 23:20) and revision (3:0) must be
 * the mapfile's, and the CPU's variant and revision at least the
 * mapfile's. */
static bool midr_matches(unsigned long long map, unsigned long long cpu)
{
	const unsigned long long version = 0xf0000fULL;
	unsigned map_v = (unsigned)((map >> 20) & 0xf) << 4 | (unsigned)(map & 0xf);
	unsigned cpu_v = (unsigned)((cpu >> 20) & 0xf) << 4 | (unsigned)(cpu & 0xf);

	return (map & ~version) == (cpu & ~version) && cpu_v >= map_v;
}

void fp_tables_load_arm(const char *midr)
{
	const char *root = getenv("FAKEPMU_TABLES");
	unsigned long long cpu;
	char path[8192], line[512];
	FILE *f;

	snprintf(tables_root, sizeof(tables_root), "%s",
		 root && *root ? root : FAKEPMU_TABLES_DEFAULT);
	if (!midr || !*midr)
		return;
	cpu = strtoull(midr, NULL, 16);
	snprintf(tab.cpuid, sizeof(tab.cpuid), "0x%016llx", cpu);
	snprintf(path, sizeof(path), "%s/arm64/mapfile.csv", tables_root);
	f = fopen(path, "re");
	if (!f)
		fp_fatal("fakepmu: perf tables: cannot open %s: %s (set FAKEPMU_TABLES)", path,
			 strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *dir;

		if (strncmp(line, "0x", 2) != 0)
			continue;
		dir = strchr(line, ',');
		dir = dir ? strchr(dir + 1, ',') : NULL;
		if (!dir)
			continue;
		dir++;
		dir[strcspn(dir, ",\n")] = '\0';
		if (strlen(dir) < sizeof(tab.dir) && midr_matches(strtoull(line, NULL, 16), cpu)) {
			strcpy(tab.dir, dir);
			break;
		}
	}
	fclose(f);
	if (!tab.dir[0])
		return;
	/* The core's own event files name the architecture's common events
	 * ({"ArchStdEvent": "STALL_SLOT"}); their encodings are in
	 * common-and-microarch.json, which the reference copy holds in full
	 * (and the per-core files not). */
	snprintf(path, sizeof(path), "%s/arm64/common-and-microarch.json", tables_root);
	add_events_file(path);
	load_dir(tables_root, "arm64", tab.dir, false);
}

const char *fp_tables_dir(void)
{
	return tab.dir;
}

static bool unit_matches(const struct tevent *t, const char *pmu)
{
	return !t->unit[0] || !strcmp(t->unit, pmu);
}

static const struct tevent *find_enc(const char *pmu, const struct fp_enc *enc)
{
	for (int i = 0; i < tab.nev; i++)
		if (unit_matches(&tab.ev[i], pmu) && enc_equal(&tab.ev[i].enc, enc))
			return &tab.ev[i];
	return NULL;
}

static const struct tevent *find_name(const char *pmu, const char *name, size_t len)
{
	for (int i = 0; i < tab.nev; i++)
		if (unit_matches(&tab.ev[i], pmu) && strlen(tab.ev[i].name) == len &&
		    !memcmp(tab.ev[i].name, name, len))
			return &tab.ev[i];
	return NULL;
}

/* The filters of @enc beyond its event and unit mask, perf's way. */
static int filters(const struct fp_enc *enc, char *buf, size_t len)
{
	int n = 0;

	if (enc->cmask)
		n += snprintf(buf + n, len - (size_t)n, ",cmask=%u", enc->cmask);
	if (enc->edge)
		n += snprintf(buf + n, len - (size_t)n, ",edge=1");
	if (enc->inv)
		n += snprintf(buf + n, len - (size_t)n, ",inv=1");
	if (enc->any)
		n += snprintf(buf + n, len - (size_t)n, ",any=1");
	if (enc->config1)
		n += snprintf(buf + n, len - (size_t)n, ",config1=0x%llx", (unsigned long long)enc->config1);
	return n;
}

bool fp_tables_name(const char *pmu, const struct fp_enc *enc, char *buf, size_t len)
{
	const struct tevent *t = find_enc(pmu, enc);
	struct fp_enc base;
	int n;

	if (t) {
		snprintf(buf, len, "%s", t->name);
		return true;
	}
	base = *enc;
	base.cmask = 0;
	base.edge = base.inv = base.any = false;
	t = find_enc(pmu, &base);
	if (!t) {
		/* No table event has this event and unit mask (perf's
		 * "cpu@EXE_ACTIVITY.3_PORTS_UTIL,umask=0x80@" opens 0x88a6):
		 * its raw encoding names it. */
		if (!tab.nev || fp_fix.arm)
			return false;
		n = snprintf(buf, len, "raw:event=0x%x,umask=0x%x", enc->event, enc->umask);
		filters(enc, buf + n, len - (size_t)n);
		return true;
	}
	n = snprintf(buf, len, "%s", t->name);
	filters(enc, buf + n, len - (size_t)n);
	return true;
}

uint32_t fp_tables_gp_mask(const char *pmu, const struct fp_enc *enc, bool smt_off)
{
	const struct tevent *t = find_enc(pmu, enc);
	struct fp_enc base;

	if (!t) {
		base = *enc;
		base.cmask = 0;
		base.edge = base.inv = base.any = false;
		t = find_enc(pmu, &base);
	}
	if (!t)
		return 0;
	return smt_off && t->mask_htoff ? t->mask_htoff : t->mask;
}

int fp_tables_lookup(const char *pmu, const char *name, struct fp_enc *out)
{
	const char *comma = strchr(name, ',');
	const struct tevent *t = find_name(pmu, name, comma ? (size_t)(comma - name) : strlen(name));

	if (!t)
		return -ENOENT;
	*out = t->enc;
	/* perf's terms after an event's name go into its fields bit by bit,
	 * OR-ed into the table's (perf 6.1's util/pmu.c pmu_format_value()
	 * with zero false): "EXE_ACTIVITY.3_PORTS_UTIL,umask=0x80" is
	 * umask 0x88. */
	while (comma) {
		const char *term = comma + 1;
		unsigned v;

		comma = strchr(term, ',');
		if (sscanf(term, "cmask=%u", &v) == 1 && v < 256)
			out->cmask |= (uint8_t)v;
		else if (sscanf(term, "umask=%x", &v) == 1 && v < 256)
			out->umask |= (uint8_t)v;
		else if (!strncmp(term, "edge=1", 6))
			out->edge = true;
		else if (!strncmp(term, "inv=1", 5))
			out->inv = true;
		else if (!strncmp(term, "any=1", 5))
			out->any = true;
		else
			return -EINVAL;
	}
	return 0;
}

/* The number of general-purpose counters: the highest counter an event of
 * the table may use, plus one ("Counter": "0,1,2,3,4,5,6,7").  Tables
 * without Counter fields (AMD) get their vendor's number from the caller. */
int fp_tables_gp_counters(const char *pmu)
{
	int best = -1;

	for (int i = 0; i < tab.nev; i++)
		if (unit_matches(&tab.ev[i], pmu) && tab.ev[i].max_gp > best)
			best = tab.ev[i].max_gp;
	return best < 0 ? -1 : best + 1;
}
