// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded workload of file-system and process churn (stress-ng from the
 * image, on the ext4 root through virtio-blk) with the ftrace stack tracer
 * on: it must finish cleanly (the host's verdict catches oopses, guard page
 * hits and SCHED_STACK_END_CHECK panics), and the deepest stack the tracer
 * saw is reported, with its chain, for the summary. With the series' stack
 * check in the kernel (at its default 50%), the host's verdict lists every
 * warning it printed under the workload, with its chain, and the deepest
 * chain per stack type the check kept is shown here. No warning may come
 * from the stack tracer's own unwinding (the check counts the entries in
 * its callback apart; lockdep's unwinding, with the same functions, may
 * warn), the warnings stay within their stated bound, and the check's
 * footprint below a function's entry stays within the allowance its
 * margin makes for it, as do the entries of an interrupt that came during
 * a check, below the checked entry (on a preemptible kernel the
 * interrupt's exit, which may schedule there, within the check's footprint
 * and that allowance together). A second workload takes the paths that
 * overflowed small stacks before: writeback of a file system on a loop
 * device while memory runs short and reclaim swaps to a swap file, with
 * the same reports (keys with _pressure); on a 4 KiB task stack it runs
 * in a boot of its own (kstack_pressure=). A short run of the first
 * workload at a 30% threshold counts the warnings against their bound
 * there. Two more tests give a first figure of what the check costs, off
 * then on: the workload's bogo ops per second (a 3 s run each, stack
 * tracer off), and fork and wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <sys/klog.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "kstack_guest.h"

#define TRACING "/sys/kernel/debug/tracing"
#define SC_DIR "/sys/kernel/debug/stack_check"

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* The stack tracer's callback and the unwinding it does */
static const char *const tracer_functions[] = {
	"stack_trace_call", "check_stack", "stack_trace_save", "arch_stack_walk",
	"stack_trace_consume_entry", "unwind_", "__unwind_", "orc_", "__orc_",
	"update_stack_state", "get_stack_info", "in_task_stack", "in_irq_stack",
	"in_entry_stack", "in_exception_stack", "stack_access_ok",
	"kernel_text_address", "__kernel_text_address", "is_ftrace_trampoline",
	"ftrace_graph_ret_addr", "is_bpf_text_address", "bpf_ksym_find",
	"is_module_text_address", "__module_text_address", "__module_address",
	"core_kernel_text", "init_kernel_text", "ftrace_ops_trampoline",
	"is_kprobe_optinsn_slot", "is_kprobe_insn_slot", "__is_insn_slot_addr",
};

static const char *tracer_function(const char *entering)
{
	unsigned int i;

	for (i = 0; i < sizeof(tracer_functions) / sizeof(tracer_functions[0]); i++)
		if (!strncmp(entering, tracer_functions[i], strlen(tracer_functions[i])))
			return tracer_functions[i];
	return NULL;
}

/*
 * A frame of the stack tracer's callback in a warning's chain: lockdep
 * saves its stack traces with the same unwinder (save_trace() ->
 * stack_trace_save() -> arch_stack_walk()), and the check may warn there
 * as anywhere; it must not in the unwinding the stack tracer does inside
 * its ftrace callback, which the check counts apart.
 */
static int tracer_callback(const char *frame)
{
	return strstr(frame, " stack_trace_call+") || strstr(frame, " check_stack+");
}

/* CONFIG_PREEMPT(_DYNAMIC): "#1 SMP PREEMPT ..." in uname -v */
static int preemptible_kernel(void)
{
	struct utsname u;

	return uname(&u) == 0 && strstr(u.version, " PREEMPT") != NULL;
}

static long field(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	return p ? atol(p + strlen(name)) : -1;
}

/*
 * What the check printed under the workload at @percent: at most
 * 16 * (1 - percent / 100) + 1 warnings per stack type (9 at 50%, 12 at
 * 30%), and as many as stack_check/warnings says were printed; none for
 * the stack tracer's own function entries; and its footprint within the
 * margin's allowance.
 */
static void check_warnings_of_the_workload(struct __test_metadata *_metadata,
					   const char *suffix, int percent)
{
	static char log[1 << 20];
	char text[4096], *line, *save = NULL;
	long printed, dropped, nested, most = -1, allowed = -1;
	long in_check = -1, in_check_allowed = -1, nested_most = -1;
	char in_check_fn[128] = "-", nested_stack[32] = "-", nested_fn[128] = "-";
	int n = klogctl(3, log, sizeof(log) - 1), warnings = 0, in_tracer = 0;
	const char *warning = NULL;
	FILE *f;
	size_t len;

	log[n > 0 ? n : 0] = '\0';
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *entering = strstr(line, " entering ");

		if (strstr(line, "stack-check: warning: ") && entering) {
			warnings++;
			warning = line;
			in_tracer = tracer_function(entering + 10) != NULL;
			continue;
		}
		/* the warning's chain, one frame a line, after its CPU line */
		if (!warning || strstr(line, "; call chain:"))
			continue;
		if (!strstr(line, "stack-check:  ")) {
			warning = NULL;
			continue;
		}
		EXPECT_FALSE(in_tracer && tracer_callback(line))
			TH_LOG("a warning comes from the stack tracer's own unwinding: %s, through %s",
			       warning, line);
	}
	f = fopen(SC_DIR "/warnings", "r");
	ASSERT_TRUE(f != NULL);
	len = fread(text, 1, sizeof(text) - 1, f);
	text[len] = '\0';
	fclose(f);
	printed = field(text, "printed: ");
	dropped = field(text, "dropped: ");
	nested = field(text, "nested: ");
	printf("# kstack: stack_check_workload_warnings%s=%d\n", suffix, warnings);
	printf("# kstack: stack_check_workload_dropped%s=%ld\n", suffix, dropped);
	printf("# kstack: stack_check_workload_nested%s=%ld\n", suffix, nested);
	EXPECT_EQ(printed, warnings) TH_LOG("stack_check/warnings says %ld printed", printed);
	EXPECT_GE(dropped, 0);
	/* task, hardirq, softirq and the exception stacks */
	EXPECT_LE(warnings, (16 * (100 - percent) / 100 + 1) * 4);

	f = fopen(SC_DIR "/footprint", "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(2, fscanf(f, "%ld %ld", &most, &allowed));
	/* the function entered, when the kernel names it */
	if (fscanf(f, "%ld %ld %127s", &in_check, &in_check_allowed, in_check_fn) < 2)
		in_check = in_check_allowed = -1;
	/* the same on another stack, where a nested interrupt runs in full */
	if (fscanf(f, "%ld %31s %127s", &nested_most, nested_stack, nested_fn) < 1)
		nested_most = -1;
	fclose(f);
	printf("# kstack: stack_check_footprint_bytes%s=%ld\n", suffix, most);
	printf("# kstack: stack_check_footprint_allowance_bytes%s=%ld\n", suffix, allowed);
	EXPECT_GT(most, 0);
	EXPECT_LE(most, allowed) TH_LOG("the check used %ld bytes below an entry; its margin allows %ld",
					 most, allowed);
	/* entries in an interrupt during a check: 0 when none came */
	printf("# kstack: stack_check_in_check_bytes%s=%ld\n", suffix, in_check);
	printf("# kstack: stack_check_in_check_allowance_bytes%s=%ld\n", suffix, in_check_allowed);
	printf("# kstack: stack_check_in_check_function%s=%s\n", suffix, in_check_fn);
	printf("# kstack: stack_check_in_check_other_bytes%s=%ld\n", suffix, nested_most);
	printf("# kstack: stack_check_in_check_other_stack%s=%s\n", suffix, nested_stack);
	printf("# kstack: stack_check_in_check_other_function%s=%s\n", suffix, nested_fn);
	EXPECT_GE(in_check, 0);
	EXPECT_GE(nested_most, 0);
	if (preemptible_kernel() &&
	    !strncmp(in_check_fn, "raw_irqentry_exit_cond_resched+", 31)) {
		/*
		 * The interrupt's exit preempting the check: it schedules on
		 * the task stack below the check, as after an interrupt
		 * anywhere, and the kernel checks it with the whole margin.
		 * What the untraced entry and exit code and the check's own
		 * frames used before it must still be within the room the
		 * check keeps below the entry: its footprint and the
		 * interrupt's allowance.
		 */
		printf("# kstack: stack_check_in_check_is_the_interrupt_exit%s=1\n", suffix);
		EXPECT_LE(in_check, allowed + in_check_allowed)
			TH_LOG("the exit of an interrupt during a check entered %s %ld bytes below the checked entry; the margin keeps %ld below it",
			       in_check_fn, in_check, allowed + in_check_allowed);
		return;
	}
	EXPECT_LE(in_check, in_check_allowed)
		TH_LOG("an interrupt during a check entered a function %ld bytes below the checked entry on the task stack; the margin keeps %ld for it",
		       in_check, in_check_allowed);
}

/*
 * The stack tracer's own unwinding, at every new deepest stack, runs on the
 * stack it measures: with a timer interrupt on top, about 400 bytes below a
 * traced function's entry on x86_32. With the check in a kernel with 4 KiB
 * task stacks that is more than the check's margin leaves (its overflow
 * check counts another callback's frames too, as it must): a workload of
 * 2 KiB with the tracer on panicked at 2408 bytes used, past 2400; on
 * x86_64 with 8 KiB, writeback under memory pressure with the tracer on
 * panicked at 5320, past 5312, in the tracer's unwinder. With the check in
 * a kernel with small task stacks, the depth comes from its chains alone.
 */
static int tracer_fits(void)
{
	const char *size = getenv("kstack_thread_size");

	return !(size && atol(size) <= 8192 && access(SC_DIR "/enabled", F_OK) == 0);
}

/*
 * kstack_pressure= from the host: "own-boot" in a boot whose kernel leaves
 * the memory-pressure workload to a boot of its own (a 4 KiB task stack,
 * where the check may stop it: the host's verdict accepts a clean panic of
 * the check there), "only" in that boot, which runs nothing else.
 */
static int pressure_is(const char *mode)
{
	const char *m = getenv("kstack_pressure");

	return m && !strcmp(m, mode);
}

#define SKIP_IN_THE_PRESSURE_BOOT()					\
	do {								\
		if (pressure_is("only"))				\
			SKIP(return, "the memory-pressure boot runs that workload alone"); \
	} while (0)

/* The check's threshold under the workloads, and at the second run */
#define WORKLOAD_PERCENT 50
#define LOW_PERCENT 30

/*
 * Reset the stack tracer (when @tracer), the check's warnings (at
 * @percent) and its chains
 */
static void start_watch(struct __test_metadata *_metadata, int percent, int tracer)
{
	char text[16];

	snprintf(text, sizeof(text), "%d", percent);
	if (access(SC_DIR "/warn_percent", F_OK) == 0) {
		ASSERT_EQ(0, write_file(SC_DIR "/warn_percent", text));
		ASSERT_EQ(0, write_file(SC_DIR "/warnings", "reset"));
		klogctl(5, NULL, 0);	/* SYSLOG_ACTION_CLEAR */
	}
	if (access(SC_DIR "/chains", F_OK) == 0)
		ASSERT_EQ(0, write_file(SC_DIR "/chains", "reset"));
	if (!tracer)
		return;
	if (!tracer_fits()) {
		printf("# kstack: stack_tracer=off (a small task stack with the check has no room for its unwinding)\n");
		return;
	}
	ASSERT_EQ(0, write_file(TRACING "/stack_max_size", "0"));
	ASSERT_EQ(0, write_file("/proc/sys/kernel/stack_tracer_enabled", "1"));
}

static void start_depth_watch(struct __test_metadata *_metadata)
{
	start_watch(_metadata, WORKLOAD_PERCENT, 1);
}

/*
 * What the stack tracer and the check saw since start_depth_watch(): the
 * deepest stack and its chain, the check's warnings and its first chain
 * per stack type. @suffix tells one workload's keys from another's.
 */
static void report_depth(struct __test_metadata *_metadata, const char *suffix)
{
	char line[256];
	long max_size = -1;
	int shown = 0;
	FILE *f;

	if (tracer_fits()) {
		ASSERT_EQ(0, write_file("/proc/sys/kernel/stack_tracer_enabled", "0"));
		f = fopen(TRACING "/stack_max_size", "r");
		ASSERT_TRUE(f != NULL);
		ASSERT_EQ(1, fscanf(f, "%ld", &max_size));
		fclose(f);
		printf("# kstack: stack_max_size%s=%ld\n", suffix, max_size);

		/* The chain: the deepest frames first, as the stack tracer lists them. */
		f = fopen(TRACING "/stack_trace", "r");
		ASSERT_TRUE(f != NULL);
		while (fgets(line, sizeof(line), f) && shown++ < 24)
			printf("# stack_trace%s: %s", suffix, line);
		fclose(f);
		EXPECT_GT(max_size, 0);
	}

	if (access(SC_DIR "/warn_percent", F_OK) == 0)
		check_warnings_of_the_workload(_metadata, suffix, WORKLOAD_PERCENT);
	if (access(SC_DIR "/chains", F_OK))
		return;
	/* The first chain the check kept for each stack type, as it has it */
	f = fopen(SC_DIR "/chains", "r");
	ASSERT_TRUE(f != NULL);
	shown = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, ": chain 1: "))
			shown = 1;
		else if (strstr(line, ": chain "))
			shown = 0;
		if (shown)
			printf("# stack_check_chain%s: %s", suffix, line);
	}
	fclose(f);
}

TEST(stress_ng_fs_and_process_churn)
{
	SKIP_IN_THE_PRESSURE_BOOT();
	start_depth_watch(_metadata);
	EXPECT_EQ(0, system("cd /var/tmp && stress-ng --timeout 6s --fork 2 --dir 1 "
			    "--dentry 1 --hdd 1 --hdd-bytes 2M --metrics-brief 2>&1 | "
			    "sed 's/^/# stress-ng: /'"));
	report_depth(_metadata, "");
}

#define LOOP_IMG "/var/tmp/kstack-loop.img"
#define LOOP_DIR "/mnt/kstack-loop"
#define SWAP_FILE "/var/tmp/kstack-swap"
#define WRITE_MB 48

/*
 * Touch more anonymous memory than is available, so that reclaim writes
 * pages out to swap, then touch it all once more (swap-in). Exit 0 when
 * done, 2 when it could not allocate; the pages swapped out, in KiB, go
 * to @fd.
 */
static void memory_hog(long bytes, int fd)
{
	long page = sysconf(_SC_PAGESIZE), off, swapped = 0, free_kb;
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int round;

	if (p == MAP_FAILED)
		_exit(2);
	for (round = 0; round < 2; round++) {
		for (off = 0; off < bytes; off += page)
			p[off] = (char)(off / page + round);
		free_kb = meminfo_kb("SwapFree");
		if (meminfo_kb("SwapTotal") - free_kb > swapped)
			swapped = meminfo_kb("SwapTotal") - free_kb;
	}
	if (write(fd, &swapped, sizeof(swapped)) != sizeof(swapped))
		_exit(3);
	_exit(0);
}

/* Write WRITE_MB to a file on the loop file system, then fsync it */
static int write_loop_file(void)
{
	static char buf[1 << 20];
	int fd = open(LOOP_DIR "/data", O_WRONLY | O_CREAT | O_TRUNC, 0600), i, ok = 1;

	if (fd < 0)
		return -1;
	for (i = 0; i < WRITE_MB && ok; i++) {
		memset(buf, 'a' + i % 26, sizeof(buf));
		ok = write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf);
	}
	if (fsync(fd))
		ok = 0;
	return close(fd) == 0 && ok ? 0 : -1;
}

static void undo_pressure_setup(void)
{
	if (system("swapoff " SWAP_FILE " 2>/dev/null; umount " LOOP_DIR " 2>/dev/null; "
		   "rm -f " SWAP_FILE " " LOOP_IMG "; rmdir " LOOP_DIR " 2>/dev/null") == -1)
		perror("cleanup");
}

/*
 * Writeback under memory pressure with swap on, through a file system on a
 * loop device: ext4 on loop on ext4 on virtio-blk, while a child touches
 * more memory than the guest has free, so that the writer, the loop
 * worker and reclaim meet. The pressure must be real (pages went to swap)
 * and the hog must not be killed; the depth is reported as above. Under
 * TCG it takes longer than the harness's default 30 s.
 */
FIXTURE(pressure) {
	int ready;
};

FIXTURE_SETUP(pressure)
{
	self->ready = 0;
	if (pressure_is("own-boot"))
		return;
	undo_pressure_setup();
	ASSERT_EQ(0, system("truncate -s 192M " LOOP_IMG " && mkfs.ext4 -q -F " LOOP_IMG
			    " && mkdir -p " LOOP_DIR " && mount -o loop " LOOP_IMG " " LOOP_DIR))
		TH_LOG("could not make an ext4 file system on a loop device");
	ASSERT_EQ(0, system("dd if=/dev/zero of=" SWAP_FILE " bs=1M count=128 status=none && "
			    "chmod 600 " SWAP_FILE " && mkswap -q " SWAP_FILE " >/dev/null && "
			    "swapon " SWAP_FILE))
		TH_LOG("could not turn on a swap file");
	self->ready = 1;
}

FIXTURE_TEARDOWN(pressure)
{
	undo_pressure_setup();
}

TEST_F_TIMEOUT(pressure, writeback_on_a_loop_fs_with_swap, 150)
{
	long avail_kb, swapped = -1;
	int pipefd[2], status = -1, wrote;
	pid_t hog;

	if (pressure_is("own-boot"))
		SKIP(return, "on a %s-byte task stack this runs in a boot of its own, where the stack check may stop it",
		     getenv("kstack_thread_size") ? getenv("kstack_thread_size") : "small");
	ASSERT_TRUE(self->ready);
	avail_kb = meminfo_kb("MemAvailable");
	ASSERT_GT(avail_kb, 0);
	ASSERT_EQ(0, pipe(pipefd));

	start_depth_watch(_metadata);
	hog = fork();
	ASSERT_GE(hog, 0);
	if (hog == 0) {
		close(pipefd[0]);
		/* 64 MiB more than is available: well within the swap file */
		memory_hog((avail_kb + 64 * 1024) * 1024, pipefd[1]);
	}
	close(pipefd[1]);
	wrote = write_loop_file();
	waitpid(hog, &status, 0);
	if (read(pipefd[0], &swapped, sizeof(swapped)) != sizeof(swapped))
		swapped = -1;
	close(pipefd[0]);
	report_depth(_metadata, "_pressure");

	printf("# kstack: pressure_mem_available_kb=%ld\n", avail_kb);
	printf("# kstack: pressure_swapped_kb=%ld\n", swapped);
	EXPECT_EQ(0, wrote) TH_LOG("writing %d MiB to the loop file system failed", WRITE_MB);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the memory hog did not finish: status 0x%x", status);
	EXPECT_GT(swapped, 0) TH_LOG("nothing went to swap: no memory pressure");
}

static double fork_wait_us(int rounds)
{
	struct timespec a, b;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < rounds; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		waitpid(pid, NULL, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / rounds;
}

/* Total bogo ops per second (real time) of a short run of the workload */
static double workload_ops_per_s(void)
{
	FILE *p = popen("cd /var/tmp && stress-ng --timeout 3s --fork 2 --dir 1 --dentry 1 "
			"--hdd 1 --hdd-bytes 2M --metrics-brief 2>&1", "r");
	char line[256], name[32];
	double ops, real, usr, sys, rate, total = 0;
	char *at;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		at = strstr(line, "] ");
		if (!strstr(line, "metrc:") || !at ||
		    sscanf(at + 2, "%31s %lf %lf %lf %lf %lf", name, &ops, &real, &usr, &sys,
			   &rate) != 6)
			continue;
		if (!strcmp(name, "fork") || !strcmp(name, "dir") ||
		    !strcmp(name, "dentry") || !strcmp(name, "hdd"))
			total += rate;
	}
	return pclose(p) == 0 ? total : -1;
}

/*
 * The same short workload with the threshold at 30%: the warnings stay
 * within their bound (12 per stack type), and what the rate limit held
 * back is counted in stack_check/warnings. The stack tracer stays off:
 * this counts the check's own warnings.
 */
TEST(warnings_at_30_percent_stay_within_their_bound)
{
	SKIP_IN_THE_PRESSURE_BOOT();
	if (access(SC_DIR "/warn_percent", F_OK))
		SKIP(return, "no stack check in this kernel, or not its debugfs files yet");
	ASSERT_EQ(0, write_file("/proc/sys/kernel/stack_tracer_enabled", "0"));
	start_watch(_metadata, LOW_PERCENT, 0);
	EXPECT_GT(workload_ops_per_s(), 0);
	check_warnings_of_the_workload(_metadata, "_at_30", LOW_PERCENT);
	ASSERT_EQ(0, write_file(SC_DIR "/warn_percent", "50"));
}

TEST(stack_check_cost_on_the_workload)
{
	double off, on;

	SKIP_IN_THE_PRESSURE_BOOT();
	if (access(SC_DIR "/enabled", F_OK))
		SKIP(return, "no stack check in this kernel, or not its debugfs files yet");
	ASSERT_EQ(0, write_file("/proc/sys/kernel/stack_tracer_enabled", "0"));
	ASSERT_EQ(0, write_file(SC_DIR "/enabled", "0"));
	off = workload_ops_per_s();
	ASSERT_EQ(0, write_file(SC_DIR "/enabled", "1"));
	on = workload_ops_per_s();
	ASSERT_GT(off, 0);
	ASSERT_GT(on, 0);
	printf("# kstack: workload_ops_per_s_check_off=%.1f\n", off);
	printf("# kstack: workload_ops_per_s_check_on=%.1f\n", on);
	printf("# kstack: workload_slower_with_check_percent=%.0f\n", (off - on) * 100 / off);
}

TEST(stack_check_cost_on_fork_and_wait)
{
	double off, on;

	SKIP_IN_THE_PRESSURE_BOOT();
	if (access(SC_DIR "/enabled", F_OK))
		SKIP(return, "no stack check in this kernel, or not its debugfs files yet");
	fork_wait_us(200);	/* warm up */
	ASSERT_EQ(0, write_file(SC_DIR "/enabled", "0"));
	off = fork_wait_us(1500);
	ASSERT_EQ(0, write_file(SC_DIR "/enabled", "1"));
	on = fork_wait_us(1500);
	printf("# kstack: fork_wait_us_check_off=%.1f\n", off);
	printf("# kstack: fork_wait_us_check_on=%.1f\n", on);
	printf("# kstack: stack_check_slowdown_percent=%.0f\n", (on - off) * 100 / off);
	EXPECT_GT(off, 0);
}

TEST_HARNESS_MAIN
