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
	char **argv;			/* workload, NULL if none */
	int argc;
};

struct stat_run {
	struct stat_opts *o;
	struct evlist el;
	char target[256];		/* "'cmd args'", "system wide", ... */
	pid_t child;			/* workload, 0 if none */
	int go_fd;			/* write to let the child exec */
	int *pids;			/* -p targets (processes) */
	int nr_pids;
	uint64_t start_ns;
	bool interval_header_done;
};

static int do_stat_help(void)
{
	if (json_output) {
		fprintf(stdout, "null\n");
		return 0;
	}
	fprintf(stderr,
		"Usage: %1$s stat [OPTIONS] [--] [COMMAND [ARGS...]]\n"
		"\n"
		"Count events while COMMAND runs, or system wide (-a), on CPUs (-C),\n"
		"or for processes (-p) until interrupted (a COMMAND then only sets\n"
		"the duration).\n"
		"\n"
		"  -e, --event LIST        events, may repeat (default: " STAT_DEFAULT_EVENTS ")\n"
		"                          LIST := EV[,EV...] | {EV,EV...}[:MODS]  (groups)\n"
		"                          EV := name | rHEX | sys:tracepoint | pmu/term,.../\n"
		"                          optionally followed by :MODS, MODS in u k h D\n"
		"  -a, --all-cpus          system wide: every online CPU\n"
		"  -C, --cpu LIST          only these CPUs (e.g. 0-1,3); system wide on them\n"
		"  -p, --pid PIDS          existing processes (all their threads), comma list\n"
		"  -b, --backend B         stock (perf_event_open, default) or pevt (/dev/pevt)\n"
		"  -I, --interval-print MS print the counts of every MS milliseconds\n"
		"  -x, --field-separator S CSV output with separator S\n"
		"  -i, --no-inherit        do not count the workload's child tasks\n"
		"  -j, --json              JSON lines on stdout (same as the global --json)\n"
		"  -h, --help              this text\n"
		"\n"
		"The exit status is the COMMAND's (128+N if killed by signal N), 127 if it\n"
		"could not be run, 1 on errors of %1$s itself.\n"
		"See Documentation/pevt-stat.md.\n",
		bin_name);
	return 0;
}

/* ---- output ----------------------------------------------------------- */

static bool is_clock(const struct pevt_event_desc *d)
{
	return d->attr.type == PERF_TYPE_SOFTWARE &&
	       (d->attr.config == PERF_COUNT_SW_TASK_CLOCK ||
		d->attr.config == PERF_COUNT_SW_CPU_CLOCK);
}

/* Counted unless it never ran while enabled, or every fd is in error state. */
static bool counter_value(const struct evlist *el, const struct counter *ctr,
			  const struct pevt_counts *c, double *scaled, double *pct)
{
	bool ok = counts__scaled(c, scaled, pct);

	return ok && ctr->nr_err < el->nr_cpus * el->nr_threads;
}

static void print_counter_json(FILE *f, const struct evlist *el,
			       const struct counter *ctr,
			       const struct pevt_counts *c, int idx)
{
	const struct pevt_event_desc *d = ctr->desc;
	double scaled, pct;
	bool counted = counter_value(el, ctr, c, &scaled, &pct);

	fprintf(f, "{\"event\":");
	json_str(f, d->name);
	fprintf(f, ",\"pmu\":");
	if (d->pmu)
		json_str(f, d->pmu);
	else
		fprintf(f, "null");
	fprintf(f, ",\"group\":%d,\"leader\":%s,\"unit\":\"%s\","
		"\"value\":%" PRIu64 ",\"enabled\":%" PRIu64 ",\"running\":%" PRIu64
		",\"counted\":%s,\"scaled\":",
		d->group, d->leader == idx ? "true" : "false",
		d->unit, c->val, c->ena, c->run,
		counted ? "true" : "false");
	if (counted)
		fprintf(f, "%.3f", scaled);
	else
		fprintf(f, "null");
	fprintf(f, ",\"pcnt_running\":%.2f}", pct);
}

static void print_counters_json(struct stat_run *r, bool delta, double ts)
{
	int i;

	if (ts >= 0)
		printf("{\"interval\":%.9f,\"counters\":[", ts);
	else
		printf("{\"counters\":[");
	for (i = 0; i < r->el.nr; i++) {
		struct counter *ctr = &r->el.ctrs[i];

		if (i)
			putchar(',');
		print_counter_json(stdout, &r->el, ctr, delta ? &ctr->delta : &ctr->cur, i);
	}
	printf("]");
}

static void print_counter_line(struct stat_run *r, const struct counter *ctr,
			       const struct pevt_counts *c, double ts)
{
	const struct pevt_event_desc *d = ctr->desc;
	const char *sep = r->o->sep;
	double scaled, pct;
	bool counted = counter_value(&r->el, ctr, c, &scaled, &pct);
	bool clock = is_clock(d);
	const char *unit = clock ? "msec" : d->unit;
	char val[64];

	if (!counted)
		snprintf(val, sizeof(val), "<not counted>");
	else if (clock)
		snprintf(val, sizeof(val), "%.2f", scaled / 1e6);
	else
		snprintf(val, sizeof(val), "%.0f", scaled);

	if (sep) {
		if (ts >= 0)
			printf("%.9f%s", ts, sep);
		/* perf's CSV columns: value, unit, event, runtime, pcnt, metric, metric unit */
		printf("%s%s%s%s%s%s%" PRIu64 "%s%.2f%s%s\n", val, sep,
		       unit, sep, d->name, sep, c->run, sep, pct,
		       sep, sep);
		return;
	}
	if (ts >= 0)
		printf("%16.9f ", ts);
	/* Pad the name only when the running percentage follows it. */
	if (c->ena && c->run != c->ena)
		printf("%18s %-4s %-32s  (%.2f%%)\n", val, unit, d->name, pct);
	else
		printf("%18s %-4s %s\n", val, unit, d->name);
}

static void print_interval(struct stat_run *r, uint64_t t)
{
	double ts = (double)(t - r->start_ns) / 1e9;
	int i;

	if (json_output) {
		print_counters_json(r, true, ts);
		printf("}\n");
	} else {
		if (!r->o->sep && !r->interval_header_done) {
			printf("#           time             counts unit events\n");
			r->interval_header_done = true;
		}
		for (i = 0; i < r->el.nr; i++)
			print_counter_line(r, &r->el.ctrs[i], &r->el.ctrs[i].delta, ts);
	}
	fflush(stdout);
}

static void print_summary(struct stat_run *r, uint64_t elapsed,
			  const struct rusage *ru, int status, bool have_status)
{
	double user = ru ? ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 : 0;
	double sys = ru ? ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6 : 0;
	int i;

	if (json_output) {
		printf("{\"target\":");
		json_str(stdout, r->target);
		printf(",\"backend\":\"%s\",\"elapsed_ns\":%" PRIu64,
		       r->o->backend == PEVT_BACKEND_DEVICE ? "pevt" : "stock", elapsed);
		if (have_status)
			printf(",\"exit_status\":%d,\"user_ns\":%.0f,\"sys_ns\":%.0f",
			       status, user * 1e9, sys * 1e9);
		else
			printf(",\"exit_status\":null,\"user_ns\":null,\"sys_ns\":null");
		printf(",");
		/* print_counters_json() opens the object: splice its array in. */
		printf("\"counters\":[");
		for (i = 0; i < r->el.nr; i++) {
			if (i)
				putchar(',');
			print_counter_json(stdout, &r->el, &r->el.ctrs[i], &r->el.ctrs[i].cur, i);
		}
		printf("]}\n");
		return;
	}
	if (!r->o->sep)
		printf("\n Performance counter stats for %s:\n\n", r->target);
	for (i = 0; i < r->el.nr; i++)
		print_counter_line(r, &r->el.ctrs[i], &r->el.ctrs[i].cur, -1);
	if (r->o->sep)
		return;
	printf("\n %17.9f seconds time elapsed\n\n", elapsed / 1e9);
	if (ru)
		printf(" %17.9f seconds user\n %17.9f seconds sys\n\n", user, sys);
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
	while ((opt = getopt_long(argc, argv, "+e:aC:p:b:I:x:ijh", opts, NULL)) >= 0) {
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

int do_stat(int argc, char **argv)
{
	struct stat_opts o = { .backend = PEVT_BACKEND_PERF };
	struct stat_run r = { .o = &o, .go_fd = -1 };
	struct pevt_parse_error perr;
	struct evlist_open_err oerr;
	struct pevt_events *evs = NULL;
	int *cpus = NULL, *threads = NULL, nr_cpus, nr_threads;
	int err_fd = -1, status = 0, ret, code = 1;
	bool reaped = false, workload_timer;
	const char *list;
	sigset_t set, oldmask;
	struct rusage ru;
	uint64_t end;

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
	if (evlist__init(&r.el, evs, o.backend)) {
		p_err("out of memory");
		goto out;
	}
	r.el.inherit = !o.no_inherit;
	/* With -a/-C/-p a COMMAND only times the run: it is not counted. */
	workload_timer = o.argv && (o.system_wide || o.cpu_list || o.pid_list);

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &oldmask);

	if (o.argv) {
		ret = workload_prepare(o.argv, &oldmask, false, &r.child, &r.go_fd, &err_fd);
		if (ret) {
			p_err("cannot start '%s': %s", o.argv[0], strerror(-ret));
			goto out;
		}
		if (!workload_timer) {
			threads = malloc(sizeof(*threads));
			if (!threads)
				goto out;
			threads[0] = r.child;
			nr_threads = 1;
		}
	}
	if (evlist__set_target(&r.el, cpus, nr_cpus, threads, nr_threads)) {
		p_err("out of memory");
		goto out;
	}
	ret = evlist__open(&r.el, &oerr);
	if (ret) {
		if (ret == -ENOMEM && !oerr.err) {
			p_err("out of memory");
		} else {
			char where[64] = "";

			if (oerr.cpu >= 0)
				snprintf(where, sizeof(where), " on CPU %d", oerr.cpu);
			else if (oerr.thread > 0)
				snprintf(where, sizeof(where), " for pid %d", oerr.thread);
			p_err("cannot open event '%s'%s with backend %s: %s%s",
			      r.el.ctrs[oerr.idx].desc->name, where,
			      o.backend == PEVT_BACKEND_DEVICE ? "pevt" : "stock",
			      strerror(-oerr.err), evlist__open_hint(&r.el, oerr.idx, oerr.err));
		}
		goto out;
	}
	if (evlist__enable(&r.el)) {
		p_err("cannot enable the events: %s", strerror(errno));
		goto out;
	}
	r.start_ns = now_ns();
	if (r.child) {
		int e;

		/* The counters run: let the workload exec. */
		if (write(r.go_fd, "g", 1) != 1) {
			p_err("cannot start the workload: %s", strerror(errno));
			goto out;
		}
		close(r.go_fd);
		r.go_fd = -1;
		if (read(err_fd, &e, sizeof(e)) == sizeof(e)) {
			waitpid(r.child, NULL, 0);
			r.child = 0;
			p_err("cannot run '%s': %s", o.argv[0], strerror(e));
			code = 127;
			goto out;
		}
	}
	reaped = wait_loop(&r, &status, &ru);
	end = now_ns();
	evlist__disable(&r.el);
	if (evlist__read(&r.el)) {
		p_err("cannot read the counters: %s", strerror(errno));
		goto out;
	}
	if (o.interval_ms) {
		/* The last, partial interval, as perf prints it. */
		print_interval(&r, end);
		if (json_output)
			print_summary(&r, end - r.start_ns, reaped ? &ru : NULL,
				      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
				      reaped);
	} else {
		print_summary(&r, end - r.start_ns, reaped ? &ru : NULL,
			      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
			      reaped);
	}
	fflush(stdout);
	r.child = 0;
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
	if (r.go_fd >= 0)
		close(r.go_fd);	/* the child reads EOF and exits */
	if (r.child > 0)
		waitpid(r.child, NULL, 0);
	if (err_fd >= 0)
		close(err_fd);
	if (r.el.ctrs)
		evlist__exit(&r.el);
	pevt_events__delete(evs);
	free(cpus);
	free(threads);
	free(r.pids);
	free(o.events);
	fflush(stdout);
	exit(code);
}
