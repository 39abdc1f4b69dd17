#!/bin/bash
# SPDX-License-Identifier: MIT
# The libFuzzer harnesses replayed over their seed corpora and saved crash
# reproducers (tests/fuzz/run --replay): no fuzzing, a few seconds.  One
# test for the build, one per harness (tests/fuzz/fuzz_<name>.c).
# Skipped when clang cannot link -fsanitize=fuzzer (no libclang-rt-14-dev).

. "$(dirname "$0")/lib.sh"

cd "$ROOT" || exit 1
names=()
for src in tests/fuzz/fuzz_*.c; do
	[ -e "$src" ] || continue
	n=${src#tests/fuzz/fuzz_}
	names+=("${n%.c}")
done

probe=$TMP/probe.c
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$probe"
if ! command -v clang >/dev/null 2>&1 ||
	! clang -fsanitize=fuzzer,address,undefined -o "$TMP/probe" "$probe" >/dev/null 2>&1; then
	missing_all "clang or libclang-rt-14-dev not installed (make deps installs them)"
fi

plan $((${#names[@]} + 1))
out=$TMP/replay.out
# The replay runner owns its sanitizer options; keep make check's out.
env -u ASAN_OPTIONS -u UBSAN_OPTIONS tests/fuzz/run --replay >"$out" 2>&1
st=$?
if [ $st -eq 2 ]; then
	ok 1 "fuzz harnesses build"
	sed 's/^/#   /' "$out"
	for n in "${names[@]}"; do ok 1 "fuzz_$n replays its corpus and regressions"; done
	done_testing
fi
ok 0 "fuzz harnesses build"
for n in "${names[@]}"; do
	line=$(grep -m1 "^fuzz_$n: " "$out")
	if [[ $line == "fuzz_$n: ok"* ]]; then
		ok 0 "fuzz_$n replays its corpus and regressions ${line#*: ok }"
	else
		ok 1 "fuzz_$n replays its corpus and regressions"
		diag "${line:-no result line for fuzz_$n}"
		# Failing inputs and their report, from the runner's output.
		awk -v h="fuzz_$n: " 'index($0, h) == 1 {on = 1; next} /^fuzz_|^replay:/ {on = 0} on' "$out" |
			head -n 40 | sed 's/^/#   /'
	fi
done
grep -E '^clang warnings|^  daemon/' "$out" | sed 's/^/# /'
done_testing
