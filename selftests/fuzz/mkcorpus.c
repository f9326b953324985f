// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of ringbuf_fuzz (selftests/fuzz/corpus/<mode>/):
 * real buffers from the kernel-like writer of the host tests, several
 * sizes, wrapped or not, fixed or mixed record sizes.
 *   mkcorpus <outdir>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../host/ringbuf_sim.h"

struct fuzz_hdr {
	uint8_t log2_size;
	uint8_t flags;
	uint8_t pad[6];
	uint64_t head[3];
	uint64_t tail;
};

static void emit(const char *dir, const char *mode, int idx, struct sim *s,
		 uint64_t log2, uint8_t flags, const uint64_t head[3])
{
	struct fuzz_hdr h = { .log2_size = (uint8_t)(log2 - 3), .flags = flags };
	char path[512];
	FILE *f;

	memcpy(h.head, head, sizeof(h.head));
	h.tail = s->pc->data_tail;
	snprintf(path, sizeof(path), "%s/%s/seed-%02d", dir, mode, idx);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fwrite(&h, sizeof(h), 1, f);
	fwrite(s->data, s->size, 1, f);
	fclose(f);
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "forward", "sae", "wb" };
	static const uint64_t log2s[] = { 6, 8, 12 };
	int m, i, idx;

	if (argc != 2)
		return 2;
	for (m = 0; m < 3; m++) {
		idx = 0;
		for (i = 0; i < 3; i++) {
			for (int wrap = 0; wrap < 2; wrap++) {
				struct sim s;
				uint64_t head[3], n;
				uint32_t type, size;

				sim_init(&s, 1ULL << log2s[i], m == 2, m != 0, m == 1,
					 (uint64_t)(m * 100 + i * 10 + wrap + 1));
				/* forward: fill at most the buffer (no reader here). */
				n = wrap ? (s.size / 8) * 3 : s.size / 64 + 1;
				while (n--) {
					size = sim_pick_size(&s, i > 0, s.size / 2, &type);
					sim_write(&s, type, size);
				}
				/* Pass 2 and 3 see no change / a little more. */
				head[0] = head[1] = head[2] = s.head;
				emit(argv[1], modes[m], idx++, &s, log2s[i], 0x01, head);
				sim_fini(&s);
			}
		}
	}
	return 0;
}
