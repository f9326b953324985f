// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler churn (issue 5): for 20 s, threads open, enable, disable and
 * close per-task and per-CPU vPMU/software groups while the monitored
 * tasks migrate across CPUs and the policy and mux interval change under
 * them.  The plan file must stay consistent the whole time (every CPU
 * block well formed, rotation ids below R, states known), reads must
 * satisfy running <= enabled, and the run must leave no warning (the VM
 * runner fails on any).  Module loaded with nr_counters=2, restored after.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "kselftest_harness.h"
#include "../common.h"
#include "../live_stats.h"

#define VPMU_SYSFS	"/sys/bus/event_source/devices/pevt_vpmu"
#define PARAMS		"/sys/module/pevt/parameters"
#define PLAN		"/sys/kernel/debug/pevt_sched/plan"
#define NWORKERS	4
#define NTHREADS	3
#define NFDS		8
#define RUN_S		20

static int reload(const char *params)
{
	const char *ko = getenv("PEVT_KO") ?: "/pevt.ko";
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rmmod pevt 2>/dev/null; insmod %s %s", ko, params);
	return system(cmd) == 0 && read_long(VPMU_SYSFS "/type") > 0 ? 0 : -1;
}

static volatile int stop;
static pid_t workers[NWORKERS];
static int ncpus, vtype;
static int bad_read, bad_plan, opened, plans_checked;
static char bad_line[512];

static void worker(int idx)
{
	volatile unsigned long x = 0;
	int cpu = idx % ncpus;

	for (;;) {
		pin_to_cpu(cpu);
		for (int i = 0; i < 200000; i++)
			x++;
		cpu = (cpu + 1) % ncpus;
	}
}

struct ev { int fd[2]; int n; };

static void ev_close(struct ev *e)
{
	for (int i = e->n - 1; i >= 0; i--)
		close(e->fd[i]);
	e->n = 0;
}

static void ev_open(int dev, struct ev *e, unsigned int *seed)
{
	struct perf_event_attr a;
	int task = rand_r(seed) % 2;
	pid_t pid = task ? workers[rand_r(seed) % NWORKERS] : -1;
	int cpu = task ? -1 : rand_r(seed) % ncpus;
	int members = 1 + rand_r(seed) % 2;
	int pinned = rand_r(seed) % 8 == 0;

	e->n = 0;
	for (int i = 0; i < members; i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		if (rand_r(seed) % 4 == 0) {
			a.type = PERF_TYPE_SOFTWARE;
			a.config = task ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK;
		} else {
			a.type = vtype;
			a.config = rand_r(seed) % 3;
			a.config1 = rand_r(seed) % 3;	/* any, slot 0, slot 1 */
		}
		a.pinned = pinned && i == 0;
		a.disabled = rand_r(seed) % 4 == 0;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
		int fd = pevt_open(dev, &a, pid, cpu, i ? e->fd[0] : -1, 0);

		if (fd < 0)
			break;	/* e.g. group does not fit, task gone */
		e->fd[e->n++] = fd;
		__atomic_add_fetch(&opened, 1, __ATOMIC_RELAXED);
	}
}

static void *churner(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	struct ev evs[NFDS] = { 0 };
	int dev = pevt_dev_open();

	if (dev < 0)
		return NULL;
	while (!stop) {
		struct ev *e = &evs[rand_r(&seed) % NFDS];
		struct read_one r;

		switch (rand_r(&seed) % 4) {
		case 0:
			ev_close(e);
			ev_open(dev, e, &seed);
			break;
		case 1:
			if (e->n)
				ioctl(e->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
			break;
		case 2:
			if (e->n)
				ioctl(e->fd[rand_r(&seed) % e->n], PERF_EVENT_IOC_DISABLE, 0);
			break;
		case 3:
			if (e->n && read_one(e->fd[0], &r) > 0 &&
			    r.running > r.enabled)
				__atomic_add_fetch(&bad_read, 1, __ATOMIC_RELAXED);
			break;
		}
		usleep(rand_r(&seed) % 2000);
	}
	for (int i = 0; i < NFDS; i++)
		ev_close(&evs[i]);
	close(dev);
	return NULL;
}

/* One pass over the plan file; returns 0 if consistent. */
static int check_plan(void)
{
	FILE *f = fopen(PLAN, "r");
	char line[512];
	int R = 0, groups = 0, seen = 0, valid = 0, cpus = 0, ret = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int c, v, o, r, gi, rot, nR, ng;
		long long t, p;
		char pol[16], st[16];

		if (sscanf(line, "cpu %d policy %15s valid %d overflow %d R %d r %d ticks %lld plans %lld groups %d",
			   &c, pol, &v, &o, &nR, &r, &t, &p, &ng) == 9) {
			/* the previous CPU's block is complete */
			if (cpus && valid && seen != groups)
				ret = -1;
			R = nR;
			groups = ng;
			cpus++;
			seen = 0;
			valid = v;
			if (v && R > 0 && r >= R)
				ret = -1;
			if (!v && groups)
				ret = -1;
			if (ret && !bad_line[0])
				snprintf(bad_line, sizeof(bad_line), "%s", line);
			continue;
		}
		if (sscanf(line, "group %d id %*u task %*d pinned %*d members %*u state %15s rot %d",
			   &gi, st, &rot) != 3 || gi != seen) {
			ret = -1;
		} else if (!strcmp(st, "rot")) {
			if (rot < 0 || rot >= R)
				ret = -1;
		} else if (strcmp(st, "always_on") && strcmp(st, "always_off") &&
			   strcmp(st, "pinned") && strcmp(st, "error")) {
			ret = -1;
		}
		if (ret && !bad_line[0])
			snprintf(bad_line, sizeof(bad_line), "%s", line);
		seen++;
	}
	if (valid && seen != groups)
		ret = -1;
	fclose(f);
	if (cpus != ncpus)
		ret = -1;
	return ret;
}

TEST(churn)
{
	pthread_t th[NTHREADS];
	__u64 end;
	int i, round = 0;

	if (geteuid())
		SKIP(return, "needs root");
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_EQ(0, reload("nr_counters=2"));
	vtype = read_long(VPMU_SYSFS "/type");
	for (i = 0; i < NWORKERS; i++) {
		workers[i] = fork();
		ASSERT_LE(0, workers[i]);
		if (!workers[i])
			worker(i);
	}
	for (i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, churner,
					    (void *)(uintptr_t)(i + 1)));
	end = ts_ns(CLOCK_MONOTONIC) + RUN_S * NSEC_PER_SEC;
	while (ts_ns(CLOCK_MONOTONIC) < end) {
		if (check_plan())
			bad_plan++;
		plans_checked++;
		/* Flip the policy and the interval now and then. */
		if (++round % 40 == 0)
			write_str(PARAMS "/policy", round % 80 ? "classic" : "rotid");
		if (round % 25 == 0)
			write_str(PARAMS "/mux_interval_ms", round % 50 ? "1" : "4");
		usleep(50000);
	}
	write_str(PARAMS "/policy", "rotid");
	stop = 1;
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NWORKERS; i++) {
		kill(workers[i], SIGKILL);
		waitpid(workers[i], NULL, 0);
	}
	TH_LOG("opened %d events, %d plan checks, %d inconsistent, %d bad reads",
	       opened, plans_checked, bad_plan, bad_read);
	EXPECT_EQ(0, bad_plan) TH_LOG("first bad line: %s", bad_line);
	EXPECT_EQ(0, bad_read);
	EXPECT_LT(100, opened);
	EXPECT_EQ(0, check_plan());
	ASSERT_EQ(0, reload(""));
}

TEST_HARNESS_MAIN
