// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/cgroupfs.h"
#include "lib/hashtab.h"
#include "lib/message.h"
#include "lib/text.h"
#include "lib/util.h"

/* cpu.stat and the PSI files are a few hundred bytes; cgroup.threads is read for one tid. */
#define SMALL_FILE 2048

#define THROTTLING_BITS \
	((1u << CG_FS_PERIODS) | (1u << CG_FS_THROTTLED_PERIODS) | (1u << CG_FS_THROTTLED_NS))

/*
 * The files a reading takes, kept open from one reading to the next, each said at most once
 * per cgroup when it cannot be read.
 */
enum cgroupfs_file {
	FILE_CPU_STAT,
	FILE_CPU_PRESSURE,
	FILE_MEMORY_PRESSURE,
	FILE_IO_PRESSURE,
	FILE_THREADS,	  /* for the v1 fallback: the first thread */
	FILE_V1_CPU_STAT, /* in the v1 cgroup of that thread */
	/* the limits, for the verdict: never said, and not tried again once absent */
	FILE_CPU_MAX,
	FILE_CPUSET,
	FILE_V1_QUOTA,
	FILE_V1_PERIOD,
	NR_FILES,
};

/* Each file's name in the cgroup's directory (the v1 one's in its v1 cgroup's). */
static const char *const file_names[NR_FILES] = {
	[FILE_CPU_STAT] = "cpu.stat",
	[FILE_CPU_PRESSURE] = "cpu.pressure",
	[FILE_MEMORY_PRESSURE] = "memory.pressure",
	[FILE_IO_PRESSURE] = "io.pressure",
	[FILE_THREADS] = "cgroup.threads",
	[FILE_V1_CPU_STAT] = "cpu.stat",
	[FILE_CPU_MAX] = "cpu.max",
	[FILE_CPUSET] = "cpuset.cpus.effective",
	[FILE_V1_QUOTA] = "cpu.cfs_quota_us",
	[FILE_V1_PERIOD] = "cpu.cfs_period_us",
};

/* Which items each PSI file gives: "some" and "full" (-1: not a column). */
static const struct {
	enum cgroupfs_file file;
	int some, full;
} pressure_files[] = {
	{ FILE_CPU_PRESSURE, CG_FS_CPU_SOME_NS, CG_FS_CPU_FULL_NS },
	{ FILE_MEMORY_PRESSURE, CG_FS_MEMORY_SOME_NS, CG_FS_MEMORY_FULL_NS },
	{ FILE_IO_PRESSURE, CG_FS_IO_SOME_NS, CG_FS_IO_FULL_NS },
};

struct cgroupfs_entry {
	struct hash_node node;
	uint64_t cgid;
	uint64_t sampled; /* the interval (count) of the last reading */
	struct cgroupfs_reading last;
	char *v1_path;	  /* the v1 cpu cgroup the throttling was last read from */
	int v1_tid;	  /* the thread v1_path was found from */
	uint32_t said;	  /* bit per enum cgroupfs_file: its failure was said */
	uint32_t absent;  /* bit per limit file: it does not exist (the controller is off) */
	int fd[NR_FILES]; /* -1: not open */
	char *dir;	  /* the folder its files were opened in */
	/* its files are another cgroup's now (made again, or followed): no baseline yet */
	bool restarted;
};

struct cgroupfs {
	struct hash_table entries;
	const char *proc;
	const struct cgroup_mount *v1_cpu;
	cgroupfs_dir_fn dir;
	void *ctx;
	bool quiet; /* the all-cgroups mode: no line for a vanished cgroup or the v1 source */
	uint64_t budget_ns; /* of reading per interval; 0: every row is read */
	bool budget_said;
	bool v1_said; /* where the throttling comes from, when not v2: said once */
	uint64_t interval;
};

static void set_item(struct cgroupfs_reading *r, int item, uint64_t v)
{
	r->value[item] = v;
	r->valid |= 1u << item;
}

/* The same in nanoseconds from microseconds, when it fits. */
static void set_item_us(struct cgroupfs_reading *r, int item, uint64_t us)
{
	if (us <= UINT64_MAX / NSEC_PER_USEC)
		set_item(r, item, us * NSEC_PER_USEC);
}

void cgroupfs_parse_cpu_stat(const char *text, struct cgroupfs_reading *r)
{
	static const struct {
		const char *key;
		int item;
		bool micros;
	} keys[] = {
		{ "nr_periods ", CG_FS_PERIODS, false },
		{ "nr_throttled ", CG_FS_THROTTLED_PERIODS, false },
		{ "throttled_usec ", CG_FS_THROTTLED_NS, true },
		{ "throttled_time ", CG_FS_THROTTLED_NS, false },
	};
	const char *line;
	uint64_t v;
	size_t i;

	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		for (i = 0; i < ARRAY_SIZE(keys); i++) {
			size_t n = strlen(keys[i].key);

			if (strncmp(line, keys[i].key, n) || text_parse_u64(line + n, &v, NULL))
				continue;
			if (keys[i].micros)
				set_item_us(r, keys[i].item, v);
			else
				set_item(r, keys[i].item, v);
		}
	}
}

/* The total= of a PSI line: the last field, in microseconds. */
static bool pressure_total(const char *line, uint64_t *us)
{
	const char *end = strchr(line, '\n'), *total;

	total = strstr(line, " total=");
	if (!total || (end && total > end))
		return false;
	return !text_parse_u64(total + 7, us, NULL);
}

void cgroupfs_parse_pressure(const char *text, int some, int full, struct cgroupfs_reading *r)
{
	const char *line;
	uint64_t us;

	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (some >= 0 && !strncmp(line, "some ", 5) && pressure_total(line, &us))
			set_item_us(r, some, us);
		else if (full >= 0 && !strncmp(line, "full ", 5) && pressure_total(line, &us))
			set_item_us(r, full, us);
	}
}

/* A quota and period in microseconds as cores; false without a quota. */
static bool quota_cores(uint64_t quota_us, uint64_t period_us, double *cores)
{
	if (!quota_us || !period_us)
		return false;
	*cores = (double)quota_us / (double)period_us;
	return true;
}

bool cgroupfs_parse_cpu_max(const char *text, double *cores)
{
	const char *period = strchr(text, ' ');
	uint64_t quota_us, period_us;

	if (!period || text_parse_u64(text, &quota_us, NULL) ||
	    text_parse_u64(period + 1, &period_us, NULL))
		return false; /* "max PERIOD" too: no quota */
	return quota_cores(quota_us, period_us, cores);
}

bool cgroupfs_parse_v1_quota(const char *quota, const char *period, double *cores)
{
	uint64_t quota_us, period_us;

	if (text_parse_u64(quota, &quota_us, NULL) || text_parse_u64(period, &period_us, NULL))
		return false; /* "-1" too: no quota */
	return quota_cores(quota_us, period_us, cores);
}

/* A CPU number of a list, ended by '-', ',', a line end or the end. */
static bool parse_cpu(const char **s, uint64_t *cpu)
{
	uint64_t x = 0;

	if (**s < '0' || **s > '9')
		return false;
	for (; **s >= '0' && **s <= '9'; (*s)++) {
		x = x * 10 + (uint64_t)(**s - '0');
		if (x > INT_MAX)
			return false;
	}
	*cpu = x;
	return **s == '-' || **s == ',' || **s == '\n' || !**s;
}

int cgroupfs_parse_cpu_list(const char *text)
{
	uint64_t first, last, n = 0;
	const char *s = text;

	if (!*s || *s == '\n')
		return *s && s[1] ? -1 : 0;
	for (;;) {
		if (!parse_cpu(&s, &first))
			return -1;
		last = first;
		if (*s == '-') {
			s++;
			if (!parse_cpu(&s, &last) || *s == '-' || last < first)
				return -1;
		}
		n += last - first + 1;
		if (n > INT_MAX)
			return -1;
		if (*s != ',')
			break;
		s++;
	}
	return (*s == '\n' && !s[1]) || !*s ? (int)n : -1;
}

/*
 * File file of e, in dir, into buf (NUL-terminated, cut at size - 1): 0 or -errno. The file
 * stays open for the next reading, which then costs the kernel's generating its text (an rstat
 * flush for cpu.stat, a per-CPU collection for PSI) but not a path walk and an open: a fifth
 * of the time (docs/performance.md). A removed cgroup's files read ENODEV through fds opened
 * before, which is -ENOENT here as for an open after.
 */
static int read_kept(struct cgroupfs_entry *e, enum cgroupfs_file file, const char *dir, char *buf,
		     size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int err;

	if (e->fd[file] < 0) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file_names[file]) >=
		    sizeof(path))
			return -ENAMETOOLONG;
		e->fd[file] = open(path, O_RDONLY | O_CLOEXEC);
		if (e->fd[file] < 0)
			return -errno;
	}
	do {
		n = pread(e->fd[file], buf, size - 1, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = errno == ENODEV ? -ENOENT : -errno;
		close(e->fd[file]);
		e->fd[file] = -1;
		return err;
	}
	buf[n] = '\0';
	return 0;
}

static void close_file(struct cgroupfs_entry *e, enum cgroupfs_file file)
{
	if (e->fd[file] >= 0)
		close(e->fd[file]);
	e->fd[file] = -1;
}

/*
 * A limit file of e: as read_kept(), but one that does not exist (its controller is not on
 * the cgroup) is not tried again for the cgroup, and nothing is said of it.
 */
static int read_limit_file(struct cgroupfs_entry *e, enum cgroupfs_file file, const char *dir,
			   char *buf, size_t size)
{
	int err;

	if (e->absent & (1u << file))
		return -ENOENT;
	err = read_kept(e, file, dir, buf, size);
	if (err == -ENOENT)
		e->absent |= 1u << file;
	return err;
}

/* The smaller of a reading's limit so far (0: none) and cores. */
static void lower_limit(struct cgroupfs_reading *now, double cores)
{
	if (cores > 0 && (!now->cpu_limit_cores || cores < now->cpu_limit_cores))
		now->cpu_limit_cores = cores;
}

static bool entry_has_id(const struct hash_node *n, const void *id)
{
	return container_of(n, struct cgroupfs_entry, node)->cgid == *(const uint64_t *)id;
}

static struct cgroupfs_entry *entry_get(struct cgroupfs *c, uint64_t cgid)
{
	struct hash_node *n = hash_table_find(&c->entries, hash_u64(cgid), entry_has_id, &cgid);
	struct cgroupfs_entry *e;

	if (n)
		return container_of(n, struct cgroupfs_entry, node);
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cgid = cgid;
	for (int i = 0; i < NR_FILES; i++)
		e->fd[i] = -1;
	hash_table_add(&c->entries, &e->node, hash_u64(cgid));
	return e;
}

static void entry_close_files(struct cgroupfs_entry *e)
{
	for (int i = 0; i < NR_FILES; i++)
		close_file(e, i);
}

static void entry_free(struct cgroupfs_entry *e)
{
	entry_close_files(e);
	free(e->v1_path);
	free(e->dir);
	free(e);
}

/* e's files from now on another cgroup's: none of its last reading or failures stands. */
static void entry_restart(struct cgroupfs_entry *e)
{
	entry_close_files(e);
	e->said = e->absent = 0;
	e->restarted = true;
}

/* Say once per cgroup and file that it could not be read, and that its figures are empty. */
static void say_unreadable(struct cgroupfs *c, struct cgroupfs_entry *e, const char *label,
			   enum cgroupfs_file file, int err)
{
	if (e->said & (1u << file) || (err == -ENOENT && c->quiet))
		return;
	e->said |= 1u << file;
	fputs("cgstat: ", stderr);
	message_quote(stderr, label);
	fprintf(stderr, ": cannot read %s (%s); its figures in cgroup-stats.csv are empty\n",
		file == FILE_V1_CPU_STAT ? "cpu.stat of the v1 cpu controller" : file_names[file],
		strerror(-err));
}

/*
 * Throttling from the v1 cpu controller: the cgroup there of the first thread in dir (a
 * hybrid host keeps a container's tasks together in each hierarchy). A cgroup whose v1 cgroup
 * changed since the last reading gets no throttling delta for the interval. cgroup.threads, not
 * cgroup.procs: the kernel lists a few threads to fill a short read, but steps through every
 * thread of the first process looking for the next process (3 ms a reading at 10,000 threads).
 */
static void read_v1_throttling(struct cgroupfs *c, struct cgroupfs_entry *e, const char *dir,
			       const char *label, struct cgroupfs_reading *now)
{
	char buf[SMALL_FILE], v1_path[PATH_MAX], period[32];
	struct cgroupfs_reading v1 = {};
	double cores;
	uint64_t tid;
	int err;

	if (!c->v1_cpu) {
		if (!c->v1_said && !c->quiet) {
			fputs("cgstat: ", stderr);
			message_quote(stderr, label);
			fputs(": the cpu controller is not enabled for it on cgroup v2, and no v1 "
			      "hierarchy has one; its throttling fields are empty\n",
			      stderr);
			c->v1_said = true;
		}
		return;
	}
	/*
	 * Without a thread now, the v1 cgroup its tasks were last seen in; without one ever,
	 * nothing ran there to be throttled that cgstat could place. /proc/TID/cgroup is read
	 * again only when the first thread is another one.
	 */
	if (read_kept(e, FILE_THREADS, dir, buf, 32) || text_parse_u64(buf, &tid, NULL) ||
	    tid > INT_MAX) {
		if (!e->v1_path)
			return;
	} else if (!e->v1_path || (int)tid != e->v1_tid) {
		if (!cgroup_v1_of_pid(c->v1_cpu, c->proc, (int)tid, "cpu", v1_path,
				      sizeof(v1_path)) &&
		    (!e->v1_path || strcmp(e->v1_path, v1_path))) {
			/* another v1 cgroup: no throttling delta across the two */
			close_file(e, FILE_V1_CPU_STAT);
			close_file(e, FILE_V1_QUOTA);
			close_file(e, FILE_V1_PERIOD);
			e->absent &= ~(1u << FILE_V1_QUOTA | 1u << FILE_V1_PERIOD);
			free(e->v1_path);
			e->v1_path = strdup(v1_path);
			e->last.valid &= ~THROTTLING_BITS;
		}
		e->v1_tid = (int)tid;
		if (!e->v1_path)
			return;
	}
	err = read_kept(e, FILE_V1_CPU_STAT, e->v1_path, buf, sizeof(buf));
	if (err) {
		say_unreadable(c, e, label, FILE_V1_CPU_STAT, err);
		return;
	}
	cgroupfs_parse_cpu_stat(buf, &v1);
	now->valid &= ~THROTTLING_BITS;
	now->valid |= v1.valid & THROTTLING_BITS;
	memcpy(now->value, v1.value, sizeof(uint64_t) * (CG_FS_THROTTLED_NS + 1));
	if (!read_limit_file(e, FILE_V1_QUOTA, e->v1_path, buf, 32) &&
	    !read_limit_file(e, FILE_V1_PERIOD, e->v1_path, period, sizeof(period)) &&
	    cgroupfs_parse_v1_quota(buf, period, &cores))
		lower_limit(now, cores);
	if (!c->v1_said && !c->quiet) {
		fputs("cgstat: ", stderr);
		message_quote(stderr, label);
		fputs(": the cpu controller is not enabled for it on cgroup v2; its throttling "
		      "comes from the v1 cpu controller at ",
		      stderr);
		message_quote(stderr, c->v1_cpu->path);
		fputs(" (the cgroup of its tasks there)\n", stderr);
		c->v1_said = true;
	}
}

/* A reading of cgroup e, whose directory is dir, into now. */
static void read_cgroup(struct cgroupfs *c, struct cgroupfs_entry *e, const char *dir,
			const char *label, struct cgroupfs_reading *now)
{
	char buf[SMALL_FILE];
	double cores;
	size_t i;
	int err, cpus;

	bool kept = e->fd[FILE_CPU_STAT] >= 0;

	*now = (struct cgroupfs_reading){};
	/* a watched process followed to another cgroup: its files are elsewhere */
	if (!e->dir || strcmp(e->dir, dir)) {
		if (e->dir)
			entry_restart(e);
		free(e->dir);
		e->dir = strdup(dir);
		kept = false;
	}
	err = read_kept(e, FILE_CPU_STAT, dir, buf, sizeof(buf));
	/*
	 * The cgroup its files were opened for is gone, but dir may name a new one (a watched
	 * service restarted: slots.c follows it under the slot's first id). Before 2026-12-05
	 * the stale files, and the old id's lookup, left cgroup-stats.csv empty from then on.
	 */
	if (err == -ENOENT && kept) {
		entry_restart(e);
		err = read_kept(e, FILE_CPU_STAT, dir, buf, sizeof(buf));
	}
	/* every cgroup has cpu.stat: without it the cgroup is gone, and its other files too */
	if (err == -ENOENT) {
		if (!(e->said & (1u << FILE_CPU_STAT)) && !c->quiet) {
			fputs("cgstat: ", stderr);
			message_quote(stderr, label);
			fputs(": its cgroup is gone; its figures in cgroup-stats.csv are empty\n",
			      stderr);
		}
		e->said |= 1u << FILE_CPU_STAT;
		return;
	}
	if (err)
		say_unreadable(c, e, label, FILE_CPU_STAT, err);
	else
		cgroupfs_parse_cpu_stat(buf, now);
	/* cpu.stat without nr_periods: v2's cpu controller does not count this cgroup */
	if (!err && !(now->valid & (1u << CG_FS_PERIODS)))
		read_v1_throttling(c, e, dir, label, now);
	else if (!err && !read_limit_file(e, FILE_CPU_MAX, dir, buf, sizeof(buf)) &&
		 cgroupfs_parse_cpu_max(buf, &cores))
		lower_limit(now, cores);
	if (!read_limit_file(e, FILE_CPUSET, dir, buf, sizeof(buf))) {
		cpus = cgroupfs_parse_cpu_list(buf);
		if (cpus > 0)
			lower_limit(now, cpus);
	}
	for (i = 0; i < ARRAY_SIZE(pressure_files); i++) {
		err = read_kept(e, pressure_files[i].file, dir, buf, sizeof(buf));
		if (err) {
			say_unreadable(c, e, label, pressure_files[i].file, err);
			continue;
		}
		cgroupfs_parse_pressure(buf, pressure_files[i].some, pressure_files[i].full, now);
	}
}

struct cgroupfs *cgroupfs__new(const char *proc, const struct cgroup_mount *v1_cpu,
			       cgroupfs_dir_fn dir, void *ctx, bool quiet, uint64_t budget_ns)
{
	struct cgroupfs *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (hash_table_init(&c->entries, 64)) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->proc = proc;
	c->v1_cpu = v1_cpu;
	c->dir = dir;
	c->ctx = ctx;
	c->quiet = quiet;
	c->budget_ns = budget_ns;
	return c;
}

/* A reading of cgid now, as its entry's last; the entry, or NULL when there is none to take. */
static struct cgroupfs_entry *take_reading(struct cgroupfs *c, uint64_t cgid, const char *label,
					   struct cgroupfs_reading *now)
{
	char dir[PATH_MAX];
	struct cgroupfs_entry *e;

	*now = (struct cgroupfs_reading){};
	if (c->dir(c->ctx, cgid, dir, sizeof(dir)))
		return NULL;
	e = entry_get(c, cgid);
	if (!e)
		return NULL;
	read_cgroup(c, e, dir, label, now);
	return e;
}

void cgroupfs__baseline(struct cgroupfs *c, uint64_t cgid, const char *label)
{
	struct cgroupfs_reading now;
	struct cgroupfs_entry *e = take_reading(c, cgid, label, &now);

	if (!e)
		return;
	e->last = now;
	e->sampled = c->interval;
}

static void drop_unsampled(struct hash_table *t, struct hash_node *n, void *ctx)
{
	struct cgroupfs_entry *e = container_of(n, struct cgroupfs_entry, node);

	if (e->sampled != *(const uint64_t *)ctx) {
		hash_table_del(t, n);
		entry_free(e);
	}
}

void cgroupfs__sample(struct cgroupfs *c, struct cg_interval *iv)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	struct cgroupfs_reading now;
	struct cgroupfs_entry *e;
	uint32_t both;
	int i, item;

	for (i = 0; i < iv->nr_records; i++) {
		struct cg_record *r = &iv->records[i];

		r->cgroupfs_valid = 0;
		r->cpu_limit_cores = 0;
		if (c->budget_ns && i && clock_ns(CLOCK_MONOTONIC) - start > c->budget_ns) {
			/* each reading is a few microseconds of the kernel's: 1,000 are too many */
			if (!c->budget_said)
				fprintf(stderr,
					"cgstat: cgroup-stats.csv: the files of %d cgroups take more "
					"than the drain's budget to read; the rows past the first %d of "
					"an interval have empty fields (watch cgroups with -c for all "
					"of theirs)\n",
					iv->nr_records, i);
			c->budget_said = true;
			for (; i < iv->nr_records; i++) {
				iv->records[i].cgroupfs_valid = 0;
				iv->records[i].cpu_limit_cores = 0;
			}
			break;
		}
		e = take_reading(c, r->cgid, r->name, &now);
		if (!e)
			continue;
		r->cpu_limit_cores = now.cpu_limit_cores;
		/* only from the reading just before this interval (an older one spans more), of
		 * the same cgroup */
		both = e->sampled == c->interval && !e->restarted ? now.valid & e->last.valid : 0;
		e->restarted = false;
		for (item = 0; item < CG_NR_CGROUPFS; item++) {
			if (!(both & (1u << item)) || now.value[item] < e->last.value[item])
				continue;
			r->cgroupfs[item] = now.value[item] - e->last.value[item];
			r->cgroupfs_valid |= 1u << item;
		}
		e->last = now;
		e->sampled = c->interval + 1;
	}
	c->interval++;
	hash_table_visit(&c->entries, drop_unsampled, &c->interval);
}

static void free_entry(struct hash_table *t, struct hash_node *n, void *ctx)
{
	(void)ctx;
	hash_table_del(t, n);
	entry_free(container_of(n, struct cgroupfs_entry, node));
}

void cgroupfs__free(struct cgroupfs *c)
{
	if (!c)
		return;
	hash_table_visit(&c->entries, free_entry, NULL);
	hash_table_fini(&c->entries);
	free(c);
}
