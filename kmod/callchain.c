// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_SAMPLE_CALLCHAIN, as perf's get_perf_callchain() on x86:
 *
 *   { u64 nr; u64 ips[nr]; }
 *
 * For a sample taken in the kernel: PERF_CONTEXT_KERNEL, the interrupted
 * IP, then the return addresses the kernel unwinder (ORC on Debian's
 * kernels: __unwind_start()/unwind_next_frame(), exported) finds from the
 * interrupted registers.  Then, for a task with user memory:
 * PERF_CONTEXT_USER, the user IP (of the sample, or where the task
 * entered the kernel: task_pt_regs()), and the return addresses of the
 * user frame-pointer chain (each frame { next rbp, return address }),
 * read with copy_from_user_nofault(): never faults, never sleeps, stops at
 * the first frame it cannot read or one outside user space (perf's
 * valid_user_frame()), else at the depth limit.  32-bit tasks get no user
 * part (perf decodes their frames; pevt does not).
 *
 * Limits, as perf: attr.sample_max_stack (0: kernel.perf_event_max_stack,
 * read from procfs at open; above it -EOVERFLOW) entries besides the
 * context markers; attr.exclude_callchain_kernel / _user drop a part.
 * perf_callchain_user()'s differences that matter: none for frame-pointer
 * programs; perf also fixes up uretprobe trampolines (pevt: no uprobes
 * of its own).
 */
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/unwind.h>

#include "internal.h"
#include "output.h"
#include "perm.h"

#define CC_MAX_ENTRIES	(PERF_MAX_STACK_DEPTH + 2)	/* + 2 context markers */
#define CC_MAX_STACK_PATH	"/proc/sys/kernel/perf_event_max_stack"

struct cc_buf {
	u64 ip[CC_MAX_ENTRIES + 1];	/* [0]: nr */
};

/*
 * One per CPU and per nesting level (task, irq): samples run irqs off.
 * Allocated at load (the static per-CPU area of modules is small).
 */
struct cc_bufs {
	struct cc_buf level[2];
};
static struct cc_bufs __percpu *cc_bufs;
static struct file *cc_max_stack_file;

static bool cc_store(struct cc_buf *b, u64 ip, unsigned int max)
{
	if (b->ip[0] >= max)
		return false;
	b->ip[++b->ip[0]] = ip;
	return true;
}

static void cc_kernel(struct cc_buf *b, struct pt_regs *regs, unsigned int max)
{
	struct unwind_state state;
	unsigned long addr;

	if (!cc_store(b, instruction_pointer(regs), max))
		return;
	/* perf_hw_regs(): registers of an interrupt, else of a caller. */
	if (regs->flags & X86_EFLAGS_FIXED)
		unwind_start(&state, current, regs, NULL);
	else
		unwind_start(&state, current, NULL, (void *)regs->sp);
	for (; !unwind_done(&state); unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr || !cc_store(b, addr, max))
			return;
	}
}

struct cc_frame {
	unsigned long next;
	unsigned long ret;
};

/* perf_callchain_user() for 64-bit tasks, frame by frame. */
static void cc_user(struct cc_buf *b, struct pt_regs *regs, unsigned int max)
{
	unsigned long fp = regs->bp;
	struct cc_frame frame;

	if (!cc_store(b, instruction_pointer(regs), max))
		return;
	/* valid_user_frame(): the frame lies below TASK_SIZE. */
	while (fp <= TASK_SIZE_MAX - sizeof(frame)) {
		if (copy_from_user_nofault(&frame, (void __user *)fp,
					   sizeof(frame)))
			break;
		if (!cc_store(b, frame.ret, max))
			break;
		fp = frame.next;
	}
}

/**
 * pevt_callchain() - collect the callchain of a sample.
 * @event: the sampling event (its attr)
 * @regs: the registers of the sample, or NULL
 *
 * Interrupts disabled (every pevt sample path).
 *
 * Return: { nr, ips[nr] } in a per-CPU buffer, valid until interrupts
 * are enabled again.
 */
const u64 *pevt_callchain(struct pevt_event *event, struct pt_regs *regs)
{
	struct cc_buf *b = &this_cpu_ptr(cc_bufs)->level[in_hardirq() ? 1 : 0];
	const struct perf_event_attr *attr = &event->attr;
	unsigned int max = min_t(unsigned int, attr->sample_max_stack,
				 PERF_MAX_STACK_DEPTH);

	b->ip[0] = 0;
	if (!regs)
		return b->ip;
	/*
	 * Markers do not count against the depth (perf: contexts apart).
	 * Kernel frames never for exclude_kernel: perf drops such samples.
	 */
	if (!attr->exclude_callchain_kernel && !attr->exclude_kernel &&
	    !user_mode(regs)) {
		b->ip[++b->ip[0]] = PERF_CONTEXT_KERNEL;
		cc_kernel(b, regs, max + 1);
	}
	if (!attr->exclude_callchain_user && current->mm &&
	    !(current->flags & PF_KTHREAD)) {
		unsigned int used = b->ip[0] ? b->ip[0] - 1 : 0;

		if (!user_mode(regs))
			regs = task_pt_regs(current);
		b->ip[++b->ip[0]] = PERF_CONTEXT_USER;
		if (used < max && !test_thread_flag(TIF_ADDR32))
			cc_user(b, regs, b->ip[0] + max - used);
	}
	return b->ip;
}

/**
 * pevt_callchain_check_attr() - sample_max_stack against
 * kernel.perf_event_max_stack (perf: get_callchain_buffers()).
 * @attr: the attr being opened (sample_max_stack 0 becomes the sysctl)
 *
 * Return: 0, or -EOVERFLOW above the sysctl.
 */
int pevt_callchain_check_attr(struct perf_event_attr *attr)
{
	int sysctl = perm_proc_int(cc_max_stack_file, PERF_MAX_STACK_DEPTH);

	if (!(attr->sample_type & PERF_SAMPLE_CALLCHAIN))
		return 0;
	if (!cc_bufs)
		return -ENOMEM;
	if (sysctl < 0)
		sysctl = 0;
	if (!attr->sample_max_stack)
		attr->sample_max_stack = sysctl;
	if (attr->sample_max_stack > sysctl)
		return -EOVERFLOW;
	return 0;
}

/**
 * pevt_callchain_init() - the per-CPU buffers; open
 * kernel.perf_event_max_stack (as perm.c the paranoid level: once, in
 * insmod's context).  Without them callchains are refused (-ENOMEM).
 */
void pevt_callchain_init(void)
{
	cc_bufs = alloc_percpu(struct cc_bufs);
	cc_max_stack_file = perm_proc_open(CC_MAX_STACK_PATH,
					   "callchains use perf's default depth");
}

/* No event is left. */
void pevt_callchain_exit(void)
{
	if (cc_max_stack_file)
		filp_close(cc_max_stack_file, NULL);
	cc_max_stack_file = NULL;
	free_percpu(cc_bufs);
	cc_bufs = NULL;
}
