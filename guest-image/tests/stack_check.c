// SPDX-License-Identifier: GPL-2.0
/*
 * The series' stack check (CONFIG_X86_STACK_CHECK): the kstack_deep module
 * recurses, one call site deep, until a chosen share of the stack is in
 * use; the check must warn exactly once for that site when usage passes
 * the threshold, name the stack (task, or hardirq from a timer), move with
 * the threshold set at run time, refuse a bad threshold and keep its old
 * value, and list the chain among the deepest in debugfs until reset.
 * kstack_stack_check=1 (from the host: the build has the option) makes a
 * missing check a failure; without it the tests skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define SC_DIR "/sys/kernel/debug/stack_check"
#define DEEP "/sys/kernel/debug/kstack_deep"
#define MODULE_PATH "/kstack/modules/kstack_deep.ko"
#define SITE "kstack_deep_recurse+"

/* Write @s to @path in one write(); 0 or the errno */
static int put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) < 0)
		err = errno;
	close(fd);
	return err;
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	ssize_t n;
	int fd = open(path, O_RDONLY), len = 0;

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	while (len < (int)sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(fd);
	return buf;
}

static char *klog(void)
{
	static char buf[1 << 20];
	int n = klogctl(3, buf, sizeof(buf) - 1);	/* SYSLOG_ACTION_READ_ALL */

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void klog_clear(void)
{
	klogctl(5, NULL, 0);	/* SYSLOG_ACTION_CLEAR */
}

/*
 * Count the check's warnings for @site on a @type stack in the kernel log;
 * the percent of the last one goes to *@percent.
 */
static int warnings(const char *type, const char *site, int *percent)
{
	char *log = klog(), *line, *save = NULL, want[64];
	int count = 0;

	snprintf(want, sizeof(want), "warning: %s stack ", type);
	for (line = strtok_r(log, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, "stack-check: warning: ");
		char *entering = strstr(line, " entering ");

		if (!p || !strstr(p, want) || !entering ||
		    strncmp(entering + 10, site, strlen(site)))
			continue;
		count++;
		p = strchr(p, '(');
		if (percent && p)
			*percent = atoi(p + 1);
	}
	return count;
}

struct deep {
	char context[16];
	unsigned long size, start, deepest;
	int levels;
};

static int deep_run(const char *how, struct deep *d)
{
	int err = put(DEEP, how);

	if (err)
		return err;
	memset(d, 0, sizeof(*d));
	if (sscanf(slurp(DEEP), "context=%15s size=%lu start=%lu deepest=%lu levels=%d",
		   d->context, &d->size, &d->start, &d->deepest, &d->levels) != 5)
		return EIO;
	return 0;
}

static int read_percent(void)
{
	return atoi(slurp(SC_DIR "/warn_percent"));
}

FIXTURE(check) {
	int present;
};

/*
 * kselftest_harness.h of 6.1 runs the test body after a SKIP in the
 * fixture's setup: each test asks again.
 */
#define REQUIRE_CHECK() do {						\
	if (!self->present)						\
		SKIP(return, "no stack check in this kernel");		\
} while (0)

FIXTURE_SETUP(check)
{
	const char *want = getenv("kstack_stack_check");

	self->present = 0;
	if (access(SC_DIR "/warn_percent", F_OK)) {
		ASSERT_FALSE(want && !strcmp(want, "1"))
			TH_LOG("the build has CONFIG_X86_STACK_CHECK=y but %s is missing", SC_DIR);
		SKIP(return, "no stack check in this kernel");
	}
	if (access(DEEP, F_OK))
		ASSERT_EQ(0, system("insmod " MODULE_PATH))
			TH_LOG("insmod %s failed", MODULE_PATH);
	ASSERT_EQ(0, put(SC_DIR "/enabled", "1"));
	ASSERT_EQ(0, put(SC_DIR "/warn_percent", "50"));
	ASSERT_EQ(0, put(SC_DIR "/warned_sites", "forget"));
	klog_clear();
	self->present = 1;
}

FIXTURE_TEARDOWN(check)
{
	if (self->present)
		put(SC_DIR "/warn_percent", "50");
}

TEST_F(check, warns_once_per_site_at_the_threshold)
{
	struct deep d;
	int percent = -1;
	char *log;

	REQUIRE_CHECK();
	ASSERT_EQ(0, deep_run("task 35", &d));
	ASSERT_STREQ("task", d.context);
	ASSERT_GE(d.deepest * 100, d.size * 35);
	EXPECT_EQ(0, warnings("task", SITE, NULL))
		TH_LOG("warned at %lu of %lu bytes, under the 50%% threshold", d.deepest, d.size);

	ASSERT_EQ(0, deep_run("task 65", &d));
	ASSERT_GE(d.deepest * 100, d.size * 65);
	ASSERT_EQ(1, warnings("task", SITE, &percent))
		TH_LOG("no single warning for the chain that reached %lu of %lu bytes", d.deepest, d.size);
	printf("# kstack: stack_check_task_warning_percent=%d\n", percent);
	EXPECT_GE(percent, 50);
	EXPECT_LT(percent, 60) TH_LOG("the warning came late: %d%%", percent);
	log = klog();
	EXPECT_TRUE(strstr(log, "stack-check:  kstack_deep_write+") != NULL)
		TH_LOG("the warning's call chain does not reach the module's write handler");

	ASSERT_EQ(0, deep_run("task 65", &d));
	EXPECT_EQ(1, warnings("task", SITE, NULL)) TH_LOG("the same site warned twice");
	EXPECT_TRUE(strstr(slurp(SC_DIR "/warned_sites"), "kstack_deep_recurse+") != NULL);
}

TEST_F(check, moving_the_threshold_moves_the_warning)
{
	struct deep d;
	int percent = -1;

	REQUIRE_CHECK();
	ASSERT_EQ(0, put(SC_DIR "/warn_percent", "30"));
	ASSERT_EQ(30, read_percent());
	ASSERT_EQ(0, deep_run("task 25", &d));
	EXPECT_EQ(0, warnings("task", SITE, NULL)) TH_LOG("warned under 30%%");
	ASSERT_EQ(0, deep_run("task 40", &d));
	ASSERT_EQ(1, warnings("task", SITE, &percent));
	printf("# kstack: stack_check_task_warning_percent_at_30=%d\n", percent);
	EXPECT_GE(percent, 30);
	EXPECT_LT(percent, 40);
}

TEST_F(check, bad_threshold_is_refused_and_the_old_one_kept)
{
	const char *bad[] = { "0", "100", "150", "-5", "abc", "50x" };
	char want[96];
	unsigned int i;

	REQUIRE_CHECK();
	ASSERT_EQ(0, put(SC_DIR "/warn_percent", "45"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(EINVAL, put(SC_DIR "/warn_percent", bad[i]))
			TH_LOG("'%s' was not refused", bad[i]);
		EXPECT_EQ(45, read_percent()) TH_LOG("'%s' changed the threshold", bad[i]);
		snprintf(want, sizeof(want), "warn_percent '%s' refused: give a whole percent from 1 to 99",
			 bad[i]);
		EXPECT_TRUE(strstr(klog(), want) != NULL) TH_LOG("no message: %s", want);
	}
	EXPECT_EQ(EINVAL, put(SC_DIR "/enabled", "2"));
	EXPECT_EQ(1, atoi(slurp(SC_DIR "/enabled")));
}

TEST_F(check, off_means_no_callback_and_no_warning)
{
	const char *enabled = "/sys/kernel/debug/tracing/enabled_functions";
	struct deep d;

	REQUIRE_CHECK();
	/* no other ftrace user may be on for this: the stack tracer is off */
	ASSERT_EQ(0, put("/proc/sys/kernel/stack_tracer_enabled", "0"));
	EXPECT_NE('\0', slurp(enabled)[0]) TH_LOG("on, but no function has a callback");
	ASSERT_EQ(0, put(SC_DIR "/enabled", "0"));
	EXPECT_EQ(0, atoi(slurp(SC_DIR "/enabled")));
	EXPECT_STREQ("", slurp(enabled)) TH_LOG("off, but functions still have a callback");
	ASSERT_EQ(0, deep_run("task 65", &d));
	ASSERT_GE(d.deepest * 100, d.size * 65);
	EXPECT_EQ(0, warnings("task", SITE, NULL)) TH_LOG("warned while off");
	ASSERT_EQ(0, put(SC_DIR "/enabled", "1"));
	EXPECT_NE('\0', slurp(enabled)[0]);
	ASSERT_EQ(0, deep_run("task 65", &d));
	EXPECT_EQ(1, warnings("task", SITE, NULL)) TH_LOG("no warning once on again");
}

TEST_F(check, hardirq_chain_names_the_hardirq_stack)
{
	struct deep d;

	REQUIRE_CHECK();
	ASSERT_EQ(0, deep_run("hardirq 60", &d));
	ASSERT_STREQ("hardirq", d.context);
	ASSERT_GT(d.levels, 0) TH_LOG("the timer did not fire");
	EXPECT_EQ(1, warnings("hardirq", SITE, NULL))
		TH_LOG("no single hardirq-stack warning for a chain %lu bytes deep on a %lu-byte stack",
		       d.deepest, d.size);
	EXPECT_EQ(0, warnings("task", SITE, NULL));
}

TEST_F(check, deepest_chains_are_kept_until_reset)
{
	struct deep d;
	char *chains;

	REQUIRE_CHECK();
	if (access(SC_DIR "/chains", F_OK))
		SKIP(return, "no chains report in this kernel (the commit after the check adds it)");
	ASSERT_EQ(0, put(SC_DIR "/chains", "reset"));
	ASSERT_EQ(0, deep_run("task 65", &d));
	chains = slurp(SC_DIR "/chains");
	ASSERT_TRUE(strstr(chains, "task stack: chain 1: ") != NULL) TH_LOG("%s", chains);
	/*
	 * The chain may be kept under an interrupt that came on top of it
	 * (x86_32 exits interrupts on the task stack): look for its frames.
	 */
	EXPECT_TRUE(strstr(chains, "kstack_deep_recurse+") != NULL) TH_LOG("%s", chains);
	EXPECT_TRUE(strstr(chains, "kstack_deep_write+") != NULL) TH_LOG("%s", chains);
	EXPECT_TRUE(strstr(chains, "Depth    Size   Function") != NULL);

	ASSERT_EQ(0, put(SC_DIR "/chains", "reset"));
	chains = slurp(SC_DIR "/chains");
	EXPECT_TRUE(strstr(chains, "kstack_deep_recurse+") == NULL)
		TH_LOG("the module's chain outlived the reset:\n%s", chains);
}

TEST_HARNESS_MAIN
