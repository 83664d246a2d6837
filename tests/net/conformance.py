"""Scripted TCP conformance tests against ondol's stack with scapy (tests/test_net_conformance.py).

Run inside the test's network namespace, as root: `conformance.py TAP STACK_IP CASE`. The
script plays a host that does not exist, 10.77.0.99 with a MAC of its own, and writes raw
Ethernet frames to the tap with scapy, so every segment is exactly the one the case needs
and the Linux stack on the tap never takes part (frames for another MAC are not its).
ondol's stack (nethost) serves TCP echo on port 7, a byte source on port 19 and a UDP
control port 5 that makes it open a connection (docs/net.md, "Testing"). Each case prints
one JSON object of named checks, each true when the stack behaved as RFC 9293 says.
"""
import json
import os
import random
import select
import sys
import time

from scapy.config import conf
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

ME_IP, ME_MAC = "10.77.0.99", "02:00:00:00:00:63"
ECHO, SOURCE, CONTROL = 7, 19, 5
rng = random.Random(int(os.environ.get("CONFORMANCE_SEED", "1")))


class Wire:
    """Frames to and from the stack through the tap; answers the stack's ARP requests."""

    def __init__(self, tap, stack_ip):
        self.sock = conf.L2socket(iface=tap)
        self.stack_ip = stack_ip
        self.stack_mac = None
        self.stack_mac = self.resolve()

    def resolve(self):
        self.sock.send(Ether(src=ME_MAC, dst="ff:ff:ff:ff:ff:ff") /
                       ARP(op=1, hwsrc=ME_MAC, psrc=ME_IP, pdst=self.stack_ip))
        reply = self.recv(lambda p: ARP in p and p[ARP].op == 2 and p[ARP].psrc == self.stack_ip, 3)
        assert reply is not None, "the stack does not answer ARP"
        return reply[ARP].hwsrc

    def send(self, pkt):
        self.sock.send(Ether(src=ME_MAC, dst=self.stack_mac) / IP(src=ME_IP, dst=self.stack_ip) / pkt)

    def recv(self, match, timeout):
        """The first frame from the stack for which match(frame) holds, or None."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([self.sock], [], [], left)[0]:
                break
            p = self.sock.recv()
            if p is None or Ether not in p or p[Ether].src == ME_MAC:
                continue
            if ARP in p and p[ARP].op == 1 and p[ARP].pdst == ME_IP:
                self.sock.send(Ether(src=ME_MAC, dst=p[ARP].hwsrc) /
                               ARP(op=2, hwsrc=ME_MAC, psrc=ME_IP, hwdst=p[ARP].hwsrc, pdst=p[ARP].psrc))
                continue
            if match(p):
                return p
        return None

    def segment(self, sport, match=lambda t: True, timeout=2.0):
        """The stack's next TCP segment to our port sport with match(tcp) true."""
        p = self.recv(lambda p: TCP in p and p[IP].src == self.stack_ip and p[TCP].dport == sport
                      and match(p[TCP]), timeout)
        return p[TCP] if p is not None else None

    def silent(self, sport, timeout=1.0):
        return self.segment(sport, timeout=timeout) is None


def flags(t):
    return str(t.flags)


class Conn:
    """One connection we drive by hand: our sequence numbers and the stack's."""

    def __init__(self, wire, dport=ECHO, window=65535):
        self.w, self.dport, self.window = wire, dport, window
        self.sport = rng.randrange(20000, 60000)
        self.seq = rng.randrange(1 << 32)
        self.ack = 0
        self.fin = None                                  # the stack's FIN, when read saw it

    def send(self, fl, data=b"", seq=None, ack=None, **kw):
        opts = kw.pop("options", [])
        pkt = TCP(sport=self.sport, dport=self.dport, flags=fl,
                  seq=(self.seq if seq is None else seq) & 0xFFFFFFFF,
                  ack=(self.ack if ack is None else ack) & 0xFFFFFFFF,
                  window=kw.pop("window", self.window), options=opts, **kw)
        self.w.send(pkt / Raw(data) if data else pkt)

    def open(self):
        """Handshake: returns the SYN-ACK."""
        self.send("S", options=[("MSS", 1460), ("WScale", 0)])
        sa = self.w.segment(self.sport, lambda t: "S" in flags(t) and "A" in flags(t))
        if sa is None:
            return None
        self.seq += 1
        self.ack = sa.seq + 1
        self.send("A")
        return sa

    def read(self, nbytes, timeout=3.0):
        """Collects in-order payload until nbytes, ACKing as it goes."""
        got = b""
        deadline = time.monotonic() + timeout
        while len(got) < nbytes and time.monotonic() < deadline:
            t = self.w.segment(self.sport, lambda t: len(bytes(t.payload)) > 0, deadline - time.monotonic())
            if t is None:
                break
            data = bytes(t.payload)
            if t.seq == self.ack:
                got += data
                self.ack += len(data)
            if "F" in flags(t):
                self.fin = t
            self.send("A")
        return got

    def reset(self):
        self.send("R")


def case_handshake(w):
    c = Conn(w)
    sa = c.open()
    opts = dict(sa.options) if sa else {}
    c.send("PA", b"hello")
    c.seq += 5
    echo = c.read(5)
    c.send("FA")
    c.seq += 1
    fin = w.segment(c.sport, lambda t: "F" in flags(t))
    ok_fin = fin is not None and fin.ack == c.seq
    if fin is not None:
        c.ack = fin.seq + 1
        c.send("A")
    return {"syn_ack": sa is not None, "ack_of_syn": sa is not None and sa.ack == c.seq - 6,
            "mss_option": "MSS" in opts, "wscale_option": "WScale" in opts,
            "echo": echo == b"hello", "fin_acked": ok_fin}


def case_out_of_order(w):
    c = Conn(w)
    c.open()
    c.send("PA", b"67890", seq=c.seq + 5)                 # the second half first
    dup = w.segment(c.sport, lambda t: "A" in flags(t) and len(bytes(t.payload)) == 0)
    c.send("PA", b"12345")
    c.seq += 10
    echo = c.read(10)
    c.reset()
    return {"dup_ack_for_hole": dup is not None and dup.ack == c.seq - 10,
            "in_order_after_fill": echo == b"1234567890"}


def case_duplicate(w):
    c = Conn(w)
    c.open()
    c.send("PA", b"abc")
    c.send("PA", b"abc")                                  # the same segment again
    c.seq += 3
    echo = c.read(6, timeout=2.0)
    c.reset()
    return {"data_once": echo == b"abc"}


def case_zero_window(w):
    c = Conn(w, window=0)
    c.open()
    c.send("PA", b"x" * 100, window=0)
    c.seq += 100
    probe = w.segment(c.sport, lambda t: len(bytes(t.payload)) > 0, timeout=5.0)
    c.window = 65535
    c.send("A")                                           # the window opens
    rest = c.read(100, timeout=5.0)
    c.reset()
    return {"window_probe": probe is not None and len(bytes(probe.payload)) == 1,
            "all_after_open": rest == b"x" * 100}


def case_rst_syn_received(w):
    c = Conn(w)
    c.send("S")
    sa = w.segment(c.sport, lambda t: "S" in flags(t))
    c.send("R", seq=c.seq + 1, ack=0)
    c.seq += 1
    c.ack = sa.seq + 1 if sa else 0
    c.send("A")                                           # the connection is gone: RST
    rst = w.segment(c.sport, lambda t: "R" in flags(t))
    return {"syn_ack": sa is not None, "gone_after_rst": rst is not None}


def case_rst_established(w):
    c = Conn(w)
    c.open()
    c.send("R", seq=c.seq + 1000)                         # in the window, not exact
    challenge = w.segment(c.sport, lambda t: "A" in flags(t) and "R" not in flags(t))
    c.send("PA", b"ping")
    c.seq += 4
    still = c.read(4)
    c.send("R")                                           # exact: closes
    c.send("PA", b"late")
    rst = w.segment(c.sport, lambda t: "R" in flags(t))
    return {"challenge_ack": challenge is not None and challenge.ack == c.seq - 4,
            "alive_after_challenge": still == b"ping", "closed_by_exact_rst": rst is not None}


def case_bad_segments(w):
    """Broken segments get no answer at all; the stack stays up."""
    c = Conn(w)
    out = {}
    bad = TCP(sport=c.sport, dport=ECHO, flags="S", seq=c.seq, chksum=0x1234)
    w.send(bad)
    out["bad_tcp_checksum"] = w.silent(c.sport)
    w.sock.send(Ether(src=ME_MAC, dst=w.stack_mac) /
                IP(src=ME_IP, dst=w.stack_ip, chksum=0x4321) / TCP(sport=c.sport, dport=ECHO, flags="S"))
    out["bad_ip_checksum"] = w.silent(c.sport)
    w.send(TCP(sport=c.sport, dport=ECHO, flags="S", seq=c.seq, dataofs=15))
    out["offset_past_end"] = w.silent(c.sport)
    w.send(TCP(sport=c.sport, dport=ECHO, flags="S", seq=c.seq, options=[(8, b"")]))
    bad_opt = w.segment(c.sport, timeout=1.0)
    out["bad_option_no_crash"] = bad_opt is None or "R" in flags(bad_opt) or "S" in flags(bad_opt)
    if bad_opt is not None and "S" in flags(bad_opt):
        w.send(TCP(sport=c.sport, dport=ECHO, flags="R", seq=c.seq + 1))
    d = Conn(w)
    out["alive_afterwards"] = d.open() is not None
    d.reset()
    return out


def case_simultaneous_open(w):
    """The stack opens to us (control port 5); we answer its SYN with a SYN of our own."""
    port = rng.randrange(20000, 60000)
    w.send(UDP(sport=40000, dport=CONTROL) / Raw(f"connect {ME_IP} {port} 1000 3".encode()))
    syn = w.segment(port, lambda t: flags(t) == "S", timeout=3.0)
    if syn is None:
        return {"stack_syn": False}
    c = Conn(w)
    c.sport, c.dport = port, syn.sport
    c.send("S", ack=0)                                    # our own SYN, no ACK: simultaneous
    sa = w.segment(port, lambda t: "S" in flags(t) and "A" in flags(t))
    c.seq += 1
    c.ack = syn.seq + 1
    c.send("SA", seq=c.seq - 1)                           # the SYN-ACK of our side
    data = c.read(1000, timeout=5.0)
    c.reset()
    return {"stack_syn": True, "syn_ack_to_our_syn": sa is not None and sa.ack == c.seq,
            "data_flows": len(data) == 1000}


def case_simultaneous_close(w):
    """Port 19 sends what we ask and closes; we send our FIN before ACKing its FIN."""
    c = Conn(w, dport=SOURCE)
    c.open()
    c.send("PA", b"8 5\n")
    c.seq += 4
    data = c.read(8)
    fin = c.fin or w.segment(c.sport, lambda t: "F" in flags(t), timeout=3.0)
    c.send("FA", ack=c.ack)                               # our FIN, not acking theirs
    c.seq += 1
    ack = w.segment(c.sport, lambda t: "A" in flags(t) and t.ack == c.seq, timeout=3.0)
    if fin is not None:
        c.ack = fin.seq + len(bytes(fin.payload)) + 1
        c.send("A")
    rst = w.segment(c.sport, lambda t: "R" in flags(t), timeout=1.0)
    return {"data": len(data) == 8, "stack_fin": fin is not None,
            "our_fin_acked": ack is not None, "no_rst": rst is None}


def case_syn_flood(w):
    """200 SYNs from as many ports: the listener's backlog (nethost listens with 128) is
    exactly how many are answered; the stack still answers ping; our RSTs free the rest."""
    conns = [Conn(w) for _ in range(200)]
    for c in conns:
        c.send("S")
    answered = {}
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        p = w.recv(lambda p: TCP in p and "S" in flags(p[TCP]), deadline - time.monotonic())
        if p is None:
            break
        answered[p[TCP].dport] = p[TCP]
    for c in conns:
        if c.sport in answered:
            c.send("R", seq=c.seq + 1)
    w.send(ICMP(type=8, id=0x4f4e, seq=1) / Raw(b"alive?"))
    pong = w.recv(lambda p: ICMP in p and p[ICMP].type == 0, 2.0)
    print(f"syn_flood: {len(answered)} of {len(conns)} SYNs answered", file=sys.stderr)
    return {"backlog_answered_and_no_more": len(answered) == 128,
            "ping_after_flood": pong is not None}


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    tap, stack_ip, case = sys.argv[1:4]
    w = Wire(tap, stack_ip)
    print(json.dumps(CASES[case](w)))


if __name__ == "__main__":
    main()
