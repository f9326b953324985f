// SPDX-License-Identifier: GPL-2.0
/*
 * pevt module entry: bring the subsystems up in order, down in reverse.
 */
#include <linux/module.h>
#include <linux/init.h>

static int __init pevt_init(void)
{
	return 0;
}

static void __exit pevt_exit(void)
{
}

module_init(pevt_init);
module_exit(pevt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pevt: size-at-end ring buffers and rotation-id scheduling for perf events");
