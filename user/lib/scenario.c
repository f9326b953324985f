// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Fairness scenario files: a line-based text format (see scenario.h),
 * parsed strictly, every error naming its file and line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pevt/scenario.h>

static const char * const src_names[] = {
	[PEVT_SRC_CPU_NS]	= "cpu_ns",
	[PEVT_SRC_SYSCALLS]	= "syscalls",
	[PEVT_SRC_CSWITCH]	= "cswitch",
	[PEVT_SRC_TASK_CLOCK]	= "task-clock",
	[PEVT_SRC_CPU_CLOCK]	= "cpu-clock",
};

static const char * const wl_names[] = {
	[PEVT_WL_SPIN]		= "spin",
	[PEVT_WL_SYSCALLS]	= "syscalls",
	[PEVT_WL_PINGPONG]	= "pingpong",
	[PEVT_WL_PHASED]	= "phased",
	[PEVT_WL_RING]		= "ring",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *pevt_scen_src__name(enum pevt_scen_src src)
{
	return (unsigned int)src < ARRAY_SIZE(src_names) ? src_names[src] : "?";
}

const char *pevt_scen_workload__name(enum pevt_scen_workload wl)
{
	return (unsigned int)wl < ARRAY_SIZE(wl_names) ? wl_names[wl] : "?";
}

int pevt_scen_group__slots(const struct pevt_scen_group *g)
{
	int i, n = 0;

	for (i = 0; i < g->nr_members; i++)
		n += g->src[i] <= PEVT_SRC_CSWITCH;
	return n;
}

struct pctx {
	const char *file;
	int line;
	char *err;
	size_t errsz;
};

static int __attribute__((format(printf, 2, 3)))
fail(struct pctx *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errsz, "%s:%d: ", p->file, p->line);
	va_list ap;

	if (n >= 0 && (size_t)n < p->errsz) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errsz - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int lookup(const char * const *names, size_t nr, const char *s)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

static int parse_group(struct pctx *p, struct pevt_scenario *sc, char **tok,
		       int ntok)
{
	struct pevt_scen_group *g;
	char *save = NULL, *s;
	int i;

	if (ntok < 4)
		return fail(p, "'group' needs: cpu|task flexible|pinned SRC[,SRC...] [mask=0xN]");
	if (sc->nr_groups >= PEVT_SCEN_MAX_GROUPS)
		return fail(p, "more than %d groups", PEVT_SCEN_MAX_GROUPS);
	g = &sc->groups[sc->nr_groups];
	memset(g, 0, sizeof(*g));
	g->line = p->line;
	if (!strcmp(tok[1], "task"))
		g->task = true;
	else if (strcmp(tok[1], "cpu"))
		return fail(p, "group kind '%s': want cpu or task", tok[1]);
	if (!strcmp(tok[2], "pinned"))
		g->pinned = true;
	else if (strcmp(tok[2], "flexible"))
		return fail(p, "'%s': want flexible or pinned", tok[2]);
	for (s = strtok_r(tok[3], ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		int src = lookup(src_names, ARRAY_SIZE(src_names), s);

		if (src < 0)
			return fail(p, "unknown source '%s' (cpu_ns, syscalls, cswitch, task-clock, cpu-clock)", s);
		if (g->nr_members >= PEVT_SCEN_MAX_MEMBERS)
			return fail(p, "more than %d members in a group", PEVT_SCEN_MAX_MEMBERS);
		g->src[g->nr_members++] = src;
	}
	if (!g->nr_members)
		return fail(p, "group without members");
	for (i = 4; i < ntok; i++) {
		char *end;

		if (strncmp(tok[i], "mask=", 5))
			return fail(p, "unexpected '%s' after the sources", tok[i]);
		errno = 0;
		g->mask = strtoull(tok[i] + 5, &end, 0);
		if (errno || *end || end == tok[i] + 5 || !g->mask)
			return fail(p, "bad slot mask '%s'", tok[i] + 5);
		if (!pevt_scen_group__slots(g))
			return fail(p, "mask on a software-only group");
	}
	sc->nr_groups++;
	return 0;
}

static int parse_line(struct pctx *p, struct pevt_scenario *sc, char *line)
{
	char *tok[16], *save = NULL, *s, *end;
	int ntok = 0;
	long v;
	double d;

	s = strchr(line, '#');
	if (s)
		*s = '\0';
	for (s = strtok_r(line, " \t\r", &save); s; s = strtok_r(NULL, " \t\r", &save)) {
		if (ntok == (int)ARRAY_SIZE(tok))
			return fail(p, "too many words");
		tok[ntok++] = s;
	}
	if (!ntok)
		return 0;
	if (!strcmp(tok[0], "group"))
		return parse_group(p, sc, tok, ntok);
	if (strcmp(tok[0], "name") && strcmp(tok[0], "slots") &&
	    strcmp(tok[0], "duration") && strcmp(tok[0], "workload"))
		return fail(p, "unknown keyword '%s' (name, slots, duration, workload, group)", tok[0]);
	if (ntok != 2)
		return fail(p, "'%s' takes one value, %d given", tok[0], ntok - 1);
	if (!strcmp(tok[0], "name")) {
		if (strlen(tok[1]) >= sizeof(sc->name))
			return fail(p, "name longer than %zu", sizeof(sc->name) - 1);
		strcpy(sc->name, tok[1]);
	} else if (!strcmp(tok[0], "slots")) {
		errno = 0;
		v = strtol(tok[1], &end, 10);
		if (errno || *end || v < 1 || v > 64)
			return fail(p, "slots '%s': want 1..64", tok[1]);
		sc->slots = v;
	} else if (!strcmp(tok[0], "duration")) {
		d = strtod(tok[1], &end);
		if (*end || !(d >= 0.1 && d <= 3600))
			return fail(p, "duration '%s': want 0.1..3600 seconds", tok[1]);
		sc->duration = d;
	} else if (!strcmp(tok[0], "workload")) {
		v = lookup(wl_names, ARRAY_SIZE(wl_names), tok[1]);
		if (v < 0)
			return fail(p, "unknown workload '%s' (spin, syscalls, pingpong, phased, ring)", tok[1]);
		sc->workload = v;
	}
	return 0;
}

int pevt_scenario__parse(struct pevt_scenario *sc, const char *text,
			 const char *file, char *err, size_t errsz)
{
	struct pctx p = { .file = file, .line = 0, .err = err, .errsz = errsz };
	const char *s = text;
	int ret = 0, i;

	memset(sc, 0, sizeof(*sc));
	sc->slots = 2;
	sc->duration = 3;
	sc->workload = PEVT_WL_SPIN;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char line[512];

		p.line++;
		if (len >= sizeof(line))
			return fail(&p, "line longer than %zu characters", sizeof(line) - 1);
		memcpy(line, s, len);
		line[len] = '\0';
		ret = parse_line(&p, sc, line);
		if (ret)
			return ret;
		s += len + (nl ? 1 : 0);
	}
	/* Whole-file checks name the line of the offending group. */
	for (i = 0; i < sc->nr_groups; i++) {
		struct pevt_scen_group *g = &sc->groups[i];
		int need = pevt_scen_group__slots(g);

		p.line = g->line;
		if (need > sc->slots)
			return fail(&p, "group needs %d slots, the scenario has %d", need, sc->slots);
		if (g->mask && (sc->slots < 64 && (g->mask >> sc->slots)))
			return fail(&p, "mask 0x%llx names slots beyond %d", (unsigned long long)g->mask, sc->slots);
	}
	p.line = 0;
	if (!sc->nr_groups)
		return fail(&p, "no group");
	return 0;
}

int pevt_scenario__load(struct pevt_scenario *sc, const char *path,
			char *err, size_t errsz)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return ret;
	}
	buf = malloc(65537);
	if (!buf) {
		fclose(f);
		snprintf(err, errsz, "%s: out of memory", path);
		return -ENOMEM;
	}
	n = fread(buf, 1, 65537, f);
	fclose(f);
	if (n > 65536) {
		free(buf);
		snprintf(err, errsz, "%s: larger than 64 KiB", path);
		return -EFBIG;
	}
	buf[n] = '\0';
	if (strlen(buf) != (size_t)n) {
		free(buf);
		snprintf(err, errsz, "%s: contains a NUL byte", path);
		return -EINVAL;
	}
	ret = pevt_scenario__parse(sc, buf, path, err, errsz);
	free(buf);
	return ret;
}

/* Built-in scenarios, in the file format (Documentation/fairness.md). */
static const struct {
	const char *name, *text;
} builtins[] = {
	{ "basic", "name basic\nslots 2\nworkload spin\n"
	  "group task flexible cpu_ns\ngroup task flexible cpu_ns\n"
	  "group task flexible cpu_ns\n" },
	{ "starvation", "name starvation\nslots 2\nworkload spin\n"
	  "group cpu flexible cpu_ns\ngroup cpu flexible cpu_ns\n"
	  "group task flexible cpu_ns\ngroup task flexible cpu_ns\n" },
	{ "pinned-fill", "name pinned-fill\nslots 2\nworkload spin\n"
	  "group cpu pinned cpu_ns\ngroup cpu pinned cpu_ns\n"
	  "group task flexible cpu_ns\ngroup task flexible cpu_ns\n" },
	{ "mixed-sizes", "name mixed-sizes\nslots 2\nworkload spin\n"
	  "group cpu flexible cpu_ns\ngroup cpu flexible cpu_ns\n"
	  "group task flexible cpu_ns,syscalls\n" },
	{ "constraints", "name constraints\nslots 2\nworkload spin\n"
	  "group cpu flexible cpu_ns mask=0x1\ngroup cpu flexible cpu_ns mask=0x1\n"
	  "group task flexible cpu_ns mask=0x2\n" },
	{ "software", "name software\nslots 2\nworkload spin\n"
	  "group cpu flexible cpu_ns\ngroup cpu flexible cpu_ns\ngroup cpu flexible cpu_ns\n"
	  "group task flexible task-clock\ngroup cpu flexible cpu-clock\n" },
	{ "many-tasks", "name many-tasks\nslots 2\nworkload pingpong\n"
	  "group cpu flexible cswitch\n"
	  "group task flexible cswitch\ngroup task flexible cpu_ns\n"
	  "group task flexible syscalls\n" },
	{ "ring-tasks", "name ring-tasks\nslots 2\nworkload ring\n"
	  "group cpu flexible cswitch\n"
	  "group task flexible cpu_ns\ngroup task flexible cpu_ns\n"
	  "group task flexible cpu_ns\ngroup task flexible cpu_ns\n"
	  "group task flexible syscalls\ngroup task flexible syscalls\n"
	  "group task flexible syscalls\ngroup task flexible syscalls\n" },
	{ "phased", "name phased\nslots 2\nworkload phased\n"
	  "group task flexible cpu_ns\ngroup task flexible syscalls\n"
	  "group task flexible cswitch\n" },
};

const char *pevt_scenario__builtin(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(builtins); i++)
		if (!strcmp(builtins[i].name, name))
			return builtins[i].text;
	return NULL;
}

const char *pevt_scenario__builtin_name(int i)
{
	return i >= 0 && (size_t)i < ARRAY_SIZE(builtins) ? builtins[i].name : NULL;
}
