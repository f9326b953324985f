/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pevt_vpmu: a virtual PMU with nr_counters slots per CPU, shared by the
 * stock perf core (perf_pmu_register()) and pevt's own scheduler.
 *
 * Slots are the scarce resource.  A slot is held by one owner at a time
 * (stock perf or pevt); whoever holds it runs a counter in it.  Constraint
 * masks say which slots a counter may occupy, exactly as for the stock
 * events (config1 of the perf_event_attr).
 *
 * Event encoding (perf_event_attr, also used by pevt):
 *   config  bits 0-7   source (enum vpmu_source)
 *   config1 bits 0-63  allowed-slot mask, 0 = any slot
 *
 * See Documentation/vpmu.md.
 */
#ifndef _PEVT_VPMU_H
#define _PEVT_VPMU_H

#include <linux/types.h>
#include <linux/hrtimer.h>

struct pt_regs;
struct perf_event_attr;

#define VPMU_MAX_COUNTERS	64

/*
 * Shortest period of hrtimer sampling, ns: perf's floor for its clocks
 * (perf_swevent_init_hrtimer()), for pevt's clocks and the vPMU's time
 * source alike.
 */
#define PEVT_CLOCK_MIN_PERIOD	10000ULL

/**
 * enum vpmu_source - what a vPMU counter counts while it is active
 * @VPMU_SRC_CPU_NS: nanoseconds (local_clock) while active; twin: task-clock
 *                   or cpu-clock
 * @VPMU_SRC_SYSCALLS: system calls entered on the CPU (raw_syscalls
 *                     sys_enter); twin: raw_syscalls:sys_enter count
 * @VPMU_SRC_CSWITCH: context switches on the CPU (sched_switch); twin:
 *                    context-switches
 * @VPMU_NR_SOURCES: number of sources
 */
enum vpmu_source {
	VPMU_SRC_CPU_NS = 0,
	VPMU_SRC_SYSCALLS = 1,
	VPMU_SRC_CSWITCH = 2,
	VPMU_NR_SOURCES,
};

#define VPMU_CONFIG_SOURCE	0xffULL	/* config: source field */

/**
 * enum vpmu_owner - who holds a slot
 * @VPMU_OWNER_NONE: slot is free
 * @VPMU_OWNER_STOCK: the stock perf core (pevt_vpmu PMU)
 * @VPMU_OWNER_PEVT: pevt's own scheduler
 */
enum vpmu_owner {
	VPMU_OWNER_NONE = 0,
	VPMU_OWNER_STOCK,
	VPMU_OWNER_PEVT,
};

/**
 * struct vpmu_counter - one counter running in a vPMU slot
 * @source: enum vpmu_source, set before vpmu_counter_start()
 * @slot: slot index while started, -1 otherwise (set by the owner from
 *        vpmu_slot_get())
 * @cpu: CPU the counter runs on while started
 * @active: counting now (between start and stop)
 * @prev: source value at the last start/update
 * @count: events counted so far, monotonic; the user resets by copying
 * @period: sampling period, 0 for counting only
 * @left: events left until the next overflow (sampling only)
 * @overflow: called on overflow with irqs off on @cpu, with the regs of
 *            the interrupted/traced context; may call vpmu_counter_stop()
 * @priv: for the owner
 * @timer: drives overflows of a sampling VPMU_SRC_CPU_NS counter
 *
 * The counter may be embedded in the owner's event.  All fields except
 * @source, @period, @left, @overflow and @priv belong to vpmu.c.
 */
struct vpmu_counter {
	u8 source;
	s8 slot;
	bool active;
	int cpu;
	u64 prev;
	u64 count;
	u64 period;
	s64 left;
	void (*overflow)(struct vpmu_counter *c, struct pt_regs *regs);
	void *priv;
	struct hrtimer timer;
};

/**
 * DOC: pevt-side API
 *
 * pevt's scheduler shares the slots with the stock PMU.  A slot held by one
 * owner is never handed to the other; constraints are the same masks as
 * config1 of a stock event (vpmu_valid_mask() turns 0 into "any slot").
 *
 * Sleepable (event creation/destruction):
 *   vpmu_source_get() / vpmu_source_put() around a counter's lifetime,
 *   vpmu_counter_init(), vpmu_counter_destroy().
 *
 * Any context, irqs on or off, under raw spinlocks (per-CPU raw lock):
 *   vpmu_slot_get(cpu, allowed, VPMU_OWNER_PEVT)        -> slot or -EAGAIN
 *   vpmu_slot_get_matched(cpu, allowed[], n, o)          -> slot of event 0
 *       in a matching of a group's members still to be added;
 *   vpmu_slots_get_group(cpu, allowed[], n, slots[], o) -> 0 or -EAGAIN,
 *       all or nothing, by bipartite matching;
 *   vpmu_slot_put(cpu, slot), vpmu_slots_used(cpu), vpmu_slots_foreign(cpu),
 *   vpmu_group_fits().
 *
 * On the slot's CPU with irqs disabled (context-switch hooks, hrtimers):
 *   c->slot = slot; vpmu_counter_start(c); ... vpmu_counter_read(c);
 *   vpmu_counter_stop(c); vpmu_slot_put(cpu, c->slot); c->slot = -1;
 *
 * c->count only grows; keep a base for resets.  With period > 0 the
 * overflow callback runs on the counter's CPU with irqs off every period
 * events (every period ns for VPMU_SRC_CPU_NS, from a pinned hrtimer).
 * Kernel-doc of each function is at its definition in vpmu.c.
 */

/* Module-internal entry points (main.c). */
int vpmu_init(void);
void vpmu_exit(void);

unsigned int vpmu_nr_counters(void);
int vpmu_perf_type(void);
int vpmu_check_filters(const struct perf_event_attr *attr);
u64 vpmu_valid_mask(u64 mask);

int vpmu_slot_get(int cpu, u64 allowed, enum vpmu_owner owner);
int vpmu_slots_get_group(int cpu, const u64 *allowed, int n, int *slots,
			 enum vpmu_owner owner);
int vpmu_slot_get_matched(int cpu, const u64 *allowed, int n,
			  enum vpmu_owner owner);
void vpmu_slot_put(int cpu, int slot);
u64 vpmu_slots_used(int cpu);
u64 vpmu_slots_foreign(int cpu);

int vpmu_source_get(unsigned int source);
void vpmu_source_put(unsigned int source);

/* Called by the hook hub (sideband.c) for the sources. */
struct pt_regs;
void vpmu_hook_sys_enter(struct pt_regs *regs);
void vpmu_hook_sched_switch(void);
int vpmu_group_fits(const u64 *allowed, int n);

void vpmu_counter_init(struct vpmu_counter *c, unsigned int source, u64 period,
		       void (*overflow)(struct vpmu_counter *c, struct pt_regs *regs),
		       void *priv);
void vpmu_counter_destroy(struct vpmu_counter *c);
void vpmu_counter_start(struct vpmu_counter *c);
void vpmu_counter_stop(struct vpmu_counter *c);
u64 vpmu_counter_read(struct vpmu_counter *c);

#endif /* _PEVT_VPMU_H */
