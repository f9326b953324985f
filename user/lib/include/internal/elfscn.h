/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __LIBPEVT_INTERNAL_ELFSCN_H
#define __LIBPEVT_INTERNAL_ELFSCN_H

#include <gelf.h>

/*
 * The first section of @elf with type @type (0: any) and name @name
 * (NULL: any), or NULL (symbols.c).
 */
Elf_Scn *pevt_elf_find_scn(Elf *elf, Elf64_Word type, const char *name);

#endif /* __LIBPEVT_INTERNAL_ELFSCN_H */
