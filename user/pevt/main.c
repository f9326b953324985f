// SPDX-License-Identifier: GPL-2.0
/*
 * pevt: perf stat/record/report/bench for /dev/pevt and the stock kernel.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>

#include "main.h"

const char *bin_name;
bool json_output;

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (json_output) {
		/* Errors go to stderr as one JSON object, escaped. */
		char msg[1024];
		const char *c;

		vsnprintf(msg, sizeof(msg), fmt, ap);
		fputs("{\"error\":\"", stderr);
		for (c = msg; *c; c++) {
			if (*c == '"' || *c == '\\')
				fprintf(stderr, "\\%c", *c);
			else if ((unsigned char)*c < 0x20)
				fprintf(stderr, "\\u%04x", *c);
			else
				fputc(*c, stderr);
		}
		fputs("\"}\n", stderr);
	} else {
		fprintf(stderr, "Error: ");
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\n");
	}
	va_end(ap);
}

void p_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

bool is_prefix(const char *pfx, const char *str)
{
	return pfx && str && *pfx && !strncmp(str, pfx, strlen(pfx));
}

int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       int (*help)(int argc, char **argv))
{
	unsigned int i;

	if (argc < 1 && cmds[0].func)
		return cmds[0].func(argc, argv);
	for (i = 0; cmds[i].cmd; i++) {
		if (is_prefix(*argv, cmds[i].cmd)) {
			if (!cmds[i].func) {
				p_err("command '%s' is not available", cmds[i].cmd);
				return -1;
			}
			return cmds[i].func(argc - 1, argv + 1);
		}
	}
	help(argc - 1, argv + 1);
	return -1;
}

static int do_help(int argc, char **argv)
{
	fprintf(stderr,
		"Usage: %s [--json] OBJECT { COMMAND | help }\n"
		"       OBJECT := { bench | stat }\n"
		"\n"
		"  bench     A/B benchmarks: pevt against the stock kernel\n"
		"  stat      count events like perf stat, stock or pevt backend\n",
		bin_name);
	return 0;
}

void usage(void)
{
	do_help(0, NULL);
	exit(EXIT_FAILURE);
}

static const struct cmd cmds[] = {
	{ "help",	do_help,	"this text" },
	{ "bench",	do_bench,	"benchmarks" },
	{ "stat",	do_stat,	"count events (perf stat)" },
	{ 0 }
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json",	no_argument,	NULL,	'j' },
		{ "help",	no_argument,	NULL,	'h' },
		{ 0 }
	};
	int opt, ret;

	bin_name = argv[0];
	while ((opt = getopt_long(argc, argv, "+jh", opts, NULL)) >= 0) {
		switch (opt) {
		case 'j':
			json_output = true;
			break;
		case 'h':
			do_help(0, NULL);
			return 0;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage();
	ret = cmd_select(cmds, argc, argv, do_help);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
