// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE /* qsort_r() */
#include <curses.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/derived.h"
#include "outputs/live.h"
#include "outputs/table.h"
#include "lib/util.h"

/* The keys that sort the containers, each by one figure, largest first. */
static const struct {
	int key;
	const char *name;
	enum cg_figure figure;
	enum cg_figure plus; /* added, or CG_NR_FIGURES */
} sort_keys[] = {
	{ 'c', "cores", CG_FIG_CPU_CORES, CG_NR_FIGURES },
	{ 'r', "run-queue share", CG_FIG_RUNQ_PERCENT, CG_NR_FIGURES },
	{ 'b', "blocked share", CG_FIG_BLOCKED_PERCENT, CG_NR_FIGURES },
	{ 's', "switches/s", CG_FIG_VCSW_RATE, CG_FIG_IVCSW_RATE },
};

/*
 * One container (or, in the threads view, one thread) as last drawn: its line and what it
 * sorts by, so a key redraws at once.
 */
struct live_row {
	char line[TABLE_LINE_MAX];
	double sort_value[ARRAY_SIZE(sort_keys)]; /* -inf: not available, sorts last */
};

/* The threads view's label of a thread: "CONTAINER/COMM:TID". */
#define THREAD_LABEL_MAX (TABLE_LABEL_WIDTH + CG_COMM_LEN + 16)

struct live {
	SCREEN *screen;
	char title[160];
	char host[TABLE_LINE_MAX];
	char header[TABLE_LINE_MAX];
	struct live_row *rows;
	int nr_rows, cap_rows;
	size_t sort;  /* index in sort_keys */
	bool threads; /* t: each container's busiest threads (--threads) instead of containers */
	bool drawn;
};

/* The one screen, for the crash handler and exit. */
static struct live *live_open;

static void restore_terminal(void)
{
	if (live_open && !isendwin())
		endwin();
}

/*
 * A fatal signal gives the terminal back before the process dies of it: left in raw mode and on
 * the alternate screen, the shell after it would look hung. endwin() is not async-signal-safe;
 * the process is dying anyway, and top does the same.
 */
static void crash_handler(int sig)
{
	restore_terminal();
	signal(sig, SIG_DFL);
	raise(sig);
}

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };

struct live *live__open(void)
{
	struct sigaction sa = { .sa_handler = crash_handler, .sa_flags = SA_RESETHAND };
	struct live *l;

	if (live_open) {
		errno = EBUSY;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	/* newterm(), not initscr(): that one exits the process when the terminal will not do */
	l->screen = newterm(NULL, stdout, stdin);
	if (!l->screen) {
		free(l);
		errno = ENOTTY;
		return NULL;
	}
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	live_open = l;
	for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++)
		sigaction(crash_signals[i], &sa, NULL);
	atexit(restore_terminal);
	return l;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct live_row *x = a, *y = b;
	size_t k = *(const size_t *)ctx;

	return (x->sort_value[k] < y->sort_value[k]) - (x->sort_value[k] > y->sort_value[k]);
}

/* The first bytes of s that show as at most width characters (UTF-8: continuations are free). */
static int bytes_for_width(const char *s, int width)
{
	int n = 0, w = 0;

	for (; s[n]; n++) {
		if ((s[n] & 0xc0) != 0x80 && w++ == width)
			break;
	}
	return n;
}

static void put_line(int y, const char *s)
{
	if (y >= LINES)
		return;
	move(y, 0);
	addnstr(s, bytes_for_width(s, COLS));
}

static void redraw(struct live *l)
{
	char more[64];
	int y, i, room;

	if (l->nr_rows)
		qsort_r(l->rows, l->nr_rows, sizeof(*l->rows), cmp_rows, &l->sort);
	erase();
	put_line(0, l->title);
	put_line(1, l->host);
	attron(A_REVERSE);
	put_line(3, l->header);
	attroff(A_REVERSE);
	room = LINES - 4;
	for (i = 0, y = 4; i < l->nr_rows; i++, y++) {
		if (i == room - 1 && l->nr_rows > room) {
			snprintf(more, sizeof(more), "... %d more", l->nr_rows - i);
			put_line(y, more);
			break;
		}
		put_line(y, l->rows[i].line);
	}
	/* a message on stderr may have written over the screen: paint it whole */
	clearok(stdscr, TRUE);
	refresh();
}

static void host_line(char *out, size_t len, const struct cg_host *h)
{
	size_t at;

	if (!h->valid) {
		snprintf(out, len, "host: -");
		return;
	}
	at = snprintf(out, len, "host: CPU busy %.1f %%  iowait %.1f %%", h->cpu_busy_percent,
		      h->cpu_iowait_percent);
	for (int i = 0; i < h->nr_disks && at < len; i++)
		at += snprintf(out + at, len - at, "  %s read %.1f write %.1f MB/s busy %.1f %%",
			       h->disks[i].name, h->disks[i].read_mbps, h->disks[i].write_mbps,
			       h->disks[i].busy_percent);
}

static double sort_value(const struct cg_interval *iv, const struct cg_record *r, size_t k)
{
	double v, plus = 0;

	if (!record_figure(r, iv->interval_ns, sort_keys[k].figure, &v))
		return -INFINITY;
	if (sort_keys[k].plus != CG_NR_FIGURES &&
	    !record_figure(r, iv->interval_ns, sort_keys[k].plus, &plus))
		return -INFINITY;
	return v + plus;
}

/* A thread's row of the threads view: its record under the label CONTAINER/COMM:TID. */
static void thread_line(struct live_row *row, const struct cg_interval *iv,
			const struct cg_record *thread, const bool *shown, int label_width)
{
	static struct cg_record labelled;
	char label[THREAD_LABEL_MAX];

	snprintf(label, sizeof(label), "%s/%s:%u", thread->name, thread->busiest.comm,
		 thread->busiest.tid);
	labelled = *thread;
	labelled.name = label;
	table_row(row->line, sizeof(row->line), iv, &labelled, shown, label_width);
}

int live__draw(struct live *l, const struct cg_interval *iv)
{
	bool shown[TABLE_NR_COLUMNS];
	time_t seconds = (time_t)(iv->epoch_ms / 1000);
	/* the threads view needs --threads; without, t changes nothing */
	bool threads = l->threads && iv->threads;
	const struct cg_record *rows = threads ? iv->threads : iv->records;
	int nr = threads ? iv->nr_threads : iv->nr_records;
	struct live_row *grown;
	int label_width, i;
	struct tm tm;

	if (nr > l->cap_rows) {
		grown = realloc(l->rows, nr * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		l->rows = grown;
		l->cap_rows = nr;
	}
	localtime_r(&seconds, &tm);
	snprintf(l->title, sizeof(l->title),
		 "cgstat %02d:%02d:%02d.%03d  interval %.3f s  %d %s  sorted by %s  "
		 "(c r b s: sort,%s q: quit)%s",
		 tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(iv->epoch_ms % 1000),
		 (double)iv->interval_ns / NSEC_PER_SEC, nr, threads ? "threads" : "containers",
		 sort_keys[l->sort].name, iv->threads ? " t: threads," : "",
		 iv->health.inconsistencies ? "  INCONSISTENT" : "");
	host_line(l->host, sizeof(l->host), &iv->host);
	table_columns_shown(iv, shown);
	/*
	 * a narrow terminal shortens the labels before it cuts the figures, and the verdict's
	 * name; what the verdict names after it goes first
	 */
	label_width = COLS - table_numbers_width(shown) - 1 - TABLE_VERDICT_NAME_WIDTH;
	if (label_width > TABLE_LABEL_WIDTH)
		label_width = TABLE_LABEL_WIDTH;
	if (label_width < 12)
		label_width = 12;
	table_header(l->header, sizeof(l->header), shown, label_width);
	for (i = 0; i < nr; i++) {
		if (threads)
			thread_line(&l->rows[i], iv, &rows[i], shown, label_width);
		else
			table_row(l->rows[i].line, sizeof(l->rows[i].line), iv, &rows[i], shown,
				  label_width);
		for (size_t k = 0; k < ARRAY_SIZE(sort_keys); k++)
			l->rows[i].sort_value[k] = sort_value(iv, &rows[i], k);
	}
	l->nr_rows = nr;
	l->drawn = true;
	redraw(l);
	return 0;
}

enum live_key_result live__keys(struct live *l)
{
	int ch;

	while ((ch = getch()) != ERR) {
		if (ch == 'q' || ch == 'Q')
			return LIVE_QUIT;
		for (size_t k = 0; k < ARRAY_SIZE(sort_keys); k++)
			if (ch == sort_keys[k].key)
				l->sort = k;
		/* the other view is drawn at the next interval: the last one's rows are gone */
		if (ch == 't')
			l->threads = !l->threads;
		if (l->drawn)
			redraw(l); /* a new key, or KEY_RESIZE: LINES and COLS are new */
	}
	return LIVE_GO_ON;
}

void live__close(struct live *l)
{
	if (!l)
		return;
	restore_terminal();
	delscreen(l->screen);
	live_open = NULL;
	free(l->rows);
	free(l);
}
