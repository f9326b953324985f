// SPDX-License-Identifier: GPL-2.0
/*
 * ABI details of issue 13 (items 11 and 12), each compared with the stock
 * perf_event_open(2) on the same input where one exists:
 *
 *  - side-band probes are registered only after the permission check;
 *  - a buffer mapping is not copied into a fork()ed child (VM_DONTCOPY);
 *  - vPMU groups that can never be scheduled are refused (EINVAL);
 *  - a group's read size is bounded like perf_event_validate_size()
 *    (E2BIG), whatever max_group_events says, so header.size never wraps;
 *  - closing 256 buffered per-CPU sampling fds costs about what it costs
 *    with the stock syscall (no grace period per close);
 *  - the control page's offset/time_enabled/time_running follow the
 *    event (a reader computes the count from the page like perf's mmap
 *    read path);
 *  - FORK/EXIT records and sample TIDs carry pids in the opener's pid
 *    namespace, and ptid as perf fills it;
 *  - the 32-bit compat ioctls (PERF_EVENT_IOC_ID) work.
 *
 * Leaves pevt loaded, as the runner expects.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"
#include "live_stats.h"

#define PARAM_DIR	"/sys/module/pevt/parameters/"
#define RF_TIMES	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

enum backend { STOCK, PEVT, NR_BACKENDS };
static const char *const bname[NR_BACKENDS] = { "stock", "pevt" };

/* Open through either backend; fd or -errno. */
static int ev_open(enum backend b, struct perf_event_attr *attr, pid_t pid,
		   int cpu, int group)
{
	static int dev = -1;
	int fd;

	if (b == STOCK) {
		fd = sys_perf_event_open(attr, pid, cpu, group,
					 PERF_FLAG_FD_CLOEXEC);
	} else {
		if (dev < 0)
			dev = pevt_dev_open();
		fd = pevt_open(dev, attr, pid, cpu, group, PEVT_OPEN_FD_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

static void attr_sw(struct perf_event_attr *attr, __u64 config, __u64 period)
{
	pevt_attr_sampling(attr, config, period);
	attr->exclude_kernel = 1;
}

static int param_set(const char *name, long val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	snprintf(buf, sizeof(buf), "%ld\n", val);
	return write_str(path, buf);
}

static long param_get(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return read_long(path);
}

/*
 * The two tests that open hundreds of events take minutes on the debug
 * kernel (KASAN, lockdep, kmemleak) under TCG: a longer harness timeout,
 * and fewer fds to close there.
 */
FIXTURE(many) {};
FIXTURE_SETUP(many) {}
FIXTURE_TEARDOWN(many) {}
#define MANY_TIMEOUT	300

static int on_debug_kernel(void)
{
	const char *k = getenv("PEVT_KERNEL");

	return k && !strcmp(k, "debug");
}

static __u64 page_size(void)
{
	return (__u64)sysconf(_SC_PAGESIZE);
}

/* ---- VM_DONTCOPY ---------------------------------------------------- */

/*
 * A child fork()ed while the buffer is mapped does not get the mapping
 * (perf sets VM_DONTCOPY): it can neither read the buffer nor keep the
 * event and its locked-memory charge alive after the parent let go.
 */
TEST(fork_does_not_copy_buffer)
{
	struct perf_event_attr attr;
	size_t len = 2 * page_size();

	attr_sw(&attr, PERF_COUNT_SW_TASK_CLOCK, 1000000);
	attr.disabled = 1;
	for (int b = 0; b < NR_BACKENDS; b++) {
		int fd = ev_open(b, &attr, 0, -1, -1), go[2], ready[2], status;
		struct live_stats s;
		char c;
		void *p;
		pid_t pid;

		ASSERT_LE(0, fd) TH_LOG("%s: %s", bname[b], strerror(-fd));
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(0, pipe(go));
		ASSERT_EQ(0, pipe(ready));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			unsigned char vec[2];
			/* ENOMEM: not mapped in the child. */
			int mapped = !mincore(p, len, vec);

			/* Only a copied mapping may keep the event now. */
			close(fd);
			close(go[1]);
			if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) < 0)
				_exit(12);
			_exit(mapped ? 1 : 0);
		}
		close(go[0]);
		close(ready[1]);
		ASSERT_EQ(1, read(ready[0], &c, 1));
		close(ready[0]);
		munmap(p, len);
		close(fd);
		/* The child still lives: nothing of pevt's may be left. */
		if (b == PEVT) {
			int r = live_stats_wait_zero(&s, 3000);

			EXPECT_EQ(0, r) TH_LOG("pevt: child holds events %ld buffers %ld",
					       s.events, s.buffers);
		}
		ASSERT_EQ(1, write(go[1], "x", 1));
		close(go[1]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(0, WEXITSTATUS(status))
			TH_LOG("%s: the buffer is mapped in the fork()ed child", bname[b]);
	}
}

/* ---- groups that can never be scheduled ---------------------------- */

static void attr_vpmu(struct perf_event_attr *attr, __u64 mask)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = vpmu_type();
	attr->config = 0;		/* VPMU_SRC_CPU_NS */
	attr->config1 = mask;
	attr->disabled = 1;
}

/* Open a group of n events with the given masks; members opened, *err. */
static int open_group(enum backend b, const __u64 *masks, int n, int *fds,
		      int *err)
{
	struct perf_event_attr attr;
	int i;

	*err = 0;
	for (i = 0; i < n; i++) {
		attr_vpmu(&attr, masks[i]);
		fds[i] = ev_open(b, &attr, 0, -1, i ? fds[0] : -1);
		if (fds[i] < 0) {
			*err = -fds[i];
			break;
		}
	}
	return i;
}

TEST(never_schedulable_groups_refused)
{
	long slots = param_get("nr_counters");
	__u64 masks[66];
	int fds[66], n[NR_BACKENDS], err[NR_BACKENDS];
	static const struct {
		const char *what;
		__u64 masks[3];
		int n;
	} cases[] = {
		{ "two events, both only slot 0", { 0x1, 0x1 }, 2 },
		{ "slot 0 or 1, then only slot 0", { 0x3, 0x1 }, 2 },
		{ "only slot 1, 0 or 1, only slot 0", { 0x2, 0x3, 0x1 }, 3 },
	};

	ASSERT_LT(0, vpmu_type());
	ASSERT_LE(2, slots);
	ASSERT_GE(64, slots);
	/* One more member than there are slots. */
	for (int i = 0; i <= slots; i++)
		masks[i] = 0;
	for (int b = 0; b < NR_BACKENDS; b++) {
		n[b] = open_group(b, masks, slots + 1, fds, &err[b]);
		for (int i = 0; i < n[b]; i++)
			close(fds[i]);
	}
	TH_LOG("%ld slots: stock opened %d of %ld (%s), pevt %d (%s)", slots,
	       n[STOCK], slots + 1, strerror(err[STOCK]), n[PEVT], strerror(err[PEVT]));
	EXPECT_EQ(slots, n[STOCK]);
	EXPECT_EQ(EINVAL, err[STOCK]);
	EXPECT_EQ(n[STOCK], n[PEVT]);
	EXPECT_EQ(err[STOCK], err[PEVT]);

	for (unsigned int c = 0; c < ARRAY_SIZE(cases); c++) {
		for (int b = 0; b < NR_BACKENDS; b++) {
			n[b] = open_group(b, cases[c].masks, cases[c].n, fds, &err[b]);
			for (int i = 0; i < n[b]; i++)
				close(fds[i]);
		}
		TH_LOG("%s: stock %d (%s), pevt %d (%s)", cases[c].what,
		       n[STOCK], strerror(err[STOCK]), n[PEVT], strerror(err[PEVT]));
		EXPECT_EQ(n[STOCK], n[PEVT]);
		EXPECT_EQ(err[STOCK], err[PEVT]);
	}
}

/* ---- read size of a group ------------------------------------------ */

#define BIG_GROUP	1200

/*
 * With max_group_events raised above what a record can describe, the
 * group is still refused where perf refuses it: at a 16 KiB read size
 * (perf_event_validate_size(), E2BIG), so a PERF_SAMPLE_READ record of
 * the group fits in header.size.
 */
TEST_F_TIMEOUT(many, group_read_size_bounded, MANY_TIMEOUT)
{
	long saved = param_get("max_group_events");
	struct rlimit rl = { 4 * BIG_GROUP, 4 * BIG_GROUP };
	struct perf_event_attr attr;
	int n[NR_BACKENDS], err[NR_BACKENDS];
	static int fds[BIG_GROUP];

	ASSERT_LT(0, saved);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ASSERT_EQ(0, param_set("max_group_events", 4096));
	for (int b = 0; b < NR_BACKENDS; b++) {
		err[b] = 0;
		for (n[b] = 0; n[b] < BIG_GROUP; n[b]++) {
			attr_sw(&attr, PERF_COUNT_SW_TASK_CLOCK, 0);
			attr.disabled = 1;
			attr.read_format = RF_TIMES | PERF_FORMAT_ID |
					   PERF_FORMAT_LOST | PERF_FORMAT_GROUP;
			fds[n[b]] = ev_open(b, &attr, 0, -1, n[b] ? fds[0] : -1);
			if (fds[n[b]] < 0) {
				err[b] = -fds[n[b]];
				break;
			}
		}
		for (int i = 0; i < n[b]; i++)
			close(fds[i]);
	}
	param_set("max_group_events", saved);
	TH_LOG("group of 24-byte entries: stock %d members (%s), pevt %d (%s)",
	       n[STOCK], strerror(err[STOCK]), n[PEVT], strerror(err[PEVT]));
	EXPECT_EQ(n[STOCK], n[PEVT]);
	EXPECT_EQ(err[STOCK], err[PEVT]);
	EXPECT_GT(BIG_GROUP, n[PEVT]);
}

/* ---- close cost ---------------------------------------------------- */

#define CLOSE_FDS	256
#define CLOSE_FDS_DEBUG	64

/*
 * Open @n buffered per-CPU sampling events (each mapped once, then
 * unmapped), close them all; ns for the closes, or 0 on error.
 */
static __u64 close_cost(enum backend b, struct perf_event_attr *attr, int n)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), fds[CLOSE_FDS];
	size_t len = 2 * page_size();
	__u64 t0;

	for (int i = 0; i < n; i++) {
		void *p;

		fds[i] = ev_open(b, attr, -1, i % ncpu, -1);
		if (fds[i] < 0) {
			fprintf(stderr, "# %s: open %d: %s\n", bname[b], i,
				strerror(-fds[i]));
			while (i--)
				close(fds[i]);
			return 0;
		}
		p = mmap(NULL, len, PROT_READ, MAP_SHARED, fds[i], 0);
		if (p != MAP_FAILED)
			munmap(p, len);
	}
	t0 = ts_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return ts_ns(CLOCK_MONOTONIC) - t0;
}

/*
 * Bound relative to stock, loose enough for a loaded TCG host: a grace
 * period per close (tens of ms under TCG) gives seconds for 256 fds.
 */
#define CLOSE_BOUND(stock)	(4 * (stock) + 200 * NSEC_PER_MSEC)

TEST_F_TIMEOUT(many, close_is_cheap, MANY_TIMEOUT)
{
	struct perf_event_attr attr;
	struct rlimit rl = { 4 * CLOSE_FDS, 4 * CLOSE_FDS };
	int n = on_debug_kernel() ? CLOSE_FDS_DEBUG : CLOSE_FDS;
	__u64 t[NR_BACKENDS];
	int tp = sys_enter_id();

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ASSERT_LT(0, tp) TH_LOG("no raw_syscalls:sys_enter id in tracefs");
	/* cpu-clock: one grace period per close before; sys_enter: two. */
	for (int kind = 0; kind < 2; kind++) {
		attr_sw(&attr, PERF_COUNT_SW_CPU_CLOCK, 10 * NSEC_PER_MSEC);
		attr.disabled = 1;
		if (kind) {
			attr.type = PERF_TYPE_TRACEPOINT;
			attr.config = tp;
			attr.sample_period = 1000;
		}
		for (int b = 0; b < NR_BACKENDS; b++) {
			t[b] = close_cost(b, &attr, n);
			ASSERT_NE(0, t[b]);
		}
		TH_LOG("close %d %s sampling fds: stock %.1f ms, pevt %.1f ms",
		       n, kind ? "sys_enter" : "cpu-clock",
		       t[STOCK] / 1e6, t[PEVT] / 1e6);
		EXPECT_GE(CLOSE_BOUND(t[STOCK]), t[PEVT]);
	}
}

/* ---- the control page ---------------------------------------------- */

struct page_read {
	__u64 count, enabled, running;
	__u32 index;
};

/*
 * perf's mmap read path (tools/lib/perf/mmap.c perf_mmap__read_self()),
 * for an event without a user-readable counter (index 0): the count is
 * ->offset, the times are ->time_enabled/running, all read under ->lock.
 */
static void page_read(volatile struct perf_event_mmap_page *pc,
		      struct page_read *r)
{
	__u32 seq;

	do {
		seq = pc->lock;
		__sync_synchronize();
		r->enabled = pc->time_enabled;
		r->running = pc->time_running;
		r->index = pc->index;
		r->count = pc->offset;
		__sync_synchronize();
	} while (pc->lock != seq || (seq & 1));
}

/*
 * The child: on a byte from @in burn 50 ms and ack on @out, then block in
 * read() until poked (a certain context switch out and back in: the page
 * is updated at that schedule in) and ack again.
 */
static void userpage_child(int in, int out)
{
	char c;

	while (read(in, &c, 1) == 1) {
		burn_cpu_ns(50 * NSEC_PER_MSEC);
		if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1 ||
		    write(out, &c, 1) != 1)
			break;
	}
	_exit(0);
}

/* One round of the child; returns when it blocks again (count frozen). */
static int child_round(int to, int from)
{
	char c = 'x';

	if (write(to, &c, 1) != 1 || read(from, &c, 1) != 1)
		return -1;
	sleep_ns(10 * NSEC_PER_MSEC);	/* blocked in read() by now */
	if (write(to, &c, 1) != 1 || read(from, &c, 1) != 1)
		return -1;
	sleep_ns(20 * NSEC_PER_MSEC);	/* back in read() */
	return 0;
}

TEST(control_page_counts)
{
	for (int b = 0; b < NR_BACKENDS; b++) {
		struct perf_event_attr attr;
		struct page_read pg, pg1;
		struct read_one rd;
		int to[2], from[2], fd, status;
		void *p;
		pid_t pid;

		ASSERT_EQ(0, pipe(to));
		ASSERT_EQ(0, pipe(from));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(to[1]);
			close(from[0]);
			userpage_child(to[0], from[1]);
		}
		close(to[0]);
		close(from[1]);
		attr_sw(&attr, PERF_COUNT_SW_TASK_CLOCK, 0);
		attr.read_format = RF_TIMES;
		fd = ev_open(b, &attr, pid, -1, -1);
		ASSERT_LE(0, fd) TH_LOG("%s: %s", bname[b], strerror(-fd));
		ASSERT_EQ(0, child_round(to[1], from[0]));

		/* Mapped while the child sleeps: the page equals read(). */
		p = mmap(NULL, 2 * page_size(), PROT_READ, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, p);
		page_read(p, &pg1);
		ASSERT_EQ(24, read_one(fd, &rd));
		TH_LOG("%s: mapped: page %llu/%llu/%llu read %llu/%llu/%llu", bname[b],
		       pg1.count, pg1.enabled, pg1.running, rd.value, rd.enabled,
		       rd.running);
		EXPECT_EQ(0, pg1.index);
		EXPECT_LT(40 * NSEC_PER_MSEC, rd.value);
		EXPECT_EQ(rd.value, pg1.count);
		EXPECT_EQ(rd.enabled, pg1.enabled);
		EXPECT_EQ(rd.running, pg1.running);

		/* One more round: updated when the child was scheduled in
		 * after the poke, so at least the 50 ms burnt before it. */
		ASSERT_EQ(0, child_round(to[1], from[0]));
		page_read(p, &pg);
		ASSERT_EQ(24, read_one(fd, &rd));
		TH_LOG("%s: round 2: page %llu/%llu/%llu read %llu/%llu/%llu", bname[b],
		       pg.count, pg.enabled, pg.running, rd.value, rd.enabled,
		       rd.running);
		EXPECT_LE(pg1.count + 40 * NSEC_PER_MSEC, pg.count);
		EXPECT_GE(rd.value, pg.count);
		EXPECT_LE(pg1.enabled + 40 * NSEC_PER_MSEC, pg.enabled);
		EXPECT_GE(rd.enabled, pg.enabled);
		EXPECT_LE(pg1.running + 40 * NSEC_PER_MSEC, pg.running);
		EXPECT_GE(rd.running, pg.running);

		/* RESET shows on the page at once. */
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_RESET, 0));
		page_read(p, &pg);
		EXPECT_EQ(0, pg.count);

		munmap(p, 2 * page_size());
		close(fd);
		close(to[1]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		close(from[0]);
	}
}

/* ---- pid namespaces, FORK/EXIT records ----------------------------- */

#define NS_PAGES	64

struct task_rec {
	__u32 type, pid, ppid, tid, ptid;
};

struct ns_result {
	struct task_rec rec[256];
	int nr_rec;
	int samples_of_g;	/* samples whose pid is G's (opener's view) */
};

/* Collect FORK/EXIT records and count samples of @g from one buffer. */
static void ns_collect(struct perf_event_mmap_page *up, pid_t g,
		       struct ns_result *r)
{
	__u64 head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
	__u64 size = up->data_size, pos = up->data_tail;
	char *data = (char *)up + up->data_offset;
	union {
		struct perf_event_header h;
		char b[256];
	} rec;

	if (head - pos > size)
		pos = head - size;
	while (pos < head) {
		__u64 off = pos & (size - 1);
		__u32 *w;

		memcpy(&rec.h, data + off, sizeof(rec.h));
		if (rec.h.size < sizeof(rec.h) || rec.h.size > sizeof(rec))
			break;
		for (unsigned int i = 0; i < rec.h.size; i++)
			rec.b[i] = data[(off + i) & (size - 1)];
		w = (__u32 *)(rec.b + sizeof(rec.h));
		if (rec.h.type == PERF_RECORD_SAMPLE && w[0] == (__u32)g)
			r->samples_of_g++;
		if ((rec.h.type == PERF_RECORD_FORK || rec.h.type == PERF_RECORD_EXIT) &&
		    r->nr_rec < (int)ARRAY_SIZE(r->rec)) {
			struct task_rec *t = &r->rec[r->nr_rec++];

			t->type = rec.h.type;
			t->pid = w[0];
			t->ppid = w[1];
			t->tid = w[2];
			t->ptid = w[3];
		}
		pos += rec.h.size;
	}
}

static int rec_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct task_rec));
}

/* Keep only records about G and its descendants: pid or ppid is G. */
static void ns_filter(struct ns_result *r, pid_t g)
{
	int n = 0;

	for (int i = 0; i < r->nr_rec; i++)
		if (r->rec[i].pid == (__u32)g || r->rec[i].ppid == (__u32)g)
			r->rec[n++] = r->rec[i];
	r->nr_rec = n;
	qsort(r->rec, n, sizeof(r->rec[0]), rec_cmp);
}

static void *ns_thread(void *arg)
{
	pid_t h = fork();

	if (!h)
		_exit(0);
	waitpid(h, NULL, 0);
	return NULL;
}

/*
 * G: pid 1 of a new pid namespace.  A second thread forks H, which exits
 * (FORK with ptid = that thread, EXIT with ptid = perf's choice); then G
 * burns CPU for the samplers.
 */
static void ns_g(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, ns_thread, NULL))
		_exit(20);
	pthread_join(t, NULL);
	burn_cpu_ns(40 * NSEC_PER_MSEC);
	_exit(0);
}

TEST(pid_namespace_and_task_records)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t len = (NS_PAGES + 1) * page_size();
	static struct ns_result res[NR_BACKENDS];
	int fds[NR_BACKENDS][8], pp[2], status;
	void *maps[NR_BACKENDS][8];
	struct perf_event_attr attr;
	int ns[2];
	pid_t c, g;

	ASSERT_GE(8, ncpu);
	attr_sw(&attr, PERF_COUNT_SW_CPU_CLOCK, NSEC_PER_MSEC);
	attr.exclude_kernel = 0;
	attr.sample_id_all = 1;
	attr.task = 1;
	for (int b = 0; b < NR_BACKENDS; b++)
		for (int cpu = 0; cpu < ncpu; cpu++) {
			fds[b][cpu] = ev_open(b, &attr, -1, cpu, -1);
			ASSERT_LE(0, fds[b][cpu]) TH_LOG("%s cpu %d: %s", bname[b], cpu,
							 strerror(-fds[b][cpu]));
			maps[b][cpu] = mmap(NULL, len, PROT_READ | PROT_WRITE,
					    MAP_SHARED, fds[b][cpu], 0);
			ASSERT_NE(MAP_FAILED, maps[b][cpu]);
		}

	/* C: unshares the pid namespace; its child G is pid 1 there. */
	ASSERT_EQ(0, pipe(pp));
	c = fork();
	ASSERT_LE(0, c);
	if (!c) {
		/* EINVAL: a kernel without pid namespaces (the debug one). */
		int msg[2] = { 0, !unshare(CLONE_NEWPID) };

		if (!msg[1] && errno != EINVAL)
			_exit(30);
		g = fork();
		if (!g)
			ns_g();
		msg[0] = g;
		if (write(pp[1], msg, sizeof(msg)) != sizeof(msg))
			_exit(31);
		waitpid(g, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 32);
	}
	ASSERT_EQ(sizeof(ns), read(pp[0], ns, sizeof(ns)));
	g = ns[0];
	if (!ns[1])
		TH_LOG("kernel without pid namespaces: records compared without one");
	ASSERT_EQ(c, waitpid(c, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));

	for (int b = 0; b < NR_BACKENDS; b++) {
		memset(&res[b], 0, sizeof(res[b]));
		for (int cpu = 0; cpu < ncpu; cpu++) {
			ioctl(fds[b][cpu], PERF_EVENT_IOC_DISABLE, 0);
			ns_collect(maps[b][cpu], g, &res[b]);
			munmap(maps[b][cpu], len);
			close(fds[b][cpu]);
		}
		ns_filter(&res[b], g);
		TH_LOG("%s: %d samples of G (pid %d), %d FORK/EXIT records about G",
		       bname[b], res[b].samples_of_g, g, res[b].nr_rec);
		for (int i = 0; i < res[b].nr_rec; i++) {
			struct task_rec *t = &res[b].rec[i];

			TH_LOG("  %s %s pid %u ppid %u tid %u ptid %u", bname[b],
			       t->type == PERF_RECORD_FORK ? "FORK" : "EXIT",
			       t->pid, t->ppid, t->tid, t->ptid);
		}
	}
	/* G forked a thread and H, and G, the thread and H exited. */
	EXPECT_LE(5, res[STOCK].nr_rec);
	EXPECT_LT(0, res[STOCK].samples_of_g);
	EXPECT_LT(0, res[PEVT].samples_of_g);
	ASSERT_EQ(res[STOCK].nr_rec, res[PEVT].nr_rec);
	EXPECT_EQ(0, memcmp(res[STOCK].rec, res[PEVT].rec,
			    res[STOCK].nr_rec * sizeof(struct task_rec)));
}

/* ---- 32-bit compat ioctls ------------------------------------------ */

#define NR32_CLOSE	6
#define NR32_IOCTL	54

/* A system call through the 32-bit entry (int $0x80): -errno or result. */
static long sys32(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "a"(nr), "b"(a), "c"(b), "d"(c)
		     : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

/* 0 when the kernel has IA32 emulation (int $0x80 works), else -1. */
static int have_ia32(void)
{
	int status;
	pid_t pid = fork();

	if (!pid)
		_exit(sys32(NR32_CLOSE, -1, 0, 0) == -EBADF ? 0 : 1);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

TEST(compat_ioctls)
{
	/* i386's PERF_EVENT_IOC_ID: the argument is a 4-byte pointer. */
	const unsigned long id32 = _IOC(_IOC_READ, '$', 7, 4);
	struct perf_event_attr attr;
	__u64 *id;

	if (have_ia32())
		SKIP(return, "kernel without IA32 emulation: int $0x80 not available");
	/* 32-bit pointers: below 4 GiB. */
	id = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	ASSERT_NE(MAP_FAILED, id);
	attr_sw(&attr, PERF_COUNT_SW_TASK_CLOCK, 0);
	attr.disabled = 1;
	for (int b = 0; b < NR_BACKENDS; b++) {
		int fd = ev_open(b, &attr, 0, -1, -1);
		__u64 want = 0;
		long r[4];

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ID, &want));
		*id = ~0ULL;
		r[0] = sys32(NR32_IOCTL, fd, id32, (long)(uintptr_t)id);
		r[1] = sys32(NR32_IOCTL, fd, PERF_EVENT_IOC_ENABLE, 0);
		r[2] = sys32(NR32_IOCTL, fd, PERF_EVENT_IOC_DISABLE, 0);
		r[3] = sys32(NR32_IOCTL, fd, PERF_EVENT_IOC_RESET, 0);
		TH_LOG("%s: compat ID %ld (%s) id %llu want %llu, ENABLE %ld, DISABLE %ld, RESET %ld",
		       bname[b], r[0], r[0] ? strerror(-r[0]) : "ok", *id, want,
		       r[1], r[2], r[3]);
		EXPECT_EQ(0, r[0]);
		EXPECT_EQ(want, *id);
		EXPECT_EQ(0, r[1]);
		EXPECT_EQ(0, r[2]);
		EXPECT_EQ(0, r[3]);
		close(fd);
	}
	munmap(id, page_size());
}

TEST_HARNESS_MAIN
