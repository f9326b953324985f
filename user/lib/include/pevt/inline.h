/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - the functions inlined at an address of a DSO, from its DWARF
 * inline info, as perf report 6.1 adds them to DWARF-unwound call chains
 * (tools/perf/util/machine.c append_inlines(), srcline.c
 * dso__parse_addr_inlines(), which asks `addr2line -i -f`).
 *
 *	struct pevt_inline_cache *c = pevt_inline_cache__new(m);  // per thread
 *	n = pevt_inline__frames(c, dso, sym, addr, &frames);
 *	pevt_inline_cache__delete(c);
 *
 * The frames are symbols, innermost first: the inlined functions, then
 * the function itself.  Each inlined one is a symbol of its own with the
 * range of @sym, ->inlined set and the name " (inlined)" appended; the
 * last one is @sym when DWARF names it as @sym is named, else another
 * such symbol (perf: new_inline_sym()).  Symbols are interned per (DSO,
 * @sym, name): one pointer for one function wherever it was met.
 */
#ifndef __LIBPEVT_INLINE_H
#define __LIBPEVT_INLINE_H
#include <stdint.h>
#include <pevt/machine.h>

struct pevt_inline_cache;
struct pevt_inline_dso;

LIBPEVT_API struct pevt_inline_cache *pevt_inline_cache__new(struct pevt_machine *m);
LIBPEVT_API void pevt_inline_cache__delete(struct pevt_inline_cache *c);
/*
 * The frames at @addr (a file offset, as symbols are) of @dso, whose
 * symbol there is @sym, into *@frames (valid until the next call): their
 * number, 0 when there is no inline info (the frame stays as it is), or
 * -ENOMEM.
 */
LIBPEVT_API int pevt_inline__frames(struct pevt_inline_cache *c, struct pevt_dso *dso,
				    struct pevt_sym *sym, uint64_t addr,
				    struct pevt_sym *const **frames);
/* Drop @dso's DWARF handles and inline symbols (machine teardown). */
void pevt_dso__inline_free(struct pevt_dso *dso);

#endif
