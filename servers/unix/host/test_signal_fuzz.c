/* Signals under random use (fixed seed): the signal calls with random arguments (good,
 * bad and unmapped pointers, any signal number), sends from other processes and the tty,
 * faults, timers, answers and handler returns, in random order. Nothing may crash, leak
 * or break an invariant: SIGKILL/SIGSTOP never blocked, queues within their bound and
 * consistent with their sets, every frame at rsp = 8 mod 16 inside user memory. A process
 * that ends is replaced. */
#include <stdio.h>
#include "signal_test.h"

#define PROCS 3
#define ROUNDS 200000

static uint64_t seed = 0x5eed5157ull;

static uint64_t rnd(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

static struct tproc init, procs[PROCS];

/* An argument: a user pointer (in, at the edge of, or outside memory) or a number. */
static uint64_t arg(struct tproc *tp)
{
    switch (rnd() % 6) {
    case 0: return U(tp, rnd() % 0x800);
    case 1: return U(tp, MEM - rnd() % 16);
    case 2: return rnd() % 70;
    case 3: return (uint64_t)-(int64_t)(rnd() % 4);
    case 4: return 8;
    default: return rnd();
    }
}

static const long calls[] = {13, 14, 15, 34, 36, 37, 38, 62, 127, 128, 129, 130, 131, 200, 234};

static bool queue_ok(const struct sig_pending *q)
{
    unsigned n = 0;
    for (const struct sig_queued *e = q->queue; e; e = e->next, n++)
        if (!(q->set & SIG_BIT(e->info.signo)))
            return false;
    return n == q->queued && n <= SIG_QUEUE_MAX;
}

static void check_invariants(struct tproc *tp)
{
    CHECK(!(tp->t.sig_blocked & SIG_UNBLOCKABLE));
    CHECK(queue_ok(&tp->t.sig_pending) && queue_ok(&tp->p->sig_pending));
}

static void one_call(struct tproc *tp)
{
    if (tp->t.wait || tp->t.sig_held)
        return;                                   /* it waits: no call from it now */
    long nr = calls[rnd() % (sizeof calls / sizeof calls[0])];
    if (nr == 62 || nr == 200 || nr == 234) {     /* mostly to live processes */
        struct tproc *to = &procs[rnd() % PROCS];
        uint64_t sig = rnd() % 66;
        long r = nr == 62 ? tcall(tp, 62, (uint64_t)to->p->pid, sig, 0, 0)
                 : nr == 200 ? tcall(tp, 200, (uint64_t)to->t.tid, sig, 0, 0)
                 : tcall(tp, 234, (uint64_t)to->p->pid, (uint64_t)to->t.tid, sig, 0);
        if (!tp->p->zombie)
            tanswer(tp, r);
        return;
    }
    uint64_t saved_rsp = regs_in_call(tp, nr).rsp;
    long r = tcall(tp, nr, arg(tp), arg(tp), arg(tp), arg(tp));
    if (r == UNIX_BLOCKED || tp->p->zombie)
        return;
    if (nr == 15) {
        tp->t.in_call = false;
        signal_deliver(&tp->t, r);
    } else if (tanswer(tp, r) && !tp->p->zombie && !tp->t.sig_held &&
               fake_regs.rip != CALL_RIP && fake_regs.rip != CALL_RIP - 2) {
        CHECK_EQ(fake_regs.rsp % 16, 8);          /* a handler's frame */
        CHECK(fake_regs.rsp < saved_rsp - 128 || (fake_regs.rsp >= U(tp, 0) &&
                                                   fake_regs.rsp < U(tp, MEM)));
    }
}

static void one_event(void)
{
    struct tproc *tp = &procs[rnd() % PROCS];
    switch (rnd() % 8) {
    case 0:
        signal_send(tp->p, (int)(rnd() % 66));
        break;
    case 1:
        signal_send_pgrp(tp->p->pgid, (int)(1 + rnd() % 31));
        break;
    case 2:
        if (!tp->t.wait && !tp->t.sig_held) {
            fake_regs = regs_in_call(tp, 0);
            signal_fault(&tp->t, (unsigned)(rnd() % 20), rnd() % 8, rnd(), CALL_RIP);
        }
        break;
    case 3:
        fake_now_ns += rnd() % 50000000;
        unix_timers_expire(fake_now_ns);
        unix_run_woken();
        break;
    case 4:
        if (!tp->t.wait && !tp->t.sig_held) {
            fake_regs = regs_in_call(tp, 0);
            signal_deliver(&tp->t, SIGNAL_INTERRUPTED);   /* an interrupt comes in */
        }
        break;
    default:
        one_call(tp);
        break;
    }
}

/* Handlers with random flags for most signals, and sometimes an alternate stack, so
 * that delivery builds frames more often than it ends processes. */
static void catch_most(struct tproc *tp)
{
    static const uint64_t flags[] = {SA_RESTART, SA_NODEFER, SA_ONSTACK, SA_SIGINFO,
                                     SA_RESETHAND};
    for (int sig = 1; sig <= LINUX_NSIG; sig++) {
        if (SIG_BIT(sig) & SIG_UNBLOCKABLE || rnd() % 4 == 0)
            continue;
        uint64_t f = flags[rnd() % 5] | flags[rnd() % 5];
        tsigaction(tp, sig, HANDLER, f, rnd() & rnd());
    }
    if (rnd() % 2) {
        tp->t.ss_sp = U(tp, ALT);
        tp->t.ss_size = ALT_SIZE;
    }
}

static void new_proc(struct tproc *tp)
{
    tproc_new(tp, &init);
    catch_most(tp);
}

/* Processes that ended (zombies) are replaced by new ones: how many. */
static int replace_ended(void)
{
    int ended = 0;
    for (int i = 0; i < PROCS; i++) {
        if (!procs[i].p->zombie)
            continue;
        ended++;
        tproc_free(&procs[i]);
        new_proc(&procs[i]);
    }
    return ended;
}

int main(void)
{
    tproc_new(&init, NULL);
    for (int i = 0; i < PROCS; i++)
        new_proc(&procs[i]);
    int ended = 0, frames_before = fake_regs_sets;
    for (int round = 0; round < ROUNDS; round++) {
        one_event();
        ended += replace_ended();
        for (int i = 0; i < PROCS; i++)
            check_invariants(&procs[i]);
    }
    printf("%d processes ended, %d register sets\n", ended, fake_regs_sets - frames_before);
    CHECK(ended > 100);
    CHECK(fake_regs_sets - frames_before > 1000);
    for (int i = 0; i < PROCS; i++)
        tproc_free(&procs[i]);
    tproc_free(&init);
    return fake_done();
}
