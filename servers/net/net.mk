# ondol's TCP/IP stack (servers/net/, docs/net.md). The network server (netsrv.c, the
# platform layer over the virtio-net driver) is built as the MK task netsrv and into the
# kernel by user.mk and kernel.mk like every server; the stack alone is also built:
#   $(BUILD)/net/libnet.a   freestanding, with the user-space flags: proves the stack needs
#                           nothing beyond freestanding C and memcpy & co.
#   $(BUILD)/net/ik/*.o     the same files with the kernel's flags (the IK form compiles)
#   $(BUILD)/net/nettest    two-stack unit tests over a simulated link (ASan + UBSan)
#   $(BUILD)/net/netfuzz    seeded random-frame fuzz of the input path (ASan + UBSan)
# (nettest and netfuzz also compile the virtio-net driver's receive checks, vnet_rx.c)
#   $(BUILD)/net/nethost    the stack on a Linux tap device (tests against the host's stack)
#   $(BUILD)/net/netcost    per-layer instruction counts under callgrind
#   $(BUILD)/net/qemurelay  a seeded lossy link between QEMU's -netdev dgram and a tap
# The server builds (MK and IK) put the stack's layer boundaries on pcnt slots
# (servers/net/net_probe.h); the hosted builds and libnet.a leave the hooks empty.
$(BUILD)/user/srvobj/servers/net/%.o: USER_CFLAGS += -DNET_LAYER_PROBES
$(BUILD)/kernel/servers/net/%.o: KERNEL_CFLAGS += -DNET_LAYER_PROBES
NET_SRCS := $(filter-out servers/net/netsrv.c,$(sort $(wildcard servers/net/*.c)))
NET_HDRS := $(wildcard servers/net/*.h servers/net/host/*.h) drivers/virtio/vnet_rx.h
NET_FREE_OBJS := $(patsubst servers/net/%.c,$(BUILD)/net/free/%.o,$(NET_SRCS))
NET_HOST_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -Iservers/net
NET_SAN := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
NET_HOST_BINS := $(addprefix $(BUILD)/net/,nettest netfuzz nethost netcost qemurelay)
# IK form: the same files compile with the kernel's flags (not linked into it yet)
NET_IK_OBJS := $(patsubst servers/net/%.c,$(BUILD)/net/ik/%.o,$(NET_SRCS))

.PHONY: net net-fuzz net-cost
net: $(BUILD)/net/libnet.a $(NET_IK_OBJS) $(NET_HOST_BINS)

$(BUILD)/net/ik/%.o: servers/net/%.c $(NET_HDRS)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(KERNEL_CC) $(KERNEL_CFLAGS) -c $< -o $@

$(BUILD)/net/free/%.o: servers/net/%.c $(NET_HDRS) $(USER_FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo '  CC      $@'
	$(Q)$(USER_CC) $(USER_CFLAGS) -c $< -o $@

$(BUILD)/net/libnet.a: $(NET_FREE_OBJS)
	@echo '  AR      $@'
	$(Q)rm -f $@ && $(USER_AR) rcs $@ $^

# net_host_prog NAME, EXTRA SOURCES, FLAGS
define net_host_prog
$(BUILD)/net/$(1): $(NET_SRCS) $(2) $(NET_HDRS) servers/net/net.mk
	@mkdir -p $$(dir $$@)
	@echo '  HOSTCC  $$@'
	$(Q)gcc $(NET_HOST_CFLAGS) $(3) $(NET_SRCS) $(2) -o $$@
endef
# the driver's receive checks (drivers/virtio/vnet_rx.c) run hosted too: rxtso, netfuzz
$(eval $(call net_host_prog,nettest,servers/net/host/link.c servers/net/host/pair.c servers/net/host/nettest.c drivers/virtio/vnet_rx.c,$(NET_SAN) -Idrivers/virtio))
$(eval $(call net_host_prog,netfuzz,servers/net/host/link.c servers/net/host/pair.c servers/net/host/netfuzz.c drivers/virtio/vnet_rx.c,$(NET_SAN) -Idrivers/virtio))
$(eval $(call net_host_prog,nethost,servers/net/host/link.c servers/net/host/nethost.c,))
# no sibling calls: a layer that ends by calling the next must stay its caller for callgrind;
# no debug information: callgrind would split a function by the files of its inlined lines
# (mbuf.h, net_priv.h) and the layer table would take a part for the whole
$(eval $(call net_host_prog,netcost,servers/net/host/netcost.c,-fno-optimize-sibling-calls -g0))

# the seeded lossy link between QEMU's -netdev dgram and a tap (no stack in it)
$(BUILD)/net/qemurelay: servers/net/host/qemurelay.c servers/net/host/link.c servers/net/host/link.h servers/net/net.mk
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)gcc $(NET_HOST_CFLAGS) servers/net/host/qemurelay.c servers/net/host/link.c -o $@

# A long fuzz campaign: make net-fuzz SEED=1 N=10000000
net-fuzz: $(BUILD)/net/netfuzz
	$(BUILD)/net/netfuzz $(SEED) $(N)

# P3's per-layer instruction counts of the hosted stack (the table in docs/net.md)
net-cost: $(BUILD)/net/netcost
	python3 servers/net/host/netcost.py
