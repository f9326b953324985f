// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - histograms (see include/pevt/hist.h).
 *
 * Output order is perf report's: children (with --children), then self
 * period, descending; then each sort key with its se_sort (comm, dso and
 * sym by name ascending, resolved symbols before unresolved ones, pid and
 * cpu ascending); remaining ties keep the order of perf's collapsed tree
 * (symbols by address, unresolved by ip).  The order is total, so the
 * result does not depend on how samples were split over threads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pevt/hist.h>
#include "internal/bigalloc.h"

/*
 * Entries are stored densely in chunks, found through a table of
 * (hash tag, index): a probe reads 8 bytes, the table grows without
 * moving the entries, and a table at load <= 1/2 costs 16 bytes per
 * entry instead of 224.
 */
#define HIST_CHUNK	16384

static struct pevt_hist_entry *entry(const struct pevt_hists *h, size_t i)
{
	return &h->v[i / HIST_CHUNK][i % HIST_CHUNK];
}

int pevt_hists__init(struct pevt_hists *h, const int *keys, int nr_keys)
{
	memset(h, 0, sizeof(*h));
	if (nr_keys > PEVT_SORT_MAX)
		return -EINVAL;
	memcpy(h->keys, keys, nr_keys * sizeof(*keys));
	h->nr_keys = nr_keys;
	return 0;
}

void pevt_hists__exit(struct pevt_hists *h)
{
	size_t i;

	pevt_cc_arena__free(&h->arena);
	for (i = 0; i < h->nr; i += HIST_CHUNK)
		pevt_big_free(h->v[i / HIST_CHUNK], HIST_CHUNK * sizeof(**h->v));
	free(h->v);
	pevt_big_free(h->used, h->cap * sizeof(*h->used));
	memset(h, 0, sizeof(*h));
}

void pevt_hists__key(const struct pevt_hists *h, struct pevt_hist_key *k)
{
	bool has[PEVT_SORT_MAX] = { 0 };
	int i;

	for (i = 0; i < h->nr_keys; i++)
		has[h->keys[i]] = true;
	if (!has[PEVT_SORT_COMM])
		k->comm = NULL;
	if (!has[PEVT_SORT_PID])
		k->tid = 0;
	if (!has[PEVT_SORT_CPU])
		k->cpu = 0;
	if (!has[PEVT_SORT_SYM]) {
		k->sym = NULL;
		k->ip = 0;
	} else if (k->sym) {
		k->ip = 0;
	}
	/* sort__sym_cmp() compares the dso too when dso is not a key */
	if (!has[PEVT_SORT_DSO] && !has[PEVT_SORT_SYM])
		k->dso = NULL;
}

bool pevt_hist_key__equal(const struct pevt_hist_key *a, const struct pevt_hist_key *b)
{
	return a->comm == b->comm && a->tid == b->tid && a->cpu == b->cpu &&
	       a->dso == b->dso && a->sym == b->sym && a->ip == b->ip;
}

static uint64_t key_hash(const struct pevt_hist_key *k)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = (h ^ (uintptr_t)k->comm) * 0x100000001b3ull;
	h = (h ^ (uint32_t)k->tid) * 0x100000001b3ull;
	h = (h ^ (uint32_t)k->cpu) * 0x100000001b3ull;
	h = (h ^ (uintptr_t)k->dso) * 0x100000001b3ull;
	h = (h ^ (uintptr_t)k->sym) * 0x100000001b3ull;
	h = (h ^ k->ip) * 0x100000001b3ull;
	/* fmix64: pointers have poor low bits, the table masks them */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

static int grow(struct pevt_hists *h)
{
	size_t ncap = h->cap ? h->cap * 2 : 1024, i;
	uint64_t *nu = pevt_big_alloc(ncap * sizeof(*nu));

	if (!nu)
		return -ENOMEM;
	for (i = 0; i < h->cap; i++) {
		size_t j;

		if (!h->used[i])
			continue;
		j = key_hash(&entry(h, (uint32_t)h->used[i] - 1)->k) & (ncap - 1);
		while (nu[j])
			j = (j + 1) & (ncap - 1);
		nu[j] = h->used[i];
	}
	pevt_big_free(h->used, h->cap * sizeof(*h->used));
	h->used = nu;
	h->cap = ncap;
	return 0;
}

struct pevt_hist_entry *pevt_hists__add(struct pevt_hists *h, const struct pevt_hist_key *k)
{
	struct pevt_hist_entry *e;
	uint64_t hash, tag;
	size_t j;

	if ((h->nr + 1) * 2 > h->cap && grow(h))
		return NULL;
	hash = key_hash(k);
	tag = hash >> 32;
	for (j = hash & (h->cap - 1); h->used[j]; j = (j + 1) & (h->cap - 1)) {
		if (h->used[j] >> 32 != tag)
			continue;
		e = entry(h, (uint32_t)h->used[j] - 1);
		if (pevt_hist_key__equal(&e->k, k))
			return e;
	}
	if (h->nr % HIST_CHUNK == 0) {
		struct pevt_hist_entry **nv = realloc(h->v, (h->nr / HIST_CHUNK + 1) * sizeof(*nv));

		if (!nv)
			return NULL;
		h->v = nv;
		h->v[h->nr / HIST_CHUNK] = pevt_big_alloc(HIST_CHUNK * sizeof(**h->v));
		if (!h->v[h->nr / HIST_CHUNK])
			return NULL;
	}
	e = entry(h, h->nr);
	memset(e, 0, sizeof(*e));
	e->k = *k;
	h->used[j] = tag << 32 | (h->nr + 1);
	h->nr++;
	return e;
}

int pevt_hists__merge(struct pevt_hists *dst, struct pevt_hists *src)
{
	size_t i;

	if (!dst->nr && !dst->cap && !dst->arena.chunks && !dst->total_period &&
	    !dst->nr_samples && dst->nr_keys == src->nr_keys &&
	    !memcmp(dst->keys, src->keys, sizeof(dst->keys))) {
		/* into an empty one: the same as a copy, without one */
		int depth_sort = dst->depth_sort;

		*dst = *src;
		dst->depth_sort = depth_sort;
		pevt_hists__init(src, dst->keys, dst->nr_keys);
		return 0;
	}

	for (i = 0; i < src->nr; i++) {
		const struct pevt_hist_entry *s = entry(src, i);
		struct pevt_hist_entry *d;
		bool fresh;

		fresh = false;
		d = pevt_hists__add(dst, &s->k);
		if (!d)
			return -ENOMEM;
		fresh = !d->level;
		if (fresh || s->seq < d->seq) {
			d->level = s->level;
			d->thread = s->thread;
			d->ip = s->ip;
			d->map_delta = s->map_delta;
			d->seq = s->seq;
		}
		if (s->cc && !d->cc)
			d->cc = s->cc;
		else if (s->cc)
			pevt_cc__merge(&dst->arena, d->cc, s->cc);
		if (s->max_depth > d->max_depth)
			d->max_depth = s->max_depth;
		d->period += s->period;
		d->period_acc += s->period_acc;
		d->nr_samples += s->nr_samples;
	}
	dst->total_period += src->total_period;
	dst->nr_samples += src->nr_samples;
	/* the merged graphs use src's nodes */
	pevt_cc_arena__splice(&dst->arena, &src->arena);
	return 0;
}

int pevt_hists__append_chain(struct pevt_hists *h, struct pevt_hist_entry *e,
			     const struct pevt_cc_entry *v, size_t n, uint64_t period)
{
	return pevt_hists__append_chain_n(h, e, v, n, period, 1);
}

int pevt_hists__append_chain_n(struct pevt_hists *h, struct pevt_hist_entry *e,
			       const struct pevt_cc_entry *v, size_t n, uint64_t period,
			       uint32_t count)
{
	if (!n)
		return 0;
	if (n > e->max_depth)
		e->max_depth = n;
	if (!e->cc) {
		e->cc = pevt_cc__new_root(&h->arena);
		if (!e->cc)
			return -ENOMEM;
	}
	return pevt_cc__append_n(&h->arena, e->cc, v, n, period, count);
}

static const char *dso_name(const struct pevt_hist_entry *e)
{
	return e->k.dso ? e->k.dso->short_name : NULL;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int sdiff(uint64_t a, uint64_t b)
{
	int64_t d = (int64_t)(a - b);

	return (d > 0) - (d < 0);
}

static int cmp_null(const void *a, const void *b)
{
	/* non-NULL first */
	return !a - !b;
}

static int cmp_key_sort(const struct pevt_hist_entry *a, const struct pevt_hist_entry *b, int key)
{
	int r;

	switch (key) {
	case PEVT_SORT_COMM:
		return strcmp(a->k.comm, b->k.comm);
	case PEVT_SORT_PID:
		return (a->k.tid > b->k.tid) - (a->k.tid < b->k.tid);
	case PEVT_SORT_CPU:
		return (a->k.cpu > b->k.cpu) - (a->k.cpu < b->k.cpu);
	case PEVT_SORT_DSO:
		if (!dso_name(a) || !dso_name(b))
			return cmp_null(dso_name(a), dso_name(b));
		return strcmp(dso_name(a), dso_name(b));
	case PEVT_SORT_SYM:
		if (!a->k.sym || !b->k.sym)
			return cmp_null(a->k.sym, b->k.sym);
		r = strcmp(a->k.sym->name, b->k.sym->name);
		return r;
	}
	return 0;
}

/* perf's collapsed-tree order (se_cmp). */
static int cmp_key_collapse(const struct pevt_hist_entry *a, const struct pevt_hist_entry *b,
			    int key, bool has_dso)
{
	int r;

	switch (key) {
	case PEVT_SORT_SYM:
		/* _sort__addr_cmp(): a signed difference, as perf has it */
		if (!a->k.sym && !b->k.sym)
			return sdiff(a->k.ip, b->k.ip);
		if (!has_dso) {
			r = cmp_key_sort(a, b, PEVT_SORT_DSO);
			if (r)
				return r;
		}
		if (!a->k.sym || !b->k.sym)
			return cmp_null(a->k.sym, b->k.sym);
		if (a->k.sym->start != b->k.sym->start)
			return sdiff(a->k.sym->start, b->k.sym->start);
		return sdiff(a->k.sym->end, b->k.sym->end);
	default:
		return cmp_key_sort(a, b, key);
	}
}

static bool sort_children;
static const struct pevt_hists *sort_h;

/*
 * hist_entry__sort(): the output columns' sort functions (children, self,
 * then each key's se_sort); < 0 when @a comes first.  With call graphs it
 * is not transitive (the depth rule applies within one thread only), so
 * the result depends on perf's rbtree: pevt_hists__sorted() replays it.
 */
static int cmp_output(const struct pevt_hist_entry *a, const struct pevt_hist_entry *b)
{
	int i, r;

	if (sort_children) {
		r = cmp_u64_desc(a->period_acc, b->period_acc);
		if (r)
			return r;
		/* __hpp__sort_acc(): callers above callees */
		if (sort_h->depth_sort && a->thread == b->thread) {
			r = cmp_u64_desc(a->max_depth, b->max_depth) * sort_h->depth_sort;
			if (r)
				return r;
		}
	}
	r = cmp_u64_desc(a->period, b->period);
	if (r)
		return r;
	for (i = 0; i < sort_h->nr_keys; i++) {
		r = cmp_key_sort(a, b, sort_h->keys[i]);
		if (r)
			return r;
	}
	return 0;
}

static int cmp_total(const void *pa, const void *pb);

/* The collapsed tree's order: perf inserts the output entries in it. */
static int cmp_collapsed(const void *pa, const void *pb)
{
	const struct pevt_hist_entry *a = *(const struct pevt_hist_entry *const *)pa;
	const struct pevt_hist_entry *b = *(const struct pevt_hist_entry *const *)pb;
	bool has_dso = false;
	int i, r;

	for (i = 0; i < sort_h->nr_keys; i++)
		has_dso |= sort_h->keys[i] == PEVT_SORT_DSO;
	for (i = 0; i < sort_h->nr_keys; i++) {
		r = cmp_key_collapse(a, b, sort_h->keys[i], has_dso);
		if (r)
			return r;
	}
	/* Entries perf would have merged (same names): any fixed order. */
	if (a->k.dso != b->k.dso && a->k.dso && b->k.dso) {
		r = strcmp(a->k.dso->long_name, b->k.dso->long_name);
		if (r)
			return r;
	}
	if (a->k.ip != b->k.ip)
		return (a->k.ip > b->k.ip) - (a->k.ip < b->k.ip);
	return cmp_total(pa, pb);
}

/* ---- perf's output rbtree, replayed (lib/rbtree.c insertion) ------------- */

struct rbn {
	int left, right, parent;	/* indexes, -1: none */
	bool red;
};

static void rb_rotate(struct rbn *t, int *root, int x, bool left)
{
	int y = left ? t[x].right : t[x].left;
	int c = left ? t[y].left : t[y].right;

	if (left)
		t[x].right = c;
	else
		t[x].left = c;
	if (c >= 0)
		t[c].parent = x;
	t[y].parent = t[x].parent;
	if (t[x].parent < 0)
		*root = y;
	else if (t[t[x].parent].left == x)
		t[t[x].parent].left = y;
	else
		t[t[x].parent].right = y;
	if (left)
		t[y].left = x;
	else
		t[y].right = x;
	t[x].parent = y;
}

static void rb_fixup(struct rbn *t, int *root, int z)
{
	while (t[z].parent >= 0 && t[t[z].parent].red) {
		int p = t[z].parent, g = t[p].parent;
		bool pleft = t[g].left == p;
		int u = pleft ? t[g].right : t[g].left;

		if (u >= 0 && t[u].red) {
			t[p].red = false;
			t[u].red = false;
			t[g].red = true;
			z = g;
			continue;
		}
		if (z == (pleft ? t[p].right : t[p].left)) {
			z = p;
			rb_rotate(t, root, z, pleft);
			p = t[z].parent;
		}
		t[p].red = false;
		t[g].red = true;
		rb_rotate(t, root, g, !pleft);
	}
	t[*root].red = false;
}

/* In-order (rb_first() / rb_next()). */
static size_t rb_walk(const struct rbn *t, int n, struct pevt_hist_entry **in,
		      struct pevt_hist_entry **out)
{
	size_t k = 0;

	if (n < 0)
		return 0;
	while (t[n].left >= 0)
		n = t[n].left;
	while (n >= 0) {
		out[k++] = in[n];
		if (t[n].right >= 0) {
			n = t[n].right;
			while (t[n].left >= 0)
				n = t[n].left;
		} else {
			while (t[n].parent >= 0 && t[t[n].parent].right == n)
				n = t[n].parent;
			n = t[n].parent;
		}
	}
	return k;
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* A total order on entries from their contents only. */
static int cmp_total(const void *pa, const void *pb)
{
	const struct pevt_hist_entry *a = *(const struct pevt_hist_entry *const *)pa;
	const struct pevt_hist_entry *b = *(const struct pevt_hist_entry *const *)pb;
	int r;

	if ((r = cmp_str(a->k.comm, b->k.comm)) ||
	    (r = cmp_u64((uint32_t)a->k.tid, (uint32_t)b->k.tid)) ||
	    (r = cmp_u64((uint32_t)a->k.cpu, (uint32_t)b->k.cpu)) ||
	    (r = cmp_str(a->k.dso ? a->k.dso->long_name : NULL,
			 b->k.dso ? b->k.dso->long_name : NULL)) ||
	    (r = cmp_u64(a->k.sym ? a->k.sym->start : 0, b->k.sym ? b->k.sym->start : 0)) ||
	    (r = cmp_str(a->k.sym ? a->k.sym->name : NULL, b->k.sym ? b->k.sym->name : NULL)))
		return r;
	return cmp_u64(a->k.ip, b->k.ip);
}

struct pevt_hist_entry **pevt_hists__sorted(struct pevt_hists *h, bool children, size_t *nr)
{
	struct pevt_hist_entry **in = malloc((h->nr + 1) * sizeof(*in));
	struct pevt_hist_entry **out = malloc((h->nr + 1) * sizeof(*out));
	struct rbn *t = malloc((h->nr + 1) * sizeof(*t));
	size_t i, n = 0;
	int root = -1;

	if (!in || !out || !t) {
		free(in);
		free(out);
		free(t);
		return NULL;
	}
	for (i = 0; i < h->nr; i++)
		in[n++] = entry(h, i);
	sort_children = children;
	sort_h = h;
	/*
	 * output_resort() takes the entries in the collapsed tree's order
	 * (made independent of the hash table, so of pointers and of how
	 * samples were split over threads) and inserts each into an rbtree,
	 * left when hist_entry__sort() > 0.  perf's comparisons are not all
	 * transitive: replaying the same insertions gives the same order.
	 */
	qsort(in, n, sizeof(*in), cmp_total);
	qsort(in, n, sizeof(*in), cmp_collapsed);
	for (i = 0; i < n; i++) {
		int p = -1, c = root;
		bool left = false;

		while (c >= 0) {
			p = c;
			left = cmp_output(in[i], in[c]) < 0;
			c = left ? t[c].left : t[c].right;
		}
		t[i] = (struct rbn){ .left = -1, .right = -1, .parent = p, .red = true };
		if (p < 0)
			root = i;
		else if (left)
			t[p].left = i;
		else
			t[p].right = i;
		rb_fixup(t, &root, i);
	}
	n = rb_walk(t, root, in, out);
	free(in);
	free(t);
	*nr = n;
	return out;
}
