// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/pevt: the misc device and PEVT_IOC_OPEN argument parsing.
 *
 * Access: like perf_event_open(), which any user may call, the device is
 * mode 0666 and every request is checked (perm.c, called from core.c):
 * perf_event_paranoid, CAP_PERFMON/CAP_SYS_ADMIN and ptrace read access
 * to a target task, with perf's errnos.  See Documentation/security.md.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <linux/pevt.h>

#include "internal.h"
#include "compat.h"

/*
 * perf_copy_attr(): attr.size 0 means VER0; sizes below VER0 or above a
 * page, and non-zero bytes beyond what this kernel knows, are -E2BIG and
 * the kernel's size is written back to attr.size.
 */
static int pevt_copy_attr(struct perf_event_attr __user *uattr,
			  struct perf_event_attr *attr)
{
	u32 size;
	int ret;

	memset(attr, 0, sizeof(*attr));
	if (get_user(size, &uattr->size))
		return -EFAULT;
	if (!size)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > PAGE_SIZE)
		goto err_size;

	ret = copy_struct_from_user(attr, sizeof(*attr), uattr, size);
	if (ret == -E2BIG)
		goto err_size;
	if (ret)
		return ret;
	attr->size = size;

	if (attr->__reserved_1 || attr->__reserved_2 || attr->__reserved_3)
		return -EINVAL;
	return 0;

err_size:
	if (put_user((u32)sizeof(*attr), &uattr->size))
		return -EFAULT;
	return -E2BIG;
}

static long pevt_ioc_open(struct pevt_open __user *uarg)
{
	struct perf_event_attr attr;
	struct pevt_open op;
	u32 size;
	int ret, i;

	if (get_user(size, &uarg->size))
		return -EFAULT;
	if (size < PEVT_OPEN_SIZE_VER0)
		return -EINVAL;
	if (size > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&op, sizeof(op), uarg, size);
	if (ret)
		return ret;
	if (op.flags & ~PEVT_OPEN_FLAGS_ALL || op.__reserved_0)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(op.__reserved_1); i++)
		if (op.__reserved_1[i])
			return -EINVAL;

	ret = pevt_copy_attr(u64_to_user_ptr(op.attr), &attr);
	if (ret)
		return ret;
	return pevt_event_open(&attr, op.pid, op.cpu, op.group_fd, op.flags);
}

/*
 * The size bits of the ioctl number are ignored: struct pevt_open is
 * versioned by its own size field, so a newer, larger struct keeps
 * working with an older module (and the other way round).
 */
#define PEVT_IOC_NOSIZE(cmd)	((cmd) & ~(unsigned int)IOCSIZE_MASK)

static long pevt_dev_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	switch (PEVT_IOC_NOSIZE(cmd)) {
	case PEVT_IOC_NOSIZE(PEVT_IOC_OPEN):
		return pevt_ioc_open((struct pevt_open __user *)arg);
	}
	return -ENOTTY;
}

static const struct file_operations pevt_dev_fops = {
	.owner		= THIS_MODULE,
	.open		= nonseekable_open,
	.unlocked_ioctl	= pevt_dev_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice pevt_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "pevt",
	.fops	= &pevt_dev_fops,
	.mode	= 0666,
};

/**
 * pevt_chardev_init() - register /dev/pevt.
 *
 * Return: 0 or -errno.
 */
int pevt_chardev_init(void)
{
	return misc_register(&pevt_miscdev);
}

/**
 * pevt_chardev_exit() - unregister /dev/pevt.
 */
void pevt_chardev_exit(void)
{
	misc_deregister(&pevt_miscdev);
}
