// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel that booted is the one the host built: tools/build stamps the
 * version string with the source tree's id ("kstack <tree>"), and the boot
 * runner passes the same id as kstack_tree= on the command line, which the
 * kernel hands to init as an environment variable.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"

TEST(booted_kernel_is_the_one_built)
{
	const char *tree = getenv("kstack_tree");
	char want[64];
	struct utsname uts;

	ASSERT_TRUE(tree != NULL) TH_LOG("kstack_tree= missing from the kernel command line");
	ASSERT_EQ(0, uname(&uts));
	snprintf(want, sizeof(want), "kstack %s", tree);
	TH_LOG("uname -r: %s, uname -v: %s", uts.release, uts.version);
	EXPECT_TRUE(strstr(uts.version, want) != NULL)
		TH_LOG("version '%s' does not name tree %s", uts.version, tree);
}

TEST_HARNESS_MAIN
