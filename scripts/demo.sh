#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build, boot each stock kernel in QEMU, load pevt.ko and run the
# A/B benchmarks there (clock, ring-buffer output, rotation fairness,
# perf record vs pevt record); print
# their tables as each one is printed in the guest, keep their JSON under
# build/demo/<kernel>/ and plot the fairness figures
# (build/demo/fairness-<kernel>.svg).
#
# Progress (which kernel boots, which bench and scenario runs, elapsed time,
# an estimate of what is left) goes to stderr: every line on a terminal,
# one per step otherwise (PEVT_PROGRESS=0/1 overrides).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
"$top/scripts/deps.sh"
rc=0
# Files come back over the results port between "# pevt-file NAME" and
# "# pevt-file-end" lines; each bench is a step between "# pevt-run NAME"
# and "# pevt-exit NAME RC" lines, as the VM tests are.
put() { echo "echo '# pevt-file $1'; cat /tmp/$1; echo; echo '# pevt-file-end'"; }
step() { echo "echo '# pevt-run $1'; $2; echo \"# pevt-exit $1 \$?\""; }
show=${PEVT_PROGRESS:-$([ -t 2 ] && echo 1 || echo 0)}
# The guest's stderr is a serial tty: tell the benches whether we are on one.
cmd="export PEVT_PROGRESS=$show; $(step bench-clock "pevt bench clock json /tmp/clock.json")"
cmd+="; $(step bench-output "pevt bench output json /tmp/output.json")"
cmd+="; $(step bench-fairness "pevt bench fairness json /tmp/fairness.json data /tmp/fairness.dat")"
# The record table: perf record vs pevt record (small: 50000 calls, 3 drains,
# -z twins of the first, and -r 1 twins of every row: perf's best mode under
# TCG is --threads -r1, pevt's --pin-readers -r 1; Documentation/record.md).
cmd+="; $(step bench-record "pevt bench record calls 50000 drains pin,write,uring z yes rt yes json /tmp/record.json")"
# Last, a recording: its report (indented: "# " lines are progress) and
# its flame graph (build/demo/<kernel>/demo.svg).
# (The guest's files: busybox and the libraries under /lib, no /usr/lib.)
demo_rec="pevt record -q -g -e cpu-clock -F 999 -o /tmp/demo.data -- sh -c 'for i in 1 2 3; do ls -lR /lib /bin >/dev/null; head -c 30000000 /dev/zero | gzip >/dev/null; done' >/dev/null"
demo_rep="pevt report -i /tmp/demo.data --no-children --percent-limit 5 | sed 's/^/    /'"
demo_fg="pevt report -i /tmp/demo.data -g none --flamegraph /tmp/demo.svg >/dev/null"
cmd+="; $(step report "$demo_rec && $demo_rep && $demo_fg")"
cmd+="; $(put clock.json); $(put output.json); $(put fairness.json); $(put fairness.dat)"
cmd+="; $(put record.json); $(put demo.svg)"
export PEVT_STEPS="bench-clock bench-output bench-fairness bench-record report"
kernels=(${PEVT_KERNELS:-6.1 6.12})
t0=$(date +%s) n=0
awki=awk
awk -W interactive 'BEGIN {}' 2>/dev/null && awki="awk -W interactive"
for k in "${kernels[@]}"; do
	n=$((n + 1))
	res=$top/build/vm/$k/results.txt out=$top/build/demo/$k
	mkdir -p "$out" "$top/build/vm/$k"
	rm -f "$res"
	log "demo: kernel $k ($n of ${#kernels[@]}), $(dur $(( $(date +%s) - t0 ))) elapsed"
	# vmtest.sh logs its steps and, on a terminal, the guest's progress.
	VM_TIMEOUT=${VM_TIMEOUT:-900} PEVT_PROGRESS=$show \
		"$top/scripts/vmtest.sh" --run "$cmd" "$k" >/dev/null 2>"$out/vmtest.log" &
	vm=$!
	{ tail -n +1 -F --pid=$vm "$out/vmtest.log" || true; } >&2 2>/dev/null &
	logger=$!
	echo "=== kernel $k"
	# The tables as the guest prints them; "# ..." lines are the benches'
	# progress (one per step off a terminal), shown on stderr with the time.
	# (tail fails on the results file not there yet; mawk reads ahead
	# unless -W interactive.)
	{ tail -n +1 -F --pid=$vm "$res" 2>/dev/null || true; } | $awki -v dir="$out" '
		{ sub(/\r$/, "") }
		/^# pevt-file-end/ { f = ""; next }
		/^# pevt-file / { f = dir "/" $3; printf "" > f; next }
		f != "" { print > f; next }
		/^# pevt-boot / { print "    (booted " $3 ", " $4 ")"; fflush(); next }
		/^# pevt-/ { next }
		/^# / { printf "[%s] %s\n", strftime("%H:%M:%S"), substr($0, 3) > "/dev/stderr"; fflush("/dev/stderr"); next }
		!/^(ok |not ok )/ { print; fflush() }'
	wait $vm || rc=1
	wait $logger 2>/dev/null || true
	[ -s "$top/build/vm/$k/kernel-problems.txt" ] && { echo "kernel problems:"; cat "$top/build/vm/$k/kernel-problems.txt"; rc=1; }
	if [ -s "$out/fairness.dat" ]; then
		"$top/scripts/plot-fairness.sh" "$out/fairness.dat" "$top/build/demo/fairness-$k.svg" \
			"pevt bench fairness, kernel $k" || rc=1
	else
		echo "no fairness data from kernel $k"; rc=1
	fi
	echo "json: $(ls "$out"/*.json 2>/dev/null | tr '\n' ' ')"
	if grep -q '^<svg' "$out/demo.svg" 2>/dev/null; then
		echo "flame graph of the recording: $out/demo.svg"
	else
		echo "no flame graph from kernel $k"; rc=1
	fi
done
log "demo: done in $(dur $(( $(date +%s) - t0 )))"
exit $rc
