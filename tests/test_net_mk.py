"""The MK network server's robustness (docs/net.md, "The data channel" and "Mixed forms"):
its channel slots, and a network server that lives but never answers.

The virtio-net device is on QEMU's user network with `restrict=on` (nothing leaves QEMU,
and nothing comes in that the guest did not ask for), so these tests need neither root
nor a namespace: what they check happens between ondol's servers.
"""
import re

import pytest

from tests.qemu_harness import BUILD, Session

NETDEV = ("-netdev", "user,id=n0,restrict=on", "-device", "virtio-net-pci,netdev=n0")


def test_channel_slots_of_ended_threads():
    """tests/guest/chantest.c as the first task (privileged, so it may make windows): 12
    threads one after another each open a channel and end, and every open succeeds (the
    server takes the slots of ended threads back; before, the fifth got ENOMEM); then 4
    live threads get one each and a fifth is refused with ENOMEM (4 a task), while a
    second task still gets one."""
    s = Session({"init": "chantest", "net": "mk"}, wait_prompt=False, lifetime=170,
                extra=NETDEV)
    try:
        status = s.wait(160)
        out = s.output
    finally:
        s.close()
    assert "chantest ended" + " 0" * 12 + "\n" in out, out[-3000:]
    assert "chantest live 0 0 0 0\n" in out, out[-3000:]
    assert "chantest live extra -12\n" in out, out[-3000:]
    assert "chantest other 0\n" in out, out[-3000:]
    assert "chantest ok" in out, out[-3000:]
    assert status == 0
