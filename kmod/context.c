// SPDX-License-Identifier: GPL-2.0
/*
 * pevt contexts: one per CPU, one per monitored task.
 *
 * Task contexts live in a hash keyed by task_struct pointer.  The hook
 * hub (sideband.c) calls in here:
 *  - pevt_ctx_sched_switch() from sched_switch: schedules the outgoing
 *    task's context out and the incoming task's context in.  It runs under
 *    the runqueue lock with irqs off, so it only takes raw spinlocks (see
 *    internal.h).
 *  - pevt_ctx_task_exit() from perf_event_exit_task() (a kprobe; the
 *    sched_process_exit tracepoint without kprobes), after the EXIT record
 *    has been written: the task is going away; its context goes inactive
 *    for good (events keep their final values) and leaves the hash.
 *  - pevt_ctx_task_exec() from sched_process_exec: an exec that made the
 *    task non-dumpable (setuid, file capabilities) does the same, like
 *    perf_event_exit_task() in begin_new_exec() (perm.c decides;
 *    Documentation/security.md).
 * With no task context the switch hook returns at once.
 *
 * Where time starts and stops: perf schedules a task's events out in
 * prepare_task_switch() (pevt: sched_switch, a few instructions earlier:
 * same) and in from finish_task_switch(), after switch_mm()/switch_to().
 * pevt schedules in from a kprobe on finish_task_switch() too
 * (pevt_ctx_switch_in(), registered at load): the time between the two,
 * which includes switching address spaces, belongs to no task context.
 * Until 2026-11-26 the switch-in ran at sched_switch, before them, so a
 * task's clocks included its switch-in path: < 0.5% for a busy task, but
 * 14-20% for a task doing nothing but pipe ping-pong (fairness.md,
 * "Estimate error in many-tasks").  Kernels without kprobes, or where
 * the kprobe cannot be placed, keep doing that
 * (/sys/module/pevt/parameters/switch_in_late: N).  The time starts at
 * the end of pevt's switch-in, which perf's own sched-in follows
 * (ctx_task_sched_in()).  During the window the CPU's task_ctx is NULL
 * (or, across a switch between clones, the outgoing task's context, kept
 * in as perf's context swap would: ctx_equiv()) and irqs stay off, so no
 * IPI or tick sees the half-switched state.
 */
#include <linux/cpuhotplug.h>
#include <linux/hashtable.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>

#include "internal.h"
#include "pevt_sched.h"
#include "compat.h"
#include "output.h"
#include "perm.h"
#include "sideband.h"

DEFINE_PER_CPU(struct pevt_cpu_context, pevt_cpu_ctx);

#define PEVT_TASK_HASH_BITS	7
static DEFINE_HASHTABLE(pevt_task_hash, PEVT_TASK_HASH_BITS);
static DEFINE_RAW_SPINLOCK(pevt_task_hash_lock);
static DEFINE_MUTEX(pevt_task_mutex);
static unsigned int pevt_nr_task_ctx;	/* pevt_task_mutex; read racily by probes */

/* Caller holds rcu_read_lock() or pevt_task_hash_lock. */
static struct pevt_context *task_ctx_lookup(struct task_struct *task)
{
	struct pevt_context *ctx;

	hash_for_each_possible_rcu(pevt_task_hash, ctx, hash_node,
				   (unsigned long)task)
		if (ctx->task == task)
			return ctx;
	return NULL;
}

/**
 * ctx_task_sched_in() - make a task context active on this CPU.
 * @cpuctx: this CPU's context
 * @ctx: the task context of the task now running here, ctx->lock held
 *
 * Irqs off.  Perf's priority order: CPU pinned (already on), task pinned,
 * CPU flexible, task flexible.  Only groups needing slots can be affected
 * by the order, so software-only task contexts skip the CPU context.
 */
void ctx_task_sched_in(struct pevt_cpu_context *cpuctx, struct pevt_context *ctx)
{
	struct pevt_context *cctx = &cpuctx->ctx;

	ctx->timestamp = local_clock();
	ctx->active_cpu = smp_processor_id();
	cpuctx->task_ctx = ctx;
	if (!ctx->nr_events)
		return;

	if (!ctx->nr_hw_events) {
		ctx_sched_in(ctx, PEVT_EVENT_ALL);
	} else {
		raw_spin_lock(&cctx->lock);	/* nests inside the task ctx lock */
		pevt_update_context_time(cctx);
		sched_task_switch_in(cctx, ctx);	/* rotid: a parked plan of this pair */
		ctx_sched_out(cctx, PEVT_EVENT_FLEXIBLE);
		ctx_sched_in(ctx, PEVT_EVENT_PINNED);
		ctx_sched_in(cctx, PEVT_EVENT_FLEXIBLE);
		ctx_sched_in(ctx, PEVT_EVENT_FLEXIBLE);
		sched_task_switch_done();	/* rotid: the tick's note */
		raw_spin_unlock(&cctx->lock);
	}
	/*
	 * The context's time starts here, after pevt's own work, not at
	 * the top: this kprobe runs at finish_task_switch()'s entry, before
	 * perf_event_task_sched_in(), so a clock started at the top also
	 * counted the kprobe's return, the start of finish_task_switch()
	 * and perf's own sched-in, none of which is in a stock event's time
	 * (Documentation/inherit.md "Switch edges": a task ping-ponging on
	 * one CPU read 1.05 of stock's task-clock under TCG, 1.004 now).
	 */
	ctx->timestamp = local_clock();
}

/**
 * ctx_task_sched_out() - make the task context active here inactive.
 * @cpuctx: this CPU's context
 * @ctx: cpuctx->task_ctx, ctx->lock held
 *
 * Irqs off.  Its time stops: enabled time of its events stops accruing.
 */
void ctx_task_sched_out(struct pevt_cpu_context *cpuctx, struct pevt_context *ctx)
{
	pevt_update_context_time(ctx);
	ctx_sched_out(ctx, PEVT_EVENT_ALL);
	ctx->active_cpu = -1;
	if (ctx->nr_hw_events)
		sched_task_switch_out();	/* rotid: the tick's pair is gone */
	if (cpuctx->task_ctx == ctx)
		cpuctx->task_ctx = NULL;
}

/*
 * True while the kprobe on finish_task_switch() is registered: the
 * incoming task's context is scheduled in there, not at sched_switch.
 * Changes only while no task context exists (load, unload).  `insmod
 * pevt.ko switch_in_late=N` keeps the switch-in at sched_switch (the
 * behaviour before 2026-11-26, for comparisons); read, it says which.
 */
static bool pevt_ctx_late_in = true;
module_param_named(switch_in_late, pevt_ctx_late_in, bool, 0444);
MODULE_PARM_DESC(switch_in_late,
		 "task contexts switched in from a kprobe on finish_task_switch() like perf (Y, default), else at sched_switch; read: which is in use");

/*
 * perf's context swap.  When the outgoing and the incoming task's contexts
 * are equivalent (perf's context_equiv(): one a clone of the other, or
 * both clones of the same context, made whole by inherit and unchanged
 * since), perf_event_context_sched_out() swaps the two contexts instead
 * of scheduling them out and in: the events run on across the switch, so
 * a tree's task-clock counts the switch itself (switch_mm(), switch_to(),
 * perf's own work), which it does not between unrelated tasks.  A tree
 * ping-ponging on one CPU read 0.70-0.80 of stock's task-clock before
 * pevt did the same (Documentation/inherit.md "Switch edges").  pevt
 * does not exchange the events of the two tasks (that is perf's way of
 * running on without touching the PMU); it keeps the outgoing context in
 * at sched_switch and takes it out at finish_task_switch(), just before
 * the incoming one goes in: the same time is counted, each task's events
 * keep their own counts (so inherit_stat needs no perf_event_sync_stat()).
 */
static bool ctx_equiv(const struct pevt_context *a, const struct pevt_context *b)
{
	u64 ra = READ_ONCE(a->clone_root), rb = READ_ONCE(b->clone_root);
	u64 ga, gb;

	if (!ra && !rb)
		return false;
	ga = ra ? READ_ONCE(a->clone_gen) : READ_ONCE(a->generation);
	gb = rb ? READ_ONCE(b->clone_gen) : READ_ONCE(b->generation);
	return (ra ?: a->uid) == (rb ?: b->uid) && ga == gb;
}

/*
 * At sched_switch, @ctx (the outgoing task's, active here, ctx->lock
 * held): stays in until finish_task_switch() if @next's is equivalent.
 */
static bool ctx_keep_for(struct pevt_context *ctx, struct task_struct *next)
{
	struct pevt_context *nctx;
	bool keep;

	if (!pevt_ctx_late_in || ctx->dead ||
	    !(READ_ONCE(ctx->clone_root) || READ_ONCE(ctx->cloned)))
		return false;
	rcu_read_lock();
	nctx = task_ctx_lookup(next);
	keep = nctx && !READ_ONCE(nctx->dead) && ctx_equiv(ctx, nctx);
	rcu_read_unlock();
	return keep;
}

/**
 * pevt_ctx_mark_clone() - @task's context was made whole by inherit.
 * @task: current, the child, its inherit work done
 * @pctx: the context it inherited from, its ctx->mutex held
 * @nr_events: the child events made, every group of @pctx
 *
 * perf_event_init_context() with inherited_all: the child's context is a
 * clone of @pctx's (of what @pctx is a clone of, if it is one: perf
 * flattens the hierarchy), as long as it holds only those events.
 */
void pevt_ctx_mark_clone(struct task_struct *task, struct pevt_context *pctx,
			 int nr_events)
{
	struct pevt_context *ctx;
	unsigned long flags;
	u64 root, gen;

	raw_spin_lock_irqsave(&pctx->lock, flags);
	root = pctx->clone_root;
	gen = root ? pctx->clone_gen : pctx->generation;
	if (!root)
		root = pctx->uid;
	WRITE_ONCE(pctx->cloned, true);
	raw_spin_unlock_irqrestore(&pctx->lock, flags);

	rcu_read_lock();
	ctx = task_ctx_lookup(task);
	if (ctx && ctx != pctx) {
		raw_spin_lock_irqsave(&ctx->lock, flags);
		if (!ctx->dead && ctx->nr_events == nr_events) {
			WRITE_ONCE(ctx->clone_gen, gen);
			WRITE_ONCE(ctx->clone_root, root);
		}
		raw_spin_unlock_irqrestore(&ctx->lock, flags);
	}
	rcu_read_unlock();
}

/* Schedule in the context of @next, now or about to run here. */
static void ctx_switch_in(struct pevt_cpu_context *cpuctx,
			  struct task_struct *next)
{
	struct pevt_context *ctx = cpuctx->task_ctx;
	u64 swap_ts = 0;

	/*
	 * The outgoing task's, kept in across the switch (ctx_equiv()): out
	 * now, and the incoming one's time starts where its time stopped,
	 * as if one context had run on (perf's swap leaves no gap).
	 */
	if (ctx) {
		raw_spin_lock(&ctx->lock);
		if (cpuctx->task_ctx == ctx) {
			ctx_task_sched_out(cpuctx, ctx);
			swap_ts = ctx->timestamp;
		}
		raw_spin_unlock(&ctx->lock);
	}

	if (atomic_read(&pevt_inherit_nr_pending))
		pevt_inherit_switch(next, true);
	rcu_read_lock();
	ctx = task_ctx_lookup(next);
	if (ctx) {
		raw_spin_lock(&ctx->lock);
		if (!ctx->dead && ctx->active_cpu < 0) {
			ctx_task_sched_in(cpuctx, ctx);
			if (swap_ts)
				ctx->timestamp = swap_ts;
		}
		raw_spin_unlock(&ctx->lock);
	}
	rcu_read_unlock();
}

/**
 * pevt_ctx_sched_switch() - sched_switch: the outgoing task context out,
 * and the incoming one in unless finish_task_switch() does that.
 * @next: the task about to run on this CPU
 *
 * Runqueue lock held, irqs off.
 */
noinline void pevt_ctx_sched_switch(struct task_struct *next)
{
	struct pevt_cpu_context *cpuctx = this_cpu_ptr(&pevt_cpu_ctx);
	struct pevt_context *ctx = cpuctx->task_ctx;

	/* No task context at all: nothing to look up. */
	if (!ctx && !READ_ONCE(pevt_nr_task_ctx))
		return;
	if (atomic_read(&pevt_inherit_nr_pending))
		pevt_inherit_switch(current, false);
	if (ctx) {
		raw_spin_lock(&ctx->lock);
		if (!ctx_keep_for(ctx, next))
			ctx_task_sched_out(cpuctx, ctx);
		raw_spin_unlock(&ctx->lock);
	}
	if (!pevt_ctx_late_in)
		ctx_switch_in(cpuctx, next);
}

#ifdef CONFIG_KPROBES
/*
 * kprobe on finish_task_switch(): current is the incoming task, switch_mm()
 * and switch_to() are done, the runqueue lock is still held and irqs are
 * off, where perf_event_task_sched_in() runs.  Also reached by a new
 * task's first switch-in (schedule_tail()).
 */
static int ctx_fts_pre(struct kprobe *kp, struct pt_regs *regs)
{
	u64 t0;

	if (!READ_ONCE(pevt_nr_task_ctx))
		return 0;
	t0 = pevt_probe_timing() ? local_clock() : 0;
	ctx_switch_in(this_cpu_ptr(&pevt_cpu_ctx), current);
	if (t0)
		pevt_probe_account_switch_in(local_clock() - t0);
	return 0;
}

static struct kprobe ctx_fts_kp = { .pre_handler = ctx_fts_pre };

/* GCC may have specialised it (Debian: finish_task_switch.isra.0). */
static const char * const ctx_fts_names[] = {
	"finish_task_switch", "finish_task_switch.isra.0",
};

static void ctx_late_in_init(void)
{
	int i, ret = -ENOENT;

	if (!pevt_ctx_late_in)
		return;

	for (i = 0; i < ARRAY_SIZE(ctx_fts_names); i++) {
		memset(&ctx_fts_kp, 0, sizeof(ctx_fts_kp));
		ctx_fts_kp.symbol_name = ctx_fts_names[i];
		ctx_fts_kp.pre_handler = ctx_fts_pre;
		ret = register_kprobe(&ctx_fts_kp);
		if (!ret)
			break;
	}
	if (ret)
		pr_info("pevt: no kprobe on finish_task_switch (%d): task time starts at sched_switch\n",
			ret);
	pevt_ctx_late_in = !ret;
}

static void ctx_late_in_exit(void)
{
	if (!pevt_ctx_late_in)
		return;
	unregister_kprobe(&ctx_fts_kp);
	pevt_ctx_late_in = false;
}
#else
static void ctx_late_in_init(void)
{
	pevt_ctx_late_in = false;
}

static void ctx_late_in_exit(void) { }
#endif

/**
 * pevt_ctx_task_exit() - perf_event_exit_task(): @task's context dies.
 * @task: current, exiting
 */
void pevt_ctx_task_exit(struct task_struct *task)
{
	struct pevt_context *ctx;
	unsigned long flags;

	/* task == current; irqs on, preemption off: irqsave for the IPIs. */
	raw_spin_lock_irqsave(&pevt_task_hash_lock, flags);
	ctx = task_ctx_lookup(task);
	if (ctx) {
		struct pevt_event *event;

		raw_spin_lock(&ctx->lock);
		if (ctx->active_cpu == smp_processor_id())
			ctx_task_sched_out(this_cpu_ptr(&pevt_cpu_ctx), ctx);
		WRITE_ONCE(ctx->dead, true);
		/* perf_event_exit_event(): pollers see POLLHUP from now on. */
		list_for_each_entry(event, &ctx->event_list, event_entry)
			pevt_output_hup(event);
		raw_spin_unlock(&ctx->lock);
		hash_del_rcu(&ctx->hash_node);
	}
	raw_spin_unlock_irqrestore(&pevt_task_hash_lock, flags);
}

/**
 * pevt_ctx_task_exec() - sched_process_exec: no counting across an exec
 * that raised privileges.
 * @task: current, after a successful exec
 */
void pevt_ctx_task_exec(struct task_struct *task)
{
	if (perm_exec_detach(task))
		pevt_ctx_task_exit(task);
}

/* The switch hook's address, for the bench instrument (probe.c). */
void *pevt_context_switch_fn(void)
{
	return pevt_ctx_sched_switch;
}

/*
 * IPI on the CPU the task was last seen on.  A context created while its
 * task runs was not in the hash when the task was switched in; activate
 * it now if the task is current here.  If it is not, the task was not
 * running when we looked, and its next switch-in sees the hash entry
 * (smp_mb() in ctx_get_task() pairs with the runqueue locking between
 * set_task_cpu() and the switch), the argument of perf's
 * perf_install_in_context().
 */
static void ctx_task_activate_ipi(void *info)
{
	struct pevt_context *ctx = info;
	struct pevt_cpu_context *cpuctx = this_cpu_ptr(&pevt_cpu_ctx);
	struct pevt_context *cur;

	if (current != ctx->task)
		return;
	cur = cpuctx->task_ctx;
	if (cur && cur != ctx) {
		raw_spin_lock(&cur->lock);
		ctx_task_sched_out(cpuctx, cur);
		raw_spin_unlock(&cur->lock);
	}
	raw_spin_lock(&ctx->lock);
	if (!ctx->dead && ctx->active_cpu < 0)
		ctx_task_sched_in(cpuctx, ctx);
	raw_spin_unlock(&ctx->lock);
}

/**
 * ctx_get_cpu() - the context of a CPU.
 * @cpu: a possible CPU
 *
 * CPU contexts are static; ctx_put() on them does nothing.
 *
 * Return: the context.
 */
struct pevt_context *ctx_get_cpu(int cpu)
{
	return &pevt_cpuctx(cpu)->ctx;
}

/**
 * ctx_find_task_get() - the context of @task if it exists and @want says so.
 * @task: a task
 * @want: called on the context under RCU (may take ctx->lock)
 * @get: take a reference (drop it with ctx_put())
 *
 * Any context (the hooks call it with preemption disabled).
 *
 * Return: the context, or NULL.  Without @get only a yes/no: the pointer
 * must not be used.
 */
struct pevt_context *ctx_find_task_get(struct task_struct *task,
				       bool (*want)(struct pevt_context *ctx),
				       bool get)
{
	struct pevt_context *ctx;

	if (!READ_ONCE(pevt_nr_task_ctx))
		return NULL;
	rcu_read_lock();
	ctx = task_ctx_lookup(task);
	if (ctx && want(ctx) &&
	    (!get || refcount_inc_not_zero(&ctx->refcount))) {
		rcu_read_unlock();
		return ctx;
	}
	rcu_read_unlock();
	return NULL;
}

/**
 * ctx_get_task() - find or create the context of a task, with a reference.
 * @task: the task (caller holds a reference)
 *
 * Process context, may sleep.
 *
 * Return: the context, ERR_PTR(-ESRCH) if the task is exiting, or
 * ERR_PTR(-ENOMEM).
 */
struct pevt_context *ctx_get_task(struct task_struct *task)
{
	struct pevt_context *ctx;
	int ret;

	mutex_lock(&pevt_task_mutex);
	rcu_read_lock();
	ctx = task_ctx_lookup(task);
	/* Under the mutex a hashed context cannot be on its way out. */
	if (ctx && refcount_inc_not_zero(&ctx->refcount)) {
		rcu_read_unlock();
		mutex_unlock(&pevt_task_mutex);
		return ctx;
	}
	rcu_read_unlock();

	ret = -ESRCH;
	if (task->flags & PF_EXITING)
		goto err_unlock;
	ret = -ENOMEM;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		goto err_unlock;
	atomic_inc(&pevt_nr_live_task_ctx);
	get_task_struct(task);
	pevt_ctx_init(ctx, -1, task);

	pevt_nr_task_ctx++;	/* before hashing: the switch hook looks */

	raw_spin_lock_irq(&pevt_task_hash_lock);
	/*
	 * PF_EXITING is set before the exit tracepoint, which takes this
	 * lock: either we see the flag, or the exit probe sees our entry.
	 */
	if (task->flags & PF_EXITING) {
		raw_spin_unlock_irq(&pevt_task_hash_lock);
		ret = -ESRCH;
		goto err_tp;
	}
	hash_add_rcu(pevt_task_hash, &ctx->hash_node, (unsigned long)task);
	raw_spin_unlock_irq(&pevt_task_hash_lock);
	mutex_unlock(&pevt_task_mutex);

	smp_mb();	/* hash entry visible before we read task_cpu() */
	smp_call_function_single(task_cpu(task), ctx_task_activate_ipi, ctx, 1);
	return ctx;

err_tp:
	pevt_nr_task_ctx--;
	put_task_struct(task);
	kfree(ctx);
	atomic_dec(&pevt_nr_live_task_ctx);
err_unlock:
	mutex_unlock(&pevt_task_mutex);
	return ERR_PTR(ret);
}

static int __ctx_kill(struct pevt_context *ctx, void *data, bool active)
{
	if (active)
		ctx_task_sched_out(this_cpu_ptr(&pevt_cpu_ctx), ctx);
	ctx->dead = true;
	return 0;
}

/**
 * ctx_put() - drop a task context reference; the last one frees it.
 * @ctx: the context (CPU contexts: no-op)
 *
 * Process context, may sleep.  The context has no events left.
 */
void ctx_put(struct pevt_context *ctx)
{
	struct task_struct *task = ctx->task;

	if (!task)
		return;
	/* Under the mutex, so ctx_get_task() never finds a dying context. */
	if (!refcount_dec_and_mutex_lock(&ctx->refcount, &pevt_task_mutex))
		return;

	raw_spin_lock_irq(&pevt_task_hash_lock);
	if (!hlist_unhashed(&ctx->hash_node))
		hash_del_rcu(&ctx->hash_node);
	raw_spin_unlock_irq(&pevt_task_hash_lock);
	/*
	 * Out of the hash, but maybe active on a CPU: deactivate it there,
	 * which also clears that CPU's cpuctx->task_ctx pointer.
	 */
	ctx_function_call(ctx, __ctx_kill, NULL);
	pevt_nr_task_ctx--;
	mutex_unlock(&pevt_task_mutex);

	put_task_struct(task);
	/* A probe may still hold a pointer from its RCU hash walk. */
	kfree_rcu(ctx, rcu);
	atomic_dec(&pevt_nr_live_task_ctx);
}

static enum cpuhp_state pevt_cpuhp_state;

/*
 * CPU hotplug, like perf_event_{init,exit}_cpu(): a CPU context is active
 * only while its CPU is online, so an offline CPU's events neither count
 * nor accrue time, and reads of them do not wait for a dead CPU.  Both
 * callbacks run on the CPU concerned (CPUHP_AP_ONLINE_DYN).
 */
static int pevt_cpu_online(unsigned int cpu)
{
	struct pevt_context *ctx = &pevt_cpuctx(cpu)->ctx;

	raw_spin_lock_irq(&ctx->lock);
	ctx->timestamp = local_clock();
	ctx->active_cpu = cpu;
	ctx_sched_in(ctx, PEVT_EVENT_ALL);
	raw_spin_unlock_irq(&ctx->lock);
	return 0;
}

static int pevt_cpu_offline(unsigned int cpu)
{
	struct pevt_context *ctx = &pevt_cpuctx(cpu)->ctx;

	raw_spin_lock_irq(&ctx->lock);
	pevt_update_context_time(ctx);
	ctx_sched_out(ctx, PEVT_EVENT_ALL);
	ctx->active_cpu = -1;
	raw_spin_unlock_irq(&ctx->lock);
	return 0;
}

/**
 * pevt_context_init() - set up CPU contexts.
 *
 * Return: 0 or the error of cpuhp_setup_state().
 */
int pevt_context_init(void)
{
	int cpu, ret;

	for_each_possible_cpu(cpu) {
		struct pevt_cpu_context *cpuctx = pevt_cpuctx(cpu);

		pevt_ctx_init(&cpuctx->ctx, cpu, NULL);
		cpuctx->ctx.active_cpu = -1;	/* until pevt_cpu_online() */
		cpuctx->task_ctx = NULL;
	}

	/* Runs pevt_cpu_online() on every online CPU before returning. */
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "pevt:online",
				pevt_cpu_online, pevt_cpu_offline);
	if (ret < 0)
		return ret;
	pevt_cpuhp_state = ret;
	ctx_late_in_init();	/* no task context yet: no switch half-done */
	return 0;
}

/**
 * pevt_context_exit() - undo pevt_context_init().
 *
 * Every event fd is closed (module refcount), so every task context is
 * gone; the hooks are unregistered already (sideband.c).
 */
void pevt_context_exit(void)
{
	ctx_late_in_exit();
	cpuhp_remove_state(pevt_cpuhp_state);
	WARN_ON_ONCE(pevt_nr_task_ctx);
}
