// SPDX-License-Identifier: GPL-2.0
/*
 * Context scheduler (issue 5): shares of per-task and per-CPU groups on
 * the vPMU with 2 slots, under policy rotid and classic, next to the stock
 * kernel's own shares for the same groups (perf_event_open on pevt_vpmu).
 *
 * Every task group's task is a busy child pinned to the CPU of the CPU
 * groups, so both kinds compete for the same CPU's slots.  The module is
 * reloaded with nr_counters=2 and restored plain at the end.
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "kselftest_harness.h"
#include "../common.h"
#include "../live_stats.h"
#include "../sched_plan.h"

#define VPMU_SYSFS	SCHED_VPMU
#define PARAMS		SCHED_PARAMS
#define CPU		1
#define RUN_NS		(3 * NSEC_PER_SEC)	/* 2 s: ±3 points missed under host load */
#define MAXG		8

enum backend { PEVT, STOCK };

/* One group to open: kind and slot mask. */
struct gspec {
	int task;	/* 1: per-task (the busy child), 0: per-CPU on CPU */
	int pinned;
	int sw;		/* software task-clock instead of a vPMU counter */
	int members;
	__u64 mask;	/* config1 of every member, 0 = any */
};

struct scen {
	int n;
	/*
	 * CPU groups compete with task groups: their target holds only while
	 * the task runs; while it is off the CPU they have the slots alone
	 * (100%).  The task's running fraction of the CPU is its groups'
	 * enabled time over the CPU groups' enabled time.
	 */
	int compete;
	/*
	 * Groups 0 and 1 share one slot: group 0 has it alone until group 1
	 * is opened, so its target is that gap plus half of the rest.
	 */
	int share_slot01;
	struct gspec g[MAXG];
	int fd[MAXG];
	int sfd[MAXG][4];	/* siblings: closing one would remove it */
	double share[MAXG];	/* running / enabled, percent */
	__u64 enabled[MAXG], running[MAXG];
};

static int open_group(enum backend be, int dev, const struct gspec *g,
		      pid_t child, int *leader, int *sfd)
{
	struct perf_event_attr a;
	int i, fd = -1, lfd = -1;

	for (i = 0; i < g->members; i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		if (g->sw) {
			a.type = PERF_TYPE_SOFTWARE;
			a.config = g->task ? PERF_COUNT_SW_TASK_CLOCK :
					     PERF_COUNT_SW_CPU_CLOCK;
		} else {
			a.type = read_long(VPMU_SYSFS "/type");
			a.config = 0;	/* cpu_ns */
			a.config1 = g->mask;
		}
		a.pinned = g->pinned && i == 0;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
		if (be == PEVT)
			fd = pevt_open(dev, &a, g->task ? child : -1,
				       g->task ? -1 : CPU, lfd, 0);
		else
			fd = sys_perf_event_open(&a, g->task ? child : -1,
						 g->task ? -1 : CPU, lfd, 0);
		if (fd < 0)
			return -1;
		if (i == 0)
			lfd = fd;
		else
			sfd[i - 1] = fd;
	}
	*leader = lfd;
	return 0;
}

/*
 * Open the scenario on @be, let it run RUN_NS, read each leader's share.
 * @pi: if set, the plan of CPU just before the events are closed.
 */
static int run_scen(enum backend be, struct scen *s, struct plan_info *pi)
{
	pid_t child = sched_busy_child(CPU);
	int dev = -1, i, ret = -1;

	if (child < 0)
		return -1;
	if (be == PEVT) {
		dev = pevt_dev_open();
		if (dev < 0)
			goto out;
	}
	memset(s->sfd, -1, sizeof(s->sfd));
	for (i = 0; i < s->n; i++)
		s->fd[i] = -1;
	sleep_ns(NSEC_PER_SEC / 10);	/* the child is on its CPU */
	for (i = 0; i < s->n; i++)
		if (open_group(be, dev, &s->g[i], child, &s->fd[i], s->sfd[i]))
			goto out;
	sleep_ns(RUN_NS);
	if (pi && read_plan(CPU, pi))
		goto out;
	/*
	 * Last group first: a group's running time is then read no later
	 * than any earlier group's enabled time, which makes "two groups
	 * sharing one slot never run longer than the first one existed"
	 * exact (constraint_conflict) however slowly the reads go.
	 */
	for (i = s->n - 1; i >= 0; i--) {
		struct read_one r;

		if (read_one(s->fd[i], &r) < 0)
			goto out;
		s->enabled[i] = r.enabled;
		s->running[i] = r.running;
		s->share[i] = r.enabled ? 100.0 * r.running / r.enabled : -1;
	}
	ret = 0;
out:
	for (i = 0; i < s->n; i++) {
		for (int j = 0; j < 4; j++)
			if (s->sfd[i][j] >= 0)
				close(s->sfd[i][j]);
		if (s->fd[i] >= 0)
			close(s->fd[i]);
	}
	if (dev >= 0)
		close(dev);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return ret;
}

static void log_shares(struct __test_metadata *_metadata, const char *what,
		       const struct scen *s)
{
	char buf[256];
	int i, o = 0;

	for (i = 0; i < s->n; i++)
		o += snprintf(buf + o, sizeof(buf) - o, " %s%d=%.1f",
			      s->g[i].task ? "T" : "C", i, s->share[i]);
	TH_LOG("%s:%s", what, buf);
}

static void scen_init(struct scen *s, int ntask, int ncpu)
{
	int i;

	memset(s, 0, sizeof(*s));
	/* CPU groups first, then task groups: creation order is stable. */
	for (i = 0; i < ncpu; i++)
		s->g[s->n++] = (struct gspec){ .task = 0, .members = 1 };
	for (i = 0; i < ntask; i++)
		s->g[s->n++] = (struct gspec){ .task = 1, .members = 1 };
}

FIXTURE(sched) {
	int dummy;
};

FIXTURE_VARIANT(sched) {
	const char *policy;
};

FIXTURE_VARIANT_ADD(sched, rotid) { .policy = "rotid" };
FIXTURE_VARIANT_ADD(sched, classic) { .policy = "classic" };

FIXTURE_SETUP(sched)
{
	if (geteuid())
		SKIP(return, "needs root");
	if (sysconf(_SC_NPROCESSORS_ONLN) <= CPU)
		SKIP(return, "needs CPU %d", CPU);
	ASSERT_EQ(0, sched_reload("nr_counters=2"));
	ASSERT_EQ(0, write_str(PARAMS "/policy", variant->policy));
	ASSERT_EQ(0, pin_to_cpu(0));
}

FIXTURE_TEARDOWN(sched)
{
	sched_reload("");
}

static int is_rotid(const FIXTURE_VARIANT(sched) *v)
{
	return !strcmp(v->policy, "rotid");
}

/*
 * rotid's targets for @s in @tgt; returns the largest distance of a share
 * from its target, in points.
 */
static double rotid_targets(struct __test_metadata *_metadata,
			    const struct scen *s, const double *rotid_target,
			    double *tgt)
{
	double f = 1, worst = 0;
	__u64 te = 0, ce = 0;
	int i;

	for (i = 0; i < s->n; i++) {
		if (s->g[i].task && s->enabled[i] > te)
			te = s->enabled[i];
		if (!s->g[i].task && s->enabled[i] > ce)
			ce = s->enabled[i];
	}
	if (s->compete && ce)
		f = te < ce ? (double)te / ce : 1.0;
	for (i = 0; i < s->n; i++) {
		tgt[i] = rotid_target[i];
		if (s->compete && !s->g[i].task)
			tgt[i] = f * rotid_target[i] + (1 - f) * 100;
		if (i == 0 && s->share_slot01 && s->enabled[0] > s->enabled[1]) {
			double gap = (double)(s->enabled[0] - s->enabled[1]);

			tgt[0] = 100 * (gap + 0.5 * s->enabled[1]) / s->enabled[0];
			TH_LOG("group 0 alone for %.1f ms: target %.1f%%",
			       gap / 1e6, tgt[0]);
		}
		if (fabs(s->share[i] - tgt[i]) > worst)
			worst = fabs(s->share[i] - tgt[i]);
	}
	TH_LOG("task on CPU %.1f%% of the time", 100 * f);
	return worst;
}

/*
 * Check @s against per-group targets; classic: stock's shares.
 *
 * The guest is TCG with both vCPUs on one host thread: a host stall of a
 * few hundred ms inside one rotation hands that rotation's groups the
 * whole stall (CI once saw 71/58/71 for 67/67/67 over 3 s on 6.1, the
 * sum still 200%).  A rotid run out of bounds is therefore run once more
 * and the second run decides; both are logged.
 */
static void check_shares(struct __test_metadata *_metadata,
			 const FIXTURE_VARIANT(sched) *variant,
			 struct scen *s, const double *rotid_target)
{
	struct scen st = *s;
	int i;

	log_shares(_metadata, variant->policy, s);
	if (is_rotid(variant)) {
		double tgt[MAXG], worst;

		worst = rotid_targets(_metadata, s, rotid_target, tgt);
		if (worst > 3.0) {
			TH_LOG("%.1f points off target: running it again", worst);
			ASSERT_EQ(0, run_scen(PEVT, s, NULL));
			log_shares(_metadata, "rotid (again)", s);
			rotid_targets(_metadata, s, rotid_target, tgt);
		}
		for (i = 0; i < s->n; i++) {
			EXPECT_LE(fabs(s->share[i] - tgt[i]), 3.0)
				TH_LOG("group %d: %.1f%%, target %.0f%%", i,
				       s->share[i], tgt[i]);
		}
		return;
	}
	ASSERT_EQ(0, run_scen(STOCK, &st, NULL));
	log_shares(_metadata, "stock", &st);
	for (i = 0; i < s->n; i++) {
		EXPECT_LE(fabs(s->share[i] - st.share[i]), 5.0)
			TH_LOG("group %d: classic %.1f%%, stock %.1f%%", i,
			       s->share[i], st.share[i]);
	}
}

TEST_F(sched, two_task_two_cpu)
{
	double target[] = { 50, 50, 50, 50 };
	struct plan_info pi;
	struct scen s;

	scen_init(&s, 2, 2);
	s.compete = 1;
	ASSERT_EQ(0, run_scen(PEVT, &s, &pi));
	if (is_rotid(variant)) {
		TH_LOG("plan of CPU %d: R %d, plans %lld, saved-plan hits %lld, timer runs %lld",
		       CPU, pi.R, pi.plans, pi.hits, pi.timer);
		EXPECT_EQ(2, pi.R);
	}
	check_shares(_metadata, variant, &s, target);
}

TEST_F(sched, four_task_one_cpu)
{
	double target[] = { 40, 40, 40, 40, 40 };
	struct plan_info pi;
	struct scen s;

	scen_init(&s, 4, 1);
	s.compete = 1;
	ASSERT_EQ(0, run_scen(PEVT, &s, &pi));
	if (is_rotid(variant))
		EXPECT_EQ(5, pi.R);
	check_shares(_metadata, variant, &s, target);
}

/* Pinned CPU groups fill both slots: flexible task groups never run. */
TEST_F(sched, pinned_fill)
{
	double target[] = { 100, 100, 0, 0 };
	struct plan_info pi;
	struct scen s;

	scen_init(&s, 2, 2);
	s.g[0].pinned = s.g[1].pinned = 1;
	ASSERT_EQ(0, run_scen(PEVT, &s, &pi));
	if (is_rotid(variant)) {
		ASSERT_TRUE(pi.valid);
		EXPECT_STREQ("pinned", pi.state[0]);
		EXPECT_STREQ("pinned", pi.state[1]);
		EXPECT_STREQ("always_off", pi.state[2]);
		EXPECT_STREQ("always_off", pi.state[3]);
		EXPECT_EQ(0, pi.ticks);
		EXPECT_GE(1, pi.R);
	}
	check_shares(_metadata, variant, &s, target);
}

/* Software groups need no slot: 100% next to 3 rotating vPMU groups. */
TEST_F(sched, software_always_on)
{
	double target[] = { 66.7, 66.7, 66.7, 100, 100 };
	struct plan_info pi;
	struct scen s;

	scen_init(&s, 0, 3);
	s.g[s.n++] = (struct gspec){ .task = 1, .sw = 1, .members = 1 };
	s.g[s.n++] = (struct gspec){ .task = 0, .sw = 1, .members = 1 };
	ASSERT_EQ(0, run_scen(PEVT, &s, &pi));
	/*
	 * CPU groups come first in the plan: [3] is the CPU software group.
	 * The task has only a software group: its context is not planned
	 * at all (its groups all go on; no plan, no timer run at a switch).
	 */
	if (is_rotid(variant)) {
		EXPECT_STREQ("always_on", pi.state[3]);
		EXPECT_STREQ("", pi.state[4]);
		EXPECT_EQ(4, pi.groups);
	}
	check_shares(_metadata, variant, &s, target);
}

/*
 * Song Liu's A B C D + E on 2 slots: a 2-member group E next to singles
 * A B.  Packing alone gives rotation 0: A B, rotation 1: E, each 50%,
 * both slots busy in every rotation: nothing is wasted, and the slots are
 * busy all the time (sum of running = 2 x enabled).
 */
TEST_F(sched, no_rotation_wasted)
{
	double target[] = { 50, 50, 50, 66.7, 66.7, 66.7 };
	struct plan_info pi;
	struct scen s;
	double sum = 0;
	int i;

	/* 1) A B + E(2 members): R = 2, 50% each. */
	scen_init(&s, 0, 2);
	s.compete = 1;
	s.g[s.n++] = (struct gspec){ .task = 1, .members = 2 };
	ASSERT_EQ(0, run_scen(PEVT, &s, &pi));
	if (!is_rotid(variant)) {
		check_shares(_metadata, variant, &s, target);
		return;
	}
	check_shares(_metadata, variant, &s, target);
	/* 2) A B C singles: no rotation leaves a slot free -> 2/3 each. */
	scen_init(&s, 1, 2);
	s.compete = 1;
	ASSERT_EQ(0, run_scen(PEVT, &s, &pi));
	check_shares(_metadata, variant, &s, target + 3);
	for (i = 0; i < s.n; i++)
		sum += s.share[i];
	EXPECT_LE(197, (int)sum) TH_LOG("slot utilization %.1f%% of 200%%", sum);
}

/*
 * Share of each open leader of @fd over the time since @prev (running /
 * enabled of the interval, percent); @prev becomes now.  -1 when closed.
 */
static void interval_shares(const int *fd, int n, struct read_one *prev, double *share)
{
	int i;

	for (i = 0; i < n; i++) {
		struct read_one r;
		__u64 de, dr;

		share[i] = -1;
		if (fd[i] < 0 || read_one(fd[i], &r) < 0)
			continue;
		de = r.enabled - prev[i].enabled;
		dr = r.running - prev[i].running;
		share[i] = de ? 100.0 * dr / de : -1;
		prev[i] = r;
	}
}

/*
 * Four phases over the open leaders fd[0..n): all on, fd[2] disabled,
 * enabled again, closed.  Each phase settles 0.3 s, then each leader's
 * share over 1.5 s (over another 1.5 s once if any was off) must be
 * within @tol of want[phase * n + i] (< 0: not checked).
 */
#define KC_PHASES 4
static void key_change_phases(struct __test_metadata *_metadata, const char *policy,
			      int *fd, int n, const char *const *what, const double *want,
			      double tol)
{
	struct read_one prev[8] = { 0 };
	char line[160];
	double sh[8];
	int i, ph, o, try, off;

	ASSERT_GE(8, n);
	for (ph = 0; ph < KC_PHASES; ph++) {
		if (ph == 1)
			ASSERT_EQ(0, ioctl(fd[2], PERF_EVENT_IOC_DISABLE, 0));
		if (ph == 2)
			ASSERT_EQ(0, ioctl(fd[2], PERF_EVENT_IOC_ENABLE, 0));
		if (ph == 3) {
			close(fd[2]);
			fd[2] = -1;
		}
		sleep_ns(3 * NSEC_PER_SEC / 10);
		interval_shares(fd, n, prev, sh);
		/*
		 * A second 1.5 s when the first was off: a loaded debug
		 * kernel's classic rotation read 50.8% and 79.0% for two of
		 * y's groups at 2/3 once (CI, 2026-12-06; tolerance 12).  A
		 * stale plan is off at every switch-in, in both.
		 */
		for (try = 1; try <= 2; try++) {
			sleep_ns(3 * NSEC_PER_SEC / 2);
			interval_shares(fd, n, prev, sh);
			for (i = 0, o = 0; i < n && o < (int)sizeof(line) - 8; i++)
				o += snprintf(line + o, sizeof(line) - o, " %.1f", sh[i]);
			TH_LOG("%s (%s), try %d:%s", what[ph], policy, try, line);
			for (i = 0, off = 0; i < n; i++)
				off += want[ph * n + i] >= 0 && fabs(sh[i] - want[ph * n + i]) > tol;
			if (!off)
				break;
		}
		for (i = 0; i < n; i++) {
			double w = want[ph * n + i];

			if (w < 0)
				continue;
			EXPECT_LE(fabs(sh[i] - w), tol)
				TH_LOG("%s: group %d %.1f%%, want %.1f%%", what[ph], i, sh[i], w);
		}
	}
}

/*
 * The key changes while the groups rotate: three CPU groups on 2 slots
 * (2/3 each), then the third disabled (the other two 100%), enabled
 * again (2/3), closed (100%).  rotid's tick trusts its leaders while the
 * contexts' key generations stand (kmod/sched.c sched_lead_known()): a
 * change that kept the generation would leave the old plan running, with
 * the disabled or closed group's rotation wasted (and a closed leader
 * still in lead[]).  Each phase settles 0.3 s, then is measured over 1.5 s.
 */
TEST_F(sched, key_changes_mid_rotation)
{
	static const char *const what[] = { "3 on", "third disabled", "third enabled again",
					     "third closed" };
	static const double want[][3] = { { 66.7, 66.7, 66.7 }, { 100, 100, -1 },
					   { 66.7, 66.7, 66.7 }, { 100, 100, -1 } };
	struct gspec g = { .task = 0, .members = 1 };
	int dev, fd[3], sfd[4], i;

	dev = pevt_dev_open();
	ASSERT_LE(0, dev);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, open_group(PEVT, dev, &g, -1, &fd[i], sfd));
	key_change_phases(_metadata, variant->policy, fd, 3, what, &want[0][0], 6.0);
	for (i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	close(dev);
}

/* Two groups that both need slot 0 are never on at the same time. */
TEST_F(sched, constraint_conflict)
{
	double target[] = { 50, 50, 100 };
	struct plan_info pi;
	struct scen s;

	scen_init(&s, 1, 2);
	s.g[0].mask = 1;
	s.g[1].mask = 1;
	s.g[2].mask = 2;
	/*
	 * Group 0 has slot 0 to itself until group 1 is opened: half of the
	 * time they share, plus that gap (on the debug kernel under load the
	 * opens took ~0.3 s of the 3: 54.4% against a flat 50 failed).
	 */
	s.share_slot01 = 1;
	ASSERT_EQ(0, run_scen(PEVT, &s, &pi));
	if (is_rotid(variant))
		EXPECT_LE(2, pi.R);
	/* slot 0 is one slot: both conflicting groups fit in its time */
	EXPECT_LE((double)s.running[0] + s.running[1],
		  1.01 * (double)s.enabled[0] + NSEC_PER_MSEC);
	check_shares(_metadata, variant, &s, target);
}

/* Ping-pong partner pinned to CPU: read a byte, write it back, forever. */
static pid_t pong_child(int rfd, int wfd)
{
	pid_t pid = fork();

	if (pid == 0) {
		char c;

		pin_to_cpu(CPU);
		while (read(rfd, &c, 1) == 1 && write(wfd, &c, 1) == 1)
			;
		_exit(0);
	}
	return pid;
}

/* Two ping-pong partners x and y on CPU, the ball not yet thrown. */
struct pong {
	int p1[2], p2[2];
	pid_t x, y;
};

static int pong_start(struct pong *pp)
{
	if (pipe(pp->p1) || pipe(pp->p2))
		return -1;
	pp->x = pong_child(pp->p1[0], pp->p2[1]);	/* x: p1 -> p2 */
	pp->y = pong_child(pp->p2[0], pp->p1[1]);	/* y: p2 -> p1 */
	return pp->x > 0 && pp->y > 0 ? 0 : -1;
}

static int pong_throw(struct pong *pp)
{
	char c = 'x';

	return write(pp->p1[1], &c, 1) == 1 ? 0 : -1;
}

static void pong_stop(struct pong *pp)
{
	kill(pp->x, SIGKILL);
	kill(pp->y, SIGKILL);
	waitpid(pp->x, NULL, 0);
	waitpid(pp->y, NULL, 0);
	close(pp->p1[0]); close(pp->p1[1]); close(pp->p2[0]); close(pp->p2[1]);
}

static int open_vpmu_on(int dev, pid_t pid, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = read_long(VPMU_SYSFS "/type");
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
	return pevt_open(dev, &a, pid, cpu, -1, 0);
}

/*
 * Plans are cached per (CPU ctx, task ctx) pair: two monitored tasks
 * taking turns on one CPU (pipe ping-pong) plan once per pair, then every
 * switch back to a pair swaps its saved plan in.  With one plan per CPU
 * every switch re-planned.
 */
TEST(pair_cache)
{
	int fd[5], dev, i, n = 0;
	struct plan_info a, b;
	struct pong pp;
	__u64 t0;

	ASSERT_EQ(0, write_str(PARAMS "/policy", "rotid"));
	ASSERT_EQ(0, pong_start(&pp));
	dev = pevt_dev_open();
	ASSERT_LE(0, dev);
	/* 1 CPU group + 2 groups per task on 2 slots: R > 1 for each pair. */
	fd[n++] = open_vpmu_on(dev, -1, CPU);
	for (i = 0; i < 2; i++) {
		fd[n++] = open_vpmu_on(dev, pp.x, -1);
		fd[n++] = open_vpmu_on(dev, pp.y, -1);
	}
	for (i = 0; i < n; i++)
		ASSERT_LE(0, fd[i]) TH_LOG("open %d: %s", i, strerror(errno));
	ASSERT_EQ(0, pong_throw(&pp));
	sleep_ns(NSEC_PER_SEC / 2);		/* every pair met once */
	ASSERT_EQ(0, read_plan(CPU, &a));
	t0 = ts_ns(CLOCK_MONOTONIC);
	sleep_ns(NSEC_PER_SEC);
	ASSERT_EQ(0, read_plan(CPU, &b));
	TH_LOG("in %.2f s: plans %lld -> %lld, saved-plan hits %lld -> %lld",
	       (ts_ns(CLOCK_MONOTONIC) - t0) / 1e9, a.plans, b.plans, a.hits, b.hits);
	/* x's pair, y's pair, the CPU alone (idle): all saved by now */
	EXPECT_LE(b.plans - a.plans, 2);
	EXPECT_LE(100, b.hits - a.hits) TH_LOG("the tasks hardly switched?");
	for (i = 0; i < n; i++)
		close(fd[i]);
	close(dev);
	pong_stop(&pp);
}

/*
 * The key of a parked pair changes while its task is off the CPU: two
 * ping-pong tasks on one CPU, three task groups each on 2 slots (2/3
 * each, both policies); x's third group is disabled (x's other two
 * 100%), enabled again (2/3), closed (100%), y's stay at 2/3.  Each switch-in takes the pair's
 * parked plan without a walk while neither context's key generation
 * moved (kmod/sched.c sched_task_switch_in()); a lookup that took x's
 * parked plan after its groups changed would run the old plan (the
 * disabled group's rotation wasted, a closed leader in lead[]) at every
 * switch-in, thousands of times a second.  Each phase settles 0.3 s, then
 * is measured over 1.5 s.
 */
TEST_F(sched, pair_key_changes)
{
	static const char *const what[] = { "3 on each", "x's third disabled",
					     "x's third enabled again", "x's third closed" };
	static const double want[][6] = {
		{ 66.7, 66.7, 66.7, 66.7, 66.7, 66.7 }, { 100, 100, -1, 66.7, 66.7, 66.7 },
		{ 66.7, 66.7, 66.7, 66.7, 66.7, 66.7 }, { 100, 100, -1, 66.7, 66.7, 66.7 } };
	int fd[6], dev, i;
	struct plan_info a, b;
	struct pong pp;
	double secs;
	__u64 t0;

	ASSERT_EQ(0, pong_start(&pp));
	dev = pevt_dev_open();
	ASSERT_LE(0, dev);
	for (i = 0; i < 3; i++) {
		fd[i] = open_vpmu_on(dev, pp.x, -1);
		fd[3 + i] = open_vpmu_on(dev, pp.y, -1);
		ASSERT_LE(0, fd[i]);
		ASSERT_LE(0, fd[3 + i]);
	}
	ASSERT_EQ(0, pong_throw(&pp));
	ASSERT_EQ(0, read_plan(CPU, &a));
	t0 = ts_ns(CLOCK_MONOTONIC);
	/* x's groups, then y's; rotid 66.4-66.9 on 6.1, classic 60.1-71.7 */
	key_change_phases(_metadata, variant->policy, fd, 6, what, &want[0][0],
			  is_rotid(variant) ? 4.0 : 12.0);
	ASSERT_EQ(0, read_plan(CPU, &b));
	secs = (ts_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	TH_LOG("saved-plan hits %lld, plans %lld, timer runs %.0f/s", b.hits - a.hits,
	       b.plans - a.plans, (b.timer - a.timer) / secs);
	if (is_rotid(variant)) {
		EXPECT_LE(1000, b.hits - a.hits) TH_LOG("the tasks hardly switched?");
		/*
		 * The tick (4 ms: 250/s), not a timer run per switch-in: a
		 * switch-in that took x's old plan after its groups changed
		 * would miss in the flexible pass (which checks x's key
		 * generation too) and ask for an immediate timer run, each
		 * time.  The shares alone do not show that.
		 */
		EXPECT_LE((b.timer - a.timer) / secs, 600);
	}
	for (i = 0; i < 6; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	close(dev);
	pong_stop(&pp);
}

TEST_HARNESS_MAIN
