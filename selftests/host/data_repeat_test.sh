#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `pevt data repeat`: a file recorded here with Debian's perf, written 3
# times over; stock perf reads the result without a message and reports
# the same rows (same percentages) with 3x the samples and records, its
# timestamps run on over the copies (the copies follow each other, each
# span apart), SAMPLE_TIME says so; pevt report gives perf's rows on it;
# --size picks the count; pipe data, compressed data, a killed recording
# and garbage are refused with a message and leave no output; SIGINT
# stops it with no output and no temporary left.
# TAP output for scripts/check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

N=11
echo "TAP version 13"
echo "1..$N"
workload="sh -c 'for i in \$(seq 1 8); do ls -R /usr/lib >/dev/null 2>&1; done'"
cd "$tmp"
# perf's own file may lose samples or be out of order on a loaded host
# (tap.sh): 5 tries for one perf reads without a message
rc=1
[ -z "$perf" ] || { perf_record_clean f.data "-q -m 8 -e cpu-clock -F 4000 -g -- $workload"; rc=$?; }
if [ $rc = 1 ]; then
	for i in $(seq 1 $N); do skip "repeat $i" "no perf, or perf record fails on this host"; done
	exit 4
fi
rows() { grep -v -e '^#' -e '^$'; }
count() { "$perf" report --stats -i "$1" 2>/dev/null | awk -v t="$2" '$1 == t && $2 == "events:" { print $3; exit }'; }

# 1: three copies, no temporary file left
if "$pevt" data repeat -n 3 f.data r.data 2>rep.err && [ -s r.data ] && \
   [ -z "$(ls | grep tmp)" ]; then
	ok "data repeat -n 3: $(cat rep.err)"
else
	sed 's/^/# /' rep.err; ls | sed 's/^/# ls: /'; nok "data repeat -n 3"
fi

# 2: perf report: the same rows (percentages), no message
"$perf" report --stdio --no-children -g none -i f.data 2>/dev/null | rows > a.txt
"$perf" report --stdio --no-children -g none -i r.data 2>b.err | rows > b.txt
if [ -n "$perf_unclean" ]; then
	skip "perf report: same rows, no warnings" "$perf_unclean (a loaded host)"
elif [ -s a.txt ] && cmp -s a.txt b.txt && [ ! -s b.err ]; then ok "perf report: same rows, no warnings"
else diff a.txt b.txt | head -5 | sed 's/^/# /'; sed 's/^/# err: /' b.err | head -5; nok "perf report: same rows"; fi

# 3: 3x the samples, comms, mmaps and rounds; perf's own records once
s1=$(count f.data SAMPLE); s3=$(count r.data SAMPLE)
c1=$(count f.data COMM); c3=$(count r.data COMM)
m1=$(count f.data MMAP2); m3=$(count r.data MMAP2)
f1=$(count f.data FINISHED_ROUND); f3=$(count r.data FINISHED_ROUND)
t3=$(count r.data THREAD_MAP)
if [ -n "$s1" ] && [ "$s3" = $((3 * s1)) ] && [ "$c3" = $((3 * c1)) ] && [ "$m3" = $((3 * m1)) ] && \
   [ "$f3" = $((3 * f1)) ] && [ "${t3:-1}" = 1 ]; then
	ok "3x samples ($s1 -> $s3), COMM, MMAP2, FINISHED_ROUND; THREAD_MAP once"
else
	echo "# samples $s1 $s3 comm $c1 $c3 mmap2 $m1 $m3 rounds $f1 $f3 thread_map $t3"
	nok "3x samples, COMM, MMAP2, FINISHED_ROUND; THREAD_MAP once"
fi

# 4: perf script: 3x the lines, no message, and the times run on: the
# copies follow each other (span: the file's last - first time, + 1 ns)
"$perf" script -F time -i f.data 2>/dev/null | tr -d ' :' > t1.txt
"$perf" script -F time -i r.data 2>s.err | tr -d ' :' > t3.txt
if [ -n "$perf_unclean" ]; then
	skip "perf script: 3x the samples, in time order" "$perf_unclean (a loaded host)"
elif [ ! -s s.err ] && [ "$(wc -l < t3.txt)" = $((3 * $(wc -l < t1.txt))) ] && \
   sort -n -c t3.txt 2>/dev/null && \
   awk 'NR == FNR { if (NR == 1) a = $1; b = $1; next } FNR == 1 { c = $1 } { d = $1 }
	END { exit !(d - c > 2 * (b - a) && d > b) }' t1.txt t3.txt; then
	ok "perf script: 3x the samples, in time order over 3 spans, no warnings"
else
	sed 's/^/# err: /' s.err | head -3; head -2 t1.txt t3.txt | sed 's/^/# /'; tail -1 t3.txt | sed 's/^/# /'
	nok "perf script: 3x the samples, in time order over 3 spans"
fi

# 5: SAMPLE_TIME's last time is the last copy's
l1=$("$perf" report --header-only -i f.data 2>/dev/null | awk '/time of last sample/ { print $NF }')
l3=$("$perf" report --header-only -i r.data 2>/dev/null | awk '/time of last sample/ { print $NF }')
if [ -n "$l1" ] && awk -v a="$l1" -v b="$l3" 'BEGIN { exit !(b > a) }'; then
	ok "SAMPLE_TIME: last sample $l1 -> $l3"
else
	echo "# $l1 -> $l3"; nok "SAMPLE_TIME moved to the last copy"
fi

# 6: pevt report on the repeated file gives perf's rows (as a set: with
# call graphs, rows of garbage addresses with equal percentages come in
# perf's heap-address order; the graphs under them are left to
# report_test, perf splits call graph nodes where libc has no symbols,
# Documentation/report.md) and its whole output of the original file
ok6=1
hist() { grep -E '^ +[0-9]+\.[0-9]+%' | sort; }
for mode in "--no-children -g none" "--no-children -g none --sort pid" ""; do
	"$perf" report --stdio $mode -i r.data 2>/dev/null | hist > p.txt
	"$pevt" report --stdio $mode -i r.data 2>q.err | rows > q.txt
	"$pevt" report --stdio $mode -i f.data 2>/dev/null | rows > q1.txt
	if ! hist < q.txt | cmp -s p.txt - || ! cmp -s q.txt q1.txt || [ -s q.err ]; then
		echo "# mode '$mode':"; hist < q.txt | diff p.txt - | head -4 | sed 's/^/# /'
		diff q1.txt q.txt | head -4 | sed 's/^/# orig: /'; sed 's/^/# err: /' q.err | head -3
		ok6=0
	fi
done
if [ $ok6 = 1 ]; then ok "pevt report on it: perf's rows, the original's (3 modes)"
else nok "pevt report on it: perf's rows, the original's"; fi

# 7: --size: the fewest copies that reach it
sz=$(stat -c %s f.data)
if "$pevt" data repeat --size $((2 * sz + 1)) f.data z.data 2>z.err && grep -q '^z.data: 3 copies' z.err; then
	ok "--size 2x+1 bytes: 3 copies"
else
	sed 's/^/# /' z.err; nok "--size 2x+1 bytes: 3 copies"
fi

# 8: pipe-mode and compressed data refused, no output
"$perf" record -q -e cpu-clock -o - -- true 2>/dev/null > p.data
"$perf" record -q -z -e cpu-clock -o c.data -- ls -R /usr/lib >/dev/null 2>&1
"$pevt" data repeat -n 2 p.data o1.data 2>p.err; rp=$?
"$pevt" data repeat -n 2 c.data o2.data 2>c.err; rc=$?
if [ $rp != 0 ] && grep -q pipe p.err && [ $rc != 0 ] && grep -q compressed c.err && \
   [ ! -e o1.data ] && [ ! -e o2.data ]; then
	ok "pipe and compressed data refused: $(cat c.err)"
else
	echo "# pipe $rp: $(cat p.err)"; echo "# compressed $rc: $(cat c.err)"; nok "pipe and compressed refused"
fi

# 9: a killed recording (data size 0) and garbage refused, no output
cp f.data k.data
printf '\0\0\0\0\0\0\0\0' | dd of=k.data bs=1 seek=48 conv=notrunc 2>/dev/null
head -c 4096 /dev/urandom > g.data
"$pevt" data repeat -n 2 k.data o3.data 2>k.err; rk=$?
"$pevt" data repeat -n 2 g.data o4.data 2>g.err; rg=$?
if [ $rk != 0 ] && [ -s k.err ] && [ $rg != 0 ] && [ -s g.err ] && [ ! -e o3.data ] && [ ! -e o4.data ] && \
   [ -z "$(ls | grep tmp)" ]; then
	ok "killed recording and garbage refused: $(head -1 k.err)"
else
	echo "# killed $rk: $(cat k.err)"; echo "# garbage $rg: $(cat g.err)"; nok "killed and garbage refused"
fi

# 10: usage errors
"$pevt" data repeat f.data u.data 2>u1.err; r1=$?
"$pevt" data repeat -n 2 --size 1M f.data u.data 2>u2.err; r2=$?
"$pevt" data repeat -n 0 f.data u.data 2>u3.err; r3=$?
if [ $r1 != 0 ] && [ $r2 != 0 ] && [ $r3 != 0 ] && grep -q usage u1.err && [ ! -e u.data ]; then
	ok "usage errors: no -n or --size, both, -n 0"
else
	cat u1.err u2.err u3.err | sed 's/^/# /'; nok "usage errors"
fi
# 11: SIGINT in the middle: no OUT, no temporary (at most 1 GB written)
(ulimit -f 1048576; exec "$pevt" data repeat -n 3000 f.data i.data 2>i.err) & p=$!
for i in $(seq 1 100); do
	t=$(ls i.data.tmp* 2>/dev/null | head -1)
	[ -n "$t" ] && [ "$(stat -c %s "$t" 2>/dev/null || echo 0)" -gt 20000000 ] && break
	sleep 0.05
done
kill -INT $p; wait $p; ri=$?
if [ $ri != 0 ] && [ ! -e i.data ] && [ -z "$(ls | grep tmp)" ] && grep -q interrupted i.err; then
	ok "SIGINT: no output, no temporary ($(cat i.err))"
else
	echo "# exit $ri: $(cat i.err)"; ls | sed 's/^/# ls: /'; nok "SIGINT: no output, no temporary"
fi
exit $failed
