// SPDX-License-Identifier: GPL-2.0
/*
 * pevt record's drains (record_drain.h): plain pwritev(), io_uring, and
 * one thread per buffer.
 *
 * The asynchronous drains share one shape.  A pass reserves the file
 * offset of what it takes from a buffer (pevt_data_writer__reserve()), so
 * the file order is the pass order whatever order the writes complete
 * in, and queues a write of those bytes straight from the mapping.  Each
 * buffer keeps its writes in a FIFO: data_tail is stored at the end of
 * the oldest completed writes only, so the kernel never reuses bytes that
 * are not on file yet, and a buffer is read again by the next pass even
 * while its earlier writes are in flight (each pass still reads every
 * buffer once, which is what FINISHED_ROUND promises).  A round's end is
 * committed to the header once no write below it is pending.
 *
 * Small rings are copied instead (DRAIN_COPY_MAX): a write straight from
 * the mapping holds its bytes until it completes, and a ring of a few
 * pages is full by then (under multi-threaded TCG the threads drain lost
 * 29-64% at -m 1 and 3-7% at -m 16 where write lost 0.4-5% and 0-0.2%,
 * Documentation/record.md).  A copied write gives its bytes back to the
 * kernel at once and writes from its own copy, as perf --aio does.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <liburing.h>

#include <pevt/data_writer.h>
#include <pevt/mmap.h>

#include "record_drain.h"

#define DRAIN_QLEN	32		/* writes in flight per buffer */
/* Rings up to this size are copied out (-m 64 with 4 KiB pages). */
#define DRAIN_COPY_MAX	(256u << 10)

struct drain_io {
	uint64_t off;			/* file offset */
	uint64_t end;			/* ring position after these bytes */
	struct iovec iov[2];
	int n;
	int parts;			/* io_uring: SQEs not completed yet */
	int res;			/* 0 or -errno */
	int done;			/* completed (atomic: the thread drain) */
	void *copy;			/* the bytes, copied out; NULL: from the ring */
};

struct drain_buf {
	struct drain *d;
	int idx;
	struct perf_event_mmap_page *pc;
	uint64_t read_pos;		/* taken by a pass up to here */
	struct drain_io q[DRAIN_QLEN];
	unsigned int head, tail;	/* oldest queued, next free (free-running) */
	/* DRAIN_THREADS */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int next;		/* the thread's next entry */
	bool stop, started;
};

struct drain {
	enum drain_kind kind;
	bool copy;			/* asynchronous writes from copies */
	struct pevt_data_writer *w;
	int fd;
	struct drain_buf *bufs;
	int nr;
	uint64_t *rounds;		/* ends of rounds not committed yet */
	int nr_rounds, alloc_rounds;
	int err;
	/* DRAIN_URING */
	struct io_uring ring;
	bool ring_up, fixed_file, fixed_bufs;
	int buf_err;			/* why the ring pages are not registered */
	int unsubmitted;
	/* DRAIN_THREADS */
	int efd;
	char desc[96];
};

static const char *const kind_names[] = {
	[DRAIN_WRITE] = "write",
	[DRAIN_URING] = "uring",
	[DRAIN_THREADS] = "threads",
};

const char *drain_kind__name(enum drain_kind k)
{
	return kind_names[k];
}

int drain_kind__parse(const char *s, enum drain_kind *k)
{
	unsigned int i;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		if (!strcmp(s, kind_names[i])) {
			*k = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* pwritev() all of @io, or -errno (a write of 0 bytes: -ENOSPC). */
static int write_all(int fd, struct drain_io *io)
{
	struct iovec v[2] = { io->iov[0], io->iov[1] }, *p = v;
	uint64_t off = io->off;
	int cnt = io->n;

	while (cnt > 0) {
		ssize_t n = pwritev(fd, p, cnt, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENOSPC;
		off += n;
		while (cnt > 0 && (size_t)n >= p->iov_len) {
			n -= p->iov_len;
			p++;
			cnt--;
		}
		if (cnt > 0) {
			p->iov_base = (char *)p->iov_base + n;
			p->iov_len -= n;
		}
	}
	return 0;
}

/* ---- one thread per buffer --------------------------------------------- */

static void *buf_thread(void *arg)
{
	struct drain_buf *b = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		struct drain_io *io;
		int res;

		while (b->next == b->tail && !b->stop)
			pthread_cond_wait(&b->cond, &b->lock);
		if (b->next == b->tail)
			break;
		io = &b->q[b->next % DRAIN_QLEN];
		pthread_mutex_unlock(&b->lock);
		res = write_all(b->d->fd, io);
		pthread_mutex_lock(&b->lock);
		io->res = res;
		__atomic_store_n(&io->done, 1, __ATOMIC_RELEASE);
		b->next++;
		if (write(b->d->efd, &one, sizeof(one)) < 0)
			break;	/* cannot happen with a counter eventfd */
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* ---- io_uring ----------------------------------------------------------- */

static int uring_setup(struct drain *d, struct pevt_mmap **maps)
{
	struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE };
	struct iovec *iov;
	int i, ret;

	/* Every write of every buffer may complete before we look (2 SQEs each). */
	p.cq_entries = d->nr * DRAIN_QLEN * 2 + 64;
	ret = io_uring_queue_init_params(256, &d->ring, &p);
	if (ret)
		return ret == -ENOSYS ? -EOPNOTSUPP : ret;
	d->ring_up = true;
	d->fixed_file = !io_uring_register_files(&d->ring, &d->fd, 1);
	if (d->copy)
		return 0;	/* writes go from malloc'ed copies: nothing to pin */
	iov = calloc(d->nr, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	for (i = 0; i < d->nr; i++) {
		iov[i].iov_base = pevt_mmap__data(maps[i]);
		iov[i].iov_len = pevt_mmap__data_size(maps[i]);
	}
	/* Pins the ring pages; a kernel may refuse special mappings: writev then. */
	d->buf_err = io_uring_register_buffers(&d->ring, iov, d->nr);
	d->fixed_bufs = !d->buf_err;
	free(iov);
	return 0;
}

static struct io_uring_sqe *uring_sqe(struct drain *d)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);

	if (!sqe) {
		io_uring_submit(&d->ring);
		d->unsubmitted = 0;
		sqe = io_uring_get_sqe(&d->ring);
	}
	return sqe;
}

static int uring_submit(struct drain *d, struct drain_buf *b, struct drain_io *io)
{
	uint64_t off = io->off;
	int k, fd = d->fixed_file ? 0 : d->fd;

	io->parts = d->fixed_bufs ? io->n : 1;
	for (k = 0; k < io->parts; k++) {
		struct io_uring_sqe *sqe = uring_sqe(d);

		if (!sqe)
			return -EBUSY;
		if (d->fixed_bufs)
			io_uring_prep_write_fixed(sqe, fd, io->iov[k].iov_base,
						  io->iov[k].iov_len, off, b->idx);
		else
			io_uring_prep_writev(sqe, fd, io->iov, io->n, off);
		if (d->fixed_file)
			sqe->flags |= IOSQE_FIXED_FILE;
		/* Records are 8-byte aligned, so is the entry: the low bit is the part. */
		io_uring_sqe_set_data(sqe, (void *)((uintptr_t)io | k));
		off += io->iov[k].iov_len;
		d->unsubmitted++;
	}
	return 0;
}

static void uring_complete(struct drain *d, struct io_uring_cqe *cqe)
{
	uintptr_t v = (uintptr_t)io_uring_cqe_get_data(cqe);
	struct drain_io *io = (struct drain_io *)(v & ~(uintptr_t)1);
	int k = v & 1;
	/* What this SQE wrote: iov[k] (registered buffers) or the whole vector. */
	struct drain_io rest = *io;

	if (d->fixed_bufs) {
		rest.iov[0] = io->iov[k];
		rest.n = 1;
		rest.off = io->off + (k ? io->iov[0].iov_len : 0);
	}
	if (cqe->res < 0) {
		if (!io->res)
			io->res = cqe->res;
	} else if (!io->res) {
		/* Short (disk full, a limit): the rest synchronously, for its errno. */
		size_t skip = cqe->res;
		int j = 0;

		rest.off += skip;
		while (j < rest.n && skip >= rest.iov[j].iov_len)
			skip -= rest.iov[j++].iov_len;
		if (j < rest.n) {
			memmove(rest.iov, rest.iov + j, (rest.n - j) * sizeof(rest.iov[0]));
			rest.n -= j;
			rest.iov[0].iov_base = (char *)rest.iov[0].iov_base + skip;
			rest.iov[0].iov_len -= skip;
			io->res = write_all(d->fd, &rest);
		}
	}
	if (!--io->parts)
		io->done = 1;
	io_uring_cqe_seen(&d->ring, cqe);
}

/* ---- common ------------------------------------------------------------- */

struct drain *drain__new(enum drain_kind kind, struct pevt_data_writer *w, int fd,
			 struct pevt_mmap **maps, int nr)
{
	struct drain *d = calloc(1, sizeof(*d));
	int i, ret = 0;

	if (!d)
		return errno = ENOMEM, NULL;
	d->kind = kind;
	d->w = w;
	d->fd = fd;
	d->efd = -1;
	d->nr = nr;
	d->bufs = calloc(nr ? nr : 1, sizeof(*d->bufs));
	if (!d->bufs) {
		free(d);
		return errno = ENOMEM, NULL;
	}
	for (i = 0; i < nr; i++) {
		struct drain_buf *b = &d->bufs[i];

		b->d = d;
		b->idx = i;
		b->pc = pevt_mmap__control(maps[i]);
		b->read_pos = b->pc->data_tail;
	}
	snprintf(d->desc, sizeof(d->desc), "%s", kind_names[kind]);
	if (kind != DRAIN_WRITE) {
		const char *c = getenv("PEVT_DRAIN_COPY");	/* 0/1: the A/B, tests */

		d->copy = c ? atoi(c) != 0 :
			  nr && pevt_mmap__data_size(maps[0]) <= DRAIN_COPY_MAX;
	}
	if (kind == DRAIN_URING) {
		ret = uring_setup(d, maps);
		if (!ret && d->copy)
			snprintf(d->desc, sizeof(d->desc), "uring (copies of small rings, %s file)",
				 d->fixed_file ? "registered" : "unregistered");
		else if (!ret)
			snprintf(d->desc, sizeof(d->desc), "uring (%s%s, %s file)",
				 d->fixed_bufs ? "registered buffers" : "buffers not registered: ",
				 d->fixed_bufs ? "" : strerror(-d->buf_err),
				 d->fixed_file ? "registered" : "unregistered");
	} else if (kind == DRAIN_THREADS) {
		d->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (d->efd < 0)
			ret = -errno;
		for (i = 0; i < nr && !ret; i++) {
			struct drain_buf *b = &d->bufs[i];

			pthread_mutex_init(&b->lock, NULL);
			pthread_cond_init(&b->cond, NULL);
			ret = -pthread_create(&b->thread, NULL, buf_thread, b);
			b->started = !ret;
		}
		snprintf(d->desc, sizeof(d->desc), "threads (%d%s)", nr,
			 d->copy ? ", copies of small rings" : "");
	}
	if (ret) {
		drain__delete(d);
		errno = -ret;
		return NULL;
	}
	return d;
}

void drain__delete(struct drain *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; i < d->nr; i++) {
		struct drain_buf *b = &d->bufs[i];

		if (!b->started)
			continue;
		pthread_mutex_lock(&b->lock);
		b->stop = true;
		pthread_cond_signal(&b->cond);
		pthread_mutex_unlock(&b->lock);
		pthread_join(b->thread, NULL);
	}
	if (d->ring_up)
		io_uring_queue_exit(&d->ring);	/* waits for what is in flight */
	if (d->efd >= 0)
		close(d->efd);
	for (i = 0; i < d->nr; i++) {
		struct drain_buf *b = &d->bufs[i];

		for (; b->head != b->tail; b->head++)
			free(b->q[b->head % DRAIN_QLEN].copy);
	}
	free(d->rounds);
	free(d->bufs);
	free(d);
}

const char *drain__describe(const struct drain *d)
{
	return d->desc;
}

uint64_t drain__read_pos(const struct drain *d, int i)
{
	return d->bufs[i].read_pos;
}

int drain__realtime(struct drain *d, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	int i, err;

	for (i = 0; i < d->nr; i++) {
		if (!d->bufs[i].started)
			continue;
		err = pthread_setschedparam(d->bufs[i].thread, SCHED_FIFO, &sp);
		if (err)
			return -err;
	}
	return 0;
}

int drain__fd(const struct drain *d)
{
	if (d->kind == DRAIN_URING)
		return d->ring.ring_fd;
	return d->kind == DRAIN_THREADS ? d->efd : -1;
}

static void store_tail(struct drain_buf *b, uint64_t end)
{
	/* The bytes are in the file: the kernel may reuse them. */
	__atomic_store_n(&b->pc->data_tail, end, __ATOMIC_RELEASE);
}

/* Take completed writes off the queues in order; the lowest pending offset. */
static uint64_t pop_completed(struct drain *d)
{
	uint64_t frontier = UINT64_MAX;
	int i;

	for (i = 0; i < d->nr; i++) {
		struct drain_buf *b = &d->bufs[i];
		uint64_t end = 0;
		bool moved = false;

		while (b->head != b->tail) {
			struct drain_io *io = &b->q[b->head % DRAIN_QLEN];
			/* res is the writer's until done is set (release/acquire). */
			int done = __atomic_load_n(&io->done, __ATOMIC_ACQUIRE);

			if (!done || io->res) {
				if (done && !d->err) {
					d->err = io->res;
					pevt_data_writer__set_error(d->w, io->res, "data");
				}
				if (io->off < frontier)
					frontier = io->off;
				break;
			}
			if (io->copy) {
				/* Its bytes went back to the kernel at the copy. */
				free(io->copy);
				io->copy = NULL;
			} else {
				end = io->end;
				moved = true;
			}
			b->head++;
		}
		if (moved)
			store_tail(b, end);
	}
	return frontier;
}

/* Wait for at least one completion. */
static int wait_one(struct drain *d)
{
	if (d->kind == DRAIN_URING) {
		struct io_uring_cqe *cqe;
		int ret;

		if (d->unsubmitted) {
			io_uring_submit(&d->ring);
			d->unsubmitted = 0;
		}
		ret = io_uring_wait_cqe(&d->ring, &cqe);
		if (ret && ret != -EINTR)
			return ret;
	} else if (d->kind == DRAIN_THREADS) {
		struct pollfd p = { .fd = d->efd, .events = POLLIN };

		/* Any thread's completion; the caller reads the counter. */
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

static int commit_rounds(struct drain *d, uint64_t frontier)
{
	uint64_t last = 0;
	int k = 0;

	while (k < d->nr_rounds && d->rounds[k] <= frontier)
		last = d->rounds[k++];
	if (!k)
		return 0;
	memmove(d->rounds, d->rounds + k, (d->nr_rounds - k) * sizeof(*d->rounds));
	d->nr_rounds -= k;
	return pevt_data_writer__commit(d->w, last);
}

/* Writes submitted and not completed (failed ones count as completed). */
static bool any_pending(struct drain *d)
{
	int i;

	for (i = 0; i < d->nr; i++) {
		struct drain_buf *b = &d->bufs[i];
		unsigned int k;

		for (k = b->head; k != b->tail; k++)
			if (!__atomic_load_n(&b->q[k % DRAIN_QLEN].done, __ATOMIC_ACQUIRE))
				return true;
	}
	return false;
}

/*
 * Tests: a pause in drain__reap(all) after the queues were popped, in
 * which a buffer thread's write completes (see there).
 */
static void reap_delay(void)
{
	static long us = -1;

	if (us < 0) {
		const char *v = getenv("PEVT_DRAIN_REAP_DELAY_US");

		us = v ? strtol(v, NULL, 10) : 0;
	}
	if (us > 0)
		usleep((useconds_t)us);
}

int drain__reap(struct drain *d, bool all)
{
	uint64_t frontier;
	bool pending;
	int ret;

	if (d->kind == DRAIN_WRITE)
		return 0;
	for (;;) {
		if (d->kind == DRAIN_URING) {
			struct io_uring_cqe *cqe;

			while (!io_uring_peek_cqe(&d->ring, &cqe))
				uring_complete(d, cqe);
		} else {
			uint64_t v;

			if (read(d->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				return -errno;
		}
		/*
		 * Looked at before the queues are popped: a buffer thread may
		 * complete a write after pop_completed() passed it, and if
		 * any_pending() came after, that write would count as done but
		 * stay on the queue, its bytes not given back (data_tail): the
		 * next file's drain, which starts at data_tail, took them again
		 * (342 duplicated samples at a --switch-output=1M switch under
		 * load).  Writes only ever complete, so nothing pending here
		 * means the pop below takes all.
		 */
		pending = all && any_pending(d);
		frontier = pop_completed(d);
		if (!d->err) {
			ret = commit_rounds(d, frontier);
			if (ret)
				d->err = ret;
		}
		if (all)
			reap_delay();
		/* After an error too: nothing may write into the file after we return. */
		if (!pending)
			break;
		ret = wait_one(d);
		if (ret)
			return ret;
	}
	return d->err;
}

int drain__submit(struct drain *d, int i, const struct iovec *iov, int n, uint64_t end)
{
	struct drain_buf *b = &d->bufs[i];
	struct drain_io *io;
	int ret;

	if (d->kind == DRAIN_WRITE) {
		ret = pevt_data_writer__writev(d->w, iov, n);
		if (ret)
			return ret;
		b->read_pos = end;
		store_tail(b, end);
		return 0;
	}
	/* This buffer's queue is full: the disk is that slow; wait. */
	while (b->tail - b->head == DRAIN_QLEN) {
		ret = drain__reap(d, false);
		if (!ret && b->tail - b->head == DRAIN_QLEN)
			ret = wait_one(d);
		if (ret)
			return ret;
	}
	io = &b->q[b->tail % DRAIN_QLEN];
	memset(io, 0, sizeof(*io));
	ret = pevt_data_writer__reservev(d->w, iov, n, &io->off);
	if (ret)
		return ret;
	io->end = end;
	io->n = n;
	memcpy(io->iov, iov, n * sizeof(*iov));
	if (d->copy) {
		size_t len = iov[0].iov_len + (n > 1 ? iov[1].iov_len : 0);

		io->copy = malloc(len ? len : 1);
		if (!io->copy)
			return pevt_data_writer__set_error(d->w, -ENOMEM, "data");
		iov_gather(io->copy, iov, n);
		io->iov[0].iov_base = io->copy;
		io->iov[0].iov_len = len;
		io->n = 1;
		/* Copied: the kernel may write there again now. */
		store_tail(b, end);
	}
	if (d->kind == DRAIN_URING) {
		ret = uring_submit(d, b, io);
		if (ret)
			return pevt_data_writer__set_error(d->w, ret, "data");
		b->tail++;
	} else {
		pthread_mutex_lock(&b->lock);
		b->tail++;
		pthread_cond_signal(&b->cond);
		pthread_mutex_unlock(&b->lock);
	}
	b->read_pos = end;
	return 0;
}

int drain__consumed(struct drain *d, int i, uint64_t end)
{
	struct drain_buf *b = &d->bufs[i];
	int ret;

	/* Behind writes in flight: let them complete first (not on a hot path). */
	while (b->head != b->tail) {
		ret = drain__reap(d, false);
		if (!ret && b->head != b->tail)
			ret = wait_one(d);
		if (ret)
			return ret;
	}
	b->read_pos = end;
	store_tail(b, end);
	return 0;
}

int drain__round(struct drain *d, bool mark)
{
	uint64_t end;
	int ret;

	if (d->kind == DRAIN_WRITE)
		return mark ? pevt_data_writer__round(d->w) : 0;
	ret = mark ? pevt_data_writer__round_mark(d->w, &end) : 0;
	if (ret < 0 || (mark && !ret))
		return ret;
	if (mark && d->nr_rounds == d->alloc_rounds) {
		int alloc = d->alloc_rounds ? 2 * d->alloc_rounds : 64;
		uint64_t *r = realloc(d->rounds, alloc * sizeof(*r));

		if (!r)
			return -ENOMEM;
		d->rounds = r;
		d->alloc_rounds = alloc;
	}
	if (mark)
		d->rounds[d->nr_rounds++] = end;
	if (d->kind == DRAIN_URING && d->unsubmitted) {
		ret = io_uring_submit(&d->ring);
		d->unsubmitted = 0;
		if (ret < 0)
			return pevt_data_writer__set_error(d->w, ret, "data");
	}
	return drain__reap(d, false);
}
