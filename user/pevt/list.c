// SPDX-License-Identifier: GPL-2.0
/*
 * pevt list: the events `pevt stat -e` takes, like `perf list`, with the
 * backends each one opens on here: hardware and software events,
 * PMU event aliases (sysfs events/) with the PMU's format terms, and
 * tracepoints.
 *
 * Every name is resolved through the same parser `pevt stat` uses
 * (pevt_events__parse()) and opened, counting this process, on the stock
 * perf_event_open() and on /dev/pevt: what the column says is what was
 * observed on this machine, not a table.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pevt/evsel.h>
#include <pevt/parse_events.h>

#include "main.h"

/* perf list's names; the second is an alias (printed "a OR b"). */
static const char *const hw_events[][2] = {
	{ "cpu-cycles", "cycles" },
	{ "instructions" },
	{ "cache-references" },
	{ "cache-misses" },
	{ "branch-instructions", "branches" },
	{ "branch-misses" },
	{ "bus-cycles" },
	{ "stalled-cycles-frontend", "idle-cycles-frontend" },
	{ "stalled-cycles-backend", "idle-cycles-backend" },
	{ "ref-cycles" },
};

static const char *const sw_events[][2] = {
	{ "alignment-faults" },
	{ "bpf-output" },
	{ "cgroup-switches" },
	{ "context-switches", "cs" },
	{ "cpu-clock" },
	{ "cpu-migrations", "migrations" },
	{ "dummy" },
	{ "emulation-faults" },
	{ "major-faults" },
	{ "minor-faults" },
	{ "page-faults", "faults" },
	{ "task-clock" },
};

struct list_opts {
	const char *filter;		/* glob on the name, NULL: all */
	bool probe;			/* open each event on both backends */
	bool first_json;
};

/* Can @d be opened for this task on @backend?  (EACCES: retry user-only.) */
static bool opens_on(const struct pevt_event_desc *d, enum pevt_backend backend)
{
	LIBPEVT_OPTS(pevt_open_opts, o, .backend = backend);
	struct perf_event_attr attr = d->attr;
	int fd;

	attr.disabled = 1;
	fd = pevt_open(&attr, 0, -1, -1, &o);
	if (fd == -EACCES || fd == -EPERM) {
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		fd = pevt_open(&attr, 0, -1, -1, &o);
	}
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void backends(const char *name, const struct list_opts *lo, char *buf, size_t size)
{
	struct pevt_parse_error err;
	struct pevt_events *evs = pevt_events__parse(name, NULL, &err);
	const struct pevt_event_desc *d;
	bool st, pv;

	if (!evs) {
		snprintf(buf, size, "?");
		return;
	}
	d = pevt_events__get(evs, 0);
	if (!lo->probe) {
		snprintf(buf, size, "%s", "");
	} else {
		st = opens_on(d, PEVT_BACKEND_PERF);
		pv = opens_on(d, PEVT_BACKEND_DEVICE);
		snprintf(buf, size, "%s%s%s", st ? "stock" : "", st && pv ? "," : "",
			 pv ? "pevt" : st ? "" : "-");
	}
	pevt_events__delete(evs);
}

static bool wanted(const struct list_opts *lo, const char *name, const char *alias)
{
	return !lo->filter || !fnmatch(lo->filter, name, 0) ||
	       (alias && !fnmatch(lo->filter, alias, 0)) || strstr(name, lo->filter);
}

static void print_event(struct list_opts *lo, const char *name, const char *alias,
			const char *kind, const char *extra)
{
	char shown[256], be[32];
	bool probe = lo->probe;

	if (!wanted(lo, name, alias))
		return;
	/*
	 * Opening a tracepoint event patches kernel text: thousands of them
	 * take minutes under TCG.  Probed only when a FILTER picked them.
	 */
	if (!strcmp(kind, "Tracepoint event") && !lo->filter)
		lo->probe = false;
	backends(name, lo, be, sizeof(be));
	lo->probe = probe;
	if (json_output) {
		printf("%s{\"name\":", lo->first_json ? "" : ",");
		json_str(stdout, name);
		printf(",\"alias\":");
		if (alias)
			json_str(stdout, alias);
		else
			printf("null");
		printf(",\"kind\":");
		json_str(stdout, kind);
		printf(",\"backends\":[%s%s%s]",
		       strstr(be, "stock") ? "\"stock\"" : "",
		       strstr(be, "stock,pevt") ? "," : "",
		       strstr(be, "pevt") ? "\"pevt\"" : "");
		if (extra && *extra) {
			printf(",\"unit\":");
			json_str(stdout, extra);
		}
		putchar('}');
		lo->first_json = false;
		return;
	}
	snprintf(shown, sizeof(shown), "%s%s%s", name, alias ? " OR " : "", alias ? alias : "");
	printf("  %-50s [%s]%*s%s%s%s\n", shown, kind, (int)(18 - strlen(kind)), "",
	       be, extra && *extra ? "  unit: " : "", extra ? extra : "");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in @dir (no dot files; @nodot: also none with a dot). */
static char **dir_names(const char *dir, bool nodot, int *n)
{
	struct dirent *de;
	char **v = NULL, **nv;
	DIR *d = opendir(dir);

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (nodot && strchr(de->d_name, '.')))
			continue;
		nv = realloc(v, (*n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[(*n)++] = strdup(de->d_name);
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void free_names(char **v, int n)
{
	while (n-- > 0)
		free(v[n]);
	free(v);
}

static void read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)size, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* A PMU's format terms: text after its aliases, or JSON objects. */
static void print_formats(const char *pmu, bool *first)
{
	char **fmts, path[512], val[128];
	int nf, j;

	snprintf(path, sizeof(path), "%s/%s/format", PEVT_PMU_DIR, pmu);
	fmts = dir_names(path, false, &nf);
	if (nf && !json_output)
		printf("\n  %s format terms (%s/term=value,.../):\n", pmu, pmu);
	for (j = 0; j < nf; j++) {
		snprintf(path, sizeof(path), "%s/%s/format/%s", PEVT_PMU_DIR, pmu, fmts[j]);
		read_line(path, val, sizeof(val));
		if (json_output) {
			printf("%s{\"pmu\":", *first ? "" : ",");
			json_str(stdout, pmu);
			printf(",\"term\":");
			json_str(stdout, fmts[j]);
			printf(",\"bits\":");
			json_str(stdout, val);
			putchar('}');
			*first = false;
		} else {
			printf("    %-20s %s\n", fmts[j], val);
		}
	}
	if (nf && !json_output) {
		snprintf(path, sizeof(path), "%s/%s/nr_counters", PEVT_PMU_DIR, pmu);
		read_line(path, val, sizeof(val));
		if (*val)
			printf("    (%s counter slots per CPU)\n", val);
		putchar('\n');
	}
	free_names(fmts, nf);
}

/*
 * Every PMU's events/ aliases, each followed (text) by the PMU's format
 * terms; with @formats (JSON's second array) only the terms.
 */
static void list_pmus(struct list_opts *lo, bool formats)
{
	char **pmus, **evs, path[512], val[128], name[300];
	bool first = true;
	int np, ne, i, j;

	pmus = dir_names(PEVT_PMU_DIR, false, &np);
	for (i = 0; i < np; i++) {
		snprintf(path, sizeof(path), "%s/%s/events", PEVT_PMU_DIR, pmus[i]);
		evs = dir_names(path, true, &ne);
		for (j = 0; j < ne && !formats; j++) {
			snprintf(name, sizeof(name), "%s/%s/", pmus[i], evs[j]);
			snprintf(path, sizeof(path), "%s/%s/events/%s.unit", PEVT_PMU_DIR,
				 pmus[i], evs[j]);
			read_line(path, val, sizeof(val));
			print_event(lo, name, NULL, "Kernel PMU event", val);
		}
		free_names(evs, ne);
		/* the terms of PMUs that have aliases, and that the filter names */
		if (ne && (formats || !json_output) &&
		    (!lo->filter || strstr(pmus[i], lo->filter) || !fnmatch(lo->filter, pmus[i], 0)))
			print_formats(pmus[i], &first);
	}
	free_names(pmus, np);
}

/* The tracefs events/ directory, or NULL. */
static const char *tracefs_events(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing/events",
					     "/sys/kernel/debug/tracing/events" };
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!access(dirs[i], R_OK))
			return dirs[i];
	return NULL;
}

/*
 * The tracepoints, from tracefs's available_events ("sys:name" lines):
 * one read, where walking events/ costs a lookup per tracepoint (seconds
 * on a debug kernel).
 */
static void list_tracepoints(struct list_opts *lo)
{
	const char *ev = tracefs_events();
	char path[512], line[512], **v = NULL, **nv;
	size_t n = 0, i;
	FILE *f;

	if (!ev)
		return;
	snprintf(path, sizeof(path), "%.*s/available_events", (int)(strlen(ev) - 7), ev);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strchr(line, ':'))
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n++] = strdup(line);
	}
	fclose(f);
	if (v)
		qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0; i < n; i++)
		if (v[i])
			print_event(lo, v[i], NULL, "Tracepoint event", NULL);
	free_names(v, (int)n);
}

int do_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-probe",	no_argument,	NULL, 'n' },
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{ 0 }
	};
	struct list_opts lo = { .probe = true, .first_json = true };
	size_t i;
	int opt;

	argc++;
	argv--;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "+njh", opts, NULL)) >= 0) {
		switch (opt) {
		case 'n':
			lo.probe = false;
			break;
		case 'j':
			json_output = true;
			break;
		case 'h':
			return print_help("list");
		default:
			p_err("bad option (see '%s list --help')", bin_name);
			return -1;
		}
	}
	if (optind < argc)
		lo.filter = argv[optind++];
	if (optind < argc) {
		p_err("one FILTER at most (see '%s list --help')", bin_name);
		return -1;
	}
	if (json_output)
		printf("{\"events\":[");
	else
		printf("\nList of pre-defined events (to be used in -e); backends that open them here:\n\n");
	for (i = 0; i < sizeof(hw_events) / sizeof(hw_events[0]); i++)
		print_event(&lo, hw_events[i][0], hw_events[i][1], "Hardware event", NULL);
	for (i = 0; i < sizeof(sw_events) / sizeof(sw_events[0]); i++)
		print_event(&lo, sw_events[i][0], sw_events[i][1], "Software event", NULL);
	if (!json_output)
		putchar('\n');
	list_pmus(&lo, false);
	list_tracepoints(&lo);
	if (json_output) {
		printf("],\"formats\":[");
		list_pmus(&lo, true);
		printf("]}\n");
	}
	fflush(stdout);
	return 0;
}
