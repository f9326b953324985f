/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - write a perf.data file (PERFILE2) that stock perf reads.
 *
 *	LIBPEVT_OPTS(pevt_data_writer_opts, o, .pipe = false);
 *	struct pevt_data_writer *w = pevt_data_writer__new(fd, "perf.data", &o);
 *
 *	pevt_data_writer__add_attr(w, &attr, "cpu-clock", ids, nr_ids);
 *	pevt_data_writer__add_host_features(w, argc, argv);
 *	pevt_data_writer__start(w);		// header, ids, attrs (pipe: + features)
 *	pevt_data_writer__set_index(w, 0, time_of, ctx);	// optional
 *	pevt_data_writer__write(w, rec, len);	// synthesized records
 *	pevt_data_writer__finished_init(w);
 *	while (recording) {
 *		for each buffer: pevt_data_writer__writev(w, iov, n);
 *		pevt_data_writer__round(w);	// FINISHED_ROUND, commit
 *	}
 *	pevt_data_writer__add_feature(w, HEADER_BUILD_ID, buf, len);
 *	pevt_data_writer__finish(w);		// features, final header
 *	pevt_data_writer__delete(w);
 *
 * File mode keeps the file readable at every moment after start(): the
 * header's data.size is rewritten after every round, so a recording that
 * dies (kill -9, disk full) is a valid file ending at its last complete
 * round, just without feature sections.  finish() appends the feature
 * sections (and the index, set_index()) and rewrites the header once
 * more.
 *
 * Pipe mode writes a perf_pipe_file_header, HEADER_ATTR and
 * HEADER_FEATURE records (the features added before start()) and then the
 * records; finish() only flushes.
 *
 * Every call returns 0 or -errno; after the first write error every
 * further write returns that error, and pevt_data_writer__error() tells
 * which operation failed.
 */
#ifndef __LIBPEVT_DATA_WRITER_H
#define __LIBPEVT_DATA_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <pevt/core.h>
#include <pevt/perf_data.h>

struct pevt_data_writer;

struct pevt_data_writer_opts {
	size_t sz;
	bool pipe;			/* pipe mode (`-o -`) */
};

LIBPEVT_API struct pevt_data_writer *
pevt_data_writer__new(int fd, const struct pevt_data_writer_opts *opts);
/* Frees; does not close the fd. */
LIBPEVT_API void pevt_data_writer__delete(struct pevt_data_writer *w);

/* Before start(): one attr with its name (EVENT_DESC) and the ids of its fds. */
LIBPEVT_API int pevt_data_writer__add_attr(struct pevt_data_writer *w,
					   const struct perf_event_attr *attr,
					   const char *name,
					   const uint64_t *ids, size_t nr_ids);

/*
 * A feature section's payload, in perf's layout (perf_data.h); replaces
 * an earlier one of the same number.  Pipe mode: before start() only.
 */
LIBPEVT_API int pevt_data_writer__add_feature(struct pevt_data_writer *w,
					      int feat, const void *buf, size_t len);

/*
 * HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS, CPUDESC, CPUID, TOTAL_MEM,
 * CMDLINE (@argc/@argv), CPU_TOPOLOGY and CLOCKID from this machine, and
 * EVENT_DESC from the attrs added so far.
 */
LIBPEVT_API int pevt_data_writer__add_host_features(struct pevt_data_writer *w,
						    int argc, char **argv);

/*
 * TRACING_DATA for the tracepoints @tps ("sys:name") from @tracefs (the
 * header_page/header_event/format files perf's tracing_data_get() copies).
 * perf cannot format tracepoint samples without it.  Pipe mode: written
 * as PERF_RECORD_HEADER_TRACING_DATA after the features.
 */
LIBPEVT_API int pevt_data_writer__add_tracing_data(struct pevt_data_writer *w,
						   const char *tracefs,
						   const char *const *tps, size_t nr);

/* SAMPLE_TIME: first and last sample time (perf_clock ns). */
LIBPEVT_API int pevt_data_writer__set_sample_time(struct pevt_data_writer *w,
						  uint64_t first, uint64_t last);

/*
 * One HEADER_BUILD_ID entry (perf's perf_record_header_build_id): @misc
 * PERF_RECORD_MISC_KERNEL or _USER, @id of @id_size <= 20 bytes.  The
 * BUILD_ID section is written by finish() if any entry was added.
 */
LIBPEVT_API int pevt_data_writer__add_build_id(struct pevt_data_writer *w,
					       int pid, uint16_t misc,
					       const uint8_t *id, size_t id_size,
					       const char *filename);

/* COMPRESSED feature (zstd) with the mmap_len each record decompresses into. */
LIBPEVT_API int pevt_data_writer__set_compressed(struct pevt_data_writer *w,
						 uint32_t level, uint32_t ratio,
						 uint32_t mmap_len);

LIBPEVT_API int pevt_data_writer__start(struct pevt_data_writer *w);

/* Records, whole; the caller keeps them 8-byte aligned. */
LIBPEVT_API int pevt_data_writer__write(struct pevt_data_writer *w,
					const void *buf, size_t len);
LIBPEVT_API int pevt_data_writer__writev(struct pevt_data_writer *w,
					 const struct iovec *iov, int iovcnt);
/*
 * write() of records the caller has walked already: the index (set_index())
 * takes @run, their sum (pevt_index_builder__add_run(): times as the
 * set_index() time function gives them, @len bytes, no FINISHED_ROUND),
 * instead of walking them again.
 */
struct pevt_index_run;
LIBPEVT_API int pevt_data_writer__write_run(struct pevt_data_writer *w, const void *buf,
					    size_t len, const struct pevt_index_run *run);

/*
 * End of a pass over every buffer: PERF_RECORD_FINISHED_ROUND if anything
 * was written since the last round, then (file mode) the header's
 * data.size is updated so the file is readable up to here.
 */
LIBPEVT_API int pevt_data_writer__round(struct pevt_data_writer *w);

/*
 * Asynchronous writers (file mode; pevt record's io_uring and thread
 * drains) split the above: reserve() hands out the file offset of the
 * next @len data bytes, which the caller writes itself with whatever I/O
 * it likes; round_mark() writes FINISHED_ROUND (1, *@end = the file
 * offset after it; 0 if nothing was written since the last round) but
 * does not commit; commit(@end) rewrites data.size up to file offset @end
 * once every byte before it is known to be on file.  set_error() records
 * a failed asynchronous write as the writer's error (error() reports it,
 * finish() keeps the committed rounds).  round() == round_mark() +
 * commit().
 */
LIBPEVT_API int pevt_data_writer__reserve(struct pevt_data_writer *w, size_t len,
					  uint64_t *off);
LIBPEVT_API int pevt_data_writer__round_mark(struct pevt_data_writer *w, uint64_t *end);
LIBPEVT_API int pevt_data_writer__commit(struct pevt_data_writer *w, uint64_t end);
LIBPEVT_API int pevt_data_writer__set_error(struct pevt_data_writer *w, int err,
					    const char *what);

/*
 * reserve() for records the caller writes itself from @iov (whole
 * records, as for writev()): the index (set_index()) takes them in.
 */
LIBPEVT_API int pevt_data_writer__reservev(struct pevt_data_writer *w,
					   const struct iovec *iov, int iovcnt,
					   uint64_t *off);

/*
 * File mode, after start() and before any data: build the
 * HEADER_PEVT_INDEX section (include/pevt/data_index.h, slices of
 * @slice_size bytes, 0: PEVT_INDEX_SLICE) from the records as they are
 * written, and let finish() write it after the other feature sections:
 * the same bytes `pevt data index` writes into the finished file.
 * @time_of gives a record's time as the file's reader does
 * (pevt_data__time_of()), UINT64_MAX for none; it sees whole, 8-byte
 * aligned records only (the others have no time).
 */
typedef uint64_t (*pevt_data_writer_time_fn)(void *ctx, const struct perf_event_header *ev);
LIBPEVT_API int pevt_data_writer__set_index(struct pevt_data_writer *w, uint64_t slice_size,
					    pevt_data_writer_time_fn time_of, void *ctx);

/* PERF_RECORD_FINISHED_INIT: the synthesized state is complete. */
LIBPEVT_API int pevt_data_writer__finished_init(struct pevt_data_writer *w);

/*
 * File mode: data.size = bytes up to the last round, feature sections,
 * final header.  After a write error only the header is rewritten (the
 * file then ends at its last committed round, without features).
 */
LIBPEVT_API int pevt_data_writer__finish(struct pevt_data_writer *w);

/* Bytes written since start(), headers included. */
LIBPEVT_API uint64_t pevt_data_writer__bytes(const struct pevt_data_writer *w);
/* Data bytes of complete rounds (what a reader of the file sees). */
LIBPEVT_API uint64_t pevt_data_writer__committed(const struct pevt_data_writer *w);
/* 0, or the -errno of the first failed write; @what names the operation. */
LIBPEVT_API int pevt_data_writer__error(const struct pevt_data_writer *w,
					const char **what);

#endif /* __LIBPEVT_DATA_WRITER_H */
