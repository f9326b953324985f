// SPDX-License-Identifier: GPL-2.0
/*
 * PEVT_IOC_OPEN: every size, flag and argument edge, with the errno that
 * perf_event_open(2) gives for the same mistake where there is one (the
 * stock syscall is called side by side and must agree).
 */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

FIXTURE(open) {
	int dev;
	struct perf_event_attr attr;
	struct pevt_open op;
};

FIXTURE_SETUP(open)
{
	self->dev = pevt_dev_open();
	ASSERT_LE(0, self->dev) TH_LOG("open %s: %s", PEVT_DEVICE_PATH,
				       strerror(errno));
	pevt_attr_clock(&self->attr, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
	memset(&self->op, 0, sizeof(self->op));
	self->op.size = sizeof(self->op);
	self->op.attr = (uintptr_t)&self->attr;
	self->op.pid = 0;
	self->op.cpu = -1;
	self->op.group_fd = -1;
}

FIXTURE_TEARDOWN(open)
{
	close(self->dev);
}

/* ioctl with self->op; on success close the fd and return 0. */
static int try_open(struct __test_metadata *_metadata, int dev, void *op)
{
	int fd = ioctl(dev, PEVT_IOC_OPEN, op);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -errno;
}

/* The same attr/pid/cpu through the stock syscall; -errno or 0. */
static int try_stock(struct perf_event_attr *attr, pid_t pid, int cpu,
		     int group_fd)
{
	int fd = sys_perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -errno;
}

TEST_F(open, device_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(PEVT_DEVICE_PATH, &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	ASSERT_EQ(0666, st.st_mode & 0777);
}

TEST_F(open, baseline_ok)
{
	ASSERT_EQ(0, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, unknown_device_ioctl)
{
	ASSERT_EQ(-1, ioctl(self->dev, _IO(PEVT_IOC_MAGIC, 0x7f)));
	ASSERT_EQ(ENOTTY, errno);
}

/*
 * struct pevt_open is versioned by its size field: the size bits of the
 * ioctl number are not part of the ABI (a newer, larger struct keeps the
 * command working).
 */
TEST_F(open, ioctl_size_bits_ignored)
{
	struct { struct pevt_open op; __u64 tail[8]; } big;
	int fd;

	memset(&big, 0, sizeof(big));
	big.op = self->op;
	big.op.size = sizeof(big);
	ASSERT_EQ(0, try_open(_metadata, self->dev, &big));
	fd = ioctl(self->dev, _IOW(PEVT_IOC_MAGIC, 0x01, big), &big);
	ASSERT_LE(0, fd);
	close(fd);
	/* but not the direction or the number */
	ASSERT_EQ(-1, ioctl(self->dev, _IOR(PEVT_IOC_MAGIC, 0x01, struct pevt_open), &big));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->dev, _IOW(PEVT_IOC_MAGIC, 0x02, struct pevt_open), &big));
	ASSERT_EQ(ENOTTY, errno);
}

TEST_F(open, size_too_small)
{
	self->op.size = PEVT_OPEN_SIZE_VER0 - 1;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	self->op.size = 0;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, size_bigger_zero_tail)
{
	struct { struct pevt_open op; __u64 tail[8]; } big;

	memset(&big, 0, sizeof(big));
	big.op = self->op;
	big.op.size = sizeof(big);
	ASSERT_EQ(0, try_open(_metadata, self->dev, &big));
}

TEST_F(open, size_bigger_nonzero_tail)
{
	struct { struct pevt_open op; __u64 tail[8]; } big;

	memset(&big, 0, sizeof(big));
	big.op = self->op;
	big.op.size = sizeof(big);
	big.tail[7] = 1;
	ASSERT_EQ(-E2BIG, try_open(_metadata, self->dev, &big));
	/* the tail is only looked at up to op.size */
	big.op.size = sizeof(big) - 8;
	ASSERT_EQ(0, try_open(_metadata, self->dev, &big));
}

TEST_F(open, size_above_page)
{
	static char page[8192];

	memcpy(page, &self->op, sizeof(self->op));
	((struct pevt_open *)page)->size = sizeof(page);
	ASSERT_EQ(-E2BIG, try_open(_metadata, self->dev, page));
}

TEST_F(open, bad_pointers)
{
	ASSERT_EQ(-1, ioctl(self->dev, PEVT_IOC_OPEN, NULL));
	ASSERT_EQ(EFAULT, errno);
	self->op.attr = 8;
	ASSERT_EQ(-EFAULT, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, reserved_fields)
{
	int i;

	self->op.__reserved_0 = 1;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	self->op.__reserved_0 = 0;
	for (i = 0; i < 4; i++) {
		self->op.__reserved_1[i] = 1ULL << 40;
		ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
		self->op.__reserved_1[i] = 0;
	}
	ASSERT_EQ(0, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, flags)
{
	int fd, fl;

	self->op.flags = 1U << 31;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	self->op.flags = ~PEVT_OPEN_FLAGS_ALL;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));

	self->op.flags = 0;
	fd = ioctl(self->dev, PEVT_IOC_OPEN, &self->op);
	ASSERT_LE(0, fd);
	fl = fcntl(fd, F_GETFD);
	ASSERT_EQ(0, fl & FD_CLOEXEC);
	close(fd);

	self->op.flags = PEVT_OPEN_FD_CLOEXEC;
	fd = ioctl(self->dev, PEVT_IOC_OPEN, &self->op);
	ASSERT_LE(0, fd);
	fl = fcntl(fd, F_GETFD);
	ASSERT_EQ(FD_CLOEXEC, fl & FD_CLOEXEC);
	close(fd);
}

/* perf_copy_attr(): size 0 is VER0, < VER0 or junk tail is E2BIG + size back. */
TEST_F(open, attr_size)
{
	struct { struct perf_event_attr a; __u64 tail[4]; } big;

	self->attr.size = 0;
	ASSERT_EQ(0, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(0, try_stock(&self->attr, 0, -1, -1));

	self->attr.size = PERF_ATTR_SIZE_VER0;
	ASSERT_EQ(0, try_open(_metadata, self->dev, &self->op));

	self->attr.size = PERF_ATTR_SIZE_VER0 - 8;
	ASSERT_EQ(-E2BIG, try_open(_metadata, self->dev, &self->op));
	/* the kernel's size is written back, as perf does */
	ASSERT_LE(PERF_ATTR_SIZE_VER7, self->attr.size);
	self->attr.size = PERF_ATTR_SIZE_VER0 - 8;
	ASSERT_EQ(-E2BIG, try_stock(&self->attr, 0, -1, -1));

	memset(&big, 0, sizeof(big));
	big.a = self->attr;
	big.a.size = sizeof(big);
	self->op.attr = (uintptr_t)&big;
	ASSERT_EQ(0, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(0, try_stock(&big.a, 0, -1, -1));
	big.tail[3] = 7;
	ASSERT_EQ(-E2BIG, try_open(_metadata, self->dev, &self->op));
	big.a.size = sizeof(big);
	ASSERT_EQ(-E2BIG, try_stock(&big.a, 0, -1, -1));

	big.a.size = 8192;
	ASSERT_EQ(-E2BIG, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, attr_reserved_and_formats)
{
	struct perf_event_attr a = self->attr;

	self->attr.__reserved_1 = 1;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-EINVAL, try_stock(&self->attr, 0, -1, -1));

	self->attr = a;
	self->attr.read_format = PERF_FORMAT_MAX;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-EINVAL, try_stock(&self->attr, 0, -1, -1));

	self->attr = a;
	self->attr.sample_type = PERF_SAMPLE_MAX;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-EINVAL, try_stock(&self->attr, 0, -1, -1));

	/* every read_format bit perf knows is accepted */
	self->attr = a;
	self->attr.read_format = PERF_FORMAT_MAX - 1;
	ASSERT_EQ(0, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, bad_group_fd)
{
	int closed_fd = open("/dev/null", O_RDONLY);

	close(closed_fd);
	self->op.group_fd = closed_fd;
	ASSERT_EQ(-EBADF, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-EBADF, try_stock(&self->attr, 0, -1, closed_fd));
	self->op.group_fd = -2;
	ASSERT_EQ(-EBADF, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, group_fd_not_pevt)
{
	int nul = open("/dev/null", O_RDONLY);
	struct perf_event_attr sa = self->attr;
	int stock;

	ASSERT_LE(0, nul);
	self->op.group_fd = nul;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	/* the device fd itself is not an event */
	self->op.group_fd = self->dev;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	/* nor is a stock perf event fd */
	stock = sys_perf_event_open(&sa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, stock);
	self->op.group_fd = stock;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	close(stock);
	close(nul);
}

TEST_F(open, group_rules)
{
	int leader, sibling, cpu_leader;

	leader = ioctl(self->dev, PEVT_IOC_OPEN, &self->op);
	ASSERT_LE(0, leader);
	self->op.group_fd = leader;
	sibling = ioctl(self->dev, PEVT_IOC_OPEN, &self->op);
	ASSERT_LE(0, sibling);

	/* a sibling cannot lead */
	self->op.group_fd = sibling;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	/* a pinned event cannot be a sibling */
	self->op.group_fd = leader;
	self->attr.pinned = 1;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	self->attr.pinned = 0;
	/* same task, different cpu binding */
	self->op.cpu = 0;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	/* a CPU event cannot join a task group, nor the other way round */
	self->op.pid = -1;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	self->op.group_fd = -1;
	cpu_leader = ioctl(self->dev, PEVT_IOC_OPEN, &self->op);
	ASSERT_LE(0, cpu_leader);
	self->op.pid = 0;
	self->op.cpu = -1;
	self->op.group_fd = cpu_leader;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	close(cpu_leader);
	close(sibling);
	close(leader);
}

TEST_F(open, bad_cpu)
{
	self->op.cpu = 4096;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-EINVAL, try_stock(&self->attr, 0, 4096, -1));
	self->op.cpu = -2;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-EINVAL, try_stock(&self->attr, 0, -2, -1));
	self->op.pid = -1;
	self->op.cpu = 4096;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-EINVAL, try_stock(&self->attr, -1, 4096, -1));
}

TEST_F(open, offline_cpu)
{
	const char *ctl = "/sys/devices/system/cpu/cpu1/online";
	int fd, r1, r2;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	fd = open(ctl, O_WRONLY);
	if (fd < 0)
		SKIP(return, "no CPU hotplug control: %s", strerror(errno));
	if (write(fd, "0", 1) != 1) {
		close(fd);
		SKIP(return, "cannot offline cpu1: %s", strerror(errno));
	}
	self->op.pid = -1;
	self->op.cpu = 1;
	r1 = try_open(_metadata, self->dev, &self->op);
	r2 = try_stock(&self->attr, -1, 1, -1);
	ASSERT_EQ(1, write(fd, "1", 1));
	close(fd);
	ASSERT_EQ(-ENODEV, r2);
	ASSERT_EQ(-ENODEV, r1);
	/* back online: fine again */
	ASSERT_EQ(0, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, pid_and_cpu_both_any)
{
	self->op.pid = -1;
	self->op.cpu = -1;
	ASSERT_EQ(-EINVAL, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-EINVAL, try_stock(&self->attr, -1, -1, -1));
}

TEST_F(open, nonexistent_pid)
{
	pid_t child = fork();
	int status;

	ASSERT_LE(0, child);
	if (child == 0)
		_exit(0);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	self->op.pid = child;	/* reaped: no such task */
	ASSERT_EQ(-ESRCH, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-ESRCH, try_stock(&self->attr, child, -1, -1));
	self->op.pid = -5;
	ASSERT_EQ(-ESRCH, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-ESRCH, try_stock(&self->attr, -5, -1, -1));
}

TEST_F(open, own_pid_and_cpu_event)
{
	self->op.pid = getpid();
	ASSERT_EQ(0, try_open(_metadata, self->dev, &self->op));
	self->op.pid = -1;
	self->op.cpu = 0;
	ASSERT_EQ(0, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, unknown_type_or_config)
{
	struct perf_event_attr a = self->attr;

	self->attr.type = PERF_TYPE_MAX + 1000;
	ASSERT_EQ(-ENOENT, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-ENOENT, try_stock(&self->attr, 0, -1, -1));

	self->attr = a;
	self->attr.config = PERF_COUNT_SW_MAX + 5;
	ASSERT_EQ(-ENOENT, try_open(_metadata, self->dev, &self->op));
	ASSERT_EQ(-ENOENT, try_stock(&self->attr, 0, -1, -1));

	/* no hardware PMU behind pevt (nor in the guest) */
	self->attr = a;
	self->attr.type = PERF_TYPE_HARDWARE;
	self->attr.config = PERF_COUNT_HW_CPU_CYCLES;
	ASSERT_EQ(-ENOENT, try_open(_metadata, self->dev, &self->op));
}

/* Things perf supports and pevt does not (yet): EOPNOTSUPP. */
TEST_F(open, unsupported_attr)
{
	struct perf_event_attr a = self->attr;

	/* inherit, inherit_stat, remove_on_exec: inherit_test.c */
	self->attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	ASSERT_EQ(-EOPNOTSUPP, try_open(_metadata, self->dev, &self->op));
	self->attr = a;
	self->attr.use_clockid = 1;
	ASSERT_EQ(-EOPNOTSUPP, try_open(_metadata, self->dev, &self->op));
}

TEST_F(open, unknown_event_ioctl)
{
	int fd = ioctl(self->dev, PEVT_IOC_OPEN, &self->op);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-1, ioctl(fd, _IO('$', 0x7f)));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(fd, PEVT_IOC_OPEN, &self->op));
	ASSERT_EQ(ENOTTY, errno);
	close(fd);
}

/*
 * Like perf at paranoid 1: own task yes, another user's task no, CPU no
 * (every level and case, against the stock syscall: perm_test).
 */
TEST_F(open, access_checks)
{
	int saved = paranoid_get();
	pid_t child;
	int status;

	ASSERT_EQ(0, paranoid_set(1));
	child = fork();
	if (child < 0)
		paranoid_set(saved);
	ASSERT_LE(0, child);
	if (child == 0) {
		int dev, ok = 1;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		dev = pevt_dev_open();
		if (dev < 0)
			_exit(11);
		self->op.pid = 0;
		if (try_open(_metadata, dev, &self->op) != 0)
			ok = 0;
		self->op.pid = 1;	/* init: root's */
		if (try_open(_metadata, dev, &self->op) != -EACCES)
			ok = 0;
		self->op.pid = -1;
		self->op.cpu = 0;
		if (try_open(_metadata, dev, &self->op) != -EACCES)
			ok = 0;
		_exit(ok ? 0 : 12);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, paranoid_set(saved));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
