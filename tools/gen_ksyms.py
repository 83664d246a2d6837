#!/usr/bin/env python3
"""Generate the kernel symbol table (.ksyms section) from `nm` output of the first link.

Usage: gen_ksyms.py NM_OUTPUT > ksyms.S   (NM_OUTPUT may be '-' for stdin; empty = no symbols)
Only text symbols are kept; they are sorted by address. The second link places .ksyms after
.data, so code addresses are identical in both links and the table stays correct.
"""
import sys


def main() -> None:
    src = sys.stdin if sys.argv[1] == "-" else open(sys.argv[1], encoding="ascii")
    syms = []
    for line in src:
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("T", "t"):
            syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    out = ['    .section .ksyms, "a"', "    .align 16", "    .globl ksyms_count, ksyms_table, ksyms_names",
           f"ksyms_count: .quad {len(syms)}", "ksyms_table:"]
    offset = 0
    for addr, name in syms:
        out.append(f"    .quad {addr:#x}; .long {offset}, 0")
        offset += len(name) + 1
    out.append("ksyms_names:")
    for _, name in syms:
        out.append(f'    .asciz "{name}"')
    out.append('    .section .note.GNU-stack, "", @progbits')
    print("\n".join(out))


if __name__ == "__main__":
    main()
