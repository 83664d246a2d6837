/* The allocator's lock kinds, see lock.h. */
#include <stddef.h>

#include "lock.h"
#include "platform.h"

#define SPIN_TRIES 100u
#define SLEEP_RETRY_MS 10u

static const char *const kind_names[LOCK_KINDS] = {"sleep-retry", "blocking", "lock-free"};

static int same_word(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

int lock_kind_parse(const char *name)
{
    for (int k = 0; k < LOCK_KINDS; k++) {
        if (same_word(name, kind_names[k]))
            return k;
    }
    return -1;
}

const char *lock_kind_name(enum lock_kind kind)
{
    return kind_names[kind];
}

static inline void cpu_relax(void)
{
    __asm__ volatile("pause" ::: "memory");
}

/* uClibc's way (P2): the holder is expected to be quick, so spin a little on the flag;
 * when that fails, give up the CPU for a whole 10 ms before trying again. The 10 ms
 * is what makes P2's rare long outliers. */
static void acquire_sleep_retry(struct mlock *l)
{
    for (;;) {
        for (unsigned i = 0; i < SPIN_TRIES; i++) {
            if (__atomic_load_n(&l->word, __ATOMIC_RELAXED) == 0 &&
                __atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE) == 0)
                return;
            cpu_relax();
        }
        os_sleep_ms(SLEEP_RETRY_MS);
    }
}

/* Drepper's three-state futex mutex: waiters mark the word 2 so that the releasing
 * thread knows it must wake one. */
static void acquire_blocking(struct mlock *l)
{
    int c = 0;
    if (__atomic_compare_exchange_n(&l->word, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return;
    if (c != 2)
        c = __atomic_exchange_n(&l->word, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        os_wait(&l->word, 2);
        c = __atomic_exchange_n(&l->word, 2, __ATOMIC_ACQUIRE);
    }
}

void mlock_acquire(struct mlock *l, enum lock_kind kind)
{
    if (kind == LOCK_SLEEP_RETRY)
        acquire_sleep_retry(l);
    else
        acquire_blocking(l);
}

void mlock_release(struct mlock *l, enum lock_kind kind)
{
    if (kind == LOCK_SLEEP_RETRY) {
        __atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
        return;
    }
    if (__atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE) == 2)
        os_wake(&l->word);
}
