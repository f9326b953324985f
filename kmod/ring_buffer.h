/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pevt ring buffer: perf's mmap protocol (one struct perf_event_mmap_page
 * plus 2^n data pages, data_head/data_tail), with the PEVT_SAMPLE_SIZE_AT_END
 * trailer applied by the buffer itself to every record written into it.
 *
 * The protocol can be read here and in ring_buffer.c without the event core:
 * the core hands the buffer records (rb_output_begin/copy/end), attaches
 * wakeup clients (its events' wait queues) and calls rb_mmap() from its
 * f_op->mmap.
 */
#ifndef _PEVT_RING_BUFFER_H
#define _PEVT_RING_BUFFER_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/irq_work.h>
#include <linux/workqueue.h>
#include <linux/wait.h>
#include <linux/perf_event.h>
#include <asm/local.h>

struct vm_area_struct;
struct user_struct;

extern atomic_t rb_nr_live;	/* buffers alive (debugfs pevt/stats) */
extern atomic64_t rb_wakeups_direct;	/* readers woken by the writer */
extern atomic64_t rb_wakeups_irq_work;	/* readers woken through irq_work */

#define RB_WRITABLE	0x01	/* writable mapping: back-pressure, not overwrite */
#define RB_SIZE_AT_END	0x02	/* every record ends with a u64 == header.size */

/* Largest sample_id block (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER). */
#define RB_ID_MAX	(6 * sizeof(u64))

/**
 * struct rb_client - a wait queue woken when the buffer has data.
 * @node:	on pevt_rb::clients (RCU list, rb->client_lock)
 * @waitq:	woken from irq_work, never from the output context itself
 *
 * Embedded in the event: its wait queue must outlive poll/epoll entries,
 * which a buffer (freed on last unmap) does not.  The owner must not free
 * the client before an RCU grace period after rb_detach().
 */
struct rb_client {
	struct list_head	node;
	wait_queue_head_t	*waitq;
	unsigned long		rcu_state;	/* grace period cookie at detach */
	bool			rcu_pending;	/* detached, grace period may not be over */
};

/**
 * struct rb_lost_id - what a PERF_RECORD_LOST emitted for a writer carries.
 * @id:		the writer's event id (perf's lost_event.id)
 * @sample_id:	the writer's sample_id block when sample_id_all, else NULL
 * @sample_id_len: its size in bytes, multiple of 8, <= RB_ID_MAX
 */
struct rb_lost_id {
	u64		id;
	const void	*sample_id;
	unsigned int	sample_id_len;
};

struct pevt_rb {
	refcount_t		refcount;
	struct perf_event_mmap_page *user_page;	/* page 0 of the vmalloc area */
	void			*data;		/* data pages, virtually contiguous */
	unsigned long		nr_pages;	/* data pages, power of two */
	unsigned long		mask;		/* data size - 1 */
	unsigned int		flags;		/* RB_* */
	bool			overwrite;	/* ignore data_tail */

	local_t			head;		/* write position (free running) */
	unsigned int		nest;		/* nested writers on this CPU */
	local_t			events;		/* records toward wakeup_events */
	local_t			wakeup;		/* wakeup stamp: bumped to wake */
	local_t			lost;		/* records dropped since last LOST */
	unsigned long		watermark;	/* bytes between wakeups */
	int			paused;		/* PAUSE_OUTPUT: drop and count */
	atomic_t		poll;		/* EPOLL* bits for the next poll */
	atomic64_t		lost_total;	/* every drop ever, for tests */

	spinlock_t		client_lock;	/* protects clients writers */
	struct list_head	clients;	/* struct rb_client, RCU */
	struct irq_work		wakeup_work;	/* wakes clients out of context */

	struct mutex		mmap_mutex;	/* charge/uncharge vs. mmap_count */
	atomic_t		mmap_count;	/* live vmas mapping the buffer */
	unsigned long		mmap_locked;	/* pages charged to mm pinned_vm */
	unsigned long		mmap_user_locked; /* pages charged to user locked_vm */
	struct user_struct	*mmap_user;	/* who was charged */
	struct mm_struct	*mmap_mm;	/* whose pinned_vm was charged */
	void			(*last_unmap)(struct pevt_rb *rb, void *priv);
	void			*last_unmap_priv;

	struct rcu_work		free_work;	/* free after a grace period */

	/* PEVT_IOC_REDIRECT_OUTPUT (output.c, changed under its out_mutex) */
	struct pevt_rb __rcu	*redirect;	/* writers go there instead, or NULL */
	struct pevt_rb		*redirect_from;	/* the buffer redirected here, or NULL */
};

/**
 * struct rb_handle - one record being written.
 * @rb:		the buffer (NULL when the record was dropped)
 * @wakeup:	rb->wakeup at begin: a change at end means wake readers
 * @pos:	next byte to write (free-running offset)
 * @end:	where the record ends (free-running offset)
 * @size:	header.size of the record, trailer included
 */
struct rb_handle {
	struct pevt_rb	*rb;
	unsigned long	wakeup;
	unsigned long	pos;
	unsigned long	end;
	unsigned int	size;
};

static inline unsigned long rb_data_size(const struct pevt_rb *rb)
{
	return rb->nr_pages << PAGE_SHIFT;
}

static inline bool rb_size_at_end(const struct pevt_rb *rb)
{
	return rb->flags & RB_SIZE_AT_END;
}

int rb_init(void);
void rb_exit(void);

struct pevt_rb *rb_alloc(unsigned long nr_pages, unsigned long watermark,
			 unsigned int flags);
void rb_get(struct pevt_rb *rb);
void rb_put(struct pevt_rb *rb);

int rb_mmap_nr_pages(struct vm_area_struct *vma, unsigned long *nr_pages);
int rb_mmap(struct pevt_rb *rb, struct vm_area_struct *vma);
void rb_set_last_unmap(struct pevt_rb *rb,
		       void (*fn)(struct pevt_rb *rb, void *priv), void *priv);

void rb_attach(struct pevt_rb *rb, struct rb_client *client);
void rb_detach(struct pevt_rb *rb, struct rb_client *client);
__poll_t rb_poll(struct pevt_rb *rb);
void rb_wakeup(struct pevt_rb *rb);
void rb_wake_defer_begin(void);
void rb_wake_defer_end(bool no_lock);
void rb_set_paused(struct pevt_rb *rb, bool paused);
void rb_update_user_page(struct pevt_rb *rb, u32 index, u64 offset,
			 u64 enabled, u64 running);

bool rb_output_drop(struct pevt_rb *rb, unsigned int size, unsigned int id_len);
int rb_output_begin(struct rb_handle *h, struct pevt_rb *rb,
		    struct perf_event_header *header,
		    const struct rb_lost_id *lid);
void rb_output_copy(struct rb_handle *h, const void *buf, unsigned int len);
void rb_output_end(struct rb_handle *h);
void rb_count_event(struct rb_handle *h, unsigned int wakeup_events);

#define rb_output_put(h, x) rb_output_copy((h), &(x), sizeof(x))

#endif /* _PEVT_RING_BUFFER_H */
