/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - call graphs of hist entries, printed like perf report --stdio
 * prints them (tools/perf/util/callchain.c, ui/stdio/hist.c): graph
 * (absolute or relative "fractal" percentages), flat and folded, with a
 * threshold and a print limit.
 *
 * The chains of an entry are kept as a plain trie, one node per callchain
 * entry.  perf keeps a compressed trie (a node holds a run of entries and
 * is split where chains diverge or end); the compressed form is canonical,
 * so it is recovered when printing: a run continues through nodes where no
 * chain ends and that have exactly one child.  Tries built from different
 * slices of the samples merge into the trie of a single pass, so the
 * output does not depend on how samples were split over threads.
 */
#ifndef __LIBPEVT_CALLCHAIN_H
#define __LIBPEVT_CALLCHAIN_H

#include <stdio.h>
#include <pevt/machine.h>

/* One resolved callchain entry. */
struct pevt_cc_entry {
	struct pevt_dso *dso;		/* NULL: no map */
	struct pevt_sym *sym;		/* NULL: unresolved, printed as its ip */
	uint64_t ip;			/* raw ip */
};

struct pevt_cc_node {
	struct pevt_cc_entry e;
	uint64_t hit;			/* period of the chains ending here */
	uint64_t children_hit;		/* period of the chains going on */
	uint32_t count, children_count;	/* the same in samples */
	struct pevt_cc_node *child;	/* first child */
	struct pevt_cc_node *next;	/* next sibling */
	uint32_t nr_children;		/* more than a few: found through the arena's hash */
};

/* Node storage, freed as a whole; arenas can be spliced together. */
struct pevt_cc_arena {
	struct pevt_cc_chunk *chunks;
	size_t used;			/* nodes used in the first chunk */
	struct pevt_cc_slot *slots;	/* (parent, entry) -> child, for parents of many */
	size_t cap, nr;
};

enum pevt_cc_mode {
	PEVT_CC_GRAPH_ABS,		/* "graph": percent of the total */
	PEVT_CC_GRAPH_REL,		/* "fractal": percent of the parent */
	PEVT_CC_FLAT,
	PEVT_CC_FOLDED,
};

enum pevt_cc_value {
	PEVT_CC_PERCENT,
	PEVT_CC_PERIOD,
	PEVT_CC_COUNT,
};

struct pevt_cc_param {
	enum pevt_cc_mode mode;
	enum pevt_cc_value value;
	double min_percent;		/* threshold, percent */
	unsigned int print_limit;	/* 0: no limit */
	bool caller;			/* order: outermost caller first */
	bool skip_first;		/* --sort sym...: the root's first entry is the row */
};

LIBPEVT_API struct pevt_cc_node *pevt_cc__new_root(struct pevt_cc_arena *a);
/* Add the chain @v[0..n) (in print order) with @period; n == 0 adds nothing. */
LIBPEVT_API int pevt_cc__append(struct pevt_cc_arena *a, struct pevt_cc_node *root,
				const struct pevt_cc_entry *v, size_t n, uint64_t period);
/* The same for @count samples of total @period. */
LIBPEVT_API int pevt_cc__append_n(struct pevt_cc_arena *a, struct pevt_cc_node *root,
				  const struct pevt_cc_entry *v, size_t n, uint64_t period,
				  uint32_t count);
/* Merge @src into @dst; @src's nodes are reused, so @src's arena must be
 * spliced into @dst's (pevt_cc_arena__splice()). */
LIBPEVT_API void pevt_cc__merge(struct pevt_cc_arena *a, struct pevt_cc_node *dst,
				struct pevt_cc_node *src);
LIBPEVT_API void pevt_cc_arena__splice(struct pevt_cc_arena *dst, struct pevt_cc_arena *src);
LIBPEVT_API void pevt_cc_arena__free(struct pevt_cc_arena *a);
/*
 * Print the graph of one hist entry: @total is the event's total period,
 * @parent its (children or self) period, @min_hit the absolute threshold
 * (total * min_percent / 100, as perf truncates it).
 */
LIBPEVT_API void pevt_cc__fprintf(FILE *f, const struct pevt_cc_node *root,
				  const struct pevt_cc_param *p, uint64_t total,
				  uint64_t parent, uint64_t min_hit);
/* Parse perf report's -g/--call-graph argument into @p; -1 on error,
 * 1 for "none". */
LIBPEVT_API int pevt_cc__parse(struct pevt_cc_param *p, const char *arg, bool *order_set);
/* perf's name of an entry: the symbol, else the ip as %#lx. */
LIBPEVT_API const char *pevt_cc_entry__name(const struct pevt_cc_entry *e, char *buf, size_t sz);

#endif
