// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/host.h"
#include "lib/text.h"
#include "lib/util.h"

#define SECTOR_BYTES 512
#define BYTES_PER_MB 1e6 /* decimal megabytes, as iostat -m and the Pulsar tooling count */

/* Fields of a /proc/diskstats line, counted from 1 at the major number as the kernel does. */
#define DISK_FIELD_NAME		   3
#define DISK_FIELD_SECTORS_READ	   6
#define DISK_FIELD_SECTORS_WRITTEN 10
#define DISK_FIELD_MS_DOING_IO	   13
#define DISK_MIN_FIELDS		   14

/* One disk of the list fixed at the first reading. */
struct host_disk_state {
	struct host_disk_reading last;
	bool seen; /* in the previous reading: last is a base for a rate */
};

struct host_sampler {
	char *stat_path;
	char *diskstats_path;
	char *sys_root;
	char *text; /* the file being parsed, reused across readings */
	size_t text_cap;
	struct host_disk_reading *readings;
	int readings_cap;
	struct host_disk_state *disks;
	struct cg_host_disk *out_disks; /* what the caller's cg_host points at */
	int nr_disks;
	bool started;
	uint64_t last_ns;
	struct host_cpu_times last_cpu;
};

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static bool at_line_end(const char *p)
{
	p = skip_blanks(p);
	return *p == '\n' || *p == '\0';
}

int host_parse_stat(const char *text, struct host_cpu_times *t)
{
	uint64_t field[8] = { 0 };
	const char *p = text;
	int n;

	while (strncmp(p, "cpu ", 4)) {
		p = strchr(p, '\n');
		if (!p)
			return -EINVAL;
		p++;
	}
	p += 3;
	for (n = 0; n < 8 && !at_line_end(p); n++) {
		if (text_parse_u64(skip_blanks(p), &field[n], &p))
			return -EINVAL;
	}
	if (n < 4)
		return -EINVAL;
	t->user = field[0];
	t->nice = field[1];
	t->system = field[2];
	t->idle = field[3];
	t->iowait = field[4];
	t->irq = field[5];
	t->softirq = field[6];
	t->steal = field[7];
	return 0;
}

/* One line, up to its '\n' or the end of the text. 0 or -EINVAL when the line is malformed. */
static int parse_disk_line(const char *p, struct host_disk_reading *d)
{
	uint64_t value = 0;
	size_t len;
	int field;

	for (field = 1; !at_line_end(p); field++) {
		if (field != DISK_FIELD_NAME) {
			if (text_parse_u64(skip_blanks(p), &value, &p))
				return -EINVAL;
		} else {
			p = skip_blanks(p);
			len = strcspn(p, " \t\n");
			if (len >= sizeof(d->name))
				return -EINVAL;
			memcpy(d->name, p, len);
			d->name[len] = '\0';
			p += len;
		}
		if (field == DISK_FIELD_SECTORS_READ)
			d->sectors_read = value;
		else if (field == DISK_FIELD_SECTORS_WRITTEN)
			d->sectors_written = value;
		else if (field == DISK_FIELD_MS_DOING_IO)
			d->ms_doing_io = value;
	}
	return field - 1 >= DISK_MIN_FIELDS ? 0 : -EINVAL;
}

int host_parse_diskstats(const char *text, struct host_disk_reading *out, int max, int *nr)
{
	struct host_disk_reading d;
	const char *line, *eol;
	int taken = 0;

	for (line = text; *line; line = *eol ? eol + 1 : eol) {
		eol = strchrnul(line, '\n');
		if (parse_disk_line(line, &d))
			continue;
		if (taken < max)
			out[taken] = d;
		taken++;
	}
	*nr = taken;
	return 0;
}

/* The whole of a /proc file into h->text: their size is not known before reading them. */
static int read_text(struct host_sampler *h, const char *path)
{
	size_t len = 0, cap;
	ssize_t n;
	char *text;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (h->text_cap - len < 2) {
			cap = h->text_cap ? h->text_cap * 2 : 16384;
			text = realloc(h->text, cap);
			if (!text) {
				err = -ENOMEM;
				goto out;
			}
			h->text = text;
			h->text_cap = cap;
		}
		n = read(fd, h->text + len, h->text_cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += n;
	}
	h->text[len] = '\0';
out:
	close(fd);
	return err;
}

/* PROC/diskstats into h->readings, growing them when the file has more disks than they hold. */
static int read_diskstats(struct host_sampler *h, int *nr)
{
	struct host_disk_reading *readings;
	int err;

	err = read_text(h, h->diskstats_path);
	if (err)
		return err;
	host_parse_diskstats(h->text, h->readings, h->readings_cap, nr);
	if (*nr <= h->readings_cap)
		return 0;
	readings = reallocarray(h->readings, *nr, sizeof(*readings));
	if (!readings)
		return -ENOMEM;
	h->readings = readings;
	h->readings_cap = *nr;
	host_parse_diskstats(h->text, h->readings, h->readings_cap, nr);
	return 0;
}

/*
 * Whole disks have a device link in /sys/block; partitions are not in /sys/block at all, and
 * loop, ram, zram and device-mapper devices are there without one.
 */
static bool is_physical_disk(const char *sys_root, const char *name)
{
	size_t name_at = strlen(sys_root) + strlen("/block/"), i;
	char path[PATH_MAX];
	struct stat st;
	int len;

	len = snprintf(path, sizeof(path), "%s/block/%s/device", sys_root, name);
	if (len < 0 || (size_t)len >= sizeof(path))
		return false;
	/* diskstats keeps the '/' of names like cciss/c0d0, sysfs turns it into '!' */
	for (i = name_at; i < name_at + strlen(name); i++) {
		if (path[i] == '/')
			path[i] = '!';
	}
	return lstat(path, &st) == 0;
}

static int compare_disk_names(const void *a, const void *b)
{
	const struct host_disk_state *x = a, *y = b;

	return strcmp(x->last.name, y->last.name);
}

/* The first reading fixes the disk list, so that host-io.csv's header never changes. */
static int pick_disks(struct host_sampler *h, int nr_readings)
{
	int i, err = 0;

	if (!nr_readings)
		return 0;
	h->disks = calloc(nr_readings, sizeof(*h->disks));
	if (!h->disks) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr_readings; i++) {
		if (!is_physical_disk(h->sys_root, h->readings[i].name))
			continue;
		h->disks[h->nr_disks].last = h->readings[i];
		h->disks[h->nr_disks].seen = true;
		h->nr_disks++;
	}
	if (!h->nr_disks)
		goto out;
	h->out_disks = calloc(h->nr_disks, sizeof(*h->out_disks));
	if (!h->out_disks) {
		err = -ENOMEM;
		goto out;
	}
	qsort(h->disks, h->nr_disks, sizeof(*h->disks), compare_disk_names);
	for (i = 0; i < h->nr_disks; i++)
		strcpy(h->out_disks[i].name, h->disks[i].last.name);
out:
	if (err) {
		free(h->disks);
		h->disks = NULL;
		h->nr_disks = 0;
	}
	return err;
}

/* A counter that went backwards was reset: count nothing rather than a wrapped huge delta. */
static uint64_t delta(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

static void cpu_rates(const struct host_cpu_times *before, const struct host_cpu_times *now,
		      struct cg_host *out)
{
	uint64_t idle, iowait, total;

	idle = delta(now->idle, before->idle);
	iowait = delta(now->iowait, before->iowait);
	total = delta(now->user, before->user) + delta(now->nice, before->nice) +
		delta(now->system, before->system) + idle + iowait + delta(now->irq, before->irq) +
		delta(now->softirq, before->softirq) + delta(now->steal, before->steal);
	if (!total)
		return;
	out->cpu_busy_percent = 100.0 * (double)(total - idle - iowait) / (double)total;
	out->cpu_iowait_percent = 100.0 * (double)iowait / (double)total;
}

static const struct host_disk_reading *find_reading(const struct host_sampler *h, int nr,
						    const char *name)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (!strcmp(h->readings[i].name, name))
			return &h->readings[i];
	}
	return NULL;
}

static void disk_rates(struct host_sampler *h, int nr_readings, uint64_t elapsed_ns)
{
	double seconds = (double)elapsed_ns / NSEC_PER_SEC;
	const struct host_disk_reading *now;
	struct host_disk_state *st;
	struct cg_host_disk *out;
	int i;

	for (i = 0; i < h->nr_disks; i++) {
		st = &h->disks[i];
		out = &h->out_disks[i];
		now = find_reading(h, nr_readings, st->last.name);
		out->read_mbps = 0;
		out->write_mbps = 0;
		out->busy_percent = 0;
		if (now && st->seen && elapsed_ns) {
			out->read_mbps = (double)delta(now->sectors_read, st->last.sectors_read) *
					 SECTOR_BYTES / BYTES_PER_MB / seconds;
			out->write_mbps =
				(double)delta(now->sectors_written, st->last.sectors_written) *
				SECTOR_BYTES / BYTES_PER_MB / seconds;
			out->busy_percent = 100.0 *
					    (double)delta(now->ms_doing_io, st->last.ms_doing_io) /
					    (seconds * 1000.0);
			if (out->busy_percent > 100.0)
				out->busy_percent = 100.0;
		}
		st->seen = now != NULL;
		if (now)
			st->last = *now;
	}
}

int host_sampler__sample(struct host_sampler *h, uint64_t now_ns, struct cg_host *out)
{
	struct host_cpu_times cpu;
	int err, nr_readings;

	*out = (struct cg_host){ .nr_disks = h->nr_disks, .disks = h->out_disks };
	err = read_text(h, h->stat_path);
	if (err)
		goto out;
	err = host_parse_stat(h->text, &cpu);
	if (err)
		goto out;
	err = read_diskstats(h, &nr_readings);
	if (err)
		goto out;
	if (!h->started) {
		err = pick_disks(h, nr_readings);
		if (err)
			goto out;
		h->started = true;
	} else {
		cpu_rates(&h->last_cpu, &cpu, out);
		disk_rates(h, nr_readings, now_ns > h->last_ns ? now_ns - h->last_ns : 0);
		out->valid = true;
	}
	h->last_cpu = cpu;
	h->last_ns = now_ns;
out:
	out->nr_disks = h->nr_disks;
	out->disks = h->out_disks;
	return err;
}

struct host_sampler *host_sampler__new(const char *proc_root, const char *sys_root)
{
	struct host_sampler *h;

	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	if (asprintf(&h->stat_path, "%s/stat", proc_root) < 0)
		h->stat_path = NULL;
	if (asprintf(&h->diskstats_path, "%s/diskstats", proc_root) < 0)
		h->diskstats_path = NULL;
	h->sys_root = strdup(sys_root);
	if (!h->stat_path || !h->diskstats_path || !h->sys_root) {
		host_sampler__free(h);
		errno = ENOMEM;
		return NULL;
	}
	return h;
}

void host_sampler__free(struct host_sampler *h)
{
	if (!h)
		return;
	free(h->stat_path);
	free(h->diskstats_path);
	free(h->sys_root);
	free(h->text);
	free(h->readings);
	free(h->disks);
	free(h->out_disks);
	free(h);
}
