"""The ondol system-call ABI for host tools and tests, read from the C declarations.

lib/include/ondol/syscalls.def and errors.def are the only lists of system calls and error
codes; this module parses them when imported, so Python never repeats a number:

    from ondol import abi
    abi.E_TIMEOUT          # -8
    abi.SYS_KSET           # 27
    abi.SYSCALLS[0].name   # "null"

The parser understands exactly the X-macro lines those files contain: MACRO(arg, ...) on one
line, arguments separated by commas outside parentheses and string literals.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ABI_DIR = Path(__file__).resolve().parents[2] / "lib" / "include" / "ondol"


@dataclass(frozen=True)
class Syscall:
    number: int
    NAME: str            # SYS_<NAME>
    name: str            # sys_<name>: kernel handler and user stub
    params: str          # C parameter list, without the parentheses ("void" when none)
    result: str          # one-line description of the result
    kind: str            # "call", "noreturn", "unlocked" (no BKL) or "ipc"


@dataclass(frozen=True)
class Error:
    NAME: str            # E_<NAME>
    value: int
    meaning: str


def split_args(text: str) -> list[str]:
    """Split a macro argument list at top-level commas (not inside () or "...")."""
    args, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if quoted:
            quoted = ch != '"' or text[i - 1] == "\\"
        elif ch == '"':
            quoted = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    args.append(text[start:].strip())
    return args


def macro_lines(path: Path) -> list[tuple[str, list[str]]]:
    """(macro, arguments) for every X-macro line of a .def file; comments are skipped."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    lines = []
    for line in text.splitlines():
        m = re.fullmatch(r"\s*([A-Z_]+)\((.*)\)\s*", line)
        if m:
            lines.append((m[1], split_args(m[2])))
        elif line.strip():
            raise ValueError(f"{path.name}: not a declaration: {line!r}")
    return lines


def unquote(s: str) -> str:
    if not (s.startswith('"') and s.endswith('"')):
        raise ValueError(f"expected a string literal: {s}")
    return s[1:-1].replace('\\"', '"')


KINDS = {"SYSCALL": "call", "SYSCALL_NORETURN": "noreturn", "SYSCALL_UNLOCKED": "unlocked",
         "SYSCALL_IPC": "ipc"}


def read_syscalls(path: Path = ABI_DIR / "syscalls.def") -> list[Syscall]:
    calls = []
    for macro, args in macro_lines(path):
        number, NAME, name, params, _names, result = args
        calls.append(Syscall(int(number), NAME, name, params.strip("()").strip(),
                             unquote(result), KINDS[macro]))
    return calls


def read_errors(path: Path = ABI_DIR / "errors.def") -> list[Error]:
    errors = []
    for macro, args in macro_lines(path):
        if macro != "ERROR":
            raise ValueError(f"errors.def: unknown macro {macro}")
        NAME, value, meaning = args
        errors.append(Error(NAME, int(value), unquote(meaning)))
    return errors


SYSCALLS = read_syscalls()
ERRORS = read_errors()
NSYSCALLS = len(SYSCALLS)
for _call in SYSCALLS:
    globals()["SYS_" + _call.NAME] = _call.number
for _err in ERRORS:
    globals()["E_" + _err.NAME] = _err.value

