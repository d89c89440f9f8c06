// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgstat: per-cgroup scheduler statistics from CO-RE BPF. This file wires the modules
 * together: options, cgroup resolution, the collector, the drain, and the outputs.
 */
#define _GNU_SOURCE /* ppoll() */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/sysinfo.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <systemd/sd-daemon.h>

#include "sources/bpf_programs.h"
#include "sources/cgroup.h"
#include "sources/cgroupfs.h"
#include "sources/collector.h"
#include "sources/container_names.h"
#include "sources/name_source.h"
#include "command.h"
#include "compare/compare.h"
#include "report/report.h"
#include "core/drain.h"
#include "sources/perf_events.h"
#include "sources/host.h"
#include "sources/host_view.h"
#include "sources/kernel_features.h"
#include "outputs/listener.h"
#include "outputs/live.h"
#include "lib/hashtab.h"
#include "lib/message.h"
#include "outputs/metrics.h"
#include "opts.h"
#include "outputs/out_files.h"
#include "sources/perf_counters.h"
#include "privileges.h"
#include "sources/slots.h"
#include "outputs/stream.h"
#include "outputs/summary.h"
#include "lib/util.h"
#include "sources/watch.h"

/*
 * What ended the run: SIGINT, SIGTERM or SIGHUP once taken, SIGPIPE when the stdout reader went
 * away, SIGCHLD when the command ended and its cgroup is empty. The signals are blocked from
 * the start and taken only by sleep_until(): one that comes while cgstat starts, loads, seeds
 * or drains waits there, and the run stops cleanly at once.
 */
static int stop_signal;
static sigset_t stop_signals;

/*
 * The kernel's BTF the programs are relocated against: CGSTAT_BTF_PATH, for a kernel that
 * does not expose its own (a file from BTFHub, or one made with pahole), else NULL: libbpf's
 * default, the running kernel's.
 */
static const char *custom_btf_path(void)
{
	const char *path = getenv("CGSTAT_BTF_PATH");

	return path && *path ? path : NULL;
}

/* Refuse early, with one line, what would otherwise fail deep inside libbpf. */
static int check_can_run(bool verbose)
{
	const char *btf = custom_btf_path();
	uint64_t missing;
	int err;

	/* the image's binary has them as permitted file capabilities, not yet in effect */
	err = privileges_raise();
	if (err) {
		fprintf(stderr, "cgstat: cannot take its capabilities: %s\n", strerror(-err));
		return err;
	}
	/* root has them; the systemd unit gives its user just these */
	missing = privileges_missing();
	if (missing) {
		fprintf(stderr,
			"cgstat: no %s%s%s: loading its BPF programs takes CAP_BPF and "
			"CAP_PERFMON, or CAP_SYS_ADMIN (root has them)\n",
			missing & 1ULL << CAP_BPF ? "CAP_BPF" : "",
			missing == privileges_needed() ? " and " : "",
			missing & 1ULL << CAP_PERFMON ? "CAP_PERFMON" : "");
		return -EPERM;
	}
	if (!btf)
		btf = "/sys/kernel/btf/vmlinux";
	if (access(btf, R_OK)) {
		fprintf(stderr,
			"cgstat: no kernel BTF at %s: the kernel needs CONFIG_DEBUG_INFO_BTF=y\n",
			btf);
		return -ENOENT;
	}
	/* before anything is made: a kernel too old would fail the load with a bare EINVAL */
	return kernel_features__check(stderr, verbose);
}

/*
 * A perf fd per CPU and event, and the cgroup files kept open between readings (cgroupfs.c),
 * can pass the usual soft limit of 1,024 on a large host; the hard limit is the one that
 * matters, and raising the soft one to it needs no privilege.
 */
static void raise_fd_limit(void)
{
	struct rlimit lim;

	if (!getrlimit(RLIMIT_NOFILE, &lim) && lim.rlim_cur < lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_NOFILE, &lim);
	}
}

/*
 * With a command, a SIGINT, SIGTERM or SIGHUP sent to cgstat goes to the command first, and the
 * run ends when the command does; a second one ends the run at once. One that a terminal sent
 * (si_code SI_KERNEL: Ctrl-C, a hangup) reached the command too where the command is in the
 * terminal's foreground process group, and is not sent again; a command in a group of its own
 * (`timeout 60 ./bench`: GNU timeout makes one) gets it from cgstat. So does one whose run
 * ends otherwise (q in the live view, the stdout reader gone), as a SIGINT. False when the
 * signal is to end the run.
 */
static bool forward_to_command(struct command *cmd, int sig, int code, bool *forwarded)
{
	if (!cmd || *forwarded)
		return false;
	if ((code != SI_KERNEL || !command__in_foreground(cmd)) && !command__signal(cmd, sig))
		return false;
	*forwarded = true;
	return true;
}

/* The signals sleep_until() takes, as a descriptor it polls beside the terminal's keys. */
static int stop_fd = -1;

/*
 * Sleep until the monotonic deadline, taking the stop signals, with the live view the keys
 * typed, and with name targets (follow) the runtimes' news (names_fd), each followed at once;
 * false when the run is to end (a signal came first, or had come since the last call:
 * it is pending then, so there is no window where it waits a whole interval).
 */
static bool sleep_until(uint64_t deadline_ns, struct command *cmd, bool *forwarded,
			struct live *live, int names_fd, struct slots *follow)
{
	/* keys only from a terminal: /dev/null would be readable, at its end, without end */
	struct pollfd fds[3] = {
		{ .fd = stop_fd, .events = POLLIN },
		{ .fd = live && isatty(STDIN_FILENO) ? STDIN_FILENO : -1, .events = POLLIN },
		{ .fd = follow ? names_fd : -1, .events = POLLIN },
	};
	uint64_t said;
	struct signalfd_siginfo info;
	struct timespec ts;
	uint64_t now;
	int n;

	while (!stop_signal) {
		now = clock_ns(CLOCK_MONOTONIC);
		if (now >= deadline_ns)
			return true;
		ts.tv_sec = (deadline_ns - now) / NSEC_PER_SEC;
		ts.tv_nsec = (deadline_ns - now) % NSEC_PER_SEC;
		n = ppoll(fds, ARRAY_SIZE(fds), &ts, NULL);
		if (n == 0)
			return true;
		if (n < 0 && errno != EINTR)
			return true;
		/* EINTR: ncurses took a SIGWINCH, and has a KEY_RESIZE to read */
		if (live && (n < 0 || fds[1].revents)) {
			if (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))
				fds[1].fd = -1; /* the terminal went away: no more keys */
			/* q ends the run as a SIGINT sent to cgstat does */
			if (live__keys(live) == LIVE_QUIT &&
			    !forward_to_command(cmd, SIGINT, SI_USER, forwarded))
				stop_signal = SIGINT;
		}
		/* a container named: a name target that waits for it counts it from now */
		if (n > 0 && (fds[2].revents & POLLIN) &&
		    read(fds[2].fd, &said, sizeof(said)) == sizeof(said))
			slots__follow(follow);
		if (n <= 0 || !(fds[0].revents & POLLIN) ||
		    read(stop_fd, &info, sizeof(info)) != sizeof(info))
			continue;
		if (info.ssi_signo == SIGCHLD) {
			if (cmd && command__reap(cmd))
				stop_signal = SIGCHLD;
		} else if (!forward_to_command(cmd, (int)info.ssi_signo, info.ssi_code,
					       forwarded)) {
			stop_signal = (int)info.ssi_signo;
		}
	}
	return false;
}

/* The perf event list and how each of its columns is counted. */
struct event_list {
	struct cg_event ev[CG_MAX_EVENTS];
	const char *columns[CG_MAX_EVENTS];
	const char *names[CG_MAX_EVENTS]; /* perf's, for the metrics endpoint */
	struct drain_column drain[CG_MAX_EVENTS];
	int nr;
	struct perf_counters *perf;
};

/* -e or the default list; --no-perf: none. Before anything is loaded: a bad name is a usage error.
 */
static int event_list_parse(struct event_list *el, const struct cg_opts *opts)
{
	char err[256];
	int i;

	/* --light: perf counts are charged at the switches, which it does not follow */
	if (opts->no_perf || opts->light)
		return 0;
	if (events_parse(opts->events ? opts->events : events_default_list(), el->ev, CG_MAX_EVENTS,
			 &el->nr, err, sizeof(err))) {
		fprintf(stderr, "cgstat: --events: %s\n", err);
		return -EINVAL;
	}
	for (i = 0; i < el->nr; i++) {
		el->columns[i] = el->ev[i].column;
		el->names[i] = el->ev[i].name;
	}
	return 0;
}

static int event_list_open(struct event_list *el, int nr_cpus)
{
	int i;

	el->perf = perf_counters__open(el->ev, el->nr, nr_cpus, stderr);
	if (!el->perf)
		return -errno;
	for (i = 0; i < el->nr; i++) {
		el->drain[i].source = el->ev[i].core_source;
		el->drain[i].perf_index = perf_counters__index(el->perf, i);
	}
	return 0;
}

/*
 * What the output folder needs made at start. Once privileges are dropped, without
 * CAP_DAC_OVERRIDE, root can make files only in a folder it owns: elsewhere the summary is
 * made now and written over at exit, not renamed into place.
 */
static unsigned int out_files_flags(const struct cg_opts *opts, const struct event_list *events)
{
	unsigned int flags = events->nr > 0 ? OUT_FILES_PERF : 0;
	const char *dir = opts->output_dir;
	struct stat st;
	uid_t uid;
	gid_t gid;

	if (opts->threads)
		flags |= OUT_FILES_POOLS;
	/* the summary is renamed into place only in a folder of the ids cgstat will run as */
	privileges_target(&uid, &gid);
	if (stat(dir, &st) || st.st_uid != uid)
		flags |= OUT_FILES_SUMMARY_IN_PLACE;
	return flags;
}

/*
 * What the all-cgroups mode spends reading cgroup files per interval: 8-11 us a cgroup (its
 * files kept open, their text generated by the kernel at each read), so about 100 cgroups on an
 * idle host, fewer under load. It adds to the drain's time (docs/performance.md,
 * "cgroup-stats.csv's reading").
 */
#define CGROUPFS_ALL_BUDGET_NS (1 * NSEC_PER_MSEC)

/*
 * Everything a run holds, from the command line to the outputs: made by run_prepare() and
 * run_load(), used by run_loop(), freed by run_free() whatever was made.
 */
struct run {
	struct cg_opts opts;
	struct event_list events;
	struct watch_list watched;
	struct cgroup_mount mnt;
	struct cgroup_mount
		v1_cpu; /* a hybrid host's v1 cpu controller: cgroupfs keeps a pointer */
	struct collector *collector;
	struct drain *drain;
	struct host_sampler *host;
	struct cgroupfs *cgroupfs;
	struct {
		bool multiplexed, drops, untabled, wakes;
		struct hash_table pools_full; /* by cgroup id: struct said_cgroup */
	} said;				      /* the lines interval_warn_once() said */
	struct out_files *files;
	struct summary *summary;
	struct metrics *metrics;   /* --listen's figures, or NULL */
	struct listener *listener; /* --listen's server, or NULL */
	struct slots *slots;
	/* the runtimes' names for containers (NULL with --no-names), and who fills them */
	struct container_names *containers;
	struct name_sources *name_sources;
	enum cg_format format;
	bool stream_open;
	bool stream_first;
	struct command *command; /* `cgstat -- CMD`, or NULL */
	struct live *live;	 /* the live view, once the run has begun; or NULL */
	bool signal_forwarded;	 /* to the command: the next stop signal ends the run */
	/*
	 * The last snapshot's time: an interval is the time between two snapshots, the span its
	 * figures cover, not between two reads of a clock around them (a stall of the VM between
	 * the two moved up to 20 ms of five threads' time into the interval beside).
	 */
	uint64_t snapshot_ns;
	/* --bpf-stats: the fd that keeps the kernel's BPF statistics on (-1: off), their reader */
	int bpf_stats_fd;
	struct bpf_programs *programs;
};

/* The preempter pairs into the drain, right after the snapshot; the idle ones freed. */
static int drain_preempters(struct run *r, uint32_t nr_slots)
{
	const struct cg_preempter_key *stale;
	const struct cg_preempter *pairs;
	size_t nr_pairs, nr_stale;
	int err;

	err = collector__preempters(r->collector, nr_slots, &pairs, &nr_pairs);
	if (!err)
		err = drain__preempters(r->drain, pairs, nr_pairs, &stale, &nr_stale);
	if (err) {
		fprintf(stderr, "cgstat: preempters: %s\n", strerror(-err));
		return err;
	}
	collector__forget_preempters(r->collector, stale, nr_stale);
	return 0;
}

/* With --threads, the wake graph's edges of the interval into iv. */
static int drain_wakes(struct run *r, const struct cg_slot_snap *snap, uint32_t nr_slots,
		       struct cg_interval *iv)
{
	const struct cg_wake_edge *edges;
	const uint64_t *counts;
	uint32_t nr;
	int err;

	err = collector__wake_edges(r->collector, &edges, &counts, &nr);
	if (!err)
		err = drain__wakes(r->drain, snap, nr_slots, edges, counts, nr, iv);
	if (err)
		fprintf(stderr, "cgstat: wake graph: %s\n", strerror(-err));
	return err;
}

/* With --threads, the thread records into the drain, right after the snapshot. */
static int drain_threads(struct run *r)
{
	const struct cg_thread_rec *recs;
	size_t nr;
	int err;

	err = collector__threads(r->collector, &recs, &nr);
	if (!err)
		err = drain__threads(r->drain, recs, nr, r->opts.threads);
	if (err)
		fprintf(stderr, "cgstat: thread records: %s\n", strerror(-err));
	return err;
}

/* A removed cgroup has had its last record: the summary and the metrics let it go. */
static void retire_cgroup(void *ctx, const char *name, uint64_t cgid)
{
	struct run *r = ctx;

	summary__retire(r->summary, name, cgid);
	if (r->metrics)
		metrics__retire(r->metrics, name, clock_ns(CLOCK_REALTIME) / NSEC_PER_MSEC);
}

/*
 * What a run says once, the first interval it holds: each is a lasting state (a full map stays
 * full), and a line an interval would bury the rows.
 */
static void interval_warn_once(struct run *r, const struct cg_interval *iv)
{
	if (collector__multiplexed(r->collector) && !r->said.multiplexed) {
		fprintf(stderr,
			"cgstat: the PMU multiplexed some counters (more events than "
			"hardware counters); their counts are scaled by enabled/running time\n");
		r->said.multiplexed = true;
	}
	if (iv->health.dropped_events && !r->said.drops) {
		fprintf(stderr,
			"cgstat: droppedEvents: %llu tasks could not be attributed, a BPF "
			"map is full (more cgroups than --max-cgroups=%u, or no memory for "
			"task storage); counted in droppedEvents from now on\n",
			(unsigned long long)iv->health.dropped_events, r->opts.max_cgroups);
		r->said.drops = true;
	}
	if (iv->health.dropped_wakeups && !r->said.wakes) {
		fprintf(stderr,
			"cgstat: the wake graph is full (%u edges): wakeups between pools first "
			"seen from now on are not in wakeups.csv\n",
			CG_WAKE_EDGES);
		r->said.wakes = true;
	}
	if (iv->health.untabled_threads && !r->said.untabled) {
		fprintf(stderr,
			"cgstat: the thread table is full (%u threads): threads first seen from "
			"now on count in their pools but have no thread rows\n",
			CG_THREAD_TABLE);
		r->said.untabled = true;
	}
}

/* A cgroup pools_full_once() spoke of. */
struct said_cgroup {
	struct hash_node node;
	uint64_t cgid;
};

static bool said_cgroup_is(const struct hash_node *n, const void *cgid)
{
	return container_of(n, struct said_cgroup, node)->cgid == *(const uint64_t *)cgid;
}

static void said_cgroup_free(struct hash_table *t, struct hash_node *n, void *ctx)
{
	(void)ctx;
	hash_table_del(t, n);
	free(container_of(n, struct said_cgroup, node));
}

/*
 * With --threads, each cgroup whose threads of a new pool found no pool slot, once: its
 * CG_POOLS_PER_WATCHED are taken, or in the all-cgroups mode the pools' share of the slots.
 * Its record is whole; the pool rows miss those pools, counted in "(the other pools)".
 */
static void pools_full_once(struct run *r, const struct cg_interval *iv)
{
	char name[512];
	struct said_cgroup *c;
	int i;

	for (i = 0; i < iv->nr_records; i++) {
		const struct cg_record *rec = &iv->records[i];

		if (!rec->pools_full || hash_table_find(&r->said.pools_full, hash_u64(rec->cgid),
							said_cgroup_is, &rec->cgid))
			continue;
		c = calloc(1, sizeof(*c));
		if (!c)
			return;
		c->cgid = rec->cgid;
		hash_table_add(&r->said.pools_full, &c->node, hash_u64(rec->cgid));
		message_quote_buf(name, sizeof(name), rec->name, strlen(rec->name));
		fprintf(stderr,
			"cgstat: %s: more thread pools than cgstat keeps (%d a cgroup%s): threads of "
			"its further pools count in its pool '(the other pools)'\n",
			name, CG_POOLS_PER_WATCHED,
			slots__all_cgroups(r->slots) ? ", and as many pools in all as cgroups"
						     : "");
	}
}

/*
 * With --bpf-stats, the programs' runs and run time so far into iv. A failure is said, and
 * they are read no more: the summary keeps them as of the interval before.
 */
static void interval_programs(struct run *r, struct cg_interval *iv)
{
	int err = bpf_programs__read(r->programs, &iv->programs, &iv->nr_programs);

	if (!err)
		return;
	fprintf(stderr, "cgstat: --bpf-stats: cannot read the BPF programs' statistics: %s\n",
		strerror(-err));
	bpf_programs__free(r->programs);
	r->programs = NULL;
}

/*
 * The interval that ends now, from the host, the BPF side and the cgroup files into iv; *snap
 * and *nr_slots the snapshot it came from. epoch_ms and mono_ns are read together just before
 * the snapshot, as its start was read before the one that began it: epochMillis -
 * intervalMillis is then the wall clock at the interval's start. The host reading comes first
 * and its rates are over mono_ns, so over the rows' own epochMs spacing (timed after the
 * snapshot, a late one once gave a row of host-io.csv 1.5 % more MB/s than its bytes over that
 * spacing). 0, or -errno when the run must end.
 */
static int interval_collect(struct run *r, uint64_t epoch_ms, uint64_t mono_ns,
			    struct cg_interval *iv, const struct cg_slot_snap **snap,
			    uint32_t *nr_slots)
{
	uint64_t at_ns;
	int err;

	err = host_sampler__sample(r->host, mono_ns, &iv->host);
	if (err && r->opts.verbose)
		fprintf(stderr, "cgstat: host sample: %s\n", strerror(-err));
	err = collector__snapshot(r->collector, snap, nr_slots, &at_ns);
	if (err) {
		fprintf(stderr, "cgstat: snapshot failed: %s\n", strerror(-err));
		return err;
	}
	/* the programs' figures right after the snapshot: over the interval's span */
	if (r->programs)
		interval_programs(r, iv);
	iv->epoch_ms = epoch_ms;
	iv->interval_ns = at_ns - r->snapshot_ns;
	/* read each interval: a CPU taken offline is one fewer a cgroup can use */
	iv->nr_cpus = get_nprocs();
	r->snapshot_ns = at_ns;
	collector__health(r->collector, &iv->health);
	iv->nr_events = r->events.nr;
	iv->event_columns = r->events.columns;
	interval_warn_once(r, iv);
	slots__begin_interval(r->slots);
	err = drain_preempters(r, *nr_slots);
	if (!err && r->opts.threads)
		err = drain_threads(r);
	if (err)
		return err;
	err = drain__interval(r->drain, *snap, *nr_slots, slots__all_cgroups(r->slots), iv);
	if (err) {
		fprintf(stderr, "cgstat: drain failed: %s\n", strerror(-err));
		return err;
	}
	if (r->opts.threads) {
		pools_full_once(r, iv);
		err = drain_wakes(r, *snap, *nr_slots, iv);
		if (err)
			return err;
	}
	cgroupfs__sample(r->cgroupfs, iv);
	err = drain__add_groups(r->drain, iv);
	if (err)
		fprintf(stderr, "cgstat: drain failed: %s\n", strerror(-err));
	return err;
}

/*
 * iv on the terminal: the live view, or the stream on stdout. A reader that went away ends the
 * run, keeping the files whole; with a command, it ends the command as a SIGINT would, and the
 * run with it. 0, or -errno when the run must end.
 */
static int interval_show(struct run *r, const struct cg_interval *iv)
{
	int err;

	if (r->live)
		return live__draw(r->live, iv);
	if (!r->stream_open)
		return 0;
	err = stream__write(stdout, r->format, iv, r->stream_first);
	r->stream_first = false;
	if (err) {
		r->stream_open = false;
		if (err != -EPIPE)
			fprintf(stderr, "cgstat: stdout: %s\n", strerror(-err));
		if (!forward_to_command(r->command, SIGINT, SI_USER, &r->signal_forwarded))
			stop_signal = SIGPIPE;
	}
	return 0;
}

/*
 * iv to every output. The order holds one constraint: a removed cgroup is retired
 * (slots__end_interval()) only after its last record went into the summary and the metrics.
 * 0, or -errno when the run must end.
 */
static int interval_publish(struct run *r, const struct cg_interval *iv,
			    const struct cg_slot_snap *snap, uint32_t nr_slots, uint64_t mono_ns)
{
	int err;

	err = interval_show(r, iv);
	if (err)
		return err;
	if (r->files) {
		err = out_files__write(r->files, iv);
		if (err) {
			fprintf(stderr, "cgstat: %s: %s\n", r->opts.output_dir, strerror(-err));
			return err;
		}
	}
	err = summary__add(r->summary, iv);
	if (err)
		return err;
	if (r->metrics) {
		err = metrics__add(r->metrics, iv, clock_ns(CLOCK_MONOTONIC) - mono_ns);
		if (err)
			return err;
	}
	slots__end_interval(r->slots, snap, nr_slots, retire_cgroup, r);
	return 0;
}

/* One interval: collected, then published. 0, or -errno when the run must end. */
static int run_interval(struct run *r, uint64_t epoch_ms, uint64_t mono_ns)
{
	const struct cg_slot_snap *snap;
	struct cg_interval iv = {};
	uint32_t nr_slots;
	int err;

	err = interval_collect(r, epoch_ms, mono_ns, &iv, &snap, &nr_slots);
	if (err)
		return err;
	return interval_publish(r, &iv, snap, nr_slots, mono_ns);
}

static int write_summary(struct run *r, uint64_t start_ms, uint64_t end_ms)
{
	struct cg_health health;
	char *json;
	int err;

	if (!r->files)
		return 0;
	collector__health(r->collector, &health);
	json = summary__to_json(r->summary, start_ms, end_ms, &health);
	if (!json)
		return -errno;
	err = out_files__write_summary(r->files, json);
	free(json);
	if (err)
		fprintf(stderr, "cgstat: %s/container-summary.json: %s\n", r->opts.output_dir,
			strerror(-err));
	return err;
}

static int run_loop(struct run *r)
{
	const struct cg_slot_snap *snap;
	uint64_t start_mono, deadline, end = 0;
	uint64_t start_ms;
	uint32_t nr_slots;
	bool last = false;
	int err;

	start_mono = clock_ns(CLOCK_MONOTONIC);
	err = collector__snapshot(r->collector, &snap, &nr_slots, &r->snapshot_ns);
	if (err) {
		fprintf(stderr, "cgstat: snapshot failed: %s\n", strerror(-err));
		return err;
	}
	drain__baseline(r->drain, snap, nr_slots);
	/* counted from the same snapshot as the intervals, whatever ran before it */
	if (r->bpf_stats_fd >= 0) {
		r->programs = bpf_programs__new(collector__object(r->collector));
		if (!r->programs) {
			err = -errno;
			fprintf(stderr, "cgstat: --bpf-stats: cannot read the BPF programs: %s\n",
				strerror(-err));
			return err;
		}
	}
	host_sampler__sample(r->host, clock_ns(CLOCK_MONOTONIC), &(struct cg_host){});
	/* the all-cgroups mode's rows come and go: a cgroup's first row has no cgroupfs figures */
	for (int i = 0; i < r->watched.nr; i++)
		cgroupfs__baseline(r->cgroupfs, r->watched.ids[i], r->watched.labels[i]);
	/* said once counting has begun: what starts after this line is in the rows */
	if (r->opts.verbose)
		fprintf(stderr, "cgstat: attached, watching %s\n",
			slots__all_cgroups(r->slots) ? "every cgroup" : "the given cgroups");
	/*
	 * Type=notify (contrib/systemd/cgstat.service): started once counting has begun and
	 * --listen's server answers, so that a unit ordered after cgstat is counted from its
	 * start. Nothing without NOTIFY_SOCKET; the variable stays, as unsetenv() would race
	 * the getenv() of curl's thread.
	 */
	sd_notify(0, "READY=1");
	start_ms = clock_ns(CLOCK_REALTIME) / NSEC_PER_MSEC;
	if (r->command) {
		err = command__go(r->command);
		if (err) {
			fprintf(stderr, "cgstat: cannot start the command: %s\n", strerror(-err));
			return err;
		}
	}
	if (r->format == CG_FORMAT_LIVE && r->stream_open) {
		r->live = live__open();
		if (!r->live) {
			fprintf(stderr, "cgstat: the live view needs a terminal ncurses can drive "
					"(TERM); the table scrolls instead\n");
			r->format = CG_FORMAT_TABLE;
		}
	}
	if (r->opts.duration_ns)
		end = start_mono + r->opts.duration_ns;
	deadline = start_mono;

	while (!last) {
		deadline += r->opts.interval_ns;
		if (end && deadline >= end) {
			deadline = end;
			last = true;
		}
		if (!sleep_until(deadline, r->command, &r->signal_forwarded, r->live,
				 r->containers ? container_names__event_fd(r->containers) : -1,
				 r->containers && slots__names_followed(r->slots) ? r->slots
										  : NULL))
			last = true; /* SIGINT/SIGTERM: drain the partial interval */
		err = run_interval(r, clock_ns(CLOCK_REALTIME) / NSEC_PER_MSEC,
				   clock_ns(CLOCK_MONOTONIC));
		if (err)
			break;
		if (stop_signal)
			last = true;
	}
	live__close(r->live);
	r->live = NULL;
	/*
	 * An interval failed (a full disk) while the command runs: it is ended as the first
	 * SIGINT would, and waited for (a second signal ends the wait, leaving it running),
	 * so that nothing of it runs on unmeasured.
	 */
	if (err && r->command &&
	    forward_to_command(r->command, SIGINT, SI_USER, &r->signal_forwarded))
		while (sleep_until(UINT64_MAX, r->command, &r->signal_forwarded, NULL, -1, NULL))
			;
	/* after a failed interval its error is the one line to say */
	if (!err)
		err = write_summary(r, start_ms, clock_ns(CLOCK_REALTIME) / NSEC_PER_MSEC);
	if (r->command)
		summary__print_brief(r->summary, stderr);
	summary__print_stages(r->summary, stderr);
	summary__print_programs(r->summary, stderr);
	return err;
}

/*
 * The exit status of a run with a command: the command's, or 128 + N when signal N ended the run
 * before it (a second SIGINT), as a shell gives a process killed by it.
 */
static int run_status(const struct command *cmd)
{
	if (command__status(cmd) >= 0)
		return command__status(cmd);
	return stop_signal && stop_signal != SIGCHLD ? 128 + stop_signal : 1;
}

/*
 * compare and report read (and report writes) a user's folders, with no need of root: under
 * sudo, as that user. Their exit status.
 */
static int subcommand_main(int argc, char **argv)
{
	int err = privileges_become_sudo_user(false);

	if (err) {
		fprintf(stderr, "cgstat: %s: cannot become the sudo user: %s\n", argv[0],
			strerror(-err));
		return 1;
	}
	return !strcmp(argv[0], "compare") ? compare_main(argc, argv, stdout, stderr)
					   : report_main(argc, argv, stderr);
}

/* The stop signals blocked, for sleep_until() alone to take. 0 or -errno. */
static int stop_signals_block(void)
{
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	/* a terminal that hangs up (an ssh session that drops) ends the run as SIGTERM does */
	sigaddset(&stop_signals, SIGHUP);
	sigaddset(&stop_signals, SIGCHLD);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);
	stop_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
	if (stop_fd < 0) {
		fprintf(stderr, "cgstat: signalfd: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

/* -- CMD names a program that can run: the exit status for one that cannot, else 0. */
static int command_check(const struct cg_opts *opts)
{
	int err;

	if (!opts->command)
		return 0;
	err = command_find(opts->command[0]);
	if (!err)
		return 0;
	fputs("cgstat: ", stderr);
	message_quote(stderr, opts->command[0]);
	fprintf(stderr, ": %s\n",
		err == -ENOENT && !strchr(opts->command[0], '/') ? "command not found"
								 : strerror(-err));
	return COMMAND_NOT_RUN;
}

/* The -o folder made (and, under sudo, given to the sudo user). 0 or -errno, said. */
static int output_open(struct run *r)
{
	uid_t sudo_uid;
	gid_t sudo_gid;
	int err;

	r->files = out_files__open(r->opts.output_dir, out_files_flags(&r->opts, &r->events));
	if (!r->files) {
		err = errno;
		fputs("cgstat: output folder ", stderr);
		message_quote(stderr, r->opts.output_dir);
		fprintf(stderr, ": %s\n",
			err == EINVAL  ? "a file cgstat writes is there and is not a "
					 "regular file (a FIFO or a device)"
			: err == ELOOP ? "it or a file cgstat writes there is a symbolic "
					 "link, which cgstat does not write through"
				       : strerror(err));
		return -err;
	}
	if (privileges_sudo_ids(&sudo_uid, &sudo_gid))
		return 0;
	err = out_files__give(r->files, sudo_uid, sudo_gid);
	if (err) {
		fputs("cgstat: output folder ", stderr);
		message_quote(stderr, r->opts.output_dir);
		fprintf(stderr, ": cannot give it to the sudo user: %s\n", strerror(-err));
	}
	return err;
}

/*
 * Everything before loading, in the order the checks must come: the command line, the kernel,
 * the cgroups named; the command forked first of all that opens a file, so that it holds none
 * of cgstat's; the output folder, and --listen's port bound, so that a port in use is said
 * before the programs load. 0, or the exit status.
 */
static int run_prepare(struct run *r)
{
	struct host_view view;
	int err;

	if (event_list_parse(&r->events, &r->opts))
		return 2;
	if (hash_table_init(&r->said.pools_full, 16))
		return 1;
	err = command_check(&r->opts);
	if (err)
		return err;
	if (check_can_run(r->opts.verbose))
		return 1;
	if (cgroup_find_v2_mount("/proc/self/mountinfo", &r->mnt)) {
		fprintf(stderr, "cgstat: no cgroup v2 mount in /proc/self/mountinfo\n");
		return 1;
	}
	host_view__read("/proc", &r->mnt, &view);
	host_view__say(stderr, &view, &r->mnt);
	if (r->opts.command) {
		r->command = command__start(&r->mnt, r->opts.command, r->opts.command_label);
		if (!r->command || opts_watch_command(&r->opts, command__cgroup(r->command)))
			return 1;
	}
	err = watch_list_resolve(&r->watched, r->opts.targets, r->opts.nr_targets, &r->mnt);
	/* the same cgroup twice, or one cgstat cannot count: the command line is wrong */
	if (err)
		return err == -EEXIST || err == -E2BIG ? 2 : 1;
	if (r->opts.output_dir && output_open(r))
		return 1;
	if (r->opts.listen_addr) {
		r->metrics = metrics__new(r->events.names, r->events.nr, libbpf_version_string());
		r->listener = r->metrics ? listener__bind(r->opts.listen_addr, r->opts.listen_port)
					 : NULL;
		if (!r->listener) {
			fprintf(stderr, "cgstat: --listen %s:%s: %s\n", r->opts.listen_addr,
				r->opts.listen_port, strerror(errno));
			return 1;
		}
	}
	if (!r->opts.no_names) {
		r->containers = container_names__new();
		if (!r->containers)
			return 1;
	}
	r->summary = summary__new();
	r->host = host_sampler__new("/proc", "/sys");
	if (!r->summary || !r->host)
		return 1;
	summary__set_messages(r->summary, r->opts.messages);
	r->format = r->opts.format;
	/* a command shares the terminal: the scrolling table leaves room for its output */
	if (r->format == CG_FORMAT_AUTO)
		r->format = !isatty(STDOUT_FILENO) ? CG_FORMAT_CSV
			    : r->opts.command	   ? CG_FORMAT_TABLE
						   : CG_FORMAT_LIVE;
	r->stream_open = !r->opts.quiet;
	r->stream_first = true;
	return 0;
}

/*
 * --bpf-stats: the kernel's BPF statistics on until cgstat exits (the kernel turns them off
 * when the fd is closed, however the process ends), taken while cgstat still has
 * CAP_SYS_ADMIN: privileges_drop() keeps none of it. Started without it (a unit granting only
 * CAP_BPF and CAP_PERFMON), the run goes on without the figures, said in one line: they show
 * what cgstat costs, and nothing of what it measures depends on them.
 */
static void bpf_stats_enable(struct run *r)
{
	int fd = bpf_programs__enable_stats();

	if (fd < 0) {
		fprintf(stderr,
			"cgstat: --bpf-stats: cannot turn the kernel's BPF statistics on: %s%s; "
			"going on without them\n",
			strerror(-fd), fd == -EPERM ? " (it takes CAP_SYS_ADMIN)" : "");
		return;
	}
	r->bpf_stats_fd = fd;
	if (r->opts.verbose)
		fprintf(stderr, "cgstat: the kernel's BPF statistics are on until cgstat exits\n");
}

/*
 * The perf counters opened, the programs loaded and attached, and what reads them made: the
 * slots, the drain and the cgroup files' reader; with --bpf-stats, the statistics on. 0 or
 * -errno, said.
 */
static int run_load(struct run *r)
{
	struct collector_opts copts = {};
	bool all = !r->watched.nr;

	signal(SIGPIPE, SIG_IGN);
	/* after the command was forked: it keeps the limits it was given */
	raise_fd_limit();
	copts.nr_cpus = libbpf_num_possible_cpus();
	if (copts.nr_cpus <= 0 || event_list_open(&r->events, copts.nr_cpus))
		return -EINVAL;
	copts.all_cgroups = all;
	copts.watched = r->watched.ids;
	copts.nr_watched = r->watched.nr;
	copts.max_slots = r->opts.max_cgroups;
	copts.pools = r->opts.threads;
	copts.pool_exact = r->opts.pool_exact;
	copts.light = r->opts.light;
	copts.perf_fds = perf_counters__fds(r->events.perf);
	copts.nr_perf_events = perf_counters__nr_open(r->events.perf);
	copts.verbose = r->opts.verbose > 1;
	copts.verifier_path = r->opts.verbose > 2;
	copts.btf_path = custom_btf_path();
	r->collector = collector__open(&copts);
	if (!r->collector)
		return -errno;
	r->slots = slots__new(r->collector, &r->watched, &r->mnt, r->containers, r->opts.verbose);
	if (!r->slots)
		return -errno;
	r->drain = drain__new(collector__max_slots(r->collector), r->events.drain, r->events.nr,
			      slots__label, r->slots);
	if (!r->drain || (r->opts.threads && drain__set_pools(r->drain, r->opts.pool_exact)))
		return -ENOMEM;
	if (r->opts.light) {
		drain__set_light(r->drain);
		fprintf(stderr, "cgstat: --light: no run-queue quantiles, preemptions, sleep and "
				"blocked split, stolen time or busiest thread (empty)\n");
		if (r->opts.verbose)
			fprintf(stderr, "cgstat: --light sweeps with %s\n",
				collector__light_walks(r->collector)
					? "the open-coded task iterator"
					: "the task iterator program (the kernel has no open-coded one)");
	}
	drain__set_preempter_label(r->drain, slots__cgroup_label, r->slots);
	drain__set_container(r->drain, slots__container, r->slots);
	/* a compose service's total: the sum of its replicas' slots (sources/watch.h) */
	for (int i = 0; i < r->watched.nr; i++) {
		if (!watch_name_is_total(&r->watched.names[i]))
			continue;
		for (int k = 0; k < i; k++)
			if (r->watched.names[k].select == r->watched.names[i].select &&
			    drain__set_group(r->drain, (uint32_t)k, (uint32_t)i))
				return -ENOMEM;
	}
	/* a hybrid host's throttling is in the v1 cpu controller's files */
	r->cgroupfs = cgroupfs__new(
		"/proc",
		cgroup_find_v1_mount("/proc/self/mountinfo", "cpu", &r->v1_cpu) ? NULL : &r->v1_cpu,
		slots__dir, r->slots, all, all ? CGROUPFS_ALL_BUDGET_NS : 0);
	if (!r->cgroupfs)
		return -errno;
	if (r->opts.bpf_stats)
		bpf_stats_enable(r);
	return 0;
}

/* Where the runtimes' names are read: DOCKER_HOST as the docker CLI reads it. */
static struct name_source_config name_config(const struct run *r)
{
	return (struct name_source_config){
		.docker_host = getenv("DOCKER_HOST"),
		.kubelet_logs = r->opts.kubelet_logs,
	};
}

/*
 * Least privilege, while cgstat has one thread (ids and capabilities are each thread's own),
 * keeping the Docker socket's group, if any, for its names: the names' threads first, the one
 * that connects to the socket keeping the group as it settles (privileges_settle()), then the
 * main thread settles without it, and --listen's server thread, made after, takes that. The
 * containers named on the command line that are there already then count from the start.
 * 0 or -errno, said.
 */
static int run_drop_privileges(struct run *r)
{
	struct name_source_config cfg = name_config(r);
	gid_t groups[4];
	int nr_groups = r->containers ? name_sources__groups(&cfg, groups, 4) : 0;
	int err = privileges_drop(r->command != NULL, groups, nr_groups);

	if (err) {
		fprintf(stderr, "cgstat: cannot drop privileges: %s\n", strerror(-err));
		return err;
	}
	if (r->containers) {
		cfg.settle = privileges_settle;
		r->name_sources = name_sources__start(r->containers, &cfg);
		if (!r->name_sources)
			return -errno;
	}
	err = privileges_settle(false);
	if (err) {
		fprintf(stderr, "cgstat: cannot drop privileges: %s\n", strerror(-err));
		return err;
	}
	err = r->listener ? listener__serve(r->listener, r->metrics) : 0;
	if (err) {
		fprintf(stderr, "cgstat: --listen %s:%s: %s\n", r->opts.listen_addr,
			r->opts.listen_port, strerror(-err));
		return err;
	}
	if (r->watched.nr)
		slots__follow(r->slots);
	return 0;
}

static void run_free(struct run *r)
{
	/* first: their threads write into the names the slots read */
	name_sources__stop(r->name_sources);
	drain__free(r->drain);
	hash_table_visit(&r->said.pools_full, said_cgroup_free, NULL);
	hash_table_fini(&r->said.pools_full);
	bpf_programs__free(r->programs);
	collector__close(r->collector);
	if (r->bpf_stats_fd >= 0)
		close(r->bpf_stats_fd);
	perf_counters__close(r->events.perf);
	host_sampler__free(r->host);
	cgroupfs__free(r->cgroupfs);
	listener__stop(r->listener);
	metrics__free(r->metrics);
	summary__free(r->summary);
	out_files__close(r->files);
	slots__free(r->slots);
	container_names__free(r->containers);
	watch_list_free(&r->watched);
	command__finish(r->command);
	opts_free(&r->opts);
}

int main(int argc, char **argv)
{
	struct run r = { .bpf_stats_fd = -1 };
	int err, status;

	/* a subcommand, unless "--" comes first: `cgstat -- report` runs a program of that name */
	if (argc > 1 && (!strcmp(argv[1], "compare") || !strcmp(argv[1], "report")))
		return subcommand_main(argc - 1, argv + 1);
	if (stop_signals_block())
		return 1;
	err = opts_parse(&r.opts, argc, argv, stdout, stderr);
	if (err < 0)
		return 2;
	if (err == OPTS_EXIT)
		return 0;
	status = run_prepare(&r);
	if (!status && (run_load(&r) || run_drop_privileges(&r)))
		status = 1;
	if (!status) {
		status = run_loop(&r) ? 1 : 0;
		if (r.command && !status)
			status = run_status(r.command);
	}
	run_free(&r);
	return status;
}
