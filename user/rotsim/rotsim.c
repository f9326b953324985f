// SPDX-License-Identifier: GPL-2.0
/*
 * pevt-rotsim: run the rotation-id planner (kmod/rotation.c, the very file
 * pevt.ko uses) on large random cases and report what it costs and how good
 * its plans are.  A benchmark, not a test: it prints figures, it does not
 * judge them.  See Documentation/rotation.md.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rotation.h"
#include "pevt/fairopt.h"

struct scenario {
	const char *name;
	unsigned int cpus;		/* plans: one (CPU ctx, task ctx) pair each */
	unsigned int groups;		/* groups per plan */
	unsigned int counters;		/* PMU counters */
	unsigned int max_size;		/* members per group, 1..max_size */
	unsigned int pinned_pct;	/* groups pinned */
	unsigned int software_pct;	/* groups software-only */
	unsigned int task_pct;		/* groups from the task context */
	unsigned int constrained_pct;	/* members with a constraint mask */
};

struct result {
	unsigned int plans;
	double total_us, mean_us, p50_us, p99_us, max_us;
	double tick_us_mean, tick_us_max;	/* per rotation switch, see tick_walk() */
	double r_mean, rmin_mean, lb_mean;
	unsigned int r_max;
	unsigned int at_lb, proven, wrapped, ticking;
	double u_mean, u_min, umax_mean, u_ratio_mean, u0_mean;
	double share_mean, share_min, jain_mean, jain_min;
	unsigned long long cont, kept;	/* groups in rotations r and r+1 */
	unsigned long long on, off, pinned, error, rotating;
	unsigned int opt_plans, opt_inexact, opt_failed;	/* vs the optimum */
	double ratio_mean, ratio_min, dist_mean, dev_max, opt_ms;
};

/* --opt; default 16 plans for up to 64 groups, none above (see rotation.md) */
static int opt_plans = -1;

static unsigned long long rng;

static unsigned long long rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned int rndn(unsigned int n)
{
	return rnd() % n;
}

/*
 * Thread CPU time, not wall time: on a shared, loaded machine preemption
 * would otherwise dominate the tail.
 */
static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sizes skewed to small groups: half are single events. */
static unsigned int rnd_size(const struct scenario *sc)
{
	unsigned int max = sc->max_size < sc->counters ? sc->max_size : sc->counters;
	unsigned int s = 1;

	while (s < max && rndn(2))
		s++;
	return s;
}

static void gen_case(const struct scenario *sc, struct rot_group *g, u64 *masks)
{
	u64 full = sc->counters == 64 ? ~0ULL : (1ULL << sc->counters) - 1;
	unsigned int i, m;

	for (i = 0; i < sc->groups; i++) {
		g[i].masks = masks + (size_t)i * ROT_MAX_COUNTERS;
		g[i].nr_members = rnd_size(sc);
		g[i].flags = 0;
		if (rndn(100) < sc->pinned_pct)
			g[i].flags |= ROT_F_PINNED;
		if (rndn(100) < sc->software_pct)
			g[i].flags |= ROT_F_SOFTWARE;
		if (rndn(100) < sc->task_pct)
			g[i].flags |= ROT_F_TASK;
		for (m = 0; m < g[i].nr_members; m++) {
			u64 mk = ~0ULL;

			if (rndn(100) < sc->constrained_pct) {
				do
					mk = rnd() & full;
				while (!mk);
			}
			masks[(size_t)i * ROT_MAX_COUNTERS + m] = mk;
		}
	}
}

/* Figures of one plan, as DESIGN.md defines them. */
static void measure(const struct scenario *sc, const struct rot_group *g,
		    const struct rot_plan *p, double *u, double *umax,
		    double *u0, double *smin, double *jain)
{
	double sum = 0, sum2 = 0, used = 0, used0 = 0;
	unsigned int i, n = 0, demand = 0;

	*smin = 1;
	for (i = 0; i < sc->groups; i++) {
		double s;

		if (p->state[i] == ROT_PINNED) {
			used += g[i].nr_members;
			used0 += g[i].nr_members;
			demand += g[i].nr_members;
		}
		if (p->state[i] < 0)
			continue;
		s = (double)p->nr_runs[i] / p->nr_rotations;
		used += s * g[i].nr_members;
		/* packing alone, as in the 2018 RFC: one rotation per group */
		used0 += (double)g[i].nr_members / p->min_rotations;
		demand += g[i].nr_members;
		sum += s;
		sum2 += s * s;
		n++;
		if (s < *smin)
			*smin = s;
	}
	*u = used / sc->counters;
	*u0 = used0 / sc->counters;
	*umax = (demand < sc->counters ? demand : sc->counters) / (double)sc->counters;
	*jain = n ? sum * sum / (n * sum2) : 1;
}

/*
 * The plan against the max-min fair optimum (user/lib/fairopt.c): over the
 * flexible groups that need counters, min share/opt and mean |share - opt|.
 */
static int compare_opt(const struct scenario *sc, const struct rot_input *in,
		       const struct rot_plan *p, struct result *res)
{
	double *opt = calloc(sc->groups + 1, sizeof(double));
	double *got = calloc(sc->groups + 1, sizeof(double));
	bool *use = calloc(sc->groups + 1, sizeof(bool));
	struct pevt_fairopt o;
	double ratio, dist, t0;
	unsigned int i;
	int err = -ENOMEM;

	if (!opt || !got || !use)
		goto out;
	t0 = now_us();
	err = pevt_fairopt__solve(in, &o);
	res->opt_ms += (now_us() - t0) / 1e3;
	if (err == -EDOM) {	/* the LP did not converge: counted, not fatal */
		res->opt_failed++;
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	for (i = 0; i < sc->groups; i++) {
		use[i] = p->state[i] >= 0 || p->state[i] == ROT_ALWAYS_OFF;
		opt[i] = o.share[i];
		got[i] = p->state[i] >= 0 ? (double)p->nr_runs[i] / p->nr_rotations : 0;
		if (use[i] && fabs(got[i] - opt[i]) > res->dev_max)
			res->dev_max = fabs(got[i] - opt[i]);
	}
	pevt_fair__compare(opt, got, use, sc->groups, &ratio, &dist);
	res->ratio_mean += ratio;
	res->dist_mean += dist;
	if (ratio < res->ratio_min)
		res->ratio_min = ratio;
	res->opt_plans++;
	res->opt_inexact += !o.exact;
	pevt_fairopt__free(&o);
out:
	free(opt);
	free(got);
	free(use);
	return err;
}

/* Groups running in rotations r and r+1 (cyclically) that keep all counters. */
static void count_kept(const struct scenario *sc, const struct rot_group *g,
		       const struct rot_plan *p, unsigned long long *cont,
		       unsigned long long *kept)
{
	unsigned int r, i, m, nxt;

	for (r = 0; p->nr_rotations > 1 && r < p->nr_rotations; r++) {
		nxt = (r + 1) % p->nr_rotations;
		for (i = 0; i < sc->groups; i++) {
			if (!rot_plan_runs(p, r, i) || !rot_plan_runs(p, nxt, i))
				continue;
			(*cont)++;
			for (m = 0; m < g[i].nr_members; m++)
				if (rot_plan_counter(p, r, i, m) !=
				    rot_plan_counter(p, nxt, i, m))
					break;
			*kept += m == g[i].nr_members;
		}
	}
}

/*
 * What the module's tick does with the plan, irqs off, per rotation
 * switch r -> r+1 (kmod/sched.c sched_apply()): for every group, does
 * rotation r+1 run it, and if so the planned counter of each member.
 * Planning itself runs in process context (sched_plan_work()), so this
 * walk plus the group switching is the tick's whole irq-off cost.
 * Return: mean microseconds per switch over the whole cycle.
 */
static double tick_walk(const struct scenario *sc, const struct rot_group *g,
			const struct rot_plan *p)
{
	unsigned int r, i, m, R = p->nr_rotations ? p->nr_rotations : 1;
	volatile int sink = 0;
	double t0 = now_us();

	for (r = 0; r < R; r++) {
		for (i = 0; i < sc->groups; i++) {
			if (!p->nr_rotations || !rot_plan_runs(p, r, i))
				continue;
			for (m = 0; m < g[i].nr_members; m++)
				sink += rot_plan_counter(p, r, i, m);
		}
	}
	(void)sink;
	return (now_us() - t0) / R;
}

static int run(const struct scenario *sc, struct result *res)
{
	struct rot_group *g = calloc(sc->groups ? sc->groups : 1, sizeof(*g));
	u64 *masks = calloc((size_t)(sc->groups ? sc->groups : 1) * ROT_MAX_COUNTERS,
			    sizeof(u64));
	size_t size = rot_workspace_size(sc->groups, sc->counters);
	double *us = calloc(sc->cpus ? sc->cpus : 1, sizeof(double));
	void *ws = malloc(size ? size : 1);
	struct rot_input in = { g, sc->groups, sc->counters };
	unsigned int cpu, nticking = 0;
	int err = 0;

	memset(res, 0, sizeof(*res));
	if (!g || !masks || !us || !ws || !size) {
		err = -EINVAL;
		goto out;
	}
	res->u_min = res->share_min = res->jain_min = res->ratio_min = 1e9;
	for (cpu = 0; cpu < sc->cpus; cpu++) {
		struct rot_plan p;
		double t0, u, umax, u0, smin, jain;
		unsigned int i;

		gen_case(sc, g, masks);
		t0 = now_us();
		err = rot_plan(&in, ws, size, &p);
		us[cpu] = now_us() - t0;
		if (err)
			goto out;
		res->total_us += us[cpu];
		res->r_mean += p.nr_rotations;
		res->rmin_mean += p.min_rotations;
		res->lb_mean += p.lower_bound;
		if (p.nr_rotations > res->r_max)
			res->r_max = p.nr_rotations;
		res->at_lb += p.min_rotations == p.lower_bound;
		res->proven += p.optimal;
		res->wrapped += p.wrapped;
		res->on += p.nr_always_on;
		res->off += p.nr_always_off;
		res->pinned += p.nr_pinned;
		res->error += p.nr_error;
		for (i = 0; i < sc->groups; i++)
			res->rotating += p.state[i] >= 0;

		t0 = tick_walk(sc, g, &p);
		res->tick_us_mean += t0;
		if (t0 > res->tick_us_max)
			res->tick_us_max = t0;
		measure(sc, g, &p, &u, &umax, &u0, &smin, &jain);
		count_kept(sc, g, &p, &res->cont, &res->kept);
		if (cpu < (unsigned int)(opt_plans >= 0 ? opt_plans :
					 sc->groups <= 64 ? 16 : 0)) {
			err = compare_opt(sc, &in, &p, res);
			if (err)
				goto out;
		}
		res->u_mean += u;
		res->u0_mean += u0;
		res->umax_mean += umax;
		res->u_ratio_mean += umax > 0 ? u / umax : 1;
		if (u < res->u_min)
			res->u_min = u;
		/* shares and fairness only mean something where groups rotate */
		if (p.nr_rotations > 1) {
			nticking++;
			res->share_mean += smin;
			res->jain_mean += jain;
			if (smin < res->share_min)
				res->share_min = smin;
			if (jain < res->jain_min)
				res->jain_min = jain;
		}
	}
	res->plans = sc->cpus;
	res->ticking = nticking;
	if (sc->cpus) {
		res->mean_us = res->total_us / sc->cpus;
		res->tick_us_mean /= sc->cpus;
		res->r_mean /= sc->cpus;
		res->rmin_mean /= sc->cpus;
		res->lb_mean /= sc->cpus;
		res->u_mean /= sc->cpus;
		res->u0_mean /= sc->cpus;
		res->umax_mean /= sc->cpus;
		res->u_ratio_mean /= sc->cpus;
		qsort(us, sc->cpus, sizeof(*us), cmp_double);
		res->p50_us = us[sc->cpus / 2];
		res->p99_us = us[(sc->cpus * 99) / 100 < sc->cpus ?
				 (sc->cpus * 99) / 100 : sc->cpus - 1];
		res->max_us = us[sc->cpus - 1];
	}
	if (res->opt_plans) {
		res->ratio_mean /= res->opt_plans;
		res->dist_mean /= res->opt_plans;
	} else {
		res->ratio_mean = res->ratio_min = 1;
	}
	if (nticking) {
		res->share_mean /= nticking;
		res->jain_mean /= nticking;
	} else {
		res->share_min = res->jain_min = res->share_mean = res->jain_mean = 1;
	}
out:
	free(g);
	free(masks);
	free(us);
	free(ws);
	return err;
}

static void print_header(void)
{
	printf("%-10s %4s %3s %2s %3s | %8s %7s %7s %7s | %6s %6s | %6s %6s %6s %4s %5s %5s %5s | %5s %5s %5s %5s | %5s %5s %5s %5s | %7s %5s %5s %5s\n",
	       "scenario", "cpus", "grp", "N", "con", "total_ms", "mean_us", "p99_us",
	       "max_us", "tick_us", "tickmx", "R", "Rmin", "LB", "Rmax", "=LB%", "prov%", "wrap%",
	       "U0", "U", "U/Umx", "Umin", "smin", "smin0", "Jain", "kept%",
	       "min/opt", "mo0", "dist", "dev0");
}

static void print_row(const struct scenario *sc, const struct result *r)
{
	unsigned int plans = r->plans ? r->plans : 1;

	printf("%-10s %4u %3u %2u %3u | %8.2f %7.1f %7.1f %7.1f | %6.2f %6.2f | %6.2f %6.2f %6.2f %4u %5.1f %5.1f %5.1f | %5.3f %5.3f %5.3f %5.3f | %5.3f %5.3f %5.3f %5.1f | ",
	       sc->name, sc->cpus, sc->groups, sc->counters, sc->constrained_pct,
	       r->total_us / 1e3, r->mean_us, r->p99_us, r->max_us,
	       r->tick_us_mean, r->tick_us_max,
	       r->r_mean, r->rmin_mean, r->lb_mean, r->r_max,
	       100.0 * r->at_lb / plans, 100.0 * r->proven / plans,
	       100.0 * r->wrapped / plans,
	       r->u0_mean, r->u_mean, r->u_ratio_mean, r->u_min,
	       r->share_mean, r->share_min, r->jain_mean,
	       r->cont ? 100.0 * r->kept / r->cont : 100.0);
	if (r->opt_plans)
		printf("%7.3f %5.3f %5.3f %5.3f\n", r->ratio_mean, r->ratio_min,
		       r->dist_mean, r->dev_max);
	else
		printf("%7s %5s %5s %5s\n", "-", "-", "-", "-");
}

static void print_json(FILE *f, const struct scenario *sc, const struct result *r,
		       unsigned long long seed, int last)
{
	fprintf(f, "  {\"scenario\": \"%s\", \"seed\": %llu, \"cpus\": %u, \"groups\": %u, "
		"\"counters\": %u, \"max_size\": %u, \"pinned_pct\": %u, "
		"\"software_pct\": %u, \"task_pct\": %u, \"constrained_pct\": %u,\n"
		"   \"plan_us\": {\"total\": %.3f, \"mean\": %.3f, \"p50\": %.3f, "
		"\"p99\": %.3f, \"max\": %.3f},\n"
		"   \"tick_us\": {\"mean\": %.3f, \"max\": %.3f},\n"
		"   \"rotations\": {\"mean\": %.4f, \"min_rotations_mean\": %.4f, "
		"\"lower_bound_mean\": %.4f, \"max\": %u, \"plans_at_lower_bound\": %u, "
		"\"plans_proven_optimal\": %u, \"plans_wrapped\": %u, \"plans_ticking\": %u},\n"
		"   \"utilization\": {\"mean\": %.4f, \"min\": %.4f, \"upper_bound_mean\": %.4f, "
		"\"ratio_to_upper_bound_mean\": %.4f, \"packing_only_mean\": %.4f},\n"
		"   \"min_share\": {\"mean\": %.4f, \"min\": %.4f}, \"jain\": {\"mean\": %.4f, "
		"\"min\": %.4f},\n"
		"   \"optimum\": {\"plans\": %u, \"inexact\": %u, \"failed\": %u, \"min_over_opt_mean\": %.4f, "
		"\"min_over_opt_min\": %.4f, \"dist_mean\": %.5f, \"max_deviation\": %.4f, "
		"\"solver_ms\": %.1f},\n"
		"   \"continuing_groups\": %llu, \"continuing_groups_kept_counters\": %llu,\n"
		"   \"groups\": {\"always_on\": %llu, \"always_off\": %llu, \"pinned\": %llu, "
		"\"error\": %llu, \"rotating\": %llu}}%s\n",
		sc->name, seed, sc->cpus, sc->groups, sc->counters, sc->max_size,
		sc->pinned_pct, sc->software_pct, sc->task_pct, sc->constrained_pct,
		r->total_us, r->mean_us, r->p50_us, r->p99_us, r->max_us,
		r->tick_us_mean, r->tick_us_max, r->r_mean, r->rmin_mean, r->lb_mean, r->r_max, r->at_lb, r->proven,
		r->wrapped, r->ticking, r->u_mean, r->u_min, r->umax_mean,
		r->u_ratio_mean, r->u0_mean, r->share_mean, r->share_min, r->jain_mean,
		r->jain_min, r->opt_plans, r->opt_inexact, r->opt_failed, r->ratio_mean, r->ratio_min,
		r->dist_mean, r->dev_max, r->opt_ms, r->cont, r->kept, r->on, r->off, r->pinned, r->error, r->rotating,
		last ? "" : ",");
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: pevt-rotsim [options]\n"
"Plan random (CPU ctx, task ctx) pairs with the rotation-id planner and report\n"
"plan time, R versus its lower bound, utilization and fairness.\n"
"\n"
"  -c, --cpus N          plans to compute, one per CPU (default 256)\n"
"  -g, --groups N        groups per plan, CPU + task context (default 200)\n"
"  -n, --counters N      PMU counters, 1..64 (default 8)\n"
"  -m, --max-size N      members per group at most (default 4; half are 1)\n"
"  -p, --pinned PCT      percent of groups pinned (default 2)\n"
"  -w, --software PCT    percent of groups software-only (default 10)\n"
"  -t, --task PCT        percent of groups from the task context (default 50)\n"
"  -k, --constrained PCT percent of members with a random counter mask (default 30)\n"
"  -s, --seed N          random seed (default 1)\n"
"      --sweep           run the preset scenarios of Documentation/rotation.md\n"
"                        (the options above set cpus, groups and seed)\n"
"  -o, --opt N           compare the first N plans of each scenario with the\n"
"                        max-min fair optimum (reference solver; default 16\n"
"                        with up to 64 groups, else 0)\n"
"  -j, --json FILE       also write the results as JSON\n"
"  -h, --help            this text\n"
"\n"
"Columns: total_ms/mean_us/p99_us/max_us plan time (pevt.ko plans in process\n"
"context); tick_us/tickmx the plan walk of one rotation switch, mean and worst\n"
"plan (the tick's irq-off use of the plan); R schedule length, Rmin\n"
"fewest rotations found, LB its lower bound (means), Rmax largest R, =LB%%\n"
"plans with Rmin == LB, prov%% plans with Rmin proven minimal, wrap%% plans\n"
"using the wrap-around schedule; U0 slot utilization of the packing alone\n"
"(2018 RFC: one rotation per group), U with backfill/wrap (sum s_i*slots_i/N),\n"
"U/Umx U over its capacity bound min(1, demand/N), Umin worst plan; smin\n"
"mean and smin0 worst minimum share, Jain mean Jain index of the rotating\n"
"groups, over plans with R > 1; kept%% of the groups running in rotation r\n"
"and r+1 that keep all their counters (the tick leaves them programmed);\n"
"min/opt mean and mo0 worst smallest share/optimal share, dist mean\n"
"sum |share - opt| / n, dev0 largest |share - opt| of a group, over the\n"
"flexible groups that need counters of the --opt plans.\n"
"Plan time is thread CPU time.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpus", required_argument, NULL, 'c' },
		{ "groups", required_argument, NULL, 'g' },
		{ "counters", required_argument, NULL, 'n' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "pinned", required_argument, NULL, 'p' },
		{ "software", required_argument, NULL, 'w' },
		{ "task", required_argument, NULL, 't' },
		{ "constrained", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' },
		{ "sweep", no_argument, NULL, 'S' },
		{ "json", required_argument, NULL, 'j' },
		{ "opt", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct scenario one = { "custom", 256, 200, 8, 4, 2, 10, 50, 30 };
	/* groups == 0: take --groups (default 200) */
	struct scenario sweep[] = {
		{ "vpmu2",      0,  0,  2, 4, 0, 10, 50,  0 },
		{ "vpmu4",      0,  0,  4, 4, 0, 10, 50,  0 },
		{ "x86-8",      0,  0,  8, 4, 0, 10, 50,  0 },
		{ "x86-8-con",  0,  0,  8, 4, 0, 10, 50, 30 },
		{ "x86-8-pin",  0,  0,  8, 4, 1, 10, 50, 30 },
		{ "wide-64",    0,  0, 64, 8, 1, 10, 50, 30 },
		{ "vpmu2-g5",   0,  5,  2, 2, 0, 10, 50,  0 },
		{ "vpmu4-g10",  0, 10,  4, 3, 5, 10, 50, 30 },
		{ "x86-8-g20",  0, 20,  8, 4, 5, 10, 50, 30 },
		{ "x86-8-g50",  0, 50,  8, 4, 2, 10, 50, 30 },
	};
	unsigned long long seed = 1;
	const char *json = NULL;
	int c, do_sweep = 0, err = 0;
	unsigned int i, nsc;
	struct scenario *list;
	FILE *jf = NULL;

	while ((c = getopt_long(argc, argv, "c:g:n:m:p:w:t:k:s:j:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': one.cpus = strtoul(optarg, NULL, 0); break;
		case 'g': one.groups = strtoul(optarg, NULL, 0); break;
		case 'n': one.counters = strtoul(optarg, NULL, 0); break;
		case 'm': one.max_size = strtoul(optarg, NULL, 0); break;
		case 'p': one.pinned_pct = strtoul(optarg, NULL, 0); break;
		case 'w': one.software_pct = strtoul(optarg, NULL, 0); break;
		case 't': one.task_pct = strtoul(optarg, NULL, 0); break;
		case 'k': one.constrained_pct = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'S': do_sweep = 1; break;
		case 'j': json = optarg; break;
		case 'o': opt_plans = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || !one.counters || one.counters > ROT_MAX_COUNTERS ||
	    one.groups > ROT_MAX_GROUPS || !one.max_size) {
		fprintf(stderr, "pevt-rotsim: bad arguments (counters 1..%d, groups 0..%d)\n",
			ROT_MAX_COUNTERS, ROT_MAX_GROUPS);
		usage(stderr);
		return 2;
	}
	if (do_sweep) {
		nsc = sizeof(sweep) / sizeof(sweep[0]);
		for (i = 0; i < nsc; i++) {
			sweep[i].cpus = one.cpus;
			if (!sweep[i].groups)
				sweep[i].groups = one.groups;
		}
		list = sweep;
	} else {
		nsc = 1;
		list = &one;
	}
	if (json) {
		jf = fopen(json, "w");
		if (!jf) {
			fprintf(stderr, "pevt-rotsim: %s: %s\n", json, strerror(errno));
			return 1;
		}
		fprintf(jf, "[\n");
	}
	print_header();
	for (i = 0; i < nsc; i++) {
		struct result r;

		rng = seed * 0x9e3779b97f4a7c15ULL + i + 1;
		err = run(&list[i], &r);
		if (err) {
			fprintf(stderr, "pevt-rotsim: %s: rot_plan: %s\n", list[i].name,
				strerror(-err));
			break;
		}
		print_row(&list[i], &r);
		if (jf)
			print_json(jf, &list[i], &r, seed, i == nsc - 1);
	}
	if (jf) {
		fprintf(jf, "]\n");
		fclose(jf);
	}
	return err ? 1 : 0;
}
