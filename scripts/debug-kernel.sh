#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the 6.1 debug kernel the `debug` VM lane boots: Debian's
# linux-source-6.1 + `make ARCH=x86_64 tinyconfig` + selftests/config.debug
# (lockdep, KASAN, kmemleak, debugobjects, ...).
#
#   scripts/debug-kernel.sh          build if needed, print shell assignments:
#                                    KREL (its release), KDIR (build tree),
#                                    VMLINUZ (= BZIMAGE, the bzImage)
#   scripts/debug-kernel.sh --env    the same (for eval "$(...)")
#   scripts/debug-kernel.sh --check  exit 1 unless the cached kernel is ready
#
# The result lives in $PEVT_CACHE/debug-kernel/<key>/, key = hash of the
# fragment, the source tarball and this script, so it is rebuilt only when
# one of them changes; a second run costs well under a second.  KDIR is the
# build tree itself (usable with `make -C $KDIR M=... modules`); it holds
# Module.symvers because `make modules` ran (modules_prepare alone writes
# none, and modpost would then call every kernel symbol undefined).
#
# An interrupted build resumes where it stopped: the tree is only marked
# ready (.pevt-ready) once bzImage, Module.symvers and the config check are
# all done.  Progress goes to stderr, the two paths to stdout.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

check_only=0
case ${1:-} in
--check)	check_only=1 ;;
--env|"")	;;
*)		die "usage: $0 [--env|--check]" ;;
esac

frag=$top/selftests/config.debug
src_xz=$PEVT_CACHE/linux-source-6.1.tar.xz
[ -s "$src_xz" ] || die "$src_xz missing: run scripts/deps.sh"
[ -s "$frag" ] || die "$frag missing"

# Hashing 140 MB on every run would cost ~0.5 s: memoize the tarball's
# hash by size and mtime.
base=$PEVT_CACHE/debug-kernel
mkdir -p "$base"
stat_id=$(stat -c '%s %Y' "$src_xz")
src_sum=
if [ -s "$base/src.sha256" ]; then
	read -r s m sum < "$base/src.sha256" || true
	[ "$s $m" = "$stat_id" ] && src_sum=$sum
fi
if [ -z "$src_sum" ]; then
	src_sum=$(sha256sum "$src_xz" | cut -d' ' -f1)
	echo "$stat_id $src_sum" > "$base/src.sha256"
fi
key=$(cat "$frag" "$0" <(echo "$src_sum") | sha256sum | cut -c1-16)
dir=$base/$key
kdir=$dir/linux
bzimage=$kdir/arch/x86/boot/bzImage

report() {
	printf 'KREL=%q\nKDIR=%q\nVMLINUZ=%q\nBZIMAGE=%q\n' \
		"$(cat "$dir/kernelrelease")" "$kdir" "$bzimage" "$bzimage"
}

if [ -e "$dir/.pevt-ready" ]; then
	report
	exit 0
fi
[ $check_only = 1 ] && { echo "debug-kernel: $dir not built" >&2; exit 1; }

# One builder at a time per key: vmtest.sh for several lanes may race here.
exec 9> "$dir.lock"
flock 9
[ -e "$dir/.pevt-ready" ] && { report; exit 0; }

kmake() { nice -n 10 make -C "$kdir" ARCH=x86_64 "$@"; }

t0=$(date +%s)
# A tree pruned (below) but never marked ready cannot build again.
[ -e "$dir/.pruned" ] && rm -rf "$dir"
mkdir -p "$dir"
if [ ! -e "$dir/.extracted" ]; then
	log "debug-kernel: extracting $(basename "$src_xz") into $dir"
	rm -rf "$kdir" "$dir/linux-source-6.1"
	tar -xJf "$src_xz" -C "$dir"
	mv "$dir/linux-source-6.1" "$kdir"
	touch "$dir/.extracted"
fi

if [ ! -e "$dir/.configured" ]; then
	log "debug-kernel: tinyconfig + $(basename "$frag")"
	# tinyconfig and merge_config chat about every override; the check
	# below is what matters.
	kmake -s tinyconfig >/dev/null
	"$kdir/scripts/kconfig/merge_config.sh" -m -O "$kdir" "$kdir/.config" "$frag" >/dev/null 2>&1
	kmake -s olddefconfig >/dev/null 2>&1
	# Kconfig silently drops what it cannot satisfy (a missing dependency,
	# an unavailable choice): insist that every line came through.
	bad=0
	while read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" "$kdir/.config" && continue;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}
			grep -q "^$sym=" "$kdir/.config" || continue;;
		*)	continue;;
		esac
		sym=${line#\# }; sym=${sym%%[= ]*}
		got=$(grep -E "^$sym=|^# $sym is not set" "$kdir/.config" || echo "(absent)")
		echo "debug-kernel: asked '$line', got '$got'" >&2
		bad=1
	done < "$frag"
	[ $bad = 0 ] || die "debug-kernel: selftests/config.debug not honoured (missing dependency?)"
	touch "$dir/.configured"
fi

log "debug-kernel: building bzImage + modules with -j$(nproc) (a few minutes)"
# `all` is vmlinux + bzImage + modules; modules writes Module.symvers.
kmake -s -j"$(nproc)" all
[ -s "$bzimage" ] && [ -s "$kdir/Module.symvers" ] || die "debug-kernel: build produced no bzImage/Module.symvers"
kmake -s --no-print-directory kernelrelease > "$dir/kernelrelease"

# External-module builds need include/, arch/, scripts/, tools/objtool,
# the Makefiles, .config and Module.symvers: what Debian's linux-headers
# ship.  Drop the kernel's objects and the source trees no M= build
# reads (1.6 GB -> ~370 MB).  vmlinux and System.map stay for symbolizing.
touch "$dir/.pruned"
find "$kdir" \( -path "$kdir/scripts" -o -path "$kdir/tools" \) -prune -o \
	\( -name '*.o' -o -name '*.a' -o -name '.*.o.cmd' \) -type f -print0 |
	xargs -0 rm -f
rm -rf "$kdir"/{Documentation,drivers,sound,net,fs,samples,vmlinux.o,.tmp_vmlinux*}

touch "$dir/.pevt-ready"
log "debug-kernel: ready in $(( $(date +%s) - t0 )) s ($(du -sh "$dir" | cut -f1))"
# Older keys are dead weight once a new one is ready.
for old in "$base"/*/; do
	old=${old%/}
	[ "$old" = "$dir" ] && continue
	[ -e "$old/.pevt-ready" ] && { log "debug-kernel: removing stale $old"; rm -rf "$old" "$old.lock"; }
done
report
