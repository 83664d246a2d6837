"""Build fixtures for the cachesim tests: the plugin, the host model test program and the
tiny multiboot guest. Everything is built into a per-session temporary directory so the
tests never race the top-level build."""
import os

import pytest

from .cachesim_env import CFLAGS, HERE, PLUGIN_DIR, QEMU, REPO, model_sources, run


@pytest.fixture(scope="session")
def env_ok():
    if not os.path.exists(QEMU):
        pytest.skip("qemu-system-x86_64 not installed")


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cachesim-build")


@pytest.fixture(scope="session")
def plugin_so(build_dir):
    """Builds the plugin through tools/cacheplugin/plugin.mk, as the top-level make does."""
    run(["make", "-s", "-f", "tools/cacheplugin/plugin.mk", f"BUILD={build_dir}", "cacheplugin"],
        cwd=REPO)
    so = build_dir / "tools" / "cachesim.so"
    assert so.is_file()
    return so


@pytest.fixture(scope="session")
def model_test(build_dir):
    exe = build_dir / "model_test"
    run(["gcc", *CFLAGS, f"-I{PLUGIN_DIR}", "-o", str(exe), str(HERE / "model_test.c"),
         *map(str, model_sources()), "-lpthread"])
    return exe


@pytest.fixture(scope="session")
def guest_bin(build_dir):
    """The multiboot test guest of guest/guest.S as a flat image."""
    obj, elf, img = (build_dir / n for n in ("guest.o", "guest.elf", "guest.bin"))
    run(["gcc", "-c", "-o", str(obj), str(HERE / "guest" / "guest.S")])
    run(["ld", "-m", "elf_x86_64", "-nostdlib", "-T", str(HERE / "guest" / "guest.ld"),
         "-o", str(elf), str(obj)])
    run(["objcopy", "-O", "binary", str(elf), str(img)])
    return img
