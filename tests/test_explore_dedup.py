"""The BFS's duplicate test fused into a composed machine's generated successors
(``Machine.dedup_successors``): a run must report exactly what the plain path reports (verdict,
distinct, generated, depth, per-action coverage, the same counterexample traces), with and without
stop-at-first, transition properties, a state constraint, symmetry and deadlocks."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose import constraint
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.explore.expand import Expander
from eoscheck.checker.machine import Machine
from eoscheck.examples.abp import ComposedAbp
from eoscheck.examples.twophase_composed import ComposedTwoPhase, SymmetricComposedTwoPhase

from tests.test_compose_fused import CheckedStore
from tests.test_compose_machine import Store


class BoundedCheckedStore(CheckedStore):
    """CheckedStore with a declared constraint that cuts some successors the BFS has not seen."""

    @constraint("ShortLog", reads=("log",))
    def short_log(self, log: tuple) -> bool:
        """at most two appends"""
        return len(log) <= 2


def _plain(machine: Machine) -> Machine:
    """``machine`` without the capability: the engines take every successor from ``successors``."""
    machine.dedup_successors = lambda *args: None  # type: ignore[method-assign]
    return machine


def _summary(result: Any) -> tuple:
    coverage = {a: (c.generated, c.distinct, c.outside) for a, c in result.stats.coverage.items()}
    return (result.verdict, result.stats.distinct, result.stats.generated, result.stats.depth, coverage,
            [(v.property, v.kind, [(t.step, t.state) for t in v.trace]) for v in result.violations])


def _fused_used(machine: Any) -> bool:
    return any(v is not None for v in machine._plan._dedup.values())


CASES = [
    (lambda: CheckedStore(records=2, max_copies=1, max_lost=1), False),
    (lambda: BoundedCheckedStore(records=2, max_copies=1, max_lost=1), False),
    (lambda: Store(max_ticks=1), False),  # deadlocks: every message delivered, the clock stopped
    (lambda: ComposedAbp(), False),  # a constraint, a transition property
    (lambda: ComposedTwoPhase(rms=4), False),
    (lambda: SymmetricComposedTwoPhase(rms=4), True),
]


@pytest.mark.parametrize("stop_at_first", [True, False])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_fused_path_reports_what_the_plain_path_reports(case, stop_at_first):
    make, symmetry = CASES[case]
    opts = ExploreOptions(stop_at_first=stop_at_first, symmetry=symmetry)
    fused_machine = make()
    fused = explore(fused_machine, opts)
    plain = explore(_plain(make()), opts)
    assert _fused_used(fused_machine)
    assert _summary(fused) == _summary(plain)


def test_the_cases_exercise_findings_cuts_and_deadlocks():
    """The comparisons above cover what the fused path must get right: transition findings (the
    state taken again), successors cut by the constraint, and deadlocks."""
    store = explore(CheckedStore(records=2, max_copies=1, max_lost=1), ExploreOptions(stop_at_first=False))
    assert "SendsOneAtATime" in {v.property for v in store.violations}
    bounded = explore(BoundedCheckedStore(records=2, max_copies=1, max_lost=1), ExploreOptions(stop_at_first=False))
    assert any(c.outside for c in bounded.stats.coverage.values())
    assert "SendsOneAtATime" in {v.property for v in bounded.violations}
    assert explore(Store(max_ticks=1), ExploreOptions(stop_at_first=False)).violations[0].property == "deadlock"


def test_a_chunk_keeps_what_the_plain_loop_keeps_and_counts_every_successor():
    """One chunk expanded both ways, with some successors already known: the same candidates (in
    order), generated counts, cut counts and findings."""
    def chunk(machine: Machine, dedup: bool) -> tuple:
        expander = Expander(machine, stop_at_first=False)
        frontier = [s for _, s in machine.successors(next(iter(machine.init_states())))]
        for _ in range(2):
            frontier += [t for s in frontier for _, t in machine.successors(s)]
        known = {hash(t) for t in frontier[::3]}
        cand = expander.expand_chunk(frontier, list(range(len(frontier))), 3, known, dedup=dedup)
        return (cand.fps, cand.parents, cand.states, cand.steps, cand.generated, dict(cand.gen_cov),
                dict(cand.outside), [(f.name, f.ref, f.step) for f in expander.found])

    for make in (lambda: BoundedCheckedStore(records=2, max_copies=1, max_lost=1), lambda: ComposedAbp()):
        fused, plain = chunk(make(), True), chunk(_plain(make()), False)
        assert fused == plain
        assert fused[4] > len(fused[0]) > 0  # duplicates were dropped, candidates kept


def test_a_chunk_leaves_none_of_its_containers_bound_to_the_machine():
    """The fused function keeps what it is bound to; once a chunk is done (or stopped) the engine's
    sets and the chunk's candidate lists must not stay alive with the machine (perf26b: the last
    level's ``seen`` and the last chunk's states outlived the run)."""
    import sys

    for stop_at_first in (False, True):
        machine = ComposedAbp()
        expander = Expander(machine, stop_at_first=stop_at_first)
        frontier = [s for _, s in machine.successors(next(iter(machine.init_states())))]
        frontier += [t for s in frontier for _, t in machine.successors(s)]
        seen: set[int] = set()
        known: set[int] = set()
        held = sys.getrefcount(seen), sys.getrefcount(known)
        cand = expander.expand_chunk(frontier, list(range(len(frontier))), 2, known, seen, dedup=True)
        assert _fused_used(machine) and cand.fps and seen
        assert (sys.getrefcount(seen), sys.getrefcount(known)) == held
        # each list: the candidates' attribute and the call's argument
        assert [sys.getrefcount(cand.fps), sys.getrefcount(cand.parents), sys.getrefcount(cand.states),
                sys.getrefcount(cand.steps)] == [2, 2, 2, 2]


def test_the_capability_is_optional_and_off_where_the_engine_records_edges():
    hand = Machine.dedup_successors(ComposedTwoPhase(rms=2), (), None, None)
    assert hand is None
    machine = ComposedTwoPhase(rms=3)
    explore(machine, ExploreOptions(record_edges=True))
    assert not _fused_used(machine)


@pytest.mark.parametrize("stop_at_first", [True, False])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_parallel_engines_head_and_workers_take_the_fused_path_and_report_the_same(monkeypatch, case,
                                                                                          stop_at_first):
    """The parallel engine's head and workers expand through ``dedup_successors`` (a worker's
    duplicate scope spans its level and the previous one, its states are named by worker-local
    references): what it reports equals its own plain path's report."""
    import multiprocessing as mp
    import os

    from eoscheck.checker.explore import parallel

    monkeypatch.setattr(parallel, "HEAD_FRONTIER", 4)  # the workers start after a few levels
    taken = mp.get_context("fork").Value("i", 0)  # shared with the forked workers
    parent = os.getpid()
    original = Expander._dedup_successors

    def counted(self: Expander, *args: Any) -> Any:
        got = original(self, *args)
        if got is not None and os.getpid() != parent:
            with taken.get_lock():
                taken.value += 1
        return got

    monkeypatch.setattr(Expander, "_dedup_successors", counted)
    make, symmetry = CASES[case]
    opts = ExploreOptions(strategy="parallel", workers=2, stop_at_first=stop_at_first, symmetry=symmetry)
    fused_machine = make()
    fused = explore(fused_machine, opts)
    in_workers = taken.value
    plain = explore(_plain(make()), opts)
    assert _fused_used(fused_machine)  # the head
    started = any("worker processes" in n for n in fused.notes)
    # under stop_at_first some cases stop in the head (a finding in its first levels)
    assert started or stop_at_first
    assert (in_workers > 0) == started
    assert _summary(fused) == _summary(plain)
