/*
 * String and memory functions. Shared with the kernel (built with its own flags):
 * include only compiler headers and our own headers.
 *
 * memcpy/memmove/memset use inline assembly so that the compiler can never turn
 * their loops back into calls to themselves. Nothing here sets the direction flag.
 * memcpy, memset and memmove's forward copy move 8 bytes per iteration (rep movsq /
 * rep stosq, then the 0-7 byte tail with rep movsb / rep stosb), as Linux's clear_page
 * and copy_page on CPUs without ERMS: a page is 512 iterations instead of 4096, which
 * is what icount counts (one instruction per iteration) and what a TCG guest spends.
 */
#include <stddef.h>
#include <stdint.h>

#include <string.h>

/* Forward copy of n bytes: n / 8 quadwords, then the bytes left. */
static void copy_forward(void *d, const void *s, size_t n)
{
    size_t words = n / 8, tail = n % 8;
    __asm__ volatile("rep movsq\n\tmovq %3, %%rcx\n\trep movsb"
                     : "+D"(d), "+S"(s), "+c"(words)
                     : "r"(tail)
                     : "memory");
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    copy_forward(dst, src, n);
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d == s || n == 0)
        return dst;
    if (d < s || d >= s + n) {
        /* No harmful overlap: a forward copy is correct (each quadword is read before
         * any byte of it is written, and d < s or the ranges are disjoint). */
        copy_forward(d, s, n);
        return dst;
    }
    /* dst overlaps the tail of src: copy backwards, 8 bytes at a time, then bytes. */
    while (n >= 8) {
        uint64_t w;
        n -= 8;
        __asm__ volatile("movq (%1), %0" : "=r"(w) : "r"(s + n) : "memory");
        __asm__ volatile("movq %1, (%0)" : : "r"(d + n), "r"(w) : "memory");
    }
    while (n > 0) {
        unsigned char c;
        n--;
        __asm__ volatile("movb (%1), %0" : "=q"(c) : "r"(s + n) : "memory");
        __asm__ volatile("movb %1, (%0)" : : "r"(d + n), "q"(c) : "memory");
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    void *d = dst;
    size_t words = n / 8, tail = n % 8;
    uint64_t pattern = (uint64_t)(unsigned char)c * 0x0101010101010101ull;
    __asm__ volatile("rep stosq\n\tmovq %3, %%rcx\n\trep stosb"
                     : "+D"(d), "+c"(words)
                     : "a"(pattern), "r"(tail)
                     : "memory");
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != q[i])
            return p[i] < q[i] ? -1 : 1;
    }
    return 0;
}

void *memchr(const void *s, int c, size_t n)
{
    const unsigned char *p = s;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == (unsigned char)c)
            return (void *)(p + i);
    }
    return NULL;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0')
        n++;
    return n;
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n] != '\0')
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    while (*p != '\0' && *p == *q) {
        p++;
        q++;
    }
    return (*p > *q) - (*p < *q);
}

int strncmp(const char *a, const char *b, size_t n)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != q[i])
            return p[i] < q[i] ? -1 : 1;
        if (p[i] == '\0')
            break;
    }
    return 0;
}

char *strcpy(char *restrict dst, const char *restrict src)
{
    size_t i = 0;
    do {
        dst[i] = src[i];
    } while (src[i++] != '\0');
    return dst;
}

char *strncpy(char *restrict dst, const char *restrict src, size_t n)
{
    size_t i = 0;
    for (; i < n && src[i] != '\0'; i++)
        dst[i] = src[i];
    if (i < n)
        memset(dst + i, 0, n - i);
    return dst;
}

size_t strlcpy(char *restrict dst, const char *restrict src, size_t size)
{
    size_t len = strlen(src);
    if (size > 0) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}

char *strcat(char *restrict dst, const char *restrict src)
{
    strcpy(dst + strlen(dst), src);
    return dst;
}

char *strchr(const char *s, int c)
{
    for (;; s++) {
        if (*s == (char)c)
            return (char *)s;
        if (*s == '\0')
            return NULL;
    }
}

char *strrchr(const char *s, int c)
{
    const char *last = NULL;
    for (;; s++) {
        if (*s == (char)c)
            last = s;
        if (*s == '\0')
            return (char *)last;
    }
}

char *strstr(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return (char *)haystack;
    for (; *haystack != '\0'; haystack++) {
        if (*haystack == *needle && strncmp(haystack, needle, n) == 0)
            return (char *)haystack;
    }
    return NULL;
}

size_t strspn(const char *s, const char *accept)
{
    size_t n = 0;
    while (s[n] != '\0' && strchr(accept, s[n]) != NULL)
        n++;
    return n;
}

size_t strcspn(const char *s, const char *reject)
{
    size_t n = 0;
    while (s[n] != '\0' && strchr(reject, s[n]) == NULL)
        n++;
    return n;
}

char *strtok_r(char *restrict s, const char *restrict delim, char **restrict save)
{
    if (s == NULL)
        s = *save;
    if (s == NULL)
        return NULL;
    s += strspn(s, delim);
    if (*s == '\0') {
        *save = s;
        return NULL;
    }
    char *end = s + strcspn(s, delim);
    if (*end != '\0') {
        *end = '\0';
        *save = end + 1;
    } else {
        *save = end;
    }
    return s;
}
