/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pevt context scheduler: policies rotid (rotation-id plans, rotation.c)
 * and classic (perf 6.1's rotation), the per-CPU multiplexing hrtimer and
 * the plan introspection file (debugfs pevt_sched/plan).  See
 * Documentation/scheduler.md.
 */
#ifndef _PEVT_SCHED_H
#define _PEVT_SCHED_H

#include <linux/types.h>

struct pevt_context;
struct pevt_event;

/* Hooks called by core.c (see the kernel-doc in sched.c). */
bool sched_ctx_flexible_in(struct pevt_context *ctx);
void sched_rotation_needed(void);
void sched_ctx_changed(struct pevt_context *ctx);
void sched_task_switch_in(struct pevt_context *cctx, struct pevt_context *tctx);
void sched_task_switch_done(void);
void sched_task_switch_out(void);
void sched_key_changed(struct pevt_context *ctx);
/* Called by vpmu.c when the stock side or the debugfs holder takes or frees a slot. */
void sched_slots_changed(int cpu);
void sched_slots_taken(int cpu);

int pevt_sched_init(void);
void *pevt_sched_tick_fn(void);	/* for the bench instrument (probe.c) */
void *pevt_sched_replan_fn(void);
void pevt_sched_exit(void);

/* vpmu_src.c */
u64 pevt_vpmu_event_mask(struct pevt_event *event);
void pevt_vpmu_set_slot_hint(struct pevt_event *event, int slot);
int pevt_vpmu_src_init(void);
void pevt_vpmu_src_exit(void);

#endif /* _PEVT_SCHED_H */
