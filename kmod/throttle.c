// SPDX-License-Identifier: GPL-2.0
/*
 * pevt sample-rate limit: kernel.perf_event_max_sample_rate.
 *
 * perf lets each event take max_sample_rate / HZ samples per tick and
 * throttles the one that takes more (__perf_event_account_interrupt()):
 * PERF_RECORD_THROTTLE, no more samples until the next tick unthrottles it
 * (PERF_RECORD_UNTHROTTLE).  Per event, so a user with 1000 events may
 * ask for 1000 times the limit.  pevt keeps the budget per CPU: the
 * interrupt-driven samples of a CPU (its sampling clocks' hrtimers; the
 * sources perf throttles too, unlike the single overflow of a software or
 * tracepoint event) together take at most max_sample_rate / HZ samples per
 * window of one tick (TICK_NSEC of local_clock()).
 *
 * An event whose overflow finds the budget spent is throttled: THROTTLE
 * record, the source stops sampling (a clock does not re-arm its hrtimer;
 * a tracepoint keeps counting without sampling) and the event is queued on
 * its CPU's throttled list.  A per-CPU hrtimer at the end of the window
 * unthrottles, oldest first, at most one budget of events (UNTHROTTLE
 * record, src->unthrottle()) and comes back while any remain: so the
 * timer interrupts and records per window are bounded by the budget, not
 * by the number of events.  Like perf (event_sched_in()), an event
 * scheduled out while throttled is unthrottled when it comes back in.
 *
 * The limit is read from procfs whenever a sampling event is opened
 * (perm_max_sample_rate(), process context) and applies from then on.
 * Everything else runs on the CPU concerned with interrupts disabled:
 * overflows (hrtimer, or a probe under ctx->lock), the sources'
 * add()/del(), and the unthrottle timer, so the per-CPU state needs no
 * lock.
 */
#include <linux/hrtimer.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/tick.h>

#include "internal.h"
#include "output.h"

struct thr_cpu {
	u64			window_end;	/* local_clock() ending the window */
	unsigned int		used;		/* samples taken in the window */
	struct list_head	throttled;	/* events, oldest first */
	struct hrtimer		timer;		/* unthrottles at window end */
};

static DEFINE_PER_CPU(struct thr_cpu, thr_cpus);
static unsigned int thr_per_window = DIV_ROUND_UP(100000, HZ);

/**
 * pevt_throttle_set_rate() - the limit as just read from procfs.
 * @max_sample_rate: kernel.perf_event_max_sample_rate, >= 1
 */
void pevt_throttle_set_rate(int max_sample_rate)
{
	WRITE_ONCE(thr_per_window, DIV_ROUND_UP(max_sample_rate, HZ));
}

static void thr_window(struct thr_cpu *tc, u64 now)
{
	tc->window_end = now + TICK_NSEC;
	tc->used = 0;
}

/**
 * pevt_throttle_sample() - account one overflow of @event against the limit.
 * @event: an ACTIVE sampling event at an overflow (sample taken or
 *	excluded), on its CPU, irqs off
 *
 * Return: false: take the sample.  true: @event is throttled now (THROTTLE
 * written, queued for unthrottling); take no sample and stop sampling
 * until the source's unthrottle() is called.
 */
bool pevt_throttle_sample(struct pevt_event *event)
{
	struct thr_cpu *tc = this_cpu_ptr(&thr_cpus);
	u64 now = local_clock();

	lockdep_assert_irqs_disabled();
	if (unlikely(event->throttled))
		return true;
	if (now >= tc->window_end)
		thr_window(tc, now);
	if (likely(tc->used < READ_ONCE(thr_per_window))) {
		tc->used++;
		return false;
	}
	event->throttled = true;
	list_add_tail(&event->throttle_entry, &tc->throttled);
	pevt_output_throttle(event, false);
	if (!hrtimer_is_queued(&tc->timer))
		hrtimer_start(&tc->timer, ns_to_ktime(tc->window_end - now),
			      HRTIMER_MODE_REL_PINNED_HARD);
	return true;
}

static void thr_unthrottle(struct pevt_event *event)
{
	list_del_init(&event->throttle_entry);
	event->throttled = false;
	pevt_output_throttle(event, true);
}

static enum hrtimer_restart thr_timer_fn(struct hrtimer *timer)
{
	struct thr_cpu *tc = container_of(timer, struct thr_cpu, timer);
	unsigned int n = READ_ONCE(thr_per_window);
	struct pevt_event *event, *tmp;

	thr_window(tc, local_clock());
	list_for_each_entry_safe(event, tmp, &tc->throttled, throttle_entry) {
		if (!n--)
			break;
		thr_unthrottle(event);
		if (event->src->unthrottle)
			event->src->unthrottle(event);
	}
	if (list_empty(&tc->throttled))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, ns_to_ktime(TICK_NSEC));
	return HRTIMER_RESTART;
}

/**
 * pevt_throttle_sched_in() - a sampling event is added on this CPU.
 * @event: the event, from its source's add(), irqs off
 *
 * A throttled event starts afresh (perf: event_sched_in()).
 */
void pevt_throttle_sched_in(struct pevt_event *event)
{
	if (unlikely(event->throttled))
		thr_unthrottle(event);
}

/**
 * pevt_throttle_sched_out() - a sampling event leaves this CPU.
 * @event: the event, from its source's del(), irqs off
 *
 * Off the CPU's list: the timer must not restart it elsewhere.  It stays
 * throttled until pevt_throttle_sched_in().
 */
void pevt_throttle_sched_out(struct pevt_event *event)
{
	list_del_init(&event->throttle_entry);
}

/**
 * pevt_throttle_init() - set up the per-CPU state.
 */
void pevt_throttle_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct thr_cpu *tc = per_cpu_ptr(&thr_cpus, cpu);

		INIT_LIST_HEAD(&tc->throttled);
		hrtimer_init(&tc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		tc->timer.function = thr_timer_fn;
	}
}

/**
 * pevt_throttle_exit() - stop the timers (no sampling event is left).
 */
void pevt_throttle_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		hrtimer_cancel(&per_cpu_ptr(&thr_cpus, cpu)->timer);
}
