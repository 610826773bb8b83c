// SPDX-License-Identifier: GPL-2.0
/*
 * What does a device interrupt taken in a softirq see of the stack it
 * interrupted? Reading /sys/kernel/debug/kstack_softirq schedules a
 * tasklet and runs it from local_bh_enable(), which on x86 starts softirqs
 * on the per-CPU softirq stack. The tasklet recurses until its stack
 * pointer lies just above a THREAD_SIZE boundary of that stack: "low" by
 * a THREAD_SIZE mask, with more than THREAD_SIZE in fact free when the
 * softirq stack is larger than the task stack (x86_32 with 4 KiB task
 * stacks). It spins there, interrupts on, until the RTC's periodic
 * interrupt (IRQ 8, a device interrupt: __handle_irq() and its
 * DEBUG_STACKOVERFLOW check) has come five times on this CPU. The file
 * says where it spun and how many interrupts came; the guest test looks
 * in the kernel log for a false "low stack" report.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/mc146818rtc.h>
#include <linux/module.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>

#define KSTACK_RTC_IRQ	8
#define KSTACK_IRQS	5

static struct dentry *kstack_file;
static int target_cpu = -1;
static int spinning, irqs_while_deep, on_task_stack, levels;
static unsigned long deep_left, deep_mask_left;

static irqreturn_t kstack_rtc_irq(int irq, void *dev)
{
	spin_lock(&rtc_lock);
	CMOS_READ(RTC_INTR_FLAGS);	/* acknowledges the periodic interrupt */
	spin_unlock(&rtc_lock);
	if (READ_ONCE(spinning) && smp_processor_id() == READ_ONCE(target_cpu))
		WRITE_ONCE(irqs_while_deep, irqs_while_deep + 1);
	return IRQ_HANDLED;
}

static void spin_deep(unsigned long sp)
{
	unsigned long end = jiffies + msecs_to_jiffies(500);

	deep_left = sp & (IRQ_STACK_SIZE - 1);
	deep_mask_left = sp & (THREAD_SIZE - 1);
	WRITE_ONCE(spinning, 1);
	while (READ_ONCE(irqs_while_deep) < KSTACK_IRQS && time_before(jiffies, end))
		cpu_relax();
	WRITE_ONCE(spinning, 0);
}

/* Down to just above the THREAD_SIZE boundary of the IRQ stack, or not at all */
static noinline int kstack_deeper(int n)
{
	volatile char pad[48];
	unsigned long sp = current_stack_pointer;

	pad[0] = n;
	if ((sp & (IRQ_STACK_SIZE - 1)) > THREAD_SIZE + 256 && n < 512)
		return kstack_deeper(n + 1) + pad[0];
	levels = n;
	spin_deep(sp);
	return pad[0];
}

static void kstack_tasklet_fn(unsigned long data)
{
	on_task_stack = object_is_on_stack((void *)current_stack_pointer);
	if (!on_task_stack)
		kstack_deeper(0);
}
static DECLARE_TASKLET_OLD(kstack_tasklet, kstack_tasklet_fn);

static int kstack_softirq_show(struct seq_file *m, void *v)
{
	int cpu, tries;

	migrate_disable();
	cpu = smp_processor_id();
	irq_set_affinity(KSTACK_RTC_IRQ, cpumask_of(cpu));
	msleep(50);		/* the IO-APIC moves it at its next interrupt */
	WRITE_ONCE(target_cpu, cpu);
	/* ksoftirqd may take the tasklet, on its task stack: try again */
	for (tries = 0; tries < 5; tries++) {
		WRITE_ONCE(irqs_while_deep, 0);
		levels = -1;
		deep_left = 0;
		local_bh_disable();
		tasklet_schedule(&kstack_tasklet);
		local_bh_enable();
		tasklet_unlock_wait(&kstack_tasklet);
		if (levels >= 0 && !on_task_stack)
			break;
		msleep(20);
	}
	WRITE_ONCE(target_cpu, -1);
	migrate_enable();
	seq_printf(m, "ran=%d on_task_stack=%d levels=%d irqs=%d left=%lu mask_left=%lu thread_size=%lu irq_stack_size=%lu debug_stackoverflow=%d\n",
		   levels >= 0, on_task_stack, levels, irqs_while_deep, deep_left,
		   deep_mask_left, (unsigned long)THREAD_SIZE,
		   (unsigned long)IRQ_STACK_SIZE,
		   IS_ENABLED(CONFIG_DEBUG_STACKOVERFLOW));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kstack_softirq);

static void kstack_rtc_periodic(bool on)
{
	unsigned long flags;
	unsigned char ctl;

	spin_lock_irqsave(&rtc_lock, flags);
	if (on)		/* rate 6: 1024 Hz */
		CMOS_WRITE((CMOS_READ(RTC_FREQ_SELECT) & 0xf0) | 0x06, RTC_FREQ_SELECT);
	ctl = CMOS_READ(RTC_CONTROL);
	CMOS_WRITE(on ? ctl | RTC_PIE : ctl & ~RTC_PIE, RTC_CONTROL);
	CMOS_READ(RTC_INTR_FLAGS);
	spin_unlock_irqrestore(&rtc_lock, flags);
}

static int __init kstack_softirq_init(void)
{
	int ret = request_irq(KSTACK_RTC_IRQ, kstack_rtc_irq, 0, "kstack_softirq", NULL);

	if (ret) {
		pr_err("kstack_softirq: IRQ %d (RTC) not available: %d\n", KSTACK_RTC_IRQ, ret);
		return ret;
	}
	kstack_rtc_periodic(true);
	kstack_file = debugfs_create_file("kstack_softirq", 0444, NULL, NULL,
					  &kstack_softirq_fops);
	return 0;
}

static void __exit kstack_softirq_exit(void)
{
	debugfs_remove(kstack_file);
	kstack_rtc_periodic(false);
	free_irq(KSTACK_RTC_IRQ, NULL);
	tasklet_kill(&kstack_tasklet);
}

module_init(kstack_softirq_init);
module_exit(kstack_softirq_exit);
MODULE_DESCRIPTION("kstack test: a device interrupt in a deep softirq");
MODULE_LICENSE("GPL");
