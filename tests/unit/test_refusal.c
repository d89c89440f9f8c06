// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <stdlib.h>

#include "check.h"
#include "sources/refusal.h"
#include "lib/util.h"

static const char *text;

static FILE *open_text(size_t *len)
{
	free((void *)text);
	text = NULL;
	return open_memstream((char **)&text, len);
}

static const char *missing_line(const struct kernel_need *needs, size_t nr, int *missing)
{
	size_t len;
	FILE *f = open_text(&len);

	*missing = refusal_print_missing(f, "5.10.0-32-amd64", needs, nr);
	fclose(f);
	return text;
}

static const char *refusal_line(const struct load_refusal *r, const char *btf_path)
{
	size_t len;
	FILE *f = open_text(&len);

	load_refusal_print(f, r, "6.1.0-50-amd64", "Permission denied", btf_path);
	fclose(f);
	return text;
}

/* Every missing feature, with the release it came in, after the newest release of all. */
static void test_missing(void)
{
	struct kernel_need needs[] = {
		{ "BTF tracing programs", "5.5", false },
		{ "task storage", "5.11", true },
		{ "bpf_loop", "5.17", true },
		{ "bpf_map_lookup_percpu_elem", "5.19", true },
	};
	int missing;

	CHECK_STR(missing_line(needs, 4, &missing),
		  "cgstat: needs Linux 5.19 or newer with BTF; this is 5.10.0-32-amd64: no task "
		  "storage (5.11), bpf_loop (5.17), bpf_map_lookup_percpu_elem (5.19)\n");
	CHECK(missing == 3);
	/* one missing: still the newest release of all, not of what is missing */
	needs[2].missing = needs[3].missing = false;
	CHECK_STR(missing_line(needs, 4, &missing),
		  "cgstat: needs Linux 5.19 or newer with BTF; this is 5.10.0-32-amd64: no task "
		  "storage (5.11)\n");
	CHECK(missing == 1);
	/* 5.5 < 5.11 < 5.19 by number, not by text */
	needs[0].missing = true;
	needs[1].missing = false;
	CHECK_STR(missing_line(needs, 2, &missing),
		  "cgstat: needs Linux 5.11 or newer with BTF; this is 5.10.0-32-amd64: no BTF "
		  "tracing programs (5.5)\n");
	needs[0].missing = false;
	CHECK_STR(missing_line(needs, 4, &missing), "");
	CHECK(missing == 0);
}

static struct load_refusal feed(const char *const *msgs, size_t nr)
{
	struct load_refusal r = {};
	size_t i;

	for (i = 0; i < nr; i++)
		load_refusal_add(&r, msgs[i]);
	return r;
}

/* A real 6.1 rejection, as libbpf 1.1 printed it (trimmed), one message per print call. */
static void test_verifier(void)
{
	static const char *const msgs[] = {
		"libbpf: prog 'cg_sched_switch': BPF program load failed: Permission denied\n",
		"libbpf: prog 'cg_sched_switch': -- BEGIN PROG LOAD LOG --\n"
		"0: R1=ctx(off=0,imm=0) R10=fp0\n"
		"2919: (18) r1 = 0xff24547cc3400000    ; R1_w=map_ptr(off=0,ks=4,vs=1816,imm=0)\n"
		"2921: (85) call bpf_map_lookup_elem#1\n"
		"R2 type=mem expected=fp, pkt, pkt_meta, map_key, map_value\n"
		"processed 37 insns (limit 1000000) max_states_per_insn 0 total_states 3 "
		"peak_states 3 mark_read 2\n"
		"-- END PROG LOAD LOG --\n",
		"libbpf: prog 'cg_sched_switch': failed to load: -13\n",
		"libbpf: failed to load object 'cgstat_bpf'\n",
		"libbpf: failed to load BPF skeleton 'cgstat_bpf': -13\n",
	};
	struct load_refusal r = feed(msgs, ARRAY_SIZE(msgs));

	CHECK(r.rank == LOAD_REASON_VERIFIER && !r.is_map);
	CHECK_STR(r.name, "cg_sched_switch");
	CHECK_STR(r.reason, "R2 type=mem expected=fp, pkt, pkt_meta, map_key, map_value");
	CHECK_STR(refusal_line(&r, NULL),
		  "cgstat: Linux 6.1.0-50-amd64 refused the BPF program cg_sched_switch: "
		  "Permission denied (verifier: 'R2 type=mem expected=fp, pkt, pkt_meta, map_key, "
		  "map_value'); -vvv shows its log\n");
}

/*
 * With BPF_LOG_STATS (-vv) more statistics come before "processed"; a log cut short has none;
 * the log as libbpf 1.1 rewrites it for a CO-RE relocation that failed.
 */
static void test_log_forms(void)
{
	static const char *const stats[] = {
		"libbpf: prog 'bad': -- BEGIN PROG LOAD LOG --\n"
		"arg#0 reference type('UNKNOWN ') size cannot be determined: -22\n"
		"R2 type=ctx expected=fp, pkt, pkt_meta, map_key, map_value, mem\n"
		"verification time 26 usec\n"
		"stack depth 0\n"
		"processed 4 insns (limit 1000000) max_states_per_insn 0 total_states 0\n"
		"-- END PROG LOAD LOG --\n",
	};
	static const char *const cut[] = {
		"libbpf: prog 'bad': -- BEGIN PROG LOAD LOG --\n"
		"5: (85) call bpf_loop#181\n"
		"  \t \n"
		"last words\r\n"
		"\n"
		"-- END PROG LOAD LOG --\n",
	};
	static const char *const cut_in_line[] = {
		"libbpf: prog 'bad': -- BEGIN PROG LOAD LOG --\n"
		"first\n"
		"R1 half a li-- END PROG LOAD LOG --\n",
	};
	static const char *const core[] = {
		"libbpf: prog 'cg_seed_tasks': BPF program load failed: Invalid argument\n",
		"libbpf: prog 'cg_seed_tasks': -- BEGIN PROG LOAD LOG --\n"
		"reg type unsupported for arg#0 function cg_seed_tasks#44\n"
		"; int BPF_PROG(cg_seed_tasks, struct bpf_iter_meta *meta, struct task_struct *t)\n"
		"51: <invalid CO-RE relocation>\n"
		"failed to resolve CO-RE relocation <byte_off> [232] struct task_struct.on_cpu "
		"(0:7 @ offset 52)\n"
		"processed 51 insns (limit 1000000) max_states_per_insn 0 total_states 3\n"
		"-- END PROG LOAD LOG --\n",
	};
	struct load_refusal r;

	r = feed(stats, 1);
	CHECK(r.rank == LOAD_REASON_VERIFIER);
	CHECK_STR(r.reason, "R2 type=ctx expected=fp, pkt, pkt_meta, map_key, map_value, mem");
	r = feed(cut, 1);
	CHECK(r.rank == LOAD_REASON_VERIFIER);
	CHECK_STR(r.reason, "last words");
	r = feed(cut_in_line, 1);
	CHECK_STR(r.reason, "R1 half a li");
	r = feed(core, ARRAY_SIZE(core));
	CHECK(r.rank == LOAD_REASON_VERIFIER);
	CHECK_STR(r.name, "cg_seed_tasks");
	CHECK_STR(r.reason, "failed to resolve CO-RE relocation <byte_off> [232] "
			    "struct task_struct.on_cpu (0:7 @ offset 52)");
}

/* A relocation libbpf itself failed, a map the kernel would not make, nothing named. */
static void test_libbpf(void)
{
	static const char *const relo[] = {
		("libbpf: prog 'cg_seed_tasks': relo #3: failed to resolve CO-RE relocation "
		 "<byte_off> [232] struct task_struct.on_cpu (0:7 @ offset 52)\n"),
		"libbpf: failed to perform CO-RE relocations: -22\n",
		"libbpf: prog 'cg_other': failed to load: -22\n",
		"libbpf: failed to load object 'cgstat_bpf'\n",
	};
	static const char *const map[] = {
		("libbpf: Error in bpf_create_map_xattr(task_states):Invalid argument(-22). "
		 "Retrying without BTF.\n"),
		"libbpf: map 'task_states': failed to create: Invalid argument(-22)\n",
		"libbpf: failed to load object 'cgstat_bpf'\n",
	};
	static const char *const btf[] = {
		"libbpf: failed to parse target BTF: -22\n",
		"libbpf: failed to perform CO-RE relocations: -22\n",
	};
	struct load_refusal r;

	r = feed(relo, ARRAY_SIZE(relo));
	CHECK(r.rank == LOAD_REASON_NAMED && !r.is_map);
	CHECK_STR(r.name, "cg_seed_tasks");
	CHECK_STR(refusal_line(&r, NULL),
		  "cgstat: cannot load the BPF program cg_seed_tasks on Linux 6.1.0-50-amd64: "
		  "Permission denied (libbpf: 'relo #3: failed to resolve CO-RE relocation "
		  "<byte_off> [232] struct task_struct.on_cpu (0:7 @ offset 52)'); -vv shows "
		  "libbpf's messages\n");
	r = feed(map, ARRAY_SIZE(map));
	CHECK(r.rank == LOAD_REASON_NAMED && r.is_map);
	CHECK_STR(
		refusal_line(&r, NULL),
		"cgstat: cannot make the BPF map task_states on Linux 6.1.0-50-amd64: "
		"Permission denied (libbpf: 'failed to create: Invalid argument(-22)'); -vv shows "
		"libbpf's messages\n");
	r = feed(btf, ARRAY_SIZE(btf));
	CHECK(r.rank == LOAD_REASON_LIBBPF);
	CHECK_STR(refusal_line(&r, "/tmp/x.btf"),
		  "cgstat: cannot load the BPF programs on Linux 6.1.0-50-amd64: Permission denied "
		  "(libbpf: 'failed to parse target BTF: -22'); with the BTF in '/tmp/x.btf'; -vv "
		  "shows libbpf's messages\n");
	r = feed(NULL, 0);
	CHECK(r.rank == LOAD_REASON_NONE);
	CHECK_STR(refusal_line(&r, NULL),
		  "cgstat: cannot load the BPF programs on Linux 6.1.0-50-amd64: Permission "
		  "denied; -vv shows libbpf's messages\n");
}

/* What cannot split the line, act on the terminal or overrun a buffer. */
static void test_hostile(void)
{
	static const char *const no_quotes[] = {
		"libbpf: prog cg_sched_switch: BPF program load failed\n",
		"prog 'unterminated",
		"map '': empty name\n",
		"prog 'a b': a space in a name\n",
	};
	static const char *const controls[] = {
		"libbpf: prog 'p': -- BEGIN PROG LOAD LOG --\n"
		"R1 \x1b[2J\x9b"
		"2J \\ \xe2\x80\xa8 and \x07\n"
		"processed 1 insns\n-- END PROG LOAD LOG --\n",
	};
	static const char *const no_log_reason[] = {
		"libbpf: prog 'blank': \t\n",
		"libbpf: prog 'p': BPF program load failed: Invalid argument\n",
		("libbpf: prog 'p': -- BEGIN PROG LOAD LOG --\n\n \nprocessed 0 insns\n"
		 "-- END PROG LOAD LOG --\n"),
		"libbpf: prog 'q': -- BEGIN PROG LOAD LOG --",
		"libbpf: map 'm': -- BEGIN PROG LOAD LOG --\nmaps have no log\n",
	};
	char name[300], *log, *msg, *p;
	const char *line;
	struct load_refusal r;
	size_t n = 1 << 20;

	r = feed(no_quotes, ARRAY_SIZE(no_quotes));
	CHECK(r.rank == LOAD_REASON_LIBBPF && !r.name[0]);
	CHECK_STR(r.reason, "prog cg_sched_switch: BPF program load failed");

	r = feed(controls, 1);
	line = refusal_line(&r, "/a\nb");
	CHECK_STR(line, "cgstat: Linux 6.1.0-50-amd64 refused the BPF program p: Permission denied "
			"(verifier: 'R1 \\x1b[2J\\x9b2J \\\\ \xe2\x80\xa8 and \\x07'); with the "
			"BTF in '/a\\x0ab'; -vvv shows its log\n");
	CHECK(strchr(line, '\n') == line + strlen(line) - 1);

	/* a log with no reason leaves the named one; a map's "log" is no verifier's */
	r = feed(no_log_reason, ARRAY_SIZE(no_log_reason));
	CHECK(r.rank == LOAD_REASON_NAMED && !r.is_map);
	CHECK_STR(r.name, "p");
	CHECK_STR(r.reason, "BPF program load failed: Invalid argument");

	/* a name longer than the buffer: cut, and said to be */
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	msg = malloc(sizeof(name) + 64);
	snprintf(msg, sizeof(name) + 64, "libbpf: prog '%s': failed to load: -13\n", name);
	r = feed((const char *const *)&msg, 1);
	CHECK(r.rank == LOAD_REASON_NAMED && r.name_cut);
	CHECK(strlen(r.name) == REFUSAL_NAME_MAX - 1);
	line = refusal_line(&r, NULL);
	CHECK(strstr(line, "nnn... on Linux") != NULL);
	free(msg);

	/* a megabyte-long reason line, ending in a 3-byte sequence that the cut must not split */
	log = malloc(n + 256);
	strcpy(log, "libbpf: prog 'p': -- BEGIN PROG LOAD LOG --\nR0 ");
	p = log + strlen(log);
	memset(p, 'x', n);
	/* U+2028 at bytes 253 to 255 of the reason: the cut at 255 falls inside it */
	memcpy(p + REFUSAL_REASON_MAX - 6, "\xe2\x80\xa8", 3);
	strcpy(p + n, "\nprocessed 1 insns\n-- END PROG LOAD LOG --\n");
	r = feed((const char *const *)&log, 1);
	CHECK(r.rank == LOAD_REASON_VERIFIER && r.reason_cut);
	CHECK(strlen(r.reason) == REFUSAL_REASON_MAX - 1 - 2);
	line = refusal_line(&r, NULL);
	CHECK(strstr(line, "xxx'...); -vvv shows its log\n") != NULL);
	free(log);

	/* stray continuation bytes are no sequence to keep whole: cut where the buffer ends */
	log = malloc(2 * REFUSAL_REASON_MAX);
	memset(log, 0x85, 2 * REFUSAL_REASON_MAX - 1);
	log[0] = '\t';
	log[2 * REFUSAL_REASON_MAX - 1] = '\0';
	r = feed((const char *const *)&log, 1);
	CHECK(r.rank == LOAD_REASON_LIBBPF && r.reason_cut);
	CHECK(strlen(r.reason) == REFUSAL_REASON_MAX - 1);
	free(log);

	/* nothing but a prefix, and nothing at all */
	r = feed((const char *const[]){ "libbpf: ", "" }, 2);
	CHECK(r.rank == LOAD_REASON_NONE);
}

int main(void)
{
	test_missing();
	test_verifier();
	test_log_forms();
	test_libbpf();
	test_hostile();
	free((void *)text);
	return check_done();
}
