#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `pevt record` in the guest, both backends, read back by the guest's
# Debian perf: perf script's sample count equals pevt's own count, no
# warning from perf script / report --stdio / report --stats / evlist -v /
# report --header-only, the features are there, and Weisbecker's round
# guarantee holds in file order.  Pipe mode, a tracepoint at period 1,
# kill -9 of a -a recording, and a full disk (a 256 KiB tmpfs); snapshots
# (--overwrite) appended to one pipe-mode stream on the pevt backend.
#
# Under TCG every perf run costs seconds (~20 s on the debug kernel), so
# by default each file gets the checks that tell most; PEVT_RECORD_FULL=1
# (on the kernel command line: VM_APPEND=PEVT_RECORD_FULL=1
# scripts/vmtest.sh ...) adds report --stdio / evlist -v, and pipe and
# tracepoint files on the pevt backend.
#
# On the debug kernel (KASAN, lockdep: a perf run takes about a minute
# there) each file is only read back with perf script, and pipe and
# tracepoint files are left to 6.1/6.12: the debug lane is there for the
# module's paths, which the recordings themselves exercise.
#
# Every drain (--drain=write|uring|threads|pin): a tracepoint at period 1 into
# 1-page buffers (the kernel refills each buffer while its earlier bytes
# are in flight: perf must read back exactly what pevt counted, rounds
# intact), kill -9 and a full disk.
#
# --backend pevt tracks with the module's own sideband and inherit: a
# workload whose child runs a second loop is recorded with both backends;
# the pevt file has no stock tracking event, samples of both processes,
# and perf report shows the same DSOs as for the stock file.  On a kernel
# without kprobes (the module refuses MMAP records) pevt record says so and
# falls back to a stock tracking event: nokprobe_test.sh checks that.
#
# The pevt backend cases SKIP without /dev/pevt.

n=0
fails=0
LIGHT=0
[ "${PEVT_KERNEL:-}" = debug ] && [ "${PEVT_RECORD_FULL:-0}" != 1 ] && LIGHT=1
W=/tmp/record_test
mkdir -p $W
cd $W || exit 1

T0=$(date +%s)
ok() { n=$((n + 1)); echo "ok $n $1 # $(( $(date +%s) - T0 ))s"; }
notok() { n=$((n + 1)); echo "not ok $n $1"; fails=$((fails + 1)); }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
log() { sed 's/^/# /' "$@"; }

BUSY="sh -c 'i=0; while [ \$i -lt 15000 ]; do i=\$((i+1)); done'"

# samples N from "[ pevt record: ... (N samples, M lost) ]"
summary() { sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) lost) ]$/\1/p' "$1" | tail -n1; }

# perf's stderr has nothing but its --header hint
quiet() { ! grep -v '^# To display the perf.data header info' "$1" | grep -q .; }
# ... and perf's own warnings about LOST records and LOST_SAMPLES
quiet_lost() {
	! grep -v -e '^# To display the perf.data header info' -e '^Warning:$' -e '^$' \
		-e '^Processed [0-9]* events and lost [0-9]* chunks!$' -e '^Check IO/CPU overload!$' \
		-e '^Processed [0-9]* samples and lost [0-9.]*%!$' "$1" |
		grep -q .
}

# Weisbecker: after round k ends, nothing older than round k-1's newest.
rounds_bad() {
	perf report -D --disable-order $1 2>/dev/null | awk '
	/: PERF_RECORD_FINISHED_ROUND/ {
		if (prev > flushed) flushed = prev; if (cur > prev) prev = cur; r++; next }
	/^[0-9]+ (0x|[0-9])/ && /: PERF_RECORD_/ {
		t = ($2 ~ /^0x/) ? $1 : $2; if (t == 0) next
		if (t + 0 < flushed + 0) bad++; if (t + 0 > cur + 0) cur = t }
	END { printf "%d %d\n", bad + 0, r + 0 }'
}

# seqs_each FILE: perf script -F trace:comm,trace lines of SWK runs of
# `pevt bench record-loop SWN`: every sequence number (getppid's first
# argument, NR 110, in hex) 0..SWN-1 exactly SWK times, each sample with
# its COMM (not ":PID"); the counts and the first misses on stdout.
seqs_each() {
	awk -v n=$SWN -v k=$SWK '
	function hex(s,   i, v) {
		v = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	$1 != "sh" && /NR 110 \(/ {
		s = $0; sub(/.*NR 110 \(/, "", s); sub(/,.*/, "", s); v = hex(s)
		if (v >= n) next
		c[v]++; kept++; if ($1 ~ /^:/) unnamed++ }
	END {
		for (i = 0; i < n; i++) if (c[i] != k && bad++ < 5) printf "# sequence number %d: %d times, not %d\n", i, c[i], k
		printf "# %d samples of the loops, %d without their COMM\n", kept, unnamed
		exit !(bad == 0 && kept == n * k && unnamed == 0) }' "$1"
}

# usr2_loops PID: once the loops' workload has begun (./started), SIGUSR2
# to pevt record PID every 0.5 s until it ends (./finished); then its exit
# status.  Not before ./started: pevt record may not have blocked it yet.
usr2_loops() {
	while [ ! -e started ] && kill -0 $1 2>/dev/null; do sleep 0.05; done
	while [ ! -e finished ] && kill -0 $1 2>/dev/null; do kill -USR2 $1; sleep 0.5; done
	wait $1
}

# check NAME INPUT SAMPLES [CMDS [FIELDS]]: perf reads INPUT ("-i f" or
# "-i - <f") cleanly: perf script -F FIELDS (default tid,time: no symbol
# lookups, which are slow under TCG), then each of CMDS
check_read() {
	name=$1 in=$2 want=$3 cmds=$4 fields=${5:-tid,time}
	eval perf script -F $fields $in >s.out 2>s.err
	got=$(wc -l <s.out)
	if [ "$got" = "$want" ] && quiet s.err; then
		ok "$name: perf script shows the $want samples, no warning"
	else
		notok "$name: perf script $got lines, pevt wrote $want samples"; log s.err
	fi
	[ -n "$cmds" ] || return 0
	IFS=,
	set -- $cmds
	unset IFS
	for c in "$@"; do
		if eval perf $c $in >r.out 2>r.err && quiet r.err; then
			ok "$name: perf $c"
		else
			notok "$name: perf $c"; log r.err
		fi
	done
}

check_header() {
	name=$1 f=$2
	perf report --header-only -i $f >h.out 2>h.err
	miss=
	for k in "hostname :" "os release :" "perf version :" "arch :" "nrcpus online :" \
		 "cpuid :" "total memory :" "cmdline :" "event : name =" "CPU_TOPOLOGY info" \
		 "time of first sample :" "clockid frequency:"; do
		grep -q "# $k" h.out || miss="$miss '$k'"
	done
	if [ -z "$miss" ] && quiet h.err; then
		ok "$name: perf report --header-only shows the features"
	else
		notok "$name: header missing$miss"; log h.err
	fi
	set -- $(rounds_bad "-i $f")
	if [ "$1" = 0 ] && [ "$2" -gt 1 ]; then
		ok "$name: $2 rounds, no record older than the round before last"
	else
		notok "$name: round guarantee: $1 violations in $2 rounds"
	fi
}

for b in stock pevt; do
	if [ "$b" = pevt ] && [ ! -c /dev/pevt ]; then
		skip "pevt backend" "no /dev/pevt"
		continue
	fi
	# A workload, task-clock, 2 vCPUs' buffers.
	eval pevt record --backend $b -e task-clock -F 500 -o $b.data -- $BUSY >w.out 2>w.err
	rc=$?
	s=$(summary w.err)
	if [ $rc = 0 ] && [ -n "$s" ] && [ "$s" -gt 0 ]; then
		ok "$b: record a workload ($s samples)"
		if [ "${PEVT_RECORD_FULL:-0}" = 1 ]; then
			check_read "$b workload" "-i $b.data" "$s" "report --stdio,report --stats,evlist -v"
		elif [ "$LIGHT" = 1 ]; then
			check_read "$b workload" "-i $b.data" "$s"
		else
			check_read "$b workload" "-i $b.data" "$s" "report --stats"
		fi
		[ "$LIGHT" = 1 ] || check_header "$b workload" $b.data
	else
		notok "$b: record a workload (rc $rc)"; log w.err
	fi

	if { [ $b = pevt ] || [ "$LIGHT" = 1 ]; } && [ "${PEVT_RECORD_FULL:-0}" != 1 ]; then
		continue
	fi

	# Pipe mode.
	eval pevt record --backend $b -e task-clock -F 500 -o - -- $BUSY >$b.pipe 2>w.err
	rc=$?
	s=$(summary w.err)
	if [ $rc = 0 ] && [ -n "$s" ] && [ "$s" -gt 0 ]; then
		ok "$b: pipe mode ($s samples)"
		check_read "$b pipe" "-i - <$b.pipe" "$s"
	else
		notok "$b: pipe mode (rc $rc)"; log w.err
	fi

	# A tracepoint, one sample per system call.
	pevt record --backend $b -e raw_syscalls:sys_enter -c 1 -o $b.tp -- \
		sh -c 'i=0; while [ $i -lt 100 ]; do i=$((i+1)); echo $i >/dev/null; done' >w.out 2>w.err
	rc=$?
	s=$(summary w.err)
	if [ $rc = 0 ] && [ -n "$s" ] && [ "$s" -ge 100 ]; then
		ok "$b: raw_syscalls:sys_enter -c 1 ($s samples)"
		check_read "$b tracepoint" "-i $b.tp" "$s" "" "trace:tid,event,trace"
		if grep -q 'raw_syscalls:sys_enter: *NR ' s.out; then
			ok "$b tracepoint: fields decoded"
		else
			notok "$b tracepoint: fields decoded"
		fi
	else
		notok "$b: raw_syscalls:sys_enter -c 1 (rc $rc, $s samples)"; log w.err
	fi
done

# --backend pevt: the module's sideband and inherit, same DSOs as stock.
TWO="sh -c 'i=0; while [ \$i -lt 6000 ]; do i=\$((i+1)); done; sh -c \"j=0; while [ \\\$j -lt 6000 ]; do j=\\\$((j+1)); done\" & wait'"
if [ -c /dev/pevt ]; then
	for b in stock pevt; do
		eval pevt record --backend $b -e task-clock -F 1000 -o sb-$b.data -- $TWO >w.out 2>w-$b.err
		rc=$?
		s=$(summary w-$b.err)
		got=$(perf script -F pid -i sb-$b.data 2>s.err | sort -u | wc -l)
		if [ $rc = 0 ] && [ -n "$s" ] && [ "$s" -gt 0 ] && [ "$got" -ge 2 ] && quiet s.err; then
			ok "$b sideband: $s samples in $got processes (inherit), no warning"
		else
			notok "$b sideband: rc $rc, $s samples, $got processes"; log w-$b.err s.err
		fi
		perf report --stdio -q --sort dso -i sb-$b.data 2>r-$b.err |
			awk 'NF >= 2 { sub("%", "", $1); print $1, $2 }' >dso-$b
	done
	# Every DSO with >= 5% of one file's samples is in the other file.
	same_dsos() {
		awk 'NR == FNR { have[$2] = 1; next } $1 + 0 >= 5 && !($2 in have) { bad = 1 }
		     END { exit bad }' "$1" "$2"
	}
	if [ -s dso-pevt ] && same_dsos dso-stock dso-pevt && same_dsos dso-pevt dso-stock &&
	   quiet r-pevt.err; then
		ok "pevt sideband: perf report shows the DSOs of the stock file: $(awk '{ printf "%s ", $2 }' dso-pevt)"
	else
		notok "pevt sideband: DSOs differ"; log dso-stock dso-pevt r-pevt.err
	fi
	nodummy=1
	perf evlist -i sb-pevt.data 2>/dev/null | grep -q dummy && nodummy=0
	# Every lane's kernel has kprobes; nokprobe_test.sh forces the fallback.
	if grep -q 'cannot write MMAP records' w-pevt.err; then
		notok "pevt sideband: fell back to a stock tracking event on ${PEVT_KERNEL:-?}"; log w-pevt.err
	elif [ $nodummy = 1 ]; then
		ok "pevt sideband: COMM/MMAP2/FORK/EXIT from the module, no stock tracking event"
	else
		notok "pevt sideband: a stock tracking event without a message"; log w-pevt.err
	fi
else
	skip "pevt sideband" "no /dev/pevt"
fi

# --switch-output (streamed, no --overwrite) on the pevt backend: SWK loops
# of SWN getppid(i) calls (pevt bench record-loop), raw_syscalls:sys_enter
# -c 1, split on SIGUSR2 every 0.5 s.  Each sw.data.<timestamp> file is
# read by perf script with as many samples as its Dump line says and no
# warning (perf report --stdio too, on a file with samples, not on the
# debug kernel); over all the files every sequence number i < SWN comes
# exactly SWK times (as in selftests/host/switch_output_test.c: a record
# lost or written twice at a switch shows), under the loop's name.
SWN=2000 SWK=4
# The same with -z: each file a zstd-compressed perf.data of its own.
for zo in "" -z; do
	zl=${zo:+ $zo}
	if [ -c /dev/pevt ]; then
		rm -f sw.data sw.data.* started finished
		pevt record --backend pevt $zo -e raw_syscalls:sys_enter -c 1 -m 256 --switch-output -o sw.data -- \
			sh -c ": > started; for k in \$(seq $SWK); do pevt bench record-loop $SWN /dev/null; sleep 0.3; done; : > finished" \
			>w.out 2>w.err &
		usr2_loops $!
		rc=$?
		set -- $(sed -n 's/.*Captured and wrote .*(\([0-9]*\) samples, \([0-9]*\) lost) in \([0-9]*\) files* ]$/\1 \2 \3/p' w.err)
		cap=${1:--1} lost=${2:--1} nfiles=${3:-0}
		files=0 full=0 dumped=0 shown=0 badf=
		: >seqs
		for f in sw.data.*; do
			[ -e "$f" ] || break
			files=$((files + 1))
			want=$(grep -F "[ pevt record: Dump $f (" w.err | sed -n 's/.*(\([0-9]*\) samples, [0-9]* lost) ]$/\1/p')
			perf script -F trace:comm,trace -i $f >s.out 2>s.err
			got=$(wc -l <s.out)
			if [ -z "$want" ] || [ "$got" != "$want" ] || ! quiet s.err; then
				badf="$badf $f(dump ${want:-none}, perf script $got)"; log s.err
			fi
			dumped=$((dumped + ${want:-0})) shown=$((shown + got))
			cat s.out >>seqs
			[ "${want:-0}" -gt 0 ] || continue
			full=$((full + 1))
			[ "$LIGHT" = 1 ] && continue
			if ! perf report --stdio --sort comm -i $f >r.out 2>r.err || ! quiet r.err; then
				badf="$badf $f(perf report)"; log r.err
			fi
			if [ -n "$zo" ] && ! perf report --header-only -i $f 2>/dev/null | grep -q '# compressed : Zstd'; then
				badf="$badf $f(not compressed)"
			fi
		done
		if [ $rc = 0 ] && [ "$files" -ge 3 ] && [ "$full" -ge 2 ] && [ "$files" = "$nfiles" ] &&
		   [ ! -e sw.data ] && [ -z "$badf" ] && [ "$dumped" = "$cap" ] && [ "$lost" = 0 ]; then
			ok "pevt$zl --switch-output: $files files ($full with samples), perf reads each, $dumped samples as the Dump lines say"
		else
			notok "pevt$zl --switch-output: rc $rc, $files files ($nfiles said, $full with samples), dumped $dumped of $cap, perf script $shown, lost $lost:$badf"
			log w.err
		fi
		# sequence numbers: the first argument of getppid (NR 110), in hex
		if seqs_each seqs >seq.log; then
			ok "pevt$zl --switch-output: every sequence number $SWK times over the files, none lost or twice at a switch"
		else
			notok "pevt$zl --switch-output: sequence numbers"; cat seq.log
		fi
		rm -f sw.data.* seqs
	else
		skip "pevt$zl --switch-output" "no /dev/pevt"
	fi
done

# --overwrite --switch-output-event on the pevt backend (perf's flight
# recorder): 3 renice calls 0.3 s apart -> 4 snapshots; each of the first
# 3 holds its setpriority() (NR 141), the last none (perf 6.1 writes the
# same on the host with ioprio_set: selftests/host/snapshot_test.c,
# event; the debug kernel has no CONFIG_BLOCK, so no ioprio_set, while
# setpriority is in every kernel).  With -z each file is compressed on
# its own (perf 6.1's later files do not decompress).
for zo in "" -z; do
	zl=${zo:+ $zo}
	if [ -c /dev/pevt ] && [ -e /sys/kernel/tracing/events/syscalls/sys_enter_setpriority ]; then
		rm -f ev.data ev.data.*
		pevt record --backend pevt --overwrite $zo -e raw_syscalls:sys_enter -c 1 \
			--switch-output-event syscalls:sys_enter_setpriority -o ev.data -- \
			sh -c 'for i in 1 2 3; do sleep 0.3; renice -n 1 -p $$ >/dev/null; done; sleep 0.3' >w.out 2>w.err
		rc=$? hits= badf=
		for f in ev.data.*; do
			[ -e "$f" ] || break
			want=$(grep -F "[ pevt record: Dump $f (" w.err | sed -n 's/.*(\([0-9]*\) samples.*/\1/p')
			perf script -F trace:trace -i $f >s.out 2>s.err
			got=$(wc -l <s.out)
			{ [ -n "$want" ] && [ "$got" = "$want" ] && quiet_lost s.err; } ||
				{ badf="$badf $f(dump ${want:-none}, perf script $got)"; log s.err; }
			if [ -n "$zo" ] && ! perf report --header-only -i $f 2>/dev/null | grep -q '# compressed : Zstd'; then
				badf="$badf $f(not compressed)"
			fi
			hits="$hits $(grep -c 'NR 141 (' s.out)"
		done
		if [ $rc = 0 ] && [ "$hits" = " 1 1 1 0" ] && [ -z "$badf" ] && [ ! -e ev.data ]; then
			ok "pevt$zl --overwrite --switch-output-event: 4 snapshots, setpriority in each of the first 3, perf reads each"
		else
			notok "pevt$zl --overwrite --switch-output-event: rc $rc, setpriority per file:${hits:- none}$badf"
			log w.err
		fi
		rm -f ev.data.*
	else
		skip "pevt$zl --overwrite --switch-output-event" "no /dev/pevt or no syscalls:sys_enter_setpriority"
	fi
done

# --overwrite -o - on the pevt backend: every snapshot (SIGUSR2 every
# 0.5 s over SWK x SWN getppid(i), and the end) appended to one pipe-mode
# stream.  perf script reads the stream with as many samples as the
# Snapshot lines add up to and no warning, each snapshot's samples in a
# round of their own (the rounds' sample counts are the Snapshot lines',
# in order), no round-guarantee violation across snapshots, and -- the
# pevt backend switches buffers
# instead of pausing them -- every sequence number exactly SWK times: no
# record lost or written twice between snapshots; pevt report -i - counts
# the same samples (its reader skips a pipe's TRACING_DATA payload since
# 2026-11-29).  A pipe-mode stream saved to a file reads with -i FILE too.
if [ -c /dev/pevt ]; then
	rm -f ow.pipe started finished
	pevt record --backend pevt --overwrite --switch-output -e raw_syscalls:sys_enter -c 1 -m 512 -o - -- \
		sh -c ": > started; for k in \$(seq $SWK); do pevt bench record-loop $SWN /dev/null; sleep 0.3; done; : > finished" \
		>ow.pipe 2>w.err &
	usr2_loops $!
	rc=$?
	sed -n 's/^\[ pevt record: Snapshot [0-9]* to stdout (\([0-9]*\) samples.*/\1/p' w.err >snaps
	nsnap=$(wc -l <snaps)
	sum=$(awk '{ s += $1 } END { print s + 0 }' snaps)
	cap=$(sed -n 's/.*Captured and wrote .* stdout (\([0-9]*\) samples in \([0-9]*\) snapshots*) ]$/\1 \2/p' w.err)
	perf script -F trace:comm,trace -i - <ow.pipe >seqs 2>s.err
	got=$(wc -l <seqs)
	# "# Samples: 8K" like perf; at -c 1 the event count is the sample count
	pgot=$(pevt report --stdio -i - <ow.pipe 2>p.err | sed -n 's/^# Event count (approx.): \([0-9]*\)$/\1/p')
	if [ $rc = 0 ] && [ "$nsnap" -ge 3 ] && [ "$cap" = "$sum $nsnap" ] && [ "$got" = "$sum" ] &&
	   [ "$pgot" = "$sum" ] && quiet s.err && ! grep -q 'had wrapped' w.err; then
		ok "pevt --overwrite -o -: $nsnap snapshots in one stream, perf script and pevt report show their $sum samples, no warning"
	else
		notok "pevt --overwrite -o -: rc $rc, $nsnap snapshots, summary '$cap', Snapshot lines $sum, perf script $got, pevt report ${pgot:-none}"
		log w.err s.err p.err
	fi
	# each snapshot's samples in a round of their own, in order
	perf report -D --disable-order -i - <ow.pipe 2>/dev/null | awk '
		/^[ .]/ { next }
		/: PERF_RECORD_FINISHED_ROUND/ { if (c) print c; c = 0; next }
		/: PERF_RECORD_SAMPLE/ { c++ }
		END { if (c) print "tail " c }' >rsnaps
	# a snapshot of 0 samples (the last one, when the workload's last
	# records were already taken) has no samples to put in a round
	grep -vx 0 snaps >snaps.nz || :
	set -- $(rounds_bad "-i ow.pipe")
	if cmp -s snaps.nz rsnaps && [ "$1" = 0 ] && [ "$2" -gt "$nsnap" ]; then
		ok "pevt --overwrite -o -: a round per snapshot, $2 rounds, no record older than the round before last"
	else
		notok "pevt --overwrite -o -: rounds: $1 violations in $2 rounds; samples per round vs Snapshot lines:"
		paste rsnaps snaps.nz | log
	fi
	if seqs_each seqs >seq.log; then
		ok "pevt --overwrite -o -: every sequence number $SWK times in the stream, none lost or twice between snapshots"
	else
		notok "pevt --overwrite -o -: sequence numbers"; cat seq.log
	fi
	rm -f ow.pipe seqs
else
	skip "pevt --overwrite -o -" "no /dev/pevt"
fi

# -z on the pevt backend (stock if there is no /dev/pevt).
b=stock
[ -c /dev/pevt ] && b=pevt
eval pevt record --backend $b -z -e task-clock -F 1000 -o z.data -- $BUSY >w.out 2>w.err
rc=$?
s=$(summary w.err)
got=$(perf script -F tid,time -i z.data 2>s.err | wc -l)
if [ $rc = 0 ] && [ -n "$s" ] && [ "$got" = "$s" ] && quiet s.err &&
   { [ "$LIGHT" = 1 ] || perf report --header-only -i z.data 2>/dev/null | grep -q '# compressed : Zstd'; }; then
	ok "$b -z: perf script shows the $s samples, no warning"
else
	notok "$b -z: rc $rc, pevt $s samples, perf script $got"; log w.err s.err
fi

# Every drain: small buffers under back-pressure (stock backend; write,
# uring and pin on /dev/pevt's buffers too). pin: --pin-readers (per-CPU
# reader threads copy the rings out; the main thread writes).
for d in write uring threads pin; do
	for b in stock pevt; do
		[ $b = pevt ] && { [ $d = threads ] || [ ! -c /dev/pevt ]; } && continue
		dopt=--drain=$d; [ $d = pin ] && dopt=--pin-readers
		pevt record $dopt --backend $b -e raw_syscalls:sys_enter -c 1 -m 1 -o d.data -- \
			pevt bench record-loop 20000 /dev/null >w.out 2>w.err
		rc=$?
		s=$(summary w.err)
		l=$(sed -n 's/.*samples, \([0-9]*\) lost) ]$/\1/p' w.err | tail -n1)
		got=$(perf script -F tid,time -i d.data 2>s.err | wc -l)
		# more than half a ring (one wakeup's worth): the 6.1 lane
		# kept 73 of 20000 once (host with two other jobs), where the
		# check was "more than 100"; the point is perf's count = pevt's
		if [ $rc = 0 ] && [ -n "$s" ] && [ "$s" -gt 20 ] && [ "$got" = "$s" ] && quiet_lost s.err; then
			ok "--drain=$d $b -m 1: perf script shows the $s samples ($l lost), no other warning; $(sed -n 's/.*pevt record: drain \(.*\) ]$/\1/p' w.err)"
		else
			notok "--drain=$d $b -m 1: rc $rc, pevt $s samples, perf script $got"; log w.err s.err
		fi
		[ "$LIGHT" = 1 ] && continue
		set -- $(rounds_bad "-i d.data")
		if [ "$1" = 0 ] && [ "$2" -gt 1 ]; then
			ok "--drain=$d $b -m 1: $2 rounds, no record older than the round before last"
		else
			notok "--drain=$d $b -m 1: round guarantee: $1 violations in $2 rounds"
		fi
	done
done

# Readers never fault on their ring.  The stock kernels here insert a
# perf ring page at its first touch, with the process's mmap_lock held,
# so the library faults every page in when it maps a ring
# (user/lib/mmap.c prefault()).  Each --drain=pin reader's page faults
# (PEVT_STAGE_STATS=1) must be at most 4, plus 66 for each staging chunk
# it had to make itself (said on its line).  Without the prefault the
# stock backend's reader of a 16-page ring took 17-34 a run on 6.1
# (record.md "Readers that never fault on their ring").
for b in stock pevt; do
	if [ $b = pevt ] && [ ! -c /dev/pevt ]; then
		skip "--backend pevt: readers take no page fault" "no /dev/pevt"
		continue
	fi
	PEVT_STAGE_STATS=1 pevt record --backend $b --drain=pin -e raw_syscalls:sys_enter -c 1 -m 16 \
		-o pf.data -- pevt bench record-loop 20000 /dev/null >/dev/null 2>w.err
	rc=$?
	sed -n 's/.*stage cpu \([0-9]*\): [0-9]* chunks, \([0-9]*\) made by the filler, reader page faults \([0-9]*\).*]$/\1 \2 \3/p' \
		w.err >pf.txt
	lines=$(wc -l <pf.txt)
	bad=$(awk '$3 > 4 + 66 * $2 { printf "cpu %s: %s faults, %s chunks made; ", $1, $3, $2 }' pf.txt)
	all=$(awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $3 }' pf.txt)
	if [ $rc = 0 ] && [ "$lines" -gt 0 ] && [ -z "$bad" ]; then
		ok "--backend $b: readers take no page fault on their ring (faults per reader: $all)"
	else
		notok "--backend $b: readers fault: rc $rc, $lines stage lines, $bad"; log w.err
	fi
done

# The defaults: no --backend, no --drain.  Where /dev/pevt opens, the
# pevt backend (its events are anon_inode:[pevt] fds of pevt record,
# stock ones anon_inode:[perf_event]; the workload lists them from /proc) with --drain=pin (a reader thread per CPU
# buffer, SCHED_FIFO 1 as root: field 41 of their stat is 1, their
# policy); an event the module cannot sample (page-faults) puts the whole
# recording on the stock backend, with a line that says so.
LISTFD='for f in /proc/$PPID/fd/*; do readlink $f; done; for t in /proc/$PPID/task/*; do cut -d" " -f41 $t/stat; done'
pevt record -e cpu-clock -F 1000 -o def.data -- sh -c "$LISTFD" >fds.txt 2>w.err
rc=$?
pv=$(grep -c '^anon_inode:\[pevt\]$' fds.txt); an=$(grep -c 'perf_event' fds.txt); fifo=$(grep -c '^1$' fds.txt)
got=$(perf script -F tid,time -i def.data 2>s.err | wc -l)
s=$(summary w.err)
if [ ! -c /dev/pevt ]; then
	skip "defaults: the pevt backend" "no /dev/pevt"
elif [ $rc = 0 ] && [ "$pv" -gt 0 ] && [ "$got" = "$s" ] && quiet s.err &&
     { [ "$an" = 0 ] || grep -q 'cannot write MMAP records' w.err; }; then
	# (no kprobes, the debug kernel: a stock tracking event beside, said so)
	ok "defaults: the pevt backend ($pv pevt fds, no perf_event one), $s samples read by perf"
else
	notok "defaults: rc $rc, $pv pevt fds, $an perf_event fds, pevt $s samples, perf script $got"
	log w.err s.err fds.txt
fi
# one SCHED_FIFO thread per online CPU (the readers), none else
ncpu=$(grep -c '^processor' /proc/cpuinfo)
if [ $rc = 0 ] && [ "$fifo" = "$ncpu" ] && ! grep -q 'readers' w.err; then
	ok "defaults: --drain=pin, $fifo readers SCHED_FIFO 1 (one per CPU), no readers line"
else
	notok "defaults: $fifo SCHED_FIFO threads for $ncpu CPUs (want one reader each), rc $rc"
	log w.err fds.txt
fi
pevt record -e page-faults -c 1 -o fb.data -- sh -c "$LISTFD" >fds.txt 2>w.err
rc=$?
an=$(grep -c 'perf_event' fds.txt); pv=$(grep -c '^anon_inode:\[pevt\]$' fds.txt)
got=$(perf script -F tid,time -i fb.data 2>s.err | wc -l)
s=$(summary w.err)
if [ ! -c /dev/pevt ]; then
	skip "defaults: stock fallback" "no /dev/pevt"
elif [ $rc = 0 ] && grep -q "/dev/pevt cannot open event 'page-faults': .*recording with the stock backend" w.err &&
   [ "$pv" = 0 ] && [ "$an" -gt 0 ] && [ -n "$s" ] && [ "$s" -gt 0 ] && [ "$got" = "$s" ] && quiet s.err; then
	ok "defaults: -e page-faults on the stock backend, said so; $s samples read by perf"
else
	notok "defaults: page-faults: rc $rc, $pv pevt fds, $an perf_event fds, pevt $s samples, perf script $got"
	log w.err s.err fds.txt
fi

# -a: the busy loop runs on the other vCPU meanwhile.
eval "$BUSY" &
busy=$!

# --backend stock -a: COMM/MMAP2/FORK/EXIT from a dummy tracking event in
# rings of its own (2 rings a CPU, counted by the workload in its
# parent's maps; a reader each), the sampling event with no sideband: its
# rings are written from interrupt context only, and the kernel's wakeup
# point cannot get ahead of head there (record.md "Sideband in rings of
# its own").  The file is what it was: one attr, with the tracking bits,
# no IDENTIFIER.  The workload's exec (of sh, by pevt record's child) still arrives.
PEVT_STAGE_STATS=1 pevt record --backend stock -a -e cpu-clock -F 1000 -o sb.data \
	-- sh -c 'grep -c "perf_event\]" /proc/$PPID/maps; sleep 0.3; exec true' >sb.out 2>w.err
rc=$?
s=$(summary w.err)
rings=$(head -n1 sb.out)
ncpu=$(grep -c '^processor' /proc/cpuinfo)
perf evlist -v -i sb.data >ev.out 2>ev.err
tr=$(grep -c 'stage cpu [0-9]* tracking:' w.err)
ex=$(perf script --show-task-events -i sb.data 2>/dev/null | grep -c 'PERF_RECORD_COMM exec: sh:')
if [ $rc = 0 ] && [ "$rings" = $((2 * ncpu)) ] && [ "$tr" = "$ncpu" ] &&
   [ "$(wc -l <ev.out)" = 1 ] && grep -q '^cpu-clock:.* mmap2: 1' ev.out &&
   ! grep -q IDENTIFIER ev.out && [ "$ex" -gt 0 ] && quiet ev.err; then
	ok "--backend stock -a: $rings rings, the sideband's apart ($tr tracking readers), the exec's COMM"
else
	notok "--backend stock -a: sideband: rc $rc, $rings rings, $tr tracking readers, $ex exec COMMs"
	log w.err ev.out ev.err
fi
check_read "--backend stock -a, sideband apart" "-i sb.data" "$s" "report --stdio,report --stats"

# -a samples the recorder too: its file names every thread the recorder
# has while the workload runs (readers, the -z compressing thread), as
# perf's does.  Until 2026-12-07 the readers and the compressing thread
# started after the synthesized state: perf report said ":TID" for them.
for b in pevt stock; do
	if [ $b = pevt ] && [ ! -e /dev/pevt ]; then
		skip "-a: the recorder's threads named, --backend pevt" "no /dev/pevt"
		continue
	fi
	pevt record --backend $b -a -z -e cpu-clock -F 1000 -o tn.data \
		-- sh -c 'ls /proc/$PPID/task' >tn.out 2>w.err
	rc=$?
	perf script --show-task-events -i tn.data >tn.script 2>tn.err
	tids=0 named=0
	for t in $(cat tn.out); do
		tids=$((tids + 1))
		grep -q "PERF_RECORD_COMM: .*/$t\$" tn.script && named=$((named + 1))
	done
	if [ $rc = 0 ] && [ $tids -gt $ncpu ] && [ $named = $tids ] && quiet tn.err; then
		ok "-a --backend $b -z: the recorder's $tids threads named in the file"
	else
		notok "-a --backend $b -z: rc $rc, $named of the recorder's $tids threads named"
		log w.err tn.out tn.err
	fi
done

# No --backend: the pevt backend where /dev/pevt is there.
for d in write uring threads pin; do
# kill -9: readable up to the last complete round.
rm -f k.data
pevt record --drain=$d -a -e cpu-clock -F 1000 -o k.data >/dev/null 2>&1 &
p=$!
# Past the synthesized state (slow under TCG) and a few rounds.
i=0
while [ $i -lt 60 ] && [ "$( { wc -c <k.data; } 2>/dev/null || echo 0)" -lt 131072 ]; do
	sleep 0.5; i=$((i + 1))
done
kill -KILL $p
wait $p
got=$(perf script -F tid,time -i k.data 2>s.err | wc -l)
if [ "$got" -gt 0 ] && quiet s.err; then
	ok "--drain=$d kill -9: $got samples readable, no warning"
else
	notok "--drain=$d kill -9: $got samples"; log s.err
fi

# A full disk.
mkdir -p full
if mount -t tmpfs -o size=256k full full; then
	pevt record --drain=$d -a -e cpu-clock -F 4000 -o full/f.data >w.out 2>w.err &
	p=$!
	i=0
	while kill -0 $p 2>/dev/null && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
	kill -INT $p 2>/dev/null
	wait $p
	rc=$?
	got=$(perf script -F tid,time -i full/f.data 2>s.err | wc -l)
	if [ $rc != 0 ] && grep -q 'full/f.data' w.err && grep -q 'No space left' w.err &&
	   [ "$got" -gt 0 ] && quiet s.err; then
		ok "--drain=$d disk full: reported with the path, $got samples readable"
	else
		notok "--drain=$d disk full: rc $rc, $got samples"; log w.err s.err
	fi
	umount full
else
	skip "--drain=$d disk full" "cannot mount a tmpfs"
fi
done
kill $busy 2>/dev/null
wait $busy 2>/dev/null

cd /
rm -rf $W
echo "1..$n"
[ $fails = 0 ]
