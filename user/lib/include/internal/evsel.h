/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __LIBPEVT_INTERNAL_EVSEL_H
#define __LIBPEVT_INTERNAL_EVSEL_H

#include <pevt/evsel.h>

struct pevt_evsel {
	struct perf_event_attr attr;	/* copy, attr.size filled in */
	int fd;				/* -1 when closed */
	enum pevt_backend backend;	/* of the open fd */
	struct pevt_mmap *map;		/* owned, or NULL */
};

#endif /* __LIBPEVT_INTERNAL_EVSEL_H */
