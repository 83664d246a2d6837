/*
 * stress MODE COUNT: creates and destroys kernel objects in bulk and checks that
 * nothing leaks.
 *
 *   threads N   creates and joins N threads, BATCH at a time (each just returns)
 *   tasks N     spawns and waits for N copies of `true`, one at a time
 *
 * Before and after, SYS_MEMINFO is read; "stress ok" is printed only if frames_free,
 * tasks, threads, aspaces and kobj_bytes are exactly the same, otherwise
 * "stress LEAK field=... before=... after=..." and exit 1.
 *
 * The thread stacks are mapped once before the first reading and reused, and one
 * warm-up round runs before it, so page tables and kernel object caches that are
 * legitimately kept after first use do not count as leaks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/sys.h>
#include <ondol/thread.h>

#define BATCH 8
#define STACK_SIZE (16 * 1024)

static volatile uint64_t ran;

static int worker(void *arg)
{
    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
    return (int)(uintptr_t)arg;
}

static void print_meminfo(const char *label, const struct meminfo *m)
{
    printf("%s: frames_free=%llu tasks=%llu threads=%llu aspaces=%llu kobj_bytes=%llu "
           "kobj_frames=%llu\n",
           label, (unsigned long long)m->frames_free, (unsigned long long)m->tasks,
           (unsigned long long)m->threads, (unsigned long long)m->aspaces,
           (unsigned long long)m->kobj_bytes, (unsigned long long)m->kobj_frames);
}

static char *stacks[BATCH];

/* Runs `count` threads in batches; returns 0 or prints the problem and returns 1. */
static int thread_rounds(long count)
{
    struct thread t[BATCH];
    for (long done = 0; done < count;) {
        int n = count - done < BATCH ? (int)(count - done) : BATCH;
        for (int i = 0; i < n; i++) {
            int r = thread_start_on(&t[i], worker, (void *)(uintptr_t)(done + i), PRIO_INHERIT,
                                    stacks[i], STACK_SIZE);
            if (r < 0) {
                printf("stress: thread %ld: create failed: %d\n", done + i, r);
                for (int j = 0; j < i; j++)
                    thread_join(&t[j], NULL);
                return 1;
            }
        }
        for (int i = 0; i < n; i++) {
            int st = -1;
            int r = thread_join(&t[i], &st);
            if (r < 0 || st != (int)(done + i)) {
                printf("stress: thread %ld: join %d status %d\n", done + i, r, st);
                return 1;
            }
        }
        done += n;
        if (done % 2000 == 0)
            printf("stress: %ld threads\n", done);
    }
    return 0;
}

static int task_rounds(long count)
{
    const char *argv[] = { "true", NULL };
    for (long i = 0; i < count; i++) {
        long task = sys_spawn("true", argv, 1, 0);
        if (task < 0) {
            printf("stress: task %ld: spawn failed: %ld\n", i, task);
            return 1;
        }
        int st = -1;
        long r = sys_task_wait((int)task, &st);
        if (r != task || st != 0) {
            printf("stress: task %ld: wait %ld status %d\n", i, r, st);
            return 1;
        }
        if ((i + 1) % 200 == 0)
            printf("stress: %ld tasks\n", i + 1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: stress threads|tasks COUNT\n");
        return 2;
    }
    const char *mode = argv[1];
    long count = strtol(argv[2], NULL, 0);
    int threads = strcmp(mode, "threads") == 0;
    if (!threads && strcmp(mode, "tasks") != 0) {
        printf("stress: unknown mode %s\n", mode);
        return 2;
    }
    if (count <= 0) {
        printf("stress: bad count %s\n", argv[2]);
        return 2;
    }
    for (int i = 0; i < BATCH; i++) {
        long a = sys_vm_map(STACK_SIZE, PROT_READ | PROT_WRITE);
        if (a < 0) {
            printf("stress: cannot map stacks: %ld\n", a);
            return 1;
        }
        stacks[i] = (char *)(uintptr_t)a;
        memset(stacks[i], 0, STACK_SIZE);   /* touch every page now */
    }

    /* warm-up round, then the first reading */
    if (threads ? thread_rounds(BATCH) : task_rounds(1))
        return 1;
    fflush(stdout);
    struct meminfo before, after;
    sys_meminfo(&before);

    int bad = threads ? thread_rounds(count) : task_rounds(count);
    fflush(stdout);
    sys_meminfo(&after);
    print_meminfo("before", &before);
    print_meminfo("after ", &after);
    if (bad)
        return 1;

    struct {
        const char *name;
        uint64_t a, b;
    } fields[] = {
        { "frames_free", before.frames_free, after.frames_free },
        { "tasks", before.tasks, after.tasks },
        { "threads", before.threads, after.threads },
        { "aspaces", before.aspaces, after.aspaces },
        { "kobj_bytes", before.kobj_bytes, after.kobj_bytes },
    };
    int leaks = 0;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (fields[i].a != fields[i].b) {
            printf("stress LEAK field=%s before=%llu after=%llu\n", fields[i].name,
                   (unsigned long long)fields[i].a, (unsigned long long)fields[i].b);
            leaks++;
        }
    }
    if (leaks)
        return 1;
    if (threads)
        printf("stress ok mode=%s count=%ld ran=%llu\n", mode, count, (unsigned long long)ran);
    else
        printf("stress ok mode=%s count=%ld\n", mode, count);
    return 0;
}
