/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - perf.data reader.
 *
 * Reads perf.data v2 (PERFILE2) in file mode, in pipe mode (`perf record
 * -o -`) and in the `perf record --threads` directory form (DIR/data plus
 * DIR/data.N record streams), with zstd PERF_RECORD_COMPRESSED records
 * expanded on the fly.
 *
 *	struct pevt_data *d = pevt_data__open("perf.data");	// "-": stdin
 *	pevt_data__for_each(d, cb, ctx);	// every record, file order
 *	pevt_data__delete(d);
 *
 * The records are handed out per stream (file mode: one stream, the data
 * section; directory: one per file; pipe: one).  Attrs, ids and feature
 * sections are parsed at open (file, directory) or as the HEADER_ATTR /
 * HEADER_FEATURE / EVENT_UPDATE records go by (pipe).  Unknown record
 * types are counted, not fatal.  On a corrupt or truncated stream the
 * iteration stops, pevt_data__error() names the problem and its offset,
 * and everything before it has been delivered.
 */
#ifndef __LIBPEVT_DATA_READER_H
#define __LIBPEVT_DATA_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <pevt/core.h>
#include <pevt/perf_data.h>

struct pevt_data;

struct pevt_data_evsel {
	struct perf_event_attr attr;
	char *name;			/* EVENT_DESC / EVENT_UPDATE, or derived */
	uint64_t *ids;
	uint32_t nr_ids;
	int idx;			/* position in the file */
	int sample_size;		/* fixed part of a sample, bytes */
};

struct pevt_branch_entry {
	uint64_t from, to, flags;
};

struct pevt_sample {
	struct pevt_data_evsel *evsel;
	uint64_t ip, time, addr, id, stream_id, period, weight, data_src;
	uint64_t transaction, phys_addr, cgroup, data_page_size, code_page_size;
	uint32_t pid, tid, cpu;
	uint16_t cpumode;		/* header.misc & PERF_RECORD_MISC_CPUMODE_MASK */
	uint16_t misc;
	const uint64_t *callchain;	/* callchain[0..nr_callchain) */
	uint64_t nr_callchain;
	const void *raw;
	uint32_t raw_size;
	const struct pevt_branch_entry *branch;
	uint64_t nr_branch, branch_hw_idx;
	const uint64_t *regs_user, *regs_intr;
	uint64_t regs_user_abi, regs_intr_abi;
	const void *stack_user;
	uint64_t stack_user_size, stack_user_dyn;
	const void *aux;
	uint64_t aux_size;
	const uint64_t *read;		/* raw read_format values */
	uint64_t read_size;		/* bytes */
};

struct pevt_data_stats {
	uint64_t nr[PERF_RECORD_HEADER_MAX];
	uint64_t nr_unknown;		/* types perf 6.1 does not know */
	uint64_t total_lost;		/* LOST.lost */
	uint64_t total_lost_samples;	/* LOST_SAMPLES.lost */
	uint64_t bytes;			/* record bytes, uncompressed */
	uint64_t nr_compressed_bytes;	/* COMPRESSED payload bytes */
	uint64_t nr_misordered;		/* filled in by the ordering layer */
	uint64_t nr_bad_samples;	/* samples that do not parse */
};

/* Feature strings kept from the header (NULL when absent). */
enum pevt_data_str {
	PEVT_DATA_HOSTNAME,
	PEVT_DATA_OSRELEASE,
	PEVT_DATA_VERSION,
	PEVT_DATA_ARCH,
	PEVT_DATA_CPUDESC,
	PEVT_DATA_CPUID,
	PEVT_DATA_CMDLINE,
	PEVT_DATA_NR_STR,
};

struct pevt_build_id {
	uint8_t id[20];
	uint8_t size;
	uint16_t misc;
	int32_t pid;
	char *filename;
};

/*
 * One record.  @stream: which stream (0 for file and pipe mode), @off: the
 * record's offset in that stream's file (records from inside a COMPRESSED
 * record carry the compressed record's offset), @transient: @ev is only
 * valid until the next record of the stream is read (pipe, decompressed,
 * realigned); otherwise it points into the mapped file and lives as long
 * as @d.
 */
struct pevt_data_rec {
	const struct perf_event_header *ev;
	uint64_t off;
	int stream;
	bool transient;
};

/* A non-zero return stops the iteration and is returned. */
typedef int (*pevt_data_cb)(struct pevt_data *d, const struct pevt_data_rec *r, void *ctx);

LIBPEVT_API struct pevt_data *pevt_data__open(const char *path);
LIBPEVT_API void pevt_data__delete(struct pevt_data *d);
LIBPEVT_API int pevt_data__for_each(struct pevt_data *d, pevt_data_cb cb, void *ctx);
/* One stream; -ERANGE if no such stream. */
LIBPEVT_API int pevt_data__stream_for_each(struct pevt_data *d, int stream,
					   pevt_data_cb cb, void *ctx);
/* Pull: 1 and @r filled, 0 at the end of the stream, -errno (sticky). */
LIBPEVT_API int pevt_data__next(struct pevt_data *d, int stream, struct pevt_data_rec *r);
/*
 * Give back the resident pages of stream bytes [from, to) (a mapped file
 * stays valid: pages fault in again from the page cache).  The reader
 * does it itself PEVT_DATA_WINDOW behind its position.
 */
#define PEVT_DATA_WINDOW	(16u << 20)
LIBPEVT_API int pevt_data__drop(struct pevt_data *d, int stream, uint64_t from, uint64_t to);
LIBPEVT_API int pevt_data__nr_streams(const struct pevt_data *d);
LIBPEVT_API bool pevt_data__is_pipe(const struct pevt_data *d);
LIBPEVT_API bool pevt_data__is_dir(const struct pevt_data *d);
LIBPEVT_API const char *pevt_data__error(const struct pevt_data *d);
/* What was salvaged from a damaged file (a killed recording), or NULL. */
LIBPEVT_API const char *pevt_data__warning(const struct pevt_data *d);
LIBPEVT_API int pevt_data__nr_evsels(const struct pevt_data *d);
LIBPEVT_API struct pevt_data_evsel *pevt_data__evsel(struct pevt_data *d, int idx);
/* The evsel a record belongs to (sample or sample_id_all trailer), or NULL. */
LIBPEVT_API struct pevt_data_evsel *pevt_data__evsel_of(struct pevt_data *d,
							const struct perf_event_header *ev);
LIBPEVT_API int pevt_data__parse_sample(struct pevt_data *d, const struct perf_event_header *ev,
					struct pevt_sample *s);
/* The sample_id_all trailer of a non-sample record (pid/tid/time/cpu/id). */
LIBPEVT_API int pevt_data__parse_id(struct pevt_data *d, const struct perf_event_header *ev,
				    struct pevt_sample *s);
LIBPEVT_API const char *pevt_data__str(const struct pevt_data *d, enum pevt_data_str which);
LIBPEVT_API bool pevt_data__has_feat(const struct pevt_data *d, int feat);
LIBPEVT_API const struct pevt_build_id *pevt_data__build_ids(const struct pevt_data *d, int *nr);
LIBPEVT_API struct pevt_data_stats *pevt_data__stats(struct pevt_data *d);
/*
 * Apply a user record that changes what the reader knows (HEADER_ATTR,
 * HEADER_FEATURE, EVENT_UPDATE, HEADER_BUILD_ID) as pevt_data__next() does
 * when it reads one: for a caller that walks the mapped records itself.
 */
LIBPEVT_API int pevt_data__process_meta(struct pevt_data *d, const struct perf_event_header *ev);
/* Count @ev in @st as pevt_data__next() counts what it delivers (--stats). */
LIBPEVT_API void pevt_data_stats__account(struct pevt_data_stats *st,
					  const struct perf_event_header *ev);
LIBPEVT_API const char *pevt_record_type__name(uint32_t type);
/* Data section(s): offset and size of stream @stream (file, dir). */
LIBPEVT_API int pevt_data__section(const struct pevt_data *d, int stream,
				   uint64_t *offset, uint64_t *size);
LIBPEVT_API const void *pevt_data__stream_base(const struct pevt_data *d, int stream);

#endif /* __LIBPEVT_DATA_READER_H */
