/*
 * AF_INET sockets against a Linux peer (tests/test_net_sockets.py; not in the differential
 * suite: it needs the peer's servers). The same binary runs on Linux in the test's
 * namespace (tests/test_net_sockets.py), so every check holds on both systems.
 * Usage: sock PEER_IP [ondol]. Prints one line per step:
 *   errors: EPROTONOSUPPORT, EBADF, ENOTSOCK, EFAULT, SO_TYPE, EDOM for a bad timeout;
 *           with "ondol", also the families ondol lacks (EAFNOSUPPORT for AF_UNIX, AF_INET6);
 *   tcp client: connect to PEER:9000 (a sink), writev 65536 pattern bytes, SIOCOUTQ,
 *               shutdown, EOF, SIOCOUTQ 0;
 *   udp: to PEER:9002 (an echo server answering 3 datagrams, and a datagram starting with
 *        "conn" first with "stranger" from port 9003): sendto, poll, FIONREAD, recvfrom
 *        with MSG_PEEK then with MSG_TRUNC and a short buffer; recvmsg of a longer one into
 *        a short iovec (MSG_TRUNC in msg_flags); a connected socket takes only the echo
 *        (the stranger is dropped); SO_RCVTIMEO ends a recv with EAGAIN after its time;
 *        SO_SNDTIMEO read back;
 *   ping socket: an echo request to PEER (identifier and checksum set by the socket),
 *                its reply without the IP header, EINVAL for another ICMP type;
 *   tcp server: on port 9200, accept would block (EAGAIN), poll, accept4, a blocking
 *               MSG_PEEK of the first 16 bytes, then of 10,000 once queued (beyond one
 *               4 KiB call of ondol's network server), MSG_TRUNC discarding 1,000 without
 *               a buffer, recvmsg with two iovecs to the end: the count and a checksum
 *               (the peeked bytes counted once, the discarded ones from the known
 *               pattern); getpeername.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>

#ifndef SIOCOUTQ
#define SIOCOUTQ TIOCOUTQ      /* linux/sockios.h: the same number */
#endif
#include <unistd.h>

static int fails;

static void check(const char *what, int ok)
{
    printf("%s %s\n", what, ok ? "ok" : "FAIL");
    if (!ok) {
        printf("  errno %d\n", errno);
        fails++;
    }
}

static struct sockaddr_in addr(const char *ip, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

static void errors(int ondol)
{
    int p[2];
    pipe(p);
    if (ondol) {
        check("af_unix", socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EAFNOSUPPORT);
        check("af_inet6", socket(AF_INET6, SOCK_STREAM, 0) < 0 && errno == EAFNOSUPPORT);
    }
    check("proto", socket(AF_INET, SOCK_STREAM, IPPROTO_UDP) < 0 && errno == EPROTONOSUPPORT);
    struct sockaddr_in a = addr("0.0.0.0", 0);
    check("ebadf", bind(99, (struct sockaddr *)&a, sizeof a) < 0 && errno == EBADF);
    check("enotsock", bind(p[0], (struct sockaddr *)&a, sizeof a) < 0 && errno == ENOTSOCK);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    check("efault", connect(s, (struct sockaddr *)8, sizeof a) < 0 && errno == EFAULT);
    int type = 0;
    socklen_t len = sizeof type;
    check("so_type", getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
                         type == SOCK_STREAM && len == sizeof type);
    struct timeval bad = {1, 1000000};
    check("edom", setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &bad, sizeof bad) < 0 && errno == EDOM);
    close(s);
    close(p[0]);
    close(p[1]);
}

static void tcp_client(const char *peer)
{
    static unsigned char buf[65536];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = addr(peer, 9000);
    check("connect", connect(s, (struct sockaddr *)&a, sizeof a) == 0);
    check("nodelay", setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0);
    struct iovec v[2] = {{buf, 1000}, {buf + 1000, sizeof buf - 1000}};
    check("writev", writev(s, v, 2) == (ssize_t)sizeof buf);
    int q = -1;
    check("siocoutq", ioctl(s, SIOCOUTQ, &q) == 0 && q >= 0 && q <= (int)sizeof buf);
    check("shutdown", shutdown(s, SHUT_WR) == 0);
    char c;
    check("eof", read(s, &c, 1) == 0);
    check("siocoutq_0", ioctl(s, SIOCOUTQ, &q) == 0 && q == 0);
    close(s);
}

static long ms_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int wait_in(int s)
{
    struct pollfd pf = {.fd = s, .events = POLLIN};
    return poll(&pf, 1, 10000) == 1 && (pf.revents & POLLIN);
}

/* An unconnected socket: peek, FIONREAD, MSG_TRUNC on recvfrom and in recvmsg. */
static void udp_unconnected(const struct sockaddr_in *a)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0), q = -1;
    struct sockaddr_in from;
    check("sendto", sendto(s, "ping-udp", 8, 0, (const struct sockaddr *)a, sizeof *a) == 8);
    check("poll_udp", wait_in(s));
    check("fionread_udp", ioctl(s, FIONREAD, &q) == 0 && q == 8);
    char buf[64] = {0};
    socklen_t len = sizeof from;
    ssize_t n = recvfrom(s, buf, sizeof buf, MSG_PEEK, (struct sockaddr *)&from, &len);
    check("peek_udp", n == 8 && memcmp(buf, "ping-udp", 8) == 0 &&
                          from.sin_addr.s_addr == a->sin_addr.s_addr && from.sin_port == a->sin_port);
    memset(buf, 0, sizeof buf);
    n = recvfrom(s, buf, 4, MSG_TRUNC, (struct sockaddr *)&from, &len);
    check("recvfrom_trunc", n == 8 && memcmp(buf, "ping\0", 5) == 0 && from.sin_port == a->sin_port);
    check("fionread_0", ioctl(s, FIONREAD, &q) == 0 && q == 0);
    check("sendto_long", sendto(s, "a-longer-datagram", 17, 0, (const struct sockaddr *)a, sizeof *a) == 17);
    struct iovec v = {buf, 5};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
    n = recvmsg(s, &m, 0);
    check("recvmsg_trunc", n == 5 && (m.msg_flags & MSG_TRUNC) && memcmp(buf, "a-lon", 5) == 0);
    close(s);
}

/* A connected socket takes only its peer's datagrams; the receive timeout. */
static void udp_connected(const struct sockaddr_in *a)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0), q = -1;
    check("connect_udp", connect(s, (const struct sockaddr *)a, sizeof *a) == 0);
    check("send_udp", send(s, "conn-udp", 8, 0) == 8);
    char buf[64] = {0};
    check("recv_connected", wait_in(s) && recv(s, buf, sizeof buf, 0) == 8 &&
                                memcmp(buf, "conn-udp", 8) == 0);
    check("stranger_dropped", ioctl(s, FIONREAD, &q) == 0 && q == 0 &&
                                  recv(s, buf, sizeof buf, MSG_DONTWAIT) < 0 && errno == EAGAIN);
    struct timeval tv = {0, 300000}, got = {9, 9};
    socklen_t len = sizeof got;
    check("rcvtimeo_set", setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0);
    check("rcvtimeo_get", getsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &got, &len) == 0 &&
                              len == sizeof got && got.tv_sec == 0 && got.tv_usec == 300000);
    long t0 = ms_now();
    check("rcvtimeo", recv(s, buf, sizeof buf, 0) < 0 && errno == EAGAIN && ms_now() - t0 >= 250);
    tv = (struct timeval){2, 500000};
    len = sizeof got;
    check("sndtimeo", setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0 &&
                          getsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &got, &len) == 0 &&
                          got.tv_sec == 2 && got.tv_usec == 500000);
    close(s);
}

static void udp(const char *peer)
{
    struct sockaddr_in a = addr(peer, 9002);
    udp_unconnected(&a);
    udp_connected(&a);
}

/* Once PEEK_LONG bytes are queued: MSG_PEEK of all of them (more than one 4 KiB call to
 * ondol's network server), then MSG_TRUNC discarding DISCARD bytes without a buffer (as
 * Linux's TCP does); the discarded bytes count in *total and *sum from the known pattern
 * (byte i of the stream is i mod 256). */
#define PEEK_LONG 10000
#define DISCARD 1000
static void peek_long_then_discard(int s, uint64_t *total, uint64_t *sum)
{
    int q = 0;
    for (int i = 0; i < 1000 && (ioctl(s, FIONREAD, &q) != 0 || q < PEEK_LONG); i++)
        usleep(10000);
    static unsigned char big[PEEK_LONG];
    ssize_t k = recv(s, big, sizeof big, MSG_PEEK);
    int same = k == PEEK_LONG;
    for (ssize_t i = 0; same && i < k; i++)
        same = big[i] == (unsigned char)i;
    check("peek_tcp_long", same);
    check("trunc_tcp", recv(s, NULL, DISCARD, MSG_TRUNC) == DISCARD);
    for (int i = 0; i < DISCARD; i++)
        *sum = *sum * 31 + (unsigned char)i;
    *total = DISCARD;
}

/* A ping socket (SOCK_DGRAM, IPPROTO_ICMP): an echo request with identifier and checksum
 * left 0 (the socket sets them), the reply without its IP header carrying the socket's
 * identifier (getsockname's port); a request of another type is EINVAL. Linux needs the
 * caller's group in net.ipv4.ping_group_range (the test sets it). */
static void ping_socket(const char *peer)
{
    int s = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
    check("ping_socket", s >= 0);
    struct sockaddr_in a = addr(peer, 0), me, from;
    unsigned char req[8 + 20] = {8, 0, 0, 0, 0, 0, 0, 7}, rep[64];
    memcpy(req + 8, "ondol-ping-socket-test", 20);
    check("ping_send", sendto(s, req, sizeof req, 0, (struct sockaddr *)&a, sizeof a) ==
                           (ssize_t)sizeof req);
    unsigned char bad[8] = {13, 0};
    check("ping_einval", sendto(s, bad, sizeof bad, 0, (struct sockaddr *)&a, sizeof a) < 0 &&
                             errno == EINVAL);
    struct pollfd pf = {.fd = s, .events = POLLIN};
    socklen_t len = sizeof from, mlen = sizeof me;
    ssize_t n = poll(&pf, 1, 5000) == 1 ? recvfrom(s, rep, sizeof rep, 0,
                                                   (struct sockaddr *)&from, &len) : -1;
    check("ping_reply", n == (ssize_t)sizeof req && rep[0] == 0 && rep[7] == 7 &&
                            memcmp(rep + 8, req + 8, 20) == 0 &&
                            from.sin_addr.s_addr == a.sin_addr.s_addr);
    check("ping_id", getsockname(s, (struct sockaddr *)&me, &mlen) == 0 && n >= 8 &&
                         me.sin_port != 0 && memcmp(rep + 4, &me.sin_port, 2) == 0);
    close(s);
}

static void tcp_server(void)
{
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = addr("0.0.0.0", 9200), peer;
    check("bind", bind(l, (struct sockaddr *)&a, sizeof a) == 0);
    check("listen", listen(l, 4) == 0);
    check("eagain", accept(l, NULL, NULL) < 0 && errno == EAGAIN);
    printf("listening\n");
    fflush(stdout);
    struct pollfd pf = {.fd = l, .events = POLLIN};
    check("poll_accept", poll(&pf, 1, 30000) == 1);
    socklen_t len = sizeof peer;
    int s = accept4(l, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
    check("accept4", s >= 0 && len == sizeof peer && peer.sin_family == AF_INET);
    unsigned char first[16];
    ssize_t k = recv(s, first, sizeof first, MSG_PEEK);
    check("peek_tcp", k > 0 && first[0] == 0 && first[k - 1] == (unsigned char)(k - 1));
    uint64_t total = 0, sum = 0;
    peek_long_then_discard(s, &total, &sum);
    static unsigned char b1[700], b2[3000];
    for (;;) {
        struct iovec v[2] = {{b1, sizeof b1}, {b2, sizeof b2}};
        struct msghdr m = {.msg_iov = v, .msg_iovlen = 2};
        ssize_t n = recvmsg(s, &m, 0);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            sum = sum * 31 + (i < (ssize_t)sizeof b1 ? b1[i] : b2[i - sizeof b1]);
        total += (uint64_t)n;
    }
    struct sockaddr_in p2;
    len = sizeof p2;
    check("getpeername", getpeername(s, (struct sockaddr *)&p2, &len) == 0 &&
                             p2.sin_addr.s_addr == peer.sin_addr.s_addr);
    printf("received %llu sum %016llx\n", (unsigned long long)total, (unsigned long long)sum);
    close(s);
    close(l);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sock PEER_IP\n");
        return 2;
    }
    errors(argc > 2 && strcmp(argv[2], "ondol") == 0);
    tcp_client(argv[1]);
    udp(argv[1]);
    ping_socket(argv[1]);
    tcp_server();
    printf("fails %d\n", fails);
    return fails != 0;
}
