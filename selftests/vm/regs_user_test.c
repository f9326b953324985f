// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER through /dev/pevt,
 * against the stock kernel in the same boot:
 *  - errnos: the same attr (the raw_syscalls:sys_enter sampling event) on
 *    both backends gets the same answer for refused masks and stack sizes;
 *  - layout and values: both sample every 50th system call of the same
 *    child; sample k of each has the same abi, the same registers (those
 *    the task entered the kernel with), the same announced stack size and
 *    dyn_size and the same dyn_size bytes of stack;
 *    Each buffer is then written to a perf.data file (libpevt's writer,
 *    with the tracepoint's TRACING_DATA) and Debian's perf script -F
 *    tid,uregs reads both without a warning and prints the same lines;
 *  - cpu-clock (hrtimer, pevt only: stock's has no twin here): every
 *    record parses, abi 64, dyn_size <= size, SP and stack read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <linux/pevt.h>
#include <asm/perf_regs.h>
#include <pevt/data_writer.h>
#include <pevt/unwind.h>

#include "kselftest_harness.h"
#include "../common.h"
#include "../live_stats.h"
#include "../run_cmd.h"

#define PERF_BIN	"/usr/bin/perf"

#define PAGES		256
#define NR_CALLS	2000
#define PERIOD		50
/* Every register perf_reg_validate() accepts on x86-64. */
#define ALL_REGS	PEVT_REGS_USER_X86_64
#define MAX_SAMPLES	64

struct usample {
	uint64_t abi;
	uint64_t regs[PERF_REG_X86_64_MAX];
	uint64_t size, dyn;
	uint8_t stack[8192];
};

static int getppid_loop(void *arg)
{
	/* A few frames of stack with known content above the call. */
	volatile uint64_t marks[64];

	for (int i = 0; i < 64; i++)
		marks[i] = 0x5eed0000ULL + i;
	for (unsigned long i = 0; i < NR_CALLS; i++)
		syscall(SYS_getppid);
	return marks[0] == 0x5eed0000ULL ? 0 : 1;
}

static void uattr(struct perf_event_attr *a, uint64_t st, uint64_t mask,
		  uint32_t stack)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = sys_enter_id();
	a->sample_period = PERIOD;
	a->sample_type = PERF_SAMPLE_TID | st;
	a->sample_regs_user = mask;
	a->sample_stack_user = stack;
}

static int open_either(int dev, struct perf_event_attr *a, pid_t pid)
{
	return dev < 0 ? sys_perf_event_open(a, pid, -1, -1, 0) :
			 pevt_open(dev, a, pid, -1, -1, 0);
}

/*
 * Parse the samples (TID, [REGS_USER], [STACK_USER]) of a buffer.
 * Return: samples parsed, or -1 on a record whose size does not add up.
 */
static int parse(void *map, uint64_t st, uint64_t mask, struct usample *out,
		 int max)
{
	struct perf_event_mmap_page *pc = map;
	long pg = getpagesize();
	uint64_t size = (uint64_t)PAGES * pg;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	const uint8_t *d = (const uint8_t *)map + pg;
	int n = 0;

	for (uint64_t pos = pc->data_tail; pos < head; ) {
		struct perf_event_header h;
		uint64_t p, end;

		memcpy(&h, d + pos % size, sizeof(h));
		if (h.size < sizeof(h))
			return -1;
		end = pos + h.size;
		if (h.type != PERF_RECORD_SAMPLE) {
			pos = end;
			continue;
		}
		p = pos + sizeof(h) + 8;	/* TID */
		if (n < max) {
			struct usample *s = &out[n];

			memset(s, 0, sizeof(*s));
			if (st & PERF_SAMPLE_REGS_USER) {
				s->abi = rb_u64(d, size, p);
				p += 8;
				for (int b = 0; s->abi && b < PERF_REG_X86_64_MAX; b++) {
					if (!(mask & (1ULL << b)))
						continue;
					s->regs[b] = rb_u64(d, size, p);
					p += 8;
				}
			}
			if (st & PERF_SAMPLE_STACK_USER) {
				s->size = rb_u64(d, size, p);
				p += 8;
				for (uint64_t i = 0; i < s->size; i++)
					if (i < sizeof(s->stack))
						s->stack[i] = d[(p + i) % size];
				if (s->size) {
					p += s->size;
					s->dyn = rb_u64(d, size, p);
					p += 8;
				}
			}
			if (p != end)
				return -1;
		}
		n++;
		pos = end;
	}
	return n;
}

/*
 * The records of @map's buffer into perf.data file @path, for @fd's
 * attr @a.  Return: 0 or -errno.
 */
static int write_file(const char *path, void *map, int fd,
		      const struct perf_event_attr *a)
{
	static const char *const tps[] = { "raw_syscalls:sys_enter" };
	LIBPEVT_OPTS(pevt_data_writer_opts, o, .pipe = false);
	struct perf_event_mmap_page *pc = map;
	long pg = getpagesize();
	uint64_t size = (uint64_t)PAGES * pg, id = 0;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	const uint8_t *d = (const uint8_t *)map + pg;
	struct pevt_data_writer *w;
	uint8_t *lin;
	int out, ret;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id))
		return -errno;
	lin = malloc(head - pc->data_tail + 1);
	out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (!lin || out < 0)
		return -ENOMEM;
	for (uint64_t p = pc->data_tail; p < head; p++)
		lin[p - pc->data_tail] = d[p % size];
	w = pevt_data_writer__new(out, &o);
	ret = w ? 0 : -ENOMEM;
	if (!ret)
		ret = pevt_data_writer__add_attr(w, a, "raw_syscalls:sys_enter", &id, 1);
	if (!ret)
		ret = pevt_data_writer__add_host_features(w, 0, NULL);
	if (!ret && pevt_data_writer__add_tracing_data(w, "/sys/kernel/tracing", tps, 1))
		ret = pevt_data_writer__add_tracing_data(w, "/sys/kernel/debug/tracing", tps, 1);
	if (!ret)
		ret = pevt_data_writer__start(w);
	if (!ret)
		ret = pevt_data_writer__write(w, lin, head - pc->data_tail);
	if (!ret)
		ret = pevt_data_writer__round(w);
	if (!ret)
		ret = pevt_data_writer__finish(w);
	pevt_data_writer__delete(w);
	close(out);
	free(lin);
	return ret;
}

FIXTURE(ru) {
	int dev;
};

FIXTURE_SETUP(ru)
{
	self->dev = pevt_dev_open();
	ASSERT_LE(0, self->dev);
	if (sys_enter_id() < 0)
		SKIP(return, "no raw_syscalls:sys_enter id (tracefs)");
}

FIXTURE_TEARDOWN(ru)
{
	close(self->dev);
}

/*
 * The same answer from both backends for an attr they refuse or take.
 * A stock sys_enter event stays open throughout: each first open and
 * last close of one patches the kernel's text (the tracepoint's static
 * key), seconds under TCG on the debug kernel.
 */
TEST_F_TIMEOUT(ru, errnos_like_stock, 120)
{
	static const struct {
		const char *what;
		uint64_t st, mask;
		uint32_t stack;
	} c[] = {
		{ "regs mask 0", PERF_SAMPLE_REGS_USER, 0, 0 },
		{ "regs ds", PERF_SAMPLE_REGS_USER, 1ULL << PERF_REG_X86_DS, 0 },
		{ "regs gs", PERF_SAMPLE_REGS_USER, 1ULL << PERF_REG_X86_GS, 0 },
		{ "regs reserved bit", PERF_SAMPLE_REGS_USER, 1ULL << 30, 0 },
		{ "regs xmm0", PERF_SAMPLE_REGS_USER, 1ULL << PERF_REG_X86_XMM0, 0 },
		{ "regs all", PERF_SAMPLE_REGS_USER, ALL_REGS, 0 },
		{ "stack 65535", PERF_SAMPLE_STACK_USER, 0, 65535 },
		{ "stack 65536", PERF_SAMPLE_STACK_USER, 0, 65536 },
		{ "stack 12", PERF_SAMPLE_STACK_USER, 0, 12 },
		{ "stack 0", PERF_SAMPLE_STACK_USER, 0, 0 },
		{ "stack 65528", PERF_SAMPLE_STACK_USER, 0, 65528 },
		{ "stack 12 without the bit", 0, 0, 12 },
		{ "both", PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		  ALL_REGS, 8192 },
	};

	struct perf_event_attr keep;
	int keep_fd;

	uattr(&keep, 0, 0, 0);
	keep.sample_period = 0;
	keep_fd = sys_perf_event_open(&keep, -1, 0, -1, 0);
	ASSERT_LE(0, keep_fd) TH_LOG("%s", strerror(errno));
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct perf_event_attr a;
		int fd[2], err[2];

		for (int k = 0; k < 2; k++) {
			uattr(&a, c[i].st, c[i].mask, c[i].stack);
			fd[k] = open_either(k ? self->dev : -1, &a, getpid());
			err[k] = fd[k] < 0 ? errno : 0;
			if (fd[k] >= 0)
				close(fd[k]);
		}
		TH_LOG("%s: stock %s, pevt %s", c[i].what,
		       err[0] ? strerror(err[0]) : "ok",
		       err[1] ? strerror(err[1]) : "ok");
		EXPECT_EQ(err[0], err[1]) TH_LOG("%s", c[i].what);
	}
	close(keep_fd);
}

/* Sample k of stock and of pevt: same syscall of the same child. */
TEST_F_TIMEOUT(ru, same_fields_as_stock, 120)
{
	const uint64_t st = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	size_t len = (PAGES + 1) * getpagesize();
	struct usample *s[2];
	struct perf_event_attr a;
	int fd[2], n[2], go, status, partial = 0;
	void *map[2];
	pid_t pid;

	for (int k = 0; k < 2; k++) {
		s[k] = calloc(MAX_SAMPLES, sizeof(struct usample));
		ASSERT_NE(NULL, s[k]);
	}
	pid = fork_waiting(getppid_loop, NULL, &go);
	ASSERT_LT(0, pid);
	for (int k = 0; k < 2; k++) {
		uattr(&a, st, ALL_REGS, 8192);
		fd[k] = open_either(k ? self->dev : -1, &a, pid);
		ASSERT_LE(0, fd[k]) TH_LOG("%s: %s", k ? "pevt" : "stock", strerror(errno));
		map[k] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd[k], 0);
		ASSERT_NE(MAP_FAILED, map[k]);
	}
	ASSERT_EQ(0, child_go(go));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	for (int k = 0; k < 2; k++) {
		n[k] = parse(map[k], st, ALL_REGS, s[k], MAX_SAMPLES);
		ASSERT_LT(0, n[k]) TH_LOG("%s: bad record sizes", k ? "pevt" : "stock");
	}
	TH_LOG("samples: stock %d pevt %d (%d calls, period %d)", n[0], n[1],
	       NR_CALLS, PERIOD);
	ASSERT_EQ(n[0], n[1]);
	ASSERT_LE(NR_CALLS / PERIOD, n[1]);
	for (int i = 0; i < n[0] && i < MAX_SAMPLES; i++) {
		struct usample *x = &s[0][i], *y = &s[1][i];

		EXPECT_EQ(PERF_SAMPLE_REGS_ABI_64, y->abi);
		EXPECT_EQ(x->abi, y->abi);
		for (int b = 0; b < PERF_REG_X86_64_MAX; b++) {
			EXPECT_EQ(x->regs[b], y->regs[b])
				TH_LOG("sample %d reg %d", i, b);
		}
		EXPECT_EQ(x->size, y->size) TH_LOG("sample %d", i);
		EXPECT_EQ(x->dyn, y->dyn) TH_LOG("sample %d", i);
		EXPECT_LE(y->dyn, y->size);
		EXPECT_EQ(0, memcmp(x->stack, y->stack,
				    y->dyn < sizeof(y->stack) ? y->dyn : sizeof(y->stack)))
			TH_LOG("sample %d: stack bytes differ", i);
		partial += y->dyn < y->size;
		if (i == 0)
			TH_LOG("sample 0: ip %#llx sp %#llx size %llu dyn_size %llu (stock %llu/%llu)",
			       (unsigned long long)y->regs[PERF_REG_X86_IP],
			       (unsigned long long)y->regs[PERF_REG_X86_SP],
			       (unsigned long long)y->size,
			       (unsigned long long)y->dyn,
			       (unsigned long long)x->size,
			       (unsigned long long)x->dyn);
	}
	TH_LOG("%d of %d samples with a partial dump (stack top within 8 KiB)",
	       partial, n[1]);
	if (access(PERF_BIN, X_OK)) {
		TH_LOG("no %s: perf script not run", PERF_BIN);
	} else if (!strcmp(getenv("PEVT_KERNEL") ?: "", "debug")) {
		/* A perf run takes about a minute there (record_test.sh). */
		TH_LOG("debug kernel: perf script not run (6.1, 6.12 run it)");
	} else {
		static const char *const f[2] = { "/tmp/ru-stock.data",
						  "/tmp/ru-pevt.data" };
		struct out o[2];

		for (int k = 0; k < 2; k++) {
			uattr(&a, st, ALL_REGS, 8192);
			ASSERT_EQ(0, write_file(f[k], map[k], fd[k], &a));
			run(&o[k], PERF_BIN " script -i %s -F tid,uregs", f[k]);
			EXPECT_EQ(0, o[k].status) TH_LOG("%s: %s", f[k], o[k].err);
			EXPECT_EQ(NULL, strcasestr(o[k].err, "warning"))
				TH_LOG("%s: %s", f[k], o[k].err);
			EXPECT_NE(NULL, strstr(o[k].out, "ABI:2"))
				TH_LOG("%s: %.300s", f[k], o[k].out);
		}
		EXPECT_STREQ(o[0].out, o[1].out);
		TH_LOG("perf script -F tid,uregs: %zu bytes from each, first line: %.120s",
		       strlen(o[1].out), o[1].out);
		for (int k = 0; k < 2; k++) {
			out_free(&o[k]);
			unlink(f[k]);
		}
	}
	for (int k = 0; k < 2; k++) {
		munmap(map[k], len);
		close(fd[k]);
		free(s[k]);
	}
}

/*
 * An hrtimer-driven source: samples in user mode (the interrupted
 * registers) or in the kernel (those the task entered it with) alike.
 */
TEST_F_TIMEOUT(ru, cpu_clock_parses, 60)
{
	const uint64_t st = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	size_t len = (PAGES + 1) * getpagesize();
	struct usample *s = calloc(MAX_SAMPLES, sizeof(*s));
	struct perf_event_attr a;
	int fd, n;
	void *map;

	ASSERT_NE(NULL, s);
	pevt_attr_sampling(&a, PERF_COUNT_SW_CPU_CLOCK, NSEC_PER_MSEC);
	a.sample_type = PERF_SAMPLE_TID | st;
	a.sample_regs_user = (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP);
	a.sample_stack_user = 512;
	fd = pevt_open(self->dev, &a, 0, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	burn_cpu_ns(100 * NSEC_PER_MSEC);
	n = parse(map, st, a.sample_regs_user, s, MAX_SAMPLES);
	{
		uint64_t ns = 0;

		ASSERT_EQ(sizeof(ns), read(fd, &ns, sizeof(ns)));
		ASSERT_LT(0, n) TH_LOG("bad record sizes or no sample in %.1f ms counted",
				       ns / 1e6);
	}
	for (int i = 0; i < n && i < MAX_SAMPLES; i++) {
		uint64_t sp = s[i].regs[PERF_REG_X86_SP];

		EXPECT_EQ(PERF_SAMPLE_REGS_ABI_64, s[i].abi);
		EXPECT_EQ(512, s[i].size);
		EXPECT_EQ(512, s[i].dyn);
		/* Our own stack: the copy is what sits at sp. */
		EXPECT_LT(sp, (uint64_t)(uintptr_t)&a + 65536);
		EXPECT_LE((uint64_t)(uintptr_t)&n - 65536, sp);
	}
	TH_LOG("%d cpu-clock samples", n);
	munmap(map, len);
	close(fd);
	free(s);
}

TEST_HARNESS_MAIN
