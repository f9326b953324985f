// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - call graphs (see include/pevt/callchain.h).
 *
 * perf's order among siblings: cumulative period descending; equal ones
 * keep the order of perf's child rbtree, which is descending by (dso,
 * symbol start) for two resolved entries and by (dso, ip) otherwise
 * (match_chain()); perf compares dso pointers there, pevt the dsos'
 * creation order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pevt/callchain.h>
#include "internal/bigalloc.h"

/* 2 MB chunks (pevt_big_alloc()) */
#define CHUNK_NODES	((PEVT_BIG_ALIGN - sizeof(void *)) / sizeof(struct pevt_cc_node))

struct pevt_cc_chunk {
	struct pevt_cc_chunk *next;
	struct pevt_cc_node v[CHUNK_NODES];
};

/*
 * A node's children are found in its sibling list while they are few
 * (most nodes have one or two), else through one hash table per arena,
 * keyed by the parent and the entry: (dso, symbol start) when resolved,
 * else (dso, ip).  A node's children can number thousands (the callers of
 * a kernel entry point in a system-wide recording).
 */
#define FEW_CHILDREN	8
struct pevt_cc_slot {
	const struct pevt_cc_node *parent;
	struct pevt_cc_node *child;
	uint64_t hash;			/* slot_hash(): probed and rehashed without the child */
};

static struct pevt_cc_node *node_new(struct pevt_cc_arena *a)
{
	struct pevt_cc_node *n;

	if (!a->chunks || a->used == CHUNK_NODES) {
		struct pevt_cc_chunk *c = pevt_big_alloc(sizeof(*c));

		if (!c)
			return NULL;
		c->next = a->chunks;
		a->chunks = c;
		a->used = 0;
	}
	n = &a->chunks->v[a->used++];	/* zeroed by mmap() */
	return n;
}

struct pevt_cc_node *pevt_cc__new_root(struct pevt_cc_arena *a)
{
	return node_new(a);
}

static uint64_t entry_key(const struct pevt_cc_entry *e)
{
	return e->sym ? e->sym->start : e->ip;
}

static bool inlined(const struct pevt_cc_entry *e)
{
	return e->sym && e->sym->inlined;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

static uint64_t slot_hash(const struct pevt_cc_node *parent, const struct pevt_cc_entry *e)
{
	uint64_t h = (uintptr_t)parent * 0x9e3779b97f4a7c15ull;

	if (inlined(e))
		h ^= name_hash(e->sym->name) * 0x165667b19e3779f9ull;
	else
		h ^= (uintptr_t)e->dso * 0xc2b2ae3d27d4eb4full ^
		     (entry_key(e) + !!e->sym) * 0x165667b19e3779f9ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h;
}

/*
 * match_chain(): inlined frames are the same function by name (they share
 * their symbol's start), wherever they were inlined; a frame that is not
 * inlined never meets one of the same name in practice, so the hash keeps
 * the two kinds apart.
 */
static bool entry_eq(const struct pevt_cc_entry *a, const struct pevt_cc_entry *b)
{
	if (inlined(a) || inlined(b))
		return inlined(a) && inlined(b) && !strcmp(a->sym->name, b->sym->name);
	return a->dso == b->dso && !a->sym == !b->sym && entry_key(a) == entry_key(b);
}

static struct pevt_cc_node *find_child_h(const struct pevt_cc_arena *a,
					 const struct pevt_cc_node *parent,
					 const struct pevt_cc_entry *e, uint64_t h)
{
	size_t i;

	if (!a->cap)
		return NULL;
	for (i = h & (a->cap - 1); a->slots[i].parent; i = (i + 1) & (a->cap - 1))
		if (a->slots[i].hash == h && a->slots[i].parent == parent &&
		    entry_eq(&a->slots[i].child->e, e))
			return a->slots[i].child;
	return NULL;
}

static struct pevt_cc_node *find_child(const struct pevt_cc_arena *a,
				       const struct pevt_cc_node *parent,
				       const struct pevt_cc_entry *e)
{
	return find_child_h(a, parent, e, slot_hash(parent, e));
}

static int add_slot_h(struct pevt_cc_arena *a, const struct pevt_cc_node *parent,
		      struct pevt_cc_node *child, uint64_t h)
{
	size_t i;

	if ((a->nr + 1) * 2 > a->cap) {
		struct pevt_cc_slot *old = a->slots;
		size_t ocap = a->cap, j;

		a->cap = a->cap ? a->cap * 2 : 4096;
		a->slots = pevt_big_alloc(a->cap * sizeof(*a->slots));
		if (!a->slots) {
			a->slots = old;
			a->cap = ocap;
			return -ENOMEM;
		}
		for (j = 0; j < ocap; j++) {
			if (!old[j].parent)
				continue;
			for (i = old[j].hash & (a->cap - 1); a->slots[i].parent;
			     i = (i + 1) & (a->cap - 1))
				;
			a->slots[i] = old[j];
		}
		pevt_big_free(old, ocap * sizeof(*old));
	}
	for (i = h & (a->cap - 1); a->slots[i].parent; i = (i + 1) & (a->cap - 1))
		;
	a->slots[i].parent = parent;
	a->slots[i].child = child;
	a->slots[i].hash = h;
	a->nr++;
	return 0;
}

static int add_slot(struct pevt_cc_arena *a, const struct pevt_cc_node *parent,
		    struct pevt_cc_node *child)
{
	return add_slot_h(a, parent, child, slot_hash(parent, &child->e));
}

static struct pevt_cc_node *lookup(const struct pevt_cc_arena *a,
				   const struct pevt_cc_node *parent,
				   const struct pevt_cc_entry *e)
{
	struct pevt_cc_node *c;

	if (parent->nr_children > FEW_CHILDREN)
		return find_child(a, parent, e);
	for (c = parent->child; c; c = c->next)
		if (entry_eq(&c->e, e))
			return c;
	return NULL;
}

/* Make @c @parent's first child (the print order does not depend on it). */
static int link_child(struct pevt_cc_arena *a, struct pevt_cc_node *parent,
		      struct pevt_cc_node *c)
{
	struct pevt_cc_node *o;

	c->next = parent->child;
	parent->child = c;
	parent->nr_children++;
	if (parent->nr_children < FEW_CHILDREN + 1)
		return 0;
	if (parent->nr_children > FEW_CHILDREN + 1)
		return add_slot(a, parent, c);
	for (o = c; o; o = o->next)	/* from now on in the hash */
		if (add_slot(a, parent, o))
			return -ENOMEM;
	return 0;
}

void pevt_cc_arena__splice(struct pevt_cc_arena *dst, struct pevt_cc_arena *src)
{
	struct pevt_cc_chunk *last;
	size_t i;

	/* src's children stay findable (their parents moved with them) */
	for (i = 0; i < src->cap; i++)
		if (src->slots[i].parent)
			add_slot_h(dst, src->slots[i].parent, src->slots[i].child,
				   src->slots[i].hash);
	pevt_big_free(src->slots, src->cap * sizeof(*src->slots));
	src->slots = NULL;
	src->cap = src->nr = 0;
	if (!src->chunks)
		return;
	if (!dst->chunks) {
		dst->chunks = src->chunks;
		dst->used = src->used;
	} else {
		/* src's chunks go behind dst's first (partly used) one */
		for (last = src->chunks; last->next; last = last->next)
			;
		last->next = dst->chunks->next;
		dst->chunks->next = src->chunks;
	}
	src->chunks = NULL;
	src->used = 0;
}

void pevt_cc_arena__free(struct pevt_cc_arena *a)
{
	while (a->chunks) {
		struct pevt_cc_chunk *n = a->chunks->next;

		pevt_big_free(a->chunks, sizeof(*a->chunks));
		a->chunks = n;
	}
	a->used = 0;
	pevt_big_free(a->slots, a->cap * sizeof(*a->slots));
	a->slots = NULL;
	a->cap = a->nr = 0;
}

int pevt_cc__append(struct pevt_cc_arena *a, struct pevt_cc_node *root,
		    const struct pevt_cc_entry *v, size_t n, uint64_t period)
{
	return pevt_cc__append_n(a, root, v, n, period, 1);
}

int pevt_cc__append_n(struct pevt_cc_arena *a, struct pevt_cc_node *root,
		      const struct pevt_cc_entry *v, size_t n, uint64_t period, uint32_t count)
{
	struct pevt_cc_node *node = root;
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		struct pevt_cc_node *c = lookup(a, node, &v[i]);

		if (!c) {
			c = node_new(a);
			if (!c)
				return -ENOMEM;
			c->e = v[i];
			if (link_child(a, node, c))
				return -ENOMEM;
		}
		node->children_hit += period;
		node->children_count += count;
		node = c;
	}
	node->hit += period;
	node->count += count;
	return 0;
}

void pevt_cc__merge(struct pevt_cc_arena *a, struct pevt_cc_node *dst, struct pevt_cc_node *src)
{
	struct pevt_cc_node *s, *sn;

	dst->hit += src->hit;
	dst->count += src->count;
	dst->children_hit += src->children_hit;
	dst->children_count += src->children_count;
	for (s = src->child; s; s = sn) {
		struct pevt_cc_node *d = lookup(a, dst, &s->e);

		sn = s->next;
		if (d)
			pevt_cc__merge(a, d, s);
		else
			link_child(a, dst, s);
	}
}

/* ---- output ------------------------------------------------------------- */

static uint64_t cumul(const struct pevt_cc_node *n)
{
	return n->hit + n->children_hit;
}

static unsigned int dso_idx(const struct pevt_dso *d)
{
	return d ? d->idx + 1 : 0;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

/*
 * perf's child rbtree order: (dso, symbol start) or (dso, ip), descending;
 * by name, descending, against an inlined frame (match_chain_strings()).
 */
static int cmp_key(const void *pa, const void *pb)
{
	const struct pevt_cc_node *a = *(const struct pevt_cc_node *const *)pa;
	const struct pevt_cc_node *b = *(const struct pevt_cc_node *const *)pb;

	if ((inlined(&a->e) || inlined(&b->e)) && a->e.sym && b->e.sym)
		return strcmp(b->e.sym->name, a->e.sym->name);

	if (a->e.dso != b->e.dso)
		return dso_idx(a->e.dso) < dso_idx(b->e.dso) ? 1 : -1;
	if (a->e.sym && b->e.sym)
		return cmp_u64_desc(a->e.sym->start, b->e.sym->start);
	return cmp_u64_desc(a->e.ip, b->e.ip);
}

static int cmp_sibling(const void *pa, const void *pb)
{
	const struct pevt_cc_node *a = *(const struct pevt_cc_node *const *)pa;
	const struct pevt_cc_node *b = *(const struct pevt_cc_node *const *)pb;

	return cmp_u64_desc(cumul(a), cumul(b)) ?: cmp_key(pa, pb);
}

/* A total order of the entries: (dso, symbol start, ip), no symbol last. */
static int cmp_canonical(const void *pa, const void *pb)
{
	const struct pevt_cc_node *a = *(const struct pevt_cc_node *const *)pa;
	const struct pevt_cc_node *b = *(const struct pevt_cc_node *const *)pb;

	if (dso_idx(a->e.dso) != dso_idx(b->e.dso))
		return dso_idx(a->e.dso) < dso_idx(b->e.dso) ? -1 : 1;
	if (!a->e.sym != !b->e.sym)
		return a->e.sym ? -1 : 1;
	if (a->e.sym && a->e.sym->start != b->e.sym->start)
		return a->e.sym->start < b->e.sym->start ? -1 : 1;
	if (inlined(&a->e) != inlined(&b->e))
		return inlined(&a->e) ? 1 : -1;
	if (inlined(&a->e))
		return strcmp(a->e.sym->name, b->e.sym->name);
	return (a->e.ip > b->e.ip) - (a->e.ip < b->e.ip);
}

static void merge_sort(const struct pevt_cc_node **v, const struct pevt_cc_node **tmp, size_t k,
		       int (*cmp)(const void *, const void *))
{
	size_t h = k / 2, i = 0, j = h, o = 0;

	if (k < 2)
		return;
	merge_sort(v, tmp, h, cmp);
	merge_sort(v + h, tmp, k - h, cmp);
	while (i < h && j < k)
		tmp[o++] = cmp(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
	while (i < h)
		tmp[o++] = v[i++];
	while (j < k)
		tmp[o++] = v[j++];
	memcpy(v, tmp, k * sizeof(*v));
}

/*
 * Sort siblings with perf's comparison, which is not transitive when one
 * DSO is mapped at several addresses (cmp_key()): from a canonical order
 * by a stable merge sort, so that the result depends on the set of
 * siblings only, not on the order they were added or merged in (--threads).
 */
static void sort_siblings(const struct pevt_cc_node **v, size_t k,
			  int (*cmp)(const void *, const void *))
{
	const struct pevt_cc_node **tmp;

	qsort(v, k, sizeof(*v), cmp_canonical);
	tmp = malloc((k + 1) * sizeof(*tmp));
	if (tmp)
		merge_sort(v, tmp, k, cmp);
	else
		qsort(v, k, sizeof(*v), cmp);
	free(tmp);
}

/* The end of the run starting at @n: no chain ends inside it, one child. */
static const struct pevt_cc_node *run_end(const struct pevt_cc_node *n)
{
	while (!n->count && n->child && !n->child->next)
		n = n->child;
	return n;
}

struct printer {
	FILE *f;
	const struct pevt_cc_param *p;
	uint64_t min_hit;		/* absolute threshold (graph, flat, folded) */
};

/* The children of @n shown in the graph, in order; caller frees. */
static const struct pevt_cc_node **sorted_children(const struct printer *pr,
						   const struct pevt_cc_node *n, size_t *nr)
{
	const struct pevt_cc_node **v, *c;
	uint64_t min_hit = pr->min_hit;
	size_t k = 0;

	for (c = n->child; c; c = c->next)
		k++;
	v = malloc((k + 1) * sizeof(*v));
	if (!v) {
		*nr = 0;
		return NULL;
	}
	if (pr->p->mode == PEVT_CC_GRAPH_REL) {
		/* ceil(), without libm for the library's users */
		double x = n->children_hit * (pr->p->min_percent / 100.0);

		min_hit = x;
		if (min_hit < x)
			min_hit++;
	}
	k = 0;
	for (c = n->child; c; c = c->next)
		if (cumul(c) >= min_hit)
			v[k++] = c;
	sort_siblings(v, k, cmp_sibling);
	*nr = k;
	return v;
}

static void name(FILE *f, const struct pevt_cc_entry *e)
{
	char buf[32];

	fputs(pevt_cc_entry__name(e, buf, sizeof(buf)), f);
}

const char *pevt_cc_entry__name(const struct pevt_cc_entry *e, char *buf, size_t sz)
{
	if (e->sym)
		return e->sym->name;
	snprintf(buf, sz, "%#" PRIx64, e->ip);
	return buf;
}

static void value(const struct printer *pr, uint64_t period, uint32_t count, uint64_t total)
{
	switch (pr->p->value) {
	case PEVT_CC_PERIOD:
		fprintf(pr->f, "%" PRIu64, period);
		break;
	case PEVT_CC_COUNT:
		fprintf(pr->f, "%u", count);
		break;
	default:
		fprintf(pr->f, "%.2f%%", total ? period * 100.0 / total : 0.0);
		break;
	}
}

static void margin(FILE *f, int left)
{
	fprintf(f, "%*s", 12 + left, "");
}

/*
 * perf keeps the depth's pipes in an int mask shifted by the depth: on
 * x86 a shift counts modulo 32, which deep chains reach.
 */
static unsigned int bit(int i)
{
	return 1u << (i & 31);
}

static void graph_line(FILE *f, int depth, unsigned int mask, int left)
{
	int i;

	margin(f, left);
	for (i = 0; i < depth; i++)
		fputs(mask & bit(i) ? "|          " : "           ", f);
	fputc('\n', f);
}

static void graph_entry(const struct printer *pr, uint64_t period, uint32_t count,
			const struct pevt_cc_entry *e, const char *label, int depth,
			unsigned int mask, bool first, uint64_t total, int left)
{
	int i;

	margin(pr->f, left);
	for (i = 0; i < depth; i++) {
		fputc(mask & bit(i) ? '|' : ' ', pr->f);
		if (first && i == depth - 1) {
			fputs("--", pr->f);
			value(pr, period, count, total);
			fputs("--", pr->f);
		} else {
			fputs("          ", pr->f);
		}
	}
	if (label)
		fputs(label, pr->f);
	else
		name(pr->f, e);
	fputc('\n', pr->f);
}

/* Returns the number of lines printed. */
static size_t graph(const struct printer *pr, const struct pevt_cc_node *n, uint64_t total,
		    int depth, unsigned int mask, int left)
{
	bool rel = pr->p->mode == PEVT_CC_GRAPH_REL;
	const struct pevt_cc_node **v;
	unsigned int new_mask = mask;
	uint64_t remaining = total;
	uint32_t cumul_count = 0;
	size_t nr, i, lines = 0;

	v = sorted_children(pr, n, &nr);
	for (i = 0; i < nr; i++) {
		const struct pevt_cc_node *c = v[i], *end = run_end(c), *x;
		bool first = true;

		remaining -= cumul(c);
		cumul_count += c->count + c->children_count;
		if (i + 1 == nr && (!rel || !remaining))
			new_mask &= ~bit(depth - 1);
		graph_line(pr->f, depth, mask, left);
		for (x = c; ; x = x->child) {
			graph_entry(pr, cumul(c), c->count + c->children_count, &x->e, NULL,
				    depth, new_mask, first, total, left);
			lines++;
			first = false;
			if (x == end)
				break;
		}
		lines += graph(pr, end, rel ? end->children_hit : total, depth + 1,
		      new_mask | bit(depth), left);
		if (i + 1 == pr->p->print_limit)
			break;
	}
	if (rel && remaining && remaining != total) {
		uint32_t rem_count = 0;

		if (pr->p->value == PEVT_CC_COUNT && nr) {
			if (n->children_count <= cumul_count) {
				free(v);
				return lines;
			}
			rem_count = n->children_count - cumul_count;
		}
		new_mask &= ~bit(depth - 1);
		graph_entry(pr, remaining, rem_count, NULL, "[...]", depth, new_mask, true,
			    total, left);
		lines++;
	}
	free(v);
	return lines;
}

static void print_graph(const struct printer *pr, const struct pevt_cc_node *root,
			uint64_t total, uint64_t parent)
{
	const struct pevt_cc_node **v;
	bool printed = false;
	int left = 0;
	size_t nr;

	v = sorted_children(pr, root, &nr);
	/* one root holding everything: no percentage, one column less */
	if (nr == 1 && cumul(v[0]) == parent) {
		const struct pevt_cc_node *x, *end = run_end(v[0]);
		unsigned int k = 0;

		for (x = v[0]; ; x = x->child) {
			if (x == v[0] && pr->p->skip_first) {
				if (x == end)
					break;
				continue;
			}
			if (!printed) {
				margin(pr->f, left);
				fputs("|\n", pr->f);
				margin(pr->f, left);
				fputs("---", pr->f);
				left += 3;
				printed = true;
			} else {
				margin(pr->f, left);
			}
			name(pr->f, &x->e);
			fputc('\n', pr->f);
			if (++k == pr->p->print_limit || x == end)
				break;
		}
		root = end;
	}
	free(v);
	if (pr->p->mode == PEVT_CC_GRAPH_REL)
		total = parent;
	/* no blank line if it printed nothing */
	if (graph(pr, root, total, 1, 1, left) || printed)
		fputc('\n', pr->f);
}

/* A node shown by flat/folded and the path to it from the root. */
struct flat_item {
	const struct pevt_cc_node *n;
	const struct pevt_cc_node **path;
	size_t depth, idx;
};

static int cmp_flat(const void *pa, const void *pb)
{
	const struct flat_item *a = pa, *b = pb;

	return cmp_u64_desc(a->n->hit, b->n->hit) ?: (a->idx > b->idx) - (a->idx < b->idx);
}

struct flat_ctx {
	struct flat_item *v;
	size_t nr, cap;
	const struct pevt_cc_node *stack[4096];
};

static void flat_free(struct flat_ctx *fc)
{
	size_t i;

	for (i = 0; i < fc->nr; i++)
		free(fc->v[i].path);
	free(fc->v);
}

/* perf's post-order over its child rbtrees (descending keys). */
static int flat_collect(const struct printer *pr, const struct pevt_cc_node *n,
			struct flat_ctx *fc, size_t depth)
{
	const struct pevt_cc_node **v, *c;
	size_t k = 0, i;

	if (depth >= sizeof(fc->stack) / sizeof(fc->stack[0]))
		return -E2BIG;
	for (c = n->child; c; c = c->next)
		k++;
	v = malloc((k + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	k = 0;
	for (c = n->child; c; c = c->next)
		v[k++] = c;
	sort_siblings(v, k, cmp_key);
	for (i = 0; i < k; i++) {
		fc->stack[depth] = v[i];
		if (flat_collect(pr, v[i], fc, depth + 1)) {
			free(v);
			return -ENOMEM;
		}
	}
	free(v);
	if (n->hit && n->hit >= pr->min_hit) {
		struct flat_item *it;

		if (fc->nr == fc->cap) {
			size_t ncap = fc->cap ? fc->cap * 2 : 64;
			struct flat_item *nv = realloc(fc->v, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			fc->v = nv;
			fc->cap = ncap;
		}
		it = &fc->v[fc->nr];
		it->path = malloc((depth + 1) * sizeof(*it->path));
		if (!it->path)
			return -ENOMEM;
		memcpy(it->path, fc->stack, depth * sizeof(*it->path));
		it->depth = depth;
		it->idx = fc->nr;
		it->n = n;
		fc->nr++;
	}
	return 0;
}

static void print_flat(const struct printer *pr, const struct pevt_cc_node *root,
		       uint64_t total)
{
	struct flat_ctx *fc = calloc(1, sizeof(*fc));
	size_t i, j;

	if (!fc)
		return;
	if (flat_collect(pr, root, fc, 0))
		goto out;
	/* by hit, descending; equal ones stay in post-order */
	qsort(fc->v, fc->nr, sizeof(*fc->v), cmp_flat);
	for (i = 0; i < fc->nr; i++) {
		const struct flat_item *it = &fc->v[i];

		if (pr->p->mode == PEVT_CC_FLAT) {
			fputs("           ", pr->f);
			value(pr, cumul(it->n), it->n->count + it->n->children_count, total);
			fputc('\n', pr->f);
			for (j = 0; j < it->depth; j++) {
				fputs("                ", pr->f);
				name(pr->f, &it->path[j]->e);
				fputc('\n', pr->f);
			}
			fputc('\n', pr->f);
		} else {
			value(pr, it->n->hit, it->n->count, total);
			fputc(' ', pr->f);
			for (j = 0; j < it->depth; j++) {
				if (j)
					fputc(';', pr->f);
				name(pr->f, &it->path[j]->e);
			}
			fputc('\n', pr->f);
		}
		if (i + 1 == pr->p->print_limit)
			break;
	}
out:
	flat_free(fc);
	free(fc);
}

void pevt_cc__fprintf(FILE *f, const struct pevt_cc_node *root, const struct pevt_cc_param *p,
		      uint64_t total, uint64_t parent, uint64_t min_hit)
{
	struct printer pr = { .f = f, .p = p, .min_hit = min_hit };

	if (!root)
		return;
	if (p->mode == PEVT_CC_FLAT || p->mode == PEVT_CC_FOLDED)
		print_flat(&pr, root, total);
	else
		print_graph(&pr, root, total, parent);
}

/* ---- -g ----------------------------------------------------------------- */

static bool prefix(const char *tok, const char *word)
{
	return !strncmp(tok, word, strlen(tok));
}

int pevt_cc__parse(struct pevt_cc_param *p, const char *arg, bool *order_set)
{
	char *s = strdup(arg), *tok, *save = NULL, *end;
	bool pct_set = false;
	int ret = 0;

	if (!s)
		return -1;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		/* perf tries the words in this order, each as a prefix */
		if (prefix(tok, "none")) {
			ret = 1;
			break;
		} else if (prefix(tok, "graph")) {
			p->mode = PEVT_CC_GRAPH_ABS;
		} else if (prefix(tok, "flat")) {
			p->mode = PEVT_CC_FLAT;
		} else if (prefix(tok, "fractal")) {
			p->mode = PEVT_CC_GRAPH_REL;
		} else if (prefix(tok, "folded")) {
			p->mode = PEVT_CC_FOLDED;
		} else if (prefix(tok, "caller")) {
			p->caller = true;
			*order_set = true;
		} else if (prefix(tok, "callee")) {
			p->caller = false;
			*order_set = true;
		} else if (prefix(tok, "function")) {
			/* the only key: address, srcline and branch are not done */
		} else if (prefix(tok, "address") || prefix(tok, "srcline") ||
			   prefix(tok, "branch")) {
			ret = -1;
			break;
		} else if (prefix(tok, "percent")) {
			p->value = PEVT_CC_PERCENT;
		} else if (prefix(tok, "period")) {
			p->value = PEVT_CC_PERIOD;
		} else if (prefix(tok, "count")) {
			p->value = PEVT_CC_COUNT;
		} else if (!pct_set) {
			p->min_percent = strtod(tok, &end);
			if (end == tok) {
				ret = -1;
				break;
			}
			pct_set = true;
		} else {
			p->print_limit = strtoul(tok, &end, 0);
			if (end == tok) {
				ret = -1;
				break;
			}
		}
	}
	free(s);
	return ret;
}
