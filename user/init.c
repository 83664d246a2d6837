/*
 * init: the first user task. Starts the shell (privileged, so `halt` works) and
 * restarts it whenever it ends. The first shell is started without arguments and
 * honours the `run=` kernel option; restarted shells get `-i` (interactive only),
 * so a scripted run is never repeated.
 */
#include <stdio.h>

#include <ondol/sys.h>

static long start_shell(int restarted)
{
    const char *argv[] = { "sh", "-i", NULL };
    return sys_spawn("sh", argv, restarted ? 2 : 1, SPAWN_PRIVILEGED);
}

int main(void)
{
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
