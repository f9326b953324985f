#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make install DESTDIR=` puts in a root and whether it works there:
# the command, libpevt as a versioned shared library (exactly the symbols
# of libpevt.map, version LIBPEVT_0.1) with headers and pkg-config, man
# pages that render without warnings, bash completion; and
# `make install-dkms` + `dkms build` against both Debian kernels' headers,
# with every module parameter documented (modinfo).  TAP for check.sh.
#
# PEVT_DKMS=0 skips the dkms builds (two module builds: ~1-2 min).
set -u
# From build/tests/host/ or from selftests/host/.
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

echo "TAP version 13"
echo "1..11"
root=$tmp/root
if ! make -s -C "$top" install DESTDIR="$root" PREFIX=/usr > "$tmp/make.log" 2>&1; then
	sed 's/^/# /' "$tmp/make.log" | tail -20
	nok "make install DESTDIR=... PREFIX=/usr"
	exit 1
fi
ok "make install DESTDIR=... PREFIX=/usr"

files() {
	local f
	for f in usr/bin/pevt usr/lib/libpevt.so usr/lib/libpevt.so.0 usr/lib/libpevt.a \
		 usr/include/pevt/core.h usr/include/pevt/evsel.h usr/include/pevt/parse_events.h \
		 usr/include/linux/pevt.h usr/lib/pkgconfig/libpevt.pc \
		 usr/share/bash-completion/completions/pevt; do
		[ -e "$root/$f" ] || { echo "missing $f"; return 1; }
	done
	for f in "$top"/Documentation/man/*.md; do
		f=${f##*/}; f=${f%.md}
		[ -s "$root/usr/share/man/man${f##*.}/$f" ] || { echo "missing man page $f"; return 1; }
	done
	"$root/usr/bin/pevt" --version | grep -q '^pevt [0-9]'
}
check "installed files: command, library, headers, pkg-config, man pages, completion" files

# The exported symbols are the map's, all at version LIBPEVT_0.1.
abi() {
	local so=$root/usr/lib/libpevt.so.0
	objdump -T "$so" | awk '$NF != "" && / DF \.text/ { print $(NF-1), $NF }' | sort > "$tmp/dyn"
	sed -n 's/^\t\t\(pevt_[a-z_0-9]*\);/LIBPEVT_0.1 \1/p' "$top/user/lib/libpevt.map" | sort > "$tmp/map"
	diff "$tmp/map" "$tmp/dyn" && [ -s "$tmp/map" ] &&
		readelf -d "$so" | grep -q 'SONAME.*\[libpevt.so.0\]'
}
check "libpevt.so.0 exports exactly libpevt.map's symbols, versioned LIBPEVT_0.1" abi

pc() {
	local flags
	flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_PATH=$root/usr/lib/pkgconfig \
		pkg-config --cflags --libs libpevt) || return 1
	flags=$(echo $flags)
	echo "pkg-config: $flags"
	[ "$flags" = "-I$root/usr/include -L$root/usr/lib -lpevt" ] || return 1
	echo "$flags" > "$tmp/flags"
}
check "pkg-config --cflags --libs libpevt (PKG_CONFIG_SYSROOT_DIR)" pc

# A program built against the installed headers and library alone.
prog() {
	cat > "$tmp/p.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <pevt/core.h>
#include <pevt/parse_events.h>
int main(void)
{
	struct pevt_parse_error err;
	struct pevt_events *evs = pevt_events__parse("{task-clock,cs},page-faults", NULL, &err);
	int *cpus, n = pevt_cpu_list__parse("0-3,6", &cpus);

	if (!evs || n != 5 || cpus[4] != 6 || pevt_events__nr(evs) != 3)
		return 1;
	printf("%zu events, %d cpus, %s\n", pevt_events__nr(evs), n,
	       pevt_backend__name(PEVT_BACKEND_DEVICE));
	pevt_events__delete(evs);
	free(cpus);
	return 0;
}
C
	gcc -Wall -Werror -o "$tmp/p" "$tmp/p.c" $(cat "$tmp/flags") &&
	LD_LIBRARY_PATH=$root/usr/lib ldd "$tmp/p" | grep -q "libpevt.so.0 => $root/usr/lib/libpevt.so.0" &&
	LD_LIBRARY_PATH=$root/usr/lib "$tmp/p" | grep -qx '3 events, 5 cpus, pevt'
}
check "a program linking -lpevt builds from the installed files and runs" prog

manpages() {
	local p bad=0
	for p in "$root"/usr/share/man/man*/*; do
		LC_ALL=C MANWIDTH=80 man --warnings -l "$p" > "$tmp/man.txt" 2> "$tmp/man.err" || { echo "$p: man failed"; bad=1; }
		[ -s "$tmp/man.err" ] && { echo "$p:"; cat "$tmp/man.err"; bad=1; }
		grep -q '^NAME' "$tmp/man.txt" || { echo "$p: no NAME section"; bad=1; }
	done
	return $bad
}
check "man -l renders every installed page without warnings" manpages

modinst() {
	make -s -C "$top" modules_install DESTDIR="$tmp/mod" &&
		ls "$tmp"/mod/lib/modules/*/extra/kmod/pevt.ko
}
if ls /usr/src/linux-headers-*/Makefile >/dev/null 2>&1; then
	check "make modules_install DESTDIR=...: pevt.ko under lib/modules/KREL/extra" modinst
else
	skip "make modules_install" "no kernel headers"
fi

# --- dkms ---------------------------------------------------------------------
if ! command -v dkms >/dev/null; then
	for k in 6.1 6.12; do skip "dkms build for $k" "dkms not installed (scripts/deps.sh)"; done
	skip "modinfo documents every parameter" "no dkms"
	skip "make install-dkms" "no dkms"
	exit $failed
fi
if ! make -s -C "$top" install-dkms DESTDIR="$tmp/src" > "$tmp/make.log" 2>&1; then
	sed 's/^/# /' "$tmp/make.log"; nok "make install-dkms"; exit 1
fi
ok "make install-dkms DESTDIR=..."
src=$(ls -d "$tmp"/src/usr/src/pevt-*)
ver=${src##*/pevt-}
. "$PEVT_CACHE/kernels.env" 2>/dev/null || true
dk=(dkms --dkmstree "$tmp/dkms" --sourcetree "$tmp/src/usr/src" --installtree "$tmp/inst")
mkdir -p "$tmp/dkms" "$tmp/inst"
"${dk[@]}" add -m pevt -v "$ver" > "$tmp/add.log" 2>&1 || sed 's/^/# /' "$tmp/add.log"
ko=
for rel in "${KREL_6_1:-}" "${KREL_6_12:-}"; do
	if [ -z "$rel" ] || [ ! -f "/usr/src/linux-headers-$rel/Makefile" ]; then
		skip "dkms build for ${rel:-a kernel}" "headers not installed"; continue
	fi
	if [ "${PEVT_DKMS:-1}" = 0 ]; then skip "dkms build for $rel" "PEVT_DKMS=0"; continue; fi
	if "${dk[@]}" build -m pevt -v "$ver" -k "$rel" --kernelsourcedir "/usr/src/linux-headers-$rel" \
		> "$tmp/build.log" 2>&1 &&
	   f=$(ls "$tmp/dkms/pevt/$ver/$rel"/*/module/pevt.ko* 2>/dev/null | head -n1) && [ -n "$f" ] &&
	   modinfo -F vermagic "$f" | grep -q "^$rel "; then
		ok "dkms build for $rel"
		ko=$f
	else
		sed 's/^/# /' "$tmp/build.log" | tail -20
		cat "$tmp/dkms/pevt/$ver/build/make.log" 2>/dev/null | tail -20 | sed 's/^/# /'
		nok "dkms build for $rel"
	fi
done
if [ -n "$ko" ]; then
	# Every module_param*() of the sources has a description (MODULE_PARM_DESC).
	sed -nE 's/^module_param(_named|_cb)?\(([a-z_0-9]+),.*/\2/p' "$src"/kmod/*.c | sort > "$tmp/params"
	modinfo -F parm "$ko" | awk -F: '$2 !~ /^ *(\(.*\))?$/ { print $1 }' | sort > "$tmp/descs"
	if [ -s "$tmp/params" ] && diff "$tmp/params" "$tmp/descs" > "$tmp/out"; then
		ok "modinfo documents every parameter ($(wc -l < "$tmp/params"))"
	else
		sed 's/^/# /' "$tmp/out"; nok "modinfo documents every parameter"
	fi
else
	skip "modinfo documents every parameter" "no module built"
fi
exit $failed
