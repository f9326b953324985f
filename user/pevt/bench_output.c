// SPDX-License-Identifier: GPL-2.0
/*
 * pevt bench output: the output path, stock kernel vs pevt, in one run.
 *
 * One workload for every subject: N getppid() calls of this thread, each
 * one raw_syscalls:sys_enter sample (sample_period 1) carrying
 * IP|TID|TIME|READ, where the READ value is the event's count, i.e. a
 * sequence number.  Four subjects, all writing into a read-only
 * (overwrite) mapping of P data pages:
 *
 *   pevt-sae   /dev/pevt with PEVT_SAMPLE_SIZE_AT_END, read backward with
 *              the trailer (PEVT_READ_BACKWARD_SIZE_AT_END)
 *   pevt       /dev/pevt without the trailer (cost only: no reader can
 *              walk an overwrite buffer without it)
 *   stock-fwd  perf_event_open(), forward overwrite, read the way perf
 *              reads a forward buffer: from the old position (data_tail,
 *              0), which perf drops as "failed to keep up" once lapped
 *   stock-wb   perf_event_open() with attr.write_backward, read from
 *              data_head (PEVT_READ_WRITE_BACKWARD)
 *
 * Two more subjects measure the cost of a dropped record (issue 13, item
 * 15): pevt-drop and stock-drop are pevt and stock-fwd on a writable
 * (back-pressure) mapping that is filled before the timed rounds and never
 * drained, so every record of theirs is dropped and counted as lost.
 *
 * 1. Cost: the six events open at once, the calls timed in small chunks
 *    with one event or none enabled, interleaved; ns per record is a
 *    subject's chunk minus the bare chunk of the same round, per call,
 *    median over rounds, then median of the repetitions (cost_once()).
 * 2. Recovery: generate many times the buffer's capacity, pause and
 *    disable, read.  A record counts only if it is a well-formed sample of
 *    this thread, and only while the sequence numbers, newest first, go
 *    down by exactly one (no duplicate, no gap, nothing invented).  The
 *    theoretical maximum is data bytes / record size; the provable count is
 *    how many of the newest records still lay wholly in the buffer,
 *    computed from data_head alone.
 *
 * 3. Pause: PAUSE_OUTPUT while a thread on another CPU writes (16 events
 *    of it sharing one buffer), then watch data_head: in how many of
 *    `trials` did it still move after the ioctl returned (pevt waits for
 *    writers in flight, perf does not)?
 *
 * Not a test: prints a table (ratios to stock) and writes JSON.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/pevt.h>
#include <pevt/core.h>
#include <pevt/evsel.h>
#include <pevt/mmap.h>
#include <pevt/parse_events.h>

#include "main.h"

/* The first NR_RECOVERY subjects also run the recovery; the drop ones not. */
enum { S_SAE, S_PEVT, S_FWD, S_WB, NR_RECOVERY,
       S_PEVT_DROP = NR_RECOVERY, S_STOCK_DROP, NR_SUBJECTS };

static const char *const subject_name[NR_SUBJECTS] = {
	"pevt-sae", "pevt", "stock-fwd", "stock-wb", "pevt-drop", "stock-drop",
};

/* What a drop subject's cost is compared with: the same record, written. */
static const int drop_of[NR_SUBJECTS] = {
	[S_PEVT_DROP] = S_PEVT, [S_STOCK_DROP] = S_FWD,
};

#define SAMPLE_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_READ)
#define MAX_REPS	101
#define CHUNK		500	/* calls per timed loop */

/* The sample as laid out for SAMPLE_TYPE and read_format 0. */
struct sample {
	struct perf_event_header header;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t value;			/* READ: the sequence number */
	uint64_t size_at_end;		/* pevt-sae only */
};

struct recovery {
	uint64_t generated;		/* sys_enter events counted */
	uint64_t head_bytes;		/* bytes written, from data_head */
	uint64_t written;		/* head_bytes / record size */
	uint64_t returned;		/* records the reader returned */
	uint64_t valid;			/* newest contiguous valid samples */
	uint64_t other;			/* non-sample records returned */
	uint64_t theoretical;		/* data bytes / record size */
	int64_t provable;		/* newest records wholly in the buffer */
	uint64_t newest_seq;
	const char *stop;		/* why the reader stopped */
	int read_err;			/* read_init()/read_done() result */
};

struct result {
	unsigned int record_size;
	double ns[MAX_REPS];		/* per repetition */
	double ns_median;
	double vs_fwd, vs_wb;		/* medians of per-repetition ratios */
	double vs_written;		/* drop subjects: vs the written record */
	struct recovery rec;
	bool has_reader;
};

struct bench {
	unsigned long calls, records, pages, reps, trials;
	unsigned long moved[2];		/* pause trials: pevt, stock */
	int tp_id;
	pid_t pid, tid;
	double base[MAX_REPS], base_median;
	struct result res[NR_SUBJECTS];
};

static unsigned int record_size(int s)
{
	return sizeof(struct sample) - (s == S_SAE ? 0 : sizeof(uint64_t));
}

static int open_subject(const struct bench *b, int s)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_TRACEPOINT,
		.config = b->tp_id, .sample_period = 1, .disabled = 1,
		.sample_type = SAMPLE_TYPE,
	};
	LIBPEVT_OPTS(pevt_open_opts, opts,
		     .backend = (s == S_FWD || s == S_WB || s == S_STOCK_DROP) ?
				PEVT_BACKEND_PERF : PEVT_BACKEND_DEVICE);

	if (s == S_SAE)
		a.sample_type |= PEVT_SAMPLE_SIZE_AT_END;
	if (s == S_WB)
		a.write_backward = 1;
	return pevt_open(&a, 0, -1, -1, &opts);
}

static void workload(unsigned long calls)
{
	unsigned long i;

	for (i = 0; i < calls; i++)
		syscall(SYS_getppid);
}

static double loop_ns(unsigned long calls)
{
	uint64_t t0 = now_ns();

	workload(calls);
	return (double)(now_ns() - t0) / calls;
}

static int read_count(int fd, uint64_t *count)
{
	return read(fd, count, sizeof(*count)) == sizeof(*count) ? 0 : -1;
}

/* An event of subject @s and its read-only (overwrite) mapping. */
static struct pevt_mmap *subject_map(const struct bench *b, int s, int *fdp)
{
	static const enum pevt_read_mode mode[NR_SUBJECTS] = {
		PEVT_READ_BACKWARD_SIZE_AT_END, PEVT_READ_FORWARD,
		PEVT_READ_FORWARD, PEVT_READ_WRITE_BACKWARD,
		PEVT_READ_FORWARD, PEVT_READ_FORWARD,
	};
	LIBPEVT_OPTS(pevt_mmap_opts, o, .mode = mode[s],
		     .writable = s >= S_PEVT_DROP);
	struct pevt_mmap *map;
	int fd;

	fd = open_subject(b, s);
	if (fd < 0) {
		p_err("%s: open: %s%s", subject_name[s], strerror(-fd),
		      fd == -ENOENT && s <= S_PEVT ? " (is pevt.ko loaded?)" : "");
		return NULL;
	}
	map = pevt_mmap__new(fd, b->pages, &o);
	if (!map) {
		p_err("%s: mmap of %lu data pages: %s", subject_name[s],
		      b->pages, strerror(errno));
		close(fd);
		return NULL;
	}
	*fdp = fd;
	return map;
}

/*
 * One repetition: all four events open at once (each with its buffer),
 * the calls in rounds of NR_SUBJECTS + 1 timed chunks of CHUNK calls: one
 * with no event enabled and one per subject with only its event enabled,
 * in an order rotated every round; the toggling ioctls stay outside the
 * timed loops.  A subject's cost in a round is its chunk minus that
 * round's bare chunk, and its cost in the repetition the median over the
 * rounds: under TCG the host preempts the guest often and for far longer
 * than the effect measured, and drifts over seconds; pairing within a
 * round cancels the drift, the median drops the preempted chunks.
 */
static int cost_once(struct bench *b, unsigned long rep)
{
	unsigned long i, n = b->calls / CHUNK;
	struct pevt_mmap *map[NR_SUBJECTS] = { 0 };
	int fd[NR_SUBJECTS], s, k, err = -1;
	double *base, *with;

	base = calloc((NR_SUBJECTS + 1) * n, sizeof(*base));
	if (!base) {
		p_err("out of memory");
		return -1;
	}
	with = base + n;		/* with[s * n + i] */
	for (s = 0; s < NR_SUBJECTS; s++) {
		map[s] = subject_map(b, s, &fd[s]);
		if (!map[s])
			goto out;
		if (s < S_PEVT_DROP)
			continue;
		/* Fill the back-pressure buffer: from now on every record drops. */
		ioctl(fd[s], PERF_EVENT_IOC_ENABLE, 0);
		workload(pevt_mmap__data_size(map[s]) / record_size(s) + 16);
		ioctl(fd[s], PERF_EVENT_IOC_DISABLE, 0);
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k <= NR_SUBJECTS; k++) {
			s = (k + i) % (NR_SUBJECTS + 1);
			if (s == NR_SUBJECTS) {
				base[i] = loop_ns(CHUNK);
				continue;
			}
			ioctl(fd[s], PERF_EVENT_IOC_ENABLE, 0);
			with[s * n + i] = loop_ns(CHUNK);
			ioctl(fd[s], PERF_EVENT_IOC_DISABLE, 0);
		}
		for (s = 0; s < NR_SUBJECTS; s++)
			with[s * n + i] -= base[i];
	}
	for (s = 0; s < NR_SUBJECTS; s++)
		b->res[s].ns[rep] = median(with + s * n, n);
	b->base[rep] = median(base, n);
	err = 0;
out:
	for (s = 0; s < NR_SUBJECTS; s++) {
		if (!map[s])
			break;
		pevt_mmap__delete(map[s]);
		close(fd[s]);
	}
	free(base);
	return err;
}

/*
 * Check one record returned newest first; false ends the valid chain:
 * a malformed record, another thread's, or a sequence number that is not
 * exactly one below the previous one (duplicate, gap, invented).
 */
static bool record_valid(const struct bench *b, int s,
			 const struct perf_event_header *ev, struct recovery *r)
{
	const struct sample *smp = (const void *)ev;

	if (ev->type != PERF_RECORD_SAMPLE || ev->size != record_size(s))
		return false;
	if (smp->pid != (uint32_t)b->pid || smp->tid != (uint32_t)b->tid)
		return false;
	if (s == S_SAE && smp->size_at_end != ev->size)
		return false;
	if (r->valid && smp->value != r->newest_seq - r->valid)
		return false;
	if (!r->valid)
		r->newest_seq = smp->value;
	return true;
}

static int recover(struct bench *b, int s)
{
	struct result *res = &b->res[s];
	struct recovery *r = &res->rec;
	struct pevt_mmap_stats st;
	struct perf_event_header *ev;
	uint64_t c0 = 0, c1 = 0, head, size, rs = res->record_size;
	struct pevt_mmap *map;
	bool chain = true;
	int fd, err;

	map = subject_map(b, s, &fd);
	if (!map)
		return -1;
	size = pevt_mmap__data_size(map);
	read_count(fd, &c0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	workload(b->records);
	/* The pause syscall itself is sampled: it is the newest record. */
	ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	read_count(fd, &c1);
	r->generated = c1 - c0;

	head = pevt_mmap__read_head(map);
	r->head_bytes = s == S_WB ? -head : head;
	r->theoretical = size / rs;
	/*
	 * The count includes the DISABLE call, whose sample the paused
	 * buffer dropped, so generated - 1 samples of rs bytes were written
	 * iff head == (generated - 1) * rs (nothing else was written); then
	 * the newest min(that, size / rs) of them lie wholly in the buffer.
	 */
	r->written = r->head_bytes / rs;
	if (r->head_bytes % rs == 0 && r->written + 1 == r->generated)
		r->provable = r->written < r->theoretical ?
			      (int64_t)r->written : (int64_t)r->theoretical;
	else
		r->provable = -1;

	if (!res->has_reader) {
		r->stop = "no reader";
		goto out;
	}
	err = pevt_mmap__read_init(map);
	if (!err) {
		while ((ev = pevt_mmap__read_event(map)) != NULL) {
			r->returned++;
			if (ev->type != PERF_RECORD_SAMPLE)
				r->other++;
			else if (chain && record_valid(b, s, ev, r))
				r->valid++;
			else
				chain = false;
			pevt_mmap__consume(map);
		}
		err = pevt_mmap__read_done(map);
	}
	pevt_mmap__stats(map, &st);
	r->read_err = err;
	/* FORWARD on a lapped read-only map: perf's "failed to keep up". */
	r->stop = err == -EOVERFLOW ? "lapped" : pevt_read_stop__name(st.stop);
out:
	pevt_mmap__delete(map);
	close(fd);
	return 0;
}

struct pause_writer {
	pid_t tid;
	volatile int ready, stop;
};

static void *pause_writer(void *arg)
{
	struct pause_writer *w = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
	w->tid = syscall(SYS_gettid);
	w->ready = 1;
	while (!w->stop)
		syscall(SYS_getppid);
	return NULL;
}

#define PAUSE_EVENTS	16

/*
 * The pause race: a thread on CPU 1 makes system calls, each sampled by
 * PAUSE_EVENTS events sharing one overwrite buffer; this thread, on CPU 0,
 * resumes the buffer, sleeps, pauses it, and sees whether data_head
 * still moves while it sleeps again.  Sleeping, not spinning: under
 * single-threaded TCG the writer's vCPU only runs while this one idles.
 */
static int pause_race(const struct bench *b, enum pevt_backend be,
		      unsigned long *moved)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_TRACEPOINT,
		.config = b->tp_id, .sample_period = 1,
		.sample_type = SAMPLE_TYPE,
	};
	LIBPEVT_OPTS(pevt_open_opts, opts, .backend = be);
	LIBPEVT_OPTS(pevt_mmap_opts, o, .mode = PEVT_READ_FORWARD);
	struct pause_writer w = { 0 };
	struct pevt_mmap *map = NULL;
	int fd[PAUSE_EVENTS], n = 0, err = -1;
	unsigned long t;
	cpu_set_t set, old;
	pthread_t th;

	*moved = 0;
	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    pthread_create(&th, NULL, pause_writer, &w)) {
		p_err("pause: needs CPUs 0 and 1 and a thread");
		return -1;
	}
	while (!w.ready)
		sched_yield();
	for (n = 0; n < PAUSE_EVENTS; n++) {
		fd[n] = pevt_open(&a, w.tid, -1, -1, &opts);
		if (fd[n] < 0) {
			p_err("pause: open: %s", strerror(-fd[n]));
			goto out;
		}
		if (n && ioctl(fd[n], PERF_EVENT_IOC_SET_OUTPUT, fd[0])) {
			p_err("pause: SET_OUTPUT: %s", strerror(errno));
			n++;
			goto out;
		}
		if (!n && !(map = pevt_mmap__new(fd[0], b->pages, &o))) {
			p_err("pause: mmap: %s", strerror(errno));
			n++;
			goto out;
		}
	}
	for (t = 0; t < b->trials; t++) {
		uint64_t head;

		ioctl(fd[0], PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
		usleep(200);
		ioctl(fd[0], PERF_EVENT_IOC_PAUSE_OUTPUT, 1);
		head = pevt_mmap__read_head(map);
		usleep(200);
		*moved += pevt_mmap__read_head(map) != head;
	}
	err = 0;
out:
	w.stop = 1;
	pthread_join(th, NULL);
	if (map)
		pevt_mmap__delete(map);
	while (n--)
		close(fd[n]);
	sched_setaffinity(0, sizeof(old), &old);
	return err;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0.0;
}

static void print_table(const struct bench *b)
{
	const struct result *wb = &b->res[S_WB];
	int s;

	printf("output path: %lu getppid() per subject and repetition, %lu repetitions (median), "
	       "one sys_enter sample each (IP|TID|TIME|READ), %lu-page overwrite buffers\n",
	       b->calls, b->reps, b->pages);
	printf("a getppid() alone: %.0f ns\n\n", b->base_median);
	printf("cost             bytes  ns/record  vs stock-fwd  vs stock-wb  (medians of per-repetition ratios)\n");
	for (s = 0; s < NR_RECOVERY; s++)
		printf("  %-12s %7u %10.0f %13.2f %12.2f\n", subject_name[s],
		       b->res[s].record_size, b->res[s].ns_median,
		       b->res[s].vs_fwd, b->res[s].vs_wb);
	printf("\ndropped record (back-pressure buffer full, never drained)\n"
	       "                 bytes  ns/record  vs written  (written: the same record, same backend)\n");
	for (s = S_PEVT_DROP; s < NR_SUBJECTS; s++)
		printf("  %-12s %7u %10.0f %11.2f  (%s)\n", subject_name[s],
		       b->res[s].record_size, b->res[s].ns_median,
		       b->res[s].vs_written, subject_name[drop_of[s]]);

	printf("\nrecovery after %lu calls (%.1fx the stock-wb capacity), paused, read once\n",
	       b->records, ratio(b->records, wb->rec.theoretical));
	printf("  %-12s %9s %9s %9s %8s %9s %11s  %s\n", "subject", "recovered",
	       "max", "provable", "vs max", "returned", "vs stock-wb", "reader stop");
	for (s = 0; s < NR_RECOVERY; s++) {
		const struct recovery *r = &b->res[s].rec;

		if (!b->res[s].has_reader) {
			printf("  %-12s %9s %9llu %9lld %8s %9s %11s  %s\n",
			       subject_name[s], "n/a",
			       (unsigned long long)r->theoretical,
			       (long long)r->provable, "", "", "", r->stop);
			continue;
		}
		printf("  %-12s %9llu %9llu %9lld %8.3f %9llu %11.3f  %s\n",
		       subject_name[s], (unsigned long long)r->valid,
		       (unsigned long long)r->theoretical, (long long)r->provable,
		       ratio(r->valid, r->theoretical),
		       (unsigned long long)r->returned,
		       ratio(r->valid, wb->rec.valid), r->stop);
	}
	for (s = 0; s < NR_RECOVERY; s++) {
		const struct recovery *r = &b->res[s].rec;

		if (b->res[s].has_reader && r->provable >= 0 && s != S_FWD &&
		    r->valid != (uint64_t)r->provable)
			printf("note: %s recovered %llu, but %lld were provably whole\n",
			       subject_name[s], (unsigned long long)r->valid,
			       (long long)r->provable);
	}
	if (b->trials)
		printf("\npause: data_head moved after PAUSE_OUTPUT returned, writer on another CPU: "
		       "pevt %lu of %lu trials, stock %lu of %lu\n", b->moved[0],
		       b->trials, b->moved[1], b->trials);
}

static void print_json(const struct bench *b, FILE *f)
{
	const struct result *wb = &b->res[S_WB];
	struct utsname u;
	unsigned long i;
	int s;

	if (uname(&u))
		strcpy(u.release, "?");
	fprintf(f, "{\"bench\":\"output\",\"kernel\":\"%s\",\"calls\":%lu,"
		"\"records\":%lu,\"pages\":%lu,\"reps\":%lu,\"base_ns\":%.1f,"
		"\"subjects\":{", u.release, b->calls, b->records, b->pages,
		b->reps, b->base_median);
	for (s = 0; s < NR_SUBJECTS; s++) {
		const struct result *res = &b->res[s];
		const struct recovery *r = &res->rec;

		fprintf(f, "%s\"%s\":{\"record_bytes\":%u,\"ns_per_record\":%.1f,"
			"\"ns_reps\":[", s ? "," : "", subject_name[s],
			res->record_size, res->ns_median);
		for (i = 0; i < b->reps; i++)
			fprintf(f, "%s%.1f", i ? "," : "", res->ns[i]);
		fprintf(f, "],\"ns_vs_stock_fwd\":%.4f,\"ns_vs_stock_wb\":%.4f,",
			res->vs_fwd, res->vs_wb);
		if (s >= NR_RECOVERY) {
			fprintf(f, "\"ns_vs_written\":%.4f,\"written\":\"%s\"}",
				res->vs_written, subject_name[drop_of[s]]);
			continue;
		}
		fprintf(f, "\"recovery\":{\"generated\":%llu,\"head_bytes\":%llu,"
			"\"written\":%llu,\"theoretical_max\":%llu,\"provable\":%lld,",
			(unsigned long long)r->generated,
			(unsigned long long)r->head_bytes,
			(unsigned long long)r->written,
			(unsigned long long)r->theoretical, (long long)r->provable);
		if (res->has_reader)
			fprintf(f, "\"recovered\":%llu,\"returned\":%llu,\"other\":%llu,"
				"\"newest_seq\":%llu,\"vs_stock_wb\":%.4f,"
				"\"read_err\":%d,",
				(unsigned long long)r->valid,
				(unsigned long long)r->returned,
				(unsigned long long)r->other,
				(unsigned long long)r->newest_seq,
				ratio(r->valid, wb->rec.valid), r->read_err);
		else
			fprintf(f, "\"recovered\":null,");
		fprintf(f, "\"stop\":\"%s\"}}", r->stop);
	}
	fprintf(f, "},\"pause\":{\"trials\":%lu,\"pevt_moved\":%lu,"
		"\"stock_moved\":%lu}}\n", b->trials, b->moved[0], b->moved[1]);
}

static int do_help(void)
{
	fprintf(stderr,
		"Usage: %s bench output [calls N] [records N] [pages P] [reps R] [trials T] [json FILE]\n"
		"\n"
		"  One workload (getppid() calls, each a raw_syscalls:sys_enter sample with\n"
		"  IP|TID|TIME|READ, READ = sequence number) into read-only (overwrite)\n"
		"  buffers of four subjects: pevt-sae (/dev/pevt + PEVT_SAMPLE_SIZE_AT_END),\n"
		"  pevt (no trailer), stock-fwd (perf_event_open, forward), stock-wb\n"
		"  (perf_event_open, write_backward); pevt-drop and stock-drop: the cost of\n"
		"  a dropped record (full back-pressure buffer); the pause race (data_head\n"
		"  moving after PAUSE_OUTPUT).  Needs root, tracefs, 2 CPUs and pevt.ko.\n"
		"\n"
		"  calls N    calls per subject and cost repetition, >= %d (default 50000),\n"
		"             timed in chunks of %d, interleaved with the other subjects'\n"
		"             and bare chunks (costs are paired differences, medians)\n"
		"  records N  calls for the recovery run (default: 10x the stock-wb capacity)\n"
		"  pages P    data pages per buffer, a power of two (default 8)\n"
		"  reps R     cost repetitions, median reported (default 5, max %d)\n"
		"  trials T   pause trials per backend (default 300)\n"
		"  json FILE  also write the results as JSON (--json: JSON on stdout)\n",
		bin_name, CHUNK, CHUNK, MAX_REPS);
	return 0;
}

static int parse_ulong(const char *what, const char *arg, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || !*v || arg[0] == '-') {
		p_err("%s: '%s' is not a positive number", what, arg);
		return -1;
	}
	return 0;
}

int bench_output(int argc, char **argv)
{
	struct bench b = { .calls = 50000, .pages = 8, .reps = 5, .trials = 300 };
	const char *json = NULL;
	unsigned long rep;
	uint64_t t0;
	long page = sysconf(_SC_PAGESIZE);
	int s;
	FILE *f;

	while (argc > 0) {
		const char *opt = *argv;
		unsigned long *v = NULL;

		if (is_prefix(opt, "help") || !strcmp(opt, "--help") ||
		    !strcmp(opt, "-h"))
			return do_help();
		if (is_prefix(opt, "calls"))
			v = &b.calls;
		else if (is_prefix(opt, "records"))
			v = &b.records;
		else if (is_prefix(opt, "pages"))
			v = &b.pages;
		else if (is_prefix(opt, "reps"))
			v = &b.reps;
		else if (is_prefix(opt, "trials"))
			v = &b.trials;
		else if (!is_prefix(opt, "json")) {
			p_err("unknown argument '%s'", opt);
			return -1;
		}
		NEXT_ARG();
		if (!REQ_ARGS(1))
			return -1;
		if (!v)
			json = *argv;
		else if (parse_ulong(opt, *argv, v))
			return -1;
		NEXT_ARG();
	}
	if (b.pages & (b.pages - 1) || b.pages > (1ul << 20)) {
		p_err("pages: %lu is not a power of two up to 2^20", b.pages);
		return -1;
	}
	if (b.reps > MAX_REPS) {
		p_err("reps: at most %d", MAX_REPS);
		return -1;
	}
	if (b.calls < CHUNK) {
		p_err("calls: at least %d", CHUNK);
		return -1;
	}
	if (!b.records)
		b.records = 10 * (b.pages * page / record_size(S_WB));
	b.tp_id = pevt_tracepoint__id("raw_syscalls:sys_enter");
	if (b.tp_id < 0) {
		p_err("raw_syscalls:sys_enter: no id in tracefs (mounted? root?)");
		return -1;
	}
	b.pid = getpid();
	b.tid = syscall(SYS_gettid);
	for (s = 0; s < NR_SUBJECTS; s++) {
		b.res[s].record_size = record_size(s);
		b.res[s].has_reader = s != S_PEVT && s < NR_RECOVERY;
	}

	t0 = now_ns();
	for (rep = 0; rep < b.reps; rep++) {
		progress(rep == 0, t0, (int)rep, (int)b.reps + NR_SUBJECTS,
			 "bench output: cost per record, repetition %lu of %lu", rep + 1,
			 (unsigned long)b.reps);
		if (cost_once(&b, rep))
			return -1;
	}
	b.base_median = median(b.base, b.reps);
	for (s = 0; s < NR_SUBJECTS; s++) {
		double tmp[MAX_REPS];

		memcpy(tmp, b.res[s].ns, b.reps * sizeof(*tmp));
		b.res[s].ns_median = median(tmp, b.reps);
		/* Ratios within a repetition: the subjects ran interleaved. */
		for (rep = 0; rep < b.reps; rep++)
			tmp[rep] = ratio(b.res[s].ns[rep], b.res[S_FWD].ns[rep]);
		b.res[s].vs_fwd = median(tmp, b.reps);
		for (rep = 0; rep < b.reps; rep++)
			tmp[rep] = ratio(b.res[s].ns[rep], b.res[S_WB].ns[rep]);
		b.res[s].vs_wb = median(tmp, b.reps);
		progress(s == 0, t0, b.reps + s, b.reps + NR_SUBJECTS,
			 "bench output: subject %d of %d", s + 1, NR_SUBJECTS);
		if (s >= NR_RECOVERY) {
			for (rep = 0; rep < b.reps; rep++)
				tmp[rep] = ratio(b.res[s].ns[rep],
						 b.res[drop_of[s]].ns[rep]);
			b.res[s].vs_written = median(tmp, b.reps);
		} else if (recover(&b, s)) {
			return -1;
		}
	}
	if (b.trials && (pause_race(&b, PEVT_BACKEND_DEVICE, &b.moved[0]) ||
			 pause_race(&b, PEVT_BACKEND_PERF, &b.moved[1])))
		return -1;

	if (json_output)
		print_json(&b, stdout);
	else
		print_table(&b);
	if (json) {
		f = fopen(json, "w");
		if (!f) {
			p_err("%s: %s", json, strerror(errno));
			return -1;
		}
		print_json(&b, f);
		fclose(f);
	}
	return 0;
}
