/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command line: parsed and checked before anything is loaded. No libbpf here. */
#ifndef CGSTAT_OPTS_H
#define CGSTAT_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "outputs/stream.h"
#include "sources/watch.h"

struct cg_opts {
	struct cg_target *targets;
	int nr_targets;
	uint64_t interval_ns;  /* -i, at least 0.1 s */
	uint64_t duration_ns;  /* -d, 0: until SIGINT/SIGTERM */
	char *output_dir;      /* -o, or NULL */
	enum cg_format format; /* -f */
	bool quiet;	       /* -q: no stdout stream */
	int verbose;	       /* -v, repeatable */
	char *events;	       /* -e, perf event list, or NULL for the default list */
	bool no_perf;	       /* --no-perf */
	double messages;       /* --messages N, the work the test did; < 0 when not given */
	uint32_t max_cgroups;  /* --max-cgroups: slots for the all-cgroups mode */
	char **command;	       /* the operands: CMD and its arguments (in argv), or NULL */
	char *command_label;   /* -n, or CMD's base name: the label of CMD's cgroup */
	char *listen_addr;     /* --listen: numeric IPv4 or IPv6 address, or NULL: no endpoint */
	char *listen_port;     /* --listen: decimal port, 1 to 65535 */
	/* --threads[=N]: 0 off, else break watched cgroups down by pool (N: busiest threads) */
	uint32_t threads;
	bool pool_exact; /* --pool-by comm: a pool is a thread name, digits and all */
	bool pool_by_given;
	bool no_names;	    /* --no-names: no runtime is asked for containers' names */
	char *kubelet_logs; /* --kubelet-logs DIR, or NULL: /var/log */
	bool bpf_stats;	    /* --bpf-stats: the BPF programs' runs and run time */
	bool light;	    /* --light: a sweep of each task's counters, no scheduler events */
};

/* N of --threads without a value */
#define OPTS_DEFAULT_THREADS 10

enum {
	OPTS_RUN = 0,  /* go on and run */
	OPTS_EXIT = 1, /* --help or --version was printed: exit 0 */
};

/*
 * Parse argv into opts. Returns OPTS_RUN or OPTS_EXIT, or -EINVAL after printing one line
 * naming the problem to err (the caller exits 2). Help and version go to out.
 */
int opts_parse(struct cg_opts *opts, int argc, char **argv, FILE *out, FILE *err);
void opts_free(struct cg_opts *opts);

/* Watch the command's cgroup, at path, under its label: 0 or -ENOMEM. */
int opts_watch_command(struct cg_opts *opts, const char *path);

/* "1", "0.25", "1.5e0": seconds as a positive finite number; 0 or -EINVAL. */
int opts_parse_seconds(const char *text, uint64_t *ns);

/*
 * "[NAME=]VALUE" of -c and -p. VALUE starting with '/' is taken whole (a path may hold '=').
 * For -p, VALUE must be a positive pid. 0 or -EINVAL; on success t owns copies of the strings.
 */
int opts_parse_target(const char *arg, bool is_pid, struct cg_target *t);

/*
 * --listen's "[ADDR:]PORT": PORT alone is 127.0.0.1:PORT; ADDR a numeric IPv4 address, or an
 * IPv6 one in brackets ("[::1]:9477"). Only its shape is checked here (the address by
 * inet_pton); binding says the rest. 0 or -EINVAL; on success *addr and *port are malloc'd.
 */
int opts_parse_listen(const char *arg, char **addr, char **port);

#endif /* CGSTAT_OPTS_H */
