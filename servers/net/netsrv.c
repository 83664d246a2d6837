/*
 * The network server (interfaces/net.idl; docs/net.md, "The server"): ondol's TCP/IP
 * stack over the virtio-net driver, one source for both placements. It reaches the device
 * and the clock only through drivers/drvplat.h, so it does not know whether it is the
 * user task netsrv (MK) or part of the kernel (IK).
 *
 * When the stack runs. With net_thread (the default) a thread of the server's own (MK: a
 * thread of the task; IK: a kernel thread), started with the device at the first call,
 * runs it at every device interrupt and at its next timer (`stack_main`): due timers,
 * received frames, then a wait for the interrupt until the next timer. Calls only use
 * the stack (send, receive, readiness); a call that must wait (a native client's ping,
 * connect or read with a timeout) waits for the stack's activity count to change and
 * checks again (`pump`). The UNIX server's event thread waits in op waitevents for the
 * same count (MK: a deferred answer, so the serving thread goes on serving; IK: it
 * sleeps). Without net_thread (net_thread=off, the P3 per-layer benchmark: its phases
 * must not overlap) the stack runs only while a call is inside the server: a waiting
 * call runs it until its condition holds, sleeping on the device's interrupt in between,
 * and the UNIX server's 10 ms pulse calls op pulse between calls.
 *
 * Mutual exclusion: one lock (drv_lock) around every use of the stack, the driver and
 * this file's state, held by a call from enter() to leave() and by the stack thread
 * except while it waits; a waiting call releases it while it waits (drv_wait_change).
 * MK: a futex mutex between the two threads of the task; IK: the big kernel lock, which
 * all IK server code holds already (drv_lock does nothing there). The device and the
 * stack are started at the first call; `ip=` (address/prefix) and `gw=` choose the
 * address, or `ip=dhcp` asks a DHCP server for it (dhcp.c) and the start waits for the
 * lease.
 */
#include <ondol/srv.h>
#include "drvplat.h"
#include "net.h"
#include "net_probe.h"
#include "net_server.h"
#include "virtio_net.h"

#define DEFAULT_IP   0x0a00020fu      /* 10.0.2.15/24 via 10.0.2.2: QEMU's user network */
#define DEFAULT_GW   0x0a000202u
#define DEFAULT_PREFIX 24
#define PING_ID      0x4f4e
#define NOT_STARTED  1

static struct vnet nic;
static struct netif nif;
static struct netstack *stack;
static uint32_t my_ip, my_mask, my_gw;
static int started = NOT_STARTED;     /* then 0, or the error that stopped the start */

/* "a.b.c.d" (and "/prefix" when prefix is not NULL): true when it parses. */
static bool parse_ip(const char *s, uint32_t *ip, int *prefix)
{
    uint32_t v = 0;
    for (int part = 0; part < 4; part++) {
        unsigned n = 0, digits = 0;
        for (; *s >= '0' && *s <= '9' && digits < 4; s++, digits++)
            n = n * 10 + (unsigned)(*s - '0');
        if (!digits || n > 255 || (part < 3 && *s++ != '.'))
            return false;
        v = v << 8 | n;
    }
    *ip = v;
    if (*s == '/' && prefix) {
        int p = 0;
        for (s++; *s >= '0' && *s <= '9' && p <= 32; s++)
            p = p * 10 + (*s - '0');
        *prefix = p;
        return p >= 1 && p <= 32 && !*s;
    }
    return !*s;
}

/* ip=dhcp: the address comes from a DHCP server (dhcp.c); the start waits for it at most
 * this long (DISCOVERs at 0, ~4 and ~12 s), then goes on without (the client keeps
 * asking while the stack runs). */
#define DHCP_START_WAIT_MS 15000
static bool use_dhcp;

static void read_addresses(void)
{
    char buf[40];
    int prefix = DEFAULT_PREFIX;
    my_ip = DEFAULT_IP;
    my_gw = DEFAULT_GW;
    use_dhcp = drv_option("ip", buf, sizeof(buf)) && buf[0] == 'd' && buf[1] == 'h' &&
               buf[2] == 'c' && buf[3] == 'p' && buf[4] == '\0';
    if (use_dhcp) {
        my_ip = my_gw = 0;
        prefix = 32;
    } else if (drv_option("ip", buf, sizeof(buf)) && !parse_ip(buf, &my_ip, &prefix)) {
        my_ip = DEFAULT_IP;
        prefix = DEFAULT_PREFIX;
    }
    if (drv_option("gw", buf, sizeof(buf)) && !parse_ip(buf, &my_gw, NULL))
        my_gw = 0;
    my_mask = prefix == 32 ? 0xffffffffu : ~(0xffffffffu >> prefix);
}

static void send_frame(struct netif *n, const void *frame, size_t len, struct net_offload off)
{
    /* a full ring drops the frame: TCP sends it again */
    vnet_send(n->ctx, frame, len,
              (struct vnet_offload){off.start, off.offset, off.gso_size, off.hdr_len});
}

/* Stack activity the waiting calls care about: frames received and timer runs (ops
 * pulse and waitevents return it; a change means readiness may have changed). 32 bits:
 * it is the word drv_wait_change waits on; it only has to differ. */
static uint32_t activity;

static void input_frame(void *ctx, const uint8_t *frame, size_t len, unsigned flags)
{
    (void)ctx;
    activity++;
    net_input_flags(stack, frame, len, (flags & VNET_DELIVER_CSUM_OK ? NET_RX_CSUM_OK : 0) |
                                       (flags & VNET_DELIVER_SUPER ? NET_RX_SUPER : 0));
}

/* Whether a boolean option is on: net_csum, checksum offload asked of the device
 * (docs/net.md, "Checksum offload on and off"); net_tso, segmentation offload (needs
 * net_csum: "Segmentation offload"); net_rxtso, receive segmentation offload (needs
 * net_csum: "Receive segmentation offload"). */
static bool option_on(const char *name)
{
    char buf[8];
    return drv_option(name, buf, sizeof(buf)) && buf[0] == 'o' && buf[1] == 'n';
}

/* net_tick, counting a run with due timers as activity. */
static void tick(uint64_t now)
{
    if (net_next_timer(stack) <= now)
        activity++;
    net_tick(stack, now);
}

/* ---- the stack thread (net_thread) ---- */
#define MAX_DEFERRED 8
static bool threaded;                 /* net_thread: stack_main runs the stack */
static uint32_t published;            /* the activity stack_main last announced */
static int sleepers;                  /* calls waiting in drv_wait_change on activity */
static struct {
    int token;                        /* srv_defer's token; 0: a free slot */
    uint32_t gen;                     /* answered once activity differs from it */
} deferred[MAX_DEFERRED];             /* MK: waitevents calls not answered yet */
static int ndeferred;

/* How long stack_main waits: until the next timer, and never longer than TCP_RTO_MIN.
 * That bound is what lets calls arm timers without telling the thread: a call arms only
 * timers at least TCP_RTO_MIN ahead (retransmission and persist, from the RTO, which is
 * never less; keep-alive; ARP's retry, 1 s; DHCP's, seconds), so the thread, whose wait
 * began before the call, wakes before they are due and then waits for them. The one
 * shorter timer, the delayed ACK (40 ms), is armed only by input, which this thread
 * runs. The price: while idle, the thread wakes 5 times a second. */
static uint64_t wait_ms(uint64_t next, uint64_t now)
{
    uint64_t until = next > now ? next - now : 1;
    return until < TCP_RTO_MIN ? until : TCP_RTO_MIN;
}

/* Tell the waiters that the activity changed (lock not held: srv_wake waits for the
 * serving thread, which may be waiting for the lock to begin a call). */
static void publish(uint32_t gen, int nsleepers, int nwaiting)
{
    if (gen == published)
        return;
    published = gen;
    if (nsleepers)
        drv_wake_all(&activity);
    if (nwaiting)
        srv_wake();                   /* MK: the serving thread answers the deferred calls */
}

/* The stack's own thread: due timers and received frames, then a wait for the device's
 * interrupt until the next timer (at most TCP_RTO_MIN: wait_ms). */
static void stack_main(void)
{
    drv_lock();
    for (;;) {
        uint64_t now = drv_now_ms();
        tick(now);
        vnet_poll(&nic, input_frame, NULL);
        uint64_t next = net_next_timer(stack);
        uint32_t gen = activity;
        int nsleepers = sleepers, nwaiting = ndeferred;
        drv_unlock();
        publish(gen, nsleepers, nwaiting);
        long irqs = drv_irq_wait(&nic.dev.pci, wait_ms(next, now));
        drv_lock();
        if (irqs == E_DEAD)
            break;
        if (irqs > 0)
            vnet_interrupt(&nic);
    }
    drv_unlock();
}

/* MK, the serving thread after every call and at srv_wake: answer each deferred
 * waitevents whose generation has passed (its caller gone: the slot is freed all the
 * same). */
static void answer_deferred(void)
{
    /* without the lock first (only this thread changes the slots): most calls find none due */
    uint32_t gen = __atomic_load_n(&activity, __ATOMIC_RELAXED);
    bool due = false;
    for (int i = 0; i < MAX_DEFERRED; i++)
        due |= deferred[i].token && deferred[i].gen != gen;
    if (!due)
        return;
    int due_tokens[MAX_DEFERRED], n = 0;
    drv_lock();
    uint64_t w[IPC_MRS] = {0, activity, net_sockets_in_use(stack)};
    for (int i = 0; i < MAX_DEFERRED; i++) {
        if (!deferred[i].token || deferred[i].gen == activity)
            continue;
        due_tokens[n++] = deferred[i].token;
        deferred[i].token = 0;
        ndeferred--;
    }
    drv_unlock();
    for (int i = 0; i < n; i++)       /* an answer may switch to its caller: lock free */
        srv_answer(due_tokens[i], w);
}

/* MK: keep waitevents' call until activity != gen. A client already waiting is replaced
 * (it cannot wait twice); when every slot is taken, the first slot's waiter is answered
 * now with the count as it is (a spurious wake: it asks again), so that no client can
 * make another wait for ever by filling the slots. */
static void defer_until_change(int token, uint32_t gen)
{
    int slot = -1;
    for (int i = 0; i < MAX_DEFERRED; i++) {
        if (deferred[i].token == token) {
            slot = i;
            break;
        }
        if (!deferred[i].token && slot < 0)
            slot = i;
    }
    if (slot < 0) {
        uint64_t w[IPC_MRS] = {0, activity, net_sockets_in_use(stack)};
        srv_answer(deferred[0].token, w);
        for (int i = 1; i < MAX_DEFERRED; i++)
            deferred[i - 1] = deferred[i];
        slot = MAX_DEFERRED - 1;
        deferred[slot].token = 0;
    }
    ndeferred += !deferred[slot].token;
    deferred[slot].token = token;
    deferred[slot].gen = gen;
}

static bool thread_wanted(void)
{
    char buf[8];
    return !(drv_option("net_thread", buf, sizeof(buf)) && buf[0] == 'o' && buf[1] == 'f');
}

static void pump(uint64_t timeout_ms, bool (*done)(int sd), int sd);
static bool dhcp_bound(int sd)
{
    (void)sd;
    return net_dhcp_state(stack) == DHCP_BOUND;
}

static int start(void)
{
    if (started != NOT_STARTED)
        return started;
    started = vnet_open(&nic, 0, (option_on("net_csum") ? VNET_TX_CSUM | VNET_RX_CSUM : 0) |
                                 (option_on("net_tso") ? VNET_TX_TSO : 0) |
                                 (option_on("net_rxtso") ? VNET_RX_TSO : 0));
    if (started)
        return started;
    stack = drv_mem_alloc(net_stack_size());
    if (!stack)
        return started = E_NOMEM;
    read_addresses();
    nif = (struct netif){.mtu = 1500, .send = send_frame, .ctx = &nic,
                         .offload = (nic.offload & VNET_TX_CSUM ? NETIF_TX_CSUM : 0) |
                                    (nic.offload & VNET_RX_CSUM ? NETIF_RX_CSUM : 0) |
                                    (nic.offload & VNET_TX_TSO ? NETIF_TX_TSO : 0) |
                                    (nic.offload & VNET_RX_TSO ? NETIF_RX_TSO : 0)};
    for (int i = 0; i < 6; i++)
        nif.mac[i] = nic.mac[i];
    uint64_t now = drv_now_ms();
    net_init(stack, &nif, my_ip, my_mask, my_gw, now, now ^ (uint64_t)nic.mac[5] << 40);
    threaded = thread_wanted() && drv_thread_start(stack_main) == 0;
    if (threaded)
        srv_set_wake(answer_deferred);
    if (use_dhcp) {
        net_dhcp_start(stack);
        pump(DHCP_START_WAIT_MS, dhcp_bound, 0);
    }
    return 0;
}

/* With the stack thread: wait (the lock released) until done(sd) or the deadline, looking
 * again at each change of the stack's activity. */
static void await_stack(uint64_t deadline, bool (*done)(int sd), int sd)
{
    while (!(done && done(sd))) {
        uint64_t now = drv_now_ms();
        if (now >= deadline)
            return;
        sleepers++;
        drv_wait_change(&activity, activity, deadline - now);
        sleepers--;
    }
}

/* Wait until done(sd) or timeout_ms have passed. With the stack thread, as it runs the
 * stack; without, by running it here: due timers, received frames, and in between a
 * wait for the device's interrupt (or the next timer). done is checked after the timers
 * too, so a call that waits for a timer's work (settle: the delayed ACK) returns before
 * it takes in frames that came meanwhile. */
static void pump(uint64_t timeout_ms, bool (*done)(int sd), int sd)
{
    uint64_t start_ms = drv_now_ms();
    uint64_t deadline = timeout_ms > UINT64_MAX - start_ms ? UINT64_MAX : start_ms + timeout_ms;
    if (threaded) {
        await_stack(deadline, done, sd);
        return;
    }
    for (;;) {
        uint64_t now = drv_now_ms();
        tick(now);
        if (done && done(sd))
            return;                   /* before more input: a benchmark's phases stay apart */
        vnet_poll(&nic, input_frame, NULL);
        if ((done && done(sd)) || now >= deadline)
            return;
        uint64_t next = net_next_timer(stack), until = next < deadline ? next : deadline;
        if (drv_irq_wait(&nic.dev.pci, until > now ? until - now : 1) == E_DEAD)
            return;
        vnet_interrupt(&nic);
    }
}

/* ---- P3's per-layer probes (servers/net/net_probe.h; docs/net.md) ----
 * Slot probe_first + layer counts the instructions of that layer's own work: at every
 * boundary the slot of the layer that was running stops and the next one's starts, so no
 * slot contains a nested layer. The slots are pcnt's repeated mode (one sample per
 * stretch of a layer's work; P3's filter drops a stretch an interrupt fell into); each
 * sample also holds the fixed cost of one switch, which `probes` measures. */
#define PROBE_DEPTH 16
#define PROBE_CALIBRATIONS 8
static int probe_first;               /* 0: probes off */
static enum net_layer probe_stack[PROBE_DEPTH];
static int probe_depth;

static int probe_top(void)
{
    if (probe_depth == 0)
        return -1;
    return (int)probe_stack[(probe_depth < PROBE_DEPTH ? probe_depth : PROBE_DEPTH) - 1];
}

static void probe_switch(int from, int to)
{
    if (from == to)
        return;
    if (from >= 0)
        drv_pcnt(PCNT_STOP, probe_first + from, 0);
    if (to >= 0)
        drv_pcnt(PCNT_START, probe_first + to, 0);
}

void net_probe_enter(enum net_layer layer)
{
    if (!probe_first)
        return;
    int below = probe_top();
    if (probe_depth < PROBE_DEPTH)
        probe_stack[probe_depth] = layer;
    if (++probe_depth <= PROBE_DEPTH)
        probe_switch(below, (int)layer);
}

void net_probe_leave(enum net_layer layer)
{
    if (!probe_first || probe_depth == 0)
        return;
    if (--probe_depth < PROBE_DEPTH)
        probe_switch((int)layer, probe_top());
}

/* Every page of the stack's memory written once, so that in MK (demand paging) no first
 * touch of an mbuf, a ring page or a device buffer falls into a measured stretch: P3
 * measured a warm stack. */
static void touch_pages(void *mem, size_t len)
{
    volatile uint8_t *p = mem;
    for (size_t off = 0; off < len; off += 4096)
        p[off] = p[off];
}

static void make_resident(void)
{
    touch_pages(stack, net_stack_size());
    touch_pages(nic.rx.bufs, (size_t)nic.rx.size * nic.rx.buf_size);
    touch_pages(nic.tx.bufs, (size_t)nic.tx.size * nic.tx.buf_size);
}

/* Probes on: the stack's memory resident, the slots in repeated mode, then PROBE_CALIBRATIONS empty stretches in the
 * NET_L_SOCK slot (their minimum is the fixed cost of a switch; the caller reads it from
 * the slot before measuring). The first slot, or E_INVAL when pcnt has too few slots. */
static long probes_on(void)
{
    int first = drv_pcnt_first_slot();
    if (first <= 0)
        return first < 0 ? first : E_INVAL;
    for (int l = 0; l < NET_LAYERS; l++)
        if (drv_pcnt(PCNT_REPEAT, first + l, 1) < 0)
            return E_INVAL;
    make_resident();
    probe_first = first;
    for (int i = 0; i < PROBE_CALIBRATIONS; i++) {
        net_probe_enter(NET_L_SOCK);
        net_probe_leave(NET_L_SOCK);
    }
    return first;
}

static void probes_off(void)
{
    for (int l = 0; probe_first && l < NET_LAYERS; l++)
        drv_pcnt(PCNT_REPEAT, probe_first + l, 0);
    probe_first = 0;
    probe_depth = 0;
}

static bool ping_done(int seq) { return net_ping_answered(stack, PING_ID, (uint16_t)seq); }
static bool writable(int sd) { return net_events(stack, sd) & (NET_EV_OUT | NET_EV_ERR | NET_EV_HUP); }
static bool readable(int sd) { return net_events(stack, sd) & (NET_EV_IN | NET_EV_ERR | NET_EV_HUP); }
static bool quiet(int sd) { return net_quiet(stack, sd); }

/* Every op begins with enter() and ends with leave(): the lock (see the top), and the
 * start of the device and the stack at the first call (E_NOENT from the op when that
 * failed). A call that arms a timer need not wake the stack thread (wait_ms). */
static bool enter(void)
{
    drv_lock();
    if (start() == 0)
        return false;
    drv_unlock();
    return true;
}

/* For an op that sends (and so arms timers and stamps RTT samples): with the stack
 * thread, whose last tick may be TCP_RTO_MIN old, the stack's clock is set to now. */
static void clock_for_send(void)
{
    if (threaded)
        net_clock(stack, drv_now_ms());
}

static long leave(void)
{
    drv_unlock();
    return 0;
}

/* A socket number from a message word: the stack's range check does the rest. */
static int sd_of(uint64_t w) { return w > 0x7fffffff ? -1 : (int)w; }
static uint64_t result(long r) { return (uint64_t)r; }

static uint64_t mac_word(const uint8_t mac[6])
{
    uint64_t w = 0;
    for (int i = 0; i < 6; i++)
        w = w << 8 | mac[i];
    return w;
}

/* The flags the configuration has besides the stack's state: CF_BRD (the address has its
 * broadcast: the boot's address and DHCP's do, as ifconfig's). */
static uint64_t cfg_flags = NET_CF_BRD;

long net_config(struct srv_call *call, uint64_t *ip, uint64_t *mask, uint64_t *gw, uint64_t *mac,
                uint64_t *flags)
{
    (void)call;
    if (enter())
        return E_NOENT;
    uint32_t a, m, g;
    net_address(stack, &a, &m, &g);   /* ip= and gw=, or what DHCP or setconfig gave */
    *ip = a;
    *mask = m;
    *gw = g;
    *mac = mac_word(nic.mac);
    *flags = (cfg_flags & NET_CF_BRD) | (net_is_down(stack) ? 0 : NET_CF_UP);
    return leave();
}

/* A netmask: ones, then zeros (0 included). */
static bool contiguous(uint32_t mask) { return (~mask & (~mask + 1)) == 0; }

/* setconfig's words, each checked (the op's comment in interfaces/net.idl): 0 or the
 * stack's error. */
static int check_config(uint64_t ip, uint64_t mask, uint64_t gw, uint64_t flags)
{
    if (ip > 0xffffffffu || mask > 0xffffffffu || gw > 0xffffffffu ||
        (flags & ~(uint64_t)(NET_CF_UP | NET_CF_BRD)) || !contiguous((uint32_t)mask))
        return -NET_EINVAL;
    if (!ip && (mask || gw || (flags & NET_CF_BRD)))
        return -NET_EINVAL;
    if (gw && (!(flags & NET_CF_UP) || gw == ip))
        return -NET_EINVAL;
    return gw && (gw & mask) != (ip & mask) ? -NET_ENETUNREACH : 0;
}

long net_setconfig(struct srv_call *call, uint64_t ip, uint64_t mask, uint64_t gw,
                   uint64_t flags, uint64_t *res)
{
    if (!srv_privileged(call))
        return E_PERM;                /* the interface is every task's: privileged only */
    if (enter())
        return E_NOENT;
    int err = check_config(ip, mask, gw, flags);
    if (!err) {
        net_set_address(stack, (uint32_t)ip, (uint32_t)mask, (uint32_t)gw);
        net_set_down(stack, !(flags & NET_CF_UP));
        cfg_flags = flags;
    }
    *res = result(err);
    return leave();
}

long net_neigh(struct srv_call *call, uint64_t slot, uint64_t *res, uint64_t *ip, uint64_t *mac)
{
    (void)call;
    if (enter())
        return E_NOENT;
    uint32_t a = 0;
    uint8_t m[6] = {0};
    *res = slot < NET_ARP_ENTRIES ? (uint64_t)net_neighbour(stack, (unsigned)slot, &a, m)
                                  : result(-NET_EINVAL);
    *ip = a;
    *mac = mac_word(m);
    return leave();
}

long net_echo(struct srv_call *call, uint64_t ip, uint64_t seq, uint64_t len, uint64_t timeout_ms,
              uint64_t *res, uint64_t *rtt_ms)
{
    (void)call;
    if (enter())
        return E_NOENT;
    clock_for_send();
    if (ip > 0xffffffffu || seq > 0xffff || len > NET_PING_MAX) {
        *res = result(-NET_EINVAL);
        return leave();
    }
    uint64_t t0 = drv_now_ms();
    long sent = net_ping(stack, (uint32_t)ip, PING_ID, (uint16_t)seq, (size_t)len);
    if (sent == 0)
        pump(timeout_ms, ping_done, (int)seq);
    *rtt_ms = drv_now_ms() - t0;
    *res = result(sent ? sent : ping_done((int)seq) ? 0 : -NET_ETIMEDOUT);
    return leave();
}

long net_open(struct srv_call *call, uint64_t type, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    *res = result(type > NET_SOCK_RAW ? -NET_EINVAL : net_socket(stack, (int)type));
    return leave();
}

long net_bindto(struct srv_call *call, uint64_t sd, uint64_t ip, uint64_t port, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    bool ok = ip <= 0xffffffffu && port <= 0xffff;
    *res = result(ok ? net_bind(stack, sd_of(sd), (uint32_t)ip, (uint16_t)port) : -NET_EINVAL);
    return leave();
}

long net_connectto(struct srv_call *call, uint64_t sd, uint64_t ip, uint64_t port,
                   uint64_t timeout_ms, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    clock_for_send();
    if (ip > 0xffffffffu || port > 0xffff) {
        *res = result(-NET_EINVAL);
        return leave();
    }
    long c = net_connect(stack, sd_of(sd), (uint32_t)ip, (uint16_t)port);
    if (c == -NET_EINPROGRESS) {
        pump(timeout_ms, writable, sd_of(sd));
        int err = net_error(stack, sd_of(sd));
        c = err ? -err : writable(sd_of(sd)) ? 0 : -NET_ETIMEDOUT;
    }
    *res = result(c);
    return leave();
}

/* Queue len bytes: waits for room until all is queued or timeout_ms passed (the UNIX
 * server's calls: 0). The stack's result: bytes queued, or its error when none were. */
static long send_all(int sd, const uint8_t *data, size_t len, uint64_t timeout_ms)
{
    size_t done = 0;
    long n = 0;
    uint64_t deadline = 0;
    bool last = false;
    while (done < len) {
        n = net_send(stack, sd, data + done, len - done);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n != -NET_EAGAIN || last)
            break;
        /* A full send ring: run the stack until there is room; past the deadline (the
         * UNIX server's calls: timeout 0) still one pass, whose ACKs may free the ring, and
         * one more try, as read does when nothing is there. The clock is read only here:
         * a write that fits costs no system call for it. */
        uint64_t now = drv_now_ms();
        if (!deadline)
            deadline = now + (timeout_ms > (1ull << 40) ? (1ull << 40) : timeout_ms);
        last = now >= deadline;
        pump(last ? 0 : deadline - now, writable, sd);
    }
    return done ? (long)done : n;
}

/* At most cap bytes into data, waiting up to timeout_ms for the first: the stack's result. */
static long recv_some(int sd, void *data, size_t cap, uint64_t timeout_ms)
{
    long n = net_recv(stack, sd, data, cap);
    if (n == -NET_EAGAIN) {
        pump(timeout_ms, readable, sd);
        n = net_recv(stack, sd, data, cap);
    }
    return n;
}

/* One datagram, at most cap bytes into data, waiting up to timeout_ms for it: the stack's
 * result, and the source in *ip, *port. */
static long recv_dgram(int sd, void *data, size_t cap, uint64_t timeout_ms, uint64_t *ip,
                       uint64_t *port)
{
    uint32_t from = 0;
    uint16_t from_port = 0;
    long n = net_recvfrom(stack, sd, data, cap, &from, &from_port);
    if (n == -NET_EAGAIN) {
        pump(timeout_ms, readable, sd);
        n = net_recvfrom(stack, sd, data, cap, &from, &from_port);
    }
    *ip = from;
    *port = from_port;
    return n;
}

/* MSG_PEEK's look, at most cap bytes into data: the stack's result, the source in *ip,
 * *port. */
static long peek_at(int sd, uint64_t off, void *data, size_t cap, uint64_t *ip, uint64_t *port)
{
    uint32_t from = 0;
    uint16_t from_port = 0;
    long n = net_peek(stack, sd, (size_t)off, data, cap, &from, &from_port);
    *ip = from;
    *port = from_port;
    return n;
}

long net_write(struct srv_call *call, uint64_t sd, uint64_t timeout_ms, const void *data,
               size_t data_len, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    clock_for_send();
    *res = result(send_all(sd_of(sd), data, data_len, timeout_ms));
    return leave();
}

long net_read(struct srv_call *call, uint64_t sd, uint64_t timeout_ms, uint64_t *res, void *data,
              size_t data_cap, size_t *data_len)
{
    (void)call;
    if (enter())
        return E_NOENT;
    long n = recv_some(sd_of(sd), data, data_cap, timeout_ms);
    *data_len = n > 0 ? (size_t)n : 0;
    *res = result(n);
    return leave();
}

/* ---- the data channel (MK; docs/net.md, "The data channel") ----
 * A client's window mapped here: stream data moves through it instead of the IPC buffer,
 * so the message is words only. The client may change the memory at any time: the
 * lengths come in message words (registers, copied once), each checked against the
 * channel's size here, and the bytes are read once (the stack copies them into its send
 * ring) or only written, so no value read from the channel steers the server. */
#define CHANNELS 8
#define CHANNELS_PER_TASK 4           /* no client task takes every slot */
#define CHANNEL_MAX (256u * 1024)
static struct {
    int client;                       /* the calling thread it belongs to; 0: a free slot */
    int task;                         /* that thread's task */
    uint8_t *mem;
    size_t size;
} channels[CHANNELS];

/* The slot of the calling thread's channel, or -1 (client ids are never 0). */
static int channel_of(int client)
{
    for (int i = 0; i < CHANNELS; i++)
        if (channels[i].client == client)
            return i;
    return -1;
}

/* The caller's channel's size when cap is more, else cap; 0 without a channel. */
static size_t channel_cap(int c, uint64_t cap)
{
    return c < 0 ? 0 : cap < channels[c].size ? (size_t)cap : channels[c].size;
}

/* A free slot for a channel of `task`, or -1 when none is free or the task holds
 * CHANNELS_PER_TASK already. */
static int channel_slot(int task)
{
    int slot = -1, held = 0;
    for (int i = CHANNELS - 1; i >= 0; i--) {
        slot = channels[i].client ? slot : i;
        held += channels[i].client && channels[i].task == task;
    }
    return held < CHANNELS_PER_TASK ? slot : -1;
}

/* Free the slots whose thread has ended (nothing tells us when a client ends: we ask the
 * kernel, only when a new channel finds no room), unmapping their windows. Thread ids
 * carry a generation, so an ended thread's id is not a live thread's. */
static void reclaim_channels(void)
{
    for (int i = 0; i < CHANNELS; i++) {
        if (!channels[i].client || drv_thread_task(channels[i].client) >= 0)
            continue;
        drv_unmap_caller(channels[i].mem, channels[i].size);
        channels[i].client = 0;
    }
}

/* A channel for thread client (waiting for our reply) of size bytes of its window at
 * `window`: 0, -NET_EINVAL or -NET_ENOMEM as op channel says. */
static long open_channel(int client, uint64_t window, uint64_t size)
{
    if (size < 4096 || size > CHANNEL_MAX || size % 4096 || channel_of(client) >= 0)
        return -NET_EINVAL;
    long task = drv_thread_task(client);
    if (task < 0)
        return -NET_EINVAL;
    int slot = channel_slot((int)task);
    if (slot < 0) {
        reclaim_channels();
        slot = channel_slot((int)task);
    }
    if (slot < 0)
        return -NET_ENOMEM;
    uint8_t *mem = drv_map_caller(client, window, (size_t)size);
    if (!mem)
        return -NET_EINVAL;
    channels[slot].client = client;
    channels[slot].task = (int)task;
    channels[slot].mem = mem;
    channels[slot].size = (size_t)size;
    return 0;
}

long net_channel(struct srv_call *call, uint64_t window, uint64_t size, uint64_t task,
                 uint64_t *res, uint64_t *tid)
{
    *tid = 0;
    if (enter())
        return E_NOENT;
    long r = open_channel(call->client, window, size);
    *res = result(r);
    if (r == 0) {
        long t = task <= 0x7fffffff ? srv_words_thread(&net_iface, (int)task) : E_INVAL;
        *tid = t > 0 ? (uint64_t)t : 0;
    }
    return leave();
}

long net_chwrite(struct srv_call *call, uint64_t sd, uint64_t len, uint64_t *res)
{
    if (enter())
        return E_NOENT;
    clock_for_send();
    int c = channel_of(call->client);
    *res = result(c < 0 || len > channels[c].size ? -NET_EINVAL
                                                  : send_all(sd_of(sd), channels[c].mem, len, 0));
    return leave();
}

long net_chread(struct srv_call *call, uint64_t sd, uint64_t cap, uint64_t *res)
{
    if (enter())
        return E_NOENT;
    int c = channel_of(call->client);
    *res = result(c < 0 ? -NET_EINVAL
                        : recv_some(sd_of(sd), channels[c].mem, channel_cap(c, cap), 0));
    return leave();
}

long net_chsendto(struct srv_call *call, uint64_t sd, uint64_t ip, uint64_t port, uint64_t len,
                  uint64_t *res)
{
    if (enter())
        return E_NOENT;
    clock_for_send();
    int c = channel_of(call->client);
    bool ok = c >= 0 && len <= channels[c].size && ip <= 0xffffffffu && port <= 0xffff;
    *res = result(ok ? net_sendto(stack, sd_of(sd), channels[c].mem, (size_t)len,
                                  (uint32_t)ip, (uint16_t)port)
                     : -NET_EINVAL);
    return leave();
}

long net_chrecvfrom(struct srv_call *call, uint64_t sd, uint64_t cap, uint64_t *res,
                    uint64_t *ip, uint64_t *port)
{
    *ip = *port = 0;
    if (enter())
        return E_NOENT;
    int c = channel_of(call->client);
    *res = result(c < 0 ? -NET_EINVAL
                        : recv_dgram(sd_of(sd), channels[c].mem, channel_cap(c, cap), 0, ip, port));
    return leave();
}

long net_chpeek(struct srv_call *call, uint64_t sd, uint64_t off, uint64_t cap, uint64_t *res,
                uint64_t *ip, uint64_t *port)
{
    *ip = *port = 0;
    if (enter())
        return E_NOENT;
    int c = channel_of(call->client);
    *res = result(c < 0 ? -NET_EINVAL
                        : peek_at(sd_of(sd), off, channels[c].mem, channel_cap(c, cap), ip, port));
    return leave();
}

long net_senddgram(struct srv_call *call, uint64_t sd, uint64_t ip, uint64_t port,
                   const void *data, size_t data_len, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    clock_for_send();
    bool ok = ip <= 0xffffffffu && port <= 0xffff;
    *res = result(ok ? net_sendto(stack, sd_of(sd), data, data_len, (uint32_t)ip, (uint16_t)port)
                   : -NET_EINVAL);
    return leave();
}

long net_recvdgram(struct srv_call *call, uint64_t sd, uint64_t timeout_ms, uint64_t *res,
                   uint64_t *ip, uint64_t *port, void *data, size_t data_cap, size_t *data_len)
{
    (void)call;
    if (enter())
        return E_NOENT;
    long n = recv_dgram(sd_of(sd), data, data_cap, timeout_ms, ip, port);
    *data_len = n > 0 ? (size_t)n : 0;
    *res = result(n);
    return leave();
}

long net_release(struct srv_call *call, uint64_t sd, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    clock_for_send();
    *res = result(net_close(stack, sd_of(sd)));
    return leave();
}

long net_run(struct srv_call *call, uint64_t ms)
{
    (void)call;
    if (enter())
        return E_NOENT;
    pump(ms, NULL, 0);
    return leave();
}

long net_counters(struct srv_call *call, uint64_t *rx, uint64_t *tx, uint64_t *irqs, uint64_t *hdrpred,
                  uint64_t *tx_csum, uint64_t *rx_csum, uint64_t *tx_tso)
{
    (void)call;
    if (enter())
        return E_NOENT;
    const struct net_stats *st = net_stats(stack);
    *rx = nic.stats.rx_frames;
    *tx = nic.stats.tx_frames;
    *irqs = nic.stats.irqs;
    *hdrpred = st->tcp_hdrpred_ack + st->tcp_hdrpred_data;
    *tx_csum = nic.stats.tx_csum;
    *rx_csum = nic.stats.rx_csum_ok;
    *tx_tso = nic.stats.tx_tso;
    return leave();
}

long net_probes(struct srv_call *call, uint64_t on, uint64_t *res)
{
    if (!srv_privileged(call))
        return E_PERM;                /* the probes time every client's calls */
    if (enter())
        return E_NOENT;
    if (on) {
        probes_off();
        *res = result(probes_on());
    } else {
        probes_off();
        *res = 0;
    }
    return leave();
}

long net_settle(struct srv_call *call, uint64_t sd, uint64_t timeout_ms, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    pump(timeout_ms, quiet, sd_of(sd));
    *res = result(quiet(sd_of(sd)) ? 0 : -NET_ETIMEDOUT);
    return leave();
}

/* ---- the UNIX server's sockets (docs/net.md, "Sockets of Linux programs") ----
 * None of these waits: the UNIX server parks a Linux call that must wait and re-runs it
 * when op pulse reports activity, so this server never holds the UNIX server up. */
long net_listenon(struct srv_call *call, uint64_t sd, uint64_t backlog, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    int b = backlog > 0x7fffffff ? 0x7fffffff : (int)backlog;
    *res = result(net_listen(stack, sd_of(sd), b));
    return leave();
}

long net_acceptfrom(struct srv_call *call, uint64_t sd, uint64_t *res, uint64_t *ip,
                    uint64_t *port)
{
    (void)call;
    if (enter())
        return E_NOENT;
    uint32_t a = 0;
    uint16_t p = 0;
    *res = result(net_accept(stack, sd_of(sd), &a, &p));
    *ip = a;
    *port = p;
    return leave();
}

long net_readiness(struct srv_call *call, uint64_t sd, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    *res = net_events(stack, sd_of(sd));
    return leave();
}

long net_sockerror(struct srv_call *call, uint64_t sd, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    *res = result(net_error(stack, sd_of(sd)));
    return leave();
}

long net_names(struct srv_call *call, uint64_t sd, uint64_t *lres, uint64_t *lip,
               uint64_t *lport, uint64_t *pres, uint64_t *pip, uint64_t *pport)
{
    (void)call;
    if (enter())
        return E_NOENT;
    uint32_t a = 0, b = 0;
    uint16_t p = 0, q = 0;
    *lres = result(net_sockname(stack, sd_of(sd), &a, &p));
    *pres = result(net_peername(stack, sd_of(sd), &b, &q));
    *lip = a;
    *lport = p;
    *pip = b;
    *pport = q;
    return leave();
}

long net_shutwr(struct srv_call *call, uint64_t sd, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    clock_for_send();
    *res = result(net_shutdown_write(stack, sd_of(sd)));
    return leave();
}

long net_option(struct srv_call *call, uint64_t sd, uint64_t opt, uint64_t value, uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    bool ok = opt <= 0x7fffffff && value <= 1;
    *res = result(ok ? net_setopt(stack, sd_of(sd), (int)opt, (int)value) : -NET_EINVAL);
    return leave();
}

long net_connectnb(struct srv_call *call, uint64_t sd, uint64_t ip, uint64_t port,
                   uint64_t *res)
{
    (void)call;
    if (enter())
        return E_NOENT;
    clock_for_send();
    bool ok = ip <= 0xffffffffu && port <= 0xffff;
    *res = result(ok ? net_connect(stack, sd_of(sd), (uint32_t)ip, (uint16_t)port)
                     : -NET_EINVAL);
    return leave();
}

long net_pulse(struct srv_call *call, uint64_t *gen, uint64_t *socks)
{
    (void)call;
    if (enter())
        return E_NOENT;
    pump(0, NULL, 0);
    *gen = activity;
    *socks = net_sockets_in_use(stack);
    return leave();
}

long net_waitevents(struct srv_call *call, uint64_t since, uint64_t *gen, uint64_t *socks)
{
    if (enter())
        return E_NOENT;
    if (!threaded) {
        pump(0, NULL, 0);             /* as pulse: the caller comes back in 10 ms */
    } else if ((uint32_t)since == activity) {
        int token = srv_defer(call);
        if (token != 0) {             /* < 0: a thread that cannot defer (the words thread) */
            if (token > 0)
                defer_until_change(token, (uint32_t)since);
            leave();
            return token > 0 ? SRV_DEFERRED : token;
        }
        sleepers++;                   /* IK: the caller's thread sleeps until a change */
        drv_wait_change(&activity, (uint32_t)since, UINT64_MAX);
        sleepers--;
    }
    *gen = activity;
    *socks = net_sockets_in_use(stack);
    return leave();
}

long net_recvpeek(struct srv_call *call, uint64_t sd, uint64_t off, uint64_t *res, uint64_t *ip,
                  uint64_t *port, void *data, size_t data_cap, size_t *data_len)
{
    (void)call;
    if (enter())
        return E_NOENT;
    long n = peek_at(sd_of(sd), off, data, data_cap, ip, port);
    *data_len = n > 0 ? (size_t)n : 0;
    *res = result(n);
    return leave();
}

long net_pending(struct srv_call *call, uint64_t sd, uint64_t *res, uint64_t *inq, uint64_t *outq)
{
    (void)call;
    if (enter())
        return E_NOENT;
    uint32_t in = 0, out = 0;
    *res = result(net_queued(stack, sd_of(sd), &in, &out));
    *inq = in;
    *outq = out;
    return leave();
}

long net_ifstats(struct srv_call *call, uint64_t *rx_frames, uint64_t *rx_bytes,
                 uint64_t *tx_frames, uint64_t *tx_bytes, uint64_t *rx_dropped,
                 uint64_t *tx_dropped, uint64_t *rx_super)
{
    (void)call;
    if (enter())
        return E_NOENT;
    const struct net_stats *st = net_stats(stack);
    *rx_frames = st->rx_frames;
    *rx_bytes = st->rx_bytes;
    *tx_frames = st->tx_frames;
    *tx_bytes = st->tx_bytes;
    *rx_dropped = nic.stats.rx_bad + st->mbuf_exhausted;
    *tx_dropped = nic.stats.tx_full;
    *rx_super = nic.stats.rx_tso;
    return leave();
}
