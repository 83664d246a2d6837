# User programs: every user/NAME.c becomes $(BUILD)/user/bin/NAME, a static ELF at 0x400000.
USER_PROG_SRCS := $(wildcard user/*.c)
USER_PROGS := $(patsubst user/%.c,$(BUILD)/user/bin/%,$(USER_PROG_SRCS))
USER_LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -T user/user.ld

$(BUILD)/user/obj/%.o: user/%.c | $(IDL_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) -I$(GEN) -MMD -MP -c $< -o $@

$(BUILD)/user/bin/%: $(BUILD)/user/obj/%.o $(LIBC_CRT0) $(LIBC_A) user/user.ld
	@mkdir -p $(dir $@)
	@echo '  LD      $@'
	$(Q)ld $(USER_LDFLAGS) -o $@ $(LIBC_CRT0) $< $(LIBC_A) $(shell $(USER_CC) -print-libgcc-file-name)

.SECONDARY: $(patsubst user/%.c,$(BUILD)/user/obj/%.o,$(USER_PROG_SRCS))

-include $(patsubst user/%.c,$(BUILD)/user/obj/%.d,$(USER_PROG_SRCS))

# MK servers (docs/servers.md): servers/NAME/*.c with the generated dispatch and main and
# the MK runtime (lib/srv/mk.c) become the program NAMEsrv in the boot archive.
SERVER_PROGS := $(patsubst %,$(BUILD)/user/bin/%srv,$(SERVER_NAMES))
USER_PROGS += $(SERVER_PROGS)
server_objs = $(patsubst %,$(BUILD)/user/srvobj/%.o,$(wildcard servers/$(1)/*.c) \
	$(GEN)/$(1)_server.c $(GEN)/$(1)_mk.c lib/srv/mk.c)

$(BUILD)/user/srvobj/%.c.o: %.c | $(IDL_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) -I$(GEN) -MMD -MP -c $< -o $@

define server_prog
$(BUILD)/user/bin/$(1)srv: $(call server_objs,$(1)) $(LIBC_CRT0) $(LIBC_A) user/user.ld
	@mkdir -p $$(dir $$@)
	@echo '  LD      $$@'
	$(Q)ld $(USER_LDFLAGS) -o $$@ $(LIBC_CRT0) $(call server_objs,$(1)) $(LIBC_A) \
		$$(shell $(USER_CC) -print-libgcc-file-name)
endef
$(foreach s,$(SERVER_NAMES),$(eval $(call server_prog,$(s))))
-include $(foreach s,$(SERVER_NAMES),$(patsubst %.o,%.d,$(call server_objs,$(s))))
