// SPDX-License-Identifier: GPL-2.0
/* libFuzzer harness for pevt_counts__parse(): read_format decoding. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pevt/evsel.h>

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len)
{
	struct pevt_counts c[8];
	uint64_t fmt;
	void *buf;
	int n;

	if (len < 8)
		return 0;
	memcpy(&fmt, in, 8);
	fmt &= 0x3f;	/* known bits plus one unknown */
	buf = malloc(len - 8 ? len - 8 : 1);
	if (!buf)
		abort();
	memcpy(buf, in + 8, len - 8);
	n = pevt_counts__parse(fmt, buf, len - 8, c, 8);
	if (n < 0 && n != -EINVAL && n != -EBADMSG && n != -ENOSPC)
		abort();
	if (n > 8 || n == 0)
		abort();
	if (n > 0 && pevt_counts__read_size(fmt, n) != len - 8)
		abort();
	free(buf);
	return 0;
}
