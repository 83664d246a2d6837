/* Kernel command-line options, parsed once at boot into a fixed table. */
#include "kernel.h"
#include "options.h"

#define MAX_OPTS 32
#define OPT_TEXT 1024

static char text[OPT_TEXT];
static struct {
    const char *key, *value;
} opts[MAX_OPTS];
static int nopts;

void options_parse(const char *cmdline)
{
    size_t len = strlen(cmdline);
    if (len >= sizeof(text))
        len = sizeof(text) - 1;
    memcpy(text, cmdline, len);
    text[len] = 0;
    char *p = text;
    /* Multiboot loaders (QEMU -kernel, GRUB) put the image path first: skip that word
     * unless it is itself an option (contains '='). */
    while (*p == ' ')
        p++;
    size_t first = strcspn(p, " ");
    if (!memchr(p, '=', first))
        p += first;
    while (*p && nopts < MAX_OPTS) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        char *word = p;
        while (*p && *p != ' ')
            p++;
        if (*p)
            *p++ = 0;
        char *eq = strchr(word, '=');
        if (!eq) {
            opts[nopts].key = word;      /* a bare word is key=1 */
            opts[nopts].value = "1";
        } else {
            *eq = 0;
            opts[nopts].key = word;
            opts[nopts].value = eq + 1;
        }
        nopts++;
    }
}

const char *opt_get(const char *key)
{
    for (int i = nopts - 1; i >= 0; i--)     /* the last occurrence wins */
        if (strcmp(opts[i].key, key) == 0)
            return opts[i].value;
    return NULL;
}

long opt_get_int(const char *key, long def, long min, long max)
{
    const char *v = opt_get(key);
    if (!v || !*v)
        return def;
    long n = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9') {
            printk("ondol: option %s=%s is not a number; using %ld\n", key, v, def);
            return def;
        }
        n = n * 10 + (*p - '0');
        if (n > max)
            break;
    }
    if (n < min || n > max) {
        printk("ondol: option %s=%s out of range [%ld, %ld]; using %ld\n", key, v, min, max, def);
        return def;
    }
    return n;
}

bool opt_get_bool(const char *key, bool def)
{
    const char *v = opt_get(key);
    if (!v)
        return def;
    if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true"))
        return true;
    if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "false"))
        return false;
    printk("ondol: option %s=%s is not on/off; using %s\n", key, v, def ? "on" : "off");
    return def;
}

int options_count(void) { return nopts; }
void options_at(int i, const char **key, const char **value)
{
    *key = opts[i].key;
    *value = opts[i].value;
}
