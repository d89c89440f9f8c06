// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Thread names to pools (bpf/cgstat.h, cg_pool_name()): the rule of docs/metrics.md. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "bpf/cgstat.h"

static const char *pool_of(const char *comm, int exact)
{
	static char pool[CG_COMM_LEN + 1];
	char name[CG_COMM_LEN] = {};

	memcpy(name, comm, strnlen(comm, sizeof(name)));
	cg_pool_name(name, pool, exact);
	return pool;
}

static void test_rule(void)
{
	CHECK_STR(pool_of("pulsar-io-4-1", 0), "pulsar-io-N-N");
	CHECK_STR(pool_of("pool-3-thread-12", 0), "pool-N-thread-N");
	CHECK_STR(pool_of("a0b00c000d", 0), "aNbNcNd");
	CHECK_STR(pool_of("12345", 0), "N");
	CHECK_STR(pool_of("java", 0), "java");
	CHECK_STR(pool_of("", 0), "");
	/* --pool-by comm keeps the name */
	CHECK_STR(pool_of("pulsar-io-4-1", 1), "pulsar-io-4-1");
	/* a kernel-truncated name (15 characters, no NUL in its 16 bytes) is taken to 15 */
	CHECK_STR(pool_of("BookKeeperClientWorker-7", 0), "BookKeeperClien");
	CHECK_STR(pool_of("ForkJoinPool-1-worker-3", 0), "ForkJoinPool-N-");
}

/* Any 16 bytes: a terminated name no longer than the input's, NUL-padded, and a fixed point. */
static void test_random(void)
{
	char comm[CG_COMM_LEN], pool[CG_COMM_LEN + 1], again[CG_COMM_LEN + 1];
	int i, j, bad = 0;

	srand(13);
	for (i = 0; i < 100000; i++) {
		for (j = 0; j < CG_COMM_LEN; j++)
			comm[j] = (char)(rand() % 4 ? '0' + rand() % 12 : rand() % 256);
		memset(pool, 'x', sizeof(pool));
		cg_pool_name(comm, pool, 0);
		for (j = (int)strnlen(pool, CG_COMM_LEN); j < CG_COMM_LEN; j++)
			bad += pool[j] != '\0';
		bad += strnlen(pool, CG_COMM_LEN) > strnlen(comm, CG_COMM_LEN - 1);
		cg_pool_name(pool, again, 0);
		bad += memcmp(pool, again, CG_COMM_LEN) != 0;
	}
	CHECK(bad == 0);
}

int main(void)
{
	test_rule();
	test_random();
	return check_done();
}
