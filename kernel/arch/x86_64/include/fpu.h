/* x87/SSE register state. The kernel never touches these registers (-mgeneral-regs-only),
 * so a user thread's state stays live in the CPU until another thread uses them: lazy
 * switching with CR0.TS (thread_fpu_switch in thread.h, the #NM trap in trap.c). */
#ifndef FPU_H
#define FPU_H
#include "types.h"

/* The state as saved by fxsave: 512 bytes, 16-byte aligned. */
struct fpu_state {
    u8 bytes[512];
} __attribute__((aligned(16)));

static inline void fpu_save(struct fpu_state *s) { __asm__ volatile("fxsave %0" : "=m"(*s)); }
static inline void fpu_restore(const struct fpu_state *s) { __asm__ volatile("fxrstor %0" : : "m"(*s)); }

/* CR0.TS: while set, the first x87/SSE instruction traps with #NM (vector 7). */
#define CR0_TS (1u << 3)
static inline void fpu_trap_on(void)
{
    u64 cr0;
    __asm__ volatile("mov %%cr0, %0" : "=r"(cr0));
    __asm__ volatile("mov %0, %%cr0" : : "r"(cr0 | CR0_TS) : "memory");
}
static inline void fpu_trap_off(void) { __asm__ volatile("clts" ::: "memory"); }

void fpu_init_template(void);            /* once at boot: the state every thread starts in */
void fpu_init(struct fpu_state *s);      /* copy that initial state into s */
#endif
