// SPDX-License-Identifier: GPL-2.0
/*
 * `pevt bench fairness` in the guest: the claims it exists to show, its
 * JSON schema and data file, scenario files, and its errors.
 *
 * One run of the bench (starvation and pinned-fill, 1 s per scheduler,
 * switch cost with 1 event per task) is shared by the tests that read its
 * JSON; the first test that needs it runs it.  The claims:
 *  - starvation: rotid Jain >= 0.99 and min share >= 0.4, where stock and
 *    classic leave a task group below 0.1 (and, never running, its
 *    estimate error at 1);
 *  - pinned-fill: no ticks under rotid, stock ticking every interval;
 *  - a switch between two monitored tasks takes no scheduler timer run
 *    under rotid (the parked plan is swapped in inline).
 * ring_task_time and tick_moves (their own runs): tasks that switch often
 * (ring-tasks, many-tasks) are estimated as well as stock does, and a
 * rotid tick takes off only the groups that move.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "../common.h"
#include "../live_stats.h"
#include "../run_cmd.h"

#define JSON	"/tmp/fairness_test.json"
#define DATA	"/tmp/fairness_test.dat"
#define BENCH	"pevt bench fairness scenario starvation scenario pinned-fill " \
		"duration 1 switch 1 json " JSON " data " DATA

/* The bench's JSON, running it first if no earlier test did. */
static char *bench_json(struct __test_metadata *_metadata)
{
	if (access(JSON, R_OK)) {
		struct out o;

		run(&o, BENCH);
		if (o.status) {
			TH_LOG("'%s' exited %d: %s", BENCH, o.status, o.err);
			out_free(&o);
			unlink(JSON);
			return NULL;
		}
		out_free(&o);
	}
	return slurp(JSON);
}

/* The run object of (scenario, scheduler), NUL-terminated copy, or NULL. */
static char *run_obj(const char *json, const char *scen, const char *sched)
{
	char key[128];
	const char *s, *e;

	snprintf(key, sizeof(key), "{\"scenario\":\"%s\",\"scheduler\":\"%s\",", scen, sched);
	s = strstr(json, key);
	if (!s)
		return NULL;
	e = strstr(s + 1, "{\"scenario\":");
	if (!e)
		e = strstr(s, "],\"switch\":");
	if (!e)
		return NULL;
	return strndup(s, e - s);
}

/* Value of the first "key": in @obj; NAN for null or absent. */
static double num(const char *obj, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = obj ? strstr(obj, k) : NULL;
	if (!p || !strncmp(p + strlen(k), "null", 4))
		return NAN;
	return strtod(p + strlen(k), NULL);
}

static int count(const char *s, const char *what)
{
	int n = 0;

	while (s && (s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

/* Shares of every group of a run object, in order. */
static int shares(const char *obj, double *v, int max)
{
	const char *p = obj;
	int n = 0;

	while (n < max && (p = strstr(p, "\"share\":"))) {
		v[n++] = strtod(p + 8, NULL);
		p += 8;
	}
	return n;
}

TEST(starvation)
{
	char *json = bench_json(_metadata);
	char *st, *cl, *ro;

	ASSERT_NE(NULL, json);
	st = run_obj(json, "starvation", "stock");
	cl = run_obj(json, "starvation", "classic");
	ro = run_obj(json, "starvation", "rotid");
	ASSERT_NE(NULL, st);
	ASSERT_NE(NULL, cl);
	ASSERT_NE(NULL, ro);
	TH_LOG("jain stock %.3f classic %.3f rotid %.3f; min %.3f %.3f %.3f; util %.3f %.3f %.3f",
	       num(st, "jain"), num(cl, "jain"), num(ro, "jain"), num(st, "min_share"),
	       num(cl, "min_share"), num(ro, "min_share"), num(st, "utilization"),
	       num(cl, "utilization"), num(ro, "utilization"));
	EXPECT_GE(num(ro, "jain"), 0.99);
	EXPECT_GE(num(ro, "min_share"), 0.4);
	EXPECT_LT(num(st, "min_share"), 0.1);
	EXPECT_LT(num(cl, "min_share"), 0.1);
	EXPECT_LE(num(st, "jain"), 0.6);
	/* A starved group's estimate is worthless; rotid's are close. */
	TH_LOG("estimate error max stock %.4f classic %.4f rotid %.4f",
	       num(st, "error_max"), num(cl, "error_max"), num(ro, "error_max"));
	EXPECT_GE(num(st, "error_max"), 0.5);
	/*
	 * <= 0.5% on 6.1 and 6.12; the debug kernel, slower by 10x and
	 * more under host load, once measured above 5% (a pass there
	 * takes long enough to show between time and count).
	 */
	EXPECT_LE(num(ro, "error_max"), 0.15);
	EXPECT_GE(num(ro, "utilization"), 0.95 * num(st, "utilization"));
	free(st);
	free(cl);
	free(ro);
	free(json);
}

/*
 * Mixed sizes against the max-min fair optimum (reference solver): rotid
 * reaches min share/opt >= 0.97 on each, stock and classic printed next
 * to it.  PEVT_FAIRNESS_ALL=1 adds every built-in.
 */
static const struct {
	const char *name, *text;
} opt_scen[] = {
	/* 4 task + 1 CPU single on 2 slots: a wrap of 5 rotations, 2/5 each */
	{ "mixed-wrap", "slots 2\ngroup task flexible cpu_ns\ngroup task flexible cpu_ns\n"
	  "group task flexible syscalls\ngroup task flexible cswitch\n"
	  "group cpu flexible cpu_ns\n" },
	/* two triples and three singles on 4 slots: 3/7 each (R = 7) */
	{ "mixed-3-1", "slots 4\ngroup cpu flexible cpu_ns,syscalls,cswitch\n"
	  "group task flexible cpu_ns,syscalls,cswitch\ngroup task flexible cpu_ns\n"
	  "group task flexible syscalls\ngroup cpu flexible cswitch\n" },
	/* two pairs, a single held to slot 0, two free singles on 3: 3/7 */
	{ "mixed-mask", "slots 3\ngroup cpu flexible cpu_ns,syscalls\n"
	  "group task flexible cpu_ns,cswitch\ngroup task flexible cpu_ns mask=0x1\n"
	  "group cpu flexible syscalls\ngroup task flexible cswitch\n" },
};

/*
 * Under TCG on a loaded host a 1 s run leaves shares a few points off
 * (tick jitter): rotid runs 3 s, long enough for its 0.97; stock and
 * classic, printed for comparison only, 1 s.
 */
static char *opt_bench(struct __test_metadata *_metadata, const char *sched,
		       int secs, const char *json)
{
	const char *all = getenv("PEVT_FAIRNESS_ALL");
	char cmd[1024], path[64];
	int i, len;
	struct out r;

	len = snprintf(cmd, sizeof(cmd), "pevt bench fairness sched %s duration %d "
		       "switch none json %s", sched, secs, json);
	for (i = 0; i < (int)(sizeof(opt_scen) / sizeof(opt_scen[0])); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/%s.scen", opt_scen[i].name);
		f = fopen(path, "w");
		if (!f)
			return NULL;
		fprintf(f, "name %s\nworkload spin\n%s", opt_scen[i].name, opt_scen[i].text);
		fclose(f);
		len += snprintf(cmd + len, sizeof(cmd) - len, " scenario %s", path);
	}
	snprintf(cmd + len, sizeof(cmd) - len, " scenario constraints%s",
		 all && *all == '1' ? " scenario mixed-sizes scenario basic scenario starvation"
		 " scenario pinned-fill scenario software scenario many-tasks scenario phased" : "");
	run(&r, "%s", cmd);
	if (r.status)
		TH_LOG("'%s' exited %d: %s", cmd, r.status, r.err);
	else
		TH_LOG("%s", r.out);
	out_free(&r);
	return slurp(json);
}

/* Two bench runs of ~12 s each (more on the debug kernel): past 30 s. */
FIXTURE(opt) {};
FIXTURE_SETUP(opt) {}
FIXTURE_TEARDOWN(opt) {}

TEST_F_TIMEOUT(opt, optimum, 600)
{
	static const char *const builtin[] = { "constraints", "mixed-sizes", "basic",
		"starvation", "pinned-fill", "software", "many-tasks", "phased" };
	static const char *const sk[] = { "stock", "classic", "rotid" };
	bool retried = false;
	char *json[2];
	int i, k, n = 0;

	json[0] = opt_bench(_metadata, "stock,classic", 1, "/tmp/fair_opt_stock.json");
	json[1] = opt_bench(_metadata, "rotid", 3, "/tmp/fair_opt_rotid.json");
	ASSERT_NE(NULL, json[0]);
	ASSERT_NE(NULL, json[1]);
	for (i = 0; i < 11; i++) {
		const char *name = i < 3 ? opt_scen[i].name : builtin[i - 3];
		double mo[3], di[3];
		char *o[3];

		for (k = 0; k < 3; k++) {
			o[k] = run_obj(json[k == 2], name, sk[k]);
			mo[k] = num(o[k], "min_over_opt");
			di[k] = num(o[k], "dist");
		}
		if (!o[2]) {
			EXPECT_GE(i, 4);	/* only the PEVT_FAIRNESS_ALL ones may be absent */
			continue;
		}
		n++;
		TH_LOG("%-12s min/opt stock %.3f classic %.3f rotid %.3f; dist %.4f %.4f %.4f",
		       name, mo[0], mo[1], mo[2], di[0], di[1], di[2]);
		if (!(mo[2] >= 0.97) && !retried) {
			/*
			 * One more rotid run when a host under load skewed this
			 * one (seen once on 6.1 at load 11: 0.954, the other
			 * scenarios >= 0.995); a planner or order bug fails both.
			 */
			free(json[1]);
			json[1] = opt_bench(_metadata, "rotid", 3, "/tmp/fair_opt_rotid.json");
			ASSERT_NE(NULL, json[1]);
			retried = true;
			free(o[2]);
			o[2] = run_obj(json[1], name, "rotid");
			mo[2] = num(o[2], "min_over_opt");
			TH_LOG("%-12s rotid again: min/opt %.3f", name, mo[2]);
		}
		EXPECT_GE(mo[2], 0.97) TH_LOG("%s: rotid min/opt %.3f", name, mo[2]);
		for (k = 0; k < 3; k++)
			free(o[k]);
	}
	EXPECT_GE(n, 4);
	free(json[0]);
	free(json[1]);
}

TEST(pinned_fill)
{
	char *json = bench_json(_metadata);
	const char *sk[] = { "stock", "classic", "rotid" };
	double v[8], ticks[3], secs[3];
	int i;

	ASSERT_NE(NULL, json);
	for (i = 0; i < 3; i++) {
		char *o = run_obj(json, "pinned-fill", sk[i]);

		ASSERT_NE(NULL, o);
		ASSERT_EQ(4, shares(o, v, 8));
		/* Pinned groups fill both slots; flexible ones never run. */
		EXPECT_GE(v[0], 0.97);
		EXPECT_GE(v[1], 0.97);
		EXPECT_LE(v[2], 0.03);
		EXPECT_LE(v[3], 0.03);
		ticks[i] = num(o, "ticks");
		secs[i] = num(o, "seconds");
		free(o);
	}
	if (!strstr(json, "\"instrument\":\"kretprobe\"")) {
		/* Kernel without kretprobes: the figures must say so. */
		EXPECT_TRUE(isnan(ticks[0]) && isnan(ticks[2]));
		TH_LOG("no tick instrument on this kernel: tick counts are null");
	} else {
		TH_LOG("timer runs: stock %.0f classic %.0f rotid %.0f in ~%.2f s",
		       ticks[0], ticks[1], ticks[2], secs[0]);
		EXPECT_GE(ticks[0], 100 * secs[0]);	/* 250/s at 4 ms */
		EXPECT_LE(ticks[2], 2);
	}
	free(json);
}

/*
 * rounds 3: each scheduler's second in three slices, taking turns ABBA;
 * the figures are those of the sum (seconds, counts, the tick's median
 * from the summed histogram), the claims of the starvation scenario
 * hold as with one slice.
 */
TEST(rounds)
{
	const char *js = "/tmp/fairness_rounds.json";
	const char *sk[] = { "stock", "rotid" };
	double v[4];
	struct out r;
	char *json;
	int i;

	run(&r, "PEVT_PROGRESS=1 pevt bench fairness scenario starvation sched stock,rotid "
	    "duration 1.2 rounds 3 switch none json %s", js);
	ASSERT_EQ(0, r.status) TH_LOG("%s", r.err);
	/* the progress lines, in turns: stock rotid, rotid stock, stock rotid */
	for (i = 0; i < 6; i++) {
		char line[96];

		snprintf(line, sizeof(line), "%s, interval 4 ms, round %d of 3 (%d/6,",
			 sk[(i / 2) % 2 ? 1 - i % 2 : i % 2], i / 2 + 1, i + 1);
		EXPECT_NE(NULL, strstr(r.err, line)) TH_LOG("no '%s' in %s", line, r.err);
	}
	out_free(&r);
	json = slurp(js);
	ASSERT_NE(NULL, json);
	for (i = 0; i < 2; i++) {
		char *o = run_obj(json, "starvation", sk[i]);

		ASSERT_NE(NULL, o);
		EXPECT_EQ(3, num(o, "rounds"));
		TH_LOG("%s: %.3f s over 3 rounds, error mean %.4f", sk[i], num(o, "seconds"),
		       num(o, "error_mean"));
		/*
		 * Three slices of 0.4 s, each with its enable and disable
		 * of every event and a wakeup from its sleep: 1.39-1.48 s
		 * in an idle CI, 1.70 s with the host busy beside the VM.
		 * Rounds that each ran the whole duration take 3.6 s.
		 */
		EXPECT_LE(1.15, num(o, "seconds"));
		EXPECT_GE(2.2, num(o, "seconds"));
		ASSERT_EQ(4, shares(o, v, 4));
		if (i == 1) {
			EXPECT_LE(0.4, v[2]);	/* rotid: no task group starves */
			EXPECT_LE(0.4, v[3]);
			EXPECT_GE(0.05, num(o, "error_mean"));
		} else {
			EXPECT_GE(0.1, v[2] < v[3] ? v[2] : v[3]);	/* stock starves one */
		}
		free(o);
	}
	free(json);
	unlink(js);
}

TEST(switch_cost)
{
	char *json = bench_json(_metadata);
	const char *sw, *sk[] = { "stock", "classic", "rotid" };
	char key[64];
	int i;

	ASSERT_NE(NULL, json);
	sw = strstr(json, "\"switch\":[");
	ASSERT_NE(NULL, sw);
	ASSERT_NE(NULL, strstr(sw, "{\"scheduler\":null,\"k\":0,"));
	for (i = 0; i < 3; i++) {
		const char *o;

		snprintf(key, sizeof(key), "{\"scheduler\":\"%s\",\"k\":1,", sk[i]);
		o = strstr(sw, key);
		ASSERT_NE(NULL, o) TH_LOG("no %s", key);
		EXPECT_LT(100, num(o, "switches"));
		EXPECT_LT(0, num(o, "ns_per_switch"));
		if (strstr(json, "\"instrument\":\"kretprobe\"")) {
			TH_LOG("%s: %.0f ns/switch, hooks %.0f ns, timer runs/switch %.3f",
			       sk[i], num(o, "ns_per_switch"), num(o, "hook_ns"),
			       num(o, "timer_per_switch"));
			EXPECT_LT(0, num(o, "hook_ns"));
			/* rotid used to take one zero-delay timer run per switch */
			EXPECT_LE(num(o, "timer_per_switch"), 0.1);
		}
	}
	free(json);
}

TEST(json_schema)
{
	static const char *const run_keys[] = {
		"interval_ms", "slots", "workload", "seconds", "jain", "min_share",
		"utilization", "error_mean", "error_max", "ticks", "tick_ns",
		"tick_p50_ns", "rounds", "roundtrips", "groups",
	};
	static const char *const member_keys[] = {
		"\"source\":", "\"count\":", "\"enabled\":", "\"running\":",
		"\"truth\":", "\"error\":",
	};
	char *json = bench_json(_metadata), *o, k[64];
	size_t i;

	ASSERT_NE(NULL, json);
	ASSERT_EQ(0, strncmp(json, "{\"bench\":\"fairness\",\"kernel\":\"", 30));
	EXPECT_NE(NULL, strstr(json, "\"vpmu_slots\":"));
	EXPECT_EQ(6, count(json, "{\"scenario\":"));
	EXPECT_EQ(4, count(json, "{\"scheduler\":"));	/* none + 3 with k=1 */
	EXPECT_EQ('\n', json[strlen(json) - 1]);
	EXPECT_EQ(0, strcmp(json + strlen(json) - 3, "]}\n"));
	o = run_obj(json, "starvation", "rotid");
	ASSERT_NE(NULL, o);
	for (i = 0; i < sizeof(run_keys) / sizeof(run_keys[0]); i++) {
		snprintf(k, sizeof(k), "\"%s\":", run_keys[i]);
		if (!strstr(o, k))
			TH_LOG("the run object lacks %s", k);
		EXPECT_NE(NULL, strstr(o, k));
	}
	EXPECT_EQ(4, count(o, "{\"kind\":"));
	EXPECT_EQ(2, count(o, "{\"kind\":\"cpu\",\"pinned\":false,\"slots\":1,"));
	EXPECT_EQ(2, count(o, "{\"kind\":\"task\",\"pinned\":false,\"slots\":1,"));
	for (i = 0; i < sizeof(member_keys) / sizeof(member_keys[0]); i++) {
		int n = count(o, member_keys[i]);

		if (n != 4)
			TH_LOG("%d members have %s, want 4", n, member_keys[i]);
		EXPECT_EQ(4, n);
	}
	EXPECT_EQ(4, count(o, "\"source\":\"cpu_ns\""));
	/*
	 * With the instrument (not on a kernel without kretprobes), the
	 * median tick from its histogram: there, and of the mean's order
	 * (a median far above the mean would be a histogram counting wrong).
	 */
	if (num(o, "ticks") > 0) {
		double mean = num(o, "tick_ns"), p50 = num(o, "tick_p50_ns");

		TH_LOG("starvation rotid: %.0f ticks, mean %.0f ns, median %.0f ns",
		       num(o, "ticks"), mean, p50);
		EXPECT_LT(0, p50);
		EXPECT_GE(3 * mean, p50);
	}
	free(o);
	free(json);
}

TEST(data_file)
{
	char *json = bench_json(_metadata), *d, *p;
	double a, b, c;
	int i;

	ASSERT_NE(NULL, json);
	free(json);
	d = slurp(DATA);
	ASSERT_EQ(0, strncmp(d, "# pevt bench fairness, ", 23));
	ASSERT_NE(NULL, strstr(d, "schedulers: stock classic rotid\n"));
	p = strstr(d, "# shares starvation 4\n");
	ASSERT_NE(NULL, p);
	p = strchr(p, '\n') + 1;
	for (i = 0; i < 4; i++) {
		char label[8];

		ASSERT_EQ(4, sscanf(p, "%7s %lf %lf %lf", label, &a, &b, &c)) TH_LOG("%.40s", p);
		EXPECT_EQ(i < 2 ? 'C' : 'T', label[0]);
		p = strchr(p, '\n') + 1;
	}
	EXPECT_EQ(0, strncmp(p, "\n\n# shares pinned-fill 4\nC0p ", 29));
	free(d);
}

TEST(scenario_file)
{
	const char *path = "/tmp/fairness_test.scen";
	FILE *f = fopen(path, "w");
	double v[4];
	char *json, *o;
	struct out r;

	ASSERT_NE(NULL, f);
	fputs("# one slot, one CPU group and one task group\n"
	      "name custom\nslots 1\nduration 1\n"
	      "group cpu flexible cpu_ns\ngroup task flexible cpu_ns\n", f);
	fclose(f);
	run(&r, "pevt bench fairness scenario %s sched rotid,stock switch none json /tmp/ft2.json",
	    path);
	ASSERT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_NE(NULL, strstr(r.out, "scenario custom: 1 slots, workload spin, 2 groups"));
	json = slurp("/tmp/ft2.json");
	o = run_obj(json, "custom", "rotid");
	ASSERT_NE(NULL, o);
	ASSERT_EQ(2, shares(o, v, 4));
	EXPECT_GE(v[0], 0.4);
	EXPECT_GE(v[1], 0.4);
	free(o);
	o = run_obj(json, "custom", "stock");
	ASSERT_NE(NULL, o);
	ASSERT_EQ(2, shares(o, v, 4));
	EXPECT_LE(v[1], 0.1);	/* stock: the CPU group takes the slot */
	EXPECT_EQ(NULL, run_obj(json, "custom", "classic"));
	EXPECT_EQ(0, count(json, "{\"scheduler\":"));
	free(o);
	free(json);
	out_free(&r);
}

TEST(malformed_scenario)
{
	const char *path = "/tmp/fairness_bad.scen";
	FILE *f = fopen(path, "w");
	struct out r;

	ASSERT_NE(NULL, f);
	fputs("name bad\nslots 2\ngroup cpu flexibel cpu_ns\n", f);
	fclose(f);
	run(&r, "pevt bench fairness scenario %s", path);
	EXPECT_NE(0, r.status);
	EXPECT_NE(NULL, strstr(r.err, "/tmp/fairness_bad.scen:3: ")) TH_LOG("%s", r.err);
	EXPECT_NE(NULL, strstr(r.err, "flexibel")) TH_LOG("%s", r.err);
	EXPECT_EQ(NULL, strstr(r.out, "pevt bench fairness on"));	/* nothing ran */
	out_free(&r);
}

TEST(bad_arguments)
{
	char cmd[128], scen[] = "/tmp/fairness_big.scen";
	long slots = read_long("/sys/module/pevt/parameters/nr_counters");
	struct out r;
	FILE *f;

	run(&r, "pevt bench fairness scenario nosuch");
	EXPECT_NE(0, r.status);
	EXPECT_NE(NULL, strstr(r.err, "scenario 'nosuch': neither a built-in (basic, starvation,"))
		TH_LOG("%s", r.err);
	out_free(&r);
	run(&r, "pevt bench fairness sched stock,fast");
	EXPECT_NE(0, r.status);
	EXPECT_NE(NULL, strstr(r.err, "'fast' is not stock, classic or rotid")) TH_LOG("%s", r.err);
	out_free(&r);
	run(&r, "pevt bench fairness interval 4,0");
	EXPECT_NE(0, r.status);
	EXPECT_NE(NULL, strstr(r.err, "interval (ms): '4,0' is not a list")) TH_LOG("%s", r.err);
	out_free(&r);
	run(&r, "pevt bench fairness duration 1x");
	EXPECT_NE(0, r.status);
	EXPECT_NE(NULL, strstr(r.err, "duration: '1x'")) TH_LOG("%s", r.err);
	out_free(&r);
	run(&r, "pevt bench fairness rounds 0");
	EXPECT_NE(0, r.status);
	EXPECT_NE(NULL, strstr(r.err, "rounds: '0' is not a number of rounds in 1..100"))
		TH_LOG("%s", r.err);
	out_free(&r);
	/* An output file that cannot be written: said before anything runs. */
	run(&r, "pevt bench fairness scenario basic json /nonexistent/f.json");
	EXPECT_NE(0, r.status);
	EXPECT_NE(NULL, strstr(r.err, "/nonexistent/f.json: No such file or directory"))
		TH_LOG("%s", r.err);
	EXPECT_EQ(NULL, strstr(r.out, "pevt bench fairness on"));
	out_free(&r);

	/* More slots than the vPMU has: refused before anything runs. */
	ASSERT_LT(0, slots);
	f = fopen(scen, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "name big\nslots %ld\ngroup cpu flexible cpu_ns\n", slots + 1);
	fclose(f);
	run(&r, "pevt bench fairness scenario %s", scen);
	EXPECT_NE(0, r.status);
	snprintf(cmd, sizeof(cmd), "scenario big needs %ld slots, pevt_vpmu has %ld", slots + 1, slots);
	EXPECT_NE(NULL, strstr(r.err, cmd)) TH_LOG("%s", r.err);
	out_free(&r);
}

/* Processes whose comm is "pevt" (the bench and its workload tasks). */
static int count_pevt_procs(void)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int n = 0;

	while (dir && (d = readdir(dir))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "pevt\n"))
			n++;
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return n;
}

/* SIGINT mid-run: policy, intervals and the instrument restored, no task left. */
TEST(interrupted)
{
	char before[16] = "", policy[16] = "", probes[512] = "";
	long ivl = read_long("/sys/module/pevt/parameters/mux_interval_ms");
	int st, i;
	pid_t pid;
	FILE *f;

	ASSERT_EQ(0, count_pevt_procs());
	f = fopen("/sys/module/pevt/parameters/policy", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(before, sizeof(before), f));
	fclose(f);
	ASSERT_NE(7, ivl);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		execlp("pevt", "pevt", "bench", "fairness", "scenario", "basic", "sched",
		       "classic", "interval", "7", "duration", "10", "switch", "none", NULL);
		_exit(127);
	}
	/* Running: the policy and interval it set are visible. */
	for (i = 0; i < 100; i++) {
		usleep(50000);
		if (read_long("/sys/module/pevt/parameters/mux_interval_ms") == 7)
			break;
	}
	ASSERT_EQ(7, read_long("/sys/module/pevt/parameters/mux_interval_ms"));
	usleep(300000);
	EXPECT_EQ(2, count_pevt_procs());	/* the bench and its spinning task */
	kill(pid, SIGINT);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
	usleep(200000);
	EXPECT_EQ(0, count_pevt_procs());
	EXPECT_EQ(ivl, read_long("/sys/module/pevt/parameters/mux_interval_ms"));
	f = fopen("/sys/module/pevt/parameters/policy", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(policy, sizeof(policy), f));
	fclose(f);
	EXPECT_STREQ(before, policy);
	f = fopen("/sys/kernel/debug/pevt/probes", "r");
	if (f) {
		size_t n = fread(probes, 1, sizeof(probes) - 1, f);

		probes[n] = '\0';
		fclose(f);
		EXPECT_EQ(NULL, strstr(probes, "armed 1")) TH_LOG("%s", probes);
	}
}

/*
 * cpu_ns of a task that does nothing but pass a token round a ring is
 * mostly its switch path.  With the task switch-in at finish_task_switch()
 * (kmod/context.c), as perf's, pevt counts the same task time as the stock
 * task-clock twin; with the switch-in at sched_switch (before 2026-11-26,
 * and still on kernels without kprobes: switch_in_late N) it also counted
 * switch_mm()/switch_to() and more.  many-tasks' cpu_ns group runs alone
 * with the CPU group on 2 slots (no multiplexing): its error is the
 * counting difference alone (after: 0.003-0.022 on 6.1 and 6.12; before
 * 0.07-0.11).  ring-tasks multiplexes every task group at 2/3: rotid's
 * mean error is a looser guard (after: 0.005-0.034; before: 0.036-0.070,
 * above 0.05 in 7 of 10 runs).  Stock's figures are printed next to them.
 * PEVT_TASK_TIME_STRICT=1 asserts also where the switch-in is early, to
 * show the test fails there.  The debug kernel runs it once and asserts
 * no bound: KASAN and lockdep make every switch path (pevt's hooks inside
 * the stock twin's window, stock's inside pevt's) tens of microseconds,
 * which is what the bounds would measure there (0.0646 and 0.0326 in two
 * runs, then the harness's timeout).
 */
#define RING_JSON	"/tmp/fair_ring.json"

/* "error" of the first member with "source":@src in @obj; NAN if none. */
static double member_err(const char *obj, const char *src, double *ena, double *run)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "{\"source\":\"%s\",", src);
	p = obj ? strstr(obj, k) : NULL;
	if (!p)
		return NAN;
	*ena = num(p, "enabled");
	*run = num(p, "running");
	return num(p, "error");
}

/*
 * One bench run of ring-tasks and many-tasks (stock, rotid): rotid's
 * many-tasks cpu_ns error in *@e and its ring-tasks mean error in *@ring.
 */
static int ring_run(struct __test_metadata *_metadata, int late, double *e, double *ring)
{
	const char *scen[] = { "ring-tasks", "many-tasks" }, *sk[] = { "stock", "rotid" };
	double ena = 0, rn = 0;
	char *json, *o[2][2];
	struct out r;
	int i, k;

	run(&r, "pevt bench fairness scenario ring-tasks scenario many-tasks sched stock,rotid "
	    "duration 2 switch none json " RING_JSON);
	if (r.status) {
		TH_LOG("%s", r.err);
		out_free(&r);
		return -1;
	}
	out_free(&r);
	json = slurp(RING_JSON);
	if (!json)
		return -1;
	for (i = 0; i < 2; i++)
		for (k = 0; k < 2; k++) {
			o[i][k] = run_obj(json, scen[i], sk[k]);
			if (!o[i][k]) {
				TH_LOG("no %s/%s run", scen[i], sk[k]);
				return -1;
			}
			TH_LOG("%s %s: error mean %.4f max %.4f, %.0f ticks, %.0f ns/tick, switch-in late %c",
			       scen[i], sk[k], num(o[i][k], "error_mean"), num(o[i][k], "error_max"),
			       num(o[i][k], "ticks"), num(o[i][k], "tick_ns"), late ? 'Y' : 'N');
		}
	for (k = 0; k < 2; k++) {
		*e = member_err(o[1][k], "cpu_ns", &ena, &rn);
		TH_LOG("many-tasks %s cpu_ns: error %.4f, running/enabled %.3f", sk[k], *e,
		       ena > 0 ? rn / ena : NAN);
	}
	*ring = num(o[0][1], "error_mean");
	for (i = 0; i < 2; i++)
		for (k = 0; k < 2; k++)
			free(o[i][k]);
	free(json);
	return 0;
}

/*
 * The counting difference is systematic (every run of the early
 * switch-in is off by 0.07-0.11), a run on a loaded host is sometimes off
 * once (6.1 in a full make check: 0.055, then within bounds): up to three
 * runs, the test fails if none is within the bounds.
 */
TEST(ring_task_time)
{
	const char *strict = getenv("PEVT_TASK_TIME_STRICT");
	double e = NAN, ring = NAN;
	int late = pevt_param_bool("switch_in_late");
	bool check;
	int i;

	ASSERT_LE(0, late) TH_LOG("no module parameter switch_in_late");
	check = late == 1 || (strict && *strict == '1');
	if (!strcmp(getenv("PEVT_KERNEL") ?: "", "debug") && !(strict && *strict == '1'))
		check = false;
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, ring_run(_metadata, late, &e, &ring));
		if (!check || (e <= 0.03 && ring <= 0.05))
			break;
		TH_LOG("run %d of 3 out of bounds (cpu_ns %.4f > 0.03 or ring mean %.4f > 0.05)",
		       i + 1, e, ring);
	}
	if (check) {
		EXPECT_LE(e, 0.03);	/* rotid's */
		EXPECT_LE(ring, 0.05);
	}
}

/*
 * Sum over the CPUs of debugfs pevt_sched/plan of the counter @field
 * ("ticks", "key_walks", ...) in *@sum; -1 without the file or the field
 * on a CPU's line.
 */
static int plan_sum(const char *field, long long *sum)
{
	FILE *f = fopen("/sys/kernel/debug/pevt_sched/plan", "r");
	char line[768], key[64], *p;
	int missing = 0;

	*sum = 0;
	if (!f)
		return -1;
	snprintf(key, sizeof(key), " %s ", field);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "cpu ", 4))
			continue;
		p = strstr(line, key);
		if (p)
			*sum += strtoll(p + strlen(key), NULL, 10);
		else
			missing = 1;
	}
	fclose(f);
	return missing ? -1 : 0;
}

/*
 * Set the module parameter rotid_@knob to @val, run rotid on @scen for
 * 1 s, and give the growth of the plan file's counter @num over that of
 * @den (more than 50 of them) in that run in *@per.  0, or -1 (logged).
 */
static int rotid_ratio(struct __test_metadata *_metadata, const char *knob,
		       const char *val, const char *scen, const char *num,
		       const char *den, double *per)
{
	long long n0, d0, n1, d1;
	char param[128], cmd[256];
	struct out r;
	int st;

	snprintf(param, sizeof(param), "/sys/module/pevt/parameters/rotid_%s", knob);
	if (write_str(param, val)) {
		TH_LOG("cannot write %s", param);
		return -1;
	}
	if (plan_sum(num, &n0) || plan_sum(den, &d0)) {
		TH_LOG("no plan file, or no %s or %s in it", num, den);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "pevt bench fairness %s sched rotid duration 1 switch none",
		 scen);
	run(&r, cmd);
	st = r.status;
	if (st)
		TH_LOG("%s", r.err);
	out_free(&r);
	if (plan_sum(num, &n1) || plan_sum(den, &d1) || st)
		return -1;
	if (d1 - d0 <= 50) {
		TH_LOG("%lld %s, want more than 50", d1 - d0, den);
		return -1;
	}
	*per = (double)(n1 - n0) / (d1 - d0);
	TH_LOG("rotid_%s=%s: %lld %s, %.3f %s per one", knob, val, d1 - d0, den, *per, num);
	return 0;
}

/*
 * A rotid tick from rotation r to the next takes off only the groups that
 * are not where the next rotation wants them (kmod/sched.c
 * sched_unplace()).  ring-tasks: per ring task, the CPU group and the
 * task's two groups on 2 slots, R = 3: of the two groups on, at least one
 * stays in the next rotation.  The full pass (module parameter
 * rotid_full_pass, the pass before 2026-11-26) takes off both.
 */
TEST(tick_moves)
{
	double per[2];

	ASSERT_EQ(0, rotid_ratio(_metadata, "full_pass", "N", "scenario ring-tasks",
				 "tick_outs", "ticks", &per[0]));
	ASSERT_EQ(0, rotid_ratio(_metadata, "full_pass", "Y", "scenario ring-tasks",
				 "tick_outs", "ticks", &per[1]));
	ASSERT_EQ(0, write_str("/sys/module/pevt/parameters/rotid_full_pass", "N"));
	/*
	 * 1.02-1.05 on a quiet host, 1.15-1.35 seen in loaded make checks:
	 * a tick after a task switch, a classic pass or a replan starts
	 * from a placement that is not rotation r's and may take off two.
	 * The full pass takes off both every time (2.00-2.04): the bound
	 * and the margin below catch a tick that takes everything off.
	 */
	EXPECT_LE(per[0], 1.6);
	EXPECT_LT(per[0] + 0.35, per[1]);
}

/*
 * A rotid tick whose pair's groups did not change since their leaders
 * were last matched against the plan's key does not walk the groups
 * again (kmod/sched.c sched_lead_known(): the contexts' key
 * generations).  ring-tasks switches tasks every ~30-60 us, and each
 * switch swaps the pair's plan: the switch-in's flexible passes find the
 * leaders again, so the tick still needs no walk.  rotid_key_walk=Y (the
 * tick before 2026-12-01) walks on every tick: the counter counts.
 */
TEST(tick_key_walks)
{
	const char *scen = "scenario ring-tasks scenario many-tasks";
	double per[2];

	ASSERT_EQ(0, rotid_ratio(_metadata, "key_walk", "N", scen, "key_walks", "ticks",
				 &per[0]));
	ASSERT_EQ(0, rotid_ratio(_metadata, "key_walk", "Y", scen, "key_walks", "ticks",
				 &per[1]));
	ASSERT_EQ(0, write_str("/sys/module/pevt/parameters/rotid_key_walk", "N"));
	EXPECT_LE(per[0], 0.2);
	EXPECT_LE(0.95, per[1]);
}

/*
 * A task switch-in that brings back a pair whose plan is parked, with
 * neither context's groups changed since (key generations), takes the
 * plan without walking the groups, and the flexible passes after it
 * apply it without a walk either (kmod/sched.c sched_task_switch_in(),
 * sched_ctx_flexible_in()).  many-tasks and ring-tasks switch tasks
 * thousands of times a second, each switch a change of pair.
 * rotid_key_walk=Y (the switch-in before 2026-12-02) walks both contexts
 * to build the key and each flexible pass walks its context again: ~4
 * walks per switch-in.
 */
TEST(switch_key_walks)
{
	const char *scen = "scenario ring-tasks scenario many-tasks";
	double per[2];

	ASSERT_EQ(0, rotid_ratio(_metadata, "key_walk", "N", scen, "switch_walks",
				 "switch_ins", &per[0]));
	ASSERT_EQ(0, rotid_ratio(_metadata, "key_walk", "Y", scen, "switch_walks",
				 "switch_ins", &per[1]));
	ASSERT_EQ(0, write_str("/sys/module/pevt/parameters/rotid_key_walk", "N"));
	/*
	 * 0.113 (6.1), 0.140 (6.12) and 0.244 (debug, fewer switches for
	 * the same other walks) on a quiet host, against 3.995-3.998 with
	 * the knob; either shortcut alone removed leaves 2.
	 */
	EXPECT_LE(per[0], 1.0);
	EXPECT_LE(1.9, per[1]);
}

/*
 * A rotid tick that meets a pair whose plan has one rotation, as it was
 * (key generations, slots) and with every group on, returns before the
 * pass (kmod/sched.c sched_rotid()).  many-tasks: the ping-pong task
 * with the cpu_ns group fits beside the CPU group, and the idle task has
 * nothing of its own; the tick set going by the other task finds one of
 * them 30-50% of the time.  rotid_idle_pass=Y (the tick before
 * 2026-12-02) runs the pass there anyway.
 */
TEST(tick_idle)
{
	const char *scen = "scenario many-tasks";
	double idle, pass[2];

	ASSERT_EQ(0, rotid_ratio(_metadata, "idle_pass", "N", scen, "idle_ticks", "timer",
				 &idle));
	ASSERT_EQ(0, rotid_ratio(_metadata, "idle_pass", "N", scen, "idle_passes", "timer",
				 &pass[0]));
	ASSERT_EQ(0, rotid_ratio(_metadata, "idle_pass", "Y", scen, "idle_passes", "timer",
				 &pass[1]));
	ASSERT_EQ(0, write_str("/sys/module/pevt/parameters/rotid_idle_pass", "N"));
	EXPECT_LE(0.15, idle);		/* the case is there */
	EXPECT_LE(pass[0], 0.02);
	EXPECT_LE(0.15, pass[1]);
}

/*
 * The tick trusts a note made at the end of the last switch-in or pass
 * (kmod/sched.c sched_idle_note()): a one-rotation pair as it was reads
 * only the first page of struct sched_cpu.  With rotid_idle_verify=Y
 * every tick that trusts the note also does the full check and counts
 * the stale notes (idle_stale): a writer of what the check reads that
 * did not clear the note.  many-tasks switches the pair at every
 * ping-pong; ring-tasks has four task contexts; idle-gaps has a task
 * whose pinned group leaves no slot to the three CPU groups (its pair:
 * one rotation) and that sleeps 200 us at a time, so the CPU goes idle
 * (the CPU groups alone: three rotations, the tick armed) right after
 * the task's one-rotation switch-in.
 */
TEST(tick_idle_note)
{
	static const char *const scen[] = { "scenario many-tasks", "scenario ring-tasks" };
	double cached[2], stale[2], v[4], cpu[2];
	long long st0, st1, t0, t1, c0, c1;
	struct out r;
	char *json;
	FILE *f;
	int i;

	f = fopen("/tmp/idle_gaps.scen", "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "name idle-gaps\nslots 2\nworkload phased\n"
		"group task pinned cpu_ns,cpu_ns\n"
		"group cpu flexible cpu_ns\ngroup cpu flexible cpu_ns\ngroup cpu flexible cpu_ns\n");
	fclose(f);
	ASSERT_EQ(0, write_str("/sys/module/pevt/parameters/rotid_idle_verify", "Y"));
	ASSERT_EQ(0, plan_sum("idle_stale", &st0));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rotid_ratio(_metadata, "idle_pass", "N", scen[i], "idle_cached",
					 "timer", &cached[i]));
		ASSERT_EQ(0, rotid_ratio(_metadata, "idle_pass", "N", scen[i], "idle_stale",
					 "timer", &stale[i]));
	}
	/*
	 * idle-gaps: rotid ticks only from the task's switch-outs (3 s, no
	 * floor on them).  The CPU groups get time only while the task
	 * sleeps: stock's tick rotates them in there, and rotid's since the
	 * switch-out arms its tick (before: 0.0% where stock gave 0.4%).
	 */
	ASSERT_EQ(0, plan_sum("timer", &t0));
	ASSERT_EQ(0, plan_sum("idle_cached", &c0));
	run(&r, "pevt bench fairness scenario /tmp/idle_gaps.scen sched stock,rotid interval 4 "
	    "duration 3 switch none json /tmp/idle_gaps.json");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	out_free(&r);
	ASSERT_EQ(0, plan_sum("timer", &t1));
	ASSERT_EQ(0, plan_sum("idle_cached", &c1));
	TH_LOG("idle-gaps: %lld timer runs, %lld served by the note", t1 - t0, c1 - c0);
	json = slurp("/tmp/idle_gaps.json");
	ASSERT_NE(NULL, json);
	for (i = 0; i < 2; i++) {
		char *o = run_obj(json, "idle-gaps", i ? "rotid" : "stock");

		ASSERT_NE(NULL, o);
		ASSERT_EQ(4, shares(o, v, 4));
		cpu[i] = (v[1] + v[2] + v[3]) / 3;
		free(o);
	}
	free(json);
	unlink("/tmp/idle_gaps.json");
	TH_LOG("idle-gaps: CPU groups' mean share stock %.4f rotid %.4f", cpu[0], cpu[1]);
	EXPECT_LT(0, cpu[0]);			/* the task sleeps: there are gaps */
	EXPECT_LE(0.15 * cpu[0], cpu[1]);	/* 0.41-0.55x; 0.03x without the arm */
	ASSERT_EQ(0, plan_sum("idle_stale", &st1));
	ASSERT_EQ(0, write_str("/sys/module/pevt/parameters/rotid_idle_verify", "N"));
	unlink("/tmp/idle_gaps.scen");
	TH_LOG("idle_stale: %lld over the five runs", st1 - st0);
	EXPECT_LE(0.15, cached[0]);	/* many-tasks: the note serves its idle ticks */
	EXPECT_EQ(0, st1 - st0);
}

/*
 * pevt with no group on a CPU does not kick its timer when the stock side
 * takes and gives back vPMU slots there (kmod/sched.c
 * sched_slots_changed(): a plan of nothing does not depend on the
 * slots).  A stock run of many-tasks moves stock's slots at every switch
 * of the ping-pong; with the kick, 2-3 kicks and timer runs a run, and in
 * some boots (two parked plans of nothing around different slots taking
 * turns) one timer run per switch: thousands a second.
 */
TEST(stock_slots_no_pevt_timer)
{
	long long t0, t1, k0, k1;
	struct out r;

	ASSERT_EQ(0, write_str("/sys/module/pevt/parameters/policy", "rotid"));
	ASSERT_EQ(0, plan_sum("timer", &t0));
	ASSERT_EQ(0, plan_sum("slot_kicks", &k0));
	run(&r, "pevt bench fairness scenario many-tasks sched stock duration 1 switch none");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	out_free(&r);
	ASSERT_EQ(0, plan_sum("timer", &t1));
	ASSERT_EQ(0, plan_sum("slot_kicks", &k1));
	TH_LOG("during a 1 s stock run: %lld pevt timer runs, %lld slot kicks",
	       t1 - t0, k1 - k0);
	EXPECT_EQ(0, k1 - k0);
	EXPECT_LE(t1 - t0, 2);	/* at most a tick left armed before */
}

TEST_HARNESS_MAIN
