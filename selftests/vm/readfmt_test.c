// SPDX-License-Identifier: GPL-2.0
/*
 * read_format: every combination of TOTAL_TIME_ENABLED, TOTAL_TIME_RUNNING,
 * ID and LOST, alone and with GROUP, in PERF_SAMPLE_READ samples and in
 * read(), through the stock perf_event_open(2) and through /dev/pevt.
 *
 * One parser, perf's layout (perf_output_read_one/_group(),
 * perf_read_one/_group()):
 *
 *   !GROUP: value, [enabled], [running], [id], [lost]
 *    GROUP: nr, [enabled], [running], { value, [id], [lost] } x nr
 *
 * and checks that hold only if the layout is right: the record has
 * exactly the size, each id is the member's PERF_EVENT_IOC_ID, lost is 0,
 * enabled >= running > 0, and the values are sequence numbers: the
 * events count raw_syscalls:sys_enter of this thread, the leader samples
 * every call, so each member's value grows by exactly one from a sample
 * to the next.  The stock kernel passing the same checks validates them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <linux/pevt.h>

#include <pevt/parse_events.h>

#include "kselftest_harness.h"
#include "common.h"

#define RF_PAGES	4
#define RF_CALLS	20
#define RF_MAX		(3 + 2 * 3)	/* u64s of the largest read area */

struct rf_val {
	uint64_t nr, enabled, running;
	uint64_t value[2], id[2], lost[2];
};

/* Parse @n u64s at @p with perf's layout; -1 if the size does not match. */
static int rf_parse(uint64_t rf, const uint64_t *p, size_t n, struct rf_val *v)
{
	size_t i = 0, m, nr = 1;

	memset(v, 0, sizeof(*v));
	if (rf & PERF_FORMAT_GROUP) {
		if (n < 1)
			return -1;
		nr = v->nr = p[i++];
		if (nr < 1 || nr > 2)
			return -1;
	} else {
		v->value[0] = p[i++];
	}
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		v->enabled = p[i++];
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		v->running = p[i++];
	for (m = 0; m < nr; m++) {
		if ((rf & PERF_FORMAT_GROUP))
			v->value[m] = p[i++];
		if (rf & PERF_FORMAT_ID)
			v->id[m] = p[i++];
		if (rf & PERF_FORMAT_LOST)
			v->lost[m] = p[i++];
		if (!(rf & PERF_FORMAT_GROUP))
			break;
	}
	return i == n ? 0 : -1;
}

static size_t rf_size(uint64_t rf, int nr)
{
	size_t entry = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	size_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & PERF_FORMAT_GROUP)
		return 1 + times + nr * entry;
	return times + entry;
}

/* Layout-independent checks of one parsed area; a message or NULL. */
static const char *rf_check(uint64_t rf, const struct rf_val *v, int nr,
			    const uint64_t ids[2])
{
	int m;

	if ((rf & PERF_FORMAT_GROUP) && v->nr != (uint64_t)nr)
		return "nr";
	if ((rf & PERF_FORMAT_TOTAL_TIME_ENABLED) &&
	    (rf & PERF_FORMAT_TOTAL_TIME_RUNNING) && v->enabled < v->running)
		return "enabled < running";
	if ((rf & PERF_FORMAT_TOTAL_TIME_RUNNING) && !v->running)
		return "running 0";
	for (m = 0; m < ((rf & PERF_FORMAT_GROUP) ? nr : 1); m++) {
		if ((rf & PERF_FORMAT_ID) && v->id[m] != ids[m])
			return "id";
		if ((rf & PERF_FORMAT_LOST) && v->lost[m])
			return "lost";
		if (!v->value[m] || v->value[m] > 100000)
			return "value out of range";
	}
	return NULL;
}

struct rf_res {
	unsigned int samples, bad_samples, read_bad;
	const char *why;
};

static int rf_open(int stock, struct perf_event_attr *a, int group)
{
	int dev, fd;

	if (stock)
		return sys_perf_event_open(a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
	dev = pevt_dev_open();
	if (dev < 0)
		return -1;
	fd = pevt_open(dev, a, 0, -1, group, PEVT_OPEN_FD_CLOEXEC);
	close(dev);
	return fd;
}

/*
 * One subject, one read_format: leader samples every sys_enter with READ,
 * a sibling counts (group variants).  0, or -errno of a failed open/map.
 */
static int rf_run(int stock, int tp_id, uint64_t rf, int group,
		  struct rf_res *res)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (RF_PAGES + 1) * page, want;
	struct perf_event_attr a;
	struct perf_event_mmap_page *up;
	uint64_t ids[2] = { 0, 0 }, buf[RF_MAX + 8], head, pos;
	struct rf_val v, prev = { 0 };
	int fd[2] = { -1, -1 }, nr = group ? 2 : 1, m, ret = 0;
	const uint8_t *data;
	void *base;

	memset(res, 0, sizeof(*res));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = tp_id;
	a.exclude_kernel = 0;
	a.read_format = rf | (group ? PERF_FORMAT_GROUP : 0);
	a.sample_type = PERF_SAMPLE_READ;
	a.sample_period = 1;
	a.disabled = 1;
	fd[0] = rf_open(stock, &a, -1);
	if (fd[0] < 0)
		return -errno;
	if (group) {
		a.sample_period = 0;
		a.sample_type = 0;
		a.disabled = 0;
		fd[1] = rf_open(stock, &a, fd[0]);
		if (fd[1] < 0) {
			ret = -errno;
			goto out_close;
		}
	}
	for (m = 0; m < nr; m++)
		ioctl(fd[m], PERF_EVENT_IOC_ID, &ids[m]);
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd[0], 0);
	if (base == MAP_FAILED) {
		ret = -errno;
		goto out_close;
	}
	ioctl(fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	for (m = 0; m < RF_CALLS; m++)
		syscall(SYS_getppid);
	ioctl(fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);

	/* read() */
	want = rf_size(a.read_format, nr) * sizeof(uint64_t);
	if (read(fd[0], buf, sizeof(buf)) != (ssize_t)want) {
		res->read_bad++;
		res->why = "read() size";
	} else if (rf_parse(a.read_format, buf, want / 8, &v)) {
		res->read_bad++;
		res->why = "read() parse";
	} else if ((res->why = rf_check(a.read_format, &v, nr, ids))) {
		res->read_bad++;
	}

	/* samples */
	up = base;
	data = (const uint8_t *)base + up->data_offset;
	head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
	for (pos = 0; pos < head;) {
		struct perf_event_header h;
		const char *why = NULL;
		size_t n;

		memcpy(&h, data + (pos % up->data_size), sizeof(h));
		if (h.size < sizeof(h) || h.size > sizeof(buf))
			break;
		if (h.type != PERF_RECORD_SAMPLE) {
			pos += h.size;
			continue;
		}
		n = (h.size - sizeof(h)) / 8;
		for (size_t i = 0; i < n; i++)
			memcpy(&buf[i], data + ((pos + sizeof(h) + 8 * i) % up->data_size), 8);
		pos += h.size;
		res->samples++;
		if (n != want / 8)
			why = "sample size";
		else if (rf_parse(a.read_format, buf, n, &v))
			why = "sample parse";
		else
			why = rf_check(a.read_format, &v, nr, ids);
		/* Sequence numbers: every member grows by one per sample. */
		if (!why && res->samples > 1)
			for (m = 0; m < nr; m++)
				if (v.value[m] != prev.value[m] + 1)
					why = "value is not a sequence";
		if (!why && res->samples > 1 &&
		    (a.read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) &&
		    v.enabled < prev.enabled)
			why = "enabled went back";
		if (why) {
			res->bad_samples++;
			res->why = why;
		}
		prev = v;
	}
	munmap(base, len);
out_close:
	for (m = 0; m < nr; m++)
		if (fd[m] >= 0)
			close(fd[m]);
	return ret;
}

static const char *rf_name(uint64_t rf, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s",
		 rf & PERF_FORMAT_GROUP ? "GROUP|" : "",
		 rf & PERF_FORMAT_TOTAL_TIME_ENABLED ? "ENABLED|" : "",
		 rf & PERF_FORMAT_TOTAL_TIME_RUNNING ? "RUNNING|" : "",
		 rf & PERF_FORMAT_ID ? "ID|" : "",
		 rf & PERF_FORMAT_LOST ? "LOST|" : "");
	if (!buf[0])
		snprintf(buf, len, "0");
	else
		buf[strlen(buf) - 1] = 0;
	return buf;
}

FIXTURE(rf) {
};

FIXTURE_SETUP(rf)
{
}

FIXTURE_TEARDOWN(rf)
{
}

/* 64 opens and maps of each backend: slow on the debug kernel. */
TEST_F_TIMEOUT(rf, every_combination, 300)
{
	static const uint64_t bits[] = {
		PERF_FORMAT_TOTAL_TIME_ENABLED, PERF_FORMAT_TOTAL_TIME_RUNNING,
		PERF_FORMAT_ID, PERF_FORMAT_LOST,
	};
	int tp_id, dev = pevt_dev_open(), bad = 0;

	if (dev < 0)
		SKIP(return, "no %s (pevt.ko not loaded)", PEVT_DEVICE_PATH);
	close(dev);
	tp_id = pevt_tracepoint__id("raw_syscalls:sys_enter");
	ASSERT_LT(0, tp_id) TH_LOG("no raw_syscalls:sys_enter id in tracefs");
	for (int group = 0; group < 2; group++) {
		for (unsigned int c = 0; c < 16; c++) {
			struct rf_res r[2];
			uint64_t rf = 0;
			char name[64];

			for (int b = 0; b < 4; b++)
				if (c & (1u << b))
					rf |= bits[b];
			ASSERT_EQ(0, rf_run(1, tp_id, rf, group, &r[0]))
				TH_LOG("stock: open/map failed");
			ASSERT_EQ(0, rf_run(0, tp_id, rf, group, &r[1]))
				TH_LOG("pevt: open/map failed");
			fprintf(stderr, "# %-34s stock: %u samples %u bad%s%s, read %s | pevt: %u samples %u bad%s%s, read %s\n",
				rf_name(rf | (group ? PERF_FORMAT_GROUP : 0), name, sizeof(name)),
				r[0].samples, r[0].bad_samples, r[0].why ? " " : "",
				r[0].why ?: "", r[0].read_bad ? "BAD" : "ok",
				r[1].samples, r[1].bad_samples, r[1].why ? " " : "",
				r[1].why ?: "", r[1].read_bad ? "BAD" : "ok");
			ASSERT_LE(RF_CALLS, r[0].samples);
			ASSERT_EQ(0, r[0].bad_samples + r[0].read_bad)
				TH_LOG("the checks fail on stock: %s", r[0].why);
			if (r[1].samples < RF_CALLS || r[1].bad_samples ||
			    r[1].read_bad)
				bad++;
		}
	}
	EXPECT_EQ(0, bad);
}

TEST_HARNESS_MAIN
