// SPDX-License-Identifier: GPL-2.0
/*
 * attr.inherit: events that follow a task's children, as perf's
 * perf_event_init_task() / perf_event_exit_task() do.
 *
 *  - Fork (sched_process_fork, in the parent, via the hook hub): if the
 *    parent's task context holds an inherit event, a task work is queued
 *    on the child.  It runs when the child first returns to user space,
 *    in process context, before the child runs a user instruction, and
 *    creates there a child event for each inherit group of the parent's
 *    context (leader and siblings, so groups stay groups).  A child event
 *    counts for the event the user opened (->parent, also for grandchildren).
 *    inherit_thread: only threads (CLONE_THREAD) inherit.
 *  - Exit (perf_event_exit_task(), see sideband.c; after the EXIT record
 *    and the context's death): a task work queued on the exiting task folds each child
 *    event's count and times into its parent (child_count, child_time_*)
 *    and frees it, from exit_task_work() (process context).
 *  - read() of an opened event adds its exited children (child_*) and
 *    reads each live child; ENABLE/DISABLE/RESET apply to the children
 *    too (perf_event_for_each_child()); closing it frees its children.
 *  - enable_on_exec: the exec enables the context's enable_on_exec events
 *    where perf_event_exec() does (task_rename in begin_new_exec()), so the
 *    exec's COMM and the new program's MMAPs reach them; a task work then
 *    clears the bits (once each, as perf) and re-plans the rotation.
 *  - remove_on_exec (perf_event_remove_on_exec()): at the exec's
 *    task_rename (begin_new_exec(), right after perf_event_exec()) the
 *    task's remove_on_exec events stop and go to PEVT_STATE_EXIT, so the
 *    exec's COMM and the new program's MMAPs do not reach them; the exec
 *    task work then takes them out of the context: an opened event stays
 *    readable with its count and never counts again, a child event folds
 *    into its parent (with inherit_stat after a PERF_RECORD_READ of its
 *    own values, perf's sync_child_event()) and is freed.
 *  - inherit_stat: perf keeps per-task counts apart when it swaps the
 *    contexts of a parent and child (perf_event_sync_stat()); pevt keeps
 *    a context in across such a switch instead of exchanging them
 *    (context.c, ctx_equiv()), so only the READ records above are to do.  At exit
 *    perf writes none (sync_child_event() sees ctx->task ==
 *    TASK_TOMBSTONE), nor does pevt.
 *
 *  - Sampling: a child's samples and side-band records go into its
 *    parent's buffer with the parent's id (output.c), so `perf record`'s
 *    per-CPU inherit events work; an inherit event with cpu -1 can
 *    neither be mapped (as perf) nor redirected with SET_OUTPUT (its
 *    children would write into one buffer from every CPU).
 *
 * Not supported: inherit with PERF_SAMPLE_READ (-EINVAL, as perf 6.1).  A fork whose child events cannot be allocated does
 * not fail (perf fails the fork with -ENOMEM): the child is not counted.
 *
 * Locking: pevt_inherit_mutex comes first, before any ctx->mutex; paths
 * that hold it may take a parent's ctx->mutex and then a child's
 * (SINGLE_DEPTH_NESTING).  Paths that do not hold it take at most one
 * ctx->mutex.  So two contexts' mutexes are only ever held together
 * under the global mutex.
 *
 * Task works call module code: each holds a module reference, dropped at
 * its end (module_put() as the callback's last call, as a work item's
 * owner does).
 */
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/workqueue.h>

#include "internal.h"
#include "output.h"
#include "sideband.h"

static DEFINE_MUTEX(pevt_inherit_mutex);

/* debugfs pevt/stats: child events made, and ones that could not be. */
atomic_t pevt_inherit_children = ATOMIC_INIT(0);
atomic_t pevt_inherit_failed = ATOMIC_INIT(0);

/**
 * pevt_inherit_check_attr() - what pevt takes of the inherit family.
 * @attr: the attr being opened
 *
 * Return: 0, or -EINVAL as perf_copy_attr() (6.1 and 6.12) for
 * inherit_thread without inherit and for remove_on_exec with
 * enable_on_exec.
 */
int pevt_inherit_check_attr(const struct perf_event_attr *attr)
{
	if (attr->inherit_thread && !attr->inherit)
		return -EINVAL;
	if (attr->remove_on_exec && attr->enable_on_exec)
		return -EINVAL;
	/* perf 6.1: children's samples cannot read the parent's group. */
	if (attr->inherit && (attr->sample_type & PERF_SAMPLE_READ))
		return -EINVAL;
	return 0;
}

/* Take pevt_inherit_mutex if @event may have children. */
void pevt_inherit_lock(struct pevt_event *event)
{
	if (event->attr.inherit)
		mutex_lock(&pevt_inherit_mutex);
}

void pevt_inherit_unlock(struct pevt_event *event)
{
	if (event->attr.inherit)
		mutex_unlock(&pevt_inherit_mutex);
}

/* ---- fork ------------------------------------------------------------ */

struct inherit_work {
	struct callback_head	cb;
	struct work_struct	put;	/* task_work_add() failed */
	struct pevt_context	*pctx;	/* the parent's context, a reference */
	bool			thread;	/* CLONE_THREAD */
	int			made;	/* child events made */
	bool			partial;/* a group not inherited: no clone */
	/* On inherit_pending until the work runs, under its lock: */
	struct hlist_node	node;
	struct task_struct	*child;
	u64			ran;	/* ns on a CPU so far */
	u64			in;	/* local_clock() at switch-in, or 0 */
};

/*
 * Where a child's time starts.  perf makes the child's events in
 * copy_process() and schedules them in at the child's first switch-in
 * (schedule_tail() -> finish_task_switch()); pevt makes them in the
 * child's first task work, on its way to user space, after ret_from_fork
 * and whatever else ran in the kernel before (about 0.1 ms a child under
 * TCG: 5-7% of a fork-churn tree's task-clock, 30% of a child that just
 * exits).  So from the fork to the work the child's time on a CPU is
 * kept here, by the switch hooks of context.c (the same points where
 * task contexts go in and out), and each of its events starts with the
 * time up to its install: enabled and running time, and the count of a
 * clock (core.c, __pevt_install_ran()).  The work's own sleeps (mutexes)
 * are off a CPU, so not counted.  A hash keyed by the child, looked up
 * by the switch hooks only while a fork is pending.
 */
#define INHERIT_PENDING_BITS	6
static DEFINE_HASHTABLE(inherit_pending, INHERIT_PENDING_BITS);
static DEFINE_RAW_SPINLOCK(inherit_pending_lock);
atomic_t pevt_inherit_nr_pending = ATOMIC_INIT(0);

static struct inherit_work *pending_find(struct task_struct *task)
{
	struct inherit_work *w;

	hash_for_each_possible(inherit_pending, w, node, (unsigned long)task)
		if (w->child == task)
			return w;
	return NULL;
}

/**
 * pevt_inherit_switch() - a task whose child events are pending goes on
 * or off a CPU.
 * @task: the task
 * @in: true when it starts to run, false when it stops
 *
 * From the switch hooks (context.c), irqs off, only while
 * pevt_inherit_nr_pending is not 0.
 */
void pevt_inherit_switch(struct task_struct *task, bool in)
{
	struct inherit_work *w;
	u64 now = local_clock();

	raw_spin_lock(&inherit_pending_lock);
	w = pending_find(task);
	if (w && in && !w->in) {
		w->in = now;
	} else if (w && !in && w->in) {
		w->ran += now - w->in;
		w->in = 0;
	}
	raw_spin_unlock(&inherit_pending_lock);
}

/**
 * pevt_inherit_ran() - a pending child's time on a CPU so far.
 * @pending: its inherit work (passed through pevt_inherit_install())
 *
 * Any context.
 *
 * Return: ns.
 */
u64 pevt_inherit_ran(void *pending)
{
	struct inherit_work *w = pending;
	unsigned long flags;
	u64 ran;

	raw_spin_lock_irqsave(&inherit_pending_lock, flags);
	ran = w->ran + (w->in ? local_clock() - w->in : 0);
	raw_spin_unlock_irqrestore(&inherit_pending_lock, flags);
	return ran;
}

/* Take @w off the pending hash. */
static void pending_del(struct inherit_work *w)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&inherit_pending_lock, flags);
	hash_del(&w->node);
	atomic_dec(&pevt_inherit_nr_pending);
	raw_spin_unlock_irqrestore(&inherit_pending_lock, flags);
}

static bool ctx_has_inherit(struct pevt_context *ctx)
{
	struct pevt_event *event;
	unsigned long flags;
	bool ret = false;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	list_for_each_entry(event, &ctx->event_list, event_entry) {
		if (event->attr.inherit) {
			ret = true;
			break;
		}
	}
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	return ret;
}

/*
 * inherit_group() for the groups of one list: each group's children are
 * made, then installed together (pevt_inherit_install()).  A member that
 * cannot be made is left out (the fork goes on, as documented above).
 */
static void inherit_groups(struct list_head *groups, struct inherit_work *w)
{
	bool thread = w->thread;
	struct pevt_event *leader, *sibling, *cl;
	LIST_HEAD(members);
	int n;

	list_for_each_entry(leader, groups, group_entry) {
		if (!leader->attr.inherit ||
		    (leader->attr.inherit_thread && !thread)) {
			w->partial = true;
			continue;
		}
		cl = pevt_inherit_alloc(leader, current);
		if (IS_ERR(cl)) {
			atomic_inc(&pevt_inherit_failed);
			w->partial = true;
			continue;
		}
		n = 1;
		list_add_tail(&cl->child_entry, &members);
		pevt_for_each_sibling(sibling, leader) {
			struct pevt_event *cs = pevt_inherit_alloc(sibling, current);

			if (IS_ERR(cs)) {
				atomic_inc(&pevt_inherit_failed);
				w->partial = true;
			} else {
				list_add_tail(&cs->child_entry, &members);
				n++;
			}
		}
		/* empties @members */
		if (pevt_inherit_install(&members, w)) {
			atomic_add(n, &pevt_inherit_failed);
			w->partial = true;
		} else {
			atomic_add(n, &pevt_inherit_children);
			w->made += n;
		}
	}
}

static void inherit_work_free(struct inherit_work *w)
{
	ctx_put(w->pctx);
	kfree(w);
}

/* In the child, process context, before its first user instruction. */
static void inherit_fork_fn(struct callback_head *cb)
{
	struct inherit_work *w = container_of(cb, struct inherit_work, cb);
	struct pevt_context *pctx = w->pctx;

	mutex_lock(&pevt_inherit_mutex);
	/* An exiting child (killed before it ran): nothing to count. */
	if (!(current->flags & PF_EXITING)) {
		mutex_lock(&pctx->mutex);
		inherit_groups(&pctx->pinned_groups, w);
		inherit_groups(&pctx->flexible_groups, w);
		/* perf_event_init_context(): inherited_all makes a clone */
		if (!w->partial && w->made)
			pevt_ctx_mark_clone(current, pctx, w->made);
		mutex_unlock(&pctx->mutex);
	}
	mutex_unlock(&pevt_inherit_mutex);
	pending_del(w);
	inherit_work_free(w);
	module_put(THIS_MODULE);
}

static void inherit_put_fn(struct work_struct *work)
{
	inherit_work_free(container_of(work, struct inherit_work, put));
	module_put(THIS_MODULE);
}

/**
 * pevt_inherit_fork() - sched_process_fork: queue the child's inheritance.
 * @child: the new task, not yet run
 *
 * Called in the parent (current), preemption disabled.
 */
void pevt_inherit_fork(struct task_struct *child)
{
	struct inherit_work *w;
	unsigned long flags;

	if (!ctx_find_task_get(current, ctx_has_inherit, false))
		return;
	w = kmalloc(sizeof(*w), GFP_ATOMIC);
	if (!w) {
		atomic_inc(&pevt_inherit_failed);
		return;
	}
	w->pctx = ctx_find_task_get(current, ctx_has_inherit, true);
	if (!w->pctx) {
		kfree(w);
		return;
	}
	__module_get(THIS_MODULE);
	w->thread = same_thread_group(current, child);
	w->made = 0;
	w->partial = false;
	w->child = child;
	w->ran = 0;
	w->in = 0;
	/* Not yet woken: in the hash before its first switch-in. */
	raw_spin_lock_irqsave(&inherit_pending_lock, flags);
	hash_add(inherit_pending, &w->node, (unsigned long)child);
	atomic_inc(&pevt_inherit_nr_pending);
	raw_spin_unlock_irqrestore(&inherit_pending_lock, flags);
	init_task_work(&w->cb, inherit_fork_fn);
	if (!task_work_add(child, &w->cb, TWA_RESUME))
		return;
	pending_del(w);
	/* The child is gone already; ctx_put() may sleep: a work item. */
	atomic_inc(&pevt_inherit_failed);
	INIT_WORK(&w->put, inherit_put_fn);
	schedule_work(&w->put);
}

/* ---- exit ------------------------------------------------------------ */

/*
 * Fold a dead or removed child event's count and times into its parent
 * and queue it on @dead for free_folded(); the caller holds
 * pevt_inherit_mutex and the child's context mutex.
 */
static void fold_child(struct pevt_event *event, struct list_head *dead)
{
	struct pevt_event *parent = event->parent;

	parent->child_count += local64_read(&event->count);
	parent->child_time_enabled += event->total_time_enabled;
	parent->child_time_running += event->total_time_running;
	list_move_tail(&event->child_entry, dead);
}

/* Free the children fold_child() queued, context mutex dropped. */
static void free_folded(struct list_head *dead)
{
	struct pevt_event *event, *tmp;

	list_for_each_entry_safe(event, tmp, dead, child_entry) {
		list_del_init(&event->child_entry);
		pevt_event_remove_free(event);
	}
}

/* From exit_task_work() of the exiting task: fold and free its children. */
static void inherit_exit_fn(struct callback_head *cb)
{
	struct pevt_context *ctx = container_of(cb, struct pevt_context,
						exit_work);
	struct pevt_event *event;
	LIST_HEAD(dead);

	mutex_lock(&pevt_inherit_mutex);
	mutex_lock(&ctx->mutex);
	/* The context is dead: counts and times are final. */
	list_for_each_entry(event, &ctx->event_list, event_entry) {
		if (!event->parent || list_empty(&event->child_entry))
			continue;
		fold_child(event, &dead);
	}
	mutex_unlock(&ctx->mutex);
	free_folded(&dead);
	mutex_unlock(&pevt_inherit_mutex);
	ctx_put(ctx);
	module_put(THIS_MODULE);
}

static bool ctx_is_inherited(struct pevt_context *ctx)
{
	return READ_ONCE(ctx->inherited);
}

/**
 * pevt_inherit_exit() - perf_event_exit_task(): fold the task's child events.
 * @task: current, exiting; its EXIT record is written, its context dead
 */
void pevt_inherit_exit(struct task_struct *task)
{
	struct pevt_context *ctx = ctx_find_task_get(task, ctx_is_inherited, true);

	if (!ctx)
		return;
	__module_get(THIS_MODULE);
	init_task_work(&ctx->exit_work, inherit_exit_fn);
	/* Before exit_task_work(): cannot fail for current here. */
	if (task_work_add(task, &ctx->exit_work, TWA_NONE)) {
		atomic_inc(&pevt_inherit_failed);
		module_put(THIS_MODULE);
		WARN_ON_ONCE(!refcount_dec_not_one(&ctx->refcount));
	}
}

/* ---- exec ------------------------------------------------------------ */

/*
 * remove_on_exec, in the exec task work: take the stopped events out of
 * current's context (perf_event_remove_on_exec()).
 */
static void inherit_remove_on_exec(struct pevt_context *ctx)
{
	struct pevt_event *event, *tmp;
	LIST_HEAD(dead);
	bool any = false;

	mutex_lock(&pevt_inherit_mutex);
	mutex_lock(&ctx->mutex);
	list_for_each_entry_safe(event, tmp, &ctx->event_list, event_entry) {
		struct pevt_event *parent = event->parent;

		if (!event->attr.remove_on_exec || event->state != PEVT_STATE_EXIT)
			continue;
		any = true;
		/* Siblings of a removed leader become groups of their own. */
		pevt_event_remove(event);
		if (!parent) {
			/* Opened by the user: readable, never counts again. */
			pevt_output_hup(event);
			continue;
		}
		if (list_empty(&event->child_entry))
			continue;	/* the parent is being closed */
		if (event->attr.inherit_stat)
			pevt_output_read_event(event, current);
		fold_child(event, &dead);
	}
	mutex_unlock(&ctx->mutex);
	free_folded(&dead);
	mutex_unlock(&pevt_inherit_mutex);
	if (any)
		pevt_ctx_changed(ctx);
}

static void inherit_exec_fn(struct callback_head *cb)
{
	struct pevt_context *ctx = container_of(cb, struct pevt_context,
						exec_work);

	WRITE_ONCE(ctx->exec_queued, false);
	pevt_ctx_enable_on_exec(ctx);
	inherit_remove_on_exec(ctx);
	ctx_put(ctx);
	module_put(THIS_MODULE);
}

static bool ctx_has_exec_work(struct pevt_context *ctx)
{
	struct pevt_event *event;
	unsigned long flags;
	bool ret = false;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	if (!ctx->exec_queued) {
		list_for_each_entry(event, &ctx->event_list, event_entry) {
			if (event->attr.enable_on_exec ||
			    event->attr.remove_on_exec) {
				ret = true;
				break;
			}
		}
		ctx->exec_queued = ret;
	}
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	return ret;
}

/**
 * pevt_inherit_exec() - sched_process_exec: the exec's task work (the
 * enable_on_exec bits cleared and the rotation re-planned, remove_on_exec
 * events taken out), before the new program's first instruction.
 * @task: current
 */
void pevt_inherit_exec(struct task_struct *task)
{
	struct pevt_context *ctx = ctx_find_task_get(task, ctx_has_exec_work,
						     true);

	if (!ctx)
		return;
	__module_get(THIS_MODULE);
	init_task_work(&ctx->exec_work, inherit_exec_fn);
	if (task_work_add(task, &ctx->exec_work, TWA_RESUME)) {
		WRITE_ONCE(ctx->exec_queued, false);
		module_put(THIS_MODULE);
		WARN_ON_ONCE(!refcount_dec_not_one(&ctx->refcount));
	}
}

/* Under RCU: the exec's edge for the context found. */
static bool ctx_exec_edge(struct pevt_context *ctx)
{
	pevt_ctx_exec_edge(ctx);
	return false;
}

/**
 * pevt_inherit_exec_edge() - the exec's task_rename (begin_new_exec(),
 * where perf_event_exec() has just run): enable_on_exec events start,
 * remove_on_exec events stop.
 * @task: current, exec'ing, past the point of no return
 *
 * Preemption disabled, task_lock() held: only raw spinlocks.
 */
void pevt_inherit_exec_edge(struct task_struct *task)
{
	ctx_find_task_get(task, ctx_exec_edge, false);
}

/* ---- the opened event's side ------------------------------------------ */

/**
 * pevt_inherit_release() - the user closed @event: free its children.
 * @event: an opened event, out of its context
 */
void pevt_inherit_release(struct pevt_event *event)
{
	struct pevt_event *child, *tmp;
	LIST_HEAD(dead);

	if (!event->attr.inherit)
		return;
	mutex_lock(&pevt_inherit_mutex);
	list_splice_init(&event->child_list, &dead);
	list_for_each_entry_safe(child, tmp, &dead, child_entry) {
		list_del_init(&child->child_entry);
		pevt_event_remove_free(child);
	}
	mutex_unlock(&pevt_inherit_mutex);
}

struct child_read {
	struct pevt_event	*event;
	u64			count, enabled, running;
};

static int __child_read(struct pevt_context *ctx, void *data, bool active)
{
	struct child_read *cr = data;
	struct pevt_event *event = cr->event;

	if (active && event->state == PEVT_STATE_ACTIVE &&
	    event->oncpu == smp_processor_id())
		event->src->read(event);
	pevt_event_update_time(event);
	cr->count = local64_read(&event->count);
	cr->enabled = event->total_time_enabled;
	cr->running = event->total_time_running;
	return 0;
}

/* @event's exited and live children: count and times. */
static void children_sum(struct pevt_event *event, u64 *count, u64 *enabled,
			 u64 *running)
{
	struct pevt_event *child;

	*count = event->child_count;
	*enabled = event->child_time_enabled;
	*running = event->child_time_running;
	list_for_each_entry(child, &event->child_list, child_entry) {
		struct child_read cr = { .event = child };

		mutex_lock_nested(&child->ctx->mutex, SINGLE_DEPTH_NESTING);
		ctx_function_call(child->ctx, __child_read, &cr);
		mutex_unlock(&child->ctx->mutex);
		*count += cr.count;
		*enabled += cr.enabled;
		*running += cr.running;
	}
}

/**
 * pevt_inherit_read() - add the children to what read() of @event returns.
 * @event: the event read
 * @values: the read() layout for @event's read_format, filled
 *
 * pevt_inherit_mutex (pevt_inherit_lock()) and @event's ctx->mutex held.
 * As perf_read_one() / perf_read_group(): each member's value gets its
 * children's counts; the times are the event's (leader's) plus its
 * children's.
 */
void pevt_inherit_read(struct pevt_event *event, u64 *values)
{
	u64 rf = event->attr.read_format, count, enabled, running;
	struct pevt_event *leader = event->group_leader, *sibling;
	unsigned int t = 0, stride = 1, base;

	if (!event->attr.inherit)
		return;
	if (rf & PERF_FORMAT_ID)
		stride++;
	if (rf & PERF_FORMAT_LOST)
		stride++;
	if (!(rf & PERF_FORMAT_GROUP)) {
		children_sum(event, &count, &enabled, &running);
		values[0] += count;
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			values[++t] += enabled;
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			values[++t] += running;
		return;
	}
	/* { nr, [enabled], [running], { value, [id], [lost] } * nr } */
	children_sum(leader, &count, &enabled, &running);
	t = 1;
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		values[t++] += enabled;
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		values[t++] += running;
	base = t;
	values[base] += count;
	pevt_for_each_sibling(sibling, leader) {
		base += stride;
		children_sum(sibling, &count, &enabled, &running);
		values[base] += count;
	}
}

static void apply_children(struct pevt_event *member, pevt_ctx_fn fn)
{
	struct pevt_event *child;

	list_for_each_entry(child, &member->child_list, child_entry) {
		mutex_lock_nested(&child->ctx->mutex, SINGLE_DEPTH_NESTING);
		ctx_function_call(child->ctx, fn, child);
		pevt_ctx_changed(child->ctx);
		mutex_unlock(&child->ctx->mutex);
	}
}

/**
 * pevt_inherit_apply() - an ioctl on @event reaches its children too.
 * @event: the event (with @group: its whole group)
 * @fn: the ctx function of the ioctl
 * @group: PERF_IOC_FLAG_GROUP
 *
 * pevt_inherit_mutex and @event's ctx->mutex held.
 */
void pevt_inherit_apply(struct pevt_event *event, pevt_ctx_fn fn, bool group)
{
	struct pevt_event *leader = event->group_leader, *sibling;

	if (!event->attr.inherit)
		return;
	if (!group) {
		apply_children(event, fn);
		return;
	}
	apply_children(leader, fn);
	pevt_for_each_sibling(sibling, leader)
		apply_children(sibling, fn);
}
