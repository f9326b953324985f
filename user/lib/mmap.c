// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt ring-buffer readers: one iterator, three layouts.
 *
 * Ordering contract with the kernel (kernel/events/ring_buffer.c,
 * perf_output_put_handle()), for the FORWARD (back-pressure) protocol:
 *
 *   kernel                              user (this file)
 *
 *   if (LOAD ->data_tail) {             LOAD ->data_head
 *                  (A)                  load-acquire    (C)
 *       STORE $data                     LOAD $data
 *       smp_wmb()  (B)                  store-release   (D)
 *       STORE ->data_head               STORE ->data_tail
 *   }
 *
 * A pairs with D: the kernel only overwrites bytes after it has seen a
 * data_tail past them, so our loads of a record must be ordered before
 * the store that frees it (release).  B pairs with C: the kernel stores a
 * record before publishing the head that covers it, so we must load the
 * head before any byte of the record (acquire).
 *
 * The backward readers work on a paused buffer: the PAUSE_OUTPUT ioctl
 * (a syscall, a full barrier) separates the last kernel write from our
 * walk, and the acquire load of data_head (C) is still what makes the
 * data it covers visible to us.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

#include <pevt/mmap.h>
#include "internal/lib.h"
#include "internal/mmap.h"

/* Data the kernel (or a fuzzer) may change under us: load it once. */
#define LOAD_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static bool mode_is_valid(enum pevt_read_mode mode)
{
	return mode == PEVT_READ_FORWARD ||
	       mode == PEVT_READ_BACKWARD_SIZE_AT_END ||
	       mode == PEVT_READ_WRITE_BACKWARD;
}

static void reset_position(struct pevt_mmap *map)
{
	/*
	 * FORWARD resumes from the consumer position stored in the control
	 * page.  The backward modes start with prev = 0: the kernel's head
	 * starts at 0 and nothing was ever written on the other side of it,
	 * which is what stops a walk in a buffer that never wrapped.
	 */
	if (map->mode == PEVT_READ_FORWARD)
		map->prev = LOAD_ONCE(map->pc->data_tail);
	else
		map->prev = 0;
	map->pos = map->prev;
	map->in_pass = false;
}

static struct pevt_mmap *mmap_alloc(struct perf_event_mmap_page *pc, void *data,
				    uint64_t size, const struct pevt_mmap_opts *opts,
				    int *err)
{
	enum pevt_read_mode mode = PEVT_READ_FORWARD;
	struct pevt_mmap_opts o;
	struct pevt_mmap *map;

	if (libpevt_opts_copy(&o, sizeof(o), opts)) {
		*err = -EINVAL;
		return NULL;
	}
	if (o.mode != PEVT_READ_AUTO)
		mode = o.mode;
	if (!mode_is_valid(mode) || size < 8 || (size & (size - 1))) {
		*err = -EINVAL;
		return NULL;
	}
	map = calloc(1, sizeof(*map));
	if (!map) {
		*err = -ENOMEM;
		return NULL;
	}
	map->pc = pc;
	map->data = data;
	map->size = size;
	map->mask = size - 1;
	map->fd = -1;
	map->mode = mode;
	map->writable = o.writable;
	/* Records are validated to be <= min(size, PEVT_RECORD_MAX). */
	map->bounce_size = min_u64(size, PEVT_RECORD_MAX);
	map->bounce = malloc(map->bounce_size);
	if (!map->bounce) {
		free(map);
		*err = -ENOMEM;
		return NULL;
	}
	reset_position(map);
	return map;
}

struct pevt_mmap *pevt_mmap__attach(struct perf_event_mmap_page *pc, void *data,
				    size_t data_size, const struct pevt_mmap_opts *opts)
{
	struct pevt_mmap *map;
	int err = 0;

	if (!pc || !data)
		return libpevt_err_ptr(-EINVAL);
	map = mmap_alloc(pc, data, data_size, opts, &err);
	if (!map)
		return libpevt_err_ptr(err);
	return map;
}

/*
 * Fault every page of a fresh mapping in now, in the thread that maps
 * it.  The guests' stock kernels (6.1, 6.12) insert a ring page at its
 * first touch (perf_mmap_fault()); this host's 6.18 maps them at mmap().
 * Without this, a reader of a 16-page ring took 17 faults on its first
 * pass (17-34 a run in the 6.1 guest), each with the process's mmap_lock
 * held for reading while the producer kept writing; a thread of the same
 * process that holds that lock for writing (any mmap() or munmap(), a
 * malloc() of a large block) puts such a reader to sleep
 * (Documentation/record.md, "Readers that never fault on their ring").
 * The control page is made writable where the mapping is
 * (MADV_POPULATE_WRITE, Linux 5.14): a read would map it read-only, since
 * perf asks to know of writes to it (page_mkwrite), and the reader's
 * first store of data_tail would fault.  /dev/pevt inserts every page at
 * mmap() already; this then costs a read per page.  Errors are ignored:
 * a page not faulted in here is faulted in where it is first read.
 */
static void prefault(void *base, size_t len, size_t page, bool writable)
{
	const volatile unsigned char *p = base;
	size_t off = 0;

	if (writable && !madvise(base, page, MADV_POPULATE_WRITE))
		off = page;
	for (; off < len; off += page)
		(void)p[off];
}

struct pevt_mmap *pevt_mmap__new(int fd, size_t data_pages,
				 const struct pevt_mmap_opts *opts)
{
	long page = sysconf(_SC_PAGESIZE);
	struct pevt_mmap_opts o;
	struct pevt_mmap *map;
	size_t len;
	void *base;
	int err = 0;

	if (libpevt_opts_copy(&o, sizeof(o), opts))
		return libpevt_err_ptr(-EINVAL);
	if (fd < 0)
		return libpevt_err_ptr(-EBADF);
	if (!data_pages || (data_pages & (data_pages - 1)) ||
	    data_pages > (SIZE_MAX / (size_t)page) - 1)
		return libpevt_err_ptr(-EINVAL);
	len = (data_pages + 1) * (size_t)page;
	base = mmap(NULL, len, PROT_READ | (o.writable ? PROT_WRITE : 0),
		    MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return libpevt_err_ptr(-errno);
	prefault(base, len, (size_t)page, o.writable);
	map = mmap_alloc(base, (unsigned char *)base + page,
			 (uint64_t)data_pages * page, &o, &err);
	if (!map) {
		munmap(base, len);
		return libpevt_err_ptr(err);
	}
	map->base = base;
	map->map_len = len;
	map->fd = fd;
	return map;
}

void pevt_mmap__delete(struct pevt_mmap *map)
{
	if (!map)
		return;
	if (map->base)
		munmap(map->base, map->map_len);
	free(map->bounce);
	free(map);
}

struct perf_event_mmap_page *pevt_mmap__control(struct pevt_mmap *map)
{
	return map->pc;
}

void *pevt_mmap__data(struct pevt_mmap *map)
{
	return map->data;
}

size_t pevt_mmap__data_size(struct pevt_mmap *map)
{
	return map->size;
}

enum pevt_read_mode pevt_mmap__mode(struct pevt_mmap *map)
{
	return map->mode;
}

int pevt_mmap__fd(struct pevt_mmap *map)
{
	return map->fd;
}

uint64_t pevt_mmap__read_head(struct pevt_mmap *map)
{
	/* C, matches the kernel's B: head before the data it covers. */
	return __atomic_load_n(&map->pc->data_head, __ATOMIC_ACQUIRE);
}

static void write_tail(struct pevt_mmap *map, uint64_t tail)
{
	/* D, matches the kernel's A: our loads of the data before the free. */
	__atomic_store_n(&map->pc->data_tail, tail, __ATOMIC_RELEASE);
}

int pevt_mmap__pause(struct pevt_mmap *map, bool pause)
{
	if (map->fd < 0)
		return libpevt_err(-EBADF);
	if (ioctl(map->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, pause ? 1 : 0) < 0)
		return libpevt_err(-errno);
	return 0;
}

static int pass_stop(struct pevt_mmap *map, enum pevt_read_stop stop, int err)
{
	map->stats.stop = stop;
	map->stats.err = err;
	map->in_pass = false;
	return err;
}

int pevt_mmap__read_init(struct pevt_mmap *map)
{
	uint64_t head, avail;

	memset(&map->stats, 0, sizeof(map->stats));
	map->in_pass = false;
	map->walk_ok = false;
	head = pevt_mmap__read_head(map);
	map->stats.head = head;
	map->head = head;
	map->walked = 0;

	if ((head | map->prev) & 7)
		return libpevt_err(pass_stop(map, PEVT_STOP_ERROR, -EBADMSG));

	switch (map->mode) {
	case PEVT_READ_FORWARD:
		/* Records live in [prev, head), oldest first. */
		avail = head - map->prev;
		if (avail > map->size) {
			/* Lapped (read-only map) or corrupt control page. */
			return libpevt_err(pass_stop(map, PEVT_STOP_ERROR,
						     (int64_t)avail < 0 ?
						     -EBADMSG : -EOVERFLOW));
		}
		map->pos = map->prev;
		map->end = head;
		break;
	case PEVT_READ_BACKWARD_SIZE_AT_END:
		/* Head grows; new records live in [prev, head). */
		avail = head - map->prev;
		if ((int64_t)avail < 0)
			return libpevt_err(pass_stop(map, PEVT_STOP_ERROR, -EBADMSG));
		map->pos = head;
		break;
	case PEVT_READ_WRITE_BACKWARD:
		/* Head shrinks (kernel: rb->head -= size); new: [head, prev). */
		avail = map->prev - head;
		if ((int64_t)avail < 0)
			return libpevt_err(pass_stop(map, PEVT_STOP_ERROR, -EBADMSG));
		map->pos = head;
		break;
	default:
		return libpevt_err(pass_stop(map, PEVT_STOP_ERROR, -EINVAL));
	}
	map->limit = min_u64(avail, map->size);
	if (!avail) {
		pass_stop(map, PEVT_STOP_END, 0);
		return libpevt_err(-EAGAIN);
	}
	map->in_pass = true;
	map->walk_ok = true;
	return 0;
}

/*
 * Return the record of @len bytes at ring position @start, contiguous:
 * in place, or copied into the bounce buffer if it wraps the end.
 */
static struct perf_event_header *record_at(struct pevt_mmap *map, uint64_t start,
					   uint64_t len)
{
	uint64_t off = start & map->mask;
	uint64_t first;

	if (off + len <= map->size)
		return (struct perf_event_header *)(map->data + off);
	first = map->size - off;
	memcpy(map->bounce, map->data + off, first);
	memcpy(map->bounce + first, map->data, len - first);
	return (struct perf_event_header *)map->bounce;
}

/* A plausible record size: header included, aligned, fits the buffer. */
static bool size_ok(struct pevt_mmap *map, uint64_t size, uint64_t min)
{
	return size >= min && !(size & 7) && size <= map->size &&
	       size <= PEVT_RECORD_MAX;
}

static struct perf_event_header *read_forward(struct pevt_mmap *map)
{
	struct perf_event_header *hdr;
	uint64_t size;

	if (map->pos == map->end) {
		pass_stop(map, PEVT_STOP_END, 0);
		return NULL;
	}
	/* pos is 8-aligned and the area a power of two >= 8: no wrap here. */
	hdr = (struct perf_event_header *)(map->data + (map->pos & map->mask));
	size = LOAD_ONCE(hdr->size);
	if (!size_ok(map, size, sizeof(*hdr)) || size > map->end - map->pos) {
		pass_stop(map, PEVT_STOP_ERROR, -EBADMSG);
		return NULL;
	}
	hdr = record_at(map, map->pos, size);
	map->pos += size;
	map->last_size = size;
	return hdr;
}

/*
 * Walk back from data_head: the u64 below position p is the size t of the
 * record ending at p.  The record is whole iff it lies within the last
 * map->size bytes before head (older bytes were overwritten) and does not
 * reach below prev (the end of what a previous pass read, or position 0
 * where the kernel started writing).
 */
static struct perf_event_header *read_size_at_end(struct pevt_mmap *map)
{
	uint64_t new_bytes = map->head - map->prev;
	struct perf_event_header *hdr;
	uint64_t t, start;

	if (map->walked == map->limit) {
		pass_stop(map, map->walked == new_bytes ? PEVT_STOP_END :
			  PEVT_STOP_OVERWRITTEN, 0);
		return NULL;
	}
	/* walked < limit, both 8-aligned: the trailer is intact. */
	t = LOAD_ONCE(*(uint64_t *)(map->data + ((map->pos - 8) & map->mask)));
	if (!size_ok(map, t, sizeof(*hdr) + sizeof(uint64_t)) ||
	    map->walked + t > new_bytes) {
		pass_stop(map, PEVT_STOP_ERROR, -EBADMSG);
		return NULL;
	}
	if (map->walked + t > map->size) {
		/* Its first bytes were overwritten: the normal end. */
		pass_stop(map, PEVT_STOP_OVERWRITTEN, 0);
		return NULL;
	}
	start = map->pos - t;
	hdr = record_at(map, start, t);
	/* Check the copy we return: header and trailer must agree. */
	if (hdr->size != t ||
	    *(uint64_t *)((unsigned char *)hdr + t - 8) != t) {
		pass_stop(map, PEVT_STOP_ERROR, -EBADMSG);
		return NULL;
	}
	map->pos = start;
	map->walked += t;
	map->last_size = t;
	return hdr;
}

/*
 * attr.write_backward: the kernel reserves a record by moving its head
 * down (rb->head -= size) and writes the record upward from the new head,
 * so data_head is the start of the newest record and older records follow
 * it at increasing positions.  Walk up from head; a record is whole iff
 * it ends within map->size bytes of head and does not cross prev (the
 * previous pass's head, or 0 where the kernel started).
 */
static struct perf_event_header *read_write_backward(struct pevt_mmap *map)
{
	uint64_t new_bytes = map->prev - map->head;
	struct perf_event_header *hdr;
	uint64_t size;

	if (map->walked == map->limit) {
		pass_stop(map, map->walked == new_bytes ? PEVT_STOP_END :
			  PEVT_STOP_OVERWRITTEN, 0);
		return NULL;
	}
	hdr = (struct perf_event_header *)(map->data + (map->pos & map->mask));
	size = LOAD_ONCE(hdr->size);
	if (!size) {
		/* Never written (mmap pages start zeroed): like perf, the end. */
		pass_stop(map, PEVT_STOP_EMPTY, 0);
		return NULL;
	}
	if (!size_ok(map, size, sizeof(*hdr)) ||
	    map->walked + size > new_bytes) {
		pass_stop(map, PEVT_STOP_ERROR, -EBADMSG);
		return NULL;
	}
	if (map->walked + size > map->size) {
		/* Its last bytes were overwritten by the newest records. */
		pass_stop(map, PEVT_STOP_OVERWRITTEN, 0);
		return NULL;
	}
	hdr = record_at(map, map->pos, size);
	if (hdr->size != size) {
		pass_stop(map, PEVT_STOP_ERROR, -EBADMSG);
		return NULL;
	}
	map->pos += size;
	map->walked += size;
	map->last_size = size;
	return hdr;
}

struct perf_event_header *pevt_mmap__read_event(struct pevt_mmap *map)
{
	struct perf_event_header *hdr;

	if (!map->in_pass)
		return NULL;
	switch (map->mode) {
	case PEVT_READ_FORWARD:
		hdr = read_forward(map);
		break;
	case PEVT_READ_BACKWARD_SIZE_AT_END:
		hdr = read_size_at_end(map);
		break;
	case PEVT_READ_WRITE_BACKWARD:
		hdr = read_write_backward(map);
		break;
	default:
		hdr = NULL;
		pass_stop(map, PEVT_STOP_ERROR, -EINVAL);
		break;
	}
	if (hdr) {
		map->stats.records++;
		map->stats.bytes += map->last_size;
	}
	return hdr;
}

void pevt_mmap__consume(struct pevt_mmap *map)
{
	if (map->mode != PEVT_READ_FORWARD || map->prev == map->pos)
		return;
	map->prev = map->pos;
	if (map->writable)
		write_tail(map, map->prev);
}

int pevt_mmap__read_done(struct pevt_mmap *map)
{
	if (map->mode == PEVT_READ_FORWARD) {
		/* Everything returned is consumed, even if not consume()d. */
		pevt_mmap__consume(map);
	} else if (!(map->stats.head & 7)) {
		/*
		 * The next pass returns only records newer than this head,
		 * even if this pass stopped early (as in libperf).
		 */
		map->prev = map->stats.head;
	}
	if (map->in_pass)
		pass_stop(map, PEVT_STOP_NONE, 0);
	/*
	 * A backward walk is only sound if nothing was written meanwhile
	 * (PAUSE_OUTPUT does not wait for a writer already past its check):
	 * a moved head means the records returned may be torn, and explains
	 * an EBADMSG better than garbage does.  Tell the caller, who can
	 * read again.
	 */
	if (map->mode != PEVT_READ_FORWARD && map->walk_ok &&
	    pevt_mmap__read_head(map) != map->stats.head)
		map->stats.err = -ESTALE;
	map->walk_ok = false;
	return libpevt_err(map->stats.err);
}

void pevt_mmap__rewind(struct pevt_mmap *map)
{
	uint64_t head;

	if (map->mode != PEVT_READ_FORWARD) {
		reset_position(map);
		return;
	}
	/*
	 * FORWARD cannot go back (the kernel may have reused consumed
	 * space): skip to the head instead, as perf does when it falls
	 * behind an overwrite buffer (-EOVERFLOW).
	 */
	head = pevt_mmap__read_head(map);
	if (head & 7)
		return;
	map->pos = head;
	map->in_pass = false;
	pevt_mmap__consume(map);
}

void pevt_mmap__stats(struct pevt_mmap *map, struct pevt_mmap_stats *stats)
{
	*stats = map->stats;
}

const char *pevt_read_mode__name(enum pevt_read_mode mode)
{
	switch (mode) {
	case PEVT_READ_AUTO:			return "auto";
	case PEVT_READ_FORWARD:			return "forward";
	case PEVT_READ_BACKWARD_SIZE_AT_END:	return "backward-size-at-end";
	case PEVT_READ_WRITE_BACKWARD:		return "write-backward";
	}
	return "unknown";
}

const char *pevt_read_stop__name(enum pevt_read_stop stop)
{
	switch (stop) {
	case PEVT_STOP_NONE:		return "none";
	case PEVT_STOP_END:		return "end";
	case PEVT_STOP_OVERWRITTEN:	return "overwritten";
	case PEVT_STOP_EMPTY:		return "empty";
	case PEVT_STOP_ERROR:		return "error";
	}
	return "unknown";
}
