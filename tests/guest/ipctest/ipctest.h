/*
 * ipctest: what the areas (order.c, timeout.c, dead.c, perm.c, buf.c, prio.c, storm.c)
 * share: the failure counter and its CHECK/EXPECT reports, thread and message helpers
 * (helpers.c), and each area's entry points, called from the mode table in main.c.
 *
 * Built without SSE code (the pragma below, before any other declaration), so that these
 * checks do not depend on the kernel's FPU state handling, which has its own test
 * (schedtest fpu). Every .c of ipctest includes this header first.
 */
#ifndef IPCTEST_H
#define IPCTEST_H

#pragma GCC target("general-regs-only")

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>

#define STACK (16 * 1024)
#define PAGE 4096

/* The start signal a test sends to its helper task (permchild, permgrand, stormserve). */
enum { TAG_GO = 0x6f67 };

/* ---- failure reports (helpers.c) ---------------------------------------------------- */
extern const char *mode;        /* argv[1], named in every FAIL line */
extern int fails;               /* failed checks so far; the exit status of a mode */

/* A failed check prints "FAIL <mode> (<file>:<line>): <message>" and counts in `fails`. */
#define CHECK(cond, ...) check_((cond), __FILE_NAME__, __LINE__, __VA_ARGS__)
/* Check that `got` equals `want` and return `got`; the message names the operation. */
#define EXPECT(got, want, ...) \
    expect_((long)(got), (long)(want), __FILE_NAME__, __LINE__, __VA_ARGS__)

__attribute__((format(printf, 4, 5)))
void check_(int ok, const char *file, int line, const char *fmt, ...);
__attribute__((format(printf, 5, 6)))
long expect_(long got, long want, const char *file, int line, const char *fmt, ...);

/* ---- helpers (helpers.c) ------------------------------------------------------------ */
uint64_t now(void);                                   /* the tick count */
int state_of(int tid);
int wait_state(int tid, int state, int max_ticks);
int tid_of_task(int task, int max_ticks);
int start(struct thread *t, thread_fn fn, void *arg, int prio);   /* checked thread_start */
int join(struct thread *t);                           /* checked thread_join: the status */
void msg_make(struct ipc_msg *m, uint64_t key);
int msg_ok(const struct ipc_msg *m);
void *map_pages(int n);                               /* checked, NULL on failure */
char *tidstr(char *buf, long v);                      /* v in decimal in buf[16] */

/* A sender thread's orders (dest, idx, rounds, delay) and result (res); see sender_fn. */
struct snd {
    int dest, idx, rounds, delay;
    long res;
};
int sender_fn(void *p);                               /* p: struct snd */
int sleeper_fn(void *p);                              /* p: ticks to sleep, then exit 0 */

/* ---- areas: each test_* runs one mode; the helper tasks they spawn return their fails */
void test_order(void);
void test_timeout(void);
void test_dead(void);
int killpeer(int parent);
void test_perm(void);
int permchild(int parent, int parent_t2, int parent_t3);
int permgrand(int parent_main, int parent);
void test_buf(void);
int bufpeer(int parent);
void test_prio(void);
void test_storm(int clients, int servers, int per_client);
void test_storm_tasks(int clients, int servers, int per_client);
int stormserve(int servers, int parent);
void test_diff(uint64_t seed, int steps);
int diffpeer(void);

#endif
