/*
 * nullbench [N]: the cost of the cheapest system call (SYS_NULL), counter read just before
 * and just after. Writes one result row on COM2 (`./ondol bench null`): under QEMU icount
 * the TSC counts guest instructions, otherwise it is TSC ticks; the host labels the unit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <ondol/result.h>
#include <ondol/sys.h>
#include <ondol/timing.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    if (n < 10)
        n = 10;
    uint64_t *t = malloc(sizeof(uint64_t) * (size_t)n);
    uint64_t overhead = ~0ull;
    for (int i = 0; i < 1000; i++) {            /* warm-up, and the cost of rdtsc itself */
        uint64_t a = rdtsc(), b = rdtsc();
        overhead = b - a < overhead ? b - a : overhead;
        sys_null();
    }
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        sys_null();
        t[i] = rdtsc() - t0;
        if (i % (n / 10) == 0)
            result_printf("{\"type\":\"progress\",\"bench\":\"null\",\"done\":%d,\"total\":%d}", i, n);
    }
    sort_u64(t, (size_t)n);
    result_printf("{\"type\":\"result\",\"bench\":\"null\",\"test\":\"syscall\",\"unit\":\"tsc\","
                  "\"median\":%llu,\"min\":%llu,\"max\":%llu,\"n\":%d,\"timer_overhead\":%llu}",
                  (unsigned long long)t[n / 2], (unsigned long long)t[0], (unsigned long long)t[n - 1], n,
                  (unsigned long long)overhead);
    result_printf("{\"type\":\"end\",\"bench\":\"null\",\"status\":0}");
    printf("nullbench: median %llu min %llu max %llu n %d (TSC; minus %llu for rdtsc)\n",
           (unsigned long long)t[n / 2], (unsigned long long)t[0], (unsigned long long)t[n - 1], n,
           (unsigned long long)overhead);
    return 0;
}
