// SPDX-License-Identifier: GPL-2.0
/*
 * libpevt evsel on the host kernel (stock perf_event_open backend):
 * read_format decoding, counts, ioctls, and the FORWARD and
 * WRITE_BACKWARD readers on buffers the real kernel wrote.
 * /dev/pevt is exercised in the VM tests; here only its error paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <linux/pevt.h>
#include <pevt/evsel.h>
#include <pevt/mmap.h>

#include "kselftest_harness.h"

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST	(1U << 4)
#endif

/* ---------------------------------------------------------------- parse */

TEST(counts_single)
{
	uint64_t buf[5] = { 100, 200, 150, 7, 3 };
	struct pevt_counts c;

	ASSERT_EQ(1, pevt_counts__parse(0, buf, 8, &c, 1));
	EXPECT_EQ(100ull, c.val);
	EXPECT_EQ(0ull, c.ena);

	ASSERT_EQ(1, pevt_counts__parse(PERF_FORMAT_TOTAL_TIME_ENABLED |
					PERF_FORMAT_TOTAL_TIME_RUNNING |
					PERF_FORMAT_ID | PERF_FORMAT_LOST,
					buf, 40, &c, 1));
	EXPECT_EQ(100ull, c.val);
	EXPECT_EQ(200ull, c.ena);
	EXPECT_EQ(150ull, c.run);
	EXPECT_EQ(7ull, c.id);
	EXPECT_EQ(3ull, c.lost);

	/* RUNNING without ENABLED: the second word is running. */
	ASSERT_EQ(1, pevt_counts__parse(PERF_FORMAT_TOTAL_TIME_RUNNING |
					PERF_FORMAT_ID, buf, 24, &c, 1));
	EXPECT_EQ(200ull, c.run);
	EXPECT_EQ(0ull, c.ena);
	EXPECT_EQ(150ull, c.id);
	EXPECT_EQ(24ul, pevt_counts__read_size(PERF_FORMAT_TOTAL_TIME_RUNNING |
					       PERF_FORMAT_ID, 9));
}

TEST(counts_group)
{
	/* nr, ena, run, {val, id} x 3 */
	uint64_t buf[9] = { 3, 1000, 500, 11, 101, 22, 102, 33, 103 };
	uint64_t fmt = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
		       PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	struct pevt_counts c[4];
	int i;

	ASSERT_EQ(72ul, pevt_counts__read_size(fmt, 3));
	ASSERT_EQ(3, pevt_counts__parse(fmt, buf, sizeof(buf), c, 4));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ((uint64_t)(11 * (i + 1)), c[i].val);
		EXPECT_EQ((uint64_t)(101 + i), c[i].id);
		EXPECT_EQ(1000ull, c[i].ena);
		EXPECT_EQ(500ull, c[i].run);
	}
	EXPECT_EQ(-ENOSPC, pevt_counts__parse(fmt, buf, sizeof(buf), c, 2));
	EXPECT_EQ(ENOSPC, errno);
}

TEST(counts_bad)
{
	uint64_t buf[9] = { 3, 1000, 500, 11, 101, 22, 102, 33, 103 };
	uint64_t fmt = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
		       PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	struct pevt_counts c[4];

	EXPECT_EQ(-EBADMSG, pevt_counts__parse(fmt, buf, 64, c, 4));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_EQ(-EBADMSG, pevt_counts__parse(fmt, buf, 70, c, 4));
	EXPECT_EQ(-EBADMSG, pevt_counts__parse(0, buf, 16, c, 4));
	EXPECT_EQ(-EBADMSG, pevt_counts__parse(0, buf, 0, c, 4));
	EXPECT_EQ(-EBADMSG, pevt_counts__parse(0, NULL, 8, c, 4));
	EXPECT_EQ(-EINVAL, pevt_counts__parse(1ULL << 40, buf, 8, c, 4));
	EXPECT_EQ(EINVAL, errno);
	/* nr == 0: a group read always has the leader (found by counts_fuzz). */
	buf[0] = 0;
	EXPECT_EQ(-EBADMSG, pevt_counts__parse(fmt, buf, 24, c, 4));
	/* A huge nr must not overflow the length computation. */
	buf[0] = (1ULL << 61) + 1;
	EXPECT_EQ(-EBADMSG, pevt_counts__parse(PERF_FORMAT_GROUP | PERF_FORMAT_ID,
					       buf, 24, c, 4));
	buf[0] = 0x5555555555555556ULL;	/* 3 * nr wraps to 2 */
	EXPECT_EQ(-EBADMSG, pevt_counts__parse(PERF_FORMAT_GROUP | PERF_FORMAT_ID |
					       PERF_FORMAT_LOST, buf, 24, c, 4));
}

/* --------------------------------------------------------------- opener */

static void task_clock_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_TASK_CLOCK;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->disabled = 1;
}

static void spin_ms(unsigned int ms)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

#define OPEN_OR_SKIP(ev, pid, cpu, leader, opts) do {			\
	int __r = pevt_evsel__open(ev, pid, cpu, leader, opts);		\
	if (__r == -EACCES || __r == -EPERM || __r == -ENOSYS ||	\
	    __r == -ENOENT || __r == -EOPNOTSUPP)			\
		SKIP(return, "perf_event_open unavailable: %s", strerror(-__r)); \
	ASSERT_EQ(0, __r);						\
} while (0)

TEST(open_read_counts)
{
	struct perf_event_attr a;
	struct pevt_evsel *ev;
	struct pevt_counts c[2], c2;
	uint64_t id;

	task_clock_attr(&a);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	ev = pevt_evsel__new(&a);
	ASSERT_NE(NULL, ev);
	EXPECT_EQ(-EBADF, pevt_evsel__enable(ev));
	OPEN_OR_SKIP(ev, 0, -1, NULL, NULL);
	EXPECT_EQ(PEVT_BACKEND_PERF, (int)pevt_evsel__backend(ev));
	EXPECT_EQ(-EBUSY, pevt_evsel__open(ev, 0, -1, NULL, NULL));
	EXPECT_EQ(FD_CLOEXEC, fcntl(pevt_evsel__fd(ev), F_GETFD) & FD_CLOEXEC);

	/* Disabled: nothing counted. */
	spin_ms(5);
	ASSERT_EQ(1, pevt_evsel__read(ev, c, 2));
	EXPECT_EQ(0ull, c[0].val);

	ASSERT_EQ(0, pevt_evsel__enable(ev));
	spin_ms(20);
	ASSERT_EQ(0, pevt_evsel__disable(ev));
	ASSERT_EQ(1, pevt_evsel__read(ev, c, 2));
	/* task-clock counts ns on CPU (the host may be busy: > 1 ms). */
	EXPECT_GT(c[0].val, 1000ull * 1000);
	EXPECT_LE(c[0].val, c[0].ena + 1000 * 1000);
	EXPECT_GE(c[0].ena, c[0].run);
	EXPECT_GT(c[0].run, 0ull);
	ASSERT_EQ(0, pevt_evsel__id(ev, &id));
	EXPECT_EQ(id, c[0].id);

	/* Disabled: the value stays; reset clears it. */
	spin_ms(5);
	ASSERT_EQ(1, pevt_evsel__read(ev, &c2, 1));
	EXPECT_EQ(c[0].val, c2.val);
	ASSERT_EQ(0, pevt_evsel__reset(ev));
	ASSERT_EQ(1, pevt_evsel__read(ev, &c2, 1));
	EXPECT_EQ(0ull, c2.val);
	pevt_evsel__delete(ev);
}

TEST(group_read)
{
	struct perf_event_attr a;
	struct pevt_evsel *lead, *mem;
	struct pevt_counts c[2];
	uint64_t id0, id1;

	task_clock_attr(&a);
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			PERF_FORMAT_TOTAL_TIME_ENABLED;
	lead = pevt_evsel__new(&a);
	a.disabled = 0;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	mem = pevt_evsel__new(&a);
	ASSERT_NE(NULL, lead);
	ASSERT_NE(NULL, mem);
	EXPECT_EQ(-EINVAL, pevt_evsel__open(mem, 0, -1, lead, NULL));	/* leader closed */
	OPEN_OR_SKIP(lead, 0, -1, NULL, NULL);
	ASSERT_EQ(0, pevt_evsel__open(mem, 0, -1, lead, NULL));
	ASSERT_EQ(0, pevt_evsel__enable_group(lead));
	spin_ms(10);
	ASSERT_EQ(0, pevt_evsel__disable_group(lead));

	EXPECT_EQ(-ENOSPC, pevt_evsel__read(lead, c, 1));
	ASSERT_EQ(2, pevt_evsel__read(lead, c, 2));
	ASSERT_EQ(0, pevt_evsel__id(lead, &id0));
	ASSERT_EQ(0, pevt_evsel__id(mem, &id1));
	EXPECT_EQ(id0, c[0].id);
	EXPECT_EQ(id1, c[1].id);
	EXPECT_GT(c[0].val, 1000ull * 1000);
	EXPECT_GT(c[1].val, 1000ull * 1000);
	EXPECT_EQ(c[0].ena, c[1].ena);
	pevt_evsel__delete(mem);
	pevt_evsel__delete(lead);
}

TEST(device_backend_errors)
{
	LIBPEVT_OPTS(pevt_open_opts, o, .backend = PEVT_BACKEND_DEVICE,
		     .device = "/nonexistent/pevt");
	struct perf_event_attr a;
	struct pevt_evsel *ev;

	task_clock_attr(&a);
	EXPECT_EQ(-ENOENT, pevt_open(&a, 0, -1, -1, &o));
	EXPECT_EQ(ENOENT, errno);
	/* Not the pevt device: the ioctl is refused, nothing leaks. */
	o.device = "/dev/null";
	EXPECT_EQ(-ENOTTY, pevt_open(&a, 0, -1, -1, &o));
	EXPECT_EQ(-EINVAL, pevt_open(NULL, 0, -1, -1, NULL));
	o.backend = 42;
	EXPECT_EQ(-EINVAL, pevt_open(&a, 0, -1, -1, &o));

	/* A group must not mix backends. */
	ev = pevt_evsel__new(&a);
	ASSERT_NE(NULL, ev);
	OPEN_OR_SKIP(ev, 0, -1, NULL, NULL);
	{
		struct pevt_evsel *m = pevt_evsel__new(&a);

		o.backend = PEVT_BACKEND_DEVICE;
		EXPECT_EQ(-EINVAL, pevt_evsel__open(m, 0, -1, ev, &o));
		pevt_evsel__delete(m);
	}
	pevt_evsel__delete(ev);
}

/* ------------------------------------------------- real kernel buffers */

/* IP | TID | TIME samples: 32 bytes each, time at offset 24. */
#define SAMPLE_SIZE 32

static uint64_t sample_time(const struct perf_event_header *h)
{
	uint64_t t;

	memcpy(&t, (const char *)h + 24, 8);
	return t;
}

static struct pevt_evsel *sampler(struct __test_metadata *_metadata,
				  bool write_backward)
{
	struct perf_event_attr a;

	task_clock_attr(&a);
	a.sample_period = 20000;	/* 20 us of task time */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.write_backward = write_backward;
	return pevt_evsel__new(&a);
}

TEST(mmap_layout)
{
	LIBPEVT_OPTS(pevt_mmap_opts, o, .writable = true);
	struct perf_event_mmap_page *pc;
	struct pevt_evsel *ev;
	struct pevt_mmap *map;
	long page = sysconf(_SC_PAGESIZE);

	ev = sampler(_metadata, false);
	ASSERT_NE(NULL, ev);
	OPEN_OR_SKIP(ev, 0, -1, NULL, NULL);
	EXPECT_EQ(NULL, pevt_mmap__new(pevt_evsel__fd(ev), 0, &o));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, pevt_mmap__new(pevt_evsel__fd(ev), 3, &o));
	EXPECT_EQ(EINVAL, errno);
	map = pevt_evsel__mmap(ev, 2, &o);
	ASSERT_NE(NULL, map);
	/* The kernel's own description of the layout agrees with ours. */
	pc = pevt_mmap__control(map);
	EXPECT_EQ((uint64_t)page, pc->data_offset);
	EXPECT_EQ((uint64_t)(2 * page), pc->data_size);
	EXPECT_EQ((size_t)(2 * page), pevt_mmap__data_size(map));
	EXPECT_EQ((char *)pc + page, (char *)pevt_mmap__data(map));
	EXPECT_EQ(pevt_evsel__fd(ev), pevt_mmap__fd(map));
	/* Unmapped with the evsel; a new mapping can then be made. */
	pevt_evsel__munmap(ev);
	EXPECT_EQ(NULL, pevt_evsel__map(ev));
	pevt_evsel__delete(ev);
}

TEST(write_backward_real_kernel)
{
	struct pevt_mmap_stats st;
	struct perf_event_header *h;
	struct pevt_evsel *ev;
	struct pevt_mmap *map;
	uint64_t prev_t = UINT64_MAX, newest, first_newest = 0, paused_head;
	size_t n = 0, i;
	int round;

	ev = sampler(_metadata, true);
	ASSERT_NE(NULL, ev);
	OPEN_OR_SKIP(ev, 0, -1, NULL, NULL);
	map = pevt_evsel__mmap(ev, 1, NULL);	/* read-only: overwrite */
	ASSERT_NE(NULL, map);
	EXPECT_EQ(PEVT_READ_WRITE_BACKWARD, (int)pevt_mmap__mode(map));
	EXPECT_EQ(NULL, pevt_evsel__mmap(ev, 1, NULL));
	EXPECT_EQ(EBUSY, errno);

	/* Several laps of the buffer. */
	ASSERT_EQ(0, pevt_evsel__enable(ev));
	for (round = 0; round < 200; round++) {
		spin_ms(10);
		if (-pevt_mmap__read_head(map) > 8 * pevt_mmap__data_size(map))
			break;
	}
	ASSERT_EQ(0, pevt_evsel__pause(ev, true));
	ASSERT_GT(-pevt_mmap__read_head(map), 8 * pevt_mmap__data_size(map));

	ASSERT_EQ(0, pevt_mmap__read_init(map));
	while ((h = pevt_mmap__read_event(map))) {
		ASSERT_EQ((uint32_t)PERF_RECORD_SAMPLE, h->type);
		ASSERT_EQ(SAMPLE_SIZE, h->size);
		/* Newest first. */
		ASSERT_LT(sample_time(h), prev_t);
		prev_t = sample_time(h);
		if (!n)
			first_newest = prev_t;
		n++;
	}
	pevt_mmap__stats(map, &st);
	EXPECT_EQ(0, pevt_mmap__read_done(map));
	/* 32-byte records tile the buffer: every slot is a whole record. */
	EXPECT_EQ(pevt_mmap__data_size(map) / SAMPLE_SIZE, n);
	EXPECT_EQ(PEVT_STOP_OVERWRITTEN, (int)st.stop);

	/* Resume, pause again: only newer records, and at least one. */
	newest = UINT64_MAX;
	/*
	 * Until a record came, up to 2 s: a fixed 2 ms of wall time gave the
	 * task no CPU time at all once in a 6.12 guest under TCG (both vCPUs
	 * on one host thread) and the pass found nothing (EAGAIN).
	 */
	paused_head = pevt_mmap__read_head(map);
	ASSERT_EQ(0, pevt_evsel__pause(ev, false));
	for (round = 0; round < 1000; round++) {
		spin_ms(2);
		if (pevt_mmap__read_head(map) != paused_head)
			break;
	}
	ASSERT_EQ(0, pevt_evsel__pause(ev, true));
	ASSERT_EQ(0, pevt_mmap__read_init(map));
	for (i = 0; (h = pevt_mmap__read_event(map)); i++) {
		if (!i)
			newest = sample_time(h);
		if (h->type == PERF_RECORD_SAMPLE)
			ASSERT_LE(sample_time(h), newest);
		/* Nothing from the first pass comes back. */
		if (h->type == PERF_RECORD_SAMPLE)
			ASSERT_GT(sample_time(h), first_newest);
	}
	EXPECT_EQ(0, pevt_mmap__read_done(map));
	EXPECT_GT(i, 0ul);
	pevt_evsel__delete(ev);
}

TEST(forward_real_kernel)
{
	LIBPEVT_OPTS(pevt_mmap_opts, o, .writable = true);
	struct perf_event_header *h;
	struct pevt_evsel *ev;
	struct pevt_mmap *map;
	uint64_t prev_t = 0, samples = 0, lost = 0;
	int round;

	ev = sampler(_metadata, false);
	ASSERT_NE(NULL, ev);
	OPEN_OR_SKIP(ev, 0, -1, NULL, NULL);
	map = pevt_evsel__mmap(ev, 1, &o);
	ASSERT_NE(NULL, map);
	EXPECT_EQ(PEVT_READ_FORWARD, (int)pevt_mmap__mode(map));
	ASSERT_EQ(0, pevt_evsel__enable(ev));
	for (round = 0; round < 100; round++) {
		int err;

		/* 5 ms = ~250 samples > 128 slots: forces LOST sometimes. */
		spin_ms(round % 2 ? 1 : 5);
		err = pevt_mmap__read_init(map);
		if (err == -EAGAIN)
			continue;
		ASSERT_EQ(0, err);
		while ((h = pevt_mmap__read_event(map))) {
			if (h->type == PERF_RECORD_LOST) {
				uint64_t l;

				memcpy(&l, (char *)h + 16, 8);
				lost += l;
			} else {
				ASSERT_EQ((uint32_t)PERF_RECORD_SAMPLE, h->type);
				ASSERT_EQ(SAMPLE_SIZE, h->size);
				/* Oldest first, each exactly once. */
				ASSERT_GT(sample_time(h), prev_t);
				prev_t = sample_time(h);
				samples++;
			}
			pevt_mmap__consume(map);
		}
		ASSERT_EQ(0, pevt_mmap__read_done(map));
		ASSERT_EQ(pevt_mmap__read_head(map) >= pevt_mmap__control(map)->data_tail, 1);
	}
	ASSERT_EQ(0, pevt_evsel__disable(ev));
	TH_LOG("forward: %llu samples, %llu lost", (unsigned long long)samples,
	       (unsigned long long)lost);
	/* LOST accounting is checked exactly in ringbuf_test; here: data. */
	EXPECT_GT(samples, 100ull);
	pevt_evsel__delete(ev);
}

/*
 * Mixed, variable-size records from the real kernel: 32-byte samples and
 * COMM records of every name length (prctl(PR_SET_NAME) "c<counter>"
 * padded to 1..15 chars), all with sample_id_all TIME as their last u64.
 * Checks every record is whole and well-formed, times never increase
 * walking backward (never decrease forward), and COMM counters are
 * strictly monotonic: no duplicates, nothing invented, nothing torn.
 */
struct mix_state {
	unsigned int next_comm;		/* counter of the next name */
	char saved[16];
};

static void set_comm(struct mix_state *m)
{
	char name[16];
	int len = 1 + (int)(m->next_comm % 15), n;

	n = snprintf(name, sizeof(name), "c%u", m->next_comm++);
	while (n < len)
		name[n++] = '_';
	name[n < 15 ? n : 15] = 0;
	prctl(PR_SET_NAME, name);
}

static uint64_t last_u64(const struct perf_event_header *h)
{
	uint64_t t;

	memcpy(&t, (const char *)h + h->size - 8, 8);
	return t;
}

/* Returns the COMM counter, or -1 for a sample; asserts the layout. */
static long check_mixed(struct __test_metadata *_metadata,
			const struct perf_event_header *h)
{
	const char *comm;
	size_t len;

	if (h->type == PERF_RECORD_SAMPLE) {
		EXPECT_EQ(SAMPLE_SIZE, h->size);
		return -1;
	}
	EXPECT_EQ((uint32_t)PERF_RECORD_COMM, h->type);
	if (h->type != PERF_RECORD_COMM)
		return -2;
	/* header, pid, tid, comm (NUL, padded to 8), sample_id: tid, time */
	comm = (const char *)h + 16;
	len = strnlen(comm, h->size - 16);
	EXPECT_EQ((size_t)(8 + 8 + ((len + 1 + 7) & ~7ul) + 16), (size_t)h->size);
	EXPECT_EQ('c', comm[0]);
	return strtol(comm + 1, NULL, 10);
}

static void mixed_attr(struct perf_event_attr *a, bool write_backward)
{
	task_clock_attr(a);
	a->sample_period = 100000;	/* 100 us: leaves room for COMMs */
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->sample_id_all = 1;
	a->comm = 1;
	a->write_backward = write_backward;
}

TEST(write_backward_mixed_real_kernel)
{
	struct perf_event_header *h;
	struct perf_event_attr a;
	struct pevt_evsel *ev;
	struct pevt_mmap *map;
	struct pevt_mmap_stats st;
	struct mix_state m = { 0 };
	uint64_t prev_t = UINT64_MAX, bytes = 0;
	long prev_c = -1, c;
	size_t n = 0, comms = 0;
	int round;

	prctl(PR_GET_NAME, m.saved);
	mixed_attr(&a, true);
	ev = pevt_evsel__new(&a);
	ASSERT_NE(NULL, ev);
	OPEN_OR_SKIP(ev, 0, -1, NULL, NULL);
	map = pevt_evsel__mmap(ev, 2, NULL);
	ASSERT_NE(NULL, map);
	ASSERT_EQ(0, pevt_evsel__enable(ev));
	for (round = 0; round < 2000; round++) {
		spin_ms(round % 3 ? 0 : 1);
		set_comm(&m);
		if (-pevt_mmap__read_head(map) > 4 * pevt_mmap__data_size(map) &&
		    round > 200)
			break;
	}
	ASSERT_EQ(0, pevt_evsel__pause(ev, true));
	prctl(PR_SET_NAME, m.saved);

	ASSERT_EQ(0, pevt_mmap__read_init(map));
	while ((h = pevt_mmap__read_event(map))) {
		c = check_mixed(_metadata, h);
		ASSERT_NE(-2, c);
		ASSERT_LE(last_u64(h), prev_t);
		prev_t = last_u64(h);
		if (c >= 0) {
			/* Newest first: counters strictly decrease. */
			if (prev_c >= 0)
				ASSERT_EQ(prev_c - 1, c);
			prev_c = c;
			comms++;
		}
		bytes += h->size;
		n++;
	}
	pevt_mmap__stats(map, &st);
	ASSERT_EQ(0, pevt_mmap__read_done(map));
	TH_LOG("write_backward mixed: %zu records (%zu COMM), %llu of %zu bytes, stop %s",
	       n, comms, (unsigned long long)bytes, pevt_mmap__data_size(map),
	       pevt_read_stop__name(st.stop));
	EXPECT_LE(bytes, pevt_mmap__data_size(map));
	/* Whatever stopped the walk, it was a record not wholly in the buffer. */
	EXPECT_EQ(PEVT_STOP_OVERWRITTEN, (int)st.stop);
	EXPECT_GT(bytes + 64 + 16, pevt_mmap__data_size(map));
	EXPECT_GT(comms, 10ul);
	pevt_evsel__delete(ev);
}

TEST(forward_mixed_real_kernel)
{
	LIBPEVT_OPTS(pevt_mmap_opts, o, .writable = true);
	struct perf_event_header *h;
	struct perf_event_attr a;
	struct pevt_evsel *ev;
	struct pevt_mmap *map;
	struct mix_state m = { 0 };
	uint64_t prev_t = 0;
	long prev_c = -1, c;
	size_t comms = 0, samples = 0;
	int round;

	prctl(PR_GET_NAME, m.saved);
	mixed_attr(&a, false);
	a.watermark = 0;
	ev = pevt_evsel__new(&a);
	ASSERT_NE(NULL, ev);
	OPEN_OR_SKIP(ev, 0, -1, NULL, NULL);
	map = pevt_evsel__mmap(ev, 1, &o);
	ASSERT_NE(NULL, map);
	ASSERT_EQ(0, pevt_evsel__enable(ev));
	for (round = 0; round < 400; round++) {
		int err;

		set_comm(&m);
		spin_ms(round % 4 ? 0 : 1);
		err = pevt_mmap__read_init(map);
		if (err == -EAGAIN)
			continue;
		ASSERT_EQ(0, err);
		while ((h = pevt_mmap__read_event(map))) {
			if (h->type == PERF_RECORD_LOST) {
				/* Drops break the COMM sequence: restart it. */
				prev_c = -1;
				pevt_mmap__consume(map);
				continue;
			}
			c = check_mixed(_metadata, h);
			ASSERT_NE(-2, c);
			ASSERT_GE(last_u64(h), prev_t);
			prev_t = last_u64(h);
			if (c >= 0) {
				if (prev_c >= 0)
					ASSERT_EQ(prev_c + 1, c);
				prev_c = c;
				comms++;
			} else {
				samples++;
			}
			pevt_mmap__consume(map);
		}
		ASSERT_EQ(0, pevt_mmap__read_done(map));
	}
	prctl(PR_SET_NAME, m.saved);
	TH_LOG("forward mixed: %zu samples, %zu COMM", samples, comms);
	EXPECT_GT(comms, 100ul);
	pevt_evsel__delete(ev);
}

TEST_HARNESS_MAIN
