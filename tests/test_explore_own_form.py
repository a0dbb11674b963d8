"""A canonical form's own-form test (``checker.machine.PlaceTest``) asked by the fused duplicate test in
place of a call (``_Plan.dedup_successors``): kafka.eos's canonical pair offers its first comparison,
and a symmetric run must report exactly what it reports without the test and on the plain path."""

from __future__ import annotations

from typing import Any

from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.machine import PlaceTest
from eoscheck.checker.registry import find_model

from tests.test_explore_dedup import _fused_used, _plain, _summary

BOUNDS = {"clients": 2, "max_epoch": 2, "lost_responses": 1, "failovers": 1, "abortable_errors": 1,
          "transactions": 1, "restarts": 1, "new_producer_ids": 2}
OPTS = ExploreOptions(stop_at_first=False, symmetry=True, max_states=4_000)


def _machine() -> Any:
    return find_model("kafka.init_producer_id").machine("kafka-shipped", bounds=BOUNDS)


def _with_canonical(machine: Any, own: PlaceTest | None) -> Any:
    """``machine`` whose canonical form is the same function behind a new one, with ``own`` (None: none)."""
    inner = machine.canonical

    def canonical(s: tuple) -> tuple:
        return inner(s)
    if own is not None:
        canonical.own_form = own  # type: ignore[attr-defined]
    machine.canonical = canonical
    return machine




def test_the_canonical_pair_offers_its_first_comparison_and_the_run_is_unchanged() -> None:
    fused_machine = _machine()
    own = fused_machine.canonical.own_form
    assert isinstance(own, PlaceTest) and len(own.places) == 2
    fused = explore(fused_machine, OPTS)
    assert _fused_used(fused_machine)
    names = {n for v in fused_machine._plan._dedup.values() if v is not None for n in v.expand.__code__.co_varnames}
    # asked once per state, and on successors that move the instances; the constraint's likewise
    assert {"own_", "o_", "in_"} <= names
    assert fused_machine.within_bounds.place_test.env == {}
    assert own.env["OWN_Q"]  # the sort keys it reads are the canonical form's, filled as it runs
    without = explore(_with_canonical(_machine(), None), OPTS)
    plain = explore(_plain(_machine()), OPTS)
    assert fused.stats.distinct == OPTS.max_states
    assert _summary(fused) == _summary(without) == _summary(plain)


def test_a_wrong_own_form_test_changes_the_run() -> None:
    """The comparison above can fail: the same test turned round (a state whose first identity sorts
    after the second called its own form) keeps states the canonical form would have merged."""
    machine = _machine()
    own = machine.canonical.own_form  # its names read this machine's memos
    swapped = own.test.replace("{0}", "{x}").replace("{1}", "{0}").replace("{x}", "{1}")
    wrong = explore(_with_canonical(machine, PlaceTest(own.places, swapped, own.env)), OPTS)
    right = explore(_machine(), OPTS)
    assert _summary(wrong) != _summary(right)
