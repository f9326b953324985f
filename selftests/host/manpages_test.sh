#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Man pages and --help cannot drift from the code: every subcommand in
# main.c's table has a page (Documentation/man/pevt-NAME.1.md) listed in
# pevt(1); every getopt option of user/pevt/NAME.c (struct option and the
# short-option string) is on its page and every option on the page is in
# the code; bench's keywords (is_prefix(..., "kw") in bench*.c) likewise;
# and `pevt NAME --help`, rendered from the page, shows every option.
# TAP for scripts/check.sh.
set -u
# From build/tests/host/ or from selftests/host/.
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$top/user/pevt/main.c" ] || top=$(cd "$(dirname "$0")/../.." && pwd)
man=$top/Documentation/man
. "$top/selftests/host/tap.sh"
opts_of_page() { awk -v mode=opts -f "$top/scripts/man.awk" "$1" | sort -u; }

# Options of C files: --long names from struct option, -x from getopt strings.
opts_of_c() {
	{
		sed -nE 's/^\s*\{ "([a-z][a-z0-9-]*)",\s*(no|required|optional)_argument.*/--\1/p' "$@"
		grep -ohE 'getopt_long\([^"]*"\+?[^"]*"' "$@" | sed -E 's/.*"\+?([^"]*)"/\1/' |
			tr -d ':' | fold -w1 | sed 's/^/-/'
	} | sort -u
}

cmds=$(sed -nE 's/^\s*\{ "([a-z]+)",\s*do_[a-z_]+,.*/\1/p' "$top/user/pevt/main.c" | grep -v '^help$')
echo "TAP version 13"
echo "1..$(( $(echo "$cmds" | wc -w) * 3 + 1 ))"

listed=$(opts_of_page "$man/pevt.1.md")
for c in $cmds; do
	page=$man/pevt-$c.1.md
	if [ -f "$page" ] && echo "$listed" | grep -qx "$c"; then
		ok "$c: has a page, listed in pevt(1)"
	else
		echo "# want $page and '$c' in the COMMANDS of pevt.1.md"
		nok "$c: has a page, listed in pevt(1)"
	fi
done

# Compare the option sets of a source and a page, and the rendered --help.
compare() {
	local what=$1 code=$2 page=$3 helpcmd=$4 missing extra h o bad=0
	missing=$(comm -23 <(echo "$code") <(echo "$page"))
	extra=$(comm -13 <(echo "$code") <(echo "$page"))
	[ -n "$missing" ] && { echo "# $what: in the code, not on the page:" $missing; bad=1; }
	[ -n "$extra" ] && { echo "# $what: on the page, not in the code:" $extra; bad=1; }
	if [ -n "$helpcmd" ]; then
		h=$($helpcmd 2>&1)
		for o in $page; do
			echo "$h" | grep -qE -- "(^|[ ,])$o([ ,]|$)" || { echo "# $what: '$helpcmd' does not show $o"; bad=1; }
		done
	fi
	if [ $bad = 0 ] && [ -n "$code" ]; then ok "$what: options of code, page and --help agree"; else nok "$what: options of code, page and --help agree"; fi
}

compare "pevt" "$(opts_of_c "$top/user/pevt/main.c")" "$(opts_of_page "$man/pevt.1.md" | grep '^-')" "$pevt --help"
for c in $cmds; do
	src=$top/user/pevt/$c.c
	[ -f "$man/pevt-$c.1.md" ] || { nok "$c: options of code, page and --help agree"; continue; }
	if [ "$c" = bench ]; then
		code=$( { sed -nE 's/^\s*\{ "([a-z-]+)",\s*bench_[a-z_]+,.*/\1/p' "$src"
			  grep -ohE 'is_prefix\(\*?[a-z]+, "[a-z]+"\)' "$top"/user/pevt/bench*.c |
			  sed -E 's/.*"([a-z]+)".*/\1/'; } | grep -vx help | sort -u)
		compare "bench" "$code" "$(opts_of_page "$man/pevt-bench.1.md")" ""
	else
		# a subcommand's own file too (data.c, data_repeat.c)
		compare "$c" "$(opts_of_c "$src" $(ls "$top/user/pevt/${c}_"*.c 2>/dev/null))" \
			"$(opts_of_page "$man/pevt-$c.1.md")" "$pevt $c --help"
	fi
done
# `pevt help CMD` opens the page (installed, else the built one).
for c in $cmds; do
	if MANPAGER=cat MANWIDTH=80 "$pevt" help "$c" 2>&1 | grep -q "^PEVT-${c^^}(1)"; then
		ok "pevt help $c opens pevt-$c(1)"
	else
		MANPAGER=cat "$pevt" help "$c" 2>&1 | head -5 | sed 's/^/# /'
		nok "pevt help $c opens pevt-$c(1)"
	fi
done
exit $failed
