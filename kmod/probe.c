// SPDX-License-Identifier: GPL-2.0
/*
 * The bench instrument: one timer for the stock kernel's multiplexing and
 * context-switch work and for pevt's own, so `pevt bench fairness` can
 * quote tick and switch cost for both subjects measured the same way.
 *
 * A kretprobe pair per target: the entry handler stamps local_clock(),
 * the return handler adds the elapsed time and one call to the target's
 * counters.  Targets:
 *
 *   stock_tick       perf_mux_hrtimer_handler()   stock multiplexing tick
 *   pevt_tick        pevt_sched_tick()            pevt's tick
 *   stock_sched_out  __perf_event_task_sched_out() stock switch, out half
 *   stock_sched_in   __perf_event_task_sched_in()  stock switch, in half
 *   pevt_switch      pevt's sched_switch probe    pevt switch, out half (and
 *                                                 the in half without the
 *                                                 finish_task_switch kprobe)
 *   pevt_switch_in   pevt's finish_task_switch kprobe handler: timed inside
 *                    the handler (a kretprobe cannot fire there), printed
 *                    in the same format
 *   pevt_replan      sched_replan_ipi()           pevt's replan/take IPI
 *
 * All of them run with irqs off: max_ns is the worst irq-off time of one
 * tick, switch or IPI (rot_plan() runs in a work item, not in any of them).
 *
 * The probes cost the same (int3 or an optimised jump, plus the two
 * handlers) on every target, so absolute numbers carry that overhead
 * while ratios between subjects measured in one run do not depend on it.
 *
 * Each target also keeps a histogram of its calls' times (probe_hist.h):
 * a mean is moved 10-50% by one call the emulator stalled for
 * milliseconds (under TCG), a median is not.
 *
 * Nothing is registered until asked: debugfs pevt/probes takes "on",
 * "off" and "reset"; reading it prints one line per target, then one
 * "hist NAME LO:COUNT ..." line per target (non-empty buckets).  Kernels
 * without CONFIG_KRETPROBES (the debug kernel) have no such file.
 */
#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "internal.h"
#include "pevt_sched.h"
#include "probe_hist.h"

#ifdef CONFIG_KRETPROBES

struct probe_target {
	const char	*name;
	const char	*symbol;	/* stock kernel function, or NULL */
	void		*(*addr)(void);	/* pevt function */
	struct kretprobe rp;
	int		err;		/* of the last registration, 0 */
	bool		armed;
	atomic64_t	calls, ns;
	atomic64_t	max_ns;		/* longest single call */
	atomic_t	hist[PEVT_HIST_BUCKETS];
};

static struct probe_target targets[] = {
	{ .name = "stock_tick",		.symbol = "perf_mux_hrtimer_handler" },
	{ .name = "pevt_tick",		.addr = pevt_sched_tick_fn },
	{ .name = "stock_sched_out",	.symbol = "__perf_event_task_sched_out" },
	{ .name = "stock_sched_in",	.symbol = "__perf_event_task_sched_in" },
	{ .name = "pevt_switch",	.addr = pevt_context_switch_fn },
	{ .name = "pevt_replan",	.addr = pevt_sched_replan_fn },
};

static DEFINE_MUTEX(probe_mutex);
static struct dentry *probe_dbg;

/* pevt_switch_in: context.c's kprobe handler times itself while armed. */
bool pevt_probe_armed;
static atomic64_t switch_in_calls, switch_in_ns, switch_in_max;
static atomic_t switch_in_hist[PEVT_HIST_BUCKETS];

void pevt_probe_account_switch_in(u64 d)
{
	s64 old = atomic64_read(&switch_in_max);

	atomic_inc(&switch_in_hist[pevt_hist_bucket(d)]);
	atomic64_inc(&switch_in_calls);
	atomic64_add(d, &switch_in_ns);
	while ((s64)d > old && !atomic64_try_cmpxchg(&switch_in_max, &old, d))
		;
}

static int probe_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(u64 *)ri->data = local_clock();
	return 0;
}

static int probe_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct probe_target *t = container_of(get_kretprobe(ri),
					      struct probe_target, rp);
	u64 d = local_clock() - *(u64 *)ri->data;
	s64 old = atomic64_read(&t->max_ns);

	atomic_inc(&t->hist[pevt_hist_bucket(d)]);
	atomic64_inc(&t->calls);
	atomic64_add(d, &t->ns);
	while ((s64)d > old && !atomic64_try_cmpxchg(&t->max_ns, &old, d))
		;
	return 0;
}

static void probes_reset(void)
{
	int i, b;

	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		atomic64_set(&targets[i].calls, 0);
		atomic64_set(&targets[i].ns, 0);
		atomic64_set(&targets[i].max_ns, 0);
		for (b = 0; b < PEVT_HIST_BUCKETS; b++)
			atomic_set(&targets[i].hist[b], 0);
	}
	for (b = 0; b < PEVT_HIST_BUCKETS; b++)
		atomic_set(&switch_in_hist[b], 0);
	atomic64_set(&switch_in_calls, 0);
	atomic64_set(&switch_in_ns, 0);
	atomic64_set(&switch_in_max, 0);
}

static void probes_off(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		if (!targets[i].armed)
			continue;
		unregister_kretprobe(&targets[i].rp);
		targets[i].armed = false;
	}
	WRITE_ONCE(pevt_probe_armed, false);
}

/* Arm every target that can be; a target that cannot keeps its errno. */
static void probes_on(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		struct probe_target *t = &targets[i];

		if (t->armed)
			continue;
		memset(&t->rp, 0, sizeof(t->rp));
		if (t->symbol)
			t->rp.kp.symbol_name = t->symbol;
		else
			t->rp.kp.addr = t->addr();
		t->rp.entry_handler = probe_entry;
		t->rp.handler = probe_return;
		t->rp.data_size = sizeof(u64);
		t->rp.maxactive = 4 * num_possible_cpus();
		t->err = register_kretprobe(&t->rp);
		t->armed = !t->err;
	}
	WRITE_ONCE(pevt_probe_armed, true);
}

static void hist_show(struct seq_file *m, const char *name, const atomic_t *hist)
{
	int b;

	seq_printf(m, "hist %s", name);
	for (b = 0; b < PEVT_HIST_BUCKETS; b++) {
		int c = atomic_read(&hist[b]);

		if (c)
			seq_printf(m, " %llu:%d", pevt_hist_lo(b), c);
	}
	seq_putc(m, '\n');
}

static int probes_show(struct seq_file *m, void *v)
{
	int i;

	mutex_lock(&probe_mutex);
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		struct probe_target *t = &targets[i];

		if (!t->armed && t->err)
			seq_printf(m, "%s unavailable %d\n", t->name, t->err);
		else
			seq_printf(m, "%s armed %d calls %lld ns %lld missed %d max_ns %lld\n",
				   t->name, t->armed,
				   (long long)atomic64_read(&t->calls),
				   (long long)atomic64_read(&t->ns),
				   t->armed ? t->rp.nmissed : 0,
				   (long long)atomic64_read(&t->max_ns));
	}
	seq_printf(m, "pevt_switch_in armed %d calls %lld ns %lld missed 0 max_ns %lld\n",
		   pevt_probe_armed, (long long)atomic64_read(&switch_in_calls),
		   (long long)atomic64_read(&switch_in_ns),
		   (long long)atomic64_read(&switch_in_max));
	for (i = 0; i < ARRAY_SIZE(targets); i++)
		if (targets[i].armed || !targets[i].err)
			hist_show(m, targets[i].name, targets[i].hist);
	hist_show(m, "pevt_switch_in", switch_in_hist);
	mutex_unlock(&probe_mutex);
	return 0;
}

static int probes_open(struct inode *inode, struct file *file)
{
	return single_open(file, probes_show, NULL);
}

static ssize_t probes_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[16];

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&probe_mutex);
	if (sysfs_streq(buf, "on")) {
		probes_reset();
		probes_on();
	} else if (sysfs_streq(buf, "off")) {
		probes_off();
	} else if (sysfs_streq(buf, "reset")) {
		probes_reset();
	} else {
		len = -EINVAL;
	}
	mutex_unlock(&probe_mutex);
	return len;
}

static const struct file_operations probes_fops = {
	.owner		= THIS_MODULE,
	.open		= probes_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= probes_write,
};

/**
 * pevt_probe_init() - create debugfs pevt/probes (nothing armed yet).
 * @dir: the pevt debugfs directory
 */
void pevt_probe_init(struct dentry *dir)
{
	probe_dbg = debugfs_create_file("probes", 0600, dir, NULL, &probes_fops);
}

/**
 * pevt_probe_exit() - remove the file, then disarm what is armed.
 *
 * Called before the scheduler and the contexts go: the probed functions
 * are still there while the kretprobes are unregistered.
 */
void pevt_probe_exit(void)
{
	debugfs_remove(probe_dbg);
	mutex_lock(&probe_mutex);
	probes_off();
	mutex_unlock(&probe_mutex);
}

#else /* !CONFIG_KRETPROBES */

void pevt_probe_init(struct dentry *dir) { }
void pevt_probe_exit(void) { }

#endif
