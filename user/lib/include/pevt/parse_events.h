/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpevt - parse perf-style event lists into perf_event_attrs.
 *
 * The syntax is the common subset of perf's -e:
 *
 *	list     := item { ',' item }
 *	item     := event | '{' event { ',' event } '}' [ ':' mods ]
 *	event    := name [ ':' mods ]                  task-clock, cs, cycles
 *	          | 'r' hex [ ':' mods ]               r1a8 (PERF_TYPE_RAW)
 *	          | sys ':' tp [ ':' mods ]            raw_syscalls:sys_enter
 *	          | pmu '/' [ term { ',' term } ] '/' [ [':'] mods ]
 *	term     := config | config1 | config2 ['=' num]
 *	          | name '=' string                    display name
 *	          | field [ '=' num ]                  sysfs format/ field (bare: 1)
 *	          | alias                              sysfs events/ alias
 *	mods     := { 'u' | 'k' | 'h' | 'D' | 'S' }    D: pinned (group leader),
 *	                                               S: PERF_SAMPLE_READ
 *
 * PMUs come from sysfs (<pmu_dir>/<pmu>/{type,format/,events/}), like
 * perf: format files ("config:0-7", "config1:0-15,32-35", "config:63")
 * place term values into attr bits; event aliases ("source=1,mask=0x3")
 * are term lists themselves.  Tracepoint ids come from
 * <tracefs>/events/<sys>/<tp>/id.
 *
 *	struct pevt_parse_error err;
 *	struct pevt_events *evs = pevt_events__parse("{task-clock,cs},r1", NULL, &err);
 *
 *	if (!evs)
 *		fprintf(stderr, "at %d '%s': %s\n", err.pos, err.token, err.msg);
 *	for (i = 0; i < pevt_events__nr(evs); i++)
 *		use(pevt_events__get(evs, i));	// attr, name, group, leader
 *	pevt_events__delete(evs);
 */
#ifndef __LIBPEVT_PARSE_EVENTS_H
#define __LIBPEVT_PARSE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <pevt/core.h>

#define PEVT_PMU_DIR		"/sys/bus/event_source/devices"

struct pevt_events;

/* One parsed event.  Only attr fields the list names are set. */
struct pevt_event_desc {
	struct perf_event_attr attr;	/* type, config*, exclude_*, pinned */
	char *name;			/* as written, or the name= term */
	char *pmu;			/* PMU name for pmu/.../ events, else NULL */
	int group;			/* group index; a lone event is its own group */
	int leader;			/* index of the group leader (self if leader) */
	int nr_members;			/* events in the group (leader's own count) */
	int pos;			/* byte offset of the event in the list */
	char unit[16];			/* of the count: "ns" for the clocks, an
					 * alias's events/<alias>.unit, or "" */
	bool grouped;			/* written inside {...} */
};

/* Where and why parsing failed.  pos is a byte offset in the string. */
struct pevt_parse_error {
	int pos;			/* -1: not tied to a position */
	char token[64];			/* the offending token, NUL-terminated */
	char msg[256];			/* why, e.g. "unknown event" */
};

struct pevt_parse_opts {
	size_t sz;
	const char *pmu_dir;		/* default PEVT_PMU_DIR */
	const char *tracefs;		/* default /sys/kernel/tracing, then
					 * /sys/kernel/debug/tracing */
};

/* Parse @str into a new list; NULL with errno and *@err filled on error. */
LIBPEVT_API struct pevt_events *
pevt_events__parse(const char *str, const struct pevt_parse_opts *opts,
		   struct pevt_parse_error *err);
LIBPEVT_API struct pevt_events *pevt_events__new(void);
/*
 * pevt_events__add() - append the events of @str (group indices continue).
 * On error the list is unchanged and *@err says why: -EINVAL for syntax,
 * -ENOENT for unknown events, PMUs, terms or tracepoints, -ERANGE for a
 * value too wide for its format field, -ENOMEM.
 */
LIBPEVT_API int pevt_events__add(struct pevt_events *evs, const char *str,
				 const struct pevt_parse_opts *opts,
				 struct pevt_parse_error *err);
LIBPEVT_API void pevt_events__delete(struct pevt_events *evs);
LIBPEVT_API size_t pevt_events__nr(const struct pevt_events *evs);
LIBPEVT_API size_t pevt_events__nr_groups(const struct pevt_events *evs);
LIBPEVT_API const struct pevt_event_desc *
pevt_events__get(const struct pevt_events *evs, size_t idx);

/*
 * pevt_tracepoint__id() - the perf attr.config of tracepoint @name
 * ("sys:name", e.g. "raw_syscalls:sys_enter"), read from tracefs as
 * pevt_events__parse() reads it.  Returns the id or -errno.
 */
LIBPEVT_API long long pevt_tracepoint__id(const char *name);

/*
 * pevt_cpu_list__parse() - "0-3,6" -> sorted, deduplicated array of CPU
 * numbers in *@cpus (malloc'd).  Returns the count or -EINVAL.
 */
LIBPEVT_API int pevt_cpu_list__parse(const char *str, int **cpus);

#endif /* __LIBPEVT_PARSE_EVENTS_H */
