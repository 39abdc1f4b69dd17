/* SPDX-License-Identifier: MIT */
/* Unit tests of expr, perf's metric expressions: perf's precedence and
 * associativity (tools/perf/util/expr.y), its lexer's numbers, names with
 * escapes and literals (expr.l), "if else", the functions, what perf
 * does with a division by zero (the whole expression has no value, even
 * in the branch not taken: bison evaluates both) and with a valueless
 * variable, and the errors, each naming where. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "expr.h"

/* The test's names: a, b, c, zero, nan, and any other name is given the
 * next index, remembered (with its unescaped spelling) for the test to
 * check. */
static double vars[32];
static char seen[32][EXPR_NAME_MAX];
static unsigned n_seen;

static int variable(void *arg, const char *name, unsigned *index)
{
	static const char *const fixed[] = { "a", "b", "c", "zero", "nan" };

	(void)arg;
	for (unsigned i = 0; i < 5; i++)
		if (!strcmp(name, fixed[i])) {
			*index = i;
			return 0;
		}
	if (!strcmp(name, "missing"))
		return -ENOENT;
	for (unsigned i = 5; i < 5 + n_seen; i++)
		if (!strcmp(seen[i - 5], name)) {
			*index = i;
			return 0;
		}
	if (n_seen == 27)
		return -E2BIG;
	snprintf(seen[n_seen], sizeof(seen[0]), "%s", name);
	*index = 5 + n_seen++;
	return 0;
}

static int literal(void *arg, const char *name, double *value)
{
	(void)arg;
	if (!strcmp(name, "#slots")) {
		*value = 8;
		return 0;
	}
	if (!strcmp(name, "#SMT_on")) {
		*value = 1;
		return 0;
	}
	return -ENOENT;
}

static int function(void *arg, const char *fn, const char *name, double *value)
{
	(void)arg;
	if (!strcmp(fn, "has_event")) {
		*value = strcmp(name, "present") == 0;
		return 0;
	}
	if (!strcmp(fn, "strcmp_cpuid_str")) {
		*value = strcmp(name, "0x410fd493") == 0;
		return 0;
	}
	return -ENOENT;
}

static const struct expr_names names = { variable, literal, function, NULL };

static int setup(void **state)
{
	(void)state;
	memset(vars, 0, sizeof(vars));
	vars[0] = 2;   /* a */
	vars[1] = 3;   /* b */
	vars[2] = 4;   /* c */
	vars[3] = 0;   /* zero */
	vars[4] = NAN; /* nan */
	n_seen = 0;
	return 0;
}

static double eval(const char *text)
{
	struct expr *e;
	char err[256];
	double v;
	int r = expr_compile(text, &names, &e, err, sizeof(err));

	if (r != 0)
		fail_msg("expr_compile(\"%s\") = %d: %s", text, r, err);
	v = expr_eval(e, vars);
	expr_free(e);
	return v;
}

static void is(const char *text, double want)
{
	double got = eval(text);

	if (isnan(want) ? !isnan(got) : fabs(got - want) > 1e-12 * fabs(want) + 1e-300)
		fail_msg("%s = %.17g, expected %.17g", text, got, want);
}

static void refused(const char *text, int code, const char *msg)
{
	struct expr *e = (struct expr *)&e;
	char err[256] = "";
	int r = expr_compile(text, &names, &e, err, sizeof(err));

	if (r != code)
		fail_msg("expr_compile(\"%.60s\") = %d, expected %d (%s)", text, r, code, err);
	assert_null(e);
	assert_string_equal(err, msg);
}

static void test_precedence(void **state)
{
	(void)state;
	is("1 + 2 * 3", 7);
	is("(1 + 2) * 3", 9);
	is("2 - 3 - 4", -5);       /* left associative */
	is("8 / 4 / 2", 1);
	is("7 % 4 * 2", 6);        /* '%' with '*' and '/' */
	is("-2 * 3", -6);
	is("- 2 - 3", -5);         /* unary minus binds tightest */
	is("--a", 2);
	is("1 < 2 + 3", 1);        /* comparisons below '+' */
	is("a * 2 > 5", 0);
	is("1 | 2 ^ 3 & 1", 3);    /* '&' over '^' over '|': 1 | (2 ^ (3 & 1)) */
	is("6 & 3", 2);            /* bitwise on the values cast to long */
	is("5 ^ 1", 4);
	is("2.9 | 0", 2);
	is("a <= 2", 1);
	is("a >= 3", 0);
	is("a == 2", 1);
}

static void test_if_else(void **state)
{
	(void)state;
	is("1 if 0 else 2", 2);
	is("1 if 5 else 2", 1);
	is("1 if -0 else 2", 2);   /* fpclassify: -0 is zero */
	is("1 if nan else 2", 1);  /* a NaN condition is not zero */
	is("1 if 0 else 2 if 0 else 3", 3); /* the else an if_expr */
	is("a + 1 if a > 1 else b", 3);     /* 'if' the loosest */
	is("(1 if 0 else 2) * 10", 20);
	is("1 if #SMT_on else 0", 1);
}

static void test_functions(void **state)
{
	(void)state;
	is("min(1, 2)", 1);
	is("max(0, -3)", 0);
	is("max(0, a - b)", 0);
	is("min(a, b) + max(a, b)", 5);
	is("d_ratio(1, 2)", 0.5);
	is("d_ratio(a, zero)", 0);
	is("d_ratio(nan, zero)", 0);
	is("has_event(present)", 1);
	is("has_event(absent)", 0);
	is("strcmp_cpuid_str(0x410fd493)", 1);
	is("#slots * 2", 16);
}

/* perf aborts the whole parse on a division by zero (expr.y: YYABORT),
 * wherever it is: no value.  A valueless variable (a metric referred to
 * that had none) flows through arithmetic and comparisons, and min and
 * max are C's conditional expressions. */
static void test_no_value(void **state)
{
	(void)state;
	is("1 / 0", NAN);
	is("a / zero + 1", NAN);
	is("0 if 1 else 1 / zero", NAN); /* the branch not taken too */
	is("d_ratio(1 / zero, 1)", NAN);
	is("max(0, 1 / zero)", NAN);
	is("5 % 0", NAN);
	is("5 % 0.5", NAN);              /* (long) 0.5 is 0 */
	is("nan + 1", NAN);
	is("nan < 1", NAN);
	is("nan | 1", NAN);
	is("min(nan, 1)", 1);            /* nan < 1 is false */
	is("max(0, nan)", NAN);          /* 0 > nan is false */
	is("d_ratio(1, nan)", NAN);
	is("nan / a", NAN);              /* no abort: a value that flows */
}

static void test_lexer(void **state)
{
	struct expr *e;
	char err[256];

	(void)state;
	is("1e9 / 1e3", 1e6);
	is(".5 + 1.", 1.5);
	is("2e-3", 0.002);
	is("1.5E+2", 150);
	is("\t1\n+\r2 ", 3);
	/* Names with perf's escapes come unescaped; a name that starts with
	 * a digit is a name when it is longer than the number (flex). */
	assert_int_equal(expr_compile("topdown\\-fe\\-bound / (topdown\\-fe\\-bound + topdown\\-retiring) - "
				      "cpu@INT_MISC.RECOVERY_CYCLES\\,cmask\\=1\\,edge@ + 2t + cpu_core@X.Y@",
				      &names, &e, err, sizeof(err)), 0);
	assert_int_equal(n_seen, 5);
	assert_string_equal(seen[0], "topdown-fe-bound");
	assert_string_equal(seen[1], "topdown-retiring");
	assert_string_equal(seen[2], "cpu@INT_MISC.RECOVERY_CYCLES,cmask=1,edge@");
	assert_string_equal(seen[3], "2t");
	assert_string_equal(seen[4], "cpu_core@X.Y@");
	assert_int_equal(expr_variables(e), 10);
	vars[5] = 1, vars[6] = 3, vars[7] = 0.5, vars[8] = 10, vars[9] = 0.25;
	assert_true(fabs(expr_eval(e, vars) - (0.25 - 0.5 + 10 + 0.25)) < 1e-12);
	expr_free(e);
	/* An '=' between a name's @s is the name's (perf 7.2's hybrid
	 * msr@tsc\,cpu=cpu_core@: jevents.py escapes it); outside them it
	 * is no name's (test_errors: "a = b", "a=b"). */
	assert_int_equal(expr_compile("msr@tsc\\,cpu=cpu_core@ / 1e9 + cpu_core@A\\,x=1@", &names, &e, err,
				      sizeof(err)), 0);
	assert_int_equal(n_seen, 7);
	assert_string_equal(seen[5], "msr@tsc,cpu=cpu_core@");
	assert_string_equal(seen[6], "cpu_core@A,x=1@");
	expr_free(e);
	/* Keywords are whole names. */
	is("ifx + maxi", 0);
}

/* A Sapphire Rapids expression as perf's table spells it. */
static void test_perf_expression(void **state)
{
	struct expr *e;
	char err[256];
	double v;

	(void)state;
	assert_int_equal(expr_compile("topdown\\-fe\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + "
				      "topdown\\-retiring + topdown\\-be\\-bound) - INT_MISC.UOP_DROPPING / "
				      "tma_info_thread_slots", &names, &e, err, sizeof(err)), 0);
	vars[5] = 20, vars[6] = 10, vars[7] = 30, vars[8] = 40, vars[9] = 1, vars[10] = 100;
	v = expr_eval(e, vars);
	assert_true(fabs(v - (20.0 / 100 - 1.0 / 100)) < 1e-15);
	expr_free(e);
}

static void test_errors(void **state)
{
	char deep[300] = "", longname[400] = "";

	(void)state;
	refused("", -EINVAL, "at 1: expected a value, found 'the end'");
	refused("1 +", -EINVAL, "at 4: expected a value, found 'the end'");
	refused("(1", -EINVAL, "at 3: expected ')', found 'the end'");
	refused("1 2", -EINVAL, "at 3: expected an operator or the end, found 'a number'");
	refused("min(1)", -EINVAL, "at 6: expected ',', found ')'");
	refused("1 if 2", -EINVAL, "at 7: expected 'else', found 'the end'");
	refused("1 if 1 if 1 else 0 else 2", -EINVAL, "at 8: expected 'else', found 'a keyword'");
	refused("# + 1", -EINVAL, "at 1: '#' without a literal's name");
	refused("a $ b", -EINVAL, "at 3: unexpected '$'");
	refused("a = b", -EINVAL, "at 3: unexpected '='");
	refused("a=b", -EINVAL, "at 2: unexpected '='");
	refused("missing + 1", -ENOENT, "at 1: missing: not known here");
	refused("#nope * 2", -ENOENT, "at 1: #nope: not known here");
	refused("source_count(x)", -ENOENT, "at 14: source_count(x): not known here");
	refused("has_event(1 + 2)", -EINVAL, "at 11: has_event: expected a name, found 'a number'");
	for (int i = 0; i < 70; i++)
		strcat(deep, "(");
	strcat(deep, "1");
	refused(deep, -EINVAL, "at 65: nested deeper than 64");
	/* Deep on the stack: a chain of else branches holds two values each. */
	{
		char chain[2000] = "";

		for (int i = 0; i < 40; i++)
			strcat(chain, "1 if 0 else ");
		strcat(chain, "2");
		refused(chain, -EINVAL, "at 385: nested deeper than 64");
	}
	memset(longname, 'x', 300);
	refused(longname, -EINVAL, "at 1: a name longer than 255 characters");
}

static void test_long_text(void **state)
{
	static char text[EXPR_TEXT_MAX + 16];
	struct expr *e;
	char err[128];
	size_t n = 0;

	(void)state;
	/* A long sum compiles (the stack stays two deep)... */
	while (n + 4 < EXPR_TEXT_MAX) {
		memcpy(text + n, "1 + ", 4);
		n += 4;
	}
	text[n++] = '1';
	text[n] = '\0';
	assert_int_equal(expr_compile(text, &names, &e, err, sizeof(err)), 0);
	assert_true(fabs(expr_eval(e, vars) - (double)(n / 4 + 1)) < 1e-9);
	expr_free(e);
	/* ...longer text does not. */
	memset(text, ' ', EXPR_TEXT_MAX + 1);
	text[EXPR_TEXT_MAX + 1] = '\0';
	refused(text, -EINVAL, "at 1: longer than 8192 characters");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_precedence, setup),
		cmocka_unit_test_setup(test_if_else, setup),
		cmocka_unit_test_setup(test_functions, setup),
		cmocka_unit_test_setup(test_no_value, setup),
		cmocka_unit_test_setup(test_lexer, setup),
		cmocka_unit_test_setup(test_perf_expression, setup),
		cmocka_unit_test_setup(test_errors, setup),
		cmocka_unit_test_setup(test_long_text, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
