#!/usr/bin/env bash
# QEMU 10.0.2 from Debian bookworm-backports, unpacked into build/qemu for ondol alone:
# nothing is installed system-wide and /etc/apt is not touched.
#
# Why: Debian 12's QEMU 7.2 gives a busy vCPU the whole icount budget up to the next timer
# deadline, so under -icount the other vCPUs run no instruction until it halts. QEMU 8.1
# fixed that ("accel/tcg/tcg-accel-ops-rr: ensure fairness with icount"); docs/smp.md,
# "Under icount", also says what QEMU 10 gets wrong for the cache plugin.
#
# The six packages are pinned by pool path and SHA-256, downloaded once into
# build/qemu/debs, checked, and unpacked with dpkg-deb into build/qemu/root. Their
# dependencies are libraries bookworm already has (qemu-system-x86 7.2 pulled them in).
# The OpenGL and SPICE modules are fetched although ondol uses neither: QEMU 10 asks for
# its ui modules at every start with default devices, and without its own it tries 7.2's
# in /usr/lib, which it refuses with lines on stderr (the guest's console in tests).
# build/qemu/bin/qemu-system-x86_64 runs the unpacked binary with its own firmware and
# modules first (-L, QEMU_MODULE_DIR: Debian's build looks only under /usr). It is opt-in:
# ONDOL_QEMU=$PWD/build/qemu/bin/qemu-system-x86_64 (docs/debugging.md, "Which QEMU").
# `make qemu10` runs this script. Idempotent and quiet once done.
set -euo pipefail
cd "$(dirname "$0")/.."

mirror=${ONDOL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
dest=build/qemu
# pool path under $mirror/pool/main, SHA-256
pkgs=(
  "q/qemu/qemu-system-x86_10.0.2+ds-2+deb13u1~bpo12+1_amd64.deb 4a6b1856c8b0d7df4ff8e70249e12c473ccf8d516aadb4ae14d3d938faed0c65"
  "q/qemu/qemu-system-common_10.0.2+ds-2+deb13u1~bpo12+1_amd64.deb 23a4672a138832d7173855e981aa8282c73ef5e04e080fa7ada9f82c6b34f507"
  "q/qemu/qemu-system-data_10.0.2+ds-2+deb13u1~bpo12+1_all.deb 2d831088187087013b3fcbd19bdfb955b182a2d5a08f6dafa0ad1c6d2007fb4e"
  "q/qemu/qemu-system-modules-opengl_10.0.2+ds-2+deb13u1~bpo12+1_amd64.deb 1649429821d787acf8377eb52685390adabadad239f80acf7c7f40bf09536289"
  "q/qemu/qemu-system-modules-spice_10.0.2+ds-2+deb13u1~bpo12+1_amd64.deb 106e82d2f5c7c8bb82aec35c96af75267c9cf2f54c1718b6bb0b57f0d4bd290e"
  "s/seabios/seabios_1.16.3-2~bpo12+1_all.deb 48390d0a534c66d11789e39518aa219773a9d3677b29fe1af8799dfb563ec713"
)
stamp=$dest/.unpacked
if [ -x $dest/bin/qemu-system-x86_64 ] && printf '%s\n' "${pkgs[@]}" | cmp -s - "$stamp"; then
  exit 0
fi

# fetch POOLPATH SHA256: the .deb in $dest/debs, downloaded unless a checked copy is there.
fetch() {
  local file=$dest/debs/${1##*/}
  if ! echo "$2  $file" | sha256sum -c --status 2>/dev/null; then
    echo "ondol: downloading ${1##*/}" >&2
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(*sys.argv[1:])' \
      "$mirror/pool/main/$1" "$file.part" 2>/dev/null || {
      echo "ondol: cannot download $mirror/pool/main/$1 (backports may have moved on:" \
           "update the pins in scripts/qemu.sh)" >&2
      exit 1
    }
    echo "$2  $file.part" | sha256sum -c --status ||
      { echo "ondol: ${1##*/}: SHA-256 mismatch" >&2; exit 1; }
    mv "$file.part" "$file"
  fi
}

mkdir -p $dest/debs
rm -rf $dest/root $dest/bin "$stamp"
for entry in "${pkgs[@]}"; do
  read -r path sum <<<"$entry"
  fetch "$path" "$sum"
  dpkg-deb -x "$dest/debs/${path##*/}" $dest/root
done

mkdir -p $dest/bin
cat >$dest/bin/qemu-system-x86_64 <<'EOF'
#!/bin/sh
# Written by scripts/qemu.sh: the unpacked QEMU 10 with its own firmware, option ROMs and
# modules (the installed QEMU 7.2's modules in /usr/lib would be tried and refused).
usr=$(dirname "$(readlink -f "$0")")/../root/usr
QEMU_MODULE_DIR=$usr/lib/x86_64-linux-gnu/qemu exec "$usr/bin/qemu-system-x86_64" \
  -L "$usr/share/qemu" -L "$usr/share/seabios" "$@"
EOF
chmod +x $dest/bin/qemu-system-x86_64
$dest/bin/qemu-system-x86_64 --version >/dev/null ||
  { echo "ondol: the unpacked QEMU does not run (missing libraries?)" >&2; exit 1; }
printf '%s\n' "${pkgs[@]}" >"$stamp"
echo "ondol: $($dest/bin/qemu-system-x86_64 --version | head -1) in $dest"
