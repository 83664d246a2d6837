/*
 * echocli: the client of the echo server (interfaces/echo.idl, docs/servers.md). One
 * binary for both placements: the boot option echo=mk|ik decides who answers.
 *   echocli check     every op and every error case; prints one "echocli CASE ..." line
 *                     per case (the host compares the MK and IK boots line by line),
 *                     "FAIL ..." for a wrong answer, and "echocli check ok" at the end
 *   echocli bench N   N round trips of a register-only call (ping) and of a call with a
 *                     64-byte buffer each way (reverse); result rows for ./ondol bench rpc
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ondol/result.h>
#include <ondol/timing.h>
#include "echo_client.h"

#define KERNEL_ADDR 0xffff800000000000ull

static int failures;

static void expect(const char *what, long got, long want)
{
    printf("echocli %s r=%ld\n", what, got);
    if (got != want) {
        printf("FAIL %s: got %ld, want %ld\n", what, got, want);
        failures++;
    }
}

static void check_words(struct srv_conn *c)
{
    uint64_t out = 0, tid = 0;
    expect("ping", echo_call_ping(c, 41, &out), 0);
    expect("ping-value", (long)out, 42);
    expect("add-5", echo_call_add(c, 5, &out), 0);
    expect("add-5-total", (long)out, 5);
    expect("add-7-total", echo_call_add(c, 7, &out) ? -1 : (long)out, 12);
    expect("add-overflow", echo_call_add(c, 1ull << 33, &out), E_INVAL);
    expect("whoami", echo_call_whoami(c, &tid), 0);
    expect("whoami-is-self", (long)tid == sys_self(NULL), 1);
}

static void check_buffers(struct srv_conn *c)
{
    static char big[IPC_BUF_MAX + 8], back[IPC_BUF_MAX + 8];
    const char *text = "hello, server";
    size_t len = 0;
    uint64_t sum = 0, want_sum = 0;
    for (const char *p = text; *p; p++)
        want_sum += (uint8_t)*p;
    expect("reverse", echo_call_reverse(c, text, strlen(text), back, sizeof(back) - 8, &len, &sum), 0);
    back[len] = 0;
    printf("echocli reverse-text \"%s\" len=%zu\n", back, len);
    expect("reverse-text-ok", strcmp(back, "revres ,olleh") == 0, 1);
    expect("reverse-sum", (long)sum, (long)want_sum);
    for (int i = 0; i < IPC_BUF_MAX; i++)
        big[i] = (char)('a' + i % 26);
    expect("reverse-4096", echo_call_reverse(c, big, IPC_BUF_MAX, back, IPC_BUF_MAX, &len, &sum), 0);
    expect("reverse-4096-ends", back[0] == big[IPC_BUF_MAX - 1] && back[IPC_BUF_MAX - 1] == 'a', 1);
    expect("reverse-empty", echo_call_reverse(c, text, 0, back, 64, &len, &sum), E_INVAL);
    expect("reverse-small-reply", echo_call_reverse(c, text, strlen(text), back, 4, &len, &sum), E_2BIG);
    expect("reverse-oversize", echo_call_reverse(c, big, IPC_BUF_MAX + 1, back, IPC_BUF_MAX, &len, &sum),
           E_2BIG);
    expect("reverse-bad-text", echo_call_reverse(c, (void *)KERNEL_ADDR, 8, back, 64, &len, &sum), E_FAULT);
    expect("reverse-unmapped-text", echo_call_reverse(c, (void *)0x10, 8, back, 64, &len, &sum), E_FAULT);
    expect("reverse-readonly-reply",
           echo_call_reverse(c, text, 4, (void *)(uintptr_t)&check_buffers, 64, &len, &sum), E_FAULT);
}

/* Calls no stub makes: an unknown op and a label for another interface. */
static void check_bad_calls(struct srv_conn *c)
{
    struct ipc_msg m = {{SRV_LABEL(ECHO_IFACE, 99, 0)}};
    expect("bad-op", srv_call(c, &m, 0), E_NOSYS);
    struct ipc_msg other = {{SRV_LABEL(ECHO_IFACE + 1, ECHO_PING, 0)}};
    expect("bad-interface", srv_call(c, &other, 0), E_NOSYS);
    expect("lookup-unknown", sys_srv_lookup(999), E_NOENT);
    expect("lookup-huge", sys_srv_lookup(~0u), E_NOENT);
    uint64_t out = 0;
    expect("ping-after-errors", echo_call_ping(c, 1, &out) ? -1 : (long)out, 2);
}

static int check(struct srv_conn *c)
{
    check_words(c);
    check_buffers(c);
    check_bad_calls(c);
    if (failures)
        return 1;
    printf("echocli check ok\n");
    return 0;
}

static void report(const char *test, const char *placement, uint64_t *t, int n)
{
    sort_u64(t, (size_t)n);
    result_printf("{\"type\":\"result\",\"bench\":\"rpc\",\"test\":\"%s\",\"placement\":\"%s\","
                  "\"unit\":\"tsc\",\"median\":%llu,\"min\":%llu,\"max\":%llu,\"n\":%d}",
                  test, placement, (unsigned long long)t[n / 2], (unsigned long long)t[0],
                  (unsigned long long)t[n - 1], n);
    printf("echocli bench %s %s: median %llu min %llu max %llu n %d\n", test, placement,
           (unsigned long long)t[n / 2], (unsigned long long)t[0], (unsigned long long)t[n - 1], n);
}

static int bench(struct srv_conn *c, int n)
{
    char placement[8] = "mk", text[64], back[64];
    sys_kopt("echo", placement, sizeof(placement));
    memset(text, 'x', sizeof(text));
    uint64_t *t = malloc(sizeof(uint64_t) * (size_t)n), out, sum;
    size_t len;
    for (int i = 0; i < n + 100; i++) {         /* the first 100 warm up */
        uint64_t t0 = rdtsc();
        long r = echo_call_ping(c, (uint64_t)i, &out);
        uint64_t dt = rdtsc() - t0;
        if (r || out != (uint64_t)i + 1)
            return printf("FAIL bench ping %d: r=%ld\n", i, r), 1;
        if (i >= 100)
            t[i - 100] = dt;
    }
    report("ping", placement, t, n);
    for (int i = 0; i < n + 100; i++) {
        uint64_t t0 = rdtsc();
        long r = echo_call_reverse(c, text, sizeof(text), back, sizeof(back), &len, &sum);
        uint64_t dt = rdtsc() - t0;
        if (r || len != sizeof(text))
            return printf("FAIL bench reverse %d: r=%ld\n", i, r), 1;
        if (i >= 100)
            t[i - 100] = dt;
    }
    report("reverse64", placement, t, n);
    result_printf("{\"type\":\"end\",\"bench\":\"rpc\",\"status\":0}");
    return 0;
}

int main(int argc, char **argv)
{
    struct srv_conn c;
    long r = srv_connect(&c, ECHO_IFACE);
    if (r < 0) {
        printf("FAIL echocli: cannot connect to echo: %ld%s\n", r,
               r == E_NOENT ? " (the server is not placed: boot with echo=mk or echo=ik)" : "");
        return 1;
    }
    if (argc > 2 && !strcmp(argv[1], "bench"))
        return bench(&c, atoi(argv[2]) > 10 ? atoi(argv[2]) : 10);
    if (argc > 1 && !strcmp(argv[1], "check"))
        return check(&c);
    printf("usage: echocli check | echocli bench N\n");
    return 2;
}
