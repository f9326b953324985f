/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A test-side ring-buffer writer that mimics the kernel's
 * __perf_output_begin()/perf_output_put_handle(): forward (head grows) or
 * write_backward (head shrinks, record written upward from the new head),
 * overwrite (read-only map: no space check) or back-pressure (writable:
 * drop when full, count, emit PERF_RECORD_LOST before the next record that
 * fits), optionally with the PEVT_SAMPLE_SIZE_AT_END trailer.
 *
 * Every record carries a sequence number and a payload derived from it,
 * and the writer logs what it wrote, so tests can compute the expected
 * result without trusting the reader.
 */
#ifndef PEVT_RINGBUF_SIM_H
#define PEVT_RINGBUF_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

struct sim_rec {
	uint64_t seq;
	uint32_t size;
	uint32_t type;
};

struct sim {
	struct perf_event_mmap_page *pc;
	unsigned char *data;
	uint64_t size, mask;
	uint64_t head;		/* the kernel's private rb->head */
	bool backward;		/* attr.write_backward */
	bool overwrite;		/* read-only mapping */
	bool trailer;		/* PEVT_SAMPLE_SIZE_AT_END */
	uint64_t seq;		/* next sequence number */
	uint64_t lost_pending;	/* dropped, not yet reported */
	uint64_t dropped;	/* all dropped records */
	struct sim_rec *log;	/* records actually written, oldest first */
	size_t nlog, cap;
	uint64_t rng;
};

static inline uint64_t sim_rand(uint64_t *s)
{
	/* xorshift64*: deterministic per seed. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static inline int sim_init(struct sim *s, uint64_t size, bool backward,
			   bool overwrite, bool trailer, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->pc = aligned_alloc(4096, 4096);
	/* Exact size so ASan flags any access past the data area. */
	s->data = malloc(size);
	if (!s->pc || !s->data)
		return -1;
	memset(s->pc, 0, 4096);
	memset(s->data, 0, size);	/* mmap()ed pages start zeroed */
	s->size = size;
	s->mask = size - 1;
	s->backward = backward;
	s->overwrite = overwrite;
	s->trailer = trailer;
	s->rng = seed | 1;
	return 0;
}

static inline void sim_fini(struct sim *s)
{
	free(s->pc);
	free(s->data);
	free(s->log);
}

static inline uint8_t sim_payload_byte(uint64_t seq, size_t i)
{
	return (uint8_t)(seq * 131 + i * 7 + 1);
}

/* Bytes of fixed content: header + seq (+ trailer). */
static inline uint32_t sim_min_size(const struct sim *s)
{
	return 16 + (s->trailer ? 8 : 0);
}

static inline void sim_copy_in(struct sim *s, uint64_t pos, const void *src,
			       size_t len)
{
	uint64_t off = pos & s->mask;
	size_t first = len;

	if (off + len > s->size)
		first = s->size - off;
	memcpy(s->data + off, src, first);
	memcpy(s->data, (const unsigned char *)src + first, len - first);
}

static inline void sim_build(const struct sim *s, unsigned char *buf,
			     uint32_t type, uint32_t size, uint64_t seq)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };
	size_t body_end = size - (s->trailer ? 8 : 0);
	uint64_t t = size;
	size_t i;

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 8, &seq, 8);
	for (i = 16; i < body_end; i++)
		buf[i] = sim_payload_byte(seq, i);
	if (s->trailer)
		memcpy(buf + size - 8, &t, 8);
}

static inline void sim_publish(struct sim *s)
{
	/* The kernel's B: data stores before the head store. */
	__atomic_store_n(&s->pc->data_head, s->head, __ATOMIC_RELEASE);
}

/*
 * sim_write() - generate record number s->seq of @size bytes (a multiple
 * of 8, >= sim_min_size()).  Returns true if written, false if dropped.
 */
static inline bool sim_write(struct sim *s, uint32_t type, uint32_t size)
{
	unsigned char buf[0x10000];
	uint32_t lost_size = 24 + (s->trailer ? 8 : 0);
	uint64_t need = size, pos, seq = s->seq++;

	if (!s->overwrite) {
		uint64_t tail = __atomic_load_n(&s->pc->data_tail, __ATOMIC_ACQUIRE);
		uint64_t used = s->backward ? tail - s->head : s->head - tail;

		if (s->lost_pending)
			need += lost_size;
		if (used + need > s->size) {
			s->lost_pending++;
			s->dropped++;
			return false;
		}
	}
	if (s->backward) {
		s->head -= need;
		pos = s->head;
	} else {
		pos = s->head;
		s->head += need;
	}
	if (s->lost_pending && !s->overwrite) {
		struct perf_event_header h = {
			.type = PERF_RECORD_LOST, .size = (uint16_t)lost_size,
		};
		uint64_t id = 0, t = lost_size;

		memcpy(buf, &h, 8);
		memcpy(buf + 8, &id, 8);
		memcpy(buf + 16, &s->lost_pending, 8);
		if (s->trailer)
			memcpy(buf + 24, &t, 8);
		sim_copy_in(s, pos, buf, lost_size);
		pos += lost_size;
		s->lost_pending = 0;
	}
	sim_build(s, buf, type, size, seq);
	sim_copy_in(s, pos, buf, size);
	if (s->nlog == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->log = realloc(s->log, s->cap * sizeof(*s->log));
	}
	s->log[s->nlog++] = (struct sim_rec){ .seq = seq, .size = size, .type = type };
	sim_publish(s);
	return true;
}

/* A record size: fixed, or a mix of small samples, group reads and COMMs. */
static inline uint32_t sim_pick_size(struct sim *s, bool variable, uint32_t max,
				     uint32_t *type)
{
	uint32_t min = sim_min_size(s), sz;
	uint64_t r = sim_rand(&s->rng);

	if (!variable) {
		*type = PERF_RECORD_SAMPLE;
		return min + 24;
	}
	switch (r % 8) {
	case 0:
		*type = PERF_RECORD_COMM;
		break;
	case 1:
		*type = PERF_RECORD_READ;
		break;
	default:
		*type = PERF_RECORD_SAMPLE;
		break;
	}
	sz = min + 8 * (uint32_t)((r >> 8) % 40);
	if ((r >> 40) % 32 == 0)
		sz += 8 * (uint32_t)((r >> 20) % 256);	/* occasional big one */
	if (sz > max)
		sz = max & ~7u;
	if (sz < min)
		sz = min;
	return sz;
}

/* Newest records whose bytes are all in the last @size bytes: K. */
static inline size_t sim_expected_k(const struct sim *s, size_t first)
{
	uint64_t acc = 0;
	size_t k = 0, i;

	for (i = s->nlog; i > first; i--) {
		acc += s->log[i - 1].size;
		if (acc > s->size)
			break;
		k++;
	}
	return k;
}

#endif /* PEVT_RINGBUF_SIM_H */
