// SPDX-License-Identifier: GPL-2.0
/*
 * Planted bugs, one per kind, to prove the VM runner fails on each report
 * the debug kernel can produce (scripts/test-plants.sh).  Built only with
 * `make modules PEVT_PLANT=<kind>`; kmod/Kbuild never links this file
 * otherwise, and it must never be part of a shipped pevt.ko.
 *
 * Every bug is real but survivable: the module still loads, so the run
 * reaches the end and the runner, not a hang, decides the outcome.
 */
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "plant.h"

static DEFINE_MUTEX(plant_a);
static DEFINE_MUTEX(plant_b);
static DEFINE_SPINLOCK(plant_spin);

/* WARN: "WARNING: CPU: N PID: N at .../plant.c:L pevt_plant_run" */
static void __maybe_unused plant_warn(void)
{
	WARN_ON(1);
}

/*
 * ABBA: a then b, later b then a, in one thread so it never deadlocks;
 * lockdep reports "possible circular locking dependency" on the second.
 */
static void __maybe_unused plant_abba(void)
{
	mutex_lock(&plant_a);
	mutex_lock(&plant_b);
	mutex_unlock(&plant_b);
	mutex_unlock(&plant_a);

	mutex_lock(&plant_b);
	mutex_lock(&plant_a);
	mutex_unlock(&plant_a);
	mutex_unlock(&plant_b);
}

/* OOB: one byte past a 16-byte kmalloc: "BUG: KASAN: slab-out-of-bounds". */
static void __maybe_unused plant_oob(void)
{
	size_t n = 16;
	char *p;

	p = kmalloc(n, GFP_KERNEL);
	if (!p)
		return;
	OPTIMIZER_HIDE_VAR(n);	/* keep the compiler from seeing the overrun */
	pr_info("pevt: plant oob read %d\n", ((volatile char *)p)[n]);
	kfree(p);
}

/* LEAK: 128 bytes nobody points to; kmemleak names pevt_plant_run. */
static void __maybe_unused plant_leak(void)
{
	void *p = kmalloc(128, GFP_KERNEL);

	if (p)
		memset(p, 0x5a, 128);
	OPTIMIZER_HIDE_VAR(p);
	p = NULL;
}

/*
 * SLEEP: mutex_lock() under a spinlock.  Uncontended, it never actually
 * sleeps, but might_sleep() in it prints "BUG: sleeping function called
 * from invalid context" (and lockdep an "Invalid wait context").
 */
static void __maybe_unused plant_sleep(void)
{
	spin_lock(&plant_spin);
	mutex_lock(&plant_a);
	mutex_unlock(&plant_a);
	spin_unlock(&plant_spin);
}

/**
 * pevt_plant_run() - trigger the bug selected at build time
 *
 * Called once from module init.  The kind comes from PEVT_PLANT=<kind> on
 * the make command line (kmod/Kbuild turns it into PEVT_PLANT_<kind>).
 */
void pevt_plant_run(void)
{
	pr_info("pevt: planted bug '%s' armed\n", PEVT_PLANT_NAME);
#if defined(PEVT_PLANT_warn)
	plant_warn();
#elif defined(PEVT_PLANT_abba)
	plant_abba();
#elif defined(PEVT_PLANT_oob)
	plant_oob();
#elif defined(PEVT_PLANT_leak)
	plant_leak();
#elif defined(PEVT_PLANT_sleep)
	plant_sleep();
#else
#error "unknown PEVT_PLANT kind"
#endif
}
