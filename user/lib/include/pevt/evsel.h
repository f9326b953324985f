/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - open one event through either backend, read its counts.
 *
 * The same struct perf_event_attr opens an event with the stock
 * perf_event_open(2) or with /dev/pevt (PEVT_IOC_OPEN); everything after
 * the open (read(), ioctls, mmap) is the same perf fd protocol, so tools
 * have one code path with two openers:
 *
 *	LIBPEVT_OPTS(pevt_open_opts, o, .backend = PEVT_BACKEND_DEVICE);
 *	struct pevt_evsel *ev = pevt_evsel__new(&attr);
 *	struct pevt_counts c;
 *
 *	if (!ev || pevt_evsel__open(ev, 0, -1, NULL, &o) < 0)
 *		goto err;
 *	pevt_evsel__enable(ev);
 *	...
 *	pevt_evsel__read(ev, &c);	// c.val, c.ena, c.run per read_format
 *	pevt_evsel__delete(ev);		// closes the fd, unmaps the buffer
 */
#ifndef __LIBPEVT_EVSEL_H
#define __LIBPEVT_EVSEL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <pevt/core.h>
#include <pevt/mmap.h>

struct pevt_evsel;

struct pevt_open_opts {
	size_t sz;
	enum pevt_backend backend;	/* default PEVT_BACKEND_PERF */
	const char *device;		/* default PEVT_DEVICE_PATH */
	bool no_cloexec;		/* fds are O_CLOEXEC unless set */
};

/*
 * pevt_open() - open one event fd (the raw opener under pevt_evsel).
 * @pid, @cpu, @group_fd as for perf_event_open(2); the fd must come from
 * the same backend.  Returns the fd or -errno (errno set).  EINVAL for
 * attr == NULL; the device backend adds ENOENT/ENODEV when /dev/pevt or
 * the module is absent.
 */
LIBPEVT_API int pevt_open(const struct perf_event_attr *attr, int pid, int cpu,
			  int group_fd, const struct pevt_open_opts *opts);

/* One counter value as read(2) reports it; fields absent from read_format are 0. */
struct pevt_counts {
	uint64_t val;
	uint64_t ena;		/* PERF_FORMAT_TOTAL_TIME_ENABLED */
	uint64_t run;		/* PERF_FORMAT_TOTAL_TIME_RUNNING */
	uint64_t id;		/* PERF_FORMAT_ID */
	uint64_t lost;		/* PERF_FORMAT_LOST */
};

/*
 * pevt_counts__parse() - decode the bytes read(2) returned for
 * @read_format into @counts (at most @max entries: 1 without
 * PERF_FORMAT_GROUP, nr with it; group members get the group's ena/run).
 * Returns the number of entries, -EINVAL for unknown format bits, -EBADMSG
 * if @len does not match the layout, -ENOSPC if nr > @max.
 */
LIBPEVT_API int pevt_counts__parse(uint64_t read_format, const void *buf,
				   size_t len, struct pevt_counts *counts,
				   size_t max);

/* Bytes read(2) returns for @read_format with @nr group members. */
LIBPEVT_API size_t pevt_counts__read_size(uint64_t read_format, size_t nr);

/* Copies @attr (attr->size 0 means sizeof(struct perf_event_attr)). */
LIBPEVT_API struct pevt_evsel *pevt_evsel__new(const struct perf_event_attr *attr);
/* Closes, unmaps and frees. */
LIBPEVT_API void pevt_evsel__delete(struct pevt_evsel *evsel);

/*
 * pevt_evsel__open() - open for (@pid, @cpu) in @leader's group (NULL:
 * own group; the leader must be open, with the same backend).  @opts may
 * be NULL (stock perf_event_open).  -EBUSY if already open.
 */
LIBPEVT_API int pevt_evsel__open(struct pevt_evsel *evsel, int pid, int cpu,
				 struct pevt_evsel *leader,
				 const struct pevt_open_opts *opts);
LIBPEVT_API void pevt_evsel__close(struct pevt_evsel *evsel);

LIBPEVT_API int pevt_evsel__fd(struct pevt_evsel *evsel);
LIBPEVT_API struct perf_event_attr *pevt_evsel__attr(struct pevt_evsel *evsel);
LIBPEVT_API enum pevt_backend pevt_evsel__backend(struct pevt_evsel *evsel);

/* PERF_EVENT_IOC_{ENABLE,DISABLE,RESET}; the _group forms pass PERF_IOC_FLAG_GROUP. */
LIBPEVT_API int pevt_evsel__enable(struct pevt_evsel *evsel);
LIBPEVT_API int pevt_evsel__disable(struct pevt_evsel *evsel);
LIBPEVT_API int pevt_evsel__reset(struct pevt_evsel *evsel);
LIBPEVT_API int pevt_evsel__enable_group(struct pevt_evsel *evsel);
LIBPEVT_API int pevt_evsel__disable_group(struct pevt_evsel *evsel);
LIBPEVT_API int pevt_evsel__reset_group(struct pevt_evsel *evsel);

/* PERF_EVENT_IOC_ID. */
LIBPEVT_API int pevt_evsel__id(struct pevt_evsel *evsel, uint64_t *id);
/* PERF_EVENT_IOC_SET_OUTPUT into @target's buffer (NULL: detach). */
LIBPEVT_API int pevt_evsel__set_output(struct pevt_evsel *evsel,
				       struct pevt_evsel *target);

/*
 * pevt_evsel__read() - read(2) the counter and decode it per
 * attr.read_format.  Without PERF_FORMAT_GROUP fills @counts[0] and
 * returns 1; with it fills up to @max members (leader first) and returns
 * their number (-ENOSPC if the group is larger).  A counter in error
 * state (read() returns 0 bytes) gives -ENODATA.
 */
LIBPEVT_API int pevt_evsel__read(struct pevt_evsel *evsel,
				 struct pevt_counts *counts, size_t max);

/*
 * pevt_evsel__mmap() - map 1 + @data_pages pages of the event's buffer.
 * opts->writable selects back-pressure (writable) or overwrite mode.  With
 * opts->mode PEVT_READ_AUTO (or opts NULL) the reader is chosen from the
 * attr: write_backward -> WRITE_BACKWARD; read-only with
 * PEVT_SAMPLE_SIZE_AT_END -> BACKWARD_SIZE_AT_END; else FORWARD.  The
 * evsel owns the map (freed by close/delete); -EBUSY if already mapped.
 */
LIBPEVT_API struct pevt_mmap *pevt_evsel__mmap(struct pevt_evsel *evsel,
					       size_t data_pages,
					       const struct pevt_mmap_opts *opts);
LIBPEVT_API struct pevt_mmap *pevt_evsel__map(struct pevt_evsel *evsel);
LIBPEVT_API void pevt_evsel__munmap(struct pevt_evsel *evsel);

/* PERF_EVENT_IOC_PAUSE_OUTPUT: stop/restart writes into the buffer. */
LIBPEVT_API int pevt_evsel__pause(struct pevt_evsel *evsel, bool pause);

#endif /* __LIBPEVT_EVSEL_H */
