#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: host tests, then the VM suite on every test kernel, then the
# runner's own self-tests (planted bugs must fail a run).  Ends with one
# line "N passed, N failed, N skipped".
#
#   scripts/check.sh [--host-only] [--kernels "6.1 6.12 debug"]
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
. "$top/scripts/kernels.sh"

host_only=0
kernels=${PEVT_KERNELS:-$TEST_KERNELS}
while [ $# -gt 0 ]; do
	case "$1" in
	--host-only) host_only=1 ;;
	--kernels) kernels=$2; shift ;;
	*) die "usage: $0 [--host-only] [--kernels LIST]" ;;
	esac
	shift
done

"$top/scripts/deps.sh" || die "scripts/deps.sh failed"
make -s -C "$top" user tests || die "build failed"

pass=0 fail=0 skip=0 t0=$(date +%s)
declare -a timings
declare -a failures=()
add() { pass=$((pass + $1)); fail=$((fail + $2)); skip=$((skip + $3)); }
step_time() {
	timings+=("$(printf '%-28s %5ss' "$1" $(( $(date +%s) - $2 )))")
	step_secs[$1]=$(( $(date +%s) - $2 ))
}

# Progress on stderr: the step starting, the time so far and what the last
# run's step times (build/check.timings) leave; the VM runner adds its own
# per-test lines on a terminal.  The results above stay on stdout.
show=${PEVT_PROGRESS:-$([ -t 2 ] && echo 1 || echo 0)}
export PEVT_PROGRESS=$show
# Two lanes on two cores: the debug kernel's build (~10 min) and its VM
# run (KASAN, lockdep, kmemleak: ~2-3x a stock kernel's) take about as
# long as everything else, so they start first, in the background, and
# the host tests, fuzz and the other kernels run beside them (one TCG
# thread per VM, the kernel build at nice 10).  PEVT_CHECK_JOBS=1: one
# lane, every step in turn.
jobs=${PEVT_CHECK_JOBS:-2}
bg= bg_pid= bg_t0= bg_log=$top/build/check-debug.log
if [ $host_only = 0 ] && [ "$jobs" -ge 2 ] && [[ " $kernels " == *" debug "* ]]; then
	bg=debug bg_t0=$(date +%s)
	if [ "$show" = 1 ]; then
		"$top/scripts/vmtest.sh" debug > >(tee "$bg_log" >&2) 2>&1 &
	else
		"$top/scripts/vmtest.sh" debug > "$bg_log" 2>&1 &
	fi
	bg_pid=$!
	# an interrupted make check takes its lane (and the lane its VM) down
	trap 'kill "$bg_pid" 2>/dev/null' EXIT
	log "check: the debug lane runs in the background (its log: ${bg_log#$top/})"
fi

declare -A step_secs=() last_secs=()
tfile=$top/build/check.timings
if [ -s "$tfile" ]; then
	while IFS=$'\t' read -r k v; do last_secs[$k]=$v; done < "$tfile"
fi
steps=("host tests" fuzz)
if [ $host_only = 0 ]; then
	for k in $kernels; do [ "$k" = "$bg" ] || steps+=("vm $k"); done
	[ -x "$top/scripts/test-plants.sh" ] && [ "${PEVT_SKIP_PLANTS:-0}" != 1 ] && steps+=("runner self-tests")
	[ -n "$bg" ] && steps+=("vm $bg")
fi
stepno=0
begin() {
	local left=0 k seen=0
	stepno=$((stepno + 1))
	for k in "${steps[@]}"; do
		[ "$k" = "$1" ] && seen=1
		[ $seen = 1 ] || continue
		# the background lane's time is not added to the others'
		[ -n "${bg:-}" ] && [ "$k" = "vm $bg" ] && [ "$1" != "$k" ] && continue
		[ -n "${last_secs[$k]:-}" ] || { left=; break; }
		left=$((left + last_secs[$k]))
	done
	[ -n "$left" ] && left="~$(dur $left)"
	log "check: [$stepno/${#steps[@]}] $1 ($(dur $(( $(date +%s) - t0 ))) elapsed, ${left:-?} left)"
}
save_timings() {
	local k
	for k in "${!step_secs[@]}"; do last_secs[$k]=${step_secs[$k]}; done
	for k in "${!last_secs[@]}"; do printf '%s\t%s\n' "$k" "${last_secs[$k]}"; done > "$tfile"
}

# Host tests: kselftest TAP, one binary per feature.
begin "host tests"
s=$(date +%s)
# Tracepoint tests need tracefs, which a fresh machine may not have
# mounted: mount it as perf does (tracing_path_mount()) when we can;
# if we cannot, those tests say SKIP with the reason.
if [ ! -e /sys/kernel/tracing/events/header_page ] && [ "$(id -u)" = 0 ] &&
   [ -d /sys/kernel/tracing ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null &&
		log "check: mounted tracefs on /sys/kernel/tracing"
fi
for t in "$top"/build/tests/host/*; do
	[ -x "$t" ] || continue
	n=${t##*/}
	[ "$show" = 1 ] && log "check:   host/$n"
	out=$("$t" 2>&1); rc=$?
	echo "$out" | grep -aE '^(not ok|ok .*# SKIP)' | sed "s|^|host/$n: |"
	p=$(echo "$out" | grep -acE '^ok [0-9]+ ' ); p=$((p - $(echo "$out" | grep -acE '^ok .*# SKIP')))
	f=$(echo "$out" | grep -acE '^not ok [0-9]+ ')
	k=$(echo "$out" | grep -acE '^ok .*# SKIP')
	if [ $rc != 0 ] && [ $rc != 4 ] && [ "$f" = 0 ]; then
		echo "host/$n: exited with $rc"; f=1; failures+=("host/$n: exited with $rc")
	fi
	# each failure with the last 20 lines its test printed before it
	while IFS= read -r l; do failures+=("host/$n: $l"); done < <(echo "$out" | awk '
		/^(ok|not ok) / { if (/^not ok /) { for (i = 0; i < nd; i++) print "  " d[i]; print } nd = 0; next }
		/^TAP version|^1\.\.[0-9]/ { next }
		{ if (nd == 20) { for (i = 1; i < 20; i++) d[i - 1] = d[i]; nd = 19 } d[nd++] = substr($0, 1, 300) }')
	echo "host/$n: $p passed, $f failed, $k skipped"
	add "$p" "$f" "$k"
done
step_time "host tests" "$s"

# Userspace parsers under libFuzzer, bounded (FUZZ_SECONDS per harness).
begin fuzz
s=$(date +%s)
out=$(FUZZ_SECONDS=${FUZZ_SECONDS:-10} "$top/selftests/fuzz/run.sh" 2>&1); rc=$?
echo "$out" | grep -aE '^(ok|not ok|# )' | sed 's|^|fuzz: |'
p=$(echo "$out" | grep -acE '^ok [0-9]+ ') f=$(echo "$out" | grep -acE '^not ok [0-9]+ ')
[ $rc != 0 ] && [ "$f" = 0 ] && f=1
# A fuzz step that ran no harness is a failure, not an empty pass.
[ $((p + f)) = 0 ] && { echo "fuzz: no harness ran"; f=1; failures+=("fuzz: no harness ran"); }
while IFS= read -r l; do failures+=("fuzz: $l"); done < <(echo "$out" | grep -aE '^not ok ')
[ $rc != 0 ] && [ $((p + f)) != 0 ] && ! echo "$out" | grep -qaE '^not ok ' && failures+=("fuzz: exited with $rc")
add "$p" "$f" 0
step_time "fuzz" "$s"

# vm_summary K: the counts and failures of build/vm/K into the totals
vm_summary() {
	local p f sk l
	if [ -s "$top/build/vm/$1/summary" ]; then
		read -r p f sk < "$top/build/vm/$1/summary"
		add "$p" "$f" "$sk"
		while IFS= read -r l; do failures+=("vm/$1: $l"); done < <(grep -aE '^(not ok|  )' "$top/build/vm/$1/verdict.txt" 2>/dev/null | head -n 60)
	else
		echo "vm/$1: no results (set-up failed)"; add 0 1 0; failures+=("vm/$1: no results (set-up failed)")
	fi
}

if [ $host_only = 0 ]; then
	for k in $kernels; do
		[ "$k" = "$bg" ] && continue
		begin "vm $k"
		s=$(date +%s)
		if "$top/scripts/vmtest.sh" "$k"; then :; fi
		vm_summary "$k"
		step_time "vm $k" "$s"
	done
	if [ -x "$top/scripts/test-plants.sh" ] && [ "${PEVT_SKIP_PLANTS:-0}" != 1 ]; then
		# beside the debug lane if it still runs: one boot at a time until it ends
		begin "runner self-tests"
		s=$(date +%s)
		out=$(PEVT_PLANTS_BESIDE=$bg_pid "$top/scripts/test-plants.sh" -j "$jobs" $kernels 2>&1); echo "$out" | grep -aE '^(ok|not ok) '
		add "$(echo "$out" | grep -acE '^ok ')" "$(echo "$out" | grep -acE '^not ok ')" 0
		while IFS= read -r l; do failures+=("runner self-tests: $l"); done < <(echo "$out" | grep -aE '^not ok ')
		step_time "runner self-tests" "$s"
	fi
	if [ -n "$bg" ]; then
		begin "vm $bg"
		log "check: waiting for the $bg lane (running for $(dur $(( $(date +%s) - bg_t0 ))))"
		wait "$bg_pid" || :
		[ "$show" = 1 ] || cat "$bg_log"
		vm_summary "$bg"
		step_secs["vm $bg"]=$(( $(date +%s) - bg_t0 ))
		timings+=("$(printf '%-28s %5ss (beside the steps above)' "vm $bg" "${step_secs["vm $bg"]}")")
	fi
fi

save_timings
# The failures again at the end, with their diagnostics: a log whose tail
# is all one sees still says what failed and why.
if [ ${#failures[@]} -gt 0 ]; then
	echo "--- failures"
	printf '%s\n' "${failures[@]}"
fi
echo "--- time per step"
printf '%s\n' "${timings[@]}"
printf '%-28s %5ss\n' total $(( $(date +%s) - t0 ))
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
