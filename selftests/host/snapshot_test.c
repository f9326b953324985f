// SPDX-License-Identifier: GPL-2.0
/*
 * `pevt record --backend stock --overwrite` on the build machine, read back
 * by the host's perf: SIGUSR2 snapshots into perf.data.<timestamp> files
 * named as perf names them, a time threshold, one file at the end without
 * --switch-output (SIGUSR2 ignored), and the options it refuses.  The
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
		char *quiet;
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
		quiet = without_lost_warning(o.err, &chunks);
		ASSERT_NE(NULL, quiet);
		EXPECT_TRUE(perf_quiet(quiet));
		/* A lost-chunks warning only for LOST records the file has. */
		if (chunks)
			EXPECT_EQ(chunks, lost_records(g.gl_pathv[i]))
				TH_LOG("%s", g.gl_pathv[i]);
		free(quiet);
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
	run(&o, "(%s record --overwrite -o - -- true | cat >/dev/null)", pevt_bin);
	EXPECT_NE(NULL, strstr(o.err, "--overwrite writes snapshot files: not with pipe mode (-o -)"));
	out_free(&o);
	EXPECT_NE(0, access("x.data", F_OK));
}

TEST_HARNESS_MAIN
