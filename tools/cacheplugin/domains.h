/*
 * Who runs in which address space. The kernel announces (through markers) that address
 * space `asid` belongs to a server or user task with a name; asids are recycled, so a
 * later definition replaces the earlier one. Counts are aggregated per (kind, name), so a
 * recycled asid does not mix two tasks.
 */
#ifndef CACHESIM_DOMAINS_H
#define CACHESIM_DOMAINS_H

#include <stdbool.h>
#include <stdint.h>

#include "counters.h"

#define NASID 4096          /* marker payloads are 12 bits */
#define TASK_NAME_MAX 31

enum dkind { DK_KERNEL = 0, DK_SERVER = 1, DK_USER = 2, DK_UNKNOWN = 3, NDKIND };
extern const char *const dkind_names[NDKIND];

struct asid_def {
    bool defined;
    uint8_t kind;           /* DK_SERVER, DK_USER or DK_UNKNOWN */
    char name[TASK_NAME_MAX + 1];
};

/* Window totals of one named task (summed over vCPUs). */
struct task_total {
    uint8_t kind;
    char name[TASK_NAME_MAX + 1];
    struct counters c;
};

struct domains {
    struct asid_def def[NASID];
    struct task_total *tasks;
    unsigned ntasks, cap;
};

void domains_init(struct domains *d);
void domains_free(struct domains *d);
/* Marker payload of cmd 2 to a kind: 1 = server, 2 = user task, anything else unknown. */
uint8_t domains_kind_from_payload(unsigned payload);
bool domains_same(const struct domains *d, unsigned asid, uint8_t kind, const char *name);
void domains_define(struct domains *d, unsigned asid, uint8_t kind, const char *name);
/* Kind of whatever runs in the user half under asid right now. */
uint8_t domains_kind(const struct domains *d, unsigned asid);
/* Window totals of asid's current owner (created on first use; NULL if out of memory).
 * An undefined asid is reported as kind "unknown", name "asid:N". */
struct task_total *domains_task(struct domains *d, unsigned asid);
struct task_total *domains_find(struct domains *d, uint8_t kind, const char *name);
/* Forgets all window totals (definitions stay). */
void domains_clear_totals(struct domains *d);

#endif
