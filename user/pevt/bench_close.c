// SPDX-License-Identifier: GPL-2.0
/*
 * pevt bench close: what closing many buffered event fds costs, stock
 * kernel vs pevt, in one run.
 *
 * For each kind (cpu-clock sampling, raw_syscalls:sys_enter sampling) and
 * each backend: open N per-CPU events (pid -1, CPUs round robin), map
 * each one's buffer once (1 + 1 pages, read-only) and unmap it, so every
 * event had a buffer, then close all N and time the closes.  Repeated
 * R times; the median is reported.
 *
 * Before issue 13 (item 11) pevt waited for an RCU grace period on each
 * such close (two for sys_enter events): seconds for 256 fds, where the
 * stock kernel needs milliseconds.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <pevt/evsel.h>
#include <pevt/parse_events.h>

#include "main.h"

enum { K_CLOCK, K_SYS_ENTER, NR_KINDS };
static const char *const kind_name[NR_KINDS] = { "cpu-clock", "sys_enter" };

enum { B_STOCK, B_PEVT, NR_BACKENDS };
static const char *const backend_name[NR_BACKENDS] = { "stock", "pevt" };

#define MAX_FDS		4096
#define MAX_REPS	50

static void close_attr(struct perf_event_attr *attr, int kind, int tp_id)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->disabled = 1;
	attr->sample_type = PERF_SAMPLE_TID;
	if (kind == K_CLOCK) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
		attr->sample_period = 10000000;
	} else {
		attr->type = PERF_TYPE_TRACEPOINT;
		attr->config = tp_id;
		attr->sample_period = 1000;
	}
}

/* Open, map, unmap @n events, then close them: ns for the closes, or -errno. */
static int64_t close_once(const struct perf_event_attr *attr, int backend, int n,
			  int *fds)
{
	LIBPEVT_OPTS(pevt_open_opts, opts,
		     .backend = backend == B_STOCK ? PEVT_BACKEND_PERF
						   : PEVT_BACKEND_DEVICE);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t len = 2 * sysconf(_SC_PAGESIZE);
	struct perf_event_attr a = *attr;
	uint64_t t0;
	int i;

	for (i = 0; i < n; i++) {
		void *p;

		fds[i] = pevt_open(&a, -1, i % ncpu, -1, &opts);
		if (fds[i] < 0) {
			int err = fds[i];

			while (i--)
				close(fds[i]);
			return err;
		}
		p = mmap(NULL, len, PROT_READ, MAP_SHARED, fds[i], 0);
		if (p != MAP_FAILED)
			munmap(p, len);
	}
	t0 = now_ns();
	for (i = 0; i < n; i++)
		close(fds[i]);
	return now_ns() - t0;
}

static void close_json(FILE *f, unsigned long nfds, unsigned long reps,
		       double ms[NR_KINDS][NR_BACKENDS], const bool *ran)
{
	int k, n = 0;

	fprintf(f, "{\"bench\":\"close\",\"fds\":%lu,\"reps\":%lu,\"kinds\":[",
		nfds, reps);
	for (k = 0; k < NR_KINDS; k++) {
		if (!ran[k])
			continue;
		fprintf(f, "%s{\"kind\":", n++ ? "," : "");
		json_str(f, kind_name[k]);
		fprintf(f, ",\"stock_ms\":%.3f,\"pevt_ms\":%.3f}", ms[k][B_STOCK],
			ms[k][B_PEVT]);
	}
	fprintf(f, "]}\n");
}

static int do_help_close(void)
{
	fprintf(stderr, "Usage: %s bench close [fds N] [reps R] [json FILE]\n", bin_name);
	return 0;
}

int bench_close(int argc, char **argv)
{
	static int fds[MAX_FDS];
	unsigned long nfds = 256, reps = 5;
	double ms[NR_KINDS][NR_BACKENDS], v[MAX_REPS];
	bool ran[NR_KINDS] = { false };
	struct perf_event_attr attr;
	const char *json = NULL;
	struct rlimit rl;
	int tp_id, k, b;
	FILE *f;

	while (argc > 0) {
		const char *key = *argv;

		if (is_prefix(key, "help"))
			return do_help_close();
		if (!is_prefix(key, "fds") && !is_prefix(key, "reps") &&
		    !is_prefix(key, "json")) {
			p_err("unknown argument '%s'", key);
			return -1;
		}
		NEXT_ARG();
		if (!REQ_ARGS(1))
			return -1;
		if (is_prefix(key, "json"))
			json = *argv;
		else if (is_prefix(key, "fds") ?
			 arg_ulong("fds", *argv, 1, MAX_FDS, &nfds) :
			 arg_ulong("reps", *argv, 1, MAX_REPS, &reps))
			return -1;
		NEXT_ARG();
	}

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < nfds + 64) {
		rl.rlim_cur = nfds + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl)) {
			p_err("fds %lu: cannot raise RLIMIT_NOFILE: %s", nfds, strerror(errno));
			return -1;
		}
	}
	tp_id = pevt_tracepoint__id("raw_syscalls:sys_enter");

	for (k = 0; k < NR_KINDS; k++) {
		if (k == K_SYS_ENTER && tp_id < 0) {
			p_info("raw_syscalls:sys_enter: no tracepoint id (tracefs?), skipped");
			continue;
		}
		close_attr(&attr, k, tp_id);
		for (b = 0; b < NR_BACKENDS; b++) {
			for (unsigned long r = 0; r < reps; r++) {
				int64_t ns = close_once(&attr, b, nfds, fds);

				if (ns < 0) {
					p_err("%s %s: open: %s", backend_name[b],
					      kind_name[k], strerror((int)-ns));
					return -1;
				}
				v[r] = ns / 1e6;
			}
			ms[k][b] = median(v, reps);
		}
		ran[k] = true;
	}

	if (!json_output) {
		printf("close of %lu buffered per-CPU sampling fds, median of %lu\n",
		       nfds, reps);
		printf("  %-10s %12s %12s %12s\n", "kind", "stock (ms)", "pevt (ms)",
		       "pevt/stock");
		for (k = 0; k < NR_KINDS; k++)
			if (ran[k])
				printf("  %-10s %12.2f %12.2f %12.2f\n", kind_name[k],
				       ms[k][B_STOCK], ms[k][B_PEVT],
				       ms[k][B_STOCK] > 0 ?
				       ms[k][B_PEVT] / ms[k][B_STOCK] : 0.0);
	} else {
		close_json(stdout, nfds, reps, ms, ran);
	}
	if (!json)
		return 0;
	f = fopen(json, "w");
	if (!f) {
		p_err("%s: %s", json, strerror(errno));
		return -1;
	}
	close_json(f, nfds, reps, ms, ran);
	fclose(f);
	return 0;
}
