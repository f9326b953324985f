// SPDX-License-Identifier: GPL-2.0
/*
 * `pevt record --call-graph dwarf` in the guest, on both backends, against
 * Debian's `perf record --call-graph dwarf` of the same program in the
 * same boot: perf report unwinds a call tree built without frame pointers
 * (only the user stack dump and the CFI can unwind it) from pevt's files
 * into the paths it unwinds from its own: at least 99% of each file's
 * samples in the tree have a path the other file has, and at least 99%
 * of pevt's reach the tree's root.  pevt report (libdw) reads each of
 * the three files into the paths perf report (libunwind) reads.  On /dev/pevt this exercises the
 * module's PERF_SAMPLE_REGS_USER / STACK_USER and its MMAP2 records of
 * data mappings (attr.mmap_data: the unwinder reads .eh_frame_hdr from a
 * read-only segment of its own).
 *
 * The workload is this binary: with PEVT_CG_WORK=N in its environment a
 * constructor runs the tree and exits before the harness starts.
 * The debug kernel (a perf run takes about a minute there) runs the pevt
 * backend only; 6.1 and 6.12 run both.
 */
// LDLIBS: -static-pie
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "record_check.h"

#define CG_N		"40000000"
#define NOFP		__attribute__((noipa, optimize("omit-frame-pointer")))

volatile unsigned long cg_sink;

NOFP void cg_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		cg_sink += i;
}

NOFP void cg_leaf_c(unsigned long n) { cg_spin(n); cg_sink++; }
NOFP void cg_leaf_d(unsigned long n) { cg_spin(n); cg_sink++; }
NOFP void cg_mid_a(unsigned long n) { cg_leaf_c(n); cg_sink++; }
NOFP void cg_mid_b(unsigned long n) { cg_leaf_c(n / 2); cg_leaf_d(n); cg_sink++; }

NOFP void cg_tree(unsigned long n)
{
	for (int i = 0; i < 4; i++) {
		cg_mid_a(n);
		cg_mid_b(n);
	}
	cg_sink++;
}

__attribute__((constructor)) static void cg_workload(void)
{
	const char *w = getenv("PEVT_CG_WORK");

	if (w) {
		cg_tree(strtoul(w, NULL, 0));
		_exit(0);
	}
}

FIXTURE(dw) {
	char dir[64];
	char exe[PATH_MAX];
	bool debug;
};

FIXTURE_SETUP(dw)
{
	const char *k = getenv("PEVT_KERNEL");
	ssize_t n = readlink("/proc/self/exe", self->exe, sizeof(self->exe) - 1);

	ASSERT_GT(n, 0);
	self->exe[n] = '\0';
	self->debug = k && !strcmp(k, "debug");
	if (access("/usr/bin/perf", X_OK))
		SKIP(return, "no /usr/bin/perf in the guest");
	ASSERT_EQ(0, tmpdir_enter(self->dir, "record_dwarf"));
}

FIXTURE_TEARDOWN(dw)
{
	tmpdir_leave(self->dir);
}

/*
 * pevt report unwinds @in (libdw) into the paths perf report (libunwind)
 * gives for the same file, @perf: the same samples, >= 99% of them on
 * paths the other has.
 */
static void pevt_reads_like_perf(struct __test_metadata *_metadata, const char *in,
				 const struct cg_paths *perf)
{
	struct cg_paths vp;

	ASSERT_EQ(0, cg_paths_read(CG_PEVT_REPORT, in, "cg_", "cg_tree", &vp));
	TH_LOG("%s: pevt report %ld samples, %ld to cg_tree, %ld on perf report's paths; "
	       "perf report %ld, %ld on pevt report's", in, vp.total, vp.deep,
	       cg_paths_shared(&vp, perf), perf->total, cg_paths_shared(perf, &vp));
	EXPECT_EQ(perf->total, vp.total) TH_LOG("%s", in);
	EXPECT_GE(cg_paths_shared(&vp, perf) * 100, vp.total * 99) TH_LOG("%s", in);
	EXPECT_GE(cg_paths_shared(perf, &vp) * 100, perf->total * 99) TH_LOG("%s", in);
	cg_paths_free(&vp);
}

TEST_F_TIMEOUT(dw, unwinds_like_stock, 900)
{
	static const char *const backends[] = { "stock", "pevt" };
	struct cg_paths pp, tp;
	struct out o;
	size_t b;

	run(&o, "PEVT_CG_WORK=" CG_N " perf record -q --call-graph dwarf -F 500 -o perf.data -- %s",
	    self->exe);
	if (o.status)
		SKIP(return, "perf record --call-graph dwarf fails here: %s", o.err);
	out_free(&o);
	ASSERT_EQ(0, cg_paths_read(CG_PERF_REPORT, "-i perf.data", "cg_", "cg_tree", &pp));
	if (pp.total < 50 || pp.deep * 100 < pp.total * 95)
		SKIP(return, "perf unwinds only %ld of its own %ld samples to cg_tree",
		     pp.deep, pp.total);
	pevt_reads_like_perf(_metadata, "-i perf.data", &pp);

	for (b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
		const char *be = backends[b];
		char in[64];
		long long samples;

		if (b == 0 && self->debug)
			continue;	/* the stock backend: 6.1, 6.12 and the host */
		if (b == 1 && access("/dev/pevt", F_OK)) {
			TH_LOG("no /dev/pevt: pevt backend not run");
			continue;
		}
		run(&o, "PEVT_CG_WORK=" CG_N " pevt record --backend %s --call-graph dwarf -F 500 "
		    "-o %s.data -- %s", be, be, self->exe);
		ASSERT_EQ(0, o.status) TH_LOG("%s: %s", be, o.err);
		samples = rec_summary(o.err, NULL);
		out_free(&o);
		EXPECT_GT(samples, 50) TH_LOG("%s", be);
		snprintf(in, sizeof(in), "-i %s.data", be);
		run(&o, "perf evlist -v %s", in);
		EXPECT_TRUE(perf_quiet(o.err)) TH_LOG("%s: %s", be, o.err);
		EXPECT_NE(NULL, strstr(o.out, "sample_regs_user: 0xff0fff")) TH_LOG("%s", o.out);
		EXPECT_NE(NULL, strstr(o.out, "sample_stack_user: 8192")) TH_LOG("%s", o.out);
		EXPECT_NE(NULL, strstr(o.out, "mmap_data: 1")) TH_LOG("%s", o.out);
		out_free(&o);

		ASSERT_EQ(0, cg_paths_read(CG_PERF_REPORT, in, "cg_", "cg_tree", &tp));
		TH_LOG("%s: perf %ld samples, %ld to cg_tree, %ld on pevt's paths; "
		       "pevt %ld, %ld to cg_tree, %ld on perf's paths (%zu / %zu paths)",
		       be, pp.total, pp.deep, cg_paths_shared(&pp, &tp), tp.total, tp.deep,
		       cg_paths_shared(&tp, &pp), pp.nr, tp.nr);
		EXPECT_GT(tp.total, 50) TH_LOG("%s", be);
		EXPECT_GE(tp.deep * 100, tp.total * 99) TH_LOG("%s", be);
		EXPECT_GE(cg_paths_shared(&tp, &pp) * 100, tp.total * 99) TH_LOG("%s", be);
		EXPECT_GE(cg_paths_shared(&pp, &tp) * 100, pp.total * 99) TH_LOG("%s", be);
		pevt_reads_like_perf(_metadata, in, &tp);
		cg_paths_free(&tp);
	}
	cg_paths_free(&pp);
}

TEST_HARNESS_MAIN
