/* The MK UNIX server's death (unix_down.c, docs/unix.md "Reliability"). */
#ifndef UNIX_DOWN_H
#define UNIX_DOWN_H

/* The code of power_off_failed after the server died: QEMU exits with status 3. */
#define UNIX_DIED_EXIT_CODE 1

/* The MK server whose main thread was `server_tid` has ended (srv_task_ended): end every
 * Linux task it served, then power off with UNIX_DIED_EXIT_CODE. Returns at once; a
 * kernel thread does the rest. */
void unix_server_died(int server_tid);
#endif
