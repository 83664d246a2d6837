/*
 * Recognises the two instructions that change TLB contents, from their bytes at
 * translation time (QEMU 7.2 plugins cannot read CR3 or registers):
 *   mov cr3, r64   0F 22 /r with ModRM.reg = 3 (REX.R = 0; reg 11 would be CR11)
 *   invlpg m8      0F 01 /7 with ModRM.mod != 3 (mod = 3 encodes swapgs/rdtscp)
 * Legacy prefixes and one REX prefix may precede the opcode.
 * For the coherence model it also spots atomic read-modify-writes: a LOCK prefix, or XCHG
 * with a memory operand (86/87 with ModRM.mod != 3), whose load asks for the line in
 * modified state at once, as the hardware does.
 */
#ifndef CACHESIM_X86DEC_H
#define CACHESIM_X86DEC_H

#include <stddef.h>
#include <stdint.h>

enum insn_kind { INSN_PLAIN = 0, INSN_MOV_CR3 = 1, INSN_INVLPG = 2, INSN_ATOMIC = 3 };

enum insn_kind x86_classify(const uint8_t *bytes, size_t len);

#endif
