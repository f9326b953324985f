// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pevt report: perf report --stdio on a perf.data (file, pipe, --threads
 * directory, compressed), same rows and percentages as Debian's perf 6.1.
 *
 * Pipeline: data_reader (records) -> ordered (Weisbecker rounds / k-way
 * merge) -> machine (threads, comms, maps by time) -> symbols -> hists
 * (self and children periods per sort key) -> perf's output order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#include <pevt/callchain.h>
#include <pevt/inline.h>
#include <pevt/unwind.h>
#include <pevt/data_index.h>
#include <pevt/data_reader.h>
#include <pevt/hist.h>
#include <pevt/machine.h>
#include <pevt/ordered.h>

#include "flamegraph.h"
#include "main.h"
#include "target.h"

#define MAX_STACK	127	/* perf report's default --max-stack */
/* a sample's chain: the CALLCHAIN's, then as many unwound user frames */
/* the kernel's and the unwound entries, with room for inlined frames */
#define MAX_CHAIN	(4 * MAX_STACK)

/* A sample kept by the first pass: the record and its thread at its time. */
struct sref {
	const struct perf_event_header *ev;
	struct pevt_thread *t;
};

/*
 * A sample delivered out of order (a perf file whose round guarantee
 * broke: "N out of order events recorded"): perf resolves it against the
 * machine as of its delivery, so the second pass resolves samples[i] at
 * @time, not at its own (pevt_machine__clock()).  In sample order.
 */
struct late {
	size_t i;
	uint64_t time;
};

/* Samples with equal hist keys and chains, added up (cls_add()). */
struct cls {
	uint64_t hash;
	uint64_t period;
	uint32_t count;
	int n, evsel;
	char level;
	size_t off;			/* chain in the worker's pool */
	struct pevt_thread *t;
	const struct pevt_map *map;
	struct pevt_hist_key k;		/* the first sample's */
	struct pevt_hist_key mk;	/* and as compared (pevt_hists__key()) */
};

/* Second pass: one worker per contiguous slice of the samples. */
struct worker {
	struct report *r;
	size_t from, to;
	struct pevt_hists *hists;	/* one per evsel */
	uint8_t *modes;			/* cpumode of each callchain entry */
	struct pevt_unwind *unwind;	/* --call-graph dwarf samples */
	struct pevt_inline_cache *inl;	/* their inlined frames */
	uint64_t user_ips[MAX_STACK];	/* the sample's unwound frames, callee first */
	struct pevt_cc_entry *chain;	/* resolved entries, in walk order */
	char *levels;			/* their [k]/[.] levels */
	const struct pevt_map **map_of;	/* and maps */
	struct pevt_cc_entry *rev;	/* the chain caller first, for flame */
	struct flame flame;
	struct cls *cls;		/* samples added up (cls_add()) */
	size_t nr_cls;
	uint32_t *tab;			/* class index + 1, 0: free */
	size_t tab_cap;
	struct pevt_cc_entry *pool;	/* the classes' chains */
	char *pool_levels;
	const struct pevt_map **pool_maps;
	size_t pool_used;
	size_t mode_cap;
	uint64_t nr_bad;
	uint64_t dropped;		/* stream offset given back up to */
	uint64_t seq;			/* the sample's, in direct mode; else 0 */
	int err;
	pthread_t tid;
};

struct direct;

struct report {
	const char *input;
	int keys[PEVT_SORT_MAX];
	int nr_keys;
	double percent_limit;
	int children;			/* -1: like perf (on if callchains) */
	bool callchain_none;
	bool no_inline;			/* --no-inline */
	struct pevt_cc_param cc;	/* -g */
	bool cc_order_set;
	bool use_callchain;		/* print call graphs */
	const char *flame_path;		/* --flamegraph */
	struct flame flame;
	bool stats;
	bool quiet;			/* -q: no '#' lines, no warnings */
	bool show_nr;			/* -n: a Samples column (the entry's own) */
	/* --comm, --dso, --symbols (names), --pid, --tid: what is shown */
	struct strs { char **v; int n; } f_comm, f_dso, f_sym;
	struct ints { int *v; int n; } f_pid, f_tid;
	bool filters;			/* any of them */
	bool relative;			/* --percentage relative */
	size_t mem_cap;
	struct pevt_data *d;
	struct pevt_machine *m;
	struct pevt_hists *hists;	/* one per evsel */
	int nr_hists;
	bool use_children;
	uint64_t nr_bad;
	int nr_threads;			/* --threads, 0: the CPUs there are */
	bool no_index;			/* --no-index */
	struct sref *samples;		/* first pass, in time order */
	size_t nr_samples, cap_samples;
	struct late *late;		/* samples resolved later than their time */
	size_t nr_late, cap_late;
	char **arena;			/* copies of transient sample records */
	size_t nr_arena;
	size_t arena_used, arena_cap;
	struct direct *direct;		/* samples accounted as they come */
};

/* PEVT_REPORT_TIMES: where the time goes, stage by stage, on stderr. */
static bool show_times;
static struct timespec times_last;

static void stage_time(const char *what)
{
	struct timespec now;

	if (!show_times)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (what)
		fprintf(stderr, "report: %-12s %7.1f ms\n", what,
			(now.tv_sec - times_last.tv_sec) * 1e3 +
			(now.tv_nsec - times_last.tv_nsec) / 1e6);
	times_last = now;
}

/* Rendered from Documentation/man/pevt-report.1.md (scripts/mkhelp.sh). */
static int do_report_help(void)
{
	return print_help("report");
}

static int parse_sort(struct report *r, const char *arg)
{
	char *s = strdup(arg), *tok, *save = NULL;

	r->nr_keys = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		if (!strcmp(tok, "comm"))
			k = PEVT_SORT_COMM;
		else if (!strcmp(tok, "pid"))
			k = PEVT_SORT_PID;
		else if (!strcmp(tok, "dso"))
			k = PEVT_SORT_DSO;
		else if (!strcmp(tok, "sym"))	/* perf's "symbol" adds IPC columns */
			k = PEVT_SORT_SYM;
		else if (!strcmp(tok, "cpu"))
			k = PEVT_SORT_CPU;
		else {
			p_err("unknown sort key '%s' (comm, pid, dso, sym, cpu)", tok);
			free(s);
			return -EINVAL;
		}
		if (r->nr_keys == PEVT_SORT_MAX) {
			p_err("too many sort keys in '%s'", arg);
			free(s);
			return -EINVAL;
		}
		r->keys[r->nr_keys++] = k;
	}
	free(s);
	return r->nr_keys ? 0 : -EINVAL;
}

/* ---- processing ----------------------------------------------------------- */

struct node {
	struct pevt_dso *dso;
	struct pevt_sym *sym;
	uint64_t ip;
	char level;
	bool has_map;
};

/* unmap_ip(): map-relative address + delta = ip */
static uint64_t map_delta(const struct pevt_map *map)
{
	return map && !map->identity && !map->dso->kernel ? map->start - map->pgoff : 0;
}

static bool strs_has(const struct strs *l, const char *s)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static bool ints_has(const struct ints *l, int32_t v)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->v[i] == v)
			return true;
	return false;
}

/* perf's strlist of a comma separated option: each item once, in order. */
static int strs_parse(struct strs *l, const char *arg)
{
	char *s = strdup(arg), *tok, *save = NULL;

	if (!s)
		return -ENOMEM;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **v;

		if (strs_has(l, tok))
			continue;
		v = realloc(l->v, (l->n + 1) * sizeof(*v));
		if (!v || !(v[l->n] = strdup(tok))) {
			l->v = v ?: l->v;
			free(s);
			return -ENOMEM;
		}
		l->v = v;
		l->n++;
	}
	free(s);
	return 0;
}

static void strs_free(struct strs *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/*
 * What the filters leave out of a sample whose own entry has the full key
 * @k (before pevt_hists__key()), of thread @t, its map's @delta
 * (unmap_ip): perf's thread__is_filtered() and machine__resolve().  A
 * sample without a map is not left out by --dso; --symbols matches a
 * name or the symbol's address as "0x%llx".
 */
static uint8_t filter_bits(const struct report *r, const struct pevt_hist_key *k,
			   const struct pevt_thread *t, uint64_t delta)
{
	uint8_t f = 0;

	if (!r->filters)
		return 0;
	if ((r->f_comm.n && !(k->comm && strs_has(&r->f_comm, k->comm))) ||
	    (r->f_pid.n && !(t && ints_has(&r->f_pid, t->pid))) ||
	    (r->f_tid.n && !ints_has(&r->f_tid, k->tid)))
		f |= PEVT_HIST_FILTER_THREAD;
	if (r->f_dso.n && k->dso && !strs_has(&r->f_dso, k->dso->short_name) &&
	    !strs_has(&r->f_dso, k->dso->long_name))
		f |= PEVT_HIST_FILTER_DSO;
	if (r->f_sym.n) {
		bool in = false;

		if (k->sym) {
			char a[32];

			snprintf(a, sizeof(a), "0x%" PRIx64, k->sym->start + delta);
			in = strs_has(&r->f_sym, k->sym->name) || strs_has(&r->f_sym, a);
		}
		if (!in)
			f |= PEVT_HIST_FILTER_SYM;
	}
	return f;
}

/* A new entry takes its first sample's fields. */
static void first_seen(struct pevt_hist_entry *e, struct pevt_thread *t, char level, uint64_t ip,
		       uint64_t delta, bool unres, uint8_t filtered, uint64_t seq)
{
	if (e->level)
		return;
	e->level = level;
	e->first_unres = unres;
	e->filtered = filtered;
	e->thread = t;
	e->ip = ip;
	e->map_delta = delta;
	e->seq = seq;
}

static struct pevt_hist_entry *add(struct pevt_hists *h, struct pevt_hist_key *k,
				   struct pevt_thread *t, char level, uint64_t delta, uint8_t filtered,
				   uint64_t seq)
{
	uint64_t ip = k->ip;
	bool unres = !k->sym;
	struct pevt_hist_entry *e;

	pevt_hists__key(h, k);
	e = pevt_hists__add(h, k);
	if (e)
		first_seen(e, t, level, ip, delta, unres, filtered, seq);
	return e;
}

/*
 * Does @evsel's sample have a chain to unwind?  perf unwinds samples with
 * callchains only (sample__resolve_callchain()).
 */
static bool dwarf_chain(const struct pevt_data_evsel *evsel)
{
	return (evsel->attr.sample_type & PERF_SAMPLE_CALLCHAIN) && pevt_unwind__can(evsel);
}

/* Entry @n of the chain: @ip resolved in @cpumode at the sample's time. */
static void put_entry(struct worker *w, const struct pevt_sample *s, struct pevt_thread *t,
		      uint8_t cpumode, uint64_t ip, char *level, int n, struct pevt_addr_loc *al)
{
	struct pevt_addr_loc cl;

	pevt_machine__resolve(w->r->m, t, cpumode, ip, s->time, &cl);
	if (cl.sym || cl.map)
		*level = cpumode == PERF_RECORD_MISC_KERNEL ? 'k' : '.';
	w->chain[n].dso = cl.map ? cl.map->dso : NULL;
	w->chain[n].sym = cl.sym;
	w->chain[n].ip = ip;
	w->levels[n] = *level;
	w->map_of[n] = cl.map;
	if (al)
		*al = cl;
}

/* Room for @need entries in the chain arrays, keeping what they hold. */
static int chain_room(struct worker *w, size_t need)
{
	size_t cap = need * 2;
	void *p;

	if (need <= w->mode_cap)
		return 0;
#define GROW(f, sz)						\
	do {							\
		p = realloc(w->f, cap * (sz));			\
		if (!p)						\
			return -ENOMEM;				\
		w->f = p;					\
	} while (0)
	GROW(modes, sizeof(*w->modes));
	GROW(chain, sizeof(*w->chain));
	GROW(levels, 1);
	GROW(map_of, sizeof(*w->map_of));
	GROW(rev, sizeof(*w->rev));
#undef GROW
	w->mode_cap = cap;
	return 0;
}

/*
 * Entry @n, an unwound frame, replaced by the functions inlined at its
 * ip and then its own, innermost first with callee order, outermost
 * first with caller order (machine.c append_inlines(), srcline.c
 * inline_list__append()).  Returns the number of entries it became,
 * or -ENOMEM.  perf 6.1 does it for unwound frames only, not for the
 * entries of a CALLCHAIN (fp, or the kernel part of a dwarf sample).
 */
static int put_inlines(struct worker *w, int n, uint64_t addr, int room)
{
	struct pevt_cc_entry e = w->chain[n];
	struct pevt_sym *const *v;
	int k, nr;

	if (w->r->no_inline || !e.sym || !e.dso)
		return 1;
	if (!w->inl)
		w->inl = pevt_inline_cache__new(w->r->m);
	if (!w->inl)
		return -ENOMEM;
	nr = pevt_inline__frames(w->inl, e.dso, e.sym, addr, &v);
	if (nr <= 0)
		return nr < 0 ? nr : 1;
	if (nr > room)
		nr = room;	/* past MAX_CHAIN: the innermost ones only */
	if (nr <= 1 && v[0] == e.sym)
		return 1;
	if (chain_room(w, n + nr))
		return -ENOMEM;
	for (k = 0; k < nr; k++) {
		w->chain[n + k] = e;
		w->chain[n + k].sym = v[w->r->cc.caller ? nr - 1 - k : k];
		w->levels[n + k] = w->levels[n];
		w->map_of[n + k] = w->map_of[n];
	}
	return nr;
}

/*
 * The unwound user frames (perf's unwind__get_entries()), from entry @n
 * on, with their inlined frames as long as the chain stays under @limit.
 */
static int put_user(struct worker *w, const struct pevt_sample *s, struct pevt_thread *t,
		    int nr_user, char *level, int n, int limit)
{
	int k, nr;

	for (k = 0; k < nr_user; k++) {
		int j = w->r->cc.caller ? nr_user - 1 - k : k;
		struct pevt_addr_loc cl;

		if (chain_room(w, n + 1 + (nr_user - k)))
			return -ENOMEM;
		put_entry(w, s, t, PERF_RECORD_MISC_USER, w->user_ips[j], level, n, &cl);
		nr = put_inlines(w, n, cl.addr, limit - n - (nr_user - 1 - k));
		if (nr < 0)
			return nr;
		n += nr;
	}
	return n;
}

/*
 * The sample's callchain resolved in perf's walk order (outermost caller
 * first with caller order, perf report's order with --children; the
 * sample ip first with callee order), at most MAX_STACK entries counted
 * from where the walk starts (thread__resolve_callchain_sample()).  An
 * entry with neither map nor symbol takes the level of the one before
 * it, as perf reuses its addr_location.  A `--call-graph dwarf` sample
 * (user regs and stack) has the kernel part in its CALLCHAIN and its
 * user frames unwound, up to MAX_STACK more: with callee order the
 * CALLCHAIN's entries, then the unwound ones; with caller order the
 * unwound ones, then the CALLCHAIN's (thread__resolve_callchain()).
 * Returns the number of entries, or -1 for a corrupt chain (perf drops
 * it).
 */
static int resolve_chain(struct worker *w, const struct pevt_sample *s, struct pevt_thread *t,
			 char level)
{
	struct report *r = w->r;
	uint8_t cpumode = PERF_RECORD_MISC_USER;
	uint64_t i, k, need;
	int n = 0, nr = 0, nr_user = 0;

	if (dwarf_chain(s->evsel)) {
		if (!w->unwind)
			w->unwind = pevt_unwind__new(r->m);
		if (!w->unwind)
			return -ENOMEM;
		nr_user = pevt_unwind__user(w->unwind, t, s, w->user_ips, MAX_STACK);
		if (nr_user < 0)
			return nr_user;
	}
	need = s->nr_callchain + nr_user;
	if (chain_room(w, need))
		return -ENOMEM;
	for (i = 0; i < s->nr_callchain; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= PERF_CONTEXT_MAX) {
			if (ip == PERF_CONTEXT_HV)
				cpumode = PERF_RECORD_MISC_HYPERVISOR;
			else if (ip == PERF_CONTEXT_KERNEL)
				cpumode = PERF_RECORD_MISC_KERNEL;
			else if (ip == PERF_CONTEXT_USER)
				cpumode = PERF_RECORD_MISC_USER;
			else
				return -1;
		}
		w->modes[i] = cpumode;
	}
	if (r->cc.caller)
		n = put_user(w, s, t, nr_user, &level, n,
			     MAX_CHAIN - (s->nr_callchain < MAX_STACK ? (int)s->nr_callchain : MAX_STACK));
	if (n < 0 || chain_room(w, n + s->nr_callchain))
		return n < 0 ? n : -ENOMEM;
	for (k = 0; k < s->nr_callchain && nr < MAX_STACK; k++) {
		uint64_t j = r->cc.caller ? s->nr_callchain - 1 - k : k;
		uint64_t ip = s->callchain[j];

		if (ip >= PERF_CONTEXT_MAX)
			continue;
		put_entry(w, s, t, w->modes[j], ip, &level, n++, NULL);
		nr++;
	}
	if (!r->cc.caller)
		n = put_user(w, s, t, nr_user, &level, n, MAX_CHAIN);
	return n;
}

/* The sample's stack under its comm, outermost caller first (--flamegraph). */
static int flame_add(struct worker *w, const struct pevt_sample *s, int n,
		     const char *comm, const struct pevt_addr_loc *al)
{
	struct flame_comm *fc = flame__comm(&w->flame, comm);
	struct pevt_cc_entry leaf = {
		.dso = al->map ? al->map->dso : NULL, .sym = al->sym, .ip = s->ip,
	};
	const struct pevt_cc_entry *v = &leaf;
	int i;

	if (!fc)
		return -ENOMEM;
	fc->count++;
	if (n <= 0) {
		n = 1;		/* no (or a corrupt) callchain: the sample ip */
	} else if (w->r->cc.caller) {
		v = w->chain;
	} else {
		for (i = 0; i < n; i++)
			w->rev[i] = w->chain[n - 1 - i];
		v = w->rev;
	}
	if (!fc->root) {
		fc->root = pevt_cc__new_root(&w->flame.arena);
		if (!fc->root)
			return -ENOMEM;
	}
	return pevt_cc__append(&w->flame.arena, fc->root, v, n, s->period);
}

/*
 * One sample's contribution (or @count samples' of total @period, all
 * with the same hist keys and chain): its own entry, then with call
 * graphs or children the chain, entries created with this sample's
 * "first seen" fields.
 */
static int account(struct worker *w, struct pevt_hists *h, struct pevt_hist_key *k,
		   struct pevt_thread *t, char level, uint64_t delta,
		   const struct pevt_cc_entry *chain, const char *levels,
		   const struct pevt_map *const *map_of, int n, uint64_t period, uint32_t count)
{
	struct report *r = w->r;
	struct pevt_hist_key seen[MAX_CHAIN + 1];
	struct pevt_hist_entry *e;
	const char *comm = k->comm;
	int32_t tid = k->tid, cpu = k->cpu;
	/* perf: the callers cumulated take the sample's own al->filtered */
	uint8_t filtered = filter_bits(r, k, t, delta);
	int nr_seen = 0, i, err;

	e = add(h, k, t, level, delta, filtered, w->seq);
	if (!e)
		return -ENOMEM;
	e->period += period;
	e->nr_samples += count;
	h->total_period += period;
	h->nr_samples += count;
	if (r->use_children)
		e->period_acc += period;
	if (n <= 0 || (!r->use_children && !r->use_callchain))
		return 0;
	/* the sample's own entry gets the whole chain */
	if (r->use_callchain) {
		err = pevt_hists__append_chain_n(h, e, chain, n, period, count);
		if (err)
			return err;
	}
	if (!r->use_children)
		return 0;
	/*
	 * iter_add_next_cumulative_entry(): each distinct entry of the chain
	 * once per sample, with the rest of the chain from it on.
	 */
	seen[nr_seen++] = e->k;
	for (i = 0; i < n; i++) {
		struct pevt_hist_key ck = {
			.comm = comm, .tid = tid, .cpu = cpu, .dso = chain[i].dso,
			.sym = chain[i].sym, .ip = chain[i].ip,
		};
		int j;

		pevt_hists__key(h, &ck);
		for (j = 0; j < nr_seen; j++)
			if (pevt_hist_key__equal(&seen[j], &ck))
				break;
		if (j < nr_seen)
			continue;
		e = add(h, &ck, t, levels[i], map_delta(map_of[i]), filtered, w->seq);
		if (!e)
			return -ENOMEM;
		e->period_acc += period;
		seen[nr_seen++] = e->k;
		if (r->use_callchain) {
			err = pevt_hists__append_chain_n(h, e, chain + i, n - i, period, count);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * With call graphs or children a sample costs a walk of its chain into
 * the graphs (one per entry of the chain with children: quadratic in its
 * depth).  Samples of one worker with equal hist keys and equal resolved
 * chains do exactly the same but for their period, so they are added up
 * in classes and each class is accounted once, in the order of its first
 * sample, with that sample's fields: every entry and graph node is then
 * created by the same sample, in the same order, as one by one.
 */
#define CLS_MAX		(1u << 16)	/* classes before a flush */
#define CLS_POOL_MAX	(1u << 20)	/* their chain entries */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v * 0x9e3779b97f4a7c15ull;
	h ^= h >> 31;
	return h * 0xbf58476d1ce4e5b9ull;
}

static uint64_t cls_hash(int evsel, const struct pevt_hist_key *mk,
			 const struct pevt_cc_entry *chain, int n)
{
	uint64_t h = mix(evsel, n);
	int i;

	h = mix(h, (uintptr_t)mk->comm);
	h = mix(h, ((uint64_t)(uint32_t)mk->tid << 32) | (uint32_t)mk->cpu);
	h = mix(h, (uintptr_t)mk->dso);
	h = mix(h, (uintptr_t)mk->sym);
	h = mix(h, mk->ip);
	for (i = 0; i < n; i++) {
		h = mix(h, (uintptr_t)chain[i].dso);
		h = mix(h, chain[i].sym ? (uintptr_t)chain[i].sym : chain[i].ip);
	}
	return h ^ (h >> 29);
}

static bool cls_equal(const struct worker *w, const struct cls *c, uint64_t hash, int evsel,
		      const struct pevt_hist_key *mk, const struct pevt_cc_entry *chain, int n)
{
	const struct pevt_cc_entry *v = w->pool + c->off;
	int i;

	if (c->hash != hash || c->evsel != evsel || c->n != n || !pevt_hist_key__equal(&c->mk, mk))
		return false;
	for (i = 0; i < n; i++)
		if (v[i].dso != chain[i].dso || v[i].sym != chain[i].sym ||
		    (!v[i].sym && v[i].ip != chain[i].ip))
			return false;
	return true;
}

/*
 * Bring in what accounting class @i will read in its histogram: the table
 * slots of its keys (@entry false), later their entries (@entry true).
 * Hints only: the adds are the same, in the same order.
 */
static void cls_prefetch(struct worker *w, size_t i, bool entry)
{
	const struct cls *c = &w->cls[i];
	struct pevt_hists *h = &w->hists[c->evsel];
	const struct pevt_cc_entry *v = w->pool + c->off;
	int j;

	pevt_hists__prefetch(h, pevt_hists__hash(&c->mk), entry);
	if (!w->r->use_children)
		return;
	for (j = 0; j < c->n && j < 8; j++) {
		struct pevt_hist_key ck = {
			.comm = c->k.comm, .tid = c->k.tid, .cpu = c->k.cpu, .dso = v[j].dso,
			.sym = v[j].sym, .ip = v[j].ip,
		};

		pevt_hists__key(h, &ck);
		pevt_hists__prefetch(h, pevt_hists__hash(&ck), entry);
	}
}

#define CLS_SLOTS_AHEAD		8	/* classes ahead whose slots are prefetched */
#define CLS_ENTRIES_AHEAD	4	/* and whose entries */

/* Account the classes in the order of their first samples, then forget them. */
static int cls_flush(struct worker *w)
{
	size_t i;
	int err;

	for (i = 0; i < w->nr_cls; i++) {
		struct cls *c = &w->cls[i];

		if (i + CLS_SLOTS_AHEAD < w->nr_cls)
			cls_prefetch(w, i + CLS_SLOTS_AHEAD, false);
		if (i + CLS_ENTRIES_AHEAD < w->nr_cls)
			cls_prefetch(w, i + CLS_ENTRIES_AHEAD, true);

		err = account(w, &w->hists[c->evsel], &c->k, c->t, c->level, map_delta(c->map),
			      w->pool + c->off, w->pool_levels + c->off, w->pool_maps + c->off,
			      c->n, c->period, c->count);
		if (err)
			return err;
	}
	w->nr_cls = 0;
	w->pool_used = 0;
	memset(w->tab, 0, w->tab_cap * sizeof(*w->tab));
	return 0;
}

static int cls_add(struct worker *w, int evsel, struct pevt_hist_key *k, struct pevt_thread *t,
		   char level, const struct pevt_map *map, int n, uint64_t period)
{
	struct pevt_hist_key mk = *k;
	uint64_t hash;
	struct cls *c;
	size_t j;
	int err;

	if (n < 0)
		n = 0;
	pevt_hists__key(&w->hists[evsel], &mk);
	hash = cls_hash(evsel, &mk, w->chain, n);
	if (!w->tab) {
		w->tab_cap = 2 * CLS_MAX;
		w->tab = calloc(w->tab_cap, sizeof(*w->tab));
		w->cls = malloc(CLS_MAX * sizeof(*w->cls));
		w->pool = malloc((CLS_POOL_MAX + MAX_CHAIN) * sizeof(*w->pool));
		w->pool_levels = malloc(CLS_POOL_MAX + MAX_CHAIN);
		w->pool_maps = malloc((CLS_POOL_MAX + MAX_CHAIN) * sizeof(*w->pool_maps));
		if (!w->tab || !w->cls || !w->pool || !w->pool_levels || !w->pool_maps)
			return -ENOMEM;
	}
	for (j = hash & (w->tab_cap - 1); w->tab[j]; j = (j + 1) & (w->tab_cap - 1)) {
		c = &w->cls[w->tab[j] - 1];
		if (cls_equal(w, c, hash, evsel, &mk, w->chain, n)) {
			c->period += period;
			c->count++;
			return 0;
		}
	}
	if (w->nr_cls == CLS_MAX || w->pool_used + n > CLS_POOL_MAX) {
		err = cls_flush(w);
		if (err)
			return err;
		for (j = hash & (w->tab_cap - 1); w->tab[j]; j = (j + 1) & (w->tab_cap - 1))
			;
	}
	c = &w->cls[w->nr_cls++];
	w->tab[j] = w->nr_cls;
	c->hash = hash;
	c->evsel = evsel;
	c->n = n;
	c->k = *k;
	c->mk = mk;
	c->t = t;
	c->level = level;
	c->map = map;
	c->period = period;
	c->count = 1;
	c->off = w->pool_used;
	memcpy(w->pool + c->off, w->chain, n * sizeof(*w->pool));
	memcpy(w->pool_levels + c->off, w->levels, n);
	memcpy(w->pool_maps + c->off, w->map_of, n * sizeof(*w->pool_maps));
	w->pool_used += n;
	return 0;
}

static int process_parsed(struct worker *w, const struct pevt_sample *s, struct pevt_thread *t)
{
	struct report *r = w->r;
	struct pevt_hist_key k = { 0 };
	struct pevt_addr_loc al;
	int n, err;
	bool flame;

	pevt_machine__resolve(r->m, t, s->cpumode, s->ip, s->time, &al);
	k.comm = pevt_thread__comm(t, s->time);
	k.tid = s->tid;
	k.cpu = s->cpu;
	k.dso = al.map ? al.map->dso : NULL;
	k.sym = al.sym;
	k.ip = al.addr;
	flame = r->flame_path && s->evsel->idx == 0;
	n = 0;
	if ((s->nr_callchain || dwarf_chain(s->evsel)) &&
	    (r->use_children || r->use_callchain || flame)) {
		n = resolve_chain(w, s, t, al.level);
		if (n == -ENOMEM)
			return n;
	}
	if (flame) {
		err = flame_add(w, s, n, k.comm, &al);
		if (err)
			return err;
	}
	if (r->use_children || r->use_callchain)
		return cls_add(w, s->evsel->idx, &k, t, al.level, al.map, n, s->period);
	return account(w, &w->hists[s->evsel->idx], &k, t, al.level, map_delta(al.map), w->chain,
		       w->levels,
		       w->map_of, n, s->period, 1);
}

/* The time sample @i is resolved at, if not its own (struct late). */
static bool late_time(const struct report *r, size_t i, uint64_t *time)
{
	size_t lo = 0, hi = r->nr_late;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->late[mid].i < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == r->nr_late || r->late[lo].i != i)
		return false;
	*time = r->late[lo].time;
	return true;
}

static int process_sample(struct worker *w, size_t i)
{
	const struct sref *sr = &w->r->samples[i];
	struct pevt_sample s;

	if (pevt_data__parse_sample(w->r->d, sr->ev, &s)) {
		w->nr_bad++;
		return 0;
	}
	if (w->r->nr_late)
		late_time(w->r, i, &s.time);
	return process_parsed(w, &s, sr->t);
}

/*
 * Direct mode: without call graphs, children or a flame graph, a sample
 * needs nothing but the machine as of its time, which the sequential
 * first pass has just brought to that time when it meets the sample.  So
 * samples are accounted as they come: on the spot with one thread, or in
 * batches handed to the workers while the pass goes on (no list of all
 * samples, no second read of the records: memory bounded by the batches
 * in flight).  Batches go to whichever worker is free, so each entry
 * keeps its first sample's sequence number and the merge the lowest
 * one's "first seen" fields: the output of a single-threaded run.
 */
#define DIRECT_BATCH	4096	/* samples per batch */
#define DIRECT_BATCHES	8	/* in flight */

/*
 * A sample as the first pass hands it over: what needs the machine (its
 * thread, comm and map as of its time, which the pass goes on changing)
 * is looked up by the pass; the workers look up the symbol in the DSO
 * (symbols are loaded under the DSO's lock) and account.
 */
struct dsample {
	struct pevt_thread *t;
	const char *comm;
	struct pevt_dso *dso;		/* NULL: no map */
	uint64_t addr, map_delta, period;
	int32_t tid, cpu;
	int evsel;
	char level;
};

struct dbatch {
	struct dsample v[DIRECT_BATCH];
	size_t n;
	uint64_t seq;			/* of v[0] */
};

struct direct {
	struct worker *w;		/* nr_w workers; w[0] on the spot if spot */
	int nr_w, nr_alloc;
	bool spot;			/* accounted by the first pass's thread */
	pthread_mutex_t lock;
	pthread_cond_t queued;		/* a batch queued, or done */
	pthread_cond_t freed;		/* a batch given back */
	struct dbatch *batch[DIRECT_BATCHES];
	struct dbatch *queue[DIRECT_BATCHES];	/* FIFO of full batches */
	int head, nr_queued;
	struct dbatch *free[DIRECT_BATCHES];
	int nr_free;
	struct dbatch *cur;		/* being filled by the first pass */
	size_t batch_size;		/* DIRECT_BATCH; less for tests */
	uint64_t seq;			/* next sample's */
	bool done;
};

static void direct_push(struct direct *dm)
{
	pthread_mutex_lock(&dm->lock);
	dm->queue[(dm->head + dm->nr_queued++) % DIRECT_BATCHES] = dm->cur;
	dm->cur = NULL;
	pthread_cond_signal(&dm->queued);
	pthread_mutex_unlock(&dm->lock);
}

/*
 * process_parsed() without graphs, children or flame, from the pass's
 * lookups, for a batch: in groups, each key hashed and its table slot
 * prefetched, then its entry, then added in order (the same adds as one
 * by one; their cache misses overlap: the adds were 20-25% of a report).
 */
#define DIRECT_GROUP	16

static int direct_batch(struct worker *w, const struct dbatch *b)
{
	struct pevt_hist_key k[DIRECT_GROUP];
	uint64_t hash[DIRECT_GROUP], ip[DIRECT_GROUP];
	bool unres[DIRECT_GROUP];
	uint8_t filtered[DIRECT_GROUP];
	size_t i0, i, n;

	for (i0 = 0; i0 < b->n && !w->err; i0 += n) {
		n = b->n - i0 < DIRECT_GROUP ? b->n - i0 : DIRECT_GROUP;
		for (i = 0; i < n; i++) {
			const struct dsample *ds = &b->v[i0 + i];
			struct pevt_hists *h = &w->hists[ds->evsel];

			k[i] = (struct pevt_hist_key){
				.comm = ds->comm, .tid = ds->tid, .cpu = ds->cpu, .dso = ds->dso,
				.ip = ds->addr,
				.sym = ds->dso ? pevt_dso__sym_at(w->r->m, ds->dso, ds->addr) : NULL,
			};
			ip[i] = k[i].ip;
			unres[i] = !k[i].sym;
			filtered[i] = filter_bits(w->r, &k[i], ds->t, ds->map_delta);
			pevt_hists__key(h, &k[i]);
			hash[i] = pevt_hists__hash(&k[i]);
			pevt_hists__prefetch(h, hash[i], false);
		}
		for (i = 0; i < n; i++)
			pevt_hists__prefetch(&w->hists[b->v[i0 + i].evsel], hash[i], true);
		for (i = 0; i < n; i++) {
			const struct dsample *ds = &b->v[i0 + i];
			struct pevt_hists *h = &w->hists[ds->evsel];
			struct pevt_hist_entry *e = pevt_hists__add_hashed(h, &k[i], hash[i]);

			if (!e)
				return -ENOMEM;
			first_seen(e, ds->t, ds->level, ip[i], ds->map_delta, unres[i], filtered[i],
				   b->seq + i0 + i);
			e->period += ds->period;
			e->nr_samples++;
			h->total_period += ds->period;
			h->nr_samples++;
		}
	}
	return 0;
}

static int direct_sample(struct report *r, const struct pevt_sample *s, struct pevt_thread *t)
{
	struct direct *dm = r->direct;
	struct pevt_addr_loc al;
	struct dsample *ds;

	if (!dm->cur && dm->spot) {
		dm->cur = dm->batch[0];
		dm->cur->n = 0;
		dm->cur->seq = dm->seq + 1;
	} else if (!dm->cur) {
		pthread_mutex_lock(&dm->lock);
		while (!dm->nr_free)
			pthread_cond_wait(&dm->freed, &dm->lock);
		dm->cur = dm->free[--dm->nr_free];
		pthread_mutex_unlock(&dm->lock);
		dm->cur->n = 0;
		dm->cur->seq = dm->seq + 1;
	}
	ds = &dm->cur->v[dm->cur->n];
	pevt_machine__resolve_map(r->m, t, s->cpumode, s->ip, s->time, &al);
	ds->t = t;
	ds->comm = pevt_thread__comm(t, s->time);
	ds->dso = al.map ? al.map->dso : NULL;
	ds->addr = al.addr;
	ds->map_delta = map_delta(al.map);
	ds->period = s->period;
	ds->tid = s->tid;
	ds->cpu = s->cpu;
	ds->evsel = s->evsel->idx;
	ds->level = al.level;
	dm->seq++;
	if (++dm->cur->n < dm->batch_size)
		return 0;
	if (!dm->spot) {
		direct_push(dm);
		return 0;
	}
	/* one worker: this thread, on the spot */
	dm->cur = NULL;
	return dm->w[0].err = direct_batch(&dm->w[0], dm->batch[0]);
}

/* A worker of direct mode: batches until the first pass is done. */
static void *direct_run(void *arg)
{
	struct worker *w = arg;
	struct direct *dm = w->r->direct;

	for (;;) {
		struct dbatch *b;

		pthread_mutex_lock(&dm->lock);
		while (!dm->nr_queued && !dm->done)
			pthread_cond_wait(&dm->queued, &dm->lock);
		if (!dm->nr_queued) {
			pthread_mutex_unlock(&dm->lock);
			break;
		}
		b = dm->queue[dm->head];
		dm->head = (dm->head + 1) % DIRECT_BATCHES;
		dm->nr_queued--;
		pthread_mutex_unlock(&dm->lock);
		/* after an error, batches are still taken: the pass never waits forever */
		if (!w->err)
			w->err = direct_batch(w, b);
		pthread_mutex_lock(&dm->lock);
		dm->free[dm->nr_free++] = b;
		pthread_cond_signal(&dm->freed);
		pthread_mutex_unlock(&dm->lock);
	}
	return NULL;
}

/*
 * First pass: side-band records build the machine (by time), samples are
 * kept with their thread, so that the second pass can resolve them in any
 * order, from any thread, against the machine as it was at their time.
 */
static int keep_sample(struct report *r, const struct pevt_data_rec *rec, uint64_t time)
{
	const struct perf_event_header *ev = rec->ev;
	struct pevt_sample s;
	uint64_t at;
	struct sref *sr;

	if (pevt_data__parse_sample(r->d, ev, &s)) {
		r->nr_bad++;
		return 0;
	}
	/* delivered out of order: resolved as of its delivery, as perf does */
	if (time != UINT64_MAX && (at = pevt_machine__clock(r->m, time)) != s.time) {
		s.time = at;
		if (!r->direct) {
			if (r->nr_late == r->cap_late) {
				size_t ncap = r->cap_late ? r->cap_late * 2 : 64;
				struct late *n = realloc(r->late, ncap * sizeof(*n));

				if (!n)
					return -ENOMEM;
				r->late = n;
				r->cap_late = ncap;
			}
			r->late[r->nr_late].i = r->nr_samples;
			r->late[r->nr_late++].time = s.time;
		}
	}
	if (r->direct) {
		struct pevt_thread *t = pevt_machine__thread(r->m, s.pid, s.tid, s.time);

		return t ? direct_sample(r, &s, t) : -ENOMEM;
	}
	if (r->nr_samples == r->cap_samples) {
		size_t ncap = r->cap_samples ? r->cap_samples * 2 : 65536;
		struct sref *n = realloc(r->samples, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->samples = n;
		r->cap_samples = ncap;
	}
	if (rec->transient) {
		void *c;

		if (r->arena_cap - r->arena_used < ev->size) {
			char **na = realloc(r->arena, (r->nr_arena + 1) * sizeof(*na));

			if (!na)
				return -ENOMEM;
			r->arena = na;
			r->arena_cap = 1 << 22;
			r->arena[r->nr_arena] = malloc(r->arena_cap);
			if (!r->arena[r->nr_arena])
				return -ENOMEM;
			r->nr_arena++;
			r->arena_used = 0;
		}
		c = r->arena[r->nr_arena - 1] + r->arena_used;
		memcpy(c, ev, ev->size);
		r->arena_used += (ev->size + 7) & ~7u;
		ev = c;
	}
	sr = &r->samples[r->nr_samples++];
	sr->ev = ev;
	sr->t = pevt_machine__thread(r->m, s.pid, s.tid, s.time);
	return sr->t ? 0 : -ENOMEM;
}

/* Keep the worker's resident share of the mapped file near a window. */
static void drop_behind(struct worker *w, const void *ev)
{
	struct pevt_data *d = w->r->d;
	int i;

	for (i = 0; i < pevt_data__nr_streams(d); i++) {
		const uint8_t *base = pevt_data__stream_base(d, i);
		uint64_t off, size, pos;

		if (!base || pevt_data__section(d, i, &off, &size) ||
		    (const uint8_t *)ev < base + off || (const uint8_t *)ev >= base + off + size)
			continue;
		pos = (const uint8_t *)ev - base;
		if (pos > w->dropped + 2 * PEVT_DATA_WINDOW) {
			if (!w->dropped)
				w->dropped = pos > 4 * PEVT_DATA_WINDOW ? pos - 4 * PEVT_DATA_WINDOW : 0;
			pevt_data__drop(d, i, w->dropped, pos - PEVT_DATA_WINDOW);
			w->dropped = pos - PEVT_DATA_WINDOW;
		}
		return;
	}
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	size_t i;

	for (i = w->from; i < w->to && !w->err; i++) {
		w->err = process_sample(w, i);
		if ((i & 4095) == 0)
			drop_behind(w, w->r->samples[i].ev);
	}
	if (!w->err)
		w->err = cls_flush(w);
	return NULL;
}

/* A histogram per evsel (a pipe's come with its records). */
static int grow_hists(struct report *r, int n)
{
	if (n > r->nr_hists) {
		struct pevt_hists *nh = realloc(r->hists, n * sizeof(*nh));
		int i;

		if (!nh)
			return -ENOMEM;
		r->hists = nh;
		for (i = r->nr_hists; i < n; i++)
			pevt_hists__init(&nh[i], r->keys, r->nr_keys);
		r->nr_hists = n;
	}
	return 0;
}

/* The CPUs there are, or --threads. */
static int nr_workers(const struct report *r)
{
	int n = r->nr_threads;

	if (n < 1)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n;
}

static struct worker *workers_new(struct report *r, int n)
{
	struct worker *w = calloc(n, sizeof(*w));
	int i, e;

	if (!w)
		return NULL;
	for (i = 0; i < n; i++) {
		w[i].r = r;
		w[i].hists = calloc(r->nr_hists ?: 1, sizeof(*w[i].hists));
		if (!w[i].hists) {
			while (i--)
				free(w[i].hists);
			free(w);
			return NULL;
		}
		for (e = 0; e < r->nr_hists; e++)
			pevt_hists__init(&w[i].hists[e], r->keys, r->nr_keys);
	}
	return w;
}

/* The workers' histograms into the report's, in worker order; frees them. */
static int workers_merge(struct report *r, struct worker *w, int n)
{
	int i, e, err = 0;

	for (i = 0; i < n; i++) {
		if (w[i].err && !err)
			err = w[i].err;
		r->nr_bad += w[i].nr_bad;
		for (e = 0; e < r->nr_hists; e++) {
			if (!err)
				err = pevt_hists__merge(&r->hists[e], &w[i].hists[e]);
			pevt_hists__exit(&w[i].hists[e]);
		}
		free(w[i].hists);
		free(w[i].modes);
		pevt_unwind__delete(w[i].unwind);
		pevt_inline_cache__delete(w[i].inl);
		free(w[i].chain);
		free(w[i].levels);
		free(w[i].map_of);
		free(w[i].rev);
		free(w[i].cls);
		free(w[i].tab);
		free(w[i].pool);
		free(w[i].pool_levels);
		free(w[i].pool_maps);
		if (!err)
			err = flame__merge(&r->flame, &w[i].flame);
		flame__exit(&w[i].flame);
	}
	free(w);
	return err;
}

/*
 * Second pass: N workers on contiguous slices, merged in slice order, so
 * every entry's "first seen" fields are those of a single-threaded run
 * and the output is the same for any N.
 */
static int run_workers(struct report *r)
{
	int n = nr_workers(r), i;
	struct worker *w;

	if (!r->nr_samples)
		return 0;
	if ((size_t)n > r->nr_samples / 1024 + 1)
		n = r->nr_samples / 1024 + 1;	/* not worth a thread */
	w = workers_new(r, n);
	if (!w)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		w[i].from = r->nr_samples * i / n;
		w[i].to = r->nr_samples * (i + 1) / n;
		if (i && pthread_create(&w[i].tid, NULL, worker_run, &w[i]))
			w[i].err = -EAGAIN;
	}
	worker_run(&w[0]);
	for (i = 0; i < n; i++) {
		if (i && !w[i].err)
			pthread_join(w[i].tid, NULL);
		else if (i && w[i].err == -EAGAIN)
			worker_run(&w[i]);
	}
	return workers_merge(r, w, n);
}

/* Direct mode for the sequential first pass, if it applies (see above). */
static int direct_start(struct report *r)
{
	struct direct *dm;
	int n = nr_workers(r), i;

	if (r->use_children || r->use_callchain || r->flame_path || r->stats ||
	    pevt_data__is_pipe(r->d))
		return 0;
	if (grow_hists(r, pevt_data__nr_evsels(r->d)))
		return -ENOMEM;
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return -ENOMEM;
	/*
	 * --threads N: this thread reads the records (most of the work),
	 * N - 1 workers account; with one, this thread does both.
	 */
	if (n > 1)
		n--;
	else
		dm->spot = true;
	dm->w = workers_new(r, n);
	if (!dm->w) {
		free(dm);
		return -ENOMEM;
	}
	dm->nr_w = dm->nr_alloc = n;
	/* PEVT_REPORT_BATCH: smaller batches, so tests spread a small file over threads */
	dm->batch_size = getenv("PEVT_REPORT_BATCH") ? strtoul(getenv("PEVT_REPORT_BATCH"), NULL, 0) : 0;
	if (!dm->batch_size || dm->batch_size > DIRECT_BATCH)
		dm->batch_size = DIRECT_BATCH;
	r->direct = dm;
	if (dm->spot) {
		/* one batch, accounted by this thread when full */
		dm->batch[0] = malloc(sizeof(*dm->batch[0]));
		if (!dm->batch[0]) {
			free(dm->w);
			free(dm);
			r->direct = NULL;
			return -ENOMEM;
		}
		return 0;
	}
	pthread_mutex_init(&dm->lock, NULL);
	pthread_cond_init(&dm->queued, NULL);
	pthread_cond_init(&dm->freed, NULL);
	for (i = 0; i < DIRECT_BATCHES; i++) {
		dm->batch[i] = malloc(sizeof(*dm->batch[i]));
		if (!dm->batch[i])
			break;
		dm->free[dm->nr_free++] = dm->batch[i];
	}
	for (i = 0; i < n && dm->nr_free == DIRECT_BATCHES; i++)
		if (pthread_create(&dm->w[i].tid, NULL, direct_run, &dm->w[i]))
			break;
	if (i < n) {
		/* no threads (or memory): the ones started end at done, then one on the spot */
		dm->done = true;
		pthread_cond_broadcast(&dm->queued);
		while (i--)
			pthread_join(dm->w[i].tid, NULL);
		/* keep batch[0] (if it was allocated) for the one on the spot */
		for (i = 1; i < DIRECT_BATCHES; i++) {
			free(dm->batch[i]);
			dm->batch[i] = NULL;
		}
		dm->nr_free = 0;
		dm->done = false;
		dm->nr_w = 1;
		dm->spot = true;
		if (!dm->batch[0])
			return -ENOMEM;
	}
	return 0;
}

/*
 * A thread's first comm replaces its ":tid" for the samples before it too
 * (pevt_thread__renamed()); direct mode keyed those samples as they came,
 * by ":tid": @e's new name, if so.
 */
static const char *overridden_comm(const struct pevt_hist_entry *e, void *ctx)
{
	return e->thread ? pevt_thread__renamed(e->thread, e->k.comm) : NULL;
}

/* The last batch, the workers' end and their histograms merged. */
static int direct_finish(struct report *r)
{
	struct direct *dm = r->direct;
	int i, n;

	if (!dm)
		return 0;
	n = dm->nr_w;
	if (dm->spot) {
		if (dm->cur && !dm->w[0].err)
			dm->w[0].err = direct_batch(&dm->w[0], dm->cur);
		free(dm->batch[0]);
	} else {
		if (dm->cur)
			direct_push(dm);
		pthread_mutex_lock(&dm->lock);
		dm->done = true;
		pthread_cond_broadcast(&dm->queued);
		pthread_mutex_unlock(&dm->lock);
		for (i = 0; i < n; i++)
			pthread_join(dm->w[i].tid, NULL);
		for (i = 0; i < DIRECT_BATCHES; i++)
			free(dm->batch[i]);
		pthread_mutex_destroy(&dm->lock);
		pthread_cond_destroy(&dm->queued);
		pthread_cond_destroy(&dm->freed);
	}
	/* workers_new() sized the workers' arrays: no evsel came later (no pipe) */
	i = workers_merge(r, dm->w, dm->nr_alloc);
	free(dm);
	r->direct = NULL;
	for (n = 0; n < r->nr_hists && !i; n++)
		i = pevt_hists__rename_comms(&r->hists[n], overridden_comm, NULL);
	return i;
}

static int on_record(struct pevt_data *d, const struct pevt_data_rec *rec, uint64_t time,
		     void *ctx)
{
	struct report *r = ctx;

	if (grow_hists(r, pevt_data__nr_evsels(d)))
		return -ENOMEM;
	switch (rec->ev->type) {
	case PERF_RECORD_SAMPLE:
		return keep_sample(r, rec, time);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return pevt_machine__process(r->m, rec->ev) == -ENOMEM ? -ENOMEM : 0;
	default:
		return 0;
	}
}

/* ---- the indexed first pass ---------------------------------------------- */

/*
 * With a HEADER_PEVT_INDEX section (pevt data index), the first pass walks
 * the index's slices on N threads: each parses its records and keeps the
 * samples and side-band records with their times, sorted by (time, file
 * offset).  The main thread then merges the threads' lists in that order
 * into the machine and the sample list.  That is the order the sequential
 * path (Weisbecker's rounds) delivers them in whenever no record is older
 * than what an earlier round already flushed, which the walk checks per
 * round: if it does not hold, or the file has what only the sequential
 * reader handles (compressed or user records, records without a time),
 * the sequential path runs instead, so the output is the same either way.
 */
struct ixitem {
	uint64_t time;
	const struct perf_event_header *ev;	/* its address: file order */
	uint32_t pid, tid;
	bool sample;
};

struct ixround {
	uint64_t min, max, nr;
};

struct ixscan {
	struct report *r;
	const struct pevt_index *idx;
	uint64_t from, to;		/* slices [from, to) */
	struct ixitem *v;		/* delivered, in (time, file) order */
	size_t nr, cap;
	struct ixitem *q;		/* queued: Weisbecker's rounds */
	size_t nr_q, cap_q;
	uint64_t max_time, next_flush;
	bool have_flush;
	struct ixround *rounds;
	size_t nr_rounds, cap_rounds;
	const struct perf_event_header **meta;	/* EVENT_UPDATE, in file order */
	size_t nr_meta, cap_meta;
	struct pevt_data_stats st;
	uint64_t nr_bad;
	int fallback;			/* 1: quietly, 2: with why[] */
	char why[320];
	pthread_t tid;
};

static int ix_fallback(struct ixscan *s, int how, const char *fmt, ...)
{
	va_list ap;

	if (s->fallback)
		return -1;
	s->fallback = how;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(s->why, sizeof(s->why), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int ix_round(struct ixscan *s, const struct ixround *rd)
{
	if (s->nr_rounds == s->cap_rounds) {
		size_t ncap = s->cap_rounds ? s->cap_rounds * 2 : 256;
		struct ixround *n = realloc(s->rounds, ncap * sizeof(*n));

		if (!n)
			return ix_fallback(s, 1, NULL);
		s->rounds = n;
		s->cap_rounds = ncap;
	}
	s->rounds[s->nr_rounds++] = *rd;
	return 0;
}

static inline bool ix_less(const struct ixitem *x, const struct ixitem *y)
{
	return x->time < y->time || (x->time == y->time && x->ev < y->ev);
}

static int cmp_ixitem(const void *a, const void *b)
{
	const struct ixitem *x = a, *y = b;

	return ix_less(x, y) ? -1 : ix_less(y, x);
}

/*
 * Sort by (time, file order).  A round is a few runs already in order
 * (one per CPU buffer drained), so a natural merge sort: find the runs,
 * merge neighbours until one is left.  Falls back to qsort() without
 * memory for the merge buffer.
 */
static void ix_sort(struct ixitem *v, size_t n)
{
	struct ixitem *tmp, *src = v, *dst;
	size_t *runs, nr = 0, i, cap = 1024;

	if (n < 2)
		return;
	tmp = malloc(n * sizeof(*tmp));
	runs = malloc(cap * sizeof(*runs));
	if (!tmp || !runs)
		goto slow;
	runs[nr++] = 0;
	for (i = 1; i < n; i++)
		if (ix_less(&v[i], &v[i - 1])) {
			if (nr == cap) {
				size_t *nrn = realloc(runs, cap * 2 * sizeof(*runs));

				if (!nrn)
					goto slow;
				runs = nrn;
				cap *= 2;
			}
			runs[nr++] = i;
		}
	dst = tmp;
	while (nr > 1) {
		size_t k, out = 0;

		for (k = 0; k < nr; k += 2) {
			size_t a = runs[k], am = k + 1 < nr ? runs[k + 1] : n;
			size_t b = am, bm = k + 2 < nr ? runs[k + 2] : n, o = a;

			while (a < am && b < bm)
				dst[o++] = ix_less(&src[b], &src[a]) ? src[b++] : src[a++];
			while (a < am)
				dst[o++] = src[a++];
			while (b < bm)
				dst[o++] = src[b++];
			runs[out++] = runs[k];
		}
		nr = out;
		tmp = src;
		src = dst;
		dst = tmp;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(src == v ? dst : src);
	free(runs);
	return;
slow:
	free(tmp);
	free(runs);
	qsort(v, n, sizeof(*v), cmp_ixitem);
}

/*
 * Like ordered.c, per thread: at the end of a round the queued records
 * not newer than @limit (the newest of the rounds before) go out sorted.
 * Whether that makes one sorted stream is checked over all the threads'
 * rounds afterwards (ix_in_order()).
 */
static int ix_flush(struct ixscan *s, uint64_t limit)
{
	size_t k = 0;

	ix_sort(s->q, s->nr_q);
	while (k < s->nr_q && s->q[k].time <= limit)
		k++;
	if (s->nr + k > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 65536;
		struct ixitem *n;

		while (ncap < s->nr + k)
			ncap *= 2;
		n = realloc(s->v, ncap * sizeof(*n));
		if (!n)
			return ix_fallback(s, 1, NULL);
		s->v = n;
		s->cap = ncap;
	}
	memcpy(s->v + s->nr, s->q, k * sizeof(*s->q));
	s->nr += k;
	memmove(s->q, s->q + k, (s->nr_q - k) * sizeof(*s->q));
	s->nr_q -= k;
	return 0;
}

static int ix_slice(struct ixscan *s, uint64_t i)
{
	struct pevt_data *d = s->r->d;
	const struct pevt_index_entry *e = &s->idx->e[i];
	const uint8_t *base = pevt_data__stream_base(d, 0);
	uint64_t pos = e->offset, end = e->offset + e->size;
	struct ixround rd = { UINT64_MAX, 0, 0 };
	uint32_t last_type = 0;

	while (pos < end) {
		const struct perf_event_header *h = (const void *)(base + pos);
		uint64_t t = UINT64_MAX;
		uint32_t type;

		if (end - pos < sizeof(*h) || h->size < sizeof(*h) || h->size > end - pos)
			return ix_fallback(s, 2, "slice %" PRIu64 " at offset %#" PRIx64 " is not "
					   "on record boundaries: at offset %#" PRIx64 " a record "
					   "of %u bytes, %" PRIu64 " left in the slice", i, e->offset,
					   pos, end - pos < sizeof(*h) ? 0 : h->size, end - pos);
		type = h->type;
		last_type = type;
		/* one zstd stream through the file; odd records are copied */
		if (type == PERF_RECORD_COMPRESSED || ((h->size | (uintptr_t)h) & 7))
			return ix_fallback(s, 1, NULL);
		pevt_data_stats__account(&s->st, h);
		if (type == PERF_RECORD_FINISHED_ROUND) {
			if (ix_round(s, &rd))
				return -1;
			if (s->have_flush && ix_flush(s, s->next_flush))
				return -1;
			s->next_flush = s->max_time;
			s->have_flush = true;
			rd = (struct ixround){ UINT64_MAX, 0, 0 };
			pos += h->size;
			continue;
		}
		/*
		 * Records that change the reader's state: attrs and features
		 * change how later records parse, build ids how DSOs load, so
		 * only the sequential reader takes them; an event's new name
		 * matters only for the output and is applied after the walk.
		 */
		if (type == PERF_RECORD_COMPRESSED || type == PERF_RECORD_HEADER_ATTR ||
		    type == PERF_RECORD_HEADER_FEATURE || type == PERF_RECORD_HEADER_BUILD_ID)
			return ix_fallback(s, 1, NULL);
		if (type == PERF_RECORD_EVENT_UPDATE) {
			if (s->nr_meta == s->cap_meta) {
				size_t ncap = s->cap_meta ? s->cap_meta * 2 : 16;
				const struct perf_event_header **n = realloc(s->meta, ncap * sizeof(*n));

				if (!n)
					return ix_fallback(s, 1, NULL);
				s->meta = n;
				s->cap_meta = ncap;
			}
			s->meta[s->nr_meta++] = h;
		}
		if (type < PERF_RECORD_USER_TYPE_START)
			t = pevt_data__time_of(d, h);
		if (t != UINT64_MAX) {
			rd.min = t < rd.min ? t : rd.min;
			rd.max = t > rd.max ? t : rd.max;
			rd.nr++;
		}
		switch (type) {
		case PERF_RECORD_SAMPLE:
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT: {
			struct pevt_sample smp;
			struct ixitem *it;

			if (t == UINT64_MAX)
				return ix_fallback(s, 1, NULL);	/* delivered as read */
			if (type == PERF_RECORD_SAMPLE && pevt_data__parse_sample(d, h, &smp)) {
				s->nr_bad++;
				break;
			}
			if (s->nr_q == s->cap_q) {
				size_t ncap = s->cap_q ? s->cap_q * 2 : 4096;
				struct ixitem *n = realloc(s->q, ncap * sizeof(*n));

				if (!n)
					return ix_fallback(s, 1, NULL);
				s->q = n;
				s->cap_q = ncap;
			}
			if (t > s->max_time)
				s->max_time = t;
			it = &s->q[s->nr_q++];
			it->time = t;
			it->ev = h;
			it->sample = type == PERF_RECORD_SAMPLE;
			if (it->sample) {
				it->pid = smp.pid;
				it->tid = smp.tid;
			}
			break;
		}
		default:
			break;
		}
		pos += h->size;
	}
	if (i + 1 < s->idx->hdr.nr && last_type != PERF_RECORD_FINISHED_ROUND)
		return ix_fallback(s, 2, "slice %" PRIu64 " at offset %#" PRIx64 " does not end "
				   "on a round boundary (at offset %#" PRIx64 ")", i, e->offset, end);
	if (rd.nr)
		return ix_round(s, &rd);
	return 0;
}

static void *ix_run(void *arg)
{
	struct ixscan *s = arg;
	uint64_t i, nr = 0;

	/* room for every record of the slices: no copies while growing */
	for (i = s->from; i < s->to; i++)
		nr += s->idx->e[i].nr_records;
	if (nr && nr < (1ull << 32)) {
		s->v = malloc(nr * sizeof(*s->v));
		s->cap = s->v ? nr : 0;
	}

	for (i = s->from; i < s->to && !s->fallback; i++)
		ix_slice(s, i);
	if (!s->fallback)
		ix_flush(s, UINT64_MAX);
	return NULL;
}

/*
 * Weisbecker's rounds deliver in (time, file order) iff no record of round
 * j is older than the newest of rounds 0..j-2 (what the flush at the end
 * of round j-1 may have delivered), and two rounds never outgrow the
 * queue's memory cap.
 */
static bool ix_in_order(struct ixscan *s, int n, size_t mem_cap)
{
	uint64_t newest_before = 0, newest_prev = 0, nr_prev = 0;
	bool have_before = false, have_prev = false;
	size_t per_rec = 64;	/* a queue entry (ordered.c), rounded up */
	int k;
	size_t j;

	for (k = 0; k < n; k++) {
		for (j = 0; j < s[k].nr_rounds; j++) {
			const struct ixround *rd = &s[k].rounds[j];

			if (rd->nr && have_before && rd->min < newest_before)
				return false;
			if ((nr_prev + rd->nr) * per_rec > mem_cap)
				return false;
			if (have_prev) {
				newest_before = newest_prev > newest_before ? newest_prev : newest_before;
				have_before = true;
			}
			if (rd->nr) {
				newest_prev = have_prev && newest_prev > rd->max ? newest_prev : rd->max;
				have_prev = true;
			}
			nr_prev = rd->nr;
		}
	}
	return true;
}

/*
 * 1: the first pass is done from the index; 0: no (usable) index, run the
 * sequential one; -errno: out of memory in the machine.
 */
static int indexed_first_pass(struct report *r)
{
	struct pevt_index idx;
	char why[512] = "";
	struct ixscan *s;
	size_t *pos;
	int n, i, ret, err = 0;
	const char *dbg = "";
	struct timespec ts, tw;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ret = pevt_index__read(r->input, r->d, &idx, why, sizeof(why));
	if (ret < 0)
		fprintf(stderr, "Warning: %s: ignoring the index: %s\n", r->input, why);
	if (ret <= 0)
		return 0;
	n = r->nr_threads;
	if (n < 1)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	if ((uint64_t)n > idx.hdr.nr)
		n = idx.hdr.nr;
	s = calloc(n, sizeof(*s));
	pos = calloc(n, sizeof(*pos));
	if (!s || !pos) {
		free(s);
		free(pos);
		pevt_index__exit(&idx);
		return 0;
	}
	/* contiguous runs of slices, balanced by bytes */
	for (i = 0; i < n; i++) {
		s[i].r = r;
		s[i].idx = &idx;
	}
	{
		uint64_t total = idx.hdr.data_size, acc = 0, k;

		i = 0;
		s[0].from = 0;
		for (k = 0; k < idx.hdr.nr; k++) {
			acc += idx.e[k].size;
			if (i + 1 < n && acc * n >= total * (uint64_t)(i + 1) && k + 1 < idx.hdr.nr) {
				s[i].to = k + 1;
				s[++i].from = k + 1;
			}
		}
		s[i].to = idx.hdr.nr;
		for (i = i + 1; i < n; i++)
			s[i].from = s[i].to = idx.hdr.nr;
	}
	for (i = 1; i < n; i++)
		if (pthread_create(&s[i].tid, NULL, ix_run, &s[i]))
			s[i].fallback = 3;
	ix_run(&s[0]);
	for (i = 1; i < n; i++) {
		if (s[i].fallback != 3)
			pthread_join(s[i].tid, NULL);
		else {
			s[i].fallback = 0;
			ix_run(&s[i]);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &tw);
	ok = true;
	for (i = 0; i < n && ok; i++)
		if (s[i].fallback) {
			if (s[i].fallback == 2)
				fprintf(stderr, "Warning: %s: ignoring the index: %s\n", r->input,
					s[i].why);
			ok = false;
		}
	if (!ok)
		dbg = "the walk of a slice stopped (compressed, user or untimed records)";
	if (ok && !ix_in_order(s, n, r->mem_cap ? r->mem_cap : (size_t)1 << 30)) {
		ok = false;
		dbg = "a record older than an earlier round's flush (misordered)";
	}
	ret = 0;
	if (ok) {
		struct pevt_data_stats *st = pevt_data__stats(r->d);
		size_t total = 0;

		for (i = 0; i < n; i++)
			total += s[i].nr;
		if (total > r->cap_samples) {
			struct sref *nv = realloc(r->samples, total * sizeof(*nv));

			if (nv) {
				r->samples = nv;
				r->cap_samples = total;
			}
		}

		/* the merge: machine and samples in (time, offset) order */
		for (;;) {
			int best = -1;
			const struct ixitem *it;

			for (i = 0; i < n; i++)
				if (pos[i] < s[i].nr &&
				    (best < 0 || ix_less(&s[i].v[pos[i]], &s[best].v[pos[best]])))
					best = i;
			if (best < 0)
				break;
			it = &s[best].v[pos[best]++];
			if (!it->sample) {
				if (pevt_machine__process(r->m, it->ev) == -ENOMEM) {
					err = -ENOMEM;
					break;
				}
				continue;
			}
			if (r->nr_samples == r->cap_samples) {
				size_t ncap = r->cap_samples ? r->cap_samples * 2 : 65536;
				struct sref *nv = realloc(r->samples, ncap * sizeof(*nv));

				if (!nv) {
					err = -ENOMEM;
					break;
				}
				r->samples = nv;
				r->cap_samples = ncap;
			}
			r->samples[r->nr_samples].ev = it->ev;
			r->samples[r->nr_samples].t = pevt_machine__thread(r->m, it->pid, it->tid,
									    it->time);
			if (!r->samples[r->nr_samples++].t) {
				err = -ENOMEM;
				break;
			}
		}
		for (i = 0; i < n; i++) {
			uint32_t t;
			size_t j;

			for (j = 0; j < s[i].nr_meta; j++)
				pevt_data__process_meta(r->d, s[i].meta[j]);
			for (t = 0; t < PERF_RECORD_HEADER_MAX; t++)
				st->nr[t] += s[i].st.nr[t];
			st->nr_unknown += s[i].st.nr_unknown;
			st->bytes += s[i].st.bytes;
			st->total_lost += s[i].st.total_lost;
			st->total_lost_samples += s[i].st.total_lost_samples;
			r->nr_bad += s[i].nr_bad;
		}
		ret = err ? err : 1;
		if (getenv("PEVT_INDEX_DEBUG"))
		{
			struct timespec tm;

			clock_gettime(CLOCK_MONOTONIC, &tm);
			fprintf(stderr, "index: first pass from %" PRIu64 " slices on %d threads"
				" (walk %.3f s, merge %.3f s)\n", idx.hdr.nr, n,
				(tw.tv_sec - ts.tv_sec) + (tw.tv_nsec - ts.tv_nsec) / 1e9,
				(tm.tv_sec - tw.tv_sec) + (tm.tv_nsec - tw.tv_nsec) / 1e9);
		}
	} else if (getenv("PEVT_INDEX_DEBUG")) {
		fprintf(stderr, "index: not used (%s), sequential first pass\n", dbg);
	}
	for (i = 0; i < n; i++) {
		free(s[i].v);
		free(s[i].rounds);
		free(s[i].meta);
		free(s[i].q);
	}
	free(s);
	free(pos);
	pevt_index__exit(&idx);
	return ret;
}

/* ---- output --------------------------------------------------------------- */

static const char *const key_header[PEVT_SORT_MAX] = {
	[PEVT_SORT_COMM] = "Command", [PEVT_SORT_PID] = "    Pid:Command",
	[PEVT_SORT_DSO] = "Shared Object", [PEVT_SORT_SYM] = "Symbol",
	[PEVT_SORT_CPU] = "CPU",
};

static unsigned int umax(unsigned int a, unsigned int b)
{
	return a > b ? a : b;
}

/*
 * Rows go in sorted order, entries all over the histogram (773K of them
 * in 93 MB with --children): bring in the entry 16 rows ahead, its symbol
 * 8 ahead and the symbol's name 4 ahead, so that their misses overlap.
 * Inlined early: as a function of its own gcc finds it pure (it only
 * reads) and drops its calls.
 */
static inline __attribute__((always_inline)) void prefetch_rows(struct pevt_hist_entry *const *v, size_t j, size_t n)
{
	if (j + 16 < n)
		__builtin_prefetch(v[j + 16]);
	if (j + 8 < n && v[j + 8]->k.sym)
		__builtin_prefetch(v[j + 8]->k.sym);
	if (j + 4 < n && v[j + 4]->k.sym)
		__builtin_prefetch(v[j + 4]->k.sym->name);
}

static void col_widths(struct report *r, struct pevt_hist_entry **v, size_t n, unsigned int *w)
{
	unsigned int comm_len = 0;
	bool unres = false;
	size_t i;
	int k;

	for (k = 0; k < PEVT_SORT_MAX; k++)
		w[k] = strlen(key_header[k]);
	for (i = 0; i < n; i++) {
		const struct pevt_hist_entry *e = v[i];
		unsigned int cl;

		prefetch_rows(v, i, n);
		cl = strlen(pevt_thread__last_comm(e->thread));

		/* hists__calc_col_len(): the thread's comm, not the entry's */
		comm_len = umax(comm_len, cl);
		/*
		 * The first sample's symbol, as perf's h->ms.sym: the key's
		 * when sym is a key, else first_unres says whether it had one
		 * (its name only sizes the Symbol column, not shown then).
		 */
		if (e->k.sym)
			/* perf's namelen: an inlined one's without " (inlined)" */
			w[PEVT_SORT_SYM] = umax(w[PEVT_SORT_SYM], strlen(e->k.sym->name) + 4 -
						(e->k.sym->inlined ? 10 : 0));
		else if (e->first_unres) {
			w[PEVT_SORT_SYM] = umax(w[PEVT_SORT_SYM], 16 + 4 + 2);
			unres = true;
		}
		if (e->k.dso)
			w[PEVT_SORT_DSO] = umax(w[PEVT_SORT_DSO], strlen(e->k.dso->short_name));
		else if (e->thread) {
			/* an entry without a map still sizes nothing */
		}
	}
	/* hists__set_unres_dso_col_len(): not with a --dso list */
	if (unres && !r->f_dso.n)
		w[PEVT_SORT_DSO] = umax(w[PEVT_SORT_DSO], 16);
	w[PEVT_SORT_COMM] = umax(w[PEVT_SORT_COMM], comm_len);
	w[PEVT_SORT_PID] = umax(w[PEVT_SORT_PID], comm_len + 8);
	(void)r;
}

/* A line of output, built by hand: printf() per column cost ~10% of a 66K-row report. */
struct line {
	char *p;
	size_t n, cap;
};

static int line_room(struct line *l, size_t more)
{
	char *np;
	size_t ncap;

	if (l->n + more <= l->cap)
		return 0;
	ncap = l->cap ? l->cap : 4096;
	while (ncap < l->n + more)
		ncap *= 2;
	np = realloc(l->p, ncap);
	if (!np)
		return -ENOMEM;
	l->p = np;
	l->cap = ncap;
	return 0;
}

static void line_put(struct line *l, const char *s, size_t len)
{
	if (line_room(l, len))
		return;
	memcpy(l->p + l->n, s, len);
	l->n += len;
}

static void line_pad(struct line *l, size_t len)
{
	if (line_room(l, len))
		return;
	memset(l->p + l->n, ' ', len);
	l->n += len;
}

static void line_printf(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0 || line_room(l, len + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(l->p + l->n, len + 1, fmt, ap);
	va_end(ap);
	l->n += len;
}

/* "%-*.*s": @s cut to @w bytes, padded to @w */
static void line_col(struct line *l, const char *s, unsigned int w)
{
	size_t len = strnlen(s, w);

	line_put(l, s, len);
	line_pad(l, w - len);
}

/* "%7.2f%%"; printf() itself when the value is too close to a rounding tie */
static void line_pct(struct line *l, double pct)
{
	double x = pct * 100.0, f;
	char buf[32], *p = buf + sizeof(buf);
	unsigned long long v;
	int digits = 0;

	f = x - (double)(unsigned long long)x;
	if (!(pct >= 0 && pct < 1e12) || (f > 0.5 - 1e-6 && f < 0.5 + 1e-6)) {
		line_printf(l, "%7.2f%%", pct);
		return;
	}
	v = (unsigned long long)(x + 0.5);
	*--p = '%';
	do {
		*--p = '0' + v % 10;
		v /= 10;
		if (++digits == 2)
			*--p = '.';
	} while (v || digits < 3);
	while (buf + sizeof(buf) - p < 8)
		*--p = ' ';
	line_put(l, p, buf + sizeof(buf) - p);
}

/* print_key() of perf's columns (hist_entry__snprintf()), into @l */
static void line_key(struct line *l, const struct pevt_hist_entry *e, int key, unsigned int w)
{
	static const char hex[] = "0123456789abcdef";
	char buf[2 + 16];
	int i;

	switch (key) {
	case PEVT_SORT_COMM:
		line_col(l, e->k.comm, w);
		break;
	case PEVT_SORT_PID:
		line_printf(l, "%7d:", e->k.tid);
		line_col(l, pevt_thread__last_comm(e->thread), umax(7, w) - 8);
		break;
	case PEVT_SORT_DSO:
		line_col(l, e->k.dso ? e->k.dso->short_name : "[unknown]", w);
		break;
	case PEVT_SORT_CPU:
		line_printf(l, "%*.*d", w, w, e->k.cpu);
		break;
	case PEVT_SORT_SYM:
		line_put(l, "[", 1);
		line_put(l, &e->level, 1);
		line_put(l, "] ", 2);
		if (e->k.sym && e->k.sym->type == STT_OBJECT) {
			line_printf(l, "%s+0x%" PRIx64, e->k.sym->name,
				    e->ip - (e->k.sym->start + e->map_delta));
		} else if (e->k.sym) {
			line_put(l, e->k.sym->name, strlen(e->k.sym->name));
		} else {
			/* "%-#.16" PRIx64: 0x and 16 digits, but no 0x for 0 */
			for (i = 0; i < 16; i++)
				buf[2 + i] = hex[(e->k.ip >> (60 - 4 * i)) & 15];
			buf[0] = '0';
			buf[1] = 'x';
			if (e->k.ip)
				line_put(l, buf, sizeof(buf));
			else
				line_put(l, buf + 2, 16);
		}
		break;
	}
}

static unsigned long convert_unit(unsigned long v, char *unit)
{
	*unit = ' ';
	if (v > 1000) {
		v /= 1000;
		*unit = 'K';
	}
	if (v > 1000) {
		v /= 1000;
		*unit = 'M';
	}
	if (v > 1000) {
		v /= 1000;
		*unit = 'G';
	}
	return v;
}

/*
 * perf's sort__setup_elide(): a --comm, --dso or --symbols of one name
 * leaves its column out and says so ("# comm: ls"), in the sort keys'
 * order, also with -q; with every column left out none is.  @keys: the
 * columns shown.  Returns their number.
 */
static int shown_keys(const struct report *r, int *keys)
{
	int k, n = 0;

	for (k = 0; k < r->nr_keys; k++) {
		const struct strs *l = r->keys[k] == PEVT_SORT_COMM ? &r->f_comm :
				       r->keys[k] == PEVT_SORT_DSO ? &r->f_dso :
				       r->keys[k] == PEVT_SORT_SYM ? &r->f_sym : NULL;
		const char *name = r->keys[k] == PEVT_SORT_COMM ? "comm" :
				   r->keys[k] == PEVT_SORT_DSO ? "dso" : "symbol";

		if (l && l->n == 1)
			printf("# %s: %s\n", name, l->v[0]);
		else
			keys[n++] = r->keys[k];
	}
	if (!n)
		for (k = 0; k < r->nr_keys; k++)
			keys[n++] = r->keys[k];
	return n;
}

/*
 * The entries the filters leave in (perf's !he->filtered), moved to the
 * front of @v; @total and @nr: the event's period and samples, or with
 * --percentage relative those of the entries left in (perf's
 * total_non_filtered_period, nr_non_filtered_samples: their own).
 */
static size_t shown_entries(const struct report *r, const struct pevt_hists *h,
			    struct pevt_hist_entry **v, size_t n, uint64_t *total, uint64_t *nr)
{
	uint64_t rt = 0, rn = 0;
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		if (v[i]->filtered)
			continue;
		rt += v[i]->period;
		rn += v[i]->nr_samples;
		v[m++] = v[i];
	}
	*total = r->relative ? rt : h->total_period;
	*nr = r->relative ? rn : h->nr_samples;
	return m;
}

static void print_stdio(struct report *r)
{
	struct line l = { 0 };
	int i, k, keys[PEVT_SORT_MAX], nr_keys;

	/* -q: perf leaves out every '#' line but sort__setup_elide()'s */
	if (!r->quiet)
		printf("# To display the perf.data header info, please use --header/--header-only options.\n#\n");
	nr_keys = shown_keys(r, keys);
	if (!r->quiet)
		printf("#\n# Total Lost Samples: %" PRIu64 "\n#\n",
		       pevt_data__stats(r->d)->total_lost_samples);
	for (i = 0; i < r->nr_hists; i++) {
		struct pevt_hists *h = &r->hists[i];
		struct pevt_hist_entry **v;
		unsigned int w[PEVT_SORT_MAX];
		size_t n, j;
		char unit;
		unsigned long ns;
		uint64_t min_hit, total, nr;

		if (!h->nr_samples)
			continue;
		stage_time(NULL);
		v = pevt_hists__sorted(h, r->use_children, &n);
		if (!v)
			return;
		stage_time("sort");
		n = shown_entries(r, h, v, n, &total, &nr);
		col_widths(r, v, n, w);
		/* output_resort(): total * (min_percent / 100), truncated */
		min_hit = total * (r->cc.min_percent / 100);
		ns = convert_unit(nr, &unit);
		if (r->quiet)
			goto rows;
		printf("# Samples: %lu%c of event '%s'\n", ns, unit, pevt_data__evsel(r->d, i)->name);
		printf("# Event count (approx.): %" PRIu64 "\n#\n", total);
		printf("# %s", r->use_children ? "Children      Self" : "Overhead");
		if (r->show_nr)
			printf("  %12s", "Samples");
		/* each header is formatted into perf's 1 KiB buffer: at most 1023 wide */
		for (k = 0; k < nr_keys; k++)
			printf("  %-*s", (int)umax(0, w[keys[k]] < 1023 ? w[keys[k]] : 1023),
			       key_header[keys[k]]);
		printf("\n# %s", r->use_children ? "........  ........" : "........");
		if (r->show_nr)
			printf("  ............");
		for (k = 0; k < nr_keys; k++) {
			unsigned int x;

			printf("  ");
			for (x = 0; x < w[keys[k]]; x++)
				putchar('.');
		}
		printf("\n#\n");
rows:
		for (j = 0; j < n; j++) {
			const struct pevt_hist_entry *e = v[j];
			double pct;

			prefetch_rows(v, j, n);
			pct = total ? 100.0 * (r->use_children ? e->period_acc : e->period) / total : 0;
			if (pct < r->percent_limit)
				continue;
			l.n = 0;
			line_pad(&l, 2);
			line_pct(&l, pct);
			if (r->use_children) {
				line_pad(&l, 2);
				line_pct(&l, total ? 100.0 * e->period / total : 0);
			}
			/* perf's "Samples": the entry's own samples, 0 for a caller's */
			if (r->show_nr)
				line_printf(&l, "  %12" PRIu64, e->nr_samples);
			for (k = 0; k < nr_keys; k++) {
				size_t at;

				line_pad(&l, 2);
				at = l.n;
				line_key(&l, e, keys[k], w[keys[k]]);
				/* hist_entry__snprintf_alignment(): all but the last column */
				if (keys[k] == PEVT_SORT_SYM && k + 1 < nr_keys) {
					/* perf formats it in a 4 KiB buffer */
					if (l.n - at > 4095)
						l.n = at + 4095;
					if (l.n - at < w[keys[k]])
						line_pad(&l, w[keys[k]] - (l.n - at));
				}
			}
			line_put(&l, "\n", 1);
			fwrite_unlocked(l.p, 1, l.n, stdout);
			if (r->use_callchain)
				/* the graph's percentages: of the whole event, as perf's */
				pevt_cc__fprintf(stdout, e->cc, &r->cc, h->total_period,
						 r->use_children ? e->period_acc : e->period, min_hit);
		}
		printf("\n\n");
		free(v);
		stage_time("print");
	}
	free(l.p);
	if (!r->quiet)
		printf("#\n# (Tip: pevt report -j gives the same rows as JSON)\n#\n");
}

static void print_json(struct report *r)
{
	static const char *const names[PEVT_SORT_MAX] = { "comm", "pid", "dso", "sym", "cpu" };
	int i, k;

	printf("{\"lost_samples\":%" PRIu64 ",\"events\":[",
	       pevt_data__stats(r->d)->total_lost_samples);
	for (i = 0; i < r->nr_hists; i++) {
		struct pevt_hists *h = &r->hists[i];
		struct pevt_hist_entry **v;
		size_t n, j;
		bool first = true;
		uint64_t total, nr;

		if (!h->nr_samples)
			continue;
		v = pevt_hists__sorted(h, r->use_children, &n);
		if (!v)
			return;
		n = shown_entries(r, h, v, n, &total, &nr);
		printf("%s{\"event\":", i ? "," : "");
		json_str(stdout, pevt_data__evsel(r->d, i)->name);
		printf(",\"samples\":%" PRIu64 ",\"period\":%" PRIu64 ",\"entries\":[",
		       nr, total);
		for (j = 0; j < n; j++) {
			const struct pevt_hist_entry *e = v[j];
			double self = total ? 100.0 * e->period / total : 0;
			double acc = total ? 100.0 * e->period_acc / total : 0;

			if ((r->use_children ? acc : self) < r->percent_limit)
				continue;
			printf("%s{\"self\":%.4f", first ? "" : ",", self);
			first = false;
			if (r->use_children)
				printf(",\"children\":%.4f", acc);
			printf(",\"period\":%" PRIu64 ",\"samples\":%" PRIu64, e->period, e->nr_samples);
			for (k = 0; k < r->nr_keys; k++) {
				char buf[64];

				printf(",\"%s\":", names[r->keys[k]]);
				switch (r->keys[k]) {
				case PEVT_SORT_COMM:
					json_str(stdout, e->k.comm);
					break;
				case PEVT_SORT_PID:
					printf("%d", e->k.tid);
					break;
				case PEVT_SORT_CPU:
					printf("%d", e->k.cpu);
					break;
				case PEVT_SORT_DSO:
					json_str(stdout, e->k.dso ? e->k.dso->short_name : "[unknown]");
					break;
				case PEVT_SORT_SYM:
					snprintf(buf, sizeof(buf), "%#" PRIx64, e->k.ip);
					json_str(stdout, e->k.sym ? e->k.sym->name : buf);
					break;
				}
			}
			printf("}");
		}
		printf("]}");
		free(v);
	}
	printf("]}\n");
}

/* Every record read, of any type: perf's nr_events[0] ("TOTAL events"). */
static uint64_t nr_records(const struct pevt_data_stats *st)
{
	uint64_t total = st->nr_unknown;
	uint32_t t;

	for (t = 0; t < PERF_RECORD_HEADER_MAX; t++)
		total += st->nr[t];
	return total;
}

/*
 * perf's perf_session__warn_about_errors() after a report (perf 6.1, its
 * stdio form): LOST records ("chunks"), more than 5% of the samples lost
 * (LOST_SAMPLES), and records delivered older than one delivered before
 * them -- unless an event writes backward, whose rings perf expects out
 * of order.  Not with --stats or -q, as perf, nor with --json (its
 * stderr carries errors only, as JSON; the JSON has lost_samples).
 */
static void warn_about_errors(struct report *r)
{
	const struct pevt_data_stats *st = pevt_data__stats(r->d);
	uint64_t samples;
	bool backward = false;
	int i;

	if (r->quiet || r->stats || json_output)
		return;
	if (st->nr[PERF_RECORD_LOST])
		fprintf(stderr, "Warning:\nProcessed %" PRIu64 " events and lost %" PRIu64
			" chunks!\n\nCheck IO/CPU overload!\n\n", nr_records(st),
			st->nr[PERF_RECORD_LOST]);
	samples = st->nr[PERF_RECORD_SAMPLE] + st->total_lost_samples;
	if (samples && (double)st->total_lost_samples / samples > 0.05)
		fprintf(stderr, "Warning:\nProcessed %" PRIu64 " samples and lost %3.2f%%!\n\n",
			samples, 100.0 * st->total_lost_samples / samples);
	for (i = 0; i < pevt_data__nr_evsels(r->d); i++)
		backward |= pevt_data__evsel(r->d, i)->attr.write_backward;
	if (st->nr_misordered && !backward)
		fprintf(stderr, "Warning:\n%" PRIu64 " out of order events recorded.\n",
			st->nr_misordered);
}

static void print_stats(struct report *r)
{
	struct pevt_data_stats *st = pevt_data__stats(r->d);
	uint64_t total = nr_records(st);
	uint32_t t;
	int i;

	if (json_output) {
		printf("{\"total\":%" PRIu64 ",\"unknown\":%" PRIu64 ",\"misordered\":%" PRIu64
		       ",\"types\":{", total, st->nr_unknown, st->nr_misordered);
		for (t = 0, i = 0; t < PERF_RECORD_HEADER_MAX; t++) {
			if (!st->nr[t])
				continue;
			printf("%s\"%s\":%" PRIu64, i++ ? "," : "", pevt_record_type__name(t), st->nr[t]);
		}
		printf("}}\n");
		return;
	}
	printf("\nAggregated stats:\n");
	printf("%16s events: %10" PRIu64 "\n", "TOTAL", total);
	for (t = 0; t < PERF_RECORD_HEADER_MAX; t++) {
		if (!st->nr[t])
			continue;
		printf("%16s events: %10" PRIu64 "  (%4.1f%%)\n", pevt_record_type__name(t),
		       st->nr[t], 100.0 * st->nr[t] / total);
	}
	if (st->nr_unknown)
		printf("%16s events: %10" PRIu64 "\n", "UNKNOWN", st->nr_unknown);
	for (i = 0; i < r->nr_hists; i++) {
		if (!r->hists[i].nr_samples)
			continue;
		printf("%s stats:\n", pevt_data__evsel(r->d, i)->name);
		printf("%16s events: %10" PRIu64 "\n", "SAMPLE", r->hists[i].nr_samples);
	}
	if (st->nr_misordered)
		printf("%16s: %10" PRIu64 "\n", "misordered", st->nr_misordered);
}

int do_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input",		required_argument,	NULL, 'i' },
		{ "stdio",		no_argument,		NULL, 1000 },
		{ "sort",		required_argument,	NULL, 's' },
		{ "percent-limit",	required_argument,	NULL, 'P' },
		{ "children",		no_argument,		NULL, 'C' },
		{ "no-children",	no_argument,		NULL, 'N' },
		{ "call-graph",		required_argument,	NULL, 'g' },
		{ "inverted",		no_argument,		NULL, 'G' },
		{ "stats",		no_argument,		NULL, 'T' },
		{ "mem-cap",		required_argument,	NULL, 'M' },
		{ "threads",		required_argument,	NULL, 't' },
		{ "json",		no_argument,		NULL, 'j' },
		{ "flamegraph",		required_argument,	NULL, 'F' },
		{ "no-index",		no_argument,		NULL, 'X' },
		{ "inline",		no_argument,		NULL, 'K' },
		{ "no-inline",		no_argument,		NULL, 'L' },
		{ "quiet",		no_argument,		NULL, 'q' },
		{ "show-nr-samples",	no_argument,		NULL, 'n' },
		{ "comm",		required_argument,	NULL, 1001 },
		{ "pid",		required_argument,	NULL, 1002 },
		{ "tid",		required_argument,	NULL, 1003 },
		{ "dso",		required_argument,	NULL, 1004 },
		{ "symbols",		required_argument,	NULL, 'S' },
		{ "percentage",		required_argument,	NULL, 1005 },
		{ "help",		no_argument,		NULL, 'h' },
		{ 0 }
	};
	struct report r = {
		.input = "perf.data", .children = -1,
		.cc = { .mode = PEVT_CC_GRAPH_ABS, .value = PEVT_CC_PERCENT, .min_percent = 0.5 },
	};
	bool inverted = false, g_set = false;
	struct pevt_ordered_stats ost;
	struct pevt_ordered_opts oo = { .sz = sizeof(oo) };
	int opt, err, i;
	bool callchains = false;
	struct timespec t0, t1;

	parse_sort(&r, "comm,dso,sym");
	optind = 1;
	while ((opt = getopt_long(argc + 1, argv - 1, "i:s:g:GjqnS:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'i':
			r.input = optarg;
			break;
		case 1000:
			break;
		case 1001:
		case 1004:
		case 'S':
			if (strs_parse(opt == 1001 ? &r.f_comm : opt == 1004 ? &r.f_dso : &r.f_sym,
				       optarg))
				return -1;
			r.filters = true;
			break;
		case 1002:
		case 1003: {
			struct ints *l = opt == 1002 ? &r.f_pid : &r.f_tid;

			if (id_list_parse(optarg, 0, opt == 1002 ? "--pid" : "--tid", &l->v, &l->n))
				return -1;
			r.filters = true;
			break;
		}
		case 1005:
			if (strcmp(optarg, "relative") && strcmp(optarg, "absolute")) {
				p_err("--percentage '%s': relative or absolute", optarg);
				return -1;
			}
			r.relative = !strcmp(optarg, "relative");
			break;
		case 's':
			if (parse_sort(&r, optarg))
				return -1;
			/* perf: the graph's first entry is the row's symbol */
			r.cc.skip_first = !strncmp(optarg, "sym", 3);
			break;
		case 'P':
			/* perf's --percent-limit is the call graph threshold too */
			r.percent_limit = strtod(optarg, NULL);
			r.cc.min_percent = r.percent_limit;
			break;
		case 'C':
			r.children = 1;
			break;
		case 'N':
			r.children = 0;
			break;
		case 'g':
			g_set = true;
			switch (pevt_cc__parse(&r.cc, optarg, &r.cc_order_set)) {
			case 1:
				r.callchain_none = true;
				break;
			case 0:
				r.callchain_none = false;
				break;
			default:
				p_err("bad -g '%s' (graph|fractal|flat|folded|none, caller|callee, "
				      "function, percent|period|count, threshold, print limit)", optarg);
				return -1;
			}
			break;
		case 'G':
			inverted = true;
			break;
		case 'K':
			r.no_inline = false;
			break;
		case 'L':
			r.no_inline = true;
			break;
		case 'q':
			r.quiet = true;
			break;
		case 'n':
			r.show_nr = true;
			break;
		case 'T':
			r.stats = true;
			break;
		case 'M':
			r.mem_cap = strtoull(optarg, NULL, 0);
			break;
		case 't':
			r.nr_threads = atoi(optarg);
			break;
		case 'j':
			json_output = true;
			break;
		case 'F':
			r.flame_path = optarg;
			break;
		case 'X':
			r.no_index = true;
			break;
		case 'h':
			return do_report_help();
		default:
			do_report_help();
			return -1;
		}
	}
	show_times = getenv("PEVT_REPORT_TIMES") != NULL;
	stage_time(NULL);
	r.d = pevt_data__open(r.input);
	stage_time("open");
	if (!r.d) {
		p_err("%s: %s", r.input, strerror(errno));
		return -1;
	}
	if (!pevt_data__nr_streams(r.d)) {
		p_err("%s", pevt_data__error(r.d) ?: "cannot open");
		pevt_data__delete(r.d);
		return -1;
	}
	for (i = 0; i < pevt_data__nr_evsels(r.d); i++)
		callchains |= !!(pevt_data__evsel(r.d, i)->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
	/* perf cancels --children silently when there are no callchains */
	r.use_children = callchains && (r.children == 1 || (r.children == -1 && !r.callchain_none));
	if (r.children == -1 && r.callchain_none)
		r.use_children = callchains;
	/*
	 * Pipe mode: perf decides before any attr has arrived that there are
	 * no callchains, so it never cumulates (even with --children).
	 */
	if (pevt_data__is_pipe(r.d))
		r.use_children = false;
	r.use_callchain = callchains && !r.callchain_none;
	/*
	 * perf's report__setup_sample_type(): a call graph asked for (-g,
	 * not none) of a file without callchains is an error, nothing is
	 * reported (perf exits 0 all the same; pevt does not).  A pipe's
	 * attrs come later: not checked, as perf.
	 */
	if (g_set && !r.callchain_none && !callchains && !pevt_data__is_pipe(r.d)) {
		fprintf(stderr, "Error:\nSelected -g or --branch-history.\nBut no callchain or branch data.\n"
			"Did you call 'perf record' without -g or -b?\n");
		pevt_data__delete(r.d);
		return -1;
	}
	/*
	 * perf sets the caller order while parsing its options, when children
	 * are still on unless --no-children: a pipe keeps that order.
	 */
	if (inverted || (!r.cc_order_set && (r.use_children ||
					     (pevt_data__is_pipe(r.d) && r.children))))
		r.cc.caller = true;

	if (pevt_data__warning(r.d) && !r.quiet)
		fprintf(stderr, "Warning: %s\n", pevt_data__warning(r.d));
	r.m = pevt_machine__new(r.d, NULL);
	if (!r.m) {
		pevt_data__delete(r.d);
		return -1;
	}
	/*
	 * The kernel's symbols parse on a thread of their own while the
	 * records are read: the first kernel sample needs them (its map is
	 * fixed up to them), and it comes within the first milliseconds.
	 */
	for (i = 0; i < pevt_data__nr_evsels(r.d) && !pevt_data__is_pipe(r.d) && !r.stats; i++)
		if (!pevt_data__evsel(r.d, i)->attr.exclude_kernel) {
			pevt_machine__prefetch_kernel(r.m);
			break;
		}
	oo.mem_cap = r.mem_cap;
	stage_time("machine");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = 0;
	/* --stats counts every record as the sequential reader sees it */
	if (!r.stats && !r.no_index && !pevt_data__is_pipe(r.d) && !pevt_data__is_dir(r.d) &&
	    !pevt_data__warning(r.d)) {
		int nev = pevt_data__nr_evsels(r.d);

		r.hists = calloc(nev ?: 1, sizeof(*r.hists));
		if (!r.hists) {
			pevt_machine__delete(r.m);
			pevt_data__delete(r.d);
			return -1;
		}
		for (i = 0; i < nev; i++)
			pevt_hists__init(&r.hists[i], r.keys, r.nr_keys);
		r.nr_hists = nev;
		err = indexed_first_pass(&r);
		/* a fallback comes before the merge: the machine is untouched */
	}
	if (err == 1)
		err = 0;
	else if (!err) {
		err = direct_start(&r);
		if (!err)
			err = pevt_ordered__run(r.d, &oo, on_record, &r, &ost);
		/* what came before an error is reported too */
		i = direct_finish(&r);
		if (i && !err)
			err = i;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	stage_time("first pass");
	if (getenv("PEVT_INDEX_DEBUG"))
		fprintf(stderr, "index: first pass %.3f s\n",
			(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	/* a pipe's attrs came with its records: graphs if they have callchains */
	for (i = 0; i < pevt_data__nr_evsels(r.d); i++)
		if (pevt_data__evsel(r.d, i)->attr.sample_type & PERF_SAMPLE_CALLCHAIN)
			r.use_callchain = !r.callchain_none;
	/* what came before an error is reported too */
	i = run_workers(&r);
	if (i && !err)
		err = i;
	stage_time("second pass");
	for (i = 0; i < r.nr_hists; i++) {
		r.hists[i].depth_sort = r.use_callchain ? (r.cc.caller ? 1 : -1) : 0;
		r.hists[i].sort_threads = nr_workers(&r);
		r.hists[i].sort_exact = getenv("PEVT_SORT_EXACT") != NULL;
	}
	if (err)
		fprintf(stderr, "Error: %s%s; reporting what came before it\n",
			pevt_data__error(r.d) ?: strerror(-err),
			pevt_data__error(r.d) ? "" : "");
	if (r.flame_path && r.nr_hists) {
		char title[256];

		snprintf(title, sizeof(title), "Flame graph of %s: %" PRIu64 " samples of %s",
			 r.input, r.hists[0].nr_samples, pevt_data__evsel(r.d, 0)->name);
		i = flamegraph__write(r.flame_path, &r.flame, title);
		if (i) {
			p_err("%s: %s", r.flame_path, strerror(-i));
			if (!err)
				err = i;
		}
	}
	flame__exit(&r.flame);
	warn_about_errors(&r);
	if (r.stats)
		print_stats(&r);
	else if (json_output)
		print_json(&r);
	else
		print_stdio(&r);
	fflush(stdout);
	stage_time(NULL);
	for (i = 0; i < r.nr_hists; i++)
		pevt_hists__exit(&r.hists[i]);
	free(r.hists);
	free(r.samples);
	free(r.late);
	for (i = 0; i < (int)r.nr_arena; i++)
		free(r.arena[i]);
	free(r.arena);
	pevt_machine__delete(r.m);
	pevt_data__delete(r.d);
	strs_free(&r.f_comm);
	strs_free(&r.f_dso);
	strs_free(&r.f_sym);
	free(r.f_pid.v);
	free(r.f_tid.v);
	stage_time("teardown");
	return err ? -1 : 0;
}
