// SPDX-License-Identifier: GPL-2.0
/*
 * pevt report --flamegraph FILE.svg: a flame graph (Brendan Gregg's
 * layout: the root "all" at the bottom, callers below callees, widths
 * proportional to samples) written as one self-contained SVG: no script,
 * no font or stylesheet from elsewhere; each frame's <title> carries its
 * name, samples and percent, so a browser shows them on hover.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"

#define WIDTH		1200.0
#define XPAD		10.0
#define FRAME_H		16
#define TOP		40	/* title */
#define BOTTOM		20
#define FONT		12
#define CHAR_W		(FONT * 0.59)
#define MIN_W		0.1	/* narrower frames are not drawn (flamegraph.pl) */

static void xml(FILE *f, const char *s, size_t max)
{
	size_t n = 0;

	for (; *s && n < max; s++, n++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static unsigned int hash(const char *s)
{
	unsigned int h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int depth_of(const struct pevt_cc_node *n)
{
	const struct pevt_cc_node *c;
	int d = 0;

	for (c = n->child; c; c = c->next) {
		int cd = depth_of(c);

		if (cd > d)
			d = cd;
	}
	return d + 1;
}

struct fg {
	FILE *f;
	uint64_t total;
	double scale;		/* pixels per sample */
	int height;
	size_t frames;
};

static void frame(struct fg *g, const char *name, uint64_t count, double x, int depth,
		  bool kernel)
{
	double w = count * g->scale;
	int y = g->height - BOTTOM - (depth + 1) * FRAME_H;
	unsigned int h = hash(name);
	size_t fit;

	/* flamegraph.pl's "hot" palette; kernel frames a little redder */
	fprintf(g->f, "<g><title>");
	xml(g->f, name, (size_t)-1);
	fprintf(g->f, " (%" PRIu64 " samples, %.2f%%)</title>", count,
		g->total ? 100.0 * count / g->total : 0.0);
	fprintf(g->f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>",
		x, y, w, FRAME_H - 1, 205 + h % 50, kernel ? (h >> 8) % 120 : 80 + (h >> 8) % 150,
		(h >> 16) % 55);
	fit = w / CHAR_W;
	if (fit >= 3) {
		size_t len = strlen(name);

		fprintf(g->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
		if (len <= fit) {
			xml(g->f, name, len);
		} else {
			xml(g->f, name, fit - 2);
			fputs("..", g->f);
		}
		fputs("</text>", g->f);
	}
	fputs("</g>\n", g->f);
	g->frames++;
}

static int cmp_name(const void *pa, const void *pb)
{
	const struct pevt_cc_node *a = *(const struct pevt_cc_node *const *)pa;
	const struct pevt_cc_node *b = *(const struct pevt_cc_node *const *)pb;
	char ba[32], bb[32];
	int r = strcmp(pevt_cc_entry__name(&a->e, ba, sizeof(ba)),
		       pevt_cc_entry__name(&b->e, bb, sizeof(bb)));

	return r ?: (a->e.ip > b->e.ip) - (a->e.ip < b->e.ip);
}

/*
 * The children of a frame left to right by name, like flamegraph.pl's
 * sorted stacks; a frame stands for nodes @n[0..nr) (sibling nodes of one
 * name, e.g. _start of the program and of the dynamic loader, are one
 * frame there, as in perf's folded stacks), its children those of all.
 */
static int children(struct fg *g, const struct pevt_cc_node *const *n, size_t nr, double x,
		    int depth)
{
	const struct pevt_cc_node **v, *c;
	size_t k = 0, i, j, p;
	int err = 0;

	for (p = 0; p < nr; p++)
		for (c = n[p]->child; c; c = c->next)
			k++;
	if (!k)
		return 0;
	v = malloc(k * sizeof(*v));
	if (!v)
		return -ENOMEM;
	k = 0;
	for (p = 0; p < nr; p++)
		for (c = n[p]->child; c; c = c->next)
			v[k++] = c;
	qsort(v, k, sizeof(*v), cmp_name);
	for (i = 0; i < k && !err; i = j) {
		char buf[32], nb[32];
		const char *name = pevt_cc_entry__name(&v[i]->e, buf, sizeof(buf));
		uint64_t cnt = 0;
		bool kernel = false;

		for (j = i; j < k && !strcmp(name, pevt_cc_entry__name(&v[j]->e, nb, sizeof(nb)));
		     j++) {
			cnt += v[j]->count + v[j]->children_count;
			kernel |= v[j]->e.dso && v[j]->e.dso->kernel;
		}
		if (cnt * g->scale >= MIN_W) {
			frame(g, name, cnt, x, depth, kernel);
			err = children(g, v + i, j - i, x, depth + 1);
		}
		x += cnt * g->scale;
	}
	free(v);
	return err;
}

static size_t slot(const struct flame *fl, const char *comm)
{
	uint64_t h = (uintptr_t)comm * 0x9e3779b97f4a7c15ull;

	return (h >> 20) & (fl->cap - 1);
}

struct flame_comm *flame__comm(struct flame *fl, const char *comm)
{
	size_t i;

	if ((fl->nr + 1) * 2 > fl->cap) {
		struct flame old = *fl;

		fl->cap = fl->cap ? fl->cap * 2 : 64;
		fl->v = calloc(fl->cap, sizeof(*fl->v));
		if (!fl->v) {
			*fl = old;
			return NULL;
		}
		for (i = 0; i < old.cap; i++) {
			size_t j;

			if (!old.v[i].comm)
				continue;
			for (j = slot(fl, old.v[i].comm); fl->v[j].comm; j = (j + 1) & (fl->cap - 1))
				;
			fl->v[j] = old.v[i];
		}
		free(old.v);
	}
	for (i = slot(fl, comm); fl->v[i].comm; i = (i + 1) & (fl->cap - 1))
		if (fl->v[i].comm == comm)
			return &fl->v[i];
	fl->v[i].comm = comm;
	fl->nr++;
	return &fl->v[i];
}

int flame__merge(struct flame *dst, struct flame *src)
{
	size_t i;

	for (i = 0; i < src->cap; i++) {
		const struct flame_comm *s = &src->v[i];
		struct flame_comm *d;

		if (!s->comm)
			continue;
		d = flame__comm(dst, s->comm);
		if (!d)
			return -ENOMEM;
		d->count += s->count;
		if (s->root && !d->root)
			d->root = s->root;
		else if (s->root)
			pevt_cc__merge(&dst->arena, d->root, s->root);
	}
	pevt_cc_arena__splice(&dst->arena, &src->arena);
	return 0;
}

void flame__exit(struct flame *fl)
{
	pevt_cc_arena__free(&fl->arena);
	free(fl->v);
	memset(fl, 0, sizeof(*fl));
}

static int cmp_comm(const void *pa, const void *pb)
{
	const struct flame_comm *a = *(const struct flame_comm *const *)pa;
	const struct flame_comm *b = *(const struct flame_comm *const *)pb;

	return strcmp(a->comm, b->comm);
}

int flamegraph__write(const char *path, const struct flame *fl, const char *title)
{
	const struct flame_comm **v;
	struct fg g = { 0 };
	int depth = 0, err = 0;
	double x = XPAD;
	size_t i, nr = 0;

	v = malloc((fl->nr + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < fl->cap; i++) {
		const struct flame_comm *c = &fl->v[i];
		int d;

		if (!c->comm)
			continue;
		d = c->root ? depth_of(c->root) : 1;
		g.total += c->count;
		if (d > depth)
			depth = d;
		v[nr++] = c;
	}
	/* comms left to right by name */
	qsort(v, nr, sizeof(*v), cmp_comm);
	g.f = fopen(path, "w");
	if (!g.f) {
		free(v);
		return -errno;
	}
	/* all + comm + the deepest chain (whose root node has no entry) */
	g.height = TOP + BOTTOM + (depth + 1) * FRAME_H;
	g.scale = g.total ? (WIDTH - 2 * XPAD) / g.total : 0;
	fprintf(g.f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" viewBox=\"0 0 %.0f %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", WIDTH, g.height, WIDTH, g.height);
	fprintf(g.f, "<style>text { font-family: monospace; font-size: %dpx; fill: #000; }"
		" rect:hover { stroke: #000; stroke-width: 0.5; }</style>\n", FONT);
	fprintf(g.f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%d\" fill=\"#f8f4e8\"/>\n",
		WIDTH, g.height);
	fprintf(g.f, "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" "
		"style=\"font-size: 17px\">", WIDTH / 2);
	xml(g.f, title, (size_t)-1);
	fputs("</text>\n", g.f);
	frame(&g, "all", g.total, XPAD, 0, false);
	for (i = 0; i < nr && !err; i++) {
		const struct flame_comm *c = v[i];

		if (c->count * g.scale >= MIN_W) {
			frame(&g, c->comm, c->count, x, 1, false);
			if (c->root)
				err = children(&g, (const struct pevt_cc_node *const *)&c->root, 1, x, 2);
		}
		x += c->count * g.scale;
	}
	fputs("</svg>\n", g.f);
	free(v);
	if (fclose(g.f) && !err)
		err = -errno;
	return err;
}
