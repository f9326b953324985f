/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks of a perf.data written by `pevt record`, with stock perf as the
 * reader (record_test on the host and in the guest).
 */
#ifndef PEVT_SELFTESTS_RECORD_CHECK_H
#define PEVT_SELFTESTS_RECORD_CHECK_H

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_cmd.h"

/*
 * In a kselftest harness test, whose rest cannot run here: skipped with
 * the reason given, unless an EXPECT before it failed.  SKIP() alone
 * marks the test passed, which would report that failure as a skip.
 */
#define SKIP_REST(...) do {						\
	if (!_metadata->passed)						\
		return;							\
	SKIP(return, __VA_ARGS__);					\
} while (0)

/*
 * The drains of record_drain.h, a variant of fixture @f each, its
 * variant->drain what follows --drain= on pevt record's command line
 * (pin: --drain=write with --pin-readers).  Expanded where the test has
 * included kselftest_harness.h.
 */
#define RECORD_DRAIN_VARIANTS(f)						\
	FIXTURE_VARIANT(f) { const char *drain; };				\
	FIXTURE_VARIANT_ADD(f, write) { .drain = "write" };			\
	FIXTURE_VARIANT_ADD(f, uring) { .drain = "uring" };			\
	FIXTURE_VARIANT_ADD(f, threads) { .drain = "threads" };			\
	/* --pin-readers: per-CPU reader threads copy the rings out */	\
	FIXTURE_VARIANT_ADD(f, pin) { .drain = "write --pin-readers" }

/* "(N samples, M lost)" from pevt record's summary line; -1 if absent. */
static inline long long rec_summary(const char *err, long long *lost)
{
	const char *p = strstr(err, "[ pevt record: Captured");
	long long s, l;

	if (!p || !(p = strchr(p, '(')) || sscanf(p, "(%lld samples, %lld lost)", &s, &l) != 2)
		return -1;
	if (lost)
		*lost = l;
	return s;
}

static inline long long count_lines(const char *s)
{
	long long n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* perf's stderr, without what perf prints even for its own files. */
static inline bool perf_quiet(const char *err)
{
	const char *l = err;

	while (l && *l) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);

		/* perf report --stdio's hint about --header. */
		if (len && strncmp(l, "# To display the perf.data header info", 38)) {
			fprintf(stderr, "# perf said: %.*s\n", (int)len, l);
			return false;
		}
		l = nl ? nl + 1 : NULL;
	}
	return true;
}

/* `perf report -D --disable-order @input`: the records in file order. */
static inline FILE *rec_dump_open(const char *input)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "perf report -D --disable-order %s 2>/dev/null", input);
	return popen(cmd, "r");
}

/*
 * Weisbecker's guarantee, on the records in file order as `perf report -D
 * --disable-order` dumps them (plain -D dumps them sorted): every timestamped record after round k's FINISHED_ROUND is
 * no older than the newest record of round k - 1 and before.  Returns
 * the number of violations (-1 if perf failed), *@rounds the rounds.
 */
static inline long rec_round_violations(const char *input, long *rounds, long *timed)
{
	uint64_t cur_max = 0, prev_max = 0, flushed = 0;
	FILE *f = rec_dump_open(input);
	char line[1024];
	long bad = 0;

	*rounds = 0;
	*timed = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *rec = strstr(line, ": PERF_RECORD_"), *off;
		unsigned long long a, b;
		uint64_t t;
		int n;

		if (!rec || line[0] == ' ' || line[0] == '.')
			continue;
		if (strstr(rec, "PERF_RECORD_FINISHED_ROUND")) {
			/* A reader may now flush what is older than prev_max. */
			flushed = prev_max > flushed ? prev_max : flushed;
			prev_max = cur_max > prev_max ? cur_max : prev_max;
			(*rounds)++;
			continue;
		}
		off = strstr(line, " 0x");
		if (!off || off > rec)
			continue;
		*off = '\0';
		n = sscanf(line, "%llu %llu", &a, &b);
		t = n == 2 ? b : n == 1 ? a : 0;	/* "[cpu] time 0xoff" */
		if (!t)
			continue;
		(*timed)++;
		if (t < flushed)
			bad++;
		if (t > cur_max)
			cur_max = t;
	}
	if (pclose(f))
		return -1;
	return bad;
}

/*
 * The call paths of @input as @report (CG_PERF_REPORT, or `pevt report`)
 * unwinds them (`--no-children --sort sym -g folded,0,caller,count`; both
 * with --no-inline: no inline frames, for which perf runs addr2line, which
 * the test guests do not have: perf dies of SIGPIPE there, while pevt
 * reads DWARF itself and would add them): each distinct path, outermost
 * caller first, with its samples, for the samples whose own function (the
 * path's last entry) starts with @prefix.  ->deep: those of them whose path
 * goes through @anchor (main, or the function running the tree).  A frame
 * with no symbol (perf prints its absolute address: libc's
 * __libc_start_call_main where libc6-dbg is not installed) reads "0x?":
 * two recordings of one program do not share addresses (ASLR).  Returns
 * 0, or -1 if perf failed.
 */
/* Each ";0x<hex>" frame of @path as ";0x?", in place. */
static inline void cg_path_unaddr(char *path)
{
	char *r = path, *w = path, prev = ';';

	while (*r) {
		if (prev == ';' && r[0] == '0' && r[1] == 'x' && isxdigit((unsigned char)r[2])) {
			char *e = r + 2;

			while (isxdigit((unsigned char)*e))
				e++;
			if (*e == ';' || !*e) {
				memcpy(w, "0x?", 3);
				w += 3;
				r = e;
				prev = '?';
				continue;
			}
		}
		prev = *r;
		*w++ = *r++;
	}
	*w = '\0';
}

struct cg_paths {
	char **path;
	long *count;
	size_t nr;
	long total, deep;
};

#define CG_PERF_REPORT	"perf report -q --no-inline"
#define CG_PEVT_REPORT	"pevt report --no-inline"

static inline int cg_paths_read(const char *report, const char *input, const char *prefix,
				const char *anchor, struct cg_paths *p)
{
	char cmd[512], line[8192], mid[128];
	FILE *f;

	memset(p, 0, sizeof(*p));
	snprintf(mid, sizeof(mid), ";%s;", anchor);
	snprintf(cmd, sizeof(cmd), "%s --stdio --no-children --sort sym "
		 "-g folded,0,caller,count %s 2>/dev/null", report, input);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *path, *leaf;
		long n;

		line[strcspn(line, "\n")] = '\0';
		n = strtol(line, &path, 10);
		if (path == line || *path != ' ' || n <= 0)
			continue;
		path++;
		cg_path_unaddr(path);
		leaf = strrchr(path, ';');
		leaf = leaf ? leaf + 1 : path;
		if (strncmp(leaf, prefix, strlen(prefix)))
			continue;
		p->path = realloc(p->path, (p->nr + 1) * sizeof(*p->path));
		p->count = realloc(p->count, (p->nr + 1) * sizeof(*p->count));
		if (!p->path || !p->count)
			break;
		p->path[p->nr] = strdup(path);
		p->count[p->nr++] = n;
		p->total += n;
		if (strstr(path, mid))
			p->deep += n;
	}
	return pclose(f) ? -1 : 0;
}

/* Samples of @a whose path @b has too. */
static inline long cg_paths_shared(const struct cg_paths *a, const struct cg_paths *b)
{
	long shared = 0;
	size_t i, j;

	for (i = 0; i < a->nr; i++)
		for (j = 0; j < b->nr; j++)
			if (!strcmp(a->path[i], b->path[j])) {
				shared += a->count[i];
				break;
			}
	return shared;
}

static inline void cg_paths_free(struct cg_paths *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		free(p->path[i]);
	free(p->path);
	free(p->count);
	memset(p, 0, sizeof(*p));
}

#endif /* PEVT_SELFTESTS_RECORD_CHECK_H */
