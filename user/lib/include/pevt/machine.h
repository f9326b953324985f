/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - the machine a perf.data describes: threads, their comms and
 * maps, DSOs and their symbols, as perf report builds them from COMM,
 * FORK, EXIT, MMAP and MMAP2 records.
 *
 * State is kept by time: every comm and every map carries the time it
 * started (and a map the time it was replaced), and a thread that exits
 * and whose tid is reused stays findable for its own lifetime, so a sample
 * resolves the same whether it is processed in file order or later, from
 * another thread, after every side-band record has been applied.
 */
#ifndef __LIBPEVT_MACHINE_H
#define __LIBPEVT_MACHINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <pevt/data_reader.h>

struct pevt_sym {
	uint64_t start, end;		/* [start, end), in the DSO's symbol space */
	const char *name;
	uint8_t type;			/* STT_FUNC, STT_OBJECT, ... */
	uint8_t binding;
	uint8_t inlined;		/* a function inlined at an ip (inline.h) */
};

struct pevt_dso {
	char *long_name;
	const char *short_name;
	char *short_buf;		/* "[JIT] tid N" */
	bool kernel;			/* [kernel.kallsyms] */
	bool kmodule;			/* [name]: a kernel module, kallsyms' "\t[name]" symbols */
	bool loaded;
	pthread_mutex_t lock;		/* symbol loading */
	struct pevt_sym *syms;		/* sorted by start */
	size_t nr_syms;
	char *strtab;			/* names of syms */
	size_t syms_bytes, strtab_bytes;	/* allocated (pevt_big_alloc()) */
	uint8_t build_id[20];
	uint8_t build_id_size;
	bool adjust;			/* ET_EXEC: symbols adjusted to file offsets */
	char *symsrc;			/* the file the symbols came from (perf's symsrc_filename) */
	struct pevt_inline_dso *inl;	/* its DWARF inline info (inline.c) */
	unsigned int idx;		/* creation order (perf compares dso pointers) */
	struct pevt_dso *next;
	/* syms by address, if they do not overlap (symbols.c: build_index()) */
	uint32_t *sym_index;
	uint64_t index_base;
	size_t nr_index;
	unsigned int index_shift;
};

struct pevt_map {
	uint64_t start, end, pgoff;
	uint64_t time, end_time;	/* alive in [time, end_time) */
	struct pevt_dso *dso;
	bool identity;			/* anon/JIT: addresses are not file offsets */
};

struct pevt_maps {
	struct pevt_map *v;		/* sorted by start; may hold dead maps */
	size_t nr, cap;
	int refcnt;
};

struct pevt_comm {
	uint64_t time;
	const char *str;		/* interned */
	bool exec;
};

struct pevt_thread {
	int32_t pid, tid;
	uint64_t start, end;		/* lifetime: fork/first seen .. next reuse */
	struct pevt_comm *comms;	/* by time */
	size_t nr_comms;
	bool comm_set;			/* comms[0] is not the default ":tid" */
	struct pevt_maps *maps;		/* shared by the threads of a process */
	struct pevt_thread *next;	/* same tid, older */
};

struct pevt_machine;

struct pevt_machine_opts {
	size_t sz;
	const char *kallsyms;		/* default: build-id cache, then /proc/kallsyms */
	const char *symfs;		/* prefix for DSO paths */
	bool no_buildid_cache;
};

struct pevt_addr_loc {
	struct pevt_map *map;		/* NULL: no map */
	struct pevt_sym *sym;		/* NULL: unresolved */
	uint64_t addr;			/* map-relative (map->pgoff based) or raw ip */
	char level;			/* 'k', '.', 'g', 'u', 'H' */
};

LIBPEVT_API struct pevt_machine *pevt_machine__new(struct pevt_data *d,
						   const struct pevt_machine_opts *opts);
LIBPEVT_API void pevt_machine__delete(struct pevt_machine *m);
/*
 * Apply a side-band record (COMM, FORK, EXIT, MMAP, MMAP2); others ignored.
 * At its time, or at the machine's clock if that is later (below).
 */
LIBPEVT_API int pevt_machine__process(struct pevt_machine *m, const struct perf_event_header *ev);
/*
 * The machine's clock, for records handed over in delivery order: @time,
 * or the newest time it was given if that is later, and the clock moves
 * there.  A record delivered out of order (older than one delivered
 * before it: a perf file whose round guarantee broke) is applied, and a
 * sample resolved, at that later time: perf applies and resolves each
 * record against the state of its delivery, not of its time.
 */
LIBPEVT_API uint64_t pevt_machine__clock(struct pevt_machine *m, uint64_t time);
/* The thread @tid as of @time (created with comm ":tid" if unknown). */
LIBPEVT_API struct pevt_thread *pevt_machine__thread(struct pevt_machine *m, int32_t pid,
						     int32_t tid, uint64_t time);
/* Read-only variants, safe from many threads once processing is done. */
LIBPEVT_API struct pevt_thread *pevt_machine__find_thread(struct pevt_machine *m, int32_t tid,
							  uint64_t time);
LIBPEVT_API const char *pevt_thread__comm(const struct pevt_thread *t, uint64_t time);
LIBPEVT_API const char *pevt_thread__last_comm(const struct pevt_thread *t);
/*
 * @comm was @t's default ":tid" and its first comm replaced it, for all
 * its samples (perf's comm__override()): that comm; else NULL.
 */
LIBPEVT_API const char *pevt_thread__renamed(const struct pevt_thread *t, const char *comm);
LIBPEVT_API void pevt_machine__resolve(struct pevt_machine *m, struct pevt_thread *t,
				       uint8_t cpumode, uint64_t ip, uint64_t time,
				       struct pevt_addr_loc *al);
/*
 * The same without the symbol (al->sym NULL): what needs the machine, not
 * the DSO's symbols; al->map points into the thread's maps, valid only
 * until the next pevt_machine__process().
 */
LIBPEVT_API void pevt_machine__resolve_map(struct pevt_machine *m, struct pevt_thread *t,
					   uint8_t cpumode, uint64_t ip, uint64_t time,
					   struct pevt_addr_loc *al);
/* Symbols (symbols.c). */
LIBPEVT_API int pevt_dso__load(struct pevt_machine *m, struct pevt_dso *dso);
LIBPEVT_API struct pevt_sym *pevt_dso__find_sym(struct pevt_dso *dso, uint64_t addr);
/* The same after loading @dso's symbols if no one has yet. */
LIBPEVT_API struct pevt_sym *pevt_dso__sym_at(struct pevt_machine *m, struct pevt_dso *dso,
					      uint64_t addr);
/* NT_GNU_BUILD_ID of the ELF file @path into @id: its size, or -errno. */
LIBPEVT_API int pevt_elf__build_id(const char *path, uint8_t *id, size_t max);
LIBPEVT_API struct pevt_dso *pevt_machine__dsos(struct pevt_machine *m);
/*
 * Start loading the kernel's symbols (kallsyms) on a thread of its own,
 * for the kernel's dso to take when it is first loaded: the same symbols,
 * sooner.  Call before any lookup; 0 or -errno (then they load as usual).
 */
LIBPEVT_API int pevt_machine__prefetch_kernel(struct pevt_machine *m);

/* machine.c internals shared with symbols.c */
const char *pevt_machine__kallsyms(struct pevt_machine *m);
const char *pevt_machine__symfs(struct pevt_machine *m);
const struct pevt_build_id *pevt_machine__build_id(struct pevt_machine *m, const char *name);
bool pevt_machine__use_buildid_cache(struct pevt_machine *m);
struct pevt_kprefetch;
struct pevt_kprefetch *pevt_machine__kprefetch(struct pevt_machine *m);
void pevt_machine__set_kprefetch(struct pevt_machine *m, struct pevt_kprefetch *k);
void pevt_kprefetch__delete(struct pevt_kprefetch *k);

#endif
