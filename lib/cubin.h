/* cubin.h: reading a cubin, the ELF file NVRTC and nvcc write for one GPU:
 * its kernels, each kernel's parameters (count and size, from the
 * .nv.info.<kernel> section the driver itself reads), and the module-scope
 * memory a kernel can write (__device__ variables and arrays).
 *
 * A cubin in a record is untrusted input: every offset and size is checked
 * against the file's length, and a cubin that does not hold together is
 * refused with a reason, never read past its end. Names returned point
 * into the cubin's bytes and live as long as they do. */
#ifndef HTAM_CUBIN_H
#define HTAM_CUBIN_H

#include <stddef.h>
#include <stdint.h>

#define CUBIN_MAX_PARAMS 256

struct cubin {
	const unsigned char *data;
	size_t len;
	uint64_t shoff;
	unsigned shnum, shstrndx;
};

/* Checks that data (len bytes, borrowed) is a 64-bit ELF file whose
 * section table and section names lie inside it. Returns 0, or -1 with
 * err saying what is wrong. */
int cubin_open(struct cubin *c, const void *data, size_t len, char *err,
	size_t errlen);

/* Calls fn(ctx, name) for every kernel (global function) the cubin defines;
 * stops at the first nonzero return and returns it, else 0. */
int cubin_kernels(const struct cubin *c, int (*fn)(void *ctx, const char *name),
	void *ctx);

/* The byte size of each parameter of kernel, in order, into sizes[max].
 * Returns the number of parameters, or -1 when the cubin says nothing
 * about the kernel's parameters (no .nv.info.<kernel> section, or one
 * without parameter records while the kernel takes parameter bytes), or
 * when it has more than max. */
int cubin_params(const struct cubin *c, const char *kernel, size_t *sizes, int max);

/* Module-scope memory a kernel can write and that outlives a launch: the
 * writable allocated sections (.nv.global, zero at load; .nv.global.init,
 * initialised from the file), not shared or local memory, which live for
 * one block or one thread. */
struct cubin_section {
	const char *name;
	uint64_t size;
	int nobits;          /* zero-filled at load (no bytes in the file) */
};

/* An object (variable or array) in one of those sections. */
struct cubin_object {
	const char *name;
	int section;         /* index into cubin_state.sec */
	uint64_t offset, size;
};

struct cubin_state {
	int nsec, nobj;
	struct cubin_section *sec;
	struct cubin_object *obj;
};

/* Lists the module-scope memory (allocates; free with cubin_state_free).
 * Returns 0, or -1 with err set when the symbol table is broken. */
int cubin_state(const struct cubin *c, struct cubin_state *st, char *err,
	size_t errlen);
void cubin_state_free(struct cubin_state *st);

#endif
