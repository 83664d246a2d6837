"""The Linux side of tests/test_net_qemu.py: servers run inside the test's network
namespace (`ip netns exec NS python3 nsserve.py CMD ...`) for ondol's netcli to reach.
Each prints "ready" once listening, serves one client, then prints one JSON object.
Every socket is bounded by a timeout; nothing here leaves the namespace.

Commands:
  sink IP PORT               accept one TCP connection, read to its end: bytes and FNV-1a
  source IP PORT BYTES SEED  accept one TCP connection, send BYTES of the test stream, close
  udpecho IP PORT [N [SPORT]]  answer N UDP datagrams (default 1) with their own bytes;
                             with SPORT, one that starts with "conn" is first answered
                             with "stranger" from port SPORT (a connected socket on the
                             other side must not take it)
"""
import json
import socket
import sys
import time

from hostpeer import TIMEOUT, fnv1a, stream


def listener(ip, port):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((ip, int(port)))
    srv.listen(1)
    srv.settimeout(TIMEOUT)
    print("ready", flush=True)
    conn, peer = srv.accept()
    conn.settimeout(TIMEOUT)
    srv.close()
    return conn, peer


def cmd_sink(ip, port):
    conn, peer = listener(ip, port)
    got = bytearray()
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        got += chunk
    conn.close()
    return {"bytes": len(got), "fnv": f"{fnv1a(got):016x}", "from": peer[0]}


def cmd_source(ip, port, nbytes, seed):
    conn, peer = listener(ip, port)
    conn.sendall(stream(int(nbytes), int(seed)))
    conn.close()
    return {"bytes": int(nbytes), "from": peer[0]}


def cmd_udpecho(ip, port, count="1", stranger_port=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ip, int(port)))
    s.settimeout(TIMEOUT)
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if stranger_port:
        other.bind((ip, int(stranger_port)))
    print("ready", flush=True)
    total = 0
    for _ in range(int(count)):
        data, peer = s.recvfrom(4096)
        if stranger_port and data.startswith(b"conn"):
            other.sendto(b"stranger", peer)    # first, from another port
            time.sleep(0.05)
        s.sendto(data, peer)
        total += len(data)
    return {"bytes": total, "from": peer[0]}


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    print(json.dumps(globals()["cmd_" + cmd](*args)), flush=True)


if __name__ == "__main__":
    main()
