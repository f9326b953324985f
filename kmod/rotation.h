/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rotation-id planner (Song Liu, 2018): a pure function over plain arrays.
 *
 * Given the hardware counters of one PMU and the groups of one (CPU
 * context, task context) pair, decide once per change of the event set:
 *
 *  - which groups need no counter at all (ALWAYS_ON: software groups),
 *  - which pinned groups run in every rotation (PINNED) or cannot fit next
 *    to the pinned groups created before them (ERROR, perf's error state),
 *  - which flexible groups can never run (ALWAYS_OFF: they do not fit next
 *    to the pinned groups, or not even alone on an empty PMU),
 *  - a primary rotation id 0..R-1 for every other flexible group, CPU and
 *    task groups packed together into as few rotations as the constraints
 *    allow, then free counters of each rotation backfilled with groups of
 *    other rotations,
 *  - for every rotation, the concrete counter of every member of every
 *    group it runs, so the tick switches rotation r out and r+1 in with no
 *    trial scheduling.
 *
 * No allocation (the caller passes a workspace sized by
 * rot_workspace_size()), no floating point, bounded time, deterministic
 * output.  The same file builds into pevt.ko and into userspace (host tests,
 * pevt-rotsim), hence the tiny shim below instead of kernel headers.
 */
#ifndef PEVT_ROTATION_H
#define PEVT_ROTATION_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
typedef int8_t s8;
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
#endif

#define ROT_MAX_COUNTERS	64
#define ROT_MAX_GROUPS		4096	/* group ids must fit struct rot_slot */

/* struct rot_group.flags */
#define ROT_F_PINNED		0x1	/* perf attr.pinned on the leader */
#define ROT_F_SOFTWARE		0x2	/* every member is software: no counter */
#define ROT_F_TASK		0x4	/* from the task context (else CPU ctx) */
#define ROT_F_ALL		(ROT_F_PINNED | ROT_F_SOFTWARE | ROT_F_TASK)

/* struct rot_plan.state[g] when not a rotation id (>= 0) */
#define ROT_ALWAYS_ON		(-2)	/* needs no counter: always scheduled */
#define ROT_ALWAYS_OFF		(-3)	/* flexible, can never get its counters */
#define ROT_PINNED		(-4)	/* pinned, runs in every rotation */
#define ROT_ERROR		(-5)	/* pinned that does not fit: error state */

#define ROT_SLOT_FREE		0xffff	/* struct rot_slot.group of a free counter */

/**
 * struct rot_group - one group as the planner sees it
 * @masks:      @nr_members constraint masks, bit c set = the member may use
 *              counter c.  Bits at or above the PMU's counter count are
 *              ignored; a member whose mask is then empty is invalid.
 * @nr_members: members that need a counter (0 behaves like ROT_F_SOFTWARE)
 * @flags:      ROT_F_*
 *
 * Only groups that are enabled and match the CPU are passed; their index in
 * the input array is their stable order (creation order, CPU context first
 * or interleaved as the caller likes: ties are broken by index everywhere).
 */
struct rot_group {
	const u64 *masks;
	u32 nr_members;
	u32 flags;
};

/**
 * struct rot_input - one (CPU context, task context) pair on one PMU
 * @groups:      @nr_groups groups, in stable order
 * @nr_groups:   0..ROT_MAX_GROUPS
 * @nr_counters: counters of the PMU, 1..ROT_MAX_COUNTERS
 */
struct rot_input {
	const struct rot_group *groups;
	u32 nr_groups;
	u32 nr_counters;
};

/**
 * struct rot_slot - who owns one counter in one rotation
 * @group:  index into rot_input.groups, ROT_SLOT_FREE if the counter is free
 * @member: member index within that group
 */
struct rot_slot {
	u16 group;
	u8 member;
	u8 pad;
};

/**
 * struct rot_plan - the planner's output; arrays live in the workspace
 * @nr_groups:      as in the input
 * @nr_counters:    as in the input
 * @nr_rotations:   R, the schedule length.  0: no group needs a counter.
 *                  1: nothing rotates (pinned groups and/or flexible groups
 *                  that all fit at once): no tick needed.  >1: the tick
 *                  cycles 0..R-1.  Equals @min_rotations unless @wrapped.
 * @min_rotations:  fewest rotations found that give every rotating group a
 *                  rotation (the packing); every share is >= 1/min_rotations
 * @lower_bound:    proven lower bound on @min_rotations
 * @optimal:        @min_rotations is proven minimal (== lower_bound, or the
 *                  exact search refuted every smaller value)
 * @wrapped:        the schedule is the wrap-around one (see rotation.md):
 *                  every rotating group runs in the same number of
 *                  rotations, chosen because it beats packing + backfill on
 *                  the minimum share (or ties on it and wins utilization)
 * @filled:         the schedule is the water-filled one (see rotation.md):
 *                  its sorted share vector beat packing + backfill and the
 *                  wrap-around schedule lexicographically; R may then be
 *                  up to max(64, nr_groups)
 * @words:          u64 words per rotation in @runs
 * @nr_always_on:   groups in state ROT_ALWAYS_ON
 * @nr_always_off:  groups in state ROT_ALWAYS_OFF
 * @nr_pinned:      groups in state ROT_PINNED
 * @nr_error:       groups in state ROT_ERROR
 * @state:          [nr_groups] primary rotation id (0..R-1) of a rotating
 *                  flexible group (a rotation that runs it: its packing
 *                  rotation, or the first one that runs it if @wrapped), or
 *                  ROT_ALWAYS_ON/OFF, ROT_PINNED, ROT_ERROR
 * @nr_runs:        [nr_groups] rotations the group runs in: R for pinned,
 *                  >= 1 for rotating flexible groups (more after backfill),
 *                  0 otherwise.  A flexible group's share is nr_runs / R.
 * @runs:           [R * words] bitmap per rotation of the groups it runs
 *                  (pinned and flexible; never ALWAYS_ON ones)
 * @slots:          [R * nr_counters] owner of each counter in each rotation;
 *                  every member of every group in @runs has exactly one
 *                  counter allowed by its mask, no counter has two owners
 */
struct rot_plan {
	u32 nr_groups;
	u32 nr_counters;
	u32 nr_rotations;
	u32 min_rotations;
	u32 lower_bound;
	bool optimal;
	bool wrapped;
	bool filled;
	u32 words;
	u32 nr_always_on;
	u32 nr_always_off;
	u32 nr_pinned;
	u32 nr_error;
	s32 *state;
	u32 *nr_runs;
	u64 *runs;
	struct rot_slot *slots;
};

size_t rot_workspace_size(u32 nr_groups, u32 nr_counters);
int rot_plan(const struct rot_input *in, void *ws, size_t ws_size,
	     struct rot_plan *plan);

/**
 * rot_plan_runs() - does rotation @r run group @g?
 * @plan: a plan filled by rot_plan()
 * @r:    rotation, 0..nr_rotations-1
 * @g:    group index
 *
 * Return: true if @g holds counters in rotation @r.
 */
static inline bool rot_plan_runs(const struct rot_plan *plan, u32 r, u32 g)
{
	return (plan->runs[r * plan->words + g / 64] >> (g % 64)) & 1;
}

/**
 * rot_plan_slots() - counter owners of rotation @r
 * @plan: a plan filled by rot_plan()
 * @r:    rotation, 0..nr_rotations-1
 *
 * Return: array of plan->nr_counters slots, indexed by counter.
 */
static inline const struct rot_slot *rot_plan_slots(const struct rot_plan *plan,
						    u32 r)
{
	return plan->slots + (size_t)r * plan->nr_counters;
}

/**
 * rot_plan_counter() - counter of member @m of group @g in rotation @r
 * @plan: a plan filled by rot_plan()
 * @r:    rotation
 * @g:    group index
 * @m:    member index
 *
 * Return: counter index, or -1 if the group does not run in rotation @r.
 */
static inline int rot_plan_counter(const struct rot_plan *plan, u32 r, u32 g,
				   u32 m)
{
	const struct rot_slot *s = rot_plan_slots(plan, r);
	u32 c;

	for (c = 0; c < plan->nr_counters; c++)
		if (s[c].group == g && s[c].member == m)
			return c;
	return -1;
}

#endif /* PEVT_ROTATION_H */
