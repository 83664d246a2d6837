# ondol — top-level build. `make run` boots to the shell, `make test` runs every test.
# Both install what they need first (scripts/deps.sh). See README.md and docs/.

BUILD := build
export BUILD
# Quiet build: `make V=1` shows every command.
Q := $(if $(V),,@)

QEMU ?= $(or $(ONDOL_QEMU),qemu-system-x86_64)
QEMU_MEM ?= 256M
QEMU_EXTRA ?=
ARGS ?=
# `make run` boots into busybox sh under the UNIX server (docs/unix.md); UNIX=off gives
# ondol's native shell, UNIX=ik the server's IK form (linked into the kernel).
UNIX ?= mk
RUN_APPEND = $(strip $(if $(filter-out off,$(UNIX)),unix=$(UNIX)) $(ARGS))
# The QEMU command line is written once, in tools/qemucmd.py (docs/debugging.md); run and
# debug only choose the variant. `QEMU_EXTRA='-d int -D qemu.log'` appends flags verbatim.
QEMU_BOOT = python3 tools/qemucmd.py --qemu $(QEMU) --memory $(QEMU_MEM) --build $(BUILD) \
	--append "$(ARGS)"
QEMU_TAIL = $(if $(QEMU_EXTRA),-- $(QEMU_EXTRA))

.PHONY: all run test debug fuzz fuzz-linux soak iso clean deps distclean docs qemu10
all: kernel-and-archive

include lib/libc/libc.mk
include tools/idlgen/idlgen.mk
include lib/malloc/malloc.mk
include drivers/drivers.mk
include kernel/kernel.mk
include user/user.mk
include servers/net/net.mk
include servers/unix/unix.mk
-include tools/cacheplugin/plugin.mk
include tools/rootfs/rootfs.mk

.PHONY: kernel-and-archive
kernel-and-archive: $(BUILD)/ondol.bin $(BUILD)/bootfs.tar $(BUILD)/host/test_libc \
	$(if $(wildcard tools/cacheplugin/plugin.mk),$(BUILD)/tools/cachesim.so) $(BUILD)/ondol.iso \
	net malloc unix-host

deps:
	@scripts/deps.sh

run: deps
	@$(MAKE) --no-print-directory all $(if $(filter-out off,$(UNIX)),rootfs)
	@echo "ondol: booting in QEMU (type 'halt' to power off, Ctrl-A X to kill QEMU)"
	@python3 tools/qemucmd.py --qemu $(QEMU) --memory $(QEMU_MEM) --build $(BUILD) --append "$(RUN_APPEND)" $(QEMU_TAIL)

debug: deps
	@$(MAKE) --no-print-directory all
	@echo "ondol: QEMU waits for gdb on localhost:1234; in another terminal run:"
	@echo "    gdb -x tools/gdbinit $(BUILD)/ondol.elf"
	@$(QEMU_BOOT) --gdb $(QEMU_TAIL)

# The root archive is built before pytest starts: tests that need it decide at collection
# time whether they can run (a clean clone has none yet, and they would skip).
test: deps
	@$(MAKE) --no-print-directory all rootfs
	@scripts/qemu.sh || echo "make test: QEMU 10 could not be unpacked; the tests that need a fair icount round robin skip"
	@.venv/bin/python -m pytest tests -q -n 2 -p tests.summary $(PYTEST_ARGS)

# Tables in docs/ generated from the declarations (docs/options.md); tests check them.
docs:
	@cd tools && ../.venv/bin/python -m ondol.options --write

# QEMU 10.0 from bookworm-backports unpacked into build/qemu, run with ONDOL_QEMU= its
# wrapper: a fair icount round robin for SMP runs (docs/debugging.md, "Which QEMU").
qemu10:
	@scripts/qemu.sh

SEED ?= 1
N ?= 1000000
fuzz: deps
	@$(MAKE) --no-print-directory all
	@.venv/bin/python tests/fuzz_campaign.py --seed $(SEED) --n $(N)

# The SMP soak's long form: the AIM7-like mix on 8 vCPUs, MK then IK, then the fuzzers on
# 4 vCPUs (docs/smp.md, "Soak"); the short form is tests/test_smp_soak.py in make test.
soak: deps
	@$(MAKE) --no-print-directory all
	@.venv/bin/python tests/soak.py

# The Linux-ABI fuzzer on the UNIX server, MK then IK (docs/unix.md, "Reliability").
fuzz-linux: deps
	@$(MAKE) --no-print-directory all
	@.venv/bin/python tests/fuzz_linux_campaign.py --seed $(SEED) --n $(N)

# ---- boot archive and ISO --------------------------------------------------------------
# Every program of user/, bench/ and tests/guest/ (user/user.mk), flat, by program name.
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
