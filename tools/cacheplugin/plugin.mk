# Make fragment for the cachesim TCG plugin, included by the top-level Makefile (run from
# the repository root). Builds $(BUILD)/tools/cachesim.so with the host compiler.
# Also usable alone:  make -f tools/cacheplugin/plugin.mk [BUILD=dir] cacheplugin
#
# The model sources (everything but plugin.c) also build the host test program of
# tests/cachemodel; CACHESIM_MODEL_SRCS lists them for that purpose.
#
# Each plugin API version builds in a directory of its own, $(BUILD)/tools/cacheplugin/apiN
# (objects and cachesim.so), so switching QEMU never mixes objects of two versions, and a
# benchmark that runs another QEMU than the default (QEMU 10 for the coherence model,
# tools/ondol/cache.py) builds and loads that version's file directly:
#   make -f tools/cacheplugin/plugin.mk CACHESIM_API=3 build/tools/cacheplugin/api3/cachesim.so
# $(BUILD)/tools/cachesim.so is a copy of the one for the QEMU in use (tools/qemucmd.py
# --plugin-api: 1 for QEMU 7.2, 3 for 10.0), compared with it on every make.

BUILD ?= build
HOSTCC ?= gcc

# Keep whatever default goal the including Makefile has already chosen.
cachesim_saved_goal := $(.DEFAULT_GOAL)

CACHESIM_DIR := tools/cacheplugin
CACHESIM_MODEL_SRCS := $(addprefix $(CACHESIM_DIR)/,cache.c tlb.c hier.c counters.c \
	domains.c config.c sim.c report.c x86dec.c iphys.c insntab.c coher.c)
CACHESIM_SRCS := $(CACHESIM_MODEL_SRCS) $(CACHESIM_DIR)/plugin.c
CACHESIM_SO := $(BUILD)/tools/cachesim.so
# -fvisibility=hidden is required, not cosmetic: QEMU's executable exports symbols such
# as tlb_init and cache_init, which would otherwise interpose on the plugin's own.
CACHESIM_CFLAGS := -std=c11 -O2 -flto -Wall -Wextra -Werror -fPIC \
	-fvisibility=hidden -MMD -MP
# The plugin API version of the QEMU in use (qemu_plugin_api.h). Empty while QEMU is not
# installed yet (a first `make run` parses this before deps).
CACHESIM_API ?= $(shell python3 tools/qemucmd.py --plugin-api 2>/dev/null)

# The objects and plugin of API version $(1).
cachesim_objdir = $(BUILD)/tools/cacheplugin/api$(1)
cachesim_objs = $(patsubst $(CACHESIM_DIR)/%.c,$(call cachesim_objdir,$(1))/%.o,$(CACHESIM_SRCS))

define cachesim_version
$(call cachesim_objdir,$(1))/cachesim.so: $(call cachesim_objs,$(1))
	@echo '  HOSTLD  $$@'
	$$(Q)$$(HOSTCC) -O2 -flto -shared -fPIC -o $$@ $$^ -lpthread

$(call cachesim_objdir,$(1))/%.o: $(CACHESIM_DIR)/%.c $(CACHESIM_DIR)/plugin.mk
	@mkdir -p $$(dir $$@)
	@echo '  HOSTCC  $$@'
	$$(Q)$$(HOSTCC) $$(CACHESIM_CFLAGS) -DCACHESIM_QEMU_API=$(1) -c -o $$@ $$<

-include $(patsubst %.o,%.d,$(call cachesim_objs,$(1)))
endef
$(foreach api,1 3,$(eval $(call cachesim_version,$(api))))

.PHONY: cacheplugin cachesim-check
cacheplugin: $(CACHESIM_SO)

ifneq ($(CACHESIM_API),)
# Always compared, so the copy follows a change of QEMU (or of ONDOL_QEMU) at once.
$(CACHESIM_SO): $(call cachesim_objdir,$(CACHESIM_API))/cachesim.so cachesim-check
	@cmp -s $< $@ || { mkdir -p $(dir $@) && echo '  CP      $@ (plugin API $(CACHESIM_API))' \
	  && cp $< $@; }
cachesim-check:
else
$(CACHESIM_SO):
	$(error cachesim: cannot tell the QEMU plugin API: is QEMU installed (scripts/deps.sh)? \
	  Or set CACHESIM_API=1 (QEMU 7.2) or 3 (QEMU 9 and later))
endif

.DEFAULT_GOAL := $(cachesim_saved_goal)
