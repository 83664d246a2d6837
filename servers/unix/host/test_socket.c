/* Sockets without a network server (the host fake answers every rt_srv_call with
 * E_NOENT): socket(AF_INET) is EAFNOSUPPORT as on a Linux without IPv4, the other families
 * and bad types and flags get Linux's errors, and the socket calls on descriptors that are
 * not sockets are EBADF or ENOTSOCK (docs/net.md, "Sockets of Linux programs"). */
#include <stdio.h>
#include "vfs_test.h"

#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define EPROTONOSUPPORT 93

static void test_socket_errors(void)
{
    CHECK_EQ(SYS(socket, AF_INET, SOCK_STREAM, 0), -EAFNOSUPPORT);   /* no network */
    CHECK_EQ(SYS(socket, AF_INET, SOCK_DGRAM, 0), -EAFNOSUPPORT);
    CHECK_EQ(SYS(socket, AF_UNIX, SOCK_STREAM, 0), -EAFNOSUPPORT);
    CHECK_EQ(SYS(socket, AF_INET6, SOCK_DGRAM, 0), -EAFNOSUPPORT);
    CHECK_EQ(SYS(socket, AF_INET, SOCK_RAW, 1), -EAFNOSUPPORT);   /* raw ICMP: root may */
    CHECK_EQ(SYS(socket, AF_INET, SOCK_RAW, 17), -EPROTONOSUPPORT);   /* raw UDP: none */
    CHECK_EQ(SYS(socket, AF_INET, SOCK_STREAM, 17), -EPROTONOSUPPORT);   /* UDP for TCP */
    CHECK_EQ(SYS(socket, AF_INET, SOCK_STREAM | 0x10000000, 0), -EINVAL);
}

static void test_not_sockets(void)
{
    uint64_t fds = ubuf(8), addr = ubuf(16), len = ubuf(4);
    SYS(pipe2, fds, 0);
    int p[2];
    memcpy(p, host(fds), 8);
    uint32_t n = 16;
    memcpy(host(len), &n, 4);
    CHECK_EQ(SYS(bind, 99, addr, 16), -EBADF);
    CHECK_EQ(SYS(bind, (uint64_t)p[0], addr, 16), -ENOTSOCK);
    CHECK_EQ(SYS(connect, (uint64_t)p[0], addr, 16), -ENOTSOCK);
    CHECK_EQ(SYS(listen, (uint64_t)p[0], 1), -ENOTSOCK);
    CHECK_EQ(SYS(accept4, (uint64_t)p[0], addr, len, 0), -ENOTSOCK);
    CHECK_EQ(SYS(sendto, (uint64_t)p[1], addr, 1, 0, 0, 0), -ENOTSOCK);
    CHECK_EQ(SYS(recvfrom, (uint64_t)p[0], addr, 1, 0, 0, 0), -ENOTSOCK);
    CHECK_EQ(SYS(getsockname, (uint64_t)p[0], addr, len), -ENOTSOCK);
    CHECK_EQ(SYS(shutdown, 77, 1), -EBADF);
    CHECK_EQ(SYS(sendto, (uint64_t)p[1], (uint64_t)-4096, 10, 0, 0, 0), -EFAULT);
    SYS(close, (uint64_t)p[0]);
    SYS(close, (uint64_t)p[1]);
}

int main(void)
{
    vfs_test_begin();
    test_socket_errors();
    test_not_sockets();
    vfs_test_end();
    return fake_done();
}
