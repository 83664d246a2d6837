"""A network namespace with one tap device, where ondol's QEMU and the host-side programs
meet (`./ondol net`, tests/test_net_qemu.py; docs/net.md). The Linux side of the tap has
10.79.0.1/24, ondol is told 10.79.0.2 (`ip=`, `gw=`); nothing is routed out of the
namespace, so the addresses stay inside it. Needs root (or CAP_NET_ADMIN) and iproute2.
"""
from __future__ import annotations

import os
import shutil
import subprocess

from ondol import OndolError

LINUX_IP, ONDOL_IP, PREFIX = "10.79.0.1", "10.79.0.2", 24
TAP = "ondolq0"


def unavailable() -> str | None:
    """Why a namespace cannot be made here, or None."""
    if os.geteuid() != 0:
        return "needs root (a network namespace and a tap device)"
    if not shutil.which("ip"):
        return "needs iproute2's ip (scripts/deps.sh installs it)"
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise OndolError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r


class Namespace:
    """`with Namespace(name) as ns:` creates the namespace and its tap, removes both after."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> "Namespace":
        why = unavailable()
        if why:
            raise OndolError(why)
        _ip("netns", "add", self.name)
        try:
            for cmd in (("link", "set", "lo", "up"), ("tuntap", "add", "dev", TAP, "mode", "tap"),
                        ("addr", "add", f"{LINUX_IP}/{PREFIX}", "dev", TAP),
                        ("link", "set", TAP, "up")):
                _ip("netns", "exec", self.name, "ip", *cmd)
        except OndolError:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        _ip("netns", "del", self.name, check=False)

    def prefix(self) -> list[str]:
        """Put in front of a command to run it inside the namespace."""
        return ["ip", "netns", "exec", self.name]


def qemu_flags() -> tuple[str, ...]:
    """The virtio-net device on the namespace's tap (QEMU must run inside the namespace)."""
    return ("-netdev", f"tap,id=n0,ifname={TAP},script=no,downscript=no",
            "-device", "virtio-net-pci,netdev=n0")


def kernel_options(placement: str) -> dict[str, str]:
    return {"net": placement, "ip": f"{ONDOL_IP}/{PREFIX}", "gw": LINUX_IP}
