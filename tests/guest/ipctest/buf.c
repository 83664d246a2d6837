/* ipctest buf: long messages through the UTCB buffers between two threads and between two
 * tasks (`bufpeer`): page-crossing buffers up to 4096 bytes, bad pointers, E_2BIG. */
#include "ipctest.h"

static uint8_t pat(uint64_t seed, uint64_t i)
{
    return (uint8_t)((i * 131u + seed * 71u + (i >> 8) * 29u) ^ (seed << 3));
}

static void fill(uint8_t *b, uint64_t len, uint64_t seed)
{
    for (uint64_t i = 0; i < len; i++)
        b[i] = pat(seed, i);
}

/* Does [b, b+len) hold the pattern and the rest of [area, area+size) hold 0xee? */
static int area_ok(const uint8_t *area, uint64_t size, const uint8_t *b, uint64_t len, uint64_t seed)
{
    for (uint64_t i = 0; i < size; i++) {
        const uint8_t *q = area + i;
        uint8_t want = q >= b && q < b + len ? pat(seed, (uint64_t)(q - b)) : 0xee;
        if (*q != want)
            return 0;
    }
    return 1;
}

static struct ipc_utcb utcb;

static int buf_send(int dest, int step, uint8_t *b, uint64_t len, uint64_t seed)
{
    fill(b, len, seed);
    utcb.send_buf = b;
    utcb.send_len = len;
    struct ipc_msg m = {{(uint64_t)step, len, seed}};
    return (int)ipc_send_flags(dest, &m, IPC_FOREVER, IPC_SEND_BUF);
}

static int bad_send(int dest, const void *b, uint64_t len)
{
    utcb.send_buf = b;
    utcb.send_len = len;
    struct ipc_msg m = {{0xbad}};
    return (int)ipc_send_flags(dest, &m, IPC_FOREVER, IPC_SEND_BUF);
}

struct same_task {
    int from;
    long r;
    uint64_t len;
    int ok;
};

static int same_task_recv_fn(void *p)
{
    struct same_task *a = p;
    struct ipc_utcb u;            /* the UTCB is per thread */
    uint8_t *area = map_pages(3);
    if (!area || ipc_set_utcb(&u) != 0)
        return 1;
    memset(area, 0xee, 3 * PAGE);
    u.recv_buf = area + PAGE - 333;
    u.recv_cap = IPC_BUF_MAX;
    u.recv_len = 1;
    struct ipc_msg m = {{0}};
    a->r = ipc_recv_flags(a->from, &m, IPC_FOREVER, IPC_RECV_BUF);
    a->len = u.recv_len;
    a->ok = m.w[0] == 77 && area_ok(area, 3 * PAGE, u.recv_buf, m.w[1], m.w[2]);
    return 0;
}

void test_buf(void)
{
    int me = thread_self();
    long r;
    EXPECT(ipc_set_utcb(&utcb), 0, "register UTCB");
    uint8_t *s = map_pages(3), *rb = map_pages(3);
    if (!s || !rb)
        return;

    /* two threads of this task: 4096 bytes, both buffers across a page boundary */
    struct thread t;
    struct same_task st = {me, 0, 0, 0};
    start(&t, same_task_recv_fn, &st, PRIO_INHERIT);
    EXPECT(buf_send(t.tid, 77, s + PAGE - 2000, IPC_BUF_MAX, 5), 0, "same-task send");
    join(&t);
    CHECK(st.r == me && st.len == IPC_BUF_MAX && st.ok, "same-task long message: r=%ld len=%llu ok=%d",
          st.r, (unsigned long long)st.len, st.ok);

    char s1[16];
    const char *argv[] = {"ipctest", "bufpeer", tidstr(s1, me)};
    long task = sys_spawn("ipctest", argv, 3, 0);
    CHECK(task > 0, "spawn bufpeer: %ld", task);
    int child = tid_of_task((int)task, 100);
    CHECK(child > 0, "no thread for task %ld", task);

    /* 1-5: sizes and alignments, page-crossing on both sides */
    EXPECT(buf_send(child, 1, s + PAGE - 123, 4096, 1), 0, "step 1");
    EXPECT(buf_send(child, 2, s + PAGE - 1, 1, 2), 0, "step 2");
    EXPECT(buf_send(child, 3, s + PAGE - 50, 100, 3), 0, "step 3");
    EXPECT(buf_send(child, 4, s + 1, 4095, 4), 0, "step 4");
    EXPECT(buf_send(child, 5, s + PAGE - 7, 4096, 5), 0, "step 5");
    /* 6: no buffer sent to a receiver that accepts one; 7: a buffer it does not accept */
    struct ipc_msg m = {{6}};
    EXPECT(ipc_send(child, &m, IPC_FOREVER), 0, "step 6");
    EXPECT(buf_send(child, 7, s, 500, 7), 0, "step 7");

    /* 8: bad send buffers fail in the sender and leave the waiting receiver alone */
    CHECK(wait_state(child, TS_BLOCKED, 300), "bufpeer never blocked for step 8");
    EXPECT(bad_send(child, (void *)0x1000, 100), E_FAULT, "unmapped send_buf");
    EXPECT(bad_send(child, (void *)0xffffffff80100000ull, 100), E_FAULT, "kernel send_buf");
    EXPECT(bad_send(child, (void *)(USER_SPACE_END - 100), 200), E_FAULT, "send_buf across the end of user space");
    uint8_t *half = map_pages(2);
    CHECK(sys_vm_unmap(half + PAGE, PAGE) == 0, "unmap");
    EXPECT(bad_send(child, half + PAGE - 100, 200), E_FAULT, "send_buf running into an unmapped page");
    EXPECT(bad_send(child, s, IPC_BUF_MAX + 1), E_2BIG, "send_len 4097");
    EXPECT(ipc_set_utcb((void *)0x1000), E_FAULT, "unmapped UTCB");
    EXPECT(ipc_set_utcb((void *)0xffffffff80100000ull), E_FAULT, "kernel UTCB");
    EXPECT(ipc_set_utcb(NULL), 0, "unregister UTCB");
    EXPECT(bad_send(child, s, 10), E_FAULT, "SEND_BUF without a UTCB");
    EXPECT(ipc_set_utcb(&utcb), 0, "register UTCB again");
    CHECK(state_of(child) == TS_BLOCKED, "the receiver was disturbed by failed sends");
    EXPECT(buf_send(child, 8, s + 10, 300, 8), 0, "step 8");

    /* 9 is the receiver's own bad-buffer checks; 10: too long for the receiver */
    EXPECT(buf_send(child, 10, s + 100, 200, 10), E_2BIG, "step 10, 200 bytes to a 100-byte buffer: the sender");

    /* 11: call with buffers both ways, the reply buffer across a page boundary */
    memset(rb, 0xee, 3 * PAGE);
    fill(s + PAGE - 1500, 3000, 11);
    utcb.send_buf = s + PAGE - 1500;
    utcb.send_len = 3000;
    utcb.recv_buf = rb + PAGE - 700;
    utcb.recv_cap = IPC_BUF_MAX;
    utcb.recv_len = 0xdead;
    m = (struct ipc_msg){{11, 3000, 11}};
    r = ipc_call_flags(child, &m, IPC_FOREVER, IPC_SEND_BUF | IPC_RECV_BUF);
    CHECK(r == child && m.w[0] == 0x111 && utcb.recv_len == 2500 &&
          area_ok(rb, 3 * PAGE, utcb.recv_buf, 2500, 12),
          "step 11, call with buffers: r=%ld w0=%llx recv_len=%llu", r, (unsigned long long)m.w[0],
          (unsigned long long)utcb.recv_len);

    /* 12: a reply longer than the caller's buffer: E_2BIG to the caller */
    memset(rb, 0xee, 3 * PAGE);
    utcb.recv_cap = 100;
    m = (struct ipc_msg){{12}};
    r = ipc_call_flags(child, &m, IPC_FOREVER, IPC_RECV_BUF);
    CHECK(r == E_2BIG && area_ok(rb, 3 * PAGE, rb, 0, 0),
          "step 12, 200-byte reply into 100 bytes: r=%ld", r);
    m = (struct ipc_msg){{13}};
    EXPECT(ipc_send(child, &m, IPC_FOREVER), 0, "step 13");

    int status = -1;
    {
        long w = sys_task_wait((int)task, &status);
        CHECK(w == task && status == 0, "bufpeer: task_wait %ld, status %d", w, status);
    }
}

int bufpeer(int p)
{
    struct ipc_utcb u;
    struct ipc_msg m = {{0}};
    long r;
    EXPECT(ipc_set_utcb(&u), 0, "register UTCB");
    uint8_t *area = map_pages(3), *sb = map_pages(2), *ro;
    if (!area || !sb)
        return 1;

    /* receive step `step` into [buf, buf+cap) of the 3-page area */
#define RECV(step, buf, cap, flags)                                                  \
    do {                                                                             \
        memset(area, 0xee, 3 * PAGE);                                                \
        u.recv_buf = (buf);                                                          \
        u.recv_cap = (cap);                                                          \
        u.recv_len = 12345;                                                          \
        r = ipc_recv_flags(p, &m, IPC_FOREVER, (flags));                             \
        CHECK(r == p && m.w[0] == (uint64_t)(step), "step %d: r=%ld w0=%llu", (step), r,       \
              (unsigned long long)m.w[0]);                                           \
    } while (0)

    static const uint64_t offs[] = {PAGE - 1000, PAGE - 1000, PAGE - 1000, PAGE - 1000, PAGE};
    for (int step = 1; step <= 5; step++) {
        RECV(step, area + offs[step - 1], IPC_BUF_MAX, IPC_RECV_BUF);
        CHECK(u.recv_len == m.w[1] && area_ok(area, 3 * PAGE, u.recv_buf, m.w[1], m.w[2]),
              "step %d: recv_len %llu of %llu, contents %s", step, (unsigned long long)u.recv_len,
              (unsigned long long)m.w[1],
              area_ok(area, 3 * PAGE, u.recv_buf, m.w[1], m.w[2]) ? "ok" : "wrong");
    }
    RECV(6, area + 100, IPC_BUF_MAX, IPC_RECV_BUF);
    CHECK(u.recv_len == 0, "step 6: no buffer sent, recv_len %llu", (unsigned long long)u.recv_len);
    RECV(7, area + 100, IPC_BUF_MAX, 0);
    CHECK(u.recv_len == 12345 && area_ok(area, 3 * PAGE, area, 0, 0),
          "step 7: buffer not accepted but written (recv_len %llu)", (unsigned long long)u.recv_len);
    RECV(8, area + PAGE - 1000, IPC_BUF_MAX, IPC_RECV_BUF);
    CHECK(u.recv_len == 300 && area_ok(area, 3 * PAGE, u.recv_buf, 300, 8),
          "step 8: recv_len %llu", (unsigned long long)u.recv_len);

    /* 9: bad receive buffers fail at once, without blocking or taking a message */
    static const struct { uint64_t addr, cap; long want; } bad[] = {
        {0x1000, 100, E_FAULT},
        {0xffffffff80100000ull, 100, E_FAULT},
        {USER_SPACE_END - 100, 200, E_FAULT},
        {0, IPC_BUF_MAX + 1, E_2BIG},     /* addr 0 is replaced by a good buffer below */
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        u.recv_buf = bad[i].addr ? (void *)(uintptr_t)bad[i].addr : area;
        u.recv_cap = bad[i].cap;
        r = ipc_recv_flags(p, &m, IPC_FOREVER, IPC_RECV_BUF);
        CHECK(r == bad[i].want, "bad receive buffer %d: %ld (expected %ld)", i, r, bad[i].want);
    }
    ro = (uint8_t *)(uintptr_t)sys_vm_map(PAGE, PROT_READ);
    u.recv_buf = ro;
    u.recv_cap = 100;
    EXPECT(ipc_recv_flags(p, &m, IPC_FOREVER, IPC_RECV_BUF), E_FAULT, "read-only receive buffer");
    CHECK(ipc_set_utcb(NULL) == 0, "unregister UTCB");
    EXPECT(ipc_recv_flags(p, &m, IPC_FOREVER, IPC_RECV_BUF), E_FAULT, "RECV_BUF without a UTCB");
    CHECK(ipc_set_utcb((struct ipc_utcb *)ro) == E_FAULT, "read-only UTCB accepted");
    CHECK(ipc_set_utcb(&u) == 0, "register UTCB again");

    /* 10: 200 bytes into a 100-byte buffer: E_2BIG, nothing written */
    memset(area, 0xee, 3 * PAGE);
    u.recv_buf = area + PAGE - 30;
    u.recv_cap = 100;
    r = ipc_recv_flags(p, &m, IPC_FOREVER, IPC_RECV_BUF);
    CHECK(r == E_2BIG && area_ok(area, 3 * PAGE, area, 0, 0), "step 10: r=%ld", r);

    /* 11: a call with a buffer; reply with one and wait for step 12 in the same call */
    RECV(11, area + PAGE - 1000, IPC_BUF_MAX, IPC_RECV_BUF);
    CHECK(u.recv_len == 3000 && area_ok(area, 3 * PAGE, u.recv_buf, 3000, 11),
          "step 11: recv_len %llu", (unsigned long long)u.recv_len);
    fill(sb + PAGE - 1234, 2500, 12);
    u.send_buf = sb + PAGE - 1234;
    u.send_len = 2500;
    m = (struct ipc_msg){{0x111}};
    r = ipc_raw(SYS_IPC_REPLY_RECV, p, p, IPC_FOREVER | IPC_SEND_BUF | IPC_RECV_BUF, &m);
    CHECK(r == p && m.w[0] == 12, "step 12 after the reply: r=%ld w0=%llu", r, (unsigned long long)m.w[0]);
    /* 12: reply with 200 bytes to a caller that takes 100: its problem, not ours */
    u.send_len = 200;
    r = ipc_raw(SYS_IPC_REPLY_RECV, p, p, IPC_FOREVER | IPC_SEND_BUF | IPC_RECV_BUF, &m);
    CHECK(r == p && m.w[0] == 13, "step 13 after the oversized reply: r=%ld w0=%llu", r,
          (unsigned long long)m.w[0]);
#undef RECV
    return fails;
}
