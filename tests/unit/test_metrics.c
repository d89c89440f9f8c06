// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The metrics endpoint's text: sums over intervals as exact counters, gauges of the last
 * interval only, the histogram's buckets at exact edges, hostile names escaped, retirement and
 * its grace, and the two formats' framing. (promtool checks the served text in
 * test_metrics_endpoint.py.)
 */
#include <stdlib.h>

#include "check.h"
#include "outputs/metrics.h"
#include "lib/util.h"

static const char *const event_names[] = { "task-clock", "cycles" };

static char *render(const struct metrics *m, bool om)
{
	struct metrics_snapshot *s = metrics__snapshot(m);
	size_t len = 0;
	char *text;

	CHECK(s != NULL);
	text = metrics_snapshot__render(s, om, &len);
	CHECK(text && strlen(text) == len);
	metrics_snapshot__put(s);
	return text;
}

/* The stamp has() lets a sample line end with, or NULL: the line must end where it ends. */
static const char *stamp;

static bool ends_line(const char *p)
{
	size_t n = stamp ? strlen(stamp) : 0;

	if (*p == '\n' || !*p)
		return true;
	return stamp && *p == ' ' && !strncmp(p + 1, stamp, n) && p[1 + n] == '\n';
}

static bool has(const char *text, const char *line)
{
	const char *p = text;
	size_t n = strlen(line);

	/* a whole line */
	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && ends_line(p + n))
			return true;
		p++;
	}
	fprintf(stderr, "no line: %s\n", line);
	return false;
}

static void test_sums_and_gauges(void)
{
	struct cg_record web = { .name = "/web", .tasks = 7 }, db = { .name = "/db", .tasks = 2 };
	struct cg_interval iv = { .epoch_ms = 1000, .interval_ns = NSEC_PER_SEC, .nr_cpus = 2 };
	struct cg_host_disk disk = { .name = "vda", .read_mbps = 2.5, .busy_percent = 40 };
	struct cg_record recs[2];
	struct metrics *m = metrics__new(event_names, 2);
	char *text;

	CHECK(m != NULL);
	/* before the first interval: only cgstat_up 0 */
	text = render(m, false);
	CHECK(has(text, "cgstat_up 0") && !strstr(text, "cgstat_cpu_seconds"));
	free(text);

	web.time_ns[CG_ONCPU] = 1500000000;
	web.time_ns[CG_SLEEP] = 999999999;
	web.count[CG_NVCSW] = 250;
	web.count[CG_RUNQ_WAITS] = 5; /* one recovered: not in the histogram */
	web.runq_hist.bucket[cg_hist_bucket(1000)] = 2;
	web.runq_hist.bucket[cg_hist_bucket(3000)] = 1;
	web.runq_hist.bucket[cg_hist_bucket(37000)] = 1;
	web.runq_hist.count = 4;
	web.time_ns[CG_RUNQ] = 42000;
	web.busiest.on_cpu_ns = 900000000;
	web.counter[0] = 1500000123;
	web.counter_valid[0] = true;
	web.counter[1] = 77; /* not valid: <not supported> */
	db.time_ns[CG_ONCPU] = 1;
	recs[0] = web;
	recs[1] = db;
	iv.records = recs;
	iv.nr_records = 2;
	iv.health.dropped_events = 3;
	iv.host.valid = true;
	iv.host.cpu_busy_percent = 25;
	iv.host.nr_disks = 1;
	iv.host.disks = &disk;
	CHECK(!metrics__add(m, &iv, 2500000));

	web.time_ns[CG_ONCPU] = 250000001;
	web.tasks = 9;
	recs[0] = web;
	iv.nr_records = 1; /* /db had no record: its counters stay, its gauges go */
	iv.epoch_ms = 2000;
	CHECK(!metrics__add(m, &iv, 1000000));

	text = render(m, false);
	/* every figure of the interval stamped with its end, in ms; cgstat_up, of now, is not */
	stamp = NULL;
	CHECK(has(text, "cgstat_cpu_seconds_total{container=\"/web\"} 1.750000001 2000"));
	CHECK(has(text, "cgstat_threads{container=\"/web\"} 9 2000"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_count{container=\"/web\"} 8 2000"));
	CHECK(has(text, "cgstat_dropped_events_total 3 2000"));
	CHECK(has(text, "cgstat_up 1"));
	stamp = "2000";
	CHECK(has(text, "# TYPE cgstat_cpu_seconds_total counter"));
	CHECK(has(text, "cgstat_cpu_seconds_total{container=\"/web\"} 1.750000001"));
	CHECK(has(text, "cgstat_cpu_seconds_total{container=\"/db\"} 0.000000001"));
	CHECK(has(text, "cgstat_offcpu_seconds_total{container=\"/web\",state=\"sleep\"} "
			"1.999999998"));
	CHECK(has(text,
		  "cgstat_context_switches_total{container=\"/web\",kind=\"voluntary\"} 500"));
	CHECK(has(text, "cgstat_runqueue_waits_total{container=\"/web\"} 10"));
	CHECK(has(text, "cgstat_threads{container=\"/web\"} 9"));
	CHECK(!strstr(text, "cgstat_threads{container=\"/db\"}"));
	CHECK(has(text, "cgstat_busiest_thread_cores{container=\"/web\"} 0.9"));
	/* waits of 1, 1, 3 and 37 us, twice: below 4.096 us 3, below 32.768 us 3, then all */
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{container=\"/web\","
			"le=\"4.096e-06\"} 6"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{container=\"/web\","
			"le=\"3.2768e-05\"} 6"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{container=\"/web\","
			"le=\"0.000262144\"} 8"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{container=\"/web\","
			"le=\"+Inf\"} 8"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_count{container=\"/web\"} 8"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_sum{container=\"/web\"} "
			"0.000084000"));
	CHECK(has(text, "cgstat_perf_events_total{container=\"/web\",event=\"task-clock\"} "
			"3000000246"));
	CHECK(!strstr(text, "event=\"cycles\""));
	/* no cgroup files read: their families have no samples */
	CHECK(!strstr(text, "cgstat_cfs_periods_total{"));
	CHECK(has(text, "cgstat_dropped_events_total 3"));
	/* the host's figures in base units: MB/s as bytes, percent as a ratio */
	CHECK(has(text, "cgstat_host_cpu_busy_ratio 0.25"));
	CHECK(has(text, "cgstat_host_disk_read_bytes_per_second{disk=\"vda\"} 2.5e+06"));
	CHECK(has(text, "cgstat_host_disk_write_bytes_per_second{disk=\"vda\"} 0"));
	CHECK(has(text, "cgstat_host_disk_busy_ratio{disk=\"vda\"} 0.4"));
	CHECK(has(text, "cgstat_drain_seconds 0.001"));
	CHECK(has(text, "cgstat_containers 2"));
	CHECK(has(text, "cgstat_up 1"));
	CHECK(text[strlen(text) - 1] == '\n' && !strstr(text, "# EOF"));
	free(text);

	text = render(m, true);
	stamp = NULL;
	CHECK(has(text, "cgstat_cpu_seconds_total{container=\"/web\"} 1.750000001 2.000"));
	CHECK(has(text, "cgstat_up 1"));
	stamp = "2.000";
	CHECK(has(text, "# TYPE cgstat_cpu_seconds counter"));
	CHECK(has(text, "# UNIT cgstat_cpu_seconds seconds"));
	CHECK(has(text, "cgstat_cpu_seconds_total{container=\"/web\"} 1.750000001"));
	CHECK(has(text, "# TYPE cgstat_threads gauge"));
	CHECK(!strstr(text, "# UNIT cgstat_threads"));
	CHECK(!strstr(text, "# TYPE cgstat_cpu_seconds_total"));
	CHECK(strlen(text) > 6 && !strcmp(text + strlen(text) - 6, "# EOF\n"));
	free(text);
	metrics__free(m);
}

/* A cgroup path is any bytes: quotes, backslashes, newlines and non-UTF-8 cannot break a line. */
static void test_hostile_names(void)
{
	struct cg_record r = { .name = "/a\"b\\c\nd\xff\xc3\xa9" };
	struct cg_interval iv = {
		.epoch_ms = 1, .interval_ns = NSEC_PER_SEC, .records = &r, .nr_records = 1
	};
	struct metrics *m = metrics__new(NULL, 0);
	char *text;

	r.time_ns[CG_ONCPU] = 5;
	CHECK(m && !metrics__add(m, &iv, 0));
	text = render(m, false);
	stamp = "1";
	CHECK(has(text,
		  "cgstat_cpu_seconds_total{container=\"/a\\\"b\\\\c\\nd\xef\xbf\xbd\xc3\xa9\"}"
		  " 0.000000005"));
	free(text);
	metrics__free(m);
}

/* Retired: exported for METRICS_GRACE_MS more, then gone; a new cgroup at the path goes on. */
static void test_retire(void)
{
	struct cg_record r = { .name = "/job" };
	struct cg_interval iv = {
		.epoch_ms = 10000, .interval_ns = NSEC_PER_SEC, .records = &r, .nr_records = 1
	};
	struct metrics *m = metrics__new(NULL, 0);
	char *text;

	r.time_ns[CG_ONCPU] = NSEC_PER_SEC;
	CHECK(m && !metrics__add(m, &iv, 0));
	metrics__retire(m, "/job", 10000);
	metrics__retire(m, "/never-seen", 10000);
	iv.nr_records = 0;
	iv.epoch_ms = 10000 + METRICS_GRACE_MS;
	CHECK(!metrics__add(m, &iv, 0));
	text = render(m, false);
	stamp = "130000";
	CHECK(has(text, "cgstat_cpu_seconds_total{container=\"/job\"} 1.000000000"));
	free(text);
	iv.epoch_ms++;
	CHECK(!metrics__add(m, &iv, 0));
	text = render(m, false);
	stamp = "130001";
	CHECK(!strstr(text, "/job") && has(text, "cgstat_containers 0"));
	free(text);

	/* retired, then back within the grace: the sums go on, and it is not dropped later */
	iv.nr_records = 1;
	CHECK(!metrics__add(m, &iv, 0));
	metrics__retire(m, "/job", iv.epoch_ms);
	CHECK(!metrics__add(m, &iv, 0));
	iv.epoch_ms += 2 * METRICS_GRACE_MS;
	CHECK(!metrics__add(m, &iv, 0));
	text = render(m, false);
	stamp = "370001";
	CHECK(has(text, "cgstat_cpu_seconds_total{container=\"/job\"} 3.000000000"));
	free(text);
	metrics__free(m);
}

int main(void)
{
	test_sums_and_gauges();
	test_hostile_names();
	test_retire();
	return check_done();
}
