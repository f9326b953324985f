/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM test helpers beyond common.h: the module's live-object counters
 * (debugfs pevt/stats), module unload/reload, sysfs numbers and strings,
 * CPU online control.
 */
#ifndef PEVT_SELFTESTS_LIVE_STATS_H
#define PEVT_SELFTESTS_LIVE_STATS_H

#include <stdio.h>
#include "common.h"

#define PEVT_STATS_PATH	"/sys/kernel/debug/pevt/stats"
#define VPMU_TYPE_PATH	"/sys/bus/event_source/devices/pevt_vpmu/type"

struct live_stats {
	long events;
	long task_contexts;
	long buffers;
};

/* 0, or -1 if the file is missing (module not loaded, no debugfs). */
static inline int live_stats_read(struct live_stats *s)
{
	char key[64];
	long v;
	FILE *f = fopen(PEVT_STATS_PATH, "r");

	memset(s, 0, sizeof(*s));
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2) {
		if (!strcmp(key, "events"))
			s->events = v;
		else if (!strcmp(key, "task_contexts"))
			s->task_contexts = v;
		else if (!strcmp(key, "buffers"))
			s->buffers = v;
	}
	fclose(f);
	return 0;
}

/* One line of debugfs pevt/stats by its key; -1 if absent. */
static inline long long live_stats_get(const char *name)
{
	char key[64];
	long long v, r = -1;
	FILE *f = fopen(PEVT_STATS_PATH, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, name))
			r = v;
	fclose(f);
	return r;
}

/*
 * Wait up to @ms for every counter to reach 0: buffers and task contexts
 * are freed after an RCU grace period.  0 when all are 0, else -1 with the
 * last values in @s.
 */
static inline int live_stats_wait_zero(struct live_stats *s, int ms)
{
	for (int i = 0; i <= ms / 20; i++) {
		if (live_stats_read(s))
			return -1;
		if (!s->events && !s->task_contexts && !s->buffers)
			return 0;
		sleep_ns(20 * NSEC_PER_MSEC);
	}
	return -1;
}

static inline long read_long(const char *path)
{
	char buf[64];
	long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	v = strtol(buf, NULL, 0);
	return v;
}

static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static inline int vpmu_type(void)
{
	return (int)read_long(VPMU_TYPE_PATH);
}

static inline int sys_enter_id(void)
{
	long id = read_long("/sys/kernel/tracing/events/raw_syscalls/sys_enter/id");

	if (id < 0)
		id = read_long("/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id");
	return (int)id;
}

static inline int mod_unload(void)
{
	return syscall(__NR_delete_module, "pevt", O_NONBLOCK);
}

static inline int mod_load(void)
{
	const char *ko = getenv("PEVT_KO") ? getenv("PEVT_KO") : "/pevt.ko";
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = syscall(__NR_finit_module, fd, "", 0);
	close(fd);
	return ret;
}

static inline int mod_loaded(void)
{
	return access(PEVT_DEVICE_PATH, F_OK) == 0;
}

/* Set CPU @cpu online (1) or offline (0); 0 or -1. */
static inline int cpu_set_online(int cpu, int on)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return write_str(path, on ? "1" : "0");
}

static inline int cpu_is_online(int cpu)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return read_long(path) == 1;
}

#endif /* PEVT_SELFTESTS_LIVE_STATS_H */
