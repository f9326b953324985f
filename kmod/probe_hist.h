/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bench instrument's per-call time histogram (probe.c), shared with
 * `pevt bench fairness`, which reads it from debugfs pevt/probes.
 *
 * Log-linear buckets: times below 32 ns one bucket per ns; above, every
 * power of two split into 16 buckets (a bucket spans 1/16 to 1/32 of its
 * value: 3-6%).  debugfs prints each non-empty bucket as its lower bound
 * and its count; pevt_hist_bucket() of a lower bound is its bucket.
 */
#ifndef _PEVT_PROBE_HIST_H
#define _PEVT_PROBE_HIST_H

#define PEVT_HIST_SUB_BITS	4
#define PEVT_HIST_LINEAR	(2 << PEVT_HIST_SUB_BITS)	/* 32 */
/* up to 2^40 ns (18 minutes): more than any call */
#define PEVT_HIST_BUCKETS	(PEVT_HIST_LINEAR + (40 - PEVT_HIST_SUB_BITS - 1) * \
				 (1 << PEVT_HIST_SUB_BITS))

static inline unsigned int pevt_hist_bucket(unsigned long long ns)
{
	unsigned int e, b;

	if (ns < PEVT_HIST_LINEAR)
		return ns;
	e = 63 - __builtin_clzll(ns);		/* >= SUB_BITS + 1 */
	b = PEVT_HIST_LINEAR + (e - PEVT_HIST_SUB_BITS - 1) * (1 << PEVT_HIST_SUB_BITS) +
	    ((ns >> (e - PEVT_HIST_SUB_BITS)) & ((1 << PEVT_HIST_SUB_BITS) - 1));
	return b < PEVT_HIST_BUCKETS ? b : PEVT_HIST_BUCKETS - 1;
}

/* The smallest time in bucket @b; its width is pevt_hist_lo(b + 1) - lo. */
static inline unsigned long long pevt_hist_lo(unsigned int b)
{
	unsigned int e, m;

	if (b < PEVT_HIST_LINEAR)
		return b;
	e = (b - PEVT_HIST_LINEAR) / (1 << PEVT_HIST_SUB_BITS) + PEVT_HIST_SUB_BITS + 1;
	m = (b - PEVT_HIST_LINEAR) % (1 << PEVT_HIST_SUB_BITS);
	return (unsigned long long)((1 << PEVT_HIST_SUB_BITS) + m) << (e - PEVT_HIST_SUB_BITS);
}

#ifndef __KERNEL__
/*
 * Userspace: the @q quantile (0..1) of the calls counted between two
 * reads of a histogram (@h1 - @h0, per bucket), interpolated within its
 * bucket; -1 without calls.
 */
static inline double pevt_hist_quantile(const long long *h0, const long long *h1, double q)
{
	long long total = 0, cum = 0;
	unsigned int b;

	for (b = 0; b < PEVT_HIST_BUCKETS; b++)
		total += h1[b] - h0[b];
	if (total <= 0)
		return -1;
	for (b = 0; b < PEVT_HIST_BUCKETS; b++) {
		long long c = h1[b] - h0[b];
		double lo = pevt_hist_lo(b);

		if (c > 0 && cum + c >= q * total) {
			double hi = b + 1 < PEVT_HIST_BUCKETS ? pevt_hist_lo(b + 1) : lo;

			return lo + (hi - lo) * (q * total - cum) / c;
		}
		cum += c;
	}
	return -1;
}
#endif

#endif
