/*
 * Kernel options: the table made from options.def, command-line parsing into the option
 * variables, SYS_KSET for run-time options, and the text of the banner and hello record.
 * The given words are kept as given (for SYS_KOPT and the records); the variables hold the
 * values in force, which is what the kernel reads.
 */
#include <ondol/abi.h>
#include "kernel.h"
#include "options.h"
#include "pcnt.h"

#define MAX_OPTS 64
#define OPT_TEXT 4096

struct option {
    const char *key;
    const char *values;      /* enum: "v0|v1|..." */
    const char *def;         /* default, as command-line text */
    enum opt_type type;
    enum opt_scope scope;
    long min, max;           /* int range */
    void *var;               /* boot and run-time options; NULL otherwise */
    long built;              /* build options: the value compiled in */
};

/* A parsed value: n for int, bool and enum (the value's index), s for text. */
struct opt_value {
    u64 n;
    const char *s;
};

#define OPT_VAR_BUILD(var) NULL
#define OPT_VAR_BOOT(var) &(var)
#define OPT_VAR_RUN(var) &(var)
#define OPT_VAR_USER(var) NULL
#define OPT_BUILT_BUILD(var) (var)
#define OPT_BUILT_BOOT(var) 0
#define OPT_BUILT_RUN(var) 0
#define OPT_BUILT_USER(var) 0
#define OPT_ROW(key, values, def, type, lo, hi, scope, var) \
    {#key, values, #def, OPT_TYPE_##type, OPT_SCOPE_##scope, lo, hi, OPT_VAR_##scope(var),  \
     OPT_BUILT_##scope(var)},
#define OPT_INT(key, lo, hi, def, scope, var, doc) OPT_ROW(key, NULL, def, INT, lo, hi, scope, var)
#define OPT_BOOL(key, def, scope, var, doc) OPT_ROW(key, NULL, def, BOOL, 0, 1, scope, var)
#define OPT_ENUM(key, values, def, scope, var, doc) \
    OPT_ROW(key, values, def, ENUM, 0, 0, scope, var)
#define OPT_STR(key, def, scope, var, doc) OPT_ROW(key, NULL, def, STR, 0, 0, scope, var)
static const struct option table[] = {
#include "options.def"
};
#undef OPT_INT
#undef OPT_BOOL
#undef OPT_ENUM
#undef OPT_STR

/* A build option's compiled-in value must be in its declared range. */
#define OPT_CHECK_BUILD(var, lo, hi) \
    _Static_assert((var) >= (lo) && (var) <= (hi), "build option " #var " out of range");
#define OPT_CHECK_BOOT(var, lo, hi)
#define OPT_CHECK_RUN(var, lo, hi)
#define OPT_CHECK_USER(var, lo, hi)
#define OPT_INT(key, lo, hi, def, scope, var, doc) OPT_CHECK_##scope(var, lo, hi)
#define OPT_BOOL(...)
#define OPT_ENUM(...)
#define OPT_STR(...)
#include "options.def"
#undef OPT_INT
#undef OPT_BOOL
#undef OPT_ENUM
#undef OPT_STR

#define NOPTIONS (sizeof(table) / sizeof(table[0]))

static char text[OPT_TEXT];
static struct {
    const char *key, *value;
} given[MAX_OPTS];
static int ngiven;

static const struct option *find(const char *key)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (!strcmp(table[i].key, key))
            return &table[i];
    return NULL;
}

/* Index of `word` in the "v0|v1|..." list, or -1. */
static int enum_index(const char *values, const char *word)
{
    size_t len = strlen(word);
    for (int i = 0; *values; i++) {
        size_t n = strcspn(values, "|");
        if (n == len && !memcmp(values, word, n))
            return i;
        values += n + (values[n] == '|');
    }
    return -1;
}

static bool parse_int(const struct option *o, const char *s, u64 *out, char *why, size_t n)
{
    u64 v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++)
        if (v <= (u64)o->max)       /* stop growing once out of range: no overflow */
            v = v * 10 + (u64)(*p - '0');
    if (p == s || *p) {
        ksnprintf(why, n, "is not a number");
        return false;
    }
    if (v < (u64)o->min || v > (u64)o->max) {
        ksnprintf(why, n, "out of range [%ld, %ld]", o->min, o->max);
        return false;
    }
    *out = v;
    return true;
}

/* Parses `s` as a value of `o`. On failure writes the reason into why and returns false. */
static bool parse_value(const struct option *o, const char *s, struct opt_value *v, char *why,
                        size_t n)
{
    v->s = s;
    switch (o->type) {
    case OPT_TYPE_INT:
        return parse_int(o, s, &v->n, why, n);
    case OPT_TYPE_BOOL: {
        int i = enum_index("off|on|0|1|no|yes|false|true", s);
        v->n = (u64)(i & 1);
        if (i < 0)
            ksnprintf(why, n, "is not on/off");
        return i >= 0;
    }
    case OPT_TYPE_ENUM: {
        int i = enum_index(o->values, s);
        v->n = (u64)i;
        if (i < 0)
            ksnprintf(why, n, "is not one of %s", o->values);
        return i >= 0;
    }
    case OPT_TYPE_STR:
        return true;
    }
    return false;
}

static void store(const struct option *o, const struct opt_value *v)
{
    if (!o->var)
        return;
    switch (o->type) {
    case OPT_TYPE_INT: *(u64 *)o->var = v->n; break;
    case OPT_TYPE_BOOL: *(bool *)o->var = v->n != 0; break;
    case OPT_TYPE_ENUM: *(int *)o->var = (int)v->n; break;
    case OPT_TYPE_STR: *(const char **)o->var = v->s; break;
    }
}

/* Sets one boot-time option from its given word, or its default (a bad word is reported). */
static void apply(const struct option *o)
{
    struct opt_value v;
    char why[96];
    const char *s = opt_get(o->key);
    if (s && !parse_value(o, s, &v, why, sizeof(why))) {
        printk("ondol: option %s=%s %s; using %s\n", o->key, s, why, o->def);
        s = NULL;
    }
    if (!s && !parse_value(o, o->def, &v, why, sizeof(why)))
        panic("options.def: default of %s %s", o->key, why);
    store(o, &v);
}

/* Splits the command line into the given[] words. Multiboot loaders (QEMU -kernel, GRUB)
 * put the image path first: that word is skipped unless it is itself an option. */
static void split_words(const char *cmdline)
{
    size_t len = MIN(strlen(cmdline), sizeof(text) - 1);
    memcpy(text, cmdline, len);
    text[len] = 0;
    char *p = text + strspn(text, " ");
    size_t first = strcspn(p, " ");
    if (!memchr(p, '=', first))
        p += first;
    while (ngiven < MAX_OPTS) {
        p += strspn(p, " ");
        if (!*p)
            break;
        char *word = p;
        p += strcspn(p, " ");
        if (*p)
            *p++ = 0;
        char *eq = strchr(word, '=');
        if (eq)
            *eq = 0;
        given[ngiven].key = word;
        given[ngiven].value = eq ? eq + 1 : "1";      /* a bare word is key=1 */
        ngiven++;
    }
    p += strspn(p, " ");
    if (*p)
        printk("ondol: more than %d options; ignored from: %s\n", MAX_OPTS, p);
}

void options_parse(const char *cmdline)
{
    split_words(cmdline);
    for (int i = 0; i < ngiven; i++)
        if (!find(given[i].key))
            printk("ondol: unknown option %s (kept for user programs)\n", given[i].key);
    for (size_t i = 0; i < NOPTIONS; i++)
        if (table[i].scope != OPT_SCOPE_BUILD)
            apply(&table[i]);
}

long options_set(const char *key, const char *value)
{
    const struct option *o = find(key);
    if (!o || o->scope != OPT_SCOPE_RUN)
        return E_NOENT;
    struct opt_value v;
    char why[96];
    if (!parse_value(o, value, &v, why, sizeof(why)))
        return E_INVAL;
    store(o, &v);
    kernel_lock_flags_update();     /* option markers: the BKL's slow-path flag follows it */
    return 0;
}

/* The i-th value of a "v0|v1|..." list, copied into buf. */
static const char *enum_value(const char *values, int i, char *buf, size_t size)
{
    while (i-- > 0)
        values += strcspn(values, "|") + 1;
    size_t n = MIN(strcspn(values, "|"), size - 1);
    memcpy(buf, values, n);
    buf[n] = 0;
    return buf;
}

/* The current value of an option with a variable or a build value, as text. */
static const char *value_text(const struct option *o, char *buf, size_t size)
{
    if (o->scope == OPT_SCOPE_BUILD) {
        ksnprintf(buf, size, "%ld", o->built);
        return buf;
    }
    switch (o->type) {
    case OPT_TYPE_INT: ksnprintf(buf, size, "%lu", (unsigned long)*(u64 *)o->var); return buf;
    case OPT_TYPE_BOOL: return *(bool *)o->var ? "on" : "off";
    case OPT_TYPE_ENUM: return enum_value(o->values, *(int *)o->var, buf, size);
    case OPT_TYPE_STR: return *(const char **)o->var;
    }
    return "";
}

/* Appends s at buf[n] (for JSON without '"' and '\\', which option text never needs);
 * returns the new length, or -1 when it does not fit. */
static int append(char *buf, int n, size_t size, const char *s, bool json)
{
    for (; *s; s++) {
        if (json && (*s == '"' || *s == '\\'))
            continue;
        if ((size_t)n + 1 >= size)
            return -1;
        buf[n++] = *s;
    }
    buf[n] = 0;
    return n;
}

/* Appends one key/value pair: " key=value" or ",\"key\":value" (quoted unless a number). */
static int append_pair(char *buf, int n, size_t size, const char *key, const char *value,
                       bool json, bool number)
{
    const char *q = json && !number ? "\"" : "";
    const char *parts[] = {n ? (json ? "," : " ") : "", json ? "\"" : "", key,
                           json ? "\":" : "=", q, value, q};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && n >= 0; i++)
        n = append(buf, n, size, parts[i], json && i == 5);
    return n;
}

int options_format(char *buf, size_t size, unsigned scopes, bool json)
{
    int n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &table[i];
        if (!(scopes & (1u << o->scope)) || (!o->var && o->scope != OPT_SCOPE_BUILD))
            continue;
        char tmp[64];
        int w = append_pair(buf, n, size, o->key, value_text(o, tmp, sizeof(tmp)), json,
                            o->type == OPT_TYPE_INT);
        if (w < 0) {
            buf[n] = 0;          /* cut at the last whole option */
            break;
        }
        n = w;
    }
    return n;
}

int options_format_given(char *buf, size_t size, bool json)
{
    int n = 0;
    buf[0] = 0;
    for (int i = 0; i < ngiven; i++) {
        int w = append_pair(buf, n, size, given[i].key, given[i].value, json, false);
        if (w < 0) {
            buf[n] = 0;
            break;
        }
        n = w;
    }
    return n;
}

const char *opt_get(const char *key)
{
    for (int i = ngiven - 1; i >= 0; i--)     /* the last occurrence wins */
        if (strcmp(given[i].key, key) == 0)
            return given[i].value;
    return NULL;
}
