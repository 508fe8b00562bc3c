/* rng.h: the counter-based random numbers of kbench's inputs, shared by
 * the device code (devcode.cu) and the host (per-seed scales), so that a
 * (seed, tensor, element) triple always gives the same value anywhere. */
#ifndef KBENCH_RNG_H
#define KBENCH_RNG_H

#ifdef __CUDACC__
#define KB_HD __host__ __device__ __forceinline__
#else
#define KB_HD static inline
#endif

/* SplitMix64's output function: a bijection on 64 bits whose output bits
 * each depend on every input bit (passes BigCrush as a counter hash). */
KB_HD unsigned long long
kb_mix(unsigned long long z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* The stream key of one tensor of one seed; stream 0 of tensor -1 is
 * reserved for the per-seed scale. */
KB_HD unsigned long long
kb_key(unsigned long long seed, long long tensor)
{
	return kb_mix(kb_mix(seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL)
		^ (unsigned long long)(tensor + 2) * 0xD1B54A32D192ED03ULL);
}

/* The 64 random bits of element i of stream key. */
KB_HD unsigned long long
kb_bits(unsigned long long key, unsigned long long i)
{
	return kb_mix(key + (i + 1) * 0x9E3779B97F4A7C15ULL);
}

/* A double uniform in [0, 1) from 53 of the bits. */
KB_HD double
kb_unit(unsigned long long bits)
{
	return (double)(bits >> 11) * (1.0 / 9007199254740992.0);
}

#endif
