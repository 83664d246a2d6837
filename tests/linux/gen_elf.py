"""The malformed-ELF corpus: files that execve must refuse (ENOEXEC, EINVAL, ...) or, where
Linux accepts the header, run into a fault; never anything else. `corpus()` returns
{name: bytes}; the suite installs them as /suite/elf/NAME (mode 0755) and
tests/linux/execelf.c execve's each one and prints what happened.

Every file is derived from one valid program written here byte by byte: a 64-bit
ET_EXEC with one PT_LOAD (R+X) at 0x400000 whose code is `mov edi, 42; mov eax, 60
(exit); syscall`. Each variant changes one thing.

    python3 tests/linux/gen_elf.py DIR     # write the corpus into DIR
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path

BASE = 0x400000
EHDR_SIZE, PHDR_SIZE = 64, 56
PT_LOAD, PT_INTERP = 1, 3
# mov edi, 42 ; mov eax, 60 ; syscall
CODE = bytes([0xBF, 42, 0, 0, 0, 0xB8, 60, 0, 0, 0, 0x0F, 0x05])


def ehdr(entry: int, phnum: int, *, cls: int = 2, etype: int = 2, machine: int = 62,
         phoff: int = EHDR_SIZE, phentsize: int = PHDR_SIZE) -> bytes:
    """An ELF header (little-endian, version 1, System V ABI)."""
    ident = b"\x7fELF" + bytes([cls, 1, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHIQQQIHHHHHH", etype, machine, 1, entry, phoff, 0, 0,
                               EHDR_SIZE, phentsize, phnum, 64, 0, 0)


def phdr(ptype: int, offset: int, vaddr: int, filesz: int, memsz: int,
         flags: int = 5, align: int = 0x1000) -> bytes:
    """One program header."""
    return struct.pack("<IIQQQQQQ", ptype, flags, offset, vaddr, vaddr, filesz, memsz, align)


def program(*, entry_delta: int = 0, load=None, extra_phdrs: tuple = (), tail: bytes = b"",
            **hdr) -> bytes:
    """The valid program, with the first PT_LOAD's fields overridden by LOAD (a dict),
    more program headers appended, bytes appended, or header fields changed."""
    phnum = 1 + len(extra_phdrs)
    start = EHDR_SIZE + PHDR_SIZE * phnum
    size = start + len(CODE) + len(tail)
    fields = dict(offset=0, vaddr=BASE, filesz=size, memsz=size)
    fields.update(load or {})
    headers = phdr(PT_LOAD, **fields) + b"".join(extra_phdrs)
    hdr.setdefault("phnum", phnum)
    return ehdr(BASE + start + entry_delta, **hdr) + headers + CODE + tail


def interp(path: bytes) -> bytes:
    """A program with a PT_INTERP naming PATH (stored after the code)."""
    start = EHDR_SIZE + PHDR_SIZE * 2
    off = start + len(CODE)
    return program(extra_phdrs=(phdr(PT_INTERP, off, BASE + off, len(path), len(path), 4, 1),),
                   tail=path)


def corpus() -> dict[str, bytes]:
    valid = program()
    return {
        "valid": valid,
        "empty": b"",
        "text": b"this is not a program\n",
        "magic_only": valid[:4],
        "truncated_header": valid[:40],
        "truncated_phdrs": valid[:EHDR_SIZE + 20],
        # Linux 6.1 does not look at e_ident[EI_CLASS]: both of these run.
        "class32": program(cls=1),
        "bad_class": program(cls=3),
        "wrong_machine": program(machine=3),
        "relocatable": program(etype=1),
        "bad_phentsize": program(phentsize=32),
        "phnum_zero": program(phnum=0),
        "phnum_huge": program(phnum=0xFFFF),
        "phoff_beyond_file": program(phoff=0x100000),
        "filesz_beyond_file": program(load=dict(filesz=0x10000, memsz=0x10000)),
        "filesz_gt_memsz": program(load=dict(filesz=0x2000, memsz=0x100)),
        "memsz_huge": program(load=dict(memsz=1 << 46)),
        "vaddr_kernel": program(load=dict(vaddr=0xFFFF800000000000)),
        "misaligned_offset": program(load=dict(offset=1)),
        "overlapping_loads": program(extra_phdrs=(phdr(PT_LOAD, 0, BASE, 0x100, 0x100, 6),)),
        "entry_zero": program(entry_delta=-(BASE + EHDR_SIZE + PHDR_SIZE)),
        "entry_outside": program(entry_delta=0x10000000),
        "interp_missing": interp(b"/lib/no-such-loader.so\0"),
        "interp_not_elf": interp(b"/suite/run\0"),        # a script: not an ELF file
        "interp_not_executable": interp(b"/suite/list\0"),
        "interp_directory": interp(b"/suite\0"),
        "interp_no_nul": interp(b"/suite/run"),
        "interp_too_short": interp(b"\0"),
        "interp_outside_file": program(extra_phdrs=(phdr(PT_INTERP, 0x10000, BASE, 16, 16, 4, 1),)),
        "script_missing_interp": b"#!/no/such/interpreter\n",
        "script_no_interp": b"#!\n",
    }


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "elf-corpus")
    out.mkdir(parents=True, exist_ok=True)
    for name, data in corpus().items():
        (out / name).write_bytes(data)
        (out / name).chmod(0o755)
