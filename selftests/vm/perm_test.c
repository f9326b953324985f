// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions: who may open which event, at every perf_event_paranoid
 * level (-1..3, Debian's 3 included), as nobody, as nobody with
 * CAP_PERFMON or CAP_SYS_PTRACE only, and as root.  Each case is opened
 * through /dev/pevt and through the stock perf_event_open(2) with the same
 * attr, pid and cpu, and both must give the errno perf documents: the
 * stock kernel is the reference, the table below says what it is.
 */
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "common.h"

#define NOBODY		65534
#define NOGROUP		65534
#define OTHER_GID	65533

/* The targets a prober opens events on. */
enum target {
	T_SELF,		/* pid 0 */
	T_CPU,		/* pid -1, cpu 0 */
	T_INIT,		/* pid 1: root's */
	T_SAME,		/* another process, same uid/gid, dumpable */
	T_NODUMP,	/* same uid/gid, prctl(PR_SET_DUMPABLE, 0) */
	T_OTHERGID,	/* same uid, other gid, dumpable */
	NR_TARGETS,
};

static const char * const target_name[NR_TARGETS] = {
	"self", "cpu0", "init", "same-uid", "same-uid-nodump", "same-uid-other-gid",
};

/* Privileges of the prober. */
enum who { W_NOBODY, W_PERFMON, W_PTRACE, W_ROOT };

struct outcome {
	int pevt;	/* 0 or -errno */
	int stock;
};

/* [target][exclude_kernel] */
struct results {
	struct outcome o[NR_TARGETS][2];
	int setup_err;
};

static int capset_only(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	data[cap / 32].effective = 1u << (cap % 32);
	data[cap / 32].permitted = 1u << (cap % 32);
	return syscall(__NR_capset, &hdr, data);
}

/* Become nobody, keeping only @cap (-1: none). */
static int become_nobody(int cap)
{
	if (cap >= 0 && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -1;
	if (setgroups(0, NULL) || setgid(NOGROUP) || setuid(NOBODY))
		return -1;
	if (cap >= 0 && capset_only(cap))
		return -1;
	return 0;
}

static int open_errno(int fd)
{
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static void probe(struct results *r, const pid_t *pids)
{
	struct perf_event_attr attr;
	int dev = pevt_dev_open();

	if (dev < 0) {
		r->setup_err = -errno;
		return;
	}
	for (int t = 0; t < NR_TARGETS; t++) {
		for (int ek = 0; ek < 2; ek++) {
			int cpu = t == T_CPU ? 0 : -1;

			pevt_attr_clock(&attr, t == T_CPU ? PERF_COUNT_SW_CPU_CLOCK :
					PERF_COUNT_SW_TASK_CLOCK, 0, 1);
			attr.exclude_kernel = ek;
			r->o[t][ek].pevt = open_errno(pevt_open(dev, &attr, pids[t],
								cpu, -1, 0));
			r->o[t][ek].stock = open_errno(sys_perf_event_open(&attr,
							pids[t], cpu, -1, 0));
		}
	}
	close(dev);
}

/*
 * A target process: drops to @uid/@gid, sets its dumpable flag, says it
 * is ready on @ready and waits to be killed.
 */
static pid_t start_target(uid_t uid, gid_t gid, int dumpable)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		/* setuid() made it non-dumpable (suid_dumpable 0): set it back. */
		if (setgroups(0, NULL) || setgid(gid) || setuid(uid) ||
		    prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0))
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid > 0 && read(p[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(p[0]);
	return pid;
}

/* What perf_event_open() gives (6.1/6.12 kernel/events/core.c + Debian). */
static int expected(int paranoid, enum who who, enum target t, int ek)
{
	bool sys_admin = who == W_ROOT;
	bool perfmon = who == W_ROOT || who == W_PERFMON;
	bool ptrace = who == W_ROOT || who == W_PTRACE;

	/* Debian: level 3 refuses everything without CAP_SYS_ADMIN. */
	if (paranoid > 2 && !sys_admin)
		return -EACCES;
	/* perf_allow_kernel() */
	if (!ek && paranoid > 1 && !perfmon)
		return -EACCES;
	switch (t) {
	case T_SELF:
		return 0;
	case T_CPU:	/* perf_allow_cpu() */
		return paranoid > 0 && !perfmon ? -EACCES : 0;
	case T_SAME:
		return 0;
	case T_INIT:	/* uid differs: CAP_SYS_PTRACE (or CAP_PERFMON) */
	case T_NODUMP:	/* not dumpable: CAP_SYS_PTRACE in its mm's ns */
	case T_OTHERGID:/* gid differs */
		return perfmon || ptrace ? 0 : -EACCES;
	default:
		return -EINVAL;
	}
}

FIXTURE(perm) {
	int saved;
	pid_t pids[NR_TARGETS];
	struct results *r;
};

FIXTURE_VARIANT(perm) {
	int paranoid;
};

FIXTURE_VARIANT_ADD(perm, paranoid_m1) { .paranoid = -1 };
FIXTURE_VARIANT_ADD(perm, paranoid_0) { .paranoid = 0 };
FIXTURE_VARIANT_ADD(perm, paranoid_1) { .paranoid = 1 };
FIXTURE_VARIANT_ADD(perm, paranoid_2) { .paranoid = 2 };
FIXTURE_VARIANT_ADD(perm, paranoid_3) { .paranoid = 3 };

FIXTURE_SETUP(perm)
{
	self->saved = paranoid_get();
	ASSERT_NE(PARANOID_UNKNOWN, self->saved) TH_LOG("no %s", PERF_PARANOID_PATH);
	ASSERT_EQ(0, paranoid_set(variant->paranoid));
	ASSERT_EQ(variant->paranoid, paranoid_get());

	self->r = mmap(NULL, sizeof(*self->r), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->r);
	self->pids[T_SELF] = 0;
	self->pids[T_CPU] = -1;
	self->pids[T_INIT] = 1;
	self->pids[T_SAME] = start_target(NOBODY, NOGROUP, 1);
	self->pids[T_NODUMP] = start_target(NOBODY, NOGROUP, 0);
	self->pids[T_OTHERGID] = start_target(NOBODY, OTHER_GID, 1);
	ASSERT_LT(0, self->pids[T_SAME]);
	ASSERT_LT(0, self->pids[T_NODUMP]);
	ASSERT_LT(0, self->pids[T_OTHERGID]);
}

FIXTURE_TEARDOWN(perm)
{
	for (int t = T_SAME; t < NR_TARGETS; t++) {
		if (self->pids[t] > 0) {
			kill(self->pids[t], SIGKILL);
			waitpid(self->pids[t], NULL, 0);
		}
	}
	if (self->r != MAP_FAILED)
		munmap(self->r, sizeof(*self->r));
	paranoid_set(self->saved);
}

/* Run the probe as @who and check every case against perf and the table. */
static void check(struct __test_metadata *_metadata,
		  FIXTURE_DATA(perm) *self, int paranoid, enum who who, int cap)
{
	int status, bad = 0;
	pid_t child;

	memset(self->r, 0, sizeof(*self->r));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		if (who != W_ROOT && become_nobody(cap))
			self->r->setup_err = -errno;
		else
			probe(self->r, self->pids);
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, self->r->setup_err) TH_LOG("prober set-up: %s",
						strerror(-self->r->setup_err));

	for (int t = 0; t < NR_TARGETS; t++) {
		for (int ek = 0; ek < 2; ek++) {
			struct outcome *o = &self->r->o[t][ek];
			int want = expected(paranoid, who, t, ek);

			if (o->pevt == want && o->stock == want)
				continue;
			bad++;
			TH_LOG("%s exclude_kernel=%d: pevt %s, stock %s, want %s",
			       target_name[t], ek, strerror(-o->pevt),
			       strerror(-o->stock), strerror(-want));
		}
	}
	ASSERT_EQ(0, bad);
}

TEST_F(perm, nobody)
{
	check(_metadata, self, variant->paranoid, W_NOBODY, -1);
}

TEST_F(perm, nobody_cap_perfmon)
{
	check(_metadata, self, variant->paranoid, W_PERFMON, CAP_PERFMON);
}

TEST_F(perm, nobody_cap_sys_ptrace)
{
	check(_metadata, self, variant->paranoid, W_PTRACE, CAP_SYS_PTRACE);
}

TEST_F(perm, root)
{
	check(_metadata, self, variant->paranoid, W_ROOT, -1);
}

/*
 * The level is read on every open: an event allowed at 1 is refused once
 * the administrator raises it to 2, without reloading the module.
 */
TEST(level_change_seen)
{
	int saved = paranoid_get();
	int status;
	pid_t child;

	ASSERT_NE(PARANOID_UNKNOWN, saved);
	ASSERT_EQ(0, paranoid_set(1));
	child = fork();
	if (child == 0) {
		struct perf_event_attr attr;
		int dev, fd, ret = 0;

		/* exclude_kernel = 0: allowed at 1, refused at 2 */
		pevt_attr_clock(&attr, PERF_COUNT_SW_TASK_CLOCK, 0, 1);
		dev = pevt_dev_open();
		if (dev < 0 || become_nobody(-1))
			_exit(10);
		fd = pevt_open(dev, &attr, 0, -1, -1, 0);
		if (fd < 0)
			ret = 11;
		close(fd);
		/* The parent raises the level while we wait. */
		kill(getpid(), SIGSTOP);
		fd = pevt_open(dev, &attr, 0, -1, -1, 0);
		if (fd >= 0 || errno != EACCES)
			ret = ret ?: 12;
		_exit(ret);
	}
	if (child > 0 && waitpid(child, &status, WUNTRACED) == child &&
	    WIFSTOPPED(status)) {
		paranoid_set(2);
		kill(child, SIGCONT);
		waitpid(child, &status, 0);
	}
	ASSERT_EQ(0, paranoid_set(saved));
	ASSERT_LT(0, child);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * Exec into a setuid binary: perf stops every event on the task
 * (begin_new_exec() -> perf_event_exit_task(): it is not dumpable any
 * more), and pevt must too.  A copy of this test binary, setuid root or
 * not, spins when PERM_TEST_SPIN is set.
 */
#define EXEC_TARGET	"/tmp/perm_test_exec_target"

__attribute__((constructor)) static void exec_target_spin(void)
{
	if (!getenv("PERM_TEST_SPIN"))
		return;
	for (;;)
		burn_cpu_ns(NSEC_PER_SEC);
}

static int copy_self(const char *path, mode_t mode)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open("/proc/self/exe", O_RDONLY);
	unlink(path);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0700);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	/* chmod after close: writing clears the setuid bit */
	if (close(out) || chown(path, 0, 0) || chmod(path, mode))
		return -1;
	return 0;
}

static __u64 count_of(int fd)
{
	__u64 v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

FIXTURE(exec) {
	pid_t target;
};

FIXTURE_VARIANT(exec) {
	mode_t mode;
	bool stops;
};

FIXTURE_VARIANT_ADD(exec, setuid_root) { .mode = 04755, .stops = true };
FIXTURE_VARIANT_ADD(exec, plain) { .mode = 0755, .stops = false };

FIXTURE_SETUP(exec)
{
	ASSERT_EQ(0, copy_self(EXEC_TARGET, variant->mode));
}

FIXTURE_TEARDOWN(exec)
{
	if (self->target > 0) {
		kill(self->target, SIGKILL);
		waitpid(self->target, NULL, 0);
	}
	unlink(EXEC_TARGET);
}

TEST_F(exec, events_stop_when_privileged)
{
	char *argv[] = { EXEC_TARGET, NULL };
	char *envp[] = { "PERM_TEST_SPIN=1", NULL };
	struct perf_event_attr attr;
	int ready[2], go[2], dev, pfd, sfd;
	__u64 p1, p2, s1, s2;
	char c = 'x';

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	self->target = fork();
	ASSERT_LE(0, self->target);
	if (self->target == 0) {
		if (become_nobody(-1) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(1);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		execve(EXEC_TARGET, argv, envp);
		_exit(2);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));

	/* Root opens both: who opened them does not matter to perf. */
	pevt_attr_clock(&attr, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
	dev = pevt_dev_open();
	ASSERT_LE(0, dev);
	pfd = pevt_open(dev, &attr, self->target, -1, -1, 0);
	ASSERT_LE(0, pfd) TH_LOG("pevt: %s", strerror(errno));
	sfd = sys_perf_event_open(&attr, self->target, -1, -1, 0);
	ASSERT_LE(0, sfd) TH_LOG("stock: %s", strerror(errno));

	ASSERT_EQ(1, write(go[1], &c, 1));
	sleep_ns(500 * NSEC_PER_MSEC);	/* exec done, spinning */
	p1 = count_of(pfd);
	s1 = count_of(sfd);
	sleep_ns(300 * NSEC_PER_MSEC);
	p2 = count_of(pfd);
	s2 = count_of(sfd);
	TH_LOG("pevt %llu -> %llu, stock %llu -> %llu ns", (unsigned long long)p1,
	       (unsigned long long)p2, (unsigned long long)s1, (unsigned long long)s2);
	if (variant->stops) {
		EXPECT_EQ(s1, s2) TH_LOG("stock kept counting");
		EXPECT_EQ(p1, p2) TH_LOG("pevt kept counting");
	} else {
		EXPECT_LT(s1 + 50 * NSEC_PER_MSEC, s2);
		EXPECT_LT(p1 + 50 * NSEC_PER_MSEC, p2);
	}
	close(pfd);
	close(sfd);
	close(dev);
}

TEST_HARNESS_MAIN
