// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The merge rules every run total uses (core/totals.h), against sums worked out by hand: what
 * adds, what takes the longest or the shortest, and when a counter or a cgroup file's figure
 * keeps its value under each validity rule.
 */
#include "check.h"
#include "core/totals.h"

/* An interval's amounts: a wait from min_ns to max_ns (none when 0), counter 0 valid or not. */
static struct cg_amounts part(uint64_t oncpu_ns, uint64_t min_ns, uint64_t max_ns,
			      bool counter_valid, bool throttled_valid)
{
	struct cg_amounts a = { 0 };

	a.tasks = 2;
	a.time_ns[CG_ONCPU] = oncpu_ns;
	a.count[CG_NVCSW] = 3;
	a.runq_max_ns = max_ns;
	a.runq_min_inv = min_ns ? ~min_ns : 0;
	a.counter[0] = 1000;
	a.counter_valid[0] = counter_valid;
	a.counter[1] = 7; /* past nr_events: never added */
	a.counter_valid[1] = true;
	a.cgroupfs[CG_FS_THROTTLED_NS] = 50;
	if (throttled_valid)
		a.cgroupfs_valid = 1u << CG_FS_THROTTLED_NS;
	return a;
}

static void check_rule(enum totals_validity v)
{
	struct cg_amounts t, a = part(10, 400, 900, true, true),
			     b = part(5, 200, 700, false, false), c = part(1, 0, 0, true, true);

	totals_init(&t, v);
	totals_add(&t, &a, 1, v);
	totals_add(&t, &b, 1, v);
	totals_add(&t, &c, 1, v);
	CHECK(t.tasks == 6);
	CHECK(t.time_ns[CG_ONCPU] == 16);
	CHECK(t.count[CG_NVCSW] == 9);
	CHECK(t.runq_max_ns == 900);
	/* the shortest of the two waits; c had none, and must not make it 0 */
	CHECK(t.runq_min_inv == ~(uint64_t)200);
	/* b's counter and cgroup figure had no value: the others' are added, never b's */
	CHECK(t.counter[0] == 2000);
	CHECK(t.cgroupfs[CG_FS_THROTTLED_NS] == 100);
	CHECK(t.counter[1] == 0);
	CHECK(t.counter_valid[0] == (v == TOTALS_VALID_ANY));
	CHECK(!!(t.cgroupfs_valid & (1u << CG_FS_THROTTLED_NS)) == (v == TOTALS_VALID_ANY));
	/* a figure no part read: invalid under ANY, and under ALL only while none was missing */
	CHECK(!(t.cgroupfs_valid & (1u << CG_FS_PERIODS)));
	/* --light's amounts stay --light's in any sum */
	CHECK(!t.light);
	b.light = true;
	totals_add(&t, &b, 1, v);
	totals_add(&t, &c, 1, v);
	CHECK(t.light);
}

/* The label table: found by name, listed in first-seen order, and gone once unlinked. */
static void check_table(void)
{
	static const char *const names[] = { "broker", "bookie-1", "", "bookie-2",
					     "(removed cgroups)" };
	struct totals_label labels[5], *l;
	struct cg_record r = { .tasks = 9, .cgid = 42 };
	struct totals_table t;
	int i;

	CHECK(!totals_table_init(&t, 2));
	for (i = 0; i < 5; i++) {
		totals_label_init(&labels[i], names[i], TOTALS_VALID_ALL);
		totals_table_link(&t, &labels[i]);
	}
	CHECK(t.nr == 5);
	for (i = 0; i < 5; i++)
		CHECK(totals_table_find(&t, names[i]) == &labels[i]);
	CHECK(!totals_table_find(&t, "bookie"));
	totals_table_unlink(&t, &labels[0]);
	totals_table_unlink(&t, &labels[3]);
	totals_table_unlink(&t, &labels[4]);
	CHECK(t.nr == 2 && !totals_table_find(&t, "broker") && !totals_table_find(&t, "bookie-2"));
	CHECK(t.first == &labels[1] && t.first->next == &labels[2] && !labels[2].next);
	CHECK(t.last == &labels[2] && labels[2].prev == &labels[1] && !labels[1].prev);

	/* a record of the label's cgroup: its tasks and cgroup the label's now, amounts added */
	r.time_ns[CG_ONCPU] = 5;
	l = totals_table_find(&t, "");
	totals_label_add(l, &r, 0, TOTALS_VALID_ALL);
	r.tasks = 3;
	totals_label_add(l, &r, 0, TOTALS_VALID_ALL);
	CHECK(l->sum.tasks == 3 && l->cgid == 42 && l->sum.time_ns[CG_ONCPU] == 10);
	totals_table_fini(&t);
}

int main(void)
{
	struct cg_amounts t, a = part(10, 400, 900, true, true);
	struct cg_record r;
	struct cg_hist h = { .count = 4 };

	check_rule(TOTALS_VALID_ALL);
	check_rule(TOTALS_VALID_ANY);
	check_table();

	/* ALL: parts that all had a value keep it */
	totals_init(&t, TOTALS_VALID_ALL);
	totals_add(&t, &a, 1, TOTALS_VALID_ALL);
	totals_add(&t, &a, 1, TOTALS_VALID_ALL);
	CHECK(t.counter_valid[0] && t.counter[0] == 2000);
	CHECK(t.cgroupfs_valid == 1u << CG_FS_THROTTLED_NS);

	/* ANY: empty totals have nothing valid */
	totals_init(&t, TOTALS_VALID_ANY);
	CHECK(!t.counter_valid[0] && !t.cgroupfs_valid && !t.tasks);

	/* a record of totals: the amounts and the waits, nothing left from before */
	memset(&r, 0xff, sizeof(r));
	totals_record(&r, &a, &h);
	CHECK(r.time_ns[CG_ONCPU] == 10 && r.runq_max_ns == 900 && r.runq_hist.count == 4);
	CHECK(!r.name && !r.nr_preempters && !r.busiest.on_cpu_ns);
	totals_record(&r, &a, NULL);
	CHECK(!r.runq_hist.count);
	return check_done();
}
