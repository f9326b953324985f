#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bash completion (scripts/pevt.bash-completion): commands, a command's
# options, event names after -e (in a comma list and a group), backends,
# drains, bench subcommands and their keywords.  TAP for scripts/check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$top/build/bin:$PATH
. "$top/selftests/host/tap.sh"
. "$top/scripts/pevt.bash-completion"

# complete WANT WORD...: the last WORD is completed; WANT must be among the answers.
complete_has() {
	local want=$1; shift
	COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
	_pevt
	if printf '%s\n' "${COMPREPLY[@]}" | grep -qx -- "$want"; then
		ok "'$*' offers $want"
	else
		echo "# got: ${COMPREPLY[*]}"
		nok "'$*' offers $want"
	fi
}

echo "TAP version 13"
echo "1..14"
complete_has stat pevt st
complete_has list pevt l
complete_has --repeat pevt stat --rep
complete_has --no-probe pevt list --no
complete_has task-clock pevt stat -e task-c
complete_has task-clock,cpu-migrations pevt stat -e task-clock,cpu-m
complete_has '{cs,page-faults' pevt stat --event '{cs,page-f'
complete_has pevt pevt stat -b pe
complete_has pin pevt record --drain p
complete_has fairness pevt bench fa
complete_has scenario pevt bench fairness sce
complete_has workload pevt bench record wor
complete_has index pevt data in
complete_has --slice-size pevt data index --sl
exit $failed
