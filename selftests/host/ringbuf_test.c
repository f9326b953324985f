// SPDX-License-Identifier: GPL-2.0
/*
 * libpevt ring-buffer readers on synthetic buffers written by a
 * kernel-like writer (ringbuf_sim.h): forward back-pressure, backward with
 * the SIZE_AT_END trailer, stock write_backward; plus adversarial inputs.
 */
#include <errno.h>
#include <stdio.h>
#include <linux/pevt.h>
#include <pevt/mmap.h>

#include "kselftest_harness.h"
#include "ringbuf_sim.h"

/* Check one returned record against what the writer logged. */
static bool record_matches(const struct sim *s, const struct perf_event_header *h,
			   const struct sim_rec *r)
{
	const unsigned char *b = (const unsigned char *)h;
	size_t body_end = r->size - (s->trailer ? 8 : 0), i;
	uint64_t seq, t;

	if (h->size != r->size || h->type != r->type || h->misc)
		return false;
	memcpy(&seq, b + 8, 8);
	if (seq != r->seq)
		return false;
	for (i = 16; i < body_end; i++)
		if (b[i] != sim_payload_byte(seq, i))
			return false;
	if (s->trailer) {
		memcpy(&t, b + r->size - 8, 8);
		if (t != r->size)
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------------
 * Overwrite buffers read backward: exactly the newest K records.
 */
FIXTURE(backward) {
	struct sim sim;
	struct pevt_mmap *map;
};

FIXTURE_VARIANT(backward) {
	enum pevt_read_mode mode;
	uint64_t size;		/* data bytes */
	bool variable;		/* record mix */
};

#define BW_VARIANT(name, m, sz, var)				\
	FIXTURE_VARIANT_ADD(backward, name) {			\
		.mode = m, .size = sz, .variable = var,		\
	}

BW_VARIANT(sae_64b_fixed, PEVT_READ_BACKWARD_SIZE_AT_END, 64, false);
BW_VARIANT(sae_128b_var, PEVT_READ_BACKWARD_SIZE_AT_END, 128, true);
BW_VARIANT(sae_1p_fixed, PEVT_READ_BACKWARD_SIZE_AT_END, 4096, false);
BW_VARIANT(sae_1p_var, PEVT_READ_BACKWARD_SIZE_AT_END, 4096, true);
BW_VARIANT(sae_2p_var, PEVT_READ_BACKWARD_SIZE_AT_END, 8192, true);
BW_VARIANT(sae_8p_var, PEVT_READ_BACKWARD_SIZE_AT_END, 32768, true);
BW_VARIANT(sae_64p_var, PEVT_READ_BACKWARD_SIZE_AT_END, 262144, true);
BW_VARIANT(wb_64b_fixed, PEVT_READ_WRITE_BACKWARD, 64, false);
BW_VARIANT(wb_128b_var, PEVT_READ_WRITE_BACKWARD, 128, true);
BW_VARIANT(wb_1p_fixed, PEVT_READ_WRITE_BACKWARD, 4096, false);
BW_VARIANT(wb_1p_var, PEVT_READ_WRITE_BACKWARD, 4096, true);
BW_VARIANT(wb_2p_var, PEVT_READ_WRITE_BACKWARD, 8192, true);
BW_VARIANT(wb_8p_var, PEVT_READ_WRITE_BACKWARD, 32768, true);
BW_VARIANT(wb_64p_var, PEVT_READ_WRITE_BACKWARD, 262144, true);

FIXTURE_SETUP(backward)
{
	LIBPEVT_OPTS(pevt_mmap_opts, o, .mode = variant->mode);
	bool trailer = variant->mode == PEVT_READ_BACKWARD_SIZE_AT_END;

	ASSERT_EQ(0, sim_init(&self->sim, variant->size,
			      variant->mode == PEVT_READ_WRITE_BACKWARD,
			      true, trailer, variant->size * 7919 + variant->variable));
	self->map = pevt_mmap__attach(self->sim.pc, self->sim.data,
				      variant->size, &o);
	ASSERT_NE(NULL, self->map);
}

FIXTURE_TEARDOWN(backward)
{
	pevt_mmap__delete(self->map);
	sim_fini(&self->sim);
}

static void write_some(struct sim *s, bool variable, size_t n)
{
	uint32_t type, size;

	while (n--) {
		size = sim_pick_size(s, variable, s->size, &type);
		sim_write(s, type, size);
	}
}

/*
 * One pass; returns the number of records read and checks that they are
 * exactly the @expect newest records of the log, newest first.
 */
static size_t check_pass(struct __test_metadata *_metadata, struct sim *s,
			 struct pevt_mmap *map, size_t expect,
			 enum pevt_read_stop stop)
{
	struct pevt_mmap_stats st;
	struct perf_event_header *h;
	size_t n = 0;
	int err;

	err = pevt_mmap__read_init(map);
	if (!expect && err == -EAGAIN)
		return 0;
	EXPECT_EQ(0, err);
	while ((h = pevt_mmap__read_event(map)) != NULL) {
		/* Never more than were written: bounded by the log. */
		ASSERT_LT(n, expect) {
			TH_LOG("record %zu beyond K=%zu", n, expect);
		}
		ASSERT_TRUE(record_matches(s, h, &s->log[s->nlog - 1 - n])) {
			TH_LOG("record %zu (seq %llu) does not match", n,
			       (unsigned long long)s->log[s->nlog - 1 - n].seq);
		}
		pevt_mmap__consume(map);
		n++;
	}
	pevt_mmap__stats(map, &st);
	EXPECT_EQ((int)stop, (int)st.stop);
	EXPECT_EQ(0, pevt_mmap__read_done(map));
	EXPECT_EQ(expect, n);
	EXPECT_EQ(n, st.records);
	return n;
}

TEST_F(backward, empty)
{
	/* Nothing written: -EAGAIN, no records. */
	EXPECT_EQ(-EAGAIN, pevt_mmap__read_init(self->map));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(NULL, pevt_mmap__read_event(self->map));
	EXPECT_EQ(0, pevt_mmap__read_done(self->map));
}

TEST_F(backward, never_wrapped)
{
	struct sim *s = &self->sim;
	uint32_t type, size;

	/* Fill less than the buffer: every record back to offset 0. */
	for (;;) {
		size = sim_pick_size(s, variant->variable, s->size, &type);
		if (s->nlog && (s->backward ? -s->head : s->head) + size > s->size)
			break;
		sim_write(s, type, size);
	}
	ASSERT_LT(0ul, s->nlog);
	ASSERT_EQ(s->nlog, sim_expected_k(s, 0));
	check_pass(_metadata, s, self->map, s->nlog, PEVT_STOP_END);
}

TEST_F(backward, exactly_full)
{
	struct sim *s = &self->sim;
	uint64_t used;

	/* Tile the buffer exactly (32 divides every size here). */
	for (used = 0; used < s->size; used += 32)
		sim_write(s, PERF_RECORD_SAMPLE, 32);
	check_pass(_metadata, s, self->map, s->nlog, PEVT_STOP_END);
	/* One more: the oldest is overwritten, all others remain. */
	sim_write(s, PERF_RECORD_SAMPLE, 32);
	pevt_mmap__rewind(self->map);
	check_pass(_metadata, s, self->map, s->nlog - 1, PEVT_STOP_OVERWRITTEN);
	/* A bigger one overwrites exactly as many as it needs. */
	sim_write(s, PERF_RECORD_SAMPLE, 64);
	pevt_mmap__rewind(self->map);
	check_pass(_metadata, s, self->map, s->size / 32 - 1,
		   PEVT_STOP_OVERWRITTEN);
}

TEST_F(backward, newest_k_many_laps)
{
	struct sim *s = &self->sim;
	int round;

	/*
	 * Up to ~20 buffer capacities, checked at 40 random points: the
	 * reader must return exactly the K records still whole in the buffer.
	 */
	for (round = 0; round < 40; round++) {
		size_t k;

		write_some(s, variant->variable,
			   1 + sim_rand(&s->rng) % (s->size / 16));
		k = sim_expected_k(s, 0);
		ASSERT_LT(0ul, k);
		pevt_mmap__rewind(self->map);
		check_pass(_metadata, s, self->map, k,
			   k == s->nlog ? PEVT_STOP_END : PEVT_STOP_OVERWRITTEN);
	}
	ASSERT_GT(s->nlog, sim_expected_k(s, 0)) TH_LOG("never wrapped");
}

TEST_F(backward, incremental)
{
	struct sim *s = &self->sim;
	int round;

	/* Without rewind a pass returns only what is new since the last. */
	for (round = 0; round < 30; round++) {
		size_t before = s->nlog, n, k;

		/* Sometimes nothing, sometimes several laps. */
		n = sim_rand(&s->rng) % 4 == 0 ? 0 :
		    1 + sim_rand(&s->rng) % (s->size / 8);
		write_some(s, variant->variable, n);
		k = sim_expected_k(s, before);
		check_pass(_metadata, s, self->map, k,
			   k == n ? PEVT_STOP_END : PEVT_STOP_OVERWRITTEN);
	}
}

TEST_F(backward, break_early)
{
	struct sim *s = &self->sim;
	struct perf_event_header *h;

	/* A caller may stop iterating; read_done still succeeds. */
	write_some(s, variant->variable, s->size);
	ASSERT_EQ(0, pevt_mmap__read_init(self->map));
	h = pevt_mmap__read_event(self->map);
	ASSERT_NE(NULL, h);
	ASSERT_TRUE(record_matches(s, h, &s->log[s->nlog - 1]));
	EXPECT_EQ(0, pevt_mmap__read_done(self->map));
	/* And nothing is returned outside a pass. */
	EXPECT_EQ(NULL, pevt_mmap__read_event(self->map));
	EXPECT_EQ(-EAGAIN, pevt_mmap__read_init(self->map));
}

TEST_F(backward, written_during_walk)
{
	struct sim *s = &self->sim;
	size_t n = 0;

	/* Not paused: the writer moves head mid-walk; read_done says so. */
	write_some(s, variant->variable, s->size);
	ASSERT_EQ(0, pevt_mmap__read_init(self->map));
	while (pevt_mmap__read_event(self->map))
		if (++n == 1)
			write_some(s, variant->variable, 1);
	EXPECT_EQ(-ESTALE, pevt_mmap__read_done(self->map));
	EXPECT_EQ(ESTALE, errno);
	/* The next pass returns the record written meanwhile, cleanly. */
	check_pass(_metadata, s, self->map, 1, PEVT_STOP_END);
}

/* ---------------------------------------------------------------------
 * Forward reader on a back-pressure buffer: every record exactly once,
 * in order, and recovered + lost == generated.
 */
FIXTURE(forward) {
	struct sim sim;
	struct pevt_mmap *map;
};

FIXTURE_VARIANT(forward) {
	uint64_t size;
	bool variable;
	bool trailer;
};

FIXTURE_VARIANT_ADD(forward, b128_fixed) { .size = 128, .variable = false };
FIXTURE_VARIANT_ADD(forward, p1_var) { .size = 4096, .variable = true };
FIXTURE_VARIANT_ADD(forward, p1_var_trailer) { .size = 4096, .variable = true, .trailer = true };
FIXTURE_VARIANT_ADD(forward, p8_var) { .size = 32768, .variable = true };
FIXTURE_VARIANT_ADD(forward, p64_var_trailer) { .size = 262144, .variable = true, .trailer = true };

FIXTURE_SETUP(forward)
{
	LIBPEVT_OPTS(pevt_mmap_opts, o, .mode = PEVT_READ_FORWARD, .writable = true);

	ASSERT_EQ(0, sim_init(&self->sim, variant->size, false, false,
			      variant->trailer, variant->size + 17 * variant->variable));
	self->map = pevt_mmap__attach(self->sim.pc, self->sim.data,
				      variant->size, &o);
	ASSERT_NE(NULL, self->map);
}

FIXTURE_TEARDOWN(forward)
{
	pevt_mmap__delete(self->map);
	sim_fini(&self->sim);
}

TEST_F(forward, all_or_lost)
{
	struct sim *s = &self->sim;
	uint64_t expect_seq = 0, recovered = 0, reported_lost = 0, lost_since = 0;
	size_t logi = 0;
	int round;

	for (round = 0; round < 300; round++) {
		struct perf_event_header *h;
		size_t limit, n = 0;
		int err;

		write_some(s, variant->variable,
			   sim_rand(&s->rng) % (s->size / 16 + 2));
		err = pevt_mmap__read_init(self->map);
		if (err == -EAGAIN)
			continue;
		ASSERT_EQ(0, err);
		/* Sometimes stop early: the rest must come next pass. */
		limit = sim_rand(&s->rng) % 3 ? SIZE_MAX : sim_rand(&s->rng) % 5;
		while (n < limit && (h = pevt_mmap__read_event(self->map))) {
			uint64_t seq;

			n++;
			if (h->type == PERF_RECORD_LOST) {
				uint64_t lost;

				memcpy(&lost, (char *)h + 16, 8);
				ASSERT_LT(0ul, lost);
				lost_since += lost;
				reported_lost += lost;
				pevt_mmap__consume(self->map);
				continue;
			}
			memcpy(&seq, (char *)h + 8, 8);
			/* The gap before a record is exactly what LOST said. */
			ASSERT_EQ(expect_seq + lost_since, seq);
			ASSERT_LT(logi, s->nlog);
			ASSERT_TRUE(record_matches(s, h, &s->log[logi]));
			logi++;
			expect_seq = seq + 1;
			lost_since = 0;
			recovered++;
			pevt_mmap__consume(self->map);
		}
		ASSERT_EQ(0, pevt_mmap__read_done(self->map));
		/* Whatever was consumed is released to the writer. */
		ASSERT_EQ(s->pc->data_tail, pevt_mmap__read_head(self->map) -
			  (pevt_mmap__read_head(self->map) - s->pc->data_tail));
	}
	/* Drain. */
	if (pevt_mmap__read_init(self->map) == 0) {
		struct perf_event_header *h;

		while ((h = pevt_mmap__read_event(self->map))) {
			if (h->type == PERF_RECORD_LOST) {
				uint64_t lost;

				memcpy(&lost, (char *)h + 16, 8);
				reported_lost += lost;
			} else {
				ASSERT_TRUE(record_matches(s, h, &s->log[logi]));
				logi++;
				recovered++;
			}
		}
		ASSERT_EQ(0, pevt_mmap__read_done(self->map));
	}
	EXPECT_EQ(s->head, s->pc->data_tail);
	EXPECT_EQ(s->nlog, recovered);
	EXPECT_LT(0ul, s->dropped) TH_LOG("workload never filled the buffer");
	EXPECT_EQ(s->dropped, reported_lost + s->lost_pending);
	EXPECT_EQ(s->seq, recovered + reported_lost + s->lost_pending);
}

TEST_F(forward, read_only_keeps_tail)
{
	LIBPEVT_OPTS(pevt_mmap_opts, o, .mode = PEVT_READ_FORWARD);
	struct sim *s = &self->sim;
	struct pevt_mmap *ro;
	size_t n = 0;

	/* A read-only map must never store data_tail. */
	ro = pevt_mmap__attach(s->pc, s->data, s->size, &o);
	ASSERT_NE(NULL, ro);
	write_some(s, variant->variable, 3);
	ASSERT_EQ(0, pevt_mmap__read_init(ro));
	while (pevt_mmap__read_event(ro)) {
		pevt_mmap__consume(ro);
		n++;
	}
	EXPECT_EQ(0, pevt_mmap__read_done(ro));
	EXPECT_EQ(s->nlog, n);
	EXPECT_EQ(0ull, s->pc->data_tail);
	/* It still remembers its own position. */
	EXPECT_EQ(-EAGAIN, pevt_mmap__read_init(ro));

	/* Lapped (overwrite): -EOVERFLOW until rewind() skips to the head. */
	s->overwrite = true;
	write_some(s, variant->variable, s->size / 8);
	EXPECT_EQ(-EOVERFLOW, pevt_mmap__read_init(ro));
	EXPECT_EQ(EOVERFLOW, errno);
	EXPECT_EQ(-EOVERFLOW, pevt_mmap__read_done(ro));
	EXPECT_EQ(-EOVERFLOW, pevt_mmap__read_init(ro));
	pevt_mmap__rewind(ro);
	EXPECT_EQ(-EAGAIN, pevt_mmap__read_init(ro));
	write_some(s, variant->variable, 1);
	ASSERT_EQ(0, pevt_mmap__read_init(ro));
	ASSERT_NE(NULL, pevt_mmap__read_event(ro));
	EXPECT_EQ(NULL, pevt_mmap__read_event(ro));
	EXPECT_EQ(0, pevt_mmap__read_done(ro));
	EXPECT_EQ(0ull, s->pc->data_tail);
	pevt_mmap__delete(ro);
}

/* ---------------------------------------------------------------------
 * Adversarial inputs: stop with an error, never crash, never loop.
 */
#define ADV_SIZE 4096

struct adv {
	struct sim sim;
	struct pevt_mmap *map;
};

static int adv_init(struct adv *a, enum pevt_read_mode mode, uint64_t seed)
{
	LIBPEVT_OPTS(pevt_mmap_opts, o, .mode = mode,
		     .writable = mode == PEVT_READ_FORWARD);

	if (sim_init(&a->sim, ADV_SIZE, mode == PEVT_READ_WRITE_BACKWARD,
		     mode != PEVT_READ_FORWARD,
		     mode == PEVT_READ_BACKWARD_SIZE_AT_END, seed))
		return -1;
	a->map = pevt_mmap__attach(a->sim.pc, a->sim.data, ADV_SIZE, &o);
	return a->map ? 0 : -1;
}

static void adv_fini(struct adv *a)
{
	pevt_mmap__delete(a->map);
	sim_fini(&a->sim);
}

/* Run one pass; bounded by construction, asserted anyway. */
static int adv_pass(struct pevt_mmap *map, size_t *records)
{
	size_t n = 0;
	int err;

	err = pevt_mmap__read_init(map);
	if (err)
		return err;
	while (pevt_mmap__read_event(map)) {
		pevt_mmap__consume(map);
		if (++n > ADV_SIZE / 8)
			return -ELOOP;
	}
	*records = n;
	return pevt_mmap__read_done(map);
}

/* Position of the trailer of the k-th newest record (SIZE_AT_END). */
static uint64_t sae_end_of(const struct sim *s, size_t k)
{
	uint64_t end = s->head;
	size_t i;

	for (i = 0; i < k; i++)
		end -= s->log[s->nlog - 1 - i].size;
	return end;
}

static void poke64(struct sim *s, uint64_t pos, uint64_t v)
{
	memcpy(s->data + (pos & s->mask), &v, 8);
}

static void poke16(struct sim *s, uint64_t pos, uint16_t v)
{
	memcpy(s->data + (pos & s->mask), &v, 2);
}

TEST(sae_bad_trailer)
{
	/* Values a corrupt trailer may hold; all must stop with EBADMSG. */
	static const uint64_t bad[] = {
		0, 8, 12, 20, 100, ADV_SIZE + 8, 0x10000, 1ULL << 63, ~0ULL,
		/* plausible but != header.size: caught by the header check */
		48 + 8, 48 + 16,
	};
	unsigned int i, k;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (k = 0; k < 6; k++) {
			struct adv a;
			size_t n = 99;

			ASSERT_EQ(0, adv_init(&a, PEVT_READ_BACKWARD_SIZE_AT_END, i * 10 + k));
			/* 3 laps of 48-byte records, then corrupt the k-th newest. */
			write_some(&a.sim, false, 3 * ADV_SIZE / 48);
			ASSERT_EQ(48u, a.sim.log[0].size);
			poke64(&a.sim, sae_end_of(&a.sim, k) - 8, bad[i]);
			EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n)) {
				TH_LOG("trailer %#llx at record %u",
				       (unsigned long long)bad[i], k);
			}
			EXPECT_EQ(EBADMSG, errno);
			/* Exactly the k newer records came out before the error. */
			struct pevt_mmap_stats st;

			pevt_mmap__stats(a.map, &st);
			EXPECT_EQ((uint64_t)k, st.records);
			EXPECT_EQ((int)PEVT_STOP_ERROR, (int)st.stop);
			adv_fini(&a);
		}
	}
}

TEST(sae_header_mismatch)
{
	unsigned int k;

	for (k = 0; k < 8; k++) {
		struct adv a;
		struct pevt_mmap_stats st;
		size_t n;

		ASSERT_EQ(0, adv_init(&a, PEVT_READ_BACKWARD_SIZE_AT_END, k));
		write_some(&a.sim, true, ADV_SIZE);
		/* header.size of the k-th newest record: trailer intact. */
		poke16(&a.sim, sae_end_of(&a.sim, k + 1) + 6,
		       a.sim.log[a.sim.nlog - 1 - k].size + 8);
		EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
		pevt_mmap__stats(a.map, &st);
		EXPECT_EQ((uint64_t)k, st.records);
		adv_fini(&a);
	}
}

TEST(sae_record_before_zero)
{
	struct pevt_mmap_stats st;
	struct adv a;
	size_t n;

	/* Never wrapped: a trailer claiming a start below offset 0 is bogus. */
	ASSERT_EQ(0, adv_init(&a, PEVT_READ_BACKWARD_SIZE_AT_END, 1));
	write_some(&a.sim, false, 3);
	poke64(&a.sim, sae_end_of(&a.sim, 2) - 8, 96);	/* real: 48 */
	/* ... with a matching header planted in never-written space. */
	poke16(&a.sim, sae_end_of(&a.sim, 2) - 96 + 6, 96);
	EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
	EXPECT_EQ(2ul, a.map ? (pevt_mmap__stats(a.map, &st), st.records) : 0);
	adv_fini(&a);
}

TEST(wb_bad_header)
{
	static const uint16_t bad[] = { 4, 12, 100, ADV_SIZE + 8, 0xfffe };
	unsigned int i, k;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (k = 0; k < 6; k++) {
			struct pevt_mmap_stats st;
			struct adv a;
			uint64_t pos;
			size_t n, j;

			ASSERT_EQ(0, adv_init(&a, PEVT_READ_WRITE_BACKWARD, i * 10 + k));
			write_some(&a.sim, false, 3 * ADV_SIZE / 40);
			pos = a.sim.head;
			for (j = 0; j < k; j++)
				pos += a.sim.log[a.sim.nlog - 1 - j].size;
			poke16(&a.sim, pos + 6, bad[i]);
			EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
			pevt_mmap__stats(a.map, &st);
			EXPECT_EQ((uint64_t)k, st.records);
			EXPECT_EQ((int)PEVT_STOP_ERROR, (int)st.stop);
			adv_fini(&a);
		}
	}
}

TEST(wb_zero_header_is_end)
{
	struct pevt_mmap_stats st;
	struct adv a;
	size_t n = 0;

	/* Like perf: a zero header is never-written space, a clean end. */
	ASSERT_EQ(0, adv_init(&a, PEVT_READ_WRITE_BACKWARD, 3));
	write_some(&a.sim, false, 3 * ADV_SIZE / 40);
	poke16(&a.sim, a.sim.head + 40 * 2 + 6, 0);
	EXPECT_EQ(0, adv_pass(a.map, &n));
	EXPECT_EQ(2ul, n);
	pevt_mmap__stats(a.map, &st);
	EXPECT_EQ((int)PEVT_STOP_EMPTY, (int)st.stop);
	adv_fini(&a);
}

TEST(forward_bad_header)
{
	static const uint16_t bad[] = { 0, 4, 12, 102, ADV_SIZE + 8, 0xfff8 };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pevt_mmap_stats st;
		struct adv a;
		size_t n;

		ASSERT_EQ(0, adv_init(&a, PEVT_READ_FORWARD, i));
		write_some(&a.sim, false, 5);
		/* Third record; a 0 size would loop forever if not caught. */
		poke16(&a.sim, 2 * 40 + 6, bad[i]);
		EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
		pevt_mmap__stats(a.map, &st);
		EXPECT_EQ(2ul, st.records);
		/* The two good records are consumed, the bad one is not. */
		EXPECT_EQ(80ull, a.sim.pc->data_tail);
		adv_fini(&a);
	}
}

TEST(forward_record_past_head)
{
	struct pevt_mmap_stats st;
	struct adv a;
	size_t n;

	/* A header claiming more bytes than published: torn, refuse. */
	ASSERT_EQ(0, adv_init(&a, PEVT_READ_FORWARD, 9));
	write_some(&a.sim, false, 2);
	poke16(&a.sim, 40 + 6, 48);
	EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
	pevt_mmap__stats(a.map, &st);
	EXPECT_EQ(1ul, st.records);
	adv_fini(&a);
}

TEST(wb_record_crosses_start)
{
	struct pevt_mmap_stats st;
	struct adv a;
	size_t n;

	/* Never wrapped: the oldest record cannot extend past position 0. */
	ASSERT_EQ(0, adv_init(&a, PEVT_READ_WRITE_BACKWARD, 4));
	write_some(&a.sim, false, 3);
	poke16(&a.sim, a.sim.head + 2 * 40 + 6, 48);
	EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
	pevt_mmap__stats(a.map, &st);
	EXPECT_EQ(2ul, st.records);
	adv_fini(&a);
}

TEST(bad_control_page)
{
	struct adv a;
	size_t n;

	/* Misaligned head. */
	ASSERT_EQ(0, adv_init(&a, PEVT_READ_BACKWARD_SIZE_AT_END, 1));
	write_some(&a.sim, false, 4);
	a.sim.pc->data_head += 4;
	EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
	EXPECT_EQ(NULL, pevt_mmap__read_event(a.map));
	adv_fini(&a);

	/* Head moved the wrong way since the last pass. */
	ASSERT_EQ(0, adv_init(&a, PEVT_READ_BACKWARD_SIZE_AT_END, 2));
	write_some(&a.sim, false, 4);
	EXPECT_EQ(0, adv_pass(a.map, &n));
	EXPECT_EQ(4ul, n);
	a.sim.pc->data_head -= 80;
	EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
	adv_fini(&a);

	ASSERT_EQ(0, adv_init(&a, PEVT_READ_WRITE_BACKWARD, 3));
	write_some(&a.sim, false, 4);
	a.sim.pc->data_head = 80;	/* "positive": above the start */
	EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
	adv_fini(&a);

	/* Forward: more unread data than the buffer holds. */
	ASSERT_EQ(0, adv_init(&a, PEVT_READ_FORWARD, 4));
	a.sim.pc->data_head = ADV_SIZE + 8;
	EXPECT_EQ(-EOVERFLOW, adv_pass(a.map, &n));
	a.sim.pc->data_head = -8ULL;	/* behind the tail */
	EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
	adv_fini(&a);

	/* Forward: misaligned tail in the control page. */
	ASSERT_EQ(0, adv_init(&a, PEVT_READ_FORWARD, 5));
	write_some(&a.sim, false, 4);
	a.sim.pc->data_tail = 4;
	pevt_mmap__delete(a.map);
	a.map = pevt_mmap__attach(a.sim.pc, a.sim.data, ADV_SIZE, NULL);
	ASSERT_NE(NULL, a.map);
	EXPECT_EQ(-EBADMSG, adv_pass(a.map, &n));
	adv_fini(&a);
}

TEST(endless_valid_chain_is_bounded)
{
	static const enum pevt_read_mode modes[] = {
		PEVT_READ_BACKWARD_SIZE_AT_END, PEVT_READ_WRITE_BACKWARD,
	};
	unsigned int m;

	/*
	 * A buffer of nothing but minimal, self-consistent records and a
	 * head 1000 laps ahead: the walk must stop after one buffer size.
	 */
	for (m = 0; m < 2; m++) {
		struct pevt_mmap_stats st;
		struct adv a;
		uint64_t off;
		size_t n = 0;

		ASSERT_EQ(0, adv_init(&a, modes[m], m));
		for (off = 0; off < ADV_SIZE; off += 16) {
			struct perf_event_header h = { .type = 9, .size = 16 };
			uint64_t t = 16;

			memcpy(a.sim.data + off, &h, 8);
			memcpy(a.sim.data + off + 8, &t, 8);
		}
		a.sim.pc->data_head = m == 0 ? 1000ULL * ADV_SIZE :
					       -1000ULL * ADV_SIZE;
		EXPECT_EQ(0, adv_pass(a.map, &n));
		EXPECT_EQ(ADV_SIZE / 16ul, n);
		pevt_mmap__stats(a.map, &st);
		EXPECT_EQ((int)PEVT_STOP_OVERWRITTEN, (int)st.stop);
		adv_fini(&a);
	}
}

TEST(random_garbage)
{
	static const enum pevt_read_mode modes[] = {
		PEVT_READ_FORWARD, PEVT_READ_BACKWARD_SIZE_AT_END,
		PEVT_READ_WRITE_BACKWARD,
	};
	unsigned int iter, m;
	unsigned int errors[3] = { 0 }, passes[3] = { 0 };

	for (iter = 0; iter < 3000; iter++) {
		for (m = 0; m < 3; m++) {
			struct adv a;
			uint64_t i, r;
			size_t n = 0;
			int err;

			ASSERT_EQ(0, adv_init(&a, modes[m], iter * 3 + m + 1));
			for (i = 0; i < ADV_SIZE; i += 8) {
				r = sim_rand(&a.sim.rng);
				memcpy(a.sim.data + i, &r, 8);
			}
			r = sim_rand(&a.sim.rng);
			/* Mostly aligned heads, small or huge, some misaligned. */
			a.sim.pc->data_head = iter % 4 == 0 ? r :
					      iter % 4 == 1 ? (r % (4 * ADV_SIZE)) & ~7ULL :
					      iter % 4 == 2 ? (-(r % (4 * ADV_SIZE))) & ~7ULL :
					      r & ~7ULL;
			err = adv_pass(a.map, &n);
			ASSERT_NE(-ELOOP, err);
			ASSERT_TRUE(err == 0 || err == -EBADMSG ||
				    err == -EAGAIN || err == -EOVERFLOW) {
				TH_LOG("mode %u err %d", m, err);
			}
			if (err)
				errors[m]++;
			else
				passes[m]++;
			/* Random u64 trailers are (almost) never valid sizes. */
			if (modes[m] == PEVT_READ_BACKWARD_SIZE_AT_END &&
			    a.sim.pc->data_head)
				ASSERT_EQ(-EBADMSG, err);
			adv_fini(&a);
		}
	}
	TH_LOG("garbage passes: fwd %u/%u err, sae %u/%u err, wb %u/%u err",
	       errors[0], errors[0] + passes[0], errors[1], errors[1] + passes[1],
	       errors[2], errors[2] + passes[2]);
}

TEST(bit_flips)
{
	static const enum pevt_read_mode modes[] = {
		PEVT_READ_FORWARD, PEVT_READ_BACKWARD_SIZE_AT_END,
		PEVT_READ_WRITE_BACKWARD,
	};
	unsigned int iter, m, flips;

	/*
	 * Real buffers with a few flipped bits anywhere: every record that
	 * comes out is bounded in number, and the pass ends cleanly or
	 * with EBADMSG.  Flips confined to payload bytes change nothing.
	 */
	for (iter = 0; iter < 1000; iter++) {
		for (m = 0; m < 3; m++) {
			struct adv a;
			size_t n = 0;
			int err;

			ASSERT_EQ(0, adv_init(&a, modes[m], iter * 7 + m + 1));
			write_some(&a.sim, true,
				   m == 0 ? 20 : sim_rand(&a.sim.rng) % 200 + 1);
			for (flips = sim_rand(&a.sim.rng) % 4 + 1; flips; flips--) {
				uint64_t r = sim_rand(&a.sim.rng);

				a.sim.data[r % ADV_SIZE] ^= 1u << ((r >> 32) % 8);
			}
			err = adv_pass(a.map, &n);
			ASSERT_NE(-ELOOP, err);
			ASSERT_TRUE(err == 0 || err == -EBADMSG) {
				TH_LOG("mode %u err %d", m, err);
			}
			adv_fini(&a);
		}
	}
}

TEST(opts_versioning)
{
	struct {
		struct pevt_mmap_opts o;
		uint64_t future;
	} big = { .o = { .sz = sizeof(big), .mode = PEVT_READ_WRITE_BACKWARD } };
	struct perf_event_mmap_page pc = { 0 };
	struct pevt_mmap_opts old = { .mode = PEVT_READ_WRITE_BACKWARD };
	unsigned char data[64];
	struct pevt_mmap *map;

	/* A newer caller's zero tail is fine; a non-zero one is refused. */
	map = pevt_mmap__attach(&pc, data, 64, &big.o);
	ASSERT_NE(NULL, map);
	EXPECT_EQ(PEVT_READ_WRITE_BACKWARD, (int)pevt_mmap__mode(map));
	pevt_mmap__delete(map);
	big.future = 1;
	EXPECT_EQ(NULL, pevt_mmap__attach(&pc, data, 64, &big.o));
	EXPECT_EQ(EINVAL, errno);

	/* An older caller (only sz): fields it lacks are defaults. */
	old.sz = sizeof(size_t);
	map = pevt_mmap__attach(&pc, data, 64, &old);
	ASSERT_NE(NULL, map);
	EXPECT_EQ(PEVT_READ_FORWARD, (int)pevt_mmap__mode(map));
	pevt_mmap__delete(map);
	old.sz = 0;
	EXPECT_EQ(NULL, pevt_mmap__attach(&pc, data, 64, &old));
	EXPECT_EQ(EINVAL, errno);
}

TEST(attach_args)
{
	LIBPEVT_OPTS(pevt_mmap_opts, o, .mode = 77);
	struct perf_event_mmap_page pc = { 0 };
	unsigned char data[64];

	errno = 0;
	EXPECT_EQ(NULL, pevt_mmap__attach(&pc, data, 48, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, pevt_mmap__attach(&pc, data, 4, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, pevt_mmap__attach(NULL, data, 64, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, pevt_mmap__attach(&pc, data, 64, &o));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, pevt_mmap__new(-1, 1, NULL));
	EXPECT_EQ(EBADF, errno);
}

TEST_HARNESS_MAIN
