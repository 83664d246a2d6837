# Programs of the boot archive, collected from one folder per role (see each folder's README):
#   user/          system and example programs
#   bench/         benchmark programs
#   tests/guest/   in-guest test checkers, driven by the pytest files in tests/
# In each folder, DIR/NAME.c is a one-file program and every DIR/NAME/*.c together make a
# multi-file program; either way the result is $(BUILD)/user/bin/NAME, a static PIE loaded at
# 0x400000. NAME is the program's name in the archive, so it must be unique across folders.
# Programs are static PIEs (-fPIE in USER_CFLAGS, -static -pie here): the kernel loads them
# at 0x400000, except with mmu=off, where all tasks share one address space and
# each program goes where there is room (kernel/core/elf.c, docs/alloc.md).
USER_PROG_DIRS := user bench tests/guest
USER_LDFLAGS := -nostdlib -static -pie --no-dynamic-linker -z text -z max-page-size=0x1000 \
	-T user/user.ld

USER_ONE_FILE_SRCS := $(foreach d,$(USER_PROG_DIRS),$(wildcard $(d)/*.c))
USER_MULTI_FILE_DIRS := $(sort $(patsubst %/,%,$(dir $(foreach d,$(USER_PROG_DIRS),$(wildcard $(d)/*/*.c)))))
USER_PROG_NAMES := $(notdir $(basename $(USER_ONE_FILE_SRCS)) $(USER_MULTI_FILE_DIRS))
USER_PROGS := $(addprefix $(BUILD)/user/bin/,$(USER_PROG_NAMES))
USER_PROG_SRCS := $(USER_ONE_FILE_SRCS) $(foreach d,$(USER_MULTI_FILE_DIRS),$(wildcard $(d)/*.c))
USER_PROG_OBJS := $(patsubst %.c,$(BUILD)/user/obj/%.o,$(USER_PROG_SRCS))

ifneq ($(words $(USER_PROG_NAMES)),$(words $(sort $(USER_PROG_NAMES))))
$(error two user programs share a name: $(sort $(USER_PROG_NAMES)))
endif

# Objects mirror the source tree: tests/guest/ipctest/main.c -> $(BUILD)/user/obj/tests/guest/ipctest/main.o
$(BUILD)/user/obj/%.o: %.c $(USER_FLAGS_STAMP) | $(IDL_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) $(DRV_INCLUDES) -I$(GEN) -MMD -MP -c $< -o $@

# user_program NAME, OBJECTS: link one program (crt0 first, libc and libgcc last).
# USER_LIBS_NAME, set by a fragment included before this one, adds libraries linked before
# libc (lib/malloc/malloc.mk: programs on ondol's allocator).
define user_program
$(BUILD)/user/bin/$(1): $(2) $(LIBC_CRT0) $(USER_LIBS_$(1)) $(DRV_USER_A) $(LIBC_A) user/user.ld $(USER_FLAGS_STAMP)
	@mkdir -p $$(dir $$@)
	@echo '  LD      $$@'
	$(Q)ld $(USER_LDFLAGS) -o $$@ $(LIBC_CRT0) $(2) $(USER_LIBS_$(1)) $(DRV_USER_A) $(LIBC_A) $$(shell $(USER_CC) -print-libgcc-file-name)
endef

$(foreach s,$(USER_ONE_FILE_SRCS),$(eval $(call user_program,$(notdir $(s:.c=)),\
	$(BUILD)/user/obj/$(s:.c=.o))))
$(foreach d,$(USER_MULTI_FILE_DIRS),$(eval $(call user_program,$(notdir $(d)),\
	$(patsubst %.c,$(BUILD)/user/obj/%.o,$(wildcard $(d)/*.c)))))

.SECONDARY: $(USER_PROG_OBJS)

-include $(USER_PROG_OBJS:.o=.d)

# MK servers (docs/servers.md): servers/NAME/*.c with the generated dispatch and main and
# the MK runtime (lib/srv/mk.c) become the program NAMEsrv in the boot archive.
SERVER_PROGS := $(patsubst %,$(BUILD)/user/bin/%srv,$(SERVER_NAMES))
USER_PROGS += $(SERVER_PROGS)
# A server with its own MK runtime (servers/NAME/mk/*.c: the UNIX server) links it too.
server_objs = $(patsubst %,$(BUILD)/user/srvobj/%.o,$(wildcard servers/$(1)/*.c) \
	$(wildcard servers/$(1)/mk/*.c) $(GEN)/$(1)_server.c $(GEN)/$(1)_mk.c lib/srv/mk.c)

# Servers are integer code (built into the kernel too, without x87/SSE): -mgeneral-regs-only
# keeps the compiler from using the SSE registers for copies and zeroing, which with lazy
# FPU switching (kernel/core/thread.h) cost a #NM trap on nearly every call to the server.
SERVER_CFLAGS := -mgeneral-regs-only
$(BUILD)/user/srvobj/%.c.o: %.c $(USER_FLAGS_STAMP) | $(IDL_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) $(SERVER_CFLAGS) $(DRV_INCLUDES) -I$(GEN) -MMD -MP -c $< -o $@

define server_prog
$(BUILD)/user/bin/$(1)srv: $(call server_objs,$(1)) $(LIBC_CRT0) $(DRV_USER_A) $(LIBC_A) user/user.ld $(USER_FLAGS_STAMP)
	@mkdir -p $$(dir $$@)
	@echo '  LD      $$@'
	$(Q)ld $(USER_LDFLAGS) -o $$@ $(LIBC_CRT0) $(call server_objs,$(1)) $(DRV_USER_A) $(LIBC_A) \
		$$(shell $(USER_CC) -print-libgcc-file-name)
endef
$(foreach s,$(SERVER_NAMES),$(eval $(call server_prog,$(s))))
-include $(foreach s,$(SERVER_NAMES),$(patsubst %.o,%.d,$(call server_objs,$(s))))
