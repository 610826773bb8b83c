// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel stack bytes per thread, measured: KernelStack: in /proc/meminfo
 * before and after starting N threads that block, divided by N. It must be
 * the size the kernel was built with, passed by the host as
 * kstack_thread_size= on the kernel command line.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kstack_guest.h"

#define NR_THREADS 200

static int block_fds[2];

static void *blocked_thread(void *arg)
{
	char c;

	(void)arg;
	/* Returns when the main thread closes the write end. */
	while (read(block_fds[0], &c, 1) < 0)
		;
	return NULL;
}

TEST(kernel_stack_bytes_per_thread)
{
	const char *want_env = getenv("kstack_thread_size");
	pthread_t threads[NR_THREADS];
	long before, after, per_thread, want;
	int i, started = 0;

	ASSERT_TRUE(want_env != NULL) TH_LOG("kstack_thread_size= missing from the command line");
	want = atol(want_env);
	ASSERT_EQ(0, pipe(block_fds));
	before = meminfo_kb("KernelStack");
	ASSERT_GT(before, 0);
	for (i = 0; i < NR_THREADS; i++) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		if (pthread_create(&threads[i], &attr, blocked_thread, NULL) != 0)
			break;
		started++;
	}
	ASSERT_EQ(NR_THREADS, started);
	usleep(100 * 1000);
	after = meminfo_kb("KernelStack");
	close(block_fds[1]);
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);

	per_thread = (after - before) * 1024 / NR_THREADS;
	TH_LOG("KernelStack: %ld kB before, %ld kB after %d threads", before, after, NR_THREADS);
	printf("# kstack: kernel_stack_bytes_per_thread=%ld\n", per_thread);
	/* Other tasks come and go meanwhile: allow 2 % of the total. */
	EXPECT_LE(labs(per_thread - want), want / 50)
		TH_LOG("%ld bytes per thread, expected %ld", per_thread, want);
}

TEST_HARNESS_MAIN
