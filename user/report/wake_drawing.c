// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/derived.h"
#include "report/wake_drawing.h"

extern char **environ;

/* A pool (or source: container "") that an edge drawn ends at, as node "n<index>". */
struct end {
	const char *container, *pool;
	const cJSON *node;	 /* its entry of wakeGraph's nodes, NULL if none */
	const char *serial_comm; /* the serial stage's thread, when one of its container's */
	double serial_tid;
};

static const char *string_of(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(item) ? item->valuestring : NULL;
}

static double number_of(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(item) && isfinite(item->valuedouble) ? item->valuedouble : 0;
}

/* s inside a dot string: its quotes and backslashes escaped, control bytes as spaces. */
static void dot_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
}

static void dot_quote(FILE *f, const char *s)
{
	fputc('"', f);
	dot_escape(f, s);
	fputc('"', f);
}

/* The index of (container, pool) in ends[0, *n), added if new. */
static int end_index(struct end *ends, int *n, const char *container, const char *pool)
{
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(ends[i].container, container) && !strcmp(ends[i].pool, pool))
			return i;
	ends[*n] = (struct end){ .container = container, .pool = pool };
	return (*n)++;
}

/* What the summary says of e: its node's figures, and whether it is a serial stage's pool. */
static void end_describe(struct end *e, const cJSON *summary)
{
	const cJSON *nodes, *node, *stages, *stage;

	nodes = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(summary, "wakeGraph"), "nodes");
	cJSON_ArrayForEach(node, nodes)
	{
		if (!strcmp(string_of(node, "container") ?: "", e->container) &&
		    !strcmp(string_of(node, "pool") ?: "", e->pool)) {
			e->node = node;
			break;
		}
	}
	if (!*e->container)
		return;
	stages = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(summary, "containers"), e->container),
		"serialStages");
	cJSON_ArrayForEach(stage, stages)
	{
		if (!strcmp(string_of(stage, "pool") ?: "", e->pool)) {
			e->serial_comm = string_of(stage, "comm") ?: "";
			e->serial_tid = number_of(stage, "tid");
			return;
		}
	}
}

static void dot_node(FILE *f, int i, const struct end *e)
{
	double busy = fmin(
		fmax(number_of(e->node, figure_columns[CG_FIG_BUSIEST_THREAD_CORES].name), 0), 1);

	fprintf(f, "    n%d [label=\"", i);
	dot_escape(f, e->pool);
	if (!*e->container) {
		fputs("\" shape=ellipse style=filled fillcolor=\"#dddddd\"];\n", f);
		return;
	}
	fprintf(f, "\\nbusiest thread %.2f of a core", busy);
	if (e->serial_comm) {
		fputs("\\nserial stage: ", f);
		dot_escape(f, e->serial_comm);
		fprintf(f, " (%.0f)", e->serial_tid);
	}
	/* HSV: red, as saturated as the thread was busy */
	fprintf(f, "\" fillcolor=\"0.000 %.3f 1.000\"%s];\n", busy,
		e->serial_comm ? " peripheries=2 penwidth=2" : "");
}

static const cJSON *graph_edges(const cJSON *summary)
{
	return cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(summary, "wakeGraph"), "edges");
}

int wake_drawing_dot(FILE *f, const cJSON *summary, int *left)
{
	const cJSON *edges = graph_edges(summary), *e;
	struct end ends[2 * WAKE_DRAWING_EDGES];
	int wakee[WAKE_DRAWING_EDGES], waker[WAKE_DRAWING_EDGES];
	double rate[WAKE_DRAWING_EDGES], top = 0;
	int n = 0, nr_ends = 0, total = cJSON_GetArraySize(edges), i, j, k;
	bool *drawn;

	/* the summary lists edges by wakeups, most first */
	cJSON_ArrayForEach(e, edges)
	{
		if (n == WAKE_DRAWING_EDGES || !string_of(e, "pool") || !string_of(e, "wakerPool"))
			continue;
		wakee[n] = end_index(ends, &nr_ends, string_of(e, "container") ?: "",
				     string_of(e, "pool"));
		waker[n] = end_index(ends, &nr_ends, string_of(e, "wakerContainer") ?: "",
				     string_of(e, "wakerPool"));
		rate[n] = fmax(number_of(e, "wakeupsPerSecond"), 0);
		top = fmax(top, rate[n]);
		n++;
	}
	*left = total - n;
	if (!n)
		return 0;
	for (i = 0; i < nr_ends; i++)
		end_describe(&ends[i], summary);
	fputs("digraph wakes {\n  rankdir=LR;\n  fontname=\"sans-serif\";\n  node [shape=box style=\"rounded,filled\" "
	      "fontname=\"sans-serif\" fontsize=10];\n  edge [fontname=\"sans-serif\" "
	      "fontsize=9];\n",
	      f);
	/* each container's pools in a frame of its own, in the order they came */
	drawn = calloc((size_t)nr_ends, sizeof(*drawn));
	for (i = 0, k = 0; drawn && i < nr_ends; i++) {
		if (drawn[i] || !*ends[i].container)
			continue;
		fprintf(f, "  subgraph cluster_%d {\n    label=", k++);
		dot_quote(f, ends[i].container);
		fputs(";\n    style=rounded;\n", f);
		for (j = i; j < nr_ends; j++) {
			if (drawn[j] || strcmp(ends[j].container, ends[i].container))
				continue;
			dot_node(f, j, &ends[j]);
			drawn[j] = true;
		}
		fputs("  }\n", f);
	}
	for (i = 0; i < nr_ends; i++)
		if (!*ends[i].container || !drawn)
			dot_node(f, i, &ends[i]);
	free(drawn);
	/* width by wakeups a second, on a log scale up to the busiest edge's */
	for (i = 0; i < n; i++)
		fprintf(f, "  n%d -> n%d [label=\"%.*f/s\" penwidth=%.2f];\n", waker[i], wakee[i],
			rate[i] < 10 ? 1 : 0, rate[i],
			1 + 5 * log1p(rate[i]) / fmax(log1p(top), 1e-9));
	fputs("}\n", f);
	return n;
}

/* All of fd's bytes, malloc'd and NUL-terminated; NULL with errno on failure. */
static char *read_all(int fd)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap), *grown;
	ssize_t got;

	while (buf) {
		if (cap - len < 2) {
			grown = realloc(buf, cap *= 2);
			if (!grown)
				break;
			buf = grown;
		}
		got = read(fd, buf + len, cap - len - 1);
		if (got == 0) {
			buf[len] = 0;
			return buf;
		}
		if (got < 0 && errno != EINTR)
			break;
		if (got > 0)
			len += (size_t)got;
	}
	free(buf);
	return NULL;
}

/*
 * dot -Tsvg on the source in fd (read from its start): its standard output, or NULL and
 * -errno. Its stderr is dropped: a warning of its own is no failure of the report's.
 */
static char *run_dot(int fd, int *err)
{
	const char *dot = getenv("CGSTAT_DOT");
	char *const argv[] = { "dot", "-Tsvg", NULL };
	posix_spawn_file_actions_t fa;
	int out[2], status, rc;
	char *svg = NULL;
	pid_t pid;

	if (!dot || !*dot)
		dot = WAKE_DRAWING_DOT;
	if (pipe2(out, O_CLOEXEC)) {
		*err = -errno;
		return NULL;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, dot, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	if (rc) {
		close(out[0]);
		*err = -rc;
		return NULL;
	}
	svg = read_all(out[0]);
	*err = svg ? 0 : -errno;
	close(out[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!*err && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		*err = -EPROTO;
	if (*err) {
		free(svg);
		return NULL;
	}
	return svg;
}

char *wake_drawing_svg(const cJSON *summary, int *nr_edges, int *left, int *err)
{
	char *svg = NULL, *start;
	FILE *f = NULL;
	int fd;

	*err = 0;
	*nr_edges = 0;
	*left = 0;
	if (!cJSON_GetArraySize(graph_edges(summary)))
		return NULL;
	fd = memfd_create("wake-graph.dot", MFD_CLOEXEC);
	if (fd < 0 || !(f = fdopen(dup(fd), "w"))) {
		*err = -errno;
		goto out;
	}
	*nr_edges = wake_drawing_dot(f, summary, left);
	if (fclose(f) || lseek(fd, 0, SEEK_SET) < 0) {
		*err = -errno;
		goto out;
	}
	svg = run_dot(fd, err);
	/* the page wants the element alone, not the XML declaration and doctype before it */
	start = svg ? strstr(svg, "<svg") : NULL;
	if (svg && !start) {
		*err = -EPROTO;
		free(svg);
		svg = NULL;
	} else if (start) {
		memmove(svg, start, strlen(start) + 1);
	}
out:
	if (fd >= 0)
		close(fd);
	return svg;
}
