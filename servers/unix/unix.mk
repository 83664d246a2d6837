# The UNIX server (servers/unix/, docs/unix.md). Hosted unit tests:
#   $(BUILD)/unix/host/libunix.a     every server file compiled for the host (ASan + UBSan)
#   $(BUILD)/unix/host/test_NAME     servers/unix/host/test_NAME.c + fake.c + libunix.a;
#                                    tests/unix/test_unix_hosted.py runs each one
# A test links only the server files it uses (the archive), so parts that need the real
# runtime stay out of tests that do not call them.
# signal_stub.c (placeholder signals until unix-signals merges) stays out: the fake's
# weak signal hooks count what the tests check.
UNIX_SRCS := $(filter-out servers/unix/signal_stub.c,$(sort $(wildcard servers/unix/*.c)))
UNIX_HDRS := $(wildcard servers/unix/*.h servers/unix/*.def servers/unix/host/*.h)
UNIX_HOST_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -Iservers/unix -Iservers/unix/host -I$(GEN) -Ilib/include \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
UNIX_HOST_OBJS := $(patsubst servers/unix/%.c,$(BUILD)/unix/host/obj/%.o,$(UNIX_SRCS))
UNIX_HOST_TESTS := $(patsubst servers/unix/host/%.c,$(BUILD)/unix/host/%,\
	$(wildcard servers/unix/host/test_*.c))

.PHONY: unix-host
unix-host: $(UNIX_HOST_TESTS)

$(BUILD)/unix/host/obj/%.o: servers/unix/%.c $(UNIX_HDRS) | $(IDL_STAMP)
	@mkdir -p $(dir $@)
	@echo '  HOSTCC  $@'
	$(Q)gcc $(UNIX_HOST_CFLAGS) -c $< -o $@

$(BUILD)/unix/host/libunix.a: $(UNIX_HOST_OBJS)
	@mkdir -p $(dir $@)
	@echo '  AR      $@'
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/unix/host/test_%: servers/unix/host/test_%.c servers/unix/host/fake.c \
		$(BUILD)/unix/host/libunix.a $(UNIX_HDRS)
	@echo '  HOSTCC  $@'
	$(Q)gcc $(UNIX_HOST_CFLAGS) $< servers/unix/host/fake.c $(BUILD)/unix/host/libunix.a -o $@
