# SPDX-License-Identifier: GPL-2.0
# Guest side of the debug lane's leak check; busybox sh, sourced by the VM's
# /init (scripts/vmtest.sh installs it as /etc/pevt-kmemleak.sh for the
# debug kernel only).  Uses say() and $R from /init.
#
# The check runs at the very end, after every test closed its fds and pevt
# was unloaded, so an object pevt forgot to free in its exit path counts
# too.  Attribution: once pevt is gone, kmemleak can no longer name its
# frames and prints them as bare addresses, so a frame counts as pevt's if
# it names pevt or is an unresolved address in the module area.  pevt is
# the only module this guest ever loads, so that is exact even when tests
# reloaded it at other addresses.  kmemleak_pre, run just before the final
# rmmod, keeps pevt's symbols so those addresses can still be named (for
# the last load; earlier loads print as module-area addresses only).

KMEMLEAK=/sys/kernel/debug/kmemleak
# x86_64 without KASLR (config.debug): MODULES_VADDR..MODULES_END
KMEMLEAK_MOD_LO=ffffffffa0000000
KMEMLEAK_MOD_HI=ffffffffff000000

kmemleak_pre() {
	grep '\[pevt\]' /proc/kallsyms 2>/dev/null | sort > /tmp/pevt.kallsyms
	# "core-base core-size init-base": kallsyms only names core text
	echo "$(sed -n 's/^pevt \([0-9]*\) .* 0x\([0-9a-f]*\).*/\2 \1/p' /proc/modules)" \
		"$(sed 's/^0x//' /sys/module/pevt/sections/.init.text 2>/dev/null)" > /tmp/pevt.range
	say "# kmemleak: pevt core at 0x$(cut -d' ' -f1 /tmp/pevt.range), $(wc -l < /tmp/pevt.kallsyms) symbols kept"
}

# Name a bare module address with the symbols kept by kmemleak_pre.
kmemleak_sym() {
	local a=$1 best= name= base= size= init=
	read -r base size init < /tmp/pevt.range 2>/dev/null
	if [ -z "$base" ] || [ -z "$size" ] ||
	   [ $(( 0x$a - 0x$base )) -lt 0 ] || [ $(( 0x$a - 0x$base )) -ge "$size" ]; then
		# not the last load's core: its (freed) init code, or an earlier load
		[ -n "$init" ] && [ $(( 0x$a - 0x$init )) -ge 0 ] &&
			[ $(( 0x$a - 0x$init )) -lt 65536 ] &&
			printf ' (pevt init code +0x%x, freed)' $(( 0x$a - 0x$init ))
		return 0
	fi
	while read -r s t n m; do
		[ "x$s" \> "x$a" ] && break
		best=$s name=$n
	done < /tmp/pevt.kallsyms
	[ -n "$best" ] || return 0
	printf ' (%s+0x%x [pevt])' "$name" $(( 0x$a - 0x$best ))
}

kmemleak_post() {
	if [ ! -w $KMEMLEAK ]; then
		say "not ok 3 pevt-runner.kmemleak # $KMEMLEAK missing: kmemleak off?"
		return
	fi
	# Objects younger than 5 s are never reported, and a first scan only
	# records each object's checksum: wait, then scan twice.
	local t0=$(date +%s)
	sleep 6
	echo scan > $KMEMLEAK
	echo scan > $KMEMLEAK
	say "# kmemleak: wait + 2 scans took $(( $(date +%s) - t0 ))s"
	cat $KMEMLEAK > /tmp/kmemleak.txt
	# Split into one file per object, keep those with a pevt frame.
	rm -rf /tmp/kml; mkdir /tmp/kml
	awk -v lo="x$KMEMLEAK_MOD_LO" -v hi="x$KMEMLEAK_MOD_HI" '
		/^unreferenced object/ { n++; f = sprintf("/tmp/kml/%04d", n) }
		n == 0 { next }
		{ print > f }
		/pevt/ { hit[n] = 1 }
		# "[<hashed or (____ptrval____)>] 0xffffffffa0001234"
		/\] 0x[0-9a-f]+$/ {
			a = "x" substr($NF, 3)
			if (length(a) == 17 && a >= lo && a < hi) hit[n] = 1
		}
		END { for (i in hit) print sprintf("/tmp/kml/%04d", i) > "/tmp/kml/hits" }
	' /tmp/kmemleak.txt
	local total=$(grep -c '^unreferenced object' /tmp/kmemleak.txt)
	local ours=0
	[ -s /tmp/kml/hits ] && ours=$(wc -l < /tmp/kml/hits)
	say "# kmemleak: $total unreferenced objects after the suite, $ours attributed to pevt"
	if [ "$ours" = 0 ]; then
		# the kernel's own suspects, for the record
		head -n 40 /tmp/kmemleak.txt | sed 's/^/# /' > $R
		say "ok 3 pevt-runner.kmemleak"
		return
	fi
	for f in $(sort /tmp/kml/hits); do
		while IFS= read -r l; do
			case $l in
			*"] 0x"*)
				a=${l##* 0x}
				say "# $l$(kmemleak_sym "$a")" ;;
			*)	say "# $l" ;;
			esac
		done < $f
	done
	say "not ok 3 pevt-runner.kmemleak # $ours objects leaked by pevt"
}
