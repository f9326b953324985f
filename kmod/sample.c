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
 * cpu-clock / task-clock with sample_period (ns) or freq/sample_freq: a
 * source that counts like sw.c's clocks (local_clock() while ACTIVE) and
 * samples from a per-event hrtimer, pinned to the event's CPU, like perf's
 * perf_swevent_hrtimer().  It is registered before sw.c so that it claims
 * the sampling clocks; counting clocks stay with sw.c.
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
#include <linux/sched/clock.h>
#include <linux/hrtimer.h>
#include <asm/irq_regs.h>

#include "internal.h"
#include "output.h"
#include "sideband.h"

struct tp_priv {
	struct hlist_node	node;		/* this CPU's tp_active list */
	struct pevt_event	*event;
	u64			left;		/* calls until the next sample */
	bool			on_list;	/* between add() and del() */
	bool			stopped;	/* stop() without del() */
	bool			ever_added;	/* destroy() must wait for RCU */
};

static DEFINE_PER_CPU(struct hlist_head, tp_active);
static bool tp_sys_enter_found;
static u64 tp_sys_enter_id;

/**
 * pevt_sample_sys_enter() - raw_syscalls:sys_enter, from the hook hub.
 * @regs: the user registers at the system call
 */
void pevt_sample_sys_enter(struct pt_regs *regs)
{
	struct hlist_head *head;
	struct tp_priv *p;
	unsigned long flags;

	/* Tracepoint probes run with preemption disabled: an RCU reader. */
	head = this_cpu_ptr(&tp_active);
	hlist_for_each_entry_rcu(p, head, node) {
		struct pevt_event *event = p->event;
		u64 period = event->attr.sample_period;

		if (READ_ONCE(p->stopped))
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

	/* del() unlinked p; a probe on that CPU may still walk it. */
	if (p->ever_added)
		synchronize_rcu();
	event->src_priv = NULL;
	kfree(p);
}

static int tp_add(struct pevt_event *event, int flags)
{
	struct tp_priv *p = event->src_priv;

	p->stopped = !(flags & PERF_EF_START);
	p->on_list = true;
	p->ever_added = true;
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
	.caps		= PEVT_SRC_SOFTWARE,
	.init		= tp_init,
	.destroy	= tp_destroy,
	.add		= tp_add,
	.del		= tp_del,
	.start		= tp_start,
	.stop		= tp_stop,
	.read		= tp_read,
};

/* ---- sampling clocks (hrtimer) ------------------------------------- */

#define CLK_MIN_PERIOD	10000ULL	/* ns, perf's floor for clock sampling */

struct clk_priv {
	struct hrtimer		timer;
	struct pevt_event	*event;
	u64			period;		/* ns between samples */
	u64			left;		/* ns of the period left at stop */
};

static void clk_read(struct pevt_event *event)
{
	u64 now = local_clock();
	u64 prev = local64_xchg(&event->prev_count, now);

	local64_add(now - prev, &event->count);
}

static enum hrtimer_restart clk_timer_fn(struct hrtimer *timer)
{
	struct clk_priv *p = container_of(timer, struct clk_priv, timer);
	struct pevt_event *event = p->event;

	/*
	 * Hard irq on the event's CPU.  No ctx->lock: del() cancels this
	 * timer under it; the context is active here, so its lists only
	 * change through IPIs to this CPU, which wait for us.
	 */
	if (READ_ONCE(event->state) != PEVT_STATE_ACTIVE)
		return HRTIMER_NORESTART;
	clk_read(event);
	pevt_output_sample(event, get_irq_regs(), p->period);
	hrtimer_forward_now(timer, ns_to_ktime(p->period));
	return HRTIMER_RESTART;
}

static int clk_init(struct pevt_event *event)
{
	struct perf_event_attr *attr = &event->attr;
	struct clk_priv *p;
	u64 period;
	int ret;

	if (attr->type != PERF_TYPE_SOFTWARE ||
	    (attr->config != PERF_COUNT_SW_CPU_CLOCK &&
	     attr->config != PERF_COUNT_SW_TASK_CLOCK) ||
	    !(attr->freq ? attr->sample_freq : attr->sample_period))
		return -ENOENT;	/* counting clocks: sw.c */
	ret = pevt_output_check_attr(attr);
	if (ret)
		return ret;
	/* perf_swevent_init_hrtimer(): a frequency becomes a fixed period. */
	period = attr->freq ? div64_u64(NSEC_PER_SEC, attr->sample_freq) :
			      attr->sample_period;
	period = max(period, CLK_MIN_PERIOD);

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->event = event;
	p->period = period;
	hrtimer_init(&p->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	p->timer.function = clk_timer_fn;
	event->src_priv = p;
	return 0;
}

static void clk_destroy(struct pevt_event *event)
{
	struct clk_priv *p = event->src_priv;

	hrtimer_cancel(&p->timer);
	event->src_priv = NULL;
	kfree(p);
}

static void clk_start(struct pevt_event *event, int flags)
{
	struct clk_priv *p = event->src_priv;

	local64_set(&event->prev_count, local_clock());
	/* Resume the period where it stopped (perf_swevent_start_hrtimer()). */
	hrtimer_start(&p->timer, ns_to_ktime(p->left ?: p->period),
		      HRTIMER_MODE_REL_PINNED_HARD);
	p->left = 0;
}

static void clk_stop(struct pevt_event *event, int flags)
{
	struct clk_priv *p = event->src_priv;

	/* On the timer's CPU with irqs off: the callback is not running. */
	if (hrtimer_active(&p->timer)) {
		s64 left = ktime_to_ns(hrtimer_get_remaining(&p->timer));

		p->left = left > 0 ? left : 0;
	}
	hrtimer_cancel(&p->timer);
	clk_read(event);
}

static int clk_add(struct pevt_event *event, int flags)
{
	if (flags & PERF_EF_START)
		clk_start(event, flags);
	return 0;
}

static void clk_del(struct pevt_event *event, int flags)
{
	clk_stop(event, PERF_EF_UPDATE);
}

static struct pevt_source_ops clk_source = {
	.name		= "sampling-clock",
	.caps		= PEVT_SRC_SOFTWARE,
	.init		= clk_init,
	.destroy	= clk_destroy,
	.add		= clk_add,
	.del		= clk_del,
	.start		= clk_start,
	.stop		= clk_stop,
	.read		= clk_read,
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
 * pevt_sample_init() - register the sampling sources.
 *
 * Return: 0 or -errno.
 */
int pevt_sample_init(void)
{
	int cpu, ret;

	for_each_possible_cpu(cpu)
		INIT_HLIST_HEAD(per_cpu_ptr(&tp_active, cpu));
	tp_lookup_sys_enter();

	ret = pevt_source_register(&tp_source);
	if (ret)
		return ret;
	ret = pevt_source_register(&clk_source);
	if (ret)
		goto err_clk;
	return 0;

err_clk:
	pevt_source_unregister(&tp_source);
	return ret;
}

/**
 * pevt_sample_exit() - undo pevt_sample_init() (no event left).
 */
void pevt_sample_exit(void)
{
	pevt_source_unregister(&clk_source);
	pevt_source_unregister(&tp_source);
}
