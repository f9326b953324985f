# SPDX-License-Identifier: GPL-2.0
# Shared shell helpers; sourced, never run.
: "${top:?}"
export PEVT_CACHE=${PEVT_CACHE:-$top/build/cache}
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# "1m07s" for 67.
dur() { if [ "$1" -ge 60 ]; then printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); else printf '%ds' "$1"; fi; }

# progress_stream LABEL START TIMINGS SHOW NAME...
# Follows a guest's results stream on stdin ("# pevt-boot ...", "# pevt-run
# NAME", "# pevt-exit NAME RC", TAP lines) and, if SHOW is 1, says on
# stdout which of the NAMEs runs, the time since START (epoch s) and an
# estimate of what is left: from TIMINGS ("NAME SECONDS" lines kept from
# earlier runs, updated at the end of this one), else from the mean so far.
progress_stream() {
	local label=$1 t0=$2 tfile=$3 show=$4; shift 4
	local names=("$@") total=$# i=0 name= ts=0 now line left n s bad=0 done_s=0 known
	declare -A prev=() seen=()
	if [ -s "$tfile" ]; then
		while read -r n s; do prev[$n]=$s; done < "$tfile"
	fi
	# (never a failing status: vmtest.sh's set -e would end the stream,
	# and the timings with it, off a terminal)
	say() { [ "$show" = 1 ] || return 0; printf '[%s] %s: %s\n' "$(date +%H:%M:%S)" "$label" "$*"; }
	while IFS= read -r line; do
		line=${line%$'\r'}
		now=$(date +%s)
		case "$line" in
		"# pevt-boot "*)
			say "booted ${line#\# pevt-boot } in $(dur $((now - t0)))" ;;
		"# pevt-run "*)
			name=${line#\# pevt-run } ts=$now bad=0 i=$((i + 1))
			seen[$name]=1
			left=0 known=1
			for n in "${names[@]}"; do
				[ -n "${seen[$n]:-}" ] && [ "$n" != "$name" ] && continue
				[ -n "${prev[$n]:-}" ] || { known=0; break; }
				left=$((left + prev[$n]))
			done
			if [ $known = 1 ]; then
				left="~$(dur $left)"
			elif [ $i -gt 1 ]; then
				left="~$(dur $(( done_s / (i - 1) * (total - i + 1) )))"
			else
				left="?"
			fi
			say "[$i/$total] $name  ($(dur $((now - t0))) elapsed, $left left)" ;;
		"not ok "*) bad=$((bad + 1)) ;;
		"# pevt-exit "*)
			set -- $line
			prev[$3]=$((now - ts))
			done_s=$((done_s + now - ts))
			if { [ "$4" != 0 ] && [ "$4" != 4 ]; } || [ $bad != 0 ]; then
				say "  $3: exit $4, $bad failed ($(dur $((now - ts))))"
			fi ;;
		"# pevt-done"*)
			for n in "${!prev[@]}"; do echo "$n ${prev[$n]}"; done > "$tfile.new" &&
				mv "$tfile.new" "$tfile" ;;
		esac
	done
}
