/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pevt record's drains: how what a pass takes out of a ring buffer gets
 * into the file (record_drain.c).
 *
 *	d = drain__new(DRAIN_URING, w, fd, maps, nr);
 *	while (recording) {
 *		for each buffer i:
 *			pos = drain__read_pos(d, i);	// where the unread data begins
 *			... walk [pos, head) ...
 *			drain__submit(d, i, iov, n, head);
 *		drain__round(d, true);		// FINISHED_ROUND
 *		poll(..., drain__fd(d), ...);	// a buffer or a completion
 *		drain__reap(d, false);		// tails, commits
 *	}
 *	drain__reap(d, true);			// everything on file
 *	drain__delete(d);
 *
 * Every drain takes each buffer at most once per pass and appends in
 * pass order, so the file order (and Weisbecker's round guarantee) is the
 * same whatever the drain; the drains differ in who waits for the disk:
 *
 *   DRAIN_WRITE	the pass itself: one pwritev() per buffer, data_tail
 *			stored when it returned.
 *   DRAIN_URING	nobody: each buffer's bytes go to io_uring as a write
 *			at the file offset reserved for them, straight from the
 *			mapping (registered buffers and file when the kernel
 *			takes them); data_tail moves when the write completed.
 *   DRAIN_THREADS	one thread per buffer (per CPU): the pass hands it the
 *			reserved offset and the iovecs, the thread pwritev()s
 *			and data_tail moves when it returned.
 *
 * Rings of at most DRAIN_COPY_MAX are copied by the asynchronous drains:
 * the pass copies the bytes out, data_tail moves at once, and the write
 * goes from the copy (PEVT_DRAIN_COPY=0|1 forces either way).
 *
 * The header's data.size (pevt_data_writer__commit()) only ever covers
 * rounds whose every byte completed, so kill -9 and disk full leave a file
 * that is readable up to a complete round with every drain.
 */
#ifndef PEVT_RECORD_DRAIN_H
#define PEVT_RECORD_DRAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

struct pevt_data_writer;
struct pevt_mmap;
struct drain;

enum drain_kind {
	DRAIN_WRITE,
	DRAIN_URING,
	DRAIN_THREADS,
};

const char *drain_kind__name(enum drain_kind k);
int drain_kind__parse(const char *s, enum drain_kind *k);

/*
 * @fd is the writer's fd.  NULL with errno set on failure; EOPNOTSUPP
 * when the kernel has no io_uring (the caller may fall back).
 */
struct drain *drain__new(enum drain_kind kind, struct pevt_data_writer *w, int fd,
			 struct pevt_mmap **maps, int nr);
void drain__delete(struct drain *d);
/* What the drain runs as after set-up (io_uring registration, ...): for the summary. */
const char *drain__describe(const struct drain *d);

/* The first byte of buffer @i that no pass has taken yet. */
uint64_t drain__read_pos(const struct drain *d, int i);
/*
 * Write [read_pos, @end) of buffer @i, given as @n (1 or 2) iovecs into
 * its mapping.  0 or -errno (the writer's error is set).
 */
int drain__submit(struct drain *d, int i, const struct iovec *iov, int n, uint64_t end);
/*
 * The data of buffer @i up to @end went to the file another way (already
 * written, e.g. compressed): data_tail may move there once the writes
 * before it completed.
 */
int drain__consumed(struct drain *d, int i, uint64_t end);
/*
 * End of a pass.  @mark: write FINISHED_ROUND, committed once its data
 * completed; otherwise only hand the pass's writes on (io_uring submit)
 * and take completions.
 */
int drain__round(struct drain *d, bool mark);
/*
 * Take completions: store data_tails, commit complete rounds.  @all:
 * wait until nothing is in flight.  0 or -errno of a failed write.
 */
int drain__reap(struct drain *d, bool all);
/* Readable when completions wait (poll it with the buffers), or -1. */
int drain__fd(const struct drain *d);
/* -r: the drain's own threads (threads drain) SCHED_FIFO @prio; 0 or -errno. */
int drain__realtime(struct drain *d, int prio);

/*
 * iov_gather() - copy the @n pieces of @iov (a ring range: one piece, or
 * two when it wraps) one after the other to @dst.  Return: bytes copied.
 */
static inline size_t iov_gather(void *dst, const struct iovec *iov, int n)
{
	size_t at = 0;

	for (int i = 0; i < n; at += iov[i].iov_len, i++)
		memcpy((char *)dst + at, iov[i].iov_base, iov[i].iov_len);
	return at;
}

#endif
