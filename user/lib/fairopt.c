// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Max-min fair shares of one planner input: see pevt/fairopt.h and
 * Documentation/rotation.md ("Optimum").  Independent of kmod/rotation.c
 * (own matching, own classification): it is the planner's yardstick.
 *
 * Round k of progressive filling, frozen groups F with shares f_g:
 *
 *	max t  s.t.  sum_{S ∋ g} x_S >= t    (g rotating, not frozen)
 *		     sum_{S ∋ g} x_S >= f_g  (g frozen)
 *		     sum_S x_S <= 1,  x >= 0
 *
 * over all feasible sets S.  Column generation: solve over the sets known
 * so far (dense two-phase simplex), read the duals w_g of the group rows
 * and mu of the convexity row, and search the feasible set maximizing
 * sum_{g in S} w_g (branch and bound over groups by w/size, fractional
 * knapsack bound, exact matching as the feasibility test); if it beats mu,
 * add it and solve again.  At the optimum every group with w_g > 0 is at
 * t in every optimal solution (complementary slackness): freeze those at
 * t.  Since the w of free groups sum to >= 1, every round freezes one.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotation.h"
#include "pevt/fairopt.h"

#define FO_EPS		1e-9
#define FO_PRICE_BUDGET	4000000UL	/* B&B nodes per pricing search */
#define FO_MAX_PIVOTS	100000

struct fo {
	const struct rot_input *in;
	u64 full;
	u32 n;			/* counters */
	u32 nr_rot;		/* rotating groups */
	u32 *rot;		/* [nr_rot] group index of each */
	u32 words;		/* u64 words per group bitmap */
	/* matching: member ids are (group, member) -> id via first[] */
	u32 *first;		/* [nr_groups + 1] first member id */
	u64 *mmask;		/* [members] usable counters */
	int base[ROT_MAX_COUNTERS];	/* pinned matching: owner member id */
	int owner[ROT_MAX_COUNTERS];
	u64 visited;
	/* column pool */
	u32 nr_cols, cap_cols;
	u64 *cols;		/* [cap_cols * words] */
	/* pricing */
	double *w;		/* [nr_groups] dual weight */
	u32 *cand;		/* [nr_rot] candidates by w/size */
	u32 nr_cand;
	double best;
	u64 *best_set, *cur_set;
	unsigned long nodes;
	bool exact;
	int (*stack)[ROT_MAX_COUNTERS];	/* [nr_rot + 1] matching undo */
};

static u32 fo_size(const struct fo *f, u32 g)
{
	const struct rot_group *grp = &f->in->groups[g];

	return (grp->flags & ROT_F_SOFTWARE) ? 0 : grp->nr_members;
}

static bool fo_kuhn(struct fo *f, u32 u)
{
	u64 m = f->mmask[u] & ~f->visited;

	for (; m; m &= m - 1) {
		int c = __builtin_ctzll(m);

		f->visited |= 1ULL << c;
		if (f->owner[c] < 0 || fo_kuhn(f, f->owner[c])) {
			f->owner[c] = u;
			return true;
		}
	}
	return false;
}

/* All members of @g into f->owner, or false (f->owner then undefined). */
static bool fo_add(struct fo *f, u32 g)
{
	u32 u;

	for (u = f->first[g]; u < f->first[g + 1]; u++) {
		f->visited = 0;
		if (!fo_kuhn(f, u))
			return false;
	}
	return true;
}

static void fo_setbit(u64 *s, u32 g)
{
	s[g / 64] |= 1ULL << (g % 64);
}

static bool fo_bit(const u64 *s, u32 g)
{
	return (s[g / 64] >> (g % 64)) & 1;
}

static int fo_add_col(struct fo *f, const u64 *set)
{
	u32 i;

	for (i = 0; i < f->nr_cols; i++)
		if (!memcmp(f->cols + (size_t)i * f->words, set, f->words * 8))
			return 0;	/* known: numerical noise, stop */
	if (f->nr_cols == f->cap_cols) {
		u32 cap = f->cap_cols ? 2 * f->cap_cols : 64;
		u64 *c = realloc(f->cols, (size_t)cap * f->words * 8);

		if (!c)
			return -ENOMEM;
		f->cols = c;
		f->cap_cols = cap;
	}
	memcpy(f->cols + (size_t)f->nr_cols++ * f->words, set, f->words * 8);
	return 1;
}

/* ---- pricing: heaviest feasible set --------------------------------- */

static int fo_cmp_density(const void *a, const void *b, void *arg)
{
	const struct fo *f = arg;
	u32 x = *(const u32 *)a, y = *(const u32 *)b;
	double dx = f->w[x] / fo_size(f, x), dy = f->w[y] / fo_size(f, y);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void fo_dfs(struct fo *f, u32 i, double cur, u32 room)
{
	double bound = cur;
	u32 j, left = room;

	if (cur > f->best + FO_EPS) {
		f->best = cur;
		memcpy(f->best_set, f->cur_set, f->words * 8);
	}
	/* fractional knapsack over the counters still free */
	for (j = i; j < f->nr_cand && left; j++) {
		u32 g = f->cand[j], s = fo_size(f, g);

		if (s <= left) {
			bound += f->w[g];
			left -= s;
		} else {
			bound += f->w[g] * left / s;
			left = 0;
		}
	}
	if (bound <= f->best + FO_EPS || i == f->nr_cand)
		return;
	if (++f->nodes > FO_PRICE_BUDGET) {
		f->exact = false;
		return;
	}
	for (j = i; j < f->nr_cand; j++) {
		u32 g = f->cand[j], s = fo_size(f, g);

		if (s > room)
			continue;
		memcpy(f->stack[i], f->owner, sizeof(f->owner));
		if (fo_add(f, g)) {
			fo_setbit(f->cur_set, g);
			fo_dfs(f, j + 1, cur + f->w[g], room - s);
			f->cur_set[g / 64] &= ~(1ULL << (g % 64));
		}
		memcpy(f->owner, f->stack[i], sizeof(f->owner));
		/* bound of the branches without g..: recheck cheaply */
		bound = cur;
		left = room;
		{
			u32 k;

			for (k = j + 1; k < f->nr_cand && left; k++) {
				u32 h = f->cand[k], t = fo_size(f, h);

				if (t <= left) {
					bound += f->w[h];
					left -= t;
				} else {
					bound += f->w[h] * left / t;
					left = 0;
				}
			}
		}
		if (bound <= f->best + FO_EPS)
			return;
	}
}

/* Heaviest feasible set under f->w into f->best_set; returns its weight. */
static double fo_price(struct fo *f)
{
	u32 i, room = f->n, c;

	f->nr_cand = 0;
	for (i = 0; i < f->nr_rot; i++)
		if (f->w[f->rot[i]] > FO_EPS)
			f->cand[f->nr_cand++] = f->rot[i];
	qsort_r(f->cand, f->nr_cand, sizeof(u32), fo_cmp_density, f);
	for (c = 0; c < f->n; c++)
		room -= f->base[c] >= 0;
	memcpy(f->owner, f->base, sizeof(f->owner));
	memset(f->cur_set, 0, f->words * 8);
	memset(f->best_set, 0, f->words * 8);
	f->best = 0;
	f->nodes = 0;
	fo_dfs(f, 0, 0, room);
	return f->best;
}

/* ---- LP: dense two-phase simplex ------------------------------------ */

struct lp {
	u32 m, n;		/* rows, structural columns */
	u32 w;			/* tableau width: n + m slacks + m artificials + 1 */
	double *t;		/* [(m + 1) * w], row 0 objective, last col rhs */
	u32 *basis;		/* [m] */
};

#define LP(lp, i, j) ((lp)->t[(size_t)(i) * (lp)->w + (j)])

static void lp_pivot(struct lp *lp, u32 r, u32 c)
{
	double p = LP(lp, r, c);
	u32 i, j;

	for (j = 0; j < lp->w; j++)
		LP(lp, r, j) /= p;
	for (i = 0; i <= lp->m; i++) {
		double k = LP(lp, i, c);

		if (i == r || k == 0)
			continue;
		for (j = 0; j < lp->w; j++)
			LP(lp, i, j) -= k * LP(lp, r, j);
	}
	lp->basis[r - 1] = c;
}

/* Optimize the objective in row 0 over columns [0, ncols). 0 or -1. */
static int lp_run(struct lp *lp, u32 ncols)
{
	u32 it, i, j;

	for (it = 0; it < FO_MAX_PIVOTS; it++) {
		u32 c = ncols, r = 0;
		double best = -FO_EPS, ratio = 0;
		bool bland = it > 50 * (lp->m + 1);

		for (j = 0; j < ncols; j++) {
			if (LP(lp, 0, j) < best) {
				best = LP(lp, 0, j);
				c = j;
				if (bland)
					break;
			}
		}
		if (c == ncols)
			return 0;
		for (i = 1; i <= lp->m; i++) {
			double a = LP(lp, i, c), q;

			if (a <= FO_EPS)
				continue;
			q = LP(lp, i, lp->w - 1) / a;
			if (!r || q < ratio - FO_EPS ||
			    (q < ratio + FO_EPS && lp->basis[i - 1] < lp->basis[r - 1])) {
				r = i;
				ratio = q;
			}
		}
		if (!r)
			return -1;	/* unbounded: cannot happen here */
		lp_pivot(lp, r, c);
	}
	return -1;
}

/*
 * max c.x  s.t.  A x <= b, x >= 0 (rows may have b < 0).  Column layout:
 * [0, n) structural, [n, n + m) slacks, [n + m, n + 2m) artificials.
 * On return x[] and dual[] (of each row, >= 0).  0, or -1 if infeasible.
 */
static int lp_solve(struct lp *lp, const double *c, double *x, double *dual)
{
	u32 m = lp->m, n = lp->n, i, j;
	bool phase1 = false;

	for (i = 1; i <= m; i++) {
		LP(lp, i, n + i - 1) = 1;
		if (LP(lp, i, lp->w - 1) < 0) {
			for (j = 0; j < lp->w; j++)
				LP(lp, i, j) = -LP(lp, i, j);
			LP(lp, i, n + m + i - 1) = 1;
			lp->basis[i - 1] = n + m + i - 1;
			phase1 = true;
		} else {
			lp->basis[i - 1] = n + i - 1;
		}
	}
	if (phase1) {
		/* minimize the artificials: row 0 = -sum of their rows */
		memset(lp->t, 0, lp->w * sizeof(double));
		for (i = 1; i <= m; i++) {
			if (lp->basis[i - 1] < n + m)
				continue;
			for (j = 0; j < lp->w; j++)
				if (j < n + m || j == lp->w - 1)
					LP(lp, 0, j) -= LP(lp, i, j);
		}
		if (lp_run(lp, n + m) || LP(lp, 0, lp->w - 1) < -1e-7)
			return -1;
		/* drive artificials out of the basis (degenerate rows) */
		for (i = 1; i <= m; i++) {
			if (lp->basis[i - 1] < n + m)
				continue;
			for (j = 0; j < n + m; j++)
				if (fabs(LP(lp, i, j)) > FO_EPS)
					break;
			if (j < n + m)
				lp_pivot(lp, i, j);
		}
	}
	/* phase 2: row 0 = -c, priced out against the basis */
	memset(lp->t, 0, lp->w * sizeof(double));
	for (j = 0; j < n; j++)
		LP(lp, 0, j) = -c[j];
	for (i = 1; i <= m; i++) {
		u32 b = lp->basis[i - 1];
		double k = b < n ? -c[b] : 0;

		if (k != 0)
			for (j = 0; j < lp->w; j++)
				LP(lp, 0, j) -= k * LP(lp, i, j);
	}
	if (lp_run(lp, n + m))
		return -1;
	memset(x, 0, n * sizeof(double));
	for (i = 1; i <= m; i++)
		if (lp->basis[i - 1] < n)
			x[lp->basis[i - 1]] = LP(lp, i, lp->w - 1);
	for (i = 0; i < m; i++)
		dual[i] = LP(lp, 0, n + i);
	return 0;
}

/*
 * One LP over the pool.  Rows: one per rotating group (i), then the
 * convexity row.  Columns: t, then the pool's sets.  frozen[i] < 0: free.
 */
static int fo_lp(struct fo *f, const double *frozen, double *t, double *x,
		 double *dual)
{
	struct lp lp;
	double *c;
	u32 i, k, m = f->nr_rot + 1, n = f->nr_cols + 1;
	int ret = -ENOMEM;

	lp.m = m;
	lp.n = n;
	lp.w = n + 2 * m + 1;
	lp.t = calloc((size_t)(m + 1) * lp.w, sizeof(double));
	lp.basis = calloc(m, sizeof(u32));
	c = calloc(n, sizeof(double));
	if (!lp.t || !lp.basis || !c)
		goto out;
	c[0] = 1;
	for (i = 0; i < f->nr_rot; i++) {
		/* -sum x_S + t <= 0, or -sum x_S <= -f_g */
		if (frozen[i] < 0)
			LP(&lp, i + 1, 0) = 1;
		else
			LP(&lp, i + 1, lp.w - 1) = -frozen[i];
		for (k = 0; k < f->nr_cols; k++)
			if (fo_bit(f->cols + (size_t)k * f->words, f->rot[i]))
				LP(&lp, i + 1, k + 1) = -1;
	}
	for (k = 0; k < f->nr_cols; k++)
		LP(&lp, m, k + 1) = 1;
	LP(&lp, m, lp.w - 1) = 1;
	ret = lp_solve(&lp, c, x, dual) ? -EDOM : 0;
	*t = x[0];
out:
	free(lp.t);
	free(lp.basis);
	free(c);
	return ret;
}

/* ---- driver ---------------------------------------------------------- */

static int fo_classify(struct fo *f, struct pevt_fairopt *out)
{
	const struct rot_input *in = f->in;
	u32 g, u, nr_members = 0;
	int c;

	f->first = calloc(in->nr_groups + 1, sizeof(u32));
	if (!f->first)
		return -ENOMEM;
	for (g = 0; g < in->nr_groups; g++) {
		f->first[g] = nr_members;
		nr_members += fo_size(f, g);
	}
	f->first[in->nr_groups] = nr_members;
	f->mmask = calloc(nr_members ? nr_members : 1, sizeof(u64));
	f->rot = calloc(in->nr_groups ? in->nr_groups : 1, sizeof(u32));
	if (!f->mmask || !f->rot)
		return -ENOMEM;
	for (g = 0; g < in->nr_groups; g++)
		for (u = f->first[g]; u < f->first[g + 1]; u++)
			f->mmask[u] = in->groups[g].masks[u - f->first[g]] & f->full;
	for (c = 0; c < ROT_MAX_COUNTERS; c++)
		f->base[c] = -1;
	for (g = 0; g < in->nr_groups; g++) {
		const struct rot_group *grp = &in->groups[g];

		if (!fo_size(f, g)) {
			out->state[g] = PEVT_FAIR_ALWAYS_ON;
			out->share[g] = 1;
		} else if (grp->flags & ROT_F_PINNED) {
			memcpy(f->owner, f->base, sizeof(f->owner));
			if (fo_add(f, g)) {
				memcpy(f->base, f->owner, sizeof(f->owner));
				out->state[g] = PEVT_FAIR_PINNED;
				out->share[g] = 1;
			} else {
				out->state[g] = PEVT_FAIR_ERROR;
			}
		}
	}
	for (g = 0; g < in->nr_groups; g++) {
		if (!fo_size(f, g) || (in->groups[g].flags & ROT_F_PINNED))
			continue;
		memcpy(f->owner, f->base, sizeof(f->owner));
		if (fo_add(f, g)) {
			out->state[g] = PEVT_FAIR_ROTATING;
			f->rot[f->nr_rot++] = g;
		} else {
			out->state[g] = PEVT_FAIR_ALWAYS_OFF;
		}
	}
	return 0;
}

static int fo_fill(struct fo *f, struct pevt_fairopt *out)
{
	u32 r = f->nr_rot, i, k, nr_frozen = 0;
	double *frozen, *x = NULL, *dual = NULL, t = 0;
	u64 *set;
	int ret = -ENOMEM;

	frozen = malloc(r * sizeof(double));
	set = calloc(f->words, 8);
	if (!frozen || !set)
		goto out;
	for (i = 0; i < r; i++) {
		frozen[i] = -1;
		memset(set, 0, f->words * 8);
		fo_setbit(set, f->rot[i]);
		if (fo_add_col(f, set) < 0)
			goto out;
	}
	while (nr_frozen < r) {
		double mu;

		out->rounds++;
		for (;;) {
			free(x);
			x = calloc(f->nr_cols + 1, sizeof(double));
			free(dual);
			dual = calloc(r + 1, sizeof(double));
			ret = -ENOMEM;
			if (!x || !dual)
				goto out;
			ret = fo_lp(f, frozen, &t, x, dual);
			if (ret)
				goto out;
			for (i = 0; i < r; i++)
				f->w[f->rot[i]] = dual[i];
			mu = dual[r];
			if (fo_price(f) <= mu + 1e-7)
				break;
			ret = fo_add_col(f, f->best_set);
			if (ret < 0)
				goto out;
			if (!ret)
				break;
		}
		for (i = 0; i < r; i++) {
			if (frozen[i] >= 0)
				continue;
			if (dual[i] > 1e-7 || t >= 1 - 1e-9) {
				frozen[i] = t < 1 ? t : 1;
				nr_frozen++;
			}
		}
		if (!nr_frozen) {	/* cannot happen: sum of free duals >= 1 */
			ret = -EDOM;
			goto out;
		}
	}
	for (i = 0; i < r; i++)
		out->share[f->rot[i]] = frozen[i];
	/* the last LP's solution: a schedule reaching every share */
	out->words = f->words;
	out->sets = calloc((size_t)f->nr_cols * f->words + 1, 8);
	out->weight = calloc(f->nr_cols + 1, sizeof(double));
	ret = -ENOMEM;
	if (!out->sets || !out->weight)
		goto out;
	for (k = 0; r && k < f->nr_cols; k++) {
		if (x[k + 1] <= 1e-12)
			continue;
		memcpy(out->sets + (size_t)out->nr_sets * f->words,
		       f->cols + (size_t)k * f->words, f->words * 8);
		out->weight[out->nr_sets++] = x[k + 1];
	}
	out->columns = f->nr_cols;
	ret = 0;
out:
	free(frozen);
	free(set);
	free(x);
	free(dual);
	return ret;
}

/**
 * pevt_fairopt__solve() - see pevt/fairopt.h
 * @in:  planner input
 * @out: the optimum
 *
 * Return: 0 or -errno.
 */
int pevt_fairopt__solve(const struct rot_input *in, struct pevt_fairopt *out)
{
	struct fo f = { .in = in, .exact = true };
	u32 g1, m;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!in || in->nr_counters < 1 || in->nr_counters > ROT_MAX_COUNTERS ||
	    in->nr_groups > ROT_MAX_GROUPS || (in->nr_groups && !in->groups))
		return -EINVAL;
	f.n = in->nr_counters;
	f.full = f.n == 64 ? ~0ULL : (1ULL << f.n) - 1;
	for (g1 = 0; g1 < in->nr_groups; g1++) {
		const struct rot_group *grp = &in->groups[g1];

		if (grp->flags & ~ROT_F_ALL)
			return -EINVAL;
		if (!fo_size(&f, g1))
			continue;
		if (!grp->masks)
			return -EINVAL;
		for (m = 0; m < grp->nr_members; m++)
			if (!(grp->masks[m] & f.full))
				return -EINVAL;
	}
	g1 = in->nr_groups ? in->nr_groups : 1;
	f.words = (g1 + 63) / 64;
	out->nr_groups = in->nr_groups;
	out->share = calloc(g1, sizeof(double));
	out->state = calloc(g1, sizeof(int));
	f.w = calloc(g1, sizeof(double));
	f.cand = calloc(g1, sizeof(u32));
	f.best_set = calloc(f.words, 8);
	f.cur_set = calloc(f.words, 8);
	f.stack = calloc(g1 + 1, sizeof(*f.stack));
	ret = -ENOMEM;
	if (!out->share || !out->state || !f.w || !f.cand || !f.best_set ||
	    !f.cur_set || !f.stack)
		goto out;
	ret = fo_classify(&f, out);
	if (!ret)
		ret = fo_fill(&f, out);
	out->exact = f.exact;
out:
	free(f.first);
	free(f.mmask);
	free(f.rot);
	free(f.cols);
	free(f.w);
	free(f.cand);
	free(f.best_set);
	free(f.cur_set);
	free(f.stack);
	if (ret)
		pevt_fairopt__free(out);
	return ret;
}

/** pevt_fairopt__free() - release what pevt_fairopt__solve() allocated */
void pevt_fairopt__free(struct pevt_fairopt *out)
{
	free(out->share);
	free(out->state);
	free(out->sets);
	free(out->weight);
	memset(out, 0, sizeof(*out));
}

/**
 * pevt_fair__compare() - see pevt/fairopt.h
 * @opt: optimal shares
 * @share: measured shares
 * @use: groups counted, NULL for all
 * @n: groups
 * @min_ratio: smallest share/opt
 * @dist: mean |share - opt|
 */
void pevt_fair__compare(const double *opt, const double *share, const bool *use,
			unsigned int n, double *min_ratio, double *dist)
{
	unsigned int i, cnt = 0;
	double sum = 0;

	*min_ratio = 1;
	for (i = 0; i < n; i++) {
		if (use && !use[i])
			continue;
		cnt++;
		sum += fabs(share[i] - opt[i]);
		if (opt[i] > 1e-9 && share[i] / opt[i] < *min_ratio)
			*min_ratio = share[i] / opt[i];
	}
	*dist = cnt ? sum / cnt : 0;
}
