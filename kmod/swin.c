// SPDX-License-Identifier: GPL-2.0
/*
 * Switch-in at perf's point: where a task context's time starts.
 *
 * pevt schedules a task's context in from the sched_switch tracepoint,
 * before switch_mm()/switch_to(); perf from finish_task_switch(), after
 * them.  Counting from sched_switch put the switch-in path into every
 * task-clock, enabled and running time (Documentation/inherit.md: +6 ..
 * +30% under TCG for forking workloads).  No tracepoint follows
 * switch_to(), and a preempt notifier (called later in
 * finish_task_switch(), after the runqueue unlock has taken the pending
 * interrupts) missed what perf counts there: -15 .. -20% for pipe
 * ping-pong.
 *
 * So pevt asks perf itself: each task context gets a kernel counter
 * (perf_event_create_kernel_counter()) of a tiny software PMU,
 * "pevt_swin", on its task.  perf schedules it in with the task's other
 * software events in perf_event_task_sched_in(), and its add() restarts
 * the pevt context's time there if pevt_ctx_sched_switch() scheduled the
 * context in for this switch (ctx->swin_armed).  A context without its
 * counter (kernel threads are fine; only an allocation failure) keeps the
 * old behaviour.  The counter counts nothing, never samples, and only pevt
 * can open it (its overflow handler is the key): user space gets ENOENT.
 */
#include <linux/perf_event.h>
#include <linux/sched/clock.h>

#include "internal.h"

static void swin_overflow(struct perf_event *event,
			  struct perf_sample_data *data, struct pt_regs *regs)
{
}

static int swin_event_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	/* Only pevt's own kernel counters (perf_event_alloc() set this). */
	if (event->overflow_handler != swin_overflow)
		return -ENOENT;
	return 0;
}

/*
 * perf_event_task_sched_in() (or an install/resched of perf's context):
 * irqs off, on this CPU.
 */
static int swin_add(struct perf_event *event, int flags)
{
	struct pevt_context *ctx = this_cpu_ptr(&pevt_cpu_ctx)->task_ctx;

	if (!ctx || ctx->task != current || !ctx->swin_armed)
		return 0;
	raw_spin_lock(&ctx->lock);
	if (ctx->swin_armed && ctx->active_cpu == smp_processor_id())
		ctx->timestamp = local_clock();
	ctx->swin_armed = false;
	raw_spin_unlock(&ctx->lock);
	return 0;
}

static void swin_del(struct perf_event *event, int flags)
{
}

static void swin_start(struct perf_event *event, int flags)
{
}

static void swin_stop(struct perf_event *event, int flags)
{
}

static void swin_read(struct perf_event *event)
{
}

static struct pmu swin_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_sw_context,
	.capabilities	= PERF_PMU_CAP_NO_INTERRUPT | PERF_PMU_CAP_NO_EXCLUDE,
	.event_init	= swin_event_init,
	.add		= swin_add,
	.del		= swin_del,
	.start		= swin_start,
	.stop		= swin_stop,
	.read		= swin_read,
};

static bool swin_registered;

/**
 * pevt_swin_attach() - give a new task context its switch-in counter.
 * @ctx: the context, hashed, a reference held
 *
 * Process context, may sleep; no pevt lock held.  Failure only leaves
 * the switch-in path counted.
 */
void pevt_swin_attach(struct pevt_context *ctx)
{
	struct perf_event_attr attr = {
		.type		= swin_pmu.type,
		.size		= sizeof(attr),
		.pinned		= 1,
	};
	struct perf_event *ev;

	if (!swin_registered)
		return;
	ev = perf_event_create_kernel_counter(&attr, -1, ctx->task,
					      swin_overflow, NULL);
	if (IS_ERR(ev)) {
		pr_info_ratelimited("pevt: no switch-in counter (%ld)\n",
				    PTR_ERR(ev));
		return;
	}
	WRITE_ONCE(ctx->swin, ev);
}

/**
 * pevt_swin_detach() - release the counter of a dying task context.
 * @ctx: the context, out of the hash
 *
 * Process context, may sleep.
 */
void pevt_swin_detach(struct pevt_context *ctx)
{
	if (!ctx->swin)
		return;
	perf_event_release_kernel(ctx->swin);
	WRITE_ONCE(ctx->swin, NULL);
}

/**
 * pevt_swin_init() - register the pevt_swin PMU.
 *
 * Return: 0; without the PMU contexts count their switch-in path.
 */
int pevt_swin_init(void)
{
	int ret = perf_pmu_register(&swin_pmu, "pevt_swin", -1);

	if (ret)
		pr_info("pevt: pevt_swin PMU not registered (%d)\n", ret);
	swin_registered = !ret;
	return 0;
}

/**
 * pevt_swin_exit() - unregister it; every task context is gone.
 */
void pevt_swin_exit(void)
{
	if (swin_registered)
		perf_pmu_unregister(&swin_pmu);
	swin_registered = false;
}
