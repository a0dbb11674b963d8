"""External oracles: TLC's published counts for TwoPhase and TCommit, and a seeded bug of known length."""

from __future__ import annotations

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.registry import find_model
from eoscheck.checker.trace import trace_is_valid
from eoscheck.examples.diehard import DieHard
from eoscheck.examples.registry import MODELS


def twophase(rms: int, variant: str = "tla"):
    return find_model("examples.twophase").machine(
        variant=variant, bounds={"rms": rms})


@pytest.mark.parametrize("rms, distinct, generated, depth", [
    (3, 288, None, None),
    (5, 8_832, 58_146, 17),
    pytest.param(7, 296_448, 2_744_706, 23, marks=pytest.mark.slow),  # about 4 s here
])
def test_twophase_matches_tlc(rms, distinct, generated, depth):
    result = explore(twophase(rms), ExploreOptions())
    assert result.verdict == "holds"
    assert result.stats.distinct == distinct
    if generated is not None:
        assert result.stats.generated == generated
        assert result.stats.depth == depth
    assert result.stats.queue == 0
    assert result.violations == []


def test_tcommit_matches_tlc():
    model = find_model("examples.tcommit")
    result = explore(model.machine(bounds={"rms": 3}), ExploreOptions())
    # TCommit's final states (everyone committed or aborted) are terminal, so deadlock checking
    # stays on and must not fire.
    assert result.verdict == "holds"
    assert result.stats.distinct == 34


def test_tcommit_final_states_would_deadlock_without_terminal():
    from eoscheck.examples.tcommit import TCommit

    class NoTerminal(TCommit):
        def is_terminal(self, s):
            return False

    result = explore(NoTerminal(3), ExploreOptions())
    assert result.verdict == "violated"
    assert result.violations[0].kind == "deadlock"
    # shortest way to a final state: every RM aborts, one step each (4 states)
    assert result.violations[0].length == 4


def test_symmetric_twophase_has_fewer_states_and_same_depth():
    plain = explore(twophase(5), ExploreOptions())
    sym = explore(twophase(5, "symmetric"), ExploreOptions())
    assert sym.verdict == "holds"
    assert sym.stats.distinct < plain.stats.distinct / 10
    assert sym.stats.depth == plain.stats.depth
    off = explore(twophase(5, "symmetric"), ExploreOptions(symmetry=False))
    assert off.stats.distinct == plain.stats.distinct


def test_registry_publishes_models_with_matching_properties():
    names = {m.name for m in MODELS}
    assert {"examples.twophase", "examples.tcommit", "examples.diehard"} <= names
    for model in MODELS:
        machine = model.machine()
        assert set(machine.properties()) == set(model.properties), model.name
        assert model.bounds  # every example has a size knob


DIEHARD_SHORTEST = 7  # worked out by hand in examples/diehard.py


def test_diehard_bfs_gives_exactly_the_minimal_trace():
    machine = DieHard()
    result = explore(machine, ExploreOptions(properties=("NotSolved",)))
    assert result.verdict == "violated"
    (violation,) = result.violations
    assert violation.property == "NotSolved"
    assert violation.length == DIEHARD_SHORTEST
    assert violation.found_length == DIEHARD_SHORTEST
    assert trace_is_valid(machine, violation.trace)
    assert violation.trace[-1].state[1] == 4
    assert all(t.state[1] != 4 for t in violation.trace[:-1])


def test_diehard_with_other_jugs_has_no_solution():
    # gcd(2, 4) = 2: an odd amount can never be measured, so NotSolved holds for goal 3
    result = explore(DieHard(2, 4, 3), ExploreOptions())
    assert result.verdict == "holds"


@pytest.mark.parametrize("options", [
    ExploreOptions(strategy="dfs", properties=("NotSolved",)),
    ExploreOptions(strategy="dfs", properties=("NotSolved",), max_depth=20),
    ExploreOptions(strategy="simulate", properties=("NotSolved",), seed=1),
    ExploreOptions(strategy="simulate", properties=("NotSolved",), seed=7, walks=5000),
])
def test_diehard_dfs_and_simulation_traces_are_valid_and_shortened(options):
    machine = DieHard()
    result = explore(machine, options)
    assert result.verdict == "violated"
    (violation,) = result.violations
    assert trace_is_valid(machine, violation.trace)
    assert violation.trace[-1].state[1] == 4
    assert violation.length <= violation.found_length
    # the shortening BFS fits this small space, so it must reach the true minimum
    assert violation.shortened_by == "bfs (shortest)"
    assert violation.length == DIEHARD_SHORTEST


def test_dfs_and_simulation_really_found_longer_traces_here():
    # Guards the test above against passing vacuously: these runs find non-minimal traces first.
    for options in (ExploreOptions(strategy="dfs", properties=("NotSolved",)),
                    ExploreOptions(strategy="simulate", properties=("NotSolved",), seed=1)):
        violation = explore(DieHard(), options).violations[0]
        assert violation.found_length > DIEHARD_SHORTEST, options.strategy
