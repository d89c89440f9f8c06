// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include "lib/process_self.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/text.h"
#include "lib/util.h"

/* /proc/PID/stat's fields after the name, counted from 3 (proc(5)): those read here */
enum {
	STAT_UTIME = 14,
	STAT_STIME = 15,
	STAT_STARTTIME = 22,
	STAT_VSIZE = 23,
	STAT_RSS = 24,
};

int process_self_parse(const char *stat, const char *proc_stat, long ticks_per_second,
		       long page_size, struct process_self *p)
{
	uint64_t field[STAT_RSS + 1] = {}, btime;
	const char *s, *end;
	int i;

	if (ticks_per_second <= 0 || page_size <= 0)
		return -EINVAL;
	/* the name is in parentheses and may hold any of them: the fields follow the last */
	s = strrchr(stat, ')');
	if (!s || s[1] != ' ')
		return -EINVAL;
	s += 2;
	/* field 3 is the state, a letter; the rest up to rss are decimal (or signed, unread) */
	s = strchr(s, ' ');
	for (i = 4; s && i <= STAT_RSS; i++) {
		s++;
		if (*s == '-') /* a signed field (priority, nice): not one read here */
			s++;
		if (text_parse_u64(s, &field[i], &end))
			return -EINVAL;
		s = *end == ' ' ? end : NULL;
		if (!s && i < STAT_RSS)
			return -EINVAL;
	}
	s = strstr(proc_stat, "\nbtime ");
	if (!s || text_parse_u64(s + 7, &btime, NULL))
		return -EINVAL;
	p->cpu_ns = (field[STAT_UTIME] + field[STAT_STIME]) * (NSEC_PER_SEC / ticks_per_second);
	p->rss_bytes = field[STAT_RSS] * (uint64_t)page_size;
	p->vsize_bytes = field[STAT_VSIZE];
	p->start_seconds = (double)btime + (double)field[STAT_STARTTIME] / ticks_per_second;
	return 0;
}

/* Entries of /proc/self/fd, less the one the listing holds itself. */
static int count_fds(uint64_t *nr)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return -errno;
	*nr = 0;
	while ((e = readdir(d)))
		*nr += e->d_name[0] != '.';
	closedir(d);
	*nr -= *nr > 0;
	return 0;
}

int process_self_read(struct process_self *p)
{
	char *stat, *proc_stat;
	struct rlimit lim;
	int err = 0;

	*p = (struct process_self){};
	stat = text_read_file("/proc/self/stat", NULL, &err);
	proc_stat = stat ? text_read_file("/proc/stat", NULL, &err) : NULL;
	if (proc_stat)
		err = process_self_parse(stat, proc_stat, sysconf(_SC_CLK_TCK),
					 sysconf(_SC_PAGESIZE), p);
	free(stat);
	free(proc_stat);
	if (err)
		return err;
	p->have_fds = !count_fds(&p->open_fds) && !getrlimit(RLIMIT_NOFILE, &lim);
	if (p->have_fds)
		p->max_fds = lim.rlim_cur;
	return 0;
}
