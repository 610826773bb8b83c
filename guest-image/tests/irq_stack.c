// SPDX-License-Identifier: GPL-2.0
/*
 * An interrupt handler runs on the per-CPU interrupt stack, not on the
 * stack of the task it interrupted: the kstack_irqstack module fires a
 * pinned hrtimer while this test spins in the kernel, and reports whether
 * the hardirq handler's stack pointer lay within the test's task stack.
 * kstack_stock_thread_size= (from the host) is the arch's stock size.
 *
 * On x86_32 a device interrupt taken while a softirq runs on the softirq
 * stack must see that stack's room: the kstack_softirq module spins in a
 * tasklet just above a THREAD_SIZE boundary of the 8 KiB softirq stack
 * while the RTC interrupt comes, and DEBUG_STACKOVERFLOW must not report
 * "low stack" for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"

#define MODULE_PATH "/kstack/modules/kstack_irqstack.ko"
#define RESULT_PATH "/sys/kernel/debug/kstack_irqstack"

TEST(hardirq_handler_runs_off_the_task_stack)
{
	char line[256];
	int hardirq = -1, reader = -1, on_task = -1, fired = 0;
	unsigned long thread_size = 0, stock_size = 0;
	const char *stock_env = getenv("kstack_stock_thread_size");
	FILE *f;

	if (stock_env)
		stock_size = strtoul(stock_env, NULL, 10);

	ASSERT_EQ(0, system("insmod " MODULE_PATH))
		TH_LOG("insmod %s failed", MODULE_PATH);
	f = fopen(RESULT_PATH, "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_TRUE(fgets(line, sizeof(line), f) != NULL);
	fclose(f);
	system("rmmod kstack_irqstack");
	TH_LOG("%s", line);
	ASSERT_GE(sscanf(line, "fired=%d hardirq=%d interrupted_reader=%d on_task_stack=%d thread_size=%lu",
			 &fired, &hardirq, &reader, &on_task, &thread_size), 1);
	ASSERT_EQ(1, fired) TH_LOG("the timer did not fire");
	printf("# kstack: irq_handler_on_task_stack=%d\n", on_task);
	EXPECT_EQ(1, hardirq);
	EXPECT_EQ(1, reader) TH_LOG("the timer interrupted another task");
	/*
	 * Stock x86_32 runs system vectors (the APIC timer among them) on the
	 * stack they interrupt; with stock-size task stacks that is upstream
	 * behaviour, not a failure. Below the stock size it must not happen.
	 */
	if (on_task && stock_size && thread_size >= stock_size)
		SKIP(return, "the %lu-byte stock task stack takes the timer interrupt (upstream behaviour)",
		     thread_size);
	EXPECT_EQ(0, on_task)
		TH_LOG("the hardirq handler ran on the %lu-byte task stack", thread_size);
}

#define SOFTIRQ_MODULE "/kstack/modules/kstack_softirq.ko"
#define SOFTIRQ_RESULT "/sys/kernel/debug/kstack_softirq"
#define LOW_STACK "low stack detected by irq handler"

/* How many times the kernel log says LOW_STACK */
static int low_stack_reports(void)
{
	static char log[1 << 20];
	int n = klogctl(3, log, sizeof(log) - 1), count = 0;
	char *p = log;

	log[n > 0 ? n : 0] = '\0';
	while ((p = strstr(p, LOW_STACK))) {
		count++;
		p += strlen(LOW_STACK);
	}
	return count;
}

TEST(device_irq_in_a_deep_softirq_is_not_low_stack)
{
	int ran = -1, on_task = -1, levels = -1, irqs = -1, debug = -1, before, after;
	unsigned long left = 0, mask_left = 0, thread_size = 0, irq_stack_size = 0;
	struct utsname u;
	char line[512];
	FILE *f;

	ASSERT_EQ(0, uname(&u));
	if (!(u.machine[0] == 'i' && !strcmp(u.machine + 2, "86")))
		SKIP(return, "%s: x86_64 runs softirqs on its IRQ stack, checked by bounds", u.machine);
	before = low_stack_reports();
	ASSERT_EQ(0, system("insmod " SOFTIRQ_MODULE))
		TH_LOG("insmod %s failed (is IRQ 8, the RTC, free?)", SOFTIRQ_MODULE);
	f = fopen(SOFTIRQ_RESULT, "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_TRUE(fgets(line, sizeof(line), f) != NULL);
	fclose(f);
	system("rmmod kstack_softirq");
	after = low_stack_reports();
	TH_LOG("%s", line);
	ASSERT_EQ(9, sscanf(line, "ran=%d on_task_stack=%d levels=%d irqs=%d left=%lu mask_left=%lu "
			    "thread_size=%lu irq_stack_size=%lu debug_stackoverflow=%d",
			    &ran, &on_task, &levels, &irqs, &left, &mask_left, &thread_size,
			    &irq_stack_size, &debug));
	ASSERT_EQ(1, ran) TH_LOG("the tasklet did not run on the softirq stack");
	ASSERT_EQ(0, on_task);
	if (thread_size >= irq_stack_size)
		SKIP(return, "%lu-byte task stacks: the softirq stack is no larger, a THREAD_SIZE mask fits it",
		     thread_size);
	printf("# kstack: softirq_deep_bytes_left=%lu\n", left);
	printf("# kstack: softirq_deep_irqs=%d\n", irqs);
	/* A THREAD_SIZE mask calls this low (STACK_WARN, THREAD_SIZE / 8) ... */
	EXPECT_LT(mask_left, thread_size / 8);
	/* ... while more than a task stack's worth is free */
	EXPECT_GT(left, thread_size);
	ASSERT_GE(irqs, 5) TH_LOG("the RTC interrupt did not come while the softirq was deep");
	if (!debug)
		SKIP(return, "no DEBUG_STACKOVERFLOW in this kernel: nothing reports a low stack");
	EXPECT_EQ(before, after)
		TH_LOG("a device interrupt in a softirq %d KiB from a full stack was reported as \"" LOW_STACK "\"",
		       (int)(left / 1024));
}

TEST_HARNESS_MAIN
