// SPDX-License-Identifier: GPL-2.0
/*
 * A call chain of known depth, for the stack check's tests. Writing
 * "task <percent>" to /sys/kernel/debug/kstack_deep recurses in the
 * writer's context until that share of its task stack is in use; writing
 * "hardirq <percent>" does the same from a pinned hrtimer callback (hardirq
 * context), counting from where the callback started, against the size of
 * the IRQ stack; writing "regs <percent>" is the task run with a second
 * ftrace user on the recursion, one that wants the regs (as a kprobe or a
 * livepatch on a function does), so that its entries go through
 * ftrace_regs_caller and ftrace_ops_list_func(). Reading the file says
 * what the last run reached, and how often the second user was called
 * with regs:
 *   context=task size=8192 start=1104 deepest=5336 levels=17 frame=256 regs_hits=17 entry1=1180 entry2=1452
 * entry1 and entry2: the bytes in use at the entry of the first two levels,
 * where their return address sits, which is where the check measures.
 * Every level of the recursion is one call site: kstack_deep_recurse().
 */
#include <linux/debugfs.h>
#include <linux/ftrace.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>

#ifndef IRQ_STACK_SIZE
#define IRQ_STACK_SIZE THREAD_SIZE
#endif
#define KSTACK_DEEP_FRAME 256

static struct hrtimer kstack_timer;
static struct dentry *kstack_file;
static DEFINE_MUTEX(kstack_lock);
static unsigned long stop_sp, start_sp, deepest_sp, top, stack_size;
static unsigned int percent;
static int levels;
static bool in_irq_run, fired;
static atomic_long_t regs_hits;
static unsigned long entry_depth[2];

/* The second ftrace user: counts the entries it got regs for */
static notrace void kstack_regs_fn(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op,
				   struct ftrace_regs *fregs)
{
	if (fregs && ftrace_get_regs(fregs))
		atomic_long_inc(&regs_hits);
}

static struct ftrace_ops kstack_regs_ops = {
	.func = kstack_regs_fn,
	.flags = FTRACE_OPS_FL_SAVE_REGS,
};

static noinline int kstack_deep_recurse(int level)
{
	volatile char pad[KSTACK_DEEP_FRAME];
	int ret;

	pad[0] = level;
	/* the return address sits just above the saved frame pointer */
	if (level <= 2)
		entry_depth[level - 1] = top - sizeof(long) -
			(unsigned long)__builtin_frame_address(0);
	if (current_stack_pointer <= stop_sp) {
		deepest_sp = current_stack_pointer;
		return level;
	}
	ret = kstack_deep_recurse(level + 1);
	return ret + (pad[0] - level);	/* keeps the frame: no tail call */
}

/* Recurse until @pct percent of [top - size, top) is in use */
static void kstack_deep_run(unsigned long chain_top, unsigned long size)
{
	start_sp = current_stack_pointer;
	top = chain_top;
	stack_size = size;
	stop_sp = top - size * percent / 100;
	levels = kstack_deep_recurse(1);
}

static enum hrtimer_restart kstack_timer_fn(struct hrtimer *timer)
{
	/* the hardirq stack's top is not exported: count from here */
	kstack_deep_run(current_stack_pointer, IRQ_STACK_SIZE);
	WRITE_ONCE(fired, true);
	return HRTIMER_NORESTART;
}

/* The task run with kstack_regs_ops on kstack_deep_recurse() */
static int kstack_deep_run_with_regs(void)
{
	int err;

	atomic_long_set(&regs_hits, 0);
	err = ftrace_set_filter_ip(&kstack_regs_ops,
				   (unsigned long)kstack_deep_recurse, 0, 1);
	if (err)
		return err;
	err = register_ftrace_function(&kstack_regs_ops);
	if (err)
		return err;
	kstack_deep_run((unsigned long)task_stack_page(current) + THREAD_SIZE,
			THREAD_SIZE);
	return unregister_ftrace_function(&kstack_regs_ops);
}

static ssize_t kstack_deep_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	char buf[32], context[16];
	int spins = 0, err;

	if (count >= sizeof(buf) || copy_from_user(buf, ubuf, count))
		return -EINVAL;
	buf[count] = '\0';
	if (sscanf(buf, "%15s %u", context, &percent) != 2 || percent > 90)
		return -EINVAL;

	mutex_lock(&kstack_lock);
	levels = 0;
	if (!strcmp(context, "task")) {
		in_irq_run = false;
		kstack_deep_run((unsigned long)task_stack_page(current) +
				THREAD_SIZE, THREAD_SIZE);
	} else if (!strcmp(context, "hardirq")) {
		in_irq_run = true;
		WRITE_ONCE(fired, false);
		preempt_disable();
		hrtimer_start(&kstack_timer, ms_to_ktime(1),
			      HRTIMER_MODE_REL_PINNED_HARD);
		while (!READ_ONCE(fired) && spins++ < 100000000)
			cpu_relax();
		preempt_enable();
		if (!READ_ONCE(fired))
			hrtimer_cancel(&kstack_timer);
	} else if (!strcmp(context, "regs")) {
		in_irq_run = false;
		err = kstack_deep_run_with_regs();
		if (err)
			count = err;
	} else {
		count = -EINVAL;
	}
	mutex_unlock(&kstack_lock);
	return count;
}

static ssize_t kstack_deep_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char buf[256];
	int len;

	mutex_lock(&kstack_lock);
	len = scnprintf(buf, sizeof(buf),
			"context=%s size=%lu start=%lu deepest=%lu levels=%d frame=%d regs_hits=%ld entry1=%lu entry2=%lu\n",
			in_irq_run ? "hardirq" : "task", stack_size,
			levels ? top - start_sp : 0,
			levels ? top - deepest_sp : 0, levels,
			KSTACK_DEEP_FRAME, atomic_long_read(&regs_hits),
			entry_depth[0], entry_depth[1]);
	mutex_unlock(&kstack_lock);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations kstack_deep_fops = {
	.read = kstack_deep_read,
	.write = kstack_deep_write,
	.llseek = default_llseek,
};

static int __init kstack_deep_init(void)
{
	hrtimer_init(&kstack_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	kstack_timer.function = kstack_timer_fn;
	kstack_file = debugfs_create_file("kstack_deep", 0644, NULL, NULL,
					  &kstack_deep_fops);
	return 0;
}

static void __exit kstack_deep_exit(void)
{
	debugfs_remove(kstack_file);
	hrtimer_cancel(&kstack_timer);
	ftrace_free_filter(&kstack_regs_ops);
}

module_init(kstack_deep_init);
module_exit(kstack_deep_exit);
MODULE_DESCRIPTION("kstack test: a call chain of known stack depth");
MODULE_LICENSE("GPL");
