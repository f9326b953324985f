// SPDX-License-Identifier: GPL-2.0
/*
 * pevt permissions and limits.
 *
 * /dev/pevt is mode 0666 because perf_event_open(2) is callable by anyone:
 * what protects the system is the check on each request, and pevt makes
 * the same checks, with the same errnos, as the stock syscall (6.1/6.12
 * kernel/events/core.c, including Debian's paranoid level 3):
 *
 *  - perf_event_paranoid > 2 and no CAP_SYS_ADMIN: nothing (-EACCES);
 *  - exclude_kernel == 0 needs paranoid <= 1 or CAP_PERFMON (-EACCES,
 *    perf_allow_kernel());
 *  - a CPU-wide event needs paranoid <= 0 or CAP_PERFMON (-EACCES,
 *    perf_allow_cpu());
 *  - an event on another task needs CAP_PERFMON or ptrace read access to
 *    it (-EACCES, perf_check_permission()).
 *
 * Two kernel symbols perf uses are not exported to modules, so pevt has
 * its own equivalents:
 *  - sysctl_perf_event_paranoid: the value is read, on every check, from
 *    /proc/sys/kernel/perf_event_paranoid through a file opened once at
 *    module load (in insmod's mount namespace, so a user cannot mount
 *    something else over the path in their own namespace and choose the
 *    value).  If it cannot be opened or read, pevt assumes level 3.
 *  - ptrace_may_access(): perm_may_access_task() repeats the steps of
 *    __ptrace_may_access() for PTRACE_MODE_READ_REALCREDS, minus the LSM
 *    hook (security_ptrace_access_check() is not exported either).
 *
 * Limits: every event counts against its opener's real uid (as perf
 * charges ring-buffer pages to current_user()), at most
 * max_events_per_user (-EMFILE beyond, like inotify_init()'s per-user
 * instance limit); a group holds at most max_group_events events
 * (-EINVAL; perf has no count limit, only perf_event_validate_size()'s
 * 16 KiB read size, -E2BIG, which core.c applies too).
 * CAP_SYS_ADMIN is not counted, as RLIMIT_MEMLOCK does not bind it.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/magic.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uidgid.h>

#include "internal.h"
#include "perm.h"

static unsigned int max_events_per_user = 4096;
module_param(max_events_per_user, uint, 0644);
MODULE_PARM_DESC(max_events_per_user,
		 "events a uid may have open at once, CAP_SYS_ADMIN exempt (EMFILE beyond)");

static unsigned int max_group_events = 256;
module_param(max_group_events, uint, 0644);
MODULE_PARM_DESC(max_group_events, "events in one group, leader included (EINVAL beyond)");

/* ---- perf_event_paranoid ------------------------------------------- */

#define PERM_PARANOID_PATH	"/proc/sys/kernel/perf_event_paranoid"
#define PERM_PARANOID_UNKNOWN	3	/* fail closed: Debian's strictest level */
#define PERM_RATE_PATH		"/proc/sys/kernel/perf_event_max_sample_rate"
#define PERM_RATE_UNKNOWN	100000	/* perf's DEFAULT_MAX_SAMPLE_RATE */

static struct file *perm_paranoid_file;
static struct file *perm_rate_file;

/**
 * perm_proc_int() - an integer sysctl, through its procfs file opened at load.
 * @f: the file (perm_proc_open()), or NULL
 * @dflt: returned if it cannot be read
 *
 * The sysctl handler formats the live value on every read (proc_dointvec),
 * so a change by the administrator is seen by the next open, as by
 * perf_event_open().  Process context.
 *
 * Return: the value or @dflt.
 */
int perm_proc_int(struct file *f, int dflt)
{
	char buf[16];
	loff_t pos = 0;
	ssize_t n;
	int val;

	if (!f)
		return dflt;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	if (n <= 0)
		return dflt;
	buf[n] = '\0';
	return kstrtoint(strim(buf), 10, &val) ? dflt : val;
}

/**
 * perm_paranoid() - the current kernel.perf_event_paranoid.
 *
 * Return: the level, or PERM_PARANOID_UNKNOWN if it cannot be read.
 */
int perm_paranoid(void)
{
	return perm_proc_int(perm_paranoid_file, PERM_PARANOID_UNKNOWN);
}

/**
 * perm_max_sample_rate() - the current kernel.perf_event_max_sample_rate.
 *
 * Process context (reads procfs).
 *
 * Return: samples per second, at least 1; perf's default (100000) if the
 * file cannot be read.
 */
int perm_max_sample_rate(void)
{
	return max(perm_proc_int(perm_rate_file, PERM_RATE_UNKNOWN), 1);
}

/* ---- open checks ----------------------------------------------------- */

/**
 * perm_check_attr() - the attr-only checks at the top of perf_event_open().
 * @attr: the attr being opened, already validated
 *
 * Return: 0, or -EACCES like perf_event_open(): paranoid > 2 without
 * CAP_SYS_ADMIN (Debian), kernel counting (exclude_kernel == 0) at
 * paranoid > 1 without CAP_PERFMON (perf_allow_kernel()).
 */
int perm_check_attr(const struct perf_event_attr *attr)
{
	int paranoid = perm_paranoid();

	/* Debian's perf_paranoid_any(): CAP_SYS_ADMIN, not CAP_PERFMON. */
	if (paranoid > 2 && !capable(CAP_SYS_ADMIN))
		return -EACCES;
	if (!attr->exclude_kernel && paranoid > 1 && !perfmon_capable())
		return -EACCES;
	return 0;
}

/**
 * perm_check_tp_raw() - may the caller sample a tracepoint's raw record?
 * @attr: the attr being opened
 * @task: a task event (pid != -1)
 *
 * perf_trace_event_perm(), from perf_event_alloc() (before the CPU and
 * task checks): a sampling tracepoint event with PERF_SAMPLE_RAW needs
 * paranoid -1 or CAP_PERFMON, except on a task for a
 * TRACE_EVENT_FL_CAP_ANY tracepoint (raw_syscalls:sys_enter, the only
 * one pevt has).
 *
 * Return: 0 or -EPERM.
 */
int perm_check_tp_raw(const struct perf_event_attr *attr, bool task)
{
	if (attr->type != PERF_TYPE_TRACEPOINT || task ||
	    !(attr->sample_type & PERF_SAMPLE_RAW) || !attr->sample_period)
		return 0;
	if (perm_paranoid() > -1 && !perfmon_capable())
		return -EPERM;
	return 0;
}

/**
 * perm_check_cpu() - may the caller open a CPU-wide event (pid == -1)?
 *
 * Return: 0, or -EACCES at paranoid > 0 without CAP_PERFMON
 * (perf_allow_cpu(), called from perf's find_get_context()).
 */
int perm_check_cpu(void)
{
	if (perm_paranoid() > 0 && !perfmon_capable())
		return -EACCES;
	return 0;
}

/*
 * __ptrace_may_access(task, PTRACE_MODE_READ_REALCREDS) without the LSM
 * hook.  task_lock() keeps task->mm stable, as in ptrace_may_access().
 */
static bool perm_may_access_task(struct task_struct *task)
{
	const struct cred *cred, *tcred;
	struct mm_struct *mm;
	bool ok;

	/* Don't let anything deny introspection. */
	if (same_thread_group(task, current))
		return true;

	task_lock(task);
	rcu_read_lock();
	cred = current_cred();
	tcred = __task_cred(task);
	/* REALCREDS: the caller's real uid/gid against all three of the target's. */
	ok = (uid_eq(cred->uid, tcred->euid) &&
	      uid_eq(cred->uid, tcred->suid) &&
	      uid_eq(cred->uid, tcred->uid) &&
	      gid_eq(cred->gid, tcred->egid) &&
	      gid_eq(cred->gid, tcred->sgid) &&
	      gid_eq(cred->gid, tcred->gid)) ||
	     ns_capable(tcred->user_ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	if (ok) {
		/*
		 * A task dropping privileges and becoming non-dumpable does
		 * it in that order: read the dumpable flag after the creds.
		 * Pairs with the write barrier in commit_creds().
		 */
		smp_rmb();
		mm = task->mm;
		if (mm && get_dumpable(mm) != SUID_DUMP_USER &&
		    !ns_capable(mm->user_ns, CAP_SYS_PTRACE))
			ok = false;
	}
	task_unlock(task);
	return ok;
}

/**
 * perm_check_task() - may the caller monitor @task?
 * @task: the target (a reference held)
 *
 * perf_check_permission() for an attr without sigtrap: CAP_PERFMON, or
 * ptrace read access with the caller's real credentials.
 *
 * Return: 0 or -EACCES (perf's errno, not ptrace's -EPERM).
 */
int perm_check_task(struct task_struct *task)
{
	if (perfmon_capable() || perm_may_access_task(task))
		return 0;
	return -EACCES;
}

/**
 * perm_check_group() - may @leader's group take one more event?
 * @leader: the group leader, its ctx->mutex held (nr_siblings stable)
 *
 * Return: 0, or -EINVAL if the group already has max_group_events events.
 */
int perm_check_group(const struct pevt_event *leader)
{
	if (leader->nr_siblings + 1 >= READ_ONCE(max_group_events))
		return -EINVAL;
	return 0;
}

/**
 * perm_exec_detach() - must @task's events stop at this exec?
 * @task: current, in its sched_process_exec tracepoint
 *
 * begin_new_exec() calls perf_event_exit_task() when the new credentials
 * leave the task non-dumpable (setuid/setgid binary, file capabilities):
 * events opened on the old, unprivileged image must not watch the new
 * one.  pevt does the same from the exec tracepoint, which fires after
 * the credentials are committed and before the new image runs user code.
 *
 * Return: true if the task context must be detached.
 */
bool perm_exec_detach(struct task_struct *task)
{
	return task->mm && get_dumpable(task->mm) != SUID_DUMP_USER;
}

/* ---- per-user event count ------------------------------------------ */

/* One per uid with open events; freed with its last event. */
struct perm_user {
	struct hlist_node	node;		/* perm_users */
	kuid_t			uid;
	unsigned int		nr_events;	/* perm_users_lock */
};

static DEFINE_HASHTABLE(perm_users, 6);
static DEFINE_SPINLOCK(perm_users_lock);

static struct perm_user *perm_user_find(kuid_t uid)
{
	struct perm_user *u;

	hash_for_each_possible(perm_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/**
 * perm_charge() - count one more event against the caller's real uid.
 *
 * Return: the charge to hand back to perm_uncharge() when the event is
 * freed, NULL if the caller is exempt (CAP_SYS_ADMIN), ERR_PTR(-EMFILE)
 * at max_events_per_user, ERR_PTR(-ENOMEM).
 */
struct perm_user *perm_charge(void)
{
	struct perm_user *u, *new;
	kuid_t uid = current_uid();

	/* noaudit: being below the limit is not a privileged operation. */
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return NULL;

	/* Allocated up front: the lock is a spinlock. */
	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return ERR_PTR(-ENOMEM);

	spin_lock(&perm_users_lock);
	u = perm_user_find(uid);
	if (!u) {
		u = new;
		new = NULL;
		u->uid = uid;
		hash_add(perm_users, &u->node, __kuid_val(uid));
	}
	if (u->nr_events >= READ_ONCE(max_events_per_user)) {
		if (!u->nr_events) {
			hash_del(&u->node);
			new = u;	/* freed below */
		}
		u = ERR_PTR(-EMFILE);
	} else {
		u->nr_events++;
	}
	spin_unlock(&perm_users_lock);
	kfree(new);
	return u;
}

/**
 * perm_uncharge() - undo perm_charge().
 * @user: what perm_charge() returned (NULL: nothing was charged)
 */
void perm_uncharge(struct perm_user *user)
{
	if (!user)
		return;
	spin_lock(&perm_users_lock);
	if (--user->nr_events)
		user = NULL;
	else
		hash_del(&user->node);
	spin_unlock(&perm_users_lock);
	kfree(user);
}

/* ---- module init/exit ---------------------------------------------- */

/**
 * perm_proc_open() - open a sysctl file for perm_proc_int(), at load.
 * @path: under /proc/sys
 * @what: what a missing file means, for the warning
 *
 * Runs in insmod's context (root, its mount namespace).  The file must be
 * on procfs.
 *
 * Return: the file, or NULL (with a warning in the log).
 */
struct file *perm_proc_open(const char *path, const char *what)
{
	struct file *f = filp_open(path, O_RDONLY, 0);

	if (IS_ERR(f)) {
		pr_warn("pevt: cannot open %s (%ld): %s\n", path, PTR_ERR(f), what);
		return NULL;
	}
	if (file_inode(f)->i_sb->s_magic != PROC_SUPER_MAGIC) {
		pr_warn("pevt: %s is not on procfs: %s\n", path, what);
		filp_close(f, NULL);
		return NULL;
	}
	return f;
}

/**
 * perm_init() - open the paranoid and sample-rate sysctl files.
 *
 * Runs in insmod's context (root, its mount namespace).  The files must be
 * on procfs; anything else is ignored: pevt then assumes paranoid level 3
 * and perf's default sample rate.
 *
 * Return: 0 (a missing file is not fatal: pevt fails closed).
 */
int perm_init(void)
{
	perm_paranoid_file = perm_proc_open(PERM_PARANOID_PATH,
					    "unprivileged opens refused");
	perm_rate_file = perm_proc_open(PERM_RATE_PATH,
					"sample rate limit 100000/s");
	return 0;
}

/**
 * perm_exit() - counterpart of perm_init().  No event is open any more.
 */
void perm_exit(void)
{
	if (perm_paranoid_file)
		filp_close(perm_paranoid_file, NULL);
	if (perm_rate_file)
		filp_close(perm_rate_file, NULL);
	perm_paranoid_file = NULL;
	perm_rate_file = NULL;
}
