// SPDX-License-Identifier: GPL-2.0
/*
 * pevt output: perf records built for pevt events, and the event-fd side
 * of the ring buffer.
 *
 * Records have perf's layout (perf_output_sample(), perf_event_comm_output(),
 * perf_event_task_output()); the PEVT_SAMPLE_SIZE_AT_END trailer is added
 * by the buffer (ring_buffer.c), so nothing here knows about it except
 * the SET_OUTPUT rule that every event writing to one buffer agrees on it.
 *
 * Buffer attachment (event->rb, RCU for writers) changes only under
 * out_mutex: mmap of an event without a buffer, SET_OUTPUT, the last
 * unmap, and release.  Writers run on the event's CPU with preemption or
 * interrupts disabled and find the buffer with rcu_dereference().
 */
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/file.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/ptrace.h>
#include <linux/string.h>

#include "internal.h"
#include "ring_buffer.h"
#include "output.h"
#include "sideband.h"
#include "vpmu.h"

static DEFINE_MUTEX(out_mutex);

/* An inherited event writes into its parent's buffer (perf_output_begin()). */
static inline struct pevt_rb *out_rb(struct pevt_event *event)
{
	return rcu_dereference((event->parent ?: event)->rb);
}

/* primary_event_id(): an inherited event's records carry its parent's id. */
static inline u64 out_primary_id(struct pevt_event *event)
{
	return event->parent ? event->parent->id : event->id;
}

static inline struct pevt_rb *out_rb_locked(struct pevt_event *event)
{
	return rcu_dereference_protected(event->rb, lockdep_is_held(&out_mutex));
}

/**
 * pevt_output_check_attr() - refuse what the output path cannot write.
 * @attr: the attr being opened
 *
 * Side-band records (COMM, FORK, EXIT, MMAP, MMAP2) are sideband.c's.
 *
 * Return: 0, or -EOPNOTSUPP for sample_type/read_format bits pevt does not
 * implement (callchains, registers, raw data, ...).
 */
int pevt_output_check_attr(const struct perf_event_attr *attr)
{
	u64 rf = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
		 PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST;

	if (attr->sample_type & ~(u64)PEVT_SAMPLE_SUPPORTED)
		return -EOPNOTSUPP;
	/*
	 * Sampling sources: sys_enter, cpu-clock, task-clock (sample.c),
	 * pevt_vpmu (vpmu_src.c).
	 */
	if ((attr->sample_period || attr->freq) &&
	    attr->type != PERF_TYPE_TRACEPOINT &&
	    attr->type != vpmu_perf_type() &&
	    !(attr->type == PERF_TYPE_SOFTWARE &&
	      (attr->config == PERF_COUNT_SW_CPU_CLOCK ||
	       attr->config == PERF_COUNT_SW_TASK_CLOCK)))
		return -EOPNOTSUPP;
	if (attr->read_format & ~rf)
		return -EINVAL;
	if (attr->write_backward || attr->namespaces || attr->ksymbol ||
	    attr->bpf_event || attr->cgroup || attr->text_poke ||
	    attr->context_switch || attr->aux_output)
		return -EOPNOTSUPP;
	return pevt_sideband_check_attr(attr);
}

/**
 * pevt_output_init_event() - initialise the output fields of a new event.
 * @event: the event being opened (before it is visible to anybody)
 */
void pevt_output_init_event(struct pevt_event *event)
{
	init_waitqueue_head(&event->waitq);
	event->rb_client.waitq = &event->waitq;
	RCU_INIT_POINTER(event->rb, NULL);
}

/* ---- record building ---------------------------------------------- */

struct out_id {
	u64	v[RB_ID_MAX / sizeof(u64)];
	u32	len;
};

/* perf_event_header__init_id() + __perf_event__output_id_sample() */
static void out_build_id(struct pevt_event *event, struct task_struct *task,
			 u64 time, struct out_id *id)
{
	u64 st = event->attr.sample_type;
	int n = 0;

	id->len = 0;
	if (!event->attr.sample_id_all)
		return;
	if (st & PERF_SAMPLE_TID)
		id->v[n++] = (u64)task_tgid_vnr(task) |
			     (u64)task_pid_vnr(task) << 32;
	if (st & PERF_SAMPLE_TIME)
		id->v[n++] = time;
	if (st & PERF_SAMPLE_ID)
		id->v[n++] = out_primary_id(event);
	if (st & PERF_SAMPLE_STREAM_ID)
		id->v[n++] = event->id;
	if (st & PERF_SAMPLE_CPU)
		id->v[n++] = raw_smp_processor_id();
	if (st & PERF_SAMPLE_IDENTIFIER)
		id->v[n++] = out_primary_id(event);
	id->len = n * sizeof(u64);
}

/* Current enabled/running times, without updating the event (perf's
 * calc_timer_values() for a sample). */
static void out_times(struct pevt_event *e, u64 *enabled, u64 *running)
{
	struct pevt_context *ctx = e->ctx;
	u64 now = READ_ONCE(ctx->time), delta = 0;

	if (READ_ONCE(ctx->active_cpu) == raw_smp_processor_id())
		now += local_clock() - READ_ONCE(ctx->timestamp);
	if (now > e->tstamp)
		delta = now - e->tstamp;
	*enabled = e->total_time_enabled;
	*running = e->total_time_running;
	if (e->state >= PEVT_STATE_INACTIVE)
		*enabled += delta;
	if (e->state == PEVT_STATE_ACTIVE)
		*running += delta;
}

static u64 out_count(struct pevt_event *e, struct pevt_event *self)
{
	if (e != self && e->state == PEVT_STATE_ACTIVE && e->src->read)
		e->src->read(e);
	return local64_read(&e->count);
}

static unsigned int out_read_size(struct pevt_event *event)
{
	u64 rf = event->attr.read_format;
	unsigned int entry = sizeof(u64), size = 0;

	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		size += sizeof(u64);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		size += sizeof(u64);
	if (rf & PERF_FORMAT_ID)
		entry += sizeof(u64);
	if (rf & PERF_FORMAT_LOST)
		entry += sizeof(u64);
	if (rf & PERF_FORMAT_GROUP)
		return sizeof(u64) + size +
		       (1 + event->group_leader->nr_siblings) * entry;
	return size + entry;
}

static void out_read_one(struct rb_handle *h, struct pevt_event *e,
			 struct pevt_event *self)
{
	u64 rf = self->attr.read_format;
	u64 v = out_count(e, self);

	rb_output_put(h, v);
	if (rf & PERF_FORMAT_ID)
		rb_output_put(h, e->id);
	if (rf & PERF_FORMAT_LOST) {
		v = atomic64_read(&e->lost);
		rb_output_put(h, v);
	}
}

/* perf_output_read_one() / perf_output_read_group() */
static void out_read(struct rb_handle *h, struct pevt_event *event)
{
	struct pevt_event *leader = event->group_leader, *sub;
	u64 rf = event->attr.read_format;
	u64 enabled, running, nr;

	out_times(event, &enabled, &running);
	if (rf & PERF_FORMAT_GROUP) {
		nr = 1 + leader->nr_siblings;
		rb_output_put(h, nr);
	}
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		rb_output_put(h, enabled);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		rb_output_put(h, running);
	if (!(rf & PERF_FORMAT_GROUP)) {
		out_read_one(h, event, event);
		return;
	}
	out_read_one(h, leader, event);
	pevt_for_each_sibling(sub, leader)
		out_read_one(h, sub, event);
}

/**
 * pevt_output_sample() - write one PERF_RECORD_SAMPLE for @event.
 * @event: an ACTIVE sampling event, on this CPU
 * @regs: registers at the sample (user or kernel), or NULL
 * @period: the period this sample stands for
 *
 * Runs with interrupts or preemption disabled, with @event's context lock
 * held or from its hrtimer; group members are read without locks on this
 * CPU (as perf does from its overflow handler).
 */
void pevt_output_sample(struct pevt_event *event, struct pt_regs *regs,
			u64 period)
{
	u64 st = event->attr.sample_type;
	struct perf_event_header hdr;
	struct rb_lost_id lid;
	struct rb_handle h;
	struct out_id id;
	struct pevt_rb *rb;
	u64 time = local_clock(), v;
	const u64 *cc = NULL;

	hdr.type = PERF_RECORD_SAMPLE;
	hdr.misc = regs && user_mode(regs) ? PERF_RECORD_MISC_USER :
					     PERF_RECORD_MISC_KERNEL;
	hdr.size = sizeof(hdr) + sizeof(u64) *
		   hweight64(st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
				   PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				   PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
				   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
				   PERF_SAMPLE_PERIOD));
	if (st & PERF_SAMPLE_READ)
		hdr.size += out_read_size(event);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		cc = pevt_callchain(event, regs);	/* callchain.c */
		hdr.size += (1 + cc[0]) * sizeof(u64);
	}

	rcu_read_lock();
	rb = out_rb(event);
	if (!rb)
		goto out;
	out_build_id(event, current, time, &id);
	lid.id = out_primary_id(event);
	lid.sample_id = id.v;
	lid.sample_id_len = id.len;
	if (rb_output_begin(&h, rb, &hdr, &lid)) {
		atomic64_inc(&event->lost);
		goto out;
	}
	rb_output_put(&h, hdr);
	if (st & PERF_SAMPLE_IDENTIFIER) {
		v = out_primary_id(event);
		rb_output_put(&h, v);
	}
	if (st & PERF_SAMPLE_IP) {
		v = regs ? instruction_pointer(regs) : 0;
		rb_output_put(&h, v);
	}
	if (st & PERF_SAMPLE_TID) {
		v = (u64)task_tgid_vnr(current) | (u64)task_pid_vnr(current) << 32;
		rb_output_put(&h, v);
	}
	if (st & PERF_SAMPLE_TIME)
		rb_output_put(&h, time);
	if (st & PERF_SAMPLE_ADDR) {
		v = 0;
		rb_output_put(&h, v);
	}
	if (st & PERF_SAMPLE_ID) {
		v = out_primary_id(event);
		rb_output_put(&h, v);
	}
	if (st & PERF_SAMPLE_STREAM_ID)
		rb_output_put(&h, event->id);
	if (st & PERF_SAMPLE_CPU) {
		v = raw_smp_processor_id();
		rb_output_put(&h, v);
	}
	if (st & PERF_SAMPLE_PERIOD)
		rb_output_put(&h, period);
	if (st & PERF_SAMPLE_READ)
		out_read(&h, event);
	if (cc)
		rb_output_copy(&h, cc, (1 + cc[0]) * sizeof(u64));
	if (!event->attr.watermark)
		rb_count_event(&h, event->attr.wakeup_events);
	rb_output_end(&h);
out:
	rcu_read_unlock();
}

/**
 * pevt_output_sb_write() - write a side-band record.
 * @event: the event asking for it
 * @hdr_in: type and misc (the size is computed here)
 * @body: fixed part after the header
 * @body_len: its length
 * @tail: variable part (a name padded to 8 bytes), or NULL
 * @tail_len: its length
 *
 * The sample_id block follows when attr.sample_id_all.
 */
void pevt_output_sb_write(struct pevt_event *event,
			  struct perf_event_header *hdr_in,
			  const void *body, unsigned int body_len,
			  const void *tail, unsigned int tail_len)
{
	struct perf_event_header hdr = *hdr_in;
	struct rb_lost_id lid;
	struct rb_handle h;
	struct out_id id;
	struct pevt_rb *rb;

	rcu_read_lock();
	rb = out_rb(event);
	if (!rb)
		goto out;
	out_build_id(event, current, local_clock(), &id);
	hdr.size = sizeof(hdr) + body_len + tail_len + id.len;
	lid.id = out_primary_id(event);
	lid.sample_id = id.v;
	lid.sample_id_len = id.len;
	if (rb_output_begin(&h, rb, &hdr, &lid)) {
		atomic64_inc(&event->lost);
		goto out;
	}
	rb_output_put(&h, hdr);
	rb_output_copy(&h, body, body_len);
	if (tail_len)
		rb_output_copy(&h, tail, tail_len);
	rb_output_copy(&h, id.v, id.len);
	rb_output_end(&h);
out:
	rcu_read_unlock();
}

/*
 * perf_iterate_sb(): side-band records go to the enabled events of the
 * current task's context and of this CPU's context that asked for them.
 */
static void out_iterate_ctx(struct pevt_context *ctx, pevt_sb_fn fn, void *data)
{
	struct pevt_event *event;
	unsigned long flags;
	int cpu = raw_smp_processor_id();

	raw_spin_lock_irqsave(&ctx->lock, flags);
	list_for_each_entry(event, &ctx->event_list, event_entry) {
		if (event->state < PEVT_STATE_INACTIVE)
			continue;
		if (event->cpu != -1 && event->cpu != cpu)
			continue;
		fn(event, data);
	}
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
}

void pevt_output_sb_iterate(pevt_sb_fn fn, void *data)
{
	struct pevt_cpu_context *cpuctx;
	struct pevt_context *tctx;

	preempt_disable();
	cpuctx = pevt_cpuctx(smp_processor_id());
	tctx = READ_ONCE(cpuctx->task_ctx);
	if (tctx && tctx->task == current)
		out_iterate_ctx(tctx, fn, data);
	out_iterate_ctx(&cpuctx->ctx, fn, data);
	preempt_enable();
}

struct out_comm {
	struct task_struct *task;
	bool exec;
	char comm[TASK_COMM_LEN + sizeof(u64)];
	unsigned int comm_size;
};

static void out_comm_one(struct pevt_event *event, void *data)
{
	struct out_comm *c = data;
	struct perf_event_header hdr = {
		.type = PERF_RECORD_COMM,
		.misc = c->exec ? PERF_RECORD_MISC_COMM_EXEC : 0,
	};
	u32 ids[2];

	if (!event->attr.comm)
		return;
	ids[0] = task_tgid_vnr(c->task);
	ids[1] = task_pid_vnr(c->task);
	pevt_output_sb_write(event, &hdr, ids, sizeof(ids), c->comm, c->comm_size);
}

/**
 * pevt_output_comm() - PERF_RECORD_COMM for events with attr.comm.
 * @task: the task being renamed (current, for prctl(PR_SET_NAME))
 * @comm: its new name
 * @exec: the name an execve() gives (PERF_RECORD_MISC_COMM_EXEC)
 */
void pevt_output_comm(struct task_struct *task, const char *comm, bool exec)
{
	struct out_comm c = { .task = task, .exec = exec };
	size_t len = strnlen(comm, TASK_COMM_LEN - 1);

	memcpy(c.comm, comm, len);
	memset(c.comm + len, 0, sizeof(c.comm) - len);
	c.comm_size = ALIGN(len + 1, sizeof(u64));
	pevt_output_sb_iterate(out_comm_one, &c);
}

struct out_task {
	struct task_struct *task;
	bool fork;
};

static void out_task_one(struct pevt_event *event, void *data)
{
	struct out_task *t = data;
	struct perf_event_header hdr = {
		.type = t->fork ? PERF_RECORD_FORK : PERF_RECORD_EXIT,
		.misc = 0,
	};
	struct {
		u32 pid, ppid, tid, ptid;
		u64 time;
	} body;
	struct task_struct *parent;

	/* perf_event_task_match() */
	if (!event->attr.comm && !event->attr.task && !event->attr.mmap &&
	    !event->attr.mmap2 && !event->attr.mmap_data)
		return;
	body.pid = task_tgid_vnr(t->task);
	body.tid = task_pid_vnr(t->task);
	if (t->fork) {
		body.ppid = task_tgid_vnr(current);
		body.ptid = task_pid_vnr(current);
	} else {
		rcu_read_lock();
		parent = rcu_dereference(t->task->real_parent);
		body.ppid = task_tgid_vnr(parent);
		body.ptid = task_tgid_vnr(parent);
		rcu_read_unlock();
	}
	body.time = local_clock();
	pevt_output_sb_write(event, &hdr, &body, sizeof(body), NULL, 0);
}

/**
 * pevt_output_task() - PERF_RECORD_FORK/EXIT for events with attr.task.
 * @task: the new child (fork, from the parent) or the exiting task (current)
 * @fork: true for FORK, false for EXIT
 */
void pevt_output_task(struct task_struct *task, bool fork)
{
	struct out_task t = { .task = task, .fork = fork };

	pevt_output_sb_iterate(out_task_one, &t);
}

/* ---- the event fd side -------------------------------------------- */

/* Point @event at @rb (or nothing); out_mutex held. */
static void out_set_rb(struct pevt_event *event, struct pevt_rb *rb)
{
	struct pevt_rb *old = out_rb_locked(event);

	if (old == rb)
		return;
	if (old)
		rb_detach(old, &event->rb_client);
	if (rb) {
		rb_get(rb);
		rb_attach(rb, &event->rb_client);
	}
	rcu_assign_pointer(event->rb, rb);
	if (old)
		rb_put(old);	/* freed after a grace period: writers may hold it */
}

/* The last mapping of @rb went away: like perf, detach it from every event
 * (their next mmap allocates afresh), which drops the buffer. */
static void out_last_unmap(struct pevt_rb *rb, void *priv)
{
	struct rb_client *c, *tmp;

	mutex_lock(&out_mutex);
	list_for_each_entry_safe(c, tmp, &rb->clients, node)
		out_set_rb(container_of(c, struct pevt_event, rb_client), NULL);
	mutex_unlock(&out_mutex);
}

/**
 * pevt_output_mmap() - f_op->mmap of an event fd.
 * @event: the event
 * @vma: 1 + 2^n pages at offset 0, shared
 *
 * Maps the event's buffer (its own or the one SET_OUTPUT chose); allocates
 * it on first mmap: writable vma = back-pressure, read-only = overwrite.
 *
 * Return: 0 or -errno (-EINVAL for a bad size or one not matching the
 * existing buffer, -EPERM over the locked-memory limit).
 */
int pevt_output_mmap(struct pevt_event *event, struct vm_area_struct *vma)
{
	unsigned long nr_pages, flags = 0;
	struct pevt_rb *rb;
	int ret;

	ret = rb_mmap_nr_pages(vma, &nr_pages);
	if (ret)
		return ret;

	mutex_lock(&out_mutex);
	rb = out_rb_locked(event);
	if (rb) {
		rb_get(rb);
	} else {
		if (vma->vm_flags & VM_WRITE)
			flags |= RB_WRITABLE;
		if (event->attr.sample_type & PEVT_SAMPLE_SIZE_AT_END)
			flags |= RB_SIZE_AT_END;
		rb = rb_alloc(nr_pages, event->attr.watermark ?
			      event->attr.wakeup_watermark : 0, flags);
		if (IS_ERR(rb)) {
			mutex_unlock(&out_mutex);
			return PTR_ERR(rb);
		}
		rb_set_last_unmap(rb, out_last_unmap, NULL);
		out_set_rb(event, rb);	/* the event's reference */
	}
	mutex_unlock(&out_mutex);

	/* Not under out_mutex: the last unmap takes mmap_mutex, then it. */
	ret = rb_mmap(rb, vma);
	if (ret && !atomic_read(&rb->mmap_count)) {
		mutex_lock(&out_mutex);
		if (out_rb_locked(event) == rb && !atomic_read(&rb->mmap_count))
			out_set_rb(event, NULL);
		mutex_unlock(&out_mutex);
	}
	rb_put(rb);
	return ret;
}

/**
 * pevt_output_poll() - f_op->poll of an event fd (perf_poll()).
 * @event: the event
 * @file: its file
 * @wait: the poll table
 *
 * Return: EPOLLIN|EPOLLRDNORM after a wakeup (wakeup_events or watermark),
 * EPOLLHUP when the event has no buffer or its task has exited (perf's
 * is_event_hup()).
 */
__poll_t pevt_output_poll(struct pevt_event *event, struct file *file,
			  poll_table *wait)
{
	struct pevt_rb *rb;
	__poll_t events = EPOLLHUP;

	poll_wait(file, &event->waitq, wait);
	rcu_read_lock();
	rb = out_rb(event);
	if (rb) {
		events = rb_poll(rb);
		/* Pairs with the wakeup after ctx->dead in the exit probe. */
		if (READ_ONCE(event->ctx->dead))
			events |= EPOLLHUP;
	}
	rcu_read_unlock();
	return events;
}

/**
 * pevt_output_hup() - the event's task exited: wake its pollers.
 * @event: the event, its context already marked dead
 *
 * Any context (the exit probe calls it under ctx->lock): the wakeup goes
 * through the buffer's irq_work.
 */
void pevt_output_hup(struct pevt_event *event)
{
	struct pevt_rb *rb;

	rcu_read_lock();
	rb = out_rb(event);
	if (rb)
		rb_wakeup(rb);
	rcu_read_unlock();
}

static long out_set_output(struct pevt_event *event, int fd)
{
	struct pevt_event *output = NULL;
	struct pevt_rb *rb = NULL, *cur;
	struct file *file = NULL;
	long ret = -EINVAL;

	if (fd != -1) {
		file = fget(fd);
		if (!file)
			return -EBADF;
		output = pevt_event_from_file(file);
		if (!output)
			goto out_put;
	}

	mutex_lock(&out_mutex);
	if (output) {
		/* perf_event_set_output(): same CPU, same task, same format. */
		if (output == event)
			goto unlock;
		if (output->cpu != event->cpu)
			goto unlock;
		if (output->cpu == -1 && output->ctx != event->ctx)
			goto unlock;
		if ((output->attr.sample_type ^ event->attr.sample_type) &
		    PEVT_SAMPLE_SIZE_AT_END)
			goto unlock;
		rb = out_rb_locked(output);
		if (!rb)
			goto unlock;
	}
	cur = out_rb_locked(event);
	ret = -EBUSY;
	if (cur && cur != rb && atomic_read(&cur->mmap_count) &&
	    list_is_singular(&cur->clients))
		goto unlock;
	out_set_rb(event, rb);
	ret = 0;
unlock:
	mutex_unlock(&out_mutex);
out_put:
	if (file)
		fput(file);
	return ret;
}

/**
 * pevt_output_ioctl() - the output ioctls of an event fd.
 * @event: the event
 * @cmd: PERF_EVENT_IOC_SET_OUTPUT or PERF_EVENT_IOC_PAUSE_OUTPUT
 * @arg: fd of the output event (-1: none), or pause (non-zero) / resume
 *
 * Return: 0, -errno, or -ENOIOCTLCMD for other commands.
 */
long pevt_output_ioctl(struct pevt_event *event, unsigned int cmd,
		       unsigned long arg)
{
	struct pevt_rb *rb;
	long ret = 0;

	switch (cmd) {
	case PERF_EVENT_IOC_SET_OUTPUT:
		return out_set_output(event, (int)arg);
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
		rcu_read_lock();
		rb = out_rb(event);
		if (rb)
			rb_set_paused(rb, !!arg);
		else
			ret = -EINVAL;
		rcu_read_unlock();
		return ret;
	}
	return -ENOIOCTLCMD;
}

/**
 * pevt_output_release() - drop @event's buffer (event fd released).
 * @event: the event, no longer reachable by writers after a grace period
 */
void pevt_output_release(struct pevt_event *event)
{
	bool ever_attached;

	mutex_lock(&out_mutex);
	out_set_rb(event, NULL);
	/* list_del_rcu() leaves ->next set: attached at some point. */
	ever_attached = READ_ONCE(event->rb_client.node.next);
	mutex_unlock(&out_mutex);
	/*
	 * A buffer's wakeup irq_work may still be walking our rb_client
	 * (detached now or at the buffer's last unmap): wait before the
	 * event is freed.
	 */
	if (ever_attached)
		synchronize_rcu();
}
