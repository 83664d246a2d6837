"""Fixtures for the differential suite's tests: the suite run on the Linux peer (one boot,
cached under build/linuxsuite/cache/ by content hash)."""
from pathlib import Path

import pytest

from ondol import linuxsuite

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def peer_passes():
    """[pass 1, pass 2] outcomes of the suite on the Linux peer: {name: Outcome}."""
    try:
        return linuxsuite.suite_on_peer(REPO / "build")
    except linuxsuite.SuiteError as e:
        pytest.fail(f"differential suite on the peer: {e}")
