/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run a tool's command line from a test, stdout and stderr captured
 * (stat_test, fairness_test).
 */
#ifndef PEVT_SELFTESTS_RUN_CMD_H
#define PEVT_SELFTESTS_RUN_CMD_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

struct out {
	char *out, *err;
	int status;		/* exit code, 128+sig if killed */
};

static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

/* Run a shell command line with stdout and stderr captured. */
static inline void __attribute__((format(printf, 2, 3)))
run(struct out *o, const char *fmt, ...)
{
	char cmd[2048], line[2300], out[64], err[64];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	/* Per process: host tests of several worktrees may run at once. */
	snprintf(out, sizeof(out), "/tmp/run_cmd.%d.out", (int)getpid());
	snprintf(err, sizeof(err), "/tmp/run_cmd.%d.err", (int)getpid());
	snprintf(line, sizeof(line), "%s >%s 2>%s", cmd, out, err);
	st = system(line);
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	o->out = slurp(out);
	o->err = slurp(err);
	unlink(out);
	unlink(err);
}

static inline void out_free(struct out *o)
{
	free(o->out);
	free(o->err);
}

#endif /* PEVT_SELFTESTS_RUN_CMD_H */
