// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - the HEADER_PEVT_INDEX feature section (see
 * include/pevt/data_index.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <pevt/data_index.h>
#include <pevt/ordered.h>

static int fail(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

int pevt_index__build(struct pevt_data *d, uint64_t slice_size, struct pevt_index *idx,
		      char *why, size_t why_len)
{
	struct pevt_index_builder b;
	const uint8_t *base;
	uint64_t off, size, pos, end;
	int err;

	memset(idx, 0, sizeof(*idx));
	if (pevt_data__is_pipe(d))
		return fail(why, why_len, -EINVAL, "pipe-mode data has no room for an index "
			    "(record to a file, or convert with perf inject -o FILE)");
	if (pevt_data__is_dir(d))
		return fail(why, why_len, -EINVAL, "a perf record --threads directory is not "
			    "indexed (its per-thread files are the index)");
	if (pevt_data__warning(d))
		return fail(why, why_len, -EINVAL, "damaged file (%s): not indexed",
			    pevt_data__warning(d));
	base = pevt_data__stream_base(d, 0);
	if (!base || pevt_data__section(d, 0, &off, &size))
		return fail(why, why_len, -EINVAL, "no data section");
	pevt_index_builder__init(&b, slice_size, off);
	end = off + size;
	for (pos = off; pos < end;) {
		struct perf_event_header h;
		uint64_t t = UINT64_MAX;

		if (end - pos < sizeof(h)) {
			pevt_index_builder__exit(&b);
			return fail(why, why_len, -EBADMSG, "truncated record header at offset %#"
				    PRIx64, pos);
		}
		memcpy(&h, base + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > end - pos) {
			pevt_index_builder__exit(&b);
			return fail(why, why_len, -EBADMSG, "bad record size %u at offset %#"
				    PRIx64, h.size, pos);
		}
		if (!((uintptr_t)(base + pos) & 7) && !(h.size & 7))
			t = pevt_data__time_of(d, (const void *)(base + pos));
		if (pevt_index_builder__add(&b, h.type, h.size, t))
			break;
		pos += h.size;
	}
	err = pevt_index_builder__finish(&b, size, idx);
	if (err)
		return fail(why, why_len, err, "out of memory");
	return 0;
}

static int pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, off + got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = write(fd, (const char *)buf + done, n - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += r;
	}
	return 0;
}

static bool feat_set(const struct perf_file_header *h, int feat)
{
	return h->adds_features[feat / 64] & (1ull << (feat % 64));
}

/* The file header and its feature table (one section per set bit). */
static int read_layout(int fd, struct perf_file_header *h, struct perf_file_section **secs,
		       int *nr, uint64_t fsize, char *why, size_t why_len)
{
	int feat, n = 0, err;

	err = pread_full(fd, h, sizeof(*h), 0);
	if (err)
		return fail(why, why_len, err, "cannot read the file header");
	if (h->magic != PERF_MAGIC2)
		return fail(why, why_len, -EINVAL, h->magic == PERF_MAGIC2_SWAPPED ?
			    "a big-endian file is not indexed" : "not a perf.data file in file mode");
	if (h->size != sizeof(*h))
		return fail(why, why_len, -EINVAL, "unexpected file header size %" PRIu64, h->size);
	if (h->data.offset > fsize || h->data.size > fsize - h->data.offset)
		return fail(why, why_len, -EINVAL, "data section outside the file");
	for (feat = 0; feat < HEADER_FEAT_BITS; feat++)
		n += feat_set(h, feat);
	*secs = calloc(n + 1, sizeof(**secs));
	if (!*secs)
		return fail(why, why_len, -ENOMEM, "out of memory");
	*nr = n;
	if (n && (fsize - h->data.offset - h->data.size) / sizeof(**secs) < (uint64_t)n)
		return fail(why, why_len, -EINVAL, "feature table at offset %#" PRIx64
			    " runs past the end of the file",
			    h->data.offset + h->data.size);
	if (n) {
		err = pread_full(fd, *secs, n * sizeof(**secs), h->data.offset + h->data.size);
		if (err)
			return fail(why, why_len, err, "cannot read the feature table");
	}
	return 0;
}

static int copy_range(int in, int out, uint64_t off, uint64_t len)
{
	static const size_t chunk = 1 << 20;
	char *buf = malloc(chunk);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (len && !err) {
		size_t n = len < chunk ? len : chunk;

		err = pread_full(in, buf, n, off);
		if (!err)
			err = write_full(out, buf, n);
		off += n;
		len -= n;
	}
	free(buf);
	return err;
}

int pevt_index__write(const char *path, const struct pevt_index *idx, char *why, size_t why_len)
{
	struct perf_file_section *secs = NULL, *nsecs = NULL;
	struct perf_file_header h, oh;
	char tmp[PATH_MAX], dcopy[PATH_MAX], real[PATH_MAX];
	int in, out = -1, nr = 0, feat, k, j, err;
	uint64_t data_end, pos, payload;
	struct stat st;

	/* a symlink's target is rewritten, not the link */
	if (realpath(path, real))
		path = real;
	in = open(path, O_RDONLY);
	if (in < 0)
		return fail(why, why_len, -errno, "%s: %s", path, strerror(errno));
	if (fstat(in, &st) || !S_ISREG(st.st_mode)) {
		err = fail(why, why_len, -EINVAL, "%s: not a regular file", path);
		goto out;
	}
	err = read_layout(in, &h, &secs, &nr, st.st_size, why, why_len);
	if (err)
		goto out;
	data_end = h.data.offset + h.data.size;
	if (idx->hdr.data_offset != h.data.offset || idx->hdr.data_size != h.data.size) {
		err = fail(why, why_len, -EINVAL, "the index is not for this data section");
		goto out;
	}
	/* Everything but the feature sections must sit before the table. */
	if (h.attrs.offset + h.attrs.size > data_end) {
		err = fail(why, why_len, -EINVAL, "attrs after the data section: not indexed");
		goto out;
	}
	for (k = 0; k < nr; k++)
		if (secs[k].offset < data_end + nr * sizeof(*secs) ||
		    secs[k].offset > (uint64_t)st.st_size ||
		    secs[k].size > (uint64_t)st.st_size - secs[k].offset) {
			err = fail(why, why_len, -EINVAL, "feature section %d at offset %#" PRIx64
				   " is not after the feature table", k, secs[k].offset);
			goto out;
		}
	if (strlen(path) >= sizeof(dcopy) - 16) {
		err = fail(why, why_len, -ENAMETOOLONG, "%s: path too long", path);
		goto out;
	}
	strcpy(dcopy, path);
	snprintf(tmp, sizeof(tmp), "%s/.%.200s.idxXXXXXX", dirname(dcopy),
		 strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	out = mkstemp(tmp);
	if (out < 0) {
		err = fail(why, why_len, -errno, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	/* The new table: every feature but an old index, then the index. */
	nsecs = calloc(nr + 1, sizeof(*nsecs));
	if (!nsecs) {
		err = fail(why, why_len, -ENOMEM, "out of memory");
		goto out_tmp;
	}
	oh = h;
	h.adds_features[HEADER_PEVT_INDEX / 64] |= 1ull << (HEADER_PEVT_INDEX % 64);
	for (feat = 0, k = 0; feat < HEADER_FEAT_BITS; feat++)
		k += feat_set(&h, feat);
	pos = data_end + k * sizeof(*nsecs);
	payload = sizeof(idx->hdr) + idx->hdr.nr * sizeof(*idx->e);
	/* j: the feature's section in the old table (an old index is dropped) */
	for (feat = 0, k = 0, j = 0; feat < HEADER_FEAT_BITS; feat++) {
		if (!feat_set(&h, feat))
			continue;
		nsecs[k].offset = pos;
		nsecs[k].size = feat == HEADER_PEVT_INDEX ? payload : secs[j].size;
		pos += nsecs[k].size;
		j += feat_set(&oh, feat);
		k++;
	}
	err = copy_range(in, out, 0, data_end);
	if (!err)
		err = pwrite(out, &h, sizeof(h), 0) == sizeof(h) ? 0 : -EIO;
	if (!err)
		err = write_full(out, nsecs, k * sizeof(*nsecs));
	/* the payloads, in bit order, from where they were */
	for (feat = 0, j = 0; !err && feat < HEADER_FEAT_BITS; feat++) {
		if (!feat_set(&h, feat))
			continue;
		if (feat == HEADER_PEVT_INDEX) {
			size_t len;
			void *p = pevt_index__payload(idx, &len);

			err = p ? write_full(out, p, len) : -ENOMEM;
			free(p);
		} else {
			err = copy_range(in, out, secs[j].offset, secs[j].size);
		}
		j += feat_set(&oh, feat);
	}
	if (err) {
		fail(why, why_len, err, "%s: %s", tmp, strerror(-err));
		goto out_tmp;
	}
	if (fchown(out, st.st_uid, st.st_gid)) {
		/* not ours to give away: the file stays the writer's */
	}
	if (fchmod(out, st.st_mode & 07777) || fsync(out)) {
		err = fail(why, why_len, -errno, "%s: %s", tmp, strerror(errno));
		goto out_tmp;
	}
	if (close(out)) {
		out = -1;
		err = fail(why, why_len, -errno, "%s: %s", tmp, strerror(errno));
		goto out_tmp;
	}
	out = -1;
	if (rename(tmp, path)) {
		err = fail(why, why_len, -errno, "rename %s: %s", tmp, strerror(errno));
		goto out_tmp;
	}
	goto out;
out_tmp:
	if (out >= 0)
		close(out);
	unlink(tmp);
out:
	free(secs);
	free(nsecs);
	close(in);
	return err;
}

int pevt_index__read(const char *path, struct pevt_data *d, struct pevt_index *idx,
		     char *why, size_t why_len)
{
	struct perf_file_section *secs = NULL, sec;
	struct perf_file_header h;
	uint64_t off, size, i, fsize;
	struct stat st;
	int fd, nr, feat, k, err;

	memset(idx, 0, sizeof(*idx));
	if (pevt_data__is_pipe(d) || pevt_data__is_dir(d) || !pevt_data__stream_base(d, 0))
		return 0;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	fsize = st.st_size;
	err = read_layout(fd, &h, &secs, &nr, fsize, why, why_len);
	if (err || !feat_set(&h, HEADER_PEVT_INDEX)) {
		/* a damaged header is the reader's business, not the index's */
		err = 0;
		goto out;
	}
	for (feat = 0, k = 0; feat < HEADER_PEVT_INDEX; feat++)
		k += feat_set(&h, feat);
	sec = secs[k];
	if (sec.offset > fsize || sec.size > fsize - sec.offset || sec.size < sizeof(idx->hdr)) {
		err = fail(why, why_len, -EINVAL, "index section at offset %#" PRIx64
			   " (%" PRIu64 " bytes) outside the file or too small", sec.offset, sec.size);
		goto out;
	}
	err = pread_full(fd, &idx->hdr, sizeof(idx->hdr), sec.offset);
	if (err) {
		fail(why, why_len, err, "cannot read the index at offset %#" PRIx64, sec.offset);
		goto out;
	}
	if (idx->hdr.magic != PEVT_INDEX_MAGIC) {
		err = fail(why, why_len, -EINVAL, "bad index magic %#" PRIx64 " at offset %#" PRIx64,
			   idx->hdr.magic, sec.offset);
		goto out;
	}
	if (idx->hdr.version != PEVT_INDEX_VERSION ||
	    idx->hdr.entry_size != sizeof(struct pevt_index_entry)) {
		err = fail(why, why_len, -EINVAL, "index version %u (entry size %u) at offset %#"
			   PRIx64 " is not version %u", idx->hdr.version, idx->hdr.entry_size,
			   sec.offset, PEVT_INDEX_VERSION);
		goto out;
	}
	if (!idx->hdr.nr || idx->hdr.nr > (sec.size - sizeof(idx->hdr)) / sizeof(*idx->e) ||
	    sec.size != sizeof(idx->hdr) + idx->hdr.nr * sizeof(*idx->e)) {
		err = fail(why, why_len, -EINVAL, "index at offset %#" PRIx64 " has %" PRIu64
			   " entries in %" PRIu64 " bytes", sec.offset, idx->hdr.nr, sec.size);
		goto out;
	}
	pevt_data__section(d, 0, &off, &size);
	if (idx->hdr.data_offset != off || idx->hdr.data_size != size) {
		err = fail(why, why_len, -EINVAL, "index at offset %#" PRIx64 " describes a data "
			   "section at %#" PRIx64 " of %" PRIu64 " bytes, the file's is at %#" PRIx64
			   " of %" PRIu64, sec.offset, idx->hdr.data_offset, idx->hdr.data_size,
			   off, size);
		goto out;
	}
	idx->e = malloc(idx->hdr.nr * sizeof(*idx->e));
	if (!idx->e) {
		err = fail(why, why_len, -ENOMEM, "out of memory");
		goto out;
	}
	err = pread_full(fd, idx->e, idx->hdr.nr * sizeof(*idx->e), sec.offset + sizeof(idx->hdr));
	if (err) {
		fail(why, why_len, err, "cannot read the index at offset %#" PRIx64, sec.offset);
		goto out;
	}
	for (i = 0; i < idx->hdr.nr; i++) {
		const struct pevt_index_entry *e = &idx->e[i];
		uint64_t want = i ? idx->e[i - 1].offset + idx->e[i - 1].size : off;

		if (e->offset < off || e->offset > off + size || e->size > off + size - e->offset ||
		    !e->size) {
			err = fail(why, why_len, -EINVAL, "index entry %" PRIu64 ": slice at offset %#"
				   PRIx64 " (%" PRIu64 " bytes) outside the data section [%#" PRIx64
				   ", %#" PRIx64 ")", i, e->offset, e->size, off, off + size);
			goto out;
		}
		if (e->offset != want) {
			err = fail(why, why_len, -EINVAL, "index entry %" PRIu64 ": slice at offset %#"
				   PRIx64 " does not follow the one before it (at %#" PRIx64 ")",
				   i, e->offset, want);
			goto out;
		}
	}
	if (idx->e[idx->hdr.nr - 1].offset + idx->e[idx->hdr.nr - 1].size != off + size) {
		err = fail(why, why_len, -EINVAL, "index ends at offset %#" PRIx64 ", the data "
			   "section at %#" PRIx64, idx->e[idx->hdr.nr - 1].offset +
			   idx->e[idx->hdr.nr - 1].size, off + size);
		goto out;
	}
	err = 1;
out:
	if (err <= 0)
		pevt_index__exit(idx);
	free(secs);
	close(fd);
	return err;
}
