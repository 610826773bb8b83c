// SPDX-License-Identifier: GPL-2.0
/*
 * The series' stack check (CONFIG_X86_STACK_CHECK): the kstack_deep module
 * recurses, one call site deep, until a chosen share of the stack is in
 * use, never closer than 1 KiB to the panic that stack_check/limits states
 * (a warning must come at least a frame before it); the check must warn
 * when usage passes the threshold, then only at
 * new high-water marks a sixteenth of the stack apart (a bounded number,
 * none for a run that goes no deeper, again after a reset), name the
 * stack (task, or hardirq from a timer), move with the threshold set at
 * run time, refuse a bad threshold and keep its old value, rate-limit its
 * warnings and count what it dropped, keep its own footprint within what
 * its margin allows, and list the chain among the deepest in debugfs
 * until reset, once for one deep path; measure at the traced function's
 * entry with another ftrace user that wants the regs on it; and refuse
 * kernel.ftrace_enabled=0 while on, which would silently stop it.
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

#include "kstack_guest.h"

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
 * Count the check's warnings for @site ("" for any) on a @type stack ("" for
 * any) in the kernel log; the bytes in use of the first one go to *@used.
 */
static int warnings(const char *type, const char *site, long *used)
{
	char *log = klog(), *line, *save = NULL, want[64];
	int count = 0;

	snprintf(want, sizeof(want), *type ? "warning: %s stack " : "warning: ", type);
	for (line = strtok_r(log, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, "stack-check: warning: ");
		char *entering = strstr(line, " entering ");

		if (!p || !strstr(p, want) || !entering ||
		    strncmp(entering + 10, site, strlen(site)))
			continue;
		p = strstr(p, " stack ");
		if (used && p && !count)
			*used = atol(p + 7);
		count++;
	}
	return count;
}

/* Does the running kernel have the function @name (/proc/kallsyms)? */
static int kernel_has(const char *name)
{
	char line[512], sym[256], type;
	FILE *f = fopen("/proc/kallsyms", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %c %255s", &type, sym) == 2 &&
			(type == 't' || type == 'T') && !strcmp(sym, name);
	fclose(f);
	return found;
}

/* A "name: value" line of stack_check/warnings */
static long warnings_field(const char *name)
{
	char *p = strstr(slurp(SC_DIR "/warnings"), name);

	return p ? atol(p + strlen(name)) : -1;
}

/*
 * Where a stack warns and panics (debugfs stack_check/limits): its size,
 * the first warning, and the most in use without a panic, in bytes.
 */
struct limits {
	unsigned long size, warn_at, panic_past;
};

static int read_limits(const char *type, struct limits *l)
{
	char *p = slurp(SC_DIR "/limits"), want[32];
	int n = snprintf(want, sizeof(want), "%s ", type);

	for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, want, n))
			return sscanf(p + n, "%lu %lu %lu", &l->size, &l->warn_at,
				      &l->panic_past) == 3 ? 0 : EIO;
	return ENOENT;
}

static int pct(unsigned long bytes, unsigned long size)
{
	return bytes * 100 / size;
}

/*
 * A level of kstack_deep's recursion: its 256-byte pad (the module says
 * "frame=256"), the saved registers, the return address and alignment.
 */
#define LEVEL 320
/* What an interrupt's entry may add on the task stack (x86_32) */
#define IRQ_ENTRY 384

/*
 * A run stops in the first level whose body is past its target, so its
 * deepest checked entry is at most a LEVEL short of the target and its
 * deepest point at most a LEVEL past it.
 * past_warning(): the least run, in percent, whose deepest entry is past
 * the first warning.
 * deepest_safe(): the deepest a run may go, in percent, with an interrupt
 * on top of its deepest level still short of the panic.
 */
static int past_warning(const struct limits *l)
{
	return (l->warn_at + LEVEL) * 100 / l->size + 1;
}

static int deepest_safe(const struct limits *l)
{
	return pct(l->panic_past - LEVEL - IRQ_ENTRY, l->size);
}

/*
 * The most warnings one stack type may give between @from bytes in use
 * and the panic: one at the first mark, then one per sixteenth of it.
 */
static int most_warnings(unsigned long from, const struct limits *l)
{
	return (l->panic_past - from) / (l->size / 16) + 1;
}

struct deep {
	char context[16];
	unsigned long size, start, deepest;
	int levels, frame;
};

static int deep_run(const char *how, struct deep *d)
{
	int err = put(DEEP, how);

	if (err)
		return err;
	memset(d, 0, sizeof(*d));
	if (sscanf(slurp(DEEP), "context=%15s size=%lu start=%lu deepest=%lu levels=%d frame=%d",
		   d->context, &d->size, &d->start, &d->deepest, &d->levels,
		   &d->frame) != 6)
		return EIO;
	return 0;
}

static int read_percent(void)
{
	return atoi(slurp(SC_DIR "/warn_percent"));
}

FIXTURE(check) {
	int present;
	const char *absent;	/* why not, when not present */
	struct limits task, irq;
	int deep;	/* a task run whose deepest entry is past the warning */
};

/*
 * kselftest_harness.h of 6.1 runs the test body after a SKIP in the
 * fixture's setup: each test asks again.
 */
#define REQUIRE_CHECK() do {						\
	if (!self->present)						\
		SKIP(return, "%s", self->absent);			\
} while (0)

FIXTURE_SETUP(check)
{
	const char *want = getenv("kstack_stack_check");

	self->present = 0;
	self->absent = "no stack check in this kernel";
	if (access(SC_DIR "/warn_percent", F_OK)) {
		/*
		 * The check's first commits (its panic, then its warnings)
		 * come before its debugfs files: its overflow boots test
		 * those. A build with the option and neither is a failure.
		 */
		if (want && !strcmp(want, "1") && kernel_has("stack_check_call")) {
			self->absent = "this kernel's stack check has no " SC_DIR
				       " files yet: its overflow boots test it";
			SKIP(return, "%s", self->absent);
		}
		ASSERT_FALSE(want && !strcmp(want, "1"))
			TH_LOG("the build has CONFIG_X86_STACK_CHECK=y but neither %s nor stack_check_call() in /proc/kallsyms",
			       SC_DIR);
		SKIP(return, "no stack check in this kernel");
	}
	if (access(DEEP, F_OK))
		ASSERT_EQ(0, system("insmod " MODULE_PATH))
			TH_LOG("insmod %s failed", MODULE_PATH);
	ASSERT_EQ(0, put(SC_DIR "/enabled", "1"));
	ASSERT_EQ(0, put(SC_DIR "/warn_percent", "50"));
	ASSERT_EQ(0, put(SC_DIR "/warnings", "reset"));
	ASSERT_EQ(0, read_limits("task", &self->task))
		TH_LOG("no task line in %s/limits", SC_DIR);
	ASSERT_EQ(0, read_limits("hardirq", &self->irq))
		TH_LOG("no hardirq line in %s/limits", SC_DIR);
	self->deep = past_warning(&self->task);
	klog_clear();
	self->present = 1;
}

FIXTURE_TEARDOWN(check)
{
	if (self->present)
		put(SC_DIR "/warn_percent", "50");
	if (self->present && !access(SC_DIR "/checkpoints", F_OK))
		put(SC_DIR "/checkpoints", "all");
}

/* deep_run() to @percent of the @context ("task", "hardirq") stack */
static int run_to(const char *context, int percent, struct deep *d)
{
	char how[32];

	snprintf(how, sizeof(how), "%s %d", context, percent > 1 ? percent : 1);
	return deep_run(how, d);
}

TEST_F(check, limits_leave_a_frame_between_the_warning_and_the_panic)
{
	struct limits *t = &self->task;

	REQUIRE_CHECK();
	printf("# kstack: stack_check_task_warn_at_bytes=%lu\n", t->warn_at);
	printf("# kstack: stack_check_task_panic_past_bytes=%lu\n", t->panic_past);
	EXPECT_LE(t->warn_at, t->size / 2);
	/* at least a frame of CONFIG_FRAME_WARN (1024 or more) apart */
	EXPECT_GE(t->panic_past - t->warn_at, 1024);
	/* the margin takes at most half of the stack */
	EXPECT_GE(t->panic_past, t->size / 2);
	EXPECT_LT(t->panic_past, t->size);
	/* a run can pass the warning and still stay clear of the panic */
	EXPECT_LE(self->deep, deepest_safe(t))
		TH_LOG("a run to %d%% passes the warning at %lu, but may panic past %lu of %lu bytes",
		       self->deep, t->warn_at, t->panic_past, t->size);
	/* a lower threshold is taken as it is; a write says so in limits */
	ASSERT_EQ(0, put(SC_DIR "/warn_percent", "10"));
	ASSERT_EQ(0, read_limits("task", t));
	EXPECT_EQ(t->size * 10 / 100, t->warn_at);
}

TEST_F(check, warns_at_the_threshold_then_at_new_high_water_marks)
{
	struct limits *t = &self->task;
	struct deep d;
	long first = -1;
	int n;
	char *log;

	REQUIRE_CHECK();
	/* a run that stays under the threshold: no warning for it */
	ASSERT_EQ(0, run_to("task", pct(t->warn_at - 1024, t->size), &d));
	ASSERT_STREQ("task", d.context);
	ASSERT_LT(d.deepest, t->warn_at) TH_LOG("the shallow run went too deep");
	EXPECT_EQ(0, warnings("task", SITE, NULL))
		TH_LOG("warned at %lu of %lu bytes, under the threshold at %lu",
		       d.deepest, d.size, t->warn_at);

	ASSERT_EQ(0, run_to("task", self->deep, &d));
	ASSERT_GE(d.deepest * 100, d.size * self->deep);
	ASSERT_LE(d.frame + 64, LEVEL) TH_LOG("kstack_deep's frame grew: %d bytes", d.frame);
	n = warnings("task", "", &first);
	printf("# kstack: stack_check_task_warnings_to_deepest=%d\n", n);
	ASSERT_GE(n, 1)
		TH_LOG("no warning for the chain that reached %lu of %lu bytes", d.deepest, d.size);
	EXPECT_LE(n, most_warnings(t->warn_at, t))
		TH_LOG("%d warnings for one run to %d%%", n, self->deep);
	EXPECT_GE(warnings("task", SITE, NULL), 1) TH_LOG("no warning names the recursion");
	printf("# kstack: stack_check_task_warning_percent=%d\n", pct(first, t->size));
	EXPECT_GE(first, (long)t->warn_at);
	/* the first checked entry past it: within a level and an interrupt */
	EXPECT_LT(first, (long)t->warn_at + 1024) TH_LOG("the warning came late: %ld bytes", first);
	log = klog();
	EXPECT_TRUE(strstr(log, "stack-check:  kstack_deep_write+") != NULL)
		TH_LOG("the warning's call chain does not reach the module's write handler");
	EXPECT_EQ(n, warnings_field("printed: "));

	/* no deeper than before: no new mark, no warning */
	ASSERT_EQ(0, run_to("task", self->deep, &d));
	EXPECT_EQ(n, warnings("task", "", NULL)) TH_LOG("a run no deeper warned again");

	/* a reset starts over */
	ASSERT_EQ(0, put(SC_DIR "/warnings", "reset"));
	EXPECT_EQ(0, warnings_field("printed: "));
	klog_clear();
	ASSERT_EQ(0, run_to("task", self->deep, &d));
	EXPECT_GE(warnings("task", "", NULL), 1) TH_LOG("no warning after a reset");
}

TEST_F(check, warnings_are_rate_limited_and_the_dropped_counted)
{
	struct deep d;
	long printed, dropped;
	int i, n;

	REQUIRE_CHECK();
	/*
	 * From 1% to the deepest safe run, four times over (a write to
	 * warn_percent clears the marks, not the rate limit's window): more
	 * marks than the 10 warnings a 5 s burst may print.
	 */
	ASSERT_EQ(0, put(SC_DIR "/warnings", "reset"));
	klog_clear();
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, put(SC_DIR "/warn_percent", "1"));
		ASSERT_EQ(0, run_to("task", self->deep, &d));
	}
	ASSERT_EQ(0, put(SC_DIR "/warn_percent", "50"));
	n = warnings("", "", NULL);
	printed = warnings_field("printed: ");
	dropped = warnings_field("dropped: ");
	printf("# kstack: stack_check_warnings_at_1_percent=%d dropped=%ld\n", n, dropped);
	EXPECT_EQ(printed, n) TH_LOG("stack_check/warnings says %ld printed, the log has %d", printed, n);
	/* the reset started a window of 5 s: the runs are well within it */
	EXPECT_LE(n, 10);
	EXPECT_GE(dropped, 1) TH_LOG("%d printed and none dropped for four runs", n);
}

TEST_F(check, footprint_stays_within_the_margin_allowance)
{
	struct deep d;
	long most = -1, allowed = -1;

	REQUIRE_CHECK();
	/* with another ftrace user on, ftrace_ops_list_func() adds its frame */
	ASSERT_EQ(0, put("/proc/sys/kernel/stack_tracer_enabled", "1"));
	ASSERT_EQ(0, run_to("task", self->deep, &d));
	ASSERT_EQ(0, run_to("hardirq", deepest_safe(&self->irq), &d));
	ASSERT_EQ(0, put("/proc/sys/kernel/stack_tracer_enabled", "0"));
	ASSERT_EQ(2, sscanf(slurp(SC_DIR "/footprint"), "%ld %ld", &most, &allowed));
	printf("# kstack: stack_check_footprint_bytes=%ld of %ld\n", most, allowed);
	EXPECT_GT(most, 0);
	EXPECT_LE(most, allowed);
}

TEST_F(check, moving_the_threshold_moves_the_warning)
{
	struct limits *t = &self->task;
	struct deep d;
	long first = -1, first_site = -1;
	int below, at, n;
	char want[16];

	REQUIRE_CHECK();
	/* halfway between where the write handler starts and the default */
	ASSERT_EQ(0, run_to("task", 1, &d));
	at = (pct(d.start, t->size) + pct(t->warn_at, t->size)) / 2 + 2;
	snprintf(want, sizeof(want), "%d", at);
	ASSERT_EQ(0, put(SC_DIR "/warn_percent", want));
	ASSERT_EQ(at, read_percent());
	/* a new rate-limit window: the earlier tests' warnings drop none here */
	ASSERT_EQ(0, put(SC_DIR "/warnings", "reset"));
	klog_clear();
	/* two levels under it; the recursion's entries are above its deepest */
	below = at - (2 * d.frame * 100 / (int)t->size + 2);
	ASSERT_EQ(0, run_to("task", below, &d));
	ASSERT_LT(d.deepest * 100, t->size * at) TH_LOG("the run under %d%% reached %lu", at, d.deepest);
	EXPECT_EQ(0, warnings("task", SITE, NULL))
		TH_LOG("warned under %d%%: the run reached %lu", at, d.deepest);
	ASSERT_EQ(0, run_to("task", self->deep, &d));
	/*
	 * The high-water marks are the system's: another task (a kworker in
	 * writeback, say) may cross the new threshold first and raise the
	 * mark past this run. Whoever warns first, it is at the threshold;
	 * and the recursion, when it is first, warns within a level of it.
	 */
	n = warnings("task", "", &first);
	ASSERT_GE(n + warnings_field("dropped: "), 1)
		TH_LOG("a run to %d%% passed %d%% and nothing warned", self->deep, at);
	printf("# kstack: stack_check_moved_threshold_percent=%d\n", at);
	if (!n)
		return;
	printf("# kstack: stack_check_moved_warning_percent=%d\n", pct(first, t->size));
	EXPECT_GE(first * 100, (long)(t->size * at)) TH_LOG("the first warning came at %ld", first);
	if (warnings("task", SITE, &first_site) && first_site == first) {
		EXPECT_LT(first, (long)(t->size * at / 100) + 1024);
	} else {
		TH_LOG("another function warned first, at %ld bytes: the recursion %s", first,
		       first_site < 0 ? "did not warn" : "warned after it");
	}
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
	klog_clear();
	ASSERT_EQ(0, put(SC_DIR "/enabled", "0"));
	EXPECT_EQ(0, atoi(slurp(SC_DIR "/enabled")));
	/* off on a 4 KiB task stack, nothing stops an overflow: it says so */
	if (self->task.size < 8192) {
		EXPECT_TRUE(strstr(klog(), "stack-check: off, on 4 KiB task stacks without guard pages: an overflow corrupts memory silently") != NULL)
			TH_LOG("off on a %lu-byte task stack, and no warning says what that means", self->task.size);
	} else {
		EXPECT_TRUE(strstr(klog(), "stack-check: off\n") != NULL) TH_LOG("off, and the log does not say so");
	}
	klog_clear();
	EXPECT_STREQ("", slurp(enabled)) TH_LOG("off, but functions still have a callback");
	ASSERT_EQ(0, run_to("task", self->deep, &d));
	ASSERT_GE(d.deepest * 100, d.size * self->deep);
	EXPECT_EQ(0, warnings("task", "", NULL)) TH_LOG("warned while off");
	ASSERT_EQ(0, put(SC_DIR "/enabled", "1"));
	EXPECT_NE('\0', slurp(enabled)[0]);
	/* a warning from before "off" (an interrupt's, say) may hold the mark */
	ASSERT_EQ(0, put(SC_DIR "/warnings", "reset"));
	ASSERT_EQ(0, run_to("task", self->deep, &d));
	EXPECT_GE(warnings("task", SITE, NULL), 1) TH_LOG("no warning once on again");
}

TEST_F(check, ftrace_enabled_0_is_refused_while_the_check_is_on)
{
	const char *sysctl = "/proc/sys/kernel/ftrace_enabled";

	REQUIRE_CHECK();
	/* ftrace_enabled=0 would stop every callback, the check's with them */
	EXPECT_EQ(EBUSY, put(sysctl, "0"))
		TH_LOG("kernel.ftrace_enabled=0 taken while the check is on: it would stop checking without a word");
	EXPECT_EQ(1, atoi(slurp(sysctl)));
	/* if it was taken, the tests after this one still need ftrace on */
	put(sysctl, "1");
	/* it is the check that refuses it: off, it is taken */
	ASSERT_EQ(0, put("/proc/sys/kernel/stack_tracer_enabled", "0"));
	ASSERT_EQ(0, put(SC_DIR "/enabled", "0"));
	EXPECT_EQ(0, put(sysctl, "0"));
	EXPECT_EQ(0, put(sysctl, "1"));
	ASSERT_EQ(1, atoi(slurp(sysctl)));
	ASSERT_EQ(0, put(SC_DIR "/enabled", "1"));
	EXPECT_EQ(1, atoi(slurp(SC_DIR "/enabled")));
}

TEST_F(check, hardirq_chain_names_the_hardirq_stack)
{
	struct deep d;

	REQUIRE_CHECK();
	ASSERT_EQ(0, run_to("hardirq", deepest_safe(&self->irq), &d));
	ASSERT_STREQ("hardirq", d.context);
	ASSERT_GT(d.levels, 0) TH_LOG("the timer did not fire");
	EXPECT_GE(warnings("hardirq", SITE, NULL), 1)
		TH_LOG("no hardirq-stack warning for a chain %lu bytes deep on a %lu-byte stack",
		       d.deepest, d.size);
	EXPECT_LE(warnings("hardirq", "", NULL), most_warnings(self->irq.warn_at, &self->irq));
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
	ASSERT_EQ(0, run_to("task", self->deep, &d));
	/*
	 * Read with the check off: printing the chains (symbol_string() has
	 * a 680-byte frame on x86_32) goes about as deep as the run, and
	 * would replace its chains while they are being read.
	 */
	ASSERT_EQ(0, put(SC_DIR "/enabled", "0"));
	chains = slurp(SC_DIR "/chains");
	ASSERT_EQ(0, put(SC_DIR "/enabled", "1"));
	ASSERT_TRUE(strstr(chains, "task stack: chain 1: ") != NULL) TH_LOG("%s", chains);
	/*
	 * The chain may be kept under an interrupt that came on top of it
	 * (x86_32 enters interrupts on the task stack up to the switch):
	 * look for its frames.
	 */
	EXPECT_TRUE(strstr(chains, "kstack_deep_recurse+") != NULL) TH_LOG("%s", chains);
	EXPECT_TRUE(strstr(chains, "kstack_deep_write+") != NULL) TH_LOG("%s", chains);
	EXPECT_TRUE(strstr(chains, "Depth    Size   Function") != NULL);

	ASSERT_EQ(0, put(SC_DIR "/chains", "reset"));
	chains = slurp(SC_DIR "/chains");
	EXPECT_TRUE(strstr(chains, "kstack_deep_recurse+") == NULL)
		TH_LOG("the module's chain outlived the reset:\n%s", chains);
}

/*
 * The bytes in use that a warning for the recursion names are those at the
 * entry of one of its levels (where the return address sits), not at the
 * check's own frames: a level's entry is entry1 + k * (entry2 - entry1).
 */
static void expect_at_a_level_entry(struct __test_metadata *_metadata,
				    long used, const char *run)
{
	char *p = strstr(slurp(DEEP), " entry1=");
	long entry1 = -1, entry2 = -1, stride;

	ASSERT_TRUE(p != NULL) TH_LOG("kstack_deep gives no entry depths");
	ASSERT_EQ(2, sscanf(p, " entry1=%ld entry2=%ld", &entry1, &entry2));
	stride = entry2 - entry1;
	printf("# kstack: stack_check_%s_warned_at=%ld level_entry1=%ld level_stride=%ld\n",
	       run, used, entry1, stride);
	ASSERT_GT(stride, 0);
	EXPECT_EQ(0, (used - entry1) % stride)
		TH_LOG("the %s run warned at %ld bytes, not at a level's entry (%ld + k * %ld)",
		       run, used, entry1, stride);
}

/*
 * With a second ftrace user on the recursion that wants the regs (a kprobe
 * or a livepatch would), its entries go through ftrace_regs_caller and
 * ftrace_ops_list_func(): the check still measures at the traced
 * function's entry, warns for the recursion with its call chain, and
 * nothing oopses (x86_32's ftrace_regs_caller leaves an encoded frame
 * pointer, 0x7fffffff-masked, that a frame walk must not follow).
 */
TEST_F(check, a_second_ftrace_user_with_regs_keeps_the_check_at_the_entry)
{
	struct limits *t = &self->task;
	struct deep d;
	long first = -1, hits;
	char *p, *log;

	REQUIRE_CHECK();
	ASSERT_EQ(0, run_to("task", self->deep, &d));
	ASSERT_GE(warnings("task", SITE, &first), 1) TH_LOG("no warning names the recursion");
	expect_at_a_level_entry(_metadata, first, "task");

	ASSERT_EQ(0, put(SC_DIR "/warnings", "reset"));
	klog_clear();
	ASSERT_EQ(0, run_to("regs", self->deep, &d))
		TH_LOG("the run with a second ftrace user failed");
	p = strstr(slurp(DEEP), "regs_hits=");
	ASSERT_TRUE(p != NULL);
	hits = atol(p + 10);
	printf("# kstack: stack_check_regs_run_levels=%d regs_hits=%ld\n", d.levels, hits);
	EXPECT_GE(hits, d.levels) TH_LOG("the second user did not get the regs at every level");
	ASSERT_GE(d.deepest * 100, d.size * self->deep);
	first = -1;
	ASSERT_GE(warnings("task", SITE, &first), 1) TH_LOG("no warning names the recursion");
	EXPECT_GE(first, (long)t->warn_at);
	expect_at_a_level_entry(_metadata, first, "regs");
	log = klog();
	EXPECT_TRUE(strstr(log, "stack-check:  kstack_deep_write+") != NULL)
		TH_LOG("the warning's call chain does not reach the module's write handler");
	EXPECT_TRUE(strstr(log, "BUG: ") == NULL && strstr(log, "Oops") == NULL)
		TH_LOG("the kernel oopsed in the run:\n%s", log);
}

/*
 * With checkpoints (a list of "name segment" lines, as make stack-depth's
 * checkpoints.tsv has them) the check runs at their entries only: a run of
 * the recursion warns for it, and for nothing else, when it is on the
 * list, and warns for nothing when only the shallow write handler is;
 * names the kernel does not have are counted; a bad line is refused and
 * the list kept; "all" checks every function again.
 */
TEST_F(check, checkpoints_check_only_the_listed_functions)
{
	struct deep d;
	long warn_at, panic_past;
	int n, deep;

	REQUIRE_CHECK();
	if (access(SC_DIR "/checkpoints", F_OK))
		SKIP(return, "this kernel's stack check has no checkpoints file");
	ASSERT_EQ(0, put(SC_DIR "/checkpoints",
			 "# a list for a test\nkstack_deep_recurse 320 a level\nno_such_function_anywhere 100\n"));
	EXPECT_TRUE(strstr(slurp(SC_DIR "/checkpoints"), "checkpoints: 1\n") != NULL)
		TH_LOG("%s", slurp(SC_DIR "/checkpoints"));
	EXPECT_TRUE(strstr(slurp(SC_DIR "/checkpoints"), "unknown names: 1\n") != NULL)
		TH_LOG("%s", slurp(SC_DIR "/checkpoints"));
	/* with checkpoints the warning comes where that file says */
	warn_at = file_field(SC_DIR "/checkpoints", "warn at");
	panic_past = file_field(SC_DIR "/checkpoints", "panic past");
	ASSERT_GT(warn_at, 0) TH_LOG("%s", slurp(SC_DIR "/checkpoints"));
	ASSERT_LT(warn_at + 2 * LEVEL + IRQ_ENTRY, panic_past)
		TH_LOG("no room for a run past the warning: %s", slurp(SC_DIR "/checkpoints"));
	deep = pct(warn_at + LEVEL, self->task.size) + 1;
	ASSERT_EQ(0, put(SC_DIR "/warnings", "reset"));
	klog_clear();
	ASSERT_EQ(0, run_to("task", deep, &d));
	n = warnings("task", "", NULL);
	printf("# kstack: stack_check_checkpoint_warnings=%d\n", n);
	EXPECT_GE(warnings("task", SITE, NULL), 1) TH_LOG("no warning names the recursion, a checkpoint");
	EXPECT_EQ(n, warnings("task", SITE, NULL)) TH_LOG("a function that is not a checkpoint warned");

	ASSERT_EQ(0, put(SC_DIR "/checkpoints", "kstack_deep_write 64\n"));
	ASSERT_EQ(0, put(SC_DIR "/warnings", "reset"));
	klog_clear();
	ASSERT_EQ(0, run_to("task", deep, &d));
	EXPECT_EQ(0, warnings("task", "", NULL)) TH_LOG("a warning with only the write handler checked");

	EXPECT_NE(0, put(SC_DIR "/checkpoints", "kstack_deep_recurse lots\n"));
	EXPECT_TRUE(strstr(slurp(SC_DIR "/checkpoints"), "checkpoints: 1\n") != NULL)
		TH_LOG("a refused list replaced the one before: %s", slurp(SC_DIR "/checkpoints"));
	ASSERT_EQ(0, put(SC_DIR "/checkpoints", "all"));
	EXPECT_TRUE(strstr(slurp(SC_DIR "/checkpoints"), "checkpoints: all\n") != NULL);
}

TEST_HARNESS_MAIN
