/* Timing helpers (ondol/timing.h). */
#include <stdlib.h>
#include <ondol/timing.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void sort_u64(uint64_t *v, size_t n) { qsort(v, n, sizeof(*v), cmp_u64); }
