// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sources/bpf_programs.h"

/* One loaded program: its fd (obj's) and its figures when counting began. */
struct program {
	int fd;
	uint64_t runs_before;
	uint64_t ns_before;
};

struct bpf_programs {
	int nr;
	struct program *progs;
	struct cg_program_stats *stats; /* bpf_programs__read()'s */
};

int bpf_programs__enable_stats(void)
{
	return bpf_enable_stats(BPF_STATS_RUN_TIME);
}

/* The kernel's count of prog's runs and their time, since the statistics were first on. */
static int program_info(int fd, uint64_t *runs, uint64_t *ns)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err;

	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (err)
		return err;
	*runs = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

struct bpf_programs *bpf_programs__new(struct bpf_object *obj)
{
	struct bpf_program *prog;
	struct bpf_programs *p;
	int n = 0, err = -ENOMEM;

	p = calloc(1, sizeof(*p));
	if (!p)
		goto err_out;
	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog))
		n += bpf_program__fd(prog) >= 0;
	p->progs = calloc(n, sizeof(*p->progs));
	p->stats = calloc(n, sizeof(*p->stats));
	if (n && (!p->progs || !p->stats))
		goto err_out;
	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog)) {
		struct program *pr = &p->progs[p->nr];

		/* autoload off: never loaded, so it neither runs nor costs anything */
		if (bpf_program__fd(prog) < 0)
			continue;
		pr->fd = bpf_program__fd(prog);
		err = program_info(pr->fd, &pr->runs_before, &pr->ns_before);
		if (err)
			goto err_out;
		p->stats[p->nr++].name = bpf_program__name(prog);
	}
	return p;
err_out:
	bpf_programs__free(p);
	errno = -err;
	return NULL;
}

int bpf_programs__read(struct bpf_programs *p, const struct cg_program_stats **progs, int *nr)
{
	uint64_t runs, ns;
	int i, err;

	for (i = 0; i < p->nr; i++) {
		err = program_info(p->progs[i].fd, &runs, &ns);
		if (err)
			return err;
		p->stats[i].runs = runs - p->progs[i].runs_before;
		p->stats[i].run_ns = ns - p->progs[i].ns_before;
	}
	*progs = p->stats;
	*nr = p->nr;
	return 0;
}

void bpf_programs__free(struct bpf_programs *p)
{
	if (!p)
		return;
	free(p->progs);
	free(p->stats);
	free(p);
}
