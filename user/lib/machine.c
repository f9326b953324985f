// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - threads, comms, maps and DSOs of a perf.data, by time
 * (tools/perf/util/machine.c, thread.c, maps.c for what perf does).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <pevt/inline.h>
#include <pevt/machine.h>
#include "internal/bigalloc.h"
#include <pevt/ordered.h>

#define TID_HASH	4096
#define STR_HASH	4096
#define MISC_COMM_EXEC	(1 << 13)
#define MISC_MMAP_BUILD_ID (1 << 14)

struct istr {
	struct istr *next;
	char s[];
};

struct pevt_machine {
	struct pevt_data *d;
	struct pevt_thread *tids[TID_HASH];
	struct istr *strs[STR_HASH];
	struct pevt_dso *dsos;
	unsigned int nr_dsos;
	struct pevt_maps kmaps;		/* kernel maps (pid -1) */
	char *kallsyms, *symfs;
	bool no_buildid_cache;
	uint64_t last_time;
	bool modules_added;
	struct pevt_kprefetch *kprefetch;	/* symbols.c */
};

static unsigned int hash_str(const char *s)
{
	unsigned int h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static const char *intern(struct pevt_machine *m, const char *s)
{
	unsigned int h = hash_str(s) % STR_HASH;
	struct istr *i;

	for (i = m->strs[h]; i; i = i->next)
		if (!strcmp(i->s, s))
			return i->s;
	i = malloc(sizeof(*i) + strlen(s) + 1);
	if (!i)
		return NULL;
	strcpy(i->s, s);
	i->next = m->strs[h];
	m->strs[h] = i;
	return i->s;
}

struct pevt_machine *pevt_machine__new(struct pevt_data *d, const struct pevt_machine_opts *o)
{
	struct pevt_machine *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->d = d;
	if (o && o->kallsyms)
		m->kallsyms = strdup(o->kallsyms);
	if (o && o->symfs)
		m->symfs = strdup(o->symfs);
	m->no_buildid_cache = o && o->no_buildid_cache;
	return m;
}

static void maps_put(struct pevt_maps *maps)
{
	if (maps && --maps->refcnt == 0) {
		free(maps->v);
		free(maps);
	}
}

void pevt_machine__delete(struct pevt_machine *m)
{
	struct pevt_dso *dso, *dn;
	int i;

	if (!m)
		return;
	pevt_kprefetch__delete(m->kprefetch);
	for (i = 0; i < TID_HASH; i++) {
		struct pevt_thread *t = m->tids[i], *n;

		for (; t; t = n) {
			n = t->next;
			maps_put(t->maps);
			free(t->comms);
			free(t);
		}
	}
	for (i = 0; i < STR_HASH; i++) {
		struct istr *s = m->strs[i], *n;

		for (; s; s = n) {
			n = s->next;
			free(s);
		}
	}
	for (dso = m->dsos; dso; dso = dn) {
		dn = dso->next;
		pevt_dso__inline_free(dso);
		free(dso->symsrc);
		free(dso->long_name);
		free(dso->short_buf);
		pevt_big_free(dso->syms, dso->syms_bytes);
		pevt_big_free(dso->strtab, dso->strtab_bytes);
		free(dso->sym_index);
		pthread_mutex_destroy(&dso->lock);
		free(dso);
	}
	free(m->kmaps.v);
	free(m->kallsyms);
	free(m->symfs);
	free(m);
}

const char *pevt_machine__kallsyms(struct pevt_machine *m) { return m->kallsyms; }
struct pevt_kprefetch *pevt_machine__kprefetch(struct pevt_machine *m) { return m->kprefetch; }
void pevt_machine__set_kprefetch(struct pevt_machine *m, struct pevt_kprefetch *k) { m->kprefetch = k; }
const char *pevt_machine__symfs(struct pevt_machine *m) { return m->symfs; }
bool pevt_machine__use_buildid_cache(struct pevt_machine *m) { return !m->no_buildid_cache; }
struct pevt_dso *pevt_machine__dsos(struct pevt_machine *m) { return m->dsos; }

const struct pevt_build_id *pevt_machine__build_id(struct pevt_machine *m, const char *name)
{
	const struct pevt_build_id *b;
	int nr, i;

	b = pevt_data__build_ids(m->d, &nr);
	for (i = 0; i < nr; i++)
		if (b[i].filename && !strcmp(b[i].filename, name))
			return &b[i];
	return NULL;
}

static struct pevt_dso *findnew_dso(struct pevt_machine *m, const char *name)
{
	struct pevt_dso *dso;
	const char *slash;

	for (dso = m->dsos; dso; dso = dso->next)
		if (!strcmp(dso->long_name, name))
			return dso;
	dso = calloc(1, sizeof(*dso));
	if (!dso)
		return NULL;
	dso->long_name = strdup(name);
	if (!dso->long_name) {
		free(dso);
		return NULL;
	}
	slash = strrchr(dso->long_name, '/');
	dso->short_name = name[0] == '/' && slash ? slash + 1 : dso->long_name;
	{
		int tid;

		/* dso__set_basename() */
		if (sscanf(name, "/tmp/perf-%d.map", &tid) == 1 &&
		    asprintf(&dso->short_buf, "[JIT] tid %d", tid) > 0)
			dso->short_name = dso->short_buf;
	}
	dso->kernel = !strcmp(name, "[kernel.kallsyms]");
	pthread_mutex_init(&dso->lock, NULL);
	dso->idx = m->nr_dsos++;
	dso->next = m->dsos;
	m->dsos = dso;
	return dso;
}

/*
 * machine__create_modules(): perf report maps the modules of the running
 * system (/proc/modules) whatever the file says, over the kernel map; their
 * symbols are kallsyms' "name\t[module]" lines (dso__split_kallsyms()).
 */
static int maps_insert(struct pevt_maps *maps, struct pevt_map *nm);

static int add_proc_modules(struct pevt_machine *m)
{
	char line[512], name[128];
	unsigned long long size, addr;
	FILE *f;

	if (m->modules_added)
		return 0;
	m->modules_added = true;
	f = fopen("/proc/modules", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct pevt_map nm = { .end_time = UINT64_MAX, .identity = true };
		char mod[160];

		if (sscanf(line, "%127s %llu %*s %*s %*s %llx", name, &size, &addr) != 3 || !addr)
			continue;
		snprintf(mod, sizeof(mod), "[%s]", name);
		nm.start = addr;
		nm.end = addr + size;
		nm.dso = findnew_dso(m, mod);
		if (!nm.dso) {
			fclose(f);
			return -ENOMEM;
		}
		nm.dso->kmodule = true;
		if (maps_insert(&m->kmaps, &nm)) {
			fclose(f);
			return -ENOMEM;
		}
	}
	fclose(f);
	return 0;
}

/* ---- threads ------------------------------------------------------------ */

static struct pevt_maps *maps_new(void)
{
	struct pevt_maps *maps = calloc(1, sizeof(*maps));

	if (maps)
		maps->refcnt = 1;
	return maps;
}

static int add_comm(struct pevt_machine *m, struct pevt_thread *t, const char *s,
		    uint64_t time, bool exec)
{
	struct pevt_comm *n;
	size_t i;

	n = realloc(t->comms, (t->nr_comms + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->comms = n;
	/* Keep them by time; equal times: the later record wins. */
	for (i = t->nr_comms; i > 0 && n[i - 1].time > time; i--)
		n[i] = n[i - 1];
	n[i].time = time;
	n[i].str = intern(m, s);
	n[i].exec = exec;
	t->nr_comms++;
	return n[i].str ? 0 : -ENOMEM;
}

/*
 * A thread's first comm (COMM record, or its parent's at FORK) replaces
 * its ":tid": perf overrides the default comm in place
 * (____thread__set_comm()), so the samples taken before it, a child's
 * between fork and exec among them, are shown under the new name; later
 * comms start at their time.
 */
static int set_comm(struct pevt_machine *m, struct pevt_thread *t, const char *s,
		    uint64_t time, bool exec)
{
	if (t->comm_set)
		return add_comm(m, t, s, time, exec);
	t->comm_set = true;
	t->comms[0].str = intern(m, s);
	t->comms[0].exec = exec;
	return t->comms[0].str ? 0 : -ENOMEM;
}

/* A new thread's comm: ":tid"; perf registers the idle task as "swapper" (machine__idle_thread()) */
static void default_comm(char *buf, size_t size, int32_t tid)
{
	if (tid)
		snprintf(buf, size, ":%d", tid);
	else
		snprintf(buf, size, "swapper");
}

static struct pevt_thread *thread_new(struct pevt_machine *m, int32_t pid, int32_t tid,
				      uint64_t start)
{
	struct pevt_thread *t = calloc(1, sizeof(*t)), **head;
	char buf[32];

	if (!t)
		return NULL;
	t->pid = pid;
	t->tid = tid;
	t->start = start;
	t->end = UINT64_MAX;
	default_comm(buf, sizeof(buf), tid);
	if (add_comm(m, t, buf, 0, false)) {
		free(t);
		return NULL;
	}
	t->comm_set = !tid;	/* swapper's is set, as machine__idle_thread()'s */
	head = &m->tids[(uint32_t)tid % TID_HASH];
	/* Newest first per tid: a reused tid shadows the older thread. */
	t->next = *head;
	*head = t;
	return t;
}

struct pevt_thread *pevt_machine__find_thread(struct pevt_machine *m, int32_t tid, uint64_t time)
{
	struct pevt_thread *t, *last = NULL;

	for (t = m->tids[(uint32_t)tid % TID_HASH]; t; t = t->next) {
		if (t->tid != tid)
			continue;
		if (t->start <= time)
			return t;
		last = t;
	}
	return last;
}

struct pevt_thread *pevt_machine__thread(struct pevt_machine *m, int32_t pid, int32_t tid,
					 uint64_t time)
{
	struct pevt_thread *t = pevt_machine__find_thread(m, tid, time), *leader;

	if (t) {
		if (t->pid == -1 && pid != -1)
			t->pid = pid;
		if (t->maps)
			return t;
	} else {
		t = thread_new(m, pid, tid, 0);
		if (!t)
			return NULL;
	}
	/* The maps belong to the process: share the leader's. */
	if (pid != -1 && pid != tid) {
		leader = pevt_machine__thread(m, pid, pid, time);
		if (leader && leader->maps) {
			t->maps = leader->maps;
			t->maps->refcnt++;
			return t;
		}
	}
	t->maps = maps_new();
	return t->maps ? t : NULL;
}

static const char *comm_at(const struct pevt_thread *t, uint64_t time)
{
	size_t lo = 0, hi = t->nr_comms;

	/* The last comm with time <= @time (the first one if none). */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->comms[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return t->comms[lo ? lo - 1 : 0].str;
}

const char *pevt_thread__comm(const struct pevt_thread *t, uint64_t time)
{
	return comm_at(t, time);
}

const char *pevt_thread__renamed(const struct pevt_thread *t, const char *comm)
{
	char buf[32];

	if (!t->comm_set || t->comms[0].str == comm)
		return NULL;
	default_comm(buf, sizeof(buf), t->tid);
	return strcmp(comm, buf) ? NULL : t->comms[0].str;
}

const char *pevt_thread__last_comm(const struct pevt_thread *t)
{
	return t->comms[t->nr_comms - 1].str;
}

/* ---- maps --------------------------------------------------------------- */

static int maps_push(struct pevt_maps *maps, const struct pevt_map *mp)
{
	size_t i;

	if (maps->nr == maps->cap) {
		size_t ncap = maps->cap ? maps->cap * 2 : 16;
		struct pevt_map *n = realloc(maps->v, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		maps->v = n;
		maps->cap = ncap;
	}
	for (i = maps->nr; i > 0 && maps->v[i - 1].start > mp->start; i--)
		maps->v[i] = maps->v[i - 1];
	maps->v[i] = *mp;
	maps->nr++;
	return 0;
}

/*
 * A new map over [start, end) at @time ends the overlapped parts of the
 * maps alive then; what sticks out on either side lives on as a map of
 * its own (maps__fixup_overlappings()).
 */
static int maps_insert(struct pevt_maps *maps, struct pevt_map *nm)
{
	size_t i, nr = maps->nr;
	int err;

	for (i = 0; i < nr; i++) {
		struct pevt_map old = maps->v[i];

		if (old.end_time != UINT64_MAX || old.end <= nm->start || old.start >= nm->end)
			continue;
		maps->v[i].end_time = nm->time;
		if (old.start < nm->start) {
			struct pevt_map b = old;

			b.end = nm->start;
			b.time = nm->time;
			b.end_time = UINT64_MAX;
			err = maps_push(maps, &b);
			if (err)
				return err;
		}
		if (old.end > nm->end) {
			struct pevt_map a = old;

			a.start = nm->end;
			a.pgoff = old.pgoff + (nm->end - old.start);
			a.time = nm->time;
			a.end_time = UINT64_MAX;
			err = maps_push(maps, &a);
			if (err)
				return err;
		}
		/* maps_push() may have moved entries: rescan from the start. */
		i = (size_t)-1;
		nr = maps->nr;
	}
	return maps_push(maps, nm);
}

static struct pevt_map *maps_find(struct pevt_maps *maps, uint64_t addr, uint64_t time)
{
	size_t lo = 0, hi = maps->nr;
	struct pevt_map *best = NULL;

	/* Upper bound on start, then walk back over the candidates. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (maps->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		struct pevt_map *mp = &maps->v[lo];

		if (addr >= mp->end)
			continue;
		if (mp->time <= time && time < mp->end_time)
			return mp;
		/* Alive map created after @time: keep as a fallback. */
		if (!best && mp->end_time == UINT64_MAX && mp->time > time)
			best = mp;
	}
	return best;
}

/* ---- records ------------------------------------------------------------ */

static int process_mmap(struct pevt_machine *m, const struct perf_event_header *ev,
			uint64_t time)
{
	const uint8_t *p = (const uint8_t *)ev;
	int32_t pid, tid;
	uint64_t start, len, pgoff;
	const char *fn;
	size_t fn_off = ev->type == PERF_RECORD_MMAP ? 40 : 72;
	struct pevt_map nm = { 0 };
	struct pevt_thread *t;
	struct pevt_maps *maps;
	char name[4096];

	if (ev->size <= fn_off)
		return -EBADMSG;
	memcpy(&pid, p + 8, 4);
	memcpy(&tid, p + 12, 4);
	memcpy(&start, p + 16, 8);
	memcpy(&len, p + 24, 8);
	memcpy(&pgoff, p + 32, 8);
	fn = (const char *)p + fn_off;
	snprintf(name, sizeof(name), "%.*s", (int)strnlen(fn, ev->size - fn_off), fn);
	nm.start = start;
	nm.end = start + len;
	if (nm.end < start)
		nm.end = UINT64_MAX;
	nm.pgoff = pgoff;
	nm.time = time;
	nm.end_time = UINT64_MAX;
	if ((ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_GUEST_KERNEL ||
	    (ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_GUEST_USER)
		return 0;	/* guests: not handled */
	if ((ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
		if (!strncmp(name, "[kernel.kallsyms]", 17)) {
			nm.dso = findnew_dso(m, "[kernel.kallsyms]");
			nm.pgoff = 0;
			if (!nm.dso || maps_insert(&m->kmaps, &nm))
				return -ENOMEM;
			return add_proc_modules(m);
		} else {
			/* A module or another kernel image: [name] like perf. */
			char mod[256];
			const char *b = strrchr(name, '/');
			size_t n;

			b = b ? b + 1 : name;
			n = strcspn(b, ".");
			if (b[0] == '[' && n && b[n - 1] == ']')
				snprintf(mod, sizeof(mod), "%.*s", (int)n, b);	/* "[pevt]" */
			else
				snprintf(mod, sizeof(mod), "[%.*s]", (int)n, b);
			nm.dso = findnew_dso(m, mod);
			/* kallsyms' symbols: absolute addresses */
			if (nm.dso)
				nm.dso->kmodule = true;
			nm.identity = true;
		}
		if (!nm.dso)
			return -ENOMEM;
		return maps_insert(&m->kmaps, &nm);
	}
	if (ev->type == PERF_RECORD_MMAP2) {
		uint32_t prot;

		memcpy(&prot, p + 64, 4);
		if (!(prot & PROT_EXEC))
			return 0;	/* data maps: not used by report's sort keys */
	} else if (ev->misc & PERF_RECORD_MISC_MMAP_DATA) {
		return 0;
	}
	/* map__new(): anonymous executable memory is JIT code, /tmp/perf-PID.map */
	if (!strncmp(name, "//anon", 6) || !strncmp(name, "/dev/zero", 9) ||
	    !strncmp(name, "/anon_hugepage", 14) || !strncmp(name, "[stack", 6) ||
	    !strncmp(name, "/SYSV", 5) || !strcmp(name, "[heap]")) {
		snprintf(name, sizeof(name), "/tmp/perf-%d.map", pid);
		nm.identity = true;
	}
	t = pevt_machine__thread(m, pid, tid, time);
	if (!t)
		return -ENOMEM;
	maps = t->maps;
	nm.dso = findnew_dso(m, name);
	if (!nm.dso)
		return -ENOMEM;
	if (ev->type == PERF_RECORD_MMAP2 && (ev->misc & MISC_MMAP_BUILD_ID) && !nm.dso->build_id_size) {
		uint8_t sz = p[40];

		if (sz > 20)
			sz = 20;
		memcpy(nm.dso->build_id, p + 44, sz);
		nm.dso->build_id_size = sz;
	}
	return maps_insert(maps, &nm);
}

static int process_fork(struct pevt_machine *m, const struct perf_event_header *ev,
			uint64_t time)
{
	const uint32_t *p = (const uint32_t *)(ev + 1);
	int32_t pid, ppid, tid, ptid;
	struct pevt_thread *parent, *t;

	if (ev->size < 8 + 24)
		return -EBADMSG;
	pid = p[0], ppid = p[1], tid = p[2], ptid = p[3];
	parent = pevt_machine__thread(m, ppid, ptid, time);
	if (!parent)
		return -ENOMEM;
	t = thread_new(m, pid, tid, time);
	if (!t)
		return -ENOMEM;
	/* perf's thread__fork(): the parent's comm if it has one, else ":tid" */
	if (parent->comm_set && set_comm(m, t, comm_at(parent, time), time, false))
		return -ENOMEM;
	if (pid != tid) {
		/* A new thread of the parent's process. */
		struct pevt_thread *leader = pid == parent->pid ? parent :
			pevt_machine__thread(m, pid, pid, time);

		if (!leader)
			return -ENOMEM;
		t->maps = leader->maps;
		t->maps->refcnt++;
		return 0;
	}
	/* A new process: a copy of the parent's maps alive now. */
	t->maps = maps_new();
	if (!t->maps)
		return -ENOMEM;
	if (parent->maps) {
		size_t i;

		for (i = 0; i < parent->maps->nr; i++) {
			struct pevt_map mp = parent->maps->v[i];

			if (mp.end_time != UINT64_MAX)
				continue;
			if (maps_push(t->maps, &mp))
				return -ENOMEM;
		}
	}
	return 0;
}

static int process_comm(struct pevt_machine *m, const struct perf_event_header *ev,
			uint64_t time)
{
	const uint8_t *p = (const uint8_t *)ev;
	int32_t pid, tid;
	struct pevt_thread *t;
	char name[64];

	if (ev->size < 8 + 8 + 1)
		return -EBADMSG;
	memcpy(&pid, p + 8, 4);
	memcpy(&tid, p + 12, 4);
	snprintf(name, sizeof(name), "%.*s", (int)strnlen((const char *)p + 16, ev->size - 16),
		 (const char *)p + 16);
	t = pevt_machine__thread(m, pid, tid, time);
	if (!t)
		return -ENOMEM;
	return set_comm(m, t, name, time, ev->misc & MISC_COMM_EXEC);
}

uint64_t pevt_machine__clock(struct pevt_machine *m, uint64_t time)
{
	if (time > m->last_time)
		m->last_time = time;
	return m->last_time;
}

int pevt_machine__process(struct pevt_machine *m, const struct perf_event_header *ev)
{
	uint64_t time = pevt_data__time_of(m->d, ev);

	/* No timestamp: as of the last record that had one (file order). */
	time = time == UINT64_MAX ? m->last_time : pevt_machine__clock(m, time);
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return process_mmap(m, ev, time);
	case PERF_RECORD_FORK:
		return process_fork(m, ev, time);
	case PERF_RECORD_COMM:
		return process_comm(m, ev, time);
	default:
		return 0;
	}
}

/*
 * perf report, once it has the kernel's symbols from kallsyms, fixes the
 * kernel map up to them (dso__load_kernel_sym(): map__fixup_start(),
 * map__fixup_end()): the map spans [first symbol, end of the last one)
 * whatever the MMAP record said.  So the init text above _etext, outside
 * perf record's [_text, _etext) map (start_kernel in an idle task's
 * chain), resolves, and an address past the last symbol in a map that
 * reaches ~0 (pevt record's) does not.  @map: what the recorded maps gave
 * for @ip (NULL: none).  Without kallsyms symbols the recorded map stays,
 * as perf keeps it when the load fails.
 */
static struct pevt_map *kernel_map_fixup(struct pevt_machine *m, struct pevt_map *map,
					 uint64_t ip, uint64_t time)
{
	struct pevt_map *k = map;
	struct pevt_dso *d;
	size_t i;

	if (k && !k->dso->kernel)
		return k;		/* a module */
	for (i = 0; !k && i < m->kmaps.nr; i++) {
		struct pevt_map *mp = &m->kmaps.v[i];

		if (mp->dso->kernel && mp->time <= time && time < mp->end_time)
			k = mp;
	}
	if (!k)
		return NULL;
	d = k->dso;
	if (!__atomic_load_n(&d->loaded, __ATOMIC_ACQUIRE))
		pevt_dso__load(m, d);
	if (!d->nr_syms)
		return map;
	if (ip < d->syms[0].start || ip >= d->syms[d->nr_syms - 1].end)
		return NULL;
	return k;
}

void pevt_machine__resolve_map(struct pevt_machine *m, struct pevt_thread *t, uint8_t cpumode,
			       uint64_t ip, uint64_t time, struct pevt_addr_loc *al)
{
	struct pevt_maps *maps;

	memset(al, 0, sizeof(*al));
	al->addr = ip;
	switch (cpumode) {
	case PERF_RECORD_MISC_KERNEL:
		al->level = 'k';
		maps = &m->kmaps;
		break;
	case PERF_RECORD_MISC_USER:
		al->level = '.';
		maps = t ? t->maps : NULL;
		break;
	case PERF_RECORD_MISC_GUEST_KERNEL:
		al->level = 'g';
		return;
	case PERF_RECORD_MISC_GUEST_USER:
		al->level = 'u';
		return;
	case PERF_RECORD_MISC_HYPERVISOR:
		al->level = 'H';
		return;
	default:
		al->level = '.';
		maps = t ? t->maps : NULL;
		break;
	}
	if (!maps)
		return;
	al->map = maps_find(maps, ip, time);
	if (maps == &m->kmaps)
		al->map = kernel_map_fixup(m, al->map, ip, time);
	if (!al->map)
		return;
	if (al->map->dso->kernel || al->map->identity)
		al->addr = ip;	/* kallsyms, JIT maps: absolute addresses */
	else
		al->addr = ip - al->map->start + al->map->pgoff;
}

void pevt_machine__resolve(struct pevt_machine *m, struct pevt_thread *t, uint8_t cpumode,
			   uint64_t ip, uint64_t time, struct pevt_addr_loc *al)
{
	pevt_machine__resolve_map(m, t, cpumode, ip, time, al);
	if (al->map)
		al->sym = pevt_dso__sym_at(m, al->map->dso, al->addr);
}
