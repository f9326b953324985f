/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Fairness scenarios: which groups to open (CPU or task, pinned or
 * flexible, which pevt_vpmu sources, which slots), on how many slots, with
 * which workload, for how long.  Text format in Documentation/fairness.md:
 *
 *	# comment
 *	name     starvation
 *	slots    2
 *	duration 3
 *	workload spin | syscalls | pingpong | phased | ring
 *	group    cpu|task  flexible|pinned  SRC[,SRC...]  [mask=0xN]
 *
 * SRC is a pevt_vpmu source (cpu_ns, syscalls, cswitch: one slot each) or
 * task-clock / cpu-clock (software: no slot).  A group lists its members.
 */
#ifndef __PEVT_SCENARIO_H
#define __PEVT_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#define PEVT_SCEN_MAX_GROUPS	32
#define PEVT_SCEN_MAX_MEMBERS	8
#define PEVT_SCEN_NAME		64

enum pevt_scen_src {
	PEVT_SRC_CPU_NS,	/* pevt_vpmu config 0 */
	PEVT_SRC_SYSCALLS,	/* pevt_vpmu config 1 */
	PEVT_SRC_CSWITCH,	/* pevt_vpmu config 2 */
	PEVT_SRC_TASK_CLOCK,	/* software */
	PEVT_SRC_CPU_CLOCK,	/* software */
};

enum pevt_scen_workload {
	PEVT_WL_SPIN,
	PEVT_WL_SYSCALLS,
	PEVT_WL_PINGPONG,
	PEVT_WL_PHASED,
	PEVT_WL_RING,		/* 4 tasks passing a token round a ring */
};

struct pevt_scen_group {
	bool task;		/* per-task (the workload) or per-CPU */
	bool pinned;
	uint64_t mask;		/* allowed slots of every vPMU member, 0: any */
	int nr_members;
	enum pevt_scen_src src[PEVT_SCEN_MAX_MEMBERS];
	int line;		/* where it was declared */
};

struct pevt_scenario {
	char name[PEVT_SCEN_NAME];
	int slots;		/* vPMU counters, 1..64 */
	double duration;	/* seconds per scheduler */
	enum pevt_scen_workload workload;
	int nr_groups;
	struct pevt_scen_group groups[PEVT_SCEN_MAX_GROUPS];
};

/**
 * pevt_scenario__parse() - parse a scenario text
 * @scen: filled on success (defaults: slots 2, duration 3, workload spin)
 * @text: the scenario, NUL-terminated
 * @file: name used in messages
 * @err:  on failure, "FILE:LINE: message"
 * @errsz: size of @err
 *
 * Return: 0, or -EINVAL with @err set.
 */
int pevt_scenario__parse(struct pevt_scenario *scen, const char *text,
			 const char *file, char *err, size_t errsz);

/** pevt_scenario__load() - read and parse @path; -errno on I/O errors too. */
int pevt_scenario__load(struct pevt_scenario *scen, const char *path,
			char *err, size_t errsz);

/** pevt_scenario__builtin() - text of built-in scenario @name, or NULL. */
const char *pevt_scenario__builtin(const char *name);

/** pevt_scenario__builtin_name() - name of built-in @i, NULL past the last. */
const char *pevt_scenario__builtin_name(int i);

/** Slots a group needs (vPMU members), 0 for a software-only group. */
int pevt_scen_group__slots(const struct pevt_scen_group *g);

const char *pevt_scen_src__name(enum pevt_scen_src src);
const char *pevt_scen_workload__name(enum pevt_scen_workload wl);

#endif /* __PEVT_SCENARIO_H */
