/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pevt record --pin-readers: a reader thread per ring buffer, pinned to
 * the buffer's CPU, copies what the kernel wrote into staging chunks and
 * gives the ring back at once; the main thread writes the chunks to the
 * file (record_stage.c).
 *
 *	stage_set__start(&ss, st, n, prio, flush, help);	// before the workload
 *	while (recording) {
 *		if (round)
 *			stage_set__sync(&ss);	// every ring taken now
 *		else if (help)
 *			stage__help(st);	// each ring, unless its reader is at it
 *		stage__consume(st, write, ctx);	// what is staged, to the file
 *		if (stage_set__sleep_begin(&ss))	// nothing to write
 *			poll(..., stage_set__fd(&ss), ...);
 *		stage_set__sleep_end(&ss);
 *	}
 *	stage_set__stop(&ss);			// readers joined
 *	stage_set__sync(&ss); stage__consume(...);	// the rest
 *	stage__free(st);
 *
 * Whoever takes a ring holds the stage's @filling flag, taken by an
 * atomic exchange.  Only a late reader's ring is taken by the main
 * thread (below); a reader that finds the flag taken spins while the
 * main thread is on another CPU and sleeps on it (a futex the release
 * wakes) when it is on the reader's own; the main thread, which finds
 * it taken, yields and tries again.  Taken bytes go into chunks
 * that the taker appends to and publishes by a release store of the
 * chunk's length; the main thread follows the chunk list and hands
 * written chunks back through a single-producer single-consumer queue.
 *
 * Two ways to share a ring:
 *   help	(pevt record without -r) the main thread takes the rings
 *		too, on every pass, as the old mutex design did: a
 *		SCHED_OTHER reader may wait behind the producer on its CPU
 *		while the main thread runs on another.
 *   no help	(-r) the reader alone takes its ring while it runs: a
 *		round's pass asks it to (@want) and waits for its answer
 *		(@took).  A SCHED_FIFO reader runs as soon as it is woken,
 *		and the main thread, which the host may deschedule at any
 *		instant, is never where the reader could wait for it.  (With a
 *		mutex the main thread took on every pass, the readers lost
 *		0.1-0.2% at -m 1 where perf --threads -r 1 lost none.)
 * Either way a round holds everything its rings had when its pass
 * began.  A reader that has ended (its buffer hung up, or the set
 * stopped) leaves its ring to the main thread.
 *
 * A reader that is late (the kernel's wakeup did not come: on 6.1 under
 * TCG it was once 46 ms late, while the ring filled in 2 ms) has its ring
 * taken by the main thread: its watch, on every turn of its loop and at
 * least every quarter of the time its busiest ring took to fill half of
 * it (stage_set__watch()), takes a ring that is half full (the kernel's
 * wakeup point) or more, unless its reader is at it; and a round's pass
 * takes a ring itself when its reader has not answered in a millisecond.
 * Then, for the length of one copy, a reader may wait for the main
 * thread: it sleeps if the main thread is on its CPU, so that a main
 * thread it preempted in its take can finish it (a SCHED_FIFO reader
 * spinning there kept it off that CPU until RT throttling: host test
 * rec.pin.reader_waits_main_take).
 * The ring is saved only if the main thread gets a CPU in time: under
 * single-threaded TCG it woke 4-6 ms late at times, and the 6.1 -m 16
 * loss went from 14 of 400 runs to 3 of 400, not to none
 * (Documentation/record.md, "The main thread's watch").
 *
 * A reader whose ring wakes it on every record (a stock kernel's buffer
 * once its wakeup point stood ahead of head) stops waiting on the ring:
 * it sleeps the time the ring takes to fill a quarter of it, woken early
 * by a kick or a hang-up (record_stage.c reader_wait()).
 */
#ifndef PEVT_RECORD_STAGE_H
#define PEVT_RECORD_STAGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct pevt_mmap;
struct stage_chunk;

/* Copy @len bytes at ring position @pos out of the ring @data (@mask) into @dst. */
static inline void rb_copy(void *dst, const unsigned char *data, uint64_t mask,
			   uint64_t pos, size_t len)
{
	uint64_t off = pos & mask, first = mask + 1 - off;

	if (first >= len) {
		memcpy(dst, data + off, len);
	} else {
		memcpy(dst, data + off, first);
		memcpy((char *)dst + first, data, len - first);
	}
}
struct stage_set;

/* A chunk handed back is taken again; no buffer stages more than this. */
#define STAGE_MAX	(64u << 20)
#define STAGE_FREEQ	256u
/* Chunks the main thread keeps ready in each free queue. */
#define STAGE_SPARES	2u

struct stage {
	/* set by the caller before stage_set__start() */
	struct pevt_mmap *map;
	int cpu;
	int poll_fd;			/* the buffer's event fd */
	uint64_t wake;			/* the kernel wakes the reader past this (0: half) */
	bool tracking;			/* a tracking event's ring (sideband only) */

	struct stage_set *set;
	pthread_t thread;
	bool started;
	int kick_fd;			/* eventfd: the main thread wakes the reader */
	size_t chunk_cap;
	unsigned int nr_chunks, max_chunks;	/* made (atomic), allowed */
	unsigned char *arena;		/* max_chunks slots, mapped at the start */
	size_t slot;			/* a chunk's bytes, page-rounded */
	unsigned int filler_made;	/* made by the filler: no spare was there */
	long faults;			/* the reader's page faults (PEVT_STAGE_STATS) */
	double cpu_s;			/* the reader's CPU time (PEVT_STAGE_STATS) */
	long switches;			/* ... and its context switches */
	/* the reader's timed mode (reader_run()) */
	unsigned int wakeups;		/* the reader's (PEVT_STAGE_STATS) */
	unsigned int empty;		/* ... that took nothing */
	unsigned int woke, thin;	/* ring wakeups of this window, and thin ones */
	bool timed;			/* the kernel wakes on every record: timed waits */
	uint64_t r_ns, r_staged;	/* the rate's last sample */
	uint64_t half_ns;		/* time the ring takes to fill half of it */
	struct stage_chunk *wr;		/* the reader's chunk */
	struct stage_chunk *rd;		/* the main thread's */
	size_t rd_off;
	uint64_t staged;		/* bytes published (reader) */
	uint64_t written;		/* bytes consumed (main) */
	struct stage_chunk *freeq[STAGE_FREEQ];
	unsigned int free_head;		/* the main thread pushes here */
	unsigned int free_tail;		/* the reader pops here */
	unsigned int filling;		/* the reader or the main thread takes the ring (a futex) */
	unsigned int fill_waits;	/* the reader sleeps until @filling is released */
	int fill_cpu;			/* the main thread's CPU when it last tried to take the ring */
	unsigned int want, took;	/* a round's request, the reader's answer */
	bool gone;			/* the reader has ended */
	int err;			/* -EBADMSG: head and tail inconsistent */
	/* the main thread's watch (stage_set__watch()) */
	uint64_t w_head, w_ns;		/* the head seen at the last rate update, when */
	uint64_t w_half_ns;		/* time the kernel took to write half the ring, 0: idle */
};

struct stage_set {
	struct stage *st;
	int nr;
	int wake_fd;			/* eventfd: a reader wakes the main thread */
	size_t kick_bytes;		/* a reader wakes the main thread past this */
	bool stop;
	bool sleeping;			/* the main thread is about to poll */
	bool help;			/* the main thread takes rings too */
	unsigned int delay_us;		/* PEVT_STAGE_READER_DELAY_US (tests): the last
					   reader sleeps this long when woken */
	bool no_watch;			/* PEVT_STAGE_NO_WATCH=1 (A/B runs): no rescue */
	bool no_spares;			/* PEVT_STAGE_NO_SPARES=1 (tests): the readers
					   make their chunks */
	bool no_mmap;			/* PEVT_STAGE_READER_NO_MMAP=1 (tests): a reader
					   that maps memory is killed */
	unsigned int hold_us;		/* PEVT_STAGE_MAIN_HOLD_US (tests): the first watch
					   holds the last ring this long, its reader woken */
	unsigned int watch_takes;	/* rings the watch found past their wakeup point and took */
	/* the main thread's sleeps (PEVT_STAGE_STATS=1): what ended them */
	unsigned int sleeps;		/* stage_set__sleep_begin() that let it sleep */
	unsigned int sleeps_timed_out;	/* ended by the watch's timeout */
	unsigned int sleeps_kicked;	/* ended by a reader's kick */
	unsigned int round_waits;	/* a round's ask not answered at once: waited */
};

/*
 * Start a reader per stage (SCHED_FIFO @rt_prio if not 0).  @flush:
 * the caller writes no less than this at a time (--mmap-flush).  @help:
 * the caller takes the rings too (stage__help()), and takes them itself
 * for a round; else a round asks each reader to take its own ring and
 * waits for the answer, and the caller never touches a ring a reader
 * has.
 * Returns 0 or -errno (-EPERM: no right to @rt_prio); on an error the
 * readers started are stopped and every stage can be freed.
 */
int stage_set__start(struct stage_set *ss, struct stage *st, int nr, int rt_prio,
		     uint64_t flush, bool help);
/* Every reader ended and joined; the rings are the caller's again. */
void stage_set__stop(struct stage_set *ss);
/* Every ring taken now, by its reader or (helping, or no reader) the caller. */
void stage_set__sync(struct stage_set *ss);
/* Helping: the caller takes the ring now, unless its reader is at it. */
void stage__help(struct stage *st);
/*
 * The watch, called by the main thread on every turn of its loop: a
 * ring filled past its wakeup point (@wake, or half of it: the kernel's
 * wakeup should have brought its reader by then) is taken now by the
 * caller, unless its reader is at it.  Returns the ns to sleep at most
 * before the next call: a quarter of the time the busiest ring took to
 * fill half of it at its last rate, between STAGE_WATCH_MIN_NS and
 * STAGE_WATCH_QUIET_NS (no ring has a rate: the start, an idle stretch).
 * A rate is forgotten after STAGE_WATCH_IDLE_NS without a record.
 *
 * The quiet sleep was STAGE_WATCH_IDLE_NS until 2026-12-07: a ring that
 * turned busy after a quiet stretch (every recording's start) while its
 * reader's wakeup did not come stayed full until the watch's next call,
 * up to 100 ms later (~300 of ~12000 lost in most runs of
 * rec.pin.late_reader_watched at 4 kHz into 1-page rings, which fill in
 * ~20 ms).  10 ms: 100 calls a second of an idle recorder, each a read
 * of every ring's head.
 */
#define STAGE_WATCH_MIN_NS	500000ull
#define STAGE_WATCH_QUIET_NS	10000000ull
#define STAGE_WATCH_IDLE_NS	100000000ull
uint64_t stage_set__watch(struct stage_set *ss, uint64_t now_ns);
/* Readers that have not ended (their buffers not hung up). */
int stage_set__running(const struct stage_set *ss);
/* The fd a sleeping main thread polls for (readable: something to do). */
int stage_set__fd(const struct stage_set *ss);
/*
 * The main thread goes to sleep: true if it may (no stage has
 * @kick_bytes to write, no reader has ended since the last look);
 * stage_set__sleep_end() after the poll, whatever it returned
 * (@timed_out: the poll returned 0), which counts why it woke.
 */
bool stage_set__sleep_begin(struct stage_set *ss);
void stage_set__sleep_end(struct stage_set *ss, bool timed_out);

/*
 * The calling thread's page faults and context switches so far, and its
 * CPU time in seconds (PEVT_STAGE_STATS=1 lines).
 */
double thread_usage(long *faults, long *switches);
/* PEVT_STAGE_STATS=1: the threads print what they cost at their end. */
bool stage_stats_on(void);

/* Bytes staged and not consumed yet. */
uint64_t stage__pending(const struct stage *st);
/*
 * Hand what was staged when the call began to @fn, in order, as flat
 * runs of whole records (each within one chunk); a run @fn consumed is
 * given back.  What the reader stages meanwhile waits for the next call
 * (the last run may hold some of it: it ends at the chunk's length as
 * read then).  Returns the bytes consumed
 * or the first -errno of @fn or of the stage.
 */
int64_t stage__consume(struct stage *st, int (*fn)(void *ctx, const unsigned char *p, size_t len),
		       void *ctx);
/* -EBADMSG once the reader found the ring's head and tail inconsistent, or 0. */
int stage__err(const struct stage *st);
/* After stage_set__stop() (or a failed start): the chunks go. */
void stage__free(struct stage *st);

#endif
