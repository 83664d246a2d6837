/*
 * ipcping MODE N: call / reply_recv ping-pong, checking every reply, and the median
 * round trip in TSC ticks (under icount: instructions).
 *   ipcping threads N   two threads of one task
 *   ipcping tasks N     two tasks (the server is `ipcping serve PARENT_TID`)
 * N is 1..IPCPING_MAX. The server task says hello to the parent before serving; the parent
 * grants it the right to do so only after spawn returns, and the server may run first
 * (a timer tick during the spawn), so the hello is retried while it gets E_PERM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>

#define QUIT UINT64_MAX
#define IPCPING_MAX 10000000
#define HELLO_TRIES 1000          /* ticks to wait for the parent's grant */

/* The server: every message's first word comes back plus one, until QUIT. */
static int serve(void *arg)
{
    (void)arg;
    struct ipc_msg m = {{0}};
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    for (;;) {
        if (from < 0) {
            printf("ipcping: server receive failed: %ld\n", from);
            return 1;
        }
        if (m.w[0] == QUIT) {
            ipc_reply_recv((int)from, 0, &m, IPC_POLL);   /* release the client, then exit */
            return 0;
        }
        m.w[0] += 1;
        from = ipc_reply_recv((int)from, IPC_ANY, &m, IPC_FOREVER);
    }
}

static int ping(int server, int n)
{
    uint64_t *t = malloc(sizeof(uint64_t) * (size_t)n);
    if (!t) {
        printf("ipcping: no memory for %d samples\n", n);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        struct ipc_msg m = {{(uint64_t)i, 2, 3, 4, 5, 6, 7, 8}};
        uint64_t t0 = rdtsc();
        long r = ipc_call(server, &m, IPC_FOREVER);
        t[i] = rdtsc() - t0;
        if (r != server || m.w[0] != (uint64_t)i + 1 || m.w[7] != 8) {
            printf("ipcping: bad reply %ld (w0=%llu) at %d\n", r, (unsigned long long)m.w[0], i);
            return 1;
        }
    }
    struct ipc_msg quit = {{QUIT}};
    ipc_call(server, &quit, IPC_FOREVER);
    sort_u64(t, (size_t)n);
    printf("ipcping ok n=%d median=%llu min=%llu max=%llu\n", n, (unsigned long long)t[n / 2],
           (unsigned long long)t[0], (unsigned long long)t[n - 1]);
    return 0;
}

/* Tell the parent our tid; E_PERM until its grant arrives, so retry for a while. */
static long hello_parent(int parent)
{
    long r = E_PERM;
    for (int i = 0; i < HELLO_TRIES && r == E_PERM; i++) {
        struct ipc_msg m = {{0}};
        r = ipc_send(parent, &m, IPC_FOREVER);
        if (r == E_PERM)
            sys_sleep(1);
    }
    return r;
}

/* The count argument: a decimal number in 1..IPCPING_MAX, else 0. */
static int parse_count(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);
    return *s && !*end && n >= 1 && n <= IPCPING_MAX ? (int)n : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "serve")) {
        long r = hello_parent(atoi(argv[2]));
        if (r < 0) {
            printf("ipcping: hello to parent failed: %ld\n", r);
            return 1;
        }
        return serve(NULL);
    }
    int n = argc == 3 ? parse_count(argv[2]) : 0;
    if (n == 0 || (strcmp(argv[1], "threads") && strcmp(argv[1], "tasks"))) {
        printf("usage: ipcping threads|tasks N   (N from 1 to %d)\n", IPCPING_MAX);
        return 2;
    }
    if (!strcmp(argv[1], "threads")) {
        struct thread th;
        long tid = thread_start(&th, serve, NULL, PRIO_INHERIT, 0);
        if (tid < 0)
            return 1;
        int r = ping((int)tid, n);
        thread_join(&th, NULL);
        return r;
    }
    char me[16];
    snprintf(me, sizeof(me), "%ld", sys_self(NULL));
    const char *args[] = {"ipcping-srv", "serve", me};
    long task = sys_spawn("ipcping", args, 3, 0);
    if (task < 0 || ipc_grant((int)task, (int)sys_self(NULL)) < 0) {
        printf("ipcping: spawn/grant failed: %ld\n", task);
        return 1;
    }
    struct ipc_msg m = {{0}};
    long server = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    if (server < 0)
        return 1;
    int r = ping((int)server, n);
    int status;
    sys_task_wait((int)task, &status);
    return r;
}
