/* SPDX-License-Identifier: MIT */
/* The counter budget's hardware facts against the kernel source they
 * come from: the encodings the Intel perf driver may put on a fixed
 * counter (budget_x86_fixed_codes) are exactly the FIXED_EVENT_CONSTRAINT
 * entries of reference/kernel/intel-fixed-constraints.c, an excerpt of
 * arch/x86/events/intel/core.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "budget.h"
#include "testlib.h"

/* The reference file: beside the fixtures ($FIXTURES/../../reference),
 * else the source tree's. */
static FILE *open_reference(void)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/../../reference/kernel/intel-fixed-constraints.c", fixtures());
	f = fopen(path, "re");
	return f ? f : fopen("reference/kernel/intel-fixed-constraints.c", "re");
}

static void test_fixed_codes_are_the_kernels(void **state)
{
	unsigned codes[64], n = 0;
	char line[512];
	FILE *f = open_reference();

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && n < 64) {
		const char *p = strstr(line, "FIXED_EVENT_CONSTRAINT(");
		unsigned code;
		bool seen = false;

		if (!p || sscanf(p, "FIXED_EVENT_CONSTRAINT(%x,", &code) != 1)
			continue;
		for (unsigned i = 0; i < n; i++)
			seen = seen || codes[i] == code;
		if (!seen)
			codes[n++] = code;
	}
	fclose(f);
	/* Ice Lake's six and Skymont's four more. */
	assert_int_equal(n, BUDGET_X86_FIXED_CODES);
	for (unsigned i = 0; i < n; i++) {
		bool listed = false;

		for (unsigned k = 0; k < BUDGET_X86_FIXED_CODES; k++)
			listed = listed || budget_x86_fixed_codes[k] == codes[i];
		if (!listed)
			fail_msg("the kernel may put %#06x on a fixed counter; budget_x86_fixed_codes lacks it",
				 codes[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_codes_are_the_kernels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
