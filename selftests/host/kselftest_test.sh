#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/ follows kselftest's conventions: `make -C selftests
# kselftest_install` (lib.mk's install + the kernel's run_kselftest.sh and
# runner) gives a tree whose list names every VM test as pevt:NAME, and
# kselftest's runner runs one of them here (stat: stock perf_event_open on
# the host; its /dev/pevt cases SKIP without the module).  TAP for check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

echo "TAP version 13"
echo "1..3"
if make -s -C "$top/selftests" kselftest_install KSFT_INSTALL_PATH="$tmp/ksft" > "$tmp/log" 2>&1 &&
   [ -x "$tmp/ksft/run_kselftest.sh" ] && [ -f "$tmp/ksft/kselftest/runner.sh" ] &&
   [ -f "$tmp/ksft/pevt/settings" ]; then
	ok "make -C selftests kselftest_install"
else
	sed 's/^/# /' "$tmp/log" | tail -20; nok "make -C selftests kselftest_install"; exit 1
fi

want=$( { for f in "$top"/selftests/vm/*_test.c; do f=${f##*/}; echo "pevt:${f%_test.c}"; done
	  for f in "$top"/selftests/vm/*_test.sh; do [ -e "$f" ] && echo "pevt:${f##*/}"; done; } | sort)
got=$("$tmp/ksft/run_kselftest.sh" --list | sort)
if [ "$want" = "$got" ]; then
	ok "run_kselftest.sh --list names every VM test ($(echo "$got" | wc -l))"
else
	diff <(echo "$want") <(echo "$got") | sed 's/^/# /'; nok "run_kselftest.sh --list names every VM test"
fi

# The runner's convention, not stat's timings (the VM suite judges those):
# the binary ran under run_kselftest.sh to its totals, its TAP nested
# ("# " prefixed) and one result line for the test.
out=$(PATH=$top/build/bin:$PATH "$tmp/ksft/run_kselftest.sh" -t pevt:stat 2>&1)
echo "$out" | grep -E '^# not ok' | sed 's/^/# (stat on this host) /'
if echo "$out" | grep -qE '^# # Totals: pass:[0-9]+ fail:[0-9]+' &&
   echo "$out" | grep -qE '^(ok|not ok) 1 selftests: pevt: stat'; then
	ok "kselftest's runner runs pevt:stat to its totals"
else
	echo "$out" | tail -20 | sed 's/^/# /'
	nok "kselftest's runner runs pevt:stat to its totals"
fi
exit $failed
