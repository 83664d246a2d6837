# Make fragment for the ondol libc (included by the top-level Makefile, run at the
# repository root). Products:
#   $(BUILD)/user/libc.a      freestanding libc for user programs
#   $(BUILD)/user/crt0.o      program entry (_start)
#   $(BUILD)/host/test_libc   host unit tests of the portable parts (tests/host/)
# LIBC_KERNEL_SRCS lists the files the kernel compiles with its own flags.

BUILD ?= build

USER_CC ?= gcc
USER_AR ?= ar
USER_GCC_INCLUDE := $(shell $(USER_CC) -print-file-name=include)
USER_CFLAGS ?= -std=c11 -O2 -g -Wall -Wextra -Werror -ffreestanding -nostdinc \
	-isystem $(USER_GCC_INCLUDE) -Ilib/libc/include -Ilib/include \
	-fno-stack-protector -fPIE -mno-red-zone -fno-asynchronous-unwind-tables

LIBC_KERNEL_SRCS := lib/libc/src/string.c lib/libc/src/fmt.c

# User objects and programs depend on the flags (as the kernel's do, kernel/kernel.mk), so a
# change of USER_CFLAGS or USER_LDFLAGS rebuilds instead of mixing old and new objects.
USER_FLAGS_STAMP := $(BUILD)/user/flags.txt
$(USER_FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(USER_CFLAGS) | $(USER_LDFLAGS)' > $@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

LIBC_SRCS := $(filter-out lib/libc/src/crt0.S,$(wildcard lib/libc/src/*.c lib/libc/src/*.S))
LIBC_OBJS := $(patsubst lib/libc/src/%,$(BUILD)/user/libc/%.o,$(LIBC_SRCS))
LIBC_A := $(BUILD)/user/libc.a
LIBC_CRT0 := $(BUILD)/user/crt0.o

$(LIBC_A): $(LIBC_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@
	@echo '  AR      $@'
	$(Q)$(USER_AR) rcs $@ $^

$(BUILD)/user/libc/%.c.o: lib/libc/src/%.c $(USER_FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/user/libc/%.S.o: lib/libc/src/%.S $(USER_FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

$(LIBC_CRT0): lib/libc/src/crt0.S $(USER_FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

-include $(LIBC_OBJS:.o=.d) $(LIBC_CRT0:.o=.d)

# ---- host unit tests ---------------------------------------------------------------
# The portable libc files are compiled against our own headers, with every public name
# renamed to ondol_<name> (tests/host/ondol_rename.h) so they cannot clash with glibc;
# the test program itself is an ordinary hosted program.
HOST_CC ?= gcc
# Sanitizer flags, probed once and cached in a file (empty if unsupported).
LIBC_HOST_SAN_FILE := $(BUILD)/host/sanitize.flags
LIBC_HOST_SAN = $$(cat $(LIBC_HOST_SAN_FILE))
LIBC_HOST_TESTED := string fmt ctype stdlib snprintf malloc json
LIBC_HOST_OBJS := $(patsubst %,$(BUILD)/host/libc/%.o,$(LIBC_HOST_TESTED))
LIBC_HOST_CFLAGS = -std=c11 -O1 -g -Wall -Wextra -Werror -ffreestanding -nostdinc \
	-isystem $(USER_GCC_INCLUDE) -Ilib/libc/include -Ilib/include \
	-include tests/host/ondol_rename.h $(LIBC_HOST_SAN)
LIBC_HOST_TEST_CFLAGS = -std=c11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-iquote lib/libc/include -iquote lib/libc/src -iquote tests/host -Ilib/include \
	$(LIBC_HOST_SAN)

$(LIBC_HOST_SAN_FILE):
	@mkdir -p $(dir $@)
	@if printf 'int main(void){return 0;}\n' | $(HOST_CC) -x c \
		-fsanitize=address,undefined - -o $@.probe 2>/dev/null && $@.probe; then \
		echo "-fsanitize=address,undefined -fno-sanitize-recover=all" > $@; \
	else echo "" > $@; fi; rm -f $@.probe

$(BUILD)/host/libc/%.o: lib/libc/src/%.c tests/host/ondol_rename.h | $(LIBC_HOST_SAN_FILE)
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)$(HOST_CC) $(LIBC_HOST_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/host/%.o: tests/host/%.c | $(LIBC_HOST_SAN_FILE)
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)$(HOST_CC) $(LIBC_HOST_TEST_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/host/test_libc: $(BUILD)/host/test_libc.o $(BUILD)/host/host_sysdep.o $(LIBC_HOST_OBJS)
	@echo '  HOSTLD  $@'
	$(Q)$(HOST_CC) $(LIBC_HOST_SAN) -o $@ $^

-include $(LIBC_HOST_OBJS:.o=.d) $(BUILD)/host/test_libc.d $(BUILD)/host/host_sysdep.d

.PHONY: libc libc-host-test
libc: $(LIBC_A) $(LIBC_CRT0)
libc-host-test: $(BUILD)/host/test_libc
	$(BUILD)/host/test_libc
