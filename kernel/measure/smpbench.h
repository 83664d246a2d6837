/* SMP tests and the coherence model's validation workloads (smpbench.c, docs/smp.md). */
#ifndef SMPBENCH_H
#define SMPBENCH_H
enum { SMPBENCH_NONE, SMPBENCH_IPI, SMPBENCH_PRIVATE, SMPBENCH_SHARED, SMPBENCH_PINGPONG,
       SMPBENCH_LOCKCHECK, SMPBENCH_KFAULT };
/* Option smpbench: runs the chosen test or workload on every started CPU, writes its
 * result record on COM2 and a summary on the console, then powers off. */
__attribute__((noreturn)) void smpbench_run(int mode);
#endif
