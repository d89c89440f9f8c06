// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgstat: per-cgroup scheduler statistics from CO-RE BPF. This file wires the modules
 * together: options, cgroup resolution, the collector, the drain, and the outputs.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "collector.h"
#include "drain.h"
#include "opts.h"
#include "out_files.h"
#include "stream.h"
#include "summary.h"

#define NSEC_PER_SEC  1000000000ULL
#define NSEC_PER_MSEC 1000000ULL

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The cgroups of -c and -p, resolved before anything is loaded. */
struct watch_list {
	uint64_t *ids;
	char **labels;
	int nr;
};

static void watch_list_free(struct watch_list *w)
{
	int i;

	for (i = 0; i < w->nr; i++)
		free(w->labels[i]);
	free(w->labels);
	free(w->ids);
}

static int watch_list_resolve(struct watch_list *w, const struct cg_opts *opts,
			      const struct cgroup_mount *mnt)
{
	char path[4096];
	uint64_t id;
	int i, j, err;

	w->ids = calloc(opts->nr_targets, sizeof(*w->ids));
	w->labels = calloc(opts->nr_targets, sizeof(*w->labels));
	if (!w->ids || !w->labels)
		return -ENOMEM;
	for (i = 0; i < opts->nr_targets; i++) {
		const struct cg_target *t = &opts->targets[i];

		if (t->cgroup)
			err = cgroup_resolve(mnt, t->cgroup, path, sizeof(path), &id);
		else
			err = cgroup_of_pid(mnt, "/proc", t->pid, path, sizeof(path), &id);
		if (err) {
			if (t->cgroup)
				fprintf(stderr, "cgstat: cgroup '%s': %s (cgroup v2 is at %s)\n",
					t->cgroup,
					err == -ENOENT	 ? "no such cgroup"
					: err == -EINVAL ? "not under the cgroup v2 mount"
							 : strerror(-err),
					mnt->path);
			else
				fprintf(stderr, "cgstat: pid %d: %s\n", t->pid,
					err == -ESRCH ? "no such process" : strerror(-err));
			return err;
		}
		for (j = 0; j < w->nr; j++) {
			if (w->ids[j] == id) {
				fprintf(stderr, "cgstat: cgroup %s is given twice\n", path);
				return -EINVAL;
			}
		}
		w->labels[w->nr] = strdup(t->name ? t->name : cgroup_label(mnt, path));
		if (!w->labels[w->nr])
			return -ENOMEM;
		w->ids[w->nr++] = id;
	}
	return 0;
}

struct label_ctx {
	const struct watch_list *watched;
	struct cgroup_names *names;
};

static const char *slot_label(void *ctx, uint32_t slot, uint64_t cgid)
{
	struct label_ctx *l = ctx;

	if (l->names)
		return cgroup_names__get(l->names, cgid);
	return slot < (uint32_t)l->watched->nr ? l->watched->labels[slot] : "?";
}

/* Refuse early, with one line, what would otherwise fail deep inside libbpf. */
static int check_can_run(void)
{
	const char *btf = getenv("CGSTAT_BTF_PATH");

	if (geteuid() != 0) {
		fprintf(stderr, "cgstat: must run as root (it loads BPF programs)\n");
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
	return 0;
}

/* Sleep until the monotonic deadline; false when a signal came first. */
static bool sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = deadline_ns / NSEC_PER_SEC,
		.tv_nsec = deadline_ns % NSEC_PER_SEC,
	};

	while (!stop_signal) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (!err)
			return true;
		if (err != EINTR)
			return true;
	}
	return false;
}

static void free_dead_slots(struct collector *c, struct cgroup_names *names,
			    const struct cg_slot_snap *snap, uint32_t nr_slots, bool verbose)
{
	uint32_t slot;
	int err;

	for (slot = 0; slot < nr_slots; slot++) {
		if (!snap[slot].cgid || !snap[slot].dead || snap[slot].tasks > 0)
			continue;
		err = collector__free_slot(c, slot, snap[slot].cgid);
		if (err && verbose)
			fprintf(stderr, "cgstat: cannot free slot %u: %s\n", slot, strerror(-err));
		cgroup_names__forget(names, snap[slot].cgid);
	}
}

struct run {
	const struct cg_opts *opts;
	struct collector *collector;
	struct drain *drain;
	struct out_files *files;
	struct summary *summary;
	struct cgroup_names *names;
	enum cg_format format;
	bool stream_open;
	bool stream_first;
};

/* One interval: snapshot, drain, write everywhere. 0, or -errno when the run must end. */
static int run_interval(struct run *r, uint64_t interval_ns)
{
	const struct cg_slot_snap *snap;
	struct cg_interval iv = {};
	uint32_t nr_slots;
	int err;

	err = collector__snapshot(r->collector, &snap, &nr_slots);
	if (err) {
		fprintf(stderr, "cgstat: snapshot failed: %s\n", strerror(-err));
		return err;
	}
	iv.epoch_ms = clock_ns(CLOCK_REALTIME) / NSEC_PER_MSEC;
	iv.interval_ns = interval_ns;
	iv.dropped_events = collector__dropped_events(r->collector);
	err = drain__interval(r->drain, snap, nr_slots, r->names != NULL, &iv);
	if (err) {
		fprintf(stderr, "cgstat: drain failed: %s\n", strerror(-err));
		return err;
	}

	if (r->stream_open) {
		err = stream__write(stdout, r->format, &iv, r->stream_first);
		r->stream_first = false;
		if (err) {
			/* the reader went away: end the run, keeping the files whole */
			r->stream_open = false;
			if (err != -EPIPE)
				fprintf(stderr, "cgstat: stdout: %s\n", strerror(-err));
			stop_signal = SIGPIPE;
		}
	}
	if (r->files) {
		err = out_files__write(r->files, &iv);
		if (err) {
			fprintf(stderr, "cgstat: %s: %s\n", r->opts->output_dir, strerror(-err));
			return err;
		}
	}
	err = summary__add(r->summary, &iv);
	if (err)
		return err;
	if (r->names)
		free_dead_slots(r->collector, r->names, snap, nr_slots, r->opts->verbose);
	return 0;
}

static int write_summary(struct run *r, uint64_t start_ms, uint64_t end_ms)
{
	char *json;
	int err;

	if (!r->files)
		return 0;
	json = summary__to_json(r->summary, start_ms, end_ms,
				collector__dropped_events(r->collector));
	if (!json)
		return -errno;
	err = out_files__write_summary(r->files, json);
	free(json);
	if (err)
		fprintf(stderr, "cgstat: %s/container-summary.json: %s\n", r->opts->output_dir,
			strerror(-err));
	return err;
}

static int run_loop(struct run *r)
{
	const struct cg_slot_snap *snap;
	uint64_t start_mono, last_mono, deadline, end = 0, now;
	uint64_t start_ms;
	uint32_t nr_slots;
	bool last = false;
	int err;

	err = collector__snapshot(r->collector, &snap, &nr_slots);
	if (err) {
		fprintf(stderr, "cgstat: snapshot failed: %s\n", strerror(-err));
		return err;
	}
	drain__baseline(r->drain, snap, nr_slots);
	start_mono = last_mono = clock_ns(CLOCK_MONOTONIC);
	start_ms = clock_ns(CLOCK_REALTIME) / NSEC_PER_MSEC;
	if (r->opts->duration_ns)
		end = start_mono + r->opts->duration_ns;
	deadline = start_mono;

	while (!last) {
		deadline += r->opts->interval_ns;
		if (end && deadline >= end) {
			deadline = end;
			last = true;
		}
		if (!sleep_until(deadline))
			last = true; /* SIGINT/SIGTERM: drain the partial interval */
		now = clock_ns(CLOCK_MONOTONIC);
		err = run_interval(r, now - last_mono);
		if (err)
			break;
		last_mono = now;
		if (stop_signal)
			last = true;
	}
	if (write_summary(r, start_ms, clock_ns(CLOCK_REALTIME) / NSEC_PER_MSEC) && !err)
		err = -EIO;
	return err;
}

int main(int argc, char **argv)
{
	struct collector_opts copts = {};
	struct cgroup_mount mnt;
	struct watch_list watched = {};
	struct label_ctx labels = {.watched = &watched};
	struct sigaction sa = {.sa_handler = on_stop_signal};
	struct cg_opts opts;
	struct run r = {};
	int err, status = 1;

	err = opts_parse(&opts, argc, argv, stdout, stderr);
	if (err < 0)
		return 2;
	if (err == OPTS_EXIT)
		return 0;
	r.opts = &opts;

	if (check_can_run())
		goto out;
	err = cgroup_find_v2_mount("/proc/self/mountinfo", &mnt);
	if (err) {
		fprintf(stderr, "cgstat: no cgroup v2 mount in /proc/self/mountinfo\n");
		goto out;
	}
	err = watch_list_resolve(&watched, &opts, &mnt);
	if (err) {
		if (err == -EINVAL)
			status = 2;
		goto out;
	}
	if (!watched.nr) {
		labels.names = r.names = cgroup_names__new(&mnt);
		if (!r.names)
			goto out;
	}
	if (opts.output_dir) {
		r.files = out_files__open(opts.output_dir);
		if (!r.files) {
			fprintf(stderr, "cgstat: output folder %s: %s\n", opts.output_dir,
				strerror(errno));
			goto out;
		}
	}
	r.summary = summary__new();
	if (!r.summary)
		goto out;
	summary__set_messages(r.summary, opts.messages);
	r.format = opts.format;
	if (r.format == CG_FORMAT_AUTO)
		r.format = isatty(STDOUT_FILENO) ? CG_FORMAT_TABLE : CG_FORMAT_CSV;
	r.stream_open = !opts.quiet;
	r.stream_first = true;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	copts.all_cgroups = !watched.nr;
	copts.watched = watched.ids;
	copts.nr_watched = watched.nr;
	copts.max_slots = opts.max_cgroups;
	copts.verbose = opts.verbose > 1;
	r.collector = collector__open(&copts);
	if (!r.collector)
		goto out;
	r.drain = drain__new(copts.all_cgroups ? opts.max_cgroups : (uint32_t)watched.nr,
			     slot_label, &labels);
	if (!r.drain)
		goto out;
	if (opts.verbose)
		fprintf(stderr, "cgstat: attached, watching %s\n",
			watched.nr ? "the given cgroups" : "every cgroup");

	status = run_loop(&r) ? 1 : 0;
out:
	drain__free(r.drain);
	collector__close(r.collector);
	summary__free(r.summary);
	out_files__close(r.files);
	cgroup_names__free(r.names);
	watch_list_free(&watched);
	opts_free(&opts);
	return status;
}
