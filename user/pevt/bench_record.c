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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <linux/perf_event.h>
#include <pevt/data_reader.h>

#include "main.h"

/* One run of a row. */
struct rec_run {
	int status;
	uint64_t kept, distinct, dups, lost;
	int64_t kernel_lost;		/* LOST_SAMPLES: perf report's total */
	uint64_t lost_recs;		/* the sum of the LOST records */
	uint64_t bytes;
	uint64_t zin, zout;		/* -z rows: bytes of the records the COMPRESSED
					   records hold, and of the COMPRESSED records */
	uint64_t znr;			/* -z rows: COMPRESSED records */
	double wall, cpu, lost_pct;
	/* rows with reader threads: their PEVT_STAGE_STATS=1 lines, -1 when none */
	int readers, timed_readers;	/* readers; those in timed waits */
	uint64_t reader_wakeups, reader_chunks;	/* summed; chunks a reader made itself */
	double reader_cpu;		/* the readers' CPU time, summed */
	double main_cpu;		/* the main thread's CPU time, -1 when not told */
	long main_switches;		/* ... its context switches */
	unsigned int watch_takes;	/* rings its watch took from late readers */
	unsigned int main_sleeps;	/* the main thread's sleeps */
	double z_cpu;			/* -z: the compressing thread's CPU time, -1: not told */
	pid_t rec_pid;			/* the recorder (the workload's parent), 0: not told */
	uint64_t own;			/* samples of the recorder's own threads */
};

#define MAX_REPS	15

struct rec_row {
	char name[64];
	char cmd[512];
	bool seq;			/* samples carry the sequence number */
	bool perf;			/* a Debian perf row */
	bool z;				/* -z: the row's compressed twin */
	bool ztwin;			/* gets a -z twin (with z yes) */
	bool rt;			/* -r 1 (with rt yes) */
	bool readers;			/* pevt with reader threads (pin, threads) */
	bool stage;			/* pin: the readers' PEVT_STAGE_STATS lines */
	int base;			/* -z rows: the same recorder without -z */
	int pages;
	/* results: the medians of the runs (status: the first failed run's) */
	int status, failed_run;
	uint64_t kept, distinct, dups, lost;
	int64_t kernel_lost;		/* LOST_SAMPLES: perf report's total */
	uint64_t lost_recs;		/* the sum of the LOST records */
	uint64_t bytes;
	double codec;			/* -z rows: zin / zout, median of the runs */
	double zrec_kib;		/* -z rows: zin / znr in KiB, median of the runs */
	double zper_sample;		/* -z rows: zout / kept, median of the runs */
	double own_pct;			/* the recorder's own samples, % of kept (median) */
	double wall, cpu, lost_pct;
	struct rec_run runs[MAX_REPS];
};

/* Appends @sfx to a row's name or command; -1 where it does not fit. */
static int row_append(char *buf, size_t size, const char *sfx)
{
	size_t n = strlen(buf), l = strlen(sfx);

	if (n + l >= size) {
		p_err("row \"%s\": \"%s\" does not fit in its %zu bytes", buf, sfx, size);
		return -1;
	}
	memcpy(buf + n, sfx, l + 1);
	return 0;
}

/*
 * A new zeroed row at the end of *@rows, grown as needed (pages x drains x
 * backends, their -r 1 and -z twins: no fixed count; until 2026-12-04 a
 * fixed 48 dropped the rows past it without a word).  NULL: out of memory.
 */
static struct rec_row *new_row(struct rec_row **rows, int *nr, int *cap)
{
	struct rec_row *r;

	if (*nr == *cap) {
		r = reallocarray(*rows, *cap ? 2 * *cap : 16, sizeof(*r));
		if (!r)
			return NULL;
		*rows = r;
		*cap = *cap ? 2 * *cap : 16;
	}
	r = &(*rows)[(*nr)++];
	memset(r, 0, sizeof(*r));
	return r;
}

/*
 * A twin of row @k at the end of *@rows: its copy, @sfx appended to the
 * name and @arg to the command.  NULL after the error (out of memory, or
 * a name or command too long: row_append() says which).
 */
static struct rec_row *twin_row(struct rec_row **rows, int *nr, int *cap, int k,
				const char *sfx, const char *arg)
{
	struct rec_row *r = new_row(rows, nr, cap);

	if (!r) {
		p_err("out of memory (%d rows)", *nr);
		return NULL;
	}
	*r = (*rows)[k];
	if (row_append(r->name, sizeof(r->name), sfx) ||
	    row_append(r->cmd, sizeof(r->cmd), arg))
		return NULL;
	return r;
}

enum workload_kind { W_SYSCALLS, W_CPU_CLOCK, W_BUILD };

static const char *const workload_names[] = { "syscalls", "cpu-clock", "build" };

/* What every row records, and how often. */
struct workload {
	enum workload_kind kind;
	long n;				/* getppid() calls; cpu-clock: LCG steps per process */
	int reps;
	bool seq;			/* sequence numbers: exact loss and duplicates */
	unsigned long max_rate;		/* perf_event_max_sample_rate at the start */
	unsigned long freq;		/* cpu-clock: -F (default max_rate) */
	int rate_restored;		/* runs before which the kernel had lowered it */
	char events[128];		/* the recorders' event options */
	char what[512];			/* the workload, after -- */
	char desc[256];			/* the header line's description */
};

#define MAX_RATE_FILE	"/proc/sys/kernel/perf_event_max_sample_rate"
#define SPIN_STEPS	100000000L	/* cpu-clock: default LCG steps per process */
#define BUILD_UNITS	8

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/*
 * The workload's CPU time, and its parent's pid: the recorder, whose own
 * samples the bench counts in the file (count_samples()).
 */
static void write_cpu(const char *file, double cpu)
{
	FILE *f = fopen(file, "w");

	if (f) {
		fprintf(f, "%.6f %d\n", cpu, (int)getppid());
		fclose(f);
	}
}

/* CPU time of this process and of the children it waited for. */
static double cpu_self_children(void)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return tv_s(self.ru_utime) + tv_s(self.ru_stime) +
	       tv_s(kids.ru_utime) + tv_s(kids.ru_stime);
}

/* @n steps of an LCG the compiler cannot fold: fixed work, no system call. */
static uint64_t spin(long n)
{
	uint64_t x = 1;
	long i;

	for (i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/*
 * The workloads of bench record, each writing its own CPU time (with its
 * children's) to FILE:
 *   record-loop N FILE           N getppid(i) calls (sequence numbers)
 *   record-loop spin N FILE      two processes of N LCG steps each
 *   record-loop run FILE CMD...  CMD (a build), its exit status
 */
int bench_record_loop(int argc, char **argv)
{
	int status, ret = 0, k;
	pid_t pid;
	long n, i;

	if (argc >= 3 && !strcmp(argv[0], "spin")) {
		n = atol(argv[1]);
		for (k = 0; k < 2; k++) {
			pid = fork();
			if (!pid)
				_exit(spin(n) == 42);
			if (pid < 0)
				return -1;
		}
		while (wait(&status) > 0)
			if (!WIFEXITED(status))
				ret = -1;
		write_cpu(argv[2], cpu_self_children());
		return ret;
	}
	if (argc >= 3 && !strcmp(argv[0], "run")) {
		pid = fork();
		if (!pid) {
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return -1;
		write_cpu(argv[1], cpu_self_children());
		return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
	}
	if (argc < 2)
		return -1;
	n = atol(argv[0]);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid, i);
	write_cpu(argv[1], cpu_self_children());
	return 0;
}

/* Sequence numbers of the getppid() samples of @file: kept, distinct, dups. */
static int count_seq(struct rec_run *r, const char *file, long n)
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

/*
 * Without sequence numbers: kept = the samples in @file (perf script, one
 * line each), and the sum of its LOST records ("PID PERF_RECORD_LOST lost
 * N" lines).  And the samples of the recorder itself (PID r->rec_pid):
 * cpu-clock -a samples it like any task, and what it samples of itself
 * it writes too (Documentation/record.md, "Whose samples").
 */
static int count_samples(struct rec_run *r, const char *file)
{
	char cmd[512], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "perf script -F pid --show-lost-events -i %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long s;
		char *q = strstr(line, "PERF_RECORD_LOST lost ");

		if (q && sscanf(q, "PERF_RECORD_LOST lost %llu", &s) == 1) {
			r->lost_recs += s;
		} else if (!strstr(line, "PERF_RECORD_")) {
			r->kept++;
			r->own += r->rec_pid > 0 && atoi(line) == r->rec_pid;
		}
	}
	pclose(p);
	return 0;
}

static unsigned long read_max_rate(void)
{
	unsigned long v = 0;
	FILE *f = fopen(MAX_RATE_FILE, "r");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * The kernel lowers perf_event_max_sample_rate when sampling interrupts
 * take too long (every few seconds under TCG); -F above it is refused.
 * Each run starts from the value the bench started with.
 */
static void restore_max_rate(struct workload *w)
{
	unsigned long cur = read_max_rate();
	bool ok;
	FILE *f;

	if (!w->max_rate || !cur || cur >= w->max_rate)
		return;
	f = fopen(MAX_RATE_FILE, "w");
	ok = f && fprintf(f, "%lu\n", w->max_rate) > 0;
	if (f && fclose(f))
		ok = false;
	if (ok)
		w->rate_restored++;
	else
		p_info("%s is %lu, could not set it back to %lu", MAX_RATE_FILE, cur, w->max_rate);
}

/* perf record --threads writes a directory: the sum of its files. */
static uint64_t dir_bytes(const char *path)
{
	char f[512];
	struct dirent *de;
	struct stat st;
	uint64_t sum = 0;
	DIR *d = opendir(path);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		snprintf(f, sizeof(f), "%s/%s", path, de->d_name);
		if (!stat(f, &st) && S_ISREG(st.st_mode))
			sum += st.st_size;
	}
	closedir(d);
	return sum;
}

struct zsum {
	const unsigned char *base;	/* the stream's file, mapped */
	uint64_t zin, zout, last;	/* last: the COMPRESSED record counted last */
	uint64_t nr;			/* COMPRESSED records */
};

static int zsum_rec(struct pevt_data *d, const struct pevt_data_rec *r, void *ctx)
{
	struct zsum *z = ctx;
	const struct perf_event_header *h = (const void *)(z->base + r->off);

	/* a record from inside a COMPRESSED one carries that one's offset */
	if (h == r->ev || h->type != PERF_RECORD_COMPRESSED)
		return 0;
	z->zin += r->ev->size;
	if (r->off != z->last) {
		z->zout += h->size;
		z->nr++;
		z->last = r->off;
	}
	return 0;
}

/*
 * The codec's ratio in a -z file: the bytes of the records its COMPRESSED
 * records hold over the bytes of those COMPRESSED records (perf's own
 * "ratio" in the header, which it rounds to an integer).  Records written
 * as they are (the synthesized state, the features) do not count, so a
 * short run compares with a long one: bytes per sample, the file ratio,
 * also count what every file has once (6.1 cpu-clock, pevt backend: 7960
 * samples kept with -z, 42265 without, a file ratio of 0.70x perf's).
 * Read with libpevt's reader, which follows perf's (data_reader.c); a
 * perf --threads directory is all its streams.
 */
static void codec_bytes(struct rec_run *u, const char *file)
{
	struct pevt_data *d = pevt_data__open(file);
	struct zsum z = { 0 };
	int i;

	if (!d)
		return;
	for (i = 0; i < pevt_data__nr_streams(d) && !pevt_data__is_pipe(d); i++) {
		z.base = pevt_data__stream_base(d, i);
		z.last = 0;
		if (!z.base || pevt_data__stream_for_each(d, i, zsum_rec, &z) < 0) {
			z.zin = z.zout = z.nr = 0;
			break;
		}
	}
	pevt_data__delete(d);
	u->zin = z.zin;
	u->zout = z.zout;
	u->znr = z.nr;
}

/*
 * The readers' lines of a pevt row (PEVT_STAGE_STATS=1, record_stage.c):
 * "[ pevt record: stage cpu C[ tracking]: N chunks, M made by the filler, reader page
 * faults F, W wakeups, S s CPU[, timed waits (...)] ]".  Whether a slow run had a
 * reader woken for every record (in timed waits since session 38) or was
 * slow all over the guest, the bench could not tell before (session 38).
 * And the main thread's: "[ pevt record: main thread: S s CPU, N context
 * switches, T rings taken by the watch, S sleeps (...), W waits for a
 * round's answer ]".  And -z's compressing thread's: "[ pevt record:
 * compressing thread: S s CPU, ... ]".
 */
static void reader_stats(struct rec_run *u, const char *errf)
{
	char line[512], *p;
	unsigned int chunks, made, wakeups;
	double cpu;
	FILE *f = fopen(errf, "r");

	if (!f)
		return;		/* readers and timed_readers stay -1 */
	u->readers = u->timed_readers = 0;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "[ pevt record: main thread: ");
		if (p && sscanf(p + 28, "%lf s CPU, %ld context switches, %u rings taken by the "
				"watch, %u sleeps", &u->main_cpu, &u->main_switches, &u->watch_takes,
				&u->main_sleeps) >= 3)
			continue;
		p = strstr(line, "[ pevt record: compressing thread: ");
		if (p && sscanf(p + 35, "%lf s CPU", &u->z_cpu) == 1)
			continue;
		p = strstr(line, "[ pevt record: stage cpu ");
		if (!p || !(p = strchr(p + 25, ':')) ||
		    sscanf(p, ": %u chunks, %u made by the filler, reader page faults %*d, %u wakeups, "
			   "%lf s CPU", &chunks, &made, &wakeups, &cpu) != 4)
			continue;
		u->readers++;
		u->timed_readers += !!strstr(p, "timed waits");
		u->reader_wakeups += wakeups;
		u->reader_chunks += made;
		u->reader_cpu += cpu;
	}
	fclose(f);
}

static void run_once(struct rec_run *u, const struct rec_row *r, int idx,
		     struct workload *w, const char *dir)
{
	char file[256], cpuf[256], errf[256], cmd[2048], buf[64];
	struct timeval t0, t1;
	struct rusage ru;
	struct stat st;
	double loop_cpu = 0, all;
	pid_t pid;
	int status;
	FILE *f;

	memset(u, 0, sizeof(*u));
	if (w->kind != W_SYSCALLS)
		restore_max_rate(w);
	/* perf --threads writes a directory: one name per row, removed after. */
	snprintf(file, sizeof(file), "%s/row%d.data", dir, idx);
	snprintf(cpuf, sizeof(cpuf), "%s/loop.cpu", dir);
	unlink(cpuf);
	snprintf(errf, sizeof(errf), "%s/row%d.err", dir, idx);
	unlink(errf);
	if (r->stage)
		snprintf(cmd, sizeof(cmd), "PEVT_STAGE_STATS=1 %s -o %s -- %s >/dev/null 2>%s",
			 r->cmd, file, w->what, errf);
	else
		snprintf(cmd, sizeof(cmd), "%s -o %s -- %s >/dev/null 2>&1", r->cmd, file, w->what);
	gettimeofday(&t0, NULL);
	pid = fork();
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) {
		u->status = -1;
		return;
	}
	gettimeofday(&t1, NULL);
	u->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	u->wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_usec - t0.tv_usec) / 1e6;
	f = fopen(cpuf, "r");
	if (f) {
		int ppid = 0;

		if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%lf %d", &loop_cpu, &ppid) >= 1)
			u->rec_pid = ppid;
		fclose(f);
	}
	u->cpu = tv_s(ru.ru_utime) + tv_s(ru.ru_stime) - loop_cpu;
	u->bytes = stat(file, &st) ? 0 : S_ISDIR(st.st_mode) ? dir_bytes(file) : (uint64_t)st.st_size;
	u->kernel_lost = -1;
	u->readers = u->timed_readers = -1;
	u->main_cpu = u->z_cpu = -1;
	if (r->stage) {
		reader_stats(u, errf);
		unlink(errf);
	}
	if (!u->status) {
		if (r->seq)
			count_seq(u, file, w->n);
		else
			count_samples(u, file);
		u->kernel_lost = kernel_lost_of(file);
		if (r->z)
			codec_bytes(u, file);
		/*
		 * No sequence numbers: the LOST records, or the kernel's
		 * count when larger (LOST records still pending in the
		 * buffers when the recording stops are not in the file).
		 */
		if (!r->seq)
			u->lost = u->kernel_lost > (int64_t)u->lost_recs ?
				  (uint64_t)u->kernel_lost : u->lost_recs;
		/* lost / (kept + lost); with sequence numbers kept + lost = N. */
		all = r->seq ? (double)w->n : (double)(u->kept + u->lost);
		u->lost_pct = all ? 100.0 * u->lost / all : 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", file);
	if (system(cmd))
		p_info("could not remove %s", file);
}

/* A row's results: the medians of its w->reps runs. */
static void row_medians(struct rec_row *r, const struct workload *w)
{
	double v[MAX_REPS];
	int i, n = w->reps, k;

	r->status = 0;
	for (i = 0; i < n; i++) {
		if (r->runs[i].status && !r->status) {
			r->status = r->runs[i].status;
			r->failed_run = i;
		}
	}
#define MED(field) ({ for (i = 0; i < n; i++) v[i] = r->runs[i].field; median(v, n); })
	r->kept = (uint64_t)llround(MED(kept));
	r->distinct = (uint64_t)llround(MED(distinct));
	r->dups = (uint64_t)llround(MED(dups));
	r->lost = (uint64_t)llround(MED(lost));
	r->lost_recs = (uint64_t)llround(MED(lost_recs));
	r->bytes = (uint64_t)llround(MED(bytes));
	r->wall = MED(wall);
	r->cpu = MED(cpu);
	r->lost_pct = MED(lost_pct);
#undef MED
	/* the median of the runs' @num / @den (0 where @den is) */
#define MED_RATIO(num, den) ({ \
		for (i = 0; i < n; i++) \
			v[i] = r->runs[i].den ? (double)r->runs[i].num / r->runs[i].den : 0; \
		median(v, n); })
	r->codec = MED_RATIO(zin, zout);
	r->zrec_kib = MED_RATIO(zin, znr) / 1024;
	r->zper_sample = MED_RATIO(zout, kept);
	r->own_pct = 100 * MED_RATIO(own, kept);
#undef MED_RATIO
	for (i = k = 0; i < n; i++)
		if (r->runs[i].kernel_lost >= 0)
			v[k++] = r->runs[i].kernel_lost;
	r->kernel_lost = k ? (int64_t)llround(median(v, k)) : -1;
}

/*
 * perf's best mode at @pages: the lowest lost % (median) among the rows
 * that ran; with sequence numbers, the fewest lost (N samples every row).
 */
static const struct rec_row *best_perf(const struct rec_row *rows, int nr, int pages)
{
	const struct rec_row *b = NULL;
	int i;

	for (i = 0; i < nr; i++) {
		const struct rec_row *r = &rows[i];

		if (r->perf && !r->z && r->pages == pages && !r->status &&
		    (!b || r->lost_pct < b->lost_pct))
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
 * Recorder CPU per sample kept.  With -a cpu-clock the samples come as
 * long as the run lasts, and a recorder that keeps more of them has more
 * to write: 6.1, -m 1, pevt kept 240142 and lost 0.4% in 9.0 s of CPU,
 * perf kept 99544 and lost 37% in 4.7 s (session 40).
 */
static double cpu_per_kept(const struct rec_row *r)
{
	return r->kept ? r->cpu / r->kept : 0;
}

/*
 * The targets as ratios to perf's best mode at the same -m:
 * loss (0 at -m 16, <= 0.2 x perf's at -m 1) and recorder CPU time (<= 1).
 * Loss as lost %: without sequence numbers the rows do not see the same
 * number of samples (cpu-clock -a samples the recorder and lasts as long
 * as the run), so counts would not compare.
 */
static void print_ratios(const struct rec_row *rows, int nr)
{
	int i;

	printf("\n%-26s %-26s %12s %12s %14s %16s\n", "pevt row", "perf's best mode", "lost ratio",
	       "cpu ratio", "cpu/kept ratio", "own % pevt/perf");
	for (i = 0; i < nr; i++) {
		const struct rec_row *r = &rows[i], *b;

		if (r->perf || r->status || !(b = best_perf(rows, nr, r->pages)))
			continue;
		printf("%-26s %-26s %12.3f %12.3f %14.3f", r->name, b->name,
		       ratio(r->lost_pct, b->lost_pct), ratio(r->cpu, b->cpu),
		       ratio(cpu_per_kept(r), cpu_per_kept(b)));
		if (r->seq)
			printf(" %16s\n", "-");
		else
			printf(" %7.1f / %-6.1f\n", r->own_pct, b->own_pct);
	}
}

/* One column of a table by run: a cell a run, "-" for a run without it. */
struct by_run {
	char s[16 * MAX_REPS];
	size_t at;
};

/* The next run's cell of @c: printf of @fmt, or "-" unless @have; clipped. */
static void __attribute__((format(printf, 3, 4)))
cell(struct by_run *c, bool have, const char *fmt, ...)
{
	char v[32] = "-";
	va_list ap;
	int n;

	if (c->at >= sizeof(c->s))
		return;
	if (have) {
		va_start(ap, fmt);
		vsnprintf(v, sizeof(v), fmt, ap);
		va_end(ap);
	}
	n = snprintf(c->s + c->at, sizeof(c->s) - c->at, "%s%s", c->at ? " " : "", v);
	c->at = n < 0 ? sizeof(c->s) : c->at + (size_t)n;
}

/*
 * The main thread of the pin rows, run by run: its CPU time, its context
 * switches (each wakeup of its loop, the watch's timed ones among them)
 * and the rings its watch took from late readers (record_stage.c); and
 * the CPU time of -z's compressing thread.
 */
static void print_main_thread(const struct rec_row *rows, int nr, int reps)
{
	int i, k, any = 0;

	for (i = 0; i < nr; i++) {
		const struct rec_row *r = &rows[i];
		struct by_run cpu = { "", 0 }, sw = { "", 0 }, tk = { "", 0 }, zc = { "", 0 };

		if (!r->stage)
			continue;
		if (!any++)
			printf("\n%-26s %-30s %-30s %-30s %s\n", "main thread (stage stats)",
			       "CPU s, by run", "context switches, by run", "rings taken by its watch",
			       "-z thread CPU s, by run");
		for (k = 0; k < reps; k++) {
			const struct rec_run *u = &r->runs[k];
			bool have = u->main_cpu >= 0;

			cell(&cpu, have, "%.2f", u->main_cpu);
			cell(&sw, have, "%ld", u->main_switches);
			cell(&tk, have, "%u", u->watch_takes);
			cell(&zc, u->z_cpu >= 0, "%.2f", u->z_cpu);
		}
		printf("%-26s %-30s %-30s %-30s %s\n", r->name, cpu.s, sw.s, tk.s, zc.s);
	}
}

/*
 * The readers of the pin rows (--pin-readers), run by run: their wakeups
 * and CPU time (all readers' summed), the runs in which one waited timed
 * (woken for nearly every record, record_stage.c) and the chunks readers
 * made themselves (the main thread behind).
 */
static void print_readers(const struct rec_row *rows, int nr, int reps)
{
	int i, k, any = 0;

	for (i = 0; i < nr; i++) {
		const struct rec_row *r = &rows[i];
		struct by_run wk = { "", 0 }, cpu = { "", 0 }, ch = { "", 0 };
		char tm[8 * MAX_REPS] = "";
		size_t b = 0;

		if (!r->stage)
			continue;
		if (!any++)
			printf("\n%-26s %-30s %-30s %-12s %s\n", "readers (stage stats)",
			       "wakeups, by run", "readers' CPU s, by run", "timed in runs",
			       "own chunks, by run");
		for (k = 0; k < reps; k++) {
			const struct rec_run *u = &r->runs[k];
			bool have = u->readers > 0;

			cell(&wk, have, "%" PRIu64, u->reader_wakeups);
			cell(&cpu, have, "%.2f", u->reader_cpu);
			cell(&ch, have, "%" PRIu64, u->reader_chunks);
			if (have && u->timed_readers > 0 && b < sizeof(tm))
				b += snprintf(tm + b, sizeof(tm) - b, "%s%d", b ? "," : "", k + 1);
		}
		printf("%-26s %-30s %-30s %-12s %s\n", r->name, wk.s, cpu.s, b ? tm : "none", ch.s);
	}
	print_main_thread(rows, nr, reps);
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

/* The perf -z row at @pages, with -r 1 when @rt, when it ran. */
static const struct rec_row *perf_z(const struct rec_row *rows, int nr, int pages, bool rt)
{
	int i;

	for (i = 0; i < nr; i++)
		if (rows[i].perf && rows[i].z && rows[i].pages == pages &&
		    rows[i].rt == rt && !rows[i].status)
			return &rows[i];
	return NULL;
}

/*
 * -z rows: the file ratio (bytes per kept sample without -z over with
 * it, same recorder, same -m), the codec ratio (codec_bytes()), each of
 * pevt's over perf's (the target: within 10%; the codec ratio compares
 * the compression itself, the file ratio what a user's disk sees), the
 * COMPRESSED records' bytes per sample kept and pevt's over perf's (lower
 * is better: perf's samples carry an ID that pevt's, one event, do not,
 * 8 bytes that cost zstd next to nothing, so perf's codec ratio is higher
 * for the same bytes out), the KiB each COMPRESSED record holds (zstd is
 * flushed once a record, and each flush ends a block with its own
 * tables), the loss with -z over the loss without, and the recorder's
 * CPU time, in all and per sample kept, over perf -z's (the ratio table
 * compares it with perf's best mode, which may not compress).
 */
static void print_compression(const struct rec_row *rows, int nr)
{
	int i, any = 0;

	for (i = 0; i < nr; i++) {
		const struct rec_row *r = &rows[i], *pz;

		if (!r->z)
			continue;
		if (!any++)
			printf("\n%-26s %9s %10s %10s %10s %10s %8s %8s %8s %13s %12s %16s\n",
			       "-z row", "B/sample", "file ratio", "vs perf", "codec", "vs perf",
			       "zB/smp", "vs perf", "KiB/rec", "lost vs no -z", "cpu vs perf",
			       "cpu/kept vs perf");
		if (r->status) {
			printf("%-26s failed (exit %d)\n", r->name, r->status);
			continue;
		}
		pz = perf_z(rows, nr, r->pages, r->rt);
		printf("%-26s %9.1f %10.2f ", r->name, per_sample(r), zratio(rows, r));
		if (!r->perf && pz)
			printf("%10.3f", ratio(zratio(rows, r), zratio(rows, pz)));
		else
			printf("%10s", "-");
		printf(" %10.2f ", r->codec);
		if (!r->perf && pz)
			printf("%10.3f", ratio(r->codec, pz->codec));
		else
			printf("%10s", "-");
		printf(" %8.2f ", r->zper_sample);
		if (!r->perf && pz)
			printf("%8.3f", ratio(r->zper_sample, pz->zper_sample));
		else
			printf("%8s", "-");
		printf(" %8.1f %13.3f", r->zrec_kib, ratio(r->lost_pct, rows[r->base].lost_pct));
		if (!r->perf && pz)
			printf(" %12.3f %16.3f\n", ratio(r->cpu, pz->cpu),
			       ratio(cpu_per_kept(r), cpu_per_kept(pz)));
		else
			printf(" %12s %16s\n", "-", "-");
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

/* The temporary directory: the loop's CPU time file, the build's files. */
static void remove_dir(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		p_info("could not remove %s", dir);
}

static FILE *open_in(const char *dir, const char *name, const char *mode)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, mode);
}

/* Unit @u of the build: C functions with loops, a switch, an array. */
static void write_unit_c(FILE *f, int u)
{
	int fn, c;

	fprintf(f, "/* pevt bench record: build unit %d */\n\n", u);
	for (fn = 0; fn < 48; fn++) {
		fprintf(f, "int u%d_f%d(int x, int y)\n{\n\tint s = %d, t[16] = { 0 };\n\n"
			"\tfor (int k = 0; k < x; k++) {\n\t\ts += k * %d ^ (s >> %d);\n"
			"\t\tt[k & 15] += s;\n\t\tif (s & %d)\n\t\t\ts = s * 3 + y;\n"
			"\t\telse\n\t\t\ts /= %d;\n\t}\n\tswitch (y & 7) {\n",
			u, fn, u * 131 + fn, fn + 3, fn % 7 + 1, 1 << (fn % 5), fn % 3 + 2);
		for (c = 0; c < 8; c++)
			fprintf(f, "\tcase %d:\n\t\ts ^= t[%d] * %d;\n\t\tbreak;\n", c, (c * fn) & 15, c + fn);
		fprintf(f, "\t}\n\treturn s;\n}\n\n");
	}
}

/* Unit @u of the stand-in build: 512 KiB of words, the same every time. */
static void write_unit_txt(FILE *f, int u)
{
	static const char *const words[] = {
		"perf", "event", "sample", "ring", "buffer", "lost", "record", "kernel",
		"module", "drain", "write", "page", "cpu", "clock", "build", "fork",
		"inherit", "callchain", "period", "frequency", "throttle", "wakeup",
	};
	uint64_t x = u + 1;
	long len = 0;
	int k = 0;

	while (len < 512 * 1024) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		len += fprintf(f, "%s%c", words[(x >> 33) % (sizeof(words) / sizeof(words[0]))],
			       ++k % 12 ? ' ' : '\n');
	}
}

/*
 * The build workload in @dir: BUILD_UNITS C files and `make -j2` of them
 * (cc -O2 -c) where cc and make exist. Else (the test guest: busybox, no
 * compiler) a stand-in of the same shape: two jobs at a time, each a
 * shell running gzip -9 of a 512 KiB text and gzip -d of the result into
 * md5sum. Either way build.sh removes the outputs first: the same work
 * in every run.
 */
static int prepare_build(struct workload *w, const char *dir)
{
	bool cc = !system("command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1");
	char name[32];
	FILE *f;
	int u;

	for (u = 0; u < BUILD_UNITS; u++) {
		snprintf(name, sizeof(name), cc ? "u%d.c" : "u%d.txt", u);
		f = open_in(dir, name, "w");
		if (!f)
			goto fail;
		if (cc)
			write_unit_c(f, u);
		else
			write_unit_txt(f, u);
		if (fclose(f))
			goto fail;
	}
	if (cc) {
		f = open_in(dir, "build.mk", "w");
		if (!f)
			goto fail;
		fprintf(f, "all:");
		for (u = 0; u < BUILD_UNITS; u++)
			fprintf(f, " u%d.o", u);
		fprintf(f, "\n%%.o: %%.c\n\tcc -O2 -c -o $@ $<\n");
		if (fclose(f))
			goto fail;
	}
	f = open_in(dir, "build.sh", "w");
	if (!f)
		goto fail;
	fprintf(f, "cd %s || exit 1\nrm -f *.o *.gz\n", dir);
	if (cc)
		fprintf(f, "unset MAKEFLAGS MFLAGS MAKELEVEL\nexec make -s -j2 -f build.mk\n");
	else
		fprintf(f, "job() { sh -c \"gzip -9 < u$1.txt > u$1.gz && gzip -dc u$1.gz | md5sum > u$1.o\"; }\n"
			"for i in 0 2 4 6; do\n\tjob $i & a=$!\n\tjob $((i + 1)) & b=$!\n"
			"\twait $a || exit 1\n\twait $b || exit 1\ndone\n");
	if (fclose(f))
		goto fail;
	snprintf(w->what, sizeof(w->what), "/proc/%d/exe bench record-loop run %s /bin/sh %s/build.sh",
		 (int)getpid(), cpuf_of(dir), dir);
	snprintf(w->desc, sizeof(w->desc), cc ?
		 "-e cpu-clock -g of make -j2 of %d C files (cc -O2 -c)" :
		 "-e cpu-clock -g of a stand-in build (no cc/make here): %d jobs 2 at a time, "
		 "each sh: gzip -9 of 512 KiB, gzip -d | md5sum", BUILD_UNITS);
	return 0;
fail:
	p_err("cannot write the build in %s: %s", dir, strerror(errno));
	return -1;
}

/* Workload, events, workload command and description of @w (after the options). */
static int prepare_workload(struct workload *w, const char *dir)
{
	switch (w->kind) {
	case W_SYSCALLS:
		snprintf(w->events, sizeof(w->events), "-e raw_syscalls:sys_enter -c 1");
		snprintf(w->what, sizeof(w->what), "/proc/%d/exe bench record-loop %ld %s",
			 (int)getpid(), w->n, cpuf_of(dir));
		snprintf(w->desc, sizeof(w->desc), "-e raw_syscalls:sys_enter -c 1 of %ld getppid() calls",
			 w->n);
		return 0;
	case W_CPU_CLOCK:
		if (!w->max_rate) {
			p_err("cannot read %s", MAX_RATE_FILE);
			return -1;
		}
		if (w->freq > w->max_rate) {
			p_err("freq: %lu is above perf_event_max_sample_rate (%lu)", w->freq,
			      w->max_rate);
			return -1;
		}
		snprintf(w->events, sizeof(w->events), "-e cpu-clock -F %lu -a",
			 w->freq ? w->freq : w->max_rate);
		snprintf(w->what, sizeof(w->what), "/proc/%d/exe bench record-loop spin %ld %s",
			 (int)getpid(), w->n, cpuf_of(dir));
		snprintf(w->desc, sizeof(w->desc),
			 "%s (perf_event_max_sample_rate %lu at the start) of 2 processes of %ld "
			 "LCG steps each", w->events, w->max_rate, w->n);
		return 0;
	case W_BUILD:
		snprintf(w->events, sizeof(w->events), "-e cpu-clock -g");
		return prepare_build(w, dir);
	}
	return -1;
}

static int do_bench_record_help(void)
{
	fprintf(stderr,
		"Usage: %s bench record [workload W] [calls N] [freq HZ] [reps R]\n"
		"                         [pages P[,P...]] [drains D[,D...]] [z yes|no]\n"
		"                         [rt yes|no] [nice yes|no] [json FILE] [list yes|no]\n"
		"\n"
		"Workload W (default syscalls), recorded by Debian perf (-m P, --aio,\n"
		"--threads) and by pevt record (--backend stock, and pevt when /dev/pevt\n"
		"exists) with each --drain D (default write,uring,threads,pin; pin:\n"
		"--pin-readers, pevt record's default), for each P (default 1,16), each\n"
		"row R times (default 1, medians shown; run k of every row, then run\n"
		"k + 1 of every row in the reverse order); the readers of the pin rows,\n"
		"run by run (wakeups, timed waits, chunks they made);\n"
		"then each pevt row's loss, CPU time and CPU time per sample kept as\n"
		"ratios to perf's best mode at the same P, and (cpu-clock, build) the\n"
		"share of what each kept that is the recorder's own samples.\n"
		"  syscalls   raw_syscalls:sys_enter -c 1 of N getppid() calls (default\n"
		"             200000), each sample numbered: exact loss and duplicates\n"
		"  cpu-clock  -e cpu-clock -F HZ -a (default HZ: perf_event_max_sample_rate\n"
		"             at the start) of two processes of N LCG steps each (default\n"
		"             %ld)\n"
		"  build      -e cpu-clock -g of make -j2 of %d small C files (without cc\n"
		"             and make: a stand-in of gzip jobs)\n"
		"Without sequence numbers lost is the LOST records' sum or the kernel's\n"
		"count when larger, and duplicates are not known (-).\n"
		"With z yes, -z rows too (perf, and pevt with the first drain): their\n"
		"compression ratios next to perf's (with -r 1 to perf's -r 1 -z): the\n"
		"file's (bytes per sample without -z over with it) and the codec's\n"
		"(bytes the COMPRESSED records hold over their own); the COMPRESSED\n"
		"records' bytes per sample kept (zB/smp, lower is better) and the KiB\n"
		"a record holds (a zstd flush each); their loss next to the row's\n"
		"without -z; and pevt's recorder CPU time, in all and per sample kept,\n"
		"over perf -z's; with rt yes their -r 1 twins get -z twins too.\n"
		"With rt yes, a -r 1 twin of every perf and pevt row (the recorder's\n"
		"threads SCHED_FIFO, as perf record -r 1); perf's best mode may be one.\n"
		"With nice yes, a --reader-nice 0 twin (name: ... nice0) of every pevt\n"
		"row with reader threads (pin, threads) and without -r: its readers at\n"
		"the caller's nice, not pevt record's default (pin: SCHED_FIFO 1,\n"
		"threads: nice -20, where allowed).\n"
		"With list yes, each row's name and command, one per line, and nothing\n"
		"run.\n"
		"Documentation/record.md\n", bin_name, SPIN_STEPS, BUILD_UNITS);
	return 0;
}

static void json_run(FILE *jf, const struct rec_row *r, const struct rec_run *u)
{
	fprintf(jf, "{\"exit\":%d,\"kept\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"duplicates\":",
		u->status, u->kept, u->lost);
	if (r->seq)
		fprintf(jf, "%" PRIu64, u->dups);
	else
		fprintf(jf, "null");
	fprintf(jf, ",\"lost_records_sum\":%" PRIu64 ",\"kernel_lost\":", u->lost_recs);
	if (u->kernel_lost >= 0)
		fprintf(jf, "%" PRId64, u->kernel_lost);
	else
		fprintf(jf, "null");
	fprintf(jf, ",\"bytes\":%" PRIu64 ",\"wall_s\":%.3f,\"recorder_cpu_s\":%.3f",
		u->bytes, u->wall, u->cpu);
	json_num(jf, "lost_pct", u->lost_pct);
	if (r->z)
		fprintf(jf, ",\"compressed_records_bytes\":%" PRIu64
			",\"bytes_they_hold\":%" PRIu64 ",\"compressed_records\":%" PRIu64,
			u->zout, u->zin, u->znr);
	if (u->readers >= 0)
		fprintf(jf, ",\"readers\":%d,\"timed_readers\":%d,\"reader_wakeups\":%" PRIu64
			",\"reader_made_chunks\":%" PRIu64 ",\"reader_cpu_s\":%.3f", u->readers,
			u->timed_readers, u->reader_wakeups, u->reader_chunks, u->reader_cpu);
	if (!r->seq && u->rec_pid > 0)
		fprintf(jf, ",\"own_samples\":%" PRIu64, u->own);
	if (u->main_cpu >= 0)
		fprintf(jf, ",\"main_cpu_s\":%.3f,\"main_switches\":%ld,\"watch_takes\":%u,"
			"\"main_sleeps\":%u", u->main_cpu, u->main_switches, u->watch_takes,
			u->main_sleeps);
	if (u->z_cpu >= 0)
		fprintf(jf, ",\"z_thread_cpu_s\":%.3f", u->z_cpu);
	fprintf(jf, "}");
}

static const char *const drain_names[] = { "write", "uring", "threads", "pin", NULL };

/*
 * A comma-separated list argument into @buf: each item one of @names, or
 * (@names NULL) a power of two from 1 to 2^20 (-m's data pages).  -1 with
 * the item named where one is not, or where the list does not fit.
 */
static int list_arg(const char *what, const char *arg, char *buf, size_t size,
		    const char *const *names)
{
	char tmp[256], *tok, *save = NULL;
	unsigned long ul;
	int i, n = 0;

	if (strlen(arg) >= size || strlen(arg) >= sizeof(tmp)) {
		p_err("%s: '%s' is longer than %zu characters", what, arg, size - 1);
		return -1;
	}
	strcpy(tmp, arg);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
		if (names) {
			for (i = 0; names[i] && strcmp(tok, names[i]); i++)
				;
			if (!names[i]) {
				p_err("%s: '%s' is not write, uring, threads or pin", what, tok);
				return -1;
			}
		} else if (arg_ulong(what, tok, 1, 1UL << 20, &ul)) {
			return -1;
		} else if (ul & (ul - 1)) {
			p_err("%s: %lu is not a power of two", what, ul);
			return -1;
		}
	}
	if (!n) {
		p_err("%s: no item in '%s'", what, arg);
		return -1;
	}
	strcpy(buf, arg);
	return 0;
}

int bench_record(int argc, char **argv)
{
	char pages[64] = "1,16", drains[64] = "write,uring,threads,pin", *tok, *save = NULL;
	char dir[] = "/tmp/pevt-bench-record.XXXXXX";
	struct workload w = { .kind = W_SYSCALLS, .n = 0, .reps = 1 };
	const char *json = NULL;
	struct rec_row *rows = NULL, *r;
	int nr = 0, cap = 0, i, j, k, z = 0, rt = 0, nice = 0, list = 0, restored, ret = -1;
	unsigned long ul;
	bool wide;
	FILE *jf = NULL;
	uint64_t t0;

	while (argc >= 2) {
		if (is_prefix(*argv, "calls")) {
			w.n = atol(argv[1]);
			if (w.n <= 0)
				return do_bench_record_help(), -1;
		} else if (is_prefix(*argv, "workload")) {
			for (k = 0; k < 3 && strcmp(argv[1], workload_names[k]); k++)
				;
			if (k == 3) {
				p_err("workload: '%s' is not syscalls, cpu-clock or build", argv[1]);
				return -1;
			}
			w.kind = k;
		} else if (is_prefix(*argv, "freq")) {
			if (arg_ulong("freq", argv[1], 1, 100000000, &ul))
				return -1;
			w.freq = ul;
		} else if (is_prefix(*argv, "reps")) {
			if (arg_ulong("reps", argv[1], 1, MAX_REPS, &ul))
				return -1;
			w.reps = ul;
		} else if (is_prefix(*argv, "pages")) {
			if (list_arg("pages", argv[1], pages, sizeof(pages), NULL))
				return -1;
		} else if (is_prefix(*argv, "drains")) {
			if (list_arg("drains", argv[1], drains, sizeof(drains), drain_names))
				return -1;
		} else if (is_prefix(*argv, "list") && (!strcmp(argv[1], "yes") || !strcmp(argv[1], "no"))) {
			list = !strcmp(argv[1], "yes");
		} else if (is_prefix(*argv, "json")) {
			json = argv[1];
		} else if (is_prefix(*argv, "z") && (!strcmp(argv[1], "yes") || !strcmp(argv[1], "no"))) {
			z = !strcmp(argv[1], "yes");
		} else if (is_prefix(*argv, "rt") && (!strcmp(argv[1], "yes") || !strcmp(argv[1], "no"))) {
			rt = !strcmp(argv[1], "yes");
		} else if (is_prefix(*argv, "nice") && (!strcmp(argv[1], "yes") || !strcmp(argv[1], "no"))) {
			nice = !strcmp(argv[1], "yes");
		} else {
			return do_bench_record_help(), -1;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc)
		return do_bench_record_help(), -1;
	if (w.n && w.kind == W_BUILD) {
		p_err("calls: not with workload build (its work is fixed)");
		return -1;
	}
	if (w.freq && w.kind != W_CPU_CLOCK) {
		p_err("freq: only with workload cpu-clock");
		return -1;
	}
	if (!w.n)
		w.n = w.kind == W_CPU_CLOCK ? SPIN_STEPS : 200000;
	w.seq = w.kind == W_SYSCALLS;
	w.max_rate = read_max_rate();
	wide = w.kind != W_SYSCALLS || w.reps > 1;
	if (json && !list && !(jf = fopen(json, "w"))) {
		p_err("cannot create %s: %s", json, strerror(errno));
		return -1;
	}
	if (!mkdtemp(dir)) {
		p_err("%s: %s", dir, strerror(errno));
		if (jf)
			fclose(jf);
		return -1;
	}
	if (prepare_workload(&w, dir))
		goto out;
	for (tok = strtok_r(pages, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		static const char *const perf_modes[] = { "", " --aio", " --threads" };
		char dl[64], *dtok, *dsave = NULL;
		int m = atoi(tok), first = nr;

		for (k = 0; k < 3; k++) {
			if (!(r = new_row(&rows, &nr, &cap)))
				goto oom;
			snprintf(r->name, sizeof(r->name), "perf -m %d%s", m, perf_modes[k]);
			snprintf(r->cmd, sizeof(r->cmd),
				 "perf record -q %s -m %d%s", w.events, m, perf_modes[k]);
			r->seq = w.seq;
			r->perf = true;
			r->ztwin = k == 0;
			r->pages = m;
		}
		snprintf(dl, sizeof(dl), "%s", drains);
		for (dtok = strtok_r(dl, ",", &dsave); dtok; dtok = strtok_r(NULL, ",", &dsave)) {
			for (k = 0; k < 2; k++) {
				if (k == 1 && access("/dev/pevt", F_OK))
					continue;
				if (!(r = new_row(&rows, &nr, &cap)))
					goto oom;
				snprintf(r->name, sizeof(r->name), "pevt %s %s -m %d",
					 k ? "pevt" : "stock", dtok, m);
				/* "pin": --drain=write with --pin-readers */
				snprintf(r->cmd, sizeof(r->cmd),
					 "/proc/%d/exe record -q --backend %s %s%s %s -m %d",
					 (int)getpid(), k ? "pevt" : "stock",
					 strcmp(dtok, "pin") ? "--drain=" : "--pin-readers",
					 strcmp(dtok, "pin") ? dtok : "", w.events, m);
				r->seq = w.seq;
				r->ztwin = dtok == dl;
				r->readers = !strcmp(dtok, "pin") || !strcmp(dtok, "threads");
				r->stage = !strcmp(dtok, "pin");
				r->pages = m;
			}
		}
		/* -r 1 twins of every row so far at this -m: perf's and pevt's. */
		for (k = first, i = nr; rt && k < i; k++) {
			if (!(r = twin_row(&rows, &nr, &cap, k, " -r1", " -r 1")))
				goto out;
			r->rt = true;	/* keeps ztwin: -r 1 -z rows too */
		}
		/* --reader-nice 0 twins of the pevt rows with readers, without -r. */
		for (k = first, i = nr; nice && k < i; k++) {
			if (!rows[k].readers || rows[k].rt)
				continue;
			if (!(r = twin_row(&rows, &nr, &cap, k, " nice0", " --reader-nice 0")))
				goto out;
			r->ztwin = false;
		}
		/* -z twins of perf -m P and of each backend's first drain row. */
		for (k = first, i = nr; z && k < i; k++) {
			if (!rows[k].ztwin)
				continue;
			if (!(r = twin_row(&rows, &nr, &cap, k, " -z", " -z")))
				goto out;
			r->z = true;
			r->ztwin = false;
			r->base = k;
		}
	}
	if (list) {
		for (i = 0; i < nr; i++)
			printf("%s\t%s\n", rows[i].name, rows[i].cmd);
		ret = 0;
		goto out;
	}
	if (wide && w.reps > 1)
		printf("workload %s: %s; median of %d runs per row\n", workload_names[w.kind],
		       w.desc, w.reps);
	else if (wide)
		printf("workload %s: %s; one run per row\n", workload_names[w.kind], w.desc);
	printf("%-26s %10s %10s %10s %10s %8s %9s %10s %8s %8s%s\n", "recorder", "kept", "lost",
	       "LOST recs", "kernel", "dups", "lost %", "MB", "MB/s", "cpu s", wide ? "   wall s" : "");
	/*
	 * Run k of every row, then run k + 1 of every row, in the reverse
	 * order: a slow stretch of the guest (seen for seconds after a perf
	 * run, cause not known) then falls on different rows in different
	 * runs, where one row's runs back to back all fell in it (6.1,
	 * session 38: pevt stock -m 1 took 2.9 s, then 6.6 and 9.6 s).
	 */
	t0 = now_ns();
	fflush(stdout);
	for (k = 0; k < w.reps; k++) {
		for (j = 0; j < nr; j++) {
			i = k & 1 ? nr - 1 - j : j;
			progress(true, t0, k * nr + j, nr * w.reps, "%s, run %d of %d",
				 rows[i].name, k + 1, w.reps);
			run_once(&rows[i].runs[k], &rows[i], i, &w, dir);
		}
	}
	for (i = 0; i < nr; i++) {
		struct rec_row *r = &rows[i];
		char dups[24] = "-", kern[24] = "-", recs[24] = "-";

		row_medians(r, &w);
		if (r->status) {
			printf("%-26s failed (exit %d", r->name, r->status);
			if (w.reps > 1)
				printf(" in run %d of %d", r->failed_run + 1, w.reps);
			printf(")\n");
			continue;
		}
		if (r->seq)
			snprintf(dups, sizeof(dups), "%" PRIu64, r->dups);
		if (r->kernel_lost >= 0)
			snprintf(kern, sizeof(kern), "%" PRId64, r->kernel_lost);
		snprintf(recs, sizeof(recs), "%" PRIu64, r->lost_recs);
		printf("%-26s %10" PRIu64 " %10" PRIu64 " %10s %10s %8s %8.3f%% %10.2f %8.1f %8.2f",
		       r->name, r->kept, r->lost, recs, kern,
		       dups, r->lost_pct, r->bytes / 1048576.0,
		       r->wall > 0 ? r->bytes / 1048576.0 / r->wall : 0, r->cpu);
		if (wide)
			printf(" %8.2f", r->wall);
		printf("\n");
		fflush(stdout);
	}
	print_readers(rows, nr, w.reps);
	print_ratios(rows, nr);
	print_compression(rows, nr);
	restored = w.rate_restored;
	if (w.kind != W_SYSCALLS) {
		restore_max_rate(&w);	/* leave it as the bench found it */
		if (restored)
			printf("\n%s: lowered by the kernel during the bench, set back to %lu "
			       "before %d of the %d runs\n", MAX_RATE_FILE, w.max_rate, restored,
			       nr * w.reps);
	}
	if (jf) {
		fprintf(jf, "{\"workload\":\"%s\",\"calls\":", workload_names[w.kind]);
		if (w.kind == W_BUILD)
			fprintf(jf, "null");
		else
			fprintf(jf, "%ld", w.n);
		fprintf(jf, ",\"reps\":%d,\"events\":", w.reps);
		json_str(jf, w.events);
		fprintf(jf, ",\"workload_desc\":");
		json_str(jf, w.desc);
		fprintf(jf, ",\"max_sample_rate\":%lu,\"max_sample_rate_restored\":%d,\"rows\":[",
			w.max_rate, restored);
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
			json_num(jf, "lost_pct", r->lost_pct);
			fprintf(jf, ",\"pages\":%d,\"compressed\":%s,\"realtime\":%s", r->pages,
				r->z ? "true" : "false", r->rt ? "true" : "false");
			if (r->kernel_lost >= 0)
				fprintf(jf, ",\"kernel_lost\":%" PRId64, r->kernel_lost);
			else
				fprintf(jf, ",\"kernel_lost\":null");
			fprintf(jf, ",\"lost_records_sum\":%" PRIu64, r->lost_recs);
			if (!r->seq)
				json_num(jf, "own_pct", r->own_pct);
			if (r->z) {
				const struct rec_row *pz = perf_z(rows, nr, r->pages, r->rt);

				fprintf(jf, ",\"uncompressed_row\":");
				json_str(jf, rows[r->base].name);
				json_num(jf, "z_ratio", zratio(rows, r));
				json_num(jf, "lost_vs_uncompressed", ratio(r->lost_pct, rows[r->base].lost_pct));
				json_num(jf, "codec_ratio", r->codec);
				json_num(jf, "kib_per_compressed_record", r->zrec_kib);
				json_num(jf, "compressed_bytes_per_sample", r->zper_sample);
				if (!r->perf && pz) {
					json_num(jf, "z_ratio_vs_perf",
						 ratio(zratio(rows, r), zratio(rows, pz)));
					json_num(jf, "codec_ratio_vs_perf", ratio(r->codec, pz->codec));
					json_num(jf, "compressed_bytes_per_sample_vs_perf",
						 ratio(r->zper_sample, pz->zper_sample));
					json_num(jf, "cpu_vs_perf_z", ratio(r->cpu, pz->cpu));
					json_num(jf, "cpu_per_kept_vs_perf_z",
						 ratio(cpu_per_kept(r), cpu_per_kept(pz)));
				}
			}
			if (!r->perf) {
				const struct rec_row *b = best_perf(rows, nr, r->pages);

				fprintf(jf, ",\"perf_best\":");
				if (b) {
					json_str(jf, b->name);
					json_num(jf, "lost_ratio", ratio(r->lost_pct, b->lost_pct));
					json_num(jf, "cpu_ratio", ratio(r->cpu, b->cpu));
					json_num(jf, "cpu_per_kept_ratio",
						 ratio(cpu_per_kept(r), cpu_per_kept(b)));
				} else {
					fprintf(jf, "null");
				}
			}
			fprintf(jf, ",\"runs\":[");
			for (k = 0; k < w.reps; k++) {
				fprintf(jf, "%s", k ? "," : "");
				json_run(jf, r, &r->runs[k]);
			}
			fprintf(jf, "]}");
		}
		fprintf(jf, "]}\n");
	}
	ret = 0;
out:
	remove_dir(dir);
	free(rows);
	if (jf)
		fclose(jf);
	return ret;

oom:
	p_err("out of memory (%d rows)", nr);
	goto out;
}
