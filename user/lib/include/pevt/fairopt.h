/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Reference solver: the max-min fair shares of one (CPU ctx, task ctx) pair
 * on one PMU, the yardstick for the rotation planner (kmod/rotation.c) and
 * the fairness bench.  Documentation/rotation.md, "Optimum".
 *
 * A schedule is a probability distribution over feasible sets (flexible
 * groups that can be matched onto the counters next to the pinned ones); a
 * group's share is the weight of the sets holding it.  The solver finds the
 * max-min fair share vector (the smallest share as large as possible, then
 * the next smallest, ...) by progressive filling: per round one LP over the
 * feasible sets, solved by column generation with an exact branch-and-bound
 * pricing of the most valuable feasible set; groups whose dual price is
 * positive cannot grow and are frozen.  Userspace only (floating point).
 */
#ifndef __PEVT_FAIROPT_H
#define __PEVT_FAIROPT_H

#include <stdbool.h>
#include <stdint.h>

struct rot_input;	/* kmod/rotation.h */

/* pevt_fairopt.state[g] */
#define PEVT_FAIR_ROTATING	0	/* flexible, fits next to the pinned set */
#define PEVT_FAIR_ALWAYS_ON	1	/* needs no counter: share 1 */
#define PEVT_FAIR_PINNED	2	/* share 1 */
#define PEVT_FAIR_ERROR		3	/* pinned that does not fit: share 0 */
#define PEVT_FAIR_ALWAYS_OFF	4	/* flexible that cannot fit: share 0 */

/**
 * struct pevt_fairopt - the optimum of one input
 * @nr_groups: as in the input
 * @share:     [nr_groups] max-min fair share of each group (1 for pinned and
 *             ALWAYS_ON, 0 for ERROR and ALWAYS_OFF)
 * @state:     [nr_groups] PEVT_FAIR_*, classified as rotation.h specifies
 *             (pinned first come first served, by matching)
 * @nr_sets:   feasible sets of the schedule that reaches @share
 * @words:     u64 words per set in @sets
 * @sets:      [nr_sets * words] group bitmaps of those sets
 * @weight:    [nr_sets] time fraction of each set (sum <= 1)
 * @rounds:    progressive-filling rounds (LPs to the end of column generation)
 * @columns:   feasible sets generated
 * @exact:     every pricing search finished within its budget (else the
 *             shares are feasible but maybe below the optimum)
 */
struct pevt_fairopt {
	uint32_t nr_groups;
	double *share;
	int *state;
	uint32_t nr_sets;
	uint32_t words;
	uint64_t *sets;
	double *weight;
	uint32_t rounds;
	uint32_t columns;
	bool exact;
};

/**
 * pevt_fairopt__solve() - max-min fair shares of @in
 * @in:  as for rot_plan() (same validity rules)
 * @out: filled on success; release with pevt_fairopt__free()
 *
 * Return: 0, -EINVAL for an input rot_plan() would refuse, -ENOMEM.
 */
int pevt_fairopt__solve(const struct rot_input *in, struct pevt_fairopt *out);
void pevt_fairopt__free(struct pevt_fairopt *out);

/**
 * pevt_fair__compare() - a measured share vector against the optimum
 * @opt:    [n] optimal shares
 * @share:  [n] measured shares
 * @use:    [n] which groups count (NULL: all)
 * @n:      groups
 * @min_ratio: min over counted groups with opt > 0 of share / opt (1 if none)
 * @dist:   sum over counted groups of |share - opt|, divided by their number
 */
void pevt_fair__compare(const double *opt, const double *share, const bool *use,
			unsigned int n, double *min_ratio, double *dist);

#endif /* __PEVT_FAIROPT_H */
