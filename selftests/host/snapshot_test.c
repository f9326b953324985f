// SPDX-License-Identifier: GPL-2.0
/*
 * `pevt record --backend stock --overwrite` on the build machine, read back
 * by the host's perf: SIGUSR2 snapshots into perf.data.<timestamp> files
 * named as perf names them, a time threshold, one file at the end without
 * --switch-output (SIGUSR2 ignored), snapshots appended to one pipe-mode
 * stream (-o -), and the options it refuses.  The
 * lossless pevt backend and the loss figures are the guest's
 * (selftests/vm/snapshot_test.c).
 */
#include <ctype.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "../record_check.h"

/*
 * Busy until the test creates ./stop; ./started once it runs.  SIGUSR2 is
 * sent only after ./started: pevt record blocks it before it starts the
 * workload, but a fixed delay from the launch was not enough on a loaded
 * 2-core machine (snap.signal failed once in a make check run).
 */
#define LOOP	"sh -c ': > started; while [ ! -e stop ]; do :; done'"
#define STARTED	"while [ ! -e started ]; do sleep 0.05; done; "

static char pevt_bin[PATH_MAX];

FIXTURE(snap)
{
	char dir[64];
};

FIXTURE_SETUP(snap)
{
	host_pevt_bin(pevt_bin);
	if (access(pevt_bin, X_OK))
		SKIP(return, "no pevt binary (make user, or set PEVT_BIN)");
	if (system("perf --version >/dev/null 2>&1"))
		SKIP(return, "no perf on this machine");
	ASSERT_EQ(0, tmpdir_enter(self->dir, "snapshot_test"));
}

FIXTURE_TEARDOWN(snap)
{
	tmpdir_leave(self->dir);
}

/*
 * @err without perf's warning about LOST records ("Warning:", "Processed N
 * events and lost M chunks!", "Check IO/CPU overload!"), *@chunks = M.
 * The stock kernel drops what comes while a write_backward buffer is
 * paused for a snapshot and writes a LOST record when it resumes: the
 * next file carries it (perf record --overwrite's files do too), and
 * perf script warns about it.  Seen on a loaded 2-core machine.
 */
static char *without_lost_warning(const char *err, long *chunks)
{
	char *out = strdup(err), *d = out;
	const char *l = err;

	*chunks = 0;
	while (out && l && *l) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) + 1 : strlen(l);

		if (sscanf(l, "Processed %*d events and lost %ld chunks!", chunks) != 1 &&
		    strncmp(l, "Warning:\n", 9) && strncmp(l, "Check IO/CPU overload!", 22)) {
			memcpy(d, l, len);
			d += len;
		}
		l += len;
	}
	if (out)
		*d = '\0';
	return out;
}

/* perf's stderr @err says nothing but the lost-chunks warning (*@chunks). */
static bool perf_quiet_but_lost(const char *err, long *chunks)
{
	char *quiet = without_lost_warning(err, chunks);
	bool ok = quiet && perf_quiet(quiet);

	free(quiet);
	return ok;
}

/* The number of LOST records perf report --stats counts in @file. */
static long lost_records(const char *file)
{
	struct out o;
	const char *p;
	long n = -1;

	run(&o, "perf report --stats -i %s", file);
	p = strstr(o.out, "LOST events:");
	n = p ? atol(p + strlen("LOST events:")) : 0;
	out_free(&o);
	return n;
}

/*
 * Every s.data.* file: named s.data.YYYYmmddHHMMSScc, announced by a Dump
 * line with its sample count, which perf script shows without a warning.
 * Returns the number of files.
 */
static int check_files(struct __test_metadata *_metadata, const char *err)
{
	glob_t g;
	size_t i;
	int n = 0;

	if (glob("s.data.*", 0, NULL, &g))
		return 0;
	for (i = 0; i < g.gl_pathc; i++) {
		const char *ts = g.gl_pathv[i] + strlen("s.data."), *p;
		char key[128];
		struct out o;
		long long want;
		long chunks;
		int d;

		for (d = 0; isdigit((unsigned char)ts[d]); d++)
			;
		EXPECT_EQ(16, d) TH_LOG("%s: not perf's timestamp", g.gl_pathv[i]);
		EXPECT_EQ('\0', ts[d]);
		snprintf(key, sizeof(key), "Dump %s (", g.gl_pathv[i]);
		p = strstr(err, key);
		ASSERT_NE(NULL, p) TH_LOG("no Dump line for %s", g.gl_pathv[i]);
		want = atoll(p + strlen(key));
		run(&o, "perf script -i %s", g.gl_pathv[i]);
		EXPECT_EQ(0, o.status);
		EXPECT_EQ(want, count_lines(o.out)) TH_LOG("%s", g.gl_pathv[i]);
		EXPECT_TRUE(perf_quiet_but_lost(o.err, &chunks)) TH_LOG("%s", o.err);
		/* A lost-chunks warning only for LOST records the file has. */
		if (chunks)
			EXPECT_EQ(chunks, lost_records(g.gl_pathv[i]))
				TH_LOG("%s", g.gl_pathv[i]);
		out_free(&o);
		n++;
	}
	globfree(&g);
	return n;
}

TEST_F(snap, signal)
{
	struct out o;

	/* Two SIGUSR2 while the loop runs, then the snapshot at the end. */
	run(&o, "(%s record --overwrite --switch-output -F 2000 -o s.data -- " LOOP " & P=$!; "
	    STARTED "sleep 0.5; kill -USR2 $P; sleep 0.7; kill -USR2 $P; sleep 0.3; touch stop; wait $P)",
	    pevt_bin);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_EQ(3, check_files(_metadata, o.err)) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.err, "[ pevt record: Captured and wrote "));
	EXPECT_NE(NULL, strstr(o.err, "s.data.<timestamp> ("));
	EXPECT_NE(0, access("s.data", F_OK));
	out_free(&o);
}

/* --switch-max-files=2: the two newest snapshots stay. */
TEST_F(snap, max_files)
{
	struct out o;
	glob_t g;

	run(&o, "(%s record --overwrite --switch-output --switch-max-files=2 -F 2000 -o s.data -- "
	    LOOP " & P=$!; " STARTED "sleep 0.3; kill -USR2 $P; sleep 0.3; kill -USR2 $P; sleep 0.3; "
	    "kill -USR2 $P; sleep 0.3; touch stop; wait $P)", pevt_bin);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	ASSERT_EQ(0, glob("s.data.*", 0, NULL, &g));
	EXPECT_EQ(2u, g.gl_pathc) TH_LOG("%s", o.err);
	/* the last two Dump lines name them, in that order */
	if (g.gl_pathc == 2) {
		const char *first = strstr(o.err, g.gl_pathv[0]);

		ASSERT_NE(NULL, first) TH_LOG("%s", o.err);
		EXPECT_NE(NULL, strstr(first, g.gl_pathv[1])) TH_LOG("%s", o.err);
	}
	globfree(&g);
	EXPECT_EQ(2, check_files(_metadata, o.err));
	out_free(&o);
}

TEST_F(snap, time)
{
	struct out o;

	run(&o, "%s record --overwrite --switch-output=1s -F 2000 -o s.data -- sh -c 'sleep 2.5'",
	    pevt_bin);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	/* At 1 s and 2 s, and at the end (a loaded machine may miss one). */
	EXPECT_LE(2, check_files(_metadata, o.err)) TH_LOG("%s", o.err);
	out_free(&o);
}

/*
 * --switch-output-event with --overwrite, perf's flight recorder: a
 * snapshot whenever EVENT fires.  3 ioprio_set() calls (ionice) 0.3 s
 * apart: 4 files, as Debian's perf 6.1 writes them; each of the first 3
 * holds its ioprio_set() (NR 251 on x86_64: the record that triggered it
 * is in the buffer before the loop sees the hit), the last none, and no
 * record is in two files.
 */
static void event_snapshots(struct __test_metadata *_metadata, const char *zopt)
{
	struct out o;
	glob_t g;
	size_t i;

	if (system("command -v ionice >/dev/null") ||
	    access("/sys/kernel/tracing/events/syscalls/sys_enter_ioprio_set", F_OK))
		SKIP(return, "no ionice or no syscalls:sys_enter_ioprio_set (tracefs)");
	run(&o, "%s record --overwrite %s -e raw_syscalls:sys_enter -c 1 "
	    "--switch-output-event syscalls:sys_enter_ioprio_set -o s.data -- "
	    "sh -c 'for i in 1 2 3; do sleep 0.3; ionice -c 3 true; done; sleep 0.3'",
	    pevt_bin, zopt);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_EQ(4, check_files(_metadata, o.err)) TH_LOG("%s", o.err);
	EXPECT_NE(0, access("s.data", F_OK));
	if (*zopt)
		EXPECT_NE(NULL, strstr(o.err, "[ pevt record: Compressed ")) TH_LOG("%s", o.err);
	out_free(&o);
	ASSERT_EQ(0, glob("s.data.*", 0, NULL, &g));
	for (i = 0; i < g.gl_pathc; i++) {
		run(&o, "perf script -F trace:trace -i %s | grep -c 'NR 251 ('", g.gl_pathv[i]);
		EXPECT_EQ(i + 1 < g.gl_pathc ? 1 : 0, atoi(o.out)) TH_LOG("%s", g.gl_pathv[i]);
		out_free(&o);
		if (!*zopt)
			continue;
		/* each file compressed, with records perf reads (check_files) */
		run(&o, "perf report --header-only -i %s", g.gl_pathv[i]);
		EXPECT_NE(NULL, strstr(o.out, "# compressed : Zstd")) TH_LOG("%s", g.gl_pathv[i]);
		out_free(&o);
		run(&o, "perf report --stats -i %s", g.gl_pathv[i]);
		EXPECT_NE(NULL, strstr(o.out, "COMPRESSED events:")) TH_LOG("%s", g.gl_pathv[i]);
		out_free(&o);
	}
	globfree(&g);
}

TEST_F_TIMEOUT(snap, event, 60)
{
	event_snapshots(_metadata, "");
}

/*
 * The same with -z: every snapshot a compressed perf.data of its own
 * (Debian's perf 6.1 writes one zstd stream over all of its --overwrite
 * -z files and cannot read any but the first: "Unknown frame
 * descriptor").
 */
TEST_F_TIMEOUT(snap, event_compressed, 60)
{
	event_snapshots(_metadata, "-z");
}

/*
 * "[ pevt record: Snapshot K to stdout (N samples" lines, in order: their
 * counts into @per (at most @max), the number of lines returned.
 */
static int snapshot_lines(const char *err, long long *per, int max)
{
	const char *p = err;
	int n = 0, k;
	long long c;

	while ((p = strstr(p, "[ pevt record: Snapshot "))) {
		if (sscanf(p, "[ pevt record: Snapshot %d to stdout (%lld samples", &k, &c) == 2) {
			if (n < max)
				per[n] = c;
			n++;
		}
		p++;
	}
	return n;
}

/*
 * The samples of each round of @input in stream order (`perf report -D
 * --disable-order`), for the rounds that have any: into @per (at most
 * @max); *@tail the samples after the last FINISHED_ROUND.  Returns the
 * number of such rounds, -1 if perf failed.
 */
static int round_samples(const char *input, long long *per, int max, long long *tail)
{
	FILE *f = rec_dump_open(input);
	long long cur = 0;
	char line[1024];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == ' ' || line[0] == '.')
			continue;
		if (strstr(line, ": PERF_RECORD_FINISHED_ROUND")) {
			if (cur && n < max)
				per[n] = cur;
			n += !!cur;
			cur = 0;
		} else if (strstr(line, ": PERF_RECORD_SAMPLE")) {
			cur++;
		}
	}
	*tail = cur;
	return pclose(f) ? -1 : n;
}

/* "NAME events:  N" of perf report --stats (or pevt report --stats). */
static long long stats_count(const char *out, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s events:", name);
	p = strstr(out, key);
	return p ? atoll(p + strlen(key)) : -1;
}

/*
 * --overwrite -o -: three snapshots (two SIGUSR2, the end) appended to one
 * stream, which Debian's perf reads from a pipe (perf 6.1's own
 * `perf record --overwrite -o -` stream it cannot: its attrs come last).
 * The pipe header, attrs and features once; each snapshot's samples in a
 * round of their own, in order (the rounds' sample counts are the Snapshot
 * lines'); no round-guarantee violation across them; perf script, perf
 * report and pevt report count what pevt says it wrote, with no warning.
 */
static void pipe_snapshots(struct __test_metadata *_metadata, const char *zopt)
{
	long long per[8], rper[8], sum = 0, tail;
	long rounds, timed, bad, lost_chunks, chunks;
	struct out o;
	char key[96];
	int n, nr, i;

	run(&o, "(%s record --overwrite --switch-output %s -F 2000 -o - -- " LOOP " >s.pipe & "
	    "P=$!; " STARTED "sleep 0.5; kill -USR2 $P; sleep 0.7; kill -USR2 $P; sleep 0.3; "
	    "touch stop; wait $P)", pevt_bin, zopt);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	n = snapshot_lines(o.err, per, 8);
	ASSERT_EQ(3, n) TH_LOG("%s", o.err);
	for (i = 0; i < n; i++) {
		EXPECT_LT(0, per[i]) TH_LOG("snapshot %d: %s", i + 1, o.err);
		sum += per[i];
	}
	snprintf(key, sizeof(key), "MB stdout (%lld samples in 3 snapshots) ]", sum);
	EXPECT_NE(NULL, strstr(o.err, key)) TH_LOG("%s", o.err);
	if (*zopt)
		EXPECT_NE(NULL, strstr(o.err, "[ pevt record: Compressed ")) TH_LOG("%s", o.err);
	out_free(&o);
	/* no file but the stream */
	EXPECT_EQ(0, system("test \"$(ls)\" = \"$(printf 's.pipe\\nstarted\\nstop')\""));

	run(&o, "perf script -i - <s.pipe");
	EXPECT_EQ(0, o.status);
	EXPECT_EQ(sum, count_lines(o.out));
	EXPECT_TRUE(perf_quiet_but_lost(o.err, &lost_chunks)) TH_LOG("%s", o.err);
	out_free(&o);

	run(&o, "perf report --stdio -i - <s.pipe");
	EXPECT_EQ(0, o.status);
	EXPECT_TRUE(perf_quiet_but_lost(o.err, &chunks)) TH_LOG("%s", o.err);
	out_free(&o);

	if (!*zopt) {
		/* Debian's perf 6.1 report --stats fails on any compressed pipe */
		run(&o, "perf report --stats -i - <s.pipe");
		EXPECT_EQ(0, o.status);
		EXPECT_TRUE(perf_quiet(o.err));
		EXPECT_EQ(sum, stats_count(o.out, "SAMPLE"));
		/* the stream's start once: one attr, one FINISHED_INIT */
		EXPECT_EQ(1, stats_count(o.out, "ATTR")) TH_LOG("%s", o.out);
		EXPECT_EQ(1, stats_count(o.out, "FINISHED_INIT")) TH_LOG("%s", o.out);
		/* LOST records (a paused stock buffer) are what perf warned about */
		if (lost_chunks)
			EXPECT_EQ(lost_chunks, stats_count(o.out, "LOST")) TH_LOG("%s", o.out);
		out_free(&o);
	} else {
		run(&o, "perf report --header-only -i - <s.pipe");
		EXPECT_NE(NULL, strstr(o.out, "# compressed : Zstd")) TH_LOG("%s", o.out);
		out_free(&o);
	}

	run(&o, "%s --json report -s comm -i - <s.pipe", pevt_bin);
	EXPECT_EQ(0, o.status);
	EXPECT_STREQ("", o.err);
	snprintf(key, sizeof(key), "\"samples\":%lld,", sum);
	EXPECT_NE(NULL, strstr(o.out, key)) TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(o.out, "\"comm\":\"sh\"")) TH_LOG("%s", o.out);
	out_free(&o);
	run(&o, "%s report --stats -i - <s.pipe", pevt_bin);
	EXPECT_EQ(0, o.status);
	EXPECT_EQ(sum, stats_count(o.out, "SAMPLE")) TH_LOG("%s", o.out);
	out_free(&o);

	/* each snapshot closed by its own FINISHED_ROUND, in order */
	nr = round_samples("-i - <s.pipe", rper, 8, &tail);
	ASSERT_EQ(n, nr);
	for (i = 0; i < n && i < nr; i++) {
		EXPECT_EQ(per[i], rper[i]) TH_LOG("round %d", i + 1);
	}
	EXPECT_EQ(0, tail);
	/* the round guarantee across them */
	bad = rec_round_violations("-i - <s.pipe", &rounds, &timed);
	EXPECT_EQ(0, bad) TH_LOG("%ld of %ld timed records in %ld rounds", bad, timed, rounds);
	EXPECT_LE(3, rounds);
	EXPECT_LE(sum, timed);
}

TEST_F(snap, pipe)
{
	pipe_snapshots(_metadata, "");
}

/* -z: one zstd stream for the whole output (a pipe has one decompressor). */
TEST_F(snap, pipe_compressed)
{
	pipe_snapshots(_metadata, "-z");
}

/*
 * The other triggers append to the stream too: --switch-output-event
 * (3 ioprio_set() 0.3 s apart: 4 snapshots, the 3 calls in the stream
 * once each) and a time threshold.
 */
TEST_F_TIMEOUT(snap, pipe_triggers, 60)
{
	long long per[8], sum = 0;
	struct out o;
	long chunks;
	int n, i;

	if (system("command -v ionice >/dev/null") ||
	    access("/sys/kernel/tracing/events/syscalls/sys_enter_ioprio_set", F_OK))
		SKIP(return, "no ionice or no syscalls:sys_enter_ioprio_set (tracefs)");
	run(&o, "(%s record --overwrite -e raw_syscalls:sys_enter -c 1 "
	    "--switch-output-event syscalls:sys_enter_ioprio_set -o - -- "
	    "sh -c 'for i in 1 2 3; do sleep 0.3; ionice -c 3 true; done; sleep 0.3' >s.pipe)",
	    pevt_bin);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	n = snapshot_lines(o.err, per, 8);
	EXPECT_EQ(4, n) TH_LOG("%s", o.err);
	for (i = 0; i < n && i < 8; i++)
		sum += per[i];
	out_free(&o);
	run(&o, "perf script -i - <s.pipe");
	EXPECT_EQ(0, o.status);
	EXPECT_EQ(sum, count_lines(o.out));
	/* what a paused stock buffer dropped: the LOST records perf warns of */
	EXPECT_TRUE(perf_quiet_but_lost(o.err, &chunks)) TH_LOG("%s", o.err);
	out_free(&o);
	/* (perf report --stats stops at a tracepoint pipe's TRACING_DATA) */
	run(&o, "perf report -D -i - <s.pipe 2>/dev/null | grep ': PERF_RECORD_LOST' | "
	    "grep -vc LOST_SAMPLES");
	EXPECT_EQ(chunks, atol(o.out)) TH_LOG("perf's lost chunks, LOST records");
	out_free(&o);
	run(&o, "perf script -F trace:trace -i - <s.pipe | grep -c 'NR 251 ('");
	EXPECT_EQ(3, atoi(o.out));
	out_free(&o);

	run(&o, "(%s record --overwrite --switch-output=1s -F 2000 -o - -- sleep 2.5 >t.pipe)",
	    pevt_bin);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	/* At 1 s and 2 s, and at the end (a loaded machine may miss one). */
	n = snapshot_lines(o.err, per, 8);
	EXPECT_LE(2, n) TH_LOG("%s", o.err);
	for (sum = 0, i = 0; i < n && i < 8; i++)
		sum += per[i];
	out_free(&o);
	run(&o, "perf script -i - <t.pipe");
	EXPECT_EQ(0, o.status);
	EXPECT_EQ(sum, count_lines(o.out));
	EXPECT_TRUE(perf_quiet(o.err));
	out_free(&o);
}

/*
 * pipe_exec, pipe_exec_in_window: `sh` spins until ./go, then execs a copy
 * of itself named loop2, which spins until ./stop; a snapshot (SIGUSR2)
 * 0.4 s after the start and one 0.3 s after the exec.  -m: the pages.
 */
#define EXEC_BETWEEN_SNAPSHOTS \
	"(cp /bin/sh loop2 && %s record --overwrite --switch-output -m %d -F 2000 -o - -- " \
	"taskset -c 0 sh -c ': > started; while [ ! -e go ]; do :; done; " \
	"exec ./loop2 -c \": > execd; while [ ! -e stop ]; do :; done\"' >s.pipe & P=$!; " \
	STARTED "sleep 0.4; kill -USR2 $P; sleep 0.3; touch go; " \
	"while [ ! -e execd ]; do sleep 0.05; done; sleep 0.3; kill -USR2 $P; sleep 0.3; " \
	"touch stop; wait $P)"

/*
 * A process that execs between two snapshots of a stream whose 1-page
 * buffers wrap (a flight recorder: the exec's COMM is overwritten before
 * the second snapshot): the samples of the first snapshot stay under the
 * old name, those of the second (all after the exec) are under the new
 * one.  Each snapshot's synthesized state carries the time of its oldest
 * sample; with time 0 (perf's and the files') perf applies the second
 * snapshot's state at once, to the first snapshot's samples it still
 * holds too, and shows them all under the new name.
 */
TEST_F(snap, pipe_exec)
{
	long long per[8];
	char want[128];
	struct out o;
	int n;

	if (system("command -v taskset >/dev/null"))
		SKIP(return, "no taskset");
	run(&o, EXEC_BETWEEN_SNAPSHOTS, pevt_bin, 1);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	n = snapshot_lines(o.err, per, 8);
	ASSERT_EQ(3, n) TH_LOG("%s", o.err);
	out_free(&o);
	run(&o, "perf script -F comm -i - <s.pipe | sort | uniq -c | awk '{ print $2, $1 }' | "
	    "sort | tr '\\n' ' '");
	snprintf(want, sizeof(want), "loop2 %lld sh %lld ", per[1] + per[2], per[0]);
	EXPECT_STREQ(want, o.out);
	out_free(&o);
}

/*
 * The same exec inside a snapshot's window: buffers that do not wrap
 * (-m 128), the first snapshot before the exec, the second with the
 * shell's last spin, the exec's COMM and loop2's spin.  The state is read
 * from /proc after the exec, but stamped at the snapshot's oldest sample:
 * it must give the name before the exec (the stream's last one), and the
 * exec's COMM renames the task where it happened.  No sample before the
 * exec's COMM may be loop2's (sh's, or taskset's before the exec of sh),
 * every one after it must be.  Before snap_names(): 602 of 1497
 * pre-exec samples were loop2's.
 */
TEST_F(snap, pipe_exec_in_window)
{
	long long per[8];
	double t, pre, post, bad;
	struct out o;

	if (system("command -v taskset >/dev/null"))
		SKIP(return, "no taskset");
	run(&o, EXEC_BETWEEN_SNAPSHOTS, pevt_bin, 128);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	ASSERT_EQ(3, snapshot_lines(o.err, per, 8)) TH_LOG("%s", o.err);
	out_free(&o);
	run(&o, "perf script -F comm,tid,time --show-task-events -i - <s.pipe >s.txt && "
	    "awk 'NR == FNR { if ($0 ~ /PERF_RECORD_COMM exec: loop2/) { t = $3; sub(\":\", \"\", t); T = t + 0 } next } "
	    "/PERF_RECORD/ { next } "
	    "{ t = $3; sub(\":\", \"\", t); t += 0; if (t < T) { pre += $1 == \"sh\"; bad += $1 == \"loop2\" } "
	    "else { post++; bad += $1 != \"loop2\" } } "
	    "END { printf \"%%.6f %%d %%d %%d\\n\", T, pre, post, bad }' s.txt s.txt");
	ASSERT_EQ(4, sscanf(o.out, "%lf %lf %lf %lf", &t, &pre, &post, &bad)) TH_LOG("%s", o.out);
	TH_LOG("exec at %.6f: %.0f sh samples before, %.0f after, %.0f under the wrong name",
	       t, pre, post, bad);
	EXPECT_LT(0, t);
	EXPECT_LT(100, pre);
	EXPECT_LT(100, post);
	EXPECT_EQ(0, bad);
	out_free(&o);
}

/*
 * The reader gone between snapshots: pevt record sees it (POLLERR on
 * stdout), says so, ends the workload, exits 1.
 */
TEST_F(snap, pipe_reader_gone)
{
	struct out o;

	run(&o, "(%s record --overwrite --switch-output -F 2000 -o - -- " LOOP
	    " 2>rec.err; echo $? >rec.rc) | (sleep 0.5; head -c 16 >/dev/null); "
	    "for i in $(seq 100); do [ -s rec.rc ] && break; sleep 0.05; done; "
	    "touch stop; cat rec.rc rec.err", pevt_bin);
	EXPECT_EQ(0, strncmp(o.out, "1\n", 2)) TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(o.out, "Error: the reader of stdout went away (Broken pipe): "
			       "recording stopped after 0 snapshots")) TH_LOG("%s", o.out);
	out_free(&o);
}

TEST_F(snap, at_exit_only)
{
	struct out o;
	long long n;

	/* Without --switch-output SIGUSR2 is ignored: one file at the end. */
	run(&o, "(%s record --overwrite -F 2000 -o s.data -- " LOOP " & P=$!; "
	    STARTED "sleep 0.3; kill -USR2 $P; sleep 0.3; touch stop; wait $P)", pevt_bin);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_EQ(0, check_files(_metadata, o.err));
	EXPECT_NE(NULL, strstr(o.err, "Dump s.data ("));
	n = atoll(strstr(o.err, "Dump s.data (") + strlen("Dump s.data ("));
	EXPECT_LT(0, n);
	out_free(&o);
	run(&o, "perf script -i s.data");
	EXPECT_EQ(n, count_lines(o.out));
	EXPECT_TRUE(perf_quiet(o.err));
	out_free(&o);
}

TEST_F(snap, bad_options)
{
	struct out o;

	run(&o, "%s record --overwrite --switch-max-files=2 -o x.data -- true", pevt_bin);
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "--switch-max-files needs --switch-output"));
	out_free(&o);
	run(&o, "%s record --overwrite --switch-output=5x -o x.data -- true", pevt_bin);
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "not '5x'"));
	out_free(&o);
	run(&o, "(%s record --overwrite --switch-output --switch-max-files=2 -o - -- true | "
	    "cat >/dev/null)", pevt_bin);
	EXPECT_NE(NULL, strstr(o.err, "--switch-max-files keeps the newest files: not with pipe mode"));
	out_free(&o);
	EXPECT_NE(0, access("x.data", F_OK));
}

TEST_HARNESS_MAIN
