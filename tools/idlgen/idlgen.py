#!/usr/bin/env python3
"""idlgen: ondol server interfaces (interfaces/*.idl) to C stubs (docs/servers.md).

    python3 tools/idlgen/idlgen.py -o build/gen interfaces/echo.idl ...

For each interface NAME it writes, into the output folder:
  NAME.h          interface and operation numbers
  NAME_client.h   client stubs NAME_call_OP(): pack the call into message registers and
                  the UTCB buffers, ipc_call, unpack the reply (user programs)
  NAME_server.h   the functions a server implements (NAME_OP) and the dispatch
  NAME_server.c   NAME_dispatch(): unpack a struct srv_call, call NAME_OP, pack the reply;
                  compiled into the MK task and into the kernel alike
  NAME_mk.c       the MK shim: the server task's main, a reply_recv loop (lib/srv/mk.c)
and, for all interfaces together, srv_ik_table.c: the IK shim, the kernel's list of
interfaces whose dispatch it can call directly on a caller's stack (kernel/srv/ik.c).

The language, one declaration per line, '#' starts a comment:
  interface NAME NUMBER [forwarded]
(forwarded: the server is reached by forwarded Linux system calls, has no ops and brings
its own MK main in servers/NAME/mk/; only the placement and the interface number are used)
  op NAME NUMBER (TYPE ARG, ...) -> (TYPE ARG, ...) [errors E_X, E_Y]
  const NAME VALUE
(const: a value both ends use in an op's words, such as a flag bit: NAME.h defines it as
IFACE_NAME, so client and server share one definition; VALUE decimal or 0x hexadecimal)
TYPE is u64 (a message word; at most 7 each way) or buf (bytes in the UTCB buffer, at most
one each way, up to IPC_BUF_MAX). Python 3.11, standard library only.
"""
import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

MAX_WORDS = 7            # message words 1..7; word 0 carries the label / the result
MAX_IFACE = 4095         # the kernel names IK servers by thread ids with slot 0 (12 bits)
MAX_OP = 0xffff
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
TYPES = ("u64", "buf")


class IdlError(Exception):
    """A mistake in an interface file; the message starts with "file:line:"."""


@dataclass
class Param:
    type: str
    name: str


@dataclass
class Op:
    name: str
    number: int
    ins: list[Param]
    outs: list[Param]
    errors: list[str]
    line: int

    def words(self, params: list[Param]) -> list[Param]:
        return [p for p in params if p.type == "u64"]

    def buf(self, params: list[Param]) -> Param | None:
        return next((p for p in params if p.type == "buf"), None)


@dataclass
class Interface:
    name: str
    number: int
    ops: list[Op] = field(default_factory=list)
    consts: list[tuple[str, int]] = field(default_factory=list)
    # `forwarded`: the server is reached by forwarded Linux system calls, not by ops
    # (interfaces/unix.idl): no ops, its own MK main and dispatch (servers/NAME/mk/)
    forwarded: bool = False


# ---- parsing ---------------------------------------------------------------------------------
IFACE_RE = re.compile(rf"interface\s+({IDENT})\s+(\d+)(\s+forwarded)?$")
OP_RE = re.compile(rf"op\s+({IDENT})\s+(\d+)\s*\((.*?)\)\s*->\s*\((.*?)\)"
                   rf"(?:\s+errors\s+(.+))?$")
CONST_RE = re.compile(rf"const\s+({IDENT})\s+(0x[0-9A-Fa-f]+|\d+)$")


def _params(text: str, where: str) -> list[Param]:
    params = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        m = re.fullmatch(rf"(\w+)\s+({IDENT})", item)
        if not m:
            raise IdlError(f"{where}: expected 'TYPE NAME', got {item!r}")
        if m[1] not in TYPES:
            raise IdlError(f"{where}: unknown type {m[1]!r} (known: {', '.join(TYPES)})")
        params.append(Param(m[1], m[2]))
    return params


def _check_op(op: Op, where: str) -> None:
    for side, params in (("in", op.ins), ("out", op.outs)):
        if len(op.words(params)) > MAX_WORDS:
            raise IdlError(f"{where}: more than {MAX_WORDS} u64 {side} arguments")
        if sum(p.type == "buf" for p in params) > 1:
            raise IdlError(f"{where}: more than one buf {side} argument")
    names = [p.name for p in op.ins + op.outs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise IdlError(f"{where}: argument name {dup!r} used twice")
    if "call" in names:
        raise IdlError(f"{where}: 'call' is reserved (the srv_call argument)")
    if not 1 <= op.number <= MAX_OP:
        raise IdlError(f"{where}: op number must be 1..{MAX_OP}")
    for err in op.errors:
        if not re.fullmatch(r"E_[A-Z0-9]+", err):
            raise IdlError(f"{where}: {err!r} is not an error name (E_...)")


def _parse_op(m: re.Match, lineno: int, where: str) -> Op:
    errors = [e.strip() for e in m[5].split(",")] if m[5] else []
    op = Op(m[1], int(m[2]), _params(m[3], where), _params(m[4], where), errors, lineno)
    _check_op(op, where)
    return op


def parse(text: str, filename: str = "<idl>") -> Interface:
    """The interface in `text`; raises IdlError naming the file and line of a mistake."""
    iface = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        where = f"{filename}:{lineno}"
        if not line:
            continue
        if m := IFACE_RE.match(line):
            if iface:
                raise IdlError(f"{where}: a second 'interface' line (one interface per file)")
            iface = Interface(m[1], int(m[2]), forwarded=bool(m[3]))
            if not 1 <= iface.number <= MAX_IFACE:
                raise IdlError(f"{where}: interface number must be 1..{MAX_IFACE}")
        elif m := OP_RE.match(line):
            if not iface:
                raise IdlError(f"{where}: 'op' before the 'interface' line")
            if iface.forwarded:
                raise IdlError(f"{where}: a forwarded interface has no ops")
            op = _parse_op(m, lineno, where)
            for other in iface.ops:
                if op.name == other.name or op.number == other.number:
                    raise IdlError(f"{where}: op {op.name} {op.number} clashes with "
                                   f"{other.name} {other.number} (line {other.line})")
            iface.ops.append(op)
        elif m := CONST_RE.match(line):
            if not iface:
                raise IdlError(f"{where}: 'const' before the 'interface' line")
            if any(m[1] == name for name, _ in iface.consts):
                raise IdlError(f"{where}: const {m[1]} defined twice")
            iface.consts.append((m[1], int(m[2], 0)))
        else:
            raise IdlError(f"{where}: cannot parse {line!r}")
    if not iface:
        raise IdlError(f"{filename}: no 'interface' line")
    return iface


# ---- C signatures ----------------------------------------------------------------------------
def _in_args(op: Op) -> list[str]:
    args = []
    for p in op.ins:
        args += [f"const void *{p.name}", f"size_t {p.name}_len"] if p.type == "buf" \
            else [f"uint64_t {p.name}"]
    return args


def _out_args(op: Op) -> list[str]:
    args = []
    for p in op.outs:
        args += [f"void *{p.name}", f"size_t {p.name}_cap", f"size_t *{p.name}_len"] \
            if p.type == "buf" else [f"uint64_t *{p.name}"]
    return args


def _signature(ret_name: str, first: str, op: Op) -> str:
    args = ", ".join([first, *_in_args(op), *_out_args(op)])
    return f"long {ret_name}({args})"


def _doc(op: Op) -> str:
    errs = f" (declared: {', '.join(op.errors)})" if op.errors else ""
    return f"/* op {op.number}: {op.name}; returns 0 or an error{errs} */"


def _upper(iface: Interface, op: Op | None = None) -> str:
    return f"{iface.name}_{op.name}".upper() if op else f"{iface.name}_IFACE".upper()


# ---- generated files -------------------------------------------------------------------------
HEADER = "/* Generated by tools/idlgen from {src}; do not edit. */\n"


def gen_common(iface: Interface, src: str) -> str:
    guard = f"GEN_{iface.name.upper()}_H"
    lines = [HEADER.format(src=src), f"#ifndef {guard}", f"#define {guard}",
             f"#define {_upper(iface)} {iface.number}"]
    lines += [f"#define {_upper(iface, op)} {op.number}" for op in iface.ops]
    lines += [f"#define {iface.name.upper()}_{name.upper()} {value:#x}u"
              for name, value in iface.consts]
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def _client_stub(iface: Interface, op: Op) -> str:
    out_buf, in_buf = op.buf(op.outs), op.buf(op.ins)
    cap = f"{out_buf.name}_cap" if out_buf else "0"
    body = [f"    struct ipc_msg m = {{{{SRV_LABEL({_upper(iface)}, {_upper(iface, op)}, {cap})}}}};"]
    body += [f"    m.w[{i}] = {p.name};" for i, p in enumerate(op.words(op.ins), 1)]
    flags = []
    if in_buf:
        body += [f"    c->utcb.send_buf = {in_buf.name};",
                 f"    c->utcb.send_len = {in_buf.name}_len;"]
        flags.append("IPC_SEND_BUF")
    if out_buf:
        body += [f"    c->utcb.recv_buf = {out_buf.name};",
                 f"    c->utcb.recv_cap = {out_buf.name}_cap;"]
        flags.append("IPC_RECV_BUF")
    body.append(f"    long r = srv_call(c, &m, {' | '.join(flags) or '0'});")
    body.append("    if (r < 0)\n        return r;")
    body += [f"    *{p.name} = m.w[{i}];" for i, p in enumerate(op.words(op.outs), 1)]
    if out_buf:
        body.append(f"    *{out_buf.name}_len = c->utcb.recv_len;")
    body.append("    return 0;")
    sig = _signature(f"{iface.name}_call_{op.name}", "struct srv_conn *c", op)
    return f"{_doc(op)}\nstatic inline {sig}\n{{\n" + "\n".join(body) + "\n}\n"


def gen_client(iface: Interface, src: str) -> str:
    guard = f"GEN_{iface.name.upper()}_CLIENT_H"
    head = [HEADER.format(src=src),
            f"/* Client stubs of interface {iface.name}: connect with "
            f"srv_connect(&c, {_upper(iface)}). */",
            f"#ifndef {guard}", f"#define {guard}", "#include <ondol/srv_client.h>",
            f'#include "{iface.name}.h"', ""]
    stubs = [_client_stub(iface, op) for op in iface.ops]
    return "\n".join(head) + "\n".join(stubs) + "#endif\n"


def gen_server_h(iface: Interface, src: str) -> str:
    guard = f"GEN_{iface.name.upper()}_SERVER_H"
    lines = [HEADER.format(src=src),
             f"/* What a server of interface {iface.name} implements (one function per op,",
             " * returning 0 or an error) and the dispatch that calls them. */",
             f"#ifndef {guard}", f"#define {guard}", "#include <ondol/srv.h>",
             f'#include "{iface.name}.h"', ""]
    for op in iface.ops:
        lines += [_doc(op), _signature(f"{iface.name}_{op.name}", "struct srv_call *call", op)
                  + ";"]
    if iface.forwarded:         # its own dispatch (unix_dispatch) must not clash
        return "\n".join(lines + ["", "#endif", ""])
    lines += ["", f"long {iface.name}_dispatch(struct srv_call *c);",
              f"extern const struct srv_iface {iface.name}_iface;", "#endif"]
    return "\n".join(lines) + "\n"


def _dispatch_case(iface: Interface, op: Op) -> str:
    """One case of the dispatch: arguments in declaration order, as in _signature."""
    args, word = ["c"], 0
    for p in op.ins:
        word += p.type == "u64"
        args += ["c->in", "c->in_len"] if p.type == "buf" else [f"c->w[{word}]"]
    word = 0
    for p in op.outs:
        word += p.type == "u64"
        args += ["c->out", "c->out_cap", "&c->out_len"] if p.type == "buf" else [f"&c->w[{word}]"]
    return (f"    case {_upper(iface, op)}:\n"
            f"        return {iface.name}_{op.name}({', '.join(args)});\n")


def gen_server_c(iface: Interface, src: str) -> str:
    if iface.forwarded:
        return (f"{HEADER.format(src=src)}"
                f'#include "{iface.name}_server.h"\n\n'
                "/* A forwarded interface has no ops: its calls are forwarded Linux system\n"
                " * calls (kernel/ipc/fwd.c), so an IPC call of an op is E_NOSYS. */\n"
                "static long no_ops(struct srv_call *c)\n{\n    (void)c;\n"
                "    return E_NOSYS;\n}\n\n"
                f"const struct srv_iface {iface.name}_iface = "
                f'{{{_upper(iface)}, "{iface.name}", no_ops}};\n')
    cases = "".join(_dispatch_case(iface, op) for op in iface.ops)
    return (f"{HEADER.format(src=src)}"
            f'#include "{iface.name}_server.h"\n\n'
            "/* Unpack request words (and buffer) into the op's arguments; the op writes its\n"
            " * reply words into c->w[1..] and its reply buffer into c->out. An unknown op is\n"
            " * E_NOSYS. Word 0 (label in, result out) is the runtime's (srv_handle). */\n"
            f"long {iface.name}_dispatch(struct srv_call *c)\n{{\n"
            "    switch (srv_label_op(c->w[0])) {\n"
            f"{cases}"
            "    }\n    return E_NOSYS;\n}\n\n"
            f"const struct srv_iface {iface.name}_iface = "
            f'{{{_upper(iface)}, "{iface.name}", {iface.name}_dispatch}};\n')


def gen_mk(iface: Interface, src: str) -> str:
    if iface.forwarded:
        return (f"{HEADER.format(src=src)}"
                f"/* The {iface.name} server is forwarded: its main is in servers/{iface.name}/mk/. */\n")
    return (f"{HEADER.format(src=src)}"
            f"/* The MK shim: the {iface.name} server as a user task (lib/srv/mk.c). */\n"
            f'#include "{iface.name}_server.h"\n\n'
            f"int main(void) {{ return srv_serve(&{iface.name}_iface); }}\n")


def gen_ik_table(ifaces: list[Interface]) -> str:
    decls = "".join(f"extern const struct srv_iface {i.name}_iface;\n"
                    f"int srv_placement_{i.name};   /* set by the option {i.name}=off|mk|ik */\n"
                    for i in ifaces)
    items = "".join(f"    &{i.name}_iface,\n" for i in ifaces)
    places = "".join(f"    &srv_placement_{i.name},\n" for i in ifaces)
    return (HEADER.format(src="the interfaces/ files") +
            "/* The IK shim: every interface the kernel can serve by a direct call of its\n"
            " * dispatch (kernel/srv/). The boot option NAME=off|mk|ik, declared in\n"
            " * kernel/boot/options.def, sets srv_placement_NAME (0 off, 1 mk, 2 ik). */\n"
            "#include <ondol/srv.h>\n\n" + decls +
            "const struct srv_iface *const srv_ifaces[] = {\n" + items + "};\n"
            "int *const srv_placements[] = {\n" + places + "};\n"
            f"const int srv_nifaces = {len(ifaces)};\n")


def generate(ifaces: list[tuple[Interface, str]]) -> dict[str, str]:
    """File name -> contents for the interfaces (each with the file it came from)."""
    numbers: dict[int, str] = {}
    files = {}
    for iface, src in ifaces:
        if iface.number in numbers or iface.name in numbers.values():
            raise IdlError(f"{src}: interface {iface.name} {iface.number} clashes with "
                           f"{numbers.get(iface.number, iface.name)}")
        numbers[iface.number] = iface.name
        files[f"{iface.name}.h"] = gen_common(iface, src)
        files[f"{iface.name}_client.h"] = gen_client(iface, src)
        files[f"{iface.name}_server.h"] = gen_server_h(iface, src)
        files[f"{iface.name}_server.c"] = gen_server_c(iface, src)
        files[f"{iface.name}_mk.c"] = gen_mk(iface, src)
    files["srv_ik_table.c"] = gen_ik_table([i for i, _ in ifaces])
    return files


def write_if_changed(path: Path, text: str) -> None:
    """Rewrite only changed files, so make rebuilds only what depends on them."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, type=Path, help="output folder")
    ap.add_argument("idl", nargs="+", type=Path)
    args = ap.parse_args(argv)
    try:
        ifaces = [(parse(p.read_text(), str(p)), str(p)) for p in args.idl]
        files = generate(ifaces)
    except IdlError as exc:
        print(f"idlgen: {exc}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_if_changed(args.out / name, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
