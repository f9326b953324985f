#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `pevt bench record`'s rows and arguments, without running a recorder
# (`list yes`): every row of pages x drains x backends and their -r 1 and
# -z twins is there (until 2026-12-04 a fixed 48 dropped the rest without
# a word), each once; a bad page count or drain is refused with a message
# naming it, before anything runs.  And one small run (8): each row's
# second run comes in the reverse order of the first, and the JSON has
# every pin run's reader counts (PEVT_STAGE_STATS lines, parsed); (10)
# a cpu-clock -a run counts the recorder's own samples in each file.
# TAP output for scripts/check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

echo "TAP version 13"
echo "1..10"
cd "$tmp"
# Backends: stock, and pevt where /dev/pevt exists (as the bench decides).
nb=1
[ -e /dev/pevt ] && nb=2

# 1: 4 page counts x (3 perf + 4 drains x nb + 1 + nb -z twins) x 2 (-r 1)
want=$((4 * (3 + 4 * nb + 1 + nb) * 2))
if "$pevt" bench record pages 1,2,4,8 drains write,uring,threads,pin rt yes z yes \
	json j.json list yes > rows 2> err; then
	got=$(wc -l < rows)
	dup=$(cut -f1 rows | sort | uniq -d | head -3 | tr '\n' ' ')
	rz=$(grep -c -- ' -r 1 -z$' rows)
	if [ "$got" -eq "$want" ] && [ -z "$dup" ] && [ "$rz" -eq $((4 * (1 + nb))) ] &&
	   [ "$(grep -c -- '-m 8' rows)" -eq $((want / 4)) ]; then
		ok "list: $got rows (4 pages x 4 drains x $nb backend(s), -r1 and -z twins)"
	else
		sed 's/^/# /' rows err | head -20
		nok "list: $got rows, want $want; -r 1 -z rows $rz; names twice: '$dup'"
	fi
else
	sed 's/^/# /' err; nok "list: exit $?"
fi

# 2: nice yes: a --reader-nice 0 twin of each row with readers (pin,
# threads) and without -r, per backend and page count: 2 x 2 x nb of them
if "$pevt" bench record pages 1,2 drains write,threads,pin rt yes nice yes list yes \
	> nrows 2> err; then
	n0=$(grep -c -- ' nice0	.* --reader-nice 0$' nrows)
	bad0=$(grep -- 'nice0' nrows | grep -c -e '-r 1' -e 'write')
	if [ "$n0" -eq $((2 * 2 * nb)) ] && [ "$bad0" -eq 0 ]; then
		ok "nice yes: $n0 --reader-nice 0 twins"
	else
		sed 's/^/# /' nrows err | head -30
		nok "nice yes: $n0 --reader-nice 0 twins, want $((2 * 2 * nb)); $bad0 on -r 1 or write rows"
	fi
else
	sed 's/^/# /' err; nok "nice yes: exit $?"
fi

# 3: list yes runs nothing and writes no JSON
if [ ! -e j.json ]; then ok "list: no JSON written"; else nok "list: j.json written"; fi

# 4-7: bad arguments, a message naming them, nothing run, exit status 1
bad() {
	local d=$1 msg=$2; shift 2
	if "$pevt" bench record "$@" json b.json > out 2> err; then
		nok "$d: exit 0"
	elif ! grep -q -- "$msg" err; then
		sed 's/^/# /' err; nok "$d: no '$msg' on stderr"
	elif [ -s out ] || [ -e b.json ]; then
		sed 's/^/# /' out; nok "$d: ran or wrote JSON"
	else
		ok "$d: $(head -1 err)"
	fi
}
bad "pages 3" "pages: 3 is not a power of two" pages 1,3
bad "pages x" "pages: 'x' is not a number" pages x
bad "drains foo" "drains: 'foo' is not write, uring, threads or pin" drains write,foo
bad "pages ," "pages: no item" pages ,

# 8: a run, where perf and perf_event_open are here (root or a low
# perf_event_paranoid): 2 runs per row, the second in the reverse order,
# and the pin rows' readers and main thread counted in every run of the
# JSON.
rows_of() { sed -n "s/^# \(.*\), run $1 of 2 .*/\1/p" err; }
if ! command -v perf >/dev/null; then
	skip "bench run: reader counts, run order" "no perf here"
elif ! perf stat -e task-clock -- true >/dev/null 2>&1; then
	skip "bench run: reader counts, run order" "perf_event_open refused here"
elif ! PEVT_PROGRESS=1 "$pevt" bench record calls 3000 pages 1 drains pin reps 2 \
	json r.json > out 2> err; then
	sed 's/^/# /' err | tail -n 20; nok "bench run: exit $?"
elif [ "$(rows_of 1)" != "$(rows_of 2 | tac)" ] || [ "$(rows_of 1 | wc -l)" -lt 4 ]; then
	sed 's/^/# /' err; nok "bench run: run 2 not in the reverse order of run 1"
else
	# the runs' objects (a row's own object starts {"recorder":)
	grep -o '{"exit":[^}]*}' r.json > runs
	pin=$(grep -o '"recorder":"pevt [a-z]* pin ' r.json | wc -l)
	counted=$(grep -c '"readers":[1-9][0-9]*,"timed_readers":[0-9]*,"reader_wakeups":[1-9][0-9]*,"reader_made_chunks":[0-9]' runs)
	any=$(grep -c '"readers"' runs)
	main=$(grep -c '"main_cpu_s":[0-9.]*,"main_switches":[1-9][0-9]*,"watch_takes":[0-9]' runs)
	wk=$(grep -o '"reader_wakeups":[0-9]*' runs | awk -F: '{ s += $2 } END { print s }')
	if [ "$pin" -ge 1 ] && [ "$counted" -eq $((2 * pin)) ] && [ "$any" -eq "$counted" ] &&
	   [ "$main" -eq "$counted" ]; then
		ok "bench run: run 2 reversed; $counted pin runs, $wk reader wakeups, main thread in $main"
	else
		sed 's/^/# /' r.json
		nok "bench run: $pin pin rows, $counted runs with reader counts, $any with any, $main with the main thread's"
	fi
fi

# 9: z yes: each -z run counts its COMPRESSED records, each -z row gives
# the KiB a record holds and the COMPRESSED bytes per sample kept (the
# run's compressed_records_bytes over kept, reps 1), pevt's over perf's;
# each pevt -z run has its compressing thread's CPU time (JSON and the
# main thread's table), and no run without -z has one; each pevt -z row
# its CPU over perf -z's (table and JSON, the rows' recorder_cpu_s).
if ! command -v perf >/dev/null; then
	skip "bench run -z: records, bytes per sample" "no perf here"
elif ! perf stat -e task-clock -- true >/dev/null 2>&1; then
	skip "bench run -z: records, bytes per sample" "perf_event_open refused here"
elif ! "$pevt" bench record calls 3000 pages 1 drains pin z yes json z.json > zout 2> err; then
	sed 's/^/# /' err | tail -n 20; nok "bench run -z: exit $?"
else
	# per -z row: kept, compressed_records_bytes, compressed_records,
	# compressed_bytes_per_sample, kib_per_compressed_record, and the ratio
	# to perf's (pevt rows)
	sed 's/{"recorder":/\n&/g' z.json | grep '"compressed":true' | awk '
		function num(k) {
			if (!match($0, "\"" k "\":[0-9.]+"))
				return -1
			return substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3) + 0
		}
		{
			kept = num("kept"); zb = num("compressed_records_bytes")
			nr = num("compressed_records"); per = num("compressed_bytes_per_sample")
			kib = num("kib_per_compressed_record"); vs = num("compressed_bytes_per_sample_vs_perf")
			pevt = index($0, "\"recorder\":\"pevt ") > 0
			cpu = num("recorder_cpu_s"); cz = num("cpu_vs_perf_z")
			if (!pevt)
				pcpu[num("pages")] = cpu
			p = pcpu[num("pages")]
			# recorder_cpu_s has 3 decimals: 0.0005 s either way
			d = cz * p - cpu
			good = kept > 0 && nr >= 1 && kib > 0 && per > 0 &&
			       (per - zb / kept) ^ 2 < 1e-4 && (!pevt || vs > 0) &&
			       (!pevt || (p > 0 && cz >= 0 && d * d <= (0.0006 + 0.0006 * cz) ^ 2))
			print (good ? "good" : "bad"), $0 > "/dev/stderr"
			n++; bad += !good
		}
		END { print n, bad }' > zchk 2> zrows
	read -r nz nbad < zchk
	# pevt's -z runs, those with the thread's CPU; runs with it and no -z
	sed 's/{"recorder":/\n&/g' z.json | grep '^{"recorder":"pevt ' > zpevt
	zr=$(grep '"compressed":true' zpevt | grep -o '{"exit":[^}]*}' | wc -l)
	zt=$(grep '"compressed":true' zpevt | grep -o '"z_thread_cpu_s":[0-9.]*' | wc -l)
	zn=$(grep -v '"compressed":true' zpevt | grep -c '"z_thread_cpu_s"')
	# the main thread's table: its -z rows end with a time, the others with -
	zcol=$(awk '/^main thread \(stage stats\)/ { f = /-z thread CPU s/; next }
		f && !NF { f = 0 }
		f { bad += / -z / ? $NF !~ /^[0-9.]+$/ : $NF != "-"; n++ }
		END { print (n >= 2 && !bad) ? "yes" : "no" }' zout)
	# the -z table: pevt's rows end with two ratios to perf -z, perf's with -
	zcol2=$(awk '/^-z row/ { f = / cpu vs perf  *cpu\/kept vs perf$/; next }
		f && !NF { f = 0 }
		f { bad += /^pevt / ? ($NF !~ /^[0-9.]+$/ || $(NF - 1) !~ /^[0-9.]+$/) : $NF != "-"; n++ }
		END { print (n >= 2 && !bad) ? "yes" : "no" }' zout)
	if [ "${nz:-0}" -ge 2 ] && [ "$nbad" -eq 0 ] && [ "$zr" -ge 1 ] && [ "$zt" -eq "$zr" ] &&
	   [ "$zn" -eq 0 ] && [ "$zcol" = yes ] && [ "$zcol2" = yes ]; then
		ok "bench run -z: $nz -z rows with records, KiB a record, bytes per sample; the -z thread's CPU in $zt of $zr pevt -z runs"
	else
		grep '^bad' zrows | cut -c1-600 | sed 's/^/# /'; cat zout | sed 's/^/# /'
		nok "bench run -z: $nz -z rows, $nbad without their counts; the -z thread's CPU in $zt of $zr pevt -z runs, in $zn without -z, in the table: $zcol; CPU vs perf -z in the table: $zcol2"
	fi
fi
# 10: workload cpu-clock (-a): each run counts the samples of the recorder
# itself (the workload's parent, as the workload tells), at most what it
# kept, some in all (-F 20000: the readers alone take ms), and the ratio
# table shows the own share of the pevt row and of perf's best mode.
if ! command -v perf >/dev/null; then
	skip "bench run cpu-clock: the recorder's own samples" "no perf here"
elif ! perf stat -a -e cpu-clock -- true >/dev/null 2>&1; then
	skip "bench run cpu-clock: the recorder's own samples" "perf_event_open -a refused here"
elif ! "$pevt" bench record workload cpu-clock calls 30000000 freq 20000 pages 1 drains pin \
	json c.json > cout 2> err; then
	sed 's/^/# /' err | tail -n 20; nok "bench run cpu-clock: exit $?"
else
	grep -o '{"exit":[^}]*}' c.json > cruns
	nr=$(wc -l < cruns)
	bad=$(awk '{ k = -1; o = -1
		if (match($0, /"kept":[0-9]+/)) k = substr($0, RSTART + 7, RLENGTH - 7) + 0
		if (match($0, /"own_samples":[0-9]+/)) o = substr($0, RSTART + 14, RLENGTH - 14) + 0
		if (o < 0 || o > k) n++ } END { print n + 0 }' cruns)
	own=$(grep -o '"own_samples":[0-9]*' cruns | awk -F: '{ s += $2 } END { print s + 0 }')
	# the workload names its parent, the recorder (a shell here)
	sh -c "\"$pevt\" bench record-loop spin 1000 loop.cpu; echo \$\$" > sh.pid
	read -r _ ppid < loop.cpu
	if [ "$nr" -ge 4 ] && [ "$bad" -eq 0 ] && [ "$own" -gt 0 ] &&
	   [ -n "$ppid" ] && [ "$ppid" = "$(cat sh.pid)" ] &&
	   grep -q "own % pevt/perf" cout && grep -q '"own_pct":' c.json; then
		ok "bench run cpu-clock: $nr runs, $own of their samples the recorders' own"
	else
		sed 's/^/# /' cout cruns
		nok "bench run cpu-clock: $nr runs, $bad without a sane own count, $own own samples, the workload's parent '$ppid' (the shell: $(cat sh.pid))"
	fi
fi
exit $failed
