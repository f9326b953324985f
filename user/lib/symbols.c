// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - symbols of a DSO, the way perf report finds them
 * (tools/perf/util/symbol.c dso__load(), symbol-elf.c dso__load_sym()):
 *
 *  - user DSOs: the first of the build-id cache (~/.debug/.build-id),
 *    /usr/lib/debug (build-id and path), the .gnu_debuglink file and the
 *    DSO itself that has a .symtab gives the symbols, else .dynsym;
 *    FUNC, GNU_IFUNC and OBJECT symbols plus NOTYPE labels in text, moved
 *    to file offsets through the PT_LOAD that holds them;
 *  - the kernel: kallsyms (the build-id cache copy if its build id matches
 *    the file, else /proc/kallsyms), text and data symbols;
 *  - then perf's fixups: zero-sized symbols end where the next starts,
 *    symbols at the same address keep the best one (choose_best_symbol()).
 *
 * Each DSO is loaded once (under its lock), lookups are binary searches.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <libiberty/demangle.h>

#include <pevt/machine.h>
#include "internal/elfscn.h"
#include "internal/bigalloc.h"

struct symbuf {
	struct pevt_sym *v;
	size_t nr, cap, vbytes;		/* vbytes: allocated */
	char *str;
	size_t slen, scap;
};

/*
 * A buffer that grows in 2 MB pages (pevt_big_alloc(): THP) once large:
 * kallsyms' 120K symbols page by page from the heap cost ~2700 faults of
 * 11 us in a PVM guest, realloc()'s copies included.
 */
static void *sb_grow(void *old, size_t used, size_t old_bytes, size_t *bytes)
{
	void *n;

	/* past 256 KB, whole 2 MB pages at once */
	if (*bytes > (256u << 10))
		*bytes = pevt_big_size(*bytes);
	n = pevt_big_alloc(*bytes);
	if (!n)
		return NULL;
	memcpy(n, old, used);
	pevt_big_free(old, old_bytes);
	return n;
}

static void sb_free(struct symbuf *b)
{
	pevt_big_free(b->v, b->vbytes);
	pevt_big_free(b->str, b->scap);
	b->v = NULL;
	b->str = NULL;
}

static int sb_add(struct symbuf *b, uint64_t start, uint64_t size, uint8_t type,
		  uint8_t binding, const char *name)
{
	size_t len = strlen(name) + 1;

	if (b->nr == b->cap) {
		size_t bytes = (b->cap ? b->cap * 2 : 1024) * sizeof(*b->v);
		struct pevt_sym *n = sb_grow(b->v, b->nr * sizeof(*n), b->vbytes, &bytes);

		if (!n)
			return -ENOMEM;
		b->v = n;
		b->vbytes = bytes;
		b->cap = bytes / sizeof(*n);
	}
	if (b->slen + len > b->scap) {
		size_t ncap = b->scap ? b->scap * 2 : 65536;
		char *n;

		while (ncap < b->slen + len)
			ncap *= 2;
		n = sb_grow(b->str, b->slen, b->scap, &ncap);
		if (!n)
			return -ENOMEM;
		b->str = n;
		b->scap = ncap;
	}
	memcpy(b->str + b->slen, name, len);
	b->v[b->nr] = (struct pevt_sym){
		.start = start, .end = start + size, .type = type, .binding = binding,
		.name = (const char *)(uintptr_t)b->slen,	/* offset until done */
	};
	b->slen += len;
	b->nr++;
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct pevt_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Keep insertion order for equal starts (qsort is not stable). */
	return x->name < y->name ? -1 : x->name > y->name;
}

static int underscores(const char *s)
{
	int n = 0;

	while (*s++ == '_')
		n++;
	return n;
}

/* choose_best_symbol(): true if @a wins over @b. */
static bool best_is_a(const struct pevt_sym *a, const struct pevt_sym *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	int x, y;
	size_t na, nb;

	if (lb == 0 && la > 0)
		return true;
	if (la == 0 && lb > 0)
		return false;
	x = a->binding == STB_WEAK;
	y = b->binding == STB_WEAK;
	if (x != y)
		return y;
	x = a->binding == STB_GLOBAL;
	y = b->binding == STB_GLOBAL;
	if (x != y)
		return x;
	x = underscores(a->name);
	y = underscores(b->name);
	if (x != y)
		return y > x;
	na = strlen(a->name);
	nb = strlen(b->name);
	if (na != nb)
		return na > nb;
	/* arch__choose_best_symbol(): x86 takes the first one seen */
	return true;
}

Elf_Scn *pevt_elf_find_scn(Elf *elf, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (type && sh.sh_type != type)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!n || strcmp(n, name)))
			continue;
		return scn;
	}
	return NULL;
}

/*
 * Sort, then perf's fixups on the first @nr_regular symbols; the rest
 * (PLT entries, dso__synthesize_plt_symbols()) are added after the fixups
 * like perf does.
 */
static int sb_finish(struct pevt_dso *dso, struct symbuf *b, bool kallsyms, size_t nr_regular)
{
	size_t i, n = 0, nr_plt = b->nr - nr_regular, a, p, o;
	struct pevt_sym *out;

	/*
	 * Names are still offsets, in insertion order: ties keep that order.
	 * Kernel symbols come in address order: no sort then.
	 */
	for (i = 1; i < nr_regular && cmp_sym(&b->v[i - 1], &b->v[i]) <= 0; i++)
		;
	if (i < nr_regular)
		qsort(b->v, nr_regular, sizeof(*b->v), cmp_sym);
	qsort(b->v + nr_regular, nr_plt, sizeof(*b->v), cmp_sym);
	for (i = 0; i < b->nr; i++)
		b->v[i].name = b->str + (uintptr_t)b->v[i].name;
	/* symbols__fixup_end() */
	for (i = 1; i < nr_regular; i++) {
		struct pevt_sym *prev = &b->v[i - 1], *curr = &b->v[i];

		if (prev->end == prev->start) {
			if (kallsyms && (!strchr(prev->name, '[') != !strchr(curr->name, '[')))
				prev->end = ((prev->end + 4096) + 4095) / 4096 * 4096;
			else
				prev->end = curr->start;
		}
	}
	if (nr_regular && b->v[nr_regular - 1].end == b->v[nr_regular - 1].start) {
		struct pevt_sym *c = &b->v[nr_regular - 1];

		c->end = (c->start + 4095) / 4096 * 4096 + 4096;
	}
	/* symbols__fixup_duplicate() */
	for (i = 0; i < nr_regular; i++) {
		if (n && b->v[n - 1].start == b->v[i].start) {
			if (!best_is_a(&b->v[n - 1], &b->v[i]))
				b->v[n - 1] = b->v[i];
			continue;
		}
		b->v[n++] = b->v[i];
	}
	if (!nr_plt) {
		/* nothing to merge: the buffer is the result */
		dso->syms = b->v;
		dso->syms_bytes = b->vbytes;
		dso->nr_syms = n;
		dso->strtab = b->str;
		dso->strtab_bytes = b->scap;
		return 0;
	}
	out = pevt_big_alloc((n + nr_plt + 1) * sizeof(*out));
	if (!out) {
		sb_free(b);
		return -ENOMEM;
	}
	/* merge the two sorted runs; a regular symbol first on equal starts */
	for (a = 0, p = nr_regular, o = 0; a < n || p < b->nr; ) {
		if (p >= b->nr || (a < n && b->v[a].start <= b->v[p].start))
			out[o++] = b->v[a++];
		else
			out[o++] = b->v[p++];
	}
	pevt_big_free(b->v, b->vbytes);
	dso->syms = out;
	dso->syms_bytes = (n + nr_plt + 1) * sizeof(*out);
	dso->nr_syms = o;
	dso->strtab = b->str;
	dso->strtab_bytes = b->scap;
	return 0;
}

/* dso__synthesize_plt_symbols(): "name@plt" for each .rela.plt entry. */
static int synth_plt(struct symbuf *b, Elf *elf)
{
	Elf_Scn *rel = pevt_elf_find_scn(elf, 0, ".rela.plt"), *plt, *dynsym;
	GElf_Shdr rsh, psh, dsh;
	Elf_Data *rdata, *sdata;
	uint64_t off, ent;
	size_t i, nr, dynsym_idx;
	bool rela = true;
	char name[1024];

	if (!rel) {
		rel = pevt_elf_find_scn(elf, 0, ".rel.plt");
		rela = false;
	}
	dynsym = pevt_elf_find_scn(elf, SHT_DYNSYM, ".dynsym");
	plt = pevt_elf_find_scn(elf, 0, ".plt");
	if (!rel || !dynsym || !plt || !gelf_getshdr(rel, &rsh) || !gelf_getshdr(plt, &psh) ||
	    !gelf_getshdr(dynsym, &dsh) || !rsh.sh_entsize)
		return 0;
	dynsym_idx = elf_ndxscn(dynsym);
	if (rsh.sh_link != dynsym_idx)
		return 0;
	rdata = elf_getdata(rel, NULL);
	sdata = elf_getdata(dynsym, NULL);
	if (!rdata || !sdata)
		return 0;
	nr = rsh.sh_size / rsh.sh_entsize;
	ent = psh.sh_entsize;
	off = psh.sh_offset + ent;	/* x86: the header is one entry */
	for (i = 0; i < nr; i++) {
		GElf_Sym sym;
		const char *sn = NULL;
		char *dm;
		size_t symidx;

		if (rela) {
			GElf_Rela r;

			if (!gelf_getrela(rdata, i, &r))
				break;
			symidx = GELF_R_SYM(r.r_info);
		} else {
			GElf_Rel r;

			if (!gelf_getrel(rdata, i, &r))
				break;
			symidx = GELF_R_SYM(r.r_info);
		}
		if (gelf_getsym(sdata, symidx, &sym))
			sn = elf_strptr(elf, dsh.sh_link, sym.st_name);
		dm = sn ? cplus_demangle(sn, DMGL_NO_OPTS) : NULL;
		snprintf(name, sizeof(name), "%s@plt", dm ?: sn ?: "");
		free(dm);
		if (sb_add(b, off, ent, STT_FUNC, STB_GLOBAL, name))
			return -ENOMEM;
		off += ent;
	}
	return 0;
}

/* ---- kallsyms ----------------------------------------------------------- */

/*
 * The kernel's symbols, or with @module ("[name]") those of one module,
 * without the module suffix (dso__split_kallsyms()).
 */
static int load_kallsyms(struct pevt_dso *dso, const char *path, const char *module,
			 const int *cancel)
{
	struct symbuf b = { 0 };
	char line[1024];
	FILE *f = fopen(path, "re");
	unsigned int nr = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, *name, *end, *nl;
		uint8_t bind;

		if (cancel && !(++nr & 4095) && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
			fclose(f);
			sb_free(&b);
			return -ECANCELED;
		}

		/* "ADDR TYPE NAME[\t[MODULE]]\n" (was sscanf: 11% of a small report) */
		addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ' || !end[3] ||
		    end[3] == '\n')
			continue;
		type = end[1];
		name = end + 3;
		nl = strchr(name, '\n');
		if (nl)
			*nl = 0;
		if (strlen(name) > 511)
			name[511] = 0;	/* as %511[^\n] */
		nl = strchr(name, '\t');	/* "name\t[module]" */
		if (module) {
			if (!nl || strcmp(nl + 1, module))
				continue;
			*nl = 0;
		} else if (nl) {
			continue;	/* the module's, not the kernel's */
		}
		switch (toupper(type)) {
		case 'T': case 'W': case 'D': case 'B':
			break;
		default:
			continue;
		}
		if (name[0] == '$')
			continue;
		bind = type == 'W' ? STB_WEAK : isupper(type) ? STB_GLOBAL : STB_LOCAL;
		if (sb_add(&b, addr, 0, (toupper(type) == 'T' || toupper(type) == 'W') ?
			   STT_FUNC : STT_OBJECT, bind, name)) {
			fclose(f);
			sb_free(&b);
			return -ENOMEM;
		}
	}
	fclose(f);
	return sb_finish(dso, &b, true, b.nr);
}

/* ---- ELF ---------------------------------------------------------------- */

static int load_elf_syms(struct symbuf *b, Elf *syms_elf, Elf_Scn *symscn, Elf *rt_elf)
{
	GElf_Shdr symshdr;
	Elf_Data *data;
	size_t i, n, phnum = 0;
	GElf_Ehdr eh;

	if (!gelf_getshdr(symscn, &symshdr) || !symshdr.sh_entsize)
		return -EINVAL;
	data = elf_getdata(symscn, NULL);
	if (!data)
		return -EINVAL;
	if (!gelf_getehdr(rt_elf, &eh))
		return -EINVAL;
	elf_getphdrnum(rt_elf, &phnum);
	n = symshdr.sh_size / symshdr.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Shdr shdr;
		Elf_Scn *sec;
		const char *name, *secname;
		char *dm;
		int type, err;
		bool label;
		size_t j, shstrndx;

		if (!gelf_getsym(data, i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (!sym.st_name || sym.st_shndx == SHN_UNDEF)
			continue;
		label = type == STT_NOTYPE && sym.st_shndx != SHN_ABS &&
			GELF_ST_VISIBILITY(sym.st_other) != STV_HIDDEN &&
			GELF_ST_VISIBILITY(sym.st_other) != STV_INTERNAL;
		if (!label && type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT)
			continue;
		if (sym.st_shndx == SHN_ABS || sym.st_shndx >= SHN_LORESERVE)
			continue;
		sec = elf_getscn(syms_elf, sym.st_shndx);
		if (!sec || !gelf_getshdr(sec, &shdr))
			continue;
		if (!(shdr.sh_flags & SHF_ALLOC))
			continue;
		if (label) {
			/* elf_sec__filter(): text sections only */
			if (elf_getshdrstrndx(syms_elf, &shstrndx))
				continue;
			secname = elf_strptr(syms_elf, shstrndx, shdr.sh_name);
			if (!secname || !strstr(secname, "text"))
				continue;
		}
		name = elf_strptr(syms_elf, symshdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		/* To a file offset, through the PT_LOAD holding the symbol. */
		for (j = 0; j < phnum; j++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(rt_elf, j, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (sym.st_value >= ph.p_vaddr && sym.st_value < ph.p_vaddr + ph.p_memsz) {
				sym.st_value -= ph.p_vaddr - ph.p_offset;
				break;
			}
		}
		if (j == phnum)
			sym.st_value -= shdr.sh_addr - shdr.sh_offset;
		/* demangle_sym(): C++ names without parameters (DMGL_NO_OPTS) */
		dm = cplus_demangle(name, DMGL_NO_OPTS);
		err = sb_add(b, sym.st_value, sym.st_size, type, GELF_ST_BIND(sym.st_info),
			     dm ?: name);
		free(dm);
		if (err)
			return -ENOMEM;
	}
	return 0;
}

struct elf_file {
	int fd;
	Elf *elf;
};

static bool elf_open(struct elf_file *ef, const char *path)
{
	struct stat st;

	ef->elf = NULL;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return false;
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF) {
		if (ef->elf)
			elf_end(ef->elf);
		close(ef->fd);
		ef->elf = NULL;
		return false;
	}
	return true;
}

static void elf_close(struct elf_file *ef)
{
	if (ef->elf) {
		elf_end(ef->elf);
		close(ef->fd);
	}
	ef->elf = NULL;
}

static void hex(char *out, const uint8_t *id, int n)
{
	int i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
}

/* The .gnu_debuglink file name, or false. */
static bool debuglink(Elf *elf, char *out, size_t sz)
{
	Elf_Scn *scn = pevt_elf_find_scn(elf, 0, ".gnu_debuglink");
	Elf_Data *data;

	if (!scn)
		return false;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_size)
		return false;
	snprintf(out, sz, "%.*s", (int)strnlen(data->d_buf, data->d_size), (const char *)data->d_buf);
	return out[0] != 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static void elf_version_init(void)
{
	elf_version(EV_CURRENT);
}

/*
 * NT_GNU_BUILD_ID of an ELF file (filename__read_build_id()), for the
 * reader's DSOs and the writer's BUILD_ID section alike.
 */
int pevt_elf__build_id(const char *path, uint8_t *id, size_t max)
{
	struct elf_file ef;
	Elf_Scn *scn = NULL;
	int ret = -ENOENT;

	pthread_once(&elf_once, elf_version_init);
	if (!elf_open(&ef, path))
		return -ENOENT;
	while (ret < 0 && (scn = elf_nextscn(ef.elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + noff, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= max) {
				memcpy(id, (char *)data->d_buf + doff, nh.n_descsz);
				ret = nh.n_descsz;
				break;
			}
		}
	}
	elf_close(&ef);
	return ret;
}

static void read_build_id(const char *path, struct pevt_dso *dso)
{
	int n = pevt_elf__build_id(path, dso->build_id, sizeof(dso->build_id));

	if (n > 0)
		dso->build_id_size = n;
}

/*
 * This process's vdso as a file (a memfd): where the build-id cache has
 * no copy of a recording's [vdso], perf report uses its own
 * (machine__findnew_vdso()), which is the recording's when both ran on
 * the same kernel.  Its ELF image ends with the section headers.
 * Return: the memfd, or -1.
 */
static int own_vdso_fd(void)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t size;
	int fd;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1 << 20))
		return -1;
	fd = memfd_create("pevt-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, eh, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

static int load_elf_dso(struct pevt_machine *m, struct pevt_dso *dso)
{
	char paths[8][4096], bid[41] = "", link[256];
	const char *home = getenv("HOME"), *symfs = pevt_machine__symfs(m);
	const struct pevt_build_id *b = pevt_machine__build_id(m, dso->long_name);
	struct elf_file syms = { 0 }, rt = { 0 }, tmp;
	struct symbuf sb = { 0 };
	char dir[2048], *slash;
	int n = 0, i, err, vdso_fd = -1, syms_i = -1, rt_i = -1;
	size_t nr_regular;
	Elf_Scn *scn;

	if (b && b->size && !all_zero(b->id, b->size)) {
		memcpy(dso->build_id, b->id, b->size);
		dso->build_id_size = b->size;
	}
	/* None in the file: the DSO's own, like perf's dso__load(). */
	if (!dso->build_id_size && dso->long_name[0] == '/') {
		snprintf(paths[0], sizeof(paths[0]), "%s%s", symfs ?: "", dso->long_name);
		read_build_id(paths[0], dso);
	}
	if (dso->build_id_size)
		hex(bid, dso->build_id, dso->build_id_size);
	if (bid[0] && home && pevt_machine__use_buildid_cache(m)) {
		/* build_id_cache__basename(): "vdso" for the vdso, else "elf" */
		snprintf(paths[n++], 4096, "%s/.debug/.build-id/%.2s/%s/%s", home, bid, bid + 2,
			 strcmp(dso->long_name, "[vdso]") ? "elf" : "vdso");
		snprintf(paths[n++], 4096, "%s/.debug/.build-id/%.2s/%s/debug", home, bid, bid + 2);
	}
	if (bid[0])
		snprintf(paths[n++], 4096, "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
			 symfs ?: "", bid, bid + 2);
	snprintf(paths[n++], 4096, "%s/usr/lib/debug%s", symfs ?: "", dso->long_name);
	snprintf(paths[n++], 4096, "%s%s", symfs ?: "", dso->long_name);
	if (!strcmp(dso->long_name, "[vdso]") && !symfs && (vdso_fd = own_vdso_fd()) >= 0) {
		uint8_t id[sizeof(dso->build_id)];
		int len;

		/* Only if it is the recording's: the same build id, or none recorded. */
		snprintf(paths[n], 4096, "/proc/self/fd/%d", vdso_fd);
		len = pevt_elf__build_id(paths[n], id, sizeof(id));
		if (!dso->build_id_size ||
		    (len == (int)dso->build_id_size && !memcmp(id, dso->build_id, len)))
			n++;
	}

	for (i = 0; i < n && !(syms.elf && rt.elf); i++) {
		if (!elf_open(&tmp, paths[i]))
			continue;
		if (!syms.elf && pevt_elf_find_scn(tmp.elf, SHT_SYMTAB, ".symtab")) {
			syms = tmp;
			syms_i = i;
			if (!rt.elf && pevt_elf_find_scn(tmp.elf, SHT_DYNSYM, ".dynsym"))
				rt = tmp;
			continue;
		}
		if (!rt.elf && pevt_elf_find_scn(tmp.elf, SHT_DYNSYM, ".dynsym")) {
			rt = tmp;
			rt_i = i;
			/* .gnu_debuglink: next to the DSO, in .debug/, in /usr/lib/debug */
			if (!syms.elf && debuglink(rt.elf, link, sizeof(link)) && n + 3 <= 8) {
				snprintf(dir, sizeof(dir), "%s%s", symfs ?: "", dso->long_name);
				slash = strrchr(dir, '/');
				if (slash) {
					*slash = 0;
					snprintf(paths[n++], 4096, "%s/%s", dir, link);
					snprintf(paths[n++], 4096, "%s/.debug/%s", dir, link);
					snprintf(paths[n++], 4096, "%s/usr/lib/debug%s/%s", symfs ?: "",
						 dir + (symfs ? strlen(symfs) : 0), link);
				}
			}
			continue;
		}
		elf_close(&tmp);
	}
	if (vdso_fd >= 0)
		close(vdso_fd);	/* the ELF handles keep their own fds */
	if (!syms.elf && !rt.elf)
		return -ENOENT;
	if (!rt.elf)
		rt = syms;
	if (!syms.elf) {
		syms = rt;
		syms_i = rt_i;
	}
	/* where addr2line would look for inline info (inline.c) */
	if (syms_i >= 0 && strncmp(paths[syms_i], "/proc/self/fd/", 14))
		dso->symsrc = strdup(paths[syms_i]);
	scn = pevt_elf_find_scn(syms.elf, SHT_SYMTAB, ".symtab");
	if (!scn)
		scn = pevt_elf_find_scn(syms.elf, SHT_DYNSYM, ".dynsym");
	err = scn ? load_elf_syms(&sb, syms.elf, scn, rt.elf) : -ENOENT;
	nr_regular = sb.nr;
	if (!err && sb.nr)
		err = synth_plt(&sb, rt.elf);
	if (syms.elf != rt.elf)
		elf_close(&syms);
	elf_close(&rt);
	if (err) {
		sb_free(&sb);
		return err;
	}
	return sb_finish(dso, &sb, false, nr_regular);
}

/* A JIT's /tmp/perf-PID.map: "START SIZE name" per line, hex. */
static int load_perf_map(struct pevt_dso *dso)
{
	struct symbuf b = { 0 };
	char line[4096];
	FILE *f = fopen(dso->long_name, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, size;
		int n = 0;

		if (sscanf(line, "%llx %llx %n", &start, &size, &n) < 2 || !n)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (sb_add(&b, start, size, STT_FUNC, STB_GLOBAL, line + n)) {
			fclose(f);
			sb_free(&b);
			return -ENOMEM;
		}
	}
	fclose(f);
	return sb_finish(dso, &b, false, b.nr);
}

/* The kallsyms file the kernel's symbols come from (see the top). */
static const char *kernel_path(struct pevt_machine *m, char *path, size_t size)
{
	const char *home = getenv("HOME"), *opt = pevt_machine__kallsyms(m);
	const struct pevt_build_id *b = pevt_machine__build_id(m, "[kernel.kallsyms]");
	char bid[41];

	if (opt)
		return opt;
	if (b && b->size && home && pevt_machine__use_buildid_cache(m)) {
		hex(bid, b->id, b->size);
		snprintf(path, size, "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home, bid);
		if (!access(path, R_OK))
			return path;
	}
	return "/proc/kallsyms";
}

/*
 * The kernel's symbols loaded ahead, on a thread of their own
 * (pevt_machine__prefetch_kernel()): the same load_kallsyms() of the same
 * file into a dso of its own, whose symbols the kernel's dso takes when
 * it is loaded.  Parsing kallsyms' 120K lines takes 25-50 ms, which the
 * first kernel sample used to wait for on the thread reading the records.
 */
struct pevt_kprefetch {
	pthread_t tid;
	pthread_mutex_t lock;
	bool joined, taken;
	int cancel;
	int err;
	char buf[4096];
	const char *path;
	struct pevt_dso dso;		/* only its symbols */
};

static void *kprefetch_run(void *arg)
{
	struct pevt_kprefetch *k = arg;

	k->err = load_kallsyms(&k->dso, k->path, NULL, &k->cancel);
	return NULL;
}

int pevt_machine__prefetch_kernel(struct pevt_machine *m)
{
	struct pevt_kprefetch *k;
	int err;

	if (pevt_machine__kprefetch(m))
		return 0;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->path = kernel_path(m, k->buf, sizeof(k->buf));
	if (k->path != k->buf && k->path != pevt_machine__kallsyms(m))
		k->path = strcpy(k->buf, k->path);
	pthread_mutex_init(&k->lock, NULL);
	pthread_once(&elf_once, elf_version_init);
	err = pthread_create(&k->tid, NULL, kprefetch_run, k);
	if (err) {
		pthread_mutex_destroy(&k->lock);
		free(k);
		return -err;
	}
	pevt_machine__set_kprefetch(m, k);
	return 0;
}

/* Wait for the prefetch; true (and its result in @err) if it read @path. */
static bool kprefetch_take(struct pevt_kprefetch *k, const char *path, struct pevt_dso *dso,
			   int *err)
{
	bool ok;

	pthread_mutex_lock(&k->lock);
	if (!k->joined) {
		pthread_join(k->tid, NULL);
		k->joined = true;
	}
	ok = !k->taken && !strcmp(k->path, path);
	if (ok) {
		k->taken = true;
		*err = k->err;
		dso->syms = k->dso.syms;
		dso->syms_bytes = k->dso.syms_bytes;
		dso->nr_syms = k->dso.nr_syms;
		dso->strtab = k->dso.strtab;
		dso->strtab_bytes = k->dso.strtab_bytes;
	}
	pthread_mutex_unlock(&k->lock);
	return ok;
}

/* pevt_machine__delete(): stop the prefetch, free what no dso took. */
void pevt_kprefetch__delete(struct pevt_kprefetch *k)
{
	if (!k)
		return;
	__atomic_store_n(&k->cancel, 1, __ATOMIC_RELAXED);
	if (!k->joined)
		pthread_join(k->tid, NULL);
	if (!k->taken) {
		pevt_big_free(k->dso.syms, k->dso.syms_bytes);
		pevt_big_free(k->dso.strtab, k->dso.strtab_bytes);
	}
	pthread_mutex_destroy(&k->lock);
	free(k);
}

static int load_kernel(struct pevt_machine *m, struct pevt_dso *dso)
{
	const char *module = dso->kmodule ? dso->long_name : NULL;
	struct pevt_kprefetch *k = pevt_machine__kprefetch(m);
	char buf[4096];
	const char *path = kernel_path(m, buf, sizeof(buf));
	int err;

	if (!module && k && kprefetch_take(k, path, dso, &err))
		return err;
	return load_kallsyms(dso, path, module, NULL);
}

/*
 * A lookup was a binary search over all of a DSO's symbols: 15 dependent
 * cache misses for cc1's 28K, 10% of a report.  If the symbols do not
 * overlap (each ends at or before the next one starts), the one holding
 * an address is the last one starting at or before it, whatever the
 * search: then buckets of 2^shift bytes (at most two per symbol) tell
 * between which two symbols to search.  Overlapping symbols keep the
 * plain search, whose path decides which one an address gets.
 */
static void build_index(struct pevt_dso *dso)
{
	const struct pevt_sym *v = dso->syms;
	size_t i, n = dso->nr_syms, nb, b;
	unsigned int shift = 4;
	uint64_t base, span;
	uint32_t *ix;

	if (n < 64 || n >= UINT32_MAX)
		return;
	for (i = 0; i < n; i++)
		if (v[i].end < v[i].start || (i + 1 < n && v[i].end > v[i + 1].start))
			return;
	base = v[0].start;
	span = v[n - 1].end - base;
	while ((span >> shift) >= 2 * n)
		shift++;
	/* kallsyms' per-CPU symbols at 0 and text at -2 GB: no use */
	if (shift > 16)
		return;
	nb = (span >> shift) + 1;
	ix = malloc((nb + 1) * sizeof(*ix));
	if (!ix)
		return;
	/* ix[b]: the last symbol starting at or before bucket b's start */
	for (b = 0, i = 0; b <= nb; b++) {
		uint64_t at = base + ((uint64_t)b << shift);

		if (at < base)
			at = UINT64_MAX;	/* past the top */
		while (i + 1 < n && v[i + 1].start <= at)
			i++;
		ix[b] = i;
	}
	dso->sym_index = ix;
	dso->index_base = base;
	dso->nr_index = nb;
	dso->index_shift = shift;
}

int pevt_dso__load(struct pevt_machine *m, struct pevt_dso *dso)
{
	int err = 0;

	pthread_once(&elf_once, elf_version_init);
	pthread_mutex_lock(&dso->lock);
	if (!__atomic_load_n(&dso->loaded, __ATOMIC_ACQUIRE)) {
		if (dso->kernel || dso->kmodule)
			err = load_kernel(m, dso);
		else if (!strncmp(dso->long_name, "/tmp/perf-", 10))
			err = load_perf_map(dso);
		else if (dso->long_name[0] == '/' || dso->long_name[0] == '[')
			err = load_elf_dso(m, dso);
		build_index(dso);
		__atomic_store_n(&dso->loaded, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&dso->lock);
	return err;
}

struct pevt_sym *pevt_dso__sym_at(struct pevt_machine *m, struct pevt_dso *dso, uint64_t addr)
{
	if (!__atomic_load_n(&dso->loaded, __ATOMIC_ACQUIRE))
		pevt_dso__load(m, dso);
	return pevt_dso__find_sym(dso, addr);
}

struct pevt_sym *pevt_dso__find_sym(struct pevt_dso *dso, uint64_t addr)
{
	size_t lo = 0, hi = dso->nr_syms;

	if (dso->sym_index && addr >= dso->index_base) {
		uint64_t b = (addr - dso->index_base) >> dso->index_shift;

		/* the symbol holding @addr, if any, is in [ix[b], ix[b + 1]] */
		if (b < dso->nr_index) {
			lo = dso->sym_index[b];
			hi = dso->sym_index[b + 1] + 1;
		}
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct pevt_sym *s = &dso->syms[mid];

		if (addr < s->start)
			hi = mid;
		else if (addr >= s->end)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}
