/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counting evlist shared by `pevt stat` and `pevt bench`: the groups of a
 * parsed event list opened on one backend for every (cpu, thread) pair,
 * read as value/enabled/running and scaled.
 *
 *	struct evlist el;
 *
 *	evlist__init(&el, evs, PEVT_BACKEND_DEVICE);
 *	evlist__set_target(&el, cpus, nr_cpus, threads, nr_threads);
 *	if (evlist__open(&el, true, &oerr))	// oerr names the event, cpu, thread
 *		...;
 *	evlist__enable(&el);
 *	...
 *	evlist__read(&el);		// ctr->cur: sum over fds, ctr->delta
 *	scaled = counts__scaled(&el.ctrs[i].cur, &pct);
 *	evlist__exit(&el);
 */
#ifndef PEVT_EVLIST_H
#define PEVT_EVLIST_H

#include <stdbool.h>
#include <pevt/evsel.h>
#include <pevt/parse_events.h>

struct counter {
	const struct pevt_event_desc *desc;	/* name, attr, group, leader */
	struct pevt_evsel **evsels;	/* [cpu * nr_threads + thread] */
	struct pevt_counts cur;		/* last read, summed over fds */
	struct pevt_counts prev;	/* the read before */
	struct pevt_counts delta;	/* cur - prev */
	int nr_err;			/* fds that read 0 bytes (error state) */
	bool supported;			/* opened (false: perf's <not supported>) */
	int open_err;			/* why not, negative errno */
};

struct evlist {
	struct pevt_events *events;	/* not owned */
	enum pevt_backend backend;
	int *cpus;			/* {-1}: any CPU */
	int nr_cpus;
	int *threads;			/* {-1}: any task (per CPU) */
	int nr_threads;
	bool inherit;			/* attr.inherit for task targets */
	bool on_exec;			/* leaders enable_on_exec, not enabled here */
	struct counter *ctrs;		/* one per event, list order */
	int nr;
};

/* Why evlist__open() failed: which event on which (cpu, thread). */
struct evlist_open_err {
	int idx;			/* counter index */
	int cpu, thread;
	int err;			/* negative errno */
};

int evlist__init(struct evlist *el, struct pevt_events *events,
		 enum pevt_backend backend);
/* Arrays are copied; NULL/0 means {-1}. */
int evlist__set_target(struct evlist *el, const int *cpus, int nr_cpus,
		       const int *threads, int nr_threads);
/* Every event disabled, read_format = TOTAL_TIME_ENABLED|RUNNING; leaders
 * are opened disabled and members follow them.  With @skip, an event the
 * backend does not support (perf's list of errnos: EINVAL, ENOSYS, ENOENT,
 * EOPNOTSUPP, ENXIO) on its first (cpu, thread) is marked !supported
 * instead of failing, unless it leads a group with members (as perf
 * stat).  A later fd failing fails the open: that is its CPU or task. */
int evlist__open(struct evlist *el, bool skip, struct evlist_open_err *oerr);
int evlist__enable(struct evlist *el);
int evlist__disable(struct evlist *el);
/* Read every fd: cur = sum, delta = cur - prev.  -errno on read failure. */
int evlist__read(struct evlist *el);
void evlist__close(struct evlist *el);
void evlist__exit(struct evlist *el);

/* A short hint for an open() errno on @backend, or "". */
const char *evlist__open_hint(const struct evlist *el, int idx, int err);

/*
 * counts__scaled() - val * ena / run, the usual estimate.  Sets *@pct to
 * 100 * run / ena (0 if never enabled).  Returns false when the event
 * never ran or was never enabled (run == 0 or ena == 0), as perf stat's
 * printout() decides "<not counted>".
 */
bool counts__scaled(const struct pevt_counts *c, double *scaled, double *pct);

#endif
