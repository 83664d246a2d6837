"""Linux programs' AF_INET sockets through the UNIX server and the network server (docs/net.md,
"Sockets of Linux programs"; docs/unix.md "Sockets"), against the host's Linux stack in a
network namespace (as tests/test_net_qemu.py): ondol boots with unix= and net= in the same
form, and Debian's busybox on ondol talks to Python on the Linux side.

- `nc` to a Linux TCP sink (data checked by FNV-1a) and from a Linux source (md5sum on
  ondol against the stream computed here): connect, write, read, poll, shutdown, close;
- `nc -l` on ondol parked in a blocking accept in the background while the shell goes on
  answering (a waiting socket call holds up no other process), then a Linux client
  connects and sends; ondol's copy is checked by md5sum;
- `wget` from a Linux `python3 -m http.server`, and busybox `httpd` on ondol fetched from
  Linux with Python's urllib;
- UDP: busybox `nslookup`'s query to a Linux echo server.
Needs root and namespaces; skips saying why otherwise.
"""
import hashlib
import re
import subprocess
import sys

import pytest

from ondol import netns
from ondol.netns import LINUX_IP, ONDOL_IP
from tests.net.hostpeer import fnv1a, stream
from tests.qemu_harness import BUILD, Session
from tests.test_net_host import REASON
from tests.test_net_qemu import Namespace

pytestmark = pytest.mark.skipif(REASON is not None or not (BUILD / "rootfs.cpio").exists(),
                                reason=REASON or "build/rootfs.cpio missing (make rootfs)")

BYTES = 200_000
SEQ = 20_000                       # `seq 1 SEQ` is the data ondol sends


def seq_bytes(n):
    return "".join(f"{i}\n" for i in range(1, n + 1)).encode()


CLIENT = """
import socket, sys, time
data = bytes(range(256)) * {n}
for _ in range(100):
    try:
        s = socket.create_connection(("{ip}", {port}), timeout=10)
        break
    except OSError:
        time.sleep(0.2)
s.sendall(data)
s.close()
"""

FETCH = """
import sys, time, urllib.request
for _ in range(50):
    try:
        sys.stdout.buffer.write(urllib.request.urlopen("{url}", timeout=20).read())
        break
    except OSError:
        time.sleep(0.2)
"""


def boot(ns, form, net=None, thread="on"):
    """ondol with the UNIX server in `form`, the network server in `net` (default: the
    same form) and its stack thread `thread`."""
    opts = {"unix": form, **netns.kernel_options(net or form), "net_thread": thread}
    return Session(opts, qemu=str(ns.wrapper), extra=netns.qemu_flags(), lifetime=280,
                   boot_timeout=60)


@pytest.mark.parametrize("form,net", [("mk", "mk"), ("ik", "ik"), ("ik", "mk")])
def test_busybox_sockets_against_linux(form, net, tmp_path):
    """The busybox cases in both forms, and in the mixed unix=ik net=mk: the in-kernel UNIX
    server calls the MK network server by the kernel's IPC call (docs/net.md, "Mixed
    forms")."""
    with Namespace("s" + form + net, tmp_path) as ns, boot(ns, form, net) as s:
        # ondol -> Linux: nc connects, writes the file, shuts down its side at EOF
        s.cmd(f"seq 1 {SEQ} > /tmp/d")
        sink = ns.serve("sink", LINUX_IP, "9000")
        s.cmd(f"nc {LINUX_IP} 9000 < /tmp/d", timeout=60)
        data = seq_bytes(SEQ)
        assert ns.finish(sink) == {"bytes": len(data), "fnv": f"{fnv1a(data):016x}",
                                   "from": ONDOL_IP}

        # Linux -> ondol: nc reads to the end of the stream
        source = ns.serve("source", LINUX_IP, "9001", str(BYTES), "9")
        s.cmd(f"nc {LINUX_IP} 9001 > /tmp/s", timeout=60)
        ns.finish(source)
        want = hashlib.md5(stream(BYTES, 9)).hexdigest()
        assert s.cmd("md5sum /tmp/s", timeout=30).split()[0] == want

        # a blocking accept in the background; the shell keeps answering meanwhile
        s.cmd("nc -l -p 9100 > /tmp/l & echo started")
        assert s.cmd("echo alive; echo $((6 * 7))") == "alive\n42\n"
        client = subprocess.run([*ns.prefix(), sys.executable, "-c",
                                 CLIENT.format(n=400, ip=ONDOL_IP, port=9100)],
                                capture_output=True, text=True, timeout=60)
        assert client.returncode == 0, client.stderr
        s.cmd("wait", timeout=30)
        want = hashlib.md5(bytes(range(256)) * 400).hexdigest()
        assert s.cmd("md5sum /tmp/l").split()[0] == want

        # wget from a Linux HTTP server
        (tmp_path / "www").mkdir()
        page = stream(50_000, 4)
        (tmp_path / "www" / "page.bin").write_bytes(page)
        http = subprocess.Popen([*ns.prefix(), sys.executable, "-m", "http.server", "8080",
                                 "--bind", LINUX_IP, "--directory", str(tmp_path / "www")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ns.wait_listening(8080)
            out = s.cmd(f"wget -O /tmp/w http://{LINUX_IP}:8080/page.bin; echo st $?",
                        timeout=60)
            assert "st 0" in out, out
            assert s.cmd("md5sum /tmp/w").split()[0] == hashlib.md5(page).hexdigest()
        finally:
            http.terminate()
            http.wait(10)

        # busybox httpd on ondol (a forked child per connection), fetched from Linux
        s.cmd("mkdir /tmp/www; cp /tmp/w /tmp/www/page.bin")
        s.cmd("httpd -p 8081 -h /tmp/www")
        fetch = subprocess.run([*ns.prefix(), sys.executable, "-c",
                                FETCH.format(url=f"http://{ONDOL_IP}:8081/page.bin")],
                               capture_output=True, timeout=60)
        assert fetch.returncode == 0, fetch.stderr
        assert fetch.stdout == page

        # UDP: busybox has no UDP nc; its nslookup sends a DNS query to port 53 (sendto or
        # connect + send, then recv), which the Linux echo server answers with the query's
        # own bytes: the datagram went out, and one came back (nslookup then finds it is
        # not an answer)
        echo = ns.serve("udpecho", LINUX_IP, "53")
        out = s.cmd(f"nslookup ondol.test {LINUX_IP}; echo st $?", timeout=60)
        got = ns.finish(echo)
        assert got["from"] == ONDOL_IP and got["bytes"] > 12, (got, out)
        assert s.cmd("echo still here") == "still here\n"
        assert s.halt() == 0


SOCK_PATTERN = bytes((i * 7 + 3) & 255 for i in range(65536))


def java_sum(data):
    """tests/linux/sock.c's checksum: sum = sum * 31 + byte, modulo 2**64."""
    v = 0
    for b in data:
        v = (v * 31 + b) & (2**64 - 1)
    return v


BUSYBOX = BUILD / "rootfs" / "bin" / "busybox"
TWIN_COMMANDS = ("{bb} cat /proc/net/route", "{bb} route -n", "{bb} ifconfig eth0 | {bb} head -2",
                 # rtnetlink (servers/unix/netlink.c): all but the link line, whose index,
                 # flags and qdisc are Linux's tap's (see test_busybox_ip)
                 "{bb} ip route", "{bb} ip route show table all",
                 "{bb} ip -4 addr show dev eth0 | {bb} tail -n +2",
                 "{bb} ip link show eth0 | {bb} tail -n +2")


def linux_twin(name, mac):
    """What Linux shows for ondol's interface: in a namespace of its own, a tap named eth0
    with ondol's address, broadcast, MAC and default route (nothing reaches it; it only
    fills Linux's tables). The outputs of TWIN_COMMANDS there, run with the rootfs busybox."""
    subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
    try:
        inside = ["ip", "netns", "exec", name]
        for cmd in (["ip", "tuntap", "add", "dev", "eth0", "mode", "tap"],
                    ["ip", "link", "set", "eth0", "address", mac],
                    ["ip", "addr", "add", f"{ONDOL_IP}/24", "brd", "+", "dev", "eth0"],
                    ["ip", "link", "set", "eth0", "up"],
                    ["ip", "route", "add", "default", "via", LINUX_IP, "dev", "eth0"]):
            subprocess.run([*inside, *cmd], check=True, capture_output=True, timeout=30)
        return [subprocess.run([*inside, "/bin/sh", "-c", c.format(bb=BUSYBOX)], check=True,
                               text=True, capture_output=True, timeout=30).stdout
                for c in TWIN_COMMANDS]
    finally:
        subprocess.run(["ip", "netns", "del", name], timeout=30)


@pytest.mark.parametrize("form", ["mk", "ik"])
def test_busybox_ping_ifconfig_route(form, tmp_path):
    """busybox ping (a raw ICMP socket, SIGALRM between replies), ifconfig (/proc/net/dev
    and the SIOCGIF* ioctls) and route (/proc/net/route) on ondol; /proc/net/route, `route
    -n` and ifconfig's address lines compared byte for byte with Linux's for the same
    address, MAC and routes."""
    with Namespace("i" + form, tmp_path) as ns, boot(ns, form) as s:
        out = s.cmd(f"ping -c 3 {LINUX_IP}; echo st $?", timeout=60)
        for seq in range(3):
            assert f"64 bytes from {LINUX_IP}: seq={seq} ttl=64" in out, out
        assert "3 packets transmitted, 3 packets received, 0% packet loss" in out, out
        assert "st 0" in out, out
        ifc = s.cmd("ifconfig; echo st $?", timeout=30)
        mac = re.search(r"eth0 +Link encap:Ethernet +HWaddr ([0-9A-F:]{17})", ifc)
        assert mac and "UP BROADCAST RUNNING  MTU:1500" in ifc and "st 0" in ifc, ifc
        rx = int(re.search(r"RX packets:(\d+)", ifc).group(1))
        assert rx >= 3, ifc                # the echo replies at least
        neigh = subprocess.run([*ns.prefix(), "ip", "neigh", "show", ONDOL_IP],
                               capture_output=True, text=True, timeout=30).stdout
        assert mac.group(1).lower() in neigh, (neigh, ifc)
        ours = [s.cmd(c.format(bb="busybox"), timeout=30) for c in TWIN_COMMANDS]
        assert ours == linux_twin(ns.name + "t", mac.group(1)), ours
        out = s.cmd("route add -net 10.9.0.0 netmask 255.255.0.0 gw 10.79.0.1 2>&1; echo st $?")
        assert out == "route: SIOCADDRT: Operation not supported\nst 1\n", out   # one route
        check_busybox_ip(s, mac.group(1).lower())
        assert s.halt() == 0


def check_busybox_ip(s, mac):
    """busybox ip over rtnetlink beyond the twin's lines: the link line (ondol's eth0 is
    index 1, with ifconfig's flags, the link up, no queueing discipline: Linux's tap in the
    twin is index 2 after lo, MULTICAST, without carrier, pfifo_fast), `ip addr` and `ip
    link` in full, and changes refused as ifconfig's are (root: not supported)."""
    link = f"1: eth0: <BROADCAST,UP,LOWER_UP> mtu 1500 qdisc noqueue qlen 1000\n"
    ether = f"    link/ether {mac} brd ff:ff:ff:ff:ff:ff\n"
    inet = ("    inet 10.79.0.2/24 brd 10.79.0.255 scope global eth0\n"
            "       valid_lft forever preferred_lft forever\n")
    assert s.cmd("ip link") == link + ether
    assert s.cmd("ip addr") == link + ether + inet
    assert s.cmd("ip -o -4 addr") == "1: eth0" + inet.replace("\n       ", "\\       ")
    out = s.cmd("ip addr add 10.79.0.9/24 dev eth0; echo st $?")
    assert out == "ip: RTNETLINK answers: Operation not supported\nst 2\n", out
    out = s.cmd("ip route add 10.9.0.0/16 via 10.79.0.1; echo st $?")
    assert out == "ip: RTNETLINK answers: Operation not supported\nst 2\n", out


def sock_servers(ns):
    """The Linux servers tests/linux/sock.c talks to: a TCP sink on 9000 and a UDP echo on
    9002 for its 3 datagrams (one answered first by a stranger on 9003)."""
    return ns.serve("sink", LINUX_IP, "9000"), ns.serve("udpecho", LINUX_IP, "9002", "3", "9003")


def check_sock_run(ns, sink, echo, server_ip, finish_program):
    """The servers' view of a run of sock, the client that feeds its TCP server, and the
    program's own output (from finish_program, once the client is done)."""
    assert ns.finish(sink)["bytes"] == len(SOCK_PATTERN)
    assert ns.finish(echo)["bytes"] == 8 + 17 + 8
    client = subprocess.run([*ns.prefix(), sys.executable, "-c",
                             CLIENT.format(n=300, ip=server_ip, port=9200)],
                            capture_output=True, text=True, timeout=60)
    assert client.returncode == 0, client.stderr
    out = finish_program()
    data = bytes(range(256)) * 300
    assert f"received {len(data)} sum {java_sum(data):016x}" in out, out
    assert "FAIL" not in out and "fails 0" in out, out
    assert "peek_tcp_long ok" in out and "trunc_tcp ok" in out, out
    assert "ping_reply ok" in out and "ping_id ok" in out, out
    return out


@pytest.mark.parametrize("form,net,thread", [("mk", "mk", "on"), ("ik", "ik", "on"),
                                             ("mk", "mk", "off"), ("ik", "ik", "off"),
                                             ("mk", "ik", "on"), ("ik", "mk", "on"),
                                             ("ik", "mk", "off")])
def test_static_program_sockets_against_linux(form, net, thread, tmp_path):
    """tests/linux/sock.c (static musl): error cases, a TCP client (connect, TCP_NODELAY,
    writev, SIOCOUTQ, shutdown, EOF), UDP (poll, FIONREAD, MSG_PEEK, MSG_TRUNC, a
    connected socket ignoring a stranger, SO_RCVTIMEO), and a TCP server (non-blocking
    accept's EAGAIN, poll, accept4, MSG_PEEK, recvmsg with two iovecs, getpeername). Both
    ways of waiting: the network server's stack thread and events (net_thread=on), and
    the UNIX server's 10 ms pulse (off); and the mixed forms (docs/net.md, "Mixed forms"):
    unix=mk net=ik, the MK UNIX server's IPC call reaches the in-kernel network server, and
    unix=ik net=mk, the kernel calls the MK network server for the in-kernel UNIX server
    (with its event thread, and with the pulse)."""
    with Namespace("p" + form + net + thread, tmp_path) as ns, boot(ns, form, net, thread) as s:
        sink, echo = sock_servers(ns)
        s.cmd(f"/suite/bin/sock {LINUX_IP} ondol > /tmp/o 2>&1 & echo started")
        out = check_sock_run(ns, sink, echo, ONDOL_IP,
                             lambda: s.cmd("wait; echo st $?; cat /tmp/o", timeout=60))
        assert "st 0" in out and "af_unix ok" in out, out
        assert s.halt() == 0


def test_static_program_sockets_on_linux(tmp_path):
    """The same binary on the host's Linux in the namespace, against the same servers: the
    checks the ondol runs pass are Linux's behaviour."""
    exe = BUILD / "linuxsuite" / "bin" / "sock"
    if not exe.exists():
        pytest.skip(f"{exe} missing (make rootfs)")
    with Namespace("pl", tmp_path) as ns:
        # ping sockets for every group, as systemd sets it (a new namespace has "1 0": none)
        subprocess.run([*ns.prefix(), "sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647"],
                       check=True, timeout=30)
        sink, echo = sock_servers(ns)
        prog = subprocess.Popen([*ns.prefix(), str(exe), LINUX_IP], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        try:
            out = check_sock_run(ns, sink, echo, LINUX_IP,
                                 lambda: prog.communicate(timeout=60)[0])
        finally:
            prog.kill()
            prog.wait()
        assert prog.returncode == 0, out


@pytest.mark.parametrize("form", ["ik", "mk"])
def test_network_server_death(form, tmp_path):
    """net=mk with the test option net_crash=26 (op ifstats, which /proc/net/dev reads):
    the network server dies in the middle of two connections to Linux sinks. One nc
    streams into its socket: its next write fails (ENETDOWN: busybox says "Network is
    down") and it exits 1, or, waiting in select, it reads the socket's failure first and
    ends with 0; the other, parked in poll with nothing to send, is woken by the
    event thread's last event (UNIX_NET_GONE) and ends. The call that killed the server
    (cat) gets an error instead of an answer, so /proc/net/dev has no eth0 line (unix=ik:
    the kernel's call to the server ends with E_DEAD); a new socket is EAFNOSUPPORT, as
    without a network server; the shell goes on; nothing panics or hangs."""
    with Namespace("d" + form, tmp_path) as ns, \
            Session({"unix": form, **netns.kernel_options("mk"), "net_crash": "26"},
                    qemu=str(ns.wrapper), extra=netns.qemu_flags(), lifetime=200,
                    boot_timeout=60) as s:
        sinks = [ns.serve("sink", LINUX_IP, str(port)) for port in (9000, 9001)]
        s.cmd(f"A={LINUX_IP}; Z='dd if=/dev/zero bs=1k count=99999'")
        s.cmd("$Z 2>/dev/null | (nc $A 9000 2>/tmp/e; echo $? > /tmp/w) &")
        s.cmd("sleep 999 | (nc $A 9001; echo $? > /tmp/p) &")
        for port in (9000, 9001):          # both connected before the crash, however loaded
            ns.wait_connected(port)
        out = s.cmd("cat /proc/net/dev; echo st $?", timeout=60)
        assert re.search(r"net: server died \(task \d+, thread \d+, status \d+\)", out), out
        assert "eth0" not in out and "st 0" in out, out    # the table without its line
        # both nc end on their own; on a loaded host that may take seconds, not a fixed one
        # (each line short: the console wraps at 80 columns)
        s.cmd("e() { [ -s /tmp/w ] && [ -s /tmp/p ]; }")
        s.cmd("for i in $(seq 300); do e && break; sleep 0.2; done", timeout=90)
        out = s.cmd("cat /tmp/w /tmp/e /tmp/p")
        # The streaming nc learns of the death in one of two ways, as it happens to be
        # blocked: in write, which fails (ENETDOWN: "Network is down", status 1), or in
        # select with stdin and the socket both ready, when busybox reads the socket first
        # and takes the failed read as the end of the stream (status 0, nothing said: as
        # test_network_server_reply_too_long's nc).
        assert (out.startswith("1\nnc: ") and "Network is down" in out) or \
            re.match(r"0\n\d+\n$", out), out
        assert re.search(r"\n\d+\n$", out), out          # the parked nc ended too
        out = s.cmd("nc $A 9000; echo st $?", timeout=30)
        assert "Address family not supported" in out and "st 1" in out, out   # as without one
        assert s.cmd("echo still here") == "still here\n"
        assert s.halt() == 0
        for sink in sinks:
            sink.kill()
            sink.wait()


@pytest.mark.parametrize("form", ["ik", "mk"])
def test_network_server_reply_too_long(form, tmp_path):
    """net=mk with the test option net_longreply=7: the network server answers op read with
    one byte more than the room the UNIX server gave (unix=mk with net_channel=off: through
    the data channel a stream's read is chread, whose reply has no buffer; one sent anyway
    is dropped, as to any receiver that takes none). The reply is refused (E_2BIG, in the
    kernel's call for unix=ik as in the IPC call for unix=mk), so nc's read fails and nc
    ends without the stream; every other op goes on working (ping), nothing panics."""
    with Namespace("r" + form, tmp_path) as ns, \
            Session({"unix": form, **netns.kernel_options("mk"), "net_longreply": "7",
                     "net_channel": "off"},
                    qemu=str(ns.wrapper), extra=netns.qemu_flags(), lifetime=200,
                    boot_timeout=60) as s:
        source = ns.serve("source", LINUX_IP, "9001", str(BYTES), "9")
        out = s.cmd(f"nc {LINUX_IP} 9001 > /tmp/s; echo st $?; wc -c < /tmp/s", timeout=60)
        source.kill()
        source.wait()
        assert out.endswith("\n0\n"), out                 # nothing read
        out = s.cmd(f"ping -c 1 {LINUX_IP}; echo st $?", timeout=60)
        assert "1 packets received" in out and "st 0" in out, out
        assert s.halt() == 0


def test_socket_without_network_server():
    """No net= server: socket(AF_INET) is EAFNOSUPPORT and busybox says so; the shell goes on."""
    if not (BUILD / "rootfs.cpio").exists():
        pytest.skip("build/rootfs.cpio missing")
    with Session({"unix": "mk"}, boot_timeout=60) as s:
        out = s.cmd("nc 10.0.0.1 80; echo st $?", timeout=30)
        assert "Address family not supported" in out and "st 1" in out, out
        assert s.halt() == 0
