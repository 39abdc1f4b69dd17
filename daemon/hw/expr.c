/* SPDX-License-Identifier: MIT */
/* expr: perf's metric expressions, compiled into a postfix program that a
 * loop over a small stack evaluates (expr.h says what the language is and
 * how it evaluates). */
#include "expr.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op {
	OP_CONST, /* push k */
	OP_VAR,   /* push vars[var] */
	OP_NEG,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD,
	OP_LT, OP_GT, OP_LE, OP_GE, OP_EQ,
	OP_OR, OP_XOR, OP_AND,
	OP_MIN, OP_MAX, OP_DRATIO,
	OP_SELECT, /* then, cond, else -> cond != 0 ? then : else */
	/* A variable's or a constant's right operand fused into its + - * /
	 * (emit): the most common steps, one dispatch instead of two. */
	OP_ADD_V, OP_SUB_V, OP_MUL_V, OP_DIV_V,
	OP_ADD_K, OP_SUB_K, OP_MUL_K, OP_DIV_K,
};

struct insn {
	enum op op;
	unsigned var;
	double k;
};

struct expr {
	unsigned n, vars;
	struct insn code[];
};

/* ---- the lexer: expr.l's rules, longest match first, the earlier rule
 * on a tie (keywords, literals, numbers, then names) ---- */

enum tok {
	T_END, T_NUM, T_NAME, T_LIT, T_OP,
	T_IF, T_ELSE, T_MIN, T_MAX, T_DRATIO, T_SOURCE_COUNT, T_HAS_EVENT, T_STRCMP_CPUID_STR,
};

static const struct {
	const char *word;
	enum tok tok;
} keywords[] = {
	{ "d_ratio", T_DRATIO }, { "max", T_MAX }, { "min", T_MIN }, { "if", T_IF }, { "else", T_ELSE },
	{ "source_count", T_SOURCE_COUNT }, { "has_event", T_HAS_EVENT },
	{ "strcmp_cpuid_str", T_STRCMP_CPUID_STR },
};

struct parser {
	const char *text, *p;
	const struct expr_names *names;
	struct insn *code;
	unsigned n, cap, vars;
	unsigned sp, sp_max, nesting;
	int err;
	char *msg;
	size_t msglen;
	/* The current token. */
	enum tok tok;
	const char *at;
	double num;
	char op[3];
	char name[EXPR_NAME_MAX];
};

static bool name_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
	       c == ':' || c == '@' || c == '?';
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of a number at @s ([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)?,
 * 0 for none. */
static size_t number_len(const char *s)
{
	size_t i = 0, d = 0;

	while (digit(s[i]))
		i++, d++;
	if (s[i] == '.') {
		i++;
		while (digit(s[i]))
			i++, d++;
	}
	if (!d)
		return 0;
	if ((s[i] == 'e' || s[i] == 'E') && (digit(s[i + 1]) || ((s[i + 1] == '-' || s[i + 1] == '+') && digit(s[i + 2])))) {
		i += 2;
		while (digit(s[i]))
			i++;
	}
	return i;
}

/* Length of a name at @s: name characters and escapes (a backslash and
 * the character it keeps: perf's \- \, \=).  Between a name's @s (an
 * event's PMU and terms) an '=' is the name's too: perf 7.2's hybrid
 * tables write msr@tsc\,cpu=cpu_core@, and perf's jevents.py escapes such
 * an '=' before its lexer sees it (pmu-events/metric.py, _FixEscapes()). */
static size_t name_len(const char *s)
{
	size_t i = 0;
	bool in_at = false;

	for (;;) {
		if (name_char(s[i])) {
			in_at ^= s[i] == '@';
			i++;
		} else if (in_at && s[i] == '=') {
			i++;
		} else if (s[i] == '\\' && s[i + 1] && s[i + 1] != ' ') {
			i += 2;
		} else {
			return i;
		}
	}
}

static int fail(struct parser *ps, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct parser *ps, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->err)
		return ps->err;
	ps->err = err;
	n = snprintf(ps->msg, ps->msglen, "at %zu: ", (size_t)(ps->at - ps->text) + 1);
	if (n >= 0 && (size_t)n < ps->msglen) {
		va_start(ap, fmt);
		vsnprintf(ps->msg + n, ps->msglen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Copies the @len characters of a name without its escapes. */
static int take_name(struct parser *ps, const char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\')
			i++;
		if (o + 1 >= sizeof(ps->name))
			return fail(ps, -EINVAL, "a name longer than %d characters", EXPR_NAME_MAX - 1);
		ps->name[o++] = s[i];
	}
	ps->name[o] = '\0';
	return 0;
}

static int next(struct parser *ps)
{
	const char *s = ps->p;
	size_t nl, wl;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	ps->at = s;
	if (!*s) {
		ps->tok = T_END;
		ps->p = s;
		return 0;
	}
	if (*s == '#') {
		wl = 1;
		while (name_char(s[wl]) || s[wl] == '-')
			wl++;
		if (wl == 1)
			return fail(ps, -EINVAL, "'#' without a literal's name");
		ps->tok = T_LIT;
		ps->p = s + wl;
		return take_name(ps, s, wl);
	}
	nl = number_len(s);
	wl = name_len(s);
	if (nl && nl >= wl) {
		char buf[64];

		if (nl >= sizeof(buf))
			return fail(ps, -EINVAL, "a number of more than %zu characters", sizeof(buf) - 1);
		memcpy(buf, s, nl);
		buf[nl] = '\0';
		ps->num = strtod(buf, NULL);
		ps->tok = T_NUM;
		ps->p = s + nl;
		return 0;
	}
	if (wl) {
		ps->p = s + wl;
		for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
			if (strlen(keywords[k].word) == wl && !memcmp(s, keywords[k].word, wl)) {
				ps->tok = keywords[k].tok;
				return 0;
			}
		ps->tok = T_NAME;
		return take_name(ps, s, wl);
	}
	ps->tok = T_OP;
	ps->op[0] = *s;
	ps->op[1] = '\0';
	if ((s[0] == '<' || s[0] == '>' || s[0] == '=') && s[1] == '=') {
		ps->op[1] = '=';
		ps->op[2] = '\0';
	} else if (!strchr("|^&<>-+*/%(),", *s)) {
		return fail(ps, -EINVAL, "unexpected '%c'", *s);
	}
	ps->p = s + strlen(ps->op);
	return 0;
}

static bool is_op(const struct parser *ps, const char *op)
{
	return ps->tok == T_OP && !strcmp(ps->op, op);
}

static const char *tok_text(const struct parser *ps)
{
	switch (ps->tok) {
	case T_END:
		return "the end";
	case T_NUM:
		return "a number";
	case T_NAME:
		return ps->name;
	case T_LIT:
		return ps->name;
	case T_OP:
		return ps->op;
	default:
		return "a keyword";
	}
}

static int expect(struct parser *ps, const char *op)
{
	if (!is_op(ps, op))
		return fail(ps, -EINVAL, "expected '%s', found '%s'", op, tok_text(ps));
	return next(ps);
}

/* ---- code ---- */

/* Appends one instruction; @pushes is its effect on the stack's depth. */
static int emit(struct parser *ps, enum op op, unsigned var, double k, int pushes)
{
	if (ps->err)
		return ps->err;
	if (ps->n == ps->cap) {
		unsigned cap = ps->cap ? 2 * ps->cap : 16;
		struct insn *code = realloc(ps->code, cap * sizeof(*code));

		if (!code)
			return fail(ps, -ENOMEM, "out of memory");
		ps->code = code;
		ps->cap = cap;
	}
	if (op >= OP_ADD && op <= OP_DIV && ps->n &&
	    (ps->code[ps->n - 1].op == OP_VAR || ps->code[ps->n - 1].op == OP_CONST)) {
		/* The right operand was just pushed: the step takes it
		 * itself. */
		struct insn *last = &ps->code[ps->n - 1];

		last->op = (last->op == OP_VAR ? OP_ADD_V : OP_ADD_K) + (op - OP_ADD);
		ps->sp = (unsigned)((int)ps->sp + pushes);
		return 0;
	}
	ps->code[ps->n++] = (struct insn){ op, var, k };
	ps->sp = (unsigned)((int)ps->sp + pushes);
	if (ps->sp > ps->sp_max)
		ps->sp_max = ps->sp;
	if (ps->sp_max > EXPR_DEPTH_MAX)
		return fail(ps, -EINVAL, "nested deeper than %d", EXPR_DEPTH_MAX);
	return 0;
}

/* ---- the grammar: expr.y's, its precedence from the loosest:
 *   if_expr: expr IF expr ELSE if_expr | expr
 *   '|', '^', '&', '<' '>' (and <= >= ==), '+' '-', '*' '/' '%', unary '-' ---- */

static int if_expr(struct parser *ps);
static int binary(struct parser *ps, unsigned level);

static const struct {
	const char *op;
	enum op code;
} levels[][5] = {
	{ { "|", OP_OR } },
	{ { "^", OP_XOR } },
	{ { "&", OP_AND } },
	{ { "<", OP_LT }, { ">", OP_GT }, { "<=", OP_LE }, { ">=", OP_GE }, { "==", OP_EQ } },
	{ { "+", OP_ADD }, { "-", OP_SUB } },
	{ { "*", OP_MUL }, { "/", OP_DIV }, { "%", OP_MOD } },
};
#define N_LEVELS (sizeof(levels) / sizeof(levels[0]))

/* name '(' NAME ')': a function of a name, a constant. */
static int name_function(struct parser *ps, const char *function)
{
	double v = 0;
	int r;

	if ((r = next(ps)) < 0 || (r = expect(ps, "(")) < 0)
		return r;
	if (ps->tok != T_NAME)
		return fail(ps, -EINVAL, "%s: expected a name, found '%s'", function, tok_text(ps));
	if (!ps->names->function)
		return fail(ps, -ENOENT, "%s(%s): not known here", function, ps->name);
	r = ps->names->function(ps->names->arg, function, ps->name, &v);
	if (r < 0)
		return fail(ps, r, "%s(%s): not known here", function, ps->name);
	if ((r = next(ps)) < 0 || (r = expect(ps, ")")) < 0)
		return r;
	return emit(ps, OP_CONST, 0, v, 1);
}

/* min, max, d_ratio '(' expr ',' expr ')' */
static int two_args(struct parser *ps, enum op op)
{
	int r;

	if ((r = next(ps)) < 0 || (r = expect(ps, "(")) < 0 || (r = binary(ps, 0)) < 0 ||
	    (r = expect(ps, ",")) < 0 || (r = binary(ps, 0)) < 0 || (r = expect(ps, ")")) < 0)
		return r;
	return emit(ps, op, 0, 0, -1);
}

static int primary(struct parser *ps)
{
	unsigned var;
	double v;
	int r;

	switch (ps->tok) {
	case T_NUM:
		return (r = emit(ps, OP_CONST, 0, ps->num, 1)) < 0 ? r : next(ps);
	case T_NAME:
		if (!ps->names->variable)
			return fail(ps, -ENOENT, "%s: not known here", ps->name);
		r = ps->names->variable(ps->names->arg, ps->name, &var);
		if (r < 0)
			return fail(ps, r, "%s: not known here", ps->name);
		if (var + 1 > ps->vars)
			ps->vars = var + 1;
		return (r = emit(ps, OP_VAR, var, 0, 1)) < 0 ? r : next(ps);
	case T_LIT:
		if (!ps->names->literal || (r = ps->names->literal(ps->names->arg, ps->name, &v)) < 0)
			return fail(ps, -ENOENT, "%s: not known here", ps->name);
		return (r = emit(ps, OP_CONST, 0, v, 1)) < 0 ? r : next(ps);
	case T_MIN:
		return two_args(ps, OP_MIN);
	case T_MAX:
		return two_args(ps, OP_MAX);
	case T_DRATIO:
		return two_args(ps, OP_DRATIO);
	case T_SOURCE_COUNT:
		return name_function(ps, "source_count");
	case T_HAS_EVENT:
		return name_function(ps, "has_event");
	case T_STRCMP_CPUID_STR:
		return name_function(ps, "strcmp_cpuid_str");
	case T_OP:
		if (is_op(ps, "(")) {
			if (++ps->nesting > EXPR_DEPTH_MAX)
				return fail(ps, -EINVAL, "nested deeper than %d", EXPR_DEPTH_MAX);
			if ((r = next(ps)) < 0 || (r = if_expr(ps)) < 0)
				return r;
			ps->nesting--;
			return expect(ps, ")");
		}
		/* fall through */
	default:
		return fail(ps, -EINVAL, "expected a value, found '%s'", tok_text(ps));
	}
}

/* The nesting of parentheses, unary minuses and else branches is bounded
 * (the parser recurses on each). */
static int unary(struct parser *ps)
{
	int r;

	if (!is_op(ps, "-"))
		return primary(ps);
	if (++ps->nesting > EXPR_DEPTH_MAX)
		return fail(ps, -EINVAL, "nested deeper than %d", EXPR_DEPTH_MAX);
	if ((r = next(ps)) < 0 || (r = unary(ps)) < 0)
		return r;
	ps->nesting--;
	return emit(ps, OP_NEG, 0, 0, 0);
}

static int binary(struct parser *ps, unsigned level)
{
	int r;

	if (level == N_LEVELS)
		return unary(ps);
	if ((r = binary(ps, level + 1)) < 0)
		return r;
	for (;;) {
		int found = -1;

		for (unsigned k = 0; k < sizeof(levels[0]) / sizeof(levels[0][0]) && levels[level][k].op; k++)
			if (is_op(ps, levels[level][k].op))
				found = (int)k;
		if (found < 0)
			return 0;
		if ((r = next(ps)) < 0 || (r = binary(ps, level + 1)) < 0 ||
		    (r = emit(ps, levels[level][found].code, 0, 0, -1)) < 0)
			return r;
	}
}

static int if_expr(struct parser *ps)
{
	int r;

	if ((r = binary(ps, 0)) < 0 || ps->tok != T_IF)
		return r;
	if ((r = next(ps)) < 0 || (r = binary(ps, 0)) < 0)
		return r;
	if (ps->tok != T_ELSE)
		return fail(ps, -EINVAL, "expected 'else', found '%s'", tok_text(ps));
	if (++ps->nesting > EXPR_DEPTH_MAX)
		return fail(ps, -EINVAL, "nested deeper than %d", EXPR_DEPTH_MAX);
	if ((r = next(ps)) < 0 || (r = if_expr(ps)) < 0)
		return r;
	ps->nesting--;
	return emit(ps, OP_SELECT, 0, 0, -2);
}

int expr_compile(const char *text, const struct expr_names *names, struct expr **ret, char *err,
		 size_t errlen)
{
	struct parser ps = { .text = text, .p = text, .at = text, .names = names, .msg = err, .msglen = errlen };
	struct expr *e;
	int r;

	*ret = NULL;
	if (errlen)
		err[0] = '\0';
	if (strnlen(text, EXPR_TEXT_MAX + 1) > EXPR_TEXT_MAX)
		return fail(&ps, -EINVAL, "longer than %d characters", EXPR_TEXT_MAX);
	r = next(&ps);
	if (r == 0)
		r = if_expr(&ps);
	if (r == 0 && ps.tok != T_END)
		r = fail(&ps, -EINVAL, "expected an operator or the end, found '%s'", tok_text(&ps));
	if (r < 0) {
		free(ps.code);
		return r;
	}
	e = malloc(sizeof(*e) + ps.n * sizeof(e->code[0]));
	if (!e) {
		free(ps.code);
		return fail(&ps, -ENOMEM, "out of memory");
	}
	e->n = ps.n;
	e->vars = ps.vars;
	memcpy(e->code, ps.code, ps.n * sizeof(e->code[0]));
	free(ps.code);
	*ret = e;
	return 0;
}

/* ---- evaluation ---- */

/* perf's (long) of a value, without the undefined behaviour of a double
 * beyond long's range (saturated). */
static long to_long(double v)
{
	if (v >= 9.2e18)
		return 9200000000000000000L;
	if (v <= -9.2e18)
		return -9200000000000000000L;
	return (long)v;
}

double expr_eval(const struct expr *e, const double *vars)
{
	double st[EXPR_DEPTH_MAX];
	unsigned sp = 0;
	bool aborted = false;

	for (unsigned i = 0; i < e->n; i++) {
		const struct insn *in = &e->code[i];
		double a, b;

		switch (in->op) {
		case OP_CONST:
			st[sp++] = in->k;
			continue;
		case OP_VAR:
			st[sp++] = vars[in->var];
			continue;
		case OP_NEG:
			st[sp - 1] = -st[sp - 1];
			continue;
		case OP_SELECT: {
			double els = st[--sp], cond = st[--sp];

			/* perf: fpclassify(cond) == FP_ZERO takes the else. */
			if (cond == 0)
				st[sp - 1] = els;
			continue;
		}
		case OP_ADD_V:
			st[sp - 1] += vars[in->var];
			continue;
		case OP_SUB_V:
			st[sp - 1] -= vars[in->var];
			continue;
		case OP_MUL_V:
			st[sp - 1] *= vars[in->var];
			continue;
		case OP_DIV_V:
			b = vars[in->var];
			if (b == 0)
				aborted = true;
			else
				st[sp - 1] /= b;
			continue;
		case OP_ADD_K:
			st[sp - 1] += in->k;
			continue;
		case OP_SUB_K:
			st[sp - 1] -= in->k;
			continue;
		case OP_MUL_K:
			st[sp - 1] *= in->k;
			continue;
		case OP_DIV_K:
			if (in->k == 0)
				aborted = true;
			else
				st[sp - 1] /= in->k;
			continue;
		default:
			break;
		}
		b = st[--sp];
		a = st[sp - 1];
		switch (in->op) {
		case OP_ADD:
			a = a + b;
			break;
		case OP_SUB:
			a = a - b;
			break;
		case OP_MUL:
			a = a * b;
			break;
		case OP_DIV:
			if (b == 0)
				aborted = true;
			else
				a = a / b;
			break;
		case OP_MOD:
			if (b == 0 || (!isnan(b) && to_long(b) == 0))
				aborted = true;
			else
				a = isnan(a) || isnan(b) ? NAN : (double)(to_long(a) % to_long(b));
			break;
		case OP_LT:
		case OP_GT:
		case OP_LE:
		case OP_GE:
		case OP_EQ:
			if (!isnan(a) && !isnan(b))
				a = in->op == OP_LT ? a < b : in->op == OP_GT ? a > b : in->op == OP_LE ? a <= b :
				    in->op == OP_GE ? a >= b : a == b;
			else
				a = NAN;
			break;
		case OP_OR:
		case OP_XOR:
		case OP_AND:
			if (!isnan(a) && !isnan(b))
				a = (double)(in->op == OP_OR ? to_long(a) | to_long(b) :
					     in->op == OP_XOR ? to_long(a) ^ to_long(b) : to_long(a) & to_long(b));
			else
				a = NAN;
			break;
		case OP_MIN:
			a = a < b ? a : b;
			break;
		case OP_MAX:
			a = a > b ? a : b;
			break;
		case OP_DRATIO:
			a = b == 0 ? 0 : a / b;
			break;
		default:
			break;
		}
		st[sp - 1] = a;
	}
	return aborted || sp != 1 ? NAN : st[0];
}

unsigned expr_variables(const struct expr *e)
{
	return e->vars;
}

void expr_free(struct expr *e)
{
	free(e);
}
