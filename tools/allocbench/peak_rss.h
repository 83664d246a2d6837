/* Shared by the allocator benchmark and the trace replayer (hosted, Linux). */
#ifndef ALLOCBENCH_PEAK_RSS_H
#define ALLOCBENCH_PEAK_RSS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Peak resident memory of this process image in KiB (VmHWM: unlike ru_maxrss it does not
 * count the memory of whatever ran before exec); -1 when /proc cannot say. */
static inline long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = atol(line + 6);
    }
    if (f != NULL)
        fclose(f);
    return kib;
}
#endif
