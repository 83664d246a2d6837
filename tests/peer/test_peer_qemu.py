"""tools/ondol/peer.py: QEMU command, error handling, and real boots of the peer.

The boots take ~15 s each in icount mode and ~7 s without (TCG, this machine);
the whole file stays well under a minute of wall time per boot.
"""
import stat
from pathlib import Path

import pytest


def test_qemu_argv_matches_ondol_harness(peer, peer_build, tmp_path):
    import qemucmd
    c, r = tmp_path / "c.log", tmp_path / "r.jsonl"
    argv = peer.qemu_argv(peer_build, "console=ttyS0 peer=pipe", False, c, r)
    joined = " ".join(argv)
    assert argv[0].endswith("qemu-system-x86_64")
    for flags in ("-machine pc", "-cpu max", "-m 256M", "-smp 1", "-display none",
                  "-no-reboot"):
        assert flags in joined
    # Like for like: the peer's machine is exactly the one ondol boots on.
    ondol = qemucmd.ondol("k", "i")
    assert argv[:argv.index("-kernel")] == [peer.QEMU] + ondol[1:ondol.index("-kernel")]
    assert argv[argv.index("-kernel") + 1] == str(peer_build.vmlinuz)
    assert argv[argv.index("-initrd") + 1] == str(peer_build.initramfs)
    assert argv[argv.index("-append") + 1] == "console=ttyS0 peer=pipe no_timer_check"
    serials = [argv[i + 1] for i, a in enumerate(argv) if a == "-serial"]
    assert serials == [f"file:{c}", f"file:{r}"]  # COM1 console, COM2 results
    assert "-icount" not in argv and "-seed" not in argv
    icount = peer.qemu_argv(peer_build, "console=ttyS0 peer=pipe", True, c, r)
    assert icount == argv + list(qemucmd.ICOUNT_FLAGS)
    assert ("-icount shift=0,sleep=off -seed 1 -rtc base=2024-01-01T00:00:00,clock=vm"
            in " ".join(icount))


@pytest.mark.parametrize("bad", ["nope", ["pipe", "nope"], []])
def test_unknown_test_rejected_before_boot(peer, peer_build, bad):
    with pytest.raises(peer.PeerError, match="peer test"):
        peer.run_peer(bad, 10, build=peer_build)


@pytest.mark.parametrize("n", [0, -5, 2.5])
def test_bad_n_rejected(peer, peer_build, n):
    with pytest.raises(peer.PeerError, match="n must be"):
        peer.run_peer("pipe", n, build=peer_build)


def fake_qemu(tmp_path, monkeypatch, peer, lines, status=0):
    """Stand in for QEMU: write `lines` to the COM2 file, exit with `status`."""
    script = tmp_path / "fake-qemu"
    body = "\n".join(lines)
    script.write_text(
        "#!/bin/sh\n"
        "out=\n"
        'for a in "$@"; do\n'
        '  case "$a" in file:*results.jsonl) out=${a#file:} ;; esac\n'
        "done\n"
        f"cat > \"$out\" <<'EOF'\n{body}\nEOF\n"
        'echo "fake qemu: bye" >&2\n'
        f"exit {status}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(peer, "QEMU", str(script))


HELLO = '{"type":"hello","kernel":"linux","version":"6.1.0-x"}'
PIPE_OK = ('{"type":"result","bench":"ipc","test":"linux_pipe_roundtrip",'
           '"unit":"instructions (icount)","median":5,"min":4,"max":9,"n":3}')
END_OK = '{"type":"end","bench":"peer","status":0}'


def test_parse_ok_with_fake_qemu(peer, peer_build, tmp_path, monkeypatch):
    fake_qemu(tmp_path, monkeypatch, peer, [HELLO, PIPE_OK, END_OK])
    recs = peer.run_peer("linux_pipe_roundtrip", 3, build=peer_build, workdir=tmp_path / "w")
    assert [r["type"] for r in recs] == ["hello", "result", "end"]
    assert peer.results(recs)[0]["median"] == 5


@pytest.mark.parametrize("lines,status,match", [
    ([HELLO, PIPE_OK, END_OK], 3, "QEMU failed: fake qemu: bye"),
    ([], 0, "no result"),
    ([HELLO, "{not json", END_OK], 0, "bad JSON on result line 2"),
    ([HELLO, END_OK], 0, "no result for pipe"),
    ([HELLO, PIPE_OK], 0, "ended early"),
    ([HELLO, '{"type":"error","test":"pipe","status":139,"message":"peer program failed"}',
      '{"type":"end","bench":"peer","status":139}'], 0, "peer test pipe failed: peer program"),
])
def test_failures_raise_one_line_peer_error(peer, peer_build, tmp_path, monkeypatch,
                                            lines, status, match):
    fake_qemu(tmp_path, monkeypatch, peer, lines, status)
    with pytest.raises(peer.PeerError, match=match) as e:
        peer.run_peer("pipe", 3, build=peer_build, workdir=tmp_path / "w")
    assert "\n" not in str(e.value)


def test_missing_qemu(peer, peer_build, monkeypatch):
    monkeypatch.setattr(peer, "QEMU", "/nonexistent/qemu-system-x86_64")
    with pytest.raises(peer.PeerError, match="not found"):
        peer.run_peer("pipe", 3, build=peer_build)


def test_timeout(peer, peer_build, tmp_path):
    # A real boot cannot finish in one second under TCG.
    with pytest.raises(peer.PeerError, match="timed out after 1 s") as e:
        peer.run_peer("pipe", 10, timeout=1, build=peer_build, workdir=tmp_path)
    assert str(tmp_path) in str(e.value)


# ---- real boots of the stock kernel ------------------------------------------

N = 200


@pytest.fixture(scope="module")
def icount_run(peer, peer_build, tmp_path_factory):
    return peer.boot_peer(["pipe", "futex", "syscall"], N, icount=True, timeout=120,
                          build=peer_build, workdir=tmp_path_factory.mktemp("icount"))


def test_boot_icount_returns_results(icount_run, peer_build):
    recs = icount_run.records
    hello = recs[0]
    assert hello["type"] == "hello" and hello["kernel"] == "linux"
    assert hello["version"] == peer_build.kernel_version
    assert hello["options"]["unit"] == "icount"
    assert recs[-1] == {"type": "end", "bench": "peer", "status": 0}
    res = {r["test"]: r for r in recs if r["type"] == "result"}
    assert set(res) == {"linux_pipe_roundtrip", "linux_futex_handoff", "linux_null_syscall"}
    for r in res.values():
        assert r["unit"] == "instructions (icount)"
        assert r["n"] == N and r["release"] == peer_build.kernel_version
        assert 0 < r["min"] <= r["median"] <= r["max"]
        # At shift=0 two back-to-back counter reads are a handful of
        # instructions apart (lfence; rdtsc; lfence, plus the shift/or).
        assert 1 <= r["timer_overhead"] <= 20
    assert (res["linux_pipe_roundtrip"]["median"] > res["linux_futex_handoff"]["median"]
            > 10 * res["linux_null_syscall"]["median"])
    assert "peer: done, status 0" in icount_run.console
    assert Path(icount_run.workdir, "results.jsonl").is_file()


def test_boot_icount_is_deterministic(icount_run, peer, peer_build, tmp_path):
    again = peer.boot_peer(["pipe", "futex", "syscall"], N, icount=True, timeout=120,
                           build=peer_build, workdir=tmp_path)
    assert again.records == icount_run.records
    assert again.workdir == tmp_path


def test_boot_tsc_mode(peer, peer_build):
    recs = peer.run_peer("syscall", 50, icount=False, timeout=120, build=peer_build)
    (r,) = peer.results(recs)
    assert r["unit"] == "TSC ticks" and r["n"] == 50 and r["mode"] == "tsc"
    assert 0 < r["min"] <= r["median"] <= r["max"]
