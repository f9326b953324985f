// SPDX-License-Identifier: GPL-2.0
/*
 * libpevt parse_events: event lists to attrs, against a fake sysfs PMU
 * and tracefs built in a temporary directory (so the PMU's format and
 * alias files are whatever the test says), plus every error path with its
 * position, token, message and errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <pevt/parse_events.h>

/* attr bitfields and u64 configs against int literals, harness-style */
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"

static void put(const char *root, const char *rel, const char *content)
{
	char path[512], *s;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* mkdir -p of the parents */
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	if (content) {
		FILE *f = fopen(path, "w");

		if (!f)
			abort();
		fprintf(f, "%s\n", content);
		fclose(f);
	}
}

/* A vPMU-like PMU "vp" (type 42) and a tracefs with sched:sched_switch. */
static void make_tree(char *root)
{
	strcpy(root, "/tmp/pevt-parse-XXXXXX");
	if (!mkdtemp(root))
		abort();
	put(root, "pmu/vp/type", "42");
	put(root, "pmu/vp/format/source", "config:0-7");
	put(root, "pmu/vp/format/mask", "config1:0-15");
	put(root, "pmu/vp/format/split", "config:8-9,32-33");
	put(root, "pmu/vp/format/bit", "config:63");
	put(root, "pmu/vp/format/bad", "foo:1-2");
	put(root, "pmu/vp/events/syscalls", "source=2");
	put(root, "pmu/vp/events/ctx", "source=3,mask=0x1");
	put(root, "pmu/vp/events/ctx.unit", "switches");
	put(root, "pmu/vp/events/broken", "nosuch=1");
	put(root, "pmu/noformat/type", "7");
	put(root, "tracefs/events/header_page", "x");
	put(root, "tracefs/events/sched/enable", "0");
	put(root, "tracefs/events/sched/sched_switch/id", "316");
}

static void rm_tree(const char *root)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		abort();
}

struct tree {
	char root[64];
	char pmu[128], tracefs[128];
	struct pevt_parse_opts opts;
	struct pevt_parse_error err;
	struct pevt_events *evs;
};

static void tree_setup(struct tree *t)
{
	make_tree(t->root);
	snprintf(t->pmu, sizeof(t->pmu), "%s/pmu", t->root);
	snprintf(t->tracefs, sizeof(t->tracefs), "%s/tracefs", t->root);
	t->opts = (struct pevt_parse_opts){
		.sz = sizeof(t->opts), .pmu_dir = t->pmu, .tracefs = t->tracefs,
	};
	t->evs = NULL;
}

static void tree_teardown(struct tree *t)
{
	pevt_events__delete(t->evs);
	rm_tree(t->root);
}

FIXTURE(pe) {
	struct tree t;
};

FIXTURE_SETUP(pe)
{
	tree_setup(&self->t);
}

FIXTURE_TEARDOWN(pe)
{
	tree_teardown(&self->t);
}

#define PARSE(str) ({							\
	pevt_events__delete(self->t.evs);					\
	self->t.evs = pevt_events__parse(str, &self->t.opts, &self->t.err);	\
	ASSERT_NE(NULL, self->t.evs) TH_LOG("'%s': %s", str, self->t.err.msg); \
	self->t.evs; })
#define EV(i) pevt_events__get(self->t.evs, i)

TEST_F(pe, symbolic)
{
	static const struct { const char *s; __u32 type; __u64 config; } t[] = {
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
		{ "r1a8", PERF_TYPE_RAW, 0x1a8 },
		{ "rFFFF", PERF_TYPE_RAW, 0xffff },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct pevt_event_desc *d;

		PARSE(t[i].s);
		ASSERT_EQ(1ul, pevt_events__nr(self->t.evs));
		d = EV(0);
		EXPECT_EQ(t[i].type, d->attr.type) TH_LOG("%s", t[i].s);
		EXPECT_EQ(t[i].config, d->attr.config) TH_LOG("%s", t[i].s);
		EXPECT_STREQ(t[i].s, d->name);
		EXPECT_EQ(NULL, d->pmu);
		EXPECT_STREQ(t[i].config == PERF_COUNT_SW_TASK_CLOCK &&
			     t[i].type == PERF_TYPE_SOFTWARE ? "ns" :
			     t[i].config == PERF_COUNT_SW_CPU_CLOCK &&
			     t[i].type == PERF_TYPE_SOFTWARE ? "ns" : "", d->unit) TH_LOG("%s", t[i].s);
		EXPECT_EQ(0, d->leader);
		EXPECT_EQ(1, d->nr_members);
		EXPECT_FALSE(d->grouped);
		EXPECT_EQ(sizeof(struct perf_event_attr), d->attr.size);
		EXPECT_EQ(0, (int)d->attr.exclude_user | (int)d->attr.exclude_kernel |
			  (int)d->attr.exclude_hv | (int)d->attr.pinned);
	}
}

TEST_F(pe, groups)
{
	PARSE("{task-clock,cs},cpu-clock,{vp/syscalls/,vp/ctx/,r1}");
	ASSERT_EQ(6ul, pevt_events__nr(self->t.evs));
	ASSERT_EQ(3ul, pevt_events__nr_groups(self->t.evs));
	EXPECT_EQ(0, EV(0)->group);
	EXPECT_EQ(0, EV(1)->group);
	EXPECT_EQ(1, EV(2)->group);
	EXPECT_EQ(2, EV(3)->group);
	EXPECT_EQ(2, EV(5)->group);
	EXPECT_EQ(0, EV(1)->leader);
	EXPECT_EQ(2, EV(2)->leader);
	EXPECT_EQ(3, EV(5)->leader);
	EXPECT_EQ(2, EV(0)->nr_members);
	EXPECT_EQ(1, EV(2)->nr_members);
	EXPECT_EQ(3, EV(3)->nr_members);
	EXPECT_TRUE(EV(1)->grouped);
	EXPECT_FALSE(EV(2)->grouped);
	EXPECT_EQ(1, EV(0)->pos);
	EXPECT_EQ(12, EV(1)->pos);
	EXPECT_EQ(16, EV(2)->pos);
	EXPECT_EQ(27, EV(3)->pos);
	/* Single-event group is still marked grouped. */
	PARSE("{cs}");
	EXPECT_TRUE(EV(0)->grouped);
	EXPECT_EQ(1ul, pevt_events__nr_groups(self->t.evs));
}

TEST_F(pe, add_continues_groups)
{
	self->t.evs = pevt_events__new();
	ASSERT_NE(NULL, self->t.evs);
	ASSERT_EQ(0, pevt_events__add(self->t.evs, "{cs,faults}", &self->t.opts, &self->t.err));
	ASSERT_EQ(0, pevt_events__add(self->t.evs, "{task-clock,cpu-clock}", &self->t.opts, &self->t.err));
	ASSERT_EQ(4ul, pevt_events__nr(self->t.evs));
	EXPECT_EQ(2ul, pevt_events__nr_groups(self->t.evs));
	EXPECT_EQ(1, EV(2)->group);
	EXPECT_EQ(2, EV(3)->leader);
	/* A failed add leaves the list as it was. */
	EXPECT_EQ(-ENOENT, pevt_events__add(self->t.evs, "cs,nosuch", &self->t.opts, &self->t.err));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(4ul, pevt_events__nr(self->t.evs));
	EXPECT_EQ(2ul, pevt_events__nr_groups(self->t.evs));
	EXPECT_EQ(NULL, pevt_events__get(self->t.evs, 4));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(pe, modifiers)
{
	const struct perf_event_attr *a;

	PARSE("cycles:u");
	a = &EV(0)->attr;
	EXPECT_EQ(0, (int)a->exclude_user);
	EXPECT_EQ(1, (int)a->exclude_kernel);
	EXPECT_EQ(1, (int)a->exclude_hv);
	PARSE("cycles:k");
	a = &EV(0)->attr;
	EXPECT_EQ(1, (int)a->exclude_user);
	EXPECT_EQ(0, (int)a->exclude_kernel);
	EXPECT_EQ(1, (int)a->exclude_hv);
	PARSE("cycles:uk");
	a = &EV(0)->attr;
	EXPECT_EQ(0, (int)a->exclude_user);
	EXPECT_EQ(0, (int)a->exclude_kernel);
	EXPECT_EQ(1, (int)a->exclude_hv);
	PARSE("task-clock:D");
	EXPECT_EQ(1, (int)EV(0)->attr.pinned);
	EXPECT_EQ(0, (int)EV(0)->attr.exclude_kernel);
	/*
	 * Group modifier (as perf 6.1's evlist -v shows): members without
	 * their own take it, members with their own also count the group's
	 * levels; D pins the leader.
	 */
	PARSE("{cycles,instructions:k}:uD");
	EXPECT_EQ(1, (int)EV(0)->attr.exclude_kernel);
	EXPECT_EQ(0, (int)EV(0)->attr.exclude_user);
	EXPECT_EQ(0, (int)EV(1)->attr.exclude_user);
	EXPECT_EQ(0, (int)EV(1)->attr.exclude_kernel);
	EXPECT_EQ(1, (int)EV(1)->attr.exclude_hv);
	EXPECT_EQ(1, (int)EV(0)->attr.pinned);
	EXPECT_EQ(0, (int)EV(1)->attr.pinned);
	/* names: as typed with the event's own modifiers, not the group's */
	EXPECT_STREQ("cycles", EV(0)->name);
	EXPECT_STREQ("instructions:k", EV(1)->name);
	/* PMU events take modifiers with or without ':' */
	PARSE("vp/syscalls/u,vp/syscalls/:k");
	EXPECT_EQ(1, (int)EV(0)->attr.exclude_kernel);
	EXPECT_EQ(1, (int)EV(1)->attr.exclude_user);
	EXPECT_STREQ("vp/syscalls/u", EV(0)->name);
	EXPECT_STREQ("vp/syscalls/:k", EV(1)->name);
}

/*
 * perf's exclude_guest: set without a modifier (no guest profiling), and
 * with a modifier only if it has 'u' (perf 6.1 evlist -v: cpu-clock,
 * task-clock:u have it; page-faults:k, cpu-clock:S do not); a group's
 * 'u' sets it on every member.  Names keep the typed modifiers except
 * for tracepoints and name= terms.
 */
TEST_F(pe, exclude_guest_and_names)
{
	PARSE("cycles,cycles:u,cycles:k,cycles:S,cycles:uk");
	EXPECT_EQ(1, (int)EV(0)->attr.exclude_guest);
	EXPECT_EQ(1, (int)EV(1)->attr.exclude_guest);
	EXPECT_EQ(0, (int)EV(2)->attr.exclude_guest);
	EXPECT_EQ(0, (int)EV(3)->attr.exclude_guest);
	EXPECT_EQ(1, (int)EV(4)->attr.exclude_guest);
	EXPECT_STREQ("cycles", EV(0)->name);
	EXPECT_STREQ("cycles:u", EV(1)->name);
	EXPECT_STREQ("cycles:k", EV(2)->name);
	EXPECT_STREQ("cycles:S", EV(3)->name);
	EXPECT_STREQ("cycles:uk", EV(4)->name);
	PARSE("{cycles:k,instructions:k}:u");
	EXPECT_EQ(1, (int)EV(0)->attr.exclude_guest);
	EXPECT_EQ(1, (int)EV(1)->attr.exclude_guest);
	PARSE("{cycles:k,instructions}:k");
	EXPECT_EQ(0, (int)EV(0)->attr.exclude_guest);
	EXPECT_EQ(1, (int)EV(1)->attr.exclude_guest);
	PARSE("sched:sched_switch:k,vp/config=1,name=foo/u,r1a8:u");
	EXPECT_STREQ("sched:sched_switch", EV(0)->name);
	EXPECT_EQ(0, (int)EV(0)->attr.exclude_guest);
	EXPECT_STREQ("foo", EV(1)->name);
	EXPECT_STREQ("r1a8:u", EV(2)->name);
}

TEST_F(pe, pmu_terms)
{
	const struct pevt_event_desc *d;

	PARSE("vp/syscalls/");
	d = EV(0);
	EXPECT_EQ(42, d->attr.type);
	EXPECT_EQ(2, d->attr.config);
	EXPECT_STREQ("vp", d->pmu);
	EXPECT_STREQ("vp/syscalls/", d->name);

	EXPECT_STREQ("", EV(0)->unit);	/* syscalls has no .unit */

	PARSE("vp/source=5,mask=0xff/");
	EXPECT_EQ(5, EV(0)->attr.config);
	EXPECT_EQ(0xff, EV(0)->attr.config1);

	PARSE("vp/ctx/");
	EXPECT_EQ(3, EV(0)->attr.config);
	EXPECT_EQ(1, EV(0)->attr.config1);
	EXPECT_STREQ("switches", EV(0)->unit);

	/* Value bits go to the format's bit ranges, lowest first. */
	PARSE("vp/split=0xf/");
	EXPECT_EQ(0x300000300ull, EV(0)->attr.config);
	PARSE("vp/split=0x6,source=0xff/");
	EXPECT_EQ(0x1000002ffull, EV(0)->attr.config);
	/* A bare format field is 1. */
	PARSE("vp/bit/");
	EXPECT_EQ(1ull << 63, EV(0)->attr.config);
	PARSE("vp/config=0x1234,config1=7,config2=9,name=foo/");
	EXPECT_EQ(0x1234, EV(0)->attr.config);
	EXPECT_EQ(7, EV(0)->attr.config1);
	EXPECT_EQ(9, EV(0)->attr.config2);
	EXPECT_STREQ("foo", EV(0)->name);
	/* A PMU without format/ still takes config terms; empty terms are fine. */
	PARSE("noformat/config=3/,noformat//");
	EXPECT_EQ(7, EV(0)->attr.type);
	EXPECT_EQ(3, EV(0)->attr.config);
	EXPECT_EQ(0, EV(1)->attr.config);
	/* An alias term followed by an explicit field overrides it. */
	PARSE("vp/syscalls,source=9/");
	EXPECT_EQ(9, EV(0)->attr.config);
}

TEST_F(pe, tracepoints)
{
	PARSE("sched:sched_switch,sched:sched_switch:k");
	EXPECT_EQ(PERF_TYPE_TRACEPOINT, EV(0)->attr.type);
	EXPECT_EQ(316, EV(0)->attr.config);
	EXPECT_STREQ("sched:sched_switch", EV(0)->name);
	EXPECT_EQ(1, (int)EV(1)->attr.exclude_user);
	EXPECT_STREQ("sched:sched_switch", EV(1)->name);
}

/* The real sysfs of this host: the software PMU always exists. */
TEST(live_sysfs_software_pmu)
{
	struct pevt_parse_error err;
	struct pevt_events *evs;

	if (access(PEVT_PMU_DIR "/software/type", R_OK))
		SKIP(return, "no " PEVT_PMU_DIR "/software");
	evs = pevt_events__parse("software/config=1/", NULL, &err);
	ASSERT_NE(NULL, evs) TH_LOG("%s", err.msg);
	EXPECT_EQ(PERF_TYPE_SOFTWARE, pevt_events__get(evs, 0)->attr.type);
	EXPECT_EQ(1, pevt_events__get(evs, 0)->attr.config);
	pevt_events__delete(evs);
}

/* ---- every error path -------------------------------------------------- */

FIXTURE(perr) {
	struct tree t;
};

FIXTURE_SETUP(perr)
{
	tree_setup(&self->t);
}

FIXTURE_TEARDOWN(perr)
{
	tree_teardown(&self->t);
}

FIXTURE_VARIANT(perr)
{
	const char *list;
	int pos;
	const char *token;
	const char *msg;	/* substring of err.msg */
	int err;
};

FIXTURE_VARIANT_ADD(perr, empty_list) { "", 0, "", "empty event list", EINVAL };
FIXTURE_VARIANT_ADD(perr, empty_event) { "task-clock,,cs", 11, ",", "empty event", EINVAL };
FIXTURE_VARIANT_ADD(perr, leading_comma) { ",cs", 0, ",", "empty event", EINVAL };
FIXTURE_VARIANT_ADD(perr, trailing_comma) { "task-clock,", 10, ",", "empty event after ','", EINVAL };
FIXTURE_VARIANT_ADD(perr, unknown_event) { "cs,cpu-clok", 3, "cpu-clok", "unknown event 'cpu-clok'", ENOENT };
FIXTURE_VARIANT_ADD(perr, unknown_event_mod) { "foo:u", 0, "foo", "unknown event 'foo'", ENOENT };
FIXTURE_VARIANT_ADD(perr, bad_raw) { "r12g", 0, "r12g", "unknown event 'r12g'", ENOENT };
FIXTURE_VARIANT_ADD(perr, unexpected_char) { "cs cpu-clock", 2, " ", "unexpected character ' '", EINVAL };
FIXTURE_VARIANT_ADD(perr, unknown_pmu) { "cs,nopmu/x/", 3, "nopmu", "unknown PMU 'nopmu'", ENOENT };
FIXTURE_VARIANT_ADD(perr, unknown_term) { "vp/source=1,nosuch=1/", 12, "nosuch=1", "unknown term 'nosuch' for PMU 'vp'", ENOENT };
FIXTURE_VARIANT_ADD(perr, bad_value) { "vp/source=zz/", 3, "source=zz", "bad value 'zz' for term 'source'", EINVAL };
FIXTURE_VARIANT_ADD(perr, negative_value) { "vp/source=-1/", 3, "source=-1", "bad value '-1'", EINVAL };
FIXTURE_VARIANT_ADD(perr, missing_value) { "vp/source=/", 3, "source=", "missing value for term 'source'", EINVAL };
FIXTURE_VARIANT_ADD(perr, value_too_big) { "vp/source=0x100/", 3, "source=0x100", "too big for 'source' (8 bits: config:0-7)", ERANGE };
FIXTURE_VARIANT_ADD(perr, bad_format_file) { "vp/bad=1/", 3, "bad=1", "bad sysfs format for 'bad': 'foo:1-2'", EINVAL };
FIXTURE_VARIANT_ADD(perr, bad_alias) { "vp/broken/", 3, "broken", "unknown term 'nosuch' for PMU 'vp'", ENOENT };
FIXTURE_VARIANT_ADD(perr, alias_with_value) { "vp/syscalls=1/", 3, "syscalls=1", "unknown term 'syscalls'", ENOENT };
FIXTURE_VARIANT_ADD(perr, empty_term_after) { "vp/source=1,/", 11, ",", "empty term after ','", EINVAL };
FIXTURE_VARIANT_ADD(perr, empty_term_before) { "vp/,source=1/", 3, ",", "empty term before ','", EINVAL };
FIXTURE_VARIANT_ADD(perr, empty_term_name) { "vp/=1/", 3, "=1", "empty term name", EINVAL };
FIXTURE_VARIANT_ADD(perr, name_without_value) { "vp/name/", 3, "name", "missing value for term 'name'", EINVAL };
FIXTURE_VARIANT_ADD(perr, unterminated_pmu) { "cs,vp/source=1", 3, "vp/source=1", "missing '/' closing the terms of PMU 'vp'", EINVAL };
FIXTURE_VARIANT_ADD(perr, unbalanced_open) { "cs,{task-clock,cs", 3, "{", "unbalanced '{'", EINVAL };
FIXTURE_VARIANT_ADD(perr, unbalanced_close) { "task-clock}", 10, "}", "unbalanced '}'", EINVAL };
FIXTURE_VARIANT_ADD(perr, unbalanced_close_group) { "{cs}}", 4, "}", "unbalanced '}'", EINVAL };
FIXTURE_VARIANT_ADD(perr, leading_close) { "}", 0, "}", "unbalanced '}'", EINVAL };
FIXTURE_VARIANT_ADD(perr, empty_group) { "cs,{}", 3, "{}", "empty group", EINVAL };
FIXTURE_VARIANT_ADD(perr, nested_group) { "{cs,{cpu-clock}}", 4, "{", "groups cannot nest", EINVAL };
FIXTURE_VARIANT_ADD(perr, group_after_event) { "cs{cpu-clock}", 2, "{", "groups cannot nest", EINVAL };
FIXTURE_VARIANT_ADD(perr, empty_in_group) { "{cs,}", 4, "}", "empty event", EINVAL };
FIXTURE_VARIANT_ADD(perr, bad_modifier) { "cs:up", 4, "p", "unsupported modifier 'p' (supported: u, k, h, D, S)", EINVAL };
FIXTURE_VARIANT_ADD(perr, bad_group_modifier) { "{cs}:G", 5, "G", "unsupported modifier 'G'", EINVAL };
FIXTURE_VARIANT_ADD(perr, bad_pmu_modifier) { "vp/syscalls/x", 12, "x", "unsupported modifier 'x'", EINVAL };
FIXTURE_VARIANT_ADD(perr, empty_modifier) { "cs:", 2, ":", "empty modifier", EINVAL };
FIXTURE_VARIANT_ADD(perr, unknown_tracepoint) { "sched:nosuch", 0, "sched:nosuch", "unknown tracepoint 'sched:nosuch'", ENOENT };
FIXTURE_VARIANT_ADD(perr, unknown_tp_system) { "nosys:sys_enter", 0, "nosys:sys_enter", "unknown tracepoint", ENOENT };
FIXTURE_VARIANT_ADD(perr, tracepoint_glob) { "sched:*", 0, "sched:*", "wildcards are not supported", EINVAL };

TEST_F(perr, parse)
{
	struct pevt_events *evs;

	errno = 0;
	evs = pevt_events__parse(variant->list, &self->t.opts, &self->t.err);
	ASSERT_EQ(NULL, evs) {
		pevt_events__delete(evs);
	}
	EXPECT_EQ(variant->err, errno);
	EXPECT_EQ(variant->pos, self->t.err.pos) TH_LOG("'%s': %s", variant->list, self->t.err.msg);
	EXPECT_STREQ(variant->token, self->t.err.token);
	EXPECT_NE(NULL, strstr(self->t.err.msg, variant->msg))
		TH_LOG("'%s': got \"%s\", want \"%s\"", variant->list,
		       self->t.err.msg, variant->msg);
}

TEST(no_tracefs)
{
	LIBPEVT_OPTS(pevt_parse_opts, o, .tracefs = "/nonexistent-tracefs");
	struct pevt_parse_error err;

	EXPECT_EQ(NULL, pevt_events__parse("raw_syscalls:sys_enter", &o, &err));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, err.pos);
	EXPECT_STREQ("raw_syscalls:sys_enter", err.token);
	EXPECT_NE(NULL, strstr(err.msg, "unknown tracepoint"));
}

TEST(bad_args)
{
	struct pevt_parse_opts small = { .sz = 1 };
	struct pevt_parse_error err;

	EXPECT_EQ(NULL, pevt_events__parse(NULL, NULL, &err));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, pevt_events__parse("cs", &small, &err));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, pevt_events__add(NULL, "cs", NULL, NULL));
	/* err may be NULL */
	EXPECT_EQ(NULL, pevt_events__parse("nosuch", NULL, NULL));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0ul, pevt_events__nr(NULL));
}

TEST(cpu_list)
{
	int *v, n;

	n = pevt_cpu_list__parse("0-3,6", &v);
	ASSERT_EQ(5, n);
	EXPECT_EQ(0, v[0]);
	EXPECT_EQ(3, v[3]);
	EXPECT_EQ(6, v[4]);
	free(v);
	n = pevt_cpu_list__parse("3,1,1-2", &v);
	ASSERT_EQ(3, n);
	EXPECT_EQ(1, v[0]);
	EXPECT_EQ(2, v[1]);
	EXPECT_EQ(3, v[2]);
	free(v);
	/* sysfs "online" ends with a newline */
	n = pevt_cpu_list__parse("0-1\n", &v);
	ASSERT_EQ(2, n);
	free(v);
	EXPECT_EQ(-EINVAL, pevt_cpu_list__parse("", &v));
	EXPECT_EQ(-EINVAL, pevt_cpu_list__parse("a", &v));
	EXPECT_EQ(-EINVAL, pevt_cpu_list__parse("3-1", &v));
	EXPECT_EQ(-EINVAL, pevt_cpu_list__parse("1,", &v));
	EXPECT_EQ(-EINVAL, pevt_cpu_list__parse("1-", &v));
	EXPECT_EQ(-EINVAL, pevt_cpu_list__parse("-1", &v));
	EXPECT_EQ(-EINVAL, pevt_cpu_list__parse("1 2", &v));
	EXPECT_EQ(EINVAL, errno);
}

TEST_HARNESS_MAIN
