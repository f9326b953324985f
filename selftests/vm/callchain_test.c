// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_SAMPLE_CALLCHAIN from /dev/pevt against the stock kernel, same
 * attr, same task, same run.
 *
 * A child runs a known call tree built with frame pointers:
 *   wl_main -> wl_a -> { wl_b, wl_d } -> wl_c (spins, sometimes getppid())
 * Both backends sample it with task-clock (1 ms) at once.  Each sample's
 * user part (after PERF_CONTEXT_USER: the IP, then return addresses) is
 * reduced to its return addresses (the IP differs from sample to sample);
 * both backends' most frequent chain must be the same, and at least 97%
 * of each backend's samples must have a chain the other backend also
 * produced.  The stack is the same memory for both, so a walker that
 * reads it differently fails.  Not 100%: the two sample at different
 * instants, and a sample taken on a function's first instruction (before
 * it pushes its frame pointer) or on its last (after it pops it) has a
 * chain one return address short, which the other backend may not hit in
 * the same run (100 runs of the four variants on 6.1: at worst 99.5% in
 * common; 98.9% once on a slow CI host); a failure logs the chains only
 * one backend produced.  Kernel parts (samples taken in
 * getppid()) must start with PERF_CONTEXT_KERNEL and hold kernel text
 * addresses.  Variants: exclude_callchain_kernel, exclude_callchain_user,
 * sample_max_stack.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <linux/pevt.h>

#include "kselftest_harness.h"
#include "../common.h"

#define PAGES		256
#define KTEXT		0xffffffff80000000ULL
#define FP		__attribute__((noinline, optimize("no-omit-frame-pointer")))

static volatile unsigned long sink;

FP static void wl_c(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		sink += i;
		if (!(i & 0x3fff))
			syscall(SYS_getppid);
	}
}

FP static void wl_b(void)
{
	wl_c(200000);
	sink++;
}

FP static void wl_d(void)
{
	wl_c(100000);
	sink++;
}

FP static void wl_a(void)
{
	wl_b();
	wl_d();
	sink++;
}

FP static void wl_main(__u64 ns)
{
	__u64 end = ts_ns(CLOCK_THREAD_CPUTIME_ID) + ns;

	while (ts_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		wl_a();
	sink++;
}

static int run_workload(void *unused)
{
	wl_main(800 * NSEC_PER_MSEC);
	return 0;
}

/* ---- chains ------------------------------------------------------------ */

struct chains {
	char **key;		/* user return addresses, as text */
	int n;
	int kernel;		/* samples with a kernel part */
	int kernel_ok;		/* ... starting with the marker, kernel text */
	int kmark, umark;	/* samples with each marker */
	int max_entries;	/* most non-marker entries in one chain */
};

static void add_key(struct chains *c, const char *k)
{
	c->key = realloc(c->key, (c->n + 1) * sizeof(*c->key));
	c->key[c->n++] = strdup(k);
}

static void parse(void *map, struct chains *c)
{
	struct perf_event_mmap_page *pc = map;
	long pg = getpagesize();
	uint64_t size = (uint64_t)PAGES * pg;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	const uint8_t *data = (const uint8_t *)map + pg;

	for (uint64_t pos = pc->data_tail; pos < head; ) {
		static uint8_t rec[4096];
		const struct perf_event_header *h = (const void *)rec;
		const uint64_t *u = (const void *)(rec + sizeof(*h));
		char key[4096];
		size_t kl = 0;
		uint64_t nr;
		int in_user = 0, in_kernel = 0, entries = 0, kbad = 0, after_ip = 0;

		memcpy(rec, data + pos % size, sizeof(*h));
		if (h->size < sizeof(*h) || h->size > sizeof(rec))
			return;
		for (unsigned int i = 0; i < h->size; i++)
			rec[i] = data[(pos + i) % size];
		pos += h->size;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		/* sample_type: IP, CALLCHAIN */
		nr = u[1];
		key[0] = 0;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t ip = u[2 + i];

			if (ip == (uint64_t)PERF_CONTEXT_KERNEL) {
				in_kernel = 1;
				in_user = 0;
				c->kernel++;
				c->kmark++;
				if (i)
					kbad = 1;
				continue;
			}
			if (ip == (uint64_t)PERF_CONTEXT_USER) {
				in_user = 1;
				in_kernel = 0;
				after_ip = 0;
				c->umark++;
				continue;
			}
			entries++;
			if (in_kernel && ip < KTEXT)
				kbad = 1;
			if (in_user && after_ip++ && kl < sizeof(key) - 20)
				kl += snprintf(key + kl, sizeof(key) - kl, "%llx ",
					       (unsigned long long)ip);
		}
		if (nr && u[2] == (uint64_t)PERF_CONTEXT_KERNEL && !kbad)
			c->kernel_ok++;
		if (entries > c->max_entries)
			c->max_entries = entries;
		add_key(c, key);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Is sample @i of @a compared with @b?  Samples without user return
 * addresses (taken after exit_mm(), or with the user part excluded) have
 * an empty key and are compared only if @b has no user part either.
 */
static bool key_compared(const struct chains *a, const struct chains *b, int i)
{
	return a->key[i][0] || !b->umark;
}

/* Has @b (keys sorted) a sample with the key at @key? */
static bool key_in(const struct chains *b, char *const *key)
{
	return bsearch(key, b->key, b->n, sizeof(*b->key), cmp_str);
}

/* How many samples from @i on share the key of sample @i (keys sorted). */
static int key_run(const struct chains *c, int i)
{
	int run = 1;

	while (i + run < c->n && !strcmp(c->key[i], c->key[i + run]))
		run++;
	return run;
}

/* Samples of @a whose key @b also has, in per cent of those compared. */
static double common_pct(struct chains *a, struct chains *b)
{
	int hit = 0, n = 0;

	for (int i = 0; i < a->n; i++) {
		if (!key_compared(a, b, i))
			continue;
		n++;
		if (key_in(b, &a->key[i]))
			hit++;
	}
	return n ? 100.0 * hit / n : 0;
}

/* The key most samples of @c have (keys sorted). */
static const char *most_frequent(struct chains *c)
{
	const char *best = "";
	int most = 0;

	for (int i = 0, run; i < c->n; i += run) {
		run = key_run(c, i);
		if (run > most) {
			most = run;
			best = c->key[i];
		}
	}
	return best;
}

/* @ip as the nearest workload function below it plus an offset, or hex. */
static const char *sym(uint64_t ip, char *buf, size_t len)
{
	static const struct { const char *name; void *addr; } f[] = {
		{ "wl_c", wl_c }, { "wl_b", wl_b }, { "wl_d", wl_d },
		{ "wl_a", wl_a }, { "wl_main", wl_main },
		{ "run_workload", run_workload },
	};
	const char *best = NULL;
	uint64_t off = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		uint64_t a = (uintptr_t)f[i].addr;

		if (ip >= a && ip - a < 0x400 && (!best || ip - a < off)) {
			best = f[i].name;
			off = ip - a;
		}
	}
	if (best)
		snprintf(buf, len, "%s+%#llx", best, (unsigned long long)off);
	else
		snprintf(buf, len, "%#llx", (unsigned long long)ip);
	return buf;
}

/*
 * Log the distinct keys of @a that @b lacks, with how many samples had
 * each, so a failure says which chains only one walker produced.
 */
static void log_missing(struct __test_metadata *_metadata, const char *what,
			struct chains *a, struct chains *b)
{
	int shown = 0;

	for (int i = 0, same; i < a->n && shown < 8; i += same) {
		char line[1024], buf[64];
		size_t l = 0;

		same = key_run(a, i);
		if (!key_compared(a, b, i) || key_in(b, &a->key[i]))
			continue;
		for (const char *p = a->key[i]; *p && l < sizeof(line) - 80; ) {
			char *end;
			uint64_t ip = strtoull(p, &end, 16);

			if (end == p)
				break;
			l += snprintf(line + l, sizeof(line) - l, " %s",
				      sym(ip, buf, sizeof(buf)));
			p = end;
		}
		TH_LOG("%s: %d sample(s) with [%s ]", what, same,
		       a->key[i][0] ? line : " (no user return address)");
		shown++;
	}
}

static void chains_free(struct chains *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->key[i]);
	free(c->key);
}

FIXTURE(cc) {
	int dev;
};

FIXTURE_VARIANT(cc) {
	int excl_kernel, excl_user, max_stack;
};

FIXTURE_VARIANT_ADD(cc, full) { 0 };
FIXTURE_VARIANT_ADD(cc, exclude_callchain_kernel) { .excl_kernel = 1 };
FIXTURE_VARIANT_ADD(cc, exclude_callchain_user) { .excl_user = 1 };
FIXTURE_VARIANT_ADD(cc, sample_max_stack_4) { .max_stack = 4 };

FIXTURE_SETUP(cc)
{
	self->dev = pevt_dev_open();
	ASSERT_LE(0, self->dev);
}

FIXTURE_TEARDOWN(cc)
{
	close(self->dev);
}

TEST_F_TIMEOUT(cc, same_chains_as_stock, 120)
{
	size_t len = (PAGES + 1) * getpagesize();
	struct chains c[2] = { 0 };
	struct perf_event_attr a;
	int go, fd[2], st;
	void *map[2];
	pid_t pid;

	pid = fork_waiting(run_workload, NULL, &go);
	ASSERT_LT(0, pid);
	pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
	a.sample_period = 1000000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
	a.exclude_callchain_kernel = variant->excl_kernel;
	a.exclude_callchain_user = variant->excl_user;
	a.sample_max_stack = variant->max_stack;
	fd[0] = sys_perf_event_open(&a, pid, -1, -1, 0);
	ASSERT_LE(0, fd[0]) TH_LOG("stock: %s", strerror(errno));
	fd[1] = pevt_open(self->dev, &a, pid, -1, -1, 0);
	ASSERT_LE(0, fd[1]) TH_LOG("pevt: %s", strerror(errno));
	for (int k = 0; k < 2; k++) {
		map[k] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd[k], 0);
		ASSERT_NE(MAP_FAILED, map[k]);
	}
	ASSERT_EQ(0, child_go(go));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	for (int k = 0; k < 2; k++) {
		parse(map[k], &c[k]);
		qsort(c[k].key, c[k].n, sizeof(*c[k].key), cmp_str);
	}
	TH_LOG("samples stock %d pevt %d; kernel parts %d/%d ok %d/%d; user markers %d/%d; deepest %d/%d; common: pevt in stock %.1f%%, stock in pevt %.1f%%",
	       c[0].n, c[1].n, c[0].kernel, c[1].kernel, c[0].kernel_ok,
	       c[1].kernel_ok, c[0].umark, c[1].umark, c[0].max_entries,
	       c[1].max_entries, common_pct(&c[1], &c[0]),
	       common_pct(&c[0], &c[1]));
	log_missing(_metadata, "stock only", &c[0], &c[1]);
	log_missing(_metadata, "pevt only", &c[1], &c[0]);
	ASSERT_LT(50, c[0].n);
	ASSERT_LT(50, c[1].n);
	EXPECT_LE(97.0, common_pct(&c[1], &c[0]));
	EXPECT_LE(97.0, common_pct(&c[0], &c[1]));
	EXPECT_STREQ(most_frequent(&c[0]), most_frequent(&c[1]));
	for (int k = 0; k < 2; k++) {
		EXPECT_EQ(c[k].kernel, c[k].kernel_ok) TH_LOG("backend %d", k);
		if (variant->excl_kernel) {
			EXPECT_EQ(0, c[k].kmark);
		}
		if (variant->excl_user) {
			EXPECT_EQ(0, c[k].umark);
		} else {
			/* A sample after exit_mm() has no user part (as perf). */
			EXPECT_LE(c[k].n - c[k].umark, 2 + c[k].n / 20);
		}
		if (variant->max_stack) {
			EXPECT_GE(variant->max_stack, c[k].max_entries);
		} else if (!variant->excl_user) {
			EXPECT_LE(5, c[k].max_entries);	/* c b a main ... */
		}
	}
	for (int k = 0; k < 2; k++) {
		munmap(map[k], len);
		close(fd[k]);
		chains_free(&c[k]);
	}
}

/* sample_max_stack above kernel.perf_event_max_stack. */
TEST(max_stack_errno)
{
	struct perf_event_attr a;
	int dev = pevt_dev_open(), s, p, es, ep;

	ASSERT_LE(0, dev);
	pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
	a.sample_period = 1000000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
	a.sample_max_stack = 60000;
	s = sys_perf_event_open(&a, 0, -1, -1, 0);
	es = s < 0 ? errno : 0;
	p = pevt_open(dev, &a, 0, -1, -1, 0);
	ep = p < 0 ? errno : 0;
	TH_LOG("stock %d pevt %d", es, ep);
	EXPECT_EQ(EOVERFLOW, ep);
	EXPECT_EQ(es, ep);
	if (s >= 0)
		close(s);
	if (p >= 0)
		close(p);
	close(dev);
}

TEST_HARNESS_MAIN
