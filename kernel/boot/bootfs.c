/* The boot archive: a ustar file (built by the Makefile) whose entries are user programs. */
#include "bootfs.h"
#include "kernel.h"

#define MAX_FILES 128
#define BOOTFS_NAME_LEN 64

static struct {
    char name[BOOTFS_NAME_LEN];
    const void *data;
    u64 size;
} files[MAX_FILES];
static int nfiles;

static u64 octal(const char *s, size_t n)
{
    u64 v = 0;
    for (size_t i = 0; i < n && s[i] >= '0' && s[i] <= '7'; i++)
        v = v * 8 + (u64)(s[i] - '0');
    return v;
}

void bootfs_init(const void *archive, u64 len)
{
    const char *p = archive, *end = p + len;
    while (p + 512 <= end && p[0] && nfiles < MAX_FILES) {
        u64 size = octal(p + 124, 12);
        char type = p[156];
        if (memcmp(p + 257, "ustar", 5) != 0) {
            printk("bootfs: entry at offset %ld is not ustar; stopping\n", (long)(p - (const char *)archive));
            break;
        }
        if ((type == '0' || type == 0) && p + 512 + size <= end) {
            const char *name = p;
            if (name[0] == '.' && name[1] == '/')
                name += 2;
            size_t n = strnlen(name, MIN(100, BOOTFS_NAME_LEN - 1));
            memcpy(files[nfiles].name, name, n);
            files[nfiles].name[n] = 0;
            files[nfiles].data = p + 512;
            files[nfiles].size = size;
            nfiles++;
        }
        p += 512 + ALIGN_UP(size, 512);
    }
}

const void *bootfs_find(const char *name, u64 *size)
{
    for (int i = 0; i < nfiles; i++) {
        if (strcmp(files[i].name, name) == 0) {
            *size = files[i].size;
            return files[i].data;
        }
    }
    return NULL;
}

int bootfs_count(void) { return nfiles; }
const char *bootfs_name(int i) { return files[i].name; }
