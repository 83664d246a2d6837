/* Address-space definitions and per-task window totals. */
#include "domains.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const dkind_names[NDKIND] = {
    [DK_KERNEL] = "kernel", [DK_SERVER] = "server", [DK_USER] = "user",
    [DK_UNKNOWN] = "unknown",
};

void domains_init(struct domains *d)
{
    memset(d, 0, sizeof(*d));
}

void domains_free(struct domains *d)
{
    free(d->tasks);
    d->tasks = NULL;
    d->ntasks = d->cap = 0;
}

uint8_t domains_kind_from_payload(unsigned payload)
{
    if (payload == 1)
        return DK_SERVER;
    if (payload == 2)
        return DK_USER;
    return DK_UNKNOWN;
}

bool domains_same(const struct domains *d, unsigned asid, uint8_t kind, const char *name)
{
    const struct asid_def *a = &d->def[asid % NASID];
    return a->defined && a->kind == kind && strcmp(a->name, name) == 0;
}

void domains_define(struct domains *d, unsigned asid, uint8_t kind, const char *name)
{
    struct asid_def *a = &d->def[asid % NASID];
    a->defined = true;
    a->kind = kind;
    snprintf(a->name, sizeof(a->name), "%s", name);
}

uint8_t domains_kind(const struct domains *d, unsigned asid)
{
    const struct asid_def *a = &d->def[asid % NASID];
    return a->defined ? a->kind : DK_UNKNOWN;
}

struct task_total *domains_find(struct domains *d, uint8_t kind, const char *name)
{
    for (unsigned i = 0; i < d->ntasks; i++)
        if (d->tasks[i].kind == kind && strcmp(d->tasks[i].name, name) == 0)
            return &d->tasks[i];
    return NULL;
}

static struct task_total *add_task(struct domains *d, uint8_t kind, const char *name)
{
    if (d->ntasks == d->cap) {
        unsigned cap = d->cap ? d->cap * 2 : 16;
        struct task_total *t = realloc(d->tasks, cap * sizeof(*t));
        if (!t)
            return NULL;
        d->tasks = t;
        d->cap = cap;
    }
    struct task_total *t = &d->tasks[d->ntasks++];
    memset(t, 0, sizeof(*t));
    t->kind = kind;
    snprintf(t->name, sizeof(t->name), "%s", name);
    return t;
}

struct task_total *domains_task(struct domains *d, unsigned asid)
{
    const struct asid_def *a = &d->def[asid % NASID];
    char anon[TASK_NAME_MAX + 1];
    const char *name = a->name;
    uint8_t kind = a->kind;

    if (!a->defined) {
        snprintf(anon, sizeof(anon), "asid:%u", asid % NASID);
        name = anon;
        kind = DK_UNKNOWN;
    }
    struct task_total *t = domains_find(d, kind, name);
    return t ? t : add_task(d, kind, name);
}

void domains_clear_totals(struct domains *d)
{
    d->ntasks = 0;
}
