"""ondol's network server in QEMU against the host's Linux stack (docs/net.md, "The server").

Each test boots ondol with a virtio-net device on a tap inside a network namespace of its
own (tools/ondol/netns.py: 10.79.0.1/24 on the Linux side, ondol 10.79.0.2 by `ip=`; QEMU
itself runs in the namespace, so nothing leaves it) and the network server placed as a
task (`net=mk`) or in the kernel (`net=ik`). From ondol's shell, netcli pings Linux, sends
1 MB to a Linux TCP sink and reads 1 MB from a Linux source, both checked by FNV-1a
against the stream computed here, and exchanges one UDP datagram. `./ondol net` is run
once with `run=` commands. Needs root and namespaces; skips saying why otherwise.
Everything is removed on exit.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ondol import netns
from ondol.netns import LINUX_IP, ONDOL_IP
from tests.net.hostpeer import fnv1a, stream
from tests.qemu_harness import Session
from tests.test_net_host import REASON

ROOT = Path(__file__).resolve().parent.parent
SERVE = ROOT / "tests" / "net" / "nsserve.py"
BYTES = 1_000_000

pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


class Namespace(netns.Namespace):
    """The namespace, a QEMU wrapper that runs inside it, and host-side servers there."""

    def __init__(self, tag, tmp_path):
        super().__init__(f"ondolq{os.getpid()}{tag}")
        self.wrapper = tmp_path / "qemu-in-ns"

    def __enter__(self):
        super().__enter__()
        qemu = os.environ.get("ONDOL_QEMU") or "qemu-system-x86_64"
        self.wrapper.write_text(f'#!/bin/sh\nexec {" ".join(self.prefix())} {qemu} "$@"\n')
        self.wrapper.chmod(0o755)
        return self

    def serve(self, *args):
        """Start nsserve.py in the namespace; returns once it listens."""
        p = subprocess.Popen([*self.prefix(), sys.executable, str(SERVE), *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        assert line.strip() == "ready", line + p.stderr.read()
        return p

    @staticmethod
    def finish(p):
        out, err = p.communicate(timeout=90)
        assert p.returncode == 0, err
        return json.loads(out)

    def boot(self, placement, **options):
        return Session({**netns.kernel_options(placement), **options}, qemu=str(self.wrapper),
                       extra=netns.qemu_flags(), lifetime=280)


@pytest.mark.parametrize("placement,csum,msix,tso,rxtso", [
    ("mk", "off", "off", "off", "off"), ("ik", "off", "off", "off", "off"),
    ("mk", "on", "off", "off", "off"), ("ik", "off", "on", "off", "off"),
    ("mk", "on", "off", "on", "off"), ("ik", "on", "off", "on", "off"),
    ("mk", "on", "off", "off", "on"), ("ik", "on", "off", "off", "on")])
def test_ping_tcp_udp_against_linux(placement, csum, msix, tso, rxtso, tmp_path):
    """With net_csum=on the device finishes the checksums of what the stack sends and
    vouches for what it received from the host's stack (which leaves them to the device on
    a tap): the same streams must arrive intact both ways, and the driver's counters show
    the offload was used; with it off, the stack computes and checks every checksum. With
    msix=on the device interrupts by MSI-X instead of INTx (docs/drivers.md). With
    net_tso=on too the stack sends super-segments that the device (QEMU and the host's
    GSO behind the tap) cuts into MSS-sized segments: the driver's TSO counter must show
    them, the Linux sink must get the same bytes. With net_rxtso=on the host's stack sends
    the 1 MB to ondol as super-segments through the tap, which the driver checks and takes
    whole (its count of them), none refused, and the stream's hash is the same."""
    with Namespace(placement + csum[1] + msix[1] + tso[1] + rxtso[1], tmp_path) as ns, \
            ns.boot(placement, net_csum=csum, msix=msix, net_tso=tso, net_rxtso=rxtso) as s:
        out = s.cmd("netcli config")
        assert f"ip {ONDOL_IP} mask 255.255.255.0 gw {LINUX_IP}" in out, out

        out = s.cmd(f"netcli ping {LINUX_IP} 3", timeout=60)
        assert "netcli ping 3 sent 3 answered" in out, out

        sink = ns.serve("sink", LINUX_IP, "9000")
        out = s.cmd(f"netcli send {LINUX_IP} 9000 {BYTES} 7", timeout=200)
        want = f"{fnv1a(stream(BYTES, 7)):016x}"
        assert f"netcli send {BYTES} bytes fnv {want}" in out, out
        got = ns.finish(sink)
        assert got == {"bytes": BYTES, "fnv": want, "from": ONDOL_IP}

        source = ns.serve("source", LINUX_IP, "9001", str(BYTES), "9")
        out = s.cmd(f"netcli recv {LINUX_IP} 9001", timeout=200)
        assert f"netcli recv {BYTES} bytes fnv {fnv1a(stream(BYTES, 9)):016x}" in out, out
        assert ns.finish(source)["from"] == ONDOL_IP

        echo = ns.serve("udpecho", LINUX_IP, "9002")
        out = s.cmd(f"netcli udp {LINUX_IP} 9002 hello-from-ondol", timeout=60)
        assert 'netcli udp answer (0/16) "hello-from-ondol"' in out, out
        assert ns.finish(echo) == {"bytes": 16, "from": ONDOL_IP}

        out = s.cmd("netcli stats")
        m = re.search(r"rx (\d+) tx (\d+) irqs (\d+) hdrpred (\d+) csum tx (\d+) rx (\d+) "
                      r"tso tx (\d+)", out)
        assert m and int(m.group(3)) > 0 and int(m.group(4)) > 0, out
        tx_csum, rx_csum, tx_tso = (int(m.group(i)) for i in (5, 6, 7))
        if csum == "on":
            assert rx_csum > (BYTES // 65536 if rxtso == "on" else BYTES // 1460), out
            assert tx_csum > (BYTES // 65536 if tso == "on" else BYTES // 1460), out
        else:
            assert tx_csum == rx_csum == 0, out
        if tso == "on":
            assert tx_tso > BYTES // 65536, out      # more than 1 MB could fill
        else:
            assert tx_tso == 0, out
        m = re.search(r"ifstats rx (\d+) frames (\d+) bytes dropped (\d+) super (\d+)", out)
        assert m and int(m.group(3)) == 0, out
        if rxtso == "on":
            assert int(m.group(4)) > BYTES // 65536, out
        else:
            assert int(m.group(4)) == 0, out

        # the data channel refuses a client that breaks its rules, and the server goes on
        out = s.cmd("netcli channel")
        assert "netcli channel -22 -22 -22 -22 -22 -22 tid 0 kernel -7" in out, out
        assert f"ip {ONDOL_IP} mask" in s.cmd("netcli config"), out
        assert s.halt() == 0


UDHCPD_CONF = """start 10.79.0.50
end 10.79.0.59
interface {tap}
lease_file {dir}/udhcpd.leases
pidfile {dir}/udhcpd.pid
opt subnet 255.255.255.0
opt router {router}
opt lease 600
max_leases 10
"""


def test_dhcp_lease_from_busybox_udhcpd(tmp_path):
    """ip=dhcp: the stack's DHCP client (servers/net/dhcp.c) takes its address, netmask
    and router from Debian's busybox udhcpd on the Linux side, then uses them."""
    from ondol.rootfs import busybox_path
    conf = tmp_path / "udhcpd.conf"
    conf.write_text(UDHCPD_CONF.format(tap=netns.TAP, dir=tmp_path, router=LINUX_IP))
    (tmp_path / "udhcpd.leases").write_bytes(b"")
    with Namespace("dhcp", tmp_path) as ns:
        server = subprocess.Popen([*ns.prefix(), str(busybox_path()), "udhcpd", "-f", str(conf)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            with Session({"net": "mk", "ip": "dhcp"}, qemu=str(ns.wrapper),
                         extra=netns.qemu_flags(), lifetime=200) as s:
                out = s.cmd("netcli config", timeout=60)
                assert f"ip 10.79.0.50 mask 255.255.255.0 gw {LINUX_IP}" in out, out
                out = s.cmd(f"netcli ping {LINUX_IP} 2", timeout=60)
                assert "netcli ping 2 sent 2 answered" in out, out
                assert s.halt() == 0
        finally:
            server.terminate()
            log = server.communicate(timeout=10)[0]
    assert "sending OFFER to 10.79.0.50" in log and "sending ACK to 10.79.0.50" in log, log


# 2 % loss, 1 % duplication, 3 % reordering, 2-5 ms each way: nethost's relay settings
RELAY_LINK = "seed=7,loss=20,dup=10,reorder=30,delay=2,jitter=3"
RELAY_BYTES = 300_000


def test_tcp_both_ways_through_a_lossy_relay(tmp_path):
    """QEMU's dgram back-end -> build/net/qemurelay (seeded loss, duplication, reordering,
    delay) -> the tap: data both ways still arrives whole and in order, and the relay did
    lose, duplicate and reorder frames on the way."""
    relay_bin = ROOT / "build" / "net" / "qemurelay"
    with Namespace("relay", tmp_path) as ns:
        with netns.Relay(ns, relay_bin, RELAY_LINK) as relay:
            with Session(netns.kernel_options("mk"), qemu=str(ns.wrapper),
                         extra=netns.relay_qemu_flags(), lifetime=280) as s:
                sink = ns.serve("sink", LINUX_IP, "9000")
                out = s.cmd(f"netcli send {LINUX_IP} 9000 {RELAY_BYTES} 3", timeout=200)
                want = f"{fnv1a(stream(RELAY_BYTES, 3)):016x}"
                assert f"netcli send {RELAY_BYTES} bytes fnv {want}" in out, out
                assert ns.finish(sink) == {"bytes": RELAY_BYTES, "fnv": want, "from": ONDOL_IP}
                source = ns.serve("source", LINUX_IP, "9001", str(RELAY_BYTES), "5")
                out = s.cmd(f"netcli recv {LINUX_IP} 9001", timeout=200)
                want = f"{fnv1a(stream(RELAY_BYTES, 5)):016x}"
                assert f"netcli recv {RELAY_BYTES} bytes fnv {want}" in out, out
                ns.finish(source)
                assert s.halt() == 0
    m = re.search(r"qemurelay sent (\d+) lost (\d+) dup (\d+) reordered (\d+)", relay.report)
    assert m and all(int(v) > 0 for v in m.groups()), relay.report


def test_netcli_without_server():
    with Session() as s:
        out = s.cmd("netcli config")
        assert "netcli: no network server (boot with net=mk or net=ik): " in out, out
        assert s.halt() == 0


def test_ondol_net_command():
    """`./ondol net` makes its namespace, boots, and removes the namespace afterwards."""
    name = f"ondolcli{os.getpid()}"
    r = subprocess.run([str(ROOT / "ondol"), "net", "--no-build", "--placement", "ik", "--name", name,
                        "--opt", f"run=netcli,ping,{LINUX_IP},2"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "netcli ping 2 sent 2 answered" in r.stdout, r.stdout[-2000:]
    assert f"namespace {name}: Linux {LINUX_IP}, ondol {ONDOL_IP}" in r.stderr
    assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
