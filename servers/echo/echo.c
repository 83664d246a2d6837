/*
 * The echo/counter server (interfaces/echo.idl, docs/servers.md): the smallest server that
 * uses every part of the runtime. One source, built as the user task echosrv (MK) and into
 * the kernel (IK); the boot option echo=mk|ik picks which one serves. It includes only the
 * server runtime and its generated header, and does not know where it runs.
 */
#include <ondol/srv.h>
#include "echo_server.h"

#define COUNTER_LIMIT (1ull << 32)

static uint64_t counter;        /* survives across calls and clients */

long echo_ping(struct srv_call *call, uint64_t value, uint64_t *reply)
{
    (void)call;
    *reply = value + 1;
    return 0;
}

long echo_add(struct srv_call *call, uint64_t delta, uint64_t *total)
{
    (void)call;
    if (delta > COUNTER_LIMIT - counter)
        return E_INVAL;
    counter += delta;
    *total = counter;
    return 0;
}

long echo_reverse(struct srv_call *call, const void *text, size_t text_len, void *reversed,
                  size_t reversed_cap, size_t *reversed_len, uint64_t *sum)
{
    (void)call;
    if (text_len == 0)
        return E_INVAL;
    if (text_len > reversed_cap)
        return E_2BIG;
    const uint8_t *in = text;
    uint8_t *out = reversed;
    uint64_t total = 0;
    for (size_t i = 0; i < text_len; i++) {
        out[i] = in[text_len - 1 - i];
        total += in[i];
    }
    *reversed_len = text_len;
    *sum = total;
    return 0;
}

long echo_whoami(struct srv_call *call, uint64_t *tid)
{
    *tid = (uint64_t)srv_client(call);
    return 0;
}
