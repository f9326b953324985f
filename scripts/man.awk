# SPDX-License-Identifier: GPL-2.0
#
# One source, two renderings: a man page (roff) and the --help text of a
# command, from Documentation/man/NAME.SECTION.md, so they cannot drift.
#
#   awk -v mode=man  -f scripts/man.awk Documentation/man/pevt-stat.1.md
#   awk -v mode=help -f scripts/man.awk Documentation/man/pevt-stat.1.md
#   awk -v mode=opts -f scripts/man.awk ...      the option words, one a line
#
# The source is a small subset of Markdown that reads well as it is:
#
#   # pevt-stat(1) -- one line summary       title line: name, section
#   ## SECTION                               .SH
#   text                                     paragraphs (blank line ends)
#       literal                              4-space indent: .nf block
#   - item                                   bullet list
#   -e, --event LIST                         in OPTIONS (or COMMANDS): an
#   :   what it does (first line: --help)    entry; ': ' lines describe it
#   `code` *arg*                             bold, italic
#
# --help is: the SYNOPSIS as "Usage:", the first paragraph of the
# DESCRIPTION, each OPTIONS/COMMANDS entry with the first line of its
# description, and where the page is.

function inline(s,    out, i, c, b, it) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	out = ""; b = 0; it = 0
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "`") { out = out (b ? "\\fR" : "\\fB"); b = !b; continue }
		if (c == "*" && !b) { out = out (it ? "\\fR" : "\\fI"); it = !it; continue }
		out = out c
	}
	return out
}
function plain(s) { gsub(/[`*]/, "", s); return s }
function roffline(s) { if (s ~ /^[.']/) s = "\\&" s; return s }
function flushpar() {
	if (par != "" && sect == "DESCRIPTION" && !desc_done) { help_desc = par; desc_done = 1 }
	par = ""
}
function endlit() { if (inlit && mode == "man") print ".fi\n.RE"; inlit = 0 }
# @text wrapped at 78 columns, lines after the first indented by @ind.
function wrap(text, ind,    n, w, i, line, out) {
	n = split(text, w, / +/); line = ""; out = ""
	for (i = 1; i <= n; i++) {
		if (line != "" && ind + length(line) + length(w[i]) + 1 > 78) {
			out = out line "\n" sprintf("%*s", ind, ""); line = ""
		}
		line = line (line == "" ? "" : " ") w[i]
	}
	return out line
}
function help_entry(spec, text) {
	if (length(spec) > 24)
		help_opts = help_opts sprintf("  %s\n  %-24s  %s\n", spec, "", wrap(text, 28))
	else
		help_opts = help_opts sprintf("  %-24s  %s\n", spec, wrap(text, 28))
}

NR == 1 {
	if (!match($0, /^# [^(]+\([0-9]\) -- /)) { print FILENAME ": first line must be '# name(N) -- summary'" > "/dev/stderr"; exit 1 }
	name = $2; sub(/\(.*/, "", name)
	section = $2; sub(/.*\(/, "", section); sub(/\).*/, "", section)
	summary = substr($0, index($0, ") -- ") + 5)
	if (mode == "man") {
		printf ".TH %s %s \"\" \"pevt\" \"pevt manual\"\n", toupper(name), section
		printf ".SH NAME\n%s \\- %s\n", name, inline(summary)
	}
	next
}
/^## / {
	flushpar(); endlit()
	sect = substr($0, 4)
	if (mode == "man") printf ".SH %s\n", sect
	next
}
/^    / && par == "" && !inopt {
	line = substr($0, 5)
	if (mode == "man") {
		if (!inlit) print ".RS 4\n.nf"
		gsub(/\\/, "\\e", line); gsub(/-/, "\\-", line)
		print roffline(line)
	}
	if (mode == "help" && sect == "SYNOPSIS")
		usage = usage (usage == "" ? "Usage: " : "       ") plain(line) "\n"
	inlit = 1
	next
}
/^$/ {
	flushpar(); endlit()
	inopt = 0
	next
}
(sect == "OPTIONS" || sect == "COMMANDS") && /^[-a-z`]/ && !/^- / {
	flushpar(); endlit()
	spec = $0
	if (mode == "man") printf ".TP\n%s\n", inline(spec)
	if (mode == "opts") {
		n = split(plain(spec), w, /[ ,|]+/)
		# "-e, --event LIST" -> -e --event; "ms MS" (a keyword) -> ms
		for (i = 1; i <= n; i++) if (w[i] ~ /^-/ || (i == 1 && w[1] !~ /^-/)) print w[i]
	}
	pending = spec
	inopt = 1
	cont = 0
	next
}
/^: / || /^:\t/ {
	text = $0; sub(/^:[ \t]+/, "", text)
	if (mode == "man") print roffline(inline(text))
	if (mode == "help" && pending != "") { help_entry(plain(pending), plain(text)); pending = "" }
	next
}
inopt && /^  / {
	text = $0; sub(/^ +/, "", text)
	if (mode == "man" && !cont++) print ".IP"
	if (mode == "man") print roffline(inline(text))
	next
}
/^- / {
	flushpar(); endlit()
	if (mode == "man") printf ".IP \\(bu 2\n%s\n", roffline(inline(substr($0, 3)))
	next
}
/^  / && !inlit {
	# continuation of a bullet
	text = $0; sub(/^ +/, "", text)
	if (mode == "man") print roffline(inline(text))
	next
}
{
	endlit()
	if (par == "" && mode == "man") print ".PP"
	par = par (par == "" ? "" : " ") $0
	if (mode == "man") print roffline(inline($0))
}
END {
	if (mode == "man") { endlit(); exit }
	if (mode == "help") {
		printf "%s", usage
		if (help_desc != "")
			printf "\n%s\n", wrap(plain(help_desc), 0)
		if (help_opts != "") printf "\n%s", help_opts
		printf "\nFull manual: %s help%s (man %s)\n", "pevt", (name == "pevt" ? "" : " " substr(name, 6)), name
	}
}
