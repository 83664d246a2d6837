#!/usr/bin/env bash
# Install what building, running and testing ondol needs, on a fresh Debian 12 machine.
# Idempotent and quiet when everything is already there. Uses sudo when not root.
set -euo pipefail
cd "$(dirname "$0")/.."

# retry CMD...: run CMD until it succeeds, up to 8 tries over about five minutes. The package
# registries are sometimes unreachable for a while (a name-resolution failure once failed a
# whole CI run within 13 s); an install that waits costs minutes, one that gives up a run.
retry() {
  local try=1 delay=10
  until "$@"; do
    if [ "$try" -ge 8 ]; then
      echo "ondol: giving up after $try tries: $*" >&2
      return 1
    fi
    echo "ondol: failed (try $try, again in ${delay} s): $*" >&2
    sleep "$delay"
    try=$((try + 1))
    delay=$((delay * 2 < 60 ? delay * 2 : 60))
  done
}

# apt_install PKG...: apt-get update, then install; both again on failure (retry above).
apt_install() {
  $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" \
      >/dev/null
}

# command -> Debian package providing it
need=(
  "gcc:gcc" "make:make" "ld:binutils" "qemu-system-x86_64:qemu-system-x86"
  "grub-mkrescue:grub-common" "xorriso:xorriso" "mformat:mtools" "tar:tar"
  "python3:python3" "git:git" "cpio:cpio" "musl-gcc:musl-tools"
  "valgrind:valgrind" "ip:iproute2"
)
missing=()
for pair in "${need[@]}"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair##*:}")
done
# grub-mkrescue needs the BIOS platform files, which live in grub-pc-bin.
[ -d /usr/lib/grub/i386-pc ] || missing+=(grub-pc-bin)
# python3 -m venv needs ensurepip (python3-venv on Debian).
python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "ondol: installing ${missing[*]} (apt-get)"
  retry apt_install "${missing[@]}"
fi

# Headless Chromium renders results/report.html for its test and `./ondol report --png`.
# Optional: without it only that test skips (saying why), so a failed install is a note.
if ! command -v chromium >/dev/null 2>&1; then
  echo "ondol: installing chromium (apt-get)"
  apt_install chromium >/dev/null 2>&1 ||
    echo "ondol: note: chromium could not be installed; the report's browser test will skip"
fi

# Python venv for the host tools and tests (pytest, matplotlib, rich).
# The venv is made once; a changed requirements file only installs into it (re-making a
# venv in use would swap its python under running tests).
stamp=.venv/.requirements
if [ ! -x .venv/bin/python ]; then
  echo "ondol: creating the Python venv (.venv)"
  python3 -m venv .venv
fi
# The pinned wheels are also kept in the user's cache (outside the tree, like pip's own
# cache), so a second checkout on this machine installs them without asking PyPI.
wheels="${XDG_CACHE_HOME:-$HOME/.cache}/ondol/wheels"
pip_install() {
  .venv/bin/pip install -q --disable-pip-version-check "$@" -r tools/requirements.txt
}
if ! cmp -s tools/requirements.txt "$stamp"; then
  echo "ondol: installing tools/requirements.txt into .venv"
  if ! pip_install --no-index --find-links "$wheels" >/dev/null 2>&1; then
    retry pip_install
    .venv/bin/pip download -q --disable-pip-version-check -d "$wheels" \
      -r tools/requirements.txt >/dev/null 2>&1 || true
  fi
  cp tools/requirements.txt "$stamp"
fi
