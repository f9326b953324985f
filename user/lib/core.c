// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpevt: the raw opener behind pevt_evsel, for both backends.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/pevt.h>
#include <pevt/evsel.h>
#include "internal/lib.h"

const char *pevt_backend__name(enum pevt_backend backend)
{
	switch (backend) {
	case PEVT_BACKEND_PERF:		return "perf";
	case PEVT_BACKEND_DEVICE:	return "pevt";
	}
	return "unknown";
}

static int open_perf(const struct perf_event_attr *attr, int pid, int cpu,
		     int group_fd, bool cloexec)
{
	long fd;

	fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd,
		     cloexec ? PERF_FLAG_FD_CLOEXEC : 0UL);
	return fd < 0 ? -errno : (int)fd;
}

static int open_device(const struct perf_event_attr *attr, int pid, int cpu,
		       int group_fd, bool cloexec, const char *path)
{
	struct pevt_open req = {
		.size = sizeof(req),
		.flags = cloexec ? PEVT_OPEN_FD_CLOEXEC : 0,
		.attr = (uint64_t)(uintptr_t)attr,
		.pid = pid,
		.cpu = cpu,
		.group_fd = group_fd,
	};
	int dev, fd, err;

	/* The ioctl needs no write access; the device mode decides (security.md). */
	dev = open(path ? path : PEVT_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	fd = ioctl(dev, PEVT_IOC_OPEN, &req);
	err = fd < 0 ? -errno : fd;
	close(dev);
	return err;
}

int pevt_open(const struct perf_event_attr *attr, int pid, int cpu,
	      int group_fd, const struct pevt_open_opts *opts)
{
	struct pevt_open_opts o;
	int fd;

	if (!attr || libpevt_opts_copy(&o, sizeof(o), opts))
		return libpevt_err(-EINVAL);
	switch (o.backend) {
	case PEVT_BACKEND_PERF:
		fd = open_perf(attr, pid, cpu, group_fd, !o.no_cloexec);
		break;
	case PEVT_BACKEND_DEVICE:
		fd = open_device(attr, pid, cpu, group_fd, !o.no_cloexec,
				 o.device);
		break;
	default:
		fd = -EINVAL;
		break;
	}
	return libpevt_err(fd);
}
