#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pevt report on a perf file whose records are out of order (perf
# report: "N out of order events recorded"; perf writes such files on a
# loaded host, CI's among them).  perf applies each record, and resolves
# each sample, against the state of its delivery; pevt report resolved a
# sample at its own time, so a late sample of a process started after
# that time went to ":TID" with no comm (until 2026-12-07).  The file is
# made here: a clean perf recording in which one sample of its last
# quarter gets the first sample's time (offsets and times from perf
# report -D).  pevt report gives perf's rows on it, in three modes and
# on 1 and 2 threads, counts the misordered sample and says so as perf.
# TAP output for scripts/check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

N=4
echo "TAP version 13"
echo "1..$N"
skip_all() { for i in $(seq 1 $N); do skip "misordered $i" "$1"; done; exit 4; }
# Short processes one after the other: a sample of a late one, moved to
# the start, is older than its process.  Small buffers (-m 8: 32 KB) for
# many rounds: the late sample is delivered long after its process's
# COMM (in a file of one round perf would deliver it at its time).
workload="sh -c 'for i in \$(seq 1 12); do ls -R /usr/lib >/dev/null 2>&1; done'"
cd "$tmp"
hist() { grep -E '^ +[0-9]+\.[0-9]+%' | sort; }
modes=("--no-children -g none" "--no-children -g none --sort pid,comm" "")
# One attempt: record, move a sample, compare; sets late t0 perf_msg
# pevt_msg mis and bad[0..2] (the modes whose rows differ: "" if none).
# Returns 1 to skip all (its reason in $why).
attempt() {
	local rc=1 nr off mode t i
	[ -z "$perf" ] || { perf_record_clean f.data "-q -m 8 -e cpu-clock -F 4000 -g -- $workload"; rc=$?; }
	[ $rc = 1 ] && { why="no perf, or perf record fails on this host"; return 1; }
	[ $rc = 2 ] && { why="$perf_unclean (a loaded host)"; return 1; }
	# the sample's time is its fourth u64 (header, IP, TID, TIME)
	"$perf" evlist -v -i f.data 2>/dev/null | grep -q 'sample_type: IP|TID|TIME|' ||
		{ why="perf's sample_type is not IP|TID|TIME|...: $("$perf" evlist -v -i f.data 2>&1 | head -c 200)"; return 1; }
	"$perf" report -D -i f.data 2>/dev/null | awk '$4 ~ /^PERF_RECORD_SAMPLE/ { print $1, $2 }' > s.txt
	nr=$(wc -l < s.txt)
	[ "$nr" -gt 100 ] || { why="only $nr samples recorded"; return 1; }
	t0=$(head -1 s.txt | cut -d' ' -f1)
	late=$(sed -n "$((nr * 3 / 4))p" s.txt)
	off=$(( $(echo "$late" | cut -d' ' -f2) + 24 ))
	cp f.data m.data
	poke m.data "$off" "$t0"
	perf_msg=$("$perf" report --stdio -i m.data 2>&1 >/dev/null | tr '\n' ' ')
	pevt_msg=$("$pevt" report --stdio -i m.data 2>&1 >/dev/null | tr '\n' ' ')
	mis=$("$pevt" report --stats -i m.data 2>/dev/null | awk '$1 == "misordered:" { print $2 }')
	for i in 0 1 2; do
		mode=${modes[$i]}
		"$perf" report --stdio $mode -i m.data 2>/dev/null | hist > p$i.txt
		bad[$i]=
		for t in 1 2; do
			"$pevt" report --stdio $mode --threads $t -i m.data 2>q.err | hist > q$i.$t.txt
			cmp -s p$i.txt q$i.$t.txt || bad[$i]="${bad[$i]} threads-$t:$(diff p$i.txt q$i.$t.txt | grep -c '^[<>]')-lines"
		done
		[ -s p$i.txt ] || bad[$i]="${bad[$i]} no rows from perf"
	done
	return 0
}
# Under load (CI) the children mode differed by a row in about 1 of 90
# recordings, the build of 2026-12-07 as the one after (a caller address
# perf left in no map; not understood yet, Documentation/report.md):
# a mismatch is recorded again, up to 3 times, each one logged.
for try in 1 2 3; do
	attempt || skip_all "$why"
	[ -z "${bad[0]}${bad[1]}${bad[2]}" ] && break
	for i in 0 1 2; do
		[ -z "${bad[$i]}" ] || { echo "# attempt $try, '${modes[$i]}':${bad[$i]}"; diff p$i.txt q$i.1.txt | head -6 | sed 's/^/# /'; }
	done
	[ $try -lt 3 ] && echo "# recording again"
done

# 1: perf sees one record out of order, pevt report --stats counts it,
# and pevt report says what perf says about it
if echo "$perf_msg" | grep -q "1 out of order events recorded" && [ "${mis:-0}" = 1 ] &&
   [ "$perf_msg" = "$pevt_msg" ]; then
	ok "the sample at $late moved to $t0: perf and pevt report say '$perf_msg', pevt report --stats misordered $mis"
else
	echo "# perf: $perf_msg"; echo "# pevt: $pevt_msg"; echo "# pevt misordered: ${mis:-none}"
	nok "one sample out of order"
fi

# 2-4: pevt report's rows are perf's (as a set: equal percentages come in
# perf's heap order), on 1 and 2 threads
for i in 0 1 2; do
	mode=${modes[$i]}
	if [ -z "${bad[$i]}" ]; then ok "pevt report ${mode:-(children, call graphs)}: perf's $(wc -l < p$i.txt) rows"
	else nok "pevt report ${mode:-(children)}: perf's rows:${bad[$i]}"; fi
done
exit $failed
