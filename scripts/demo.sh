#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build, boot each stock kernel in QEMU, load pevt.ko and run the
# A/B benchmarks there (clock, ring-buffer output, rotation fairness); print
# their tables, keep their JSON under build/demo/<kernel>/ and plot the
# fairness figures (build/demo/fairness-<kernel>.svg).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
"$top/scripts/deps.sh"
rc=0
# Files come back over the results port between "# pevt-file NAME" and
# "# pevt-file-end" lines.
put() { echo "echo '# pevt-file $1'; cat /tmp/$1; echo; echo '# pevt-file-end'"; }
cmd="pevt bench clock json /tmp/clock.json; pevt bench output json /tmp/output.json"
cmd+="; pevt bench fairness json /tmp/fairness.json data /tmp/fairness.dat"
cmd+="; $(put clock.json); $(put output.json); $(put fairness.json); $(put fairness.dat)"
for k in ${PEVT_KERNELS:-6.1 6.12}; do
	VM_TIMEOUT=${VM_TIMEOUT:-900} "$top/scripts/vmtest.sh" --run "$cmd" "$k" >/dev/null 2>&1 || rc=1
	res=$top/build/vm/$k/results.txt out=$top/build/demo/$k
	mkdir -p "$out"
	echo "=== kernel $k ($(sed -n 's/^# pevt-boot //p' "$res" | tr -d '\r'))"
	tr -d '\r' < "$res" | awk -v dir="$out" '
		/^# pevt-file-end/ { f = ""; next }
		/^# pevt-file / { f = dir "/" $3; printf "" > f; next }
		f != "" { print > f; next }
		!/^(ok |not ok |# pevt-)/ { print }'
	[ -s "$top/build/vm/$k/kernel-problems.txt" ] && { echo "kernel problems:"; cat "$top/build/vm/$k/kernel-problems.txt"; rc=1; }
	if [ -s "$out/fairness.dat" ]; then
		"$top/scripts/plot-fairness.sh" "$out/fairness.dat" "$top/build/demo/fairness-$k.svg" \
			"pevt bench fairness, kernel $k" || rc=1
	else
		echo "no fairness data from kernel $k"; rc=1
	fi
	echo "json: $(ls "$out"/*.json 2>/dev/null | tr '\n' ' ')"
done
exit $rc
