#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install and fetch what pevt needs on a Debian 12 machine.  Idempotent:
# every step checks first, so re-running costs a second.
#
#   scripts/deps.sh            packages + kernels + kselftest headers
#   scripts/deps.sh --check    exit 1 if anything is missing, change nothing
#
# Kernel images are downloaded and unpacked, never installed.  Release
# strings are resolved from what the metapackages depend on, so a Debian
# ABI bump needs no edit here.  Results land in $PEVT_CACHE (default
# build/cache); scripts/kernels.sh reads them.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

PKGS=(build-essential bc bison flex libssl-dev libelf-dev kmod cpio gzip xz-utils
      qemu-system-x86 busybox-static dwarves
      linux-headers-amd64 linux-headers-6.12-amd64
      libbpf-dev liburing-dev zlib1g-dev libzstd-dev libiberty-dev libdw-dev clang llvm libclang-rt-14-dev bpftool linux-perf
      gnuplot-nox rsync file dkms pkg-config man-db tcc)

check_only=0
[ "${1:-}" = --check ] && check_only=1

missing_pkgs() {
	local p
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || echo "$p"
	done
}

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "deps: root is needed to $1; run: sudo $0" >&2
		exit 1
	fi
}

miss=$(missing_pkgs)
if [ -n "$miss" ]; then
	[ $check_only = 1 ] && { echo "deps: missing packages:" $miss >&2; exit 1; }
	need_root "install packages ($(echo $miss))"
	log "installing packages: $(echo $miss)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $miss >/dev/null
fi

# Resolve the release string behind each metapackage (never hard-coded).
dep_of() { apt-cache depends "$1" 2>/dev/null | awk -v p="$2" '$1=="Depends:" && index($2,p)==1 {print substr($2, length(p)+1); exit}'; }
mkdir -p "$PEVT_CACHE/kernels"
env_file=$PEVT_CACHE/kernels.env
if [ ! -s "$env_file" ] || [ "$env_file" -ot /var/lib/dpkg/status ]; then
	k61=$(dep_of linux-headers-amd64 linux-headers-)
	k612=$(dep_of linux-headers-6.12-amd64 linux-headers-)
	[ -n "$k61" ] && [ -n "$k612" ] || die "cannot resolve kernel releases (apt-get update first?)"
	printf 'KREL_6_1=%s\nKREL_6_12=%s\n' "$k61" "$k612" > "$env_file"
fi
. "$env_file"

for rel in "$KREL_6_1" "$KREL_6_12"; do
	# The metapackage may have moved on since its headers were installed
	# (an apt-get update above, for a package added to PKGS, brings a
	# Debian ABI bump with it): install the headers it points to now.
	if [ ! -d "/usr/src/linux-headers-$rel" ]; then
		[ $check_only = 1 ] && { echo "deps: headers for $rel not installed" >&2; exit 1; }
		need_root "install linux-headers-$rel"
		log "installing linux-headers-$rel"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -qq --no-install-recommends "linux-headers-$rel" >/dev/null ||
			die "cannot install linux-headers-$rel"
	fi
	img=$PEVT_CACHE/kernels/vmlinuz-$rel
	[ -s "$img" ] && continue
	[ $check_only = 1 ] && { echo "deps: kernel image $rel not fetched" >&2; exit 1; }
	log "fetching kernel image $rel"
	tmp=$(mktemp -d); (cd "$tmp" && apt-get download -q "linux-image-$rel" >/dev/null 2>&1) ||
		die "apt-get download linux-image-$rel failed"
	dpkg-deb --fsys-tarfile "$tmp"/linux-image-*.deb | tar -x -C "$tmp" "./boot/vmlinuz-$rel"
	mv "$tmp/boot/vmlinuz-$rel" "$img"; rm -rf "$tmp"
done

# linux-source-6.1: kselftest harness headers now, the debug kernel later.
src_xz=$PEVT_CACHE/linux-source-6.1.tar.xz
if [ ! -s "$src_xz" ]; then
	[ $check_only = 1 ] && { echo "deps: linux-source-6.1 not fetched" >&2; exit 1; }
	log "fetching linux-source-6.1"
	tmp=$(mktemp -d); (cd "$tmp" && apt-get download -q linux-source-6.1 >/dev/null 2>&1) ||
		die "apt-get download linux-source-6.1 failed"
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.1_*.deb | tar -xO ./usr/src/linux-source-6.1.tar.xz > "$src_xz.part"
	mv "$src_xz.part" "$src_xz"; rm -rf "$tmp"
fi
ks=$PEVT_CACHE/kselftest
if [ ! -s "$ks/kselftest_harness.h" ]; then
	[ $check_only = 1 ] && { echo "deps: kselftest headers not extracted" >&2; exit 1; }
	log "extracting kselftest_harness.h from linux-source-6.1"
	mkdir -p "$ks"
	# tar stops reading once both members are out (--occurrence), so xz
	# may die of SIGPIPE: judge by the files, not the pipeline status.
	xz -dc -T0 "$src_xz" | tar -x -C "$ks" --strip-components=4 --occurrence \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h || true
	[ -s "$ks/kselftest_harness.h" ] && [ -s "$ks/kselftest.h" ] ||
		die "kselftest headers not found in $src_xz"
fi
# kselftest's build and run conventions (selftests/Makefile includes lib.mk;
# its install uses the runner): from the same tree.
if [ ! -s "$ks/lib.mk" ] || [ ! -s "$ks/kselftest/runner.sh" ] || [ ! -s "$ks/run_kselftest.sh" ]; then
	[ $check_only = 1 ] && { echo "deps: kselftest lib.mk/runner not extracted" >&2; exit 1; }
	log "extracting kselftest lib.mk and runner from linux-source-6.1"
	xz -dc -T0 "$src_xz" | tar -x -C "$ks" --strip-components=4 --occurrence \
		linux-source-6.1/tools/testing/selftests/lib.mk \
		linux-source-6.1/tools/testing/selftests/run_kselftest.sh \
		linux-source-6.1/tools/testing/selftests/kselftest/runner.sh \
		linux-source-6.1/tools/testing/selftests/kselftest/prefix.pl \
		linux-source-6.1/tools/testing/selftests/kselftest/module.sh || true
	[ -s "$ks/lib.mk" ] && [ -s "$ks/kselftest/runner.sh" ] && [ -s "$ks/run_kselftest.sh" ] ||
		die "kselftest lib.mk/runner not found in $src_xz"
fi
exit 0
