"""Changing the network configuration from Linux programs (docs/net.md, "Changing the
configuration"): unmodified busybox ifconfig, route, ip addr/route/neigh, arp and
/proc/net/arp on ondol, each step's output and exit status compared byte for byte with the
same busybox in a Linux twin: a namespace whose eth0 (a veth with ondol's MAC and address)
faces a peer namespace shaped as ondol's host side (10.79.0.1 with the tap's MAC, and an
off-link address 10.78.0.5 on its loopback). Between steps the host side pings ondol's
addresses in both worlds: the new address answers and the old does not, a down interface
is silent and answers again when up. Needs root and namespaces; skips saying why otherwise.
"""
import os
import subprocess

import pytest

from ondol import netns
from ondol.netns import LINUX_IP, TAP
from tests.qemu_harness import BUILD, Session
from tests.test_net_host import REASON
from tests.test_net_qemu import Namespace

pytestmark = pytest.mark.skipif(REASON is not None or not (BUILD / "rootfs.cpio").exists(),
                                reason=REASON or "build/rootfs.cpio missing (make rootfs)")

ONDOL_MAC = "52:54:00:12:34:56"    # QEMU's virtio-net default
TAP_MAC = "02:00:00:4f:00:01"      # the host side's, the same in both worlds
OFF_LINK = "10.78.0.5"             # on the host side's loopback: reached through the gateway
BUSYBOX = BUILD / "rootfs" / "bin" / "busybox"
APPLETS = ("sh", "ifconfig", "route", "ip", "arp", "cat", "head", "tail", "ping", "awk", "nc")


def host(cmd, status):
    """A step run on the host side (with the rootfs busybox: the host may have no ping): its
    exit status must be `status` in both worlds."""
    return ("host", cmd, status)


STEPS = [
    "ping -c 1 -W 3 10.79.0.1 >/dev/null",
    "ip neigh | awk '{print $1, $2, $3, $4, $5, $NF}'",
    "arp -n",
    "cat /proc/net/arp",
    "ifconfig eth0 10.79.0.9 netmask 255.255.255.0 up",
    "ifconfig eth0 | head -2",
    "route -n",
    "ip route",
    host("ping -c 1 -W 3 10.79.0.9", 0),
    host("ping -c 1 -W 1 10.79.0.2", 1),
    "route add default gw 10.79.0.1",
    "route add default gw 10.79.0.1",
    "route add default gw 10.79.0.1 dev nosuch",
    "route add default gw 10.99.0.1",
    "cat /proc/net/route",
    "route del default gw 10.79.0.1",
    "route del default gw 10.79.0.1",
    f"ip route get {OFF_LINK}",
    f"ping -c 1 -W 1 {OFF_LINK}",
    f"nc {OFF_LINK} 80 </dev/null",
    "ip route replace default via 10.79.0.1",
    f"nc {OFF_LINK} 80 </dev/null",
    f"ip route get {OFF_LINK}",
    "ip route get 10.79.0.1",
    f"ping -c 1 -W 3 {OFF_LINK} >/dev/null",
    "ip route add default via 10.79.0.1",
    "ip route del default via 10.79.0.1",
    "ip route del default",
    "ip addr del 10.79.0.9/24 dev eth0",
    "ip addr del 10.79.0.9/24 dev eth0",
    "ip -4 addr show dev eth0 | tail -n +2",
    "ip route",
    "ip addr add 10.79.0.2/24 dev eth0",
    "ip -4 addr show dev eth0 | tail -n +2",
    "ip addr add 10.79.0.2/24 dev eth0",
    "ip addr add 10.79.0.3/24 dev nosuch",
    "ifconfig nosuch up",
    "ifconfig eth0 netmask 255.0.255.0",
    "ip route add default via 10.99.0.1",
    "ifconfig eth0 down",
    "ip route",
    "ifconfig eth0 | head -2",
    host("ping -c 1 -W 1 10.79.0.2", 1),
    "ifconfig eth0 up",
    "ip route",
    host("ping -c 1 -W 3 10.79.0.2", 0),
    "ip addr flush dev eth0",
    "ip addr flush dev eth0",
    "ip -4 addr show dev eth0",
    "ifconfig eth0 10.79.0.2 netmask 255.255.255.0",
    "route add default gw 10.79.0.1",
    "route -n",
]


def shell_line(cmd):
    return f"{cmd} 2>&1; echo st $?"


def run_steps(run, run_host):
    """Each step's output (a host step: its status); run_host returns the exit status."""
    out = []
    for step in STEPS:
        if isinstance(step, tuple):
            out.append(f"host {step[1]}: {run_host(step[1])}\n")
        else:
            out.append(f"$ {step}\n" + run(shell_line(step)))
    return out


def ns_run(name, args, **kw):
    return subprocess.run(["ip", "netns", "exec", name, *args], capture_output=True,
                          text=True, timeout=60, **kw)


def linux_twin(tag, bindir):
    """The steps in the Linux twin (see the module's comment)."""
    # the process id in the names: two checkouts may run this test at once
    twin, peer = f"ondolc{os.getpid()}{tag}t", f"ondolc{os.getpid()}{tag}p"
    for n in (twin, peer):
        subprocess.run(["ip", "netns", "del", n], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "add", n], check=True, timeout=30)
    try:
        setup = [["ip", "link", "add", "eth0", "netns", twin, "type", "veth", "peer", "name",
                  TAP, "netns", peer]]
        for n in (twin, peer):
            setup.append(["ip", "netns", "exec", n, "sysctl", "-qw",
                          "net.ipv6.conf.all.disable_ipv6=1"])
        setup += [["ip", "-n", twin, "link", "set", "eth0", "address", ONDOL_MAC],
                  ["ip", "-n", twin, "addr", "add", "10.79.0.2/24", "brd", "+", "dev", "eth0"],
                  ["ip", "-n", twin, "link", "set", "eth0", "up"],
                  ["ip", "-n", twin, "route", "add", "default", "via", LINUX_IP],
                  ["ip", "-n", peer, "link", "set", TAP, "address", TAP_MAC],
                  ["ip", "-n", peer, "addr", "add", f"{LINUX_IP}/24", "dev", TAP],
                  ["ip", "-n", peer, "link", "set", TAP, "up"],
                  ["ip", "-n", peer, "link", "set", "lo", "up"],
                  ["ip", "-n", peer, "addr", "add", f"{OFF_LINK}/32", "dev", "lo"]]
        for cmd in setup:
            subprocess.run(cmd, check=True, capture_output=True, timeout=30)
        env = ["env", "-i", f"PATH={bindir}"]
        return run_steps(lambda line: ns_run(twin, [*env, str(bindir / "sh"), "-c", line]).stdout,
                         lambda cmd: ns_run(peer, [str(BUSYBOX), *cmd.split()]).returncode)
    finally:
        for n in (twin, peer):
            subprocess.run(["ip", "netns", "del", n], capture_output=True, timeout=30)


@pytest.mark.parametrize("form,net", [("mk", "mk"), ("ik", "ik"), ("ik", "mk")])
def test_busybox_configuration_changes_as_linux(form, net, tmp_path):
    """The steps on ondol (unix=form net=net) and in the Linux twin: identical; then the
    limits, where ondol differs from Linux on purpose (EOPNOTSUPP)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for a in APPLETS:
        (bindir / a).symlink_to(BUSYBOX)
    want = linux_twin(form + net, bindir)
    with Namespace("c" + form + net, tmp_path) as ns:
        for cmd in (["link", "set", TAP, "address", TAP_MAC],
                    ["addr", "add", f"{OFF_LINK}/32", "dev", "lo"]):
            subprocess.run([*ns.prefix(), "ip", *cmd], check=True, timeout=30)
        opts = {"unix": form, **netns.kernel_options(net)}
        with Session(opts, qemu=str(ns.wrapper), extra=netns.qemu_flags(), lifetime=280,
                     boot_timeout=60) as s:
            got = run_steps(lambda line: s.cmd(line, timeout=30),
                            lambda cmd: subprocess.run([*ns.prefix(), str(BUSYBOX),
                                                        *cmd.split()],
                                                       capture_output=True,
                                                       timeout=60).returncode)
            beyond = (s.cmd(shell_line("route add default gw 10.79.0.3")) +
                      s.cmd(shell_line("ip addr add 10.79.0.20/24 dev eth0")))
            assert s.halt() == 0
    # the limits (Linux takes both: a second default route and a second address)
    assert beyond == ("route: SIOCADDRT: Operation not supported\nst 1\n"
                      "ip: RTNETLINK answers: Operation not supported\nst 2\n"), beyond
    assert len(got) == len(want) == len(STEPS)
    for g, w in zip(got, want):
        assert g == w
    statuses = [line.rsplit(" ", 1)[1] for line in want if line.startswith("host")]
    assert statuses == [f"{step[2]}\n" for step in STEPS if isinstance(step, tuple)], want
