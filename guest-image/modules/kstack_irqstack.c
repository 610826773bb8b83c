// SPDX-License-Identifier: GPL-2.0
/*
 * Where does an interrupt handler run? Reading
 * /sys/kernel/debug/kstack_irqstack arms a pinned hrtimer on this CPU and
 * spins until it fires; the callback runs in hardirq context and records
 * its stack pointer and the bounds of the task stack it interrupted (the
 * reader's). The file then says whether the handler ran on that task
 * stack: it must not, whatever size the task stack is.
 */
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>

static struct hrtimer kstack_timer;
static unsigned long handler_sp, task_stack_lo, task_stack_hi;
static bool handler_in_hardirq;
static bool fired;
static struct dentry *kstack_dir;

static enum hrtimer_restart kstack_timer_fn(struct hrtimer *timer)
{
	handler_sp = current_stack_pointer;
	task_stack_lo = (unsigned long)task_stack_page(current);
	task_stack_hi = task_stack_lo + THREAD_SIZE;
	handler_in_hardirq = in_hardirq();
	WRITE_ONCE(fired, true);
	return HRTIMER_NORESTART;
}

static int kstack_irqstack_show(struct seq_file *m, void *v)
{
	unsigned long reader_lo = (unsigned long)task_stack_page(current);
	int spins = 0;

	WRITE_ONCE(fired, false);
	preempt_disable();
	hrtimer_start(&kstack_timer, ms_to_ktime(1), HRTIMER_MODE_REL_PINNED_HARD);
	while (!READ_ONCE(fired) && spins++ < 100000000)
		cpu_relax();
	preempt_enable();
	if (!READ_ONCE(fired)) {
		hrtimer_cancel(&kstack_timer);
		seq_puts(m, "fired=0\n");
		return 0;
	}
	seq_printf(m, "fired=1 hardirq=%d interrupted_reader=%d on_task_stack=%d thread_size=%lu\n",
		   handler_in_hardirq, task_stack_lo == reader_lo,
		   handler_sp - task_stack_lo < task_stack_hi - task_stack_lo,
		   (unsigned long)THREAD_SIZE);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kstack_irqstack);

static int __init kstack_irqstack_init(void)
{
	hrtimer_init(&kstack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	kstack_timer.function = kstack_timer_fn;
	kstack_dir = debugfs_create_file("kstack_irqstack", 0444, NULL, NULL,
					 &kstack_irqstack_fops);
	return 0;
}

static void __exit kstack_irqstack_exit(void)
{
	debugfs_remove(kstack_dir);
	hrtimer_cancel(&kstack_timer);
}

module_init(kstack_irqstack_init);
module_exit(kstack_irqstack_exit);
MODULE_DESCRIPTION("kstack test: does an interrupt handler run on the task stack?");
MODULE_LICENSE("GPL");
