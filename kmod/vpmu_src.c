// SPDX-License-Identifier: GPL-2.0
/*
 * pevt source for pevt_vpmu events: attr.type == the vPMU's perf type,
 * same encoding as the stock events (config: source, config1: allowed
 * slots).  Slots come from the allocator shared with the stock perf core
 * (vpmu.h), owner VPMU_OWNER_PEVT.
 *
 * The scheduler (sched.c) may give add() a planned slot
 * (pevt_vpmu_set_slot_hint(), used by the next add() only): the planner
 * already chose a slot for every member of every group of the rotation,
 * so add() takes exactly that slot and the group needs no matching at the
 * tick.  Without a plan (classic policy, before the first plan, or the
 * planned slot taken) add() takes the slot this member has in a matching
 * of the group's members still to be added, so a group goes on whenever
 * it fits, as the stock PMU's transaction does (vpmu_slots_get_group()).
 *
 * Sampling (attr.sample_period, or attr.freq with sample_freq): the vPMU
 * counter overflows every period events (syscalls, cswitch: counted in
 * their hooks; cpu_ns: a pinned hrtimer) and the overflow, on the
 * counter's CPU with irqs off, writes a PERF_RECORD_SAMPLE (output.c)
 * with the registers the source saw.  A counter samples only while its
 * group is scheduled, so under multiplexing (rotid or classic) each event
 * samples for its share of the time, as a stock PMU event does.
 * freq: cpu_ns gets the fixed period NSEC_PER_SEC / freq (perf's
 * cpu-clock does the same).  The event sources adjust their period the
 * way perf adjusts a stock tracepoint event of the same attr (the A/B
 * reference of selftests/vm/vpmu_sample_test.c): the period starts at 1; at each overflow the time since the
 * previous one, if under two ticks, and the period just used give a rate
 * (__perf_event_account_interrupt()), and at each tick while the event is
 * ACTIVE the events counted since the previous tick over TICK_NSEC give
 * another (perf_adjust_freq_unthr_context()); each moves the period 1/8
 * of the way to the one that would give sample_freq at that rate
 * (perf_adjust_period(), perf_calculate_period(), copied).  The tick is a
 * pinned hrtimer of the event, armed while it is ACTIVE, expiring on
 * multiples of TICK_NSEC as the scheduler tick does, so it fires as often
 * and with the same phase as perf's.  Countdowns and the period each
 * sample carries follow perf_swevent_set_period(): an overflow starts a
 * countdown of last_period events, the period in force at the previous
 * overflow, and a new period applies from the next overflow on (a
 * software event's period_left is never positive, so perf_adjust_period()
 * never cuts a countdown short for it).  Scheduling out and in keeps the
 * countdown and last_period, as perf_trace_add() does.
 */
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
#include <linux/tick.h>
#include <linux/slab.h>

#include "internal.h"
#include "output.h"
#include "vpmu.h"
#include "pevt_sched.h"

static struct pevt_source_ops pevt_vsrc;

struct vsrc {
	struct vpmu_counter	c;
	u64			mask;	/* allowed slots (valid mask) */
	int			hint;	/* planned slot for the next add(), or -1 */
	struct pevt_event	*event;
	/* freq, event sources: perf's hw_perf_event fields of the same name */
	u64			last_period;		/* countdown just ended */
	u64			freq_time_stamp;	/* local_clock(), last overflow */
	u64			freq_count_stamp;	/* c.count at the last tick */
	struct hrtimer		tick;			/* TICK_NSEC while ACTIVE */
};

static bool vsrc_adapts(struct pevt_event *event)
{
	/*
	 * Not with sample_freq 0, as perf_adjust_freq_unthr_context() skips
	 * it: such an event counts and never samples, and has no overflow
	 * callback; a tick that gave it a period made vpmu_sample() call a
	 * NULL callback (abi_fuzz, 6.1, FUZZ_SEED=1796590959289845058).
	 */
	return event->attr.freq && event->attr.sample_freq &&
	       (event->attr.config & VPMU_CONFIG_SOURCE) != VPMU_SRC_CPU_NS;
}

/*
 * perf_calculate_period(): the period that gives @freq samples per second
 * when @count events take @nsec ns, with perf's loss of precision.
 */
static u64 vsrc_calculate_period(u64 frequency, u64 nsec, u64 count)
{
	u64 sec = NSEC_PER_SEC;
	u64 divisor, dividend;
	int count_fls, nsec_fls, frequency_fls, sec_fls;

	count_fls = fls64(count);
	nsec_fls = fls64(nsec);
	frequency_fls = fls64(frequency);
	sec_fls = 30;

	/* Reduce accuracy by one bit so that a and b converge. */
#define REDUCE_FLS(a, b)		\
do {					\
	if (a##_fls > b##_fls) {	\
		a >>= 1;		\
		a##_fls--;		\
	} else {			\
		b >>= 1;		\
		b##_fls--;		\
	}				\
} while (0)

	while (count_fls + sec_fls > 64 && nsec_fls + frequency_fls > 64) {
		REDUCE_FLS(nsec, frequency);
		REDUCE_FLS(sec, count);
	}
	if (count_fls + sec_fls > 64) {
		divisor = nsec * frequency;
		while (count_fls + sec_fls > 64) {
			REDUCE_FLS(count, sec);
			divisor >>= 1;
		}
		dividend = count * sec;
	} else {
		dividend = count * sec;
		while (nsec_fls + frequency_fls > 64) {
			REDUCE_FLS(nsec, frequency);
			dividend >>= 1;
		}
		divisor = nsec * frequency;
	}
#undef REDUCE_FLS
	if (!divisor)
		return dividend;
	return div64_u64(dividend, divisor);
}

/* perf_adjust_period(): @count events in @nsec ns; low-pass filter 1/8. */
static void vsrc_adjust_period(struct vsrc *v, u64 nsec, u64 count)
{
	s64 period, delta;

	period = vsrc_calculate_period(v->event->attr.sample_freq, nsec, count);
	delta = period - (s64)v->c.period;
	delta = (delta >= 0 ? delta + 7 : delta - 7) / 8;
	period = (s64)v->c.period + delta;
	v->c.period = period > 0 ? period : 1;
}

/* The tick's part of perf_adjust_freq_unthr_context(). */
static enum hrtimer_restart vsrc_tick(struct hrtimer *t)
{
	struct vsrc *v = container_of(t, struct vsrc, tick);
	u64 now, delta;

	/* Stopped, or a pinned timer migrated off a dying CPU. */
	if (!v->c.active || v->c.cpu != smp_processor_id())
		return HRTIMER_NORESTART;
	now = vpmu_counter_read(&v->c);
	delta = now - v->freq_count_stamp;
	v->freq_count_stamp = now;
	if (delta)
		vsrc_adjust_period(v, TICK_NSEC, delta);
	hrtimer_forward_now(t, ns_to_ktime(TICK_NSEC));
	return HRTIMER_RESTART;
}

/*
 * Counter overflow: on the counter's CPU, irqs off, the group ACTIVE.
 * vpmu.c has already started the next countdown, of c->period events.
 */
static void vsrc_overflow(struct vpmu_counter *c, struct pt_regs *regs)
{
	struct vsrc *v = c->priv;
	struct pevt_event *event = v->event;
	u64 period = c->period;
	s64 delta;
	u64 now;

	if (READ_ONCE(event->state) != PEVT_STATE_ACTIVE)
		return;
	if (!vsrc_adapts(event)) {
		pevt_output_sample(event, regs, period);
		return;
	}
	/*
	 * perf_swevent_event() and perf_swevent_set_period(): the sample
	 * carries last_period, the next countdown is last_period events
	 * long, and last_period becomes the current period.
	 */
	pevt_output_sample(event, regs, v->last_period);
	c->left += (s64)v->last_period - (s64)period;
	v->last_period = period;
	/* __perf_event_account_interrupt(): the rate since the last one */
	now = local_clock();
	delta = now - v->freq_time_stamp;
	v->freq_time_stamp = now;
	if (delta > 0 && delta < 2 * TICK_NSEC)
		vsrc_adjust_period(v, delta, period);
}

static int vsrc_init(struct pevt_event *event)
{
	struct perf_event_attr *attr = &event->attr;
	unsigned int src = attr->config & VPMU_CONFIG_SOURCE;
	struct vsrc *v;
	u64 mask, period = 0;
	int ret;

	if (attr->type != vpmu_perf_type())
		return -ENOENT;
	if ((attr->config & ~VPMU_CONFIG_SOURCE) || attr->config2)
		return -EINVAL;
	if (src >= VPMU_NR_SOURCES)
		return -ENOENT;
	mask = vpmu_valid_mask(attr->config1);
	if (!mask || (attr->config1 & ~vpmu_valid_mask(0)))
		return -EINVAL;
	/* The same filters as through perf_event_open(). */
	ret = vpmu_check_filters(attr);
	if (ret)
		return ret;
	/* sample_period and sample_freq share a field. */
	if (attr->sample_period) {
		if (attr->freq)
			period = src == VPMU_SRC_CPU_NS ?
				 div64_u64(NSEC_PER_SEC, attr->sample_freq) : 1;
		else
			period = attr->sample_period;
	}

	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	ret = vpmu_source_get(src);
	if (ret) {
		kfree(v);
		return ret;
	}
	vpmu_counter_init(&v->c, src, period, period ? vsrc_overflow : NULL, v);
	v->last_period = period;
	hrtimer_init(&v->tick, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED_HARD);
	v->tick.function = vsrc_tick;
	v->mask = mask;
	v->event = event;
	event->src_priv = v;
	event->hw.idx = -1;
	event->hw.config = src;
	v->hint = -1;
	return 0;
}

static void vsrc_destroy(struct pevt_event *event)
{
	struct vsrc *v = event->src_priv;

	hrtimer_cancel(&v->tick);
	vpmu_counter_destroy(&v->c);
	vpmu_source_put(v->c.source);
	kfree(v);
	event->src_priv = NULL;
}

/**
 * pevt_vpmu_event_mask() - allowed-slot mask of a pevt event
 * @event: any pevt event
 *
 * Return: the vPMU slots @event may use, 0 if it needs no slot.
 */
u64 pevt_vpmu_event_mask(struct pevt_event *event)
{
	struct vsrc *v;

	if (event->src->caps & PEVT_SRC_SOFTWARE || !event->src_priv)
		return 0;
	if (event->src->kind != PEVT_SRC_VPMU)
		return vpmu_valid_mask(0);
	v = event->src_priv;
	return v->mask;
}

static void vsrc_read(struct pevt_event *event)
{
	struct vsrc *v = event->src_priv;
	u64 now = vpmu_counter_read(&v->c);
	u64 prev = local64_xchg(&event->prev_count, now);

	local64_add(now - prev, &event->count);
}

static void vsrc_start(struct pevt_event *event, int flags)
{
	struct vsrc *v = event->src_priv;
	u64 now;
	u32 rem;

	vpmu_counter_start(&v->c);
	local64_set(&event->prev_count, vpmu_counter_read(&v->c));
	if (!v->c.active || !vsrc_adapts(event) || hrtimer_active(&v->tick))
		return;
	/* The scheduler tick's phase: multiples of TICK_NSEC. */
	now = ktime_get_ns();
	div_u64_rem(now, TICK_NSEC, &rem);
	hrtimer_start(&v->tick, ns_to_ktime(now - rem + TICK_NSEC),
		      HRTIMER_MODE_ABS_PINNED_HARD);
}

static void vsrc_stop(struct pevt_event *event, int flags)
{
	struct vsrc *v = event->src_priv;

	if (!v->c.active)
		return;
	vsrc_read(event);
	vpmu_counter_stop(&v->c);
	if (vsrc_adapts(event))
		hrtimer_try_to_cancel(&v->tick);
}

/**
 * pevt_vpmu_set_slot_hint() - the slot the next add() of @event should take
 * @event: a pevt event needing a slot (pevt_vpmu_event_mask() != 0)
 * @slot: slot index chosen by the scheduler's plan
 *
 * ctx->lock held, irqs off, on the CPU of the add() that follows.
 */
void pevt_vpmu_set_slot_hint(struct pevt_event *event, int slot)
{
	struct vsrc *v = event->src_priv;

	if (v && event->src == &pevt_vsrc)
		v->hint = slot;
}

/*
 * No usable plan: the slot @event has in a matching of it and the members
 * of its group that pevt_group_sched_in() adds after it.
 */
static int vsrc_get_matched(struct pevt_event *event, int cpu)
{
	struct pevt_event *leader = event->group_leader, *sib;
	u64 allowed[VPMU_MAX_COUNTERS];
	bool after = leader == event;
	int n = 0;

	allowed[n++] = ((struct vsrc *)event->src_priv)->mask;
	pevt_for_each_sibling(sib, leader) {
		if (sib == event) {
			after = true;
			continue;
		}
		if (!after || sib->src != &pevt_vsrc ||
		    sib->state != PEVT_STATE_INACTIVE)
			continue;
		if (n == VPMU_MAX_COUNTERS)
			break;
		allowed[n++] = ((struct vsrc *)sib->src_priv)->mask;
	}
	return vpmu_slot_get_matched(cpu, allowed, n, VPMU_OWNER_PEVT);
}

static int vsrc_add(struct pevt_event *event, int flags)
{
	struct vsrc *v = event->src_priv;
	int cpu = smp_processor_id();
	int hint = v->hint, slot = -EAGAIN;

	v->hint = -1;
	if (hint >= 0 && (v->mask & BIT_ULL(hint)))
		slot = vpmu_slot_get(cpu, BIT_ULL(hint), VPMU_OWNER_PEVT);
	if (slot < 0)
		slot = vsrc_get_matched(event, cpu);
	if (slot < 0)
		return -EAGAIN;
	v->c.slot = slot;
	event->hw.idx = slot;
	if (flags & PERF_EF_START)
		vsrc_start(event, flags);
	return 0;
}

static void vsrc_del(struct pevt_event *event, int flags)
{
	struct vsrc *v = event->src_priv;

	vsrc_stop(event, PERF_EF_UPDATE);
	if (v->c.slot >= 0)
		vpmu_slot_put(smp_processor_id(), v->c.slot);
	v->c.slot = -1;
	event->hw.idx = -1;
}

static struct pevt_source_ops pevt_vsrc = {
	.name		= "pevt_vpmu",
	.kind		= PEVT_SRC_VPMU,
	.caps		= 0,
	.init		= vsrc_init,
	.destroy	= vsrc_destroy,
	.add		= vsrc_add,
	.del		= vsrc_del,
	.start		= vsrc_start,
	.stop		= vsrc_stop,
	.read		= vsrc_read,
};

/**
 * pevt_vpmu_src_init() - register the vPMU source
 *
 * Return: 0 or -errno.
 */
int pevt_vpmu_src_init(void)
{
	return pevt_source_register(&pevt_vsrc);
}

/**
 * pevt_vpmu_src_exit() - unregister the vPMU source
 */
void pevt_vpmu_src_exit(void)
{
	pevt_source_unregister(&pevt_vsrc);
}
