/*
 * A fake of what the server's core and runtime provide, for hosted unit tests of the
 * server's parts (servers/unix/unix.mk). A process's "user memory" is one host buffer
 * (fake_proc_memory): copy_in/copy_out check addresses against it exactly as the real ones
 * check a task's address space, so EFAULT cases are testable. ucall_block records the call
 * instead of queueing it; waitlist_wake counts; the clock is set by the test.
 */
#ifndef UNIX_FAKE_H
#define UNIX_FAKE_H
#include "unix.h"

/* A process whose user memory is `len` zeroed bytes; user address 0x10000 is its first
 * byte (fake_user(p, 0)), so NULL and small addresses fault as they do on Linux. */
struct proc *fake_proc(size_t len);
void fake_proc_free(struct proc *p);   /* LeakSanitizer checks the rest */
uint64_t fake_user(struct proc *p, size_t offset);      /* user address of a byte */
void *fake_host(struct proc *p, uint64_t uaddr);        /* host pointer of a user address */
struct ucall fake_call(struct proc *p, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
                       uint64_t a3);

extern int fake_blocked;          /* calls ucall_block has seen */
extern struct waitlist *fake_blocked_on;   /* the list of the last one */
extern uint64_t fake_blocked_deadline;
extern int fake_wakes;            /* waitlist_wake calls */
extern uint64_t fake_now_ns;      /* unix_now_ns() returns this */
extern long fake_alloc_fail_after;   /* >= 0: unix_alloc fails after this many more */
extern size_t fake_alloc_max;        /* not 0: unix_alloc fails larger blocks */
/* The runtime's side (unix-core): answers and log lines are recorded; unix_alloc is
 * calloc. ucall_block and waitlist_wake are weak here, so a test that uses the core's
 * wait.c (it calls unix_dispatch or unix_run_woken) gets the real ones. */
extern int fake_answers;          /* unix_answer calls */
extern long fake_answer;          /* the last result */
extern int fake_answer_tid;       /* the last answered call's thread (0 without one) */
extern int fake_logs;             /* unix_log calls */
extern char fake_log[128];        /* the last line */

/* Tests: CHECK(cond) prints the file, line and expression and counts a failure;
 * fake_done() prints "N checks, M failed" and gives the exit status. */
extern int fake_checks, fake_failures;
#define CHECK(cond) fake_check((cond), #cond, __FILE__, __LINE__)
#define CHECK_EQ(a, b) fake_check_eq((long)(a), (long)(b), #a, #b, __FILE__, __LINE__)
void fake_check(bool ok, const char *what, const char *file, int line);
void fake_check_eq(long a, long b, const char *sa, const char *sb, const char *file, int line);
int fake_done(void);
/* ---- fakes of what unix-dev's parts need from the others (devices.h) ----
 * Weak definitions: when the real one is in libunix.a and linked, it wins. */
#include "devices.h"
void fake_fds(struct proc *p);          /* give p an empty fd table */
void fake_fds_free(struct proc *p);     /* close every fd of p and free the table */
extern int fake_sigpipes;               /* signal_send_pipe calls */
extern int fake_pgrp_signals;           /* signal_send_pgrp calls */
extern int fake_last_pgrp, fake_last_sig;
extern int fake_tty_background_calls, fake_tty_background_sig;
extern long fake_tty_background_result; /* what signal_tty_background returns (0: go on) */
extern char fake_console[8192];         /* what console_write wrote */
extern size_t fake_console_len;
/* /proc's providers (procfs.h): proc_view_of gives comm fake_view_comm, utime = pid, exe
 * fake_view_exe and the argument area fake_view_args (none for a zombie);
 * proc_system_view fixed numbers (128 MiB, 2 CPUs, uptime = fake_now_ns);
 * unix_switch_counts the two counters. */
#include "procfs.h"
extern const char *fake_view_exe, *fake_view_comm, *fake_view_args;
extern size_t fake_view_args_len;
extern uint64_t fake_thread_switches, fake_as_switches;
/* ---- fakes of what signals need (signal.h, runtime.h), weak ----
 * One thread's registers (rt_regs_get/rt_regs_set; a set with rip or rsp outside the
 * user half fails as the kernel's does); proc_exit marks the process a zombie with the
 * status (as the real one, which wins when a test links lifecycle.c: tests read
 * p->zombie and p->exit_status); thread_linux_tid is t->tid. */
#include <ondol/abi.h>
#include "signal.h"
extern struct user_regs fake_regs;
extern int fake_regs_sets;              /* successful rt_regs_set calls */
extern int fake_interrupts, fake_interrupt_tid;   /* rt_thread_interrupt calls, last tid */
extern int fake_parent_wakes;           /* proc_wake_parent calls */
/* When not 0, the next unix_alloc of a struct proc (proc_create: the real process table)
 * gives it this many bytes of user memory, as fake_proc does. */
extern size_t fake_proc_mem_next;
#endif
