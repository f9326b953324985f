/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __LIBPEVT_INTERNAL_MMAP_H
#define __LIBPEVT_INTERNAL_MMAP_H

#include <stdint.h>
#include <pevt/mmap.h>

/* Largest record the kernel can write: header.size is a __u16. */
#define PEVT_RECORD_MAX		0xfff8u

struct pevt_mmap {
	struct perf_event_mmap_page *pc;	/* control page */
	unsigned char *data;			/* data area */
	uint64_t size;				/* data bytes, power of two */
	uint64_t mask;				/* size - 1 */
	void *base;				/* mmap()ed region, NULL if attached */
	size_t map_len;				/* its length */
	int fd;					/* event fd, -1 if attached */
	enum pevt_read_mode mode;
	bool writable;				/* may store data_tail */

	/*
	 * Reader position.  FORWARD: @prev is data_tail (consumed up to),
	 * @pos the next record, @end the data_head snapshot.  Backward
	 * modes: @prev is the data_head of the previous pass (0 initially:
	 * nothing written before position 0), @pos the position the walk
	 * has reached, @head the snapshot, @limit the bytes that may be
	 * walked in this pass.
	 */
	uint64_t prev;
	uint64_t pos;
	uint64_t end;
	uint64_t head;
	uint64_t limit;
	uint64_t walked;
	uint64_t last_size;			/* of the record just returned */
	bool in_pass;				/* read_event() may return records */
	bool walk_ok;				/* read_init() succeeded */

	struct pevt_mmap_stats stats;
	unsigned char *bounce;			/* for records wrapping the end */
	size_t bounce_size;
};

#endif /* __LIBPEVT_INTERNAL_MMAP_H */
