// SPDX-License-Identifier: GPL-2.0
/*
 * kstack's guest benchmark: what a smaller task stack saves and what the
 * stack check costs, measured in one boot, printed one figure a line for
 * the host (tools/bench collects them, tools/benchstat takes the medians
 * and ratios over the boots of a run):
 *
 *   kstack-bench: begin uptime=<s>
 *   kstack-bench: metric <name> <value> <unit>
 *   kstack-bench: error <name> <what went wrong>
 *   kstack-bench: end
 *
 * A figure that could not be measured is an error line, never a number:
 * the host turns it into an error of the run. It reports; nothing here
 * fails because a machine is slow.
 *
 *   bench [--quick | --soak SECONDS]
 *
 * --quick: small counts, for the host's own test and a first look.
 * --soak: the figures' code in turn, quietly, as a varied workload for
 * SECONDS, with "kstack-bench: sample <t> <name> <value> <unit>" lines
 * (the check's deepest chain per stack type so far, its warnings) a
 * minute apart, then the soak's figures (make bench SOAK=).
 *
 * In the guest (kstack_bench= in its environment: the kernel command line)
 * it raises threads-max and pid_max for the thread figures, with
 * kstack_bench_tracer=1 turns the ftrace stack tracer on first, and with
 * kstack_bench_checkpoints=1 gives the check the checkpoints list on the
 * payload disk first (use_checkpoints()).
 * KSTACK_BENCH_DIR= names the folder of the file loop (default /var/tmp,
 * /tmp with --quick).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kstack_guest.h"

static int quick;
static int errors;

/* a soak runs the figures' code as its workload, without their lines */
static int quiet;

static void metric(const char *name, double value, const char *unit)
{
	if (quiet)
		return;
	printf("kstack-bench: metric %s %.3f %s\n", name, value, unit);
	fflush(stdout);
}

static void error(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("kstack-bench: error %s ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	errors++;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The first number in a file (/proc/uptime: seconds since boot), or -1 */
static double read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	double v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%lf", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* --- memory: KernelStack per blocked thread ------------------------------ */

static int wake_fd[2];
static volatile int started;

static void *blocked_thread(void *arg)
{
	char c;

	(void)arg;
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	/* blocks until the writer end is closed */
	while (read(wake_fd[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/*
 * KernelStack: grows by the task stack of each thread (THREAD_SIZE, with
 * VMAP_STACK its pages). @n threads on the smallest user stacks, all
 * blocked in read() at once: the delta over them is the figure.
 */
static void kernel_stack_per_thread(int n)
{
	pthread_t *threads = calloc(n, sizeof(*threads));
	pthread_attr_t attr;
	long before, during = -1;
	char name[64];
	int i, made = 0, err = 0;
	double waited;

	snprintf(name, sizeof(name), "kernel_stack_bytes_per_thread_%d", n);
	if (!threads || pipe(wake_fd)) {
		error(name, "no memory or pipe for %d threads", n);
		free(threads);
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
	started = 0;
	before = meminfo_kb("KernelStack");
	for (i = 0; i < n; i++) {
		err = pthread_create(&threads[i], &attr, blocked_thread, NULL);
		if (err)
			break;
		made++;
	}
	waited = now_s();
	while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < made && now_s() - waited < 60)
		usleep(1000);
	if (made == n && started == n)
		during = meminfo_kb("KernelStack");
	close(wake_fd[1]);
	for (i = 0; i < made; i++)
		pthread_join(threads[i], NULL);
	close(wake_fd[0]);
	pthread_attr_destroy(&attr);
	free(threads);
	if (made < n)
		error(name, "pthread_create failed after %d of %d threads: %s", made, n, strerror(err));
	else if (before < 0 || during < 0)
		error(name, "no KernelStack in /proc/meminfo, or %d of %d threads started", started, n);
	else
		metric(name, (during - before) * 1024.0 / n, "bytes");
}

/*
 * How many threads fit in a fixed amount of the guest's memory: blocked
 * threads on the smallest user stacks are made until MemAvailable has
 * dropped by @budget_mib. Memory is what must stop it (the kernel's
 * thread and pid limits are raised first: threads-max scales with
 * THREAD_SIZE by construction); a thread limit, a failed pthread_create()
 * or the time running out first is an error, naming what stopped it.
 */
static void threads_fit(int budget_mib)
{
	size_t cap = 1024;
	pthread_t *threads = malloc(cap * sizeof(*threads));
	pthread_attr_t attr;
	long avail0, avail = -1;
	char name[64];
	int made = 0, err = 0;
	const char *stop = NULL;
	double t0 = now_s();

	snprintf(name, sizeof(name), "threads_fit_%dmib", budget_mib);
	if (!threads || pipe(wake_fd)) {
		error(name, "no memory or pipe");
		free(threads);
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
	avail0 = meminfo_kb("MemAvailable");
	if (avail0 < 0) {
		error(name, "no MemAvailable in /proc/meminfo");
		stop = "";
	}
	while (!stop) {
		if (made % 64 == 0) {
			avail = meminfo_kb("MemAvailable");
			if (avail0 - avail >= budget_mib * 1024L)
				break;
			if (now_s() - t0 > (quick ? 30 : 300))
				stop = quick ? "the time (30 s)" : "the time (300 s)";
		}
		if ((size_t)made == cap) {
			pthread_t *more = realloc(threads, 2 * cap * sizeof(*threads));

			if (!more) {
				stop = "the bench's own memory";
				break;
			}
			threads = more;
			cap *= 2;
		}
		err = pthread_create(&threads[made], &attr, blocked_thread, NULL);
		if (err)
			stop = "pthread_create()";
		else
			made++;
	}
	close(wake_fd[1]);
	for (int i = 0; i < made; i++)
		pthread_join(threads[i], NULL);
	close(wake_fd[0]);
	pthread_attr_destroy(&attr);
	free(threads);
	if (!stop)
		metric(name, made, "threads");
	else if (*stop)
		error(name, "stopped by %s after %d threads, with %ld of %d MiB used%s%s", stop, made,
		      (avail0 - avail) / 1024, budget_mib, err ? ": " : "", err ? strerror(err) : "");
}

/* --- thread and process creation ------------------------------------------ */

static void *empty_thread(void *arg)
{
	return arg;
}

static void pthread_create_join(int rounds)
{
	double t = now_s();
	pthread_t th;
	int i, err;

	for (i = 0; i < rounds; i++) {
		err = pthread_create(&th, NULL, empty_thread, NULL);
		if (err) {
			error("pthread_create_join_us", "pthread_create: %s", strerror(err));
			return;
		}
		pthread_join(th, NULL);
	}
	metric("pthread_create_join_us", (now_s() - t) * 1e6 / rounds, "us");
}

static void fork_exit_wait(int rounds)
{
	double t = now_s();
	int i, status;

	for (i = 0; i < rounds; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			error("fork_exit_wait_us", "fork: %s", strerror(errno));
			return;
		}
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
			error("fork_exit_wait_us", "waitpid: the child did not exit");
			return;
		}
	}
	metric("fork_exit_wait_us", (now_s() - t) * 1e6 / rounds, "us");
}

/* --- the check's cost: system calls and a file-system loop ---------------- */

static void getppid_loop(int rounds)
{
	double t = now_s();
	int i;

	for (i = 0; i < rounds; i++)
		syscall(SYS_getppid);
	metric("getppid_ns", (now_s() - t) * 1e9 / rounds, "ns");
}

static void read_zero_loop(int rounds)
{
	char buf[64];
	int fd = open("/dev/zero", O_RDONLY), i;
	double t;

	if (fd < 0) {
		error("read_dev_zero_ns", "open /dev/zero: %s", strerror(errno));
		return;
	}
	t = now_s();
	for (i = 0; i < rounds; i++)
		if (read(fd, buf, sizeof(buf)) != sizeof(buf)) {
			error("read_dev_zero_ns", "short read of /dev/zero");
			close(fd);
			return;
		}
	metric("read_dev_zero_ns", (now_s() - t) * 1e9 / rounds, "ns");
	close(fd);
}

/* One byte there and back between two processes: two switches a trip */
static void pipe_pingpong(int rounds)
{
	int there[2], back[2], i, status;
	char c = 'x';
	double t;
	pid_t pid;

	if (pipe(there) || pipe(back)) {
		error("pipe_pingpong_us", "pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		error("pipe_pingpong_us", "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		/* the ends it does not use: EOF comes when the parent closes its own */
		close(there[1]);
		close(back[0]);
		while (read(there[0], &c, 1) == 1)
			if (write(back[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(there[0]);
	close(back[1]);
	t = now_s();
	for (i = 0; i < rounds; i++)
		if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			break;
	t = now_s() - t;
	close(there[1]);
	close(back[0]);
	waitpid(pid, &status, 0);
	if (i < rounds)
		error("pipe_pingpong_us", "the pipe broke after %d of %d trips", i, rounds);
	else
		metric("pipe_pingpong_us", t * 1e6 / rounds, "us");
}

/* Create, write 4 KiB, close and unlink a file, in @dir */
static void file_cycle(const char *dir, int rounds)
{
	char path[PATH_MAX], buf[4096];
	double t = now_s();
	int i, fd;

	memset(buf, 'k', sizeof(buf));
	for (i = 0; i < rounds; i++) {
		snprintf(path, sizeof(path), "%s/kstack-bench.%d", dir, i % 16);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) || close(fd) || unlink(path)) {
			error("file_cycle_us", "create, write, close or unlink of %s: %s", path,
			      strerror(errno));
			if (fd >= 0)
				close(fd);
			return;
		}
	}
	metric("file_cycle_us", (now_s() - t) * 1e6 / rounds, "us");
}

/* --- the stack tracer, and what a mode switched on ------------------------ */

#define TRACER "/proc/sys/kernel/stack_tracer_enabled"
#define MAX_SIZE "/sys/kernel/debug/tracing/stack_max_size"
#define CHAINS "/sys/kernel/debug/stack_check/chains"
#define CHECK_ENABLED "/sys/kernel/debug/stack_check/enabled"

/*
 * The deepest stack the check kept per stack type over this boot's
 * benchmark (its chains file: "<type> stack: chain N: <used> of <size>
 * bytes used entering <function>"), as depth_<type>_bytes. The file is
 * reset first (main), so the guest's earlier boot work is left out;
 * nothing is printed when the check is off or not in the kernel.
 */
/*
 * The deepest chain per stack type in the check's chains file: @type[i]
 * (a name fit for a figure: "#DF" reads "_DF") and @most[i]; how many
 * types, 0 when the file is not there.
 */
static int read_chains(char type[8][32], unsigned long most[8])
{
	char line[512], name[32];
	unsigned long used, size;
	int n = 0;
	FILE *f = fopen(CHAINS, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int i;

		if (sscanf(line, "%31s stack: chain %*d: %lu of %lu bytes used", name, &used,
			   &size) != 3)
			continue;
		for (char *c = name; *c; c++)
			if (!isalnum((unsigned char)*c))
				*c = '_';
		for (i = 0; i < n && strcmp(type[i], name); i++)
			;
		if (i == n) {
			if (n == 8)
				continue;
			snprintf(type[n], sizeof(type[n]), "%s", name);
			most[n++] = 0;
		}
		if (used > most[i])
			most[i] = used;
	}
	fclose(f);
	return n;
}

static void check_depths(void)
{
	char type[8][32];
	unsigned long most[8];
	int n = read_chains(type, most);

	for (int i = 0; i < n; i++) {
		char name[sizeof(type[i]) + 16];

		snprintf(name, sizeof(name), "depth_%.31s_bytes", type[i]);
		metric(name, most[i], "bytes");
	}
}

/*
 * The least stack any task had left when it exited, as DEBUG_STACK_USAGE
 * prints it ("... greatest stack depth: N bytes left"), over the kernel's
 * log buffer: the boot and the benchmark together.
 */
static void least_stack_left(void)
{
	int len = klogctl(10, NULL, 0); /* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf, *p;
	long least = -1;

	if (len <= 0)
		return;
	buf = malloc(len + 1);
	if (!buf)
		return;
	len = klogctl(3, buf, len); /* SYSLOG_ACTION_READ_ALL */
	if (len > 0) {
		buf[len] = '\0';
		for (p = buf; (p = strstr(p, "greatest stack depth: ")); p++) {
			long left = atol(p + strlen("greatest stack depth: "));

			if (least < 0 || left < least)
				least = left;
		}
	}
	free(buf);
	if (least >= 0)
		metric("least_stack_left_bytes", least, "bytes");
}

#define CLOCKSOURCE "/sys/devices/system/clocksource/clocksource0/current_clocksource"

/*
 * Figures timed with a jiffies clocksource are a tick's multiples (4 ms
 * at HZ=250), not figures: an error, naming the clock, when the kernel
 * is on one at the end (the watchdog may have switched during the run).
 */
static void clock_check(void)
{
	char name[64] = "";
	FILE *f = fopen(CLOCKSOURCE, "r");

	if (!f)
		return;
	if (!fgets(name, sizeof(name), f))
		name[0] = '\0';
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	if (strstr(name, "jiffies"))
		error("clocksource", "the kernel timed this run with %s, a clock of a tick's resolution: its times are not figures (boot with tsc=reliable)",
		      name);
}

/* --- depth: the paths that overflowed small stacks ----------------------- */

#define SUITE_IMG "kstack-depth-loop.img"
#define SUITE_MNT "/mnt/kstack-depth-loop"
#define SUITE_SWAP "kstack-depth-swap"

static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void depth_suite_cleanup(const char *dir)
{
	sh("swapoff %s/" SUITE_SWAP " 2>/dev/null; umount " SUITE_MNT " 2>/dev/null; "
	   "rm -f %s/" SUITE_SWAP " %s/" SUITE_IMG "; rmdir " SUITE_MNT " 2>/dev/null",
	   dir, dir, dir);
}

/*
 * A workload of what overflowed small stacks before, for the depth
 * figures (the check's chains, the stack tracer) and not timed: a
 * stress-ng file-system and process mix, then writeback through ext4 on a
 * loop device (on the root file system, on virtio-blk) while stress-ng
 * holds more memory than is available, with a swap file on, so that the
 * writer, the loop worker and reclaim meet. Its figures: its seconds and
 * the swap in use once the writer is done (the pressure was real when
 * above 0). On a
 * 4 KiB task stack the pressure part is left out, said in a note: the
 * check stops it there (the memory-pressure boot of make bisect-boot), and
 * a bench boot must end with figures.
 */
static void depth_suite(const char *dir)
{
	double t = now_s();
	long avail_kb, swapped;
	const char *size = getenv("kstack_thread_size");
	int img_mb = quick ? 64 : 192, write_mb = quick ? 16 : 48, over_mb = quick ? 16 : 64;

	/* it mounts, swaps and fills memory: only ever in a guest */
	if (!getenv("kstack_bench"))
		return;
	if (sh("cd %s && stress-ng --timeout %ds --fork 2 --dir 1 --dentry 1 --hdd 1 --hdd-bytes 2M "
	       "--quiet >/dev/null 2>&1", dir, quick ? 2 : 8))
		error("depth_suite", "stress-ng's file-system and process mix failed in %s", dir);
	if (size && atol(size) <= 4096) {
		if (!quiet)
			printf("kstack-bench: note depth_suite: no writeback under memory pressure on a %s-byte task stack: the stack check stops it there\n",
			       size);
		metric("pressure_suite_seconds", now_s() - t, "s");
		return;
	}
	depth_suite_cleanup(dir);
	if (sh("truncate -s %dM %s/" SUITE_IMG " && mkfs.ext4 -q -F %s/" SUITE_IMG " && "
	       "mkdir -p " SUITE_MNT " && mount -o loop %s/" SUITE_IMG " " SUITE_MNT,
	       img_mb, dir, dir, dir) ||
	    sh("dd if=/dev/zero of=%s/" SUITE_SWAP " bs=1M count=128 status=none && "
	       "chmod 600 %s/" SUITE_SWAP " && mkswap -q %s/" SUITE_SWAP " >/dev/null && "
	       "swapon %s/" SUITE_SWAP, dir, dir, dir, dir)) {
		error("depth_suite", "could not set up a loop file system and a swap file in %s", dir);
		depth_suite_cleanup(dir);
		return;
	}
	avail_kb = meminfo_kb("MemAvailable");
	/*
	 * The hog holds its memory (--vm-keep) while the writer runs and
	 * after: the swap in use then (tinyconfig has no vm event counters,
	 * pswpout, to count what went out)
	 */
	if (sh("stress-ng --vm 1 --vm-bytes %ldk --vm-keep --timeout %ds --quiet >/dev/null 2>&1 & "
	       "echo $! >" SUITE_MNT "/hog.pid; "
	       "dd if=/dev/zero of=" SUITE_MNT "/data bs=1M count=%d conv=fsync status=none",
	       avail_kb + over_mb * 1024L, quick ? 6 : 20, write_mb))
		error("depth_suite", "writing %d MiB through the loop file system under memory pressure failed",
		      write_mb);
	swapped = meminfo_kb("SwapTotal") - meminfo_kb("SwapFree");
	sh("pid=$(cat " SUITE_MNT "/hog.pid); kill $pid 2>/dev/null; "
	   "while kill -0 $pid 2>/dev/null; do sleep 0.2; done");
	depth_suite_cleanup(dir);
	metric("pressure_suite_seconds", now_s() - t, "s");
	metric("pressure_swap_used_kb", swapped > 0 ? swapped : 0, "kB");
}

/* --- checkpoints: the check at the functions a static call graph chose --- */

#define CHECKPOINTS "/sys/kernel/debug/stack_check/checkpoints"
#define CHECKPOINTS_LIST "/kstack/modules/checkpoints.tsv"

/*
 * With kstack_bench_checkpoints=1 (make bench's small-points): the list
 * make stack-depth chose for this kernel (on the payload disk) written to
 * the check in one write, so that the figures after it are those of the
 * check at its checkpoints only; how many it took is a figure.
 */
static void use_checkpoints(void)
{
	static char list[4 << 20];
	FILE *f = fopen(CHECKPOINTS_LIST, "r");
	size_t len;
	long n;
	int fd;

	if (!f) {
		error("checkpoints", "no list at %s: %s", CHECKPOINTS_LIST, strerror(errno));
		return;
	}
	len = fread(list, 1, sizeof(list) - 1, f);
	fclose(f);
	if (len == sizeof(list) - 1) {
		error("checkpoints", "%s is larger than %zu bytes", CHECKPOINTS_LIST, sizeof(list) - 1);
		return;
	}
	fd = open(CHECKPOINTS, O_WRONLY);
	if (fd < 0 || write(fd, list, len) != (ssize_t)len) {
		error("checkpoints", "could not write the list to %s: %s", CHECKPOINTS, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	n = file_field(CHECKPOINTS, "checkpoints");
	if (n <= 0) {
		error("checkpoints", "%s took no checkpoint from the list", CHECKPOINTS);
		return;
	}
	metric("checkpoints", n, "functions");
	metric("checkpoints_largest_segment_bytes", file_field(CHECKPOINTS, "largest segment"), "bytes");
	metric("checkpoints_unknown_names", file_field(CHECKPOINTS, "unknown names"), "names");
}

/* --- soak: a varied workload for a while, depth over time ---------------- */

#define WARNINGS "/sys/kernel/debug/stack_check/warnings"

/*
 * One sample line per figure: the deepest chain per stack type the check
 * has kept so far, and the warnings it printed and dropped, at @t seconds
 * into the soak.
 */
static void soak_sample(double t)
{
	char type[8][32];
	unsigned long most[8];
	int n = read_chains(type, most);

	for (int i = 0; i < n; i++)
		printf("kstack-bench: sample %.0f depth_%.31s_bytes %lu bytes\n", t, type[i], most[i]);
	if (file_field(WARNINGS, "printed") >= 0) {
		printf("kstack-bench: sample %.0f warnings_printed %ld warnings\n", t,
		       file_field(WARNINGS, "printed"));
		printf("kstack-bench: sample %.0f warnings_dropped %ld warnings\n", t,
		       file_field(WARNINGS, "dropped"));
	}
	fflush(stdout);
}

/* Touch @mib MiB of anonymous memory, then give it back */
static void touch_memory(int mib)
{
	size_t len = (size_t)mib << 20;
	char *p = malloc(len);

	if (!p)
		return;
	for (size_t i = 0; i < len; i += 4096)
		p[i] = (char)i;
	free(p);
}

/*
 * @seconds of the figures' code in turn, quietly, as a varied workload:
 * thread and process churn, system calls, pipes, file churn, memory
 * churn, the depth suite; a sample of the check's depths and warnings every @every
 * seconds and at the end; then the figures of the whole soak.
 */
static void soak(double seconds, double every, const char *dir)
{
	double t0 = now_s(), next = 0, t;
	long rounds = 0;
	int errs = errors;

	quiet = 1;
	soak_sample(0);
	while ((t = now_s() - t0) < seconds && errors == errs) {
		switch (rounds++ % 8) {
		case 0: kernel_stack_per_thread(200); break;
		case 1: pthread_create_join(200); break;
		case 2: fork_exit_wait(50); break;
		case 3: pipe_pingpong(2000); break;
		case 4: file_cycle(dir, 200); break;
		case 5: read_zero_loop(20000); getppid_loop(20000); break;
		case 6: touch_memory(64); break;
		case 7: depth_suite("/var/tmp"); break;
		}
		if (t >= next) {
			if (next > 0)
				soak_sample(t);
			next += every;
		}
	}
	soak_sample(now_s() - t0);
	quiet = 0;
	metric("soak_seconds", now_s() - t0, "s");
	metric("soak_rounds", rounds, "rounds");
	if (file_field(WARNINGS, "printed") >= 0) {
		metric("warnings_printed", file_field(WARNINGS, "printed"), "warnings");
		metric("warnings_dropped", file_field(WARNINGS, "dropped"), "warnings");
	} else if (getenv("kstack_bench")) {
		error("warnings_printed", "no %s: is the stack check in this kernel, and on?", WARNINGS);
	}
}

int main(int argc, char **argv)
{
	const char *tracer = getenv("kstack_bench_tracer");
	int tracer_on = tracer && !strcmp(tracer, "1");
	/*
	 * the guest's kernel command line has it; a run on a host never
	 * changes the host's limits
	 */
	int in_guest = getenv("kstack_bench") != NULL;
	double threads_max;

	double soak_seconds = 0;
	const char *dir;
	char *end;

	if (argc == 2 && !strcmp(argv[1], "--quick")) {
		quick = 1;
	} else if (argc == 3 && !strcmp(argv[1], "--soak")) {
		soak_seconds = strtod(argv[2], &end);
		if (*end || soak_seconds <= 0) {
			fprintf(stderr, "bench: --soak needs a number of seconds, not '%s'\n", argv[2]);
			return 2;
		}
	} else if (argc > 1) {
		fprintf(stderr, "usage: bench [--quick | --soak SECONDS]\n");
		return 2;
	}
	printf("kstack-bench: begin uptime=%.2f\n", read_number("/proc/uptime"));
	if (in_guest && getenv("kstack_bench_checkpoints") &&
	    !strcmp(getenv("kstack_bench_checkpoints"), "1"))
		use_checkpoints();
	/* the check's chains from here on: the benchmark's, not the boot's */
	if (in_guest)
		write_text(CHAINS, "0");
	if (tracer_on && write_text(TRACER, "1"))
		error("stack_tracer", "could not turn the stack tracer on (%s): %s", TRACER,
		      strerror(errno));
	/*
	 * threads-max is RAM / (8 * THREAD_SIZE), pid_max 32768: raise them
	 * for the threads (pid_max stays 32768 on 32-bit kernels)
	 */
	threads_max = read_number("/proc/sys/kernel/threads-max");
	if (in_guest && threads_max >= 0 && threads_max < 1000000)
		write_text("/proc/sys/kernel/threads-max", "1000000");
	if (in_guest && read_number("/proc/sys/kernel/pid_max") < 4194304)
		write_text("/proc/sys/kernel/pid_max", "4194304");

	dir = getenv("KSTACK_BENCH_DIR");
	if (!dir)
		dir = quick ? "/tmp" : "/var/tmp";
	if (soak_seconds) {
		/* a sample a minute, at most 120 */
		soak(soak_seconds, soak_seconds > 7200 ? soak_seconds / 120 : 60, dir);
		goto done;
	}

	kernel_stack_per_thread(quick ? 50 : 1000);
	kernel_stack_per_thread(quick ? 100 : 5000);
	threads_fit(quick ? 4 : 256);
	pthread_create_join(quick ? 50 : 2000);
	fork_exit_wait(quick ? 20 : 500);
	getppid_loop(quick ? 1000 : 200000);
	read_zero_loop(quick ? 1000 : 100000);
	pipe_pingpong(quick ? 100 : 10000);
	file_cycle(dir, quick ? 50 : 1000);
	/*
	 * not timed: the depth figures, where the check or the tracer
	 * watches; on the root file system (a swap file cannot be on tmpfs)
	 */
	if (tracer_on || read_number(CHECK_ENABLED) == 1)
		depth_suite("/var/tmp");

	if (tracer_on) {
		double max = read_number(MAX_SIZE);

		if (write_text(TRACER, "0"))
			error("stack_tracer", "could not turn the stack tracer off");
		if (max > 0)
			metric("stack_tracer_max_bytes", max, "bytes");
	}
done:
	clock_check();
	check_depths();
	if (in_guest)
		least_stack_left();
	printf("kstack-bench: end errors=%d\n", errors);
	return errors ? 1 : 0;
}
