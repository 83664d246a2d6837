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

$(BUILD)/user/malloc/%.o: lib/malloc/%.c $(MALLOC_HDRS)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) -mcx16 -c $< -o $@

$(MALLOC_USER_A): $(MALLOC_USER_OBJS)
	$(Q)rm -f $@
	@echo '  AR      $@'
	$(Q)$(USER_AR) rcs $@ $^

.PHONY: malloc
malloc: $(MALLOC_SO) $(MALLOC_HOST_A) $(MALLOC_USER_A)
