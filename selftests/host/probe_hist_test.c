// SPDX-License-Identifier: GPL-2.0
/*
 * The bench instrument's histogram (kmod/probe_hist.h), shared by the
 * module, which counts calls per bucket, and `pevt bench fairness`, which
 * reads the buckets back by their lower bounds and takes a median.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "probe_hist.h"

/* Every bucket: its lower bound and the time before the next are in it. */
TEST(buckets_round_trip)
{
	unsigned int b;

	for (b = 0; b + 1 < PEVT_HIST_BUCKETS; b++) {
		unsigned long long lo = pevt_hist_lo(b), hi = pevt_hist_lo(b + 1);

		ASSERT_LT(lo, hi) TH_LOG("bucket %u", b);
		ASSERT_EQ(b, pevt_hist_bucket(lo));
		ASSERT_EQ(b, pevt_hist_bucket(hi - 1));
		/* 1 ns wide below 32 ns, then at most 1/16 of the bound */
		if (lo >= 32)
			ASSERT_GE(lo / 16, hi - lo) TH_LOG("bucket %u: %llu..%llu", b, lo, hi);
	}
	EXPECT_EQ(0, pevt_hist_bucket(0));
	EXPECT_EQ(31, pevt_hist_bucket(31));
	EXPECT_EQ(32, pevt_hist_bucket(32));
	/* beyond the last bucket's bound: the last bucket */
	EXPECT_EQ(PEVT_HIST_BUCKETS - 1, pevt_hist_bucket(~0ull));
	EXPECT_LE(1000000000000ull, pevt_hist_lo(PEVT_HIST_BUCKETS - 1));
}

/*
 * The median of times counted the module's way, against the exact one:
 * within the bucket's width (3-6%), whatever a few huge stalls do to the
 * mean; and only the calls between the two reads count.
 */
TEST(median_of_counted_times)
{
	long long *h0 = calloc(PEVT_HIST_BUCKETS, sizeof(*h0));
	long long *h1 = calloc(PEVT_HIST_BUCKETS, sizeof(*h1));
	double sum = 0, m;
	int i;

	ASSERT_NE(NULL, h0);
	ASSERT_NE(NULL, h1);
	EXPECT_EQ(-1, pevt_hist_quantile(h0, h1, 0.5));
	/* before the first read: 1000 calls of 50 us, not in the median */
	h0[pevt_hist_bucket(50000)] = h1[pevt_hist_bucket(50000)] = 1000;
	/* 999 calls of 7000..8000 ns (median 7499), 2 stalls of 5 ms */
	for (i = 0; i < 999; i++) {
		h1[pevt_hist_bucket(7000 + i)]++;
		sum += 7000 + i;
	}
	h1[pevt_hist_bucket(5000000)] += 2;
	sum += 2 * 5000000.0;
	m = pevt_hist_quantile(h0, h1, 0.5);
	TH_LOG("median %.0f ns (exact 7499), mean %.0f ns", m, sum / 1001);
	EXPECT_GE(7499 * 1.04, m);
	EXPECT_LE(7499 * 0.96, m);
	EXPECT_LT(1.9 * m, sum / 1001);		/* the mean: doubled by the stalls */
	/* every call in one bucket: inside it */
	memset(h1, 0, PEVT_HIST_BUCKETS * sizeof(*h1));
	memset(h0, 0, PEVT_HIST_BUCKETS * sizeof(*h0));
	h1[pevt_hist_bucket(9000)] = 10;
	m = pevt_hist_quantile(h0, h1, 0.5);
	EXPECT_LE(pevt_hist_lo(pevt_hist_bucket(9000)), m);
	EXPECT_GT(pevt_hist_lo(pevt_hist_bucket(9000) + 1), m);
	free(h0);
	free(h1);
}

TEST_HARNESS_MAIN
