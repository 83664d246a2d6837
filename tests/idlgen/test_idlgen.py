"""tools/idlgen: the interface language (parsing, errors with their line), the generated C,
and a hosted round trip of the generated client stubs against the generated dispatch and
the real echo server (docs/servers.md)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "idlgen"))
import idlgen  # noqa: E402

HERE = Path(__file__).resolve().parent
ECHO = REPO / "interfaces" / "echo.idl"

GOOD = """\
# a comment line
interface demo 7   # trailing comment

op get 1 () -> (u64 value)
op put 2 (u64 key, buf data) -> () errors E_2BIG, E_INVAL
op copy 3 (buf src, u64 flags) -> (u64 n, buf dst)
"""


def test_parses_interface_ops_params_and_errors():
    iface = idlgen.parse(GOOD, "demo.idl")
    assert (iface.name, iface.number) == ("demo", 7)
    assert [(op.name, op.number, op.line) for op in iface.ops] == [
        ("get", 1, 4), ("put", 2, 5), ("copy", 3, 6)]
    put = iface.ops[1]
    assert [(p.type, p.name) for p in put.ins] == [("u64", "key"), ("buf", "data")]
    assert put.outs == [] and put.errors == ["E_2BIG", "E_INVAL"]


@pytest.mark.parametrize("line, message", [
    ("op a 1 (u32 x) -> ()", "unknown type 'u32'"),
    ("op a 1 (u64) -> ()", "expected 'TYPE NAME'"),
    ("op a 1 (buf x, buf y) -> ()", "more than one buf in argument"),
    ("op a 1 () -> (buf x, buf y)", "more than one buf out argument"),
    ("op a 1 (" + ", ".join(f"u64 a{i}" for i in range(8)) + ") -> ()", "more than 7 u64 in"),
    ("op a 1 (u64 x) -> (u64 x)", "argument name 'x' used twice"),
    ("op a 1 (u64 call) -> ()", "'call' is reserved"),
    ("op a 0 () -> ()", "op number must be"),
    ("op a 1 () -> () errors EINVAL", "'EINVAL' is not an error name"),
    ("op get 9 () -> ()", "op get 9 clashes with get 1 (line 2)"),
    ("op other 1 () -> ()", "clashes with get 1"),
    ("interface again 8", "a second 'interface' line"),
    ("operation a 1 () -> ()", "cannot parse"),
    ("const X 1x", "cannot parse"),
])
def test_errors_name_the_file_and_line(line, message):
    text = f"interface demo 7\nop get 1 () -> (u64 v)\n\n{line}\n"
    with pytest.raises(idlgen.IdlError) as exc:
        idlgen.parse(text, "bad.idl")
    assert str(exc.value).startswith("bad.idl:4: "), exc.value
    assert message in str(exc.value)


def test_interface_line_rules():
    with pytest.raises(idlgen.IdlError, match=r"^x.idl:1: 'op' before the 'interface'"):
        idlgen.parse("op a 1 () -> ()\n", "x.idl")
    with pytest.raises(idlgen.IdlError, match=r"^x.idl: no 'interface' line"):
        idlgen.parse("# nothing\n", "x.idl")
    with pytest.raises(idlgen.IdlError, match=r"^x.idl:1: interface number must be 1..4095"):
        idlgen.parse("interface big 4096\n", "x.idl")


def test_constants_are_defined_once_in_the_common_header():
    iface = idlgen.parse("interface demo 7\nconst up 1\nconst BRD 0x10\n", "c.idl")
    assert iface.consts == [("up", 1), ("BRD", 16)]
    common = idlgen.generate([(iface, "c.idl")])["demo.h"]
    assert "#define DEMO_UP 0x1u" in common and "#define DEMO_BRD 0x10u" in common
    with pytest.raises(idlgen.IdlError, match=r"^c.idl:3: const up defined twice"):
        idlgen.parse("interface demo 7\nconst up 1\nconst up 2\n", "c.idl")
    with pytest.raises(idlgen.IdlError, match=r"^c.idl:1: 'const' before the 'interface'"):
        idlgen.parse("const up 1\n", "c.idl")


def test_interfaces_may_not_share_a_number():
    a = idlgen.parse("interface a 3\n", "a.idl")
    b = idlgen.parse("interface b 3\n", "b.idl")
    with pytest.raises(idlgen.IdlError, match="b.idl: interface b 3 clashes with a"):
        idlgen.generate([(a, "a.idl"), (b, "b.idl")])


def test_generated_files_and_their_contents():
    files = idlgen.generate([(idlgen.parse(GOOD, "demo.idl"), "interfaces/demo.idl")])
    assert set(files) == {"demo.h", "demo_client.h", "demo_server.h", "demo_server.c",
                          "demo_mk.c", "srv_ik_table.c"}
    assert "#define DEMO_IFACE 7" in files["demo.h"] and "#define DEMO_COPY 3" in files["demo.h"]
    # arguments in declaration order on both ends
    assert ("long demo_copy(struct srv_call *call, const void *src, size_t src_len, "
            "uint64_t flags, uint64_t *n, void *dst, size_t dst_cap, size_t *dst_len);"
            in files["demo_server.h"])
    assert ("return demo_copy(c, c->in, c->in_len, c->w[1], &c->w[1], c->out, c->out_cap, "
            "&c->out_len);" in files["demo_server.c"])
    assert "SRV_LABEL(DEMO_IFACE, DEMO_COPY, dst_cap)" in files["demo_client.h"]
    assert "srv_call(c, &m, IPC_SEND_BUF | IPC_RECV_BUF)" in files["demo_client.h"]
    assert "srv_call(c, &m, 0)" in files["demo_client.h"]          # get: registers only
    assert "srv_serve(&demo_iface)" in files["demo_mk.c"]
    assert "&demo_iface," in files["srv_ik_table.c"] and "srv_nifaces = 1" in files["srv_ik_table.c"]


def test_cli_writes_files_and_reports_errors(tmp_path, capsys):
    assert idlgen.main(["-o", str(tmp_path / "gen"), str(ECHO)]) == 0
    assert (tmp_path / "gen" / "echo_client.h").exists()
    bad = tmp_path / "bad.idl"
    bad.write_text("interface bad 2\nop x 1 (float f) -> ()\n")
    assert idlgen.main(["-o", str(tmp_path / "gen2"), str(bad)]) == 1
    assert f"idlgen: {bad}:2: unknown type 'float'" in capsys.readouterr().err
    assert not (tmp_path / "gen2").exists()


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_generated_echo_round_trips_when_built_hosted(tmp_path):
    gen = tmp_path / "gen"
    assert idlgen.main(["-o", str(gen), str(ECHO)]) == 0
    exe = tmp_path / "echo_roundtrip"
    cmd = ["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{HERE / 'loopback'}",
           f"-I{REPO / 'lib' / 'include'}", f"-I{gen}", "-o", str(exe),
           str(HERE / "loopback" / "echo_roundtrip.c"), str(gen / "echo_server.c"),
           str(REPO / "servers" / "echo" / "echo.c")]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.stdout.strip() == "ok" and run.returncode == 0, run.stdout


FREESTANDING = {"stddef.h", "stdint.h", "stdbool.h", "stdarg.h", "limits.h", "stdalign.h",
                "stdnoreturn.h", "float.h", "iso646.h"}


def test_server_sources_include_only_the_runtime_and_generated_headers():
    """A server is compiled into the kernel as well as into a task: it may include
    <ondol/srv.h>, its generated headers, freestanding C headers, its own headers
    ("name.h" beside it, as servers/net/ has) and the drivers' headers (drivers/, built
    for both placements too: docs/drivers.md), nothing else."""
    generated = {f"{p.stem}{suffix}" for p in (REPO / "interfaces").glob("*.idl")
                 for suffix in (".h", "_server.h")}
    generated |= {p.name for p in (REPO / "drivers").glob("**/*.h")}
    sources = sorted((REPO / "servers").glob("*/*.[ch]"))
    assert sources
    for src in sources:
        for line in src.read_text().splitlines():
            if line.startswith("#include"):
                name = line.split()[1].strip('<>"')
                own = line.split()[1].startswith('"') and "/" not in name and (src.parent / name).is_file()
                assert name == "ondol/srv.h" or name in generated or name in FREESTANDING or own, \
                    f"{src.relative_to(REPO)}: {line}"
