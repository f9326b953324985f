// SPDX-License-Identifier: GPL-2.0
/*
 * pevt's one hub of kernel hooks: every tracepoint probe and kprobe pevt
 * uses is here, registered once at module load and unregistered at
 * unload, each calling pevt's users of that hook in a fixed order.
 *
 *   sched_switch        vpmu.c: the cswitch source counts (first, so
 *                       the outgoing task's counters count the switch,
 *                       as context-switches does), then context.c: task
 *                       contexts out/in
 *   raw_syscalls:       vpmu.c: the syscalls source; sample.c: the
 *     sys_enter         sys_enter sampling source
 *   task_rename         inherit.c: in an exec, remove_on_exec events
 *                       stop; then PERF_RECORD_COMM (MISC_COMM_EXEC
 *                       inside exec)
 *   sched_process_fork  PERF_RECORD_FORK, then inherit.c: queue the
 *                       child's events
 *   perf_event_exit_task()  (kprobe; sched_process_exit without kprobes,
 *                       see sb_exit_kp)
 *                       PERF_RECORD_EXIT, inherit.c: queue the fold of
 *                       the task's child events, then context.c: the task
 *                       context goes inactive for good.  EXIT first: the
 *                       record goes to the exiting task's own context,
 *                       which must still be scheduled in (issue 13 item 7:
 *                       two probes registered in either order lost it).
 *   sched_process_exec  context.c: detach on a privilege-raising exec,
 *                       then inherit.c: enable_on_exec, remove_on_exec
 *   perf_event_mmap()   PERF_RECORD_MMAP/MMAP2 (kprobe; see below)
 *
 * Why at load: registering a probe patches kernel text (static keys,
 * static calls) and under QEMU TCG that was seen to oops (stale int3)
 * when done while another CPU ran the site; doing it on demand from
 * open() also let a caller that the permission check then refused patch
 * the kernel.  Every probe returns at once when nothing of pevt listens
 * (no task context, no side-band event).
 *
 * MMAP records: the stock kernel calls perf_event_mmap(vma) for every
 * mapping it reports (mmap_region(), brk, special mappings such as the
 * vDSO, mprotect adding exec), after the vma is set up, with mmap_lock
 * held.  A kprobe on its entry sees the same vma at the same point, so
 * pevt's records describe exactly the mappings stock's do.  The record is
 * built as perf_event_mmap_event() builds it.  Kernels without kprobes
 * (or `mmap_records=N`) have no MMAP records: attr.mmap/mmap2/mmap_data is
 * -EOPNOTSUPP there.
 *
 * attr.build_id: MMAP2 records carry the mapped file's ELF build id in
 * place of dev/inode (PERF_RECORD_MISC_MMAP_BUILD_ID) when one is found,
 * as perf_event_mmap_event() does with build_id_parse() (6.1) or
 * build_id_parse_nofault() (6.12), neither exported: sb_build_id() reads
 * the file's page cache only, never faulting, by the rules of the
 * running kernel's lib/buildid.c (6.1: everything in the first page;
 * 6.12: any cached page).
 */
#include <linux/fs.h>
#include <linux/elf.h>
#include <linux/highmem.h>
#include <linux/hugetlb_inline.h>
#include <linux/pagemap.h>
#include <uapi/linux/magic.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <linux/version.h>

#include "internal.h"
#include "output.h"
#include "sideband.h"
#include "vpmu.h"

/* Set once by the first event asking for side-band records. */
static bool sb_wanted;

/* ---- records -------------------------------------------------------- */

static bool sb_on(void)
{
	return READ_ONCE(sb_wanted);
}

struct sb_mmap {
	struct vm_area_struct	*vma;
	bool			exec;
	int			bid_state;	/* 0: not looked for, 1: found, -1: none */
	u8			bid[20];	/* BUILD_ID_SIZE_MAX */
	u32			bid_size;
	struct {
		u32	pid, tid;
		u64	start, len, pgoff;
	} head;
	struct {
		u32	maj, min;
		u64	ino, ino_generation;
		u32	prot, flags;
	} mmap2;
	const char		*name;
	unsigned int		name_size;	/* with NULs, multiple of 8 */
};

/* ---- build ids (attr.build_id) -------------------------------------- */

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define SB_BID_ANY_PAGE	1	/* build_id_parse_nofault(): any cached page */
#else
#define SB_BID_ANY_PAGE	0	/* build_id_parse(): the first page only */
#endif
#define SB_BID_MAX	20	/* BUILD_ID_SIZE_MAX */
#define SB_BID_NOTE	3	/* NT_GNU_BUILD_ID */
#define SB_BID_PHDRS	256	/* 6.12: MAX_PHDR_CNT */

/* Copy file bytes [@off, @off + @len) from the page cache, never faulting. */
static int sb_bid_read(struct address_space *mapping, u64 off, void *dst,
		       size_t len)
{
	while (len) {
		size_t in = offset_in_page(off), n = min_t(size_t, len, PAGE_SIZE - in);
		struct page *page;
		void *addr;

		if (!SB_BID_ANY_PAGE && off >= PAGE_SIZE)
			return -EINVAL;
		page = find_get_page(mapping, off >> PAGE_SHIFT);
		if (!page)
			return -EFAULT;
		if (!PageUptodate(page)) {
			put_page(page);
			return -EFAULT;
		}
		addr = kmap_local_page(page);
		memcpy(dst, addr + in, n);
		kunmap_local(addr);
		put_page(page);
		dst += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* The GNU build id note in the notes at [@start, @start + @size). */
static int sb_bid_notes(struct address_space *mapping, u64 start, u32 size,
			struct sb_mmap *m)
{
	static const char gnu[4] = "GNU";
	struct {
		u32	namesz, descsz, type;
		char	name[4];
	} nh;
	u64 off = 0, next;

	if (SB_BID_ANY_PAGE ? start + size > U32_MAX :
			      start + size > PAGE_SIZE)
		return -EINVAL;
	/* lib/buildid.c's loop conditions: 6.12 fetches name and header */
	while (SB_BID_ANY_PAGE ? size - off > sizeof(nh) : off + 12 < size) {
		if (sb_bid_read(mapping, start + off, &nh,
				SB_BID_ANY_PAGE ? sizeof(nh) : 12))
			return -EFAULT;
		next = off + 12 + ALIGN((u64)nh.namesz, 4) + ALIGN((u64)nh.descsz, 4);
		if (next > size)
			break;
		if (nh.type == SB_BID_NOTE && nh.namesz == sizeof(gnu) &&
		    nh.descsz > 0 && nh.descsz <= SB_BID_MAX) {
			if (!SB_BID_ANY_PAGE &&
			    sb_bid_read(mapping, start + off + 12, nh.name, 4))
				return -EFAULT;
			if (!memcmp(nh.name, gnu, sizeof(gnu))) {
				memset(m->bid, 0, sizeof(m->bid));
				if (sb_bid_read(mapping, start + off + 16, m->bid,
						nh.descsz))
					return -EFAULT;
				m->bid_size = nh.descsz;
				return 0;
			}
		}
		off = next;
	}
	return -EINVAL;
}

/*
 * build_id_parse() / build_id_parse_nofault() for @m's vma: an ELF
 * executable or shared object whose program headers (6.1: right after
 * the ELF header, within the first page) have a PT_NOTE with the build id.
 */
static int sb_build_id(struct sb_mmap *m)
{
	struct file *file = m->vma->vm_file;
	struct address_space *mapping;
	Elf64_Ehdr eh;		/* the 32-bit fields used are read apart */
	u64 phoff;
	u32 phnum, phsz, i;
	bool is64;

	if (!file)
		return -EINVAL;
	/* memfd_secret() pages are not in the kernel's direct map */
	if (file_inode(file)->i_sb->s_magic == SECRETMEM_MAGIC)
		return -EFAULT;
	mapping = file->f_mapping;
	if (sb_bid_read(mapping, 0, &eh, EI_NIDENT + 2))
		return -EFAULT;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -EINVAL;
	if (eh.e_ident[EI_CLASS] == ELFCLASS64) {
		is64 = true;
		if (sb_bid_read(mapping, 0, &eh, sizeof(eh)))
			return -EFAULT;
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
		phsz = sizeof(Elf64_Phdr);
	} else if (eh.e_ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr e32;

		is64 = false;
		if (sb_bid_read(mapping, 0, &e32, sizeof(e32)))
			return -EFAULT;
		phoff = e32.e_phoff;
		phnum = e32.e_phnum;
		phsz = sizeof(Elf32_Phdr);
	} else {
		return -EINVAL;
	}
	if (SB_BID_ANY_PAGE) {
		phnum = min_t(u32, phnum, SB_BID_PHDRS);
	} else {
		if (phoff != (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)) ||
		    phnum > (PAGE_SIZE - phoff) / phsz)
			return -EINVAL;
	}
	for (i = 0; i < phnum; i++) {
		u64 noff;
		u32 nsize, type;

		if (is64) {
			Elf64_Phdr ph;

			if (sb_bid_read(mapping, phoff + i * phsz, &ph, sizeof(ph)))
				return -EFAULT;
			type = ph.p_type;
			noff = ph.p_offset;
			nsize = ph.p_filesz;
		} else {
			Elf32_Phdr ph;

			if (sb_bid_read(mapping, phoff + i * phsz, &ph, sizeof(ph)))
				return -EFAULT;
			type = ph.p_type;
			noff = ph.p_offset;
			nsize = ph.p_filesz;
		}
		if (type == PT_NOTE && !sb_bid_notes(mapping, noff, nsize, m))
			return 0;
	}
	return -EINVAL;
}

/* perf_event_mmap_match() + perf_event_mmap_output() */
static void sb_mmap_one(struct pevt_event *event, void *data)
{
	struct sb_mmap *m = data;
	struct perf_event_header hdr = {
		.type = PERF_RECORD_MMAP,
		.misc = PERF_RECORD_MISC_USER,
	};
	struct {
		typeof(m->head)		head;
		typeof(m->mmap2)	mmap2;
	} body;
	unsigned int len = sizeof(body.head);

	if (m->exec ? !(event->attr.mmap || event->attr.mmap2) :
		      !event->attr.mmap_data)
		return;
	if (!m->exec)
		hdr.misc |= PERF_RECORD_MISC_MMAP_DATA;
	body.head = m->head;
	body.head.pid = task_tgid_vnr(current);
	body.head.tid = task_pid_vnr(current);
	if (event->attr.mmap2) {
		hdr.type = PERF_RECORD_MMAP2;
		body.mmap2 = m->mmap2;
		len = sizeof(body);
		if (event->attr.build_id && !m->bid_state)
			m->bid_state = sb_build_id(m) ? -1 : 1;
		if (event->attr.build_id && m->bid_state > 0) {
			/* build_id_size, 3 reserved bytes, 20 id bytes */
			u8 *b = (u8 *)&body.mmap2;

			BUILD_BUG_ON(offsetof(typeof(body.mmap2), prot) != 4 + SB_BID_MAX);
			hdr.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
			memset(b, 0, 4);
			b[0] = m->bid_size;
			memcpy(b + 4, m->bid, SB_BID_MAX);
		}
	}
	pevt_output_sb_write(event, &hdr, &body, len, m->name, m->name_size);
}

/* Per CPU, allocated at load: the static per-CPU area of modules is small. */
struct sb_path {
	char buf[PATH_MAX];
};
static struct sb_path __percpu *sb_path_buf;

/* The name perf_event_mmap_event() gives an anonymous mapping. */
static const char *sb_anon_name(struct vm_area_struct *vma)
{
	struct mm_struct *mm = vma->vm_mm;
	const char *name = NULL;

	if (vma->vm_ops && vma->vm_ops->name)
		name = vma->vm_ops->name(vma);
	if (name)
		return name;
	/* arch_vma_name() is NULL on x86: the vDSO names itself above. */
	if (!mm)
		return "//anon";
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	if (vma_is_initial_heap(vma))
		return "[heap]";
	if (vma_is_initial_stack(vma))
		return "[stack]";
#else
	if (vma->vm_start <= mm->start_brk && vma->vm_end >= mm->brk)
		return "[heap]";
	if (vma->vm_start <= mm->start_stack && vma->vm_end >= mm->start_stack)
		return "[stack]";
#endif
	return "//anon";
}

/*
 * kprobe pre-handler on perf_event_mmap(vma): process context, mmap_lock
 * held, preemption disabled (ftrace-based kprobe), never re-entered on
 * a CPU: the per-CPU path buffer is ours.
 */
static int sb_mmap_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct vm_area_struct *vma;
	struct sb_mmap m;
	vm_flags_t vmf;
	char *buf, *name;
	unsigned int size;

	if (!sb_on())
		return 0;
	vma = (struct vm_area_struct *)regs_get_kernel_argument(regs, 0);
	vmf = vma->vm_flags;
	m.vma = vma;
	m.exec = vmf & VM_EXEC;
	m.bid_state = 0;
	m.head.start = vma->vm_start;
	m.head.len = vma->vm_end - vma->vm_start;
	m.head.pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
	memset(&m.mmap2, 0, sizeof(m.mmap2));
	m.mmap2.prot = (vmf & VM_READ ? PROT_READ : 0) |
		       (vmf & VM_WRITE ? PROT_WRITE : 0) |
		       (vmf & VM_EXEC ? PROT_EXEC : 0);
	m.mmap2.flags = vmf & VM_MAYSHARE ? MAP_SHARED : MAP_PRIVATE;
	if (vmf & VM_LOCKED)
		m.mmap2.flags |= MAP_LOCKED;
	if (is_vm_hugetlb_page(vma))
		m.mmap2.flags |= MAP_HUGETLB;

	buf = this_cpu_ptr(sb_path_buf)->buf;
	if (vma->vm_file) {
		struct inode *inode = file_inode(vma->vm_file);
		dev_t dev = inode->i_sb->s_dev;

		/* Room for the NULs that pad the name to 8 bytes. */
		name = file_path(vma->vm_file, buf, PATH_MAX - sizeof(u64));
		if (IS_ERR(name))
			name = strcpy(buf, "//toolong");
		m.mmap2.maj = MAJOR(dev);
		m.mmap2.min = MINOR(dev);
		m.mmap2.ino = inode->i_ino;
		m.mmap2.ino_generation = inode->i_generation;
	} else {
		/* perf copies these names into a 16-byte buffer. */
		strscpy(buf, sb_anon_name(vma), 16);
		name = buf;
	}
	size = strlen(name) + 1;
	while (!IS_ALIGNED(size, sizeof(u64)))
		name[size++] = '\0';
	m.name = name;
	m.name_size = size;
	pevt_output_sb_iterate(sb_mmap_one, &m);
	return 0;
}

static struct kprobe sb_mmap_kp = {
	.symbol_name	= "perf_event_mmap",
	.pre_handler	= sb_mmap_pre,
};
static bool sb_mmap_ok;		/* the kprobe is registered */
/*
 * `insmod pevt.ko mmap_records=N` places no kprobe on perf_event_mmap():
 * attr.mmap/mmap2/mmap_data are -EOPNOTSUPP, as on a kernel without
 * kprobes, so that `pevt record`'s fallback (a stock tracking event) keeps
 * a test on kernels that have them (nokprobe_test.sh).  Read: whether
 * MMAP records are written.
 */
static bool sb_mmap_records = true;
module_param_named(mmap_records, sb_mmap_records, bool, 0444);
MODULE_PARM_DESC(mmap_records,
		 "MMAP/MMAP2 records from a kprobe on perf_event_mmap() (Y, default), else attr.mmap* is refused (EOPNOTSUPP) as without kprobes; read: which is in use");

/* ---- tracepoint probes ---------------------------------------------- */

static void sb_switch_probe(void *data, bool preempt, struct task_struct *prev,
			    struct task_struct *next, unsigned int prev_state)
{
	vpmu_hook_sched_switch();
	pevt_ctx_sched_switch(next);
}

static void sb_sys_enter_probe(void *data, struct pt_regs *regs, long id)
{
	vpmu_hook_sys_enter(regs);
	pevt_sample_sys_enter(regs, id);
}

static void sb_rename_probe(void *data, struct task_struct *task,
			    const char *comm)
{
	/*
	 * __set_task_comm(.., exec = true) runs inside execve(), in
	 * begin_new_exec() right after perf_event_exec(): remove_on_exec
	 * events stop there (inherit.c), before the COMM.
	 */
	if (task == current && current->in_execve)
		pevt_inherit_exec_edge(task);
	if (sb_on() && task == current)
		pevt_output_comm(task, comm, current->in_execve);
}

static void sb_fork_probe(void *data, struct task_struct *parent,
			  struct task_struct *child)
{
	if (sb_on())
		pevt_output_task(child, true);
	pevt_inherit_fork(child);
}

/* A task's exit, where perf_event_exit_task() is (see sb_exit_kp). */
static void sb_exit(struct task_struct *task)
{
	/* The record first: it needs the task context still scheduled in. */
	if (sb_on())
		pevt_output_task(task, false);
	pevt_inherit_exit(task);
	pevt_ctx_task_exit(task);
}

/*
 * The stock kernel ends a task's events in perf_event_exit_task(), which
 * do_exit() calls before exit_mm() ("sampling can touch ->mm, make sure
 * to stop everything before we tear it down": the 6.1.192 source, and an
 * ftrace of do_exit() on Debian's 6.1 and 6.12), while sched_process_exit
 * comes after exit_mm().  Ending there counted the page-table teardown,
 * 1.7-3.6 ms per exiting process under TCG, into pevt's task clocks only
 * (pevt/stock task-clock 1.26 on 300 forks, 3-4x on short children).
 * So the exit work runs from a kprobe on perf_event_exit_task()'s entry,
 * as the stock kernel's does, and from the tracepoint only where that
 * kprobe cannot be placed (kernels without kprobes) or exit_early=N.
 * perf_event_exit_task() is also called by a privilege-raising exec
 * (begin_new_exec()), without PF_EXITING: sched_process_exec handles
 * that one (context.c).  Every exit path passes the call (do_exit()),
 * and exit_signals() sets PF_EXITING before it, which ctx_get_task()
 * relies on.
 */
static int sb_exit_pre(struct kprobe *kp, struct pt_regs *regs)
{
	if (current->flags & PF_EXITING)
		sb_exit(current);
	return 0;
}

static struct kprobe sb_exit_kp = {
	.symbol_name	= "perf_event_exit_task",
	.pre_handler	= sb_exit_pre,
};
/*
 * True while the kprobe is registered: the tracepoint does nothing then.
 * `insmod pevt.ko exit_early=N` keeps the exit work at sched_process_exit
 * (the behaviour before 2026-11-27), to compare.
 */
static bool sb_exit_early = true;
static bool sb_exit_kp_reg;
module_param_named(exit_early, sb_exit_early, bool, 0444);
MODULE_PARM_DESC(exit_early,
		 "task events end at perf_event_exit_task() like perf, before exit_mm(), from a kprobe (Y, default), else at sched_process_exit, after it; read: which is in use");

static void sb_exit_probe(void *data, struct task_struct *task)
{
	if (!READ_ONCE(sb_exit_early))
		sb_exit(task);
}

static void sb_exec_probe(void *data, struct task_struct *task,
			  pid_t old_pid, struct linux_binprm *bprm)
{
	pevt_ctx_task_exec(task);
	pevt_inherit_exec(task);
}

static struct sb_tp {
	const char		*name;
	void			*probe;
	struct tracepoint	*tp;
	bool			registered;
} sb_tps[] = {
	{ "sched_switch",	sb_switch_probe },
	{ "sys_enter",		sb_sys_enter_probe },
	{ "task_rename",	sb_rename_probe },
	{ "sched_process_fork",	sb_fork_probe },
	{ "sched_process_exit",	sb_exit_probe },
	{ "sched_process_exec",	sb_exec_probe },
};

static void sb_tp_lookup(struct tracepoint *tp, void *priv)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(sb_tps); i++)
		if (!strcmp(tp->name, sb_tps[i].name))
			sb_tps[i].tp = tp;
}

/**
 * pevt_sideband_check_attr() - can the side-band records @attr asks for
 * be written?
 * @attr: the attr being opened
 *
 * Process context.  Turns the record probes on for good (they are
 * registered already; this only stops them returning early).
 *
 * Return: 0, or -EOPNOTSUPP for MMAP records on a kernel without kprobes.
 */
int pevt_sideband_check_attr(const struct perf_event_attr *attr)
{
	if ((attr->mmap || attr->mmap2 || attr->mmap_data) && !sb_mmap_ok)
		return -EOPNOTSUPP;
	if (attr->comm || attr->task || attr->mmap || attr->mmap2 ||
	    attr->mmap_data)
		WRITE_ONCE(sb_wanted, true);
	return 0;
}

static void sb_unregister(void)
{
	int i;

	for (i = ARRAY_SIZE(sb_tps) - 1; i >= 0; i--) {
		if (!sb_tps[i].registered)
			continue;
		tracepoint_probe_unregister(sb_tps[i].tp, sb_tps[i].probe, NULL);
		sb_tps[i].registered = false;
	}
	if (sb_mmap_ok)
		unregister_kprobe(&sb_mmap_kp);
	sb_mmap_ok = false;
	if (sb_exit_kp_reg)
		unregister_kprobe(&sb_exit_kp);
	sb_exit_kp_reg = false;
	sb_exit_early = false;
	tracepoint_synchronize_unregister();
	free_percpu(sb_path_buf);
	sb_path_buf = NULL;
}

/**
 * pevt_sideband_init() - find the tracepoints, register every probe.
 *
 * After contexts and sampling sources are set up: probes run at once.
 *
 * Return: 0, -ENOENT if a needed tracepoint does not exist, or the
 * registration error.
 */
int pevt_sideband_init(void)
{
	int i, ret;

	for_each_kernel_tracepoint(sb_tp_lookup, NULL);
	for (i = 0; i < ARRAY_SIZE(sb_tps); i++) {
		if (!sb_tps[i].tp) {
			pr_err("pevt: tracepoint %s not found\n", sb_tps[i].name);
			return -ENOENT;
		}
	}
	for (i = 0; i < ARRAY_SIZE(sb_tps); i++) {
		ret = tracepoint_probe_register(sb_tps[i].tp, sb_tps[i].probe,
						NULL);
		if (ret) {
			sb_unregister();
			return ret;
		}
		sb_tps[i].registered = true;
	}
	sb_path_buf = alloc_percpu(struct sb_path);
	if (sb_mmap_records) {
		ret = sb_path_buf ? register_kprobe(&sb_mmap_kp) : -ENOMEM;
		if (ret)
			pr_info("pevt: no kprobe on perf_event_mmap (%d): no MMAP records\n",
				ret);
		sb_mmap_ok = !ret;
		sb_mmap_records = !ret;
	}
	if (sb_exit_early) {
		ret = register_kprobe(&sb_exit_kp);
		if (ret)
			pr_info("pevt: no kprobe on perf_event_exit_task (%d): task events end at sched_process_exit, after exit_mm()\n",
				ret);
		sb_exit_kp_reg = !ret;
		sb_exit_early = !ret;
	}
	return 0;
}

/**
 * pevt_sideband_exit() - unregister every probe and wait for running ones.
 */
void pevt_sideband_exit(void)
{
	sb_unregister();
}
