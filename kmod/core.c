// SPDX-License-Identifier: GPL-2.0
/*
 * pevt core: event lifetime, groups, scheduling of groups in a context,
 * read(), ioctls.  The structures and locking rules are in internal.h.
 */
#include <linux/anon_inodes.h>
#include <linux/compat.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/pevt.h>

#include "internal.h"
#include "pevt_sched.h"
#include "compat.h"
#include "output.h"
#include "perm.h"
#include "vpmu.h"

static LIST_HEAD(pevt_sources);
static DEFINE_MUTEX(pevt_sources_mutex);
static atomic64_t pevt_event_id_seq = ATOMIC64_INIT(0);

static const struct file_operations pevt_event_fops;

/* Live objects, shown in debugfs pevt/stats: leak checks in selftests. */
atomic_t pevt_nr_live_events = ATOMIC_INIT(0);
atomic_t pevt_nr_live_task_ctx = ATOMIC_INIT(0);

/**
 * pevt_source_register() - make a source available to PEVT_IOC_OPEN.
 * @src: the source; must stay valid until pevt_source_unregister()
 *
 * Return: 0.
 */
int pevt_source_register(struct pevt_source_ops *src)
{
	mutex_lock(&pevt_sources_mutex);
	list_add_tail(&src->entry, &pevt_sources);
	mutex_unlock(&pevt_sources_mutex);
	return 0;
}

/**
 * pevt_source_unregister() - undo pevt_source_register().
 * @src: the source; no event may use it any more
 */
void pevt_source_unregister(struct pevt_source_ops *src)
{
	mutex_lock(&pevt_sources_mutex);
	list_del(&src->entry);
	mutex_unlock(&pevt_sources_mutex);
}

/* Like perf_init_event(): the first source not answering -ENOENT wins. */
static int pevt_init_event_source(struct pevt_event *event)
{
	struct pevt_source_ops *src;
	int ret = -ENOENT;

	mutex_lock(&pevt_sources_mutex);
	list_for_each_entry(src, &pevt_sources, entry) {
		ret = src->init(event);
		if (ret == -ENOENT)
			continue;
		if (!ret)
			event->src = src;
		break;
	}
	mutex_unlock(&pevt_sources_mutex);
	return ret;
}

/* ---- time ---------------------------------------------------------- */

/**
 * pevt_update_context_time() - advance ctx->time to now.
 * @ctx: an active context, on its CPU, ctx->lock held
 */
void pevt_update_context_time(struct pevt_context *ctx)
{
	pevt_update_context_time_at(ctx, local_clock());
}

/**
 * pevt_update_context_time_at() - advance ctx->time to @now.
 * @ctx: the context, ctx->lock held
 * @now: a local_clock() reading of this CPU, taken with irqs off since
 *	the context was last updated
 *
 * For a pass that brings several contexts up to one instant with one
 * clock read (the scheduler's tick: under TCG a local_clock() costs about
 * as much as the rest of an idle tick, Documentation/fairness.md).  A
 * @now older than the context's own time is ignored.
 */
void pevt_update_context_time_at(struct pevt_context *ctx, u64 now)
{
	lockdep_assert_held(&ctx->lock);
	if (now <= ctx->timestamp)
		return;
	ctx->time += now - ctx->timestamp;
	ctx->timestamp = now;
}

/**
 * pevt_event_update_time() - bring enabled/running up to ctx->time.
 * @event: the event, ctx->lock held
 *
 * Same rule as perf_event_update_time(): enabled time accrues in states
 * >= INACTIVE, running time only in ACTIVE, both measured in ctx time,
 * which stands still while the context is not active.
 */
void pevt_event_update_time(struct pevt_event *event)
{
	u64 now = event->ctx->time;
	u64 delta = now - event->tstamp;

	if (event->state >= PEVT_STATE_INACTIVE)
		event->total_time_enabled += delta;
	if (event->state == PEVT_STATE_ACTIVE)
		event->total_time_running += delta;
	event->tstamp = now;
}

/**
 * pevt_event_set_state() - change state, accounting time up to now first.
 * @event: the event, ctx->lock held
 * @state: the new state
 */
void pevt_event_set_state(struct pevt_event *event, enum pevt_event_state state)
{
	if (event->state == state)
		return;
	pevt_event_update_time(event);
	/* In or out of the enabled states: rotid's key of its ctx changes. */
	if ((event->state >= PEVT_STATE_INACTIVE) != (state >= PEVT_STATE_INACTIVE) &&
	    event->ctx)
		pevt_ctx_key_changed(event->ctx);
	event->state = state;
}

/* ---- scheduling groups in/out of a context ------------------------- */

static bool event_filter_match(struct pevt_event *event)
{
	return event->cpu == -1 || event->cpu == smp_processor_id();
}

static bool group_is_software(struct pevt_event *leader)
{
	struct pevt_event *sibling;

	if (!(leader->src->caps & PEVT_SRC_SOFTWARE))
		return false;
	pevt_for_each_sibling(sibling, leader)
		if (!(sibling->src->caps & PEVT_SRC_SOFTWARE))
			return false;
	return true;
}

static int event_sched_in(struct pevt_event *event, struct pevt_context *ctx)
{
	lockdep_assert_held(&ctx->lock);

	if (event->state <= PEVT_STATE_OFF)
		return 0;
	if (event->state == PEVT_STATE_ACTIVE)
		return 0;

	event->oncpu = smp_processor_id();
	/*
	 * Set ACTIVE before add(): a source may look at the state, and the
	 * time accounting below must see the transition at ctx->time now.
	 */
	pevt_event_set_state(event, PEVT_STATE_ACTIVE);
	if (event->src->add(event, PERF_EF_START)) {
		pevt_event_set_state(event, PEVT_STATE_INACTIVE);
		event->oncpu = -1;
		return -EAGAIN;
	}
	/* perf: the clocks' add() and event_sched_in() update the page. */
	pevt_output_update_userpage(event);
	return 0;
}

static void event_sched_out(struct pevt_event *event, struct pevt_context *ctx)
{
	lockdep_assert_held(&ctx->lock);

	if (event->state != PEVT_STATE_ACTIVE)
		return;
	event->src->del(event, PERF_EF_UPDATE);
	event->oncpu = -1;
	pevt_event_set_state(event, PEVT_STATE_INACTIVE);
}

/**
 * pevt_group_sched_in() - put a whole group on this CPU, or none of it.
 * @leader: group leader
 * @ctx: its context, active on this CPU, ctx->lock held, time updated
 *
 * Return: 0, or -EAGAIN if some member did not fit (all rolled back).
 */
int pevt_group_sched_in(struct pevt_event *leader, struct pevt_context *ctx)
{
	struct pevt_event *sibling, *failed = NULL;

	if (leader->state <= PEVT_STATE_OFF)
		return 0;
	if (event_sched_in(leader, ctx))
		return -EAGAIN;
	pevt_for_each_sibling(sibling, leader) {
		if (event_sched_in(sibling, ctx)) {
			failed = sibling;
			break;
		}
	}
	if (!failed)
		return 0;

	/* Roll back: no time elapsed, so running time gains nothing. */
	pevt_for_each_sibling(sibling, leader) {
		if (sibling == failed)
			break;
		event_sched_out(sibling, ctx);
	}
	event_sched_out(leader, ctx);
	return -EAGAIN;
}

/**
 * pevt_group_sched_out() - take a whole group off this CPU.
 * @leader: group leader
 * @ctx: its context, ctx->lock held, time updated
 */
void pevt_group_sched_out(struct pevt_event *leader, struct pevt_context *ctx)
{
	struct pevt_event *sibling;

	event_sched_out(leader, ctx);
	pevt_for_each_sibling(sibling, leader)
		event_sched_out(sibling, ctx);
}

/**
 * ctx_sched_in() - schedule the groups of an active context in.
 * @ctx: context active on this CPU, ctx->lock held, time updated
 * @type: pinned and/or flexible groups
 *
 * Perf's policy (6.1 merge_sched_in): pinned groups that do not fit go to
 * ERROR; flexible groups are tried in list order, software-only groups
 * always go on, and after the first flexible group that does not fit no
 * other group needing slots is tried (ctx->rotate_necessary is set).
 *
 * This is where the rotation scheduler (rotation.c) hooks in: it may
 * replace the flexible pass with its planned rotation.
 */
void ctx_sched_in(struct pevt_context *ctx, enum pevt_event_type type)
{
	struct pevt_event *leader;
	bool can_add_hw = true;

	lockdep_assert_held(&ctx->lock);

	if (type & PEVT_EVENT_PINNED) {
		list_for_each_entry(leader, &ctx->pinned_groups, group_entry) {
			if (leader->state != PEVT_STATE_INACTIVE ||
			    !event_filter_match(leader))
				continue;
			if (pevt_group_sched_in(leader, ctx))
				pevt_event_set_state(leader, PEVT_STATE_ERROR);
		}
	}
	/* rotid policy: the cached plan decides the flexible groups. */
	if ((type & PEVT_EVENT_FLEXIBLE) && sched_ctx_flexible_in(ctx))
		type &= ~PEVT_EVENT_FLEXIBLE;
	if (type & PEVT_EVENT_FLEXIBLE) {
		list_for_each_entry(leader, &ctx->flexible_groups, group_entry) {
			bool sw;

			if (leader->state != PEVT_STATE_INACTIVE ||
			    !event_filter_match(leader))
				continue;
			sw = group_is_software(leader);
			if ((sw || can_add_hw) && !pevt_group_sched_in(leader, ctx))
				continue;
			can_add_hw = false;
			ctx->rotate_necessary = 1;
		}
		if (ctx->rotate_necessary)
			sched_rotation_needed();
	}
}

/**
 * ctx_sched_out() - schedule the groups of a context out.
 * @ctx: context active on this CPU, ctx->lock held, time updated
 * @type: pinned and/or flexible groups
 */
void ctx_sched_out(struct pevt_context *ctx, enum pevt_event_type type)
{
	struct pevt_event *leader;

	lockdep_assert_held(&ctx->lock);

	if (type & PEVT_EVENT_PINNED)
		list_for_each_entry(leader, &ctx->pinned_groups, group_entry)
			pevt_group_sched_out(leader, ctx);
	if (type & PEVT_EVENT_FLEXIBLE)
		list_for_each_entry(leader, &ctx->flexible_groups, group_entry)
			pevt_group_sched_out(leader, ctx);
	if (type == PEVT_EVENT_ALL)
		ctx->rotate_necessary = 0;
}

/**
 * pevt_ctx_changed() - the set of enabled events of @ctx changed.
 * @ctx: the context; process context, called after ctx->mutex was
 *	dropped (the re-plan IPIs the context's CPU), no ctx->lock
 *
 * Called after an event was added, removed, enabled or disabled, so that
 * the rotation scheduler can re-plan.  Nothing to do without it.
 */
void pevt_ctx_changed(struct pevt_context *ctx)
{
	sched_ctx_changed(ctx);
}

/* ---- running a function where the context is active --------------- */

struct pevt_fcall {
	struct pevt_context	*ctx;
	pevt_ctx_fn		fn;
	void			*data;
	int			ret;
};

static void ctx_function_remote(void *info)
{
	struct pevt_fcall *fc = info;
	struct pevt_context *ctx = fc->ctx;

	raw_spin_lock(&ctx->lock);
	if (ctx->active_cpu != smp_processor_id()) {
		fc->ret = -EAGAIN;	/* the task moved: try again */
	} else {
		pevt_update_context_time(ctx);
		fc->ret = fc->fn(ctx, fc->data, true);
	}
	raw_spin_unlock(&ctx->lock);
}

/**
 * ctx_function_call() - run @fn on @ctx with ctx->lock held, where it runs.
 * @ctx: the context
 * @fn: function; @active tells whether ctx is active on this CPU (time
 *	already updated) or inactive (times frozen, nothing ACTIVE)
 * @data: argument for @fn
 *
 * Like perf's event_function_call(): if the context is active on some CPU
 * the function runs there from an IPI, so sources are only touched on
 * their own CPU; if the task moved in between, retry.
 * Process context, no spinlock held.
 *
 * Return: what @fn returned.
 */
int ctx_function_call(struct pevt_context *ctx, pevt_ctx_fn fn, void *data)
{
	struct pevt_fcall fc = { .ctx = ctx, .fn = fn, .data = data };
	int cpu, ret;

	for (;;) {
		raw_spin_lock_irq(&ctx->lock);
		cpu = ctx->active_cpu;
		if (cpu < 0) {
			ret = fn(ctx, data, false);
			raw_spin_unlock_irq(&ctx->lock);
			return ret;
		}
		raw_spin_unlock_irq(&ctx->lock);

		fc.ret = -EAGAIN;
		/* -ENXIO: the CPU went offline; its context is inactive now */
		if (smp_call_function_single(cpu, ctx_function_remote, &fc, 1))
			fc.ret = -EAGAIN;
		if (fc.ret != -EAGAIN)
			return fc.ret;
		cond_resched();
	}
}

/* ---- install / remove ---------------------------------------------- */

static struct list_head *ctx_group_list(struct pevt_context *ctx,
					struct pevt_event *event)
{
	return event->attr.pinned ? &ctx->pinned_groups : &ctx->flexible_groups;
}

/*
 * An event just installed or enabled in an active context goes on now,
 * like perf's ctx_resched() reduced to what pevt needs: a new group goes
 * on if it fits; a new sibling goes on with an active leader (if the group
 * no longer fits, it comes off and waits for rotation).  Pinned groups
 * that cannot go on are an error.  ctx->lock held, on the context's CPU.
 */
static void ctx_sched_in_new(struct pevt_context *ctx, struct pevt_event *event)
{
	struct pevt_event *leader = event->group_leader;

	if (leader == event) {
		if (pevt_group_sched_in(event, ctx)) {
			if (event->attr.pinned)
				pevt_event_set_state(event, PEVT_STATE_ERROR);
			else
				ctx->rotate_necessary = 1;
		}
	} else if (leader->state == PEVT_STATE_ACTIVE) {
		if (event_sched_in(event, ctx)) {
			/*
			 * The whole group again, like perf's ctx_resched():
			 * add() places the members by matching (vpmu_src.c),
			 * so the leader may move out of the new one's way.
			 */
			pevt_group_sched_out(leader, ctx);
			if (pevt_group_sched_in(leader, ctx)) {
				if (leader->attr.pinned)
					pevt_event_set_state(leader, PEVT_STATE_ERROR);
				else
					ctx->rotate_necessary = 1;
			}
		}
	}
}

static int __pevt_install(struct pevt_context *ctx, void *data, bool active)
{
	struct pevt_event *event = data;
	struct pevt_event *leader = event->group_leader;

	if (ctx->dead)
		return -ESRCH;

	/* tstamp in ctx time: no enabled time before now. */
	event->tstamp = ctx->time;
	list_add_tail(&event->event_entry, &ctx->event_list);
	ctx->nr_events++;
	pevt_ctx_unclone(ctx);
	if (!(event->src->caps & PEVT_SRC_SOFTWARE))
		ctx->nr_hw_events++;
	pevt_ctx_key_changed(ctx);
	if (leader == event) {
		list_add_tail(&event->group_entry, ctx_group_list(ctx, event));
	} else {
		list_add_tail(&event->group_entry, &leader->sibling_list);
		leader->nr_siblings++;
	}
	event->attached = true;

	if (active && event->state == PEVT_STATE_INACTIVE &&
	    event_filter_match(event))
		ctx_sched_in_new(ctx, event);
	return 0;
}

/* perf_group_detach(): siblings of a removed leader become singletons. */
static void pevt_group_detach(struct pevt_event *event)
{
	struct pevt_context *ctx = event->ctx;
	struct pevt_event *sibling, *tmp;

	pevt_ctx_key_changed(ctx);
	if (!pevt_event_is_leader(event)) {
		list_del_init(&event->group_entry);
		event->group_leader->nr_siblings--;
		event->group_leader = event;
		return;
	}
	list_del_init(&event->group_entry);
	list_for_each_entry_safe(sibling, tmp, &event->sibling_list, group_entry) {
		sibling->group_leader = sibling;
		list_move_tail(&sibling->group_entry,
			       ctx_group_list(ctx, sibling));
	}
	event->nr_siblings = 0;
}

static int __pevt_remove(struct pevt_context *ctx, void *data, bool active)
{
	struct pevt_event *event = data;
	bool promoted;

	if (!event->attached)
		return 0;
	if (active)
		event_sched_out(event, ctx);
	pevt_event_update_time(event);
	promoted = pevt_event_is_leader(event) && event->nr_siblings;
	pevt_group_detach(event);
	list_del_init(&event->event_entry);
	ctx->nr_events--;
	pevt_ctx_unclone(ctx);
	if (!(event->src->caps & PEVT_SRC_SOFTWARE))
		ctx->nr_hw_events--;
	event->attached = false;
	/* Promoted siblings are groups of their own now: give them a go. */
	if (promoted && active)
		ctx_sched_in(ctx, PEVT_EVENT_FLEXIBLE);
	return 0;
}

/* ---- enable / disable / reset -------------------------------------- */

static int __pevt_enable(struct pevt_context *ctx, void *data, bool active)
{
	struct pevt_event *event = data;

	/* remove_on_exec: an event removed at exec stays off (perf's EXIT). */
	if (event->state >= PEVT_STATE_INACTIVE || event->state == PEVT_STATE_EXIT)
		return 0;
	/* From OFF or ERROR: no enabled time accrues for the time before. */
	event->state = PEVT_STATE_OFF;
	event->tstamp = ctx->time;
	pevt_event_set_state(event, PEVT_STATE_INACTIVE);

	if (active && event_filter_match(event))
		ctx_sched_in_new(ctx, event);
	return 0;
}

static int __pevt_disable(struct pevt_context *ctx, void *data, bool active)
{
	struct pevt_event *event = data;

	if (event->state < PEVT_STATE_INACTIVE)
		return 0;
	if (active) {
		if (pevt_event_is_leader(event))
			pevt_group_sched_out(event, ctx);
		else
			event_sched_out(event, ctx);
	}
	pevt_event_set_state(event, PEVT_STATE_OFF);
	return 0;
}

static void event_fold_count(struct pevt_event *event, bool active)
{
	if (active && event->state == PEVT_STATE_ACTIVE &&
	    event->oncpu == smp_processor_id())
		event->src->read(event);
}

static int __pevt_reset(struct pevt_context *ctx, void *data, bool active)
{
	struct pevt_event *event = data;

	event_fold_count(event, active);
	local64_set(&event->count, 0);
	pevt_output_update_userpage(event);
	return 0;
}


struct pevt_group_apply {
	pevt_ctx_fn		fn;
	struct pevt_event	*leader;
};

static int __pevt_group_apply(struct pevt_context *ctx, void *data, bool active)
{
	struct pevt_group_apply *ga = data;
	struct pevt_event *sibling;

	ga->fn(ctx, ga->leader, active);
	pevt_for_each_sibling(sibling, ga->leader)
		ga->fn(ctx, sibling, active);
	return 0;
}

/*
 * perf_event_for_each() with PERF_IOC_FLAG_GROUP: leader, then siblings.
 * Unlike perf, which makes one cross-call per member, the whole group is
 * done in one critical section, so its members start and stop together.
 */
int pevt_event_apply(struct pevt_event *event, pevt_ctx_fn fn, bool group)
{
	struct pevt_group_apply ga = { .fn = fn, .leader = event->group_leader };

	if (!group)
		return ctx_function_call(event->ctx, fn, event);
	return ctx_function_call(event->ctx, __pevt_group_apply, &ga);
}

/* ---- read() -------------------------------------------------------- */

struct pevt_read_args {
	struct pevt_event	*event;
	u64			*values;
	size_t			max;	/* entries in values */
	size_t			n;	/* entries filled */
	bool			error;	/* group leader in ERROR: read 0 bytes */
};

static void read_put(void *arg, u64 v)
{
	struct pevt_read_args *ra = arg;

	if (ra->n < ra->max)
		ra->values[ra->n] = v;
	ra->n++;
}

static void read_update(struct pevt_event *e, bool active)
{
	event_fold_count(e, active);
	pevt_event_update_time(e);
}

/* perf_read_one() / perf_read_group(): times of the event or its leader. */
static int __pevt_read(struct pevt_context *ctx, void *data, bool active)
{
	struct pevt_read_args *ra = data;
	struct pevt_event *event = ra->event, *leader = event, *sibling;

	if (event->attr.read_format & PERF_FORMAT_GROUP)
		leader = event->group_leader;
	if (leader->state == PEVT_STATE_ERROR) {
		ra->error = true;
		return 0;
	}
	read_update(leader, active);
	if (event->attr.read_format & PERF_FORMAT_GROUP)
		pevt_for_each_sibling(sibling, leader)
			read_update(sibling, active);
	pevt_read_layout(event, leader->total_time_enabled,
			 leader->total_time_running, read_put, ra);
	return 0;
}

static ssize_t pevt_event_read(struct file *file, char __user *buf,
			       size_t count, loff_t *ppos)
{
	struct pevt_event *event = file->private_data;
	struct pevt_context *ctx = event->ctx;
	struct pevt_read_args ra = { .event = event };
	size_t size;
	ssize_t ret;

	pevt_inherit_lock(event);	/* children's counts: inherit.c */
	mutex_lock(&ctx->mutex);
	size = pevt_read_size(event->attr.read_format,
			      event->group_leader->nr_siblings);
	if (count < size) {
		ret = -ENOSPC;
		goto out;
	}
	ra.max = size / sizeof(u64);
	ra.values = kcalloc(ra.max, sizeof(u64), GFP_KERNEL);
	if (!ra.values) {
		ret = -ENOMEM;
		goto out;
	}
	ctx_function_call(ctx, __pevt_read, &ra);
	if (!ra.error)
		pevt_inherit_read(event, ra.values);
	if (ra.error)
		ret = 0;
	else if (WARN_ON_ONCE(ra.n != ra.max))
		ret = -EIO;
	else if (copy_to_user(buf, ra.values, size))
		ret = -EFAULT;
	else
		ret = size;
	kfree(ra.values);
out:
	mutex_unlock(&ctx->mutex);
	pevt_inherit_unlock(event);
	return ret;
}

/* ---- ioctl() ------------------------------------------------------- */

static long pevt_event_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct pevt_event *event = file->private_data;
	struct pevt_context *ctx = event->ctx;
	pevt_ctx_fn fn;
	long ret = 0;

	switch (cmd) {
	case PERF_EVENT_IOC_ENABLE:
		fn = __pevt_enable;
		break;
	case PERF_EVENT_IOC_DISABLE:
		fn = __pevt_disable;
		break;
	case PERF_EVENT_IOC_RESET:
		fn = __pevt_reset;
		break;
	case PERF_EVENT_IOC_ID:
		if (put_user(event->id, (u64 __user *)arg))
			return -EFAULT;
		return 0;
	case PERF_EVENT_IOC_SET_OUTPUT:
		/* inherit.c: children on every CPU would share one buffer. */
		if (event->cpu == -1 && event->attr.inherit)
			return -EINVAL;
		fallthrough;
	default:
		/* SET_OUTPUT, PAUSE_OUTPUT: output.c */
		ret = pevt_output_ioctl(event, cmd, arg);
		return ret == -ENOIOCTLCMD ? -ENOTTY : ret;
	}

	pevt_inherit_lock(event);
	mutex_lock(&ctx->mutex);
	ret = pevt_event_apply(event, fn, arg & PERF_IOC_FLAG_GROUP);
	/* perf_event_for_each_child(): the children too */
	pevt_inherit_apply(event, fn, arg & PERF_IOC_FLAG_GROUP);
	mutex_unlock(&ctx->mutex);
	pevt_inherit_unlock(event);
	if (cmd != PERF_EVENT_IOC_RESET)
		pevt_ctx_changed(ctx);
	return ret;
}

#ifdef CONFIG_COMPAT
/*
 * perf_compat_ioctl(): the ioctls whose argument is a pointer encode its
 * size in the command, 4 bytes for a 32-bit caller.
 */
static long pevt_event_compat_ioctl(struct file *file, unsigned int cmd,
				    unsigned long arg)
{
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(PERF_EVENT_IOC_SET_FILTER):
	case _IOC_NR(PERF_EVENT_IOC_ID):
	case _IOC_NR(PERF_EVENT_IOC_QUERY_BPF):
	case _IOC_NR(PERF_EVENT_IOC_MODIFY_ATTRIBUTES):
		if (_IOC_SIZE(cmd) == sizeof(compat_uptr_t)) {
			cmd &= ~IOCSIZE_MASK;
			cmd |= sizeof(void *) << IOCSIZE_SHIFT;
		}
		break;
	}
	return pevt_event_ioctl(file, cmd, arg);
}
#else
#define pevt_event_compat_ioctl	NULL
#endif

/* ---- lifetime ------------------------------------------------------ */

static void pevt_event_free(struct pevt_event *event)
{
	if (event->src && event->src->destroy)
		event->src->destroy(event);
	if (event->ctx)
		ctx_put(event->ctx);
	perm_uncharge(event->perm_user);
	if (event->ns)
		put_pid_ns(event->ns);
	atomic_dec(&pevt_nr_live_events);
	/*
	 * A grace period before the memory goes: a buffer's wakeup irq_work
	 * may still walk our rb_client, a tracepoint probe our source data.
	 * Deferred, not waited for: closing many fds must not cost a grace
	 * period each (perf's free_event_rcu()).
	 */
	kfree_rcu(event, rcu);
}

static int pevt_event_release(struct inode *inode, struct file *file)
{
	struct pevt_event *event = file->private_data;
	struct pevt_context *ctx = event->ctx;

	mutex_lock(&ctx->mutex);
	ctx_function_call(ctx, __pevt_remove, event);
	mutex_unlock(&ctx->mutex);
	pevt_ctx_changed(ctx);
	pevt_inherit_release(event);	/* its children go with it */
	pevt_output_release(event);
	pevt_event_free(event);
	return 0;
}

static int pevt_event_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pevt_event *event = file->private_data;

	/* perf_mmap(): every child would write into one buffer. */
	if (event->cpu == -1 && event->attr.inherit)
		return -EINVAL;
	return pevt_output_mmap(event, vma);
}

static __poll_t pevt_event_poll(struct file *file, poll_table *wait)
{
	return pevt_output_poll(file->private_data, file, wait);
}

static const struct file_operations pevt_event_fops = {
	.owner		= THIS_MODULE,
	.release	= pevt_event_release,
	.read		= pevt_event_read,
	.unlocked_ioctl	= pevt_event_ioctl,
	.compat_ioctl	= pevt_event_compat_ioctl,
	.mmap		= pevt_event_mmap,
	.poll		= pevt_event_poll,
};

/**
 * pevt_event_from_file() - the event behind a pevt event fd's file.
 * @file: any file
 *
 * Return: the event, or NULL if @file is not a pevt event.
 */
struct pevt_event *pevt_event_from_file(struct file *file)
{
	if (!file || file->f_op != &pevt_event_fops)
		return NULL;
	return file->private_data;
}

/* ---- open ---------------------------------------------------------- */

/*
 * What this slice supports of perf_event_attr.  Features perf has and pevt
 * does not (yet) are -EOPNOTSUPP; malformed ones are -EINVAL, as perf.
 */
static int pevt_attr_check(const struct perf_event_attr *attr)
{
	int ret;

	if (attr->read_format & ~(u64)(PERF_FORMAT_MAX - 1))
		return -EINVAL;
	if (attr->sample_type & ~((u64)(PERF_SAMPLE_MAX - 1) |
				  PEVT_SAMPLE_SIZE_AT_END))
		return -EINVAL;
	if (attr->freq && attr->sample_freq > INT_MAX)
		return -EINVAL;
	/* Sampling and side-band records: output.c, sample.c (issue 3). */
	ret = pevt_output_check_attr(attr);
	if (ret)
		return ret;
	/* MMAP2 records with a build id: sideband.c. */
	if (attr->sigtrap)
		return -EOPNOTSUPP;
	/* inherit, inherit_thread, enable_on_exec: inherit.c */
	ret = pevt_inherit_check_attr(attr);
	if (ret)
		return ret;
	if (attr->exclusive || attr->use_clockid || attr->precise_ip ||
	    attr->branch_sample_type || attr->sample_regs_intr ||
	    attr->aux_watermark ||
	    attr->aux_sample_size || attr->sig_data)
		return -EOPNOTSUPP;
	return 0;
}

/* perf_event_validate_size(): the largest read() or PERF_SAMPLE_READ */
#define PEVT_READ_SIZE_MAX	(16 * 1024)

/*
 * May @event join @leader's group?  ctx->mutex held (the group is stable).
 * Like x86's validate_group() (and the stock vPMU's): a group whose vPMU
 * members cannot all hold a slot at once, even on an empty vPMU, could
 * never be scheduled: -EINVAL.  Like perf_event_validate_size(): every
 * member's read size with the new group size must stay within 16 KiB,
 * else -E2BIG; so a PERF_SAMPLE_READ record of the group always fits in
 * header.size (u16), whatever max_group_events says.
 */
static int pevt_group_validate(struct pevt_event *leader,
			       struct pevt_event *event)
{
	unsigned int slots = vpmu_nr_counters();
	int nr = leader->nr_siblings + 1;	/* siblings once @event joins */
	u64 masks[VPMU_MAX_COUNTERS + 1];
	struct pevt_event *sibling;
	u64 mask = pevt_vpmu_event_mask(event);
	int n = 0;

	if (mask) {
		if (pevt_vpmu_event_mask(leader))
			masks[n++] = pevt_vpmu_event_mask(leader);
		pevt_for_each_sibling(sibling, leader) {
			if (!pevt_vpmu_event_mask(sibling))
				continue;
			if (n >= slots)
				return -EINVAL;
			masks[n++] = pevt_vpmu_event_mask(sibling);
		}
		if (n >= slots)
			return -EINVAL;
		masks[n++] = mask;
		if (!vpmu_group_fits(masks, n))
			return -EINVAL;
	}

	if (pevt_read_size(event->attr.read_format, nr) > PEVT_READ_SIZE_MAX ||
	    pevt_read_size(leader->attr.read_format, nr) > PEVT_READ_SIZE_MAX)
		return -E2BIG;
	pevt_for_each_sibling(sibling, leader)
		if (pevt_read_size(sibling->attr.read_format, nr) >
		    PEVT_READ_SIZE_MAX)
			return -E2BIG;
	return 0;
}

/* find_lively_task_by_vpid() and the access check of perf_event_open(). */
static struct task_struct *pevt_find_task(pid_t pid)
{
	struct task_struct *task;
	struct pid *p;

	if (pid == 0) {
		get_task_struct(current);
		return current;
	}
	p = find_get_pid(pid);
	if (!p)
		return ERR_PTR(-ESRCH);
	task = get_pid_task(p, PIDTYPE_PID);
	put_pid(p);
	if (!task)
		return ERR_PTR(-ESRCH);
	return task;
}

/* The fields every new event starts with (counted live from here). */
static void pevt_event_init(struct pevt_event *event,
			    const struct perf_event_attr *attr, int cpu,
			    enum pevt_event_state state)
{
	atomic_inc(&pevt_nr_live_events);
	event->attr = *attr;
	event->cpu = cpu;
	event->id = atomic64_inc_return(&pevt_event_id_seq);
	event->group_leader = event;
	event->oncpu = -1;
	event->hw.idx = -1;
	event->state = state;
	INIT_LIST_HEAD(&event->group_entry);
	INIT_LIST_HEAD(&event->sibling_list);
	INIT_LIST_HEAD(&event->event_entry);
	INIT_LIST_HEAD(&event->child_list);
	INIT_LIST_HEAD(&event->child_entry);
	pevt_output_init_event(event);
}

/**
 * pevt_event_open() - create an event and return an fd for it.
 * @attr: checked copy of the user's attr (size set)
 * @pid: 0 (caller), > 0 (that task), -1 (any task: CPU event)
 * @cpu: -1 (any CPU) or a CPU
 * @group_fd: leader's fd or -1
 * @flags: PEVT_OPEN_*
 *
 * Return: the new fd or -errno, following perf_event_open()'s errnos.
 */
int pevt_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		    int group_fd, unsigned int flags)
{
	struct task_struct *task = NULL;
	struct pevt_event *event, *leader = NULL;
	struct file *group_file = NULL, *file;
	struct pevt_context *ctx;
	bool exec_locked = false;
	int fd, ret;

	if (pid == -1 && cpu == -1)
		return -EINVAL;
	if (cpu < -1 || cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	ret = pevt_attr_check(attr);
	if (ret)
		return ret;
	/* sample_max_stack against perf_event_max_stack: callchain.c */
	ret = pevt_callchain_check_attr(attr);
	if (ret)
		return ret;
	/* Permissions (perm.c): paranoid level, kernel counting. */
	ret = perm_check_attr(attr);
	if (ret)
		return ret;

	if (group_fd != -1) {
		group_file = fget(group_fd);
		if (!group_file)
			return -EBADF;
		leader = pevt_event_from_file(group_file);
		if (!leader) {
			ret = -EINVAL;
			goto err_group;
		}
		/* perf: a group member cannot be pinned or exclusive. */
		if (attr->pinned) {
			ret = -EINVAL;
			goto err_group;
		}
	}

	ret = perm_check_tp_raw(attr, pid != -1);
	if (ret)
		goto err_group;
	if (pid != -1) {
		task = pevt_find_task(pid);
		if (IS_ERR(task)) {
			ret = PTR_ERR(task);
			task = NULL;
			goto err_group;
		}
		/*
		 * Like perf: exec_update_lock (read) from the check to the
		 * install, so that an exec committing new credentials comes
		 * either before the check (which then sees them) or after
		 * the install (and its exec probe detaches the event).
		 */
		ret = down_read_interruptible(&task->signal->exec_update_lock);
		if (ret)
			goto err_task;
		exec_locked = true;
		ret = perm_check_task(task);
		if (ret)
			goto err_task;
	} else {
		ret = perm_check_cpu();
		if (ret)
			goto err_group;
		if (!cpu_online(cpu)) {
			ret = -ENODEV;
			goto err_group;
		}
	}
	event = kzalloc(sizeof(*event), GFP_KERNEL);
	if (!event) {
		ret = -ENOMEM;
		goto err_task;
	}
	pevt_event_init(event, attr, cpu,
			attr->disabled ? PEVT_STATE_OFF : PEVT_STATE_INACTIVE);
	/* Records carry pids as the opener sees them (perf: event->ns). */
	event->ns = get_pid_ns(task_active_pid_ns(current));

	/* Limits (perm.c): uncharged by pevt_event_free(). */
	event->perm_user = perm_charge();
	if (IS_ERR(event->perm_user)) {
		ret = PTR_ERR(event->perm_user);
		event->perm_user = NULL;
		goto err_event;
	}

	ret = pevt_init_event_source(event);
	if (ret)
		goto err_event;

	ctx = task ? ctx_get_task(task) : ctx_get_cpu(cpu);
	if (IS_ERR(ctx)) {
		ret = PTR_ERR(ctx);
		goto err_event;
	}
	event->ctx = ctx;

	fd = get_unused_fd_flags(O_RDWR |
				 (flags & PEVT_OPEN_FD_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		ret = fd;
		goto err_event;
	}
	/* Takes a module reference (fops owner): rmmod is refused while open. */
	file = anon_inode_getfile("[pevt]", &pevt_event_fops, event, O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_fd;
	}
	event->file = file;

	mutex_lock(&ctx->mutex);
	if (leader) {
		/* perf: same context (task or CPU), same cpu, a real leader. */
		ret = -EINVAL;
		if (leader->ctx != ctx || leader->cpu != cpu ||
		    !pevt_event_is_leader(leader) || !leader->attached)
			goto err_locked;
		ret = perm_check_group(leader);	/* limits: perm.c */
		if (ret)
			goto err_locked;
		ret = pevt_group_validate(leader, event);
		if (ret)
			goto err_locked;
		event->group_leader = leader;
	}
	ret = ctx_function_call(ctx, __pevt_install, event);
	if (ret)
		goto err_locked;
	mutex_unlock(&ctx->mutex);
	if (exec_locked)
		up_read(&task->signal->exec_update_lock);
	pevt_ctx_changed(ctx);

	if (task)
		put_task_struct(task);
	if (group_file)
		fput(group_file);
	/* Last: from here userspace can see and close the event. */
	fd_install(fd, file);
	return fd;

err_locked:
	event->group_leader = event;
	mutex_unlock(&ctx->mutex);
	/* release() sees !attached and only frees the event */
	fput(file);
	put_unused_fd(fd);
	goto err_task;
err_fd:
	put_unused_fd(fd);
err_event:
	pevt_event_free(event);
err_task:
	if (exec_locked)
		up_read(&task->signal->exec_update_lock);
	if (task)
		put_task_struct(task);
err_group:
	if (group_file)
		fput(group_file);
	return ret;
}

/*
 * CPU and task contexts get separate lockdep classes: the switch path and
 * the rotation tick hold a task context's lock while taking the CPU
 * context's (locking rule 3 in internal.h), which lockdep would otherwise
 * report as recursive locking of one class.  Separate classes also let it
 * check that the order is never reversed.
 */
static struct lock_class_key pevt_cpu_ctx_lock_key;
static struct lock_class_key pevt_task_ctx_lock_key;

/* ---- inherit (inherit.c) ------------------------------------------- */

struct inherit_install {
	struct list_head	*members;	/* the leader, then its siblings */
	void			*pending;
};

/*
 * __pevt_install() of a child group, whole.  perf makes a child's events
 * in copy_process() and schedules the group in as one at the child's
 * first switch-in, so every member starts in the same state with the
 * same time.  Installed one by one, with the time the task had run read
 * at each install, a leader and its sibling could start apart (one on,
 * the other waiting for the rotation; or with different times): a
 * task-clock sibling read up to 2.4 ms off its leader's running time over
 * a shell tree.  Here every member goes in first, then the group is put
 * on (if the context is active here), then each gets the time its task
 * already ran (up to now: the allocations before, the context's creation
 * among them, are the child's time too): enabled if it is enabled,
 * running and, for a clock, counted if it runs.
 */
static int __pevt_install_group_ran(struct pevt_context *ctx, void *data, bool active)
{
	struct inherit_install *ii = data;
	struct pevt_event *leader, *event;
	u64 ran;

	if (ctx->dead)
		return -ESRCH;
	/* No member can fail now: the same context, its lock held. */
	list_for_each_entry(event, ii->members, child_entry)
		__pevt_install(ctx, event, false);
	leader = list_first_entry(ii->members, struct pevt_event, child_entry);
	if (active && leader->state == PEVT_STATE_INACTIVE &&
	    event_filter_match(leader))
		ctx_sched_in_new(ctx, leader);
	ran = pevt_inherit_ran(ii->pending);
	list_for_each_entry(event, ii->members, child_entry) {
		if (event->state >= PEVT_STATE_INACTIVE)
			event->total_time_enabled += ran;
		if (event->state == PEVT_STATE_ACTIVE) {
			event->total_time_running += ran;
			if (pevt_attr_is_clock(&event->attr))
				local64_add(ran, &event->count);
		}
	}
	return 0;
}

/**
 * pevt_inherit_alloc() - inherit_event(), first half: a child of @pe for
 * @task, not installed yet (pevt_inherit_install() does that).
 * @pe: an inherit event of the forking task's context (itself an opened
 *	event or a child)
 * @task: the new task (current: called from its task work)
 *
 * pevt_inherit_mutex and @pe's ctx->mutex held; process context.  The
 * child counts for the event the user opened (->parent), starts enabled
 * if @pe is, and has no fd, buffer or per-user charge of its own.
 *
 * Return: the child, or an ERR_PTR.
 */
struct pevt_event *pevt_inherit_alloc(struct pevt_event *pe, struct task_struct *task)
{
	struct pevt_event *event;
	struct pevt_context *ctx;
	int ret;

	event = kzalloc(sizeof(*event), GFP_KERNEL);
	if (!event)
		return ERR_PTR(-ENOMEM);
	pevt_event_init(event, &pe->attr, pe->cpu,
			pe->state >= PEVT_STATE_INACTIVE ? PEVT_STATE_INACTIVE :
							   PEVT_STATE_OFF);
	event->parent = pe->parent ?: pe;
	/* pids in the child's records as the opener of the parent sees them */
	event->ns = pe->ns ? get_pid_ns(pe->ns) : NULL;

	ret = pevt_init_event_source(event);
	if (ret)
		goto err;
	ctx = ctx_get_task(task);
	if (IS_ERR(ctx)) {
		ret = PTR_ERR(ctx);
		goto err;
	}
	event->ctx = ctx;
	return event;
err:
	pevt_event_free(event);
	return ERR_PTR(ret);
}

/**
 * pevt_inherit_install() - inherit_event(), second half: a child group
 * into its task's context, whole (__pevt_install_group_ran()).
 * @members: from pevt_inherit_alloc(), chained by their child_entry: the
 *	leader's child, then the siblings' children (all of one task); not
 *	empty.  Each goes onto its parent's child list, or is freed.
 * @pending: the task's inherit work: pevt_inherit_ran() tells how long
 *	the task has run since its first switch-in
 *
 * Same locking as pevt_inherit_alloc().  It starts as perf's child group,
 * made at the fork and scheduled in at the first switch-in, is at its
 * install: that time enabled, running if it runs, and counted if it is a
 * clock.  On failure the members are freed.
 *
 * Return: 0 or -errno.
 */
int pevt_inherit_install(struct list_head *members, void *pending)
{
	struct inherit_install ii = { .members = members, .pending = pending };
	struct pevt_event *leader = list_first_entry(members, struct pevt_event, child_entry);
	struct pevt_context *ctx = leader->ctx;
	struct pevt_event *event, *tmp;
	int ret;

	list_for_each_entry(event, members, child_entry)
		event->group_leader = leader;
	/* A new context, locked only here and under pevt_inherit_mutex. */
	mutex_lock_nested(&ctx->mutex, SINGLE_DEPTH_NESTING);
	ctx->inherited = true;
	ret = ctx_function_call(ctx, __pevt_install_group_ran, &ii);
	if (!ret)
		pevt_ctx_changed(ctx);
	mutex_unlock(&ctx->mutex);
	list_for_each_entry_safe(event, tmp, members, child_entry) {
		if (ret) {
			list_del_init(&event->child_entry);
			pevt_event_free(event);
		} else {
			list_move_tail(&event->child_entry, &event->parent->child_list);
		}
	}
	return ret;
}

/**
 * pevt_event_remove_free() - take a child event out of its context, free it.
 * @event: an inherited event, already off its parent's child list
 *
 * Process context, its ctx->mutex not held.
 */
void pevt_event_remove_free(struct pevt_event *event)
{
	struct pevt_context *ctx = event->ctx;

	mutex_lock_nested(&ctx->mutex, SINGLE_DEPTH_NESTING);
	ctx_function_call(ctx, __pevt_remove, event);
	pevt_ctx_changed(ctx);
	mutex_unlock(&ctx->mutex);
	pevt_event_free(event);
}

/**
 * pevt_ctx_enable_on_exec() - the end of perf_event_enable_on_exec() for a
 * task context.
 * @ctx: the context of current, which just exec'd
 *
 * Process context.  The events were enabled at the exec's edge
 * (pevt_ctx_exec_edge()); here each one's bit is cleared, so it is enabled
 * once, as perf does, and the rotation re-plans.
 */
void pevt_ctx_enable_on_exec(struct pevt_context *ctx)
{
	struct pevt_event *event;

	mutex_lock(&ctx->mutex);
	list_for_each_entry(event, &ctx->event_list, event_entry) {
		if (!event->attr.enable_on_exec)
			continue;
		event->attr.enable_on_exec = 0;
		ctx_function_call(ctx, __pevt_enable, event);
	}
	pevt_ctx_changed(ctx);
	mutex_unlock(&ctx->mutex);
}

/**
 * pevt_ctx_exec_edge() - the exec's edge: enable_on_exec events start,
 * remove_on_exec events stop.
 * @ctx: the context of current, which is exec'ing (past the point of no
 *	 return, where perf_event_exec() runs)
 *
 * Any context, preemption disabled (a tracepoint probe).  As perf's
 * perf_event_exec(): enable_on_exec events are enabled here, so the
 * exec's COMM, the new program's MMAPs and its loading are theirs (until
 * 2026-11-29 pevt enabled them in the exec's task work, on the way to
 * user space: the program's mappings were missed and a tree's task-clock
 * read 0.977 of stock's); the task work clears the bit and re-plans
 * (pevt_ctx_enable_on_exec()).  Every remove_on_exec event stops counting
 * now and goes to PEVT_STATE_EXIT, which no ioctl leaves; the task work
 * takes it out of the context before the new program runs.
 */
void pevt_ctx_exec_edge(struct pevt_context *ctx)
{
	struct pevt_event *event;
	unsigned long flags;
	bool active;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	active = ctx->active_cpu == smp_processor_id();
	if (active)
		pevt_update_context_time(ctx);
	list_for_each_entry(event, &ctx->event_list, event_entry) {
		if (!event->attr.enable_on_exec ||
		    event->state >= PEVT_STATE_INACTIVE)
			continue;
		__pevt_enable(ctx, event, active);
		/* perf_event_enable_on_exec(): unclone_ctx() */
		WRITE_ONCE(ctx->clone_root, 0);
	}
	list_for_each_entry(event, &ctx->event_list, event_entry) {
		if (!event->attr.remove_on_exec ||
		    event->state == PEVT_STATE_EXIT)
			continue;
		__pevt_disable(ctx, event, active);
		pevt_event_set_state(event, PEVT_STATE_EXIT);
	}
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
}

/**
 * pevt_event_remove() - take @event out of its context (it keeps its
 * count, times and state).
 * @event: an event; its ctx->mutex held
 */
void pevt_event_remove(struct pevt_event *event)
{
	ctx_function_call(event->ctx, __pevt_remove, event);
}

static atomic64_t pevt_ctx_uids = ATOMIC64_INIT(0);
static atomic64_t pevt_ctx_key_gens = ATOMIC64_INIT(0);

/**
 * pevt_ctx_key_changed() - the groups rotid keys on may have changed
 * @ctx: the context, ctx->lock held (or not yet visible)
 *
 * A new value, never used by any context before: a tick that finds the
 * generations it last walked the key at skips the walk (sched.c).
 */
void pevt_ctx_key_changed(struct pevt_context *ctx)
{
	WRITE_ONCE(ctx->key_gen, atomic64_inc_return(&pevt_ctx_key_gens));
	sched_key_changed(ctx);
}

/**
 * pevt_ctx_init() - initialise an empty context.
 * @ctx: the context
 * @cpu: CPU of a CPU context, -1 for a task context
 * @task: task of a task context (reference passed in), or NULL
 */
void pevt_ctx_init(struct pevt_context *ctx, int cpu, struct task_struct *task)
{
	raw_spin_lock_init(&ctx->lock);
	lockdep_set_class(&ctx->lock, task ? &pevt_task_ctx_lock_key
					   : &pevt_cpu_ctx_lock_key);
	mutex_init(&ctx->mutex);
	INIT_LIST_HEAD(&ctx->pinned_groups);
	INIT_LIST_HEAD(&ctx->flexible_groups);
	INIT_LIST_HEAD(&ctx->event_list);
	INIT_HLIST_NODE(&ctx->hash_node);
	refcount_set(&ctx->refcount, 1);
	ctx->uid = atomic64_inc_return(&pevt_ctx_uids);
	pevt_ctx_key_changed(ctx);
	ctx->cpu = cpu;
	ctx->task = task;
	ctx->active_cpu = task ? -1 : cpu;
}

/*
 * debugfs pevt/stats: objects alive now.  After every event fd is closed
 * and every mapping gone, all must drop back to 0 (buffers and task
 * contexts after an RCU grace period).
 */
static struct dentry *pevt_dbg_dir;

static int pevt_stats_show(struct seq_file *m, void *v)
{
	seq_printf(m, "events %d\n", atomic_read(&pevt_nr_live_events));
	seq_printf(m, "task_contexts %d\n", atomic_read(&pevt_nr_live_task_ctx));
	seq_printf(m, "buffers %d\n", atomic_read(&rb_nr_live));
	seq_printf(m, "wakeups_direct %lld\n",
		   (long long)atomic64_read(&rb_wakeups_direct));
	seq_printf(m, "wakeups_irq_work %lld\n",
		   (long long)atomic64_read(&rb_wakeups_irq_work));
	seq_printf(m, "inherited %d\n", atomic_read(&pevt_inherit_children));
	seq_printf(m, "inherit_failed %d\n", atomic_read(&pevt_inherit_failed));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pevt_stats);

/**
 * pevt_core_init() - create debugfs pevt/stats.
 *
 * Return: 0 (debugfs is optional).
 */
int pevt_core_init(void)
{
	pevt_dbg_dir = debugfs_create_dir("pevt", NULL);
	debugfs_create_file("stats", 0444, pevt_dbg_dir, NULL, &pevt_stats_fops);
	return 0;
}

/* The debugfs directory "pevt" (NULL or an error pointer without debugfs). */
struct dentry *pevt_debugfs_dir(void)
{
	return pevt_dbg_dir;
}

/**
 * pevt_core_exit() - counterpart of pevt_core_init().
 */
void pevt_core_exit(void)
{
	debugfs_remove_recursive(pevt_dbg_dir);
}
