/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - records of a perf.data in time order.
 *
 * One stream (file, pipe): Weisbecker's FINISHED_ROUND algorithm.  At the
 * end of round n everything not newer than the newest record of round n-1
 * is delivered, so the queue never holds more than two rounds.  A file
 * without rounds is queued whole, like perf, unless the memory cap is hit:
 * then the oldest half is delivered (and later older records count as
 * misordered).
 *
 * Several streams (perf record --threads directory, no rounds): a k-way
 * merge of the streams, each behind a reorder window of `window` records
 * (a record may be overtaken inside its stream by an NMI-time write), so
 * memory is bounded by streams x window records.
 *
 * Records without a timestamp and perf's user records (ATTR, FEATURE,
 * FINISHED_ROUND, ...) are delivered as they are read, as perf does.
 * A record delivered older than one before it counts as misordered.
 */
#ifndef __LIBPEVT_ORDERED_H
#define __LIBPEVT_ORDERED_H

#include <pevt/data_reader.h>

struct pevt_ordered_opts {
	size_t sz;
	size_t mem_cap;		/* bytes of queued records, 0: 1 GiB */
	size_t window;		/* records per stream (directories), 0: 65536 */
};

struct pevt_ordered_stats {
	uint64_t nr_delivered;
	uint64_t nr_misordered;
	uint64_t nr_rounds;
	uint64_t nr_cap_flushes;	/* half flushes forced by mem_cap */
	uint64_t max_queued;		/* records */
	uint64_t max_queued_bytes;	/* records + copies */
};

/*
 * @time: UINT64_MAX when the record has none.  @r->transient: @r->ev is
 * only valid during the call (a copy the queue frees, or a pipe buffer).
 */
typedef int (*pevt_ordered_cb)(struct pevt_data *d, const struct pevt_data_rec *r,
			       uint64_t time, void *ctx);

LIBPEVT_API int pevt_ordered__run(struct pevt_data *d, const struct pevt_ordered_opts *opts,
				  pevt_ordered_cb cb, void *ctx, struct pevt_ordered_stats *st);
/* Timestamp of a record (sample or sample_id_all trailer), UINT64_MAX if none. */
LIBPEVT_API uint64_t pevt_data__time_of(struct pevt_data *d, const struct perf_event_header *ev);

#endif
