/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - common definitions.
 *
 * Conventions (libperf/libbpf style):
 *  - functions are named object__verb();
 *  - functions returning int return 0 (or a count) on success and a
 *    negative errno on failure, and also set errno to the positive value;
 *  - functions returning a pointer return NULL on failure and set errno;
 *  - extensible calls take an opts struct whose first member is
 *    `size_t sz` (use LIBPEVT_OPTS() to declare one).
 */
#ifndef __LIBPEVT_CORE_H
#define __LIBPEVT_CORE_H

#include <stddef.h>
#include <string.h>

#ifndef LIBPEVT_API
#define LIBPEVT_API __attribute__((visibility("default")))
#endif

/*
 * LIBPEVT_OPTS(type, name, fields...) - declare and zero an opts struct,
 * set its sz member and the given designated fields, e.g.
 *
 *	LIBPEVT_OPTS(pevt_mmap_opts, o, .writable = true);
 */
#define LIBPEVT_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		memset(&NAME, 0, sizeof(struct TYPE));			\
		(struct TYPE) { .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})

/* Which kernel interface opens an event: same perf_event_attr for both. */
enum pevt_backend {
	PEVT_BACKEND_PERF = 0,		/* stock perf_event_open(2) */
	PEVT_BACKEND_DEVICE = 1,	/* /dev/pevt, PEVT_IOC_OPEN */
};

LIBPEVT_API const char *pevt_backend__name(enum pevt_backend backend);

#endif /* __LIBPEVT_CORE_H */
