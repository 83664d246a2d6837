/*
 * ipctest MODE: checks of the IPC semantics (docs/ipc.md), driven by tests/test_ipc.py.
 *
 * Every check that does not hold prints "FAIL <mode> (<file>:<line>): ..."; a mode ends with
 * "ipctest MODE ok" or "ipctest MODE FAIL <count>" and exits with the failure count.
 * Measured quantities are printed as "<mode> <what> r=<result> ticks=<elapsed>" so the
 * host test can check them as well.
 *
 *   order       blocked senders are served in arrival order (FIFO); receive-from-any
 *               reports the right sender; a closed receive picks one sender out of the
 *               queue (or waits for it) and leaves the others in order; IPC to ourselves
 *               fails (E_DEADLK)
 *   timeout     poll, N ticks and forever, for send, recv, call and reply_recv
 *   dead        the partner exits while we are blocked (E_DEAD); IPC to exited, freed,
 *               unknown thread ids (E_DEAD / E_SRCH); a child task (`killpeer`) exits
 *               while its threads wait in our queues
 *   perm        access control: no right (E_PERM), SYS_IPC_GRANT, the one-shot reply
 *               right, delegation to a grandchild; uses `permchild` and `permgrand`
 *   buf         long messages between two tasks (`bufpeer`) and two threads:
 *               page-crossing buffers up to 4096 bytes, bad pointers, E_2BIG
 *   prio        the L4 priority rule; expected orders depend on the dts option
 *   storm C S M [tasks]
 *               C client threads each send M sequence-numbered messages round-robin to
 *               S server threads, half as call (checked replies), half as send; with
 *               `tasks` the servers live in a child task (`stormserve`)
 *   diff SEED STEPS
 *               randomised IPC sequences for the fastpath's differential test (diff.c):
 *               the output must not depend on the ipc_fastpath option; uses `diffpeer`
 *   sleeper N   (helper) sleep N ticks and exit
 *
 * One file per mode (order.c, timeout.c, ...; helpers.c has what they share). This file is
 * the mode table: the modes a test runs, and the helper modes those tests spawn as child
 * tasks of ipctest itself.
 */
#include "ipctest.h"

/* Helper modes take integer arguments (thread ids, counts) from argv[2..]. */
static int sleeper_mode(char **argv)
{
    sys_sleep((uint64_t)atoi(argv[2]));
    return 0;
}

static int permchild_mode(char **argv)
{
    return permchild(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
}

static int permgrand_mode(char **argv)
{
    return permgrand(atoi(argv[2]), atoi(argv[3]));
}

static int bufpeer_mode(char **argv)
{
    return bufpeer(atoi(argv[2]));
}

static int stormserve_mode(char **argv)
{
    return stormserve(atoi(argv[2]), atoi(argv[3]));
}

static int diffpeer_mode(char **argv)
{
    (void)argv;
    return diffpeer();
}

static int killpeer_mode(char **argv)
{
    return killpeer(atoi(argv[2]));
}

/* A helper mode runs only with all its arguments (argc >= min_argc); its exit status is
 * its own failure count. */
static const struct {
    const char *name;
    int min_argc;
    int (*run)(char **argv);
} helpers[] = {
    {"sleeper", 3, sleeper_mode},
    {"permchild", 5, permchild_mode},
    {"permgrand", 4, permgrand_mode},
    {"bufpeer", 3, bufpeer_mode},
    {"stormserve", 4, stormserve_mode},
    {"killpeer", 3, killpeer_mode},
    {"diffpeer", 2, diffpeer_mode},
};

/* storm C S M [tasks]: the one test mode with arguments. */
static void storm_mode(int argc, char **argv)
{
    if (argc > 5 && !strcmp(argv[5], "tasks"))
        test_storm_tasks(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    else
        test_storm(argc > 2 ? atoi(argv[2]) : 48, argc > 3 ? atoi(argv[3]) : 16,
                   argc > 4 ? atoi(argv[4]) : 20834);
}

static const struct {
    const char *name;
    void (*run)(void);
} tests[] = {
    {"order", test_order},
    {"timeout", test_timeout},
    {"dead", test_dead},
    {"perm", test_perm},
    {"buf", test_buf},
    {"prio", test_prio},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Runs test mode `name`; 0 if there is none. */
static int run_test(const char *name, int argc, char **argv)
{
    if (!strcmp(name, "storm")) {
        storm_mode(argc, argv);
        return 1;
    }
    if (!strcmp(name, "diff")) {
        test_diff(argc > 2 ? (uint64_t)atoi(argv[2]) : 1, argc > 3 ? atoi(argv[3]) : 200);
        return 1;
    }
    for (unsigned i = 0; i < COUNT(tests); i++)
        if (!strcmp(name, tests[i].name)) {
            tests[i].run();
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: ipctest order|timeout|dead|perm|buf|prio|storm C S M|diff SEED STEPS\n");
        return 2;
    }
    mode = argv[1];
    for (unsigned i = 0; i < COUNT(helpers); i++)
        if (!strcmp(mode, helpers[i].name) && argc >= helpers[i].min_argc)
            return helpers[i].run(argv);
    if (!run_test(mode, argc, argv)) {
        printf("ipctest: unknown mode %s\n", mode);
        return 2;
    }
    if (fails)
        printf("ipctest %s FAIL %d\n", mode, fails);
    else
        printf("ipctest %s ok\n", mode);
    return fails != 0;
}
