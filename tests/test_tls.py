"""Thread-local storage in native programs: libc's tls.c over SYS_THREAD_TLS
(docs/syscalls.md, lib/libc/include/ondol/thread.h); the guest side is
tests/guest/tlstest.c. Threads with an FS base take the general IPC path, which switches
the base (docs/ipc.md): the ipc case fails if any route leaves a thread with another's."""
import pytest

from ondol.abi import E_FAULT
from qemu_harness import boot


@pytest.fixture(scope="module")
def guest():
    with boot(lifetime=300) as s:
        yield s
        s.halt()


def fields(out):
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def test_every_thread_has_its_own_copy_of_the_template(guest):
    f = fields(guest.cmd("tlstest threads", timeout=60))
    assert f == {"main_fresh": "1", "threads_ok": "4", "main_own": "1", "exit_calls": "4"}, f


def test_ipc_keeps_each_threads_fs_base(guest):
    f = fields(guest.cmd("tlstest ipc", timeout=120))
    assert f == {"tls_to_tls": "1", "server_own": "1", "tls_to_raw": "1"}, f


def test_a_clone_gets_a_copy_of_the_callers_block(guest):
    f = fields(guest.cmd("tlstest clone", timeout=60))
    assert f == {"clone_status": "11", "parent_own": "1"}, f


def test_bad_bases_are_refused(guest):
    f = fields(guest.cmd("tlstest errors"))
    assert int(f["kernel"]) == E_FAULT and int(f["noncanonical"]) == E_FAULT
    assert f["still"] == "1"
