/* mallocbench's parts (bench/mallocbench/): P2's measurements of ondol's allocator on ondol
 * (docs/alloc.md, `./ondol bench alloc`). Each part writes its own result rows. */
#ifndef MALLOCBENCH_H
#define MALLOCBENCH_H

#include <stdint.h>

extern const char *lock_kind;     /* the allocator's lock in force (ondol_malloc_info) */
extern int probes_on;             /* the kernel's pcnt probes are on (pcnt stat) */
extern const char *bench_name;    /* the "bench" of the rows: alloc, or as given */

/* xorshift64*: deterministic inputs; *state must not be 0. */
uint64_t bench_random(uint64_t *state);
/* Reports what failed on the console and ends the program with status 1. */
__attribute__((noreturn)) void bench_fail(const char *what);

int run_sizes(void);                        /* sizes.c */
int run_contend(int threads, int n);        /* contend.c */
int run_workloads(void);                    /* workloads.c */

#endif
