/*
 * cache_dloop BYTES PASSES [STRIDE [WINDOW]]: data-cache check for the cache model
 * (tools/cacheplugin). Maps BYTES of fresh memory and touches each page once, so page
 * faults happen before the measurement window, then reads every line once so the window
 * starts from the same cache state whatever the page faults' frame zeroing left behind
 * (it depends on physical placement); then, inside window WINDOW (default 1),
 * reads one byte every STRIDE bytes (default 32), PASSES times.
 *
 * The measured code is assembly so the user-side instruction count is exact:
 *     1 + PASSES * (4 + 4 * BYTES / STRIDE) + 4
 * (save begin's result; per pass 2 set-up + 4 per load + 2 loop; 4 to end the window).
 * Result line: {"type":"result","bench":"cachemodel","test":"dloop",...}.
 */
#include <stdint.h>
#include <stdlib.h>

#include <ondol/result.h>
#include <ondol/sys.h>

#include "cache_window.h"

static long sweep(const volatile uint8_t *base, uint64_t loads, uint64_t stride,
                  uint64_t passes, uint64_t window, long *end_rc)
{
    long begin_rc, rc_end;
    __asm__ volatile(
        WINDOW_OPEN
        "1:\n\t"
        "mov %[base], %%rdi\n\t"
        "mov %[loads], %%rcx\n\t"
        "2:\n\t"
        "movb (%%rdi), %%al\n\t"
        "add %[stride], %%rdi\n\t"
        "dec %%rcx\n\t"
        "jnz 2b\n\t"
        "dec %[passes]\n\t"
        "jnz 1b\n\t"
        WINDOW_CLOSE
        : [passes] "+r"(passes), WINDOW_OUTPUTS
        : [base] "r"(base), [loads] "r"(loads), [stride] "r"(stride), WINDOW_INPUTS
        : WINDOW_CLOBBERS);
    *end_rc = rc_end;
    return begin_rc;
}

int main(int argc, char **argv)
{
    uint64_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 4096;
    uint64_t passes = argc > 2 ? strtoull(argv[2], NULL, 0) : 8;
    uint64_t stride = argc > 3 ? strtoull(argv[3], NULL, 0) : 32;
    uint64_t window = argc > 4 ? strtoull(argv[4], NULL, 0) : 1;
    if (bytes < stride || stride == 0 || passes == 0) {
        result_printf("{\"type\":\"result\",\"bench\":\"cachemodel\",\"test\":\"dloop\","
                      "\"error\":\"bad arguments\"}");
        return 2;
    }
    long addr = sys_vm_map(bytes, PROT_READ | PROT_WRITE);
    if (addr < 0) {
        result_printf("{\"type\":\"result\",\"bench\":\"cachemodel\",\"test\":\"dloop\","
                      "\"error\":\"vm_map %ld\"}", addr);
        return 1;
    }
    volatile uint8_t *buf = (volatile uint8_t *)addr;
    for (uint64_t off = 0; off < bytes; off += 4096)
        buf[off] = 0;
    for (uint64_t off = 0; off < bytes; off += stride)
        (void)buf[off];
    long end_rc;
    long rc = sweep(buf, bytes / stride, stride, passes, window, &end_rc);
    result_printf("{\"type\":\"result\",\"bench\":\"cachemodel\",\"test\":\"dloop\","
                  "\"bytes\":%lu,\"passes\":%lu,\"stride\":%lu,\"window\":%lu,"
                  "\"user_insns\":%lu,\"measure_rc\":%ld,\"measure_end_rc\":%ld}",
                  (unsigned long)bytes, (unsigned long)passes, (unsigned long)stride,
                  (unsigned long)window,
                  (unsigned long)(1 + passes * (4 + 4 * (bytes / stride)) + 4), rc, end_rc);
    return rc < 0 ? 1 : 0;
}
