# htam: a plain Makefile. `make` builds every tool into bin/, `make test`
# runs the tests that need no GPU (under ASan and UBSan), `make test-gpu`
# the GPU tests from the tools already built, `make bench` the benchmarks
# that need no GPU, `make bench-gpu` those that do.

CUDA_HOME ?= /usr/local/cuda
CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -Wall -Wextra -MMD -MP $(SANFLAGS)
CPPFLAGS += -D_GNU_SOURCE -Ilib -I$(CUDA_HOME)/include
LDFLAGS += $(SANFLAGS)

# Where objects and tools go; `make test` builds a sanitized copy under
# build/san with O and BIN overridden.
O ?= build/obj
BIN ?= bin

TOOLS := $(notdir $(patsubst %/,%,$(wildcard tools/*/)))
LIBSRC := $(wildcard lib/*.c lib/*.S)
LIBOBJ := $(patsubst %,$(O)/%.o,$(basename $(LIBSRC)))
LIBA := $(O)/libhtam.a

LDLIBS := -ljansson -lcrypto -lsqlite3 -lpthread -lm
NVRTC := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnvrtc
LDLIBS_kcompile := $(NVRTC)
LDLIBS_kgen := -lcurl
LDLIBS_kbench := -ldl

SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

all: $(TOOLS:%=$(BIN)/%)

$(O)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# Assembly files embed data with .incbin: memory/*.sql from the source
# tree, device code (.fatbin, built by nvcc from .cu) from $(O).
$(O)/%.o: %.S
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Wa,-I$(O) -c -o $@ $<

NVCC := $(CUDA_HOME)/bin/nvcc
NVCCFLAGS := -O3 -gencode arch=compute_90,code=[sm_90,compute_90]
$(O)/%.fatbin: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -fatbin -o $@ $<

# An assembly file depends on what it embeds: the .fatbin of each .cu in
# its folder, the memory's SQL, and the prompt and template files it embeds.
$(foreach s,$(wildcard tools/*/*.S lib/*.S),$(eval $(O)/$(basename $(s)).o: $(patsubst %.cu,$(O)/%.fatbin,$(wildcard $(dir $(s))*.cu)) $(wildcard memory/*.sql $(dir $(s))prompts/* $(dir $(s))templates/*)))

$(LIBA): $(LIBOBJ)
	@rm -f $@
	$(AR) rcs $@ $^

define tool_rule
$(BIN)/$(1): $(patsubst %,$(O)/%.o,$(basename $(wildcard tools/$(1)/*.c tools/$(1)/*.S))) $(LIBA)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(LDLIBS_$(1)) $$(LDLIBS)
endef
$(foreach t,$(TOOLS),$(eval $(call tool_rule,$(t))))

.SECONDEXPANSION:
# Unit tests (cmocka), one program per tests/unit/*.c, each linked with
# the objects of the tool it tests (UNITOBJ_name) and the library.
UNITS := $(basename $(notdir $(wildcard tests/unit/*.c)))
UNITOBJ_rules := $(O)/tools/kgen/family.o $(O)/tools/kgen/render.o $(O)/tools/kgen/chain.o \
	$(O)/tools/kgen/rules.o
UNITOBJ_baseline := $(O)/tools/kbench/baseline.o
$(O)/tests/unit/%.o: CPPFLAGS += -Itools/kgen -Itools/kbench
$(O)/tests/unit/%: $(O)/tests/unit/%.o $$(UNITOBJ_$$*) $(LIBA)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

# Fuzz targets (tests/fuzz/*.c but the driver), each with the tool objects
# it exercises. Under make test each runs over its committed corpus through
# tests/fuzz/driver.c; make fuzz builds them with libFuzzer (clang) and
# runs each for FUZZ_SECONDS.
FUZZ := $(filter-out driver,$(basename $(notdir $(wildcard tests/fuzz/*.c))))
FUZZOBJ_guard := $(O)/tools/kcompile/guard.o
FUZZOBJ_answer := $(O)/tools/kgen/answer.o
FUZZ_CPPFLAGS := -Itools/kcompile -Itools/kgen
$(O)/tests/fuzz/%.o: CPPFLAGS += $(FUZZ_CPPFLAGS)
$(O)/tests/fuzz/fuzz-%: $(O)/tests/fuzz/%.o $(O)/tests/fuzz/driver.o $$(FUZZOBJ_$$*) $(LIBA)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
units: $(UNITS:%=$(O)/tests/unit/%) $(FUZZ:%=$(O)/tests/fuzz/fuzz-%)

# The sanitized build lives apart (SANDIR), so it never mixes with bin/.
SANDIR ?= build/san
test: all
	$(MAKE) O=$(SANDIR) BIN=$(SANDIR)/bin SANFLAGS="$(SAN)" all units
	O=$(SANDIR) HTAM_BIN=$(CURDIR)/$(SANDIR)/bin tests/run

test-gpu:
	HTAM_BIN=$(CURDIR)/$(BIN) tests/run-gpu

bench: all
	bench/run

# On a GPU machine, from the tools already built (carry bin/ there).
bench-gpu:
	bench/run gpu

# make fuzz [FUZZ_SECONDS=60]: each target under libFuzzer, ASan and
# UBSan, from its committed corpus; new inputs go to build/fuzz/corpus/,
# crashes to build/fuzz/crashes/ (and the run fails).
FUZZ_SECONDS ?= 60
FUZZDIR := build/fuzz
FUZZSAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
fuzz:
	$(MAKE) O=$(FUZZDIR)/obj CC=clang SANFLAGS="$(FUZZSAN) -fsanitize=fuzzer-no-link" \
		$(FUZZDIR)/obj/libhtam.a $(foreach t,$(FUZZ),$(FUZZDIR)/obj/tests/fuzz/$(t).o \
		$(subst $(O),$(FUZZDIR)/obj,$(FUZZOBJ_$(t))))
	@mkdir -p $(FUZZDIR)/crashes
	@set -e; for t in $(FUZZ); do \
		clang $(FUZZSAN) -fsanitize=fuzzer -o $(FUZZDIR)/$$t $(FUZZDIR)/obj/tests/fuzz/$$t.o \
			$(subst $(O),$(FUZZDIR)/obj,$(FUZZOBJ_guard) $(FUZZOBJ_answer)) $(FUZZDIR)/obj/libhtam.a $(LDLIBS) \
			-Wl,--gc-sections; \
		mkdir -p $(FUZZDIR)/corpus/$$t; cp -n tests/fuzz/corpus/$$t/* $(FUZZDIR)/corpus/$$t/ 2>/dev/null || true; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s" >&2; \
		$(FUZZDIR)/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
			-artifact_prefix=$(FUZZDIR)/crashes/$$t- $(FUZZDIR)/corpus/$$t; \
	done

# make install [PREFIX=/usr/local] [DESTDIR=]: the tools and htam into
# PREFIX/bin, their manuals into PREFIX/share/man/man1, and what they read
# (the pack, the pipelines, the template families, the prompts, the
# PyTorch side of import, export and kbench's oracle) into
# PREFIX/share/htam, where the installed tools find it.
PREFIX ?= /usr/local
SHARE := $(DESTDIR)$(PREFIX)/share/htam
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(SHARE)
	install -m 755 $(TOOLS:%=$(BIN)/%) bin/htam $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(wildcard tools/*/*.1) docs/htam.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	rm -rf $(SHARE)/tasks $(SHARE)/pipelines $(SHARE)/templates $(SHARE)/prompts $(SHARE)/pytorch
	cp -R tasks pipelines $(SHARE)/
	install -d $(SHARE)/pytorch
	install -m 644 pytorch/*.py $(SHARE)/pytorch/
	cp -R tools/kgen/templates $(SHARE)/templates
	cp -R tools/kgen/prompts $(SHARE)/prompts

clean:
	rm -rf build $(TOOLS:%=bin/%)

.PHONY: all units test test-gpu bench bench-gpu fuzz install clean
-include $(shell find build -name '*.d' 2>/dev/null)
