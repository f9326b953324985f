/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pevt record --overwrite: snapshots of overwrite ring buffers
 * (snapshot.c).  record.c opens and maps the events (read-only, with
 * PEVT_SAMPLE_SIZE_AT_END on /dev/pevt, attr.write_backward on the stock
 * kernel) and hands them over here with the few callbacks that write
 * what every perf.data needs besides the records.
 */
#ifndef PEVT_SNAPSHOT_H
#define PEVT_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include <pevt/core.h>

struct pevt_data_writer;
struct pevt_evsel;
struct pevt_mmap;

/* --switch-output[=signal|SIZE|TIME] (perf's option). */
struct snap_switch {
	bool on;
	bool signal;		/* SIGUSR2 */
	uint64_t size;		/* --overwrite: bytes of new records in the buffers;
				   streamed: bytes written to the current file */
	uint64_t secs;		/* seconds */
	int max_files;		/* --switch-max-files, 0: keep all */
};

int snapshot_parse_switch(const char *arg, struct snap_switch *sw);

/*
 * The files --switch-output dumps, named as perf's fetch_current_timestamp()
 * names them: PATH.YYYYmmddHHMMSScc, a later name never equal to an
 * earlier one (10 ms on).  With --switch-max-files only the newest
 * max_files stay: dumped() removes the oldest beyond them.
 */
struct switch_files {
	const char *path;
	int max_files;
	uint64_t last_cs;	/* the last name's time, centiseconds */
	char **names;		/* the newest max_files names, a ring */
	int cur;
};

void switch_files__name(struct switch_files *f, char *buf, size_t len);
void switch_files__dumped(struct switch_files *f, const char *name);
void switch_files__exit(struct switch_files *f);
/* The attr changes --overwrite makes for @backend's events. */
void snapshot_config_attr(struct perf_event_attr *attr, enum pevt_backend backend);

/* An event of the file and a CPU's buffer, as record.c opened them. */
struct snap_event {
	const struct perf_event_attr *attr;
	const char *name;
	const uint64_t *ids;
	int nr_ids;
};

struct snap_buf {
	int cpu, pid;			/* where the owner was opened */
	struct pevt_evsel *owner;	/* the mapped evsel */
};

struct snap_params {
	const char *path;		/* -o */
	/*
	 * -o -: one pipe-mode stream on @out_fd: header, attrs and features
	 * once, then every snapshot's records appended, each ending with
	 * its FINISHED_ROUND.
	 */
	bool pipe;
	int out_fd;
	struct snap_switch sw;
	unsigned long pages;		/* -m */
	int comp_level;			/* -z: 0 = uncompressed */
	bool quiet;
	const struct snap_event *events;
	int nr_events;
	const struct snap_buf *bufs;
	int nr_bufs;
	/* What record.c writes into every file: before start (attrs excluded)... */
	int (*prepare)(void *ctx, struct pevt_data_writer *w);
	/*
	 * ... and after it: the synthesized state, its records' sample_id_all
	 * time @time (0: none; pipe mode: the snapshot's oldest sample, so a
	 * reader that sorts applies it after the older records of the
	 * snapshots before).
	 */
	int (*synthesize)(void *ctx, struct pevt_data_writer *w, uint64_t time);
	/*
	 * --switch-output-event: @trigger_fds are polled with the buffers;
	 * after every wake-up trigger(ctx) says whether a snapshot is due.
	 */
	const int *trigger_fds;
	int nr_trigger_fds;
	bool (*trigger)(void *ctx);
	void *ctx;
};

struct snapshot;

struct snapshot *snapshot__new(const struct snap_params *p);
/*
 * Run until SIGINT/SIGTERM (@sfd), the workload's exit (*@child: reaped
 * status stored as -status - 1, as record.c keeps it) or, without a
 * workload, until every task target is gone; snapshot on --switch-output
 * triggers.  The caller disables the events, then calls
 * snapshot__final().  0 or -errno (a message printed).
 */
int snapshot__loop(struct snapshot *s, int sfd, pid_t *child, bool task_targets);
/*
 * The last snapshot (perf.data, or perf.data.<timestamp> when switching;
 * pipe mode: appended to the stream).
 */
int snapshot__final(struct snapshot *s);
void snapshot__delete(struct snapshot *s);
/*
 * @fn on each record of the snapshot being taken (from synthesize():
 * staged, not yet written), CPU by CPU, oldest first within a CPU; the
 * records have no SIZE_AT_END trailer.
 */
void snapshot__each_record(struct snapshot *s,
			   void (*fn)(void *ctx, const struct perf_event_header *h),
			   void *ctx);

#endif
