"""The Linux side of tests/test_net_qemu.py: servers run inside the test's network
namespace (`ip netns exec NS python3 nsserve.py CMD ...`) for ondol's netcli to reach.
Each prints "ready" once listening, serves one client, then prints one JSON object.
Every socket is bounded by a timeout; nothing here leaves the namespace.

Commands:
  sink IP PORT               accept one TCP connection, read to its end: bytes and FNV-1a
  source IP PORT BYTES SEED  accept one TCP connection, send BYTES of the test stream, close
  udpecho IP PORT            answer one UDP datagram with its own bytes
"""
import json
import socket
import sys

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


def cmd_udpecho(ip, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ip, int(port)))
    s.settimeout(TIMEOUT)
    print("ready", flush=True)
    data, peer = s.recvfrom(4096)
    s.sendto(data, peer)
    return {"bytes": len(data), "from": peer[0]}


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    print(json.dumps(globals()["cmd_" + cmd](*args)), flush=True)


if __name__ == "__main__":
    main()
