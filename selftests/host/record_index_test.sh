#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pevt record writes the HEADER_PEVT_INDEX section itself (record.md,
# "Index"), on the host with the stock backend: the file has the index;
# stock perf reads it with nothing on stderr; `pevt data index --show`
# prints it; pevt report gives the same bytes for --threads 1 and 2 with
# and without the index (and takes the indexed first pass); the whole
# file is byte for byte what `pevt data index` makes of it afterwards
# with the same slice size (default and small slices, the write, uring
# and threads drains, -z, two events, SIGINT and SIGTERM); --no-index,
# pipe mode and --overwrite snapshots have no index, a kill -9'd file
# none either; a bad --index-slice-size is refused.
# TAP output for scripts/check.sh.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/host/tap.sh"

N=12
echo "TAP version 13"
echo "1..$N"
# Many short processes and a small buffer (-m 8: 32 KB): many rounds.
workload="sh -c 'for i in \$(seq 1 6); do ls -R /usr/lib >/dev/null 2>&1; done'"
rec() { eval "'$pevt' record -q --backend stock -m 8 -e cpu-clock -g $* -- $workload"; }
slices() { "$pevt" data index --show --json "$1" 2>/dev/null | grep -o '"offset"' | wc -l; }
# reindexed FILE [SLICE]: FILE is what `pevt data index` makes of it
reindexed() {
	cp "$1" "$1.re" && "$pevt" data index ${2:+--slice-size $2} "$1.re" 2>/dev/null &&
		cmp -s "$1" "$1.re"
}
cd "$tmp"
if ! rec -o probe.data >/dev/null 2>rec.err; then
	sed 's/^/# /' rec.err | head -5
	for i in $(seq 1 $N); do skip "record index $i" "pevt record --backend stock fails on this host"; done
	exit 4
fi
rec --index-slice-size 16k -o p.data >/dev/null 2>rec.err

# 1: the index is there, in many slices, and --show prints it
s=$(slices p.data)
"$pevt" data index --show p.data > show.txt 2>show.err
if [ "$s" -gt 2 ] && grep -q "^# index v1: $s slices of ~16384 bytes" show.txt && [ ! -s show.err ] &&
   [ $(grep -c '^ ' show.txt) -eq "$s" ] && [ ! -s rec.err ]; then
	ok "pevt record --index-slice-size 16k: $s slices, --show prints them"
else
	echo "# $s slices"; sed 's/^/# /' show.txt show.err rec.err | head -5; nok "pevt record writes the index"
fi

# 2-4: stock perf reads it, nothing on stderr
if [ -z "$perf" ]; then
	for t in "perf report --stdio" "perf script" "perf report --header-only"; do skip "$t" "no perf"; done
else
	for t in "report --stdio" "script" "report --header-only"; do
		"$perf" $t -i p.data > o.txt 2>o.err
		if [ -s o.txt ] && [ ! -s o.err ]; then ok "perf $t: reads it, empty stderr"
		else sed 's/^/# err: /' o.err | head -5; nok "perf $t: reads it, empty stderr"; fi
	done
fi

# 5: pevt report: the same bytes for --threads 1, 2, indexed first pass or not
bad=
for args in "" "--no-children -g none"; do
	"$pevt" report --stdio $args --no-index --threads 1 -i p.data > ref.txt 2>/dev/null
	[ -s ref.txt ] || bad="$bad empty"
	for t in 1 2; do
		PEVT_INDEX_DEBUG=1 "$pevt" report --stdio $args --threads $t -i p.data > o.txt 2>o.err
		cmp -s ref.txt o.txt || bad="$bad indexed:$t"
		grep -q "index: first pass from" o.err || bad="$bad not-used:$t($(tr '\n' ' ' < o.err | head -c 200))"
		"$pevt" report --stdio $args --no-index --threads $t -i p.data > o.txt 2>/dev/null
		cmp -s ref.txt o.txt || bad="$bad no-index:$t"
	done
done
if [ -z "$bad" ]; then ok "pevt report --threads 1,2: identical with and without the index"
else echo "# $bad"; nok "pevt report with and without the index"; fi

# 6: the file is exactly what pevt data index writes into it afterwards
if reindexed p.data 16k; then ok "re-index --slice-size 16k: identical file ($(stat -c %s p.data) bytes)"
else cmp p.data p.data.re | sed 's/^/# /'; nok "re-index --slice-size 16k: identical file"; fi

# 7: the same with the default slice size, other drains, -z, two events
bad=
for args in "" "--drain uring" "--drain threads" "-z" "-e task-clock"; do
	rm -f d.data d.data.re
	rec $args -o d.data >/dev/null 2>&1 || { bad="$bad record($args)"; continue; }
	[ "$(slices d.data)" -ge 1 ] || bad="$bad no-index($args)"
	reindexed d.data || bad="$bad differs($args)"
	# small slices too, so the entries are not all one
	rm -f d.data
	rec $args --index-slice-size 8k -o d.data >/dev/null 2>&1 || { bad="$bad record8k($args)"; continue; }
	[ "$(slices d.data)" -gt 1 ] || bad="$bad one-slice($args)"
	reindexed d.data 8k || bad="$bad differs8k($args)"
done
if [ -z "$bad" ]; then ok "re-index identical: default and 8k slices, drains, -z, two events"
else echo "#$bad"; nok "re-index identical"; fi

# 8: SIGINT and SIGTERM finish the file with its index; kill -9 leaves
# none.  pevt runs as a background job of this script, which has SIGINT
# ignored: pevt record must still take it (as perf does).
bad=
for sig in INT TERM KILL; do
	rm -f s.data
	"$pevt" record -q --backend stock -m 8 -e cpu-clock -o s.data -- \
		sh -c 'while :; do ls -R /usr/lib >/dev/null 2>&1; done' >/dev/null 2>&1 &
	pid=$!
	sleep 1
	kids=$(pgrep -P $pid)
	kill -$sig $pid
	for i in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		bad="$bad $sig:still-running"
		kill -9 $pid
	fi
	wait $pid 2>/dev/null
	[ -n "$kids" ] && kill $kids 2>/dev/null	# the workload, if pevt left it
	if [ $sig = KILL ]; then
		"$pevt" data index --show s.data 2>&1 | grep -q "no index" || bad="$bad kill-9-indexed"
	else
		[ "$(slices s.data)" -ge 1 ] || bad="$bad $sig:no-index"
		reindexed s.data || bad="$bad $sig:differs"
	fi
done
if [ -z "$bad" ]; then ok "SIGINT, SIGTERM: indexed (identical to a re-index); kill -9: no index"
else echo "#$bad"; nok "signals"; fi

# 9: --no-index: no index, perf and pevt report read it
rec --no-index -o n.data >/dev/null 2>&1
"$pevt" data index --show n.data > o.txt 2>&1
PEVT_INDEX_DEBUG=1 "$pevt" report --stdio --threads 2 -i n.data > r.txt 2>o.err
if grep -q "n.data: no index" o.txt && [ -s r.txt ] && ! grep -q "index: first pass from" o.err &&
   [ -n "$perf" ] && "$perf" report --stdio -i n.data >/dev/null 2>&1; then
	ok "--no-index: a file without the index"
else sed 's/^/# /' o.txt | head -3; nok "--no-index"; fi

# 10: pipe mode: no index asked for, no message, pevt report reads it
rec -o - > pipe.data 2>o.err
if [ -s pipe.data ] && [ ! -s o.err ] && "$pevt" report --stdio -i - < pipe.data >/dev/null 2>&1; then
	ok "pipe mode: no index, no message"
else sed 's/^/# /' o.err | head -3; nok "pipe mode"; fi

# 11: --overwrite snapshot files are not indexed
if eval "'$pevt' record -q --backend stock --overwrite -m 8 -e cpu-clock -o o.data -- $workload" >/dev/null 2>&1 &&
   [ -s o.data ]; then
	if "$pevt" data index --show o.data 2>&1 | grep -q "no index"; then ok "--overwrite snapshot: no index"
	else nok "--overwrite snapshot: no index"; fi
else
	skip "--overwrite snapshot: no index" "--overwrite fails on this host"
fi

# 12: a bad --index-slice-size is refused before recording
bad=
for v in 0 100 4095 x 1T; do
	rm -f b.data
	rec --index-slice-size $v -o b.data >/dev/null 2>o.err && bad="$bad accepted:$v"
	grep -q "index-slice-size" o.err || bad="$bad msg:$v"
	[ -e b.data ] && bad="$bad file:$v"
done
if [ -z "$bad" ]; then ok "bad --index-slice-size refused"; else echo "#$bad"; nok "bad --index-slice-size"; fi
exit $failed
