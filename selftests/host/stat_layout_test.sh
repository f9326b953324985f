#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `pevt stat` prints what Debian's `perf stat` prints, column for column:
# the same events through both (software ones, plus cycles, which is
# <not supported> without a hardware PMU and counted with one), single
# runs, -r, -x CSV and -I; every counter line must put its name, its
# metric '#', its metric unit and its multiplexing/noise brackets at the
# same columns, and say <not supported>/<not counted> where perf does.
# TAP output for scripts/check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

echo "TAP version 13"
echo "1..5"
if [ -z "$perf" ] || ! "$perf" stat -e task-clock -- true >/dev/null 2>&1; then
	for t in single repeat csv interval exit; do skip "$t" "no working perf"; done
	exit 4
fi

# "NAME|namecol|hashcol|metric-unit|bracket-cols|bad" per counter line.
shape() {
	# the interval timestamp and the rate's K/M/G prefix vary with the numbers
	sed -E 's/^ +[0-9]+\.[0-9]{9} //; s|[KMG]/sec|/sec|' | awk '
	/(<not supported>|<not counted>|^ +[0-9.]+ )/ && !/seconds/ {
		line = $0; bad = ""
		if (match(line, /<not (supported|counted)>/)) bad = substr(line, RSTART, RLENGTH)
		rest = line; sub(/^ *(<not (supported|counted)>|[0-9.]+) +(msec +)?/, "", rest)
		name = rest; sub(/ .*/, "", name)
		ncol = index(line, name " ")
		if (!ncol) ncol = index(line, name)
		h = index(line, "#")
		unit = ""
		if (h) { u = substr(line, h + 1); sub(/^ *[0-9.]+ %? */, "", u); sub(/ *\(.*$/, "", u); sub(/ +$/, "", u); unit = u }
		br = ""
		s = line; off = 0
		while ((p = index(s, "(")) > 0) { br = br (off + p) ","; off += p; s = substr(s, p + 1) }
		print name "|" ncol "|" h "|" unit "|" br "|" bad
	}'
}

# Compare the shapes of two outputs; report the first difference.
same_shape() {
	local a b
	a=$(echo "$1" | shape | sort) b=$(echo "$2" | shape | sort)
	if [ "$a" = "$b" ] && [ -n "$a" ]; then return 0; fi
	echo "# perf: $(echo "$a" | tr '\n' ';')"
	echo "# pevt: $(echo "$b" | tr '\n' ';')"
	return 1
}

ev=task-clock,context-switches,cpu-migrations,page-faults,cycles,cpu-clock
p=$("$perf" stat -e $ev -- true 2>&1 >/dev/null) q=$("$pevt" stat -e $ev -- true 2>&1)
if same_shape "$p" "$q" && [ "$(echo "$p" | grep -c 'seconds')" = "$(echo "$q" | grep -c 'seconds')" ]; then
	ok "single run: same columns as perf stat"
else
	echo "$p" | sed 's/^/# perf| /'; echo "$q" | sed 's/^/# pevt| /'
	nok "single run: same columns as perf stat"
fi

# The noise brackets depend on the run-to-run spread, so compare without them.
nonoise() { sed 's/  ( +- *[0-9.]*% )//'; }
p=$("$perf" stat -r 3 -e $ev -- true 2>&1 >/dev/null | nonoise) q=$("$pevt" stat -r 3 -e $ev -- true 2>&1 | nonoise)
pe=$(echo "$p" | grep -E "^ +[0-9.]+ \+- [0-9.]+ seconds time elapsed") qe=$(echo "$q" | grep -E "^ +[0-9.]+ \+- [0-9.]+ seconds time elapsed")
if same_shape "$p" "$q" && [ -n "$pe" ] && [ -n "$qe" ] && echo "$q" | grep -q "stats for 'true' (3 runs):"; then
	ok "-r 3: same columns and +- elapsed line as perf stat"
else
	echo "$p" | sed 's/^/# perf| /'; echo "$q" | sed 's/^/# pevt| /'
	nok "-r 3: same columns and +- elapsed line as perf stat"
fi

# CSV: the same fields, numbers aside.
csv() { sed -E 's/[0-9]+(\.[0-9]+)?/N/g; s|[KMG]/sec|/sec|'; }
p=$("$perf" stat -x';' -e $ev -- true 2>&1 >/dev/null | csv) q=$("$pevt" stat -x';' -e $ev -- true 2>&1 | csv)
if [ "$p" = "$q" ]; then
	ok "-x: same CSV fields as perf stat"
else
	echo "$p" | sed 's/^/# perf| /'; echo "$q" | sed 's/^/# pevt| /'
	nok "-x: same CSV fields as perf stat"
fi

p=$("$perf" stat -I 100 -e task-clock,cs,cycles -- sleep 0.35 2>&1 >/dev/null) q=$("$pevt" stat -I 100 -e task-clock,cs,cycles -- sleep 0.35 2>&1)
if same_shape "$(echo "$p" | head -4)" "$(echo "$q" | head -4)" && [ "$(echo "$p" | head -1)" = "$(echo "$q" | head -1)" ]; then
	ok "-I: same header and columns as perf stat"
else
	echo "$p" | sed 's/^/# perf| /'; echo "$q" | sed 's/^/# pevt| /'
	nok "-I: same header and columns as perf stat"
fi

# An event the kernel lacks does not fail the run (cycles without a PMU,
# or a raw event no PMU takes); the exit status is the workload's.
"$pevt" stat -e r0,task-clock -- sh -c 'exit 3' >"$tmp/o" 2>&1; rc=$?
if [ $rc = 3 ] && grep -qE '^ +[0-9.]+ msec task-clock' "$tmp/o"; then
	ok "unsupported event: the rest is counted, workload's exit status"
else
	sed 's/^/# /' "$tmp/o"; nok "unsupported event: the rest is counted, workload's exit status (rc=$rc)"
fi
exit $failed
