// SPDX-License-Identifier: GPL-2.0
/*
 * pevt ring buffer: perf's mmap protocol, plus PEVT_SAMPLE_SIZE_AT_END.
 *
 * Layout: one vmalloc_user() area of 1 + 2^n pages.  Page 0 is the
 * struct perf_event_mmap_page, pages 1.. are the data area.  Offsets are
 * free running (rb->head, data_head, data_tail) and masked on access, like
 * perf.  Being virtually contiguous in the kernel, a record wraps at most
 * once, at the end of the data area.
 *
 * Writers: every writer of one buffer runs on one CPU at a time (the core
 * enforces perf's SET_OUTPUT rules), possibly nested (a hrtimer sample
 * interrupting a syscall sample).  Space is reserved with local_cmpxchg()
 * on rb->head; data_head is published only by the outermost writer, after
 * all nested writers finished (rb->nest), exactly as perf does.
 *
 * Modes: a writable mapping is back-pressure mode: a record that does not
 * fit before data_tail is dropped and counted, and a PERF_RECORD_LOST is
 * written in front of the next record that fits.  A read-only mapping is
 * overwrite mode: data_tail is ignored and old records are overwritten.
 *
 * SIZE_AT_END: when RB_SIZE_AT_END is set the buffer appends a u64 equal
 * to header.size to every record (LOST included) and accounts for it in
 * header.size, so that the writers need not know.
 */
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/circ_buf.h>
#include <linux/poll.h>
#include <linux/log2.h>
#include <linux/rcupdate.h>

#include "ring_buffer.h"
#include "compat.h"

/*
 * perf_event_mlock_kb: same meaning and default as the kernel.perf_event_mlock_kb
 * sysctl (not exported to modules), per CPU.
 */
static unsigned int mlock_kb = 512 + (PAGE_SIZE / 1024);
module_param(mlock_kb, uint, 0644);
MODULE_PARM_DESC(mlock_kb, "per-CPU locked memory a user may map without CAP_IPC_LOCK (KiB, like perf_event_mlock_kb)");

/* Largest data area: keeps header.size arithmetic and vmalloc sane. */
#define RB_MAX_PAGES	(1UL << 16)

static struct workqueue_struct *rb_wq;

/* Buffers allocated and not yet freed (debugfs pevt/stats). */
atomic_t rb_nr_live = ATOMIC_INIT(0);

/*
 * Wakeups straight from the writer.  perf raises an irq_work for every
 * wakeup, because a record may be written under the runqueue lock or in
 * an NMI.  A sampling source that knows where it holds no lock brackets
 * its writes with rb_wake_defer_begin()/_end(): a wakeup due inside is
 * kept in a per-CPU slot and made by _end(), after the source dropped
 * its locks (the raw_syscalls:sys_enter probe, whose ctx->lock nests
 * inside the runqueue lock, wakes after releasing it, with interrupts
 * on; the cpu-clock hrtimer wakes from its callback, like
 * hrtimer_wakeup()).  The reader then runs at the next preemption
 * point, with no self-interrupt in between: under TCG that interrupt was
 * seen to come tens of milliseconds late while the producer kept running
 * (Documentation/record.md, "Wakeups that do not come").
 */
static bool rb_direct_wakeup = true;
module_param_named(direct_wakeup, rb_direct_wakeup, bool, 0644);
MODULE_PARM_DESC(direct_wakeup, "wake readers from the sampling source where it holds no lock (else always through irq_work, as perf)");

/*
 * Test hook: drop the wakeups that would go through irq_work, as a lost
 * or late self-interrupt does (the readers then wake on their own).
 */
static bool rb_drop_irq_work_wakeups;
module_param_named(drop_irq_work_wakeups, rb_drop_irq_work_wakeups, bool, 0644);
MODULE_PARM_DESC(drop_irq_work_wakeups, "test only: drop the wakeups that go through irq_work");

/*
 * Test hook: the next record of any buffer moves its wakeup point this
 * many watermarks further, as an interrupt between the load and the add
 * of rb_advance_wakeup() did when they were two steps (the point then
 * stood ahead of head).
 */
static unsigned int rb_test_wakeup_skew;
module_param_named(test_wakeup_skew, rb_test_wakeup_skew, uint, 0644);
MODULE_PARM_DESC(test_wakeup_skew, "test only: the next record moves its buffer's wakeup point this many watermarks ahead");

/* Sections open on this CPU and the one buffer whose wakeup waits. */
struct rb_wake_slot {
	unsigned int	depth;
	struct pevt_rb	*rb;
};
static DEFINE_PER_CPU(struct rb_wake_slot, rb_wake_slot);

/* Wakeups made, for debugfs pevt/stats. */
atomic64_t rb_wakeups_direct = ATOMIC64_INIT(0);
atomic64_t rb_wakeups_irq_work = ATOMIC64_INIT(0);

static void rb_wake_clients(struct pevt_rb *rb)
{
	struct rb_client *c;

	rcu_read_lock();
	list_for_each_entry_rcu(c, &rb->clients, node)
		wake_up_all(c->waitq);
	rcu_read_unlock();
}

static void rb_wakeup_fn(struct irq_work *work)
{
	rb_wake_clients(container_of(work, struct pevt_rb, wakeup_work));
}

static void rb_wake_later(struct pevt_rb *rb)
{
	if (READ_ONCE(rb_drop_irq_work_wakeups))
		return;
	atomic64_inc(&rb_wakeups_irq_work);
	irq_work_queue(&rb->wakeup_work);
}

/**
 * rb_wake_defer_begin() - open a section whose wakeups rb_wake_defer_end()
 * makes.  Preemption off until the matching end (the buffer stays alive
 * for as long: it is freed after an RCU grace period).  Sections nest
 * (an interrupt's inside a system call's); the outermost end wakes.
 */
void rb_wake_defer_begin(void)
{
	this_cpu_inc(rb_wake_slot.depth);
}

/**
 * rb_wake_defer_end() - close the section; wake what waits if outermost.
 * @no_lock: the caller holds no lock and may wake tasks here (a system
 *	call with interrupts on, or a hrtimer callback); else irq_work wakes
 */
void rb_wake_defer_end(bool no_lock)
{
	struct pevt_rb *rb;

	if (this_cpu_dec_return(rb_wake_slot.depth))
		return;
	/* A plain read first: xchg is a locked instruction, most ends find none. */
	if (!this_cpu_read(rb_wake_slot.rb))
		return;
	rb = this_cpu_xchg(rb_wake_slot.rb, NULL);
	if (!rb)
		return;
	if (no_lock && !in_nmi() && rcu_is_watching()) {
		atomic64_inc(&rb_wakeups_direct);
		rb_wake_clients(rb);
	} else {
		rb_wake_later(rb);
	}
}

/* A wakeup is due for @rb: keep it for the open section, or irq_work. */
static void rb_wake_due(struct pevt_rb *rb)
{
	struct pevt_rb *old;

	if (READ_ONCE(rb_direct_wakeup) && !in_nmi() &&
	    this_cpu_read(rb_wake_slot.depth)) {
		/* Interrupts may write in between: claim the slot atomically. */
		old = this_cpu_cmpxchg(rb_wake_slot.rb, NULL, rb);
		if (!old || old == rb)
			return;
	}
	rb_wake_later(rb);
}

static void rb_free_work(struct work_struct *work)
{
	struct pevt_rb *rb = container_of(to_rcu_work(work), struct pevt_rb,
					  free_work);

	/* A writer that saw rb before the grace period may have queued it. */
	irq_work_sync(&rb->wakeup_work);
	vfree(rb->user_page);
	kfree(rb);
	atomic_dec(&rb_nr_live);
}

/**
 * rb_alloc() - allocate a buffer of @nr_pages data pages.
 * @nr_pages:	data pages, a power of two, 1..65536
 * @watermark:	bytes between wakeups, 0 for half the buffer
 * @flags:	RB_WRITABLE, RB_SIZE_AT_END
 *
 * Return: the buffer with one reference, or an ERR_PTR().
 */
struct pevt_rb *rb_alloc(unsigned long nr_pages, unsigned long watermark,
			 unsigned int flags)
{
	struct perf_event_mmap_page *up;
	unsigned long size;
	struct pevt_rb *rb;

	if (!nr_pages || nr_pages > RB_MAX_PAGES || !is_power_of_2(nr_pages))
		return ERR_PTR(-EINVAL);

	rb = kzalloc(sizeof(*rb), GFP_KERNEL);
	if (!rb)
		goto err_rb;
	up = vmalloc_user((nr_pages + 1) << PAGE_SHIFT);
	if (!up)
		goto err_pages;

	rb->user_page = up;
	rb->data = (void *)up + PAGE_SIZE;
	rb->nr_pages = nr_pages;
	size = rb_data_size(rb);
	rb->mask = size - 1;
	rb->flags = flags;
	rb->overwrite = !(flags & RB_WRITABLE);
	rb->watermark = watermark ? min(watermark, size) : size / 2;
	refcount_set(&rb->refcount, 1);
	spin_lock_init(&rb->client_lock);
	INIT_LIST_HEAD(&rb->clients);
	init_irq_work(&rb->wakeup_work, rb_wakeup_fn);
	INIT_RCU_WORK(&rb->free_work, rb_free_work);
	mutex_init(&rb->mmap_mutex);
	atomic_inc(&rb_nr_live);

	/* What perf_event_init_userpage() publishes. */
	up->version = 0;
	up->compat_version = 0;
	up->cap_bit0_is_deprecated = 1;
	up->size = offsetof(struct perf_event_mmap_page, __reserved);
	up->data_offset = PAGE_SIZE;
	up->data_size = size;
	return rb;

err_pages:
	kfree(rb);
err_rb:
	return ERR_PTR(-ENOMEM);
}

/**
 * rb_get() - take a reference on @rb.
 * @rb: the buffer
 */
void rb_get(struct pevt_rb *rb)
{
	refcount_inc(&rb->refcount);
}

/**
 * rb_put() - drop a reference; the last one frees @rb after a grace period.
 * @rb: the buffer
 *
 * Writers find the buffer under rcu_read_lock() (or with preemption
 * disabled) through an RCU pointer in the event; they may still be writing
 * when the last reference goes, hence the grace period.
 */
void rb_put(struct pevt_rb *rb)
{
	if (!refcount_dec_and_test(&rb->refcount))
		return;
	WARN_ON_ONCE(!list_empty(&rb->clients));
	queue_rcu_work(rb_wq, &rb->free_work);
}

/**
 * rb_attach() - have @client woken when @rb has data.
 * @rb: the buffer
 * @client: the waiter (embedded in an event)
 *
 * Process context, may sleep.
 */
void rb_attach(struct pevt_rb *rb, struct rb_client *client)
{
	unsigned long flags;

	/*
	 * A client detached from another buffer may still be seen by that
	 * buffer's wakeup irq_work walking its list under RCU: re-linking
	 * the node into this list before a grace period would lead that
	 * walker from our node onto this buffer's list head, which it would
	 * take for a client (perf: ring_buffer_attach(), rcu_pending).
	 */
	if (client->rcu_pending) {
		cond_synchronize_rcu(client->rcu_state);
		client->rcu_pending = false;
	}
	spin_lock_irqsave(&rb->client_lock, flags);
	list_add_rcu(&client->node, &rb->clients);
	spin_unlock_irqrestore(&rb->client_lock, flags);
}

/**
 * rb_detach() - undo rb_attach(); @client may be freed after a grace period.
 * @rb: the buffer
 * @client: the waiter
 */
void rb_detach(struct pevt_rb *rb, struct rb_client *client)
{
	unsigned long flags;

	spin_lock_irqsave(&rb->client_lock, flags);
	list_del_rcu(&client->node);
	spin_unlock_irqrestore(&rb->client_lock, flags);
	client->rcu_state = get_state_synchronize_rcu();
	client->rcu_pending = true;
	/* Whoever polls this client next sees POLLHUP or a new buffer. */
	wake_up_all(client->waitq);
}

/**
 * rb_poll() - consume the pending poll bits (perf_poll()).
 * @rb: the buffer
 *
 * Return: EPOLLIN | EPOLLRDNORM if a wakeup was signalled since last call.
 */
__poll_t rb_poll(struct pevt_rb *rb)
{
	return atomic_xchg(&rb->poll, 0);
}

/**
 * rb_wakeup() - wake every client of @rb (from any context, via irq_work).
 * @rb: the buffer
 */
void rb_wakeup(struct pevt_rb *rb)
{
	irq_work_queue(&rb->wakeup_work);
}

/**
 * rb_set_paused() - PERF_EVENT_IOC_PAUSE_OUTPUT.
 * @rb: the buffer
 * @paused: true to drop (and count) every record until unpaused
 *
 * Unlike perf, pausing waits for the writers in flight: when it returns,
 * data_head does not move any more, so a reader may walk back from it
 * (the point of a paused SIZE_AT_END buffer).  Every writer runs inside
 * an RCU read-side section (rcu_read_lock(), or with preemption or
 * interrupts disabled) from its paused check in rb_output_begin() to its
 * data_head store, so after a grace period each writer that missed the
 * flag has published, and every later one sees it.  Expedited: a pause
 * is a reader's synchronous step.  Process context, may sleep.
 */
void rb_set_paused(struct pevt_rb *rb, bool paused)
{
	WRITE_ONCE(rb->paused, paused);
	if (paused)
		synchronize_rcu_expedited();
}

/**
 * rb_update_user_page() - publish the counter fields of the control page.
 * @rb: the buffer
 * @index: 0 (pevt events cannot be read with rdpmc)
 * @offset: with index 0, the count itself
 * @enabled: time_enabled of the event
 * @running: time_running of that event
 *
 * Same seqlock as perf_event_update_userpage(): readers retry while
 * ->lock is odd or changes.  Writers must not nest (callers hold the
 * event's ctx->lock).
 */
void rb_update_user_page(struct pevt_rb *rb, u32 index, u64 offset,
			 u64 enabled, u64 running)
{
	struct perf_event_mmap_page *up = rb->user_page;

	preempt_disable();
	++up->lock;
	barrier();
	up->index = index;
	up->offset = offset;
	up->time_enabled = enabled;
	up->time_running = running;
	barrier();
	++up->lock;
	preempt_enable();
}

/* ---- mmap ---------------------------------------------------------- */

/**
 * rb_mmap_nr_pages() - validate a vma for a buffer mapping.
 * @vma: the vma given to f_op->mmap
 * @nr_pages: out: the number of data pages it asks for
 *
 * Return: 0, or -EINVAL unless shared, at offset 0, 1 + 2^n pages (n >= 0).
 */
int rb_mmap_nr_pages(struct vm_area_struct *vma, unsigned long *nr_pages)
{
	unsigned long pages = vma_pages(vma);

	if (!(vma->vm_flags & VM_SHARED) || vma->vm_pgoff)
		return -EINVAL;
	if (pages < 2 || !is_power_of_2(pages - 1) || pages - 1 > RB_MAX_PAGES)
		return -EINVAL;
	*nr_pages = pages - 1;
	return 0;
}

/*
 * Charge the mapping like perf_mmap(): up to perf_event_mlock_kb per CPU
 * comes from the user's locked_vm allowance, the rest is pinned_vm of the
 * mm and counts against RLIMIT_MEMLOCK unless CAP_IPC_LOCK.
 */
static int rb_charge(struct pevt_rb *rb, struct vm_area_struct *vma)
{
	struct user_struct *user = current_user();
	unsigned long user_extra = rb->nr_pages + 1;
	unsigned long user_lock_limit, user_locked, lock_limit, locked;
	unsigned long extra = 0;

	user_lock_limit = (mlock_kb >> (PAGE_SHIFT - 10)) * num_online_cpus();
	user_locked = atomic_long_read(&user->locked_vm);
	/* A user over the limit (limit lowered since) is charged the excess. */
	if (user_locked > user_lock_limit)
		user_locked = user_lock_limit;
	user_locked += user_extra;
	if (user_locked > user_lock_limit) {
		extra = user_locked - user_lock_limit;
		user_extra -= extra;
	}

	lock_limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	locked = atomic64_read(&vma->vm_mm->pinned_vm) + extra;
	if (locked > lock_limit && !capable(CAP_IPC_LOCK))
		return -EPERM;

	atomic_long_add(user_extra, &user->locked_vm);
	atomic64_add(extra, &vma->vm_mm->pinned_vm);
	rb->mmap_user = get_current_user();
	rb->mmap_user_locked = user_extra;
	rb->mmap_mm = vma->vm_mm;
	mmgrab(rb->mmap_mm);
	rb->mmap_locked = extra;
	return 0;
}

static void rb_uncharge(struct pevt_rb *rb)
{
	atomic_long_sub(rb->mmap_user_locked, &rb->mmap_user->locked_vm);
	atomic64_sub(rb->mmap_locked, &rb->mmap_mm->pinned_vm);
	free_uid(rb->mmap_user);
	mmdrop(rb->mmap_mm);
	rb->mmap_user = NULL;
	rb->mmap_mm = NULL;
}

static void rb_vm_open(struct vm_area_struct *vma)
{
	struct pevt_rb *rb = vma->vm_private_data;

	/* fork() or mremap() copying the vma: one more mapping. */
	atomic_inc(&rb->mmap_count);
	rb_get(rb);
}

static void rb_vm_close(struct vm_area_struct *vma)
{
	struct pevt_rb *rb = vma->vm_private_data;

	mutex_lock(&rb->mmap_mutex);
	if (atomic_dec_and_test(&rb->mmap_count)) {
		rb_uncharge(rb);
		if (rb->last_unmap)
			rb->last_unmap(rb, rb->last_unmap_priv);
	}
	mutex_unlock(&rb->mmap_mutex);
	rb_put(rb);
}

static int rb_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	/* Like perf: a partial unmap would break the page-0-first layout. */
	return -EINVAL;
}

static const struct vm_operations_struct rb_vm_ops = {
	.open		= rb_vm_open,
	.close		= rb_vm_close,
	.may_split	= rb_vm_may_split,
};

/**
 * rb_mmap() - map @rb into @vma (from the event's f_op->mmap).
 * @rb: the buffer, whose size must match the vma
 * @vma: validated by rb_mmap_nr_pages()
 *
 * The first mapping charges locked memory; the last unmap uncharges it
 * and calls the last_unmap hook.  Each vma holds a reference on @rb.
 *
 * Return: 0 or -EINVAL (size mismatch), -EPERM (memlock), -errno.
 */
int rb_mmap(struct pevt_rb *rb, struct vm_area_struct *vma)
{
	unsigned long nr_pages;
	int ret;

	ret = rb_mmap_nr_pages(vma, &nr_pages);
	if (ret)
		return ret;
	if (nr_pages != rb->nr_pages)
		return -EINVAL;

	mutex_lock(&rb->mmap_mutex);
	if (!atomic_read(&rb->mmap_count)) {
		ret = rb_charge(rb, vma);
		if (ret)
			goto err_unlock;
	}
	/* Inserts every page now (vm_insert_page), sets VM_DONTEXPAND. */
	ret = remap_vmalloc_range(vma, rb->user_page, 0);
	if (ret)
		goto err_uncharge;
	/*
	 * perf_mmap(): not inherited by fork() (a child would keep the
	 * event alive, and the buffer is charged to this mm only), not
	 * dumped.
	 */
	compat_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	atomic_inc(&rb->mmap_count);
	rb_get(rb);
	vma->vm_private_data = rb;
	vma->vm_ops = &rb_vm_ops;
	mutex_unlock(&rb->mmap_mutex);
	return 0;

err_uncharge:
	if (!atomic_read(&rb->mmap_count))
		rb_uncharge(rb);
err_unlock:
	mutex_unlock(&rb->mmap_mutex);
	return ret;
}

/**
 * rb_set_last_unmap() - set the hook run when the last mapping goes away.
 * @rb: the buffer, not mapped yet (no lock: the hook is set once, early)
 * @fn: called under rb->mmap_mutex from the vma close, may sleep
 * @priv: its argument
 */
void rb_set_last_unmap(struct pevt_rb *rb,
		       void (*fn)(struct pevt_rb *rb, void *priv), void *priv)
{
	rb->last_unmap = fn;
	rb->last_unmap_priv = priv;
}

/* ---- output -------------------------------------------------------- */

/*
 * The kernel/user ordering contract (also in include/uapi/linux/pevt.h):
 *
 *   kernel				user
 *
 *   if (LOAD ->data_tail) {		LOAD ->data_head
 *			(A)		smp_rmb()	(C)
 *	STORE $data			LOAD $data
 *	smp_wmb()	(B)		smp_mb()	(D)
 *	STORE ->data_head		STORE ->data_tail
 *   }
 *
 * A pairs with D: the reader must not release space (store data_tail)
 * before it finished reading it; the writer must not overwrite it before
 * it saw the release.  A is a control dependency (no store happens when
 * data_tail says there is no room).  B pairs with C: the reader must see
 * the data of every record below data_head.
 */

/*
 * A wakeup is due once @head (the end of the record just reserved) is
 * more than a watermark past the wakeup point: move the point one
 * watermark on (rb_put_handle() sees it moved and wakes the readers).
 *
 * perf's __perf_output_begin() loads the point and adds to it in two
 * steps, and compares unsigned.  A record written from an interrupt
 * between the two (a cpu-clock sample into a buffer whose sideband
 * record it interrupted) moved the point too, and the two adds left it
 * ahead of head: head - wakeup, unsigned, was then huge for every later
 * record, each of which moved the point on again and woke the readers,
 * for the life of the buffer.  Under single-threaded TCG at 100 kHz a
 * --pin-readers reader so woken some 10000 times a second kept its CPU
 * and stretched a 3 s recording to 100 s (Documentation/record.md, "A
 * wakeup for every record").  Here the add is a cmpxchg from the value
 * compared, and the comparison is signed: a point ahead of head waits
 * for head to pass it.
 */
static void rb_advance_wakeup(struct pevt_rb *rb, unsigned long head)
{
	long w = local_read(&rb->wakeup), old;

	while ((long)(head - w) > (long)rb->watermark) {
		old = local_cmpxchg(&rb->wakeup, w, w + rb->watermark);
		if (old == w)
			break;
		w = old;
	}
}

static void rb_get_handle(struct rb_handle *h, struct pevt_rb *rb)
{
	preempt_disable();
	/* A plain increment: only this CPU (and its interrupts) writes. */
	(*(volatile unsigned int *)&rb->nest)++;
	h->wakeup = local_read(&rb->wakeup);
}

static void rb_put_handle(struct rb_handle *h, struct pevt_rb *rb)
{
	unsigned long head;
	unsigned int nest;

	/* Only the outermost writer publishes data_head. */
	nest = READ_ONCE(rb->nest);
	if (nest > 1) {
		WRITE_ONCE(rb->nest, nest - 1);
		goto out;
	}
again:
	/*
	 * Load rb->head after our nest increment: an interrupt between the
	 * two would otherwise publish a newer head we then overwrite with
	 * this older one.
	 */
	barrier();
	head = local_read(&rb->head);

	smp_wmb(); /* B, matches C */
	WRITE_ONCE(rb->user_page->data_head, head);

	/*
	 * Publish before dropping nest, and re-check head after: an
	 * interrupt that reserved space after our load, but found nest != 0,
	 * left the publication to us.
	 */
	barrier();
	WRITE_ONCE(rb->nest, 0);
	barrier();
	if (unlikely(head != local_read(&rb->head))) {
		WRITE_ONCE(rb->nest, 1);
		goto again;
	}

	/*
	 * Never wake up from here: we may hold the runqueue lock
	 * (sched_switch), the context's lock, or be in an NMI.  The wakeup
	 * waits for the end of the source's section (rb_wake_defer_end())
	 * or for irq_work, which runs it from a self-interrupt once those
	 * are released.
	 */
	if (h->wakeup != local_read(&rb->wakeup)) {
		atomic_set(&rb->poll, EPOLLIN | EPOLLRDNORM);
		rb_wake_due(rb);
	}
out:
	preempt_enable();
}

static void rb_copy(struct pevt_rb *rb, unsigned long pos, const void *buf,
		    unsigned int len)
{
	unsigned long off = pos & rb->mask;
	unsigned long first = min_t(unsigned long, len, rb_data_size(rb) - off);

	memcpy(rb->data + off, buf, first);
	if (len > first)
		memcpy(rb->data, buf + first, len - first);
}

static void rb_zero(struct pevt_rb *rb, unsigned long pos, unsigned int len)
{
	static const u64 zeros[8];

	while (len) {
		unsigned int n = min_t(unsigned int, len, sizeof(zeros));

		rb_copy(rb, pos, zeros, n);
		pos += n;
		len -= n;
	}
}

static void rb_finish_record(struct rb_handle *h)
{
	struct pevt_rb *rb = h->rb;
	unsigned long trailer = rb_size_at_end(rb) ? sizeof(u64) : 0;
	u64 size = h->size;

	/* A writer that wrote less than it announced leaves zeros, not junk. */
	if (h->pos < h->end - trailer)
		rb_zero(rb, h->pos, h->end - trailer - h->pos);
	if (trailer)
		rb_copy(rb, h->end - trailer, &size, sizeof(size));
	h->pos = h->end;
}

/* Bytes of the PERF_RECORD_LOST that must precede the next record, or 0. */
static unsigned long rb_lost_size(struct pevt_rb *rb, unsigned int id_len)
{
	if (likely(!local_read(&rb->lost)))
		return 0;
	return sizeof(struct perf_event_header) + 2 * sizeof(u64) + id_len +
	       (rb_size_at_end(rb) ? sizeof(u64) : 0);
}

/* Does a record of @need bytes (LOST included) fit at @offset? */
static bool rb_fits(struct pevt_rb *rb, unsigned long offset, unsigned long need)
{
	unsigned long tail;

	if (unlikely(need >= rb_data_size(rb)))
		return false;
	if (rb->overwrite)
		return true;
	tail = READ_ONCE(rb->user_page->data_tail);
	return CIRC_SPACE(offset, tail, rb_data_size(rb)) >= need;
}

static void rb_count_lost(struct pevt_rb *rb)
{
	local_inc(&rb->lost);
	atomic64_inc(&rb->lost_total);
}

/**
 * rb_output_drop() - drop a record early if it cannot be written now.
 * @rb: the buffer
 * @size: header.size of the record, without the trailer
 * @id_len: bytes of the writer's sample_id block (for a LOST record)
 *
 * For writers that have work to do before rb_output_begin() (reading the
 * clock, the task's ids): a record that is going to be dropped, because
 * the buffer is paused or full in back-pressure mode, costs only this
 * check and the count (stock perf builds the whole sample first).
 * rb_output_begin() checks again; a record passed here may still be
 * dropped there.  Same context rules as rb_output_begin().
 *
 * Return: true if the record was dropped and counted as lost.
 */
bool rb_output_drop(struct pevt_rb *rb, unsigned int size, unsigned int id_len)
{
	unsigned long need = size + (rb_size_at_end(rb) ? sizeof(u64) : 0);

	if (likely(!READ_ONCE(rb->paused) &&
		   rb_fits(rb, local_read(&rb->head), need + rb_lost_size(rb, id_len))))
		return false;
	rb_count_lost(rb);
	return true;
}

/**
 * rb_output_begin() - reserve space for one record.
 * @h: the handle to fill
 * @rb: the buffer
 * @header: the record's header; ->size is the record without the trailer
 *	and is increased by 8 when @rb has RB_SIZE_AT_END
 * @lid: what a PERF_RECORD_LOST written first (if records were lost) says
 *
 * Call with interrupts in any state, from any context but NMI, inside an
 * RCU read-side section (rcu_read_lock(), or preemption or interrupts
 * disabled) that also keeps @rb alive and lasts until rb_output_end():
 * rb_set_paused() relies on it.  On success write exactly header->size
 * bytes (minus the trailer) with rb_output_copy(), then call
 * rb_output_end().
 *
 * Return: 0, or -ENOSPC when the record was dropped (paused, full in
 * back-pressure mode, larger than the buffer); it is then counted as lost.
 */
int rb_output_begin(struct rb_handle *h, struct pevt_rb *rb,
		    struct perf_event_header *header,
		    const struct rb_lost_id *lid)
{
	unsigned int trailer = rb_size_at_end(rb) ? sizeof(u64) : 0;
	unsigned long offset, head, size, lost_size;
	struct {
		struct perf_event_header header;
		u64 id;
		u64 lost;
	} lost_ev;

	h->rb = NULL;
	size = header->size + trailer;

	if (unlikely(READ_ONCE(rb->paused)))
		goto lost;
	if (unlikely(size > U16_MAX || !IS_ALIGNED(size, sizeof(u64))))
		goto lost;

	lost_size = rb_lost_size(rb, lid->sample_id_len);
	rb_get_handle(h, rb);
	do {
		offset = local_read(&rb->head);
		head = offset + size + lost_size;
		/*
		 * A: the stores to the data below depend on this comparison
		 * with data_tail (control dependency), so they cannot be
		 * done before the reader released the space. Matches D.
		 */
		if (!rb_fits(rb, offset, size + lost_size))
			goto fail;
	} while (local_cmpxchg(&rb->head, offset, head) != offset);

	/* The implied barrier() of local_cmpxchg() keeps the stores below. */
	if (unlikely(READ_ONCE(rb_test_wakeup_skew)))
		local_add((unsigned long)xchg(&rb_test_wakeup_skew, 0) * rb->watermark,
			  &rb->wakeup);
	rb_advance_wakeup(rb, head);

	h->rb = rb;
	if (unlikely(lost_size)) {
		lost_ev.header.type = PERF_RECORD_LOST;
		lost_ev.header.misc = 0;
		lost_ev.header.size = lost_size;
		lost_ev.id = lid->id;
		lost_ev.lost = local_xchg(&rb->lost, 0);
		h->pos = offset;
		h->end = offset + lost_size;
		h->size = lost_size;
		rb_output_put(h, lost_ev);
		if (lid->sample_id_len)
			rb_output_copy(h, lid->sample_id, lid->sample_id_len);
		rb_finish_record(h);
		offset += lost_size;
	}
	header->size = size;
	h->pos = offset;
	h->end = head;
	h->size = size;
	return 0;

fail:
	rb_put_handle(h, rb);
lost:
	rb_count_lost(rb);
	return -ENOSPC;
}

/**
 * rb_output_copy() - append @len bytes of the record being written.
 * @h: a handle from a successful rb_output_begin()
 * @buf: the bytes
 * @len: how many; bytes past the announced size are not written
 */
void rb_output_copy(struct rb_handle *h, const void *buf, unsigned int len)
{
	struct pevt_rb *rb = h->rb;
	unsigned long room;

	if (!rb)
		return;
	room = h->end - (rb_size_at_end(rb) ? sizeof(u64) : 0) - h->pos;
	if (WARN_ON_ONCE(len > room))
		len = room;
	rb_copy(rb, h->pos, buf, len);
	h->pos += len;
}

/**
 * rb_count_event() - perf's wakeup_events accounting for one sample.
 * @h: the handle of the sample being written
 * @wakeup_events: attr.wakeup_events of its event (0: watermark only)
 */
void rb_count_event(struct rb_handle *h, unsigned int wakeup_events)
{
	struct pevt_rb *rb = h->rb;

	if (!rb || !wakeup_events)
		return;
	if (local_inc_return(&rb->events) >= wakeup_events) {
		local_sub(wakeup_events, &rb->events);
		local_inc(&rb->wakeup);
	}
}

/**
 * rb_output_end() - complete the record: trailer, then publish data_head.
 * @h: a handle from a successful rb_output_begin()
 */
void rb_output_end(struct rb_handle *h)
{
	struct pevt_rb *rb = h->rb;

	if (!rb)
		return;
	rb_finish_record(h);
	rb_put_handle(h, rb);
	h->rb = NULL;
}

/**
 * rb_init() - module init for the ring buffer.
 *
 * Return: 0 or -ENOMEM.
 */
int rb_init(void)
{
	rb_wq = alloc_workqueue("pevt_rb", 0, 0);
	return rb_wq ? 0 : -ENOMEM;
}

/**
 * rb_exit() - module exit: wait for every buffer to be freed.
 */
void rb_exit(void)
{
	/* queue_rcu_work() holds work in call_rcu() until the grace period. */
	rcu_barrier();
	destroy_workqueue(rb_wq);
}
