// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgstat-floor: attach empty programs to the tracepoints cgstat uses and wait for SIGINT or
 * SIGTERM. What the benchmark measures with it is the price of being attached at all.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct floor_bpf *skel;
	int err;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	skel = floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "cgstat-floor: cannot load: %s\n", strerror(errno));
		return 1;
	}
	err = floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "cgstat-floor: cannot attach: %s\n", strerror(-err));
		floor_bpf__destroy(skel);
		return 1;
	}
	fprintf(stderr, "cgstat-floor: attached\n");
	while (!stop)
		pause();
	floor_bpf__destroy(skel);
	return 0;
}
