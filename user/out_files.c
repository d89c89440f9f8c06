// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv.h"
#include "derived.h"
#include "out_files.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define CREATE_FLAGS (O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)
#define SUMMARY_NAME "container-summary.json"
#define SUMMARY_TEMP ".container-summary.json.tmp"

/* A file of record figures: epochMillis, container, then the figures. */
struct figure_file {
	const char *name;
	const enum cg_figure *figures;
	int nr_figures;
};

static const enum cg_figure container_figures[] = {
	CG_FIG_CPU_CORES,
	CG_FIG_VCSW_RATE,
	CG_FIG_IVCSW_RATE,
};

static const enum cg_figure sched_figures[] = {
	CG_FIG_TASKS,		CG_FIG_ONCPU_MILLIS,	CG_FIG_RUNQ_MILLIS,
	CG_FIG_SLEEP_MILLIS,	CG_FIG_BLOCKED_MILLIS,	CG_FIG_VCSW,
	CG_FIG_IVCSW,		CG_FIG_MIGRATIONS,	CG_FIG_RUNQ_WAITS,
	CG_FIG_RUNQ_P50_MICROS, CG_FIG_RUNQ_P99_MICROS, CG_FIG_RUNQ_MAX_MICROS,
};

static const struct figure_file container_file = {
	"container-stats.csv",
	container_figures,
	ARRAY_SIZE(container_figures),
};

static const struct figure_file sched_file = {
	"sched-stats.csv",
	sched_figures,
	ARRAY_SIZE(sched_figures),
};

struct out_files {
	int dirfd;
	FILE *container;
	FILE *sched;
	FILE *perf; /* NULL when the run counts no events */
	FILE *host; /* NULL until the first valid host sample */
	bool perf_decided;
	/* host-io.csv's columns after epochMs, as its header names them */
	char (*host_columns)[CG_HOST_COLUMN_NAME_MAX];
	int nr_host_columns;
};

static FILE *create_file(int dirfd, const char *name)
{
	FILE *f;
	int fd, err;

	fd = openat(dirfd, name, CREATE_FLAGS, 0644);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

static int leading_header(FILE *f)
{
	int err;

	err = csv_field(f, "epochMillis");
	if (!err)
		err = csv_sep(f);
	if (!err)
		err = csv_field(f, "container");
	return err;
}

static int figure_header(FILE *f, const struct figure_file *ff)
{
	int i, err;

	err = leading_header(f);
	for (i = 0; i < ff->nr_figures && !err; i++) {
		err = csv_sep(f);
		if (!err)
			err = csv_field(f, figure_columns[ff->figures[i]].name);
	}
	return err ?: csv_end_row(f);
}

static int leading_fields(FILE *f, const struct cg_interval *iv, const struct cg_record *r)
{
	int err;

	err = csv_u64(f, iv->epoch_ms);
	if (!err)
		err = csv_sep(f);
	if (!err)
		err = csv_field(f, r->name);
	return err;
}

static int figure_row(FILE *f, const struct figure_file *ff, const struct cg_interval *iv,
		      const struct cg_record *r)
{
	double value;
	bool valid;
	int i, err;

	err = leading_fields(f, iv, r);
	for (i = 0; i < ff->nr_figures && !err; i++) {
		valid = record_figure(r, iv->interval_ns, ff->figures[i], &value);
		err = csv_sep(f);
		if (!err)
			err = csv_number(f, valid, value, figure_columns[ff->figures[i]].unit);
	}
	return err ?: csv_end_row(f);
}

static int perf_header(FILE *f, const struct cg_interval *iv)
{
	int err;

	err = leading_header(f);
	if (!err)
		err = csv_sep(f);
	if (!err)
		err = csv_fields(f, iv->event_columns, iv->nr_events);
	return err ?: csv_end_row(f);
}

static int perf_row(FILE *f, const struct cg_interval *iv, const struct cg_record *r)
{
	enum cg_unit unit;
	double value;
	int i, err;

	err = leading_fields(f, iv, r);
	for (i = 0; i < iv->nr_events && !err; i++) {
		value = event_figure(iv->event_columns[i], r->counter[i], &unit);
		err = csv_sep(f);
		if (!err)
			err = csv_number(f, r->counter_valid[i], value, unit);
	}
	return err ?: csv_end_row(f);
}

/* host-io.csv and its header, its columns fixed by the first valid sample h. */
static int open_host(struct out_files *o, const struct cg_host *h)
{
	char(*columns)[CG_HOST_COLUMN_NAME_MAX];
	int i, n = host_nr_columns(h), err;
	FILE *f;

	columns = calloc(n, sizeof(*columns));
	if (!columns)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		host_column(h, i, columns[i]);
	f = create_file(o->dirfd, "host-io.csv");
	if (!f) {
		err = -errno;
		free(columns);
		return err;
	}
	o->host = f;
	o->host_columns = columns;
	o->nr_host_columns = n;

	err = csv_field(f, "epochMs");
	for (i = 0; i < n && !err; i++) {
		err = csv_sep(f);
		if (!err)
			err = csv_field(f, columns[i]);
	}
	return err ?: csv_end_row(f);
}

static int host_row(struct out_files *o, const struct cg_interval *iv)
{
	char name[CG_HOST_COLUMN_NAME_MAX];
	int i, n = host_nr_columns(&iv->host), err;
	double value;

	err = csv_u64(o->host, iv->epoch_ms);
	for (i = 0; i < o->nr_host_columns && !err; i++) {
		err = csv_sep(o->host);
		if (err || i >= n)
			continue;
		/* The sampler keeps its disks; should one ever differ, its column stays empty. */
		value = host_column(&iv->host, i, name);
		if (!strcmp(name, o->host_columns[i]))
			err = csv_number(o->host, true, value, CG_UNIT_COARSE);
	}
	return err ?: csv_end_row(o->host);
}

struct out_files *out_files__open(const char *dir)
{
	struct out_files *o;
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (o->dirfd < 0) {
		err = -errno;
		goto err_out;
	}
	o->container = create_file(o->dirfd, container_file.name);
	if (!o->container) {
		err = -errno;
		goto err_out;
	}
	o->sched = create_file(o->dirfd, sched_file.name);
	if (!o->sched) {
		err = -errno;
		goto err_out;
	}
	err = figure_header(o->container, &container_file);
	if (!err)
		err = figure_header(o->sched, &sched_file);
	if (!err)
		err = stdio_flush(o->container);
	if (!err)
		err = stdio_flush(o->sched);
	if (!err)
		return o;
err_out:
	out_files__close(o);
	errno = -err;
	return NULL;
}

static int flush_all(struct out_files *o)
{
	FILE *files[] = { o->container, o->sched, o->perf, o->host };
	size_t i;
	int err = 0, ret;

	/* Every file gets its flush even after one failed, so the others stay current. */
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		if (!files[i])
			continue;
		ret = stdio_flush(files[i]);
		if (!err)
			err = ret;
	}
	return err;
}

int out_files__write(struct out_files *o, const struct cg_interval *iv)
{
	const struct cg_record *r;
	int i, err = 0;

	if (!o->perf_decided && iv->nr_events > 0) {
		o->perf = create_file(o->dirfd, "perf-stat.csv");
		if (!o->perf)
			return -errno;
		err = perf_header(o->perf, iv);
	}
	o->perf_decided = true;
	if (!err && !o->host && iv->host.valid)
		err = open_host(o, &iv->host);

	for (i = 0; i < iv->nr_records && !err; i++) {
		r = &iv->records[i];
		err = figure_row(o->container, &container_file, iv, r);
		if (!err)
			err = figure_row(o->sched, &sched_file, iv, r);
		if (!err && o->perf)
			err = perf_row(o->perf, iv, r);
	}
	if (!err && o->host && iv->host.valid)
		err = host_row(o, iv);
	return err ?: flush_all(o);
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= n;
	}
	return 0;
}

int out_files__write_summary(struct out_files *o, const char *json_text)
{
	int fd, err;

	/*
	 * O_EXCL after the unlink: whatever sits at the temporary name (a stale file, or one
	 * planted there) is neither followed nor written through.
	 */
	if (unlinkat(o->dirfd, SUMMARY_TEMP, 0) && errno != ENOENT)
		return -errno;
	fd = openat(o->dirfd, SUMMARY_TEMP, CREATE_FLAGS | O_EXCL, 0644);
	if (fd < 0)
		return -errno;
	err = write_all(fd, json_text, strlen(json_text));
	if (!err)
		err = write_all(fd, "\n", 1);
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
	if (o->container)
		fclose(o->container);
	if (o->sched)
		fclose(o->sched);
	if (o->perf)
		fclose(o->perf);
	if (o->host)
		fclose(o->host);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->host_columns);
	free(o);
}
