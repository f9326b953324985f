/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Large zeroed tables (call graph nodes and their hash, histograms):
 * anonymous mappings on 2 MB boundaries with MADV_HUGEPAGE, so that
 * filling a table of hundreds of MB takes one page fault per 2 MB
 * instead of one per 4 KB (a fault is expensive in a VM).  Falls back to
 * small pages where THP is off.  Tables under 2 MB come from calloc().
 */
#ifndef __LIBPEVT_INTERNAL_BIGALLOC_H
#define __LIBPEVT_INTERNAL_BIGALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PEVT_BIG_ALIGN	((size_t)2 << 20)

static inline size_t pevt_big_size(size_t size)
{
	return (size + PEVT_BIG_ALIGN - 1) & ~(PEVT_BIG_ALIGN - 1);
}

static inline void *pevt_big_alloc(size_t size)
{
	size_t len = pevt_big_size(size);
	uint8_t *p;
	size_t head;

	if (size < PEVT_BIG_ALIGN)
		return calloc(1, size);
	p = mmap(NULL, len + PEVT_BIG_ALIGN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	head = (PEVT_BIG_ALIGN - ((uintptr_t)p & (PEVT_BIG_ALIGN - 1))) & (PEVT_BIG_ALIGN - 1);
	if (head)
		munmap(p, head);
	if (PEVT_BIG_ALIGN - head)
		munmap(p + head + len, PEVT_BIG_ALIGN - head);
	p += head;
#ifdef MADV_HUGEPAGE
	madvise(p, len, MADV_HUGEPAGE);
#endif
	return p;
}

static inline void pevt_big_free(void *p, size_t size)
{
	if (size < PEVT_BIG_ALIGN)
		free(p);
	else if (p)
		munmap(p, pevt_big_size(size));
}

#endif
