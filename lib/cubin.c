/* cubin.c: kernels, parameters and module-scope memory of a cubin (cubin.h). */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "util.h"

/* The .nv.info attribute records (format byte, attribute byte, then by
 * format: nothing padded to two bytes, one byte padded to two, two bytes,
 * or a 16-bit size and that many bytes), as the CUDA driver reads them. */
enum {
	EIFMT_NVAL = 1,
	EIFMT_BVAL = 2,
	EIFMT_HVAL = 3,
	EIFMT_SVAL = 4
};
enum {
	EIATTR_KPARAM_INFO = 0x17,       /* index u32, ordinal u16, offset u16, flags u32 */
	EIATTR_CBANK_PARAM_SIZE = 0x19   /* total parameter bytes, u16 */
};

/* Section header i (copied out: a cubin in a record need not be aligned). */
static Elf64_Shdr
shdr(const struct cubin *c, unsigned i)
{
	Elf64_Shdr sh;
	memcpy(&sh, c->data + c->shoff + (uint64_t)i * sizeof(sh), sizeof(sh));
	return sh;
}

/* Does section sh's content lie inside the file? NOBITS has none. */
static int
in_file(const struct cubin *c, const Elf64_Shdr *sh)
{
	return sh->sh_type == SHT_NOBITS ||
		(sh->sh_offset <= c->len && sh->sh_size <= c->len - sh->sh_offset);
}

/* The NUL-terminated string at off in string section idx, or NULL. */
static const char *
str_at(const struct cubin *c, unsigned idx, uint64_t off)
{
	if (idx >= c->shnum)
		return NULL;
	Elf64_Shdr s = shdr(c, idx);
	if (s.sh_type != SHT_STRTAB || !in_file(c, &s) || off >= s.sh_size)
		return NULL;
	const char *p = (const char *)c->data + s.sh_offset + off;
	return memchr(p, '\0', s.sh_size - off) ? p : NULL;
}

static const char *
sec_name(const struct cubin *c, const Elf64_Shdr *sh)
{
	return str_at(c, c->shstrndx, sh->sh_name);
}

int
cubin_open(struct cubin *c, const void *data, size_t len, char *err, size_t errlen)
{
	Elf64_Ehdr eh;

	memset(c, 0, sizeof(*c));
	c->data = data;
	c->len = len;
	if (len < sizeof(eh))
		return errf(err, errlen, "the cubin is %zu bytes, too short for an ELF header", len);
	memcpy(&eh, data, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return errf(err, errlen, "the cubin is not a 64-bit ELF file");
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff == 0 || eh.e_shoff > len ||
	    (len - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
		return errf(err, errlen, "the cubin's section table lies outside it");
	if (eh.e_shstrndx >= eh.e_shnum)
		return errf(err, errlen, "the cubin names no section-name table");
	c->shoff = eh.e_shoff;
	c->shnum = eh.e_shnum;
	c->shstrndx = eh.e_shstrndx;
	Elf64_Shdr names = shdr(c, c->shstrndx);
	if (names.sh_type != SHT_STRTAB || !in_file(c, &names))
		return errf(err, errlen, "the cubin's section-name table lies outside it");
	return 0;
}

/* Calls fn for each symbol of the symbol table; stops at a nonzero return. */
static int
each_symbol(const struct cubin *c, int (*fn)(void *, const struct cubin *,
	const Elf64_Sym *, const char *), void *ctx)
{
	for (unsigned i = 0; i < c->shnum; i++) {
		Elf64_Shdr sh = shdr(c, i);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		if (sh.sh_entsize != sizeof(Elf64_Sym) || !in_file(c, &sh))
			return -1;
		for (uint64_t j = 0; j < sh.sh_size / sizeof(Elf64_Sym); j++) {
			Elf64_Sym sym;
			memcpy(&sym, c->data + sh.sh_offset + j * sizeof(sym), sizeof(sym));
			const char *name = str_at(c, sh.sh_link, sym.st_name);
			int r;
			if (name && *name && (r = fn(ctx, c, &sym, name)) != 0)
				return r;
		}
	}
	return 0;
}

struct kernels_ctx {
	int (*fn)(void *, const char *);
	void *ctx;
};

static int
kernel_sym(void *ctx, const struct cubin *c, const Elf64_Sym *s, const char *name)
{
	struct kernels_ctx *k = ctx;
	(void)c;
	if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || ELF64_ST_BIND(s->st_info) != STB_GLOBAL)
		return 0;
	return k->fn(k->ctx, name);
}

int
cubin_kernels(const struct cubin *c, int (*fn)(void *ctx, const char *name), void *ctx)
{
	struct kernels_ctx k = { fn, ctx };
	int r = each_symbol(c, kernel_sym, &k);
	return r < 0 ? 0 : r;
}

int
cubin_params(const struct cubin *c, const char *kernel, size_t *sizes, int max)
{
	for (unsigned i = 0; i < c->shnum; i++) {
		Elf64_Shdr sh = shdr(c, i);
		const char *name = sec_name(c, &sh);
		if (!name || strncmp(name, ".nv.info.", 9) != 0 || strcmp(name + 9, kernel) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || !in_file(c, &sh))
			return -1;
		const unsigned char *p = c->data + sh.sh_offset, *end = p + sh.sh_size;
		int n = 0, bad = 0;
		long total = -1;
		for (int k = 0; k < max; k++)
			sizes[k] = 0;
		while (end - p >= 2) {
			unsigned fmt = p[0], attr = p[1];
			size_t vlen;
			/* a record of no value (setmaxnreg's, for one) is
			 * padded to 4 bytes as the others */
			if (fmt == EIFMT_NVAL || fmt == EIFMT_BVAL || fmt == EIFMT_HVAL)
				vlen = 2;
			else if (fmt == EIFMT_SVAL && end - p >= 4)
				vlen = 2 + (size_t)(p[2] | p[3] << 8);
			else
				return -1;
			if ((size_t)(end - p) < 2 + vlen)
				return -1;
			const unsigned char *v = p + 2;
			if (attr == EIATTR_CBANK_PARAM_SIZE && fmt == EIFMT_HVAL)
				total = v[0] | v[1] << 8;
			if (attr == EIATTR_KPARAM_INFO && fmt == EIFMT_SVAL && vlen >= 14) {
				/* after the 2-byte size: index u32, ordinal u16,
				 * offset u16, then flags whose top 14 bits are the
				 * parameter's size in bytes */
				unsigned ord = v[6] | v[7] << 8;
				uint32_t flags = (uint32_t)v[10] | (uint32_t)v[11] << 8 |
					(uint32_t)v[12] << 16 | (uint32_t)v[13] << 24;
				if ((int)ord >= max)
					bad = 1;
				else {
					sizes[ord] = flags >> 18;
					if ((int)ord + 1 > n)
						n = (int)ord + 1;
				}
			}
			p += 2 + vlen;
		}
		if (bad)
			return -1;
		for (int k = 0; k < n; k++)
			if (sizes[k] == 0)
				return -1;  /* a parameter without its record */
		if (n == 0 && total > 0)
			return -1;
		return n;
	}
	return -1;
}

/* Writable, allocated, and neither shared nor local memory? */
static int
is_state_section(const Elf64_Shdr *sh, const char *name)
{
	if ((sh->sh_flags & (SHF_WRITE | SHF_ALLOC)) != (SHF_WRITE | SHF_ALLOC) ||
	    sh->sh_flags & SHF_EXECINSTR)
		return 0;
	return strncmp(name, ".nv.shared", 10) != 0 && strncmp(name, ".nv.local", 9) != 0;
}

struct state_ctx {
	struct cubin_state *st;
	int *secmap;   /* ELF section index -> index in st->sec, or -1 */
	size_t cap;
};

static int
state_sym(void *ctx, const struct cubin *c, const Elf64_Sym *s, const char *name)
{
	struct state_ctx *x = ctx;
	(void)c;
	if (ELF64_ST_TYPE(s->st_info) != STT_OBJECT || s->st_shndx >= c->shnum ||
	    x->secmap[s->st_shndx] < 0)
		return 0;
	struct cubin_state *st = x->st;
	const struct cubin_section *sec = &st->sec[x->secmap[s->st_shndx]];
	if (s->st_value > sec->size || s->st_size > sec->size - s->st_value)
		return -1;
	if ((size_t)st->nobj == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 16;
		st->obj = xrealloc(st->obj, x->cap * sizeof(*st->obj));
	}
	st->obj[st->nobj++] = (struct cubin_object){ name, x->secmap[s->st_shndx],
		s->st_value, s->st_size };
	return 0;
}

int
cubin_state(const struct cubin *c, struct cubin_state *st, char *err, size_t errlen)
{
	struct state_ctx x = { st, xmalloc(c->shnum * sizeof(int) + 1), 0 };

	memset(st, 0, sizeof(*st));
	st->sec = xcalloc(c->shnum + 1, sizeof(*st->sec));
	for (unsigned i = 0; i < c->shnum; i++) {
		Elf64_Shdr sh = shdr(c, i);
		const char *name = sec_name(c, &sh);
		x.secmap[i] = -1;
		if (!name || !is_state_section(&sh, name) || sh.sh_size == 0)
			continue;
		if (!in_file(c, &sh)) {
			free(x.secmap);
			cubin_state_free(st);
			return errf(err, errlen, "the cubin's section %s lies outside it", name);
		}
		x.secmap[i] = st->nsec;
		st->sec[st->nsec++] = (struct cubin_section){ name, sh.sh_size,
			sh.sh_type == SHT_NOBITS };
	}
	int r = each_symbol(c, state_sym, &x);
	free(x.secmap);
	if (r < 0) {
		cubin_state_free(st);
		return errf(err, errlen, "the cubin's symbol table is broken "
			"(a variable lies outside its section)");
	}
	return 0;
}

void
cubin_state_free(struct cubin_state *st)
{
	free(st->sec);
	free(st->obj);
	memset(st, 0, sizeof(*st));
}
