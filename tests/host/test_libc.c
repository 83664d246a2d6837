/*
 * Host unit tests for the portable parts of the ondol libc (built by lib/libc/libc.mk
 * as build/host/test_libc; run by tests/test_libc_host.py).
 *
 * Our functions are linked under ondol_* names (see ondol_rename.h) and compared with
 * the host C library where the behaviour is the same by the standard, or checked
 * against fixed expectations where ondol defines its own behaviour.
 * Prints one summary line per group and exits non-zero if any check failed.
 */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ondol_host.h"

/* Truncated output is exactly what some checks are about. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

static long group_checks, group_fails, total_checks, total_fails;
static const char *group_name;
static int fail_prints;

static void fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(const char *file, int line, const char *fmt, ...)
{
    group_fails++;
    if (fail_prints++ > 200)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL [%s] %s:%d: ", group_name, file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

#define CHECK(cond, ...)                                  \
    do {                                                  \
        group_checks++;                                   \
        if (!(cond))                                      \
            fail(__FILE__, __LINE__, __VA_ARGS__);        \
    } while (0)

static void begin(const char *name)
{
    group_name = name;
    group_checks = group_fails = 0;
}

static void end(void)
{
    printf("%-10s %7ld checks  %ld failed\n", group_name, group_checks, group_fails);
    total_checks += group_checks;
    total_fails += group_fails;
}

/* ---- fmt ------------------------------------------------------------------------- */

/* Compares ondol_snprintf with the host's snprintf for one format and argument list. */
static void cmp_vfmt(const char *file, int line, const char *fmt, ...)
{
    char ours[1024], host[1024];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n1 = ondol_vsnprintf(ours, sizeof ours, fmt, ap);
    int n2 = vsnprintf(host, sizeof host, fmt, ap2);
    va_end(ap2);
    va_end(ap);
    group_checks++;
    if (n1 != n2 || strcmp(ours, host) != 0)
        fail(file, line, "format \"%s\": ours \"%s\" (%d), host \"%s\" (%d)", fmt, ours, n1,
             host, n2);
}
#define CMP_FMT(...) cmp_vfmt(__FILE__, __LINE__, __VA_ARGS__)

/* Builds every format "%<flags><width><prec><len><conv>" from the given pieces and
 * compares both implementations; `call` supplies the value(s). */
typedef void (*fmt_caller)(const char *fmt, int stars, int w, int p, int idx);

static const char *const widths[] = { "", "1", "6", "23", "*" };
static const char *const precs[] = { "", ".", ".0", ".1", ".4", ".19", ".*" };
static const int star_widths[] = { -9, 0, 5 };
static const int star_precs[] = { -1, 0, 3 };

static void for_each_format(const char *flagset, const char *len, char conv, int use_prec,
                            int nvalues, fmt_caller call)
{
    size_t nf = strlen(flagset);
    for (unsigned mask = 0; mask < (1u << nf); mask++) {
        char flags[8];
        size_t k = 0;
        for (size_t i = 0; i < nf; i++)
            if (mask & (1u << i))
                flags[k++] = flagset[i];
        flags[k] = '\0';
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
            for (size_t pi = 0; pi < (use_prec ? sizeof precs / sizeof precs[0] : 1); pi++) {
                char fmt[64];
                snprintf(fmt, sizeof fmt, "[%%%s%s%s%s%c]", flags, widths[wi], precs[pi], len,
                         conv);
                int wstar = widths[wi][0] == '*', pstar = strcmp(precs[pi], ".*") == 0;
                for (int v = 0; v < nvalues; v++) {
                    for (int a = 0; a < (wstar ? 3 : 1); a++) {
                        for (int b = 0; b < (pstar ? 3 : 1); b++) {
                            call(fmt, wstar * 1 + pstar * 2, star_widths[a], star_precs[b], v);
                        }
                    }
                }
            }
        }
    }
}

/* Dispatch on how many '*' arguments precede the value. */
#define CALL_STARS(fmt, stars, w, p, value)          \
    do {                                             \
        switch (stars) {                             \
        case 0: CMP_FMT(fmt, value); break;          \
        case 1: CMP_FMT(fmt, w, value); break;       \
        case 2: CMP_FMT(fmt, p, value); break;       \
        default: CMP_FMT(fmt, w, p, value); break;   \
        }                                            \
    } while (0)

static const int int_values[] = { 0, 1, -1, 7, -42, 1000, 123456, INT_MAX, INT_MIN, 300, -129, 70000 };
static const long long ll_values[] = { 0, 1, -1, 42, INT64_MAX, INT64_MIN, INT64_MIN + 1,
                                       1234567890123LL, -987654321098LL, 4294967296LL };
static const unsigned uint_values[] = { 0, 1, 8, 255, 256, 0xdeadbeefu, UINT_MAX, 0x80000000u, 01234567 };
static const unsigned long long ull_values[] = { 0, 1, UINT64_MAX, 0x8000000000000000ull,
                                                 0x123456789abcdefull, 01777777777777777777777ull };

static void call_int(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, int_values[i]); }
static void call_long(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, (long)ll_values[i]); }
static void call_ll(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, ll_values[i]); }
static void call_intmax(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, (intmax_t)ll_values[i]); }
static void call_ssize(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, (ssize_t)ll_values[i]); }
static void call_ptrdiff(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, (ptrdiff_t)ll_values[i]); }
static void call_uint(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, uint_values[i]); }
static void call_ulong(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, (unsigned long)ull_values[i]); }
static void call_ull(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, ull_values[i]); }
static void call_uintmax(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, (uintmax_t)ull_values[i]); }
static void call_size(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, (size_t)ull_values[i]); }

static const char *const str_values[] = { "", "a", "hello", "hello, world of ondol" };
static void call_str(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, str_values[i]); }
static const int char_values[] = { 'x', ' ', '%', 'Z' };
static void call_char(const char *f, int s, int w, int p, int i) { CALL_STARS(f, s, w, p, char_values[i]); }
static int ptr_targets[3];
static void call_ptr(const char *f, int s, int w, int p, int i)
{
    void *ptrs[] = { &ptr_targets[0], &ptr_targets[2], (void *)(uintptr_t)0xffffffff80100000ull,
                     (void *)(uintptr_t)1 };
    CALL_STARS(f, s, w, p, ptrs[i]);
}

struct counter {
    int n;
    char last;
};

static void count_emit(char c, void *ctx)
{
    struct counter *k = ctx;
    k->n++;
    k->last = c;
}

static int fmt_direct(struct counter *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = fmt_format(count_emit, k, fmt, ap);
    va_end(ap);
    return r;
}

static void test_fmt(void)
{
    begin("fmt");
    const int nint = sizeof int_values / sizeof int_values[0];
    const int nll = sizeof ll_values / sizeof ll_values[0];
    const int nuint = sizeof uint_values / sizeof uint_values[0];
    const int null = sizeof ull_values / sizeof ull_values[0];

    for_each_format("-0+ ", "", 'd', 1, nint, call_int);
    for_each_format("-0+ ", "", 'i', 1, nint, call_int);
    for_each_format("-0+ ", "hh", 'd', 1, nint, call_int);
    for_each_format("-0+ ", "h", 'd', 1, nint, call_int);
    for_each_format("-0+ ", "l", 'd', 1, nll, call_long);
    for_each_format("-0+ ", "ll", 'd', 1, nll, call_ll);
    for_each_format("-0+ ", "ll", 'i', 1, nll, call_ll);
    for_each_format("-0+ ", "j", 'd', 1, nll, call_intmax);
    for_each_format("-0+ ", "z", 'd', 1, nll, call_ssize);
    for_each_format("-0+ ", "t", 'd', 1, nll, call_ptrdiff);
    const char convs[] = { 'u', 'x', 'X', 'o' };
    for (int c = 0; c < 4; c++) {
        const char *flags = convs[c] == 'u' ? "-0" : "-0#";
        for_each_format(flags, "", convs[c], 1, nuint, call_uint);
        for_each_format(flags, "hh", convs[c], 1, nuint, call_uint);
        for_each_format(flags, "h", convs[c], 1, nuint, call_uint);
        for_each_format(flags, "l", convs[c], 1, null, call_ulong);
        for_each_format(flags, "ll", convs[c], 1, null, call_ull);
        for_each_format(flags, "j", convs[c], 1, null, call_uintmax);
        for_each_format(flags, "z", convs[c], 1, null, call_size);
    }
    for_each_format("-", "", 's', 1, 4, call_str);
    for_each_format("-", "", 'c', 0, 4, call_char);
    for_each_format("-", "", 'p', 0, 4, call_ptr);

    /* Mixed formats and plain text. */
    CMP_FMT("a%%b%dc%sd%ce%xf", 5, "str", 'q', 255u);
    CMP_FMT("%d %i %u %x %X %o %s %c %%", -1, 2, 3u, 0xabcu, 0xabcu, 8u, "s", 'c');
    CMP_FMT("%lld|%llu|%llx", (long long)INT64_MIN, (unsigned long long)UINT64_MAX, 0x1ull);
    CMP_FMT("%-+8d|%+-8d|% 08d|%0 8d|%+08d", 42, 42, 42, 42, -42);
    CMP_FMT("%08.3d|%-8.3d|%.0d|%5.0d|%-5.0d|", 7, 7, 0, 0, 0);
    CMP_FMT("%#.0o|%#o|%#5o|%#05o|%#.3o", 0u, 0u, 8u, 8u, 8u);
    CMP_FMT("%#x|%#X|%#08x|%#-8x|%#.0x|%#.5x", 0u, 255u, 255u, 255u, 0u, 1u);
    CMP_FMT("%.3s|%10.3s|%-10.3s|%.*s", "abcdef", "abcdef", "abcdef", 2, "xyz");
    CMP_FMT("%*d|%-*d|%*d", 6, 1, 6, 1, -6, 1);
    CMP_FMT("%.*d|%.*d", -5, 3, 5, 3);
    CMP_FMT("%200d|%-200s|", 1, "x");
    CMP_FMT("%hhu %hhd %hu %hd", 256 + 255, 255, 65536 + 7, 65535);
    CMP_FMT("%s", "");
    CMP_FMT("no conversions at all");

    /* Behaviour that ondol defines itself. */
    char buf[64];
    int n;
    n = ondol_snprintf(buf, sizeof buf, "%p", (void *)0);
    CHECK(n == 3 && strcmp(buf, "0x0") == 0, "%%p of NULL: \"%s\"", buf);
    n = ondol_snprintf(buf, sizeof buf, "%s", (char *)NULL);
    CHECK(n == 6 && strcmp(buf, "(null)") == 0, "%%s of NULL: \"%s\"", buf);
    n = ondol_snprintf(buf, sizeof buf, "a%yb");
    CHECK(n == 4 && strcmp(buf, "a%yb") == 0, "unknown conversion: \"%s\"", buf);
    n = ondol_snprintf(buf, sizeof buf, "end%");
    CHECK(n == 4 && strcmp(buf, "end%") == 0, "trailing %%: \"%s\"", buf);
    n = ondol_snprintf(buf, sizeof buf, "%-5q|");
    CHECK(n == 5 && strcmp(buf, "%-5q|") == 0, "unknown with flags: \"%s\"", buf);
    n = ondol_snprintf(buf, sizeof buf, "%p", (void *)(uintptr_t)0xffffffff80100000ull);
    CHECK(strcmp(buf, "0xffffffff80100000") == 0 && n == 18, "%%p kernel: \"%s\"", buf);

    /* Truncation: the return value is the full length, the buffer always terminated. */
    for (size_t size = 0; size < 16; size++) {
        char a[16], h[16];
        memset(a, '#', sizeof a);
        memset(h, '#', sizeof h);
        int na = ondol_snprintf(size ? a : NULL, size, "%s-%d", "truncate", -12345);
        int nh = snprintf(size ? h : NULL, size, "%s-%d", "truncate", -12345);
        CHECK(na == nh, "truncation size %zu: %d vs %d", size, na, nh);
        CHECK(size == 0 || memcmp(a, h, size) == 0, "truncation size %zu: \"%.*s\" vs \"%.*s\"",
              size, (int)size, a, (int)size, h);
        CHECK(size == 0 || a[size - 1] == '\0', "truncation size %zu: not terminated", size);
        CHECK(size >= sizeof a || a[size] == '#', "truncation size %zu: wrote past the end", size);
    }

    /* fmt_format directly: the return value equals the characters emitted. */
    struct counter k = { 0, 0 };
    n = fmt_direct(&k, "%d-%s-%08x%c", INT_MIN, "abc", 0x1234u, '!');
    CHECK(n == k.n && n == (int)strlen("-2147483648-abc-00001234!") && k.last == '!',
          "fmt_format count %d emitted %d", n, k.n);
    k.n = 0;
    n = fmt_direct(&k, "");
    CHECK(n == 0 && k.n == 0, "empty format emitted %d", k.n);

    /* Random values through a few formats. */
    uint64_t st = 12345;
    static const char *const rfmts[] = { "%lld", "%llu", "%llx", "%llo", "%-+25lld", "%025llx",
                                         "%#llo", "%.30llu", "%+.20lld" };
    for (int i = 0; i < 20000; i++) {
        uint64_t v = ondol_rand64(&st) >> (ondol_rand64(&st) % 64);
        const char *f = rfmts[i % (sizeof rfmts / sizeof rfmts[0])];
        if (strchr(f, 'd'))
            CMP_FMT(f, (long long)v * ((i & 1) ? -1 : 1));
        else
            CMP_FMT(f, (unsigned long long)v);
    }
    end();
}

/* ---- string ---------------------------------------------------------------------- */

static int sign(int x) { return (x > 0) - (x < 0); }

static void test_string(void)
{
    begin("string");
    uint64_t st = 99;
    unsigned char src[300], a[300], b[300];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)ondol_rand64(&st);

    /* memcpy / memset / memmove at all small sizes and offsets */
    for (size_t n = 0; n < 80; n++) {
        for (size_t off = 0; off < 9; off++) {
            memset(a, 0x55, sizeof a);
            memset(b, 0x55, sizeof b);
            CHECK(ondol_memcpy(a + off, src, n) == a + off, "memcpy return");
            memcpy(b + off, src, n);
            CHECK(memcmp(a, b, sizeof a) == 0, "memcpy n=%zu off=%zu", n, off);

            CHECK(ondol_memset(a + off, (int)(n + 0x100), n) == a + off, "memset return");
            memset(b + off, (int)(n + 0x100), n);
            CHECK(memcmp(a, b, sizeof a) == 0, "memset n=%zu off=%zu", n, off);

            for (int dir = -8; dir <= 8; dir++) {
                memcpy(a, src, sizeof a);
                memcpy(b, src, sizeof b);
                size_t s = 20, d = (size_t)(20 + dir);
                CHECK(ondol_memmove(a + d + off, a + s, n) == a + d + off, "memmove return");
                memmove(b + d + off, b + s, n);
                CHECK(memcmp(a, b, sizeof a) == 0, "memmove n=%zu off=%zu dir=%d", n, off, dir);
            }
        }
    }
    /* long overlapping moves (exercise the 8-byte backward path) */
    for (size_t n = 100; n < 200; n += 13) {
        memcpy(a, src, sizeof a);
        memcpy(b, src, sizeof b);
        ondol_memmove(a + 37, a + 3, n);
        memmove(b + 37, b + 3, n);
        CHECK(memcmp(a, b, sizeof a) == 0, "memmove backward n=%zu", n);
        ondol_memmove(a + 2, a + 50, n);
        memmove(b + 2, b + 50, n);
        CHECK(memcmp(a, b, sizeof a) == 0, "memmove forward n=%zu", n);
    }

    /* memcmp / memchr */
    for (int i = 0; i < 2000; i++) {
        size_t n = ondol_rand64(&st) % 40;
        for (size_t j = 0; j < n; j++) {
            a[j] = (unsigned char)(ondol_rand64(&st) % 3 + 0x7e);
            b[j] = (unsigned char)(ondol_rand64(&st) % 3 + 0x7e);
        }
        CHECK(sign(ondol_memcmp(a, b, n)) == sign(memcmp(a, b, n)), "memcmp n=%zu", n);
        CHECK(ondol_memcmp(a, a, n) == 0, "memcmp self");
        int c = (int)(ondol_rand64(&st) % 3 + 0x7e);
        CHECK(ondol_memchr(a, c, n) == memchr(a, c, n), "memchr n=%zu", n);
    }

    /* strings */
    static const char *const strs[] = { "", "a", "b", "ab", "abc", "abd", "abcd", "hello world",
                                        "\x80high", "\x7flow", "hello", "world", "lo wo" };
    const size_t ns = sizeof strs / sizeof strs[0];
    for (size_t i = 0; i < ns; i++) {
        const char *s = strs[i];
        CHECK(ondol_strlen(s) == strlen(s), "strlen \"%s\"", s);
        for (size_t m = 0; m < 8; m++)
            CHECK(ondol_strnlen(s, m) == strnlen(s, m), "strnlen \"%s\" %zu", s, m);
        for (size_t j = 0; j < ns; j++) {
            const char *t = strs[j];
            CHECK(sign(ondol_strcmp(s, t)) == sign(strcmp(s, t)), "strcmp \"%s\" \"%s\"", s, t);
            for (size_t m = 0; m < 6; m++)
                CHECK(sign(ondol_strncmp(s, t, m)) == sign(strncmp(s, t, m)),
                      "strncmp \"%s\" \"%s\" %zu", s, t, m);
            CHECK(ondol_strstr(s, t) == strstr(s, t), "strstr \"%s\" \"%s\"", s, t);
            CHECK(ondol_strspn(s, t) == strspn(s, t), "strspn \"%s\" \"%s\"", s, t);
            CHECK(ondol_strcspn(s, t) == strcspn(s, t), "strcspn \"%s\" \"%s\"", s, t);
        }
        for (int c = 0; c < 256; c++) {
            CHECK(ondol_strchr(s, c) == strchr(s, c), "strchr \"%s\" %d", s, c);
            CHECK(ondol_strrchr(s, c) == strrchr(s, c), "strrchr \"%s\" %d", s, c);
        }
        char x[32], y[32];
        memset(x, 'Z', sizeof x);
        memset(y, 'Z', sizeof y);
        CHECK(ondol_strcpy(x, s) == x, "strcpy return");
        strcpy(y, s);
        CHECK(memcmp(x, y, sizeof x) == 0, "strcpy \"%s\"", s);
        for (size_t m = 0; m < 16; m++) {
            memset(x, 'Z', sizeof x);
            memset(y, 'Z', sizeof y);
            ondol_strncpy(x, s, m);
            strncpy(y, s, m);
            CHECK(memcmp(x, y, sizeof x) == 0, "strncpy \"%s\" %zu", s, m);

            memset(x, 'Z', sizeof x);
            size_t r = ondol_strlcpy(x, s, m);
            size_t want = strlen(s) < (m ? m - 1 : 0) ? strlen(s) : (m ? m - 1 : 0);
            CHECK(r == strlen(s), "strlcpy return");
            CHECK(m == 0 ? x[0] == 'Z' : (memcmp(x, s, want) == 0 && x[want] == '\0'),
                  "strlcpy \"%s\" %zu", s, m);
        }
        strcpy(x, "pre-");
        strcpy(y, "pre-");
        ondol_strcat(x, s);
        strcat(y, s);
        CHECK(strcmp(x, y) == 0, "strcat \"%s\"", s);
    }

    /* strtok_r */
    static const char *const tok_inputs[] = { "", "   ", "a", " a b  c ", "one,two;;three", ",,x,,",
                                              "run hello  a,b" };
    for (size_t i = 0; i < sizeof tok_inputs / sizeof tok_inputs[0]; i++) {
        char x[64], y[64];
        strcpy(x, tok_inputs[i]);
        strcpy(y, tok_inputs[i]);
        char *sx = NULL, *sy = NULL;
        char *tx = ondol_strtok_r(x, " ,;", &sx), *ty = strtok_r(y, " ,;", &sy);
        int guard = 0;
        for (;;) {
            CHECK((tx == NULL) == (ty == NULL), "strtok_r \"%s\" token presence", tok_inputs[i]);
            if (tx == NULL || ty == NULL || guard++ > 20)
                break;
            CHECK(strcmp(tx, ty) == 0 && tx - x == ty - y, "strtok_r \"%s\" token \"%s\" vs \"%s\"",
                  tok_inputs[i], tx, ty);
            tx = ondol_strtok_r(NULL, " ,;", &sx);
            ty = strtok_r(NULL, " ,;", &sy);
        }
    }
    end();
}

/* ---- ctype ----------------------------------------------------------------------- */

static void test_ctype(void)
{
    begin("ctype");
    for (int c = -1; c < 256; c++) {
        CHECK(!!ondol_isdigit(c) == !!isdigit(c), "isdigit %d", c);
        CHECK(!!ondol_isxdigit(c) == !!isxdigit(c), "isxdigit %d", c);
        CHECK(!!ondol_isalpha(c) == !!isalpha(c), "isalpha %d", c);
        CHECK(!!ondol_isalnum(c) == !!isalnum(c), "isalnum %d", c);
        CHECK(!!ondol_isupper(c) == !!isupper(c), "isupper %d", c);
        CHECK(!!ondol_islower(c) == !!islower(c), "islower %d", c);
        CHECK(!!ondol_isspace(c) == !!isspace(c), "isspace %d", c);
        CHECK(!!ondol_isblank(c) == !!isblank(c), "isblank %d", c);
        CHECK(!!ondol_iscntrl(c) == !!iscntrl(c), "iscntrl %d", c);
        CHECK(!!ondol_isprint(c) == !!isprint(c), "isprint %d", c);
        CHECK(!!ondol_isgraph(c) == !!isgraph(c), "isgraph %d", c);
        CHECK(!!ondol_ispunct(c) == !!ispunct(c), "ispunct %d", c);
        CHECK(ondol_toupper(c) == toupper(c), "toupper %d", c);
        CHECK(ondol_tolower(c) == tolower(c), "tolower %d", c);
    }
    end();
}

/* ---- strtol family --------------------------------------------------------------- */

static void test_strtol(void)
{
    begin("strtol");
    static const char *const inputs[] = {
        "0", "-0", "+0", "1", "123", "  -123abc", "+7", "\t\n 42", "0x1f", "0X1F", "-0x1f",
        "0x", "0xz", "0x 1", "077", "08", "09", "0b101", "z", "Z", "zz9", "", " ", "-", "+",
        "- 1", "1e5", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616",
        "-18446744073709551615", "-18446744073709551616", "99999999999999999999999999",
        "-1", "1010", "777777777777777777777", "1777777777777777777777", "2000000000000000000000",
        "7fffffffffffffff", "8000000000000000", "ffffffffffffffff", "10000000000000000",
        "zzzzzzzzzzzzz", "3w5e11264sgsf", "3w5e11264sgsg", "0x7FFFFFFFFFFFFFFF", "00000000000000000000001",
    };
    static const int bases[] = { 0, 2, 8, 10, 16, 36 };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        const char *s = inputs[i];
        for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
            int base = bases[b];
            char *e1, *e2;
            long l1 = ondol_strtol(s, &e1, base), l2 = strtol(s, &e2, base);
            CHECK(l1 == l2 && e1 == e2, "strtol(\"%s\", %d): %ld+%td vs %ld+%td", s, base, l1,
                  e1 - s, l2, e2 - s);
            long long q1 = ondol_strtoll(s, &e1, base), q2 = strtoll(s, &e2, base);
            CHECK(q1 == q2 && e1 == e2, "strtoll(\"%s\", %d): %lld vs %lld", s, base, q1, q2);
            unsigned long u1 = ondol_strtoul(s, &e1, base), u2 = strtoul(s, &e2, base);
            CHECK(u1 == u2 && e1 == e2, "strtoul(\"%s\", %d): %lu+%td vs %lu+%td", s, base, u1,
                  e1 - s, u2, e2 - s);
            unsigned long long v1 = ondol_strtoull(s, &e1, base), v2 = strtoull(s, &e2, base);
            CHECK(v1 == v2 && e1 == e2, "strtoull(\"%s\", %d): %llu vs %llu", s, base, v1, v2);
        }
        CHECK(ondol_atoi(s) == (int)strtol(s, NULL, 10), "atoi(\"%s\")", s);
        CHECK(ondol_atol(s) == atol(s), "atol(\"%s\")", s);
    }
    /* NULL end pointer and invalid bases */
    CHECK(ondol_strtol("12", NULL, 10) == 12, "strtol NULL end");
    char *e;
    const char *s = "123";
    CHECK(ondol_strtol(s, &e, 1) == 0 && e == s, "strtol base 1");
    CHECK(ondol_strtoul(s, &e, 37) == 0 && e == s, "strtoul base 37");
    CHECK(ondol_abs(-5) == 5 && ondol_abs(5) == 5 && ondol_labs(-7L) == 7 &&
          ondol_llabs(-9LL) == 9, "abs");
    end();
}

/* ---- rand, qsort ----------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void test_rand_qsort(void)
{
    begin("rand");
    uint64_t s1 = 42, s2 = 42, z = 0;
    int same = 1, bits = 0;
    for (int i = 0; i < 10000; i++) {
        uint64_t x = ondol_rand64(&s1);
        same &= x == ondol_rand64(&s2);
        bits += __builtin_popcountll(x);
    }
    CHECK(same, "rand64 not deterministic");
    CHECK(bits > 10000 * 31 && bits < 10000 * 33, "rand64 bit balance %d", bits);
    CHECK(ondol_rand64(&z) != 0 && z != 0, "rand64 zero state");
    uint64_t d1 = 1, d2 = 2;
    CHECK(ondol_rand64(&d1) != ondol_rand64(&d2), "rand64 seeds 1 and 2 collide");

    ondol_srand(7);
    int r1[50];
    for (int i = 0; i < 50; i++) {
        r1[i] = ondol_rand();
        CHECK(r1[i] >= 0 && r1[i] <= 0x7fffffff, "rand range");
    }
    ondol_srand(7);
    for (int i = 0; i < 50; i++)
        CHECK(ondol_rand() == r1[i], "srand repeat");

    uint64_t st = 5;
    for (int round = 0; round < 300; round++) {
        int n = (int)(ondol_rand64(&st) % 300);
        int arr[300], ref[300];
        int range = round % 3 == 0 ? 5 : 1000000;
        for (int i = 0; i < n; i++)
            arr[i] = ref[i] = (int)(ondol_rand64(&st) % (uint64_t)range) - range / 2;
        if (round % 7 == 1)
            qsort(arr, (size_t)n, sizeof arr[0], cmp_int);   /* presorted input */
        memcpy(ref, arr, sizeof(int) * (size_t)n);
        ondol_qsort(arr, (size_t)n, sizeof arr[0], cmp_int);
        qsort(ref, (size_t)n, sizeof ref[0], cmp_int);
        CHECK(memcmp(arr, ref, sizeof(int) * (size_t)n) == 0, "qsort n=%d round %d", n, round);
    }
    end();
}

/* ---- JSON strings --------------------------------------------------------------- */

static void test_json(void)
{
    begin("json");
    static const struct {
        const char *in, *out;
    } cases[] = {
        { "", "\"\"" },
        { "plain text", "\"plain text\"" },
        { "quote\" back\\slash", "\"quote\\\" back\\\\slash\"" },
        { "line\nbreak\ttab\x01\x7f", "\"line\\nbreak\\u0009tab\\u0001\\u007f\"" },
        { "\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\"" },   /* UTF-8 passes through */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        int n = result_json_string(buf, sizeof buf, cases[i].in);
        CHECK(n == (int)strlen(cases[i].out) && strcmp(buf, cases[i].out) == 0,
              "json %zu: got %s (%d), want %s", i, buf, n, cases[i].out);
        /* truncation keeps the full length and terminates */
        char small[5];
        memset(small, '#', sizeof small);
        int m = result_json_string(small, sizeof small, cases[i].in);
        CHECK(m == n && small[strnlen(small, sizeof small - 1)] == '\0' &&
                  strncmp(small, cases[i].out, strlen(small)) == 0,
              "json %zu truncated", i);
    }
    end();
}

/* ---- malloc ---------------------------------------------------------------------- */

#define SLOTS 512

struct slot {
    unsigned char *p;
    size_t n;
    unsigned char tag;
};

static void fill(struct slot *s)
{
    for (size_t i = 0; i < s->n; i++)
        s->p[i] = (unsigned char)(s->tag + i * 7);
}

static int intact(const struct slot *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s->p[i] != (unsigned char)(s->tag + i * 7))
            return 0;
    return 1;
}

static size_t random_size(uint64_t *st)
{
    uint64_t r = ondol_rand64(st);
    switch (r % 8) {
    case 0: return 0;
    case 1: case 2: case 3: return (size_t)(r >> 8) % 64 + 1;
    case 4: case 5: return (size_t)(r >> 8) % 4096 + 1;
    case 6: return (size_t)(r >> 8) % 40000 + 1;
    default: return (size_t)(r >> 8) % 300000 + 1;
    }
}

static void test_malloc(void)
{
    begin("malloc");
    /* basics */
    void *z1 = ondol_malloc(0), *z2 = ondol_malloc(0);
    CHECK(z1 != NULL && z2 != NULL && z1 != z2, "malloc(0) gives distinct pointers");
    CHECK(((uintptr_t)z1 & 15) == 0 && ((uintptr_t)z2 & 15) == 0, "malloc(0) alignment");
    ondol_free(z1);
    ondol_free(z2);
    ondol_free(NULL);
    CHECK(ondol_malloc(SIZE_MAX) == NULL, "malloc(SIZE_MAX)");
    CHECK(ondol_malloc(SIZE_MAX - 8) == NULL, "malloc(SIZE_MAX-8)");
    CHECK(ondol_calloc(SIZE_MAX / 2, 3) == NULL, "calloc overflow");
    CHECK(ondol_calloc((size_t)1 << 33, (size_t)1 << 33) == NULL, "calloc overflow 2");
    CHECK(ondol_realloc(NULL, 10) != NULL, "realloc(NULL) allocates");  /* leaked on purpose */

    /* the page source is used in chunks of >= 64 KiB */
    size_t calls0 = host_pages_calls;
    void *big = ondol_malloc(1 << 20);
    CHECK(big != NULL && host_pages_calls == calls0 + 1, "big allocation maps once");
    ondol_free(big);
    host_pages_fail = 1;
    CHECK(ondol_malloc(3 << 20) == NULL, "exhausted page source gives NULL");
    void *small = ondol_malloc(100);
    CHECK(small != NULL, "small allocation from existing free memory");
    ondol_free(small);
    host_pages_fail = 0;

    /* random workload with content checks */
    static struct slot slots[SLOTS];
    uint64_t st = 2024;
    long ops = 0, bad = 0, misaligned = 0;
    for (int round = 0; round < 200000; round++) {
        struct slot *s = &slots[ondol_rand64(&st) % SLOTS];
        uint64_t op = ondol_rand64(&st) % 10;
        ops++;
        if (s->p == NULL) {
            s->n = random_size(&st);
            s->tag = (unsigned char)ondol_rand64(&st);
            if (op < 2) {
                s->p = ondol_calloc(1, s->n);
                for (size_t i = 0; s->p && i < s->n; i++)
                    bad += s->p[i] != 0;
            } else {
                s->p = ondol_malloc(s->n);
            }
            if (s->p == NULL) {
                bad++;
                continue;
            }
            misaligned += ((uintptr_t)s->p & 15) != 0;
            fill(s);
        } else if (op < 3) {
            size_t n = random_size(&st);
            size_t keep = n < s->n ? n : s->n;
            unsigned char *q = ondol_realloc(s->p, n);
            if (n == 0) {
                s->p = NULL;   /* realloc(p, 0) frees */
                CHECK(q == NULL, "realloc(p, 0) returns NULL");
                continue;
            }
            if (q == NULL) {
                bad++;
                continue;
            }
            misaligned += ((uintptr_t)q & 15) != 0;
            s->p = q;
            bad += !intact(s, keep);
            s->n = n;
            fill(s);
        } else {
            bad += !intact(s, s->n);
            ondol_free(s->p);
            s->p = NULL;
        }
        if (round % 5000 == 0)
            CHECK(__malloc_check() == 0, "free list invariant at round %d", round);
    }
    CHECK(bad == 0, "random workload: %ld bad of %ld ops", bad, ops);
    CHECK(misaligned == 0, "random workload: %ld misaligned", misaligned);
    for (int i = 0; i < SLOTS; i++) {
        if (slots[i].p) {
            CHECK(intact(&slots[i], slots[i].n), "final content slot %d", i);
            ondol_free(slots[i].p);
            slots[i].p = NULL;
        }
    }
    CHECK(__malloc_check() == 0, "free list invariant at the end");
    size_t total, free_bytes, free_blocks;
    __malloc_stats(&total, &free_bytes, &free_blocks);
    /* Everything except the leaked realloc(NULL, 10) block (32 bytes) is free again,
     * and coalescing leaves at most one free block per page-source chunk (+1 for the
     * hole the leaked block splits). */
    CHECK(free_bytes == total - 32, "free bytes %zu of %zu", free_bytes, total);
    CHECK(free_blocks <= host_pages_calls + 1, "free blocks %zu for %zu chunks", free_blocks,
          host_pages_calls);
    CHECK(total == host_pages_bytes, "heap size %zu vs mapped %zu", total, host_pages_bytes);

    /* realloc keeps content when growing and shrinking in place */
    unsigned char *p = ondol_malloc(40);
    for (int i = 0; i < 40; i++)
        p[i] = (unsigned char)i;
    p = ondol_realloc(p, 4000);
    int ok = p != NULL;
    for (int i = 0; ok && i < 40; i++)
        ok = p[i] == i;
    p = ondol_realloc(p, 8);
    for (int i = 0; ok && i < 8; i++)
        ok = p[i] == i;
    CHECK(ok, "realloc grow/shrink keeps content");
    ondol_free(p);

    /* a double free and a bad pointer are caught (the process aborts) */
    for (int kind = 0; kind < 2; kind++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            freopen("/dev/null", "w", stderr);
            char *q = ondol_malloc(64);
            if (kind == 0) {
                ondol_free(q);
                ondol_free(q);
            } else {
                ondol_free(q + 16);
            }
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "%s not detected (status %#x)", kind ? "bad pointer" : "double free", status);
    }
    end();
}

int main(void)
{
    test_fmt();
    test_string();
    test_ctype();
    test_strtol();
    test_rand_qsort();
    test_json();
    test_malloc();
    printf("total      %7ld checks  %ld failed\n", total_checks, total_fails);
    return total_fails == 0 ? 0 : 1;
}
