// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * opts.c: every option's accepted and refused values. All cases run in one process, which
 * also shows that opts_parse() starts getopt afresh on each call.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "opts.h"

/* The build passes the project's version; alone, opts.c falls back to this one. */
#ifndef CGSTAT_VERSION
#define CGSTAT_VERSION "0.1.0"
#endif

#define MAX_ARGS 32

struct result {
	int ret;
	struct cg_opts opts;
	char *out;
	char *err;
};

/*
 * Runs opts_parse() on "cgstat" followed by the NULL-terminated args, capturing out and err.
 * argv is static: opts.command points into it, as into main()'s.
 */
static struct result parse_args(const char *const *args)
{
	static char *argv[MAX_ARGS + 2];
	struct result r = {};
	size_t out_len, err_len;
	FILE *out, *err;
	int argc = 0;

	argv[argc++] = "cgstat";
	while (*args && argc <= MAX_ARGS)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	out = open_memstream(&r.out, &out_len);
	err = open_memstream(&r.err, &err_len);
	if (!out || !err) {
		perror("open_memstream");
		exit(2);
	}
	r.ret = opts_parse(&r.opts, argc, argv, out, err);
	fclose(out);
	fclose(err);
	return r;
}

#define PARSE(...) parse_args((const char *const[]){ __VA_ARGS__, NULL })

static void result_free(struct result *r)
{
	opts_free(&r->opts);
	free(r->out);
	free(r->err);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* -EINVAL, nothing on out, and one line on err that starts "cgstat: " and holds needle. */
static bool refused(struct result r, const char *needle)
{
	bool ok = r.ret == -EINVAL && !*r.out && count_lines(r.err) == 1 &&
		  !strncmp(r.err, "cgstat: ", 8) && strstr(r.err, needle) &&
		  r.err[strlen(r.err) - 1] == '\n' && !r.opts.targets && !r.opts.nr_targets;

	if (!ok)
		fprintf(stderr, "ret %d, err: %s", r.ret, r.err);
	result_free(&r);
	return ok;
}

static void test_defaults(void)
{
	struct result r = parse_args((const char *const[]){ NULL });

	CHECK(r.ret == OPTS_RUN);
	CHECK(r.opts.nr_targets == 0 && r.opts.targets == NULL);
	CHECK(r.opts.interval_ns == 1000000000ULL);
	CHECK(r.opts.duration_ns == 0);
	CHECK(r.opts.output_dir == NULL);
	CHECK(r.opts.format == CG_FORMAT_AUTO);
	CHECK(!r.opts.quiet);
	CHECK(r.opts.verbose == 0);
	CHECK(r.opts.events == NULL);
	CHECK(!r.opts.no_perf);
	CHECK(!r.opts.bpf_stats);
	CHECK(r.opts.messages < 0);
	CHECK(r.opts.max_cgroups == 1024);
	CHECK_STR(r.out, "");
	CHECK_STR(r.err, "");
	result_free(&r);
}

static void test_every_option(void)
{
	struct result r;

	r = PARSE("-c", "web=/sys/fs/cgroup/web", "--cgroup", "system.slice", "-p", "42",
		  "--pid=db=4194304", "-i", "0.25", "--duration", "1.5e1", "-o", "/tmp/out", "-f",
		  "json", "-e", "cycles,instructions", "--messages", "250000", "--max-cgroups",
		  "1000000", "-q", "-v", "--verbose", "-v");
	CHECK(r.ret == OPTS_RUN);
	CHECK(r.opts.nr_targets == 4);
	if (r.opts.nr_targets == 4) {
		CHECK_STR(r.opts.targets[0].name, "web");
		CHECK_STR(r.opts.targets[0].cgroup, "/sys/fs/cgroup/web");
		CHECK(r.opts.targets[0].pid == 0);
		CHECK(r.opts.targets[1].name == NULL);
		CHECK_STR(r.opts.targets[1].cgroup, "system.slice");
		CHECK(r.opts.targets[2].name == NULL && r.opts.targets[2].cgroup == NULL);
		CHECK(r.opts.targets[2].pid == 42);
		CHECK_STR(r.opts.targets[3].name, "db");
		CHECK(r.opts.targets[3].cgroup == NULL && r.opts.targets[3].pid == 4194304);
	}
	CHECK(r.opts.interval_ns == 250000000ULL);
	CHECK(r.opts.duration_ns == 15000000000ULL);
	CHECK_STR(r.opts.output_dir, "/tmp/out");
	CHECK(r.opts.format == CG_FORMAT_JSON);
	CHECK_STR(r.opts.events, "cycles,instructions");
	CHECK(r.opts.messages == 250000.0);
	CHECK(r.opts.max_cgroups == 1000000);
	CHECK(r.opts.quiet);
	CHECK(r.opts.verbose == 3);
	CHECK_STR(r.err, "");
	opts_free(&r.opts);
	CHECK(r.opts.targets == NULL && r.opts.nr_targets == 0 && r.opts.events == NULL &&
	      r.opts.output_dir == NULL && r.opts.interval_ns == 0);
	result_free(&r);

	r = PARSE("--no-perf", "--format", "table", "--max-cgroups", "1", "--messages", "0.5",
		  "--interval=2", "--output-dir=out dir", "--bpf-stats");
	CHECK(r.ret == OPTS_RUN);
	CHECK(r.opts.no_perf);
	CHECK(r.opts.bpf_stats);
	CHECK(r.opts.format == CG_FORMAT_TABLE);
	CHECK(r.opts.max_cgroups == 1);
	CHECK(r.opts.messages == 0.5);
	CHECK(r.opts.interval_ns == 2000000000ULL);
	CHECK_STR(r.opts.output_dir, "out dir");
	result_free(&r);

	/* The last of a repeated single-valued option wins. */
	r = PARSE("-fcsv", "-i", "3", "-i", "0.5", "-o", "a", "-o", "b");
	CHECK(r.ret == OPTS_RUN);
	CHECK(r.opts.format == CG_FORMAT_CSV);
	CHECK(r.opts.interval_ns == 500000000ULL);
	CHECK_STR(r.opts.output_dir, "b");
	result_free(&r);

	/* Short options cluster. */
	r = PARSE("-qvvi0.1");
	CHECK(r.ret == OPTS_RUN);
	CHECK(r.opts.quiet && r.opts.verbose == 2 && r.opts.interval_ns == 100000000ULL);
	result_free(&r);
}

static void test_interval_and_duration(void)
{
	struct result r;

	r = PARSE("-i", "0.1");
	CHECK(r.ret == OPTS_RUN && r.opts.interval_ns == 100000000ULL);
	result_free(&r);

	r = PARSE("-d", "0.05");
	CHECK(r.ret == OPTS_RUN && r.opts.duration_ns == 50000000ULL);
	result_free(&r);

	CHECK(refused(PARSE("-i", "0.05"),
		      "cgstat: --interval: '0.05' is below the minimum of 0.1 seconds"));
	CHECK(refused(PARSE("-i", "abc"), "'abc'"));
	CHECK(refused(PARSE("--interval", "0"), "--interval"));
	CHECK(refused(PARSE("-d", "0"), "--duration: '0'"));
	CHECK(refused(PARSE("-d", "-1"), "--duration: '-1'"));
	CHECK(refused(PARSE("-d", "1s"), "'1s'"));
}

static void test_seconds(void)
{
	uint64_t ns = 7;

	CHECK(opts_parse_seconds("1", &ns) == 0 && ns == 1000000000ULL);
	CHECK(opts_parse_seconds("0.25", &ns) == 0 && ns == 250000000ULL);
	CHECK(opts_parse_seconds("1.5e0", &ns) == 0 && ns == 1500000000ULL);
	CHECK(opts_parse_seconds("0.000000001", &ns) == 0 && ns == 1);
	/* 2^32 s is 2^41 * 5^9 ns, exact in a double. */
	CHECK(opts_parse_seconds("4294967296", &ns) == 0 && ns == 4294967296000000000ULL);
	/*
	 * 2^64 ns is 18446744073.709551616 s, so 18446744073 s is the largest whole second that
	 * fits; doubles there are 2048 apart.
	 */
	CHECK(opts_parse_seconds("18446744073", &ns) == 0);
	CHECK(ns >= 18446744073000000000ULL - 2048 && ns <= 18446744073000000000ULL + 2048);
	ns = 7;
	CHECK(opts_parse_seconds("18446744074", &ns) == -EINVAL);
	CHECK(opts_parse_seconds("1e300", &ns) == -EINVAL);
	CHECK(opts_parse_seconds("", &ns) == -EINVAL);
	CHECK(opts_parse_seconds("1x", &ns) == -EINVAL);
	CHECK(opts_parse_seconds("nan", &ns) == -EINVAL);
	CHECK(opts_parse_seconds("inf", &ns) == -EINVAL);
	CHECK(opts_parse_seconds("-1", &ns) == -EINVAL);
	CHECK(opts_parse_seconds("0", &ns) == -EINVAL);
	CHECK(opts_parse_seconds(" 1", &ns) == -EINVAL);
	CHECK(opts_parse_seconds("1e-12", &ns) == -EINVAL);
	CHECK(ns == 7);
}

static void test_target(void)
{
	struct cg_target t = {};

	CHECK(opts_parse_target("web=a/b", false, &t) == 0);
	CHECK_STR(t.name, "web");
	CHECK_STR(t.cgroup, "a/b");
	CHECK(t.pid == 0);
	free(t.name);
	free(t.cgroup);

	/* Only the first '=' splits; the label may hold anything but NUL. */
	t = (struct cg_target){};
	CHECK(opts_parse_target("a,\"b\"\nc=x=y", false, &t) == 0);
	CHECK_STR(t.name, "a,\"b\"\nc");
	CHECK_STR(t.cgroup, "x=y");
	free(t.name);
	free(t.cgroup);

	t = (struct cg_target){};
	CHECK(opts_parse_target("/abs/with=eq", false, &t) == 0);
	CHECK(t.name == NULL);
	CHECK_STR(t.cgroup, "/abs/with=eq");
	free(t.cgroup);

	t = (struct cg_target){};
	CHECK(opts_parse_target("db=2147483647", true, &t) == 0);
	CHECK_STR(t.name, "db");
	CHECK(t.cgroup == NULL && t.pid == 2147483647);
	free(t.name);

	t = (struct cg_target){};
	CHECK(opts_parse_target("=x", false, &t) == -EINVAL);
	CHECK(opts_parse_target("x=", false, &t) == -EINVAL);
	CHECK(opts_parse_target("", false, &t) == -EINVAL);
	CHECK(opts_parse_target("0", true, &t) == -EINVAL);
	CHECK(opts_parse_target("2147483648", true, &t) == -EINVAL);
	CHECK(opts_parse_target("-5", true, &t) == -EINVAL);
	CHECK(opts_parse_target("/1", true, &t) == -EINVAL);
	CHECK(t.name == NULL && t.cgroup == NULL && t.pid == 0);
}

/* -c by a container's, a pod's or a unit's name, with and without a label; bad forms refused. */
static void test_name_targets(void)
{
	static const struct {
		const char *arg;
		enum cg_target_kind kind;
		const char *name, *select;
	} good[] = {
		{ "docker:broker", CG_TARGET_DOCKER, NULL, "broker" },
		{ "b=docker:pulsar-broker_1.x", CG_TARGET_DOCKER, "b", "pulsar-broker_1.x" },
		{ "compose:bookie", CG_TARGET_COMPOSE, NULL, "bookie" },
		{ "compose:pulsar/bookie", CG_TARGET_COMPOSE, NULL, "pulsar/bookie" },
		{ "pod:pulsar/broker-0", CG_TARGET_POD, NULL, "pulsar/broker-0" },
		{ "pod:pulsar/broker-0/broker", CG_TARGET_POD, NULL, "pulsar/broker-0/broker" },
		{ "unit:cron.service", CG_TARGET_UNIT, NULL, "cron.service" },
		{ "unit:user@1000.service", CG_TARGET_UNIT, NULL, "user@1000.service" },
		/* a path holding ':' is a path: its part before ':' is not a prefix's */
		{ "system.slice/a:b.service", CG_TARGET_CGROUP, NULL, NULL },
		{ "/docker:x", CG_TARGET_CGROUP, NULL, NULL },
	};
	static const char *const bad[] = {
		"docker:",	    "docker:-x",     "docker:a/b", "docker:a b", "docker:a\nb",
		"pod:onlyonepart",  "pod:a/b/c/d",   "pod:a//b",   "pod:/a/b",	 "pod:A_B/c",
		"compose:",	    "compose:a/b/c", "compose:/b", "unit:cron",	 "unit:.service",
		"unit:a/b.service", "kubernetes:x",  "podman:x",   "x=docker:",	 "unit:cron.timer",
	};
	struct cg_target t;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		t = (struct cg_target){};
		CHECK(opts_parse_target(good[i].arg, false, &t) == 0);
		CHECK(t.kind == good[i].kind);
		CHECK(good[i].name ? t.name && !strcmp(t.name, good[i].name) : !t.name);
		CHECK(good[i].select ? t.select && !strcmp(t.select, good[i].select)
				     : !t.select && t.cgroup);
		free(t.name);
		free(t.cgroup);
		free(t.select);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = (struct cg_target){};
		CHECK(opts_parse_target(bad[i], false, &t) == -EINVAL);
		CHECK(t.name == NULL && t.cgroup == NULL && t.select == NULL);
	}
}

static void test_targets(void)
{
	struct result r;

	r = PARSE("-c", "a", "-c", "one=b", "-c", "/abs/with=eq", "-c", "two=/c=d");
	CHECK(r.ret == OPTS_RUN);
	CHECK(r.opts.nr_targets == 4);
	if (r.opts.nr_targets == 4) {
		CHECK(r.opts.targets[0].name == NULL);
		CHECK_STR(r.opts.targets[0].cgroup, "a");
		CHECK_STR(r.opts.targets[1].name, "one");
		CHECK_STR(r.opts.targets[1].cgroup, "b");
		CHECK(r.opts.targets[2].name == NULL);
		CHECK_STR(r.opts.targets[2].cgroup, "/abs/with=eq");
		CHECK_STR(r.opts.targets[3].name, "two");
		CHECK_STR(r.opts.targets[3].cgroup, "/c=d");
	}
	result_free(&r);

	/* Unnamed targets are labelled by their path later, so only NAME= can clash here. */
	r = PARSE("-c", "a", "-c", "a");
	CHECK(r.ret == OPTS_RUN && r.opts.nr_targets == 2);
	result_free(&r);

	CHECK(refused(PARSE("-c", "=x"), "--cgroup: '=x'"));
	CHECK(refused(PARSE("-c", "x="), "--cgroup: 'x='"));
	CHECK(refused(PARSE("-c", ""), "--cgroup: ''"));
	CHECK(refused(PARSE("-p", "0"), "--pid: '0'"));
	CHECK(refused(PARSE("-p", "abc"), "--pid: 'abc'"));
	CHECK(refused(PARSE("-p", "12x"), "--pid: '12x'"));
	CHECK(refused(PARSE("-c", "web=a", "-p", "web=1"), "'web'"));
	/* A label with a newline still gives one line. */
	CHECK(refused(PARSE("-c", "x\ny=a", "-c", "x\ny=b"), "'x\\x0ay'"));
}

static void test_refusals(void)
{
	struct result r;

	/* getopt stops inside "-qxv"; the next parse must not go on with its 'v'. */
	CHECK(refused(PARSE("-qxv"), "'-x'"));
	r = PARSE("-c", "a");
	CHECK(r.ret == OPTS_RUN && r.opts.verbose == 0 && !r.opts.quiet);
	CHECK(r.opts.nr_targets == 1);
	result_free(&r);

	CHECK(refused(PARSE("-x"), "'-x'"));
	CHECK(refused(PARSE("--bogus"), "'--bogus'"));
	CHECK(refused(PARSE("--no-perf=1"), "'--no-perf'"));
	CHECK(refused(PARSE("--bpf-stats=1"), "'--bpf-stats'"));
	CHECK(refused(PARSE("-i"), "'--interval'"));
	CHECK(refused(PARSE("--messages"), "'--messages'"));
	CHECK(refused(PARSE("-d", "1", "--", "true"), "--duration"));
	CHECK(refused(PARSE("-n", "x"), "--name"));
	CHECK(refused(PARSE("-n", "x", "-q"), "--name"));
	CHECK(refused(PARSE("-n", ""), "--name"));
	CHECK(refused(PARSE("-n", "w", "-c", "w=x", "--", "true"), "'w'"));
	CHECK(refused(PARSE("--", ""), "the command is empty"));
	CHECK(refused(PARSE("-e", "cycles", "--no-perf"), "--no-perf"));
	CHECK(refused(PARSE("-f", "xml"), "--format: 'xml'"));
	CHECK(refused(PARSE("-o", ""), "--output-dir"));
	CHECK(refused(PARSE("-e", ""), "--events"));
	CHECK(refused(PARSE("--messages", "0"), "--messages: '0'"));
	CHECK(refused(PARSE("--messages", "nan"), "--messages: 'nan'"));
	CHECK(refused(PARSE("--max-cgroups", "0"), "--max-cgroups: '0'"));
	CHECK(refused(PARSE("--max-cgroups", "1000001"), "--max-cgroups: '1000001'"));
	CHECK(refused(PARSE("--max-cgroups", "12k"), "--max-cgroups: '12k'"));
	CHECK(refused(PARSE("--listen", "0"), "--listen: '0'"));
	CHECK(refused(PARSE("--listen", "65536"), "--listen: '65536'"));
	CHECK(refused(PARSE("--listen", "localhost:9477"), "--listen: 'localhost:9477'"));
	CHECK(refused(PARSE("--listen", "::1:9477"), "--listen: '::1:9477'"));
	CHECK(refused(PARSE("--listen", "[::1]"), "--listen: '[::1]'"));
	CHECK(refused(PARSE("--listen", ":9477"), "--listen: ':9477'"));
	CHECK(refused(PARSE("--listen", "1.2.3.4:"), "--listen: '1.2.3.4:'"));
	CHECK(refused(PARSE("--listen", "1.2.3.4:-1"), "--listen: '1.2.3.4:-1'"));
}

/* --listen: a port alone is loopback's; the last given wins */
static void test_listen(void)
{
	static const struct {
		const char *arg, *addr, *port;
	} ok[] = {
		{ "9477", "127.0.0.1", "9477" },
		{ "0.0.0.0:1", "0.0.0.0", "1" },
		{ "[::1]:65535", "::1", "65535" },
		{ "[::]:9477", "::", "9477" },
		/* leading zeros: the port they write, not the first five digits (0: any port) */
		{ "000009477", "127.0.0.1", "9477" },
		{ "127.0.0.1:0000000080", "127.0.0.1", "80" },
	};
	struct result r;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		r = PARSE("--listen", "1", "--listen", ok[i].arg);
		CHECK(r.ret == OPTS_RUN);
		CHECK_STR(r.opts.listen_addr, ok[i].addr);
		CHECK_STR(r.opts.listen_port, ok[i].port);
		result_free(&r);
	}
	r = PARSE("-q");
	CHECK(r.ret == OPTS_RUN && !r.opts.listen_addr && !r.opts.listen_port);
	result_free(&r);
}

/* The operands are the command: everything from the first one on, options included. */
static void test_command(void)
{
	struct result r;

	r = PARSE("-q", "stray");
	CHECK(r.ret == OPTS_RUN && r.opts.quiet && r.opts.command);
	CHECK_STR(r.opts.command[0], "stray");
	CHECK(!r.opts.command[1]);
	CHECK_STR(r.opts.command_label, "stray");
	result_free(&r);

	r = PARSE("-c", "a", "--", "-i");
	CHECK(r.ret == OPTS_RUN && r.opts.nr_targets == 1 && r.opts.command);
	CHECK_STR(r.opts.command[0], "-i");
	result_free(&r);

	r = PARSE("-q", "/usr/bin/sleep", "-i", "1");
	CHECK(r.ret == OPTS_RUN && r.opts.interval_ns == 1000000000ULL);
	CHECK_STR(r.opts.command[1], "-i");
	CHECK_STR(r.opts.command[2], "1");
	CHECK(!r.opts.command[3]);
	CHECK_STR(r.opts.command_label, "sleep");
	result_free(&r);

	r = PARSE("-n", "web", "-c", "db=x", "--", "./server/", "--port=1");
	CHECK(r.ret == OPTS_RUN && r.opts.nr_targets == 1);
	CHECK_STR(r.opts.command_label, "web");
	CHECK_STR(r.opts.command[0], "./server/");
	result_free(&r);

	/* a trailing slash leaves no base name: the whole word labels it */
	r = PARSE("./server/");
	CHECK(r.ret == OPTS_RUN);
	CHECK_STR(r.opts.command_label, "./server/");
	result_free(&r);

	r = PARSE("-c", "a");
	CHECK(r.ret == OPTS_RUN && !r.opts.command && !r.opts.command_label);
	result_free(&r);

	r = PARSE("-c", "a", "--", "true");
	CHECK(r.ret == OPTS_RUN && !opts_watch_command(&r.opts, "/sys/fs/cgroup/cgstat-1/true"));
	CHECK(r.opts.nr_targets == 2);
	CHECK_STR(r.opts.targets[1].name, "true");
	CHECK_STR(r.opts.targets[1].cgroup, "/sys/fs/cgroup/cgstat-1/true");
	result_free(&r);
}

static void test_help_and_version(void)
{
	static const char *const mentions[] = {
		"--cgroup",	    "--pid",	     "--name",	      "--interval",
		"--duration",	    "--output-dir",  "--format",      "--events",
		"--no-perf",	    "--messages",    "--max-cgroups", "--quiet",
		"--verbose",	    "--help",	     "--version",     "container-stats.csv",
		"sched-stats.csv",  "perf-stat.csv", "host-io.csv",   "container-summary.json",
		"cgroup-stats.csv", "--listen",
	};
	struct result r;

	r = PARSE("-c", "a", "--help");
	CHECK(r.ret == OPTS_EXIT);
	CHECK(!strncmp(r.out, "Usage: cgstat", 13));
	for (size_t i = 0; i < sizeof(mentions) / sizeof(mentions[0]); i++) {
		if (!strstr(r.out, mentions[i])) {
			fprintf(stderr, "help lacks %s\n", mentions[i]);
			CHECK(false);
		}
	}
	CHECK_STR(r.err, "");
	CHECK(r.opts.targets == NULL);
	result_free(&r);

	r = PARSE("-h");
	CHECK(r.ret == OPTS_EXIT && !strncmp(r.out, "Usage: cgstat", 13));
	result_free(&r);

	r = PARSE("--version");
	CHECK(r.ret == OPTS_EXIT);
	CHECK_STR(r.out, "cgstat " CGSTAT_VERSION "\n");
	result_free(&r);

	r = PARSE("-V");
	CHECK(r.ret == OPTS_EXIT);
	CHECK_STR(r.out, "cgstat " CGSTAT_VERSION "\n");
	result_free(&r);
}

int main(void)
{
	/* Twice over, interleaving failures and successes, to catch getopt state leaking. */
	for (int round = 0; round < 2; round++) {
		test_defaults();
		test_refusals();
		test_listen();
		test_command();
		test_every_option();
		test_interval_and_duration();
		test_targets();
		test_help_and_version();
		test_defaults();
	}
	test_seconds();
	test_target();
	test_name_targets();
	return check_done();
}
