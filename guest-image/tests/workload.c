// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded workload of file-system and process churn (stress-ng from the
 * image, on the ext4 root through virtio-blk) with the ftrace stack tracer
 * on: it must finish cleanly (the host's verdict catches oopses, guard page
 * hits and SCHED_STACK_END_CHECK panics), and the deepest stack the tracer
 * saw is reported, with its chain, for the summary. With the series' stack
 * check in the kernel (at its default 50%), the host's verdict lists every
 * warning it printed under the workload, with its chain, and the deepest
 * chain per stack type the check kept is shown here. No warning may name
 * a function of the stack tracer's own unwinding (the check counts those
 * entries apart), the warnings stay within their stated bound, and the
 * check's footprint below a function's entry stays within the allowance
 * its margin makes for it. Two more tests give a
 * first figure of what the check costs, off then on: the workload's bogo
 * ops per second (a 3 s run each, stack tracer off), and fork and wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/klog.h>

#include "kselftest_harness.h"

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

static long field(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	return p ? atol(p + strlen(name)) : -1;
}

/*
 * What the check printed under the workload at 50%: at most
 * 16 * (1 - 0.5) + 1 = 9 warnings per stack type, and as many as
 * stack_check/warnings says were printed; none for the stack tracer's own
 * function entries; and its footprint within the margin's allowance.
 */
static void check_warnings_of_the_workload(struct __test_metadata *_metadata)
{
	static char log[1 << 20];
	char text[4096], *line, *save = NULL;
	long printed, dropped, nested, most = -1, allowed = -1;
	int n = klogctl(3, log, sizeof(log) - 1), warnings = 0;
	FILE *f;
	size_t len;

	log[n > 0 ? n : 0] = '\0';
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *entering = strstr(line, " entering ");

		if (!strstr(line, "stack-check: warning: ") || !entering)
			continue;
		warnings++;
		EXPECT_TRUE(tracer_function(entering + 10) == NULL)
			TH_LOG("a warning names the stack tracer's own unwinding: %s", line);
	}
	f = fopen(SC_DIR "/warnings", "r");
	ASSERT_TRUE(f != NULL);
	len = fread(text, 1, sizeof(text) - 1, f);
	text[len] = '\0';
	fclose(f);
	printed = field(text, "printed: ");
	dropped = field(text, "dropped: ");
	nested = field(text, "nested: ");
	printf("# kstack: stack_check_workload_warnings=%d\n", warnings);
	printf("# kstack: stack_check_workload_dropped=%ld\n", dropped);
	printf("# kstack: stack_check_workload_nested=%ld\n", nested);
	EXPECT_EQ(printed, warnings) TH_LOG("stack_check/warnings says %ld printed", printed);
	EXPECT_GE(dropped, 0);
	/* task, hardirq, softirq and the exception stacks: 9 each at most */
	EXPECT_LE(warnings, 9 * 4);

	f = fopen(SC_DIR "/footprint", "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(2, fscanf(f, "%ld %ld", &most, &allowed));
	fclose(f);
	printf("# kstack: stack_check_footprint_bytes=%ld\n", most);
	printf("# kstack: stack_check_footprint_allowance_bytes=%ld\n", allowed);
	EXPECT_GT(most, 0);
	EXPECT_LE(most, allowed) TH_LOG("the check used %ld bytes below an entry; its margin allows %ld",
					 most, allowed);
}

TEST(stress_ng_fs_and_process_churn)
{
	char line[256];
	long max_size = -1;
	int shown = 0;
	FILE *f;

	int check = access(SC_DIR "/warn_percent", F_OK) == 0;
	int chains = access(SC_DIR "/chains", F_OK) == 0;

	if (check) {
		ASSERT_EQ(0, write_file(SC_DIR "/warn_percent", "50"));
		ASSERT_EQ(0, write_file(SC_DIR "/warnings", "reset"));
		klogctl(5, NULL, 0);	/* SYSLOG_ACTION_CLEAR */
	}
	if (chains)
		ASSERT_EQ(0, write_file(SC_DIR "/chains", "reset"));
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

	if (check)
		check_warnings_of_the_workload(_metadata);
	if (!chains)
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
			printf("# stack_check_chain: %s", line);
	}
	fclose(f);
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

TEST(stack_check_cost_on_the_workload)
{
	double off, on;

	if (access(SC_DIR "/enabled", F_OK))
		SKIP(return, "no stack check in this kernel");
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

	if (access(SC_DIR "/enabled", F_OK))
		SKIP(return, "no stack check in this kernel");
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
