/*
 * AF_INET sockets against a Linux peer (tests/test_net_sockets.py; not in the differential
 * suite: it needs the peer's servers). Usage: sock PEER_IP. Prints one line per step:
 *   errors: EAFNOSUPPORT for AF_UNIX and AF_INET6, EPROTONOSUPPORT for SOCK_RAW, EBADF,
 *           ENOTSOCK, EFAULT, SO_TYPE;
 *   tcp client: connect to PEER:9000 (a sink), writev 65536 pattern bytes, shutdown;
 *   udp: sendto PEER:9002 (an echo server), poll, recvfrom: the same bytes from the peer;
 *   tcp server: on port 9200, accept would block (EAGAIN), poll, accept4, recvmsg with
 *               two iovecs to the end: the count and a checksum; getpeername.
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
#include <sys/socket.h>
#include <sys/uio.h>
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

static void errors(void)
{
    int p[2];
    pipe(p);
    check("af_unix", socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EAFNOSUPPORT);
    check("af_inet6", socket(AF_INET6, SOCK_STREAM, 0) < 0 && errno == EAFNOSUPPORT);
    check("raw", socket(AF_INET, SOCK_RAW, 1) < 0 && errno == EPROTONOSUPPORT);
    struct sockaddr_in a = addr("0.0.0.0", 0);
    check("ebadf", bind(99, (struct sockaddr *)&a, sizeof a) < 0 && errno == EBADF);
    check("enotsock", bind(p[0], (struct sockaddr *)&a, sizeof a) < 0 && errno == ENOTSOCK);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    check("efault", connect(s, (struct sockaddr *)8, sizeof a) < 0 && errno == EFAULT);
    int type = 0;
    socklen_t len = sizeof type;
    check("so_type", getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
                         type == SOCK_STREAM && len == sizeof type);
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
    check("shutdown", shutdown(s, SHUT_WR) == 0);
    char c;
    check("eof", read(s, &c, 1) == 0);
    close(s);
}

static void udp(const char *peer)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = addr(peer, 9002), from;
    check("sendto", sendto(s, "ping-udp", 8, 0, (struct sockaddr *)&a, sizeof a) == 8);
    struct pollfd pf = {.fd = s, .events = POLLIN};
    check("poll_udp", poll(&pf, 1, 10000) == 1 && (pf.revents & POLLIN));
    char buf[64] = {0};
    socklen_t len = sizeof from;
    ssize_t n = recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
    check("recvfrom", n == 8 && memcmp(buf, "ping-udp", 8) == 0 &&
                          from.sin_addr.s_addr == a.sin_addr.s_addr && from.sin_port == a.sin_port);
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
    static unsigned char b1[700], b2[3000];
    uint64_t total = 0, sum = 0;
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
    errors();
    tcp_client(argv[1]);
    udp(argv[1]);
    tcp_server();
    printf("fails %d\n", fails);
    return fails != 0;
}
