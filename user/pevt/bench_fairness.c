// SPDX-License-Identifier: GPL-2.0
/*
 * pevt bench fairness: rotation fairness, stock kernel vs pevt classic vs
 * pevt rotid, the same groups on the same slots with the same workload in
 * one boot.
 *
 * A run is (scenario, scheduler, mux interval).  The workload's tasks are
 * pinned to one CPU (1 when there are two), the bench itself to another;
 * CPU groups count on the workload's CPU, task groups are spread over the
 * workload's tasks.  Every vPMU event is restricted to the scenario's
 * slots through its mask (config1), so a 2-slot scenario runs on a
 * 4-slot pevt_vpmu without reloading the module, for both subjects alike.
 * Next to every member a software twin is opened with the stock
 * perf_event_open() (task-clock, cpu-clock, raw_syscalls:sys_enter,
 * context-switches): never multiplexed, it is the truth the member's
 * scaled estimate is judged against.
 *
 * Figures (Documentation/fairness.md, ../DESIGN.md):
 *   share s_i    running/enabled of group i's leader
 *   Jain         (Σs)²/(n·Σs²) over the flexible groups that need slots
 *   min share    over the same groups
 *   optimum      the max-min fair shares of the scenario (reference solver,
 *                user/lib/fairopt.c); min/opt = min over those groups of
 *                s_i/opt_i, dist = Σ|s_i − opt_i|/n
 *   utilization  slot-time used over slot-time there was: Σ running_i·
 *                slots_i / (N·T), T the run's length; = Σ s_i·slots_i/N
 *                when every group is enabled throughout (not so for task
 *                groups of tasks that sleep)
 *   error        |count·enabled/running − twin| / twin per vPMU member
 *                (1 when the member never ran), mean and max
 *   tick         calls and ns of the subject's multiplexing tick
 *                (stock perf_mux_hrtimer_handler, pevt_sched_tick), from
 *                the module's kretprobe instrument, debugfs pevt/probes
 *   switch       pipe ping-pong of two tasks with k task events each:
 *                ns per switch end to end (over a run without events) and
 *                ns in the switch hooks per switch, same instrument
 *
 * Not a test: prints tables (ratios to stock) and writes JSON and a
 * gnuplot data file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <pevt/core.h>
#include <pevt/evsel.h>
#include <pevt/fairopt.h>
#include <pevt/scenario.h>

#include "main.h"
#include "probe_hist.h"		/* kmod/: the instrument's histogram */
#include "rotation.h"

#define VPMU_DIR	"/sys/bus/event_source/devices/pevt_vpmu"
#define PARAMS		"/sys/module/pevt/parameters"
#define PROBES		"/sys/kernel/debug/pevt/probes"
#define MAX_SCEN	32
#define MAX_IVL		8
#define MAX_K		8
#define MAX_TASKS	4
#define MAX_SW_CFG	(MAX_K * NR_SK + 1)	/* no events, then k x scheduler */

enum sched_kind { SK_STOCK, SK_CLASSIC, SK_ROTID, NR_SK };
static const char *const sk_name[NR_SK] = { "stock", "classic", "rotid" };

enum { P_STOCK_TICK, P_PEVT_TICK, P_STOCK_OUT, P_STOCK_IN, P_PEVT_SWITCH, P_PEVT_IN,
       NR_PROBES };
static const char *const probe_name[NR_PROBES] = {
	"stock_tick", "pevt_tick", "stock_sched_out", "stock_sched_in", "pevt_switch",
	"pevt_switch_in",	/* the finish_task_switch half, if the module has it */
};

struct probe_counts {
	bool ok[NR_PROBES];
	long long calls[NR_PROBES], ns[NR_PROBES];
	long long hist[NR_PROBES][PEVT_HIST_BUCKETS];	/* calls per time bucket */
};

struct member_result {
	uint64_t val, ena, run, truth;
	double err;		/* NAN: no truth to judge against */
};

struct group_result {
	double share;
	uint64_t ena, run;
	struct member_result m[PEVT_SCEN_MAX_MEMBERS];
};

struct run_result {
	const struct pevt_scenario *sc;
	enum sched_kind sk;
	unsigned int interval;
	double seconds;
	struct group_result g[PEVT_SCEN_MAX_GROUPS];
	double jain, min_share, util, err_mean, err_max;	/* NAN: undefined */
	double opt[PEVT_SCEN_MAX_GROUPS];	/* max-min fair optimum, NAN: none */
	double min_opt, dist;		/* min share/opt, mean |share - opt| */
	long long ticks;	/* -1: no instrument */
	double tick_ns;		/* mean */
	double tick_p50;	/* median (the instrument's histogram), NAN: none */
	uint64_t roundtrips;
	int rounds;		/* slices this run is the sum of (bench option rounds) */
	long long tick_ns_sum;	/* the rounds' tick time, for tick_ns */
	long long tick_hist[PEVT_HIST_BUCKETS];	/* the rounds' ticks, for tick_p50 */
};

struct switch_result {
	enum sched_kind sk;	/* NR_SK: no events (baseline) */
	int k;
	uint64_t switches;
	double ns_per_switch;		/* end to end, instrument off, median */
	double ns_over_none;		/* over no events in the same round, median */
	double hook_ns;			/* in the switch hooks; NAN: no instrument */
	double timer_per_switch;	/* scheduler timer runs per switch */
};

struct bench {
	int cpu, bench_cpu, vpmu_type, sys_enter_id, nr_counters;
	int dev_ok;
	bool probes;
	double duration;	/* 0: the scenario's */
	char policy_saved[16];
	long ivl_pevt_saved, ivl_stock_saved;
};

/* ---- small helpers ------------------------------------------------- */

static long read_long_file(const char *path)
{
	char buf[64];
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 0);
	fclose(f);
	return v;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

static int write_ulong(const char *path, unsigned long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", v);
	return write_file(path, buf);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* "hist NAME LO:COUNT ...": into @pc's histogram of the probe so named. */
static void probes_read_hist(struct probe_counts *pc, char *line)
{
	char name[32], *p, *end;
	int i, n;

	if (sscanf(line, "hist %31s%n", name, &n) != 1)
		return;
	for (i = 0; i < NR_PROBES && strcmp(name, probe_name[i]); i++)
		;
	if (i == NR_PROBES)
		return;
	for (p = line + n; *p; p = end) {
		unsigned long long lo = strtoull(p, &end, 10);
		long long c;

		if (end == p || *end != ':')
			break;
		c = strtoll(end + 1, &end, 10);
		pc->hist[i][pevt_hist_bucket(lo)] += c;
	}
}

static int probes_read(struct probe_counts *pc)
{
	FILE *f = fopen(PROBES, "r");
	char *line = NULL, name[32];
	long long c, ns;
	size_t cap = 0;
	int i, armed;

	memset(pc, 0, sizeof(*pc));
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "hist ", 5)) {
			probes_read_hist(pc, line);
			continue;
		}
		if (sscanf(line, "%31s armed %d calls %lld ns %lld", name, &armed, &c, &ns) != 4)
			continue;
		for (i = 0; i < NR_PROBES; i++)
			if (!strcmp(name, probe_name[i]) && armed) {
				pc->ok[i] = true;
				pc->calls[i] = c;
				pc->ns[i] = ns;
			}
	}
	free(line);
	fclose(f);
	return 0;
}

/* ---- workloads ----------------------------------------------------- */

struct workload {
	int nr;
	pid_t pid[MAX_TASKS];
	int go[2];		/* closed by the parent: start */
	uint64_t *shared;	/* [0]: ping-pong round trips */
};

static void wait_go(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

static void __attribute__((noreturn)) task_spin(int go)
{
	volatile uint64_t x = 0;

	wait_go(go);
	for (;;)
		x++;
}

static void __attribute__((noreturn)) task_syscalls(int go)
{
	wait_go(go);
	for (;;)
		syscall(SYS_getppid);
}

/*
 * Phases of unequal length, so no interval divides the cycle: CPU-bound,
 * system calls, then short sleeps (context switches, idle CPU).
 */
static void __attribute__((noreturn)) task_phased(int go)
{
	volatile uint64_t x = 0;
	uint64_t end;

	wait_go(go);
	for (;;) {
		for (end = now_ns() + 23000000; now_ns() < end;)
			x++;
		for (end = now_ns() + 13000000; now_ns() < end;)
			syscall(SYS_getppid);
		for (end = now_ns() + 7000000; now_ns() < end;)
			usleep(200);
	}
}

static void __attribute__((noreturn)) task_pong(int go, int in, int out, uint64_t *rt)
{
	char c = 0;

	wait_go(go);
	for (;;) {
		if (read(in, &c, 1) != 1)
			_exit(0);
		if (rt)
			__atomic_add_fetch(rt, 1, __ATOMIC_RELAXED);
		if (write(out, &c, 1) != 1)
			_exit(0);
	}
}

/* Tasks of a workload: pingpong is a ring of 2, ring a ring of 4. */
static int workload_tasks(enum pevt_scen_workload kind)
{
	return kind == PEVT_WL_PINGPONG ? 2 : kind == PEVT_WL_RING ? MAX_TASKS : 1;
}

/*
 * pingpong and ring: task i reads the token from pipe i - 1 and passes it
 * on through pipe i; task 0 serves first and counts the round trips.
 */
static int workload_start(struct workload *w, enum pevt_scen_workload kind, int cpu)
{
	int ring[MAX_TASKS][2], i, j;
	bool is_ring = kind == PEVT_WL_PINGPONG || kind == PEVT_WL_RING;

	memset(w, 0, sizeof(*w));
	w->shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->shared == MAP_FAILED || pipe(w->go))
		return -errno;
	w->nr = workload_tasks(kind);
	for (i = 0; is_ring && i < w->nr; i++)
		if (pipe(ring[i]))
			return -errno;
	for (i = 0; i < w->nr; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (pid == 0) {
			/* A bench killed mid-run must not leave spinners behind. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(1);
			close(w->go[1]);
			pin(cpu);
			switch (kind) {
			case PEVT_WL_SPIN:
				task_spin(w->go[0]);
			case PEVT_WL_SYSCALLS:
				task_syscalls(w->go[0]);
			case PEVT_WL_PHASED:
				task_phased(w->go[0]);
			case PEVT_WL_PINGPONG:
			case PEVT_WL_RING: {
				int in = ring[(i + w->nr - 1) % w->nr][0], out = ring[i][1];

				for (j = 0; j < w->nr; j++) {
					if (ring[j][0] != in)
						close(ring[j][0]);
					if (ring[j][1] != out)
						close(ring[j][1]);
				}
				if (i == 0) {	/* serves first */
					wait_go(w->go[0]);
					if (write(out, "x", 1) != 1)
						_exit(1);
					task_pong(-1, in, out, &w->shared[0]);
				}
				task_pong(w->go[0], in, out, NULL);
			}
			}
			_exit(1);
		}
		w->pid[i] = pid;
	}
	for (i = 0; is_ring && i < w->nr; i++) {
		close(ring[i][0]);
		close(ring[i][1]);
	}
	close(w->go[0]);
	return 0;
}

static void workload_go(struct workload *w)
{
	close(w->go[1]);	/* EOF: every task starts */
	w->go[1] = -1;
}

static void workload_stop(struct workload *w)
{
	int i;

	for (i = 0; i < w->nr; i++)
		if (w->pid[i] > 0) {
			kill(w->pid[i], SIGKILL);
			waitpid(w->pid[i], NULL, 0);
		}
	if (w->go[1] >= 0)
		close(w->go[1]);
	if (w->shared && w->shared != MAP_FAILED)
		munmap(w->shared, 4096);
}

/* ---- events -------------------------------------------------------- */

struct opened {
	int fd[PEVT_SCEN_MAX_GROUPS][PEVT_SCEN_MAX_MEMBERS];
	int twin[PEVT_SCEN_MAX_GROUPS][PEVT_SCEN_MAX_MEMBERS];
};

static void attr_of(const struct bench *b, enum pevt_scen_src src, uint64_t mask,
		    struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	switch (src) {
	case PEVT_SRC_CPU_NS:
	case PEVT_SRC_SYSCALLS:
	case PEVT_SRC_CSWITCH:
		a->type = b->vpmu_type;
		a->config = src - PEVT_SRC_CPU_NS;
		a->config1 = mask;
		break;
	case PEVT_SRC_TASK_CLOCK:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_TASK_CLOCK;
		break;
	case PEVT_SRC_CPU_CLOCK:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CPU_CLOCK;
		break;
	}
}

/* The stock, never multiplexed twin of @src. */
static void twin_attr_of(const struct bench *b, enum pevt_scen_src src, bool task,
			 struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->disabled = 1;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	switch (src) {
	case PEVT_SRC_CPU_NS:
	case PEVT_SRC_TASK_CLOCK:
	case PEVT_SRC_CPU_CLOCK:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = (src == PEVT_SRC_CPU_NS ? task : src == PEVT_SRC_TASK_CLOCK) ?
			    PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK;
		break;
	case PEVT_SRC_SYSCALLS:
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = b->sys_enter_id;
		break;
	case PEVT_SRC_CSWITCH:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		break;
	}
}

static bool src_is_vpmu(enum pevt_scen_src s)
{
	return s <= PEVT_SRC_CSWITCH;
}

static void close_all(const struct pevt_scenario *sc, struct opened *o)
{
	int i, j;

	for (i = 0; i < sc->nr_groups; i++)
		for (j = 0; j < PEVT_SCEN_MAX_MEMBERS; j++) {
			if (o->fd[i][j] >= 0)
				close(o->fd[i][j]);
			if (o->twin[i][j] >= 0)
				close(o->twin[i][j]);
		}
}

static int open_all(const struct bench *b, const struct pevt_scenario *sc,
		    enum sched_kind sk, const struct workload *w, struct opened *o)
{
	LIBPEVT_OPTS(pevt_open_opts, subj,
		     .backend = sk == SK_STOCK ? PEVT_BACKEND_PERF : PEVT_BACKEND_DEVICE);
	LIBPEVT_OPTS(pevt_open_opts, stock, .backend = PEVT_BACKEND_PERF);
	uint64_t all = sc->slots >= 64 ? ~0ull : (1ull << sc->slots) - 1;
	struct perf_event_attr a;
	int i, j, nth_task = 0;

	memset(o, -1, sizeof(*o));
	for (i = 0; i < sc->nr_groups; i++) {
		const struct pevt_scen_group *g = &sc->groups[i];
		int pid = g->task ? w->pid[nth_task++ % w->nr] : -1;
		int cpu = g->task ? -1 : b->cpu;

		for (j = 0; j < g->nr_members; j++) {
			attr_of(b, g->src[j], g->mask ? g->mask : all, &a);
			a.disabled = j == 0;
			a.pinned = g->pinned && j == 0;
			o->fd[i][j] = pevt_open(&a, pid, cpu, j ? o->fd[i][0] : -1, &subj);
			if (o->fd[i][j] < 0) {
				p_err("%s: %s: group %d (line %d) member %s: %s", sc->name,
				      sk_name[sk], i, g->line, pevt_scen_src__name(g->src[j]),
				      strerror(-o->fd[i][j]));
				return -1;
			}
			twin_attr_of(b, g->src[j], g->task, &a);
			o->twin[i][j] = pevt_open(&a, pid, cpu, -1, &stock);
			if (o->twin[i][j] < 0) {
				p_err("%s: twin of %s: %s", sc->name,
				      pevt_scen_src__name(g->src[j]), strerror(-o->twin[i][j]));
				return -1;
			}
		}
	}
	return 0;
}

/* Enable in group order, disable in reverse: pinned groups (declared
 * first) are on for the whole time the groups after them are. */
static void enable_all(const struct pevt_scenario *sc, struct opened *o, unsigned long req)
{
	int i, j, n = sc->nr_groups;

	for (i = 0; i < n; i++) {
		int g = req == PERF_EVENT_IOC_ENABLE ? i : n - 1 - i;

		ioctl(o->fd[g][0], req, 0);
		for (j = 0; j < sc->groups[g].nr_members; j++)
			ioctl(o->twin[g][j], req, 0);
	}
}

static int read3(int fd, uint64_t v[3])
{
	return read(fd, v, 3 * sizeof(uint64_t)) == 3 * sizeof(uint64_t) ? 0 : -1;
}

/* ---- one run --------------------------------------------------------- */

static int set_scheduler(struct bench *b, enum sched_kind sk, unsigned int ivl)
{
	int ret = 0;

	if (sk == SK_STOCK)
		ret = write_ulong(VPMU_DIR "/perf_event_mux_interval_ms", ivl);
	else
		ret = write_file(PARAMS "/policy", sk == SK_ROTID ? "rotid" : "classic") ?:
		      write_ulong(PARAMS "/mux_interval_ms", ivl);
	if (ret)
		p_err("cannot set scheduler %s, interval %u ms: %s", sk_name[sk], ivl, strerror(-ret));
	return ret;
}

static double nan_or(double v, bool ok)
{
	return ok ? v : NAN;
}

/*
 * The max-min fair optimum of @sc (user/lib/fairopt.c), per (CPU, task)
 * pair as the schedulers see it: with two workload tasks, task groups
 * alternate between them (open_all()), each task is planned with the CPU
 * groups, and a CPU group's optimum is the mean over the two pairs (the
 * ping-pong tasks run equally long).  NAN where no optimum exists.
 */
static void scen_optimum(const struct pevt_scenario *sc, double *opt)
{
	static uint64_t masks[PEVT_SCEN_MAX_GROUPS][PEVT_SCEN_MAX_MEMBERS];
	struct rot_group rg[PEVT_SCEN_MAX_GROUPS];
	int idx[PEVT_SCEN_MAX_GROUPS], nt = workload_tasks(sc->workload);
	uint64_t all = sc->slots >= 64 ? ~0ull : (1ull << sc->slots) - 1;
	unsigned int n = sc->slots;
	int i, j, k, t, ng, nth;

	for (i = 0; i < sc->nr_groups; i++) {
		opt[i] = sc->groups[i].task ? NAN : 0;
		if (sc->groups[i].mask && 64 - __builtin_clzll(sc->groups[i].mask) > (int)n)
			n = 64 - __builtin_clzll(sc->groups[i].mask);
	}
	for (t = 0; t < nt; t++) {
		struct rot_input in = { rg, 0, n };
		struct pevt_fairopt o;

		for (i = 0, ng = 0, nth = 0; i < sc->nr_groups; i++) {
			const struct pevt_scen_group *g = &sc->groups[i];

			if (g->task && nth++ % nt != t)
				continue;
			for (j = k = 0; j < g->nr_members; j++)
				if (src_is_vpmu(g->src[j]))
					masks[ng][k++] = g->mask ? g->mask : all;
			rg[ng].masks = masks[ng];
			rg[ng].nr_members = k;
			rg[ng].flags = (g->pinned ? ROT_F_PINNED : 0) |
				       (k ? 0 : ROT_F_SOFTWARE) | (g->task ? ROT_F_TASK : 0);
			idx[ng++] = i;
		}
		in.nr_groups = ng;
		if (pevt_fairopt__solve(&in, &o)) {
			for (i = 0; i < sc->nr_groups; i++)
				opt[i] = NAN;
			return;
		}
		for (k = 0; k < ng; k++)
			opt[idx[k]] = sc->groups[idx[k]].task ? o.share[k] :
				      opt[idx[k]] + o.share[k] / nt;
		pevt_fairopt__free(&o);
	}
}

static void figures(struct run_result *r)
{
	const struct pevt_scenario *sc = r->sc;
	double sum = 0, sq = 0, min = INFINITY, util = 0, esum = 0, emax = 0;
	int i, j, n = 0, ne = 0;

	for (i = 0; i < sc->nr_groups; i++) {
		const struct pevt_scen_group *g = &sc->groups[i];
		int slots = pevt_scen_group__slots(g);
		double s = r->g[i].share;

		if (!slots)
			continue;
		util += (double)r->g[i].run * slots;
		for (j = 0; j < g->nr_members; j++) {
			double e = r->g[i].m[j].err;

			if (!src_is_vpmu(g->src[j]) || isnan(e))
				continue;
			esum += e;
			emax = e > emax ? e : emax;
			ne++;
		}
		if (g->pinned)
			continue;
		sum += s;
		sq += s * s;
		min = s < min ? s : min;
		n++;
	}
	scen_optimum(sc, r->opt);
	r->min_opt = r->dist = NAN;
	if (!isnan(r->opt[0]) && n) {
		double share[PEVT_SCEN_MAX_GROUPS];
		bool use[PEVT_SCEN_MAX_GROUPS];

		for (i = 0; i < sc->nr_groups; i++) {
			share[i] = r->g[i].share;
			use[i] = !sc->groups[i].pinned &&
				 pevt_scen_group__slots(&sc->groups[i]);
		}
		pevt_fair__compare(r->opt, share, use, sc->nr_groups, &r->min_opt,
				   &r->dist);
	}
	r->jain = nan_or(sq > 0 ? sum * sum / (n * sq) : 0, n > 0 && sq > 0);
	r->min_share = nan_or(min, n > 0);
	r->util = util / (sc->slots * r->seconds * 1e9);
	r->err_mean = nan_or(ne ? esum / ne : 0, ne > 0);
	r->err_max = nan_or(emax, ne > 0);
}

/*
 * One slice of @secs of @sc under @sk, added to @r (zeroed by the caller
 * before the first): counts, enabled and running times, truths, ticks
 * and their histogram.  run_finish() makes the figures of the sum.
 */
static int run_one(struct bench *b, const struct pevt_scenario *sc, enum sched_kind sk,
		   unsigned int ivl, double secs, struct run_result *r)
{
	struct probe_counts p0, p1;
	struct workload w;
	struct opened o;
	uint64_t t0, rt0 = 0;
	int i, j, k, ret = -1;
	int tick = sk == SK_STOCK ? P_STOCK_TICK : P_PEVT_TICK;

	r->sc = sc;
	r->sk = sk;
	r->interval = ivl;
	if (set_scheduler(b, sk, ivl))
		return -1;
	ret = workload_start(&w, sc->workload, b->cpu);
	if (ret) {
		p_err("%s: starting the workload: %s", sc->name, strerror(-ret));
		workload_stop(&w);
		return -1;
	}
	ret = -1;
	if (open_all(b, sc, sk, &w, &o))
		goto out;
	workload_go(&w);
	sleep_s(0.05);		/* tasks on their CPU, ping-pong going */
	probes_read(&p0);
	rt0 = __atomic_load_n(&w.shared[0], __ATOMIC_RELAXED);
	t0 = now_ns();
	enable_all(sc, &o, PERF_EVENT_IOC_ENABLE);
	sleep_s(secs);
	enable_all(sc, &o, PERF_EVENT_IOC_DISABLE);
	r->seconds += (now_ns() - t0) / 1e9;
	r->roundtrips += __atomic_load_n(&w.shared[0], __ATOMIC_RELAXED) - rt0;
	probes_read(&p1);
	if (!p0.ok[tick] || !p1.ok[tick]) {
		r->ticks = -1;
	} else if (r->ticks >= 0) {
		r->ticks += p1.calls[tick] - p0.calls[tick];
		r->tick_ns_sum += p1.ns[tick] - p0.ns[tick];
		for (k = 0; k < PEVT_HIST_BUCKETS; k++)
			r->tick_hist[k] += p1.hist[tick][k] - p0.hist[tick][k];
	}

	for (i = 0; i < sc->nr_groups; i++) {
		const struct pevt_scen_group *g = &sc->groups[i];

		for (j = 0; j < g->nr_members; j++) {
			struct member_result *m = &r->g[i].m[j];
			uint64_t v[3], t[3];

			if (read3(o.fd[i][j], v) || read3(o.twin[i][j], t)) {
				p_err("%s: %s: reading group %d: %s", sc->name, sk_name[sk],
				      i, strerror(errno));
				goto out;
			}
			m->val += v[0];
			m->ena += v[1];
			m->run += v[2];
			m->truth += t[0];
		}
	}
	r->rounds++;
	ret = 0;
out:
	close_all(sc, &o);
	workload_stop(&w);
	return ret;
}

/* The figures of @r, the sum of its rounds. */
static void run_finish(struct run_result *r)
{
	static const long long zero[PEVT_HIST_BUCKETS];
	const struct pevt_scenario *sc = r->sc;
	int i, j;

	r->tick_ns = r->ticks > 0 ? (double)r->tick_ns_sum / r->ticks : NAN;
	r->tick_p50 = r->ticks > 0 ? pevt_hist_quantile(zero, r->tick_hist, 0.5) : NAN;
	if (r->tick_p50 < 0)
		r->tick_p50 = NAN;
	for (i = 0; i < sc->nr_groups; i++) {
		for (j = 0; j < sc->groups[i].nr_members; j++) {
			struct member_result *m = &r->g[i].m[j];

			if (!m->truth)
				m->err = NAN;
			else if (!m->run)
				m->err = 1.0;	/* never ran: nothing is known */
			else
				m->err = fabs((double)m->val * m->ena / m->run - m->truth) /
					 m->truth;
		}
		r->g[i].ena = r->g[i].m[0].ena;
		r->g[i].run = r->g[i].m[0].run;
		r->g[i].share = r->g[i].ena ? (double)r->g[i].run / r->g[i].ena : 0;
	}
	figures(r);
}

/* ---- switch cost ---------------------------------------------------- */

#define SW_ROUNDS	5

/*
 * One slice of the ping-pong already running in @w: open @k task events
 * (cpu_ns) on each of its two tasks under @sk (none for NR_SK), let it
 * run @secs, close them.  ns per switch end to end; with @p0/@p1, the
 * instrument's counts before and after.
 */
static int switch_slice(struct bench *b, const struct workload *w, enum sched_kind sk,
			int k, double secs, double *ns, uint64_t *switches,
			struct probe_counts *p0, struct probe_counts *p1)
{
	LIBPEVT_OPTS(pevt_open_opts, subj,
		     .backend = sk == SK_STOCK ? PEVT_BACKEND_PERF : PEVT_BACKEND_DEVICE);
	struct perf_event_attr a;
	int fd[2 * MAX_K], i, ret = -1;
	uint64_t t0, rt0, rt1;

	memset(fd, -1, sizeof(fd));
	if (sk != NR_SK && set_scheduler(b, sk, 4))
		return -1;
	for (i = 0; sk != NR_SK && i < 2 * k; i++) {
		attr_of(b, PEVT_SRC_CPU_NS, 0, &a);
		fd[i] = pevt_open(&a, w->pid[i % 2], -1, -1, &subj);
		if (fd[i] < 0) {
			p_err("switch: %s: task event %d: %s", sk_name[sk], i, strerror(-fd[i]));
			goto out;
		}
	}
	sleep_s(0.01);
	if (p0)
		probes_read(p0);
	rt0 = __atomic_load_n(&w->shared[0], __ATOMIC_RELAXED);
	t0 = now_ns();
	sleep_s(secs);
	rt1 = __atomic_load_n(&w->shared[0], __ATOMIC_RELAXED);
	*ns = now_ns() - t0;
	if (p1)
		probes_read(p1);
	*switches = 2 * (rt1 - rt0);
	*ns = *switches ? *ns / *switches : NAN;
	ret = 0;
out:
	for (i = 0; i < 2 * MAX_K; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return ret;
}

/*
 * Context-switch cost.  One ping-pong of two tasks on the workload CPU
 * throughout; the configurations (no events, then each scheduler with k
 * task events on each task) take turns for SW_ROUNDS rounds, the order
 * rotated every round, so drift of the host hits them alike.  End to end
 * with the instrument off (a kretprobe hit costs what it measures, and
 * stock has two hooks per switch where pevt has one): ns per switch,
 * median over rounds, and the excess over the no-event slice of the same
 * round, median.  Then one slice each with the instrument on: ns in the
 * switch hooks and scheduler timer runs, per switch.
 */
static int run_switches(struct bench *b, const struct switch_result *cfg, int n,
			double secs, struct switch_result *res)
{
	double ns[MAX_SW_CFG][SW_ROUNDS], ex[SW_ROUNDS];
	struct probe_counts p0, p1;
	struct workload w;
	int r, c, i, ret = -1;
	uint64_t sw;

	ret = workload_start(&w, PEVT_WL_PINGPONG, b->cpu);
	if (ret) {
		p_err("switch: starting the ping-pong: %s", strerror(-ret));
		workload_stop(&w);
		return -1;
	}
	ret = -1;
	workload_go(&w);
	if (b->probes)
		write_file(PROBES, "off");
	for (c = 0; c < n; c++)
		res[c] = cfg[c];
	for (r = 0; r < SW_ROUNDS; r++)
		for (i = 0; i < n; i++) {
			c = (i + r) % n;
			if (switch_slice(b, &w, cfg[c].sk, cfg[c].k, secs / SW_ROUNDS,
					 &ns[c][r], &sw, NULL, NULL))
				goto out;
			res[c].switches += sw;
		}
	for (c = 0; c < n; c++) {
		for (r = 0; r < SW_ROUNDS; r++)
			ex[r] = ns[c][r] - ns[0][r];
		res[c].ns_over_none = c ? median(ex, SW_ROUNDS) : 0;
		res[c].ns_per_switch = median(ns[c], SW_ROUNDS);
		res[c].hook_ns = NAN;
		res[c].timer_per_switch = NAN;
	}
	if (b->probes && !write_file(PROBES, "on"))
		for (c = 1; c < n; c++) {
			enum sched_kind sk = cfg[c].sk;
			int t = sk == SK_STOCK ? P_STOCK_TICK : P_PEVT_TICK;
			double dummy;

			if (switch_slice(b, &w, sk, cfg[c].k, secs / 2, &dummy, &sw, &p0, &p1))
				goto out;
			if (!sw)
				continue;
			if (sk == SK_STOCK && p1.ok[P_STOCK_OUT] && p1.ok[P_STOCK_IN])
				res[c].hook_ns = (double)(p1.ns[P_STOCK_OUT] - p0.ns[P_STOCK_OUT] +
							  p1.ns[P_STOCK_IN] - p0.ns[P_STOCK_IN]) / sw;
			else if (sk != SK_STOCK && p1.ok[P_PEVT_SWITCH])
				res[c].hook_ns = (double)(p1.ns[P_PEVT_SWITCH] - p0.ns[P_PEVT_SWITCH] +
							  p1.ns[P_PEVT_IN] - p0.ns[P_PEVT_IN]) / sw;
			if (p1.ok[t])
				res[c].timer_per_switch = (double)(p1.calls[t] - p0.calls[t]) / sw;
		}
	ret = 0;
out:
	workload_stop(&w);
	return ret;
}

/* ---- output -------------------------------------------------------- */

static void fmt(char *buf, size_t sz, const char *f, double v)
{
	if (isnan(v))
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, f, v);
}

static void json_num(FILE *f, const char *key, double v, bool comma)
{
	if (isnan(v) || isinf(v))
		fprintf(f, "\"%s\":null%s", key, comma ? "," : "");
	else
		fprintf(f, "\"%s\":%.6g%s", key, v, comma ? "," : "");
}

static void print_scenario(const struct run_result *rs, int n)
{
	const struct pevt_scenario *sc = rs[0].sc;
	int i, g;

	printf("\nscenario %s: %d slots, workload %s, %d groups, interval %u ms\n",
	       sc->name, sc->slots, pevt_scen_workload__name(sc->workload),
	       sc->nr_groups, rs[0].interval);
	printf("  %-8s %6s %7s %6s %6s %6s %8s %8s %8s %9s %8s  %s\n", "sched", "jain",
	       "min/opt", "dist", "min", "util", "err-mean", "err-max", "ticks/s",
	       "ns/tick", "p50 ns", "shares % (group order)");
	printf("  %-8s %6s %7s %6s %6s %6s %8s %8s %8s %9s %8s ", "optimum", "", "", "",
	       "", "", "", "", "", "", "");
	for (g = 0; g < sc->nr_groups; g++)
		printf(" %s%s%.1f", sc->groups[g].task ? "T" : "C",
		       sc->groups[g].pinned ? "p" : "", 100 * rs[0].opt[g]);
	printf("\n");
	for (i = 0; i < n; i++) {
		const struct run_result *r = &rs[i];
		char j[16], mo[16], di[16], mn[16], ut[16], em[16], ex[16], tk[16], tn[16];
		char tm[16];

		fmt(j, sizeof(j), "%.3f", r->jain);
		fmt(mo, sizeof(mo), "%.3f", r->min_opt);
		fmt(di, sizeof(di), "%.4f", r->dist);
		fmt(mn, sizeof(mn), "%.3f", r->min_share);
		fmt(ut, sizeof(ut), "%.3f", r->util);
		fmt(em, sizeof(em), "%.4f", r->err_mean);
		fmt(ex, sizeof(ex), "%.4f", r->err_max);
		fmt(tk, sizeof(tk), "%.0f", r->ticks >= 0 ? r->ticks / r->seconds : NAN);
		fmt(tn, sizeof(tn), "%.0f", r->tick_ns);
		fmt(tm, sizeof(tm), "%.0f", r->tick_p50);
		printf("  %-8s %6s %7s %6s %6s %6s %8s %8s %8s %9s %8s ", sk_name[r->sk], j,
		       mo, di, mn, ut, em, ex, tk, tn, tm);
		for (g = 0; g < sc->nr_groups; g++)
			printf(" %s%s%.1f", sc->groups[g].task ? "T" : "C",
			       sc->groups[g].pinned ? "p" : "", 100 * r->g[g].share);
		printf("\n");
	}
}

static void print_ratios(const struct run_result *rs, int n)
{
	int i;

	if (n < 2 || rs[0].sk != SK_STOCK)
		return;
	for (i = 1; i < n; i++) {
		const struct run_result *r = &rs[i], *s = &rs[0];
		char jr[16], ur[16], tr[16], or[16], mr[16];

		fmt(jr, sizeof(jr), "%.3f", s->jain > 0 ? r->jain / s->jain : NAN);
		fmt(ur, sizeof(ur), "%.3f", s->util > 0 ? r->util / s->util : NAN);
		fmt(tr, sizeof(tr), "%.3f", s->ticks > 0 && r->ticks >= 0 ?
		    (double)r->ticks / s->ticks : NAN);
		fmt(or, sizeof(or), "%.3f", s->ticks > 0 && r->ticks > 0 ?
		    (r->ticks * r->tick_ns) / (s->ticks * s->tick_ns) : NAN);
		fmt(mr, sizeof(mr), "%.3f", s->tick_p50 > 0 ? r->tick_p50 / s->tick_p50 : NAN);
		printf("  %s/stock: jain x%s, util x%s, ticks x%s, tick time x%s, "
		       "median tick x%s\n", sk_name[r->sk], jr, ur, tr, or, mr);
	}
}

static void json_run(FILE *f, const struct run_result *r)
{
	const struct pevt_scenario *sc = r->sc;
	int i, j;

	fprintf(f, "{\"scenario\":");
	json_str(f, sc->name);
	fprintf(f, ",\"scheduler\":\"%s\",\"interval_ms\":%u,"
		"\"slots\":%d,\"workload\":\"%s\",", sk_name[r->sk], r->interval,
		sc->slots, pevt_scen_workload__name(sc->workload));
	json_num(f, "seconds", r->seconds, true);
	json_num(f, "jain", r->jain, true);
	json_num(f, "min_share", r->min_share, true);
	json_num(f, "min_over_opt", r->min_opt, true);
	json_num(f, "dist", r->dist, true);
	json_num(f, "utilization", r->util, true);
	json_num(f, "error_mean", r->err_mean, true);
	json_num(f, "error_max", r->err_max, true);
	if (r->ticks >= 0)
		fprintf(f, "\"ticks\":%lld,", r->ticks);
	else
		fprintf(f, "\"ticks\":null,");
	json_num(f, "tick_ns", r->tick_ns, true);
	json_num(f, "tick_p50_ns", r->tick_p50, true);
	fprintf(f, "\"rounds\":%d,\"roundtrips\":%" PRIu64 ",\"groups\":[", r->rounds,
		r->roundtrips);
	for (i = 0; i < sc->nr_groups; i++) {
		const struct pevt_scen_group *g = &sc->groups[i];

		fprintf(f, "%s{\"kind\":\"%s\",\"pinned\":%s,\"slots\":%d,", i ? "," : "",
			g->task ? "task" : "cpu", g->pinned ? "true" : "false",
			pevt_scen_group__slots(g));
		json_num(f, "share", r->g[i].share, true);
		json_num(f, "optimum", r->opt[i], true);
		fprintf(f, "\"members\":[");
		for (j = 0; j < g->nr_members; j++) {
			const struct member_result *m = &r->g[i].m[j];

			fprintf(f, "%s{\"source\":\"%s\",\"count\":%" PRIu64 ",\"enabled\":%" PRIu64
				",\"running\":%" PRIu64 ",\"truth\":%" PRIu64 ",", j ? "," : "",
				pevt_scen_src__name(g->src[j]), m->val, m->ena, m->run, m->truth);
			json_num(f, "error", m->err, false);
			fprintf(f, "}");
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}");
}

/* ---- files ----------------------------------------------------------- */

static FILE *out_open(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		p_err("%s: %s", path, strerror(errno));
	return f;
}

static int out_close(FILE *f, const char *path)
{
	if (!fclose(f))
		return 0;
	p_err("%s: %s", path, strerror(errno));
	return -1;
}

static int write_json(FILE *f, const char *path, const char *release, const struct bench *b,
		      const struct run_result *runs, int nruns,
		      const struct switch_result *sw, int nsw)
{
	int i;

	fprintf(f, "{\"bench\":\"fairness\",\"kernel\":\"%s\",\"cpu\":%d,"
		"\"vpmu_slots\":%d,\"instrument\":%s,\"runs\":[", release, b->cpu,
		b->nr_counters, b->probes ? "\"kretprobe\"" : "null");
	for (i = 0; i < nruns; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_run(f, &runs[i]);
	}
	fprintf(f, "],\"switch\":[");
	for (i = 0; i < nsw; i++) {
		fprintf(f, "%s{\"scheduler\":%s%s%s,\"k\":%d,\"switches\":%" PRIu64 ",",
			i ? "," : "", sw[i].sk == NR_SK ? "" : "\"",
			sw[i].sk == NR_SK ? "null" : sk_name[sw[i].sk],
			sw[i].sk == NR_SK ? "" : "\"", sw[i].k, sw[i].switches);
		json_num(f, "ns_per_switch", sw[i].ns_per_switch, true);
		json_num(f, "ns_over_none", i ? sw[i].ns_over_none : NAN, true);
		json_num(f, "hook_ns", sw[i].hook_ns, true);
		json_num(f, "timer_per_switch", sw[i].timer_per_switch, false);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
	return out_close(f, path);
}

static int write_data(FILE *f, const char *path, const char *release,
		      const unsigned long *sk_list, int nsk,
		      const struct run_result *runs, int nruns)
{
	int i, k, v;

	/*
	 * gnuplot, one index per (scenario, interval): "group share
	 * per scheduler" rows; then one index per multi-interval
	 * scenario: "interval err-mean tick-time-per-s per scheduler".
	 */
	fprintf(f, "# pevt bench fairness, %s; schedulers:", release);
	for (i = 0; i < nsk; i++)
		fprintf(f, " %s", sk_name[sk_list[i]]);
	fprintf(f, "\n");
	for (i = 0; i < nruns; i += nsk) {
		const struct pevt_scenario *sc = runs[i].sc;
		int g;

		fprintf(f, "# shares %s %u\n", sc->name, runs[i].interval);
		for (g = 0; g < sc->nr_groups; g++) {
			fprintf(f, "%s%d%s", sc->groups[g].task ? "T" : "C", g,
				sc->groups[g].pinned ? "p" : "");
			for (k = 0; k < nsk; k++)
				fprintf(f, " %.4f", runs[i + k].g[g].share);
			fprintf(f, " %.4f\n", runs[i].opt[g]);	/* the optimum, last */
		}
		fprintf(f, "\n\n");
	}
	for (i = 0; i < nruns; i += nsk) {
		const struct pevt_scenario *sc = runs[i].sc;

		if (i && runs[i - nsk].sc == sc)
			continue;	/* emitted with its first interval */
		if (i + nsk >= nruns || runs[i + nsk].sc != sc)
			continue;	/* one interval: no curve */
		fprintf(f, "# accuracy %s\n", sc->name);
		for (v = i; v < nruns && runs[v].sc == sc; v += nsk) {
			fprintf(f, "%u", runs[v].interval);
			for (k = 0; k < nsk; k++)
				fprintf(f, " %.6f", runs[v + k].err_mean);
			for (k = 0; k < nsk; k++) {
				const struct run_result *r = &runs[v + k];

				fprintf(f, " %.0f", r->ticks > 0 ? r->ticks * r->tick_ns / r->seconds : 0);
			}
			fprintf(f, "\n");
		}
		fprintf(f, "\n\n");
	}
	return out_close(f, path);
}

/* ---- command ------------------------------------------------------- */

static int parse_list(const char *s, unsigned long *v, int max, unsigned long lo,
		      unsigned long hi, const char *what)
{
	const char *arg = s;
	char *end;
	int n = 0;

	while (*s) {
		if (n == max) {
			p_err("%s: at most %d values", what, max);
			return -1;
		}
		errno = 0;
		v[n] = strtoul(s, &end, 10);
		if (end == s || errno || v[n] < lo || v[n] > hi || (*end && *end != ',')) {
			p_err("%s: '%s' is not a list of numbers in %lu..%lu", what, arg, lo, hi);
			return -1;
		}
		n++;
		s = *end ? end + 1 : end;
	}
	return n;
}

static int load_scenario(const char *arg, struct pevt_scenario *sc)
{
	const char *text = pevt_scenario__builtin(arg);
	char err[512];
	int ret;

	if (text)
		ret = pevt_scenario__parse(sc, text, arg, err, sizeof(err));
	else if (access(arg, F_OK) == 0)
		ret = pevt_scenario__load(sc, arg, err, sizeof(err));
	else {
		char names[256] = "";
		const char *n;
		int i;

		for (i = 0; (n = pevt_scenario__builtin_name(i)); i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names),
				 "%s%s", i ? ", " : "", n);
		p_err("scenario '%s': neither a built-in (%s) nor a file", arg, names);
		return -1;
	}
	if (ret) {
		p_err("%s", err);
		return -1;
	}
	return 0;
}

/* ", round R of N" for the progress line. */
static const char *round_note(int rd, int rounds)
{
	static char buf[48];

	snprintf(buf, sizeof(buf), ", round %d of %d", rd + 1, rounds);
	return buf;
}

static int bench_setup(struct bench *b, bool need_pevt)
{
	FILE *f;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	b->vpmu_type = read_long_file(VPMU_DIR "/type");
	if (b->vpmu_type <= 0) {
		p_err("%s not found (is pevt.ko loaded?)", VPMU_DIR);
		return -1;
	}
	b->nr_counters = read_long_file(PARAMS "/nr_counters");
	b->sys_enter_id = read_long_file("/sys/kernel/tracing/events/raw_syscalls/sys_enter/id");
	if (b->sys_enter_id < 0)
		b->sys_enter_id = read_long_file("/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id");
	b->cpu = ncpu > 1 ? 1 : 0;
	b->bench_cpu = 0;
	if (need_pevt && access("/dev/pevt", R_OK | W_OK)) {
		p_err("/dev/pevt: %s (is pevt.ko loaded?)", strerror(errno));
		return -1;
	}
	b->ivl_stock_saved = read_long_file(VPMU_DIR "/perf_event_mux_interval_ms");
	b->ivl_pevt_saved = read_long_file(PARAMS "/mux_interval_ms");
	f = fopen(PARAMS "/policy", "r");
	if (f) {
		if (!fgets(b->policy_saved, sizeof(b->policy_saved), f))
			b->policy_saved[0] = '\0';
		fclose(f);
	}
	b->policy_saved[strcspn(b->policy_saved, "\n")] = '\0';
	if (write_file(PROBES, "on") == 0)
		b->probes = true;
	else
		p_info("no %s (kernel without kretprobes?): tick and switch-hook times omitted", PROBES);
	pin(b->bench_cpu);
	return 0;
}

static struct bench *bench_live;	/* for the signal handler */

static void bench_restore(struct bench *b);

/* Interrupted: put the policy, intervals and instrument back, then go. */
static void bench_signal(int sig)
{
	if (bench_live)
		bench_restore(bench_live);	/* open/write/close only */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void bench_restore(struct bench *b)
{
	if (b->probes)
		write_file(PROBES, "off");
	if (b->ivl_stock_saved > 0)
		write_ulong(VPMU_DIR "/perf_event_mux_interval_ms", b->ivl_stock_saved);
	if (b->ivl_pevt_saved > 0)
		write_ulong(PARAMS "/mux_interval_ms", b->ivl_pevt_saved);
	if (b->policy_saved[0])
		write_file(PARAMS "/policy", b->policy_saved);
}

int bench_fairness(int argc, char **argv)
{
	static struct pevt_scenario scen[MAX_SCEN];
	static struct run_result runs[MAX_SCEN * MAX_IVL * NR_SK];
	struct switch_result sw[MAX_SW_CFG];
	unsigned long ivl[MAX_IVL], ks[MAX_K] = { 1, 4 }, sk_list[NR_SK];
	int nscen = 0, nivl = 0, nk = 2, nsk = 0, nruns = 0, nsw = 0, planned;
	int rounds = 1, rd, slices = 0;
	uint64_t t0;
	const char *json = NULL, *data = NULL;
	FILE *jf = NULL, *df = NULL;
	struct bench b = { 0 };
	bool need_pevt = false;
	double sw_secs = 1.0;
	struct utsname u;
	int i, s, v, k, ret = -1;

	while (argc > 0) {
		if (is_prefix(*argv, "scenario")) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			if (nscen == MAX_SCEN) {
				p_err("at most %d scenarios", MAX_SCEN);
				return -1;
			}
			if (load_scenario(*argv, &scen[nscen]))
				return -1;
			nscen++;
		} else if (is_prefix(*argv, "sched")) {
			char *dup, *tok, *save = NULL;

			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			dup = strdup(*argv);
			for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				for (i = 0; i < NR_SK && strcmp(tok, sk_name[i]); i++)
					;
				if (i == NR_SK || nsk == NR_SK) {
					p_err("sched: '%s' is not stock, classic or rotid", tok);
					free(dup);
					return -1;
				}
				sk_list[nsk++] = i;
			}
			free(dup);
		} else if (is_prefix(*argv, "interval")) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			nivl = parse_list(*argv, ivl, MAX_IVL, 1, 1000, "interval (ms)");
			if (nivl < 0)
				return -1;
		} else if (is_prefix(*argv, "duration")) {
			char *end;

			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			b.duration = strtod(*argv, &end);
			if (*end || !(b.duration >= 0.1 && b.duration <= 600)) {
				p_err("duration: '%s' is not a number of seconds in 0.1..600", *argv);
				return -1;
			}
		} else if (is_prefix(*argv, "rounds")) {
			char *end;

			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			rounds = (int)strtol(*argv, &end, 10);
			if (*end || end == *argv || rounds < 1 || rounds > 100) {
				p_err("rounds: '%s' is not a number of rounds in 1..100", *argv);
				return -1;
			}
		} else if (is_prefix(*argv, "switch")) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			if (!strcmp(*argv, "none"))
				nk = 0;
			else if ((nk = parse_list(*argv, ks, MAX_K, 1, MAX_K, "switch (events per task)")) < 0)
				return -1;
		} else if (is_prefix(*argv, "json")) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			json = *argv;
		} else if (is_prefix(*argv, "data")) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			data = *argv;
		} else {
			p_err("unknown argument '%s'", *argv);
			return -1;
		}
		NEXT_ARG();
	}
	if (!nscen) {
		const char *n;

		for (i = 0; (n = pevt_scenario__builtin_name(i)); i++)
			if (load_scenario(n, &scen[nscen++]))
				return -1;
	}
	if (!nsk)
		for (i = 0; i < NR_SK; i++)
			sk_list[nsk++] = i;
	for (i = 0; i < nsk; i++)
		need_pevt |= sk_list[i] != SK_STOCK;
	if (b.duration > 0)
		sw_secs = b.duration < 1 ? b.duration : 1;

	/* Files first: a typo in a path must not cost the whole run. */
	if (json && !(jf = out_open(json)))
		return -1;
	if (data && !(df = out_open(data))) {
		if (jf)
			fclose(jf);
		return -1;
	}
	if (bench_setup(&b, need_pevt))
		goto out;
	bench_live = &b;
	signal(SIGINT, bench_signal);
	signal(SIGTERM, bench_signal);
	signal(SIGHUP, bench_signal);
	for (s = 0; s < nscen; s++)
		if (b.nr_counters > 0 && scen[s].slots > b.nr_counters) {
			p_err("scenario %s needs %d slots, pevt_vpmu has %d (insmod pevt.ko nr_counters=%d)",
			      scen[s].name, scen[s].slots, b.nr_counters, scen[s].slots);
			goto out;
		}
	uname(&u);
	printf("pevt bench fairness on %s, workload CPU %d, %d vPMU slots, tick instrument %s\n",
	       u.release, b.cpu, b.nr_counters, b.probes ? "kretprobes (debugfs pevt/probes)" : "none");

	/* runs planned, for the progress lines */
	for (s = 0, planned = 0; s < nscen; s++)
		planned += (nivl ? nivl : scen[s].workload == PEVT_WL_PHASED ? 3 : 1) * nsk;
	t0 = now_ns();
	for (s = 0; s < nscen; s++) {
		static const unsigned long phased_ivl[] = { 1, 4, 16 };
		const unsigned long *iv = nivl ? ivl : scen[s].workload == PEVT_WL_PHASED ? phased_ivl :
					  (const unsigned long[]){ 4 };
		int niv = nivl ? nivl : scen[s].workload == PEVT_WL_PHASED ? 3 : 1;

		for (v = 0; v < niv; v++) {
			double secs = (b.duration > 0 ? b.duration : scen[s].duration) / rounds;
			int first = nruns;

			memset(&runs[first], 0, nsk * sizeof(runs[0]));
			/*
			 * Subjects in turn, ABBA: a host whose speed drifts
			 * over seconds (TCG) weighs on each alike.
			 */
			for (rd = 0; rd < rounds; rd++) {
				for (k = 0; k < nsk; k++) {
					i = rd % 2 ? nsk - 1 - k : k;
					progress(v == 0 && rd == 0 && k == 0, t0, slices,
						 planned * rounds + (nk ? 1 : 0),
						 "bench fairness: scenario %s (%d of %d), %s, interval %lu ms%s",
						 scen[s].name, s + 1, nscen, sk_name[sk_list[i]], iv[v],
						 rounds > 1 ? round_note(rd, rounds) : "");
					if (run_one(&b, &scen[s], sk_list[i], iv[v], secs,
						    &runs[first + i]))
						goto out;
					slices++;
				}
			}
			for (i = 0; i < nsk; i++)
				run_finish(&runs[nruns++]);
			print_scenario(&runs[first], nruns - first);
			print_ratios(&runs[first], nruns - first);
			fflush(stdout);
		}
	}

	if (nk) {
		struct switch_result cfg[MAX_SW_CFG] = { { .sk = NR_SK } };

		nsw = 1;
		for (k = 0; k < nk; k++)
			for (i = 0; i < nsk; i++)
				cfg[nsw++] = (struct switch_result){ .sk = sk_list[i], .k = ks[k] };
		progress(true, t0, slices, planned * rounds + 1,
			 "bench fairness: context-switch cost, %d configurations", nsw);
		if (run_switches(&b, cfg, nsw, sw_secs, sw))
			goto out;
		printf("\ncontext switches: two tasks ping-pong on CPU %d, k task events (cpu_ns) on each;\n"
		       "  %d rounds of %.2f s per configuration, medians; hooks and timer runs with the instrument\n",
		       b.cpu, SW_ROUNDS, sw_secs / SW_ROUNDS);
		printf("  %-8s %3s %10s %12s %12s %10s %12s\n", "sched", "k", "switches",
		       "ns/switch", "+ns/switch", "hook ns", "timer/switch");
		for (i = 0; i < nsw; i++) {
			struct switch_result *r = &sw[i];
			char hk[16], tm[16], ov[16];

			fmt(hk, sizeof(hk), "%.0f", r->hook_ns);
			fmt(tm, sizeof(tm), "%.3f", r->timer_per_switch);
			fmt(ov, sizeof(ov), "%.0f", i ? r->ns_over_none : NAN);
			printf("  %-8s %3d %10" PRIu64 " %12.0f %12s %10s %12s\n",
			       r->sk == NR_SK ? "none" : sk_name[r->sk], r->k, r->switches,
			       r->ns_per_switch, ov, hk, tm);
		}
		for (k = 0; k < nk; k++) {
			const struct switch_result *st = NULL;

			for (i = 1; i < nsw; i++)
				if (sw[i].k == (int)ks[k] && sw[i].sk == SK_STOCK)
					st = &sw[i];
			for (i = 1; st && st->ns_over_none > 0 && i < nsw; i++)
				if (sw[i].k == (int)ks[k] && sw[i].sk != SK_STOCK)
					printf("  k=%d %s/stock: +ns/switch x%.2f\n", sw[i].k,
					       sk_name[sw[i].sk], sw[i].ns_over_none / st->ns_over_none);
		}
	}
	ret = 0;

	if (jf && write_json(jf, json, u.release, &b, runs, nruns, sw, nsw))
		ret = -1;
	jf = NULL;
	if (df && write_data(df, data, u.release, sk_list, nsk, runs, nruns))
		ret = -1;
	df = NULL;
out:
	bench_restore(&b);
	bench_live = NULL;
	if (jf)
		fclose(jf);
	if (df)
		fclose(df);
	return ret;
}
