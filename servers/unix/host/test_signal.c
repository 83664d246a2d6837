/* Signals, part 1 (signal*.c): the calls with the errors tests/linux/signals.c shows on
 * the Linux peer (test_delivery, test_masks, test_altstack), the rt_sigframe byte for
 * byte, rt_sigreturn, nested frames, SA_NODEFER/SA_RESETHAND, rt_sigtimedwait. */
#include "signal_test.h"

_Static_assert(sizeof(struct linux_rt_sigframe) == 440, "rt_sigframe");
_Static_assert(sizeof(struct linux_ucontext) == 304, "ucontext");
_Static_assert(sizeof(struct linux_sigcontext) == 256, "sigcontext");
_Static_assert(sizeof(struct linux_siginfo) == 128, "siginfo");
_Static_assert(__builtin_offsetof(struct linux_rt_sigframe, info) == 312, "info");
_Static_assert(__builtin_offsetof(struct linux_ucontext, uc_mcontext) == 40, "mcontext");
_Static_assert(__builtin_offsetof(struct linux_ucontext, uc_sigmask) == 296, "sigmask");
_Static_assert(__builtin_offsetof(struct linux_sigcontext, cs) == 144, "cs");
_Static_assert(__builtin_offsetof(struct linux_sigcontext, fpstate) == 184, "fpstate");
_Static_assert(__builtin_offsetof(struct linux_siginfo, u.fault.addr) == 16, "si_addr");
_Static_assert(__builtin_offsetof(struct linux_siginfo, u.chld.status) == 24, "si_status");

static struct tproc self, other;

/* Frame of the handler now in the registers, checked against what was interrupted. */
static void frame_matches(struct tproc *tp, const struct user_regs *was, int sig,
                          uint64_t saved_rax, uint64_t saved_mask)
{
    struct user_regs r = fake_regs;
    CHECK_EQ(r.rip, HANDLER);
    CHECK_EQ(r.rdi, sig);
    CHECK_EQ(r.rsp % 16, 8);                          /* as after a call instruction */
    CHECK(r.rsp + 440 <= was->rsp - 128);             /* below the red zone */
    CHECK(r.rsp + 440 + 16 > was->rsp - 128);         /* and no lower than alignment needs */
    CHECK_EQ(r.rsi, r.rsp + 312);
    CHECK_EQ(r.rdx, r.rsp + 8);
    CHECK_EQ(r.rax, 0);
    CHECK_EQ(r.rflags & 0x400, 0);                    /* DF cleared */
    struct linux_rt_sigframe *f = frame_at(tp, r.rsp);
    CHECK_EQ(f->pretcode, RESTORER);
    CHECK_EQ(f->uc.uc_flags, UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS);
    CHECK_EQ(f->uc.uc_link, 0);
    struct linux_sigcontext *sc = &f->uc.uc_mcontext;
    CHECK(sc->r8 == was->r8 && sc->r9 == was->r9 && sc->r10 == was->r10 && sc->r11 == was->r11);
    CHECK(sc->r12 == was->r12 && sc->r13 == was->r13 && sc->r14 == was->r14 && sc->r15 == was->r15);
    CHECK(sc->rdi == was->rdi && sc->rsi == was->rsi && sc->rbp == was->rbp && sc->rbx == was->rbx);
    CHECK(sc->rdx == was->rdx && sc->rcx == was->rcx && sc->rsp == was->rsp && sc->rip == was->rip);
    CHECK_EQ(sc->rax, saved_rax);
    CHECK_EQ(sc->eflags, was->rflags);
    CHECK(sc->cs == 0x33 && sc->ss == 0x2b && sc->fs == 0 && sc->gs == 0);
    CHECK_EQ(sc->fpstate, 0);
    CHECK_EQ(sc->oldmask, saved_mask);
    CHECK_EQ(f->uc.uc_sigmask, saved_mask);
}

static void delivery(void)
{
    CHECK_EQ(tsigaction(&self, SIGUSR1, HANDLER, SA_SIGINFO, 0), 0);
    struct user_regs was = regs_in_call(&self, 62);
    CHECK_EQ(tcall(&self, 62, (uint64_t)self.p->pid, SIGUSR1, 0, 0), 0);      /* kill self */
    CHECK(tanswer(&self, 0));
    frame_matches(&self, &was, SIGUSR1, 0, 0);
    struct linux_rt_sigframe *f = frame_at(&self, fake_regs.rsp);
    CHECK(f->info.si_signo == SIGUSR1 && f->info.si_code == SI_USER);
    CHECK_EQ(f->info.u.kill.pid, self.p->pid);
    CHECK_EQ(self.t.sig_blocked, SIG_BIT(SIGUSR1));                   /* during the handler */
    treturn(&self);
    was.rax = 0;
    CHECK(memcmp(&fake_regs, &was, sizeof(was)) == 0);                 /* all restored */
    CHECK_EQ(self.t.sig_blocked, 0);
    /* tgkill self, then the probes and errors of the peer's test_delivery */
    CHECK_EQ(tcall(&self, 234, (uint64_t)self.p->pid, (uint64_t)self.t.tid, SIGUSR1, 0), 0);
    CHECK(tanswer(&self, 0));
    CHECK_EQ(frame_at(&self, fake_regs.rsp)->info.si_code, SI_TKILL);
    treturn(&self);
    CHECK_EQ(tcall(&self, 62, (uint64_t)self.p->pid, 0, 0, 0), 0);
    CHECK(!tanswer(&self, 0));
    CHECK_EQ(tcall(&self, 62, (uint64_t)self.p->pid, 65, 0, 0), -EINVAL);
    CHECK_EQ(tcall(&self, 62, 999999, SIGUSR1, 0, 0), -ESRCH);
    CHECK_EQ(tcall(&self, 62, 999999, 65, 0, 0), -ESRCH);             /* Linux: ESRCH first */
    CHECK_EQ(tcall(&self, 234, 999999, (uint64_t)self.t.tid, SIGUSR1, 0), -ESRCH);
    CHECK_EQ(tcall(&self, 234, (uint64_t)self.p->pid, 0, SIGUSR1, 0), -EINVAL);
    CHECK_EQ(tcall(&self, 200, (uint64_t)-5, SIGUSR1, 0, 0), -EINVAL);
    CHECK_EQ(tsigaction(&self, SIGKILL, HANDLER, 0, 0), -EINVAL);
    CHECK_EQ(tsigaction(&self, SIGSTOP, HANDLER, 0, 0), -EINVAL);
    CHECK_EQ(tcall(&self, 13, 0, 0, 0, 8), -EINVAL);                   /* signal 0 */
    CHECK_EQ(tcall(&self, 13, 65, 0, 0, 8), -EINVAL);
    CHECK_EQ(tcall(&self, 13, SIGUSR1, 0, 0, 4), -EINVAL);             /* sigsetsize */
    CHECK_EQ(tcall(&self, 13, SIGUSR1, 8, 0, 8), -EFAULT);
    CHECK_EQ(tcall(&self, 13, SIGUSR1, 0, U(&self, ARG2), 8), 0);
    struct linux_sigaction *old = H(&self, ARG2);
    CHECK(old->handler == HANDLER && old->restorer == RESTORER);
    CHECK_EQ(old->flags, SA_SIGINFO | SA_RESTORER);
    CHECK_EQ(tcall(&self, 13, SIGUSR1, 0, 8, 8), -EFAULT);
    CHECK_EQ(self.t.sig_pending.set | self.p->sig_pending.set, 0);
}

static uint64_t read_u64(struct tproc *tp, size_t off)
{
    uint64_t v;
    memcpy(&v, H(tp, off), sizeof(v));
    return v;
}

static void masks(void)
{
    tsigaction(&self, SIGUSR2, HANDLER, 0, 0);
    CHECK_EQ(procmask(&self, SIG_BLOCK, SIG_BIT(SIGUSR2)), 0);
    CHECK(!tanswer(&self, 0));
    CHECK_EQ(tcall(&self, 62, (uint64_t)self.p->pid, SIGUSR2, 0, 0), 0);
    CHECK(!tanswer(&self, 0));                                 /* blocked: not delivered */
    CHECK_EQ(tcall(&self, 127, U(&self, ARG2), 8, 0, 0), 0);
    CHECK_EQ(read_u64(&self, ARG2), SIG_BIT(SIGUSR2));         /* pending */
    CHECK_EQ(tcall(&self, 127, U(&self, ARG2), 9, 0, 0), -EINVAL);
    CHECK_EQ(procmask(&self, SIG_SETMASK, 0), 0);
    CHECK_EQ(read_u64(&self, ARG2), SIG_BIT(SIGUSR2));         /* the old mask */
    CHECK(tanswer(&self, 0));                                  /* unblock delivers */
    CHECK_EQ(fake_regs.rdi, SIGUSR2);
    treturn(&self);
    CHECK_EQ(tcall(&self, 127, U(&self, ARG2), 8, 0, 0), 0);
    CHECK_EQ(read_u64(&self, ARG2), 0);                        /* pending cleared */
    CHECK_EQ(procmask(&self, 99, 0), -EINVAL);
    CHECK_EQ(tcall(&self, 14, 99, 0, U(&self, ARG2), 8), 0);   /* how unchecked without set */
    CHECK_EQ(tcall(&self, 14, SIG_BLOCK, 0, 0, 7), -EINVAL);
    CHECK_EQ(tcall(&self, 14, SIG_BLOCK, 8, 0, 8), -EFAULT);
    procmask(&self, SIG_BLOCK, SIG_BIT(SIGKILL) | SIG_BIT(SIGSTOP) | SIG_BIT(SIGUSR1));
    CHECK_EQ(self.t.sig_blocked, SIG_BIT(SIGUSR1));            /* SIGKILL cannot be blocked */
    /* sigsuspend with USR2 blocked and pending: EINTR, the handler ran, the mask is back */
    procmask(&self, SIG_SETMASK, SIG_BIT(SIGUSR2));
    tcall(&self, 62, (uint64_t)self.p->pid, SIGUSR2, 0, 0);
    tanswer(&self, 0);
    uint64_t empty = 0;
    memcpy(H(&self, ARG), &empty, 8);
    struct user_regs was = regs_in_call(&self, 130);
    long r = tcall(&self, 130, U(&self, ARG), 8, 0, 0);
    CHECK_EQ(r, -ERESTARTNOHAND);
    CHECK(tanswer(&self, r));
    frame_matches(&self, &was, SIGUSR2, (uint64_t)-EINTR, SIG_BIT(SIGUSR2));
    treturn(&self);
    CHECK_EQ(fake_regs.rax, (uint64_t)-EINTR);
    CHECK_EQ(self.t.sig_blocked, SIG_BIT(SIGUSR2));
    CHECK_EQ(tcall(&self, 130, U(&self, ARG), 4, 0, 0), -EINVAL);
    CHECK_EQ(tcall(&self, 130, 8, 8, 0, 0), -EFAULT);
    /* sigsuspend that waits: another process's kill ends it */
    CHECK_EQ(tcall(&self, 130, U(&self, ARG), 8, 0, 0), UNIX_BLOCKED);
    CHECK_EQ(self.t.sig_blocked, 0);
    fake_answers = 0;
    CHECK_EQ(tcall(&other, 62, (uint64_t)self.p->pid, SIGUSR2, 0, 0), 0);
    CHECK_EQ(fake_answers, 1);
    CHECK_EQ(fake_answer, -ERESTARTNOHAND);
    fake_regs = regs_in_call(&self, 130);
    CHECK(tanswer(&self, fake_answer));
    CHECK_EQ(frame_at(&self, fake_regs.rsp)->uc.uc_mcontext.rax, (uint64_t)-EINTR);
    treturn(&self);
    CHECK_EQ(self.t.sig_blocked, SIG_BIT(SIGUSR2));
    procmask(&self, SIG_SETMASK, 0);
    tanswer(&self, 0);
    /* pause: a signal whose default ignores it does not end it; a caught one does */
    CHECK_EQ(tcall(&self, 34, 0, 0, 0, 0), UNIX_BLOCKED);
    fake_answers = 0;
    tcall(&other, 62, (uint64_t)self.p->pid, SIGURG, 0, 0);
    CHECK_EQ(fake_answers, 0);
    CHECK_EQ(self.p->sig_pending.set, 0);                      /* dropped at once */
    tcall(&other, 62, (uint64_t)self.p->pid, SIGUSR2, 0, 0);
    CHECK_EQ(fake_answer, -ERESTARTNOHAND);
    fake_regs = regs_in_call(&self, 34);
    CHECK(tanswer(&self, fake_answer));
    treturn(&self);
    CHECK_EQ(fake_regs.rax, (uint64_t)-EINTR);
}

static void altstack(void)
{
    struct linux_stack ss = {.ss_sp = U(&self, ALT), .ss_size = ALT_SIZE};
    memcpy(H(&self, ARG), &ss, sizeof(ss));
    CHECK_EQ(tcall(&self, 131, U(&self, ARG), U(&self, ARG2), 0, 0), 0);
    struct linux_stack *old = H(&self, ARG2);
    CHECK(old->ss_flags == SS_DISABLE && old->ss_size == 0);
    tsigaction(&self, SIGUSR1, HANDLER, SA_ONSTACK, 0);
    tcall(&self, 62, (uint64_t)self.p->pid, SIGUSR1, 0, 0);
    CHECK(tanswer(&self, 0));
    uint64_t sp = fake_regs.rsp;
    CHECK(sp >= U(&self, ALT) && sp + 440 <= U(&self, ALT + ALT_SIZE));   /* on it */
    CHECK_EQ(sp, U(&self, ALT + ALT_SIZE) - 456);     /* round_down(top - 440, 16) - 8 */
    struct linux_rt_sigframe *f = frame_at(&self, sp);
    CHECK(f->uc.uc_stack.ss_sp == U(&self, ALT) && f->uc.uc_stack.ss_size == ALT_SIZE);
    CHECK_EQ(tcall(&self, 131, 0, U(&self, ARG2), 0, 0), 0);
    fake_regs.rsp = sp;                                        /* the handler asks */
    struct ucall c = fake_call(self.p, 131, 0, U(&self, ARG2), 0, 0);
    c.thread = &self.t;
    CHECK_EQ(unix_dispatch(&c), 0);
    CHECK_EQ(old->ss_flags, SS_ONSTACK);
    c.a[0] = U(&self, ARG);
    CHECK_EQ(unix_dispatch(&c), -EPERM);                       /* change while on it */
    treturn(&self);
    struct linux_stack small = {.ss_sp = U(&self, ALT), .ss_size = 16};
    memcpy(H(&self, ARG), &small, sizeof(small));
    CHECK_EQ(tcall(&self, 131, U(&self, ARG), 0, 0, 0), -ENOMEM);
    struct linux_stack bad = {.ss_sp = U(&self, ALT), .ss_size = ALT_SIZE, .ss_flags = 0x77};
    memcpy(H(&self, ARG), &bad, sizeof(bad));
    CHECK_EQ(tcall(&self, 131, U(&self, ARG), 0, 0, 0), -EINVAL);
    CHECK_EQ(tcall(&self, 131, 8, 0, 0, 0), -EFAULT);
    CHECK_EQ(tcall(&self, 131, 0, 8, 0, 0), -EFAULT);
    /* SS_AUTODISARM: the frame saves the stack, then it is off until sigreturn */
    struct linux_stack ad = {.ss_sp = U(&self, ALT), .ss_size = ALT_SIZE,
                             .ss_flags = (int32_t)SS_AUTODISARM};
    memcpy(H(&self, ARG), &ad, sizeof(ad));
    CHECK_EQ(tcall(&self, 131, U(&self, ARG), 0, 0, 0), 0);
    tcall(&self, 62, (uint64_t)self.p->pid, SIGUSR1, 0, 0);
    CHECK(tanswer(&self, 0));
    CHECK_EQ(self.t.ss_size, 0);
    treturn(&self);
    CHECK_EQ(self.t.ss_size, ALT_SIZE);
    struct linux_stack off = {.ss_flags = SS_DISABLE};
    memcpy(H(&self, ARG), &off, sizeof(off));
    CHECK_EQ(tcall(&self, 131, U(&self, ARG), 0, 0, 0), 0);
    CHECK_EQ(self.t.ss_size, 0);
    tsigaction(&self, SIGUSR1, HANDLER, 0, 0);
}

/* Two signals at one answer: two frames; the second one's handler runs first, and its
 * frame returns into the first handler. SA_NODEFER, SA_RESETHAND, the handler's mask. */
static void nesting_and_flags(void)
{
    tsigaction(&self, SIGUSR1, HANDLER, SA_NODEFER | SA_RESETHAND, SIG_BIT(SIGTERM));
    tsigaction(&self, SIGUSR2, HANDLER2, 0, 0);
    procmask(&self, SIG_BLOCK, SIG_BIT(SIGUSR1) | SIG_BIT(SIGUSR2));
    tanswer(&self, 0);
    tcall(&self, 62, (uint64_t)self.p->pid, SIGUSR2, 0, 0);
    tanswer(&self, 0);
    tcall(&self, 62, (uint64_t)self.p->pid, SIGUSR1, 0, 0);
    tanswer(&self, 0);
    CHECK_EQ(procmask(&self, SIG_SETMASK, 0), 0);
    CHECK(tanswer(&self, 0));
    CHECK_EQ(fake_regs.rip, HANDLER2);                         /* USR1's frame, then USR2's */
    struct linux_rt_sigframe *top = frame_at(&self, fake_regs.rsp);
    CHECK_EQ(top->uc.uc_mcontext.rip, HANDLER);
    CHECK_EQ(top->uc.uc_sigmask, SIG_BIT(SIGTERM));            /* NODEFER: USR1 not added */
    CHECK_EQ(self.t.sig_blocked, SIG_BIT(SIGTERM) | SIG_BIT(SIGUSR2));
    CHECK_EQ(self.p->sig_hand->act[SIGUSR1 - 1].handler, SIG_DFL);   /* RESETHAND */
    treturn(&self);
    CHECK_EQ(fake_regs.rip, HANDLER);
    treturn(&self);
    CHECK_EQ(fake_regs.rip, CALL_RIP);
    CHECK_EQ(self.t.sig_blocked, 0);
}

/* rt_sigreturn checks: a frame out of memory or registers the kernel refuses end the
 * process with SIGSEGV; the flags user space may change are only the arithmetic ones. */
static void sigreturn_checks(void)
{
    struct tproc victim;
    tproc_new(&victim, &self);
    tsigaction(&victim, SIGUSR1, HANDLER, 0, 0);
    tcall(&victim, 62, (uint64_t)victim.p->pid, SIGUSR1, 0, 0);
    CHECK(tanswer(&victim, 0));
    struct linux_rt_sigframe *f = frame_at(&victim, fake_regs.rsp);
    f->uc.uc_mcontext.eflags = 0x3fffff;                       /* IOPL, IF, TF... */
    f->uc.uc_sigmask = ~0ull;
    f->uc.uc_mcontext.cs = 0x8;
    treturn(&victim);
    CHECK_EQ(fake_regs.rflags, 0x400 | (0x246 & ~0xcd5ull) | (0x3fffff & 0xcd5));
    CHECK_EQ(victim.t.sig_blocked, ~SIG_UNBLOCKABLE);
    procmask(&victim, SIG_SETMASK, 0);
    tanswer(&victim, 0);
    tcall(&victim, 62, (uint64_t)victim.p->pid, SIGUSR1, 0, 0);
    CHECK(tanswer(&victim, 0));
    frame_at(&victim, fake_regs.rsp)->uc.uc_mcontext.rip = 0xffff800000000000ull;
    CHECK_EQ(tproc_ended(&victim), -1);
    treturn(&victim);
    CHECK_EQ(tproc_ended(&victim), SIGSEGV);
    tproc_free(&victim);
    tproc_new(&victim, &self);
    fake_regs = regs_in_call(&victim, 15);
    fake_regs.rsp = 8;                                         /* no frame there */
    struct ucall c = fake_call(victim.p, 15, 0, 0, 0, 0);
    c.thread = &victim.t;
    CHECK_EQ(tproc_ended(&victim), -1);
    signal_deliver(&victim.t, unix_dispatch(&c));
    CHECK_EQ(tproc_ended(&victim), SIGSEGV);
    tproc_free(&victim);
    /* no SA_RESTORER: Linux cannot build the frame and forces SIGSEGV */
    tproc_new(&victim, &self);
    struct linux_sigaction a = {HANDLER, 0, 0, 0};
    memcpy(H(&victim, ARG), &a, sizeof(a));
    tcall(&victim, 13, SIGUSR1, U(&victim, ARG), 0, 8);
    tcall(&victim, 62, (uint64_t)victim.p->pid, SIGUSR1, 0, 0);
    CHECK_EQ(tproc_ended(&victim), -1);
    CHECK(tanswer(&victim, 0));
    CHECK_EQ(tproc_ended(&victim), SIGSEGV);
    tproc_free(&victim);
}

/* rt_sigtimedwait: takes a pending signal of its set; waits until one comes (a re-run
 * takes it) or the timeout; another signal ends it with EINTR. */
static void timedwait(void)
{
    uint64_t set = SIG_BIT(SIGUSR1);
    procmask(&self, SIG_SETMASK, set);
    tanswer(&self, 0);
    memcpy(H(&self, ARG), &set, 8);
    tcall(&self, 62, (uint64_t)self.p->pid, SIGUSR1, 0, 0);
    tanswer(&self, 0);
    CHECK_EQ(tcall(&self, 128, U(&self, ARG), U(&self, ARG2), 0, 8), SIGUSR1);
    struct linux_siginfo *si = H(&self, ARG2);
    CHECK(si->si_signo == SIGUSR1 && si->si_code == SI_USER && si->u.kill.pid == self.p->pid);
    struct linux_timespec zero = {0, 0};
    memcpy(H(&self, ARG + 0x40), &zero, sizeof(zero));
    CHECK_EQ(tcall(&self, 128, U(&self, ARG), 0, U(&self, ARG + 0x40), 8), -EAGAIN);
    CHECK_EQ(tcall(&self, 128, U(&self, ARG), 0, 0, 4), -EINVAL);
    struct linux_timespec bad = {0, 1000000000};
    memcpy(H(&self, ARG + 0x40), &bad, sizeof(bad));
    CHECK_EQ(tcall(&self, 128, U(&self, ARG), 0, U(&self, ARG + 0x40), 8), -EINVAL);
    CHECK_EQ(tcall(&self, 128, U(&self, ARG), 0, 0, 8), UNIX_BLOCKED);
    fake_answers = 0;
    tcall(&other, 62, (uint64_t)self.p->pid, SIGUSR1, 0, 0);
    CHECK_EQ(fake_answers, 0);                                 /* woken, runs again: */
    unix_run_woken();
    CHECK_EQ(fake_answers, 1);
    CHECK_EQ(fake_answer, SIGUSR1);
    struct linux_timespec ms = {0, 1000000};
    memcpy(H(&self, ARG + 0x40), &ms, sizeof(ms));
    fake_now_ns = 1000;
    CHECK_EQ(tcall(&self, 128, U(&self, ARG), 0, U(&self, ARG + 0x40), 8), UNIX_BLOCKED);
    CHECK_EQ(unix_next_deadline(), 1000 + 1000000);
    fake_now_ns = 1000 + 1000000;
    unix_timers_expire(fake_now_ns);
    unix_run_woken();
    CHECK_EQ(fake_answer, -EAGAIN);
    CHECK_EQ(tcall(&self, 128, U(&self, ARG), 0, 0, 8), UNIX_BLOCKED);
    tcall(&other, 62, (uint64_t)self.p->pid, SIGUSR2, 0, 0);   /* caught, not in the set */
    CHECK_EQ(fake_answer, -EINTR);
    fake_regs = regs_in_call(&self, 128);
    CHECK(tanswer(&self, fake_answer));
    treturn(&self);
    procmask(&self, SIG_SETMASK, 0);
    tanswer(&self, 0);
}

/* rt_sigqueueinfo: the value and code reach the handler's siginfo; EPERM for a forged
 * code to another process; ESRCH, EINVAL, EFAULT. */
static void queueinfo(void)
{
    tsigaction(&self, 40, HANDLER, SA_SIGINFO, 0);
    struct linux_siginfo si = {.si_signo = 40, .si_code = SI_QUEUE};
    si.u.kill.pid = self.p->pid;
    si.u.kill.value = 0x1234;
    memcpy(H(&self, ARG2), &si, sizeof(si));
    CHECK_EQ(tcall(&self, 129, (uint64_t)self.p->pid, 40, U(&self, ARG2), 0), 0);
    CHECK(tanswer(&self, 0));
    struct linux_siginfo *got = &frame_at(&self, fake_regs.rsp)->info;
    CHECK(got->si_signo == 40 && got->si_code == SI_QUEUE && got->u.kill.value == 0x1234);
    treturn(&self);
    si.si_code = SI_USER;
    memcpy(H(&self, ARG2), &si, sizeof(si));
    CHECK_EQ(tcall(&self, 129, (uint64_t)other.p->pid, 40, U(&self, ARG2), 0), -EPERM);
    si.si_code = SI_QUEUE;
    memcpy(H(&self, ARG2), &si, sizeof(si));
    CHECK_EQ(tcall(&self, 129, 999999, 40, U(&self, ARG2), 0), -ESRCH);
    CHECK_EQ(tcall(&self, 129, (uint64_t)self.p->pid, 65, U(&self, ARG2), 0), -EINVAL);
    CHECK_EQ(tcall(&self, 129, (uint64_t)self.p->pid, 40, 8, 0), -EFAULT);
    /* real-time signals queue: three sends, three deliveries in order */
    procmask(&self, SIG_BLOCK, SIG_BIT(40));
    tanswer(&self, 0);
    for (uint64_t v = 1; v <= 3; v++) {
        si.u.kill.value = v;
        memcpy(H(&self, ARG2), &si, sizeof(si));
        tcall(&self, 129, (uint64_t)self.p->pid, 40, U(&self, ARG2), 0);
        tanswer(&self, 0);
    }
    CHECK_EQ(self.p->sig_pending.queued, 3);
    procmask(&self, SIG_SETMASK, 0);
    CHECK(tanswer(&self, 0));
    for (uint64_t v = 1; v <= 3; v++) {       /* NODEFER-less: the next comes at sigreturn */
        CHECK_EQ(frame_at(&self, fake_regs.rsp)->info.u.kill.value, v);
        treturn(&self);
    }
    CHECK_EQ(self.p->sig_pending.set, 0);
}

int main(void)
{
    tproc_new(&self, NULL);
    tproc_new(&other, &self);
    delivery();
    masks();
    altstack();
    nesting_and_flags();
    sigreturn_checks();
    timedwait();
    queueinfo();
    tproc_free(&other);
    tproc_free(&self);
    return fake_done();
}
