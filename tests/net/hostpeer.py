"""The Linux side of tests/test_net_host.py: run inside the test's network namespace
(`ip netns exec NS python3 hostpeer.py CMD ...`), talk to ondol's stack (nethost) through
the host's own TCP/IP stack, print one JSON object. Every loop and socket is bounded by a
timeout; nothing here leaves the namespace.

Commands:
  ping IP COUNT              ICMP echo with a raw socket: replies received, payloads intact
  udp IP COUNT               UDP echo on port 7: datagrams answered intact
  sink IP BYTES SEED         send BYTES of the stream to port 9, compare its FNV-1a answer
  source IP BYTES SEED       ask port 19 for BYTES of the stream, compare its FNV-1a
  many IP N                  N concurrent TCP connections to echo port 7, all open at once
  accept IP MYIP BYTES SEED   listen on MYIP, ask IP (UDP control port 5) to connect and send
                             BYTES of the stream: ondol's active open, checked here
"""
import json
import os
import select
import socket
import struct
import sys
import time

TIMEOUT = 60.0
FNV_OFFSET, FNV_PRIME, MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def stream(nbytes, seed):
    """The xorshift64 stream nethost's source service sends (8 little-endian bytes a step)."""
    x = (seed * 0x9E3779B97F4A7C15 + 1) & MASK
    out = bytearray()
    while len(out) < nbytes:
        x ^= (x << 13) & MASK
        x ^= x >> 7
        x ^= (x << 17) & MASK
        out += struct.pack("<Q", x)
    return bytes(out[:nbytes])


def fnv1a(data):
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & MASK
    return h


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def cmd_ping(ip, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(2.0)
    good = 0
    for seq in range(int(count)):
        payload = os.urandom(56)
        hdr = struct.pack("!BBHHH", 8, 0, 0, 0x4F4E, seq)
        pkt = struct.pack("!BBHHH", 8, 0, checksum(hdr + payload), 0x4F4E, seq) + payload
        s.sendto(pkt, (ip, 0))
        deadline = time.time() + 2.0
        while time.time() < deadline:
            try:
                data, addr = s.recvfrom(2048)
            except socket.timeout:
                break
            icmp = data[(data[0] & 0xF) * 4:]
            if addr[0] == ip and icmp[0] == 0 and struct.unpack("!HH", icmp[4:8]) == (0x4F4E, seq):
                good += icmp[8:] == payload and checksum(icmp) == 0
                break
    return {"sent": int(count), "good": good}


def cmd_udp(ip, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2.0)
    good = 0
    for i in range(int(count)):
        msg = os.urandom(1 + (i * 37) % 1400)
        s.sendto(msg, (ip, 7))
        try:
            data, _ = s.recvfrom(2048)
            good += data == msg
        except socket.timeout:
            pass
    return {"sent": int(count), "good": good}


def connect(ip, port):
    s = socket.create_connection((ip, port), timeout=TIMEOUT)
    s.settimeout(TIMEOUT)
    return s


def cmd_sink(ip, nbytes, seed):
    data = stream(int(nbytes), int(seed))
    start = time.time()
    s = connect(ip, 9)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = s.recv(100)
        if not chunk:
            break
        answer += chunk
    s.close()
    secs = time.time() - start
    count, digest = answer.decode().split()
    return {"bytes": int(count), "match": int(count) == len(data) and int(digest, 16) == fnv1a(data),
            "seconds": round(secs, 3)}


def cmd_source(ip, nbytes, seed):
    start = time.time()
    s = connect(ip, 19)
    s.sendall(f"{nbytes} {seed}\n".encode())
    got = bytearray()
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    s.close()
    secs = time.time() - start
    want = stream(int(nbytes), int(seed))
    return {"bytes": len(got), "match": fnv1a(got) == fnv1a(want) and bytes(got) == want,
            "seconds": round(secs, 3)}


def cmd_many(ip, n):
    socks = []
    for _ in range(int(n)):
        socks.append(connect(ip, 7))
    msgs = {s: f"connection {i} {os.urandom(8).hex()}".encode() for i, s in enumerate(socks)}
    for s, m in msgs.items():
        s.sendall(m)
    got = {s: b"" for s in socks}
    deadline = time.time() + TIMEOUT
    pending = set(socks)
    while pending and time.time() < deadline:
        ready, _, _ = select.select(list(pending), [], [], 1.0)
        for s in ready:
            got[s] += s.recv(4096)
            if len(got[s]) >= len(msgs[s]):
                pending.discard(s)
    good = sum(got[s] == msgs[s] for s in socks)
    for s in socks:
        s.close()
    return {"opened": len(socks), "good": good}


def cmd_accept(ip, myip, nbytes, seed):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((myip, 0))
    srv.listen(1)
    srv.settimeout(TIMEOUT)
    port = srv.getsockname()[1]
    ctl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ctl.sendto(f"connect {myip} {port} {nbytes} {seed}".encode(), (ip, 5))
    start = time.time()
    conn, peer = srv.accept()
    conn.settimeout(TIMEOUT)
    got = bytearray()
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        got += chunk
    conn.close()
    srv.close()
    return {"bytes": len(got), "match": bytes(got) == stream(int(nbytes), int(seed)),
            "from": peer[0], "seconds": round(time.time() - start, 3)}


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    print(json.dumps(globals()["cmd_" + cmd](*args)))


if __name__ == "__main__":
    main()
