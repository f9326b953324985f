// SPDX-License-Identifier: GPL-2.0
/*
 * Fairness scenario files: good text parses to the right structure, every
 * kind of malformed line is rejected naming its file and line, every
 * built-in scenario parses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pevt/scenario.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"

TEST(good_file)
{
	struct pevt_scenario sc;
	char err[256] = "";
	const char *text =
		"# two CPU groups fill the PMU\n"
		"name   mine\n"
		"slots 4   \n"
		"duration 1.5\n"
		"workload\tpingpong\n"
		"\n"
		"group cpu pinned cpu_ns,syscalls mask=0x3  # trailing comment\n"
		"group task flexible task-clock\n"
		"group task flexible cswitch mask=0x8\n";

	ASSERT_EQ(0, pevt_scenario__parse(&sc, text, "f", err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("mine", sc.name);
	EXPECT_EQ(4, sc.slots);
	EXPECT_EQ(1.5, sc.duration);
	EXPECT_EQ(PEVT_WL_PINGPONG, sc.workload);
	ASSERT_EQ(3, sc.nr_groups);
	EXPECT_FALSE(sc.groups[0].task);
	EXPECT_TRUE(sc.groups[0].pinned);
	EXPECT_EQ(2, sc.groups[0].nr_members);
	EXPECT_EQ(PEVT_SRC_CPU_NS, sc.groups[0].src[0]);
	EXPECT_EQ(PEVT_SRC_SYSCALLS, sc.groups[0].src[1]);
	EXPECT_EQ(3, sc.groups[0].mask);
	EXPECT_EQ(7, sc.groups[0].line);
	EXPECT_EQ(2, pevt_scen_group__slots(&sc.groups[0]));
	EXPECT_TRUE(sc.groups[1].task);
	EXPECT_FALSE(sc.groups[1].pinned);
	EXPECT_EQ(0, pevt_scen_group__slots(&sc.groups[1]));
	EXPECT_EQ(8, sc.groups[2].mask);
}

TEST(defaults)
{
	struct pevt_scenario sc;
	char err[256];

	ASSERT_EQ(0, pevt_scenario__parse(&sc, "group task flexible cpu_ns", "f", err, sizeof(err)));
	EXPECT_EQ(2, sc.slots);
	EXPECT_EQ(3, sc.duration);
	EXPECT_EQ(PEVT_WL_SPIN, sc.workload);
	EXPECT_EQ(1, sc.nr_groups);
}

/* Each bad text, the message it must give (file:line: prefix included). */
static const struct {
	const char *text, *msg;
} bad[] = {
	{ "slots 2\nbogus 1\n", "s.txt:2: unknown keyword 'bogus'" },
	{ "slots 0\ngroup task flexible cpu_ns\n", "s.txt:1: slots '0': want 1..64" },
	{ "slots 65\n", "s.txt:1: slots '65'" },
	{ "slots two\n", "s.txt:1: slots 'two'" },
	{ "slots 2 3\n", "s.txt:1: 'slots' takes one value, 2 given" },
	{ "duration 0\n", "s.txt:1: duration '0'" },
	{ "duration 1s\n", "s.txt:1: duration '1s'" },
	{ "\n\nworkload idle\n", "s.txt:3: unknown workload 'idle'" },
	{ "group vcpu flexible cpu_ns\n", "s.txt:1: group kind 'vcpu'" },
	{ "group cpu sometimes cpu_ns\n", "s.txt:1: 'sometimes': want flexible or pinned" },
	{ "# c\ngroup cpu flexible cycles\n", "s.txt:2: unknown source 'cycles'" },
	{ "group cpu flexible\n", "s.txt:1: 'group' needs" },
	{ "group cpu flexible cpu_ns mask=zz\n", "s.txt:1: bad slot mask 'zz'" },
	{ "group cpu flexible cpu_ns mask=0\n", "s.txt:1: bad slot mask '0'" },
	{ "group cpu flexible cpu_ns color=red\n", "s.txt:1: unexpected 'color=red'" },
	{ "group cpu flexible task-clock mask=1\n", "s.txt:1: mask on a software-only group" },
	{ "slots 2\n\ngroup cpu flexible cpu_ns mask=0x4\n", "s.txt:3: mask 0x4 names slots beyond 2" },
	{ "slots 1\ngroup task flexible cpu_ns\ngroup cpu flexible cpu_ns,syscalls\n",
	  "s.txt:3: group needs 2 slots, the scenario has 1" },
	{ "slots 2\n# nothing\n", "s.txt:0: no group" },
};

TEST(malformed)
{
	struct pevt_scenario sc;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		EXPECT_EQ(-EINVAL, pevt_scenario__parse(&sc, bad[i].text, "s.txt", err, sizeof(err)))
			TH_LOG("case %zu accepted", i);
		EXPECT_EQ(0, strncmp(err, bad[i].msg, strlen(bad[i].msg)))
			TH_LOG("case %zu: got '%s', want '%s...'", i, err, bad[i].msg);
	}
}

TEST(too_many_groups)
{
	struct pevt_scenario sc;
	char text[4096] = "", err[256];
	int i;

	for (i = 0; i <= PEVT_SCEN_MAX_GROUPS; i++)
		strcat(text, "group task flexible cpu_ns\n");
	ASSERT_EQ(-EINVAL, pevt_scenario__parse(&sc, text, "g", err, sizeof(err)));
	EXPECT_STREQ("g:33: more than 32 groups", err);
}

TEST(load_file)
{
	char path[] = "/tmp/pevt-scen-XXXXXX", err[256];
	struct pevt_scenario sc;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_EQ(40, write(fd, "slots 2\ngroup task flexible cpu_ns\nnope\n", 40));
	close(fd);
	EXPECT_EQ(-EINVAL, pevt_scenario__load(&sc, path, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, ":3: unknown keyword 'nope'")) TH_LOG("%s", err);
	EXPECT_EQ(0, strncmp(err, path, strlen(path))) TH_LOG("%s", err);
	unlink(path);
	EXPECT_EQ(-ENOENT, pevt_scenario__load(&sc, path, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "No such file")) TH_LOG("%s", err);
}

TEST(builtins_parse)
{
	struct pevt_scenario sc;
	char err[256];
	const char *name;
	int i, n = 0;

	for (i = 0; (name = pevt_scenario__builtin_name(i)); i++, n++) {
		ASSERT_EQ(0, pevt_scenario__parse(&sc, pevt_scenario__builtin(name), name,
						  err, sizeof(err))) TH_LOG("%s", err);
		EXPECT_STREQ(name, sc.name);
		EXPECT_LT(0, sc.nr_groups);
	}
	EXPECT_EQ(9, n);
	/* ring-tasks: 4 ring tasks, each with a cpu_ns and a syscalls group */
	ASSERT_EQ(0, pevt_scenario__parse(&sc, pevt_scenario__builtin("ring-tasks"),
					  "ring-tasks", err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(PEVT_WL_RING, sc.workload);
	EXPECT_EQ(9, sc.nr_groups);
	EXPECT_EQ(NULL, pevt_scenario__builtin("nope"));
}

TEST_HARNESS_MAIN
