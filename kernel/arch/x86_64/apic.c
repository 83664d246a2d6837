/*
 * Interrupt controllers. The legacy 8259 PICs are remapped and masked; the local APIC
 * provides the periodic timer (calibrated against PIT channel 2, which also calibrates the
 * TSC) and the I/O APIC routes device interrupts (COM1). The I/O APIC's address and the
 * ISA IRQs' pins, trigger and polarity come from the MADT (acpi.c), with the standard
 * address and identity-mapped, edge, active-high ISA IRQs when the firmware has none.
 */
#include "acpi.h"
#include "apic.h"
#include "kernel.h"
#include "memlayout.h"
#include "trap.h"
#include "x86.h"

#define LAPIC_PA 0xfee00000ull
enum {
    LAPIC_ID = 0x20, LAPIC_EOI = 0xb0, LAPIC_SVR = 0xf0, LAPIC_LVT_TIMER = 0x320,
    LAPIC_TIMER_INIT = 0x380, LAPIC_TIMER_CUR = 0x390, LAPIC_TIMER_DIV = 0x3e0,
};
#define PIT_HZ 1193182u

static volatile u32 *lapic;
static u64 calibrated_tsc_hz;

static u32 lapic_read(u32 reg) { return lapic[reg / 4]; }
static void lapic_write(u32 reg, u32 v) { lapic[reg / 4] = v; (void)lapic_read(LAPIC_ID); }

void pic_disable(void)
{
    /* Remap to vectors 0x20..0x2f so a spurious IRQ cannot look like an exception, then mask. */
    outb(0x20, 0x11); outb(0xa0, 0x11);
    outb(0x21, 0x20); outb(0xa1, 0x28);
    outb(0x21, 0x04); outb(0xa1, 0x02);
    outb(0x21, 0x01); outb(0xa1, 0x01);
    outb(0x21, 0xff); outb(0xa1, 0xff);
}

void lapic_init(void)
{
    u64 base = rdmsr(MSR_APIC_BASE);
    wrmsr(MSR_APIC_BASE, base | (1u << 11));           /* global enable */
    lapic = phys_to_virt(LAPIC_PA);
    lapic_write(LAPIC_SVR, 0x100 | VEC_SPURIOUS);        /* software enable */
}

void lapic_eoi(void) { lapic_write(LAPIC_EOI, 0); }

/* An interprocessor interrupt: destination, then the command that sends it; waits until
 * the local APIC has delivered it (delivery status clear). */
#define LAPIC_ICR_LO 0x300
#define LAPIC_ICR_HI 0x310
#define ICR_PENDING (1u << 12)
#define ICR_ASSERT (1u << 14)
static void lapic_ipi(u32 apic_id, u32 command)
{
    lapic_write(LAPIC_ICR_HI, apic_id << 24);
    lapic_write(LAPIC_ICR_LO, command);
    while (lapic_read(LAPIC_ICR_LO) & ICR_PENDING)
        pause();
}

void lapic_send_init(u32 apic_id) { lapic_ipi(apic_id, 0x500 | ICR_ASSERT); }
void lapic_send_startup(u32 apic_id, u32 page) { lapic_ipi(apic_id, 0x600 | ICR_ASSERT | (page & 0xff)); }
u32 lapic_id(void) { return lapic_read(LAPIC_ID) >> 24; }
/* A fixed-vector IPI, physical destination, edge. */
void lapic_send_ipi(u32 apic_id, u8 vector) { lapic_ipi(apic_id, ICR_ASSERT | vector); }

#define LAPIC_ISR 0x100
bool lapic_in_service(u8 vector)
{
    return (lapic_read(LAPIC_ISR + 0x10 * (vector / 32)) >> (vector % 32)) & 1;
}

/* One reading of the three clocks, taken back to back: PIT channel 2's count (latched),
 * the TSC and the LAPIC timer's current count. */
struct clocks { u32 pit; u64 tsc; u32 lapic; };

static struct clocks read_clocks(void)
{
    struct clocks c;
    outb(0x43, 0x80);                          /* latch channel 2's count */
    c.pit = inb(0x42);
    c.pit |= (u32)inb(0x42) << 8;
    c.tsc = rdtsc();
    c.lapic = lapic_read(LAPIC_TIMER_CUR);
    return c;
}

#define CALIBRATE_PIT_TICKS (PIT_HZ / 100)    /* 10 ms a round */
#define CALIBRATE_ROUNDS 5

/* One round: PIT channel 2 counts down from 0xffff (mode 0, 55 ms to its end) and the
 * LAPIC timer (divide by 16, masked) from 0xffffffff; two readings at least 10 ms of the
 * PIT apart give the TSC's and the LAPIC timer's ticks per second. The rates come from
 * counts read next to each other, not from when the PIT's output rose: a vCPU that its
 * host does not run for a while (a loaded machine) then only stretches the round, where
 * it once made the TSC look 100 times slower than it was and every TSC timeout as short
 * (a shootdown's 5 s wait became 50 ms, and a panic). */
static void calibrate_round(u64 *tsc_hz_out, u32 *lapic_hz_out)
{
    outb(0x61, (inb(0x61) & ~0x02) | 0x01);   /* gate on, speaker off */
    outb(0x43, 0xb0);                          /* channel 2, lo/hi byte, mode 0 */
    outb(0x42, 0xff);
    outb(0x42, 0xff);
    lapic_write(LAPIC_TIMER_DIV, 0x3);
    lapic_write(LAPIC_LVT_TIMER, 1u << 16);    /* masked, one-shot */
    lapic_write(LAPIC_TIMER_INIT, 0xffffffff);
    struct clocks a = read_clocks(), b;
    do {
        pause();
        b = read_clocks();
    } while (b.pit <= a.pit && a.pit - b.pit < CALIBRATE_PIT_TICKS);
    lapic_write(LAPIC_TIMER_INIT, 0);
    u32 pit = b.pit <= a.pit ? a.pit - b.pit : a.pit + (0x10000 - b.pit);   /* wrapped */
    *tsc_hz_out = (b.tsc - a.tsc) * PIT_HZ / pit;
    *lapic_hz_out = (u32)((u64)(a.lapic - b.lapic) * PIT_HZ / pit);
}

static void sort_u64(u64 *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            u64 x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
}

/* The TSC's rate (kept for tsc_hz) and the LAPIC timer's ticks per second: the median of
 * CALIBRATE_ROUNDS rounds each, so that one round a descheduled vCPU spoiled is outvoted. */
static u32 calibrate(void)
{
    u64 tsc[CALIBRATE_ROUNDS], lapic_hz[CALIBRATE_ROUNDS];
    for (int i = 0; i < CALIBRATE_ROUNDS; i++) {
        u32 l;
        calibrate_round(&tsc[i], &l);
        lapic_hz[i] = l;
    }
    sort_u64(tsc, CALIBRATE_ROUNDS);
    sort_u64(lapic_hz, CALIBRATE_ROUNDS);
    calibrated_tsc_hz = tsc[CALIBRATE_ROUNDS / 2];
    return (u32)lapic_hz[CALIBRATE_ROUNDS / 2];
}

static u32 timer_initial_count;               /* the bootstrap CPU's, for every CPU */

static void timer_program(void)
{
    lapic_write(LAPIC_TIMER_DIV, 0x3);
    lapic_write(LAPIC_LVT_TIMER, VEC_TIMER | (1u << 17));   /* periodic */
    lapic_write(LAPIC_TIMER_INIT, timer_initial_count);
}

void lapic_timer_start(u32 hz)
{
    u32 per_sec = calibrate();
    timer_initial_count = MAX(per_sec / hz, 1u);
    timer_program();
}

void lapic_timer_start_ap(void) { timer_program(); }

u64 tsc_hz(void) { return calibrated_tsc_hz; }

void lapic_timer_mask(void)
{
    lapic_write(LAPIC_LVT_TIMER, 1u << 16);
    lapic_write(LAPIC_TIMER_INIT, 0);
}

#define IOAPIC_ACTIVE_LOW (1u << 13)
#define IOAPIC_LEVEL  (1u << 15)
#define IOAPIC_MASKED (1u << 16)

static volatile u32 *ioapic(void) { return phys_to_virt(acpi.ioapic_pa); }

/* The I/O APIC pin of an IRQ, and the trigger/polarity bits its redirection entry needs:
 * `level` forces level triggering (PCI INTx), else the MADT's override or ISA's edge. */
static u32 irq_pin(u32 irq, bool level, u32 *bits)
{
    bool lvl, low;
    u32 gsi = acpi_isa_gsi(irq, &lvl, &low);
    *bits = (level || lvl ? IOAPIC_LEVEL : 0) | (low ? IOAPIC_ACTIVE_LOW : 0);
    return gsi - acpi.ioapic_gsi_base;
}

/* Redirection entries of the I/O APIC (its version register, bits 16-23, + 1). */
static u32 ioapic_pins(void)
{
    volatile u32 *io = ioapic();
    io[0] = 1;
    return ((io[4] >> 16) & 0xff) + 1;
}

static void ioapic_write_entry(u32 pin, u32 low, u32 apic_id)
{
    if (pin >= ioapic_pins())
        return;                   /* an IRQ no pin carries: left unrouted */
    volatile u32 *io = ioapic();
    io[0] = 0x10 + 2 * pin + 1;
    io[4] = apic_id << 24;
    io[0] = 0x10 + 2 * pin;
    io[4] = low;
}

void ioapic_route(u32 irq, u8 vector, u32 apic_id)
{
    u32 bits, pin = irq_pin(irq, false, &bits);
    ioapic_write_entry(pin, vector | bits, apic_id);   /* fixed, physical, unmasked */
}

void ioapic_route_level(u32 irq, u8 vector, u32 apic_id)
{
    u32 bits, pin = irq_pin(irq, true, &bits);
    ioapic_write_entry(pin, vector | bits | IOAPIC_MASKED, apic_id);
}

void ioapic_mask(u32 irq, bool masked)
{
    u32 bits, pin = irq_pin(irq, true, &bits);
    if (pin >= ioapic_pins())
        return;
    volatile u32 *io = ioapic();
    io[0] = 0x10 + 2 * pin;
    u32 low = io[4];
    io[4] = masked ? low | IOAPIC_MASKED : low & ~IOAPIC_MASKED;
}
