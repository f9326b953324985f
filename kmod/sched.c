// SPDX-License-Identifier: GPL-2.0
/*
 * pevt context scheduler.
 *
 * Policy rotid (default): the groups of this CPU's context and of the task
 * context active on it are planned together by rot_plan() (rotation.c).
 * The plan is cached per CPU (and up to SCHED_SAVED more, one per pair met
 * before, see sched_find_saved()) together with a key: the (event id, enabled
 * member count, flags) of every enabled group of the pair, in list order.
 * Whoever schedules compares the current groups against the key (ids are
 * unique for the module's lifetime, so a freed and reallocated event can
 * never look like a cached one) and plans only on a mismatch, i.e. when the
 * event set changed or a different task context is active here.
 *
 * WHERE planning runs: never with irqs off.  The CPU (irqs off, both
 * context locks held: task ctx, then CPU ctx, internal.h rule 3) only
 * compares keys, takes ready plans and applies rotations.  A key without
 * a plan becomes a request (sched_request(): the planner's input copied
 * into a per-CPU buffer, a work item queued); sched_plan_work() runs
 * rot_plan() preemptible into a workspace preallocated per CPU at module
 * load for SCHED_MAX_GROUPS groups, parks the result with the saved
 * plans and IPIs the CPU, which takes it if its pair is current (else the
 * next switch or tick that meets the pair does).  Until then what runs
 * keeps running.  Keys change
 *  - when the event set changes (pevt_ctx_changed() -> sched_ctx_changed()
 *    -> IPI to the CPU where the context is active),
 *  - at a context switch to a pair without a current plan: the switch
 *    may take a plan parked for the incoming pair
 *    (sched_task_switch_in()); on a miss it schedules greedily (perf's
 *    pass) and kicks the timer with zero delay, which takes the parked
 *    plan or requests one,
 *  - when the stock side takes or gives back slots (sched_slots_changed()).
 * The tick (hrtimer, mux_interval_ms) only switches rotation r out and
 * r + 1 in using the slots the plan chose; it is armed only while R > 1
 * (or a planned group failed to go on).
 *
 * Policy classic: perf 6.1's perf_rotate_context() on the same plumbing:
 * greedy sched-in (core.c ctx_sched_in()), and on each tick rotate the
 * first active (else first) flexible group of the CPU context and of the
 * task context to the tail, separately, then sched in CPU flexible before
 * task flexible.  The timer keeps running while a context needs rotation.
 *
 * More than SCHED_MAX_GROUPS groups (or masks) on a CPU: classic behaviour
 * for that CPU, reported as "overflow" in the plan file.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/hrtimer.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include <linux/workqueue.h>
#include <linux/irq_work.h>
#include <linux/sched/clock.h>

#include "internal.h"
#include "rotation.h"
#include "vpmu.h"
#include "pevt_sched.h"

#define SCHED_MAX_GROUPS	64
#define SCHED_MAX_MASKS		256
/*
 * Plans kept per CPU besides the current one, for other (CPU ctx, task ctx)
 * pairs met on this CPU: a switch back to one of them swaps its plan in
 * instead of planning.  Least recently used goes first.
 */
#define SCHED_SAVED		7
/* Rotations a plan of SCHED_MAX_GROUPS + 1 groups may have (rotation.h) */
#define SCHED_MAX_ROT		(SCHED_MAX_GROUPS + 1)

enum sched_policy { SCHED_ROTID = 0, SCHED_CLASSIC = 1 };

static int sched_policy = SCHED_ROTID;
static unsigned int mux_interval_ms = 4;
static bool sched_ready;
/*
 * Test knob: the rotid pass takes every active flexible group off and
 * puts the planned ones back, as it did before sched_unplace();
 * fairness_test compares the two ("tick_outs" in the plan file).
 */
static bool sched_full_pass;
module_param_named(rotid_full_pass, sched_full_pass, bool, 0644);
MODULE_PARM_DESC(rotid_full_pass,
		 "test knob: a rotid tick takes every flexible group off, not only those that move (default N)");

/*
 * Test knob: the rotid tick and switch-in walk the contexts' groups to
 * check their key every time, as they did until 2026-12-01 (the tick) and
 * 2026-12-02 (the switch-in), instead of trusting the contexts' key
 * generations (sched_rotid(), sched_task_switch_in(),
 * sched_ctx_flexible_in()).
 */
static bool sched_key_walk;
module_param_named(rotid_key_walk, sched_key_walk, bool, 0644);
MODULE_PARM_DESC(rotid_key_walk,
		 "test knob: every rotid tick and switch-in walks the groups to check its key, not only when a context's key generation changed (default N)");

/*
 * Test knob: a rotid tick that finds a one-rotation plan as it was still
 * takes off and puts back what is misplaced and applies the plan, as it
 * did until 2026-12-02, instead of returning at once (sched_rotid()).
 */
static bool sched_idle_pass;
module_param_named(rotid_idle_pass, sched_idle_pass, bool, 0644);
MODULE_PARM_DESC(rotid_idle_pass,
		 "test knob: a rotid tick with nothing to rotate runs the pass anyway (default N)");

/*
 * Test knob: a tick that trusts sc->idle also does the full check of
 * sched_tick_idle() and counts the ticks where the flag was stale
 * (idle_stale in the plan file; it then runs the pass).
 */
static bool sched_idle_verify;
module_param_named(rotid_idle_verify, sched_idle_verify, bool, 0644);
MODULE_PARM_DESC(rotid_idle_verify,
		 "test knob: check every tick that trusts the cached idle flag against the full check, counting stale flags (default N)");

struct sched_key {
	u64	id;		/* leader's event id */
	u16	nr_members;	/* enabled members needing a slot */
	u8	flags;		/* ROT_F_* */
};

/* A plan of another pair, parked: what sched_rotid() needs to resume it. */
struct sched_saved {
	bool			valid;
	struct pevt_context	*tctx;
	u32			nr;
	u32			r;
	u64			foreign; /* slots it was planned around */
	u64			used;	/* sc->plans + hits when last current */
	/*
	 * sc->lead_gen[] and sc->lead[] of the plan, parked with it.
	 * lead_gen[] next to valid/tctx/foreign: a switch-in's lookup
	 * (sched_lookup_gen()) reads one cache line per parked plan.
	 */
	u64			lead_gen[2];
	struct sched_key	key[SCHED_MAX_GROUPS];
	struct pevt_event	*lead[SCHED_MAX_GROUPS];
	struct rot_plan		plan;	/* points into ws */
	void			*ws;
};

/*
 * A planning request: the planner's input as collected on the CPU (irqs
 * off), planned later by sched_plan_work() in process context.
 */
struct sched_req {
	u64			gen;	/* sc->gen when made */
	u32			nr;
	u64			foreign;
	struct pevt_context	*tctx;
	struct sched_key	key[SCHED_MAX_GROUPS];
	struct rot_group	groups[SCHED_MAX_GROUPS + 1];
	u64			masks[SCHED_MAX_MASKS];
	u64			fmasks[VPMU_MAX_COUNTERS];
};

struct sched_cpu {
	struct hrtimer		timer;
	int			cpu;
	raw_spinlock_t		slock;	/* cache fields, for remote readers */
	bool			in_tick;
	bool			bypass;	/* classic pass inside rotid */
	bool			offline; /* CPU going or gone: no tick */
	bool			failed;	/* a planned group did not go on */
	/*
	 * A group did not go on (planned or not), or a flexible pass missed
	 * the plan, since the last full pass of sched_rotid(): the next tick
	 * runs the pass even when nothing rotates.
	 */
	bool			unplaced;
	/*
	 * sched_idle_note() found the current pair's plan to be one
	 * rotation as it was (sched_tick_idle()'s check) at the end of the
	 * last switch-in or pass, and nothing has changed since: every
	 * writer of what that check reads clears it (the switch-out, a key
	 * generation, the stock side's slots, a forget).  The tick then
	 * reads only this page.
	 */
	bool			idle;
	bool			verify;	/* rotid_idle_verify, as of the last note */
	bool			cpu_off; /* the plan leaves a CPU flexible group off */
	/* The cached plan (written on this CPU, irqs off, slock held). */
	bool			valid;
	bool			overflow;
	struct pevt_context	*tctx;
	u32			nr;
	/*
	 * Slots held by the stock side when the plan was made
	 * (vpmu_slots_foreign()): the planner sees them as one pinned group
	 * in front of the key's groups (groups[0], plan index 0), so plan
	 * index = key index + 1 when foreign != 0 (sched_pg()).
	 */
	u64			foreign;
	struct sched_key	key[SCHED_MAX_GROUPS];
	/*
	 * What a tick and a switch-in read, from here to pass_ns_max: with
	 * key[] above, the first 4 KiB of the struct (kvzalloc, page
	 * aligned).  Under TCG every page touched after a CR3 write costs a
	 * page walk.
	 */
	struct pevt_event	*lead[SCHED_MAX_GROUPS]; /* leaders of key[] */
	/*
	 * key_gen of the CPU and the task context when lead[] was last found
	 * to be their groups, in key[] order (0: not known; the task's is 0
	 * without one, and key_gen is never 0).  Parked and taken with key[]
	 * (sched_swap_saved()), reset when key[] changes otherwise.
	 */
	u64			lead_gen[2];
	struct rot_plan		plan;
	void			*ws;
	size_t			ws_size;
	u32			r;
	u64			ticks;	/* rotation switches done */
	u64			tick_outs; /* groups they took off */
	u64			key_walks; /* of them, walking the groups for the key */
	u64			switch_ins; /* task switch-ins that changed the pair */
	u64			switch_walks; /* walks of a context's groups at them */
	u64			idle_ticks; /* ticks meeting a one-rotation plan as it was */
	u64			idle_passes; /* of them, those that ran the pass anyway */
	u64			idle_cached; /* of them, found by sc->idle alone */
	u64			idle_stale; /* sc->idle set, the full check not (verify) */
	u64			slot_kicks; /* timer kicks by the stock side's slot changes */
	u64			t_rot;	/* local_clock() when rotation r began */
	u64			plans;	/* rot_plan() runs */
	u64			hits;	/* key changes served by a saved plan */
	u64			runs;	/* tick (hrtimer) runs */
	u64			pass_ns_max; /* longest tick/IPI pass */
	struct rot_group	groups[SCHED_MAX_GROUPS + 1];
	u64			masks[SCHED_MAX_MASKS];
	u64			fmasks[VPMU_MAX_COUNTERS];
	struct sched_saved	saved[SCHED_SAVED];
	/*
	 * Planning out of irq-off context: the CPU fills req (slock held)
	 * and queues work; the work copies it to wreq, plans into pend
	 * (only the work touches pend; slock not held), parks the result
	 * with the other parked plans (sched_park_pend()) and IPIs the CPU,
	 * which takes it like any parked plan if its pair is current.  Until
	 * then what ran keeps running (classic rotation at the tick).
	 */
	struct irq_work		kick;	/* queues work, outside our locks */
	struct work_struct	work;
	u64			gen;	/* bumped by every request and forget */
	bool			req_live; /* req not yet answered by pend */
	int			req_err; /* rot_plan() error for req, or 0 */
	struct sched_req	req;
	struct sched_req	wreq;	/* the work's copy */
	struct sched_saved	pend;	/* the work's result */
	u64			plan_ns_max; /* longest rot_plan() (work) */
	/* Scratch, valid inside one critical section only. */
	struct sched_key	nkey[SCHED_MAX_GROUPS];
	struct pevt_event	*nlead[SCHED_MAX_GROUPS];
};

/* Allocated at init: too big for the module's static per-CPU area. */
static DEFINE_PER_CPU(struct sched_cpu *, sched_cpus);

/* ---- building the key -------------------------------------------- */

static bool sched_member_on(struct pevt_event *e)
{
	return e->state >= PEVT_STATE_INACTIVE;
}

/*
 * The planner's mask of a member: a pinned member already on a slot is
 * planned where it is (the pinned pass placed it greedily, and the
 * flexible groups' planned slots must not collide with it).
 */
static u64 sched_member_mask(struct pevt_event *e, bool pinned)
{
	if (pinned && e->state == PEVT_STATE_ACTIVE && e->hw.idx >= 0)
		return BIT_ULL(e->hw.idx);
	return pevt_vpmu_event_mask(e);
}

/*
 * Enabled groups of @ctx on this CPU, appended to nkey/lead (and, with
 * @masks, their member masks into sc->groups[1..]/masks at *nm).
 */
static int sched_collect(struct sched_cpu *sc, struct pevt_context *ctx,
			 u32 flags, u32 *n, u32 *nm, bool masks)
{
	struct list_head *lists[2] = { &ctx->pinned_groups, &ctx->flexible_groups };
	int cpu = smp_processor_id();
	struct pevt_event *leader, *sib;
	int i;

	for (i = 0; i < 2; i++) {
		list_for_each_entry(leader, lists[i], group_entry) {
			u32 f = flags | (i == 0 ? ROT_F_PINNED : 0);
			u32 nr = 0, first = *nm;

			if (!sched_member_on(leader) ||
			    (leader->cpu != -1 && leader->cpu != cpu))
				continue;
			if (*n >= SCHED_MAX_GROUPS)
				return -E2BIG;
			if (pevt_vpmu_event_mask(leader)) {
				if (masks && *nm < SCHED_MAX_MASKS)
					sc->masks[*nm] = sched_member_mask(leader, i == 0);
				(*nm)++;
				nr++;
			}
			pevt_for_each_sibling(sib, leader) {
				if (!sched_member_on(sib) || !pevt_vpmu_event_mask(sib))
					continue;
				if (masks && *nm < SCHED_MAX_MASKS)
					sc->masks[*nm] = sched_member_mask(sib, i == 0);
				(*nm)++;
				nr++;
			}
			if (*nm > SCHED_MAX_MASKS)
				return -E2BIG;
			if (!nr)
				f |= ROT_F_SOFTWARE;
			sc->nkey[*n].id = leader->id;
			sc->nkey[*n].nr_members = nr;
			sc->nkey[*n].flags = f;
			sc->nlead[*n] = leader;
			if (masks) {
				sc->groups[*n + 1].masks = &sc->masks[first];
				sc->groups[*n + 1].nr_members = nr;
				sc->groups[*n + 1].flags = f;
			}
			(*n)++;
		}
	}
	return 0;
}

/* Fill nkey/lead for the pair; 0 or -E2BIG. */
static int sched_build(struct sched_cpu *sc, struct pevt_context *cctx,
		       struct pevt_context *tctx, u32 *n, bool masks)
{
	u32 nm = 0;
	int ret;

	*n = 0;
	ret = sched_collect(sc, cctx, 0, n, &nm, masks);
	if (!ret && tctx)
		ret = sched_collect(sc, tctx, ROT_F_TASK, n, &nm, masks);
	return ret;
}

static bool sched_key_eq(const struct sched_key *a, const struct sched_key *b)
{
	return a->id == b->id && a->nr_members == b->nr_members &&
	       a->flags == b->flags;
}

/* ---- applying a rotation ----------------------------------------- */

/* Plan index of key index @g (the foreign slots' group comes first). */
static u32 sched_pg(const struct sched_cpu *sc, u32 g)
{
	return sc->foreign ? g + 1 : g;
}

/*
 * Schedule in the flexible groups of @ctx that rotation sc->r runs.  A
 * group the plan runs that does not go on (its slots are not free after
 * all) sets sc->failed: the tick keeps running and replans with the slots
 * really free rather than leave it at 0.
 */
static void sched_apply(struct sched_cpu *sc, struct pevt_context *ctx,
			bool task)
{
	const struct rot_plan *p = &sc->plan;
	u32 g;

	for (g = 0; g < sc->nr; g++) {
		struct pevt_event *leader = sc->lead[g], *sib;
		u32 pg = sched_pg(sc, g);
		s32 st = p->state[pg];
		u32 m = 0;

		if (!!(sc->key[g].flags & ROT_F_TASK) != task ||
		    (sc->key[g].flags & ROT_F_PINNED))
			continue;
		if (leader->state != PEVT_STATE_INACTIVE)
			continue;
		if (st == ROT_ALWAYS_ON) {
			if (pevt_group_sched_in(leader, ctx))
				sc->failed = sc->unplaced = true;
			continue;
		}
		if (st < 0 || p->nr_rotations == 0 ||
		    !rot_plan_runs(p, sc->r, pg))
			continue;
		/* Planned slot of each member, same order as the masks. */
		if (pevt_vpmu_event_mask(leader))
			pevt_vpmu_set_slot_hint(leader,
						rot_plan_counter(p, sc->r, pg, m++));
		pevt_for_each_sibling(sib, leader)
			if (sched_member_on(sib) && pevt_vpmu_event_mask(sib))
				pevt_vpmu_set_slot_hint(sib,
							rot_plan_counter(p, sc->r, pg, m++));
		if (pevt_group_sched_in(leader, ctx))
			sc->failed = sc->unplaced = true;
	}
}

/*
 * Is group @g (key index) on exactly where rotation sc->r wants it: an
 * ALWAYS_ON group that is on, or a group the rotation runs with every
 * member needing a slot ACTIVE on its planned counter?  sc->lead current.
 */
static bool sched_group_placed(struct sched_cpu *sc, u32 g)
{
	const struct rot_plan *p = &sc->plan;
	struct pevt_event *leader = sc->lead[g], *sib;
	u32 pg = sched_pg(sc, g), m = 0;
	s32 st = p->state[pg];

	if (leader->state != PEVT_STATE_ACTIVE)
		return false;
	if (st == ROT_ALWAYS_ON)
		return true;
	if (st < 0 || p->nr_rotations == 0 || !rot_plan_runs(p, sc->r, pg))
		return false;
	if (pevt_vpmu_event_mask(leader) &&
	    leader->hw.idx != rot_plan_counter(p, sc->r, pg, m++))
		return false;
	pevt_for_each_sibling(sib, leader) {
		if (!sched_member_on(sib) || !pevt_vpmu_event_mask(sib))
			continue;
		if (sib->state != PEVT_STATE_ACTIVE ||
		    sib->hw.idx != rot_plan_counter(p, sc->r, pg, m++))
			return false;
	}
	return true;
}

/*
 * Before sched_apply(): take off the flexible groups of the pair that are
 * not where rotation sc->r puts them, and leave the others on.  A tick
 * from rotation r to r + 1 thus touches only the groups that move between
 * the two (until 2026-11-26 it took every flexible group of both contexts
 * off and put the planned ones back: in many-tasks that cost 33 us a run
 * against stock's 20 us, fairness.md).  Groups outside the key (other
 * CPU, disabled) are not active.  A group left on keeps counting without
 * a del()/add() pair, as on stock when its rotation keeps it.
 */
static u32 sched_unplace(struct sched_cpu *sc, struct pevt_context *cctx,
			 struct pevt_context *tctx)
{
	bool full = READ_ONCE(sched_full_pass);
	u32 g, outs = 0;

	for (g = 0; g < sc->nr; g++) {
		bool task = sc->key[g].flags & ROT_F_TASK;

		if (sc->key[g].flags & ROT_F_PINNED ||
		    sc->lead[g]->state != PEVT_STATE_ACTIVE)
			continue;
		if (!full && sched_group_placed(sc, g))
			continue;
		pevt_group_sched_out(sc->lead[g], task ? tctx : cctx);
		outs++;
	}
	return outs;
}

/*
 * The parked plan made for exactly nkey[0..n) around @foreign slots, or
 * NULL.  slock held.
 */
static struct sched_saved *sched_lookup_saved(struct sched_cpu *sc, u32 n,
					      u64 foreign)
{
	u32 i, g;

	for (i = 0; i < SCHED_SAVED; i++) {
		struct sched_saved *sv = &sc->saved[i];
		bool same = sv->valid && sv->nr == n && sv->foreign == foreign;

		for (g = 0; same && g < n; g++)
			same = sched_key_eq(&sv->key[g], &sc->nkey[g]);
		if (same)
			return sv;
	}
	return NULL;
}

/*
 * Time each rotation of a plan has run, ns: at the start of the plan's
 * workspace (rot_plan() gets what follows, sched_plan_ws()), so it moves
 * with the plan when plans are parked and taken, and shares a page with
 * the plan's state[] and runs[] that a tick reads too.
 */
#define SCHED_ACC_BYTES		(SCHED_MAX_ROT * sizeof(u64))

static u64 *sched_acc(void *ws)
{
	return ws;
}

static void *sched_plan_ws(void *ws)
{
	return (char *)ws + SCHED_ACC_BYTES;
}

/* Charge the current rotation with its time since it began. */
static void sched_charge(struct sched_cpu *sc, u64 now)
{
	if (sc->valid && sc->plan.nr_rotations > 1 &&
	    sc->plan.nr_rotations <= SCHED_MAX_ROT && now > sc->t_rot)
		sched_acc(sc->ws)[sc->r] += now - sc->t_rot;
	sc->t_rot = now;
}

/*
 * The rotation to run next: the one that has run least so far, ties in
 * cycle order from r + 1.  With regular ticks that is r + 1, and every
 * rotation gets 1/R of the time; when ticks come early or late (timer
 * jitter, a VM, a switch cutting a rotation short) the rotations that
 * lost time catch up, so each group's share converges to its planned
 * nr_runs/R instead of drifting with the jitter.
 */
static u32 sched_next_rot(struct sched_cpu *sc)
{
	u32 R = sc->plan.nr_rotations, best = (sc->r + 1) % R, k, c;
	const u64 *acc;

	if (R > SCHED_MAX_ROT)
		return best;
	acc = sched_acc(sc->ws);
	for (k = 2; k <= R; k++) {
		c = (sc->r + k) % R;
		if (acc[c] < acc[best])
			best = c;
	}
	return best;
}

/* Exchange the current plan with @sv (slock held). */
static void sched_swap_saved(struct sched_cpu *sc, struct sched_saved *sv)
{
	u32 g, n = max(sc->nr, sv->nr);

	sched_charge(sc, local_clock());	/* the leaving plan's share */
	/* lead[] and its generations go and come with key[] */
	for (g = 0; g < n; g++) {
		swap(sc->key[g], sv->key[g]);
		swap(sc->lead[g], sv->lead[g]);
	}
	swap(sc->lead_gen[0], sv->lead_gen[0]);
	swap(sc->lead_gen[1], sv->lead_gen[1]);
	swap(sc->valid, sv->valid);
	swap(sc->tctx, sv->tctx);
	swap(sc->nr, sv->nr);
	swap(sc->r, sv->r);
	swap(sc->foreign, sv->foreign);
	/* The plan's arrays live in its workspace: they move together. */
	swap(sc->plan, sv->plan);
	swap(sc->ws, sv->ws);
	sv->used = sc->plans + sc->hits;
}

/*
 * Make parked @sv, found for the pair (this CPU's context, @tctx), the
 * current plan, continuing that pair's cycle.  slock held.
 */
static void sched_take_saved(struct sched_cpu *sc, struct sched_saved *sv,
			     struct pevt_context *tctx)
{
	sched_swap_saved(sc, sv);
	sc->hits++;
	sc->tctx = tctx;
	if (sc->plan.nr_rotations)
		sc->r = sched_next_rot(sc);
}

/*
 * The event set of this CPU's pair is nkey[0..n) and the stock side holds
 * @foreign: take a saved plan made for exactly these (true), or park the current plan in the least
 * recently used place so the caller can plan into a free workspace
 * (false).  slock held.
 */
static bool sched_find_saved(struct sched_cpu *sc, u32 n,
			     struct pevt_context *tctx, u64 foreign)
{
	struct sched_saved *sv = sched_lookup_saved(sc, n, foreign);

	if (sv)
		sched_take_saved(sc, sv, tctx);
	return sv;
}

/*
 * The work's fresh plan in sc->pend joins the parked plans, in the least
 * recently used place (pend gets that place's workspace): whichever of
 * the IPI, the tick or the next switch meets the pair takes it from
 * there.  The pair need not be the CPU's current one any more (the
 * work's own kworker may be running there).  slock held.
 */
static void sched_park_pend(struct sched_cpu *sc)
{
	struct sched_saved *lru = &sc->saved[0];
	u32 i;

	for (i = 0; i < SCHED_SAVED; i++) {
		struct sched_saved *sv = &sc->saved[i];

		if (!sv->valid || (lru->valid && sv->used < lru->used))
			lru = sv;
	}
	swap(*lru, sc->pend);
	lru->used = sc->plans + sc->hits;
	sc->pend.valid = false;
}

/*
 * Ask for a plan of the pair whose groups sched_build(..., true) just
 * collected (nkey/groups/masks, n groups), around @foreign.  A request
 * already made for exactly this is not repeated.  slock held, irqs off.
 * Return: 0, or the planner's error for this very request (the caller
 * then runs classic for the CPU).
 */
static void sched_replan_ipi(void *info);

static int sched_request(struct sched_cpu *sc, u32 n,
			 struct pevt_context *tctx, u64 foreign)
{
	struct sched_req *q = &sc->req;
	bool same = sc->req_live && q->nr == n && q->foreign == foreign &&
		    q->tctx == tctx;
	u32 g, m = 0;
	u64 f;

	for (g = 0; same && g < n; g++)
		same = sched_key_eq(&q->key[g], &sc->nkey[g]);
	if (same)
		return sc->req_err;
	q->gen = ++sc->gen;
	q->nr = n;
	q->foreign = foreign;
	q->tctx = tctx;
	memcpy(q->key, sc->nkey, n * sizeof(q->key[0]));
	memcpy(q->masks, sc->masks, sizeof(q->masks));
	for (g = 0; g < n; g++) {
		q->groups[g + 1] = sc->groups[g + 1];
		q->groups[g + 1].masks = q->masks + (sc->groups[g + 1].masks - sc->masks);
	}
	/* The stock side's slots: one pinned group in front. */
	for (f = foreign; f; f &= f - 1)
		q->fmasks[m++] = BIT_ULL(__ffs64(f));
	q->groups[0].masks = q->fmasks;
	q->groups[0].nr_members = m;
	q->groups[0].flags = ROT_F_PINNED;
	sc->req_live = true;
	sc->req_err = 0;
	/*
	 * Not queue_work() here: it may wake a kworker (pool->lock ->
	 * pi_lock -> rq->lock) while we hold context locks, which the
	 * context switch takes under rq->lock.  An irq_work queues it from
	 * interrupt context, holding nothing.
	 */
	irq_work_queue(&sc->kick);
	return 0;
}

/* irq_work: hand the request to a kworker (any CPU: planning is pure). */
static void sched_kick(struct irq_work *iw)
{
	struct sched_cpu *sc = container_of(iw, struct sched_cpu, kick);

	queue_work(system_unbound_wq, &sc->work);
}

/* Forget every plan of this CPU (policy change, offline).  slock held. */
static void sched_forget(struct sched_cpu *sc)
{
	u32 i;

	sc->valid = false;
	sc->idle = false;
	for (i = 0; i < SCHED_SAVED; i++)
		sc->saved[i].valid = false;
	sc->req_live = false;
	sc->gen++;	/* a plan in progress is for nothing now */
}

/* key_gen of the pair's task context; 0 without one. */
static u64 sched_tgen(const struct pevt_context *tctx)
{
	return tctx ? tctx->key_gen : 0;
}

/*
 * The walk just made (sched_build(), both ctx locks held) matched key[]:
 * its nlead[0..n) are key[]'s leaders at the contexts' current generations.
 */
static void sched_lead_walked(struct sched_cpu *sc, struct pevt_context *cctx,
			      struct pevt_context *tctx, u32 n)
{
	memcpy(sc->lead, sc->nlead, n * sizeof(sc->lead[0]));
	sc->lead_gen[0] = cctx->key_gen;
	sc->lead_gen[1] = sched_tgen(tctx);
}

/*
 * The parked plan of exactly this pair (@tctx, not only its key) around
 * @foreign whose lead[] were matched at both contexts' current key
 * generations, or NULL: found without a walk.  slock held.
 */
static struct sched_saved *sched_lookup_gen(struct sched_cpu *sc, struct pevt_context *cctx,
					    struct pevt_context *tctx, u64 foreign)
{
	u32 i;

	if (!tctx || READ_ONCE(sched_key_walk))
		return NULL;
	for (i = 0; i < SCHED_SAVED; i++) {
		struct sched_saved *sv = &sc->saved[i];

		if (sv->valid && sv->tctx == tctx && sv->foreign == foreign &&
		    sv->lead_gen[0] == cctx->key_gen && sv->lead_gen[1] == tctx->key_gen)
			return sv;
	}
	return NULL;
}

/*
 * Are lead[] the leaders of key[] for this pair, without a walk: the plan
 * is for this pair and slots, and neither context's key generation moved
 * since lead[] was last matched against key[]?  Both ctx locks held.
 */
static bool sched_lead_known(struct sched_cpu *sc, struct pevt_context *cctx,
			     struct pevt_context *tctx, u64 foreign)
{
	return sc->valid && sc->tctx == tctx && sc->foreign == foreign &&
	       sc->lead_gen[0] == cctx->key_gen &&
	       sc->lead_gen[1] == sched_tgen(tctx) &&
	       !READ_ONCE(sched_key_walk);
}

/*
 * Take the plan of the current key (current, parked, or just made by the
 * work), advance the rotation if asked, and reschedule the flexible
 * groups of both contexts.  Never plans: a key without a plan is sent to
 * the work (sched_request()).  Both ctx locks held, times updated, irqs
 * off, on this CPU.
 * Return: 1 if the tick must run, 0 if not, -1 if no plan applies (too
 * many groups, or the plan is being made): the caller runs classic.
 */
static int sched_rotid(struct sched_cpu *sc, struct pevt_context *cctx,
		       struct pevt_context *tctx, bool advance, u64 now)
{
	u64 foreign = vpmu_slots_foreign(smp_processor_id());
	bool same, known, moved = false;
	u32 n, g, outs;
	int err;

	/*
	 * Neither context's groups changed since lead[] was last found to be
	 * exactly key[]'s leaders: same pair, same key, no walk.  Until
	 * 2026-12-01 every tick walked both contexts (sched_build()) to
	 * compare; rotid_key_walk=Y does it again.
	 */
	known = sched_lead_known(sc, cctx, tctx, foreign);
	if (known) {
		n = sc->nr;
		same = true;
	} else {
		/*
		 * The key only: the member masks are the planner's input and
		 * are collected below when it runs, not on every tick.
		 */
		if (sched_build(sc, cctx, tctx, &n, false)) {
			raw_spin_lock(&sc->slock);
			sc->overflow = true;
			raw_spin_unlock(&sc->slock);
			return -1;
		}
		same = sc->valid && sc->tctx == tctx && sc->nr == n &&
		       sc->foreign == foreign;
		for (g = 0; same && g < n; g++)
			same = sched_key_eq(&sc->key[g], &sc->nkey[g]);
	}

	raw_spin_lock(&sc->slock);
	sc->overflow = false;
	if (same) {
		if (advance && sc->plan.nr_rotations > 1) {
			sched_charge(sc, now);
			sc->r = sched_next_rot(sc);
			sc->ticks++;
			moved = true;
		}
	} else if (!sched_find_saved(sc, n, tctx, foreign)) {
		/*
		 * A pair not met before (one met before took its parked
		 * plan above), or the stock side's slots changed: ask the
		 * work to plan.  Same walk, same result (both ctx locks
		 * held), now with masks.
		 */
		sched_build(sc, cctx, tctx, &n, true);
		err = sched_request(sc, n, tctx, foreign);
		sc->overflow = err != 0;
		raw_spin_unlock(&sc->slock);
		return -1;
	}
	raw_spin_unlock(&sc->slock);
	if (!known)	/* walked above: nlead[] is key[]'s leaders */
		sched_lead_walked(sc, cctx, tctx, n);

	outs = sched_unplace(sc, cctx, tctx);
	/*
	 * Counted with the tick that moved r to r + 1 only: a tick that
	 * resumed a parked plan (the pair changed since the last pass)
	 * takes off what the other plan had on, and is not in "ticks".
	 */
	if (moved) {
		sc->tick_outs += outs;
		sc->key_walks += !known;
	}
	sc->failed = false;
	sc->unplaced = false;
	sched_apply(sc, cctx, false);
	if (tctx)
		sched_apply(sc, tctx, true);
	return sc->plan.nr_rotations > 1 || sc->failed;
}

/*
 * Process context: plan the CPU's latest request into pend, then have the
 * CPU take it (sched_replan_ipi() -> sched_rotid() -> sched_find_saved()).
 * rot_plan() runs preemptible here, never with irqs off.
 */
static void sched_plan_work(struct work_struct *work)
{
	struct sched_cpu *sc = container_of(work, struct sched_cpu, work);
	struct sched_req *q = &sc->wreq;
	struct rot_input in;
	u64 gen, t0, dt;
	int err;
	u32 g;

	raw_spin_lock_irq(&sc->slock);
	if (!sc->req_live || sc->offline) {
		raw_spin_unlock_irq(&sc->slock);
		return;
	}
	*q = sc->req;
	gen = q->gen;
	raw_spin_unlock_irq(&sc->slock);

	for (g = 0; g < q->nr; g++)
		q->groups[g + 1].masks = q->masks + (q->groups[g + 1].masks - sc->req.masks);
	q->groups[0].masks = q->fmasks;
	in.groups = q->foreign ? q->groups : q->groups + 1;
	in.nr_groups = q->foreign ? q->nr + 1 : q->nr;
	in.nr_counters = vpmu_nr_counters();
	t0 = local_clock();
	err = rot_plan(&in, sched_plan_ws(sc->pend.ws), sc->ws_size, &sc->pend.plan);
	dt = local_clock() - t0;

	raw_spin_lock_irq(&sc->slock);
	sc->plans++;
	sc->plan_ns_max = max(sc->plan_ns_max, dt);
	if (gen == sc->gen) {	/* nothing newer asked meanwhile */
		sc->req_err = err;
		if (!err) {
			sc->pend.valid = true;
			sc->pend.nr = q->nr;
			sc->pend.foreign = q->foreign;
			sc->pend.tctx = q->tctx;
			/* sched_take_saved() advances: start at rotation 0 */
			sc->pend.r = sc->pend.plan.nr_rotations ?
				     sc->pend.plan.nr_rotations - 1 : 0;
			memset(sched_acc(sc->pend.ws), 0, SCHED_ACC_BYTES);
			memcpy(sc->pend.key, q->key, q->nr * sizeof(q->key[0]));
			/* leaders not known: the next pass walks for them */
			sc->pend.lead_gen[0] = sc->pend.lead_gen[1] = 0;
			sched_park_pend(sc);
			sc->req_live = false;
		}
	}
	raw_spin_unlock_irq(&sc->slock);
	/*
	 * The CPU takes it now.  No hotplug lock: an offline CPU gives
	 * -ENXIO, and its plans are forgotten anyway.
	 */
	smp_call_function_single(sc->cpu, sched_replan_ipi, NULL, 1);
}

/* ---- classic (perf 6.1 perf_rotate_context) ------------------------ */

static bool classic_software(struct pevt_event *leader)
{
	struct pevt_event *sib;

	if (pevt_vpmu_event_mask(leader))
		return false;
	pevt_for_each_sibling(sib, leader)
		if (pevt_vpmu_event_mask(sib))
			return false;
	return true;
}

static struct pevt_event *classic_to_rotate(struct pevt_context *ctx)
{
	struct pevt_event *leader;

	/*
	 * ctx_event_to_rotate(): first active flexible, else the first one.
	 * In 6.1 software events live in their own (software PMU) context,
	 * so the vPMU context perf rotates holds only groups needing slots:
	 * software-only groups are skipped here to rotate the same list.
	 */
	list_for_each_entry(leader, &ctx->flexible_groups, group_entry)
		if (leader->state == PEVT_STATE_ACTIVE &&
		    !classic_software(leader))
			return leader;
	list_for_each_entry(leader, &ctx->flexible_groups, group_entry)
		if (!classic_software(leader))
			return leader;
	return NULL;
}

static bool sched_classic(struct pevt_context *cctx, struct pevt_context *tctx)
{
	struct pevt_event *cev = NULL, *tev = NULL;
	bool crot = cctx->rotate_necessary;
	bool trot = tctx && tctx->rotate_necessary;

	if (!crot && !trot)
		return false;
	if (trot)
		tev = classic_to_rotate(tctx);
	if (crot)
		cev = classic_to_rotate(cctx);
	if (tctx) {
		tctx->rotate_necessary = 0;
		if (tev || cev)
			ctx_sched_out(tctx, PEVT_EVENT_FLEXIBLE);
	}
	cctx->rotate_necessary = 0;
	if (cev)
		ctx_sched_out(cctx, PEVT_EVENT_FLEXIBLE);
	if (tev) {
		list_move_tail(&tev->group_entry, &tctx->flexible_groups);
		pevt_ctx_key_changed(tctx);
	}
	if (cev) {
		list_move_tail(&cev->group_entry, &cctx->flexible_groups);
		pevt_ctx_key_changed(cctx);
	}
	ctx_sched_in(cctx, PEVT_EVENT_FLEXIBLE);
	if (tctx)
		ctx_sched_in(tctx, PEVT_EVENT_FLEXIBLE);
	return cctx->rotate_necessary || (tctx && tctx->rotate_necessary);
}

/* ---- one scheduling pass on this CPU -------------------------------- */

/*
 * The task context rotid plans with: none if the active one has only
 * software events (they all go on whatever the plan, and such a task
 * coming in must cost no planning and no timer run).
 */
static struct pevt_context *sched_plan_tctx(struct pevt_context *tctx)
{
	return tctx && tctx->nr_hw_events ? tctx : NULL;
}

/* sched_tick_idle()'s check (see there): nothing to rotate now. */
static bool sched_idle_check(struct sched_cpu *sc)
{
	struct pevt_cpu_context *cpuctx = this_cpu_ptr(&pevt_cpu_ctx);
	struct pevt_context *cctx = &cpuctx->ctx;
	int cpu = smp_processor_id();

	return READ_ONCE(sched_policy) == SCHED_ROTID && cctx->active_cpu == cpu &&
	       sc->plan.nr_rotations <= 1 &&
	       sched_lead_known(sc, cctx, sched_plan_tctx(cpuctx->task_ctx),
				vpmu_slots_foreign(cpu));
}

/*
 * End of a switch-in or a pass (irqs off, on this CPU): note for the
 * tick whether the pair now current has nothing to rotate.  What the
 * check reads was just read by the caller, so this costs no page the
 * switch did not touch; the tick that trusts the note reads nothing but
 * the first page of @sc, where its hrtimer is.
 */
static void sched_idle_note(struct sched_cpu *sc)
{
	u32 g;

	sc->verify = READ_ONCE(sched_idle_verify);
	sc->idle = !READ_ONCE(sched_idle_pass) && sched_idle_check(sc);
	/* For the switch-out (sched_task_switch_out()). */
	sc->cpu_off = false;
	if (!sc->valid || (sc->plan.nr_rotations <= 1 && !sc->plan.nr_always_off))
		return;
	for (g = 0; g < sc->nr; g++) {
		u32 pg = sched_pg(sc, g);
		s32 st = sc->plan.state[pg];

		if (sc->key[g].flags & (ROT_F_TASK | ROT_F_PINNED))
			continue;
		if (st == ROT_ALWAYS_OFF ||
		    (st >= 0 && sc->plan.nr_runs[pg] < sc->plan.nr_rotations)) {
			sc->cpu_off = true;
			return;
		}
	}
}

/* classic: perf's greedy pass for both contexts' flexible groups again. */
static void sched_greedy(struct pevt_context *cctx, struct pevt_context *tctx)
{
	if (tctx)
		ctx_sched_out(tctx, PEVT_EVENT_FLEXIBLE);
	ctx_sched_out(cctx, PEVT_EVENT_FLEXIBLE);
	cctx->rotate_necessary = 0;
	ctx_sched_in(cctx, PEVT_EVENT_FLEXIBLE);
	if (tctx) {
		tctx->rotate_necessary = 0;
		ctx_sched_in(tctx, PEVT_EVENT_FLEXIBLE);
	}
}

/*
 * irqs off, on this CPU.  @resched (policy change): classic redoes the
 * greedy pass rather than keep what the other policy placed.  @now: the
 * caller's local_clock() reading, irqs off since: both contexts' time and
 * the rotation's charge are brought up to it (one clock read, not three).
 * Return: true if the tick must keep running.
 */
static bool sched_pass(struct sched_cpu *sc, bool advance, bool resched, u64 now)
{
	struct pevt_cpu_context *cpuctx = this_cpu_ptr(&pevt_cpu_ctx);
	struct pevt_context *cctx = &cpuctx->ctx;
	struct pevt_context *tctx = cpuctx->task_ctx;
	bool more = false;

	if (tctx)
		raw_spin_lock(&tctx->lock);
	raw_spin_lock(&cctx->lock);
	/*
	 * cpuctx->task_ctx only changes on this CPU with irqs off: stable.
	 * A CPU context is active only while its CPU is online
	 * (context.c): never schedule into it otherwise.
	 */
	if (cctx->active_cpu != smp_processor_id())
		goto out;
	pevt_update_context_time_at(cctx, now);
	if (tctx)
		pevt_update_context_time_at(tctx, now);
	if (READ_ONCE(sched_policy) == SCHED_ROTID) {
		int ret = sched_rotid(sc, cctx, sched_plan_tctx(tctx), advance, now);

		more = ret > 0;
		if (ret < 0 && !sc->overflow) {
			/*
			 * The plan is being made: keep what runs, no tick.
			 * (A classic rotation here would reorder the lists,
			 * i.e. change the key the plan is being made for.)
			 * The work's IPI applies it and arms the tick if R > 1.
			 */
			more = false;
		} else if (ret < 0) {
			sc->bypass = true;
			more = advance ? sched_classic(cctx, tctx) :
			       (cctx->rotate_necessary ||
				(tctx && tctx->rotate_necessary));
			sc->bypass = false;
		}
	} else {
		if (resched)
			sched_greedy(cctx, tctx);
		more = advance ? sched_classic(cctx, tctx) :
		       (cctx->rotate_necessary ||
			(tctx && tctx->rotate_necessary));
	}
out:
	raw_spin_unlock(&cctx->lock);
	if (tctx)
		raw_spin_unlock(&tctx->lock);
	sched_idle_note(sc);
	return more;
}

static ktime_t sched_interval(void)
{
	return ms_to_ktime(max(1U, READ_ONCE(mux_interval_ms)));
}

/* Longest tick or IPI pass (irqs off), for the plan file. */
static void sched_pass_time(struct sched_cpu *sc, u64 t0)
{
	u64 dt = local_clock() - t0;

	if (dt > sc->pass_ns_max)
		WRITE_ONCE(sc->pass_ns_max, dt);
}

/*
 * A tick for a pair whose plan has one rotation, found as it was (same
 * pair, slots and key generations) and with every group on since the
 * last full pass: nothing moves, nothing is misplaced, and the tick
 * returns at once.  In many-tasks ~45% of the ticks meet such a pair
 * (the ping-pong task whose groups fit, or the idle task); the pass
 * (sched_unplace(), sched_apply() twice) cost them what a rotation costs
 * (fairness.md "Ticks with nothing to rotate"), and so did, under TCG,
 * the locks and clock reads around it (fairness.md "An idle tick without
 * locks"), and then the pages the check itself reads (the contexts, the
 * vPMU's per-CPU slots, the module's parameters: fairness.md "An idle
 * tick on one page"); stock's tick returns as early.
 *
 * No ctx lock: this CPU's active contexts change only on this CPU with
 * irqs off (ctx_function_call(), the switch hooks), and so does the
 * cached plan (the tick, the switch hooks, sched_replan_ipi(); the work
 * writes only pend and the parked plans), so nothing read below can
 * change under the hrtimer.  sched_rotid() takes the locks for
 * everything else.
 */
static bool sched_tick_idle(struct sched_cpu *sc)
{
	if (sc->idle && !sc->unplaced) {
		if (!sc->verify || sched_idle_check(sc)) {
			sc->idle_ticks++;
			sc->idle_cached++;
			return true;
		}
		sc->idle_stale++;	/* a writer that did not clear it */
		sc->idle = false;
	}
	if (!sched_idle_check(sc))
		return false;
	sc->idle_ticks++;
	if (sc->unplaced || READ_ONCE(sched_idle_pass)) {
		sc->idle_passes++;
		return false;
	}
	sc->idle = true;
	return true;
}

static enum hrtimer_restart pevt_sched_tick(struct hrtimer *t)
{
	struct sched_cpu *sc = container_of(t, struct sched_cpu, timer);
	bool more;
	u64 t0;

	/*
	 * A pinned hrtimer of a CPU going offline migrates: its contexts
	 * are not this CPU's.  The CPU's context is scheduled out anyway.
	 */
	if (sc->cpu != smp_processor_id() || sc->offline)
		return HRTIMER_NORESTART;
	sc->runs++;
	if (sched_tick_idle(sc))
		return HRTIMER_NORESTART;
	t0 = local_clock();
	sc->in_tick = true;
	more = sched_pass(sc, true, false, t0);
	sc->in_tick = false;
	sched_pass_time(sc, t0);
	if (!more)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, sched_interval());
	return HRTIMER_RESTART;
}

/* The tick's address, for the bench instrument's kretprobe (probe.c). */
void *pevt_sched_tick_fn(void)
{
	return pevt_sched_tick;
}

static void sched_arm(struct sched_cpu *sc, ktime_t delay)
{
	if (sc->in_tick || sc->offline || !sched_ready)
		return;
	if (!hrtimer_is_queued(&sc->timer))
		hrtimer_start(&sc->timer, delay, HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * IPI (or local with irqs off): re-plan now, without advancing.  @info
 * set: the policy changed; forget the plans and hand over at once.
 */
static void sched_replan_ipi(void *info)
{
	struct sched_cpu *sc = this_cpu_read(sched_cpus);
	u64 t0 = local_clock();

	if (sc->in_tick || sc->offline)
		return;
	if (info) {	/* policy change: forget the plans */
		raw_spin_lock(&sc->slock);
		sched_forget(sc);
		raw_spin_unlock(&sc->slock);
	}
	if (sched_pass(sc, false, info != NULL, t0))
		sched_arm(sc, sched_interval());
	else if (READ_ONCE(sched_policy) == SCHED_ROTID && sc->valid)
		hrtimer_try_to_cancel(&sc->timer);
	sched_pass_time(sc, t0);
}

/* The replan IPI's address, for the bench instrument (probe.c). */
void *pevt_sched_replan_fn(void)
{
	return sched_replan_ipi;
}

/* ---- hooks ------------------------------------------------------- */

/**
 * sched_ctx_flexible_in() - rotid: schedule @ctx's flexible groups by plan
 * @ctx: a context active on this CPU, ctx->lock held, irqs off
 *
 * Called by ctx_sched_in() for the flexible pass (context switch, event
 * install).  Uses the cached plan of this CPU if @ctx's groups are exactly
 * those the plan was made for; never plans.  On a miss, kicks the timer to
 * plan at once and lets the caller do perf's greedy pass meanwhile.
 *
 * Return: true if done (the caller skips its greedy pass).
 */
bool sched_ctx_flexible_in(struct pevt_context *ctx)
{
	struct pevt_cpu_context *cpuctx = this_cpu_ptr(&pevt_cpu_ctx);
	bool task = ctx != &cpuctx->ctx;
	u32 flag = task ? ROT_F_TASK : 0;
	u32 n, i, j, nm = 0;
	struct sched_cpu *sc;

	if (!READ_ONCE(sched_ready) || READ_ONCE(sched_policy) != SCHED_ROTID)
		return false;
	sc = this_cpu_read(sched_cpus);
	if (sc->bypass)
		return false;
	if (task && ctx != cpuctx->task_ctx)
		return false;
	/* Software only: the greedy pass puts every group on; no plan. */
	if (task && !ctx->nr_hw_events)
		return false;
	if (!sc->valid || (task && sc->tctx != ctx) ||
	    sc->foreign != vpmu_slots_foreign(smp_processor_id()))
		goto miss;
	/*
	 * This context's part of lead[] matched its groups at its current
	 * key generation (a walk of the tick, of the switch-in, or one of
	 * ours, parked with the plan and taken back): nothing to compare.
	 */
	if (sc->lead_gen[task] == ctx->key_gen && !READ_ONCE(sched_key_walk))
		goto apply;
	sc->switch_walks++;
	n = 0;
	if (sched_collect(sc, ctx, flag, &n, &nm, false))
		goto miss;
	/* This context's part of the key, in order. */
	for (i = 0, j = 0; i < sc->nr; i++) {
		if ((sc->key[i].flags & ROT_F_TASK) != flag)
			continue;
		if (j >= n || !sched_key_eq(&sc->key[i], &sc->nkey[j]))
			goto miss;
		sc->lead[i] = sc->nlead[j];
		j++;
	}
	if (j != n)
		goto miss;
	sc->lead_gen[task] = ctx->key_gen;	/* this context's part is fresh */
	/*
	 * sc->lead[] of the other context may be stale here: sched_apply()
	 * only touches groups of @ctx, whose pointers were just refreshed.
	 */
apply:
	sc->failed = false;
	sched_apply(sc, ctx, task);
	/* e.g. the CPU context coming back online: its tick was stopped */
	if (sc->plan.nr_rotations > 1 || sc->failed)
		sched_arm(sc, sched_interval());
	return true;
miss:
	sc->unplaced = true;	/* the caller's greedy pass places the groups */
	sched_arm(sc, 0);
	return false;
}

/**
 * sched_task_switch_in() - rotid: @tctx comes in on this CPU
 * @cctx: this CPU's context
 * @tctx: the task context being scheduled in
 *
 * Called by ctx_task_sched_in() with both context locks held, irqs off,
 * before the flexible passes.  If a plan parked on this CPU was made for
 * exactly this pair, make it current now (a key comparison and a swap,
 * no planning), so the passes that follow apply it: without this every
 * switch between two monitored tasks met a miss and took a zero-delay
 * timer run to swap the same plan in (pevt bench fairness measured it as
 * one timer run per switch).  Otherwise leave it to the miss path.
 *
 * A plan parked for this very pair (the same task context) while neither
 * context's key generation has moved since is found without a walk: its
 * lead[] are still the groups' leaders, and the flexible passes then
 * need no walk either.  Until 2026-12-02 every switch-in walked both
 * contexts here to build the key, and each flexible pass walked its own
 * again to compare.
 */
void sched_task_switch_in(struct pevt_context *cctx, struct pevt_context *tctx)
{
	struct sched_saved *sv;
	struct sched_cpu *sc;
	u64 foreign;
	u32 n;

	if (!READ_ONCE(sched_ready) || READ_ONCE(sched_policy) != SCHED_ROTID)
		return;
	sc = this_cpu_read(sched_cpus);
	if (sc->bypass || sc->in_tick || (sc->valid && sc->tctx == tctx))
		return;
	foreign = vpmu_slots_foreign(smp_processor_id());
	raw_spin_lock(&sc->slock);
	sc->switch_ins++;
	sv = sched_lookup_gen(sc, cctx, tctx, foreign);
	if (sv)
		sched_take_saved(sc, sv, tctx);
	raw_spin_unlock(&sc->slock);
	if (!sv) {
		sc->switch_walks += 1 + !!tctx;
		if (sched_build(sc, cctx, tctx, &n, false))
			return;
		raw_spin_lock(&sc->slock);
		sv = sched_lookup_saved(sc, n, foreign);
		if (sv) {
			sched_take_saved(sc, sv, tctx);
			sched_lead_walked(sc, cctx, tctx, n);
		}
		raw_spin_unlock(&sc->slock);
	}
	if (sv && sc->plan.nr_rotations > 1)
		sched_arm(sc, sched_interval());
}

/**
 * sched_task_switch_done() - a task context's switch-in is over
 *
 * Called by ctx_task_sched_in() after the flexible passes, irqs off: note
 * for the tick whether the new pair has nothing to rotate (sc->idle).
 */
void sched_task_switch_done(void)
{
	if (!READ_ONCE(sched_ready))
		return;
	sched_idle_note(this_cpu_read(sched_cpus));
}

/**
 * sched_task_switch_out() - a task context with hardware events leaves
 *
 * Called by ctx_task_sched_out(), irqs off: the pair the tick's note was
 * for is gone (the next switch-in, or the next pass, notes again).
 *
 * If the pair's plan left a CPU flexible group off (rotating, or
 * ALWAYS_OFF behind the task's pinned groups; sc->cpu_off, noted with
 * sc->idle), the tick runs at the next interval: should no
 * task with hardware events come in (the CPU idles, or runs a task pevt
 * does not monitor), the CPU context's groups get the slots the task
 * gave back at that tick, as stock's rotation gives them.  Until
 * 2026-12-05 nothing armed it there: a CPU group behind a sleeping
 * task's pinned group got no time while the task slept (fairness.md "An
 * idle tick on one page").  A task that comes in first takes its own
 * plan, and the tick finds that.
 */
void sched_task_switch_out(void)
{
	struct sched_cpu *sc;

	if (!READ_ONCE(sched_ready))
		return;
	sc = this_cpu_read(sched_cpus);
	sc->idle = false;
	if (sc->cpu_off)
		sched_arm(sc, sched_interval());
}

/*
 * Clear @cpu's note (sc->idle): what it was made from may have changed.
 * Any context; sched_ready checked by the caller.
 */
static void sched_idle_clear(int cpu)
{
	struct sched_cpu *sc = per_cpu(sched_cpus, cpu);

	if (sc && READ_ONCE(sc->idle))
		WRITE_ONCE(sc->idle, false);
}

/**
 * sched_key_changed() - @ctx's key generation moved
 * @ctx: the context (ctx->lock held, or not yet visible)
 *
 * Where @ctx is active, the tick's note may be for its old groups: clear
 * it.  An active context changes only on its CPU with irqs off, so the
 * CPU is this one, but any CPU's note may be cleared: that only costs
 * its next tick the full check.
 */
void sched_key_changed(struct pevt_context *ctx)
{
	int cpu = READ_ONCE(ctx->active_cpu);

	if (READ_ONCE(sched_ready) && cpu >= 0 && cpu < nr_cpu_ids)
		sched_idle_clear(cpu);
}

/**
 * sched_slots_taken() - the stock side took a slot of @cpu
 * @cpu: the CPU (this one, irqs off: the stock PMU's add)
 *
 * The note was made around the slots held before.  (Slots given back go
 * through sched_slots_changed().)
 */
void sched_slots_taken(int cpu)
{
	if (READ_ONCE(sched_ready))
		sched_idle_clear(cpu);
}

/**
 * sched_rotation_needed() - a flexible group did not fit on this CPU
 *
 * Called by ctx_sched_in() (irqs off, on this CPU): arm the tick.
 */
void sched_rotation_needed(void)
{
	struct sched_cpu *sc;

	if (!READ_ONCE(sched_ready))
		return;
	sc = this_cpu_read(sched_cpus);
	sc->unplaced = true;
	sched_arm(sc, READ_ONCE(sched_policy) == SCHED_ROTID && !sc->overflow ?
		  0 : sched_interval());
}

/**
 * sched_ctx_changed() - the event set of @ctx changed: re-plan
 * @ctx: the context; process context, no lock held (ctx->mutex released)
 *
 * Re-plans on the CPU where @ctx is active (a CPU context: its CPU), so
 * the plan is ready before the next tick or switch.  A task that moves
 * meanwhile meets a cache miss on its new CPU, which plans then.
 */
void sched_ctx_changed(struct pevt_context *ctx)
{
	int cpu = ctx->cpu >= 0 ? ctx->cpu : READ_ONCE(ctx->active_cpu);

	if (!sched_ready || cpu < 0)
		return;
	cpus_read_lock();
	if (cpu_online(cpu))
		smp_call_function_single(cpu, sched_replan_ipi, NULL, 1);
	cpus_read_unlock();
}

/**
 * sched_slots_changed() - the stock side took or gave back a slot of @cpu
 * @cpu: the CPU
 *
 * rotid plans around the slots the stock side holds (vpmu_slots_foreign()).
 * From the stock PMU's del() (on @cpu, irqs off): if the current plan was
 * made around other slots, kick the tick to replan now.  From process
 * context (the debugfs holder): replan on @cpu by IPI.
 */
void sched_slots_changed(int cpu)
{
	struct sched_cpu *sc;

	if (!READ_ONCE(sched_ready) || READ_ONCE(sched_policy) != SCHED_ROTID)
		return;
	sched_idle_clear(cpu);	/* the note was made around the slots held before */
	if (irqs_disabled()) {
		if (cpu != smp_processor_id())
			return;
		sc = this_cpu_read(sched_cpus);
		/*
		 * Not while pevt has no group here: a plan of nothing does
		 * not depend on the slots, and stock's switches move its
		 * slots thousands of times a second (each a pevt timer run
		 * for nothing until 2026-12-02: 3966 in a 1 s stock run of
		 * many-tasks, fairness_test).  Groups that come later are planned
		 * around the slots of then.
		 */
		if (sc->valid && sc->nr && sc->foreign != vpmu_slots_foreign(cpu)) {
			sc->slot_kicks++;
			sched_arm(sc, 0);
		}
		return;
	}
	cpus_read_lock();
	if (cpu_online(cpu))
		smp_call_function_single(cpu, sched_replan_ipi, NULL, 1);
	cpus_read_unlock();
}

/* ---- parameters ---------------------------------------------------- */

static int policy_set(const char *val, const struct kernel_param *kp)
{
	int p;

	if (sysfs_streq(val, "rotid"))
		p = SCHED_ROTID;
	else if (sysfs_streq(val, "classic"))
		p = SCHED_CLASSIC;
	else
		return -EINVAL;
	WRITE_ONCE(sched_policy, p);
	if (sched_ready) {
		cpus_read_lock();
		on_each_cpu(sched_replan_ipi, (void *)1, 1);
		cpus_read_unlock();
	}
	return 0;
}

static int policy_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  READ_ONCE(sched_policy) == SCHED_ROTID ? "rotid" : "classic");
}

static const struct kernel_param_ops policy_ops = {
	.set = policy_set,
	.get = policy_get,
};
module_param_cb(policy, &policy_ops, NULL, 0644);
MODULE_PARM_DESC(policy, "context scheduler policy: rotid (default) or classic");

static int interval_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (v < 1 || v > 10000)
		return -EINVAL;
	WRITE_ONCE(mux_interval_ms, v);
	/* A running timer picks the new interval at its next expiry. */
	return 0;
}

static const struct kernel_param_ops interval_ops = {
	.set = interval_set,
	.get = param_get_uint,
};
module_param_cb(mux_interval_ms, &interval_ops, &mux_interval_ms, 0644);
MODULE_PARM_DESC(mux_interval_ms, "multiplexing interval in ms (default 4)");

/* ---- introspection: debugfs pevt_sched/plan -------------------------- */

static struct dentry *sched_dbg_dir;

static const char *sched_state_name(s32 st)
{
	switch (st) {
	case ROT_ALWAYS_ON:	return "always_on";
	case ROT_ALWAYS_OFF:	return "always_off";
	case ROT_PINNED:	return "pinned";
	case ROT_ERROR:		return "error";
	}
	return "rot";
}

/*
 * One block per CPU:
 *   cpu C policy P valid V overflow O R n r cur ticks T plans N groups G
 *   group I id ID task 0|1 pinned 0|1 members M state NAME rot ID runs K
 */
static int sched_dbg_show(struct seq_file *m, void *v)
{
	struct sched_cpu *snap;
	int cpu;

	snap = kvmalloc(sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return -ENOMEM;
	for_each_online_cpu(cpu) {
		struct sched_cpu *sc = per_cpu(sched_cpus, cpu);
		s32 state[SCHED_MAX_GROUPS];
		u32 runs[SCHED_MAX_GROUPS];
		unsigned long flags;
		u32 g, R;

		raw_spin_lock_irqsave(&sc->slock, flags);
		snap->valid = sc->valid;
		snap->overflow = sc->overflow;
		snap->nr = sc->nr;
		memcpy(snap->key, sc->key, sizeof(sc->key));
		R = sc->valid ? sc->plan.nr_rotations : 0;
		snap->r = sc->r;
		snap->ticks = sc->ticks;
		snap->plans = sc->plans;
		snap->hits = sc->hits;
		snap->runs = sc->runs;
		snap->plan_ns_max = sc->plan_ns_max;
		snap->pass_ns_max = sc->pass_ns_max;
		snap->tick_outs = sc->tick_outs;
		snap->key_walks = sc->key_walks;
		snap->switch_ins = sc->switch_ins;
		snap->switch_walks = sc->switch_walks;
		snap->idle_ticks = sc->idle_ticks;
		snap->idle_passes = sc->idle_passes;
		snap->idle_cached = sc->idle_cached;
		snap->idle_stale = sc->idle_stale;
		snap->slot_kicks = sc->slot_kicks;
		for (g = 0; sc->valid && g < sc->nr; g++) {
			state[g] = sc->plan.state[sched_pg(sc, g)];
			runs[g] = sc->plan.nr_runs[sched_pg(sc, g)];
		}
		snap->foreign = sc->foreign;
		raw_spin_unlock_irqrestore(&sc->slock, flags);

		seq_printf(m, "cpu %d policy %s valid %d overflow %d R %u r %u ticks %llu plans %llu groups %u hits %llu timer %llu foreign %#llx plan_ns_max %llu pass_ns_max %llu tick_outs %llu key_walks %llu switch_ins %llu switch_walks %llu idle_ticks %llu idle_passes %llu slot_kicks %llu idle_cached %llu idle_stale %llu\n",
			   cpu, READ_ONCE(sched_policy) == SCHED_ROTID ? "rotid" : "classic",
			   snap->valid, snap->overflow, R, snap->r, snap->ticks,
			   snap->plans, snap->valid ? snap->nr : 0, snap->hits,
			   snap->runs, snap->valid ? snap->foreign : 0,
			   snap->plan_ns_max, snap->pass_ns_max, snap->tick_outs,
			   snap->key_walks, snap->switch_ins, snap->switch_walks,
			   snap->idle_ticks, snap->idle_passes, snap->slot_kicks,
			   snap->idle_cached, snap->idle_stale);
		for (g = 0; snap->valid && g < snap->nr; g++)
			seq_printf(m, "group %u id %llu task %d pinned %d members %u state %s rot %d runs %u\n",
				   g, snap->key[g].id,
				   !!(snap->key[g].flags & ROT_F_TASK),
				   !!(snap->key[g].flags & ROT_F_PINNED),
				   snap->key[g].nr_members,
				   sched_state_name(state[g]),
				   state[g] >= 0 ? state[g] : -1, runs[g]);
	}
	kvfree(snap);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sched_dbg);

/* ---- CPU hotplug ----------------------------------------------------- */

static enum cpuhp_state sched_cpuhp_state;

/*
 * Registered after context.c's callbacks: online runs after the CPU
 * context is active again, offline before it goes inactive.  Both run on
 * the CPU concerned.  The tick of a CPU going down is cancelled and
 * cannot be re-armed (a pinned hrtimer would migrate to another CPU);
 * coming up, the CPU plans and starts its tick afresh.
 */
static int sched_cpu_online(unsigned int cpu)
{
	struct sched_cpu *sc = per_cpu(sched_cpus, cpu);

	local_irq_disable();
	sc->offline = false;
	if (sched_pass(sc, false, true, local_clock()))
		sched_arm(sc, sched_interval());
	local_irq_enable();
	return 0;
}

static int sched_cpu_offline(unsigned int cpu)
{
	struct sched_cpu *sc = per_cpu(sched_cpus, cpu);
	unsigned long flags;

	raw_spin_lock_irqsave(&sc->slock, flags);
	sc->offline = true;
	sched_forget(sc);
	raw_spin_unlock_irqrestore(&sc->slock, flags);
	hrtimer_cancel(&sc->timer);
	return 0;
}

/* ---- init / exit ----------------------------------------------------- */

/**
 * pevt_sched_init() - preallocate the per-CPU planner workspaces, hook hotplug
 *
 * Return: 0, -ENOMEM or the error of cpuhp_setup_state().
 */
int pevt_sched_init(void)
{
	/* + 1: the stock side's slots, planned as a pinned group */
	size_t ws = rot_workspace_size(SCHED_MAX_GROUPS + 1, vpmu_nr_counters());
	size_t wsa = SCHED_ACC_BYTES + ws;	/* sched_acc(), then rot_plan()'s */
	int cpu, i, ret = -ENOMEM;

	for_each_possible_cpu(cpu) {
		struct sched_cpu *sc = kvzalloc(sizeof(*sc), GFP_KERNEL);

		if (!sc)
			goto err;
		per_cpu(sched_cpus, cpu) = sc;
		sc->cpu = cpu;
		INIT_WORK(&sc->work, sched_plan_work);
		init_irq_work(&sc->kick, sched_kick);
		raw_spin_lock_init(&sc->slock);
		hrtimer_init(&sc->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		sc->timer.function = pevt_sched_tick;
		sc->ws = kvzalloc(wsa, GFP_KERNEL);
		if (!sc->ws)
			goto err;
		sc->ws_size = ws;
		sc->pend.ws = kvzalloc(wsa, GFP_KERNEL);
		if (!sc->pend.ws)
			goto err;
		for (i = 0; i < SCHED_SAVED; i++) {
			sc->saved[i].ws = kvzalloc(wsa, GFP_KERNEL);
			if (!sc->saved[i].ws)
				goto err;
		}
	}
	WRITE_ONCE(sched_ready, true);
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "pevt:sched",
				sched_cpu_online, sched_cpu_offline);
	if (ret < 0) {
		WRITE_ONCE(sched_ready, false);
		goto err;
	}
	sched_cpuhp_state = ret;
	sched_dbg_dir = debugfs_create_dir("pevt_sched", NULL);
	debugfs_create_file("plan", 0444, sched_dbg_dir, NULL, &sched_dbg_fops);
	return 0;
err:
	for_each_possible_cpu(cpu) {
		struct sched_cpu *sc = per_cpu(sched_cpus, cpu);

		if (sc) {
			kvfree(sc->ws);
			kvfree(sc->pend.ws);
			for (i = 0; i < SCHED_SAVED; i++)
				kvfree(sc->saved[i].ws);
		}
		kvfree(sc);
		per_cpu(sched_cpus, cpu) = NULL;
	}
	return ret;
}

/**
 * pevt_sched_exit() - stop the timers, free the workspaces
 *
 * No event exists any more (chardev gone), so nothing re-arms a timer.
 */
void pevt_sched_exit(void)
{
	int cpu, i;

	cpuhp_remove_state(sched_cpuhp_state);
	WRITE_ONCE(sched_ready, false);
	debugfs_remove_recursive(sched_dbg_dir);
	for_each_possible_cpu(cpu) {
		struct sched_cpu *sc = per_cpu(sched_cpus, cpu);

		if (!sc)
			continue;
		irq_work_sync(&sc->kick);
		cancel_work_sync(&sc->work);
		hrtimer_cancel(&sc->timer);
		kvfree(sc->ws);
		kvfree(sc->pend.ws);
		for (i = 0; i < SCHED_SAVED; i++)
			kvfree(sc->saved[i].ws);
		kvfree(sc);
		per_cpu(sched_cpus, cpu) = NULL;
	}
}
