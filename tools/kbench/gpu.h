/* gpu.h: the worker's device layer: the one context and stream, guarded
 * buffers, kbench's own kernels (devcode.cu), and launch plans made
 * ready for the device and launched. */
#ifndef KBENCH_GPU_H
#define KBENCH_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "cudrv.h"
#include "plan.h"

/* Bytes of guard before and after every tensor, filled with GUARD_WORD:
 * a read past either end meets NaN (-1 for integers), a write there is
 * seen when the guards are checked. */
#define GUARD 65536
#define GUARD_WORD 0xFFFFFFFFu
/* The two output poisons: all bits set (NaN, or -1), and 0x7F bytes
 * (3.4e38 as f32 and bf16, 2139062143 as i32), used where the reference
 * itself holds a value equal to the first. 0x7F7F is a NaN in f16, so
 * f16 outputs take 65504, its largest finite value, as the second. */
#define POISON_A 0xFFFFFFFFu
#define POISON_B 0x7F7F7F7Fu
#define POISON_B_F16 0x7BFF7BFFu

struct gpu {
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;
	CUmodule devmod;
	CUfunction fill, compare, checksum, count_ne, mask;
	char name[256], pci[32];
	int index, lock_fd;
	int visible;         /* devices the driver sees (CUDA_VISIBLE_DEVICES) */
	int sms, cc, clock_khz, l2_bytes, smem_optin, max_grid_x;
	double copy_bps;     /* measured device copy, bytes read + written per s */
	double peak_flops;   /* fp32: SMs x 128 lanes x 2 x clock */
	CUdeviceptr flush;   /* 2 x L2, written between timed runs */
	size_t flush_bytes;
	CUdeviceptr scratch; /* kb_stats and counters */
};

extern struct gpu G;
/* The last CUDA failure, "cuLaunchKernelEx: CUDA_ERROR_...". */
extern char gpu_err[512];

/* Device memory with guard zones: ptr is base + GUARD. */
/* A device buffer with guard zones: bytes is the size rounded up to a
 * 32-bit word (what masks and checksums cover), used the size asked for;
 * the bytes between them are guard too (2-byte and 1-byte tensors). */
struct dbuf {
	CUdeviceptr base, ptr;
	size_t bytes, used;
};

/* devcode.cu's struct kb_stats, member for member. */
struct kb_stats {
	double sq_diff, sq_ref, max_abs, max_rel;
	unsigned long long bad, first_bad, collide, zero_bad;
};

/* Loads the driver, takes device number dev's primary context (numbered
 * as the driver sees them: CUDA_VISIBLE_DEVICES chooses and orders them),
 * measures it. Returns 0; 69 with err saying there is no driver or no
 * such device; -1 with err for anything else. */
int gpu_init(int dev, char *err, size_t errlen);
/* Waits until this process holds the device's timing lock (a file lock
 * per physical device, by PCI bus id, under $HTAM_LOCKDIR or /tmp), so
 * that no two kbench time kernels on one GPU at once. Returns the
 * milliseconds waited. gpu_unlock releases it. */
double gpu_lock(void);
void gpu_unlock(void);
/* A JSON description of the device (new reference). */
json_t *gpu_device_json(void);

/* Called by dbuf_alloc when memory runs out, to free what can be freed;
 * returns nonzero if it freed anything. Set by the worker. */
extern int (*gpu_evict)(void);

/* Allocates bytes (rounded up to 4) with guards. Returns 0, -1 on a CUDA
 * failure, -2 when the device has not enough memory (gpu_err says so). */
int dbuf_alloc(struct dbuf *b, size_t bytes);
void dbuf_free(struct dbuf *b);
/* Counts changed guard words into *bad (synchronous), the bytes past
 * used in the last word counting as one. */
int dbuf_guards(const struct dbuf *b, unsigned long long *bad);
/* Fills the buffer (not its guards, nor the bytes past used) with a 32-bit
 * pattern, on the stream. */
int dbuf_poison(const struct dbuf *b, unsigned pattern);

/* Fills n elements with a distribution (devcode.cu's kb_fill). */
int gpu_fill(CUdeviceptr p, int64_t n, enum dtype dt, int dist, double a,
	double b, double scale, unsigned long long key);
/* Checksum of bytes (a multiple of 4) at p (synchronous). */
int gpu_checksum(CUdeviceptr p, size_t bytes, unsigned long long *sum);
/* Compares n elements of out with ref, which is masked with key (0: not
 * masked; synchronous). */
int gpu_compare(CUdeviceptr out, CUdeviceptr ref, int64_t n, enum dtype dt,
	double atol, double rtol, unsigned long long key, struct kb_stats *st);
/* Masks (or unmasks) the buffer's bytes with key (devcode.cu's kb_mask). */
int gpu_mask(const struct dbuf *b, unsigned long long key);
/* Writes the flush buffer, evicting the L2. */
int gpu_flush_l2(void);

/* A launch plan made ready: functions found, limits checked, workspace. */
struct kplan {
	struct plan p;
	CUfunction fn[PLAN_MAX_LAUNCHES];
	struct dbuf ws[PLAN_MAX_WORKSPACE];
};

/* Buffers a plan's args may name. */
struct bufname {
	const char *name;
	CUdeviceptr ptr;
};

/* Finds the kernels of kp->p in mod and checks each launch against the
 * device's limits and, as the driver reports them, against the kernel's
 * parameters; allocates the workspace. Returns 0; 1 with why set when the
 * plan cannot run on this device (rejected); -1 on a CUDA failure; -2
 * when memory runs out. */
int kplan_ready(struct kplan *kp, CUmodule mod, char *why, size_t whylen);
void kplan_free(struct kplan *kp);
/* Fills every workspace with POISON_A (asynchronous), so a plan that
 * reads workspace it did not write in this run reads NaN. */
int kplan_poison(struct kplan *kp);
/* Launches every kernel in order on the stream (asynchronous); the
 * caller poisons the workspace first, outside any timed region. */
int kplan_launch(struct kplan *kp, const struct bufname *bufs, int nbufs);

/* A module's writable module-scope memory (__device__ variables), as it
 * was when the module was loaded, so that every run of a plan starts from
 * it: no state survives from one run to the next. The initial contents
 * are kept in host memory, where no kernel can reach them. */
struct modrange {
	CUdeviceptr ptr;
	size_t bytes;
	void *init;          /* the bytes at load, or NULL for all zero */
};

struct modstate {
	int n;
	struct modrange *r;
	size_t bytes;
};

/* Finds every writable module-scope section of the cubin (bin, len) in
 * mod and copies its contents out. Returns 0; 1 with why set when a
 * section cannot be found in the loaded module (it could not be
 * restored: the candidate is rejected); -1 on a CUDA failure. */
int modstate_take(struct modstate *ms, CUmodule mod, const void *bin, size_t len,
	char *why, size_t whylen);
/* Writes the initial contents back (asynchronous, on the stream). */
int modstate_restore(const struct modstate *ms);
void modstate_free(struct modstate *ms);

#endif
