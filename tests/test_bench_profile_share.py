"""bench/bench_profile_share.py's buckets: which code counts as the model's and which as engine or
composition (issue 12's "engine plus composition at most 25% of a profile")."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from bench_profile_share import bucket


def test_generated_code_goes_to_whoever_generated_it() -> None:
    assert bucket("<compose EosMachine>") == "composition"
    assert bucket("<compose fused invariants>") == "composition"
    assert bucket("<kafka.eos within_bounds>") == "model"
    assert bucket("<kafka.eos permutation (1, 0)>") == "model"


def test_files_by_folder() -> None:
    assert bucket("/x/eoscheck/checker/compose/machine.py") == "composition"
    assert bucket("/x/eoscheck/checker/explore/expand.py") == "engine"
    assert bucket("/x/eoscheck/model/machines/eos.py") == "model"
    assert bucket("/usr/lib/python3.11/collections/__init__.py") is None
