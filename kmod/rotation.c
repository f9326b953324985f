// SPDX-License-Identifier: GPL-2.0
/*
 * Rotation-id planner: see rotation.h for the contract and
 * Documentation/rotation.md for the algorithm and its figures.
 *
 * Outline of rot_plan():
 *   1. classify: software -> ALWAYS_ON; pinned, in order, matched onto an
 *      empty PMU -> PINNED or ERROR; flexible that cannot be matched next
 *      to the pinned set -> ALWAYS_OFF; the rest "rotate".
 *   2. pack the rotating groups into rotations: first-fit decreasing, each
 *      rotation starting from the pinned matching, each fit an exact
 *      bipartite matching (augmenting paths, members -> counters).
 *   3. lower bound on R (Hall-type counting per counter set, plus a greedy
 *      clique of pairwise conflicting groups); if FFD is above it and the
 *      case is small, an exact branch-and-bound search with a step budget.
 *   4. backfill: every rotation takes, in (fewest rotations so far,
 *      creation order) order, every group of other rotations that still
 *      fits.  Nothing is ever removed, so no share drops below 1/R.
 *   5. wrap-around: lay the rotating groups out in one cyclic sequence
 *      (packing order) and cut it into rotations greedily, McNaughton
 *      style, until a rotation starts where an earlier one did; that cycle
 *      runs every group equally often.  It replaces packing + backfill
 *      when its minimum share is higher (5 groups on 2 counters: 2/5 each
 *      instead of 2/3, 1/3, 1/3, 1/3, 1/3), or equal with more utilization.
 *   6. re-match every rotation to keep the counters of groups that also
 *      ran in the previous one, so the tick reprograms less.
 *
 * Everything is integer, allocation-free (one caller workspace) and bounded
 * by the input size and ROT_EXACT_BUDGET; ties are broken by group index so
 * the output depends on nothing but the input.
 */
#include "rotation.h"

#define ROT_EXACT_MAX_GROUPS	16	/* exact search only for this few */
#define ROT_EXACT_BUDGET	5000	/* search nodes per plan */
#define ROT_CLIQUE_MAX		64	/* groups tried for the clique bound */
#define ROT_HALL_SETS		128	/* counter sets tried for the Hall bound */
#define ROT_UNSET		(-1)	/* rotating, primary id not known yet */
#define ROT_UNSEEN		0xffffffffU
#define ROT_MIN_RCAP		64	/* rotations held even for few groups */
#define ROT_FILL_SPAN		4	/* water-fill R in [Rmin, 4 Rmin + 4] */
#define ROT_FILL_BUDGET		100000	/* bin visits, then no new candidate */

struct rot_ctx {
	const struct rot_input *in;
	struct rot_plan *plan;
	u64 full;			/* mask of existing counters */
	u32 n;				/* counters */
	u32 nr_pinned_members;		/* counters the pinned set holds */
	u32 nr_flex;			/* rotating flexible groups */
	u32 min_size;			/* smallest rotating group */
	u16 *order;			/* [nr_flex] rotating groups, FFD order */
	u16 *seq;			/* [nr_flex] wrap-around sequence */
	u32 *seen_at;			/* [nr_flex] wrap: rotation per start */
	u32 *cum;			/* [nr_flex + 1] wrap: groups placed */
	u32 *key;			/* [nr_groups] FFD sort key */
	u32 *used;			/* [R max] counters owned per rotation */
	struct rot_slot *base;		/* [n] the pinned matching */
	struct rot_slot *snap;		/* [EXACT_MAX * n] search undo log */
	struct rot_slot *save;		/* [n] rot_try_add() undo */
	struct rot_slot *tmp;		/* [n] trial matchings */
	u64 *sets;			/* [ROT_HALL_SETS] Hall counter sets */
	u32 rcap;			/* rotations the plan arrays hold */
	struct rot_slot *wf;		/* [rcap * n] water-fill bins */
	u32 *wf_used;			/* [rcap] counters owned per bin */
	u32 *wf_cnt;			/* [nr_groups] water-fill runs */
	u8 *wf_alive;			/* [nr_flex] still growing */
	u32 *sorted;			/* [nr_flex] candidate's runs, sorted */
	u32 *best;			/* [nr_flex] best plan's runs, sorted */
	u32 fill_budget;		/* bin visits left for water-filling */
	u32 budget;			/* exact search nodes left */
	u16 pick[ROT_EXACT_MAX_GROUPS];	/* rotation per depth */
	u32 suffix[ROT_EXACT_MAX_GROUPS + 1]; /* members still to place */
};

static u32 rot_popcount(u64 x)
{
	/* no __builtin_popcountll: it may become a libgcc call in the kernel */
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (u32)((x * 0x0101010101010101ULL) >> 56);
}

static u32 rot_ctz(u64 x)
{
	return (u32)__builtin_ctzll(x);
}

/* Rotations a plan may have: enough for the fill's fine fractions. */
static size_t rot_rcap(size_t nr_groups)
{
	return nr_groups < ROT_MIN_RCAP ? ROT_MIN_RCAP : nr_groups;
}

static size_t rot_align(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

static u64 rot_mask(const struct rot_ctx *rc, u32 g, u32 m)
{
	return rc->in->groups[g].masks[m] & rc->full;
}

static u32 rot_size(const struct rot_ctx *rc, u32 g)
{
	return rc->in->groups[g].nr_members;
}

static struct rot_slot *rot_bin(const struct rot_ctx *rc, u32 r)
{
	return rc->plan->slots + (size_t)r * rc->n;
}

static void rot_clear_slots(struct rot_slot *s, u32 n)
{
	u32 c;

	for (c = 0; c < n; c++) {
		s[c].group = ROT_SLOT_FREE;
		s[c].member = 0;
		s[c].pad = 0;
	}
}

/*
 * Give member @m of group @g a counter in @s, moving already placed members
 * along a shortest augmenting path if needed (BFS over counters: counter d
 * is reachable from counter c if the owner of c may also use d).  Returns
 * false, with @s untouched, if no augmenting path exists.
 */
static bool rot_augment(const struct rot_ctx *rc, struct rot_slot *s, u32 g,
			u32 m)
{
	s8 prev[ROT_MAX_COUNTERS];
	u8 queue[ROT_MAX_COUNTERS];
	u32 head = 0, tail = 0;
	u64 seen, next;
	int c, p;

	seen = rot_mask(rc, g, m);
	for (next = seen; next; next &= next - 1) {
		c = rot_ctz(next);
		prev[c] = -1;
		queue[tail++] = c;
	}
	while (head < tail) {
		c = queue[head++];
		if (s[c].group == ROT_SLOT_FREE)
			goto found;
		next = rot_mask(rc, s[c].group, s[c].member) & ~seen;
		seen |= next;
		for (; next; next &= next - 1) {
			int d = rot_ctz(next);

			prev[d] = c;
			queue[tail++] = d;
		}
	}
	return false;

found:
	/* shift every owner on the path one step towards the free end */
	for (p = prev[c]; p >= 0; c = p, p = prev[c])
		s[c] = s[p];
	s[c].group = g;
	s[c].member = m;
	s[c].pad = 0;
	return true;
}

/* All members of @g into @s, or nothing (and false). */
static bool rot_try_add(const struct rot_ctx *rc, struct rot_slot *s, u32 g)
{
	struct rot_slot *save = rc->save;	/* never nested: leaf helper */
	u32 m, size = rot_size(rc, g);

	if (size > rc->n)
		return false;
	/* a failed augment leaves @s untouched: one member needs no undo */
	if (size == 1)
		return rot_augment(rc, s, g, 0);
	memcpy(save, s, rc->n * sizeof(*s));
	for (m = 0; m < size; m++) {
		if (!rot_augment(rc, s, g, m)) {
			memcpy(s, save, rc->n * sizeof(*s));
			return false;
		}
	}
	return true;
}

static bool rot_fits_with_pinned(const struct rot_ctx *rc, u32 g, u32 h)
{
	struct rot_slot *tmp = rc->tmp;

	memcpy(tmp, rc->base, rc->n * sizeof(*tmp));
	if (!rot_try_add(rc, tmp, g))
		return false;
	return h == ROT_SLOT_FREE || rot_try_add(rc, tmp, h);
}

/* FFD order: more members first, then fewer usable counters, then index. */
static bool rot_before(const struct rot_ctx *rc, u16 a, u16 b)
{
	if (rc->key[a] != rc->key[b])
		return rc->key[a] < rc->key[b];
	return a < b;
}

static void rot_sift(const struct rot_ctx *rc, u16 *v, u32 i, u32 n)
{
	for (;;) {
		u32 big = i, l = 2 * i + 1, r = l + 1;
		u16 t;

		if (l < n && rot_before(rc, v[big], v[l]))
			big = l;
		if (r < n && rot_before(rc, v[big], v[r]))
			big = r;
		if (big == i)
			return;
		t = v[i];
		v[i] = v[big];
		v[big] = t;
		i = big;
	}
}

/* Heapsort: O(n log n) worst case, and a total order makes it stable. */
static void rot_sort(const struct rot_ctx *rc, u16 *v, u32 n)
{
	u32 i;
	u16 t;

	for (i = n / 2; i-- > 0;)
		rot_sift(rc, v, i, n);
	for (i = n; i-- > 1;) {
		t = v[0];
		v[0] = v[i];
		v[i] = t;
		rot_sift(rc, v, 0, i);
	}
}

static void rot_open(struct rot_ctx *rc, u32 r)
{
	memcpy(rot_bin(rc, r), rc->base, rc->n * sizeof(*rc->base));
	rc->used[r] = rc->nr_pinned_members;
}

/* First-fit decreasing over rc->order; returns the number of rotations. */
static u32 rot_ffd(struct rot_ctx *rc)
{
	u32 i, r, nr = 0;

	for (i = 0; i < rc->nr_flex; i++) {
		u32 g = rc->order[i], size = rot_size(rc, g);

		for (r = 0; r < nr; r++) {
			if (rc->used[r] + size <= rc->n &&
			    rot_try_add(rc, rot_bin(rc, r), g))
				break;
		}
		if (r == nr) {
			/* fits next to the pinned set: checked when classified */
			rot_open(rc, nr++);
			rot_try_add(rc, rot_bin(rc, r), g);
		}
		rc->used[r] += size;
		rc->plan->state[g] = r;
	}
	return nr;
}

/*
 * Hall-type bound: for a counter set S, every member whose mask lies in S
 * needs a counter of S, and pinned members inside S hold theirs in every
 * rotation, so R >= ceil(flexible members inside S / (|S| - pinned inside S)).
 * S ranges over the full set and the distinct member masks.
 */
static u32 rot_hall_bound(struct rot_ctx *rc)
{
	const struct rot_input *in = rc->in;
	u32 nr_sets = 0, best = 0, i, j, g, m;

	rc->sets[nr_sets++] = rc->full;
	for (i = 0; i < rc->nr_flex && nr_sets < ROT_HALL_SETS; i++) {
		g = rc->order[i];
		for (m = 0; m < rot_size(rc, g) && nr_sets < ROT_HALL_SETS; m++) {
			u64 s = rot_mask(rc, g, m);

			for (j = 0; j < nr_sets && rc->sets[j] != s; j++)
				;
			if (j == nr_sets)
				rc->sets[nr_sets++] = s;
		}
	}
	for (j = 0; j < nr_sets; j++) {
		u64 s = rc->sets[j];
		u32 pin = 0, flex = 0, avail, b;

		for (g = 0; g < in->nr_groups; g++) {
			s32 st = rc->plan->state[g];

			if (st != ROT_PINNED && st < 0)
				continue;
			for (m = 0; m < rot_size(rc, g); m++) {
				if (rot_mask(rc, g, m) & ~s)
					continue;
				if (st == ROT_PINNED)
					pin++;
				else
					flex++;
			}
		}
		avail = rot_popcount(s) - pin;
		if (!flex || !avail)	/* !avail: such groups were ALWAYS_OFF */
			continue;
		b = (flex + avail - 1) / avail;
		if (b > best)
			best = b;
	}
	return best;
}

/*
 * Greedy clique in the conflict graph (two groups conflict when they cannot
 * share a rotation): its size bounds R from below.  Groups are tried in FFD
 * order, biggest and most constrained first, which are the likely members.
 */
static u32 rot_clique_bound(struct rot_ctx *rc)
{
	u16 clique[ROT_CLIQUE_MAX];
	u32 nr = 0, i, j, lim = rc->nr_flex;

	if (lim > ROT_CLIQUE_MAX)
		lim = ROT_CLIQUE_MAX;
	for (i = 0; i < lim; i++) {
		u32 g = rc->order[i];

		for (j = 0; j < nr; j++)
			if (rot_fits_with_pinned(rc, g, clique[j]))
				break;
		if (j == nr)
			clique[nr++] = g;
	}
	return nr;
}

/*
 * Branch and bound: place rc->order[i..] into at most @target rotations,
 * @nr of which are open.  A new rotation is only ever opened as rotation
 * @nr, which removes the symmetry between empty rotations.  Returns 1 on
 * success (rotations and state[] hold the packing), 0 if none exists, -1
 * when the budget ran out.
 */
static int rot_search(struct rot_ctx *rc, u32 i, u32 nr, u32 target)
{
	u32 g, size, r, room;
	int ret;

	if (i == rc->nr_flex)
		return 1;
	if (!rc->budget)
		return -1;
	rc->budget--;
	room = (target - nr) * (rc->n - rc->nr_pinned_members);
	for (r = 0; r < nr; r++)
		room += rc->n - rc->used[r];
	if (rc->suffix[i] > room)
		return 0;

	g = rc->order[i];
	size = rot_size(rc, g);
	for (r = 0; r < nr; r++) {
		struct rot_slot *snap = rc->snap + (size_t)i * rc->n;

		if (rc->used[r] + size > rc->n)
			continue;
		memcpy(snap, rot_bin(rc, r), rc->n * sizeof(*snap));
		if (!rot_try_add(rc, rot_bin(rc, r), g))
			continue;
		rc->used[r] += size;
		rc->pick[i] = r;
		ret = rot_search(rc, i + 1, nr, target);
		if (ret)
			return ret;
		rc->used[r] -= size;
		memcpy(rot_bin(rc, r), snap, rc->n * sizeof(*snap));
	}
	if (nr < target) {
		rot_open(rc, nr);
		rot_try_add(rc, rot_bin(rc, nr), g);
		rc->used[nr] += size;
		rc->pick[i] = nr;
		return rot_search(rc, i + 1, nr + 1, target);
	}
	return 0;
}

/*
 * Try every R from the lower bound up to @nr - 1; the first success is
 * minimal.  Returns the rotation count now in the bins (FFD's, rebuilt, if
 * nothing smaller was found) and sets plan->optimal.
 */
static u32 rot_exact(struct rot_ctx *rc, u32 nr)
{
	struct rot_plan *plan = rc->plan;
	u32 target, i;
	int ret = 0;

	rc->suffix[rc->nr_flex] = 0;
	for (i = rc->nr_flex; i-- > 0;)
		rc->suffix[i] = rc->suffix[i + 1] + rot_size(rc, rc->order[i]);
	rc->budget = ROT_EXACT_BUDGET;
	for (target = plan->lower_bound; target < nr; target++) {
		ret = rot_search(rc, 0, 0, target);
		if (ret)
			break;
	}
	if (ret == 1) {
		for (i = 0; i < rc->nr_flex; i++)
			plan->state[rc->order[i]] = rc->pick[i];
		plan->optimal = true;
		return target;
	}
	/* every smaller R refuted (ret == 0), or out of budget (ret == -1) */
	plan->optimal = ret == 0;
	return rot_ffd(rc);
}

static void rot_set_run(struct rot_plan *plan, u32 r, u32 g)
{
	plan->runs[r * plan->words + g / 64] |= 1ULL << (g % 64);
	plan->nr_runs[g]++;
}

/*
 * runs[] and nr_runs[] of the first @nr rotations from their matchings; a
 * rotating group whose state is still ROT_UNSET gets the first rotation
 * that runs it as its primary id.
 */
static void rot_derive_runs(struct rot_ctx *rc, u32 nr)
{
	struct rot_plan *plan = rc->plan;
	u32 r, c, g;

	memset(plan->runs, 0, (size_t)nr * plan->words * sizeof(u64));
	memset(plan->nr_runs, 0, plan->nr_groups * sizeof(u32));
	for (r = 0; r < nr; r++) {
		const struct rot_slot *s = rot_bin(rc, r);

		for (c = 0; c < rc->n; c++) {
			g = s[c].group;
			if (g == ROT_SLOT_FREE || s[c].member)
				continue;
			rot_set_run(plan, r, g);
			if (plan->state[g] == ROT_UNSET)
				plan->state[g] = r;
		}
	}
}

/*
 * Rotation r takes groups of other rotations while they fit: fewest
 * rotations so far first (spreads the spare counters), then creation
 * order.  Groups are only added, so every share stays >= 1/R.
 */
static void rot_backfill(struct rot_ctx *rc)
{
	struct rot_plan *plan = rc->plan;
	u32 r, k, g, min_runs = ~0U, max_runs = 0;

	for (g = 0; g < plan->nr_groups; g++) {
		if (plan->state[g] < 0)
			continue;
		if (plan->nr_runs[g] < min_runs)
			min_runs = plan->nr_runs[g];
		if (plan->nr_runs[g] > max_runs)
			max_runs = plan->nr_runs[g];
	}
	for (r = 0; r < plan->nr_rotations; r++) {
		struct rot_slot *bin = rot_bin(rc, r);

		for (k = min_runs; k <= max_runs; k++) {
			for (g = 0; g < plan->nr_groups; g++) {
				u32 size = rot_size(rc, g);

				if (rc->n - rc->used[r] < rc->min_size)
					goto next;
				if (plan->state[g] < 0 || plan->nr_runs[g] != k ||
				    rot_plan_runs(plan, r, g) ||
				    rc->used[r] + size > rc->n ||
				    !rot_try_add(rc, bin, g))
					continue;
				rc->used[r] += size;
				rot_set_run(plan, r, g);
				if (plan->nr_runs[g] > max_runs)
					max_runs = plan->nr_runs[g];
			}
		}
next:
		;
	}
}

/*
 * One wrap-around rotation into @s: rotating groups from sequence position
 * @p on, while they fit (stopping at the first that does not, so that every
 * group is skipped by no rotation).  Returns how many it took.
 */
static u32 rot_wrap_one(struct rot_ctx *rc, struct rot_slot *s, u32 p,
			u32 *used)
{
	u32 t, g, u = rc->nr_pinned_members;

	memcpy(s, rc->base, rc->n * sizeof(*s));
	for (t = 0; t < rc->nr_flex; t++) {
		g = rc->seq[(p + t) % rc->nr_flex];
		if (u + rot_size(rc, g) > rc->n || !rot_try_add(rc, s, g))
			break;
		u += rot_size(rc, g);
	}
	*used = u;
	return t;
}

/*
 * Build the wrap-around schedule and adopt it if it beats the current plan
 * (packing + backfill in rotations 0..R-1) on minimum share, or ties and
 * wins on utilization.  Returns true if adopted.
 */
static bool rot_wrap(struct rot_ctx *rc)
{
	struct rot_slot *tmp = rc->tmp;
	struct rot_plan *plan = rc->plan;
	u32 k = rc->nr_flex, nr = plan->nr_rotations;
	u32 g, r, i, p, j, t, len, wraps, used, min_runs = ~0U;
	u64 sum_size = 0, sum_runs = 0;

	/* sequence: by primary rotation (counting sort), then creation order */
	memset(rc->cum, 0, (nr + 1) * sizeof(u32));
	for (g = 0; g < plan->nr_groups; g++) {
		if (plan->state[g] < 0)
			continue;
		rc->cum[plan->state[g] + 1]++;
		sum_size += rot_size(rc, g);
		sum_runs += (u64)rot_size(rc, g) * plan->nr_runs[g];
		if (plan->nr_runs[g] < min_runs)
			min_runs = plan->nr_runs[g];
	}
	for (r = 0; r < nr; r++)
		rc->cum[r + 1] += rc->cum[r];
	for (g = 0; g < plan->nr_groups; g++)
		if (plan->state[g] >= 0)
			rc->seq[rc->cum[plan->state[g]]++] = g;

	/* cut until a start position repeats: at most k rotations */
	for (i = 0; i < k; i++)
		rc->seen_at[i] = ROT_UNSEEN;
	rc->cum[0] = 0;
	for (p = 0, j = 0; rc->seen_at[p] == ROT_UNSEEN; j++) {
		rc->seen_at[p] = j;
		t = rot_wrap_one(rc, tmp, p, &used);
		rc->cum[j + 1] = rc->cum[j] + t;
		p = (p + t) % k;
	}
	len = j - rc->seen_at[p];
	wraps = (rc->cum[j] - rc->cum[rc->seen_at[p]]) / k;

	/* wraps/len vs min_runs/nr, then wraps*sum_size/len vs sum_runs/nr */
	if ((u64)wraps * nr < (u64)min_runs * len)
		return false;
	if ((u64)wraps * nr == (u64)min_runs * len &&
	    wraps * sum_size * nr <= sum_runs * len)
		return false;

	for (g = 0; g < plan->nr_groups; g++)
		if (plan->state[g] >= 0)
			plan->state[g] = ROT_UNSET;
	for (r = 0; r < len; r++) {
		t = rot_wrap_one(rc, rot_bin(rc, r), p, &rc->used[r]);
		p = (p + t) % k;
	}
	plan->nr_rotations = len;
	plan->wrapped = true;
	rot_derive_runs(rc, len);
	return true;
}

/* ---- water-filling: the max-min fair repair ------------------------- */

static void rot_sort_u32(u32 *v, u32 n)
{
	u32 i, j, t, k;

	/* heapsort, ascending */
	for (k = n / 2; k-- > 0;) {
		for (i = k; (j = 2 * i + 1) < n; i = j) {
			if (j + 1 < n && v[j + 1] > v[j])
				j++;
			if (v[i] >= v[j])
				break;
			t = v[i]; v[i] = v[j]; v[j] = t;
		}
	}
	for (k = n; k-- > 1;) {
		t = v[0]; v[0] = v[k]; v[k] = t;
		for (i = 0; (j = 2 * i + 1) < k; i = j) {
			if (j + 1 < k && v[j + 1] > v[j])
				j++;
			if (v[i] >= v[j])
				break;
			t = v[i]; v[i] = v[j]; v[j] = t;
		}
	}
}

/*
 * Is sorted run vector @a over @ra rotations lexicographically larger than
 * @b over @rb (as shares a_i/ra vs b_i/rb)?
 */
static bool rot_lex_better(const u32 *a, u32 ra, const u32 *b, u32 rb, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u64 x = (u64)a[i] * rb, y = (u64)b[i] * ra;

		if (x != y)
			return x > y;
	}
	return false;
}

static bool rot_bin_has(const struct rot_ctx *rc, const struct rot_slot *s,
			u32 g)
{
	u32 c;

	for (c = 0; c < rc->n; c++)
		if (s[c].group == g)
			return true;
	return false;
}

/* Bin of water-fill bin @b. */
static struct rot_slot *rot_wf_bin(const struct rot_ctx *rc, u32 b)
{
	return rc->wf + (size_t)b * rc->n;
}

/*
 * Put @g into one of the first @nr bins that does not run it yet: the
 * first that can match it (@spread false), or the emptiest (@spread true,
 * ties by index).  Returns false if none can.
 */
static bool rot_wf_place(struct rot_ctx *rc, u32 nr, u32 g, bool spread)
{
	u32 size = rot_size(rc, g), b, room;

	for (room = spread ? rc->n : size; room >= size; room--) {
		for (b = 0; b < nr; b++) {
			u32 free = rc->n - rc->wf_used[b];

			if (rc->fill_budget)
				rc->fill_budget--;
			if (free < size || (spread && free != room) ||
			    rot_bin_has(rc, rot_wf_bin(rc, b), g) ||
			    !rot_try_add(rc, rot_wf_bin(rc, b), g))
				continue;
			rc->wf_used[b] += size;
			rc->wf_cnt[g]++;
			return true;
		}
		if (!spread)
			break;
	}
	return false;
}

/*
 * Water-fill @nr bins: level by level, every group still growing (in FFD
 * order) takes one more bin that does not run it yet and can match it;
 * a group no bin can take stops growing.  The smallest run count rises
 * one level at a time, so the result is max-min fair among the schedules
 * this greedy can pack; every bin ends maximal.  First fit packs like FFD;
 * spreading (emptiest bin first) keeps big groups apart, which is what
 * leaves room for the small ones next to each.
 */
static void rot_water_fill(struct rot_ctx *rc, u32 nr, bool spread)
{
	u32 i, b;
	bool grew = true;

	for (b = 0; b < nr; b++) {
		memcpy(rot_wf_bin(rc, b), rc->base, rc->n * sizeof(*rc->base));
		rc->wf_used[b] = rc->nr_pinned_members;
	}
	for (i = 0; i < rc->nr_flex; i++) {
		rc->wf_alive[i] = 1;
		rc->wf_cnt[rc->order[i]] = 0;
	}
	while (grew) {
		grew = false;
		for (i = 0; i < rc->nr_flex; i++) {
			if (!rc->wf_alive[i])
				continue;
			if (rot_wf_place(rc, nr, rc->order[i], spread))
				grew = true;
			else
				rc->wf_alive[i] = 0;
		}
	}
}

/*
 * Try water-filling over a range of schedule lengths and adopt the first
 * one whose share vector is lexicographically larger than the plan's.
 * Returns true if the plan changed.
 */
static bool rot_fill(struct rot_ctx *rc)
{
	struct rot_plan *plan = rc->plan;
	u32 i, k, nr, best_nr = plan->nr_rotations, lo, hi, g;
	bool better = false;

	for (i = 0; i < rc->nr_flex; i++)
		rc->best[i] = plan->nr_runs[rc->order[i]];
	rot_sort_u32(rc->best, rc->nr_flex);
	lo = plan->min_rotations;
	hi = lo * ROT_FILL_SPAN + ROT_FILL_SPAN;
	if (hi > rc->rcap)
		hi = rc->rcap;
	rc->fill_budget = ROT_FILL_BUDGET;
	for (k = 0; k < 2 * (hi - lo + 1) && rc->fill_budget; k++) {
		nr = lo + k / 2;
		rot_water_fill(rc, nr, k & 1);
		for (i = 0; i < rc->nr_flex; i++)
			rc->sorted[i] = rc->wf_cnt[rc->order[i]];
		rot_sort_u32(rc->sorted, rc->nr_flex);
		if (!rot_lex_better(rc->sorted, nr, rc->best, best_nr, rc->nr_flex))
			continue;
		memcpy(rc->best, rc->sorted, rc->nr_flex * sizeof(u32));
		best_nr = nr;
		memcpy(plan->slots, rc->wf, (size_t)nr * rc->n * sizeof(*rc->wf));
		memcpy(rc->used, rc->wf_used, nr * sizeof(u32));
		better = true;
	}
	if (!better)
		return false;
	for (g = 0; g < plan->nr_groups; g++)
		if (plan->state[g] >= 0)
			plan->state[g] = ROT_UNSET;
	plan->nr_rotations = best_nr;
	plan->wrapped = false;
	plan->filled = true;
	rot_derive_runs(rc, best_nr);
	return true;
}

/*
 * Re-match rotation r so that groups also running in rotation r-1 keep
 * their counters where the constraints allow: the tick then leaves them
 * programmed.  Start from r-1's counters for those members, then augment
 * the others.  Augmenting paths always exist because the set is feasible
 * (Kuhn: from any matching, a member with no augmenting path now has none
 * later, so a maximum matching, here a complete one, is always reached).
 */
static void rot_stabilize(struct rot_ctx *rc)
{
	struct rot_plan *plan = rc->plan;
	const struct rot_slot *prev;
	struct rot_slot *cur;
	u32 r, c, g, m;

	for (r = 1; r < plan->nr_rotations; r++) {
		prev = rot_bin(rc, r - 1);
		cur = rot_bin(rc, r);
		rot_clear_slots(cur, rc->n);
		for (c = 0; c < rc->n; c++) {
			g = prev[c].group;
			if (g != ROT_SLOT_FREE && rot_plan_runs(plan, r, g))
				cur[c] = prev[c];
		}
		for (g = 0; g < plan->nr_groups; g++) {
			if (!rot_plan_runs(plan, r, g) || rot_plan_runs(plan, r - 1, g))
				continue;
			for (m = 0; m < rot_size(rc, g); m++)
				rot_augment(rc, cur, g, m);
		}
	}
}

static int rot_check(const struct rot_input *in)
{
	u64 full;
	u32 g, m;

	if (!in || in->nr_counters < 1 || in->nr_counters > ROT_MAX_COUNTERS ||
	    in->nr_groups > ROT_MAX_GROUPS || (in->nr_groups && !in->groups))
		return -EINVAL;
	full = in->nr_counters == 64 ? ~0ULL : (1ULL << in->nr_counters) - 1;
	for (g = 0; g < in->nr_groups; g++) {
		const struct rot_group *grp = &in->groups[g];

		if (grp->flags & ~ROT_F_ALL)
			return -EINVAL;
		if ((grp->flags & ROT_F_SOFTWARE) || !grp->nr_members)
			continue;
		if (!grp->masks)
			return -EINVAL;
		for (m = 0; m < grp->nr_members; m++)
			if (!(grp->masks[m] & full))
				return -EINVAL;
	}
	return 0;
}

/**
 * rot_workspace_size() - bytes rot_plan() needs for @nr_groups groups
 * @nr_groups:   groups the workspace must hold (0..ROT_MAX_GROUPS)
 * @nr_counters: counters of the PMU (1..ROT_MAX_COUNTERS)
 *
 * The plan's arrays live in the workspace, so it must outlive the plan.
 * Worst case is R == nr_groups, hence O(nr_groups^2 / 64 + nr_groups *
 * nr_counters) bytes.
 *
 * Return: size in bytes, 0 if the arguments are out of range.
 */
size_t rot_workspace_size(u32 nr_groups, u32 nr_counters)
{
	size_t g = nr_groups ? nr_groups : 1, n = nr_counters;
	size_t words = (g + 63) / 64, rc = rot_rcap(g);

	if (nr_counters < 1 || nr_counters > ROT_MAX_COUNTERS ||
	    nr_groups > ROT_MAX_GROUPS)
		return 0;
	return rot_align(g * sizeof(s32)) +			/* state */
	       rot_align(g * sizeof(u32)) +			/* nr_runs */
	       rot_align(rc * words * sizeof(u64)) +		/* runs */
	       rot_align(rc * n * sizeof(struct rot_slot)) +	/* slots */
	       rot_align(g * sizeof(u16)) +			/* order */
	       rot_align(g * sizeof(u16)) +			/* seq */
	       rot_align(g * sizeof(u32)) +			/* seen_at */
	       rot_align((g + 1) * sizeof(u32)) +		/* cum */
	       rot_align(g * sizeof(u32)) +			/* key */
	       rot_align(rc * sizeof(u32)) +			/* used */
	       3 * rot_align(n * sizeof(struct rot_slot)) +	/* base save tmp */
	       rot_align(ROT_EXACT_MAX_GROUPS * n * sizeof(struct rot_slot)) +
	       rot_align(ROT_HALL_SETS * sizeof(u64)) +
	       rot_align(rc * n * sizeof(struct rot_slot)) +	/* wf */
	       rot_align(rc * sizeof(u32)) +			/* wf_used */
	       rot_align(g * sizeof(u32)) +			/* wf_cnt */
	       rot_align(g) +					/* wf_alive */
	       2 * rot_align(g * sizeof(u32));			/* sorted best */
}

static void *rot_take(char **p, size_t bytes)
{
	void *ret = *p;

	*p += rot_align(bytes);
	return ret;
}

/**
 * rot_plan() - compute the rotation plan of one (CPU ctx, task ctx) pair
 * @in:      counters and groups; the masks are only read during the call
 * @ws:      workspace of at least rot_workspace_size(in->nr_groups,
 *           in->nr_counters) bytes, 8-byte aligned; holds the plan's arrays
 * @ws_size: size of @ws
 * @plan:    filled on success; its arrays point into @ws
 *
 * Deterministic: the same input gives a byte-identical plan.  Time is
 * bounded by the input size (matchings are O(members * counters^2), FFD is
 * O(groups * R) of them, the exact search at most ROT_EXACT_BUDGET nodes).
 *
 * Return: 0, or -EINVAL for a malformed input (counters not in 1..64, more
 * than ROT_MAX_GROUPS groups, unknown flags, a hardware member with no
 * usable counter) or a workspace too small for the input.
 */
int rot_plan(const struct rot_input *in, void *ws, size_t ws_size,
	     struct rot_plan *plan)
{
	struct rot_ctx rc = { .in = in, .plan = plan };
	size_t g1;
	char *p = ws;
	u32 g, nr;
	int ret;

	ret = rot_check(in);
	if (ret)
		return ret;
	if (!ws || !plan ||
	    ws_size < rot_workspace_size(in->nr_groups, in->nr_counters))
		return -EINVAL;

	memset(plan, 0, sizeof(*plan));
	g1 = in->nr_groups ? in->nr_groups : 1;
	plan->nr_groups = in->nr_groups;
	plan->nr_counters = in->nr_counters;
	plan->words = (g1 + 63) / 64;
	plan->state = rot_take(&p, g1 * sizeof(s32));
	plan->nr_runs = rot_take(&p, g1 * sizeof(u32));
	rc.rcap = rot_rcap(g1);
	plan->runs = rot_take(&p, rc.rcap * plan->words * sizeof(u64));
	plan->slots = rot_take(&p, rc.rcap * in->nr_counters *
			       sizeof(struct rot_slot));
	rc.order = rot_take(&p, g1 * sizeof(u16));
	rc.seq = rot_take(&p, g1 * sizeof(u16));
	rc.seen_at = rot_take(&p, g1 * sizeof(u32));
	rc.cum = rot_take(&p, (g1 + 1) * sizeof(u32));
	rc.key = rot_take(&p, g1 * sizeof(u32));
	rc.used = rot_take(&p, rc.rcap * sizeof(u32));
	rc.base = rot_take(&p, in->nr_counters * sizeof(struct rot_slot));
	rc.save = rot_take(&p, in->nr_counters * sizeof(struct rot_slot));
	rc.tmp = rot_take(&p, in->nr_counters * sizeof(struct rot_slot));
	rc.snap = rot_take(&p, ROT_EXACT_MAX_GROUPS * in->nr_counters *
			   sizeof(struct rot_slot));
	rc.sets = rot_take(&p, ROT_HALL_SETS * sizeof(u64));
	rc.wf = rot_take(&p, rc.rcap * in->nr_counters * sizeof(struct rot_slot));
	rc.wf_used = rot_take(&p, rc.rcap * sizeof(u32));
	rc.wf_cnt = rot_take(&p, g1 * sizeof(u32));
	rc.wf_alive = rot_take(&p, g1);
	rc.sorted = rot_take(&p, g1 * sizeof(u32));
	rc.best = rot_take(&p, g1 * sizeof(u32));
	rc.n = in->nr_counters;
	rc.full = rc.n == 64 ? ~0ULL : (1ULL << rc.n) - 1;
	rc.min_size = ROT_MAX_COUNTERS + 1;
	memset(plan->nr_runs, 0, g1 * sizeof(u32));
	rot_clear_slots(rc.base, rc.n);

	/* 1. classify; pinned first-come first-served, as perf does */
	for (g = 0; g < in->nr_groups; g++) {
		const struct rot_group *grp = &in->groups[g];

		if ((grp->flags & ROT_F_SOFTWARE) || !grp->nr_members) {
			plan->state[g] = ROT_ALWAYS_ON;
			plan->nr_always_on++;
		} else if (!(grp->flags & ROT_F_PINNED)) {
			plan->state[g] = 0;	/* decided below */
		} else if (rot_try_add(&rc, rc.base, g)) {
			plan->state[g] = ROT_PINNED;
			plan->nr_pinned++;
			rc.nr_pinned_members += grp->nr_members;
		} else {
			plan->state[g] = ROT_ERROR;
			plan->nr_error++;
		}
	}
	for (g = 0; g < in->nr_groups; g++) {
		u64 any = 0;
		u32 m, size = rot_size(&rc, g);

		if (plan->state[g] != 0)
			continue;
		if (size > rc.n - rc.nr_pinned_members ||
		    !rot_fits_with_pinned(&rc, g, ROT_SLOT_FREE)) {
			plan->state[g] = ROT_ALWAYS_OFF;
			plan->nr_always_off++;
			continue;
		}
		for (m = 0; m < size; m++)
			any |= rot_mask(&rc, g, m);
		rc.key[g] = (ROT_MAX_COUNTERS - size) << 8 | rot_popcount(any);
		rc.order[rc.nr_flex++] = g;
		if (size < rc.min_size)
			rc.min_size = size;
	}

	/* 2. and 3. pack, bound, maybe search */
	if (!rc.nr_flex) {
		nr = plan->nr_pinned ? 1 : 0;
		if (nr)
			rot_open(&rc, 0);
		plan->lower_bound = nr;
		plan->optimal = true;
	} else {
		u32 b;

		rot_sort(&rc, rc.order, rc.nr_flex);
		nr = rot_ffd(&rc);
		plan->lower_bound = rot_hall_bound(&rc);
		if (plan->lower_bound < 1)
			plan->lower_bound = 1;
		if (nr > plan->lower_bound) {
			b = rot_clique_bound(&rc);
			if (b > plan->lower_bound)
				plan->lower_bound = b;
		}
		plan->optimal = nr == plan->lower_bound;
		if (!plan->optimal && rc.nr_flex <= ROT_EXACT_MAX_GROUPS)
			nr = rot_exact(&rc, nr);
	}
	plan->nr_rotations = nr;
	plan->min_rotations = nr;

	/* 4. backfill, 5. wrap-around (backfilled too: it only adds) */
	rot_derive_runs(&rc, nr);
	if (nr > 1) {
		rot_backfill(&rc);
		if (rot_wrap(&rc))
			rot_backfill(&rc);
		rot_fill(&rc);
		rot_stabilize(&rc);
	}
	return 0;
}
