// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - inlined functions at an address, from DWARF (see
 * include/pevt/inline.h).
 *
 * perf report 6.1 runs `addr2line -a -i -f -e FILE` on the file the DSO's
 * symbols came from (dso->symsrc_filename, else the DSO) and reads its
 * records (srcline.c addr2line()):
 *
 *  - the first is the innermost function at the address and its line; no
 *    line ("??:0") means no inline info, the frame stays as it was;
 *  - then one per inlining caller, each at its call site, out to the
 *    function that holds the code; a caller without a call site ends
 *    the list;
 *  - the names are binutils' (dwarf2.c): DW_AT_linkage_name, else
 *    DW_AT_name, through DW_AT_abstract_origin/DW_AT_specification; an
 *    address with a line but no function DIE (assembly) takes the name
 *    of the symbol table's function there (elf_find_function(),
 *    better_fit()); nothing at all is "??";
 *  - a file without .debug_line (a stripped libc, no libc6-dbg) still gets
 *    that symbol table function (the dynamic symbols when there is no
 *    .symtab) with "??:0", and perf takes it: `_IO_printf (inlined)`
 *    where perf's own symbol is printf.
 *
 * Each name, demangled, is the frame's symbol if it is the name of the
 * symbol perf resolved for the address, else an "inlined" symbol
 * (new_inline_sym()).  Here libdw answers instead of addr2line:
 * dwarf_addrdie() and dwarf_getsrc_die() for the line, a walk of the CU's
 * DIEs holding the address for the functions (not dwarf_getscopes(),
 * which takes the first of equal ranges where binutils takes the last).
 *
 * A DSO's libdw handle and symbols are shared by the threads under the
 * DSO's inline lock, taken on a miss of a thread's own (dso, address)
 * cache only.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libiberty/demangle.h>

#include <pevt/inline.h>
#include <pevt/machine.h>
#include "internal/elfscn.h"

#define MAX_INLINE_NEST	1024		/* srcline.c */

struct isym {
	struct pevt_sym s;
	const struct pevt_sym *base;
	struct isym *next;		/* hash chain */
};

struct pevt_inline_dso {
	pthread_mutex_t lock;
	int fd;
	Elf *elf;			/* the symsrc file */
	Dwarf *dw;			/* NULL: no inline info */
	int64_t delta;			/* vaddr - file offset of the text */
	struct isym **tab;		/* interned inline symbols */
	size_t cap, nr;
};

struct slot {
	const struct pevt_dso *dso;	/* NULL: free */
	uint64_t addr;
	uint32_t off, nr;		/* into frames */
};

struct pevt_inline_cache {
	struct pevt_machine *m;
	struct slot *slots;
	size_t cap, used;
	struct pevt_sym **frames;
	size_t nr_frames, cap_frames;
};

static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;

struct pevt_inline_cache *pevt_inline_cache__new(struct pevt_machine *m)
{
	struct pevt_inline_cache *c = calloc(1, sizeof(*c));

	if (c)
		c->m = m;
	return c;
}

void pevt_inline_cache__delete(struct pevt_inline_cache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c->frames);
	free(c);
}

void pevt_dso__inline_free(struct pevt_dso *dso)
{
	struct pevt_inline_dso *d = dso->inl;
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->cap; i++) {
		struct isym *s = d->tab[i], *n;

		for (; s; s = n) {
			n = s->next;
			free((char *)s->s.name);
			free(s);
		}
	}
	free(d->tab);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	pthread_mutex_destroy(&d->lock);
	free(d);
	dso->inl = NULL;
}

/*
 * vaddr - file offset of the executable PT_LOAD of @path (the runtime
 * file; the debug file's program headers when it cannot be read): what
 * map__rip_2objdump() adds to a map-relative address.
 */
static bool text_delta(Elf *elf, int64_t *delta)
{
	size_t i, phnum;

	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			*delta = (int64_t)(ph.p_vaddr - ph.p_offset);
			return true;
		}
	}
	return false;
}

static struct pevt_inline_dso *inline_dso(struct pevt_machine *m, struct pevt_dso *dso)
{
	struct pevt_inline_dso *d = __atomic_load_n(&dso->inl, __ATOMIC_ACQUIRE);
	const char *symfs = pevt_machine__symfs(m);
	char path[4096];
	Elf *rt;
	int fd;

	if (d)
		return d;
	pthread_mutex_lock(&create_lock);
	d = dso->inl;
	if (d)
		goto out;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto out;
	pthread_mutex_init(&d->lock, NULL);
	d->fd = -1;
	if (!dso->symsrc || !strncmp(dso->symsrc, "/tmp/perf-", 10))
		goto publish;
	d->fd = open(dso->symsrc, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		goto publish;
	d->elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
	if (!d->elf)
		goto publish;
	snprintf(path, sizeof(path), "%s%s", symfs ?: "", dso->long_name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	rt = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!rt || !text_delta(rt, &d->delta))
		text_delta(d->elf, &d->delta);
	if (rt)
		elf_end(rt);
	if (fd >= 0)
		close(fd);
	/* without it, addr2line names the symbol table's function (below) */
	if (pevt_elf_find_scn(d->elf, 0, ".debug_line"))
		d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
publish:
	__atomic_store_n(&dso->inl, d, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&create_lock);
	return d;
}

/* binutils' name of a function DIE: linkage name, else name. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n;
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/*
 * The symbol table's function at @vaddr as binutils finds it
 * (elf_find_function(): symbols of the section holding @vaddr in table
 * order, _bfd_elf_maybe_function_sym() candidates, better_fit()).
 */
static const char *symtab_function(Elf *elf, uint64_t vaddr)
{
	Elf_Scn *scn = NULL, *symscn = NULL, *dynscn = NULL;
	size_t sec = 0, i, n;
	GElf_Shdr sh, symsh;
	Elf_Data *data;
	const char *best = NULL;
	uint64_t best_off = 0, best_size = 0;
	bool best_func = false, best_notype = false;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (!sec && (sh.sh_flags & SHF_ALLOC) && vaddr >= sh.sh_addr &&
		    vaddr < sh.sh_addr + sh.sh_size)
			sec = elf_ndxscn(scn);
		if (sh.sh_type == SHT_SYMTAB)
			symscn = scn;
		else if (sh.sh_type == SHT_DYNSYM && !dynscn)
			dynscn = scn;
	}
	/* addr2line's slurp_symtab(): the dynamic symbols when there is no .symtab */
	if (!symscn)
		symscn = dynscn;
	if (!sec || !symscn || !gelf_getshdr(symscn, &symsh) || !symsh.sh_entsize)
		return NULL;
	data = elf_getdata(symscn, NULL);
	if (!data)
		return NULL;
	n = symsh.sh_size / symsh.sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		int type;
		uint64_t size;
		bool func;

		if (!gelf_getsym(data, i, &s) || s.st_shndx != sec)
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type == STT_SECTION || type == STT_FILE || type == STT_OBJECT ||
		    type == STT_TLS || type == STT_COMMON)
			continue;
		if (!s.st_size && GELF_ST_BIND(s.st_info) == STB_LOCAL && type == STT_NOTYPE &&
		    GELF_ST_VISIBILITY(s.st_other) == STV_HIDDEN)
			continue;
		size = s.st_size ?: 1;
		func = type == STT_FUNC || type == STT_GNU_IFUNC;
		/* better_fit() */
		if (s.st_value > vaddr || s.st_value < best_off)
			continue;
		if (s.st_value == best_off && best) {
			if (best_off + best_size <= vaddr) {
				if (size <= best_size)
					continue;
			} else if (s.st_value + size <= vaddr) {
				continue;
			} else if (best_func != func) {
				if (best_func)
					continue;
			} else if (best_notype != (type == STT_NOTYPE)) {
				if (!best_notype)
					continue;
			} else if (size >= best_size) {
				continue;
			}
		}
		best = elf_strptr(elf, symsh.sh_link, s.st_name);
		best_off = s.st_value;
		best_size = size;
		best_func = func;
		best_notype = type == STT_NOTYPE;
	}
	return best;
}

static uint64_t hash_name(const struct pevt_sym *base, const char *s)
{
	uint64_t h = (uintptr_t)base * 0x9e3779b97f4a7c15ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* The inline symbol @name (demangled) of @base, created once per DSO. */
static struct pevt_sym *intern(struct pevt_inline_dso *d, const struct pevt_sym *base,
			       const char *name)
{
	static const char sfx[] = " (inlined)";
	size_t len = strlen(name), i;
	struct isym *s;
	char *full;

	if (d->nr >= d->cap / 2) {
		size_t cap = d->cap ? 2 * d->cap : 256;
		struct isym **tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return NULL;
		for (i = 0; i < d->cap; i++) {
			struct isym *n;

			for (s = d->tab[i]; s; s = n) {
				size_t b = hash_name(s->base, s->s.name) & (cap - 1);

				n = s->next;
				s->next = tab[b];
				tab[b] = s;
			}
		}
		free(d->tab);
		d->tab = tab;
		d->cap = cap;
	}
	full = malloc(len + sizeof(sfx));
	if (!full)
		return NULL;
	memcpy(full, name, len);
	memcpy(full + len, sfx, sizeof(sfx));
	i = hash_name(base, full) & (d->cap - 1);
	for (s = d->tab[i]; s; s = s->next) {
		if (s->base == base && !strcmp(s->s.name, full)) {
			free(full);
			return &s->s;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(full);
		return NULL;
	}
	s->s.start = base->start;
	s->s.end = base->end;
	s->s.type = base->type;
	s->s.binding = base->binding;
	s->s.inlined = 1;
	s->s.name = full;
	s->base = base;
	s->next = d->tab[i];
	d->tab[i] = s;
	d->nr++;
	return &s->s;
}

static int push(struct pevt_inline_cache *c, struct pevt_sym *s)
{
	if (!s)
		return -ENOMEM;
	if (c->nr_frames == c->cap_frames) {
		size_t cap = c->cap_frames ? 2 * c->cap_frames : 256;
		struct pevt_sym **v = realloc(c->frames, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->frames = v;
		c->cap_frames = cap;
	}
	c->frames[c->nr_frames++] = s;
	return 0;
}

/* Frame @name (as addr2line prints it) of @sym: perf's new_inline_sym(). */
static int push_name(struct pevt_inline_cache *c, struct pevt_inline_dso *d,
		     struct pevt_sym *sym, const char *name)
{
	char *dm = NULL;
	int err;

	if (!name)
		name = "??";
	else if ((dm = cplus_demangle(name, DMGL_NO_OPTS)))
		name = dm;
	if (!strcmp(name, sym->name))
		err = push(c, sym);
	else
		err = push(c, intern(d, sym, name));
	free(dm);
	return err;
}

/*
 * The innermost function at @vaddr as binutils picks it
 * (lookup_address_in_function_table()): of the function DIEs with a range
 * holding @vaddr the one with the shortest such range, the later one in
 * DIE order on a tie (several DIEs of one assembly function name its
 * aliases); with its enclosing function DIEs, which name its callers
 * (caller_func).  A DIE with ranges that miss @vaddr is not entered.
 */
struct best {
	Dwarf_Die *path;		/* the best one's functions, outermost first */
	int depth;
	uint64_t len;			/* its range's length, 0: none yet */
};

static void walk(Dwarf_Die *die, uint64_t vaddr, Dwarf_Die *stack, int depth, struct best *b)
{
	do {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		bool ranges = false, in = false, fn;
		uint64_t len = 0;
		Dwarf_Die child;

		while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
			ranges = true;
			if (vaddr >= lo && vaddr < hi) {
				in = true;
				len = hi - lo;
				break;
			}
		}
		if (ranges && !in)
			continue;
		fn = is_function(die);
		if (fn && depth < MAX_INLINE_NEST) {
			stack[depth] = *die;
			if (in && (!b->len || len <= b->len)) {
				memcpy(b->path, stack, (depth + 1) * sizeof(*stack));
				b->depth = depth + 1;
				b->len = len;
			}
		}
		if (dwarf_child(die, &child) == 0)
			walk(&child, vaddr, stack, depth + (fn && depth < MAX_INLINE_NEST), b);
	} while (dwarf_siblingof(die, die) == 0);
}

/* addr2line's records for @vaddr, as frames appended to c->frames. */
static int lookup(struct pevt_inline_cache *c, struct pevt_inline_dso *d,
		  struct pevt_sym *sym, uint64_t vaddr)
{
	Dwarf_Die cudie, child, *stack;
	struct best b = { 0 };
	int i, err = 0, nr = 0;
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_addrdie(d->dw, vaddr, &cudie) || !dwarf_getsrc_die(&cudie, vaddr))
		return 0;	/* "??:0": no record */
	stack = malloc(2 * MAX_INLINE_NEST * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	b.path = stack + MAX_INLINE_NEST;
	if (dwarf_child(&cudie, &child) == 0)
		walk(&child, vaddr, stack, 0, &b);
	for (i = b.depth - 1; i >= 0; i--) {
		Dwarf_Die *die = &b.path[i];

		err = push_name(c, d, sym, die_name(die));
		if (err)
			break;
		nr++;
		if (dwarf_tag(die) != DW_TAG_inlined_subroutine)
			break;
		/* the caller's record is at the call site: none, "??:0", ends it */
		if (!dwarf_attr(die, DW_AT_call_file, &a) &&
		    (!dwarf_attr(die, DW_AT_call_line, &a) || dwarf_formudata(&a, &w) || !w))
			break;
	}
	if (!err && !nr)
		err = push_name(c, d, sym, symtab_function(d->elf, vaddr));
	free(stack);
	return err;
}

static uint64_t slot_hash(const struct pevt_dso *dso, uint64_t addr)
{
	uint64_t h = ((uintptr_t)dso * 0x9e3779b97f4a7c15ull) ^ (addr * 0xbf58476d1ce4e5b9ull);

	return h ^ (h >> 31);
}

static int grow(struct pevt_inline_cache *c)
{
	size_t cap = c->cap ? 2 * c->cap : 1024, i;
	struct slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < c->cap; i++) {
		struct slot *s = &c->slots[i];
		size_t j;

		if (!s->dso)
			continue;
		for (j = slot_hash(s->dso, s->addr) & (cap - 1); v[j].dso; j = (j + 1) & (cap - 1))
			;
		v[j] = *s;
	}
	free(c->slots);
	c->slots = v;
	c->cap = cap;
	return 0;
}

int pevt_inline__frames(struct pevt_inline_cache *c, struct pevt_dso *dso,
			struct pevt_sym *sym, uint64_t addr, struct pevt_sym *const **frames)
{
	struct pevt_inline_dso *d;
	struct slot *s;
	size_t i, off;
	int err = 0;

	if (!sym || dso->kernel || dso->kmodule)
		return 0;
	if (c->used >= c->cap / 2 && grow(c))
		return -ENOMEM;
	for (i = slot_hash(dso, addr) & (c->cap - 1); c->slots[i].dso; i = (i + 1) & (c->cap - 1)) {
		s = &c->slots[i];
		if (s->dso == dso && s->addr == addr) {
			*frames = c->frames + s->off;
			return s->nr;
		}
	}
	/* perf's inline_node is per (dso, address), made with the first symbol met */
	off = c->nr_frames;
	d = inline_dso(c->m, dso);
	if (!d)
		return -ENOMEM;
	if (d->dw) {
		pthread_mutex_lock(&d->lock);
		err = lookup(c, d, sym, addr + d->delta);
		pthread_mutex_unlock(&d->lock);
	} else if (d->elf) {
		/*
		 * No DWARF (a stripped libc without libc6-dbg): addr2line still
		 * prints the symbol table's function at the address, with
		 * "??:0", and perf 6.1 takes that record: an alias that differs
		 * from perf's own choice (_IO_printf for printf) becomes
		 * "_IO_printf (inlined)".  "??" (no symbol) is no record.
		 */
		const char *name;

		pthread_mutex_lock(&d->lock);
		name = symtab_function(d->elf, addr + d->delta);
		if (name)
			err = push_name(c, d, sym, name);
		pthread_mutex_unlock(&d->lock);
	}
	if (err) {
		c->nr_frames = off;
		return err;
	}
	s = &c->slots[i];
	s->dso = dso;
	s->addr = addr;
	s->off = off;
	s->nr = c->nr_frames - off;
	c->used++;
	*frames = c->frames + off;
	return s->nr;
}
