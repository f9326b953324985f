// SPDX-License-Identifier: GPL-2.0
/*
 * pevt data: operations on a perf.data file.
 *
 *	pevt data index [--slice-size BYTES] [--show] FILE
 *
 * writes (or with --show prints) the HEADER_PEVT_INDEX feature section
 * that lets `pevt report` read the data section in slices on many threads
 * (include/pevt/data_index.h).  Stock perf skips the section.
 *
 *	pevt data repeat (-n K | --size BYTES) IN OUT	(data_repeat.c)
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pevt/data_index.h>
#include <pevt/data_reader.h>

#include "main.h"

static int show(const char *path, struct pevt_data *d)
{
	struct pevt_index idx;
	char why[512] = "";
	uint64_t i;
	int ret = pevt_index__read(path, d, &idx, why, sizeof(why));

	if (ret < 0) {
		p_err("%s: %s", path, why);
		return -1;
	}
	if (!ret) {
		if (json_output)
			printf("null\n");
		else
			printf("%s: no index\n", path);
		return 0;
	}
	if (json_output) {
		printf("{\"version\":%u,\"slice_size\":%" PRIu64 ",\"data_offset\":%" PRIu64
		       ",\"data_size\":%" PRIu64 ",\"slices\":[", idx.hdr.version,
		       idx.hdr.slice_size, idx.hdr.data_offset, idx.hdr.data_size);
		for (i = 0; i < idx.hdr.nr; i++) {
			const struct pevt_index_entry *e = &idx.e[i];

			printf("%s{\"offset\":%" PRIu64 ",\"size\":%" PRIu64 ",\"first_time\":%" PRIu64
			       ",\"last_time\":%" PRIu64 ",\"records\":%" PRIu64 ",\"samples\":%" PRIu64
			       "}", i ? "," : "", e->offset, e->size,
			       e->first_time == UINT64_MAX ? 0 : e->first_time, e->last_time,
			       e->nr_records, e->nr_samples);
		}
		printf("]}\n");
	} else {
		printf("# index v%u: %" PRIu64 " slices of ~%" PRIu64 " bytes, data section at %#"
		       PRIx64 " (%" PRIu64 " bytes)\n", idx.hdr.version, idx.hdr.nr,
		       idx.hdr.slice_size, idx.hdr.data_offset, idx.hdr.data_size);
		printf("# %5s %12s %10s %20s %20s %9s %9s\n", "slice", "offset", "size",
		       "first time", "last time", "records", "samples");
		for (i = 0; i < idx.hdr.nr; i++) {
			const struct pevt_index_entry *e = &idx.e[i];

			printf("  %5" PRIu64 " %#12" PRIx64 " %10" PRIu64 " %20" PRIu64 " %20" PRIu64
			       " %9" PRIu64 " %9" PRIu64 "\n", i, e->offset, e->size,
			       e->first_time == UINT64_MAX ? 0 : e->first_time, e->last_time,
			       e->nr_records, e->nr_samples);
		}
	}
	pevt_index__exit(&idx);
	return 0;
}

static int do_data_index(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "slice-size",	required_argument,	NULL, 's' },
		{ "show",	no_argument,		NULL, 'S' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ 0 }
	};
	uint64_t slice = PEVT_INDEX_SLICE;
	bool only_show = false;
	struct pevt_index idx;
	struct pevt_data *d;
	char why[512] = "", *end;
	const char *path;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:jh", opts, NULL)) >= 0) {
		switch (opt) {
		case 's':
			errno = 0;
			slice = strtoull(optarg, &end, 0);
			if (!errno && end != optarg && (*end == 'k' || *end == 'K') && !end[1])
				slice <<= 10;
			else if (!errno && end != optarg && *end == 'M' && !end[1])
				slice <<= 20;
			else if (*end)
				errno = EINVAL;
			if (errno || end == optarg || slice < 4096 || slice > (1ull << 40)) {
				p_err("bad --slice-size '%s' (bytes, >= 4096; k or M suffix)", optarg);
				return -1;
			}
			break;
		case 'S':
			only_show = true;
			break;
		case 'j':
			json_output = true;
			break;
		case 'h':
			return print_help("data");
		default:
			print_help("data");
			return -1;
		}
	}
	if (optind != argc - 1) {
		p_err("usage: pevt data index [--slice-size BYTES] [--show] FILE");
		return -1;
	}
	path = argv[optind];
	if (!strcmp(path, "-")) {
		p_err("pipe-mode data (stdin) cannot be indexed: record to a file");
		return -1;
	}
	d = pevt_data__open(path);
	if (!d) {
		p_err("%s: %s", path, strerror(errno));
		return -1;
	}
	if (pevt_data__is_dir(d)) {
		p_err("%s: a perf record --threads directory is not indexed (its per-thread "
		      "files already split the data)", path);
		pevt_data__delete(d);
		return -1;
	}
	if (pevt_data__is_pipe(d)) {
		p_err("%s: pipe-mode data (perf record -o -) has no header to hold an index; "
		      "`perf inject -i %s -o FILE` writes a file-mode copy", path, path);
		pevt_data__delete(d);
		return -1;
	}
	if (!pevt_data__nr_streams(d)) {
		p_err("%s: %s", path, pevt_data__error(d) ?: "cannot open");
		pevt_data__delete(d);
		return -1;
	}
	if (only_show) {
		ret = show(path, d);
		pevt_data__delete(d);
		return ret;
	}
	ret = pevt_index__build(d, slice, &idx, why, sizeof(why));
	pevt_data__delete(d);
	if (ret) {
		p_err("%s: %s", path, why);
		return -1;
	}
	ret = pevt_index__write(path, &idx, why, sizeof(why));
	if (ret) {
		p_err("%s: %s", path, why);
		pevt_index__exit(&idx);
		return -1;
	}
	if (!json_output)
		fprintf(stderr, "%s: indexed, %" PRIu64 " slices of ~%" PRIu64 " bytes\n", path,
			idx.hdr.nr, idx.hdr.slice_size);
	pevt_index__exit(&idx);
	return 0;
}

int do_data(int argc, char **argv)
{
	if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h") ||
	    !strcmp(argv[0], "help"))
		return print_help("data") ? -1 : (argc < 1 ? -1 : 0);
	if (!strcmp(argv[0], "index"))
		return do_data_index(argc, argv);
	if (!strcmp(argv[0], "repeat"))
		return do_data_repeat(argc, argv);
	p_err("unknown 'pevt data' command '%s' (index, repeat)", argv[0]);
	return -1;
}
