// SPDX-License-Identifier: GPL-2.0
/*
 * pevt module entry: bring the subsystems up in order, down in reverse.
 * /dev/pevt comes last: nothing can be opened before the rest is ready.
 */
#include <linux/module.h>
#include <linux/init.h>

#include "internal.h"
#include "plant.h"
#include "vpmu.h"
#include "ring_buffer.h"
#include "output.h"
#include "pevt_sched.h"
#include "perm.h"
#include "sideband.h"

static int __init pevt_init(void)
{
	int ret;

	pevt_plant_run();	/* test-only builds; a no-op otherwise */

	/* The vPMU first: pevt's scheduler allocates its slots. */
	ret = vpmu_init();
	if (ret)
		return ret;
	ret = pevt_core_init();
	if (ret)
		goto err_vpmu;
	ret = pevt_context_init();
	if (ret)
		goto err_core;
	ret = rb_init();
	if (ret)
		goto err_context;
	ret = pevt_sample_init();
	if (ret)
		goto err_rb;
	/* The hooks, once what they call is ready: sideband.c. */
	ret = pevt_sideband_init();
	if (ret)
		goto err_sample;
	ret = pevt_sw_init();
	if (ret)
		goto err_sideband;
	ret = pevt_vpmu_src_init();
	if (ret)
		goto err_sw;
	ret = pevt_sched_init();
	if (ret)
		goto err_vsrc;
	ret = perm_init();
	if (ret)
		goto err_sched;
	pevt_callchain_init();
	ret = pevt_chardev_init();
	if (ret)
		goto err_perm;
	pevt_probe_init(pevt_debugfs_dir());	/* bench instrument, unarmed */
	return 0;

err_perm:
	pevt_callchain_exit();
	perm_exit();
err_sched:
	pevt_sched_exit();
err_vsrc:
	pevt_vpmu_src_exit();
err_sw:
	pevt_sw_exit();
err_sideband:
	pevt_sideband_exit();
err_sample:
	pevt_sample_exit();
err_rb:
	rb_exit();
err_context:
	pevt_context_exit();
err_core:
	pevt_core_exit();
err_vpmu:
	vpmu_exit();
	return ret;
}

static void __exit pevt_exit(void)
{
	pevt_probe_exit();
	pevt_chardev_exit();
	pevt_callchain_exit();
	perm_exit();
	pevt_sched_exit();
	pevt_vpmu_src_exit();
	pevt_sw_exit();
	pevt_sideband_exit();
	pevt_sample_exit();
	rb_exit();
	pevt_context_exit();
	pevt_core_exit();
	vpmu_exit();
}

module_init(pevt_init);
module_exit(pevt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pevt: size-at-end ring buffers and rotation-id scheduling for perf events");
