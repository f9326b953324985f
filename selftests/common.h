/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared static helpers for pevt selftests: opening events through
 * /dev/pevt and through the stock perf_event_open(2), CPU burners, reads.
 */
#ifndef PEVT_SELFTESTS_COMMON_H
#define PEVT_SELFTESTS_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <linux/pevt.h>

/*
 * ASSERT_EQ(3, u64_value) compares int with __u64 inside the harness
 * macros; -Wextra's -Wsign-compare would flag every such assert.
 */
#pragma GCC diagnostic ignored "-Wsign-compare"

#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

/* Open /dev/pevt; -1 with errno on failure. */
static inline int pevt_dev_open(void)
{
	return open(PEVT_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

/*
 * PEVT_IOC_OPEN on @dev with a struct pevt_open of the usual size.
 * Returns the event fd or -1 with errno.
 */
static inline int pevt_open(int dev, struct perf_event_attr *attr, pid_t pid,
			    int cpu, int group_fd, unsigned int flags)
{
	struct pevt_open op;

	memset(&op, 0, sizeof(op));
	op.size = sizeof(op);
	op.flags = flags;
	op.attr = (uintptr_t)attr;
	op.pid = pid;
	op.cpu = cpu;
	op.group_fd = group_fd;
	return ioctl(dev, PEVT_IOC_OPEN, &op);
}

/* The stock kernel's perf_event_open(2). */
static inline int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				      int cpu, int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* A counting software clock attr: PERF_COUNT_SW_{TASK,CPU}_CLOCK. */
static inline void pevt_attr_clock(struct perf_event_attr *attr, __u64 config,
				   __u64 read_format, int disabled)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = config;
	attr->read_format = read_format;
	attr->disabled = !!disabled;
}

/* A software event sampling TID|TIME every @period (0: counting only). */
static inline void pevt_attr_sampling(struct perf_event_attr *attr,
				      __u64 config, __u64 period)
{
	pevt_attr_clock(attr, config, 0, 0);
	attr->sample_period = period;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
}

static inline __u64 ts_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Burn @ns of this thread's CPU time (independent of preemption). */
static inline void burn_cpu_ns(__u64 ns)
{
	__u64 end = ts_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile unsigned long sink = 0;

	while (ts_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

/* Sleep @ns of wall time. */
static inline void sleep_ns(__u64 ns)
{
	struct timespec ts = { .tv_sec = ns / NSEC_PER_SEC,
			       .tv_nsec = ns % NSEC_PER_SEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Pin the calling thread to @cpu; 0 or -1. */
static inline int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* |a - b| <= pct% of b */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v[0..n) in place and returns its median (the upper one for even n). */
static inline double median_double(double *v, int n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

static inline int within_pct(double a, double b, double pct)
{
	double d = a > b ? a - b : b - a;

	return d <= b * pct / 100.0;
}

/*
 * A bool parameter of the loaded module (/sys/module/pevt/parameters/@name):
 * 1 for Y, 0 for N, -1 if it cannot be read.
 */
static inline int pevt_param_bool(const char *name)
{
	char path[128], c = 0;
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/sys/module/pevt/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, " %c", &c) == 1 && (c == 'Y' || c == 'N'))
		ret = c == 'Y';
	fclose(f);
	return ret;
}

/* Non-group read with TOTAL_TIME_ENABLED|RUNNING (|ID optional). */
struct read_one {
	__u64 value;
	__u64 enabled;
	__u64 running;
	__u64 id;
};

static inline int read_one(int fd, struct read_one *r)
{
	ssize_t n;

	memset(r, 0, sizeof(*r));
	n = read(fd, r, sizeof(*r));
	return n < 0 ? -1 : (int)n;
}

/*
 * kernel.perf_event_paranoid: pevt follows it like perf_event_open(2)
 * (Documentation/security.md).  Tests that open events as an
 * unprivileged user set a level and restore the one they found.
 */
#define PERF_PARANOID_PATH	"/proc/sys/kernel/perf_event_paranoid"
#define PARANOID_UNKNOWN	(-100)

static inline int paranoid_get(void)
{
	char buf[16] = "";
	int fd = open(PERF_PARANOID_PATH, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return PARANOID_UNKNOWN;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : PARANOID_UNKNOWN;
}

/* 0, or -1 with errno. */
static inline int paranoid_set(int level)
{
	char buf[16];
	int fd = open(PERF_PARANOID_PATH, O_WRONLY | O_CLOEXEC);
	int len = snprintf(buf, sizeof(buf), "%d\n", level);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, buf, len);
	close(fd);
	return n == len ? 0 : -1;
}

/*
 * Wait (up to 5 s) until task @pid sleeps ('S' in /proc/PID/stat).
 * Return: 0, or -1 if it did not.
 */
static inline int wait_sleeping(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd, i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (i = 0; i < 5000; i++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		p = strrchr(buf, ')');	/* the comm may hold spaces */
		if (p && p[1] == ' ' && p[2] == 'S')
			return 0;
		usleep(1000);
	}
	return -1;
}

/*
 * Fork a child that blocks until child_go(*go), then runs fn(arg) and
 * exits with what it returns: events can be opened on its pid first.
 * Returns once the child is blocked in its read(), so that events opened
 * one after the other all see the same system calls of the child (one
 * opened while the child still ran its close()/read() counted 3 calls
 * more than its twin: regs_user_test on 6.1, once).
 */
static inline pid_t fork_waiting(int (*fn)(void *), void *arg, int *go)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		_exit(fn(arg));
	}
	close(p[0]);
	*go = p[1];
	if (pid > 0)
		wait_sleeping(pid);	/* at worst 5 s later, as before */
	return pid;
}

/*
 * Copy @len bytes at byte offset @pos of a ring buffer's data area @d of
 * @size bytes (a power of two or not), wrapping at its end.
 */
static inline void rb_copy(void *dst, const uint8_t *d, uint64_t size,
			   uint64_t pos, size_t len)
{
	for (size_t i = 0; i < len; i++)
		((uint8_t *)dst)[i] = d[(pos + i) % size];
}

/* The u64 at byte offset @pos of a ring buffer's data area (rb_copy()). */
static inline uint64_t rb_u64(const uint8_t *d, uint64_t size, uint64_t pos)
{
	uint64_t v;

	rb_copy(&v, d, size, pos, sizeof(v));
	return v;
}

/* Let a fork_waiting() child run; 0 or -1. */
static inline int child_go(int go)
{
	int ret = write(go, "g", 1) == 1 ? 0 : -1;

	close(go);
	return ret;
}

#endif /* PEVT_SELFTESTS_COMMON_H */
