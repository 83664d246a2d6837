"""Shared pytest configuration: make tests/ importable as a package root, and tools/ so
tests can use the host tools' modules (e.g. `from ondol import abi` for ABI constants)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
