"""The boot archive's programs and their folders' READMEs (host only, no QEMU).

user/user.mk collects programs from the folders in USER_PROG_DIRS: DIR/NAME.c and DIR/NAME/
(a folder of .c files) both become the program NAME. Every program in build/bootfs.tar must
come from exactly one of those folders and be listed in that folder's README table, and a
README must not list a program that no longer exists. The MK servers (servers/NAME/, built
from one source as the program NAMEsrv and into the kernel; docs/servers.md) are the
archive's only other programs.
"""
import re
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOTFS = ROOT / "build" / "bootfs.tar"


def program_dirs() -> list[str]:
    """The folders user/user.mk collects programs from (its one USER_PROG_DIRS line)."""
    m = re.search(r"^USER_PROG_DIRS\s*:=\s*(.+)$", (ROOT / "user" / "user.mk").read_text(), re.M)
    assert m, "user/user.mk has no USER_PROG_DIRS line"
    return m.group(1).split()


def programs_in(folder: str) -> set[str]:
    """NAME for every folder/NAME.c and every folder/NAME/ that holds .c files."""
    d = ROOT / folder
    one_file = {p.stem for p in d.glob("*.c")}
    multi_file = {p.name for p in d.iterdir() if p.is_dir() and any(p.glob("*.c"))}
    return one_file | multi_file


def server_programs() -> set[str]:
    """NAMEsrv for every server folder servers/NAME/ with sources and an interface
    (interfaces/NAME.idl; servers/net/ is built hosted until it has one)."""
    return {f"{p.name}srv" for p in (ROOT / "servers").iterdir()
            if p.is_dir() and any(p.glob("*.c")) and (ROOT / "interfaces" / f"{p.name}.idl").is_file()}


def listed_in_readme(folder: str) -> set[str]:
    """Program names in the README's `| program | ...` table: the first word of each row's
    first cell, written `NAME ARGS`."""
    lines = (ROOT / folder / "README.md").read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("| program |")), None)
    assert start is not None, f"{folder}/README.md has no '| program |' table"
    names = set()
    for line in lines[start + 2:]:                  # skip the header and its | --- | row
        if not line.startswith("|"):
            break
        m = re.match(r"\| `([^` ]+)", line)
        assert m, f"{folder}/README.md: a row without a `program`: {line}"
        names.add(m.group(1))
    return names


def test_archive_holds_exactly_the_programs_of_the_folders():
    assert BOOTFS.is_file(), "build/bootfs.tar is missing: run `make` first"
    with tarfile.open(BOOTFS) as tar:
        archived = sorted(tar.getnames())
    by_folder = {folder: programs_in(folder) for folder in program_dirs()}
    everything = [name for names in by_folder.values() for name in names] + sorted(server_programs())
    assert len(everything) == len(set(everything)), f"a name in two folders: {by_folder}"
    assert archived == sorted(everything)


@pytest.mark.parametrize("folder", program_dirs())
def test_readme_lists_every_program_of_its_folder(folder):
    programs, listed = programs_in(folder), listed_in_readme(folder)
    assert not programs - listed, f"not in {folder}/README.md: {sorted(programs - listed)}"
    assert not listed - programs, f"{folder}/README.md lists missing programs: {sorted(listed - programs)}"
