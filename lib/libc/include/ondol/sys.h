/* User-space wrappers for the ondol system calls (see lib/include/ondol/abi.h). */
#ifndef ONDOL_SYS_H
#define ONDOL_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <ondol/abi.h>

static inline long syscall6(long n, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

#define SC0(n)             syscall6((n), 0, 0, 0, 0, 0, 0)
#define SC1(n, a)          syscall6((n), (long)(a), 0, 0, 0, 0, 0)
#define SC2(n, a, b)       syscall6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define SC3(n, a, b, c)    syscall6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SC4(n, a, b, c, d) syscall6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/* SC(n, args...): syscall6 with up to six arguments cast to long, the rest zero. */
#define SC(n, ...) SC_PAD_((n) __VA_OPT__(,) __VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define SC_PAD_(n, a, b, c, d, e, f, ...) \
    syscall6(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define SC_CALL_(n, ...) SC(n, __VA_ARGS__)   /* expands a parenthesised argument list */
#define SC_ARGS_(...) __VA_ARGS__

/* One stub per line of <ondol/syscalls.def>: long sys_<name>(parameters), returning the
 * kernel's result (>= 0, or an E_* code); the no-return calls never come back. IPC calls
 * have their own convention and wrappers in <ondol/ipc.h>. */
#define SYSCALL(num, NAME, name, params, args, result) \
    static inline long sys_##name params { return SC_CALL_(SYS_##NAME, SC_ARGS_ args); }
#define SYSCALL_NORETURN(num, NAME, name, params, args, result)  \
    static inline __attribute__((noreturn)) void sys_##name params \
    {                                                           \
        SC_CALL_(SYS_##NAME, SC_ARGS_ args);                    \
        __builtin_unreachable();                                \
    }
#define SYSCALL_UNLOCKED SYSCALL
#define SYSCALL_IPC(...)
#include <ondol/syscalls.def>
#undef SYSCALL
#undef SYSCALL_NORETURN
#undef SYSCALL_UNLOCKED
#undef SYSCALL_IPC

#endif
