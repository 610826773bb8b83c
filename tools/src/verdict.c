// SPDX-License-Identifier: GPL-2.0
/*
 * verdict: read a guest's console log and say what happened. Did it reach
 * userspace, how did the guest tests do (TAP between the runner's begin and
 * end lines), did the kernel report trouble, did it finish; with
 * --expect-overflow, did the stack check catch the overflow the guest
 * provoked (a warning for the function first, unless the check said it
 * only panics, then its report, with the task stack's end canary intact,
 * and its panic); with --may-overflow (a
 * workload that a small stack may not survive), did the tests finish
 * cleanly, or did the stack check stop the kernel cleanly: its report with
 * the canary intact and its panic, unwound, and no other trouble first.
 *
 * Output, one format: "key=value" lines first (verdict, userspace,
 * uptime_at_userspace, tests_passed, tests_failed, tests_skipped,
 * kernel_trouble, finished, least_stack_bytes_left, stack_check_warnings,
 * overflow_caught with --expect-overflow, and with --may-overflow as none
 * when nothing overflowed), then "metric name=value" lines
 * and the reports, each headed by a line ending in ':' with its lines
 * indented below it ("kernel trouble:", "last console lines:", ...).
 *
 * Exit status as git bisect run reads it: 0 GOOD, 1 BAD or TIMEOUT, 2 when
 * the log cannot be read (an error, not a verdict).
 *
 * Built by tools/verdict with the system gcc; tested on the console
 * fixtures in tests/fixtures/console/ (tests/verdict.bats).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAIL_LINES 20
#define MAX_CHAIN 24		/* ftrace stack tracer lines kept */
#define MAX_SC_CHAIN 48		/* stack check chain lines kept */
#define MAX_WARN_CHAIN 12	/* lines kept of each warning's chain */
#define MAX_OVERFLOW_CHAIN 8	/* lines kept of the overflow report */
#define TROUBLE_LINES 8		/* lines kept after a trouble line */

/* A growing list of strings. */
struct list {
	char **v;
	size_t n, cap;
};

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		fprintf(stderr, "verdict: out of memory\n");
		exit(2);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	return strcpy(xrealloc(NULL, strlen(s) + 1), s);
}

static char *xprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = xrealloc(NULL, n + 1);
	va_start(ap, fmt);
	vsnprintf(s, n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static void add(struct list *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = s;
}

static bool has(const struct list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

/* Append "\n<indent><text>" to the last entry of l. */
static void append_line(struct list *l, const char *indent, const char *text)
{
	char *old = l->v[l->n - 1];

	l->v[l->n - 1] = xprintf("%s\n%s%s", old, indent, text);
	free(old);
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The n-th whitespace-separated word of s (from 1), or "". */
static char *word(const char *s, int n)
{
	static char buf[256];
	const char *p = s;

	for (int i = 1;; i++) {
		size_t len;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			return "";
		len = strcspn(p, " \t");
		if (i == n) {
			if (len >= sizeof(buf))
				len = sizeof(buf) - 1;
			memcpy(buf, p, len);
			buf[len] = '\0';
			return buf;
		}
		p += len;
	}
}

static char *last_word(const char *s)
{
	const char *end = s + strlen(s), *p;
	static char buf[256];

	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	p = end;
	while (p > s && !isspace((unsigned char)p[-1]))
		p--;
	snprintf(buf, sizeof(buf), "%.*s", (int)(end - p), p);
	return buf;
}

/* "... entering FUNC+0x0/0x6d ...": FUNC, after the last " entering ". */
static char *entered(const char *s)
{
	const char *p = s, *q;
	static char buf[256];

	while ((q = strstr(p, " entering ")))
		p = q + strlen(" entering ");
	snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p, "+"), p);
	return buf;
}

/*
 * Is the call trace line @s (" fn+0x1/0x2") a frame of function @fn that
 * the unwinder found? A "? " line is only a word on the stack that looks
 * like a return address.
 */
static bool is_frame_of(const char *s, const char *fn)
{
	size_t n = strlen(fn);

	while (*s == ' ')
		s++;
	return n && !strncmp(s, fn, n) && s[n] == '+';
}

static bool is_frame_of_one(const char *s, const struct list *fns)
{
	for (size_t i = 0; i < fns->n; i++)
		if (is_frame_of(s, fns->v[i]))
			return true;
	return false;
}

/* The kernel's "[   12.345678] " time stamp, if the line has one. */
static const char *strip_stamp(const char *s)
{
	const char *p = s;

	if (*p++ != '[')
		return s;
	while (*p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return s;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p++ != '.' || !isdigit((unsigned char)*p))
		return s;
	while (isdigit((unsigned char)*p))
		p++;
	if (p[0] != ']' || p[1] != ' ')
		return s;
	return p + 2;
}

static const char *const trouble_patterns[] = {
	"WARNING:", "BUG:", "Oops", "Kernel panic", "kernel stack overflow",
	"stack guard page", "general protection fault", "Call Trace:",
	"stack-check: overflow", "corrupted stack end",
};

static bool is_trouble(const char *s)
{
	for (size_t i = 0; i < sizeof(trouble_patterns) / sizeof(*trouble_patterns); i++)
		if (strstr(s, trouble_patterns[i]))
			return true;
	return false;
}

/* Everything read from one console log. */
struct console {
	bool poweredoff, userspace, done, inwarn, survived, provoked;
	char *uptime, *least, *binaries, *current;
	char *overflow, *overflow_fn, *panicked, *canary, *warned_below;
	bool warned_first, trace_check, trace_left, trace_unwound;
	bool check_warns_not;	/* the check said it only panics */
	int passed, failed, skipped, nbegun, ochain, wchain, collecting;
	struct list begun, ended, tapfail, failures, metrics, chain, pchain, scchain;
	struct list warns, warned, trouble, tail;
	struct list ofns;	/* the functions the overflow report names */
};

static void read_line(struct console *c, const char *raw, bool expect)
{
	const char *line = strip_stamp(raw);
	const char *p;

	if (c->poweredoff)
		return;
	/*
	 * The kernel prints to the serial console past the guest's tty: a
	 * check's line may land in the middle of a guest line ("# kstack:
	 * x=22stack-check: warning: ..."). Read the two apart.
	 */
	p = starts(line, "# ") ? strstr(line, "stack-check: ") : NULL;
	if (p) {
		char *head = xprintf("%.*s", (int)(p - line), line);

		read_line(c, head, expect);
		free(head);
		read_line(c, p, expect);
		return;
	}
	if (starts(line, "reboot: Power down") || starts(line, "reboot: Restarting system") ||
	    starts(line, "sysrq: Resetting"))
		c->poweredoff = true;
	if (starts(line, "kstack-init: userspace reached")) {
		c->userspace = true;
		free(c->uptime);
		c->uptime = xstrdup(word(line, 5));
	}
	if (starts(line, "kstack-init: done"))
		c->done = true;
	if (starts(line, "# kstack-tests: ") && isdigit((unsigned char)line[16]) &&
	    strstr(line, " binaries")) {
		free(c->binaries);
		c->binaries = xstrdup(word(line, 3));
	}
	if (starts(line, "# kstack-test: begin ")) {
		free(c->current);
		c->current = xstrdup(line + strlen("# kstack-test: begin "));
		if (!has(&c->begun, c->current))
			add(&c->begun, xstrdup(c->current));
		c->nbegun++;
	}
	if (starts(line, "# kstack-test: end ")) {
		char *name = xstrdup(word(line, 4));
		char *code = last_word(line);

		add(&c->ended, xstrdup(name));
		if (strcmp(code, "0") && !has(&c->tapfail, name)) {
			c->failed++;
			add(&c->failures, xprintf("%s exited %s", name, code));
		}
		free(name);
		free(c->current);
		c->current = xstrdup("");
	}
	if (starts(line, "ok ") && isdigit((unsigned char)line[3])) {
		if (strstr(line, "# SKIP"))
			c->skipped++;
		else
			c->passed++;
	}
	if (starts(line, "not ok ") && isdigit((unsigned char)line[7])) {
		p = line + 7 + strspn(line + 7, "0123456789");
		if (*p == ' ') {
			c->failed++;
			add(&c->tapfail, xstrdup(c->current ? c->current : ""));
			add(&c->failures, xprintf("%s: %s", c->current ? c->current : "", p + 1));
		}
	}
	if (starts(line, "# kstack: "))
		add(&c->metrics, xstrdup(line + strlen("# kstack: ")));
	if (starts(line, "# stack_trace: ") && c->chain.n < MAX_CHAIN)
		add(&c->chain, xstrdup(line + strlen("# stack_trace: ")));
	if (starts(line, "# stack_trace_pressure: ") && c->pchain.n < MAX_CHAIN)
		add(&c->pchain, xstrdup(line + strlen("# stack_trace_pressure: ")));
	if (starts(line, "# stack_check_chain: ") && c->scchain.n < MAX_SC_CHAIN)
		add(&c->scchain, xstrdup(line + strlen("# stack_check_chain: ")));
	/* stack_check=<bad> on the command line, refused by the kernel */
	if (starts(line, "stack-check: stack_check=") && (p = strstr(line, " refused")) &&
	    !memchr(line + 25, ' ', p - line - 25))
		add(&c->metrics, xprintf("stack_check_boot_param_refused=%.*s",
					 (int)(p - line - 25), line + 25));
	/* the series' boot line: "x86: 8 KiB task stacks, 16 KiB IRQ stacks" */
	{
		unsigned int task, irq;
		int end = 0;

		if (sscanf(line, "x86: %u KiB task stacks, %u KiB IRQ stacks%n", &task, &irq, &end) == 2 &&
		    end > 0) {
			add(&c->metrics, xprintf("task_stack_kib=%u", task));
			add(&c->metrics, xprintf("irq_stack_kib=%u", irq));
		}
	}
	/* DEBUG_STACK_USAGE: "... used greatest stack depth: N bytes left" */
	p = strstr(line, "used greatest stack depth: ");
	if (p && isdigit((unsigned char)p[27])) {
		long left = strtol(p + 27, NULL, 10);

		if (strstr(p, " bytes left") && (!c->least || left < strtol(c->least, NULL, 10))) {
			free(c->least);
			c->least = xprintf("%ld", left);
		}
	}
	/*
	 * "stack-check: checking kernel stacks at every function entry:
	 * warning at 50%, panic with ...": a check that warns says where. One
	 * that only panics (the commit before its warnings) says "panic ..."
	 * first: its overflow report needs no warning before it. A log that
	 * does not say is held to the warning.
	 */
	if (starts(line, "stack-check: checking kernel stacks at every function entry: "))
		c->check_warns_not = !strstr(line, ": warning at ");
	/* Warnings of the stack check are not trouble: each is listed with its chain. */
	if (starts(line, "stack-check: warning: ")) {
		add(&c->warns, xprintf("  %s", line + strlen("stack-check: warning: ")));
		c->inwarn = true;
		c->wchain = 0;
		if (!has(&c->warned, entered(line)))
			add(&c->warned, xstrdup(entered(line)));
		return;
	}
	if (c->inwarn && starts(line, "stack-check: CPU: "))
		return;
	if (c->inwarn && starts(line, "stack-check:  ")) {
		if (c->wchain++ < MAX_WARN_CHAIN)
			append_line(&c->warns, "      ", line + strlen("stack-check:  "));
		return;
	}
	c->inwarn = false;
	/* An overflow boot: from the provocation to the panic of the check. */
	if (starts(line, "# kstack-provoke: survived "))
		c->survived = true;
	if (starts(line, "# kstack-provoke: "))
		c->provoked = true;
	if (expect && starts(line, "stack-check: overflow: ") && !c->overflow) {
		c->overflow = xprintf("  %s", line);
		c->overflow_fn = xstrdup(entered(line));
		add(&c->ofns, xstrdup(c->overflow_fn));
		c->warned_first = has(&c->warned, c->overflow_fn);
		c->ochain = 0;
		return;
	}
	/* "stack-check: CPU: ..., stack end canary intact, reporting ..." */
	if (expect && c->overflow && !c->panicked && !c->canary &&
	    starts(line, "stack-check: CPU: ") && strstr(line, "stack end canary ")) {
		const char *w = strstr(line, "stack end canary ") + strlen("stack end canary ");

		c->canary = xstrdup(starts(w, "intact") ? "intact" :
				    starts(w, "overwritten") ? "overwritten" : "unknown");
		return;
	}
	/*
	 * The report's call chain. An interrupt that comes on top of a warned
	 * chain (in the check itself, say, as its footprint allows) may be the
	 * entry that crosses the limit: the overflow is still the warned
	 * chain's when a function below it in the report was warned.
	 */
	if (expect && c->overflow && !c->panicked && starts(line, "stack-check:  ")) {
		const char *fn = line + strlen("stack-check:  ");

		add(&c->ofns, xstrdup(entered(fn)));
		if (!c->warned_first && has(&c->warned, entered(fn))) {
			c->warned_first = true;
			c->warned_below = xstrdup(entered(fn));
		}
		if (c->ochain++ < MAX_OVERFLOW_CHAIN) {
			char *old = c->overflow;

			c->overflow = xprintf("%s\n      %s", old, fn);
			free(old);
		}
		return;
	}
	if (expect && c->overflow && starts(line, "Kernel panic - not syncing: stack-check: ")) {
		c->panicked = xprintf("  %s", line);
		return;
	}
	/*
	 * panic()'s own call trace, from the check stack it panics on: the
	 * unwinder must know that stack (<STACK_CHECK>) and go on from it to
	 * the stack that overflowed, where the function that crossed is.
	 */
	if (expect && c->panicked) {
		if (strstr(line, "<STACK_CHECK>"))
			c->trace_check = true;
		else if (strstr(line, "</STACK_CHECK>"))
			c->trace_left = c->trace_check;
		else if (c->trace_left && is_frame_of_one(line, &c->ofns))
			c->trace_unwound = true;
		return;
	}
	if (c->collecting > 0) {
		append_line(&c->trouble, "    ", line);
		c->collecting--;
		return;
	}
	if (is_trouble(line)) {
		add(&c->trouble, xprintf("  %s", line));
		c->collecting = TROUBLE_LINES;
	}
}

static void keep_tail(struct console *c, const char *raw)
{
	if (c->tail.n == TAIL_LINES) {
		free(c->tail.v[0]);
		memmove(c->tail.v, c->tail.v + 1, (TAIL_LINES - 1) * sizeof(*c->tail.v));
		c->tail.n--;
	}
	add(&c->tail, xstrdup(raw));
}

static void print_list(const struct list *l, const char *prefix)
{
	for (size_t i = 0; i < l->n; i++)
		printf("%s%s\n", prefix, l->v[i]);
}

static int usage(void)
{
	fprintf(stderr, "usage: verdict CONSOLE_LOG [--timed-out] [--expect-overflow | --may-overflow]\n");
	return 2;
}

int main(int argc, char **argv)
{
	bool timed_out = false, expect = false, may = false;
	struct console c = { 0 };
	struct list why = { 0 };
	const char *verdict, *path = NULL;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timed-out"))
			timed_out = true;
		else if (!strcmp(argv[i], "--expect-overflow"))
			expect = true;
		else if (!strcmp(argv[i], "--may-overflow"))
			may = true;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return usage(), 0;
		else if (argv[i][0] == '-' || path)
			return usage();
		else
			path = argv[i];
	}
	if (!path || (expect && may))
		return usage();
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "verdict: error: no console log at %s\n", path);
		return 2;
	}
	while ((len = getline(&buf, &cap, f)) >= 0) {
		/* the serial console's \r, and the line's end */
		char *w = buf;

		for (char *r = buf; *r; r++)
			if (*r != '\r' && *r != '\n')
				*w++ = *r;
		*w = '\0';
		keep_tail(&c, buf);
		read_line(&c, buf, expect || may);
	}
	if (ferror(f)) {
		fprintf(stderr, "verdict: error: could not read %s\n", path);
		return 2;
	}
	fclose(f);

	for (size_t i = 0; i < c.begun.n; i++) {
		if (!has(&c.ended, c.begun.v[i])) {
			c.failed++;
			add(&c.failures, xprintf("%s did not finish", c.begun.v[i]));
		}
	}
	if (c.binaries && c.nbegun < atoi(c.binaries)) {
		c.failed++;
		add(&c.failures, xprintf("%d test binaries never started", atoi(c.binaries) - c.nbegun));
	}
	if (expect) {
		if (!c.provoked)
			add(&why, "the overflow was never provoked (no # kstack-provoke line)");
		if (c.survived)
			add(&why, "the kernel survived the provocation");
		if (!c.overflow)
			add(&why, "no stack-check overflow report");
		else if (!c.warned_first && !c.check_warns_not)
			add(&why, xprintf("no stack-check warning for %s before its overflow report",
					  c.overflow_fn));
	}
	if (expect || (may && c.overflow)) {
		if (c.overflow && !c.canary)
			add(&why, "the overflow report does not say whether the stack end canary is intact");
		else if (c.overflow && strcmp(c.canary, "intact"))
			add(&why, xprintf("the stack end canary was %s when the check reported: the stack had overflowed first",
					  c.canary));
		if (c.overflow && !c.panicked)
			add(&why, "no panic from the stack check after its report");
		else if (c.panicked && !c.trace_check)
			add(&why, "the panic's call trace does not show the check stack (no <STACK_CHECK>): the unwinder does not know the stack the report runs on");
		else if (c.panicked && !c.trace_unwound)
			add(&why, xprintf("the panic's call trace never left the check stack for %s or a function of its chain in the report",
					  c.overflow_fn));
	}
	if (timed_out)
		verdict = "TIMEOUT";
	else if (expect || (may && c.overflow))
		verdict = c.userspace && !c.trouble.n && !why.n ? "GOOD" : "BAD";
	else if (!c.userspace || c.trouble.n || c.failed || !c.done)
		verdict = "BAD";
	else
		verdict = "GOOD";

	printf("verdict=%s\nuserspace=%s\n", verdict, c.userspace ? "yes" : "no");
	printf("uptime_at_userspace=%s\n", c.uptime && *c.uptime ? c.uptime : "-");
	printf("tests_passed=%d\ntests_failed=%d\ntests_skipped=%d\n", c.passed, c.failed, c.skipped);
	printf("kernel_trouble=%zu\nfinished=%s\n", c.trouble.n, c.done ? "yes" : "no");
	printf("least_stack_bytes_left=%s\n", c.least ? c.least : "-");
	printf("stack_check_warnings=%zu\n", c.warns.n);
	if (expect)
		printf("overflow_caught=%s\n", c.overflow && c.panicked &&
		       (c.warned_first || c.check_warns_not) &&
		       c.canary && !strcmp(c.canary, "intact") && c.trace_unwound ? "yes" : "no");
	if (may)
		printf("overflow_caught=%s\n", !c.overflow ? "none" :
		       c.panicked && c.canary && !strcmp(c.canary, "intact") &&
		       c.trace_unwound ? "yes" : "no");
	if (expect || (may && c.overflow))
		printf("overflow_panic_trace=%s\n", c.trace_unwound ? "unwound" :
		       c.trace_check ? "check-stack-only" : "none");
	if (expect && c.warned_below)
		printf("overflow_warned_below=%s\n", c.warned_below);
	print_list(&why, "overflow boot: ");
	if (c.overflow)
		printf("stack-check overflow report:\n%s\n", c.overflow);
	if (c.panicked)
		printf("%s\n", c.panicked);
	print_list(&c.metrics, "metric ");
	if (c.chain.n)
		printf("deepest stack chain (ftrace stack tracer):\n");
	print_list(&c.chain, "    ");
	if (c.pchain.n)
		printf("deepest stack chain under memory pressure (ftrace stack tracer):\n");
	print_list(&c.pchain, "    ");
	if (c.scchain.n)
		printf("deepest chains the stack check kept (first per stack type):\n");
	print_list(&c.scchain, "    ");
	if (c.warns.n)
		printf("stack-check warnings (what warned, then its call chain):\n");
	print_list(&c.warns, "");
	print_list(&c.failures, "failed test: ");
	for (size_t i = 0; i < c.trouble.n; i++)
		printf("kernel trouble:\n%s\n", c.trouble.v[i]);
	/* The last console lines: after a timeout always; after another bad
	 * boot when the guest did not finish (or the boot meant to crash). */
	if (timed_out || (strcmp(verdict, "GOOD") && (expect || may || !c.done))) {
		printf("last console lines:\n");
		print_list(&c.tail, "    ");
	}
	return !strcmp(verdict, "GOOD") ? 0 : 1;
}
