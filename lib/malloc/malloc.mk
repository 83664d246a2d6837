# Make fragment for ondol's allocator (lib/malloc/, docs/alloc.md); included by the
# top-level Makefile. One source, three builds:
#   $(BUILD)/malloc/libondolmalloc.so   hosted Linux, for LD_PRELOAD
#   $(BUILD)/malloc/libondolmalloc.a    hosted Linux, static
#   $(BUILD)/user/libondolmalloc.a      native ondol programs (link before libc.a)
# and the hosted tests (tests/host/malloc/, run by tests/test_malloc_host.py):
#   $(BUILD)/host/test_malloc           unit tests + stress, names renamed om_*, ASan/UBSan
#   $(BUILD)/malloc/stress_*            the stress checker against the real libraries

MALLOC_CORE := lib/malloc/malloc.c lib/malloc/lock.c
MALLOC_HDRS := $(wildcard lib/malloc/*.h)
MALLOC_HOST_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
	-mcx16 -DMALLOC_TLS -D_GNU_SOURCE -fno-builtin-malloc -fno-builtin-free
MALLOC_HOST_SRCS := $(MALLOC_CORE) lib/malloc/platform_linux.c
MALLOC_SO := $(BUILD)/malloc/libondolmalloc.so
MALLOC_HOST_A := $(BUILD)/malloc/libondolmalloc.a
MALLOC_USER_A := $(BUILD)/user/libondolmalloc.a
MALLOC_HOST_OBJS := $(patsubst lib/malloc/%.c,$(BUILD)/malloc/obj/%.o,$(MALLOC_HOST_SRCS))
MALLOC_USER_OBJS := $(patsubst lib/malloc/%.c,$(BUILD)/user/malloc/%.o,\
	$(MALLOC_CORE) lib/malloc/platform_ondol.c)

$(BUILD)/malloc/obj/%.o: lib/malloc/%.c $(MALLOC_HDRS)
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)$(HOST_CC) $(MALLOC_HOST_CFLAGS) -c $< -o $@

$(MALLOC_SO): $(MALLOC_HOST_OBJS)
	@echo '  HOSTLD  $@'
	$(Q)$(HOST_CC) -shared -o $@ $^ -lpthread

$(MALLOC_HOST_A): $(MALLOC_HOST_OBJS)
	$(Q)rm -f $@
	@echo '  AR      $@'
	$(Q)ar rcs $@ $^

$(BUILD)/user/malloc/%.o: lib/malloc/%.c $(MALLOC_HDRS) lib/malloc/malloc.mk $(USER_FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) -mcx16 -DMALLOC_TLS -MMD -MP -c $< -o $@
# (header dependencies, <ondol/abi.h> included: platform_ondol.c passes its structs to calls)
-include $(MALLOC_USER_OBJS:.o=.d)

$(MALLOC_USER_A): $(MALLOC_USER_OBJS)
	$(Q)rm -f $@
	@echo '  AR      $@'
	$(Q)$(USER_AR) rcs $@ $^

# Native programs linked with it (user/user.mk puts USER_LIBS_NAME before libc.a).
USER_LIBS_mallocbench := $(MALLOC_USER_A)
$(BUILD)/user/obj/bench/mallocbench/%.o: USER_CFLAGS += -Ilib/malloc


# ---- hosted tests --------------------------------------------------------------------
MALLOC_SAN_CFLAGS = -std=c11 -O1 -g -Wall -Wextra -Werror -mcx16 -DMALLOC_TLS -D_GNU_SOURCE \
	-include tests/host/malloc/rename.h -Ilib/malloc $(LIBC_HOST_SAN)
MALLOC_SAN_OBJS := $(patsubst lib/malloc/%.c,$(BUILD)/host/malloc/%.o,$(MALLOC_HOST_SRCS))
MALLOC_TESTS := $(BUILD)/host/test_malloc $(BUILD)/host/stress_malloc $(BUILD)/malloc/stress \
	$(BUILD)/malloc/stress_static

$(BUILD)/host/malloc/%.o: lib/malloc/%.c $(MALLOC_HDRS) tests/host/malloc/rename.h | $(LIBC_HOST_SAN_FILE)
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)$(HOST_CC) $(MALLOC_SAN_CFLAGS) -c $< -o $@

$(BUILD)/host/malloc/t_%.o: tests/host/malloc/%.c $(MALLOC_HDRS) tests/host/malloc/rename.h | $(LIBC_HOST_SAN_FILE)
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)$(HOST_CC) $(MALLOC_SAN_CFLAGS) -c $< -o $@

$(BUILD)/host/test_malloc: $(BUILD)/host/malloc/t_test_malloc.o $(MALLOC_SAN_OBJS)
	@echo '  HOSTLD  $@'
	$(Q)$(HOST_CC) $(LIBC_HOST_SAN) -o $@ $^ -lpthread

$(BUILD)/host/stress_malloc: $(BUILD)/host/malloc/t_stress.o $(MALLOC_SAN_OBJS)
	@echo '  HOSTLD  $@'
	$(Q)$(HOST_CC) $(LIBC_HOST_SAN) -o $@ $^ -lpthread

# The same stress against the process allocator: glibc, or LD_PRELOAD=libondolmalloc.so.
$(BUILD)/malloc/stress: tests/host/malloc/stress.c
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)$(HOST_CC) -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $< -lpthread

# ... and statically linked with libondolmalloc.a in place of glibc's malloc.
$(BUILD)/malloc/stress_static: tests/host/malloc/stress.c $(MALLOC_HOST_A)
	@echo '  HOSTLD  $@'
	$(Q)$(HOST_CC) -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -static -o $@ $< \
		$(MALLOC_HOST_A) -lpthread

# The head-to-head's workloads (tools/allocbench/, `./ondol bench alloc --host`).
$(BUILD)/malloc/allocbench: tools/allocbench/allocbench.c tools/allocbench/peak_rss.h
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)$(HOST_CC) -std=c11 -O2 -g -Wall -Wextra -Werror -o $@ $< -lpthread

$(BUILD)/malloc/allocreplay: tools/allocbench/replay.c tools/allocbench/peak_rss.h
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)$(HOST_CC) -std=c11 -O2 -g -Wall -Wextra -Werror -o $@ $<

# The trace recorder, preloaded into the program to trace (tools/allocbench/trace.c).
$(BUILD)/malloc/libondoltrace.so: tools/allocbench/trace.c
	@mkdir -p $(dir $@)
	@echo '  HOSTLD  $@'
	$(Q)$(HOST_CC) -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -o $@ $< -ldl -lpthread

.PHONY: malloc
malloc: $(BUILD)/malloc/allocbench $(BUILD)/malloc/allocreplay $(BUILD)/malloc/libondoltrace.so $(MALLOC_SO) $(MALLOC_HOST_A) $(MALLOC_USER_A) $(MALLOC_TESTS)
