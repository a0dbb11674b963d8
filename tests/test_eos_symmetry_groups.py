"""``kafka.eos``'s producer symmetry with read_committed readers and with input partitions
(``model/machines/eos_symmetry.py``): on a sample of reachable states of each configuration, renaming
the producers maps the successors of a state onto the successors of its image,
keeps every property's value and the state constraint, and maps the initial states onto themselves.
The check is shown to fail when a part is left out of the renaming, and the reduced BFS keeps one
state per orbit with the verdicts of the unreduced one."""

from __future__ import annotations

import random
from typing import Any

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.model.machines.eos import machine
from reachable_states import reachable

#: (variant, bounds): readers (with and without input partitions), input partitions without a group
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("kafka-3.0-3.5", {"producers": 2, "partitions": 2, "readers": 1}),
    ("kafka-0.11.0.0", {"producers": 2, "partitions": 1, "readers": 1, "txn_timeouts": 1}),
    ("kafka-3.0-3.5", {"producers": 2, "partitions": 1, "input_records": 1, "readers": 1}),
    ("kafka-0.11.0.0", {"producers": 2, "partitions": 2, "input_records": 1, "restarts": 1}),
]
SAMPLE = 2000
WALKS = 40


def sample(m: Any) -> list[tuple]:
    """The first ``SAMPLE`` states in BFS order and the states of random walks to the bounds' depth
    (the BFS prefix alone hardly reaches a second transaction or a late rejoin)."""
    states = reachable(m, SAMPLE)
    rng = random.Random(12)
    inits = list(m.init_states())
    for _ in range(WALKS):
        s = rng.choice(inits)
        for _ in range(80):
            nxt = [t for _, t in m.successors(s) if m.within_bounds(t)]
            if not nxt:
                break
            s = rng.choice(nxt)
            states.append(s)
    return states


def _machine(variant: str, bounds: dict[str, Any]) -> Any:
    return machine(variant, **bounds)


def _swap(m: Any) -> tuple[tuple[int, ...], ...]:
    """The permutation of the producers that swaps 0 and 1 (every other scalarset left alone)."""
    return tuple((1, 0, *range(2, ss.size)) if ss.name == "producer" else tuple(range(ss.size))
                 for ss in m.symmetry.scalarsets)


def asymmetry(m: Any, states: list[tuple]) -> str | None:
    """The first way renaming fails to be a symmetry of ``m`` on ``states`` (None: none found)."""
    apply, swap = m.symmetry.apply, _swap(m)
    inits = set(m.init_states())
    if {apply(s, swap) for s in inits} != inits:
        return "the initial states are not closed under the renaming"
    properties = m.properties()
    for s in states:
        image = apply(s, swap)
        succ = m.successors(s)
        mapped = {apply(t, swap) for _, t in succ}
        if mapped != {t for _, t in m.successors(image)}:
            return f"successors differ at {m.fields(s)}"
        if m.within_bounds(image) != m.within_bounds(s) or m.is_terminal(image) != m.is_terminal(s):
            return "the constraint or termination differs"
        for prop in properties.values():
            if prop.kind == "invariant" and prop.check(image) != prop.check(s):
                return f"{prop.name} differs"
        # a transition property on a step and on its image (the image step is found by its target)
        by_target: dict[tuple, list[Any]] = {}
        for step, t in m.successors(image):
            by_target.setdefault(t, []).append(step)
        for step, t in succ:
            t_image = apply(t, swap)
            for prop in properties.values():
                if prop.kind == "transition" and not any(
                        prop.check(image, other, t_image) == prop.check(s, step, t) for other in by_target[t_image]):
                    return f"{prop.name} differs on {step}"
    return None


@pytest.mark.parametrize("variant, bounds", CONFIGS, ids=lambda x: str(x))
def test_renaming_producers_is_a_symmetry(variant: str, bounds: dict[str, Any]) -> None:
    m = _machine(variant, bounds)
    assert m.has_symmetry() and m.symmetry is not None and m.symmetry.exact
    assert asymmetry(m, sample(m)) is None


def _without_rename(m: Any, part: str) -> Any:
    """``m`` with ``part``'s renaming dropped (a forgotten rename), or, for an actor, ``part`` left out of
    the producers' scalarset (a forgotten member)."""
    plan = m._plan
    if part in plan.scalarsets["producer"]:
        plan.scalarsets["producer"] = [n for n in plan.scalarsets["producer"] if n != part]
    else:
        plan.renames["producer"] = [r for r in plan.renames["producer"] if r[1].name != part]
    plan.renamed.clear()
    return m


@pytest.mark.parametrize("part, index", [("leader", 0), ("requests", 0), ("responses", 1), ("group", 2)])
def test_a_forgotten_part_breaks_the_check(part: str, index: int) -> None:
    variant, bounds = CONFIGS[index]
    m = _machine(variant, bounds)
    states = reachable(m, SAMPLE)
    assert asymmetry(_without_rename(m, part), states) is not None


@pytest.mark.parametrize("variant, bounds", [
    ("kafka-3.0-3.5", {"producers": 2, "partitions": 1, "readers": 1}),
    ("kafka-0.11.0.0", {"producers": 2, "partitions": 1, "readers": 1, "txn_timeouts": 1}),
], ids=lambda x: str(x))
def test_one_state_per_orbit_and_the_same_verdicts(variant: str, bounds: dict[str, Any]) -> None:
    m = _machine(variant, bounds)
    full = reachable(m, 10**6)
    swap = _swap(m)
    ident = tuple(tuple(range(ss.size)) for ss in m.symmetry.scalarsets)
    orbits = len({min(m.symmetry.apply(s, p) for p in (ident, swap)) for s in full})
    reduced = explore(m, ExploreOptions(stop_at_first=False))
    plain = explore(m, ExploreOptions(stop_at_first=False, symmetry=False))
    assert plain.stats.distinct == len(full)
    assert reduced.stats.distinct == orbits < len(full)
    assert (reduced.verdict, {v.property for v in reduced.violations}) == (
        plain.verdict, {v.property for v in plain.violations})
