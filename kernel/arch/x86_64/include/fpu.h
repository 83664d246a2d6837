/* x87/SSE register state. The kernel never touches these registers (-mgeneral-regs-only),
 * so a user thread's state stays live in the CPU until a switch to another user thread
 * saves it (eager switching: fpu_save + fpu_restore on every such switch). */
#ifndef FPU_H
#define FPU_H
#include "types.h"

/* The state as saved by fxsave: 512 bytes, 16-byte aligned. */
struct fpu_state {
    u8 bytes[512];
} __attribute__((aligned(16)));

static inline void fpu_save(struct fpu_state *s) { __asm__ volatile("fxsave %0" : "=m"(*s)); }
static inline void fpu_restore(const struct fpu_state *s) { __asm__ volatile("fxrstor %0" : : "m"(*s)); }

void fpu_init_template(void);            /* once at boot: the state every thread starts in */
void fpu_init(struct fpu_state *s);      /* copy that initial state into s */
#endif
