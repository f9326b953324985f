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
#include "perm.h"
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

/*
 * Where @event's records go: its buffer, or the buffer that one is
 * redirected to (PEVT_IOC_REDIRECT_OUTPUT, one hop: targets are never
 * redirected themselves).  The redirect pointer is read in the same RCU
 * section as the rest of the write, which out_redirect() relies on.
 */
static inline struct pevt_rb *out_rb_write(struct pevt_event *event)
{
	struct pevt_rb *rb = out_rb(event), *to;

	if (!rb)
		return NULL;
	to = rcu_dereference(rb->redirect);
	return to ?: rb;
}

static inline struct pevt_rb *out_redirect_locked(struct pevt_rb *rb)
{
	return rcu_dereference_protected(rb->redirect, lockdep_is_held(&out_mutex));
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
	int ret;

	if (attr->sample_type & ~(u64)PEVT_SAMPLE_SUPPORTED)
		return -EOPNOTSUPP;
	ret = pevt_regs_user_check_attr(attr);	/* regs_user.c */
	if (ret)
		return ret;
	/*
	 * Sampling sources: sys_enter, cpu-clock, task-clock (sample.c),
	 * pevt_vpmu (vpmu_src.c).
	 */
	if ((attr->sample_period || attr->freq) &&
	    attr->type != PERF_TYPE_TRACEPOINT &&
	    attr->type != vpmu_perf_type() && !pevt_attr_is_clock(attr))
		return -EOPNOTSUPP;
	if (attr->read_format & ~rf)
		return -EINVAL;
	if (attr->freq || attr->sample_period) {
		/* perf_event_open(): the limit as it is now, read from procfs. */
		int rate = perm_max_sample_rate();

		pevt_throttle_set_rate(rate);
		if (attr->freq ? attr->sample_freq > rate :
				 attr->sample_period & BIT_ULL(63))
			return -EINVAL;
	}
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
	INIT_LIST_HEAD(&event->throttle_entry);
	event->rb_client.waitq = &event->waitq;
	RCU_INIT_POINTER(event->rb, NULL);
}

/* ---- record building ---------------------------------------------- */

struct out_id {
	u64	v[RB_ID_MAX / sizeof(u64)];
	u32	len;
};

/* Bytes of the sample_id block out_build_id() writes for @event. */
static unsigned int out_id_len(const struct pevt_event *event)
{
	if (!event->attr.sample_id_all)
		return 0;
	return sizeof(u64) * hweight64(event->attr.sample_type &
				       (PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
					PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER));
}

/*
 * perf_event_pid()/perf_event_tid(): pids as seen from the opener's pid
 * namespace (0 for a task outside it), not from whoever runs the output.
 */
static u32 out_pid(struct pevt_event *event, struct task_struct *task)
{
	return task_tgid_nr_ns(task, event->ns);
}

static u32 out_tid(struct pevt_event *event, struct task_struct *task)
{
	return task_pid_nr_ns(task, event->ns);
}

/* perf_event_header__init_id() + __perf_event__output_id_sample() */
static void out_build_id_cpu(struct pevt_event *event, struct task_struct *task,
			     u64 time, int cpu, struct out_id *id)
{
	u64 st = event->attr.sample_type;
	int n = 0;

	id->len = 0;
	if (!event->attr.sample_id_all)
		return;
	if (st & PERF_SAMPLE_TID)
		id->v[n++] = (u64)out_pid(event, task) |
			     (u64)out_tid(event, task) << 32;
	if (st & PERF_SAMPLE_TIME)
		id->v[n++] = time;
	if (st & PERF_SAMPLE_ID)
		id->v[n++] = out_primary_id(event);
	if (st & PERF_SAMPLE_STREAM_ID)
		id->v[n++] = event->id;
	if (st & PERF_SAMPLE_CPU)
		id->v[n++] = cpu;
	if (st & PERF_SAMPLE_IDENTIFIER)
		id->v[n++] = out_primary_id(event);
	id->len = n * sizeof(u64);
}

static void out_build_id(struct pevt_event *event, struct task_struct *task,
			 u64 time, struct out_id *id)
{
	out_build_id_cpu(event, task, time, raw_smp_processor_id(), id);
}

/* Current enabled/running times, without updating the event (perf's
 * calc_timer_values() for a sample). */
static void out_times(struct pevt_event *e, u64 *enabled, u64 *running)
{
	u64 now = pevt_ctx_time_now(e->ctx), delta = 0;

	if (now > e->tstamp)
		delta = now - e->tstamp;
	*enabled = e->total_time_enabled;
	*running = e->total_time_running;
	if (e->state >= PEVT_STATE_INACTIVE)
		*enabled += delta;
	if (e->state == PEVT_STATE_ACTIVE)
		*running += delta;
}

/**
 * pevt_output_update_userpage() - count and times onto the control page.
 * @event: the event, its ctx->lock held
 *
 * perf_event_update_userpage(), at the same moments (schedule in, reset,
 * mmap): index 0 (no user-readable counter), offset = the count, and
 * time_enabled/time_running as of now, so a reader of the page computes
 * the count like perf's mmap read path.  No cap_user_time: the x86 clock
 * parameters perf publishes are not available to modules.
 */
void pevt_output_update_userpage(struct pevt_event *event)
{
	struct pevt_rb *rb;
	u64 enabled, running;

	rcu_read_lock();
	rb = out_rb(event);
	if (rb) {
		out_times(event, &enabled, &running);
		rb_update_user_page(rb, 0, local64_read(&event->count),
				    enabled, running);
	}
	rcu_read_unlock();
}

/**
 * pevt_read_size() - bytes of perf's read_format layout.
 * @read_format: attr.read_format
 * @nr_siblings: siblings of the group (used with PERF_FORMAT_GROUP)
 *
 * Return: what read() returns and PERF_SAMPLE_READ writes.
 */
size_t pevt_read_size(u64 read_format, int nr_siblings)
{
	size_t entry = sizeof(u64), size = 0;

	if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
		size += sizeof(u64);
	if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
		size += sizeof(u64);
	if (read_format & PERF_FORMAT_ID)
		entry += sizeof(u64);
	if (read_format & PERF_FORMAT_LOST)
		entry += sizeof(u64);
	if (read_format & PERF_FORMAT_GROUP)
		return sizeof(u64) + size + (1 + nr_siblings) * entry;
	return size + entry;
}

static void read_entry(struct pevt_event *e, u64 rf,
		       void (*put)(void *arg, u64 v), void *arg)
{
	put(arg, local64_read(&e->count));
	if (rf & PERF_FORMAT_ID)
		put(arg, out_primary_id(e));
	if (rf & PERF_FORMAT_LOST)
		put(arg, atomic64_read(&e->lost));
}

/**
 * pevt_read_layout() - perf's read_format layout, for read() and samples.
 * @event: the event read or sampled; its read_format decides
 * @enabled: TOTAL_TIME_ENABLED value
 * @running: TOTAL_TIME_RUNNING value
 * @put: called with each u64, in order
 * @arg: its argument
 *
 * perf_read_one()/perf_output_read_one(): value, [enabled], [running],
 * [id], [lost]; perf_read_group()/perf_output_read_group(): nr,
 * [enabled], [running], then { value, [id], [lost] } for the leader and
 * each sibling.  Counts are taken as they are: the caller brings those of
 * active members up to date first.  The only writer of this layout.
 */
void pevt_read_layout(struct pevt_event *event, u64 enabled, u64 running,
		      void (*put)(void *arg, u64 v), void *arg)
{
	struct pevt_event *leader = event->group_leader, *sub;
	u64 rf = event->attr.read_format;

	if (rf & PERF_FORMAT_GROUP)
		put(arg, 1 + leader->nr_siblings);
	else
		put(arg, local64_read(&event->count));
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		put(arg, enabled);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		put(arg, running);
	if (!(rf & PERF_FORMAT_GROUP)) {
		if (rf & PERF_FORMAT_ID)
			put(arg, out_primary_id(event));
		if (rf & PERF_FORMAT_LOST)
			put(arg, atomic64_read(&event->lost));
		return;
	}
	read_entry(leader, rf, put, arg);
	pevt_for_each_sibling(sub, leader)
		read_entry(sub, rf, put, arg);
}

static void out_put(void *arg, u64 v)
{
	rb_output_put((struct rb_handle *)arg, v);
}

/* Bring an active group member other than the sampled one up to date. */
static void out_fold(struct pevt_event *e, struct pevt_event *self)
{
	if (e != self && e->state == PEVT_STATE_ACTIVE)
		e->src->read(e);
}

/* perf_output_read(): the other members' counts as of now, then the layout. */
static void out_read(struct rb_handle *h, struct pevt_event *event)
{
	struct pevt_event *leader = event->group_leader, *sub;
	u64 enabled, running;

	out_times(event, &enabled, &running);
	if (event->attr.read_format & PERF_FORMAT_GROUP) {
		out_fold(leader, event);
		pevt_for_each_sibling(sub, leader)
			out_fold(sub, event);
	}
	pevt_read_layout(event, enabled, running, out_put, h);
}

/**
 * pevt_sample_excluded() - does @event's attr exclude a sample at @regs?
 * @event: a sampling event
 * @regs: the interrupted registers, or NULL
 *
 * perf_swevent_hrtimer() with perf_exclude_event(): no registers, user
 * mode with exclude_user, kernel mode with exclude_kernel (a sampled
 * kernel IP would give its address away), the idle task with
 * exclude_idle.  exclude_hv excludes nothing here: no hypervisor code
 * runs in the guest's own address space.
 *
 * Return: true if no sample may be taken.
 */
bool pevt_sample_excluded(const struct pevt_event *event, struct pt_regs *regs)
{
	const struct perf_event_attr *attr = &event->attr;

	if (!regs)
		return true;
	if (user_mode(regs) ? attr->exclude_user : attr->exclude_kernel)
		return true;
	return attr->exclude_idle && is_idle_task(current);
}

/**
 * pevt_output_sample_raw() - write one PERF_RECORD_SAMPLE for @event.
 * @event: an ACTIVE sampling event, on this CPU
 * @regs: registers at the sample (user or kernel), or NULL
 * @period: the period this sample stands for
 * @raw: PERF_SAMPLE_RAW's data (a tracepoint's record), or NULL
 * @raw_len: its length in bytes
 *
 * Runs with interrupts or preemption disabled, with @event's context lock
 * held or from its hrtimer; group members are read without locks on this
 * CPU (as perf does from its overflow handler).  The caller decided that
 * the sample is not excluded (pevt_sample_excluded()) nor throttled.  A
 * sample the buffer cannot take is dropped before it is built.
 */
void pevt_output_sample_raw(struct pevt_event *event, struct pt_regs *regs,
			    u64 period, const void *raw, u32 raw_len)
{
	u64 st = event->attr.sample_type;
	struct perf_event_header hdr;
	struct rb_lost_id lid;
	struct rb_handle h;
	struct out_id id;
	struct pevt_rb *rb;
	u64 time, v, abi = 0;
	const u64 *cc = NULL;
	struct pt_regs *uregs = NULL;
	u16 ustack = 0;
	u32 raw_size = 0;

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
		hdr.size += pevt_read_size(event->attr.read_format,
					   event->group_leader->nr_siblings);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		cc = pevt_callchain(event, regs);	/* callchain.c */
		hdr.size += (1 + cc[0]) * sizeof(u64);
	}
	if (st & PERF_SAMPLE_RAW) {
		/*
		 * perf_prepare_sample(): u32 size, the data, zeros up to a
		 * u64 boundary, size counting data and zeros; an event
		 * without raw data writes size 4 and one u32 of zeros.
		 */
		raw_size = round_up(raw_len + sizeof(u32), sizeof(u64)) -
			   sizeof(u32);
		hdr.size += sizeof(u32) + raw_size;
	}
	if (st & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER))
		uregs = pevt_regs_user(regs, &abi);
	if (st & PERF_SAMPLE_REGS_USER)
		hdr.size += pevt_regs_user_size(&event->attr, uregs);

	rcu_read_lock();
	rb = out_rb_write(event);
	if (!rb)
		goto out;
	if (st & PERF_SAMPLE_STACK_USER) {
		/* Last: it takes what is left of the 64 KiB (perf). */
		ustack = pevt_ustack_size(event->attr.sample_stack_user,
					  hdr.size + (rb_size_at_end(rb) ?
						      sizeof(u64) : 0),
					  uregs);
		hdr.size += pevt_ustack_field_size(ustack);
	}
	if (rb_output_drop(rb, hdr.size, out_id_len(event)))
		goto lost;
	time = local_clock();
	out_build_id(event, current, time, &id);
	lid.id = out_primary_id(event);
	lid.sample_id = id.v;
	lid.sample_id_len = id.len;
	if (rb_output_begin(&h, rb, &hdr, &lid))
		goto lost;
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
		v = (u64)out_pid(event, current) |
		    (u64)out_tid(event, current) << 32;
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
	if (st & PERF_SAMPLE_RAW) {
		static const u64 zero;

		rb_output_put(&h, raw_size);
		if (raw_len)
			rb_output_copy(&h, raw, raw_len);
		rb_output_copy(&h, &zero, raw_size - raw_len);
	}
	if (st & PERF_SAMPLE_REGS_USER)
		pevt_output_regs_user(&h, &event->attr, uregs, abi);
	if (st & PERF_SAMPLE_STACK_USER)
		pevt_output_ustack(&h, ustack, uregs);
	if (!event->attr.watermark)
		rb_count_event(&h, event->attr.wakeup_events);
	rb_output_end(&h);
out:
	rcu_read_unlock();
	return;
lost:
	atomic64_inc(&event->lost);
	rcu_read_unlock();
}

/* pevt_output_sb_write() as @task on @cpu: their ids in sample_id. */
static void out_sb_write_as(struct pevt_event *event, struct task_struct *task,
			    int cpu, struct perf_event_header *hdr_in,
			    const void *body, unsigned int body_len,
			    const void *tail, unsigned int tail_len)
{
	struct perf_event_header hdr = *hdr_in;
	struct rb_lost_id lid;
	struct rb_handle h;
	struct out_id id;
	struct pevt_rb *rb;

	rcu_read_lock();
	rb = out_rb_write(event);
	if (!rb)
		goto out;
	out_build_id_cpu(event, task, local_clock(), cpu, &id);
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
	out_sb_write_as(event, current, raw_smp_processor_id(), hdr_in,
			body, body_len, tail, tail_len);
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
	ids[0] = out_pid(event, c->task);
	ids[1] = out_tid(event, c->task);
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
	body.pid = out_pid(event, t->task);
	body.tid = out_tid(event, t->task);
	if (t->fork) {
		body.ppid = out_pid(event, current);
		body.ptid = out_tid(event, current);
	} else {
		/* perf_event_task_output(): EXIT's ptid is the parent's pid too. */
		rcu_read_lock();
		parent = rcu_dereference(t->task->real_parent);
		body.ppid = out_pid(event, parent);
		body.ptid = out_pid(event, parent);
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

struct out_read {
	struct pevt_event	*event;
	struct task_struct	*task;
	int			cpu;		/* where the task runs */
	u64			v[1 + 6];	/* pid/tid, values of one event */
	unsigned int		n;
};

static void out_read_put(void *arg, u64 v)
{
	struct out_read *r = arg;

	if (r->n < ARRAY_SIZE(r->v))
		r->v[r->n] = v;
	r->n++;
}

static void out_read_ipi(void *arg)
{
	struct out_read *r = arg;
	struct perf_event_header hdr = {
		.type = PERF_RECORD_READ,
		.misc = 0,
	};

	out_sb_write_as(r->event, r->task, r->cpu, &hdr, r->v,
			r->n * sizeof(u64), NULL, 0);
}

/**
 * pevt_output_read_event() - PERF_RECORD_READ of an inherited event being
 * detached with inherit_stat (perf_event_read_event() from
 * sync_child_event()).
 * @event: the child event, out of its context (count and times final)
 * @task: its task (current)
 *
 * Process context.  { pid, tid, read_format values of @event } with
 * the parent's id (primary_event_id()), sample_id as @task on this CPU.
 * The record goes into the parent's buffer; a per-CPU event's buffer is
 * written from its own CPU (an IPI), as every writer of it is.  With
 * PERF_FORMAT_GROUP the event has left its group already (perf: DETACH_GROUP
 * before DETACH_CHILD in __perf_remove_from_context()), so the values are
 * a group of one: nr 1, its times, its count and id (as 6.1 and 6.12).
 */
void pevt_output_read_event(struct pevt_event *event, struct task_struct *task)
{
	struct out_read r = { .event = event, .task = task };
	int cpu;

	r.v[0] = (u64)out_pid(event, task) | (u64)out_tid(event, task) << 32;
	r.n = 1;
	pevt_read_layout(event, event->total_time_enabled,
			 event->total_time_running, out_read_put, &r);
	if (WARN_ON_ONCE(r.n > ARRAY_SIZE(r.v)))
		return;
	cpu = get_cpu();
	r.cpu = cpu;
	if (event->cpu < 0 || event->cpu == cpu)
		out_read_ipi(&r);
	else
		smp_call_function_single(event->cpu, out_read_ipi, &r, 1);
	put_cpu();
}

/**
 * pevt_output_throttle() - PERF_RECORD_THROTTLE or UNTHROTTLE (perf_log_throttle()).
 * @event: the sampling event throttled or unthrottled
 * @unthrottle: false for THROTTLE, true for UNTHROTTLE
 *
 * On @event's CPU with interrupts disabled.
 */
void pevt_output_throttle(struct pevt_event *event, bool unthrottle)
{
	struct perf_event_header hdr = {
		.type = unthrottle ? PERF_RECORD_UNTHROTTLE : PERF_RECORD_THROTTLE,
		.misc = 0,
	};
	struct {
		u64 time, id, stream_id;
	} body = {
		.time = local_clock(),
		.id = out_primary_id(event),	/* perf_log_throttle() */
		.stream_id = event->id,
	};

	pevt_output_sb_write(event, &hdr, &body, sizeof(body), NULL, 0);
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

/*
 * End @rb's redirection, if any; out_mutex held.  Returns the old target
 * with the redirection's reference, for the caller to put (after waiting
 * for the writers still in it, if it has to), or NULL.
 */
static struct pevt_rb *out_unlink_redirect(struct pevt_rb *rb)
{
	struct pevt_rb *to = out_redirect_locked(rb);

	if (to) {
		rcu_assign_pointer(rb->redirect, NULL);
		to->redirect_from = NULL;
	}
	return to;
}

/* The last mapping of @rb went away: like perf, detach it from every event
 * (their next mmap allocates afresh), which drops the buffer. */
static void out_last_unmap(struct pevt_rb *rb, void *priv)
{
	struct rb_client *c, *tmp;
	struct pevt_rb *old;

	mutex_lock(&out_mutex);
	/*
	 * Nobody can read it any more: no records into it, none from it.
	 * rb_put() frees after a grace period: writers may hold either.
	 */
	if (rb->redirect_from)
		rb_put(out_unlink_redirect(rb->redirect_from));
	old = out_unlink_redirect(rb);
	if (old)
		rb_put(old);
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
	unsigned long nr_pages, flags = 0, irqflags;
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
	if (!ret) {
		/*
		 * perf_mmap() publishes the counter too, without a cross
		 * call: the count as last folded, times as of now.  ctx->lock
		 * keeps the page's seqlock to one writer.
		 */
		raw_spin_lock_irqsave(&event->ctx->lock, irqflags);
		pevt_output_update_userpage(event);
		raw_spin_unlock_irqrestore(&event->ctx->lock, irqflags);
	}
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
 * EPOLLHUP when the event has no buffer, its task has exited or it was
 * removed at an exec (remove_on_exec; perf's is_event_hup()).
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
		/*
		 * Pairs with the wakeup after ctx->dead in the exit probe,
		 * and after remove_on_exec's removal (inherit.c).
		 */
		if (READ_ONCE(event->ctx->dead) ||
		    READ_ONCE(event->state) == PEVT_STATE_EXIT)
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

/*
 * The pevt event of @fd, its file held in *@file (NULL for fd -1).
 * Return: 0, -EBADF (not open) or -EINVAL (not a pevt event).
 */
static int out_fget(int fd, struct file **file, struct pevt_event **event)
{
	*file = NULL;
	*event = NULL;
	if (fd == -1)
		return 0;
	*file = fget(fd);
	if (!*file)
		return -EBADF;
	*event = pevt_event_from_file(*file);
	if (*event)
		return 0;
	fput(*file);
	*file = NULL;
	return -EINVAL;
}

/*
 * perf_event_set_output(): the writers of one buffer stay on one CPU
 * (per-task events: in one task), which the buffer's local_t protocol needs.
 */
static bool out_same_writers(struct pevt_event *a, struct pevt_event *b)
{
	return a->cpu == b->cpu && (a->cpu != -1 || a->ctx == b->ctx);
}

static long out_set_output(struct pevt_event *event, int fd)
{
	struct pevt_event *output;
	struct pevt_rb *rb = NULL, *cur;
	struct file *file;
	long ret;

	ret = out_fget(fd, &file, &output);
	if (ret)
		return ret;
	ret = -EINVAL;
	mutex_lock(&out_mutex);
	if (output) {
		/* perf_event_set_output(): same CPU, same task, same format. */
		if (output == event || !out_same_writers(output, event))
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
	if (file)
		fput(file);
	return ret;
}

/*
 * PEVT_IOC_REDIRECT_OUTPUT: the records of @event's buffer go to @fd's
 * buffer (-1: to @event's buffer again), then wait until no writer is
 * still in the buffer they left, so that its data_head is final when the
 * ioctl returns.  The switch is one pointer store in the buffer, seen by
 * every event writing into it at once: each record goes whole into one
 * buffer or the other, none is dropped.
 */
static long out_redirect(struct pevt_event *event, int fd)
{
	struct pevt_rb *rb, *to = NULL, *left = NULL;
	struct pevt_event *output;
	struct file *file;
	long ret;

	/* Per-task inherited events write from every CPU (as SET_OUTPUT). */
	if (event->cpu == -1 && event->attr.inherit)
		return -EINVAL;
	ret = out_fget(fd, &file, &output);
	if (ret)
		return ret;
	ret = -EINVAL;
	mutex_lock(&out_mutex);
	rb = out_rb_locked(event);
	if (!rb || !atomic_read(&rb->mmap_count))
		goto unlock;
	if (output) {
		/* SET_OUTPUT's rules: the writers stay on one CPU, one format. */
		if (!out_same_writers(output, event))
			goto unlock;
		to = out_rb_locked(output);
		if (!to || to == rb || !atomic_read(&to->mmap_count))
			goto unlock;
		if ((rb->flags ^ to->flags) & RB_SIZE_AT_END)
			goto unlock;
		/* One hop only: a chain would need every writer to walk it. */
		ret = -ELOOP;
		if (rb->redirect_from || out_redirect_locked(to))
			goto unlock;
		ret = 0;
		if (out_redirect_locked(rb) == to)
			goto unlock;
		ret = -EBUSY;
		if (to->redirect_from)
			goto unlock;
	}
	/*
	 * The buffer the writers leave: the old target (its reference comes
	 * with it), else the source when a redirection starts.  Kept alive
	 * across the wait, the lock dropped.
	 */
	left = out_unlink_redirect(rb);
	if (to) {
		rb_get(to);
		to->redirect_from = rb;
		rcu_assign_pointer(rb->redirect, to);
		if (!left) {
			left = rb;
			rb_get(left);
		}
	}
	ret = 0;
unlock:
	mutex_unlock(&out_mutex);
	if (left) {
		/*
		 * Writers look the target up and publish data_head inside
		 * one RCU read-side section (out_rb_write(), rb_output_end()):
		 * after a grace period none is left in the buffer they left.
		 */
		synchronize_rcu_expedited();
		rb_put(left);
	}
	if (file)
		fput(file);
	return ret;
}

/**
 * pevt_output_ioctl() - the output ioctls of an event fd.
 * @event: the event
 * @cmd: PERF_EVENT_IOC_SET_OUTPUT, PEVT_IOC_REDIRECT_OUTPUT or
 *	PERF_EVENT_IOC_PAUSE_OUTPUT
 * @arg: fd of the output event (-1: none), or pause (non-zero) / resume
 *
 * Return: 0, -errno, or -ENOIOCTLCMD for other commands.
 */
long pevt_output_ioctl(struct pevt_event *event, unsigned int cmd,
		       unsigned long arg)
{
	struct pevt_rb *rb;

	switch (cmd) {
	case PERF_EVENT_IOC_SET_OUTPUT:
		return out_set_output(event, (int)arg);
	case PEVT_IOC_REDIRECT_OUTPUT:
		return out_redirect(event, (int)arg);
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
		/* rb_set_paused() sleeps: a reference instead of RCU. */
		mutex_lock(&out_mutex);
		rb = out_rb_locked(event);
		if (rb)
			rb_get(rb);
		mutex_unlock(&out_mutex);
		if (!rb)
			return -EINVAL;
		rb_set_paused(rb, !!arg);
		rb_put(rb);
		return 0;
	}
	return -ENOIOCTLCMD;
}

/**
 * pevt_output_release() - drop @event's buffer (event fd released).
 * @event: the event, freed only after a grace period: writers and wakeups
 *	that found it under RCU may still use it
 */
void pevt_output_release(struct pevt_event *event)
{
	mutex_lock(&out_mutex);
	out_set_rb(event, NULL);
	mutex_unlock(&out_mutex);
	/*
	 * A buffer's wakeup irq_work may still be walking our rb_client
	 * (detached now or at the buffer's last unmap): the event is freed
	 * after a grace period (kfree_rcu() in core.c), not waited for here.
	 */
}
