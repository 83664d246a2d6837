"""The kernel futex (SYS_FUTEX_WAIT / SYS_FUTEX_WAKE, docs/syscalls.md), which ondol's
allocator's blocking mutex sleeps on (docs/alloc.md); the guest side is
tests/guest/futextest.c."""
import re

import pytest

from ondol.abi import E_FAULT, E_INVAL, E_TIMEOUT
from qemu_harness import boot

FUTEX_CHANGED = 1
KILLED_STATUS = 0x200


@pytest.fixture(scope="module")
def guest():
    with boot(lifetime=300) as s:
        yield s
        s.halt()


def fields(text):
    return dict(re.findall(r"(\w+)=(\S+)", text))


def test_documented_results_without_a_waker(guest):
    f = fields(guest.cmd("futextest errors"))
    assert int(f["changed"]) == FUTEX_CHANGED
    assert int(f["timeout0"]) == E_TIMEOUT
    assert int(f["timeout2"]) == E_TIMEOUT and f["waited"] == "1"
    assert int(f["misaligned"]) == E_INVAL and int(f["wake_misaligned"]) == E_INVAL
    assert int(f["kernel"]) == E_FAULT and int(f["unmapped"]) == E_FAULT
    assert int(f["wake_kernel"]) == E_FAULT
    assert int(f["wake_negative"]) == E_INVAL
    assert int(f["wake_nobody"]) == 0


def test_wake_wakes_as_many_as_asked_and_only_that_word(guest):
    f = fields(guest.cmd("futextest wake", timeout=60))
    assert f["wake1"] == "1" and f["wake10"] == "2" and f["wake_again"] == "0", f
    assert f["other_waiting"] == "1" and f["wake_other"] == "1", f
    assert f["results"] == "0,0,0,0", f


def test_a_killed_waiter_ends(guest):
    f = fields(guest.cmd("futextest kill", timeout=60))
    assert f["kill"] == "0" and int(f["status"], 16) == KILLED_STATUS, f
