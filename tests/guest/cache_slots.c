/*
 * cache_slots A B N M [WINDOW]: inside window WINDOW (default 1) runs a stretch of pcnt
 * user slot A around a loop of N iterations, then one of slot B around M iterations (one
 * function for both, so the stretches differ only in the loop). With markers on the
 * kernel announces each stretch to the cache model as the bucket of its slot
 * (docs/measuring.md), so under icount:
 *   bucket A - bucket B = pcnt A - pcnt B = 2 * (N - M) instructions, and
 *   bucket X - pcnt X is the same fixed count for both slots (where the marker sits
 *   against the TSC read).
 * Result line: {"type":"result","bench":"cachemodel","test":"slots",...} with both
 * slots' samples (sum, count, dropped).
 */
#include <stdint.h>
#include <stdlib.h>

#include <ondol/result.h>
#include <ondol/sys.h>

static void stretch(long slot, uint64_t n)
{
    SC4(SYS_PCNT, PCNT_START, slot, 0, 0);
    __asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
    SC4(SYS_PCNT, PCNT_STOP, slot, 0, 0);
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    long a = strtol(argv[1], NULL, 0), b = strtol(argv[2], NULL, 0);
    uint64_t n = strtoull(argv[3], NULL, 0), m = strtoull(argv[4], NULL, 0);
    uint64_t window = argc > 5 ? strtoull(argv[5], NULL, 0) : 1;
    if (a <= 0 || b <= 0 || a == b || a >= 64 || b >= 64 || n == 0 || m == 0)
        return 2;
    long rc = SC4(SYS_PCNT, PCNT_REPEAT, a, 1, 0);
    rc = rc < 0 ? rc : SC4(SYS_PCNT, PCNT_REPEAT, b, 1, 0);
    long begin = SC2(SYS_MEASURE, MEASURE_WINDOW_BEGIN, (long)window);
    stretch(a, n);
    stretch(b, m);
    long end = SC2(SYS_MEASURE, MEASURE_WINDOW_END, (long)window);
    static struct pcnt_slot_info info[64];
    long got = SC4(SYS_PCNT, PCNT_DUMP, (long)info, (a > b ? a : b) + 1, 0);
    if (rc < 0 || got <= a || got <= b)
        return 1;
    result_printf("{\"type\":\"result\",\"bench\":\"cachemodel\",\"test\":\"slots\","
                  "\"window\":%lu,\"measure_rc\":%ld,\"measure_end_rc\":%ld,"
                  "\"a\":%ld,\"b\":%ld,\"n\":%lu,\"m\":%lu,"
                  "\"sum_a\":%lu,\"count_a\":%lu,\"dropped_a\":%lu,"
                  "\"sum_b\":%lu,\"count_b\":%lu,\"dropped_b\":%lu}",
                  (unsigned long)window, begin, end, a, b, (unsigned long)n, (unsigned long)m,
                  (unsigned long)info[a].sum, (unsigned long)info[a].count,
                  (unsigned long)info[a].dropped, (unsigned long)info[b].sum,
                  (unsigned long)info[b].count, (unsigned long)info[b].dropped);
    return 0;
}
