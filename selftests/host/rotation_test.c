// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the rotation-id planner (kmod/rotation.c, linked from
 * libpevt).  Every plan is validated by an independent checker: its own
 * matching (recursive Kuhn, not the planner's BFS), its own reading of the
 * ALWAYS_ON / ALWAYS_OFF / PINNED / ERROR rules, and for small cases a
 * brute-force minimum number of rotations over all set partitions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "rotation.h"
#include "pevt/fairopt.h"

#define MAXG	512

struct tcase {
	struct rot_input in;
	struct rot_group g[MAXG];
	u64 masks[MAXG][ROT_MAX_COUNTERS];
};

struct planned {
	struct rot_plan p;
	void *ws;
	size_t size;
};

static struct tcase *tc_new(u32 n)
{
	struct tcase *t = calloc(1, sizeof(*t));

	t->in.groups = t->g;
	t->in.nr_counters = n;
	return t;
}

/* A group of @size members, all with constraint @mask. */
static u32 tc_add(struct tcase *t, u32 flags, u32 size, u64 mask)
{
	u32 g = t->in.nr_groups++, m;

	for (m = 0; m < size; m++)
		t->masks[g][m] = mask;
	t->g[g].masks = t->masks[g];
	t->g[g].nr_members = size;
	t->g[g].flags = flags;
	return g;
}

static int tc_plan(struct tcase *t, struct planned *pl, int fill)
{
	pl->size = rot_workspace_size(t->in.nr_groups, t->in.nr_counters);
	pl->ws = malloc(pl->size ? pl->size : 1);
	memset(pl->ws, fill, pl->size);
	return rot_plan(&t->in, pl->ws, pl->size, &pl->p);
}

/* ---- independent checker ------------------------------------------- */

static u64 full_mask(u32 n)
{
	return n == 64 ? ~0ULL : (1ULL << n) - 1;
}

static bool kuhn(int i, const u64 *mk, int *own, u64 *vis, u32 n)
{
	u32 c;

	for (c = 0; c < n; c++) {
		if (!((mk[i] >> c) & 1) || ((*vis >> c) & 1))
			continue;
		*vis |= 1ULL << c;
		if (own[c] < 0 || kuhn(own[c], mk, own, vis, n)) {
			own[c] = i;
			return true;
		}
	}
	return false;
}

/* Can all the members of the groups in @set[0..nr) run at once? */
static bool feasible(const struct tcase *t, const u32 *set, u32 nr)
{
	u64 mk[ROT_MAX_COUNTERS + 1];
	int own[ROT_MAX_COUNTERS];
	u32 i, m, k = 0, n = t->in.nr_counters;

	for (i = 0; i < nr; i++) {
		for (m = 0; m < t->g[set[i]].nr_members; m++) {
			if (k == n)
				return false;
			mk[k++] = t->masks[set[i]][m] & full_mask(n);
		}
	}
	for (i = 0; i < n; i++)
		own[i] = -1;
	for (i = 0; i < k; i++) {
		u64 vis = 0;

		if (!kuhn(i, mk, own, &vis, n))
			return false;
	}
	return true;
}

static bool is_sw(const struct tcase *t, u32 g)
{
	return (t->g[g].flags & ROT_F_SOFTWARE) || !t->g[g].nr_members;
}

/* The checker's own classification: -2 on, -3 off, -4 pinned, -5 error, 0 rotating. */
static void classify(const struct tcase *t, int *cls, u32 *pinned, u32 *nr_pinned)
{
	u32 g, set[MAXG + 1];

	*nr_pinned = 0;
	for (g = 0; g < t->in.nr_groups; g++) {
		if (is_sw(t, g)) {
			cls[g] = ROT_ALWAYS_ON;
		} else if (t->g[g].flags & ROT_F_PINNED) {
			memcpy(set, pinned, *nr_pinned * sizeof(u32));
			set[*nr_pinned] = g;
			if (feasible(t, set, *nr_pinned + 1)) {
				pinned[(*nr_pinned)++] = g;
				cls[g] = ROT_PINNED;
			} else {
				cls[g] = ROT_ERROR;
			}
		} else {
			cls[g] = 0;
		}
	}
	for (g = 0; g < t->in.nr_groups; g++) {
		if (cls[g] != 0)
			continue;
		memcpy(set, pinned, *nr_pinned * sizeof(u32));
		set[*nr_pinned] = g;
		if (!feasible(t, set, *nr_pinned + 1))
			cls[g] = ROT_ALWAYS_OFF;
	}
}

static char msg[512];

#define FAIL(...) do { snprintf(msg, sizeof(msg), __VA_ARGS__); return msg; } while (0)

/* Returns NULL if @p is a valid plan for @t, else what is wrong. */
static const char *check_plan(const struct tcase *t, const struct rot_plan *p)
{
	static int cls[MAXG];
	static u32 pinned[MAXG], set[MAXG + 1];
	u32 nr_pinned, g, r, c, m, k, nrot = 0, cnt[4] = { 0 };
	u32 n = t->in.nr_counters, R = p->nr_rotations;

	classify(t, cls, pinned, &nr_pinned);
	if (p->nr_groups != t->in.nr_groups || p->nr_counters != n)
		FAIL("header: groups %u counters %u", p->nr_groups, p->nr_counters);
	for (g = 0; g < t->in.nr_groups; g++) {
		s32 st = p->state[g];

		if (cls[g] == 0) {
			if (st < 0 || (u32)st >= R)
				FAIL("group %u rotating but state %d (R=%u)", g, st, R);
			nrot++;
		} else if (st != cls[g]) {
			FAIL("group %u state %d, expected %d", g, st, cls[g]);
		}
		if (st == ROT_ALWAYS_ON)
			cnt[0]++;
		if (st == ROT_ALWAYS_OFF)
			cnt[1]++;
		if (st == ROT_PINNED)
			cnt[2]++;
		if (st == ROT_ERROR)
			cnt[3]++;
	}
	if (cnt[0] != p->nr_always_on || cnt[1] != p->nr_always_off ||
	    cnt[2] != p->nr_pinned || cnt[3] != p->nr_error)
		FAIL("state counters disagree");
	if (!nrot && !nr_pinned && R != 0)
		FAIL("nothing needs a counter but R=%u", R);
	if (!nrot && nr_pinned && R != 1)
		FAIL("pinned only but R=%u", R);
	if (nrot) {
		if (p->lower_bound < 1 || p->min_rotations < p->lower_bound)
			FAIL("min_rotations %u < lower bound %u", p->min_rotations,
			     p->lower_bound);
		if (!p->wrapped && !p->filled && R != p->min_rotations)
			FAIL("R %u != min_rotations %u unwrapped", R, p->min_rotations);
		if (p->wrapped && R > nrot)
			FAIL("wrap schedule longer (%u) than groups (%u)", R, nrot);
		if (p->filled && R > (t->in.nr_groups > 64 ? t->in.nr_groups : 64))
			FAIL("filled schedule of %u rotations", R);
		if (p->filled && p->wrapped)
			FAIL("filled and wrapped");
	}

	for (r = 0; r < R; r++) {
		const struct rot_slot *s = rot_plan_slots(p, r);
		u64 seen[MAXG] = { 0 };
		u32 nr = 0;

		for (c = 0; c < n; c++) {
			g = s[c].group;
			if (g == ROT_SLOT_FREE)
				continue;
			if (g >= t->in.nr_groups)
				FAIL("rot %u counter %u: bad group %u", r, c, g);
			m = s[c].member;
			if (m >= t->g[g].nr_members)
				FAIL("rot %u counter %u: bad member %u", r, c, m);
			if (!((t->masks[g][m] >> c) & 1))
				FAIL("rot %u: group %u member %u on forbidden counter %u",
				     r, g, m, c);
			if ((seen[g] >> m) & 1)
				FAIL("rot %u: group %u member %u twice", r, g, m);
			seen[g] |= 1ULL << m;
			if (!rot_plan_runs(p, r, g))
				FAIL("rot %u: counter of group %u not in runs", r, g);
		}
		for (g = 0; g < t->in.nr_groups; g++) {
			bool runs = rot_plan_runs(p, r, g);

			if (runs && seen[g] != full_mask(t->g[g].nr_members))
				FAIL("rot %u: group %u runs without all members", r, g);
			if (!runs && seen[g])
				FAIL("rot %u: group %u has counters, not in runs", r, g);
			if (cls[g] == ROT_PINNED && !runs)
				FAIL("rot %u: pinned group %u missing", r, g);
			if (cls[g] < 0 && cls[g] != ROT_PINNED && runs)
				FAIL("rot %u: group %u in state %d runs", r, g, cls[g]);
			if (runs)
				set[nr++] = g;
		}
		/* backfill is maximal: no absent rotating group still fits */
		for (g = 0; g < t->in.nr_groups; g++) {
			if (cls[g] != 0 || rot_plan_runs(p, r, g))
				continue;
			set[nr] = g;
			if (feasible(t, set, nr + 1))
				FAIL("rot %u: group %u fits but was not backfilled", r, g);
		}
	}
	for (g = 0; g < t->in.nr_groups; g++) {
		for (k = 0, r = 0; r < R; r++)
			k += rot_plan_runs(p, r, g);
		if (k != p->nr_runs[g])
			FAIL("group %u nr_runs %u, bitmap says %u", g, p->nr_runs[g], k);
		if (cls[g] == 0) {
			if (!rot_plan_runs(p, p->state[g], g))
				FAIL("group %u not in its primary rotation", g);
			/* share nr_runs/R never below 1/min_rotations */
			if ((u64)k * p->min_rotations < R)
				FAIL("group %u share %u/%u < 1/%u", g, k, R,
				     p->min_rotations);
		}
	}
	return NULL;
}

/* Brute force: fewest blocks partitioning the rotating groups, each block
 * feasible next to the pinned set. */
static u32 bf_best;

static void bf(const struct tcase *t, const u32 *items, u32 ni, u32 i,
	       u32 (*blk)[MAXG + 1], u32 *bn, u32 nb, const u32 *pinned, u32 np)
{
	u32 b;

	if (nb >= bf_best)
		return;
	if (i == ni) {
		bf_best = nb;
		return;
	}
	for (b = 0; b <= nb && b < ni; b++) {
		if (b == nb) {
			memcpy(blk[b], pinned, np * sizeof(u32));
			bn[b] = np;
		}
		blk[b][bn[b]] = items[i];
		if (feasible(t, blk[b], bn[b] + 1)) {
			bn[b]++;
			bf(t, items, ni, i + 1, blk, bn, b == nb ? nb + 1 : nb,
			   pinned, np);
			bn[b]--;
		}
	}
}

static u32 brute_min_rotations(const struct tcase *t)
{
	static int cls[MAXG];
	static u32 pinned[MAXG], items[MAXG], blk[12][MAXG + 1];
	u32 np, ni = 0, g, bn[12];

	classify(t, cls, pinned, &np);
	for (g = 0; g < t->in.nr_groups; g++)
		if (cls[g] == 0)
			items[ni++] = g;
	if (!ni)
		return np ? 1 : 0;
	bf_best = ni + 1;
	bf(t, items, ni, 0, blk, bn, 0, pinned, np);
	return bf_best;
}

static u64 rng_state;

static u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static u32 rndn(u32 n)
{
	return rnd() % n;
}

/* Random case: @maxn counters at most, @maxg groups at most. */
static struct tcase *random_case(u32 maxn, u32 maxg)
{
	u32 n = 1 + rndn(maxn), ng = rndn(maxg + 1), g, m, flags;
	struct tcase *t = tc_new(n);
	u32 constrained = rndn(3);	/* 0: none, 1: some, 2: most */

	for (g = 0; g < ng; g++) {
		u32 size = 1 + rndn(n < 4 ? n + 1 : 4);

		flags = 0;
		if (rndn(100) < 12)
			flags |= ROT_F_PINNED;
		if (rndn(100) < 8)
			flags |= ROT_F_SOFTWARE;
		if (rndn(2))
			flags |= ROT_F_TASK;
		tc_add(t, flags, size, ~0ULL);
		for (m = 0; m < size; m++) {
			u64 mk = ~0ULL;

			if (rndn(3) < constrained) {
				do
					mk = rnd() & rnd() & full_mask(n);
				while (!mk);
			}
			t->masks[g][m] = mk;
		}
	}
	return t;
}

static bool same_plan(const struct rot_plan *a, const struct rot_plan *b)
{
	u32 R = a->nr_rotations, G = a->nr_groups;

	if (a->nr_rotations != b->nr_rotations ||
	    a->min_rotations != b->min_rotations ||
	    a->lower_bound != b->lower_bound || a->optimal != b->optimal ||
	    a->wrapped != b->wrapped || a->nr_groups != b->nr_groups)
		return false;
	if (memcmp(a->state, b->state, G * sizeof(s32)) ||
	    memcmp(a->nr_runs, b->nr_runs, G * sizeof(u32)) ||
	    memcmp(a->runs, b->runs, (size_t)R * a->words * sizeof(u64)) ||
	    memcmp(a->slots, b->slots,
		   (size_t)R * a->nr_counters * sizeof(struct rot_slot)))
		return false;
	return true;
}

#define PLAN_OK(t, pl) do {						\
	const char *__why;						\
	ASSERT_EQ(0, tc_plan((t), (pl), 0x5a));				\
	__why = check_plan((t), &(pl)->p);				\
	if (__why)							\
		TH_LOG("invalid plan: %s", __why);			\
	ASSERT_TRUE(__why == NULL);					\
} while (0)

/* ---- known cases ----------------------------------------------------- */

TEST(four_singles_two_counters)
{
	struct tcase *t = tc_new(2);
	struct planned pl;
	u32 g;

	for (g = 0; g < 4; g++)
		tc_add(t, 0, 1, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(2U, pl.p.nr_rotations);
	ASSERT_EQ(2U, pl.p.min_rotations);
	ASSERT_TRUE(pl.p.optimal);
	for (g = 0; g < 4; g++)
		ASSERT_EQ(1U, pl.p.nr_runs[g]);
}

/* Song Liu's case 1: task groups must not be starved by CPU groups. */
TEST(two_task_two_cpu)
{
	struct tcase *t = tc_new(2);
	struct planned pl;
	u32 g, r, in_rot[2] = { 0 };

	tc_add(t, ROT_F_TASK, 1, ~0ULL);
	tc_add(t, ROT_F_TASK, 1, ~0ULL);
	tc_add(t, 0, 1, ~0ULL);
	tc_add(t, 0, 1, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(2U, pl.p.nr_rotations);
	for (g = 0; g < 4; g++) {
		ASSERT_EQ(1U, pl.p.nr_runs[g]);
		for (r = 0; r < 2; r++)
			in_rot[r] += rot_plan_runs(&pl.p, r, g);
	}
	ASSERT_EQ(2U, in_rot[0]);
	ASSERT_EQ(2U, in_rot[1]);
}

TEST(four_task_one_cpu_two_fifths)
{
	struct tcase *t = tc_new(2);
	struct planned pl;
	u32 g;

	for (g = 0; g < 4; g++)
		tc_add(t, ROT_F_TASK, 1, ~0ULL);
	tc_add(t, 0, 1, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(3U, pl.p.min_rotations);
	ASSERT_TRUE(pl.p.optimal);
	ASSERT_TRUE(pl.p.wrapped);
	ASSERT_EQ(5U, pl.p.nr_rotations);
	for (g = 0; g < 5; g++)
		ASSERT_EQ(2U, pl.p.nr_runs[g]);	/* 2/5 each */
}

/* Wang/Song: ABCD in rotation 0, E alone in rotation 1 wastes 3 counters. */
TEST(abcd_e_no_rotation_wasted)
{
	struct tcase *t = tc_new(4);
	struct planned pl;
	u32 g, r, c;

	for (g = 0; g < 5; g++)
		tc_add(t, g == 4 ? ROT_F_TASK : 0, 1, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(2U, pl.p.min_rotations);
	for (r = 0; r < pl.p.nr_rotations; r++)
		for (c = 0; c < 4; c++)
			ASSERT_NE(ROT_SLOT_FREE, rot_plan_slots(&pl.p, r)[c].group);
	/* and fairly: every group 4 rotations out of 5 */
	ASSERT_EQ(5U, pl.p.nr_rotations);
	for (g = 0; g < 5; g++)
		ASSERT_EQ(4U, pl.p.nr_runs[g]);
}

TEST(pinned_fill_pmu)
{
	struct tcase *t = tc_new(2);
	struct planned pl;
	u32 g;

	tc_add(t, ROT_F_PINNED, 2, ~0ULL);
	for (g = 0; g < 3; g++)
		tc_add(t, g & 1 ? ROT_F_TASK : 0, 1, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(1U, pl.p.nr_rotations);
	ASSERT_EQ(ROT_PINNED, pl.p.state[0]);
	ASSERT_EQ(3U, pl.p.nr_always_off);
	for (g = 1; g < 4; g++) {
		ASSERT_EQ(ROT_ALWAYS_OFF, pl.p.state[g]);
		ASSERT_EQ(0U, pl.p.nr_runs[g]);
	}
}

TEST(pinned_overflow_is_error)
{
	struct tcase *t = tc_new(2);
	struct planned pl;

	tc_add(t, ROT_F_PINNED, 1, ~0ULL);
	tc_add(t, ROT_F_PINNED, 2, ~0ULL);	/* no room after the first */
	tc_add(t, ROT_F_PINNED, 1, ~0ULL);	/* first come, first served */
	tc_add(t, ROT_F_PINNED, 3, ~0ULL);	/* never fits */
	PLAN_OK(t, &pl);
	ASSERT_EQ(ROT_PINNED, pl.p.state[0]);
	ASSERT_EQ(ROT_ERROR, pl.p.state[1]);
	ASSERT_EQ(ROT_PINNED, pl.p.state[2]);
	ASSERT_EQ(ROT_ERROR, pl.p.state[3]);
	ASSERT_EQ(1U, pl.p.nr_rotations);
	ASSERT_EQ(0U, pl.p.nr_runs[1]);
}

TEST(software_always_on)
{
	struct tcase *t = tc_new(1);
	struct planned pl;
	u32 r;

	tc_add(t, ROT_F_SOFTWARE, 3, ~0ULL);
	tc_add(t, ROT_F_SOFTWARE | ROT_F_PINNED, 1, ~0ULL);
	tc_add(t, ROT_F_TASK, 0, 0);		/* no hardware member */
	tc_add(t, 0, 1, ~0ULL);
	tc_add(t, 0, 1, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(ROT_ALWAYS_ON, pl.p.state[0]);
	ASSERT_EQ(ROT_ALWAYS_ON, pl.p.state[1]);
	ASSERT_EQ(ROT_ALWAYS_ON, pl.p.state[2]);
	ASSERT_EQ(3U, pl.p.nr_always_on);
	ASSERT_EQ(2U, pl.p.nr_rotations);
	for (r = 0; r < 2; r++)
		ASSERT_FALSE(rot_plan_runs(&pl.p, r, 0));
}

TEST(software_only_needs_no_rotation)
{
	struct tcase *t = tc_new(4);
	struct planned pl;

	tc_add(t, ROT_F_SOFTWARE, 1, ~0ULL);
	tc_add(t, ROT_F_SOFTWARE | ROT_F_TASK, 2, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(0U, pl.p.nr_rotations);
}

TEST(empty_input)
{
	struct tcase *t = tc_new(4);
	struct planned pl;

	PLAN_OK(t, &pl);
	ASSERT_EQ(0U, pl.p.nr_rotations);
	ASSERT_EQ(0U, pl.p.lower_bound);
}

TEST(constraint_conflict_never_together)
{
	struct tcase *t = tc_new(4);
	struct planned pl;
	u32 r, a, b, c;

	a = tc_add(t, 0, 1, 0x1);		/* only counter 0 */
	b = tc_add(t, ROT_F_TASK, 1, 0x1);	/* only counter 0 */
	c = tc_add(t, 0, 2, 0x3);		/* counters 0-1 */
	tc_add(t, 0, 1, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(3U, pl.p.min_rotations);	/* a, b, c pairwise conflict */
	ASSERT_EQ(3U, pl.p.lower_bound);
	for (r = 0; r < pl.p.nr_rotations; r++) {
		ASSERT_FALSE(rot_plan_runs(&pl.p, r, a) && rot_plan_runs(&pl.p, r, b));
		ASSERT_FALSE(rot_plan_runs(&pl.p, r, a) && rot_plan_runs(&pl.p, r, c));
		ASSERT_FALSE(rot_plan_runs(&pl.p, r, b) && rot_plan_runs(&pl.p, r, c));
	}
}

/* Needs an augmenting path: the first group must move off counter 0. */
TEST(matching_moves_members)
{
	struct tcase *t = tc_new(2);
	struct planned pl;

	tc_add(t, 0, 1, 0x3);
	tc_add(t, 0, 1, 0x1);
	PLAN_OK(t, &pl);
	ASSERT_EQ(1U, pl.p.nr_rotations);
	ASSERT_EQ(1, rot_plan_counter(&pl.p, 0, 0, 0));
	ASSERT_EQ(0, rot_plan_counter(&pl.p, 0, 1, 0));
}

/* A pinned group on "any" counter must not lock out a constrained one. */
TEST(pinned_moves_for_constrained_flexible)
{
	struct tcase *t = tc_new(2);
	struct planned pl;

	tc_add(t, ROT_F_PINNED, 1, 0x3);
	tc_add(t, 0, 1, 0x1);
	tc_add(t, 0, 1, 0x1);
	PLAN_OK(t, &pl);
	ASSERT_EQ(0, pl.p.state[1]);
	ASSERT_EQ(2U, pl.p.nr_rotations);
	ASSERT_EQ(1, rot_plan_counter(&pl.p, 0, 0, 0));
}

TEST(group_bigger_than_pmu_always_off)
{
	struct tcase *t = tc_new(2);
	struct planned pl;

	tc_add(t, 0, 3, ~0ULL);
	tc_add(t, 0, 2, 0x1);	/* two members both need counter 0 */
	tc_add(t, 0, 1, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(ROT_ALWAYS_OFF, pl.p.state[0]);
	ASSERT_EQ(ROT_ALWAYS_OFF, pl.p.state[1]);
	ASSERT_EQ(0, pl.p.state[2]);
	ASSERT_EQ(1U, pl.p.nr_rotations);
}

/* First-fit decreasing needs 3 rotations ({4,4} {3,3,3} {3}); 2 exist. */
TEST(exact_search_beats_ffd)
{
	struct tcase *t = tc_new(10);
	struct planned pl;
	u32 g;

	tc_add(t, 0, 4, ~0ULL);
	tc_add(t, 0, 4, ~0ULL);
	for (g = 0; g < 4; g++)
		tc_add(t, ROT_F_TASK, 3, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(2U, pl.p.min_rotations);
	ASSERT_EQ(2U, pl.p.nr_rotations);
	ASSERT_TRUE(pl.p.optimal);
	for (g = 0; g < 6; g++)
		ASSERT_EQ(1U, pl.p.nr_runs[g]);
}

TEST(three_big_groups_lower_bound)
{
	struct tcase *t = tc_new(4);
	struct planned pl;

	tc_add(t, 0, 3, ~0ULL);
	tc_add(t, 0, 3, ~0ULL);
	tc_add(t, ROT_F_TASK, 3, ~0ULL);
	PLAN_OK(t, &pl);
	ASSERT_EQ(3U, pl.p.lower_bound);
	ASSERT_EQ(3U, pl.p.min_rotations);
	ASSERT_TRUE(pl.p.optimal);
}

TEST(sixty_four_counters)
{
	struct tcase *t = tc_new(64);
	struct planned pl;
	u32 g;

	for (g = 0; g < 40; g++)
		tc_add(t, g % 2 ? ROT_F_TASK : 0, 3, g % 5 ? ~0ULL : 1ULL << 63 | 0xffff);
	PLAN_OK(t, &pl);
	ASSERT_EQ(2U, pl.p.min_rotations);	/* 120 members on 64 counters */
}

/* ---- backfill, fairness, determinism ---------------------------------- */

/* Backfill fills a rotation, never removes: shares stay >= 1/R. */
TEST(backfill_raises_never_lowers)
{
	struct tcase *t = tc_new(4);
	struct planned pl;

	tc_add(t, 0, 3, ~0ULL);		/* A: alone in its rotation... */
	tc_add(t, 0, 3, ~0ULL);		/* B */
	tc_add(t, ROT_F_TASK, 1, ~0ULL);	/* c: joins A */
	tc_add(t, ROT_F_TASK, 1, ~0ULL);	/* d: joins B */
	PLAN_OK(t, &pl);
	ASSERT_EQ(2U, pl.p.min_rotations);
	ASSERT_EQ(1U, pl.p.nr_runs[0]);
	ASSERT_EQ(1U, pl.p.nr_runs[1]);
	ASSERT_EQ(1U, pl.p.nr_runs[2]);
	ASSERT_EQ(1U, pl.p.nr_runs[3]);

	/* one small group: it goes with A, then backfills next to B */
	t->in.nr_groups = 3;
	PLAN_OK(t, &pl);
	ASSERT_EQ(2U, pl.p.nr_rotations);
	ASSERT_EQ(2U, pl.p.nr_runs[2]);
	ASSERT_EQ(1U, pl.p.nr_runs[0]);
	ASSERT_EQ(1U, pl.p.nr_runs[1]);
}

TEST(deterministic)
{
	u32 i;

	rng_state = 0x1234567;
	for (i = 0; i < 200; i++) {
		struct tcase *t = random_case(16, 60);
		struct planned a, b;

		ASSERT_EQ(0, tc_plan(t, &a, 0x00));
		ASSERT_EQ(0, tc_plan(t, &b, 0xff));	/* different garbage */
		ASSERT_TRUE(same_plan(&a.p, &b.p));
		free(a.ws);
		free(b.ws);
		free(t);
	}
}

/*
 * Without constraints the preferred counters never collide, so a group
 * running in rotations r-1 and r keeps every counter: the tick leaves it
 * (and every pinned group) programmed.
 */
TEST(continuing_groups_keep_counters)
{
	u32 i, r, g, m, kept = 0;

	rng_state = 0xabcdef;
	for (i = 0; i < 300; i++) {
		struct tcase *t = tc_new(1 + rndn(16));
		struct planned pl;
		u32 ng = rndn(40);

		for (g = 0; g < ng; g++)
			tc_add(t, rndn(10) ? (rndn(2) ? ROT_F_TASK : 0) : ROT_F_PINNED,
			       1 + rndn(3), ~0ULL);
		PLAN_OK(t, &pl);
		for (r = 1; r < pl.p.nr_rotations; r++) {
			for (g = 0; g < ng; g++) {
				if (!rot_plan_runs(&pl.p, r, g) ||
				    !rot_plan_runs(&pl.p, r - 1, g))
					continue;
				for (m = 0; m < t->g[g].nr_members; m++)
					ASSERT_EQ(rot_plan_counter(&pl.p, r - 1, g, m),
						  rot_plan_counter(&pl.p, r, g, m));
				kept++;
			}
		}
		free(pl.ws);
		free(t);
	}
	ASSERT_GT(kept, 100U);	/* the property was exercised */
}

/* ---- random property tests ------------------------------------------- */

TEST(random_small_minimal)
{
	u32 i, proven = 0;

	rng_state = 0xdeadbeef;
	for (i = 0; i < 3000; i++) {
		struct tcase *t = random_case(6, 9);
		struct planned pl;
		u32 best;

		PLAN_OK(t, &pl);
		best = brute_min_rotations(t);
		if (pl.p.nr_always_off + pl.p.nr_always_on + pl.p.nr_pinned +
		    pl.p.nr_error == t->in.nr_groups)
			best = pl.p.min_rotations;	/* nothing rotates */
		if (best != pl.p.min_rotations)
			TH_LOG("case %u: brute force %u, planner %u", i, best,
			       pl.p.min_rotations);
		ASSERT_EQ(best, pl.p.min_rotations);
		ASSERT_LE(pl.p.lower_bound, best);
		ASSERT_TRUE(pl.p.optimal);
		proven += pl.p.optimal;
		free(pl.ws);
		free(t);
	}
	ASSERT_EQ(3000U, proven);
}

TEST(random_large_valid)
{
	u32 i;

	rng_state = 0xfeedface;
	for (i = 0; i < 300; i++) {
		struct tcase *t = random_case(i % 3 ? 8 : 64, 300);
		struct planned pl;

		PLAN_OK(t, &pl);
		free(pl.ws);
		free(t);
	}
}

/* ---- the max-min fair optimum (user/lib/fairopt.c) ------------------ */

static void solve_ok(struct __test_metadata *_metadata, struct tcase *t,
		     struct pevt_fairopt *o)
{
	ASSERT_EQ(0, pevt_fairopt__solve(&t->in, o));
	ASSERT_TRUE(o->exact);
}

#define SOLVE(t, o) solve_ok(_metadata, t, o)
#define NEAR(a, b) ASSERT_LT(fabs((a) - (b)), 1e-7)

TEST(fair_known_optima)
{
	struct pevt_fairopt o;
	struct tcase *t;
	u32 g;

	/* 4 task + 1 CPU group on 2 counters: 2/5 each */
	t = tc_new(2);
	for (g = 0; g < 5; g++)
		tc_add(t, g < 4 ? ROT_F_TASK : 0, 1, ~0ULL);
	SOLVE(t, &o);
	for (g = 0; g < 5; g++)
		NEAR(o.share[g], 0.4);
	pevt_fairopt__free(&o);
	free(t);

	/* a pair and two singles on 2 counters: the pair excludes both */
	t = tc_new(2);
	tc_add(t, 0, 2, ~0ULL);
	tc_add(t, 0, 1, ~0ULL);
	tc_add(t, 0, 1, ~0ULL);
	SOLVE(t, &o);
	for (g = 0; g < 3; g++)
		NEAR(o.share[g], 0.5);
	pevt_fairopt__free(&o);
	free(t);

	/* two singles only on counter 0, one free single, 2 counters */
	t = tc_new(2);
	tc_add(t, 0, 1, 1);
	tc_add(t, 0, 1, 1);
	tc_add(t, 0, 1, ~0ULL);
	SOLVE(t, &o);
	NEAR(o.share[0], 0.5);
	NEAR(o.share[1], 0.5);
	NEAR(o.share[2], 1);
	pevt_fairopt__free(&o);
	free(t);

	/* 3 on 4 counters twice, 1 single: {3,1} {3,1}... 3+3 never: 1/2, 1/2, 1 */
	t = tc_new(4);
	tc_add(t, 0, 3, ~0ULL);
	tc_add(t, 0, 3, ~0ULL);
	tc_add(t, 0, 1, ~0ULL);
	SOLVE(t, &o);
	NEAR(o.share[0], 0.5);
	NEAR(o.share[1], 0.5);
	NEAR(o.share[2], 1);
	pevt_fairopt__free(&o);
	free(t);

	/* pinned, software, error, always-off: 1, 1, 0, 0; 3 singles on the rest */
	t = tc_new(3);
	tc_add(t, ROT_F_PINNED, 1, ~0ULL);
	tc_add(t, ROT_F_SOFTWARE, 1, ~0ULL);
	tc_add(t, ROT_F_PINNED, 3, ~0ULL);
	tc_add(t, 0, 3, ~0ULL);
	for (g = 0; g < 3; g++)
		tc_add(t, 0, 1, ~0ULL);
	SOLVE(t, &o);
	NEAR(o.share[0], 1);
	NEAR(o.share[1], 1);
	NEAR(o.share[2], 0);
	NEAR(o.share[3], 0);
	ASSERT_EQ(PEVT_FAIR_ERROR, o.state[2]);
	ASSERT_EQ(PEVT_FAIR_ALWAYS_OFF, o.state[3]);
	for (g = 4; g < 7; g++)
		NEAR(o.share[g], 2.0 / 3);
	pevt_fairopt__free(&o);
	free(t);
}

/* The solver's schedule is real: feasible sets, weights <= 1, shares met. */
static const char *check_optimum(const struct tcase *t, const struct pevt_fairopt *o)
{
	static int cls[MAXG];
	static u32 pinned[MAXG], set[MAXG + 1];
	static double got[MAXG];
	double sum = 0;
	u32 np, k, g, nr;

	classify(t, cls, pinned, &np);
	memset(got, 0, sizeof(got));
	for (k = 0; k < o->nr_sets; k++) {
		const u64 *s = o->sets + (size_t)k * o->words;

		memcpy(set, pinned, np * sizeof(u32));
		nr = np;
		for (g = 0; g < t->in.nr_groups; g++) {
			if (!((s[g / 64] >> (g % 64)) & 1))
				continue;
			if (cls[g] != 0)
				FAIL("set %u holds group %u of class %d", k, g, cls[g]);
			set[nr++] = g;
			got[g] += o->weight[k];
		}
		if (!feasible(t, set, nr))
			FAIL("set %u infeasible", k);
		if (o->weight[k] < 0)
			FAIL("set %u weight %g", k, o->weight[k]);
		sum += o->weight[k];
	}
	if (sum > 1 + 1e-7)
		FAIL("weights sum to %.9f", sum);
	for (g = 0; g < t->in.nr_groups; g++) {
		double want = cls[g] == ROT_ALWAYS_ON || cls[g] == ROT_PINNED ? 1 :
			      cls[g] == 0 ? got[g] : 0;

		if ((cls[g] == 0 && o->state[g] != PEVT_FAIR_ROTATING) ||
		    (cls[g] == ROT_PINNED && o->state[g] != PEVT_FAIR_PINNED))
			FAIL("group %u class %d, solver state %d", g, cls[g], o->state[g]);
		if (cls[g] == 0 ? o->share[g] > want + 1e-7 : fabs(o->share[g] - want) > 1e-9)
			FAIL("group %u share %.9f, schedule gives %.9f", g, o->share[g], want);
	}
	return NULL;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Brute force, independent of the LP: every multiset of R maximal feasible
 * sets, R <= BF_R; the lexicographically largest sorted share vector.
 */
#define BF_R	6
static u32 bf_sets[64][8], bf_nsets, bf_items[8], bf_ni;
static u32 bf_cnt[8], bf_best_cnt[8], bf_best_r;

static bool bf_better(u32 r)
{
	u32 a[8], b[8], i, j, x;

	/* sorted counts; compare a[i]/r with b[i]/bf_best_r */
	memcpy(a, bf_cnt, sizeof(a));
	memcpy(b, bf_best_cnt, sizeof(b));
	for (i = 0; i < bf_ni; i++)
		for (j = i + 1; j < bf_ni; j++) {
			if (a[j] < a[i]) {
				x = a[i]; a[i] = a[j]; a[j] = x;
			}
			if (b[j] < b[i]) {
				x = b[i]; b[i] = b[j]; b[j] = x;
			}
		}
	if (!bf_best_r)
		return true;
	for (i = 0; i < bf_ni; i++) {
		u64 l = (u64)a[i] * bf_best_r, h = (u64)b[i] * r;

		if (l != h)
			return l > h;
	}
	return false;
}

static void bf_multiset(u32 from, u32 left, u32 r)
{
	u32 k, i;

	if (!left) {
		if (bf_better(r)) {
			memcpy(bf_best_cnt, bf_cnt, sizeof(bf_cnt));
			bf_best_r = r;
		}
		return;
	}
	for (k = from; k < bf_nsets; k++) {
		for (i = 0; i < bf_ni; i++)
			bf_cnt[i] += bf_sets[k][i];
		bf_multiset(k, left - 1, r);
		for (i = 0; i < bf_ni; i++)
			bf_cnt[i] -= bf_sets[k][i];
	}
}

static void brute_optimum(const struct tcase *t, double *sorted)
{
	static int cls[MAXG];
	static u32 pinned[MAXG], set[MAXG + 1];
	u32 np, g, mask, nr, k, i, r;
	u32 feas[256] = { 0 };

	classify(t, cls, pinned, &np);
	bf_ni = 0;
	for (g = 0; g < t->in.nr_groups; g++)
		if (cls[g] == 0)
			bf_items[bf_ni++] = g;
	for (mask = 0; mask < (1U << bf_ni); mask++) {
		memcpy(set, pinned, np * sizeof(u32));
		nr = np;
		for (i = 0; i < bf_ni; i++)
			if ((mask >> i) & 1)
				set[nr++] = bf_items[i];
		feas[mask] = feasible(t, set, nr);
	}
	bf_nsets = 0;
	for (mask = 1; mask < (1U << bf_ni); mask++) {
		if (!feas[mask])
			continue;
		for (i = 0; i < bf_ni; i++)	/* maximal: no single addition fits */
			if (!((mask >> i) & 1) && feas[mask | 1U << i])
				break;
		if (i < bf_ni)
			continue;
		for (i = 0; i < bf_ni; i++)
			bf_sets[bf_nsets][i] = (mask >> i) & 1;
		bf_nsets++;
	}
	bf_best_r = 0;
	memset(bf_cnt, 0, sizeof(bf_cnt));
	for (r = 1; r <= BF_R && bf_nsets; r++)
		bf_multiset(0, r, r);
	for (k = 0; k < bf_ni; k++)
		sorted[k] = bf_best_r ? (double)bf_best_cnt[k] / bf_best_r : 0;
	qsort(sorted, bf_ni, sizeof(double), cmp_dbl);
}

/* Smallest R <= @max with every share a multiple of 1/R, else 0. */
static u32 denominator(const double *v, u32 n, u32 max)
{
	u32 r, i;

	for (r = 1; r <= max; r++) {
		for (i = 0; i < n; i++)
			if (fabs(v[i] * r - round(v[i] * r)) > 1e-6)
				break;
		if (i == n)
			return r;
	}
	return 0;
}

TEST(fair_brute_force_small)
{
	u32 i, g, k, equal = 0, cases = 2000;
	double opt[8], bf[8];

	rng_state = 0x5eed;
	for (i = 0; i < cases; i++) {
		struct tcase *t = random_case(5, 7);
		struct pevt_fairopt o;
		const char *err;

		SOLVE(t, &o);
		err = check_optimum(t, &o);
		if (err)
			TH_LOG("case %u: %s", i, err);
		ASSERT_EQ(NULL, err);
		for (k = 0, g = 0; g < t->in.nr_groups; g++)
			if (o.state[g] == PEVT_FAIR_ROTATING)
				opt[k++] = o.share[g];
		if (k > 6) {	/* too many for the brute force */
			pevt_fairopt__free(&o);
			free(t);
			continue;
		}
		qsort(opt, k, sizeof(double), cmp_dbl);
		brute_optimum(t, bf);
		ASSERT_EQ(k, bf_ni);
		/* no schedule of <= BF_R rotations beats the optimum ... */
		for (g = 0; g < k && fabs(bf[g] - opt[g]) < 1e-7; g++)
			;
		if (g < k && bf[g] > opt[g])
			TH_LOG("case %u: brute force beats the solver at rank %u: %.6f > %.6f",
			       i, g, bf[g], opt[g]);
		ASSERT_TRUE(g == k || bf[g] < opt[g]);
		/* ... and reaches it whenever it has a denominator <= BF_R */
		if (denominator(opt, k, BF_R)) {
			if (g < k)
				TH_LOG("case %u: optimum %.6f at rank %u, brute force %.6f",
				       i, opt[g], g, bf[g]);
			ASSERT_EQ(k, g);
			equal++;
		}
		pevt_fairopt__free(&o);
		free(t);
	}
	TH_LOG("%u of %u cases with an optimum of denominator <= %u matched exactly",
	       equal, cases, BF_R);
	ASSERT_GT(equal, cases / 2);
}

/*
 * The planner against the optimum: long-run share nr_runs/R of every
 * rotating group vs the solver's, on random pairs of up to 64 groups and
 * 64 counters (mixed sizes, masks, pinned, software, CPU + task).
 */
static void planner_vs_optimum(struct __test_metadata *_metadata, u32 cases,
			       u32 maxn, u32 maxg, double *max_dev, double *min_ratio,
			       u32 *worst_case, u32 *within)
{
	static double opt[MAXG], got[MAXG];
	u32 i, g;

	*max_dev = 0;
	*min_ratio = 1;
	*within = 0;
	for (i = 0; i < cases; i++) {
		struct tcase *t = random_case(maxn, maxg);
		struct pevt_fairopt o;
		struct planned pl;
		double ratio, dist, dev = 0;

		PLAN_OK(t, &pl);
		SOLVE(t, &o);
		for (g = 0; g < t->in.nr_groups; g++) {
			opt[g] = o.share[g];
			got[g] = pl.p.state[g] >= 0 || pl.p.state[g] == ROT_PINNED ?
				 (double)pl.p.nr_runs[g] / pl.p.nr_rotations :
				 pl.p.state[g] == ROT_ALWAYS_ON;
			if (fabs(got[g] - opt[g]) > dev)
				dev = fabs(got[g] - opt[g]);
		}
		if (dev > *max_dev) {
			*max_dev = dev;
			*worst_case = i;
		}
		*within += dev <= 0.01;
		pevt_fair__compare(opt, got, NULL, t->in.nr_groups, &ratio, &dist);
		if (ratio < *min_ratio)
			*min_ratio = ratio;
		pevt_fairopt__free(&o);
		free(pl.ws);
		free(t);
	}
}

TEST(planner_reaches_optimum)
{
	double dev, ratio;
	u32 worst = 0, within;

	rng_state = 0xfa1;
	planner_vs_optimum(_metadata, 3000, 6, 9, &dev, &ratio, &worst, &within);
	TH_LOG("small (<= 6 counters, <= 9 groups): %u of 3000 within 0.01 of the optimum; max |share - opt| %.4f (case %u), min share/opt %.4f",
	       within, dev, worst, ratio);
	/* before water-filling: 0.5 (packing + backfill + wrap only) */
	ASSERT_GE(ratio, 0.66);
	rng_state = 0xfa2;
	planner_vs_optimum(_metadata, 300, 64, 64, &dev, &ratio, &worst, &within);
	TH_LOG("large (<= 64 counters, <= 64 groups): %u of 300 within 0.01 of the optimum; max |share - opt| %.4f (case %u), min share/opt %.4f",
	       within, dev, worst, ratio);
	ASSERT_GE(ratio, 0.64);
}

/* ---- malformed input ------------------------------------------------- */

TEST(malformed_rejected)
{
	struct tcase *t = tc_new(4);
	struct rot_plan p;
	size_t size = rot_workspace_size(2, 64);
	void *ws = malloc(size);

	tc_add(t, 0, 1, ~0ULL);
	tc_add(t, 0, 2, 0xf);

	t->in.nr_counters = 0;
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, size, &p));
	t->in.nr_counters = 65;
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, size, &p));
	t->in.nr_counters = 4;
	ASSERT_EQ(0, rot_plan(&t->in, ws, size, &p));

	t->masks[1][1] = 0;			/* empty mask */
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, size, &p));
	t->masks[1][1] = 0x10;			/* only a counter that does not exist */
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, size, &p));
	t->masks[1][1] = 0x18;			/* bit 4 ignored, bit 3 usable */
	ASSERT_EQ(0, rot_plan(&t->in, ws, size, &p));

	t->g[0].flags = 0x80;			/* unknown flag */
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, size, &p));
	t->g[0].flags = 0;
	t->g[0].masks = NULL;
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, size, &p));
	t->g[0].flags = ROT_F_SOFTWARE;		/* masks of software groups unused */
	ASSERT_EQ(0, rot_plan(&t->in, ws, size, &p));
	t->g[0].masks = t->masks[0];
	t->g[0].flags = 0;

	/* too many groups for the workspace */
	tc_add(t, 0, 1, ~0ULL);
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, rot_workspace_size(2, 4), &p));
	ASSERT_EQ(0, rot_plan(&t->in, ws, rot_workspace_size(3, 4), &p));
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, rot_workspace_size(3, 4) - 1, &p));
	t->in.nr_groups = ROT_MAX_GROUPS + 1;
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, size, &p));
	t->in.nr_groups = 3;
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, NULL, size, &p));
	ASSERT_EQ(-EINVAL, rot_plan(&t->in, ws, size, NULL));
	ASSERT_EQ(-EINVAL, rot_plan(NULL, ws, size, &p));

	ASSERT_EQ(0U, rot_workspace_size(4, 0));
	ASSERT_EQ(0U, rot_workspace_size(4, 65));
	ASSERT_EQ(0U, rot_workspace_size(ROT_MAX_GROUPS + 1, 4));
	free(ws);
	free(t);
}

TEST_HARNESS_MAIN
