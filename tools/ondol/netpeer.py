"""The Linux side of `./ondol bench net` (docs/net.md, "P3's per-layer cost in QEMU"): run
inside the benchmark's network namespace (`ip netns exec NS python3 netpeer.py IP`), it
serves bench/netbench.c's connections until it is stopped:

  SINK_PORT    reads everything and acknowledges each segment at once (TCP_QUICKACK after
               every read), so ondol's "ack_in" phase sees one pure ACK per segment;
  SOURCE_PORT  reads a 16-byte request "SIZE COUNT", then sends COUNT segments of SIZE
               bytes, each once the previous one is acknowledged (SIOCOUTQ is 0), so
               ondol receives one segment at a time and its delayed ACK goes out alone;
  BULK_SINK_PORT    reads to EOF, then answers "BYTES NS": what it read and the host's
                    wall-clock time from the first byte to the EOF
                    (tools/netcalls/netcalls.c's transfer to the host);
  BULK_SOURCE_PORT  reads a 16-byte request "BYTES", sends that many bytes, waits for one
                    byte back (the guest has them all), answers "BYTES NS" (from the first
                    byte sent to that byte);
  UDP_SINK_PORT     (UDP) takes datagrams and drops them;
  UDP_ECHO_PORT     (UDP) sends every datagram back to where it came from.

Prints "ready" once every port listens. Every socket has a timeout; nothing leaves the
namespace. Standard library only.
"""
import fcntl
import socket
import struct
import sys
import termios
import threading
import time

SINK_PORT, SOURCE_PORT, BULK_SINK_PORT, BULK_SOURCE_PORT = 9100, 9101, 9102, 9103
UDP_SINK_PORT, UDP_ECHO_PORT = 9104, 9105
BULK_CHUNK = 65536
TIMEOUT = 60.0
ACK_POLL_S = 0.0002


def listener(ip: str, port: int) -> socket.socket:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((ip, port))
    srv.listen(4)
    return srv


def unacked(conn: socket.socket) -> int:
    """Bytes sent (or queued) and not yet acknowledged by the peer (SIOCOUTQ)."""
    return struct.unpack("i", fcntl.ioctl(conn.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]


def wait_acked(conn: socket.socket) -> None:
    deadline = time.monotonic() + TIMEOUT
    while unacked(conn) and time.monotonic() < deadline:
        time.sleep(ACK_POLL_S)


def sink(conn: socket.socket) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
    while conn.recv(65536):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


def read_exactly(conn: socket.socket, n: int) -> bytes:
    got = b""
    while len(got) < n:
        chunk = conn.recv(n - len(got))
        if not chunk:
            raise ConnectionError("request cut short")
        got += chunk
    return got


def source(conn: socket.socket) -> None:
    size, count = (int(w) for w in read_exactly(conn, 16).split())
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    segment = b"r" * size
    for _ in range(count):
        wait_acked(conn)
        conn.sendall(segment)
    wait_acked(conn)


def bulk_sink(conn: socket.socket) -> None:
    total, first = 0, None
    while True:
        chunk = conn.recv(BULK_CHUNK)
        if not chunk:
            break
        first = first or time.monotonic_ns()
        total += len(chunk)
    elapsed = time.monotonic_ns() - first if first else 0
    conn.sendall(f"{total} {elapsed}\n".encode())


def bulk_source(conn: socket.socket) -> None:
    total = int(read_exactly(conn, 16).split()[0])
    block = b"s" * BULK_CHUNK
    start, left = time.monotonic_ns(), total
    while left:
        left -= conn.send(block[:min(left, BULK_CHUNK)])
    read_exactly(conn, 1)
    conn.sendall(f"{total} {time.monotonic_ns() - start}\n".encode())


def serve(srv: socket.socket, handle) -> None:
    """Connections one after another, each handled to its end; errors end only that one."""
    while True:
        conn, _ = srv.accept()
        conn.settimeout(TIMEOUT)
        try:
            handle(conn)
        except (OSError, ValueError) as exc:
            print(f"netpeer: {handle.__name__}: {exc}", file=sys.stderr, flush=True)
        finally:
            conn.close()


def datagrams(ip: str, port: int, echo: bool) -> None:
    """The UDP ports: drop every datagram, or send it back to its source."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((ip, port))
    while True:
        data, source = sock.recvfrom(65536)
        if echo:
            sock.sendto(data, source)


def main(ip: str) -> None:
    servers = [(listener(ip, SINK_PORT), sink), (listener(ip, SOURCE_PORT), source),
               (listener(ip, BULK_SINK_PORT), bulk_sink),
               (listener(ip, BULK_SOURCE_PORT), bulk_source)]
    threads = [threading.Thread(target=serve, args=s, daemon=True) for s in servers]
    threads += [threading.Thread(target=datagrams, args=(ip, port, port == UDP_ECHO_PORT),
                                 daemon=True) for port in (UDP_SINK_PORT, UDP_ECHO_PORT)]
    for t in threads:
        t.start()
    print("ready", flush=True)
    for t in threads:
        t.join()


if __name__ == "__main__":
    main(sys.argv[1])
