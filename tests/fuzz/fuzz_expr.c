/* SPDX-License-Identifier: MIT */
/* expr_compile over arbitrary text (perf's metric expression language).
 * Invariants: a refusal is -EINVAL or -ENOENT with a message "at N: ..."
 * whose N is within the text (or just after it) and no program; an
 * accepted expression reads variables the names callback numbered (below
 * 16), evaluates the same twice, and compiles again to the same value;
 * put in parentheses and negated twice it keeps its value, unless that
 * nesting is refused as too deep. */
#include <errno.h>
#include <math.h>

#include "expr.h"
#include "fuzz_common.h"

static int variable(void *arg, const char *name, unsigned *index)
{
	unsigned h = 5381;

	(void)arg;
	for (const char *p = name; *p; p++)
		h = h * 33 + (unsigned char)*p;
	/* Some names are unknown, as a table's event a PMU lacks. */
	if (h % 17 == 0)
		return -ENOENT;
	*index = h % 16;
	return 0;
}

static int literal(void *arg, const char *name, double *value)
{
	(void)arg;
	*value = (double)(strlen(name) % 4);
	return name[1] == 'x' ? -ENOENT : 0;
}

static int function(void *arg, const char *fn, const char *name, double *value)
{
	(void)arg;
	*value = (double)((strlen(fn) + strlen(name)) % 2);
	return 0;
}

static const struct expr_names names = { variable, literal, function, NULL };
/* Zeros and a NaN among them: divisions by zero and valueless inputs. */
static const double vars[16] = { 0, 1, 2, 3, -1, 0.5, 1e9, NAN, 7, 0, 42, 1e-9, 3.25, -8, 100, 9 };

FUZZ_NO_COVERAGE static bool same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

FUZZ_NO_COVERAGE static void check_wrapped(const char *text, double v)
{
	size_t n = strlen(text);
	char *w = fuzz_malloc(n + 8);
	char err[160];
	struct expr *e;
	int r;

	snprintf(w, n + 8, "-(-(%s))", text);
	r = expr_compile(w, &names, &e, err, sizeof(err));
	if (r == 0) {
		FUZZ_CHECK(same(expr_eval(e, vars), v), "-(-(%s)) is %g, not %g", text, expr_eval(e, vars), v);
		expr_free(e);
	} else {
		FUZZ_CHECK(strstr(err, "nested deeper") || strstr(err, "longer than"),
			   "-(-(%s)) refused: %s", text, err);
	}
	free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	char err[160];
	struct expr *e = (struct expr *)&e, *again;
	int r = expr_compile(text, &names, &e, err, sizeof(err));

	if (r < 0) {
		unsigned long at = 0;

		FUZZ_CHECK(r == -EINVAL || r == -ENOENT, "expr_compile returned %d", r);
		FUZZ_CHECK(e == NULL, "a refusal left a program");
		FUZZ_CHECK(fuzz_err_ok(err, sizeof(err)) && sscanf(err, "at %lu: ", &at) == 1,
			   "message \"%s\"", err);
		FUZZ_CHECK(at >= 1 && at <= strlen(text) + 1, "at %lu of %zu characters", at, strlen(text));
		free(text);
		return 0;
	}
	FUZZ_CHECK(expr_variables(e) <= 16, "%u variables", expr_variables(e));
	{
		double v = expr_eval(e, vars);

		FUZZ_CHECK(same(v, expr_eval(e, vars)), "two evaluations differ");
		FUZZ_CHECK(expr_compile(text, &names, &again, err, sizeof(err)) == 0, "a second compile: %s", err);
		FUZZ_CHECK(same(v, expr_eval(again, vars)), "a second compile evaluates otherwise");
		expr_free(again);
		check_wrapped(text, v);
	}
	expr_free(e);
	free(text);
	return 0;
}
