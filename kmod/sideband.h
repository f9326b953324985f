/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hook hub (sideband.c) and what it calls.  Every user of a kernel
 * hook is listed here, so the order in which they run is visible in one
 * place: sideband.c.
 */
#ifndef _PEVT_SIDEBAND_H
#define _PEVT_SIDEBAND_H

struct perf_event_attr;
struct pt_regs;
struct task_struct;

/* sideband.c */
int pevt_sideband_init(void);
void pevt_sideband_exit(void);
int pevt_sideband_check_attr(const struct perf_event_attr *attr);

/* context.c */
void pevt_ctx_sched_switch(struct task_struct *next);
void pevt_ctx_task_exit(struct task_struct *task);
void pevt_ctx_task_exec(struct task_struct *task);

/* sample.c */
void pevt_sample_sys_enter(struct pt_regs *regs, long id);

#endif /* _PEVT_SIDEBAND_H */
