/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Why the kernel will not run cgstat, as the one line said on stderr: the BPF features it lacks
 * (kernel_features.c probes them), or what libbpf's warnings said when the BPF object failed to
 * load (collector.c holds them back). No libbpf here: unit-tested without root.
 */
#ifndef CGSTAT_REFUSAL_H
#define CGSTAT_REFUSAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A kernel feature cgstat needs, and the mainline release it came in ("5.17"). */
struct kernel_need {
	const char *what;
	const char *since;
	bool missing;
};

/*
 * When any of needs[0..nr) is missing, write "cgstat: needs Linux V or newer with BTF; this is
 * RELEASE: no WHAT (SINCE), WHAT (SINCE)" with V the newest release among all the needs, and
 * return how many are missing; 0, and nothing written, when none is.
 */
int refusal_print_missing(FILE *f, const char *release, const struct kernel_need *needs, size_t nr);

/* How much a load_refusal's reason tells, least first: a later message only ever adds. */
enum load_reason {
	LOAD_REASON_NONE,
	LOAD_REASON_LIBBPF,   /* a warning that named no program or map */
	LOAD_REASON_NAMED,    /* the first warning naming a program or map */
	LOAD_REASON_VERIFIER, /* a program's verifier log: its last line before the statistics */
};

#define REFUSAL_NAME_MAX   64
#define REFUSAL_REASON_MAX 256

/*
 * What libbpf's warnings said while the BPF object loaded, as load_refusal_add() took them.
 * Zeroed to start. name and reason are cut to fit (name_cut, reason_cut); reason is outside text,
 * quoted when printed.
 */
struct load_refusal {
	enum load_reason rank;
	bool is_map; /* name is a map's, else a program's */
	bool name_cut;
	bool reason_cut;
	char name[REFUSAL_NAME_MAX];
	char reason[REFUSAL_REASON_MAX];
};

/*
 * One warning as libbpf formatted it ("libbpf: prog 'NAME': ..."); the verifier's log comes whole
 * in one, between "-- BEGIN PROG LOAD LOG --" and "-- END PROG LOAD LOG --".
 */
void load_refusal_add(struct load_refusal *r, const char *msg);

/*
 * The one line for a load that failed with error (its words): which program or map Linux release
 * refused and why, the BTF the programs were relocated against (NULL: the kernel's), and which
 * -v shows more.
 */
void load_refusal_print(FILE *f, const struct load_refusal *r, const char *release,
			const char *error, const char *btf_path);

#endif /* CGSTAT_REFUSAL_H */
