// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include "outputs/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "core/derived.h"
#include "core/totals.h"
#include "lib/process_self.h"
#include "lib/utf8.h"
#include "lib/util.h"

enum metric_kind {
	METRIC_COUNTER, /* the figure's amount summed over every interval since the start */
	METRIC_GAUGE,	/* the figure in the last interval the cgroup had a record in */
};

/*
 * One sample of a cgroup: the family it belongs to, the labels beside cgroup that tell it from
 * the family's other samples, and the figure it is made of. A family's samples are adjacent,
 * its help and kind given by the first. Every family has one unit (seconds or a count), and
 * its samples add up over their labels (each is a part of the whole, none holds another). A
 * new figure on /metrics is one line here; pool: a thread pool's too, as cgstat_pool_* with a
 * pool label beside cgroup (with --threads).
 */
struct metric_def {
	const char *family; /* without _total; ends in _seconds when the figure is a time */
	enum metric_kind kind;
	const char *labels; /* k="v" pairs, or NULL */
	enum cg_figure figure;
	bool pool;
	const char *help;
	/* only where the family's split is not known (--light): its whole, under its own label */
	bool unsplit;
};

static const struct metric_def metric_defs[] = {
	{ "cgstat_cpu_seconds", METRIC_COUNTER, NULL, CG_FIG_ONCPU_MILLIS, true,
	  "Time the cgroup's threads ran on a CPU (what cpu.stat usage_usec counts)" },
	{ "cgstat_runqueue_wait_seconds", METRIC_COUNTER, NULL, CG_FIG_RUNQ_MILLIS, true,
	  "Time the cgroup's threads waited runnable in a run queue" },
	{ "cgstat_offcpu_seconds", METRIC_COUNTER, "state=\"sleep\"", CG_FIG_SLEEP_MILLIS, true,
	  "Time the cgroup's threads were off CPU: sleeping (S) or blocked (D); with --light, "
	  "sleep_or_blocked (the split is not known)" },
	{ "cgstat_offcpu_seconds", METRIC_COUNTER, "state=\"blocked\"", CG_FIG_BLOCKED_MILLIS,
	  true },
	/* sum by (cgroup) over state is the whole off-CPU time in either mode */
	{ "cgstat_offcpu_seconds", METRIC_COUNTER, "state=\"sleep_or_blocked\"",
	  CG_FIG_OFFCPU_MILLIS, false, NULL, true },
	{ "cgstat_stolen_seconds", METRIC_COUNTER, NULL, CG_FIG_STOLEN_MILLIS, false,
	  "Time a hypervisor or interrupts took while the cgroup's threads were on CPU" },
	{ "cgstat_context_switches", METRIC_COUNTER, "switch=\"voluntary\"", CG_FIG_VCSW, true,
	  "Context switches of the cgroup's threads: voluntary (they blocked or slept) or "
	  "involuntary (preempted)" },
	{ "cgstat_context_switches", METRIC_COUNTER, "switch=\"involuntary\"", CG_FIG_IVCSW, true },
	{ "cgstat_preemptions", METRIC_COUNTER, "by=\"same_cgroup\"", CG_FIG_PREEMPTED_SAME, false,
	  "Involuntary switches by what took the CPU: a thread of the same cgroup, of another, "
	  "or a kernel thread" },
	{ "cgstat_preemptions", METRIC_COUNTER, "by=\"other_cgroup\"", CG_FIG_PREEMPTED_OTHER },
	{ "cgstat_preemptions", METRIC_COUNTER, "by=\"kernel\"", CG_FIG_PREEMPTED_KERNEL },
	{ "cgstat_migrations", METRIC_COUNTER, NULL, CG_FIG_MIGRATIONS, false,
	  "Moves of the cgroup's threads to another CPU" },
	{ "cgstat_page_faults", METRIC_COUNTER, "fault=\"minor\"", CG_FIG_MINOR_FAULTS, false,
	  "Page faults of the cgroup's threads: minor (no I/O) or major (waited for I/O)" },
	{ "cgstat_page_faults", METRIC_COUNTER, "fault=\"major\"", CG_FIG_MAJOR_FAULTS },
	{ "cgstat_cfs_periods", METRIC_COUNTER, NULL, CG_FIG_PERIODS, false,
	  "CFS bandwidth periods with runnable threads (cpu.stat nr_periods)" },
	{ "cgstat_cfs_throttled_periods", METRIC_COUNTER, NULL, CG_FIG_THROTTLED_PERIODS, false,
	  "CFS bandwidth periods the quota ran out in (cpu.stat nr_throttled)" },
	{ "cgstat_cfs_throttled_seconds", METRIC_COUNTER, NULL, CG_FIG_THROTTLED_MILLIS, false,
	  "Time the cgroup was throttled (cpu.stat throttled_usec)" },
	/* node_exporter's names for the same lines of /proc/pressure */
	{ "cgstat_pressure_cpu_waiting_seconds", METRIC_COUNTER, NULL,
	  CG_FIG_CPU_PRESSURE_SOME_MILLIS, false,
	  "Time some of the cgroup's threads waited for a CPU (cpu.pressure some total=)" },
	{ "cgstat_pressure_cpu_stalled_seconds", METRIC_COUNTER, NULL,
	  CG_FIG_CPU_PRESSURE_FULL_MILLIS, false,
	  "Time all of the cgroup's runnable threads waited for a CPU (cpu.pressure full total=)" },
	{ "cgstat_pressure_memory_waiting_seconds", METRIC_COUNTER, NULL,
	  CG_FIG_MEMORY_PRESSURE_SOME_MILLIS, false,
	  "Time some of the cgroup's threads waited for memory (memory.pressure some total=)" },
	{ "cgstat_pressure_memory_stalled_seconds", METRIC_COUNTER, NULL,
	  CG_FIG_MEMORY_PRESSURE_FULL_MILLIS, false,
	  "Time all of the cgroup's threads waited for memory (memory.pressure full total=)" },
	{ "cgstat_pressure_io_waiting_seconds", METRIC_COUNTER, NULL,
	  CG_FIG_IO_PRESSURE_SOME_MILLIS, false,
	  "Time some of the cgroup's threads waited for I/O (io.pressure some total=)" },
	{ "cgstat_pressure_io_stalled_seconds", METRIC_COUNTER, NULL,
	  CG_FIG_IO_PRESSURE_FULL_MILLIS, false,
	  "Time all of the cgroup's threads waited for I/O (io.pressure full total=)" },
	{ "cgstat_threads", METRIC_GAUGE, NULL, CG_FIG_TASKS, true,
	  "Threads in the cgroup at the end of the last interval" },
};

#define NR_METRIC_DEFS ARRAY_SIZE(metric_defs)

/*
 * The histogram's edges: four an octave, 2^k x {1, 1.25, 1.5, 1.75} ns for k = 10..31, then
 * 2^32 ns (1.024 us to 4.29 s). Each is an edge of cgstat's own log-linear buckets (eight an
 * octave), so each count is exact; and with two edges at most 1.25x apart around any wait,
 * histogram_quantile()'s interpolation is within 25 % of the CSV's quantile, which lies in the
 * same bucket. 89 edges, 92 series a cgroup with +Inf, _sum and _count.
 */
#define HIST_FIRST_OCTAVE 10
#define HIST_LAST_OCTAVE  31
#define HIST_PER_OCTAVE	  4
#define NR_HIST_EDGES	  ((HIST_LAST_OCTAVE - HIST_FIRST_OCTAVE + 1) * HIST_PER_OCTAVE + 1)
_Static_assert(CG_HIST_SUB % HIST_PER_OCTAVE == 0, "an edge of /metrics is an edge of cgstat's");

static uint64_t hist_edge_ns(int i)
{
	int octave = HIST_FIRST_OCTAVE + i / HIST_PER_OCTAVE;

	return (1ULL << octave) + ((uint64_t)(i % HIST_PER_OCTAVE) << (octave - 2));
}

/*
 * Each of cgstat's buckets' bucket on /metrics (the first edge above its lower bound, or
 * NR_HIST_EDGES past the last), worked out once: adding a record's histogram is then a walk of
 * its buckets up to its last wait, where finding the edges anew for each record was an eighth
 * of the drain's time with 1,000 cgroups.
 */
static uint8_t hist_bucket_of[CG_HIST_BUCKETS];
static pthread_once_t hist_buckets_once = PTHREAD_ONCE_INIT;

static void hist_buckets_init(void)
{
	int b, i = 0;

	_Static_assert(NR_HIST_EDGES < 256, "a bucket's index fits hist_bucket_of");
	for (b = 0; b < CG_HIST_BUCKETS; b++) {
		while (i < NR_HIST_EDGES && hist_edge_ns(i) <= cg_hist_lower(b))
			i++;
		hist_bucket_of[b] = i;
	}
}

/* A pool's sums (--threads), in its cgroup's array: at most CG_POOLS_PER_WATCHED + 1 a cgroup. */
struct metrics_pool {
	char *name;  /* as the drain names it */
	char *label; /* escaped */
	struct cg_amounts sum;
	uint64_t tasks;
};

struct metrics_cgroup {
	/*
	 * every interval's amounts since the start, a counter or cgroup file valid once it was;
	 * in the metrics' table by the name it owns
	 */
	struct totals_label totals;
	char *label;	     /* the name as a label value, escaped once for all its samples */
	uint64_t retired_ms; /* 0 while its cgroup is there */
	bool in_last;	     /* had a record in the last interval: its gauges are current */
	uint64_t tasks;
	uint64_t busiest_ns; /* each interval's busiest thread's on-CPU time, summed */
	uint64_t verdicts[CG_NR_VERDICTS];
	/*
	 * measured waits by /metrics' bucket: [i] those below edge i and not below edge i - 1,
	 * [NR_HIST_EDGES] those above the last; the page sums them up to each edge
	 */
	uint64_t hist[NR_HIST_EDGES + 1];
	uint64_t hist_count; /* measured waits, all lengths */
	bool has_container;
	struct cg_container container; /* what its runtime said last */
	int nr_pools, pools_size;
	int pool_hint; /* where the last pool found was: pools come in a steady order */
	struct metrics_pool *pools;
};

/*
 * A program's name as libbpf gives it, its C function's: whole, where the kernel's 15
 * characters would make cg_sched_wakeup_new another cg_sched_wakeup
 */
#define PROGRAM_NAME_LEN 64
/* more than cgstat loads (bpf/cgstat.bpf.c's SEC programs) */
#define MAX_PROGRAMS 32

/* cgstat's own cost, with --bpf-stats: a program's runs and their time since cgstat began */
struct metrics_program {
	char name[PROGRAM_NAME_LEN];
	uint64_t runs;
	uint64_t run_ns;
};

/*
 * The figures of the whole run, the cgroups' and cgstat's: the drain adds to them, a scrape
 * copies them under the lock (the copy, not the page, is what a scrape holds the drain up by).
 */
struct metrics_run {
	bool have_interval;
	uint64_t epoch_ms;
	uint64_t interval_ns;
	int nr_cpus;
	struct cg_health health;
	uint64_t drains;
	uint64_t drain_ns;
	int nr_programs;
	struct metrics_program programs[MAX_PROGRAMS];
};

struct metrics {
	pthread_mutex_t lock; /* over all below: the drain adds, a scrape copies */
	const char *libbpf_version;
	struct totals_table cgroups; /* of struct metrics_cgroup */
	const char *const *event_names;
	int nr_events;
	struct metrics_run run;
};

struct metrics_snapshot {
	const char *libbpf_version;
	int nr_cgroups;
	/* labels and pools owned; names NULL (the page needs only the labels); nodes unused */
	struct metrics_cgroup *cgroups;
	const char *const *event_names;
	int nr_events;
	struct metrics_run run;
};

struct metrics *metrics__new(const char *const *event_names, int nr_events,
			     const char *libbpf_version)
{
	struct metrics *m = calloc(1, sizeof(*m));

	pthread_once(&hist_buckets_once, hist_buckets_init);
	if (!m || totals_table_init(&m->cgroups, 64)) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->event_names = event_names;
	m->nr_events = nr_events < CG_MAX_EVENTS ? nr_events : CG_MAX_EVENTS;
	m->libbpf_version = libbpf_version;
	return m;
}

/*
 * The page a scrape is rendered into: a buffer grown by doubling, written with memcpy(). A page
 * of 1,000 cgroups is 130,000 lines of short pieces, and a memstream's FILE copied those a byte
 * at a time (glibc's _IO_default_xsputn): half of a scrape's time. A failed allocation is kept
 * and said once, at the end.
 */
struct page {
	char *text;
	size_t len, size;
	bool failed;
};

/* Room for n more bytes and a NUL: false, and the page failed, when there is none. */
static bool page_grow(struct page *p, size_t n)
{
	size_t size = p->size ? p->size : 65536;
	char *text;

	if (p->failed)
		return false;
	while (size < p->len + n + 1)
		size *= 2;
	text = realloc(p->text, size);
	if (!text) {
		p->failed = true;
		return false;
	}
	p->text = text;
	p->size = size;
	return true;
}

static inline bool page_reserve(struct page *p, size_t n)
{
	return p->len + n + 1 <= p->size || page_grow(p, n);
}

static void page_put(struct page *p, const void *s, size_t n)
{
	if (!page_reserve(p, n))
		return;
	memcpy(p->text + p->len, s, n);
	p->len += n;
}

static void page_puts(struct page *p, const char *s)
{
	page_put(p, s, strlen(s));
}

static void page_putc(struct page *p, char c)
{
	if (!page_reserve(p, 1))
		return;
	p->text[p->len++] = c;
}

static void __attribute__((format(printf, 2, 3))) page_printf(struct page *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !page_reserve(p, n))
		return;
	va_start(ap, fmt);
	vsnprintf(p->text + p->len, n + 1, fmt, ap);
	va_end(ap);
	p->len += n;
}

/* The page's text, NUL-terminated and the caller's (its length in *len), or NULL and ENOMEM. */
static char *page_end(struct page *p, size_t *len)
{
	if (p->failed || !page_reserve(p, 0)) {
		free(p->text);
		errno = ENOMEM;
		return NULL;
	}
	p->text[p->len] = '\0';
	if (len)
		*len = p->len;
	return p->text;
}

/*
 * A label value as the formats want it: backslash, double quote and newline escaped, and any
 * byte that is not UTF-8 (a cgroup path is any bytes) as U+FFFD, which both formats require.
 */
static void put_label_value(struct page *f, const char *v)
{
	const unsigned char *p = (const unsigned char *)v, *run;
	size_t n;

	for (;;) {
		/* what stands for itself goes out a run at a time */
		run = p;
		while (*p && *p != '\\' && *p != '"' && *p != '\n' && (n = utf8_sequence(p)))
			p += n;
		page_put(f, run, p - run);
		if (!*p)
			return;
		if (*p == '\n')
			page_puts(f, "\\n");
		else if (*p == '\\' || *p == '"')
			page_printf(f, "\\%c", *p);
		else
			page_puts(f, "\xef\xbf\xbd");
		p++;
	}
}

/* A value escaped by put_label_value(), as a string of its own; NULL when out of memory. */
static char *label_escaped(const char *v)
{
	struct page p = {};

	put_label_value(&p, v);
	return page_end(&p, NULL);
}

static struct metrics_cgroup *cgroup_of_totals(struct totals_label *l)
{
	return l ? container_of(l, struct metrics_cgroup, totals) : NULL;
}

static void pools_free(struct metrics_pool *pools, int nr)
{
	int i;

	for (i = 0; pools && i < nr; i++) {
		free(pools[i].name);
		free(pools[i].label);
	}
	free(pools);
}

static void cgroup_free(struct metrics *m, struct metrics_cgroup *c)
{
	totals_table_unlink(&m->cgroups, &c->totals);
	free((char *)c->totals.name);
	free(c->label);
	pools_free(c->pools, c->nr_pools);
	free(c);
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	while (m->cgroups.first)
		cgroup_free(m, cgroup_of_totals(m->cgroups.first));
	totals_table_fini(&m->cgroups);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct metrics_cgroup *cgroup_get(struct metrics *m, const char *name)
{
	struct metrics_cgroup *c = cgroup_of_totals(totals_table_find(&m->cgroups, name));
	char *owned;

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	owned = strdup(name);
	if (c)
		c->label = label_escaped(name);
	if (!c || !owned || !c->label) {
		free(owned);
		if (c)
			free(c->label);
		free(c);
		return NULL;
	}
	totals_label_init(&c->totals, owned, TOTALS_VALID_ANY);
	totals_table_link(&m->cgroups, &c->totals);
	return c;
}

/* c's pool of name, made empty the first time. NULL when out of memory. */
static struct metrics_pool *pool_get(struct metrics_cgroup *c, const char *name)
{
	struct metrics_pool *p;
	int i, k;

	for (k = 0; k < c->nr_pools; k++) {
		i = (c->pool_hint + k) % c->nr_pools;
		if (!strcmp(c->pools[i].name, name)) {
			c->pool_hint = i + 1;
			return &c->pools[i];
		}
	}
	if (c->nr_pools == c->pools_size) {
		int size = c->pools_size ? 2 * c->pools_size : 8;

		p = reallocarray(c->pools, size, sizeof(*p));
		if (!p)
			return NULL;
		c->pools = p;
		c->pools_size = size;
	}
	p = &c->pools[c->nr_pools];
	*p = (struct metrics_pool){ .name = strdup(name), .label = label_escaped(name) };
	if (!p->name || !p->label) {
		free(p->name);
		free(p->label);
		return NULL;
	}
	totals_init(&p->sum, TOTALS_VALID_ANY);
	c->nr_pools++;
	return p;
}

/* h's waits into c's buckets, up to its last wait (its count is its buckets' sum). */
static void hist_add_to(struct metrics_cgroup *c, const struct cg_hist *h)
{
	uint64_t left = h->count;
	int b;

	for (b = 0; left && b < CG_HIST_BUCKETS; b++) {
		c->hist[hist_bucket_of[b]] += h->bucket[b];
		left -= left < h->bucket[b] ? left : h->bucket[b];
	}
	c->hist_count += h->count;
}

static int cgroup_add(struct metrics *m, struct metrics_cgroup *c, const struct cg_record *r,
		      const struct cg_interval *iv)
{
	struct metrics_pool *p;
	int i;

	c->retired_ms = 0; /* a cgroup made again at the same path goes on with the sums */
	c->in_last = true;
	c->tasks = r->tasks;
	totals_label_add(&c->totals, r, m->nr_events, TOTALS_VALID_ANY);
	c->busiest_ns += r->busiest.on_cpu_ns;
	/* the verdict alone, not its text: formatting it was half of what this took */
	c->verdicts[record_verdict(r, iv->interval_ns, iv->nr_cpus, NULL, 0)]++;
	hist_add_to(c, &r->runq_hist);
	c->has_container = r->container;
	if (r->container)
		c->container = *r->container;
	for (i = 0; i < r->nr_pools; i++) {
		const struct cg_record *pr = &iv->pools[r->first_pool + i];

		p = pool_get(c, pr->pool);
		if (!p)
			return -ENOMEM;
		totals_add(&p->sum, &pr->amounts, m->nr_events, TOTALS_VALID_ANY);
		p->tasks = pr->tasks;
	}
	return 0;
}

/* Before an interval is added: no gauge is current, and the retired past their grace go. */
static void cgroups_expire(struct metrics *m, uint64_t now_ms)
{
	struct metrics_cgroup *c, *next;

	for (c = cgroup_of_totals(m->cgroups.first); c; c = next) {
		next = cgroup_of_totals(c->totals.next);
		c->in_last = false;
		if (c->retired_ms && now_ms - c->retired_ms > METRICS_GRACE_MS)
			cgroup_free(m, c);
	}
}

/* The programs' figures since cgstat enabled the stats, as the drain read them. */
static void run_programs(struct metrics_run *run, const struct cg_interval *iv)
{
	int i;

	run->nr_programs = iv->nr_programs < MAX_PROGRAMS ? iv->nr_programs : MAX_PROGRAMS;
	for (i = 0; i < run->nr_programs; i++) {
		snprintf(run->programs[i].name, sizeof(run->programs[i].name), "%s",
			 iv->programs[i].name);
		run->programs[i].runs = iv->programs[i].runs;
		run->programs[i].run_ns = iv->programs[i].run_ns;
	}
}

int metrics__add(struct metrics *m, const struct cg_interval *iv, uint64_t drain_ns)
{
	struct metrics_cgroup *c;
	int i, err = 0;

	pthread_mutex_lock(&m->lock);
	cgroups_expire(m, iv->epoch_ms);
	for (i = 0; i < iv->nr_records && !err; i++) {
		c = cgroup_get(m, iv->records[i].name);
		err = c ? cgroup_add(m, c, &iv->records[i], iv) : -ENOMEM;
	}
	m->run.have_interval = true;
	m->run.epoch_ms = iv->epoch_ms;
	m->run.interval_ns = iv->interval_ns;
	m->run.nr_cpus = iv->nr_cpus;
	m->run.health = iv->health;
	m->run.drains++;
	m->run.drain_ns += drain_ns;
	run_programs(&m->run, iv);
	pthread_mutex_unlock(&m->lock);
	return err;
}

void metrics__retire(struct metrics *m, const char *name, uint64_t now_ms)
{
	struct metrics_cgroup *c;

	pthread_mutex_lock(&m->lock);
	c = cgroup_of_totals(totals_table_find(&m->cgroups, name));
	if (c && !c->retired_ms)
		c->retired_ms = now_ms ? now_ms : 1;
	pthread_mutex_unlock(&m->lock);
}

/* c into dst, a snapshot's: linked nowhere, its name not kept (the page needs the label). */
static int cgroup_copy(struct metrics_cgroup *dst, const struct metrics_cgroup *c)
{
	int i;

	*dst = *c;
	dst->totals.node = (struct hash_node){};
	dst->totals.prev = dst->totals.next = NULL;
	dst->totals.name = NULL;
	dst->pools = NULL;
	dst->nr_pools = dst->pools_size = 0;
	dst->label = strdup(c->label);
	if (!dst->label)
		return -ENOMEM;
	if (!c->nr_pools)
		return 0;
	dst->pools = calloc(c->nr_pools, sizeof(*dst->pools));
	if (!dst->pools)
		return -ENOMEM;
	for (i = 0; i < c->nr_pools; i++) {
		dst->pools[i] = c->pools[i];
		dst->pools[i].name = NULL;
		dst->pools[i].label = strdup(c->pools[i].label);
		dst->nr_pools++;
		if (!dst->pools[i].label)
			return -ENOMEM;
	}
	return 0;
}

static int cgroup_cmp(const void *a, const void *b)
{
	return strcmp(((const struct metrics_cgroup *)a)->label,
		      ((const struct metrics_cgroup *)b)->label);
}

static int pool_cmp(const void *a, const void *b)
{
	return strcmp(((const struct metrics_pool *)a)->label,
		      ((const struct metrics_pool *)b)->label);
}

struct metrics_snapshot *metrics__snapshot(struct metrics *m)
{
	struct metrics_snapshot *s = calloc(1, sizeof(*s));
	const struct totals_label *l;
	int err = 0, k;

	if (!s)
		goto fail;
	s->event_names = m->event_names;
	s->nr_events = m->nr_events;
	s->libbpf_version = m->libbpf_version;
	pthread_mutex_lock(&m->lock);
	s->run = m->run;
	s->cgroups = calloc(m->cgroups.nr ? m->cgroups.nr : 1, sizeof(*s->cgroups));
	for (l = m->cgroups.first; s->cgroups && l && !err; l = l->next) {
		/* counted first: the snapshot's free frees what the copies made */
		s->nr_cgroups++;
		err = cgroup_copy(&s->cgroups[s->nr_cgroups - 1],
				  container_of(l, struct metrics_cgroup, totals));
	}
	pthread_mutex_unlock(&m->lock);
	if (!s->cgroups || err)
		goto fail;
	/* scrapes of an unchanged set list it in the same order */
	qsort(s->cgroups, s->nr_cgroups, sizeof(*s->cgroups), cgroup_cmp);
	for (k = 0; k < s->nr_cgroups; k++)
		if (s->cgroups[k].nr_pools) /* qsort() takes no NULL, even for none */
			qsort(s->cgroups[k].pools, s->cgroups[k].nr_pools,
			      sizeof(struct metrics_pool), pool_cmp);
	return s;
fail:
	metrics_snapshot__free(s);
	errno = ENOMEM;
	return NULL;
}

void metrics_snapshot__free(struct metrics_snapshot *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->cgroups && i < s->nr_cgroups; i++) {
		free(s->cgroups[i].label);
		pools_free(s->cgroups[i].pools, s->cgroups[i].nr_pools);
	}
	free(s->cgroups);
	free(s);
}

/*
 * v in decimal, at least width digits (zeros in front). A page of 1,000 cgroups has 130,000
 * samples, and fprintf() of their values was most of a scrape's cost.
 */
static void put_digits(struct page *f, uint64_t v, int width)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v || buf + sizeof(buf) - p < width);
	page_put(f, p, buf + sizeof(buf) - p);
}

/* Nanoseconds as seconds, exactly: a counter's digits never round. */
static void put_seconds(struct page *f, uint64_t ns)
{
	put_digits(f, ns / NSEC_PER_SEC, 1);
	page_putc(f, '.');
	put_digits(f, ns % NSEC_PER_SEC, 9);
}

/* The HELP, TYPE and (OpenMetrics) UNIT lines of a family. */
static void put_family(struct page *f, bool om, const char *family, const char *type,
		       const char *unit, const char *help)
{
	const char *total = "";

	/* the text format has neither _total nor _info in a family's name, nor an info type */
	if (!om && !strcmp(type, "counter"))
		total = "_total";
	if (!om && !strcmp(type, "info")) {
		total = "_info";
		type = "gauge";
	}

	page_printf(f, "# HELP %s%s %s\n", family, total, help);
	page_printf(f, "# TYPE %s%s %s\n", family, total, type);
	if (om && unit)
		page_printf(f, "# UNIT %s %s\n", family, unit);
}

/*
 * A sample's name and labels, up to its value: name{cgroup="...",pool="...",labels,key="value"},
 * each where given (value escaped: it comes from outside, as the cgroup's name does; the
 * cgroup's and the pool's labels come escaped, from the snapshot). No labels at all: name alone.
 */
static void put_sample(struct page *f, const char *name, const char *suffix, const char *cgroup,
		       const char *pool, const char *labels, const char *key, const char *value)
{
	const char *sep = "{";

	page_puts(f, name);
	page_puts(f, suffix);
	if (cgroup) {
		page_puts(f, "{cgroup=\"");
		page_puts(f, cgroup);
		page_putc(f, '"');
		sep = ",";
	}
	if (pool) {
		page_puts(f, ",pool=\"");
		page_puts(f, pool);
		page_putc(f, '"');
	}
	if (labels) {
		page_puts(f, sep);
		page_puts(f, labels);
		sep = ",";
	}
	if (key) {
		page_puts(f, sep);
		page_puts(f, key);
		page_puts(f, "=\"");
		put_label_value(f, value);
		page_putc(f, '"');
		sep = ",";
	}
	page_puts(f, *sep == ',' ? "} " : " ");
}

/*
 * The value of d for amounts a (tasks: the last interval's), and the newline: false, writing
 * nothing, where a has none.
 */
static bool put_def_value(struct page *f, const struct metric_def *d, const struct cg_amounts *a,
			  uint64_t tasks)
{
	uint64_t amount = tasks;

	if (d->kind == METRIC_COUNTER && !amounts_value(a, d->figure, &amount))
		return false;
	if (figure_in_nanoseconds(d->figure))
		put_seconds(f, amount);
	else
		put_digits(f, amount, 1);
	page_putc(f, '\n');
	return true;
}

/*
 * Whether d has a sample for c (or c's pool, whose sums are a): a counter where the sums hold
 * its figure, a gauge where c had a record in the last interval (else it is not current).
 */
static bool def_has_value(const struct metric_def *d, const struct metrics_cgroup *c,
			  const struct cg_amounts *a)
{
	uint64_t unused;

	if (d->kind == METRIC_GAUGE)
		return c->in_last;
	if (d->unsplit && !a->light)
		return false;
	return amounts_value(a, d->figure, &unused);
}

static const char *def_suffix(const struct metric_def *d)
{
	return d->kind == METRIC_COUNTER ? "_total" : "";
}

/* A family's first line of metric_defs: its help, kind and unit given there. */
static void put_def_family(struct page *f, bool om, const struct metric_def *d, const char *family)
{
	put_family(f, om, family, d->kind == METRIC_COUNTER ? "counter" : "gauge",
		   figure_in_nanoseconds(d->figure) ? "seconds" : NULL, d->help);
}

static void put_cgroup_defs(struct page *f, bool om, const struct metrics_snapshot *s)
{
	const struct metric_def *d, *first = NULL;
	const struct metrics_cgroup *c;
	size_t i;
	int k;

	for (i = 0; i < NR_METRIC_DEFS; i++) {
		d = &metric_defs[i];
		if (!first || strcmp(first->family, d->family)) {
			first = d;
			put_def_family(f, om, d, d->family);
		}
		for (k = 0; k < s->nr_cgroups; k++) {
			c = &s->cgroups[k];
			if (!def_has_value(d, c, &c->totals.sum))
				continue;
			put_sample(f, d->family, def_suffix(d), c->label, NULL, d->labels, NULL,
				   NULL);
			put_def_value(f, d, &c->totals.sum, c->tasks);
		}
	}
}

/* The thread pools' families (--threads): cgstat_pool_ and the rest of a cgroup's name. */
static void put_pool_defs(struct page *f, bool om, const struct metrics_snapshot *s)
{
	const struct metric_def *d, *first = NULL;
	const struct metrics_cgroup *c;
	const struct metrics_pool *p;
	char family[96];
	size_t i;
	int k, j;

	for (k = 0; k < s->nr_cgroups && !s->cgroups[k].nr_pools; k++)
		;
	if (k == s->nr_cgroups)
		return;
	for (i = 0; i < NR_METRIC_DEFS; i++) {
		d = &metric_defs[i];
		if (!d->pool)
			continue;
		snprintf(family, sizeof(family), "cgstat_pool_%s", d->family + strlen("cgstat_"));
		if (!first || strcmp(first->family, d->family)) {
			first = d;
			put_def_family(f, om, d, family);
		}
		for (k = 0; k < s->nr_cgroups; k++) {
			c = &s->cgroups[k];
			for (j = 0; j < c->nr_pools; j++) {
				p = &c->pools[j];
				if (!def_has_value(d, c, &p->sum))
					continue;
				put_sample(f, family, def_suffix(d), c->label, p->label, d->labels,
					   NULL, NULL);
				put_def_value(f, d, &p->sum, p->tasks);
			}
		}
	}
}

static uint64_t busiest_ns(const struct metrics_cgroup *c)
{
	return c->busiest_ns;
}

static uint64_t measured_waits(const struct metrics_cgroup *c)
{
	return c->hist_count;
}

static uint64_t unmeasured_waits(const struct metrics_cgroup *c)
{
	return c->totals.sum.count[CG_RUNQ_WAITS] - c->hist_count;
}

/*
 * A cgroup's counters that are not figures of the table: what metrics_cgroup keeps itself.
 * from_events: only the scheduler's events give it, so a cgroup counted by --light's sweep has
 * no sample of it (as the table's figures, core/derived.h), where 0 would say none happened.
 */
static const struct {
	const char *family, *help;
	bool seconds; /* value() is nanoseconds, shown as seconds; else a count */
	bool from_events;
	uint64_t (*value)(const struct metrics_cgroup *c);
} cgroup_counters[] = {
	{ "cgstat_busiest_thread_cpu_seconds",
	  "On-CPU time of the cgroup's busiest thread of each interval, summed: its rate is the "
	  "cores the busiest thread used (one thread at 1 is a serial stage)",
	  true, true, busiest_ns },
	{ "cgstat_runqueue_waits",
	  "Run-queue waits of the cgroup's threads whose length cgstat measured: "
	  "cgstat_runqueue_wait_duration_seconds_count, by construction",
	  false, true, measured_waits },
	{ "cgstat_runqueue_unmeasured_waits",
	  "Run-queue waits the kernel's sched_info showed at a switch-in that no event did (with "
	  "--light, every wait): their time is in cgstat_runqueue_wait_seconds_total, their "
	  "length unknown",
	  false, false, unmeasured_waits },
};

/* cgroup_counters, and the intervals by verdict. */
static void put_cgroup_counts(struct page *f, bool om, const struct metrics_snapshot *s)
{
	const struct metrics_cgroup *c;
	char labels[64];
	size_t i;
	int k, v;

	for (i = 0; i < ARRAY_SIZE(cgroup_counters); i++) {
		put_family(f, om, cgroup_counters[i].family, "counter",
			   cgroup_counters[i].seconds ? "seconds" : NULL, cgroup_counters[i].help);
		for (k = 0; k < s->nr_cgroups; k++) {
			c = &s->cgroups[k];
			if (cgroup_counters[i].from_events && c->totals.sum.light)
				continue;
			put_sample(f, cgroup_counters[i].family, "_total", c->label, NULL, NULL,
				   NULL, NULL);
			if (cgroup_counters[i].seconds)
				put_seconds(f, cgroup_counters[i].value(c));
			else
				put_digits(f, cgroup_counters[i].value(c), 1);
			page_putc(f, '\n');
		}
	}
	put_family(f, om, "cgstat_verdict_intervals", "counter", NULL,
		   "Intervals by the verdict on the cgroup (what limited it): each interval of the "
		   "cgroup counts in one verdict");
	for (k = 0; k < s->nr_cgroups; k++) {
		c = &s->cgroups[k];
		for (v = 0; v < CG_NR_VERDICTS; v++) {
			snprintf(labels, sizeof(labels), "verdict=\"%s\"", verdict_names[v]);
			put_sample(f, "cgstat_verdict_intervals", "_total", c->label, NULL, labels,
				   NULL, NULL);
			put_digits(f, c->verdicts[v], 1);
			page_putc(f, '\n');
		}
	}
}

static void put_histogram(struct page *f, bool om, const struct metrics_snapshot *s)
{
	static const char family[] = "cgstat_runqueue_wait_duration_seconds";
	const struct metrics_cgroup *c;
	char le[NR_HIST_EDGES][32]; /* le="EDGE": made once a page, written as is */
	uint64_t below;
	int i, k;

	/*
	 * Exactly the waits whose length cgstat saw (each switch-in from a run queue): _sum is
	 * their lengths; cgstat_runqueue_unmeasured_waits_total has the others.
	 */
	put_family(f, om, family, "histogram", "seconds",
		   "Run-queue waits of the cgroup's threads by length (edges four an octave, "
		   "exact edges of cgstat's own histogram)");
	for (i = 0; i < NR_HIST_EDGES; i++)
		snprintf(le[i], sizeof(le[i]), "le=\"%.10g\"",
			 (double)hist_edge_ns(i) / NSEC_PER_SEC);
	for (k = 0; k < s->nr_cgroups; k++) {
		c = &s->cgroups[k];
		/* --light measures no wait's length */
		if (c->totals.sum.light)
			continue;
		below = 0;
		for (i = 0; i < NR_HIST_EDGES; i++) {
			below += c->hist[i];
			put_sample(f, family, "_bucket", c->label, NULL, le[i], NULL, NULL);
			put_digits(f, below, 1);
			page_putc(f, '\n');
		}
		put_sample(f, family, "_bucket", c->label, NULL, "le=\"+Inf\"", NULL, NULL);
		put_digits(f, c->hist_count, 1);
		page_putc(f, '\n');
		put_sample(f, family, "_count", c->label, NULL, NULL, NULL, NULL);
		put_digits(f, c->hist_count, 1);
		page_putc(f, '\n');
		put_sample(f, family, "_sum", c->label, NULL, NULL, NULL, NULL);
		put_seconds(f, c->totals.sum.count[CG_RUNQ_MEASURED_NS]);
		page_putc(f, '\n');
	}
}

/*
 * perf's clock events count nanoseconds: each is a family of its own in seconds, the other
 * events counts under cgstat_perf_events_total.
 */
static const struct {
	const char *event, *family, *help;
} perf_clocks[] = {
	{ "task-clock", "cgstat_perf_task_clock_seconds",
	  "The cgroup's task-clock as perf stat counts it: time its threads ran" },
	{ "cpu-clock", "cgstat_perf_cpu_clock_seconds",
	  "The cgroup's cpu-clock as perf stat counts it" },
};

static const char *perf_clock_family(const char *event)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(perf_clocks); i++)
		if (!strcmp(perf_clocks[i].event, event))
			return perf_clocks[i].family;
	return NULL;
}

static void put_perf(struct page *f, bool om, const struct metrics_snapshot *s)
{
	const struct metrics_cgroup *c;
	bool any = false;
	size_t i;
	int k, e;

	for (i = 0; i < ARRAY_SIZE(perf_clocks); i++) {
		for (e = 0; e < s->nr_events && strcmp(s->event_names[e], perf_clocks[i].event);
		     e++)
			;
		for (k = 0; k < s->nr_cgroups && e < s->nr_events; k++) {
			c = &s->cgroups[k];
			if (!c->totals.sum.counter_valid[e])
				continue;
			if (!any)
				put_family(f, om, perf_clocks[i].family, "counter", "seconds",
					   perf_clocks[i].help);
			any = true;
			put_sample(f, perf_clocks[i].family, "_total", c->label, NULL, NULL, NULL,
				   NULL);
			put_seconds(f, c->totals.sum.counter[e]);
			page_putc(f, '\n');
		}
		any = false;
	}
	for (e = 0; e < s->nr_events; e++) {
		if (perf_clock_family(s->event_names[e]))
			continue;
		for (k = 0; k < s->nr_cgroups; k++) {
			c = &s->cgroups[k];
			if (!c->totals.sum.counter_valid[e])
				continue;
			if (!any)
				put_family(f, om, "cgstat_perf_events", "counter", NULL,
					   "The cgroup's perf counts by perf's event name, as perf "
					   "stat counts them; an event this host cannot count is "
					   "left out");
			any = true;
			put_sample(f, "cgstat_perf_events", "_total", c->label, NULL, NULL, "event",
				   s->event_names[e]);
			put_digits(f, c->totals.sum.counter[e], 1);
			page_putc(f, '\n');
		}
	}
}

/* label="value" where the runtime gave a value */
static void put_info_label(struct page *f, const char *label, const char *value)
{
	if (!value || !*value)
		return;
	page_printf(f, ",%s=\"", label);
	put_label_value(f, value);
	page_putc(f, '"');
}

/*
 * What each container's runtime calls it, as labels of a sample of 1 to join on (group_left),
 * as kube-state-metrics' *_info: the figures keep the one cgroup label.
 */
static void put_cgroup_info(struct page *f, bool om, const struct metrics_snapshot *s)
{
	const struct metrics_cgroup *c;
	const struct cg_container *ct;
	char replica[16];
	bool any = false;
	int k;

	for (k = 0; k < s->nr_cgroups; k++) {
		c = &s->cgroups[k];
		if (!c->has_container)
			continue;
		if (!any)
			put_family(f, om, "cgstat_cgroup_info", "gauge", NULL,
				   "1 for each cgroup a container runtime named: what it said");
		any = true;
		ct = &c->container;
		page_printf(f, "cgstat_cgroup_info{cgroup=\"%s\"", c->label);
		put_info_label(f, "runtime", ct->runtime);
		if (!ct->pod)
			put_info_label(f, "container_id", ct->id);
		put_info_label(f, "container_name", ct->name);
		put_info_label(f, "image", ct->image);
		put_info_label(f, "pod_namespace", ct->pod_namespace);
		put_info_label(f, "pod_name", ct->pod_name);
		put_info_label(f, "pod_uid", ct->pod_uid);
		put_info_label(f, "compose_project", ct->compose_project);
		put_info_label(f, "compose_service", ct->compose_service);
		if (ct->compose_replica) {
			snprintf(replica, sizeof(replica), "%d", ct->compose_replica);
			put_info_label(f, "compose_replica", replica);
		}
		page_puts(f, "} 1\n");
	}
}

/* A family of one sample without labels. */
static void put_plain(struct page *f, bool om, const char *family, const char *type,
		      const char *unit, const char *help, const char *value)
{
	put_family(f, om, family, type, unit, help);
	page_printf(f, "%s%s %s\n", family, !strcmp(type, "counter") ? "_total" : "", value);
}

static void put_plain_u64(struct page *f, bool om, const char *family, const char *type,
			  const char *help, uint64_t value)
{
	char v[24];

	snprintf(v, sizeof(v), "%" PRIu64, value);
	put_plain(f, om, family, type, NULL, help, v);
}

static void put_plain_seconds(struct page *f, bool om, const char *family, const char *type,
			      const char *help, uint64_t ns)
{
	put_family(f, om, family, type, "seconds", help);
	page_printf(f, "%s%s ", family, !strcmp(type, "counter") ? "_total" : "");
	put_seconds(f, ns);
	page_putc(f, '\n');
}

/* How far the figures can be trusted, and what the drain costs. */
static void put_health(struct page *f, bool om, const struct metrics_snapshot *s)
{
	const struct cg_health *h = &s->run.health;
	char v[48];

	put_plain_u64(f, om, "cgstat_dropped_events", "counter",
		      "Events cgstat could not attribute: a BPF map was full", h->dropped_events);
	put_plain_u64(f, om, "cgstat_missed_switches", "counter",
		      "Switch-outs the kernel did not report, repaired", h->missed_switches);
	put_plain_u64(f, om, "cgstat_unseen_wakeups", "counter",
		      "Wakeups the kernel did not report, found at the switch-in",
		      h->unseen_wakeups);
	put_plain_u64(f, om, "cgstat_inconsistencies", "counter",
		      "Snapshots that found more than one task on a CPU: must stay 0",
		      h->inconsistencies);
	put_plain_u64(f, om, "cgstat_drains", "counter", "Intervals drained", s->run.drains);
	put_plain_seconds(f, om, "cgstat_drain_seconds", "counter",
			  "Wall time the intervals' snapshots, drains and outputs took: over "
			  "cgstat_drains_total, the mean drain",
			  s->run.drain_ns);
	put_plain_seconds(f, om, "cgstat_interval_seconds", "gauge",
			  "Length of the last interval, measured", s->run.interval_ns);
	snprintf(v, sizeof(v), "%" PRIu64 ".%03" PRIu64, s->run.epoch_ms / 1000,
		 s->run.epoch_ms % 1000);
	put_plain(f, om, "cgstat_last_interval_end_timestamp_seconds", "gauge", "seconds",
		  "Wall clock at the end of the last interval, in seconds since the epoch", v);
	put_plain_u64(f, om, "cgstat_cpus", "gauge",
		      "CPUs online: the cores a cgroup without a limit may use", s->run.nr_cpus);
	put_plain_u64(f, om, "cgstat_cgroups", "gauge",
		      "Cgroups exported, the removed ones within their grace included",
		      s->nr_cgroups);
}

/* cgstat's own cost in the kernel, with --bpf-stats: BPF_ENABLE_STATS' figures per program */
static void put_programs(struct page *f, bool om, const struct metrics_snapshot *s)
{
	const struct metrics_program *p;
	int i;

	if (!s->run.nr_programs)
		return;
	put_family(f, om, "cgstat_bpf_program_runs", "counter", NULL,
		   "Runs of each of cgstat's BPF programs since it began (--bpf-stats)");
	for (i = 0; i < s->run.nr_programs; i++) {
		p = &s->run.programs[i];
		put_sample(f, "cgstat_bpf_program_runs", "_total", NULL, NULL, NULL, "program",
			   p->name);
		put_digits(f, p->runs, 1);
		page_putc(f, '\n');
	}
	put_family(f, om, "cgstat_bpf_program_run_seconds", "counter", "seconds",
		   "Time each of cgstat's BPF programs ran since it began (--bpf-stats), as the "
		   "kernel measures it: the cost cgstat adds to the events it counts");
	for (i = 0; i < s->run.nr_programs; i++) {
		p = &s->run.programs[i];
		put_sample(f, "cgstat_bpf_program_run_seconds", "_total", NULL, NULL, NULL,
			   "program", p->name);
		put_seconds(f, p->run_ns);
		page_putc(f, '\n');
	}
}

/* What every Prometheus client library exports of its process, and what cgstat is. */
static void put_process(struct page *f, bool om, const char *libbpf)
{
	struct process_self p;
	char v[48];

	put_family(f, om, "cgstat_build", "info", NULL, "cgstat's version and libbpf's");
	page_printf(f, "cgstat_build_info{version=\"%s\",libbpf=\"", CGSTAT_VERSION);
	put_label_value(f, libbpf);
	page_puts(f, "\"} 1\n");
	if (process_self_read(&p))
		return;
	put_plain_seconds(f, om, "process_cpu_seconds", "counter",
			  "User and system CPU time cgstat's threads spent", p.cpu_ns);
	put_plain_u64(f, om, "process_resident_memory_bytes", "gauge",
		      "Resident memory size in bytes", p.rss_bytes);
	put_plain_u64(f, om, "process_virtual_memory_bytes", "gauge",
		      "Virtual memory size in bytes", p.vsize_bytes);
	snprintf(v, sizeof(v), "%.2f", p.start_seconds);
	put_plain(f, om, "process_start_time_seconds", "gauge", "seconds",
		  "Start time of the process since unix epoch in seconds", v);
	if (!p.have_fds)
		return;
	put_plain_u64(f, om, "process_open_fds", "gauge", "Number of open file descriptors",
		      p.open_fds);
	put_plain_u64(f, om, "process_max_fds", "gauge", "Maximum number of open file descriptors",
		      p.max_fds);
}

char *metrics_snapshot__render(const struct metrics_snapshot *s, bool openmetrics, size_t *len)
{
	struct page page = {}, *f = &page;

	if (s && s->run.have_interval) {
		put_cgroup_defs(f, openmetrics, s);
		put_cgroup_counts(f, openmetrics, s);
		put_histogram(f, openmetrics, s);
		put_perf(f, openmetrics, s);
		put_pool_defs(f, openmetrics, s);
		put_cgroup_info(f, openmetrics, s);
		put_health(f, openmetrics, s);
		put_programs(f, openmetrics, s);
	}
	put_process(f, openmetrics, s ? s->libbpf_version : "");
	put_plain(f, openmetrics, "cgstat_up", "gauge", NULL,
		  "1 once the first interval is in, 0 before",
		  s && s->run.have_interval ? "1" : "0");
	if (openmetrics)
		page_puts(f, "# EOF\n");
	return page_end(f, len);
}
