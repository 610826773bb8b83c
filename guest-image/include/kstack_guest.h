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

/* A field of /proc/meminfo in kB ("KernelStack", "SwapFree"), or -1 */
static inline long meminfo_kb(const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':') {
			kb = atol(line + len + 1);
			break;
		}
	fclose(f);
	return kb;
}

#endif
