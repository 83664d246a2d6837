# Kernel build fragment (included by the top-level Makefile, run at the repository root).
KERNEL_CC ?= gcc
KERNEL_GCC_INCLUDE := $(shell $(KERNEL_CC) -print-file-name=include)
KERNEL_ARCH := x86_64
# One folder per subsystem (docs/architecture.md); a module's header sits beside its .c and
# every folder is on the include path, so sources include a header by its name alone.
# Portable code reaches the architecture only through arch.h (tests/test_layers.py).
KERNEL_DIRS := $(filter-out kernel/arch,$(patsubst %/,%,$(wildcard kernel/*/)))
KERNEL_ARCH_DIR := kernel/arch/$(KERNEL_ARCH)
KERNEL_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -ffreestanding -nostdinc \
	-isystem $(KERNEL_GCC_INCLUDE) $(addprefix -I,$(KERNEL_DIRS)) -I$(KERNEL_ARCH_DIR)/include -I$(GEN) \
	-Ilib/libc/include -Ilib/include $(DRV_INCLUDES) -mcmodel=kernel -mno-red-zone -mgeneral-regs-only \
	-fno-pie -fno-stack-protector -fno-omit-frame-pointer -fno-asynchronous-unwind-tables
PCNT_SLOTS ?= 32
KERNEL_CFLAGS += -DPCNT_SLOTS=$(PCNT_SLOTS)
KERNEL_LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -T $(KERNEL_ARCH_DIR)/linker.ld

# Servers without an IK runtime stay out of the kernel (none now; unix's IK runtime is
# kernel/srv/unix_ik.c, docs/unix.md "The IK form").
SERVERS_MK_ONLY :=
# In-kernel (IK) servers: servers/NAME/*.c and their generated dispatch (docs/servers.md);
# the drivers (drivers/*/*.c, docs/drivers.md) with the IK platform kernel/dev/drv_ik.c.
KERNEL_SRCS := $(wildcard $(addsuffix /*.c,$(KERNEL_DIRS)) $(KERNEL_ARCH_DIR)/*.c \
	$(KERNEL_ARCH_DIR)/*.S) \
	$(LIBC_KERNEL_SRCS) $(foreach s,$(filter-out $(SERVERS_MK_ONLY),$(SERVER_NAMES)),\
	$(wildcard servers/$(s)/*.c)) $(GEN_KERNEL_SRCS) \
	$(DRV_SRCS)
KERNEL_OBJS := $(patsubst %,$(BUILD)/kernel/%.o,$(KERNEL_SRCS))

COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)$(shell \
	git diff --quiet HEAD 2>/dev/null || echo -dirty)

# The commit id goes into one small generated header, rewritten only when it changes.
$(BUILD)/kernel/version.h: FORCE
	@mkdir -p $(dir $@)
	@echo '#define ONDOL_COMMIT "$(COMMIT)"' > $@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@
.PHONY: FORCE
FORCE:

$(BUILD)/kernel/kernel/boot/main.c.o: $(BUILD)/kernel/version.h
$(BUILD)/kernel/kernel/boot/main.c.o: KERNEL_EXTRA := -include $(BUILD)/kernel/version.h
# The UNIX server in the kernel runs on 8 KiB kernel stacks: a frame above 1 KiB is an
# error (docs/unix.md, "The IK form").
$(BUILD)/kernel/servers/unix/%.c.o: KERNEL_EXTRA := -Wframe-larger-than=1024

# Objects depend on the flags, so `make PCNT_SLOTS=32` rebuilds instead of mixing.
$(BUILD)/kernel/flags.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(KERNEL_CFLAGS)' > $@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

$(BUILD)/kernel/%.c.o: %.c $(BUILD)/kernel/flags.txt | $(IDL_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(KERNEL_CC) $(KERNEL_CFLAGS) $(KERNEL_EXTRA) -MMD -MP -c $< -o $@

$(BUILD)/kernel/%.S.o: %.S $(BUILD)/kernel/flags.txt
	@mkdir -p $(dir $@)
	@echo '  AS      $@'
	$(Q)$(KERNEL_CC) $(KERNEL_CFLAGS) -D__ASSEMBLER__ -MMD -MP -c $< -o $@

-include $(KERNEL_OBJS:.o=.d)

# Two links: the first without symbols, whose `nm` output becomes the .ksyms table of the
# second. .ksyms follows .data, so function addresses match and the check below proves it.
$(BUILD)/kernel/ksyms0.o: tools/gen_ksyms.py
	@mkdir -p $(dir $@)
	$(Q)python3 tools/gen_ksyms.py /dev/null > $(BUILD)/kernel/ksyms0.S
	$(Q)$(KERNEL_CC) -c $(BUILD)/kernel/ksyms0.S -o $@

$(BUILD)/ondol.elf: $(KERNEL_OBJS) $(BUILD)/kernel/ksyms0.o $(KERNEL_ARCH_DIR)/linker.ld tools/gen_ksyms.py
	@echo '  LD1     $@'
	$(Q)ld $(KERNEL_LDFLAGS) -o $(BUILD)/kernel/pass1.elf $(KERNEL_OBJS) $(BUILD)/kernel/ksyms0.o
	@echo '  KSYMS   $@'
	$(Q)nm $(BUILD)/kernel/pass1.elf | python3 tools/gen_ksyms.py - > $(BUILD)/kernel/ksyms.S
	$(Q)$(KERNEL_CC) -c $(BUILD)/kernel/ksyms.S -o $(BUILD)/kernel/ksyms.o
	@echo '  LD      $@'
	$(Q)ld $(KERNEL_LDFLAGS) -o $@ $(KERNEL_OBJS) $(BUILD)/kernel/ksyms.o
	@nm $(BUILD)/kernel/pass1.elf | grep -i ' t ' > $(BUILD)/kernel/pass1.syms
	@nm $@ | grep -i ' t ' > $(BUILD)/kernel/pass2.syms
	@cmp -s $(BUILD)/kernel/pass1.syms $(BUILD)/kernel/pass2.syms || \
		{ echo "ondol: code moved between the two kernel links"; exit 1; }

$(BUILD)/ondol.bin: $(BUILD)/ondol.elf
	@echo '  OBJCOPY $@'
	$(Q)objcopy -O binary $< $@
