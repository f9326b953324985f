// SPDX-License-Identifier: GPL-2.0
/*
 * pevt record --overwrite: snapshots of overwrite (flight recorder) ring
 * buffers, perf record's --overwrite/--switch-output.
 *
 * The kernel overwrites the oldest records; nothing is read until a
 * snapshot is due (SIGUSR2, a size or a time threshold, the end).  A
 * snapshot then takes, from every CPU's buffer, the records written since
 * the previous one that are still whole, and writes them, oldest first,
 * into a perf.data of their own (perf.data.<timestamp> with
 * --switch-output, as perf names them), after the state of the targets
 * synthesized from /proc at that moment (perf's --tail-synthesize, but at
 * the head of the file).
 *
 * With -o - every snapshot goes into one pipe-mode stream instead: the
 * pipe header, attrs and features once at the start, then per snapshot
 * the synthesized state, its records and one FINISHED_ROUND.  A
 * snapshot's records were all written after the previous snapshot took
 * its buffers (pevt: after the switch; stock: after each buffer's
 * resume, which is after the pauses of the snapshot before), so they
 * are no older than anything two snapshots back: the round guarantee
 * holds across snapshots with one round each.
 *
 * The two kernels take a snapshot differently:
 *
 *   /dev/pevt: records end with the PEVT_SAMPLE_SIZE_AT_END trailer, so a
 *	buffer is walked backward from data_head.  Each CPU has a second
 *	buffer (a disabled twin of the buffer's owner, mapped the same way):
 *	PEVT_IOC_REDIRECT_OUTPUT moves every writer to the other buffer in
 *	one store and returns once the one left is quiescent, which is then
 *	read while recording goes on.  The next snapshot moves the writers
 *	back and reads the second buffer from where it was left: nothing is
 *	dropped between two snapshots.  The trailer is stripped from every
 *	record written and the bit cleared in the file's attrs.
 *   stock: attr.write_backward; the buffer is paused
 *	(PERF_EVENT_IOC_PAUSE_OUTPUT), its new records copied out, and
 *	resumed before the file is written.  What the kernel writes while
 *	it is paused is dropped: the window is as short as a copy can make
 *	it, but it is not zero.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <zstd.h>

#include <linux/pevt.h>
#include <pevt/data_writer.h>
#include <pevt/evsel.h>
#include <pevt/mmap.h>

#include "main.h"
#include "snapshot.h"

/* Size threshold: how often the buffers are looked at. */
#define SNAP_SIZE_POLL_MS	10

struct snap_cpu {
	const struct snap_buf *b;
	enum pevt_backend be;
	struct pevt_mmap *map[2];	/* [0] the owner's, [1] the twin's (pevt) */
	struct pevt_evsel *twin;
	int active;			/* pevt: the map the writers use */
	uint64_t seen[2];		/* data_head when last read */
	unsigned char *stage;		/* records of a snapshot, at the end */
	size_t stage_size, stage_pos;
	bool hup;
};

struct snapshot {
	struct snap_params p;
	struct snap_cpu *cpus;
	int nr;
	int time_idx;			/* u64 index of TIME in a sample, -1 */
	struct switch_files files;
	/* the snapshot being taken */
	uint64_t samples, first_time, last_time;
	uint64_t window_ns;		/* pevt: switching; stock: paused */
	int wrapped;
	/* all of them */
	uint64_t total_samples, total_bytes;
	int nr_files;
	/* -z: one zstd frame per file, its records in COMPRESSED records */
	ZSTD_CStream *zcs;
	unsigned char *zbuf;
	uint64_t raw_bytes, comp_bytes;		/* of the file being written */
	uint32_t mmap_len;			/* the largest stage */
	uint64_t total_raw, total_comp;
	/* -o -: the stream's writer, made at the start */
	struct pevt_data_writer *pw;
};

/* ---- options --------------------------------------------------------- */

/* perf's switch_output_setup(): "signal", SIZE[BKMG] or TIME[smhd]. */
int snapshot_parse_switch(const char *arg, struct snap_switch *sw)
{
	char *end;
	unsigned long long v;

	memset(sw, 0, sizeof(*sw));
	sw->on = true;
	if (!arg || !strcmp(arg, "signal")) {
		sw->signal = true;
		return 0;
	}
	v = strtoull(arg, &end, 10);
	if (end == arg || !v || end[0] == '\0' || end[1] != '\0')
		return -EINVAL;
	switch (*end) {
	case 'B': sw->size = v; break;
	case 'K': sw->size = v << 10; break;
	case 'M': sw->size = v << 20; break;
	case 'G': sw->size = v << 30; break;
	case 's': sw->secs = v; break;
	case 'm': sw->secs = v * 60; break;
	case 'h': sw->secs = v * 3600; break;
	case 'd': sw->secs = v * 86400; break;
	default:
		return -EINVAL;
	}
	return 0;
}

void snapshot_config_attr(struct perf_event_attr *attr, enum pevt_backend backend)
{
	if (backend == PEVT_BACKEND_DEVICE)
		attr->sample_type |= PEVT_SAMPLE_SIZE_AT_END;
	else
		attr->write_backward = 1;
}

/* ---- --switch-output's files (snapshots and streamed recordings) ----- */

/* perf's fetch_current_timestamp(), kept unique: YYYYmmddHHMMSScc. */
void switch_files__name(struct switch_files *f, char *buf, size_t len)
{
	struct timeval tv;
	struct tm tm;
	char dt[32];
	time_t t;
	uint64_t cs;

	gettimeofday(&tv, NULL);
	cs = (uint64_t)tv.tv_sec * 100 + tv.tv_usec / 10000;
	/* Two files within 10 ms: the later name is 10 ms on, not the same. */
	if (cs <= f->last_cs)
		cs = f->last_cs + 1;
	f->last_cs = cs;
	t = cs / 100;
	localtime_r(&t, &tm);
	strftime(dt, sizeof(dt), "%Y%m%d%H%M%S", &tm);
	snprintf(buf, len, "%s.%s%02u", f->path, dt, (unsigned int)(cs % 100));
}

/*
 * --switch-max-files: perf's ring of the newest names
 * (record__switch_output()); the name it replaces is the oldest, removed.
 */
void switch_files__dumped(struct switch_files *f, const char *name)
{
	if (f->max_files <= 0)
		return;
	if (!f->names) {
		f->names = calloc(f->max_files, sizeof(*f->names));
		if (!f->names)
			return;
		f->cur = -1;
	}
	f->cur = (f->cur + 1) % f->max_files;
	if (f->names[f->cur]) {
		if (remove(f->names[f->cur]) && errno != ENOENT)
			p_err("cannot remove %s: %s", f->names[f->cur], strerror(errno));
		free(f->names[f->cur]);
	}
	f->names[f->cur] = strdup(name);
}

void switch_files__exit(struct switch_files *f)
{
	int i;

	for (i = 0; f->names && i < f->max_files; i++)
		free(f->names[i]);
	free(f->names);
	f->names = NULL;
}

/* ---- taking a snapshot ---------------------------------------------- */

static bool is_pevt(const struct snap_cpu *c)
{
	return c->be == PEVT_BACKEND_DEVICE;
}

/* Bytes written into @c's buffer(s) since they were last read. */
static uint64_t new_bytes(struct snap_cpu *c)
{
	uint64_t head = pevt_mmap__read_head(c->map[c->active]);

	/* write_backward: the head goes down. */
	return is_pevt(c) ? head - c->seen[c->active] : c->seen[0] - head;
}

/*
 * Copy the records of @map written since it was last read, newest first
 * from the walk, into the end of c->stage so that they end up oldest
 * first; strip the SIZE_AT_END trailer.  The buffer does not move.
 */
static int collect(struct snapshot *s, struct snap_cpu *c, int m)
{
	struct pevt_mmap *map = c->map[m];
	size_t trailer = is_pevt(c) ? sizeof(uint64_t) : 0, size;
	struct perf_event_header *ev, *out;
	struct pevt_mmap_stats st;
	int err;

	c->stage_pos = c->stage_size;
	err = pevt_mmap__read_init(map);
	if (err == -EAGAIN)
		return 0;
	if (err) {
		p_err("CPU %d buffer: cannot read it back: %s", c->b->cpu, strerror(-err));
		return err;
	}
	while ((ev = pevt_mmap__read_event(map)) != NULL) {
		size = ev->size - trailer;
		if (size > c->stage_pos)
			break;		/* cannot happen: a walk stays within a buffer */
		c->stage_pos -= size;
		out = (void *)(c->stage + c->stage_pos);
		memcpy(out, ev, size);
		out->size = size;
		if (ev->type == PERF_RECORD_SAMPLE) {
			s->samples++;
			if (s->time_idx >= 0 && size >= sizeof(*ev) + 8 * (s->time_idx + 1)) {
				uint64_t t;

				memcpy(&t, (char *)out + sizeof(*ev) + 8 * s->time_idx, 8);
				if (!s->first_time || t < s->first_time)
					s->first_time = t;
				if (t > s->last_time)
					s->last_time = t;
			}
		}
	}
	pevt_mmap__stats(map, &st);
	s->wrapped += st.stop == PEVT_STOP_OVERWRITTEN;
	err = pevt_mmap__read_done(map);
	c->seen[m] = st.head;
	if (err == -EBADMSG) {
		/* What was read before the bad record is whole: keep it. */
		p_err("CPU %d buffer: inconsistent record at %" PRIu64 " bytes below its head; "
		      "the older records of this snapshot are left out", c->b->cpu, st.bytes);
		return 0;
	}
	/*
	 * -ESTALE: the stock kernel published a record after the pause (its
	 * writer was past the paused check): it is read with the next
	 * snapshot, behind what the pause dropped.
	 */
	return err == -ESTALE ? 0 : err;
}

/* Move @c's writers to its other buffer; returns the map they left. */
static int switch_buffer(struct snap_cpu *c)
{
	int left = c->active, fd = pevt_evsel__fd(c->b->owner);
	int to = left ? -1 : pevt_evsel__fd(c->twin);

	if (ioctl(fd, PEVT_IOC_REDIRECT_OUTPUT, to) < 0) {
		p_err("CPU %d: PEVT_IOC_REDIRECT_OUTPUT: %s", c->b->cpu, strerror(errno));
		return -errno;
	}
	c->active = !left;
	return left;
}

/*
 * Stage every CPU's new records: pevt buffers first all switched, then
 * read; stock buffers paused, copied and resumed one at a time.
 */
static int stage_all(struct snapshot *s)
{
	int left[s->nr], i, ret;
	uint64_t t0 = now_ns();

	s->window_ns = 0;
	for (i = 0; i < s->nr; i++) {
		struct snap_cpu *c = &s->cpus[i];

		if (!is_pevt(c))
			continue;
		left[i] = switch_buffer(c);
		if (left[i] < 0)
			return left[i];
		s->window_ns = now_ns() - t0;
	}
	for (i = 0; i < s->nr; i++) {
		struct snap_cpu *c = &s->cpus[i];

		if (is_pevt(c)) {
			ret = collect(s, c, left[i]);
		} else {
			t0 = now_ns();
			ret = pevt_mmap__pause(c->map[0], true);
			if (ret) {
				p_err("CPU %d: PERF_EVENT_IOC_PAUSE_OUTPUT: %s", c->b->cpu,
				      strerror(-ret));
				return ret;
			}
			ret = collect(s, c, 0);
			pevt_mmap__pause(c->map[0], false);
			s->window_ns += now_ns() - t0;
		}
		if (ret)
			return ret;
	}
	return 0;
}

static void file_name(struct snapshot *s, char *buf, size_t len)
{
	if (s->p.sw.on)
		switch_files__name(&s->files, buf, len);
	else
		snprintf(buf, len, "%s", s->p.path);
}

/* perf's PERF_SAMPLE_MAX_SIZE: a record's u16 size. */
#define COMP_RECORD_MAX	(1 << 16)

/*
 * -z: @len bytes of whole records (no more than one ring: the mmap_len
 * the COMPRESSED feature announces, which a reader's decompression
 * buffer is) as PERF_RECORD_COMPRESSED records of at most 64 KiB, the
 * way record.c's write_compressed() and perf 6.1 write them.
 */
static int write_compressed(struct snapshot *s, struct pevt_data_writer *w,
			    const void *src, size_t len)
{
	ZSTD_inBuffer in = { src, len, 0 };
	size_t left = 1;
	int ret;

	while (in.pos < in.size || left) {
		struct perf_event_header *h = (void *)s->zbuf;
		ZSTD_outBuffer out = { s->zbuf + sizeof(*h),
				       COMP_RECORD_MAX - sizeof(*h) - 1, 0 };
		size_t zr = in.pos < in.size ? ZSTD_compressStream(s->zcs, &out, &in) : 0;

		if (ZSTD_isError(zr))
			return -EIO;
		left = ZSTD_flushStream(s->zcs, &out);
		if (ZSTD_isError(left))
			return -EIO;
		if (!out.pos)
			continue;
		h->type = PERF_RECORD_COMPRESSED;
		h->misc = 0;
		h->size = sizeof(*h) + out.pos;
		ret = pevt_data_writer__write(w, h, h->size);
		if (ret)
			return ret;
		s->comp_bytes += h->size;
	}
	s->raw_bytes += len;
	return 0;
}

/* The file's attrs: the trailer is stripped from every record. */
static int add_attrs(struct snapshot *s, struct pevt_data_writer *w)
{
	int i, ret = 0;

	for (i = 0; i < s->p.nr_events && !ret; i++) {
		struct perf_event_attr a = *s->p.events[i].attr;

		/* Stripped from every record: perf does not know the bit. */
		a.sample_type &= ~PEVT_SAMPLE_SIZE_AT_END;
		ret = pevt_data_writer__add_attr(w, &a, s->p.events[i].name,
						 s->p.events[i].ids, s->p.events[i].nr_ids);
	}
	return ret;
}

/* Each CPU's staged records, oldest first per CPU; -z: compressed. */
static int write_staged(struct snapshot *s, struct pevt_data_writer *w)
{
	int i, ret = 0;

	for (i = 0; i < s->nr && !ret; i++) {
		struct snap_cpu *c = &s->cpus[i];

		if (c->stage_pos >= c->stage_size)
			continue;
		if (s->zcs)
			ret = write_compressed(s, w, c->stage + c->stage_pos,
					       c->stage_size - c->stage_pos);
		else
			ret = pevt_data_writer__write(w, c->stage + c->stage_pos,
						      c->stage_size - c->stage_pos);
	}
	return ret;
}

void snapshot__each_record(struct snapshot *s,
			   void (*fn)(void *ctx, const struct perf_event_header *h),
			   void *ctx)
{
	int i;

	for (i = 0; i < s->nr; i++) {
		struct snap_cpu *c = &s->cpus[i];
		size_t pos = c->stage_pos;

		while (pos + sizeof(struct perf_event_header) <= c->stage_size) {
			const struct perf_event_header *h = (const void *)(c->stage + pos);

			if (h->size < sizeof(*h) || pos + h->size > c->stage_size)
				break;
			fn(ctx, h);
			pos += h->size;
		}
	}
}

/* A write to the stream failed: say why; EPIPE is the reader gone. */
static void stream_error(struct snapshot *s, int err)
{
	const char *what = NULL;

	if (err == -EPIPE)
		p_err("the reader of stdout went away (%s): recording stopped after %d "
		      "snapshot%s (%" PRIu64 " samples)", strerror(-err), s->nr_files,
		      s->nr_files == 1 ? "" : "s", s->total_samples);
	else if (s->pw && pevt_data_writer__error(s->pw, &what))
		p_err("writing %s to stdout failed: %s", what ? what : "data", strerror(-err));
	else
		p_err("cannot write to stdout: %s", strerror(-err));
}

/*
 * -o -: the stream's start, written once: pipe header, attrs (with ids),
 * EVENT_UPDATE names, features, tracing data.  -z: one zstd stream for
 * the whole stream (a pipe's reader has one decompressor), its
 * COMPRESSED feature announced here, with no ratio (not known yet).
 */
static int open_stream(struct snapshot *s)
{
	LIBPEVT_OPTS(pevt_data_writer_opts, wo, .pipe = true);
	int ret;

	s->pw = pevt_data_writer__new(s->p.out_fd, &wo);
	if (!s->pw)
		return -ENOMEM;
	ret = add_attrs(s, s->pw);
	if (!ret)
		ret = s->p.prepare(s->p.ctx, s->pw);
	if (!ret && s->zcs)
		ret = pevt_data_writer__set_compressed(s->pw, s->p.comp_level, 0, s->mmap_len);
	if (!ret)
		ret = pevt_data_writer__start(s->pw);
	if (ret)
		stream_error(s, ret);
	return ret;
}

/*
 * -o -: a snapshot appended to the stream: the synthesized state, stamped
 * with the time of the snapshot's oldest sample (it describes the
 * targets now; a reader sorting by time applies it after the records of
 * the previous snapshot that are older, not before them as it would a
 * record of time 0), FINISHED_INIT after the first one's, the records,
 * one FINISHED_ROUND.
 */
static int write_stream(struct snapshot *s)
{
	struct pevt_data_writer *w = s->pw;
	uint64_t raw = s->raw_bytes, comp = s->comp_bytes;
	int ret;

	ret = s->p.synthesize(s->p.ctx, w, s->first_time);
	if (!ret && !s->nr_files)
		ret = pevt_data_writer__finished_init(w);
	if (!ret)
		ret = write_staged(s, w);
	if (!ret)
		ret = pevt_data_writer__round(w);
	s->total_raw += s->raw_bytes - raw;
	s->total_comp += s->comp_bytes - comp;
	s->total_bytes = pevt_data_writer__bytes(w);
	if (ret)
		stream_error(s, ret);
	return ret;
}

static int write_file(struct snapshot *s, const char *path)
{
	LIBPEVT_OPTS(pevt_data_writer_opts, wo);
	struct pevt_data_writer *w;
	const char *what = NULL;
	int fd, ret;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		p_err("cannot create %s: %s", path, strerror(errno));
		return -errno;
	}
	w = pevt_data_writer__new(fd, &wo);
	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	ret = add_attrs(s, w);
	if (!ret)
		ret = s->p.prepare(s->p.ctx, w);
	/*
	 * -z: each file's zstd stream is its own, begun with a frame header
	 * (a reader decompresses a file from its first COMPRESSED record;
	 * perf 6.1 keeps one stream for all of its --overwrite -z files,
	 * and cannot read any but the first: "Unknown frame descriptor").
	 */
	if (!ret && s->zcs) {
		if (ZSTD_isError(ZSTD_CCtx_reset(s->zcs, ZSTD_reset_session_only)))
			ret = -EIO;
		s->raw_bytes = s->comp_bytes = 0;
		if (!ret)
			ret = pevt_data_writer__set_compressed(w, s->p.comp_level, 0,
							      s->mmap_len);
	}
	if (!ret)
		ret = pevt_data_writer__start(w);
	if (!ret)
		ret = s->p.synthesize(s->p.ctx, w, 0);
	if (!ret)
		ret = pevt_data_writer__finished_init(w);
	if (!ret)
		ret = write_staged(s, w);
	/* One round: a reader sorts the whole snapshot at once. */
	if (!ret)
		ret = pevt_data_writer__round(w);
	if (!ret)
		pevt_data_writer__set_sample_time(w, s->first_time, s->last_time);
	if (!ret && s->zcs) {
		uint64_t raw = s->raw_bytes, comp = s->comp_bytes;

		ret = pevt_data_writer__set_compressed(w, s->p.comp_level,
						      comp ? (raw + comp / 2) / comp : 0,
						      s->mmap_len);
		s->total_raw += raw;
		s->total_comp += comp;
	}
	if (!ret)
		ret = pevt_data_writer__finish(w);
	if (ret && pevt_data_writer__error(w, &what))
		p_err("writing %s to %s failed: %s", what ? what : "data", path, strerror(-ret));
	else if (ret)
		p_err("cannot write %s: %s", path, strerror(-ret));
	s->total_bytes += pevt_data_writer__bytes(w);
	pevt_data_writer__delete(w);
	if (close(fd) && !ret) {
		p_err("closing %s: %s", path, strerror(errno));
		ret = -EIO;
	}
	return ret;
}

static int take(struct snapshot *s)
{
	char path[4096];
	int ret;

	s->samples = s->first_time = s->last_time = 0;
	s->wrapped = 0;
	ret = stage_all(s);
	if (ret)
		return ret;
	if (s->p.pipe) {
		ret = write_stream(s);
		if (ret)
			return ret;
		s->nr_files++;
		s->total_samples += s->samples;
		if (!s->p.quiet)
			fprintf(stderr, "[ pevt record: Snapshot %d to stdout (%" PRIu64
				" samples; %s %" PRIu64 " us%s) ]\n", s->nr_files, s->samples,
				is_pevt(&s->cpus[0]) ? "buffers switched in" : "paused for",
				s->window_ns / 1000, s->wrapped ? "; a buffer had wrapped" : "");
		return 0;
	}
	file_name(s, path, sizeof(path));
	ret = write_file(s, path);
	if (ret)
		return ret;
	s->nr_files++;
	s->total_samples += s->samples;
	if (!s->p.quiet)
		fprintf(stderr, "[ pevt record: Dump %s (%" PRIu64 " samples; %s %" PRIu64
			" us%s) ]\n", path, s->samples,
			is_pevt(&s->cpus[0]) ? "buffers switched in" : "paused for",
			s->window_ns / 1000, s->wrapped ? "; a buffer had wrapped" : "");
	if (s->p.sw.on)
		switch_files__dumped(&s->files, path);
	return 0;
}

/* ---- set-up ------------------------------------------------------------ */

/* The second buffer of a pevt CPU: a disabled twin of the owner. */
static int open_twin(struct snapshot *s, struct snap_cpu *c)
{
	struct perf_event_attr a = *pevt_evsel__attr(c->b->owner);
	LIBPEVT_OPTS(pevt_open_opts, oo, .backend = PEVT_BACKEND_DEVICE);
	LIBPEVT_OPTS(pevt_mmap_opts, mo, .writable = false);
	int ret;

	a.disabled = 1;
	a.enable_on_exec = 0;
	a.inherit = 0;
	a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 0;
	c->twin = pevt_evsel__new(&a);
	if (!c->twin)
		return -ENOMEM;
	ret = pevt_evsel__open(c->twin, c->b->pid, c->b->cpu, NULL, &oo);
	if (ret < 0) {
		p_err("cannot open the second buffer's event on CPU %d: %s", c->b->cpu,
		      strerror(-ret));
		return ret;
	}
	c->map[1] = pevt_evsel__mmap(c->twin, s->p.pages, &mo);
	if (!c->map[1]) {
		ret = -errno;
		p_err("cannot map the second buffer (%lu pages) for CPU %d: %s", s->p.pages,
		      c->b->cpu, strerror(errno));
		return ret;
	}
	return 0;
}

struct snapshot *snapshot__new(const struct snap_params *p)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	uint64_t st;
	int i;

	if (!s)
		return NULL;
	s->p = *p;
	s->files = (struct switch_files){ .path = p->path, .max_files = p->sw.max_files };
	s->nr = p->nr_bufs;
	s->cpus = calloc(s->nr, sizeof(*s->cpus));
	if (!s->cpus)
		goto err;
	st = p->nr_events ? p->events[0].attr->sample_type : 0;
	s->time_idx = st & PERF_SAMPLE_TIME ?
		      !!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
		      !!(st & PERF_SAMPLE_TID) : -1;
	for (i = 0; i < s->nr; i++) {
		struct snap_cpu *c = &s->cpus[i];

		c->b = &p->bufs[i];
		c->be = pevt_evsel__backend(c->b->owner);
		c->map[0] = pevt_evsel__map(c->b->owner);
		c->stage_size = pevt_mmap__data_size(c->map[0]);
		c->stage = malloc(c->stage_size);
		if (!c->stage)
			goto err;
		if (c->stage_size > s->mmap_len)
			s->mmap_len = c->stage_size;
		if (is_pevt(c) && open_twin(s, c))
			goto err;
	}
	if (p->comp_level) {
		s->zcs = ZSTD_createCStream();
		s->zbuf = malloc(COMP_RECORD_MAX);
		if (!s->zcs || !s->zbuf ||
		    ZSTD_isError(ZSTD_initCStream(s->zcs, p->comp_level))) {
			p_err("cannot set up zstd compression");
			goto err;
		}
	}
	if (p->pipe && open_stream(s))
		goto err;
	return s;
err:
	snapshot__delete(s);
	return NULL;
}

void snapshot__delete(struct snapshot *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->cpus && i < s->nr; i++) {
		/* Closing the twin unmaps its buffer: the redirect ends with it. */
		pevt_evsel__delete(s->cpus[i].twin);
		free(s->cpus[i].stage);
	}
	free(s->cpus);
	pevt_data_writer__delete(s->pw);
	ZSTD_freeCStream(s->zcs);
	free(s->zbuf);
	switch_files__exit(&s->files);
	free(s);
}

/* ---- the loop ---------------------------------------------------------- */

int snapshot__loop(struct snapshot *s, int sfd, pid_t *child, bool task_targets)
{
	struct pollfd pfd[2 * s->nr + 2 + s->p.nr_trigger_fds];
	int owner_idx[s->nr];
	const struct snap_switch *sw = &s->p.sw;
	uint64_t next = sw->secs ? now_ns() + sw->secs * 1000000000ull : 0;
	int i, n = 0, nfds, status, nr_open = s->nr, ret = 0;
	bool done = false, by_signal = false;

	for (i = 0; i < s->nr; i++) {
		owner_idx[i] = n;
		pfd[n++] = (struct pollfd){ .fd = pevt_evsel__fd(s->cpus[i].b->owner),
					    .events = POLLIN };
		if (s->cpus[i].twin)
			pfd[n++] = (struct pollfd){ .fd = pevt_evsel__fd(s->cpus[i].twin),
						    .events = POLLIN };
	}
	pfd[n] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (i = 0; i < s->p.nr_trigger_fds; i++)
		pfd[n + 1 + i] = (struct pollfd){ .fd = s->p.trigger_fds[i], .events = POLLIN };
	/*
	 * -o -: a pipe whose reader closed it reports POLLERR (nothing is
	 * written between snapshots, so no write would tell); a file never.
	 */
	nfds = n + 1 + s->p.nr_trigger_fds;
	if (s->p.pipe)
		pfd[nfds++] = (struct pollfd){ .fd = s->p.out_fd, .events = 0 };
	while (!done) {
		struct signalfd_siginfo si;
		bool due = false;
		int timeout = 1000;
		uint64_t now = now_ns(), bytes = 0;

		if (sw->size)
			timeout = SNAP_SIZE_POLL_MS;
		else if (next)
			timeout = next > now ? (next - now + 999999) / 1000000 : 0;
		if (poll(pfd, nfds, timeout) < 0 && errno != EINTR)
			return -errno;
		if (s->p.pipe && (pfd[nfds - 1].revents & (POLLERR | POLLHUP))) {
			stream_error(s, -EPIPE);
			return -EPIPE;
		}
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGUSR2)
				due |= sw->signal;	/* ignored without --switch-output */
			else if (si.ssi_signo != SIGCHLD)
				done = by_signal = true;
		}
		if (*child > 0 && waitpid(*child, &status, WNOHANG) == *child) {
			*child = -status - 1;
			break;
		}
		for (i = 0; i < s->nr; i++) {
			struct snap_cpu *c = &s->cpus[i];

			/* Hung up: its tasks are gone (-p/-t ends when all are). */
			if (!c->hup && (pfd[owner_idx[i]].revents & (POLLHUP | POLLERR))) {
				c->hup = true;
				nr_open--;
			}
			bytes += new_bytes(c);
		}
		if (task_targets && !*child && !nr_open)
			break;
		if (next && now_ns() >= next)
			due = true;
		if (s->p.trigger && s->p.trigger(s->p.ctx))
			due = true;
		if (sw->size && bytes >= sw->size)
			due = true;
		if (!due || done)
			continue;
		ret = take(s);
		if (ret)
			return ret;
		/* perf re-arms its alarm after the switch. */
		if (next)
			next = now_ns() + sw->secs * 1000000000ull;
	}
	return by_signal;
}

int snapshot__final(struct snapshot *s)
{
	int ret = take(s);

	/* pipe mode: a flush, nothing more */
	if (!ret && s->pw) {
		ret = pevt_data_writer__finish(s->pw);
		if (ret)
			stream_error(s, ret);
	}

	if (ret || s->p.quiet)
		return ret;
	if (s->zcs)
		fprintf(stderr, "[ pevt record: Compressed %.3f MB to %.3f MB, ratio is %.3f ]\n",
			s->total_raw / 1048576.0, s->total_comp / 1048576.0,
			s->total_comp ? (double)s->total_raw / s->total_comp : 0.0);
	fprintf(stderr, "[ pevt record: Captured and wrote %.3f MB %s%s (%" PRIu64
		" samples in %d snapshot%s) ]\n", s->total_bytes / 1048576.0,
		s->p.pipe ? "stdout" : s->p.path,
		s->p.sw.on && !s->p.pipe ? ".<timestamp>" : "", s->total_samples, s->nr_files,
		s->nr_files == 1 ? "" : "s");
	return 0;
}
