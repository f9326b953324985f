/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM test helpers for the context scheduler (kmod/sched.c): reload the
 * module with parameters, read one CPU's block of debugfs pevt_sched/plan,
 * a busy child pinned to a CPU.
 */
#ifndef PEVT_SELFTESTS_SCHED_PLAN_H
#define PEVT_SELFTESTS_SCHED_PLAN_H

#include <stdio.h>
#include <stdlib.h>
#include "common.h"
#include "live_stats.h"

#define SCHED_PARAMS	"/sys/module/pevt/parameters"
#define SCHED_PLAN	"/sys/kernel/debug/pevt_sched/plan"
#define SCHED_VPMU	"/sys/bus/event_source/devices/pevt_vpmu"
#define PLAN_MAXG	32

/* rmmod + insmod $PEVT_KO with @params; 0 once the vPMU is back. */
static inline int sched_reload(const char *params)
{
	const char *ko = getenv("PEVT_KO") ?: "/pevt.ko";
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rmmod pevt 2>/dev/null; insmod %s %s", ko, params);
	return system(cmd) == 0 && read_long(SCHED_VPMU "/type") > 0 ? 0 : -1;
}

/* The plan of one CPU as the debugfs file shows it. */
struct plan_info {
	int found, valid, R, r, groups;
	long long ticks, plans, hits, timer;
	unsigned long long foreign, plan_ns_max, pass_ns_max, tick_outs;
	char state[PLAN_MAXG][16];
};

/* 0, or -1 if the file or the CPU's block is missing. */
static inline int read_plan(int cpu, struct plan_info *p)
{
	FILE *f = fopen(SCHED_PLAN, "r");
	char line[512];
	int in = 0;

	memset(p, 0, sizeof(*p));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct plan_info q = { 0 };
		int c, o, gi;
		char pol[16], st[16];

		if (sscanf(line, "cpu %d policy %15s valid %d overflow %d R %d r %d ticks %lld plans %lld groups %d hits %lld timer %lld foreign %llx plan_ns_max %llu pass_ns_max %llu tick_outs %llu",
			   &c, pol, &q.valid, &o, &q.R, &q.r, &q.ticks, &q.plans,
			   &q.groups, &q.hits, &q.timer, &q.foreign, &q.plan_ns_max,
			   &q.pass_ns_max, &q.tick_outs) >= 10) {
			in = c == cpu;
			if (in) {
				*p = q;
				p->found = 1;
			}
			continue;
		}
		if (in && sscanf(line, "group %d id %*u task %*d pinned %*d members %*u state %15s",
				 &gi, st) == 2 && gi < PLAN_MAXG)
			snprintf(p->state[gi], sizeof(p->state[gi]), "%s", st);
	}
	fclose(f);
	return p->found ? 0 : -1;
}

/* A child spinning on @cpu forever (kill it); its pid, or -1. */
static inline pid_t sched_busy_child(int cpu)
{
	pid_t pid = fork();

	if (pid == 0) {
		volatile unsigned long x = 0;

		pin_to_cpu(cpu);
		for (;;)
			x++;
	}
	return pid;
}

#endif /* PEVT_SELFTESTS_SCHED_PLAN_H */
