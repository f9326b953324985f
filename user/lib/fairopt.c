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
#include <stdio.h>

#include "rotation.h"
#include "pevt/fairopt.h"

#define FO_EPS		1e-9
#define FO_TINY		1e-11
#define FO_PERTURB	1e-9
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

/* Fractional knapsack over candidates from @i on, @room counters free. */
static double fo_bound(const struct fo *f, u32 i, double cur, u32 room)
{
	for (; i < f->nr_cand && room; i++) {
		u32 g = f->cand[i], s = fo_size(f, g);

		if (s <= room) {
			cur += f->w[g];
			room -= s;
		} else {
			return cur + f->w[g] * room / s;
		}
	}
	return cur;
}

static void fo_dfs(struct fo *f, u32 i, double cur, u32 room)
{
	u32 j;

	if (cur > f->best + FO_EPS) {
		f->best = cur;
		memcpy(f->best_set, f->cur_set, f->words * 8);
	}
	if (i == f->nr_cand || fo_bound(f, i, cur, room) <= f->best + FO_EPS)
		return;
	if (++f->nodes > FO_PRICE_BUDGET) {
		f->exact = false;
		return;
	}
	/* the next group taken is cand[j]; cand[i..j) are left out */
	for (j = i; j < f->nr_cand; j++) {
		u32 g = f->cand[j], s = fo_size(f, g);

		if (fo_bound(f, j, cur, room) <= f->best + FO_EPS)
			return;
		if (s > room)
			continue;
		memcpy(f->stack[i], f->owner, sizeof(f->owner));
		if (fo_add(f, g)) {
			fo_setbit(f->cur_set, g);
			fo_dfs(f, j + 1, cur + f->w[g], room - s);
			f->cur_set[g / 64] &= ~(1ULL << (g % 64));
		}
		memcpy(f->owner, f->stack[i], sizeof(f->owner));
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

/* ---- LP: dense two-phase simplex, columns added warm ------------------ */

/*
 * Tableau of  max t  over rows 1..m (row 0 the objective), each row
 * "sum a x <= b".  Columns: [0, m) slacks, [m, 2m) artificials (rows whose
 * b < 0 are negated and start on an artificial), [2m, ...) structural: t,
 * then one per set of the pool in pool order.  The slack columns hold
 * B^-1 (up to the rows' signs), so a set added later is priced and
 * entered without rebuilding: its column is sum_i a_i * slack column i.
 */
struct lp {
	u32 m;			/* rows */
	u32 ncols;		/* columns in use */
	u32 stride;		/* allocated columns per row */
	double *t;		/* [(m + 1) * stride] */
	double *rhs;		/* [m + 1], rhs[0] objective value */
	u32 *basis;		/* [m] column of each row */
	u32 *nz;		/* [stride] pivot row's non-zero columns */
	bool bland;		/* Bland's rule from the first pivot */
};

#define LP(lp, i, j) ((lp)->t[(size_t)(i) * (lp)->stride + (j)])

static int lp_grow(struct lp *lp, u32 ncols)
{
	u32 stride = lp->stride, i;
	double *t;

	if (ncols <= lp->stride)
		return 0;
	while (stride < ncols)
		stride *= 2;
	t = calloc((size_t)(lp->m + 1) * stride, sizeof(double));
	if (!t)
		return -ENOMEM;
	for (i = 0; i <= lp->m; i++)
		memcpy(t + (size_t)i * stride, lp->t + (size_t)i * lp->stride,
		       lp->ncols * sizeof(double));
	free(lp->t);
	lp->t = t;
	lp->stride = stride;
	free(lp->nz);
	lp->nz = calloc(stride, sizeof(u32));
	return lp->nz ? 0 : -ENOMEM;
}

static void lp_pivot(struct lp *lp, u32 r, u32 c)
{
	double p = LP(lp, r, c);
	u32 i, j, k, nz = 0;

	/* the pivot row is mostly zeros: update only its non-zero columns */
	for (j = 0; j < lp->ncols; j++) {
		if (LP(lp, r, j) == 0)
			continue;
		LP(lp, r, j) /= p;
		lp->nz[nz++] = j;
	}
	lp->rhs[r] /= p;
	for (i = 0; i <= lp->m; i++) {
		double f = LP(lp, i, c);
		double *row = &LP(lp, i, 0);
		const double *prow = &LP(lp, r, 0);

		if (i == r || f == 0)
			continue;
		for (k = 0; k < nz; k++) {
			double *v = &row[lp->nz[k]];

			*v -= f * prow[lp->nz[k]];
			if (fabs(*v) < FO_TINY)	/* noise breaks Bland's rule */
				*v = 0;
		}
		row[c] = 0;
		lp->rhs[i] -= f * lp->rhs[r];
		if (fabs(lp->rhs[i]) < FO_TINY)
			lp->rhs[i] = 0;
	}
	lp->basis[r - 1] = c;
}

static bool lp_may_enter(const struct lp *lp, u32 j, bool phase1)
{
	return phase1 || j < lp->m || j >= 2 * lp->m;
}

/* Optimize row 0 (Dantzig, Bland after many pivots). 0 or -EDOM. */
static int lp_run(struct lp *lp, bool phase1)
{
	u32 it, i, j;

	for (it = 0; it < FO_MAX_PIVOTS; it++) {
		u32 c = lp->ncols, r = 0;
		double best = -1e-8, ratio = 0;
		bool bland = lp->bland || it > 50 * (lp->m + 1);

		for (j = 0; j < lp->ncols; j++) {
			if (LP(lp, 0, j) < best && lp_may_enter(lp, j, phase1)) {
				best = LP(lp, 0, j);
				c = j;
				if (bland)
					break;
			}
		}
		if (c == lp->ncols)
			return 0;
		for (i = 1; i <= lp->m; i++) {
			double a = LP(lp, i, c), q;

			if (a <= FO_EPS)
				continue;
			q = lp->rhs[i] / a;
			if (!r || q < ratio - FO_EPS ||
			    (q < ratio + FO_EPS && lp->basis[i - 1] < lp->basis[r - 1])) {
				r = i;
				ratio = q;
			}
		}
		if (!r)
			{ fprintf(stderr, "unb\n"); return -EDOM; }	/* unbounded: t <= 1, cannot happen */
		lp_pivot(lp, r, c);
	}
	fprintf(stderr, "maxpiv\n"); return -EDOM;
}

/* Row @i's coefficient of set column @k (pool index) before any pivot. */
static double fo_coef(const struct fo *f, u32 i, u32 k)
{
	if (i == f->nr_rot)
		return 1;	/* convexity row */
	return fo_bit(f->cols + (size_t)k * f->words, f->rot[i]) ? -1 : 0;
}

/*
 * Build and solve the round's LP over the whole pool: rows are the
 * rotating groups (frozen[i] < 0: free, "t - sum x_S <= 0"; else
 * "-sum x_S <= -frozen[i]"), then the convexity row.
 */
static int fo_lp_build(struct fo *f, struct lp *lp, const double *frozen,
		       bool bland)
{
	u32 m = f->nr_rot + 1, i, j, k;
	int ret;

	lp->m = m;
	lp->bland = bland;
	lp->ncols = 2 * m + 1 + f->nr_cols;
	lp->stride = 64;
	while (lp->stride < lp->ncols)
		lp->stride *= 2;
	lp->t = calloc((size_t)(m + 1) * lp->stride, sizeof(double));
	lp->rhs = calloc(m + 1, sizeof(double));
	lp->basis = calloc(m, sizeof(u32));
	lp->nz = calloc(lp->stride, sizeof(u32));
	if (!lp->t || !lp->rhs || !lp->basis || !lp->nz)
		return -ENOMEM;
	for (i = 1; i <= m; i++) {
		LP(lp, i, i - 1) = 1;
		if (i < m && frozen[i - 1] < 0)
			LP(lp, i, 2 * m) = 1;
		lp->rhs[i] = i == m ? 1 : frozen[i - 1] < 0 ? 0 : -frozen[i - 1];
		/* distinct slack against degeneracy (cycling under noise) */
		lp->rhs[i] += FO_PERTURB * (1 + (i * 7919 % 1009) / 1009.0);
		for (k = 0; k < f->nr_cols; k++)
			LP(lp, i, 2 * m + 1 + k) = fo_coef(f, i - 1, k);
		lp->basis[i - 1] = i - 1;
		if (lp->rhs[i] < 0) {
			for (j = 0; j < lp->ncols; j++)
				LP(lp, i, j) = -LP(lp, i, j);
			lp->rhs[i] = -lp->rhs[i];
			LP(lp, i, m + i - 1) = 1;
			lp->basis[i - 1] = m + i - 1;
		}
	}
	/* phase 1: minimize the artificials (row 0 = -their rows' sum) */
	for (i = 1; i <= m; i++) {
		if (lp->basis[i - 1] < m)
			continue;
		for (j = 0; j < lp->ncols; j++)
			if (j < m || j >= 2 * m)
				LP(lp, 0, j) -= LP(lp, i, j);
		lp->rhs[0] -= lp->rhs[i];
	}
	ret = lp_run(lp, true);
	if (ret)
		return ret;
	if (lp->rhs[0] < -1e-7)
		{ fprintf(stderr, "infeas %g\n", lp->rhs[0]); return -EDOM; }
	for (i = 1; i <= m; i++) {
		if (lp->basis[i - 1] < m || lp->basis[i - 1] >= 2 * m)
			continue;
		for (j = 0; j < lp->ncols; j++)
			if (lp_may_enter(lp, j, false) && fabs(LP(lp, i, j)) > FO_EPS)
				break;
		if (j < lp->ncols)
			lp_pivot(lp, i, j);
	}
	/* phase 2: objective t (column 2m), priced out against the basis */
	memset(lp->t, 0, lp->ncols * sizeof(double));
	lp->rhs[0] = 0;
	LP(lp, 0, 2 * m) = -1;
	for (i = 1; i <= m; i++) {
		if (lp->basis[i - 1] != 2 * m)
			continue;
		for (j = 0; j < lp->ncols; j++)
			LP(lp, 0, j) += LP(lp, i, j);
		lp->rhs[0] += lp->rhs[i];
	}
	return lp_run(lp, false);
}

/* Enter pool set @k (just added) into the solved tableau and re-solve. */
static int fo_lp_add(struct fo *f, struct lp *lp, u32 k)
{
	u32 i, r, c = lp->ncols;
	int ret = lp_grow(lp, lp->ncols + 1);

	if (ret)
		return ret;
	lp->ncols++;
	for (r = 0; r <= lp->m; r++) {
		double v = 0;

		for (i = 0; i < lp->m; i++) {
			double a = fo_coef(f, i, k);

			if (a != 0)
				v += a * LP(lp, r, i);
		}
		LP(lp, r, c) = v;
	}
	return lp_run(lp, false);
}

static void lp_free(struct lp *lp)
{
	free(lp->t);
	free(lp->rhs);
	free(lp->basis);
	free(lp->nz);
	memset(lp, 0, sizeof(*lp));
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
	struct lp lp = { 0 };
	double *frozen, t = 0;
	u64 *set;
	int ret = -ENOMEM;

	frozen = malloc((r + 1) * sizeof(double));
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
	/* a head start: per group, the maximal set greedily grown from it */
	for (i = 0; i < r; i++) {
		memset(set, 0, f->words * 8);
		memcpy(f->owner, f->base, sizeof(f->owner));
		for (k = 0; k < r; k++) {
			u32 g = f->rot[(i + k) % r];
			int save[ROT_MAX_COUNTERS];

			memcpy(save, f->owner, sizeof(save));
			if (fo_add(f, g))
				fo_setbit(set, g);
			else
				memcpy(f->owner, save, sizeof(save));
		}
		if (fo_add_col(f, set) < 0)
			goto out;
	}
	while (nr_frozen < r) {
		out->rounds++;
		lp_free(&lp);
		ret = fo_lp_build(f, &lp, frozen, false);
		if (ret == -EDOM) {
			lp_free(&lp);
			ret = fo_lp_build(f, &lp, frozen, true);
		}
		for (;;) {
			if (ret)
				goto out;
			for (i = 0; i < r; i++)
				f->w[f->rot[i]] = LP(&lp, 0, i);
			if (fo_price(f) <= LP(&lp, 0, r) + 1e-7)
				break;
			ret = fo_add_col(f, f->best_set);
			if (ret < 0)
				goto out;
			if (!ret)
				break;
			ret = fo_lp_add(f, &lp, f->nr_cols - 1);
			if (ret == -EDOM) {	/* stalled: start over, pool kept */
				lp_free(&lp);
				ret = fo_lp_build(f, &lp, frozen, true);
			}
		}
		t = lp.rhs[0];
		for (i = 0; i < r; i++) {
			if (frozen[i] >= 0)
				continue;
			if (LP(&lp, 0, i) > 1e-7 || t >= 1 - 1e-9) {
				frozen[i] = t < 1 ? t : 1;
				nr_frozen++;
			}
		}
		if (!nr_frozen) {	fprintf(stderr, "nofreeze\n");
			ret = -EDOM;
			goto out;
		}
	}
	for (i = 0; i < r; i++)
		out->share[f->rot[i]] = frozen[i];
	/* the last LP's basic sets: a schedule reaching every share */
	out->words = f->words;
	out->sets = calloc((size_t)(r + 1) * f->words, 8);
	out->weight = calloc(r + 1, sizeof(double));
	ret = -ENOMEM;
	if (!out->sets || !out->weight)
		goto out;
	for (i = 1; r && i <= lp.m; i++) {
		k = lp.basis[i - 1];
		if (k < 2 * lp.m + 1 || lp.rhs[i] <= 1e-12)
			continue;
		k -= 2 * lp.m + 1;
		memcpy(out->sets + (size_t)out->nr_sets * f->words,
		       f->cols + (size_t)k * f->words, f->words * 8);
		out->weight[out->nr_sets++] = lp.rhs[i];
	}
	out->columns = f->nr_cols;
	ret = 0;
out:
	lp_free(&lp);
	free(frozen);
	free(set);
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
