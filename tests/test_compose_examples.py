"""Textbook models re-expressed with ``checker.compose`` explore exactly like their hand-written
machines and TLC: same distinct and generated counts, depth, verdicts and trace lengths."""

from __future__ import annotations

import pytest
from eoscheck.checker.compose import (
    Actors,
    Composed,
    Delivery,
    invariant,
    precondition,
    rule,
)
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.trace import trace_is_valid
from eoscheck.examples.abp import ComposedAbp, HandAbp
from eoscheck.examples.symmetric import OrbitTwoPhase
from eoscheck.examples.tcommit import ABORTED as TC_ABORTED
from eoscheck.examples.tcommit import COMMITTED as TC_COMMITTED
from eoscheck.examples.tcommit import PREPARED as TC_PREPARED
from eoscheck.examples.tcommit import WORKING as TC_WORKING
from eoscheck.examples.tcommit import TCommit
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


# --- the alternating-bit protocol: a hand-written machine with each network semantics spelled out
# against the composed one, semantics by semantics (abp.py explains which verdict is expected)

ABP_CASES = [
    (Delivery.ORDERED, 0, 0, "holds"),
    (Delivery.ORDERED, 1, 0, "holds"),
    (Delivery.ORDERED, 0, 1, "holds"),
    (Delivery.ORDERED, 1, 1, "holds"),
    (Delivery.UNORDERED, 0, 0, "violated"),
    (Delivery.UNORDERED, 1, 1, "violated"),
    (Delivery.DUPLICATING, 0, 0, "violated"),
    (Delivery.DUPLICATING, 1, 0, "violated"),
]


@pytest.mark.parametrize("delivery, lost, copies, verdict", ABP_CASES)
def test_composed_abp_explores_like_the_hand_written_one(delivery, lost, copies, verdict):
    options = ExploreOptions(stop_at_first=False)
    hand = explore(HandAbp(3, delivery, lost, copies), options)
    machine = ComposedAbp(3, delivery, lost, copies)
    composed = explore(machine, options)
    assert hand.verdict == composed.verdict == verdict
    assert ((hand.stats.distinct, hand.stats.generated, hand.stats.depth)
            == (composed.stats.distinct, composed.stats.generated, composed.stats.depth))
    assert [(v.property, v.length) for v in hand.violations] == [(v.property, v.length) for v in composed.violations]
    for v in composed.violations:
        assert trace_is_valid(machine, v.trace)
        assert v.property == "InOrder"


def test_abp_coverage_differs_with_the_budgets():
    # a zero budget removes the generated loss/duplication rules from the machine altogether
    assert set(ComposedAbp(3, Delivery.ORDERED, 0, 0).actions) == {"Send", "RcvData", "RcvAck"}
    assert set(ComposedAbp(3, Delivery.ORDERED, 1, 1).actions) == {"Send", "RcvData", "RcvAck", "LoseData",
                                                                   "LoseAck", "CopyData", "CopyAck"}
    assert set(ComposedAbp(3, Delivery.ORDERED, 1, 1).actions) == set(HandAbp.actions)


def test_the_cli_checks_a_composed_model_and_writes_its_counterexample(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    spec = tmp_path / "abp-unordered.toml"
    spec.write_text('model = "examples.abp"\nvariant = "unordered"\n[bounds]\nrecords = 3\n'
                    '[expect]\nverdict = "violates"\nproperty = "InOrder"\nlength = 8\n')
    eoscheck = Path(sys.executable).with_name("eoscheck")
    out = subprocess.run([str(eoscheck), "check", str(spec), "--out", str(tmp_path / "out"), "--no-progress"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    trace = json.loads((tmp_path / "out" / "abp-unordered.InOrder.json").read_text())
    assert trace["length"] == 8
    last = trace["steps"][-1]["state"]
    assert last["log"] != list(range(len(last["log"])))  # the field the invariant reads, as JSON


# --- TCommit.tla (the spec TwoPhase refines): a rule reading one RM and all of them


class ComposedTCommit(Composed):
    rm = Actors(count="rms", init=TC_WORKING, interned=False)

    def __init__(self, rms: int = 3) -> None:
        super().__init__({"rms": rms})

    @rule("Prepare", params={"r": "rm"}, reads=("rm[r]",), writes=("rm[r]",))
    def prepare(self, rm: int) -> dict[str, int] | None:
        return {"rm": TC_PREPARED} if rm == TC_WORKING else None

    @precondition(lambda self, rm, every: rm == TC_PREPARED and all(x in (TC_PREPARED, TC_COMMITTED) for x in every))
    @rule("DecideCommit", params={"r": "rm"}, reads=("rm[r]", "every=rm"), writes=("rm[r]",))
    def decide_commit(self) -> dict[str, int]:
        return {"rm": TC_COMMITTED}

    @precondition(lambda self, rm, every: rm in (TC_WORKING, TC_PREPARED) and TC_COMMITTED not in every)
    @rule("DecideAbort", params={"r": "rm"}, reads=("rm[r]", "every=rm"), writes=("rm[r]",))
    def decide_abort(self) -> dict[str, int]:
        return {"rm": TC_ABORTED}

    def is_terminal(self, s: tuple) -> bool:
        return all(x in (TC_COMMITTED, TC_ABORTED) for x in s)

    @invariant("TCTypeOK", reads=("rm",))
    def type_ok(self, rm: tuple[int, ...]) -> bool:
        """every RM is in one of the four states"""
        return all(TC_WORKING <= x <= TC_ABORTED for x in rm)

    @invariant("TCConsistent", reads=("rm",))
    def consistent(self, rm: tuple[int, ...]) -> bool:
        """no RM has committed while another has aborted"""
        return not (TC_COMMITTED in rm and TC_ABORTED in rm)


@pytest.mark.parametrize("rms", [3, 5])
def test_composed_tcommit_matches_tlc_and_the_hand_written_machine(rms):
    hand = explore(TCommit(rms), ExploreOptions())
    composed = explore(ComposedTCommit(rms), ExploreOptions())
    assert hand.verdict == composed.verdict == "holds"  # deadlock checking on: terminal states agree
    assert ((hand.stats.distinct, hand.stats.generated, hand.stats.depth)
            == (composed.stats.distinct, composed.stats.generated, composed.stats.depth))
    if rms == 3:
        assert composed.stats.distinct == 34  # TLC
    assert ComposedTCommit.property_docs() == {n: p.doc for n, p in TCommit(rms).properties().items()}


@pytest.mark.parametrize("rms", [3, 5])
def test_declared_symmetry_gives_the_hand_written_orbit_count(rms):
    from eoscheck.checker.symmetry import check_symmetry
    from eoscheck.examples.twophase import SymmetricTwoPhase
    from eoscheck.examples.twophase_composed import SymmetricComposedTwoPhase

    hand = explore(SymmetricTwoPhase(rms), ExploreOptions())
    machine = SymmetricComposedTwoPhase(rms)
    assert machine.has_symmetry() and not ComposedTwoPhase(rms).has_symmetry()
    composed = explore(machine, ExploreOptions())
    assert hand.verdict == composed.verdict == "holds"
    assert (composed.stats.distinct, composed.stats.depth) == (hand.stats.distinct, hand.stats.depth)
    assert composed.stats.distinct < explore(ComposedTwoPhase(rms), ExploreOptions()).stats.distinct
    report = check_symmetry(machine, ExploreOptions())
    assert report.ok and report.orbit_check, report.summary()  # orbit sizes sum to the full count: exact


def test_declared_symmetry_keeps_the_seeded_bug_and_its_length():
    from eoscheck.examples.twophase_composed import SymmetricComposedTwoPhase

    plain = explore(ComposedTwoPhase(4, seeded_bug=True), ExploreOptions())
    sym = explore(SymmetricComposedTwoPhase(4, seeded_bug=True), ExploreOptions())
    assert plain.verdict == sym.verdict == "violated"
    assert plain.violations[0].length == sym.violations[0].length
