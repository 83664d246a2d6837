"""Fixtures for the Linux peer tests (tools/peer/, tools/ondol/peer.py)."""
import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# peer.py imports tools/qemucmd.py, the QEMU command line it shares with ondol.
sys.path.insert(0, str(REPO / "tools"))


def _load_peer():
    # Load tools/ondol/peer.py by path: it must work whether or not
    # tools/ondol is importable as a package.
    name = "ondol_peer_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / "ondol" / "peer.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def peer():
    """The tools/ondol/peer.py module."""
    return _load_peer()


@pytest.fixture(scope="session")
def peer_build(peer):
    """Kernel + initramfs + host-runnable programs (downloads once, then cached)."""
    return peer.build_peer()
