// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/derived.h"
#include "outputs/out_files.h"

#include "lib/files.h"
#include "lib/text.h"
#include "lib/util.h"

#define SUMMARY_NAME "container-summary.json"
#define SUMMARY_TEMP ".container-summary.json.tmp"

/*
 * A file of record figures: epochMillis, container (and pool, for pools' records), the figures,
 * then the label figures.
 */
struct figure_file {
	const char *name;
	bool by_pool;	/* pool after container */
	bool by_thread; /* tid, pid, comm and pool after container */
	const enum cg_figure *figures;
	int nr_figures;
	const enum cg_label_figure *labels;
	int nr_labels;
};

static const enum cg_figure container_figures[] = {
	CG_FIG_CPU_CORES,
	CG_FIG_VCSW_RATE,
	CG_FIG_IVCSW_RATE,
};

static const enum cg_figure sched_figures[] = { CG_SCHED_FIGURES };

static const enum cg_label_figure sched_labels[] = { CG_LABEL_TOP_PREEMPTER, CG_LABEL_VERDICT };

static const enum cg_figure cgroup_figures[] = { CG_CGROUPFS_FIGURES };

static const enum cg_figure pool_figures[] = { CG_POOL_FIGURES };

static const enum cg_figure thread_figures[] = { CG_THREAD_FIGURES };

static const struct figure_file container_file = {
	.name = "container-stats.csv",
	.figures = container_figures,
	.nr_figures = ARRAY_SIZE(container_figures),
};

static const struct figure_file sched_file = {
	.name = "sched-stats.csv",
	.figures = sched_figures,
	.nr_figures = ARRAY_SIZE(sched_figures),
	.labels = sched_labels,
	.nr_labels = ARRAY_SIZE(sched_labels),
};

static const struct figure_file cgroup_file = {
	.name = "cgroup-stats.csv",
	.figures = cgroup_figures,
	.nr_figures = ARRAY_SIZE(cgroup_figures),
};

static const struct figure_file pool_file = {
	.name = "pool-stats.csv",
	.by_pool = true,
	.figures = pool_figures,
	.nr_figures = ARRAY_SIZE(pool_figures),
};

static const struct figure_file thread_file = {
	.name = "thread-stats.csv",
	.by_thread = true,
	.figures = thread_figures,
	.nr_figures = ARRAY_SIZE(thread_figures),
};

/*
 * A CSV file written a whole interval at a time: its rows are formatted in memory and go to
 * the file in one write at the interval's end. A write that fails or falls short (a full disk)
 * is cut back to the last whole interval, so that the file only ever holds whole lines, and
 * SIGKILL between two intervals leaves nothing half written.
 */
struct row_file {
	int fd;	    /* -1: not open */
	off_t size; /* what the file holds: whole lines only */
	FILE *rows; /* the rows not yet written */
	char *buf;
	size_t len;
};

struct out_files {
	int dirfd;
	struct row_file container;
	struct row_file sched;
	struct row_file cgroup;
	struct row_file pool;	/* open with --threads only */
	struct row_file thread; /* the same */
	struct row_file wake;	/* the same: wakeups.csv */
	struct row_file perf;	/* not open when the run counts no events */
	struct row_file host;
	int summary_fd; /* OUT_FILES_SUMMARY_IN_PLACE: container-summary.json, else -1 */
	bool made;	/* the folder was made by out_files__open() */
	bool perf_decided;
	bool perf_rows; /* perf-stat.csv has its header: the first interval had events */
	/* host-io.csv's columns after epochMs, as its header names them */
	char (*host_columns)[CG_HOST_COLUMN_NAME_MAX];
	int nr_host_columns;
};

static int pwrite_all(int fd, const char *buf, size_t len, off_t off)
{
	ssize_t n;

	while (len) {
		n = pwrite(fd, buf, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* name in dirfd, created empty: its descriptor in *fd, 0 or -errno. */
static int regular_file_open(int dirfd, const char *name, int *fd)
{
	*fd = file_create(dirfd, name, false);
	return *fd < 0 ? *fd : 0;
}

static int row_file_open(struct row_file *rf, int dirfd, const char *name)
{
	int err;

	err = regular_file_open(dirfd, name, &rf->fd);
	if (err)
		return err;
	rf->rows = open_memstream(&rf->buf, &rf->len);
	if (!rf->rows)
		return -errno;
	/* one thread writes it: no lock taken for each of an interval's ~50,000 characters */
	__fsetlocking(rf->rows, FSETLOCKING_BYCALLER);
	return 0;
}

static bool row_file_is_open(const struct row_file *rf)
{
	return rf->fd >= 0;
}

/*
 * Write the rows formatted since the last commit, whole or not at all. The memory stream is
 * rewound, not closed: its buffer, the size of an interval's rows, is kept for the next one
 * rather than freed and grown again every interval among the allocations that last.
 */
static int row_file_commit(struct row_file *rf)
{
	int err;

	err = stdio_flush(rf->rows);
	if (!err)
		err = pwrite_all(rf->fd, rf->buf, rf->len, rf->size);
	if (!err)
		rf->size += rf->len;
	else if (ftruncate(rf->fd, rf->size))
		err = -errno;
	/* the length follows the position at the next flush */
	if (fseeko(rf->rows, 0, SEEK_SET) && !err)
		err = -errno;
	rf->len = 0;
	return err;
}

static void row_file_close(struct row_file *rf)
{
	if (rf->rows)
		fclose(rf->rows);
	free(rf->buf);
	if (rf->fd >= 0)
		close(rf->fd);
}

static void leading_header(FILE *f)
{
	csv_field(f, "epochMillis");
	csv_sep(f);
	csv_field(f, "container");
}

static void figure_header(FILE *f, const struct figure_file *ff)
{
	int i;

	static const char *const thread_columns[] = { "tid", "pid", "comm", "pool" };

	leading_header(f);
	if (ff->by_pool || ff->by_thread) {
		csv_sep(f);
		if (ff->by_thread)
			csv_fields(f, thread_columns, ARRAY_SIZE(thread_columns));
		else
			csv_field(f, "pool");
	}
	for (i = 0; i < ff->nr_figures; i++) {
		csv_sep(f);
		csv_field(f, figure_columns[ff->figures[i]].name);
	}
	for (i = 0; i < ff->nr_labels; i++) {
		csv_sep(f);
		csv_field(f, label_figure_names[ff->labels[i]]);
	}
	csv_end_row(f);
}

static void leading_fields(FILE *f, const struct cg_interval *iv, const struct cg_record *r)
{
	csv_u64(f, iv->epoch_ms);
	csv_sep(f);
	csv_field(f, r->name);
}

static void figure_row(FILE *f, const struct figure_file *ff, const struct cg_interval *iv,
		       const struct cg_record *r)
{
	char buf[CG_LABEL_FIGURE_MAX];
	const char *label;
	double value;
	bool valid;
	int i;

	leading_fields(f, iv, r);
	if (ff->by_thread && r->thread) {
		csv_sep(f);
		csv_u64(f, r->thread->tid);
		csv_sep(f);
		csv_u64(f, r->thread->pid);
		csv_sep(f);
		csv_field(f, r->busiest.comm);
	}
	if (ff->by_pool || ff->by_thread) {
		csv_sep(f);
		csv_field(f, r->pool);
	}
	for (i = 0; i < ff->nr_figures; i++) {
		valid = record_figure(r, iv->interval_ns, ff->figures[i], &value);
		csv_sep(f);
		csv_number(f, valid, value, unit_decimals(figure_columns[ff->figures[i]].unit));
	}
	for (i = 0; i < ff->nr_labels; i++) {
		label = record_label_figure(iv, r, ff->labels[i], buf);
		csv_sep(f);
		if (label)
			csv_field(f, label);
	}
	csv_end_row(f);
}

static void perf_header(FILE *f, const struct cg_interval *iv)
{
	leading_header(f);
	csv_sep(f);
	csv_fields(f, iv->event_columns, iv->nr_events);
	csv_end_row(f);
}

static void perf_row(FILE *f, const struct cg_interval *iv, const struct cg_record *r)
{
	enum cg_unit unit;
	double value;
	int i;

	leading_fields(f, iv, r);
	for (i = 0; i < iv->nr_events; i++) {
		value = event_figure(iv->event_columns[i], r->counter[i], &unit);
		csv_sep(f);
		csv_number(f, r->counter_valid[i], value, unit_decimals(unit));
	}
	csv_end_row(f);
}

/* host-io.csv's header, its columns fixed by the first valid sample h. 0 or -ENOMEM. */
static int host_header(struct out_files *o, const struct cg_host *h)
{
	char(*columns)[CG_HOST_COLUMN_NAME_MAX];
	int i, n = host_nr_columns(h);
	FILE *f = o->host.rows;

	columns = calloc(n, sizeof(*columns));
	if (!columns)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		host_column(h, i, columns[i]);
	o->host_columns = columns;
	o->nr_host_columns = n;

	csv_field(f, "epochMs");
	for (i = 0; i < n; i++) {
		csv_sep(f);
		csv_field(f, columns[i]);
	}
	csv_end_row(f);
	return 0;
}

static void host_row(struct out_files *o, const struct cg_interval *iv)
{
	char name[CG_HOST_COLUMN_NAME_MAX];
	int i, n = host_nr_columns(&iv->host);
	FILE *f = o->host.rows;
	double value;

	csv_u64(f, iv->epoch_ms);
	for (i = 0; i < o->nr_host_columns; i++) {
		csv_sep(f);
		if (i >= n)
			continue;
		/* The sampler keeps its disks; should one ever differ, its column stays empty. */
		value = host_column(&iv->host, i, name);
		if (!strcmp(name, o->host_columns[i]))
			csv_number(f, true, value, unit_decimals(CG_UNIT_COARSE));
	}
	csv_end_row(f);
}

static int commit_all(struct out_files *o)
{
	struct row_file *files[] = { &o->container, &o->sched, &o->cgroup, &o->pool,
				     &o->thread,    &o->wake,  &o->perf,   &o->host };
	size_t i;
	int err = 0, ret;

	/* Every file gets its write even after one failed, so the others stay current. */
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		if (!row_file_is_open(files[i]))
			continue;
		ret = row_file_commit(files[i]);
		if (!err)
			err = ret;
	}
	return err;
}

/* wakeups.csv, with --threads: the wake graph's edges of each interval (docs/metrics.md). */
static int wake_file_open(struct row_file *rf, int dirfd)
{
	static const char *const header[] = { "epochMillis",	"container", "pool",
					      "wakerContainer", "wakerPool", "wakeups" };
	int err = row_file_open(rf, dirfd, "wakeups.csv");

	if (err)
		return err;
	csv_fields(rf->rows, header, ARRAY_SIZE(header));
	csv_end_row(rf->rows);
	return row_file_commit(rf);
}

static void wake_row(FILE *f, const struct cg_interval *iv, const struct cg_wake_row *w)
{
	const char *const names[] = { w->container, w->pool, w->waker_container, w->waker_pool };

	csv_u64(f, iv->epoch_ms);
	csv_sep(f);
	csv_fields(f, names, ARRAY_SIZE(names));
	csv_sep(f);
	csv_u64(f, w->wakeups);
	csv_end_row(f);
}

/* A file of ff's rows, made with its header. */
static int figure_file_open(struct row_file *rf, int dirfd, const struct figure_file *ff)
{
	int err = row_file_open(rf, dirfd, ff->name);

	if (err)
		return err;
	figure_header(rf->rows, ff);
	return row_file_commit(rf);
}

struct out_files *out_files__open(const char *dir, unsigned int flags)
{
	struct out_files *o;
	int err;

	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->container.fd = o->sched.fd = o->cgroup.fd = o->pool.fd = o->thread.fd = o->wake.fd =
		o->perf.fd = o->host.fd = -1;
	o->summary_fd = -1;
	o->dirfd = folder_open(dir, true, &o->made);
	if (o->dirfd < 0) {
		err = o->dirfd;
		goto err_out;
	}
	err = row_file_open(&o->container, o->dirfd, container_file.name);
	if (!err)
		err = row_file_open(&o->sched, o->dirfd, sched_file.name);
	if (!err)
		err = row_file_open(&o->cgroup, o->dirfd, cgroup_file.name);
	if (!err) {
		figure_header(o->container.rows, &container_file);
		figure_header(o->sched.rows, &sched_file);
		figure_header(o->cgroup.rows, &cgroup_file);
		err = commit_all(o);
	}
	if (!err && (flags & OUT_FILES_POOLS))
		err = figure_file_open(&o->pool, o->dirfd, &pool_file);
	if (!err && (flags & OUT_FILES_POOLS))
		err = figure_file_open(&o->thread, o->dirfd, &thread_file);
	if (!err && (flags & OUT_FILES_POOLS))
		err = wake_file_open(&o->wake, o->dirfd);
	if (!err && (flags & OUT_FILES_PERF))
		err = row_file_open(&o->perf, o->dirfd, "perf-stat.csv");
	if (!err)
		err = row_file_open(&o->host, o->dirfd, "host-io.csv");
	if (!err && (flags & OUT_FILES_SUMMARY_IN_PLACE))
		err = regular_file_open(o->dirfd, SUMMARY_NAME, &o->summary_fd);
	if (!err)
		return o;
err_out:
	out_files__close(o);
	errno = -err;
	return NULL;
}

int out_files__give(struct out_files *o, uid_t uid, gid_t gid)
{
	const struct row_file *files[] = { &o->container, &o->sched, &o->cgroup, &o->pool,
					   &o->thread,	  &o->wake,  &o->perf,	 &o->host };
	size_t i;

	if (o->made && fchown(o->dirfd, uid, gid))
		return -errno;
	for (i = 0; i < ARRAY_SIZE(files); i++)
		if (files[i]->fd >= 0 && fchown(files[i]->fd, uid, gid))
			return -errno;
	if (o->summary_fd >= 0 && fchown(o->summary_fd, uid, gid))
		return -errno;
	return 0;
}

/* The rows go to memory streams; a failed write among them shows when they are committed. */
int out_files__write(struct out_files *o, const struct cg_interval *iv)
{
	const struct cg_record *r;
	int i, err = 0;

	if (!o->perf_decided && iv->nr_events > 0 && row_file_is_open(&o->perf)) {
		perf_header(o->perf.rows, iv);
		o->perf_rows = true;
	}
	o->perf_decided = true;
	if (!o->host_columns && iv->host.valid)
		err = host_header(o, &iv->host);
	if (err)
		return err;

	for (i = 0; i < iv->nr_records; i++) {
		r = &iv->records[i];
		figure_row(o->container.rows, &container_file, iv, r);
		figure_row(o->sched.rows, &sched_file, iv, r);
		figure_row(o->cgroup.rows, &cgroup_file, iv, r);
		if (o->perf_rows)
			perf_row(o->perf.rows, iv, r);
	}
	for (i = 0; i < iv->nr_pools && row_file_is_open(&o->pool); i++)
		figure_row(o->pool.rows, &pool_file, iv, &iv->pools[i]);
	for (i = 0; i < iv->nr_threads && row_file_is_open(&o->thread); i++)
		figure_row(o->thread.rows, &thread_file, iv, &iv->threads[i]);
	for (i = 0; i < iv->nr_wakes && row_file_is_open(&o->wake); i++)
		wake_row(o->wake.rows, iv, &iv->wakes[i]);
	if (o->host_columns && iv->host.valid)
		host_row(o, iv);
	return commit_all(o);
}

/*
 * Into the file made at open, over what it held: whole unless the machine fails meanwhile, and
 * empty where the write fails (a full disk), never a part.
 */
static int summary_in_place(int fd, const char *json_text)
{
	size_t len = strlen(json_text);
	int err;

	if (ftruncate(fd, 0))
		return -errno;
	err = pwrite_all(fd, json_text, len, 0);
	if (!err)
		err = pwrite_all(fd, "\n", 1, len);
	if (!err && fsync(fd))
		err = -errno;
	if (err && ftruncate(fd, 0))
		err = -errno;
	return err;
}

int out_files__write_summary(struct out_files *o, const char *json_text)
{
	int fd, err;

	if (o->summary_fd >= 0)
		return summary_in_place(o->summary_fd, json_text);

	/*
	 * The temporary name is cgstat's own: whatever sits there (a stale file, or a link
	 * planted there) is removed, neither followed nor written through.
	 */
	if (unlinkat(o->dirfd, SUMMARY_TEMP, 0) && errno != ENOENT)
		return -errno;
	fd = file_create(o->dirfd, SUMMARY_TEMP, true);
	if (fd < 0)
		return fd;
	err = pwrite_all(fd, json_text, strlen(json_text), 0);
	if (!err)
		err = pwrite_all(fd, "\n", 1, strlen(json_text));
	/* Flushed before the rename, so that a crash leaves the old file or the whole new one. */
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(o->dirfd, SUMMARY_TEMP, o->dirfd, SUMMARY_NAME))
		err = -errno;
	if (err)
		unlinkat(o->dirfd, SUMMARY_TEMP, 0);
	return err;
}

void out_files__close(struct out_files *o)
{
	if (!o)
		return;
	row_file_close(&o->container);
	row_file_close(&o->sched);
	row_file_close(&o->cgroup);
	row_file_close(&o->pool);
	row_file_close(&o->thread);
	row_file_close(&o->wake);
	row_file_close(&o->perf);
	row_file_close(&o->host);
	if (o->summary_fd >= 0)
		close(o->summary_fd);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->host_columns);
	free(o);
}
