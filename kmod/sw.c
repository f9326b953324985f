// SPDX-License-Identifier: GPL-2.0
/*
 * Software clocks: PERF_COUNT_SW_CPU_CLOCK and PERF_COUNT_SW_TASK_CLOCK,
 * counting and sampling, one source (perf's cpu_clock/task_clock PMUs).
 *
 * Both count nanoseconds while the event is ACTIVE, i.e. while its context
 * is active on a CPU: for a CPU event all the time it is enabled, for a
 * task event while the task runs.  Exclusions do not change what a clock
 * counts, as in perf.
 *
 * With sample_period (ns) or freq/sample_freq a clock also samples from a
 * per-event hrtimer pinned to the event's CPU, like perf_swevent_hrtimer():
 * a frequency becomes a fixed period, no period is shorter than
 * PEVT_CLOCK_MIN_PERIOD, a sample the attr excludes (user/kernel mode,
 * idle) is not taken, and every expiry counts against the sample-rate
 * limit (throttle.c).
 */
#include <linux/perf_event.h>
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/sched/clock.h>
#include <asm/irq_regs.h>

#include "internal.h"
#include "compat.h"
#include "output.h"
#include "vpmu.h"

/* Sampling state of a sampling clock (event->src_priv); counting: NULL. */
struct sw_clock_timer {
	struct hrtimer		timer;
	struct pevt_event	*event;
	u64			period;		/* ns between samples */
	u64			left;		/* ns of the period left at stop */
};

/*
 * cpu-clock reads local_clock() (perf's cpu_clock_event_update()).
 * task-clock reads the context's time as perf's task clock does: start
 * and stop take ctx->time, which the sched-in/out and IPI paths have just
 * brought up to date, so value == time_running exactly for a task-clock
 * alone; a read while it runs (read(), the sampling timer) adds the time
 * since ctx->timestamp (task_clock_event_read()).
 */
static u64 sw_clock_now(struct pevt_event *event, bool live)
{
	if (event->attr.config != PERF_COUNT_SW_TASK_CLOCK)
		return local_clock();
	return live ? pevt_ctx_time_now(event->ctx) : event->ctx->time;
}

static void sw_clock_update(struct pevt_event *event, u64 now)
{
	u64 prev = local64_xchg(&event->prev_count, now);

	local64_add(now - prev, &event->count);
}

static void sw_clock_read(struct pevt_event *event)
{
	sw_clock_update(event, sw_clock_now(event, true));
}

static enum hrtimer_restart sw_clock_timer_fn(struct hrtimer *timer)
{
	struct sw_clock_timer *t = container_of(timer, struct sw_clock_timer,
						timer);
	struct pevt_event *event = t->event;
	struct pt_regs *regs = get_irq_regs();

	/*
	 * Hard irq on the event's CPU.  No ctx->lock: del() cancels this
	 * timer under it; the context is active here, so its lists only
	 * change through IPIs to this CPU, which wait for us.
	 */
	if (READ_ONCE(event->state) != PEVT_STATE_ACTIVE)
		return HRTIMER_NORESTART;
	sw_clock_read(event);
	/*
	 * Every expiry counts against the limit, excluded or not: it is the
	 * interrupts that the limit bounds (perf counts only the samples).
	 */
	if (pevt_throttle_sample(event))
		return HRTIMER_NORESTART;	/* sw_clock_unthrottle() */
	if (!pevt_sample_excluded(event, regs)) {
		/* No lock held: the readers may be woken from here. */
		rb_wake_defer_begin();
		pevt_output_sample(event, regs, t->period);
		rb_wake_defer_end(true);
	}
	hrtimer_forward_now(timer, ns_to_ktime(t->period));
	return HRTIMER_RESTART;
}

static int sw_clock_init(struct pevt_event *event)
{
	struct perf_event_attr *attr = &event->attr;
	struct sw_clock_timer *t;
	u64 period;

	if (attr->type != PERF_TYPE_SOFTWARE)
		return -ENOENT;
	if (attr->config != PERF_COUNT_SW_CPU_CLOCK &&
	    attr->config != PERF_COUNT_SW_TASK_CLOCK) {
		/* perf_swevent_init(): unknown ids are -ENOENT */
		if (attr->config >= PERF_COUNT_SW_MAX)
			return -ENOENT;
		return -EOPNOTSUPP;	/* perf has it, pevt does not yet */
	}
	/* sample_period and sample_freq share a field. */
	if (!attr->sample_period)
		return 0;

	/* perf_swevent_init_hrtimer(): a frequency becomes a fixed period. */
	period = attr->freq ? div64_u64(NSEC_PER_SEC, attr->sample_freq) :
			      attr->sample_period;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->event = event;
	t->period = max(period, PEVT_CLOCK_MIN_PERIOD);
	hrtimer_init(&t->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	t->timer.function = sw_clock_timer_fn;
	event->src_priv = t;
	return 0;
}

static void sw_clock_destroy(struct pevt_event *event)
{
	struct sw_clock_timer *t = event->src_priv;

	if (!t)
		return;
	hrtimer_cancel(&t->timer);
	event->src_priv = NULL;
	kfree(t);
}

static void sw_clock_start(struct pevt_event *event, int flags)
{
	struct sw_clock_timer *t = event->src_priv;

	local64_set(&event->prev_count, sw_clock_now(event, false));
	if (!t || event->throttled)
		return;
	/* Resume the period where it stopped (perf_swevent_start_hrtimer()). */
	hrtimer_start(&t->timer, ns_to_ktime(t->left ?: t->period),
		      HRTIMER_MODE_REL_PINNED_HARD);
	t->left = 0;
}

static void sw_clock_stop(struct pevt_event *event, int flags)
{
	struct sw_clock_timer *t = event->src_priv;

	/* On the timer's CPU with irqs off: the callback is not running. */
	if (t && hrtimer_active(&t->timer)) {
		s64 left = ktime_to_ns(hrtimer_get_remaining(&t->timer));

		t->left = left > 0 ? left : 0;
		hrtimer_cancel(&t->timer);
	}
	sw_clock_update(event, sw_clock_now(event, false));
}

static void sw_clock_unthrottle(struct pevt_event *event)
{
	struct sw_clock_timer *t = event->src_priv;

	hrtimer_start(&t->timer, ns_to_ktime(t->period),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static int sw_clock_add(struct pevt_event *event, int flags)
{
	if (event->src_priv)
		pevt_throttle_sched_in(event);
	if (flags & PERF_EF_START)
		sw_clock_start(event, flags);
	return 0;
}

static void sw_clock_del(struct pevt_event *event, int flags)
{
	sw_clock_stop(event, PERF_EF_UPDATE);
	if (event->src_priv)
		pevt_throttle_sched_out(event);
}

static struct pevt_source_ops pevt_sw_clock = {
	.name		= "sw-clock",
	.kind		= PEVT_SRC_SW_CLOCK,
	.caps		= PEVT_SRC_SOFTWARE,
	.init		= sw_clock_init,
	.destroy	= sw_clock_destroy,
	.add		= sw_clock_add,
	.del		= sw_clock_del,
	.start		= sw_clock_start,
	.stop		= sw_clock_stop,
	.read		= sw_clock_read,
	.unthrottle	= sw_clock_unthrottle,
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
