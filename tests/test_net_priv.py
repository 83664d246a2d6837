"""The network server's privileged ops (docs/net.md, "Changing the configuration"):
setconfig and probes only for a privileged caller (srv_privileged, SYS_CALLER_PRIVILEGED).

tests/guest/netprivtest.c as the first task (privileged) spawns an unprivileged copy of
itself: its setconfig and probes are refused with E_PERM and the configuration stays as it
was; reading it stays open; the privileged parent's own setconfig is accepted. In both
placements of the server (MK: the kernel answers SYS_CALLER_PRIVILEGED; IK: the runtime
looks at the calling task). The UNIX server's path (privileged) is tests/test_net_config.py.
The device is on QEMU's user network with `restrict=on`: nothing leaves QEMU.
"""
import pytest

from tests.qemu_harness import run_to_halt

NETDEV = ("-netdev", "user,id=n0,restrict=on", "-device", "virtio-net-pci,netdev=n0")


@pytest.mark.parametrize("placement", ["mk", "ik"])
def test_unprivileged_setconfig_refused(placement):
    status, out, _ = run_to_halt({"init": "netprivtest", "net": placement}, timeout=110,
                                 extra=NETDEV)
    # E_PERM is -7; config (reading) is 0
    assert "netprivtest child setconfig -7 probes -7 config 0\n" in out, out[-3000:]
    assert "netprivtest child caller -7 -7 -7\n" in out, out[-3000:]
    assert "netprivtest child status 0\n" in out, out[-3000:]
    assert "netprivtest same 1\n" in out, out[-3000:]
    assert "netprivtest priv 0 res 0 same 1\n" in out, out[-3000:]
    assert "netprivtest ok" in out, out[-3000:]
    assert status == 0
