/*
 * The temporary signal mask of ppoll and pselect6 (signal.h): set while the call runs
 * and waits, the old one saved as rt_sigsuspend saves it, so signal_deliver restores it
 * after the handler of a signal that ended the wait. Its own file: poll.c needs only
 * this of the signal code.
 */
#include "signal_impl.h"

long signal_mask_begin(struct ucall *c, uint64_t umask)
{
    struct uthread *t = c->thread;
    uint64_t set;
    if (!umask)
        return 0;
    if (copy_in(c->proc, &set, umask, sizeof(set)))
        return -EFAULT;
    if (!t->sig_restore_mask) {
        t->sig_saved_mask = t->sig_blocked;
        t->sig_restore_mask = true;
    }
    t->sig_blocked = set & ~SIG_UNBLOCKABLE;
    return 0;
}

long signal_mask_end(struct ucall *c, long r)
{
    struct uthread *t = c->thread;
    if (r != UNIX_BLOCKED && t->sig_restore_mask) {
        t->sig_blocked = t->sig_saved_mask;
        t->sig_restore_mask = false;
    }
    return r;
}

