// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE /* vasprintf() */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "sources/collector.h"
#include "sources/refusal.h"
#include "sources/thread_table.h"
#include "lib/util.h"
#include "cgstat.skel.h"
#include "cgstat_walk.skel.h"

struct collector {
	struct cgstat_bpf *skel;
	struct cg_slot_snap *snap; /* slot_snap, mapped read-only */
	size_t snap_len;
	uint32_t max_slots;
	uint32_t max_pool_slots; /* of max_slots, what pools may hold */
	int nr_cpus;
	void *zero_live; /* one slot's worth of zeroes for every possible CPU */
	struct cg_slot_preempters *preempters; /* slot_preempters, mapped read-write */
	size_t preempters_len;
	struct cg_preempter *pairs; /* collector__preempters()'s, CG_PREEMPTERS_PER_SLOT a slot */
	/* with pools: the thread table and its free entries' ring, mapped, and their reader */
	struct cg_thread_entry *thread_table;
	uint64_t *thread_free;
	struct thread_table *threads;
	/* with pools: the wake graph's pairs, mapped; its counts, summed over CPUs each drain */
	struct cg_wake_edge *wake_edges;
	uint64_t *wake_counts, *wake_percpu;
	uint32_t *wake_keys;
	/* the last two snapshots' times: the interval the thread table is read for */
	uint64_t snapshot_before, snapshot_at;
	/*
	 * --light: the sweep, run before each snapshot: the walk (its object on these maps), or
	 * else the iterator's link
	 */
	struct cgstat_walk_bpf *walk;
	struct bpf_link *light_sweep;
};

#define THREAD_TABLE_BYTES ((size_t)CG_THREAD_TABLE * sizeof(struct cg_thread_entry))
#define THREAD_FREE_BYTES  ((size_t)CG_THREAD_TABLE * sizeof(uint64_t))
#define WAKE_EDGES_BYTES   ((size_t)CG_WAKE_EDGES * sizeof(struct cg_wake_edge))

/*
 * The verifier's log levels (the kernel's include/linux/bpf_verifier.h; not in its UAPI): the
 * path that failed, instruction by instruction (a path that passed leaves nothing, but its
 * printing takes 2 to 4 times the verification time), and the statistics (time, stack depth,
 * instructions processed).
 */
#define VERIFIER_LOG_PATH  1
#define VERIFIER_LOG_STATS 4

static bool libbpf_verbose;
/*
 * While the object loads without -vv: libbpf's warnings, held for the one line said if the load
 * fails, as the verifier's log alone can run to thousands of lines.
 */
static struct load_refusal *held;

/*
 * libbpf's warnings always; with -vv everything it says, its debug messages too, as
 * libbpf-tools' -v does (its info level alone says next to nothing on a normal load).
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char *msg;
	int n;

	if (level != LIBBPF_WARN && !libbpf_verbose)
		return 0;
	if (!held)
		return vfprintf(stderr, fmt, args);
	n = vasprintf(&msg, fmt, args);
	if (n < 0)
		return 0; /* no memory for it: the line says less */
	load_refusal_add(held, msg);
	free(msg);
	return n;
}

static int size_maps(struct cgstat_bpf *skel, uint32_t slots)
{
	struct bpf_map *maps[] = {
		skel->maps.slot_live,	 skel->maps.slot_info,	 skel->maps.slot_snap,
		skel->maps.cgroup_slots, skel->maps.free_slots,	 skel->maps.slot_preempters,
		skel->maps.pool_slots,	 skel->maps.pools_taken,
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		err = bpf_map__set_max_entries(maps[i], slots);
		if (err)
			return err;
	}
	return 0;
}

/*
 * With --threads (pools), what only it uses: the programs loaded, the thread table and the
 * wake graph's maps at their size; without, none of them loaded and the maps at one entry.
 */
static int pools_prepare(struct cgstat_bpf *skel)
{
	struct bpf_program *progs[] = {
		skel->progs.cg_task_rename,  skel->progs.cg_thread_freed,
		skel->progs.cg_sched_waking, skel->progs.cg_hrtimer_entry,
		skel->progs.cg_hrtimer_exit, skel->progs.cg_timer_entry,
		skel->progs.cg_timer_exit,   skel->progs.cg_irq_entry,
		skel->progs.cg_irq_exit,     skel->progs.cg_softirq_entry,
		skel->progs.cg_softirq_exit,
	};
	struct {
		struct bpf_map *map;
		uint32_t entries;
	} maps[] = {
		{ skel->maps.thread_table, CG_THREAD_TABLE },
		{ skel->maps.thread_free, CG_THREAD_TABLE },
		{ skel->maps.wake_edge_index, CG_WAKE_EDGES },
		{ skel->maps.wake_edges, CG_WAKE_EDGES },
		{ skel->maps.wake_counts, CG_WAKE_EDGES },
	};
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(progs); i++)
		bpf_program__set_autoload(progs[i], skel->rodata->pools);
	/* the depth programs, from cg_hrtimer_entry on, attach_depths() attaches */
	for (i = 3; i < ARRAY_SIZE(progs); i++)
		bpf_program__set_autoattach(progs[i], false);
	for (i = 0; skel->rodata->pools && i < ARRAY_SIZE(maps); i++) {
		err = bpf_map__set_max_entries(maps[i].map, maps[i].entries);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Whether the kernel has the open-coded task iterator (Linux 6.7) for cg_light_walk: its
 * kfuncs are in the kernel's BTF. Asked before cgstat_walk.bpf.o is opened, as libbpf 1.1
 * would look for a missing kfunc in the modules' BTF, which takes CAP_SYS_ADMIN on 6.1.
 */
static bool kernel_has_task_walk(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool has;

	if (!vmlinux)
		return false;
	has = btf__find_by_name_kind(vmlinux, "bpf_iter_task_new", BTF_KIND_FUNC) >= 0;
	btf__free(vmlinux);
	return has;
}

/*
 * --light loads the sweep and the exit path in place of every scheduler event program and the
 * seeding; without it, none of the light ones. cg_light_sweep always, though light_walk_open()
 * may leave it unused: the walk's object can only be tried once these maps exist.
 */
static void light_prepare(struct cgstat_bpf *skel, bool light)
{
	struct bpf_program *events[] = {
		skel->progs.cg_sched_switch,	 skel->progs.cg_sched_wakeup,
		skel->progs.cg_sched_wakeup_new, skel->progs.cg_seed_cpu,
		skel->progs.cg_seed_tasks,
	};
	struct bpf_program *sweep[] = {
		skel->progs.cg_light_sweep,
		skel->progs.cg_light_exit,
		skel->progs.cg_light_freed,
	};
	size_t i;

	skel->rodata->light = light;
	for (i = 0; i < ARRAY_SIZE(events); i++)
		bpf_program__set_autoload(events[i], !light);
	for (i = 0; i < ARRAY_SIZE(sweep); i++)
		bpf_program__set_autoload(sweep[i], light);
	bpf_program__set_autoattach(skel->progs.cg_light_sweep, false);
}

/* A map's name less the object's prefix libbpf gives an internal map ("cgstat_b.bss"). */
static const char *map_key(const struct bpf_map *map)
{
	const char *name = bpf_map__name(map);
	const char *dot = bpf_map__is_internal(map) ? strchr(name, '.') : NULL;

	return dot ? dot : name;
}

/* The map of obj that is map's (by map_key()), or NULL. */
static const struct bpf_map *map_of(const struct bpf_object *obj, const struct bpf_map *map)
{
	const struct bpf_map *ours;

	bpf_object__for_each_map(ours, obj)
		if (!strcmp(map_key(ours), map_key(map)))
			return ours;
	return NULL;
}

/*
 * --light where the kernel has the open-coded task iterator: cgstat_walk.bpf.o, built from the
 * same source, with its one program cg_light_walk loaded on cgstat's own maps, globals included
 * (so one layout). 0, or -errno where the task iterator's sweep stays (said with -v).
 */
static int light_walk_open(struct collector *c)
{
	struct cgstat_walk_bpf *walk;
	const struct bpf_map *ours;
	struct bpf_program *prog;
	struct bpf_map *map;
	int err = 0;

	if (!kernel_has_task_walk())
		return -EOPNOTSUPP;
	walk = cgstat_walk_bpf__open();
	if (!walk)
		return -errno;
	bpf_object__for_each_program(prog, walk->obj)
		bpf_program__set_autoload(prog, prog == walk->progs.cg_light_walk);
	bpf_object__for_each_map(map, walk->obj) {
		ours = map_of(c->skel->obj, map);
		err = ours ? bpf_map__reuse_fd(map, bpf_map__fd(ours)) : -ENOENT;
		if (err)
			break;
	}
	if (!err)
		err = cgstat_walk_bpf__load(walk);
	if (err) {
		cgstat_walk_bpf__destroy(walk);
		return err;
	}
	c->walk = walk;
	return 0;
}

/* Run an iterator program's link to its end: what it does is its side effects. 0 or -errno. */
static int iter_run(struct bpf_link *link)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return n < 0 ? -errno : 0;
}

/* --light: one sweep of every task, by whichever program light_prepare() loaded. 0 or -errno. */
static int light_sweep(struct collector *c)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	int err;

	if (!c->walk)
		return iter_run(c->light_sweep);
	err = bpf_prog_test_run_opts(bpf_program__fd(c->walk->progs.cg_light_walk), &run);
	return err ? err : (int)run.retval;
}

/*
 * With pools, the depth programs (bpf/wakes.bpf.h), after the rest: their ends, then their
 * beginnings. A timer's callback, an interrupt handler or a softirq that began between the
 * attaches of its beginning and its end would leave its CPU's depth up for good, and every later
 * wakeup there would count as the timer's or the interrupt's; one begun before its beginning is
 * attached ends at depth 0, which stays so. (The skeleton attaches in the object's order,
 * beginnings first: pools_prepare() keeps it from attaching these.) 0 or -errno.
 */
static int attach_depths(struct cgstat_bpf *skel)
{
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
	} order[] = {
		{ skel->progs.cg_hrtimer_exit, &skel->links.cg_hrtimer_exit },
		{ skel->progs.cg_timer_exit, &skel->links.cg_timer_exit },
		{ skel->progs.cg_irq_exit, &skel->links.cg_irq_exit },
		{ skel->progs.cg_softirq_exit, &skel->links.cg_softirq_exit },
		{ skel->progs.cg_hrtimer_entry, &skel->links.cg_hrtimer_entry },
		{ skel->progs.cg_timer_entry, &skel->links.cg_timer_entry },
		{ skel->progs.cg_irq_entry, &skel->links.cg_irq_entry },
		{ skel->progs.cg_softirq_entry, &skel->links.cg_softirq_entry },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(order); i++) {
		*order[i].link = bpf_program__attach(order[i].prog);
		if (!*order[i].link)
			return -errno;
	}
	return 0;
}

static int watch_cgroups(struct collector *c, const struct collector_opts *opts)
{
	struct cg_slot_info info = {};
	uint32_t slot;
	int err;

	for (slot = 0; slot < (uint32_t)opts->nr_watched; slot++) {
		info.cgid = opts->watched[slot];
		err = bpf_map__update_elem(c->skel->maps.slot_info, &slot, sizeof(slot), &info,
					   sizeof(info), BPF_ANY);
		if (err)
			return err;
		err = bpf_map__update_elem(c->skel->maps.cgroup_slots, &info.cgid,
					   sizeof(info.cgid), &slot, sizeof(slot), BPF_NOEXIST);
		if (err)
			return err;
	}
	c->skel->bss->slot_hwm = opts->nr_watched;
	return 0;
}

static int add_perf_fds(struct collector *c, const struct collector_opts *opts)
{
	uint32_t i, n = (uint32_t)opts->nr_perf_events * opts->nr_cpus;
	int err;

	for (i = 0; i < n; i++) {
		if (opts->perf_fds[i] < 0)
			continue;
		err = bpf_map__update_elem(c->skel->maps.perf_events, &i, sizeof(i),
					   &opts->perf_fds[i], sizeof(int), BPF_ANY);
		if (err)
			return err;
	}
	return 0;
}

/* Map the thread table (read-only) and its free entries' ring, and make their reader. */
static int threads_map(struct collector *c)
{
	void *p;

	p = mmap(NULL, THREAD_TABLE_BYTES, PROT_READ, MAP_SHARED,
		 bpf_map__fd(c->skel->maps.thread_table), 0);
	if (p == MAP_FAILED)
		return -errno;
	c->thread_table = p;
	p = mmap(NULL, THREAD_FREE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(c->skel->maps.thread_free), 0);
	if (p == MAP_FAILED)
		return -errno;
	c->thread_free = p;
	c->threads = thread_table__new(CG_THREAD_TABLE);
	if (!c->threads)
		return -errno;
	p = mmap(NULL, WAKE_EDGES_BYTES, PROT_READ, MAP_SHARED,
		 bpf_map__fd(c->skel->maps.wake_edges), 0);
	if (p == MAP_FAILED)
		return -errno;
	c->wake_edges = p;
	c->wake_counts = calloc(CG_WAKE_EDGES, sizeof(*c->wake_counts));
	c->wake_percpu = calloc((size_t)CG_WAKE_EDGES * c->nr_cpus, sizeof(*c->wake_percpu));
	c->wake_keys = calloc(CG_WAKE_EDGES, sizeof(*c->wake_keys));
	return c->wake_counts && c->wake_percpu && c->wake_keys ? 0 : -ENOMEM;
}

int collector__wake_edges(struct collector *c, const struct cg_wake_edge **edges,
			  const uint64_t **counts, uint32_t *nr)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t taken, n, i, out_batch;
	int err, cpu;

	*nr = 0;
	if (!c->wake_edges)
		return 0;
	taken = __atomic_load_n(&c->skel->bss->wake_edges_taken, __ATOMIC_ACQUIRE);
	if (taken > CG_WAKE_EDGES)
		taken = CG_WAKE_EDGES;
	/* the counts of [0, taken) in one call: a per-CPU array's values, every CPU's */
	n = taken;
	if (taken) {
		err = bpf_map_lookup_batch(bpf_map__fd(c->skel->maps.wake_counts), NULL, &out_batch,
					   c->wake_keys, c->wake_percpu, &n, &opts);
		if (err && errno != ENOENT)
			return -errno;
	}
	memset(c->wake_percpu + (size_t)n * c->nr_cpus, 0,
	       (size_t)(taken - n) * c->nr_cpus * sizeof(*c->wake_percpu));
	for (i = 0; i < taken; i++) {
		c->wake_counts[i] = 0;
		for (cpu = 0; cpu < c->nr_cpus; cpu++)
			c->wake_counts[i] += c->wake_percpu[(size_t)i * c->nr_cpus + cpu];
	}
	*edges = c->wake_edges;
	*counts = c->wake_counts;
	*nr = taken;
	return 0;
}

/*
 * Run prog on each online CPU in turn, where no tracepoint of that CPU can interleave with it;
 * args->first_cpu is 1 on the first CPU it runs on only. With offline_too, an offline CPU's
 * turn runs wherever the caller is, with args->cpu naming it (the snapshot still sums its
 * slots). 0, -ENXIO if no CPU was online, or -errno.
 */
static int run_on_each_cpu(struct collector *c, struct bpf_program *prog,
			   struct cg_snapshot_args *args, bool offline_too)
{
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(*args),
		    .flags = BPF_F_TEST_RUN_ON_CPU);
	LIBBPF_OPTS(bpf_test_run_opts, here, .ctx_in = args, .ctx_size_in = sizeof(*args));
	int cpu, err, online = 0;

	args->first_cpu = 1;
	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		args->cpu = CG_THIS_CPU;
		run.cpu = cpu;
		err = bpf_prog_test_run_opts(bpf_program__fd(prog), &run);
		if (err == -ENXIO && offline_too) {
			args->cpu = cpu;
			err = bpf_prog_test_run_opts(bpf_program__fd(prog), &here);
		} else if (err == -ENXIO) {
			continue;
		}
		if (err)
			return err;
		online += args->cpu == CG_THIS_CPU;
		args->first_cpu = 0;
	}
	return online ? 0 : -ENXIO;
}

/*
 * Seed what runs on each CPU (only a CPU may count a task on CPU), then every other task that
 * exists now, with the task iterator.
 */
static int seed_tasks(struct collector *c)
{
	struct cg_snapshot_args args;
	struct bpf_link *link;
	int err;

	err = run_on_each_cpu(c, c->skel->progs.cg_seed_cpu, &args, false);
	if (err)
		return err;
	link = bpf_program__attach_iter(c->skel->progs.cg_seed_tasks, NULL);
	if (!link)
		return -errno;
	err = iter_run(link);
	bpf_link__destroy(link);
	return err;
}

/* An error of libbpf's as words: its own codes (-LIBBPF_ERRNO__*) and errnos alike. */
static const char *bpf_strerror(int err)
{
	static char text[128];

	libbpf_strerror(err, text, sizeof(text));
	return text;
}

/*
 * Load the object. Without -vv, libbpf's warnings are held back, and a failure is one line
 * naming what the kernel refused and why; with it, they are all printed as they come.
 */
static int load(struct collector *c, const struct collector_opts *opts)
{
	struct utsname uts = { .release = "?" };
	struct load_refusal refusal = {};
	int err;

	held = opts->verbose ? NULL : &refusal;
	err = cgstat_bpf__load(c->skel);
	held = NULL;
	if (!err)
		return 0;
	if (!opts->verbose) {
		uname(&uts);
		load_refusal_print(stderr, &refusal, uts.release, bpf_strerror(err),
				   opts->btf_path);
	} else if (opts->btf_path) {
		fprintf(stderr, "cgstat: cannot load the BPF programs against the BTF in %s: %s\n",
			opts->btf_path, bpf_strerror(err));
	} else {
		fprintf(stderr, "cgstat: cannot load the BPF programs: %s\n", bpf_strerror(err));
	}
	return err;
}

struct collector *collector__open(const struct collector_opts *opts)
{
	/*
	 * -vv: each program's verifier statistics, which libbpf prints at debug level after a load
	 * that succeeded. With a level set, libbpf no longer loads a failed program again at level
	 * 1 for its log: -vvv asks for that level, and the failed path and libbpf's note on a CO-RE
	 * relocation that is in it.
	 */
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = opts->btf_path,
		    .kernel_log_level = (opts->verbose ? VERIFIER_LOG_STATS : 0) |
					(opts->verifier_path ? VERIFIER_LOG_PATH : 0));
	struct collector *c;
	int err;

	libbpf_verbose = opts->verbose;
	libbpf_set_print(libbpf_print);

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max_slots = opts->all_cgroups ? opts->max_slots : (uint32_t)opts->nr_watched;
	/*
	 * Pools: CG_POOLS_PER_WATCHED a watched cgroup; in the all-cgroups mode as many pool
	 * slots as cgroup slots, shared by all (docs/metrics.md, "Thread pools": the memory)
	 */
	if (opts->pools)
		c->max_pool_slots = opts->all_cgroups
					    ? opts->max_slots
					    : (uint32_t)opts->nr_watched * CG_POOLS_PER_WATCHED;
	c->max_slots += c->max_pool_slots;
	c->nr_cpus = opts->nr_cpus;
	c->zero_live = calloc(c->nr_cpus, sizeof(struct cg_slot_live));
	if (!c->zero_live) {
		err = -ENOMEM;
		goto fail;
	}

	c->skel = cgstat_bpf__open_opts(&open_opts);
	if (!c->skel) {
		err = -errno;
		fprintf(stderr, "cgstat: cannot open the BPF object: %s\n", bpf_strerror(err));
		goto fail;
	}
	c->skel->rodata->all_cgroups = opts->all_cgroups;
	c->skel->rodata->max_slots = c->max_slots;
	c->skel->rodata->nr_perf_events = opts->nr_perf_events;
	c->skel->rodata->nr_cpus = opts->nr_cpus;
	c->skel->rodata->pools = opts->pools;
	c->skel->rodata->max_pool_slots = c->max_pool_slots;
	c->skel->rodata->pool_exact = opts->pool_exact;
	err = size_maps(c->skel, c->max_slots);
	if (!err)
		err = pools_prepare(c->skel);
	light_prepare(c->skel, opts->light);
	if (!err && opts->nr_perf_events)
		err = bpf_map__set_max_entries(c->skel->maps.perf_events,
					       opts->nr_perf_events * opts->nr_cpus);
	if (err)
		goto fail;
	/* the snapshot and the seeding iterator run on demand, never on an event */
	bpf_program__set_autoattach(c->skel->progs.cg_snapshot, false);
	bpf_program__set_autoattach(c->skel->progs.cg_seed_cpu, false);
	bpf_program__set_autoattach(c->skel->progs.cg_seed_tasks, false);

	err = load(c, opts);
	if (err)
		goto fail;
	err = watch_cgroups(c, opts);
	if (err) {
		fprintf(stderr, "cgstat: cannot register the watched cgroups: %s\n",
			strerror(-err));
		goto fail;
	}
	err = add_perf_fds(c, opts);
	if (err) {
		fprintf(stderr, "cgstat: cannot hand the perf counters to BPF: %s\n",
			strerror(-err));
		goto fail;
	}

	c->snap_len = (size_t)c->max_slots * sizeof(struct cg_slot_snap);
	c->snap = mmap(NULL, c->snap_len, PROT_READ, MAP_SHARED,
		       bpf_map__fd(c->skel->maps.slot_snap), 0);
	if (c->snap == MAP_FAILED) {
		err = -errno;
		c->snap = NULL;
		fprintf(stderr, "cgstat: cannot map the snapshot: %s\n", strerror(-err));
		goto fail;
	}

	c->preempters_len = (size_t)c->max_slots * sizeof(struct cg_slot_preempters);
	c->preempters = mmap(NULL, c->preempters_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			     bpf_map__fd(c->skel->maps.slot_preempters), 0);
	c->pairs = calloc((size_t)c->max_slots * CG_PREEMPTERS_PER_SLOT, sizeof(*c->pairs));
	if (c->preempters == MAP_FAILED || !c->pairs) {
		err = c->pairs ? -errno : -ENOMEM;
		if (c->preempters == MAP_FAILED)
			c->preempters = NULL;
		fprintf(stderr, "cgstat: cannot map the preempters: %s\n", strerror(-err));
		goto fail;
	}

	if (c->skel->rodata->pools) {
		err = threads_map(c);
		if (err) {
			fprintf(stderr, "cgstat: cannot set up the thread table: %s\n",
				strerror(-err));
			goto fail;
		}
	}
	err = cgstat_bpf__attach(c->skel);
	if (!err && opts->pools)
		err = attach_depths(c->skel);
	if (err) {
		fprintf(stderr, "cgstat: cannot attach the BPF programs: %s\n", bpf_strerror(err));
		goto fail;
	}
	if (opts->light) {
		/* the first sweep takes every task's figures in: each counts from here */
		err = light_walk_open(c);
		if (err && opts->verbose)
			fprintf(stderr, "cgstat: no open-coded task iterator: %s\n",
				bpf_strerror(err));
		if (err)
			c->light_sweep =
				bpf_program__attach_iter(c->skel->progs.cg_light_sweep, NULL);
		err = c->walk || c->light_sweep ? light_sweep(c) : -errno;
	} else {
		err = seed_tasks(c);
	}
	if (err) {
		fprintf(stderr, "cgstat: cannot seed the existing tasks: %s\n", strerror(-err));
		goto fail;
	}
	return c;
fail:
	collector__close(c);
	errno = -err;
	return NULL;
}

int collector__snapshot(struct collector *c, const struct cg_slot_snap **snap, uint32_t *nr_slots,
			uint64_t *at_ns)
{
	struct cg_snapshot_args args;
	uint32_t hwm;
	int err;

	/* --light: every task's figures charged to its slots first */
	if (c->walk || c->light_sweep) {
		err = light_sweep(c);
		if (err)
			return err;
	}
	/*
	 * Each CPU's slots are read on that CPU and added up in slot_snap. CPUs run one after the
	 * other: the sum needs no atomics.
	 */
	err = run_on_each_cpu(c, c->skel->progs.cg_snapshot, &args, true);
	if (err)
		return err;
	hwm = c->skel->bss->slot_hwm;
	*nr_slots = hwm < c->max_slots ? hwm : c->max_slots;
	*snap = c->snap;
	*at_ns = c->skel->bss->snapshot_now;
	c->snapshot_before = c->snapshot_at;
	c->snapshot_at = *at_ns;
	return 0;
}

int collector__threads(struct collector *c, const struct cg_thread_rec **recs, size_t *nr)
{
	uint32_t head, taken = c->skel->bss->thread_entries_new;
	const uint32_t *done;
	size_t nr_done, i;
	int err;

	if (!c->threads)
		return -EINVAL;
	/* the reader reads no further than the table: taken counts the full table's misses too */
	err = thread_table__read(c->threads, c->thread_table, taken, c->snapshot_before,
				 c->snapshot_at);
	/* the exited threads' entries, read for good, go back to BPF: the slot first, then head */
	done = thread_table__done(c->threads, &nr_done);
	head = c->skel->bss->thread_free_head;
	for (i = 0; i < nr_done; i++)
		c->thread_free[head++ % CG_THREAD_TABLE] = done[i];
	__atomic_store_n(&c->skel->bss->thread_free_head, head, __ATOMIC_RELEASE);
	*recs = thread_table__recs(c->threads, nr);
	return err;
}

bool collector__light_walks(const struct collector *c)
{
	return c->walk;
}

uint32_t collector__max_slots(const struct collector *c)
{
	return c->max_slots;
}

/* Slot slot's counts zeroed, its info cleared, and the slot on the free list. */
static int slot_release(struct collector *c, uint32_t slot)
{
	struct cg_slot_info info = {};
	int err;

	err = bpf_map__update_elem(c->skel->maps.slot_live, &slot, sizeof(slot), c->zero_live,
				   (size_t)c->nr_cpus * sizeof(struct cg_slot_live), BPF_ANY);
	if (err)
		return err;
	err = bpf_map__update_elem(c->skel->maps.slot_info, &slot, sizeof(slot), &info,
				   sizeof(info), BPF_ANY);
	if (err)
		return err;
	if (slot < c->max_slots)
		memset(&c->preempters[slot], 0, sizeof(c->preempters[slot]));
	return bpf_map__update_elem(c->skel->maps.free_slots, NULL, 0, &slot, sizeof(slot),
				    BPF_ANY);
}

int collector__free_slot(struct collector *c, uint32_t slot, uint64_t cgid)
{
	uint32_t zero = 0;
	int err;

	err = bpf_map__delete_elem(c->skel->maps.cgroup_slots, &cgid, sizeof(cgid), 0);
	if (err && err != -ENOENT)
		return err;
	/* its pools were given back first; the slot's next cgroup starts with none */
	if (c->max_pool_slots) {
		err = bpf_map__update_elem(c->skel->maps.pools_taken, &slot, sizeof(slot), &zero,
					   sizeof(zero), BPF_ANY);
		if (err)
			return err;
	}
	return slot_release(c, slot);
}

int collector__free_pool_slot(struct collector *c, uint32_t slot, uint32_t owner,
			      const char pool[CG_COMM_LEN])
{
	struct cg_pool_key key = { .watched_slot = owner };
	int err;

	memcpy(key.pool, pool, CG_COMM_LEN);
	/* the name first: no thread finds the slot by it from here on */
	err = bpf_map__delete_elem(c->skel->maps.pool_slots, &key, sizeof(key), 0);
	if (err && err != -ENOENT)
		return err;
	err = slot_release(c, slot);
	if (err)
		return err;
	/* its cgroup's count of pools is reset as its slot is freed, which comes after */
	__atomic_fetch_sub(&c->skel->bss->pool_slots_held, 1, __ATOMIC_RELAXED);
	return 0;
}

int collector__rewatch(struct collector *c, uint32_t slot, uint64_t old_cgid, uint64_t new_cgid)
{
	uint32_t other;
	int err;

	/* the map holds one entry a watched cgroup: the old one goes first */
	if (bpf_map__lookup_elem(c->skel->maps.cgroup_slots, &new_cgid, sizeof(new_cgid), &other,
				 sizeof(other), 0) == 0)
		return -EEXIST;
	err = bpf_map__delete_elem(c->skel->maps.cgroup_slots, &old_cgid, sizeof(old_cgid), 0);
	if (err && err != -ENOENT)
		return err;
	err = bpf_map__update_elem(c->skel->maps.cgroup_slots, &new_cgid, sizeof(new_cgid), &slot,
				   sizeof(slot), BPF_NOEXIST);
	if (err) {
		bpf_map__update_elem(c->skel->maps.cgroup_slots, &old_cgid, sizeof(old_cgid), &slot,
				     sizeof(slot), BPF_NOEXIST);
		return err;
	}
	/*
	 * A target that had no cgroup yet counts under its cgroup's id from now on, which its
	 * records carry; a cgroup made again keeps the first one's, so that its rows go on
	 */
	if (cg_cgid_pending(old_cgid)) {
		struct cg_slot_info info = {};

		if (!bpf_map__lookup_elem(c->skel->maps.slot_info, &slot, sizeof(slot), &info,
					  sizeof(info), 0)) {
			info.cgid = new_cgid;
			bpf_map__update_elem(c->skel->maps.slot_info, &slot, sizeof(slot), &info,
					     sizeof(info), BPF_ANY);
		}
	}
	/* only the loader writes it: every task resolves its slots again at its next event */
	__atomic_store_n(&c->skel->bss->watch_gen, c->skel->bss->watch_gen + 1, __ATOMIC_RELEASE);
	return 0;
}

static void origin_copy(const struct cg_cgroup_origin *origin, uint64_t *parent_cgid, char *name)
{
	*parent_cgid = origin->parent_cgid;
	memcpy(name, origin->leaf_name, CG_LEAF_NAME_MAX);
	name[CG_LEAF_NAME_MAX - 1] = '\0';
}

int collector__slot_origin(struct collector *c, uint32_t slot, uint64_t cgid, uint64_t *parent_cgid,
			   char *name)
{
	struct cg_slot_info info;
	int err;

	err = bpf_map__lookup_elem(c->skel->maps.slot_info, &slot, sizeof(slot), &info,
				   sizeof(info), 0);
	if (err)
		return err;
	if (info.cgid != cgid)
		return -ENOENT;
	origin_copy(&info.origin, parent_cgid, name);
	return 0;
}

int collector__cgroup_origin(struct collector *c, uint64_t cgid, uint64_t *parent_cgid, char *name)
{
	const struct bpf_map *map = c->skel->maps.cgroup_origins;
	struct cg_cgroup_origin origin;
	int err;

	err = bpf_map__lookup_elem(map, &cgid, sizeof(cgid), &origin, sizeof(origin), 0);
	if (err)
		return err;
	origin_copy(&origin, parent_cgid, name);
	return 0;
}

void collector__health(const struct collector *c, struct cg_health *health)
{
	health->dropped_events = c->skel->bss->dropped_events;
	health->missed_switches = c->skel->bss->missed_switches;
	health->unseen_wakeups = c->skel->bss->unseen_wakeups;
	health->inconsistencies = c->skel->bss->oncpu_violations;
	health->untabled_threads = c->skel->bss->threads_untabled;
	health->dropped_wakeups = c->skel->bss->wake_edges_dropped;
}

bool collector__multiplexed(const struct collector *c)
{
	return c->skel->bss->multiplexed;
}

struct bpf_object *collector__object(const struct collector *c)
{
	return c->skel->obj;
}

int collector__preempters(struct collector *c, uint32_t nr_slots, const struct cg_preempter **pairs,
			  size_t *nr)
{
	const struct cg_slot_preempters *t;
	size_t n = 0;
	uint64_t cgid;
	uint32_t slot;
	int i;

	if (nr_slots > c->max_slots)
		nr_slots = c->max_slots;
	for (slot = 0; slot < nr_slots; slot++) {
		t = &c->preempters[slot];
		for (i = 0; i < CG_PREEMPTERS_PER_SLOT; i++) {
			cgid = __atomic_load_n(&t->cgid[i], __ATOMIC_RELAXED);
			if (!cgid)
				continue;
			c->pairs[n].key = (struct cg_preempter_key){ .slot = slot, .cgid = cgid };
			c->pairs[n++].count = __atomic_load_n(&t->count[i], __ATOMIC_RELAXED);
		}
	}
	*pairs = c->pairs;
	*nr = n;
	return 0;
}

/*
 * The count first, then the cgroup: a switch counted between the two lands in the freed entry
 * as a count of 1 that the next cgroup to take it starts from.
 */
void collector__forget_preempters(struct collector *c, const struct cg_preempter_key *keys,
				  size_t nr)
{
	struct cg_slot_preempters *t;
	size_t k;
	int i;

	for (k = 0; k < nr; k++) {
		if (keys[k].slot >= c->max_slots)
			continue;
		t = &c->preempters[keys[k].slot];
		for (i = 0; i < CG_PREEMPTERS_PER_SLOT; i++) {
			if (__atomic_load_n(&t->cgid[i], __ATOMIC_RELAXED) != keys[k].cgid)
				continue;
			__atomic_store_n(&t->count[i], 0, __ATOMIC_RELAXED);
			__atomic_store_n(&t->cgid[i], 0, __ATOMIC_RELEASE);
		}
	}
}

void collector__close(struct collector *c)
{
	if (!c)
		return;
	if (c->snap)
		munmap(c->snap, c->snap_len);
	if (c->preempters)
		munmap(c->preempters, c->preempters_len);
	if (c->thread_table)
		munmap(c->thread_table, THREAD_TABLE_BYTES);
	if (c->wake_edges)
		munmap(c->wake_edges, WAKE_EDGES_BYTES);
	free(c->wake_counts);
	free(c->wake_percpu);
	free(c->wake_keys);
	if (c->thread_free)
		munmap(c->thread_free, THREAD_FREE_BYTES);
	thread_table__free(c->threads);
	bpf_link__destroy(c->light_sweep);
	cgstat_walk_bpf__destroy(c->walk);
	cgstat_bpf__destroy(c->skel);
	free(c->zero_live);
	free(c->pairs);
	free(c);
}
