#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pevt report against the guest's Debian perf report --stdio, on a file
# recorded there by Debian's perf and one recorded by pevt record (the
# stock backend, and the pevt backend when /dev/pevt is there), both with
# callchains:
# - the self histogram (--no-children -g none) byte for byte, but for the
#   rows of module symbols (below);
# - the default output (children with call graphs): the same lines as a
#   multiset, without the drawing of the graphs and without garbage
#   addresses (Documentation/report.md: equal rows and graph siblings in
#   another order is a known difference);
# - the call graphs without children, the same way.
# - ls's rows with -n --comm ls --percentage relative, byte for byte
#   (each file: the Samples column and a filter on both backends' files).
# The file pevt record wrote is read by perf without a warning (that is
# record_test's business, but this comparison needs it).
#
# Under TCG every perf run costs seconds (~5 s for perf record, 3-8 s
# per perf report): by default Debian's file gets the byte comparison and
# the call graphs, pevt record's (the pevt backend if /dev/pevt is there,
# else the stock one) the call graphs; PEVT_REPORT_FULL=1 (on the kernel
# command line: VM_APPEND=PEVT_REPORT_FULL=1) compares everything on both
# backends.

n=0
fails=0
W=/tmp/report_test
mkdir -p $W
cd $W || exit 1

T0=$(date +%s)
ok() { n=$((n + 1)); echo "ok $n $1 # $(( $(date +%s) - T0 ))s"; }
notok() { n=$((n + 1)); echo "not ok $n $1"; fails=$((fails + 1)); }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
log() { sed 's/^/# /' "$@"; }

FULL=${PEVT_REPORT_FULL:-0}
BUSY="sh -c 'i=0; while [ \$i -lt 6000 ]; do i=\$((i+1)); done; ls -lR /etc /bin >/dev/null 2>&1; true'"

# lines: drop perf's random tip (or its complaint that tips.txt is missing)
# and its uninitialized "(inlined)" flag
perf_out() { perf report --stdio -i $1 $2 2>p.err | grep -v '(Tip\|(Cannot load tips' | sed 's/\[\.\.\.\] (inlined)$/[...]/'; }
pevt_out() { pevt report --stdio -i $1 $2 2>q.err | grep -v '(Tip'; }
# Symbols of modules (pevt.ko): perf 6.1 leaves samples there unresolved
# in this guest (no /lib/modules), pevt names them from kallsyms
# (Documentation/report.md); their lines are left out on both sides.
grep '\[[a-z_0-9]*\]$' /proc/kallsyms | awk '{ print $3 }' >modsyms
echo "no module symbol here" >>modsyms

# Perf's unresolved module addresses read "[unknown]  [k] 0xffffffffa0..."
# or, in some runs (6.12, once in a make check), "[pevt]  [k] 0x...fd57":
# the module's map found, not its symbols.
awk '{ print "[" $1 "]" }' /proc/modules >moddsos

# rows of module symbols (and perf's unresolved module addresses) dropped;
# how many into file $1
nomod() {
	awk -v out="$1" 'NR == FNR { m[$1]; next }
		FILENAME == "moddsos" { md[$1]; next }
		{ unres = /\[unknown\] +\[k\] 0x/
		  for (i = 1; i < NF - 1; i++)
			if ($i in md && $(i + 1) == "[k]" && $(i + 2) ~ /^0x/)
				unres = 1 }
		!($NF in m) && !unres { print; next }
		{ d++ }
		END { print d + 0 > out }' modsyms moddsos -
}

# as a multiset: rows of garbage addresses and their graphs dropped, and
# the column header lines (their widths count the module rows left out).
# A row whose graph passes through a module (pevt.ko: the module's
# sideband kprobe on perf_event_mmap() runs in many kernel chains) is
# dropped whole on both sides: perf sees 0x... addresses there, pevt
# names the functions, and the two trees then split and merge their
# nodes differently (6.1, once: d_path and kprobe_ftrace_handler lines
# under pevt's rows only).  Which rows those are is decided on both
# sides' output together (badrows, the file $1): a row can pass through
# the module in one report's graph and not in the other's (debug kernel,
# one run in three: perf's task_work_run, ret_from_fork and
# exit_to_user_mode_prepare rows kept, pevt's dropped, the chains going
# through pevt's exec and exit task work).
ROW='/^ +[0-9]+\.[0-9]+%/'
rowkey='function key(r) { gsub(/ +/, " ", r); sub(/^ /, "", r); return r }'
modline='{ n = $NF; sub(/^.*--/, "", n)
	  if (n in m || (n ~ /^0x[0-9a-f]+$/ && length(n) >= 15)) bad = 1 }'
badrows() {
	awk "$rowkey"'
	     NR == FNR { m[$1]; next }
	     function flush() { if (bad && row != "") print key(row); bad = 0 }
	     '"$ROW"' { flush(); row = $0 }
	     '"$modline"'
	     END { flush() }' modsyms -
}
lines() {
	awk -v drop="$1" "$rowkey"'
	     BEGIN { while ((getline l < drop) > 0) d[l] }
	     NR == FNR { m[$1]; next }
	     function flush() { if (!bad && !(row != "" && key(row) in d)) printf "%s", blk; blk = ""; bad = 0 }
	     '"$ROW"' { flush(); row = $0 }
	     '"$modline"'
	     { blk = blk $0 "\n" }
	     END { flush() }' modsyms - |
		awk "$ROW"' { skip = /\[unknown\] +\[.\] [0-9a-fx]+$/ } !skip' |
		grep -v '^# \(\.\.\.\|Children \|Overhead \)' |
		grep -v -- '0x[0-9a-f]\{13,\}$' | sed 's/^[ |-]*//' |
		awk 'NR == FNR { m[$1]; next } { n = $NF; sub(/^.*--/, "", n) } !(n in m)' modsyms - |
		sort
}

# compare NAME FILE WHAT: WHAT is "default" (bytes and the default
# graphs), "graphs" (those only) or "all" (with --no-children graphs too)
compare() {
	name=$1 f=$2 what=$3
	if [ "$what" != graphs ]; then
		perf_out $f "--no-children -g none" | nomod da >a
		pevt_out $f "--no-children -g none" | nomod db >b
		# the column widths count the module rows left out (a module
		# symbol's name sizes the Symbol column on one side only): then
		# the two column header lines are not compared
		if [ "$(cat da)" != 0 ] || [ "$(cat db)" != 0 ]; then
			sed -i '/^# \(Overhead \|\.\.\.\.\)/d' a b
			echo "# $name: $(cat da) and $(cat db) module rows left out, column headers not compared"
		fi
		if [ -s a ] && grep -q '^# Samples' a && cmp -s a b; then
			ok "$name: --no-children -g none: perf's bytes ($(wc -l <a) lines)"
		else
			notok "$name: --no-children -g none differs ($(wc -l <a) and $(wc -l <b) lines)"
			{ cmp a b; diff -U0 a b | head -40; } 2>&1 | log; log p.err q.err
		fi
	fi
	# -n and a filter with relative percentages: ls's rows (more in
	# selftests/host/report_options_test.sh)
	nf="--no-children -g none -n --comm ls --percentage relative"
	perf_out $f "$nf" | nomod da >a
	pevt_out $f "$nf" | nomod db >b
	if [ "$(cat da)" != 0 ] || [ "$(cat db)" != 0 ]; then
		sed -i '/^# \(Overhead \|\.\.\.\.\)/d' a b
	fi
	if grep -q '^ .*%' a && grep -q '^# comm: ls' a && cmp -s a b; then
		ok "$name: $nf: perf's bytes ($(wc -l <a) lines)"
	else
		notok "$name: $nf differs ($(wc -l <a) and $(wc -l <b) lines)"
		{ cmp a b; diff -U0 a b | head -40; } 2>&1 | log
	fi
	graphs=""
	[ "$what" = all ] && graphs="--no-children"
	for args in "" $graphs; do
		perf_out $f "$args" >pa
		pevt_out $f "$args" >pb
		{ badrows <pa; badrows <pb; } >drop
		lines drop <pa >a
		lines drop <pb >b
		# graph lines are there: neither header nor row
		if grep -v '^#' a | grep -v '^[0-9.]*%  ' | grep -q '[a-z0-9]' && cmp -s a b; then
			ok "$name: '$args' with call graphs: perf's lines ($(wc -l <a))"
		elif cmp -s a b; then
			skip "$name: '$args' with call graphs" "perf shows no call graph for this file"
		else
			notok "$name: '$args' with call graphs differs"; { cmp a b; diff -U0 a b | head -40; } 2>&1 | log
		fi
	done
}

# Debian's perf
if eval perf record -q -e cpu-clock -g -F 1000 -o perf.data -- $BUSY >/dev/null 2>w.err; then
	ok "perf record -g"
	compare perf perf.data $([ $FULL = 1 ] && echo all || echo default)
else
	notok "perf record -g"; log w.err
fi

# pevt record: the pevt backend (else the stock one); both with FULL=1
backends=stock
[ -c /dev/pevt ] && backends=pevt
[ $FULL = 1 ] && backends="stock pevt"
for b in $backends; do
	if [ "$b" = pevt ] && [ ! -c /dev/pevt ]; then
		skip "pevt backend" "no /dev/pevt"
		continue
	fi
	if eval pevt record --backend $b -g -e cpu-clock -F 1000 -o $b.data -- $BUSY \
		>/dev/null 2>w.err; then
		ok "pevt record --backend $b -g"
		compare "pevt $b" $b.data $([ $FULL = 1 ] && echo all || echo graphs)
	else
		notok "pevt record --backend $b -g"; log w.err
	fi
done

cd /
rm -rf $W
echo "1..$n"
[ $fails = 0 ]
