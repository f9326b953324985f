// SPDX-License-Identifier: GPL-2.0
/*
 * `pevt stat` in the guest: output format (text, -x CSV, -I intervals),
 * the --json schema, exit status propagation, targets (workload, -a, -C,
 * -p), tracepoints, event errors on the command line, multiplexing on the
 * vPMU (when registered), and the pevt backend for task-clock/cpu-clock.
 *
 * The pevt_backend_* cases need /dev/pevt with the software clocks; they
 * SKIP when the module does not provide /dev/pevt.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "../run_cmd.h"

/* The line of @text whose text after leading blanks matches "VALUE UNIT NAME". */
static bool find_count(const char *text, const char *unit, const char *name,
		       double *val, char *tail, size_t tail_sz)
{
	const char *l = text;

	while (l && *l) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char buf[512], u[16] = "", n[256] = "";
		double v;
		int pos = 0;

		if (len < sizeof(buf)) {
			memcpy(buf, l, len);
			buf[len] = '\0';
			/* "%lf" then, if the unit is given, the unit word. */
			if (*unit ? sscanf(buf, " %lf %15s %255s%n", &v, u, n, &pos) == 3 &&
				    !strcmp(u, unit)
				  : sscanf(buf, " %lf %255s%n", &v, n, &pos) == 2) {
				if (!strcmp(n, name)) {
					*val = v;
					if (tail)
						snprintf(tail, tail_sz, "%s", buf + pos);
					return true;
				}
			}
		}
		l = nl ? nl + 1 : NULL;
	}
	return false;
}

/* The " N.NNN seconds time elapsed" line, in ms; -1 if absent. */
static double elapsed_ms(const char *text)
{
	const char *p = strstr(text, " seconds time elapsed");
	double v;

	if (!p)
		return -1;
	while (p > text && p[-1] != '\n')
		p--;
	return sscanf(p, " %lf", &v) == 1 ? v * 1000 : -1;
}

static int nr_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* ---- a minimal JSON reader (enough to check a schema) ------------------ */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype t;
	double num;
	bool b;
	char *str;
	struct jval **items;	/* array elements or object values */
	char **keys;		/* object keys */
	int n;
};

static void jskip(const char **p)
{
	while (isspace((unsigned char)**p))
		(*p)++;
}

static struct jval *jparse(const char **p);

static char *jstring(const char **p)
{
	char *s = malloc(strlen(*p) + 1), *d = s;

	(*p)++;	/* '"' */
	while (**p && **p != '"') {
		if (**p == '\\') {
			(*p)++;
			if (**p == 'u') {
				*d++ = '?';
				*p += 4;
			} else {
				*d++ = **p;
			}
		} else {
			*d++ = **p;
		}
		(*p)++;
	}
	if (**p != '"') {
		free(s);
		return NULL;
	}
	(*p)++;
	*d = '\0';
	return s;
}

static struct jval *jparse(const char **p)
{
	struct jval *v = calloc(1, sizeof(*v));
	char *end;

	jskip(p);
	if (**p == '{' || **p == '[') {
		bool obj = **p == '{';

		v->t = obj ? J_OBJ : J_ARR;
		(*p)++;
		jskip(p);
		if (**p == (obj ? '}' : ']')) {
			(*p)++;
			return v;
		}
		for (;;) {
			jskip(p);
			v->items = realloc(v->items, (v->n + 1) * sizeof(*v->items));
			v->keys = realloc(v->keys, (v->n + 1) * sizeof(*v->keys));
			v->keys[v->n] = NULL;
			if (obj) {
				if (**p != '"' || !(v->keys[v->n] = jstring(p)))
					return NULL;
				jskip(p);
				if (**p != ':')
					return NULL;
				(*p)++;
			}
			if (!(v->items[v->n] = jparse(p)))
				return NULL;
			v->n++;
			jskip(p);
			if (**p == ',') {
				(*p)++;
				continue;
			}
			if (**p == (obj ? '}' : ']')) {
				(*p)++;
				return v;
			}
			return NULL;
		}
	}
	if (**p == '"') {
		v->t = J_STR;
		v->str = jstring(p);
		return v->str ? v : NULL;
	}
	if (!strncmp(*p, "null", 4)) {
		*p += 4;
		return v;
	}
	if (!strncmp(*p, "true", 4) || !strncmp(*p, "false", 5)) {
		v->t = J_BOOL;
		v->b = **p == 't';
		*p += v->b ? 4 : 5;
		return v;
	}
	v->t = J_NUM;
	v->num = strtod(*p, &end);
	if (end == *p)
		return NULL;
	*p = end;
	return v;
}

/* One complete JSON value per line of @text; returns the line's value. */
static struct jval *jline(const char *line)
{
	const char *p = line;
	struct jval *v = jparse(&p);

	jskip(&p);
	return v && !*p ? v : NULL;
}

static struct jval *jget(struct jval *o, const char *key)
{
	int i;

	if (!o || o->t != J_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

static int jtype_of(struct jval *o, const char *key)
{
	struct jval *v = jget(o, key);

	return v ? (int)v->t : -1;
}

/* Check one counter object; returns a description of the first problem. */
static const char *check_counter(struct jval *c)
{
	static const char *const nums[] = { "group", "value", "enabled", "running",
					     "pcnt_running" };
	size_t i;

	if (!c || c->t != J_OBJ)
		return "counter is not an object";
	/* "stddev" only under -r */
	if (c->n != 12 + (jget(c, "stddev") != NULL))
		return "counter does not have exactly 12 keys (13 under -r)";
	if (jtype_of(c, "event") != J_STR)
		return "event is not a string";
	if (jtype_of(c, "pmu") != J_STR && jtype_of(c, "pmu") != J_NULL)
		return "pmu is not string|null";
	if (jtype_of(c, "leader") != J_BOOL || jtype_of(c, "counted") != J_BOOL ||
	    jtype_of(c, "supported") != J_BOOL)
		return "leader/counted/supported not bool";
	if (!jget(c, "supported")->b && jget(c, "counted")->b)
		return "counted but not supported";
	if (jtype_of(c, "unit") != J_STR)
		return "unit is not a string";
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (jtype_of(c, nums[i]) != J_NUM)
			return nums[i];
	if (jget(c, "counted")->b ? jtype_of(c, "scaled") != J_NUM
				  : jtype_of(c, "scaled") != J_NULL)
		return "scaled is not number (counted) / null (not counted)";
	return NULL;
}

/* The summary object: keys and types. */
static const char *check_summary(struct jval *s, int nr_counters)
{
	struct jval *c = jget(s, "counters");
	int i;

	if (!s || s->t != J_OBJ)
		return "not an object";
	/* "elapsed_stddev_ns" only under -r */
	if (s->n != 8 + (jget(s, "elapsed_stddev_ns") != NULL))
		return "summary does not have exactly 8 keys (9 under -r)";
	if (jtype_of(s, "runs") != J_NUM || jget(s, "runs")->num < 1)
		return "runs is not a number >= 1";
	if (jtype_of(s, "target") != J_STR || jtype_of(s, "backend") != J_STR)
		return "target/backend not strings";
	if (jtype_of(s, "elapsed_ns") != J_NUM || jget(s, "elapsed_ns")->num <= 0)
		return "elapsed_ns not a positive number";
	if (!c || c->t != J_ARR || c->n != nr_counters)
		return "counters is not an array of the expected length";
	for (i = 0; i < c->n; i++) {
		const char *why = check_counter(c->items[i]);

		if (why)
			return why;
	}
	return NULL;
}

#define CTR(s, i) (jget(s, "counters")->items[i])
#define CNUM(s, i, k) (jget(CTR(s, i), k)->num)

/* A shell loop that keeps a CPU busy for a while under TCG. */
#define BUSY "sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'"

/* ---- stock backend ----------------------------------------------------- */

TEST(text_workload)
{
	struct out o;
	char tail[256];
	double v;

	run(&o, "pevt stat -e task-clock,context-switches,page-faults -- " BUSY);
	ASSERT_EQ(0, o.status) TH_LOG("stderr: %s", o.err);
	EXPECT_NE(NULL, strstr(o.out, "\n Performance counter stats for 'sh -c i=0;"))
		TH_LOG("%s", o.out);
	ASSERT_TRUE(find_count(o.out, "msec", "task-clock", &v, tail, sizeof(tail)))
		TH_LOG("%s", o.out);
	EXPECT_GT(v, 0.0);
	/* Software events always run: no running percentage; perf's metric. */
	EXPECT_EQ(NULL, strchr(tail, '(')) TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(tail, " CPUs utilized")) TH_LOG("%s", o.out);
	ASSERT_TRUE(find_count(o.out, "", "context-switches", &v, NULL, 0)) TH_LOG("%s", o.out);
	ASSERT_TRUE(find_count(o.out, "", "page-faults", &v, NULL, 0)) TH_LOG("%s", o.out);
	EXPECT_GT(v, 10.0);	/* an exec faults in more than 10 pages */
	EXPECT_NE(NULL, strstr(o.out, " seconds time elapsed\n"));
	EXPECT_NE(NULL, strstr(o.out, " seconds user\n"));
	EXPECT_NE(NULL, strstr(o.out, " seconds sys\n"));
	EXPECT_STREQ("", o.err);
	out_free(&o);
}

TEST(exit_status)
{
	struct out o;

	run(&o, "pevt stat -e task-clock -- sh -c 'exit 3'");
	EXPECT_EQ(3, o.status);
	EXPECT_NE(NULL, strstr(o.out, "task-clock"));
	out_free(&o);
	run(&o, "pevt stat -e task-clock -- sh -c 'kill -TERM $$'");
	EXPECT_EQ(128 + SIGTERM, o.status);
	EXPECT_NE(NULL, strstr(o.out, "task-clock")) TH_LOG("counts are printed anyway");
	out_free(&o);
	run(&o, "pevt stat -e task-clock -- /nonexistent/cmd");
	EXPECT_EQ(127, o.status);
	EXPECT_NE(NULL, strstr(o.err, "cannot run '/nonexistent/cmd': No such file or directory"))
		TH_LOG("%s", o.err);
	EXPECT_STREQ("", o.out);
	out_free(&o);
}

/*
 * The loop runs in a child of the counted sh: only inherit sees it. It has to
 * cost several times the outer sh's own exec and exit: 3000 rounds on the
 * debug kernel (TCG) took 86 ms against 95 ms of sh (inherit 181.87 ms,
 * no-inherit 95.67 ms), under the 2x asked below.
 */
#define CHILD_LOOP "sh -c 'sh -c \"i=0; while [ \\$i -lt 30000 ]; do i=\\$((i+1)); done\"; true'"

TEST(inherit)
{
	struct out o;
	double with, without;

	run(&o, "pevt stat -e task-clock -- " CHILD_LOOP);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	ASSERT_TRUE(find_count(o.out, "msec", "task-clock", &with, NULL, 0)) TH_LOG("%s", o.out);
	out_free(&o);
	run(&o, "pevt stat --no-inherit -e task-clock -- " CHILD_LOOP);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	ASSERT_TRUE(find_count(o.out, "msec", "task-clock", &without, NULL, 0)) TH_LOG("%s", o.out);
	out_free(&o);
	EXPECT_GT(with, 2 * without) TH_LOG("inherit %.2f ms, no-inherit %.2f ms", with, without);
}

TEST(json_schema)
{
	struct jval *s;
	struct out o;
	const char *why;

	run(&o, "pevt --json stat -e '{task-clock,cs},cpu-clock' -- sh -c 'exit 5'");
	ASSERT_EQ(5, o.status) TH_LOG("%s", o.err);
	/* exactly one line */
	ASSERT_NE(NULL, strchr(o.out, '\n'));
	EXPECT_EQ('\0', strchr(o.out, '\n')[1]) TH_LOG("%s", o.out);
	s = jline(o.out);
	ASSERT_NE(NULL, s) TH_LOG("not JSON: %s", o.out);
	why = check_summary(s, 3);
	ASSERT_EQ(NULL, why) TH_LOG("%s: %s", why, o.out);
	EXPECT_STREQ("'sh -c exit 5'", jget(s, "target")->str);
	EXPECT_STREQ("stock", jget(s, "backend")->str);
	ASSERT_EQ(J_NUM, jtype_of(s, "exit_status"));
	EXPECT_EQ(5, (int)jget(s, "exit_status")->num);
	EXPECT_EQ(J_NUM, jtype_of(s, "user_ns"));
	EXPECT_EQ(J_NUM, jtype_of(s, "sys_ns"));
	EXPECT_STREQ("task-clock", jget(CTR(s, 0), "event")->str);
	EXPECT_STREQ("cs", jget(CTR(s, 1), "event")->str);
	EXPECT_STREQ("cpu-clock", jget(CTR(s, 2), "event")->str);
	EXPECT_STREQ("ns", jget(CTR(s, 0), "unit")->str);
	EXPECT_STREQ("", jget(CTR(s, 1), "unit")->str);
	EXPECT_EQ(0, (int)CNUM(s, 0, "group"));
	EXPECT_EQ(0, (int)CNUM(s, 1, "group"));
	EXPECT_EQ(1, (int)CNUM(s, 2, "group"));
	EXPECT_TRUE(jget(CTR(s, 0), "leader")->b);
	EXPECT_FALSE(jget(CTR(s, 1), "leader")->b);
	EXPECT_TRUE(jget(CTR(s, 2), "leader")->b);
	EXPECT_TRUE(jget(CTR(s, 0), "counted")->b);
	EXPECT_GT(CNUM(s, 0, "value"), 0);
	/* task-clock counts while enabled and running: value == enabled here */
	EXPECT_EQ(CNUM(s, 0, "enabled"), CNUM(s, 0, "running"));
	EXPECT_EQ(CNUM(s, 0, "value"), CNUM(s, 0, "scaled"));
	EXPECT_EQ(100.0, CNUM(s, 0, "pcnt_running"));
	EXPECT_EQ(J_NULL, jtype_of(CTR(s, 0), "pmu"));
	EXPECT_STREQ("", o.err);
	out_free(&o);

	/* stat's own -j is the same as the global --json */
	run(&o, "pevt stat -j -e cs -- true");
	ASSERT_EQ(0, o.status);
	s = jline(o.out);
	ASSERT_NE(NULL, s) TH_LOG("not JSON: %s", o.out);
	why = check_summary(s, 1);
	EXPECT_EQ(NULL, why) TH_LOG("%s: %s", why, o.out);
	out_free(&o);
}

TEST(json_interval)
{
	struct out o;
	char *line, *save = NULL;
	int intervals = 0, summaries = 0;
	double last = 0;

	run(&o, "pevt --json stat -I 200 -e cpu-clock -a -- sleep 1");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	for (line = strtok_r(o.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct jval *v = jline(line);

		ASSERT_NE(NULL, v) TH_LOG("not JSON: %s", line);
		if (jget(v, "interval")) {
			struct jval *c = jget(v, "counters");

			ASSERT_EQ(J_NUM, jtype_of(v, "interval"));
			EXPECT_GT(jget(v, "interval")->num, last);
			last = jget(v, "interval")->num;
			ASSERT_EQ(2, v->n);
			ASSERT_NE(NULL, c);
			ASSERT_EQ(1, c->n);
			EXPECT_EQ(NULL, check_counter(c->items[0]));
			EXPECT_EQ(0, summaries) TH_LOG("interval after the summary");
			intervals++;
		} else {
			EXPECT_EQ(NULL, check_summary(v, 1)) TH_LOG("%s", line);
			summaries++;
		}
	}
	EXPECT_GE(intervals, 4);
	EXPECT_LE(intervals, 7);
	EXPECT_EQ(1, summaries);
	out_free(&o);
}

TEST(csv)
{
	struct out o;
	char *line, *save = NULL;
	int n = 0;

	run(&o, "pevt stat -x ';' -e task-clock,cs -- true");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	for (line = strtok_r(o.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char f[8][64] = { { 0 } };
		char *p = line;
		int k = 0;

		while (k < 8) {
			char *sc = strchr(p, ';');
			size_t len = sc ? (size_t)(sc - p) : strlen(p);

			snprintf(f[k++], sizeof(f[0]), "%.*s", (int)len, p);
			if (!sc)
				break;
			p = sc + 1;
		}
		ASSERT_EQ(7, k) TH_LOG("'%s'", line);
		EXPECT_STREQ(n == 0 ? "msec" : "", f[1]);
		EXPECT_STREQ(n == 0 ? "task-clock" : "cs", f[2]);
		EXPECT_TRUE(isdigit((unsigned char)f[0][0])) TH_LOG("'%s'", f[0]);
		EXPECT_TRUE(isdigit((unsigned char)f[3][0])) TH_LOG("'%s'", f[3]);
		EXPECT_STREQ("100.00", f[4]);
		n++;
	}
	EXPECT_EQ(2, n);
	/* CSV has no header and no elapsed-time lines */
	out_free(&o);
}

TEST(interval_text)
{
	struct out o;
	char *line, *save = NULL, *copy;
	int n = 0;
	double last = 0, sum = 0, ncpu = nr_cpus();

	run(&o, "pevt stat -I 200 -e cpu-clock -a -- sleep 1");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	copy = strdup(o.out);
	EXPECT_EQ(NULL, strstr(copy, "seconds time elapsed")) TH_LOG("no totals under -I");
	line = strtok_r(o.out, "\n", &save);
	ASSERT_NE(NULL, line);
	EXPECT_STREQ("#           time             counts unit events", line);
	for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		double ts, v;
		char unit[16], name[64];

		ASSERT_EQ(4, sscanf(line, " %lf %lf %15s %63s", &ts, &v, unit, name))
			TH_LOG("'%s'", line);
		EXPECT_STREQ("msec", unit);
		EXPECT_STREQ("cpu-clock", name);
		EXPECT_GT(ts, last);
		EXPECT_GT(v, 0.0) TH_LOG("'%s'", line);
		sum += v;
		last = ts;
		n++;
	}
	/*
	 * One line per full 200 ms interval plus the partial last one. The
	 * command's own run time stretches past 1 s on slow (debug) kernels,
	 * so the count is judged against the last timestamp, not against 1 s.
	 */
	EXPECT_GE(last, 1.0);
	EXPECT_GE(n, 5);
	EXPECT_GE(n, (int)(last / 0.2)) TH_LOG("%s", copy);
	EXPECT_LE(n, (int)(last / 0.2) + 1) TH_LOG("%s", copy);
	/*
	 * The lines are deltas: they add up to every CPU counting all the
	 * time (single intervals jitter too much under TCG on a busy host).
	 */
	EXPECT_GT(sum, 0.8 * 1000 * last * ncpu) TH_LOG("%s", copy);
	EXPECT_LT(sum, 1.2 * 1000 * last * ncpu) TH_LOG("%s", copy);
	free(copy);
	out_free(&o);
}

TEST(cpu_list)
{
	struct out o;
	double v, ms;

	run(&o, "pevt stat -C 0 -e cpu-clock -- sleep 0.5");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.out, "Performance counter stats for 'CPU(s) 0':"));
	ASSERT_TRUE(find_count(o.out, "msec", "cpu-clock", &v, NULL, 0)) TH_LOG("%s", o.out);
	ms = elapsed_ms(o.out);
	ASSERT_GE(ms, 450.0) TH_LOG("%s", o.out);
	/* one CPU, counted all the time it was enabled: about the elapsed time */
	EXPECT_GT(v, 0.8 * ms) TH_LOG("%s", o.out);
	EXPECT_LT(v, 1.2 * ms) TH_LOG("%s", o.out);
	out_free(&o);

	run(&o, "pevt stat -C 0-999 -e cpu-clock -- true");
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "cannot open event 'cpu-clock' on CPU")) TH_LOG("%s", o.err);
	out_free(&o);
	run(&o, "pevt stat -C 1-x -e cpu-clock -- true");
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "bad CPU list '1-x'")) TH_LOG("%s", o.err);
	out_free(&o);
}

TEST(pid_target)
{
	struct out o;
	char tail[64];
	pid_t pid;
	double v;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		/*
		 * The sleep covers pevt stat's start-up before it attaches:
		 * 0.3 s was too short on the debug kernel under CI's TCG.
		 */
		execlp("sh", "sh", "-c", "sleep 1.5; " "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done", NULL);
		_exit(127);
	}
	/* -p runs until the process exits */
	run(&o, "pevt stat -p %d -e task-clock,cs", pid);
	waitpid(pid, NULL, 0);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	snprintf(tail, sizeof(tail), "for process id '%d':", pid);
	EXPECT_NE(NULL, strstr(o.out, tail)) TH_LOG("%s", o.out);
	ASSERT_TRUE(find_count(o.out, "msec", "task-clock", &v, NULL, 0)) TH_LOG("%s", o.out);
	EXPECT_GT(v, 1.0);
	EXPECT_EQ(NULL, strstr(o.out, "seconds user")) TH_LOG("no workload, no rusage");
	out_free(&o);

	run(&o, "pevt stat -p 999999 -e cs");
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "no such process: 999999")) TH_LOG("%s", o.err);
	out_free(&o);
}

TEST(tracepoint)
{
	struct out o;
	double v;

	if (access("/sys/kernel/tracing/events/raw_syscalls/sys_enter/id", R_OK))
		SKIP(return, "tracefs or raw_syscalls tracepoints absent");
	run(&o, "pevt stat -e raw_syscalls:sys_enter -- sh -c 'for i in 1 2 3 4 5; do echo $i; done >/dev/null'");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	ASSERT_TRUE(find_count(o.out, "", "raw_syscalls:sys_enter", &v, NULL, 0)) TH_LOG("%s", o.out);
	EXPECT_GT(v, 20.0);	/* exec, mmaps, writes */
	out_free(&o);
}

TEST(event_errors)
{
	static const struct { const char *list, *want; } t[] = {
		{ "task-clock,bogus", "event syntax error at position 11 ('bogus'): unknown event 'bogus'" },
		{ "{task-clock,cs", "at position 0 ('{'): unbalanced '{'" },
		{ "cs}", "at position 2 ('}'): unbalanced '}'" },
		{ "nopmu/x=1/", "at position 0 ('nopmu'): unknown PMU 'nopmu'" },
		{ "cs:p", "at position 3 ('p'): unsupported modifier 'p'" },
		{ "raw_syscalls:nosuch", "unknown tracepoint 'raw_syscalls:nosuch'" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct out o;

		if (strchr(t[i].list, ':') && access("/sys/kernel/tracing/events", F_OK))
			continue;	/* needs tracefs */
		run(&o, "pevt stat -e '%s' -- true", t[i].list);
		EXPECT_EQ(1, o.status) TH_LOG("%s", t[i].list);
		EXPECT_NE(NULL, strstr(o.err, t[i].want)) TH_LOG("got: %s", o.err);
		EXPECT_STREQ("", o.out);
		out_free(&o);
	}
}

TEST(usage_errors)
{
	struct out o;

	run(&o, "pevt stat -e cs");
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "nothing to count")) TH_LOG("%s", o.err);
	out_free(&o);
	run(&o, "pevt stat --backend nosuch -e cs -- true");
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "unknown backend 'nosuch'")) TH_LOG("%s", o.err);
	out_free(&o);
	run(&o, "pevt stat -I 0 -e cs -- true");
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "bad interval '0'")) TH_LOG("%s", o.err);
	out_free(&o);
	/* under --json, errors are one JSON object on stderr, stdout stays empty */
	run(&o, "pevt --json stat -e bogus -- true");
	EXPECT_EQ(1, o.status);
	EXPECT_STREQ("", o.out);
	EXPECT_EQ(0, strncmp(o.err, "{\"error\":\"event syntax error at position 0", 42))
		TH_LOG("%s", o.err);
	out_free(&o);
	run(&o, "pevt stat --help");
	EXPECT_EQ(0, o.status);
	EXPECT_NE(NULL, strstr(o.err, "--interval-print MS"));
	out_free(&o);
}

/* ---- multiplexing on the vPMU (stock perf core rotates it) ------------- */

/* First alias under the vPMU's events/, as "pevt_vpmu/<alias>/". */
static bool vpmu_event(char *buf, size_t size)
{
	DIR *d = opendir("/sys/bus/event_source/devices/pevt_vpmu/events");
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && !strchr(de->d_name, '.')) {
			snprintf(buf, size, "pevt_vpmu/%.*s/", (int)(size > 12 ? size - 12 : 0), de->d_name);
			found = true;
			break;
		}
	closedir(d);
	return found;
}

TEST(multiplexed_vpmu)
{
	char ev[128], list[1024] = "";
	struct jval *s;
	struct out o;
	int i, n = 12;	/* more groups than any default slot count */

	if (!vpmu_event(ev, sizeof(ev)))
		SKIP(return, "pevt_vpmu PMU not registered");
	for (i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i ? "," : "", ev);
	run(&o, "pevt stat -e '%s' -- " BUSY, list);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	/* text: every line ends in "  (xx.xx%)" with xx < 100 */
	{
		char *p = o.out;
		int pct_lines = 0;

		while ((p = strstr(p, ev))) {
			double pct;

			p += strlen(ev);
			if (sscanf(p, " (%lf%%)", &pct) == 1 && pct < 100.0)
				pct_lines++;
		}
		EXPECT_EQ(n, pct_lines) TH_LOG("%s", o.out);
	}
	out_free(&o);
	run(&o, "pevt --json stat -e '%s' -- " BUSY, list);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	s = jline(o.out);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(NULL, check_summary(s, n));
	for (i = 0; i < n; i++) {
		if (!jget(CTR(s, i), "counted")->b)
			continue;
		EXPECT_LT(CNUM(s, i, "running"), CNUM(s, i, "enabled"));
		EXPECT_GE(CNUM(s, i, "scaled"), CNUM(s, i, "value"));
		EXPECT_LT(CNUM(s, i, "pcnt_running"), 100.0);
	}
	out_free(&o);
}

/* ---- the pevt backend (/dev/pevt) ------------------------------------ */

#define NEED_PEVT() do {						\
	if (access("/dev/pevt", F_OK))					\
		SKIP(return, "/dev/pevt absent (module without the event core)"); \
} while (0)

TEST(pevt_backend_task_clock)
{
	struct jval *s;
	struct out o;
	char tail[64];
	double v;

	NEED_PEVT();
	run(&o, "pevt stat --backend pevt --no-inherit -e task-clock -- " BUSY);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	ASSERT_TRUE(find_count(o.out, "msec", "task-clock", &v, tail, sizeof(tail)))
		TH_LOG("%s", o.out);
	EXPECT_GT(v, 1.0);
	EXPECT_EQ(NULL, strchr(tail, '(')) TH_LOG("%s", o.out);
	out_free(&o);

	run(&o, "pevt --json stat -b pevt -i -e '{task-clock,cpu-clock}' -- " BUSY);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	s = jline(o.out);
	ASSERT_NE(NULL, s) TH_LOG("%s", o.out);
	ASSERT_EQ(NULL, check_summary(s, 2)) TH_LOG("%s", o.out);
	EXPECT_STREQ("pevt", jget(s, "backend")->str);
	EXPECT_GT(CNUM(s, 0, "value"), 1e6);
	EXPECT_GT(CNUM(s, 1, "value"), 1e6);
	EXPECT_EQ(CNUM(s, 0, "enabled"), CNUM(s, 0, "running"));
	EXPECT_TRUE(jget(CTR(s, 1), "counted")->b);
	EXPECT_FALSE(jget(CTR(s, 1), "leader")->b);
	out_free(&o);
}

TEST(pevt_backend_cpu_clock)
{
	struct out o;
	double v, ms, ncpu = nr_cpus();

	NEED_PEVT();
	run(&o, "pevt stat --backend pevt -a -e cpu-clock -- sleep 0.5");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.out, "Performance counter stats for 'system wide':"));
	ASSERT_TRUE(find_count(o.out, "msec", "cpu-clock", &v, NULL, 0)) TH_LOG("%s", o.out);
	ms = elapsed_ms(o.out);
	ASSERT_GE(ms, 450.0) TH_LOG("%s", o.out);
	/* every CPU counts all the time: ncpu * elapsed */
	EXPECT_GT(v, 0.8 * ms * ncpu) TH_LOG("%s", o.out);
	EXPECT_LT(v, 1.2 * ms * ncpu) TH_LOG("%s", o.out);
	out_free(&o);
}

/*
 * inherit: a shell pipeline (about 20 processes) counted by both backends
 * in two runs of the same script.  Most of the tree's system calls are a
 * deterministic count (dd's 1-byte reads and writes in children and a
 * grandchild): within 1%.  A shell's own calls are not (wait4 and signal
 * returns depend on when its children exit: the first version of this
 * workload made only 263 calls, stock and pevt 1 apart locally, and it
 * failed in CI on all three kernels), so they must stay a small part of
 * the total.  task-clock differs from run to run
 * (host load) and by pevt's switch-in accounting (Documentation/
 * inherit.md): reported only; inherit_test compares it within one run.
 */
#define PIPELINE "sh -c 'i=0; while [ $i -lt 300 ]; do i=$((i+1)); done; " \
	"echo abc | cat | cat | wc -c > /dev/null; " \
	"for j in 1 2 3 4 5; do ( echo $j > /dev/null; " \
	"dd if=/dev/zero of=/dev/null bs=1 count=150 2>/dev/null ); done; " \
	"sh -c \"k=0; while [ \\$k -lt 300 ]; do k=\\$((k+1)); done; " \
	"dd if=/dev/zero of=/dev/null bs=1 count=400 2>/dev/null\"; true'"

TEST(pevt_backend_inherit)
{
	static const char *const backend[] = { "stock", "pevt" };
	double sys[2], clk[2];
	struct jval *s;
	struct out o;
	char cmd[1024];

	NEED_PEVT();
	if (access("/sys/bus/event_source/devices/pevt_vpmu", F_OK))
		SKIP(return, "no pevt_vpmu PMU");
	for (int b = 0; b < 2; b++) {
		snprintf(cmd, sizeof(cmd),
			 "pevt --json stat -b %s -e '{pevt_vpmu/syscalls/,task-clock}' -- %s",
			 backend[b], PIPELINE);
		run(&o, cmd);
		ASSERT_EQ(0, o.status) TH_LOG("%s: %s", backend[b], o.err);
		s = jline(o.out);
		ASSERT_NE(NULL, s) TH_LOG("%s", o.out);
		ASSERT_EQ(NULL, check_summary(s, 2)) TH_LOG("%s", o.out);
		sys[b] = CNUM(s, 0, "value");
		clk[b] = CNUM(s, 1, "value");
		EXPECT_EQ(CNUM(s, 0, "enabled"), CNUM(s, 0, "running"));
		out_free(&o);
	}
	TH_LOG("syscalls stock %.0f pevt %.0f; task-clock ns stock %.0f pevt %.0f",
	       sys[0], sys[1], clk[0], clk[1]);
	EXPECT_GT(sys[0], 2000.0);	/* 2 x (5 x 150 + 400) from dd alone */
	EXPECT_LE(fabs(sys[1] - sys[0]), sys[0] / 100);
	/* Two runs on a shared host: 278 ms vs 917 ms was seen. */
	EXPECT_GT(clk[0], 0.0);
	EXPECT_GT(clk[1], 0.0);

	/* Without inherit the tree's children are missing: far fewer. */
	snprintf(cmd, sizeof(cmd),
		 "pevt --json stat -b pevt -i -e '{pevt_vpmu/syscalls/,task-clock}' -- %s",
		 PIPELINE);
	run(&o, cmd);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	s = jline(o.out);
	ASSERT_NE(NULL, s) TH_LOG("%s", o.out);
	EXPECT_LT(CNUM(s, 0, "value") * 10, sys[0] * 8);
	out_free(&o);
}

/*
 * perf stat's answer to an event the machine lacks: <not supported>, the
 * other events counted, the workload's exit status.  The TCG guest has no
 * hardware PMU, so cycles is such an event (with a PMU it must count).
 */
TEST(not_supported)
{
	bool hw = !access("/sys/bus/event_source/devices/cpu", F_OK);
	char tail[256];
	struct jval *s;
	struct out o;
	double v;

	run(&o, "pevt stat -e cycles,task-clock -- true");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	if (hw) {
		EXPECT_TRUE(find_count(o.out, "", "cycles", &v, NULL, 0)) TH_LOG("%s", o.out);
	} else {
		EXPECT_NE(NULL, strstr(o.out, "\n   <not supported>      cycles ")) TH_LOG("%s", o.out);
	}
	ASSERT_TRUE(find_count(o.out, "msec", "task-clock", &v, tail, sizeof(tail)))
		TH_LOG("%s", o.out);
	EXPECT_GT(v, 0.0);
	EXPECT_STREQ("", o.err);
	out_free(&o);

	run(&o, "pevt --json stat -e cycles,task-clock -- sh -c 'exit 4'");
	ASSERT_EQ(4, o.status) TH_LOG("%s", o.err);
	s = jline(o.out);
	ASSERT_NE(NULL, s) TH_LOG("%s", o.out);
	ASSERT_EQ(NULL, check_summary(s, 2)) TH_LOG("%s", o.out);
	EXPECT_EQ(hw, jget(CTR(s, 0), "supported")->b);
	EXPECT_TRUE(jget(CTR(s, 1), "supported")->b);
	EXPECT_TRUE(jget(CTR(s, 1), "counted")->b);
	out_free(&o);

	/* a group whose leader is unsupported fails, as in perf */
	if (!hw) {
		run(&o, "pevt stat -e '{cycles,task-clock}' -- true");
		EXPECT_EQ(1, o.status);
		EXPECT_NE(NULL, strstr(o.err, "cannot open event 'cycles'")) TH_LOG("%s", o.err);
		out_free(&o);
	}
}

/* -r N: the mean of N runs with perf's "( +- N% )" and elapsed +- lines. */
TEST(repeat)
{
	struct jval *s;
	struct out o;
	double v;

	run(&o, "pevt stat -r 3 -e task-clock,page-faults -- " BUSY);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.out, "Performance counter stats for 'sh -c i=0;"))
		TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(o.out, " (3 runs):\n")) TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(o.out, " seconds time elapsed")) TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(o.out, " +- ")) TH_LOG("%s", o.out);
	EXPECT_EQ(NULL, strstr(o.out, "seconds user")) TH_LOG("rusage is of one run");
	ASSERT_TRUE(find_count(o.out, "msec", "task-clock", &v, NULL, 0)) TH_LOG("%s", o.out);
	EXPECT_GT(v, 1.0);
	out_free(&o);

	run(&o, "pevt --json stat -r 4 -e task-clock -- true");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	s = jline(o.out);
	ASSERT_NE(NULL, s) TH_LOG("%s", o.out);
	ASSERT_EQ(NULL, check_summary(s, 1)) TH_LOG("%s", o.out);
	EXPECT_EQ(4, (int)jget(s, "runs")->num);
	EXPECT_EQ(J_NUM, jtype_of(CTR(s, 0), "stddev"));
	EXPECT_EQ(J_NUM, jtype_of(s, "elapsed_stddev_ns"));
	out_free(&o);

	run(&o, "pevt stat -r 2 -a -e cpu-clock");
	EXPECT_EQ(1, o.status);
	EXPECT_NE(NULL, strstr(o.err, "-r needs a COMMAND")) TH_LOG("%s", o.err);
	out_free(&o);
}

/* The line of `pevt list` output naming @name, or NULL. */
static char *list_line(const char *out, const char *name, char *buf, size_t size)
{
	const char *p = out;
	size_t n = strlen(name);

	while ((p = strstr(p, name))) {
		const char *e = strchr(p, '\n');

		if (p >= out + 2 && p[-1] == ' ' && p[-2] == ' ' && p[n] == ' ') {
			snprintf(buf, size, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
			return buf;
		}
		p += n;
	}
	return NULL;
}

/*
 * pevt list: what it says each backend opens is what opens.  task-clock
 * opens on both; cycles on neither (no PMU under TCG); the vPMU's aliases
 * and format terms; raw_syscalls:sys_enter on both.  pevt list probes
 * every event it lists: past the harness's 30 s on a slow host with the
 * debug kernel, so 300 s.
 */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, list, 300)
{
	char buf[256], ev[128];
	struct out o;

	run(&o, "pevt list");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	ASSERT_NE(NULL, list_line(o.out, "task-clock", buf, sizeof(buf))) TH_LOG("%s", o.out);
	EXPECT_NE(NULL, strstr(buf, "[Software event]")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, access("/dev/pevt", F_OK) ? " stock" : " stock,pevt"))
		TH_LOG("%s", buf);
	ASSERT_NE(NULL, list_line(o.out, "cpu-cycles OR cycles", buf, sizeof(buf)));
	if (access("/sys/bus/event_source/devices/cpu", F_OK))
		EXPECT_EQ(0, strcmp(buf + strlen(buf) - 2, " -")) TH_LOG("%s", buf);
	if (vpmu_event(ev, sizeof(ev))) {
		EXPECT_NE(NULL, list_line(o.out, ev, buf, sizeof(buf))) TH_LOG("%s", o.out);
		EXPECT_NE(NULL, strstr(buf, "[Kernel PMU event]")) TH_LOG("%s", buf);
		EXPECT_NE(NULL, strstr(buf, "stock")) TH_LOG("%s", buf);
		EXPECT_NE(NULL, strstr(o.out, "pevt_vpmu format terms")) TH_LOG("%s", o.out);
		EXPECT_NE(NULL, strstr(o.out, "    source               config:0-7\n"))
			TH_LOG("%s", o.out);
	}
	if (!access("/sys/kernel/tracing/events/raw_syscalls", F_OK)) {
		EXPECT_NE(NULL, list_line(o.out, "raw_syscalls:sys_enter", buf, sizeof(buf)));
		EXPECT_NE(NULL, strstr(buf, "[Tracepoint event]")) TH_LOG("%s", buf);
	}
	out_free(&o);

	/* tracepoints are probed when a filter picks them */
	if (!access("/sys/kernel/tracing/events/raw_syscalls", F_OK)) {
		run(&o, "pevt list 'raw_syscalls:*'");
		ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
		EXPECT_NE(NULL, list_line(o.out, "raw_syscalls:sys_enter", buf, sizeof(buf)));
		EXPECT_NE(NULL, strstr(buf, access("/dev/pevt", F_OK) ? " stock" : " stock,pevt"))
			TH_LOG("%s", buf);
		EXPECT_EQ(NULL, strstr(o.out, "task-clock")) TH_LOG("%s", o.out);
		out_free(&o);
	}

	/* a filter; and every listed name is one `pevt stat -e` takes */
	run(&o, "pevt list --no-probe -- '*-clock'");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, list_line(o.out, "cpu-clock", buf, sizeof(buf))) TH_LOG("%s", o.out);
	EXPECT_EQ(NULL, list_line(o.out, "page-faults OR faults", buf, sizeof(buf)))
		TH_LOG("%s", o.out);
	out_free(&o);
	run(&o, "pevt --json list clock");
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, jline(o.out)) TH_LOG("not JSON: %.300s", o.out);
	out_free(&o);
}

TEST_HARNESS_MAIN
