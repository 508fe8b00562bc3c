# evolve.mk: the HTAM evolution loop as Make targets, one file per stage
# output, so an interrupted run resumes where it stopped and a larger STEPS
# extends a finished run without redoing it.
#
#   make -f pipelines/evolve.mk TASKS="relu softmax" STEPS=6 K=4 [-j2]
#
# For each task T and step N (1..STEPS), under $(OUT)/T/:
#   state-0.jsonl      ktask --state: the task, no best kernel yet
#   step-N.jsonl       select | retrieve | kgen | kcompile | kbench: K benched candidates
#   state-N.jsonl      htg-update: transitions into the memory, the next state
#   best/              the best kernel: kernel.cu, launch.json, summary.md
# A step whose state is already within 5% of its roofline floor (STOP) is
# skipped: its step file is empty and the state carries over. Compute-bound
# tasks never stop early: their floor counts flops at the fp32 rate, which
# tensor cores with split precision beat at fp32 accuracy.
#
# Every file is written whole or not at all: a recipe writes FILE.tmp and
# renames it into place when it is complete, so a run killed anywhere (even
# by SIGKILL, which leaves Make no time to clean up) leaves no partial file
# that a rerun would take for done, and resumes to exactly the transitions
# an uninterrupted run has (htg-update records each candidate once, however
# often a step is replayed).

HTAM_HOME ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
BINDIR ?= $(HTAM_HOME)/bin
TASKS ?= relu
STEPS ?= 6
K ?= 4
RUN ?= run
OUT ?= runs/$(RUN)
DB ?= $(OUT)/htam.db
BACKEND ?= rules
SEED ?= 1
STOP ?= 0.95
# A prefix for the GPU stage: BENCH="ssh gpu-host" or BENCH="srun --gres=gpu:1".
BENCH ?=
# The GPU of each task, "relu=0 softmax=1 ..." (htam spreads the tasks
# over the visible GPUs); a task not named times on device 0. kbench takes
# a lock per device, so tasks sharing one never time at once.
DEVICES ?=
SELECT_FLAGS ?=
UPDATE_FLAGS ?=
KGEN_FLAGS ?=
KBENCH_FLAGS ?=

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DELETE_ON_ERROR:

export PATH := $(BINDIR):$(PATH)
export HTAM_DB := $(DB)
export HTAM_TASKS ?= $(HTAM_HOME)/tasks

# A recipe's pipeline failed: its status (the last stage that failed, as
# pipefail gives it: kbench's 69 when there is no GPU) is kept in
# STATUS_FILE for htam to exit with, and the recipe fails.
STATUS_FILE ?= $(OUT)/exit-status
failed = { rc=$$$$?; echo $$$$rc > $(STATUS_FILE); exit $$$$rc; }

# The device of task $(1).
device = $(or $(patsubst $(1)=%,%,$(filter $(1)=%,$(DEVICES))),0)

# The numbers 1..STEPS, and each one's predecessor.
NUMBERS := $(shell seq 1 $(STEPS))
prev = $(word $(1),0 $(NUMBERS))

define task_rules
$(OUT)/$(1)/state-0.jsonl:
	@mkdir -p $$(@D)
	ktask --state --run $(RUN) $(1) > $$@.tmp && mv -f $$@.tmp $$@

$(OUT)/$(1)/best/summary.md: $(OUT)/$(1)/state-$(STEPS).jsonl $(HTAM_HOME)/pipelines/best.sh
	$(HTAM_HOME)/pipelines/best.sh $$< $$(@D)

$(1): $(OUT)/$(1)/best/summary.md
.PHONY: $(1)
endef

# Step N of task T: one direction, its strategies, K candidates, compiled
# and benched; skipped (an empty file) once the best kernel is within STOP
# of its floor. Then state N: the outcome written into the memory (an
# empty step carries the previous state over).
define step_rules
$(OUT)/$(1)/step-$(2).jsonl: $(OUT)/$(1)/state-$(3).jsonl
	@if jq -e --argjson stop $(STOP) '.features.floor_fraction >= $$$$stop and .features.bound != "compute"' $$< >/dev/null; then \
		echo "evolve: $(1): step $(2): within $(STOP) of the floor; skipped" >&2; : > $$@.tmp; \
	else \
		echo "evolve: $(1): step $(2)" >&2; \
		htg-select --seed $(SEED) $(SELECT_FLAGS) < $$< | htg-retrieve \
		| kgen --backend $(BACKEND) -k $(K) $(KGEN_FLAGS) | kcompile \
		| $(BENCH) kbench --device $(call device,$(1)) $(KBENCH_FLAGS) > $$@.tmp || $(call failed); \
	fi; mv -f $$@.tmp $$@

$(OUT)/$(1)/state-$(2).jsonl: $(OUT)/$(1)/step-$(2).jsonl
	@if [ -s $$< ]; then htg-update $(UPDATE_FLAGS) < $$< > $$@.tmp || $(call failed); \
	else jq -c '.step += 1' $(OUT)/$(1)/state-$(3).jsonl > $$@.tmp; fi; mv -f $$@.tmp $$@
endef

$(foreach t,$(TASKS),$(eval $(call task_rules,$(t))))
$(foreach t,$(TASKS),$(foreach n,$(NUMBERS),$(eval $(call step_rules,$(t),$(n),$(call prev,$(n))))))

all: $(TASKS)
.DEFAULT_GOAL := all
.PHONY: all
