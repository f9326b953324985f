// SPDX-License-Identifier: GPL-2.0
/*
 * Module lifetime: unload/reload three times in one boot with events used
 * in between (task contexts register and unregister tracepoint probes),
 * and rmmod refused while an event fd (or the device) is open.
 * Leaves pevt loaded, as the runner expects.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"
#include "live_stats.h"

static int is_loaded(void)
{
	char line[256];
	FILE *f = fopen("/proc/modules", "r");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "pevt ", 5))
			found = 1;
	fclose(f);
	return found;
}

/*
 * Open a task-clock on ourselves and a child, burn, check both count:
 * each at least half of what a stock task-clock on the same task read.
 * Not against the 20 ms burnt (CLOCK_THREAD_CPUTIME_ID): under TCG on a
 * loaded host the two clocks part, stock's too (a child that burnt 23.4
 * ms of its CPU clock read 17.4 ms on pevt and 18.2 on stock; 5 of 150
 * runs of this test under two host CPU hogs read 11.0-17.8 ms on pevt,
 * and one CI run 14.0, when the check was >= 18 ms).
 */
static void check_count(struct __test_metadata *_metadata, int fd, int sfd, const char *who)
{
	struct read_one r, s;

	ASSERT_EQ(24, read_one(fd, &r));
	ASSERT_EQ(24, read_one(sfd, &s));
	ASSERT_LT(0, s.value) TH_LOG("%s: stock read 0", who);
	ASSERT_GE(r.value * 2, s.value) TH_LOG("%s: pevt %llu ns, stock %llu ns", who,
					       (unsigned long long)r.value,
					       (unsigned long long)s.value);
}

static void use_events(struct __test_metadata *_metadata)
{
	struct perf_event_attr attr;
	int dev, fd, cfd, sfd, scfd, go[2], status;
	pid_t child;
	char c;

	dev = pevt_dev_open();
	ASSERT_LE(0, dev) TH_LOG("%s: %s", PEVT_DEVICE_PATH, strerror(errno));
	pevt_attr_clock(&attr, PERF_COUNT_SW_TASK_CLOCK,
			PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING, 0);
	fd = pevt_open(dev, &attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd);
	sfd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, sfd) TH_LOG("perf_event_open: %s", strerror(errno));

	ASSERT_EQ(0, pipe(go));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		burn_cpu_ns(20 * NSEC_PER_MSEC);
		_exit(0);
	}
	cfd = pevt_open(dev, &attr, child, -1, -1, 0);
	ASSERT_LE(0, cfd);
	scfd = sys_perf_event_open(&attr, child, -1, -1, 0);
	ASSERT_LE(0, scfd) TH_LOG("perf_event_open: %s", strerror(errno));
	ASSERT_EQ(1, write(go[1], "g", 1));
	burn_cpu_ns(20 * NSEC_PER_MSEC);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	check_count(_metadata, fd, sfd, "self");
	check_count(_metadata, cfd, scfd, "child");
	close(go[0]);
	close(go[1]);
	close(scfd);
	close(cfd);
	close(sfd);
	close(fd);
	close(dev);
}

TEST(reload_three_times)
{
	int i;

	if (!is_loaded())
		ASSERT_EQ(0, mod_load());
	for (i = 0; i < 3; i++) {
		use_events(_metadata);
		ASSERT_EQ(0, mod_unload()) TH_LOG("round %d: rmmod: %s", i,
					      strerror(errno));
		ASSERT_FALSE(is_loaded());
		ASSERT_EQ(-1, access(PEVT_DEVICE_PATH, F_OK));
		ASSERT_EQ(0, mod_load()) TH_LOG("round %d: insmod: %s", i,
					    strerror(errno));
		ASSERT_TRUE(is_loaded());
	}
	use_events(_metadata);
}

TEST(rmmod_refused_while_event_open)
{
	struct perf_event_attr attr;
	int dev, fd;

	if (!is_loaded())
		ASSERT_EQ(0, mod_load());
	dev = pevt_dev_open();
	ASSERT_LE(0, dev);
	pevt_attr_clock(&attr, PERF_COUNT_SW_CPU_CLOCK, 0, 0);
	fd = pevt_open(dev, &attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd);

	/* the device fd alone holds the module */
	ASSERT_EQ(-1, mod_unload());
	ASSERT_EQ(EWOULDBLOCK, errno);
	/* and so does the event fd once the device is closed */
	close(dev);
	ASSERT_EQ(-1, mod_unload());
	ASSERT_EQ(EWOULDBLOCK, errno);
	ASSERT_TRUE(is_loaded());

	close(fd);
	ASSERT_EQ(0, mod_unload()) TH_LOG("rmmod after close: %s", strerror(errno));
	ASSERT_EQ(0, mod_load());
}

/* A CPU event and a task event of a child that outlives nothing: the
 * child exits with its event open; close later; unload works.
 */
TEST(unload_after_task_exit)
{
	struct perf_event_attr attr;
	int dev, fd, status, go[2];
	pid_t child;
	char c;

	if (!is_loaded())
		ASSERT_EQ(0, mod_load());
	dev = pevt_dev_open();
	ASSERT_LE(0, dev);
	pevt_attr_clock(&attr, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
	ASSERT_EQ(0, pipe(go));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		burn_cpu_ns(10 * NSEC_PER_MSEC);
		_exit(0);
	}
	fd = pevt_open(dev, &attr, child, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("open on child: %s", strerror(errno));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	close(go[0]);
	close(go[1]);
	close(dev);
	ASSERT_EQ(-1, mod_unload());
	close(fd);
	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(0, mod_load());
}

TEST_HARNESS_MAIN
