/*
 * cache_iloop small|large PASSES [WINDOW]: instruction-cache check for the cache model
 * (tools/cacheplugin). Inside window WINDOW (default 1) runs a straight line of one-byte
 * NOPs PASSES times: 2 KiB ("small", inside any L1 I) or 16 KiB ("large", twice the
 * Pentium Pro's 8 KiB L1 I, half the modern preset's 32 KiB).
 *
 * The NOPs start on a 64-byte boundary (a jump skips the alignment padding), so they
 * fill exactly NOPS / line-size cache lines.
 *
 * User-side instructions in the window, exactly: 2 + PASSES * (NOPS + 2) + 4.
 * Result line: {"type":"result","bench":"cachemodel","test":"iloop",...}.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/result.h>
#include <ondol/sys.h>

#include "cache_window.h"

#define SMALL_NOPS 2048
#define LARGE_NOPS 16384
#define STR_(x) #x
#define STR(x) STR_(x)

/* One measured run of N nops per pass; N is a literal so the assembler can repeat it. */
#define ILOOP(name, nops)                                                            \
    static long name(uint64_t passes, uint64_t window, long *end_rc)                 \
    {                                                                                \
        long begin_rc, rc_end;                                                       \
        __asm__ volatile(WINDOW_OPEN                                                 \
                         "jmp 1f\n\t"                                                \
                         ".balign 64\n\t"                                            \
                         "1:\n\t"                                                    \
                         ".rept " STR(nops) "\n\tnop\n\t.endr\n\t"                   \
                         "dec %[passes]\n\t"                                         \
                         "jnz 1b\n\t"                                                \
                         WINDOW_CLOSE                                                \
                         : [passes] "+r"(passes), WINDOW_OUTPUTS                     \
                         : WINDOW_INPUTS                                             \
                         : WINDOW_CLOBBERS);                                         \
        *end_rc = rc_end;                                                            \
        return begin_rc;                                                             \
    }

ILOOP(iloop_small, SMALL_NOPS)
ILOOP(iloop_large, LARGE_NOPS)

int main(int argc, char **argv)
{
    int large = argc > 1 && strcmp(argv[1], "large") == 0;
    uint64_t passes = argc > 2 ? strtoull(argv[2], NULL, 0) : 8;
    uint64_t window = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
    uint64_t nops = large ? LARGE_NOPS : SMALL_NOPS;
    if (passes == 0)
        return 2;
    long end_rc;
    long rc = large ? iloop_large(passes, window, &end_rc) : iloop_small(passes, window, &end_rc);
    result_printf("{\"type\":\"result\",\"bench\":\"cachemodel\",\"test\":\"iloop\","
                  "\"size\":\"%s\",\"nops\":%lu,\"passes\":%lu,\"window\":%lu,"
                  "\"user_insns\":%lu,\"measure_rc\":%ld,\"measure_end_rc\":%ld}",
                  large ? "large" : "small", (unsigned long)nops, (unsigned long)passes,
                  (unsigned long)window, (unsigned long)(2 + passes * (nops + 2) + 4), rc,
                  end_rc);
    return rc < 0 ? 1 : 0;
}
