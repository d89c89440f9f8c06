// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command line: the input split at NUL bytes is argv after "cgstat", and the input as one
 * string is a value of -i/-d and of -c/-p. What opts_parse() accepts must satisfy what opts.h
 * promises (interval at least 0.1 s, targets well formed, distinct labels...), a refusal must
 * be one "cgstat: " line on err, and parsing the same argv twice must give the same answer:
 * getopt keeps global state that opts_parse() has to reset.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "opts.h"

#define MAX_ARGS 64

static FILE *dev_null;

static void check_accepted(const struct cg_opts *o)
{
	CHECK(o->interval_ns >= 100000000ULL);
	CHECK(o->format >= CG_FORMAT_AUTO && o->format < NR_CG_FORMATS);
	CHECK(o->nr_targets >= 0);
	CHECK(!o->nr_targets || o->targets);
	CHECK(!(o->events && o->no_perf));
	CHECK(!o->events || o->events[0]);
	CHECK(!o->output_dir || o->output_dir[0]);
	CHECK(o->verbose >= 0);
	CHECK(o->messages == -1 || (isfinite(o->messages) && o->messages > 0));
	CHECK(o->max_cgroups >= 1 && o->max_cgroups <= 1000000);
	/* A command: a non-empty CMD, a label, and no --duration (the command sets the end). */
	CHECK(!o->command == !o->command_label);
	CHECK(!o->command || (o->command[0][0] && o->command_label[0] && !o->duration_ns));
	for (int i = 0; i < o->nr_targets; i++) {
		const struct cg_target *t = &o->targets[i];

		/* Exactly one of a cgroup, a pid and a name (docker:NAME and kin). */
		CHECK((t->cgroup != NULL) + (t->pid != 0) + (t->select != NULL) == 1);
		/* a name: of a kind, not empty; only a unit's without the runtimes' names */
		CHECK(!t->select ||
		      (t->select[0] && t->kind >= CG_TARGET_DOCKER && t->kind <= CG_TARGET_UNIT &&
		       (!o->no_names || t->kind == CG_TARGET_UNIT)));
		CHECK(t->pid >= 0);
		CHECK(!t->cgroup || t->cgroup[0]);
		CHECK(!t->name || t->name[0]);
		for (int j = 0; j < i; j++) {
			const char *a = t->name, *b = o->targets[j].name;

			CHECK(!a || !b || strcmp(a, b));
		}
		CHECK(!t->name || !o->command_label || strcmp(t->name, o->command_label));
	}
}

static bool same_opts(const struct cg_opts *a, const struct cg_opts *b)
{
	if (a->nr_targets != b->nr_targets || a->interval_ns != b->interval_ns ||
	    a->duration_ns != b->duration_ns || a->format != b->format || a->quiet != b->quiet ||
	    a->verbose != b->verbose || a->no_perf != b->no_perf ||
	    a->max_cgroups != b->max_cgroups || !(a->messages == b->messages) ||
	    !a->events != !b->events || !a->output_dir != !b->output_dir ||
	    !a->command_label != !b->command_label)
		return false;
	if (a->command_label && strcmp(a->command_label, b->command_label))
		return false;
	if ((a->events && strcmp(a->events, b->events)) ||
	    (a->output_dir && strcmp(a->output_dir, b->output_dir)))
		return false;
	for (int i = 0; i < a->nr_targets; i++) {
		const struct cg_target *x = &a->targets[i], *y = &b->targets[i];

		if (x->pid != y->pid || !x->name != !y->name || !x->cgroup != !y->cgroup ||
		    x->kind != y->kind || !x->select != !y->select ||
		    (x->select && strcmp(x->select, y->select)) ||
		    (x->name && strcmp(x->name, y->name)) ||
		    (x->cgroup && strcmp(x->cgroup, y->cgroup)))
			return false;
	}
	return true;
}

/* opts_parse() into o; a refusal must leave exactly one "cgstat: " line on err. */
static int parse(struct cg_opts *o, int argc, char **argv)
{
	char *text = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&text, &len);
	int ret;

	CHECK(err);
	ret = opts_parse(o, argc, argv, dev_null, err);
	CHECK(fclose(err) == 0);
	CHECK(ret == OPTS_RUN || ret == OPTS_EXIT || ret == -EINVAL);
	if (ret == -EINVAL) {
		CHECK(len > 8 && !strncmp(text, "cgstat: ", 8));
		CHECK(strlen(text) == len && text[len - 1] == '\n');
		CHECK(strchr(text, '\n') == text + len - 1);
	} else {
		CHECK(len == 0);
	}
	free(text);
	if (ret != OPTS_RUN) {
		/* opts_parse() has freed what it had, leaving nothing to free twice. */
		CHECK(!o->targets && !o->nr_targets && !o->events && !o->output_dir &&
		      !o->command_label);
	}
	return ret;
}

static void check_argv(const uint8_t *data, size_t size)
{
	char *copy = fuzz_strdup(data, size), *argv[MAX_ARGS + 2], *argv2[MAX_ARGS + 2];
	struct cg_opts first, second;
	int argc = 0, ret;
	size_t off = 0;

	argv[argc++] = "cgstat";
	/* "a\0b" is {"a", "b"}, and a trailing NUL ends the last argument, not starts one. */
	while (off < size && argc <= MAX_ARGS) {
		argv[argc++] = copy + off;
		off += strlen(copy + off) + 1;
	}
	argv[argc] = NULL;
	/* getopt permutes argv; the second parse starts from the same order as the first. */
	memcpy(argv2, argv, sizeof(argv));

	ret = parse(&first, argc, argv);
	if (ret == OPTS_RUN)
		check_accepted(&first);
	CHECK(parse(&second, argc, argv2) == ret);
	if (ret == OPTS_RUN)
		CHECK(same_opts(&first, &second));
	opts_free(&first);
	opts_free(&second);
	free(copy);
}

/* By opts.h: a positive finite number of seconds, strtod()'s syntax without leading blanks. */
static void check_seconds(const char *text)
{
	uint64_t ns = 0;
	char *end;
	double v;
	int ret = opts_parse_seconds(text, &ns);

	CHECK(ret == 0 || ret == -EINVAL);
	errno = 0;
	v = strtod(text, &end);
	if (!*text || strchr(" \t\n\v\f\r", text[0]) || *end || errno == ERANGE || !isfinite(v) ||
	    !(v > 0)) {
		CHECK(ret == -EINVAL);
		return;
	}
	if (ret) {
		/* Refused only when the nanoseconds do not fit in 64 bits or round to 0. */
		CHECK(v * 1e9 >= 18446744073709551615.0 || v * 1e9 < 0.5);
		return;
	}
	CHECK(ns >= 1);
	/* Rounded to the nearest nanosecond, give or take the double's own rounding. */
	CHECK(fabs((double)ns - v * 1e9) <= 0.5 + 1e-6 + v * 1e9 * 0x1p-51);
}

static void check_target(const char *arg, bool is_pid)
{
	struct cg_target t = {};
	const char *eq = arg[0] == '/' ? NULL : strchr(arg, '=');
	const char *value = eq ? eq + 1 : arg;

	/* A refusal leaves nothing to free, which LeakSanitizer checks. */
	if (opts_parse_target(arg, is_pid, &t))
		return;
	if (eq)
		CHECK(t.name && strlen(t.name) == (size_t)(eq - arg) &&
		      !strncmp(t.name, arg, (size_t)(eq - arg)) && t.name[0]);
	else
		CHECK(!t.name);
	if (is_pid) {
		char *end;
		long long pid;

		CHECK(!t.cgroup);
		CHECK(value[0] >= '0' && value[0] <= '9');
		errno = 0;
		pid = strtoll(value, &end, 10);
		CHECK(!errno && !*end && pid >= 1 && pid <= INT_MAX && t.pid == pid);
	} else if (t.select) {
		/* a container's, a pod's or a unit's name: what follows its prefix, nothing else */
		const char *colon = strchr(value, ':');

		CHECK(!t.cgroup && t.kind >= CG_TARGET_DOCKER && t.kind <= CG_TARGET_UNIT);
		CHECK(colon && !strcmp(t.select, colon + 1) && t.select[0]);
		CHECK(!strchr(t.select, '\n') && !strchr(t.select, ' '));
		CHECK(t.pid == 0);
	} else {
		CHECK(t.cgroup && !strcmp(t.cgroup, value) && t.cgroup[0]);
		CHECK(t.pid == 0 && t.kind == CG_TARGET_CGROUP);
	}
	free(t.name);
	free(t.cgroup);
	free(t.select);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (!dev_null) {
		dev_null = fopen("/dev/null", "we");
		CHECK(dev_null);
	}
	check_argv(data, size);

	text = fuzz_strdup(data, size);
	check_seconds(text);
	check_target(text, false);
	check_target(text, true);
	free(text);
	return 0;
}
