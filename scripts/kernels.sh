# SPDX-License-Identifier: GPL-2.0
# Sourced.  kernel_resolve NAME sets KREL, KDIR and VMLINUZ for one of the
# test kernels: 6.1 and 6.12 (Debian stock), debug (6.1 + lockdep/KASAN/
# kmemleak, see scripts/debug-kernel.sh).
: "${top:?}"
TEST_KERNELS="6.1 6.12 debug"

kernel_resolve() {
	local env_file=$PEVT_CACHE/kernels.env
	[ -s "$env_file" ] || die "no $env_file: run scripts/deps.sh"
	. "$env_file"
	case "$1" in
	6.1)	KREL=$KREL_6_1 ;;
	6.12)	KREL=$KREL_6_12 ;;
	debug)
		eval "$("$top/scripts/debug-kernel.sh" --env)" || die "debug kernel unavailable"
		return 0 ;;
	*)	die "unknown kernel '$1' (one of: $TEST_KERNELS)" ;;
	esac
	KDIR=/usr/src/linux-headers-$KREL
	VMLINUZ=$PEVT_CACHE/kernels/vmlinuz-$KREL
	[ -f "$KDIR/Makefile" ] || die "headers for $KREL missing: run scripts/deps.sh"
	[ -s "$VMLINUZ" ] || die "kernel image for $KREL missing: run scripts/deps.sh"
}
