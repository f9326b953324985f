// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - building the HEADER_PEVT_INDEX section record by record and
 * its payload (see include/pevt/data_index.h): shared by `pevt data
 * index` (data_index.c, walking a file) and the data writer (pevt record,
 * as it writes one).  Nothing here reads a file, so the writer does not
 * pull in the reader.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pevt/data_index.h>

void pevt_index__exit(struct pevt_index *idx)
{
	free(idx->e);
	idx->e = NULL;
	idx->hdr.nr = 0;
}

static int push(struct pevt_index *idx, size_t *cap, const struct pevt_index_entry *e)
{
	if (idx->hdr.nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct pevt_index_entry *n = realloc(idx->e, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		idx->e = n;
		*cap = ncap;
	}
	idx->e[idx->hdr.nr++] = *e;
	return 0;
}

static void open_slice(struct pevt_index_entry *e, uint64_t offset)
{
	memset(e, 0, sizeof(*e));
	e->offset = offset;
	e->first_time = UINT64_MAX;
}

void pevt_index_builder__init(struct pevt_index_builder *b, uint64_t slice_size,
			      uint64_t data_offset)
{
	memset(b, 0, sizeof(*b));
	b->idx.hdr.magic = PEVT_INDEX_MAGIC;
	b->idx.hdr.version = PEVT_INDEX_VERSION;
	b->idx.hdr.entry_size = sizeof(struct pevt_index_entry);
	b->idx.hdr.slice_size = slice_size ? slice_size : PEVT_INDEX_SLICE;
	b->idx.hdr.data_offset = data_offset;
	b->pos = data_offset;
	open_slice(&b->cur, data_offset);
}

/*
 * A slice ends just after a FINISHED_ROUND once it holds slice_size bytes.
 * The slice is closed right away; if nothing follows (the round was the
 * data section's last record), finish() does not open another: the last
 * slice then ends at the end of the data section, as it must.
 */
int pevt_index_builder__add(struct pevt_index_builder *b, uint32_t type, uint32_t size,
			    uint64_t time)
{
	struct pevt_index_entry *cur = &b->cur;
	int err;

	if (b->err)
		return b->err;
	if (time != UINT64_MAX) {
		if (time < cur->first_time)
			cur->first_time = time;
		if (time > cur->last_time)
			cur->last_time = time;
	}
	cur->nr_records++;
	cur->nr_samples += type == PERF_RECORD_SAMPLE;
	b->pos += size;
	if (type == PERF_RECORD_FINISHED_ROUND && b->pos - cur->offset >= b->idx.hdr.slice_size) {
		cur->size = b->pos - cur->offset;
		err = push(&b->idx, &b->cap, cur);
		if (err)
			return b->err = err;
		open_slice(cur, b->pos);
	}
	return 0;
}

int pevt_index_builder__add_run(struct pevt_index_builder *b, const struct pevt_index_run *run)
{
	struct pevt_index_entry *cur = &b->cur;

	if (b->err)
		return b->err;
	if (run->first_time < cur->first_time)
		cur->first_time = run->first_time;
	if (run->last_time > cur->last_time)
		cur->last_time = run->last_time;
	cur->nr_records += run->nr_records;
	cur->nr_samples += run->nr_samples;
	b->pos += run->bytes;
	return 0;
}

void pevt_index_builder__exit(struct pevt_index_builder *b)
{
	pevt_index__exit(&b->idx);
	b->cap = 0;
}

int pevt_index_builder__finish(struct pevt_index_builder *b, uint64_t data_size,
			       struct pevt_index *idx)
{
	uint64_t end = b->idx.hdr.data_offset + data_size;
	int err = b->err;

	memset(idx, 0, sizeof(*idx));
	if (!err && b->pos != end)
		err = -EINVAL;		/* not what was added */
	b->cur.size = end - b->cur.offset;
	if (!err && (b->cur.nr_records || !b->idx.hdr.nr))
		err = push(&b->idx, &b->cap, &b->cur);
	if (err) {
		pevt_index_builder__exit(b);
		return err;
	}
	b->idx.hdr.data_size = data_size;
	*idx = b->idx;
	memset(b, 0, sizeof(*b));
	return 0;
}

void *pevt_index__payload(const struct pevt_index *idx, size_t *len)
{
	size_t n = sizeof(idx->hdr) + idx->hdr.nr * sizeof(*idx->e);
	char *p = malloc(n);

	if (!p)
		return NULL;
	memcpy(p, &idx->hdr, sizeof(idx->hdr));
	if (idx->hdr.nr)
		memcpy(p + sizeof(idx->hdr), idx->e, idx->hdr.nr * sizeof(*idx->e));
	*len = n;
	return p;
}
