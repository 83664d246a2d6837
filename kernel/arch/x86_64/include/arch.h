/*
 * The architecture interface: the one header portable kernel code includes to reach the
 * CPU (tests/test_layers.py enforces it). For x86-64 it provides
 *   - per-CPU state: struct cpu, this_cpu(), cpus[], cpu_features, cpu_set_kernel_stack (cpu.h)
 *   - saved user registers: struct trapframe, tf_from_user, the vectors (trap.h)
 *   - instructions the portable code needs inline on hot paths: rdtsc, rdmsr, read_cr3,
 *     invlpg, pause, interrupt enable/disable, wait_for_interrupt (x86.h)
 *   - x87/SSE state: struct fpu_state, fpu_save/fpu_restore/fpu_init (fpu.h)
 *   - the interrupt controller and timer (apic.h), the firmware's CPU and interrupt tables
 *     (acpi.h), the other CPUs' start (smp.h) and IPIs to them (ipi.h), the serial ports (serial.h), power off,
 *     PCI configuration space (pcicfg.h)
 * The rest of arch/x86_64/include is private to arch/x86_64/.
 */
#ifndef ARCH_H
#define ARCH_H
#include "acpi.h"
#include "apic.h"
#include "cpu.h"
#include "fpu.h"
#include "ipi.h"
#include "pcicfg.h"
#include "power.h"
#include "serial.h"
#include "smp.h"
#include "trap.h"
#include "x86.h"
#endif
