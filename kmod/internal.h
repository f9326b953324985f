/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pevt core: events, groups, contexts and the source (PMU-like) interface.
 *
 * Model (follows perf's kernel/events/core.c):
 *
 *  - A pevt_event is one counter opened through PEVT_IOC_OPEN.  It belongs
 *    to exactly one pevt_context, and to one group: either it is a group
 *    leader (on ctx->pinned_groups or ctx->flexible_groups) or a sibling
 *    (on leader->sibling_list).
 *  - A pevt_context is either the per-CPU context of one CPU (events opened
 *    with pid == -1) or the context of one task (pid >= 0).  Task contexts
 *    are found through a hash keyed by task_struct pointer and are
 *    scheduled in/out on that task's context switches (sched_switch
 *    hook, sideband.c).
 *  - "Active" context: one whose time is running on a CPU (ctx->active_cpu).
 *    A CPU context is always active on its CPU; a task context is active
 *    on the CPU the task runs on, and inactive while it sleeps.  Events can
 *    be ACTIVE only inside an active context, on that CPU.
 *  - A source (struct pevt_source_ops) counts for an event: software
 *    clocks (sw.c), vPMU slots (vpmu.c), ...  add/del/start/stop/read are
 *    called on the context's CPU with ctx->lock held and irqs off.
 *
 * Time (exactly as perf keeps it):
 *  ctx->time advances (by local_clock() deltas) only while the context is
 *  active.  event->tstamp is the ctx->time of the event's last update.
 *  pevt_event_update_time() adds (ctx->time - tstamp) to total_time_enabled
 *  if state >= INACTIVE and to total_time_running if state == ACTIVE.
 *  Every state change goes through pevt_event_set_state(), which updates
 *  the times first.  So a task event accrues enabled time only while its
 *  task runs, exactly as a perf task event does.
 *
 * Locking rules:
 *  0. pevt_inherit_mutex (inherit.c, global mutex): parent/child links of
 *     inherited events; taken before any ctx->mutex.
 *  1. pevt_task_mutex (context.c, global mutex): task context creation and
 *     destruction.
 *  2. ctx->mutex: membership of a context (install/remove events, group
 *     attach/detach/promotion), ioctls and read() of its events: holding
 *     it keeps group sizes and lists stable for a sleeping caller.
 *  3. ctx->lock (raw spinlock, irqs off): event states, times, counts and
 *     list contents.  It is taken inside the sched_switch probe, which
 *     runs under the runqueue lock with irqs off: therefore while holding
 *     ctx->lock never allocate, never wake anybody up (use irq_work, as
 *     perf does for its wakeups), never send IPIs, never take a mutex.
 *     Order: rq->lock -> ctx->lock.  A CPU context lock and a task context
 *     lock are both taken in the switch path: cpuctx lock nests inside the
 *     task ctx lock (task ctx first, then &cpuctx->ctx.lock).
 *  4. pevt_task_hash_lock (raw spinlock, irqs off): writers of the task
 *     hash; readers use RCU (the switch and exit probes run with
 *     preemption disabled).  Order: hash lock -> ctx->lock.
 *  5. cpuctx->task_ctx is read and written only on its own CPU with irqs
 *     disabled (switch probe, IPI handlers).
 *
 * To act on an active context use ctx_function_call(): it runs the
 * function on the CPU where the context is active (IPI, like perf's
 * event_function_call()), retrying if the task moved, or locally under
 * ctx->lock if the context is not active anywhere.
 */
#ifndef _PEVT_INTERNAL_H
#define _PEVT_INTERNAL_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/refcount.h>
#include <linux/rcupdate.h>
#include <linux/perf_event.h>
#include <linux/wait.h>
#include <linux/sched/clock.h>
#include <asm/local64.h>

struct file;
struct task_struct;
struct pevt_event;
struct pevt_context;
struct perm_user;
struct pid_namespace;

#include "ring_buffer.h"

/* Event states: same numbering and meaning as perf_event_state. */
enum pevt_event_state {
	PEVT_STATE_EXIT		= -3,	/* removed on exec (remove_on_exec) */
	PEVT_STATE_ERROR	= -2,	/* pinned group that could not go on */
	PEVT_STATE_OFF		= -1,	/* disabled */
	PEVT_STATE_INACTIVE	= 0,	/* enabled, not counting now */
	PEVT_STATE_ACTIVE	= 1,	/* counting on event->oncpu */
};

/* Which groups ctx_sched_in()/ctx_sched_out() act on. */
enum pevt_event_type {
	PEVT_EVENT_PINNED	= 0x1,
	PEVT_EVENT_FLEXIBLE	= 0x2,
	PEVT_EVENT_ALL		= PEVT_EVENT_PINNED | PEVT_EVENT_FLEXIBLE,
};

/* pevt_source_ops.caps */
#define PEVT_SRC_SOFTWARE	0x1	/* never needs a counter slot: always fits */

/* pevt_source_ops.kind: which source an event has, for code that must know */
enum pevt_source_kind {
	PEVT_SRC_SW_CLOCK,	/* cpu-clock/task-clock, counting and sampling (sw.c) */
	PEVT_SRC_TRACEPOINT,	/* raw_syscalls:sys_enter (sample.c) */
	PEVT_SRC_VPMU,		/* pevt_vpmu slots (vpmu_src.c) */
};

/**
 * struct pevt_source_ops - something that counts for events (cf. struct pmu).
 * @name:	for messages
 * @kind:	enum pevt_source_kind
 * @caps:	PEVT_SRC_SOFTWARE or 0
 * @init:	claim @event (0), or -ENOENT if its attr.type/config is not
 *		this source's, or another -errno if it is but cannot be
 *		supported.  Process context, may sleep.
 * @destroy:	undo @init (process context).
 * @add:	schedule @event on this CPU (e.g. take a slot); with
 *		PERF_EF_START also start counting.  -EAGAIN if it cannot
 *		fit now (the group stays INACTIVE, or goes ERROR if pinned).
 * @del:	remove from this CPU; with PERF_EF_UPDATE fold the hardware
 *		value into event->count first.
 * @start:	resume counting (PERF_EF_RELOAD: reprogram).
 * @stop:	stop counting (PERF_EF_UPDATE: fold value into event->count).
 * @read:	fold the current value into event->count (event ACTIVE).
 * @unthrottle:	sampling sources: resume sampling after the sample-rate
 *		limit stopped it (throttle.c), or NULL; hard irq, on the
 *		event's CPU, event ACTIVE.
 *
 * add/del/start/stop/read run on the context's CPU, ctx->lock held, irqs
 * off.  Register a source with pevt_source_register() at module init.
 */
struct pevt_source_ops {
	const char	*name;
	enum pevt_source_kind kind;
	unsigned int	caps;
	struct list_head entry;		/* on the source list (core.c) */
	int	(*init)(struct pevt_event *event);
	void	(*destroy)(struct pevt_event *event);
	int	(*add)(struct pevt_event *event, int flags);
	void	(*del)(struct pevt_event *event, int flags);
	void	(*start)(struct pevt_event *event, int flags);
	void	(*stop)(struct pevt_event *event, int flags);
	void	(*read)(struct pevt_event *event);
	void	(*unthrottle)(struct pevt_event *event);
};

/**
 * struct pevt_event - one counter opened through PEVT_IOC_OPEN.
 */
struct pevt_event {
	struct perf_event_attr	attr;		/* as copied from userspace */
	u64			id;		/* PERF_EVENT_IOC_ID, PERF_FORMAT_ID */
	int			cpu;		/* -1 or the only CPU it counts on */
	const struct pevt_source_ops *src;
	void			*src_priv;	/* source private data */
	struct {
		int		idx;		/* counter slot, -1 if none */
		u64		config;		/* source private */
		u64		config_base;	/* source private */
		unsigned long	flags;		/* source private */
	} hw;

	struct pevt_context	*ctx;		/* fixed at open */
	struct pevt_event	*group_leader;	/* self if a leader; ctx->lock */
	struct list_head	group_entry;	/* ctx group list or leader's siblings */
	struct list_head	sibling_list;	/* leader: its siblings */
	int			nr_siblings;	/* leader: entries in sibling_list */
	struct list_head	event_entry;	/* ctx->event_list */
	bool			attached;	/* on the context's lists */

	enum pevt_event_state	state;		/* ctx->lock */
	int			oncpu;		/* CPU while ACTIVE, else -1 */
	local64_t		count;		/* accumulated value */
	local64_t		prev_count;	/* source: last raw reading */
	u64			total_time_enabled;
	u64			total_time_running;
	u64			tstamp;		/* ctx->time at last update */
	atomic64_t		lost;		/* PERF_FORMAT_LOST (ring buffer) */
	struct list_head	throttle_entry;	/* throttle.c: a CPU's throttled list */
	bool			throttled;	/* over the sample-rate limit */

	struct file		*file;		/* the event fd's file */
	struct pevt_rb __rcu	*rb;		/* ring buffer (output.c, RCU) */
	wait_queue_head_t	waitq;		/* poll(): woken via the rb's irq_work */
	struct rb_client	rb_client;	/* on rb->clients while rb is set */
	void			*rot;		/* rotation.c private */
	struct perm_user	*perm_user;	/* perm.c: per-uid charge, or NULL */
	struct pid_namespace	*ns;		/* the opener's: pids in records */
	struct rcu_head		rcu;		/* freed after a grace period */

	/* inherit.c, under pevt_inherit_mutex */
	struct pevt_event	*parent;	/* inherited: the event opened by the user */
	struct list_head	child_list;	/* opened event: its live children */
	struct list_head	child_entry;	/* child: on parent->child_list */
	u64			child_count;	/* opened event: exited children's */
	u64			child_time_enabled;
	u64			child_time_running;
};

/**
 * struct pevt_context - a set of event groups scheduled together.
 */
struct pevt_context {
	raw_spinlock_t		lock;		/* see locking rules above */
	struct mutex		mutex;		/* see locking rules above */
	struct list_head	pinned_groups;	/* leaders with attr.pinned */
	struct list_head	flexible_groups;/* other leaders */
	struct list_head	event_list;	/* every event */
	int			nr_events;
	int			nr_hw_events;	/* events whose source needs a slot */

	int			cpu;		/* CPU context: its CPU; task: -1 */
	struct task_struct	*task;		/* task context: the task (ref held) */
	int			active_cpu;	/* CPU where time runs, or -1 */
	bool			dead;		/* task exited or ctx dying: never sched in again */
	u64			time;		/* active time, ns */
	u64			timestamp;	/* local_clock() at last update */
	int			rotate_necessary; /* a flexible group did not fit */

	refcount_t		refcount;	/* task ctx: one per event (+ creation) */
	struct hlist_node	hash_node;	/* task hash */
	struct rcu_head		rcu;
	void			*rot;		/* rotation.c private */

	/* inherit.c: task contexts only */
	bool			inherited;	/* holds child events (ctx->mutex) */
	struct callback_head	exit_work;	/* folds them at task exit */
	struct callback_head	exec_work;	/* enable_on_exec */
	bool			exec_queued;	/* exec_work pending (ctx->lock) */

	/*
	 * perf's context swap (context.c, ctx_equiv()): a task context made
	 * whole by inherit from another is that one's clone until an event
	 * goes in or out of it.  Written under ctx->lock, read racily by the
	 * switch hook (a wrong answer only moves one switch's few us).
	 */
	u64			uid;		/* unique, from pevt_ctx_init() */
	u64			generation;	/* ++ at every install and remove */
	u64			clone_root;	/* uid of the context it is a clone of, or 0 */
	u64			clone_gen;	/* that context's generation then */
	bool			cloned;		/* a context was made a clone of it */

	/*
	 * rotid's key (sched.c): unique over all contexts, new whenever a
	 * group goes in, out or moves in a group list, or an event enters
	 * or leaves the enabled states (pevt_ctx_key_changed()).  ctx->lock.
	 */
	u64			key_gen;
};

/**
 * struct pevt_cpu_context - per-CPU state.
 * @ctx:	the CPU context (events opened with pid == -1, cpu == this)
 * @task_ctx:	the task context scheduled in on this CPU, or NULL; only
 *		touched on this CPU with irqs off
 */
struct pevt_cpu_context {
	struct pevt_context	ctx;
	struct pevt_context	*task_ctx;
};

DECLARE_PER_CPU(struct pevt_cpu_context, pevt_cpu_ctx);

static inline struct pevt_cpu_context *pevt_cpuctx(int cpu)
{
	return per_cpu_ptr(&pevt_cpu_ctx, cpu);
}

/*
 * ctx->time as of now: it is brought up to date only at sched in/out and
 * in the IPI handlers, so a context active on this CPU adds the time since
 * ctx->timestamp (perf's task_clock_event_read(), calc_timer_values()).
 * With ctx->lock held, or on the context's CPU with irqs off.
 */
/*
 * An event went into or out of @ctx (ctx->lock held): it is no clone of
 * anything now, and its clones no longer match it (perf: generation++ in
 * list_add_event()/list_del_event(), unclone_ctx()).
 */
static inline void pevt_ctx_unclone(struct pevt_context *ctx)
{
	WRITE_ONCE(ctx->generation, ctx->generation + 1);
	WRITE_ONCE(ctx->clone_root, 0);
}

static inline u64 pevt_ctx_time_now(const struct pevt_context *ctx)
{
	u64 now = READ_ONCE(ctx->time);

	if (READ_ONCE(ctx->active_cpu) == raw_smp_processor_id())
		now += local_clock() - READ_ONCE(ctx->timestamp);
	return now;
}

/* A software clock (cpu-clock, task-clock: sw.c): counts ns while active. */
static inline bool pevt_attr_is_clock(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_SOFTWARE &&
	       (attr->config == PERF_COUNT_SW_CPU_CLOCK ||
		attr->config == PERF_COUNT_SW_TASK_CLOCK);
}

static inline bool pevt_event_is_leader(const struct pevt_event *event)
{
	return event->group_leader == event;
}

#define pevt_for_each_sibling(sibling, leader) \
	list_for_each_entry(sibling, &(leader)->sibling_list, group_entry)

/* core.c */
extern atomic_t pevt_nr_live_events;		/* debugfs pevt/stats */
extern atomic_t pevt_nr_live_task_ctx;
int pevt_source_register(struct pevt_source_ops *src);
void pevt_source_unregister(struct pevt_source_ops *src);
int pevt_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		    int group_fd, unsigned int flags);
struct pevt_event *pevt_event_from_file(struct file *file);
void pevt_ctx_init(struct pevt_context *ctx, int cpu, struct task_struct *task);
void pevt_update_context_time(struct pevt_context *ctx);
void pevt_update_context_time_at(struct pevt_context *ctx, u64 now);
void pevt_event_update_time(struct pevt_event *event);
void pevt_ctx_key_changed(struct pevt_context *ctx);
void pevt_event_set_state(struct pevt_event *event, enum pevt_event_state state);
int pevt_group_sched_in(struct pevt_event *leader, struct pevt_context *ctx);
void pevt_group_sched_out(struct pevt_event *leader, struct pevt_context *ctx);
void ctx_sched_in(struct pevt_context *ctx, enum pevt_event_type type);
void ctx_sched_out(struct pevt_context *ctx, enum pevt_event_type type);
void pevt_ctx_changed(struct pevt_context *ctx);
int pevt_core_init(void);
void pevt_core_exit(void);
struct dentry *pevt_debugfs_dir(void);

/* probe.c: the bench instrument (debugfs pevt/probes) */
void pevt_probe_init(struct dentry *dir);
void pevt_probe_exit(void);
void *pevt_context_switch_fn(void);	/* context.c */
#ifdef CONFIG_KRETPROBES
/* The switch-in half runs in a kprobe, where a kretprobe cannot time it. */
extern bool pevt_probe_armed;
static inline bool pevt_probe_timing(void) { return READ_ONCE(pevt_probe_armed); }
void pevt_probe_account_switch_in(u64 ns);
#else
static inline bool pevt_probe_timing(void) { return false; }
static inline void pevt_probe_account_switch_in(u64 ns) { }
#endif

typedef int (*pevt_ctx_fn)(struct pevt_context *ctx, void *data, bool active);
int ctx_function_call(struct pevt_context *ctx, pevt_ctx_fn fn, void *data);

/* context.c */
struct pevt_context *ctx_get_cpu(int cpu);
struct pevt_context *ctx_get_task(struct task_struct *task);
struct pevt_context *ctx_find_task_get(struct task_struct *task,
				       bool (*want)(struct pevt_context *ctx),
				       bool get);
void ctx_put(struct pevt_context *ctx);
void pevt_ctx_mark_clone(struct task_struct *task, struct pevt_context *pctx,
			 int nr_events);
void ctx_task_sched_in(struct pevt_cpu_context *cpuctx, struct pevt_context *ctx);
void ctx_task_sched_out(struct pevt_cpu_context *cpuctx, struct pevt_context *ctx);
int pevt_context_init(void);
void pevt_context_exit(void);

/* core.c: for inherit.c */
struct pevt_event *pevt_inherit_alloc(struct pevt_event *pe, struct task_struct *task);
int pevt_inherit_install(struct list_head *members, void *pending);
void pevt_event_remove_free(struct pevt_event *event);
int pevt_event_apply(struct pevt_event *event, pevt_ctx_fn fn, bool group);
void pevt_ctx_enable_on_exec(struct pevt_context *ctx);
void pevt_ctx_exec_edge(struct pevt_context *ctx);
void pevt_event_remove(struct pevt_event *event);

/* inherit.c */
extern atomic_t pevt_inherit_children, pevt_inherit_failed;
void pevt_inherit_fork(struct task_struct *child);
extern atomic_t pevt_inherit_nr_pending;
void pevt_inherit_switch(struct task_struct *task, bool in);
u64 pevt_inherit_ran(void *pending);
void pevt_inherit_exit(struct task_struct *task);
void pevt_inherit_exec(struct task_struct *task);
void pevt_inherit_exec_edge(struct task_struct *task);
void pevt_inherit_release(struct pevt_event *event);
void pevt_inherit_read(struct pevt_event *event, u64 *values);
void pevt_inherit_apply(struct pevt_event *event, pevt_ctx_fn fn, bool group);
int pevt_inherit_check_attr(const struct perf_event_attr *attr);
void pevt_inherit_lock(struct pevt_event *event);
void pevt_inherit_unlock(struct pevt_event *event);

/* sw.c */
int pevt_sw_init(void);
void pevt_sw_exit(void);

/* chardev.c */
int pevt_chardev_init(void);
void pevt_chardev_exit(void);

#endif /* _PEVT_INTERNAL_H */
