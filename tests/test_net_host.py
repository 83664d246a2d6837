"""ondol's TCP/IP stack against the host's Linux stack (docs/net.md, "Testing").

Each fixture creates a network namespace of its own with one tap device (10.77.0.1/24 on
the Linux side, inside the namespace only), runs build/net/nethost on it as 10.77.0.2, and
drives Linux's stack from inside the namespace with tests/net/hostpeer.py: ping, UDP echo,
TCP bulk both ways checked by hash (and an active open from ondol's side), 100 concurrent
connections; then the same through
nethost's seeded relay that drops, duplicates, reorders and delays frames both ways (the
netem qdisc is not available on the project's machines). Needs root and namespaces; skips
saying why otherwise. Everything is removed on exit.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NETHOST = ROOT / "build" / "net" / "nethost"
PEER = ROOT / "tests" / "net" / "hostpeer.py"
ONDOL_IP, LINUX_IP = "10.77.0.2", "10.77.0.1"


def run(*cmd, check=True, timeout=30):
    return subprocess.run(list(cmd), capture_output=True, text=True, check=check, timeout=timeout)


def namespaces_unavailable():
    if os.geteuid() != 0:
        return "needs root (network namespaces and a tap device)"
    if not shutil.which("ip"):
        return "needs iproute2's ip (scripts/deps.sh installs it)"
    name = f"ondolprobe{os.getpid()}"
    r = run("ip", "netns", "add", name, check=False)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    tap = run("ip", "netns", "exec", name, "ip", "tuntap", "add", "dev", "probe0", "mode", "tap",
              check=False)
    run("ip", "netns", "del", name, check=False)
    if tap.returncode != 0:
        return f"cannot create a tap device (/dev/net/tun): {tap.stderr.strip()}"
    return None


REASON = namespaces_unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


class Peer:
    """A namespace with a tap, nethost on it, and the Linux side's client."""

    def __init__(self, tag, relay_args):
        self.ns = f"ondolnet{os.getpid()}{tag}"
        self.relay_args = relay_args
        self.proc = None

    def ns_run(self, *cmd, timeout=30):
        return run("ip", "netns", "exec", self.ns, *cmd, timeout=timeout)

    def start(self):
        run("ip", "netns", "add", self.ns)
        self.ns_run("ip", "link", "set", "lo", "up")
        self.ns_run("ip", "tuntap", "add", "dev", "ondol0", "mode", "tap")
        self.ns_run("ip", "addr", "add", f"{LINUX_IP}/24", "dev", "ondol0")
        self.ns_run("ip", "link", "set", "ondol0", "up")
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, str(NETHOST), "--tap", "ondol0", "--ip", ONDOL_IP,
             "--seconds", "600", *self.relay_args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert "nethost ready" in line, line + self.proc.stderr.read()

    def stop(self):
        out = ""
        if self.proc:
            self.proc.terminate()
            try:
                out, _ = self.proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                out, _ = self.proc.communicate()
        run("ip", "netns", "del", self.ns, check=False)
        return out

    def client(self, *args, timeout=120):
        r = self.ns_run(sys.executable, str(PEER), *map(str, args), timeout=timeout)
        return json.loads(r.stdout)


def peer_fixture(tag, relay_args):
    @pytest.fixture(scope="module")
    def fixture():
        r = subprocess.run(["make", "-C", str(ROOT), "build/net/nethost"], capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        p = Peer(tag, relay_args)
        try:
            p.start()
            yield p
        finally:
            print(p.stop())
    return fixture


clean = peer_fixture("c", [])
# seeded relay: 2 % loss, 1 % duplication, 3 % reordering, 2-5 ms delay, each way
lossy = peer_fixture("l", ["--seed", "7", "--loss", "20", "--dup", "10", "--reorder", "30",
                           "--delay", "2", "--jitter", "3"])


def test_ping(clean):
    assert clean.client("ping", ONDOL_IP, 5) == {"sent": 5, "good": 5}


def test_udp_echo(clean):
    assert clean.client("udp", ONDOL_IP, 50) == {"sent": 50, "good": 50}


def test_tcp_bulk_linux_to_ondol(clean):
    r = clean.client("sink", ONDOL_IP, 4_000_000, 1)
    assert r["bytes"] == 4_000_000 and r["match"], r


def test_tcp_bulk_ondol_to_linux(clean):
    r = clean.client("source", ONDOL_IP, 4_000_000, 2)
    assert r["bytes"] == 4_000_000 and r["match"], r


def test_active_open_ondol_to_linux(clean):
    r = clean.client("accept", ONDOL_IP, LINUX_IP, 2_000_000, 5)
    assert r["bytes"] == 2_000_000 and r["match"] and r["from"] == ONDOL_IP, r


def test_100_concurrent_connections(clean):
    assert clean.client("many", ONDOL_IP, 100) == {"opened": 100, "good": 100}


def test_lossy_bulk_both_ways(lossy):
    r = lossy.client("sink", ONDOL_IP, 1_000_000, 3)
    assert r["bytes"] == 1_000_000 and r["match"], r
    r = lossy.client("source", ONDOL_IP, 1_000_000, 4)
    assert r["bytes"] == 1_000_000 and r["match"], r
    r = lossy.client("accept", ONDOL_IP, LINUX_IP, 500_000, 6)
    assert r["bytes"] == 500_000 and r["match"], r


def test_lossy_many_and_ping(lossy):
    assert lossy.client("many", ONDOL_IP, 30) == {"opened": 30, "good": 30}
    r = lossy.client("ping", ONDOL_IP, 10)
    assert r["good"] >= 7, r                  # ICMP is not retransmitted: most get through
