/* npy.c: NumPy's .npy format, version 1.0 (numpy/lib/format.py documents
 * it): magic "\x93NUMPY", version 1 0, a little-endian 16-bit header
 * length, a Python dict literal padded with spaces and ending in '\n' so
 * that the data starts at a multiple of 64 bytes, then the raw data. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "kbench.h"

/* dtype is one of plan.h's names; the data is little-endian C order.
 * NumPy has no bfloat16: bf16 is written as its bits, int16 ("<i2"), which
 * torch.from_numpy(a).view(torch.bfloat16) reads back. */
int
npy_write(const char *path, const char *dtype, const int64_t *shape, int ndim,
	const void *data, size_t bytes)
{
	const char *descr = !strcmp(dtype, "f32") ? "<f4" : !strcmp(dtype, "f64")
		? "<f8" : !strcmp(dtype, "f16") ? "<f2" : !strcmp(dtype, "bf16") ? "<i2"
		: !strcmp(dtype, "i32") ? "<i4" : !strcmp(dtype, "bool") ? "|b1" : "<i8";
	char dims[256] = "", head[512];
	size_t n = 0;
	for (int i = 0; i < ndim && n < sizeof dims - 32; i++)
		n += snprintf(dims + n, sizeof dims - n, "%lld,%s", (long long)shape[i],
			i + 1 < ndim ? " " : "");
	if (ndim > 1)
		dims[n - 1] = '\0'; /* "(2, 3)", but "(5,)" for one dimension */
	int len = snprintf(head, sizeof head, "{'descr': '%s', 'fortran_order': "
		"False, 'shape': (%s), }", descr, dims);
	int total = 10 + len + 1, pad = (64 - total % 64) % 64;
	memset(head + len, ' ', pad);
	head[len + pad] = '\n';
	len += pad + 1;
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
		(unsigned char)(len & 0xff), (unsigned char)(len >> 8)};
	/* Whole or not at all: written under a temporary name, then renamed. */
	char *tmp = xasprintf("%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		free(tmp);
		return -1;
	}
	int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(head, 1, len, f) == (size_t)len
		&& fwrite(data, 1, bytes, f) == bytes;
	int saved = errno;
	if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
		if (!ok)
			errno = saved;
		saved = errno;
		unlink(tmp);
		free(tmp);
		errno = saved;
		return -1;
	}
	free(tmp);
	return 0;
}
