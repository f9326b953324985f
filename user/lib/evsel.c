// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt evsel: one event fd (pid, cpu) opened through either backend,
 * its counts and its ring buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <linux/pevt.h>
#include <pevt/evsel.h>
#include "internal/evsel.h"
#include "internal/lib.h"

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST	(1U << 4)
#endif
#define PEVT_FORMAT_ALL	(PERF_FORMAT_TOTAL_TIME_ENABLED |		\
			 PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | \
			 PERF_FORMAT_GROUP | PERF_FORMAT_LOST)

/* u64 words per counter entry (value, id, lost), group or not. */
static size_t entry_words(uint64_t fmt)
{
	return 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
}

/* u64 words before the first entry: nr, time_enabled, time_running. */
static size_t head_words(uint64_t fmt)
{
	return !!(fmt & PERF_FORMAT_GROUP) +
	       !!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) +
	       !!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING);
}

size_t pevt_counts__read_size(uint64_t read_format, size_t nr)
{
	if (!(read_format & PERF_FORMAT_GROUP))
		nr = 1;
	return (head_words(read_format) + nr * entry_words(read_format)) * 8;
}

int pevt_counts__parse(uint64_t fmt, const void *buf, size_t len,
		       struct pevt_counts *counts, size_t max)
{
	const unsigned char *p = buf;
	uint64_t nr = 1, ena = 0, run = 0, w;
	size_t i;

#define NEXT() ({ memcpy(&w, p, 8); p += 8; w; })
	if (fmt & ~(uint64_t)PEVT_FORMAT_ALL)
		return libpevt_err(-EINVAL);
	if (!buf || len < 8 || (len & 7))
		return libpevt_err(-EBADMSG);
	if (fmt & PERF_FORMAT_GROUP) {
		nr = NEXT();
		/* Non-group layout: value first, then times. */
		/* A group always has its leader: nr == 0 is not a read. */
		if (!nr || nr > len / 8 ||
		    len != (head_words(fmt) + nr * entry_words(fmt)) * 8)
			return libpevt_err(-EBADMSG);
		if (nr > max)
			return libpevt_err(-ENOSPC);
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			ena = NEXT();
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			run = NEXT();
		for (i = 0; i < nr; i++) {
			memset(&counts[i], 0, sizeof(counts[i]));
			counts[i].val = NEXT();
			counts[i].ena = ena;
			counts[i].run = run;
			if (fmt & PERF_FORMAT_ID)
				counts[i].id = NEXT();
			if (fmt & PERF_FORMAT_LOST)
				counts[i].lost = NEXT();
		}
		return (int)nr;
	}
	if (len != pevt_counts__read_size(fmt, 1))
		return libpevt_err(-EBADMSG);
	if (!max)
		return libpevt_err(-ENOSPC);
	memset(counts, 0, sizeof(*counts));
	counts->val = NEXT();
	if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
		counts->ena = NEXT();
	if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
		counts->run = NEXT();
	if (fmt & PERF_FORMAT_ID)
		counts->id = NEXT();
	if (fmt & PERF_FORMAT_LOST)
		counts->lost = NEXT();
	return 1;
#undef NEXT
}

struct pevt_evsel *pevt_evsel__new(const struct perf_event_attr *attr)
{
	struct pevt_evsel *evsel;

	if (!attr)
		return libpevt_err_ptr(-EINVAL);
	evsel = calloc(1, sizeof(*evsel));
	if (!evsel)
		return libpevt_err_ptr(-ENOMEM);
	/* The caller's attr may be an older (smaller) version: copy its size. */
	memcpy(&evsel->attr, attr, attr->size && attr->size < sizeof(*attr) ?
	       attr->size : sizeof(*attr));
	evsel->attr.size = sizeof(evsel->attr);
	evsel->fd = -1;
	return evsel;
}

void pevt_evsel__delete(struct pevt_evsel *evsel)
{
	if (!evsel)
		return;
	pevt_evsel__close(evsel);
	free(evsel);
}

int pevt_evsel__open(struct pevt_evsel *evsel, int pid, int cpu,
		     struct pevt_evsel *leader, const struct pevt_open_opts *opts)
{
	struct pevt_open_opts o;
	int group_fd = -1, fd;

	if (evsel->fd >= 0)
		return libpevt_err(-EBUSY);
	if (libpevt_opts_copy(&o, sizeof(o), opts))
		return libpevt_err(-EINVAL);
	if (leader && leader != evsel) {
		if (leader->fd < 0 || leader->backend != o.backend)
			return libpevt_err(-EINVAL);
		group_fd = leader->fd;
	}
	fd = pevt_open(&evsel->attr, pid, cpu, group_fd, &o);
	if (fd < 0)
		return fd;	/* errno already set */
	evsel->fd = fd;
	evsel->backend = o.backend;
	return 0;
}

void pevt_evsel__close(struct pevt_evsel *evsel)
{
	pevt_evsel__munmap(evsel);
	if (evsel->fd >= 0)
		close(evsel->fd);
	evsel->fd = -1;
}

int pevt_evsel__fd(struct pevt_evsel *evsel)
{
	return evsel->fd;
}

struct perf_event_attr *pevt_evsel__attr(struct pevt_evsel *evsel)
{
	return &evsel->attr;
}

enum pevt_backend pevt_evsel__backend(struct pevt_evsel *evsel)
{
	return evsel->backend;
}

static int evsel_ioctl(struct pevt_evsel *evsel, unsigned long req,
		       unsigned long arg)
{
	if (evsel->fd < 0)
		return libpevt_err(-EBADF);
	if (ioctl(evsel->fd, req, arg) < 0)
		return libpevt_err(-errno);
	return 0;
}

int pevt_evsel__enable(struct pevt_evsel *evsel)
{
	return evsel_ioctl(evsel, PERF_EVENT_IOC_ENABLE, 0);
}

int pevt_evsel__disable(struct pevt_evsel *evsel)
{
	return evsel_ioctl(evsel, PERF_EVENT_IOC_DISABLE, 0);
}

int pevt_evsel__reset(struct pevt_evsel *evsel)
{
	return evsel_ioctl(evsel, PERF_EVENT_IOC_RESET, 0);
}

int pevt_evsel__enable_group(struct pevt_evsel *evsel)
{
	return evsel_ioctl(evsel, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

int pevt_evsel__disable_group(struct pevt_evsel *evsel)
{
	return evsel_ioctl(evsel, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

int pevt_evsel__reset_group(struct pevt_evsel *evsel)
{
	return evsel_ioctl(evsel, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
}

int pevt_evsel__id(struct pevt_evsel *evsel, uint64_t *id)
{
	return evsel_ioctl(evsel, PERF_EVENT_IOC_ID, (unsigned long)id);
}

int pevt_evsel__set_output(struct pevt_evsel *evsel, struct pevt_evsel *target)
{
	if (target && target->fd < 0)
		return libpevt_err(-EBADF);
	return evsel_ioctl(evsel, PERF_EVENT_IOC_SET_OUTPUT,
			   target ? (unsigned long)target->fd : (unsigned long)-1);
}

int pevt_evsel__pause(struct pevt_evsel *evsel, bool pause)
{
	return evsel_ioctl(evsel, PERF_EVENT_IOC_PAUSE_OUTPUT, pause);
}

int pevt_evsel__read(struct pevt_evsel *evsel, struct pevt_counts *counts,
		     size_t max)
{
	uint64_t fmt = evsel->attr.read_format;
	size_t want = pevt_counts__read_size(fmt, max ? max : 1);
	uint64_t stack[16], *buf = stack;
	ssize_t n;
	int ret;

	if (evsel->fd < 0)
		return libpevt_err(-EBADF);
	if (!counts || !max)
		return libpevt_err(-EINVAL);
	if (want > sizeof(stack)) {
		buf = malloc(want);
		if (!buf)
			return libpevt_err(-ENOMEM);
	}
	n = read(evsel->fd, buf, want);
	if (n < 0)
		ret = -errno;
	else if (n == 0)
		ret = -ENODATA;	/* pinned event in error state */
	else
		ret = pevt_counts__parse(fmt, buf, n, counts, max);
	if (buf != stack)
		free(buf);
	return libpevt_err(ret);
}

struct pevt_mmap *pevt_evsel__mmap(struct pevt_evsel *evsel, size_t data_pages,
				   const struct pevt_mmap_opts *opts)
{
	struct pevt_mmap_opts o;
	struct pevt_mmap *map;

	if (evsel->fd < 0)
		return libpevt_err_ptr(-EBADF);
	if (evsel->map)
		return libpevt_err_ptr(-EBUSY);
	if (libpevt_opts_copy(&o, sizeof(o), opts))
		return libpevt_err_ptr(-EINVAL);
	if (o.mode == PEVT_READ_AUTO) {
		if (evsel->attr.write_backward)
			o.mode = PEVT_READ_WRITE_BACKWARD;
		else if (!o.writable &&
			 (evsel->attr.sample_type & PEVT_SAMPLE_SIZE_AT_END))
			o.mode = PEVT_READ_BACKWARD_SIZE_AT_END;
		else
			o.mode = PEVT_READ_FORWARD;
	}
	map = pevt_mmap__new(evsel->fd, data_pages, &o);
	if (!map)
		return NULL;	/* errno already set */
	evsel->map = map;
	return map;
}

struct pevt_mmap *pevt_evsel__map(struct pevt_evsel *evsel)
{
	return evsel->map;
}

void pevt_evsel__munmap(struct pevt_evsel *evsel)
{
	pevt_mmap__delete(evsel->map);
	evsel->map = NULL;
}
