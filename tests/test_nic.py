"""The driver-access system calls and the virtio-net driver, in QEMU (docs/drivers.md).

The guest checker is tests/guest/nictest.c. Its virtio-net device is attached to QEMU's
UDP socket back-end, so each Ethernet frame the guest sends arrives here as one datagram
and each datagram sent to QEMU's port arrives in the guest as one frame: the test is the
guest's whole network, without root or a tap. The host answers the guest's "hello" with
NICTEST_FRAMES numbered frames of varying length (keeping at most WINDOW unanswered, so
QEMU's socket buffer never overflows) and checks that every one comes back intact and in
order, with the addresses swapped.
"""
from __future__ import annotations

import re
import socket
import threading

import pytest

from tests.qemu_harness import Session

FRAMES = 300            # NICTEST_FRAMES in nictest.c
ETHERTYPE = b"\x88\xb5"
WINDOW = 48
HOST_MAC = bytes.fromhex("020000000001")


def frame(seq: int, guest_mac: bytes) -> bytes:
    """Frame `seq`: to the guest, from the host; 60 to 1514 bytes; a pattern nictest checks."""
    length = 60 + (seq * 37) % 1455
    body = bytes((seq * 7 + i) & 0xff for i in range(18, length))
    return guest_mac + HOST_MAC + ETHERTYPE + seq.to_bytes(4, "big") + body


def expected_echo(sent: bytes) -> bytes:
    return sent[6:12] + sent[0:6] + sent[12:]


class Peer:
    """The host end: a UDP socket that QEMU's netdev sends to; runs in a thread."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(60)
        self.port = self.sock.getsockname()[1]
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.bind(("127.0.0.1", 0))
        self.qemu_port = probe.getsockname()[1]
        probe.close()
        self.hello: bytes | None = None
        self.echoes: list[bytes] = []
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def netdev_flags(self, device: str) -> list[str]:
        return ["-netdev", f"socket,id=n0,udp=127.0.0.1:{self.port},"
                f"localaddr=127.0.0.1:{self.qemu_port}", "-device", f"{device},netdev=n0"]

    def _run(self) -> None:
        try:
            self.hello = self.sock.recv(2048)
            mac = self.hello[6:12]
            sent = 0
            while len(self.echoes) < FRAMES:
                while sent < FRAMES and sent - len(self.echoes) < WINDOW:
                    self.sock.sendto(frame(sent, mac), ("127.0.0.1", self.qemu_port))
                    sent += 1
                self.echoes.append(self.sock.recv(2048))
        except OSError as exc:
            self.error = f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        self.sock.close()
        self.thread.join(timeout=5)


@pytest.mark.parametrize("device,msix", [("virtio-net-pci", "off"),  # transitional 1af4:1000
                                         ("virtio-net-pci,disable-legacy=on", "off"),  # 1af4:1041
                                         ("virtio-net-pci,disable-legacy=on", "on")])
def test_virtio_net_echo(device, msix):
    """With msix=on the kernel gives the device MSI-X instead of its INTx line: the same
    echoes must come back, the interrupts arriving as the claim's MSI-X vector."""
    peer = Peer()
    s = Session({"init": "nictest", "msix": msix}, wait_prompt=False, lifetime=170,
                extra=tuple(peer.netdev_flags(device)))
    try:
        peer.thread.start()
        status = s.wait(160)
        s._reader.join(timeout=5)
        out = s.output
    finally:
        s.close()
        peer.close()
    assert "FAIL" not in out, out[-3000:]
    assert "nictest ok" in out, out[-3000:]
    m = re.search(r"nictest: device 1af4:(\w+) .* irq (\d+) msix (\d) mac ([0-9a-f:]+)", out)
    assert m and m.group(1) == ("1041" if "disable-legacy" in device else "1000"), out[-2000:]
    assert m.group(3) == ("1" if msix == "on" else "0"), out[-2000:]
    assert status == 0
    assert peer.error is None, peer.error
    mac = bytes.fromhex(m.group(4).replace(":", ""))
    assert peer.hello[:6] == b"\xff" * 6 and peer.hello[6:12] == mac
    assert peer.hello[12:14] == ETHERTYPE and b"ondol nictest hello" in peer.hello
    assert [len(e) for e in peer.echoes] == [len(frame(i, mac)) for i in range(FRAMES)]
    for i, echo in enumerate(peer.echoes):
        assert echo == expected_echo(frame(i, mac)), f"echo {i} differs"
    counts = re.search(r"nictest: rx (\d+) tx (\d+) irqs (\d+) bad (\d+)", out)
    assert counts, out[-2000:]
    rx, tx, irqs, bad = map(int, counts.groups())
    assert (rx, tx, bad) == (FRAMES, FRAMES + 1, 0)
    assert irqs > 0                        # the interrupt reached the driver through SYS_IRQ_WAIT


def test_driver_calls_need_privilege():
    with Session() as s:
        out = s.cmd("nictest")
        assert "nictest: unprivileged ok" in out, out
        assert s.halt() == 0
