"""Symmetry of ``kafka.eos`` over its output partitions (``model/machines/eos_partition_symmetry.py``),
alone and with the producers' (``eos_symmetry``): on sampled reachable states of several
configurations every renaming in the declared group commutes with the successor relation (as sets
of states), keeps every invariant, every transition property's verdict per action, the constraint
and terminal states, and maps the initial states to initial states; forgetting to rename any one
part that names a partition breaks it; and the reduced exploration keeps exactly one state per
orbit of the whole group, with the verdicts and trace lengths of the run without reduction."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from eoscheck.checker.compose import Composed
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.model.coordinator.txn_log import NO_METADATA
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.machines.eos_partition_symmetry import (
    PARTITION,
    rename_markers,
    rename_producer,
    rename_txn,
)
from eoscheck.model.producer import transactional as tx
from eoscheck.model.properties import OFFSETS_PARTITION
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.transactions.markers import TxnMarker
from reachable_states import reachable

Perms = tuple[tuple[int, ...], ...]


def _machine(variant: str, protocol_changes: dict[str, Any] | None = None, **bounds: int) -> EosMachine:
    if not protocol_changes:
        return machine(variant, **bounds)
    protocol = VARIANTS[variant].protocol.with_(**protocol_changes)
    return EosMachine(protocol, {**{k: b.default for k, b in BOUNDS.items()}, **bounds})


#: (id, variant, protocol changes, bounds): partitions 2 and 3, with and without readers, group and
#: per-partition producers, transactions, lost responses, timeouts, restarts, coordinator and output
#: leader failovers, expiry, late EndTxn
CONFIGS: list[tuple[str, str, dict[str, Any], dict[str, int]]] = [
    ("two-producers-losses", "kafka-3.0-3.5", {}, {"producers": 2, "partitions": 2, "lost_responses": 1,
                                                     "txn_timeouts": 1, "transactions": 2}),
    ("three-partitions-coordinator-failover", "kafka-4.0", {},
     {"producers": 1, "partitions": 3, "lost_responses": 1, "coordinator_failovers": 1, "transactions": 2}),
    ("two-producers-three-partitions", "kafka-2.5-2.8", {}, {"producers": 2, "partitions": 3, "produce_timeouts": 1}),
    ("readers", "kafka-4.0", {}, {"producers": 2, "partitions": 2, "readers": 1, "delete_records": 1,
                                  "txn_timeouts": 1}),
    ("readers-three-partitions", "kafka-0.11.0.0", {}, {"producers": 1, "partitions": 3, "readers": 1,
                                                         "txn_timeouts": 1}),
    ("restarts-ctp", "kafka-0.11.0.0", {}, {"producers": 2, "partitions": 2, "restarts": 1, "input_records": 1,
                                            "coordinator_failovers": 1}),
    ("output-leader-failovers", "kafka-3.0-3.5", {},
     {"producers": 1, "partitions": 2, "output_leader_failovers": 1, "output_snapshot_restored_failovers": 1,
      "output_restarted_replica_failovers": 1, "lost_responses": 1}),
    ("expiry", "kafka-2.5-2.8", {}, {"producers": 1, "partitions": 2, "max_ticks": 2, "producer_id_expiration": 1,
                                     "transactions": 2}),
    ("group", "kafka-3.0-3.5", {}, {"producers": 2, "members": 2, "input_records": 1, "partitions": 2,
                                    "rebalances": 1}),
    ("per-partition-producers", "kafka-3.0-3.5", {"deployment": "per-partition"},
     {"producers": 2, "members": 2, "input_records": 1, "partitions": 2, "rebalances": 1, "transactions": 2,
      "max_epoch": 4}),
    ("late-endtxn-tv-upgrade", "kafka-3.6-3.9", {"client_tv_change": "upgrade"},
     {"producers": 1, "partitions": 2, "endtxn_timeouts": 1, "transactions": 2, "input_records": 1}),
]


def _sample(m: EosMachine, cap: int = 6000, size: int = 400) -> list[tuple]:
    """``size`` states spread over the first ``cap`` of a BFS (deep states as well as shallow ones)."""
    states = reachable(m, cap)
    step = max(1, len(states) // size)
    return states[::step]


def _group(m: EosMachine) -> list[Perms]:
    sym = m.symmetry
    assert sym is not None
    ident = tuple(tuple(range(ss.size)) for ss in sym.scalarsets)
    return [g for g in sym.group() if g != ident]


def _commutes(m: EosMachine, apply: Callable[[tuple, Perms], tuple], states: list[tuple],
              group: list[Perms]) -> str | None:
    """The first way renaming fails to be a symmetry on ``states`` (None: it is one there)."""
    props = m.properties()
    invariants = [p for p in props.values() if p.kind == "invariant"]
    transitions = [p for p in props.values() if p.kind == "transition"]
    for s in states:
        succ = list(m.successors(s))
        for g in group:
            image = apply(s, g)
            succ_image = list(m.successors(image))
            if {apply(t, g) for _, t in succ} != {t for _, t in succ_image}:
                return f"successors differ under {g}"
            if m.within_bounds(image) != m.within_bounds(s) or m.is_terminal(image) != m.is_terminal(s):
                return f"constraint or terminal differs under {g}"
            for p in invariants:
                if p.check(image) != p.check(s):
                    return f"{p.name} differs under {g}"
            for p in transitions:
                mine = {(step[0], apply(t, g), p.check(s, step, t)) for step, t in succ}
                theirs = {(step[0], t, p.check(image, step, t)) for step, t in succ_image}
                if mine != theirs:
                    return f"{p.name} differs under {g}"
    return None


@pytest.mark.parametrize(("variant", "changes", "bounds"), [c[1:] for c in CONFIGS], ids=[c[0] for c in CONFIGS])
def test_renaming_partitions_is_a_symmetry(variant: str, changes: dict[str, Any], bounds: dict[str, int]) -> None:
    m = _machine(variant, changes, **bounds)
    assert m.has_symmetry() and m.symmetry is not None and m.symmetry.exact
    names = [ss.name for ss in m.symmetry.scalarsets if ss.size > 1]
    assert PARTITION in names
    if bounds["producers"] > 1 and not bounds.get("members") and not bounds.get("readers"):
        assert "producer" in names  # both scalarsets: the whole group is renamed below
    group = _group(m)
    inits = set(m.init_states())
    assert all(m.symmetry.apply(s, g) in inits for s in inits for g in group)
    assert _commutes(m, m.symmetry.apply, _sample(m), group) is None


#: every part that names an output partition, and a configuration where forgetting it shows
FORGETTABLE = [
    ("producer", CONFIGS[0]), ("zombie", CONFIGS[5]), ("txn", CONFIGS[0]), ("txn_log", CONFIGS[1]),
    ("requests", CONFIGS[0]), ("responses", CONFIGS[0]), ("stale_markers", CONFIGS[1]),
]


@pytest.mark.parametrize(("part", "config"), FORGETTABLE, ids=[p for p, _ in FORGETTABLE])
def test_forgetting_a_part_is_caught(part: str, config: tuple[str, str, dict[str, Any], dict[str, int]]) -> None:
    _, variant, changes, bounds = config
    m = _machine(variant, changes, **bounds)
    plan = m._plan
    kept = [r for r in plan.renames[PARTITION] if r[1].name != part]
    assert len(kept) == len(plan.renames[PARTITION]) - 1, f"{part} is not renamed by partition"
    group = [g for g in _group(m) if all(p == tuple(range(len(p))) for p, ss in zip(g, m.symmetry.scalarsets)
                                          if ss.name != PARTITION)]
    states = _sample(m, 20_000, 600)
    assert _commutes(m, m.symmetry.apply, states, group) is None
    plan.renames[PARTITION] = kept
    plan.renamed.clear()
    assert _commutes(m, m.symmetry.apply, states, group) is not None


#: small enough to enumerate every state and every orbit
EXACT = [
    ("kafka-3.0-3.5", {}, {"producers": 2, "partitions": 2, "lost_responses": 1}),
    ("kafka-4.0", {}, {"producers": 2, "partitions": 3, "transactions": 1}),
    ("kafka-4.0", {}, {"producers": 1, "partitions": 3, "readers": 1, "txn_timeouts": 1}),
    ("kafka-0.11.0.0", {}, {"producers": 1, "partitions": 2, "txn_timeouts": 1, "restarts": 1}),
    ("kafka-3.0-3.5", {}, {"producers": 2, "members": 2, "input_records": 1, "partitions": 2, "rebalances": 1,
                           "max_epoch": 2}),
]


@pytest.mark.parametrize(("variant", "changes", "bounds"), EXACT, ids=lambda x: str(x))
def test_one_state_per_orbit_of_both_scalarsets(variant: str, changes: dict[str, Any], bounds: dict[str, int]) -> None:
    m = _machine(variant, changes, **bounds)
    sym = m.symmetry
    assert sym is not None and sym.exact
    full = reachable(m, 10**6)
    elements = sym.group()
    orbits = {min(sym.apply(s, g) for g in elements) for s in full}
    reduced = explore(m, ExploreOptions(stop_at_first=False))
    plain = explore(m, ExploreOptions(stop_at_first=False, symmetry=False))
    assert plain.stats.distinct == len(full)
    assert reduced.stats.distinct == len(orbits) < len(full)
    assert (reduced.verdict, sorted((v.property, len(v.trace)) for v in reduced.violations)) == (
        plain.verdict, sorted((v.property, len(v.trace)) for v in plain.violations))
    # the generated canonical form (eos_fast) is compose's, and a function of the orbit
    sample = full[:: max(1, len(full) // 300)]
    assert [m.canonical(s) for s in sample] == [Composed.canonical(m, s) for s in sample]
    assert all(m.canonical(sym.apply(s, g)) == m.canonical(s) for s in sample[:60] for g in elements)


def test_renaming_moves_client_state_bits_partitions_and_markers() -> None:
    p = tx.new_producer(3)
    p = p._replace(parts=(p.parts[0], p.parts[1]._replace(sent=2), p.parts[2]), added=0b011)
    renamed = rename_producer(p, (2, 0, 1))
    assert renamed.parts[0].sent == 2 and renamed.added == 0b101
    assert rename_producer((), (1, 0)) == ()
    m = NO_METADATA._replace(partitions=(0, 2, OFFSETS_PARTITION))
    assert rename_txn(m, (2, 1, 0)).partitions == (0, 2, OFFSETS_PARTITION)
    assert rename_txn(m, (1, 2, 0)).partitions == (0, 1, OFFSETS_PARTITION)
    markers = (TxnMarker(1, 5, 0, 0, 0), TxnMarker(OFFSETS_PARTITION, 5, 0, 0, 0))
    assert rename_markers(markers, (1, 0)) == (TxnMarker(0, 5, 0, 0, 0), TxnMarker(OFFSETS_PARTITION, 5, 0, 0, 0))


def test_no_partition_symmetry_with_one_partition() -> None:
    m = machine("kafka-4.0", producers=2, partitions=1)
    assert m.symmetry is not None and m.symmetry.exact
    assert [ss.name for ss in m.symmetry.scalarsets if ss.size > 1] == ["producer"]
    assert m._plan.product is None


def test_every_combination_of_two_scalarsets_is_tried() -> None:
    m = machine("kafka-4.0", producers=2, partitions=3)
    last, images = m._plan.product
    assert last == "partition" or last == "producer"
    other = "producer" if last == PARTITION else PARTITION
    sizes = {ss.name: ss.size for ss in m.symmetry.scalarsets}
    assert len(images) == len(list(itertools.permutations(range(sizes[other]))))
