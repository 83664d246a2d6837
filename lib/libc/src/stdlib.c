/* Pure stdlib functions (no system calls): number parsing, abs, PRNG, qsort. */
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Common parser for the strto* family. Returns the magnitude clamped to `limit`
 * (for negative numbers the caller passes the magnitude limit of the negative range).
 * *neg receives the sign, *any whether any digit was consumed, *ovf whether the value
 * did not fit in `limit`.
 */
static unsigned long long parse_ull(const char *s, char **end, int base, int *neg,
                                    unsigned long long limit, int *ovf)
{
    const char *p = s;
    const char *digits_start;
    unsigned long long v = 0;

    *neg = 0;
    *ovf = 0;
    if (base < 0 || base == 1 || base > 36) {
        if (end)
            *end = (char *)s;
        return 0;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '+' || *p == '-') {
        *neg = *p == '-';
        p++;
    }
    if ((base == 0 || base == 16) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
        isxdigit((unsigned char)p[2])) {
        p += 2;
        base = 16;
    } else if (base == 0) {
        base = p[0] == '0' ? 8 : 10;
    }
    digits_start = p;
    for (;; p++) {
        int c = (unsigned char)*p, d;
        if (isdigit(c))
            d = c - '0';
        else if (isalpha(c))
            d = tolower(c) - 'a' + 10;
        else
            break;
        if (d >= base)
            break;
        if (v > (limit - (unsigned)d) / (unsigned)base) {
            *ovf = 1;
            v = limit;
        } else if (!*ovf) {
            v = v * (unsigned)base + (unsigned)d;
        }
    }
    if (end)
        *end = (char *)(p == digits_start ? s : p);
    return p == digits_start ? 0 : v;
}

long long strtoll(const char *restrict s, char **restrict end, int base)
{
    int neg, ovf;
    /* Parse against the larger (negative) magnitude, then clamp by sign. */
    unsigned long long m = parse_ull(s, end, base, &neg, (unsigned long long)LLONG_MAX + 1, &ovf);
    if (neg)
        return m > (unsigned long long)LLONG_MAX ? LLONG_MIN : -(long long)m;
    return m > (unsigned long long)LLONG_MAX ? LLONG_MAX : (long long)m;
}

long strtol(const char *restrict s, char **restrict end, int base)
{
    long long v = strtoll(s, end, base);
    if (v > LONG_MAX)
        return LONG_MAX;
    if (v < LONG_MIN)
        return LONG_MIN;
    return (long)v;
}

unsigned long long strtoull(const char *restrict s, char **restrict end, int base)
{
    int neg, ovf;
    unsigned long long m = parse_ull(s, end, base, &neg, ULLONG_MAX, &ovf);
    if (ovf)
        return ULLONG_MAX;
    return neg ? (unsigned long long)0 - m : m;   /* C: negation in the unsigned type */
}

unsigned long strtoul(const char *restrict s, char **restrict end, int base)
{
    int neg, ovf;
    unsigned long long m = parse_ull(s, end, base, &neg, ULONG_MAX, &ovf);
    if (ovf)
        return ULONG_MAX;
    return neg ? (unsigned long)0 - (unsigned long)m : (unsigned long)m;
}

int atoi(const char *s) { return (int)strtol(s, NULL, 10); }
long atol(const char *s) { return strtol(s, NULL, 10); }

int abs(int x) { return x < 0 ? -x : x; }
long labs(long x) { return x < 0 ? -x : x; }
long long llabs(long long x) { return x < 0 ? -x : x; }

uint64_t rand64(uint64_t *state)
{
    uint64_t x = *state;
    if (x == 0)
        x = 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static uint64_t rand_state = 1;

void srand(unsigned seed) { rand_state = seed; }
int rand(void) { return (int)(rand64(&rand_state) >> 33); }

/* Insertion sort for small ranges, otherwise a median-of-three quicksort that recurses
 * into the smaller half (O(log n) stack). Elements are swapped bytewise. */
static void swap_bytes(unsigned char *a, unsigned char *b, size_t size)
{
    while (size--) {
        unsigned char t = *a;
        *a++ = *b;
        *b++ = t;
    }
}

void qsort(void *base, size_t nmemb, size_t size, int (*cmp)(const void *, const void *))
{
    unsigned char *b = base;
    while (nmemb > 8) {
        unsigned char *lo = b, *mid = b + (nmemb / 2) * size, *hi = b + (nmemb - 1) * size;
        if (cmp(mid, lo) < 0)
            swap_bytes(mid, lo, size);
        if (cmp(hi, mid) < 0) {
            swap_bytes(hi, mid, size);
            if (cmp(mid, lo) < 0)
                swap_bytes(mid, lo, size);
        }
        /* Pivot into the last-but-one slot; partition lo+1 .. hi-1. */
        unsigned char *pivot = hi - size;
        swap_bytes(mid, pivot, size);
        unsigned char *i = lo, *j = pivot;
        for (;;) {
            do
                i += size;
            while (cmp(i, pivot) < 0);
            do
                j -= size;
            while (cmp(j, pivot) > 0);
            if (i >= j)
                break;
            swap_bytes(i, j, size);
        }
        swap_bytes(i, pivot, size);
        size_t left = (size_t)(i - b) / size;
        size_t right = nmemb - left - 1;
        if (left < right) {
            qsort(b, left, size, cmp);
            b = i + size;
            nmemb = right;
        } else {
            qsort(i + size, right, size, cmp);
            nmemb = left;
        }
    }
    for (size_t k = 1; k < nmemb; k++) {
        for (size_t m = k; m > 0 && cmp(b + (m - 1) * size, b + m * size) > 0; m--)
            swap_bytes(b + (m - 1) * size, b + m * size, size);
    }
}
