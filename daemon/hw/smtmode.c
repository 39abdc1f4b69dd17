/* SPDX-License-Identifier: MIT */
/* smtmode: perf's SMT mode metrics (smtmode.h). */
#include "smtmode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "util.h"

/* The variables the expressions read: the two events, then the
 * fraction (a metric the other two name). */
enum { VAR_SLOTS, VAR_CYCLES, VAR_FRACTION, VARS };

struct smtmode {
	struct expr *e[UA_SMT_MODE_METRICS];
};

struct names {
	const struct ua_smt_mode *m;
	unsigned metric; /* the one being compiled */
};

static int variable(void *arg, const char *name, unsigned *index)
{
	const struct names *n = arg;

	if (strcmp(name, "CPU_SLOT") == 0)
		*index = VAR_SLOTS;
	else if (strcmp(name, "CPU_CYCLES") == 0)
		*index = VAR_CYCLES;
	else if (n->metric != UA_SMT_MODE_FRACTION && strcmp(name, n->m->metric[UA_SMT_MODE_FRACTION]) == 0)
		*index = VAR_FRACTION;
	else
		return -ENOENT;
	return 0;
}

static int literal(void *arg, const char *name, double *value)
{
	(void)arg, (void)name, (void)value;
	return -ENOENT;
}

static int function(void *arg, const char *function, const char *name, double *value)
{
	(void)arg, (void)function, (void)name, (void)value;
	return -ENOENT;
}

int smtmode_new(const struct ua_smt_mode *m, struct smtmode **ret, char *err, size_t errlen)
{
	struct smtmode *x = calloc(1, sizeof(*x));
	struct names n = { .m = m };
	const struct expr_names names = { variable, literal, function, &n };

	if (!x)
		return -ENOMEM;
	for (n.metric = 0; n.metric < UA_SMT_MODE_METRICS; n.metric++) {
		char why[160];
		int r = expr_compile(m->expr[n.metric], &names, &x->e[n.metric], why, sizeof(why));

		if (r < 0) {
			str_printf(err, errlen, "%s (%s): %s", m->metric[n.metric], m->table, why);
			smtmode_free(x);
			return r;
		}
	}
	*ret = x;
	return 0;
}

void smtmode_free(struct smtmode *x)
{
	if (!x)
		return;
	for (unsigned i = 0; i < UA_SMT_MODE_METRICS; i++)
		expr_free(x->e[i]);
	free(x);
}

void smtmode_eval(const struct smtmode *x, double slots, double cycles, double out[UA_SMT_MODE_METRICS])
{
	double v[VARS] = { [VAR_SLOTS] = slots, [VAR_CYCLES] = cycles };

	v[VAR_FRACTION] = out[UA_SMT_MODE_FRACTION] = expr_eval(x->e[UA_SMT_MODE_FRACTION], v);
	out[UA_SMT_MODE_ST] = expr_eval(x->e[UA_SMT_MODE_ST], v);
	out[UA_SMT_MODE_SMT] = expr_eval(x->e[UA_SMT_MODE_SMT], v);
}
