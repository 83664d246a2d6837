/*
 * Interprocessor interrupts (ipi.c, docs/smp.md): fixed vectors sent to one CPU or to every
 * other started CPU, a call-function IPI (run a function on other CPUs and wait for it,
 * bounded), and stop (used by power off and panic so no CPU keeps running).
 */
#ifndef IPI_H
#define IPI_H
#include "cpu.h"
#include "types.h"

/* Vectors 0xf0..0xfe are IPIs (priority class 15, above every device vector). */
#define VEC_IPI_RESCHED 0xf0   /* wake the CPU; from user mode it runs its exit checks */
#define VEC_IPI_CALL    0xf1   /* run the function posted in the CPU's call box */
#define VEC_IPI_STOP    0xf2   /* halt for good, interrupts off */
#define VEC_IPI_TLB     0xf3   /* drop the translations posted in the CPU's TLB box */
#define VEC_IPI_FIRST   0xf0
#define VEC_IPI_LAST    0xfe

typedef void (*ipi_fn)(void *arg);

/* Sends `vector` to cpus[cpu] (a started CPU; others are ignored), without waiting. */
void ipi_send(int cpu, u8 vector);
/* Sends `vector` to every started CPU except this one. */
void ipi_send_others(u8 vector);
/* Runs fn(arg) on cpus[cpu] in its interrupt handler (interrupts off there, the kernel lock
 * not taken) and waits for it to return, at most timeout_us microseconds (TSC). Returns 0,
 * E_INVAL for a CPU that is not started or is this one, E_TIMEOUT when it did not answer
 * (fn may still run later: pass data that outlives the call). Callers are serialised. */
int ipi_call(int cpu, ipi_fn fn, void *arg, u64 timeout_us);
/* As ipi_call, for a holder of the kernel lock: waits by spinning (no interrupt handler
 * may run under the lock), answering the requests posted to this CPU meanwhile, at most
 * 5 s. The other CPU answers even while it waits for the lock (ipi_poll). */
int ipi_call_locked(int cpu, ipi_fn fn, void *arg);
/* ipi_call_locked on every started CPU of cpumask but this one at once: posted to all,
 * then waited for together (one deadline), so the wait is about one round trip however
 * many CPUs (one at a time, a grace period on 64 vCPUs of a loaded host took tens of
 * seconds under the kernel lock). 0, or E_TIMEOUT when one did not answer. */
int ipi_call_locked_many(cpumask_t cpumask, ipi_fn fn, void *arg);
/* Runs fn(arg) on every started CPU: posted to the others, then run here, then waits for
 * all of them (bounded as above). Returns 0 or E_TIMEOUT. */
int ipi_call_all(ipi_fn fn, void *arg, u64 timeout_us);
/* Stops every other started CPU and waits (bounded, 100 ms) until they report it; from
 * then on interrupts here are only acknowledged. Returns how many stopped. */
unsigned ipi_stop_others(void);
/* trap(): handles an IPI vector (or the spurious vector) without the kernel lock; false for
 * any other vector. */
bool ipi_interrupt(u64 vector);
/* True once a stop has begun: trap() then only acknowledges interrupts. */
bool ipi_stopping(void);
/* Waits until *word == value or the TSC passes `deadline`: spins briefly, then halts until
 * an interrupt (so under icount the vCPU it waits for gets to run). True if it matched. */
bool ipi_wait_word(volatile u32 *word, u32 value, u64 deadline);
/* TLB shootdown, by a holder of the kernel lock or of an address space's lock (several
 * CPUs may initiate at once: each has its own box on every receiver): every CPU in
 * cpumask but this one that has CR3 `cr3` loaded drops the translations of the n pages
 * va[0..n) (TLB_PAGES; va stays the caller's, read until the call returns), all of that
 * address space's (TLB_ALL), or loads the kernel's tables instead (TLB_LEAVE: the address
 * space is being destroyed); waits until each has done so (spinning, answering the
 * requests posted to this CPU meanwhile, at most 5 s: E_TIMEOUT). */
enum { TLB_PAGES, TLB_ALL, TLB_LEAVE };
int tlb_shootdown(cpumask_t cpumask, u64 cr3, const u64 *va, u32 n, unsigned kind);
/* Runs the call and shootdown requests posted to this CPU (the kernel lock's wait). */
void ipi_poll(void);
/* Counters for tests (smpbench=ipi): unknown and spurious vectors each CPU saw; one
 * cache line a CPU, as each writes only its own. */
struct ipi_stats {
    u32 unknown, spurious;
} __attribute__((aligned(64)));
extern struct ipi_stats ipi_stats[];
#endif
