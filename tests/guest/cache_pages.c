/*
 * cache_pages NPAGES PASSES [WINDOW]: TLB check for the cache model (tools/cacheplugin).
 * Maps NPAGES fresh 4 KiB pages and touches each once (faults happen before the window);
 * then, inside window WINDOW (default 1), reads one byte from each page, PASSES times.
 * With NPAGES within the DTLB's reach the pages miss at most once; with more pages than
 * a set can hold they miss on every pass.
 *
 * User-side instructions in the window, exactly: 1 + PASSES * (4 + 4 * NPAGES) + 4.
 * Result line: {"type":"result","bench":"cachemodel","test":"pages",...}.
 */
#include <stdint.h>
#include <stdlib.h>

#include <ondol/result.h>
#include <ondol/sys.h>

#include "cache_window.h"

#define PAGE 4096u

static long touch_pages(const volatile uint8_t *base, uint64_t npages, uint64_t passes,
                        uint64_t window, long *end_rc)
{
    long begin_rc, rc_end;
    __asm__ volatile(
        WINDOW_OPEN
        "1:\n\t"
        "mov %[base], %%rdi\n\t"
        "mov %[npages], %%rcx\n\t"
        "2:\n\t"
        "movb (%%rdi), %%al\n\t"
        "add %[page], %%rdi\n\t"
        "dec %%rcx\n\t"
        "jnz 2b\n\t"
        "dec %[passes]\n\t"
        "jnz 1b\n\t"
        WINDOW_CLOSE
        : [passes] "+r"(passes), WINDOW_OUTPUTS
        : [base] "r"(base), [npages] "r"(npages), [page] "i"(PAGE), WINDOW_INPUTS
        : WINDOW_CLOBBERS);
    *end_rc = rc_end;
    return begin_rc;
}

int main(int argc, char **argv)
{
    uint64_t npages = argc > 1 ? strtoull(argv[1], NULL, 0) : 16;
    uint64_t passes = argc > 2 ? strtoull(argv[2], NULL, 0) : 4;
    uint64_t window = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
    if (npages == 0 || passes == 0)
        return 2;
    long addr = sys_vm_map(npages * PAGE, PROT_READ | PROT_WRITE);
    if (addr < 0) {
        result_printf("{\"type\":\"result\",\"bench\":\"cachemodel\",\"test\":\"pages\","
                      "\"error\":\"vm_map %ld\"}", addr);
        return 1;
    }
    volatile uint8_t *buf = (volatile uint8_t *)addr;
    for (uint64_t i = 0; i < npages; i++)
        buf[i * PAGE] = 0;
    long end_rc;
    long rc = touch_pages(buf, npages, passes, window, &end_rc);
    result_printf("{\"type\":\"result\",\"bench\":\"cachemodel\",\"test\":\"pages\","
                  "\"npages\":%lu,\"passes\":%lu,\"window\":%lu,\"user_insns\":%lu,"
                  "\"measure_rc\":%ld,\"measure_end_rc\":%ld}",
                  (unsigned long)npages, (unsigned long)passes, (unsigned long)window,
                  (unsigned long)(1 + passes * (4 + 4 * npages) + 4), rc, end_rc);
    return rc < 0 ? 1 : 0;
}
