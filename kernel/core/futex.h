/*
 * Futexes (futex.c): wait on a 32-bit word in user memory until another thread of the same
 * address space wakes it (docs/syscalls.md, SYS_FUTEX_WAIT / SYS_FUTEX_WAKE). User locks
 * (lib/malloc's blocking mutex) sleep here instead of spinning or yielding.
 */
#ifndef FUTEX_H
#define FUTEX_H
#include "types.h"

/* If the word at uaddr (4-byte aligned) still holds `expected`, block until a wake on it,
 * `timeout` ticks (SLEEP_FOREVER: none) or a kill. 0 woken, FUTEX_CHANGED (the word
 * differed: not blocked), E_TIMEOUT, E_DEAD (killed), E_INVAL (alignment), E_FAULT. */
long futex_wait(u64 uaddr, u32 expected, u64 timeout);
/* Wakes up to n threads of the caller's address space waiting on uaddr, oldest first;
 * returns how many. E_INVAL (alignment, n < 0), E_FAULT (not a user address). */
long futex_wake(u64 uaddr, u64 n);
#endif
