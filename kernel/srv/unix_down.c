/*
 * The MK UNIX server's death (docs/unix.md, "Reliability"). The server runs init, every
 * Linux process and the console, so once its task has ended (a bug of its own, or a
 * test's unix_crash=N) nothing can go on. What the kernel has done by then: every Linux
 * thread blocked in a forwarded call was released and its task killed (ipc_thread_exited
 * -> fwd_server_gone, kernel/ipc/fwd.c), and a Linux thread that makes a call later
 * finds no server and is killed (no_server). Here a kernel thread kills the Linux tasks
 * that are still running (one looping without system calls would never notice), waits
 * until they have all ended, says how many there were and powers off with a failure
 * status, instead of leaving a machine that looks alive and answers nothing.
 */
#include <ondol/abi.h>
#include "arch.h"
#include "kernel.h"
#include "sched.h"
#include "task.h"
#include "thread.h"
#include "unix_down.h"
#include "waitq.h"

static int dead_server;                 /* the linux_server of the tasks to end */

/* Count the live tasks the dead server served, and kill each (again: a kill is kept). */
static void kill_client(struct task *t, void *live)
{
    if (t->linux_server != dead_server || t->zombie)
        return;
    (*(int *)live)++;
    task_kill_except(t, KILLED_STATUS, NULL);
}

static int kill_clients(void)
{
    int live = 0;
    tasks_each(kill_client, &live);
    return live;
}

static void shutdown_main(void)
{
    thread_first_run();
    struct waitq tick = {0};
    int clients = kill_clients();
    while (kill_clients() > 0)
        waitq_sleep(&tick, 1);
    printk("unix: the server's %d Linux tasks have ended; powering off\n", clients);
    power_off_failed(UNIX_DIED_EXIT_CODE);
}

void unix_server_died(int server_tid)
{
    dead_server = server_tid;
    struct thread *t = thread_create_kernel(shutdown_main, PRIO_MAX);
    if (!t) {
        printk("unix: no memory to end the server's tasks; powering off\n");
        power_off_failed(UNIX_DIED_EXIT_CODE);
    }
    make_ready(t);
}
