// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - perf.data reader: file, pipe and directory forms, attrs, ids,
 * feature sections, zstd-compressed records, sample parsing.
 *
 * Layouts are perf's (tools/perf/util/header.c, session.c, evsel.c
 * evsel__parse_sample()); see include/pevt/perf_data.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zstd.h>

#include <pevt/data_reader.h>


#define MAX_STREAMS	4096
#define PIPE_BUF_SZ	(1u << 20)

struct stream {
	const uint8_t *base;		/* mmap of the whole file, or NULL (pipe) */
	size_t map_size;
	uint64_t off, size;		/* the records: [off, off + size) */
	uint64_t pos;			/* next raw record */
	uint64_t declared;		/* truncated file: the header's data size, else 0 */
	uint64_t dropped;		/* pages before this were given back */
	int err;			/* sticky */
	ZSTD_DStream *zstd;		/* compressed records */
	uint8_t *zbuf;			/* decompressed: [zpos, zlen) not delivered */
	size_t zlen, zpos, zcap;
	uint64_t zoff;			/* offset of the last COMPRESSED record */
	uint64_t *tmp;			/* 64 KiB: pipe record, unaligned copy */
};

struct pevt_data {
	char *path;
	bool pipe, dir;
	int fd;				/* pipe */
	struct perf_file_header hdr;
	struct stream *streams;
	int nr_streams;
	struct pevt_data_evsel *evsels;
	int nr_evsels;
	/* id -> evsel, open addressing, 0 = free (id 0 is never used by perf) */
	uint64_t *id_keys;
	int *id_vals;
	unsigned int id_cap, id_nr;
	int id_pos, is_pos;		/* in u64s, -1: no id in records */
	char *str[PEVT_DATA_NR_STR];
	uint64_t feats[HEADER_FEAT_BITS / 64];
	struct pevt_build_id *bids;
	int nr_bids;
	uint32_t nr_cpus_avail, nr_cpus_online;
	struct pevt_data_stats stats;
	char err[256];
	char warn[256];			/* salvaged a killed recording */
};

static void set_err(struct pevt_data *d, const char *fmt, ...)
{
	va_list ap;

	if (d->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
}

static const char *const type_names[PERF_RECORD_HEADER_MAX] = {
	[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM", [PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE", [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK", [PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE", [PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX", [PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES", [PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES", [PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT", [PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE", [PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PERF_RECORD_HEADER_ATTR] = "ATTR", [PERF_RECORD_HEADER_EVENT_TYPE] = "EVENT_TYPE",
	[PERF_RECORD_HEADER_TRACING_DATA] = "TRACING_DATA",
	[PERF_RECORD_HEADER_BUILD_ID] = "BUILD_ID",
	[PERF_RECORD_FINISHED_ROUND] = "FINISHED_ROUND", [PERF_RECORD_ID_INDEX] = "ID_INDEX",
	[PERF_RECORD_AUXTRACE_INFO] = "AUXTRACE_INFO", [PERF_RECORD_AUXTRACE] = "AUXTRACE",
	[PERF_RECORD_AUXTRACE_ERROR] = "AUXTRACE_ERROR", [PERF_RECORD_THREAD_MAP] = "THREAD_MAP",
	[PERF_RECORD_CPU_MAP] = "CPU_MAP", [PERF_RECORD_STAT_CONFIG] = "STAT_CONFIG",
	[PERF_RECORD_STAT] = "STAT", [PERF_RECORD_STAT_ROUND] = "STAT_ROUND",
	[PERF_RECORD_EVENT_UPDATE] = "EVENT_UPDATE", [PERF_RECORD_TIME_CONV] = "TIME_CONV",
	[PERF_RECORD_HEADER_FEATURE] = "FEATURE", [PERF_RECORD_COMPRESSED] = "COMPRESSED",
	[PERF_RECORD_FINISHED_INIT] = "FINISHED_INIT",
};

const char *pevt_record_type__name(uint32_t type)
{
	if (type < PERF_RECORD_HEADER_MAX && type_names[type])
		return type_names[type];
	return NULL;
}

/* ---- ids and evsels ---------------------------------------------------- */

static int id_insert(struct pevt_data *d, uint64_t id, int idx)
{
	unsigned int i;

	if (!id)
		return 0;
	if ((d->id_nr + 1) * 2 > d->id_cap) {
		unsigned int ncap = d->id_cap ? d->id_cap * 2 : 64, j;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		int *nv = calloc(ncap, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -ENOMEM;
		}
		for (j = 0; j < d->id_cap; j++) {
			if (!d->id_keys[j])
				continue;
			i = (d->id_keys[j] * 0x9E3779B97F4A7C15ull) >> 40 & (ncap - 1);
			while (nk[i])
				i = (i + 1) & (ncap - 1);
			nk[i] = d->id_keys[j];
			nv[i] = d->id_vals[j];
		}
		free(d->id_keys);
		free(d->id_vals);
		d->id_keys = nk;
		d->id_vals = nv;
		d->id_cap = ncap;
	}
	i = (id * 0x9E3779B97F4A7C15ull) >> 40 & (d->id_cap - 1);
	while (d->id_keys[i] && d->id_keys[i] != id)
		i = (i + 1) & (d->id_cap - 1);
	if (!d->id_keys[i])
		d->id_nr++;
	d->id_keys[i] = id;
	d->id_vals[i] = idx;
	return 0;
}

static int id_lookup(const struct pevt_data *d, uint64_t id)
{
	unsigned int i;

	if (!d->id_cap || !id)
		return -1;
	i = (id * 0x9E3779B97F4A7C15ull) >> 40 & (d->id_cap - 1);
	while (d->id_keys[i]) {
		if (d->id_keys[i] == id)
			return d->id_vals[i];
		i = (i + 1) & (d->id_cap - 1);
	}
	return -1;
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses",
	"branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
	"stalled-cycles-backend", "ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches",
	"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
};

/*
 * perf's evsel__add_modifiers() (6.1): the levels counted when some are
 * excluded, the precise level, and H/G when exclude_guest is not what the
 * parser sets by default (1, unless a modifier or :p was given).
 */
static int add_modifiers(const struct perf_event_attr *a, char *bf, size_t size)
{
	int colon = 0, r = 0, guest_default = 0;

#define MOD_PRINT(excluded, mod) do {					\
		if (!(excluded) && (size_t)r + 2 < size) {		\
			if (!colon)					\
				colon = ++r;				\
			bf[r++] = (mod);				\
		} } while (0)
	if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
		MOD_PRINT(a->exclude_kernel, 'k');
		MOD_PRINT(a->exclude_user, 'u');
		MOD_PRINT(a->exclude_hv, 'h');
		guest_default = 1;
	}
	if (a->precise_ip && (size_t)r + 5 < size) {
		if (!colon)
			colon = ++r;
		r += snprintf(bf + r, size - r, "%.*s", (int)a->precise_ip, "ppp");
		guest_default = 1;
	}
	if (a->exclude_host || (int)a->exclude_guest == guest_default) {
		MOD_PRINT(a->exclude_host, 'H');
		MOD_PRINT(a->exclude_guest, 'G');
	}
#undef MOD_PRINT
	if (colon)
		bf[colon - 1] = ':';
	bf[r] = 0;
	return r;
}

/* An event's name when the file has no EVENT_DESC: perf's evsel__name(). */
static char *derive_name(const struct perf_event_attr *a)
{
	char buf[96];
	int r;

	if (a->type == PERF_TYPE_HARDWARE && a->config < sizeof(hw_names) / sizeof(hw_names[0]))
		r = snprintf(buf, sizeof(buf), "%s", hw_names[a->config]);
	else if (a->type == PERF_TYPE_SOFTWARE && a->config < sizeof(sw_names) / sizeof(sw_names[0]))
		r = snprintf(buf, sizeof(buf), "%s", sw_names[a->config]);
	else if (a->type == PERF_TYPE_RAW)
		r = snprintf(buf, sizeof(buf), "raw %#llx", (unsigned long long)a->config);
	else {
		snprintf(buf, sizeof(buf), "unknown-%u:%#llx", a->type, (unsigned long long)a->config);
		return strdup(buf);
	}
	add_modifiers(a, buf + r, sizeof(buf) - r);
	return strdup(buf);
}

/* Position of the id, in u64s after the header (samples). */
static int sample_id_pos(uint64_t t)
{
	int pos = 0;

	if (t & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	if (t & PERF_SAMPLE_IP)
		pos++;
	if (t & PERF_SAMPLE_TID)
		pos++;
	if (t & PERF_SAMPLE_TIME)
		pos++;
	if (t & PERF_SAMPLE_ADDR)
		pos++;
	return pos;
}

/* Position of the id, in u64s back from the end (sample_id_all trailers). */
static int trailer_id_pos(uint64_t t)
{
	int pos = 1;

	if (t & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	if (t & PERF_SAMPLE_CPU)
		pos++;
	if (t & PERF_SAMPLE_STREAM_ID)
		pos++;
	return pos;
}

static int add_evsel(struct pevt_data *d, const void *attr, size_t attr_sz,
		     const void *ids, size_t nr_ids)
{
	struct pevt_data_evsel *n, *e;
	size_t i, cp;

	n = realloc(d->evsels, (d->nr_evsels + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	d->evsels = n;
	e = &n[d->nr_evsels];
	memset(e, 0, sizeof(*e));
	cp = attr_sz < sizeof(e->attr) ? attr_sz : sizeof(e->attr);
	memcpy(&e->attr, attr, cp);
	e->idx = d->nr_evsels;
	e->ids = nr_ids ? malloc(nr_ids * sizeof(uint64_t)) : NULL;
	if (nr_ids && !e->ids)
		return -ENOMEM;
	if (nr_ids)
		memcpy(e->ids, ids, nr_ids * sizeof(uint64_t));
	e->nr_ids = nr_ids;
	e->name = derive_name(&e->attr);
	d->nr_evsels++;
	for (i = 0; i < nr_ids; i++)
		if (id_insert(d, e->ids[i], e->idx))
			return -ENOMEM;
	/* perf requires the same id position in every attr. */
	if (d->nr_evsels == 1) {
		d->id_pos = sample_id_pos(e->attr.sample_type);
		d->is_pos = e->attr.sample_id_all ? trailer_id_pos(e->attr.sample_type) : -1;
	} else if (d->id_pos != sample_id_pos(e->attr.sample_type)) {
		set_err(d, "attrs %d and 0 place the sample id differently", e->idx);
		return -EINVAL;
	}
	return 0;
}

struct pevt_data_evsel *pevt_data__evsel_of(struct pevt_data *d, const struct perf_event_header *ev)
{
	const uint64_t *p = (const uint64_t *)ev;
	size_t n = ev->size / 8;
	int pos, idx;

	if (d->nr_evsels == 1)
		return &d->evsels[0];
	if (!d->nr_evsels)
		return NULL;
	if (ev->type == PERF_RECORD_SAMPLE) {
		pos = d->id_pos;
		if (pos < 0 || (size_t)pos + 1 >= n)
			return NULL;
		idx = id_lookup(d, p[1 + pos]);
	} else {
		pos = d->is_pos;
		if (pos < 0 || (size_t)pos >= n)
			return NULL;
		idx = id_lookup(d, p[n - pos]);
	}
	return idx < 0 ? NULL : &d->evsels[idx];
}

/* ---- sample parsing (evsel__parse_sample()) ---------------------------- */

#define NEED(n) do { if ((uint64_t)(end - p) < (uint64_t)(n)) return -EBADMSG; } while (0)

/*
 * libc's memset(), called: gcc inlines memset(s, 0, sizeof(*s)) of the 272
 * bytes as a `rep stos`, whose start-up was two thirds of the parse (5% of
 * a report); libc's vector stores take a few cycles.
 */
static void *(*volatile const sample_memset)(void *, int, size_t) = memset;

int pevt_data__parse_sample(struct pevt_data *d, const struct perf_event_header *ev,
			    struct pevt_sample *s)
{
	const uint64_t *p = (const uint64_t *)ev + 1;
	const uint64_t *end = (const uint64_t *)ev + ev->size / 8;
	struct pevt_data_evsel *e = pevt_data__evsel_of(d, ev);
	uint64_t t;

	sample_memset(s, 0, sizeof(*s));
	s->cpu = (uint32_t)-1;
	s->pid = s->tid = (uint32_t)-1;
	s->period = 1;
	s->misc = ev->misc;
	s->cpumode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if (!e)
		return -ENOENT;
	s->evsel = e;
	t = e->attr.sample_type;
	if (t & PERF_SAMPLE_IDENTIFIER) {
		NEED(1);
		s->id = *p++;
	}
	if (t & PERF_SAMPLE_IP) {
		NEED(1);
		s->ip = *p++;
	}
	if (t & PERF_SAMPLE_TID) {
		NEED(1);
		s->pid = (uint32_t)*p;
		s->tid = (uint32_t)(*p++ >> 32);
	}
	if (t & PERF_SAMPLE_TIME) {
		NEED(1);
		s->time = *p++;
	}
	if (t & PERF_SAMPLE_ADDR) {
		NEED(1);
		s->addr = *p++;
	}
	if (t & PERF_SAMPLE_ID) {
		NEED(1);
		s->id = *p++;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		NEED(1);
		s->stream_id = *p++;
	}
	if (t & PERF_SAMPLE_CPU) {
		NEED(1);
		s->cpu = (uint32_t)*p++;
	}
	if (t & PERF_SAMPLE_PERIOD) {
		NEED(1);
		s->period = *p++;
	}
	if (t & PERF_SAMPLE_READ) {
		uint64_t rf = e->attr.read_format, n = 1, per = 1;

		if (rf & PERF_FORMAT_ID)
			per++;
		if (rf & PERF_FORMAT_LOST)
			per++;
		s->read = p;
		if (rf & PERF_FORMAT_GROUP) {
			uint64_t k = 1;

			if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
				k++;
			if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
				k++;
			NEED(k);
			n = *p;
			p += k;
			/* n entries of per words each, without overflowing n * per */
			if (n > (uint64_t)(end - p) / per)
				return -EBADMSG;
			p += n * per;
		} else {
			uint64_t k = per;

			if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
				k++;
			if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
				k++;
			NEED(k);
			p += k;
		}
		if (p > end) return -EBADMSG;
		s->read_size = (p - s->read) * 8;
	}
	if (t & PERF_SAMPLE_CALLCHAIN) {
		NEED(1);
		s->nr_callchain = *p++;
		if (s->nr_callchain > (uint64_t)(end - p))
			return -EBADMSG;
		s->callchain = p;
		p += s->nr_callchain;
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t sz;

		NEED(1);
		sz = *(const uint32_t *)p;
		if (sz > (uint64_t)(end - p) * 8 - 4)
			return -EBADMSG;
		s->raw_size = sz;
		s->raw = (const uint8_t *)p + 4;
		p = (const uint64_t *)((const uint8_t *)p + ((sz + 4 + 7) & ~7u));
		if (p > end) return -EBADMSG;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		NEED(1);
		s->nr_branch = *p++;
		if (e->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			NEED(1);
			s->branch_hw_idx = *p++;
		}
		if (s->nr_branch > (uint64_t)(end - p) / 3)
			return -EBADMSG;
		s->branch = (const struct pevt_branch_entry *)p;
		p += s->nr_branch * 3;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		NEED(1);
		s->regs_user_abi = *p++;
		if (s->regs_user_abi) {
			uint64_t n = __builtin_popcountll(e->attr.sample_regs_user);

			NEED(n);
			s->regs_user = p;
			p += n;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		NEED(1);
		s->stack_user_size = *p++;
		if (s->stack_user_size) {
			if (s->stack_user_size > (uint64_t)(end - p) * 8)
				return -EBADMSG;
			s->stack_user = p;
			p += (s->stack_user_size + 7) / 8;
			NEED(1);
			s->stack_user_dyn = *p++;
		}
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		NEED(1);
		s->weight = *p++;
	}
	if (t & PERF_SAMPLE_DATA_SRC) {
		NEED(1);
		s->data_src = *p++;
	}
	if (t & PERF_SAMPLE_TRANSACTION) {
		NEED(1);
		s->transaction = *p++;
	}
	if (t & PERF_SAMPLE_REGS_INTR) {
		NEED(1);
		s->regs_intr_abi = *p++;
		if (s->regs_intr_abi) {
			uint64_t n = __builtin_popcountll(e->attr.sample_regs_intr);

			NEED(n);
			s->regs_intr = p;
			p += n;
		}
	}
	if (t & PERF_SAMPLE_PHYS_ADDR) {
		NEED(1);
		s->phys_addr = *p++;
	}
	if (t & PERF_SAMPLE_CGROUP) {
		NEED(1);
		s->cgroup = *p++;
	}
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE) {
		NEED(1);
		s->data_page_size = *p++;
	}
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE) {
		NEED(1);
		s->code_page_size = *p++;
	}
	if (t & PERF_SAMPLE_AUX) {
		NEED(1);
		s->aux_size = *p++;
		if (s->aux_size > (uint64_t)(end - p) * 8)
			return -EBADMSG;
		s->aux = p;
	}
	return 0;
}

int pevt_data__parse_id(struct pevt_data *d, const struct perf_event_header *ev,
			struct pevt_sample *s)
{
	const uint64_t *end = (const uint64_t *)ev + ev->size / 8;
	const uint64_t *start = (const uint64_t *)ev + 1;
	struct pevt_data_evsel *e = pevt_data__evsel_of(d, ev);
	const uint64_t *p;
	uint64_t t;
	int n = 0;

	memset(s, 0, sizeof(*s));
	s->cpu = s->pid = s->tid = (uint32_t)-1;
	s->misc = ev->misc;
	s->cpumode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if (!e || !e->attr.sample_id_all)
		return -ENOENT;
	s->evsel = e;
	t = e->attr.sample_type;
	n += !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
	     !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
	     !!(t & PERF_SAMPLE_IDENTIFIER);
	if (end - start < n)
		return -EBADMSG;
	p = end - n;
	if (t & PERF_SAMPLE_TID) {
		s->pid = (uint32_t)*p;
		s->tid = (uint32_t)(*p++ >> 32);
	}
	if (t & PERF_SAMPLE_TIME)
		s->time = *p++;
	if (t & PERF_SAMPLE_ID)
		s->id = *p++;
	if (t & PERF_SAMPLE_STREAM_ID)
		s->stream_id = *p++;
	if (t & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)*p++;
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = *p++;
	return 0;
}

/* ---- feature sections -------------------------------------------------- */

struct fbuf {
	const uint8_t *p, *end;
};

static int fb_u32(struct fbuf *b, uint32_t *v)
{
	if (b->end - b->p < 4)
		return -1;
	memcpy(v, b->p, 4);
	b->p += 4;
	return 0;
}

static char *fb_str(struct fbuf *b)
{
	uint32_t len;
	char *s;

	if (fb_u32(b, &len) || len > (size_t)(b->end - b->p))
		return NULL;
	s = strndup((const char *)b->p, len);
	b->p += len;
	return s;
}

static void feat_strs(struct pevt_data *d, enum pevt_data_str which, struct fbuf *b)
{
	free(d->str[which]);
	d->str[which] = fb_str(b);
}

static void feat_cmdline(struct pevt_data *d, struct fbuf *b)
{
	uint32_t nr, i;
	size_t len = 0;
	char *out = NULL;

	if (fb_u32(b, &nr))
		return;
	for (i = 0; i < nr; i++) {
		char *s = fb_str(b), *n;

		if (!s)
			break;
		n = realloc(out, len + strlen(s) + 2);
		if (!n) {
			free(s);
			break;
		}
		out = n;
		len += sprintf(out + len, "%s%s", i ? " " : "", s);
		free(s);
	}
	free(d->str[PEVT_DATA_CMDLINE]);
	d->str[PEVT_DATA_CMDLINE] = out;
}

static void feat_event_desc(struct pevt_data *d, struct fbuf *b)
{
	uint32_t nr, sz, i, nr_ids;

	if (fb_u32(b, &nr) || fb_u32(b, &sz) || sz < PERF_ATTR_SIZE_VER0)
		return;
	for (i = 0; i < nr; i++) {
		struct perf_event_attr a;
		char *name;

		if ((size_t)(b->end - b->p) < sz)
			return;
		memset(&a, 0, sizeof(a));
		memcpy(&a, b->p, sz < sizeof(a) ? sz : sizeof(a));
		b->p += sz;
		if (fb_u32(b, &nr_ids))
			return;
		name = fb_str(b);
		if (!name)
			return;
		if ((size_t)(b->end - b->p) / 8 < nr_ids) {
			free(name);
			return;
		}
		/* Match by position (perf writes them in evlist order). */
		if (i < (uint32_t)d->nr_evsels) {
			free(d->evsels[i].name);
			d->evsels[i].name = name;
		} else {
			free(name);
		}
		b->p += nr_ids * 8;
	}
}

static void feat_build_id(struct pevt_data *d, struct fbuf *b)
{
	while (b->end - b->p >= (long)sizeof(struct perf_event_header) + 8 + 24) {
		struct perf_event_header hh, *h = &hh;
		struct pevt_build_id *n, *bid;
		size_t fn_len;

		memcpy(&hh, b->p, sizeof(hh));
		if (h->size < sizeof(*h) + 8 + 24 || h->size > b->end - b->p)
			return;
		n = realloc(d->bids, (d->nr_bids + 1) * sizeof(*n));
		if (!n)
			return;
		d->bids = n;
		bid = &n[d->nr_bids];
		memset(bid, 0, sizeof(*bid));
		bid->misc = h->misc;
		memcpy(&bid->pid, b->p + 8, 4);
		memcpy(bid->id, b->p + 12, 20);
		bid->size = (h->misc & (1 << 15)) ? b->p[32] : 20; /* PERF_RECORD_MISC_BUILD_ID_SIZE */
		if (bid->size > 20)
			bid->size = 20;
		fn_len = h->size - (8 + 4 + 24);
		bid->filename = strndup((const char *)b->p + 36, fn_len);
		d->nr_bids++;
		b->p += h->size;
	}
}

static void process_feature(struct pevt_data *d, int feat, const uint8_t *p, size_t size)
{
	struct fbuf b = { p, p + size };

	if (feat < 0 || feat >= HEADER_FEAT_BITS)
		return;
	d->feats[feat / 64] |= 1ull << (feat % 64);
	switch (feat) {
	case HEADER_HOSTNAME:	feat_strs(d, PEVT_DATA_HOSTNAME, &b); break;
	case HEADER_OSRELEASE:	feat_strs(d, PEVT_DATA_OSRELEASE, &b); break;
	case HEADER_VERSION:	feat_strs(d, PEVT_DATA_VERSION, &b); break;
	case HEADER_ARCH:	feat_strs(d, PEVT_DATA_ARCH, &b); break;
	case HEADER_CPUDESC:	feat_strs(d, PEVT_DATA_CPUDESC, &b); break;
	case HEADER_CPUID:	feat_strs(d, PEVT_DATA_CPUID, &b); break;
	case HEADER_CMDLINE:	feat_cmdline(d, &b); break;
	case HEADER_EVENT_DESC:	feat_event_desc(d, &b); break;
	case HEADER_BUILD_ID:	feat_build_id(d, &b); break;
	case HEADER_NRCPUS:
		if (!fb_u32(&b, &d->nr_cpus_avail))
			fb_u32(&b, &d->nr_cpus_online);
		break;
	default:
		break;
	}
}

/* ---- opening ------------------------------------------------------------ */

static int map_file(const char *path, const uint8_t **base, size_t *size)
{
	struct stat st;
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	*size = st.st_size;
	if (!st.st_size) {
		*base = NULL;
		close(fd);
		return 0;
	}
	m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	madvise(m, st.st_size, MADV_SEQUENTIAL);
	*base = m;
	return 0;
}

static int add_stream(struct pevt_data *d, const uint8_t *base, size_t map_size,
		      uint64_t off, uint64_t size)
{
	struct stream *n = realloc(d->streams, (d->nr_streams + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	d->streams = n;
	n[d->nr_streams] = (struct stream){ .base = base, .map_size = map_size,
					    .off = off, .size = size, .pos = off };
	n[d->nr_streams].tmp = malloc(65536 + 8);
	if (!n[d->nr_streams].tmp)
		return -ENOMEM;
	d->nr_streams++;
	return 0;
}

static int open_file(struct pevt_data *d, const char *path)
{
	const uint8_t *base;
	size_t size, nr, i, ids_avail;
	uint64_t data_end;
	int err, feat, k;
	struct perf_file_section sec;

	err = map_file(path, &base, &size);
	if (err) {
		set_err(d, "%s: %s", path, strerror(-err));
		return err;
	}
	if (size < sizeof(uint64_t) * 2) {
		set_err(d, "%s: file too short (%zu bytes) for a perf.data header at offset 0", path, size);
		goto bad;
	}
	memcpy(&d->hdr, base, size < sizeof(d->hdr) ? size : sizeof(d->hdr));
	if (d->hdr.magic == PERF_MAGIC2_SWAPPED) {
		set_err(d, "%s: big-endian perf.data is not supported", path);
		goto bad;
	}
	if (d->hdr.magic != PERF_MAGIC2) {
		set_err(d, "%s: bad magic %#" PRIx64 " at offset 0 (not a perf.data v2 file)",
			path, (uint64_t)d->hdr.magic);
		goto bad;
	}
	if (d->hdr.size == sizeof(struct perf_pipe_file_header)) {
		/* A pipe-mode stream saved to a file. */
		d->pipe = true;
		return add_stream(d, base, size, 16, size - 16);
	}
	if (d->hdr.size != sizeof(d->hdr)) {
		set_err(d, "%s: header size %" PRIu64 " at offset 8, expected %zu",
			path, (uint64_t)d->hdr.size, sizeof(d->hdr));
		goto bad;
	}
	if (size < sizeof(d->hdr)) {
		set_err(d, "%s: file too short (%zu bytes) for the %zu-byte header at offset 0",
			path, size, sizeof(d->hdr));
		goto bad;
	}
	if (d->hdr.attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct perf_file_section) ||
	    d->hdr.attrs.offset > size || d->hdr.attrs.size > size - d->hdr.attrs.offset) {
		set_err(d, "%s: attr section [%#" PRIx64 ", +%" PRIu64 "] (attr_size %" PRIu64
			") outside the file at offset 16", path, (uint64_t)d->hdr.attrs.offset,
			(uint64_t)d->hdr.attrs.size, (uint64_t)d->hdr.attr_size);
		goto bad;
	}
	nr = d->hdr.attrs.size / d->hdr.attr_size;
	for (i = 0; i < nr; i++) {
		uint64_t aoff = d->hdr.attrs.offset + i * d->hdr.attr_size;
		const uint8_t *a = base + aoff;
		size_t asz = d->hdr.attr_size - sizeof(sec);
		uint32_t a_size;

		/* nothing in the file is guaranteed aligned: copy */
		memcpy(&sec, base + aoff + asz, sizeof(sec));
		memcpy(&a_size, a + offsetof(struct perf_event_attr, size), sizeof(a_size));
		if (sec.offset > size || sec.size > size - sec.offset) {
			set_err(d, "%s: ids of attr %zu [%#" PRIx64 ", +%" PRIu64
				"] outside the file at offset %#" PRIx64, path, i,
				(uint64_t)sec.offset, (uint64_t)sec.size, aoff + asz);
			goto bad;
		}
		if (a_size && a_size < asz)
			asz = a_size;
		err = add_evsel(d, a, asz, base + sec.offset, sec.size / 8);
		if (err)
			goto bad_err;
	}
	if (!d->nr_evsels) {
		set_err(d, "%s: no attrs (attr section at offset %#" PRIx64 ")", path,
			(uint64_t)d->hdr.attrs.offset);
		goto bad;
	}
	memcpy(d->feats, d->hdr.adds_features, sizeof(d->feats));
	data_end = d->hdr.data.offset + d->hdr.data.size;
	if (d->hdr.data.offset > size) {
		set_err(d, "%s: data section offset %#" PRIx64 " beyond the end of the file (%zu bytes)",
			path, (uint64_t)d->hdr.data.offset, size);
		goto bad;
	}
	if (data_end > size || data_end < d->hdr.data.offset) {
		/* Truncated: keep what is there, report where it ends. */
		err = add_stream(d, base, size, d->hdr.data.offset, size - d->hdr.data.offset);
		if (err)
			goto bad_err;
		d->streams[d->nr_streams - 1].declared = d->hdr.data.size;
		return 0;
	}
	if (!d->hdr.data.size && size > d->hdr.data.offset) {
		/*
		 * perf record writes the data size at the end: 0 means it was
		 * killed.  Salvage the records up to the last complete round
		 * (everything older was flushed whole), or up to the last
		 * complete record without rounds.
		 */
		uint64_t pos = d->hdr.data.offset, last = pos, round = 0;
		struct perf_event_header h;

		while (size - pos >= sizeof(h)) {
			memcpy(&h, base + pos, sizeof(h));
			if (h.size < sizeof(h) || h.size > size - pos)
				break;
			pos += h.size;
			last = pos;
			if (h.type == PERF_RECORD_FINISHED_ROUND)
				round = pos;
		}
		if (round)
			last = round;
		snprintf(d->warn, sizeof(d->warn),
			 "%s: data size 0 in the header (recording killed?): reading the %" PRIu64
			 " bytes at offset %#" PRIx64 " up to the last complete %s, %zu bytes after "
			 "it ignored", path, (uint64_t)(last - d->hdr.data.offset), (uint64_t)d->hdr.data.offset,
			 round ? "round" : "record", (size_t)(size - last));
		err = add_stream(d, base, size, d->hdr.data.offset, last - d->hdr.data.offset);
		if (err)
			goto bad_err;
		return 0;
	}
	err = add_stream(d, base, size, d->hdr.data.offset, d->hdr.data.size);
	if (err)
		goto bad_err;
	/* Feature sections: one perf_file_section per bit, in bit order. */
	ids_avail = (size - data_end) / sizeof(sec);
	for (feat = 1, k = 0; feat < HEADER_FEAT_BITS; feat++) {
		if (!(d->hdr.adds_features[feat / 64] & (1ull << (feat % 64))))
			continue;
		if ((size_t)k >= ids_avail)
			break;
		memcpy(&sec, base + data_end + k * sizeof(sec), sizeof(sec));
		if (sec.offset <= size && sec.size <= size - sec.offset)
			process_feature(d, feat, base + sec.offset, sec.size);
		k++;
	}
	return 0;
bad:
	err = -EINVAL;
bad_err:
	if (base)
		munmap((void *)base, size);
	if (d->nr_streams && d->streams[0].base == base)
		d->nr_streams = 0;
	return err;
}

static int cmp_data_names(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	return atoi(x + 5) - atoi(y + 5);
}

static int open_dir(struct pevt_data *d, const char *path)
{
	char *names[MAX_STREAMS], buf[4096];
	int nr = 0, i, err;
	struct dirent *de;
	DIR *dir;

	snprintf(buf, sizeof(buf), "%s/data", path);
	err = open_file(d, buf);
	if (err)
		return err;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && nr < MAX_STREAMS) {
		if (strncmp(de->d_name, "data.", 5) || !de->d_name[5])
			continue;
		names[nr] = strdup(de->d_name);
		if (names[nr])
			nr++;
	}
	closedir(dir);
	qsort(names, nr, sizeof(names[0]), cmp_data_names);
	err = 0;
	for (i = 0; i < nr; i++) {
		const uint8_t *base;
		size_t size;

		snprintf(buf, sizeof(buf), "%s/%s", path, names[i]);
		if (!err) {
			err = map_file(buf, &base, &size);
			if (err)
				set_err(d, "%s: %s", buf, strerror(-err));
			else if (size)	/* a CPU that wrote nothing: no stream */
				err = add_stream(d, base, size, 0, size);
		}
		free(names[i]);
	}
	d->dir = true;
	return err;
}

struct pevt_data *pevt_data__open(const char *path)
{
	struct pevt_data *d = calloc(1, sizeof(*d));
	struct stat st;
	int err = 0;

	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	d->fd = -1;
	d->id_pos = d->is_pos = -1;
	d->path = strdup(path);
	if (!strcmp(path, "-")) {
		struct perf_pipe_file_header ph;
		ssize_t r = read(0, &ph, sizeof(ph));

		d->pipe = true;
		d->fd = 0;
		if (r != (ssize_t)sizeof(ph) || ph.magic != PERF_MAGIC2 || ph.size != sizeof(ph)) {
			set_err(d, "stdin: not a perf.data pipe stream (bad header at offset 0)");
			err = -EINVAL;
		} else {
			err = add_stream(d, NULL, 0, 16, UINT64_MAX);
		}
	} else if (stat(path, &st)) {
		err = -errno;
		set_err(d, "%s: %s", path, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		err = open_dir(d, path);
	} else {
		err = open_file(d, path);
	}
	if (err) {
		/* Keep the object so the caller can read the error. */
		errno = -err;
		d->nr_streams = 0;
	}
	return d;
}

void pevt_data__delete(struct pevt_data *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; i < d->nr_streams; i++) {
		int j;
		bool dup = false;

		for (j = 0; j < i; j++)
			dup |= d->streams[j].base == d->streams[i].base;
		if (d->streams[i].base && !dup)
			munmap((void *)d->streams[i].base, d->streams[i].map_size);
		if (d->streams[i].zstd)
			ZSTD_freeDStream(d->streams[i].zstd);
		free(d->streams[i].zbuf);
		free(d->streams[i].tmp);
	}
	for (i = 0; i < d->nr_evsels; i++) {
		free(d->evsels[i].name);
		free(d->evsels[i].ids);
	}
	for (i = 0; i < d->nr_bids; i++)
		free(d->bids[i].filename);
	for (i = 0; i < PEVT_DATA_NR_STR; i++)
		free(d->str[i]);
	free(d->bids);
	free(d->evsels);
	free(d->streams);
	free(d->id_keys);
	free(d->id_vals);
	free(d->path);
	free(d);
}

/* ---- records ------------------------------------------------------------ */

/* Pipe-mode (and file-mode) records that describe the session. */
static int process_meta(struct pevt_data *d, const struct perf_event_header *ev)
{
	const uint8_t *p = (const uint8_t *)ev;
	size_t sz = ev->size;

	switch (ev->type) {
	case PERF_RECORD_HEADER_ATTR: {
		const struct perf_event_attr *a = (const void *)(p + 8);
		size_t asz;

		if (sz < 8 + PERF_ATTR_SIZE_VER0)
			return -EBADMSG;
		asz = a->size ? a->size : PERF_ATTR_SIZE_VER0;
		if (asz > sz - 8 || asz < PERF_ATTR_SIZE_VER0)
			return -EBADMSG;
		return add_evsel(d, a, asz, p + 8 + asz, (sz - 8 - asz) / 8);
	}
	case PERF_RECORD_HEADER_FEATURE: {
		uint64_t feat;

		if (sz < 16)
			return -EBADMSG;
		memcpy(&feat, p + 8, 8);
		if (feat < HEADER_FEAT_BITS)
			process_feature(d, (int)feat, p + 16, sz - 16);
		return 0;
	}
	case PERF_RECORD_EVENT_UPDATE: {
		uint64_t type, id;
		int idx;

		if (sz < 24)
			return 0;
		memcpy(&type, p + 8, 8);
		memcpy(&id, p + 16, 8);
		idx = id_lookup(d, id);
		if (type == 2 /* PERF_EVENT_UPDATE__NAME */ && idx >= 0 && sz > 24) {
			free(d->evsels[idx].name);
			d->evsels[idx].name = strndup((const char *)p + 24, sz - 24);
		}
		return 0;
	}
	case PERF_RECORD_HEADER_BUILD_ID: {
		struct fbuf b = { p, p + sz };

		feat_build_id(d, &b);
		return 0;
	}
	default:
		return 0;
	}
}

/* Append the payload of a COMPRESSED record to the stream's zbuf. */
static int decompress(struct pevt_data *d, struct stream *s,
		      const struct perf_event_header *ev, uint64_t off)
{
	ZSTD_inBuffer in = { (const uint8_t *)ev + 8, ev->size - 8, 0 };
	size_t ret;

	if (!s->zstd) {
		s->zstd = ZSTD_createDStream();
		if (!s->zstd)
			return -ENOMEM;
		ZSTD_initDStream(s->zstd);
	}
	/* Drop what was delivered, keep a partial record. */
	if (s->zbuf)
		memmove(s->zbuf, s->zbuf + s->zpos, s->zlen - s->zpos);
	s->zlen -= s->zpos;
	s->zpos = 0;
	s->zoff = off;
	d->stats.nr_compressed_bytes += in.size;
	while (in.pos < in.size) {
		ZSTD_outBuffer out;

		if (s->zcap - s->zlen < (1u << 18)) {
			size_t ncap = s->zcap ? s->zcap * 2 : (1u << 20);
			uint8_t *n;

			if (ncap > (1u << 30)) {
				set_err(d, "compressed record at offset %#" PRIx64
					" expands beyond 1 GiB", off);
				return -EFBIG;
			}
			n = realloc(s->zbuf, ncap);
			if (!n)
				return -ENOMEM;
			s->zbuf = n;
			s->zcap = ncap;
		}
		out = (ZSTD_outBuffer){ s->zbuf + s->zlen, s->zcap - s->zlen, 0 };
		ret = ZSTD_decompressStream(s->zstd, &out, &in);
		if (ZSTD_isError(ret)) {
			set_err(d, "zstd: %s in the compressed record at offset %#" PRIx64,
				ZSTD_getErrorName(ret), off);
			return -EBADMSG;
		}
		s->zlen += out.pos;
	}
	return 0;
}

void pevt_data_stats__account(struct pevt_data_stats *st, const struct perf_event_header *ev)
{
	uint32_t type = ev->type;

	st->bytes += ev->size;
	if (pevt_record_type__name(type))
		st->nr[type]++;
	else
		st->nr_unknown++;
	if (type == PERF_RECORD_LOST && ev->size >= 24)
		st->total_lost += ((const uint64_t *)ev)[2];
	else if (type == PERF_RECORD_LOST_SAMPLES && ev->size >= 16)
		st->total_lost_samples += ((const uint64_t *)ev)[1];
}

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		got += r;
	}
	return got;
}

/* The next raw record of the stream: 1, 0 at the end, -errno. */
static int raw_next(struct pevt_data *d, struct stream *s, struct pevt_data_rec *r)
{
	const struct perf_event_header *h;
	struct perf_event_header hh;

	if (!s->base) {		/* pipe */
		int n = read_full(d->fd, &hh, sizeof(hh));

		if (n == 0)
			return 0;
		if (n < (int)sizeof(hh)) {
			set_err(d, "truncated record header at offset %#" PRIx64, s->pos);
			return -EBADMSG;
		}
		if (hh.size < sizeof(hh)) {
			set_err(d, "record of size %u at offset %#" PRIx64, hh.size, s->pos);
			return -EBADMSG;
		}
		memcpy(s->tmp, &hh, sizeof(hh));
		n = read_full(d->fd, (uint8_t *)s->tmp + sizeof(hh), hh.size - sizeof(hh));
		if (n < (int)(hh.size - sizeof(hh))) {
			set_err(d, "truncated %s record at offset %#" PRIx64 " (%d of %u bytes)",
				pevt_record_type__name(hh.type) ?: "unknown", s->pos,
				n < 0 ? 0 : n + (int)sizeof(hh), hh.size);
			return -EBADMSG;
		}
		r->ev = (const void *)s->tmp;
		r->off = s->pos;
		r->transient = true;
		s->pos += hh.size;
		if (hh.type == PERF_RECORD_HEADER_TRACING_DATA && hh.size >= sizeof(hh) + 4) {
			/*
			 * In a pipe the tracepoint formats follow the record,
			 * outside its size: u32 size bytes, padding included
			 * (perf_event__process_tracing_data()).  Not needed for
			 * a report: skipped.
			 */
			uint32_t len;
			char buf[4096];

			memcpy(&len, (uint8_t *)s->tmp + sizeof(hh), sizeof(len));
			for (uint32_t left = len; left; ) {
				n = read_full(d->fd, buf, left < sizeof(buf) ? left : sizeof(buf));
				if (n <= 0) {
					set_err(d, "truncated tracing data at offset %#" PRIx64
						" (%u of %u bytes)", s->pos, len - left, len);
					return -EBADMSG;
				}
				left -= n;
			}
			s->pos += len;
		}
		return 1;
	}
	if (s->pos >= s->off + s->size && s->declared) {
		/* The file ends on a record boundary before its data section does. */
		set_err(d, "truncated data section at offset %#" PRIx64 ": the header says %" PRIu64
			" bytes from offset %#" PRIx64 ", the file ends after %" PRIu64,
			s->pos, s->declared, s->off, s->size);
		return -EBADMSG;
	}
	if (s->pos >= s->off + s->size)
		return 0;
	if (s->off + s->size - s->pos < sizeof(*h)) {
		set_err(d, "truncated record header at offset %#" PRIx64 " (%" PRIu64
			" bytes left)", s->pos, s->off + s->size - s->pos);
		return -EBADMSG;
	}
	memcpy(&hh, s->base + s->pos, sizeof(hh));
	if (hh.size < sizeof(hh)) {
		set_err(d, "record of size %u at offset %#" PRIx64, hh.size, s->pos);
		return -EBADMSG;
	}
	if (hh.size > s->off + s->size - s->pos) {
		set_err(d, "truncated %s record at offset %#" PRIx64 " (%u bytes, %" PRIu64
			" left in the data section)", pevt_record_type__name(hh.type) ?: "unknown",
			s->pos, hh.size, s->off + s->size - s->pos);
		return -EBADMSG;
	}
	r->off = s->pos;
	r->transient = false;
	h = (const void *)(s->base + s->pos);
	if (((uintptr_t)h & 7) || (hh.size & 7)) {
		/* perf keeps records 8-byte aligned; copy an odd one. */
		memcpy(s->tmp, h, hh.size);
		h = (const void *)s->tmp;
		r->transient = true;
	}
	r->ev = h;
	s->pos += hh.size;
	/*
	 * Give back what is well behind: the pages stay in the page cache, a
	 * later access (a queued record, the report's second pass) faults
	 * them in again, but the resident set stays near a window, like
	 * perf's 32 MB mmap window.
	 */
	if (s->pos - s->dropped > 2 * PEVT_DATA_WINDOW)
		pevt_data__drop(d, (int)(s - d->streams), s->dropped, s->pos - PEVT_DATA_WINDOW);
	return 1;
}

int pevt_data__drop(struct pevt_data *d, int stream, uint64_t from, uint64_t to)
{
	struct stream *s;
	uintptr_t a, b;

	if (stream < 0 || stream >= d->nr_streams || !d->streams[stream].base)
		return -EINVAL;
	s = &d->streams[stream];
	if (to > s->map_size)
		to = s->map_size;
	a = ((uintptr_t)s->base + from + 4095) & ~(uintptr_t)4095;
	b = ((uintptr_t)s->base + to) & ~(uintptr_t)4095;
	if (to > s->dropped)
		s->dropped = to;
	if (b <= a)
		return 0;
	return madvise((void *)a, b - a, MADV_DONTNEED) ? -errno : 0;
}

int pevt_data__next(struct pevt_data *d, int stream, struct pevt_data_rec *r)
{
	struct stream *s;
	int ret;

	if (stream < 0 || stream >= d->nr_streams)
		return -ERANGE;
	s = &d->streams[stream];
	if (s->err)
		return s->err;
	for (;;) {
		if (s->zlen - s->zpos >= sizeof(struct perf_event_header)) {
			struct perf_event_header h;

			memcpy(&h, s->zbuf + s->zpos, sizeof(h));
			if (h.size < sizeof(h)) {
				set_err(d, "record of size %u inside the compressed record at offset %#"
					PRIx64, h.size, s->zoff);
				return s->err = -EBADMSG;
			}
			if (h.size <= s->zlen - s->zpos) {
				if (((s->zpos | h.size) & 7) == 0) {
					r->ev = (const void *)(s->zbuf + s->zpos);
				} else {
					memcpy(s->tmp, s->zbuf + s->zpos, h.size);
					r->ev = (const void *)s->tmp;
				}
				s->zpos += h.size;
				r->off = s->zoff;
				r->transient = true;
				r->stream = stream;
				pevt_data_stats__account(&d->stats, r->ev);
				ret = process_meta(d, r->ev);
				if (ret) {
					set_err(d, "bad %s record inside the compressed record at offset %#"
						PRIx64, pevt_record_type__name(r->ev->type), s->zoff);
					return s->err = ret;
				}
				return 1;
			}
		}
		ret = raw_next(d, s, r);
		if (ret <= 0) {
			if (!ret && s->zlen != s->zpos) {
				set_err(d, "stream ends inside a compressed record (%zu bytes left over)",
					s->zlen - s->zpos);
				ret = -EBADMSG;
			}
			if (ret)
				s->err = ret;
			return ret;
		}
		r->stream = stream;
		pevt_data_stats__account(&d->stats, r->ev);
		if (r->ev->type == PERF_RECORD_COMPRESSED) {
			ret = decompress(d, s, r->ev, r->off);
			if (ret)
				return s->err = ret;
			continue;
		}
		ret = process_meta(d, r->ev);
		if (ret) {
			set_err(d, "bad %s record at offset %#" PRIx64,
				pevt_record_type__name(r->ev->type), r->off);
			return s->err = ret;
		}
		return 1;
	}
}

int pevt_data__stream_for_each(struct pevt_data *d, int stream, pevt_data_cb cb, void *ctx)
{
	struct pevt_data_rec r;
	int ret;

	while ((ret = pevt_data__next(d, stream, &r)) > 0) {
		ret = cb(d, &r, ctx);
		if (ret)
			return ret;
	}
	return ret;
}

int pevt_data__for_each(struct pevt_data *d, pevt_data_cb cb, void *ctx)
{
	int i, err;

	if (!d->nr_streams)
		return -EINVAL;
	for (i = 0; i < d->nr_streams; i++) {
		err = pevt_data__stream_for_each(d, i, cb, ctx);
		if (err)
			return err;
	}
	return 0;
}

int pevt_data__nr_streams(const struct pevt_data *d) { return d->nr_streams; }
bool pevt_data__is_pipe(const struct pevt_data *d) { return d->pipe; }
bool pevt_data__is_dir(const struct pevt_data *d) { return d->dir; }
const char *pevt_data__warning(const struct pevt_data *d)
{
	return d->warn[0] ? d->warn : NULL;
}

const char *pevt_data__error(const struct pevt_data *d) { return d->err[0] ? d->err : NULL; }
int pevt_data__nr_evsels(const struct pevt_data *d) { return d->nr_evsels; }
struct pevt_data_stats *pevt_data__stats(struct pevt_data *d) { return &d->stats; }

int pevt_data__process_meta(struct pevt_data *d, const struct perf_event_header *ev)
{
	return process_meta(d, ev);
}

struct pevt_data_evsel *pevt_data__evsel(struct pevt_data *d, int idx)
{
	return idx >= 0 && idx < d->nr_evsels ? &d->evsels[idx] : NULL;
}

const char *pevt_data__str(const struct pevt_data *d, enum pevt_data_str which)
{
	return which < PEVT_DATA_NR_STR ? d->str[which] : NULL;
}

bool pevt_data__has_feat(const struct pevt_data *d, int feat)
{
	return feat >= 0 && feat < HEADER_FEAT_BITS && (d->feats[feat / 64] & (1ull << (feat % 64)));
}

const struct pevt_build_id *pevt_data__build_ids(const struct pevt_data *d, int *nr)
{
	*nr = d->nr_bids;
	return d->bids;
}

int pevt_data__section(const struct pevt_data *d, int stream, uint64_t *offset, uint64_t *size)
{
	if (stream < 0 || stream >= d->nr_streams)
		return -ERANGE;
	*offset = d->streams[stream].off;
	*size = d->streams[stream].size;
	return 0;
}

const void *pevt_data__stream_base(const struct pevt_data *d, int stream)
{
	return stream >= 0 && stream < d->nr_streams ? d->streams[stream].base : NULL;
}
