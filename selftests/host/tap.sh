# SPDX-License-Identifier: GPL-2.0
# Sourced by the host test scripts (selftests/host/*_test.sh), which set
# $top first: TAP lines, a temporary directory removed on exit, $pevt
# (the build's, or $PEVT) and $perf (the host's, or $PERF; empty if none).
n=0 failed=0
tmp=$(mktemp -d "/tmp/pevt-${0##*/}.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export PEVT_CACHE=${PEVT_CACHE:-$top/build/cache}
pevt=$(realpath -m "${PEVT:-$top/build/bin/pevt}")
perf=${PERF:-$(command -v perf)}
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n $1"; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
# check DESCRIPTION CMD...: ok if CMD succeeds, else its output as comments.
check() {
	local d=$1; shift
	if "$@" > "$tmp/out" 2>&1; then ok "$d"; else sed 's/^/# /' "$tmp/out" | head -20; nok "$d"; fi
}
# perf_record_clean FILE ARGS...: `$perf record -o FILE ARGS` (ARGS
# eval'd: quoted workloads), up to 5 times until perf report says
# nothing on the file.  On a loaded host (CI: another VM beside the
# tests) perf's own recording can lose samples ("Processed N events and
# lost M chunks!") or be out of order ("N out of order events recorded":
# perf writes a FINISHED_ROUND after every pass over its buffers, and a
# vCPU stopped between a sample's time and its record breaks the round
# guarantee); a test of what reads perf's files cleanly cannot start
# from such a file.  Returns 0: perf said nothing; 1: perf record
# failed; 2: it spoke on all 5 (the last kept; $perf_unclean says what,
# FILE.msg holds it).
perf_unclean=
perf_record_clean() {
	local f=$1 try
	shift
	perf_unclean=
	for try in 1 2 3 4 5; do
		eval "$perf record -o $f $*" >/dev/null 2>&1 || return 1
		"$perf" report --stdio -i "$f" 2>"$f.msg" >/dev/null
		[ -s "$f.msg" ] || return 0
		echo "# $f, recording $try: perf report says: $(tr '\n' ' ' < "$f.msg" | head -c 160); recording again"
	done
	perf_unclean="perf report spoke on all 5 recordings of $f: $(tr '\n' ' ' < "$f.msg" | head -c 160)"
	echo "# $perf_unclean"
	return 2
}
# poke FILE OFFSET U64: a little-endian u64 written into FILE at OFFSET
poke() {
	printf "$(printf '%016x' "$3" | sed -E 's/(..)(..)(..)(..)(..)(..)(..)(..)/\\x\8\\x\7\\x\6\\x\5\\x\4\\x\3\\x\2\\x\1/')" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
