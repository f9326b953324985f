/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - perf-protocol ring buffers and their readers.
 *
 * One iterator serves three buffer layouts (enum pevt_read_mode):
 *
 *   PEVT_READ_FORWARD
 *	The perf protocol on a writable (back-pressure) mapping: records are
 *	returned oldest first, from data_tail up to data_head, and consumed
 *	by storing data_tail.  The kernel drops (and later reports with
 *	PERF_RECORD_LOST) what does not fit.
 *
 *   PEVT_READ_BACKWARD_SIZE_AT_END
 *	A paused overwrite (read-only) buffer whose records all end with the
 *	PEVT_SAMPLE_SIZE_AT_END trailer.  Records are returned NEWEST FIRST,
 *	walking back from data_head with the trailer; the walk stops exactly
 *	where overwritten data begins, so every returned record is whole.
 *
 *   PEVT_READ_WRITE_BACKWARD
 *	A paused buffer of an event opened with attr.write_backward (stock
 *	kernel): the kernel writes records at decreasing addresses and
 *	data_head (decreasing, i.e. "negative") is the start of the newest
 *	record.  Records are returned NEWEST FIRST, walking forward from
 *	data_head until one buffer size has been walked or a zero header
 *	(never written space) is met.
 *
 * Usage, the same for every mode:
 *
 *	struct perf_event_header *ev;
 *	int err;
 *
 *	err = pevt_mmap__read_init(map);	// snapshot data_head
 *	if (err == -EAGAIN)
 *		return 0;			// nothing new
 *	if (err)
 *		return err;
 *	while ((ev = pevt_mmap__read_event(map)) != NULL) {
 *		process(ev);			// ev valid until consume()
 *		pevt_mmap__consume(map);	// FORWARD: frees ev's space
 *	}
 *	err = pevt_mmap__read_done(map);	// 0, or -EBADMSG if the walk
 *						// stopped on inconsistent data,
 *						// -ESTALE (backward modes) if
 *						// data_head moved during the walk
 *
 * A returned record is always complete and contiguous: a record that
 * wraps around the end of the data area is copied into a bounce buffer
 * owned by the map.  The pointer is valid until the next read_event(),
 * consume() or read_done() call.
 *
 * Each read_init()/read_done() pass returns only records that are new
 * since the previous pass (the map remembers where it stopped: data_tail
 * for FORWARD, the previous data_head for the backward modes), so a
 * backward reader can pause, read, resume, pause and read again.
 *
 * For the backward modes the producer must be stopped while reading:
 * pause the buffer first (pevt_mmap__pause() or
 * PERF_EVENT_IOC_PAUSE_OUTPUT), else the walk can race with the writer.
 */
#ifndef __LIBPEVT_MMAP_H
#define __LIBPEVT_MMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <pevt/core.h>

struct pevt_mmap;

enum pevt_read_mode {
	PEVT_READ_AUTO = 0,		/* pevt_evsel__mmap(): pick from attr */
	PEVT_READ_FORWARD,
	PEVT_READ_BACKWARD_SIZE_AT_END,
	PEVT_READ_WRITE_BACKWARD,
};

/* Why the last read pass ended. */
enum pevt_read_stop {
	PEVT_STOP_NONE = 0,		/* pass not finished */
	PEVT_STOP_END,			/* reached data already read / never written */
	PEVT_STOP_OVERWRITTEN,		/* next record was (partly) overwritten */
	PEVT_STOP_EMPTY,		/* WRITE_BACKWARD: zero header */
	PEVT_STOP_ERROR,		/* inconsistent data, read_done() < 0 */
};

struct pevt_mmap_opts {
	size_t sz;
	enum pevt_read_mode mode;	/* default: FORWARD for fd maps */
	bool writable;			/* PROT_WRITE: back-pressure mode */
};

struct pevt_mmap_stats {
	uint64_t records;		/* returned in the last pass */
	uint64_t bytes;			/* bytes of those records */
	uint64_t head;			/* data_head snapshot of the last pass */
	enum pevt_read_stop stop;	/* why the last pass ended */
	int err;			/* 0 or -errno of the last pass */
};

/*
 * pevt_mmap__new() - mmap a perf/pevt event fd: 1 control page plus
 * @data_pages (a power of two, >= 1) data pages; -EINVAL otherwise.
 * @opts may be NULL (read-only mapping, FORWARD reader).  A FORWARD
 * reader on a read-only mapping cannot store data_tail: it keeps its
 * position privately and notices only being lapped (-EOVERFLOW from
 * read_init), not records overwritten while it reads them, which is why
 * the backward modes exist.
 */
LIBPEVT_API struct pevt_mmap *pevt_mmap__new(int fd, size_t data_pages,
					     const struct pevt_mmap_opts *opts);

/*
 * pevt_mmap__attach() - build a reader over memory laid out like a perf
 * mapping but not obtained from the kernel (tests, fuzzers, files):
 * @pc is the control page (data_head, data_tail), @data the data area of
 * @data_size bytes (a power of two, >= 8).  Nothing is unmapped on
 * delete.  @opts->writable says whether consume() stores data_tail.
 */
LIBPEVT_API struct pevt_mmap *pevt_mmap__attach(struct perf_event_mmap_page *pc,
						void *data, size_t data_size,
						const struct pevt_mmap_opts *opts);

LIBPEVT_API void pevt_mmap__delete(struct pevt_mmap *map);

LIBPEVT_API struct perf_event_mmap_page *pevt_mmap__control(struct pevt_mmap *map);
LIBPEVT_API void *pevt_mmap__data(struct pevt_mmap *map);
LIBPEVT_API size_t pevt_mmap__data_size(struct pevt_mmap *map);
LIBPEVT_API enum pevt_read_mode pevt_mmap__mode(struct pevt_mmap *map);
LIBPEVT_API int pevt_mmap__fd(struct pevt_mmap *map);

/* data_head, loaded with acquire semantics (pairs with the kernel's B). */
LIBPEVT_API uint64_t pevt_mmap__read_head(struct pevt_mmap *map);

/* PERF_EVENT_IOC_PAUSE_OUTPUT on the map's fd (-EBADF for attached maps). */
LIBPEVT_API int pevt_mmap__pause(struct pevt_mmap *map, bool pause);

/* The iterator; see the usage comment at the top of this file. */
LIBPEVT_API int pevt_mmap__read_init(struct pevt_mmap *map);
LIBPEVT_API struct perf_event_header *pevt_mmap__read_event(struct pevt_mmap *map);
LIBPEVT_API void pevt_mmap__consume(struct pevt_mmap *map);
LIBPEVT_API int pevt_mmap__read_done(struct pevt_mmap *map);

/*
 * Backward modes: forget what was read, the next pass walks the whole
 * buffer again.  FORWARD: skip (and consume) everything up to data_head,
 * the way out of -EOVERFLOW.
 */
LIBPEVT_API void pevt_mmap__rewind(struct pevt_mmap *map);

LIBPEVT_API void pevt_mmap__stats(struct pevt_mmap *map,
				  struct pevt_mmap_stats *stats);

LIBPEVT_API const char *pevt_read_mode__name(enum pevt_read_mode mode);
LIBPEVT_API const char *pevt_read_stop__name(enum pevt_read_stop stop);

#endif /* __LIBPEVT_MMAP_H */
