/*
 * printf-style formatting core (see ondol/fmt.h). Shared with the kernel: include
 * only compiler headers and our own, use no floating point and no libc calls.
 * (No <limits.h>: the compiler's copy needs a C library behind it.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <ondol/fmt.h>

#define FMT_INT_MAX __INT_MAX__

enum {
    F_LEFT = 1 << 0,   /* '-'  */
    F_ZERO = 1 << 1,   /* '0'  */
    F_PLUS = 1 << 2,   /* '+'  */
    F_SPACE = 1 << 3,  /* ' '  */
    F_ALT = 1 << 4,    /* '#'  */
};

enum len_mod { LM_NONE, LM_HH, LM_H, LM_L, LM_LL, LM_Z, LM_T, LM_J };

struct out {
    fmt_emit_fn emit;
    void *ctx;
    int count;
};

static void put(struct out *o, char c)
{
    o->emit(c, o->ctx);
    if (o->count < FMT_INT_MAX)
        o->count++;
}

static void put_n(struct out *o, char c, int n)
{
    while (n-- > 0)
        put(o, c);
}

struct spec {
    int flags;
    int width;     /* 0 when absent */
    int prec;      /* -1 when absent */
    enum len_mod len;
};

static void format_uint(struct out *o, const struct spec *sp, uintmax_t v, int negative,
                        int is_signed, unsigned base, int upper, int is_ptr)
{
    const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char digits[sizeof(uintmax_t) * 3];  /* octal needs 22 for 64 bits */
    int nd = 0;
    uintmax_t orig = v;

    /* Precision 0 with value 0 prints no digits at all. */
    if (!(sp->prec == 0 && v == 0)) {
        do {
            digits[nd++] = set[v % base];
            v /= base;
        } while (v != 0);
    }

    char sign = 0;
    if (is_signed) {
        if (negative)
            sign = '-';
        else if (sp->flags & F_PLUS)
            sign = '+';
        else if (sp->flags & F_SPACE)
            sign = ' ';
    }

    int zeros = sp->prec > nd ? sp->prec - nd : 0;
    const char *prefix = "";
    int plen = 0;
    if (is_ptr) {
        prefix = "0x";
        plen = 2;
    } else if (sp->flags & F_ALT) {
        if (base == 8) {
            /* '#' with 'o': the first digit must be a zero. */
            if (zeros == 0 && (nd == 0 || digits[nd - 1] != '0'))
                zeros = 1;
        } else if (base == 16 && orig != 0) {
            prefix = upper ? "0X" : "0x";
            plen = 2;
        }
    }

    int body = (sign ? 1 : 0) + plen + zeros + nd;
    int fill = sp->width > body ? sp->width - body : 0;

    if (!(sp->flags & F_LEFT)) {
        if ((sp->flags & F_ZERO) && sp->prec < 0) {
            zeros += fill;       /* zero padding goes between sign/prefix and digits */
        } else {
            put_n(o, ' ', fill);
        }
        fill = 0;
    }
    if (sign)
        put(o, sign);
    for (int i = 0; i < plen; i++)
        put(o, prefix[i]);
    put_n(o, '0', zeros);
    while (nd > 0)
        put(o, digits[--nd]);
    put_n(o, ' ', fill);   /* only left-justified output gets here with fill > 0 */
}

static void format_str(struct out *o, const struct spec *sp, const char *s)
{
    if (s == NULL)
        s = "(null)";
    int len = 0;
    while ((sp->prec < 0 || len < sp->prec) && s[len] != '\0' && len < FMT_INT_MAX)
        len++;
    int fill = sp->width > len ? sp->width - len : 0;
    if (!(sp->flags & F_LEFT))
        put_n(o, ' ', fill);
    for (int i = 0; i < len; i++)
        put(o, s[i]);
    if (sp->flags & F_LEFT)
        put_n(o, ' ', fill);
}

static void format_char(struct out *o, const struct spec *sp, char c)
{
    int fill = sp->width > 1 ? sp->width - 1 : 0;
    if (!(sp->flags & F_LEFT))
        put_n(o, ' ', fill);
    put(o, c);
    if (sp->flags & F_LEFT)
        put_n(o, ' ', fill);
}

/* Parses a decimal number, saturating at FMT_INT_MAX. */
static int parse_num(const char **pp)
{
    const char *p = *pp;
    int v = 0;
    while (*p >= '0' && *p <= '9') {
        int d = *p - '0';
        v = (v > (FMT_INT_MAX - d) / 10) ? FMT_INT_MAX : v * 10 + d;
        p++;
    }
    *pp = p;
    return v;
}

int fmt_format(fmt_emit_fn emit, void *ctx, const char *fmt, va_list ap)
{
    struct out o = { emit, ctx, 0 };

    while (*fmt != '\0') {
        if (*fmt != '%') {
            put(&o, *fmt++);
            continue;
        }
        const char *start = fmt++;
        struct spec sp = { 0, 0, -1, LM_NONE };

        /* flags */
        for (;; fmt++) {
            if (*fmt == '-')
                sp.flags |= F_LEFT;
            else if (*fmt == '0')
                sp.flags |= F_ZERO;
            else if (*fmt == '+')
                sp.flags |= F_PLUS;
            else if (*fmt == ' ')
                sp.flags |= F_SPACE;
            else if (*fmt == '#')
                sp.flags |= F_ALT;
            else
                break;
        }

        /* width */
        if (*fmt == '*') {
            int w = va_arg(ap, int);
            if (w < 0) {
                sp.flags |= F_LEFT;
                w = (w == (-FMT_INT_MAX - 1)) ? FMT_INT_MAX : -w;
            }
            sp.width = w;
            fmt++;
        } else {
            sp.width = parse_num(&fmt);
        }

        /* precision */
        if (*fmt == '.') {
            fmt++;
            if (*fmt == '*') {
                int p = va_arg(ap, int);
                sp.prec = p < 0 ? -1 : p;
                fmt++;
            } else {
                sp.prec = parse_num(&fmt);
            }
        }

        /* length modifier */
        switch (*fmt) {
        case 'h':
            fmt++;
            if (*fmt == 'h') {
                fmt++;
                sp.len = LM_HH;
            } else {
                sp.len = LM_H;
            }
            break;
        case 'l':
            fmt++;
            if (*fmt == 'l') {
                fmt++;
                sp.len = LM_LL;
            } else {
                sp.len = LM_L;
            }
            break;
        case 'z':
            fmt++;
            sp.len = LM_Z;
            break;
        case 't':
            fmt++;
            sp.len = LM_T;
            break;
        case 'j':
            fmt++;
            sp.len = LM_J;
            break;
        default:
            break;
        }

        char conv = *fmt;
        if (conv != '\0')
            fmt++;

        switch (conv) {
        case 'd':
        case 'i': {
            intmax_t v;
            switch (sp.len) {
            case LM_HH: v = (signed char)va_arg(ap, int); break;
            case LM_H: v = (short)va_arg(ap, int); break;
            case LM_L: v = va_arg(ap, long); break;
            case LM_LL: v = va_arg(ap, long long); break;
            case LM_Z: v = va_arg(ap, ptrdiff_t); break;   /* signed size_t */
            case LM_T: v = va_arg(ap, ptrdiff_t); break;
            case LM_J: v = va_arg(ap, intmax_t); break;
            default: v = va_arg(ap, int); break;
            }
            int neg = v < 0;
            uintmax_t u = neg ? (uintmax_t)0 - (uintmax_t)v : (uintmax_t)v;
            format_uint(&o, &sp, u, neg, 1, 10, 0, 0);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
        case 'o': {
            uintmax_t v;
            switch (sp.len) {
            case LM_HH: v = (unsigned char)va_arg(ap, unsigned); break;
            case LM_H: v = (unsigned short)va_arg(ap, unsigned); break;
            case LM_L: v = va_arg(ap, unsigned long); break;
            case LM_LL: v = va_arg(ap, unsigned long long); break;
            case LM_Z: v = va_arg(ap, size_t); break;
            case LM_T: v = (size_t)va_arg(ap, ptrdiff_t); break;
            case LM_J: v = va_arg(ap, uintmax_t); break;
            default: v = va_arg(ap, unsigned); break;
            }
            unsigned base = conv == 'u' ? 10 : conv == 'o' ? 8 : 16;
            format_uint(&o, &sp, v, 0, 0, base, conv == 'X', 0);
            break;
        }
        case 'p': {
            uintptr_t v = (uintptr_t)va_arg(ap, void *);
            format_uint(&o, &sp, v, 0, 0, 16, 0, 1);
            break;
        }
        case 's':
            format_str(&o, &sp, va_arg(ap, const char *));
            break;
        case 'c':
            format_char(&o, &sp, (char)va_arg(ap, int));
            break;
        case '%':
            put(&o, '%');
            break;
        default:
            /* Unknown or truncated conversion: copy the text through unchanged. */
            while (start < fmt)
                put(&o, *start++);
            break;
        }
    }
    return o.count;
}
