/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - an index of a perf.data file's data section (Namhyung Kim's
 * indexed data file), kept in the HEADER_PEVT_INDEX feature section, which
 * stock perf skips (it reads feature bits only up to its
 * HEADER_LAST_FEATURE).
 *
 * The data section is cut into slices of about slice_size bytes, each
 * ending just after a FINISHED_ROUND record (the last one ends at the end
 * of the data section), so a reader can walk the slices in parallel and
 * still order the records by Weisbecker's rounds.
 *
 * Payload (little endian, file byte order):
 *
 *	struct pevt_index_header	magic "PEVTIDX1", version 1, entry
 *					size, nr, slice_size, data offset/size
 *	nr x struct pevt_index_entry	offset, size, first/last time (of
 *					the slice's timed records; UINT64_MAX
 *					and 0 if none), records, samples
 *
 * pevt_index__write() rewrites the file through a temporary file in the
 * same directory and rename(), so an interrupted write leaves the old file.
 */
#ifndef __LIBPEVT_DATA_INDEX_H
#define __LIBPEVT_DATA_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include <pevt/core.h>
#include <pevt/data_reader.h>

#define PEVT_INDEX_MAGIC	0x3158444954564550ULL	/* "PEVTIDX1" */
#define PEVT_INDEX_VERSION	1
#define PEVT_INDEX_SLICE	(4u << 20)		/* default slice size */

struct pevt_index_header {
	uint64_t magic;
	uint32_t version;
	uint32_t entry_size;		/* sizeof(struct pevt_index_entry) */
	uint64_t nr;
	uint64_t slice_size;
	uint64_t data_offset;		/* the data section it indexes */
	uint64_t data_size;
};

struct pevt_index_entry {
	uint64_t offset;		/* file offset of the slice's first record */
	uint64_t size;
	uint64_t first_time, last_time;
	uint64_t nr_records;
	uint64_t nr_samples;
};

struct pevt_index {
	struct pevt_index_header hdr;
	struct pevt_index_entry *e;
};

/*
 * The index as it is built, one record at a time, in file order: what
 * pevt_index__build() does walking a file and what pevt record does while
 * it writes one (data_writer.c), so both give the same index.
 */
struct pevt_index_builder {
	struct pevt_index idx;
	struct pevt_index_entry cur;	/* the open slice */
	size_t cap;
	uint64_t pos;			/* file offset after the last record */
	int err;
};

LIBPEVT_API void pevt_index_builder__init(struct pevt_index_builder *b, uint64_t slice_size,
					  uint64_t data_offset);
/*
 * The next record: @type and @size of its header, @time its time
 * (pevt_data__time_of(), UINT64_MAX if it has none or if the record is not
 * 8-byte aligned in the file).  0 or -ENOMEM (kept for finish()).
 */
LIBPEVT_API int pevt_index_builder__add(struct pevt_index_builder *b, uint32_t type,
					uint32_t size, uint64_t time);
/*
 * What a run of whole records adds, summed up by whoever walked them:
 * their count, samples, bytes, and the first and last of their times as
 * pevt_index_builder__add() takes them (UINT64_MAX and 0: none had one).
 * No FINISHED_ROUND among them: a slice ends only after one.
 */
struct pevt_index_run {
	uint64_t nr_records, nr_samples, bytes;
	uint64_t first_time, last_time;
};

/* pevt_index_builder__add() of every record of @run at once.  0 or the error kept. */
LIBPEVT_API int pevt_index_builder__add_run(struct pevt_index_builder *b,
					    const struct pevt_index_run *run);
/*
 * The data section holds what was added, @data_size bytes: the index
 * moves to @idx (free it with pevt_index__exit()).  0 or -errno (the
 * builder is freed either way).
 */
LIBPEVT_API int pevt_index_builder__finish(struct pevt_index_builder *b, uint64_t data_size,
					   struct pevt_index *idx);
LIBPEVT_API void pevt_index_builder__exit(struct pevt_index_builder *b);
/*
 * The HEADER_PEVT_INDEX payload of @idx, as pevt_index__write() writes
 * it: a malloc'd buffer of *@len bytes, or NULL.
 */
LIBPEVT_API void *pevt_index__payload(const struct pevt_index *idx, size_t *len);

/*
 * Build the index of @d (file mode only) in memory.  0, or -errno with
 * @why (if not NULL) naming the problem.
 */
LIBPEVT_API int pevt_index__build(struct pevt_data *d, uint64_t slice_size,
				  struct pevt_index *idx, char *why, size_t why_len);
/* Write @idx into @path's HEADER_PEVT_INDEX section (replacing one). */
LIBPEVT_API int pevt_index__write(const char *path, const struct pevt_index *idx,
				  char *why, size_t why_len);
/*
 * Read @path's index: 1 and @idx filled, 0 if the file has none, -errno
 * with @why set if it has one that cannot be used (bad magic, version,
 * sizes, an entry outside the data section or not following the one
 * before it).  @d is the open file: the index must describe its data
 * section.
 */
LIBPEVT_API int pevt_index__read(const char *path, struct pevt_data *d, struct pevt_index *idx,
				 char *why, size_t why_len);
LIBPEVT_API void pevt_index__exit(struct pevt_index *idx);

#endif /* __LIBPEVT_DATA_INDEX_H */
