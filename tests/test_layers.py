"""The layers stay apart (issue 8, docs/architecture.md "Layers").

- Portable kernel code (kernel/ outside kernel/arch/) reaches the architecture only through
  arch.h: no other header under kernel/arch/ may be included from it.
- Code outside the kernel (user programs, benchmarks, in-guest tests, servers, lib/, drivers/)
  includes no kernel header.

Each #include is resolved the way gcc resolves it, against the include path each part is
really built with (KERNEL_CFLAGS / USER_CFLAGS, asked from make), so a header reached through
a relative path or an unexpected -I is caught as well as a plain name.
"""
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
SOURCE_SUFFIXES = {".c", ".h", ".S"}
# Everything built outside the kernel; folders that do not exist (yet) are skipped.
OUTSIDE_KERNEL = ("user", "bench", "tests/guest", "servers", "lib", "drivers")


@dataclass
class SearchPath:
    """gcc's search order: "name" looks in the including file's folder, then -iquote, -I,
    -isystem; <name> looks in -I, then -isystem (the builds use -nostdinc)."""
    quote: list
    angle: list


def search_path(flags, root):
    iquote, idirs, isystem = [], [], []
    tokens = iter(flags.split())
    for tok in tokens:
        for opt, dest in (("-iquote", iquote), ("-isystem", isystem), ("-I", idirs)):
            if tok.startswith(opt):
                value = tok[len(opt):] or next(tokens)
                dest.append((root / value).resolve())
                break
    return SearchPath(quote=iquote + idirs + isystem, angle=idirs + isystem)


def includes(src):
    for m in INCLUDE.finditer(src.read_text(errors="replace")):
        yield m.group(1), m.group(2)


def resolve(src, kind, name, path):
    """The file `#include <kind>name` in src names, or None if the path has no such file."""
    folders = ([src.parent] if kind == '"' else []) + (path.quote if kind == '"' else path.angle)
    for folder in folders:
        candidate = folder / name
        if candidate.is_file():
            return candidate.resolve()
    return None


def sources(folder):
    return sorted(p for p in folder.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file())


def inside(path, folder):
    return path.is_relative_to(folder.resolve())


def portable_kernel_sources(root):
    arch = (root / "kernel/arch").resolve()
    return [s for s in sources(root / "kernel") if not inside(s.resolve(), arch)]


def kernel_violations(root, kernel_path, arch_dir):
    """Portable kernel includes that reach kernel/arch/ other than through arch.h."""
    arch, arch_h = (root / "kernel/arch").resolve(), (root / arch_dir / "include/arch.h").resolve()
    for src in portable_kernel_sources(root):
        for kind, name in includes(src):
            target = resolve(src, kind, name, kernel_path)
            if target and inside(target, arch) and target != arch_h:
                yield f"{src.relative_to(root)}: {name} -> {target.relative_to(root.resolve())}"


def outside_violations(root, user_path, kernel_path):
    """Includes outside the kernel that name a kernel header. A name the user path does not
    resolve is tried against the kernel's path too, which catches a source compiled into the
    kernel (a server in IK form) reaching for a kernel header by its plain name."""
    kernel = (root / "kernel").resolve()
    for part in OUTSIDE_KERNEL:
        for src in sources(root / part):
            for kind, name in includes(src):
                target = (resolve(src, kind, name, user_path)
                          or resolve(src, kind, name, kernel_path))
                if target and inside(target, kernel):
                    yield f"{src.relative_to(root)}: {name} -> {target.relative_to(root.resolve())}"


def make_vars(*names):
    """Variables as the real build expands them (the Makefile and its fragments)."""
    rule = "layers-print:\n\t@printf '%s\\n' " + " ".join(f"'$({n})'" for n in names)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(["make", "-s", "--no-print-directory", f"--eval={rule}", "layers-print"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    values = out.splitlines()
    assert len(values) == len(names) and all(values), out
    return dict(zip(names, values))


def real_build():
    v = make_vars("KERNEL_CFLAGS", "USER_CFLAGS", "KERNEL_ARCH_DIR")
    return (search_path(v["KERNEL_CFLAGS"], ROOT), search_path(v["USER_CFLAGS"], ROOT),
            v["KERNEL_ARCH_DIR"])


def test_portable_kernel_reaches_the_architecture_only_through_arch_h():
    kernel_path, _, arch_dir = real_build()
    assert list(kernel_violations(ROOT, kernel_path, arch_dir)) == []


def test_code_outside_the_kernel_includes_no_kernel_header():
    kernel_path, user_path, _ = real_build()
    assert list(outside_violations(ROOT, user_path, kernel_path)) == []


def test_the_checker_sees_every_kernel_include():
    """Every quoted include of the portable kernel resolves, so the check above is not blind
    (a header it cannot find, it cannot judge)."""
    kernel_path, _, _ = real_build()
    srcs = portable_kernel_sources(ROOT)
    assert len(srcs) > 20
    unresolved = [f"{s.relative_to(ROOT)}: {name}" for s in srcs for kind, name in includes(s)
                  if kind == '"' and resolve(s, kind, name, kernel_path) is None]
    assert unresolved == []


def test_kernel_header_names_are_unique():
    """Every kernel folder is on the include path, so a header is named by its file name
    alone; two headers with one name would make an include ambiguous."""
    headers = [h for h in (ROOT / "kernel").rglob("*.h")]
    names = [h.name for h in headers]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def plant(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checker_catches_planted_violations(tmp_path):
    plant(tmp_path, {
        "kernel/arch/x86_64/include/arch.h": '#include "x86.h"\n',
        "kernel/arch/x86_64/include/x86.h": "",
        "kernel/arch/x86_64/cpu.c": '#include "x86.h"\n',              # arch may use its own
        "kernel/core/sched.h": '#include "arch.h"\n',
        "kernel/core/ok.c": '#include "arch.h"\n#include "sched.h"\n#include <string.h>\n',
        "kernel/core/direct.c": '#  include "x86.h"\n',
        "kernel/core/relative.h": '#include "../arch/x86_64/include/x86.h"\n',
        "lib/libc/include/string.h": "",
        "lib/include/ondol/abi.h": "",
        "user/ok.c": '#include <string.h>\n#include <ondol/abi.h>\n#include "missing.h"\n',
        "user/by_name.c": '#include "sched.h"\n',
        "bench/by_path.c": '#include "../kernel/core/sched.h"\n',
        "servers/echo/echo.c": '#include <arch.h>\n',
    })
    kernel_flags = ("-nostdinc -Ikernel/core -Ikernel/arch/x86_64/include -Ilib/libc/include "
                    "-Ilib/include")
    kernel_path = search_path(kernel_flags, tmp_path)
    user_path = search_path("-nostdinc -Ilib/libc/include -Ilib/include", tmp_path)

    assert sorted(kernel_violations(tmp_path, kernel_path, "kernel/arch/x86_64")) == [
        "kernel/core/direct.c: x86.h -> kernel/arch/x86_64/include/x86.h",
        "kernel/core/relative.h: ../arch/x86_64/include/x86.h -> kernel/arch/x86_64/include/x86.h",
    ]
    assert sorted(outside_violations(tmp_path, user_path, kernel_path)) == [
        "bench/by_path.c: ../kernel/core/sched.h -> kernel/core/sched.h",
        "servers/echo/echo.c: arch.h -> kernel/arch/x86_64/include/arch.h",
        "user/by_name.c: sched.h -> kernel/core/sched.h",
    ]
