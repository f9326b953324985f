// SPDX-License-Identifier: GPL-2.0
/*
 * exclude_user / exclude_kernel / exclude_hv / exclude_idle: every pevt
 * source against the stock kernel, same attr, same workload, same time.
 *
 * Each row opens one event through perf_event_open(2) and the same attr
 * through /dev/pevt, enables both, runs the workload once and compares:
 *
 *  - sampling clocks (task-clock, cpu-clock; PERF_SAMPLE_IP|TID, period
 *    100 us): samples taken in user mode, in kernel mode, with a kernel
 *    address as IP, in the idle task.  A kind stock never writes must be
 *    0 in pevt too (a kernel IP under exclude_kernel=1 is a KASLR leak);
 *    a kind stock writes plenty of must show up in pevt too.
 *  - counting clocks: value / time_running, stock's ratio within 0.25.
 *  - raw_syscalls:sys_enter: count and samples of N getppid() calls.
 *  - pevt_vpmu: the errno of the open (the stock PMU refuses filters it
 *    cannot honour; /dev/pevt must refuse the same).
 *
 * The workload alternates read()s of /dev/zero (time in the kernel) with
 * a user-space spin; the idle rows sample a CPU-wide cpu-clock on a CPU
 * the test keeps idle.  The "nobody" test repeats the reported leak: an
 * unprivileged task-clock sampler at perf_event_paranoid 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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

#include <pevt/parse_events.h>

#include "kselftest_harness.h"
#include "common.h"

#define EX_PAGES	64		/* data pages per buffer */
#define EX_PERIOD	100000		/* ns between clock samples */
#define EX_WORK_NS	(300 * NSEC_PER_MSEC)
#define EX_CALLS	2000		/* getppid() calls, tracepoint rows */
#define KERNEL_START	0xffff800000000000ULL
#define NOBODY		65534

enum { EX_U = 1, EX_K = 2, EX_H = 4, EX_I = 8 };

static const struct {
	const char *name;
	unsigned int ex;
} ex_rows[] = {
	{ "none", 0 },
	{ "exclude_user", EX_U },
	{ "exclude_kernel", EX_K },
	{ "exclude_hv", EX_H },
	{ "exclude_idle", EX_I },
	{ "exclude_kernel+hv", EX_K | EX_H },
	{ "exclude_user+idle", EX_U | EX_I },
};
#define NR_ROWS (sizeof(ex_rows) / sizeof(ex_rows[0]))

static void set_excl(struct perf_event_attr *a, unsigned int ex)
{
	a->exclude_user = !!(ex & EX_U);
	a->exclude_kernel = !!(ex & EX_K);
	a->exclude_hv = !!(ex & EX_H);
	a->exclude_idle = !!(ex & EX_I);
}

/* One event and its buffer. */
struct ex_ev {
	int fd;
	void *base;
	size_t len;
};

struct ex_counts {
	unsigned long samples, user, kernel, kernel_ip, idle, other;
};

/* @to += @from, field by field. */
static void ex_add(struct ex_counts *to, const struct ex_counts *from)
{
	to->samples += from->samples;
	to->user += from->user;
	to->kernel += from->kernel;
	to->kernel_ip += from->kernel_ip;
	to->idle += from->idle;
	to->other += from->other;
}

static int ex_open(struct perf_event_attr *a, int stock, pid_t pid, int cpu)
{
	int dev, fd;

	if (stock)
		return sys_perf_event_open(a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	dev = pevt_dev_open();
	if (dev < 0)
		return -1;
	fd = pevt_open(dev, a, pid, cpu, -1, PEVT_OPEN_FD_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		close(dev);
		errno = e;
		return -1;
	}
	close(dev);
	return fd;
}

static int ex_map(struct ex_ev *e)
{
	long page = sysconf(_SC_PAGESIZE);

	e->len = (EX_PAGES + 1) * page;
	e->base = mmap(NULL, e->len, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
	return e->base == MAP_FAILED ? -1 : 0;
}

static void ex_close(struct ex_ev *e)
{
	if (e->base && e->base != MAP_FAILED)
		munmap(e->base, e->len);
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	e->base = NULL;
}

/* Walk the samples (sample_type IP|TID) from data_tail to data_head. */
static void ex_count(const struct ex_ev *e, struct ex_counts *c)
{
	struct perf_event_mmap_page *up = e->base;
	const uint8_t *data = (const uint8_t *)e->base + up->data_offset;
	uint64_t size = up->data_size, head, pos;

	memset(c, 0, sizeof(*c));
	head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
	for (pos = up->data_tail; pos < head;) {
		struct perf_event_header h;
		uint64_t rec[4];
		unsigned int i;

		for (i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(pos + i) % size];
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 16) {
			for (i = 0; i < 16; i++)
				((uint8_t *)rec)[i] = data[(pos + sizeof(h) + i) % size];
			c->samples++;
			switch (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) {
			case PERF_RECORD_MISC_USER:
				c->user++;
				break;
			case PERF_RECORD_MISC_KERNEL:
				c->kernel++;
				break;
			default:
				c->other++;
			}
			if (rec[0] >= KERNEL_START)
				c->kernel_ip++;
			if ((uint32_t)(rec[1] >> 32) == 0)	/* tid 0: idle */
				c->idle++;
		}
		pos += h.size;
	}
}

/* Kernel time (reads of /dev/zero) and user time (a spin), interleaved. */
static void ex_workload(__u64 ns)
{
	static char buf[1 << 16];
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	__u64 end = ts_ns(CLOCK_MONOTONIC) + ns;

	while (ts_ns(CLOCK_MONOTONIC) < end) {
		for (int i = 0; i < 8 && fd >= 0; i++)
			if (read(fd, buf, sizeof(buf)) < 0)
				break;
		/* User time without system calls (a CPU-time clock is one). */
		for (volatile long i = 0; i < 200000; i++)
			;
	}
	if (fd >= 0)
		close(fd);
}

/*
 * Open the stock and pevt events of one row, run @work, count.  pid/cpu
 * as for perf_event_open.  Returns 0, or -errno of the first open that
 * failed (stock: -1000 - errno).
 */
static int ex_run(struct perf_event_attr *a, pid_t pid, int cpu,
		  void (*work)(void), struct ex_counts c[2], __u64 vals[2][3])
{
	struct ex_ev ev[2] = { { .fd = -1 }, { .fd = -1 } };
	int s, ret = 0;

	for (s = 0; s < 2; s++) {
		ev[s].fd = ex_open(a, s == 0, pid, cpu);
		if (ev[s].fd < 0) {
			ret = s == 0 ? -1000 - errno : -errno;
			goto out;
		}
		if (a->sample_period && ex_map(&ev[s])) {
			ret = -errno;
			goto out;
		}
	}
	for (s = 0; s < 2; s++)
		ioctl(ev[s].fd, PERF_EVENT_IOC_ENABLE, 0);
	work();
	for (s = 0; s < 2; s++)
		ioctl(ev[s].fd, PERF_EVENT_IOC_DISABLE, 0);
	for (s = 0; s < 2; s++) {
		memset(vals[s], 0, sizeof(vals[s]));
		if (read(ev[s].fd, vals[s], sizeof(vals[s])) < 8)
			ret = -EIO;
		if (a->sample_period)
			ex_count(&ev[s], &c[s]);
	}
out:
	for (s = 0; s < 2; s++)
		ex_close(&ev[s]);
	return ret;
}

static void work_mixed(void)
{
	ex_workload(EX_WORK_NS);
}

static void work_sleep(void)
{
	sleep_ns(EX_WORK_NS);
}

static void work_calls(void)
{
	for (int i = 0; i < EX_CALLS; i++)
		syscall(SYS_getppid);
}

/*
 * Per kind of sample: a kind the row excludes (user; kernel and kernel
 * IPs; idle, which runs in kernel mode) is absent from both stock and
 * pevt; a kind stock writes at least EX_SEEN of shows up in pevt too.
 */
#define EX_SEEN		10u
static int ex_verdict(const char *row, unsigned int ex,
		      const struct ex_counts *st, const struct ex_counts *pv)
{
	static const char *const kind[] = { "user", "kernel", "kernel_ip", "idle" };
	const unsigned int excl[] = { EX_U, EX_K, EX_K, EX_I | EX_K };
	const unsigned long sv[] = { st->user, st->kernel, st->kernel_ip, st->idle };
	const unsigned long pvv[] = { pv->user, pv->kernel, pv->kernel_ip, pv->idle };
	int bad = 0;

	for (int k = 0; k < 4; k++) {
		if (((ex & excl[k]) && (sv[k] || pvv[k])) ||
		    (sv[k] >= EX_SEEN && !pvv[k])) {
			fprintf(stderr, "#   %s: %s samples stock %lu pevt %lu\n",
				row, kind[k], sv[k], pvv[k]);
			bad = 1;
		}
	}
	return bad;
}

static void ex_log(const char *what, const char *row, const struct ex_counts c[2])
{
	fprintf(stderr, "# %-28s %-18s stock samples %5lu user %5lu kernel %5lu kip %5lu idle %5lu"
		" | pevt samples %5lu user %5lu kernel %5lu kip %5lu idle %5lu\n",
		what, row, c[0].samples, c[0].user, c[0].kernel, c[0].kernel_ip,
		c[0].idle, c[1].samples, c[1].user, c[1].kernel, c[1].kernel_ip,
		c[1].idle);
}

FIXTURE(excl) {
	int tp_id;
	int vpmu_type;
};

FIXTURE_SETUP(excl)
{
	int fd = pevt_dev_open();
	char buf[32] = "";

	if (fd < 0)
		SKIP(return, "no %s (pevt.ko not loaded)", PEVT_DEVICE_PATH);
	close(fd);
	self->tp_id = pevt_tracepoint__id("raw_syscalls:sys_enter");
	self->vpmu_type = -1;
	fd = open("/sys/bus/event_source/devices/pevt_vpmu/type", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) > 0)
			self->vpmu_type = atoi(buf);
		close(fd);
	}
}

FIXTURE_TEARDOWN(excl)
{
}

static void clk_attr(struct perf_event_attr *a, __u64 config, unsigned int ex)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
	a->sample_period = EX_PERIOD;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	a->disabled = 1;
	set_excl(a, ex);
}

/* Every row of the table for one sampling clock event; failed rows. */
static int ex_sampling_rows(struct __test_metadata *_metadata, const char *what,
			    __u64 config, pid_t pid, int cpu, void (*work)(void))
{
	struct perf_event_attr a;
	struct ex_counts c[2];
	__u64 vals[2][3];
	int bad = 0;

	for (unsigned int r = 0; r < NR_ROWS; r++) {
		clk_attr(&a, config, ex_rows[r].ex);
		if (ex_run(&a, pid, cpu, work, c, vals)) {
			fprintf(stderr, "# %s %s: open/map failed\n", what,
				ex_rows[r].name);
			bad++;
			continue;
		}
		ex_log(what, ex_rows[r].name, c);
		/*
		 * A busy task (pid 0) always gives stock samples where the
		 * kernel counts: its user part can be too short for one (the
		 * debug kernel: cpu-clock exclude_kernel gave 0 and 0).
		 */
		if (!pid && !c[0].samples && !(ex_rows[r].ex & EX_K)) {
			fprintf(stderr, "# %s %s: no stock sample\n", what, ex_rows[r].name);
			bad++;
		}
		bad += ex_verdict(ex_rows[r].name, ex_rows[r].ex, &c[0], &c[1]);
	}
	return bad;
}

/* task-clock and cpu-clock sampling of this task: user vs kernel samples. */
TEST_F(excl, sampling_clocks)
{
	EXPECT_EQ(0, ex_sampling_rows(_metadata, "task-clock sampling",
				      PERF_COUNT_SW_TASK_CLOCK, 0, -1, work_mixed));
	EXPECT_EQ(0, ex_sampling_rows(_metadata, "cpu-clock sampling",
				      PERF_COUNT_SW_CPU_CLOCK, 0, -1, work_mixed));
}

/* A CPU-wide cpu-clock on a CPU kept idle: exclude_idle drops the idle task. */
TEST_F(excl, sampling_idle)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	ASSERT_EQ(0, pin_to_cpu(0));
	EXPECT_EQ(0, ex_sampling_rows(_metadata, "cpu-clock cpu 1 (idle)",
				      PERF_COUNT_SW_CPU_CLOCK, -1, 1, work_sleep));
}

/* Counting clocks: exclusions do not change what a clock counts. */
TEST_F(excl, counting_clocks)
{
	static const __u64 cfg[] = { PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK };
	struct perf_event_attr a;
	struct ex_counts c[2];
	__u64 vals[2][3];
	int bad = 0;

	for (unsigned int k = 0; k < 2; k++) {
		for (unsigned int r = 0; r < NR_ROWS; r++) {
			double ratio[2];

			pevt_attr_clock(&a, cfg[k], PERF_FORMAT_TOTAL_TIME_ENABLED |
					PERF_FORMAT_TOTAL_TIME_RUNNING, 1);
			set_excl(&a, ex_rows[r].ex);
			ASSERT_EQ(0, ex_run(&a, 0, -1, work_mixed, c, vals));
			for (int s = 0; s < 2; s++)
				ratio[s] = vals[s][2] ? (double)vals[s][0] / vals[s][2] : 0;
			fprintf(stderr, "# %-28s %-18s value/running stock %.3f pevt %.3f\n",
				k ? "cpu-clock counting" : "task-clock counting",
				ex_rows[r].name, ratio[0], ratio[1]);
			if (ratio[1] < ratio[0] - 0.25 || ratio[1] > ratio[0] + 0.25)
				bad++;
		}
	}
	EXPECT_EQ(0, bad);
}

/* raw_syscalls:sys_enter: what is counted and sampled. */
TEST_F(excl, tracepoint)
{
	struct perf_event_attr a;
	struct ex_counts c[2];
	__u64 vals[2][3];
	int bad = 0;

	if (self->tp_id < 0)
		SKIP(return, "no raw_syscalls:sys_enter id in tracefs");
	for (int sampling = 0; sampling < 2; sampling++) {
		for (unsigned int r = 0; r < NR_ROWS; r++) {
			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = PERF_TYPE_TRACEPOINT;
			a.config = self->tp_id;
			a.disabled = 1;
			a.sample_period = sampling ? 1 : 0;
			a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
			set_excl(&a, ex_rows[r].ex);
			memset(c, 0, sizeof(c));
			ASSERT_EQ(0, ex_run(&a, 0, -1, work_calls, c, vals));
			fprintf(stderr, "# sys_enter %-18s %-18s count stock %llu pevt %llu, samples stock %lu pevt %lu\n",
				sampling ? "sampling" : "counting", ex_rows[r].name,
				(unsigned long long)vals[0][0],
				(unsigned long long)vals[1][0], c[0].samples,
				c[1].samples);
			/* Both zero, or both about EX_CALLS (+ the ioctls). */
			if (!vals[0][0] != !vals[1][0] || !c[0].samples != !c[1].samples)
				bad++;
			if (vals[0][0] && (vals[1][0] < EX_CALLS || vals[1][0] > EX_CALLS + 10))
				bad++;
		}
	}
	EXPECT_EQ(0, bad);
}

/* pevt_vpmu: the same errno from both paths for every filter. */
TEST_F(excl, vpmu_open)
{
	struct perf_event_attr a;
	int bad = 0;

	if (self->vpmu_type < 0)
		SKIP(return, "no pevt_vpmu PMU");
	for (unsigned int r = 0; r < NR_ROWS; r++) {
		int fd[2], err[2];

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = self->vpmu_type;
		a.config = 0;	/* cpu_ns */
		a.disabled = 1;
		set_excl(&a, ex_rows[r].ex);
		for (int s = 0; s < 2; s++) {
			fd[s] = ex_open(&a, s == 0, 0, -1);
			err[s] = fd[s] < 0 ? errno : 0;
			if (fd[s] >= 0)
				close(fd[s]);
		}
		fprintf(stderr, "# pevt_vpmu open %-18s stock %s, pevt %s\n",
			ex_rows[r].name, err[0] ? strerror(err[0]) : "ok",
			err[1] ? strerror(err[1]) : "ok");
		if (err[0] != err[1])
			bad++;
	}
	EXPECT_EQ(0, bad);
}

/*
 * The reported leak: nobody at perf_event_paranoid 2, task-clock sampling
 * with exclude_kernel=1 (required there), IP, period 100 us, reading
 * /dev/zero.  Not one kernel-mode sample or kernel IP, like stock.  The
 * workload's user part is short (the debug kernel: 3 stock samples and
 * 0 pevt ones in a run): it runs again, counts added up, until stock has
 * the EX_SEEN user samples after which pevt must have one (ex_verdict()'s
 * rule), at most EX_TRIES times.
 */
#define EX_TRIES	10
TEST_F(excl, nobody_paranoid2)
{
	struct ex_counts c[2];
	int saved = paranoid_get(), pipefd[2], status;
	pid_t pid;

	ASSERT_EQ(0, paranoid_set(2));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct perf_event_attr a;
		__u64 vals[2][3];
		int ret;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		clk_attr(&a, PERF_COUNT_SW_TASK_CLOCK, EX_K);
		memset(c, 0, sizeof(c));
		ret = 0;
		for (int t = 0; !ret && t < EX_TRIES && c[0].user < EX_SEEN; t++) {
			struct ex_counts one[2];

			memset(one, 0, sizeof(one));
			ret = ex_run(&a, 0, -1, work_mixed, one, vals);
			for (int s = 0; s < 2; s++)
				ex_add(&c[s], &one[s]);
		}
		if (write(pipefd[1], c, sizeof(c)) != sizeof(c))
			_exit(3);
		_exit(ret ? 4 : 0);
	}
	close(pipefd[1]);
	ASSERT_EQ(sizeof(c), read(pipefd[0], c, sizeof(c)));
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	paranoid_set(saved);
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("child failed to open/map");
	ex_log("nobody paranoid 2", "exclude_kernel", c);
	ASSERT_LE(EX_SEEN, c[0].user) TH_LOG("stock took fewer than %u user samples in %d runs",
					     EX_SEEN, EX_TRIES);
	EXPECT_LT(0, c[1].user);
	EXPECT_EQ(0, c[0].kernel + c[0].kernel_ip);
	EXPECT_EQ(0, c[1].kernel);
	EXPECT_EQ(0, c[1].kernel_ip);
}

TEST_HARNESS_MAIN
