// SPDX-License-Identifier: GPL-2.0
/*
 * pevt bench output [calls N] [pages P] [json FILE]
 *
 * One workload (N getppid() calls, each a raw_syscalls:sys_enter sample
 * with sample_period = 1 and a READ value) written into an overwrite
 * (read-only) buffer of P data pages by four subjects, in one run:
 *
 *   pevt-sae     /dev/pevt, PEVT_SAMPLE_SIZE_AT_END, read backward
 *   pevt         /dev/pevt without the trailer (cost only: no reader)
 *   stock-fwd    perf_event_open, forward overwrite, read as perf reads it
 *                (lapped buffer: nothing trustworthy, 0 records)
 *   stock-wb     perf_event_open, write_backward, read from data_head
 *
 * Prints ns per call (minus the same loop with no event), the records
 * recovered from the full buffer, and ratios to stock-wb.  Not a test.
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
#include <pevt/core.h>
#include <pevt/mmap.h>

#include "main.h"

enum { S_SAE, S_PEVT, S_FWD, S_WB, NR_SUBJECTS };

static const char *const subject_name[NR_SUBJECTS] = {
	"pevt-sae", "pevt", "stock-fwd", "stock-wb",
};

struct result {
	double ns_per_call;
	long long recovered;		/* -1: no reader for this layout */
	uint64_t bytes;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int sys_enter_id(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	char buf[32];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		int fd = open(paths[i], O_RDONLY);
		ssize_t n;

		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			return atoi(buf);
		}
	}
	return -1;
}

static int open_subject(int s, int tp_id)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_TRACEPOINT, .config = tp_id,
		.sample_period = 1, .disabled = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_READ,
		.read_format = PERF_FORMAT_ID,
	};
	struct pevt_open op = {
		.size = sizeof(op), .flags = PEVT_OPEN_FD_CLOEXEC,
		.attr = (uintptr_t)&a, .pid = 0, .cpu = -1, .group_fd = -1,
	};
	int dev, fd;

	if (s == S_SAE)
		a.sample_type |= PEVT_SAMPLE_SIZE_AT_END;
	if (s == S_WB)
		a.write_backward = 1;
	if (s == S_FWD || s == S_WB) {
		fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	dev = open(PEVT_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	fd = ioctl(dev, PEVT_IOC_OPEN, &op);
	fd = fd < 0 ? -errno : fd;
	close(dev);
	return fd;
}

static double loop_ns(unsigned long calls)
{
	uint64_t t0 = now_ns();
	unsigned long i;

	for (i = 0; i < calls; i++)
		syscall(SYS_getppid);
	return (double)(now_ns() - t0) / calls;
}

static int run_subject(int s, int tp_id, unsigned long calls,
		       unsigned long pages, double base, struct result *r)
{
	static const enum pevt_read_mode mode[NR_SUBJECTS] = {
		PEVT_READ_BACKWARD_SIZE_AT_END, PEVT_READ_FORWARD,
		PEVT_READ_FORWARD, PEVT_READ_WRITE_BACKWARD,
	};
	LIBPEVT_OPTS(pevt_mmap_opts, o, .mode = mode[s], .writable = false);
	struct pevt_mmap *map;
	int fd, err;

	fd = open_subject(s, tp_id);
	if (fd < 0) {
		p_err("%s: open: %s", subject_name[s], strerror(-fd));
		return -1;
	}
	map = pevt_mmap__new(fd, pages, &o);
	if (!map) {
		p_err("%s: mmap: %s", subject_name[s], strerror(errno));
		close(fd);
		return -1;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	r->ns_per_call = loop_ns(calls) - base;
	ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	r->recovered = 0;
	r->bytes = 0;
	if (s == S_PEVT) {
		r->recovered = -1;	/* no trailer: nothing to walk back with */
	} else {
		err = pevt_mmap__read_init(map);
		/* forward overwrite, lapped: perf drops the lot (-EOVERFLOW) */
		if (!err) {
			struct perf_event_header *ev;

			while ((ev = pevt_mmap__read_event(map)) != NULL) {
				r->recovered++;
				r->bytes += ev->size;
				pevt_mmap__consume(map);
			}
			if (pevt_mmap__read_done(map) && s != S_FWD)
				p_info("%s: walk ended on an error", subject_name[s]);
		}
	}
	pevt_mmap__delete(map);
	close(fd);
	return 0;
}

int bench_output(int argc, char **argv)
{
	unsigned long calls = 200000, pages = 8;
	struct result res[NR_SUBJECTS];
	const char *json = NULL;
	double base;
	int tp_id, s;
	FILE *f;

	while (argc > 0) {
		if (is_prefix(*argv, "calls") || is_prefix(*argv, "pages")) {
			bool is_calls = is_prefix(*argv, "calls");

			NEXT_ARG();
			if (!REQ_ARGS(1))
				return -1;
			if (is_calls)
				calls = strtoul(*argv, NULL, 0);
			else
				pages = strtoul(*argv, NULL, 0);
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
	if (!calls || !pages || (pages & (pages - 1))) {
		p_err("calls must be > 0, pages a power of two");
		return -1;
	}
	tp_id = sys_enter_id();
	if (tp_id < 0) {
		p_err("raw_syscalls:sys_enter: no id in tracefs (mounted?)");
		return -1;
	}

	base = loop_ns(calls);
	for (s = 0; s < NR_SUBJECTS; s++)
		if (run_subject(s, tp_id, calls, pages, base, &res[s]))
			return -1;

	printf("%lu getppid() calls, one sys_enter sample each, %lu-page overwrite buffer\n",
	       calls, pages);
	printf("(a call alone: %.0f ns)\n", base);
	printf("  %-10s %12s %10s %12s %10s\n", "subject", "ns/record", "vs wb",
	       "recovered", "vs wb");
	for (s = 0; s < NR_SUBJECTS; s++) {
		printf("  %-10s %12.0f %10.2f ", subject_name[s], res[s].ns_per_call,
		       res[S_WB].ns_per_call > 0 ?
		       res[s].ns_per_call / res[S_WB].ns_per_call : 0.0);
		if (res[s].recovered < 0)
			printf("%12s %10s\n", "n/a", "");
		else
			printf("%12lld %10.2f\n", res[s].recovered,
			       res[S_WB].recovered ?
			       (double)res[s].recovered / res[S_WB].recovered : 0.0);
	}
	if (json) {
		f = fopen(json, "w");
		if (!f) {
			p_err("%s: %s", json, strerror(errno));
			return -1;
		}
		fprintf(f, "{\"bench\":\"output\",\"calls\":%lu,\"pages\":%lu,\"base_ns\":%.1f",
			calls, pages, base);
		for (s = 0; s < NR_SUBJECTS; s++)
			fprintf(f, ",\"%s\":{\"ns_per_record\":%.1f,\"recovered\":%lld,\"bytes\":%llu}",
				subject_name[s], res[s].ns_per_call, res[s].recovered,
				(unsigned long long)res[s].bytes);
		fprintf(f, "}\n");
		fclose(f);
	}
	return 0;
}
