/* Signals, part 2 (signal*.c): default actions, stop and continue, SIGCHLD and SIGPIPE,
 * alarm and setitimer, interrupted calls (EINTR or SA_RESTART), faults, job control on
 * the tty, fork and exec. The cases of tests/linux/signals.c's test_defaults,
 * test_sigchld_sigpipe, test_timers_eintr and test_faults, as far as the server decides
 * them. */
#include "signal_test.h"

#define MS 1000000ull
#define S 1000000000ull

static struct tproc init, parent;

/* A child of parent in a process group of its own (as a shell's job), so that its group
 * is not orphaned: job control stops apply to it. */
static void job_new(struct tproc *c)
{
    tproc_new(c, &parent);
    c->p->pgid = c->p->pid;
}

/* A child that sends itself sig with the default action in place: its wait status. */
static int default_action_status(int sig)
{
    struct tproc c;
    tproc_new(&c, &parent);
    CHECK_EQ(tcall(&c, 62, (uint64_t)c.p->pid, (uint64_t)sig, 0, 0), 0);
    tanswer(&c, 0);
    int st = tproc_ended(&c) == -1 ? 0 : tproc_ended(&c);
    tproc_free(&c);
    return st;
}

static void defaults(void)
{
    CHECK_EQ(default_action_status(SIGTERM), SIGTERM);
    CHECK_EQ(default_action_status(SIGQUIT), SIGQUIT);          /* core: no 0x80 flag */
    CHECK_EQ(default_action_status(SIGKILL), SIGKILL);
    CHECK_EQ(default_action_status(SIGCHLD), 0);                /* ignored */
    CHECK_EQ(default_action_status(SIGURG), 0);
    CHECK_EQ(default_action_status(SIGWINCH), 0);
    CHECK_EQ(default_action_status(SIGCONT), 0);
    CHECK_EQ(default_action_status(40), 40);                    /* real-time: terminate */
}

/* SIGSTOP stops; the stopped thread's answer waits; the parent hears CLD_STOPPED and
 * wait4's report is set; SIGCONT answers it and reports 0xffff; it then exits normally. */
static void stop_and_continue(void)
{
    struct tproc c;
    job_new(&c);
    tsigaction(&parent, SIGCHLD, HANDLER, SA_SIGINFO, 0);
    tsigaction(&c, SIGUSR1, HANDLER2, 0, 0);
    fake_parent_wakes = 0;
    CHECK_EQ(tcall(&c, 62, (uint64_t)c.p->pid, SIGSTOP, 0, 0), 0);
    CHECK(tanswer(&c, 0));                                      /* held: no answer now */
    CHECK(c.t.sig_held && c.p->sig_stopped);
    CHECK_EQ(c.p->sig_wait_report, SIGSTOP << 8 | 0x7f);        /* WIFSTOPPED, WSTOPSIG */
    CHECK_EQ(fake_parent_wakes, 1);
    CHECK_EQ(parent.p->sig_pending.set, SIG_BIT(SIGCHLD));
    tcall(&parent, 39, 0, 0, 0, 0);
    CHECK(tanswer(&parent, parent.p->pid));
    struct linux_siginfo *si = &frame_at(&parent, fake_regs.rsp)->info;
    CHECK(si->si_code == CLD_STOPPED && si->u.chld.status == SIGSTOP && si->u.chld.pid == c.p->pid);
    treturn(&parent);
    /* a signal to a stopped process waits; SIGCONT releases the held answer */
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGUSR1, 0, 0);
    CHECK_EQ(c.p->sig_pending.set, SIG_BIT(SIGUSR1));
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGSTOP, 0, 0);      /* already stopped */
    CHECK_EQ(fake_parent_wakes, 1);
    fake_answers = 0;
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGCONT, 0, 0);
    CHECK_EQ(fake_regs.rip, HANDLER2);           /* (one fake register set: now c's) */
    CHECK_EQ(fake_regs.rdi, SIGUSR1);            /* the pending USR1 is taken on the way */
    CHECK_EQ(frame_at(&c, fake_regs.rsp)->uc.uc_mcontext.rax, 0);    /* kill's result */
    treturn(&c);
    CHECK(!c.p->sig_stopped && !c.t.sig_held);
    CHECK_EQ(fake_answers, 1);                                  /* answered at last */
    CHECK_EQ(fake_answer, 0);
    CHECK_EQ(c.p->sig_wait_report, 0xffff);                     /* WIFCONTINUED */
    CHECK_EQ(fake_parent_wakes, 2);
    CHECK_EQ(c.p->sig_pending.set, 0);
    /* SA_NOCLDSTOP: no SIGCHLD for a stop, wait4 still hears it */
    tcall(&parent, 39, 0, 0, 0, 0);
    tanswer(&parent, parent.p->pid);                            /* CLD_CONTINUED's frame */
    treturn(&parent);
    tsigaction(&parent, SIGCHLD, HANDLER, SA_NOCLDSTOP, 0);
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGTSTP, 0, 0);      /* c in user mode */
    CHECK_EQ(fake_interrupt_tid, c.t.tid);
    fake_regs = regs_in_call(&c, 0);
    CHECK(signal_deliver(&c.t, SIGNAL_INTERRUPTED));            /* it comes in: held */
    CHECK(c.p->sig_stopped && c.t.sig_held);
    CHECK_EQ(parent.p->sig_pending.set, 0);
    CHECK_EQ(c.p->sig_wait_report, SIGTSTP << 8 | 0x7f);
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGCONT, 0, 0);
    CHECK_EQ(fake_answer, 0);                                   /* the interrupt resumes */
    /* a stop cancels a pending SIGCONT and SIGCONT cancels pending stops */
    procmask(&c, SIG_BLOCK, SIG_BIT(SIGCONT) | SIG_BIT(SIGTSTP));
    tanswer(&c, 0);
    tsigaction(&c, SIGCONT, HANDLER, 0, 0);
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGCONT, 0, 0);
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGTSTP, 0, 0);
    CHECK_EQ(c.p->sig_pending.set, SIG_BIT(SIGTSTP));
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGCONT, 0, 0);
    CHECK_EQ(c.p->sig_pending.set, SIG_BIT(SIGCONT));
    /* SIGKILL ends even a stopped process */
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGSTOP, 0, 0);
    tcall(&c, 39, 0, 0, 0, 0);
    tanswer(&c, 0);
    CHECK(c.p->sig_stopped);
    CHECK_EQ(tproc_ended(&c), -1);
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGKILL, 0, 0);
    CHECK_EQ(tproc_ended(&c), SIGKILL);
    tproc_free(&c);
    tsigaction(&parent, SIGCHLD, SIG_DFL, 0, 0);
}

/* A child's exit: SIGCHLD with its status; SIG_IGN or SA_NOCLDWAIT reap at once. */
static void sigchld(void)
{
    struct tproc c;
    tproc_new(&c, &parent);
    c.p->exit_status = 3 << 8;
    c.p->zombie = true;
    tsigaction(&parent, SIGCHLD, HANDLER, SA_SIGINFO, 0);
    CHECK(!signal_child_exited(parent.p, c.p));
    tcall(&parent, 39, 0, 0, 0, 0);
    CHECK(tanswer(&parent, parent.p->pid));
    struct linux_siginfo *si = &frame_at(&parent, fake_regs.rsp)->info;
    CHECK(si->si_signo == SIGCHLD && si->si_code == CLD_EXITED && si->u.chld.status == 3);
    CHECK_EQ(si->u.chld.pid, c.p->pid);
    treturn(&parent);
    c.p->exit_status = SIGSEGV;
    CHECK(!signal_child_exited(parent.p, c.p));
    tcall(&parent, 39, 0, 0, 0, 0);
    CHECK(tanswer(&parent, parent.p->pid));
    si = &frame_at(&parent, fake_regs.rsp)->info;
    CHECK(si->si_code == CLD_KILLED && si->u.chld.status == SIGSEGV);
    treturn(&parent);
    tsigaction(&parent, SIGCHLD, HANDLER, SA_NOCLDWAIT, 0);
    CHECK(signal_child_exited(parent.p, c.p));
    CHECK_EQ(parent.p->sig_pending.set, SIG_BIT(SIGCHLD));       /* and still told */
    tsigaction(&parent, SIGCHLD, SIG_IGN, 0, 0);
    CHECK_EQ(parent.p->sig_pending.set, 0);                      /* SIG_IGN drops it */
    CHECK(signal_child_exited(parent.p, c.p));
    CHECK_EQ(parent.p->sig_pending.set, 0);
    tsigaction(&parent, SIGCHLD, SIG_DFL, 0, 0);
    CHECK(!signal_child_exited(parent.p, c.p));
    CHECK_EQ(parent.p->sig_pending.set, 0);                      /* default: ignored */
    tproc_free(&c);
}

/* write without readers: -EPIPE and SIGPIPE, caught or terminating (real pipes). */
static void sigpipe(void)
{
    struct tproc c;
    tproc_new(&c, &parent);
    fake_fds(c.p);
    tsigaction(&c, SIGPIPE, HANDLER, 0, 0);
    CHECK_EQ(tcall(&c, 22, U(&c, ARG), 0, 0, 0), 0);
    int fds[2];
    memcpy(fds, H(&c, ARG), sizeof(fds));
    tcall(&c, 3, (uint64_t)fds[0], 0, 0, 0);
    long r = tcall(&c, 1, (uint64_t)fds[1], U(&c, ARG), 1, 0);
    CHECK_EQ(r, -EPIPE);
    CHECK(tanswer(&c, r));
    CHECK_EQ(fake_regs.rdi, SIGPIPE);
    CHECK_EQ(frame_at(&c, fake_regs.rsp)->uc.uc_mcontext.rax, (uint64_t)-EPIPE);
    treturn(&c);
    CHECK_EQ(fake_regs.rax, (uint64_t)-EPIPE);
    tsigaction(&c, SIGPIPE, SIG_DFL, 0, 0);
    CHECK_EQ(tproc_ended(&c), -1);
    r = tcall(&c, 1, (uint64_t)fds[1], U(&c, ARG), 1, 0);
    tanswer(&c, r);
    CHECK_EQ(tproc_ended(&c), SIGPIPE);
    fake_fds_free(c.p);
    tproc_free(&c);
}

static long read_empty_pipe(struct tproc *tp, int *fds)
{
    CHECK_EQ(tcall(tp, 22, U(tp, ARG2), 0, 0, 0), 0);
    memcpy(fds, H(tp, ARG2), 2 * sizeof(int));
    return tcall(tp, 0, (uint64_t)fds[0], U(tp, ARG2), 1, 0);
}

/* alarm and setitimer send SIGALRM through the server's timers; an interrupted read
 * gives EINTR, or restarts under SA_RESTART; an interrupted nanosleep gives EINTR even
 * under SA_RESTART (Linux's ERESTART_RESTARTBLOCK). */
static void timers_and_eintr(void)
{
    struct tproc c;
    job_new(&c);
    fake_fds(c.p);
    tsigaction(&c, SIGALRM, HANDLER, 0, 0);
    fake_now_ns = 10 * S;
    CHECK_EQ(tcall(&c, 37, 1, 0, 0, 0), 0);                      /* alarm(1) */
    CHECK_EQ(unix_next_deadline(), 11 * S);
    int fds[2];
    CHECK_EQ(read_empty_pipe(&c, fds), UNIX_BLOCKED);
    fake_now_ns = 11 * S;
    fake_answers = 0;
    unix_timers_expire(fake_now_ns);
    unix_run_woken();
    CHECK_EQ(fake_answers, 1);
    CHECK_EQ(fake_answer, -ERESTARTSYS);
    fake_regs = regs_in_call(&c, 0);
    CHECK(tanswer(&c, fake_answer));
    CHECK_EQ(fake_regs.rdi, SIGALRM);
    CHECK_EQ(frame_at(&c, fake_regs.rsp)->uc.uc_mcontext.rax, (uint64_t)-EINTR);
    treturn(&c);
    CHECK_EQ(fake_regs.rax, (uint64_t)-EINTR);
    CHECK_EQ(tcall(&c, 37, 0, 0, 0, 0), 0);                      /* nothing left */
    /* alarm's rounding of what is left */
    tcall(&c, 37, 5, 0, 0, 0);
    fake_now_ns += 2 * S + 400 * MS;
    CHECK_EQ(tcall(&c, 37, 5, 0, 0, 0), 3);                      /* 2.6 s: rounds to 3 */
    fake_now_ns += 4 * S + 600 * MS;
    CHECK_EQ(tcall(&c, 37, 0, 0, 0, 0), 1);                      /* 0.4 s: at least 1 */
    CHECK_EQ(unix_next_deadline(), UNIX_NO_DEADLINE);
    /* setitimer: 20 ms, then periodic; getitimer reads back; bad which */
    struct linux_itimerval it = {{0, 0}, {0, 20000}};
    memcpy(H(&c, ARG), &it, sizeof(it));
    CHECK_EQ(tcall(&c, 38, ITIMER_REAL, U(&c, ARG), U(&c, ARG + 0x40), 0), 0);
    CHECK_EQ(tcall(&c, 34, 0, 0, 0, 0), UNIX_BLOCKED);           /* pause */
    fake_now_ns += 20 * MS;
    unix_timers_expire(fake_now_ns);
    CHECK_EQ(fake_answer, -ERESTARTNOHAND);
    fake_regs = regs_in_call(&c, 34);
    CHECK(tanswer(&c, fake_answer));
    CHECK_EQ(fake_regs.rdi, SIGALRM);
    treturn(&c);
    CHECK_EQ(tcall(&c, 38, 99, U(&c, ARG), 0, 0), -EINVAL);
    CHECK_EQ(tcall(&c, 36, 99, U(&c, ARG), 0, 0), -EINVAL);
    struct linux_itimerval periodic = {{0, 5000}, {1, 500}};
    memcpy(H(&c, ARG), &periodic, sizeof(periodic));
    CHECK_EQ(tcall(&c, 38, ITIMER_REAL, U(&c, ARG), 0, 0), 0);
    fake_now_ns += 250 * MS;
    CHECK_EQ(tcall(&c, 36, ITIMER_REAL, U(&c, ARG2), 0, 0), 0);
    tanswer(&c, 0);
    struct linux_itimerval *got = H(&c, ARG2);
    CHECK(got->it_value.tv_sec == 0 && got->it_value.tv_usec == 750500);
    CHECK(got->it_interval.tv_sec == 0 && got->it_interval.tv_usec == 5000);
    uint64_t first = unix_next_deadline();
    fake_now_ns = first;
    unix_timers_expire(fake_now_ns);
    CHECK_EQ(unix_next_deadline(), first + 5 * MS);              /* re-armed */
    CHECK_EQ(c.p->sig_pending.set, SIG_BIT(SIGALRM));            /* c runs: interrupted */
    CHECK_EQ(fake_interrupt_tid, c.t.tid);
    fake_regs = regs_in_call(&c, 0);
    CHECK(signal_deliver(&c.t, SIGNAL_INTERRUPTED));
    CHECK_EQ(frame_at(&c, fake_regs.rsp)->uc.uc_mcontext.rax, 0);  /* rax kept */
    treturn(&c);
    struct linux_itimerval bad = {{0, 0}, {0, 1000000}};
    memcpy(H(&c, ARG), &bad, sizeof(bad));
    CHECK_EQ(tcall(&c, 38, ITIMER_REAL, U(&c, ARG), 0, 0), -EINVAL);
    CHECK_EQ(tcall(&c, 38, ITIMER_REAL, 8, 0, 0), -EFAULT);
    CHECK_EQ(tcall(&c, 38, ITIMER_REAL, 0, U(&c, ARG2), 0), 0);  /* NULL disarms */
    CHECK_EQ(unix_next_deadline(), UNIX_NO_DEADLINE);
    struct linux_itimerval virt = {{1, 0}, {2, 0}};
    memcpy(H(&c, ARG), &virt, sizeof(virt));
    CHECK_EQ(tcall(&c, 38, ITIMER_VIRTUAL, U(&c, ARG), 0, 0), 0);
    CHECK_EQ(tcall(&c, 36, ITIMER_VIRTUAL, U(&c, ARG2), 0, 0), 0);
    CHECK(memcmp(H(&c, ARG2), &virt, sizeof(virt)) == 0);
    CHECK_EQ(unix_next_deadline(), UNIX_NO_DEADLINE);            /* never expires */
    /* SA_RESTART: the read runs again (rax = 0, its number; rip back over syscall) */
    tsigaction(&c, SIGALRM, HANDLER, SA_RESTART, 0);
    CHECK_EQ(tcall(&c, 0, (uint64_t)fds[0], U(&c, ARG2), 1, 0), UNIX_BLOCKED);
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGALRM, 0, 0);
    CHECK_EQ(fake_answer, -ERESTARTSYS);
    fake_regs = regs_in_call(&c, 0);
    CHECK(tanswer(&c, fake_answer));
    struct linux_sigcontext *sc = &frame_at(&c, fake_regs.rsp)->uc.uc_mcontext;
    CHECK(sc->rax == 0 && sc->rip == CALL_RIP - 2);
    treturn(&c);
    CHECK(fake_regs.rax == 0 && fake_regs.rip == CALL_RIP - 2);
    /* nanosleep: EINTR even with SA_RESTART */
    struct linux_timespec five = {5, 0};
    memcpy(H(&c, ARG), &five, sizeof(five));
    CHECK_EQ(tcall(&c, 35, U(&c, ARG), 0, 0, 0), UNIX_BLOCKED);
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGALRM, 0, 0);
    CHECK_EQ(fake_answer, -ERESTART_RESTARTBLOCK);
    fake_regs = regs_in_call(&c, 35);
    CHECK(tanswer(&c, fake_answer));
    treturn(&c);
    CHECK_EQ(fake_regs.rax, (uint64_t)-EINTR);
    /* an ignored signal ends no wait; a stop-and-continue restarts the call */
    CHECK_EQ(tcall(&c, 0, (uint64_t)fds[0], U(&c, ARG2), 1, 0), UNIX_BLOCKED);
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGWINCH, 0, 0);
    CHECK(c.t.wait != NULL);
    tcall(&parent, 62, (uint64_t)c.p->pid, SIGTSTP, 0, 0);
    CHECK(c.t.wait == NULL);
    fake_regs = regs_in_call(&c, 0);
    CHECK(tanswer(&c, fake_answer));
    CHECK(c.t.sig_held);
    fake_answers = 0;
    fake_regs = regs_in_call(&c, 0);             /* (one fake register set: c's) */
    signal_send(c.p, SIGCONT);
    CHECK_EQ(fake_answers, 1);
    CHECK(fake_regs.rip == CALL_RIP - 2 && fake_regs.rax == 0);  /* read again */
    tcall(&c, 3, (uint64_t)fds[0], 0, 0, 0);
    tcall(&c, 3, (uint64_t)fds[1], 0, 0, 0);
    fake_fds_free(c.p);
    tproc_free(&c);
}

/* Faults: the signal and siginfo Linux gives, the sigcontext's trap fields; blocked or
 * ignored, or without a handler, the process ends with the signal. */
static void faults(void)
{
    struct tproc c;
    tproc_new(&c, &parent);
    int sigs[] = {SIGSEGV, SIGFPE, SIGILL, SIGBUS, SIGTRAP};
    for (int i = 0; i < 5; i++)
        tsigaction(&c, sigs[i], HANDLER, SA_SIGINFO | SA_NODEFER, 0);
    struct { unsigned vector; uint64_t error, addr; int sig, code; uint64_t si_addr; } f[] = {
        {14, 6, 8, SIGSEGV, SEGV_MAPERR, 8},              /* write to an unmapped page */
        {14, 7, 0x5000, SIGSEGV, SEGV_ACCERR, 0x5000},    /* write to a read-only page */
        {0, 0, 0, SIGFPE, FPE_INTDIV, CALL_RIP},          /* idiv by zero */
        {6, 0, 0, SIGILL, ILL_ILLOPN, CALL_RIP},          /* ud2 */
        {3, 0, 0, SIGTRAP, SI_KERNEL, 0},                 /* int3 */
        {13, 0, 0, SIGSEGV, SI_KERNEL, 0},                /* #GP */
    };
    for (int i = 0; i < 6; i++) {
        fake_regs = regs_in_call(&c, 0);
        fake_regs.rip = CALL_RIP;
        signal_fault(&c.t, f[i].vector, f[i].error, f[i].addr, CALL_RIP);
        CHECK_EQ(fake_regs.rip, HANDLER);
        struct linux_rt_sigframe *fr = frame_at(&c, fake_regs.rsp);
        CHECK_EQ(fr->info.si_signo, f[i].sig);
        CHECK_EQ(fr->info.si_code, f[i].code);
        CHECK_EQ(fr->info.u.fault.addr, f[i].si_addr);
        CHECK_EQ(fr->uc.uc_mcontext.trapno, f[i].vector);
        CHECK_EQ(fr->uc.uc_mcontext.err, f[i].error);
        CHECK_EQ(fr->uc.uc_mcontext.cr2, f[i].vector == 14 ? f[i].addr : 0);
        treturn(&c);
    }
    fake_regs = regs_in_call(&c, 0);
    signal_force_fault(&c.t, SIGBUS, BUS_ADRERR, 0x9000, 14, 4);
    CHECK_EQ(fake_regs.rdi, SIGBUS);
    CHECK_EQ(frame_at(&c, fake_regs.rsp)->info.u.fault.addr, 0x9000);
    treturn(&c);
    /* blocked: unblocked and set to default, so it terminates */
    procmask(&c, SIG_BLOCK, SIG_BIT(SIGSEGV));
    tanswer(&c, 0);
    CHECK_EQ(tproc_ended(&c), -1);
    signal_fault(&c.t, 14, 4, 8, CALL_RIP);
    CHECK_EQ(tproc_ended(&c), SIGSEGV);
    tproc_free(&c);
    tproc_new(&c, &parent);
    tsigaction(&c, SIGFPE, SIG_IGN, 0, 0);
    signal_fault(&c.t, 0, 0, 0, CALL_RIP);
    CHECK_EQ(tproc_ended(&c), SIGFPE);
    tproc_free(&c);
    tproc_new(&c, &parent);
    signal_fault(&c.t, 6, 0, 0, CALL_RIP);
    CHECK_EQ(tproc_ended(&c), SIGILL);
    tproc_free(&c);
}

/* Job control for the tty (signal_tty_background) and signals to a process group. */
static void job_control(void)
{
    struct tproc leader, bg, other_session;
    tproc_new(&leader, &parent);
    tproc_new(&bg, &leader);
    tproc_new(&other_session, &parent);
    leader.p->pgid = leader.p->pid;
    bg.p->pgid = bg.p->pid;                      /* a group whose parent is in the session */
    CHECK_EQ(signal_tty_background(bg.p, SIGTTIN), -ERESTARTSYS);
    CHECK_EQ(bg.p->sig_pending.set, SIG_BIT(SIGTTIN));
    CHECK_EQ(fake_interrupt_tid, bg.t.tid);
    tcall(&bg, 39, 0, 0, 0, 0);
    CHECK(tanswer(&bg, -ERESTARTSYS));                           /* stops */
    CHECK(bg.p->sig_stopped && bg.t.sig_held);
    signal_send_pgrp(bg.p->pgid, SIGCONT);
    CHECK(!bg.p->sig_stopped);
    CHECK_EQ(fake_regs.rip, CALL_RIP - 2);                       /* the read runs again */
    tsigaction(&bg, SIGTTOU, SIG_IGN, 0, 0);
    CHECK_EQ(signal_tty_background(bg.p, SIGTTOU), 0);
    tsigaction(&bg, SIGTTIN, SIG_IGN, 0, 0);
    CHECK_EQ(signal_tty_background(bg.p, SIGTTIN), -EIO);
    tsigaction(&bg, SIGTTIN, SIG_DFL, 0, 0);
    procmask(&bg, SIG_BLOCK, SIG_BIT(SIGTTIN));
    tanswer(&bg, 0);
    CHECK_EQ(signal_tty_background(bg.p, SIGTTIN), -EIO);
    procmask(&bg, SIG_SETMASK, 0);
    tanswer(&bg, 0);
    other_session.p->sid = other_session.p->pid;
    bg.p->ppid = other_session.p->pid;           /* parent in another session: orphaned */
    CHECK_EQ(signal_tty_background(bg.p, SIGTTIN), -EIO);
    CHECK_EQ(bg.p->sig_pending.set, 0);
    /* SIGTSTP to an orphaned group is discarded at delivery (SIGSTOP is not) */
    signal_send_pgrp(bg.p->pgid, SIGTSTP);
    tcall(&bg, 39, 0, 0, 0, 0);
    CHECK(!tanswer(&bg, bg.p->pid));
    CHECK(!bg.p->sig_stopped);
    CHECK_EQ(tproc_ended(&bg), -1);
    CHECK_EQ(tproc_ended(&leader), -1);
    CHECK_EQ(tproc_ended(&other_session), -1);
    tproc_free(&other_session);
    tproc_free(&bg);
    tproc_free(&leader);
}

/* fork copies dispositions, the mask and the alternate stack; execve resets caught
 * handlers (SIG_IGN stays) and the alternate stack, and keeps mask and timers. */
static void fork_and_exec(void)
{
    struct tproc c;
    fake_proc_mem_next = MEM;
    c.p = proc_create(parent.p);
    memset(&c.t, 0, sizeof(c.t));
    c.t.tid = c.p->pid;
    c.t.proc = c.p;
    tsigaction(&parent, SIGUSR1, HANDLER, SA_RESTART, SIG_BIT(SIGTERM));
    tsigaction(&parent, SIGUSR2, SIG_IGN, 0, 0);
    parent.t.sig_blocked = SIG_BIT(SIGINT);
    parent.t.ss_sp = 0x1000;
    parent.t.ss_size = 0x4000;
    signal_fork(c.p, parent.p, false, &c.t, &parent.t);
    CHECK(c.p->sig_hand->act[SIGUSR1 - 1].handler == HANDLER &&
          c.p->sig_hand->act[SIGUSR1 - 1].mask == SIG_BIT(SIGTERM));
    CHECK_EQ(c.t.sig_blocked, SIG_BIT(SIGINT));
    CHECK_EQ(c.t.ss_size, 0x4000);
    CHECK(c.p->sig_threads == &c.t);
    tcall(&c, 37, 100, 0, 0, 0);
    signal_exec(c.p);
    CHECK_EQ(c.p->sig_hand->act[SIGUSR1 - 1].handler, SIG_DFL);
    CHECK_EQ(c.p->sig_hand->act[SIGUSR1 - 1].flags, 0);
    CHECK_EQ(c.p->sig_hand->act[SIGUSR2 - 1].handler, SIG_IGN);
    CHECK_EQ(c.t.sig_blocked, SIG_BIT(SIGINT));
    CHECK_EQ(c.t.ss_size, 0);
    CHECK(c.p->sig_alarm.armed);
    /* a clone thread inherits the mask; a thread-directed signal goes to it alone */
    struct uthread t2 = {.tid = 4242, .proc = c.p};
    signal_thread_new(&t2, &c.t);
    CHECK_EQ(t2.sig_blocked, SIG_BIT(SIGINT));
    tsigaction(&c, SIGUSR1, HANDLER, 0, 0);
    CHECK_EQ(tcall(&c, 234, (uint64_t)c.p->pid, 4242, SIGUSR1, 0), 0);
    CHECK_EQ(t2.sig_pending.set, SIG_BIT(SIGUSR1));
    CHECK_EQ(fake_interrupt_tid, 4242);
    CHECK(!tanswer(&c, 0));                                      /* not for the caller */
    CHECK_EQ(tcall(&c, 200, 4242, 0, 0, 0), 0);
    CHECK_EQ(tcall(&c, 200, 4243, SIGUSR1, 0, 0), -ESRCH);
    signal_thread_exit(&t2);
    CHECK(c.p->sig_threads == &c.t);
    tproc_free(&c);
    parent.t.sig_blocked = 0;
    parent.t.ss_sp = parent.t.ss_size = 0;
}

/* CLONE_SIGHAND: the child shares the parent's table (a sigaction by either is the
 * other's), until its execve copies it and resets the copy alone; the table lives until
 * the last sharer goes. */
static void fork_sighand(void)
{
    struct tproc c;
    fake_proc_mem_next = MEM;
    c.p = proc_create(parent.p);
    memset(&c.t, 0, sizeof(c.t));
    c.t.tid = c.p->pid;
    c.t.proc = c.p;
    signal_fork(c.p, parent.p, true, &c.t, &parent.t);
    CHECK(c.p->sig_hand == parent.p->sig_hand && parent.p->sig_hand->refs == 2);
    tsigaction(&c, SIGUSR1, HANDLER, 0, 0);
    CHECK_EQ(parent.p->sig_hand->act[SIGUSR1 - 1].handler, HANDLER);
    CHECK_EQ(signal_exec(c.p), 0);
    CHECK(c.p->sig_hand != parent.p->sig_hand && parent.p->sig_hand->refs == 1);
    CHECK_EQ(c.p->sig_hand->act[SIGUSR1 - 1].handler, SIG_DFL);
    CHECK_EQ(parent.p->sig_hand->act[SIGUSR1 - 1].handler, HANDLER);
    tproc_free(&c);
    tsigaction(&parent, SIGUSR1, SIG_DFL, 0, 0);
}

/* ppoll's mask: in force while it waits; a signal it blocks does not end the wait; a
 * caught one does, and its frame saves the old mask, so the blocked one comes after
 * sigreturn; a call that does not wait restores the old mask at once. */
static void ppoll_mask(void)
{
    struct tproc c;
    job_new(&c);
    tsigaction(&c, SIGUSR1, HANDLER, 0, 0);
    tsigaction(&c, SIGUSR2, HANDLER2, 0, 0);
    uint64_t mask = SIG_BIT(SIGUSR1);
    memcpy(H(&c, ARG), &mask, sizeof(mask));
    CHECK_EQ(tcall(&c, 271, 0, 0, 0, U(&c, ARG)), -EINVAL);        /* sigsetsize 0 */
    CHECK_EQ(c.t.sig_blocked, 0);
    struct ucall again = fake_call(c.p, 271, 0, 0, 0, U(&c, ARG));
    again.a[4] = 8;
    again.thread = &c.t;
    CHECK_EQ(unix_dispatch(&again), UNIX_BLOCKED);                 /* no fds, no timeout */
    CHECK_EQ(c.t.sig_blocked, SIG_BIT(SIGUSR1));
    fake_answers = 0;
    signal_send(c.p, SIGUSR1);
    CHECK_EQ(fake_answers, 0);                                      /* still waiting */
    signal_send(c.p, SIGUSR2);
    CHECK_EQ(fake_answer, -ERESTARTNOHAND);
    fake_regs = regs_in_call(&c, 271);
    CHECK(tanswer(&c, fake_answer));
    CHECK_EQ(fake_regs.rip, HANDLER2);
    CHECK_EQ(frame_at(&c, fake_regs.rsp)->uc.uc_sigmask, 0);       /* the old mask */
    CHECK_EQ(frame_at(&c, fake_regs.rsp)->uc.uc_mcontext.rax, (uint64_t)-EINTR);
    treturn(&c);
    CHECK_EQ(fake_regs.rip, HANDLER);                               /* USR1, unblocked now */
    treturn(&c);
    CHECK_EQ(fake_regs.rax, (uint64_t)-EINTR);
    struct linux_timespec zero = {0, 0};
    memcpy(H(&c, ARG2), &zero, sizeof(zero));
    CHECK_EQ(tcall(&c, 271, 0, 0, U(&c, ARG2), U(&c, ARG)), -EINVAL);
    again = fake_call(c.p, 271, 0, 0, U(&c, ARG2), U(&c, ARG));
    again.a[4] = 8;
    again.thread = &c.t;
    CHECK_EQ(unix_dispatch(&again), 0);                             /* timed out at once */
    CHECK_EQ(c.t.sig_blocked, 0);
    CHECK(!c.t.sig_restore_mask);
    again.a[3] = 8;
    CHECK_EQ(unix_dispatch(&again), -EFAULT);
    CHECK_EQ(c.t.sig_blocked, 0);
    tproc_free(&c);
}

/* kill(0), kill(-pgid), kill(-1): groups and everyone; ESRCH for an empty group. */
static void kill_targets(void)
{
    struct tproc a, b;
    tproc_new(&a, &parent);
    tproc_new(&b, &parent);
    a.p->pgid = b.p->pgid = a.p->pid;
    CHECK_EQ(tcall(&a, 62, 0, SIGUSR2, 0, 0), 0);
    CHECK_EQ(b.p->sig_pending.set, SIG_BIT(SIGUSR2));
    CHECK_EQ(a.p->sig_pending.set, SIG_BIT(SIGUSR2));
    CHECK_EQ(tcall(&parent, 62, (uint64_t)-(int64_t)a.p->pid, SIGUSR1, 0, 0), 0);
    CHECK_EQ(b.p->sig_pending.set, SIG_BIT(SIGUSR2) | SIG_BIT(SIGUSR1));
    CHECK_EQ(tcall(&parent, 62, (uint64_t)-(int64_t)a.p->pid, 99, 0, 0), -EINVAL);
    CHECK_EQ(tcall(&parent, 62, (uint64_t)-30000, SIGUSR1, 0, 0), -ESRCH);
    CHECK_EQ(tcall(&parent, 62, 0x80000000u, SIGUSR1, 0, 0), -ESRCH);
    CHECK_EQ(tcall(&a, 62, (uint64_t)-1, SIGURG, 0, 0), 0);
    CHECK_EQ(tcall(&parent, 62, (uint64_t)-1, 0, 0, 0), 0);
    tproc_free(&b);
    tproc_free(&a);
    CHECK_EQ(tcall(&parent, 62, (uint64_t)-1, 0, 0, 0), -ESRCH);  /* nobody but init */
}

int main(void)
{
    tproc_new(&init, NULL);
    tproc_new(&parent, &init);
    defaults();
    stop_and_continue();
    sigchld();
    sigpipe();
    timers_and_eintr();
    faults();
    job_control();
    fork_and_exec();
    fork_sighand();
    kill_targets();
    ppoll_mask();
    tproc_free(&parent);
    tproc_free(&init);
    return fake_done();
}
