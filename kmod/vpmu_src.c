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
 * cpu-clock does the same); the event sources start at period 1 and after
 * each overflow that ends an interval the counter ran through, move 1/8
 * of the way to the period that would have given sample_freq at the rate
 * of that interval (at once while that is more than twice the current
 * one), as perf adjusts from the same ratio (perf_adjust_period()).
 */
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
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
	/* freq: the last overflow, and starts of the counter since boot */
	u64			t_last, cnt_last;
	unsigned long		starts, starts_last;
};

/* Counter overflow: on the counter's CPU, irqs off, the group ACTIVE. */
static void vsrc_overflow(struct vpmu_counter *c, struct pt_regs *regs)
{
	struct vsrc *v = c->priv;
	struct pevt_event *event = v->event;
	u64 period = c->period;

	if (READ_ONCE(event->state) != PEVT_STATE_ACTIVE)
		return;
	pevt_output_sample(event, regs, period);
	if (event->attr.freq && c->source != VPMU_SRC_CPU_NS) {
		u64 now = local_clock(), dt = now - v->t_last;
		u64 n = c->count - v->cnt_last, want;
		bool steady = v->starts == v->starts_last;

		v->t_last = now;
		v->cnt_last = c->count;
		v->starts_last = v->starts;
		/* Only an interval the counter ran through tells the rate. */
		if (!steady || !dt || !n)
			return;
		/* n events took dt ns: the period giving sample_freq */
		want = div64_u64(n * NSEC_PER_SEC,
				 dt * event->attr.sample_freq) ?: 1;
		if (want > 2 * period)		/* ramp up from period 1 */
			period = want;
		else if (want > period)
			period += (want - period + 7) / 8;
		else
			period -= (period - want) / 8;
		c->period = max_t(u64, period, 1);
	}
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

	if (!v->c.active)
		v->starts++;
	vpmu_counter_start(&v->c);
	local64_set(&event->prev_count, vpmu_counter_read(&v->c));
}

static void vsrc_stop(struct pevt_event *event, int flags)
{
	struct vsrc *v = event->src_priv;

	if (!v->c.active)
		return;
	vsrc_read(event);
	vpmu_counter_stop(&v->c);
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
