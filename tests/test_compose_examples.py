"""Textbook models re-expressed with ``checker.compose`` explore exactly like their hand-written
machines and TLC: same distinct and generated counts, depth, verdicts and trace lengths."""

from __future__ import annotations

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.trace import trace_is_valid
from eoscheck.examples.symmetric import OrbitTwoPhase
from eoscheck.examples.twophase import TwoPhase
from eoscheck.examples.twophase_composed import ComposedTwoPhase


@pytest.mark.parametrize("rms, distinct, generated, depth", [
    (3, 288, 1_146, 11),
    (5, 8_832, 58_146, 17),  # TLC's published counts (tests/test_oracles.py)
])
def test_composed_twophase_matches_tlc_and_the_hand_written_machine(rms, distinct, generated, depth):
    hand = explore(TwoPhase(rms), ExploreOptions())
    composed = explore(ComposedTwoPhase(rms), ExploreOptions())
    for result in (hand, composed):
        assert result.verdict == "holds"
        assert (result.stats.distinct, result.stats.generated, result.stats.depth) == (distinct, generated, depth)


def test_composed_twophase_seeded_bug_gives_the_hand_written_verdict_and_length():
    hand = explore(OrbitTwoPhase(3, seeded_bug=True), ExploreOptions(symmetry=False))
    machine = ComposedTwoPhase(3, seeded_bug=True)
    composed = explore(machine, ExploreOptions())
    assert hand.verdict == composed.verdict == "violated"
    (h,), (c,) = hand.violations, composed.violations
    assert h.property == c.property == "TCConsistent"
    assert h.length == c.length
    assert trace_is_valid(machine, c.trace)
    assert hand.stats.distinct == composed.stats.distinct
