/* The initial x87/SSE state of every thread (fpu.h). */
#include "fpu.h"

static struct fpu_state fpu_template;

void fpu_init_template(void)
{
    u32 mxcsr = 0x1f80;                 /* all SSE exceptions masked, round to nearest */
    __asm__ volatile("fninit; ldmxcsr %0; fxsave %1" : : "m"(mxcsr), "m"(fpu_template));
}

void fpu_init(struct fpu_state *s) { *s = fpu_template; }
