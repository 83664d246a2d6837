# ondol — top-level build. `make run` boots to the shell, `make test` runs every test.
# Both install what they need first (scripts/deps.sh). See README.md and docs/.

BUILD := build
export BUILD
# Quiet build: `make V=1` shows every command.
Q := $(if $(V),,@)

QEMU ?= qemu-system-x86_64
QEMU_MEM ?= 256M
ARGS ?=
# Debian 12 / QEMU 7.2: -cpu max gives NX, SMEP, SMAP; TCG only (no KVM here).
QEMU_FLAGS := -machine pc -cpu max -m $(QEMU_MEM) -smp 1 -display none -no-reboot \
	-kernel $(BUILD)/ondol.bin -initrd $(BUILD)/bootfs.tar

.PHONY: all run test debug fuzz iso clean deps distclean
all: kernel-and-archive

include lib/libc/libc.mk
include tools/idlgen/idlgen.mk
include kernel/kernel.mk
include user/user.mk
-include tools/cacheplugin/plugin.mk

.PHONY: kernel-and-archive
kernel-and-archive: $(BUILD)/ondol.bin $(BUILD)/bootfs.tar $(BUILD)/host/test_libc \
	$(if $(wildcard tools/cacheplugin/plugin.mk),$(BUILD)/tools/cachesim.so) $(BUILD)/ondol.iso

deps:
	@scripts/deps.sh

run: deps
	@$(MAKE) --no-print-directory all
	@echo "ondol: booting in QEMU (type 'halt' to power off, Ctrl-A X to kill QEMU)"
	@$(QEMU) $(QEMU_FLAGS) -append "$(ARGS)" -serial mon:stdio -serial file:$(BUILD)/com2.jsonl

debug: deps
	@$(MAKE) --no-print-directory all
	@echo "ondol: QEMU waits for gdb on localhost:1234; in another terminal run:"
	@echo "    gdb -x tools/gdbinit $(BUILD)/ondol.elf"
	@$(QEMU) $(QEMU_FLAGS) -append "$(ARGS)" -serial mon:stdio -serial file:$(BUILD)/com2.jsonl -s -S

test: deps
	@$(MAKE) --no-print-directory all
	@.venv/bin/python -m pytest tests -q -n 2 -p tests.summary $(PYTEST_ARGS)

SEED ?= 1
N ?= 1000000
fuzz: deps
	@$(MAKE) --no-print-directory all
	@.venv/bin/python tests/fuzz_campaign.py --seed $(SEED) --n $(N)

# ---- boot archive and ISO --------------------------------------------------------------
$(BUILD)/bootfs.tar: $(USER_PROGS)
	@mkdir -p $(dir $@)
	@echo '  TAR     $@'
	$(Q)tar --format=ustar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		-C $(BUILD)/user/bin -cf $@ $(notdir $(USER_PROGS))

iso: $(BUILD)/ondol.iso

$(BUILD)/ondol.iso: $(BUILD)/ondol.bin $(BUILD)/bootfs.tar tools/grub.cfg
	@mkdir -p $(BUILD)/iso/boot/grub
	@echo '  ISO     $@'
	$(Q)cp $(BUILD)/ondol.bin $(BUILD)/bootfs.tar $(BUILD)/iso/boot/
	$(Q)cp tools/grub.cfg $(BUILD)/iso/boot/grub/grub.cfg
	$(Q)grub-mkrescue -o $@ $(BUILD)/iso 2>$(BUILD)/grub-mkrescue.log || \
		{ cat $(BUILD)/grub-mkrescue.log; exit 1; }

clean:
	rm -rf $(BUILD)
distclean: clean
	rm -rf .venv results
