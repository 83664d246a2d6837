/*
 * What the two kinds of socket share (socket.c: AF_INET through the network server;
 * netlink.c: AF_NETLINK answered by the UNIX server itself): the user buffers of a send
 * or receive (one range or a vector of iovecs, checked as readv's), and the socket calls'
 * entry points into netlink.c. socket.c owns the Linux calls (syscalls.def) and hands a
 * netlink descriptor's call to netlink.c.
 */
#ifndef UNIX_SOCKET_H
#define UNIX_SOCKET_H
#include "devices.h"

struct uvec {
    uint64_t uiov, cnt;            /* iovecs in user memory, or... */
    struct linux_iovec one;        /* ...one range (cnt 0) */
};

/* The vector's total length (iovecs already checked by vfs_check_iov). */
size_t uvec_total(struct ucall *c, const struct uvec *u);
/* Copy k bytes at offset off of the vector to (out) or from the server's buf: 0 or
 * -EFAULT. */
long uvec_copy(struct ucall *c, const struct uvec *u, size_t off, void *buf, size_t k, bool out);

/* Write a socket address or option value of `size` bytes to (uaddr, *ulen) as these calls
 * do here: truncated to the caller's length, the full length written back; uaddr 0:
 * nothing. 0, -EFAULT or -EINVAL (a negative length). */
long value_out(struct ucall *c, uint64_t uaddr, uint64_t ulen, const void *a, size_t size);

/* Linux's socket constants shared by socket.c and netlink.c (the uapi's socket.h) */
#define AF_UNSPEC 0
#define AF_INET 2
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define SOCK_TYPE_MASK 0xf
#define SOL_SOCKET 1
#define SO_TYPE 3
#define SO_SNDBUF 7
#define SO_RCVBUF 8
#define MSG_PEEK 0x2
#define MSG_TRUNC 0x20
#define MSG_DONTWAIT 0x40

/* ---- ping.c: Linux's ping sockets over the stack's raw ICMP socket ---- */
uint16_t ping_id_new(void);                  /* a new socket's echo identifier */
/* An echo request the program wrote (n bytes at msg): 0 with its identifier and checksum
 * set, or -EINVAL (shorter than an ICMP header, or not type 8 code 0). */
long ping_out(uint8_t *msg, size_t n, uint16_t id);
/* A packet from the raw socket (IP header first): the length of its ICMP part, at *off,
 * when it is an echo reply with identifier id; -1 otherwise (not this socket's). */
long ping_in(const uint8_t *pkt, size_t n, uint16_t id, size_t *off);

/* ---- netlink.c ---- */
#define AF_NETLINK 16
bool nl_file(const struct file *f);
/* socket(AF_NETLINK, type, protocol): an fd, or Linux's error for the type or protocol. */
long nl_socket(struct ucall *c, unsigned type, unsigned flags, long proto);
/* The calls on a netlink fd (c->a[0]), with socket.c's argument decoding: a send's data in
 * u and its destination (uaddr, alen: 0 for the kernel); a receive's buffers in u and the
 * source written to (uaddr, *ulen), *mflags getting MSG_TRUNC. */
long nl_send(struct ucall *c, struct file *f, const struct uvec *u, uint64_t flags,
             uint64_t uaddr, uint64_t alen);
long nl_recv(struct ucall *c, struct file *f, const struct uvec *u, uint64_t flags,
             uint64_t uaddr, uint64_t ulen, int32_t *mflags);
long nl_bind(struct ucall *c, struct file *f);
long nl_connect(struct ucall *c, struct file *f);
long nl_name(struct ucall *c, struct file *f, bool peer);
long nl_setsockopt(struct ucall *c, struct file *f);
long nl_getsockopt(struct ucall *c, struct file *f);
#endif
