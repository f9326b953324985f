// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the perf.data reader: the input is a whole file
 * (file or pipe mode, possibly zstd-compressed records), opened through a
 * memfd, read in time order, every sample parsed and every side-band
 * record applied to a machine; its HEADER_PEVT_INDEX section read and
 * checked, and an index built for it.  Errors are fine; crashes, leaks and
 * sanitizer reports are not.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <pevt/data_index.h>
#include <pevt/data_reader.h>
#include <pevt/machine.h>
#include <pevt/ordered.h>

static int cb(struct pevt_data *d, const struct pevt_data_rec *r, uint64_t time, void *ctx)
{
	struct pevt_machine *m = ctx;
	struct pevt_sample s;

	if (r->ev->size < sizeof(*r->ev))
		abort();
	if (r->ev->type == PERF_RECORD_SAMPLE) {
		if (!pevt_data__parse_sample(d, r->ev, &s) && s.nr_callchain &&
		    (const uint8_t *)(s.callchain + s.nr_callchain) >
		    (const uint8_t *)r->ev + r->ev->size)
			abort();
		pevt_machine__thread(m, s.pid, s.tid, s.time);
		return 0;
	}
	pevt_machine__process(m, r->ev);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len)
{
	struct pevt_ordered_opts o = { .sz = sizeof(o), .mem_cap = 1 << 20, .window = 64 };
	struct pevt_ordered_stats st;
	struct pevt_index idx;
	char why[512];
	struct pevt_machine *m;
	struct pevt_data *d;
	char path[64];
	int fd = memfd_create("perf.data", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (len && write(fd, in, len) != (ssize_t)len)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	d = pevt_data__open(path);
	if (!d)
		abort();
	if (pevt_data__nr_streams(d)) {
		m = pevt_machine__new(d, NULL);
		if (!m)
			abort();
		pevt_ordered__run(d, &o, cb, m, &st);
		pevt_machine__delete(m);
		if (pevt_index__read(path, d, &idx, why, sizeof(why)) == 1) {
			uint64_t i, off, size;

			pevt_data__section(d, 0, &off, &size);
			for (i = 0; i < idx.hdr.nr; i++)	/* what read() promises */
				if (idx.e[i].offset < off || idx.e[i].offset + idx.e[i].size > off + size)
					abort();
			pevt_index__exit(&idx);
		}
		if (!pevt_index__build(d, 4096, &idx, why, sizeof(why)))
			pevt_index__exit(&idx);
	} else if (!pevt_data__error(d)) {
		abort();	/* a failed open always says why */
	}
	pevt_data__delete(d);
	close(fd);
	return 0;
}
