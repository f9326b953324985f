// SPDX-License-Identifier: GPL-2.0
/*
 * pevt stat: count events like perf stat, through the stock
 * perf_event_open() or through /dev/pevt, with the same attrs.
 *
 * The counting itself lives in evlist.c (shared with pevt bench); this
 * file is the command line, the target (workload, -a, -C, -p), the wait
 * loop and the three output formats (text, -x CSV, --json lines).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ctype.h>
#include <math.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <pevt/parse_events.h>

#include "evlist.h"
#include "main.h"
#include "target.h"

#define STAT_DEFAULT_EVENTS	"task-clock,context-switches,cpu-migrations,page-faults"
#define STAT_DEFAULT_EVENTS_CPU	"cpu-clock,context-switches,cpu-migrations,page-faults"

struct stat_opts {
	char *events;			/* joined -e lists */
	bool system_wide;		/* -a */
	const char *cpu_list;		/* -C */
	const char *pid_list;		/* -p */
	enum pevt_backend backend;
	unsigned long interval_ms;	/* -I, 0: off */
	const char *sep;		/* -x, NULL: text */
	bool no_inherit;
	int runs;			/* -r */
	bool verbose;			/* -v */
	char **argv;			/* workload, NULL if none */
	int argc;
};

struct stats {
	double n, mean, M2;
};

/* One counter over the -r runs. */
struct acc {
	struct stats val;		/* scaled value of each run */
	double raw;			/* sum of unscaled counts */
	uint64_t ena, run;		/* sums */
	bool ok;			/* counted in some run */
};

struct stat_run {
	struct stat_opts *o;
	struct evlist el;
	struct line *lines;		/* what is printed, one per counter */
	struct acc *acc;		/* one per counter */
	struct stats wall;		/* elapsed ns per run */
	int uw;				/* unit column width */
	char target[256];		/* "'cmd args'", "system wide", ... */
	pid_t child;			/* workload, 0 if none */
	int go_fd;			/* write to let the child exec */
	int *pids;			/* -p targets (processes) */
	int nr_pids;
	uint64_t start_ns;
	bool interval_header_done;
	bool first_run;
};

static int do_stat_help(void)
{
	return print_help("stat");
}

/* ---- output ----------------------------------------------------------- */

/*
 * The text and CSV layouts are perf stat's (tools/perf/util/stat-display.c
 * in 6.1): value %18, unit, name %-32s, a 35-column metric ("# 0.300 CPUs
 * utilized"), then "  ( +- N% )" under -r and "  (N%)" when multiplexed.
 * A line that was not counted pads its name to 25 columns instead.
 */
#define METRIC_LEN	35

/* One counter as printed: a single read, an interval, or -r runs. */
struct line {
	double val;			/* scaled (mean over runs) */
	bool ok;			/* counted */
	uint64_t ena, run;		/* sums */
	double noise;			/* stddev of the mean, same unit as val */
	double raw;			/* unscaled count (mean over runs) */
};

static const char *backend_name(enum pevt_backend b)
{
	return b == PEVT_BACKEND_DEVICE ? "pevt" : "stock";
}

static bool is_clock(const struct pevt_event_desc *d)
{
	return d->attr.type == PERF_TYPE_SOFTWARE &&
	       (d->attr.config == PERF_COUNT_SW_TASK_CLOCK ||
		d->attr.config == PERF_COUNT_SW_CPU_CLOCK);
}

static bool is_hw(const struct pevt_event_desc *d, uint64_t config)
{
	return d->attr.type == PERF_TYPE_HARDWARE && d->attr.config == config;
}

/* The totals perf's derived metrics divide by (stat-shadow.c STAT_*). */
enum { T_NSECS, T_CYCLES, T_BRANCHES, T_CACHEREFS, T_NR };

/* perf keys them by the privilege modifiers (evsel_context()). */
static unsigned int ctx_of(const struct perf_event_attr *a)
{
	return a->exclude_user | a->exclude_kernel << 1 | a->exclude_hv << 2 |
	       a->exclude_idle << 3 | a->exclude_host << 4 | a->exclude_guest << 5;
}

static int total_kind(const struct pevt_event_desc *d)
{
	if (is_clock(d))
		return T_NSECS;
	if (is_hw(d, PERF_COUNT_HW_CPU_CYCLES))
		return T_CYCLES;
	if (is_hw(d, PERF_COUNT_HW_BRANCH_INSTRUCTIONS))
		return T_BRANCHES;
	if (is_hw(d, PERF_COUNT_HW_CACHE_REFERENCES))
		return T_CACHEREFS;
	return -1;
}

/* Mean of the counted @kind totals in @d's context; *@n how many. */
static double total_of(const struct evlist *el, const struct line *ls,
		       const struct pevt_event_desc *d, int kind, int *n)
{
	double sum = 0;
	int i;

	*n = 0;
	for (i = 0; i < el->nr; i++) {
		const struct pevt_event_desc *o = el->ctrs[i].desc;

		if (ls[i].ok && total_kind(o) == kind && ctx_of(&o->attr) == ctx_of(&d->attr)) {
			sum += ls[i].val;
			(*n)++;
		}
	}
	return *n ? sum / *n : 0;
}

struct metric {
	const char *fmt;		/* NULL: blank */
	char unit[32];
	double val;
};

/* perf_stat__print_shadow_stats(), for the events pevt knows. */
static void metric_of(const struct evlist *el, const struct line *ls, int i,
		      double wall_ns, struct metric *m)
{
	const struct pevt_event_desc *d = el->ctrs[i].desc;
	double v = ls[i].val, t;
	int n;

	m->fmt = NULL;
	m->unit[0] = '\0';
	m->val = 0;
	if (is_hw(d, PERF_COUNT_HW_INSTRUCTIONS)) {
		t = total_of(el, ls, d, T_CYCLES, &n);
		if (t) {
			m->fmt = "%7.2f ";
			m->val = v / t;
		}
		snprintf(m->unit, sizeof(m->unit), "insn per cycle");
	} else if (is_hw(d, PERF_COUNT_HW_BRANCH_MISSES)) {
		t = total_of(el, ls, d, T_BRANCHES, &n);
		if (n) {
			m->fmt = "%7.2f%%";
			m->val = t ? v / t * 100.0 : 0;
		}
		snprintf(m->unit, sizeof(m->unit), "of all branches");
	} else if (is_hw(d, PERF_COUNT_HW_CACHE_MISSES)) {
		t = total_of(el, ls, d, T_CACHEREFS, &n);
		if (n) {
			m->fmt = "%8.3f %%";
			m->val = t ? v * 100 / t : 0;
		}
		snprintf(m->unit, sizeof(m->unit), "of all cache refs");
	} else if (is_hw(d, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND) ||
		   is_hw(d, PERF_COUNT_HW_STALLED_CYCLES_BACKEND)) {
		t = total_of(el, ls, d, T_CYCLES, &n);
		m->fmt = "%7.2f%%";
		m->val = t ? v / t * 100.0 : 0;
		snprintf(m->unit, sizeof(m->unit), "%s cycles idle",
			 d->attr.config == PERF_COUNT_HW_STALLED_CYCLES_FRONTEND ?
			 "frontend" : "backend");
	} else if (is_hw(d, PERF_COUNT_HW_CPU_CYCLES)) {
		t = total_of(el, ls, d, T_NSECS, &n);
		if (t) {
			m->fmt = "%8.3f";
			m->val = v / t;
			snprintf(m->unit, sizeof(m->unit), "GHz");
		} else {
			snprintf(m->unit, sizeof(m->unit), "Ghz");	/* sic, perf */
		}
	} else if (is_clock(d)) {
		if (wall_ns) {
			m->fmt = "%8.3f";
			m->val = v / wall_ns;
		}
		snprintf(m->unit, sizeof(m->unit), "CPUs utilized");
	} else if ((t = total_of(el, ls, d, T_NSECS, &n)), n) {
		/* convert_unit_double() */
		const char *pfx = "";
		double r = t ? 1e9 * v / t : 0;

		if (r > 1000.0) {
			r /= 1000.0;
			pfx = "K";
		}
		if (r > 1000.0) {
			r /= 1000.0;
			pfx = "M";
		}
		if (r > 1000.0) {
			r /= 1000.0;
			pfx = "G";
		}
		m->fmt = "%8.3f";
		m->val = r;
		snprintf(m->unit, sizeof(m->unit), "%s/sec", pfx);
	}
}

static const char *bad_count(const struct counter *ctr)
{
	return ctr->supported ? "<not counted>" : "<not supported>";
}

static int unit_width(const struct evlist *el)
{
	int i, w = 4;	/* strlen("unit") */

	for (i = 0; i < el->nr; i++) {
		const char *u = is_clock(el->ctrs[i].desc) ? "msec" : el->ctrs[i].desc->unit;

		if ((int)strlen(u) > w)
			w = (int)strlen(u);
	}
	return w;
}

static void print_line_csv(struct stat_run *r, int i, const struct line *ls,
			   const struct metric *m, double ts)
{
	const struct counter *ctr = &r->el.ctrs[i];
	const struct line *l = &ls[i];
	const char *sep = r->o->sep;
	const char *unit = is_clock(ctr->desc) ? "msec" : ctr->desc->unit;

	if (ts >= 0)
		printf("%.9f%s", ts, sep);
	if (l->ok)
		printf(is_clock(ctr->desc) ? "%.2f%s" : "%.0f%s",
		       is_clock(ctr->desc) ? l->val / 1e6 : l->val, sep);
	else
		printf("%s%s", bad_count(ctr), sep);
	printf("%s%s%s", unit, sep, ctr->desc->name);
	if (r->o->runs > 1)
		printf("%s%.2f%%", sep, l->val ? 100.0 * l->noise / l->val : 0);
	/* print_running(): an integer percentage, as perf computes it */
	printf("%s%" PRIu64 "%s%.2f", sep, l->run, sep,
	       l->run != l->ena ? (double)(100 * l->run / l->ena) : 100.0);
	if (l->ok && m->fmt) {
		char buf[64], *v = buf, *e;

		snprintf(buf, sizeof(buf), m->fmt, m->val);
		while (*v == ' ')
			v++;
		for (e = v; isdigit((unsigned char)*e) || *e == '.'; e++)
			;
		*e = '\0';
		printf("%s%s%s%s\n", sep, v, sep, m->unit);
	} else {
		printf("%s%s\n", sep, sep);
	}
}

static void print_line(struct stat_run *r, int i, const struct line *ls,
		       double wall_ns, double ts)
{
	const struct counter *ctr = &r->el.ctrs[i];
	const struct line *l = &ls[i];
	bool clock = is_clock(ctr->desc);
	const char *unit = clock ? "msec" : ctr->desc->unit;
	struct metric m;

	metric_of(&r->el, ls, i, wall_ns, &m);
	if (r->o->sep) {
		print_line_csv(r, i, ls, &m, ts);
		return;
	}
	if (ts >= 0)
		printf("%16.9f ", ts);
	if (!l->ok) {
		printf("%18s %-*s %-25s%*s", bad_count(ctr), r->uw, unit,
		       ctr->desc->name, METRIC_LEN, "");
	} else {
		printf(clock ? "%18.2f %-*s %-32s" : "%18.0f %-*s %-32s",
		       clock ? l->val / 1e6 : l->val, r->uw, unit, ctr->desc->name);
		if (m.fmt) {
			int n = printf(" # ");

			n += printf(m.fmt, m.val);
			printf(" %-*s", METRIC_LEN - n - 1, m.unit);
		} else {
			printf("%*s", METRIC_LEN, "");
		}
	}
	if (r->o->runs > 1 && l->val && l->noise)
		printf("  ( +-%6.2f%% )", 100.0 * l->noise / l->val);
	if (l->run != l->ena)
		printf("  (%.2f%%)", 100.0 * l->run / l->ena);
	putchar('\n');
}

static void print_counter_json(FILE *f, const struct evlist *el, int idx,
			       const struct line *l, int runs)
{
	const struct counter *ctr = &el->ctrs[idx];
	const struct pevt_event_desc *d = ctr->desc;

	fprintf(f, "{\"event\":");
	json_str(f, d->name);
	fprintf(f, ",\"pmu\":");
	if (d->pmu)
		json_str(f, d->pmu);
	else
		fprintf(f, "null");
	fprintf(f, ",\"group\":%d,\"leader\":%s,\"unit\":\"%s\","
		"\"value\":%.0f,\"enabled\":%" PRIu64 ",\"running\":%" PRIu64
		",\"supported\":%s,\"counted\":%s,\"scaled\":",
		d->group, d->leader == idx ? "true" : "false", d->unit,
		l->raw, l->ena, l->run,
		ctr->supported ? "true" : "false", l->ok ? "true" : "false");
	if (l->ok)
		fprintf(f, "%.3f", l->val);
	else
		fprintf(f, "null");
	fprintf(f, ",\"pcnt_running\":%.2f", l->ena ? 100.0 * l->run / l->ena : 0);
	if (runs > 1)
		fprintf(f, ",\"stddev\":%.3f", l->noise);
	fputc('}', f);
}

static void print_counters_json(struct stat_run *r, const struct line *ls)
{
	int i;

	printf("\"counters\":[");
	for (i = 0; i < r->el.nr; i++) {
		if (i)
			putchar(',');
		print_counter_json(stdout, &r->el, i, &ls[i], r->o->runs);
	}
	printf("]");
}

/* The lines of one read: the last interval (@delta) or the whole run. */
static void lines_of_read(struct stat_run *r, bool delta)
{
	int i;

	for (i = 0; i < r->el.nr; i++) {
		struct counter *ctr = &r->el.ctrs[i];
		const struct pevt_counts *c = delta ? &ctr->delta : &ctr->cur;
		double pct;

		r->lines[i].ok = ctr->supported &&
				 counts__scaled(c, &r->lines[i].val, &pct) &&
				 ctr->nr_err < r->el.nr_cpus * r->el.nr_threads;
		r->lines[i].ena = c->ena;
		r->lines[i].run = c->run;
		r->lines[i].noise = 0;
		r->lines[i].raw = (double)c->val;
	}
}

static void print_interval(struct stat_run *r, uint64_t t)
{
	double ts = (double)(t - r->start_ns) / 1e9;
	int i;

	lines_of_read(r, true);
	if (json_output) {
		printf("{\"interval\":%.9f,", ts);
		print_counters_json(r, r->lines);
		printf("}\n");
	} else {
		if (!r->o->sep && !r->interval_header_done) {
			printf("#           time             counts %*s events\n", r->uw, "unit");
			r->interval_header_done = true;
		}
		/* perf divides by the nominal interval, even for the last one */
		for (i = 0; i < r->el.nr; i++)
			print_line(r, i, r->lines, r->o->interval_ms * 1e6, ts);
	}
	fflush(stdout);
}

/* Welford's running mean and variance (perf's util/stat.c). */
static void stats_update(struct stats *s, double v)
{
	double delta;

	s->n++;
	delta = v - s->mean;
	s->mean += delta / s->n;
	s->M2 += delta * (v - s->mean);
}

/* The standard deviation of the mean, perf's stddev_stats(). */
static double stats_stddev(const struct stats *s)
{
	if (s->n < 2)
		return 0;
	return sqrt(s->M2 / (s->n - 1) / s->n);
}

/* After a run: fold its counts into the -r statistics. */
static void accumulate_run(struct stat_run *r, uint64_t elapsed)
{
	int i;

	lines_of_read(r, false);
	for (i = 0; i < r->el.nr; i++) {
		struct acc *a = &r->acc[i];

		stats_update(&a->val, r->lines[i].ok ? r->lines[i].val : 0);
		a->raw += r->lines[i].raw;
		a->ena += r->lines[i].ena;
		a->run += r->lines[i].run;
		a->ok |= r->lines[i].ok;
	}
	stats_update(&r->wall, (double)elapsed);
}

static void print_summary(struct stat_run *r, const struct rusage *ru,
			  int status, bool have_status)
{
	double user = ru ? ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 : 0;
	double sys = ru ? ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6 : 0;
	int runs = r->o->runs, i;

	for (i = 0; i < r->el.nr; i++) {
		r->lines[i].val = r->acc[i].val.mean;
		r->lines[i].noise = stats_stddev(&r->acc[i].val);
		r->lines[i].ok = r->acc[i].ok && r->acc[i].ena && r->acc[i].run;
		r->lines[i].ena = r->acc[i].ena / runs;
		r->lines[i].run = r->acc[i].run / runs;
		r->lines[i].raw = r->acc[i].raw / runs;
	}
	if (json_output) {
		printf("{\"target\":");
		json_str(stdout, r->target);
		printf(",\"backend\":\"%s\",\"runs\":%d,\"elapsed_ns\":%.0f",
		       backend_name(r->o->backend), runs,
		       r->wall.mean);
		if (runs > 1)
			printf(",\"elapsed_stddev_ns\":%.0f", stats_stddev(&r->wall));
		if (have_status)
			printf(",\"exit_status\":%d", status);
		else
			printf(",\"exit_status\":null");
		/* rusage: of the one workload run */
		if (ru)
			printf(",\"user_ns\":%.0f,\"sys_ns\":%.0f", user * 1e9, sys * 1e9);
		else
			printf(",\"user_ns\":null,\"sys_ns\":null");
		putchar(',');
		print_counters_json(r, r->lines);
		printf("}\n");
		return;
	}
	if (!r->o->sep) {
		printf("\n Performance counter stats for %s", r->target);
		if (runs > 1)
			printf(" (%d runs)", runs);
		printf(":\n\n");
	}
	for (i = 0; i < r->el.nr; i++)
		print_line(r, i, r->lines, r->wall.mean, -1);
	if (r->o->sep)
		return;
	putchar('\n');
	if (runs == 1) {
		printf(" %17.9f seconds time elapsed", r->wall.mean / 1e9);
		if (ru)
			printf("\n\n %17.9f seconds user\n %17.9f seconds sys\n", user, sys);
	} else {
		double avg = r->wall.mean / 1e9, sd = stats_stddev(&r->wall) / 1e9;
		/* two more digits than the stddev's first significant one */
		int prec = sd > 1 ? 2 : sd > 0 ? (int)lround(ceil(-log10(sd))) + 2 : 9;

		printf(" %17.*f +- %.*f seconds time elapsed", prec, avg, prec, sd);
		if (avg && sd)
			printf("  ( +-%6.2f%% )", 100.0 * sd / avg);
	}
	printf("\n\n");
}

/* ---- targets ---------------------------------------------------------- */

static bool pids_alive(struct stat_run *r)
{
	int i;

	for (i = 0; i < r->nr_pids; i++)
		if (pid_alive(r->pids[i]))
			return true;
	return false;
}

/* ---- errors ----------------------------------------------------------- */

/* ---- main ------------------------------------------------------------- */

static int parse_opts(int argc, char **argv, struct stat_opts *o)
{
	static const struct option opts[] = {
		{ "event",		required_argument,	NULL, 'e' },
		{ "all-cpus",		no_argument,		NULL, 'a' },
		{ "cpu",		required_argument,	NULL, 'C' },
		{ "pid",		required_argument,	NULL, 'p' },
		{ "backend",		required_argument,	NULL, 'b' },
		{ "interval-print",	required_argument,	NULL, 'I' },
		{ "field-separator",	required_argument,	NULL, 'x' },
		{ "no-inherit",		no_argument,		NULL, 'i' },
		{ "repeat",		required_argument,	NULL, 'r' },
		{ "verbose",		no_argument,		NULL, 'v' },
		{ "json",		no_argument,		NULL, 'j' },
		{ "help",		no_argument,		NULL, 'h' },
		{ 0 }
	};
	char *end;
	int opt;

	/* argv[0] is the first option here: getopt wants a program name. */
	argc++;
	argv--;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "+e:aC:p:b:I:x:ir:vjh", opts, NULL)) >= 0) {
		switch (opt) {
		case 'e':
			if (event_list_append(&o->events, optarg))
				return -ENOMEM;
			break;
		case 'a':
			o->system_wide = true;
			break;
		case 'C':
			o->cpu_list = optarg;
			break;
		case 'p':
			o->pid_list = optarg;
			break;
		case 'b':
			if (!strcmp(optarg, "stock") || !strcmp(optarg, "perf")) {
				o->backend = PEVT_BACKEND_PERF;
			} else if (!strcmp(optarg, "pevt")) {
				o->backend = PEVT_BACKEND_DEVICE;
			} else {
				p_err("unknown backend '%s' (stock or pevt)", optarg);
				return -EINVAL;
			}
			break;
		case 'I':
			o->interval_ms = strtoul(optarg, &end, 10);
			if (*end || !*optarg || o->interval_ms < 1) {
				p_err("bad interval '%s' (milliseconds, >= 1)", optarg);
				return -EINVAL;
			}
			break;
		case 'x':
			o->sep = optarg;
			break;
		case 'i':
			o->no_inherit = true;
			break;
		case 'r':
			o->runs = (int)strtol(optarg, &end, 10);
			if (*end || !*optarg || o->runs < 1 || o->runs > 100000) {
				p_err("bad repeat count '%s' (1..100000)", optarg);
				return -EINVAL;
			}
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'j':
			json_output = true;
			break;
		case 'h':
			do_stat_help();
			exit(0);
		default:
			p_err("bad option (see '%s stat --help')", bin_name);
			return -EINVAL;
		}
	}
	o->argc = argc - optind;
	o->argv = o->argc ? argv + optind : NULL;
	return 0;
}

static int setup_target(struct stat_run *r, int **cpus, int *nr_cpus,
			int **threads, int *nr_threads)
{
	struct stat_opts *o = r->o;
	int *pl = NULL, n, i, ret;
	char buf[4096];

	*cpus = *threads = NULL;
	*nr_cpus = *nr_threads = 0;
	if (o->pid_list && (o->system_wide || o->cpu_list)) {
		p_err("-p cannot be combined with -a or -C");
		return -EINVAL;
	}
	if (!o->pid_list && !o->system_wide && !o->cpu_list && !o->argv) {
		p_err("nothing to count: give a COMMAND, -a, -C or -p (see '%s stat --help')",
		      bin_name);
		return -EINVAL;
	}
	if (o->cpu_list) {
		n = pevt_cpu_list__parse(o->cpu_list, cpus);
		if (n < 0) {
			p_err("bad CPU list '%s' (e.g. 0-3,6)", o->cpu_list);
			return n;
		}
		*nr_cpus = n;
		snprintf(r->target, sizeof(r->target), "'CPU(s) %s'", o->cpu_list);
	} else if (o->system_wide) {
		FILE *f = fopen("/sys/devices/system/cpu/online", "re");

		if (!f || !fgets(buf, sizeof(buf), f)) {
			if (f)
				fclose(f);
			p_err("cannot read /sys/devices/system/cpu/online");
			return -ENOENT;
		}
		fclose(f);
		n = pevt_cpu_list__parse(buf, cpus);
		if (n < 0) {
			p_err("bad CPU list in /sys/devices/system/cpu/online: '%s'", buf);
			return n;
		}
		*nr_cpus = n;
		snprintf(r->target, sizeof(r->target), "'system wide'");
	} else if (o->pid_list) {
		const char *q = o->pid_list;

		for (n = 0; *q; n++) {
			char *e;
			long v = strtol(q, &e, 10);
			int *np;

			if (e == q || v <= 0 || v > INT32_MAX || (*e && (*e != ',' || !e[1]))) {
				free(pl);
				p_err("bad pid list '%s' (e.g. 123,456)", o->pid_list);
				return -EINVAL;
			}
			np = realloc(pl, (n + 1) * sizeof(*pl));
			if (!np) {
				free(pl);
				return -ENOMEM;
			}
			pl = np;
			pl[n] = (int)v;
			q = *e ? e + 1 : e;
		}
		if (!n) {
			p_err("bad pid list '' (e.g. 123,456)");
			return -EINVAL;
		}
		for (i = 0; i < n; i++) {
			ret = proc_add_threads(pl[i], threads, nr_threads);
			if (ret) {
				p_err("no such process: %d", pl[i]);
				free(pl);
				return ret;
			}
		}
		r->pids = pl;
		r->nr_pids = n;
		snprintf(r->target, sizeof(r->target), "process id '%s'", o->pid_list);
	} else {
		char cmd[200];

		join_args(cmd, sizeof(cmd), o->argc, o->argv);
		snprintf(r->target, sizeof(r->target), "'%s'", cmd);
	}
	return 0;
}

/*
 * Wait for the end of the measurement, printing intervals on the way.
 * Signals are blocked and taken with sigtimedwait(), so a SIGCHLD
 * between two checks cannot be missed.  Returns true if the workload
 * was reaped (status and rusage filled).
 */
static bool wait_loop(struct stat_run *r, int *status, struct rusage *ru)
{
	uint64_t tick = r->o->interval_ms ? r->o->interval_ms * 1000000ull
					  : 100000000ull;
	uint64_t next = r->start_ns + tick;
	sigset_t set;
	bool interrupted = false;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	for (;;) {
		uint64_t now = now_ns();
		struct timespec ts;
		int sig;

		if (r->child && wait4(r->child, status, WNOHANG, ru) == r->child)
			return true;
		if (!r->child && (interrupted || (r->nr_pids && !pids_alive(r))))
			return false;
		if (now >= next) {
			if (r->o->interval_ms) {
				evlist__read(&r->el);
				print_interval(r, now);
			}
			next += tick;
			continue;
		}
		ts.tv_sec = (next - now) / 1000000000ull;
		ts.tv_nsec = (next - now) % 1000000000ull;
		sig = sigtimedwait(&set, NULL, &ts);
		/*
		 * SIGINT/SIGTERM end a -a/-C/-p run; with a workload it went
		 * to the workload too (same process group): wait for it.
		 */
		if (sig == SIGINT || sig == SIGTERM) {
			interrupted = true;
			if (r->child)
				kill(r->child, sig);
		}
	}
}

static void report_open_error(struct stat_run *r, const struct evlist_open_err *oerr,
			      int ret)
{
	char where[64] = "";

	if (ret == -ENOMEM && !oerr->err) {
		p_err("out of memory");
		return;
	}
	if (oerr->cpu >= 0)
		snprintf(where, sizeof(where), " on CPU %d", oerr->cpu);
	else if (oerr->thread > 0)
		snprintf(where, sizeof(where), " for pid %d", oerr->thread);
	p_err("cannot open event '%s'%s with backend %s: %s%s",
	      r->el.ctrs[oerr->idx].desc->name, where,
	      backend_name(r->o->backend), strerror(-oerr->err),
	      evlist__open_hint(&r->el, oerr->idx, oerr->err));
}

/*
 * Events the backend lacks print <not supported> (perf says why only
 * with -v); a hint that names a fix (--no-inherit) is always worth it.
 */
static void report_unsupported(struct stat_run *r)
{
	int i;

	for (i = 0; i < r->el.nr; i++) {
		const struct counter *ctr = &r->el.ctrs[i];
		const char *hint;

		if (ctr->supported || !ctr->open_err)
			continue;
		hint = evlist__open_hint(&r->el, i, ctr->open_err);
		if (r->o->verbose || strstr(hint, "--no-inherit"))
			p_info("Warning: %s event is not supported with backend %s: %s%s",
			       ctr->desc->name, backend_name(r->o->backend),
			       strerror(-ctr->open_err), hint);
	}
}

/*
 * One measurement: start the workload (if any), open and enable the
 * counters, wait, read, fold the counts into r->acc.  Returns the exit
 * code do_stat() should end with, or -1 to go on; *@reaped and *@ru
 * describe the workload.
 */
static int run_once(struct stat_run *r, const sigset_t *oldmask, bool last,
		    int *status, bool *reaped, struct rusage *ru)
{
	struct stat_opts *o = r->o;
	struct evlist_open_err oerr;
	int err_fd = -1, ret, code = 1;
	uint64_t end;

	*reaped = false;
	if (o->argv) {
		ret = workload_prepare(r->o->argv, oldmask, false, &r->child, &r->go_fd, &err_fd);
		if (ret) {
			p_err("cannot start '%s': %s", o->argv[0], strerror(-ret));
			goto out;
		}
		/*
		 * With -a/-C/-p a COMMAND only times the run: it is not
		 * counted.  Counted, it is from its exec on, as perf stat's
		 * enable_on_exec (not the fork's tail before it).
		 */
		r->el.on_exec = !(o->system_wide || o->cpu_list || o->pid_list);
		if (r->el.on_exec &&
		    evlist__set_target(&r->el, r->el.cpus[0] == -1 ? NULL : r->el.cpus,
				       r->el.cpus[0] == -1 ? 0 : r->el.nr_cpus, &r->child, 1)) {
			p_err("out of memory");
			goto out;
		}
	}
	ret = evlist__open(&r->el, true, &oerr);
	if (ret) {
		report_open_error(r, &oerr, ret);
		goto out;
	}
	if (r->first_run)
		report_unsupported(r);
	r->first_run = false;
	if (evlist__enable(&r->el)) {
		p_err("cannot enable the events: %s", strerror(errno));
		goto out;
	}
	r->start_ns = now_ns();
	r->interval_header_done = false;
	if (r->child) {
		int e;

		/* The counters run: let the workload exec. */
		if (write(r->go_fd, "g", 1) != 1) {
			p_err("cannot start the workload: %s", strerror(errno));
			goto out;
		}
		close(r->go_fd);
		r->go_fd = -1;
		if (read(err_fd, &e, sizeof(e)) == sizeof(e)) {
			waitpid(r->child, NULL, 0);
			r->child = 0;
			p_err("cannot run '%s': %s", o->argv[0], strerror(e));
			code = 127;
			goto out;
		}
	}
	*reaped = wait_loop(r, status, ru);
	end = now_ns();
	evlist__disable(&r->el);
	if (evlist__read(&r->el)) {
		p_err("cannot read the counters: %s", strerror(errno));
		goto out;
	}
	if (o->interval_ms)
		print_interval(r, end);	/* the last, partial interval, as perf */
	accumulate_run(r, end - r->start_ns);
	r->child = 0;
	code = -1;
	/* perf -r stops at a workload killed by a signal */
	if (!last && *reaped && WIFSIGNALED(*status))
		code = 128 + WTERMSIG(*status);
out:
	if (r->go_fd >= 0)
		close(r->go_fd);	/* the child reads EOF and exits */
	r->go_fd = -1;
	if (r->child > 0)
		waitpid(r->child, NULL, 0);
	r->child = 0;
	if (err_fd >= 0)
		close(err_fd);
	evlist__close(&r->el);
	return code;
}

int do_stat(int argc, char **argv)
{
	struct stat_opts o = { .backend = PEVT_BACKEND_PERF, .runs = 1 };
	struct stat_run r = { .o = &o, .go_fd = -1, .first_run = true };
	struct pevt_parse_error perr;
	struct pevt_events *evs = NULL;
	int *cpus = NULL, *threads = NULL, nr_cpus, nr_threads;
	int status = 0, code = 1, run;
	bool reaped = false;
	const char *list;
	sigset_t set, oldmask;
	struct rusage ru;

	if (argc >= 1 && !strcmp(argv[0], "help"))
		return do_stat_help();
	if (parse_opts(argc, argv, &o))
		goto out;
	list = o.events ? o.events :
	       (o.system_wide || o.cpu_list) ? STAT_DEFAULT_EVENTS_CPU : STAT_DEFAULT_EVENTS;
	evs = pevt_events__parse(list, NULL, &perr);
	if (!evs) {
		report_parse_error(list, &perr);
		goto out;
	}
	if (setup_target(&r, &cpus, &nr_cpus, &threads, &nr_threads))
		goto out;
	if (o.runs > 1 && !o.argv) {
		p_err("-r needs a COMMAND to repeat");
		goto out;
	}
	if (o.runs > 1 && o.interval_ms) {
		p_err("-r and -I cannot be combined");
		goto out;
	}
	if (evlist__init(&r.el, evs, o.backend) ||
	    evlist__set_target(&r.el, cpus, nr_cpus, threads, nr_threads)) {
		p_err("out of memory");
		goto out;
	}
	r.lines = calloc(r.el.nr ? r.el.nr : 1, sizeof(*r.lines));
	r.acc = calloc(r.el.nr ? r.el.nr : 1, sizeof(*r.acc));
	if (!r.lines || !r.acc) {
		p_err("out of memory");
		goto out;
	}
	r.el.inherit = !o.no_inherit;
	r.uw = unit_width(&r.el);

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &oldmask);

	for (run = 0; run < o.runs; run++) {
		code = run_once(&r, &oldmask, run == o.runs - 1, &status, &reaped, &ru);
		if (code >= 0)
			goto out;
	}
	if (!o.interval_ms || json_output)
		print_summary(&r, reaped && o.runs == 1 ? &ru : NULL,
			      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
			      reaped);
	fflush(stdout);
	code = 0;
	if (reaped) {
		if (WIFEXITED(status)) {
			code = WEXITSTATUS(status);
		} else if (WIFSIGNALED(status)) {
			code = 128 + WTERMSIG(status);
			if (!json_output)
				p_info("%s: %s", o.argv[0], strsignal(WTERMSIG(status)));
		}
	}
out:
	if (r.el.ctrs)
		evlist__exit(&r.el);
	pevt_events__delete(evs);
	free(r.lines);
	free(r.acc);
	free(cpus);
	free(threads);
	free(r.pids);
	free(o.events);
	fflush(stdout);
	exit(code);
}
