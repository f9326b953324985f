/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - the perf.data file format (PERFILE2), shared by the writer
 * (pevt record) and the reader (pevt report).
 *
 * Only the on-disk layout lives here: magic, file header, sections, the
 * user-space record types perf adds after the kernel's PERF_RECORD_*, and
 * the feature numbers.  Numbers and layouts are perf's own (see
 * tools/perf/Documentation/perf.data-file-format.txt and
 * tools/perf/util/{header.h,event.h} in the kernel tree), so a file written
 * by one side is read by the other.  The writer's and the reader's APIs
 * have headers of their own that include this one.
 *
 * File mode:
 *
 *	struct perf_file_header        at offset 0
 *	attrs:  n x struct perf_file_attr (attr_size each), each naming a
 *		section of u64 ids
 *	data:   the records (kernel PERF_RECORD_* and the user types below)
 *	features: one struct perf_file_section per bit set in adds_features,
 *		in bit order, at data.offset + data.size; each points at
 *		its payload
 *
 * Pipe mode (`-o -`): a struct perf_pipe_file_header, then records only;
 * attrs and features come as PERF_RECORD_HEADER_ATTR / HEADER_FEATURE.
 */
#ifndef _PEVT_PERF_DATA_H
#define _PEVT_PERF_DATA_H

#include <linux/types.h>
#include <linux/perf_event.h>

#define PERF_MAGIC2		0x32454c4946524550ULL	/* "PERFILE2", little endian */
#define PERF_MAGIC2_SWAPPED	0x50455246494c4532ULL	/* written by a big-endian host */

struct perf_file_section {
	__u64 offset;
	__u64 size;
};

#define HEADER_FEAT_BITS	256

struct perf_file_header {
	__u64 magic;				/* PERF_MAGIC2 */
	__u64 size;				/* sizeof(struct perf_file_header) */
	__u64 attr_size;			/* sizeof(struct perf_file_attr) as written */
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types;	/* unused, zero */
	__u64 adds_features[HEADER_FEAT_BITS / 64];
};

struct perf_pipe_file_header {
	__u64 magic;				/* PERF_MAGIC2 */
	__u64 size;				/* sizeof(struct perf_pipe_file_header) */
};

/*
 * One entry of the attrs section.  attr_size in the file header gives the
 * real size: attr.size may be smaller (an older writer) or larger (a
 * newer one); readers copy min(attr.size, sizeof(attr)) and skip the rest.
 */
struct perf_file_attr {
	struct perf_event_attr attr;
	struct perf_file_section ids;		/* u64 ids of this attr's events */
};

/* Record types perf's tools add after the kernel's (enum perf_user_event_type). */
enum perf_user_event_type {
	PERF_RECORD_USER_TYPE_START	= 64,
	PERF_RECORD_HEADER_ATTR		= 64,
	PERF_RECORD_HEADER_EVENT_TYPE	= 65,	/* deprecated */
	PERF_RECORD_HEADER_TRACING_DATA	= 66,
	PERF_RECORD_HEADER_BUILD_ID	= 67,
	PERF_RECORD_FINISHED_ROUND	= 68,
	PERF_RECORD_ID_INDEX		= 69,
	PERF_RECORD_AUXTRACE_INFO	= 70,
	PERF_RECORD_AUXTRACE		= 71,
	PERF_RECORD_AUXTRACE_ERROR	= 72,
	PERF_RECORD_THREAD_MAP		= 73,
	PERF_RECORD_CPU_MAP		= 74,
	PERF_RECORD_STAT_CONFIG		= 75,
	PERF_RECORD_STAT		= 76,
	PERF_RECORD_STAT_ROUND		= 77,
	PERF_RECORD_EVENT_UPDATE	= 78,
	PERF_RECORD_TIME_CONV		= 79,
	PERF_RECORD_HEADER_FEATURE	= 80,
	PERF_RECORD_COMPRESSED		= 81,
	PERF_RECORD_FINISHED_INIT	= 82,
	PERF_RECORD_HEADER_MAX
};

/* Feature bits (adds_features), perf's numbering. */
enum perf_header_feature {
	HEADER_RESERVED		= 0,
	HEADER_TRACING_DATA	= 1,
	HEADER_BUILD_ID		= 2,
	HEADER_HOSTNAME		= 3,
	HEADER_OSRELEASE	= 4,
	HEADER_VERSION		= 5,
	HEADER_ARCH		= 6,
	HEADER_NRCPUS		= 7,
	HEADER_CPUDESC		= 8,
	HEADER_CPUID		= 9,
	HEADER_TOTAL_MEM	= 10,
	HEADER_CMDLINE		= 11,
	HEADER_EVENT_DESC	= 12,
	HEADER_CPU_TOPOLOGY	= 13,
	HEADER_NUMA_TOPOLOGY	= 14,
	HEADER_BRANCH_STACK	= 15,
	HEADER_PMU_MAPPINGS	= 16,
	HEADER_GROUP_DESC	= 17,
	HEADER_AUXTRACE		= 18,
	HEADER_STAT		= 19,
	HEADER_CACHE		= 20,
	HEADER_SAMPLE_TIME	= 21,
	HEADER_MEM_TOPOLOGY	= 22,
	HEADER_CLOCKID		= 23,
	HEADER_DIR_FORMAT	= 24,
	HEADER_BPF_PROG_INFO	= 25,
	HEADER_BPF_BTF		= 26,
	HEADER_COMPRESSED	= 27,
	HEADER_CPU_PMU_CAPS	= 28,
	HEADER_CLOCK_DATA	= 29,
	HEADER_HYBRID_TOPOLOGY	= 30,
	HEADER_PMU_CAPS		= 31,
	HEADER_LAST_FEATURE,
	/*
	 * pevt's own sections sit far above perf's, where a newer perf will
	 * not reuse the number soon; perf skips bits it does not know.
	 */
	HEADER_PEVT_INDEX	= 200,
};

/*
 * Strings in feature sections: a u32 length (padded to a multiple of
 * NAME_ALIGN, including the NUL) followed by the bytes.
 */
#define PERF_NAME_ALIGN		64

/* HEADER_COMPRESSED payload. */
struct perf_compressed_feature {
	__u32 version;		/* 0 */
	__u32 type;		/* 1 = zstd */
	__u32 level;
	__u32 ratio;
	__u32 mmap_len;
};
#define PERF_COMP_ZSTD		1

#endif /* _PEVT_PERF_DATA_H */
