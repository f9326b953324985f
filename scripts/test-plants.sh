#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The runner's own self-test: build pevt.ko with one planted bug
# (kmod/plant.c, PEVT_PLANT=<kind>), boot it with no tests, and check that
# the run FAILS and that the kernel's own report is in the output.  A clean
# module must pass on the same kernels.  Prints one TAP line per case
# ("ok N ..." / "not ok N ..."), counted by scripts/check.sh.
#
#   scripts/test-plants.sh [-j N] [KERNEL...]
#                                        cases for these kernels (default:
#                                        6.1 debug), N boots at a time;
#                                        unknown kernels are ignored
#   PEVT_PLANTS="leak none" scripts/...  only these kinds (none = clean)
#
# Logs of every case: build/vm/plants/<kind>-<kernel>/.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

jobs=1
if [ "${1:-}" = -j ]; then jobs=$2; shift 2; fi
want=" ${*:-6.1 debug} "

# kind kernel  where  pattern (extended regex) that must be in the output
cases=(
	"none	6.1	-	-"
	"warn	6.1	console.log	WARNING: CPU: [0-9]+ PID: [0-9]+ at .*plant\.c"
	"none	debug	-	-"
	"warn	debug	console.log	WARNING: CPU: [0-9]+ PID: [0-9]+ at .*plant\.c"
	"abba	debug	console.log	WARNING: possible circular locking dependency detected"
	"oob	debug	console.log	BUG: KASAN: slab-out-of-bounds in pevt_plant_run"
	"sleep	debug	console.log	BUG: sleeping function called from invalid context"
	"leak	debug	results.txt	not ok 3 pevt-runner.kmemleak"
)

n=0 failed=0

# The fuzz step must fail, not skip, where clang cannot link libFuzzer (a
# minimal Debian 12 without libclang-rt-14-dev): a clang whose runtime
# directory is missing stands in for that machine.
n=$((n + 1))
fake=$(mktemp -d)
printf '#!/bin/sh\nexec %s -resource-dir "%s/none" "$@"\n' "${CLANG:-clang}" "$fake" > "$fake/clang"
chmod +x "$fake/clang"
out=$(CLANG=$fake/clang FUZZ_SECONDS=1 "$top/selftests/fuzz/run.sh" 2>&1); rc=$?
if [ $rc != 0 ] && echo "$out" | grep -q '^not ok .*cannot link -fsanitize=fuzzer'; then
	echo "ok $n fuzz without libFuzzer runtime: the step fails"
else
	echo "not ok $n fuzz without libFuzzer runtime: rc=$rc, the step did not fail"
	echo "$out" | head -n 5 | sed 's/^/#   /'
	failed=$((failed + 1))
fi
rm -rf "$fake"

# one_case N KIND KERNEL WHERE PATTERN: boot the planted module, print
# the case's TAP line (and its diagnostics); exit 1 if the case failed.
# Each case writes only its own build/vm/plants/KIND-KERNEL/ (VM_OUT), so
# cases can run side by side.
one_case() {
	local n=$1 kind=$2 kernel=$3 where=$4 pattern=$5
	local name="plant-$kind on $kernel" logdir=$top/build/vm/plants/$kind-$kernel
	local plant=$kind kml=0 rc=0 s t hit
	rm -rf "$logdir" "$logdir.timings"; mkdir -p "$logdir"
	[ "$kind" = none ] && plant=
	s=$(date +%s)
	# the kmemleak scans only matter to the leak case and the clean run
	case $kind in leak|none) kml=1 ;; esac
	# the clean module in a tree of its own: the debug lane of make check
	# may be building build/kmod/KREL at the same time
	local moddir=
	[ "$kind" = none ] && moddir=$top/build/kmod/plants-none-$kernel
	PEVT_PROGRESS=0 VM_OUT=$logdir VM_MODDIR=$moddir PEVT_PLANT=$plant PEVT_KMEMLEAK=$kml VM_TIMEOUT=${VM_TIMEOUT:-900} \
		"$top/scripts/vmtest.sh" --run true "$kernel" > "$logdir/vmtest.log" 2>&1 || rc=$?
	rm -rf "$logdir/root" "$logdir/initramfs.gz"
	t=$(( $(date +%s) - s ))
	if [ "$kind" = none ]; then
		if [ $rc = 0 ]; then
			echo "ok $n $name: clean run passes (${t}s)"
			return 0
		fi
		echo "not ok $n $name: clean run failed (rc=$rc), see $logdir"
		sed 's/^/#   /' "$logdir/verdict.txt" 2>/dev/null | head -n 20
		return 1
	fi
	hit=$(grep -aE -m1 "$pattern" "$logdir/$where" 2>/dev/null | tr -d '\r')
	if grep -q 'module build' "$logdir/vmtest.log"; then
		echo "not ok $n $name: the planted module did not build, see $logdir/vmtest.log"
	elif [ $rc != 0 ] && [ -n "$hit" ]; then
		echo "ok $n $name: run failed with '${hit#*] }' (${t}s)"
		# the kernel's report as the runner saw it
		sed 's/^/#   /' "$logdir/verdict.txt" | head -n 5
		return 0
	elif [ $rc = 0 ]; then
		echo "not ok $n $name: the run PASSED with the bug planted, see $logdir"
	else
		echo "not ok $n $name: run failed (rc=$rc) but without /$pattern/ in $where, see $logdir"
	fi
	return 1
}

# The cases, JOBS at a time (one TCG thread each: -j 2 on two cores),
# one less while PEVT_PLANTS_BESIDE (a pid: make check's debug lane)
# runs; their lines printed in case order at the end.
slots() {
	local b=${PEVT_PLANTS_BESIDE:-}
	if [ -n "$b" ] && [ "$jobs" -gt 1 ] && kill -0 "$b" 2>/dev/null; then
		echo $((jobs - 1))
	else
		echo "$jobs"
	fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ids=()
for c in "${cases[@]}"; do
	IFS=$'\t' read -r kind kernel where pattern <<< "$c"
	case $want in *" $kernel "*) ;; *) continue ;; esac
	case " ${PEVT_PLANTS:-$kind} " in *" $kind "*) ;; *) continue ;; esac
	n=$((n + 1))
	while [ "$(jobs -rp | wc -l)" -ge "$(slots)" ]; do sleep 2; done
	( one_case "$n" "$kind" "$kernel" "$where" "$pattern" > "$tmp/$n.out"; echo $? > "$tmp/$n.rc" ) &
	ids+=("$n")
done
wait
for i in "${ids[@]}"; do
	cat "$tmp/$i.out"
	[ "$(cat "$tmp/$i.rc" 2>/dev/null)" = 0 ] || failed=$((failed + 1))
done
echo "# $n cases, $failed failed"
[ $failed = 0 ]
