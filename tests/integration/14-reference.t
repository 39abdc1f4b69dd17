#!/bin/bash
# SPDX-License-Identifier: MIT
# The copies of Linux perf's tables that come from a Debian package
# (reference/perf-tables-6.1, reference/perf-tables-7.2) are the package's
# bytes: every file listed in its README with its sha256, and listed files
# present (reference/import-tables check).  A byte changed in a copy fails
# the check, naming the file.
. "$(dirname "$0")/lib.sh"

plan 3

for dir in perf-tables-6.1 perf-tables-7.2; do
	out=$(/usr/bin/python3 "$ROOT/reference/import-tables" check "$ROOT/reference/$dir" 2>&1)
	ok $? "reference/$dir: every file is its README's$(printf '\n%s' "$out" | grep -v ': [0-9]* files' | head -5)"
	diag "$(tail -1 <<<"$out")"
done

copy=$TMP/tables
cp -r "$ROOT/reference/perf-tables-6.1" "$copy"
sed -i '0,/"EventCode"/s/"EventCode"/"Eventcode"/' "$copy/x86/sapphirerapids/memory.json"
out=$(/usr/bin/python3 "$ROOT/reference/import-tables" check "$copy" 2>&1)
rc=$?
ok $([ $rc != 0 ] && grep -q 'x86/sapphirerapids/memory.json: sha256 is not' <<<"$out"; echo $?) \
	"a changed byte fails the check, naming the file"

done_testing
