/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - histograms of samples by sort keys (comm, pid, dso, sym, cpu),
 * with self and cumulative (children) periods, merged across threads and
 * sorted in perf report's output order (tools/perf/util/hist.c, sort.c).
 */
#ifndef __LIBPEVT_HIST_H
#define __LIBPEVT_HIST_H

#include <pevt/callchain.h>
#include <pevt/machine.h>

enum pevt_sort_key {
	PEVT_SORT_COMM,
	PEVT_SORT_PID,
	PEVT_SORT_DSO,
	PEVT_SORT_SYM,
	PEVT_SORT_CPU,
	PEVT_SORT_MAX,
};

struct pevt_hist_key {
	const char *comm;		/* interned */
	int32_t tid;
	int32_t cpu;
	struct pevt_dso *dso;
	struct pevt_sym *sym;
	uint64_t ip;			/* when !sym */
};

struct pevt_hist_entry {
	struct pevt_hist_key k;
	struct pevt_thread *thread;	/* first seen: pid key display */
	uint64_t ip;			/* first seen, for "object+offset" */
	uint64_t map_delta;		/* map start - pgoff: unmap_ip() */
	char level;
	/*
	 * First seen: that sample had no symbol.  perf sizes the columns by
	 * the entry's first sample's symbol (hists__calc_col_len(): an
	 * unresolved one widens Shared Object to 16), also when sym is not
	 * a sort key and so not in @k.
	 */
	bool first_unres;
	/*
	 * First seen: what of that sample the report's filters (--comm,
	 * --pid, --tid, --dso, --symbols) leave out, a PEVT_HIST_FILTER_*
	 * mask; an entry is shown if 0 (perf's he->filtered, set from its
	 * first sample's al->filtered, also for the callers it cumulates).
	 */
	uint8_t filtered;
	uint64_t period, period_acc, nr_samples;
	struct pevt_cc_node *cc;	/* call graph, NULL: none */
	uint64_t max_depth;		/* longest chain added to cc */
	/*
	 * Sequence number of the sample that set the "first seen" fields
	 * (thread, ip, map_delta, level), when samples were spread over
	 * threads out of order: a merge keeps the lower one's.  0: merges
	 * keep the destination's (slices merged in order).
	 */
	uint64_t seq;
};

#define PEVT_HIST_FILTER_THREAD	1	/* comm, pid, tid */
#define PEVT_HIST_FILTER_DSO	2
#define PEVT_HIST_FILTER_SYM	4

struct pevt_hists {
	struct pevt_hist_entry **v;	/* the entries [0, nr), in chunks (stable) */
	uint64_t *used;			/* open addressing: hash tag << 32 | index + 1; 0: free */
	size_t cap, nr;
	int keys[PEVT_SORT_MAX];	/* sort order */
	int nr_keys;
	uint64_t total_period, nr_samples;
	struct pevt_cc_arena arena;	/* the entries' call graphs */
	/*
	 * Equal children periods of one thread: deeper graph first (1, caller
	 * order) or last (-1, callee order), as perf puts callers above callees
	 * when it keeps call graphs; 0: no such rule.
	 */
	int depth_sort;
	int sort_threads;		/* pevt_hists__sorted(): > 1 sorts on two threads */
	/*
	 * pevt_hists__sorted(): always the three sorts on struct dec
	 * (sorted_exact()), not sorted_fast() that gives the same order
	 * (tests, PEVT_SORT_EXACT=1).
	 */
	bool sort_exact;
};

LIBPEVT_API int pevt_hists__init(struct pevt_hists *h, const int *keys, int nr_keys);
LIBPEVT_API void pevt_hists__exit(struct pevt_hists *h);
/* Key fields not in the sort keys must be zero (pevt_hists__key()). */
LIBPEVT_API struct pevt_hist_entry *pevt_hists__add(struct pevt_hists *h,
						    const struct pevt_hist_key *k);
LIBPEVT_API void pevt_hists__key(const struct pevt_hists *h, struct pevt_hist_key *k);
/*
 * The same add in steps, for a batch of keys: hash each, prefetch its
 * slot, then its entry, then add (each add's misses overlap the others').
 */
LIBPEVT_API uint64_t pevt_hists__hash(const struct pevt_hist_key *k);
LIBPEVT_API void pevt_hists__prefetch(const struct pevt_hists *h, uint64_t hash, bool entry_too);
LIBPEVT_API struct pevt_hist_entry *pevt_hists__add_hashed(struct pevt_hists *h,
							   const struct pevt_hist_key *k,
							   uint64_t hash);
LIBPEVT_API int pevt_hists__merge(struct pevt_hists *dst, struct pevt_hists *src);
/*
 * Each entry keyed by a comm gets @fn's comm for it instead (NULL or the
 * same: unchanged); entries that become equal are merged into the first
 * seen (perf's collapse after a comm__override()).  On -ENOMEM @h is
 * emptied.
 */
LIBPEVT_API int pevt_hists__rename_comms(struct pevt_hists *h,
					 const char *(*fn)(const struct pevt_hist_entry *e,
							   void *ctx),
					 void *ctx);
/* Entries in perf report's order; caller frees the array. */
LIBPEVT_API struct pevt_hist_entry **pevt_hists__sorted(struct pevt_hists *h, bool children,
							size_t *nr);
/* Add a chain (print order) to @e's call graph. */
LIBPEVT_API int pevt_hists__append_chain(struct pevt_hists *h, struct pevt_hist_entry *e,
					 const struct pevt_cc_entry *v, size_t n,
					 uint64_t period);
/* The same for @count samples of total @period. */
LIBPEVT_API int pevt_hists__append_chain_n(struct pevt_hists *h, struct pevt_hist_entry *e,
					   const struct pevt_cc_entry *v, size_t n,
					   uint64_t period, uint32_t count);
LIBPEVT_API bool pevt_hist_key__equal(const struct pevt_hist_key *a, const struct pevt_hist_key *b);

#endif
