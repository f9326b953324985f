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
#include <pthread.h>
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
/*
 * Whole 2 MB: 16384 entries of 120 bytes are a little less, and would come
 * from the heap, page by page (11 us a page fault in a PVM guest).
 */
#define CHUNK_BYTES	pevt_big_size(HIST_CHUNK * sizeof(struct pevt_hist_entry))

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
		pevt_big_free(h->v[i / HIST_CHUNK], CHUNK_BYTES);
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

uint64_t pevt_hists__hash(const struct pevt_hist_key *k)
{
	return key_hash(k);
}

/*
 * Bring in what an add of @hash will read: the table's slot (@entry
 * false), then, from the slot, the entry (@entry true, once the slot is
 * in).  Only hints: adds in between change nothing but speed.
 */
void pevt_hists__prefetch(const struct pevt_hists *h, uint64_t hash, bool entry_too)
{
	uint64_t u;

	if (!h->cap)
		return;
	if (!entry_too) {
		__builtin_prefetch(&h->used[hash & (h->cap - 1)]);
		return;
	}
	u = h->used[hash & (h->cap - 1)];
	if (u && u >> 32 == hash >> 32)
		__builtin_prefetch(entry(h, (uint32_t)u - 1));
}

struct pevt_hist_entry *pevt_hists__add(struct pevt_hists *h, const struct pevt_hist_key *k)
{
	return pevt_hists__add_hashed(h, k, key_hash(k));
}

struct pevt_hist_entry *pevt_hists__add_hashed(struct pevt_hists *h, const struct pevt_hist_key *k,
					       uint64_t hash)
{
	struct pevt_hist_entry *e;
	uint64_t tag = hash >> 32;
	size_t j;

	if ((h->nr + 1) * 2 > h->cap && grow(h))
		return NULL;
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
		h->v[h->nr / HIST_CHUNK] = pevt_big_alloc(CHUNK_BYTES);
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

/* @s's samples into @dst's entry of its key (first seen: the lower seq). */
static int merge_entry(struct pevt_hists *dst, const struct pevt_hist_entry *s)
{
	struct pevt_hist_entry *d = pevt_hists__add(dst, &s->k);

	if (!d)
		return -ENOMEM;
	if (!d->level || s->seq < d->seq) {
		d->level = s->level;
		d->thread = s->thread;
		d->ip = s->ip;
		d->map_delta = s->map_delta;
		d->first_unres = s->first_unres;
		d->filtered = s->filtered;
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
	return 0;
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

	for (i = 0; i < src->nr; i++)
		if (merge_entry(dst, entry(src, i)))
			return -ENOMEM;
	dst->total_period += src->total_period;
	dst->nr_samples += src->nr_samples;
	/* the merged graphs use src's nodes */
	pevt_cc_arena__splice(&dst->arena, &src->arena);
	return 0;
}

int pevt_hists__rename_comms(struct pevt_hists *h,
			     const char *(*fn)(const struct pevt_hist_entry *e, void *ctx),
			     void *ctx)
{
	struct pevt_hists n;
	bool renamed = false;
	size_t i;

	for (i = 0; i < h->nr; i++) {
		struct pevt_hist_entry *e = entry(h, i);
		const char *c = e->k.comm ? fn(e, ctx) : NULL;

		if (c && c != e->k.comm) {
			e->k.comm = c;
			renamed = true;
		}
	}
	if (!renamed)
		return 0;
	/* the table is keyed by the old names: built again, equal entries merged */
	pevt_hists__init(&n, h->keys, h->nr_keys);
	n.depth_sort = h->depth_sort;
	n.sort_threads = h->sort_threads;
	n.sort_exact = h->sort_exact;
	for (i = 0; i < h->nr; i++) {
		if (merge_entry(&n, entry(h, i))) {
			pevt_cc_arena__splice(&n.arena, &h->arena);
			pevt_hists__exit(&n);
			pevt_hists__exit(h);
			return -ENOMEM;
		}
	}
	n.total_period = h->total_period;
	n.nr_samples = h->nr_samples;
	pevt_cc_arena__splice(&n.arena, &h->arena);
	pevt_hists__exit(h);
	*h = n;
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

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int sdiff(uint64_t a, uint64_t b)
{
	int64_t d = (int64_t)(a - b);

	return (d > 0) - (d < 0);
}

static bool sort_children;
static const struct pevt_hists *sort_h;

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
static size_t rb_walk(const struct rbn *t, int n, void *const *in, void **out)
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

struct psort_half {
	void **v;
	size_t n;
	int (*cmp)(const void *, const void *);
};

static void *psort_half(void *arg)
{
	struct psort_half *a = arg;

	qsort(a->v, a->n, sizeof(*a->v), a->cmp);
	return NULL;
}

/*
 * qsort() of @v as glibc's merge sort does it at its top level: each half
 * sorted, then merged taking the left one unless the right one is less.
 * With @two the halves are sorted on two threads.  The split is the same
 * either way, so the result is the same for any thread count, even with
 * a comparison that is not transitive; with one that is, it is a stable
 * sort.
 */
static void psort(void **v, size_t n, int (*cmp)(const void *, const void *), bool two)
{
	struct psort_half a = { v, n / 2, cmp }, b = { v + n / 2, n - n / 2, cmp };
	void **tmp = n >= 2 ? malloc(n * sizeof(*tmp)) : NULL;
	size_t i = 0, j = a.n, k = 0;
	pthread_t th;
	bool threaded;

	if (!tmp) {
		qsort(v, n, sizeof(*v), cmp);
		return;
	}
	threaded = two && n >= 4096 && !pthread_create(&th, NULL, psort_half, &a);
	psort_half(&b);
	if (threaded)
		pthread_join(th, NULL);
	else
		psort_half(&a);
	while (i < a.n && j < n)
		tmp[k++] = cmp(&v[i], &v[j]) <= 0 ? v[i++] : v[j++];
	while (i < a.n)
		tmp[k++] = v[i++];
	memcpy(v, tmp, k * sizeof(*v));
	free(tmp);
}

/*
 * The sort's view of an entry: names replaced by their ranks (equal names,
 * equal ranks; none: after all), so that the sorts compare integers in one
 * array instead of strings behind the entries' pointers.  Each comparison
 * below is its twin above on these fields.
 */
#define NO_RANK	UINT32_MAX
struct dec {
	uint64_t period, period_acc, ip, sym_start, sym_end, max_depth;
	const struct pevt_dso *dso;
	const struct pevt_thread *thread;
	uint32_t comm, dso_long, dso_short, sym_name;
	int32_t tid, cpu;
	bool has_sym;
	struct pevt_hist_entry *e;
};

struct rank_ref {
	const void *p;
	uint32_t i;
};

static const char *(*rank_name)(const void *p);

static int cmp_ref_name(const void *pa, const void *pb)
{
	const struct rank_ref *a = pa, *b = pb;

	return strcmp(rank_name(a->p), rank_name(b->p));
}

/* A table of @cap slots holding @u's pointers, found by their hash. */
static struct rank_ref *rank_table(const struct rank_ref *u, size_t nu, size_t cap)
{
	struct rank_ref *tab = pevt_big_alloc(cap * sizeof(*tab));	/* zeroed */
	size_t i, j;

	for (i = 0; tab && i < nu; i++) {
		uint64_t h = (uintptr_t)u[i].p * 0x9e3779b97f4a7c15ull;

		for (j = (h >> 32) & (cap - 1); tab[j].p; j = (j + 1) & (cap - 1))
			;
		tab[j] = u[i];
	}
	return tab;
}

/* out[i] = the rank of name(p[i]) among the names; NULL: NO_RANK */
static int ranks(const void *const *p, size_t n, const char *(*name)(const void *), uint32_t *out)
{
	/* sized by the distinct pointers (a few comms and DSOs, thousands of symbols) */
	size_t cap = 1024, i, j, nu = 0;
	struct rank_ref *u = malloc((n + 1) * sizeof(*u)), *tab = rank_table(NULL, 0, cap);
	uint32_t *rank = malloc((n + 1) * sizeof(*rank)), r = 0;
	int err = -ENOMEM;

	if (!tab || !u || !rank)
		goto out;
	/* out[i] = a number per distinct pointer, first */
	for (i = 0; i < n; i++) {
		uint64_t h = (uintptr_t)p[i] * 0x9e3779b97f4a7c15ull;

		if (!p[i]) {
			out[i] = NO_RANK;
			continue;
		}
		for (j = (h >> 32) & (cap - 1); tab[j].p && tab[j].p != p[i]; j = (j + 1) & (cap - 1))
			;
		if (tab[j].p) {
			out[i] = tab[j].i;
			continue;
		}
		tab[j] = (struct rank_ref){ p[i], nu };
		u[nu] = tab[j];
		out[i] = nu++;
		if (nu * 2 > cap) {
			pevt_big_free(tab, cap * sizeof(*tab));
			cap *= 2;
			tab = rank_table(u, nu, cap);
			if (!tab)
				goto out;
		}
	}
	rank_name = name;
	qsort(u, nu, sizeof(*u), cmp_ref_name);
	for (i = 0; i < nu; i++) {
		if (i && strcmp(name(u[i - 1].p), name(u[i].p)))
			r++;
		rank[u[i].i] = r;
	}
	for (i = 0; i < n; i++)
		if (out[i] != NO_RANK)
			out[i] = rank[out[i]];
	err = 0;
out:
	pevt_big_free(tab, cap * sizeof(*tab));
	free(u);
	free(rank);
	return err;
}

static const char *comm_name(const void *p)
{
	return p;
}

static const char *dso_long(const void *p)
{
	return ((const struct pevt_dso *)p)->long_name;
}

static const char *dso_short(const void *p)
{
	return ((const struct pevt_dso *)p)->short_name;
}

static const char *sym_name(const void *p)
{
	return ((const struct pevt_sym *)p)->name;
}

static int cmp_r(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static inline int dec_total(const struct dec *a, const struct dec *b)
{
	int r;

	if ((r = cmp_r(a->comm, b->comm)) ||
	    (r = cmp_r((uint32_t)a->tid, (uint32_t)b->tid)) ||
	    (r = cmp_r((uint32_t)a->cpu, (uint32_t)b->cpu)) ||
	    (r = cmp_r(a->dso_long, b->dso_long)) ||
	    (r = cmp_r(a->sym_start, b->sym_start)) ||
	    (r = cmp_r(a->sym_name, b->sym_name)))
		return r;
	return cmp_r(a->ip, b->ip);
}

static int d_key_sort(const struct dec *a, const struct dec *b, int key)
{
	switch (key) {
	case PEVT_SORT_COMM:
		return cmp_r(a->comm, b->comm);
	case PEVT_SORT_PID:
		return (a->tid > b->tid) - (a->tid < b->tid);
	case PEVT_SORT_CPU:
		return (a->cpu > b->cpu) - (a->cpu < b->cpu);
	case PEVT_SORT_DSO:
		return cmp_r(a->dso_short, b->dso_short);
	case PEVT_SORT_SYM:
		return cmp_r(a->sym_name, b->sym_name);
	}
	return 0;
}

static bool sort_has_dso;

static inline int dec_collapsed(const struct dec *a, const struct dec *b)
{
	int i, r;

	for (i = 0; i < sort_h->nr_keys; i++) {
		if (sort_h->keys[i] != PEVT_SORT_SYM) {
			r = d_key_sort(a, b, sort_h->keys[i]);
		} else if (!a->has_sym && !b->has_sym) {
			r = sdiff(a->ip, b->ip);
		} else if (!sort_has_dso && (r = d_key_sort(a, b, PEVT_SORT_DSO))) {
			;
		} else if (!a->has_sym || !b->has_sym) {
			r = !a->has_sym - !b->has_sym;
		} else if (a->sym_start != b->sym_start) {
			r = sdiff(a->sym_start, b->sym_start);
		} else {
			r = sdiff(a->sym_end, b->sym_end);
		}
		if (r)
			return r;
	}
	if (a->dso != b->dso && a->dso && b->dso) {
		r = cmp_r(a->dso_long, b->dso_long);
		if (r)
			return r;
	}
	if (a->ip != b->ip)
		return cmp_r(a->ip, b->ip);
	return dec_total(a, b);
}

/*
 * hist_entry__sort(): the output columns' sort functions (children, self,
 * then each key's se_sort); < 0 when @a comes first.  With call graphs it
 * is not transitive (the depth rule applies within one thread only), so
 * the result depends on perf's rbtree: pevt_hists__sorted() replays it.
 */
static inline int dec_output(const struct dec *a, const struct dec *b)
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
		r = d_key_sort(a, b, sort_h->keys[i]);
		if (r)
			return r;
	}
	return 0;
}

static int d_total(const void *pa, const void *pb)
{
	return dec_total(*(const struct dec *const *)pa, *(const struct dec *const *)pb);
}

static int d_collapsed(const void *pa, const void *pb)
{
	return dec_collapsed(*(const struct dec *const *)pa, *(const struct dec *const *)pb);
}

static int d_output(const void *pa, const void *pb)
{
	return dec_output(*(const struct dec *const *)pa, *(const struct dec *const *)pb);
}

/*
 * glibc's msort_with_tmp() (its qsort() when the buffer fits, as it does
 * here): halves of n / 2 and n - n / 2 sorted, then merged taking the
 * left one unless the right one is less.  The same algorithm with the
 * comparison inlined gives the same order for any comparison, even one
 * that is not transitive (d_collapsed(), d_output() with the depth rule).
 */
#define DEFINE_MSORT(name, cmp)							\
static void name(struct dec **v, struct dec **tmp, size_t n)			\
{										\
	size_t n1 = n / 2, i = 0, j = n1, k = 0;				\
										\
	if (n <= 1)								\
		return;								\
	name(v, tmp, n1);							\
	name(v + n1, tmp, n - n1);						\
	while (i < n1 && j < n)							\
		tmp[k++] = cmp(v[i], v[j]) <= 0 ? v[i++] : v[j++];		\
	while (i < n1)								\
		tmp[k++] = v[i++];						\
	memcpy(v, tmp, k * sizeof(*v));						\
}
DEFINE_MSORT(msort_total, dec_total)
DEFINE_MSORT(msort_collapsed, dec_collapsed)
DEFINE_MSORT(msort_output, dec_output)
#undef DEFINE_MSORT

enum dec_cmp { DEC_TOTAL, DEC_COLLAPSED, DEC_OUTPUT };

struct dsort_half {
	struct dec **v, **tmp;
	size_t n;
	enum dec_cmp cmp;
};

static void *dsort_half(void *arg)
{
	struct dsort_half *a = arg;

	switch (a->cmp) {
	case DEC_TOTAL:
		msort_total(a->v, a->tmp, a->n);
		break;
	case DEC_COLLAPSED:
		msort_collapsed(a->v, a->tmp, a->n);
		break;
	case DEC_OUTPUT:
		msort_output(a->v, a->tmp, a->n);
		break;
	}
	return NULL;
}

/* psort() of struct dec pointers, the comparisons inlined: the same order. */
static void dsort(struct dec **v, size_t n, enum dec_cmp cmp, bool two)
{
	struct dec **tmp = n >= 2 ? malloc(n * sizeof(*tmp)) : NULL;
	struct dsort_half a = { v, tmp, n / 2, cmp }, b = { v + n / 2, tmp + n / 2, n - n / 2, cmp };
	pthread_t th;
	bool threaded;

	if (!tmp) {
		static int (*const fn[])(const void *, const void *) = {
			d_total, d_collapsed, d_output };

		psort((void **)v, n, fn[cmp], false);	/* qsort() without a buffer */
		return;
	}
	threaded = two && n >= 4096 && !pthread_create(&th, NULL, dsort_half, &a);
	dsort_half(&b);
	if (threaded)
		pthread_join(th, NULL);
	else
		dsort_half(&a);
	/* the top level's merge */
	{
		size_t n1 = n / 2, i = 0, j = n1, k = 0;

		switch (cmp) {
		case DEC_TOTAL:
			while (i < n1 && j < n)
				tmp[k++] = dec_total(v[i], v[j]) <= 0 ? v[i++] : v[j++];
			break;
		case DEC_COLLAPSED:
			while (i < n1 && j < n)
				tmp[k++] = dec_collapsed(v[i], v[j]) <= 0 ? v[i++] : v[j++];
			break;
		case DEC_OUTPUT:
			while (i < n1 && j < n)
				tmp[k++] = dec_output(v[i], v[j]) <= 0 ? v[i++] : v[j++];
			break;
		}
		while (i < n1)
			tmp[k++] = v[i++];
		memcpy(v, tmp, k * sizeof(*v));
	}
	free(tmp);
}

static struct dec *decorate(struct pevt_hists *h)
{
	struct dec *d = pevt_big_alloc((h->nr + 1) * sizeof(*d));
	const void **p = malloc((h->nr + 1) * sizeof(*p));
	uint32_t *rk = malloc((h->nr + 1) * sizeof(*rk));
	size_t i;
	int err = !d || !p || !rk;

	for (i = 0; !err && i < h->nr; i++) {
		struct pevt_hist_entry *e = entry(h, i);

		d[i] = (struct dec){
			.period = e->period, .period_acc = e->period_acc, .ip = e->k.ip,
			.sym_start = e->k.sym ? e->k.sym->start : 0,
			.sym_end = e->k.sym ? e->k.sym->end : 0,
			.max_depth = e->max_depth, .dso = e->k.dso, .thread = e->thread,
			.tid = e->k.tid, .cpu = e->k.cpu, .has_sym = !!e->k.sym, .e = e,
		};
	}
#define RANK(expr, fn, field)							\
	do {									\
		for (i = 0; !err && i < h->nr; i++)				\
			p[i] = (expr);						\
		err = err || ranks(p, h->nr, fn, rk);				\
		for (i = 0; !err && i < h->nr; i++)				\
			d[i].field = rk[i];					\
	} while (0)
	RANK(d[i].e->k.comm, comm_name, comm);
	RANK(d[i].dso, dso_long, dso_long);
	RANK(d[i].dso, dso_short, dso_short);
	RANK(d[i].e->k.sym, sym_name, sym_name);
#undef RANK
	free(p);
	free(rk);
	if (err) {
		pevt_big_free(d, (h->nr + 1) * sizeof(*d));
		return NULL;
	}
	return d;
}

/* ---- the same three sorts, with less memory traffic -------------------- */

/*
 * Without the depth rule (no call graphs, or no children), as in
 * sorted_exact() but:
 *
 *  - the total sort: dec_total() compares integers lexicographically, so
 *    a stable sort by it is any sort by (its fields, index): records of
 *    16 bytes, sorted by the first three 32-bit halves of the key that
 *    differ, then the entries still equal by the next ones (ks_group());
 *  - the collapsed sort: the same merge sort with the same comparison
 *    (which need not be transitive: sdiff() of garbage ips), on compact
 *    copies of the entries' fields laid out in the total sort's order, so
 *    that the merges read neighbours in memory, not 104-byte records all
 *    over 80 MB;
 *  - the output sort: dec_output() without the depth rule is transitive,
 *    so a stable sort of the collapsed order is the sort by (its fields,
 *    position in the collapsed order), done like the total sort.
 */
enum kfield {
	KF_ACC,		/* ~period_acc: descending */
	KF_SELF,	/* ~period */
	KF_COMM,	/* comm rank */
	KF_TID_S,	/* tid, signed */
	KF_CPU_S,	/* cpu, signed */
	KF_DSO_S,	/* short name rank */
	KF_SYM_NAME,	/* symbol name rank */
	KF_DSO_L,	/* long name rank */
	KF_IP,		/* ip */
	KF_TID_U,	/* tid, unsigned */
	KF_CPU_U,	/* cpu, unsigned */
	KF_SYM_START,	/* sym ? start : 0 */
	KF_POS,		/* position in the collapsed order */
};

#define KH_MAX	32	/* halves of a key */

struct ksort {
	const struct pevt_hists *h;
	uint32_t *comm, *dso_s, *dso_l, *sym;	/* ranks, by entry index */
	uint32_t *pos;				/* KF_POS, by entry index */
	enum kfield f[16];
	int off[16];				/* each field's first half */
	int nf, nh;
	bool used[KH_MAX];			/* halves not the same in all entries */
};

struct krec {
	uint64_t a, b;		/* four halves */
	uint32_t i;		/* then the entry's index */
};

static int kf_halves(enum kfield f)
{
	return f == KF_ACC || f == KF_SELF || f == KF_IP || f == KF_SYM_START ? 2 : 1;
}

static void ks_field(struct ksort *ks, enum kfield f)
{
	ks->f[ks->nf] = f;
	ks->off[ks->nf++] = ks->nh;
	ks->nh += kf_halves(f);
}

/* Entry @i's key halves [lo, hi) (at least), into @o[lo, hi). */
static void ks_key(const struct ksort *ks, uint32_t i, uint32_t *o, int lo, int hi)
{
	const struct pevt_hist_entry *e = entry(ks->h, i);
	int f, n;

#define PUT64(x)	do { uint64_t x_ = (x); o[n++] = x_ >> 32; o[n++] = (uint32_t)x_; } while (0)
	for (f = 0; f < ks->nf; f++) {
		n = ks->off[f];
		if (n >= hi)
			break;
		if (n + kf_halves(ks->f[f]) <= lo)
			continue;
		switch (ks->f[f]) {
		case KF_ACC:
			PUT64(~e->period_acc);
			break;
		case KF_SELF:
			PUT64(~e->period);
			break;
		case KF_COMM:
			o[n++] = ks->comm[i];
			break;
		case KF_TID_S:
			o[n++] = (uint32_t)e->k.tid ^ 0x80000000u;
			break;
		case KF_CPU_S:
			o[n++] = (uint32_t)e->k.cpu ^ 0x80000000u;
			break;
		case KF_DSO_S:
			o[n++] = ks->dso_s[i];
			break;
		case KF_SYM_NAME:
			o[n++] = ks->sym[i];
			break;
		case KF_DSO_L:
			o[n++] = ks->dso_l[i];
			break;
		case KF_IP:
			PUT64(e->k.ip);
			break;
		case KF_TID_U:
			o[n++] = (uint32_t)e->k.tid;
			break;
		case KF_CPU_U:
			o[n++] = (uint32_t)e->k.cpu;
			break;
		case KF_SYM_START:
			PUT64(e->k.sym ? e->k.sym->start : 0);
			break;
		case KF_POS:
			o[n++] = ks->pos[i];
			break;
		}
	}
#undef PUT64
}

/* The halves that differ between some entries (all of KF_POS's). */
static void ks_used(struct ksort *ks)
{
	uint32_t first[KH_MAX], x[KH_MAX];
	size_t i;
	int j;

	memset(ks->used, 0, sizeof(ks->used));
	if (!ks->h->nr)
		return;
	ks_key(ks, 0, first, 0, ks->nh);
	for (i = 1; i < ks->h->nr; i++) {
		ks_key(ks, i, x, 0, ks->nh);
		for (j = 0; j < ks->nh; j++)
			ks->used[j] |= x[j] != first[j];
	}
}

static inline bool krec_lt(const struct krec *x, const struct krec *y)
{
	if (x->a != y->a)
		return x->a < y->a;
	if (x->b != y->b)
		return x->b < y->b;
	return x->i < y->i;
}

static void krec_merge(const struct krec *l, size_t nl, const struct krec *r, size_t nr,
		       struct krec *out)
{
	size_t i = 0, j = 0, k = 0;

	while (i < nl && j < nr)
		out[k++] = krec_lt(&r[j], &l[i]) ? r[j++] : l[i++];
	while (i < nl)
		out[k++] = l[i++];
	while (j < nr)
		out[k++] = r[j++];
}

/* Sorts @a[0, n), the result in @b if @to_b, else in @a; the other is scratch. */
static void krec_sort(struct krec *a, struct krec *b, size_t n, bool to_b)
{
	size_t h = n / 2, i, j;

	if (n <= 16) {
		for (i = 1; i < n; i++) {
			struct krec x = a[i];

			for (j = i; j > 0 && krec_lt(&x, &a[j - 1]); j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
		if (to_b)
			memcpy(b, a, n * sizeof(*a));
		return;
	}
	krec_sort(a, b, h, !to_b);
	krec_sort(a + h, b + h, n - h, !to_b);
	if (to_b)
		krec_merge(a, h, a + h, n - h, b);
	else
		krec_merge(b, h, b + h, n - h, a);
}

struct krec_half {
	struct krec *a, *b;
	size_t n;
};

static void *krec_half(void *arg)
{
	struct krec_half *x = arg;

	krec_sort(x->a, x->b, x->n, true);
	return NULL;
}

/* Sorts @v[0, n) (scratch @tmp), the halves on two threads if @two. */
static void krec_sort2(struct krec *v, struct krec *tmp, size_t n, bool two)
{
	struct krec_half x = { v, tmp, n / 2 };
	pthread_t th;

	if (!two || n < 65536 || pthread_create(&th, NULL, krec_half, &x)) {
		krec_sort(v, tmp, n, false);
		return;
	}
	krec_sort(v + n / 2, tmp + n / 2, n - n / 2, true);
	pthread_join(th, NULL);
	krec_merge(tmp, n / 2, tmp + n / 2, n - n / 2, v);
}

/*
 * Sorts the entries @idx[0, n), in ascending index order and equal in the
 * halves before @from, by the halves from @from on, then by index: by the
 * next four that differ somewhere, then those still equal by the next.
 */
static void ks_group(const struct ksort *ks, uint32_t *idx, size_t n, int from,
		     struct krec *rec, struct krec *tmp, bool two)
{
	uint32_t x[KH_MAX];
	int pick[4], np = 0, j;
	size_t k, e;

	for (j = from; j < ks->nh && np < 4; j++)
		if (ks->used[j])
			pick[np++] = j;
	if (n < 2 || !np)
		return;		/* all equal: index order */
	for (k = 0; k < n; k++) {
		uint32_t h[4] = { 0, 0, 0, 0 };

		ks_key(ks, idx[k], x, pick[0], pick[np - 1] + 1);
		for (j = 0; j < np; j++)
			h[j] = x[pick[j]];
		rec[k].a = (uint64_t)h[0] << 32 | h[1];
		rec[k].b = (uint64_t)h[2] << 32 | h[3];
		rec[k].i = idx[k];
	}
	krec_sort2(rec, tmp, n, two);
	for (k = 0; k < n; k++)
		idx[k] = rec[k].i;
	for (j = pick[np - 1] + 1; j < ks->nh && !ks->used[j]; j++)
		;
	if (j >= ks->nh)
		return;
	for (k = 0; k < n; k = e) {
		for (e = k + 1; e < n && rec[e].a == rec[k].a && rec[e].b == rec[k].b; e++)
			;
		if (e - k > 1)
			ks_group(ks, idx + k, e - k, j, rec + k, tmp + k, two);
	}
}

/* The same ranks as decorate()'s, by entry index. */
static uint32_t *ks_ranks(const struct pevt_hists *h, int which)
{
	const void **p = malloc((h->nr + 1) * sizeof(*p));
	uint32_t *rk = malloc((h->nr + 1) * sizeof(*rk));
	static const char *(*const fn[])(const void *) = { comm_name, dso_long, dso_short, sym_name };
	size_t i;

	for (i = 0; p && rk && i < h->nr; i++) {
		const struct pevt_hist_entry *e = entry(h, i);

		p[i] = which == 0 ? (const void *)e->k.comm : which == 3 ? (const void *)e->k.sym :
			(const void *)e->k.dso;
	}
	if (!p || !rk || ranks(p, h->nr, fn[which], rk)) {
		free(rk);
		rk = NULL;
	}
	free(p);
	return rk;
}

/*
 * struct dec with what dec_collapsed() reads, and no pointer to follow;
 * 48 bytes, to fit where the records of two struct krec went.
 */
struct cdec {
	uint64_t ip, sym_start, sym_end;
	uint32_t comm, dso_long, dso_short;
	int32_t tid, cpu;
	uint32_t idx;			/* the entry's, CDEC_IDX; and the flags */
};

#define CDEC_IDX	((1u << 30) - 1)
#define CDEC_SYM	(1u << 30)	/* has_sym */
#define CDEC_DSO	(1u << 31)	/* has_dso */

_Static_assert(sizeof(struct cdec) <= 2 * sizeof(struct krec), "cdec in two krecs");

static const uint32_t *cdec_sym_name;	/* the entries' sym_name ranks */

/* dec_collapsed() on struct cdec: the same result for the same fields */
static inline int cdec_key_sort(const struct cdec *a, const struct cdec *b, int key)
{
	switch (key) {
	case PEVT_SORT_COMM:
		return cmp_r(a->comm, b->comm);
	case PEVT_SORT_PID:
		return (a->tid > b->tid) - (a->tid < b->tid);
	case PEVT_SORT_CPU:
		return (a->cpu > b->cpu) - (a->cpu < b->cpu);
	case PEVT_SORT_DSO:
		return cmp_r(a->dso_short, b->dso_short);
	case PEVT_SORT_SYM:
		return cmp_r(cdec_sym_name[a->idx & CDEC_IDX], cdec_sym_name[b->idx & CDEC_IDX]);
	}
	return 0;
}

static inline int cdec_total(const struct cdec *a, const struct cdec *b)
{
	int r;

	if ((r = cmp_r(a->comm, b->comm)) ||
	    (r = cmp_r((uint32_t)a->tid, (uint32_t)b->tid)) ||
	    (r = cmp_r((uint32_t)a->cpu, (uint32_t)b->cpu)) ||
	    (r = cmp_r(a->dso_long, b->dso_long)) ||
	    (r = cmp_r(a->sym_start, b->sym_start)) ||
	    (r = cmp_r(cdec_sym_name[a->idx & CDEC_IDX], cdec_sym_name[b->idx & CDEC_IDX])))
		return r;
	return cmp_r(a->ip, b->ip);
}

static inline int cdec_collapsed(const struct cdec *a, const struct cdec *b)
{
	bool a_sym = a->idx & CDEC_SYM, b_sym = b->idx & CDEC_SYM;
	int i, r;

	for (i = 0; i < sort_h->nr_keys; i++) {
		if (sort_h->keys[i] != PEVT_SORT_SYM) {
			r = cdec_key_sort(a, b, sort_h->keys[i]);
		} else if (!a_sym && !b_sym) {
			r = sdiff(a->ip, b->ip);
		} else if (!sort_has_dso && (r = cdec_key_sort(a, b, PEVT_SORT_DSO))) {
			;
		} else if (!a_sym || !b_sym) {
			r = !a_sym - !b_sym;
		} else if (a->sym_start != b->sym_start) {
			r = sdiff(a->sym_start, b->sym_start);
		} else {
			r = sdiff(a->sym_end, b->sym_end);
		}
		if (r)
			return r;
	}
	/* a->dso != b->dso && both set: the same dso has the same rank */
	if (a->idx & b->idx & CDEC_DSO) {
		r = cmp_r(a->dso_long, b->dso_long);
		if (r)
			return r;
	}
	if (a->ip != b->ip)
		return cmp_r(a->ip, b->ip);
	return cdec_total(a, b);
}

/* DEFINE_MSORT()'s merge sort, on struct cdec */
static void msort_cdec(struct cdec **v, struct cdec **tmp, size_t n)
{
	size_t n1 = n / 2, i = 0, j = n1, k = 0;

	if (n <= 1)
		return;
	msort_cdec(v, tmp, n1);
	msort_cdec(v + n1, tmp, n - n1);
	while (i < n1 && j < n)
		tmp[k++] = cdec_collapsed(v[i], v[j]) <= 0 ? v[i++] : v[j++];
	while (i < n1)
		tmp[k++] = v[i++];
	memcpy(v, tmp, k * sizeof(*v));
}

struct cdec_half {
	struct cdec **v, **tmp;
	size_t n;
};

static void *cdec_half(void *arg)
{
	struct cdec_half *x = arg;

	msort_cdec(x->v, x->tmp, x->n);
	return NULL;
}

/* dsort(v, n, DEC_COLLAPSED, two) on struct cdec: the same split, the same merges */
static void csort(struct cdec **v, struct cdec **tmp, size_t n, bool two)
{
	struct cdec_half a = { v, tmp, n / 2 };
	size_t n1 = n / 2, i = 0, j = n1, k = 0;
	pthread_t th;
	bool threaded;

	if (n < 2)
		return;
	threaded = two && n >= 4096 && !pthread_create(&th, NULL, cdec_half, &a);
	msort_cdec(v + n1, tmp + n1, n - n1);
	if (threaded)
		pthread_join(th, NULL);
	else
		msort_cdec(v, tmp, n1);
	while (i < n1 && j < n)
		tmp[k++] = cdec_collapsed(v[i], v[j]) <= 0 ? v[i++] : v[j++];
	while (i < n1)
		tmp[k++] = v[i++];
	memcpy(v, tmp, k * sizeof(*v));
}

static struct pevt_hist_entry **sorted_fast(struct pevt_hists *h, bool children, size_t *nr)
{
	struct ksort ks = { .h = h };
	size_t i, n = h->nr;
	struct pevt_hist_entry **out = malloc((n + 1) * sizeof(*out));
	uint32_t *idx = malloc((n + 1) * sizeof(*idx));
	struct cdec **cv = malloc((n + 1) * sizeof(*cv)), **ctmp = malloc((n + 1) * sizeof(*ctmp));
	/* the records of the total and output sorts, or the copies of the collapsed one */
	struct krec *rec = pevt_big_alloc(2 * (n + 1) * sizeof(*rec)), *tmp = rec + n + 1;
	struct cdec *c = (struct cdec *)rec;
	bool two = h->sort_threads > 1;
	int k;

	ks.comm = ks_ranks(h, 0);
	ks.dso_l = ks_ranks(h, 1);
	ks.dso_s = ks_ranks(h, 2);
	ks.sym = ks_ranks(h, 3);
	if (!out || !idx || !cv || !ctmp || !rec || !ks.comm || !ks.dso_l ||
	    !ks.dso_s || !ks.sym) {
		free(out);
		out = NULL;
		goto done;
	}
	sort_h = h;
	sort_has_dso = false;
	for (k = 0; k < h->nr_keys; k++)
		sort_has_dso |= h->keys[k] == PEVT_SORT_DSO;

	/* dec_total() */
	ks_field(&ks, KF_COMM);
	ks_field(&ks, KF_TID_U);
	ks_field(&ks, KF_CPU_U);
	ks_field(&ks, KF_DSO_L);
	ks_field(&ks, KF_SYM_START);
	ks_field(&ks, KF_SYM_NAME);
	ks_field(&ks, KF_IP);
	ks_used(&ks);
	for (i = 0; i < n; i++)
		idx[i] = i;
	ks_group(&ks, idx, n, 0, rec, tmp, two);

	/* dec_collapsed(), on copies in that order */
	for (i = 0; i < n; i++) {
		const struct pevt_hist_entry *e = entry(h, idx[i]);

		c[i] = (struct cdec){
			.ip = e->k.ip,
			.sym_start = e->k.sym ? e->k.sym->start : 0,
			.sym_end = e->k.sym ? e->k.sym->end : 0,
			.comm = ks.comm[idx[i]], .dso_long = ks.dso_l[idx[i]],
			.dso_short = ks.dso_s[idx[i]],
			.tid = e->k.tid, .cpu = e->k.cpu,
			.idx = idx[i] | (e->k.sym ? CDEC_SYM : 0) | (e->k.dso ? CDEC_DSO : 0),
		};
		cv[i] = &c[i];
	}
	cdec_sym_name = ks.sym;
	csort(cv, ctmp, n, two);

	/* dec_output(), ties in that order */
	ks.pos = (uint32_t *)ctmp;	/* done with it */
	for (i = 0; i < n; i++) {
		ks.pos[cv[i]->idx & CDEC_IDX] = i;
		idx[i] = i;
	}
	ks.nf = ks.nh = 0;
	if (children)
		ks_field(&ks, KF_ACC);
	ks_field(&ks, KF_SELF);
	for (k = 0; k < h->nr_keys; k++) {
		static const enum kfield out_f[] = {
			[PEVT_SORT_COMM] = KF_COMM, [PEVT_SORT_PID] = KF_TID_S,
			[PEVT_SORT_DSO] = KF_DSO_S, [PEVT_SORT_SYM] = KF_SYM_NAME,
			[PEVT_SORT_CPU] = KF_CPU_S,
		};

		ks_field(&ks, out_f[h->keys[k]]);
	}
	ks_field(&ks, KF_POS);
	ks_used(&ks);
	ks_group(&ks, idx, n, 0, rec, tmp, two);
	for (i = 0; i < n; i++)
		out[i] = entry(h, idx[i]);
	*nr = n;
done:
	pevt_big_free(rec, 2 * (n + 1) * sizeof(*rec));
	free(cv);
	free(ctmp);
	free(idx);
	free(ks.comm);
	free(ks.dso_l);
	free(ks.dso_s);
	free(ks.sym);
	return out;
}

/* perf's three sorts, one after the other (and its rbtree, with the depth rule) */
static struct pevt_hist_entry **sorted_exact(struct pevt_hists *h, bool children, size_t *nr)
{
	struct dec *d = decorate(h);
	void **in = malloc((h->nr + 1) * sizeof(*in));
	struct pevt_hist_entry **out = malloc((h->nr + 1) * sizeof(*out));
	bool two = h->sort_threads > 1;
	struct rbn *t = NULL;
	size_t i, n = h->nr;
	int root = -1, k;

	if (!d || !in || !out) {
		pevt_big_free(d, (h->nr + 1) * sizeof(*d));
		free(in);
		free(out);
		return NULL;
	}
	for (i = 0; i < n; i++)
		in[i] = &d[i];
	sort_children = children;
	sort_h = h;
	sort_has_dso = false;
	for (k = 0; k < h->nr_keys; k++)
		sort_has_dso |= h->keys[k] == PEVT_SORT_DSO;
	/*
	 * output_resort() takes the entries in the collapsed tree's order
	 * (made independent of the hash table, so of pointers and of how
	 * samples were split over threads) and inserts each into an rbtree,
	 * left when hist_entry__sort() > 0.
	 */
	dsort((struct dec **)in, n, DEC_TOTAL, two);
	dsort((struct dec **)in, n, DEC_COLLAPSED, two);
	if (!(children && h->depth_sort)) {
		/*
		 * Without the depth rule hist_entry__sort() is transitive: the
		 * tree's in-order walk is a stable sort of the insertions.
		 */
		dsort((struct dec **)in, n, DEC_OUTPUT, two);
	} else {
		/* With it, it is not: replaying the same insertions gives the same order. */
		t = malloc((n + 1) * sizeof(*t));
		if (!t) {
			free(out);
			out = NULL;
			goto done;
		}
		for (i = 0; i < n; i++) {
			int p = -1, c = root;
			bool left = false;

			while (c >= 0) {
				p = c;
				left = d_output(&in[i], &in[c]) < 0;
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
		n = rb_walk(t, root, in, (void **)out);
		memcpy(in, out, n * sizeof(*in));
	}
	for (i = 0; i < n; i++)
		out[i] = ((struct dec *)in[i])->e;
done:
	free(t);
	free(in);
	pevt_big_free(d, (h->nr + 1) * sizeof(*d));
	*nr = n;
	return out;
}

struct pevt_hist_entry **pevt_hists__sorted(struct pevt_hists *h, bool children, size_t *nr)
{
	if (!h->sort_exact && h->nr <= CDEC_IDX && !(children && h->depth_sort))
		return sorted_fast(h, children, nr);
	return sorted_exact(h, children, nr);
}
