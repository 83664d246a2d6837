/*
 * qemurelay: a seeded lossy link between QEMU's `-netdev dgram` back-end and a tap device
 * (docs/net.md, "Loss, duplication, reordering and delay in QEMU"). QEMU sends each guest
 * frame as one UDP datagram to --port and takes frames for the guest from it; the relay
 * passes them through link.h (the same simulated link as nethost's relay and the unit
 * tests), which drops, duplicates, reorders and delays some of them, seeded so a run
 * repeats; the other end is the tap, where the host's Linux stack sees the guest.
 *   qemurelay --tap NAME --port P --qemu-port Q [--seed S --loss PM --dup PM --reorder PM
 *             --delay MS --jitter MS]
 * Run it inside the namespace that holds the tap (the UDP traffic stays on its loopback).
 * Prints "ready" once both ends are open; on SIGTERM or SIGINT prints what the link did.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "link.h"

enum { TO_TAP = 0, TO_GUEST = 1 };
#define FRAME_MAX 2048

static struct link relay;
static int tapfd, udpfd;
static struct sockaddr_in qemu_addr;
static volatile sig_atomic_t stop;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int tap_open(const char *name)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A UDP socket on 127.0.0.1:port, non-blocking; -1 on failure. */
static int udp_open(unsigned port)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0)
        return -1;
    return fd;
}

/* Everything readable from both ends into the link. */
static void take_in(void)
{
    static uint8_t frame[FRAME_MAX];
    ssize_t n;
    while ((n = read(tapfd, frame, sizeof frame)) > 0)
        link_send(&relay, TO_GUEST, frame, (size_t)n, now_ms());
    while ((n = recv(udpfd, frame, sizeof frame, 0)) > 0)
        link_send(&relay, TO_TAP, frame, (size_t)n, now_ms());
}

/* Every frame due by now out of its end (a full tap or socket drops it, as a wire would). */
static void deliver(void)
{
    static uint8_t frame[FRAME_MAX];
    size_t len;
    int dir;
    while ((len = link_recv(&relay, now_ms(), &dir, frame, sizeof frame)) > 0) {
        if (dir == TO_TAP)
            (void)!write(tapfd, frame, len);
        else
            (void)!sendto(udpfd, frame, len, 0, (struct sockaddr *)&qemu_addr, sizeof qemu_addr);
    }
}

static void run(void)
{
    struct pollfd fds[2] = {{.fd = tapfd, .events = POLLIN}, {.fd = udpfd, .events = POLLIN}};
    while (!stop) {
        uint64_t due = link_next_due(&relay), now = now_ms();
        int timeout = due == UINT64_MAX ? 100 : due <= now ? 0 : (int)(due - now < 100 ? due - now : 100);
        if (poll(fds, 2, timeout) < 0 && errno != EINTR)
            break;
        take_in();
        deliver();
    }
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    const char *tap = 0;
    unsigned port = 0, qemu_port = 0;
    struct link_params lp = {0, 0, 0, 0, 0, 1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--tap")) tap = v;
        else if (!strcmp(k, "--port")) port = (unsigned)atoi(v);
        else if (!strcmp(k, "--qemu-port")) qemu_port = (unsigned)atoi(v);
        else if (!strcmp(k, "--seed")) lp.seed = strtoull(v, 0, 0);
        else if (!strcmp(k, "--loss")) lp.loss_pm = (unsigned)atoi(v);
        else if (!strcmp(k, "--dup")) lp.dup_pm = (unsigned)atoi(v);
        else if (!strcmp(k, "--reorder")) lp.reorder_pm = (unsigned)atoi(v);
        else if (!strcmp(k, "--delay")) lp.delay_ms = (unsigned)atoi(v);
        else if (!strcmp(k, "--jitter")) lp.jitter_ms = (unsigned)atoi(v);
        else { fprintf(stderr, "qemurelay: unknown option %s\n", k); return 2; }
    }
    if (!tap || !port || !qemu_port || port > 65535 || qemu_port > 65535) {
        fprintf(stderr, "usage: qemurelay --tap NAME --port P --qemu-port Q [link options]\n");
        return 2;
    }
    tapfd = tap_open(tap);
    udpfd = udp_open(port);
    if (tapfd < 0 || udpfd < 0) {
        perror("qemurelay: open");
        return 1;
    }
    qemu_addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)qemu_port),
                                     .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    link_init(&relay, &lp);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    printf("ready\n");
    fflush(stdout);
    run();
    printf("qemurelay sent %llu lost %llu dup %llu reordered %llu\n",
           (unsigned long long)relay.sent, (unsigned long long)relay.lost,
           (unsigned long long)relay.duplicated, (unsigned long long)relay.reordered);
    link_free(&relay);
    return 0;
}
