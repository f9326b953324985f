/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences, and only here (lttng-modules' wrapper/).
 * Supported: 6.1 (perf core before the 6.2 context rewrite) and 6.12.
 *
 * Core notes (no wrapper needed, checked on both):
 *  - sched_switch probe: (void *, bool preempt, prev, next,
 *    unsigned int prev_state) on both 6.1 and 6.12.
 *  - sched_process_exit probe: (void *, struct task_struct *) on both.
 *  - struct fd changed in 6.12 (fd_file()): core.c uses fget()/fput().
 *  - no_llseek was removed in 6.12: event fops leave .llseek NULL.
 */
#ifndef _PEVT_COMPAT_H
#define _PEVT_COMPAT_H

#include <linux/version.h>

#endif /* _PEVT_COMPAT_H */
