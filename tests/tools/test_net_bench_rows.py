"""`./ondol bench net`'s Linux-ABI part (tools/ondol/netbench.py): the Linux guest's /init
and how ondol's rows of tools/netcalls/netcalls.c are paired with the guest's, without
booting anything (tests/test_net_bench.py runs the real thing as root)."""
from ondol import netbench


def call_row(phase, size, median, **more):
    return {"type": "result", "bench": "net", "test": "call", "phase": phase, "layer": "call",
            "size": size, "unit": "tsc", "median": median, "min": median, "max": median,
            "n": 5, **more}


def test_the_linux_init_loads_the_driver_and_takes_ondols_address():
    script = netbench.linux_init().decode()
    assert "for m in $(ls /lib/netmods | sort -n); do insmod /lib/netmods/$m; done" in script
    assert "ifconfig eth0 10.79.0.2 netmask 255.255.255.0 up" in script
    assert f"{netbench.PROGRAM} >/dev/ttyS1\npoweroff -f\n" in script
    assert [m.rsplit("/", 1)[1] for m in netbench.LINUX_MODULES][:2] == ["virtio_ring.ko",
                                                                         "virtio.ko"]


def test_the_first_program_boot_adds_linux_and_every_ondol_row_its_ratio(monkeypatch):
    booted = []
    linux = [call_row("write", 100, 4000, placement="linux", program="netcalls",
                      kernel="linux"),
             call_row("recv", 100, 1000, placement="linux", program="netcalls", kernel="linux")]
    monkeypatch.setattr(netbench, "linux_rows", lambda mode: booted.append(mode) or list(linux))
    mk, ik, mixed = netbench.program_configs()
    assert (mixed.params["placement"], mixed.options["unix"]) == ("ik-mk", "ik")
    guest = [call_row("write", 100, 1000), call_row("recv", 100, 3000)]
    rows = netbench.net_rows(guest, mk)
    assert booted == ["icount"]
    ours = {r["phase"]: r for r in rows if r["placement"] == "mk"}
    assert (ours["write"]["linux"], ours["write"]["ratio"]) == (4000, 0.25)
    assert (ours["recv"]["linux"], ours["recv"]["ratio"]) == (1000, 3.0)
    assert all(r["ratio"] is None for r in rows if r["placement"] == "linux")
    rows = netbench.net_rows(guest, ik)                 # the guest boots once per run
    assert booted == ["icount"] and [r["placement"] for r in rows] == ["ik", "ik"]
    assert [r["ratio"] for r in rows] == [0.25, 3.0]
    rows = netbench.net_rows(guest, mixed)              # unix=ik net=mk, paired the same
    assert [(r["placement"], r["ratio"]) for r in rows] == [("ik-mk", 0.25), ("ik-mk", 3.0)]


def test_p3_rows_are_left_alone(monkeypatch):
    monkeypatch.setattr(netbench, "linux_rows", lambda mode: [])
    from ondol.benchmarks import Config
    row = {"type": "result", "bench": "net", "test": "send", "phase": "send",
           "layer": "tcp_output", "size": 1440, "median": 2000}
    out = netbench.net_rows([row], Config(command="netbench", params={"placement": "mk"}))
    assert out[0]["module"] == "TCP output incl. checksum" and "ratio" not in out[0]
