#!/bin/bash
# SPDX-License-Identifier: MIT
# Every entry of topdownd's per-microarchitecture tables against Linux
# perf's own tables (reference/perf-tables): models, encodings, metric
# expressions verbatim, and the arithmetic on random counts against perf's
# expressions evaluated independently (tests/oracle/perfexpr.py).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOL_DIR=${TOOL_DIR:-$ROOT/build/tests/tools}
PERF_TABLES=${PERF_TABLES:-$ROOT/reference/perf-tables}
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1:abort_on_error=1}
exec /usr/bin/python3 "$ROOT/tests/oracle/uarch_check.py" "$TOOL_DIR/uarch_dump" "$PERF_TABLES"
