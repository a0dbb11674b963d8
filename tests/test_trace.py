"""Trace rebuilding from fingerprints and trace shortening."""

from __future__ import annotations

import pytest
from eoscheck.checker.fingerprint import fingerprint
from eoscheck.checker.result import TraceStep
from eoscheck.checker.trace import (
    SHORTCUTS,
    SHORTEST,
    TraceRebuildError,
    bad_end,
    rebuild_trace,
    shorten_trace,
    shorten_trace_explained,
    trace_is_valid,
)
from eoscheck.examples.diehard import DieHard
from eoscheck.examples.toys import Counter, Grid


def walk(machine, actions):
    """A trace taking the named actions in order from the first initial state."""
    state = next(iter(machine.init_states()))
    trace = [TraceStep(None, state)]
    for name in actions:
        step, state = next((st, n) for st, n in machine.successors(state) if st[0] == name)
        trace.append(TraceStep(step, state))
    return trace


def test_rebuild_recovers_states_and_steps_from_fingerprints():
    machine = DieHard()
    original = walk(machine, ["FillBig", "BigToSmall", "EmptySmall", "BigToSmall"])
    fps = [fingerprint(t.state) for t in original]
    assert rebuild_trace(machine, fps, symmetry=False) == original


def test_rebuild_with_symmetry_follows_concrete_successors():
    machine = Grid(4, symmetric=True)
    # canonical fingerprints of (0,0) -> (1,0) -> (1,1) -> (2,1)
    fps = [fingerprint(machine.canonical(s)) for s in [(0, 0), (0, 1), (1, 1), (1, 2)]]
    trace = rebuild_trace(machine, fps, symmetry=True)
    assert [t.state for t in trace] == [(0, 0), (1, 0), (1, 1), (2, 1)]
    assert trace_is_valid(machine, trace)


def test_rebuild_reports_a_chain_that_does_not_re_execute():
    machine = DieHard()
    with pytest.raises(TraceRebuildError, match="state 2"):
        rebuild_trace(machine, [fingerprint((0, 0)), fingerprint((1, 1))], symmetry=False)
    with pytest.raises(TraceRebuildError, match="initial"):
        rebuild_trace(machine, [fingerprint((3, 3))], symmetry=False)


def test_shorten_by_bfs_reaches_the_minimum():
    machine = Grid(5)
    long = walk(machine, ["IncX", "IncX", "ResetX", "IncY", "IncX", "IncY", "IncY", "IncX", "IncY",
                          "IncX", "IncX"])
    assert long[-1].state == (4, 4) and len(long) == 12
    short, how = shorten_trace_explained(machine, long, bad_end(machine, "invariant", "NotCorner"))
    assert how == SHORTEST
    assert len(short) == 9 and short[-1].state == (4, 4)
    assert trace_is_valid(machine, short)


def test_shorten_falls_back_to_shortcuts_when_the_budget_is_tiny():
    machine = Grid(5)
    long = walk(machine, ["IncX", "IncX", "ResetX", "IncY", "IncX", "IncY", "IncY", "IncX", "IncY",
                          "IncX", "IncX"])
    short, how = shorten_trace_explained(machine, long, bad_end(machine, "invariant", "NotCorner"), budget=3)
    assert how == SHORTCUTS
    assert trace_is_valid(machine, short)
    assert short[-1].state == (4, 4)
    # the loop (0,0) -> (1,0) -> (2,0) -> (0,0) is cut: 12 - 3 states
    assert len(short) <= 9


def test_shortcuts_keep_the_final_step_of_a_transition_violation():
    machine = Counter(limit=3, wrap=True)
    long = walk(machine, ["Inc", "Inc", "Inc", "Wrap", "Inc", "Inc", "Inc", "Wrap"])
    is_bad = bad_end(machine, "transition", "NeverDecreases")
    short, how = shorten_trace_explained(machine, long, is_bad, budget=1)
    assert how == SHORTCUTS
    assert short[-1].step == ("Wrap",) and len(short) == 5
    assert is_bad(short[-2].state, short[-1].step, short[-1].state)
    short, how = shorten_trace_explained(machine, long, is_bad)
    assert how == SHORTEST and len(short) == 5


def test_trace_is_valid_rejects_impossible_steps():
    machine = DieHard()
    good = walk(machine, ["FillSmall", "SmallToBig"])
    assert trace_is_valid(machine, good)
    assert not trace_is_valid(machine, good[:1] + [TraceStep(("FillBig",), (3, 3))])
    assert not trace_is_valid(machine, [TraceStep(None, (1, 1))])


def test_shorten_trace_contract_returns_just_the_trace():
    machine = Counter(limit=3, wrap=True)
    long = walk(machine, ["Inc", "Inc", "Inc", "Wrap", "Inc", "Inc", "Inc", "Wrap"])
    short = shorten_trace(machine, long, bad_end(machine, "transition", "NeverDecreases"))
    assert isinstance(short, list) and len(short) == 5 and trace_is_valid(machine, short)
