// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every output, byte for byte: three intervals of synthetic snapshots go through the drain into
 * the -o files, the three stdout formats and the summary, and each must equal its expected file
 * in fixtures/golden. Refactoring the figures' path (issue 11) must leave these unchanged; a
 * change of the output itself rewrites them on purpose with CGSTAT_GOLDEN_UPDATE=1 and shows in
 * the diff.
 *
 * The input has what the formats must handle: counts derived from cgstat's own figures and from
 * perf, a multiplexed event, an event not counted, a slot reused by another cgroup, a removed
 * cgroup sharing its label with a live one, an idle cgroup, no host sample and then two disks,
 * and preempting cgroups whose top changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/drain.h"
#include "sources/perf_events.h"
#include "outputs/out_files.h"
#include "outputs/stream.h"
#include "outputs/summary.h"
#include "lib/util.h"

#define NR_SLOTS    4
#define NR_EVENTS   6
#define INTERVAL_NS 500000000ULL

static const char *const columns[NR_EVENTS] = {
	"taskClockMillis", "contextSwitches", "cpuMigrations",
	"pageFaults",	   "cycles",	      "instructions",
};

static const struct drain_column drain_columns[NR_EVENTS] = {
	{ CG_EVENT_CORE_TASK_CLOCK, -1 }, { CG_EVENT_CORE_CONTEXT_SWITCHES, -1 },
	{ CG_EVENT_CORE_MIGRATIONS, -1 }, { CG_EVENT_CORE_PAGE_FAULTS, -1 },
	{ CG_EVENT_FROM_PERF, 1 },  /* multiplexed from the second interval */
	{ CG_EVENT_FROM_PERF, -1 }, /* could not be opened: never counted */
};

static const char *label_of(void *ctx, uint32_t slot, uint64_t cgid)
{
	(void)ctx;
	(void)slot;
	switch (cgid) {
	case 100:
		return "/web";
	case 200:
	case 500:
		return "/db"; /* removed and made again under its path */
	case 300:
		return "/cache";
	default:
		return "/idle";
	}
}

/* Preempting cgroups: watched ones by their label, another by its path. */
static const char *preempter_label_of(void *ctx, uint64_t cgid)
{
	(void)ctx;
	return cgid == 100 ? "/web" : cgid == 300 ? "/cache" : "/batch";
}

/*
 * The preempters map after interval i: /web's tasks taken by /cache, then more often by
 * /batch; /db's by /web; in the last interval no one.
 */
static size_t preempters_of(int i, struct cg_preempter *p)
{
	p[0] = (struct cg_preempter){ { 0, 0, 300 }, i ? 6 : 5 };
	p[1] = (struct cg_preempter){ { 0, 0, 900 }, i ? 9 : 2 };
	if (!i)
		return 2;
	p[2] = (struct cg_preempter){ { 1, 0, 100 }, 3 };
	return 3;
}

static void run_for(struct cg_slot_snap *s, uint64_t on_ns, uint64_t runq_ns, uint64_t waits,
		    uint64_t longest_ns)
{
	s->time_ns[CG_ONCPU] += on_ns;
	s->time_ns[CG_RUNQ] += runq_ns;
	s->time_ns[CG_SLEEP] += on_ns / 2;
	s->time_ns[CG_BLOCKED] += on_ns / 8;
	s->time_ns[CG_STOLEN] += on_ns / 100;
	s->count[CG_NVCSW] += waits;
	s->count[CG_NIVCSW] += waits / 4;
	s->count[CG_PREEMPTED_BY_SAME] += waits / 8;
	s->count[CG_PREEMPTED_BY_OTHER] += waits / 4 - waits / 8 - waits / 40;
	s->count[CG_PREEMPTED_BY_KERNEL] += waits / 40;
	s->count[CG_MIGRATIONS] += waits / 10;
	s->count[CG_RUNQ_WAITS] += waits;
	s->count[CG_MINOR_FAULTS] += waits * 7;
	s->count[CG_MAJOR_FAULTS] += waits / 20;
	if (longest_ns > s->runq_max_ns)
		s->runq_max_ns = longest_ns;
	s->runq_hist[cg_hist_bucket(longest_ns)] += 1;
	s->runq_hist[cg_hist_bucket(runq_ns / (waits ? waits : 1))] += waits - 1;
	s->counter[0] += waits * 3;
	s->enabled[0] += INTERVAL_NS;
	s->running[0] += INTERVAL_NS;
}

/* The snapshots after each interval: slot i's cumulative figures, as the BPF side keeps them. */
static void advance(struct cg_slot_snap *snap, int interval)
{
	struct cg_slot_snap *web = &snap[0], *db = &snap[1], *other = &snap[2];

	run_for(web, 700000000 + 1000 * interval, 3000000, 400 + interval, 250000);
	web->tasks = 5;
	web->counter[1] += 1000000 * (interval + 1);
	web->enabled[1] += INTERVAL_NS;
	web->running[1] += interval ? INTERVAL_NS / 2 : INTERVAL_NS;
	/* per snapshot: one thread of /web at 0.92 of a core in the first interval only */
	web->busiest_ns = interval ? 300000000 : 475000000;
	web->busiest_tid = 4123 + interval;
	snprintf(web->busiest_comm, sizeof(web->busiest_comm), "%s",
		 interval ? "pulsar-io-1-2" : "pulsar-ml-3-1");
	switch (interval) {
	case 0:
		run_for(db, 120000000, 900000, 80, 40000);
		db->tasks = 2;
		other->cgid = 500; /* idle: only -c would show it */
		break;
	case 1:
		/* /db is removed and made again within the interval, in another slot */
		run_for(db, 1000000, 10000, 2, 8000);
		db->dead = 1;
		db->tasks = 0;
		run_for(other, 90000000, 600000, 50, 30000);
		other->tasks = 2;
		break;
	default:
		/* the removed cgroup's slot is reused by /cache: measured from zero */
		memset(db, 0, sizeof(*db));
		db->cgid = 300;
		run_for(db, 20000000, 70000, 9, 12000);
		db->tasks = 1;
		run_for(other, 110000000, 400000, 60, 20000);
		break;
	}
}

static void host_of(int interval, struct cg_host *host, struct cg_host_disk *disks)
{
	memset(host, 0, sizeof(*host));
	if (!interval)
		return; /* one reading: no interval to measure yet */
	host->valid = true;
	host->cpu_busy_percent = 41.25 + interval;
	host->cpu_iowait_percent = 0.5 * interval;
	host->nr_disks = 2;
	host->disks = disks;
	strcpy(disks[0].name, "vda");
	disks[0].read_mbps = 1.5 * interval;
	disks[0].write_mbps = 12.25;
	disks[0].busy_percent = 3.125;
	strcpy(disks[1].name, "nvme0n1");
	disks[1].read_mbps = 0;
	disks[1].write_mbps = 0.001;
	disks[1].busy_percent = 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
		goto out;
	}
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
out:
	fclose(f);
	return buf;
}

/*
 * got equals fixtures/golden/name. A difference is shown as a diff (what review sees); with
 * CGSTAT_GOLDEN_UPDATE set the file is rewritten to got, and the check still fails for that
 * run: an update passes only on the next run, once it compares equal.
 */
static void check_golden(const char *got_path, const char *name)
{
	char want_path[512], cmd[1200];
	size_t got_len = 0, want_len = 0;
	char *got, *want;
	FILE *f;

	snprintf(want_path, sizeof(want_path), "%s/golden/%s", FIXTURES, name);
	got = slurp(got_path, &got_len);
	CHECK(got != NULL);
	if (!got)
		return;
	want = slurp(want_path, &want_len);
	if (want && got_len == want_len && !memcmp(got, want, got_len)) {
		check_passed++;
		goto out;
	}
	check_failed++;
	fprintf(stderr, "%s differs from %s (- expected, + got):\n", want_path, got_path);
	fflush(stderr);
	snprintf(cmd, sizeof(cmd), "diff -u '%s' '%s' >&2", want ? want_path : "/dev/null",
		 got_path);
	if (system(cmd) == -1)
		fprintf(stderr, "%s\n", got);
	if (getenv("CGSTAT_GOLDEN_UPDATE")) {
		f = fopen(want_path, "wb");
		CHECK(f && fwrite(got, 1, got_len, f) == got_len && !fclose(f));
		fprintf(stderr, "%s rewritten: review the diff above, and run again\n", want_path);
	}
out:
	free(got);
	free(want);
}

/*
 * What the cgroupfs sampler would give /web in interval i: nothing the first (no reading
 * before it), its quota throttling it in the second, and in the third a limit of 1.45 cores
 * that its 1.4 saturate, with io and memory stalls. Every other cgroup's files are unread.
 */
static void cgroupfs_of(int i, struct cg_interval *iv)
{
	for (int k = 0; k < iv->nr_records; k++) {
		struct cg_record *r = &iv->records[k];

		if (strcmp(r->name, "/web") || i == 0)
			continue;
		r->cpu_limit_cores = 1.45;
		r->cgroupfs[CG_FS_PERIODS] = 5;
		r->cgroupfs[CG_FS_THROTTLED_PERIODS] = i == 1 ? 3 : 0;
		r->cgroupfs[CG_FS_THROTTLED_NS] = i == 1 ? 12500000 : 0;
		r->cgroupfs[CG_FS_CPU_SOME_NS] = 40000000;
		r->cgroupfs[CG_FS_MEMORY_SOME_NS] = 1000 * i;
		r->cgroupfs[CG_FS_IO_SOME_NS] = 7654321;
		r->cgroupfs_valid = (1u << CG_NR_CGROUPFS) - 1 - (1u << CG_FS_IO_FULL_NS);
	}
}

/* The stdout formats, each into a file of the name at its index; then the -o files. */
static const enum cg_format formats[] = { CG_FORMAT_CSV, CG_FORMAT_JSON, CG_FORMAT_TABLE };
static const char *const outputs[] = {
	"stream.csv",	       "stream.json",	   "stream.table",
	"container-stats.csv", "sched-stats.csv",  "perf-stat.csv",
	"host-io.csv",	       "cgroup-stats.csv", "container-summary.json",
	"pool-stats.csv",      "thread-stats.csv",
};
#define NR_FORMATS ARRAY_SIZE(formats)

int main(void)
{
	static struct cg_slot_snap snap[NR_SLOTS];
	struct cg_host_disk disks[2];
	char dir[] = "/tmp/cgstat-golden-XXXXXX";
	char path[512];
	FILE *streams[NR_FORMATS] = {};
	struct out_files *files = NULL;
	struct summary *summary = NULL;
	struct drain *drain = NULL;
	const struct cg_preempter_key *stale;
	struct cg_preempter pairs[3];
	size_t nr_pairs, nr_stale;
	struct cg_interval iv;
	char *json = NULL;
	size_t f;
	int i;

	/* the table's clock is local time */
	setenv("TZ", "UTC", 1);
	tzset();
	CHECK(mkdtemp(dir) != NULL);
	/* with --threads' files: no pool nor thread here, their headers are what is pinned */
	files = out_files__open(dir, OUT_FILES_PERF | OUT_FILES_POOLS);
	summary = summary__new();
	drain = drain__new(NR_SLOTS, drain_columns, NR_EVENTS, label_of, NULL);
	CHECK(files && summary && drain);
	if (!files || !summary || !drain)
		goto out;
	drain__set_preempter_label(drain, preempter_label_of, NULL);
	for (f = 0; f < NR_FORMATS; f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, outputs[f]);
		streams[f] = fopen(path, "w");
		CHECK(streams[f] != NULL);
		if (!streams[f])
			goto out;
	}

	snap[0].cgid = 100;
	snap[1].cgid = 200;
	snap[3].cgid = 400;
	drain__baseline(drain, snap, NR_SLOTS);
	for (i = 0; i < 3; i++) {
		advance(snap, i);
		memset(&iv, 0, sizeof(iv));
		iv.epoch_ms = 1764547200000ULL + 500 * (i + 1); /* 2025-12-01 00:00:00.5 UTC on */
		iv.interval_ns = INTERVAL_NS + 1234 * i;
		iv.health = (struct cg_health){ .dropped_events = i,
						.missed_switches = 5 * i,
						.unseen_wakeups = 3 * i };
		iv.nr_events = NR_EVENTS;
		iv.event_columns = columns;
		host_of(i, &iv.host, disks);
		/* the all-cgroups mode leaves out what did nothing; the last interval, as -c, not
		 */
		nr_pairs = preempters_of(i, pairs);
		CHECK(drain__preempters(drain, pairs, nr_pairs, &stale, &nr_stale) == 0);
		CHECK(nr_stale == 0);
		CHECK(drain__interval(drain, snap, NR_SLOTS, i < 2, &iv) == 0);
		iv.nr_cpus = 2;
		cgroupfs_of(i, &iv);
		for (f = 0; f < NR_FORMATS; f++)
			CHECK(stream__write(streams[f], formats[f], &iv, i == 0) == 0);
		CHECK(out_files__write(files, &iv) == 0);
		CHECK(summary__add(summary, &iv) == 0);
		if (i == 1)
			summary__retire(summary, "/db", 200);
	}
	summary__set_messages(summary, 123456);
	json = summary__to_json(summary, 1764547200000ULL, 1764547201500ULL,
				&(struct cg_health){ .dropped_events = 2,
						     .missed_switches = 10,
						     .unseen_wakeups = 6 });
	CHECK(json && out_files__write_summary(files, json) == 0);
	out_files__close(files);
	files = NULL;
	for (f = 0; f < NR_FORMATS; f++) {
		CHECK(fclose(streams[f]) == 0);
		streams[f] = NULL;
	}
	for (f = 0; f < ARRAY_SIZE(outputs); f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, outputs[f]);
		check_golden(path, outputs[f]);
	}
out:
	for (f = 0; f < NR_FORMATS; f++)
		if (streams[f])
			fclose(streams[f]);
	free(json);
	out_files__close(files);
	summary__free(summary);
	drain__free(drain);
	if (!getenv("CGSTAT_KEEP_OUTPUT")) {
		for (f = 0; f < ARRAY_SIZE(outputs); f++) {
			snprintf(path, sizeof(path), "%s/%s", dir, outputs[f]);
			unlink(path);
		}
		rmdir(dir);
	}
	return check_done();
}
