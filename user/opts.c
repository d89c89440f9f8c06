// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Command line parsing. Every value is checked here, before anything is loaded, so that a typo
 * costs one line on stderr instead of a half-started run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/message.h"
#include "opts.h"
#include "lib/util.h"

#ifndef CGSTAT_VERSION
#define CGSTAT_VERSION "0.1.0"
#endif

#define MIN_INTERVAL_NS	    (NSEC_PER_SEC / 10)
#define DEFAULT_MAX_CGROUPS 1024
#define LIMIT_MAX_CGROUPS   1000000
#define LIMIT_THREADS	    100000

/* Long-only options take values above any char, so they never collide with a short one. */
enum {
	OPT_NO_PERF = 256,
	OPT_MESSAGES,
	OPT_MAX_CGROUPS,
	OPT_LISTEN,
	OPT_THREADS,
	OPT_POOL_BY,
	OPT_NO_NAMES,
	OPT_KUBELET_LOGS,
	OPT_BPF_STATS,
	OPT_LIGHT,
};

/* The ':' after it makes getopt silent and report a missing argument as ':'. */
/* The leading '+' stops at the first operand: what follows is the command and its own options. */
static const char short_options[] = "+:c:p:n:i:d:o:f:e:qvhV";

static const struct option long_options[] = {
	{ "cgroup", required_argument, NULL, 'c' },
	{ "pid", required_argument, NULL, 'p' },
	{ "name", required_argument, NULL, 'n' },
	{ "interval", required_argument, NULL, 'i' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output-dir", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "events", required_argument, NULL, 'e' },
	{ "no-perf", no_argument, NULL, OPT_NO_PERF },
	{ "messages", required_argument, NULL, OPT_MESSAGES },
	{ "max-cgroups", required_argument, NULL, OPT_MAX_CGROUPS },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "threads", optional_argument, NULL, OPT_THREADS },
	{ "pool-by", required_argument, NULL, OPT_POOL_BY },
	{ "no-names", no_argument, NULL, OPT_NO_NAMES },
	{ "kubelet-logs", required_argument, NULL, OPT_KUBELET_LOGS },
	{ "bpf-stats", no_argument, NULL, OPT_BPF_STATS },
	{ "light", no_argument, NULL, OPT_LIGHT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{},
};

static const char usage_text[] =
	"Usage: cgstat [OPTION]... [--] [CMD [ARG]...]\n"
	"       cgstat compare [--format text|csv|json|md] DIR... vs DIR...\n"
	"       cgstat report DIR\n"
	"Per-cgroup scheduler statistics from eBPF: time on CPU, waiting to run, sleeping and\n"
	"blocked, context switches, migrations and perf counters, reported every interval.\n"
	"With CMD, it runs in a cgroup of its own, which is watched; the run ends when the cgroup\n"
	"is empty, and cgstat exits with CMD's status. Without -c, -p or CMD every cgroup is\n"
	"watched.\n"
	"\n"
	"  -c, --cgroup [NAME=]CGROUP    watch a cgroup (path or id), labelled NAME; repeatable\n"
	"  -p, --pid [NAME=]PID          watch the cgroup of process PID; repeatable\n"
	"  -n, --name NAME               label of CMD's cgroup (default: CMD's base name)\n"
	"  -i, --interval SECONDS        time between reports, at least 0.1 (default 1)\n"
	"  -d, --duration SECONDS        stop after this long (default: at SIGINT or SIGTERM)\n"
	"  -o, --output-dir DIR          write the files listed below into DIR\n"
	"  -f, --format live|table|csv|json\n"
	"                                stdout format (default: live on a terminal, else csv)\n"
	"  -e, --events LIST             perf events to count, comma-separated\n"
	"      --no-perf                 count no perf events\n"
	"      --messages N              work done during the run, for per-message costs\n"
	"      --max-cgroups N           most cgroups watched without -c or -p (default 1024)\n"
	"      --listen [ADDR:]PORT      serve Prometheus metrics on http://ADDR:PORT/metrics\n"
	"                                (ADDR default 127.0.0.1; [::1]:PORT for IPv6)\n"
	"      --threads[=N]             break cgroups down into thread pools\n"
	"      --pool-by pattern|comm    a pool: a thread name with digits as N (default), or\n"
	"                                the name itself\n"
	"      --no-names                label containers by their ids, asking no runtime\n"
	"      --kubelet-logs DIR        the kubelet's pods/ and containers/ logs, for pod\n"
	"                                names (default /var/log)\n"
	"      --bpf-stats               count cgstat's BPF programs' runs and run time, said\n"
	"                                at exit (the counting adds to every run)\n"
	"      --light                   nothing on the workload's switches: each interval, read\n"
	"                                every task's own counters (fewer figures: see the man\n"
	"                                page); no perf counters, no --threads\n"
	"  -q, --quiet                   write nothing to stdout\n"
	"  -v, --verbose                 more diagnostics on stderr; repeatable\n"
	"  -h, --help                    print this help and exit\n"
	"  -V, --version                 print the version and exit\n"
	"\n"
	"Files written with -o:\n"
	"  container-stats.csv     per cgroup and interval: CPU cores used, switches per second\n"
	"  sched-stats.csv         per cgroup and interval: on-CPU, run-queue, sleep and blocked\n"
	"                          time, switches, migrations, run-queue waits and quantiles\n"
	"  perf-stat.csv           per cgroup and interval: perf counters\n"
	"  cgroup-stats.csv        per cgroup and interval: CPU throttling, pressure stall times\n"
	"  pool-stats.csv          with --threads, per thread pool and interval: time, switches\n"
	"  thread-stats.csv        with --threads=N, the N busiest threads of each interval\n"
	"  host-io.csv             per interval: host CPU busy and iowait, disk throughput\n"
	"  container-summary.json  per cgroup: averages and rates over the whole run\n"
	"\n"
	"compare: the runs in the output folders before \"vs\" against those after, per\n"
	"container and figure of their summaries: medians, 95 % intervals, the change and\n"
	"the Mann-Whitney U test's p (a change shows only where p < 0.05, else ~).\n"
	"report: DIR/report.md (the run's tables) and DIR/report.html (its figures plotted).\n";

/*
 * Prints "cgstat: " BEFORE 'VALUE' AFTER as one line. Control bytes in VALUE are escaped, so
 * a label holding a newline cannot split the message.
 */
static int fail(FILE *err, const char *before, const char *value, const char *after)
{
	fprintf(err, "cgstat: %s", before);
	if (value)
		message_quote(err, value);
	fprintf(err, "%s\n", after);
	return -EINVAL;
}

/* "--interval" for 'i': getopt reports problems by the option's value, not by its spelling. */
static bool option_name(int val, char *name, size_t size)
{
	for (const struct option *o = long_options; o->name; o++) {
		if (o->val == val) {
			snprintf(name, size, "--%s", o->name);
			return true;
		}
	}
	return false;
}

/*
 * '?' from getopt: an unknown short option (optopt is the char), an unknown or ambiguous long
 * one (optopt is 0 and optind has moved past it), or "--name=value" for an option that takes
 * no value (optopt is that option's value).
 */
static int fail_unknown(FILE *err, char **argv)
{
	char name[64];

	if (option_name(optopt, name, sizeof(name)))
		return fail(err, "option ", name, " takes no argument");
	if (optopt) {
		snprintf(name, sizeof(name), "-%c", optopt);
		return fail(err, "unknown option ", name, "");
	}
	return fail(err, "unknown or ambiguous option ", argv[optind - 1], "");
}

static int fail_missing(FILE *err)
{
	char name[64];

	if (!option_name(optopt, name, sizeof(name)))
		snprintf(name, sizeof(name), "-%c", optopt);
	return fail(err, "option ", name, " needs an argument");
}

static int parse_decimal(const char *text, uint64_t max, uint64_t *value)
{
	uint64_t v = 0;

	if (!*text)
		return -EINVAL;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*value = v;
	return 0;
}

/* strtod() alone would accept leading blanks and trailing junk, and say nothing about NaN. */
static int parse_positive(const char *text, double *value)
{
	char *end;
	double v;

	if (!*text || *text == ' ' || (*text >= '\t' && *text <= '\r'))
		return -EINVAL;
	errno = 0;
	v = strtod(text, &end);
	if (*end || errno == ERANGE || !isfinite(v) || !(v > 0))
		return -EINVAL;
	*value = v;
	return 0;
}

int opts_parse_seconds(const char *text, uint64_t *ns)
{
	double seconds, scaled;
	uint64_t rounded;

	if (parse_positive(text, &seconds))
		return -EINVAL;
	scaled = seconds * (double)NSEC_PER_SEC;
	/* 2^64 itself: anything not below it does not fit, and rounding cannot carry past it. */
	if (!(scaled < 18446744073709551616.0))
		return -EINVAL;
	rounded = (uint64_t)(scaled + 0.5);
	if (!rounded)
		return -EINVAL;
	*ns = rounded;
	return 0;
}

/* opts_parse_target() with the reason for a refusal, for the error line. */
static int parse_target(const char *arg, bool is_pid, struct cg_target *t, const char **why)
{
	const char *eq = arg[0] == '/' ? NULL : strchr(arg, '=');
	const char *value = eq ? eq + 1 : arg;
	struct cg_target parsed = {};
	uint64_t pid;
	int ret = -EINVAL;

	if (eq == arg) {
		*why = " has an empty NAME";
		goto out;
	}
	if (!*value) {
		*why = is_pid ? " has no PID" : " has no CGROUP";
		goto out;
	}
	if (is_pid && (parse_decimal(value, INT_MAX, &pid) || !pid)) {
		*why = " is not a process id (1 to 2147483647)";
		goto out;
	}
	if (!is_pid) {
		ret = watch_target_parse(value, &parsed, why);
		if (ret < 0)
			goto out;
	}
	ret = -ENOMEM;
	*why = ": out of memory";
	if (is_pid) {
		parsed.pid = (int)pid;
		parsed.kind = CG_TARGET_PID;
	} else if (!parsed.select) {
		parsed.cgroup = strdup(value);
		if (!parsed.cgroup)
			goto out;
	}
	if (eq) {
		parsed.name = strndup(arg, (size_t)(eq - arg));
		if (!parsed.name)
			goto out;
	}
	*t = parsed;
	return 0;
out:
	free(parsed.cgroup);
	free(parsed.select);
	return ret;
}

int opts_parse_target(const char *arg, bool is_pid, struct cg_target *t)
{
	const char *why;

	return parse_target(arg, is_pid, t, &why);
}

static int add_target(struct cg_opts *opts, const char *arg, bool is_pid, FILE *err)
{
	const char *option = is_pid ? "--pid: " : "--cgroup: ";
	struct cg_target *targets;
	const char *why;
	int ret;

	targets = realloc(opts->targets, (size_t)(opts->nr_targets + 1) * sizeof(*targets));
	if (!targets) {
		fail(err, "out of memory", NULL, "");
		return -ENOMEM;
	}
	opts->targets = targets;
	ret = parse_target(arg, is_pid, &targets[opts->nr_targets], &why);
	if (ret) {
		fail(err, option, arg, why);
		return ret;
	}
	opts->nr_targets++;
	return 0;
}

/* Labels name the rows of every output, so two targets under one label would merge. */
static int check_labels(const struct cg_opts *opts, FILE *err)
{
	for (int i = 0; i < opts->nr_targets; i++) {
		const char *name = opts->targets[i].name;

		if (name && opts->command_label && !strcmp(name, opts->command_label))
			return fail(err, "label ", name,
				    " is given to a target and to the command");
		for (int j = 0; j < i; j++) {
			const char *a = opts->targets[i].name, *b = opts->targets[j].name;

			if (a && b && !strcmp(a, b))
				return fail(err, "label ", a, " is given to two targets");
		}
	}
	return 0;
}

static int set_string(char **dst, const char *option, const char *arg, FILE *err)
{
	char *copy;

	if (!*arg)
		return fail(err, option, NULL, ": the value is empty");
	copy = strdup(arg);
	if (!copy) {
		fail(err, "out of memory", NULL, "");
		return -ENOMEM;
	}
	free(*dst);
	*dst = copy;
	return 0;
}

static int parse_format(const char *arg, enum cg_format *format, FILE *err)
{
	static const char *const names[NR_CG_FORMATS] = {
		[CG_FORMAT_TABLE] = "table",
		[CG_FORMAT_CSV] = "csv",
		[CG_FORMAT_JSON] = "json",
		[CG_FORMAT_LIVE] = "live",
	};

	for (size_t i = CG_FORMAT_TABLE; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i])) {
			*format = (enum cg_format)i;
			return 0;
		}
	}
	return fail(err, "--format: ", arg, " is not one of live, table, csv, json");
}

static int parse_option(struct cg_opts *opts, int c, char **argv, FILE *out, FILE *err)
{
	uint64_t value;

	switch (c) {
	case 'c':
	case 'p':
		return add_target(opts, optarg, c == 'p', err);
	case 'i':
		if (opts_parse_seconds(optarg, &opts->interval_ns))
			return fail(err, "--interval: ", optarg,
				    " is not a positive number of seconds");
		if (opts->interval_ns < MIN_INTERVAL_NS)
			return fail(err, "--interval: ", optarg,
				    " is below the minimum of 0.1 seconds");
		return 0;
	case 'd':
		if (opts_parse_seconds(optarg, &opts->duration_ns))
			return fail(err, "--duration: ", optarg,
				    " is not a positive number of seconds");
		return 0;
	case 'n':
		return set_string(&opts->command_label, "--name", optarg, err);
	case 'o':
		return set_string(&opts->output_dir, "--output-dir", optarg, err);
	case 'f':
		return parse_format(optarg, &opts->format, err);
	case 'e':
		return set_string(&opts->events, "--events", optarg, err);
	case OPT_NO_PERF:
		opts->no_perf = true;
		return 0;
	case OPT_MESSAGES:
		if (parse_positive(optarg, &opts->messages))
			return fail(err, "--messages: ", optarg, " is not a positive number");
		return 0;
	case OPT_MAX_CGROUPS:
		if (parse_decimal(optarg, LIMIT_MAX_CGROUPS, &value) || !value)
			return fail(err, "--max-cgroups: ", optarg,
				    " is not between 1 and 1000000");
		opts->max_cgroups = (uint32_t)value;
		return 0;
	case OPT_LISTEN:
		free(opts->listen_addr);
		free(opts->listen_port);
		opts->listen_addr = opts->listen_port = NULL;
		if (opts_parse_listen(optarg, &opts->listen_addr, &opts->listen_port))
			return fail(err, "--listen: ", optarg,
				    " is not [ADDR:]PORT (a numeric address, a port 1-65535)");
		return 0;
	case OPT_THREADS:
		opts->threads = OPTS_DEFAULT_THREADS;
		if (optarg && (parse_decimal(optarg, LIMIT_THREADS, &value) || !value))
			return fail(err, "--threads: ", optarg, " is not between 1 and 100000");
		if (optarg)
			opts->threads = (uint32_t)value;
		return 0;
	case OPT_POOL_BY:
		if (strcmp(optarg, "comm") && strcmp(optarg, "pattern"))
			return fail(err, "--pool-by: ", optarg, " is not one of pattern, comm");
		opts->pool_exact = !strcmp(optarg, "comm");
		opts->pool_by_given = true;
		return 0;
	case OPT_NO_NAMES:
		opts->no_names = true;
		return 0;
	case OPT_KUBELET_LOGS:
		return set_string(&opts->kubelet_logs, "--kubelet-logs", optarg, err);
	case OPT_BPF_STATS:
		opts->bpf_stats = true;
		return 0;
	case OPT_LIGHT:
		opts->light = true;
		return 0;
	case 'q':
		opts->quiet = true;
		return 0;
	case 'v':
		opts->verbose++;
		return 0;
	case 'h':
		fputs(usage_text, out);
		return OPTS_EXIT;
	case 'V':
		fputs("cgstat " CGSTAT_VERSION "\n", out);
		return OPTS_EXIT;
	case ':':
		return fail_missing(err);
	default:
		return fail_unknown(err, argv);
	}
}

/*
 * The operands are the command. A run with one lasts as long as the command, so --duration
 * does not go with it (`timeout` in front of the command does).
 */
static int take_command(struct cg_opts *opts, int argc, char **argv, FILE *err)
{
	const char *base;

	if (optind >= argc) {
		if (opts->command_label)
			return fail(err, "--name labels a command, and none is given", NULL, "");
		return 0;
	}
	if (opts->duration_ns)
		return fail(err, "--duration and a command exclude each other (the run lasts ",
			    NULL, "as long as the command; put `timeout` in front of it)");
	if (!*argv[optind])
		return fail(err, "the command is empty", NULL, "");
	opts->command = &argv[optind];
	if (!opts->command_label) {
		base = strrchr(argv[optind], '/');
		base = base && base[1] ? base + 1 : argv[optind];
		opts->command_label = strdup(base);
		if (!opts->command_label) {
			fail(err, "out of memory", NULL, "");
			return -ENOMEM;
		}
	}
	return 0;
}

int opts_parse(struct cg_opts *opts, int argc, char **argv, FILE *out, FILE *err)
{
	int ret = OPTS_RUN;
	int c;

	*opts = (struct cg_opts){
		.interval_ns = NSEC_PER_SEC,
		.format = CG_FORMAT_AUTO,
		.messages = -1,
		.max_cgroups = DEFAULT_MAX_CGROUPS,
	};
	/* glibc only starts afresh (permutation state included) when optind is 0. */
#ifdef __GLIBC__
	optind = 0;
#else
	optind = 1;
#endif
	while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		ret = parse_option(opts, c, argv, out, err);
		if (ret)
			goto out;
	}
	ret = take_command(opts, argc, argv, err);
	if (ret)
		goto out;
	if (opts->events && opts->no_perf)
		ret = fail(err, "--events and --no-perf exclude each other", NULL, "");
	else if (opts->light && opts->threads)
		ret = fail(err,
			   "--light counts no thread by interval: --threads needs the switches",
			   NULL, "");
	else if (opts->light && opts->events)
		ret = fail(err, "--light counts no perf events: they are read at the switches",
			   NULL, "");
	else if (opts->pool_by_given && !opts->threads)
		ret = fail(err, "--pool-by says how --threads makes pools: give --threads", NULL,
			   "");
	else
		ret = check_labels(opts, err);
	for (int i = 0; !ret && opts->no_names && i < opts->nr_targets; i++)
		if (opts->targets[i].select && opts->targets[i].kind != CG_TARGET_UNIT)
			ret = fail(err, "--no-names: ", NULL,
				   "a container or a pod is named by the runtime's names");
out:
	if (ret != OPTS_RUN)
		opts_free(opts);
	return ret;
}

int opts_watch_command(struct cg_opts *opts, const char *path)
{
	struct cg_target *targets, *t;

	targets = realloc(opts->targets, (size_t)(opts->nr_targets + 1) * sizeof(*targets));
	if (!targets)
		return -ENOMEM;
	opts->targets = targets;
	t = &targets[opts->nr_targets];
	*t = (struct cg_target){ .name = strdup(opts->command_label), .cgroup = strdup(path) };
	if (!t->name || !t->cgroup) {
		free(t->name);
		free(t->cgroup);
		return -ENOMEM;
	}
	opts->nr_targets++;
	return 0;
}

int opts_parse_listen(const char *arg, char **addr, char **port)
{
	const char *colon = strrchr(arg, ':'), *p = colon ? colon + 1 : arg;
	unsigned char buf[sizeof(struct in6_addr)];
	char host[INET6_ADDRSTRLEN + 2] = "127.0.0.1", number[8];
	size_t len = colon ? (size_t)(colon - arg) : 0;
	uint64_t value;

	if (parse_decimal(p, 65535, &value) || !value)
		return -EINVAL;
	if (colon) {
		if (len && arg[0] == '[' && arg[len - 1] == ']') {
			arg++; /* [v6]:port */
			len -= 2;
		} else if (memchr(arg, ':', len)) {
			return -EINVAL; /* v6 without brackets: where the port begins is unclear */
		}
		if (!len || len >= sizeof(host))
			return -EINVAL;
		memcpy(host, arg, len);
		host[len] = '\0';
		if (inet_pton(AF_INET, host, buf) != 1 && inet_pton(AF_INET6, host, buf) != 1)
			return -EINVAL;
	}
	/* the port as a number says it: "000009477" cut to five characters was port 0, any port */
	snprintf(number, sizeof(number), "%u", (unsigned int)value);
	*addr = strdup(host);
	*port = strdup(number);
	if (!*addr || !*port) {
		free(*addr);
		free(*port);
		*addr = *port = NULL;
		return -ENOMEM;
	}
	return 0;
}

void opts_free(struct cg_opts *opts)
{
	for (int i = 0; i < opts->nr_targets; i++) {
		free(opts->targets[i].name);
		free(opts->targets[i].cgroup);
		free(opts->targets[i].select);
	}
	free(opts->targets);
	free(opts->output_dir);
	free(opts->events);
	free(opts->kubelet_logs);
	free(opts->command_label);
	free(opts->listen_addr);
	free(opts->listen_port);
	*opts = (struct cg_opts){};
}
