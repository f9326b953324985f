#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# plot-fairness.sh DATA OUT.svg|OUT.png [TITLE]
#
# Plot what `pevt bench fairness ... data DATA` wrote, with gnuplot: per
# scenario, each group's share (running/enabled) as bars, one colour per
# scheduler, and its max-min fair optimum as a black mark; per multi-interval scenario (phased), the mean estimate error
# and the tick time per second against the multiplexing interval.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DATA OUT.svg|OUT.png [TITLE]" >&2; exit 2; }
data=$1 out=$2 title=${3:-pevt bench fairness}
command -v gnuplot >/dev/null || { echo "$0: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }
[ -r "$data" ] || { echo "$0: $data: cannot read" >&2; exit 1; }

scheds=($(sed -n '1s/.*schedulers: *//p' "$data"))
[ ${#scheds[@]} -ge 1 ] || { echo "$0: $data: no '# ... schedulers:' header (not a pevt bench fairness data file?)" >&2; exit 1; }
mapfile -t shares < <(sed -n 's/^# shares //p' "$data")
mapfile -t accs < <(sed -n 's/^# accuracy //p' "$data")
[ ${#shares[@]} -ge 1 ] || { echo "$0: $data: no share blocks" >&2; exit 1; }
ns=${#scheds[@]}
panels=$(( ${#shares[@]} + 2 * ${#accs[@]} ))
cols=4
rows=$(( (panels + cols - 1) / cols ))

case $out in
*.svg) term="svg size $((cols * 330)),$((rows * 260 + 40)) dynamic font 'sans,10'" ;;
*.png) term="pngcairo size $((cols * 330)),$((rows * 260 + 40)) font 'sans,9'" ;;
*) echo "$0: $out: name it .svg or .png" >&2; exit 2 ;;
esac

# plot_cmd INDEX USING FIRST: a gnuplot "plot" of data block INDEX, one
# curve per scheduler; in USING, @ stands for that scheduler's column,
# FIRST for the first scheduler's.
plot_cmd() {
	local c p="plot '$data'"
	for ((c = 0; c < ns; c++)); do
		[ $c -gt 0 ] && p+=", ''"
		p+=" index $1 using ${2//@/$(($3 + c))} title '${scheds[c]}'"
	done
	echo "$p"
}

{
	echo "set terminal $term"
	echo "set output '$out'"
	echo "set multiplot layout $rows,$cols title '$title'"
	echo "set style data histograms; set style histogram clustered gap 1"
	echo "set style fill solid 0.8 border -1; set boxwidth 0.9"
	echo "set yrange [0:1.3]; set ytics 0,0.25,1; set grid ytics"
	echo "set key top center horizontal font ',8' samplen 1"
	i=0
	for s in "${shares[@]}"; do
		echo "set title '${s% *} (${s##* } ms)'"
		# the max-min fair optimum (last column) as a black mark per group
		echo "$(plot_cmd $i '@:xtic(1)' 2), '' index $i using (\$0):$((ns + 2)) with points pt 7 ps 0.7 lc rgb 'black' title 'optimum'"
		i=$((i + 1))
	done
	echo "set style data linespoints; set logscale x 2; set autoscale y; set ytics autofreq; set offsets 0, 0, graph 0.25, 0"
	for s in "${accs[@]}"; do
		echo "set title '$s: mean estimate error'; set xlabel 'mux interval (ms)'; set yrange [0:*]"
		plot_cmd $i '1:@' 2
		echo "set title '$s: timer time (ms per s)'"
		plot_cmd $i '1:($@/1e6)' $((2 + ns))
		i=$((i + 1))
	done
	echo "unset multiplot"
} > "$out.gp"
gnuplot "$out.gp"
rm -f "$out.gp"
echo "plot: $out"
