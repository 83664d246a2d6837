"""The kernel options for host tools, read from kernel/boot/options.def.

options.def is the only list of kernel options. This module parses it and writes the options
table of docs/options.md (between the two marker lines), so the page cannot drift:

    python3 -m ondol.options --write     # what `make docs` runs (from tools/)
    python3 -m ondol.options --check     # exit 1 when docs/options.md is stale
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from .abi import macro_lines, unquote

ROOT = Path(__file__).resolve().parents[2]
OPTIONS_DEF = ROOT / "kernel" / "boot" / "options.def"
DOC = ROOT / "docs" / "options.md"
BEGIN = "<!-- options table: generated from kernel/boot/options.def by `make docs` -->"
END = "<!-- end of options table -->"
SCOPE_TEXT = {"BUILD": "build", "BOOT": "boot", "RUN": "boot, run (`SYS_KSET`)",
              "USER": "boot, read by user programs"}


@dataclass(frozen=True)
class Option:
    key: str
    type: str            # INT, BOOL, ENUM, STR
    default: str         # as command-line text; "" for none
    scope: str           # BUILD, BOOT, RUN, USER
    variable: str        # C variable (the make variable for BUILD; "none" for USER)
    doc: str
    min: int | None = None
    max: int | None = None
    values: tuple[str, ...] = ()

    def values_text(self) -> str:
        if self.type == "INT":
            return f"{self.min}–{self.max}"
        if self.type == "BOOL":
            return "on/off"
        if self.type == "ENUM":
            return "/".join(f"`{v}`" for v in self.values)
        return "text"


def read_options(path: Path = OPTIONS_DEF) -> list[Option]:
    options = []
    for macro, args in macro_lines(path):
        kind = macro.removeprefix("OPT_")
        if kind == "INT":
            key, lo, hi, default, scope, var, doc = args
            opt = Option(key, kind, default, scope, var, unquote(doc), int(lo), int(hi))
        elif kind == "ENUM":
            key, values, default, scope, var, doc = args
            opt = Option(key, kind, default, scope, var, unquote(doc),
                         values=tuple(unquote(values).split("|")))
        elif kind in ("BOOL", "STR"):
            key, default, scope, var, doc = args
            opt = Option(key, kind, default, scope, var, unquote(doc))
        else:
            raise ValueError(f"options.def: unknown macro {macro}")
        options.append(opt)
    return options


def markdown_table(options: list[Option]) -> str:
    rows = ["| option | scope | values | default | variable | meaning |",
            "|---|---|---|---|---|---|"]
    for o in options:
        key = f"`{o.variable}` (make)" if o.scope == "BUILD" else f"`{o.key}`"
        var = "—" if o.scope in ("BUILD", "USER") else f"`{o.variable}`"
        default = f"`{o.default}`" if o.default else "—"
        rows.append(f"| {key} | {SCOPE_TEXT[o.scope]} | {o.values_text()} | {default} | {var} "
                    f"| {o.doc} |")
    return "\n".join(rows)


def render_doc(text: str, options: list[Option]) -> str:
    """The page with the text between BEGIN and END replaced by the table."""
    head, sep, rest = text.partition(BEGIN + "\n")
    _old, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"{DOC.name}: the marker lines are missing")
    return head + BEGIN + "\n" + markdown_table(options) + "\n" + END + tail


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite docs/options.md")
    ap.add_argument("--check", action="store_true", help="fail when docs/options.md is stale")
    args = ap.parse_args(argv)
    current = DOC.read_text()
    wanted = render_doc(current, read_options())
    if args.write and wanted != current:
        DOC.write_text(wanted)
        print(f"updated {DOC.relative_to(ROOT)}")
    if args.check and wanted != current:
        print(f"{DOC.relative_to(ROOT)} is stale: run `make docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
