// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt data writer: perf.data (PERFILE2) files and pipes, laid out as
 * perf 6.1 writes them (tools/perf/util/header.c:
 * perf_session__do_write_header(), perf_header__adds_write(), the
 * write_<feature>() functions; util/synthetic-events.c for pipe mode).
 *
 * File layout, all offsets fixed at start():
 *
 *	perf_file_header | ids of attr 0 | ids of attr 1 | ... |
 *	perf_file_attr x nr_attrs | data ... | feature index | payloads
 */
#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <pevt/data_index.h>
#include <pevt/data_writer.h>
#include "internal/lib.h"

#define PEVT_VERSION_STRING	"6.1.pevt"

struct feat_buf {
	unsigned char *p;
	size_t len, cap;
	int err;
};

struct dw_attr {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t nr_ids;
	uint64_t ids_offset;
};

struct pevt_data_writer {
	int fd;
	bool pipe;
	bool started;
	bool finished;			/* finish() ran: a second call only reports */
	struct dw_attr *attrs;
	size_t nr_attrs;
	struct feat_buf feats[HEADER_LAST_FEATURE];
	bool has_feat[HEADER_LAST_FEATURE];
	struct feat_buf build_ids;
	uint64_t data_offset;
	uint64_t data_size;		/* written so far */
	uint64_t committed;		/* data_size at the last round */
	uint64_t *commits;		/* every committed data_size (a write error's choice) */
	size_t nr_commits, alloc_commits;
	uint64_t round_start;		/* data_size when the round began */
	uint64_t bytes;
	int err;
	const char *err_what;
	/* set_index(): HEADER_PEVT_INDEX, built as the records go by */
	struct pevt_index_builder *index;
	pevt_data_writer_time_fn time_of;
	void *time_ctx;
	uint64_t *scratch;		/* a record that is not contiguous */
};

/* ---- growing byte buffers for feature payloads -------------------------- */

static void fb_add(struct feat_buf *b, const void *p, size_t len)
{
	if (b->err)
		return;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *n;

		while (cap < b->len + len)
			cap *= 2;
		n = realloc(b->p, cap);
		if (!n) {
			b->err = -ENOMEM;
			return;
		}
		b->p = n;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
}

static void fb_u32(struct feat_buf *b, uint32_t v)
{
	fb_add(b, &v, sizeof(v));
}

static void fb_zero(struct feat_buf *b, size_t n)
{
	static const unsigned char zero[PERF_NAME_ALIGN];

	while (n) {
		size_t k = n < sizeof(zero) ? n : sizeof(zero);

		fb_add(b, zero, k);
		n -= k;
	}
}

/* perf's do_write_string(): u32 len (NUL included, padded to 64), bytes. */
static void fb_str(struct feat_buf *b, const char *s)
{
	uint32_t olen = strlen(s) + 1;
	uint32_t len = (olen + PERF_NAME_ALIGN - 1) & ~(PERF_NAME_ALIGN - 1);

	fb_u32(b, len);
	fb_add(b, s, olen);
	fb_zero(b, len - olen);
}

static void fb_free(struct feat_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- raw output ------------------------------------------------------- */

static int dw_fail(struct pevt_data_writer *w, int err, const char *what)
{
	if (!w->err) {
		w->err = err;
		w->err_what = what;
	}
	return libpevt_err(err);
}

static int dw_pwrite(struct pevt_data_writer *w, const void *buf, size_t len,
		     uint64_t off, const char *what)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(w->fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return dw_fail(w, n < 0 ? -errno : -ENOSPC, what);
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* ---- the index (set_index()) ------------------------------------------- */

#define DW_RECORD_MAX	(1 << 16)	/* a record's u16 size */

/* Copy @len bytes from position (@i, @at) of @iov on. */
static void iov_gather(void *dst, const struct iovec *iov, int cnt, int i, size_t at,
		       size_t len)
{
	char *d = dst;

	while (len && i < cnt) {
		size_t n = iov[i].iov_len - at;

		if (n > len)
			n = len;
		memcpy(d, (const char *)iov[i].iov_base + at, n);
		d += n;
		len -= n;
		i++;
		at = 0;
	}
}

/*
 * Index the whole records of @iov, to be written at file offset @off.
 * Something that is not a sequence of records ends the index (finish()
 * then writes none), not the recording.
 */
static void dw_index(struct pevt_data_writer *w, const struct iovec *iov, int cnt, uint64_t off)
{
	struct pevt_index_builder *b = w->index;
	uint64_t left = 0;
	size_t at = 0;
	int i;

	for (i = 0; i < cnt; i++)
		left += iov[i].iov_len;
	i = 0;
	while (left && !b->err) {
		struct perf_event_header h;
		uint64_t t = UINT64_MAX;
		size_t n;

		while (i < cnt && at == iov[i].iov_len) {
			i++;
			at = 0;
		}
		if (left < sizeof(h)) {
			b->err = -EBADMSG;
			break;
		}
		iov_gather(&h, iov, cnt, i, at, sizeof(h));
		if (h.size < sizeof(h) || h.size > left) {
			b->err = -EBADMSG;
			break;
		}
		/* pevt_index__build(): a record not 8-byte aligned in the file has no time */
		if (!(off & 7) && !(h.size & 7)) {
			const char *p = (const char *)iov[i].iov_base + at;
			const struct perf_event_header *ev = (const void *)p;

			if (iov[i].iov_len - at < h.size || ((uintptr_t)p & 7)) {
				iov_gather(w->scratch, iov, cnt, i, at, h.size);
				ev = (const void *)w->scratch;
			}
			t = w->time_of(w->time_ctx, ev);
		}
		pevt_index_builder__add(b, h.type, h.size, t);
		left -= h.size;
		off += h.size;
		/* step over the record */
		for (n = h.size; n;) {
			size_t k = iov[i].iov_len - at;

			if (k > n)
				k = n;
			at += k;
			n -= k;
			if (at == iov[i].iov_len && n) {
				i++;
				at = 0;
			}
		}
	}
}

int pevt_data_writer__set_index(struct pevt_data_writer *w, uint64_t slice_size,
				pevt_data_writer_time_fn time_of, void *ctx)
{
	if (!w || !time_of || !w->started || w->pipe || w->data_size || w->index)
		return libpevt_err(-EINVAL);
	w->index = malloc(sizeof(*w->index));
	w->scratch = malloc(DW_RECORD_MAX);
	if (!w->index || !w->scratch) {
		free(w->index);
		free(w->scratch);
		w->index = NULL;
		w->scratch = NULL;
		return libpevt_err(-ENOMEM);
	}
	pevt_index_builder__init(w->index, slice_size, w->data_offset);
	w->time_of = time_of;
	w->time_ctx = ctx;
	return 0;
}

/*
 * Appends at the current position (pipe) or at data_offset + data_size.
 * The index gets @run if not NULL (write_run()) and the records are
 * 8-byte aligned in the file, else what dw_index() finds walking them.
 */
static int dw_writev_run(struct pevt_data_writer *w, struct iovec *iov, int cnt,
			 const char *what, const struct pevt_index_run *run)
{
	uint64_t off = w->data_offset + w->data_size;

	if (w->err)
		return libpevt_err(w->err);
	if (w->index && run && !(off & 7))
		pevt_index_builder__add_run(w->index, run);
	else if (w->index)
		dw_index(w, iov, cnt, off);
	while (cnt > 0) {
		ssize_t n;

		if (w->pipe)
			n = writev(w->fd, iov, cnt);
		else
			n = pwritev(w->fd, iov, cnt, w->data_offset + w->data_size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return dw_fail(w, n < 0 ? -errno : -ENOSPC, what);
		w->data_size += n;
		w->bytes += n;
		while (cnt > 0 && (size_t)n >= iov->iov_len) {
			n -= iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= n;
		}
	}
	return 0;
}

static int dw_writev(struct pevt_data_writer *w, struct iovec *iov, int cnt,
		     const char *what)
{
	return dw_writev_run(w, iov, cnt, what, NULL);
}

/* ---- setup ------------------------------------------------------------ */

struct pevt_data_writer *pevt_data_writer__new(int fd,
					       const struct pevt_data_writer_opts *opts)
{
	struct pevt_data_writer_opts o;
	struct pevt_data_writer *w;

	if (fd < 0 || libpevt_opts_copy(&o, sizeof(o), opts))
		return libpevt_err_ptr(-EINVAL);
	w = calloc(1, sizeof(*w));
	if (!w)
		return libpevt_err_ptr(-ENOMEM);
	w->fd = fd;
	w->pipe = o.pipe;
	return w;
}

void pevt_data_writer__delete(struct pevt_data_writer *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	for (i = 0; i < HEADER_LAST_FEATURE; i++)
		fb_free(&w->feats[i]);
	fb_free(&w->build_ids);
	free(w->commits);
	if (w->index)
		pevt_index_builder__exit(w->index);
	free(w->index);
	free(w->scratch);
	free(w);
}

int pevt_data_writer__add_attr(struct pevt_data_writer *w,
			       const struct perf_event_attr *attr,
			       const char *name, const uint64_t *ids, size_t nr_ids)
{
	struct dw_attr *a, *n;

	if (!w || !attr || w->started || (nr_ids && !ids))
		return libpevt_err(-EINVAL);
	n = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*n));
	if (!n)
		return libpevt_err(-ENOMEM);
	w->attrs = n;
	a = &n[w->nr_attrs];
	memset(a, 0, sizeof(*a));
	a->attr = *attr;
	/* perf's readers take attr_size from the header; the attr says the same. */
	a->attr.size = sizeof(a->attr);
	a->name = strdup(name ? name : "");
	a->ids = malloc((nr_ids ? nr_ids : 1) * sizeof(*ids));
	if (!a->name || !a->ids) {
		free(a->name);
		free(a->ids);
		return libpevt_err(-ENOMEM);
	}
	if (nr_ids)
		memcpy(a->ids, ids, nr_ids * sizeof(*ids));
	a->nr_ids = nr_ids;
	w->nr_attrs++;
	return 0;
}

int pevt_data_writer__add_feature(struct pevt_data_writer *w, int feat,
				  const void *buf, size_t len)
{
	struct feat_buf *b;

	if (!w || feat <= HEADER_RESERVED || feat >= HEADER_LAST_FEATURE ||
	    (len && !buf) || (w->pipe && w->started))
		return libpevt_err(-EINVAL);
	b = &w->feats[feat];
	b->len = 0;
	b->err = 0;
	fb_add(b, buf, len);
	if (b->err)
		return libpevt_err(b->err);
	w->has_feat[feat] = true;
	return 0;
}

static int feat_commit(struct pevt_data_writer *w, int feat, struct feat_buf *b)
{
	int ret = b->err ? b->err : pevt_data_writer__add_feature(w, feat, b->p, b->len);

	fb_free(b);
	return ret < 0 ? libpevt_err(ret) : 0;
}

static int feat_string(struct pevt_data_writer *w, int feat, const char *s)
{
	struct feat_buf b = { 0 };

	fb_str(&b, s);
	return feat_commit(w, feat, &b);
}

/* ---- host features ---------------------------------------------------- */

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char *nl;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -ENODATA;
	}
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

/* Highest present CPU + 1 (perf's cpu__max_present_cpu()). */
static int max_present_cpu(void)
{
	char buf[256], *p = buf;
	int max = -1;

	if (read_line("/sys/devices/system/cpu/present", buf, sizeof(buf)))
		return (int)sysconf(_SC_NPROCESSORS_CONF);
	while (*p) {
		long a = strtol(p, &p, 10), b = a;

		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		if (b > max)
			max = b;
		if (*p != ',')
			break;
		p++;
	}
	return max + 1;
}

/* "model name" of /proc/cpuinfo with runs of blanks squashed (perf's cpudesc). */
static int feat_cpudesc(struct pevt_data_writer *w)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], out[512];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *s, *d = out;

		if (strncmp(line, "model name", 10))
			continue;
		s = strchr(line, ':');
		s = s && s[1] == ' ' ? s + 2 : line;
		for (; *s && *s != '\n'; s++) {
			if (*s == ' ' || *s == '\t') {
				*d++ = ' ';
				while (s[1] == ' ' || s[1] == '\t')
					s++;
			} else {
				*d++ = *s;
			}
		}
		*d = '\0';
		ret = feat_string(w, HEADER_CPUDESC, out);
		break;
	}
	fclose(f);
	return ret;
}

/* perf's x86 get_cpuid(): "vendor,family,model,stepping". */
static int feat_cpuid(struct pevt_data_writer *w)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d, family, model, stepping;
	char vendor[13], buf[64];

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return -ENOSYS;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return -ENOSYS;
	family = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	stepping = a & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family >= 0x6)
		model += ((a >> 16) & 0xf) << 4;
	snprintf(buf, sizeof(buf), "%s,%u,%u,%u", vendor, family, model, stepping);
	return feat_string(w, HEADER_CPUID, buf);
#else
	return -ENOSYS;
#endif
}

static int feat_total_mem(struct pevt_data_writer *w)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kb = 0;
	char line[256];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu", &kb) == 1)
			break;
	fclose(f);
	if (!kb)
		return -ENODATA;
	return pevt_data_writer__add_feature(w, HEADER_TOTAL_MEM, &kb, sizeof(kb));
}

static int feat_cmdline(struct pevt_data_writer *w, int argc, char **argv)
{
	struct feat_buf b = { 0 };
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int i;

	exe[n > 0 ? n : 0] = '\0';
	fb_u32(&b, argc + 1);
	fb_str(&b, exe);
	for (i = 0; i < argc; i++)
		fb_str(&b, argv[i]);
	return feat_commit(w, HEADER_CMDLINE, &b);
}

/* Add @s to the list of distinct strings @v (n entries). */
static int add_unique(char ***v, uint32_t *n, const char *s)
{
	char **nv;
	uint32_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return 0;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/*
 * perf's write_cpu_topology() without the optional die part: package and
 * core sibling lists of the online CPUs, then (core_id, socket_id) for
 * every CPU below max_present_cpu() (-1 for CPUs that are not online).
 */
static int feat_cpu_topology(struct pevt_data_writer *w)
{
	char path[128], buf[256], **pkg = NULL, **core = NULL;
	uint32_t npkg = 0, ncore = 0, i;
	struct feat_buf b = { 0 };
	int cpu, nr = max_present_cpu(), ret = 0;

	for (cpu = 0; cpu < nr && !ret; cpu++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/package_cpus_list", cpu);
		if (read_line(path, buf, sizeof(buf))) {
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/topology/core_siblings_list", cpu);
			if (read_line(path, buf, sizeof(buf)))
				continue;
		}
		ret = add_unique(&pkg, &npkg, buf);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", cpu);
		if (read_line(path, buf, sizeof(buf))) {
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
			if (read_line(path, buf, sizeof(buf)))
				continue;
		}
		if (!ret)
			ret = add_unique(&core, &ncore, buf);
	}
	if (!ret) {
		fb_u32(&b, npkg);
		for (i = 0; i < npkg; i++)
			fb_str(&b, pkg[i]);
		fb_u32(&b, ncore);
		for (i = 0; i < ncore; i++)
			fb_str(&b, core[i]);
		for (cpu = 0; cpu < nr; cpu++) {
			int32_t core_id = -1, socket_id = -1;

			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
			if (!read_line(path, buf, sizeof(buf)))
				core_id = atoi(buf);
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
			if (!read_line(path, buf, sizeof(buf)))
				socket_id = atoi(buf);
			fb_u32(&b, core_id);
			fb_u32(&b, socket_id);
		}
		ret = feat_commit(w, HEADER_CPU_TOPOLOGY, &b);
	}
	for (i = 0; i < npkg; i++)
		free(pkg[i]);
	for (i = 0; i < ncore; i++)
		free(core[i]);
	free(pkg);
	free(core);
	fb_free(&b);
	return ret;
}

/* perf's write_event_desc(). */
static int feat_event_desc(struct pevt_data_writer *w)
{
	struct feat_buf b = { 0 };
	size_t i;

	fb_u32(&b, w->nr_attrs);
	fb_u32(&b, sizeof(struct perf_event_attr));
	for (i = 0; i < w->nr_attrs; i++) {
		fb_add(&b, &w->attrs[i].attr, sizeof(struct perf_event_attr));
		fb_u32(&b, w->attrs[i].nr_ids);
		fb_str(&b, w->attrs[i].name);
		fb_add(&b, w->attrs[i].ids, w->attrs[i].nr_ids * sizeof(uint64_t));
	}
	return feat_commit(w, HEADER_EVENT_DESC, &b);
}

int pevt_data_writer__add_host_features(struct pevt_data_writer *w,
					int argc, char **argv)
{
	struct utsname uts;
	struct timespec res;
	uint32_t nrcpus[2];
	uint64_t res_ns;
	int ret;

	if (!w)
		return libpevt_err(-EINVAL);
	if (uname(&uts))
		return libpevt_err(-errno);
	ret = feat_string(w, HEADER_HOSTNAME, uts.nodename);
	if (!ret)
		ret = feat_string(w, HEADER_OSRELEASE, uts.release);
	if (!ret)
		ret = feat_string(w, HEADER_VERSION, PEVT_VERSION_STRING);
	if (!ret)
		ret = feat_string(w, HEADER_ARCH, uts.machine);
	if (ret)
		return libpevt_err(ret);
	nrcpus[0] = max_present_cpu();
	nrcpus[1] = sysconf(_SC_NPROCESSORS_ONLN);
	ret = pevt_data_writer__add_feature(w, HEADER_NRCPUS, nrcpus, sizeof(nrcpus));
	if (ret)
		return ret;
	/* Optional ones: absent where the machine does not tell. */
	feat_cpudesc(w);
	feat_cpuid(w);
	feat_total_mem(w);
	ret = feat_cmdline(w, argc, argv);
	if (!ret)
		ret = feat_event_desc(w);
	if (!ret)
		ret = feat_cpu_topology(w);
	if (ret)
		return libpevt_err(ret);
	/* The samples' clock: perf_clock, i.e. CLOCK_MONOTONIC's resolution. */
	res_ns = clock_getres(CLOCK_MONOTONIC, &res) ? 1 :
		 (uint64_t)res.tv_sec * 1000000000ull + res.tv_nsec;
	return pevt_data_writer__add_feature(w, HEADER_CLOCKID, &res_ns, sizeof(res_ns));
}

/* ---- TRACING_DATA (perf's util/trace-event-info.c, version 0.6) -------- */

/* The whole file, size first: @hdr_sz 4 or 8 bytes (0: no size). */
static int fb_file(struct feat_buf *b, const char *path, size_t hdr_sz)
{
	size_t at = b->len, n;
	uint64_t size = 0;
	char buf[4096];
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	fb_zero(b, hdr_sz);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		fb_add(b, buf, n);
		size += n;
	}
	fclose(f);
	if (b->err)
		return b->err;
	/* tracefs files stat as 0 bytes: the size is known only now. */
	memcpy(b->p + at, &size, hdr_sz);
	return 0;
}

int pevt_data_writer__add_tracing_data(struct pevt_data_writer *w,
				       const char *tracefs,
				       const char *const *tps, size_t nr)
{
	static const unsigned char magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct feat_buf b = { 0 };
	char path[512];
	size_t i, j, nsys = 0;
	int ret;

	if (!w || !tracefs || (nr && !tps))
		return libpevt_err(-EINVAL);
	fb_add(&b, magic, sizeof(magic));
	fb_add(&b, "0.6", 4);
	fb_add(&b, "\0", 1);			/* little endian */
	fb_add(&b, "\x08", 1);			/* sizeof(long) */
	fb_u32(&b, sysconf(_SC_PAGESIZE));
	fb_add(&b, "header_page", 12);
	snprintf(path, sizeof(path), "%s/events/header_page", tracefs);
	ret = fb_file(&b, path, 8);
	fb_add(&b, "header_event", 13);
	snprintf(path, sizeof(path), "%s/events/header_event", tracefs);
	if (!ret)
		ret = fb_file(&b, path, 8);
	fb_u32(&b, 0);				/* ftrace's own events: none */
	/* Systems in first-seen order, each with its events. */
	for (i = 0; i < nr; i++) {
		size_t len = strcspn(tps[i], ":");

		for (j = 0; j < i; j++)
			if (!strncmp(tps[j], tps[i], len + 1))
				break;
		nsys += j == i;
	}
	fb_u32(&b, nsys);
	for (i = 0; i < nr && !ret; i++) {
		size_t len = strcspn(tps[i], ":"), k;
		uint32_t count = 0;
		char sys[256];

		for (j = 0; j < i; j++)
			if (!strncmp(tps[j], tps[i], len + 1))
				break;
		if (j < i || len >= sizeof(sys) || !tps[i][len])
			continue;
		memcpy(sys, tps[i], len);
		sys[len] = '\0';
		fb_add(&b, sys, len + 1);
		for (k = i; k < nr; k++)
			count += !strncmp(tps[k], tps[i], len + 1);
		fb_u32(&b, count);
		for (k = i; k < nr && !ret; k++) {
			if (strncmp(tps[k], tps[i], len + 1))
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/%s/format",
				 tracefs, sys, tps[k] + len + 1);
			ret = fb_file(&b, path, 8);
		}
	}
	fb_u32(&b, 0);				/* kallsyms: none, as perf does */
	snprintf(path, sizeof(path), "%s/printk_formats", tracefs);
	if (!ret && fb_file(&b, path, 4))
		fb_u32(&b, 0);
	snprintf(path, sizeof(path), "%s/saved_cmdlines", tracefs);
	if (!ret && fb_file(&b, path, 8))
		fb_add(&b, &(uint64_t){ 0 }, 8);
	if (ret) {
		fb_free(&b);
		return libpevt_err(ret);
	}
	return feat_commit(w, HEADER_TRACING_DATA, &b);
}

int pevt_data_writer__set_sample_time(struct pevt_data_writer *w,
				      uint64_t first, uint64_t last)
{
	uint64_t t[2] = { first, last };

	return pevt_data_writer__add_feature(w, HEADER_SAMPLE_TIME, t, sizeof(t));
}

int pevt_data_writer__set_compressed(struct pevt_data_writer *w, uint32_t level,
				     uint32_t ratio, uint32_t mmap_len)
{
	struct perf_compressed_feature c = {
		.version = 0, .type = PERF_COMP_ZSTD, .level = level,
		.ratio = ratio, .mmap_len = mmap_len,
	};

	return pevt_data_writer__add_feature(w, HEADER_COMPRESSED, &c, sizeof(c));
}

int pevt_data_writer__add_build_id(struct pevt_data_writer *w, int pid,
				   uint16_t misc, const uint8_t *id,
				   size_t id_size, const char *filename)
{
	struct {
		struct perf_event_header header;
		int32_t pid;
		uint8_t data[20];
		uint8_t size;
		uint8_t reserved1;
		uint16_t reserved2;
	} b;
	size_t olen, len;

	if (!w || !id || !filename || id_size > sizeof(b.data) || w->pipe)
		return libpevt_err(-EINVAL);
	olen = strlen(filename) + 1;
	len = (olen + PERF_NAME_ALIGN - 1) & ~(size_t)(PERF_NAME_ALIGN - 1);
	memset(&b, 0, sizeof(b));
	memcpy(b.data, id, id_size);
	b.size = id_size;
	b.pid = pid;
	b.header.type = 0;		/* perf writes the type as 0 here */
	b.header.misc = misc | (1 << 15);	/* PERF_RECORD_MISC_BUILD_ID_SIZE */
	b.header.size = sizeof(b) + len;
	fb_add(&w->build_ids, &b, sizeof(b));
	fb_add(&w->build_ids, filename, olen);
	fb_zero(&w->build_ids, len - olen);
	return libpevt_err(w->build_ids.err);
}

/* ---- writing ---------------------------------------------------------- */

/* HEADER_ATTR and HEADER_FEATURE records (perf_event__synthesize_for_pipe()). */
static int start_pipe(struct pevt_data_writer *w)
{
	struct perf_pipe_file_header ph = { .magic = PERF_MAGIC2, .size = sizeof(ph) };
	struct perf_event_header eh;
	uint64_t feat_id;
	struct iovec iov[3];
	size_t i;
	int ret;

	iov[0] = (struct iovec){ &ph, sizeof(ph) };
	ret = dw_writev(w, iov, 1, "pipe header");
	for (i = 0; i < w->nr_attrs && !ret; i++) {
		size_t sz = sizeof(eh) + sizeof(struct perf_event_attr) +
			    w->attrs[i].nr_ids * 8;

		if (sz > 0xffff)
			return libpevt_err(-E2BIG);
		eh = (struct perf_event_header){ .type = PERF_RECORD_HEADER_ATTR, .size = sz };
		iov[0] = (struct iovec){ &eh, sizeof(eh) };
		iov[1] = (struct iovec){ &w->attrs[i].attr, sizeof(struct perf_event_attr) };
		iov[2] = (struct iovec){ w->attrs[i].ids, w->attrs[i].nr_ids * 8 };
		ret = dw_writev(w, iov, 3, "attr record");
	}
	/* The names, as EVENT_UPDATE records (perf_event__synthesize_extra_attr()). */
	for (i = 0; i < w->nr_attrs && !ret; i++) {
		struct { struct perf_event_header h; uint64_t type, id; } eu;
		size_t len = strlen(w->attrs[i].name) + 1;
		uint64_t zero = 0;

		if (!w->attrs[i].nr_ids || len > 4096)
			continue;
		eu = (typeof(eu)){
			.h = { .type = PERF_RECORD_EVENT_UPDATE,
			       .size = sizeof(eu) + ((len + 7) & ~7ul) },
			.type = 2,	/* PERF_EVENT_UPDATE__NAME */
			.id = w->attrs[i].ids[0],
		};
		iov[0] = (struct iovec){ &eu, sizeof(eu) };
		iov[1] = (struct iovec){ w->attrs[i].name, len };
		iov[2] = (struct iovec){ &zero, ((len + 7) & ~7ul) - len };
		ret = dw_writev(w, iov, 3, "event update record");
	}
	for (i = 1; i <= HEADER_LAST_FEATURE && !ret; i++) {
		size_t len = i < HEADER_LAST_FEATURE ? w->feats[i].len : 0;

		if (i < HEADER_LAST_FEATURE &&
		    (!w->has_feat[i] || i == HEADER_TRACING_DATA || i == HEADER_BUILD_ID))
			continue;
		if (sizeof(eh) + 8 + len > 0xffff)
			continue;
		eh = (struct perf_event_header){
			.type = PERF_RECORD_HEADER_FEATURE,
			.size = sizeof(eh) + 8 + len,
		};
		feat_id = i;
		iov[0] = (struct iovec){ &eh, sizeof(eh) };
		iov[1] = (struct iovec){ &feat_id, 8 };
		iov[2] = (struct iovec){ len ? (void *)w->feats[i].p : (void *)&feat_id, len };
		ret = dw_writev(w, iov, 3, "feature record");
	}
	if (!ret && w->has_feat[HEADER_TRACING_DATA]) {
		/* Not a feature record: a size, then the data, padded (perf 6.1). */
		struct { struct perf_event_header h; uint32_t size, pad; } td = {
			.h = { .type = PERF_RECORD_HEADER_TRACING_DATA, .size = sizeof(td) },
		};
		size_t len = w->feats[HEADER_TRACING_DATA].len;
		uint64_t zero = 0;

		td.size = (len + 7) & ~7ul;
		iov[0] = (struct iovec){ &td, sizeof(td) };
		iov[1] = (struct iovec){ w->feats[HEADER_TRACING_DATA].p, len };
		iov[2] = (struct iovec){ &zero, td.size - len };
		ret = dw_writev(w, iov, 3, "tracing data");
	}
	return ret;
}

static int write_file_header(struct pevt_data_writer *w, uint64_t data_size,
			     const uint64_t *features, const char *what)
{
	struct perf_file_header h = {
		.magic = PERF_MAGIC2,
		.size = sizeof(h),
		.attr_size = sizeof(struct perf_file_attr),
		.attrs = {
			.offset = w->data_offset - w->nr_attrs * sizeof(struct perf_file_attr),
			.size = w->nr_attrs * sizeof(struct perf_file_attr),
		},
		.data = { .offset = w->data_offset, .size = data_size },
	};

	if (features)
		memcpy(h.adds_features, features, sizeof(h.adds_features));
	return dw_pwrite(w, &h, sizeof(h), 0, what);
}

int pevt_data_writer__start(struct pevt_data_writer *w)
{
	uint64_t off = sizeof(struct perf_file_header);
	size_t i;
	int ret;

	if (!w || w->started)
		return libpevt_err(-EINVAL);
	w->started = true;
	if (w->pipe)
		return start_pipe(w);
	for (i = 0; i < w->nr_attrs; i++) {
		w->attrs[i].ids_offset = off;
		ret = dw_pwrite(w, w->attrs[i].ids, w->attrs[i].nr_ids * 8, off, "ids");
		if (ret)
			return ret;
		off += w->attrs[i].nr_ids * 8;
	}
	for (i = 0; i < w->nr_attrs; i++) {
		struct perf_file_attr fa = {
			.attr = w->attrs[i].attr,
			.ids = { w->attrs[i].ids_offset, w->attrs[i].nr_ids * 8 },
		};

		ret = dw_pwrite(w, &fa, sizeof(fa), off, "attrs");
		if (ret)
			return ret;
		off += sizeof(fa);
	}
	w->data_offset = off;
	w->bytes = off;
	return write_file_header(w, 0, NULL, "file header");
}

int pevt_data_writer__writev(struct pevt_data_writer *w,
			     const struct iovec *iov, int iovcnt)
{
	struct iovec v[16];
	int i, ret = 0;

	if (!w || !w->started || iovcnt < 0)
		return libpevt_err(-EINVAL);
	/* dw_writev() advances the vector: work on a copy. */
	for (i = 0; i < iovcnt && !ret; i += 16) {
		int n = iovcnt - i < 16 ? iovcnt - i : 16;

		memcpy(v, iov + i, n * sizeof(*v));
		ret = dw_writev(w, v, n, "data");
	}
	return ret;
}

int pevt_data_writer__write(struct pevt_data_writer *w, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return pevt_data_writer__writev(w, &iov, 1);
}

int pevt_data_writer__write_run(struct pevt_data_writer *w, const void *buf, size_t len,
				const struct pevt_index_run *run)
{
	struct iovec iov = { (void *)buf, len };

	if (!w || !w->started || !run || run->bytes != len)
		return libpevt_err(-EINVAL);
	return dw_writev_run(w, &iov, 1, "data", run);
}

static int write_user_record(struct pevt_data_writer *w, uint32_t type)
{
	struct perf_event_header h = { .type = type, .size = sizeof(h) };

	return pevt_data_writer__write(w, &h, sizeof(h));
}

int pevt_data_writer__reserve(struct pevt_data_writer *w, size_t len, uint64_t *off)
{
	if (!w || !w->started || w->pipe || (len & 7))
		return libpevt_err(-EINVAL);
	if (w->err)
		return libpevt_err(w->err);
	*off = w->data_offset + w->data_size;
	w->data_size += len;
	w->bytes += len;
	return 0;
}

int pevt_data_writer__reservev(struct pevt_data_writer *w, const struct iovec *iov,
			       int iovcnt, uint64_t *off)
{
	size_t len = 0;
	int i, ret;

	if (!w || iovcnt < 0 || (iovcnt && !iov))
		return libpevt_err(-EINVAL);
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	ret = pevt_data_writer__reserve(w, len, off);
	if (!ret && w->index)
		dw_index(w, iov, iovcnt, *off);
	return ret;
}

int pevt_data_writer__round_mark(struct pevt_data_writer *w, uint64_t *end)
{
	int ret;

	if (!w || !w->started)
		return libpevt_err(-EINVAL);
	if (w->err)
		return libpevt_err(w->err);
	*end = 0;
	if (w->data_size == w->round_start)
		return 0;
	ret = write_user_record(w, PERF_RECORD_FINISHED_ROUND);
	if (ret)
		return ret;
	w->round_start = w->data_size;
	*end = w->data_offset + w->data_size;
	return 1;
}

int pevt_data_writer__commit(struct pevt_data_writer *w, uint64_t end)
{
	if (!w || !w->started || end < w->data_offset ||
	    end > w->data_offset + w->data_size)
		return libpevt_err(-EINVAL);
	if (w->err)
		return libpevt_err(w->err);
	w->committed = end - w->data_offset;
	if (w->pipe)
		return 0;
	if (w->nr_commits == w->alloc_commits) {
		size_t n = w->alloc_commits ? 2 * w->alloc_commits : 64;
		uint64_t *c = realloc(w->commits, n * sizeof(*c));

		if (c) {
			w->commits = c;
			w->alloc_commits = n;
		}
	}
	if (w->nr_commits < w->alloc_commits)
		w->commits[w->nr_commits++] = w->committed;
	/* The file is readable up to here from now on. */
	return dw_pwrite(w, &w->committed, sizeof(w->committed),
			 offsetof(struct perf_file_header, data.size), "file header");
}

int pevt_data_writer__set_error(struct pevt_data_writer *w, int err, const char *what)
{
	return dw_fail(w, err, what);
}

int pevt_data_writer__round(struct pevt_data_writer *w)
{
	uint64_t end;
	int ret = pevt_data_writer__round_mark(w, &end);

	return ret <= 0 ? ret : pevt_data_writer__commit(w, end);
}

int pevt_data_writer__finished_init(struct pevt_data_writer *w)
{
	int ret = write_user_record(w, PERF_RECORD_FINISHED_INIT);

	return ret ? ret : pevt_data_writer__round(w);
}

/*
 * A write failed (disk full, file size limit): keep the rounds that
 * completed and put the features right after the last of them, over what
 * followed: that space is the file's already.  perf cannot read
 * tracepoint samples at all without TRACING_DATA ("incompatible file
 * format").  The file ends where the space ended (EFBIG: at the limit),
 * so the last round after which the features still fit is kept, if there
 * is one (else the caller falls back to the data without features).  No
 * index: it may point past the rounds kept (readers build one).
 */
static void keep_rounds(struct pevt_data_writer *w)
{
	uint64_t need = 64 + 2 * sizeof(struct perf_file_section);
	size_t k = w->nr_commits;
	struct stat st;
	int i;

	for (i = 1; i < HEADER_LAST_FEATURE; i++)
		need += w->has_feat[i] ? w->feats[i].len + sizeof(struct perf_file_section) : 0;
	if (!w->has_feat[HEADER_BUILD_ID])
		need += w->build_ids.len + sizeof(struct perf_file_section);
	if (!fstat(w->fd, &st))
		while (k && w->data_offset + w->commits[k - 1] + need > (uint64_t)st.st_size)
			k--;
	if (k)
		w->committed = w->commits[k - 1];
	w->data_size = w->committed;
	if (w->index) {
		pevt_index_builder__exit(w->index);
		free(w->index);
		w->index = NULL;
	}
}

int pevt_data_writer__finish(struct pevt_data_writer *w)
{
	uint64_t features[HEADER_FEAT_BITS / 64];
	struct perf_file_section *idx;
	void *index_buf = NULL;
	size_t index_len = 0;
	const char *err_what = NULL;
	bool retried = false;
	uint64_t off;
	int i, nr, ret, err = 0;

	if (!w || !w->started)
		return libpevt_err(-EINVAL);
	if (w->pipe || w->finished)
		return w->err ? libpevt_err(w->err) : 0;
	w->finished = true;
	if (w->err) {
		/* what failed first is what the caller reports */
		err = w->err;
		err_what = w->err_what;
		w->err = 0;
		keep_rounds(w);
	}
again:
	memset(features, 0, sizeof(features));
	nr = 0;
	/* Data written after the last round (none when the caller ends with one). */
	w->committed = w->data_size;
	if (w->build_ids.len && !w->has_feat[HEADER_BUILD_ID]) {
		ret = pevt_data_writer__add_feature(w, HEADER_BUILD_ID, w->build_ids.p,
						    w->build_ids.len);
		if (ret)
			return ret;
	}
	if (w->index) {
		/* The index is the last section (bit HEADER_PEVT_INDEX), as `pevt data index` puts it. */
		struct pevt_index pi;

		if (!pevt_index_builder__finish(w->index, w->data_size, &pi)) {
			index_buf = pevt_index__payload(&pi, &index_len);
			pevt_index__exit(&pi);
		}
		free(w->index);
		w->index = NULL;
	}
	for (i = 1; i < HEADER_LAST_FEATURE; i++)
		nr += w->has_feat[i];
	nr += !!index_buf;
	idx = calloc(nr ? nr : 1, sizeof(*idx));
	if (!idx) {
		free(index_buf);
		return libpevt_err(-ENOMEM);
	}
	off = w->data_offset + w->data_size + nr * sizeof(*idx);
	ret = 0;
	for (i = 1, nr = 0; i < HEADER_LAST_FEATURE && !ret; i++) {
		if (!w->has_feat[i])
			continue;
		ret = dw_pwrite(w, w->feats[i].p, w->feats[i].len, off, "feature sections");
		idx[nr] = (struct perf_file_section){ off, w->feats[i].len };
		features[i / 64] |= 1ull << (i % 64);
		off += w->feats[i].len;
		nr++;
	}
	if (!ret && index_buf) {
		ret = dw_pwrite(w, index_buf, index_len, off, "index section");
		idx[nr] = (struct perf_file_section){ off, index_len };
		features[HEADER_PEVT_INDEX / 64] |= 1ull << (HEADER_PEVT_INDEX % 64);
		off += index_len;
		nr++;
	}
	free(index_buf);
	index_buf = NULL;
	if (!ret)
		ret = dw_pwrite(w, idx, nr * sizeof(*idx), w->data_offset + w->data_size,
				"feature index");
	free(idx);
	if (ret && !retried && w->nr_commits) {
		/* The features did not fit after the data: an earlier round. */
		retried = true;
		if (!err) {
			err = w->err;
			err_what = w->err_what;
		}
		w->err = 0;
		keep_rounds(w);
		goto again;
	}
	if (ret) {
		/* Fall back to the data without features. */
		w->err = 0;
		write_file_header(w, w->committed, NULL, "file header");
		if (err) {
			w->err = err;
			w->err_what = err_what;
			ftruncate(w->fd, w->data_offset + w->committed);
			return libpevt_err(err);
		}
		w->err = ret;
		return ret;
	}
	w->bytes = off;
	if (ftruncate(w->fd, off) && errno != EINVAL && !err)
		return dw_fail(w, -errno, "truncate");
	ret = write_file_header(w, w->committed, features, "file header");
	if (err) {
		w->err = err;
		w->err_what = err_what;
		return libpevt_err(err);
	}
	return ret;
}

uint64_t pevt_data_writer__bytes(const struct pevt_data_writer *w)
{
	return w ? w->bytes : 0;
}

uint64_t pevt_data_writer__committed(const struct pevt_data_writer *w)
{
	return w ? w->committed : 0;
}

int pevt_data_writer__error(const struct pevt_data_writer *w, const char **what)
{
	if (what)
		*what = w ? w->err_what : NULL;
	return w ? w->err : -EINVAL;
}
