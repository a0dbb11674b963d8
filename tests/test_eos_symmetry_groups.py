"""``kafka.eos``'s producer symmetry with read_committed readers, with input partitions and with a
consumer group (``model/machines/eos_symmetry.py``): on a sample of reachable states of each
configuration, renaming the producers (with their group members) maps the successors of a state onto the successors of its image,
keeps every property's value and the state constraint, and maps the initial states onto themselves.
The check is shown to fail when a part is left out of the renaming, and the reduced BFS keeps one
state per orbit with the verdicts of the unreduced one."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from eoscheck.model.group.member import Member, initial_group, rejoin_ranked
from eoscheck.model.group.metadata import NO_GENERATION, NO_MEMBER_ID, GroupState, PendingTxnOffset
from eoscheck.model.machines.eos import machine
from eoscheck.model.machines.eos_symmetry import rename_group
from reachable_states import assert_one_state_per_orbit, reachable

#: (variant, bounds): readers (with and without input partitions), input partitions without a group, a
#: group (per-thread after and before KIP-447, per-partition, three members) with rebalances and rejoins
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("kafka-3.0-3.5", {"producers": 2, "partitions": 2, "readers": 1}),
    ("kafka-0.11.0.0", {"producers": 2, "partitions": 1, "readers": 1, "txn_timeouts": 1}),
    ("kafka-3.0-3.5", {"producers": 2, "partitions": 1, "input_records": 1, "readers": 1}),
    ("kafka-0.11.0.0", {"producers": 2, "partitions": 2, "input_records": 1, "restarts": 1}),
    ("kafka-3.0-3.5", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1, "transactions": 2,
                       "rebalances": 2, "rejoins": 1, "max_epoch": 4}),
    ("kafka-2.4", {"producers": 2, "members": 2, "input_records": 1, "partitions": 2, "rebalances": 1,
                   "max_epoch": 3}),
    ("kafka-0.11.0.2", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1, "rebalances": 1,
                        "rejoins": 1}),
    ("kafka-3.0-3.5", {"producers": 3, "members": 3, "input_records": 1, "partitions": 1, "rebalances": 1,
                       "rejoins": 1}),
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


@pytest.mark.parametrize("part, index", [("leader", 0), ("requests", 0), ("responses", 1), ("group", 2), ("member", 4),
                                         ("leader", 5)])
def test_a_forgotten_part_breaks_the_check(part: str, index: int) -> None:
    variant, bounds = CONFIGS[index]
    m = _machine(variant, bounds)
    states = reachable(m, SAMPLE)
    assert asymmetry(_without_rename(m, part), states) is not None


@pytest.mark.parametrize("variant, bounds", [
    ("kafka-3.0-3.5", {"producers": 2, "partitions": 1, "readers": 1}),
    ("kafka-0.11.0.0", {"producers": 2, "partitions": 1, "readers": 1, "txn_timeouts": 1}),
    ("kafka-3.0-3.5", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1, "rebalances": 1,
                       "rejoins": 1}),
    ("kafka-2.4", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1, "rebalances": 1}),
], ids=lambda x: str(x))
def test_one_state_per_orbit_and_the_same_verdicts(variant: str, bounds: dict[str, Any]) -> None:
    assert_one_state_per_orbit(_machine(variant, bounds))


def test_the_group_names_members_by_id_and_is_not_renamed() -> None:
    group, _ = initial_group(2)
    assert rename_group(group, (1, 0)) == group
    pending = group._replace(pending=(PendingTxnOffset(3, 0, 1, 2),))
    assert rename_group(pending, (1, 0)) == pending


def test_a_rejoin_takes_any_rank_and_the_others_keep_their_order() -> None:
    group, members = initial_group(3)  # ids 1, 2, 3; member 0 owns the input partition
    lower = [rejoin_ranked(members, group, 2, rank) for rank in (1, 2, 3)]
    for rank, (joined, after) in zip((1, 2, 3), lower):
        assert joined[2] == Member(rank, NO_GENERATION, False, 1)
        assert sorted(m.member_id for m in joined) == [1, 2, 3]
        assert (joined[0].member_id < joined[1].member_id) and after.members == (1, 2, 3)
        assert after.state == GroupState.PREPARING_REBALANCE and after.assignment == (joined[0].member_id,)
    # the owner's own rejoin: its old id named nobody in the assignment afterwards
    joined, after = rejoin_ranked(members, group, 0, 3)
    assert [m.member_id for m in joined] == [3, 1, 2] and after.assignment == (NO_MEMBER_ID,)


def test_either_instance_may_sort_first() -> None:
    m = machine("kafka-3.0-3.5", producers=2, members=2, input_records=1, partitions=1, rebalances=1)
    owners = [tuple(mem.owns for mem in m.view(s).member) for s in m.init_states()]
    assert owners == [(True, False), (False, True)]  # instance 0 first: the state the model had alone
    assert len(list(machine("kafka-3.0-3.5", producers=2, input_records=1, partitions=1).init_states())) == 1
    three = machine("kafka-3.0-3.5", producers=3, members=3, input_records=1, partitions=1, rebalances=1)
    inits = list(three.init_states())
    assert len(inits) == 6  # every assignment of the ids 1, 2, 3 to the three instances
    for perm in itertools.permutations(range(3)):
        p = tuple(perm if ss.name == "producer" else tuple(range(ss.size)) for ss in three.symmetry.scalarsets)
        assert {three.symmetry.apply(s, p) for s in inits} == set(inits)


def test_rejoin_steps_name_the_rank() -> None:
    m = machine("kafka-3.0-3.5", producers=2, members=2, input_records=1, partitions=1, rebalances=1, rejoins=1)
    ranks = {step[-1] for s in reachable(m, 3000) for step, _ in m.successors(s) if step[0] == "Rejoin"}
    assert ranks == {1, 2}
