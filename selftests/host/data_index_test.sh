#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `pevt data index` and the indexed `pevt report` on files recorded here
# with Debian's perf: stock perf reads the indexed file as before (report,
# script, --header-only, no warnings); pevt report gives byte for byte the
# unindexed output for --threads 1, 2, 4, with and without the index, and
# actually takes the indexed first pass; a damaged index gives a warning
# naming the problem and the offset, and the same output; pipe data and
# --threads directories are refused; re-indexing replaces the index; a
# pevt record file and a zstd one (read sequentially: one zstd stream).
# TAP output for scripts/check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

N=18
echo "TAP version 13"
echo "1..$N"
# Many short processes, and a small buffer (-m 8: 32 KB) so that perf
# writes many FINISHED_ROUNDs and the index gets many slices.
workload="sh -c 'for i in \$(seq 1 12); do ls -R /usr/lib >/dev/null 2>&1; done; \
dd if=/dev/urandom bs=1M count=4 2>/dev/null | gzip >/dev/null'"
cd "$tmp"
# perf's own file may lose samples or be out of order on a loaded host
# (tap.sh, perf_record_clean()); out of order, the index is rightly not
# used (sequential first pass).  If none of 5 recordings is clean, the
# checks below expect perf's messages on the indexed file to be those on
# the original, and the index refused if the file is out of order.
rc=1
[ -z "$perf" ] || { perf_record_clean f.data "-q -m 8 -e cpu-clock -F 4000 -g -- $workload"; rc=$?; }
if [ $rc = 1 ]; then
	for i in $(seq 1 $N); do skip "index $i" "no perf, or perf record fails on this host"; done
	exit 4
fi
misordered=
[ $rc = 0 ] || ! grep -q "out of order events" f.data.msg || misordered=1
[ -z "$misordered" ] || echo "# the index must be refused (misordered), the output the same"
cp f.data orig.data
slices=0
rep() { "$pevt" report --stdio "$@"; }
# perf's messages on the indexed file: those on the unindexed one (none
# on a clean recording)
same_msgs() {	# ERR-OF-ORIG ERR-OF-INDEXED
	cmp -s "$1" "$2"
}

# 1: indexes, in more than one slice, no temporary file left behind
if "$pevt" data index --slice-size 16k f.data 2>idx.err && \
   slices=$("$pevt" data index --show --json f.data | grep -o '"offset"' | wc -l) && \
   [ "$slices" -gt 2 ] && [ -z "$(ls -A | grep '\.idx')" ]; then
	ok "data index: $slices slices"
else
	sed 's/^/# /' idx.err; echo "# slices: ${slices:-?}"; nok "data index"
fi

# 2-4: stock perf reads it as before, with no message
strip() { grep -v '(Tip:'; }
"$perf" report --stdio -i orig.data 2>a.err | strip > a.txt
"$perf" report --stdio -i f.data 2>b.err | strip > b.txt
if [ -s a.txt ] && cmp -s a.txt b.txt && same_msgs a.err b.err; then ok "perf report --stdio: same, no warnings"
else diff a.txt b.txt | head -5 | sed 's/^/# /'; sed 's/^/# err: /' b.err | head -5; nok "perf report --stdio: same, no warnings"; fi
"$perf" script -i orig.data 2>a.err > a.txt
"$perf" script -i f.data 2>b.err > b.txt
if [ -s a.txt ] && cmp -s a.txt b.txt && same_msgs a.err b.err; then ok "perf script: same, no warnings"
else sed 's/^/# err: /' b.err | head -5; nok "perf script: same, no warnings"; fi
"$perf" report --header-only -i orig.data 2>/dev/null | grep -v -e '^# captured on' -e '^# data size' > a.txt
"$perf" report --header-only -i f.data 2>b.err | grep -v -e '^# captured on' -e '^# data size' > b.txt
if cmp -s a.txt b.txt && [ ! -s b.err ]; then ok "perf report --header-only: same, no warnings"
else diff a.txt b.txt | head -5 | sed 's/^/# /'; sed 's/^/# err: /' b.err | head -5; nok "perf report --header-only"; fi

# 5-6: pevt report: one answer for any --threads, indexed or not, both modes
for args in "" "--no-children -g none"; do
	rep $args --threads 1 -i orig.data > ref.txt 2>/dev/null
	bad=
	for t in 1 2 4; do
		rep $args --threads $t -i orig.data > o.txt 2>o.err
		cmp -s ref.txt o.txt || bad="$bad unindexed:$t"
		PEVT_INDEX_DEBUG=1 rep $args --threads $t -i f.data > o.txt 2>o.err
		cmp -s ref.txt o.txt || bad="$bad indexed:$t"
		if [ -z "$misordered" ]; then
			grep -q "index: first pass from" o.err || bad="$bad not-used:$t($(head -c 200 o.err))"
		else
			grep -q "index: not used (a record older than an earlier round's flush (misordered))" o.err ||
				bad="$bad misordered-but-not-refused:$t($(head -c 200 o.err))"
		fi
		rep $args --no-index --threads $t -i f.data > o.txt 2>/dev/null
		cmp -s ref.txt o.txt || bad="$bad no-index:$t"
	done
	if [ -s ref.txt ] && [ -z "$bad" ]; then ok "pevt report ${args:-(children)}: identical for --threads 1,2,4 with and without the index"
	else echo "# differs:$bad"; nok "pevt report ${args:-(children)}: identical"; fi
done
rep --no-children -g none --threads 1 -i orig.data > ref.txt 2>/dev/null

# 7-11: a damaged index: a warning with the offset, the same output
# The index is the file's last feature section: header (48 bytes) + 48 per slice.
size=$(stat -c %s f.data)
ioff=$((size - 48 - 48 * slices))
peek() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }
damaged() {	# NAME WANT-IN-WARNING: c.data is damaged
	local what=$1 want=$2
	PEVT_INDEX_DEBUG=1 rep --no-children -g none --threads 2 -i c.data > o.txt 2>o.err
	sed "s/^/# /" o.err | grep Warning
	if cmp -s ref.txt o.txt && grep -q "^Warning: .*$want" o.err && grep -q "offset" o.err &&
	   grep -q "index: not used\|ignoring the index" o.err; then ok "damaged index ($what): warning, same output"
	else sed 's/^/# err: /' o.err | head -5; nok "damaged index ($what)"; fi
}
cp f.data c.data; poke c.data $ioff 0x1234; damaged "magic" "bad index magic"
cp f.data c.data; poke c.data $((ioff + 8)) 7; damaged "version" "version 7"
e1=$((ioff + 48 + 48))		# entry 1
cp f.data c.data; poke c.data $e1 $((size * 4)); damaged "slice outside the data section" "outside the data section"
# entry 0 one record longer (its size + 8) and entry 1 starting 8 bytes later: contiguous, not on boundaries
o1=$(peek f.data $e1); s1=$(peek f.data $((e1 + 8))); s0=$(peek f.data $((ioff + 48 + 8)))
cp f.data c.data; poke c.data $((ioff + 48 + 8)) $((s0 + 8)); poke c.data $e1 $((o1 + 8)); poke c.data $((e1 + 8)) $((s1 - 8))
damaged "slice not on a record boundary" "not .*boundar"
cp f.data c.data; poke c.data $((ioff + 16)) 999; damaged "entry count" "entries in"
# a stale index: it describes another data section (the file was rewritten by something else)
cp f.data c.data; poke c.data $((ioff + 40)) 12345; damaged "stale: another data section" "describes a data section"

# an index run killed half way (SIGXFSZ from a file size limit of at most
# half the recording while it writes the temporary copy) leaves the file as
# it was.  The limit follows the recording's size (441944 bytes in a fresh
# Debian chroot, several MB here); ulimit -f counts 512 (dash) or 1024
# (bash) byte blocks: size / 2048 blocks is a quarter or a half of it.
cp orig.data k.data
lim=$(( $(stat -c %s orig.data) / 2048 ))
sh -c 'ulimit -f "$1"; "$0" data index --slice-size 16k k.data; exit $?' "$pevt" "$lim" >/dev/null 2>&1
rc=$?
if [ $rc -ne 0 ] && cmp -s orig.data k.data && [ "$lim" -gt 0 ]; then
	ok "interrupted index (exit $rc): file unchanged"
else echo "# exit $rc, size $(stat -c %s orig.data)"; nok "interrupted index: file unchanged"; fi
rm -f .k.data.idx*

# 12: pipe data and --threads directories are refused with a reason
eval "$perf record -q -e cpu-clock -o - -- $workload" > pipe.data 2>/dev/null
eval "$perf record -q -e cpu-clock --threads -o dir.data -- $workload" >/dev/null 2>&1
bad=
"$pevt" data index pipe.data 2>o.err && bad="$bad pipe-accepted"
grep -q "pipe-mode" o.err || bad="$bad pipe:$(head -c 200 o.err)"
if [ -d dir.data ]; then
	"$pevt" data index dir.data 2>o.err && bad="$bad dir-accepted"
	grep -q "directory" o.err || bad="$bad dir:$(head -c 200 o.err)"
fi
"$pevt" data index - < pipe.data 2>/dev/null && bad="$bad stdin-accepted"
if [ -z "$bad" ]; then ok "pipe data and directories refused"; else echo "# $bad"; nok "pipe data and directories refused"; fi

# 13: re-indexing replaces the index (one section, perf still reads it)
"$pevt" data index --slice-size 64k f.data 2>/dev/null
s2=$("$pevt" data index --show --json f.data | grep -o '"offset"' | wc -l)
"$perf" report --stdio -i f.data 2>b.err | strip > b.txt
"$perf" report --stdio -i orig.data 2>a.err | strip > a.txt
rep --no-children -g none --threads 2 -i f.data > o.txt 2>/dev/null
if [ "$s2" -ge 1 ] && [ "$s2" -lt "$slices" ] && [ $(stat -c %s f.data) -eq $((size - 48 * (slices - s2))) ] &&
   cmp -s a.txt b.txt && same_msgs a.err b.err && cmp -s ref.txt o.txt; then ok "re-index: $s2 slices replace $slices"
else echo "# $s2 slices, size $(stat -c %s f.data) vs $size"; nok "re-index replaces"; fi

# 14: a file with a single round (the default buffer) indexes as one slice
"$pevt" data index orig.data 2>/dev/null && "$pevt" data index --show orig.data > o.txt &&
	rep --no-children -g none --threads 2 -i orig.data > o2.txt 2>/dev/null
if grep -q "^# index v1" o.txt && cmp -s ref.txt o2.txt; then ok "index of the whole file, same report"
else sed 's/^/# /' o.txt | head -3; nok "index of the whole file"; fi

# 15: a pevt record file: indexed, used, same report; perf reads it quietly
bad=
if eval "'$pevt' record -m 8 -e cpu-clock -g -o p.data -- $workload" >/dev/null 2>&1; then
	rep --threads 1 -i p.data > a.txt 2>/dev/null
	"$perf" report --stdio -i p.data 2>pa.err | strip > pa.txt
	"$pevt" data index --slice-size 8k p.data 2>o.err || bad="$bad index:$(head -c 200 o.err)"
	for t in 1 2 4; do
		PEVT_INDEX_DEBUG=1 rep --threads $t -i p.data > b.txt 2>o.err
		cmp -s a.txt b.txt || bad="$bad differs:$t"
		grep -q "index: first pass from" o.err || bad="$bad not-used:$t($(tr '\n' ' ' < o.err | head -c 200))"
	done
	"$perf" report --stdio -i p.data 2>b.err | strip > pb.txt
	cmp -s pa.txt pb.txt && same_msgs pa.err b.err || bad="$bad perf-report($(tr '\n' ' ' < b.err | head -c 200))"
	if [ -z "$bad" ]; then ok "pevt record file: indexed, same reports"; else nok "pevt record file:$bad"; fi
else
	skip "pevt record file" "pevt record cannot record on this host"
fi

# 16: zstd (-z): indexed (perf reads it), report the same (sequential: one zstd stream)
bad=
perf_record_clean z.data "-q -m 8 -z -e cpu-clock -g -- $workload"
if [ $? != 1 ]; then
	rep --threads 1 -i z.data > a.txt 2>/dev/null
	"$pevt" data index --slice-size 8k z.data 2>o.err || bad="$bad index:$(head -c 200 o.err)"
	rep --threads 2 -i z.data > b.txt 2>o.err
	cmp -s a.txt b.txt && [ ! -s o.err ] || bad="$bad differs($(head -c 200 o.err))"
	"$perf" report --stdio -i z.data 2>b.err >/dev/null
	same_msgs z.data.msg b.err || bad="$bad perf:$(head -c 200 b.err)"	# before indexing: perf_record_clean's
	if [ -z "$bad" ]; then ok "zstd file: indexed, same report"; else echo "# $bad"; nok "zstd file"; fi
else
	skip "zstd file" "perf record -z fails on this host"
fi
exit $failed
