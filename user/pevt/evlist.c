// SPDX-License-Identifier: GPL-2.0
/*
 * Counting evlist: a parsed event list opened on one backend for every
 * (cpu, thread) pair of a target.  See evlist.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evlist.h"

int evlist__init(struct evlist *el, struct pevt_events *events,
		 enum pevt_backend backend)
{
	size_t i;

	memset(el, 0, sizeof(*el));
	el->events = events;
	el->backend = backend;
	el->nr = (int)pevt_events__nr(events);
	el->ctrs = calloc(el->nr ? el->nr : 1, sizeof(*el->ctrs));
	if (!el->ctrs)
		return -ENOMEM;
	for (i = 0; i < (size_t)el->nr; i++)
		el->ctrs[i].desc = pevt_events__get(events, i);
	return evlist__set_target(el, NULL, 0, NULL, 0);
}

static int *dup_or_any(const int *v, int n, int *nr)
{
	int *r = malloc((n > 0 ? n : 1) * sizeof(*r));

	if (!r)
		return NULL;
	if (n > 0) {
		memcpy(r, v, n * sizeof(*r));
		*nr = n;
	} else {
		r[0] = -1;
		*nr = 1;
	}
	return r;
}

int evlist__set_target(struct evlist *el, const int *cpus, int nr_cpus,
		       const int *threads, int nr_threads)
{
	int *c = dup_or_any(cpus, nr_cpus, &nr_cpus);
	int *t = dup_or_any(threads, nr_threads, &nr_threads);

	if (!c || !t) {
		free(c);
		free(t);
		return -ENOMEM;
	}
	free(el->cpus);
	free(el->threads);
	el->cpus = c;
	el->nr_cpus = nr_cpus;
	el->threads = t;
	el->nr_threads = nr_threads;
	return 0;
}

static int nr_fds(const struct evlist *el)
{
	return el->nr_cpus * el->nr_threads;
}

/* perf stat's stat_handle_error(): these mean "the kernel lacks it". */
static bool err_unsupported(int err)
{
	return err == -EINVAL || err == -ENOSYS || err == -ENOENT ||
	       err == -EOPNOTSUPP || err == -ENXIO;
}

static void counter_close(struct evlist *el, struct counter *ctr)
{
	int k;

	for (k = 0; k < nr_fds(el); k++) {
		pevt_evsel__delete(ctr->evsels[k]);
		ctr->evsels[k] = NULL;
	}
}

int evlist__open(struct evlist *el, bool skip, struct evlist_open_err *oerr)
{
	LIBPEVT_OPTS(pevt_open_opts, o, .backend = el->backend);
	int i, c, t, ret;

	for (i = 0; i < el->nr; i++) {
		el->ctrs[i].evsels = calloc(nr_fds(el), sizeof(struct pevt_evsel *));
		if (!el->ctrs[i].evsels)
			return -ENOMEM;
		el->ctrs[i].supported = true;
		el->ctrs[i].open_err = 0;
	}
	/* Leaders come before their members in list order. */
	for (i = 0; i < el->nr; i++) {
		struct counter *ctr = &el->ctrs[i];
		const struct pevt_event_desc *d = ctr->desc;
		struct perf_event_attr attr = d->attr;
		bool leader = d->leader == i;

		if (!el->ctrs[d->leader].supported) {
			/* A skipped leader had no members: cannot happen. */
			ctr->supported = false;
			continue;
		}
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				   PERF_FORMAT_TOTAL_TIME_RUNNING;
		/* Members follow their leader: enabling it starts the group. */
		attr.disabled = leader;
		attr.enable_on_exec = leader && el->on_exec;
		attr.inherit = el->inherit && el->threads[0] != -1;
		for (c = 0; c < el->nr_cpus; c++) {
			for (t = 0; t < el->nr_threads; t++) {
				int k = c * el->nr_threads + t;
				struct pevt_evsel *ev = pevt_evsel__new(&attr);
				struct pevt_evsel *ld = leader ? NULL :
					el->ctrs[d->leader].evsels[k];

				if (!ev)
					return -ENOMEM;
				ctr->evsels[k] = ev;
				ret = pevt_evsel__open(ev, el->threads[t], el->cpus[c], ld, &o);
				/*
				 * Only the first fd decides: a later one failing
				 * is about its CPU or task, not the event.
				 */
				if (ret < 0 && skip && !k && err_unsupported(ret) &&
				    !(leader && d->nr_members > 1)) {
					ctr->supported = false;
					ctr->open_err = ret;
					counter_close(el, ctr);
					goto next;
				}
				if (ret < 0) {
					if (oerr) {
						oerr->idx = i;
						oerr->cpu = el->cpus[c];
						oerr->thread = el->threads[t];
						oerr->err = ret;
					}
					return ret;
				}
			}
		}
next:
		;
	}
	return 0;
}

static int for_each_leader(struct evlist *el, int (*fn)(struct pevt_evsel *))
{
	int i, k, ret, err = 0;

	for (i = 0; i < el->nr; i++) {
		if (el->ctrs[i].desc->leader != i || !el->ctrs[i].evsels)
			continue;
		for (k = 0; k < nr_fds(el); k++) {
			if (!el->ctrs[i].evsels[k])
				continue;
			ret = fn(el->ctrs[i].evsels[k]);
			if (ret && !err)
				err = ret;
		}
	}
	return err;
}

int evlist__enable(struct evlist *el)
{
	if (el->on_exec)
		return 0;	/* the workload's exec enables them */
	return for_each_leader(el, pevt_evsel__enable);
}

int evlist__disable(struct evlist *el)
{
	return for_each_leader(el, pevt_evsel__disable);
}

int evlist__read(struct evlist *el)
{
	struct pevt_counts c;
	int i, k, ret;

	for (i = 0; i < el->nr; i++) {
		struct counter *ctr = &el->ctrs[i];
		struct pevt_counts sum = { 0 };

		ctr->nr_err = 0;
		if (!ctr->supported)
			continue;
		for (k = 0; k < nr_fds(el); k++) {
			ret = pevt_evsel__read(ctr->evsels[k], &c, 1);
			if (ret == -ENODATA) {
				/* Pinned group that could not be scheduled. */
				ctr->nr_err++;
				continue;
			}
			if (ret < 0)
				return ret;
			sum.val += c.val;
			sum.ena += c.ena;
			sum.run += c.run;
		}
		ctr->prev = ctr->cur;
		ctr->cur = sum;
		ctr->delta.val = sum.val - ctr->prev.val;
		ctr->delta.ena = sum.ena - ctr->prev.ena;
		ctr->delta.run = sum.run - ctr->prev.run;
	}
	return 0;
}

void evlist__close(struct evlist *el)
{
	int i;

	/* Members first: a leader fd closing does not free its members. */
	for (i = el->nr - 1; i >= 0; i--) {
		if (!el->ctrs[i].evsels)
			continue;
		counter_close(el, &el->ctrs[i]);
		free(el->ctrs[i].evsels);
		el->ctrs[i].evsels = NULL;
	}
}

void evlist__exit(struct evlist *el)
{
	evlist__close(el);
	free(el->ctrs);
	free(el->cpus);
	free(el->threads);
	memset(el, 0, sizeof(*el));
}

const char *evlist__open_hint(const struct evlist *el, int idx, int err)
{
	const struct perf_event_attr *a = &el->ctrs[idx].desc->attr;

	switch (-err) {
	case ENOENT:
		if (el->backend == PEVT_BACKEND_DEVICE)
			return " (is pevt.ko loaded? or the event is unknown to the backend)";
		return " (the kernel does not know this event)";
	case ENODEV:
		return el->backend == PEVT_BACKEND_DEVICE ?
			" (pevt.ko not loaded, or no such CPU)" : " (no such device or CPU)";
	case EOPNOTSUPP:
		if (el->inherit && el->threads[0] != -1)
			return " (backend does not support an attr feature; try --no-inherit)";
		return " (backend does not support an attr feature)";
	case EACCES:
	case EPERM:
		return " (check /proc/sys/kernel/perf_event_paranoid or run as root)";
	case ESRCH:
		return " (no such process)";
	case EINVAL:
		if (a->pinned && el->ctrs[idx].desc->leader != idx)
			return " (only a group leader can be pinned)";
		return " (invalid attr, CPU or group)";
	}
	return "";
}

bool counts__scaled(const struct pevt_counts *c, double *scaled, double *pct)
{
	*scaled = (double)c->val;
	*pct = 0;
	if (!c->ena || !c->run) {
		*scaled = 0;
		return false;	/* never enabled or never scheduled */
	}
	*pct = 100.0 * (double)c->run / (double)c->ena;
	if (c->run < c->ena)
		*scaled = (double)c->val * (double)c->ena / (double)c->run;
	return true;
}
