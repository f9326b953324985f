// SPDX-License-Identifier: GPL-2.0
/*
 * Targets shared by the pevt subcommands: threads of a process, the
 * forked workload, liveness of a pid, event list errors.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "main.h"
#include "target.h"

int proc_add_threads(int pid, int **v, int *n)
{
	char path[64];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while ((de = readdir(dir))) {
		int *nv;

		if (de->d_name[0] == '.')
			continue;
		nv = realloc(*v, (*n + 1) * sizeof(**v));
		if (!nv) {
			closedir(dir);
			return -ENOMEM;
		}
		*v = nv;
		(*v)[(*n)++] = atoi(de->d_name);
	}
	closedir(dir);
	return 0;
}

/*
 * Fork the workload stopped before exec (perf's evlist__prepare_workload):
 * it blocks on go_fd until the counters are enabled, and reports an exec
 * failure through a close-on-exec pipe.
 */
int workload_prepare(char **argv, const sigset_t *oldmask, bool stdout_to_stderr,
		     pid_t *child, int *go_fd, int *err_fd)
{
	int go[2], ep[2];
	char c;

	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		return -errno;
	*child = fork();
	if (*child < 0)
		return -errno;
	if (!*child) {
		int e;

		close(go[1]);
		close(ep[0]);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		/* Pipe mode: stdout carries the data, not the workload's output. */
		if (stdout_to_stderr)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the parent gave up */
		execvp(argv[0], argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	*go_fd = go[1];
	*err_fd = ep[0];
	return 0;
}

int id_list_parse(const char *arg, long min, const char *opt, int **v, int *n)
{
	char *s = strdup(arg), *tok, *save = NULL, *end;

	if (!s)
		return -ENOMEM;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long id = strtol(tok, &end, 10);
		int *nv;

		if (*end || end == tok || id < min || id > INT_MAX) {
			p_err("%s: '%s' is not a number >= %ld", opt, tok, min);
			free(s);
			return -EINVAL;
		}
		nv = realloc(*v, (*n + 1) * sizeof(*nv));
		if (!nv) {
			free(s);
			return -ENOMEM;
		}
		*v = nv;
		(*v)[(*n)++] = id;
	}
	free(s);
	return 0;
}

/* A zombie has exited: its parent may not reap it before we are done. */
bool pid_alive(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

void join_args(char *buf, size_t size, int argc, char **argv)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < argc && n + 1 < size; i++)
		n += snprintf(buf + n, size - n, "%s%s", i ? " " : "", argv[i]);
}

void report_parse_error(const char *list, const struct pevt_parse_error *e)
{
	if (e->pos < 0) {
		p_err("invalid event list '%s': %s", list, e->msg);
		return;
	}
	p_err("event syntax error at position %d ('%s'): %s", e->pos, e->token, e->msg);
	if (!json_output)
		p_info("  %s\n  %*s^", list, e->pos, "");
}


int event_list_append(char **list, const char *more)
{
	size_t n = *list ? strlen(*list) : 0;
	char *s = realloc(*list, n + strlen(more) + 2);

	if (!s)
		return -ENOMEM;
	if (n)
		s[n++] = ',';
	strcpy(s + n, more);
	*list = s;
	return 0;
}
