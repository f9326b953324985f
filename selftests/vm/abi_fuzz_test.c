// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded random-ABI fuzzer for /dev/pevt (issue 7).
 *
 * Seeded random sequences of: PEVT_IOC_OPEN with mutated perf_event_attr
 * (type, config, sample_type, read_format, flag bits, periods, sizes
 * below/at/above the kernel's, tails zero or not) and mutated struct
 * pevt_open (size, flags, reserved, pointers), ioctls with random
 * commands and arguments on random fds, mmap with random sizes, offsets,
 * protections and flags, partial and full munmap, read with random
 * sizes, poll, write and close.
 *
 * Invariants checked on every call:
 *  - every failure is an errno from a fixed list (anything else: a bug);
 *  - an accepted open gives an fd whose read() returns a well-formed
 *    read_format layout (or 0 bytes: pinned group in error);
 *  - a non-zero attr byte beyond the kernel's struct is E2BIG;
 *  - an accepted mmap has perf's shape (shared, offset 0, 1 + 2^n pages)
 *    and a control page with data_offset = page size;
 * and after the run, with everything closed: the module's live-object
 * counters are 0 and the module unloads (then is loaded again).
 *
 * FUZZ_SEED=n repeats a run; FUZZ_CALLS=n sets its length (default 30000,
 * 8000 on the debug kernel).  Prints the seed, calls made and a histogram
 * of the errnos seen per call kind.
 */
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"
#include "live_stats.h"

#define MAX_FDS		32
#define MAX_MAPS	16
#define ATTR_BUF	(3 * 4096)
/* The largest perf_event_attr any test kernel knows (VER8, 6.3+: 136). */
#define KATTR_MAX	136

enum kind { K_OPEN, K_IOCTL, K_MMAP, K_MUNMAP, K_READ, K_CLOSE, K_POLL,
	    K_WRITE, NR_KINDS };
static const char *const kind_name[NR_KINDS] = {
	"open", "ioctl", "mmap", "munmap", "read", "close", "poll", "write",
};

static const int known_errnos[] = {
	EINVAL, E2BIG, EOPNOTSUPP, ENOENT, ESRCH, EBADF, EACCES, EPERM,
	ENODEV, ENOTTY, EFAULT, ENOSPC, EBUSY, EMFILE, ENOMEM, EOVERFLOW,
};
#define NR_KNOWN (int)(sizeof(known_errnos) / sizeof(known_errnos[0]))

struct map { void *p; size_t len; };

struct fz {
	__u64 seed;
	int dev;
	int null;
	int fds[MAX_FDS];
	__u64 rf[MAX_FDS];	/* read_format of each fd */
	int nr;
	struct map maps[MAX_MAPS];
	int nr_maps;
	pid_t child;
	int nr_cpus, vtype, tpid;
	unsigned long calls, ok[NR_KINDS];
	unsigned long hist[NR_KINDS][NR_KNOWN];
	char err[512];
	unsigned char *abuf;
};

static __u64 rnd(struct fz *f)
{
	/* xorshift64* */
	f->seed ^= f->seed >> 12;
	f->seed ^= f->seed << 25;
	f->seed ^= f->seed >> 27;
	return f->seed * 2685821657736338717ULL;
}

static __u64 pick(struct fz *f, const __u64 *v, int n)
{
	return v[rnd(f) % n];
}
#define PICK(f, ...) ({ const __u64 _v[] = { __VA_ARGS__ }; \
			pick(f, _v, sizeof(_v) / sizeof(_v[0])); })

/* Record the outcome of a call; -1 if the errno is not a known one. */
static int outcome(struct fz *f, enum kind k, int failed, const char *what)
{
	int e = errno, i;

	f->calls++;
	if (!failed) {
		f->ok[k]++;
		return 0;
	}
	for (i = 0; i < NR_KNOWN; i++) {
		if (known_errnos[i] == e) {
			f->hist[k][i]++;
			return 0;
		}
	}
	snprintf(f->err, sizeof(f->err), "call %lu %s (%s): unexpected errno %d (%s)",
		 f->calls, kind_name[k], what, e, strerror(e));
	return -1;
}

static int rand_fd(struct fz *f)
{
	switch (rnd(f) % 8) {
	case 0:
		return f->dev;
	case 1:
		/* not pevt: /dev/null (never blocks), not open, invalid */
		return PICK(f, f->null, 9999, -1);
	default:
		return f->nr ? f->fds[rnd(f) % f->nr] : f->dev;
	}
}

/* A plausible attr of one of pevt's event kinds, to mutate from. */
static void base_attr(struct fz *f, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->read_format = rnd(f) & 0x1f;
	a->disabled = rnd(f) & 1;
	switch (rnd(f) % 5) {
	case 0:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = rnd(f) % 12;
		break;
	case 1:
		a->type = f->vtype > 0 ? f->vtype : PERF_TYPE_SOFTWARE;
		a->config = rnd(f) % 4;
		a->config1 = PICK(f, 0, 0, 1, 3, 0xf0, ~0ULL);
		a->pinned = !(rnd(f) % 6);
		break;
	case 2:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = rnd(f) & 1;	/* cpu-clock / task-clock */
		a->sample_period = PICK(f, 1, 1000, 100000, 1000000, 0);
		a->freq = !(rnd(f) % 4);
		if (a->freq)
			a->sample_freq = PICK(f, 1, 100, 4000, 1000000000, ~0ULL);
		a->sample_type = rnd(f) & 0x3ff;
		a->wakeup_events = rnd(f) % 4;
		a->sample_id_all = rnd(f) & 1;
		a->comm = !(rnd(f) % 4);
		a->task = !(rnd(f) % 4);
		break;
	case 3:
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = rnd(f) % 4 ? f->tpid : rnd(f) % 2000;
		a->sample_period = PICK(f, 0, 1, 3, 100);
		a->sample_type = rnd(f) & 0x3ff;
		break;
	case 4:
		a->type = rnd(f) % 12;
		a->config = rnd(f);
		break;
	}
	if (rnd(f) & 1)
		a->sample_type |= PEVT_SAMPLE_SIZE_AT_END;
	a->watermark = !(rnd(f) % 8);
	if (a->watermark)
		a->wakeup_watermark = rnd(f) % 20000;
}

static void mutate_attr(struct fz *f, struct perf_event_attr *a)
{
	__u64 *flags = (__u64 *)((char *)a + offsetof(struct perf_event_attr,
						      read_format) + 8);
	int n = rnd(f) % 4;

	while (n--) {
		switch (rnd(f) % 9) {
		case 0: a->type = (__u32)rnd(f); break;
		case 1: a->config = rnd(f); break;
		case 2: a->sample_type ^= 1ULL << (rnd(f) % 64); break;
		case 3: a->read_format ^= 1ULL << (rnd(f) % 64); break;
		case 4: *flags ^= 1ULL << (rnd(f) % 64); break;
		case 5: *flags = rnd(f); break;
		case 6: a->sample_period = rnd(f) >> (rnd(f) % 64); break;
		case 7: a->bp_type = rnd(f); a->config1 = rnd(f); a->config2 = rnd(f); break;
		case 8: a->wakeup_events = rnd(f); a->aux_watermark = rnd(f) & 1; break;
		}
	}
}

/* Expected size of a read() for read_format @rf (@n u64s is what came). */
static int read_ok(__u64 rf, ssize_t n)
{
	ssize_t times = 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			     !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING));
	ssize_t entry = 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));

	if (n == 0)
		return 1;	/* pinned group in error */
	if (!(rf & PERF_FORMAT_GROUP))
		return n == times + entry;
	return n >= 8 + times + entry && (n - 8 - times) % entry == 0;
}

static int do_open(struct fz *f)
{
	struct perf_event_attr *a = (void *)f->abuf;
	struct pevt_open op;
	unsigned char opbuf[4200];
	__u32 size;
	int nonzero_tail = 0, fd, cpu, group, kernel_err = 0;
	pid_t pid;
	__u64 buf[512];
	ssize_t n;

	memset(f->abuf, 0, ATTR_BUF);
	base_attr(f, a);
	if (!(rnd(f) % 3))
		mutate_attr(f, a);
	size = rnd(f) % 2 ? sizeof(*a) : PICK(f, 0, 64, 72, 80, 96,
		    104, 112, 120, 128, 136, 144, 160, 4096, 4097, 8192,
		    rnd(f) % 300, 8);
	a->size = size;
	if (size > KATTR_MAX && !(rnd(f) % 3)) {
		unsigned int off = KATTR_MAX + rnd(f) % (size - KATTR_MAX);

		if (off < ATTR_BUF) {
			f->abuf[off] = 1 + rnd(f) % 255;
			nonzero_tail = 1;
		}
	}
	pid = PICK(f, 0, 0, 0, 0, -1, -1, getpid(), f->child, f->child, 1,
		   999999, -2);
	cpu = pid == -1 ? (int)(rnd(f) % f->nr_cpus) : -1;
	if (!(rnd(f) % 8))
		cpu = PICK(f, -1, 0, 1, f->nr_cpus, -2, 4096);
	group = rnd(f) % 3 ? -1 : rand_fd(f);

	memset(&op, 0, sizeof(op));
	op.size = sizeof(op);
	op.flags = rnd(f) % 8 ? PEVT_OPEN_FD_CLOEXEC : (__u32)rnd(f);
	op.attr = rnd(f) % 32 ? (uintptr_t)a : PICK(f, 0, 0x1000, ~0ULL);
	op.pid = pid;
	op.cpu = cpu;
	op.group_fd = group;
	if (!(rnd(f) % 32))
		op.__reserved_0 = rnd(f);
	if (!(rnd(f) % 32))
		op.__reserved_1[rnd(f) % 4] = rnd(f);
	memset(opbuf, 0, sizeof(opbuf));
	memcpy(opbuf, &op, sizeof(op));
	switch (rnd(f) % 16) {
	case 0: ((struct pevt_open *)opbuf)->size = PICK(f, 0, 8, 56); break;
	case 1: ((struct pevt_open *)opbuf)->size = 72; break;
	case 2: ((struct pevt_open *)opbuf)->size = 72; opbuf[68] = 1; break;
	case 3: ((struct pevt_open *)opbuf)->size = 4097; break;
	}

	fd = ioctl(f->dev, PEVT_IOC_OPEN, opbuf);
	if (fd < 0)
		kernel_err = errno;
	if (outcome(f, K_OPEN, fd < 0, "PEVT_IOC_OPEN"))
		return -1;
	if (fd < 0) {
		errno = kernel_err;
		return 0;
	}
	if (nonzero_tail && size <= 4096 && op.attr == (uintptr_t)a) {
		snprintf(f->err, sizeof(f->err),
			 "open accepted attr size %u with a non-zero byte past %d",
			 size, KATTR_MAX);
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0 || !read_ok(a->read_format, n)) {
		snprintf(f->err, sizeof(f->err),
			 "read of a fresh event (type %u config %#llx rf %#llx): %zd (%s)",
			 a->type, (unsigned long long)a->config,
			 (unsigned long long)a->read_format, n,
			 n < 0 ? strerror(errno) : "bad size");
		close(fd);
		return -1;
	}
	if (f->nr == MAX_FDS) {
		close(fd);
		return 0;
	}
	f->rf[f->nr] = a->read_format;
	f->fds[f->nr++] = fd;
	return 0;
}

static int do_ioctl(struct fz *f)
{
	static __u64 scratch[64];
	unsigned int cmd;
	unsigned long arg;
	int fd = rand_fd(f);

	cmd = PICK(f, PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_DISABLE,
		   PERF_EVENT_IOC_RESET, PERF_EVENT_IOC_REFRESH,
		   PERF_EVENT_IOC_PERIOD, PERF_EVENT_IOC_SET_OUTPUT,
		   PERF_EVENT_IOC_SET_FILTER, PERF_EVENT_IOC_ID,
		   PERF_EVENT_IOC_SET_BPF, PERF_EVENT_IOC_PAUSE_OUTPUT,
		   PERF_EVENT_IOC_QUERY_BPF, PERF_EVENT_IOC_MODIFY_ATTRIBUTES,
		   PEVT_IOC_OPEN, 0);
	if (!cmd || !(rnd(f) % 8))	/* random command in perf's or pevt's space */
		cmd = _IOC(rnd(f) % 4, rnd(f) & 1 ? '$' : PEVT_IOC_MAGIC,
			   rnd(f) % 16, rnd(f) % 256);
	switch (rnd(f) % 6) {
	case 0: arg = 0; break;
	case 1: arg = PERF_IOC_FLAG_GROUP; break;
	case 2: arg = rand_fd(f); break;
	case 3:
		for (int i = 0; i < 64; i++)
			scratch[i] = rnd(f) % 4 ? 0 : rnd(f);
		arg = (uintptr_t)scratch;
		break;
	case 4: arg = PICK(f, 0x1000, ~0UL, 0xdead000000000000UL); break;
	default: arg = rnd(f); break;
	}
	if (cmd == PEVT_IOC_OPEN && arg == (uintptr_t)scratch)
		scratch[0] = rnd(f) % 200;	/* size */
	return outcome(f, K_IOCTL, ioctl(fd, cmd, arg) < 0, "ioctl");
}

static int do_mmap(struct fz *f)
{
	int fd = rand_fd(f), prot, flags, ps = getpagesize();
	unsigned long pages;
	off_t off;
	void *p;

	pages = PICK(f, 2, 2, 3, 5, 9, 17, 1 + (1UL << (rnd(f) % 11)), 0, 1, 4,
		     rnd(f) % 40, (1UL << 17) + 1);
	off = rnd(f) % 6 ? 0 : (off_t)(rnd(f) % 8) * ps;
	prot = PICK(f, PROT_READ, PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
		    PROT_WRITE, PROT_READ | PROT_EXEC, PROT_NONE);
	flags = rnd(f) % 5 ? MAP_SHARED : MAP_PRIVATE;
	p = mmap(NULL, pages * ps, prot, flags, fd, off);
	if (outcome(f, K_MMAP, p == MAP_FAILED, "mmap"))
		return -1;
	if (p == MAP_FAILED)
		return 0;
	if (fd == f->dev || off || flags != MAP_SHARED || pages < 2 ||
	    ((pages - 1) & (pages - 2))) {
		snprintf(f->err, sizeof(f->err),
			 "mmap accepted fd %d (dev %d) pages %lu off %lld flags %#x",
			 fd, f->dev, pages, (long long)off, flags);
		munmap(p, pages * ps);
		return -1;
	}
	if ((prot & PROT_READ) &&
	    ((struct perf_event_mmap_page *)p)->data_offset != (__u64)ps) {
		snprintf(f->err, sizeof(f->err), "control page data_offset %llu",
			 (unsigned long long)((struct perf_event_mmap_page *)p)->data_offset);
		return -1;
	}
	if (f->nr_maps == MAX_MAPS) {
		munmap(p, pages * ps);
		return 0;
	}
	f->maps[f->nr_maps].p = p;
	f->maps[f->nr_maps++].len = pages * ps;
	return 0;
}

static int do_munmap(struct fz *f)
{
	int i, ps = getpagesize(), ret;
	struct map *m;

	if (!f->nr_maps)
		return 0;
	i = rnd(f) % f->nr_maps;
	m = &f->maps[i];
	if (rnd(f) % 4 == 0 && m->len > (size_t)ps) {
		/* partial: refused (may_split), the mapping stays whole */
		ret = munmap((char *)m->p + ps * (rnd(f) & 1), ps);
		return outcome(f, K_MUNMAP, ret < 0, "partial munmap");
	}
	ret = munmap(m->p, m->len);
	if (outcome(f, K_MUNMAP, ret < 0, "munmap"))
		return -1;
	if (!ret)
		f->maps[i] = f->maps[--f->nr_maps];
	return 0;
}

static int do_read(struct fz *f)
{
	__u64 buf[512];
	int i = f->nr ? (int)(rnd(f) % f->nr) : -1;
	int fd = i >= 0 && rnd(f) % 4 ? f->fds[i] : rand_fd(f);
	size_t len = PICK(f, 0, 7, 8, 16, 24, 40, sizeof(buf));
	ssize_t n = read(fd, buf, len);

	if (outcome(f, K_READ, n < 0, "read"))
		return -1;
	if (n >= 0 && i >= 0 && fd == f->fds[i] && len == sizeof(buf) &&
	    !read_ok(f->rf[i], n)) {
		snprintf(f->err, sizeof(f->err), "read rf %#llx returned %zd",
			 (unsigned long long)f->rf[i], n);
		return -1;
	}
	return 0;
}

static int do_close(struct fz *f)
{
	int i;

	if (!f->nr)
		return 0;
	i = rnd(f) % f->nr;
	close(f->fds[i]);
	f->calls++;
	f->ok[K_CLOSE]++;
	f->fds[i] = f->fds[--f->nr];
	f->rf[i] = f->rf[f->nr];
	return 0;
}

/* Long runs (FUZZ_CALLS, STRESS_SECONDS) need more than the 30 s default. */
FIXTURE(run) {};
FIXTURE_SETUP(run) {}
FIXTURE_TEARDOWN(run) {}

TEST_F_TIMEOUT(run, abi_fuzz, 3600)
{
	const char *s_seed = getenv("FUZZ_SEED"), *s_calls = getenv("FUZZ_CALLS");
	const char *kern = getenv("PEVT_KERNEL");
	unsigned long calls, last_progress = 0;
	unsigned long long seed;
	struct live_stats st;
	struct fz *f;
	__u64 t0, t1;
	int i, k, status;

	f = calloc(1, sizeof(*f));
	ASSERT_NE(NULL, f);
	f->abuf = calloc(1, ATTR_BUF);
	ASSERT_NE(NULL, f->abuf);
	f->seed = s_seed ? strtoull(s_seed, NULL, 0) : ts_ns(CLOCK_REALTIME);
	if (!f->seed)
		f->seed = 1;
	seed = f->seed;
	calls = s_calls ? strtoul(s_calls, NULL, 0) :
		(kern && !strcmp(kern, "debug") ? 8000 : 30000);
	printf("# abi_fuzz: FUZZ_SEED=%llu FUZZ_CALLS=%lu\n",
	       (unsigned long long)f->seed, calls);
	fflush(stdout);

	if (!mod_loaded())
		ASSERT_EQ(0, mod_load());
	f->nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	f->vtype = vpmu_type();
	f->tpid = sys_enter_id();
	f->dev = pevt_dev_open();
	ASSERT_LE(0, f->dev);
	f->null = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, f->null);
	f->child = fork();
	ASSERT_LE(0, f->child);
	if (f->child == 0) {
		for (;;)
			burn_cpu_ns(NSEC_PER_MSEC), sleep_ns(NSEC_PER_MSEC);
	}

	t0 = ts_ns(CLOCK_MONOTONIC);
	while (f->calls < calls) {
		int r;

		switch (rnd(f) % 20) {
		case 0 ... 7:	r = do_open(f); break;
		case 8 ... 11:	r = do_ioctl(f); break;
		case 12 ... 13:	r = do_mmap(f); break;
		case 14:	r = do_munmap(f); break;
		case 15 ... 16:	r = do_read(f); break;
		case 17:	r = do_close(f); break;
		case 18: {
			struct pollfd p = { .fd = rand_fd(f), .events = POLLIN | POLLOUT };

			r = outcome(f, K_POLL, poll(&p, 1, 0) < 0, "poll");
			break;
		}
		default: {
			__u64 v = 0;

			r = outcome(f, K_WRITE, write(rand_fd(f), &v, sizeof(v)) < 0,
				    "write");
			break;
		}
		}
		if (r)
			break;
		if (f->calls / 10000 != last_progress) {
			last_progress = f->calls / 10000;
			fprintf(stderr, "# abi_fuzz: %lu calls\n", f->calls);
		}
	}
	t1 = ts_ns(CLOCK_MONOTONIC);
	EXPECT_EQ(0, f->err[0]) TH_LOG("FUZZ_SEED=%llu: %s", seed, f->err);

	printf("# abi_fuzz: %lu calls in %.1f s (%.0f calls/s), seed %llu\n",
	       f->calls, (t1 - t0) / 1e9, f->calls / ((t1 - t0) / 1e9), seed);
	for (k = 0; k < NR_KINDS; k++) {
		char line[512];
		int len = snprintf(line, sizeof(line), "# %-6s ok %lu", kind_name[k],
				   f->ok[k]);

		for (i = 0; i < NR_KNOWN; i++)
			if (f->hist[k][i])
				len += snprintf(line + len, sizeof(line) - len, " %s %lu",
						strerrorname_np(known_errnos[i]),
						f->hist[k][i]);
		printf("%s\n", line);
	}

	for (i = 0; i < f->nr_maps; i++)
		munmap(f->maps[i].p, f->maps[i].len);
	for (i = 0; i < f->nr; i++)
		close(f->fds[i]);
	close(f->dev);
	close(f->null);
	kill(f->child, SIGKILL);
	waitpid(f->child, &status, 0);

	EXPECT_EQ(0, live_stats_wait_zero(&st, 3000))
		TH_LOG("live after close: events %ld task_contexts %ld buffers %ld",
		       st.events, st.task_contexts, st.buffers);
	/* fput() of the last files is deferred: retry briefly */
	for (i = 0; i < 100 && mod_unload(); i++)
		sleep_ns(20 * NSEC_PER_MSEC);
	EXPECT_FALSE(mod_loaded()) TH_LOG("rmmod after the run: %s", strerror(errno));
	if (!mod_loaded())
		ASSERT_EQ(0, mod_load());
	free(f->abuf);
	free(f);
}

TEST_HARNESS_MAIN
