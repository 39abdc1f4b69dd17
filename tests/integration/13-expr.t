#!/bin/bash
# SPDX-License-Identifier: MIT
# perf's metric expressions as topdownd compiles and evaluates them
# (daemon/hw/expr.c, through tests/tools/expr_eval), against the
# independent evaluator (tests/oracle/perfexpr.py): every metric of every
# table in reference/perf-tables (upstream's) and reference/perf-tables-6.1
# (perf 6.1's, which the parity tests run) compiles where the oracle reads
# it, and on 20 random intervals each (counts from 1e3 to 1e9, #SMT_on on
# and off) the two give the same value within 1e-9, or both none.
. "$(dirname "$0")/lib.sh"

plan 4

for tables in "$ROOT/reference/perf-tables" "$ROOT/reference/perf-tables-6.1"; do
	name=${tables#"$ROOT/"}
	out=$(/usr/bin/python3 "$ROOT/tests/oracle/expr_check.py" "$TOOL_DIR" "$tables" 20 2>&1)
	rc=$?
	ok $rc "$name: every metric's value is the oracle's$( [ $rc = 0 ] || printf '\n%s' "$(grep -E 'DIFFERENT|Error|Traceback' <<<"$out" | head -10)")"
	total=$(grep '^total:' <<<"$out")
	diag "$total"
	# The check compares something: the tables' metrics, by the thousand.
	n=$(sed -n 's/^total: \([0-9]*\) metrics in \([0-9]*\) files, \([0-9]*\) values equal.*/\3/p' <<<"$total")
	ok $([ "${n:-0}" -ge 20000 ]; echo $?) "$name: ${n:-0} values compared"
done

done_testing
