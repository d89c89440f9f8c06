// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The metrics endpoint's text: sums over intervals as exact counters without timestamps, gauges
 * of the last interval only, the histogram's buckets at exact edges with _count and _sum over the
 * same waits, one unit a family, pools and container info, hostile names escaped, retirement and
 * its grace, and the two formats' framing. (promtool checks the served text in
 * test_metrics_endpoint.py; a real Prometheus reads it in test_prometheus.py.)
 */
#include <stdlib.h>

#include "check.h"
#include "outputs/metrics.h"
#include "lib/util.h"

static const char *const event_names[] = { "task-clock", "cycles", "context-switches" };

static char *render(struct metrics *m, bool om)
{
	struct metrics_snapshot *s = metrics__snapshot(m);
	size_t len = 0;
	char *text;

	CHECK(s != NULL);
	text = metrics_snapshot__render(s, om, &len);
	CHECK(text && strlen(text) == len);
	metrics_snapshot__free(s);
	return text;
}

static bool has(const char *text, const char *line)
{
	const char *p = text;
	size_t n = strlen(line);

	/* a whole line: no timestamp after the value */
	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
		p++;
	}
	fprintf(stderr, "no line: %s\n", line);
	return false;
}

/* Every sample line is NAME{...} VALUE or NAME VALUE: two fields, none a timestamp. */
static bool no_stamps(const char *text)
{
	const char *line = text, *end, *brace, *space;

	for (; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			return false;
		if (*line == '#')
			continue;
		brace = memchr(line, '}', end - line);
		space = memchr(brace ? brace : line, ' ', end - (brace ? brace : line));
		if (!space || memchr(space + 1, ' ', end - space - 1)) {
			fprintf(stderr, "not NAME VALUE: %.*s\n", (int)(end - line), line);
			return false;
		}
	}
	return true;
}

static void test_sums_and_gauges(void)
{
	struct cg_container web_ct = { .runtime = "docker",
				       .id = "0123abcd",
				       .name = "web",
				       .image = "nginx:1",
				       .compose_project = "shop",
				       .compose_service = "web",
				       .compose_replica = 2 };
	struct cg_record web = { .name = "web", .tasks = 7, .container = &web_ct },
			 db = { .name = "/db", .tasks = 2 };
	struct cg_interval iv = { .epoch_ms = 1000, .interval_ns = NSEC_PER_SEC, .nr_cpus = 2 };
	struct cg_record recs[2], pools[2] = { { .name = "web", .pool = "io-", .tasks = 4 },
					       { .name = "web", .pool = "main", .tasks = 3 } };
	/* a name past the kernel's 15 characters stays whole: two programs, two series */
	struct cg_program_stats progs[] = {
		{ .name = "cg_sched_wakeup", .runs = 12, .run_ns = 3456 },
		{ .name = "cg_sched_wakeup_new", .runs = 2, .run_ns = 500 },
	};
	struct metrics *m = metrics__new(event_names, 3, "v1.1");
	char *text;

	CHECK(m != NULL);
	/* before the first interval: cgstat_up 0 and what cgstat is, no cgroup */
	text = render(m, false);
	CHECK(has(text, "cgstat_up 0") && !strstr(text, "cgstat_cpu_seconds"));
	CHECK(has(text, "cgstat_build_info{version=\"" CGSTAT_VERSION "\",libbpf=\"v1.1\"} 1"));
	CHECK(strstr(text, "\nprocess_cpu_seconds_total ") && strstr(text, "\nprocess_open_fds "));
	free(text);

	web.time_ns[CG_ONCPU] = 1500000000;
	web.time_ns[CG_SLEEP] = 999999999;
	web.count[CG_NVCSW] = 250;
	web.count[CG_RUNQ_WAITS] = 5; /* one recovered: not in the histogram */
	web.runq_hist.bucket[cg_hist_bucket(1000)] = 2;
	web.runq_hist.bucket[cg_hist_bucket(3000)] = 1;
	web.runq_hist.bucket[cg_hist_bucket(37000)] = 1;
	web.runq_hist.count = 4;
	web.count[CG_RUNQ_MEASURED_NS] = 42000; /* 1 + 1 + 3 + 37 us */
	web.time_ns[CG_RUNQ] = 50000;		/* with the recovered wait's */
	web.busiest.on_cpu_ns = 900000000;
	web.counter[0] = 1500000123;
	web.counter_valid[0] = true;
	web.counter[1] = 77; /* not valid: <not supported> */
	web.counter[2] = 250;
	web.counter_valid[2] = true;
	web.cgroupfs[CG_FS_CPU_SOME_NS] = 3000;
	web.cgroupfs[CG_FS_CPU_FULL_NS] = 1000;
	web.cgroupfs_valid = 1U << CG_FS_CPU_SOME_NS | 1U << CG_FS_CPU_FULL_NS;
	web.first_pool = 0;
	web.nr_pools = 2;
	pools[0].time_ns[CG_ONCPU] = 1000000000;
	pools[1].time_ns[CG_ONCPU] = 500000000;
	db.time_ns[CG_ONCPU] = 1;
	recs[0] = web;
	recs[1] = db;
	iv.records = recs;
	iv.nr_records = 2;
	iv.pools = pools;
	iv.nr_pools = 2;
	iv.health.dropped_events = 3;
	iv.nr_programs = 2;
	iv.programs = progs;
	CHECK(!metrics__add(m, &iv, 2500000));

	web.time_ns[CG_ONCPU] = 250000001;
	web.tasks = 9;
	web.nr_pools = 0;
	recs[0] = web;
	iv.nr_records = 1; /* /db had no record: its counters stay, its gauges go */
	iv.epoch_ms = 2000;
	CHECK(!metrics__add(m, &iv, 1000000));

	text = render(m, false);
	CHECK(no_stamps(text));
	CHECK(has(text, "# TYPE cgstat_cpu_seconds_total counter"));
	CHECK(has(text, "cgstat_cpu_seconds_total{cgroup=\"web\"} 1.750000001"));
	CHECK(has(text, "cgstat_cpu_seconds_total{cgroup=\"/db\"} 0.000000001"));
	CHECK(has(text, "cgstat_offcpu_seconds_total{cgroup=\"web\",state=\"sleep\"} 1.999999998"));
	CHECK(has(text, "cgstat_context_switches_total{cgroup=\"web\",switch=\"voluntary\"} 500"));
	CHECK(has(text, "cgstat_threads{cgroup=\"web\"} 9"));
	CHECK(!strstr(text, "cgstat_threads{cgroup=\"/db\"}"));
	CHECK(has(text, "cgstat_busiest_thread_cpu_seconds_total{cgroup=\"web\"} 1.800000000"));
	/* the waits counter is the histogram's _count; the recovered ones apart */
	CHECK(has(text, "cgstat_runqueue_waits_total{cgroup=\"web\"} 8"));
	CHECK(has(text, "cgstat_runqueue_unmeasured_waits_total{cgroup=\"web\"} 2"));
	/* waits of 1, 1, 3 and 37 us, twice: edges four an octave from 1.024 us */
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{cgroup=\"web\","
			"le=\"1.024e-06\"} 4"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{cgroup=\"web\","
			"le=\"2.56e-06\"} 4"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{cgroup=\"web\","
			"le=\"3.072e-06\"} 6"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{cgroup=\"web\","
			"le=\"3.2768e-05\"} 6"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{cgroup=\"web\","
			"le=\"4.096e-05\"} 8"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{cgroup=\"web\","
			"le=\"4.294967296\"} 8"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_bucket{cgroup=\"web\","
			"le=\"+Inf\"} 8"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_count{cgroup=\"web\"} 8"));
	CHECK(has(text, "cgstat_runqueue_wait_duration_seconds_sum{cgroup=\"web\"} 0.000084000"));
	/* task-clock in seconds, a family of its own; the counts under perf_events */
	CHECK(has(text, "cgstat_perf_task_clock_seconds_total{cgroup=\"web\"} 3.000000246"));
	CHECK(has(text, "cgstat_perf_events_total{cgroup=\"web\",event=\"context-switches\"} 500"));
	CHECK(!strstr(text, "event=\"task-clock\"") && !strstr(text, "event=\"cycles\""));
	/* pressure as node_exporter names it; no cgroup files read for /db: no samples */
	CHECK(has(text, "cgstat_pressure_cpu_waiting_seconds_total{cgroup=\"web\"} 0.000006000"));
	CHECK(has(text, "cgstat_pressure_cpu_stalled_seconds_total{cgroup=\"web\"} 0.000002000"));
	CHECK(!strstr(text, "cgstat_pressure_io_waiting_seconds_total{"));
	CHECK(!strstr(text, "cgstat_cfs_periods_total{"));
	/* verdicts: web ran 1.5 then 0.25 s of 1 s on 2 CPUs, /db idle once */
	CHECK(has(text, "cgstat_verdict_intervals_total{cgroup=\"/db\",verdict=\"idle\"} 1"));
	CHECK(has(text, "cgstat_verdict_intervals_total{cgroup=\"/db\",verdict=\"ok\"} 0"));
	/* pools: their sums, their cgroup's label beside theirs */
	CHECK(has(text, "cgstat_pool_cpu_seconds_total{cgroup=\"web\",pool=\"io-\"} 1.000000000"));
	CHECK(has(text, "cgstat_pool_cpu_seconds_total{cgroup=\"web\",pool=\"main\"} 0.500000000"));
	CHECK(has(text, "cgstat_pool_threads{cgroup=\"web\",pool=\"io-\"} 4"));
	CHECK(!strstr(text, "cgstat_pool_migrations"));
	CHECK(has(text, "cgstat_cgroup_info{cgroup=\"web\",runtime=\"docker\",container_id="
			"\"0123abcd\",container_name=\"web\",image=\"nginx:1\",compose_project="
			"\"shop\",compose_service=\"web\",compose_replica=\"2\"} 1"));
	CHECK(!strstr(text, "cgstat_cgroup_info{cgroup=\"/db\""));
	CHECK(has(text, "cgstat_dropped_events_total 3"));
	CHECK(has(text, "cgstat_drains_total 2"));
	CHECK(has(text, "cgstat_drain_seconds_total 0.003500000"));
	CHECK(has(text, "cgstat_interval_seconds 1.000000000"));
	CHECK(has(text, "cgstat_last_interval_end_timestamp_seconds 2.000"));
	CHECK(has(text, "cgstat_cgroups 2"));
	CHECK(has(text, "cgstat_bpf_program_runs_total{program=\"cg_sched_wakeup\"} 12"));
	CHECK(has(text, "cgstat_bpf_program_runs_total{program=\"cg_sched_wakeup_new\"} 2"));
	CHECK(has(text, "cgstat_bpf_program_run_seconds_total{program=\"cg_sched_wakeup\"} "
			"0.000003456"));
	CHECK(!strstr(text, "cgstat_host_"));
	CHECK(has(text, "cgstat_up 1"));
	CHECK(text[strlen(text) - 1] == '\n' && !strstr(text, "# EOF"));
	free(text);

	text = render(m, true);
	CHECK(no_stamps(text));
	CHECK(has(text, "# TYPE cgstat_cpu_seconds counter"));
	CHECK(has(text, "# UNIT cgstat_cpu_seconds seconds"));
	CHECK(has(text, "cgstat_cpu_seconds_total{cgroup=\"web\"} 1.750000001"));
	CHECK(has(text, "# TYPE cgstat_threads gauge"));
	CHECK(has(text, "# TYPE cgstat_build info"));
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
	struct metrics *m = metrics__new(NULL, 0, "v1.1");
	char *text;

	r.time_ns[CG_ONCPU] = 5;
	CHECK(m && !metrics__add(m, &iv, 0));
	text = render(m, false);
	CHECK(has(text, "cgstat_cpu_seconds_total{cgroup=\"/a\\\"b\\\\c\\nd\xef\xbf\xbd\xc3\xa9\"}"
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
	struct metrics *m = metrics__new(NULL, 0, "v1.1");
	char *text;

	r.time_ns[CG_ONCPU] = NSEC_PER_SEC;
	CHECK(m && !metrics__add(m, &iv, 0));
	metrics__retire(m, "/job", 10000);
	metrics__retire(m, "/never-seen", 10000);
	iv.nr_records = 0;
	iv.epoch_ms = 10000 + METRICS_GRACE_MS;
	CHECK(!metrics__add(m, &iv, 0));
	text = render(m, false);
	CHECK(has(text, "cgstat_cpu_seconds_total{cgroup=\"/job\"} 1.000000000"));
	free(text);
	iv.epoch_ms++;
	CHECK(!metrics__add(m, &iv, 0));
	text = render(m, false);
	CHECK(!strstr(text, "/job") && has(text, "cgstat_cgroups 0"));
	free(text);

	/* retired, then back within the grace: the sums go on, and it is not dropped later */
	iv.nr_records = 1;
	CHECK(!metrics__add(m, &iv, 0));
	metrics__retire(m, "/job", iv.epoch_ms);
	CHECK(!metrics__add(m, &iv, 0));
	iv.epoch_ms += 2 * METRICS_GRACE_MS;
	CHECK(!metrics__add(m, &iv, 0));
	text = render(m, false);
	CHECK(has(text, "cgstat_cpu_seconds_total{cgroup=\"/job\"} 3.000000000"));
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
