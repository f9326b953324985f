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
 * PERF_SAMPLE_RAW carries the tracepoint's record as perf_trace_##call()
 * builds it: struct trace_entry (type = the tracepoint id, flags and
 * preempt count as tracing_gen_ctx() makes them, pid), the system call
 * number and its six arguments.  As for perf (perf_trace_event_perm()),
 * a CPU-wide sampling event asking for it needs paranoid -1 or
 * CAP_PERFMON (-EPERM); sys_enter is TRACE_EVENT_FL_CAP_ANY, so task
 * events need nothing more.
 *
 * The sampling clocks are sw.c's.
 *
 * Active tracepoint events sit on a per-CPU RCU list, added and removed by
 * the source's add()/del() on their CPU (ctx->lock held, irqs off), like
 * perf's swevent hash.  The probe walks this CPU's list with preemption
 * disabled.  The probe itself is the hook hub's (sideband.c), which
 * calls pevt_sample_sys_enter().
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/tracepoint.h>
#include <linux/trace_events.h>
#include <linux/sched.h>
#include <linux/hardirq.h>
#include <asm/syscall.h>

#include "internal.h"
#include "output.h"
#include "sideband.h"

struct tp_priv {
	struct hlist_node	node;		/* this CPU's tp_active list */
	struct pevt_event	*event;
	u64			left;		/* calls until the next sample */
	bool			on_list;	/* between add() and del() */
	bool			stopped;	/* stop() without del() */
	struct rcu_head		rcu;		/* probes walk it under RCU */
};

static DEFINE_PER_CPU(struct hlist_head, tp_active);
static bool tp_sys_enter_found;
static u64 tp_sys_enter_id;

/* raw_syscalls:sys_enter's record (its format file in tracefs). */
struct tp_sys_enter_raw {
	struct trace_entry	ent;
	long			id;
	unsigned long		args[6];
};

/*
 * tracing_gen_ctx() (not exported): irq state, NMI/hardirq/softirq,
 * BH off, need-resched bits in the flags; preempt and migrate-disable
 * counts in the low byte, each capped at 15.
 */
static void tp_entry_ctx(struct trace_entry *ent)
{
	unsigned int pc = preempt_count(), flags = 0;

	if (irqs_disabled())
		flags |= TRACE_FLAG_IRQS_OFF;
	if (pc & NMI_MASK)
		flags |= TRACE_FLAG_NMI;
	if (pc & HARDIRQ_MASK)
		flags |= TRACE_FLAG_HARDIRQ;
	if (in_serving_softirq())
		flags |= TRACE_FLAG_SOFTIRQ;
	if (softirq_count() >> (SOFTIRQ_SHIFT + 1))
		flags |= TRACE_FLAG_BH_OFF;
	if (tif_need_resched())
		flags |= TRACE_FLAG_NEED_RESCHED;
	if (test_preempt_need_resched())
		flags |= TRACE_FLAG_PREEMPT_RESCHED;
	ent->flags = flags;
	ent->preempt_count = min_t(unsigned int, pc & 0xff, 0xf);
#ifdef CONFIG_SMP
	ent->preempt_count |= min_t(unsigned int, current->migration_disabled,
				    0xf) << 4;
#endif
}

/**
 * pevt_sample_sys_enter() - raw_syscalls:sys_enter, from the hook hub.
 * @regs: the user registers at the system call
 * @id: the system call number
 */
void pevt_sample_sys_enter(struct pt_regs *regs, long id)
{
	struct tp_sys_enter_raw raw;
	struct hlist_head *head;
	struct tp_priv *p;
	unsigned long flags;
	bool have_raw = false;

	/* Tracepoint probes run with preemption disabled: an RCU reader. */
	rb_wake_defer_begin();
	head = this_cpu_ptr(&tp_active);
	hlist_for_each_entry_rcu(p, head, node) {
		struct pevt_event *event = p->event;
		u64 period = event->attr.sample_period;

		/* A kernel tracepoint: never in user mode (see above). */
		if (READ_ONCE(p->stopped) || event->attr.exclude_kernel)
			continue;
		if (!have_raw && (event->attr.sample_type & PERF_SAMPLE_RAW)) {
			/* Once per call, before irqs go off, as perf's probe. */
			tp_entry_ctx(&raw.ent);
			raw.ent.type = tp_sys_enter_id;
			raw.ent.pid = current->pid;
			raw.id = id;
			syscall_get_arguments(current, regs, raw.args);
			have_raw = true;
		}
		/*
		 * ctx->lock: the sample reads the group, whose lists change
		 * under it (IPIs from ctx_function_call() can arrive here).
		 */
		raw_spin_lock_irqsave(&event->ctx->lock, flags);
		if (event->state == PEVT_STATE_ACTIVE) {
			local64_inc(&event->count);
			if (period && ++p->left >= period) {
				p->left = 0;
				pevt_output_sample_raw(event, regs, period,
						       have_raw ? &raw : NULL,
						       have_raw ? sizeof(raw) : 0);
			}
		}
		raw_spin_unlock_irqrestore(&event->ctx->lock, flags);
	}
	/*
	 * ctx->lock released: a system call's entry with interrupts on
	 * holds no lock, so the readers are woken here (ring_buffer.c).
	 */
	rb_wake_defer_end(!irqs_disabled());
}

static int tp_init(struct pevt_event *event)
{
	struct tp_priv *p;
	int ret;

	if (event->attr.type != PERF_TYPE_TRACEPOINT)
		return -ENOENT;
	if (!tp_sys_enter_found || event->attr.config != tp_sys_enter_id)
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
		tp_sys_enter_found = true;
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

	pevt_throttle_init();
	return pevt_source_register(&tp_source);
}

/**
 * pevt_sample_exit() - undo pevt_sample_init() (no event left).
 */
void pevt_sample_exit(void)
{
	pevt_source_unregister(&tp_source);
	pevt_throttle_exit();
}
