// SPDX-License-Identifier: GPL-2.0
/*
 * Software sources: PERF_COUNT_SW_CPU_CLOCK and PERF_COUNT_SW_TASK_CLOCK,
 * counting mode.  Both count nanoseconds while the event is ACTIVE, i.e.
 * while its context is active on a CPU: for a CPU event all the time it
 * is enabled, for a task event while the task runs (what perf's cpu-clock
 * and task-clock count for the same events).
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

/*
 * cpu-clock reads local_clock() (perf's cpu_clock_event_update()); task-clock
 * reads the context's time, which is what perf's task_clock_event_update()
 * does: ctx->time is brought up to date before any of these is called
 * (sched in/out, IPI handlers), and it is exactly the time the event is
 * running, so value == time_running for a task-clock alone.
 */
static u64 sw_clock_now(struct pevt_event *event)
{
	if (event->attr.config == PERF_COUNT_SW_TASK_CLOCK)
		return event->ctx->time;
	return local_clock();
}

static void sw_clock_read(struct pevt_event *event)
{
	u64 now = sw_clock_now(event);
	u64 prev = local64_xchg(&event->prev_count, now);

	local64_add(now - prev, &event->count);
}

static void sw_clock_start(struct pevt_event *event, int flags)
{
	local64_set(&event->prev_count, sw_clock_now(event));
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
	.kind		= PEVT_SRC_SW_CLOCK,
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
