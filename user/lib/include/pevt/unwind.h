/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - DWARF unwinding of the user stack of a sample recorded with
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER (`--call-graph dwarf`),
 * with libdw, as perf report does it (tools/perf/util/unwind-libdw.c).
 *
 *	struct pevt_unwind *u = pevt_unwind__new(m);	// one per thread
 *	n = pevt_unwind__user(u, t, &sample, ips, max);	// callee first
 *	pevt_unwind__delete(u);
 *
 * An unwinder is not shared between threads; it keeps one libdw session
 * per address space it met (the DSOs' ELF files and CFI stay loaded), and
 * starts a new one when the maps of a later sample disagree with it.
 */
#ifndef __LIBPEVT_UNWIND_H
#define __LIBPEVT_UNWIND_H
#include <stdbool.h>
#include <stdint.h>
#include <asm/perf_regs.h>
#include <pevt/machine.h>

/*
 * The user registers `perf record --call-graph dwarf` asks for on x86-64
 * (perf's PERF_REGS_MASK, 0xff0fff): every one perf_reg_validate() accepts,
 * ax .. r15 but ds, es, fs, gs. The unwinder reads them in this bit order.
 */
#define PEVT_REGS_USER_X86_64						\
	(((1ULL << PERF_REG_X86_64_MAX) - 1) &				\
	 ~((1ULL << PERF_REG_X86_DS) | (1ULL << PERF_REG_X86_ES) |	\
	   (1ULL << PERF_REG_X86_FS) | (1ULL << PERF_REG_X86_GS)))

struct pevt_unwind;

LIBPEVT_API struct pevt_unwind *pevt_unwind__new(struct pevt_machine *m);
LIBPEVT_API void pevt_unwind__delete(struct pevt_unwind *u);
/* Does @evsel's sample carry what pevt_unwind__user() needs? */
LIBPEVT_API bool pevt_unwind__can(const struct pevt_data_evsel *evsel);
/*
 * The user frames of @s (thread @t as of the sample's time), innermost
 * first, into @ips: the sample's user ip, then each caller's return
 * address minus one, at most @max.  Returns how many (0 when the sample
 * has no user regs or stack, or its ip is in no ELF file), or -ENOMEM.
 */
LIBPEVT_API int pevt_unwind__user(struct pevt_unwind *u, struct pevt_thread *t,
				  const struct pevt_sample *s, uint64_t *ips, int max);
#endif /* __LIBPEVT_UNWIND_H */
