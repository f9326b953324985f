// SPDX-License-Identifier: GPL-2.0
/*
 * pevt data repeat: a large perf.data made from a small one, for
 * benchmarks (`pevt bench report` on files of hundreds of MB).
 *
 *	pevt data repeat (-n K | --size BYTES) IN OUT
 *
 * OUT is IN with its data section written K times, copy k with every
 * timestamp moved by k x span (span: IN's last time - first time + 1), so
 * the copies follow each other in time and IN's FINISHED_ROUND guarantee
 * holds across them; perf's own records but FINISHED_ROUND (THREAD_MAP,
 * CPU_MAP, TIME_CONV, FINISHED_INIT, ...) only in the first copy.  Attrs
 * and ids are IN's; the feature sections are
 * IN's (SAMPLE_TIME's last time moved to the last copy's, an index
 * dropped).  A report of OUT has IN's rows with K times the samples: the
 * same percentages, which is also a check of both readers on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <pevt/data_reader.h>
#include <pevt/ordered.h>
#include <pevt/perf_data.h>

#include "main.h"

#define OUT_BUF		(4u << 20)

/* SIGINT/SIGTERM/SIGHUP: stop between records, remove the temporary. */
static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

struct repeat {
	struct pevt_data *d;
	const char *in, *out;
	char tmp[4096];
	int fd_in, fd_out;
	const uint8_t *data;		/* IN's data section, mapped */
	uint64_t data_off, data_size;
	uint64_t first, last, span;
	unsigned char *buf;
	size_t used;
	uint64_t written;
};

/* Where @ev keeps its timestamp (sample body or sample_id_all trailer). */
static uint64_t *time_slot(struct pevt_data *d, const struct perf_event_header *ev)
{
	struct pevt_data_evsel *e;
	uint64_t t;
	size_t pos;

	if (ev->type >= PERF_RECORD_USER_TYPE_START)
		return NULL;
	e = pevt_data__evsel_of(d, ev);
	if (!e || !(e->attr.sample_type & PERF_SAMPLE_TIME))
		return NULL;
	t = e->attr.sample_type;
	if (ev->type == PERF_RECORD_SAMPLE) {
		pos = 1 + !!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
		      !!(t & PERF_SAMPLE_TID);
		return pos * 8 + 8 <= ev->size ? (uint64_t *)ev + pos : NULL;
	}
	if (!e->attr.sample_id_all)
		return NULL;
	/* the trailer from its end: IDENTIFIER, CPU, STREAM_ID, ID, TIME */
	pos = 1 + !!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_CPU) +
	      !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_ID);
	return pos * 8 + 8 <= ev->size ? (uint64_t *)((uint8_t *)ev + ev->size) - pos : NULL;
}

static int write_full(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p = (const uint8_t *)p + r;
		n -= r;
	}
	return 0;
}

static int flush_buf(struct repeat *rp)
{
	int err = write_full(rp->fd_out, rp->buf, rp->used);

	rp->written += rp->used;
	rp->used = 0;
	return err;
}

static int put(struct repeat *rp, const void *p, size_t n)
{
	int err;

	if (rp->used + n > OUT_BUF && (err = flush_buf(rp)))
		return err;
	if (n > OUT_BUF)
		return write_full(rp->fd_out, p, n);
	memcpy(rp->buf + rp->used, p, n);
	rp->used += n;
	return 0;
}

/*
 * First walk: record sizes, the time range, and that every timed
 * record's time is where time_slot() looks for it.
 */
static int scan(struct repeat *rp)
{
	uint64_t pos = 0, n = 0;

	rp->first = UINT64_MAX;
	rp->last = 0;
	while (pos < rp->data_size) {
		const struct perf_event_header *ev = (const void *)(rp->data + pos);
		const uint64_t *slot;
		uint64_t t;

		if (rp->data_size - pos < sizeof(*ev) || ev->size < sizeof(*ev) ||
		    ev->size > rp->data_size - pos) {
			p_err("%s: bad record size at offset %#" PRIx64, rp->in, rp->data_off + pos);
			return -EINVAL;
		}
		if (ev->type == PERF_RECORD_COMPRESSED || ev->type == PERF_RECORD_AUXTRACE) {
			p_err("%s: a %s record at offset %#" PRIx64 ": only uncompressed data "
			      "without AUX data can be repeated", rp->in,
			      ev->type == PERF_RECORD_COMPRESSED ? "COMPRESSED" : "AUXTRACE",
			      rp->data_off + pos);
			return -EINVAL;
		}
		t = pevt_data__time_of(rp->d, ev);
		slot = time_slot(rp->d, ev);
		if ((t != UINT64_MAX) != !!slot || (slot && *slot != t)) {
			p_err("%s: cannot locate the timestamp of the record at offset %#" PRIx64,
			      rp->in, rp->data_off + pos);
			return -EINVAL;
		}
		if (slot) {
			if (t < rp->first)
				rp->first = t;
			if (t > rp->last)
				rp->last = t;
		}
		pos += ev->size;
		n++;
	}
	if (rp->first == UINT64_MAX) {
		p_err("%s: no timestamped records: nothing to order the copies by", rp->in);
		return -EINVAL;
	}
	rp->span = rp->last - rp->first + 1;
	return 0;
}

static int copy_data(struct repeat *rp, uint64_t shift)
{
	unsigned char rec[1 << 16];
	uint64_t pos = 0;
	int err = 0;

	while (pos < rp->data_size && !err) {
		const struct perf_event_header *ev = (const void *)(rp->data + pos);
		struct perf_event_header *c = (void *)rec;
		uint64_t *slot;

		if (stop_sig)
			return -EINTR;
		/*
		 * perf's own records (maps, TIME_CONV, FINISHED_INIT, ...) describe
		 * the session, once: only FINISHED_ROUND is repeated (perf script
		 * says "Extra thread map event" on a second THREAD_MAP).
		 */
		if (shift && ev->type >= PERF_RECORD_USER_TYPE_START &&
		    ev->type != PERF_RECORD_FINISHED_ROUND) {
			pos += ev->size;
			continue;
		}
		memcpy(rec, ev, ev->size);
		slot = time_slot(rp->d, c);
		if (slot)
			*slot += shift;
		err = put(rp, rec, ev->size);
		pos += ev->size;
	}
	return err;
}

static bool feat_set(const struct perf_file_header *h, int feat)
{
	return h->adds_features[feat / 64] & (1ull << (feat % 64));
}

static int pread_full(int fd, void *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t r = pread(fd, p, n, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p = (uint8_t *)p + r;
		n -= r;
		off += r;
	}
	return 0;
}

/* Header, attrs and ids as IN has them, K data sections, the features. */
static int write_out(struct repeat *rp, unsigned long k, const struct perf_file_header *ih,
		     const struct perf_file_section *isecs)
{
	struct perf_file_header h = *ih;
	struct perf_file_section secs[HEADER_FEAT_BITS];
	uint64_t t0 = now_ns(), pos, feat_pos;
	int feat, i = 0, j = 0, n = 0, err;
	unsigned char *p;

	h.adds_features[HEADER_PEVT_INDEX / 64] &= ~(1ull << (HEADER_PEVT_INDEX % 64));
	h.data.size = 0;
	/* [0, data offset): the header (rewritten below), attrs, ids */
	p = malloc(ih->data.offset);
	if (!p)
		return -ENOMEM;
	err = pread_full(rp->fd_in, p, ih->data.offset, 0);
	if (!err)
		err = put(rp, p, ih->data.offset);
	free(p);
	for (unsigned long c = 0; c < k && !err; c++) {
		progress(false, t0, c, k, "%s: copy %lu of %lu", rp->out, c + 1, k);
		err = copy_data(rp, c * rp->span);
	}
	if (err)
		return err;
	h.data.size = rp->written + rp->used - h.data.offset;
	for (feat = 0; feat < HEADER_FEAT_BITS; feat++)
		n += feat_set(&h, feat);
	feat_pos = h.data.offset + h.data.size;
	pos = feat_pos + n * sizeof(*secs);
	for (feat = 0; feat < HEADER_FEAT_BITS; feat++) {
		if (!feat_set(ih, feat))
			continue;
		if (feat_set(&h, feat)) {
			secs[i].offset = pos;
			secs[i].size = isecs[j].size;
			pos += secs[i].size;
			i++;
		}
		j++;
	}
	err = put(rp, secs, n * sizeof(*secs));
	for (feat = 0, i = 0, j = 0; !err && feat < HEADER_FEAT_BITS; feat++) {
		if (!feat_set(ih, feat))
			continue;
		if (feat_set(&h, feat)) {
			p = malloc(isecs[j].size ?: 1);
			if (!p)
				return -ENOMEM;
			err = pread_full(rp->fd_in, p, isecs[j].size, isecs[j].offset);
			/* SAMPLE_TIME: first and last sample times, u64 each */
			if (!err && feat == HEADER_SAMPLE_TIME && isecs[j].size == 16) {
				uint64_t last;

				memcpy(&last, p + 8, 8);
				last += (k - 1) * rp->span;
				memcpy(p + 8, &last, 8);
			}
			if (!err)
				err = put(rp, p, isecs[j].size);
			free(p);
			i++;
		}
		j++;
	}
	if (!err)
		err = flush_buf(rp);
	if (!err && pwrite(rp->fd_out, &h, sizeof(h), 0) != sizeof(h))
		err = -EIO;
	return err;
}

static int usage_err(void)
{
	p_err("usage: pevt data repeat (-n K | --size BYTES) IN OUT");
	return -1;
}

int do_data_repeat(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "times",	required_argument,	NULL, 'n' },
		{ "size",	required_argument,	NULL, 's' },
		{ "help",	no_argument,		NULL, 'h' },
		{ 0 }
	};
	struct repeat rp = { .fd_in = -1, .fd_out = -1 };
	struct perf_file_section *isecs = NULL;
	struct perf_file_header ih;
	unsigned long k = 0, size = 0;
	struct stat st;
	int opt, feat, n = 0, err = -1;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "n:s:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'n':
			if (arg_ulong("-n", optarg, 1, 100000, &k))
				return -1;
			break;
		case 's':
			errno = 0;
			size = strtoul(optarg, &end, 0);
			if (!errno && end != optarg && (*end == 'k' || *end == 'K'))
				size <<= 10, end++;
			else if (!errno && end != optarg && *end == 'M')
				size <<= 20, end++;
			else if (!errno && end != optarg && *end == 'G')
				size <<= 30, end++;
			if (errno || end == optarg || *end || !size) {
				p_err("bad --size '%s' (bytes, k, M or G suffix)", optarg);
				return -1;
			}
			break;
		case 'h':
			return print_help("data");
		default:
			return usage_err();
		}
	}
	if (optind != argc - 2 || !k == !size)
		return usage_err();
	rp.in = argv[optind];
	rp.out = argv[optind + 1];
	if (!strcmp(rp.in, "-") || !strcmp(rp.out, "-")) {
		p_err("pevt data repeat reads and writes files, not pipes");
		return -1;
	}
	rp.d = pevt_data__open(rp.in);
	if (!rp.d) {
		p_err("%s: %s", rp.in, strerror(errno));
		return -1;
	}
	if (pevt_data__warning(rp.d)) {
		/* the reader's warning names the file */
		p_err("%s: only a complete recording can be repeated", pevt_data__warning(rp.d));
		goto out;
	}
	if (pevt_data__is_dir(rp.d) || pevt_data__is_pipe(rp.d) || !pevt_data__nr_streams(rp.d)) {
		p_err("%s: %s", rp.in, pevt_data__is_dir(rp.d) ? "a --threads directory: repeat one "
		      "of its files" : pevt_data__is_pipe(rp.d) ? "pipe-mode data: `perf inject -i "
		      "IN -o FILE` writes a file-mode copy" : pevt_data__error(rp.d) ?: "cannot read");
		goto out;
	}
	if (pevt_data__has_feat(rp.d, HEADER_COMPRESSED)) {
		p_err("%s: compressed (-z) data cannot be repeated", rp.in);
		goto out;
	}
	rp.fd_in = open(rp.in, O_RDONLY | O_CLOEXEC);
	if (rp.fd_in < 0 || fstat(rp.fd_in, &st) || pread_full(rp.fd_in, &ih, sizeof(ih), 0)) {
		p_err("%s: %s", rp.in, strerror(errno));
		goto out;
	}
	if (ih.magic != PERF_MAGIC2 || ih.size != sizeof(ih) ||
	    ih.data.offset > (uint64_t)st.st_size || ih.data.size > st.st_size - ih.data.offset) {
		p_err("%s: not a perf.data file in file mode, or its data section is outside it",
		      rp.in);
		goto out;
	}
	if (ih.attrs.offset + ih.attrs.size > ih.data.offset) {
		p_err("%s: attrs after the data section are not supported", rp.in);
		goto out;
	}
	for (feat = 0; feat < HEADER_FEAT_BITS; feat++)
		n += feat_set(&ih, feat);
	isecs = calloc(n + 1, sizeof(*isecs));
	if (!isecs || (n && pread_full(rp.fd_in, isecs, n * sizeof(*isecs),
				       ih.data.offset + ih.data.size))) {
		p_err("%s: cannot read the feature table at offset %#" PRIx64, rp.in,
		      (uint64_t)(ih.data.offset + ih.data.size));
		goto out;
	}
	for (feat = 0; feat < n; feat++)
		if (isecs[feat].offset > (uint64_t)st.st_size ||
		    isecs[feat].size > st.st_size - isecs[feat].offset) {
			p_err("%s: feature section %d at offset %#" PRIx64 " runs past the end",
			      rp.in, feat, (uint64_t)isecs[feat].offset);
			goto out;
		}
	rp.data_off = ih.data.offset;
	rp.data_size = ih.data.size;
	if (!rp.data_size) {
		p_err("%s: data size 0 (an unfinished recording?): nothing to repeat", rp.in);
		goto out;
	}
	rp.data = (const uint8_t *)pevt_data__stream_base(rp.d, 0);
	if (!rp.data) {
		p_err("%s: cannot map the data section", rp.in);
		goto out;
	}
	rp.data += rp.data_off;
	if (scan(&rp))
		goto out;
	if (!k)
		k = (size + rp.data_size - 1) / rp.data_size;
	if (k > 1 && rp.span > (UINT64_MAX - rp.last) / (k - 1)) {
		p_err("%s: %lu copies of a %" PRIu64 " ns span overflow the timestamps", rp.in,
		      k, rp.span);
		goto out;
	}
	/* a temporary next to OUT, renamed over it when complete */
	{
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	snprintf(rp.tmp, sizeof(rp.tmp), "%s.tmpXXXXXX", rp.out);
	rp.fd_out = mkstemp(rp.tmp);
	rp.buf = malloc(OUT_BUF);
	if (rp.fd_out < 0 || !rp.buf) {
		p_err("%s: %s", rp.tmp, strerror(errno));
		goto out;
	}
	err = write_out(&rp, k, &ih, isecs);
	if (!err && (fchmod(rp.fd_out, 0600) || close(rp.fd_out)))
		err = -errno;
	rp.fd_out = err ? rp.fd_out : -1;
	if (!err && rename(rp.tmp, rp.out))
		err = -errno;
	if (err) {
		if (stop_sig)
			p_err("%s: interrupted (%s), not written", rp.out, strsignal(stop_sig));
		else
			p_err("%s: %s", rp.out, strerror(-err));
		unlink(rp.tmp);
		err = -1;
		goto out;
	}
	if (!json_output)
		fprintf(stderr, "%s: %lu copies of %s's data (%" PRIu64 " bytes each, %.3f s apart),"
			" %" PRIu64 " bytes\n", rp.out, k, rp.in, rp.data_size, rp.span / 1e9,
			rp.written);
	err = 0;
out:
	if (rp.fd_out >= 0) {
		close(rp.fd_out);
		unlink(rp.tmp);
	}
	if (rp.fd_in >= 0)
		close(rp.fd_in);
	free(rp.buf);
	free(isecs);
	pevt_data__delete(rp.d);
	return err;
}
