// SPDX-License-Identifier: GPL-2.0
/*
 * Context scheduler edge cases (issue 13), on a 2-slot vPMU, under both
 * policies where both apply:
 *
 *  - foreign_slot: slot 0 of CPU 0 held by the stock side (a pinned stock
 *    event, or the debugfs slot holder) and two single-event CPU-0 pevt
 *    groups: both must share slot 1 (~50/50; rotid used to plan for both
 *    slots and run one group 100%, the other 0%, forever), and once the
 *    slot is given back both run all the time.
 *  - group_matching: a group {mask 0x3, mask 0x1} fits an empty 2-slot
 *    vPMU (leader on slot 1, sibling on slot 0), pinned or flexible, as
 *    through perf_event_open; a greedy add put the leader on slot 0 and
 *    the group never ran (pinned: ERROR).
 *  - policy_switch: switching policy at run time hands over at once: in
 *    the second right after the switch every group runs and the tick
 *    runs (rotid -> classic used to leave the groups rotid had placed
 *    at 100/100/0/0 with no tick until the next context switch).
 *  - sw_switch_timer: two tasks with only software events ping-ponging on
 *    CPU 1 cause no scheduler timer run (they used to cost one per switch
 *    or so under rotid).
 *  - irqoff: 60 groups of 3 on 64 slots (24 on debug): rot_plan() runs in a work item,
 *    so the longest tick/IPI pass (irqs off) is shorter than the longest
 *    plan (it used to contain it).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "kselftest_harness.h"
#include "../common.h"
#include "../live_stats.h"
#include "../sched_plan.h"

#define SLOTS_DBG	"/sys/kernel/debug/pevt_vpmu/slots"
#define RF_TIMES	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

static void vpmu_attr(struct perf_event_attr *a, __u64 mask, int pinned)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = vpmu_type();
	a->config = 0;		/* ns on CPU */
	a->config1 = mask;
	a->pinned = pinned;
	a->read_format = RF_TIMES;
}

/* pevt vPMU event: @pid/@cpu as for perf_event_open. */
static int pevt_vpmu(int dev, pid_t pid, int cpu, __u64 mask, int pinned, int group)
{
	struct perf_event_attr a;

	vpmu_attr(&a, mask, pinned);
	return pevt_open(dev, &a, pid, cpu, group, 0);
}

static int stock_vpmu(pid_t pid, int cpu, __u64 mask, int pinned, int group)
{
	struct perf_event_attr a;

	vpmu_attr(&a, mask, pinned);
	return sys_perf_event_open(&a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

/* Share (%) of running over enabled between two reads. */
static double delta_share(const struct read_one *a, const struct read_one *b)
{
	__u64 e = b->enabled - a->enabled;

	return e ? 100.0 * (double)(b->running - a->running) / (double)e : -1;
}

/* Owners of CPU @cpu's slots, as the debugfs holder file prints them. */
static int slot_owners(int cpu, char *own, size_t len)
{
	FILE *f = fopen(SLOTS_DBG, "r");
	char o[72];
	unsigned int c;
	unsigned long long used;
	int ret = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%u %llx %71s", &c, &used, o) == 3)
		if ((int)c == cpu) {
			snprintf(own, len, "%s", o);
			ret = 0;
		}
	fclose(f);
	return ret;
}

static void reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

FIXTURE(edge) {
	int dev;
};

FIXTURE_VARIANT(edge) {
	const char *policy;
	const char *other;
};

FIXTURE_VARIANT_ADD(edge, rotid) { .policy = "rotid", .other = "classic" };
FIXTURE_VARIANT_ADD(edge, classic) { .policy = "classic", .other = "rotid" };

FIXTURE_SETUP(edge)
{
	self->dev = -1;
	if (geteuid())
		SKIP(return, "needs root");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	ASSERT_EQ(0, sched_reload("nr_counters=2"));
	ASSERT_EQ(0, write_str(SCHED_PARAMS "/policy", variant->policy));
	self->dev = pevt_dev_open();
	ASSERT_LE(0, self->dev);
}

FIXTURE_TEARDOWN(edge)
{
	if (self->dev >= 0)
		close(self->dev);
	sched_reload("");
}

/*
 * Slot 0 of CPU 0 held by the stock side: by a pinned stock event
 * (@stock) or by the debugfs holder.  Two pevt CPU-0 groups share slot 1.
 */
static void foreign_slot(struct __test_metadata *_metadata, int dev, int stock,
			 const char *policy)
{
	struct read_one a[2], b[2], c[2];
	struct plan_info p0, p1;
	char own[72];
	int fd[2], hold = -1, i;

	ASSERT_EQ(0, pin_to_cpu(1));
	if (stock) {
		hold = stock_vpmu(-1, 0, 0x1, 1, -1);
		ASSERT_LE(0, hold) TH_LOG("stock pinned on slot 0: %s", strerror(errno));
	} else {
		ASSERT_EQ(0, write_str(SLOTS_DBG, "get 0 1"));
	}
	ASSERT_EQ(0, slot_owners(0, own, sizeof(own)));
	EXPECT_EQ(stock ? 's' : 'p', own[0]) TH_LOG("slot 0 of CPU 0: %s", own);
	for (i = 0; i < 2; i++) {
		fd[i] = pevt_vpmu(dev, -1, 0, 0, 0, -1);
		ASSERT_LE(0, fd[i]) TH_LOG("pevt group %d: %s", i, strerror(errno));
	}
	sleep_ns(NSEC_PER_SEC / 10);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(24, read_one(fd[i], &a[i]));
	ASSERT_EQ(0, read_plan(0, &p0));
	sleep_ns(NSEC_PER_SEC);
	ASSERT_EQ(0, read_plan(0, &p1));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(24, read_one(fd[i], &b[i]));
	TH_LOG("%s, slot 0 held by %s: %.1f%% %.1f%% (target 50 50); timer runs %lld, rotations %lld, plans %lld, R %d",
	       policy, stock ? "a pinned stock event" : "the debugfs holder",
	       delta_share(&a[0], &b[0]), delta_share(&a[1], &b[1]),
	       p1.timer - p0.timer, p1.ticks - p0.ticks, p1.plans - p0.plans, p1.R);
	for (i = 0; i < 2; i++)
		EXPECT_LE(5.0, delta_share(&a[i], &b[i]))
			TH_LOG("a group starves next to a held slot");
	EXPECT_GE(1.03 * (double)(b[0].enabled - a[0].enabled) + 2e6,
		  (double)(b[0].running - a[0].running + b[1].running - a[1].running))
		TH_LOG("two groups on one slot ran longer than the slot existed");

	/* The slot comes back: both groups run all the time. */
	if (stock)
		close(hold);
	else
		ASSERT_EQ(0, write_str(SLOTS_DBG, "put 0 0"));
	sleep_ns(NSEC_PER_SEC / 10);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(24, read_one(fd[i], &b[i]));
	sleep_ns(NSEC_PER_SEC / 2);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(24, read_one(fd[i], &c[i]));
	TH_LOG("%s, slot 0 given back: %.1f%% %.1f%% (target 100 100)", policy,
	       delta_share(&b[0], &c[0]), delta_share(&b[1], &c[1]));
	for (i = 0; i < 2; i++) {
		EXPECT_LE(95.0, delta_share(&b[i], &c[i]))
			TH_LOG("group %d does not get the freed slot", i);
		close(fd[i]);
	}
}

TEST_F(edge, foreign_slot_debugfs)
{
	foreign_slot(_metadata, self->dev, 0, variant->policy);
}

TEST_F(edge, foreign_slot_stock_pinned)
{
	foreign_slot(_metadata, self->dev, 1, variant->policy);
}

/*
 * {mask 0x3, mask 0x1}: only leader on slot 1 + sibling on slot 0 fits.
 * Pinned and flexible, on CPU 0, pevt and stock side by side in time.
 */
TEST_F(edge, group_matching)
{
	struct read_one r[2];
	int pinned, be, lead, sib;

	for (pinned = 0; pinned < 2; pinned++) {
		for (be = 0; be < 2; be++) {
			if (be == 0) {
				lead = pevt_vpmu(self->dev, -1, 0, 0x3, pinned, -1);
				ASSERT_LE(0, lead);
				sib = pevt_vpmu(self->dev, -1, 0, 0x1, 0, lead);
			} else {
				lead = stock_vpmu(-1, 0, 0x3, pinned, -1);
				ASSERT_LE(0, lead);
				sib = stock_vpmu(-1, 0, 0x1, 0, lead);
			}
			ASSERT_LE(0, sib) TH_LOG("sibling: %s", strerror(errno));
			sleep_ns(NSEC_PER_SEC / 5);
			EXPECT_EQ(24, read_one(lead, &r[0]))
				TH_LOG("%s %s group in error", be ? "stock" : "pevt",
				       pinned ? "pinned" : "flexible");
			EXPECT_EQ(24, read_one(sib, &r[1]));
			TH_LOG("%s %s {0x3, 0x1}: running %.1f ms of %.1f ms", be ? "stock" : "pevt",
			       pinned ? "pinned" : "flexible", r[0].running / 1e6,
			       r[0].enabled / 1e6);
			EXPECT_LT(0, r[0].enabled);
			EXPECT_LE(0.9 * r[0].enabled, (double)r[0].running);
			EXPECT_LE(0.9 * r[1].enabled, (double)r[1].running);
			close(sib);
			close(lead);
		}
	}
}

/*
 * Four single-event groups, per task (a busy child on CPU 1) or per CPU
 * (CPU 1), on 2 slots: ~50% each under both policies.  Switch policy while
 * they run, then in the window starting 20 ms later every group must run.
 */
TEST_F(edge, policy_switch)
{
	struct read_one a[4], b[4];
	struct plan_info p0, p1;
	int task, fd[4], i, k;
	pid_t child;

	ASSERT_EQ(0, pin_to_cpu(0));
	for (task = 0; task < 2; task++) {
		child = sched_busy_child(1);
		ASSERT_LT(0, child);
		sleep_ns(NSEC_PER_SEC / 20);
		for (i = 0; i < 4; i++) {
			fd[i] = pevt_vpmu(self->dev, task ? child : -1, task ? -1 : 1,
					  0, 0, -1);
			ASSERT_LE(0, fd[i]);
		}
		sleep_ns(NSEC_PER_SEC / 4);
		for (k = 0; k < 2; k++) {
			const char *to = k ? variant->policy : variant->other;

			ASSERT_EQ(0, write_str(SCHED_PARAMS "/policy", to));
			sleep_ns(20 * NSEC_PER_MSEC);
			for (i = 0; i < 4; i++)
				ASSERT_EQ(24, read_one(fd[i], &a[i]));
			ASSERT_EQ(0, read_plan(1, &p0));
			sleep_ns(NSEC_PER_SEC);
			ASSERT_EQ(0, read_plan(1, &p1));
			for (i = 0; i < 4; i++)
				ASSERT_EQ(24, read_one(fd[i], &b[i]));
			TH_LOG("%s groups, -> %s: %.1f %.1f %.1f %.1f (target 50 each); timer runs %lld, rotations %lld, plans %lld, R %d",
			       task ? "task" : "CPU", to, delta_share(&a[0], &b[0]),
			       delta_share(&a[1], &b[1]), delta_share(&a[2], &b[2]),
			       delta_share(&a[3], &b[3]), p1.timer - p0.timer,
			       p1.ticks - p0.ticks, p1.plans - p0.plans, p1.R);
			/*
			 * Stranded groups sit at 0 with no tick running; a
			 * loaded host only skews the split (ticks come late).
			 */
			for (i = 0; i < 4; i++)
				EXPECT_LE(10.0, delta_share(&a[i], &b[i]))
					TH_LOG("a group stranded after the switch to %s", to);
			EXPECT_LE(10, p1.timer - p0.timer) TH_LOG("no tick after the switch");
		}
		for (i = 0; i < 4; i++)
			close(fd[i]);
		reap(child);
	}
}

/* Ping-pong partner on CPU 1, counting round trips in *@n. */
static pid_t pong_child(int rfd, int wfd, volatile unsigned long *n)
{
	pid_t pid = fork();

	if (pid == 0) {
		char c;

		pin_to_cpu(1);
		while (read(rfd, &c, 1) == 1 && write(wfd, &c, 1) == 1)
			if (n)
				(*n)++;
		_exit(0);
	}
	return pid;
}

/*
 * Two tasks with only a task-clock event each, taking turns on CPU 1:
 * nothing there needs a slot, so the scheduler's timer never has to run.
 */
TEST_F(edge, sw_switch_timer)
{
	volatile unsigned long *n;
	struct perf_event_attr a;
	struct plan_info p0, p1;
	int p1fd[2], p2fd[2], fd[2];
	unsigned long n0, n1;
	double per;
	pid_t x, y;
	char c = 'x';

	n = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, n);
	*n = 0;
	ASSERT_EQ(0, pin_to_cpu(0));
	ASSERT_EQ(0, pipe(p1fd));
	ASSERT_EQ(0, pipe(p2fd));
	x = pong_child(p1fd[0], p2fd[1], n);
	y = pong_child(p2fd[0], p1fd[1], NULL);
	ASSERT_LT(0, x);
	ASSERT_LT(0, y);
	pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK, RF_TIMES, 0);
	fd[0] = pevt_open(self->dev, &a, x, -1, -1, 0);
	fd[1] = pevt_open(self->dev, &a, y, -1, -1, 0);
	ASSERT_LE(0, fd[0]);
	ASSERT_LE(0, fd[1]);
	ASSERT_EQ(1, write(p1fd[1], &c, 1));
	sleep_ns(NSEC_PER_SEC / 5);
	ASSERT_EQ(0, read_plan(1, &p0));
	n0 = *n;
	sleep_ns(NSEC_PER_SEC);
	ASSERT_EQ(0, read_plan(1, &p1));
	n1 = *n;
	/* a round trip is two switches on CPU 1 (x -> y -> x) */
	per = n1 > n0 ? (double)(p1.timer - p0.timer) / (2.0 * (n1 - n0)) : -1;
	TH_LOG("%s: %lu switches, %lld timer runs, %.3f per switch",
	       variant->policy, 2 * (n1 - n0), p1.timer - p0.timer, per);
	EXPECT_LT(100, n1 - n0) TH_LOG("the tasks hardly switched");
	EXPECT_EQ(0, p1.timer - p0.timer);
	close(fd[0]);
	close(fd[1]);
	reap(x);
	reap(y);
	close(p1fd[0]); close(p1fd[1]); close(p2fd[0]); close(p2fd[1]);
	munmap((void *)n, 4096);
}

/* Worst single call of a bench-instrument target, or -1 (no kretprobes). */
static long long probe_max_ns(const char *name)
{
	FILE *f = fopen("/sys/kernel/debug/pevt/probes", "r");
	char line[200], n[32];
	long long c, ns, mx, ret = -1;
	int armed, missed;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s armed %d calls %lld ns %lld missed %d max_ns %lld",
			   n, &armed, &c, &ns, &missed, &mx) == 6 && !strcmp(n, name))
			ret = mx;
	fclose(f);
	return ret;
}

TEST_F_TIMEOUT(edge, irqoff, 180)
{
	const char *k = getenv("PEVT_KERNEL");
	/* KASAN + lockdep under TCG: a 64-slot plan takes ~1 s there */
	int ng = k && !strcmp(k, "debug") ? 24 : 60;
	int fd[60][3], g, m, probes;
	struct plan_info p;

	if (strcmp(variant->policy, "rotid"))
		SKIP(return, "rotid plans; classic does not");
	close(self->dev);
	self->dev = -1;
	ASSERT_EQ(0, sched_reload("nr_counters=64"));
	self->dev = pevt_dev_open();
	ASSERT_LE(0, self->dev);
	probes = !write_str("/sys/kernel/debug/pevt/probes", "on");
	for (g = 0; g < ng; g++)
		for (m = 0; m < 3; m++) {
			fd[g][m] = pevt_vpmu(self->dev, -1, 1, 0, 0, m ? fd[g][0] : -1);
			ASSERT_LE(0, fd[g][m]) TH_LOG("group %d member %d: %s", g, m,
						      strerror(errno));
		}
	sleep_ns(NSEC_PER_SEC);
	ASSERT_EQ(0, read_plan(1, &p));
	TH_LOG("%d groups of 3 on 64 slots: R %d, %lld plans, longest plan %.1f us (work), longest tick/IPI pass %.1f us (irqs off)",
	       ng, p.R, p.plans, p.plan_ns_max / 1e3, p.pass_ns_max / 1e3);
	if (probes)
		TH_LOG("instrument, worst call: pevt_tick %.1f us, pevt_replan %.1f us, pevt_switch %.1f us",
		       probe_max_ns("pevt_tick") / 1e3, probe_max_ns("pevt_replan") / 1e3,
		       probe_max_ns("pevt_switch") / 1e3);
	EXPECT_TRUE(p.valid);
	EXPECT_LE(1, p.plans);
	EXPECT_LT(0, p.plan_ns_max);
	EXPECT_LT(p.pass_ns_max, p.plan_ns_max)
		TH_LOG("the irq-off pass is as long as a plan: planning in it?");
	if (probes)
		write_str("/sys/kernel/debug/pevt/probes", "off");
	for (g = ng - 1; g >= 0; g--)
		for (m = 2; m >= 0; m--)
			close(fd[g][m]);
}

TEST_HARNESS_MAIN
