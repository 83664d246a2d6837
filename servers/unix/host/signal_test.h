/*
 * Helpers of the hosted signal tests (test_signal*.c): processes from the real process
 * table with user memory, a thread per process, and the runtime's side of an answer
 * (signal_deliver, then rax) done by hand. User memory (64 KiB): arguments at offset 0,
 * an alternate stack at ALT, the stack below STACK_TOP.
 */
#ifndef SIGNAL_TEST_H
#define SIGNAL_TEST_H
#include <string.h>
#include "fake.h"
#include "signal_impl.h"

#define MEM 0x10000
#define ARG 0x0                  /* offsets in user memory */
#define ARG2 0x400
#define ALT 0x1000
#define ALT_SIZE 0x2000
#define STACK_TOP 0xf000
#define HANDLER 0x401000ull      /* user addresses of code (never run) */
#define HANDLER2 0x402000ull
#define RESTORER 0x403000ull
#define CALL_RIP 0x400102ull     /* after a syscall instruction at 0x400100 */

struct tproc {
    struct proc *p;
    struct uthread t;
};

/* A process (child of parent, or init) with one thread whose tid is the pid. */
static inline void tproc_new(struct tproc *tp, struct tproc *parent)
{
    fake_proc_mem_next = MEM;
    tp->p = proc_create(parent ? parent->p : NULL);
    memset(&tp->t, 0, sizeof(tp->t));
    tp->t.tid = tp->p->pid;
    tp->t.proc = tp->p;
    signal_thread_new(&tp->t, NULL);
}

static inline void tproc_free(struct tproc *tp)
{
    unix_wait_drop(&tp->t);
    signal_thread_exit(&tp->t);
    signal_exit(tp->p);
    proc_free(tp->p);
}

/* How tp's process ended: its wait status once proc_exit made it a zombie, else -1.
 * Read from the process itself, so the real proc_exit (linked when a test uses
 * dispatch.c) and the fake one are checked alike. */
static inline int tproc_ended(const struct tproc *tp)
{
    return tp->p->zombie ? tp->p->exit_status : -1;
}

static inline uint64_t U(struct tproc *tp, size_t off) { return fake_user(tp->p, off); }
static inline void *H(struct tproc *tp, size_t off) { return fake_host(tp->p, fake_user(tp->p, off)); }

/* The registers of a thread that made system call nr: every one distinct. */
static inline struct user_regs regs_in_call(struct tproc *tp, long nr)
{
    return (struct user_regs){
        .rax = (uint64_t)nr, .rbx = 0xb0b, .rcx = CALL_RIP, .rdx = 0xd0d, .rsi = 0x5151,
        .rdi = 0xd1d1, .rbp = 0xb9b9, .rsp = U(tp, STACK_TOP) - 0x38, .r8 = 8, .r9 = 9,
        .r10 = 10, .r11 = 0x246, .r12 = 12, .r13 = 13, .r14 = 14, .r15 = 15,
        .rip = CALL_RIP, .rflags = 0x246 | 0x400, .fs_base = 0x7000,
    };
}

/* Thread tp makes call nr (registers as regs_in_call) and the server runs it. */
static inline long tcall(struct tproc *tp, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
                         uint64_t a3)
{
    fake_regs = regs_in_call(tp, nr);
    struct ucall c = fake_call(tp->p, nr, a0, a1, a2, a3);
    c.thread = &tp->t;
    tp->t.in_call = true;
    return unix_dispatch(&c);
}

/* The runtime answers tp's call: signal_deliver, then rax unless registers were set.
 * True when registers were set (a frame, a restart, or the end). */
static inline bool tanswer(struct tproc *tp, long result)
{
    tp->t.in_call = false;
    bool set = signal_deliver(&tp->t, result);
    if (!set)
        fake_regs.rax = (uint64_t)result;
    return set;
}

/* rt_sigaction(sig, {handler, flags | SA_RESTORER, mask}) by tp. */
static inline long tsigaction(struct tproc *tp, int sig, uint64_t handler, uint64_t flags,
                              uint64_t mask)
{
    struct linux_sigaction a = {handler, flags | SA_RESTORER, RESTORER, mask};
    memcpy(H(tp, ARG), &a, sizeof(a));
    long r = tcall(tp, 13, (uint64_t)sig, U(tp, ARG), 0, 8);
    tanswer(tp, r);
    return r;
}

/* The handler returns: its ret pops pretcode, the restorer calls rt_sigreturn. */
static inline void treturn(struct tproc *tp)
{
    struct user_regs at_handler_end = fake_regs;
    at_handler_end.rsp += 8;
    at_handler_end.rax = 15;
    fake_regs = at_handler_end;
    struct ucall c = fake_call(tp->p, 15, 0, 0, 0, 0);
    c.thread = &tp->t;
    long r = unix_dispatch(&c);
    tp->t.in_call = false;
    signal_deliver(&tp->t, r);         /* registers were set: the answer's value is unused */
}

/* rt_sigprocmask(how, set, ARG2) by tp (the old mask lands at ARG2). */
static inline long procmask(struct tproc *tp, int how, uint64_t set)
{
    memcpy(H(tp, ARG), &set, sizeof(set));
    return tcall(tp, 14, (uint64_t)how, U(tp, ARG), U(tp, ARG2), 8);
}

static inline struct linux_rt_sigframe *frame_at(struct tproc *tp, uint64_t rsp)
{
    return fake_host(tp->p, rsp);
}

#endif
