// SPDX-License-Identifier: GPL-2.0
/*
 * `pevt record --backend stock` on the build machine, read back by the
 * host's stock perf (/usr/bin/perf): sample counts, no warnings, the
 * feature sections, the FINISHED_ROUND guarantee, pipe mode, tracepoints,
 * -p with SIGINT, kill -9 and a write error (RLIMIT_FSIZE) leaving a file
 * readable up to its last complete round.
 *
 * Everything runs in a private directory; the pevt binary is the one of
 * this build (build/bin/pevt next to build/tests/host/), or $PEVT_BIN.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "../record_check.h"

#define LOOP	"sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'"

/*
 * A call tree built without frame pointers, for --call-graph dwarf: only
 * the stack dump and the CFI can unwind it.  noipa: no clones, no
 * inlining; the stores after the calls: no tail calls.
 */
#define CGN_SRC \
	"#include <stdlib.h>\n" \
	"volatile unsigned long sink;\n" \
	"__attribute__((noipa)) void cg_spin(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i; }\n" \
	"__attribute__((noipa)) void cg_leaf_c(unsigned long n) { cg_spin(n); sink++; }\n" \
	"__attribute__((noipa)) void cg_leaf_d(unsigned long n) { cg_spin(n); sink++; }\n" \
	"__attribute__((noipa)) void cg_mid_a(unsigned long n) { cg_leaf_c(n); sink++; }\n" \
	"__attribute__((noipa)) void cg_mid_b(unsigned long n) { cg_leaf_c(n / 2); cg_leaf_d(n); sink++; }\n" \
	"int main(int argc, char **argv)\n" \
	"{\n" \
	"	unsigned long n = strtoul(argv[1], 0, 0);\n" \
	"	for (int i = 0; i < 4; i++) { cg_mid_a(n); cg_mid_b(n); }\n" \
	"	return 0;\n" \
	"}\n"
/*
 * 0.2 s of CPU on this project's machines: at -F 2000 some 400 samples.
 * (20000000 ran 40-50 ms on a faster host: 100 samples, and the test's
 * "more than 100" failed twice in one run there.)
 */
#define CGN_N	"80000000"

static char pevt_bin[PATH_MAX];

FIXTURE(rec)
{
	char dir[64];
	pid_t busy;
};

/* Every test runs with each drain (record_drain.h). */
RECORD_DRAIN_VARIANTS(rec);

FIXTURE_SETUP(rec)
{
	host_pevt_bin(pevt_bin);
	if (access(pevt_bin, X_OK))
		SKIP(return, "no pevt binary (make user, or set PEVT_BIN)");
	if (system("perf --version >/dev/null 2>&1"))
		SKIP(return, "no perf on this machine");
	ASSERT_EQ(0, tmpdir_enter(self->dir, "record_test"));
	self->busy = 0;
}

FIXTURE_TEARDOWN(rec)
{
	if (self->busy > 0) {
		kill(self->busy, SIGKILL);
		waitpid(self->busy, NULL, 0);
	}
	tmpdir_leave(self->dir);
}

static pid_t start_busy(void)
{
	pid_t pid = fork();

	if (!pid) {
		execl("/bin/sh", "sh", "-c", "while :; do :; done", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Run a `pevt record` command line; its sample count, or -1 if it failed. */
static long long __attribute__((format(printf, 2, 3)))
record(struct __test_metadata *_metadata, const char *fmt, ...)
{
	char cmd[1024];
	long long samples;
	struct out o;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	run(&o, "%s", cmd);
	EXPECT_EQ(0, o.status) TH_LOG("%s: %s", cmd, o.err);
	samples = o.status ? -1 : rec_summary(o.err, NULL);
	out_free(&o);
	return samples;
}

/*
 * perf reads @file (a file, or "- < file" for pipe mode) without a word on
 * stderr and `perf script` shows @samples samples.
 */
static bool quiet_but_lost(const char *err);

/*
 * Stock perf reads @in with no warning: none at all, or (@lost > 0, the
 * recorder's own count) none but perf's "lost chunks" one.
 */
static void check_read_lost(struct __test_metadata *_metadata, const char *in,
			    long long samples, long long lost)
{
	struct out o;

#define READ_QUIET(err) (lost > 0 ? quiet_but_lost(err) : perf_quiet(err))
	run(&o, "perf script -i %s", in);
	EXPECT_EQ(0, o.status);
	EXPECT_EQ(samples, count_lines(o.out));
	EXPECT_TRUE(READ_QUIET(o.err)) TH_LOG("%s, %lld lost: %s", in, lost, o.err);
	out_free(&o);
	run(&o, "perf report --stdio -i %s", in);
	EXPECT_EQ(0, o.status);
	EXPECT_TRUE(READ_QUIET(o.err)) TH_LOG("%s, %lld lost: %s", in, lost, o.err);
	if (samples)
		EXPECT_NE(NULL, strstr(o.out, "# Samples: "));
	out_free(&o);
	run(&o, "perf report --stats -i %s", in);
	EXPECT_EQ(0, o.status);
	EXPECT_TRUE(READ_QUIET(o.err)) TH_LOG("%s, %lld lost: %s", in, lost, o.err);
	out_free(&o);
	run(&o, "perf evlist -v -i %s", in);
	EXPECT_EQ(0, o.status);
	EXPECT_TRUE(READ_QUIET(o.err)) TH_LOG("%s, %lld lost: %s", in, lost, o.err);
#undef READ_QUIET
	EXPECT_NE(NULL, strstr(o.out, "sample_id_all: 1"));
	out_free(&o);
}

static void check_read(struct __test_metadata *_metadata, const char *in,
		       long long samples)
{
	check_read_lost(_metadata, in, samples, 0);
}

TEST_F(rec, workload_file)
{
	static const char *const feats[] = {
		"# hostname : ", "# os release : ", "# perf version : ", "# arch : ",
		"# nrcpus online : ", "# nrcpus avail : ", "# cpudesc : ", "# cpuid : ",
		"# total memory : ", "# cmdline : ", "# event : name = cpu-clock",
		"# CPU_TOPOLOGY info available", "# time of first sample : ",
		"# clockid frequency: ",
	};
	long long samples, lost;
	long rounds, timed, bad;
	struct out o;
	size_t i;

	run(&o, "%s record --drain=%s -F 2000 -e cpu-clock -o t.data -- " LOOP, pevt_bin, variant->drain);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	samples = rec_summary(o.err, &lost);
	out_free(&o);
	ASSERT_GT(samples, 10);
	EXPECT_EQ(0, lost);
	check_read(_metadata, "t.data", samples);

	run(&o, "perf report --header-only -i t.data");
	EXPECT_TRUE(perf_quiet(o.err));
	for (i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
		bool found = strstr(o.out, feats[i]);

		if (!found)
			fprintf(stderr, "# missing '%s'\n", feats[i]);
		EXPECT_TRUE(found);
	}
	out_free(&o);
	/* BUILD_ID: at least the shell the samples hit. */
	run(&o, "perf buildid-list -i t.data");
	EXPECT_EQ(0, o.status);
	EXPECT_NE(NULL, strstr(o.out, "/dash"));
	out_free(&o);

	bad = rec_round_violations("-i t.data", &rounds, &timed);
	EXPECT_EQ(0, bad);
	EXPECT_GT(rounds, 1);
	EXPECT_GE(timed, samples);
}

TEST_F(rec, pipe_mode)
{
	long long samples;

	struct out o;

	run(&o, "(%s record --drain=%s -F 2000 -o - -- " LOOP " >p.data)", pevt_bin, variant->drain);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	samples = rec_summary(o.err, NULL);
	/* A pipe takes records in order: the write drain does it. */
	if (strncmp(variant->drain, "write", 5))
		EXPECT_NE(NULL, strstr(o.err, "pipe mode writes in order, using --drain=write"));
	out_free(&o);
	ASSERT_GT(samples, 10);
	check_read(_metadata, "- <p.data", samples);
}

TEST_F(rec, tracepoint_period_1)
{
	long long samples;
	struct out o;

	if (access("/sys/kernel/tracing/events/raw_syscalls", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/raw_syscalls", F_OK))
		SKIP(return, "no tracefs with raw_syscalls");
	/* 200 extra getppid()-like calls: one sample per system call. */
	samples = record(_metadata, "%s record --drain=%s -e raw_syscalls:sys_enter -c 1 -o tp.data -- "
	    "sh -c 'i=0; while [ $i -lt 200 ]; do i=$((i+1)); : </dev/null; done'", pevt_bin, variant->drain);
	ASSERT_GE(samples, 200);
	check_read(_metadata, "tp.data", samples);
	run(&o, "perf script -i tp.data");
	EXPECT_NE(NULL, strstr(o.out, "raw_syscalls:sys_enter: NR "));
	out_free(&o);
}

/* perf_quiet(), but perf's own warnings about LOST records and LOST_SAMPLES are expected. */
static bool quiet_but_lost(const char *err)
{
	char *copy = strdup(err), *l, *save = NULL, *kept = calloc(1, strlen(err) + 2);
	bool quiet;

	for (l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(l, "Warning:") || !strcmp(l, "Check IO/CPU overload!") ||
		    (strstr(l, "Processed ") == l && strstr(l, " chunks!")) ||
		    /* LOST_SAMPLES (the kernel's count), as for perf's own files */
		    (strstr(l, "Processed ") == l && strstr(l, " samples and lost ")))
			continue;
		strcat(strcat(kept, l), "\n");
	}
	quiet = perf_quiet(kept);
	free(copy);
	free(kept);
	return quiet;
}

/*
 * --pin-readers: a round holds what every ring had when its pass began,
 * also when a reader runs late (PEVT_STAGE_READER_DELAY_US: the last
 * CPU's reader sleeps 500 ms whenever it is woken, as a reader on a
 * stopped vCPU would).  Two processes, one per CPU, so that the two
 * rings' records interleave in time.  Without -r the passes take the
 * rings themselves; with -r 1 (as root) a round's pass asks each reader
 * to take its ring and waits for its answer: without the wait, 800-1100
 * records came after two rounds newer than them (3 of 3 runs).
 */
TEST_F(rec, pin_late_readers_rounds)
{
	/* -z: the main thread also takes the rings between compressed chunks */
	static const char *const rt[] = { "", "-z", "-r 1", "-r 1 -z" };
	long long samples, lost;
	long rounds, timed;
	struct out o;
	int i;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	for (i = 0; i < (geteuid() ? 2 : 4); i++) {
		run(&o, "PEVT_STAGE_READER_DELAY_US=500000 %s record %s --drain=%s -F 2000 "
		    "-e cpu-clock -o lr.data -- sh -c 'for j in 1 2; do (i=0; while [ $i -lt "
		    "600000 ]; do i=$((i+1)); done) & done; wait'", pevt_bin, rt[i], variant->drain);
		ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
		samples = rec_summary(o.err, &lost);
		out_free(&o);
		ASSERT_GT(samples, 10);
		EXPECT_EQ(0, lost);
		check_read(_metadata, "lr.data", samples);
		EXPECT_EQ(0, rec_round_violations("-i lr.data", &rounds, &timed)) TH_LOG("'%s'", rt[i]);
		EXPECT_GT(rounds, 1);
		EXPECT_GE(timed, samples);
		TH_LOG("'%s': %lld samples, %ld rounds", rt[i], samples, rounds);
	}
}

/*
 * A reader that sleeps 500 ms whenever it is woken (the last CPU's:
 * PEVT_STAGE_READER_DELAY_US), the workload on that CPU, 1-page rings,
 * system calls at period 1 (a ring filled in tens of microseconds):
 * - readers that take their rings alone (-r 1, at nice -20, or SCHED_FIFO 1, the
 *   default as root) leave that ring full for the kernel to drop into,
 *   but for the main thread's watch (at most every 500 us, far slower than
 *   this ring fills; late_reader_watched is the rate it keeps up with):
 *   thousands lost, all in the kernel's count (helping, the main thread
 *   does not wake for it either: the reader's poll() takes the buffer's
 *   wakeup);
 * - the summary's "lost" is that count (it said 0 until 2026-12-04, the
 *   file's LOST_SAMPLES holding 20000), equal to perf's Total Lost Samples;
 * - the line on the readers says which mode ran.
 */
TEST_F(rec, late_reader_lost)
{
	static const struct {
		const char *args, *line;
		bool alone;
	} c[] = {
		{ "--reader-nice 0", "[ pevt record: readers at nice 0, the main thread takes their rings too ]", false },
		{ "--reader-nice -20", "[ pevt record: readers at nice -20, watched by the main thread ]", true },
		{ "", "[ pevt record: readers SCHED_FIFO 1, watched by the main thread ]", true },
		{ "-r 1", "[ pevt record: readers SCHED_FIFO 1, watched by the main thread ]", true },
	};
	long long samples, lost, total;
	struct out o;
	unsigned int i;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	if (access("/sys/kernel/tracing/events/raw_syscalls", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/raw_syscalls", F_OK))
		SKIP(return, "no tracefs with raw_syscalls");
	for (i = 0; i < (geteuid() ? 1 : 4); i++) {
		run(&o, "PEVT_STAGE_READER_DELAY_US=500000 %s record %s --drain=%s "
		    "-e raw_syscalls:sys_enter -c 1 -m 1 -o ll.data -- taskset -c %ld "
		    "%s bench record-loop 20000 /dev/null", pevt_bin, c[i].args, variant->drain,
		    sysconf(_SC_NPROCESSORS_ONLN) - 1, pevt_bin);
		ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
		EXPECT_NE(NULL, strstr(o.err, c[i].line)) TH_LOG("'%s': %s", c[i].args, o.err);
		samples = rec_summary(o.err, &lost);
		out_free(&o);
		ASSERT_LE(0, samples);
		run(&o, "perf script -i ll.data 2>/dev/null");
		EXPECT_EQ(samples, count_lines(o.out));
		out_free(&o);
		run(&o, "perf report --stdio --sort cpu -g none -i ll.data 2>/dev/null |"
		    " sed -n 's/^# Total Lost Samples: //p' | head -1");
		total = atoll(o.out);
		out_free(&o);
		TH_LOG("'%s': %lld samples, %lld lost; perf report: %lld lost", c[i].args, samples,
		       lost, total);
		EXPECT_EQ(total, lost) TH_LOG("'%s': the summary's lost is not the kernel's count",
					     c[i].args);
		if (c[i].alone)
			EXPECT_LT(10000, total) TH_LOG("'%s': the late reader's ring was taken",
						       c[i].args);
	}
}

/*
 * One run of late_reader_watched: its samples, its lost in @lost.  @env:
 * more of the environment, @rt: more options.
 */
static long long lw_run(const char *env, const char *rt, const char *drain, int nw,
			long long *lost)
{
	long long samples;
	struct out o;

	run(&o, "%s PEVT_STAGE_NO_WATCH=%d PEVT_STAGE_READER_DELAY_US=500000 %s record %s "
	    "--drain=%s -e cpu-clock -F 4000 -m 1 -o lw.data -- taskset -c %ld "
	    "sh -c 'i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done'", env, nw, pevt_bin,
	    rt, drain, sysconf(_SC_NPROCESSORS_ONLN) - 1);
	samples = o.status ? -1 : rec_summary(o.err, lost);
	if (o.status)
		fprintf(stderr, "# %s\n", o.err);
	out_free(&o);
	return samples;
}

/*
 * The main thread's watch (stage_set__watch()): a reader that sleeps
 * 500 ms whenever it is woken (a wakeup that does not come, as on 6.1
 * under TCG: Documentation/record.md "Wakeups that do not come"), the
 * workload on its CPU, cpu-clock at 4 kHz into 1-page rings (about 25 ms
 * to fill one).  Without the watch (PEVT_STAGE_NO_WATCH=1) that ring
 * stays full: most samples lost (10609 of 11190 on the host).  With it
 * the main thread takes the ring once it is half full: at most a fifth
 * of that share lost (0 on an idle host; 1-6% while make check's debug
 * VM and other tests kept both CPUs busy, the main thread waiting for a
 * CPU), no record after two rounds newer than it, and perf reads what
 * pevt counted (with its warning on the lost, if any).  Until 2026-12-07
 * the watch slept 100 ms while no ring had a rate: ~300 lost at the
 * start in most runs here, failing the -z variant's 2% in 2 of 3 runs of
 * this file (record.md "The quiet sleep").
 *
 * Four recordings and perf's reads: longer than 30 s beside make check's
 * VMs, hence 180 s.
 */
TEST_F_TIMEOUT(rec, late_reader_watched, 180)
{
	static const char *const rt[] = { "", "-r 1" };
	long long samples, lost;
	long rounds, timed;
	double unwatched;
	int i;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	for (i = 0; i < (geteuid() ? 1 : 2); i++) {
		/* the set-up loses without the watch */
		samples = lw_run("", rt[i], variant->drain, 1, &lost);
		TH_LOG("'%s' no watch: %lld samples, %lld lost", rt[i], samples, lost);
		ASSERT_GT(samples, 100);
		EXPECT_GT(lost, samples) TH_LOG("'%s': a late reader lost little without the watch",
						rt[i]);
		unwatched = (double)lost / (double)(samples + lost);
		samples = lw_run("", rt[i], variant->drain, 0, &lost);
		TH_LOG("'%s' watched: %lld samples, %lld lost", rt[i], samples, lost);
		ASSERT_GT(samples, 100);
		EXPECT_LE((double)lost / (double)(samples + lost) * 5, unwatched)
			TH_LOG("'%s': the watch did not take the late reader's ring", rt[i]);
		check_read_lost(_metadata, "lw.data", samples, lost);
		EXPECT_EQ(0, rec_round_violations("-i lw.data", &rounds, &timed));
		EXPECT_GT(rounds, 1);
	}
}

/*
 * The watch of late_reader_watched while the output is compressed on a
 * slow CPU (-z, every compression 100 ms longer: PEVT_RECORD_ZSTD_DELAY_US,
 * LWZ_ENV): the main thread hands what the readers
 * staged to the compressing thread and is free to take the late ring.
 * Compressing it in the main thread (until 2026-12-06), the watch came
 * late whenever a compression ran: 6910 of 18018 lost (38%), 24799 of
 * 26188 without the watch.  A main thread that waited for the thread's
 * compression to read the output's size for the progress line lost
 * 988-1640 of some 19000 (5-9%, out_bytes()).
 */
#define LWZ_ENV	"PEVT_RECORD_ZSTD_DELAY_US=100000"

TEST_F_TIMEOUT(rec, late_reader_watched_compressing, 180)
{
	long long samples, lost;
	long rounds, timed;
	double unwatched;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	samples = lw_run(LWZ_ENV, "-z", variant->drain, 1, &lost);
	TH_LOG("-z no watch: %lld samples, %lld lost", samples, lost);
	ASSERT_GT(samples, 100);
	EXPECT_GT(lost, samples) TH_LOG("a late reader lost little without the watch");
	unwatched = (double)lost / (double)(samples + lost);
	/*
	 * At most 2% lost, in one of 3 tries (a host kept busy by make
	 * check's VMs can keep the main thread off the CPU): the ring was
	 * taken, and the main thread never waited for a compression.
	 */
	for (int try = 1; try <= 3; try++) {
		samples = lw_run(LWZ_ENV, "-z", variant->drain, 0, &lost);
		TH_LOG("-z watched, try %d: %lld samples, %lld lost", try, samples, lost);
		ASSERT_GT(samples, 100);
		if (lost * 50 <= samples + lost)
			break;
	}
	EXPECT_LE(lost * 50, samples + lost)
		TH_LOG("the watch did not take the late reader's ring while compressing "
		       "(%.1f%% lost without the watch)", 100 * unwatched);
	check_read_lost(_metadata, "lw.data", samples, lost);
	EXPECT_EQ(0, rec_round_violations("-i lw.data", &rounds, &timed));
	EXPECT_GT(rounds, 1);
}

/*
 * A main thread preempted while it takes a ring (the watch's or a
 * round's take) as the ring's SCHED_FIFO reader is woken: pevt record
 * and the workload on the last CPU, the first watch takes that CPU's
 * ring, wakes its reader and holds the ring 200 ms
 * (PEVT_STAGE_MAIN_HOLD_US).  The reader must sleep until the main
 * thread is done: one that spins (sched_yield(), as until 2026-12-05)
 * keeps the main thread, which shares its CPU, off it until RT
 * throttling lets it run (on the host: 1.13 and 1.17 s of CPU, the
 * recording of a 0.3 s sleep 1.27 s long, "RT throttling activated";
 * with the sleep 0.01-0.02 s and 0.32 s).  One that spins until
 * STAGE_SPIN_NS (not looking at the main thread's CPU) took 0.11-0.12 s
 * and 0.42 s.  The recorder's CPU time must stay under 0.5 s and within
 * 0.06 s of the same recording's without the hold, and the file must
 * read.  The workload spins a little before its sleep: a bare sleep ran
 * too little to be sampled at times, and perf does not read a file
 * without samples (0 samples in one of the two runs of the test here
 * before the change, session 40).
 */
/* One run of reader_waits_main_take: its samples (-1: failed), @cpu, @lost. */
static long long wm_run(const char *drain, int hold_us, double *cpu, long long *lost)
{
	long last = sysconf(_SC_NPROCESSORS_ONLN) - 1;
	struct rusage r0, r1;
	long long samples;
	struct out o;

	getrusage(RUSAGE_CHILDREN, &r0);
	run(&o, "PEVT_STAGE_MAIN_HOLD_US=%d taskset -c %ld %s record --drain=%s "
	    "-e cpu-clock -F 1000 -m 1 -o wm.data -- sh -c 'i=0; while [ $i -lt 20000 ]; do "
	    "i=$((i+1)); done; sleep 0.3'", hold_us, last, pevt_bin, drain);
	getrusage(RUSAGE_CHILDREN, &r1);
	*cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec -
			r0.ru_stime.tv_sec) +
	       (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec -
			r0.ru_stime.tv_usec) / 1e6;
	samples = o.status ? -1 : rec_summary(o.err, lost);
	if (o.status)
		fprintf(stderr, "# %s\n", o.err);
	out_free(&o);
	return samples;
}

TEST_F_TIMEOUT(rec, reader_waits_main_take, 60)
{
	long long samples, lost = 0;
	double cpu, base;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	if (geteuid())
		SKIP(return, "SCHED_FIFO readers: root only");
	samples = wm_run(variant->drain, 0, &base, &lost);
	ASSERT_LE(0, samples);
	samples = wm_run(variant->drain, 200000, &cpu, &lost);
	TH_LOG("recorder and sleep: %.3f s of CPU, %.3f s without the hold; %lld samples, %lld lost",
	       cpu, base, samples, lost);
	ASSERT_LE(0, samples);
	EXPECT_GT(0.5, cpu) TH_LOG("the reader spun while the main thread held its ring");
	EXPECT_GT(0.06, cpu - base) TH_LOG("the reader spun (up to STAGE_SPIN_NS) on the main "
					   "thread's CPU");
	check_read_lost(_metadata, "wm.data", samples, lost);
}

/*
 * A --pin-readers recording of cpu-clock at 20 kHz into 1-page rings,
 * a shell loop as the workload (2 MB a CPU: several 256 KiB chunks),
 * with @env before it; then each reader's PEVT_STAGE_STATS=1 line
 * ("stage cpu N: C chunks, M made by the filler, reader page faults
 * F"), logged and checked by @check.  The readers counted, or -1.
 */
static int spin_stage_lines(struct __test_metadata *_metadata, struct out *o, const char *env,
			    const char *drain, const char *file,
			    void (*check)(struct __test_metadata *, int cpu, int made, long faults,
					  void *), void *ctx)
{
	int cpu, chunks, made, readers = 0;
	long faults;
	const char *p;

	run(o, "%s PEVT_STAGE_STATS=1 %s record --drain=%s -e cpu-clock -F 20000 -m 1 -o %s "
	    "-- sh -c 'i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done'", env, pevt_bin,
	    drain, file);
	if (o->status)
		return -1;
	for (p = o->err; (p = strstr(p, "[ pevt record: stage cpu ")); p++) {
		if (sscanf(p, "[ pevt record: stage cpu %d: %d chunks, %d made by the "
			   "filler, reader page faults %ld", &cpu, &chunks, &made, &faults) != 4) {
			TH_LOG("unparsed: %s", p);
			return -1;
		}
		TH_LOG("reader of CPU %d: %d chunks, %d made by it, %ld page faults", cpu, chunks,
		       made, faults);
		check(_metadata, cpu, made, faults, ctx);
		readers++;
	}
	return readers;
}

static void no_staging_fault(struct __test_metadata *_metadata, int cpu, int made, long faults,
			     void *ctx)
{
	/* the ring's pages, the stack's: a few; 65 a chunk of its own */
	EXPECT_GE(8 + 66 * made, faults) TH_LOG("reader of CPU %d faulted on its staging", cpu);
}

static void sum_made(struct __test_metadata *_metadata, int cpu, int made, long faults,
		     void *ctx)
{
	*(int *)ctx += made;
}

/*
 * The readers take no page fault on their staging (record_stage.c
 * chunk_make(), stock_spares()): every chunk is made and its pages
 * populated by the main thread before a reader copies into it.  Until
 * 2026-12-05 the compiler turned chunk_new()'s malloc() + memset() to 0
 * into calloc(), which leaves fresh mapped memory untouched: each reader
 * took a fault per page of each chunk in its copy (190-255 a run here),
 * and a reader that found no spare made one itself (malloc() maps: the
 * process's mmap_lock).  Under single-threaded TCG two readers were
 * traced blocked there together for 5 ms while the ring filled.  Two
 * MB a CPU of cpu-clock at 20 kHz into 1-page rings: several chunks of
 * 256 KiB each.  A chunk the filler had to make itself (the main thread
 * late: a loaded machine) is populated by the reader, 65 faults (a
 * populate counts each page it maps in); those are allowed for and
 * logged.
 */
TEST_F_TIMEOUT(rec, readers_take_no_page_fault, 60)
{
	struct out o;
	int readers;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	readers = spin_stage_lines(_metadata, &o, "", variant->drain, "pf.data",
				   no_staging_fault, NULL);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_LT(0, readers) TH_LOG("no stage line: %s", o.err);
	out_free(&o);
}

/* Whether the stage line [@p, @end) has @s. */
static bool line_has(const char *p, const char *end, const char *s)
{
	const char *w = strstr(p, s);

	return w && w < end;
}

/* The count before @label in [@p, @end) of a stage line; -1 when none. */
static long long count_before(const char *p, const char *end, const char *label)
{
	const char *w = strstr(p, label);

	if (!w || w >= end)
		return -1;
	while (w > p && w[-1] >= '0' && w[-1] <= '9')
		w--;
	return atoll(w);
}

/*
 * A buffer that wakes its reader on every record (a stock kernel's once
 * its wakeup point stood ahead of head: kmod/ring_buffer.c
 * rb_advance_wakeup(); here wakeup_events = 1, through
 * PEVT_RECORD_WAKEUP_EVERY=1) puts the reader in timed waits
 * (record_stage.c reader_wait()): it sleeps the time its ring takes to
 * fill a quarter of it, and takes what came.  cpu-clock at 20 kHz into 1-page
 * rings: each reader says so on its PEVT_STAGE_STATS=1 line, all the
 * readers together wake fewer than one time in 8 samples, at most one
 * sample in 5000 is lost, and perf reads every sample.  Mutation: with
 * reader_account() never choosing timed waits, the readers woke 205587
 * times for 213004 samples and said nothing (3801 wakeups with them).
 * Until 2026-12-06 a reader put in timed waits before it had a rate
 * slept 10 ms on a ring that fills in 4-5 ms: 185 samples lost of about
 * 200000 in CI, 104 of 186666 in 1 of 6 runs here (0 in 12 since).
 * The bound is not 0: with two CPU hogs beside it 2 of 8 runs lost 37
 * and 52 (of 581234 and 339200), and 2 of 8 lost 7 and 21 without
 * PEVT_RECORD_WAKEUP_EVERY, the kernel's own wakeups; and a run over the
 * bound runs once more (below).
 * Their context switches too: until 2026-12-06 (session 40) a timed wait
 * slept on the ring's fd, with no event asked, and was woken in the
 * kernel by every record all the same (40260 switches for 1907 wakeups
 * and some 39000 samples per reader).
 */
TEST_F_TIMEOUT(rec, readers_timed_when_woken_for_every_record, 90)
{
	long long samples, lost = -1, wakeups, switches;
	int readers, timed;
	const char *p;
	struct out o;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	/*
	 * Two tries when the first loses more (CI, 2026-12-07: 117 of
	 * 88265, the debug kernel's VM beside it on the host's two CPUs):
	 * the loss of a busy host, not of the timed waits, comes in one
	 * run, not in two.  The counts below are of the run kept (the
	 * retry's shape is late_reader_watched_compressing's).
	 */
	for (int try = 1; try <= 2; try++) {
		lost = -1;
		wakeups = switches = 0;
		readers = timed = 0;
		run(&o, "PEVT_RECORD_WAKEUP_EVERY=1 PEVT_STAGE_STATS=1 %s record --drain=%s -e cpu-clock "
		    "-F 20000 -a -m 1 -o we.data -- sh -c 'i=0; while [ $i -lt 1000000 ]; do "
		    "i=$((i+1)); done'", pevt_bin, variant->drain);
		ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
		for (p = o.err; (p = strstr(p, "[ pevt record: stage cpu ")); p++) {
			const char *end = strchr(p, ']');
			long long w, cs;

			ASSERT_NE(NULL, end);
			if (line_has(p, end, " tracking:"))
				continue;	/* -a --backend stock: the dummy's sideband ring */
			w = count_before(p, end, " wakeups");
			cs = count_before(p, end, " context switches");
			ASSERT_TRUE(w >= 0 && cs >= 0) TH_LOG("no count: %.*s", (int)(end - p), p);
			wakeups += w;
			switches += cs;
			readers++;
			timed += line_has(p, end, "timed waits");
			TH_LOG("%.*s", (int)(end - p), p);
		}
		samples = rec_summary(o.err, &lost);
		out_free(&o);
		ASSERT_LT(0, readers);
		ASSERT_LT(10000, samples);
		if (lost * 5000 <= samples)
			break;
		TH_LOG("try %d: %lld lost of %lld", try, lost, samples);
	}
	EXPECT_EQ(readers, timed) TH_LOG("readers not in timed waits");
	EXPECT_LT(wakeups * 8, samples) TH_LOG("%lld wakeups for %lld samples", wakeups, samples);
	EXPECT_LT(switches * 8, samples) TH_LOG("%lld context switches for %lld samples",
						 switches, samples);
	EXPECT_LE(lost * 5000, samples) TH_LOG("%lld lost of %lld", lost, samples);
	check_read_lost(_metadata, "we.data", samples, lost);
}

/*
 * A reader that makes its own chunk (the main thread late) maps no
 * memory: it takes a slot of the arena mapped at the start
 * (record_stage.c chunk_make()).  Until 2026-12-05 (session 36) it
 * called malloc(), which maps a chunk that size (mmap_lock for writing:
 * every other thread's page fault waits behind it).
 * PEVT_STAGE_NO_SPARES=1 leaves the readers every chunk to make, and
 * PEVT_STAGE_READER_NO_MMAP=1 has a reader killed by SIGSYS if it calls
 * mmap, munmap, mremap, mprotect or brk.  Mutation: with chunk_make()
 * taking its chunk from malloc() again, the recorder is killed by
 * SIGSYS (status 159).
 */
TEST_F_TIMEOUT(rec, readers_map_no_memory, 60)
{
	long long samples, lost;
	int total = 0, readers;
	struct out o;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	readers = spin_stage_lines(_metadata, &o, "PEVT_STAGE_NO_SPARES=1 PEVT_STAGE_READER_NO_MMAP=1",
				   variant->drain, "nm.data", sum_made, &total);
	ASSERT_EQ(0, o.status) TH_LOG("status %d (159: a reader mapped memory): %s", o.status,
				      o.err);
	ASSERT_LT(0, readers) TH_LOG("no stage line: %s", o.err);
	/* 2 MB a CPU into chunks of 256 KiB, handed back once written */
	EXPECT_LT(0, total) TH_LOG("no reader made a chunk: %s", o.err);
	samples = rec_summary(o.err, &lost);
	out_free(&o);
	ASSERT_LT(1000, samples);
	check_read_lost(_metadata, "nm.data", samples, lost);
}

/*
 * Back-pressure: 100000 system calls at period 1 into 1-page buffers, so
 * the kernel fills each buffer many times while its earlier bytes are
 * being written.  What perf reads back must be exactly what pevt counted
 * (a tail stored before the bytes were on file lets the kernel overwrite
 * them: garbage records), no warning, and the round guarantee holds.
 */
TEST_F(rec, small_buffers)
{
	long long samples, lost;
	long rounds, timed;
	struct out o;

	if (access("/sys/kernel/tracing/events/raw_syscalls", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/raw_syscalls", F_OK))
		SKIP(return, "no tracefs with raw_syscalls");
	run(&o, "%s record --drain=%s -e raw_syscalls:sys_enter -c 1 -m 1 -o sb.data -- "
	    "%s bench record-loop 100000 /dev/null", pevt_bin, variant->drain, pevt_bin);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	samples = rec_summary(o.err, &lost);
	out_free(&o);
	ASSERT_GT(samples, 1000);
	TH_LOG("%s: %lld samples, %lld lost", variant->drain, samples, lost);
	run(&o, "perf script -i sb.data");
	EXPECT_EQ(0, o.status);
	EXPECT_EQ(samples, count_lines(o.out));
	EXPECT_TRUE(lost ? quiet_but_lost(o.err) : perf_quiet(o.err)) TH_LOG("%s", o.err);
	out_free(&o);
	EXPECT_EQ(0, rec_round_violations("-i sb.data", &rounds, &timed));
	EXPECT_GT(rounds, 1);
	/*
	 * The kernel's own count (read_format LOST) as LOST_SAMPLES records,
	 * like perf record: perf report's "Total Lost Samples" (0 before,
	 * whatever the LOST records said) is at least what they said.
	 */
	if (!lost)
		return;
	run(&o, "perf report --stdio --sort cpu -g none -i sb.data 2>/dev/null |"
	    " sed -n 's/^# Total Lost Samples: //p' | head -1");
	EXPECT_GE(atoll(o.out), lost) TH_LOG("perf report: '%s', pevt record: %lld lost", o.out, lost);
	EXPECT_GT(atoll(o.out), 0);
	out_free(&o);
}

/*
 * The asynchronous drains copy small rings out and give the space back at
 * once (record_drain.c, DRAIN_COPY_MAX: 256 KiB): -m 1 is copied, -m 128
 * is written from the mapping; the summary names which.
 */
TEST_F(rec, small_rings_copied)
{
	bool async = !strcmp(variant->drain, "uring") || !strcmp(variant->drain, "threads");
	static const int pages[] = { 1, 128 };
	long long samples, lost;
	struct out o;
	int i;

	for (i = 0; i < 2; i++) {
		run(&o, "%s record --drain=%s -m %d -e cpu-clock -c 100000 -o sr.data -- "
		    "sh -c 'i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done'",
		    pevt_bin, variant->drain, pages[i]);
		ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
		EXPECT_EQ(async && pages[i] == 1, strstr(o.err, "copies of small rings") != NULL)
			TH_LOG("-m %d: %s", pages[i], o.err);
		lost = 0;
		samples = rec_summary(o.err, &lost);
		out_free(&o);
		TH_LOG("-m %d: %lld samples, %lld lost", pages[i], samples, lost);
		ASSERT_LT(0, samples);
		/* -m 1 may lose on a loaded host: perf then warns of lost chunks */
		check_read_lost(_metadata, "sr.data", samples, lost);
	}
}

/* -z: PERF_RECORD_COMPRESSED as perf 6.1 writes it, file and pipe. */
TEST_F(rec, compressed)
{
	long long samples;
	struct out o;

	run(&o, "%s record --drain=%s -z -F 2000 -o z.data -- " LOOP, pevt_bin, variant->drain);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	samples = rec_summary(o.err, NULL);
	EXPECT_NE(NULL, strstr(o.err, "ratio is "));
	/* A compressed record is a copy made in order: the write drain does it. */
	if (strncmp(variant->drain, "write", 5))
		EXPECT_NE(NULL, strstr(o.err, "-z writes in order, using --drain=write"));
	out_free(&o);
	ASSERT_GT(samples, 10);
	check_read(_metadata, "z.data", samples);
	run(&o, "perf report --header-only -i z.data");
	EXPECT_NE(NULL, strstr(o.out, "# compressed : Zstd, level = 1, ratio = "));
	out_free(&o);
	run(&o, "perf report --stats -i z.data");
	EXPECT_NE(NULL, strstr(o.out, "COMPRESSED events:"));
	out_free(&o);

	samples = record(_metadata, "(%s record --drain=%s -z5 -F 2000 -o - -- " LOOP " >zp.data)", pevt_bin, variant->drain);
	ASSERT_GT(samples, 10);
	/*
	 * Not check_read(): Debian's perf 6.1 `report --stats` fails on
	 * compressed pipes ("Couldn't decompress data"), its own included
	 * (perf record -z -o - | perf report --stats -i -).
	 */
	run(&o, "perf script -i - <zp.data");
	EXPECT_EQ(0, o.status);
	EXPECT_EQ(samples, count_lines(o.out));
	EXPECT_TRUE(perf_quiet(o.err));
	out_free(&o);
	run(&o, "perf report --stdio -i - <zp.data");
	EXPECT_EQ(0, o.status);
	EXPECT_TRUE(perf_quiet(o.err));
	out_free(&o);
}

/*
 * -z --pin-readers -m 1: zstd is flushed once for many rings' worth (the
 * readers stage 128 KiB and more), and the COMPRESSED feature's mmap_len
 * says so, perf's decompression buffer for one record.  Until 2026-12-06
 * a flush took at most one ring: 4 KiB at -m 1, each a zstd block of its
 * own.  cpu-clock at 20 kHz: the COMPRESSED records (perf report
 * --stats) hold more than 2 rings each on average, and perf reads every
 * sample.  Mutations: flushes cut at one ring again, 3.9 KiB a record
 * (fails); 64 KiB flushes but the ring's mmap_len announced, perf fails
 * to decompress (fails).
 */
TEST_F_TIMEOUT(rec, compressed_flush_many_rings, 60)
{
	long long samples, nrec;
	double raw_mb, kib;
	const char *p;
	struct out o;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	run(&o, "%s record --drain=%s -z -m 1 -e cpu-clock -F 20000 -o zm.data -- " LOOP,
	    pevt_bin, variant->drain);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	samples = rec_summary(o.err, NULL);
	p = strstr(o.err, "[ pevt record: Compressed ");
	ASSERT_NE(NULL, p) TH_LOG("%s", o.err);
	raw_mb = atof(p + strlen("[ pevt record: Compressed "));
	out_free(&o);
	ASSERT_GT(samples, 1000);
	check_read(_metadata, "zm.data", samples);
	run(&o, "perf report --stats -i zm.data");
	p = strstr(o.out, "COMPRESSED events:");
	ASSERT_NE(NULL, p) TH_LOG("%s", o.out);
	nrec = atoll(p + strlen("COMPRESSED events:"));
	out_free(&o);
	ASSERT_LT(0, nrec);
	kib = raw_mb * 1024 / nrec;
	TH_LOG("%lld samples, %.3f MB in %lld COMPRESSED records: %.1f KiB each",
	       samples, raw_mb, nrec, kib);
	EXPECT_LT(8.0, kib);
}

/*
 * -z on a slow CPU (PEVT_RECORD_ZSTD_DELAY_US: every compression takes 20
 * ms more, a stand-in for a loaded or emulated machine): the passes only
 * copy the rings out and a thread compresses behind them, so -z loses
 * what no -z loses: 0-107 of 3884 in 4 runs on the project's host, 0-19%
 * with a TCG guest and two benchmarks on its 2 CPUs.  Compressing in the
 * pass lost 78-92% (PEVT_RECORD_Z_INLINE=1).  Hence "at most a third".
 * --pin-readers too since 2026-12-06 (its readers copy the rings out,
 * and the main thread hands their chunks to the thread).
 */
TEST_F(rec, compressed_slow_cpu)
{
	long long samples, lost = -1;
	long rounds, timed;
	struct out o;

	if (access("/sys/kernel/tracing/events/raw_syscalls", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/raw_syscalls", F_OK))
		SKIP(return, "no tracefs with raw_syscalls");
	/*
	 * Up to 3 tries: a loaded host (the debug kernel's build beside the
	 * host tests in make check) can keep the passes off the CPU long
	 * enough for a 16 KiB ring to overflow with or without -z (61% lost
	 * once, 2026-12-03).  Compressing in the pass loses 78-92% every time.
	 */
	for (int try = 1; try <= 3; try++) {
		run(&o, "PEVT_RECORD_ZSTD_DELAY_US=20000 %s record --drain=%s -z -m 4 "
		    "-e raw_syscalls:sys_enter -c 1 -o zs.data -- sh -c 'for i in $(seq 100); do /bin/true; done'",
		    pevt_bin, variant->drain);
		ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
		samples = rec_summary(o.err, &lost);
		out_free(&o);
		TH_LOG("try %d: %lld samples, %lld lost", try, samples, lost);
		ASSERT_GT(samples + lost, 1000);
		if (lost * 3 <= samples + lost)
			break;
	}
	EXPECT_LE(lost * 3, samples + lost) TH_LOG("%lld of %lld lost", lost, samples + lost);
	run(&o, "perf script -i zs.data");
	EXPECT_EQ(0, o.status);
	EXPECT_EQ(samples, count_lines(o.out));
	EXPECT_TRUE(lost ? quiet_but_lost(o.err) : perf_quiet(o.err)) TH_LOG("%s", o.err);
	out_free(&o);
	EXPECT_EQ(0, rec_round_violations("-i zs.data", &rounds, &timed));
	EXPECT_GT(rounds, 1);
}

/*
 * --pin-readers on a 1-page ring with samples of a fixed size: the kernel
 * wakes the reader when the ring leaves 16 samples' room (cpu-clock -a:
 * 48 bytes, 4096 - 768 = 3328), not at half (record.c pin_watermark();
 * -a --backend stock: its tracking rings' readers not counted),
 * and the main thread's watch takes a ring only past that point too.  At
 * half, each reader wakeup brought some 2 KiB; and a watch that still
 * took rings at half took most of them (mutations: no watermark, fails
 * on the bytes a wakeup; the watch at half, fails on its takes).
 * -m 16 and tracepoints (RAW) keep the kernel's half.
 */
TEST_F_TIMEOUT(rec, pin_wakes_late_on_small_rings, 60)
{
	long long samples, lost = -1, wakeups = 0, takes = -1, sleeps, timed_out, kicked;
	long page = sysconf(_SC_PAGESIZE);
	const char *p, *end;
	char want[64];
	struct out o;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the readers of --pin-readers only");
	run(&o, "PEVT_STAGE_STATS=1 %s record --drain=%s -e cpu-clock -F 20000 -a -m 1 "
	    "-o wl.data -- sh -c 'i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done'",
	    pevt_bin, variant->drain);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	for (p = o.err; (p = strstr(p, "[ pevt record: stage cpu ")); p++) {
		end = strchr(p, ']');
		ASSERT_NE(NULL, end);
		if (!line_has(p, end, " tracking:"))
			wakeups += count_before(p, end, " wakeups");
	}
	p = strstr(o.err, "[ pevt record: main thread: ");
	ASSERT_NE(NULL, p) TH_LOG("%s", o.err);
	end = strchr(p, ']');
	takes = count_before(p, end, " rings taken by the watch");
	/* the main thread's sleeps, and what ended them: the watch's timeout mostly */
	sleeps = count_before(p, end, " sleeps (");
	timed_out = count_before(p, end, " timed out");
	kicked = count_before(p, end, " kicked)");
	samples = rec_summary(o.err, &lost);
	TH_LOG("%.*s", (int)(end - p), p);
	out_free(&o);
	TH_LOG("%lld samples (%lld lost), %lld reader wakeups (%.0f bytes a wakeup), "
	       "%lld rings taken by the watch", samples, lost, wakeups,
	       wakeups ? samples * 48.0 / wakeups : 0, takes);
	EXPECT_LT(0, timed_out);
	EXPECT_LE(timed_out, sleeps);
	EXPECT_TRUE(kicked >= 0 && kicked <= sleeps);
	ASSERT_LT(10000, samples);
	ASSERT_LT(0, wakeups);
	EXPECT_GT(samples * 48, wakeups * 2600);
	EXPECT_LT(takes * 10, wakeups);
	EXPECT_LE(lost * 5000, samples);
	snprintf(want, sizeof(want), "wakeup_watermark }: %ld", page - 16 * 48);
	run(&o, "perf evlist -v -i wl.data");
	EXPECT_NE(NULL, strstr(o.out, want)) TH_LOG("no '%s': %s", want, o.out);
	out_free(&o);
	check_read_lost(_metadata, "wl.data", samples, lost);

	run(&o, "%s record --drain=%s -e cpu-clock -F 1000 -a -m 16 -o wl16.data -- true && "
	    "perf evlist -v -i wl16.data", pevt_bin, variant->drain);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_EQ(NULL, strstr(o.out, "wakeup_watermark")) TH_LOG("%s", o.out);
	out_free(&o);
}

/*
 * --pin-readers with a main thread that writes slower than its readers
 * stage (-z, every compression 10 ms longer: PEVT_RECORD_ZSTD_DELAY_US,
 * a stand-in for a TCG guest at cpu-clock -F 100000 -a): the recording
 * ends when its workload does, and keeps what was staged.  Until
 * 2026-12-06 a pass also consumed what the readers staged while it
 * wrote, so a main thread that never caught up never came back to see
 * the workload's end (a 6.1 guest: `-e cpu-clock -F 100000 -a -m 1 -z`
 * of a 0.4 s workload ran for minutes).  On this project's host: 8.6 s
 * and some 70000 samples with the fix, killed by the 40 s timeout
 * without it (twice).
 */
TEST_F(rec, slow_writer_ends)
{
	long long samples, lost = -1;
	struct timespec t0, t1;
	double secs;
	struct out o;

	if (!strstr(variant->drain, "pin"))
		SKIP(return, "the staging of --pin-readers only");
	self->busy = start_busy();
	ASSERT_GT(self->busy, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run(&o, "PEVT_RECORD_ZSTD_DELAY_US=10000 timeout -s KILL 40 %s record --drain=%s -z "
	    "-e cpu-clock -F 20000 -a -m 1 -o sw.data -- sleep 0.5", pevt_bin, variant->drain);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	ASSERT_EQ(0, o.status) TH_LOG("%.1f s: %s", secs, o.err);
	samples = rec_summary(o.err, &lost);
	out_free(&o);
	TH_LOG("%.1f s, %lld samples, %lld lost", secs, samples, lost);
	EXPECT_LT(secs, 30.0);
	ASSERT_GT(samples, 1000);
	run(&o, "perf script -i sw.data");
	EXPECT_EQ(0, o.status);
	EXPECT_EQ(samples, count_lines(o.out));
	EXPECT_TRUE(lost ? quiet_but_lost(o.err) : perf_quiet(o.err)) TH_LOG("%s", o.err);
	out_free(&o);
}

/* -p until SIGINT: the file is finished and complete. */
TEST_F(rec, pid_sigint)
{
	long long samples;
	struct out o;

	self->busy = start_busy();
	ASSERT_GT(self->busy, 0);
	samples = record(_metadata, "(%s record --drain=%s -F 1000 -p %d -o s.data & P=$!; sleep 1.5; kill -INT $P; wait $P)",
	    pevt_bin, variant->drain, self->busy);
	ASSERT_GT(samples, 10);
	check_read(_metadata, "s.data", samples);
	run(&o, "perf report --header-only -i s.data");
	EXPECT_NE(NULL, strstr(o.out, "# cmdline : "));
	out_free(&o);
}

/*
 * -a with a COMMAND, as perf record -a -- COMMAND: system wide (a busy
 * process outside the workload is sampled too) until COMMAND exits.
 */
TEST_F(rec, all_cpus_workload)
{
	long long samples;
	struct out o;

	self->busy = start_busy();
	ASSERT_GT(self->busy, 0);
	samples = record(_metadata, "%s record --drain=%s -e cpu-clock -F 1000 -a -o a.data -- sleep 1",
			 pevt_bin, variant->drain);
	ASSERT_GT(samples, 10);
	check_read(_metadata, "a.data", samples);
	run(&o, "perf script -F pid -i a.data | grep -c '^ *%d *$'", self->busy);
	EXPECT_GT(atoi(o.out), 10) TH_LOG("samples of the busy pid %d: %s", self->busy, o.out);
	out_free(&o);
}

/*
 * -a with a COMMAND: the events stop when COMMAND ends, before the
 * readers stop and the last pass, as perf record's evlist__disable().
 * With -a they sample on after it; until 2026-12-06 they were disabled
 * after the readers had stopped, and a ring full by then dropped what
 * came meanwhile (-m 1 cpu-clock -a in a 6.1 guest: some 550 samples at
 * the end of each recording, two thirds of its loss).  Here the stop
 * takes 0.5 s more once the readers have stopped
 * (PEVT_RECORD_STOP_DELAY_US): 0 lost; with the old order put back
 * 2443 (pin) and 3788 (write) lost, 2583 kept.
 */
TEST_F(rec, all_cpus_disabled_at_end)
{
	long long samples, lost = -1;
	struct out o;

	run(&o, "PEVT_RECORD_STOP_DELAY_US=500000 %s record --drain=%s -e cpu-clock -F 4000 -a "
	    "-m 1 -o ae.data -- sleep 0.3", pevt_bin, variant->drain);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	samples = rec_summary(o.err, &lost);
	out_free(&o);
	TH_LOG("%lld samples, %lld lost", samples, lost);
	ASSERT_GT(samples, 500);
	EXPECT_LT(lost * 20, samples);
	check_read_lost(_metadata, "ae.data", samples, lost);
}

/*
 * An idle ring's reader is not woken for nothing: a round asks no reader
 * whose ring is empty, and a reader's poll times out after 1 s.  A 1 s
 * recording: each tracking reader's wakeups that took nothing, at most 4
 * (0-1 seen).  Until 2026-12-07 every round (100 ms) and every 50 ms
 * poll timeout woke it (mutations: the 50 ms poll 13-21, empty rings
 * asked 9-11).  (Its wakeups in all depend on the sideband of the whole
 * machine: 2-3 on an idle host, 10-28 beside a CI run.)
 */
static void idle_tracking_readers(struct __test_metadata *_metadata)
{
	const char *p, *end;
	long long w;
	struct out o;

	run(&o, "PEVT_STAGE_STATS=1 %s record --backend stock -e cpu-clock -F 1000 -a -m 1 "
	    "-o idle.data -- sleep 1", pevt_bin);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	for (p = o.err; (p = strstr(p, "[ pevt record: stage cpu ")); p++) {
		end = strchr(p, ']');
		ASSERT_NE(NULL, end);
		if (!line_has(p, end, " tracking:"))
			continue;
		w = count_before(p, end, " wakeups took nothing");
		TH_LOG("idle: %.*s", (int)(end - p), p);
		EXPECT_TRUE(w >= 0 && w <= 4) TH_LOG("a tracking reader woken %lld times for nothing in 1 s", w);
	}
	out_free(&o);
}

/*
 * --backend stock CPU-wide (-a): COMM, MMAP2, FORK and EXIT come from a
 * dummy tracking event in rings of its own (2 rings a CPU, one more
 * reader each), and the sampling event asks for no sideband, so its
 * rings are written from interrupt context only.  A sideband record
 * (task context) interrupted by a sample into the same stock ring can
 * leave the kernel's wakeup point ahead of head, and its reader is then
 * woken for every record (record.md "A wakeup for every record",
 * "Sideband in rings of its own").  The file is what it was: one attr,
 * with the tracking bits, no IDENTIFIER (the dummy is opened with the
 * event's sample_type and left out of the file).  The sideband arrives:
 * the workload's exec and its shell's DSO (from its MMAP2), read by perf
 * and by pevt report alike.  Until 2026-12-07 cpu-clock tracked itself
 * into its own rings: 1 ring a CPU, no tracking reader; fails.
 */
TEST_F(rec, all_cpus_stock_sideband_own_rings)
{
	long long samples, lost = -1, sh = -1, unknown = -1;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), readers = 0, tracking = 0, rings;
	const char *p, *end;
	struct out o, q;

	run(&o, "PEVT_STAGE_STATS=1 %s record --backend stock --drain=%s -e cpu-clock -F 2000 "
	    "-a -m 1 -o sb.data -- sh -c 'grep -c \"perf_event\\]\" /proc/$PPID/maps; i=0; "
	    "while [ $i -lt 300000 ]; do i=$((i+1)); done; exec /bin/true'", pevt_bin,
	    variant->drain);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	samples = rec_summary(o.err, &lost);
	rings = atoi(o.out);
	for (p = o.err; (p = strstr(p, "[ pevt record: stage cpu ")); p++) {
		end = strchr(p, ']');
		ASSERT_NE(NULL, end);
		readers++;
		tracking += line_has(p, end, " tracking:");
	}
	out_free(&o);
	TH_LOG("%lld samples, %lld lost, %d rings mapped, %d readers, %d of tracking rings",
	       samples, lost, rings, readers, tracking);
	ASSERT_LT(100, samples);
	EXPECT_EQ(2 * ncpu, rings);
	if (strstr(variant->drain, "pin")) {
		EXPECT_EQ(2 * ncpu, readers);
		EXPECT_EQ(ncpu, tracking);
		idle_tracking_readers(_metadata);
	}
	run(&o, "perf evlist -v -i sb.data");
	ASSERT_EQ(0, o.status);
	EXPECT_EQ(1, count_lines(o.out)) TH_LOG("%s", o.out);
	EXPECT_TRUE(strstr(o.out, "cpu-clock:") && strstr(o.out, " mmap2: 1") &&
		    strstr(o.out, " comm: 1") && strstr(o.out, " task: 1"))
		TH_LOG("%s", o.out);
	EXPECT_EQ(NULL, strstr(o.out, "IDENTIFIER")) TH_LOG("%s", o.out);
	out_free(&o);
	/* the sideband arrived: the workload's exec, its shell's DSO */
	run(&o, "perf script --show-task-events -i sb.data | grep -c 'PERF_RECORD_COMM exec: true:'");
	EXPECT_LT(0, atoi(o.out)) TH_LOG("no exec COMM of the workload");
	out_free(&o);
	run(&o, "perf script -F comm,ip,dso -i sb.data | awk '$1 == \"sh\" { n++; "
	    "u += /unknown/ } END { print n + 0, u + 0 }'");
	EXPECT_EQ(2, sscanf(o.out, "%lld %lld", &sh, &unknown)) TH_LOG("%s", o.out);
	out_free(&o);
	TH_LOG("the shell's samples: %lld, %lld of them in no known DSO", sh, unknown);
	EXPECT_LT(50, sh);
	EXPECT_LT(unknown * 10, sh);
	check_read_lost(_metadata, "sb.data", samples, lost);
	run(&o, "perf report --stdio -i sb.data 2>/dev/null | grep -v '^#' | head -20");
	run(&q, "%s report --stdio -i sb.data 2>/dev/null | grep -v '^#' | head -20", pevt_bin);
	EXPECT_STREQ(o.out, q.out);
	out_free(&o);
	out_free(&q);
	/* Two events: IDENTIFIER in every record anyway; the dummy in the file, as perf's. */
	run(&o, "%s record --backend stock --drain=%s -e cpu-clock -e task-clock -F 2000 -a -m 1 "
	    "-o sb2.data -- sh -c 'sleep 0.3; exec /bin/true'", pevt_bin, variant->drain);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	samples = rec_summary(o.err, &lost);
	out_free(&o);
	run(&o, "{ perf evlist -v -i sb2.data | grep -c ' mmap2: 1'; perf evlist -v -i sb2.data | "
	    "grep -c '^dummy:u: .* mmap2: 1'; perf evlist -v -i sb2.data | grep -c IDENTIFIER; }");
	EXPECT_STREQ("1\n1\n3\n", o.out) TH_LOG("tracking, by the dummy, IDENTIFIER: %s", o.out);
	out_free(&o);
	run(&o, "perf script --show-task-events -i sb2.data | grep -c 'PERF_RECORD_COMM exec: true:'");
	EXPECT_LT(0, atoi(o.out)) TH_LOG("no exec COMM of the workload");
	out_free(&o);
	check_read_lost(_metadata, "sb2.data", samples, lost);
}

/*
 * With -a the recorder's own threads are sampled like any other, so the
 * file names them: a COMM for every thread the recorder has while its
 * workload runs (read from /proc/$PPID/task then): the main thread, the
 * readers (--pin-readers, a sampling and a tracking one a CPU), the
 * compressing thread (-z), --drain=threads' writers.  Until 2026-12-07
 * the readers and the compressing thread started after the file's
 * synthesized state and perf report showed their samples under ":TID"
 * (a third of a 6.1 guest's at -F 100000 -a -m 1); fails on the pin
 * variant (readers) and with -z on every one (the compressing thread).
 */
TEST_F(rec, all_cpus_recorder_threads_named)
{
	static const char *const zs[] = { "", "-z" };
	int i;

	for (i = 0; i < 2; i++) {
		struct out o, q;
		char *line, *save = NULL;
		int tids = 0, named = 0;

		run(&o, "%s record --drain=%s %s -e cpu-clock -F 1000 -a -m 1 -o tn.data -- "
		    "sh -c 'ls /proc/$PPID/task'", pevt_bin, variant->drain, zs[i]);
		ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
		run(&q, "perf script --show-task-events -i tn.data 2>&1 | grep 'PERF_RECORD_COMM'");
		for (line = strtok_r(o.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char want[64];

			snprintf(want, sizeof(want), "/%d\n", atoi(line));
			tids++;
			if (strstr(q.out, want))
				named++;
			else
				TH_LOG("%s: thread %s of the recorder has no COMM in the file",
				       zs[i][0] ? zs[i] : "without -z", line);
		}
		TH_LOG("%s: %d of the recorder's %d threads named", zs[i][0] ? zs[i] : "without -z",
		       named, tids);
		EXPECT_LT(0, tids);
		if (strstr(variant->drain, "pin"))
			EXPECT_LT(2 * (int)sysconf(_SC_NPROCESSORS_ONLN), tids);
		if (zs[i][0])
			EXPECT_LT(1, tids);
		EXPECT_EQ(tids, named);
		out_free(&o);
		out_free(&q);
	}
}

/*
 * kill -9: no features, but every complete round is readable. Without
 * EVENT_DESC a reader names the events from their attrs: pevt report
 * must name them as perf report does (evsel__name: cpu-clock:uH for
 * -e cpu-clock:u, whose exclude_guest is 1).
 */
TEST_F(rec, killed)
{
	long rounds, timed;
	struct out o, p;

	self->busy = start_busy();
	ASSERT_GT(self->busy, 0);
	run(&o, "(%s record --drain=%s -F 1000 -e cpu-clock -e cpu-clock:u -e task-clock:uk"
	    " -p %d -o k.data & P=$!; sleep 1.5; kill -KILL $P; wait $P)",
	    pevt_bin, variant->drain, self->busy);
	EXPECT_EQ(128 + SIGKILL, o.status);
	out_free(&o);
	run(&o, "perf script -i k.data");
	EXPECT_EQ(0, o.status);
	EXPECT_GT(count_lines(o.out), 10);
	EXPECT_TRUE(perf_quiet(o.err));
	out_free(&o);
	EXPECT_EQ(0, rec_round_violations("-i k.data", &rounds, &timed));
	EXPECT_GT(rounds, 1);
	run(&o, "perf report --stdio -i k.data | grep 'of event'");
	run(&p, "%s report --stdio -i k.data | grep 'of event'", pevt_bin);
	EXPECT_NE(NULL, strstr(o.out, "'cpu-clock:uH'")) TH_LOG("%s", o.out);
	EXPECT_STREQ(o.out, p.out);
	out_free(&o);
	out_free(&p);
}

/* A write error (file size limit): reported with the path; file readable. */
TEST_F(rec, write_error)
{
	struct stat st;
	struct out o;

	self->busy = start_busy();
	ASSERT_GT(self->busy, 0);
	/* dash's ulimit -f counts 512-byte blocks: 64 KiB. */
	run(&o, "(trap '' XFSZ; ulimit -f 128; exec %s record --drain=%s -F 4000 -p %d -o w.data)",
	    pevt_bin, variant->drain, self->busy);
	EXPECT_NE(0, o.status);
	EXPECT_NE(NULL, strstr(o.err, "w.data")) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.err, strerror(EFBIG))) TH_LOG("%s", o.err);
	out_free(&o);
	ASSERT_EQ(0, stat("w.data", &st));
	EXPECT_LE(st.st_size, 65536);
	run(&o, "perf script -i w.data");
	EXPECT_EQ(0, o.status);
	EXPECT_GT(count_lines(o.out), 10);
	EXPECT_TRUE(perf_quiet(o.err));
	out_free(&o);
}

/*
 * The same with tracepoint samples, with and without -z: perf needs the
 * TRACING_DATA feature to read them at all, so the features go after the
 * rounds kept, over the incomplete one.  Before (data and header only),
 * perf said "incompatible file format" and read nothing.
 */
TEST_F(rec, write_error_tracepoint)
{
	static const char *const zs[] = { "", "-z" };
	/* dash's ulimit -f counts 512-byte blocks: 1 MiB, 128 KiB (-z) */
	static const int limit[] = { 2048, 256 };
	struct stat st;
	struct out o;
	unsigned int i;

	if (access("/sys/kernel/tracing/events/raw_syscalls", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/raw_syscalls", F_OK))
		SKIP(return, "no tracefs with raw_syscalls");
	for (i = 0; i < 2; i++) {
		run(&o, "(trap '' XFSZ; ulimit -f %d; exec %s record --drain=%s %s -m 4 "
		    "-e raw_syscalls:sys_enter -c 1 -o w.data -- sh -c 'for i in $(seq 1000); do /bin/true; done')",
		    limit[i], pevt_bin, variant->drain, zs[i]);
		EXPECT_NE(0, o.status) TH_LOG("%s", zs[i]);
		EXPECT_NE(NULL, strstr(o.err, "w.data")) TH_LOG("%s", o.err);
		EXPECT_NE(NULL, strstr(o.err, strerror(EFBIG))) TH_LOG("%s", o.err);
		out_free(&o);
		ASSERT_EQ(0, stat("w.data", &st));
		EXPECT_LE(st.st_size, limit[i] * 512);
		run(&o, "perf script -i w.data");
		EXPECT_EQ(0, o.status) TH_LOG("%s: %s", zs[i], o.err);
		/*
		 * Rounds are 100 ms apart: with -z (~13 bytes a sample) the
		 * rounds that fit in 128 KiB held 1-8500 samples in 24 runs.
		 */
		if (!*zs[i])
			EXPECT_GT(count_lines(o.out), 100);
		EXPECT_TRUE(quiet_but_lost(o.err)) TH_LOG("%s: %s", zs[i], o.err);
		out_free(&o);
		run(&o, "%s report --stdio --sort comm -i w.data", pevt_bin);
		EXPECT_EQ(0, o.status) TH_LOG("%s: %s", zs[i], o.err);
		out_free(&o);
	}
}

/* The data section's end in a perf.data file: data.offset + data.size. */
static long long data_end(const char *path)
{
	unsigned long long v[2];
	FILE *f = fopen(path, "r");
	bool ok = f && !fseek(f, 40, SEEK_SET) && fread(v, sizeof(v), 1, f) == 1;

	if (f)
		fclose(f);
	return ok ? (long long)(v[0] + v[1]) : -1;
}

/*
 * Everything recorded fits, its features do not (a limit half-way into
 * them): an earlier round is kept and the features go after it, where
 * the data was.  Before, the data without features: perf read nothing.
 * The workload: two bursts of ~1000 samples (100 KB) with a round
 * between them (rounds are marked by the passes, at least 100 ms apart),
 * the same sizes from run to run but for a few samples.
 */
#define TWO_ROUNDS \
	"sh -c '%s bench record-loop 1000 /dev/null; sleep 0.4; %s bench record-loop 1000 /dev/null'"

TEST_F(rec, write_error_features)
{
	long long end, limit;
	struct stat st;
	struct out o;

	if (access("/sys/kernel/tracing/events/raw_syscalls", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/raw_syscalls", F_OK))
		SKIP(return, "no tracefs with raw_syscalls");
	ASSERT_LT(0, record(_metadata, "%s record --drain=%s -e raw_syscalls:sys_enter -c 1 "
			    "-o f.data -- " TWO_ROUNDS, pevt_bin, variant->drain, pevt_bin, pevt_bin));
	end = data_end("f.data");
	ASSERT_EQ(0, stat("f.data", &st));
	ASSERT_GT(end, 0);
	/* TRACING_DATA alone is several KiB: room for a sample count's variation */
	ASSERT_GT(st.st_size - end, 2048) TH_LOG("features: %lld bytes", (long long)st.st_size - end);
	limit = (end + (st.st_size - end) / 2) / 512;
	run(&o, "(trap '' XFSZ; ulimit -f %lld; exec %s record --drain=%s -e raw_syscalls:sys_enter -c 1 "
	    "-o w.data -- " TWO_ROUNDS ")", limit, pevt_bin, variant->drain, pevt_bin, pevt_bin);
	EXPECT_NE(0, o.status);
	EXPECT_NE(NULL, strstr(o.err, "w.data")) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.err, strerror(EFBIG))) TH_LOG("%s", o.err);
	out_free(&o);
	EXPECT_LT(data_end("w.data"), end);
	run(&o, "perf script -i w.data");
	EXPECT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_TRUE(perf_quiet(o.err)) TH_LOG("%s", o.err);
	/* the first burst's round (~1290 samples), not only the state before it */
	EXPECT_GT(count_lines(o.out), 500);
	out_free(&o);
	run(&o, "perf report --header-only -i w.data");
	EXPECT_NE(NULL, strstr(o.out, "# cmdline : ")) TH_LOG("%s", o.out);
	out_free(&o);
}

/*
 * A workload that cannot exec: "cannot run", exit 127, both when record
 * waits for the exec (enable_on_exec) and when it drains while the exec
 * is pending (-a: record_loop() reads the exec's errno).
 */
TEST_F(rec, exec_fails)
{
	static const char *const how[] = { "-e cpu-clock", "-e cpu-clock -a" };
	struct out o;
	unsigned int i;

	for (i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		run(&o, "%s record --drain=%s %s -o e.data -- /nonexistent/cmd arg",
		    pevt_bin, variant->drain, how[i]);
		EXPECT_EQ(127, o.status) TH_LOG("%s: %s", how[i], o.err);
		EXPECT_NE(NULL, strstr(o.err, "cannot run '/nonexistent/cmd': No such file or directory"))
			TH_LOG("%s: %s", how[i], o.err);
		out_free(&o);
	}
}

/*
 * --call-graph dwarf: the attr perf record sets (user registers
 * 0xff0fff, 8192 stack bytes, mmap_data for the unwinder's .eh_frame),
 * and perf report unwinds the call tree program of pevt's file into the
 * paths it unwinds from its own recording: at least 99% of each file's
 * samples in the program's functions have a path the other file has, and
 * as many of them reach main.
 */
TEST_F(rec, call_graph_dwarf)
{
	struct cg_paths pp, tp;
	long long samples;
	struct out o;
	FILE *f;

	f = fopen("cgn.c", "w");
	ASSERT_NE(NULL, f);
	fputs(CGN_SRC, f);
	fclose(f);
	if (system("cc -O2 -g -fomit-frame-pointer -o cgn cgn.c"))
		SKIP(return, "cannot build the call tree program (no cc)");
	run(&o, "perf record -q --call-graph dwarf -F 2000 -o perf.data -- ./cgn " CGN_N);
	if (o.status)
		SKIP(return, "perf record --call-graph dwarf fails here: %s", o.err);
	out_free(&o);
	ASSERT_EQ(0, cg_paths_read(CG_PERF_REPORT, "-i perf.data", "cg_", "main", &pp));
	if (pp.total < 100 || pp.deep * 100 < pp.total * 95)
		SKIP(return, "perf unwinds only %ld of its own %ld samples to main", pp.deep, pp.total);

	samples = record(_metadata, "%s record --drain=%s --call-graph dwarf -F 2000 -o t.data -- ./cgn "
			 CGN_N, pevt_bin, variant->drain);
	ASSERT_GT(samples, 100);
	run(&o, "perf evlist -v -i t.data");
	EXPECT_TRUE(perf_quiet(o.err));
	EXPECT_NE(NULL, strstr(o.out, "sample_type: IP|TID|TIME|CALLCHAIN|PERIOD|REGS_USER|STACK_USER"))
		TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(o.out, "sample_regs_user: 0xff0fff")) TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(o.out, "sample_stack_user: 8192")) TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(o.out, "exclude_callchain_user: 1")) TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(o.out, "mmap_data: 1")) TH_LOG("%s", o.out);
	out_free(&o);
	run(&o, "perf report --stdio -i t.data");
	EXPECT_EQ(0, o.status);
	EXPECT_TRUE(perf_quiet(o.err)) TH_LOG("%s", o.err);
	out_free(&o);

	ASSERT_EQ(0, cg_paths_read(CG_PERF_REPORT, "-i t.data", "cg_", "main", &tp));
	fprintf(stderr, "# perf: %ld samples, %ld to main, %ld on pevt's paths; "
		"pevt: %ld, %ld to main, %ld on perf's paths (%zu / %zu paths)\n",
		pp.total, pp.deep, cg_paths_shared(&pp, &tp), tp.total, tp.deep,
		cg_paths_shared(&tp, &pp), pp.nr, tp.nr);
	EXPECT_GT(tp.total, 100);
	EXPECT_GE(tp.deep * 100, tp.total * 99);
	EXPECT_GE(cg_paths_shared(&tp, &pp) * 100, tp.total * 99);
	EXPECT_GE(cg_paths_shared(&pp, &tp) * 100, pp.total * 99);
	cg_paths_free(&tp);

	/*
	 * -p: the process's mappings come from /proc, the data ones too
	 * (MISC_MMAP_DATA), or the unwinder finds no .eh_frame_hdr.
	 */
	self->busy = fork();
	if (!self->busy) {
		execl("./cgn", "cgn", "2000000000", (char *)NULL);
		_exit(127);
	}
	ASSERT_GT(self->busy, 0);
	usleep(200000);
	samples = record(_metadata, "(%s record -q --drain=%s --call-graph dwarf -F 2000 -p %d "
			 "-o p.data & P=$!; sleep 0.5; kill -INT $P; wait $P)",
			 pevt_bin, variant->drain, self->busy);
	ASSERT_EQ(0, cg_paths_read(CG_PERF_REPORT, "-i p.data", "cg_", "main", &tp));
	fprintf(stderr, "# -p: %ld samples, %ld to main, %ld on perf's paths\n",
		tp.total, tp.deep, cg_paths_shared(&tp, &pp));
	EXPECT_GT(tp.total, 100);
	EXPECT_GE(tp.deep * 100, tp.total * 99);
	EXPECT_GE(cg_paths_shared(&tp, &pp) * 100, tp.total * 99);
	cg_paths_free(&pp);
	cg_paths_free(&tp);

	/* dwarf,SIZE: rounded up to 8 bytes, as perf does */
	samples = record(_metadata, "%s record -q --drain=%s --call-graph dwarf,4093 -F 2000 "
			 "-o s.data -- ./cgn 2000000", pevt_bin, variant->drain);
	run(&o, "perf evlist -v -i s.data");
	EXPECT_NE(NULL, strstr(o.out, "sample_stack_user: 4096")) TH_LOG("%s", o.out);
	out_free(&o);
}

/*
 * -r PRIO, as perf record -r: every thread of the recorder runs SCHED_FIFO
 * (main, --pin-readers' readers, the threads drain's writers), the
 * workload keeps SCHED_OTHER; without the right to, a clear error.  The
 * workload reads the policies (field 41 of /proc/.../stat) once the
 * recorder runs: its own, then each of its parent's threads.
 */
TEST_F(rec, realtime)
{
	char pol[256] = "";
	unsigned int fifo = 0, other = 0;
	struct out o;
	FILE *f;
	int p;

	if (geteuid())
		SKIP(return, "SCHED_FIFO needs root (CAP_SYS_NICE) here");
	record(_metadata, "%s record -r 1 --drain=%s -F 1000 -o r.data -- sh -c "
	       "'sleep 0.5; awk \"{ print \\$41 }\" /proc/self/stat > pol.txt; "
	       "for t in /proc/$PPID/task/*; do awk \"{ print \\$41 }\" $t/stat; done >> pol.txt'",
	       pevt_bin, variant->drain);
	f = fopen("pol.txt", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%d", &p));
	EXPECT_EQ(SCHED_OTHER, p) TH_LOG("the workload's policy");
	while (fscanf(f, "%d", &p) == 1) {
		fifo += p == SCHED_FIFO;
		other += p != SCHED_FIFO;
		snprintf(pol + strlen(pol), sizeof(pol) - strlen(pol), " %d", p);
	}
	fclose(f);
	TH_LOG("%s: the recorder's threads' policies:%s", variant->drain, pol);
	EXPECT_LE(1u, fifo);
	EXPECT_EQ(0u, other);
	/* A reader per CPU buffer, a writer per CPU buffer: more than one thread. */
	if (strstr(variant->drain, "pin") || !strcmp(variant->drain, "threads"))
		EXPECT_LE(2u, fifo);
	run(&o, "perf script -i r.data");
	EXPECT_EQ(0, o.status);
	EXPECT_TRUE(perf_quiet(o.err));
	out_free(&o);

	/* --overwrite (snapshots) takes -r as well. */
	if (!strcmp(variant->drain, "write")) {
		record(_metadata, "%s record --overwrite -r 1 -F 1000 -o s.data -- sh -c "
		       "'sleep 0.5; awk \"{ print \\$41 }\" /proc/$PPID/stat > spol.txt'",
		       pevt_bin);
		f = fopen("spol.txt", "r");
		ASSERT_NE(NULL, f);
		ASSERT_EQ(1, fscanf(f, "%d", &p));
		fclose(f);
		EXPECT_EQ(SCHED_FIFO, p) TH_LOG("--overwrite: the recorder's policy");
	}

	/* No right to SCHED_FIFO: root without CAP_SYS_NICE, RLIMIT_RTPRIO 0. */
	if (system("command -v setpriv >/dev/null && command -v prlimit >/dev/null"))
		SKIP_REST("no setpriv/prlimit (util-linux) for the error case");
	run(&o, "setpriv --bounding-set -sys_nice -- prlimit --rtprio=0 -- "
	    "%s record -r 1 --drain=%s -o e.data -- sleep 0.2", pevt_bin, variant->drain);
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "-r 1: cannot run SCHED_FIFO: Operation not permitted"))
		TH_LOG("%s", o.err);
	out_free(&o);
}

/*
 * The nice and policy of the recorder's threads and the workload after a
 * recording whose workload wrote them to nice.txt: @wl the workload's
 * nice (its policy must be SCHED_OTHER), @main_nice the main thread's
 * (-1: not SCHED_OTHER); of the other threads, those at SCHED_FIFO 1 are
 * counted in @fifo1, the SCHED_OTHER ones by whether they are at nice
 * @want, anything else in @other.
 */
static void read_nices(struct __test_metadata *_metadata, int *wl, int *main_nice,
		       int want, unsigned int *at_want, unsigned int *fifo1, unsigned int *other)
{
	int pid, tid, n, pol, prio;
	FILE *f = fopen("nice.txt", "r");

	*at_want = *fifo1 = *other = 0;
	*main_nice = 99;
	ASSERT_NE(NULL, f);
	ASSERT_EQ(3, fscanf(f, "%d %d %d", wl, &pol, &pid));
	EXPECT_EQ(SCHED_OTHER, pol) TH_LOG("the workload's policy");
	while (fscanf(f, "%d %d %d %d", &tid, &n, &pol, &prio) == 4) {
		if (tid == pid)
			*main_nice = pol == SCHED_OTHER ? n : -1;
		else if (pol == SCHED_FIFO && prio == 1)
			(*fifo1)++;
		else if (pol == SCHED_OTHER && n == want)
			(*at_want)++;
		else
			(*other)++;
	}
	fclose(f);
}

/* The workload: its nice, policy and the recorder's pid, then tid nice policy prio per thread. */
#define NICE_WORKLOAD \
	"-- sh -c 'sleep 0.3; echo $(awk \"{ print \\$19, \\$41 }\" /proc/self/stat) $PPID > nice.txt; " \
	"for t in /proc/$PPID/task/*; do awk \"{ print \\$1, \\$19, \\$41, \\$40 }\" $t/stat; done >> nice.txt'"

/*
 * --reader-nice: the reader threads (--pin-readers', --drain=threads')
 * SCHED_OTHER at the nice asked; without it --pin-readers' readers run
 * SCHED_FIFO 1 where allowed, --drain=threads' at nice -20 where allowed
 * (and --pin-readers' too where only the nice is), else at the caller's
 * nice; the main thread and the workload keep the caller's nice and
 * policy; an error where a nice is asked and not allowed.
 */
TEST_F(rec, reader_nice)
{
	bool readers = strstr(variant->drain, "pin") || !strcmp(variant->drain, "threads");
	bool pin = strstr(variant->drain, "pin");
	int ours, wl, mn;
	unsigned int at, fifo, other;
	struct out o;

	errno = 0;
	ours = getpriority(PRIO_PROCESS, 0);
	ASSERT_EQ(0, errno);
	if (!readers) {
		/* No reader threads: the option is refused, the default changes nothing. */
		run(&o, "%s record --drain=%s --reader-nice 0 -o e.data -- true", pevt_bin,
		    variant->drain);
		EXPECT_EQ(1, o.status);
		EXPECT_NE(NULL, strstr(o.err, "--reader-nice sets the reader threads' nice: "
				       "only with --drain=pin (the default without --overwrite) "
				       "or --drain=threads")) TH_LOG("%s", o.err);
		out_free(&o);
		record(_metadata, "%s record --drain=%s -F 1000 -o n.data " NICE_WORKLOAD,
		       pevt_bin, variant->drain);
		read_nices(_metadata, &wl, &mn, ours, &at, &fifo, &other);
		EXPECT_EQ(ours, wl);
		EXPECT_EQ(ours, mn);
		EXPECT_EQ(0u, fifo + other) TH_LOG("%s: a thread not at nice %d", variant->drain, ours);
		return;
	}
	/* Asked for, 19 (a nice anyone may take): the readers have it, SCHED_OTHER. */
	record(_metadata, "%s record --drain=%s --reader-nice 19 -F 1000 -o n.data " NICE_WORKLOAD,
	       pevt_bin, variant->drain);
	read_nices(_metadata, &wl, &mn, 19, &at, &fifo, &other);
	EXPECT_EQ(ours, wl) TH_LOG("the workload's nice");
	EXPECT_EQ(ours, mn) TH_LOG("the main thread's nice");
	EXPECT_LE(1u, at) TH_LOG("%s: no reader at nice 19", variant->drain);
	EXPECT_EQ(0u, fifo + other) TH_LOG("%s: %u threads not at nice 19", variant->drain,
					  fifo + other);
	run(&o, "perf script -i n.data");
	EXPECT_EQ(0, o.status);
	EXPECT_TRUE(perf_quiet(o.err));
	out_free(&o);

	if (geteuid())
		SKIP_REST("the defaults and the error case need root (CAP_SYS_NICE) here");
	/* The default, allowed: SCHED_FIFO 1 (--pin-readers), nice -20 (threads). */
	record(_metadata, "%s record --drain=%s -F 1000 -o n.data " NICE_WORKLOAD,
	       pevt_bin, variant->drain);
	read_nices(_metadata, &wl, &mn, -20, &at, &fifo, &other);
	EXPECT_EQ(ours, wl) TH_LOG("the workload's nice");
	EXPECT_EQ(ours, mn) TH_LOG("the main thread's nice (or it is not SCHED_OTHER)");
	EXPECT_LE(1u, pin ? fifo : at) TH_LOG("%s: no reader at %s", variant->drain,
					      pin ? "SCHED_FIFO 1" : "nice -20");
	EXPECT_EQ(0u, other + (pin ? at : fifo)) TH_LOG("%s: threads at %u nice -20, %u FIFO 1, "
						      "%u other", variant->drain, at, fifo, other);

	/*
	 * Not allowed (no CAP_SYS_NICE, RLIMIT_NICE 0, RLIMIT_RTPRIO 0): asked,
	 * an error; the default, the caller's nice.
	 */
	if (system("command -v setpriv >/dev/null && command -v prlimit >/dev/null"))
		SKIP_REST("no setpriv/prlimit (util-linux) for the error case");
	run(&o, "setpriv --bounding-set -sys_nice -- prlimit --nice=0 --rtprio=0 -- "
	    "%s record --drain=%s --reader-nice -5 -o e.data -- true", pevt_bin, variant->drain);
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "--reader-nice -5: cannot set the readers' nice: "
			       "Permission denied")) TH_LOG("%s", o.err);
	out_free(&o);
	record(_metadata, "setpriv --bounding-set -sys_nice -- prlimit --nice=0 --rtprio=0 -- "
	       "%s record --drain=%s -F 1000 -o n.data " NICE_WORKLOAD, pevt_bin, variant->drain);
	read_nices(_metadata, &wl, &mn, ours, &at, &fifo, &other);
	EXPECT_EQ(ours, mn);
	EXPECT_LE(1u, at);
	EXPECT_EQ(0u, fifo + other) TH_LOG("%s: a thread not at nice %d without the right",
					  variant->drain, ours);

	/*
	 * --pin-readers where nice -20 is allowed and SCHED_FIFO is not
	 * (RLIMIT_NICE 40, RLIMIT_RTPRIO 0, no CAP_SYS_NICE): nice -20.
	 * Raising RLIMIT_NICE takes CAP_SYS_RESOURCE, which some
	 * containers do not give root.
	 */
	if (!pin)
		return;
	if (system("prlimit --nice=40 true 2>/dev/null"))
		SKIP_REST("cannot raise RLIMIT_NICE here (no CAP_SYS_RESOURCE)");
	record(_metadata, "prlimit --nice=40 --rtprio=0 -- setpriv --bounding-set -sys_nice -- "
	       "%s record --drain=%s -F 1000 -o n.data " NICE_WORKLOAD, pevt_bin, variant->drain);
	read_nices(_metadata, &wl, &mn, -20, &at, &fifo, &other);
	EXPECT_EQ(ours, mn);
	EXPECT_LE(1u, at) TH_LOG("%s: no reader at nice -20 without SCHED_FIFO", variant->drain);
	EXPECT_EQ(0u, fifo + other) TH_LOG("%s: %u FIFO 1, %u other", variant->drain, fifo, other);
}

/* A `pevt` command line that must exit 1 saying @msg on stderr. */
static void __attribute__((format(printf, 3, 4)))
refused(struct __test_metadata *_metadata, const char *msg, const char *fmt, ...)
{
	char cmd[1024];
	struct out o;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	run(&o, "%s", cmd);
	EXPECT_EQ(1, o.status) TH_LOG("%s", cmd);
	EXPECT_NE(NULL, strstr(o.err, msg)) TH_LOG("%s: %s", cmd, o.err);
	out_free(&o);
}

TEST_F(rec, bad_options)
{
	refused(_metadata, "nothing to record",
		"%s record -o x.data", pevt_bin);
	refused(_metadata, "power of two",
		"%s record -m 3 -o x.data -- true", pevt_bin);
	refused(_metadata, "no-such-event",
		"%s record -e no-such-event -o x.data -- true", pevt_bin);
	refused(_metadata, "--call-graph: unknown mode 'lbr'",
		"%s record --call-graph lbr -o x.data -- true", pevt_bin);
	refused(_metadata, "incorrect stack dump size (max 65528): '65536'",
		"%s record --call-graph dwarf,65536 -o x.data -- true", pevt_bin);
	refused(_metadata, "-r needs a SCHED_FIFO priority 1..99, not '0'",
		"%s record -r 0 -o x.data -- true", pevt_bin);
	refused(_metadata, "--reader-nice needs a nice value -20..19, not '-21'",
		"%s record --pin-readers --reader-nice -21 -o x.data -- true", pevt_bin);
	refused(_metadata, "--pid: '2x' is not a number >= 1",
		"%s record -p 1,2x -o x.data", pevt_bin);
	refused(_metadata, "--tid: '0' is not a number >= 1",
		"%s record -t 0 -o x.data", pevt_bin);
	refused(_metadata, "no such thread: 2147483647",
		"%s record -t %d,2147483647 -o x.data", pevt_bin, getpid());
	refused(_metadata, "/nonexistent/dir/x.data",
		"%s record -o /nonexistent/dir/x.data -- true", pevt_bin);
}

TEST_HARNESS_MAIN
