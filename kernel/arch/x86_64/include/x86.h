/* Thin wrappers around x86-64 instructions the kernel needs. */
#ifndef X86_H
#define X86_H
#include "types.h"

static inline void outb(u16 port, u8 v) { __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port)); }
static inline void outw(u16 port, u16 v) { __asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port)); }
static inline void outl(u16 port, u32 v) { __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port)); }
static inline u32 inl(u16 port)
{
    u32 v;
    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline u8 inb(u16 port)
{
    u8 v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline u64 rdmsr(u32 msr)
{
    u32 lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((u64)hi << 32) | lo;
}
static inline void wrmsr(u32 msr, u64 v)
{
    __asm__ volatile("wrmsr" ::"c"(msr), "a"((u32)v), "d"((u32)(v >> 32)));
}
static inline u64 rdtsc(void)
{
    u32 lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((u64)hi << 32) | lo;
}
static inline void cpuid(u32 leaf, u32 sub, u32 *a, u32 *b, u32 *c, u32 *d)
{
    __asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(sub));
}
static inline u64 read_cr0(void) { u64 v; __asm__ volatile("mov %%cr0, %0" : "=r"(v)); return v; }
static inline u64 read_cr2(void) { u64 v; __asm__ volatile("mov %%cr2, %0" : "=r"(v)); return v; }
static inline u64 read_cr3(void) { u64 v; __asm__ volatile("mov %%cr3, %0" : "=r"(v)); return v; }
static inline u64 read_cr4(void) { u64 v; __asm__ volatile("mov %%cr4, %0" : "=r"(v)); return v; }
static inline void write_cr3(u64 v) { __asm__ volatile("mov %0, %%cr3" ::"r"(v) : "memory"); }
static inline void write_cr4(u64 v) { __asm__ volatile("mov %0, %%cr4" ::"r"(v) : "memory"); }
static inline void write_cr0(u64 v) { __asm__ volatile("mov %0, %%cr0" ::"r"(v) : "memory"); }
static inline void invlpg(u64 va) { __asm__ volatile("invlpg (%0)" ::"r"(va) : "memory"); }
static inline void cli(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void sti(void) { __asm__ volatile("sti" ::: "memory"); }
static inline void hlt(void) { __asm__ volatile("hlt" ::: "memory"); }
static inline void pause(void) { __asm__ volatile("pause"); }
/* Idle: take pending interrupts, sleep until the next one, return with them off again. */
static inline void wait_for_interrupt(void) { __asm__ volatile("sti; hlt; cli" ::: "memory"); }
static inline u64 read_rflags(void)
{
    u64 f;
    __asm__ volatile("pushfq; popq %0" : "=r"(f));
    return f;
}

#define MSR_EFER          0xc0000080
#define MSR_STAR          0xc0000081
#define MSR_LSTAR         0xc0000082
#define MSR_SFMASK        0xc0000084
#define MSR_FS_BASE       0xc0000100
#define MSR_GS_BASE       0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102
#define MSR_APIC_BASE     0x1b

#define EFER_SCE (1u << 0)
#define EFER_NXE (1u << 11)
#define CR0_WP   (1u << 16)
#define CR4_PGE  (1u << 7)
#define CR4_OSFXSR (1u << 9)
#define CR4_OSXMMEXCPT (1u << 10)
#define CR4_SMEP (1u << 20)
#define CR4_SMAP (1u << 21)
#define CR4_PCIDE (1u << 17)
#define CR3_NOFLUSH (1ull << 63)   /* with CR4.PCIDE: keep the new PCID's TLB entries */
#define RFLAGS_IF (1u << 9)
#define RFLAGS_AC (1u << 18)
#endif
