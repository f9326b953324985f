// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt - user stacks of `--call-graph dwarf` samples unwound with
 * libdw, frame for frame as perf's tools/perf/util/unwind-libdw.c: the
 * DSO of each pc reported to libdwfl at its map's base, memory read from
 * the sample's stack dump in [sp, sp + dyn_size) and from the DSO's file
 * elsewhere, x86-64 registers in DWARF order, a caller's pc minus one.
 *
 * Where perf starts a libdwfl session per sample, an unwinder keeps one
 * per address space (the thread's maps) for as long as the DSOs it has
 * reported are still mapped where they were: ELF files, their CFI and
 * libdw's caches are loaded once, not once per sample.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>
#include <asm/perf_regs.h>

#include <pevt/unwind.h>

#define NR_SPACES	8

/* The x86-64 DWARF register numbers 0..16: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
static const uint8_t dwarf_to_perf[17] = {
	PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
	PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
	PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	PERF_REG_X86_IP,
};

/* A libdwfl session: the modules of one address space. */
struct space {
	const struct pevt_maps *maps;	/* whose (the threads of a process) */
	Dwfl *dwfl;
	bool attached;			/* dwfl_attach_state() done */
	uint64_t used;			/* last use, for eviction */
};

struct pevt_unwind {
	struct pevt_machine *m;
	struct space spaces[NR_SPACES];
	uint64_t clock;
	/* the sample being unwound */
	struct space *sp;
	struct pevt_thread *t;
	const struct pevt_sample *s;
	uint64_t sp_reg;		/* user stack dump: [sp_reg, sp_reg + stack_size) */
	uint64_t stack_size;
	uint64_t *ips;
	int n, max;
	bool conflict;			/* a DSO is not where the session has it */
	/* rbx as "same value" (walk_on()) */
	bool rbx_known;			/* rbx is the value below */
	uint64_t rbx;
	uint64_t prev_pc;		/* the frame before's, looked up */
	Dwarf_Word last[17];		/* the last frame's registers ... */
	uint32_t last_set;		/* ... those libdw had */
	bool restart;			/* the walk starts from last[] */
};

bool pevt_unwind__can(const struct pevt_data_evsel *evsel)
{
	uint64_t need = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

	return evsel && (evsel->attr.sample_type & need) == need;
}

/* perf_reg_value(): the values come in the order of the mask's bits. */
static uint64_t reg(const struct pevt_sample *s, int r)
{
	uint64_t mask = s->evsel->attr.sample_regs_user;

	if (!(mask & (1ULL << r)))
		return 0;
	return s->regs_user[__builtin_popcountll(mask & ((1ULL << r) - 1))];
}

/*
 * Where libdwfl looks for separate debug info: its standard places, but
 * never a debuginfod server (no network from a report).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	if (getenv("DEBUGINFOD_URLS"))
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = find_debuginfo,
	.debuginfo_path = &debuginfo_path,
	.section_address = dwfl_offline_section_address,
};

static void space_drop(struct space *sp)
{
	if (sp->dwfl)
		dwfl_end(sp->dwfl);
	memset(sp, 0, sizeof(*sp));
}

/* The map of @addr for the sample's thread at its time (NULL: none). */
static const struct pevt_map *map_of(struct pevt_unwind *u, uint64_t addr)
{
	struct pevt_addr_loc al;

	pevt_machine__resolve_map(u->m, u->t, PERF_RECORD_MISC_USER, addr, u->s->time, &al);
	return al.map;
}

/*
 * The module of the DSO mapped at @pc, reported at the map's base if the
 * session has not got it yet (perf's __report_module()): the file by its
 * name, else the build-id cache's copy.  Returns 0 with *@modp NULL for a
 * pc without a map (perf keeps such a frame), -1 if the DSO has no ELF
 * file or @pc is outside it, and sets u->conflict when the session has
 * another DSO or base at @pc, or a module where @pc has no map now: a
 * fresh session, like perf's per sample, would not.
 */
static int report_module(struct pevt_unwind *u, uint64_t pc, Dwfl_Module **modp,
			 const struct pevt_map **mapp)
{
	const struct pevt_map *map = map_of(u, pc);
	Dwfl *dwfl = u->sp->dwfl;
	char path[4096], bid[41];
	struct pevt_dso *dso;
	Dwfl_Module *mod;
	uint64_t base;
	void **ud;
	int i;

	*modp = NULL;
	if (mapp)
		*mapp = map;
	if (!map || !map->dso) {
		/* a DSO reported for an earlier sample is no longer there */
		if (dwfl_addrmodule(dwfl, pc))
			u->conflict = true;
		return 0;
	}
	dso = map->dso;
	base = map->start - map->pgoff;
	mod = dwfl_addrmodule(dwfl, pc);
	if (mod) {
		Dwarf_Addr start;

		dwfl_module_info(mod, &ud, &start, NULL, NULL, NULL, NULL, NULL);
		if (start == base && *ud == dso) {
			*modp = mod;
			return 0;
		}
		u->conflict = true;
		return -1;
	}
	/* the build id, as the symbols' loading finds it */
	pevt_dso__load(u->m, dso);
	snprintf(path, sizeof(path), "%s", dso->long_name);
	mod = dso->long_name[0] == '/' ? dwfl_report_elf(dwfl, dso->short_name, path, -1, base,
							 false) : NULL;
	if (!mod && dso->build_id_size && getenv("HOME") &&
	    pevt_machine__use_buildid_cache(u->m)) {
		for (i = 0; i < dso->build_id_size; i++)
			sprintf(bid + 2 * i, "%02x", dso->build_id[i]);
		snprintf(path, sizeof(path), "%s/.debug/.build-id/%.2s/%s/%s", getenv("HOME"),
			 bid, bid + 2, strcmp(dso->long_name, "[vdso]") ? "elf" : "vdso");
		mod = dwfl_report_elf(dwfl, dso->short_name, path, -1, base, false);
	}
	if (!mod)
		return -1;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = dso;
	if (dwfl_addrmodule(dwfl, pc) != mod)
		return -1;
	*modp = mod;
	return 0;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct pevt_unwind *u = arg;

	/* the sample's thread, alone */
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return u->s->tid;
}

/* The stack dump, else the file of the DSO mapped there (access_dso_mem()). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct pevt_unwind *u = arg;
	const struct pevt_map *map;
	Dwfl_Module *mod;
	GElf_Addr bias;
	uint64_t off;
	size_t size;
	char *img;
	Elf *elf;

	if (addr + sizeof(*result) < addr)
		return false;
	if (addr >= u->sp_reg && addr + sizeof(*result) <= u->sp_reg + u->stack_size) {
		memcpy(result, (const char *)u->s->stack_user + (addr - u->sp_reg),
		       sizeof(*result));
		return true;
	}
	if (report_module(u, addr, &mod, &map) || !mod)
		return false;
	elf = dwfl_module_getelf(mod, &bias);
	img = elf ? elf_rawfile(elf, &size) : NULL;
	off = addr - map->start + map->pgoff;
	if (!img || off > size || size - off < sizeof(*result))
		return false;
	memcpy(result, img + off, sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct pevt_unwind *u = arg;
	Dwarf_Word regs[17];
	int i;

	if (u->restart) {
		/* the registers libdw had, no more: the others stay undefined */
		for (i = 0; i < 17; i++)
			if ((u->last_set & (1U << i)) &&
			    !dwfl_thread_state_registers(thread, i, 1, &u->last[i]))
				return false;
		return true;
	}
	for (i = 0; i < 17; i++)
		regs[i] = reg(u->s, dwarf_to_perf[i]);
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/*
 * rbx, "same value" where libdw loses it.  The x86-64 ABI rules libdw
 * (0.188, backends/x86_64_cfi.c) starts every frame's CFI with mark
 * DWARF register 0, rax, callee-saved where it means rbx (3): a frame
 * whose CFI says nothing of rbx leaves it undefined in its caller, so a
 * caller whose CFA is rbx-based (glibc's _dl_runtime_resolve_xsavec:
 * `mov %rsp,%rbx; and $-64,%rsp`, CFA rbx+32) ends the walk when the
 * sample is in a callee that has not saved rbx yet (_dl_fixup's first
 * instructions).  Debian's perf unwinds with libunwind, whose registers
 * are "same value" unless the CFI says otherwise, and goes on to _start.
 * Where the CFI does say where rbx was saved and that is outside the
 * stack dump (_dl_fixup's last instructions, after its `pop %rbx`: the
 * rule still points below sp), libunwind stops there, and so does this.
 */
static bool rbx_no_rule(struct pevt_unwind *u, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(u->sp->dwfl, pc);
	Dwarf_Op ops_mem[3], *ops;
	Dwarf_Frame *frame = NULL;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;
	size_t nops;
	bool none;

	if (!mod)
		return false;
	/* the CFI libdw unwinds this frame with: .eh_frame, else .debug_frame */
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame)) {
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame))
			return false;
	}
	/* no rule: libdw's answer is "undefined" (no ops, in ops_mem) */
	none = dwarf_frame_register(frame, 3, ops_mem, &ops, &nops) == 0 && nops == 0 &&
	       ops == ops_mem;
	free(frame);
	return none;
}

/*
 * Each frame's registers (as libdw has them, @pc the one looked up) and
 * rbx as libunwind has it: libdw's if it has one, else the frame
 * before's if that frame's CFI says nothing of rbx (looked up only
 * then).  walk_on() starts the walk again from the last frame with that
 * rbx put back.
 */
static void keep_registers(struct pevt_unwind *u, Dwfl_Frame *state, Dwarf_Addr pc)
{
	unsigned int i;

	u->last_set = 0;
	for (i = 0; i < 17; i++)
		if (dwfl_frame_reg(state, i, &u->last[i]) == 0)
			u->last_set |= 1U << i;
	u->last[16] = pc;
	u->last_set |= 1U << 16;
	if (u->last_set & (1U << 3)) {
		u->rbx = u->last[3];
		u->rbx_known = true;
	} else if (u->rbx_known) {
		u->rbx_known = rbx_no_rule(u, u->prev_pc);
	}
	u->prev_pc = pc;
}

/*
 * perf's frame_callback() and entry(): the DSO of each pc is reported
 * before libdw is asked whether the frame is an activation (a signal
 * frame's pc is not a return address); a frame whose DSO cannot be
 * reported ends the walk and is not kept.
 */
static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct pevt_unwind *u = arg;
	Dwfl_Module *mod;
	bool activation;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	report_module(u, pc, &mod, NULL);
	if (u->conflict || !dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (!activation)
		pc--;
	if (u->restart) {
		/* the frame the walk stopped at, kept already */
		u->restart = false;
		return DWARF_CB_OK;
	}
	if (report_module(u, pc, &mod, NULL))
		return DWARF_CB_ABORT;
	u->ips[u->n++] = pc;
	keep_registers(u, state, pc);
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static struct space *space_get(struct pevt_unwind *u, const struct pevt_maps *maps)
{
	struct space *sp, *lru = &u->spaces[0];
	int i;

	for (i = 0; i < NR_SPACES; i++) {
		sp = &u->spaces[i];
		if (sp->dwfl && sp->maps == maps)
			goto out;
		if (!sp->dwfl || (lru->dwfl && sp->used < lru->used))
			lru = sp;
	}
	sp = lru;
	space_drop(sp);
	sp->dwfl = dwfl_begin(&offline_callbacks);
	if (!sp->dwfl)
		return NULL;
	sp->maps = maps;
out:
	sp->used = ++u->clock;
	return sp;
}

/*
 * A walk that stopped at a frame without rbx while an earlier frame had
 * it (keep_registers()) goes on from that frame with that rbx, for as
 * long as that brings more frames.
 */
static void walk_on(struct pevt_unwind *u)
{
	int before;

	while (!u->conflict && u->n > 0 && u->n < u->max && !(u->last_set & (1U << 3)) &&
	       u->rbx_known) {
		before = u->n;
		u->last[3] = u->rbx;
		u->last_set |= 1U << 3;
		u->restart = true;
		dwfl_getthread_frames(u->sp->dwfl, u->s->tid, frame_cb, u);
		u->restart = false;
		if (u->n == before)
			break;
	}
}

/* One try in the session of the thread's maps; -EAGAIN on a conflict. */
static int unwind_once(struct pevt_unwind *u)
{
	Dwfl_Module *mod;

	u->sp = space_get(u, u->t->maps);
	if (!u->sp)
		return -ENOMEM;
	u->n = 0;
	u->conflict = false;
	if (report_module(u, reg(u->s, PERF_REG_X86_IP), &mod, NULL))
		return u->conflict ? -EAGAIN : 0;
	if (!u->sp->attached) {
		if (!dwfl_attach_state(u->sp->dwfl, NULL, u->s->tid, &thread_callbacks, u))
			return 0;
		u->sp->attached = true;
	}
	u->rbx_known = false;
	u->restart = false;
	dwfl_getthread_frames(u->sp->dwfl, u->s->tid, frame_cb, u);
	walk_on(u);
	return u->conflict ? -EAGAIN : u->n;
}

int pevt_unwind__user(struct pevt_unwind *u, struct pevt_thread *t,
		      const struct pevt_sample *s, uint64_t *ips, int max)
{
	int n;

	if (!pevt_unwind__can(s->evsel) || !s->regs_user_abi || !s->regs_user ||
	    !s->stack_user_size || !s->stack_user_dyn || !t || !t->maps || max <= 0)
		return 0;
	/* x86-64 only: a 32-bit task's registers are another set */
	if (s->regs_user_abi != PERF_SAMPLE_REGS_ABI_64)
		return 0;
	u->t = t;
	u->s = s;
	u->ips = ips;
	u->max = max;
	u->sp_reg = reg(s, PERF_REG_X86_SP);
	u->stack_size = s->stack_user_dyn < s->stack_user_size ? s->stack_user_dyn
							       : s->stack_user_size;
	n = unwind_once(u);
	if (n == -EAGAIN) {
		/* the maps changed under the session: a fresh one */
		space_drop(u->sp);
		n = unwind_once(u);
		if (n == -EAGAIN)
			n = u->n;
	}
	return n;
}

struct pevt_unwind *pevt_unwind__new(struct pevt_machine *m)
{
	struct pevt_unwind *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->m = m;
	return u;
}

void pevt_unwind__delete(struct pevt_unwind *u)
{
	int i;

	if (!u)
		return;
	for (i = 0; i < NR_SPACES; i++)
		space_drop(&u->spaces[i]);
	free(u);
}
