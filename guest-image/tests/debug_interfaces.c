// SPDX-License-Identifier: GPL-2.0
/*
 * What the stack tests rely on is there: debugfs is mounted, LKDTM's
 * trigger file exists, and the ftrace stack tracer can be read.
 */
#include <unistd.h>

#include "kselftest_harness.h"

TEST(debugfs_is_mounted)
{
	EXPECT_EQ(0, access("/sys/kernel/debug/tracing", F_OK));
}

TEST(lkdtm_trigger_exists)
{
	EXPECT_EQ(0, access("/sys/kernel/debug/provoke-crash/DIRECT", W_OK))
		TH_LOG("CONFIG_LKDTM missing?");
}

TEST(stack_tracer_is_available)
{
	EXPECT_EQ(0, access("/proc/sys/kernel/stack_tracer_enabled", W_OK));
	EXPECT_EQ(0, access("/sys/kernel/debug/tracing/stack_max_size", R_OK));
}

TEST_HARNESS_MAIN
