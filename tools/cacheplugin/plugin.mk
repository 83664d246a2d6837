# Make fragment for the cachesim TCG plugin, included by the top-level Makefile (run from
# the repository root). Builds $(BUILD)/tools/cachesim.so with the host compiler.
# Also usable alone:  make -f tools/cacheplugin/plugin.mk [BUILD=dir] cacheplugin
#
# The model sources (everything but plugin.c) also build the host test program of
# tests/cachemodel; CACHESIM_MODEL_SRCS lists them for that purpose.

BUILD ?= build
HOSTCC ?= gcc

# Keep whatever default goal the including Makefile has already chosen.
cachesim_saved_goal := $(.DEFAULT_GOAL)

CACHESIM_DIR := tools/cacheplugin
CACHESIM_MODEL_SRCS := $(addprefix $(CACHESIM_DIR)/,cache.c tlb.c hier.c counters.c \
	domains.c config.c sim.c report.c x86dec.c iphys.c insntab.c coher.c)
CACHESIM_SRCS := $(CACHESIM_MODEL_SRCS) $(CACHESIM_DIR)/plugin.c
CACHESIM_OBJDIR := $(BUILD)/tools/cacheplugin
CACHESIM_OBJS := $(patsubst $(CACHESIM_DIR)/%.c,$(CACHESIM_OBJDIR)/%.o,$(CACHESIM_SRCS))
CACHESIM_SO := $(BUILD)/tools/cachesim.so
# -fvisibility=hidden is required, not cosmetic: QEMU's executable exports symbols such
# as tlb_init and cache_init, which would otherwise interpose on the plugin's own.
CACHESIM_CFLAGS := -std=c11 -O2 -flto -Wall -Wextra -Werror -fPIC \
	-fvisibility=hidden -MMD -MP
# The plugin API version of the QEMU the project runs (tools/qemucmd.py: 1 for QEMU 7.2, 3
# for 10.0; qemu_plugin_api.h). A stamp holding it rebuilds the plugin when it changes.
# Empty while QEMU is not installed yet (a first `make run` parses this before deps).
CACHESIM_API ?= $(shell python3 tools/qemucmd.py --plugin-api 2>/dev/null)
CACHESIM_API_STAMP := $(CACHESIM_OBJDIR)/api-version
ifneq ($(CACHESIM_API),)
ifneq ($(CACHESIM_API),$(shell cat $(CACHESIM_API_STAMP) 2>/dev/null))
$(shell mkdir -p $(CACHESIM_OBJDIR) && echo $(CACHESIM_API) > $(CACHESIM_API_STAMP))
endif
endif
# Made above, so this rule runs only when the version could not be told.
$(CACHESIM_API_STAMP):
	$(error cachesim: cannot tell the QEMU plugin API: is QEMU installed (scripts/deps.sh)? \
	  Or set CACHESIM_API=1 (QEMU 7.2) or 3 (QEMU 9 and later))

.PHONY: cacheplugin
cacheplugin: $(CACHESIM_SO)

$(CACHESIM_SO): $(CACHESIM_OBJS)
	@mkdir -p $(dir $@)
	@echo '  HOSTLD  $@'
	$(Q)$(HOSTCC) -O2 -flto -shared -fPIC -o $@ $^ -lpthread

$(CACHESIM_OBJDIR)/%.o: $(CACHESIM_DIR)/%.c $(CACHESIM_DIR)/plugin.mk $(CACHESIM_API_STAMP)
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)$(HOSTCC) $(CACHESIM_CFLAGS) -DCACHESIM_QEMU_API=$(CACHESIM_API) -c -o $@ $<

-include $(CACHESIM_OBJS:.o=.d)

.DEFAULT_GOAL := $(cachesim_saved_goal)
