#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the libFuzzer harnesses for libpevt's parsers and run each for a
# bounded time, starting from the corpus kept in selftests/fuzz/corpus/.
# Fails (exit 1) if any harness crashes, leaks, or trips a sanitizer;
# prints one stats line per harness and a TAP summary.
#
#   selftests/fuzz/run.sh [seconds-per-harness]     (default 20, env FUZZ_SECONDS)
#
# New inputs found in a run go to build/fuzz/corpus-<name>/ (not the repo);
# a crash leaves build/fuzz/<name>-crash-* to reproduce with
#   build/fuzz/<name> build/fuzz/<name>-crash-...
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-${FUZZ_SECONDS:-20}}
out=$top/build/fuzz
CLANG=${CLANG:-clang}
mkdir -p "$out"

cflags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-D_GNU_SOURCE -I"$top/include/uapi" -I"$top/user/lib/include" -I"$top/kmod")

# name:source:extra-flags:corpus
harnesses=(
	"rb_forward:ringbuf_fuzz.c:-DFUZZ_MODE=PEVT_READ_FORWARD:forward"
	"rb_size_at_end:ringbuf_fuzz.c:-DFUZZ_MODE=PEVT_READ_BACKWARD_SIZE_AT_END:sae"
	"rb_write_backward:ringbuf_fuzz.c:-DFUZZ_MODE=PEVT_READ_WRITE_BACKWARD:wb"
	"counts:counts_fuzz.c::counts"
	"data:data_fuzz.c::data"
)

# A harness that cannot be built is a failure, never a silent skip: on a
# minimal Debian 12, clang links -fsanitize=fuzzer only with
# libclang-rt-14-dev installed (scripts/deps.sh installs it).
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}' |
	"$CLANG" -fsanitize=fuzzer,address,undefined -x c - -o "$out/.probe" 2>"$out/.probe.log"; then
	echo "1..1"
	echo "not ok 1 libfuzzer # $CLANG cannot link -fsanitize=fuzzer (libclang-rt-14-dev missing?)"
	sed 's/^/# /' "$out/.probe.log" | head -5
	exit 1
fi

echo "1..${#harnesses[@]}"
fail=0 i=0
for h in "${harnesses[@]}"; do
	IFS=: read -r name src extra corpus <<<"$h"
	i=$((i + 1))
	bin=$out/$name
	# shellcheck disable=SC2086
	if ! "$CLANG" "${cflags[@]}" $extra -o "$bin" "$top/selftests/fuzz/$src" \
		"$top"/user/lib/*.c -luring -lzstd -lelf -ldw -liberty -pthread 2>"$out/$name.build.log"; then
		echo "not ok $i $name # build failed"; sed 's/^/# /' "$out/$name.build.log"
		fail=1; continue
	fi
	work=$out/corpus-$name
	mkdir -p "$work"
	"$bin" -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 \
		-artifact_prefix="$out/$name-" -print_final_stats=1 \
		"$work" "$top/selftests/fuzz/corpus/$corpus" >"$out/$name.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log")
	cov=$(grep -aoE 'cov: [0-9]+' "$out/$name.log" | tail -1)
	corp=$(find "$work" -type f | wc -l)
	if [ $rc = 0 ]; then
		echo "ok $i $name # ${secs}s, ${runs:-?} execs, ${cov:-cov: ?}, corpus $corp"
	else
		echo "not ok $i $name # exit $rc after ${runs:-?} execs, see $out/$name.log"
		grep -aE 'ERROR|SUMMARY|runtime error|deadly signal' "$out/$name.log" | head -5 | sed 's/^/# /'
		fail=1
	fi
done
exit $fail
