// SPDX-License-Identifier: GPL-2.0
/*
 * pevt record --pin-readers: the reader threads and their staging
 * chunks (record_stage.h says how they are used).
 *
 * Who touches what, with no lock that anyone waits on:
 *   filler	the ring (data_tail), @wr and its chunks' data and @len,
 *		@staged, @free_tail, @filler_made: the reader, or the main
 *		thread, whichever holds @filling (taken by an atomic
 *		exchange; a reader that finds the main thread at it
 *		spins, or sleeps on it as a futex when the main thread
 *		is on the reader's CPU: fill_reader(); the main thread
 *		yields and tries again).
 *   main	@rd, @rd_off, @written, @free_head, @want; everything of
 *		the reader's once @gone is seen.
 *   reader	@took: the last @want it took its ring for.
 * A chunk's @len and @next are stored with release by the filler and
 * loaded with acquire by the main thread: @next is set only after the
 * chunk's last @len store, so a chunk whose @next the main thread sees
 * has its final length.  @nr_chunks, the arena's slots taken, is
 * counted atomically: the filler makes a chunk when the free queue is
 * empty, the main thread keeps spares in it (stock_spares()).
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>
#include <pevt/mmap.h>

#include "main.h"
#include "record_stage.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

struct stage_chunk {
	struct stage_chunk *next;	/* the reader's next chunk */
	size_t len;			/* bytes published */
	size_t cap;
	unsigned char data[];
};

#define LOAD(p)		__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define STORE(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

static void futex_wake(unsigned int *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void futex_wait(unsigned int *addr, unsigned int val, long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void kick(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* a counter eventfd takes 2^64-2 kicks: cannot fail */
	}
}

/*
 * A chunk's pages, all present and writable now, so that whoever copies
 * into it takes no page fault: MADV_POPULATE_WRITE (Linux 5.14) maps
 * them in one call, under mmap_lock for reading only.  A page a time by
 * a store costs a fault each: 11-15 us a page on this project's host
 * (a VM itself), against about 1 us populated (16 MiB: 44-61 ms
 * touched, 3.4-5.3 ms populated).  Where the call is refused, each page
 * is written, through a volatile pointer (a memset() to zero is a
 * store the compiler may drop on fresh memory).
 */
static void chunk_populate(void *p, size_t len)
{
	volatile unsigned char *v = p;
	size_t off, page;

	if (!madvise(p, len, MADV_POPULATE_WRITE))
		return;
	page = (size_t)sysconf(_SC_PAGESIZE);
	for (off = 0; off < len; off += page)
		v[off] = 0;
}

/*
 * A new chunk, if the buffer may have one more: the next slot of its
 * arena, populated.  The arena is mapped once at the start and never
 * unmapped while recording, so that neither a reader nor the main
 * thread maps memory then (a malloc() of a chunk took mmap_lock for
 * writing, which every reader's page fault waits behind: under
 * single-threaded TCG both readers were seen blocked there, in D, for
 * 5 ms at once while their producer filled the ring; Documentation/
 * record.md, "Readers that never fault on their staging" and "An arena
 * for the staging").  The filler and the main thread's stock_spares()
 * both make chunks: the slot is taken by a compare-and-swap.
 */
static struct stage_chunk *chunk_make(struct stage *st)
{
	unsigned int n = LOAD(&st->nr_chunks);
	struct stage_chunk *c;

	do {
		if (n >= st->max_chunks)
			return NULL;
	} while (!__atomic_compare_exchange_n(&st->nr_chunks, &n, n + 1, false,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	c = (struct stage_chunk *)(st->arena + (size_t)n * st->slot);
	chunk_populate(c, st->slot);
	c->cap = st->chunk_cap;
	return c;
}

/* The reader's (or, once it has ended, the main thread's) next chunk. */
static struct stage_chunk *chunk_get(struct stage *st)
{
	unsigned int t = st->free_tail;
	struct stage_chunk *c;

	if (t != LOAD(&st->free_head)) {
		c = st->freeq[t % STAGE_FREEQ];
		STORE(&st->free_tail, t + 1);
	} else {
		/* No spare: the main thread fell behind; make one here. */
		c = chunk_make(st);
		if (!c)
			return NULL;
		STORE(&st->filler_made, st->filler_made + 1);
	}
	c->next = NULL;
	c->len = 0;
	return c;
}

/* The main thread: a chunk consumed goes back to the reader. */
static void chunk_put(struct stage *st, struct stage_chunk *c)
{
	unsigned int h = st->free_head;

	/* never full: at most max_chunks <= STAGE_FREEQ exist */
	st->freeq[h % STAGE_FREEQ] = c;
	STORE(&st->free_head, h + 1);
}

/*
 * Take what the kernel wrote, whole: when no chunk can take it all,
 * nothing is taken (the kernel drops, and says so in a LOST record, as
 * with a full ring).
 */
static void stage_fill(struct stage *st)
{
	struct perf_event_mmap_page *pc = pevt_mmap__control(st->map);
	const unsigned char *data = pevt_mmap__data(st->map);
	uint64_t size = pevt_mmap__data_size(st->map);
	uint64_t head = pevt_mmap__read_head(st->map), tail = pc->data_tail, len = head - tail;
	struct stage_chunk *c = st->wr;

	if (!c || !len || st->err)
		return;
	if (len > size || (len & 7)) {
		STORE(&st->err, -EBADMSG);
		return;
	}
	if (c->cap - c->len < len) {
		struct stage_chunk *n = chunk_get(st);

		if (!n)
			return;
		STORE(&c->next, n);
		st->wr = c = n;
	}
	rb_copy(c->data + c->len, data, size - 1, tail, len);
	STORE(&c->len, c->len + len);
	STORE(&st->staged, st->staged + len);
	STORE(&pc->data_tail, head);
}

/*
 * The main thread: keep STAGE_SPARES chunks in the free queue, made
 * here, so that a reader seldom makes one: one it makes costs it the
 * populate of the chunk's pages (chunk_make()) while its ring fills.
 */
static void stock_spares(struct stage *st)
{
	struct stage_chunk *c;

	if (st->set->no_spares && LOAD(&st->nr_chunks))
		return;		/* tests: the filler makes every chunk but the first */
	while (LOAD(&st->free_head) - LOAD(&st->free_tail) < STAGE_SPARES &&
	       (c = chunk_make(st)))
		chunk_put(st, c);
}

static bool fill_take(struct stage *st)
{
	return !__atomic_exchange_n(&st->filling, 1, __ATOMIC_ACQUIRE);
}

/* Let go of the ring; wake its reader if it sleeps on it. */
static void fill_release(struct stage *st)
{
	__atomic_store_n(&st->filling, 0, __ATOMIC_SEQ_CST);
	/* @filling before @fill_waits; the reader stores them the other way */
	if (__atomic_load_n(&st->fill_waits, __ATOMIC_SEQ_CST))
		futex_wake(&st->filling);
}

/* The main thread: fill unless the reader is filling now. */
static bool fill_try(struct stage *st)
{
	/* before the take: while it holds the ring, where it ran */
	__atomic_store_n(&st->fill_cpu, sched_getcpu(), __ATOMIC_RELAXED);
	if (!fill_take(st))
		return false;
	stage_fill(st);
	fill_release(st);
	return true;
}

/*
 * The reader takes its ring, after the main thread if it is at it.
 * While the main thread is on another CPU the reader spins
 * (sched_yield()): the copy is short, and a reader that holds its CPU
 * holds back the producer there, whose samples would fill the ring
 * while the reader slept (6.1 -m 16 under TCG: sleeping, 25 of 300 runs
 * lost; spinning, 2 of 300).  When the main thread is on this CPU (this
 * reader preempted it in its take), or after STAGE_SPIN_NS, it sleeps
 * on the flag: at SCHED_FIFO a spin keeps a main thread on its CPU off
 * it until RT throttling, and the reader with it (host test
 * rec.pin.reader_waits_main_take).
 */
#define STAGE_SPIN_NS	100000000ull
static void fill_reader(struct stage *st)
{
	uint64_t t0 = 0;

	while (!fill_take(st)) {
		if (!t0)
			t0 = now_ns();
		if (__atomic_load_n(&st->fill_cpu, __ATOMIC_RELAXED) != st->cpu &&
		    now_ns() - t0 < STAGE_SPIN_NS) {
			sched_yield();
			continue;
		}
		__atomic_store_n(&st->fill_waits, 1, __ATOMIC_SEQ_CST);
		futex_wait(&st->filling, 1, 1000000);
		__atomic_store_n(&st->fill_waits, 0, __ATOMIC_RELAXED);
	}
	stage_fill(st);
	fill_release(st);
}

/* The main thread takes the ring, once the reader (if at it) is done. */
static void fill_main(struct stage *st)
{
	while (!fill_try(st))
		sched_yield();
}

/*
 * Tests (PEVT_STAGE_READER_NO_MMAP=1): the reader is killed (SIGSYS) if
 * it calls what maps or unmaps memory, the calls that take the
 * process's mmap_lock for writing, behind which every other thread's
 * page fault waits.  madvise() (MADV_POPULATE_WRITE takes it for
 * reading) stays allowed.  This thread only: no TSYNC.
 */
#if defined(__x86_64__)
#define STAGE_AUDIT_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define STAGE_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#endif
static int reader_forbid_mmap(void)
{
#ifdef STAGE_AUDIT_ARCH
	/* a denied call jumps to the last instruction: its jt counts down */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, STAGE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_munmap, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mremap, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_brk, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		return -errno;
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}

bool stage_stats_on(void)
{
	const char *stats = getenv("PEVT_STAGE_STATS");

	return stats && *stats == '1';
}

/*
 * The calling thread's page faults and context switches (a thread woken
 * in the kernel that finds nothing and sleeps again switches without a
 * return to user space), and its CPU time in seconds: one getrusage().
 */
double thread_usage(long *faults, long *switches)
{
	struct timespec ts;
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		memset(&ru, 0, sizeof(ru));
	*faults = ru.ru_minflt + ru.ru_majflt;
	*switches = ru.ru_nvcsw + ru.ru_nivcsw;
	return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) ? 0 : ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A stock kernel's buffer can wake its readers on every record, for the
 * rest of its life: perf's wakeup point is loaded and moved in two steps,
 * and a record written from an interrupt between them (a cpu-clock sample
 * into the buffer whose sideband record it interrupted) moves it too; it
 * then stands ahead of head, and compared unsigned every record moves it
 * on and wakes (kmod/ring_buffer.c rb_advance_wakeup(), the module's own
 * fixed).  A SCHED_FIFO reader woken so, some 10000 times a second under
 * single-threaded TCG at 100 kHz -a, kept its CPU and stretched a 3 s
 * recording to 100 s.  So a reader whose ring wakeups mostly (STAGE_THIN
 * of STAGE_WINDOW) bring it less than an eighth of the ring stops waiting
 * on the ring: it sleeps the time the ring took to fill a quarter of it
 * at its last rate (half what the kernel's watermark would have it wait:
 * reader_wait()), woken early only by the main thread's kick; a
 * hang-up is seen at the next wakeup (Documentation/record.md, "A wakeup
 * for every record").
 */
#define STAGE_POLL_MS		1000
#define STAGE_WINDOW		64u
#define STAGE_THIN		48u
#define STAGE_RATE_NS		10000000ull	/* the rate's step */
#define STAGE_TIMED_MIN_NS	20000ull
#define STAGE_TIMED_MAX_NS	10000000ull
#define STAGE_TIMED_NEW_NS	1000000ull	/* no rate yet */

/*
 * A timed wait lasts half the time the ring takes to fill half of it at
 * its last rate: a quarter of the ring, leaving as much again for the
 * wakeup's lateness.  It sleeps on the kick alone: a sleep on the ring's
 * fd, even with no event asked, is woken by each of the kernel's wakeups
 * (perf's wake_up_all() passes no event mask to the poll's wake
 * function), and the thread switches in to find nothing and sleep again,
 * once a record (40260 context switches for 1907 wakeups of a reader at
 * -F 20000 -m 1 with PEVT_RECORD_WAKEUP_EVERY=1; 2.3-2.6 ms of CPU a
 * wakeup in a 6.1 TCG guest at -F 100000 -a -m 1, 0.5-1.1 ms untimed).
 * The ring's hang-up is then polled without a sleep (a zero timeout
 * registers no wait).
 */
static int reader_wait(struct stage *st, struct pollfd *p)
{
	uint64_t ns = st->half_ns ? st->half_ns / 2 : STAGE_TIMED_NEW_NS;
	struct timespec ts;
	int r;

	/*
	 * A ring's wakeup, or the main thread's kick (a round's ask, the
	 * stop).  The timeout is a last resort only: a round asks every
	 * reader whose ring holds data every ROUND_NS, and the main
	 * thread's watch takes a ring its reader left late.  It was 50 ms
	 * until 2026-12-07: an idle ring's reader (the stock backend's
	 * tracking rings) woke 20 times a second for nothing.
	 */
	if (!st->timed)
		return poll(p, 2, STAGE_POLL_MS);
	if (ns < STAGE_TIMED_MIN_NS)
		ns = STAGE_TIMED_MIN_NS;
	if (ns > STAGE_TIMED_MAX_NS)
		ns = STAGE_TIMED_MAX_NS;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ns;
	p[0].revents = 0;
	r = ppoll(p + 1, 1, &ts, NULL);
	if (r < 0)
		return r;
	/* POLLHUP and POLLERR of the ring, without a sleep */
	p[0].events = 0;
	r = poll(p, 1, 0);
	p[0].events = POLLIN;
	return r;
}

/*
 * The time a ring of @size bytes takes to fill half of it, at @bytes in
 * @ns (@bytes > 0): the readers' timed waits and the main thread's watch.
 */
static uint64_t half_ring_ns(uint64_t size, uint64_t ns, uint64_t bytes)
{
	return (uint64_t)((double)ns * (size / 2) / bytes);
}

/*
 * After a fill that took @took bytes: the ring's rate, and thin wakeups.
 * The rate is taken every STAGE_RATE_NS, and at once while there is
 * none: a reader put in timed waits after its first 64 wakeups (3 ms at
 * 20 kHz) would otherwise sleep STAGE_TIMED_MAX_NS on a 4 KiB ring that
 * fills in 4 ms (104 and 185 samples lost in 1 of 6 runs of
 * rec.pin.readers_timed_when_woken_for_every_record).  A stretch in
 * which nothing came keeps the rate before it, and a timed fill that
 * found the ring half full or more halves the wait at once.
 */
static void reader_account(struct stage *st, bool ring_woke, uint64_t took)
{
	uint64_t now = now_ns(), staged = LOAD(&st->staged);
	uint64_t size = pevt_mmap__data_size(st->map);
	bool ended = !st->r_ns || now - st->r_ns >= STAGE_RATE_NS;

	if (st->r_ns && staged > st->r_staged && (ended || !st->half_ns)) {
		st->half_ns = half_ring_ns(size, now - st->r_ns, staged - st->r_staged);
		ended = true;
	}
	if (ended) {			/* the next window */
		st->r_ns = now;
		st->r_staged = staged;
	}
	if (st->timed) {
		if (took >= size / 2 && st->half_ns > 2 * STAGE_TIMED_MIN_NS)
			st->half_ns /= 2;
		return;
	}
	if (!ring_woke)
		return;
	st->thin += took < size / 8;
	if (++st->woke < STAGE_WINDOW)
		return;
	st->timed = st->thin >= STAGE_THIN;
	st->woke = st->thin = 0;
}

static void *reader_run(void *arg)
{
	struct stage *st = arg;
	struct stage_set *ss = st->set;
	struct pollfd p[2] = {
		{ .fd = st->poll_fd, .events = POLLIN },
		{ .fd = st->kick_fd, .events = POLLIN },
	};
	unsigned int want;
	long faults, switches;
	uint64_t v;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(st->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (ss->no_mmap && reader_forbid_mmap()) {
		fprintf(stderr, "PEVT_STAGE_READER_NO_MMAP: no seccomp filter: %s\n",
			strerror(errno));
		abort();
	}
	thread_usage(&faults, &switches);	/* page faults from here on */
	st->faults = -faults;
	while (!LOAD(&ss->stop)) {
		uint64_t before;

		if (reader_wait(st, p) < 0 && errno != EINTR)
			break;
		st->wakeups++;
		if (ss->delay_us && st == &ss->st[ss->nr - 1])
			usleep(ss->delay_us);	/* a reader that runs late (tests) */
		if ((p[1].revents & POLLIN) && read(st->kick_fd, &v, sizeof(v)) < 0) {
			/* nonblocking, and only this thread reads it: cannot fail */
		}
		want = LOAD(&st->want);		/* asked before the fill that answers it */
		before = LOAD(&st->staged);
		fill_reader(st);
		st->empty += LOAD(&st->staged) == before;
		reader_account(st, p[0].revents & POLLIN, LOAD(&st->staged) - before);
		if (want != st->took) {
			STORE(&st->took, want);
			futex_wake(&st->took);
		}
		__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* @staged before @sleeping */
		if (stage__pending(st) >= ss->kick_bytes &&
		    __atomic_load_n(&ss->sleeping, __ATOMIC_RELAXED) &&
		    __atomic_exchange_n(&ss->sleeping, false, __ATOMIC_SEQ_CST))
			kick(ss->wake_fd);
		/* Hung up: its tasks are gone; the main thread takes the rest. */
		if (p[0].revents & (POLLHUP | POLLERR))
			break;
	}
	st->cpu_s = thread_usage(&faults, &st->switches);
	st->faults += faults;
	__atomic_store_n(&st->gone, true, __ATOMIC_SEQ_CST);
	futex_wake(&st->took);
	kick(ss->wake_fd);
	return NULL;
}

/* The reader is not there (never started, ended or joined): the ring is ours. */
static bool reader_off(struct stage *st)
{
	return !st->started || __atomic_load_n(&st->gone, __ATOMIC_SEQ_CST);
}

static void stage_stop_one(struct stage *st)
{
	if (!st->started)
		return;
	kick(st->kick_fd);
	pthread_join(st->thread, NULL);
	st->started = false;
}

/*
 * What a buffer may stage: STAGE_MAX, and all of them together at most
 * an eighth of the memory (a chunk handed back is taken again, so this
 * is reached only while the file falls behind the kernel).
 */
static size_t stage_max(int nr)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t each;

	if (pages <= 0 || psz <= 0 || nr <= 0)
		return STAGE_MAX;
	each = (uint64_t)pages * (uint64_t)psz / 8 / (uint64_t)nr;
	return each < STAGE_MAX ? (size_t)each : STAGE_MAX;
}

int stage_set__start(struct stage_set *ss, struct stage *st, int nr, int rt_prio,
		     uint64_t flush, bool help)
{
	struct sched_param sp = { .sched_priority = rt_prio };
	pthread_attr_t attr;
	size_t each, page = (size_t)sysconf(_SC_PAGESIZE);
	int i, err = 0;
	const char *d = getenv("PEVT_STAGE_READER_DELAY_US");
	const char *nw = getenv("PEVT_STAGE_NO_WATCH");
	const char *hold = getenv("PEVT_STAGE_MAIN_HOLD_US");
	const char *nsp = getenv("PEVT_STAGE_NO_SPARES");
	const char *nm = getenv("PEVT_STAGE_READER_NO_MMAP");

	memset(ss, 0, sizeof(*ss));
	ss->help = help;
	ss->delay_us = d ? (unsigned int)strtoul(d, NULL, 10) : 0;
	ss->no_watch = nw && *nw == '1';
	ss->hold_us = hold ? (unsigned int)strtoul(hold, NULL, 10) : 0;
	ss->no_spares = nsp && *nsp == '1';
	ss->no_mmap = nm && *nm == '1';
	ss->st = st;
	ss->nr = nr;
	ss->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	for (i = 0; i < nr; i++) {
		st[i].set = ss;
		st[i].kick_fd = -1;
	}
	if (ss->wake_fd < 0)
		return -errno;
	each = stage_max(nr);
	for (i = 0; i < nr; i++) {
		struct stage *s = &st[i];
		size_t ring = pevt_mmap__data_size(s->map);

		/* a fill takes at most a ring: 2 of them, or 256 KiB */
		s->chunk_cap = ring * 2 > (256u << 10) ? ring * 2 : (256u << 10);
		s->max_chunks = each / s->chunk_cap;
		if (s->max_chunks < 2)
			s->max_chunks = 2;
		/* room in the free queue for every chunk */
		if (s->max_chunks > STAGE_FREEQ - 2)
			s->max_chunks = STAGE_FREEQ - 2;
		/*
		 * The arena: every chunk the buffer may have, address space
		 * only (MAP_NORESERVE) until a chunk is made.
		 */
		s->slot = (sizeof(struct stage_chunk) + s->chunk_cap + page - 1) / page * page;
		s->arena = mmap(NULL, s->slot * s->max_chunks, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (s->arena == MAP_FAILED) {
			s->arena = NULL;
			return -ENOMEM;
		}
		/* the reader's first chunk and its spares, ready */
		s->wr = s->rd = chunk_make(s);
		if (!s->wr)
			return -ENOMEM;
		stock_spares(s);
		if (s->free_head == 0 && !ss->no_spares)
			return -ENOMEM;
		s->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (s->kick_fd < 0)
			return -errno;
		if (ss->kick_bytes < s->chunk_cap / 2)
			ss->kick_bytes = s->chunk_cap / 2;
	}
	if (ss->kick_bytes < flush)
		ss->kick_bytes = flush;

	pthread_attr_init(&attr);
	if (rt_prio) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
	}
	for (i = 0; i < nr && !err; i++) {
		err = -pthread_create(&st[i].thread, &attr, reader_run, &st[i]);
		st[i].started = !err;
	}
	pthread_attr_destroy(&attr);
	if (err)
		stage_set__stop(ss);
	return err;
}

void stage_set__stop(struct stage_set *ss)
{
	bool stats = stage_stats_on();
	long faults, switches;
	double cpu;
	int i;

	/* Tests and the bench: the main thread's part (it calls this), once. */
	if (ss->nr && ss->st[0].started && stats) {
		cpu = thread_usage(&faults, &switches);
		fprintf(stderr, "[ pevt record: main thread: %.3f s CPU, %ld context switches, "
			"%u rings taken by the watch, %u sleeps (%u timed out, %u kicked), "
			"%u waits for a round's answer ]\n",
			cpu, switches, ss->watch_takes, ss->sleeps, ss->sleeps_timed_out,
			ss->sleeps_kicked, ss->round_waits);
	}
	STORE(&ss->stop, true);
	for (i = 0; i < ss->nr; i++) {
		struct stage *st = &ss->st[i];
		bool ran = st->started;

		stage_stop_one(st);
		/* Tests: what each reader cost in chunks and page faults. */
		if (ran && stats)
			fprintf(stderr, "[ pevt record: stage cpu %d%s: %u chunks, %u made by the filler, reader page faults %ld, %u wakeups, %.3f s CPU, %ld context switches, %u wakeups took nothing%s ]\n",
				st->cpu, st->tracking ? " tracking" : "", LOAD(&st->nr_chunks), st->filler_made, st->faults,
				st->wakeups, st->cpu_s, st->switches, st->empty,
				st->timed ? ", timed waits (a wakeup for every record)" : "");
	}
	if (ss->wake_fd >= 0)
		close(ss->wake_fd);
	ss->wake_fd = -1;
}

void stage_set__sync(struct stage_set *ss)
{
	int i;

	/* Helping: the main thread takes rings anyway. */
	for (i = 0; ss->help && i < ss->nr; i++)
		fill_main(&ss->st[i]);
	if (ss->help)
		return;
	/*
	 * Else each reader takes its own, asked and waited for; not one
	 * whose ring is empty now (a tracking event's, most of the time):
	 * what comes after this belongs to the next round anyway, and a
	 * reader stores data_tail after it has published what it took.  A
	 * wakeup costs an idle reader some 1 ms of CPU in a TCG guest at
	 * cpu-clock 100 kHz -a (the sampling interrupts that land in it).
	 */
	for (i = 0; i < ss->nr; i++) {
		struct stage *st = &ss->st[i];

		if (reader_off(st) || pevt_mmap__read_head(st->map) ==
		    LOAD(&pevt_mmap__control(st->map)->data_tail))
			continue;
		STORE(&st->want, st->want + 1);
		kick(st->kick_fd);
	}
	for (i = 0; i < ss->nr; i++) {
		struct stage *st = &ss->st[i];
		unsigned int took, waits = 0;

		for (;;) {
			if (reader_off(st)) {
				fill_main(st);
				break;
			}
			took = LOAD(&st->took);
			if (took == st->want)
				break;
			/*
			 * Not answered in a millisecond: the reader is not run
			 * (a wakeup that did not come, its CPU stopped); a take
			 * now holds all the round asked for too.
			 */
			if (waits++ && !ss->no_watch && fill_try(st))
				break;
			ss->round_waits++;
			/* PEVT_STAGE_NO_WATCH: the 10 ms steps of before the watch */
			futex_wait(&st->took, took, ss->no_watch ? 10000000 : STAGE_WATCH_MIN_NS * 2);
		}
	}
}

uint64_t stage_set__watch(struct stage_set *ss, uint64_t now)
{
	uint64_t next = STAGE_WATCH_QUIET_NS, size, head, tail;
	int i;

	/*
	 * Tests: a main thread preempted in a take while the ring's reader
	 * is woken (run pinned to the reader's CPU, the kick's wakeup
	 * preempts it at once).
	 */
	if (ss->hold_us && ss->nr && ss->st[ss->nr - 1].started) {
		struct stage *st = &ss->st[ss->nr - 1];

		__atomic_store_n(&st->fill_cpu, sched_getcpu(), __ATOMIC_RELAXED);
		if (fill_take(st)) {
			kick(st->kick_fd);
			usleep(ss->hold_us);
			stage_fill(st);
			fill_release(st);
		}
		ss->hold_us = 0;
	}
	for (i = 0; i < ss->nr; i++)
		if (ss->st[i].rd && !reader_off(&ss->st[i]))
			stock_spares(&ss->st[i]);
	for (i = 0; i < ss->nr && !ss->no_watch; i++) {
		struct stage *st = &ss->st[i];

		if (!st->rd)
			continue;
		size = pevt_mmap__data_size(st->map);
		head = pevt_mmap__read_head(st->map);
		tail = LOAD(&pevt_mmap__control(st->map)->data_tail);
		/* Helping, pass() takes every ring on every turn anyway. */
		if (!ss->help && head - tail >= (st->wake ? st->wake : size / 2) && fill_try(st))
			ss->watch_takes++;
		/*
		 * The rate since the head last moved, over at least a minimum
		 * step (a busy loop calls often).  A head that has not moved
		 * keeps the last rate until STAGE_WATCH_IDLE_NS: under TCG
		 * with one host thread the producer's vCPU does not run at
		 * all while this one does (its head stood still between
		 * calls 1 ms apart, and the watch slept 100 ms).
		 */
		if (head != st->w_head && now - st->w_ns >= STAGE_WATCH_MIN_NS / 2) {
			st->w_half_ns = half_ring_ns(size, now - st->w_ns, head - st->w_head);
			st->w_head = head;
			st->w_ns = now;
		} else if (head == st->w_head && now - st->w_ns >= STAGE_WATCH_IDLE_NS) {
			st->w_half_ns = 0;
			st->w_ns = now;
		}
		if (st->w_half_ns && st->w_half_ns / 4 < next)
			next = st->w_half_ns / 4;
	}
	return next < STAGE_WATCH_MIN_NS ? STAGE_WATCH_MIN_NS : next;
}

void stage__help(struct stage *st)
{
	fill_try(st);
}

int stage_set__running(const struct stage_set *ss)
{
	int i, n = 0;

	for (i = 0; i < ss->nr; i++)
		n += ss->st[i].started && !LOAD(&ss->st[i].gone);
	return n;
}

int stage_set__fd(const struct stage_set *ss)
{
	return ss->wake_fd;
}

bool stage_set__sleep_begin(struct stage_set *ss)
{
	int i;

	__atomic_store_n(&ss->sleeping, true, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* @sleeping before @staged */
	for (i = 0; i < ss->nr; i++)
		if (stage__pending(&ss->st[i]) >= ss->kick_bytes) {
			__atomic_store_n(&ss->sleeping, false, __ATOMIC_SEQ_CST);
			return false;
		}
	ss->sleeps++;
	return true;
}

void stage_set__sleep_end(struct stage_set *ss, bool timed_out)
{
	uint64_t v;

	__atomic_store_n(&ss->sleeping, false, __ATOMIC_SEQ_CST);
	ss->sleeps_timed_out += timed_out;
	if (read(ss->wake_fd, &v, sizeof(v)) == sizeof(v))
		ss->sleeps_kicked++;
}

uint64_t stage__pending(const struct stage *st)
{
	return LOAD(&st->staged) - LOAD(&st->written);
}

int64_t stage__consume(struct stage *st, int (*fn)(void *ctx, const unsigned char *p, size_t len),
		       void *ctx)
{
	int64_t total = 0;
	uint64_t until;
	int ret;

	if (!st->rd)
		return 0;
	if (reader_off(st))
		fill_main(st);
	/*
	 * What was staged when the call began, and not what the reader
	 * stages meanwhile: a reader that stages faster than @fn writes (-z
	 * under cpu-clock -F 100000 -a in a TCG guest) kept the main thread
	 * here for good, and it never looked at the workload's end again
	 * (host test rec.pin.slow_writer_ends).
	 */
	until = LOAD(&st->staged);
	for (;;) {
		struct stage_chunk *c = st->rd, *next = LOAD(&c->next);
		size_t end = LOAD(&c->len);	/* after @next: final if @next is set */

		if (st->rd_off < end) {
			if (st->written >= until)
				break;
			ret = fn(ctx, c->data + st->rd_off, end - st->rd_off);
			if (ret)
				return ret;
			total += end - st->rd_off;
			STORE(&st->written, st->written + (end - st->rd_off));
			st->rd_off = end;
		}
		if (!next)
			break;
		st->rd = next;
		st->rd_off = 0;
		chunk_put(st, c);
	}
	ret = LOAD(&st->err);
	return ret ? ret : total;
}

int stage__err(const struct stage *st)
{
	return LOAD(&st->err);
}

void stage__free(struct stage *st)
{
	if (st->arena)
		munmap(st->arena, st->slot * st->max_chunks);
	st->arena = NULL;
	st->rd = st->wr = NULL;
	st->free_tail = st->free_head;
	if (st->kick_fd >= 0)
		close(st->kick_fd);
	st->kick_fd = -1;
}
