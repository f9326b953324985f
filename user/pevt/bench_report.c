// SPDX-License-Identifier: GPL-2.0
/*
 * pevt bench report: the same perf.data files read by Debian's
 * `perf report --stdio` and by `pevt report --stdio` on 1 and on all CPUs,
 * with and without children: wall time, CPU time, peak RSS, samples/s,
 * and whether the rows are the same (--no-children: byte for byte, minus
 * perf's random tip line).  Documentation/report.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <pevt/data_reader.h>

#include "main.h"

#define MAX_FILES	16

struct run {
	double wall, cpu;	/* s, medians */
	long rss_kb;		/* max over the reps */
	int status;
};

/* graph yes: the call graph modes too (perf report's default is --children) */
static const char *const modes[] = { "--no-children -g none", "--children -g none",
				     "--no-children", "--children" };

/* Run @argv with stdout to @out (or /dev/null); rusage of the child. */
static int run_once(char *const argv[], const char *out, struct run *r)
{
	struct rusage ru;
	uint64_t t0 = now_ns();
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		int fd = open(out ?: "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int dn = open("/dev/null", O_WRONLY);

		if (fd < 0 || dn < 0)
			_exit(127);
		dup2(fd, 1);
		dup2(dn, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) < 0)
		return -errno;
	r->wall = (now_ns() - t0) / 1e9;
	r->cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		 ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	r->rss_kb = ru.ru_maxrss;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

static int run_reps(char *const argv[], const char *out, int reps, struct run *res)
{
	double wall[64], cpu[64];
	int i, err;

	res->rss_kb = 0;
	res->status = 0;
	for (i = 0; i < reps; i++) {
		struct run r = { 0 };

		err = run_once(argv, out, &r);
		if (err)
			return err;
		wall[i] = r.wall;
		cpu[i] = r.cpu;
		if (r.rss_kb > res->rss_kb)
			res->rss_kb = r.rss_kb;
		if (r.status)
			res->status = r.status;
	}
	res->wall = median(wall, reps);
	res->cpu = median(cpu, reps);
	return 0;
}

static int count_cb(struct pevt_data *d, const struct pevt_data_rec *r, void *ctx)
{
	return 0;
}

static uint64_t nr_samples(const char *file)
{
	struct pevt_data *d = pevt_data__open(file);
	uint64_t n = 0;

	if (!d)
		return 0;
	if (pevt_data__nr_streams(d) && !pevt_data__for_each(d, count_cb, NULL))
		n = pevt_data__stats(d)->nr[PERF_RECORD_SAMPLE];
	pevt_data__delete(d);
	return n;
}

/* The two outputs equal, perf's "(Tip: ...)" line and ours left out. */
static int same_rows(const char a[64], const char b[64])
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "grep -v '(Tip' %s > %s.x; grep -v '(Tip' %s > %s.x;"
		 " cmp -s %s.x %s.x; r=$?; rm -f %s.x %s.x; exit $r", a, a, b, b, a, b, a, b);
	return system(cmd) == 0;
}

int bench_report(int argc, char **argv)
{
	const char *files[MAX_FILES], *json = NULL;
	char self[4096], nthr[16], tmpa[64], tmpb[64];
	int nr_files = 0, reps = 1, threads = sysconf(_SC_NPROCESSORS_ONLN), f, m, t, nr_modes = 2;
	ssize_t n;
	FILE *jf = NULL;
	bool first = true;
	uint64_t t0;
	int step = 0;

	while (argc > 0) {
		if (!strcmp(*argv, "-h") || !strcmp(*argv, "--help") || !strcmp(*argv, "help")) {
			printf("usage: %s bench report [reps R] [threads N] [graph yes|no] [json FILE] FILE...\n",
			       bin_name);
			return 0;
		} else if (!strcmp(*argv, "graph") && argc > 1) {
			if (strcmp(argv[1], "yes") && strcmp(argv[1], "no")) {
				p_err("graph: 'yes' or 'no', not '%s'", argv[1]);
				return -1;
			}
			nr_modes = !strcmp(argv[1], "yes") ? 4 : 2;
			argc -= 2, argv += 2;
		} else if (!strcmp(*argv, "reps") && argc > 1) {
			reps = atoi(argv[1]);
			argc -= 2, argv += 2;
		} else if (is_prefix(*argv, "threads") && argc > 1) {
			threads = atoi(argv[1]);
			argc -= 2, argv += 2;
		} else if (!strcmp(*argv, "json") && argc > 1) {
			json = argv[1];
			argc -= 2, argv += 2;
		} else if (nr_files < MAX_FILES) {
			files[nr_files++] = *argv;
			argc--, argv++;
		} else {
			p_err("at most %d files", MAX_FILES);
			return -1;
		}
	}
	if (!nr_files || reps < 1 || reps > 64 || threads < 1) {
		p_err("usage: %s bench report [reps R] [threads N] [graph yes|no] [json FILE] FILE...",
		      bin_name);
		return -1;
	}
	/* a missing file (or a misspelt option) before perf runs on it */
	for (f = 0; f < nr_files; f++) {
		if (access(files[f], R_OK)) {
			p_err("%s: %s", files[f], strerror(errno));
			return -1;
		}
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		p_err("cannot find the pevt binary: %s", strerror(errno));
		return -1;
	}
	self[n] = 0;
	snprintf(nthr, sizeof(nthr), "%d", threads);
	snprintf(tmpa, sizeof(tmpa), "/tmp/pevt-bench-report.%d.perf", getpid());
	snprintf(tmpb, sizeof(tmpb), "/tmp/pevt-bench-report.%d.pevt", getpid());
	if (json) {
		jf = fopen(json, "w");
		if (!jf) {
			p_err("%s: %s", json, strerror(errno));
			return -1;
		}
		fprintf(jf, "[");
	}
	printf("%-28s %-22s %-10s %8s %8s %9s %12s %7s %6s\n", "file", "mode", "tool", "wall s",
	       "cpu s", "rss MB", "samples/s", "x perf", "same");
	t0 = now_ns();
	for (f = 0; f < nr_files; f++) {
		uint64_t ns = nr_samples(files[f]);

		for (m = 0; m < nr_modes; m++) {
			char *margv[3] = { 0 };
			char mbuf[64];
			struct run perf_r = { 0 };

			snprintf(mbuf, sizeof(mbuf), "%s", modes[m]);
			margv[0] = strtok(mbuf, " ");
			margv[1] = strtok(NULL, " ");
			margv[2] = strtok(NULL, " ");
			for (t = 0; t < 3; t++) {
				char *av[16] = { 0 };
				const char *tool = t == 0 ? "perf" : t == 1 ? "pevt-1" : "pevt-N";
				struct run r = { 0 };
				int k = 0, same = -1;

				if (t == 0) {
					av[k++] = "perf";
					av[k++] = "report";
				} else {
					av[k++] = self;
					av[k++] = "report";
					av[k++] = "--threads";
					av[k++] = t == 1 ? "1" : nthr;
				}
				av[k++] = "--stdio";
				av[k++] = "-i";
				av[k++] = (char *)files[f];
				av[k++] = margv[0];
				av[k++] = margv[1];
				av[k++] = margv[2];
				progress(true, t0, step++, nr_files * nr_modes * 3, "%s %s: %s x %d",
					 tool, modes[m], files[f], reps);
				if (run_reps(av, t == 0 ? tmpa : tmpb, reps, &r)) {
					p_err("cannot run %s", av[0]);
					continue;
				}
				if (t == 0)
					perf_r = r;
				else if (m == 0)
					same = same_rows(tmpa, tmpb);
				printf("%-28.28s %-22s %-10s %8.2f %8.2f %9.1f %12.0f %7.2f %6s\n", files[f],
				       modes[m], t == 2 ? (snprintf(mbuf, sizeof(mbuf), "pevt-%d", threads), mbuf) : tool,
				       r.wall, r.cpu, r.rss_kb / 1024.0, r.wall > 0 ? ns / r.wall : 0,
				       r.wall > 0 ? perf_r.wall / r.wall : 0,
				       r.status ? "error" : same < 0 ? "-" : same ? "yes" : "NO");
				if (jf) {
					fprintf(jf, "%s{\"file\":", first ? "" : ",");
					json_str(jf, files[f]);
					fprintf(jf, ",\"mode\":");
					json_str(jf, modes[m]);
					fprintf(jf, ",\"tool\":\"%s\",\"threads\":%d,\"wall_s\":%.4f,"
						"\"cpu_s\":%.4f,\"rss_kb\":%ld,\"samples\":%" PRIu64
						",\"samples_per_s\":%.1f,\"exit\":%d,\"same_as_perf\":%s"
						",\"speedup_wall\":%.3f}",
						t == 0 ? "perf" : "pevt", t == 0 ? 1 : t == 1 ? 1 : threads,
						r.wall, r.cpu, r.rss_kb, ns, r.wall > 0 ? ns / r.wall : 0,
						r.status, same < 0 ? "null" : same ? "true" : "false",
						t && r.wall > 0 ? perf_r.wall / r.wall : 1.0);
					first = false;
				}
			}
		}
	}
	unlink(tmpa);
	unlink(tmpb);
	if (jf) {
		fprintf(jf, "]\n");
		fclose(jf);
	}
	return 0;
}
