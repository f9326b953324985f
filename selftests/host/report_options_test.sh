#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pevt report's options that change perf report's output, against perf
# report on the same files (one recorded by perf record -g, one by pevt
# record -g): -n/--show-nr-samples (a Samples column: each entry's own
# samples, 0 for an entry only its callees' samples reach), the filters
# --comm, --pid, --tid, --dso, --symbols (entries left out by their first
# sample, a column of one name left out with a '# comm: ls' line) with
# --percentage absolute and relative, in the modes a perf user runs; and
# -g on a file without callchains, which perf refuses with an error and
# no report; a --pid/--tid that is not a number is an error naming it.
# TAP output for scripts/check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

# PID, SYM: ls's busiest process and libc's busiest symbol in each file
modes=("-n" "-n --no-children" "-n --no-children -g none --sort pid" "-n -g caller,0.5,callee --sort dso,sym"
       "-n -q --percent-limit 2"
       "--comm ls" "--no-children --comm ls,sh --sort pid" "--no-children -g none --comm ls --sort dso,sym"
       "--dso libc.so.6" "--no-children --dso libc.so.6 --percentage relative -g graph,2"
       "--no-children -g none --symbols SYM,malloc" "--symbols SYM --comm ls --dso libc.so.6"
       "--no-children --pid PID" "--no-children -g none --tid PID --sort pid,comm"
       "--no-children --comm sh --percentage relative" "-q --no-children -g none --comm ls")
N=$(( 2 * ${#modes[@]} + 3 ))
echo "TAP version 13"
echo "1..$N"
skip_all() { for i in $(seq 1 $N); do skip "report options $i" "$1"; done; exit 4; }
cd "$tmp"
workload="sh -c 'for i in \$(seq 1 6); do ls -R /usr/lib >/dev/null 2>&1; done'"
rc=1
[ -z "$perf" ] || { perf_record_clean p.data "-q -g -F 2000 -- $workload"; rc=$?; }
[ $rc = 1 ] && skip_all "no perf, or perf record fails on this host"
[ $rc = 2 ] && skip_all "$perf_unclean (a loaded host)"
eval "\"$pevt\" record -q -g -F 2000 -o v.data -- $workload" 2>v.rec ||
	skip_all "pevt record -g fails here: $(head -c 300 v.rec)"

# 1-32: on perf's file and on pevt's, line for line but perf's tip;
# with children, the '#' lines and the rows as a set, and with call
# graphs all lines as a multiset, both without rows of garbage addresses
# (frame-pointer garbage: perf's order among them, and its graph nodes
# near them, depend on its insertions, report.md "Ties among garbage
# addresses"; host test report does the same)
garbage='\[unknown\]  *\[.\] [0-9a-fx]*$'
graph_lines() {
	awk '/^ +[0-9]+\.[0-9]+%/ { skip = /\[unknown\] +\[.\] [0-9a-fx]+$/ } /^#/ { skip = 0 } !skip' |
		grep -v -- '0x[0-9a-f]\{13,\}$' | sed 's/^[ |-]*//' | grep -v '^$' | sort
}
for f in p v; do
	pid=$("$perf" report --stdio --no-children -g none --comm ls --sort pid -i $f.data 2>/dev/null |
	      awk '$1 ~ /%$/ { sub(/:.*/, "", $2); print $2; exit }')
	sym=$("$perf" report --stdio --no-children -g none --dso libc.so.6 --sort sym -i $f.data 2>/dev/null |
	      awk '$1 ~ /%$/ && $2 == "[.]" { print $3; exit }')
	for m in "${modes[@]}"; do
		m=${m//PID/${pid:-1}}
		m=${m//SYM/${sym:-malloc}}
		"$perf" report --stdio $m -i $f.data 2>/dev/null | grep -v '(Tip\|(Cannot load tips' > a.out
		"$pevt" report --stdio $m -i $f.data 2>/dev/null | grep -v '(Tip' > b.out
		grep -q '^ .*%' a.out && rows=1 || rows=
		if [[ $m != *--no-children* ]]; then
			for x in a b; do
				{ grep '^#' $x.out; grep -E '^ +[0-9]+\.[0-9]+%' $x.out | grep -v "$garbage" | sort; } > $x.set
				mv $x.set $x.out
			done
		elif [[ $m != *"-g none"* ]]; then
			# call graphs: all lines as a multiset, without garbage
			for x in a b; do graph_lines < $x.out > $x.set; mv $x.set $x.out; done
		fi
		if [ -n "$rows" ] && cmp -s a.out b.out &&
		   { [[ $m != -n* ]] || [[ $m == *-q* ]] || grep -q '^# .* Samples  ' b.out; }; then
			ok "$f.data: pevt report $m: perf's $(wc -l < a.out) lines"
		else
			diff a.out b.out | head -6 | sed 's/^/# /'
			nok "$f.data: pevt report $m: perf's lines"
		fi
	done
done

# 33: -g on a file without callchains: perf's error, no report (pevt exits 1)
"$perf" record -q -F 2000 -o n.data -- $workload 2>/dev/null
"$perf" report --stdio -g caller -i n.data >a.out 2>a.err
"$pevt" report --stdio -g caller -i n.data >b.out 2>b.err
prc=$?
if grep -q "no callchain" a.err && cmp -s a.err b.err && [ ! -s b.out ] && [ $prc = 1 ]; then
	ok "-g caller without callchains: perf's error ($(head -2 a.err | tail -1)), no report, exit 1"
else
	sed 's/^/# perf: /' a.err | head -4; sed 's/^/# pevt: /' b.err | head -4
	nok "-g caller without callchains: perf's error, no report, exit 1 (rc $prc, $(wc -l < b.out) lines)"
fi

# 34: -g none there is a report, as perf's
"$perf" report --stdio -g none -i n.data 2>/dev/null | grep -v '(Tip\|(Cannot load tips' > a.out
"$pevt" report --stdio -g none -i n.data 2>/dev/null | grep -v '(Tip' > b.out
if grep -q '^ .*%' a.out && cmp -s a.out b.out; then ok "-g none without callchains: perf's $(wc -l < a.out) lines"
else diff a.out b.out | head -6 | sed 's/^/# /'; nok "-g none without callchains: perf's lines"; fi

# 35: --pid/--tid not a number: an error naming the option and the token
"$pevt" report --stdio --pid 12,x -i n.data >b.out 2>b.err
prc=$?
"$pevt" report --stdio --tid -1 -i n.data >>b.out 2>>b.err
trc=$?
if [ $prc = 1 ] && [ $trc = 1 ] && [ ! -s b.out ] &&
   grep -q "^Error: --pid: 'x' is not a number >= 0$" b.err &&
   grep -q "^Error: --tid: '-1' is not a number >= 0$" b.err; then
	ok "--pid 12,x / --tid -1: errors naming the option and the token, exit 1"
else
	sed 's/^/# /' b.err | head -4
	nok "--pid 12,x / --tid -1: errors naming the option and the token, exit 1 (rc $prc, $trc)"
fi
exit $failed
