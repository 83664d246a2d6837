/*
 * sh: the ondol shell on the serial console.
 *
 * The kernel hands us raw bytes (no echo, no line discipline), so line editing is
 * done here: printable characters are echoed, backspace (0x7f or 0x08) erases one,
 * Ctrl-C drops the line, Ctrl-U erases it, Enter ('\r' or '\n'; "\r\n" counts once)
 * runs it, other control characters and ANSI escape sequences (ESC [ ... final,
 * ESC O x, ESC x) are ignored.
 *
 * Builtins: help echo ps meminfo run halt exit. Anything else is a program in the
 * boot archive: `NAME ARGS` or `run NAME ARGS` spawns it unprivileged and waits.
 *
 * Startup: unless started with -i, if the kernel option run= is set, its commands
 * are run non-interactively (',' stands for ' ', ';' separates commands), each echoed
 * after a prompt; then the machine powers off, unless then=shell.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/sys.h>

#define PROMPT "ondol$ "
#define LINE_MAX_LEN 256
#define MAX_ARGS SPAWN_MAX_ARGS

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
           "line editing: backspace, Ctrl-U (erase line), Ctrl-C (cancel line)\n");
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
        if (n < max || max >= 4096)
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
    if (status >= KILLED_STATUS_BASE && status < KILLED_STATUS_BASE + 256) {
        int vec = status - KILLED_STATUS_BASE;
        printf("[killed: %s (vector %d), status %d]\n", vec < 32 ? vector_names[vec] : "interrupt",
               vec, status);
    } else {
        printf("[exit %d]\n", status);
    }
}

static void run_program(int argc, char **argv)
{
    long task = sys_spawn(argv[0], (const char *const *)argv, argc, 0);
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
    long r = sys_task_wait((int)task, &status);
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

enum esc_state { ESC_NONE, ESC_START, ESC_CSI, ESC_SS3 };

static __attribute__((noreturn)) void interactive(void)
{
    char line[LINE_MAX_LEN + 1];
    size_t len = 0;
    enum esc_state esc = ESC_NONE;
    int last_cr = 0;

    outs(PROMPT);
    for (;;) {
        char in[64];
        long n = sys_console_read(in, sizeof in);
        if (n <= 0) {
            if (n < 0)
                sys_sleep(1);   /* should not happen; avoid spinning */
            continue;
        }
        for (long i = 0; i < n; i++) {
            unsigned char c = (unsigned char)in[i];
            int was_cr = last_cr;
            last_cr = 0;
            switch (esc) {
            case ESC_START:
                esc = c == '[' ? ESC_CSI : c == 'O' ? ESC_SS3 : ESC_NONE;
                continue;
            case ESC_CSI:
                if (c >= 0x40 && c <= 0x7e)   /* final byte ends the sequence */
                    esc = ESC_NONE;
                continue;
            case ESC_SS3:
                esc = ESC_NONE;
                continue;
            case ESC_NONE:
                break;
            }
            if (c == 0x1b) {
                esc = ESC_START;
            } else if (c == '\r' || c == '\n') {
                if (c == '\n' && was_cr)
                    continue;           /* "\r\n" is one Enter */
                last_cr = c == '\r';
                outs("\n");
                line[len] = '\0';
                execute(line);
                len = 0;
                outs(PROMPT);
            } else if (c == 0x7f || c == 0x08) {
                if (len > 0) {
                    len--;
                    outs("\b \b");
                }
            } else if (c == 0x03) {         /* Ctrl-C */
                outs("^C\n" PROMPT);
                len = 0;
            } else if (c == 0x15) {         /* Ctrl-U */
                while (len > 0) {
                    len--;
                    outs("\b \b");
                }
            } else if (c >= 0x20 && c < 0x7f) {
                if (len < LINE_MAX_LEN) {
                    line[len++] = (char)c;
                    out((const char *)&c, 1);
                }
            }
            /* any other control character is ignored */
        }
    }
}

int main(int argc, char **argv)
{
    int interactive_only = argc > 1 && strcmp(argv[1], "-i") == 0;
    if (!interactive_only) {
        static char script[1024];
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
