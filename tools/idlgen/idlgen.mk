# Server interfaces (docs/servers.md): interfaces/NAME.idl -> C in $(GEN) by tools/idlgen.
# Defines GEN, IDL_STAMP (order-only prerequisite of anything that includes generated
# headers), GEN_KERNEL_SRCS (the dispatches and the IK table, compiled into the kernel) and
# SERVER_NAMES (servers/NAME folders, each also built as the MK task NAMEsrv in user.mk).
GEN := $(BUILD)/gen
IDL_FILES := $(sort $(wildcard interfaces/*.idl))
IDL_NAMES := $(basename $(notdir $(IDL_FILES)))
IDL_STAMP := $(GEN)/.stamp
IDL_OUTPUTS := $(foreach n,$(IDL_NAMES),$(addprefix $(GEN)/$(n),.h _client.h _server.h \
	_server.c _mk.c)) $(GEN)/srv_ik_table.c
GEN_KERNEL_SRCS := $(patsubst %,$(GEN)/%_server.c,$(IDL_NAMES)) $(GEN)/srv_ik_table.c
# A folder is a server once it has an interface (servers/unix/ stays out of the kernel and
# the archive until interfaces/unix.idl). Sorted: each name once, however many files.
SERVER_NAMES := $(sort $(filter $(IDL_NAMES),$(notdir $(patsubst %/,%,$(dir $(wildcard servers/*/*.c))))))

$(IDL_STAMP): $(IDL_FILES) tools/idlgen/idlgen.py
	@mkdir -p $(GEN)
	@echo '  IDLGEN  $(GEN)'
	$(Q)python3 tools/idlgen/idlgen.py -o $(GEN) $(IDL_FILES)
	@touch $@
# idlgen rewrites only files whose text changed; the stamp stands for all of them.
$(IDL_OUTPUTS): $(IDL_STAMP) ;
