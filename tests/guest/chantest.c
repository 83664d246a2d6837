/*
 * chantest: the network server's data-channel slots (docs/net.md, "The data channel"),
 * driven by tests/test_net_mk.py. Run as the first task (`init=chantest`, privileged: only
 * a privileged task may make the window a channel maps) with `net=mk` and a virtio-net
 * device. Each channel belongs to the thread that opened it:
 *   ended  CHAN_ENDED threads, one after another, each opens a channel and exits: every
 *          open must succeed (the slots of ended threads are taken back);
 *   live   CHANNELS_PER_TASK + 1 threads open one each and stay: the last is refused
 *          (-ENOMEM, 12: a task holds at most CHANNELS_PER_TASK);
 *   other  meanwhile a second task opens one: it succeeds (room is left for other tasks);
 *   ops    the datagram and peek ops of the channel (chsendto, chrecvfrom, chpeek) refuse
 *          a thread without a channel and a length past it (-EINVAL, 22); with one, a
 *          peek far past a stream's end reads 0 bytes, an empty datagram socket says
 *          -EAGAIN (11), a datagram within the window is sent whole.
 * Prints each phase's results, then "chantest ok" or "chantest failed", and powers off.
 * Run as `chantest child` it is that second task: one channel, its result as exit status.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <ondol/sys.h>
#include <ondol/thread.h>
#include "net_client.h"

#define CHAN_ENDED 12
#define PER_TASK 4                    /* CHANNELS_PER_TASK in servers/net/netsrv.c */
#define WINDOW 4096
#define STACK (16 * 1024)

static unsigned char *window;         /* one window: every channel maps the same page */
static uint32_t release_word;         /* the live threads wait until it is 1 */

/* A channel for the calling thread: the op's res (0 or a negated errno), or its error. */
static long open_channel(void)
{
    struct srv_conn conn;
    uint64_t res = 0, tid = 0;
    long e = srv_connect(&conn, NET_IFACE);
    if (e == 0)
        e = net_call_channel(&conn, (uint64_t)(uintptr_t)window, WINDOW, 0, &res, &tid);
    return e < 0 ? e : (long)res;
}

static int ended_thread(void *arg)
{
    *(long *)arg = open_channel();
    return 0;
}

static int live_thread(void *arg)
{
    *(long *)arg = open_channel();
    __atomic_store_n((long *)arg + 1, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&release_word, __ATOMIC_ACQUIRE) == 0)
        sys_futex_wait(&release_word, 0, SLEEP_FOREVER);
    return 0;
}

#define NET_SOCK_STREAM 1
#define NET_SOCK_DGRAM 2
#define GATEWAY 0x0a000202u           /* QEMU's user network, netsrv's default gateway */

/* The channel ops' refusals for a thread without a channel: three results. */
static int no_channel_ops(void *arg)
{
    long *r = arg;
    struct srv_conn conn;
    uint64_t sd = 0, v[3] = {0}, ip, port;
    srv_connect(&conn, NET_IFACE);
    net_call_open(&conn, NET_SOCK_DGRAM, &sd);
    net_call_chsendto(&conn, sd, GATEWAY, 9, 10, &v[0]);
    net_call_chrecvfrom(&conn, sd, 100, &v[1], &ip, &port);
    net_call_chpeek(&conn, sd, 0, 100, &v[2], &ip, &port);
    net_call_release(&conn, sd, &ip);
    for (int i = 0; i < 3; i++)
        r[i] = (long)v[i];
    return 0;
}

/* With a channel of our own: a peek past the end, a datagram past the window, an empty
 * datagram socket, a datagram sent: four results. */
static void channel_ops(long r[4])
{
    struct srv_conn conn;
    uint64_t tcp = 0, udp = 0, v[4] = {0}, ip, port;
    srv_connect(&conn, NET_IFACE);
    net_call_open(&conn, NET_SOCK_STREAM, &tcp);
    net_call_open(&conn, NET_SOCK_DGRAM, &udp);
    net_call_chpeek(&conn, tcp, 1ull << 40, 100, &v[0], &ip, &port);
    net_call_chsendto(&conn, udp, GATEWAY, 9, WINDOW + 1, &v[1]);
    net_call_chrecvfrom(&conn, udp, ~0ull, &v[2], &ip, &port);
    memcpy(window, "chantest", 8);
    net_call_chsendto(&conn, udp, GATEWAY, 9, 8, &v[3]);
    net_call_release(&conn, tcp, &ip);
    net_call_release(&conn, udp, &ip);
    for (int i = 0; i < 4; i++)
        r[i] = (long)v[i];
}

static bool print_results(const char *phase, const long *r, int n, int step)
{
    bool all_zero = true;
    printf("chantest %s", phase);
    for (int i = 0; i < n; i++) {
        printf(" %ld", r[i * step]);
        all_zero &= r[i * step] == 0;
    }
    printf("\n");
    return all_zero;
}

static long make_window(void)
{
    long at = sys_vm_mmap(NULL, WINDOW, PROT_READ | PROT_WRITE, VM_MMAP_FILE, 0);
    if (at < 0)
        return at;
    window = (unsigned char *)at;
    return 0;
}

int main(int argc, char **argv)
{
    if (make_window() < 0) {
        printf("chantest: no window (privileged only)\n");
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "child"))
        return (int)-open_channel();
    static struct thread threads[PER_TASK + 1];
    static long ended[CHAN_ENDED], live[PER_TASK + 1][2];
    for (int i = 0; i < CHAN_ENDED; i++) {
        thread_start(&threads[0], ended_thread, &ended[i], PRIO_INHERIT, STACK);
        thread_join(&threads[0], NULL);
    }
    bool ok = print_results("ended", ended, CHAN_ENDED, 1);
    for (int i = 0; i <= PER_TASK; i++) {
        thread_start(&threads[i], live_thread, live[i], PRIO_INHERIT, STACK);
        while (!__atomic_load_n(&live[i][1], __ATOMIC_ACQUIRE))
            sys_yield();
    }
    ok &= print_results("live", &live[0][0], PER_TASK, 2);
    printf("chantest live extra %ld\n", live[PER_TASK][0]);
    ok &= live[PER_TASK][0] == -12;
    const char *child_argv[] = {"chantest", "child"};
    int status = -1;
    long child = sys_spawn("chantest", child_argv, 2, SPAWN_PRIVILEGED);
    if (child > 0)
        sys_task_wait((int)child, &status);
    printf("chantest other %d\n", -status);
    ok &= status == 0;
    __atomic_store_n(&release_word, 1, __ATOMIC_RELEASE);
    sys_futex_wake(&release_word, PER_TASK + 1);
    for (int i = 0; i <= PER_TASK; i++)
        thread_join(&threads[i], NULL);
    long none[3], own[4];
    thread_start(&threads[0], no_channel_ops, none, PRIO_INHERIT, STACK);
    thread_join(&threads[0], NULL);
    ok &= open_channel() == 0;
    channel_ops(own);
    printf("chantest ops %ld %ld %ld / %ld %ld %ld %ld\n", none[0], none[1], none[2], own[0],
           own[1], own[2], own[3]);
    ok &= none[0] == -22 && none[1] == -22 && none[2] == -22 && own[0] == 0 &&
          own[1] == -22 && own[2] == -11 && own[3] == 8;
    printf("chantest %s\n", ok ? "ok" : "failed");
    sys_poweroff();
    return 0;
}
