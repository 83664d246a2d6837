/* Timing helpers for benchmarks: the time-stamp counter and sorting samples for medians.
 * Under QEMU icount the TSC advances once per guest instruction; report it as
 * "instructions (icount)" there and "TSC ticks" otherwise (docs/measuring.md). */
#ifndef ONDOL_TIMING_H
#define ONDOL_TIMING_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* Sort n samples in ascending order (median: v[n / 2]). */
void sort_u64(uint64_t *v, size_t n);

#endif
