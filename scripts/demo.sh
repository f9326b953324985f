#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build, boot each stock kernel in QEMU, load pevt.ko and run the
# A/B benchmarks there; print what they printed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
"$top/scripts/deps.sh"
rc=0
for k in ${PEVT_KERNELS:-6.1 6.12}; do
	VM_TIMEOUT=${VM_TIMEOUT:-600} "$top/scripts/vmtest.sh" --run \
		"pevt bench clock json /tmp/clock.json; pevt bench output json /tmp/output.json" "$k" >/dev/null 2>&1 || rc=1
	echo "=== kernel $k ($(sed -n 's/^# pevt-boot //p' "$top/build/vm/$k/results.txt" | tr -d '\r'))"
	grep -avE '^(ok |not ok |# pevt-)' "$top/build/vm/$k/results.txt" | tr -d '\r' || true
	[ -s "$top/build/vm/$k/kernel-problems.txt" ] && { echo "kernel problems:"; cat "$top/build/vm/$k/kernel-problems.txt"; }
done
exit $rc
