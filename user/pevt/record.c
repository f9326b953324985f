// SPDX-License-Identifier: GPL-2.0
/*
 * pevt record: sample into per-CPU ring buffers and stream them to a
 * perf.data file (or pipe) that stock perf reads.
 *
 * The shape is perf record's (builtin-record.c): one ring buffer per CPU
 * (every event on that CPU SET_OUTPUT into it), a tracking event that
 * asks the kernel for COMM/MMAP2/FORK/EXIT, the state of what already
 * runs synthesized from /proc before the events are enabled, then passes
 * over all buffers, each pass ended by PERF_RECORD_FINISHED_ROUND
 * (Weisbecker's deterministic reordering: a reader may sort and flush
 * everything older than the previous round's newest record).
 *
 * A buffer is written straight from the mapping: [tail, head) is one or
 * two iovecs handed to the drain (--drain, record_drain.c: pwritev() in
 * the pass, io_uring, or a thread per buffer), and data_tail is stored
 * only once the bytes are on file.  The header's data.size is rewritten
 * after every round whose bytes all completed, so the file is readable up
 * to the last complete round whatever happens next.
 *
 * The file format itself is libpevt's data writer (data_writer.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <elf.h>
#include <zstd.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <linux/pevt.h>
#include <pevt/data_index.h>
#include <pevt/data_writer.h>
#include <pevt/evsel.h>
#include <pevt/ordered.h>
#include <pevt/machine.h>
#include <pevt/parse_events.h>
#include <pevt/unwind.h>

#include "main.h"
#include "record_drain.h"
#include "record_stage.h"
#include "snapshot.h"
#include "target.h"

#define RECORD_DEFAULT_EVENT	"cpu-clock"
#define RECORD_DEFAULT_FREQ	4000
#define RECORD_DEFAULT_PAGES	128		/* 512 KiB, perf's default */
#define PROGRESS_NS		500000000ull
#define READER_RT_DEFAULT	1		/* --pin-readers: SCHED_FIFO where allowed */
/*
 * FINISHED_ROUND at most every ROUND_NS (perf writes one after every pass
 * that read something).  The round guarantee (nothing after round k+1
 * older than round k's newest) assumes that a record is in its buffer
 * soon after its time was taken and that the CPUs' clocks agree.  In a VM
 * neither holds to within one pass: a vCPU can be stopped between taking
 * a sample's time and publishing the record (QEMU's TCG runs one vCPU for
 * up to 100 ms while the other waits), and local_clock() on an unstable
 * TSC differs between CPUs by up to a tick.  Under load passes come every
 * few microseconds, and a round per pass let perf report "1 out of order
 * events" on a pevt recording (-a cpu-clock on 6.1, once in a make check
 * run).  Rounds 100 ms apart keep the guarantee through such stalls; a
 * reader's memory is still bounded by two rounds, and a killed recording
 * loses at most 100 ms more.
 */
#define ROUND_NS		100000000ull

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID	(1 << 14)
#endif

struct record_opts {
	char *events;			/* joined -e lists */
	uint64_t period;		/* -c */
	uint64_t freq;			/* -F */
	enum { CG_NONE, CG_FP, CG_DWARF } call_graph;	/* -g, --call-graph */
	uint32_t dump_size;		/* --call-graph dwarf,SIZE: user stack bytes */
	bool system_wide;		/* -a */
	const char *cpu_list;		/* -C */
	const char *pid_list;		/* -p */
	const char *tid_list;		/* -t */
	const char *output;		/* -o, "-" = pipe */
	unsigned long pages;		/* -m */
	uint64_t mmap_flush;		/* --mmap-flush bytes */
	bool quiet;			/* -q */
	bool no_inherit;
	bool no_buildid;		/* -B */
	int comp_level;			/* -z: zstd level, 0 = off */
	bool overwrite;			/* --overwrite: snapshots (snapshot.c) */
	bool no_index;			/* --no-index */
	uint64_t index_slice;		/* --index-slice-size */
	struct snap_switch sw;		/* --switch-output */
	int max_files;			/* --switch-max-files */
	const char *sw_event;		/* --switch-output-event */
	enum pevt_backend backend;
	enum drain_kind drain;		/* --drain */
	bool drain_set;			/* --drain or --pin-readers given */
	bool pin_readers;		/* --pin-readers, --drain=pin, or the default */
	bool pin_default;		/* ... taken as the default */
	bool backend_auto;		/* no --backend: pevt where /dev/pevt opens */
	int rt_prio;			/* -r: SCHED_FIFO priority, 0: none */
	int reader_nice;		/* --reader-nice: the reader threads' nice */
	bool reader_nice_set;		/* given: an error if it cannot be had */
	char **argv;			/* workload */
	int argc;
};

/* One event of the file: an attr opened on every (cpu, thread). */
struct rec_event {
	struct perf_event_attr attr;
	const char *name;
	enum pevt_backend backend;
	bool own_ring;			/* the tracking event, in rings of its own */
	bool hidden;			/* opened, not in the file (setup_events()) */
	struct pevt_evsel **evsels;	/* [cpu * nr_threads + thread] */
	uint64_t *ids;
	int nr_ids;
	uint64_t *lost_written;		/* [as evsels]: in LOST_SAMPLES so far */
};

/* One ring buffer: a CPU's events of one backend, or its tracking event. */
struct rec_buf {
	int cpu;
	bool own_ring;			/* the tracking event's */
	struct pevt_evsel *owner;	/* the mapped evsel */
	struct pevt_mmap *map;
	uint64_t bytes;
};

/* Executable mappings, to know which DSOs had samples (BUILD_ID). */
struct rec_map {
	uint64_t start, end;
	int dso;
};

struct rec_task {
	int pid;
	struct rec_map *maps;
	int nr, alloc;
};

struct rec_dso {
	char *name;
	bool hit;
};

/*
 * --switch-output: a live task as the files so far know it (FORK/COMM
 * records); forgotten at its EXIT, after which nothing of it can follow.
 */
struct rec_comm {
	uint32_t pid, ppid, tid, ptid;
	uint64_t exec_time;		/* its last exec's COMM_EXEC time */
	char comm[16];
};

/*
 * --switch-output: a mapping of a live process as the files so far know
 * it (an MMAP2 record, kernel's or synthesized), for synth_gone(): forgotten
 * at the process's exec (those older than the exec) and exit.
 */
struct rec_kmap {
	uint32_t pid;
	uint64_t time;			/* sample_id TIME; 0: synthesized */
	size_t len;			/* bytes of rec, sample_id left out */
	unsigned char *rec;
};

/*
 * -z: what the passes took out of the rings, in pass order, waiting for
 * the compressing thread (zq_run()): copies of a buffer's bytes, and
 * FINISHED_ROUNDs (len 0).  The passes only copy, give the space back
 * and go on, so a slow compression no longer leaves the other rings
 * undrained (Budankov's asynchronous trace streaming, for -z).
 */
struct zq_ent {
	struct zq_ent *next;
	size_t len;			/* 0: a FINISHED_ROUND */
	unsigned char data[];
};

/* The queue stops taking more here: the pass waits (then rings fill). */
#define ZQ_MAX	(256u << 20)

struct zq {
	bool on;			/* the thread runs */
	pthread_t thread;
	pthread_mutex_t lock;		/* the queue, bytes, busy, stop, err */
	pthread_cond_t more, idle;
	struct zq_ent *head, *tail;
	size_t bytes;			/* queued data bytes */
	bool busy;			/* the thread writes an entry */
	bool stop;
	int err;			/* the first write error: the rest is dropped */
	pthread_mutex_t wlock;		/* held while the thread uses the writer */
	uint64_t seen_bytes;		/* out_bytes(): the output's size when last read */
	unsigned int delay_us;		/* PEVT_RECORD_ZSTD_DELAY_US (tests) */
};

struct record {
	struct record_opts *o;
	int exec_fd;			/* the workload's exec not confirmed yet, or -1 */
	int exec_failed;		/* the exit code when it failed */
	struct pevt_events *evs;
	struct rec_event *events;
	int nr_events;
	int *cpus, nr_cpus;
	int *threads, nr_threads;	/* {-1} for CPU-wide */
	struct rec_buf *bufs;
	int nr_bufs;
	struct stage *stages;		/* --pin-readers: [as bufs] */
	int readers_nice;		/* --pin-readers: the readers' nice */
	int readers_rt;			/* --pin-readers: their SCHED_FIFO priority, 0: none */
	struct stage_set stage_set;
	struct pevt_data_writer *w;
	struct drain *drain;
	uint64_t last_round;		/* now_ns() of the last FINISHED_ROUND */
	int out_fd;
	const char *path;
	pid_t child;
	int go_fd;

	/* sample layout, the same for every event */
	uint64_t sample_type;
	int id_hdr_size;		/* sample_id_all trailer bytes */
	uint64_t synth_time;		/* TIME in synthesized records' trailers (0) */
	int ip_idx, tid_idx, time_idx;	/* u64 index in a sample (always there) */

	uint64_t samples, lost, first_time, last_time;
	uint64_t kernel_lost;		/* in the LOST_SAMPLES written, all files */
	bool kernel_hit;
	struct rec_task *tasks;
	int nr_tasks;
	struct rec_task *last_task;
	/*
	 * sample_hit()'s last find, a mapping whose DSO is marked hit: a
	 * sample of @pid in [@start, @end) has nothing to add.  Emptied
	 * whenever a mapping or a mark changes.
	 */
	struct { int pid; uint64_t start, end; } hit_last;
	struct rec_dso *dsos;
	int nr_dsos;
	struct pevt_data *idx_data;	/* the output's attrs: record times for the index */
	ZSTD_CStream *zcs;		/* -z */
	unsigned char *zbuf;		/* one PERF_RECORD_COMPRESSED */
	unsigned char *zcopy;		/* -z: a buffer's bytes, copied out */
	size_t zcopy_size;
	size_t zunit;			/* -z: the most one COMPRESSED record holds */
	uint64_t raw_bytes, comp_bytes;	/* -z, the whole recording */
	struct zq zq;			/* -z: the compressing thread */
	uint64_t file_raw, file_comp;	/* raw_bytes, comp_bytes when the file began */
	bool stock_tracking;		/* pevt backend: sideband from a stock event */
	const char *auto_fail;		/* the event the default pevt backend could not open */
	bool done;			/* SIGINT/SIGTERM came */
	bool started;			/* the events are enabled, the workload let go */
	int signr;

	/* what every output file's header gets */
	int argc;
	char **argv;
	/* --switch-output without --overwrite: the file is split */
	struct switch_files files;
	bool switch_due;		/* SIGUSR2 came */
	uint64_t next_switch;		/* TIME: now_ns() of the next switch */
	uint64_t next_sig_check;	/* busy passes: when to look at the signals */
	uint64_t file_samples, file_lost;	/* r->samples, lost_now() when the file began */
	uint64_t bytes_done;		/* the files already dumped */
	int nr_files;
	/* --switch-output-event: a stock event, one per CPU (or -p/-t thread) */
	struct pevt_evsel **sb;
	int nr_sb;
	uint64_t sb_hits;		/* its samples so far */
	struct rec_comm *comms;		/* the tasks seen, when track_comms */
	int nr_comms, alloc_comms;
	struct rec_kmap *kmaps;		/* their processes' mappings, likewise */
	int nr_kmaps, alloc_kmaps;
	/* --overwrite -o -: names synthesized for a snapshot, not /proc's */
	struct rec_name_over {
		uint32_t tid;
		uint64_t exec;			/* its exec in the snapshot */
		char comm[16];			/* "": not known */
	} *over;
	int nr_over;
	bool track_comms;
};

/* Rendered from Documentation/man/pevt-record.1.md (scripts/mkhelp.sh). */
static int do_record_help(void)
{
	return print_help("record");
}

/* ---- DSOs with samples -------------------------------------------------- */

static struct rec_task *task_find(struct record *r, int pid, bool create)
{
	struct rec_task *t;
	int i;

	if (r->last_task && r->last_task->pid == pid)
		return r->last_task;
	for (i = 0; i < r->nr_tasks; i++) {
		if (r->tasks[i].pid == pid) {
			r->last_task = &r->tasks[i];
			return r->last_task;
		}
	}
	if (!create)
		return NULL;
	t = realloc(r->tasks, (r->nr_tasks + 1) * sizeof(*t));
	if (!t)
		return NULL;
	r->tasks = t;
	t = &r->tasks[r->nr_tasks++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	r->last_task = t;
	return t;
}

static int dso_find(struct record *r, const char *name)
{
	struct rec_dso *d;
	int i;

	for (i = r->nr_dsos - 1; i >= 0; i--)
		if (!strcmp(r->dsos[i].name, name))
			return i;
	d = realloc(r->dsos, (r->nr_dsos + 1) * sizeof(*d));
	if (!d)
		return -1;
	r->dsos = d;
	d[r->nr_dsos].name = strdup(name);
	d[r->nr_dsos].hit = false;
	if (!d[r->nr_dsos].name)
		return -1;
	return r->nr_dsos++;
}

/* Mappings or marks changed: sample_hit() looks again. */
static void hit_forget(struct record *r)
{
	r->hit_last.end = 0;
}

static void task_add_map(struct record *r, int pid, uint64_t start,
			 uint64_t len, const char *name)
{
	struct rec_task *t = task_find(r, pid, true);
	int dso = dso_find(r, name), i;

	hit_forget(r);
	if (!t || dso < 0)
		return;
	/* A new mapping replaces what it overlaps. */
	for (i = 0; i < t->nr; i++) {
		if (t->maps[i].start < start + len && start < t->maps[i].end)
			t->maps[i] = t->maps[--t->nr], i--;
	}
	if (t->nr == t->alloc) {
		int n = t->alloc ? 2 * t->alloc : 16;
		struct rec_map *m = realloc(t->maps, n * sizeof(*m));

		if (!m)
			return;
		t->maps = m;
		t->alloc = n;
	}
	t->maps[t->nr++] = (struct rec_map){ start, start + len, dso };
}

/* FORK: the child starts with the parent's mappings. */
static void task_fork(struct record *r, int pid, int ppid)
{
	struct rec_task *p, *c;
	int i;

	if (pid == ppid)
		return;		/* a new thread shares its process's maps */
	p = task_find(r, ppid, false);
	if (!p || !p->nr)
		return;
	/* task_find() may move the array: copy the parent's maps first. */
	struct rec_map *copy = malloc(p->nr * sizeof(*copy));
	int nr = p->nr;

	if (!copy)
		return;
	memcpy(copy, p->maps, nr * sizeof(*copy));
	c = task_find(r, pid, true);
	if (c) {
		c->nr = 0;
		for (i = 0; i < nr; i++)
			task_add_map(r, pid, copy[i].start, copy[i].end - copy[i].start,
				     r->dsos[copy[i].dso].name);
	}
	free(copy);
}

static void task_exec(struct record *r, int pid)
{
	struct rec_task *t = task_find(r, pid, false);

	hit_forget(r);
	if (t)
		t->nr = 0;
}

static void sample_hit(struct record *r, int pid, uint64_t ip, uint16_t misc)
{
	struct rec_task *t;
	int i;

	if ((misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
		r->kernel_hit = true;
		return;
	}
	if (pid == r->hit_last.pid && ip >= r->hit_last.start && ip < r->hit_last.end)
		return;
	t = task_find(r, pid, false);
	if (!t)
		return;
	for (i = 0; i < t->nr; i++) {
		if (ip >= t->maps[i].start && ip < t->maps[i].end) {
			r->dsos[t->maps[i].dso].hit = true;
			r->hit_last.pid = pid;
			r->hit_last.start = t->maps[i].start;
			r->hit_last.end = t->maps[i].end;
			return;
		}
	}
}

/* The running kernel's build id, from the notes it exports. */
static int kernel_build_id(uint8_t *id, size_t max)
{
	unsigned char buf[4096];
	ssize_t n;
	size_t off = 0;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	while (n > 0 && off + 12 <= (size_t)n) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > (size_t)n)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(buf + name_off, "GNU", 4) && descsz <= max) {
			memcpy(id, buf + desc_off, descsz);
			return descsz;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
	return -ENOENT;
}

/* BUILD_ID entries for the kernel and every DSO that had samples. */
static void add_build_ids(struct record *r)
{
	uint8_t id[20];
	int i, n;

	if (r->kernel_hit && (n = kernel_build_id(id, sizeof(id))) > 0)
		pevt_data_writer__add_build_id(r->w, -1, PERF_RECORD_MISC_KERNEL, id, n,
					       "[kernel.kallsyms]");
	for (i = 0; i < r->nr_dsos; i++) {
		const char *name = r->dsos[i].name;

		if (!r->dsos[i].hit || name[0] != '/')
			continue;
		n = pevt_elf__build_id(name, id, sizeof(id));
		if (n > 0)
			pevt_data_writer__add_build_id(r->w, -1, PERF_RECORD_MISC_USER,
						       id, n, name);
	}
}

/* ---- the records that go through -------------------------------------- */

static uint64_t rb_u64(const unsigned char *data, uint64_t mask, uint64_t pos)
{
	uint64_t v;

	/* Records are 8-byte aligned: a u64 never wraps. */
	memcpy(&v, data + (pos & mask), 8);
	return v;
}

/* ---- --switch-output: the tasks the files know ----------------------- */

static struct rec_comm *comm_find(struct record *r, uint32_t tid, bool create)
{
	struct rec_comm *c;
	int i;

	for (i = r->nr_comms - 1; i >= 0; i--)
		if (r->comms[i].tid == tid)
			return &r->comms[i];
	if (!create)
		return NULL;
	if (r->nr_comms == r->alloc_comms) {
		int n = r->alloc_comms ? 2 * r->alloc_comms : 64;

		c = realloc(r->comms, n * sizeof(*c));
		if (!c)
			return NULL;
		r->comms = c;
		r->alloc_comms = n;
	}
	c = &r->comms[r->nr_comms++];
	memset(c, 0, sizeof(*c));
	c->tid = tid;
	return c;
}

static void comm_fork(struct record *r, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct rec_comm *parent, *c;

	if (!r->track_comms || !(c = comm_find(r, tid, true)))
		return;
	c->pid = pid;
	c->ppid = ppid;
	c->ptid = ptid;
	/*
	 * A child's FORK is in its parent's CPU buffer, its exec's COMM in
	 * its own: a pass can take the COMM first.  The COMM is the newer
	 * name; the parent's is only for a child that has none yet.
	 */
	parent = comm_find(r, ptid, false);
	if (parent && !c->comm[0])
		memcpy(c->comm, parent->comm, sizeof(c->comm));
}

static void comm_set(struct record *r, uint32_t pid, uint32_t tid, const char *comm)
{
	struct rec_comm *c;

	if (!r->track_comms || !(c = comm_find(r, tid, true)))
		return;
	if (!c->ppid)
		c->ppid = c->ptid = pid;	/* no FORK seen: as synth_process() says */
	c->pid = pid;
	snprintf(c->comm, sizeof(c->comm), "%s", comm);
}

/* Forget @pid's mappings (all, or those older than @before if not 0). */
static void maps_drop(struct record *r, uint32_t pid, uint64_t before)
{
	int i;

	for (i = r->nr_kmaps - 1; i >= 0; i--) {
		struct rec_kmap *m = &r->kmaps[i];

		if (m->pid != pid || (before && m->time && m->time >= before))
			continue;
		free(m->rec);
		*m = r->kmaps[--r->nr_kmaps];
	}
}

/* Keep a copy of an MMAP2 record of @pid (its first @len bytes). */
static void maps_add(struct record *r, uint32_t pid, uint64_t time,
		     const unsigned char *data, uint64_t mask, uint64_t pos,
		     const void *rec, size_t len)
{
	struct rec_comm *c = comm_find(r, pid, false);
	struct rec_kmap *m;

	/* A mapping of the image an exec (taken already) replaced. */
	if (time && c && c->exec_time && time < c->exec_time)
		return;
	if (r->nr_kmaps == r->alloc_kmaps) {
		int n = r->alloc_kmaps ? 2 * r->alloc_kmaps : 64;

		m = realloc(r->kmaps, n * sizeof(*m));
		if (!m)
			return;
		r->kmaps = m;
		r->alloc_kmaps = n;
	}
	m = &r->kmaps[r->nr_kmaps];
	m->rec = malloc(len);
	if (!m->rec)
		return;
	if (rec)
		memcpy(m->rec, rec, len);
	else
		rb_copy(m->rec, data, mask, pos, len);
	m->pid = pid;
	m->time = time;
	m->len = len;
	r->nr_kmaps++;
}

/* The TIME of a non-sample record's sample_id, or 0. */
static uint64_t sid_time(const struct record *r, const unsigned char *data,
			 uint64_t mask, uint64_t pos, const struct perf_event_header *h)
{
	if (!(r->sample_type & PERF_SAMPLE_TIME) || h->size < sizeof(*h) + r->id_hdr_size)
		return 0;
	return rb_u64(data, mask, pos + h->size - r->id_hdr_size +
			  8 * !!(r->sample_type & PERF_SAMPLE_TID));
}

/* A sample on its way to the file: its IP, PID/TID and TIME. */
static void account_sample(struct record *r, uint64_t ip, uint64_t pidtid, uint64_t t,
			   uint16_t misc)
{
	r->samples++;
	if (!r->first_time || t < r->first_time)
		r->first_time = t;
	if (t > r->last_time)
		r->last_time = t;
	if (!r->o->no_buildid)
		sample_hit(r, (uint32_t)pidtid, ip, misc);
}

/*
 * Look at one record on its way to the file: count samples and losses,
 * follow mappings, forks and execs for BUILD_ID.
 */
static void account(struct record *r, const unsigned char *data, uint64_t mask,
		    uint64_t pos, const struct perf_event_header *h)
{
	uint64_t p = pos + sizeof(*h);

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		account_sample(r, rb_u64(data, mask, p + 8 * r->ip_idx),
			       rb_u64(data, mask, p + 8 * r->tid_idx),
			       rb_u64(data, mask, p + 8 * r->time_idx), h->misc);
		break;
	case PERF_RECORD_LOST:
		r->lost += rb_u64(data, mask, p + 8);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		r->lost += rb_u64(data, mask, p);
		break;
	case PERF_RECORD_MMAP2: {
		/* pid, tid, addr, len, pgoff, maj/min/ino/gen (or build id), prot, flags, name */
		char name[PATH_MAX];
		size_t off = 4 + 4 + 8 * 3 + 24 + 8, len;

		if (r->track_comms && h->size > sizeof(*h) + r->id_hdr_size)
			maps_add(r, (uint32_t)rb_u64(data, mask, p), sid_time(r, data, mask, pos, h),
				 data, mask, pos, NULL, h->size - r->id_hdr_size);
		if (r->o->no_buildid || h->size <= sizeof(*h) + off)
			break;
		len = h->size - sizeof(*h) - off - r->id_hdr_size;
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		rb_copy(name, data, mask, p + off, len);
		name[len] = '\0';
		task_add_map(r, (uint32_t)rb_u64(data, mask, p),
			     rb_u64(data, mask, p + 8), rb_u64(data, mask, p + 16), name);
		break;
	}
	case PERF_RECORD_FORK: {
		uint64_t pp = rb_u64(data, mask, p);	/* pid, ppid */

		if (!r->o->no_buildid)
			task_fork(r, (uint32_t)pp, (uint32_t)(pp >> 32));
		if (r->track_comms) {
			uint64_t tt = rb_u64(data, mask, p + 8);	/* tid, ptid */

			comm_fork(r, (uint32_t)pp, (uint32_t)(pp >> 32), (uint32_t)tt,
				  (uint32_t)(tt >> 32));
		}
		break;
	}
	case PERF_RECORD_EXIT:
		if (r->track_comms) {
			uint64_t tt = rb_u64(data, mask, p + 8);	/* tid, ptid */
			struct rec_comm *c = comm_find(r, (uint32_t)tt, false);

			if (c)
				*c = r->comms[--r->nr_comms];
			/* The process is gone with its main thread. */
			if ((uint32_t)tt == (uint32_t)rb_u64(data, mask, p))
				maps_drop(r, (uint32_t)tt, 0);
		}
		break;
	case PERF_RECORD_COMM: {
		uint64_t pt = rb_u64(data, mask, p);	/* pid, tid */

		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			task_exec(r, (uint32_t)pt);
		if (r->track_comms && h->size > sizeof(*h) + 8) {
			char comm[17] = "";
			size_t len = h->size - sizeof(*h) - 8;

			rb_copy(comm, data, mask, p + 8, len < 16 ? len : 16);
			comm_set(r, (uint32_t)pt, (uint32_t)(pt >> 32), comm);
			if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
				/*
				 * The new image's MMAP2s may be in another
				 * CPU's buffer, taken before this: only the
				 * older ones go.
				 */
				uint64_t t = sid_time(r, data, mask, pos, h);
				struct rec_comm *c = comm_find(r, (uint32_t)pt, false);

				maps_drop(r, (uint32_t)pt, t);
				if (c && t > c->exec_time)
					c->exec_time = t;
			}
		}
		break;
	}
	}
}

/* perf's PERF_SAMPLE_MAX_SIZE: a record's u16 size. */
#define COMP_RECORD_MAX	(1 << 16)

/*
 * -z --pin-readers: zstd gets at least this much a flush.  The readers
 * stage 128 KiB and more before the main thread writes; cut to one ring
 * a flush, -m 1 flushed every 4 KiB, and each flush ends a zstd block
 * with its own tables.  The COMPRESSED feature's mmap_len, which perf
 * reads as the size of its decompression buffer (one a record), then
 * says this, not the ring's size (record.md, "-z: a flush a ring").
 */
#define ZUNIT_MIN	(64u << 10)

/*
 * -z: records as perf 6.1 writes them (zstd_compress_stream_to_records()):
 * one zstd stream for the whole file, flushed into PERF_RECORD_COMPRESSED
 * records of at most 64 KiB (header.size = 8 + compressed bytes, not
 * padded).  Each record decompresses to less than one ring buffer, the
 * mmap_len the COMPRESSED feature announces.
 */
static int write_compressed(struct record *r, const void *src, size_t len)
{
	ZSTD_inBuffer in = { src, len, 0 };
	size_t left = 1;
	int ret;

	/* A test's stand-in for a slow CPU: every compression takes this long. */
	if (r->zq.delay_us)
		usleep(r->zq.delay_us);
	while (in.pos < in.size || left) {
		struct perf_event_header *h = (void *)r->zbuf;
		ZSTD_outBuffer out = { r->zbuf + sizeof(*h),
				       COMP_RECORD_MAX - sizeof(*h) - 1, 0 };
		size_t zr = in.pos < in.size ? ZSTD_compressStream(r->zcs, &out, &in) : 0;

		if (ZSTD_isError(zr)) {
			p_err("zstd: %s", ZSTD_getErrorName(zr));
			return -EIO;
		}
		left = ZSTD_flushStream(r->zcs, &out);
		if (ZSTD_isError(left)) {
			p_err("zstd: %s", ZSTD_getErrorName(left));
			return -EIO;
		}
		if (!out.pos)
			continue;
		h->type = PERF_RECORD_COMPRESSED;
		h->misc = 0;
		h->size = sizeof(*h) + out.pos;
		ret = pevt_data_writer__write(r->w, h, h->size);
		if (ret)
			return ret;
		r->comp_bytes += h->size;
	}
	r->raw_bytes += len;
	return 0;
}

/* A record of @size at @pos, with @room bytes left: not one (said), or fine. */
static bool bad_size(const struct rec_buf *b, unsigned int size, uint64_t pos, uint64_t room)
{
	if (size >= sizeof(struct perf_event_header) && !(size & 7) && size <= room)
		return false;
	p_err("CPU %d buffer: bad record size %u at %" PRIu64, b->cpu, size, pos);
	return true;
}

/*
 * Check and account the records in [@from, @to) of @data (a ring with
 * @mask, or a linear copy with mask UINT64_MAX).  Returns 0 or -EBADMSG.
 */
static int account_records(struct record *r, const struct rec_buf *b,
			   const unsigned char *data, uint64_t mask, uint64_t from, uint64_t to)
{
	uint64_t pos;

	for (pos = from; pos < to;) {
		struct perf_event_header h;

		memcpy(&h, data + (pos & mask), sizeof(h));
		if (bad_size(b, h.size, pos, to - pos))
			return -EBADMSG;
		account(r, data, mask, pos, &h);
		pos += h.size;
	}
	return 0;
}

/*
 * --pin-readers: account_records() of a staged run, linear and 8-byte
 * aligned, read in place; with @run (the output is indexed) summed up
 * for the index too, so that the writer need not walk the records again
 * (pevt_data_writer__write_run()).  Under TCG the two walks, with the
 * index's time of each record from its attr, took some 40% of the main
 * thread's CPU at -m 1 (record.md, "One walk of the records").
 * Returns 0 or -EBADMSG.
 */
static int account_run(struct record *r, const struct rec_buf *b, const unsigned char *data,
		       size_t len, struct pevt_index_run *run)
{
	/* the sample's fields account() reads: up to TIME */
	size_t min_sample = sizeof(struct perf_event_header) + 8 * (r->time_idx + 1);
	uint64_t first = UINT64_MAX, last = 0, nr = 0, nr_samples = 0, t;
	size_t pos;

	for (pos = 0; pos < len; pos += ((const struct perf_event_header *)(data + pos))->size) {
		const struct perf_event_header *h = (const void *)(data + pos);
		const uint64_t *v = (const void *)(h + 1);

		if (bad_size(b, h->size, pos, len - pos))
			return -EBADMSG;
		nr++;
		if (h->type == PERF_RECORD_SAMPLE && h->size >= min_sample) {
			t = v[r->time_idx];
			account_sample(r, v[r->ip_idx], v[r->tid_idx], t, h->misc);
			nr_samples++;
		} else {
			account(r, data, UINT64_MAX, pos, h);
			if (!run)
				continue;
			nr_samples += h->type == PERF_RECORD_SAMPLE;
			t = pevt_data__time_of(r->idx_data, h);
			if (t == UINT64_MAX)
				continue;
		}
		if (t < first)
			first = t;
		if (t > last)
			last = t;
	}
	if (run)
		*run = (struct pevt_index_run){ .nr_records = nr, .nr_samples = nr_samples,
						.bytes = len, .first_time = first, .last_time = last };
	return 0;
}

/*
 * zstd allocates and clears its tables on the first compression: do it
 * before the workload runs (a first drain of the recording that took it
 * lost the 30-250 samples behind it at -m 4), then drop the session.
 */
static int zstd_warm_up(struct record *r)
{
	static const char zeros[256];
	ZSTD_inBuffer in = { zeros, sizeof(zeros), 0 };
	ZSTD_outBuffer out = { r->zbuf, COMP_RECORD_MAX, 0 };

	if (ZSTD_isError(ZSTD_compressStream(r->zcs, &out, &in)) ||
	    ZSTD_isError(ZSTD_flushStream(r->zcs, &out)))
		return -EIO;
	return ZSTD_isError(ZSTD_CCtx_reset(r->zcs, ZSTD_reset_session_only)) ? -EIO : 0;
}

/*
 * --reader-nice: the reader threads (--pin-readers', --drain=threads')
 * get their nice from the thread that creates them, so the main thread
 * takes the readers' nice for their pthread_create() and gives it back
 * right after (raising a nice value is always allowed); the workload,
 * forked later, and the compressing thread keep the main thread's.
 * Without the option, -20 where the process may (root, CAP_SYS_NICE,
 * RLIMIT_NICE), else the readers keep the caller's nice.  Why -20:
 * a woken reader then runs before the workload that fills its ring
 * (record.md, "Readers at nice -20").
 * Return: 0 (*@old: the nice to give back, or INT_MIN: nothing to give
 * back; *@now: the readers' nice), or -errno after the error.
 */
static int readers_nice_begin(struct record *r, int *old, int *now)
{
	int want = r->o->reader_nice_set ? r->o->reader_nice : -20, cur, err;

	*old = INT_MIN;
	errno = 0;
	cur = getpriority(PRIO_PROCESS, 0);	/* this thread's, on Linux */
	if (errno) {
		err = errno;
		p_err("--reader-nice: cannot read this thread's nice: %s", strerror(err));
		return -err;
	}
	*now = cur;
	if (want == cur)
		return 0;
	if (!setpriority(PRIO_PROCESS, 0, want)) {
		*old = cur;
		*now = want;
		return 0;
	}
	if (!r->o->reader_nice_set)
		return 0;	/* the default, not allowed here: keep the caller's */
	err = errno;
	p_err("--reader-nice %d: cannot set the readers' nice: %s", want, strerror(err));
	return -err;
}

/* Keeps errno: the caller's error is read after it. */
static void readers_nice_end(int old)
{
	int e = errno;

	if (old != INT_MIN && setpriority(PRIO_PROCESS, 0, old))
		p_info("--reader-nice: cannot give the main thread back its nice %d: %s",
		       old, strerror(errno));
	errno = e;
}

/* Each stage as stage_set__start() wants it: its buffer, nothing else. */
static void stages_init(struct record *r)
{
	int i;

	for (i = 0; i < r->nr_bufs; i++) {
		const struct perf_event_attr *a = pevt_evsel__attr(r->bufs[i].owner);

		r->stages[i] = (struct stage){ .map = r->bufs[i].map, .cpu = r->bufs[i].cpu,
					       .poll_fd = pevt_evsel__fd(r->bufs[i].owner),
					       .kick_fd = -1, .tracking = r->bufs[i].own_ring,
					       .wake = a->watermark ? a->wakeup_watermark : 0 };
	}
}

/*
 * --drain=pin (--pin-readers; the default without --overwrite), in
 * record_stage.c: the readers start before the workload, so that its
 * first records (exec, the loader's syscalls) find a reader up.  With
 * -r they are SCHED_FIFO from their first instruction.
 *
 * Without -r or --reader-nice the readers are SCHED_FIFO 1 where the
 * process may (root, CAP_SYS_NICE, RLIMIT_RTPRIO), and the main thread
 * and the workload keep their policy.  A reader only copies its ring
 * into memory and sleeps in poll() again (it never writes to the disk,
 * never waits for the main thread), so its time on the CPU is bounded by
 * what its ring holds.  Why: at nice -20 (the default until 2026-12-04)
 * a woken reader does not always get its CPU from the workload in time
 * under EEVDF: at -m 1 on 6.12 the readers lost up to 9.5% at nice -20
 * (in 11 of 12 runs), 0 at SCHED_FIFO 1 in every run, single- and
 * multi-threaded TCG alike (record.md, "Readers SCHED_FIFO 1 by
 * default").  Where SCHED_FIFO is not allowed: nice -20
 * (readers_nice_begin()), else the caller's nice.
 *
 * The main thread helps (takes the rings too) only where the readers
 * have no more right to the CPU than the workload: neither SCHED_FIFO
 * nor a nice below the caller's.  A SCHED_OTHER reader at the workload's
 * nice can wait behind its CPU's producer (on 6.12 the readers alone
 * lost 50-73% at -m 1, 6-13% with the help); a raised reader runs as
 * soon as it is woken, and then the help only gets in its way (6.1,
 * nice -20: 2-25% lost at -m 1 with the help, 0 without; record.md
 * "Readers at nice -20").  Not helping, the main thread still takes a
 * ring its reader left half full (the kernel's wakeup came late or not
 * at all): stage_set__watch(), called on every turn of record_loop(),
 * which sleeps no longer than the watch asks.
 */
static int start_readers(struct record *r)
{
	int i, err, old, rt = r->o->rt_prio;
	bool raised;

	r->stages = calloc(r->nr_bufs ? r->nr_bufs : 1, sizeof(*r->stages));
	if (!r->stages)
		return -ENOMEM;
	stages_init(r);
	if (!rt && !r->o->reader_nice_set) {
		err = stage_set__start(&r->stage_set, r->stages, r->nr_bufs, READER_RT_DEFAULT,
				       r->o->mmap_flush, false);
		if (!err) {
			r->readers_rt = READER_RT_DEFAULT;
			return 0;
		}
		for (i = 0; i < r->nr_bufs; i++)
			stage__free(&r->stages[i]);
		if (err != -EPERM) {
			p_err("--pin-readers: cannot start the readers: %s", strerror(-err));
			return err;
		}
		/* SCHED_FIFO not allowed here: SCHED_OTHER, as below. */
		stages_init(r);
	}
	err = readers_nice_begin(r, &old, &r->readers_nice);
	if (err)
		return err;
	raised = old != INT_MIN && r->readers_nice < old;
	err = stage_set__start(&r->stage_set, r->stages, r->nr_bufs, rt,
			       r->o->mmap_flush, !rt && !raised);
	readers_nice_end(old);
	if (err == -EPERM && rt)
		p_err("-r %d: cannot run SCHED_FIFO: %s", rt, strerror(-err));
	else if (err)
		p_err("--pin-readers: cannot start the readers: %s", strerror(-err));
	else
		r->readers_rt = rt;
	return err;
}

static void stop_readers(struct record *r)
{
	if (r->stages)
		stage_set__stop(&r->stage_set);
}

/* ---- -z: the compressing thread -------------------------------------- */

static void *zq_run(void *arg)
{
	struct record *r = arg;
	struct zq *q = &r->zq;
	struct zq_ent *e;
	unsigned long nr = 0;
	uint64_t in = 0;
	long faults, switches;
	int err;

	/*
	 * At the recorder's own priority.  Not SCHED_IDLE (until 2026-11-29):
	 * on a CPU kept busy by the workload it got next to no CPU, the
	 * queue only grew, and a --switch-output switch, which waits for the
	 * queue, waited while the rings filled (Documentation/record.md).
	 */
	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->head && !q->stop)
			pthread_cond_wait(&q->more, &q->lock);
		if (!q->head)
			break;
		e = q->head;
		q->head = e->next;
		if (!q->head)
			q->tail = NULL;
		q->busy = true;
		err = q->err;
		pthread_mutex_unlock(&q->lock);
		if (!err) {
			pthread_mutex_lock(&q->wlock);
			err = e->len ? write_compressed(r, e->data, e->len)
				     : drain__round(r->drain, true);
			pthread_mutex_unlock(&q->wlock);
		}
		pthread_mutex_lock(&q->lock);
		if (err && !q->err)
			q->err = err;
		nr += e->len > 0;
		in += e->len;
		q->bytes -= e->len;
		q->busy = false;
		free(e);
		pthread_cond_broadcast(&q->idle);
	}
	pthread_mutex_unlock(&q->lock);
	/* Tests and the bench: what compressing cost (its thread's CPU). */
	if (stage_stats_on()) {
		double cpu = thread_usage(&faults, &switches);

		fprintf(stderr, "[ pevt record: compressing thread: %.3f s CPU, %ld context switches, "
			"%lu runs, %.3f MB in ]\n", cpu, switches, nr, in / 1e6);
	}
	return NULL;
}

/* A new output, nothing queued for it yet: out_bytes() starts from its size. */
static void zq_seen(struct record *r)
{
	r->zq.seen_bytes = pevt_data_writer__bytes(r->w);
}

static int zq_start(struct record *r)
{
	struct zq *q = &r->zq;
	const char *d = getenv("PEVT_RECORD_ZSTD_DELAY_US");
	int err;

	q->delay_us = d ? (unsigned int)strtoul(d, NULL, 10) : 0;
	/*
	 * With --pin-readers too (since 2026-12-06): the readers copy the
	 * rings out already, but a main thread compressing their chunks
	 * was not there to take a late reader's ring (record.md, "One walk
	 * of the records; -z through the compressing thread").
	 * PEVT_RECORD_Z_INLINE: the A/B.
	 */
	if (!r->zcs || getenv("PEVT_RECORD_Z_INLINE"))
		return 0;
	pthread_mutex_init(&q->lock, NULL);
	pthread_mutex_init(&q->wlock, NULL);
	pthread_cond_init(&q->more, NULL);
	pthread_cond_init(&q->idle, NULL);
	err = pthread_create(&q->thread, NULL, zq_run, r);
	if (err) {
		p_err("-z: cannot start the compressing thread: %s", strerror(err));
		return -err;
	}
	q->on = true;
	return 0;
}

/* Append to the queue: @len bytes from @iov (a FINISHED_ROUND if 0). */
static int zq_push(struct record *r, const struct iovec *iov, int n, size_t len)
{
	struct zq *q = &r->zq;
	struct zq_ent *e;
	int err;

	pthread_mutex_lock(&q->lock);
	while (q->bytes && q->bytes + len > ZQ_MAX && !q->err)
		pthread_cond_wait(&q->idle, &q->lock);
	err = q->err;
	pthread_mutex_unlock(&q->lock);
	if (err)
		return err;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return -ENOMEM;
	e->next = NULL;
	e->len = len;
	iov_gather(e->data, iov, n);
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	q->bytes += len;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/* Everything queued is on file (or dropped after an error): that error or 0. */
static int zq_flush(struct record *r)
{
	struct zq *q = &r->zq;
	int err;

	if (!q->on)
		return 0;
	pthread_mutex_lock(&q->lock);
	while (q->head || q->busy)
		pthread_cond_wait(&q->idle, &q->lock);
	err = q->err;
	pthread_mutex_unlock(&q->lock);
	return err;
}

static int zq_error(struct record *r)
{
	struct zq *q = &r->zq;
	int err;

	if (!q->on)
		return 0;
	pthread_mutex_lock(&q->lock);
	err = q->err;
	pthread_mutex_unlock(&q->lock);
	return err;
}

/* Write what is queued (unless a write failed), then end the thread. */
static void zq_stop(struct record *r)
{
	struct zq *q = &r->zq;

	if (!q->on)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	q->on = false;
}

/* The output's size so far (the thread may be writing). */
static uint64_t out_bytes(struct record *r)
{
	struct zq *q = &r->zq;

	if (!q->on)
		return pevt_data_writer__bytes(r->w);
	/*
	 * Never wait for a compression: the thread holds wlock while it
	 * compresses, and a main thread waiting there for the progress
	 * line could not take a late reader's ring (host test
	 * rec.pin.late_reader_watched_compressing).  The size last read
	 * does meanwhile (read when the thread started, and when the file
	 * switched, with nothing queued: zq_seen()).
	 */
	if (!pthread_mutex_trylock(&q->wlock)) {
		q->seen_bytes = pevt_data_writer__bytes(r->w);
		pthread_mutex_unlock(&q->wlock);
	}
	return q->seen_bytes;
}

struct staged_ctx {
	struct record *r;
	struct rec_buf *b;
};

/* --pin-readers: a run of staged records to the file. */
static int write_staged(void *ctx, const unsigned char *out, size_t len)
{
	struct staged_ctx *sc = ctx;
	struct record *r = sc->r;
	struct pevt_index_run run;
	int ret = account_run(r, sc->b, out, len, r->idx_data && !r->zcs ? &run : NULL);

	if (ret)
		return ret;
	if (!r->zcs) {
		ret = r->idx_data ? pevt_data_writer__write_run(r->w, out, len, &run) :
				    pevt_data_writer__write(r->w, out, len);
	} else {
		/*
		 * -z: at most zunit bytes per call, so that no COMPRESSED
		 * record decompresses to more than the mmap_len the
		 * COMPRESSED feature announces (perf's buffer for it).
		 */
		uint64_t from = 0, at = 0, size;

		for (ret = 0; !ret && at < len; from = at) {
			struct iovec iov = { (void *)(out + from), 0 };

			while (at < len &&
			       at - from + (size = ((const struct perf_event_header *)(out + at))->size) <= r->zunit)
				at += size;
			iov.iov_len = at - from;
			/* the thread's copy: the chunk goes back to its reader */
			ret = r->zq.on ? zq_push(r, &iov, 1, iov.iov_len) :
					 write_compressed(r, iov.iov_base, iov.iov_len);
		}
	}
	if (!ret)
		sc->b->bytes += len;
	return ret;
}

/*
 * --pin-readers: the main thread's part of drain(): write what the
 * reader staged, all of it in a pass that ends a round (@all, the rings
 * taken by the pass).  Helping (readers at the workload's priority,
 * start_readers()) the pass takes each ring too and writes from
 * --mmap-flush on; else (-r, or readers at a lower nice) the reader runs
 * as soon as it is woken, and the main thread keeps off its ring and
 * writes once there is enough for a write worth waking up for.
 */
static int64_t drain_staged(struct record *r, int idx, bool all)
{
	struct staged_ctx sc = { r, &r->bufs[idx] };
	struct stage *st = &r->stages[idx];
	uint64_t n;
	int64_t ret;

	if (r->stage_set.help && !all)
		stage__help(st);
	n = stage__pending(st);
	if (!all && !stage__err(st) &&
	    (!n || n < (r->stage_set.help ? r->o->mmap_flush : r->stage_set.kick_bytes)))
		return 0;
	ret = stage__consume(st, write_staged, &sc);
	if (ret == -EBADMSG)
		p_err("CPU %d buffer: head and tail inconsistent", sc.b->cpu);
	return ret;
}

/*
 * Take what a buffer holds, [read position, head), and hand it to the
 * drain straight from the mapping (one or two iovecs); the drain gives
 * the space back once the bytes are on file.  Returns bytes taken or
 * -errno.
 */
static int64_t drain(struct record *r, int idx, bool flush_all)
{
	struct rec_buf *b = &r->bufs[idx];
	struct perf_event_mmap_page *pc = pevt_mmap__control(b->map);
	unsigned char *data = pevt_mmap__data(b->map);
	uint64_t size = pevt_mmap__data_size(b->map), mask = size - 1;
	uint64_t head = pevt_mmap__read_head(b->map);
	uint64_t tail = drain__read_pos(r->drain, idx), len = head - tail;
	struct iovec iov[2];
	int n = 1, ret;

	if (!len)
		return 0;
	if (head - pc->data_tail > size || (len & 7)) {
		p_err("CPU %d buffer: head %" PRIu64 " tail %" PRIu64 " inconsistent",
		      b->cpu, head, tail);
		return -EBADMSG;
	}
	if (len < r->o->mmap_flush && !flush_all)
		return 0;
	ret = account_records(r, b, data, mask, tail, head);
	if (ret)
		return ret;
	iov[0].iov_base = data + (tail & mask);
	iov[0].iov_len = len;
	if ((tail & mask) + len > size) {
		iov[0].iov_len = size - (tail & mask);
		iov[1].iov_base = data;
		iov[1].iov_len = len - iov[0].iov_len;
		n = 2;
	}
	if (r->zq.on) {
		/* Copy out, give the space back, let the thread compress. */
		ret = zq_push(r, iov, n, len);
		if (!ret)
			ret = drain__consumed(r->drain, idx, head);
	} else if (r->zcs && len <= r->zcopy_size) {
		/*
		 * Copy out and give the space back before compressing: the
		 * kernel writes on while zstd works (a copy costs a tenth of
		 * what level 1 does; -m 4 lost 7% of the samples without it).
		 */
		iov_gather(r->zcopy, iov, n);
		ret = drain__consumed(r->drain, idx, head);
		if (!ret)
			ret = write_compressed(r, r->zcopy, len);
	} else if (r->zcs) {
		ret = write_compressed(r, iov[0].iov_base, iov[0].iov_len);
		if (!ret && n == 2)
			ret = write_compressed(r, iov[1].iov_base, iov[1].iov_len);
		if (!ret)
			ret = drain__consumed(r->drain, idx, head);
	} else {
		ret = drain__submit(r->drain, idx, iov, n, head);
	}
	if (ret)
		return ret;
	b->bytes += len;
	return len;
}

/* One pass over every buffer, then FINISHED_ROUND. */
static int64_t pass(struct record *r, bool flush_all)
{
	int64_t total = 0, n;
	int i, ret;
	bool mark;

	mark = flush_all || now_ns() - r->last_round >= ROUND_NS;
	/* --pin-readers: a round holds what the rings had when its pass began */
	if (mark && r->stages)
		stage_set__sync(&r->stage_set);
	for (i = 0; i < r->nr_bufs; i++) {
		n = r->stages ? drain_staged(r, i, mark) : drain(r, i, flush_all);
		if (n < 0)
			return n;
		total += n;
	}
	if (mark)
		r->last_round = now_ns();
	if (r->zq.on) {
		/* -z: the round goes after its pass's data, through the thread */
		ret = mark ? zq_push(r, NULL, 0, 0) : 0;
		if (!ret)
			ret = flush_all ? zq_flush(r) : zq_error(r);
	} else {
		ret = drain__round(r->drain, mark);
	}
	return ret ? ret : total;
}

/*
 * The drain (--drain): io_uring and threads need file mode and
 * uncompressed data (a compressed record is a copy, written where it is
 * made); anything else falls back to write, and says so.
 */
static int setup_drain(struct record *r)
{
	enum drain_kind kind = r->o->drain;
	struct pevt_mmap **maps = calloc(r->nr_bufs ? r->nr_bufs : 1, sizeof(*maps));
	const char *why = NULL;
	int i, err, now, old = INT_MIN;

	if (!maps)
		return -ENOMEM;
	for (i = 0; i < r->nr_bufs; i++)
		maps[i] = r->bufs[i].map;
	if (kind != DRAIN_WRITE && r->out_fd == STDOUT_FILENO)
		why = "pipe mode";
	else if (kind != DRAIN_WRITE && r->zcs)
		why = "-z";
	if (why) {
		if (!r->o->quiet)
			p_info("--drain=%s: %s writes in order, using --drain=write",
			       drain_kind__name(kind), why);
		kind = DRAIN_WRITE;
	}
	/* --drain=threads: a thread per buffer, created here, at the readers' nice */
	if (kind == DRAIN_THREADS && (err = readers_nice_begin(r, &old, &now))) {
		free(maps);
		return err;
	}
	r->drain = drain__new(kind, r->w, r->out_fd, maps, r->nr_bufs);
	readers_nice_end(old);
	if (!r->drain && kind == DRAIN_URING && errno == EOPNOTSUPP) {
		if (!r->o->quiet)
			p_info("--drain=uring: no io_uring in this kernel, using --drain=write");
		r->drain = drain__new(DRAIN_WRITE, r->w, r->out_fd, maps, r->nr_bufs);
	}
	free(maps);
	if (!r->drain) {
		p_err("cannot set up --drain=%s: %s", drain_kind__name(kind), strerror(errno));
		return -errno;
	}
	return 0;
}

/* ---- the index (HEADER_PEVT_INDEX) ------------------------------------ */

static uint64_t index_time_of(void *ctx, const struct perf_event_header *ev)
{
	return pevt_data__time_of(ctx, ev);
}

/*
 * A regular output file gets the index `pevt data index` would write
 * (include/pevt/data_index.h), built by the data writer as the records
 * go out, with the times the file's reader sees: the output, opened for
 * reading right after start() (header, ids, attrs on file), gives them.
 */
static void setup_index(struct record *r)
{
	struct stat st;

	if (r->o->no_index || r->out_fd == STDOUT_FILENO || fstat(r->out_fd, &st) ||
	    !S_ISREG(st.st_mode))
		return;
	r->idx_data = pevt_data__open(r->path);
	if (!r->idx_data || !pevt_data__nr_streams(r->idx_data) ||
	    pevt_data_writer__set_index(r->w, r->o->index_slice, index_time_of, r->idx_data)) {
		if (!r->o->quiet)
			p_info("%s: not indexed (%s); `pevt data index %s` can add it later",
			       r->path, r->idx_data && pevt_data__error(r->idx_data) ?
			       pevt_data__error(r->idx_data) : strerror(errno), r->path);
		pevt_data__delete(r->idx_data);
		r->idx_data = NULL;
	}
}

/* ---- synthesized state ------------------------------------------------- */

/*
 * Samples lost so far: the LOST records' sum, or the kernel's count
 * (LOST_SAMPLES) where larger.  The kernel counts every sample it drops,
 * but a LOST record comes only with the next record that fits: a ring
 * that stays full to the end (a reader that never came) has none, and
 * until 2026-12-04 the summary said "0 lost" for 20000 samples dropped
 * that way, while the file's LOST_SAMPLES had them.
 */
static uint64_t lost_now(const struct record *r)
{
	return r->kernel_lost > r->lost ? r->kernel_lost : r->lost;
}

/*
 * perf record's record__read_lost_samples() (6.1): after the last pass,
 * the kernel's count of samples each (event, cpu, thread) dropped on a
 * full buffer (read_format LOST), as one PERF_RECORD_LOST_SAMPLES each
 * that lost any, with the event's id in the trailer.  perf report prints
 * their sum as "Total Lost Samples" (the LOST records it leaves out).
 */
/*
 * PERF_RECORD_LOST_SAMPLES: what the kernel counted as lost (read_format
 * LOST) since the last file, per event and CPU/thread.  perf 6.1 writes
 * them at the end only, so with --switch-output all of a recording's
 * losses land in its last file; here each file gets its own.
 */
static int write_lost_samples(struct record *r)
{
	int i, k, ret;

	for (i = 0; i < r->nr_events; i++) {
		struct rec_event *e = &r->events[i];

		if (!(e->attr.read_format & PERF_FORMAT_LOST))
			continue;
		if (!e->lost_written) {
			e->lost_written = calloc(r->nr_cpus * r->nr_threads,
						 sizeof(*e->lost_written));
			if (!e->lost_written)
				return -ENOMEM;
		}
		for (k = 0; k < r->nr_cpus * r->nr_threads; k++) {
			struct {
				struct perf_event_header h;
				uint64_t lost;
				uint64_t trailer[8];
			} rec = { .h = { .type = PERF_RECORD_LOST_SAMPLES } };
			struct pevt_counts c;
			uint64_t id = 0;

			if (!e->evsels[k] || pevt_evsel__read(e->evsels[k], &c, 1) < 1 ||
			    c.lost <= e->lost_written[k])
				continue;
			rec.lost = c.lost - e->lost_written[k];
			r->kernel_lost += rec.lost;
			/* trailer: TID, TIME, (CPU), (IDENTIFIER): the id last */
			if ((r->sample_type & PERF_SAMPLE_IDENTIFIER) &&
			    !pevt_evsel__id(e->evsels[k], &id))
				rec.trailer[r->id_hdr_size / 8 - 1] = id;
			rec.h.size = offsetof(typeof(rec), trailer) + r->id_hdr_size;
			ret = pevt_data_writer__write(r->w, &rec, rec.h.size);
			if (ret)
				return ret;
			e->lost_written[k] = c.lost;
		}
	}
	return 0;
}

static int write_rec(struct record *r, void *rec, size_t len)
{
	/*
	 * The sample_id_all trailer of a synthesized record: zeros, as
	 * perf's; its TIME (after TID) r->synth_time, which only the
	 * snapshots of an --overwrite stream set (snapshot.c).
	 */
	uint64_t trailer[8] = { 0 };
	struct iovec iov[2] = { { rec, len }, { trailer, r->id_hdr_size } };

	if (r->sample_type & PERF_SAMPLE_TIME)
		trailer[!!(r->sample_type & PERF_SAMPLE_TID)] = r->synth_time;

	((struct perf_event_header *)rec)->size = len + r->id_hdr_size;
	return pevt_data_writer__writev(r->w, iov, 2);
}

static int synth_comm(struct record *r, int pid, int tid, const char *comm)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[24];
	} ev = { .h = { .type = PERF_RECORD_COMM }, .pid = pid, .tid = tid };
	size_t len = strnlen(comm, 15) + 1;

	comm_set(r, pid, tid, comm);
	/* A snapshot that holds @tid's exec: its name before it (snap_names()). */
	for (int i = 0; i < r->nr_over; i++) {
		if (r->over[i].tid == (uint32_t)tid && r->over[i].comm[0]) {
			comm = r->over[i].comm;
			len = strnlen(comm, 15) + 1;
			break;
		}
	}
	memcpy(ev.comm, comm, len - 1);
	return write_rec(r, &ev, offsetof(typeof(ev), comm) + ((len + 7) & ~7ul));
}

static int synth_fork(struct record *r, int pid, int ppid, int tid, int ptid)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} ev = {
		.h = { .type = PERF_RECORD_FORK },
		.pid = pid, .ppid = ppid, .tid = tid, .ptid = ptid,
	};

	comm_fork(r, pid, ppid, tid, ptid);
	return write_rec(r, &ev, sizeof(ev));
}

/* --switch-output: MMAP2 of @pid's mappings as the files knew them. */
static int synth_kept_maps(struct record *r, uint32_t pid)
{
	int j, ret = 0;

	for (j = 0; !ret && j < r->nr_kmaps; j++)
		if (r->kmaps[j].pid == pid)	/* write_rec() sets the size */
			ret = write_rec(r, r->kmaps[j].rec, r->kmaps[j].len);
	return ret;
}

/*
 * MMAP2 of every executable mapping of @pid, and with --call-graph dwarf
 * (attr.mmap_data) of every readable one, with PERF_RECORD_MISC_MMAP_DATA
 * (perf_event__synthesize_mmap_events()).
 */
static int synth_mmaps(struct record *r, int pid)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
		char filename[PATH_MAX + 8];
	} ev;
	char path[64], line[PATH_MAX + 256];
	bool listed = false;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;	/* gone meanwhile */
	while (!ret && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perm[8], *name;
		int n = 0;
		size_t len;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n",
			   &start, &end, perm, &pgoff, &maj, &min, &ino, &n) < 7 || !n)
			continue;
		if (r->track_comms && !listed)
			maps_drop(r, pid, 0);	/* /proc's are the ones now */
		listed = true;
		if (perm[2] != 'x' && (r->o->call_graph != CG_DWARF || perm[0] != 'r'))
			continue;
		name = line + n;
		name[strcspn(name, "\n")] = '\0';
		if (!*name)
			name = "//anon";
		memset(&ev, 0, offsetof(typeof(ev), filename));
		ev.h.type = PERF_RECORD_MMAP2;
		ev.h.misc = PERF_RECORD_MISC_USER |
			    (perm[2] != 'x' ? PERF_RECORD_MISC_MMAP_DATA : 0);
		ev.pid = ev.tid = pid;
		ev.start = start;
		ev.len = end - start;
		ev.pgoff = pgoff;
		ev.maj = maj;
		ev.min = min;
		ev.ino = ino;
		ev.prot = (perm[2] == 'x' ? PROT_EXEC : 0) | (perm[0] == 'r' ? PROT_READ : 0) |
			  (perm[1] == 'w' ? PROT_WRITE : 0);
		ev.flags = perm[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		len = strlen(name) + 1;
		if (len > PATH_MAX)
			continue;
		memcpy(ev.filename, name, len);
		len = (len + 7) & ~7ul;
		memset(ev.filename + strlen(name), 0, len - strlen(name));
		if (!r->o->no_buildid)
			task_add_map(r, pid, start, end - start, name);
		if (r->track_comms) {
			ev.h.size = offsetof(typeof(ev), filename) + len;
			maps_add(r, pid, 0, NULL, 0, 0, &ev, ev.h.size);
		}
		ret = write_rec(r, &ev, offsetof(typeof(ev), filename) + len);
	}
	fclose(f);
	/*
	 * No mapping listed: the process has exited (a zombie, its mm gone)
	 * but is not reaped, so synth_gone() will not see it gone either.
	 * Its last samples may still be in the buffers: the maps the files
	 * knew (--switch-output; before, in 10 of 34 loaded runs of
	 * switch_output_test gone_maps, such a sample had no DSO).
	 */
	if (!ret && !listed)
		ret = synth_kept_maps(r, pid);
	return ret;
}

static int read_status(int pid, int tid, char *comm, size_t len, int *ppid)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	*comm = '\0';
	*ppid = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			snprintf(comm, len, "%.15s", line + 6);
			comm[strcspn(comm, "\n")] = '\0';
		} else if (!strncmp(line, "PPid:\t", 6)) {
			*ppid = atoi(line + 6);
		}
	}
	fclose(f);
	return 0;
}

/*
 * FORK + COMM for every thread of @pid, MMAP2 for its mappings; not those
 * of the workload before its exec, while it still runs pevt's image and
 * execs it away (perf record too synthesizes only its COMM): they would
 * stay in a reader's map tree after the exec wherever the new image's
 * maps do not overlap them, and an unwinder reading through such a stale
 * map fails.  A later file (--switch-output, snapshots) takes its maps:
 * the exec is behind it then.
 */
static int synth_process(struct record *r, int pid)
{
	int *tids = NULL, nr = 0, i, ret = 0, ppid;
	char comm[32];

	if (proc_add_threads(pid, &tids, &nr))
		return 0;	/* gone meanwhile */
	for (i = 0; i < nr && !ret; i++) {
		if (read_status(pid, tids[i], comm, sizeof(comm), &ppid))
			continue;
		if (tids[i] == pid)
			ret = synth_fork(r, pid, ppid, pid, ppid);
		else
			ret = synth_fork(r, pid, pid, tids[i], pid);
		if (!ret)
			ret = synth_comm(r, pid, tids[i], comm);
	}
	free(tids);
	if (!ret && (pid != r->child || (r->started && r->exec_fd < 0)))
		ret = synth_mmaps(r, pid);
	return ret;
}

/*
 * PERF_RECORD_MMAP of the kernel ([kernel.kallsyms]_text at _text), which
 * perf uses to relocate kernel symbols (perf_event__synthesize_kernel_mmap()).
 */
static int synth_kernel_mmap(struct record *r)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		char filename[24];
	} ev = {
		.h = { .type = PERF_RECORD_MMAP, .misc = PERF_RECORD_MISC_KERNEL },
		.pid = -1, .tid = 0,
		.filename = "[kernel.kallsyms]_text",
	};
	unsigned long long addr = 0;
	char line[256], sym[128], t;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &addr, &t, sym) == 3 && !strcmp(sym, "_text"))
			break;
		addr = 0;
	}
	fclose(f);
	if (!addr)
		return 0;	/* restricted: perf report falls back to its own guess */
	ev.start = addr;
	ev.pgoff = addr;
	ev.len = ~0ull - addr;
	return write_rec(r, &ev, sizeof(ev));
}

/* PERF_RECORD_ID_INDEX: which CPU and thread every id belongs to. */
static int synth_id_index(struct record *r)
{
	struct {
		struct perf_event_header h;
		uint64_t nr;
		struct { uint64_t id, idx, cpu, tid; } e[1024];
	} *ev = malloc(sizeof(*ev));
	int i, c, t, n = 0, ret = 0;

	if (!ev)
		return -ENOMEM;
	for (i = 0; i < r->nr_events && !ret; i++) {
		if (r->events[i].hidden)
			continue;
		for (c = 0; c < r->nr_cpus && !ret; c++) {
			for (t = 0; t < r->nr_threads && !ret; t++) {
				ev->e[n].id = r->events[i].ids[c * r->nr_threads + t];
				ev->e[n].idx = c;
				ev->e[n].cpu = r->cpus[c];
				ev->e[n].tid = r->threads[t];
				if (++n < 1024)
					continue;
				ev->h = (struct perf_event_header){ .type = PERF_RECORD_ID_INDEX,
					.size = 16 + n * sizeof(ev->e[0]) };
				ev->nr = n;
				ret = pevt_data_writer__write(r->w, ev, ev->h.size);
				n = 0;
			}
		}
	}
	if (n && !ret) {
		ev->h = (struct perf_event_header){ .type = PERF_RECORD_ID_INDEX,
			.size = 16 + n * sizeof(ev->e[0]) };
		ev->nr = n;
		ret = pevt_data_writer__write(r->w, ev, ev->h.size);
	}
	free(ev);
	return ret;
}

/*
 * The processes the task targets forked while recording (inherited
 * events): every process of /proc whose parent is a target or one of
 * them.  A file begun after they started (--switch-output, snapshots)
 * does not have their FORK/COMM/MMAP2 from the kernel.
 */
static int synth_descendants(struct record *r)
{
	int *pids = NULL, *ppids = NULL, nr = 0, alloc = 0, i, j, ret = 0;
	bool *in = NULL, grew = true;
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char comm[32];
		int pid = atoi(de->d_name), ppid;

		if (pid <= 0 || read_status(pid, pid, comm, sizeof(comm), &ppid))
			continue;
		if (nr == alloc) {
			int *np, *npp;

			alloc = alloc ? 2 * alloc : 256;
			np = realloc(pids, alloc * sizeof(*np));
			if (np)
				pids = np;
			npp = realloc(ppids, alloc * sizeof(*npp));
			if (npp)
				ppids = npp;
			if (!np || !npp) {
				ret = -ENOMEM;
				goto out;
			}
		}
		pids[nr] = pid;
		ppids[nr++] = ppid;
	}
	in = calloc(nr ? nr : 1, sizeof(*in));
	if (!in) {
		ret = -ENOMEM;
		goto out;
	}
	/* Down the tree until nothing is added: children may come before parents. */
	while (grew) {
		grew = false;
		for (i = 0; i < nr; i++) {
			if (in[i])
				continue;
			for (j = 0; j < r->nr_threads && !in[i]; j++)
				in[i] = ppids[i] == r->threads[j];
			for (j = 0; j < nr && !in[i]; j++)
				in[i] = in[j] && ppids[i] == pids[j];
			grew |= in[i];
		}
	}
	for (i = 0; i < nr && !ret; i++) {
		for (j = 0; j < r->nr_threads; j++)
			if (pids[i] == r->threads[j])
				break;
		if (in[i] && j == r->nr_threads)
			ret = synth_process(r, pids[i]);
	}
out:
	closedir(d);
	free(in);
	free(pids);
	free(ppids);
	return ret;
}

static int synthesize(struct record *r)
{
	bool kernel = false;
	int i, ret;

	ret = synth_id_index(r);
	for (i = 0; i < r->nr_events; i++)
		kernel |= !r->events[i].attr.exclude_kernel;
	if (!ret && kernel)
		ret = synth_kernel_mmap(r);
	if (ret)
		return ret;
	if (r->threads[0] == -1) {
		/* CPU-wide: every process. */
		struct dirent *de;
		DIR *d = opendir("/proc");

		if (!d)
			return -errno;
		while (!ret && (de = readdir(d))) {
			int pid = atoi(de->d_name);

			if (pid > 0)
				ret = synth_process(r, pid);
		}
		closedir(d);
		return ret;
	}
	/* Task targets: each process once (threads of one process are adjacent). */
	for (i = 0; i < r->nr_threads && !ret; i++) {
		char path[64], buf[64];
		int tgid = r->threads[i], j;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", r->threads[i]);
		f = fopen(path, "re");
		while (f && fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "Tgid:\t", 6))
				tgid = atoi(buf + 6);
		if (f)
			fclose(f);
		for (j = 0; j < i; j++)
			if (r->threads[j] == tgid)
				break;
		if (j == i || tgid != r->threads[i])
			ret = synth_process(r, tgid);
	}
	if (!ret && r->started && !r->o->no_inherit)
		ret = synth_descendants(r);
	return ret;
}

/*
 * --switch-output, a file after the first: FORK + COMM of the tasks the
 * last file knew that are gone from /proc, though their EXIT is not in a
 * file yet, and MMAP2 of their processes' mappings as the files knew
 * them.  They exited between the last file's last pass and now, and
 * their last samples, still in the buffers, go into this file.
 */
static int synth_gone(struct record *r)
{
	char path[64];
	int i, ret = 0;

	for (i = 0; i < r->nr_comms && !ret; i++) {
		struct rec_comm c = r->comms[i];

		snprintf(path, sizeof(path), "/proc/%u/task/%u", c.pid, c.tid);
		if (!c.comm[0] || !access(path, F_OK))
			continue;
		ret = synth_fork(r, c.pid, c.ppid, c.tid, c.ptid);
		if (!ret)
			ret = synth_comm(r, c.pid, c.tid, c.comm);
		if (!ret && c.tid == c.pid)
			ret = synth_kept_maps(r, c.pid);
	}
	return ret;
}

/* TRACING_DATA for the tracepoint events, which perf needs to read them. */
static int add_tracing_data(struct record *r)
{
	const char *tracefs = access("/sys/kernel/tracing/events", F_OK) ?
			      "/sys/kernel/debug/tracing" : "/sys/kernel/tracing";
	const char **tps = calloc(r->nr_events, sizeof(*tps));
	char **names = calloc(r->nr_events, sizeof(*names));
	int i, n = 0, ret = -ENOMEM;

	if (!tps || !names)
		goto out;
	for (i = 0; i < r->nr_events; i++) {
		const char *nm = r->events[i].name, *c;

		if (r->events[i].attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		/* "sys:name[:mods]" -> "sys:name" */
		c = strchr(nm, ':');
		c = c ? strchr(c + 1, ':') : NULL;
		names[n] = c ? strndup(nm, c - nm) : strdup(nm);
		if (!names[n])
			goto out;
		tps[n] = names[n];
		n++;
	}
	ret = n ? pevt_data_writer__add_tracing_data(r->w, tracefs, tps, n) : 0;
	if (ret)
		p_err("cannot copy the tracepoint formats from %s: %s", tracefs, strerror(-ret));
out:
	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(tps);
	return ret;
}

/* ---- events, buffers -------------------------------------------------- */

static bool is_tracepoint(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_TRACEPOINT;
}

/*
 * --pin-readers on a small ring (at most PIN_WM_RING bytes: -m 1 to 4 with
 * 4 KiB pages), samples of a fixed size (no callchain, stack, RAW or READ):
 * the kernel wakes the reader when the ring leaves room for an eighth of
 * it or 16 samples, whichever is more, not at half.  There a reader's
 * wakeups are most of what the recording costs: cpu-clock -F 100000 -a
 * -m 1 in a 6.1 TCG guest woke the readers 4700-7600 times a run, some
 * 0.6 ms of CPU each (a switch between processes costs the emulator its
 * TLB); woken at three quarters or seven eighths they woke half as often
 * and lost next to nothing more (0.39% of the samples at half, 0.44-0.62%;
 * Documentation/record.md, "Fewer wakeups at -m 1").  The readers are
 * SCHED_FIFO (where allowed; not with --reader-nice) and run as soon as
 * woken.  Bigger rings (a few hundred wakeups a run at -m 16) and other
 * samples keep the kernel's half.  The main thread's watch takes a ring
 * its reader left past the same point (stage.wake).
 */
#define PIN_WM_RING	(16u << 10)
#define PIN_WM_FIXED	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER)
static void pin_watermark(const struct record_opts *o, struct perf_event_attr *a)
{
	uint64_t ring = (uint64_t)o->pages * (uint64_t)sysconf(_SC_PAGESIZE), room;
	uint64_t sample = 8 * (1 + __builtin_popcountll(a->sample_type));

	if (!o->pin_readers || o->reader_nice_set || ring > PIN_WM_RING ||
	    (a->sample_type & ~PIN_WM_FIXED))
		return;
	room = ring / 8 > 16 * sample ? ring / 8 : 16 * sample;
	if (ring - room <= ring / 2)
		return;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(ring - room);
}

/*
 * The attr of every event: the sampling setup of perf record
 * (evsel__config()): IP, TID, TIME, PERIOD (+CPU CPU-wide, +CALLCHAIN with
 * -g, +IDENTIFIER with several events), ids, sample_id_all; the first
 * event tracks COMM/MMAP2/FORK/EXIT, on the pevt backend too (the
 * module's sideband) unless r->stock_tracking asks for a separate stock
 * tracking event (a module that cannot write MMAP records).
 */
static int setup_events(struct record *r)
{
	const struct record_opts *o = r->o;
	bool task = r->threads[0] != -1;
	int n = pevt_events__nr(r->evs), extra, hide, i, k;
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		      PERF_SAMPLE_PERIOD;

	/*
	 * pevt buffers cannot take stock records: track with a stock event.
	 * The stock backend CPU-wide (-a, -C) tracks with a dummy event too,
	 * as perf record does there, in rings of its own: a sideband record
	 * is written in task context, and a sample that interrupts it in
	 * the same stock ring can leave the kernel's wakeup point ahead of
	 * head, after which every record wakes the reader (the readers'
	 * timed waits, record_stage.c; Documentation/record.md, "A wakeup
	 * for every record").  Rings written only from interrupt context
	 * never get there.  (Not --overwrite: its rings wake no one.)
	 *
	 * With one event of the user's, that dummy is left out of the file
	 * (hidden): opened with the event's sample_type, no IDENTIFIER, its
	 * records carry the same sample_id trailer as the event's own would,
	 * and the file is the one a self-tracking event makes (the event's
	 * attr there has the dummy's tracking bits; begin_file()).  An
	 * IDENTIFIER would make every sample 8 bytes longer, and the kernel
	 * wake the reader of a 1-page ring a fifth more often.
	 */
	extra = (o->backend == PEVT_BACKEND_DEVICE && r->stock_tracking) ||
		(o->backend == PEVT_BACKEND_PERF && !task && !o->overwrite &&
		 !getenv("PEVT_RECORD_SHARED_TRACKING"));
	hide = extra && o->backend == PEVT_BACKEND_PERF && n == 1;
	r->nr_events = n + extra;
	r->events = calloc(r->nr_events, sizeof(*r->events));
	if (!r->events)
		return -ENOMEM;
	if (!task)
		st |= PERF_SAMPLE_CPU;
	if (o->call_graph != CG_NONE)
		st |= PERF_SAMPLE_CALLCHAIN;
	if (o->call_graph == CG_DWARF)
		st |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	if (r->nr_events - hide > 1)
		st |= PERF_SAMPLE_IDENTIFIER;
	r->sample_type = st;
	for (i = 0; i < r->nr_events; i++) {
		struct rec_event *e = &r->events[i];
		struct perf_event_attr *a = &e->attr;

		if (i < n) {
			const struct pevt_event_desc *d = pevt_events__get(r->evs, i);

			*a = d->attr;
			e->name = d->name;
			e->backend = o->backend;
			if (o->period) {
				a->sample_period = o->period;
			} else if (o->freq || !is_tracepoint(a)) {
				a->freq = 1;
				a->sample_freq = o->freq ? o->freq : RECORD_DEFAULT_FREQ;
			} else {
				a->sample_period = 1;
			}
		} else {
			a->type = PERF_TYPE_SOFTWARE;
			a->config = PERF_COUNT_SW_DUMMY;
			a->exclude_kernel = 1;
			e->name = "dummy:u";
			e->backend = PEVT_BACKEND_PERF;
			e->own_ring = true;
			e->hidden = hide;
		}
		a->size = sizeof(*a);
		/* RAW, READ (:S) come after the fields account() reads. */
		a->sample_type = st | (a->sample_type & PERF_SAMPLE_READ);
		/* LOST: the kernel's drop count, for LOST_SAMPLES at the end */
		a->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
		a->disabled = 1;
		a->sample_id_all = 1;
		/*
		 * Tests: a wakeup for every record, as a stock kernel's
		 * buffer gives once its wakeup point stood ahead of head
		 * (the readers' timed mode, record_stage.c).
		 */
		a->wakeup_events = getenv("PEVT_RECORD_WAKEUP_EVERY") ? 1 : 0;
		/* perf record: a tracepoint's fields, on both backends. */
		a->sample_type |= is_tracepoint(a) ? PERF_SAMPLE_RAW : 0;
		/*
		 * --call-graph dwarf (__evsel__config_callchain()): the kernel
		 * part of the chain, the user registers and stack for the
		 * reader to unwind.
		 */
		if (o->call_graph == CG_DWARF) {
			a->sample_regs_user = PEVT_REGS_USER_X86_64;
			a->sample_stack_user = o->dump_size;
			a->exclude_callchain_user = 1;
		}
		/*
		 * The module's inherit and enable_on_exec (Documentation/
		 * inherit.md), as perf record's: the workload's events start
		 * at its exec.  Until 2026-11-29 the module enabled them in the
		 * exec's task work, after the exec's COMM and the program's
		 * MMAP2s, so pevt-backend events were enabled just before the
		 * exec instead (and sampled pevt record's own child until it).
		 */
		a->inherit = task && !o->no_inherit;
		a->enable_on_exec = !!o->argv && task;
		if (i == (extra ? n : 0)) {
			a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 1;
			/*
			 * dwarf: the data mappings too, as perf record's
			 * sample_address does: the unwinder reads
			 * .eh_frame_hdr/.eh_frame, which -z separate-code
			 * puts in a read-only segment of its own.
			 */
			a->mmap_data = o->call_graph == CG_DWARF;
		}
		if (o->overwrite)
			snapshot_config_attr(a, e->backend);
		/* after every sample_type bit; not sideband, whose sizes vary */
		if (!a->wakeup_events && !e->own_ring)
			pin_watermark(o, a);
		e->evsels = calloc(r->nr_cpus * r->nr_threads, sizeof(*e->evsels));
		e->ids = calloc(r->nr_cpus * r->nr_threads, sizeof(*e->ids));
		if (!e->evsels || !e->ids)
			return -ENOMEM;
	}
	/* Sample layout: IDENTIFIER, IP, TID, TIME, ... (perf_output_sample()). */
	k = !!(st & PERF_SAMPLE_IDENTIFIER);
	r->ip_idx = k++;
	r->tid_idx = k++;
	r->time_idx = k;
	r->id_hdr_size = 8 * (!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
			      !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
			      !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
	return 0;
}

static struct rec_buf *buf_of(struct record *r, int cpu, const struct rec_event *e)
{
	int i;

	for (i = 0; i < r->nr_bufs; i++)
		if (r->bufs[i].cpu == cpu && r->bufs[i].own_ring == e->own_ring &&
		    pevt_evsel__backend(r->bufs[i].owner) == e->backend)
			return &r->bufs[i];
	return NULL;
}

/*
 * Open every event on every (cpu, thread), map one buffer per CPU and
 * backend, SET_OUTPUT the rest into it.  Returns 0 or -errno with a
 * message printed.
 */
static int open_events(struct record *r)
{
	int i, c, t, ret;

	r->bufs = calloc(r->nr_cpus * 2, sizeof(*r->bufs));
	if (!r->bufs)
		return -ENOMEM;
	for (i = 0; i < r->nr_events; i++) {
		struct rec_event *e = &r->events[i];
		LIBPEVT_OPTS(pevt_open_opts, oo, .backend = e->backend);

		for (c = 0; c < r->nr_cpus; c++) {
			for (t = 0; t < r->nr_threads; t++) {
				int k = c * r->nr_threads + t;
				struct pevt_evsel *ev;
				struct rec_buf *b;
retry:
				ev = pevt_evsel__new(&e->attr);
				if (!ev)
					return -ENOMEM;
				ret = pevt_evsel__open(ev, r->threads[t], r->cpus[c], NULL, &oo);
				if ((ret == -EACCES || ret == -EPERM) && !e->attr.exclude_kernel &&
				    c == 0 && t == 0) {
					/* perf_event_paranoid >= 2: user space only, as perf does. */
					pevt_evsel__delete(ev);
					e->attr.exclude_kernel = 1;
					e->attr.exclude_hv = 1;
					goto retry;
				}
				if (ret == -EINVAL && (e->attr.read_format & PERF_FORMAT_LOST)) {
					/* before 6.0: no PERF_FORMAT_LOST (perf falls back too) */
					pevt_evsel__delete(ev);
					e->attr.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
					goto retry;
				}
				if (ret == -ESRCH && r->threads[t] != -1 && !r->o->argv) {
					/* The thread exited since we listed it. */
					pevt_evsel__delete(ev);
					e->ids[k] = 0;
					continue;
				}
				if ((ret == -EOPNOTSUPP || ret == -ENOENT) && e->attr.mmap &&
				    e->backend == PEVT_BACKEND_DEVICE) {
					/* No MMAP records from this module (no kprobes, or mmap_records=N): the caller falls back. */
					pevt_evsel__delete(ev);
					return -EPROTONOSUPPORT;
				}
				if (ret < 0 && r->o->backend_auto && e->backend == PEVT_BACKEND_DEVICE) {
					/* No --backend: the caller tries the stock one. */
					pevt_evsel__delete(ev);
					r->auto_fail = e->name;
					return ret;
				}
				if (ret < 0) {
					pevt_evsel__delete(ev);
					p_err("cannot open event '%s' on CPU %d%s with backend %s: %s",
					      e->name, r->cpus[c], r->threads[t] == -1 ? "" : " for a task",
					      e->backend == PEVT_BACKEND_DEVICE ? "pevt" : "stock",
					      strerror(-ret));
					return ret;
				}
				e->evsels[k] = ev;
				pevt_evsel__id(ev, &e->ids[k]);
				b = buf_of(r, r->cpus[c], e);
				if (b) {
					ret = pevt_evsel__set_output(ev, b->owner);
					if (ret) {
						p_err("cannot redirect event '%s' into the CPU %d buffer: %s",
						      e->name, r->cpus[c], strerror(-ret));
						return ret;
					}
					continue;
				}
				{
					/* --overwrite: read-only, the reader from the attr. */
					LIBPEVT_OPTS(pevt_mmap_opts, mo, .writable = !r->o->overwrite,
						     .mode = r->o->overwrite ? PEVT_READ_AUTO :
							     PEVT_READ_FORWARD);

					b = &r->bufs[r->nr_bufs];
					b->map = pevt_evsel__mmap(ev, r->o->pages, &mo);
					if (!b->map) {
						ret = -errno;
						p_err("cannot map %lu pages for CPU %d: %s%s",
						      r->o->pages, r->cpus[c], strerror(errno),
						      errno == EPERM ? " (perf_event_mlock_kb? try a smaller -m)" : "");
						return ret;
					}
					b->cpu = r->cpus[c];
					b->own_ring = e->own_ring;
					b->owner = ev;
					r->nr_bufs++;
				}
			}
		}
		/* Ids of threads that vanished are left out. */
		for (c = 0, t = 0; c < r->nr_cpus * r->nr_threads; c++)
			if (e->evsels[c])
				e->ids[t++] = e->ids[c];
		e->nr_ids = t;
	}
	return 0;
}

/* @fn on every fd; @exec_too false skips the enable_on_exec events. */
static void for_each_evsel(struct record *r, int (*fn)(struct pevt_evsel *),
			   bool exec_too)
{
	int i, k;

	for (i = 0; i < r->nr_events; i++) {
		if (!exec_too && r->events[i].attr.enable_on_exec)
			continue;
		for (k = 0; k < r->nr_cpus * r->nr_threads; k++)
			if (r->events[i].evsels[k])
				fn(r->events[i].evsels[k]);
	}
}

/* Does any event sample before the workload's exec (not enable_on_exec)? */
static bool samples_before_exec(const struct record *r)
{
	int i;

	for (i = 0; i < r->nr_events; i++)
		if (!r->events[i].attr.enable_on_exec)
			return true;
	return false;
}

static void close_events(struct record *r)
{
	int i, k;

	for (i = r->nr_events - 1; i >= 0; i--) {
		/* Redirected fds first: the mapped one goes last. */
		for (k = r->nr_cpus * r->nr_threads - 1; k >= 0; k--)
			if (r->events[i].evsels && r->events[i].evsels[k])
				pevt_evsel__delete(r->events[i].evsels[k]);
		free(r->events[i].evsels);
		free(r->events[i].ids);
		free(r->events[i].lost_written);
	}
	free(r->events);
	free(r->bufs);
}

/* Closed, and ready for setup_and_open_events() again. */
static void reset_events(struct record *r)
{
	close_events(r);
	r->events = NULL;
	r->bufs = NULL;
	r->nr_events = r->nr_bufs = 0;
}

static int setup_and_open_events(struct record *r)
{
	int ret = setup_events(r);

	return ret ? ret : open_events(r);
}

/* ---- targets ---------------------------------------------------------- */

static int online_cpus(int **cpus)
{
	char buf[256] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return pevt_cpu_list__parse(buf, cpus);
}

/* -p: every thread of each process; -t: each thread, which must be alive. */
static int id_list(const char *s, const char *opt, int **v, int *n, bool threads_of)
{
	int *ids = NULL, nr = 0, first = *n, i, ret;

	if (!threads_of) {
		ret = id_list_parse(s, 1, opt, v, n);
		for (i = first; i < *n && !ret; i++)
			if (!pid_alive((*v)[i])) {
				p_err("no such thread: %d", (*v)[i]);
				ret = -ESRCH;
			}
		return ret;
	}
	ret = id_list_parse(s, 1, opt, &ids, &nr);
	for (i = 0; i < nr && !ret; i++) {
		ret = proc_add_threads(ids[i], v, n);
		if (ret)
			p_err("no such process: %d", ids[i]);
	}
	free(ids);
	return ret;
}

static int setup_target(struct record *r)
{
	const struct record_opts *o = r->o;
	int ret;

	if (o->cpu_list) {
		ret = pevt_cpu_list__parse(o->cpu_list, &r->cpus);
		if (ret <= 0) {
			p_err("invalid CPU list '%s'", o->cpu_list);
			return -EINVAL;
		}
	} else {
		ret = online_cpus(&r->cpus);
		if (ret <= 0) {
			p_err("cannot read the online CPUs");
			return -EINVAL;
		}
	}
	r->nr_cpus = ret;
	if (o->system_wide || (o->cpu_list && !o->pid_list && !o->tid_list)) {
		r->threads = malloc(sizeof(int));
		if (!r->threads)
			return -ENOMEM;
		r->threads[0] = -1;
		r->nr_threads = 1;
		return 0;
	}
	ret = 0;
	if (o->pid_list)
		ret = id_list(o->pid_list, "--pid", &r->threads, &r->nr_threads, true);
	if (!ret && o->tid_list)
		ret = id_list(o->tid_list, "--tid", &r->threads, &r->nr_threads, false);
	return ret;
}

/* ---- main loop -------------------------------------------------------- */

static void record_progress(struct record *r, bool final)
{
	/* --switch-output: the last file is in bytes_done once dumped */
	double mb = (r->bytes_done + (final && r->o->sw.on ? 0 : out_bytes(r))) /
		    1048576.0;

	if (r->o->quiet)
		return;
	if (!final) {
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\r[ pevt record: %.3f MB, %" PRIu64 " samples, %"
				PRIu64 " lost ]", mb, r->samples, r->lost);
		return;
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
	if (r->zcs && r->comp_bytes)
		fprintf(stderr, "[ pevt record: Compressed %.3f MB to %.3f MB, ratio is %.3f ]\n",
			r->raw_bytes / 1048576.0, r->comp_bytes / 1048576.0,
			(double)r->raw_bytes / r->comp_bytes);
	if (strcmp(drain__describe(r->drain), "write"))
		fprintf(stderr, "[ pevt record: drain %s ]\n", drain__describe(r->drain));
	/* The default drain says nothing unless its readers could not be SCHED_FIFO. */
	if (r->stages && r->readers_rt && !r->o->pin_default)
		fprintf(stderr, "[ pevt record: readers SCHED_FIFO %d, %s ]\n", r->readers_rt,
			r->stage_set.no_watch ? "alone on their rings" : "watched by the main thread");
	else if (r->stages && !r->readers_rt)
		fprintf(stderr, "[ pevt record: readers at nice %d, %s ]\n", r->readers_nice,
			r->stage_set.help ? "the main thread takes their rings too" :
			r->stage_set.no_watch ? "alone on their rings" :
						"watched by the main thread");
	if (!r->o->sw.on) {
		fprintf(stderr, "[ pevt record: Captured and wrote %.3f MB %s (%" PRIu64
			" samples, %" PRIu64 " lost) ]\n", mb, r->path, r->samples, lost_now(r));
		return;
	}
	fprintf(stderr, "[ pevt record: Captured and wrote %.3f MB %s.<timestamp> (%" PRIu64
		" samples, %" PRIu64 " lost) in %d file%s ]\n", mb, r->path, r->samples, lost_now(r),
		r->nr_files, r->nr_files == 1 ? "" : "s");
}

/*
 * Signals come through a signalfd in the poll set (they stay blocked):
 * SIGINT/SIGTERM end the recording, SIGCHLD may mean the workload ended,
 * SIGUSR2 asks --switch-output=signal for the next file.
 */
static bool take_signals(struct record *r, int sfd)
{
	struct signalfd_siginfo si;
	bool chld = false;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			chld = true;
		} else if (si.ssi_signo == SIGUSR2) {
			r->switch_due |= r->o->sw.signal;
		} else {
			r->signr = si.ssi_signo;
			r->done = true;
		}
	}
	return chld;
}

/*
 * The workload's exec: 0 while it is pending (or done), 1 when it failed
 * (said, child reaped, r->exec_failed = 127).  @err_fd gives the exec's
 * errno, or EOF when it succeeded (close on exec); a blocking @err_fd
 * waits for either.
 */
static int exec_check(struct record *r, int err_fd)
{
	ssize_t n;
	int e;

	do
		n = read(err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return 0;
	r->exec_fd = -1;
	if (n != sizeof(e))
		return 0;
	waitpid(r->child, NULL, 0);
	r->child = 0;
	r->exec_failed = 127;
	p_err("cannot run '%s': %s", r->o->argv[0], strerror(e));
	return 1;
}

static int switch_output(struct record *r, bool at_exit);

/*
 * --switch-output-event: perf 6.1 opens the event in a side-band evlist
 * (evlist__start_sb_thread(): the record's target, so CPU-wide on every
 * CPU for a workload or -a, the threads for -p/-t; a sample per hit,
 * woken per sample) whose thread sends SIGUSR2 to the main thread for
 * every sample.  Here the buffers are read in the record loop instead,
 * and polled with the others: every pass that finds samples asks for one
 * switch, as the SIGUSR2s of hits close together make one.  Always a
 * stock event (also with --backend pevt): it only triggers, nothing of
 * it is written.
 */
static int open_switch_event(struct record *r)
{
	const char *name = r->o->sw_event;
	struct pevt_parse_error perr;
	struct pevt_events *evs = pevt_events__parse(name, NULL, &perr);
	const struct pevt_event_desc *d;
	struct perf_event_attr attr;
	bool per_thread = r->o->pid_list || r->o->tid_list;
	int n, i, ret;

	if (!evs) {
		report_parse_error(name, &perr);
		return -EINVAL;
	}
	if (pevt_events__nr(evs) != 1) {
		p_err("--switch-output-event takes one event, not '%s'", name);
		pevt_events__delete(evs);
		return -EINVAL;
	}
	d = pevt_events__get(evs, 0);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = d->attr.type;
	attr.config = d->attr.config;
	attr.config1 = d->attr.config1;
	attr.config2 = d->attr.config2;
	attr.exclude_user = d->attr.exclude_user;
	attr.exclude_kernel = d->attr.exclude_kernel;
	attr.exclude_hv = d->attr.exclude_hv;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TIME;
	attr.wakeup_events = 1;
	pevt_events__delete(evs);

	n = per_thread ? r->nr_threads : r->nr_cpus;
	r->sb = calloc(n, sizeof(*r->sb));
	if (!r->sb)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct pevt_mmap_opts mo = { .sz = sizeof(mo), .writable = true };
		int pid = per_thread ? r->threads[i] : -1, cpu = per_thread ? -1 : r->cpus[i];

		r->sb[i] = pevt_evsel__new(&attr);
		if (!r->sb[i])
			return -ENOMEM;
		r->nr_sb = i + 1;
		ret = pevt_evsel__open(r->sb[i], pid, cpu, NULL, NULL);
		if (ret) {
			p_err("--switch-output-event %s: cannot open it on %s %d: %s", name,
			      per_thread ? "thread" : "CPU", per_thread ? pid : cpu, strerror(-ret));
			return ret;
		}
		if (!pevt_evsel__mmap(r->sb[i], 1, &mo)) {
			ret = -errno;
			p_err("--switch-output-event %s: cannot map its buffer: %s", name,
			      strerror(errno));
			return ret ? ret : -ENOMEM;
		}
	}
	return 0;
}

static void close_switch_event(struct record *r)
{
	int i;

	for (i = 0; i < r->nr_sb; i++)
		pevt_evsel__delete(r->sb[i]);
	free(r->sb);
	r->sb = NULL;
	r->nr_sb = 0;
}

/* --switch-output-event: its samples since the last look ask for a switch. */
static void take_switch_event(struct record *r)
{
	uint64_t hits = 0;
	int i;

	for (i = 0; i < r->nr_sb; i++) {
		struct pevt_mmap *m = pevt_evsel__map(r->sb[i]);
		struct perf_event_header *h;

		if (pevt_mmap__read_head(m) == pevt_mmap__control(m)->data_tail ||
		    pevt_mmap__read_init(m))
			continue;
		while ((h = pevt_mmap__read_event(m))) {
			/* LOST: samples too, the buffer was full of them */
			hits += h->type == PERF_RECORD_SAMPLE || h->type == PERF_RECORD_LOST;
			pevt_mmap__consume(m);
		}
		pevt_mmap__read_done(m);
	}
	if (hits) {
		r->sb_hits += hits;
		r->switch_due = true;
	}
}

/* --switch-output: a signal came, the file is big enough or it is time. */
static bool switch_is_due(struct record *r)
{
	const struct snap_switch *sw = &r->o->sw;

	if (!sw->on)
		return false;
	if (r->nr_sb)
		take_switch_event(r);
	if (sw->size && out_bytes(r) >= sw->size)
		r->switch_due = true;
	if (sw->secs && now_ns() >= r->next_switch)
		r->switch_due = true;
	return r->switch_due;
}

static int record_loop(struct record *r, int sfd)
{
	int nfd = r->nr_bufs + 3 + r->nr_sb;
	struct pollfd *pfd = calloc(nfd, sizeof(*pfd));
	uint64_t next = now_ns() + PROGRESS_NS, watch;
	int i, status, nr_open = r->nr_bufs;
	struct timespec ts;
	int64_t ret = 0;

	if (!pfd)
		return -ENOMEM;
	/*
	 * --pin-readers: the readers poll the buffers, and wake this loop
	 * when they have staged enough or their buffer hung up; without -r
	 * the loop wakes on the buffers too, to help (drain_staged()).
	 */
	for (i = 0; i < r->nr_bufs; i++) {
		pfd[i].fd = r->stages && !r->stage_set.help ? -1 : pevt_evsel__fd(r->bufs[i].owner);
		pfd[i].events = POLLIN;
	}
	pfd[nfd - 1].fd = r->stages ? stage_set__fd(&r->stage_set) : -1;
	pfd[nfd - 1].events = POLLIN;
	pfd[r->nr_bufs].fd = sfd;
	pfd[r->nr_bufs].events = POLLIN;
	/* Completions of the asynchronous drains. */
	pfd[r->nr_bufs + 1].fd = drain__fd(r->drain);
	pfd[r->nr_bufs + 1].events = POLLIN;
	/* --switch-output-event's buffers: a sample wakes the loop */
	for (i = 0; i < r->nr_sb; i++) {
		pfd[r->nr_bufs + 2 + i].fd = pevt_evsel__fd(r->sb[i]);
		pfd[r->nr_bufs + 2 + i].events = POLLIN;
	}
	while (!r->done) {
		/* --pin-readers: a ring its reader left half full is taken here */
		watch = r->stages ? stage_set__watch(&r->stage_set, now_ns()) : STAGE_WATCH_IDLE_NS;
		ret = pass(r, false);
		if (ret < 0)
			break;
		/* before the child is reaped: a failed exec writes its errno, then exits */
		if (r->exec_fd >= 0 && exec_check(r, r->exec_fd))
			break;
		if (r->child > 0 && waitpid(r->child, &status, WNOHANG) == r->child) {
			r->child = -status - 1;		/* reaped; keep the status */
			break;
		}
		if (r->stages)
			nr_open = stage_set__running(&r->stage_set);
		if (!r->o->argv && r->threads[0] != -1 && !nr_open)
			break;	/* -p/-t: every task is gone */
		if (now_ns() >= next) {
			record_progress(r, false);
			next = now_ns() + PROGRESS_NS;
		}
		/* Busy passes do not poll: look at SIGUSR2 (and SIGINT) every 10 ms. */
		if (ret && r->o->sw.signal && now_ns() >= r->next_sig_check) {
			take_signals(r, sfd);
			r->next_sig_check = now_ns() + 10000000ull;
		}
		if (switch_is_due(r)) {
			ret = switch_output(r, false);
			if (ret < 0)
				break;
			/* A new drain: its completions come on another fd. */
			pfd[r->nr_bufs + 1].fd = drain__fd(r->drain);
			continue;
		}
		if (ret)
			continue;
		/* Nothing moved: sleep until a buffer wakes us or a signal comes. */
		if (r->stages && !stage_set__sleep_begin(&r->stage_set))
			continue;
		ts.tv_sec = watch / 1000000000ull;
		ts.tv_nsec = watch % 1000000000ull;
		i = ppoll(pfd, nfd, &ts, NULL);
		if (r->stages)
			stage_set__sleep_end(&r->stage_set, i == 0);
		if (i < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		ret = drain__reap(r->drain, false);
		if (ret < 0)
			break;
		for (i = 0; i < r->nr_bufs; i++) {
			/* Hung up: its tasks are gone; drained by every pass anyway. */
			if (pfd[i].fd >= 0 && (pfd[i].revents & (POLLHUP | POLLERR))) {
				pfd[i].fd = -1;
				nr_open--;
			}
		}
		if (pfd[r->nr_bufs].revents & POLLIN)
			take_signals(r, sfd);
	}
	free(pfd);
	return ret < 0 ? (int)ret : 0;
}

static int parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long n = strtoull(s, &end, 0);

	switch (*end) {
	case 'K': case 'k': n <<= 10; end++; break;
	case 'M': case 'm': n <<= 20; end++; break;
	case 'G': case 'g': n <<= 30; end++; break;
	}
	if (end == s || *end)
		return -EINVAL;
	*v = n;
	return 0;
}

/*
 * --call-graph fp|dwarf[,SIZE] as perf record parses it
 * (parse_callchain_record()): SIZE rounded up to 8 bytes, at most 65528,
 * 8192 by default.
 */
static int parse_call_graph(const char *arg, struct record_opts *o)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	uint64_t size = 8192;

	if (len == 2 && !strncmp(arg, "fp", 2) && !comma) {
		o->call_graph = CG_FP;
		return 0;
	}
	if (len != 5 || strncmp(arg, "dwarf", 5)) {
		p_err("--call-graph: unknown mode '%.*s' (fp or dwarf)", (int)len, arg);
		return -EINVAL;
	}
	if (comma && (parse_size(comma + 1, &size) || !size ||
		      (size = (size + 7) & ~7ULL) > (65535 & ~7))) {
		p_err("--call-graph: incorrect stack dump size (max %d): '%s'",
		      65535 & ~7, comma + 1);
		return -EINVAL;
	}
	o->call_graph = CG_DWARF;
	o->dump_size = size;
	return 0;
}

static int parse_opts(int argc, char **argv, struct record_opts *o)
{
	static const struct option opts[] = {
		{ "event",		required_argument,	NULL, 'e' },
		{ "count",		required_argument,	NULL, 'c' },
		{ "freq",		required_argument,	NULL, 'F' },
		{ "call-graph",		required_argument,	NULL, 'G' },
		{ "all-cpus",		no_argument,		NULL, 'a' },
		{ "cpu",		required_argument,	NULL, 'C' },
		{ "pid",		required_argument,	NULL, 'p' },
		{ "tid",		required_argument,	NULL, 't' },
		{ "output",		required_argument,	NULL, 'o' },
		{ "mmap-pages",		required_argument,	NULL, 'm' },
		{ "mmap-flush",		required_argument,	NULL, 'M' },
		{ "backend",		required_argument,	NULL, 'b' },
		{ "no-inherit",		no_argument,		NULL, 'i' },
		{ "no-buildid",		no_argument,		NULL, 'B' },
		{ "compression-level",	optional_argument,	NULL, 'z' },
		{ "drain",		required_argument,	NULL, 'D' },
		{ "pin-readers",	no_argument,		NULL, 'P' },
		{ "realtime",		required_argument,	NULL, 'r' },
		{ "reader-nice",	required_argument,	NULL, 'n' },
		{ "quiet",		no_argument,		NULL, 'q' },
		{ "overwrite",		no_argument,		NULL, 'O' },
		{ "switch-output",	optional_argument,	NULL, 'S' },
		{ "switch-max-files",	required_argument,	NULL, 'N' },
		{ "switch-output-event", required_argument,	NULL, 'W' },
		{ "no-index",		no_argument,		NULL, 'X' },
		{ "index-slice-size",	required_argument,	NULL, 'I' },
		{ "help",		no_argument,		NULL, 'h' },
		{ 0 }
	};
	uint64_t v;
	int opt;

	argc++;
	argv--;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "+e:c:F:gaC:p:t:o:m:r:b:iBz::qh", opts, NULL)) >= 0) {
		switch (opt) {
		case 'e':
			if (event_list_append(&o->events, optarg))
				return -ENOMEM;
			break;
		case 'c':
			if (parse_size(optarg, &o->period) || !o->period) {
				p_err("invalid count '%s'", optarg);
				return -EINVAL;
			}
			break;
		case 'F':
			if (parse_size(optarg, &o->freq) || !o->freq) {
				p_err("invalid frequency '%s'", optarg);
				return -EINVAL;
			}
			break;
		case 'g':
			o->call_graph = CG_FP;
			break;
		case 'G':
			if (parse_call_graph(optarg, o))
				return -EINVAL;
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
		case 't':
			o->tid_list = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'm':
			if (parse_size(optarg, &v) || !v || (v & (v - 1))) {
				p_err("-m needs a power of two number of pages, not '%s'", optarg);
				return -EINVAL;
			}
			o->pages = v;
			break;
		case 'M':
			if (parse_size(optarg, &o->mmap_flush)) {
				p_err("invalid --mmap-flush '%s'", optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			o->backend_auto = false;
			if (!strcmp(optarg, "stock") || !strcmp(optarg, "perf")) {
				o->backend = PEVT_BACKEND_PERF;
			} else if (!strcmp(optarg, "pevt") || !strcmp(optarg, "device")) {
				o->backend = PEVT_BACKEND_DEVICE;
			} else {
				p_err("unknown backend '%s' (stock or pevt)", optarg);
				return -EINVAL;
			}
			break;
		case 'D':
			o->drain_set = true;
			if (!strcmp(optarg, "pin")) {
				/* --pin-readers: their copies go out with write's pwritev() */
				o->pin_readers = true;
				o->drain = DRAIN_WRITE;
				break;
			}
			if (drain_kind__parse(optarg, &o->drain)) {
				p_err("unknown drain '%s' (pin, write, uring or threads)", optarg);
				return -EINVAL;
			}
			break;
		case 'P':
			o->drain_set = true;
			o->pin_readers = true;
			break;
		case 'r':
			if (parse_size(optarg, &v) || v < 1 ||
			    v > (uint64_t)sched_get_priority_max(SCHED_FIFO)) {
				p_err("-r needs a SCHED_FIFO priority 1..%d, not '%s'",
				      sched_get_priority_max(SCHED_FIFO), optarg);
				return -EINVAL;
			}
			o->rt_prio = v;
			break;
		case 'n': {
			char *end;
			long n;

			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < -20 || n > 19) {
				p_err("--reader-nice needs a nice value -20..19, not '%s'", optarg);
				return -EINVAL;
			}
			o->reader_nice = n;
			o->reader_nice_set = true;
			break;
		}
		case 'i':
			o->no_inherit = true;
			break;
		case 'B':
			o->no_buildid = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'z':
			o->comp_level = 1;	/* perf's default level */
			if (optarg && (parse_size(optarg, &v) || v < 1 || v > 22)) {
				p_err("-z needs a zstd level 1..22, not '%s'", optarg);
				return -EINVAL;
			}
			if (optarg)
				o->comp_level = v;
			break;
		case 'O':
			o->overwrite = true;
			break;
		case 'X':
			o->no_index = true;
			break;
		case 'I':
			/* the bounds of pevt data index --slice-size */
			if (parse_size(optarg, &o->index_slice) || o->index_slice < 4096 ||
			    o->index_slice > (1ull << 40)) {
				p_err("bad --index-slice-size '%s' (bytes, >= 4096; k or M suffix)",
				      optarg);
				return -EINVAL;
			}
			break;
		case 'S':
			if (snapshot_parse_switch(optarg, &o->sw)) {
				p_err("--switch-output takes signal, SIZE[BKMG] or TIME[smhd], not '%s'",
				      optarg);
				return -EINVAL;
			}
			break;
		case 'W':
			o->sw_event = optarg;
			break;
		case 'N': {
			char *end;
			long n;

			errno = 0;
			n = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || n < 1 || n > INT_MAX) {
				p_err("--switch-max-files takes a number of files > 0, not '%s'",
				      optarg);
				return -EINVAL;
			}
			o->max_files = n;
			break;
		}
		case 'h':
			do_record_help();
			exit(0);
		default:
			do_record_help();
			return -EINVAL;
		}
	}
	if (o->period && o->freq) {
		p_err("-c and -F exclude each other");
		return -EINVAL;
	}
	if (optind < argc) {
		o->argv = argv + optind;
		o->argc = argc - optind;
	}
	if (!o->argv && !o->system_wide && !o->cpu_list && !o->pid_list && !o->tid_list) {
		p_err("nothing to record: give a COMMAND, -a, -C, -p or -t");
		return -EINVAL;
	}
	if (o->argv && (o->pid_list || o->tid_list)) {
		p_err("a COMMAND cannot be combined with -p or -t");
		return -EINVAL;
	}
	/* perf's switch_output_setup(): the event implies --switch-output=signal */
	if (o->sw_event && !o->sw.on)
		snapshot_parse_switch("signal", &o->sw);
	o->sw.max_files = o->max_files;		/* snapshot_parse_switch() clears it */
	if (o->sw.max_files && !o->sw.on) {
		p_err("--switch-max-files needs --switch-output");
		return -EINVAL;
	}
	/*
	 * -o -: with --overwrite every snapshot is appended to the stream,
	 * whatever triggers it; a streamed recording has no file to split
	 * (perf 6.1 takes --switch-output with -o -, prints "Dump
	 * -.<timestamp>" and ends at the first switch: "Failed to switch to
	 * new file", exit 234), and there are no files to keep.
	 */
	if (o->output && !strcmp(o->output, "-")) {
		if (o->sw.on && !o->overwrite) {
			p_err("%s splits the output file: not with pipe mode (-o -) "
			      "(with --overwrite, each snapshot is appended to the stream)",
			      o->sw_event ? "--switch-output-event" : "--switch-output");
			return -EINVAL;
		}
		if (o->sw.max_files) {
			p_err("--switch-max-files keeps the newest files: not with pipe mode (-o -)");
			return -EINVAL;
		}
	}
	/*
	 * The default drain: --pin-readers, except for --overwrite (its
	 * buffers are read at snapshots only).  Why: record.md, "The
	 * defaults".
	 */
	if (!o->drain_set && !o->overwrite) {
		o->pin_readers = true;
		o->pin_default = true;
	}
	if (o->reader_nice_set && !o->pin_readers && o->drain != DRAIN_THREADS) {
		p_err("--reader-nice sets the reader threads' nice: "
		      "only with --drain=pin (the default without --overwrite) or --drain=threads");
		return -EINVAL;
	}
	if (o->pin_readers && (o->overwrite || o->drain != DRAIN_WRITE)) {
		p_err("--drain=pin (--pin-readers) copies buffers out as they fill: "
		      "not with --overwrite or another --drain");
		return -EINVAL;
	}
	return 0;
}

static int open_output(struct record *r)
{
	const char *out = r->o->output ? r->o->output : "perf.data";

	if (!strcmp(out, "-")) {
		if (isatty(STDOUT_FILENO)) {
			p_err("pipe mode (-o -) writes binary data: redirect stdout");
			return -EINVAL;
		}
		r->out_fd = STDOUT_FILENO;
		r->path = "stdout";
		return 0;
	}
	r->path = out;
	r->out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->out_fd < 0) {
		p_err("cannot create %s: %s", out, strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * The file's attr of the one event whose tracking a hidden dummy does
 * (setup_events()): the dummy's tracking bits, as if the event tracked
 * itself, which is how its records read.
 */
static void tracking_bits(struct perf_event_attr *a, const struct perf_event_attr *dummy)
{
	a->mmap = dummy->mmap;
	a->mmap2 = dummy->mmap2;
	a->comm = dummy->comm;
	a->comm_exec = dummy->comm_exec;
	a->task = dummy->task;
	a->mmap_data = dummy->mmap_data;
}

/*
 * A new output file up to its first round: attrs, features known before
 * the data, the synthesized state of the targets, FINISHED_INIT.  The
 * drain is made for it (io_uring registers the file).  0, or -1 with a
 * message (write errors: pevt_data_writer__error(r->w)).
 */
static int begin_file(struct record *r)
{
	LIBPEVT_OPTS(pevt_data_writer_opts, wo);
	struct record_opts *o = r->o;
	int i;

	if (open_output(r))
		return -1;
	wo.pipe = r->out_fd == STDOUT_FILENO;
	r->w = pevt_data_writer__new(r->out_fd, &wo);
	if (!r->w)
		return -1;
	for (i = 0; i < r->nr_events; i++) {
		struct perf_event_attr a = r->events[i].attr;

		if (r->events[i].hidden)
			continue;
		if (!i && r->events[r->nr_events - 1].hidden)
			tracking_bits(&a, &r->events[r->nr_events - 1].attr);
		if (pevt_data_writer__add_attr(r->w, &a, r->events[i].name,
					       r->events[i].ids, r->events[i].nr_ids))
			return -1;
	}
	if (add_tracing_data(r))
		return -1;
	/* Readers size their decompression buffer from mmap_len. */
	if (r->zcs) {
		/*
		 * --switch-output: a file's zstd stream is its own, begun
		 * with a frame header (a reader decompresses a file from
		 * its first COMPRESSED record on), its ratio its own.
		 */
		if (ZSTD_isError(ZSTD_CCtx_reset(r->zcs, ZSTD_reset_session_only))) {
			p_err("zstd: cannot begin a new stream for %s", r->path);
			return -1;
		}
		r->file_raw = r->raw_bytes;
		r->file_comp = r->comp_bytes;
		pevt_data_writer__set_compressed(r->w, o->comp_level, 0, r->zunit);
	}
	if (setup_drain(r))
		return -1;
	/* CMDLINE as perf writes it: "record" and what follows. */
	if (pevt_data_writer__add_host_features(r->w, r->argc + 1, r->argv - 1) ||
	    pevt_data_writer__start(r->w))
		return -1;
	setup_index(r);
	if (synthesize(r) || (r->nr_files && synth_gone(r)) ||
	    pevt_data_writer__finished_init(r->w))
		return -1;
	return 0;
}

/*
 * The features that need the whole file (sample times, BUILD_ID of the
 * DSOs that had samples in it), the final header.
 */
static int finish_file(struct record *r)
{
	int i;

	if (r->out_fd != STDOUT_FILENO) {
		pevt_data_writer__set_sample_time(r->w, r->first_time, r->last_time);
		if (r->zcs) {
			uint64_t raw = r->raw_bytes - r->file_raw, comp = r->comp_bytes - r->file_comp;

			pevt_data_writer__set_compressed(r->w, r->o->comp_level,
				comp ? (raw + comp / 2) / comp : 0, r->zunit);
		}
		if (!r->o->no_buildid)
			add_build_ids(r);
	}
	if (pevt_data_writer__finish(r->w))
		return -1;
	/* The next file's features are its own. */
	r->first_time = r->last_time = 0;
	r->kernel_hit = false;
	for (i = 0; i < r->nr_dsos; i++)
		r->dsos[i].hit = false;
	hit_forget(r);
	return 0;
}

/*
 * perf's record__switch_output(): everything the buffers hold goes into
 * the current file (a last pass with its round, every write completed),
 * which is finished, closed and renamed PATH.<timestamp>; recording goes
 * on into a new PATH that starts with the attrs and the synthesized
 * state again, so that every file reads on its own.  The buffers keep
 * what the kernel writes meanwhile (data_tail stays where the last file
 * ended): the next file begins there, so every record is in one file.
 * @at_exit: the caller has finished the last file; only rename it.
 */
static int switch_output(struct record *r, bool at_exit)
{
	const char *delay;
	char name[PATH_MAX];
	int64_t n;

	r->switch_due = false;
	if (!at_exit) {
		n = pass(r, true);
		if (n < 0)
			return n;
		n = drain__reap(r->drain, true);
		if (n < 0)
			return n;
		if (write_lost_samples(r) || finish_file(r))
			return -EIO;
	}
	if (close(r->out_fd)) {
		p_err("closing %s: %s", r->path, strerror(errno));
		r->out_fd = -1;
		return -EIO;
	}
	r->out_fd = -1;
	switch_files__name(&r->files, name, sizeof(name));
	if (rename(r->path, name)) {
		p_err("cannot rename %s to %s: %s", r->path, name, strerror(errno));
		return -errno;
	}
	if (!r->o->quiet) {
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\r\033[K");
		fprintf(stderr, "[ pevt record: Dump %s (%" PRIu64 " samples, %" PRIu64 " lost) ]\n",
			name, r->samples - r->file_samples, lost_now(r) - r->file_lost);
	}
	switch_files__dumped(&r->files, name);
	r->nr_files++;
	r->bytes_done += pevt_data_writer__bytes(r->w);
	r->file_samples = r->samples;
	r->file_lost = lost_now(r);
	if (r->o->sw.secs)
		r->next_switch = now_ns() + r->o->sw.secs * 1000000000ull;	/* re-armed */
	if (at_exit)
		return 0;
	/*
	 * Tests: a slow switch, so that tasks exit between the last file's
	 * last pass and the next file's synthesis (synth_gone()).
	 */
	delay = getenv("PEVT_RECORD_SWITCH_DELAY_US");
	if (delay)
		usleep((useconds_t)strtoul(delay, NULL, 10));
	drain__delete(r->drain);
	r->drain = NULL;
	pevt_data__delete(r->idx_data);
	r->idx_data = NULL;
	pevt_data_writer__delete(r->w);
	r->w = NULL;
	if (begin_file(r))
		return -EIO;
	zq_seen(r);
	return 0;
}

static void free_record(struct record *r)
{
	int i;

	stop_readers(r);	/* an error after they started */
	for (i = 0; r->stages && i < r->nr_bufs; i++)
		stage__free(&r->stages[i]);
	free(r->stages);
	r->stages = NULL;
	for (i = 0; i < r->nr_tasks; i++)
		free(r->tasks[i].maps);
	free(r->tasks);
	for (i = 0; i < r->nr_dsos; i++)
		free(r->dsos[i].name);
	free(r->dsos);
	close_events(r);
	free(r->cpus);
	free(r->threads);
}

/*
 * Enable the events and let the workload go.  When events are already
 * sampling (-a/-C with a COMMAND: not enable_on_exec) the exec is not
 * waited for here: the buffers would fill, undrained, for as long as it
 * takes (100-150 ms in a TCG guest; bursts of 500-1900 samples lost at
 * 100 kHz -a -m 16); record_loop() checks r->exec_fd instead.  0, or the
 * exit code: 127 if the workload could not run, 1 for other errors.
 */
static int start_targets(struct record *r, int err_fd, bool wait_exec)
{
	if (!r->child) {
		for_each_evsel(r, pevt_evsel__enable, true);
		return 0;
	}
	/* enable_on_exec starts the others at the workload's exec. */
	for_each_evsel(r, pevt_evsel__enable, false);
	if (write(r->go_fd, "g", 1) != 1) {
		p_err("cannot start the workload: %s", strerror(errno));
		return 1;
	}
	close(r->go_fd);
	r->go_fd = -1;
	if (!wait_exec && !fcntl(err_fd, F_SETFL, O_NONBLOCK)) {
		r->exec_fd = err_fd;
		return 0;
	}
	return exec_check(r, err_fd) ? r->exec_failed : 0;
}

/* ---- --overwrite: the file parts of a snapshot (snapshot.c) ------------ */

struct rec_snap {
	struct record *r;
	int argc;
	char **argv;
	struct snapshot *s;		/* -o -: the snapshots are stamped */
	uint64_t oldest;		/* the snapshot's oldest sample */
	int pass;			/* snap_names_rec(): 0 execs, 1 names */
};

static int snap_prepare(void *ctx, struct pevt_data_writer *w)
{
	struct rec_snap *rs = ctx;

	rs->r->w = w;
	if (add_tracing_data(rs->r))
		return -EIO;
	/* CMDLINE as perf writes it: "record" and what follows. */
	return pevt_data_writer__add_host_features(w, rs->argc + 1, rs->argv - 1);
}

static struct rec_name_over *over_find(struct record *r, uint32_t tid)
{
	for (int i = 0; i < r->nr_over; i++)
		if (r->over[i].tid == tid)
			return &r->over[i];
	return NULL;
}

/*
 * Pass 0: the tasks whose exec (COMM_EXEC) is in the snapshot, after its
 * oldest sample.  Pass 1: their name before it, from a COMM of theirs in
 * the snapshot no newer than the oldest sample, or from their parent at
 * a FORK in the snapshot.
 */
static void snap_names_rec(void *ctx, const struct perf_event_header *h)
{
	struct rec_snap *rs = ctx;
	struct record *r = rs->r;
	const uint32_t *u = (const uint32_t *)(h + 1);
	/* a staged record is flat: no ring to wrap around */
	uint64_t t = sid_time(r, (const unsigned char *)h, UINT64_MAX, 0, h);
	struct rec_name_over *o;

	if (h->type == PERF_RECORD_COMM && h->size >= sizeof(*h) + 8 + r->id_hdr_size) {
		if (rs->pass == 0 && (h->misc & PERF_RECORD_MISC_COMM_EXEC) && t > rs->oldest) {
			struct rec_name_over *n;

			o = over_find(r, u[1]);
			if (o) {
				if (t < o->exec)
					o->exec = t;
				return;
			}
			n = realloc(r->over, (r->nr_over + 1) * sizeof(*n));
			if (!n)
				return;
			r->over = n;
			o = &r->over[r->nr_over++];
			memset(o, 0, sizeof(*o));
			o->tid = u[1];
			o->exec = t;
		} else if (rs->pass == 1 && t <= rs->oldest && (o = over_find(r, u[1]))) {
			snprintf(o->comm, sizeof(o->comm), "%.15s", (const char *)&u[2]);
		}
	} else if (h->type == PERF_RECORD_FORK && rs->pass == 1 &&
		   (o = over_find(r, u[2])) && !o->comm[0]) {
		/* pid, ppid, tid, ptid: a child starts with its parent's name */
		struct rec_comm *p = comm_find(r, u[3], false);

		if (p && p->comm[0])
			memcpy(o->comm, p->comm, sizeof(o->comm));
	}
}

/*
 * --overwrite -o -: a snapshot's state is read from /proc, after the
 * fact, and stamped with the time of its oldest sample.  A task that
 * exec'd after that time has its new name in /proc, and its samples from
 * before the exec would get it too: its state says the name it had
 * before (the last one the stream knew, rec_comm), and the exec's own
 * COMM record in the snapshot renames it where it did.
 */
static void snap_names(struct rec_snap *rs)
{
	struct record *r = rs->r;

	r->nr_over = 0;
	rs->pass = 0;
	snapshot__each_record(rs->s, snap_names_rec, rs);
	for (int i = 0; i < r->nr_over; i++) {
		struct rec_comm *c = comm_find(r, r->over[i].tid, false);

		if (c && c->comm[0])
			memcpy(r->over[i].comm, c->comm, sizeof(c->comm));
	}
	rs->pass = 1;
	snapshot__each_record(rs->s, snap_names_rec, rs);
}

static int snap_synthesize(void *ctx, struct pevt_data_writer *w, uint64_t time)
{
	struct rec_snap *rs = ctx;
	int ret;

	rs->r->w = w;
	rs->r->synth_time = time;
	if (rs->s && time) {
		rs->oldest = time;
		snap_names(rs);
	}
	ret = synthesize(rs->r);
	rs->r->synth_time = 0;
	rs->r->nr_over = 0;
	return ret;
}

/* --switch-output-event: a hit since the last look takes a snapshot. */
static bool snap_trigger(void *ctx)
{
	struct record *r = ((struct rec_snap *)ctx)->r;
	bool due;

	if (!r->nr_sb)
		return false;
	take_switch_event(r);
	due = r->switch_due;
	r->switch_due = false;
	return due;
}

/* Returns 0 or the exit code. */
/*
 * -r, once the targets are started: the main thread and the drain's
 * threads SCHED_FIFO, as perf record -r; threads started from here on
 * (the compressing thread) inherit it, --pin-readers' readers have it
 * from creation; the workload, forked already, keeps its policy.
 * Return: 0, or 1 after the error.
 */
static int go_realtime(struct record *r)
{
	struct sched_param sp = { .sched_priority = r->o->rt_prio };
	int err;

	if (!r->o->rt_prio)
		return 0;
	err = sched_setscheduler(0, SCHED_FIFO, &sp) ? -errno :
	      r->drain ? drain__realtime(r->drain, r->o->rt_prio) : 0;
	/* the compressing thread, started before the file, at the main thread's */
	if (!err && r->zq.on)
		err = -pthread_setschedparam(r->zq.thread, SCHED_FIFO, &sp);
	if (!err)
		return 0;
	p_err("-r %d: cannot run SCHED_FIFO: %s", r->o->rt_prio, strerror(-err));
	return 1;
}

static int record_snapshots(struct record *r, int sfd, int err_fd, int argc, char **argv)
{
	struct rec_snap rs = { .r = r, .argc = argc, .argv = argv };
	struct snap_event *ev = calloc(r->nr_events, sizeof(*ev));
	struct snap_buf *bufs = calloc(r->nr_bufs, sizeof(*bufs));
	int *tfds = calloc(r->nr_sb + 1, sizeof(*tfds));
	bool pipe = r->o->output && !strcmp(r->o->output, "-");
	struct snap_params p = {
		.path = r->o->output ? r->o->output : "perf.data",
		.pipe = pipe, .out_fd = STDOUT_FILENO,
		.sw = r->o->sw, .pages = r->o->pages, .quiet = r->o->quiet,
		.comp_level = r->o->comp_level,
		.events = ev, .nr_events = r->nr_events,
		.bufs = bufs, .nr_bufs = r->nr_bufs,
		.prepare = snap_prepare, .synthesize = snap_synthesize,
		.trigger_fds = tfds, .nr_trigger_fds = r->nr_sb, .trigger = snap_trigger,
		.ctx = &rs,
	};
	struct snapshot *s = NULL;
	int i, k, ret = 1;

	if (!ev || !bufs || !tfds)
		goto out;
	if (pipe && isatty(STDOUT_FILENO)) {
		p_err("pipe mode (-o -) writes binary data: redirect stdout");
		goto out;
	}
	for (i = 0; i < r->nr_sb; i++)
		tfds[i] = pevt_evsel__fd(r->sb[i]);
	for (i = 0; i < r->nr_events; i++)
		ev[i] = (struct snap_event){ &r->events[i].attr, r->events[i].name,
					     r->events[i].ids, r->events[i].nr_ids };
	for (i = 0; i < r->nr_bufs; i++) {
		bufs[i].cpu = r->bufs[i].cpu;
		bufs[i].owner = r->bufs[i].owner;
		/* The thread the owner was opened for (-1 CPU-wide). */
		for (k = 0; k < r->nr_cpus * r->nr_threads; k++)
			if (r->events[0].evsels[k] == r->bufs[i].owner ||
			    r->events[r->nr_events - 1].evsels[k] == r->bufs[i].owner)
				bufs[i].pid = r->threads[k % r->nr_threads];
	}
	s = snapshot__new(&p);
	if (!s)
		goto out;
	if (pipe) {
		rs.s = s;
		r->track_comms = true;	/* the names the stream knows */
	}
	ret = start_targets(r, err_fd, true);
	if (ret)
		goto out;
	r->started = true;
	ret = go_realtime(r);
	if (ret)
		goto out;
	ret = snapshot__loop(s, sfd, &r->child, !r->o->argv && r->threads[0] != -1);
	r->done = ret == 1;
	for_each_evsel(r, pevt_evsel__disable, true);
	ret = ret < 0 || snapshot__final(s) ? 1 : 0;
out:
	r->w = NULL;
	snapshot__delete(s);
	free(tfds);
	free(bufs);
	free(ev);
	return ret;
}

/* The default backend: pevt where /dev/pevt opens (the module is loaded, we may use it). */
static bool pevt_device_usable(void)
{
	int fd = open(PEVT_DEVICE_PATH, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int do_record(int argc, char **argv)
{
	struct record_opts o = { .backend = PEVT_BACKEND_DEVICE, .backend_auto = true,
				 .pages = RECORD_DEFAULT_PAGES, .mmap_flush = 1 };
	struct record r = { .o = &o, .go_fd = -1, .out_fd = -1, .exec_fd = -1 };
	struct pevt_parse_error perr;
	sigset_t set, oldmask;
	int err_fd = -1, sfd = -1, code = 1, ret, status = 0;
	const char *list, *what, *stop_delay;

	if (argc >= 1 && !strcmp(argv[0], "help"))
		return do_record_help();
	if (parse_opts(argc, argv, &o))
		goto out;
	if (o.backend_auto && !pevt_device_usable())
		o.backend = PEVT_BACKEND_PERF;
	list = o.events ? o.events : RECORD_DEFAULT_EVENT;
	r.evs = pevt_events__parse(list, NULL, &perr);
	if (!r.evs) {
		report_parse_error(list, &perr);
		goto out;
	}
	if (setup_target(&r))
		goto out;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (o.overwrite || o.sw.on)
		sigaddset(&set, SIGUSR2);	/* --switch-output=signal, else ignored */
	sigprocmask(SIG_BLOCK, &set, &oldmask);
	sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		p_err("signalfd: %s", strerror(errno));
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);	/* a closed pipe is a write error, reported */

	if (o.argv) {
		ret = workload_prepare(o.argv, &oldmask,
				       o.output && !strcmp(o.output, "-"), &r.child, &r.go_fd, &err_fd);
		if (ret) {
			p_err("cannot start '%s': %s", o.argv[0], strerror(-ret));
			goto out;
		}
	}
	/* With -a or -C the events stay CPU-wide: the workload only ends the recording. */
	if (o.argv && !r.threads) {
		r.threads = malloc(sizeof(int));
		if (!r.threads)
			goto out;
		r.threads[0] = r.child;
		r.nr_threads = 1;
	}
	ret = setup_and_open_events(&r);
	if (ret == -EPROTONOSUPPORT) {
		/* No kprobe on perf_event_mmap() (or mmap_records=N): no MMAP from pevt. */
		if (!o.quiet)
			p_info("/dev/pevt cannot write MMAP records on this kernel (no kprobes):"
			       " COMM/MMAP2/FORK/EXIT come from a stock tracking event");
		reset_events(&r);
		r.stock_tracking = true;
		ret = setup_and_open_events(&r);
	}
	if (ret < 0 && r.auto_fail) {
		/* The default backend: what /dev/pevt cannot open, perf_event_open() may. */
		if (!o.quiet)
			p_info("/dev/pevt cannot open event '%s': %s; recording with the stock "
			       "backend (--backend stock)", r.auto_fail, strerror(-ret));
		reset_events(&r);
		r.auto_fail = NULL;
		r.stock_tracking = false;
		o.backend = PEVT_BACKEND_PERF;
		o.backend_auto = false;
		ret = setup_and_open_events(&r);
	}
	if (!ret && o.sw_event)
		ret = open_switch_event(&r);
	if (ret)
		goto out;
	if (o.overwrite) {
		ret = record_snapshots(&r, sfd, err_fd, argc, argv);
		if (ret)
			code = ret;
		if (ret)
			goto out;
		goto status;
	}
	if (o.comp_level) {
		r.zcs = ZSTD_createCStream();
		r.zbuf = malloc(COMP_RECORD_MAX);
		r.zcopy_size = (size_t)o.pages * sysconf(_SC_PAGESIZE);
		r.zcopy = malloc(r.zcopy_size);
		/* a drain takes at most a ring; the readers stage more */
		r.zunit = r.zcopy_size;
		if (o.pin_readers && r.zunit < ZUNIT_MIN)
			r.zunit = ZUNIT_MIN;
		if (!r.zcs || !r.zbuf || !r.zcopy || ZSTD_isError(ZSTD_initCStream(r.zcs, o.comp_level)) ||
		    zstd_warm_up(&r)) {
			p_err("cannot set up zstd compression");
			goto out;
		}
	}
	r.argc = argc;
	r.argv = argv;
	r.files = (struct switch_files){ .path = o.output ? o.output : "perf.data",
					 .max_files = o.sw.max_files };
	r.track_comms = o.sw.on;
	/*
	 * The recorder's threads before the file: with -a they are sampled
	 * like any other, and the file's synthesized state (from /proc)
	 * names them.  Started after it (until 2026-12-07), the readers and
	 * the compressing thread had no COMM in the file: perf report
	 * showed their samples under ":TID" (a third of a 6.1 guest's at
	 * -F 100000 -a -m 1).  The events are not enabled yet: the rings
	 * stay empty until start_targets().
	 */
	if (o.pin_readers && start_readers(&r)) {
		code = 1;
		goto out;
	}
	if (zq_start(&r)) {
		code = 1;
		goto out;
	}
	if (begin_file(&r))
		goto write_error;
	zq_seen(&r);
	if (o.sw.secs)
		r.next_switch = now_ns() + o.sw.secs * 1000000000ull;

	ret = start_targets(&r, err_fd, !samples_before_exec(&r));
	if (ret) {
		code = ret;
		goto out;
	}
	r.started = true;

	if (go_realtime(&r)) {
		code = 1;
		goto out;
	}
	ret = record_loop(&r, sfd);
	/*
	 * The events stop first, as perf record's evlist__disable() when
	 * done: with -a they sample on after the workload, and the readers,
	 * once stopped, take nothing more; a ring full before the disable
	 * dropped what came (-m 1 cpu-clock -a in a 6.1 guest: some 550
	 * samples at the end of each recording, two thirds of its loss).
	 */
	for_each_evsel(&r, pevt_evsel__disable, true);
	stop_readers(&r);
	close_switch_event(&r);
	stop_delay = getenv("PEVT_RECORD_STOP_DELAY_US");	/* tests: a slow stop */
	if (stop_delay)
		usleep((useconds_t)strtoul(stop_delay, NULL, 10));
	if (r.exec_failed) {
		code = r.exec_failed;
		goto out;
	}
	if (!ret)
		ret = pass(&r, true) < 0;
	/* Everything in flight on file (or failed) before the features or the error. */
	zq_stop(&r);
	if (r.drain && drain__reap(r.drain, true))
		ret = 1;
	/* not for snapshots: a paused overwrite buffer drops by design */
	if (!ret && !r.w)
		ret = 1;	/* a --switch-output file that could not be begun */
	if (!ret && !o.overwrite && write_lost_samples(&r))
		ret = 1;
	if (ret || finish_file(&r))
		goto write_error;
	/* perf dumps the last file too: PATH.<timestamp>, no PATH left */
	if (o.sw.on && switch_output(&r, true))
		goto out;
	record_progress(&r, true);
status:
	code = 0;
	if (r.child < 0) {
		status = -r.child - 1;
		r.child = 0;
		if (WIFEXITED(status))
			code = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			code = 128 + WTERMSIG(status);
	}
	goto out;

write_error:
	zq_stop(&r);
	ret = r.w ? pevt_data_writer__error(r.w, &what) : 0;
	if (ret) {
		/* The header still describes the complete rounds. */
		pevt_data_writer__finish(r.w);
		p_err("writing %s to %s failed: %s; the file holds the %" PRIu64
		      " data bytes of the complete rounds before it",
		      what ? what : "data", r.path, strerror(-ret),
		      pevt_data_writer__committed(r.w));
	}
out:
	stop_readers(&r);
	zq_stop(&r);
	if (r.go_fd >= 0)
		close(r.go_fd);	/* the child reads EOF and exits */
	if (r.child > 0) {
		if (r.done || code)
			kill(r.child, SIGTERM);
		waitpid(r.child, NULL, 0);
	}
	if (err_fd >= 0)
		close(err_fd);
	if (sfd >= 0)
		close(sfd);
	drain__delete(r.drain);
	pevt_data_writer__delete(r.w);
	pevt_data__delete(r.idx_data);
	ZSTD_freeCStream(r.zcs);
	free(r.zbuf);
	free(r.zcopy);
	if (r.out_fd > STDOUT_FILENO)
		close(r.out_fd);
	switch_files__exit(&r.files);
	close_switch_event(&r);
	free(r.comms);
	free(r.over);
	for (int i = 0; i < r.nr_kmaps; i++)
		free(r.kmaps[i].rec);
	free(r.kmaps);
	free_record(&r);
	pevt_events__delete(r.evs);
	free(o.events);
	exit(code);
}
