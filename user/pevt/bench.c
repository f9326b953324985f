// SPDX-License-Identifier: GPL-2.0
/*
 * pevt bench: stock kernel vs pevt, measured side by side in one run.
 *
 *   pevt bench clock [ms MS] [json FILE]
 *	task-clock of one busy loop read through both the stock
 *	perf_event_open() and /dev/pevt; prints both and their ratio.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/pevt.h>
#include <pevt/evsel.h>

#include "main.h"

struct reading {
	uint64_t value, enabled, running;
};

static int read_counter(int fd, struct reading *r)
{
	return read(fd, r, sizeof(*r)) == sizeof(*r) ? 0 : -1;
}

static int bench_clock(int argc, char **argv)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK, .disabled = 1,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	struct reading st, pv;
	const char *json = NULL;
	unsigned long ms = 200;
	volatile uint64_t spin = 0;
	uint64_t end;
	int sfd, pfd;
	FILE *f;

	while (argc > 0) {
		if (is_prefix(*argv, "ms")) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			ms = strtoul(*argv, NULL, 0);
			if (!ms || ms > 60000) {
				p_err("ms: '%s' is not a duration in 1..60000", *argv);
				return -1;
			}
		} else if (is_prefix(*argv, "json")) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			json = *argv;
		} else {
			p_err("unknown argument '%s'", *argv);
			return -1;
		}
		NEXT_ARG();
	}

	LIBPEVT_OPTS(pevt_open_opts, stock, .backend = PEVT_BACKEND_PERF);
	LIBPEVT_OPTS(pevt_open_opts, dev, .backend = PEVT_BACKEND_DEVICE);

	progress(true, now_ns(), 0, 1, "bench clock: task-clock of a %lu ms busy loop, stock and pevt", ms);
	sfd = pevt_open(&attr, 0, -1, -1, &stock);
	if (sfd < 0) {
		p_err("perf_event_open(task-clock): %s", strerror(-sfd));
		return -1;
	}
	pfd = pevt_open(&attr, 0, -1, -1, &dev);
	if (pfd < 0) {
		p_err("%s: task-clock: %s%s", PEVT_DEVICE_PATH, strerror(-pfd),
		      pfd == -ENOENT ? " (is pevt.ko loaded?)" : "");
		close(sfd);
		return -1;
	}
	ioctl(sfd, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0);
	end = now_ns() + ms * 1000000ull;
	while (now_ns() < end)
		spin++;
	ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(sfd, PERF_EVENT_IOC_DISABLE, 0);
	if (read_counter(sfd, &st) || read_counter(pfd, &pv)) {
		p_err("reading task-clock: %s", strerror(errno));
		close(sfd);
		close(pfd);
		return -1;
	}
	close(sfd);
	close(pfd);

	printf("task-clock of a %lu ms busy loop, read by both in the same loop\n", ms);
	printf("  %-8s %14s %14s %14s\n", "backend", "count (ns)", "enabled (ns)", "running (ns)");
	printf("  %-8s %14llu %14llu %14llu\n", "stock", (unsigned long long)st.value,
	       (unsigned long long)st.enabled, (unsigned long long)st.running);
	printf("  %-8s %14llu %14llu %14llu\n", "pevt", (unsigned long long)pv.value,
	       (unsigned long long)pv.enabled, (unsigned long long)pv.running);
	printf("  pevt/stock = %.4f\n", st.value ? (double)pv.value / st.value : 0.0);
	if (json) {
		f = fopen(json, "w");
		if (!f) {
			p_err("%s: %s", json, strerror(errno));
			return -1;
		}
		fprintf(f, "{\"bench\":\"clock\",\"ms\":%lu,"
			"\"stock\":{\"count\":%llu,\"enabled\":%llu,\"running\":%llu},"
			"\"pevt\":{\"count\":%llu,\"enabled\":%llu,\"running\":%llu},"
			"\"ratio\":%.6f}\n", ms,
			(unsigned long long)st.value, (unsigned long long)st.enabled,
			(unsigned long long)st.running, (unsigned long long)pv.value,
			(unsigned long long)pv.enabled, (unsigned long long)pv.running,
			st.value ? (double)pv.value / st.value : 0.0);
		fclose(f);
	}
	return 0;
}

/* Rendered from Documentation/man/pevt-bench.1.md (scripts/mkhelp.sh). */
static int do_help(int argc, char **argv)
{
	return print_help("bench");
}


static const struct cmd cmds[] = {
	{ "help",	do_help,	"this text" },
	{ "clock",	bench_clock,	"task-clock, stock vs pevt" },
	{ "output",	bench_output,	"ring buffer: cost per record, records recovered" },
	{ "fairness",	bench_fairness,	"rotation fairness: stock, classic, rotid" },
	{ "close",	bench_close,	"closing many buffered fds: stock vs pevt" },
	{ "record",	bench_record,	"pevt record vs perf record: samples lost, duplicated" },
	{ "record-loop", bench_record_loop, "(the workload of bench record)" },
	{ "report",	bench_report,	"perf report vs pevt report on perf.data files" },
	{ 0 }
};

int do_bench(int argc, char **argv)
{
	return cmd_select(cmds, argc, argv, do_help);
}
