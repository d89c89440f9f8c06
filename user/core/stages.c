// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/derived.h"
#include "lib/hashtab.h"
#include "lib/json_util.h"
#include "lib/message.h"
#include "core/stages.h"

/* A thread of a container that was serial in some interval, from its first sight on. */
struct stage_thread {
	struct hash_node node; /* by tid */
	uint32_t tid;
	uint32_t pid;
	char comm[CG_COMM_LEN + 1];
	const char *pool;	 /* one of the container's pools' names */
	uint64_t first_interval; /* the interval of its first sight, counted from 1 */
	uint64_t last_interval;	 /* of its exit; 0 while it lives */
	uint64_t elapsed_before; /* the run's time before its first interval */
	uint64_t lived_ns;	 /* its intervals' time, once it exited */
	uint64_t uncovered_ns; /* of its intervals' time, what it was not seen in (partial ones) */
	uint64_t serial;       /* its serial intervals (interval_serial()) */
	uint64_t serial_ns;    /* the time it was seen in over those */
	uint64_t serial_on_ns; /* what it ran and waited for a CPU in those */
	uint64_t serial_runq_ns;
	uint64_t time_ns[CG_THREAD_TIMES]; /* since its first sight */
	struct stage_thread *next_gone; /* exited serial stages: out of the table, its tid free */
};

struct stage_pool {
	struct hash_node node; /* by name */
	char name[CG_COMM_LEN + 8];
	uint64_t time_ns[CG_THREAD_TIMES];
};

struct stage_container {
	struct hash_node node; /* by name */
	char *name;
	struct hash_table threads;
	struct hash_table pools;
	struct stage_thread *gone;
	struct stage_container *next;
};

struct stages {
	struct hash_table containers;
	struct stage_container *first, **tail;
	uint64_t intervals;  /* added so far */
	uint64_t elapsed_ns; /* their time */
};

struct stages *stages__new(void)
{
	struct stages *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	if (hash_table_init(&st->containers, 16)) {
		free(st);
		errno = ENOMEM;
		return NULL;
	}
	st->tail = &st->first;
	return st;
}

static bool container_is(const struct hash_node *n, const void *name)
{
	return !strcmp(container_of(n, struct stage_container, node)->name, name);
}

static bool pool_is(const struct hash_node *n, const void *name)
{
	return !strcmp(container_of(n, struct stage_pool, node)->name, name);
}

static bool thread_is(const struct hash_node *n, const void *tid)
{
	return container_of(n, struct stage_thread, node)->tid == *(const uint32_t *)tid;
}

static struct stage_container *container_get(struct stages *st, const char *name)
{
	struct stage_container *c;
	struct hash_node *n;

	n = hash_table_find(&st->containers, hash_string(name), container_is, name);
	if (n)
		return container_of(n, struct stage_container, node);
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = strdup(name);
	if (!c->name || hash_table_init(&c->threads, 64) || hash_table_init(&c->pools, 16)) {
		free(c->name);
		hash_table_fini(&c->threads);
		free(c);
		return NULL;
	}
	hash_table_add(&st->containers, &c->node, hash_string(name));
	*st->tail = c;
	st->tail = &c->next;
	return c;
}

static struct stage_pool *pool_get(struct stage_container *c, const char *name)
{
	struct stage_pool *p;
	struct hash_node *n;

	n = hash_table_find(&c->pools, hash_string(name), pool_is, name);
	if (n)
		return container_of(n, struct stage_pool, node);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	snprintf(p->name, sizeof(p->name), "%s", name);
	hash_table_add(&c->pools, &p->node, hash_string(name));
	return p;
}

static uint64_t lived(const struct stages *st, const struct stage_thread *t)
{
	return (t->last_interval ? t->last_interval : st->intervals) - t->first_interval + 1;
}

static uint64_t lived_ns(const struct stages *st, const struct stage_thread *t)
{
	return t->last_interval ? t->lived_ns : st->elapsed_ns - t->elapsed_before;
}

/*
 * The rule of docs/metrics.md: serial over at least half of the time it was seen in, each
 * interval weighing what of it the thread covered (its first and last are partial), and over an
 * interval's time at least (the run's mean interval): a process that lives a millisecond and
 * spins through it, as each /bin/true of a churn does, is no stage.
 */
static bool thread_serial(const struct stages *st, const struct stage_thread *t)
{
	uint64_t seen = lived_ns(st, t),
		 interval = st->intervals ? st->elapsed_ns / st->intervals : 0;

	seen = seen > t->uncovered_ns ? seen - t->uncovered_ns : 0;
	return t->serial && 2 * t->serial_ns >= seen && t->serial_ns >= interval;
}

static uint64_t times_sum(const uint64_t *time_ns)
{
	uint64_t sum = 0;
	int s;

	for (s = 0; s < CG_THREAD_TIMES; s++)
		sum += time_ns[s];
	return sum;
}

/*
 * What of its interval of interval_ns thread rec was seen in: all of it between its first
 * interval and its last; in those, the time its states add up to (from its first sight, to its
 * exit), never more than the interval. (A wait still open at an interval's end is in the next
 * one's run_delay: a sum may fall short by it.)
 */
static uint64_t thread_covered(const struct cg_thread_rec *rec, uint64_t interval_ns)
{
	uint64_t sum = times_sum(rec->time_ns);

	if (rec->intervals > 1 && !rec->exited)
		return interval_ns;
	return sum < interval_ns ? sum : interval_ns;
}

/*
 * A thread first kept after its first interval: what of its intervals before this one it was
 * not seen in (its first, partial), from its times since its first sight.
 */
static uint64_t uncovered_before(const struct cg_thread_rec *rec, uint64_t interval_ns)
{
	uint64_t span = rec->lived_ns > interval_ns ? rec->lived_ns - interval_ns : 0;
	uint64_t total = times_sum(rec->total_ns), now = times_sum(rec->time_ns);
	uint64_t seen = total > now ? total - now : 0;

	return span > seen ? span - seen : 0;
}

/*
 * Whether a thread's interval is serial, by the verdict's rule (core/derived.h): it is its
 * container's hungriest thread, it wanted a CPU (ran or waited on a run queue) for
 * STAGES_SERIAL_SHARE of what it covered or more, no other thread wanted that much of the
 * interval, and the others together ran less than STAGES_SERIAL_REST_SHARE of what it wanted.
 */
static bool interval_serial(const struct cg_thread_rec *rec, uint64_t covered,
			    const struct cg_record *container, uint64_t interval_ns)
{
	double wanted = (double)rec->time_ns[CG_ONCPU] + (double)rec->time_ns[CG_RUNQ];
	double others = (double)container->time_ns[CG_ONCPU] - (double)rec->time_ns[CG_ONCPU];

	return covered && container->hungriest.tid == rec->tid &&
	       wanted >= STAGES_SERIAL_SHARE * (double)covered &&
	       container->runner_up_wanted_ns < STAGES_SERIAL_SHARE * (double)interval_ns &&
	       others < STAGES_SERIAL_REST_SHARE * wanted;
}

/*
 * A thread's record of this interval. Only a thread serial in some interval is kept (from that
 * interval on): its record says since when it lived and what it did, so that the 10,000 idle
 * threads of a pool cost the summary nothing.
 */
static int thread_add(struct stages *st, struct stage_container *c,
		      const struct cg_interval_thread *it, const struct cg_record *container,
		      uint64_t interval_ns)
{
	const struct cg_thread_rec *rec = it->rec;
	uint64_t covered = thread_covered(rec, interval_ns);
	bool serial = interval_serial(rec, covered, container, interval_ns);
	struct stage_pool *pool;
	struct stage_thread *t;
	struct hash_node *n;
	int i;

	n = hash_table_find(&c->threads, hash_u64(rec->tid), thread_is, &rec->tid);
	if (!n && !serial)
		return 0;
	pool = pool_get(c, it->pool);
	if (!pool)
		return -ENOMEM;
	if (n) {
		t = container_of(n, struct stage_thread, node);
	} else {
		t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		t->tid = rec->tid;
		t->first_interval = rec->intervals && rec->intervals <= st->intervals
					    ? st->intervals - rec->intervals + 1
					    : st->intervals;
		t->elapsed_before =
			rec->lived_ns < st->elapsed_ns ? st->elapsed_ns - rec->lived_ns : 0;
		hash_table_add(&c->threads, &t->node, hash_u64(rec->tid));
	}
	/* the name and pool it had last */
	t->pid = rec->pid;
	memcpy(t->comm, rec->comm, CG_COMM_LEN);
	t->pool = pool->name;
	for (i = 0; i < CG_THREAD_TIMES; i++)
		t->time_ns[i] = rec->total_ns[i];
	if (!n && rec->intervals > 1)
		t->uncovered_ns = uncovered_before(rec, interval_ns);
	if (rec->intervals == 1 || rec->exited)
		t->uncovered_ns += interval_ns - covered;
	if (serial) {
		t->serial++;
		t->serial_on_ns += rec->time_ns[CG_ONCPU];
		t->serial_runq_ns += rec->time_ns[CG_RUNQ];
		t->serial_ns += covered;
	}
	if (!rec->exited)
		return 0;
	t->last_interval = st->intervals;
	t->lived_ns = st->elapsed_ns - t->elapsed_before;
	/* gone: only a serial stage is worth its memory from now on, and its tid may come back */
	hash_table_del(&c->threads, &t->node);
	if (thread_serial(st, t)) {
		t->next_gone = c->gone;
		c->gone = t;
	} else {
		free(t);
	}
	return 0;
}

int stages__add(struct stages *st, const struct cg_interval *iv)
{
	struct stage_container *c;
	struct stage_pool *p;
	int i, s, record, err = 0;

	st->intervals++;
	st->elapsed_ns += iv->interval_ns;
	for (i = 0; i < iv->nr_pools; i++) {
		c = container_get(st, iv->pools[i].name);
		p = c ? pool_get(c, iv->pools[i].pool) : NULL;
		if (!p)
			return -ENOMEM;
		for (s = 0; s < CG_THREAD_TIMES; s++)
			p->time_ns[s] += iv->pools[i].time_ns[s];
	}
	/* the threads come by record: a container's name is looked up once for its threads */
	for (i = 0, record = -1, c = NULL; i < iv->nr_all_threads && !err; i++) {
		if (iv->all_threads[i].record != record) {
			record = iv->all_threads[i].record;
			c = container_get(st, iv->records[record].name);
		}
		err = c ? thread_add(st, c, &iv->all_threads[i], &iv->records[record],
				     iv->interval_ns)
			: -ENOMEM;
	}
	return err;
}

/* The share of its time (all states) a thread or pool spent in fig's state, as a figure does. */
static double share(const uint64_t *time_ns, enum cg_figure fig)
{
	struct cg_record r = { 0 };
	double value = 0;
	int s;

	for (s = 0; s < CG_THREAD_TIMES; s++)
		r.time_ns[s] = time_ns[s];
	record_figure(&r, 1, fig, &value);
	return value;
}

struct ranked {
	const void *item;
	double key;
};

static int ranked_order(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return x->key > y->key ? -1 : x->key < y->key;
}

struct rank_visit {
	const struct stages *st;
	struct ranked *items;
	size_t n;
	bool threads;
};

static void rank_thread(struct rank_visit *v, const struct stage_thread *th)
{
	if (thread_serial(v->st, th))
		v->items[v->n++] = (struct ranked){ th, (double)th->serial_ns };
}

static void rank_one(struct hash_table *t, struct hash_node *n, void *ctx)
{
	struct rank_visit *v = ctx;
	const struct stage_pool *p;

	(void)t;
	if (v->threads) {
		rank_thread(v, container_of(n, struct stage_thread, node));
	} else {
		p = container_of(n, struct stage_pool, node);
		v->items[v->n++] = (struct ranked){ p, (double)p->time_ns[CG_ONCPU] };
	}
}

/* The container's serial stages (threads) or pools, ranked; the array is malloc'd. */
static struct ranked *rank(const struct stages *st, const struct stage_container *c, bool threads,
			   size_t *nr)
{
	struct hash_table *table = (struct hash_table *)(threads ? &c->threads : &c->pools);
	struct rank_visit v = { st, NULL, 0, threads };
	const struct stage_thread *t;
	size_t gone = 0;

	for (t = c->gone; threads && t; t = t->next_gone)
		gone++;
	v.items = calloc(table->nr_nodes + gone + 1, sizeof(*v.items));
	if (!v.items)
		return NULL;
	hash_table_visit(table, rank_one, &v);
	for (t = c->gone; threads && t; t = t->next_gone)
		rank_thread(&v, t);
	qsort(v.items, v.n, sizeof(*v.items), ranked_order);
	*nr = v.n;
	return v.items;
}

/* What a stage ran (or waited for a CPU) over its serial intervals, in cores. */
static double serial_cores(const struct stage_thread *t, uint64_t ns)
{
	return t->serial_ns ? (double)ns / (double)t->serial_ns : 0;
}

/*
 * "NAME: thread POOL (tid N) wanted W of a core (ran R, waited Q) in S of L intervals", cut to
 * len: both parts, for a stage the machine held back is a stage all the same.
 */
static void stage_line(char *buf, size_t len, const struct stages *st, const char *name,
		       const char *pool, const struct stage_thread *t)
{
	double ran = serial_cores(t, t->serial_on_ns), waited = serial_cores(t, t->serial_runq_ns);

	snprintf(buf, len,
		 "%s: thread %s (tid %u) wanted %.2f of a core (ran %.2f, waited %.2f) in %llu of "
		 "%llu intervals",
		 name, pool, t->tid, ran + waited, ran, waited, (unsigned long long)t->serial,
		 (unsigned long long)lived(st, t));
}

static int json_pools(cJSON *obj, const struct stage_container *c, const struct stages *st)
{
	const struct stage_pool *p;
	struct ranked *pools;
	cJSON *arr, *item;
	size_t i, n;
	int err = 0;

	pools = rank(st, c, false, &n);
	arr = pools ? cJSON_AddArrayToObject(obj, "topPools") : NULL;
	for (i = 0; arr && i < n && i < STAGES_TOP_POOLS && !err; i++) {
		p = pools[i].item;
		item = json_append_object(arr);
		if (!item) {
			err = -ENOMEM;
			break;
		}
		err = json_add_label(item, "pool", p->name);
		if (!err)
			err = json_add_number(item, "cpuSeconds", p->time_ns[CG_ONCPU] / 1e9);
		if (!err)
			err = json_add_number(item, figure_columns[CG_FIG_RUNQ_PERCENT].name,
					      share(p->time_ns, CG_FIG_RUNQ_PERCENT));
		if (!err)
			err = json_add_number(item, figure_columns[CG_FIG_BLOCKED_PERCENT].name,
					      share(p->time_ns, CG_FIG_BLOCKED_PERCENT));
	}
	free(pools);
	return arr ? err : -ENOMEM;
}

static int json_stages(cJSON *obj, const struct stage_container *c, const struct stages *st)
{
	char line[512];
	const struct stage_thread *t;
	struct ranked *stages;
	cJSON *arr, *item;
	size_t i, n;
	int err = 0;

	stages = rank(st, c, true, &n);
	arr = stages ? cJSON_AddArrayToObject(obj, "serialStages") : NULL;
	for (i = 0; arr && i < n && !err; i++) {
		t = stages[i].item;
		item = json_append_object(arr);
		if (!item) {
			err = -ENOMEM;
			break;
		}
		err = json_add_number(item, "tid", t->tid);
		if (!err)
			err = json_add_number(item, "pid", t->pid);
		if (!err)
			err = json_add_label(item, "comm", t->comm);
		if (!err)
			err = json_add_label(item, "pool", t->pool);
		if (!err)
			err = json_add_number(item, "meanCores",
					      (double)t->time_ns[CG_ONCPU] /
						      (double)(lived_ns(st, t) ?: 1));
		if (!err)
			err = json_add_number(item, "serialCores",
					      serial_cores(t, t->serial_on_ns));
		if (!err)
			err = json_add_number(item, "serialWaitedCores",
					      serial_cores(t, t->serial_runq_ns));
		if (!err)
			err = json_add_number(item, "cpuSeconds", t->time_ns[CG_ONCPU] / 1e9);
		if (!err)
			err = json_add_number(item, "runqSeconds", t->time_ns[CG_RUNQ] / 1e9);
		if (!err)
			err = json_add_number(item, figure_columns[CG_FIG_RUNQ_PERCENT].name,
					      share(t->time_ns, CG_FIG_RUNQ_PERCENT));
		if (!err)
			err = json_add_number(item, "serialIntervals", (double)t->serial);
		if (!err)
			err = json_add_number(item, "intervals", (double)lived(st, t));
	}
	if (!err && arr && n) {
		t = stages[0].item;
		stage_line(line, sizeof(line), st, c->name, t->pool, t);
		err = json_add_label(obj, "serialStage", line);
	}
	free(stages);
	return arr ? err : -ENOMEM;
}

int stages__json(const struct stages *st, const char *name, cJSON *obj)
{
	struct hash_node *n;
	int err;

	n = hash_table_find(&st->containers, hash_string(name), container_is, name);
	if (!n)
		return 0;
	err = json_pools(obj, container_of(n, struct stage_container, node), st);
	return err ?: json_stages(obj, container_of(n, struct stage_container, node), st);
}

void stages__print(const struct stages *st, FILE *f)
{
	char line[1024], name[512], pool[128];
	const struct stage_container *c;
	const struct stage_thread *t;
	struct ranked *stages;
	size_t n;

	for (c = st->first; c; c = c->next) {
		stages = rank(st, c, true, &n);
		if (stages && n) {
			t = stages[0].item;
			/* the names quoted as every message quotes what came from outside */
			message_quote_buf(name, sizeof(name), c->name, strlen(c->name));
			message_quote_buf(pool, sizeof(pool), t->pool, strlen(t->pool));
			stage_line(line, sizeof(line), st, name, pool, t);
			fprintf(f, "cgstat: %s\n", line);
		}
		free(stages);
	}
}

static void free_node(struct hash_table *t, struct hash_node *n, void *ctx)
{
	size_t off = *(size_t *)ctx;

	hash_table_del(t, n);
	free((char *)n - off);
}

void stages__free(struct stages *st)
{
	struct stage_container *c, *next;
	size_t thread_off = offsetof(struct stage_thread, node);
	size_t pool_off = offsetof(struct stage_pool, node);

	if (!st)
		return;
	for (c = st->first; c; c = next) {
		next = c->next;
		while (c->gone) {
			struct stage_thread *t = c->gone;

			c->gone = t->next_gone;
			free(t);
		}
		hash_table_visit(&c->threads, free_node, &thread_off);
		hash_table_visit(&c->pools, free_node, &pool_off);
		hash_table_fini(&c->threads);
		hash_table_fini(&c->pools);
		free(c->name);
		free(c);
	}
	hash_table_fini(&st->containers);
	free(st);
}
