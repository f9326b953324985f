// SPDX-License-Identifier: GPL-2.0
/*
 * pevt sampling sources.
 *
 * raw_syscalls:sys_enter: attr.type = PERF_TYPE_TRACEPOINT, attr.config =
 * the tracepoint's id (tracefs events/raw_syscalls/sys_enter/id), as with
 * stock perf_event_open(), so the same attr opens both.  It counts every
 * system call entered while the event is ACTIVE (a task event: its task's
 * calls; a CPU event: every call on that CPU) and, with sample_period = n,
 * writes a sample every n-th call: a deterministic record source for tests.
 * Other tracepoints are refused (-EOPNOTSUPP).
 *
 * Like a stock tracepoint event, it fires in kernel mode: with
 * exclude_kernel it neither counts nor samples (perf_tp_event_match());
 * exclude_user/hv/idle change nothing.  Its samples carry the registers
 * of the system call (user mode), where stock perf records the kernel
 * caller of the tracepoint.  Like perf, which never throttles the single
 * overflow of a software event (perf_swevent_overflow()), its samples are
 * not rate limited: each one is paid for by a system call of the
 * monitored task.
 *
 * The sampling clocks are sw.c's.
 *
 * Side-band: task_rename, sched_process_fork and sched_process_exit feed
 * PERF_RECORD_COMM/FORK/EXIT (output.c) to events with attr.comm/task.
 *
 * Active tracepoint events sit on a per-CPU RCU list, added and removed by
 * the source's add()/del() on their CPU (ctx->lock held, irqs off), like
 * perf's swevent hash.  The probe walks this CPU's list with preemption
 * disabled.
 *
 * Probes are registered on first use and stay until module exit: every
 * (un)registration patches kernel text.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/tracepoint.h>
#include <linux/trace_events.h>
#include <linux/sched.h>

#include "internal.h"
#include "output.h"

struct tp_priv {
	struct hlist_node	node;		/* this CPU's tp_active list */
	struct pevt_event	*event;
	u64			left;		/* calls until the next sample */
	bool			on_list;	/* between add() and del() */
	bool			stopped;	/* stop() without del() */
	struct rcu_head		rcu;		/* probes walk it under RCU */
};

static DEFINE_PER_CPU(struct hlist_head, tp_active);
static DEFINE_MUTEX(tp_mutex);			/* probe registration */
static bool tp_registered;			/* sys_enter probe */
static bool sb_registered;			/* side-band probes */
static struct tracepoint *tp_sys_enter;
static u64 tp_sys_enter_id;

static struct tracepoint *tp_rename, *tp_fork, *tp_exit;

static void tp_sys_enter_probe(void *data, struct pt_regs *regs, long id)
{
	struct hlist_head *head;
	struct tp_priv *p;
	unsigned long flags;

	/* Tracepoint probes run with preemption disabled: an RCU reader. */
	head = this_cpu_ptr(&tp_active);
	hlist_for_each_entry_rcu(p, head, node) {
		struct pevt_event *event = p->event;
		u64 period = event->attr.sample_period;

		/* A kernel tracepoint: never in user mode (see above). */
		if (READ_ONCE(p->stopped) || event->attr.exclude_kernel)
			continue;
		/*
		 * ctx->lock: the sample reads the group, whose lists change
		 * under it (IPIs from ctx_function_call() can arrive here).
		 */
		raw_spin_lock_irqsave(&event->ctx->lock, flags);
		if (event->state == PEVT_STATE_ACTIVE) {
			local64_inc(&event->count);
			if (period && ++p->left >= period) {
				p->left = 0;
				pevt_output_sample(event, regs, period);
			}
		}
		raw_spin_unlock_irqrestore(&event->ctx->lock, flags);
	}
}

static int tp_init(struct pevt_event *event)
{
	struct tp_priv *p;
	int ret;

	if (event->attr.type != PERF_TYPE_TRACEPOINT)
		return -ENOENT;
	if (!tp_sys_enter || event->attr.config != tp_sys_enter_id)
		return -EOPNOTSUPP;
	if (event->attr.freq)
		return -EINVAL;
	ret = pevt_output_check_attr(&event->attr);
	if (ret)
		return ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->event = event;

	/*
	 * Registered on first use and kept until module exit: every
	 * (un)registration patches kernel text (static keys), and patching
	 * while another CPU runs the site was seen to oops under TCG (stale
	 * int3), like the sched probes of context.c.
	 */
	mutex_lock(&tp_mutex);
	if (!tp_registered) {
		ret = tracepoint_probe_register(tp_sys_enter,
						tp_sys_enter_probe, NULL);
		if (ret) {
			mutex_unlock(&tp_mutex);
			kfree(p);
			return ret;
		}
		tp_registered = true;
	}
	mutex_unlock(&tp_mutex);
	event->src_priv = p;
	return 0;
}

static void tp_destroy(struct pevt_event *event)
{
	struct tp_priv *p = event->src_priv;

	/*
	 * del() unlinked p; a probe on that CPU may still walk it, and the
	 * event it points to (also freed after a grace period).
	 */
	event->src_priv = NULL;
	kfree_rcu(p, rcu);
}

static int tp_add(struct pevt_event *event, int flags)
{
	struct tp_priv *p = event->src_priv;

	p->stopped = !(flags & PERF_EF_START);
	p->on_list = true;
	hlist_add_head_rcu(&p->node, this_cpu_ptr(&tp_active));
	return 0;
}

static void tp_del(struct pevt_event *event, int flags)
{
	struct tp_priv *p = event->src_priv;

	if (p->on_list) {
		hlist_del_rcu(&p->node);
		p->on_list = false;
	}
}

static void tp_start(struct pevt_event *event, int flags)
{
	struct tp_priv *p = event->src_priv;

	WRITE_ONCE(p->stopped, false);
}

static void tp_stop(struct pevt_event *event, int flags)
{
	struct tp_priv *p = event->src_priv;

	WRITE_ONCE(p->stopped, true);
}

static void tp_read(struct pevt_event *event)
{
	/* event->count is incremented in place by the probe. */
}

static struct pevt_source_ops tp_source = {
	.name		= "tracepoint",
	.kind		= PEVT_SRC_TRACEPOINT,
	.caps		= PEVT_SRC_SOFTWARE,
	.init		= tp_init,
	.destroy	= tp_destroy,
	.add		= tp_add,
	.del		= tp_del,
	.start		= tp_start,
	.stop		= tp_stop,
	.read		= tp_read,
};

/* ---- side-band tracepoints ---------------------------------------- */

static void sb_rename_probe(void *data, struct task_struct *task,
			    const char *comm)
{
	if (task == current)
		pevt_output_comm(task, comm);
}

static void sb_fork_probe(void *data, struct task_struct *parent,
			  struct task_struct *child)
{
	pevt_output_task(child, true);
}

static void sb_exit_probe(void *data, struct task_struct *task)
{
	pevt_output_task(task, false);
}

static void sb_lookup(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "task_rename"))
		tp_rename = tp;
	else if (!strcmp(tp->name, "sched_process_fork"))
		tp_fork = tp;
	else if (!strcmp(tp->name, "sched_process_exit"))
		tp_exit = tp;
}

/* Find raw_syscalls:sys_enter and its id through the exported trace API. */
static void tp_lookup_sys_enter(void)
{
	struct trace_event_file *file;
	struct trace_event_call *call;

	file = trace_get_event_file(NULL, "raw_syscalls", "sys_enter");
	if (IS_ERR(file)) {
		pr_info("pevt: raw_syscalls:sys_enter not found (%ld): no syscall sampling\n",
			PTR_ERR(file));
		return;
	}
	call = file->event_call;
	if (call->flags & TRACE_EVENT_FL_TRACEPOINT) {
		tp_sys_enter = call->tp;
		tp_sys_enter_id = call->event.type;
	}
	trace_put_event_file(file);
}

/**
 * pevt_sample_init() - register the tracepoint source, set up throttling.
 *
 * Return: 0 or -errno.
 */
int pevt_sample_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		INIT_HLIST_HEAD(per_cpu_ptr(&tp_active, cpu));
	tp_lookup_sys_enter();
	for_each_kernel_tracepoint(sb_lookup, NULL);
	if (!tp_rename || !tp_fork || !tp_exit)
		return -ENOENT;

	pevt_throttle_init();
	return pevt_source_register(&tp_source);
}

/**
 * pevt_sample_sideband_get() - make sure COMM/FORK/EXIT are fed.
 *
 * Called when an event with attr.comm or attr.task is opened; the probes
 * stay registered until module exit (see tp_init() for why).
 *
 * Return: 0 or -errno.
 */
int pevt_sample_sideband_get(void)
{
	int ret = 0;

	mutex_lock(&tp_mutex);
	if (sb_registered)
		goto out;
	ret = tracepoint_probe_register(tp_rename, sb_rename_probe, NULL);
	if (ret)
		goto out;
	ret = tracepoint_probe_register(tp_fork, sb_fork_probe, NULL);
	if (ret)
		goto err_fork;
	ret = tracepoint_probe_register(tp_exit, sb_exit_probe, NULL);
	if (ret)
		goto err_exit;
	sb_registered = true;
	goto out;

err_exit:
	tracepoint_probe_unregister(tp_fork, sb_fork_probe, NULL);
err_fork:
	tracepoint_probe_unregister(tp_rename, sb_rename_probe, NULL);
	tracepoint_synchronize_unregister();
out:
	mutex_unlock(&tp_mutex);
	return ret;
}

/**
 * pevt_sample_sideband_registered() - are the side-band probes in?
 *
 * For debugfs pevt/stats: a test checks that a refused open registered
 * nothing (it would have patched kernel text).
 *
 * Return: true once pevt_sample_sideband_get() succeeded.
 */
bool pevt_sample_sideband_registered(void)
{
	return READ_ONCE(sb_registered);
}

/**
 * pevt_sample_exit() - undo pevt_sample_init() (no event left).
 */
void pevt_sample_exit(void)
{
	pevt_source_unregister(&tp_source);
	pevt_throttle_exit();
	if (sb_registered) {
		tracepoint_probe_unregister(tp_exit, sb_exit_probe, NULL);
		tracepoint_probe_unregister(tp_fork, sb_fork_probe, NULL);
		tracepoint_probe_unregister(tp_rename, sb_rename_probe, NULL);
	}
	if (tp_registered)
		tracepoint_probe_unregister(tp_sys_enter, tp_sys_enter_probe,
					    NULL);
	tracepoint_synchronize_unregister();
	sb_registered = false;
	tp_registered = false;
}
