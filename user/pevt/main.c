// SPDX-License-Identifier: GPL-2.0
/*
 * pevt: perf stat/record/report/bench for /dev/pevt and the stock kernel.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

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

		vsnprintf(msg, sizeof(msg), fmt, ap);
		fputs("{\"error\":", stderr);
		json_str(stderr, msg);
		fputs("}\n", stderr);
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

/* @s as a JSON string, quoted and escaped (NULL: ""). */
void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v in place. */
double median(double *v, unsigned long n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The number @s given to argument @name, within min..max; else a message
 * naming both and -1.
 */
int arg_ulong(const char *name, const char *s, unsigned long min,
		unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max) {
		p_err("%s: '%s' is not a number in %lu..%lu", name, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
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
		"       OBJECT := { bench | record | report | stat }\n"
		"\n"
		"  bench     A/B benchmarks: pevt against the stock kernel\n"
		"  record    sample into a perf.data file stock perf reads\n"
		"  report    perf.data report like perf report --stdio\n"
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
	{ "record",	do_record,	"sample into perf.data (perf record)" },
	{ "stat",	do_stat,	"count events (perf stat)" },
	{ "report",	do_report,	"perf.data report (perf report --stdio)" },
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
