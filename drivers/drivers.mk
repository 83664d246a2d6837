# Device drivers (drivers/, docs/drivers.md), one source for both placements:
#   $(BUILD)/user/libdrv.a   the drivers with the MK platform (lib/drv/mk.c, system calls),
#                            linked into every user program (only what a program uses is pulled in)
# IK: kernel/kernel.mk compiles the same files into the kernel, with the IK platform
# kernel/dev/drv_ik.c.
DRV_SRCS := $(wildcard drivers/*/*.c)
DRV_INCLUDES := -Idrivers $(addprefix -I,$(sort $(dir $(DRV_SRCS))))
DRV_USER_OBJS := $(patsubst %.c,$(BUILD)/user/drv/%.o,$(DRV_SRCS) lib/drv/mk.c)
DRV_USER_A := $(BUILD)/user/libdrv.a

$(BUILD)/user/drv/%.o: %.c $(USER_FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) $(DRV_INCLUDES) -MMD -MP -c $< -o $@

$(DRV_USER_A): $(DRV_USER_OBJS)
	$(Q)rm -f $@
	@echo '  AR      $@'
	$(Q)$(USER_AR) rcs $@ $^

-include $(DRV_USER_OBJS:.o=.d)
