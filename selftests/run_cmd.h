/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run a tool's command line from a test, stdout and stderr captured
 * (stat_test, fairness_test).
 */
#ifndef PEVT_SELFTESTS_RUN_CMD_H
#define PEVT_SELFTESTS_RUN_CMD_H

#include <libgen.h>
#include <limits.h>
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

/*
 * The pevt binary a host test runs: $PEVT_BIN, else build/bin/pevt seen
 * from the test's own build/tests/host/.  Into @bin (PATH_MAX bytes).
 */
static inline void host_pevt_bin(char *bin)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (getenv("PEVT_BIN")) {
		snprintf(bin, PATH_MAX, "%s", getenv("PEVT_BIN"));
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(bin, PATH_MAX, "%s/../../bin/pevt", dirname(exe));
}

/*
 * A test's scratch directory: /tmp/@name.XXXXXX made and entered (@dir,
 * 64 bytes); left and removed with everything in it by tmpdir_leave().
 * Returns 0, or -1 with errno.
 */
static inline int tmpdir_enter(char *dir, const char *name)
{
	snprintf(dir, 64, "/tmp/%s.XXXXXX", name);
	if (!mkdtemp(dir)) {
		dir[0] = '\0';
		return -1;
	}
	return chdir(dir);
}

static inline void tmpdir_leave(const char *dir)
{
	char cmd[128];

	if (chdir("/") || !dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", dir);
}

#endif /* PEVT_SELFTESTS_RUN_CMD_H */
