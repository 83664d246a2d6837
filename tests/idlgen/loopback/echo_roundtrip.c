/* Host round trip of the generated echo stubs through the loopback srv_call, with the
 * real server source (servers/echo/echo.c). Prints "FAIL ..." per wrong answer, "ok". */
#include <stdio.h>
#include <string.h>
#include "echo_client.h"
#include "echo_server.h"

const struct srv_iface *loopback_server = &echo_iface;
static int failures;

static void expect(const char *what, long got, long want)
{
    if (got != want) {
        printf("FAIL %s: got %ld, want %ld\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    struct srv_conn c = {0};
    uint64_t out = 0, sum = 0;
    size_t len = 0;
    char back[16];
    expect("ping", echo_call_ping(&c, 41, &out), 0);
    expect("ping value", (long)out, 42);
    expect("add", echo_call_add(&c, 5, &out), 0);
    expect("add again", echo_call_add(&c, 7, &out) ? -1 : (long)out, 12);
    expect("add overflow", echo_call_add(&c, 1ull << 40, &out), E_INVAL);
    expect("reverse", echo_call_reverse(&c, "abc", 3, back, sizeof(back), &len, &sum), 0);
    expect("reverse len", (long)len, 3);
    expect("reverse text", memcmp(back, "cba", 3), 0);
    expect("reverse sum", (long)sum, 'a' + 'b' + 'c');
    expect("reverse small", echo_call_reverse(&c, "abc", 3, back, 2, &len, &sum), E_2BIG);
    expect("reverse empty", echo_call_reverse(&c, "abc", 0, back, 2, &len, &sum), E_INVAL);
    expect("whoami", echo_call_whoami(&c, &out) ? -1 : (long)out, LOOPBACK_CLIENT);
    struct ipc_msg m = {{SRV_LABEL(ECHO_IFACE, 77, 0)}};
    expect("unknown op", srv_call(&c, &m, 0), E_NOSYS);
    struct ipc_msg other = {{SRV_LABEL(ECHO_IFACE + 1, ECHO_PING, 0)}};
    expect("other interface", srv_call(&c, &other, 0), E_NOSYS);
    if (!failures)
        printf("ok\n");
    return failures != 0;
}
