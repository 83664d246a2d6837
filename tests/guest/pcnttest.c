/*
 * pcnttest MODE — exercises the pcnt system call for tests/test_pcnt.py.
 *   states    every slot transition of P3's state machine, printed as "name=STATUS"
 *   overhead  a measured region vs the overhead slot: raw, net and slot 0
 *   repeat    repeated-measurement mode: 200 samples with count/dropped/min/median/max
 *   errors    bad pointers, commands, slots and events -> the documented error codes;
 *             run unprivileged (as the shell runs it): the facility's switches and the
 *             probes' slots give E_PERM, and an unprivileged CLEAR leaves slot 0 alone
 * User slots follow the kernel's probes (named in a dump); the first five are used.
 */
#include <stdio.h>
#include <string.h>
#include <ondol/sys.h>

static const char *const names[] = {"INIT", "RUNNING", "SET", "FAIL"};
static struct pcnt_slot_info slots[64];
static int nslots;                   /* the kernel's PCNT_SLOTS: the largest dump it takes */
static int first_user;               /* the first user slot */

static long pcnt(unsigned cmd, long a, long b, long c) { return SC4(SYS_PCNT, cmd, a, b, c); }

/* Every slot; the probes' slots carry their names, so the first unnamed one after slot 0
 * is the first user slot. */
static void find_user_slots(void)
{
    for (nslots = 64; nslots > 1 && pcnt(PCNT_DUMP, (long)slots, nslots, 0) < 0; nslots--)
        continue;
    for (first_user = 1; first_user < nslots && slots[first_user].name[0]; first_user++)
        continue;
}

static const char *status_of(int slot)
{
    pcnt(PCNT_DUMP, (long)slots, nslots, 0);
    return names[slots[slot].status & 3];
}

static void states(void)
{
    pcnt(PCNT_CLEAR, 0, 0, 0);
    printf("clear=%s\n", status_of(first_user + 2));
    pcnt(PCNT_START, first_user + 2, 42, 0);
    const char *st = status_of(first_user + 2);     /* refreshes slots[] before it is read below */
    printf("start=%s para=%llu\n", st, (unsigned long long)slots[first_user + 2].para);
    pcnt(PCNT_STOP, first_user + 2, 0, 0);
    printf("stop=%s\n", status_of(first_user + 2));
    pcnt(PCNT_START, first_user + 2, 7, 0);
    printf("start_on_set=%s\n", status_of(first_user + 2));
    pcnt(PCNT_STOP, first_user + 2, 0, 0);
    printf("stop_on_set=%s\n", status_of(first_user + 2));
    pcnt(PCNT_STOP, first_user + 3, 0, 0);
    printf("stop_on_init=%s\n", status_of(first_user + 3));
    pcnt(PCNT_START, first_user + 3, 0, 0);
    printf("start_on_fail=%s\n", status_of(first_user + 3));
    pcnt(PCNT_START, first_user + 4, 0, 0);
    pcnt(PCNT_START, first_user + 4, 0, 0);
    printf("start_on_running=%s\n", status_of(first_user + 4));
    pcnt(PCNT_CLEAR, 0, 0, 0);
    st = status_of(first_user + 2);
    printf("after_clear=%s,%s,%s\n", st, names[slots[first_user + 3].status & 3],
           names[slots[first_user + 4].status & 3]);
}

static void overhead(void)
{
    pcnt(PCNT_CLEAR, 0, 0, 0);
    pcnt(PCNT_START, first_user + 1, 20, 0);
    volatile uint64_t x = 0;
    for (int i = 0; i < 1000; i++)
        x += (uint64_t)i;
    pcnt(PCNT_STOP, first_user + 1, 0, 0);
    pcnt(PCNT_DUMP, (long)slots, nslots, 0);
    printf("slot0=%llu raw=%llu net=%llu status=%s\n", (unsigned long long)slots[0].tsc,
           (unsigned long long)slots[first_user + 1].tsc,
           (unsigned long long)slots[first_user + 1].tsc_net,
           names[slots[first_user + 1].status & 3]);
}

static void repeat(void)
{
    pcnt(PCNT_CLEAR, 0, 0, 0);
    pcnt(PCNT_REPEAT, first_user, 1, 0);
    for (int i = 0; i < 200; i++) {
        pcnt(PCNT_START, first_user, (uint64_t)i, 0);
        pcnt(PCNT_STOP, first_user, 0, 0);
    }
    pcnt(PCNT_DUMP, (long)slots, nslots, 0);
    const struct pcnt_slot_info *s = &slots[first_user];
    printf("count=%llu dropped=%llu ring=%u min=%llu max=%llu sum=%llu status=%s\n",
           (unsigned long long)s->count, (unsigned long long)s->dropped, s->ring_len,
           (unsigned long long)s->min, (unsigned long long)s->max, (unsigned long long)s->sum,
           names[s->status & 3]);
}

static void errors(void)
{
    printf("dump_kernel=%ld\n", pcnt(PCNT_DUMP, (long)0xffffffff80100000ull, 16, 0));
    printf("dump_unmapped=%ld\n", pcnt(PCNT_DUMP, 0x10000000, 16, 0));
    printf("dump_toomany=%ld\n", pcnt(PCNT_DUMP, (long)slots, 1000, 0));
    printf("dump_badcpu=%ld\n", pcnt(PCNT_DUMP, (long)slots, 16, 99));
    printf("get_null=%ld\n", pcnt(PCNT_GET_EVENT, 0, 0, 0));
    printf("list_kernel=%ld\n", pcnt(PCNT_LIST, (long)0xffff800000000000ull, 64, 0));
    printf("bad_cmd=%ld\n", pcnt(999, 0, 0, 0));
    printf("start_slot0=%ld\n", pcnt(PCNT_START, 0, 0, 0));
    printf("start_slot99=%ld\n", pcnt(PCNT_START, 99, 0, 0));
    printf("set_bad_event=%ld\n", pcnt(PCNT_SET_EVENT, 77, 1, PCNT_MODE_USER));
    printf("set_bad_mode=%ld\n", pcnt(PCNT_SET_EVENT, 1, 2, 0));
    printf("set_event=%ld\n", pcnt(PCNT_SET_EVENT, PCNT_EV_INSTRUCTIONS, PCNT_EV_CYCLES, PCNT_MODE_USER));
    struct pcnt_events ev;
    pcnt(PCNT_GET_EVENT, (long)&ev, 0, 0);
    printf("supported=%u ev0=%d ev1=%d\n", ev.supported, ev.ev[0], ev.ev[1]);
    pcnt(PCNT_DUMP, (long)slots, 16, 0);
    uint64_t slot0 = slots[0].tsc;
    printf("probes_on=%ld probes_off=%ld reset=%ld\n", pcnt(PCNT_PROBES, 1, 0, 0),
           pcnt(PCNT_PROBES, 0, 0, 0), pcnt(PCNT_RESET, 0, 0, 0));
    printf("start_probe_slot=%ld stop_probe_slot=%ld repeat_probe_slot=%ld\n",
           pcnt(PCNT_START, 1, 0, 0), pcnt(PCNT_STOP, 3, 0, 0), pcnt(PCNT_REPEAT, 5, 1, 0));
    pcnt(PCNT_CLEAR, 0, 0, 0);
    pcnt(PCNT_DUMP, (long)slots, 16, 0);
    pcnt(PCNT_GET_EVENT, (long)&ev, 0, 0);
    printf("slot0_kept=%d probes_state=%u\n", slots[0].tsc == slot0, ev.probes);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    find_user_slots();
    if (!strcmp(mode, "states"))
        states();
    else if (!strcmp(mode, "overhead"))
        overhead();
    else if (!strcmp(mode, "repeat"))
        repeat();
    else if (!strcmp(mode, "errors"))
        errors();
    else {
        printf("usage: pcnttest states|overhead|repeat|errors\n");
        return 2;
    }
    return 0;
}
