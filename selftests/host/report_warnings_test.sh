#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pevt report says on stderr what perf report says at the end of a run
# (perf 6.1's perf_session__warn_about_errors(): lost chunks, more than
# 5% of the samples lost, out of order events), and -q leaves out the
# '#' lines and the warnings, as perf's.  Two files with losses made on
# purpose: pevt record with a reader that sleeps 500 ms at each wakeup
# and no watch (most samples lost), and perf record stopped (SIGSTOP)
# for 500 ms while its workload runs.  Both end with LOST_SAMPLES of
# time 0, which pevt report counted misordered until 2026-12-07 ("3 out
# of order events" where perf says nothing).
# TAP output for scripts/check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

N=6
echo "TAP version 13"
echo "1..$N"
if [ -z "$perf" ] || ! "$perf" record -q -o /dev/null -e cpu-clock -- true >/dev/null 2>&1; then
	for i in $(seq 1 $N); do skip "warnings $i" "no perf, or perf record fails on this host"; done
	exit 4
fi
cd "$tmp"
cpu=$(( $(nproc) - 1 ))
loop="i=0; while [ \$i -lt 1500000 ]; do i=\$((i+1)); done"

# the two files
PEVT_STAGE_NO_WATCH=1 PEVT_STAGE_READER_DELAY_US=500000 "$pevt" record -q --drain=pin \
	-e cpu-clock -F 4000 -m 1 -o v.data -- taskset -c $cpu sh -c "$loop" 2>v.rec
"$perf" record -q -e cpu-clock -F 4000 -m 1 -o p.data -- taskset -c $cpu sh -c "$loop" 2>p.rec &
rec=$!
sleep 0.3
kill -STOP $rec; sleep 0.5; kill -CONT $rec
wait $rec

# 1, 2: the same warnings as perf, word for word, on each file
for f in v p; do
	"$perf" report --stdio -i $f.data >$f.perf.out 2>$f.perf.err
	"$pevt" report --stdio -i $f.data >$f.pevt.out 2>$f.pevt.err
	what=$([ $f = v ] && echo "pevt record's" || echo "perf record's")
	if ! grep -q "lost" $f.perf.err; then
		skip "$what file: perf's warnings" "perf says nothing lost on it: $(head -c 300 $f.perf.err)"
	elif cmp -s $f.perf.err $f.pevt.err; then
		ok "$what file: perf's warnings: $(grep -E 'Processed|out of order' $f.perf.err | tr '\n' ' ')"
	else
		diff $f.perf.err $f.pevt.err | sed 's/^/# /'
		nok "$what file: perf's warnings"
	fi
done

# 3: nothing misordered in either (their LOST_SAMPLES carry time 0)
mis=$(for f in v p; do "$pevt" report --stats -i $f.data 2>/dev/null |
	awk -v f=$f '$1 == "misordered:" { print f ": " $2 }'; done)
if [ -z "$mis" ]; then ok "pevt report --stats: nothing misordered in either file"
else nok "pevt report --stats counts misordered records: $mis"; fi

# 4, 5: -q: perf's rows without a '#' line, and no warning
for f in v p; do
	"$perf" report -q --stdio -i $f.data >$f.pq.out 2>$f.pq.err
	"$pevt" report -q --stdio -i $f.data >$f.vq.out 2>$f.vq.err
	if [ -s $f.pq.out ] && cmp -s $f.pq.out $f.vq.out && [ ! -s $f.vq.err ] &&
	   ! grep -q '^#' $f.vq.out; then
		ok "$f.data: pevt report -q prints perf report -q's $(wc -l < $f.pq.out) lines, nothing on stderr"
	else
		diff $f.pq.out $f.vq.out | head -6 | sed 's/^/# /'; sed 's/^/# stderr: /' $f.vq.err | head -4
		nok "$f.data: pevt report -q is perf report -q's"
	fi
done

# 6: without -q, the rows are the same and the '#' lines come back
grep -v '^#' v.pevt.out > v.rows
if cmp -s v.rows v.vq.out && grep -q '^# Samples:' v.pevt.out; then
	ok "pevt report without -q: the same rows, with perf's '#' lines"
else
	nok "pevt report without -q: the same rows, with perf's '#' lines"
fi
exit $failed
