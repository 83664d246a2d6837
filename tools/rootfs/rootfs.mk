# The root file system archive (issue 10, item 8): build/rootfs/ and build/rootfs.cpio --
# Debian's busybox-static with its applet links, /etc, mount points, the differential
# suite (tests/linux/) and the Debian packages of dynamic programs (debroot.py). Built by
# tools/ondol/rootfs.py; reproducible. docs/unix.md.
.PHONY: rootfs
rootfs: deps
	@python3 tools/ondol/rootfs.py --build $(BUILD)
