// SPDX-License-Identifier: GPL-2.0
/*
 * pevt_vpmu: a virtual PMU whose counters follow real kernel activity.
 *
 * Each CPU has nr_counters slots.  A slot is allocated to one owner (the
 * stock perf core through the pevt_vpmu PMU, or pevt's own scheduler) and
 * then runs one struct vpmu_counter.  Counters read a per-CPU source:
 * local_clock() for nanoseconds, and per-CPU totals bumped by tracepoint
 * probes for system calls and context switches.  A counter is a snapshot
 * of its source at start plus the difference at each read, so the probe hot
 * path is a single this_cpu_inc() unless a sampling counter is running.
 *
 * Context rules: slot allocation may be called for any CPU, with irqs on
 * or off (a per-CPU raw spinlock).  Counter start/stop/read run on the
 * counter's CPU with irqs disabled, like pmu::add/del/start/stop/read.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/sysfs.h>
#include <linux/device.h>
#include <linux/debugfs.h>
#include <linux/uaccess.h>
#include <linux/seq_file.h>
#include <asm/irq_regs.h>

#include "compat.h"
#include "vpmu.h"
#include "pevt_sched.h"

static unsigned int nr_counters = 4;
module_param(nr_counters, uint, 0444);
MODULE_PARM_DESC(nr_counters, "pevt_vpmu counter slots per CPU (1..64, default 4)");

/*
 * The sources' tracepoint hooks (sys_enter, sched_switch) are the hook
 * hub's (sideband.c): registered once at load, they call
 * vpmu_hook_sys_enter() and vpmu_hook_sched_switch().
 */

struct vpmu_cpu {
	raw_spinlock_t lock;			/* protects used, stock, owner */
	u64 used;				/* slots held */
	u64 stock;				/* slots held by VPMU_OWNER_STOCK */
	u8 owner[VPMU_MAX_COUNTERS];		/* enum vpmu_owner per slot */
	/* Below: touched only on this CPU with irqs off. */
	struct vpmu_counter *run[VPMU_MAX_COUNTERS]; /* started counters */
	unsigned int nr_sampling[VPMU_NR_SOURCES]; /* started sampling ctrs */
	unsigned int txn_flags;			/* PERF_PMU_TXN_* in progress */
	int txn_n;				/* events collected in txn */
	struct perf_event *txn_ev[VPMU_MAX_COUNTERS];
	u64 txn_mask[VPMU_MAX_COUNTERS];
	int txn_slot[VPMU_MAX_COUNTERS];
	u64 dbg_held;				/* slots held via debugfs */
	/* Source totals, bumped by the probes (this_cpu_inc, irq safe). */
	u64 ev[VPMU_NR_SOURCES];
};

static DEFINE_PER_CPU(struct vpmu_cpu, vpmu_cpus);
static u64 vpmu_all;				/* mask of existing slots */

/* ------------------------------------------------------------------ */
/* Slot allocation                                                    */

/**
 * vpmu_nr_counters() - number of slots per CPU (module parameter)
 *
 * Return: nr_counters, 1..64.
 */
unsigned int vpmu_nr_counters(void)
{
	return nr_counters;
}

/**
 * vpmu_valid_mask() - effective allowed-slot mask of a constraint
 * @mask: constraint from config1, 0 for any slot
 *
 * Return: the slots the constraint allows, 0 if it names no existing slot.
 */
u64 vpmu_valid_mask(u64 mask)
{
	return mask ? mask & vpmu_all : vpmu_all;
}

/*
 * Kuhn's augmenting path: give event @i a slot from @allowed[i] & @free,
 * moving earlier events to other allowed slots if needed.  Depth is bounded
 * by the number of events (<= 64), frames are small.
 */
static bool vpmu_augment(const u64 *allowed, int i, u64 free, u64 *seen,
			 s8 *holder)
{
	u64 cand = allowed[i] & free & ~*seen;

	while (cand) {
		int s = __ffs64(cand);

		cand &= cand - 1;
		*seen |= BIT_ULL(s);
		if (holder[s] < 0 ||
		    vpmu_augment(allowed, holder[s], free, seen, holder)) {
			holder[s] = i;
			return true;
		}
	}
	return false;
}

/* Find a slot for each of @n events within @free; false if impossible. */
static bool vpmu_match(const u64 *allowed, int n, u64 free, int *slots)
{
	s8 holder[VPMU_MAX_COUNTERS];
	int i, s;

	if (n > VPMU_MAX_COUNTERS || n > hweight64(free))
		return false;
	memset(holder, -1, sizeof(holder));
	for (i = 0; i < n; i++) {
		u64 seen = 0;

		if (!vpmu_augment(allowed, i, free, &seen, holder))
			return false;
	}
	if (slots)
		for (s = 0; s < VPMU_MAX_COUNTERS; s++)
			if (holder[s] >= 0)
				slots[holder[s]] = s;
	return true;
}

/* Mark slot @s of @cpu held by @owner.  pc->lock held. */
static void vpmu_slot_take(struct vpmu_cpu *pc, int cpu, int s, enum vpmu_owner owner)
{
	pc->used |= BIT_ULL(s);
	if (owner == VPMU_OWNER_STOCK) {
		pc->stock |= BIT_ULL(s);
		sched_slots_taken(cpu);	/* rotid's tick note was around the old ones */
	}
	pc->owner[s] = owner;
}

/**
 * vpmu_group_fits() - could these events ever run together?
 * @allowed: effective allowed-slot masks (vpmu_valid_mask()), one per event
 * @n: number of events
 *
 * Used at event creation to refuse groups that could never be scheduled,
 * like x86 validate_group().  Any context.
 *
 * Return: true if an assignment exists on an empty vPMU.
 */
int vpmu_group_fits(const u64 *allowed, int n)
{
	return vpmu_match(allowed, n, vpmu_all, NULL);
}

/**
 * vpmu_slots_get_group() - allocate slots for a whole group, all or none
 * @cpu: CPU whose slots to use
 * @allowed: effective allowed-slot mask per event
 * @n: number of events
 * @slots: out, slot index per event
 * @owner: VPMU_OWNER_STOCK or VPMU_OWNER_PEVT
 *
 * Finds an assignment of free slots that respects every constraint
 * (bipartite matching, so a group fits whenever any assignment exists).
 * Callable with irqs disabled and under raw spinlocks.
 *
 * Return: 0, or -EAGAIN if the free slots cannot hold the group.
 */
int vpmu_slots_get_group(int cpu, const u64 *allowed, int n, int *slots,
			 enum vpmu_owner owner)
{
	struct vpmu_cpu *pc = per_cpu_ptr(&vpmu_cpus, cpu);
	unsigned long flags;
	int i, ret = -EAGAIN;

	raw_spin_lock_irqsave(&pc->lock, flags);
	if (vpmu_match(allowed, n, vpmu_all & ~pc->used, slots)) {
		for (i = 0; i < n; i++)
			vpmu_slot_take(pc, cpu, slots[i], owner);
		ret = 0;
	}
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	return ret;
}

/**
 * vpmu_slot_get() - allocate one slot
 * @cpu: CPU whose slots to use
 * @allowed: effective allowed-slot mask (vpmu_valid_mask())
 * @owner: VPMU_OWNER_STOCK or VPMU_OWNER_PEVT
 *
 * Takes the lowest free allowed slot.  Callable with irqs disabled and
 * under raw spinlocks.
 *
 * Return: slot index, or -EAGAIN when no allowed slot is free.
 */
int vpmu_slot_get(int cpu, u64 allowed, enum vpmu_owner owner)
{
	struct vpmu_cpu *pc = per_cpu_ptr(&vpmu_cpus, cpu);
	unsigned long flags;
	u64 cand;
	int s = -EAGAIN;

	raw_spin_lock_irqsave(&pc->lock, flags);
	cand = allowed & vpmu_all & ~pc->used;
	if (cand) {
		s = __ffs64(cand);
		vpmu_slot_take(pc, cpu, s, owner);
	}
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	return s;
}

/**
 * vpmu_slot_get_matched() - allocate one slot for the first of @n events
 * @cpu: CPU whose slots to use
 * @allowed: effective allowed-slot masks; [0] is the event to place now,
 *	     [1..n) the events of its group still to come
 * @n: number of events, 1..VPMU_MAX_COUNTERS
 * @owner: VPMU_OWNER_STOCK or VPMU_OWNER_PEVT
 *
 * Takes the slot that event 0 has in a matching of all @n events to the
 * free slots, so that adding a group member by member succeeds whenever
 * the group fits (a lowest-free-slot choice may take the only slot a
 * later member can use).  With no such matching, the lowest free allowed
 * slot.  Callable with irqs disabled and under raw spinlocks.
 *
 * Return: slot index, or -EAGAIN when no allowed slot is free.
 */
int vpmu_slot_get_matched(int cpu, const u64 *allowed, int n,
			  enum vpmu_owner owner)
{
	struct vpmu_cpu *pc = per_cpu_ptr(&vpmu_cpus, cpu);
	int slots[VPMU_MAX_COUNTERS];
	unsigned long flags;
	int s = -EAGAIN;
	u64 cand;

	raw_spin_lock_irqsave(&pc->lock, flags);
	cand = allowed[0] & vpmu_all & ~pc->used;
	if (cand) {
		if (n > 1 && vpmu_match(allowed, n, vpmu_all & ~pc->used, slots))
			s = slots[0];
		else
			s = __ffs64(cand);
		vpmu_slot_take(pc, cpu, s, owner);
	}
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	return s;
}

/**
 * vpmu_slot_put() - release a slot from vpmu_slot_get()/_get_group()
 * @cpu: CPU the slot belongs to
 * @slot: slot index
 *
 * The counter in it must be stopped.  Callable with irqs disabled.
 */
void vpmu_slot_put(int cpu, int slot)
{
	struct vpmu_cpu *pc = per_cpu_ptr(&vpmu_cpus, cpu);
	unsigned long flags;

	raw_spin_lock_irqsave(&pc->lock, flags);
	pc->used &= ~BIT_ULL(slot);
	pc->stock &= ~BIT_ULL(slot);
	pc->owner[slot] = VPMU_OWNER_NONE;
	raw_spin_unlock_irqrestore(&pc->lock, flags);
}

/**
 * vpmu_slots_foreign() - slots of a CPU that pevt's scheduler cannot use
 * @cpu: CPU
 *
 * Slots held by the stock side (perf_event_open() events on pevt_vpmu) or
 * by the debugfs holder: pevt plans its rotations around them.  Any
 * context; exact on @cpu with irqs off for slots taken or given back by
 * @cpu itself (the stock PMU's add/del).
 *
 * Return: bit mask of slots.
 */
u64 vpmu_slots_foreign(int cpu)
{
	struct vpmu_cpu *pc = per_cpu_ptr(&vpmu_cpus, cpu);

	return READ_ONCE(pc->stock) | READ_ONCE(pc->dbg_held);
}

/**
 * vpmu_slots_used() - slots currently held on a CPU (introspection)
 * @cpu: CPU
 *
 * Return: bit mask of held slots.
 */
u64 vpmu_slots_used(int cpu)
{
	return READ_ONCE(per_cpu_ptr(&vpmu_cpus, cpu)->used);
}

/* ------------------------------------------------------------------ */
/* Sources and their hooks                                            */

static void vpmu_sample(unsigned int src, struct pt_regs *regs);

/**
 * vpmu_hook_sys_enter() - raw_syscalls:sys_enter, from the hook hub.
 * @regs: the user registers at the system call
 */
void vpmu_hook_sys_enter(struct pt_regs *regs)
{
	this_cpu_inc(vpmu_cpus.ev[VPMU_SRC_SYSCALLS]);
	if (unlikely(this_cpu_read(vpmu_cpus.nr_sampling[VPMU_SRC_SYSCALLS])))
		vpmu_sample(VPMU_SRC_SYSCALLS, regs);
}

/**
 * vpmu_hook_sched_switch() - sched_switch, from the hook hub, before
 * pevt's task contexts switch.
 */
void vpmu_hook_sched_switch(void)
{
	struct pt_regs regs;

	/*
	 * sched_switch fires before perf_event_task_sched_out(), so the
	 * outgoing task's counters are still running and count this switch,
	 * as the stock context-switches event does.
	 */
	this_cpu_inc(vpmu_cpus.ev[VPMU_SRC_CSWITCH]);
	if (unlikely(this_cpu_read(vpmu_cpus.nr_sampling[VPMU_SRC_CSWITCH]))) {
		perf_fetch_caller_regs(&regs);
		vpmu_sample(VPMU_SRC_CSWITCH, &regs);
	}
}

/**
 * vpmu_source_get() - check a source before a counter of it is created
 * @source: enum vpmu_source
 *
 * The hooks that feed the sources are registered for the module's
 * lifetime (sideband.c).  Pair with vpmu_source_put().
 *
 * Return: 0, or -ENOENT for an unknown source.
 */
int vpmu_source_get(unsigned int source)
{
	return source < VPMU_NR_SOURCES ? 0 : -ENOENT;
}

/**
 * vpmu_source_put() - drop what vpmu_source_get() took (nothing today)
 * @source: enum vpmu_source
 */
void vpmu_source_put(unsigned int source)
{
}

/* Current value of a source on this CPU. */
static u64 vpmu_source_now(unsigned int src)
{
	if (src == VPMU_SRC_CPU_NS)
		return local_clock();
	return this_cpu_read(vpmu_cpus.ev[src]);
}

/* ------------------------------------------------------------------ */
/* Counters                                                           */

static u64 vpmu_counter_update(struct vpmu_counter *c)
{
	u64 now, delta;

	if (!c->active)
		return 0;
	now = vpmu_source_now(c->source);
	delta = now - c->prev;
	c->prev = now;
	c->count += delta;
	/*
	 * Events counted by any update (a read, a stop) advance an event
	 * source's countdown too: vpmu_sample() only sees what is left since
	 * the last update, so subtracting there alone lost the events a
	 * concurrent read had taken and overflows came late.  Time sources
	 * count down in their hrtimer.
	 */
	if (c->period && c->source != VPMU_SRC_CPU_NS)
		c->left -= delta;
	return delta;
}

/* Time source sampling: an hrtimer on the counter's CPU, like cpu-clock. */
static enum hrtimer_restart vpmu_hrtimer(struct hrtimer *t)
{
	struct vpmu_counter *c = container_of(t, struct vpmu_counter, timer);
	struct pt_regs *regs = get_irq_regs();
	struct pt_regs fake;

	/*
	 * A pinned hrtimer of a CPU going offline migrates to another CPU:
	 * never count or sample there for the dead one.
	 */
	if (!c->active || c->cpu != smp_processor_id())
		return HRTIMER_NORESTART;
	vpmu_counter_update(c);
	if (!regs) {
		perf_fetch_caller_regs(&fake);
		regs = &fake;
	}
	c->left = c->period;
	c->overflow(c, regs);
	/* The overflow handler may have stopped (throttled) the counter. */
	if (!c->active)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(max(c->period, PEVT_CLOCK_MIN_PERIOD)));
	return HRTIMER_RESTART;
}

/**
 * vpmu_counter_init() - prepare a counter before its first start
 * @c: counter (may be embedded in the caller's event)
 * @source: enum vpmu_source
 * @period: sampling period (0: counting only)
 * @overflow: overflow callback for sampling, else NULL
 * @priv: owner's cookie
 *
 * Sleeping context.  The caller must hold a vpmu_source_get() reference
 * for @source while the counter exists, and call vpmu_counter_destroy()
 * before freeing a sampling counter.
 */
void vpmu_counter_init(struct vpmu_counter *c, unsigned int source, u64 period,
		       void (*overflow)(struct vpmu_counter *c, struct pt_regs *regs),
		       void *priv)
{
	memset(c, 0, sizeof(*c));
	c->source = source;
	c->slot = -1;
	c->period = period;
	c->left = period;
	c->overflow = overflow;
	c->priv = priv;
	hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	c->timer.function = vpmu_hrtimer;
}

/**
 * vpmu_counter_destroy() - wait for a stopped counter's timer
 * @c: counter, stopped
 *
 * May sleep.
 */
void vpmu_counter_destroy(struct vpmu_counter *c)
{
	hrtimer_cancel(&c->timer);
}

/**
 * vpmu_counter_start() - start counting in the counter's slot
 * @c: counter with @c->slot allocated on this CPU
 *
 * On the slot's CPU with irqs disabled.  Sampling counters start with
 * @c->left events to go.  Starting a started counter does nothing.
 */
void vpmu_counter_start(struct vpmu_counter *c)
{
	struct vpmu_cpu *pc = this_cpu_ptr(&vpmu_cpus);

	lockdep_assert_irqs_disabled();
	if (c->active || c->slot < 0)
		return;
	c->cpu = smp_processor_id();
	c->prev = vpmu_source_now(c->source);
	c->active = true;
	pc->run[c->slot] = c;
	if (!c->period)
		return;
	/*
	 * An event source's overdue overflow (left <= 0) is taken at its next
	 * event, as perf_swevent_add() leaves period_left for the next one.
	 */
	if (c->source == VPMU_SRC_CPU_NS && c->left <= 0)
		c->left = c->period;
	if (c->source == VPMU_SRC_CPU_NS)
		hrtimer_start(&c->timer,
			      ns_to_ktime(max_t(u64, c->left, PEVT_CLOCK_MIN_PERIOD)),
			      HRTIMER_MODE_REL_PINNED_HARD);
	else
		pc->nr_sampling[c->source]++;
}

/**
 * vpmu_counter_stop() - stop counting, keep the count
 * @c: counter
 *
 * On the counter's CPU with irqs disabled, also from its own overflow
 * callback.  @c->left keeps the events left until the next overflow.
 */
void vpmu_counter_stop(struct vpmu_counter *c)
{
	struct vpmu_cpu *pc = this_cpu_ptr(&vpmu_cpus);

	lockdep_assert_irqs_disabled();
	if (!c->active)
		return;
	vpmu_counter_update(c);
	c->active = false;
	pc->run[c->slot] = NULL;
	if (!c->period)
		return;
	if (c->source == VPMU_SRC_CPU_NS) {
		/* -1 when called from the callback itself: it sees !active. */
		if (hrtimer_try_to_cancel(&c->timer) >= 0) {
			s64 rem = ktime_to_ns(hrtimer_get_remaining(&c->timer));

			c->left = rem > 0 ? rem : 0;
		}
	} else {
		pc->nr_sampling[c->source]--;
	}
}

/**
 * vpmu_counter_read() - bring the count up to date
 * @c: counter
 *
 * On the counter's CPU with irqs disabled if it is started; any context
 * if it is stopped.
 *
 * Return: @c->count.
 */
u64 vpmu_counter_read(struct vpmu_counter *c)
{
	vpmu_counter_update(c);
	return c->count;
}

/* Event-driven sampling: called by a probe when a sampling ctr runs here. */
static void vpmu_sample(unsigned int src, struct pt_regs *regs)
{
	struct vpmu_cpu *pc;
	unsigned long flags;
	unsigned int i;

	/* pmu::add/del come from IPIs: keep them out while we walk run[]. */
	local_irq_save(flags);
	pc = this_cpu_ptr(&vpmu_cpus);
	for (i = 0; i < nr_counters; i++) {
		struct vpmu_counter *c = pc->run[i];

		if (!c || c->source != src || !c->period)
			continue;
		vpmu_counter_update(c);
		if (c->left > 0)
			continue;
		c->left += c->period;
		if (c->left <= 0)
			c->left = c->period;
		c->overflow(c, regs);
	}
	local_irq_restore(flags);
}

/* ------------------------------------------------------------------ */
/* The stock PMU                                                      */

struct vpmu_stock {
	struct vpmu_counter c;
	struct perf_event *event;
	u64 reported;		/* c.count already added to event->count */
	u64 mask;		/* effective allowed slots */
	bool want_start;	/* add(PERF_EF_START) inside a transaction */
};

static struct pmu vpmu_pmu;

static inline struct vpmu_stock *vpmu_stock(struct perf_event *event)
{
	return event->pmu_private;
}

static void vpmu_stock_sync(struct perf_event *event)
{
	struct vpmu_stock *s = vpmu_stock(event);
	u64 now = vpmu_counter_read(&s->c);

	local64_add(now - s->reported, &event->count);
	/*
	 * Counts synced outside vpmu_stock_overflow() still advance the
	 * sampling period (as perf_swevent_event() would have): the next
	 * delivery then owes the overflows they completed.
	 */
	if (is_sampling_event(event))
		local64_add(now - s->reported, &event->hw.period_left);
	s->reported = now;
}

/*
 * Sampling goes through the stock software-event path: perf_event_overflow()
 * is not exported, perf_tp_event() is.  Handed a one-entry list holding our
 * event (hlist_entry is only used by software and tracepoint events), it
 * adds @count to event->count and runs perf_swevent_event(): period_left
 * accounting, freq mode, throttling and perf_event_overflow() exactly as
 * for a software event, with our regs.  The record is a dummy trace entry
 * (what PERF_SAMPLE_RAW would show).
 */
static void vpmu_stock_overflow(struct vpmu_counter *c, struct pt_regs *regs)
{
	struct vpmu_stock *s = c->priv;
	struct perf_event *event = s->event;
	struct hlist_head head;
	u64 rec[2] = { 0, 0 };
	u64 now = c->count, delta;
	int rctx;

	if (c->source == VPMU_SRC_CPU_NS)
		c->period = max_t(u64, event->hw.sample_period, PEVT_CLOCK_MIN_PERIOD);
	rctx = perf_swevent_get_recursion_context();
	if (rctx < 0)
		return;		/* delivered with the next overflow */
	head.first = &event->hlist_entry;
	event->hlist_entry.next = NULL;
	event->hlist_entry.pprev = &head.first;
	delta = now - s->reported;
	s->reported = now;
	/* entry_size: raw data is u32 size + payload, padded to u64. */
	perf_tp_event(0, delta, rec, sizeof(rec) - sizeof(u32), regs, &head,
		      rctx, NULL);
}

static void vpmu_pmu_start(struct perf_event *event, int flags)
{
	struct vpmu_stock *s = vpmu_stock(event);
	struct hw_perf_event *hwc = &event->hw;

	if (!(hwc->state & PERF_HES_STOPPED) || s->c.slot < 0)
		return;
	if (is_sampling_event(event)) {
		/* Events: see each one (period 1); time: an hrtimer tick. */
		s64 owed = -local64_read(&hwc->period_left);

		s->c.period = s->c.source == VPMU_SRC_CPU_NS ?
			max_t(u64, hwc->sample_period, PEVT_CLOCK_MIN_PERIOD) : 1;
		/* The time source's first tick: when the period completes. */
		s->c.left = s->c.source == VPMU_SRC_CPU_NS && owed > 0 ?
			owed : s->c.period;
	}
	hwc->state = 0;
	vpmu_counter_start(&s->c);
	perf_event_update_userpage(event);
}

static void vpmu_pmu_stop(struct perf_event *event, int flags)
{
	struct vpmu_stock *s = vpmu_stock(event);
	struct hw_perf_event *hwc = &event->hw;

	if (!(hwc->state & PERF_HES_STOPPED)) {
		vpmu_counter_stop(&s->c);
		hwc->state |= PERF_HES_STOPPED;
	}
	if (!(hwc->state & PERF_HES_UPTODATE)) {
		vpmu_stock_sync(event);
		hwc->state |= PERF_HES_UPTODATE;
	}
}

/* What perf_swevent_add() does to period_left: a pending overflow is due. */
static void vpmu_stock_set_period(struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	s64 val = local64_read(&hwc->period_left);
	u64 period = hwc->sample_period;

	hwc->last_period = period;
	if (val >= 0 && period)
		local64_set(&hwc->period_left,
			    val - (s64)(div64_u64(period + val, period) * period));
}

static int vpmu_pmu_add(struct perf_event *event, int flags)
{
	struct vpmu_cpu *pc = this_cpu_ptr(&vpmu_cpus);
	struct vpmu_stock *s = vpmu_stock(event);
	struct hw_perf_event *hwc = &event->hw;
	int slot;

	hwc->state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	s->c.slot = -1;
	if (is_sampling_event(event))
		vpmu_stock_set_period(event);
	if (pc->txn_flags & PERF_PMU_TXN_ADD) {
		/* Slots are assigned for the whole group at commit. */
		if (pc->txn_n >= (int)nr_counters)
			return -EAGAIN;
		s->want_start = flags & PERF_EF_START;
		pc->txn_mask[pc->txn_n] = s->mask;
		pc->txn_ev[pc->txn_n++] = event;
		return 0;
	}
	slot = vpmu_slot_get(smp_processor_id(), s->mask, VPMU_OWNER_STOCK);
	if (slot < 0)
		return -EAGAIN;	/* the stock core multiplexes */
	s->c.slot = slot;
	hwc->idx = slot;
	if (flags & PERF_EF_START)
		vpmu_pmu_start(event, PERF_EF_RELOAD);
	perf_event_update_userpage(event);
	return 0;
}

static void vpmu_pmu_del(struct perf_event *event, int flags)
{
	struct vpmu_cpu *pc = this_cpu_ptr(&vpmu_cpus);
	struct vpmu_stock *s = vpmu_stock(event);
	int i;

	vpmu_pmu_stop(event, PERF_EF_UPDATE);
	if (s->c.slot >= 0) {
		vpmu_slot_put(smp_processor_id(), s->c.slot);
		s->c.slot = -1;
		event->hw.idx = -1;
		/* pevt may have planned around this slot: it can use it now */
		sched_slots_changed(smp_processor_id());
	} else {
		/* Removed inside a failed transaction: forget it. */
		for (i = 0; i < pc->txn_n; i++)
			if (pc->txn_ev[i] == event)
				pc->txn_ev[i] = NULL;
	}
	perf_event_update_userpage(event);
}

static void vpmu_pmu_read(struct perf_event *event)
{
	vpmu_stock_sync(event);
}

static void vpmu_start_txn(struct pmu *pmu, unsigned int flags)
{
	struct vpmu_cpu *pc = this_cpu_ptr(&vpmu_cpus);

	pc->txn_flags = flags;
	pc->txn_n = 0;
}

static int vpmu_commit_txn(struct pmu *pmu)
{
	struct vpmu_cpu *pc = this_cpu_ptr(&vpmu_cpus);
	int i;

	if (!(pc->txn_flags & PERF_PMU_TXN_ADD)) {
		pc->txn_flags = 0;
		return 0;
	}
	if (pc->txn_n && vpmu_slots_get_group(smp_processor_id(), pc->txn_mask,
					      pc->txn_n, pc->txn_slot,
					      VPMU_OWNER_STOCK))
		return -EAGAIN;	/* core calls del() on each, then cancel */
	pc->txn_flags = 0;
	for (i = 0; i < pc->txn_n; i++) {
		struct perf_event *event = pc->txn_ev[i];
		struct vpmu_stock *s = vpmu_stock(event);

		s->c.slot = pc->txn_slot[i];
		event->hw.idx = s->c.slot;
		if (s->want_start)
			vpmu_pmu_start(event, PERF_EF_RELOAD);
		perf_event_update_userpage(event);
	}
	pc->txn_n = 0;
	return 0;
}

static void vpmu_cancel_txn(struct pmu *pmu)
{
	struct vpmu_cpu *pc = this_cpu_ptr(&vpmu_cpus);

	pc->txn_flags = 0;
	pc->txn_n = 0;
}

static void vpmu_event_destroy(struct perf_event *event)
{
	struct vpmu_stock *s = vpmu_stock(event);

	vpmu_counter_destroy(&s->c);
	vpmu_source_put(s->c.source);
	event->pmu_private = NULL;
	kfree(s);
}

/*
 * Refuse a group that could never be scheduled on an empty vPMU, so the
 * stock core does not retry a hopeless group on every tick (x86 does the
 * same in validate_group()).  Like x86 this walks the leader's siblings
 * before the new event is attached.
 */
static int vpmu_validate_group(struct perf_event *event, u64 mask)
{
	struct perf_event *leader = event->group_leader, *sib;
	u64 masks[VPMU_MAX_COUNTERS + 1];
	int n = 0;

	if (leader == event)
		return 0;
	if (leader->pmu == &vpmu_pmu)
		masks[n++] = vpmu_stock(leader)->mask;
	list_for_each_entry(sib, &leader->sibling_list, sibling_list) {
		if (sib->pmu != &vpmu_pmu)
			continue;
		if (n >= (int)nr_counters)
			return -EINVAL;
		masks[n++] = vpmu_stock(sib)->mask;
	}
	if (n >= (int)nr_counters)
		return -EINVAL;
	masks[n++] = mask;
	return vpmu_group_fits(masks, n) ? 0 : -EINVAL;
}

static int vpmu_event_init(struct perf_event *event)
{
	struct perf_event_attr *attr = &event->attr;
	unsigned int src = attr->config & VPMU_CONFIG_SOURCE;
	struct vpmu_stock *s;
	u64 mask;
	int ret;

	if (attr->type != vpmu_pmu.type)
		return -ENOENT;
	/* Reserved config bits: a malformed event, as perf would say. */
	if ((attr->config & ~VPMU_CONFIG_SOURCE) || attr->config2)
		return -EINVAL;
	/* No such counter on this PMU. */
	if (src >= VPMU_NR_SOURCES)
		return -ENOENT;
	/* A constraint naming slots that do not exist can never be met. */
	mask = vpmu_valid_mask(attr->config1);
	if (attr->config1 & ~vpmu_all || !mask)
		return -EINVAL;
	ret = vpmu_check_filters(attr);
	if (ret)
		return ret;
	if (attr->precise_ip || has_branch_stack(event))
		return -EOPNOTSUPP;
	ret = vpmu_validate_group(event, mask);
	if (ret)
		return ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	ret = vpmu_source_get(src);
	if (ret)
		goto err_free;
	/* The period is set at start (pmu::start), from the stock fields. */
	vpmu_counter_init(&s->c, src, 0, vpmu_stock_overflow, s);
	s->event = event;
	s->mask = mask;
	event->hw.idx = -1;
	event->hw.config = src;
	event->pmu_private = s;
	event->destroy = vpmu_event_destroy;
	return 0;

err_free:
	kfree(s);
	return ret;
}

/**
 * vpmu_check_filters() - refuse the exclusions a vPMU counter cannot honour
 * @attr: the attr of a vPMU event, stock or pevt
 *
 * Sources count everything on the CPU: user/kernel/idle/host filters
 * cannot be honoured.  Guests and hypervisors never show up here, so
 * exclude_guest/exclude_hv are trivially true and accepted.  One rule for
 * both paths (vpmu_event_init() and pevt's vpmu_src.c).
 *
 * Return: 0 or -EOPNOTSUPP.
 */
int vpmu_check_filters(const struct perf_event_attr *attr)
{
	if (attr->exclude_user || attr->exclude_kernel || attr->exclude_idle ||
	    attr->exclude_host)
		return -EOPNOTSUPP;
	return 0;
}

/**
 * vpmu_perf_type() - perf type id of pevt_vpmu (attr.type of its events)
 *
 * Return: the type perf_pmu_register() assigned.
 */
int vpmu_perf_type(void)
{
	return vpmu_pmu.type;
}

static int vpmu_event_idx(struct perf_event *event)
{
	return 0;	/* no user-space rdpmc */
}

/* sysfs: format/, events/, nr_counters (type and mux interval are stock) */
PMU_FORMAT_ATTR(source, "config:0-7");
PMU_FORMAT_ATTR(mask, "config1:0-63");

static struct attribute *vpmu_format_attrs[] = {
	&format_attr_source.attr,
	&format_attr_mask.attr,
	NULL,
};

static const struct attribute_group vpmu_format_group = {
	.name = "format",
	.attrs = vpmu_format_attrs,
};

PMU_EVENT_ATTR_STRING(cpu_ns, vpmu_ev_cpu_ns, "source=0x0");
PMU_EVENT_ATTR_STRING(cpu_ns.unit, vpmu_ev_cpu_ns_unit, "ns");
PMU_EVENT_ATTR_STRING(syscalls, vpmu_ev_syscalls, "source=0x1");
PMU_EVENT_ATTR_STRING(cswitch, vpmu_ev_cswitch, "source=0x2");

static struct attribute *vpmu_events_attrs[] = {
	&vpmu_ev_cpu_ns.attr.attr,
	&vpmu_ev_cpu_ns_unit.attr.attr,
	&vpmu_ev_syscalls.attr.attr,
	&vpmu_ev_cswitch.attr.attr,
	NULL,
};

static const struct attribute_group vpmu_events_group = {
	.name = "events",
	.attrs = vpmu_events_attrs,
};

static ssize_t nr_counters_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", nr_counters);
}
static DEVICE_ATTR_RO(nr_counters);

static struct attribute *vpmu_misc_attrs[] = {
	&dev_attr_nr_counters.attr,
	NULL,
};

static const struct attribute_group vpmu_misc_group = {
	.attrs = vpmu_misc_attrs,
};

static const struct attribute_group *vpmu_attr_groups[] = {
	&vpmu_format_group,
	&vpmu_events_group,
	&vpmu_misc_group,
	NULL,
};

static struct pmu vpmu_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_hw_context,
	.capabilities	= VPMU_COMPAT_PMU_CAPS,
	.attr_groups	= vpmu_attr_groups,
	.event_init	= vpmu_event_init,
	.add		= vpmu_pmu_add,
	.del		= vpmu_pmu_del,
	.start		= vpmu_pmu_start,
	.stop		= vpmu_pmu_stop,
	.read		= vpmu_pmu_read,
	.start_txn	= vpmu_start_txn,
	.commit_txn	= vpmu_commit_txn,
	.cancel_txn	= vpmu_cancel_txn,
	.event_idx	= vpmu_event_idx,
};

/*
 * debugfs pevt_vpmu/slots: exercise the pevt side of the allocator from a
 * test.  Read: "cpu used owners" per CPU (owners: one letter per slot, '-'
 * free, 's' stock, 'p' pevt).  Write "get CPU MASK" to take a slot as pevt
 * (-EAGAIN when none is free), "put CPU SLOT" to give back one taken so.
 */
static struct dentry *vpmu_dbg_dir;

static int vpmu_dbg_show(struct seq_file *m, void *v)
{
	static const char own[] = { '-', 's', 'p' };
	unsigned int cpu, i;

	for_each_online_cpu(cpu) {
		struct vpmu_cpu *pc = per_cpu_ptr(&vpmu_cpus, cpu);

		seq_printf(m, "%u %#llx ", cpu, READ_ONCE(pc->used));
		for (i = 0; i < nr_counters; i++)
			seq_putc(m, own[READ_ONCE(pc->owner[i]) % 3]);
		seq_putc(m, '\n');
	}
	return 0;
}

static int vpmu_dbg_open(struct inode *inode, struct file *file)
{
	return single_open(file, vpmu_dbg_show, NULL);
}

static DEFINE_MUTEX(vpmu_dbg_lock);

static ssize_t vpmu_dbg_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	char buf[64], op[8];
	unsigned int cpu;
	u64 arg;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%7s %u %llx", op, &cpu, &arg) != 3 ||
	    cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	mutex_lock(&vpmu_dbg_lock);
	if (!strcmp(op, "get")) {
		ret = vpmu_slot_get(cpu, vpmu_valid_mask(arg), VPMU_OWNER_PEVT);
		if (ret >= 0) {
			per_cpu_ptr(&vpmu_cpus, cpu)->dbg_held |= BIT_ULL(ret);
			sched_slots_changed(cpu);
		}
	} else if (!strcmp(op, "put")) {
		struct vpmu_cpu *pc = per_cpu_ptr(&vpmu_cpus, cpu);

		ret = -EINVAL;
		if (arg < VPMU_MAX_COUNTERS && (pc->dbg_held & BIT_ULL(arg))) {
			pc->dbg_held &= ~BIT_ULL(arg);
			vpmu_slot_put(cpu, arg);
			sched_slots_changed(cpu);
			ret = 0;
		}
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&vpmu_dbg_lock);
	return ret < 0 ? ret : len;
}

static const struct file_operations vpmu_dbg_fops = {
	.owner = THIS_MODULE,
	.open = vpmu_dbg_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = vpmu_dbg_write,
};

static void vpmu_dbg_init(void)
{
	vpmu_dbg_dir = debugfs_create_dir("pevt_vpmu", NULL);
	debugfs_create_file("slots", 0600, vpmu_dbg_dir, NULL, &vpmu_dbg_fops);
}

static void vpmu_dbg_exit(void)
{
	unsigned int cpu, s;

	debugfs_remove_recursive(vpmu_dbg_dir);
	for_each_possible_cpu(cpu) {
		struct vpmu_cpu *pc = per_cpu_ptr(&vpmu_cpus, cpu);

		for (s = 0; s < VPMU_MAX_COUNTERS; s++)
			if (pc->dbg_held & BIT_ULL(s))
				vpmu_slot_put(cpu, s);
		pc->dbg_held = 0;
	}
}

/**
 * vpmu_init() - set up the slots and register pevt_vpmu with perf
 *
 * Return: 0 or negative errno (bad nr_counters: -EINVAL).
 */
int vpmu_init(void)
{
	int cpu, ret;

	if (nr_counters < 1 || nr_counters > VPMU_MAX_COUNTERS) {
		pr_err("pevt: nr_counters=%u out of range (1..%d)\n",
		       nr_counters, VPMU_MAX_COUNTERS);
		return -EINVAL;
	}
	vpmu_all = nr_counters == 64 ? ~0ULL : BIT_ULL(nr_counters) - 1;
	for_each_possible_cpu(cpu) {
		struct vpmu_cpu *pc = per_cpu_ptr(&vpmu_cpus, cpu);

		memset(pc, 0, sizeof(*pc));
		raw_spin_lock_init(&pc->lock);
	}
	ret = perf_pmu_register(&vpmu_pmu, "pevt_vpmu", -1);
	if (ret) {
		pr_err("pevt: perf_pmu_register(pevt_vpmu) failed: %d\n", ret);
		return ret;
	}
	vpmu_dbg_init();
	return 0;
}

/**
 * vpmu_exit() - unregister pevt_vpmu
 *
 * No counter exists any more: stock events pin the module, pevt's own
 * are gone before this runs.
 */
void vpmu_exit(void)
{
	vpmu_dbg_exit();
	perf_pmu_unregister(&vpmu_pmu);
}
