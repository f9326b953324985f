// SPDX-License-Identifier: GPL-2.0
/*
 * Software sources: PERF_COUNT_SW_CPU_CLOCK and PERF_COUNT_SW_TASK_CLOCK,
 * counting mode.  Both count nanoseconds of local_clock() while the event
 * is ACTIVE, i.e. while its context is active on a CPU: for a CPU event
 * all the time it is enabled, for a task event while the task runs (what
 * perf's cpu-clock and task-clock count for the same events).
 */
#include <linux/perf_event.h>
#include <linux/sched/clock.h>

#include "internal.h"
#include "compat.h"

static int sw_clock_init(struct pevt_event *event)
{
	if (event->attr.type != PERF_TYPE_SOFTWARE)
		return -ENOENT;
	switch (event->attr.config) {
	case PERF_COUNT_SW_CPU_CLOCK:
	case PERF_COUNT_SW_TASK_CLOCK:
		return 0;
	}
	/* perf_swevent_init(): unknown ids are -ENOENT */
	if (event->attr.config >= PERF_COUNT_SW_MAX)
		return -ENOENT;
	return -EOPNOTSUPP;	/* perf has it, pevt does not yet */
}

static void sw_clock_read(struct pevt_event *event)
{
	u64 now = local_clock();
	u64 prev = local64_xchg(&event->prev_count, now);

	local64_add(now - prev, &event->count);
}

static void sw_clock_start(struct pevt_event *event, int flags)
{
	local64_set(&event->prev_count, local_clock());
}

static void sw_clock_stop(struct pevt_event *event, int flags)
{
	sw_clock_read(event);
}

static int sw_clock_add(struct pevt_event *event, int flags)
{
	if (flags & PERF_EF_START)
		sw_clock_start(event, flags);
	return 0;
}

static void sw_clock_del(struct pevt_event *event, int flags)
{
	sw_clock_stop(event, PERF_EF_UPDATE);
}

static struct pevt_source_ops pevt_sw_clock = {
	.name		= "sw-clock",
	.caps		= PEVT_SRC_SOFTWARE,
	.init		= sw_clock_init,
	.add		= sw_clock_add,
	.del		= sw_clock_del,
	.start		= sw_clock_start,
	.stop		= sw_clock_stop,
	.read		= sw_clock_read,
};

/**
 * pevt_sw_init() - register the software clock source.
 *
 * Return: 0.
 */
int pevt_sw_init(void)
{
	return pevt_source_register(&pevt_sw_clock);
}

/**
 * pevt_sw_exit() - unregister the software clock source.
 */
void pevt_sw_exit(void)
{
	pevt_source_unregister(&pevt_sw_clock);
}
