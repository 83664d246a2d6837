/*
 * init: the first user task. Starts the shell (privileged, so `halt` works) and
 * restarts it whenever it ends. The first shell is started without arguments and
 * honours the `run=` kernel option; restarted shells get `-i` (interactive only),
 * so a scripted run is never repeated. When the UNIX server is placed (unix=mk|ik), the
 * console is its (busybox sh runs there, docs/unix.md "Boot"): init starts no native
 * shell and only waits.
 */
#include <stdio.h>
#include <string.h>

#include <ondol/sys.h>

static long start_shell(int restarted)
{
    const char *argv[] = { "sh", "-i", NULL };
    return sys_spawn("sh", argv, restarted ? 2 : 1, SPAWN_PRIVILEGED);
}

/* Is the UNIX server placed? Then it owns the console. */
static int unix_server_placed(void)
{
    char v[8] = "";
    return sys_kopt("unix", v, sizeof(v)) > 0 && strcmp(v, "off") != 0;
}

int main(void)
{
    if (unix_server_placed())
        for (;;)
            sys_sleep(SLEEP_FOREVER);
    int restarted = 0;
    int failures = 0;
    for (;;) {
        long task = start_shell(restarted);
        if (task < 0) {
            printf("init: cannot start sh (error %ld)\n", task);
            if (++failures >= 5) {
                printf("init: giving up, powering off\n");
                sys_poweroff();
                return 1;
            }
            sys_sleep(100);
            continue;
        }
        failures = 0;
        int status = 0;
        long r = sys_task_wait((int)task, &status);
        if (r < 0) {
            printf("init: wait for sh failed (error %ld)\n", r);
            sys_sleep(100);
        } else {
            printf("init: sh exited with status %d, restarting it\n", status);
        }
        restarted = 1;
    }
}
