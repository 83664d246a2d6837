"""The cache plugin's wall-time overhead record (issue: printed, never bounded)."""
from ondol.bench import plugin_overhead


def test_overhead_compares_first_runs_with_their_reference_boots():
    boots = [
        {"run": 0, "wall_s": 6.0, "reference_wall_s": 2.0},
        {"run": 1, "wall_s": 9.0},                      # repeats are not compared
        {"run": 0, "wall_s": 3.0, "reference_wall_s": 1.0},
    ]
    assert plugin_overhead(boots) == {"wall_s_with_plugin": 9.0, "wall_s_without": 3.0,
                                      "ratio": 3.0}


def test_overhead_without_reference_has_no_ratio():
    assert plugin_overhead([{"run": 0, "wall_s": 1.0}])["ratio"] is None
