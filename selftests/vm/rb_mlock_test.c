// SPDX-License-Identifier: GPL-2.0
/*
 * Ring-buffer pages are charged like perf_mmap() charges them: up to
 * mlock_kb per online CPU from the user's locked_vm allowance, the rest
 * against RLIMIT_MEMLOCK unless CAP_IPC_LOCK.  Checked as an unprivileged
 * user (nobody) with RLIMIT_MEMLOCK 0, so only the per-user allowance is
 * left: exactly nr_cpus buffers of mlock_kb fit, the next one is EPERM,
 * unmapping one gives its pages back, and root (CAP_IPC_LOCK) is not
 * limited.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common.h"

#define MAX_BUFS	64

static long mlock_pages_per_cpu(void)
{
	FILE *f = fopen("/sys/module/pevt/parameters/mlock_kb", "r");
	long kb = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &kb) != 1)
		kb = -1;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024 / sysconf(_SC_PAGESIZE);
}

/* Map 1 + @data_pages of a fresh task-clock event; MAP_FAILED with errno. */
static void *map_one(int dev, long data_pages, int *fdp)
{
	struct perf_event_attr attr;
	void *p;
	int fd;

	pevt_attr_clock(&attr, PERF_COUNT_SW_TASK_CLOCK, 0, 1);
	fd = pevt_open(dev, &attr, 0, -1, -1, PEVT_OPEN_FD_CLOEXEC);
	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, (1 + data_pages) * sysconf(_SC_PAGESIZE),
		 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int err = errno;

		close(fd);
		errno = err;
		return MAP_FAILED;
	}
	*fdp = fd;
	return p;
}

/*
 * Child body, as nobody: returns 0 when every expectation holds, else a
 * distinct code naming the first that did not.
 */
static int nobody_limits(long per_cpu, long ncpu)
{
	long data_pages = per_cpu - 1;	/* 1 + data == the per-CPU allowance */
	size_t len = per_cpu * sysconf(_SC_PAGESIZE);
	struct rlimit rl = { 0, 0 };
	void *bufs[MAX_BUFS];
	int fds[MAX_BUFS];
	int dev, i, fd;
	void *p;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 10;
	if (setgid(65534) || setuid(65534))
		return 11;
	dev = pevt_dev_open();
	if (dev < 0)
		return 12;
	for (i = 0; i < ncpu; i++) {
		bufs[i] = map_one(dev, data_pages, &fds[i]);
		if (bufs[i] == MAP_FAILED) {
			fprintf(stderr, "# buffer %d of %ld: %s\n", i, ncpu, strerror(errno));
			return 13;
		}
	}
	/* The allowance is used up: one more page-sized buffer is refused. */
	p = map_one(dev, 1, &fd);
	if (p != MAP_FAILED)
		return 14;
	if (errno != EPERM) {
		fprintf(stderr, "# over the limit: %s, want EPERM\n", strerror(errno));
		return 15;
	}
	/* Unmapping gives the pages back to the user. */
	if (munmap(bufs[0], len))
		return 16;
	close(fds[0]);
	bufs[0] = map_one(dev, data_pages, &fds[0]);
	if (bufs[0] == MAP_FAILED)
		return 17;
	for (i = 0; i < ncpu; i++) {
		munmap(bufs[i], len);
		close(fds[i]);
	}
	close(dev);
	return 0;
}

TEST(nobody_is_limited_root_is_not)
{
	long per_cpu = mlock_pages_per_cpu();
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	void *bufs[MAX_BUFS];
	int fds[MAX_BUFS];
	int status, dev, i, saved;
	pid_t child;

	ASSERT_LT(1, per_cpu) TH_LOG("no /sys/module/pevt/parameters/mlock_kb");
	ASSERT_GE(MAX_BUFS - 1, ncpu);
	/* mmap wants 2^n data pages: the default 516 KiB is 1 + 128 pages. */
	ASSERT_EQ(0, (per_cpu - 1) & (per_cpu - 2)) TH_LOG("mlock_kb is not 1 + 2^n pages");

	/* Unprivileged task events need perf_event_paranoid <= 2 (1: kernel too). */
	saved = paranoid_get();
	ASSERT_EQ(0, paranoid_set(1));
	child = fork();
	if (child == 0)
		_exit(nobody_limits(per_cpu, ncpu));
	if (child > 0)
		waitpid(child, &status, 0);
	ASSERT_EQ(0, paranoid_set(saved));
	ASSERT_LE(0, child);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/* Root has CAP_IPC_LOCK: twice the per-user allowance still maps. */
	dev = pevt_dev_open();
	ASSERT_LE(0, dev);
	for (i = 0; i < 2 * ncpu + 1; i++) {
		bufs[i] = map_one(dev, per_cpu - 1, &fds[i]);
		ASSERT_NE(MAP_FAILED, bufs[i]) TH_LOG("root buffer %d: %s", i, strerror(errno));
	}
	for (i = 0; i < 2 * ncpu + 1; i++) {
		munmap(bufs[i], per_cpu * sysconf(_SC_PAGESIZE));
		close(fds[i]);
	}
	close(dev);
}

TEST_HARNESS_MAIN
