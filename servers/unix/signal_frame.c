/*
 * Signal delivery and return (signal.h; docs/unix.md, "Signals"): Linux x86-64's
 * rt_sigframe built on the user stack or the alternate stack, the restart decision for
 * an interrupted call, rt_sigreturn, and faults as signals.
 *
 * signal_deliver runs before a thread returns to user mode through the server (the
 * answer of a call, an interrupt, a fault). It dequeues every deliverable signal in
 * Linux's order (the thread's before the process's, faults first, then the lowest
 * number): ignored ones are dropped, a default action terminates or stops the process,
 * and each caught one gets a frame on top of the previous one, so the last one's handler
 * runs first, as on Linux. The registers are read once and written once.
 *
 * The frame (struct linux_rt_sigframe, 440 bytes): pretcode = sa_restorer, the
 * ucontext (uc_flags UC_SIGCONTEXT_SS|UC_STRICT_RESTORE_SS, the alternate stack, the
 * sigcontext with fpstate 0: no FP state is saved, musl's handlers need none, and the
 * mask to restore), then the siginfo (written only with SA_SIGINFO, as Linux). Its
 * address is 8 mod 16, as after a call instruction, 128 bytes below the interrupted rsp
 * (the red zone) or at the top of the alternate stack.
 */
#include <ondol/srv.h>
#include "signal_impl.h"
#include "runtime.h"

#define RFLAGS_TF 0x100ull
#define RFLAGS_DF 0x400ull
#define RFLAGS_RF 0x10000ull
#define RED_ZONE 128

/* ---- dequeuing ---- */

static int first_of(uint64_t set)
{
    uint64_t sync = set & SIG_SYNCHRONOUS;
    return __builtin_ctzll(sync ? sync : set) + 1;
}

/* The next deliverable signal of t and its info; 0 when none. */
static int dequeue(struct uthread *t, struct sig_info *info)
{
    uint64_t mine = t->sig_pending.set & ~t->sig_blocked;
    uint64_t shared = t->proc->sig_pending.set & ~t->sig_blocked;
    if (mine) {
        int sig = first_of(mine);
        pending_take(&t->sig_pending, sig, info);
        return sig;
    }
    if (shared) {
        int sig = first_of(shared);
        pending_take(&t->proc->sig_pending, sig, info);
        return sig;
    }
    return 0;
}

/* ---- the restart decision (Linux's handle_signal and the no-handler case) ---- */

static bool is_restart(long result)
{
    return result == -ERESTARTSYS || result == -ERESTARTNOINTR ||
           result == -ERESTARTNOHAND || result == -ERESTART_RESTARTBLOCK;
}

/* Run the interrupted call again: rax is still its number, rip goes back over the
 * 2-byte syscall instruction. */
static void restart(struct user_regs *r)
{
    r->rip -= 2;
}

/* A handler runs: the call's rax as the frame saves it (or a restart). */
static void resolve_for_handler(long result, uint64_t flags, struct user_regs *r)
{
    if (result == -ERESTARTNOINTR || (result == -ERESTARTSYS && (flags & SA_RESTART)))
        restart(r);
    else
        r->rax = (uint64_t)(is_restart(result) ? -EINTR : result);
}

/* ---- the frame ---- */

/* Linux's on_sig_stack: an SS_AUTODISARM stack never counts as in use. */
static bool on_altstack(const struct uthread *t, uint64_t sp)
{
    return !(t->ss_flags & SS_AUTODISARM) && t->ss_size && sp > t->ss_sp &&
           sp - t->ss_sp <= t->ss_size;
}

static void save_context(struct linux_sigcontext *sc, const struct user_regs *r,
                         const struct sig_info *info, uint64_t mask)
{
    *sc = (struct linux_sigcontext){
        .r8 = r->r8, .r9 = r->r9, .r10 = r->r10, .r11 = r->r11, .r12 = r->r12,
        .r13 = r->r13, .r14 = r->r14, .r15 = r->r15, .rdi = r->rdi, .rsi = r->rsi,
        .rbp = r->rbp, .rbx = r->rbx, .rdx = r->rdx, .rax = r->rax, .rcx = r->rcx,
        .rsp = r->rsp, .rip = r->rip, .eflags = r->rflags,
        .cs = LINUX_USER_CS, .ss = LINUX_USER_DS,
        .err = info->error, .trapno = info->trapno, .oldmask = mask,
        .cr2 = info->trapno == 14 ? info->value : 0,
    };
}

static void fill_siginfo(struct linux_siginfo *si, const struct sig_info *info)
{
    __builtin_memset(si, 0, sizeof(*si));
    si->si_signo = info->signo;
    si->si_code = info->code;
    if (info->signo == SIGCHLD && info->code > 0) {
        si->u.chld.pid = info->pid;
        si->u.chld.uid = info->uid;
        si->u.chld.status = info->status;
    } else if (info->trapno || info->code > 0) {
        si->u.fault.addr = info->value;            /* a fault (or a kernel si_code) */
    } else {
        si->u.kill.pid = info->pid;
        si->u.kill.uid = info->uid;
        si->u.kill.value = info->value;
    }
}

/* Where the frame goes: below the red zone, or at the top of the alternate stack. */
static uint64_t frame_address(const struct uthread *t, uint64_t rsp, uint64_t flags)
{
    uint64_t sp = rsp - RED_ZONE;
    if ((flags & SA_ONSTACK) && t->ss_size && !on_altstack(t, sp))
        sp = t->ss_sp + t->ss_size;
    sp -= sizeof(struct linux_rt_sigframe);
    return (sp & ~15ull) - 8;
}

/* Push a frame for sig onto t's stack and point r at the handler. False: the frame could
 * not be written (no SA_RESTORER, a bad stack): Linux then forces SIGSEGV.
 * Out of line: its 440-byte frame is not kept on the stack while delivery goes on
 * (kernel stacks are 8 KiB in IK). */
__attribute__((noinline)) static bool push_frame(struct uthread *t, struct user_regs *r,
                                                 const struct sig_info *info,
                                                 const struct linux_sigaction *a,
                                                 uint64_t saved_mask)
{
    if (!(a->flags & SA_RESTORER))
        return false;
    uint64_t sp = frame_address(t, r->rsp, a->flags);
    struct linux_rt_sigframe f;
    f.pretcode = a->restorer;
    f.uc.uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
    f.uc.uc_link = 0;
    f.uc.uc_stack = (struct linux_stack){.ss_sp = t->ss_sp, .ss_flags = (int32_t)t->ss_flags,
                                         .ss_size = t->ss_size};
    save_context(&f.uc.uc_mcontext, r, info, saved_mask);
    f.uc.uc_sigmask = saved_mask;
    size_t n = sizeof(f);
    if (a->flags & SA_SIGINFO)
        fill_siginfo(&f.info, info);
    else
        n = __builtin_offsetof(struct linux_rt_sigframe, info);
    if (copy_out(t->proc, sp, &f, n))
        return false;
    if (t->ss_flags & SS_AUTODISARM) {
        t->ss_sp = t->ss_size = 0;
        t->ss_flags = SS_DISABLE;
    }
    r->rdi = (uint64_t)info->signo;
    r->rsi = sp + __builtin_offsetof(struct linux_rt_sigframe, info);
    r->rdx = sp + __builtin_offsetof(struct linux_rt_sigframe, uc);
    r->rax = 0;
    r->rsp = sp;
    r->rip = a->handler;
    r->rflags &= ~(RFLAGS_DF | RFLAGS_TF | RFLAGS_RF);
    return true;
}

/* Linux's force_sigsegv: a frame that cannot be written ends in SIGSEGV's default. */
static void force_sigsegv(struct uthread *t)
{
    t->proc->sig_hand->act[SIGSEGV - 1].handler = SIG_DFL;
    t->sig_blocked &= ~SIG_BIT(SIGSEGV);
    pending_add(&t->sig_pending, &(struct sig_info){.signo = SIGSEGV, .code = SI_KERNEL});
}

/* ---- delivery ---- */

struct delivery {
    struct uthread *t;
    struct user_regs r;
    long result;            /* the call's result, until a handler or the end resolves it */
    bool in_call;           /* result is still to resolve */
    bool frames;            /* a frame was pushed */
};

/* The mask a frame saves: the one before the handler, or sigsuspend's saved one. */
static uint64_t mask_to_restore(struct uthread *t)
{
    if (!t->sig_restore_mask)
        return t->sig_blocked;
    t->sig_restore_mask = false;
    return t->sig_saved_mask;
}

/* A caught signal: resolve the call, push the frame, block the handler's mask. */
static void catch(struct delivery *d, const struct sig_info *info)
{
    struct uthread *t = d->t;
    struct linux_sigaction *a = &t->proc->sig_hand->act[info->signo - 1];
    if (d->in_call) {
        resolve_for_handler(d->result, a->flags, &d->r);
        d->in_call = false;
    }
    bool restore_pending = t->sig_restore_mask;
    uint64_t saved = mask_to_restore(t);
    if (!push_frame(t, &d->r, info, a, saved)) {
        t->sig_restore_mask = restore_pending;
        force_sigsegv(t);
        return;
    }
    d->frames = true;
    t->sig_blocked |= a->mask & ~SIG_UNBLOCKABLE;
    if (!(a->flags & SA_NODEFER))
        t->sig_blocked |= SIG_BIT(info->signo);
    if (a->flags & SA_RESETHAND)
        *a = (struct linux_sigaction){.handler = SIG_DFL};
}

/* One dequeued signal. False: the thread is finished with (its process ended). */
static bool act(struct delivery *d, const struct sig_info *info)
{
    struct proc *p = d->t->proc;
    int sig = info->signo;
    uint64_t h = p->sig_hand->act[sig - 1].handler;
    if (h == SIG_IGN)
        return true;
    if (h != SIG_DFL) {
        catch(d, info);
        return true;
    }
    switch (sig_default_action(sig)) {
    case SIG_DO_IGNORE:
    case SIG_DO_CONT:
        return true;
    case SIG_DO_STOP:
        if (sig == SIGSTOP || !pgrp_orphaned(p->pgid))
            stop_process(p, sig);
        return true;
    default:
        sig_terminate(p, sig);   /* no core file is written: no 0x80 flag, as the peer */
        return false;
    }
}

/* The process stopped: keep t's answer until SIGCONT (signal.c's release). */
static bool hold(struct delivery *d)
{
    struct uthread *t = d->t;
    if (d->frames)
        rt_regs_set(t->tid, &d->r);
    t->sig_held = true;
    t->sig_held_result = d->frames || !d->in_call ? SIGNAL_INTERRUPTED : d->result;
    return true;
}

/* signal_deliver when there is something to do; out of line, as its frame is large and
 * most answers have nothing to deliver. */
static __attribute__((noinline)) bool deliver(struct uthread *t, long result, bool in_call)
{
    struct proc *p = t->proc;
    struct delivery d = {.t = t, .result = result, .in_call = in_call};
    if (rt_regs_get(t->tid, &d.r) < 0)
        return false;
    struct sig_info info;
    for (int n = 0; n < 2 * LINUX_NSIG && !p->sig_stopped && dequeue(t, &info); n++)
        if (!act(&d, &info))
            return true;
    if (p->sig_stopped)
        return hold(&d);
    bool changed = d.frames;
    if (d.in_call && is_restart(d.result)) {      /* no handler ran: run the call again */
        restart(&d.r);
        changed = true;
    }
    if (t->sig_restore_mask) {             /* sigsuspend and no handler: the old mask */
        t->sig_restore_mask = false;
        t->sig_blocked = t->sig_saved_mask;
    }
    if (changed)
        rt_regs_set(t->tid, &d.r);
    return changed;
}

bool signal_deliver_pending(struct uthread *t, long result)
{
    t->sig_interrupting = false;
    bool in_call = result != SIGNAL_INTERRUPTED;
    if (!sig_deliverable(t) && !t->proc->sig_stopped && !(in_call && is_restart(result)) &&
        !t->sig_restore_mask)
        return false;
    return deliver(t, result, in_call);
}

/* ---- rt_sigreturn ---- */

/* The registers a frame gives back: the arithmetic flags and DF from the frame, the rest
 * of rflags as they are; cs and ss are the user ones whatever the frame says. */
static void restore_context(struct user_regs *r, const struct linux_sigcontext *sc)
{
    uint64_t keep_flags = r->rflags & ~(uint64_t)USER_RFLAGS_MASK;
    uint64_t fs_base = r->fs_base, gs_base = r->gs_base;   /* not in a Linux sigcontext */
    *r = (struct user_regs){
        .rax = sc->rax, .rbx = sc->rbx, .rcx = sc->rcx, .rdx = sc->rdx, .rsi = sc->rsi,
        .rdi = sc->rdi, .rbp = sc->rbp, .rsp = sc->rsp, .r8 = sc->r8, .r9 = sc->r9,
        .r10 = sc->r10, .r11 = sc->r11, .r12 = sc->r12, .r13 = sc->r13, .r14 = sc->r14,
        .r15 = sc->r15, .rip = sc->rip, .fs_base = fs_base, .gs_base = gs_base,
        .rflags = keep_flags | (sc->eflags & USER_RFLAGS_MASK),
    };
}

/* The frame's alternate stack is set again, as Linux's restore_altstack (its errors,
 * other than a fault, are ignored). */
static void restore_altstack(struct uthread *t, const struct linux_stack *ss, uint64_t rsp)
{
    if (on_altstack(t, rsp))
        return;
    uint32_t mode = (uint32_t)ss->ss_flags & ~SS_AUTODISARM;
    if (mode == SS_DISABLE) {
        t->ss_sp = t->ss_size = 0;
    } else if ((mode == 0 || mode == SS_ONSTACK) && ss->ss_size >= MINSIGSTKSZ) {
        t->ss_sp = ss->ss_sp;
        t->ss_size = ss->ss_size;
    } else {
        return;
    }
    t->ss_flags = (uint32_t)ss->ss_flags;
}

/* The frame is at rsp - 8 (the handler's ret popped pretcode). A frame that cannot be
 * read, or registers the kernel refuses (rip or rsp outside user space), give SIGSEGV. */
long lx_rt_sigreturn(struct ucall *c)
{
    struct uthread *t = c->thread;
    struct user_regs r;
    struct linux_ucontext uc;
    if (rt_regs_get(t->tid, &r) < 0)
        return -EFAULT;
    if (copy_in(c->proc, &uc, r.rsp - 8 + __builtin_offsetof(struct linux_rt_sigframe, uc),
                sizeof(uc))) {
        force_sigsegv(t);
        return SIGNAL_INTERRUPTED;
    }
    t->sig_blocked = uc.uc_sigmask & ~SIG_UNBLOCKABLE;
    uint64_t old_rsp = r.rsp;
    restore_context(&r, &uc.uc_mcontext);
    if (rt_regs_set(t->tid, &r) < 0) {
        force_sigsegv(t);
        return SIGNAL_INTERRUPTED;
    }
    restore_altstack(t, &uc.uc_stack, old_rsp);
    return SIGNAL_INTERRUPTED;
}

/* ---- faults ---- */

void signal_force_fault(struct uthread *t, int sig, int code, uint64_t addr,
                        unsigned vector, uint64_t error)
{
    struct proc *p = t->proc;
    if ((t->sig_blocked & SIG_BIT(sig)) || p->sig_hand->act[sig - 1].handler == SIG_IGN) {
        t->sig_blocked &= ~SIG_BIT(sig);        /* Linux's force_sig_info_to_task */
        p->sig_hand->act[sig - 1].handler = SIG_DFL;
    }
    pending_add(&t->sig_pending, &(struct sig_info){.signo = sig, .code = code,
                                                    .value = addr, .trapno = vector,
                                                    .error = error});
    signal_deliver(t, SIGNAL_INTERRUPTED);
}

#define PF_PRESENT 1u

void signal_fault(struct uthread *t, unsigned vector, uint64_t error, uint64_t addr,
                  uint64_t rip)
{
    switch (vector) {
    case 0:                                        /* #DE */
        signal_force_fault(t, SIGFPE, FPE_INTDIV, rip, vector, error);
        break;
    case 3:                                        /* #BP: int3 */
        signal_force_fault(t, SIGTRAP, SI_KERNEL, 0, vector, error);
        break;
    case 6:                                        /* #UD */
        signal_force_fault(t, SIGILL, ILL_ILLOPN, rip, vector, error);
        break;
    case 14:                                       /* #PF */
        signal_force_fault(t, SIGSEGV, error & PF_PRESENT ? SEGV_ACCERR : SEGV_MAPERR,
                           addr, vector, error);
        break;
    case 16: case 19:                              /* #MF, #XM */
        signal_force_fault(t, SIGFPE, FPE_FLTINV, rip, vector, error);
        break;
    case 17:                                       /* #AC */
        signal_force_fault(t, SIGBUS, BUS_ADRALN, 0, vector, error);
        break;
    case FWD_FAULT_BUS:                            /* past the end of a mapped file */
        signal_force_fault(t, SIGBUS, BUS_ADRERR, addr, 14, error);   /* a #PF, as Linux */
        break;
    case FWD_FAULT_NOMEM:                          /* no frame: as Linux's OOM killer */
        signal_force_fault(t, SIGKILL, SI_KERNEL, addr, vector, error);
        break;
    default:                                       /* #GP and the rest */
        signal_force_fault(t, SIGSEGV, SI_KERNEL, 0, vector, error);
        break;
    }
}
