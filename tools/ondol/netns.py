"""A network namespace with one tap device, where ondol's QEMU and the host-side programs
meet (`./ondol net`, tests/test_net_qemu.py; docs/net.md). The Linux side of the tap has
10.79.0.1/24, ondol is told 10.79.0.2 (`ip=`, `gw=`); nothing is routed out of the
namespace, so the addresses stay inside it. Needs root (or CAP_NET_ADMIN) and iproute2.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

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

    def wait_listening(self, port: int, timeout: float = 30) -> None:
        """Wait until a TCP socket listens on `port` in the namespace: a server started there
        (Python's http.server) takes a second or more to get there on a loaded host."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ss = subprocess.run([*self.prefix(), "ss", "-Hltn", f"sport = :{port}"],
                                capture_output=True, text=True)
            if ss.stdout.strip():
                return
            time.sleep(0.1)
        raise OndolError(f"nothing listens on port {port} in namespace {self.name} after {timeout} s")

    def wait_connected(self, port: int, timeout: float = 60) -> None:
        """Wait until a TCP connection to local `port` in the namespace is established: a
        guest program's connect may take seconds to get there on a loaded host."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ss = subprocess.run([*self.prefix(), "ss", "-Htn", "state", "established",
                                 f"sport = :{port}"], capture_output=True, text=True)
            if ss.stdout.strip():
                return
            time.sleep(0.1)
        raise OndolError(f"no connection to port {port} in namespace {self.name} after {timeout} s")


def qemu_flags() -> tuple[str, ...]:
    """The virtio-net device on the namespace's tap (QEMU must run inside the namespace)."""
    return ("-netdev", f"tap,id=n0,ifname={TAP},script=no,downscript=no",
            "-device", "virtio-net-pci,netdev=n0")


def kernel_options(placement: str) -> dict[str, str]:
    return {"net": placement, "ip": f"{ONDOL_IP}/{PREFIX}", "gw": LINUX_IP}


# Ports on the namespace's loopback between QEMU's dgram back-end and qemurelay.
RELAY_PORT, RELAY_QEMU_PORT = 47001, 47002


def relay_qemu_flags() -> tuple[str, ...]:
    """The virtio-net device on QEMU's dgram back-end, whose frames go to build/net/qemurelay
    on RELAY_PORT (and come back to RELAY_QEMU_PORT); the relay holds the tap."""
    return ("-netdev", f"dgram,id=n0,local.type=inet,local.host=127.0.0.1,"
                       f"local.port={RELAY_QEMU_PORT},remote.type=inet,remote.host=127.0.0.1,"
                       f"remote.port={RELAY_PORT}",
            "-device", "virtio-net-pci,netdev=n0")


RELAY_KEYS = ("seed", "loss", "dup", "reorder", "delay", "jitter")


class Relay:
    """`with Relay(ns, binary, "loss=20,seed=7") as r:` runs qemurelay in the namespace on
    its tap (QEMU then uses relay_qemu_flags()); afterwards `r.report` says what it lost,
    duplicated and reordered."""

    def __init__(self, ns: Namespace, binary: Path, spec: str):
        self.ns, self.binary, self.report = ns, binary, ""
        self.args = []
        for word in filter(None, spec.split(",")):
            key, _, value = word.partition("=")
            if key not in RELAY_KEYS or not value.isdigit():
                raise OndolError(f"relay: {word!r}: want K=N with K one of {', '.join(RELAY_KEYS)}")
            self.args += [f"--{key}", value]

    def __enter__(self) -> "Relay":
        if not self.binary.exists():
            raise OndolError(f"relay: {self.binary} is missing (make builds it)")
        self.proc = subprocess.Popen([*self.ns.prefix(), str(self.binary), "--tap", TAP,
                                      "--port", str(RELAY_PORT), "--qemu-port",
                                      str(RELAY_QEMU_PORT), *self.args],
                                     stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            self.proc.kill()
            raise OndolError("relay: qemurelay did not start")
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        self.report = self.proc.communicate(timeout=30)[0].strip()
