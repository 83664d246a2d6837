/*
 * The kernel's table of server interfaces (docs/servers.md). The list comes from
 * tools/idlgen (srv_ik_table.c: every interface in interfaces/, with the dispatch linked
 * into the kernel). At boot each interface NAME gets its placement from the option
 * NAME=mk|ik; without it the server is not started (a lookup gives E_NOENT), so boots that
 * do not ask for a server run exactly as before. With mmu=off the UNIX server is not
 * started either (its Linux programs need address spaces of their own).
 *   MK  the kernel spawns the program NAMEsrv from the boot archive and names its main
 *       thread as the interface's destination; a lookup grants the caller a send right.
 *   IK  the destination is the reserved thread id `iface << THREAD_ID_BITS` (slot 0, which
 *       no thread ever has); the IPC slow path turns a call to it into srv_ik_call.
 */
#include <ondol/srv.h>
#include "ipc.h"
#include "kernel.h"
#include "options.h"
#include "sched.h"
#include "srv.h"
#include "task.h"
#include "thread.h"
#include "unix.h"
#include "unix_down.h"

extern const struct srv_iface *const srv_ifaces[];
extern int *const srv_placements[];
extern const int srv_nifaces;

#define MAX_SERVERS 16
enum where { SRV_OFF, SRV_MK, SRV_IK };  /* = the index of the option's value off|mk|ik */
static struct placement {
    enum where where;
    int tid;                                 /* MK: the server's main thread, 0 if none */
    int task;                                /* MK: the server's task, 0 if none */
} placements[MAX_SERVERS];

static int index_of(u64 iface)
{
    for (int i = 0; i < srv_nifaces; i++)
        if (srv_ifaces[i]->id == iface)
            return i;
    return -1;
}

/* The placement the interface's boot option chose (kernel/boot/options.def: NAME=off|mk|ik,
 * parsed and validated there, so a bad value has already been reported). */
static enum where placement_option(int i)
{
    enum where w = (enum where)*srv_placements[i];
    if (w != SRV_OFF && !mmu_on && srv_ifaces[i]->id == UNIX_IFACE) {
        printk("ondol: the UNIX server needs mmu=on (Linux programs are linked at fixed "
               "addresses, and fork copies an address space): not started\n");
        return SRV_OFF;
    }
    return w;
}

/* The MK server of `s`: a user task named after the program; its id, 0 if none. It is
 * privileged: servers are the system's own parts, and a driver's server (net) claims its
 * device and DMA memory with the privileged device calls (docs/drivers.md). */
static int spawn_server(const struct srv_iface *s)
{
    char prog[NAME_LEN];
    ksnprintf(prog, sizeof(prog), "%ssrv", s->name);
    char *argv[] = {prog};
    long id = task_spawn(NULL, prog, argv, 1, true, PRIO_MAX);
    if (id < 0) {
        printk("ondol: cannot start server %s: error %ld\n", prog, id);
        return 0;
    }
    return (int)id;
}

void srv_start(void)
{
    if (srv_nifaces > MAX_SERVERS)
        panic("srv: %d interfaces, room for %d", srv_nifaces, MAX_SERVERS);
    for (int i = 0; i < srv_nifaces; i++) {
        placements[i].where = placement_option(i);
        if (placements[i].where != SRV_MK)
            continue;
        placements[i].task = spawn_server(srv_ifaces[i]);
        if (placements[i].task)
            placements[i].tid = task_lookup(placements[i].task)->threads->tid;
    }
}

/* A thread is exiting (thread_exit). If it is an MK server's main thread, the server is
 * dead even if other threads of its task live on (a fault ends only the faulting thread):
 * say so; its lookups give E_DEAD from now on. Another thread of the server that dies of a
 * fault or a kill (status KILLED_STATUS_BASE and up) takes the rest of its task with it:
 * the server's state may be half-changed, and its main thread's end then reports the death
 * (a words thread's fault once left netsrv half alive, its clients' calls failing one by
 * one). The UNIX server runs init, every Linux process and the console: without it the
 * machine cannot go on, so the rest of its task is ended and unix_server_died ends its
 * processes and powers off. */
void srv_thread_exited(struct thread *t)
{
    for (int i = 0; i < srv_nifaces; i++) {
        if (placements[i].where != SRV_MK || !t->task || placements[i].task != t->task->id)
            continue;
        if (placements[i].tid != t->tid) {
            if (t->exit_status >= KILLED_STATUS_BASE)
                task_kill_except(t->task, t->exit_status, t);
            continue;
        }
        printk("%s: server died (task %d, thread %d, status %d)\n", srv_ifaces[i]->name,
               placements[i].task, t->tid, t->exit_status);
        if (srv_ifaces[i]->id != UNIX_IFACE)
            continue;
        task_kill_except(t->task, t->exit_status, t);
        unix_server_died(t->tid);
    }
}

/* SYS_SRV_LOOKUP(iface): the IPC destination that serves `iface`. E_NOENT for an unknown
 * or unplaced interface, E_DEAD when its MK server failed to start or has exited. */
long srv_lookup(u64 iface)
{
    int i = index_of(iface);
    if (i < 0 || placements[i].where == SRV_OFF)
        return E_NOENT;
    if (placements[i].where == SRV_IK)
        return (long)(iface << THREAD_ID_BITS);
    struct thread *t = thread_lookup(placements[i].tid);
    if (!t || t->state == T_ZOMBIE)
        return E_DEAD;
    long err = ipc_grant_right(current_thread()->task, t->tid);
    return err ? err : t->tid;
}

struct thread *srv_mk_server(u64 iface, long *err)
{
    int i = index_of(iface);
    if (i < 0 || placements[i].where != SRV_MK) {
        *err = E_NOENT;
        return NULL;
    }
    struct thread *t = thread_lookup(placements[i].tid);
    *err = t && t->state != T_ZOMBIE ? 0 : E_DEAD;
    return *err ? NULL : t;
}

const struct srv_iface *srv_ik_server(int dest)
{
    bool slot0 = dest > 0 && !(dest & ((1 << THREAD_ID_BITS) - 1));
    int i = slot0 ? index_of((u64)dest >> THREAD_ID_BITS) : -1;
    return i >= 0 && placements[i].where == SRV_IK ? srv_ifaces[i] : NULL;
}
