// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - time ordering of perf.data records (see include/pevt/ordered.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pevt/ordered.h>

struct qent {
	uint64_t time, seq;
	struct pevt_data_rec r;
	bool owned;			/* r.ev is a malloc'd copy */
};

struct queue {
	struct qent *v;
	struct qent *tmp;		/* merge buffer of sort_runs(), tmp_cap entries */
	size_t nr, cap, tmp_cap;
	size_t bytes;
};

struct oe {
	struct pevt_data *d;
	pevt_ordered_cb cb;
	void *ctx;
	struct pevt_ordered_stats *st;
	uint64_t last_time;		/* of the last delivered timed record */
	uint64_t seq;
	size_t mem_cap;
};

uint64_t pevt_data__time_of(struct pevt_data *d, const struct perf_event_header *ev)
{
	struct pevt_data_evsel *e;
	struct pevt_sample s;
	const uint64_t *p;
	uint64_t t;
	int pos = 1;

	if (ev->type >= PERF_RECORD_USER_TYPE_START)
		return UINT64_MAX;
	e = pevt_data__evsel_of(d, ev);
	if (!e || !(e->attr.sample_type & PERF_SAMPLE_TIME))
		return UINT64_MAX;
	if (ev->type != PERF_RECORD_SAMPLE) {
		if (pevt_data__parse_id(d, ev, &s))
			return UINT64_MAX;
		return s.time;
	}
	t = e->attr.sample_type;
	pos += !!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID);
	if ((size_t)pos * 8 + 8 > ev->size)
		return UINT64_MAX;
	p = (const uint64_t *)ev;
	return p[pos];
}

/*
 * Delivered at once, not queued: records without a time, and those with
 * time 0, as perf's ordered_events__queue() (-ETIME) -- perf record's
 * synthesized records and its LOST_SAMPLES at the end carry 0.  Queued,
 * the end's LOST_SAMPLES were counted misordered ("3 out of order events"
 * where perf says nothing).
 */
static bool untimed(uint64_t t)
{
	return t == UINT64_MAX || !t;
}

static int deliver(struct oe *o, const struct pevt_data_rec *r, uint64_t time)
{
	if (!untimed(time)) {
		if (time < o->last_time)
			o->st->nr_misordered++;
		else
			o->last_time = time;
	}
	o->st->nr_delivered++;
	return o->cb(o->d, r, time, o->ctx);
}

static int qpush(struct oe *o, struct queue *q, const struct pevt_data_rec *r, uint64_t time)
{
	struct qent *e;

	if (q->nr == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 4096;
		struct qent *n = realloc(q->v, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		q->v = n;
		q->cap = ncap;
	}
	e = &q->v[q->nr];
	e->time = time;
	e->seq = o->seq++;
	e->r = *r;
	e->owned = false;
	if (r->transient) {
		void *c = malloc(r->ev->size);

		if (!c)
			return -ENOMEM;
		memcpy(c, r->ev, r->ev->size);
		e->r.ev = c;
		e->owned = true;	/* freed after delivery: still transient */
		q->bytes += r->ev->size;
	}
	q->bytes += sizeof(*e);
	q->nr++;
	if (q->nr > o->st->max_queued)
		o->st->max_queued = q->nr;
	if (q->bytes > o->st->max_queued_bytes)
		o->st->max_queued_bytes = q->bytes;
	return 0;
}

static int cmp_qent(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static inline bool qent_less(const struct qent *x, const struct qent *y)
{
	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

/*
 * A round's queue is a few sorted runs: what the last flush left (sorted),
 * then each CPU buffer's records, in time order but for the odd NMI.  So
 * the runs are merged pairwise (the same total order as qsort on (time,
 * seq), in O(n log runs)); qsort if there are many (or no memory for
 * the merge buffer, allocated here: the k-way merge's queues never need it).
 */
#define MAX_RUNS	64

static void sort_runs(struct queue *q)
{
	size_t b[MAX_RUNS + 1], nb = 0, i;

	b[nb++] = 0;
	for (i = 1; i < q->nr; i++) {
		if (!qent_less(&q->v[i], &q->v[i - 1]))
			continue;
		if (nb == MAX_RUNS) {
			qsort(q->v, q->nr, sizeof(*q->v), cmp_qent);
			return;
		}
		b[nb++] = i;
	}
	b[nb] = q->nr;
	if (nb > 1 && q->tmp_cap < q->nr) {
		struct qent *n = realloc(q->tmp, q->cap * sizeof(*n));

		if (!n) {
			qsort(q->v, q->nr, sizeof(*q->v), cmp_qent);
			return;
		}
		q->tmp = n;
		q->tmp_cap = q->cap;
	}
	while (nb > 1) {
		size_t r, m = 0;

		for (r = 0; r + 1 < nb; r += 2) {
			struct qent *x = q->v + b[r], *xe = q->v + b[r + 1];
			struct qent *y = xe, *ye = q->v + b[r + 2];
			struct qent *o = q->tmp;

			while (x < xe && y < ye)
				*o++ = qent_less(y, x) ? *y++ : *x++;
			memcpy(o, x, (xe - x) * sizeof(*o));
			o += xe - x;
			memcpy(o, y, (ye - y) * sizeof(*o));
			memcpy(q->v + b[r], q->tmp, (b[r + 2] - b[r]) * sizeof(*o));
			b[m++] = b[r];
		}
		if (r < nb)
			b[m++] = b[r];
		b[m] = q->nr;
		nb = m;
	}
}

/* Deliver the queued records with time <= @limit, or the oldest @count. */
static int qflush(struct oe *o, struct queue *q, uint64_t limit, size_t count)
{
	size_t i, n = 0;
	int err = 0;

	if (!q->nr)
		return 0;
	sort_runs(q);
	for (i = 0; i < q->nr; i++) {
		struct qent *e = &q->v[i];

		if (count ? n >= count : e->time > limit)
			break;
		if (!err)
			err = deliver(o, &e->r, e->time);
		if (e->owned) {
			q->bytes -= e->r.ev->size;
			free((void *)e->r.ev);
		}
		q->bytes -= sizeof(*e);
		n++;
	}
	memmove(q->v, q->v + n, (q->nr - n) * sizeof(*q->v));
	q->nr -= n;
	return err;
}

/* One stream: Weisbecker rounds. */
static int run_rounds(struct oe *o, int stream)
{
	struct queue q = { 0 };
	uint64_t max_time = 0, next_flush = 0;
	bool have_flush = false;
	struct pevt_data_rec r;
	int ret;

	while ((ret = pevt_data__next(o->d, stream, &r)) > 0) {
		uint64_t t;

		if (r.ev->type == PERF_RECORD_FINISHED_ROUND) {
			o->st->nr_rounds++;
			if (have_flush) {
				ret = qflush(o, &q, next_flush, 0);
				if (ret)
					break;
			}
			next_flush = max_time;
			have_flush = true;
			ret = deliver(o, &r, UINT64_MAX);
			if (ret)
				break;
			continue;
		}
		t = pevt_data__time_of(o->d, r.ev);
		if (untimed(t)) {
			ret = deliver(o, &r, t);
			if (ret)
				break;
			continue;
		}
		if (t > max_time)
			max_time = t;
		ret = qpush(o, &q, &r, t);
		if (ret)
			break;
		if (q.bytes > o->mem_cap) {
			o->st->nr_cap_flushes++;
			ret = qflush(o, &q, 0, q.nr / 2 + 1);
			if (ret)
				break;
		}
	}
	/* Deliver what is queued even after an error: a report of what came before. */
	if (qflush(o, &q, UINT64_MAX, 0) && ret >= 0)
		ret = -EIO;
	free(q.v);
	free(q.tmp);
	return ret;
}

/* Several streams: k-way merge behind a per-stream reorder window. */
struct sq {
	struct queue q;			/* a min-heap on (time, seq) */
	bool eof;
	int err;
};

static bool ent_less(const struct qent *a, const struct qent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_up(struct qent *v, size_t i)
{
	while (i) {
		size_t p = (i - 1) / 2;
		struct qent t;

		if (!ent_less(&v[i], &v[p]))
			break;
		t = v[i], v[i] = v[p], v[p] = t;
		i = p;
	}
}

static void heap_down(struct qent *v, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct qent t;

		if (l < n && ent_less(&v[l], &v[m]))
			m = l;
		if (l + 1 < n && ent_less(&v[l + 1], &v[m]))
			m = l + 1;
		if (m == i)
			return;
		t = v[i], v[i] = v[m], v[m] = t;
		i = m;
	}
}

static int fill(struct oe *o, struct sq *s, int stream, size_t window)
{
	struct pevt_data_rec r;
	int ret;

	while (!s->eof && s->q.nr < window) {
		uint64_t t;

		ret = pevt_data__next(o->d, stream, &r);
		if (ret <= 0) {
			s->eof = true;
			s->err = ret;
			break;
		}
		t = pevt_data__time_of(o->d, r.ev);
		if (untimed(t)) {
			ret = deliver(o, &r, t);
			if (ret)
				return ret;
			continue;
		}
		ret = qpush(o, &s->q, &r, t);
		if (ret)
			return ret;
		heap_up(s->q.v, s->q.nr - 1);
	}
	return 0;
}

static int run_merge(struct oe *o, size_t window)
{
	int n = pevt_data__nr_streams(o->d), i, ret = 0, err = 0;
	struct sq *s = calloc(n, sizeof(*s));
	size_t total_bytes;

	if (!s)
		return -ENOMEM;
	for (;;) {
		int best = -1;
		struct qent e;

		total_bytes = 0;
		for (i = 0; i < n; i++) {
			ret = fill(o, &s[i], i, window);
			if (ret)
				goto out;
			if (s[i].err && !err)
				err = s[i].err;
			total_bytes += s[i].q.bytes;
			if (s[i].q.nr && (best < 0 || ent_less(&s[i].q.v[0], &s[best].q.v[0])))
				best = i;
		}
		if (total_bytes > o->st->max_queued_bytes)
			o->st->max_queued_bytes = total_bytes;
		if (best < 0)
			break;
		e = s[best].q.v[0];
		s[best].q.v[0] = s[best].q.v[--s[best].q.nr];
		heap_down(s[best].q.v, s[best].q.nr, 0);
		ret = deliver(o, &e.r, e.time);
		if (e.owned) {
			s[best].q.bytes -= e.r.ev->size;
			free((void *)e.r.ev);
		}
		s[best].q.bytes -= sizeof(e);
		if (ret)
			goto out;
	}
out:
	for (i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < s[i].q.nr; j++)
			if (s[i].q.v[j].owned)
				free((void *)s[i].q.v[j].r.ev);
		free(s[i].q.v);
		free(s[i].q.tmp);
	}
	free(s);
	return ret ? ret : err;
}

int pevt_ordered__run(struct pevt_data *d, const struct pevt_ordered_opts *opts,
		      pevt_ordered_cb cb, void *ctx, struct pevt_ordered_stats *st)
{
	struct oe o = { .d = d, .cb = cb, .ctx = ctx, .st = st };
	size_t window = 65536;
	int ret;

	memset(st, 0, sizeof(*st));
	o.mem_cap = 1ull << 30;
	if (opts && opts->mem_cap)
		o.mem_cap = opts->mem_cap;
	if (opts && opts->window)
		window = opts->window;
	if (pevt_data__nr_streams(d) < 1)
		return -EINVAL;
	if (pevt_data__nr_streams(d) == 1)
		ret = run_rounds(&o, 0);
	else
		ret = run_merge(&o, window);
	pevt_data__stats(d)->nr_misordered = st->nr_misordered;
	return ret;
}
