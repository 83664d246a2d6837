"""Host tests of the pure model: builds tests/cachemodel/model_test.c with the model
sources of tools/cacheplugin (everything except the QEMU glue) and runs each case."""
import json
import re
import subprocess

import pytest

from .cachesim_env import HERE


def case_names():
    src = (HERE / "model_test.c").read_text()
    table = src[src.index("static const struct tcase cases[]"):]
    return re.findall(r'\{"(\w+)", t_\w+\}', table)


def test_case_table_matches_binary(model_test):
    listed = subprocess.run([model_test, "--list"], capture_output=True, text=True,
                            check=True).stdout.split()
    assert listed == case_names()
    assert len(listed) >= 25


@pytest.mark.parametrize("name", case_names())
def test_model(model_test, name):
    p = subprocess.run([model_test, name], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().splitlines()[-1] == f"ok {name}"


def test_unknown_case_fails(model_test):
    p = subprocess.run([model_test, "no_such_case"], capture_output=True, text=True)
    assert p.returncode != 0


def test_json_report(model_test):
    """The window line is valid JSON with the documented keys and consistent sums."""
    out = subprocess.run([model_test, "--json"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert len(out) == 2                      # window 42, then the unfinished window 43
    w = json.loads(out[0])
    assert w["type"] == "cachesim" and w["window"] == 42 and w["complete"] is True
    assert w["geometry"]["preset"] == "pentiumpro"
    assert w["geometry"]["l1d"] == {"size": 8192, "line": 32, "assoc": 4, "repl": "lru",
                                    "write": "back"}
    assert w["geometry"]["stlb"] is None and w["geometry"]["l3"] is None
    assert set(w["domains"]) == {"kernel", "server", "user", "unknown"}
    assert w["domains"]["kernel"]["instructions"] == 20
    assert w["domains"]["server"]["instructions"] == 7
    assert w["domains"]["user"]["instructions"] == 3
    assert w["total"]["instructions"] == 30
    names = {(t["name"], t["kind"]): t for t in w["tasks"]}
    assert names[('fs"q', "server")]["stores"] == 1
    assert names[("init", "user")]["instructions"] == 3
    assert [v["vcpu"] for v in w["vcpus"]] == [0, 1]
    assert w["vcpus"][1]["domains"]["user"]["instructions"] == 3
    # which address spaces each vCPU ran, with their instructions there
    assert w["vcpus"][0]["asids"] == [{"asid": 3, "name": 'fs"q', "kind": "server",
                                       "instructions": 7}]
    assert w["vcpus"][1]["asids"] == [{"asid": 4, "name": "init", "kind": "user",
                                       "instructions": 3}]
    for key in ("instructions", "l1i_misses", "l1d_misses", "l2_misses", "itlb_misses",
                "dtlb_misses", "page_walk_refs_est", "modelled_cycles"):
        assert w["total"][key] == sum(d[key] for d in w["domains"].values()), key
        assert w["total"][key] == sum(v["total"][key] for v in w["vcpus"]), key
    k = w["domains"]["kernel"]
    assert k["l1i_mpi"] == pytest.approx(k["l1i_misses"] / k["instructions"])
    pen = w["penalties"]
    expected = (k["instructions"] * pen["cpi"]
                + (k["l1i_misses"] + k["l1d_misses"]) * pen["lat_l2"]
                + k["l2_misses"] * (pen["lat_mem"] - pen["lat_l2"])
                + k["page_walks"] * pen["lat_walk"])
    assert k["modelled_cycles"] == round(expected)
    assert "modelled" in w["cycles_are"] and "estimated" in w["page_walk_refs_are"]
    last = json.loads(out[1])
    assert last["window"] == 43 and last["complete"] is False
    assert last["total"]["instructions"] == 1
