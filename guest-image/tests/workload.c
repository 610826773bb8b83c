// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded workload of file-system and process churn (stress-ng from the
 * image, on the ext4 root through virtio-blk) with the ftrace stack tracer
 * on: it must finish cleanly (the host's verdict catches oopses, guard page
 * hits and SCHED_STACK_END_CHECK panics), and the deepest stack the tracer
 * saw is reported, with its chain, for the summary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#define TRACING "/sys/kernel/debug/tracing"

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

TEST(stress_ng_fs_and_process_churn)
{
	char line[256];
	long max_size = -1;
	int shown = 0;
	FILE *f;

	ASSERT_EQ(0, write_file(TRACING "/stack_max_size", "0"));
	ASSERT_EQ(0, write_file("/proc/sys/kernel/stack_tracer_enabled", "1"));
	EXPECT_EQ(0, system("cd /var/tmp && stress-ng --timeout 6s --fork 2 --dir 1 "
			    "--dentry 1 --hdd 1 --hdd-bytes 2M --metrics-brief 2>&1 | "
			    "sed 's/^/# stress-ng: /'"));
	ASSERT_EQ(0, write_file("/proc/sys/kernel/stack_tracer_enabled", "0"));

	f = fopen(TRACING "/stack_max_size", "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(1, fscanf(f, "%ld", &max_size));
	fclose(f);
	printf("# kstack: stack_max_size=%ld\n", max_size);

	/* The chain: the deepest frames first, as the stack tracer lists them. */
	f = fopen(TRACING "/stack_trace", "r");
	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f) && shown++ < 24)
		printf("# stack_trace: %s", line);
	fclose(f);
	EXPECT_GT(max_size, 0);
}

TEST_HARNESS_MAIN
