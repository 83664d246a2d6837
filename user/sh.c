/*
 * sh: the ondol shell on the serial console.
 *
 * The kernel hands us raw bytes (no echo, no line discipline), so line editing is
 * done here: printable characters are echoed, backspace (0x7f or 0x08) erases one,
 * Ctrl-C drops the line, Ctrl-U erases it, Ctrl-D on an empty line leaves the shell
 * (init starts a new one), Enter ('\r' or '\n'; "\r\n" counts once) runs it; a line
 * longer than LINE_MAX_LEN is refused with a message, not cut. Other control characters
 * and escape sequences (ESC [ ... final, ESC O x, ESC x, and the strings ESC ] / P / X /
 * ^ / _ ... ended by BEL or ESC \) are ignored.
 *
 * Builtins: help echo ps meminfo run halt exit. Anything else is a program in the
 * boot archive: `NAME ARGS` or `run NAME ARGS` spawns it and waits; Ctrl-C meanwhile
 * kills it (SYS_TASK_KILL, its descendants too). Programs run unprivileged, except the
 * system tools in privileged_programs (pcnt: the counter facility's switches; netbench:
 * the network server's probes) and the checker smptest (its filestorm makes a file
 * object, as the servers' page caches do).
 *
 * Threads: a reader thread owns the console and sends what it reads to the main thread
 * as IPC messages; while a program runs, a waiter thread waits for it and sends its exit.
 * The main thread handles both in one loop, so it sees Ctrl-C while a program runs. The
 * shell runs at SH_PRIO, above the ceiling of what it starts (a program can raise itself
 * only up to the priority of the thread that spawned it), so it always gets to answer.
 *
 * Startup: unless started with -i, if the kernel option run= is set, its commands
 * are run non-interactively (',' stands for ' ', ';' separates commands), each echoed
 * after a prompt; then the machine powers off, unless then=shell.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>

#define PROMPT "ondol$ "
#define LINE_MAX_LEN 256
#define MAX_ARGS SPAWN_MAX_ARGS
#define SH_PRIO 250
#define CTRL(c) ((c) & 0x1f)

static const char *const privileged_programs[] = {"pcnt", "netbench", "smptest"};

static void out(const char *s, size_t n)
{
    fflush(stdout);
    sys_console_write(s, n);
}

static void outs(const char *s)
{
    out(s, strlen(s));
}

/* ---- commands ------------------------------------------------------------------- */

static const char *const vector_names[32] = {
    "divide error", "debug", "NMI", "breakpoint", "overflow", "bound range",
    "invalid opcode", "device not available", "double fault", "coprocessor overrun",
    "invalid TSS", "segment not present", "stack fault", "general protection fault",
    "page fault", "reserved", "x87 FP error", "alignment check", "machine check",
    "SIMD FP error", "virtualization", "control protection", "reserved", "reserved",
    "reserved", "reserved", "reserved", "reserved", "hypervisor injection",
    "VMM communication", "security", "reserved",
};

static const char *error_name(long e)
{
    switch (e) {
    case E_NOSYS: return "no such call";
    case E_FAULT: return "bad address";
    case E_INVAL: return "invalid argument";
    case E_NOMEM: return "out of memory";
    case E_SRCH: return "no such task";
    case E_NOENT: return "not found";
    case E_PERM: return "not permitted";
    case E_TIMEOUT: return "timeout";
    case E_DEAD: return "partner died";
    case E_DEADLK: return "deadlock";
    case E_2BIG: return "argument list too long";
    case E_NOTSUP: return "not supported";
    default: return "unknown error";
    }
}

static void cmd_help(void)
{
    printf("builtins:\n"
           "  help                 this text\n"
           "  echo ARGS            print the arguments\n"
           "  ps                   list threads\n"
           "  meminfo              memory and kernel object counts\n"
           "  run PROGRAM [ARGS]   run a program from the boot archive (also: PROGRAM [ARGS])\n"
           "  halt                 power off\n"
           "  exit [STATUS]        leave the shell (init starts a new one)\n"
           "line editing: backspace, Ctrl-U (erase line), Ctrl-C (cancel line, or kill the\n"
           "running program), Ctrl-D (on an empty line: leave this shell; init starts a new one)\n");
}

static const char *state_name(int s)
{
    switch (s) {
    case TS_READY: return "ready";
    case TS_RUNNING: return "running";
    case TS_BLOCKED: return "blocked";
    case TS_SLEEPING: return "sleeping";
    case TS_ZOMBIE: return "zombie";
    default: return "?";
    }
}

static void cmd_ps(void)
{
    int max = 64;
    struct ps_entry *e = NULL;
    long n;
    for (;;) {
        e = malloc(sizeof *e * (size_t)max);
        if (e == NULL) {
            printf("ps: out of memory\n");
            return;
        }
        n = sys_ps(e, max);
        if (n < max || max >= PS_MAX)
            break;
        free(e);
        max *= 4;    /* the table may hold more; ask again with more room */
    }
    if (n < 0) {
        printf("ps: error %ld (%s)\n", n, error_name(n));
        free(e);
        return;
    }
    printf("%10s %8s %4s %-8s %10s  %s\n", "TID", "TASK", "PRIO", "STATE", "TICKS", "NAME");
    for (long i = 0; i < n; i++) {
        char name[NAME_LEN + 1];
        memcpy(name, e[i].name, NAME_LEN);
        name[NAME_LEN] = '\0';
        printf("%10d %8d %4d %-8s %10llu  %s\n", e[i].tid, e[i].task, e[i].prio,
               state_name(e[i].state), (unsigned long long)e[i].ticks, name);
    }
    free(e);
}

static void cmd_meminfo(void)
{
    struct meminfo m;
    long r = sys_meminfo(&m);
    if (r < 0) {
        printf("meminfo: error %ld (%s)\n", r, error_name(r));
        return;
    }
    printf("frames:  total %llu (%llu KiB)  free %llu (%llu KiB)  kernel %llu (%llu KiB)\n",
           (unsigned long long)m.frames_total, (unsigned long long)m.frames_total * 4,
           (unsigned long long)m.frames_free, (unsigned long long)m.frames_free * 4,
           (unsigned long long)m.kernel_frames, (unsigned long long)m.kernel_frames * 4);
    printf("objects: tasks %llu  threads %llu  aspaces %llu\n", (unsigned long long)m.tasks,
           (unsigned long long)m.threads, (unsigned long long)m.aspaces);
    printf("kobj:    %llu bytes in use, %llu frames (%llu KiB)\n",
           (unsigned long long)m.kobj_bytes, (unsigned long long)m.kobj_frames,
           (unsigned long long)m.kobj_frames * 4);
}

static void report_status(int status)
{
    if (status == 0)
        return;
    if (status == KILLED_STATUS)
        printf("[interrupted]\n");
    else if (status >= KILLED_STATUS_BASE && status < KILLED_STATUS_BASE + 256) {
        int vec = status - KILLED_STATUS_BASE;
        printf("[killed: %s (vector %d), status %d]\n", vec < 32 ? vector_names[vec] : "interrupt",
               vec, status);
    } else {
        printf("[exit %d]\n", status);
    }
}

/* ---- input and events: the reader thread, the waiter thread, the main loop -------- */

enum event { EV_INPUT = 1, EV_EXIT = 2 };
#define INPUT_BYTES (6 * 8)          /* console bytes per message: words 2..7 */

static int main_tid;
static char inq[1024];               /* console input not yet consumed by the line editor */
static size_t inq_len;
static char reader_stack[8192] __attribute__((aligned(16)));
static char waiter_stack[8192] __attribute__((aligned(16)));

/* One console read, sent to the main thread (blocks until it takes the message). */
static void forward_input(void)
{
    char buf[INPUT_BYTES];
    long n = sys_console_read(buf, sizeof buf);
    if (n <= 0) {
        sys_sleep(1);                /* should not happen; avoid spinning */
        return;
    }
    struct ipc_msg m = {{EV_INPUT, (uint64_t)n}};
    memcpy(&m.w[2], buf, (size_t)n);
    ipc_send(main_tid, &m, IPC_FOREVER);
}

/* The reader thread: console bytes to the main thread, in order, forever. */
static int reader(void *arg)
{
    (void)arg;
    for (;;)
        forward_input();
    return 0;                        /* not reached; C asks for a return statement */
}

/* The waiter thread: waits for the task in arg and sends EV_EXIT, result, status. */
static int waiter(void *arg)
{
    int status = 0;
    long r = sys_task_wait((int)(intptr_t)arg, &status);
    struct ipc_msg m = {{EV_EXIT, (uint64_t)r, (uint64_t)(int64_t)status}};
    ipc_send(main_tid, &m, IPC_FOREVER);
    return 0;
}

/* Waits for the next message of our threads. Input is appended to inq (what does not
 * fit is dropped: nobody types 1 KiB ahead). Returns the event and leaves it in *m. */
static enum event next_event(struct ipc_msg *m)
{
    for (;;) {
        long from = ipc_recv(IPC_ANY, m, IPC_FOREVER);
        if (from < 0)
            continue;
        if (m->w[0] == EV_EXIT)
            return EV_EXIT;
        if (m->w[0] != EV_INPUT)
            continue;
        size_t room = sizeof inq - inq_len, n = (size_t)m->w[1] < room ? (size_t)m->w[1] : room;
        memcpy(inq + inq_len, &m->w[2], n);
        inq_len += n;
        return EV_INPUT;
    }
}

/* Removes every Ctrl-C from inq[from..]; returns whether there was one. */
static int take_ctrl_c(size_t from)
{
    size_t out = from;
    for (size_t i = from; i < inq_len; i++)
        if (inq[i] != CTRL('C'))
            inq[out++] = inq[i];
    int found = out != inq_len;
    inq_len = out;
    return found;
}

/* The next console byte for the line editor (blocks). */
static unsigned char next_byte(void)
{
    struct ipc_msg m;
    while (inq_len == 0)
        next_event(&m);
    unsigned char c = (unsigned char)inq[0];
    memmove(inq, inq + 1, --inq_len);
    return c;
}

/* While `task` runs: Ctrl-C kills it; other input waits in inq for the line editor.
 * Returns the waiter's task_wait result; *status gets the exit status. */
static long wait_foreground(long task, int *status)
{
    struct ipc_msg m;
    size_t seen = inq_len;               /* typed before the program started: type-ahead */
    for (;;) {
        if (next_event(&m) == EV_EXIT) {
            *status = (int)(int64_t)m.w[2];
            return (long)m.w[1];
        }
        if (take_ctrl_c(seen)) {
            long k = sys_task_kill((int)task);
            outs("^C\n");
            if (k < 0)
                printf("sh: cannot kill task %ld: %s (%ld)\n", task, error_name(k), k);
        }
        seen = inq_len;
    }
}

static unsigned spawn_flags(const char *prog)
{
    for (size_t i = 0; i < sizeof privileged_programs / sizeof *privileged_programs; i++)
        if (!strcmp(prog, privileged_programs[i]))
            return SPAWN_PRIVILEGED;
    return 0;
}

/* Waits for `task` through the waiter thread (so Ctrl-C is seen meanwhile). */
static long wait_program(long task, int *status)
{
    struct thread w;
    if (thread_start_on(&w, waiter, (void *)(intptr_t)task, PRIO_INHERIT, waiter_stack,
                        sizeof waiter_stack) < 0)
        return sys_task_wait((int)task, status);     /* no thread: wait without Ctrl-C */
    long r = wait_foreground(task, status);
    thread_join(&w, NULL);
    return r;
}

static void run_program(int argc, char **argv)
{
    long task = sys_spawn(argv[0], (const char *const *)argv, argc, spawn_flags(argv[0]));
    if (task == E_NOENT) {
        printf("sh: %s: not found\n", argv[0]);
        return;
    }
    if (task < 0) {
        printf("sh: %s: cannot start: %s (%ld)\n", argv[0], error_name(task), task);
        return;
    }
    fflush(stdout);
    int status = 0;
    long r = wait_program(task, &status);
    if (r < 0) {
        printf("sh: wait for %s failed: %s (%ld)\n", argv[0], error_name(r), r);
        return;
    }
    report_status(status);
}

/* Splits `line` in place at blanks; returns the number of words (at most max). */
static int split(char *line, char **argv, int max)
{
    int argc = 0;
    char *save = NULL;
    for (char *w = strtok_r(line, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save)) {
        if (argc == max)
            return -1;
        argv[argc++] = w;
    }
    argv[argc] = NULL;
    return argc;
}

static void execute(char *line)
{
    char *argv[MAX_ARGS + 2];
    int argc = split(line, argv, MAX_ARGS + 1);
    if (argc < 0) {
        printf("sh: too many arguments (at most %d)\n", MAX_ARGS);
        return;
    }
    if (argc == 0)
        return;
    const char *cmd = argv[0];
    if (strcmp(cmd, "help") == 0) {
        cmd_help();
    } else if (strcmp(cmd, "echo") == 0) {
        for (int i = 1; i < argc; i++)
            printf("%s%s", argv[i], i + 1 < argc ? " " : "");
        printf("\n");
    } else if (strcmp(cmd, "ps") == 0) {
        cmd_ps();
    } else if (strcmp(cmd, "meminfo") == 0) {
        cmd_meminfo();
    } else if (strcmp(cmd, "halt") == 0) {
        fflush(stdout);
        long r = sys_poweroff();
        printf("halt: %s (%ld)\n", error_name(r), r);
    } else if (strcmp(cmd, "exit") == 0) {
        exit(argc > 1 ? atoi(argv[1]) : 0);
    } else if (strcmp(cmd, "run") == 0) {
        if (argc < 2)
            printf("usage: run PROGRAM [ARGS]\n");
        else
            run_program(argc - 1, argv + 1);
    } else {
        if (argc > MAX_ARGS) {
            printf("sh: too many arguments (at most %d)\n", MAX_ARGS);
            return;
        }
        run_program(argc, argv);
    }
    fflush(stdout);
}

/* ---- scripted mode (run=) ------------------------------------------------------- */

static void run_script(char *script)
{
    for (char *p = script; *p != '\0'; p++)
        if (*p == ',')
            *p = ' ';
    char *save = NULL;
    for (char *c = strtok_r(script, ";", &save); c != NULL; c = strtok_r(NULL, ";", &save)) {
        while (*c == ' ')
            c++;
        size_t n = strlen(c);
        while (n > 0 && c[n - 1] == ' ')
            c[--n] = '\0';
        if (n == 0)
            continue;
        printf("%s%s\n", PROMPT, c);
        execute(c);
    }
}

/* ---- interactive line editing ---------------------------------------------------- */

/* ESC_STRING: an OSC/DCS/SOS/PM/APC string (ESC ] P X ^ _), up to BEL or ESC \. */
enum esc_state { ESC_NONE, ESC_START, ESC_CSI, ESC_SS3, ESC_STRING, ESC_STRING_ESC };

struct editor {
    char line[LINE_MAX_LEN + 1];
    size_t len;
    size_t dropped;                  /* characters typed beyond LINE_MAX_LEN */
    enum esc_state esc;
    int last_cr;
};

/* Feeds one byte to the escape-sequence recogniser; returns 1 if it was swallowed. */
static int in_escape(struct editor *ed, unsigned char c)
{
    switch (ed->esc) {
    case ESC_NONE:
        if (c != 0x1b)
            return 0;
        ed->esc = ESC_START;
        return 1;
    case ESC_START:
        ed->esc = c == '[' ? ESC_CSI : c == 'O' ? ESC_SS3
                : strchr("]PX^_", c) && c ? ESC_STRING : ESC_NONE;
        return 1;
    case ESC_CSI:
        if (c >= 0x40 && c <= 0x7e)      /* final byte ends the sequence */
            ed->esc = ESC_NONE;
        return 1;
    case ESC_SS3:
        ed->esc = ESC_NONE;
        return 1;
    case ESC_STRING:
        ed->esc = c == 0x07 ? ESC_NONE : c == 0x1b ? ESC_STRING_ESC : ESC_STRING;
        return 1;
    case ESC_STRING_ESC:
        ed->esc = c == '\\' ? ESC_NONE : ESC_STRING;
        return 1;
    }
    return 0;
}

static void erase_line(struct editor *ed)
{
    while (ed->len > 0) {
        ed->len--;
        outs("\b \b");
    }
    ed->dropped = 0;
}

/* Enter: run the line, unless it was too long (then say so and run nothing). */
static void enter(struct editor *ed)
{
    outs("\n");
    ed->line[ed->len] = '\0';
    if (ed->dropped)
        printf("sh: line too long (%zu characters, at most %d): not run\n", ed->len + ed->dropped,
               LINE_MAX_LEN);
    else
        execute(ed->line);
    fflush(stdout);
    ed->len = ed->dropped = 0;
    outs(PROMPT);
}

static void printable(struct editor *ed, unsigned char c)
{
    if (ed->len < LINE_MAX_LEN) {
        ed->line[ed->len++] = (char)c;
        out((const char *)&c, 1);
    } else {
        if (ed->dropped++ == 0)
            outs("\a");                /* the bell: this character is not taken */
    }
}

static void edit(struct editor *ed, unsigned char c)
{
    int was_cr = ed->last_cr;
    ed->last_cr = 0;
    if (in_escape(ed, c))
        return;
    if (c == '\r' || c == '\n') {
        if (c == '\n' && was_cr)
            return;                     /* "\r\n" is one Enter */
        ed->last_cr = c == '\r';
        enter(ed);
    } else if (c == 0x7f || c == 0x08) {
        if (ed->len > 0 && ed->dropped == 0) {
            ed->len--;
            outs("\b \b");
        } else if (ed->dropped > 0) {
            ed->dropped--;
        }
    } else if (c == CTRL('C')) {
        outs("^C\n" PROMPT);
        ed->len = ed->dropped = 0;
    } else if (c == CTRL('D') && ed->len == 0) {
        outs("exit\n");
        exit(0);                        /* init starts a new shell */
    } else if (c == CTRL('U')) {
        erase_line(ed);
    } else if (c >= 0x20 && c < 0x7f) {
        printable(ed, c);
    }
    /* any other control character is ignored */
}

static __attribute__((noreturn)) void interactive(void)
{
    static struct editor ed;
    outs(PROMPT);
    for (;;)
        edit(&ed, next_byte());
}

/* Starts the console reader; the shell then outranks every program it starts. */
static void start_threads(void)
{
    main_tid = (int)sys_self(NULL);
    long r = sys_set_priority(0, SH_PRIO);
    if (r < 0)
        printf("sh: cannot raise priority to %d: %s (%ld)\n", SH_PRIO, error_name(r), r);
    static struct thread rd;
    if (thread_start_on(&rd, reader, NULL, PRIO_INHERIT, reader_stack, sizeof reader_stack) < 0) {
        printf("sh: cannot start the console reader\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int interactive_only = argc > 1 && strcmp(argv[1], "-i") == 0;
    start_threads();
    if (!interactive_only) {
        static char script[4096];
        long r = sys_kopt("run", script, sizeof script);
        if (r > 0) {
            if (r >= (long)sizeof script)
                printf("sh: run= is too long (%ld bytes), truncated\n", r);
            run_script(script);
            char then[16];
            long t = sys_kopt("then", then, sizeof then);
            if (!(t > 0 && strcmp(then, "shell") == 0)) {
                fflush(stdout);
                long p = sys_poweroff();
                printf("sh: poweroff failed: %s (%ld)\n", error_name(p), p);
            }
        }
    }
    interactive();
}
