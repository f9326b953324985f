// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER, in perf's layout
 * (perf_output_sample(), x86-64):
 *
 *   REGS_USER:  u64 abi; u64 regs[hweight64(sample_regs_user)] if abi
 *   STACK_USER: u64 size; char data[size]; u64 dyn_size   (size != 0)
 *               u64 0                                     (no user regs)
 *
 * The user registers are those of the sample when it was taken in user
 * mode, else the ones the task entered the kernel with (task_pt_regs(),
 * perf_get_regs_user() outside NMI); a kernel thread has none (abi
 * PERF_SAMPLE_REGS_ABI_NONE, stack size 0).  Registers are written in
 * mask bit order, each as perf_reg_value() reads it.
 *
 * The stack dump copies sample_stack_user bytes from the user stack
 * pointer, capped as perf_sample_ustack_size() caps them (TASK_SIZE - sp,
 * the 64 KiB record size; with PEVT_SAMPLE_SIZE_AT_END the trailer is
 * part of the record, so the cap is 8 bytes lower), with
 * copy_from_user_nofault() one page-bounded chunk at a time: it never
 * faults or sleeps, and stops at the first chunk it cannot read, as
 * perf's copy_from_user_nmi() stops at the first fault.  dyn_size says
 * how much was copied; the rest of the announced size is zero-filled
 * (perf skips it, leaving whatever the buffer held).
 *
 * Limits and errnos at open, as perf_copy_attr() and perf_init_event():
 * a REGS_USER mask that is 0, names ds/es/fs/gs or a reserved bit:
 * -EINVAL; XMM registers (PERF_REG_EXTENDED_MASK): -EOPNOTSUPP (no pevt
 * source has PERF_PMU_CAP_EXTENDED_REGS); sample_stack_user >= USHRT_MAX
 * or not a multiple of 8: -EINVAL.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/perf_regs.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/perf_regs.h>

#include "internal.h"
#include "output.h"
#include "ring_buffer.h"

/* perf_regs.c's pt_regs_offset[] for x86-64: -1 for ds, es, fs, gs. */
#define RU_OFF(id, r)	[id] = offsetof(struct pt_regs, r)
static const int ru_offset[PERF_REG_X86_64_MAX] = {
	RU_OFF(PERF_REG_X86_AX, ax),	RU_OFF(PERF_REG_X86_BX, bx),
	RU_OFF(PERF_REG_X86_CX, cx),	RU_OFF(PERF_REG_X86_DX, dx),
	RU_OFF(PERF_REG_X86_SI, si),	RU_OFF(PERF_REG_X86_DI, di),
	RU_OFF(PERF_REG_X86_BP, bp),	RU_OFF(PERF_REG_X86_SP, sp),
	RU_OFF(PERF_REG_X86_IP, ip),	RU_OFF(PERF_REG_X86_FLAGS, flags),
	RU_OFF(PERF_REG_X86_CS, cs),	RU_OFF(PERF_REG_X86_SS, ss),
	[PERF_REG_X86_DS] = -1,		[PERF_REG_X86_ES] = -1,
	[PERF_REG_X86_FS] = -1,		[PERF_REG_X86_GS] = -1,
	RU_OFF(PERF_REG_X86_R8, r8),	RU_OFF(PERF_REG_X86_R9, r9),
	RU_OFF(PERF_REG_X86_R10, r10),	RU_OFF(PERF_REG_X86_R11, r11),
	RU_OFF(PERF_REG_X86_R12, r12),	RU_OFF(PERF_REG_X86_R13, r13),
	RU_OFF(PERF_REG_X86_R14, r14),	RU_OFF(PERF_REG_X86_R15, r15),
};

#define RU_NOSUPPORT	(BIT_ULL(PERF_REG_X86_DS) | BIT_ULL(PERF_REG_X86_ES) | \
			 BIT_ULL(PERF_REG_X86_FS) | BIT_ULL(PERF_REG_X86_GS))
#define RU_RESERVED	(GENMASK_ULL(PERF_REG_X86_XMM0 - 1, 0) & \
			 ~GENMASK_ULL(PERF_REG_X86_64_MAX - 1, 0))
#define RU_EXTENDED	(~GENMASK_ULL(PERF_REG_X86_XMM0 - 1, 0))

/**
 * pevt_regs_user_check_attr() - perf's checks of REGS_USER and STACK_USER
 * @attr: the attr being opened
 *
 * Return: 0, -EINVAL or -EOPNOTSUPP as the stock kernel answers.
 */
int pevt_regs_user_check_attr(const struct perf_event_attr *attr)
{
	if (attr->sample_type & PERF_SAMPLE_REGS_USER) {
		u64 mask = attr->sample_regs_user;

		/* perf_reg_validate() */
		if (!mask || (mask & (RU_NOSUPPORT | RU_RESERVED)))
			return -EINVAL;
	}
	if (attr->sample_type & PERF_SAMPLE_STACK_USER) {
		if (attr->sample_stack_user >= USHRT_MAX ||
		    !IS_ALIGNED(attr->sample_stack_user, sizeof(u64)))
			return -EINVAL;
	}
	/* has_extended_regs() without PERF_PMU_CAP_EXTENDED_REGS */
	if ((attr->sample_type & PERF_SAMPLE_REGS_USER) &&
	    (attr->sample_regs_user & RU_EXTENDED))
		return -EOPNOTSUPP;
	return 0;
}

/**
 * pevt_regs_user() - the user registers of a sample, perf_sample_regs_user()
 * @regs: the sample's registers, or NULL
 * @abi: PERF_SAMPLE_REGS_ABI_* of the result
 *
 * Return: the user registers, or NULL (kernel thread, no registers).
 */
struct pt_regs *pevt_regs_user(struct pt_regs *regs, u64 *abi)
{
	struct pt_regs *u = NULL;

	if (regs && user_mode(regs))
		u = regs;
	else if (!(current->flags & PF_KTHREAD) && current->mm)
		u = task_pt_regs(current);
	*abi = !u ? PERF_SAMPLE_REGS_ABI_NONE :
	       user_64bit_mode(task_pt_regs(current)) ?
	       PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_32;
	return u;
}

/**
 * pevt_regs_user_size() - bytes of the REGS_USER field
 * @attr: the sampling event's attr
 * @uregs: from pevt_regs_user()
 */
unsigned int pevt_regs_user_size(const struct perf_event_attr *attr,
				 struct pt_regs *uregs)
{
	return sizeof(u64) *
	       (1 + (uregs ? hweight64(attr->sample_regs_user) : 0));
}

/**
 * pevt_ustack_size() - the dump size perf_sample_ustack_size() gives
 * @stack_size: attr.sample_stack_user
 * @header_size: the record's size so far, trailer included
 * @uregs: from pevt_regs_user()
 *
 * Return: bytes of user stack to announce (0: no dump).
 */
u16 pevt_ustack_size(u16 stack_size, u16 header_size, struct pt_regs *uregs)
{
	unsigned long sp;
	u64 task_size;

	if (!uregs || !current->mm)
		return 0;
	sp = user_stack_pointer(uregs);
	task_size = !sp || sp >= TASK_SIZE ? 0 : TASK_SIZE - sp;
	task_size = min_t(u64, USHRT_MAX, task_size);
	stack_size = min_t(u16, stack_size, task_size);
	header_size += 2 * sizeof(u64);
	if ((u16)(header_size + stack_size) < header_size) {
		stack_size = USHRT_MAX - header_size - sizeof(u64);
		stack_size = round_up(stack_size, sizeof(u64));
	}
	return stack_size;
}

/**
 * pevt_ustack_field_size() - bytes of the STACK_USER field
 * @dump_size: from pevt_ustack_size()
 */
unsigned int pevt_ustack_field_size(u16 dump_size)
{
	return sizeof(u64) + (dump_size ? dump_size + sizeof(u64) : 0);
}

/**
 * pevt_output_regs_user() - write the REGS_USER field
 * @h: the sample being written
 * @attr: its event's attr
 * @uregs: from pevt_regs_user()
 * @abi: from pevt_regs_user()
 */
void pevt_output_regs_user(struct rb_handle *h,
			   const struct perf_event_attr *attr,
			   struct pt_regs *uregs, u64 abi)
{
	u64 mask = attr->sample_regs_user, v;
	int bit;

	rb_output_put(h, abi);
	if (!uregs)
		return;
	for (bit = 0; bit < PERF_REG_X86_64_MAX; bit++) {
		if (!(mask & BIT_ULL(bit)))
			continue;
		v = ru_offset[bit] < 0 ? 0 :
		    regs_get_register(uregs, ru_offset[bit]);
		rb_output_put(h, v);
	}
}

/**
 * pevt_output_ustack() - write the STACK_USER field
 * @h: the sample being written
 * @dump_size: from pevt_ustack_size()
 * @uregs: from pevt_regs_user()
 *
 * Irqs off or in an interrupt, current's user memory: nofault reads.
 */
void pevt_output_ustack(struct rb_handle *h, u16 dump_size,
			struct pt_regs *uregs)
{
	u64 buf[32];	/* 256 bytes: chunks never cross a page */
	unsigned long sp, done = 0, n;
	u64 v = dump_size;
	bool ok = true;

	rb_output_put(h, v);
	if (!dump_size)
		return;
	sp = user_stack_pointer(uregs);
	while (done < dump_size) {
		n = min_t(unsigned long, sizeof(buf), dump_size - done);
		n = min_t(unsigned long, n,
			  PAGE_SIZE - offset_in_page(sp + done));
		if (ok && copy_from_user_nofault(buf, (void __user *)(sp + done),
						 n))
			ok = false;
		if (!ok) {
			if (v == dump_size)
				v = done;	/* dyn_size */
			memset(buf, 0, n);
		}
		rb_output_copy(h, buf, n);
		done += n;
	}
	rb_output_put(h, v);
}
