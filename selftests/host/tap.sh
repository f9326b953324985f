# SPDX-License-Identifier: GPL-2.0
# Sourced by the host test scripts (selftests/host/*_test.sh), which set
# $top first: TAP lines, a temporary directory removed on exit.
n=0 failed=0
tmp=$(mktemp -d "/tmp/pevt-${0##*/}.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export PEVT_CACHE=${PEVT_CACHE:-$top/build/cache}
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n $1"; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
# check DESCRIPTION CMD...: ok if CMD succeeds, else its output as comments.
check() {
	local d=$1; shift
	if "$@" > "$tmp/out" 2>&1; then ok "$d"; else sed 's/^/# /' "$tmp/out" | head -20; nok "$d"; fi
}
