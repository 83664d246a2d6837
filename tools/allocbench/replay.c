/*
 * Replays an allocation trace written by trace.c (format there) against the process's
 * malloc, chosen with LD_PRELOAD (`./ondol bench alloc --host` replays the sample traces
 * against every allocator). Every block gets its first byte and one byte per page written,
 * as the program that made the trace would have. Prints one JSON line: events and wall
 * seconds of the replay (reading the trace excluded).
 *
 *   allocreplay TRACE
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "peak_rss.h"

#define MAX_IDS ((size_t)1 << 28)

enum { EV_MALLOC, EV_CALLOC, EV_ALIGNED, EV_REALLOC, EV_FREE };

struct event {
    uint8_t kind;
    uint64_t id, old;
    size_t a, b;
};

static void **blocks;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void touch(char *p, size_t n)
{
    for (size_t i = 0; p != NULL && i < n; i += 4096)
        p[i] = 1;
}

/* Reads the next decimal number of [*c, end) into *out; 0 when there is none. */
static int read_number(char **c, char *end, unsigned long long *out)
{
    while (*c < end && **c == ' ')
        (*c)++;
    if (*c >= end || **c < '0' || **c > '9')
        return 0;
    unsigned long long v = 0;
    while (*c < end && **c >= '0' && **c <= '9')
        v = v * 10 + (unsigned long long)(*(*c)++ - '0');
    *out = v;
    return 1;
}

/* Parses one line at *s into ev; returns 0 at the end, -1 for a line to skip. */
static int parse(char **s, char *end, struct event *ev)
{
    if (*s >= end)
        return 0;
    char *line = *s, *nl = memchr(line, '\n', (size_t)(end - line));
    *s = nl != NULL ? nl + 1 : end;
    unsigned long long x = 0, y = 0, z = 0;
    switch (line[0]) {
    case 'm': ev->kind = EV_MALLOC; break;
    case 'c': ev->kind = EV_CALLOC; break;
    case 'a': ev->kind = EV_ALIGNED; break;
    case 'r': ev->kind = EV_REALLOC; break;
    case 'f': ev->kind = EV_FREE; break;
    default: return -1;
    }
    char *end_of_line = nl != NULL ? nl : end, *c = line + 1;
    int n = 0;
    unsigned long long *fields[3] = {&x, &y, &z};
    while (n < 3 && read_number(&c, end_of_line, fields[n]))
        n++;
    if (n < 1 || x >= MAX_IDS || (ev->kind != EV_FREE && n < 2))
        return -1;
    ev->id = x;
    ev->a = (size_t)y;
    ev->b = (size_t)z;
    if (ev->kind == EV_REALLOC) {
        ev->old = x;
        ev->id = y;
        ev->a = (size_t)z;
        if (y >= MAX_IDS || n < 3)
            return -1;
    }
    return 1;
}

static void play(const struct event *ev)
{
    switch (ev->kind) {
    case EV_MALLOC:
        blocks[ev->id] = malloc(ev->a);
        touch(blocks[ev->id], ev->a);
        break;
    case EV_CALLOC:
        blocks[ev->id] = calloc(ev->a, ev->b);
        break;
    case EV_ALIGNED:
        if (posix_memalign(&blocks[ev->id], ev->a < sizeof(void *) ? sizeof(void *) : ev->a,
                           ev->b) != 0)
            blocks[ev->id] = NULL;
        touch(blocks[ev->id], ev->b);
        break;
    case EV_REALLOC: {
        void *p = realloc(ev->old ? blocks[ev->old] : NULL, ev->a);
        if (ev->old)
            blocks[ev->old] = NULL;
        if (ev->id)
            blocks[ev->id] = p;
        touch(p, ev->a);
        break;
    }
    default:
        free(blocks[ev->id]);
        blocks[ev->id] = NULL;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: allocreplay TRACE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        perror(argv[1]);
        return 1;
    }
    char *text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    blocks = mmap(NULL, MAX_IDS * sizeof *blocks, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (text == MAP_FAILED || blocks == MAP_FAILED)
        return 1;
    /* Decode first, so that the timed loop runs only the allocator. */
    size_t cap = (size_t)st.st_size / 4 + 1, count = 0;
    struct event *evs = mmap(NULL, cap * sizeof *evs, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    char *s = text, *end = text + st.st_size;
    int r;
    while (count < cap && (r = parse(&s, end, &evs[count])) != 0)
        count += r > 0;
    double t0 = now();
    for (size_t i = 0; i < count; i++)
        play(&evs[i]);
    double wall = now() - t0;
    printf("{\"trace\": \"%s\", \"events\": %zu, \"wall_s\": %.6f, \"peak_rss_kib\": %ld}\n",
           argv[1], count, wall, peak_rss_kib());
    return 0;
}
