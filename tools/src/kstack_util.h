/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kstack_util.h: what the project's C programs share: an error that stops
 * the program with exit status 2 ("PROG: error: ..." on stderr), and
 * allocation and file opening that stop it that way when they fail. A
 * program defines PROG (its name) before it includes this.
 */
#ifndef KSTACK_UTIL_H
#define KSTACK_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PROG
#error "define PROG, the program's name, before including kstack_util.h"
#endif

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static inline void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		fail("out of memory");
	return p;
}

static inline char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		fail("out of memory");
	return d;
}

/* fopen for reading, or stop saying which file and why */
static inline FILE *open_input(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		fail("cannot read %s: %s", path, strerror(errno));
	return f;
}

#endif /* KSTACK_UTIL_H */
