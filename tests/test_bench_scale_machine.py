"""bench/bench_scale.py's record of the machine during a run (par18): what the rest of the machine
used, steal, and each parallel worker's own CPU seconds, so a run disturbed from outside can be told
from one the engine made slow."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import bench_scale
from bench_scale import _machine, run_one
from eoscheck.checker.explore import parallel as P


def test_a_parallel_run_records_each_worker_and_the_rest_of_the_machine() -> None:
    serve = P._Worker.serve
    # large enough that the head hands over to the workers (rms=6: 50,816 states)
    rec = run_one({"model": "examples.twophase-sym", "bounds": {"rms": 6}, "engine": "parallel",
                   "symmetry": False, "workers": 2})
    assert rec["distinct"] == 50_816
    workers = rec["workers_cpu"]
    assert len(workers) == 2 and all(w["cpu"] > 0 for w in workers)
    # the workers' own CPU seconds are part of what the process saw of its children (all of it in
    # bench_scale's fresh child process; here earlier tests' children count too)
    assert sum(w["cpu"] for w in workers) <= rec["cpu_children"] + 0.05
    assert rec["machine_others_cpu"] >= 0 and rec["machine_steal"] >= 0
    assert P._Worker.serve is serve and not bench_scale._RECORDING  # the engine is left as it was
    assert "others" in _machine(rec) and "workers' CPU" in _machine(rec)


def test_a_bfs_run_has_no_workers_and_older_records_show_nothing() -> None:
    rec = run_one({"model": "examples.twophase-sym", "bounds": {"rms": 3}, "engine": "bfs", "symmetry": False})
    assert rec["workers_cpu"] is None
    assert _machine(rec).startswith("; others ") and "workers" not in _machine(rec)
    assert _machine({"load_before": 1.0}) == ""
