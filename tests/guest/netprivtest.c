/*
 * netprivtest: the network server's privileged ops (docs/net.md, "Changing the
 * configuration"), driven by tests/test_net_priv.py. Run as the first task
 * (`init=netprivtest`, privileged) with `net=mk` or `net=ik` and a virtio-net device:
 *   child  a copy of itself, spawned unprivileged, calls setconfig (another address, no
 *          gateway, down) and probes (on): both must be refused with E_PERM (-7); reading
 *          the configuration (config) stays open to it (0). Its verdict is its exit status.
 *   same   the configuration the parent reads after the child is the one before;
 *   priv   the parent (privileged) sets that same configuration again: accepted (0, res 0),
 *          and it reads back unchanged.
 * Prints each phase's results, then "netprivtest ok" or "netprivtest failed", and powers
 * off.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <ondol/sys.h>
#include "net_client.h"

struct cfg {
    uint64_t ip, mask, gw, mac, flags;
};

static long read_config(struct srv_conn *conn, struct cfg *c)
{
    return net_call_config(conn, &c->ip, &c->mask, &c->gw, &c->mac, &c->flags);
}

static bool same(const struct cfg *a, const struct cfg *b)
{
    return a->ip == b->ip && a->mask == b->mask && a->gw == b->gw && a->flags == b->flags;
}

/* The unprivileged copy: every refusal as expected gives status 0, else 1. */
static int child(void)
{
    struct srv_conn conn;
    if (srv_connect(&conn, NET_IFACE) < 0)
        return 2;
    uint64_t res = 99;
    long set = net_call_setconfig(&conn, 0x0a0263feu, 0xffffff00u, 0, 0, &res);
    long probes = net_call_probes(&conn, 1, &res);
    struct cfg c;
    long cfg = read_config(&conn, &c);
    printf("netprivtest child setconfig %ld probes %ld config %ld\n", set, probes, cfg);
    /* SYS_CALLER_PRIVILEGED about threads that wait for no reply of ours: refused */
    long self = sys_caller_privileged((int)sys_self(NULL));
    long none = sys_caller_privileged(0), big = sys_caller_privileged(-1);
    printf("netprivtest child caller %ld %ld %ld\n", self, none, big);
    bool ok = set == E_PERM && probes == E_PERM && cfg == 0;
    ok &= self == E_PERM && none == E_PERM && big == E_PERM;
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child();
    struct srv_conn conn;
    struct cfg before, after, again;
    bool ok = srv_connect(&conn, NET_IFACE) == 0 && read_config(&conn, &before) == 0;
    const char *child_argv[] = {"netprivtest", "child"};
    int status = -1;
    long task = sys_spawn("netprivtest", child_argv, 2, 0);
    if (task > 0)
        sys_task_wait((int)task, &status);
    printf("netprivtest child status %d\n", status);
    ok &= status == 0 && read_config(&conn, &after) == 0;
    printf("netprivtest same %d\n", ok && same(&before, &after));
    ok &= same(&before, &after);
    uint64_t res = 99;
    long set = net_call_setconfig(&conn, before.ip, before.mask, before.gw, before.flags, &res);
    ok &= read_config(&conn, &again) == 0;
    printf("netprivtest priv %ld res %ld same %d\n", set, (long)res, same(&before, &again));
    ok &= set == 0 && res == 0 && same(&before, &again);
    printf("netprivtest %s\n", ok ? "ok" : "failed");
    sys_poweroff();
    return 0;
}
