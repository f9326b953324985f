// SPDX-License-Identifier: GPL-2.0
/*
 * pevt bench record: Debian perf record against pevt record on the same
 * workload, in the same boot, one after the other.
 *
 * The workload is `pevt bench record-loop N FILE`: N getppid() calls, the
 * i-th passing i as its first argument, so that every
 * raw_syscalls:sys_enter sample carries a sequence number in its RAW
 * args.  `perf script -F trace` of each file gives the sequence numbers
 * kept: lost = N - distinct, duplicates = kept - distinct, exactly, on
 * every row (both backends write PERF_SAMPLE_RAW).  The loop writes its own CPU
 * time to FILE so the recorder's CPU time is the rest of what wait4()
 * reports for the recorder and its child.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "main.h"

struct rec_row {
	char name[64];
	char cmd[512];
	bool seq;			/* samples carry the sequence number */
	bool perf;			/* a Debian perf row */
	bool z;				/* -z: the row's compressed twin */
	bool ztwin;			/* gets a -z twin (with z yes) */
	int base;			/* -z rows: the same recorder without -z */
	int pages;
	/* results */
	int status;
	uint64_t kept, distinct, dups, lost;
	int64_t kernel_lost;		/* LOST_SAMPLES: perf report's total */
	uint64_t lost_recs;		/* the sum of the LOST records */
	uint64_t bytes;
	double wall, cpu;
};

#define MAX_ROWS	48

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

int bench_record_loop(int argc, char **argv)
{
	struct rusage ru;
	long n, i;
	FILE *f;

	if (argc < 2)
		return -1;
	n = atol(argv[0]);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid, i);
	getrusage(RUSAGE_SELF, &ru);
	f = fopen(argv[1], "w");
	if (f) {
		fprintf(f, "%.6f\n", tv_s(ru.ru_utime) + tv_s(ru.ru_stime));
		fclose(f);
	}
	return 0;
}

/* Sequence numbers of the getppid() samples of @file: kept, distinct, dups. */
static int count_seq(struct rec_row *r, const char *file, long n)
{
	char cmd[512], line[512];
	uint8_t *seen = calloc((n + 7) / 8, 1);
	FILE *p;

	if (!seen)
		return -ENOMEM;
	snprintf(cmd, sizeof(cmd), "perf script -F trace --show-lost-events -i %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p) {
		free(seen);
		return -errno;
	}
	while (fgets(line, sizeof(line), p)) {
		unsigned long long s;
		char *q = strstr(line, "NR 110 (");

		if (sscanf(line, "PERF_RECORD_LOST lost %llu", &s) == 1) {
			r->lost_recs += s;
			continue;
		}
		if (!q || sscanf(q + 8, "%llx", &s) != 1 || s >= (unsigned long long)n)
			continue;
		r->kept++;
		if (seen[s / 8] & (1 << (s % 8))) {
			r->dups++;
		} else {
			seen[s / 8] |= 1 << (s % 8);
			r->distinct++;
		}
	}
	pclose(p);
	free(seen);
	r->lost = n - r->distinct;
	return 0;
}

/*
 * The kernel's count of dropped samples (read_format LOST) as the
 * recorder wrote it at the end (PERF_RECORD_LOST_SAMPLES): perf report's
 * "Total Lost Samples" line, -1 when it has none.
 */
static int64_t kernel_lost_of(const char *file)
{
	char cmd[512], line[256];
	long long v = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "perf report --stdio --sort cpu -g none -i %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (v < 0 && sscanf(line, "# Total Lost Samples: %lld", &v) == 1)
			continue;
	pclose(p);
	return v;
}

static int count_samples(struct rec_row *r, const char *file, long n)
{
	char cmd[512], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "perf script -F tid -i %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p))
		r->kept++;
	pclose(p);
	/* Every syscall of the loop's process; at least the N getppid(). */
	r->lost = r->kept >= (uint64_t)n ? 0 : n - r->kept;
	return 0;
}

static void run_row(struct rec_row *r, int idx, long n, const char *dir)
{
	char file[256], cpuf[256], cmd[1024], buf[64];
	struct timeval t0, t1;
	struct rusage ru;
	struct stat st;
	double loop_cpu = 0;
	pid_t pid;
	int status;
	FILE *f;

	/* perf --threads writes a directory: one name per row, removed after. */
	snprintf(file, sizeof(file), "%s/row%d.data", dir, idx);
	snprintf(cpuf, sizeof(cpuf), "%s/loop.cpu", dir);
	unlink(cpuf);
	snprintf(cmd, sizeof(cmd), "%s -o %s -- /proc/%d/exe bench record-loop %ld %s >/dev/null 2>&1",
		 r->cmd, file, (int)getpid(), n, cpuf);
	gettimeofday(&t0, NULL);
	pid = fork();
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) {
		r->status = -1;
		return;
	}
	gettimeofday(&t1, NULL);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_usec - t0.tv_usec) / 1e6;
	f = fopen(cpuf, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			loop_cpu = atof(buf);
		fclose(f);
	}
	r->cpu = tv_s(ru.ru_utime) + tv_s(ru.ru_stime) - loop_cpu;
	/* A directory (--threads): its data files are not summed here. */
	r->bytes = stat(file, &st) || !S_ISREG(st.st_mode) ? 0 : st.st_size;
	r->kernel_lost = -1;
	if (!r->status) {
		if (r->seq)
			count_seq(r, file, n);
		else
			count_samples(r, file, n);
		r->kernel_lost = kernel_lost_of(file);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", file);
	if (system(cmd))
		p_info("could not remove %s", file);
}

/* perf's best mode at @pages: the fewest lost among the rows that ran. */
static const struct rec_row *best_perf(const struct rec_row *rows, int nr, int pages)
{
	const struct rec_row *b = NULL;
	int i;

	for (i = 0; i < nr; i++) {
		const struct rec_row *r = &rows[i];

		if (r->perf && !r->z && r->pages == pages && !r->status &&
		    (!b || r->lost < b->lost))
			b = r;
	}
	return b;
}

/* a / b, with 0 / 0 = 0 and x / 0 = inf. */
static double ratio(double a, double b)
{
	return b ? a / b : a ? 1.0 / 0.0 : 0;
}

/*
 * The targets as ratios to perf's best mode at the same -m:
 * loss (0 at -m 16, <= 0.2 x perf's at -m 1) and recorder CPU time (<= 1).
 */
static void print_ratios(const struct rec_row *rows, int nr)
{
	int i;

	printf("\n%-26s %-26s %12s %12s\n", "pevt row", "perf's best mode", "lost ratio",
	       "cpu ratio");
	for (i = 0; i < nr; i++) {
		const struct rec_row *r = &rows[i], *b;

		if (r->perf || r->status || !(b = best_perf(rows, nr, r->pages)))
			continue;
		printf("%-26s %-26s %12.3f %12.3f\n", r->name, b->name,
		       ratio(r->lost, b->lost), ratio(r->cpu, b->cpu));
	}
}

/* Bytes per kept sample of a row (0 when nothing was kept). */
static double per_sample(const struct rec_row *r)
{
	return r->kept ? (double)r->bytes / r->kept : 0;
}

/* Compression ratio of a -z row: its twin's bytes per sample / its own. */
static double zratio(const struct rec_row *rows, const struct rec_row *r)
{
	const struct rec_row *u = &rows[r->base];

	return u->status || r->status ? 0 : ratio(per_sample(u), per_sample(r));
}

/* The perf -z row at @pages, when it ran. */
static const struct rec_row *perf_z(const struct rec_row *rows, int nr, int pages)
{
	int i;

	for (i = 0; i < nr; i++)
		if (rows[i].perf && rows[i].z && rows[i].pages == pages && !rows[i].status)
			return &rows[i];
	return NULL;
}

/*
 * -z rows: the compression ratio (bytes per kept sample without -z over
 * with it, same recorder, same -m), pevt's over perf's (the target: within
 * 10%), and the loss with -z over the loss without.
 */
static void print_compression(const struct rec_row *rows, int nr)
{
	int i, any = 0;

	for (i = 0; i < nr; i++) {
		const struct rec_row *r = &rows[i], *pz;

		if (!r->z)
			continue;
		if (!any++)
			printf("\n%-26s %10s %10s %12s %12s\n", "-z row", "B/sample",
			       "z ratio", "vs perf -z", "lost vs no -z");
		if (r->status) {
			printf("%-26s failed (exit %d)\n", r->name, r->status);
			continue;
		}
		pz = perf_z(rows, nr, r->pages);
		printf("%-26s %10.1f %10.2f ", r->name, per_sample(r), zratio(rows, r));
		if (!r->perf && pz)
			printf("%12.3f", ratio(zratio(rows, r), zratio(rows, pz)));
		else
			printf("%12s", "-");
		printf(" %12.3f\n", ratio(r->lost, rows[r->base].lost));
	}
}

/* ,"key":value with 4 decimals; null when infinite (x / 0, JSON has no inf). */
static void json_num(FILE *jf, const char *key, double v)
{
	if (isfinite(v))
		fprintf(jf, ",\"%s\":%.4f", key, v);
	else
		fprintf(jf, ",\"%s\":null", key);
}

static const char *cpuf_of(const char *dir)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/loop.cpu", dir);
	return path;
}

static int do_bench_record_help(void)
{
	fprintf(stderr,
		"Usage: %s bench record [calls N] [pages P[,P...]] [drains D[,D...]] [z yes|no]\n"
		"                         [json FILE]\n"
		"\n"
		"raw_syscalls:sys_enter -c 1 of N getppid() calls (default 200000),\n"
		"recorded by Debian perf (-m P, --aio, --threads) and by pevt record\n"
		"(--backend stock, and pevt when /dev/pevt exists) with each --drain D\n"
		"(default write,uring,threads,pin; pin: --pin-readers), for each P\n"
		"(default 1,16); then each pevt row's loss and CPU time as ratios to\n"
		"perf's best mode at the same P.\n"
		"With z yes, -z rows too (perf, and pevt with the first drain): their\n"
		"compression ratio next to perf's, and their loss next to the row's\n"
		"without -z.\n"
		"Documentation/record.md\n", bin_name);
	return 0;
}

int bench_record(int argc, char **argv)
{
	char pages[64] = "1,16", drains[64] = "write,uring,threads,pin", *tok, *save = NULL;
	char dir[] = "/tmp/pevt-bench-record.XXXXXX";
	const char *json = NULL;
	struct rec_row rows[MAX_ROWS];
	long n = 200000;
	int nr = 0, i, z = 0;
	FILE *jf = NULL;

	while (argc >= 2) {
		if (is_prefix(*argv, "calls"))
			n = atol(argv[1]);
		else if (is_prefix(*argv, "pages"))
			snprintf(pages, sizeof(pages), "%s", argv[1]);
		else if (is_prefix(*argv, "drains"))
			snprintf(drains, sizeof(drains), "%s", argv[1]);
		else if (is_prefix(*argv, "json"))
			json = argv[1];
		else if (is_prefix(*argv, "z") && (!strcmp(argv[1], "yes") || !strcmp(argv[1], "no")))
			z = !strcmp(argv[1], "yes");
		else
			return do_bench_record_help(), -1;
		argc -= 2;
		argv += 2;
	}
	if (argc || n <= 0)
		return do_bench_record_help(), -1;
	if (json && !(jf = fopen(json, "w"))) {
		p_err("cannot create %s: %s", json, strerror(errno));
		return -1;
	}
	if (!mkdtemp(dir)) {
		p_err("mkdtemp: %s", strerror(errno));
		return -1;
	}
	for (tok = strtok_r(pages, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		static const char *const perf_modes[] = { "", " --aio", " --threads" };
		char dl[64], *dtok, *dsave = NULL;
		int m = atoi(tok), k, first = nr;

		for (k = 0; k < 3 && nr < MAX_ROWS; k++) {
			struct rec_row *r = &rows[nr++];

			memset(r, 0, sizeof(*r));
			snprintf(r->name, sizeof(r->name), "perf -m %d%s", m, perf_modes[k]);
			snprintf(r->cmd, sizeof(r->cmd),
				 "perf record -q -e raw_syscalls:sys_enter -c 1 -m %d%s", m, perf_modes[k]);
			r->seq = true;
			r->perf = true;
			r->ztwin = k == 0;
			r->pages = m;
		}
		snprintf(dl, sizeof(dl), "%s", drains);
		for (dtok = strtok_r(dl, ",", &dsave); dtok; dtok = strtok_r(NULL, ",", &dsave)) {
			for (k = 0; k < 2 && nr < MAX_ROWS; k++) {
				struct rec_row *r = &rows[nr];

				if (k == 1 && access("/dev/pevt", F_OK))
					continue;
				memset(r, 0, sizeof(*r));
				snprintf(r->name, sizeof(r->name), "pevt %s %s -m %d",
					 k ? "pevt" : "stock", dtok, m);
				/* "pin": --drain=write with --pin-readers */
				snprintf(r->cmd, sizeof(r->cmd),
					 "/proc/%d/exe record -q --backend %s %s%s -e raw_syscalls:sys_enter -c 1 -m %d",
					 (int)getpid(), k ? "pevt" : "stock",
					 strcmp(dtok, "pin") ? "--drain=" : "--pin-readers",
					 strcmp(dtok, "pin") ? dtok : "", m);
				r->seq = true;
				r->ztwin = dtok == dl;
				r->pages = m;
				nr++;
			}
		}
		/* -z twins of perf -m P and of each backend's first drain row. */
		for (k = first, i = nr; z && k < i && nr < MAX_ROWS; k++) {
			struct rec_row *b = &rows[k], *r = &rows[nr];

			if (!b->ztwin)
				continue;
			*r = *b;
			r->z = true;
			r->ztwin = false;
			r->base = k;
			snprintf(r->name, sizeof(r->name), "%s -z", b->name);
			snprintf(r->cmd, sizeof(r->cmd), "%s -z", b->cmd);
			nr++;
		}
	}
	printf("%-26s %10s %10s %10s %10s %8s %9s %10s %8s %8s\n", "recorder", "kept", "lost",
	       "LOST recs", "kernel", "dups", "lost %", "MB", "MB/s", "cpu s");
	for (i = 0; i < nr; i++) {
		struct rec_row *r = &rows[i];
		char dups[24] = "-", kern[24] = "-", recs[24] = "-";

		run_row(r, i, n, dir);
		if (r->status) {
			printf("%-26s failed (exit %d)\n", r->name, r->status);
			continue;
		}
		if (r->seq)
			snprintf(dups, sizeof(dups), "%" PRIu64, r->dups);
		if (r->kernel_lost >= 0)
			snprintf(kern, sizeof(kern), "%" PRId64, r->kernel_lost);
		if (r->seq)
			snprintf(recs, sizeof(recs), "%" PRIu64, r->lost_recs);
		printf("%-26s %10" PRIu64 " %10" PRIu64 " %10s %10s %8s %8.3f%% %10.2f %8.1f %8.2f\n",
		       r->name, r->kept, r->lost, recs, kern,
		       dups,
		       100.0 * r->lost / n, r->bytes / 1048576.0,
		       r->wall > 0 ? r->bytes / 1048576.0 / r->wall : 0, r->cpu);
		fflush(stdout);
	}
	print_ratios(rows, nr);
	print_compression(rows, nr);
	if (jf) {
		fprintf(jf, "{\"calls\":%ld,\"rows\":[", n);
		for (i = 0; i < nr; i++) {
			struct rec_row *r = &rows[i];

			fprintf(jf, "%s{\"recorder\":", i ? "," : "");
			json_str(jf, r->name);
			fprintf(jf, ",\"exit\":%d,\"kept\":%" PRIu64 ",\"lost\":%" PRIu64
				",\"duplicates\":", r->status, r->kept, r->lost);
			if (r->seq)
				fprintf(jf, "%" PRIu64, r->dups);
			else
				fprintf(jf, "null");
			fprintf(jf, ",\"bytes\":%" PRIu64 ",\"wall_s\":%.3f,\"recorder_cpu_s\":%.3f",
				r->bytes, r->wall, r->cpu);
			fprintf(jf, ",\"pages\":%d,\"compressed\":%s", r->pages, r->z ? "true" : "false");
			if (r->kernel_lost >= 0)
				fprintf(jf, ",\"kernel_lost\":%" PRId64, r->kernel_lost);
			else
				fprintf(jf, ",\"kernel_lost\":null");
			if (r->seq)
				fprintf(jf, ",\"lost_records_sum\":%" PRIu64, r->lost_recs);
			if (r->z) {
				const struct rec_row *pz = perf_z(rows, nr, r->pages);

				fprintf(jf, ",\"uncompressed_row\":");
				json_str(jf, rows[r->base].name);
				json_num(jf, "z_ratio", zratio(rows, r));
				json_num(jf, "lost_vs_uncompressed", ratio(r->lost, rows[r->base].lost));
				if (!r->perf && pz)
					json_num(jf, "z_ratio_vs_perf",
						 ratio(zratio(rows, r), zratio(rows, pz)));
			}
			if (!r->perf) {
				const struct rec_row *b = best_perf(rows, nr, r->pages);

				fprintf(jf, ",\"perf_best\":");
				if (b) {
					json_str(jf, b->name);
					json_num(jf, "lost_ratio", ratio(r->lost, b->lost));
					json_num(jf, "cpu_ratio", ratio(r->cpu, b->cpu));
				} else {
					fprintf(jf, "null");
				}
			}
			fprintf(jf, "}");
		}
		fprintf(jf, "]}\n");
		fclose(jf);
	}
	unlink(cpuf_of(dir));
	rmdir(dir);
	return 0;
}
