// SPDX-License-Identifier: GPL-2.0
/*
 * pevt: perf stat/record/report/bench for /dev/pevt and the stock kernel.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

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

/*
 * Long work says what it does, on stderr: every call on a terminal, only
 * the @step ones elsewhere (one line per step in logs); PEVT_PROGRESS=0/1
 * overrides the terminal test (make demo sets it in the guest).  "# " marks them
 * apart from results in a stream (make demo reads the guest's).  @done
 * of @total, with @t0 (now_ns()) the elapsed time and an estimate of
 * what is left, when @done > 0.
 */
void progress(bool step, uint64_t t0, int done, int total, const char *fmt, ...)
{
	static int tty = -1;
	double el = (now_ns() - t0) / 1e9;
	va_list ap;

	if (tty < 0) {
		const char *e = getenv("PEVT_PROGRESS");

		tty = e && *e ? !strcmp(e, "1") : isatty(STDERR_FILENO);
	}
	if (!step && !tty)
		return;
	fprintf(stderr, "# ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (%d/%d, %.0fs elapsed", done + 1, total, el);
	if (done > 0)
		fprintf(stderr, ", ~%.0fs left", el / done * (total - done));
	fprintf(stderr, ")\n");
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

/*
 * The subcommands.  Adding one: a line here, its do_NAME() in NAME.c
 * (declared in main.h) and its page Documentation/man/pevt-NAME.1.md,
 * which is also its --help text (pevt_help_text("NAME")) and what
 * `pevt help NAME` opens.
 */
static int do_help(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "help",	do_help,	"a command's manual page, or this text" },
	{ "bench",	do_bench,	"A/B benchmarks: pevt against the stock kernel" },
	{ "data",	do_data,	"index a perf.data file for parallel reports" },
	{ "list",	do_list,	"the events, and the backends that open them" },
	{ "record",	do_record,	"sample into a perf.data file stock perf reads" },
	{ "report",	do_report,	"perf.data report like perf report --stdio" },
	{ "stat",	do_stat,	"count events like perf stat, stock or pevt backend" },
	{ 0 }
};

/* Print @cmd's --help text (from its man page source) on stderr. */
int print_help(const char *cmd)
{
	const char *t = pevt_help_text(cmd);

	if (json_output) {
		fprintf(stdout, "null\n");
		return 0;
	}
	fputs(t ? t : "no help text\n", stderr);
	return 0;
}

/*
 * `pevt help CMD`: man pevt-CMD, installed or else from the build tree,
 * else the --help text.
 */
static int do_help(int argc, char **argv)
{
	char page[128], path[512];
	unsigned int i;
	pid_t pid;
	int st;

	if (argc < 1)
		return print_help("");
	snprintf(page, sizeof(page), "pevt-%s", argv[0]);
	for (i = 0; page[i]; i++)
		if (page[i] == ' ')
			page[i] = '-';
	if (!pevt_help_text(argv[0])) {
		p_err("no manual page for '%s' (commands: see '%s help')", argv[0], bin_name);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.1", pevt_build_mandir, page);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* the installed page, else the one built with this binary */
		execl("/bin/sh", "sh", "-c",
		      "man -w \"$1\" >/dev/null 2>&1 && exec man \"$1\"; "
		      "[ -r \"$2\" ] && exec man -l \"$2\"; exit 127",
		      "sh", page, path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	return print_help(argv[0]);
}

void usage(void)
{
	print_help("");
	exit(EXIT_FAILURE);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json",	no_argument,	NULL,	'j' },
		{ "help",	no_argument,	NULL,	'h' },
		{ "version",	no_argument,	NULL,	'V' },
		{ 0 }
	};
	int opt, ret;

	bin_name = argv[0];
	while ((opt = getopt_long(argc, argv, "+jhV", opts, NULL)) >= 0) {
		switch (opt) {
		case 'j':
			json_output = true;
			break;
		case 'h':
			do_help(0, NULL);
			return 0;
		case 'V':
			printf("pevt %s\n", pevt_version);
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
