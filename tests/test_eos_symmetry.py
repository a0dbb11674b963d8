"""Symmetry of ``kafka.eos`` (``model/machines/eos_symmetry.py``): producers of different
transactional ids (and their consumers) are interchangeable. Renaming them commutes with every
step and keeps every property; the symmetric BFS keeps exactly one state per orbit (counted by brute
force over every renaming of the full state space); verdicts and trace lengths are those without
symmetry, also on the committed kafka.eos specs run with two producers."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.spec import load_spec, spec_to_options
from eoscheck.model import properties as props
from eoscheck.model.group.metadata import (
    NO_COMMIT,
    CommittedOffset,
    PendingTxnOffset,
    new_group,
)
from eoscheck.model.machines.eos import machine
from eoscheck.model.machines.eos_symmetry import (
    rename_group,
    rename_leader,
    rename_routed,
)
from eoscheck.model.state import (
    ProduceRequest,
    ProduceResponse,
    Routed,
    TxnPartitionState,
)
from eoscheck.model.transactions.log import EntryKind, LogEntry
from reachable_states import assert_one_state_per_orbit, reachable

ROOT = Path(__file__).resolve().parents[1]

CONFIGS = [
    ("kafka-3.0-3.5", {"producers": 2, "partitions": 1}),
    ("kafka-3.0-3.5", {"producers": 3, "partitions": 1}),
    ("kafka-4.0", {"producers": 2, "partitions": 1, "input_records": 1}),
    ("kafka-0.11.0.0", {"producers": 2, "partitions": 1, "txn_timeouts": 1, "restarts": 1}),
    ("kafka-3.0-3.5", {"producers": 2, "partitions": 2, "lost_responses": 1}),
]


def _perms(m: Any, scalarset: str) -> list[tuple[tuple[int, ...], ...]]:
    sizes = [(ss.name, ss.size) for ss in m.symmetry.scalarsets]
    n = dict(sizes)[scalarset]
    return [tuple(p if name == scalarset else tuple(range(size)) for name, size in sizes)
            for p in itertools.permutations(range(n))]


@pytest.mark.parametrize("variant, bounds", CONFIGS, ids=lambda x: str(x))
def test_one_state_per_orbit_and_the_same_verdicts(variant: str, bounds: dict[str, int]) -> None:
    m = machine(variant, **bounds)
    assert m.has_symmetry() and m.symmetry.exact
    # with two or more output partitions, the orbits of partitions' renamings too (eos_partition_symmetry)
    assert_one_state_per_orbit(m)


def test_renaming_producers_commutes_with_every_step() -> None:
    m = machine("kafka-0.11.0.0", producers=2, partitions=2, txn_timeouts=1, restarts=1, input_records=1)
    swap = _perms(m, "producer")[1]
    apply = m.symmetry.apply
    props = m.properties()
    for s in reachable(m, 4000):
        image = apply(s, swap)
        succ = list(m.successors(s))
        assert {apply(t, swap) for _, t in succ} == {t for _, t in m.successors(image)}
        assert m.is_terminal(image) == m.is_terminal(s)
        for prop in props.values():
            if prop.kind == "invariant":
                assert prop.check(image) == prop.check(s), prop.name


def test_renaming_moves_records_offsets_and_messages() -> None:
    swap = (1, 0)
    data = LogEntry(5, 0, int(EntryKind.TXN_DATA), props.record_value(0, 3))
    marker = LogEntry(5, 0, int(EntryKind.COMMIT), 2)
    leader = rename_leader(TxnPartitionState((data, marker), 0, ()), swap)
    assert leader.log == (data._replace(value=props.record_value(1, 3)), marker)
    group = new_group(2)._replace(offsets=(CommittedOffset(4, 9), NO_COMMIT),
                                  pending=(PendingTxnOffset(7, 0, 1, 3), PendingTxnOffset(7, 1, 2, 4)))
    renamed = rename_group(group, swap)
    assert renamed.offsets == (NO_COMMIT, CommittedOffset(4, 9))
    assert renamed.pending == (PendingTxnOffset(7, 0, 2, 4), PendingTxnOffset(7, 1, 1, 3))
    req = Routed(1, 0, 2, 3, ProduceRequest(0, 2, 3, 5, 0, 0, 0))
    resp = Routed(0, 1, 0, 0, ProduceResponse(1, 0, 0, 0, 7, 0))
    assert rename_routed((req, resp), swap) == (req._replace(client=1, message=req.message._replace(client=1)),
                                                resp._replace(client=0, message=resp.message._replace(client=0)))


SPECS = ["eos-late-batch-seq-kafka-3.0", "eos-two-partitions-timeout-abort-kafka-0.11.0.0",
         "eos-deleted-state-late-batch-kafka-2.3", "eos-two-partitions-timeout-abort-kafka-0.11.0.2"]


@pytest.mark.parametrize("name", SPECS)
def test_kafka_eos_specs_with_two_producers_keep_verdict_and_length(name: str) -> None:
    spec = load_spec(ROOT / "specs" / f"{name}.toml")
    bounds = {**spec.bounds, "producers": 2}
    m = machine(spec.variant, **bounds)
    options = spec_to_options(spec)
    one = explore(machine(spec.variant, **spec.bounds), options)
    with_sym = explore(m, options)
    without = explore(m, ExploreOptions(**{**options.__dict__, "symmetry": False}))
    assert with_sym.verdict == without.verdict == one.verdict
    lengths = [len(r.violations[0].trace) if r.violations else 0 for r in (one, with_sym, without)]
    assert lengths[1] == lengths[2] == lengths[0]
    assert with_sym.stats.distinct < without.stats.distinct


BOUNDED = [
    ("kafka-0.11.0.0", {"producers": 2, "partitions": 2, "txn_timeouts": 1, "restarts": 1, "input_records": 1}),
    ("kafka-4.0", {"producers": 2, "lost_responses": 1, "produce_timeouts": 1}),
]


@pytest.mark.parametrize("variant, bounds", BOUNDED, ids=lambda x: str(x))
def test_the_declared_symmetric_constraint_is_one_answer_per_orbit(variant: str, bounds: dict[str, int]) -> None:
    # the engines skip within_bounds for a successor whose representative they kept (expand.py):
    # sound only while renaming never moves a state across the constraint, cut successors included
    m = machine(variant, **bounds)
    assert m.symmetric_constraint and m.has_symmetry()
    sizes = [ss.size for ss in m.symmetry.scalarsets]
    perms = list(itertools.product(*(itertools.permutations(range(n)) for n in sizes)))
    apply = m.symmetry.apply
    for s in reachable(m, 1500):
        for _, t in m.successors(s):
            inside = m.within_bounds(t)
            assert m.within_bounds(m.canonical(t)) == inside
            assert all(m.within_bounds(apply(t, p)) == inside for p in perms)


def test_the_symmetric_constraint_shortcut_keeps_counts_and_coverage() -> None:
    m = machine("kafka-0.11.0.0", producers=2, partitions=2, txn_timeouts=1, restarts=1, input_records=1)
    fast = explore(m, ExploreOptions(stop_at_first=False, symmetry=True, max_states=20000))
    m.symmetric_constraint = False  # the loop that asks the constraint first
    slow = explore(m, ExploreOptions(stop_at_first=False, symmetry=True, max_states=20000))
    assert (fast.stats.distinct, fast.stats.generated) == (slow.stats.distinct, slow.stats.generated)
    assert fast.stats.coverage == slow.stats.coverage and fast.verdict == slow.verdict
