/* SPDX-License-Identifier: MIT */
/* render_bench: per-interval render cost of each /metrics format, for
 * `make bench`.
 *
 * Links the daemon's own objects (every build/daemon object but main.o) and runs,
 * under the fake PMU, the same pipeline as topdownd: discovery, plan,
 * collector, two intervals, a snapshot.  Then sums it as its first reader
 * does (cores, packages, the host) and renders it as Prometheus text and
 * OpenMetrics and compresses each through the daemon's body module (the
 * render cache's path: buffers reused across renders, one compressor per
 * slot), many times, and prints one line per variant:
 *   variant=text bytes=N median_us=X min_us=Y allocs=Z
 * allocs: heap allocations per render, when allocount.so is preloaded;
 * fresh: buffers that were not a reused one, over all renders.
 *
 * Usage: render_bench SYSFS_ROOT REPEATS [AGE_SECONDS]
 * AGE_SECONDS scales the cumulative counters to a daemon that has been up
 * that long (more digits per sample, as in production); 0 = as collected. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "body.h"
#include "collector.h"
#include "config.h"
#include "expo.h"
#include "plan.h"
#include "pmu.h"
#include "snapshot.h"
#include "sysfs.h"
#include "topo.h"
#include "util.h"
#include "version.h"

#ifndef GZIP_LEVEL
#define GZIP_LEVEL 1
#endif

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const uint64_t *(*alloc_words)(void);

static uint64_t allocs(void)
{
	const uint64_t *w = alloc_words ? alloc_words() : NULL;

	return w ? w[2] + w[4] : 0;
}

struct result {
	size_t bytes;
	uint64_t *ns;
	uint64_t allocs;
};

static void report(const char *variant, struct result *r, int reps)
{
	qsort(r->ns, (size_t)reps, sizeof(*r->ns), cmp_u64);
	printf("variant=%s bytes=%zu median_us=%.1f min_us=%.1f allocs=%.1f\n", variant, r->bytes,
	       (double)r->ns[reps / 2] / 1e3, (double)r->ns[0] / 1e3,
	       alloc_words ? (double)r->allocs / reps : -1.0);
}

int main(int argc, char **argv)
{
	struct sysfs *sysfs;
	struct topo *topo;
	struct pmu_info pmu;
	struct config cfg;
	struct plan plan;
	struct collector *coll;
	struct snapring *ring;
	struct snapshot *snap;
	int reps;
	double age;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SYSFS_ROOT REPEATS [AGE_SECONDS]\n", argv[0]);
		return 64;
	}
	reps = atoi(argv[2]);
	age = argc > 3 ? atof(argv[3]) : 0;
	if (reps < 1)
		reps = 1;
	*(void **)&alloc_words = dlsym(RTLD_DEFAULT, "allocount_words");

	config_defaults(&cfg);
	if (sysfs_new(argv[1], &sysfs) < 0 || topo_new(sysfs, &topo) < 0 ||
	    pmu_discover(sysfs, &pmu) < 0) {
		fprintf(stderr, "render_bench: discovery failed under %s\n", argv[1]);
		return 1;
	}
	plan_make(&pmu, topo, &cfg, NULL, &plan);
	struct collector_params params = {
		.sysfs = sysfs, .topo = topo, .pmu = &pmu, .plan = &plan,
		.count_kernel = cfg.count_kernel, .interval_ns = 20 * 1000000u,
		.fd_others_want = 256, .fd_others_min = 256,
	};
	if (collector_new(&params, &coll) < 0 || collector_start(coll) < 0 ||
	    snapring_new(collector_capacity(coll), 0, &ring) < 0) {
		fprintf(stderr, "render_bench: collector set-up failed\n");
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		sleep_ms(20);
		snap = snapring_begin(ring);
		collector_collect(coll, now_ns(), snap);
		if (i == 0)
			snapring_publish(ring, snap);
	}
	if (age > 0) {
		/* As if the same rates had been counted for @age seconds. */
		double scale = age / (2 * 0.020);

		for (unsigned i = 0; i < snap->n_cpus; i++)
			for (int k = 0; k < TD_C_COUNT; k++)
				snap->cpus[i].c.total[k] *= scale;
		snapshot_aggregate(snap);
		snap->seq = (uint64_t)(age / 1.0);
	}
	snapring_publish(ring, snap);
	printf("cpus=%u monitored=%u level=%u age_s=%.0f gzip_level=%d\n", snap->n_cpus,
	       snap->cpus_by_state[CPU_STATE_MONITORED], snap->level, age, GZIP_LEVEL);

	/* The largest body: one series per CPU (the bench's configuration). */
	struct expo_options opt = {
		.granularity = GRAN_CPU,
		.ratios = cfg.ratios,
		.version = topdownd_version,
		.revision = topdownd_revision,
	};
	static const struct {
		const char *name;
		enum expo_format format;
	} formats[] = { { "text", EXPO_TEXT }, { "openmetrics", EXPO_OPENMETRICS } };

	struct body_pool *pool;

	if (body_pool_new(4, GZIP_LEVEL, &pool) < 0)
		return 1;
	{
		/* What the first reader of an interval pays: cores, packages and
		 * the host summed. */
		struct result sum = { 0 };

		sum.ns = calloc((size_t)reps, sizeof(uint64_t));
		for (int i = -2; i < reps; i++) {
			uint64_t t0 = now_ns(), a0 = allocs();

			snapshot_aggregate(snap);
			if (i < 0)
				continue;
			sum.ns[i] = now_ns() - t0;
			sum.allocs += allocs() - a0;
		}
		report("sum", &sum, reps);
		free(sum.ns);
	}
	for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		struct result plain = { 0 }, gz = { 0 };
		char name[64];

		plain.ns = calloc((size_t)reps, sizeof(uint64_t));
		gz.ns = calloc((size_t)reps, sizeof(uint64_t));
		for (int i = -2; i < reps; i++) { /* two warm-up rounds */
			uint64_t t0, t1, t2, a0, a1, a2;
			struct body *b, *z;

			a0 = allocs();
			t0 = now_ns();
			b = body_render(pool, 2 * (unsigned)f, snap, &opt, formats[f].format);
			if (!b) {
				fprintf(stderr, "render_bench: render failed\n");
				return 1;
			}
			t1 = now_ns();
			a1 = allocs();
			z = body_gzip(pool, 2 * (unsigned)f + 1, b);
			if (!z) {
				fprintf(stderr, "render_bench: deflate failed\n");
				return 1;
			}
			t2 = now_ns();
			a2 = allocs();
			if (i >= 0) {
				plain.ns[i] = t1 - t0;
				gz.ns[i] = t2 - t1;
				plain.bytes = b->len;
				gz.bytes = z->len;
				plain.allocs += a1 - a0;
				gz.allocs += a2 - a1;
			}
			body_unref(z);
			body_unref(b);
		}
		report(formats[f].name, &plain, reps);
		snprintf(name, sizeof(name), "%s+gzip_only", formats[f].name);
		report(name, &gz, reps);
		free(plain.ns);
		free(gz.ns);
	}
	printf("fresh_buffers=%lu renders=%d\n", body_fresh_buffers(pool), 4 * (reps + 2));
	body_pool_free(pool);
	snapring_free(ring);
	collector_free(coll);
	topo_free(topo);
	sysfs_free(sysfs);
	return 0;
}
