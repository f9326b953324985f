// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshots of overwrite buffers: PEVT_IOC_REDIRECT_OUTPUT and
 * `pevt record --overwrite --switch-output`.
 *
 * redirect_errnos: every misuse of the ioctl gets its documented errno.
 * redirect_no_loss: a sys_enter event at period 1 with PERF_SAMPLE_READ
 *	(the count in each sample is a sequence number) written into A,
 *	then B, A, B by redirects; A is quiescent while redirected (its
 *	data_head does not move), and the two buffers walked backward hold
 *	every count 1..N exactly once.  Unmapping the target ends the
 *	redirect.
 * rec.snapshots_*: `pevt record --overwrite --switch-output=SIZE` of a
 *	getppid() loop, sampling raw_syscalls:sys_enter:S at period 1, on
 *	both backends.  Each snapshot file is read back (libpevt's reader):
 *	per event, the counts of consecutive snapshots must follow each other
 *	(loss between snapshots) and those of one snapshot too (loss inside,
 *	i.e. a buffer that wrapped).  pevt (second buffer by redirect) must
 *	lose nothing anywhere; stock (write_backward + pause) is reported.
 *	Debian's perf script reads snapshot files with no warning and counts
 *	as many samples as pevt record says it wrote into each (the first
 *	file of each backend by default, of pevt only on the debug kernel
 *	where a perf run takes a minute, all of them with
 *	PEVT_SNAPSHOT_FULL=1 on the guest command line).
 */
// LDLIBS: -lzstd
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <linux/pevt.h>

#include <pevt/data_reader.h>
#include <pevt/mmap.h>
#include <pevt/parse_events.h>

#include "kselftest_harness.h"
#include "common.h"
#include "run_cmd.h"
#include "record_check.h"

#define SNAP_PAGES	32		/* redirect tests: 128 KiB per buffer */
#define SNAP_CALLS	400		/* getppid() per phase */

static void attr_seq(struct perf_event_attr *a, long long tp, bool size_at_end)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = tp;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ |
			 (size_at_end ? PEVT_SAMPLE_SIZE_AT_END : 0);
	a->read_format = PERF_FORMAT_ID;
	a->disabled = 1;
}

static void *map_ro(int fd)
{
	void *p = mmap(NULL, (SNAP_PAGES + 1) * getpagesize(), PROT_READ, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint64_t head_of(void *base)
{
	return __atomic_load_n(&((struct perf_event_mmap_page *)base)->data_head,
			       __ATOMIC_ACQUIRE);
}

static int redirect(int fd, int to)
{
	return ioctl(fd, PEVT_IOC_REDIRECT_OUTPUT, to) ? errno : 0;
}

static void calls(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
}

FIXTURE(rd) {
	int dev;
	long long tp;
	int a, b, c;			/* mapped, CPU 0, SIZE_AT_END */
	void *ma, *mb, *mc;
};

FIXTURE_SETUP(rd)
{
	struct perf_event_attr attr;

	self->a = self->b = self->c = -1;
	self->ma = self->mb = self->mc = NULL;
	self->dev = pevt_dev_open();
	if (self->dev < 0)
		SKIP(return, "no %s (pevt.ko not loaded)", PEVT_DEVICE_PATH);
	self->tp = pevt_tracepoint__id("raw_syscalls:sys_enter");
	ASSERT_LT(0, self->tp);
	ASSERT_EQ(0, pin_to_cpu(0));
	attr_seq(&attr, self->tp, true);
	self->a = pevt_open(self->dev, &attr, 0, 0, -1, 0);
	self->b = pevt_open(self->dev, &attr, 0, 0, -1, 0);
	self->c = pevt_open(self->dev, &attr, 0, 0, -1, 0);
	ASSERT_LE(0, self->a);
	ASSERT_LE(0, self->b);
	ASSERT_LE(0, self->c);
	self->ma = map_ro(self->a);
	self->mb = map_ro(self->b);
	self->mc = map_ro(self->c);
	ASSERT_NE(NULL, self->ma);
	ASSERT_NE(NULL, self->mb);
	ASSERT_NE(NULL, self->mc);
}

FIXTURE_TEARDOWN(rd)
{
	size_t len = (SNAP_PAGES + 1) * getpagesize();

	if (self->ma)
		munmap(self->ma, len);
	if (self->mb)
		munmap(self->mb, len);
	if (self->mc)
		munmap(self->mc, len);
	if (self->a >= 0)
		close(self->a);
	if (self->b >= 0)
		close(self->b);
	if (self->c >= 0)
		close(self->c);
	if (self->dev >= 0)
		close(self->dev);
}

TEST_F(rd, redirect_errnos)
{
	struct perf_event_attr attr;
	int null = open("/dev/null", O_RDONLY), u, s, e, d = -1, st;

	attr_seq(&attr, self->tp, true);
	u = pevt_open(self->dev, &attr, 0, 0, -1, 0);		/* never mapped */
	s = pevt_open(self->dev, &attr, 0, 0, -1, 0);		/* SET_OUTPUT into A */
	ASSERT_LE(0, u);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, ioctl(s, PERF_EVENT_IOC_SET_OUTPUT, self->a));
	attr_seq(&attr, self->tp, false);
	e = pevt_open(self->dev, &attr, 0, 0, -1, 0);		/* no SIZE_AT_END */
	ASSERT_LE(0, e);
	void *me = map_ro(e);

	ASSERT_NE(NULL, me);
	st = sys_perf_event_open(&attr, 0, 0, -1, 0);		/* stock fd */

	EXPECT_EQ(EBADF, redirect(self->a, 9999));
	EXPECT_EQ(EINVAL, redirect(self->a, null));		/* not a pevt event */
	if (st >= 0)
		EXPECT_EQ(EINVAL, redirect(self->a, st));
	EXPECT_EQ(EINVAL, redirect(u, self->b));		/* source has no buffer */
	EXPECT_EQ(EINVAL, redirect(self->a, u));		/* target has none */
	EXPECT_EQ(EINVAL, redirect(self->a, self->a));	/* same buffer */
	EXPECT_EQ(EINVAL, redirect(self->a, s));		/* same buffer, other event */
	EXPECT_EQ(EINVAL, redirect(self->a, e));		/* SIZE_AT_END differs */
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		attr_seq(&attr, self->tp, true);
		d = pevt_open(self->dev, &attr, 0, 1, -1, 0);
		ASSERT_LE(0, d);
		void *md = map_ro(d);

		ASSERT_NE(NULL, md);
		EXPECT_EQ(EINVAL, redirect(self->a, d));	/* other CPU */
		munmap(md, (SNAP_PAGES + 1) * getpagesize());
	}
	EXPECT_EQ(0, redirect(self->a, -1));			/* nothing to end */
	EXPECT_EQ(0, redirect(self->a, self->b));
	EXPECT_EQ(0, redirect(self->a, self->b));		/* already there */
	EXPECT_EQ(0, redirect(s, self->b));			/* s writes into A: same */
	EXPECT_EQ(EBUSY, redirect(self->c, self->b));		/* B taken by A */
	EXPECT_EQ(ELOOP, redirect(self->b, self->c));		/* B is a target */
	EXPECT_EQ(ELOOP, redirect(self->c, self->a));		/* A is redirected */
	EXPECT_EQ(0, redirect(self->a, self->c));		/* retarget */
	EXPECT_EQ(0, redirect(self->c, -1));			/* C is not redirected */
	EXPECT_EQ(ELOOP, redirect(self->c, self->b));		/* C is a target now */
	EXPECT_EQ(0, redirect(self->a, -1));
	EXPECT_EQ(0, redirect(self->c, self->b));		/* both free again */
	EXPECT_EQ(0, redirect(self->c, -1));
	if (st >= 0)
		close(st);
	munmap(me, (SNAP_PAGES + 1) * getpagesize());
	close(e);
	if (d >= 0)
		close(d);
	close(s);
	close(u);
	close(null);
}

/* Counts of every sample walked back from @base (newest first) into @v. */
static int walk(void *base, uint64_t *v, int max)
{
	LIBPEVT_OPTS(pevt_mmap_opts, mo, .mode = PEVT_READ_BACKWARD_SIZE_AT_END);
	struct pevt_mmap *m = pevt_mmap__attach(base, (char *)base + getpagesize(),
						SNAP_PAGES * getpagesize(), &mo);
	struct perf_event_header *ev;
	int n = 0;

	if (!m || pevt_mmap__read_init(m))
		return m ? 0 : -1;
	while ((ev = pevt_mmap__read_event(m)) && n < max) {
		/* header, TID, TIME, READ { value, id }, trailer */
		if (ev->type == PERF_RECORD_SAMPLE)
			v[n++] = ((uint64_t *)(ev + 1))[2];
	}
	if (pevt_mmap__read_done(m))
		n = -1;
	pevt_mmap__delete(m);
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

TEST_F(rd, redirect_no_loss)
{
	uint64_t v[8 * SNAP_CALLS], ha, hb, count[2];
	int n, na, nb;

	ASSERT_EQ(0, ioctl(self->a, PERF_EVENT_IOC_ENABLE, 0));
	calls(SNAP_CALLS);
	ASSERT_EQ(0, redirect(self->a, self->b));
	ha = head_of(self->ma);
	calls(SNAP_CALLS);
	/* Quiescent: every record since went into B. */
	EXPECT_EQ(ha, head_of(self->ma));
	EXPECT_LT(0, head_of(self->mb));
	ASSERT_EQ(0, redirect(self->a, -1));
	hb = head_of(self->mb);
	calls(SNAP_CALLS);
	EXPECT_EQ(hb, head_of(self->mb));
	EXPECT_LT(ha, head_of(self->ma));
	ASSERT_EQ(0, redirect(self->a, self->b));
	calls(SNAP_CALLS);
	ASSERT_EQ(0, ioctl(self->a, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(sizeof(count), read(self->a, count, sizeof(count)));

	na = walk(self->ma, v, 8 * SNAP_CALLS);
	ASSERT_LT(0, na);
	nb = walk(self->mb, v + na, 8 * SNAP_CALLS - na);
	ASSERT_LT(0, nb);
	n = na + nb;
	qsort(v, n, sizeof(v[0]), cmp_u64);
	/* 1..count, each once: nothing dropped, nothing twice. */
	EXPECT_EQ(count[0], n);
	for (int i = 0; i < n; i++)
		if (v[i] != (uint64_t)i + 1) {
			EXPECT_EQ(i + 1, v[i]) TH_LOG("count %d missing or twice", i + 1);
			break;
		}
	TH_LOG("%d samples: %d in A, %d in B, count %llu", n, na, nb,
	       (unsigned long long)count[0]);

	/* The target's last unmap ends the redirect: records go to A again. */
	ha = head_of(self->ma);
	munmap(self->mb, (SNAP_PAGES + 1) * getpagesize());
	self->mb = NULL;
	ASSERT_EQ(0, ioctl(self->a, PERF_EVENT_IOC_ENABLE, 0));
	calls(10);
	ASSERT_EQ(0, ioctl(self->a, PERF_EVENT_IOC_DISABLE, 0));
	EXPECT_LT(ha, head_of(self->ma));
	EXPECT_EQ(EINVAL, redirect(self->a, self->b));	/* B has no buffer now */
}

/* ---- pevt record --overwrite --------------------------------------------- */

struct seq {
	uint64_t id, value;
	int file;
};

struct scan {
	struct seq *v;
	size_t n, max;
	int file;
	long long samples;
	bool wrapped[256];		/* per file */
};

static int scan_rec(struct pevt_data *d, const struct pevt_data_rec *r, void *ctx)
{
	struct scan *sc = ctx;
	struct pevt_sample s;

	if (r->ev->type != PERF_RECORD_SAMPLE)
		return 0;
	sc->samples++;
	if (pevt_data__parse_sample(d, r->ev, &s) || s.read_size < 16)
		return 0;
	if (sc->n == sc->max) {
		size_t m = sc->max ? 2 * sc->max : 4096;
		struct seq *nv = realloc(sc->v, m * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		sc->v = nv;
		sc->max = m;
	}
	sc->v[sc->n++] = (struct seq){ s.read[1], s.read[0], sc->file };
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

/*
 * Samples pevt record reported for @file ("Dump FILE (N samples; ...)"),
 * or -1; *@wrapped: a buffer had wrapped (older records overwritten).
 */
static long long dumped(const char *err, const char *file, bool *wrapped)
{
	const char *p, *nl;
	char key[600];

	snprintf(key, sizeof(key), "Dump %s (", file);
	p = strstr(err, key);
	if (!p)
		return -1;
	nl = strchr(p, '\n');
	*wrapped = strstr(p, "wrapped") && (!nl || strstr(p, "wrapped") < nl);
	return atoll(p + strlen(key));
}

static void record_snapshots(struct __test_metadata *_metadata, const char *backend)
{
	bool debug = getenv("PEVT_KERNEL") && !strcmp(getenv("PEVT_KERNEL"), "debug");
	bool full = getenv("PEVT_SNAPSHOT_FULL") && atoi(getenv("PEVT_SNAPSHOT_FULL"));
	bool pevt = !strcmp(backend, "pevt");
	long long between = 0, overwritten = 0, inside = 0, before = 0, dups = 0;
	int nr_wrapped = 0, shown = 0;
	uint64_t kernel_lost = 0;
	struct scan sc = { 0 };
	struct out o;
	glob_t g;
	char dir[64];
	size_t i;

	snprintf(dir, sizeof(dir), "/tmp/snapshot_test/%s", backend);
	run(&o, "rm -rf %s && mkdir -p %s", dir, dir);
	out_free(&o);
	/*
	 * A snapshot whenever the buffers hold 256 KiB of new records (at
	 * most 10 ms late), in 4 MiB buffers, so that none fills up while a
	 * snapshot is written: seen up to 0.7 s under TCG, 16384 stock
	 * records (they carry RAW: twice as large as pevt's).
	 */
	run(&o, "cd %s && pevt record --backend %s --overwrite --switch-output=256K -m 1024 "
	     "-e raw_syscalls:sys_enter:S -c 1 -i -o s.data -- pevt bench record-loop %d /dev/null",
	     dir, backend, debug ? 8000 : 20000);
	ASSERT_EQ(0, o.status) TH_LOG("pevt record: %s", o.err);
	TH_LOG("%s", o.err);
	ASSERT_EQ(0, glob("/tmp/snapshot_test/*/s.data.*", 0, NULL, &g));
	/* glob() sorts: the timestamps are in snapshot order. */
	for (i = 0, sc.file = 0; i < g.gl_pathc; i++) {
		struct pevt_data *d;

		if (strncmp(g.gl_pathv[i], dir, strlen(dir)))
			continue;
		d = pevt_data__open(g.gl_pathv[i]);
		ASSERT_NE(NULL, d) TH_LOG("%s: cannot open", g.gl_pathv[i]);
		sc.samples = 0;
		ASSERT_EQ(0, pevt_data__for_each(d, scan_rec, &sc))
			TH_LOG("%s: %s", g.gl_pathv[i], pevt_data__error(d) ?: "");
		ASSERT_GT(256, sc.file);
		EXPECT_EQ(dumped(o.err, g.gl_pathv[i] + strlen(dir) + 1, &sc.wrapped[sc.file]),
			  sc.samples) TH_LOG("%s", g.gl_pathv[i]);
		nr_wrapped += sc.wrapped[sc.file];
		/* The stock kernel's own count of what a pause dropped. */
		kernel_lost += pevt_data__stats(d)->total_lost;
		pevt_data__delete(d);
		/* perf script: count and silence, on the first files. */
		if (full || (!sc.file && (pevt || !debug))) {
			struct out p;

			run(&p, "perf script -i %s -F tid,time", g.gl_pathv[i]);
			EXPECT_EQ(0, p.status);
			EXPECT_EQ(sc.samples, count_lines(p.out)) TH_LOG("%s", g.gl_pathv[i]);
			EXPECT_TRUE(perf_quiet(p.err));
			out_free(&p);
		}
		sc.file++;
	}
	globfree(&g);
	/* One boundary at least (a starved recorder may take few snapshots). */
	ASSERT_LE(2, sc.file) TH_LOG("too few snapshots to compare");

	/* Per event: counts in order; a gap is a loss, between or inside files. */
	qsort(sc.v, sc.n, sizeof(*sc.v), cmp_seq);
	for (i = 0; i < sc.n; i++) {
		struct seq *p = i ? &sc.v[i - 1] : NULL, *c = &sc.v[i];

		if (!p || p->id != c->id) {
			before += c->value - 1;
			continue;
		}
		if (c->value == p->value)
			dups++;
		else if (p->file != c->file && sc.wrapped[c->file])
			overwritten += c->value - p->value - 1;	/* not the switch's */
		else if (p->file != c->file)
			between += c->value - p->value - 1;
		else
			inside += c->value - p->value - 1;
		if (c->value > p->value + 1 && shown++ < 8)
			ksft_print_msg("%s: id %llu: %llu (file %d) -> %llu (file %d)\n", backend,
				       (unsigned long long)c->id, (unsigned long long)p->value,
				       p->file, (unsigned long long)c->value, c->file);
	}
	/*
	 * A stock gap inside one file is a pause's loss too: the record a
	 * writer was publishing when its buffer was paused lands in the next
	 * snapshot, with the loss behind it.
	 */
	ksft_print_msg("%s: %d snapshots, %zu samples; lost around snapshots %lld (%lld between "
		       "files, %lld inside one), %lld overwritten (%d buffers wrapped), %lld before "
		       "the first; %lld twice; LOST records say %llu\n", backend, sc.file, sc.n,
		       between + inside, between, inside, overwritten, nr_wrapped, before, dups,
		       (unsigned long long)kernel_lost);
	if (pevt) {
		EXPECT_EQ(0, dups);
		EXPECT_EQ(0, between);
		EXPECT_EQ(0, overwritten);
		EXPECT_EQ(0, inside);
		EXPECT_EQ(0, before);
		EXPECT_EQ(0, nr_wrapped);
	}
	free(sc.v);
	out_free(&o);
}

FIXTURE(rec) {
	int unused;
};

FIXTURE_SETUP(rec)
{
}

FIXTURE_TEARDOWN(rec)
{
}

/* A perf run takes about a minute on the debug kernel. */
TEST_F_TIMEOUT(rec, snapshots_stock, 300)
{
	record_snapshots(_metadata, "stock");
}

TEST_F_TIMEOUT(rec, snapshots_pevt, 300)
{
	if (access(PEVT_DEVICE_PATH, F_OK))
		SKIP(return, "no %s (pevt.ko not loaded)", PEVT_DEVICE_PATH);
	record_snapshots(_metadata, "pevt");
}

TEST_HARNESS_MAIN
