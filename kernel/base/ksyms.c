/* Kernel symbols and stacks (ksyms.h). */
#include "arch.h"
#include "kernel.h"
#include "ksyms.h"
#include "memlayout.h"

struct ksym {
    u64 addr;
    u32 name_off;
    u32 pad;
};
/* Filled by the second link; empty in the first. */
extern const u64 ksyms_count;
extern const struct ksym ksyms_table[];
extern const char ksyms_names[];
extern char __text_start[], __text_end[];

const char *ksym_name(u64 addr, u64 *off)
{
    const char *best = NULL;
    u64 best_addr = 0;
    for (u64 i = 0; i < ksyms_count; i++) {
        if (ksyms_table[i].addr <= addr && ksyms_table[i].addr >= best_addr) {
            best_addr = ksyms_table[i].addr;
            best = ksyms_names + ksyms_table[i].name_off;
        }
    }
    *off = addr - best_addr;
    return best;
}

static bool kernel_text(u64 a) { return a >= (u64)__text_start && a < (u64)__text_end; }

/* A frame pointer worth following: in the kernel half, aligned, above the previous one
 * (callers' frames lie higher on the stack) and within STACK_SPAN of the first. A trap
 * frame from user mode holds the user's rbp, which may be any value: it fails here. */
#define STACK_SPAN (16u << 10)
static bool frame_ok(u64 rbp, u64 prev, u64 first)
{
    return rbp >= PHYSMAP_BASE && !(rbp & 7) && rbp >= prev && rbp - first < STACK_SPAN;
}

void ksym_stack(u64 rbp, u64 *out, int n)
{
    int depth = 0;
    for (u64 prev = rbp, first = rbp; depth < n && frame_ok(rbp, prev, first); depth++) {
        const u64 *frame = (const u64 *)rbp;
        if (!kernel_text(frame[1]))
            break;
        out[depth] = frame[1];
        prev = rbp + 16;
        rbp = frame[0];
    }
    for (; depth < n; depth++)
        out[depth] = 0;
}

void ksym_print(const u64 *stack, int n)
{
    for (int depth = 0; depth < n && stack[depth]; depth++) {
        u64 off;
        const char *name = ksym_name(stack[depth], &off);
        if (name)
            printk("  #%d %#018lx %s+%#lx\n", depth, (unsigned long)stack[depth], name,
                   (unsigned long)off);
        else
            printk("  #%d %#018lx ?\n", depth, (unsigned long)stack[depth]);
    }
}
