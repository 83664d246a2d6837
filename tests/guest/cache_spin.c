/*
 * cache_spin N [WINDOW]: inside window WINDOW (default 1) counts down from N in a
 * register. No system calls, no memory: the cache model must charge the loop to this
 * task and nothing to other tasks (the kernel gets only the window's own entry and exit
 * and any timer interrupt).
 *
 * User-side instructions in the window, exactly: 1 + 2 * N + 4.
 * Result line: {"type":"result","bench":"cachemodel","test":"spin",...}.
 */
#include <stdint.h>
#include <stdlib.h>

#include <ondol/result.h>
#include <ondol/sys.h>

#include "cache_window.h"

static long spin(uint64_t n, uint64_t window, long *end_rc)
{
    long begin_rc, rc_end;
    __asm__ volatile(
        WINDOW_OPEN
        "1:\n\t"
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        WINDOW_CLOSE
        : [n] "+r"(n), WINDOW_OUTPUTS
        : WINDOW_INPUTS
        : WINDOW_CLOBBERS);
    *end_rc = rc_end;
    return begin_rc;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
    uint64_t window = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    if (n == 0)
        return 2;
    long end_rc;
    long rc = spin(n, window, &end_rc);
    result_printf("{\"type\":\"result\",\"bench\":\"cachemodel\",\"test\":\"spin\","
                  "\"iterations\":%lu,\"window\":%lu,\"user_insns\":%lu,\"measure_rc\":%ld,"
                  "\"measure_end_rc\":%ld}",
                  (unsigned long)n, (unsigned long)window, (unsigned long)(1 + 2 * n + 4), rc,
                  end_rc);
    return rc < 0 ? 1 : 0;
}
