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

static inline long sys_null(void) { return SC0(SYS_NULL); }
static inline __attribute__((noreturn)) void sys_exit(int status)
{
    SC1(SYS_EXIT, status);
    __builtin_unreachable();
}
static inline long sys_console_write(const char *buf, size_t len) { return SC2(SYS_CONSOLE_WRITE, buf, len); }
static inline long sys_console_read(char *buf, size_t len) { return SC2(SYS_CONSOLE_READ, buf, len); }
static inline long sys_spawn(const char *prog, const char *const *argv, int argc, unsigned flags)
{
    return SC4(SYS_SPAWN, prog, argv, argc, flags);
}
static inline long sys_task_wait(int task, int *status) { return SC2(SYS_TASK_WAIT, task, status); }
static inline long sys_thread_create(void (*entry)(void *), void *stack_top, void *arg, int prio)
{
    return SC4(SYS_THREAD_CREATE, entry, stack_top, arg, prio);
}
static inline __attribute__((noreturn)) void sys_thread_exit(int status)
{
    SC1(SYS_THREAD_EXIT, status);
    __builtin_unreachable();
}
static inline long sys_thread_join(int tid, int *status) { return SC2(SYS_THREAD_JOIN, tid, status); }
static inline long sys_yield(void) { return SC0(SYS_YIELD); }
static inline long sys_sleep(uint64_t ticks) { return SC1(SYS_SLEEP, ticks); }
static inline long sys_vm_map(size_t len, unsigned prot) { return SC2(SYS_VM_MAP, len, prot); }
static inline long sys_vm_unmap(void *addr, size_t len) { return SC2(SYS_VM_UNMAP, addr, len); }
static inline long sys_self(struct self_info *out) { return SC1(SYS_SELF, out); }
static inline long sys_ps(struct ps_entry *out, int max) { return SC2(SYS_PS, out, max); }
static inline long sys_meminfo(struct meminfo *out) { return SC1(SYS_MEMINFO, out); }
static inline long sys_time(struct time_info *out) { return SC1(SYS_TIME, out); }
static inline long sys_poweroff(void) { return SC0(SYS_POWEROFF); }
static inline long sys_result_write(const char *buf, size_t len) { return SC2(SYS_RESULT_WRITE, buf, len); }
static inline long sys_set_priority(int tid, int prio) { return SC2(SYS_SET_PRIORITY, tid, prio); }
static inline long sys_kopt(const char *key, char *buf, size_t len) { return SC3(SYS_KOPT, key, buf, len); }

#endif
