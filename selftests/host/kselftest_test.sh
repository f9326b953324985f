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

out=$(PATH=$top/build/bin:$PATH "$tmp/ksft/run_kselftest.sh" -t pevt:stat 2>&1)
if echo "$out" | grep -qx 'ok 1 selftests: pevt: stat'; then
	ok "kselftest's runner runs pevt:stat"
else
	echo "$out" | grep -E '^(not ok|# not ok|ok)' | sed 's/^/# /' | head -20
	nok "kselftest's runner runs pevt:stat"
fi
exit $failed
