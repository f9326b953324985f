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

/* ==== vPMU (kmod/vpmu.c) ================================================ */
#include <linux/perf_event.h>
/*
 * Before 6.2, perf_pmu_register() lets only one PMU per boot take
 * perf_hw_context (a static flag that is never cleared): a second one, even
 * the same module loaded again, gets a WARN and is downgraded to
 * perf_invalid_context, after which per-task events fail with EINVAL.
 * PMUs flagged PERF_PMU_CAP_HETEROGENEOUS_CPUS may share the hw context
 * (big.LITTLE does), which is what a reloaded pevt_vpmu needs.  6.2+ has
 * no such flag and no such trap.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define VPMU_COMPAT_PMU_CAPS	PERF_PMU_CAP_HETEROGENEOUS_CPUS
#else
#define VPMU_COMPAT_PMU_CAPS	0
#endif
/* ==== end vPMU ========================================================== */

/* ==== ring buffer (kmod/ring_buffer.c) ================================== */
#include <linux/mm.h>
/* vm_flags became read-only in 6.3: vm_flags_set() writes them since. */
static inline void compat_vm_flags_set(struct vm_area_struct *vma,
				       unsigned long flags)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
	vma->vm_flags |= flags;
#else
	vm_flags_set(vma, flags);
#endif
}
/* ==== end ring buffer =================================================== */

#endif /* _PEVT_COMPAT_H */
