"""The MK network server's robustness (docs/net.md, "The data channel" and "Mixed forms"):
its channel slots, and a network server that lives but never answers.

The virtio-net device is on QEMU's user network with `restrict=on` (nothing leaves QEMU,
and nothing comes in that the guest did not ask for), so these tests need neither root
nor a namespace: what they check happens between ondol's servers.
"""
import re

import pytest

from tests.qemu_harness import BUILD, PROMPT, Session, run_to_halt

NETDEV = ("-netdev", "user,id=n0,restrict=on", "-device", "virtio-net-pci,netdev=n0")


def test_channel_slots_of_ended_threads():
    """tests/guest/chantest.c as the first task (privileged, so it may make windows): 12
    threads one after another each open a channel and end, and every open succeeds (the
    server takes the slots of ended threads back; before, the fifth got ENOMEM); then 4
    live threads get one each and a fifth is refused with ENOMEM (4 a task), while a
    second task still gets one. Then the datagram and peek ops of the channel."""
    status, out, _ = run_to_halt({"init": "chantest", "net": "mk"}, timeout=160, extra=NETDEV)
    assert "chantest ended" + " 0" * 12 + "\n" in out, out[-3000:]
    assert "chantest live 0 0 0 0\n" in out, out[-3000:]
    assert "chantest live extra -12\n" in out, out[-3000:]
    assert "chantest other 0\n" in out, out[-3000:]
    # chsendto, chrecvfrom, chpeek: refused without a channel and past it; with one, a peek
    # far past a stream's end reads 0 bytes, nothing queued is -EAGAIN, a datagram goes
    assert "chantest ops -22 -22 -22 / 0 -22 -11 8\n" in out, out[-3000:]
    assert "chantest ok" in out, out[-3000:]
    assert status == 0


HANG_AFTER = 200                   # calls netsrv answers: more than the set-up below makes
TIMEOUT_S = 3


@pytest.mark.parametrize("form", ["mk", "ik"])
def test_network_server_that_never_answers(form):
    """net_hang: the network server takes its calls but answers only the first
    HANG_AFTER. Without a bound the UNIX server waited in the unanswered call for ever, and
    with it every process and the console. With net_timeout=3 the UNIX server's guard ends
    the network server once a call has waited 3 s, and the "server died" path does the
    rest: the stuck call and the parked ones fail with ENETDOWN (the parked `nc -l` says
    "Network is down" in its own file: its complaint may come at any time), the shell goes
    on, and a `kill -9` typed while the server hung ends its process (busybox httpd,
    parked in accept; it does not end on errors) with status 137."""
    if not (BUILD / "rootfs.cpio").exists():
        pytest.skip("build/rootfs.cpio missing (make rootfs)")
    opts = {"unix": form, "net": "mk", "net_hang": str(HANG_AFTER),
            "net_timeout": str(TIMEOUT_S)}
    with Session(opts, extra=NETDEV, lifetime=280, boot_timeout=60) as s:
        s.cmd("(nc -l -p 9100 2>/tmp/le; echo $? > /tmp/ls) &")
        s.cmd("httpd -f -p 8080 & H=$!")
        assert s.cmd("echo set; echo $((6 * 7))") == "set\n42\n"      # nothing hung yet
        s.send("while grep -q eth0 /proc/net/dev; do :; done; echo loop ended\n")
        s.expect(r"net: not answering any more \(test option net_hang\)", timeout=120)
        s.send("kill -9 $H; wait $H; echo st $?\r")       # typed while nothing answers
        s.expect(f"unix: the network server did not answer for {TIMEOUT_S} s: ending it",
                 timeout=60)
        s.expect(r"net: server died \(task \d+, thread \d+, status \d+\)")
        s.expect("loop ended")
        assert s.expect(r"\nst (\d+)\n", timeout=60).group(1) == "137", s.output[-3000:]
        s.expect(re.escape(PROMPT))
        out = s.cmd("while [ ! -s /tmp/ls ]; do sleep 1; done; cat /tmp/ls /tmp/le", timeout=60)
        assert out.startswith("1\n") and "Network is down" in out, out
        out = s.cmd("nc 10.0.2.2 80; echo st $?", timeout=30)
        assert "Address family not supported" in out and "st 1" in out, out
        assert s.cmd("echo still here") == "still here\n"
        assert s.halt() == 0
