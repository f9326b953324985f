#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pevt's paths for a kernel without kprobes, on kernels that have them.
#
# Three of pevt's hooks are kprobes (kmod/sideband.c, kmod/context.c):
# MMAP records from perf_event_mmap(), a task's exit work from
# perf_event_exit_task(), the task switch-in from finish_task_switch().
# Where a kprobe cannot be placed the module falls back: attr.mmap* is
# EOPNOTSUPP (and `pevt record --backend pevt` takes COMM/MMAP2/FORK/EXIT
# from a stock tracking event), the exit work runs at sched_process_exit,
# the switch-in at sched_switch.  All three kernels of `make check` have
# kprobes (the debug kernel too, so that its KASAN/lockdep/kmemleak watch
# the paths Debian's kernels run), so the fallbacks are forced here with
# the module parameters that select them:
#
#   insmod pevt.ko mmap_records=N exit_early=N switch_in_late=N
#
# and checked: the parameters read N, pevt record says it falls back and
# writes a file whose processes and DSOs are the stock recording's, and
# inherited counts (children ending at sched_process_exit) match stock's.
# The module is reloaded with its defaults at the end, which must then read
# Y: a kernel of the lanes without kprobes fails here.

n=0
fails=0
W=/tmp/nokprobe_test
mkdir -p $W
cd $W || exit 1

T0=$(date +%s)
ok() { n=$((n + 1)); echo "ok $n $1 # $(( $(date +%s) - T0 ))s"; }
notok() { n=$((n + 1)); echo "not ok $n $1"; fails=$((fails + 1)); }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
log() { sed 's/^/# /' "$@"; }
summary() { sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) lost) ]$/\1/p' "$1" | tail -n1; }
quiet() { ! grep -v '^# To display the perf.data header info' "$1" | grep -q .; }

P=/sys/module/pevt/parameters
KO=${PEVT_KO:-/pevt.ko}
PARAMS="mmap_records exit_early switch_in_late"
reload() { rmmod pevt 2>/dev/null; insmod $KO "$@" 2>reload.err; }
params() { for p in $PARAMS; do printf '%s=%s ' $p "$(cat $P/$p 2>/dev/null)"; done; }

finish() {
	cd /
	rm -rf $W
	echo "1..$n"
	[ $fails = 0 ]
	exit
}

if [ ! -e $KO ] || ! lsmod | grep -q '^pevt '; then
	skip "no-kprobe fallbacks" "no pevt module ($KO)"
	finish
fi

if reload mmap_records=N exit_early=N switch_in_late=N && [ -c /dev/pevt ]; then
	ok "reloaded with mmap_records=N exit_early=N switch_in_late=N"
else
	notok "reload with the fallbacks"; log reload.err
	reload
	finish
fi
got=$(params)
if [ "$got" = "mmap_records=N exit_early=N switch_in_late=N " ]; then
	ok "parameters read N: $got"
else
	notok "parameters: $got"
fi

# A workload whose child runs a second loop, recorded by both backends.
TWO="sh -c 'i=0; while [ \$i -lt 6000 ]; do i=\$((i+1)); done; sh -c \"j=0; while [ \\\$j -lt 6000 ]; do j=\\\$((j+1)); done\" & wait'"
for b in stock pevt; do
	eval pevt record --backend $b -e task-clock -F 1000 -o $b.data -- $TWO >w.out 2>w-$b.err
	rc=$?
	s=$(summary w-$b.err)
	got=$(perf script -F pid -i $b.data 2>s.err | sort -u | wc -l)
	if [ $rc = 0 ] && [ -n "$s" ] && [ "$s" -gt 0 ] && [ "$got" -ge 2 ] && quiet s.err; then
		ok "$b: $s samples in $got processes, perf script silent"
	else
		notok "$b: rc $rc, $s samples, $got processes"; log w-$b.err s.err
	fi
	perf report --stdio -q --sort dso -i $b.data 2>r-$b.err |
		awk 'NF >= 2 { sub("%", "", $1); print $1, $2 }' >dso-$b
done
if grep -q 'cannot write MMAP records' w-pevt.err &&
   perf evlist -i pevt.data 2>/dev/null | grep -q dummy; then
	ok "pevt backend: MMAP refused, said so, stock tracking event in the file"
else
	notok "pevt backend: no fallback to a stock tracking event"; log w-pevt.err
fi
same_dsos() {
	awk 'NR == FNR { have[$2] = 1; next } $1 + 0 >= 5 && !($2 in have) { bad = 1 }
	     END { exit bad }' "$1" "$2"
}
if [ -s dso-pevt ] && same_dsos dso-stock dso-pevt && same_dsos dso-pevt dso-stock &&
   quiet r-pevt.err; then
	ok "pevt backend: perf report shows the stock file's DSOs: $(awk '{ printf "%s ", $2 }' dso-pevt)"
else
	notok "pevt backend: DSOs differ"; log dso-stock dso-pevt r-pevt.err
fi

# Inherited counts with the exit work at sched_process_exit: a shell
# pipeline's system calls (dd's 1-byte reads and writes dominate: a
# deterministic count, as stat_test's pevt_backend_inherit), within 1%.
PIPELINE="sh -c 'echo abc | cat | wc -c > /dev/null; for j in 1 2 3 4 5; do ( dd if=/dev/zero of=/dev/null bs=1 count=150 2>/dev/null ); done; sh -c \"dd if=/dev/zero of=/dev/null bs=1 count=400 2>/dev/null\"; true'"
if [ -e /sys/bus/event_source/devices/pevt_vpmu ]; then
	for b in stock pevt; do
		eval pevt stat -x, -b $b -e pevt_vpmu/syscalls/ -- $PIPELINE >st-$b.err 2>&1
		c=$(awk -F, '/pevt_vpmu/ && $1 ~ /^[0-9]+$/ { print $1; exit }' st-$b.err)
		eval c_$b=\${c:-0}
	done
	if [ "$c_stock" -gt 2000 ] &&
	   [ $(( (c_pevt - c_stock) * 100 )) -le "$c_stock" ] &&
	   [ $(( (c_stock - c_pevt) * 100 )) -le "$c_stock" ]; then
		ok "inherit, exit at sched_process_exit: syscalls stock $c_stock, pevt $c_pevt"
	else
		notok "inherit, exit at sched_process_exit: syscalls stock $c_stock, pevt $c_pevt"
		log st-stock.err st-pevt.err
	fi
else
	skip "inherit at sched_process_exit" "no pevt_vpmu"
fi

# Fork and exit churn through the fallback hooks (the debug kernel's
# KASAN/kmemleak watch it): 300 short children, sampled and counted.
CHURN="sh -c 'for i in \$(seq 300); do /bin/true; done'"
eval pevt record --backend pevt -e task-clock -F 2000 -o churn.data -- $CHURN >w.out 2>w.err
rc=$?
s=$(summary w.err)
got=$(perf script -F pid -i churn.data 2>s.err | sort -u | wc -l)
if [ $rc = 0 ] && [ -n "$s" ] && [ "$s" -gt 0 ] && quiet s.err; then
	ok "pevt backend: 300 children recorded ($s samples in $got processes)"
else
	notok "pevt backend churn: rc $rc, $s samples"; log w.err s.err
fi

if reload && [ -c /dev/pevt ]; then
	got=$(params)
	if [ "$got" = "mmap_records=Y exit_early=Y switch_in_late=Y " ]; then
		ok "reloaded with defaults: $got(every kprobe placed)"
	else
		notok "defaults: $got(a kprobe could not be placed: dmesg says which)"
		dmesg | grep 'pevt: no kprobe' | log /dev/stdin
	fi
else
	notok "reload with defaults"; log reload.err
fi
finish
