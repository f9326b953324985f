/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test-only planted bugs, see kmod/plant.c.  Without PEVT_PLANT the hook
 * compiles to nothing, so main.c calls it unconditionally.
 */
#ifndef PEVT_PLANT_H
#define PEVT_PLANT_H

#ifdef PEVT_PLANT
void pevt_plant_run(void);
#else
static inline void pevt_plant_run(void) { }
#endif

#endif /* PEVT_PLANT_H */
