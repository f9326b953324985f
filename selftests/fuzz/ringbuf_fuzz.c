// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the libpevt ring-buffer readers.  Built once per
 * reader with -DFUZZ_MODE=PEVT_READ_FORWARD / _BACKWARD_SIZE_AT_END /
 * _WRITE_BACKWARD (see run.sh).
 *
 * Input: struct fuzz_hdr, then the data area (repeated to fill it).  The
 * harness runs up to three read passes (exercising the prev state between
 * passes, and early breaks), and checks the readers' contract itself:
 * bounded passes, every record valid and inside its bounds, errors only
 * from the documented set.  Violations abort(), which libFuzzer reports.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <pevt/mmap.h>

#ifndef FUZZ_MODE
#define FUZZ_MODE PEVT_READ_BACKWARD_SIZE_AT_END
#endif

struct fuzz_hdr {
	uint8_t log2_size;	/* data area: 1 << (3 + log2_size % 10) */
	uint8_t flags;		/* bit 0: writable; bits 1-7: early-break mask */
	uint8_t pad[6];
	uint64_t head[3];	/* data_head before each pass */
	uint64_t tail;		/* initial data_tail */
};

static void check(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len)
{
	LIBPEVT_OPTS(pevt_mmap_opts, o, .mode = FUZZ_MODE);
	struct perf_event_mmap_page *pc;
	struct fuzz_hdr h;
	struct pevt_mmap *map;
	unsigned char *data;
	size_t size, i;
	int pass;

	if (len < sizeof(h) + 8)
		return 0;
	memcpy(&h, in, sizeof(h));
	in += sizeof(h);
	len -= sizeof(h);
	size = (size_t)1 << (3 + h.log2_size % 10);
	/* Exact-size allocations: ASan flags any access outside them. */
	data = malloc(size);
	pc = calloc(1, sizeof(*pc));
	if (!data || !pc)
		abort();
	for (i = 0; i < size; i++)
		data[i] = in[i % len];
	pc->data_tail = h.tail;
	o.writable = h.flags & 1;
	map = pevt_mmap__attach(pc, data, size, &o);
	check(map != NULL);

	for (pass = 0; pass < 3; pass++) {
		struct perf_event_header *ev;
		struct pevt_mmap_stats st;
		uint64_t n = 0, bytes = 0;
		int err;

		pc->data_head = h.head[pass];
		err = pevt_mmap__read_init(map);
		check(err == 0 || err == -EAGAIN || err == -EBADMSG ||
		      err == -EOVERFLOW);
		while ((ev = pevt_mmap__read_event(map)) != NULL) {
			volatile unsigned char sink = 0;
			uint16_t sz = ev->size;

			check(err == 0);
			check(sz >= sizeof(*ev) && !(sz & 7) && sz <= size);
			/* Touch every byte: ASan checks the bounds. */
			for (i = 0; i < sz; i++)
				sink ^= ((unsigned char *)ev)[i];
			(void)sink;
			if (FUZZ_MODE == PEVT_READ_BACKWARD_SIZE_AT_END) {
				uint64_t t;

				memcpy(&t, (unsigned char *)ev + sz - 8, 8);
				check(t == sz && sz >= 16);
			}
			n++;
			bytes += sz;
			/* No pass walks more than one buffer. */
			check(bytes <= size);
			check(n <= size / 8);
			pevt_mmap__consume(map);
			if ((h.flags >> 1) & (1u << (n % 7)) && pass == 1)
				break;
		}
		pevt_mmap__stats(map, &st);
		check(st.records == n);
		err = pevt_mmap__read_done(map);
		check(err == 0 || err == -EBADMSG || err == -EOVERFLOW);
		/* Forward: consumed exactly the bytes returned (no rewind yet). */
		if (FUZZ_MODE == PEVT_READ_FORWARD && (h.flags & 1) && pass == 0)
			check(pc->data_tail - h.tail == bytes);
		if (!(h.flags & 0x80) && pass == 0)
			pevt_mmap__rewind(map);
	}
	pevt_mmap__delete(map);
	free(pc);
	free(data);
	return 0;
}
