/*
 * mallocbench: P2's measurements of ondol's allocator on ondol (`./ondol bench alloc`,
 * docs/alloc.md). Linked with build/user/libondolmalloc.a (lib/malloc/malloc.mk), so every
 * malloc here is ondol's, in the lock kind the kernel option malloc_lock= names.
 *   mallocbench sizes              per-size costs split by layer (sizes.c)
 *   mallocbench contend THREADS N  call latency with threads contending (contend.c)
 *   mallocbench workloads [BENCH]  P2's Table 2: calls per program (workloads.c); rows
 *                                  under bench BENCH (default alloc; alloc-cache)
 * Every mode ends with an "end" result line carrying its exit status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/result.h>
#include <ondol/sys.h>

#include "mallocbench.h"
#include "ondol_malloc.h"

const char *lock_kind;
int probes_on;
const char *bench_name = "alloc";

uint64_t bench_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

void bench_fail(const char *what)
{
    printf("mallocbench: %s\n", what);
    result_printf("{\"type\":\"end\",\"bench\":\"%s\",\"status\":1}", bench_name);
    exit(1);
}

static int run_mode(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "sizes"))
        return run_sizes();
    if (!strcmp(mode, "contend") && argc == 4)
        return run_contend(atoi(argv[2]), atoi(argv[3]));
    if (!strcmp(mode, "workloads") && argc <= 3) {
        if (argc == 3)
            bench_name = argv[2];
        return run_workloads();
    }
    printf("usage: mallocbench sizes | contend THREADS N | workloads [BENCH]\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct ondol_malloc_info info;
    ondol_malloc_info(&info);        /* reads the options; allocates nothing */
    lock_kind = info.lock;
    struct pcnt_events ev;
    probes_on = SC4(SYS_PCNT, PCNT_GET_EVENT, (long)&ev, 0, 0) == 0 && ev.probes;
    int status = run_mode(argc, argv);
    result_printf("{\"type\":\"end\",\"bench\":\"%s\",\"status\":%d}", bench_name, status);
    return status;
}
