#!/usr/bin/env bash
# build-initramfs.sh - fetch Debian's stock kernel and busybox, build the peer
# programs and pack the peer initramfs. Idempotent; downloads are cached.
#
# usage: tools/peer/build-initramfs.sh [--refresh]
#   --refresh   re-resolve the kernel version even if a kernel .deb is cached
#
# Environment:
#   PEER_BUILD_DIR    output directory (default: <repo>/build/peer)
#   PEER_KERNEL_PKG   kernel package to use (default: what linux-image-amd64
#                     depends on, e.g. linux-image-6.1.0-56-amd64)
#   CC                compiler (default: gcc)
#
# Products (printed as key=value on stdout at the end):
#   vmlinuz=<dir>/vmlinuz            the stock kernel image
#   initramfs=<dir>/images/<hash>/initramfs.cpio   newc cpio: /init, busybox, peer programs
#   kernel_version=<uname -r of the kernel>
#   bin=<dir>/images/<hash>/bin      the static peer programs (host-runnable)
#   busybox=<dir>/busybox/bin/busybox   Debian's static busybox (the rootfs uses it too)
# <hash> names what they were built from (sources, flags, busybox), so two checkouts
# sharing <dir> with different peer programs each keep their own.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SRC/../.." && pwd)
OUT=${PEER_BUILD_DIR:-$ROOT/build/peer}
CC=${CC:-gcc}
CFLAGS="-std=c11 -static -O2 -Wall -Wextra -Werror"
PROGS="pingpong_pipe pingpong_futex null_syscall vm_ops"
# Applets the /init script uses (busybox is linked under these names).
APPLETS="sh mount cat stty uname tr poweroff echo printf sleep ls dmesg"
# Fixed timestamp for every archive member (2024-01-01T00:00:00Z).
EPOCH=1704067200

REFRESH=0
for a in "$@"; do
	case "$a" in
	--refresh) REFRESH=1 ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "build-initramfs: unknown argument: $a" >&2; exit 2 ;;
	esac
done

die() { echo "build-initramfs: $*" >&2; exit 1; }
log() { echo "build-initramfs: $*" >&2; }

mkdir -p "$OUT/debs"
# Serialise concurrent builds (parallel tests).
exec 9>"$OUT/.lock"
flock 9

for c in apt-get apt-cache dpkg-deb tar "$CC" flock; do
	command -v "$c" >/dev/null || die "missing host tool: $c"
done
if ! command -v cpio >/dev/null; then
	log "installing cpio"
	apt-get install -y -q cpio >&2 || die "cpio missing and 'apt-get install cpio' failed"
fi

APT_UPDATED=0
apt_update_once() {
	if [ "$APT_UPDATED" = 0 ]; then
		log "apt-get update"
		apt-get update -q >&2 || die "apt-get update failed"
		APT_UPDATED=1
	fi
}

# cached_deb PATTERN -> newest cached .deb matching the pattern, or nothing.
cached_deb() {
	local f
	f=$(ls -1 "$OUT/debs"/$1 2>/dev/null | LC_ALL=C sort -V | tail -n 1 || true)
	[ -n "$f" ] && echo "$f"
	return 0
}

# fetch PKG -> path of PKG's .deb in $OUT/debs (downloaded unless cached).
fetch() {
	local pkg=$1 f tmp
	f=$(cached_deb "${pkg}_*.deb")
	if [ -n "$f" ] && dpkg-deb --info "$f" >/dev/null 2>&1; then
		echo "$f"
		return 0
	fi
	tmp=$(mktemp -d "$OUT/debs/.dl.XXXXXX")
	log "apt-get download $pkg"
	# A failed download runs `apt-get update` once, then tries again with growing pauses
	# (about five minutes in all): the archive is sometimes unreachable for a while.
	local try=1 delay=10
	until (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2 2>&1); do
		[ "$try" -lt 8 ] || { rm -rf "$tmp"; die "download of $pkg failed"; }
		apt_update_once
		log "download of $pkg failed (try $try); again in ${delay} s"
		sleep "$delay"
		try=$((try + 1))
		delay=$((delay * 2 < 60 ? delay * 2 : 60))
	done
	f=$(ls -1 "$tmp"/*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] && dpkg-deb --info "$f" >/dev/null 2>&1 || { rm -rf "$tmp"; die "download of $pkg gave no valid .deb"; }
	mv "$f" "$OUT/debs/"
	rm -rf "$tmp"
	echo "$OUT/debs/$(basename "$f")"
}

resolve_kernel_pkg() {
	local pkg
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$pkg" ]; then
		apt_update_once
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	fi
	[ -n "$pkg" ] || die "cannot resolve linux-image-amd64 to a kernel package"
	echo "$pkg"
}

# --- kernel ------------------------------------------------------------------
if [ -n "${PEER_KERNEL_PKG:-}" ]; then
	KPKG=$PEER_KERNEL_PKG
	KDEB=$(fetch "$KPKG")
else
	KDEB=$(cached_deb 'linux-image-[0-9]*-amd64_*.deb')
	if [ -z "$KDEB" ] || [ "$REFRESH" = 1 ]; then
		KPKG=$(resolve_kernel_pkg)
		KDEB=$(fetch "$KPKG")
	fi
fi
# Only boot/ is needed (vmlinuz, config); the modules are not, as the peer
# initramfs needs none (8250 serial, devtmpfs and ACPI power-off are built in).
KSTAMP="$OUT/kernel/.from"
if [ ! -f "$KSTAMP" ] || [ "$(cat "$KSTAMP")" != "$(basename "$KDEB")" ]; then
	log "extracting $(basename "$KDEB")"
	rm -rf "$OUT/kernel"
	mkdir -p "$OUT/kernel"
	dpkg-deb --fsys-tarfile "$KDEB" | tar -x -C "$OUT/kernel" --wildcards './boot/*' ||
		die "extracting $KDEB failed"
	basename "$KDEB" >"$KSTAMP"
fi
VMLINUZ_SRC=$(ls -1 "$OUT"/kernel/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$VMLINUZ_SRC" ] || die "no boot/vmlinuz-* in $KDEB"
KVER=${VMLINUZ_SRC##*/vmlinuz-}
if ! cmp -s "$VMLINUZ_SRC" "$OUT/vmlinuz" 2>/dev/null; then
	cp "$VMLINUZ_SRC" "$OUT/vmlinuz.tmp"
	mv "$OUT/vmlinuz.tmp" "$OUT/vmlinuz"
fi

# --- busybox -----------------------------------------------------------------
BDEB=$(fetch busybox-static)
BSTAMP="$OUT/busybox/.from"
if [ ! -f "$BSTAMP" ] || [ "$(cat "$BSTAMP")" != "$(basename "$BDEB")" ]; then
	log "extracting $(basename "$BDEB")"
	rm -rf "$OUT/busybox"
	mkdir -p "$OUT/busybox"
	dpkg-deb -x "$BDEB" "$OUT/busybox" || die "extracting $BDEB failed"
	basename "$BDEB" >"$BSTAMP"
fi
BUSYBOX="$OUT/busybox/bin/busybox"
[ -x "$BUSYBOX" ] || die "no bin/busybox in $BDEB"

# --- peer programs -----------------------------------------------------------
# The programs and the initramfs go to a directory named by a hash of what they are built
# from, so checkouts with different peer programs sharing one $OUT never replace each
# other's image between a build and a boot; the same sources give the same directory.
KEY=$({ cd "$SRC" && LC_ALL=C cat build-initramfs.sh init ./*.c ./*.h &&
	echo "$CC $CFLAGS $PROGS $APPLETS $(basename "$BDEB")"; } | sha256sum | cut -c1-16)
IMG="$OUT/images/$KEY"
mkdir -p "$IMG/bin"
for p in $PROGS; do
	"$CC" $CFLAGS -o "$IMG/bin/$p.tmp" "$SRC/$p.c" "$SRC/peer.c" -lpthread ||
		die "compiling $p failed"
	mv "$IMG/bin/$p.tmp" "$IMG/bin/$p"
done

# --- initramfs ---------------------------------------------------------------
STAGE="$OUT/root.tmp"
rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,dev,proc,sys}
install -m 0755 "$BUSYBOX" "$STAGE/bin/busybox"
for a in $APPLETS; do
	ln -s busybox "$STAGE/bin/$a"
done
for p in $PROGS; do
	install -m 0755 "$IMG/bin/$p" "$STAGE/bin/$p"
done
install -m 0755 "$SRC/init" "$STAGE/init"
chmod 0755 "$STAGE" "$STAGE"/{bin,dev,proc,sys}
find "$STAGE" -exec touch -h -d "@$EPOCH" {} +
(
	cd "$STAGE"
	find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --reproducible --quiet
) >"$IMG/initramfs.cpio.tmp" || die "cpio failed"
mv "$IMG/initramfs.cpio.tmp" "$IMG/initramfs.cpio"
rm -rf "$STAGE"

echo "vmlinuz=$OUT/vmlinuz"
echo "initramfs=$IMG/initramfs.cpio"
echo "kernel_version=$KVER"
echo "bin=$IMG/bin"
echo "busybox=$BUSYBOX"
