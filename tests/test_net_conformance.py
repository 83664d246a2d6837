"""Scripted TCP conformance of ondol's stack against segments crafted with scapy (issue 12's
conformance item; docs/net.md, "Testing"): handshake and its options, out-of-order and
duplicate segments, zero window and the window probe, RST in SYN-RECEIVED and in
ESTABLISHED (challenge ACK, exact RST), segments with bad checksums, offsets or options,
simultaneous open and close, a SYN flood bounded by the backlog. The stack runs as
nethost on a tap in a namespace of its own (tests/test_net_host.py's Peer); the script,
tests/net/conformance.py, plays a host that does not exist, so the Linux stack never
answers in its place. Needs root; skips saying why otherwise."""
import json
import sys
from pathlib import Path

import pytest

from tests.test_net_host import ONDOL_IP, REASON, peer_fixture

SCRIPT = Path(__file__).resolve().parent / "net" / "conformance.py"
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

stack = peer_fixture("k", [])

CASES = ["handshake", "out_of_order", "duplicate", "zero_window", "rst_syn_received",
         "rst_established", "bad_segments", "simultaneous_open", "simultaneous_close",
         "syn_flood"]


@pytest.mark.parametrize("case", CASES)
def test_conformance(stack, case):
    r = stack.ns_run(sys.executable, str(SCRIPT), "ondol0", ONDOL_IP, case, timeout=60)
    checks = json.loads(r.stdout)
    assert checks and all(checks.values()), checks
