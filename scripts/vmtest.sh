#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a test kernel under QEMU with pevt.ko and the VM selftests, run them,
# bring results back over a second serial port.
#
#   scripts/vmtest.sh KERNEL [TEST...]     KERNEL: 6.1, 6.12 or debug
#   scripts/vmtest.sh --run CMD KERNEL     run CMD in the guest instead (demo)
#
# Exits non-zero on any failed test, a timeout, a kernel WARNING/BUG/oops/
# lockup/RCU stall, or a taint other than out-of-tree/unsigned module.
# Writes build/vm/KERNEL/{console.log,results.txt,summary}; the summary is
# "pass fail skip" for scripts/check.sh.  VM_OUT=DIR writes them there
# instead (two runs on one kernel at once: scripts/test-plants.sh -j 2).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
. "$top/scripts/kernels.sh"

run_cmd=
if [ "${1:-}" = --run ]; then run_cmd=$2; shift 2; fi
[ $# -ge 1 ] || die "usage: $0 [--run CMD] KERNEL [TEST...]"
kname=$1; shift
tests=("$@")
# The debug kernel (KASAN, lockdep, kmemleak scans) runs the suite 2-3.5x
# slower than the stock kernels: longer defaults for the whole run and for
# each test file there (a CI host once took 2335 s for the run, and more
# than 600 s for record.sh, which takes 246 s on a faster one).
if [ "$kname" = debug ]; then
	VM_TIMEOUT=${VM_TIMEOUT:-3600} TEST_TIMEOUT=${TEST_TIMEOUT:-1200}
else
	VM_TIMEOUT=${VM_TIMEOUT:-1200} TEST_TIMEOUT=${TEST_TIMEOUT:-600}
fi

"$top/scripts/deps.sh" --check >/dev/null 2>&1 || "$top/scripts/deps.sh"
kernel_resolve "$kname"

out=${VM_OUT:-$top/build/vm/$kname}
root=$out/root
mkdir -p "$out"
rm -rf "$root" "$out/console.log" "$out/results.txt" "$out/summary"

log "$kname: building ($KREL)"
# One make of the tools at a time: runs side by side (make check's lanes,
# test-plants.sh -j 2) would regenerate the same files at once.
mkdir -p "$top/build"
flock "$top/build/.make-user.lock" make -s -C "$top" user tests >/dev/null
# VM_MODDIR=DIR builds the module there, not in build/kmod/KREL[-plant-KIND]
# (a run beside another on the same kernel: scripts/test-plants.sh).
make -s -C "$top" modules KREL="$KREL" KDIR="$KDIR" ${PEVT_PLANT:+PEVT_PLANT=$PEVT_PLANT} \
	${VM_MODDIR:+MODDIR=$VM_MODDIR} >"$out/build.log" 2>&1 ||
	{ cat "$out/build.log" >&2; die "module build failed for $KREL"; }
grep -E 'warning:|error:' "$out/build.log" >&2 && die "module build for $KREL is not W=1 clean"
ko=${VM_MODDIR:-$top/build/kmod/$KREL${PEVT_PLANT:+-plant-$PEVT_PLANT}}/kmod/pevt.ko

# --- initramfs --------------------------------------------------------------
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,tests,etc,root}
cp /bin/busybox "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do
	[ "$a" = busybox ] && continue	# the link would replace the binary
	ln -sf busybox "$root/bin/$a"
done
cp "$ko" "$root/pevt.ko"
if [ ${#tests[@]} -eq 0 ]; then
	cp "$top"/build/tests/vm/* "$root/tests/" 2>/dev/null || true
else
	for t in "${tests[@]}"; do
		f=$(ls "$top/build/tests/vm/$t" "$top/build/tests/vm/$t.sh" 2>/dev/null | head -n1) ||
			true
		[ -n "$f" ] || die "no VM test named '$t' (see build/tests/vm/)"
		cp "$f" "$root/tests/"
	done
fi
[ -d "$top/build/bin" ] && cp "$top"/build/bin/* "$root/usr/bin/" 2>/dev/null || true

# Debian's perf: the real binary behind the /usr/bin/perf wrapper, plus the
# shared libraries it links, at the same paths.
perf_bin=$(ls /usr/bin/perf_[0-9]* 2>/dev/null | sort -V | tail -n1 || true)
[ -z "$perf_bin" ] && file -L /usr/bin/perf 2>/dev/null | grep -q ELF && perf_bin=/usr/bin/perf
if [ -n "$perf_bin" ]; then
	cp "$perf_bin" "$root/usr/bin/perf"
fi
# GNU make and tcc (deps.sh) for a forking build in the guest (a small
# C project built with make -j2: inherit_test), with what tcc links with.
build_tools=
for t in /usr/bin/make /usr/bin/tcc; do
	[ -x "$t" ] || continue
	cp "$t" "$root/usr/bin/"
	build_tools="$build_tools $t"
done
for f in /usr/lib/x86_64-linux-gnu/crt1.o /usr/lib/x86_64-linux-gnu/crti.o \
	 /usr/lib/x86_64-linux-gnu/crtn.o /usr/lib/x86_64-linux-gnu/libc.so \
	 /usr/lib/x86_64-linux-gnu/libc_nonshared.a /usr/lib/x86_64-linux-gnu/tcc/libtcc1.a \
	 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2; do	# libc.so.6 needs it, by name
	[ -e "$f" ] || continue
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
done
# ... and the shared libraries of perf, of the pevt tools (liburing,
# libzstd, libelf for pevt record) and of the build tools, at the same
# paths.
for bin in $perf_bin "$top"/build/bin/* $build_tools; do
	[ -f "$bin" ] || continue
	for lib in $(ldd "$bin" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/sh" >> "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"

cat > "$root/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
export PATH=/bin:/usr/bin:/sbin:/usr/sbin PEVT_KO=/pevt.ko HOME=/root
. /etc/pevt.env
R=/dev/ttyS1
say() { echo "$@" > $R; }
say "# pevt-boot $(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)"
if insmod /pevt.ko; then say "ok 1 pevt-runner.insmod"; else say "not ok 1 pevt-runner.insmod"; fi
if [ -n "$RUN_CMD" ]; then
	cd /tmp && sh -c "$RUN_CMD" > $R 2>&1
	say "# pevt-exit demo $?"
else
	for t in /tests/*; do
		[ -e "$t" ] || continue
		n=${t##*/}
		say "# pevt-run $n"
		echo "pevt-runner: running $n" > /dev/kmsg
		( cd /tmp && timeout $TEST_TIMEOUT "$t" ) > $R 2>&1
		say "# pevt-exit $n $?"
	done
fi
lsmod | grep -q '^pevt ' || insmod /pevt.ko
[ -x /etc/pevt-pre-rmmod.sh ] && . /etc/pevt-pre-rmmod.sh
if rmmod pevt; then say "ok 2 pevt-runner.rmmod"; else say "not ok 2 pevt-runner.rmmod"; fi
[ -x /etc/pevt-post.sh ] && . /etc/pevt-post.sh
say "# pevt-taint $(cat /proc/sys/kernel/tainted)"
say "# pevt-done"
sync
poweroff -f
INIT
chmod +x "$root/init"
{
	echo "TEST_TIMEOUT=$TEST_TIMEOUT"
	echo "PEVT_KERNEL=$kname"; echo "export PEVT_KERNEL"
	printf 'RUN_CMD=%q\n' "$run_cmd"
} > "$root/etc/pevt.env"

# --- debug kernel: kmemleak check after the final rmmod -----------------------
# Only leaks attributed to pevt fail the run (scripts/kmemleak-guest.sh).
# The two scans cost 30-150 s under TCG: PEVT_KMEMLEAK=0 skips them, for
# scripts/test-plants.sh cases that are about other reports.
if [ "$kname" = debug ] && [ "${PEVT_KMEMLEAK:-1}" = 1 ]; then
	cp "$top/scripts/kmemleak-guest.sh" "$root/etc/pevt-kmemleak.sh"
	printf '. /etc/pevt-kmemleak.sh\nkmemleak_pre\n' > "$root/etc/pevt-pre-rmmod.sh"
	printf '. /etc/pevt-kmemleak.sh\nkmemleak_post\n' > "$root/etc/pevt-post.sh"
	chmod +x "$root/etc/pevt-pre-rmmod.sh" "$root/etc/pevt-post.sh"
fi

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initramfs.gz"

# --- boot ---------------------------------------------------------------------
# /dev/kvm on these machines cannot boot a stock kernel (VM-NOTES.md), so TCG
# is the default; PEVT_KVM=1 opts in where KVM is known to work.
# One TCG thread for all vCPUs: multi-threaded TCG mishandles the kernel's
# int3-based text patching (static keys flipped by perf_event_open, tracepoint
# probes): 6.12 guests died with "Oops: int3" in __schedule() a few times in
# ~50 runs.  Single-threaded TCG costs ~2x wall time and has shown none.
tcg_opts=${PEVT_TCG_OPTS-thread=single}
accel=tcg${tcg_opts:+,$tcg_opts}
# No cmpxchg16b for the guest (PEVT_QEMU_CPU overrides): 6.12 guests
# double-faulted now and then at the instruction after SLUB's
# `cmpxchg16b %gs:(%rsi)`, with EFLAGS saved as RAX's low half, under
# frequent interrupts (3 of 9 long cpu-clock bench boots, once in CI's
# stress test): QEMU 7.2's TCG flags after its cmpxchg16b helper, most
# likely (Documentation/record.md).  Without CX16 the kernel's per-CPU
# cmpxchg128 takes its emulation, with interrupts off.
qemu_cpu=${PEVT_QEMU_CPU-qemu64,-cx16}
[ "${PEVT_KVM:-0}" = 1 ] && [ -w /dev/kvm ] && accel=kvm
cmdline="console=ttyS0 tsc=reliable panic=-1 oops=panic softlockup_panic=1 quiet loglevel=5 ${VM_APPEND:-}"
log "$kname: booting ($accel, -cpu ${qemu_cpu:-default}, $(du -h "$out/initramfs.gz" | cut -f1) initramfs)"
start=$(date +%s)
rc=0
: > "$out/results.txt"
timeout --foreground "$VM_TIMEOUT" qemu-system-x86_64 -accel "$accel" ${qemu_cpu:+-cpu "$qemu_cpu"} \
	-m "${VM_MEM:-1024}" -smp "${VM_SMP:-2}" \
	-kernel "$VMLINUZ" -initrd "$out/initramfs.gz" -append "$cmdline" \
	-display none -monitor none -no-reboot \
	-serial "file:$out/console.log" -serial "file:$out/results.txt" </dev/null &
qpid=$!
# On a terminal (or PEVT_PROGRESS=1), say what the guest is doing as it
# does it: one line per test with the time so far and, from the last
# run's timings, an estimate of what is left.  Off a terminal, only the
# log lines of the steps.
# The stream also keeps each test's duration for the next estimate.
trap 'kill $qpid 2>/dev/null' INT TERM
show=${PEVT_PROGRESS:-$([ -t 2 ] && echo 1 || echo 0)}
if [ -n "$run_cmd" ]; then
	steps=(${PEVT_STEPS:-run})
else
	steps=($(ls "$root/tests"))
fi
tail -n +1 -F --pid=$qpid "$out/results.txt" 2>/dev/null |
	progress_stream "$kname" "$start" "$out.timings" "$show" "${steps[@]}" >&2 &
ppid=$!
wait $qpid || rc=$?
wait $ppid || true
log "$kname: VM exited rc=$rc after $(( $(date +%s) - start ))s"

# --- verdict ------------------------------------------------------------------
exec 3>"$out/verdict.txt"
pass=0 fail=0 skip=0
note() { echo "$*" >&3; }
cur= cur_failed=0
# The diagnostics a failing test printed ("# file:line:Expected ..." and its
# TH_LOG lines) go into the verdict too: a CI log shows why, not just what.
diag=()
while IFS= read -r line; do
	line=${line%$'\r'}
	case "$line" in
	"#  RUN "*|"# pevt-"*|"ok "*) diag=() ;;
	"# "*) diag+=("$line"); [ ${#diag[@]} -gt 12 ] && diag=("${diag[@]:1}") ;;
	esac
	case "$line" in
	"# pevt-run "*) cur=${line#\# pevt-run }; cur_failed=0 ;;
	"# pevt-exit "*)
		set -- $line; n=$3 code=$4
		# A binary that dies without reporting its failure still fails.
		if [ "$code" != 0 ] && [ "$code" != 4 ] && [ $cur_failed = 0 ]; then
			fail=$((fail + 1)); note "not ok $n exited with $code"
		fi ;;
	"ok "*"# SKIP"*|"ok "*"# skip"*) skip=$((skip + 1)); note "$line" ;;
	"ok "*) pass=$((pass + 1)) ;;
	"not ok "*) fail=$((fail + 1)); cur_failed=1
		for d in "${diag[@]}"; do note "  $cur: $d"; done; diag=()
		note "$line" ;;
	esac
done < <(grep -aE '^(ok |not ok |# )' "$out/results.txt" 2>/dev/null || true)

kfail() { fail=$((fail + 1)); note "not ok kernel: $*"; }
grep -aq '^# pevt-done' "$out/results.txt" 2>/dev/null ||
	kfail "run did not complete (timeout ${VM_TIMEOUT}s or crash, qemu rc=$rc)"
bad='WARNING:|BUG:|Oops|general protection fault|kernel BUG at|Kernel panic|soft lockup|hard LOCKUP|rcu: INFO:|rcu_sched detected stall|blocked for more than|UBSAN:|ODEBUG:|possible circular locking|possible recursive locking|inconsistent lock state|KASAN:'
if grep -aEn "$bad" "$out/console.log" > "$out/kernel-problems.txt" 2>/dev/null; then
	while IFS= read -r l; do kfail "$l"; done < "$out/kernel-problems.txt"
fi
taint=$(sed -n 's/^# pevt-taint //p' "$out/results.txt" | tr -d '\r' | tail -n1)
if [ -n "$taint" ]; then
	# O (4096): out-of-tree module, E (8192): unsigned module. Anything else
	# (W: a warning, D: a die, L: a soft lockup ...) fails the run.
	[ $(( taint & ~(4096 | 8192) )) = 0 ] || kfail "unexpected taint $taint"
fi
exec 3>&-
echo "$pass $fail $skip" > "$out/summary"
cat "$out/verdict.txt" >&2
log "$kname: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
