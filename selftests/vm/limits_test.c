// SPDX-License-Identifier: GPL-2.0
/*
 * Limits: events per uid (max_events_per_user, EMFILE beyond, released on
 * close and on failed opens, shared by all processes of a uid, separate
 * per uid, CAP_SYS_ADMIN exempt), events per group (max_group_events,
 * EINVAL beyond, for everybody), and an oversized ring buffer mapping
 * (EINVAL).  The parameters are set through sysfs and restored.
 * Ring-buffer pages against RLIMIT_MEMLOCK: rb_mlock_test; bad page
 * counts and offsets: ringbuf_test (rbapi.mmap_sizes).
 */
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define PARAM_DIR	"/sys/module/pevt/parameters/"
#define USER_CAP	16
#define GROUP_CAP	4

static int param_get(const char *name)
{
	char path[128], buf[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1;
}

static int param_set(const char *name, int val)
{
	char path[128], buf[32];
	int fd, len;
	ssize_t n;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	len = snprintf(buf, sizeof(buf), "%d\n", val);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = write(fd, buf, len);
	close(fd);
	return n == len ? 0 : -1;
}

/* A disabled task-clock on the caller; fd or -errno. */
static int open_clock(int dev, int group_fd, __u64 config)
{
	struct perf_event_attr attr;
	int fd;

	pevt_attr_clock(&attr, PERF_COUNT_SW_TASK_CLOCK, 0, 1);
	attr.config = config;
	fd = pevt_open(dev, &attr, 0, -1, group_fd, 0);
	return fd < 0 ? -errno : fd;
}

static int become(uid_t uid, gid_t gid)
{
	return setgroups(0, NULL) || setgid(gid) || setuid(uid) ? -1 : 0;
}

/*
 * Open events until refused; keep them.  Returns how many opened, and the
 * errno of the refusal in *err (0 if @max were opened without one).
 */
static int open_until_refused(int dev, int *fds, int max, int *err)
{
	int n;

	*err = 0;
	for (n = 0; n < max; n++) {
		fds[n] = open_clock(dev, -1, PERF_COUNT_SW_TASK_CLOCK);
		if (fds[n] < 0) {
			*err = -fds[n];
			break;
		}
	}
	return n;
}

static void close_all(int *fds, int n)
{
	while (n--)
		close(fds[n]);
}

FIXTURE(limits) {
	int saved_paranoid;
	int saved_user;
	int saved_group;
	int dev;
};

FIXTURE_SETUP(limits)
{
	self->saved_user = param_get("max_events_per_user");
	self->saved_group = param_get("max_group_events");
	ASSERT_LT(0, self->saved_user) TH_LOG("no %smax_events_per_user", PARAM_DIR);
	ASSERT_LT(0, self->saved_group);
	self->saved_paranoid = paranoid_get();
	ASSERT_NE(PARANOID_UNKNOWN, self->saved_paranoid);
	/* nobody may count its own tasks, kernel included */
	ASSERT_EQ(0, paranoid_set(1));
	ASSERT_EQ(0, param_set("max_events_per_user", USER_CAP));
	ASSERT_EQ(0, param_set("max_group_events", GROUP_CAP));
	self->dev = pevt_dev_open();
	ASSERT_LE(0, self->dev);
}

FIXTURE_TEARDOWN(limits)
{
	close(self->dev);
	param_set("max_events_per_user", self->saved_user);
	param_set("max_group_events", self->saved_group);
	paranoid_set(self->saved_paranoid);
}

/* Child bodies return 0 or a code naming the failed expectation. */

static int user_cap_body(int dev)
{
	int fds[USER_CAP + 1], n, err, i;

	if (become(65534, 65534))
		return 10;
	n = open_until_refused(dev, fds, USER_CAP + 1, &err);
	if (n != USER_CAP || err != EMFILE) {
		fprintf(stderr, "# opened %d of cap %d, then %s\n", n, USER_CAP,
			strerror(err));
		return 11;
	}
	/* Refused opens take nothing: still refused, still EMFILE. */
	for (i = 0; i < 3; i++)
		if (open_clock(dev, -1, PERF_COUNT_SW_TASK_CLOCK) != -EMFILE)
			return 12;
	/* Closing one frees exactly one slot. */
	close(fds[0]);
	fds[0] = open_clock(dev, -1, PERF_COUNT_SW_TASK_CLOCK);
	if (fds[0] < 0)
		return 13;
	if (open_clock(dev, -1, PERF_COUNT_SW_TASK_CLOCK) != -EMFILE)
		return 14;
	close_all(fds, n);
	/*
	 * Opens failing after the charge (unknown config: the source
	 * refuses it) give it back: the whole cap is free again.
	 */
	for (i = 0; i < 2 * USER_CAP; i++)
		if (open_clock(dev, -1, PERF_COUNT_SW_MAX + 7) != -ENOENT)
			return 15;
	n = open_until_refused(dev, fds, USER_CAP + 1, &err);
	if (n != USER_CAP || err != EMFILE) {
		fprintf(stderr, "# after failed opens: %d, %s\n", n, strerror(err));
		return 16;
	}
	close_all(fds, n);
	return 0;
}

TEST_F(limits, per_user_cap_as_nobody)
{
	int status;
	pid_t child = fork();

	ASSERT_LE(0, child);
	if (child == 0)
		_exit(user_cap_body(self->dev));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * The cap is per uid, not per process: a holder with half of it leaves
 * the other half to a second process of the same uid; another uid has
 * its own cap; when the holder exits its events are uncharged.
 */
TEST_F(limits, shared_by_uid_released_on_exit)
{
	int ready[2], fds[USER_CAP + 1], status, n, err;
	pid_t holder, other;
	char c;

	ASSERT_EQ(0, pipe(ready));
	holder = fork();
	ASSERT_LE(0, holder);
	if (holder == 0) {
		close(ready[0]);
		if (become(65534, 65534))
			_exit(10);
		n = open_until_refused(self->dev, fds, USER_CAP / 2, &err);
		if (n != USER_CAP / 2)
			_exit(11);
		if (write(ready[1], "x", 1) != 1)
			_exit(12);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);

	/* Same uid: only the other half is left. */
	other = fork();
	ASSERT_LE(0, other);
	if (other == 0) {
		if (become(65534, 65534))
			_exit(10);
		n = open_until_refused(self->dev, fds, USER_CAP + 1, &err);
		_exit(n == USER_CAP - USER_CAP / 2 && err == EMFILE ? 0 : 20 + n);
	}
	ASSERT_EQ(other, waitpid(other, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* Another uid: a whole cap of its own. */
	other = fork();
	ASSERT_LE(0, other);
	if (other == 0) {
		if (become(65533, 65533))
			_exit(10);
		n = open_until_refused(self->dev, fds, USER_CAP + 1, &err);
		_exit(n == USER_CAP && err == EMFILE ? 0 : 20 + n);
	}
	ASSERT_EQ(other, waitpid(other, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* The holder dies: its events are closed and uncharged. */
	kill(holder, SIGKILL);
	ASSERT_EQ(holder, waitpid(holder, &status, 0));
	other = fork();
	ASSERT_LE(0, other);
	if (other == 0) {
		if (become(65534, 65534))
			_exit(10);
		n = open_until_refused(self->dev, fds, USER_CAP + 1, &err);
		_exit(n == USER_CAP && err == EMFILE ? 0 : 20 + n);
	}
	ASSERT_EQ(other, waitpid(other, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* CAP_SYS_ADMIN is not counted (RLIMIT_MEMLOCK does not bind it either). */
TEST_F(limits, root_exempt)
{
	int fds[2 * USER_CAP], n, err;

	n = open_until_refused(self->dev, fds, 2 * USER_CAP, &err);
	EXPECT_EQ(2 * USER_CAP, n);
	EXPECT_EQ(0, err) TH_LOG("root refused: %s", strerror(err));
	close_all(fds, n);
}

/* A group holds GROUP_CAP events: leader + GROUP_CAP - 1 siblings. */
static int group_body(int dev)
{
	int fds[GROUP_CAP + 1], i, fd, ret = 0;

	fds[0] = open_clock(dev, -1, PERF_COUNT_SW_TASK_CLOCK);
	if (fds[0] < 0)
		return 1;
	for (i = 1; i < GROUP_CAP; i++) {
		fds[i] = open_clock(dev, fds[0], PERF_COUNT_SW_TASK_CLOCK);
		if (fds[i] < 0)
			return 2;
	}
	fd = open_clock(dev, fds[0], PERF_COUNT_SW_TASK_CLOCK);
	if (fd != -EINVAL)
		ret = fd >= 0 ? 3 : 4;
	/* A member leaving makes room again. */
	close(fds[GROUP_CAP - 1]);
	fds[GROUP_CAP - 1] = open_clock(dev, fds[0], PERF_COUNT_SW_TASK_CLOCK);
	if (fds[GROUP_CAP - 1] < 0 && !ret)
		ret = 5;
	close_all(fds, GROUP_CAP);
	if (fd >= 0)
		close(fd);
	return ret;
}

TEST_F(limits, group_cap_root)
{
	ASSERT_EQ(0, group_body(self->dev));
}

TEST_F(limits, group_cap_nobody)
{
	int status;
	pid_t child = fork();

	ASSERT_LE(0, child);
	if (child == 0)
		_exit(become(65534, 65534) ? 10 : group_body(self->dev));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/* More data pages than a buffer may have (2^16): EINVAL, as a bad count. */
TEST_F(limits, oversized_mmap)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open_clock(self->dev, -1, PERF_COUNT_SW_TASK_CLOCK);
	void *p;

	ASSERT_LE(0, fd);
	p = mmap(NULL, (1 + (1L << 17)) * page, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* 2^16 + 1 data pages: not a power of two either. */
	p = mmap(NULL, (2 + (1L << 16)) * page, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST_HARNESS_MAIN
