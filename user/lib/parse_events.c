// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt parse_events: perf-style -e lists to perf_event_attrs.
 *
 * A small recursive-descent scanner over the string.  Every error records
 * the byte offset and text of the token that caused it, so tools can point
 * at it (see pevt_parse_error).  PMU events are resolved through sysfs the
 * way perf does it, without knowing any PMU in advance.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pevt/parse_events.h>
#include "internal/lib.h"

struct pevt_events {
	struct pevt_event_desc *v;
	size_t nr, alloc;
	int nr_groups;
};

/* Parser state for one pevt_events__add() call. */
struct parser {
	const char *s;			/* the whole list */
	size_t pos;			/* cursor */
	const char *pmu_dir;
	const char *tracefs;		/* NULL: search the defaults */
	struct pevt_parse_error *err;
	struct pevt_events *evs;
};

static const struct sym {
	const char *name;
	__u32 type;
	__u64 config;
	const char *unit;
} symbols[] = {
	{ "cpu-clock",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "ns" },
	{ "task-clock",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "ns" },
	{ "page-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, NULL },
	{ "faults",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, NULL },
	{ "context-switches",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, NULL },
	{ "cs",				PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, NULL },
	{ "cpu-migrations",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, NULL },
	{ "migrations",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, NULL },
	{ "minor-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, NULL },
	{ "major-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, NULL },
	{ "alignment-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, NULL },
	{ "emulation-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, NULL },
	{ "dummy",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, NULL },
	{ "bpf-output",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, NULL },
	{ "cgroup-switches",		PERF_TYPE_SOFTWARE, 11 /* PERF_COUNT_SW_CGROUP_SWITCHES */, NULL },
	{ "cpu-cycles",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, NULL },
	{ "cycles",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, NULL },
	{ "instructions",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, NULL },
	{ "cache-references",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, NULL },
	{ "cache-misses",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, NULL },
	{ "branch-instructions",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, NULL },
	{ "branches",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, NULL },
	{ "branch-misses",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, NULL },
	{ "bus-cycles",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, NULL },
	{ "stalled-cycles-frontend",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, NULL },
	{ "idle-cycles-frontend",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, NULL },
	{ "stalled-cycles-backend",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, NULL },
	{ "idle-cycles-backend",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, NULL },
	{ "ref-cycles",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, NULL },
};

static const struct sym *sym_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++)
		if (strlen(symbols[i].name) == len &&
		    !strncmp(symbols[i].name, name, len))
			return &symbols[i];
	return NULL;
}

/*
 * perr() - record an error at [@pos, @pos + @len) of the list and return
 * @ret.  The first error wins: callers unwinding do not overwrite it.
 */
static int __attribute__((format(printf, 5, 6)))
perr(struct parser *p, int ret, size_t pos, size_t len, const char *fmt, ...)
{
	struct pevt_parse_error *e = p->err;
	va_list ap;

	if (!e || e->msg[0])
		return ret;
	e->pos = (int)pos;
	if (len >= sizeof(e->token))
		len = sizeof(e->token) - 1;
	memcpy(e->token, p->s + pos, len);
	e->token[len] = '\0';
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return ret;
}

/* Read a small sysfs/tracefs file into @buf, trailing newline stripped. */
static int read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return (int)n;
}

static bool is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static size_t scan_name(struct parser *p)
{
	size_t start = p->pos;

	while (is_name_char(p->s[p->pos]))
		p->pos++;
	return p->pos - start;
}

/* ---- list storage ---------------------------------------------------- */

struct pevt_events *pevt_events__new(void)
{
	struct pevt_events *evs = calloc(1, sizeof(*evs));

	return evs ? evs : libpevt_err_ptr(-ENOMEM);
}

static void desc_free(struct pevt_event_desc *d)
{
	free(d->name);
	free(d->pmu);
}

void pevt_events__delete(struct pevt_events *evs)
{
	size_t i;

	if (!evs)
		return;
	for (i = 0; i < evs->nr; i++)
		desc_free(&evs->v[i]);
	free(evs->v);
	free(evs);
}

size_t pevt_events__nr(const struct pevt_events *evs)
{
	return evs ? evs->nr : 0;
}

size_t pevt_events__nr_groups(const struct pevt_events *evs)
{
	return evs ? (size_t)evs->nr_groups : 0;
}

const struct pevt_event_desc *pevt_events__get(const struct pevt_events *evs,
					       size_t idx)
{
	if (!evs || idx >= evs->nr)
		return libpevt_err_ptr(-EINVAL);
	return &evs->v[idx];
}

static struct pevt_event_desc *desc_new(struct parser *p)
{
	struct pevt_events *evs = p->evs;
	struct pevt_event_desc *d;

	if (evs->nr == evs->alloc) {
		size_t n = evs->alloc ? evs->alloc * 2 : 8;
		void *v = realloc(evs->v, n * sizeof(*evs->v));

		if (!v)
			return NULL;
		evs->v = v;
		evs->alloc = n;
	}
	d = &evs->v[evs->nr++];
	memset(d, 0, sizeof(*d));
	d->attr.size = sizeof(d->attr);
	return d;
}

/* ---- modifiers ------------------------------------------------------- */

struct mods {
	bool set, u, k, h, pinned, sample_read;
};

/* Scan modifier letters up to ',', '}' or the end. */
static int parse_mods(struct parser *p, struct mods *m)
{
	size_t start = p->pos;

	memset(m, 0, sizeof(*m));
	while (p->s[p->pos] && p->s[p->pos] != ',' && p->s[p->pos] != '}') {
		char c = p->s[p->pos];

		switch (c) {
		case 'u': m->u = true; break;
		case 'k': m->k = true; break;
		case 'h': m->h = true; break;
		case 'D': m->pinned = true; break;
		case 'S': m->sample_read = true; break;
		default:
			return perr(p, -EINVAL, p->pos, 1,
				    "unsupported modifier '%c' (supported: u, k, h, D, S)", c);
		}
		p->pos++;
	}
	if (p->pos == start)
		return perr(p, -EINVAL, start ? start - 1 : 0, 1,
			    "empty modifier after ':'");
	m->set = true;
	return 0;
}

/* perf's semantics: the listed privilege levels are counted, others excluded. */
static void apply_mods(struct perf_event_attr *attr, const struct mods *m)
{
	if (m->u || m->k || m->h) {
		attr->exclude_user = !m->u;
		attr->exclude_kernel = !m->k;
		attr->exclude_hv = !m->h;
	}
	if (m->pinned)
		attr->pinned = 1;
	/* perf's S: each sample carries the counter value (PERF_SAMPLE_READ). */
	if (m->sample_read)
		attr->sample_type |= PERF_SAMPLE_READ;
}

/* ---- PMU events (sysfs) -------------------------------------------------- */

struct pmu {
	char dir[PATH_MAX];
	const char *name;
	size_t name_len;
};

/*
 * Put @val into the bits a sysfs format spec names, lowest value bit
 * first ("config:0-7,32-35": value bits 0-7 to config 0-7, 8-11 to
 * config 32-35), as perf's pmu_format_value() does.
 */
static int format_apply(struct parser *p, size_t tpos, size_t tlen,
			const char *field, const char *spec,
			struct perf_event_attr *attr, __u64 val)
{
	const char *q = strchr(spec, ':');
	__u64 *dst, v = val;
	size_t n;
	int bit = 0;

	if (!q)
		goto bad;
	n = q - spec;
	if (n == 6 && !strncmp(spec, "config", 6))
		dst = &attr->config;
	else if (n == 7 && !strncmp(spec, "config1", 7))
		dst = &attr->config1;
	else if (n == 7 && !strncmp(spec, "config2", 7))
		dst = &attr->config2;
	else
		goto bad;
	q++;
	while (*q) {
		char *end;
		unsigned long lo, hi, b;

		lo = strtoul(q, &end, 10);
		if (end == q)
			goto bad;
		hi = lo;
		if (*end == '-') {
			q = end + 1;
			hi = strtoul(q, &end, 10);
			if (end == q)
				goto bad;
		}
		if (lo > hi || hi > 63)
			goto bad;
		for (b = lo; b <= hi; b++, bit++) {
			*dst &= ~(1ULL << b);
			*dst |= (v & 1) << b;
			v >>= 1;
		}
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		q = end;
	}
	if (v)
		return perr(p, -ERANGE, tpos, tlen,
			    "value %#" PRIx64 " too big for '%s' (%d bits: %s)",
			    (uint64_t)val, field, bit, spec);
	return 0;
bad:
	return perr(p, -EINVAL, tpos, tlen, "bad sysfs format for '%s': '%s'",
		    field, spec);
}

static int parse_terms(struct parser *p, const struct pmu *pmu,
		       struct pevt_event_desc *d, const char *terms,
		       size_t base, bool in_alias, size_t alias_len);

/*
 * One term "name[=value]" at [@tpos, @tpos + @tlen) of the list.  Inside
 * an alias, errors point at the alias term the user wrote.
 */
static int parse_term(struct parser *p, const struct pmu *pmu,
		      struct pevt_event_desc *d, const char *term, size_t len,
		      size_t tpos, size_t tlen, bool in_alias)
{
	char name[64], val[128], path[PATH_MAX + 128], buf[512];
	const char *eq = memchr(term, '=', len);
	size_t nlen = eq ? (size_t)(eq - term) : len;
	bool has_val = eq != NULL;
	unsigned long long v = 1;
	char *end;
	int ret;

	if (!nlen)
		return perr(p, -EINVAL, tpos, tlen, "empty term name");
	if (nlen >= sizeof(name))
		return perr(p, -EINVAL, tpos, tlen, "term name too long");
	memcpy(name, term, nlen);
	name[nlen] = '\0';
	if (has_val) {
		size_t vlen = len - nlen - 1;

		if (!vlen)
			return perr(p, -EINVAL, tpos, tlen, "missing value for term '%s'", name);
		if (vlen >= sizeof(val))
			return perr(p, -EINVAL, tpos, tlen, "value too long for term '%s'", name);
		memcpy(val, eq + 1, vlen);
		val[vlen] = '\0';
	}
	if (!strcmp(name, "name")) {
		if (!has_val)
			return perr(p, -EINVAL, tpos, tlen, "missing value for term 'name'");
		free(d->name);
		d->name = strdup(val);
		return d->name ? 0 : -ENOMEM;
	}
	if (has_val) {
		errno = 0;
		v = strtoull(val, &end, 0);
		if (errno || *end || val[0] == '-')
			return perr(p, -EINVAL, tpos, tlen,
				    "bad value '%s' for term '%s' (a number is expected)",
				    val, name);
	}
	if (!strcmp(name, "config")) {
		d->attr.config = v;
		return 0;
	}
	if (!strcmp(name, "config1")) {
		d->attr.config1 = v;
		return 0;
	}
	if (!strcmp(name, "config2")) {
		d->attr.config2 = v;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/format/%s", pmu->dir, name);
	ret = read_file(path, buf, sizeof(buf));
	if (ret >= 0)
		return format_apply(p, tpos, tlen, name, buf, &d->attr, v);
	snprintf(path, sizeof(path), "%s/events/%s", pmu->dir, name);
	if (!has_val && !in_alias && read_file(path, buf, sizeof(buf)) >= 0) {
		char unit[sizeof(d->unit)];

		/* perf's events/<alias>.unit: what the count is in. */
		snprintf(path, sizeof(path), "%s/events/%s.unit", pmu->dir, name);
		if (read_file(path, unit, sizeof(unit)) > 0)
			memcpy(d->unit, unit, sizeof(unit));
		return parse_terms(p, pmu, d, buf, tpos, true, tlen);
	}
	return perr(p, -ENOENT, tpos, tlen,
		    "unknown term '%s' for PMU '%.*s' (not config, config1, config2, name, "
		    "a format/ field%s)", name, (int)pmu->name_len, pmu->name,
		    in_alias ? "; inside an events/ alias" : " or an events/ alias");
}

/*
 * Split @terms on ','.  Outside an alias @terms is the text between the
 * slashes and starts at offset @base of the list; inside one it is the
 * alias file's content and every error points at the alias term
 * [@base, @base + @alias_len).
 */
static int parse_terms(struct parser *p, const struct pmu *pmu,
		       struct pevt_event_desc *d, const char *terms,
		       size_t base, bool in_alias, size_t alias_len)
{
	const char *t = terms;

	while (*t) {
		const char *c = strchr(t, ',');
		size_t len = c ? (size_t)(c - t) : strlen(t);
		int ret;

		ret = parse_term(p, pmu, d, t, len,
				 in_alias ? base : base + (t - terms),
				 in_alias ? alias_len : len, in_alias);
		if (ret)
			return ret;
		t += len;
		if (*t == ',') {
			t++;
			if (!*t)
				return perr(p, -EINVAL,
					    in_alias ? base : base + (t - terms) - 1,
					    in_alias ? alias_len : 1,
					    "empty term after ','");
		}
	}
	return 0;
}

/* "pmu/terms/": the cursor is on the first '/'. */
static int parse_pmu_event(struct parser *p, struct pevt_event_desc *d,
			   size_t start, size_t name_len)
{
	char buf[64], *terms;
	struct pmu pmu;
	size_t tstart, tlen;
	const char *close;
	int ret, type;

	pmu.name = p->s + start;
	pmu.name_len = name_len;
	tstart = ++p->pos;
	close = strchr(p->s + tstart, '/');
	if (!close)
		return perr(p, -EINVAL, start, strlen(p->s + start),
			    "missing '/' closing the terms of PMU '%.*s'",
			    (int)name_len, p->s + start);
	tlen = close - (p->s + tstart);
	snprintf(pmu.dir, sizeof(pmu.dir), "%s/%.*s", p->pmu_dir,
		 (int)name_len, p->s + start);
	{
		char path[PATH_MAX + 8];

		snprintf(path, sizeof(path), "%s/type", pmu.dir);
		ret = read_file(path, buf, sizeof(buf));
	}
	if (ret < 0)
		return perr(p, -ENOENT, start, name_len,
			    "unknown PMU '%.*s' (no %s/type)", (int)name_len,
			    p->s + start, pmu.dir);
	type = atoi(buf);
	d->attr.type = type;
	d->pmu = strndup(p->s + start, name_len);
	d->name = strndup(p->s + start, close + 1 - (p->s + start));
	terms = strndup(p->s + tstart, tlen);
	if (!d->pmu || !d->name || !terms) {
		free(terms);
		return -ENOMEM;
	}
	if (tlen && terms[0] == ',')
		ret = perr(p, -EINVAL, tstart, 1, "empty term before ','");
	else
		ret = parse_terms(p, &pmu, d, terms, tstart, false, 0);
	free(terms);
	p->pos = close + 1 - p->s;
	return ret;
}

/* ---- tracepoints ------------------------------------------------------ */

static const char *tracefs_dir(struct parser *p)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[PATH_MAX];
	size_t i;
	FILE *f;

	if (p->tracefs)
		return p->tracefs;
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/header_page", dirs[i]);
		f = fopen(path, "re");
		if (f) {
			fclose(f);
			return dirs[i];
		}
	}
	return NULL;
}

static bool tracefs_has_system(struct parser *p, const char *sys, size_t len)
{
	const char *dir = tracefs_dir(p);
	char path[PATH_MAX + 64];
	FILE *f;

	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/events/%.*s/enable", dir, (int)len, sys);
	f = fopen(path, "re");
	if (f)
		fclose(f);
	return f != NULL;
}

/* "sys:tp": [start, start + len) is the whole "sys:tp". */
static int parse_tracepoint(struct parser *p, struct pevt_event_desc *d,
			    size_t start, size_t sys_len, size_t len)
{
	const char *dir = tracefs_dir(p);
	char path[PATH_MAX + 128], buf[32];
	const char *s = p->s + start;
	char *end;
	unsigned long long id;

	if (!dir)
		return perr(p, -ENOENT, start, len,
			    "tracepoint '%.*s': tracefs not found (mount it on /sys/kernel/tracing)",
			    (int)len, s);
	snprintf(path, sizeof(path), "%s/events/%.*s/%.*s/id", dir,
		 (int)sys_len, s, (int)(len - sys_len - 1), s + sys_len + 1);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return perr(p, -ENOENT, start, len,
			    "unknown tracepoint '%.*s' (no %s)", (int)len, s, path);
	id = strtoull(buf, &end, 10);
	if (*end || end == buf)
		return perr(p, -EINVAL, start, len, "bad tracepoint id in %s", path);
	d->attr.type = PERF_TYPE_TRACEPOINT;
	d->attr.config = id;
	d->name = strndup(s, len);
	return d->name ? 0 : -ENOMEM;
}

/* ---- events and groups --------------------------------------------------- */

static bool is_raw(const char *s, size_t len)
{
	size_t i;

	if (len < 2 || s[0] != 'r')
		return false;
	for (i = 1; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return len <= 17;
}

static bool all_mod_chars(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!strchr("ukhD", s[i]))
			return false;
	return len > 0;
}

static bool at_event_end(struct parser *p)
{
	char c = p->s[p->pos];

	return !c || c == ',' || c == '}';
}

static int expect_event_end(struct parser *p)
{
	char c = p->s[p->pos];

	if (at_event_end(p))
		return 0;
	if (c == '{')
		return perr(p, -EINVAL, p->pos, 1, "nested or misplaced '{' (groups cannot nest)");
	return perr(p, -EINVAL, p->pos, 1, "unexpected character '%c'", c);
}

static int parse_event(struct parser *p, int group, bool grouped)
{
	size_t start = p->pos, len;
	struct pevt_event_desc *d;
	struct mods m = { 0 };
	size_t typed_len = 0;
	bool tp_name = false;
	int ret;

	if (p->s[p->pos] == '{')
		return perr(p, -EINVAL, p->pos, 1, "nested '{' (groups cannot nest)");
	len = scan_name(p);
	if (!len) {
		if (at_event_end(p))
			return perr(p, -EINVAL, p->pos, 1, "empty event");
		return perr(p, -EINVAL, p->pos, 1, "unexpected character '%c'",
			    p->s[p->pos]);
	}
	d = desc_new(p);
	if (!d)
		return -ENOMEM;
	d->pos = (int)start;
	d->group = group;
	d->grouped = grouped;

	if (p->s[p->pos] == '/') {
		ret = parse_pmu_event(p, d, start, len);
		if (ret)
			return ret;
		typed_len = p->pos - start;	/* "pmu/terms/" */
		/* perf accepts both "pmu/x/u" and "pmu/x/:u". */
		if (p->s[p->pos] == ':')
			p->pos++;
		if (!at_event_end(p)) {
			ret = parse_mods(p, &m);
			if (ret)
				return ret;
		}
	} else {
		const struct sym *sym = sym_find(p->s + start, len);
		bool tp = false;

		if (!sym && p->s[p->pos] == ':') {
			size_t save = p->pos, len2;

			p->pos++;
			len2 = scan_name(p);
			if (p->s[p->pos] == '*' || p->s[p->pos] == '?')
				return perr(p, -EINVAL, start, p->pos + 1 - start,
					    "tracepoint wildcards are not supported");
			/*
			 * "sys:tp" or "name:mods".  A name that is neither a
			 * symbol nor a tracefs system followed by modifier
			 * letters is an unknown event, not a tracepoint.
			 */
			if (len2 && (tracefs_has_system(p, p->s + start, len) ||
				     !all_mod_chars(p->s + save + 1, len2))) {
				ret = parse_tracepoint(p, d, start, len, len + 1 + len2);
				if (ret)
					return ret;
				tp = true;
				tp_name = true;
			} else {
				p->pos = save;
			}
		}
		if (!tp) {
			if (sym) {
				d->attr.type = sym->type;
				d->attr.config = sym->config;
				if (sym->unit)
					strcpy(d->unit, sym->unit);
			} else if (is_raw(p->s + start, len)) {
				d->attr.type = PERF_TYPE_RAW;
				d->attr.config = strtoull(p->s + start + 1, NULL, 16);
			} else {
				return perr(p, -ENOENT, start, len,
					    "unknown event '%.*s' (not a software, hardware "
					    "or raw event; PMU events are written pmu/terms/)",
					    (int)len, p->s + start);
			}
			d->name = strndup(p->s + start, len);
			if (!d->name)
				return -ENOMEM;
			typed_len = len;
		}
		if (p->s[p->pos] == ':') {
			p->pos++;
			ret = parse_mods(p, &m);
			if (ret)
				return ret;
		}
	}
	if (m.set)
		apply_mods(&d->attr, &m);
	/*
	 * perf (parse-events.y, parse_events_name()) names an event by its
	 * text as typed, modifiers included ("cpu-clock:u", "cpu/.../k"),
	 * unless it has a name already: a tracepoint's "sys:tp", a name=
	 * term.  Group modifiers are not part of a member's name.
	 */
	if (!tp_name && m.set && d->name && !strncmp(d->name, p->s + start, strlen(d->name)) &&
	    strlen(d->name) == typed_len) {
		char *full = strndup(p->s + start, p->pos - start);

		if (!full)
			return -ENOMEM;
		free(d->name);
		d->name = full;
	}
	/*
	 * perf's exclude_guest: set by default (event_attr_init(), no guest
	 * profiling), but an event's own modifier decides it: only 'u' sets
	 * it (get_event_modifier(): "cpu-clock:k" has it clear).
	 */
	d->attr.exclude_guest = m.set ? m.u : 1;
	return expect_event_end(p);
}

static int parse_group(struct parser *p, int group)
{
	size_t open = p->pos, first = p->evs->nr, i;
	struct mods m;
	int ret;

	p->pos++;	/* '{' */
	if (p->s[p->pos] == '}')
		return perr(p, -EINVAL, open, 2, "empty group");
	for (;;) {
		ret = parse_event(p, group, true);
		if (ret)
			return ret;
		if (p->s[p->pos] == '}')
			break;
		if (!p->s[p->pos])
			return perr(p, -EINVAL, open, 1, "unbalanced '{': no closing '}'");
		p->pos++;	/* ',' */
	}
	p->pos++;	/* '}' */
	if (p->s[p->pos] == ':') {
		p->pos++;
		ret = parse_mods(p, &m);
		if (ret)
			return ret;
		/*
		 * A group modifier applies to every member like perf's
		 * get_event_modifier() with the member's attr: a member
		 * without its own takes it; one with its own also counts the
		 * levels the group lists ("{a:k,b}:u": a counts u and k).
		 */
		for (i = first; i < p->evs->nr; i++) {
			struct perf_event_attr *a = &p->evs->v[i].attr;
			bool own = a->exclude_user || a->exclude_kernel || a->exclude_hv;

			if (!own) {
				apply_mods(a, &(struct mods){ .u = m.u, .k = m.k, .h = m.h });
			} else {
				a->exclude_user &= !m.u;
				a->exclude_kernel &= !m.k;
				a->exclude_hv &= !m.h;
			}
			/* perf: a group's 'u' sets every member's exclude_guest */
			if (m.u)
				a->exclude_guest = 1;
		}
		/* Only a leader can be pinned: members follow it. */
		if (m.pinned)
			p->evs->v[first].attr.pinned = 1;
		for (i = first; m.sample_read && i < p->evs->nr; i++)
			p->evs->v[i].attr.sample_type |= PERF_SAMPLE_READ;
	}
	if (p->s[p->pos] == '}')
		return perr(p, -EINVAL, p->pos, 1, "unbalanced '}': no opening '{'");
	return expect_event_end(p);
}

static void finish_groups(struct pevt_events *evs, size_t first)
{
	size_t i, j;

	for (i = first; i < evs->nr; i = j) {
		for (j = i; j < evs->nr && evs->v[j].group == evs->v[i].group; j++)
			evs->v[j].leader = (int)i;
		evs->v[i].nr_members = (int)(j - i);
	}
}

int pevt_events__add(struct pevt_events *evs, const char *str,
		     const struct pevt_parse_opts *opts,
		     struct pevt_parse_error *err)
{
	struct pevt_parse_error dummy;
	struct parser p = {
		.s = str, .evs = evs, .err = err ? err : &dummy,
		.pmu_dir = PEVT_PMU_DIR,
	};
	size_t first, i;
	int group, ret = 0;

	memset(p.err, 0, sizeof(*p.err));
	p.err->pos = -1;
	if (!evs || !str || (opts && opts->sz < sizeof(size_t)))
		return libpevt_err(-EINVAL);
	if (opts) {
		if (opts->sz > offsetof(struct pevt_parse_opts, pmu_dir) && opts->pmu_dir)
			p.pmu_dir = opts->pmu_dir;
		if (opts->sz > offsetof(struct pevt_parse_opts, tracefs))
			p.tracefs = opts->tracefs;
	}
	first = evs->nr;
	group = evs->nr_groups;
	if (!*str) {
		ret = perr(&p, -EINVAL, 0, 0, "empty event list");
		goto out;
	}
	for (;;) {
		char c = str[p.pos];

		if (c == '{')
			ret = parse_group(&p, group);
		else if (c == '}')
			ret = perr(&p, -EINVAL, p.pos, 1, "unbalanced '}': no opening '{'");
		else
			ret = parse_event(&p, group, false);
		if (ret)
			break;
		group++;
		if (!str[p.pos])
			break;
		if (str[p.pos] == '}') {
			ret = perr(&p, -EINVAL, p.pos, 1, "unbalanced '}': no opening '{'");
			break;
		}
		p.pos++;	/* ',' */
		if (!str[p.pos]) {
			ret = perr(&p, -EINVAL, p.pos - 1, 1, "empty event after ','");
			break;
		}
	}
out:
	if (ret) {
		if (ret == -ENOMEM && !p.err->msg[0])
			snprintf(p.err->msg, sizeof(p.err->msg), "out of memory");
		for (i = first; i < evs->nr; i++)
			desc_free(&evs->v[i]);
		evs->nr = first;
		return libpevt_err(ret);
	}
	evs->nr_groups = group;
	finish_groups(evs, first);
	return 0;
}

struct pevt_events *pevt_events__parse(const char *str,
				       const struct pevt_parse_opts *opts,
				       struct pevt_parse_error *err)
{
	struct pevt_events *evs = pevt_events__new();
	int ret;

	if (!evs)
		return NULL;
	ret = pevt_events__add(evs, str, opts, err);
	if (ret) {
		pevt_events__delete(evs);
		return libpevt_err_ptr(ret);
	}
	return evs;
}

/* ---- CPU lists ------------------------------------------------------------ */

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int pevt_cpu_list__parse(const char *str, int **cpus)
{
	const char *s = str;
	int *v = NULL, n = 0, alloc = 0, i, j;

	if (!str || !cpus)
		return libpevt_err(-EINVAL);
	while (*s) {
		char *end;
		long lo, hi, c;

		if (!isdigit((unsigned char)*s))
			goto bad;
		lo = strtol(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				goto bad;
			hi = strtol(s, &end, 10);
		}
		if (lo > hi || hi >= 65536)
			goto bad;
		for (c = lo; c <= hi; c++) {
			if (n == alloc) {
				int *nv;

				alloc = alloc ? alloc * 2 : 16;
				nv = realloc(v, alloc * sizeof(*v));
				if (!nv) {
					free(v);
					return libpevt_err(-ENOMEM);
				}
				v = nv;
			}
			v[n++] = (int)c;
		}
		s = end;
		if (*s == ',' && s[1])
			s++;
		else if (*s && !(*s == '\n' && !s[1]))
			goto bad;
		else if (*s)
			s++;
	}
	if (!n)
		goto bad;
	qsort(v, n, sizeof(*v), cmp_int);
	for (i = j = 0; i < n; i++)
		if (!j || v[j - 1] != v[i])
			v[j++] = v[i];
	*cpus = v;
	return j;
bad:
	free(v);
	return libpevt_err(-EINVAL);
}

long long pevt_tracepoint__id(const char *name)
{
	struct pevt_parse_error err;
	struct pevt_events *evs;
	long long id = -ENOENT;

	evs = pevt_events__parse(name, NULL, &err);
	if (!evs)
		return -errno;
	if (pevt_events__nr(evs) == 1 &&
	    pevt_events__get(evs, 0)->attr.type == PERF_TYPE_TRACEPOINT)
		id = pevt_events__get(evs, 0)->attr.config;
	pevt_events__delete(evs);
	return id;
}
