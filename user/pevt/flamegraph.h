/* SPDX-License-Identifier: GPL-2.0 */
/* pevt report --flamegraph (flamegraph.c). */
#ifndef PEVT_FLAMEGRAPH_H
#define PEVT_FLAMEGRAPH_H

#include <pevt/callchain.h>

/* The samples of one comm and their stacks, outermost caller first. */
struct flame_comm {
	const char *comm;		/* interned */
	uint64_t count;			/* samples */
	struct pevt_cc_node *root;	/* NULL: none with a stack */
};

/* Comms and stacks by comm; pointers to interned comms hash. */
struct flame {
	struct flame_comm *v;		/* open addressing */
	size_t cap, nr;
	struct pevt_cc_arena arena;
};

struct flame_comm *flame__comm(struct flame *fl, const char *comm);
int flame__merge(struct flame *dst, struct flame *src);
void flame__exit(struct flame *fl);
int flamegraph__write(const char *path, const struct flame *fl, const char *title);

#endif
