/*
 * cache_syscall N [WINDOW]: inside window WINDOW (default 1) makes N null system calls.
 * Almost everything executed is kernel code, so the cache model must charge the bulk of
 * the instructions and misses to the kernel domain, and only the loop to this task.
 *
 * User-side instructions in the window, exactly: 1 + 4 * N + 4.
 * Result line: {"type":"result","bench":"cachemodel","test":"syscall",...}.
 */
#include <stdint.h>
#include <stdlib.h>

#include <ondol/result.h>
#include <ondol/sys.h>

#include "cache_window.h"

static long null_calls(uint64_t n, uint64_t window, long *end_rc)
{
    long begin_rc, rc_end;
    __asm__ volatile(
        WINDOW_OPEN
        "1:\n\t"
        "mov %[null], %%eax\n\t"
        "syscall\n\t"
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        WINDOW_CLOSE
        : [n] "+r"(n), WINDOW_OUTPUTS
        : [null] "i"(SYS_NULL), WINDOW_INPUTS
        : WINDOW_CLOBBERS);
    *end_rc = rc_end;
    return begin_rc;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000;
    uint64_t window = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    if (n == 0)
        return 2;
    long end_rc;
    long rc = null_calls(n, window, &end_rc);
    result_printf("{\"type\":\"result\",\"bench\":\"cachemodel\",\"test\":\"syscall\","
                  "\"calls\":%lu,\"window\":%lu,\"user_insns\":%lu,\"measure_rc\":%ld,"
                  "\"measure_end_rc\":%ld}",
                  (unsigned long)n, (unsigned long)window, (unsigned long)(1 + 4 * n + 4), rc,
                  end_rc);
    return rc < 0 ? 1 : 0;
}
