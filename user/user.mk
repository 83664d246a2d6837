# User programs: every user/NAME.c becomes $(BUILD)/user/bin/NAME, a static ELF at 0x400000.
USER_PROG_SRCS := $(wildcard user/*.c)
USER_PROGS := $(patsubst user/%.c,$(BUILD)/user/bin/%,$(USER_PROG_SRCS))
USER_LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -T user/user.ld

$(BUILD)/user/obj/%.o: user/%.c
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/user/bin/%: $(BUILD)/user/obj/%.o $(LIBC_CRT0) $(LIBC_A) user/user.ld
	@mkdir -p $(dir $@)
	@echo '  LD      $@'
	$(Q)ld $(USER_LDFLAGS) -o $@ $(LIBC_CRT0) $< $(LIBC_A) $(shell $(USER_CC) -print-libgcc-file-name)

.SECONDARY: $(patsubst user/%.c,$(BUILD)/user/obj/%.o,$(USER_PROG_SRCS))

-include $(patsubst user/%.c,$(BUILD)/user/obj/%.d,$(USER_PROG_SRCS))
