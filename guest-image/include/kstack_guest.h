/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest tests and the guest benchmark share (guest-image/tests/,
 * guest-image/bench/): header-only, so each stays one static binary built
 * from one file.
 */
#ifndef KSTACK_GUEST_H
#define KSTACK_GUEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The number after "@key:" on a line of the file at @path (/proc/meminfo,
 * a debugfs file of "key: value" lines), or -1
 */
static inline long file_field(const char *path, const char *key)
{
	char line[256];
	size_t len = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			v = atol(line + len + 1);
			break;
		}
	fclose(f);
	return v;
}

/* A field of /proc/meminfo in kB ("KernelStack", "SwapFree"), or -1 */
static inline long meminfo_kb(const char *field)
{
	return file_field("/proc/meminfo", field);
}

#endif
